/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: receive work queues, indirection tables and RSS QPs.
 *
 * A WQ is a receive ring like an SRQ's: posting to it needs no system
 * call. The kernel fills it with the frames that RSS QPs steer to it
 * (kernel/sib_wq.c) and completes them on the WQ's CQ. An RSS QP is a
 * raw packet QP created with an indirection table and a Toeplitz hash
 * configuration, which travels as the create command's driver data; it
 * has no queues of its own.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

/* ---------------------------------------------------------------------
 * Work queues
 */

/*
 * Post to a WQ. In the error state the kernel flushes what the ring holds
 * when it is told to enter it again: that is the doorbell of a WQ in
 * error (rdma_user_sib.h). Storing prod, a full barrier, then reading the
 * flag: either the kernel's flush sees the new WQEs or we see the flag.
 */
static int sib_post_wq_recv(struct ibv_wq *ibwq, struct ibv_recv_wr *wr,
			    struct ibv_recv_wr **bad_wr)
{
	struct sib_rwq *rwq = to_srwq(ibwq);
	struct ibv_wq_attr attr = {
		.attr_mask = IBV_WQ_ATTR_STATE,
		.wq_state = IBV_WQS_ERR,
	};
	struct ibv_modify_wq cmd;
	int ret;

	ret = sib_wq_post_recv(&rwq->rq, wr, bad_wr);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (sib_load_relaxed(&sib_ring_hdr(&rwq->rq.ring)->flags) &
	    SIB_RING_F_QP_ERR)
		ibv_cmd_modify_wq(ibwq, &attr, &cmd, sizeof(cmd));
	return ret;
}

struct ibv_wq *sib_create_wq(struct ibv_context *ibctx,
			     struct ibv_wq_init_attr *attr)
{
	struct sib_cmd_create_wq_resp resp;
	struct sib_cmd_create_wq cmd;
	struct sib_rwq *rwq;
	int ret;

	if (attr->wq_type != IBV_WQT_RQ) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (!attr->pd || !attr->cq) {
		errno = EINVAL;
		return NULL;
	}
	rwq = calloc(1, sizeof(*rwq));
	if (!rwq)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_wq(ibctx, attr, &rwq->ibv_wq, &cmd.ibv_cmd,
				sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	/* attr->max_wr and max_sge now hold what the kernel granted. */
	ret = sib_wq_init(ibctx, &rwq->rq, &resp.drv_payload.ring,
			  attr->max_wr, attr->max_sge, 0, SIB_RECV_WQE_HDR);
	if (ret)
		goto err_destroy;
	if (!rwq->rq.ring.buf) {
		verbs_err(&to_sctx(ibctx)->ibv_ctx,
			  "kernel created a WQ without a ring");
		sib_wq_destroy(&rwq->rq);
		ret = EPROTO;
		goto err_destroy;
	}
	rwq->rq.lock.off = sib_pd_td(attr->pd);
	rwq->ibv_wq.state = IBV_WQS_RESET;
	rwq->ibv_wq.post_recv = sib_post_wq_recv;
	return &rwq->ibv_wq;

err_destroy:
	ibv_cmd_destroy_wq(&rwq->ibv_wq);
err_free:
	free(rwq);
	errno = ret;
	return NULL;
}

/* States and the current state; the kernel implements no WQ flags. */
int sib_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr)
{
	struct ibv_modify_wq cmd;

	if (attr->attr_mask & ~(uint32_t)(IBV_WQ_ATTR_STATE |
					  IBV_WQ_ATTR_CURR_STATE))
		return EOPNOTSUPP;
	return ibv_cmd_modify_wq(ibwq, attr, &cmd, sizeof(cmd));
}

int sib_destroy_wq(struct ibv_wq *ibwq)
{
	struct sib_rwq *rwq = to_srwq(ibwq);
	int ret;

	ret = ibv_cmd_destroy_wq(ibwq);
	if (ret)
		return ret;
	sib_wq_destroy(&rwq->rq);
	free(rwq);
	return 0;
}

