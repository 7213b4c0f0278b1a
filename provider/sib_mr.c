/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: memory regions and memory windows.
 *
 * MRs and MWs live entirely in the kernel; these verbs are thin wrappers
 * around the core commands, with no driver udata. Binding a type-1 window
 * (ibv_bind_mw) posts a BIND_MW send WQE through the ordinary post path.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

/* ---------------------------------------------------------------------
 * Memory regions
 */
struct ibv_mr *sib_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access)
{
	struct ib_uverbs_reg_mr_resp resp;
	struct ibv_reg_mr cmd;
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_reg_mr(pd, addr, length, hca_va, access, vmr, &cmd,
			     sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}

	return &vmr->ibv_mr;
}

/*
 * A dma-buf MR (SIB_UCTX_CAP_DMABUF): the kernel takes the buffer and
 * maps it; no driver data. A kernel without the capability would answer
 * with the core's EOPNOTSUPP too, but say it here without a system call.
 */
struct ibv_mr *sib_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access)
{
	struct verbs_mr *vmr;
	int ret;

	if (!(to_sctx(pd->context)->caps & SIB_UCTX_CAP_DMABUF)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	vmr = calloc(1, sizeof(*vmr));
	if (!vmr) {
		errno = ENOMEM;
		return NULL;
	}
	ret = sib_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

/*
 * Prefetch for ODP MRs (IBV_ADVISE_MR_ADVICE_PREFETCH*): the kernel
 * checks the keys and ranges, and faults the pages in (with
 * IBV_ADVISE_MR_FLAG_FLUSH, before it returns).
 */
int sib_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		  uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge)
{
	if (!(to_sctx(pd->context)->caps & SIB_UCTX_CAP_ODP))
		return EOPNOTSUPP;
	return ibv_cmd_advise_mr(pd, advice, flags, sg_list, num_sge);
}

/*
 * An MR of the context's command file that another process (or another
 * ibv_context on the same file) registered: the kernel tells its keys and
 * length (addr stays NULL). Unimporting frees only our copy.
 */
struct ibv_mr *sib_import_mr(struct ibv_pd *pd, uint32_t mr_handle)
{
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;

	ret = ibv_cmd_query_mr(pd, vmr, mr_handle);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}

void sib_unimport_mr(struct ibv_mr *mr)
{
	free(verbs_get_mr(mr));
}

/*
 * libibverbs has already validated flags and arguments; it updates pd,
 * addr and length of the ibv_mr on success, ibv_cmd_rereg_mr the keys.
 */
int sib_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		 void *addr, size_t length, int access)
{
	struct ib_uverbs_rereg_mr_resp resp;
	struct ibv_rereg_mr cmd;
	int ret;

	ret = ibv_cmd_rereg_mr(vmr, flags, addr, length, (uintptr_t)addr,
			       access, pd, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret)
		errno = ret;
	return ret;
}

int sib_dereg_mr(struct verbs_mr *vmr)
{
	int ret;

	ret = ibv_cmd_dereg_mr(vmr);
	if (ret)
		return ret;

	free(vmr);
	return 0;
}

/* ---------------------------------------------------------------------
 * Memory windows
 */
struct ibv_mw *sib_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type)
{
	struct ib_uverbs_alloc_mw_resp resp;
	struct ibv_alloc_mw cmd;
	struct ibv_mw *mw;
	int ret;

	mw = calloc(1, sizeof(*mw));
	if (!mw)
		return NULL;

	ret = ibv_cmd_alloc_mw(pd, type, mw, &cmd, sizeof(cmd), &resp,
			       sizeof(resp));
	if (ret) {
		free(mw);
		errno = ret;
		return NULL;
	}

	return mw;
}

int sib_dealloc_mw(struct ibv_mw *mw)
{
	int ret;

	ret = ibv_cmd_dealloc_mw(mw);
	if (ret)
		return ret;

	free(mw);
	return 0;
}

/*
 * ibv_bind_mw() for type-1 windows (libibverbs has checked the type, the
 * MR/range pairing and the PD). The bind is an ordinary BIND_MW send WQE
 * that moves the window to the next rkey tag; the application sees the
 * new rkey in mw->rkey as soon as the WQE is posted. Type-2 windows are
 * bound with IBV_WR_BIND_MW or ibv_wr_bind_mw() instead.
 */
int sib_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind)
{
	struct ibv_send_wr wr = {};
	struct ibv_send_wr *bad_wr;
	int ret;

	if (mw->type != IBV_MW_TYPE_1)
		return EINVAL;

	wr.wr_id = mw_bind->wr_id;
	wr.opcode = IBV_WR_BIND_MW;
	wr.send_flags = mw_bind->send_flags;
	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = ibv_inc_rkey(mw->rkey);
	wr.bind_mw.bind_info = mw_bind->bind_info;

	ret = sib_post_send(qp, &wr, &bad_wr);
	if (ret)
		return ret;

	mw->rkey = wr.bind_mw.rkey;
	return 0;
}
