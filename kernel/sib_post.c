// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: posting for kernel consumers (ib_post_send(), ib_post_recv()). A
 * kernel QP has the same rings as a process' QP: each work request is
 * written into its ring as the provider writes a process' WQE, then the
 * engines are kicked, and they check it as they check any WQE. For a
 * process' QP a post is only its doorbell.
 *
 * Locking. Kernel consumers post under the QP's @sq_lock or @rq_lock,
 * taken with irqsave; the engines consume under @engine. A slot is
 * published before the producer index (a release store), as the ring
 * rule says.
 */
#include "sib_post.h"
#include "sib_qp.h"
#include "sib_resp_credit.h"
#include "sib_srq.h"
#include "sib_task.h"
#include "sib_ud.h"
#include "sib_xrc.h"

/*
 * An inline WR's data, gathered from its SGEs into the slot. A kernel
 * consumer's SGE addresses are kernel virtual (sib's DMA is virtual), and
 * IBTA does not check an inline WR's lkeys.
 */
static int sib_put_inline(struct sib_qp *qp, struct sib_send_wqe *w,
			  const struct ib_send_wr *wr)
{
	u8 *dst = (u8 *)(w + 1);
	u32 len = 0;
	int i;

	if (sib_op_is_rd_atomic(wr->opcode))
		return -EINVAL;
	for (i = 0; i < wr->num_sge; i++) {
		u32 n = wr->sg_list[i].length;

		if (n > qp->max_inline - len)
			return -EINVAL;
		memcpy(dst + len, (void *)(uintptr_t)wr->sg_list[i].addr, n);
		len += n;
	}
	w->inline_len = len;
	w->num_sge = 0;
	return 0;
}

/* IB_WR_REG_MR: the registration ib_map_mr_sg() prepared, as it is now. */
static void sib_put_reg_mr(struct sib_send_wqe *w, const struct ib_reg_wr *reg)
{
	const struct ib_mr *mr = reg->mr;

	w->num_sge = 0;
	w->wr.reg_mr.iova = mr->iova;
	w->wr.reg_mr.length = mr->length;
	w->wr.reg_mr.key = reg->key;
	w->wr.reg_mr.access = reg->access;
	w->wr.reg_mr.page_shift = ilog2(mr->page_size);
	w->wr.reg_mr.npages = to_smr(reg->mr)->fr_nmap;
}

static bool sib_kernel_op_ok(u32 op)
{
	switch (op) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case IB_WR_LOCAL_INV:
	case IB_WR_SEND_WITH_INV:
	case IB_WR_REG_MR:
		return true;
	default:
		return false;	/* BIND_MW, LSO, masked atomics, integrity */
	}
}

/*
 * Kernel consumers: write one WR into the SQ ring as a process would.
 * The requester checks it again as it checks a process' WQE; what is
 * checked here is what the ring format cannot carry.
 */