/* ---------------------------------------------------------------------
 * Indirection tables
 */
struct ibv_rwq_ind_table *
sib_create_rwq_ind_table(struct ibv_context *ibctx,
			 struct ibv_rwq_ind_table_init_attr *attr)
{
	struct ib_uverbs_ex_create_rwq_ind_table_resp resp;
	struct ibv_rwq_ind_table *tbl;
	int ret;

	/* libibverbs builds the command on its stack: bound it first. */
	if (attr->log_ind_tbl_size > SIB_MAX_LOG_IND_TBL || !attr->ind_tbl) {
		errno = EINVAL;
		return NULL;
	}
	tbl = calloc(1, sizeof(*tbl));
	if (!tbl)
		return NULL;
	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_rwq_ind_table(ibctx, attr, tbl, &resp,
					   sizeof(resp));
	if (ret) {
		free(tbl);
		errno = ret;
		return NULL;
	}
	return tbl;
}

int sib_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl)
{
	int ret;

	ret = ibv_cmd_destroy_rwq_ind_table(tbl);
	if (ret)
		return ret;
	free(tbl);
	return 0;
}

/* ---------------------------------------------------------------------
 * RSS QPs
 */
enum {
	SIB_RSS_COMP_MASK_NEEDED = IBV_QP_INIT_ATTR_IND_TABLE |
				   IBV_QP_INIT_ATTR_RX_HASH |
				   IBV_QP_INIT_ATTR_PD,
	SIB_RSS_COMP_MASK = SIB_RSS_COMP_MASK_NEEDED |
			    IBV_QP_INIT_ATTR_CREATE_FLAGS,
	SIB_RSS_FIELDS = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
			 IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |
			 IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP |
			 IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP,
};

static int sib_check_rss_attr(const struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;

	if (attr->comp_mask & ~(uint32_t)SIB_RSS_COMP_MASK)
		return EOPNOTSUPP;
	if ((attr->comp_mask & SIB_RSS_COMP_MASK_NEEDED) !=
	    SIB_RSS_COMP_MASK_NEEDED || !attr->rwq_ind_tbl || !attr->pd)
		return EINVAL;
	if (attr->qp_type != IBV_QPT_RAW_PACKET)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if (h->rx_hash_key_len != SIB_RX_HASH_KEY_LEN || !h->rx_hash_key)
		return EINVAL;
	return 0;
}

struct ibv_qp *sib_create_rss_qp(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr)
{
	const struct ibv_rx_hash_conf *h = &attr->rx_hash_conf;
	struct sib_cmd_create_qp_rss_resp resp;
	struct sib_cmd_create_qp_rss cmd;
	struct sib_qp *qp;
	int ret;

	ret = sib_check_rss_attr(attr);
	if (ret) {
		errno = ret;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	memset(&cmd, 0, sizeof(cmd));
	memset(&resp, 0, sizeof(resp));
	cmd.drv_payload.rx_hash_fields_mask = h->rx_hash_fields_mask;
	cmd.drv_payload.rx_hash_function = h->rx_hash_function;
	cmd.drv_payload.rx_hash_key_len = h->rx_hash_key_len;
	memcpy(cmd.drv_payload.rx_hash_key, h->rx_hash_key,
	       SIB_RX_HASH_KEY_LEN);
	ret = sib_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	/* No queue: post_send finds no ring, post_recv a QP in RESET. */
	sib_pd_use(attr->pd, 1);
	return &qp->vqp.qp;
}

/* What query_device_ex adds to the kernel's RSS caps: the hash. */
void sib_rss_caps(struct ibv_device_attr_ex *attr, size_t attr_size)
{
	size_t end = offsetof(struct ibv_device_attr_ex, rss_caps) +
		     sizeof(attr->rss_caps);

	if (attr_size < end || !attr->rss_caps.supported_qpts)
		return;
	attr->rss_caps.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ;
	attr->rss_caps.rx_hash_fields_mask = SIB_RSS_FIELDS;
}
