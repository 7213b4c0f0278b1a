/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: shared receive queues, basic and XRC, and XRC domains.
 *
 * An SRQ is a ring of receive WQEs like a QP's RQ; posting to it needs no
 * system call. The kernel does not support resizing an SRQ. An XRC SRQ
 * belongs to an XRC domain and has a CQ of its own; XRC_TGT QPs of its
 * domain deliver into it the requests that name its number.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

enum {
	SIB_SRQ_COMP_MASK = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			    IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
};

static int sib_srq_init(struct sib_srq *srq, struct ibv_context *ibctx,
			const struct ibv_srq_attr *attr,
			const struct sib_create_srq_resp *uresp)
{
	int ret;

	ret = sib_wq_init(ibctx, &srq->rq, &uresp->ring, attr->max_wr,
			  attr->max_sge, 0, SIB_RECV_WQE_HDR);
	if (ret)
		return ret;
	if (!srq->rq.ring.buf) {
		verbs_err(&to_sctx(ibctx)->ibv_ctx,
			  "kernel created an SRQ without a ring");
		sib_wq_destroy(&srq->rq);
		return EPROTO;
	}

	srq->vsrq.srq_num = uresp->srq_num;
	return 0;
}

struct ibv_srq *sib_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr)
{
	struct sib_cmd_create_srq_resp resp;
	struct sib_cmd_create_srq cmd;
	struct sib_srq *srq;
	int ret;

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq(pd, &srq->vsrq.srq, attr, &cmd.ibv_cmd,
				 sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	/* attr->attr now holds what the kernel granted. */
	ret = sib_srq_init(srq, pd->context, &attr->attr, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	srq->vsrq.srq_type = IBV_SRQT_BASIC;
	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

static int sib_srq_check_ex(struct sib_context *ctx,
			    const struct ibv_srq_init_attr_ex *attr)
{
	enum ibv_srq_type type = IBV_SRQT_BASIC;

	if (attr->comp_mask & ~(uint32_t)SIB_SRQ_COMP_MASK)
		return EOPNOTSUPP;
	if (attr->comp_mask & IBV_SRQ_INIT_ATTR_TYPE)
		type = attr->srq_type;
	if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	switch (type) {
	case IBV_SRQT_BASIC:
		return 0;
	case IBV_SRQT_XRC:
		if (!(ctx->caps & SIB_UCTX_CAP_XRC))
			return EOPNOTSUPP;
		if (!(attr->comp_mask & IBV_SRQ_INIT_ATTR_XRCD) ||
		    !attr->xrcd || !(attr->comp_mask & IBV_SRQ_INIT_ATTR_CQ) ||
		    !attr->cq)
			return EINVAL;
		return 0;
	default:
		return EOPNOTSUPP;
	}
}

struct ibv_srq *sib_create_srq_ex(struct ibv_context *ibctx,
				  struct ibv_srq_init_attr_ex *attr)
{
	struct sib_cmd_create_xsrq_resp resp;
	struct sib_cmd_create_xsrq cmd;
	struct sib_srq *srq;
	int ret;

	ret = sib_srq_check_ex(to_sctx(ibctx), attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	srq = calloc(1, sizeof(*srq));
	if (!srq)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_srq_ex(ibctx, &srq->vsrq, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = sib_srq_init(srq, ibctx, &attr->attr, &resp.drv_payload);
	if (ret)
		goto err_destroy;

	return &srq->vsrq.srq;

err_destroy:
	ibv_cmd_destroy_srq(&srq->vsrq.srq);
err_free:
	free(srq);
	errno = ret;
	return NULL;
}

/* Only the limit can change: the kernel does not resize SRQs. */
int sib_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		   int attr_mask)
{
	struct ibv_modify_srq cmd;

	if (attr_mask & ~IBV_SRQ_LIMIT)
		return EINVAL;

	return ibv_cmd_modify_srq(ibsrq, attr, attr_mask, &cmd, sizeof(cmd));
}

int sib_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr)
{
	struct ibv_query_srq cmd;

	return ibv_cmd_query_srq(ibsrq, attr, &cmd, sizeof(cmd));
}

int sib_destroy_srq(struct ibv_srq *ibsrq)
{
	struct sib_srq *srq = to_ssrq(ibsrq);
	int ret;

	ret = ibv_cmd_destroy_srq(ibsrq);
	if (ret)
		return ret;

	sib_wq_destroy(&srq->rq);
	free(srq);
	return 0;
}

int sib_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr)
{
	return sib_wq_post_recv(&to_ssrq(ibsrq)->rq, wr, bad_wr);
}

int sib_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num)
{
	*srq_num = to_ssrq(ibsrq)->vsrq.srq_num;
	return 0;
}

/* ---------------------------------------------------------------------
 * XRC domains: ib_core does the sharing between processes (by the inode
 * of the file given); sib keeps nothing of its own in one.
 */
struct ibv_xrcd *sib_open_xrcd(struct ibv_context *ibctx,
			       struct ibv_xrcd_init_attr *attr)
{
	struct ib_uverbs_open_xrcd_resp resp;
	struct ibv_open_xrcd cmd;
	struct verbs_xrcd *xrcd;
	int ret;

	if (!(to_sctx(ibctx)->caps & SIB_UCTX_CAP_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	xrcd = calloc(1, sizeof(*xrcd));
	if (!xrcd)
		return NULL;
	ret = ibv_cmd_open_xrcd(ibctx, xrcd, sizeof(*xrcd), attr, &cmd,
				sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(xrcd);
		errno = ret;
		return NULL;
	}
	return &xrcd->xrcd;
}

int sib_close_xrcd(struct ibv_xrcd *ibxrcd)
{
	struct verbs_xrcd *xrcd = container_of(ibxrcd, struct verbs_xrcd, xrcd);
	int ret;

	ret = ibv_cmd_close_xrcd(xrcd);
	if (ret)
		return ret;
	free(xrcd);
	return 0;
}
