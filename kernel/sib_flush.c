// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: flushing (IBA 10.3.1). A QP in the error state completes the WQEs
 * of its send and receive queues with "flushed in error", from its
 * engines (sib_task.c), under the engine mutex.
 */
#include "sib_cq.h"
#include "sib_flush.h"
#include "sib_qp.h"
#include "sib_srq.h"
#include "sib_xrc.h"

u8 sib_wr_to_wc_opcode(u8 wr_opcode)
{
	switch (wr_opcode) {
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
		return SIB_WC_RDMA_WRITE;
	case IB_WR_RDMA_READ:
		return SIB_WC_RDMA_READ;
	case IB_WR_ATOMIC_CMP_AND_SWP:
		return SIB_WC_COMP_SWAP;
	case IB_WR_ATOMIC_FETCH_AND_ADD:
		return SIB_WC_FETCH_ADD;
	case SIB_WR_ATOMIC_WRITE:
		return SIB_WC_ATOMIC_WRITE;
	case SIB_WR_FLUSH:
		return SIB_WC_FLUSH;
	case IB_WR_LOCAL_INV:
		return SIB_WC_LOCAL_INV;
	case IB_WR_BIND_MW:
		return SIB_WC_BIND_MW;
	case IB_WR_REG_MR:
		return SIB_WC_REG_MR;
	default:
		return SIB_WC_SEND;
	}
}

/*
 * WQEs the requester already copied are completed from that copy; the
 * rest are read from the ring once. A corrupted producer index flushes
 * what was copied and stops there.
 */
static void sib_flush_sq(struct sib_qp *qp)
{
	struct sib_cqe cqe = {};
	int avail = sib_queue_avail(&qp->sq);
	u32 start = qp->sq.kidx, copied = qp->req.fetched - start;
	u32 end = qp->sq.kidx + max_t(u32, max(avail, 0), copied);
	const struct sib_send_wqe *w;

	cqe.status = IB_WC_WR_FLUSH_ERR;
	cqe.qp_num = sib_qpn(qp);
	while (qp->sq.kidx != end) {
		if (qp->sq.kidx - start < copied)
			w = sib_swqe_at(qp, qp->sq.kidx)->wr;
		else
			w = sib_queue_slot(&qp->sq, qp->sq.kidx);
		cqe.wr_id = READ_ONCE(w->wr_id);
		cqe.opcode = sib_wr_to_wc_opcode(READ_ONCE(w->opcode));
		sib_queue_consume(&qp->sq, 1);
		if (sib_cq_post(sib_qp_scq(qp), &cqe, false))
			break;
	}
	qp->comp.idx = qp->sq.kidx;
	qp->req.idx = qp->sq.kidx;
	qp->req.fetched = qp->sq.kidx;
	qp->req.rd_atomic = 0;
}

/*
 * IBA 11.6.3.1, Last WQE Reached: a QP of an SRQ in the error state takes
 * no more WQEs from it (the responder runs only in RTR and later states,
 * under the engine lock we hold), and the one it was receiving into is
 * flushed. Tell the owner once per entry into the error state.
 */
static void sib_qp_last_wqe(struct sib_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ib_qp.device,
		.element.qp = &qp->ib_qp,
		.event = IB_EVENT_QP_LAST_WQE_REACHED,
	};

	lockdep_assert_held(&qp->engine);
	if (qp->last_wqe_sent || !qp->ib_qp.srq)
		return;
	qp->last_wqe_sent = true;
	if (qp->ib_qp.event_handler)
		qp->ib_qp.event_handler(&ev, qp->ib_qp.qp_context);
}

static void sib_flush_rq(struct sib_qp *qp)
{
	struct sib_cqe cqe = {
		.status = IB_WC_WR_FLUSH_ERR,
		.opcode = SIB_WC_RECV,
		.qp_num = sib_qpn(qp),
	};
	struct sib_rwqe rwqe;
	int ret;

	if (qp->resp.rwqe_valid) {
		cqe.wr_id = qp->resp.rwqe.wr_id;
		if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT)
			sib_xrc_flush_rwqe(qp, &cqe);
		else
			sib_cq_post(sib_qp_rcq(qp), &cqe, false);
		qp->resp.rwqe_valid = false;
	}
	if (!qp->rq.hdr) {
		/* An SRQ's WQEs are not the QP's to flush. */
		sib_qp_last_wqe(qp);
		return;
	}
	/* Malformed WQEs (-EBADMSG) are flushed too; a corrupted index stops. */
	for (;;) {
		ret = sib_ring_take_rwqe(&qp->rq, qp->max_recv_sge, &rwqe);
		if (ret && ret != -EBADMSG)
			break;
		cqe.wr_id = rwqe.wr_id;
		if (sib_cq_post(sib_qp_rcq(qp), &cqe, false))
			break;
	}
}

void sib_qp_flush(struct sib_qp *qp)
{
	lockdep_assert_held(&qp->engine);
	sib_flush_sq(qp);
	sib_flush_rq(qp);
}