static int sib_put_swqe(struct sib_qp *qp, const struct ib_send_wr *wr)
{
	u32 prod = qp->sq.hdr->prod;
	struct sib_send_wqe *w;
	struct sib_sge *sge;
	int i, ret;

	if (wr->num_sge > qp->max_send_sge || !sib_kernel_op_ok(wr->opcode))
		return -EINVAL;
	if (prod - READ_ONCE(qp->sq.hdr->cons) >= qp->sq.nslots)
		return -ENOMEM;

	w = sib_queue_slot(&qp->sq, prod);
	memset(w, 0, SIB_SEND_WQE_HDR);
	w->wr_id = wr->wr_id;
	w->opcode = wr->opcode;
	w->send_flags = wr->send_flags;
	w->num_sge = wr->num_sge;
	w->ex.imm_data = wr->ex.imm_data;
	if (wr->opcode == IB_WR_REG_MR) {
		sib_put_reg_mr(w, reg_wr(wr));
	} else if (wr->opcode == IB_WR_RDMA_WRITE ||
		   wr->opcode == IB_WR_RDMA_READ ||
		   wr->opcode == IB_WR_RDMA_WRITE_WITH_IMM) {
		w->wr.rdma.remote_addr = rdma_wr(wr)->remote_addr;
		w->wr.rdma.rkey = rdma_wr(wr)->rkey;
	} else if (sib_qp_type(qp) == IB_QPT_UD) {
		w->wr.ud.ah_handle = to_sah(ud_wr(wr)->ah)->ah_num;
		w->wr.ud.remote_qpn = ud_wr(wr)->remote_qpn;
		w->wr.ud.remote_qkey = ud_wr(wr)->remote_qkey;
	} else if (wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		   wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = atomic_wr(wr)->remote_addr;
		w->wr.atomic.compare_add = atomic_wr(wr)->compare_add;
		w->wr.atomic.swap = atomic_wr(wr)->swap;
		w->wr.atomic.rkey = atomic_wr(wr)->rkey;
	}
	if (wr->opcode != IB_WR_REG_MR && (wr->send_flags & IB_SEND_INLINE)) {
		ret = sib_put_inline(qp, w, wr);
		if (ret)
			return ret;
	} else if (wr->opcode != IB_WR_REG_MR) {
		sge = (struct sib_sge *)(w + 1);
		for (i = 0; i < wr->num_sge; i++) {
			sge[i].addr = wr->sg_list[i].addr;
			sge[i].length = wr->sg_list[i].length;
			sge[i].lkey = wr->sg_list[i].lkey;
		}
	}
	/* Publish the slots before the index (ring rule). */
	smp_store_release(&qp->sq.hdr->prod, prod + 1);
	return 0;
}

int sib_post_send(struct ib_qp *ib_qp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	enum ib_qp_state state = sib_qp_state(qp);
	unsigned long flags;
	int ret = 0;

	/* An XRC_TGT QP has no send queue (ib_core passes its handles on). */
	if (ib_qp->qp_type == IB_QPT_XRC_TGT) {
		*bad_wr = wr;
		return -EINVAL;
	}
	/* A user QP's WQEs are in the ring already: this is the doorbell. */
	if (sib_qp_is_user(qp)) {
		sib_qp_doorbell(qp, false, false);
		return 0;
	}
	if (state == IB_QPS_RESET || state == IB_QPS_INIT ||
	    state == IB_QPS_RTR) {
		*bad_wr = wr;
		return -EINVAL;
	}
	spin_lock_irqsave(&qp->sq_lock, flags);
	for (; wr; wr = wr->next) {
		ret = sib_put_swqe(qp, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&qp->sq_lock, flags);
	sib_qp_sched(qp);
	return ret;
}

int sib_post_recv(struct ib_qp *ib_qp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	unsigned long flags;
	int ret = 0;

	/*
	 * XRC QPs have no receive queue: an XRC_TGT QP's SRQs are named by
	 * its requests, and an XRC_INI QP receives nothing.
	 */
	if (sib_qpt_is_xrc(ib_qp->qp_type)) {
		*bad_wr = wr;
		return -EINVAL;
	}
	if (!sib_qp_is_user(qp)) {
		if (!qp->rq.hdr || sib_qp_state(qp) == IB_QPS_RESET) {
			*bad_wr = wr;
			return -EINVAL;
		}
		spin_lock_irqsave(&qp->rq_lock, flags);
		for (; wr; wr = wr->next) {
			ret = sib_ring_put_rwqe(&qp->rq, qp->max_recv_sge, wr);
			if (ret) {
				*bad_wr = wr;
				break;
			}
		}
		spin_unlock_irqrestore(&qp->rq_lock, flags);
	}
	if (sib_qp_is_user(qp))
		sib_qp_doorbell(qp, true, false);
	else if (sib_rq_posted(qp) || sib_qp_state(qp) == IB_QPS_ERR)
		sib_qp_sched(qp);
	return ret;
}
