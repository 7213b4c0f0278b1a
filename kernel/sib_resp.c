// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the responder. It checks each request packet (PSN, opcode
 * sequence, QP rights, keys and bounds), executes it (SEND into a receive
 * WQE, RDMA WRITE into memory, RDMA READ and atomics out of memory), and
 * answers: ACKs, NAKs, RNR NAKs, read responses and atomic ACKs
 * (IBA 9.7.5.2 and 9.7.6.2). READs, atomics and duplicate requests are
 * sib_resp_rd.c's; the credits that ACKs advertise are sib_resp_credit.c's.
 */
#include "sib_copy.h"
#include "sib_cq.h"
#include "sib_local.h"
#include "sib_mkey.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_raw.h"
#include "sib_resp.h"
#include "sib_resp_credit.h"
#include "sib_resp_rd.h"
#include "sib_srq.h"
#include "sib_task.h"
#include "sib_trace.h"
#include "sib_ud.h"
#include "sib_xrc.h"

/* ---- answers ------------------------------------------------------------------ */

__be32 sib_aeth_val(struct sib_qp *qp, u8 syn)
{
	return cpu_to_be32(((u32)syn << 24) | (qp->resp.msn & SIB_PSN_MASK));
}

void sib_resp_ack(struct sib_qp *qp, u32 psn, u8 syn)
{
	__be32 smsn = sib_aeth_val(qp, syn);
	struct sk_buff *skb;
	struct sib_aeth *aeth;

	if ((syn & SIB_AETH_TYPE_MASK) == SIB_AETH_ACK &&
	    sib_ack_local(qp, psn & SIB_PSN_MASK, be32_to_cpu(smsn))) {
		trace_sib_resp_ack(qp, psn, syn, true);
		return;
	}
	skb = sib_pkt_alloc(qp, IB_OPCODE_RC_ACKNOWLEDGE, 0, psn, false);
	if (!skb)
		return;		/* the requester's timer recovers */
	trace_sib_resp_ack(qp, psn, syn, false);
	aeth = sib_pkt_eth(skb, SIB_OP_AETH);
	aeth->smsn = smsn;
	sib_pkt_send(qp, skb);
}

static void sib_resp_uc_abort(struct sib_qp *qp, u8 status);

/* The affiliated asynchronous error of a responder error (IBA 11.6.3.1). */
static enum ib_event_type sib_resp_event(u8 code)
{
	switch (code) {
	case SIB_NAK_REM_ACCESS_ERR:
		return IB_EVENT_QP_ACCESS_ERR;
	case SIB_NAK_INVALID_REQ:
		return IB_EVENT_QP_REQ_ERR;
	default:
		return IB_EVENT_QP_FATAL;
	}
}

/*
 * A request the responder refuses. RC: NAK the request at @psn and, for
 * errors the requester cannot retry (all of them here), move this QP to
 * the error state as well (IBA 9.9.3.1.2, class C), with the affiliated
 * asynchronous error unless a receive completion reported it already
 * (@how). UC: drop the message in progress; the QP stays as it is
 * (IBA 9.9.3.2, classes D and E).
 */
void sib_resp_nak(struct sib_qp *qp, u32 psn, u8 code,
		  enum sib_resp_err how)
{
	if (sib_qp_type(qp) != IB_QPT_RC) {
		sib_resp_uc_abort(qp, code == SIB_NAK_REM_ACCESS_ERR ?
				  IB_WC_REM_ACCESS_ERR : IB_WC_REM_INV_REQ_ERR);
		return;
	}
	sib_resp_ack(qp, psn, SIB_AETH_NAK | code);
	if (how == SIB_RESP_FATAL)
		sib_qp_fatal(qp, sib_resp_event(code));
	else
		sib_qp_error(qp);
}

/* ---- receive WQEs -------------------------------------------------------------- */

int sib_rq_take(struct sib_qp *qp, struct sib_rwqe *rwqe)
{
	struct sib_srq *srq = sib_qp_srq(qp);

	if (srq)
		return sib_srq_take(srq, rwqe);
	return sib_ring_take_rwqe(&qp->rq, qp->max_recv_sge, rwqe);
}

/**
 * sib_rq_take_dgram() - the receive WQE for a datagram (UD, raw packet)
 * @qp:		the receiving QP, its engine held
 * @rwqe:	filled with the WQE
 *
 * A malformed WQE moves the QP to the error state; the flush completes
 * it (sib_flush_rq()).
 *
 * Return: 0, or an errno and the datagram is dropped (-ENOENT: no
 * receive posted).
 */
int sib_rq_take_dgram(struct sib_qp *qp, struct sib_rwqe *rwqe)
{
	int ret;

	lockdep_assert_held(&qp->engine);
	ret = sib_rq_take(qp, rwqe);
	if (ret == -EBADMSG) {
		qp->resp.rwqe = *rwqe;
		qp->resp.rwqe_valid = true;
		sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
	}
	return ret;
}

/* Make sure the SEND in progress has a receive WQE. */
static int sib_resp_get_rwqe(struct sib_qp *qp, u32 psn)
{
	int ret;

	if (qp->resp.rwqe_valid)
		return 0;
	ret = sib_rq_take(qp, &qp->resp.rwqe);
	if (ret == -ENOENT) {
		/* No receive posted: RNR NAK (IBA 9.7.5.2.8) */
		if (sib_qp_type(qp) == IB_QPT_RC) {
			sib_count(qp->sdev, SIB_CNT_RNR_NAK_SENT);
			sib_resp_ack(qp, psn, SIB_AETH_RNR_NAK |
				     qp->attr.min_rnr_timer);
			sib_resp_starve(qp);
		}
		return ret;
	}
	if (ret) {
		/* A malformed WQE is the QP's to complete when it flushes. */
		if (ret == -EBADMSG)
			qp->resp.rwqe_valid = true;
		/* A corrupted ring: the QP's own fault, whatever the transport. */
		if (sib_qp_type(qp) == IB_QPT_RC)
			sib_resp_ack(qp, psn, SIB_AETH_NAK | SIB_NAK_REM_OP_ERR);
		sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
		return ret;
	}
	qp->resp.rwqe_valid = true;
	memset(&qp->resp.pos, 0, sizeof(qp->resp.pos));
	qp->resp.rcvd = 0;
	return 0;
}

static void sib_resp_complete_recv(struct sib_qp *qp, struct sk_buff *skb,
				   u8 status, u8 opcode, u32 byte_len)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_cqe cqe = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = status,
		.opcode = opcode,
		.byte_len = byte_len,
		.qp_num = sib_qpn(qp),
		.src_qp = qp->attr.dest_qp_num,
	};

	if (pkt->flags & SIB_OP_IMMDT) {
		cqe.ex = *(u32 *)sib_pkt_eth(skb, SIB_OP_IMMDT);
		cqe.wc_flags |= SIB_WC_F_WITH_IMM;
	} else if ((pkt->flags & SIB_OP_IETH) && status == IB_WC_SUCCESS) {
		cqe.ex = be32_to_cpu(*(__be32 *)sib_pkt_eth(skb, SIB_OP_IETH));
		cqe.wc_flags |= SIB_WC_F_WITH_INV;
	}
	qp->resp.rwqe_valid = false;
	if (sib_cq_post(sib_qp_rcq(qp), &cqe, pkt->se))
		sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
}

/*
 * UC: the message in progress is dropped (a PSN gap, a packet out of
 * sequence, or an error). Its later packets are ignored until the next
 * FIRST or ONLY. A receive WQE it had taken is set back to its start
 * for the next message when it is the QP's own (IBA class D1); one from
 * an SRQ cannot go back, so it completes with @status (class E).
 */
static void sib_resp_uc_abort(struct sib_qp *qp, u8 status)
{
	struct sib_cqe cqe = {
		.wr_id = qp->resp.rwqe.wr_id,
		.status = status,
		.opcode = SIB_WC_RECV,
		.qp_num = sib_qpn(qp),
		.src_qp = qp->attr.dest_qp_num,
	};

	qp->resp.msg = SIB_RESP_MSG_NONE;
	sib_count(qp->sdev, SIB_CNT_UC_DROPPED);
	if (!qp->resp.rwqe_valid)
		return;
	if (sib_qp_srq(qp)) {
		qp->resp.rwqe_valid = false;
		if (sib_cq_post(sib_qp_rcq(qp), &cqe, false))
			sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
		return;
	}
	memset(&qp->resp.pos, 0, sizeof(qp->resp.pos));
	qp->resp.rcvd = 0;
}

/*
 * A page of an ODP MR is being brought in (sib_odp.h): RC and XRC answer
 * with an RNR NAK, so that the requester sends the packet again after the
 * RNR timer, as HCAs do on a page fault; the PSN stays. UC has no RNR
 * NAK: the caller drops the message. Returns -EAGAIN.
 */
int sib_resp_odp_rnr(struct sib_qp *qp, u32 psn)
{
	if (sib_qp_type(qp) == IB_QPT_RC) {
		sib_count(qp->sdev, SIB_CNT_RNR_NAK_SENT);
		sib_count(qp->sdev, SIB_CNT_ODP_RNR_NAK_SENT);
		sib_resp_ack(qp, psn, SIB_AETH_RNR_NAK | qp->attr.min_rnr_timer);
	}
	return -EAGAIN;
}

/* ---- SEND ------------------------------------------------------------------------ */

static u8 sib_copy_nak(int err)
{
	/* A receive buffer too small is an invalid request (IBA 9.7.5.2.3);
	 * a bad lkey in the receive WQE is the responder's own problem.
	 */
	return err == -EMSGSIZE ? SIB_NAK_INVALID_REQ : SIB_NAK_REM_OP_ERR;
}

static int sib_resp_send(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_rwqe *rw = &qp->resp.rwqe;
	struct sib_sgl_pos pos;
	int ret;

	ret = sib_resp_get_rwqe(qp, pkt->psn);
	if (ret)
		return ret;
	pos = qp->resp.pos;
	ret = sib_sgl_copy_skb(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), rw->sge,
			       rw->num_sge, &qp->resp.pos, skb, pkt->hdr_len,
			       pkt->paylen, SIB_TO_MEM);
	if (ret == -EAGAIN) {
		/* The packet comes again: from where it started. */
		qp->resp.pos = pos;
		return sib_resp_odp_rnr(qp, pkt->psn);
	}
	if (ret) {
		if (sib_qp_type(qp) == IB_QPT_RC)
			sib_resp_complete_recv(qp, skb, ret == -EMSGSIZE ?
					       IB_WC_LOC_LEN_ERR :
					       IB_WC_LOC_PROT_ERR,
					       SIB_WC_RECV, qp->resp.rcvd);
		sib_resp_nak(qp, pkt->psn, sib_copy_nak(ret),
			     SIB_RESP_FATAL_CQE);
		return ret;
	}
	qp->resp.rcvd += pkt->paylen;
	if (!(pkt->flags & SIB_OP_LAST))
		return 0;

	if (pkt->flags & SIB_OP_IETH) {
		u32 rkey = be32_to_cpu(*(__be32 *)sib_pkt_eth(skb, SIB_OP_IETH));

		if (sib_mem_invalidate(qp->sdev, sib_resp_pd(qp), sib_qpn(qp),
				       rkey, true)) {
			sib_resp_complete_recv(qp, skb, IB_WC_REM_INV_REQ_ERR,
					       SIB_WC_RECV, qp->resp.rcvd);
			sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ,
				     SIB_RESP_FATAL_CQE);
			return -EINVAL;
		}
	}
	sib_resp_complete_recv(qp, skb, IB_WC_SUCCESS, SIB_WC_RECV,
			       qp->resp.rcvd);
	return 0;
}

/* ---- RDMA WRITE ---------------------------------------------------------------- */

/*
 * The first packet checks the whole target range; each packet then looks
 * the key up again for its own bytes, so no MR reference is held between
 * packets (a stalled requester must not block dereg_mr).
 */
static int sib_resp_write_first(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	u32 len = be32_to_cpu(reth->len);
	struct sib_mr *mr;
	u64 mr_va;

	qp->resp.rkey = be32_to_cpu(reth->rkey);
	qp->resp.va = be64_to_cpu(reth->va);
	qp->resp.resid = len;
	qp->resp.write_len = len;
	if (!len)
		return 0;	/* a zero-length WRITE needs no valid rkey */
	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), qp->resp.rkey,
			qp->resp.va, len, SIB_ACC_REMOTE_WRITE, &mr_va);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	sib_mr_put(mr);
	return 0;
}

static int sib_resp_write_data(struct sib_qp *qp, struct sk_buff *skb)
{
	u32 len = sib_pkt(skb)->paylen;
	struct sib_mr *mr;
	u64 mr_va;
	int ret;

	if (!len)
		return 0;
	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), qp->resp.rkey,
			qp->resp.va, len, SIB_ACC_REMOTE_WRITE, &mr_va);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	ret = sib_mr_copy_skb(mr, mr_va, skb, sib_pkt(skb)->hdr_len, len,
			      SIB_TO_MEM);
	sib_mr_put(mr);
	if (ret)
		return ret;
	qp->resp.va += len;
	qp->resp.resid -= len;
	return 0;
}

static int sib_resp_write(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	int ret;

	if (pkt->flags & SIB_OP_FIRST) {
		ret = sib_resp_write_first(qp, skb);
		if (ret == -EAGAIN)
			return sib_resp_odp_rnr(qp, pkt->psn);
		if (ret) {
			sib_resp_nak(qp, pkt->psn, SIB_NAK_REM_ACCESS_ERR,
				     SIB_RESP_FATAL);
			return ret;
		}
	}
	/* WRITE_LAST_WITH_IMM consumes a receive WQE: get it first. */
	if ((pkt->flags & SIB_OP_IMMDT) && sib_resp_get_rwqe(qp, pkt->psn))
		return -EAGAIN;
	if (pkt->paylen > qp->resp.resid ||
	    (!(pkt->flags & SIB_OP_LAST) &&
	     pkt->paylen != pkt->npkts * qp->mtu) ||
	    ((pkt->flags & SIB_OP_LAST) && pkt->paylen != qp->resp.resid)) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return -EINVAL;
	}
	ret = sib_resp_write_data(qp, skb);
	if (ret == -EAGAIN)
		return sib_resp_odp_rnr(qp, pkt->psn);
	if (ret) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_REM_ACCESS_ERR, SIB_RESP_FATAL);
		return ret;
	}
	if ((pkt->flags & SIB_OP_LAST) && (pkt->flags & SIB_OP_IMMDT))
		sib_resp_complete_recv(qp, skb, IB_WC_SUCCESS,
				       SIB_WC_RECV_RDMA_WITH_IMM,
				       qp->resp.write_len);
	return 0;
}

/* ---- checks and dispatch ------------------------------------------------------- */

static bool sib_resp_transport_ok(struct sib_qp *qp, u32 flags)
{
	if (qp->ib_qp.qp_type == IB_QPT_UC)
		return flags & SIB_OP_UC;
	return sib_xrc_transport_ok(qp, flags);
}

/*
 * XRC_TGT: every packet of a message names the SRQ its first one named,
 * whose WQE the message is received into (IBA 9.7.5.2.x).
 */
static bool sib_resp_xrc_seq_ok(struct sib_qp *qp, u32 flags)
{
	if (!qp->resp.xsrq)
		return true;
	if (flags & SIB_OP_FIRST) {
		qp->resp.xsrqn = qp->resp.xsrq->srq_num;
		return true;
	}
	return qp->resp.xsrqn == qp->resp.xsrq->srq_num;
}

/* FIRST/MIDDLE/LAST must follow each other (IBA 9.7.5.2.1). */
static bool sib_resp_seq_ok(struct sib_qp *qp, u32 flags)
{
	if (!sib_resp_xrc_seq_ok(qp, flags))
		return false;
	switch (qp->resp.msg) {
	case SIB_RESP_MSG_NONE:
		return flags & SIB_OP_FIRST;
	case SIB_RESP_MSG_SEND:
		return !(flags & SIB_OP_FIRST) && (flags & SIB_OP_SEND);
	case SIB_RESP_MSG_WRITE:
		return !(flags & SIB_OP_FIRST) && (flags & SIB_OP_WRITE);
	}
	return false;
}

/* The message in progress after @flags' packet was executed. */
static enum sib_resp_msg sib_resp_msg_after(u32 flags)
{
	if (flags & SIB_OP_LAST)
		return SIB_RESP_MSG_NONE;
	return (flags & SIB_OP_SEND) ? SIB_RESP_MSG_SEND : SIB_RESP_MSG_WRITE;
}

static bool sib_resp_rights_ok(struct sib_qp *qp, u32 flags)
{
	int acc = qp->attr.qp_access_flags;

	if ((flags & SIB_OP_WRITE) && !(acc & IB_ACCESS_REMOTE_WRITE))
		return false;
	if ((flags & SIB_OP_READ) && !(acc & IB_ACCESS_REMOTE_READ))
		return false;
	if ((flags & SIB_OP_ATOMIC) && !(acc & IB_ACCESS_REMOTE_ATOMIC))
		return false;
	return true;
}

static int sib_resp_execute(struct sib_qp *qp, struct sk_buff *skb)
{
	u32 flags = sib_pkt(skb)->flags;

	if (flags & SIB_OP_SEND)
		return sib_resp_send(qp, skb);
	if (flags & SIB_OP_ATOMIC_WRITE)
		return sib_resp_atomic_write(qp, skb);
	if (flags & SIB_OP_FLUSH)
		return sib_resp_flush(qp, skb);
	if (flags & SIB_OP_WRITE)
		return sib_resp_write(qp, skb);
	if (flags & SIB_OP_READ)
		return sib_resp_read(qp, skb);
	return sib_resp_atomic(qp, skb);
}

/*
 * PSN check; returns SIB_RV_OK to go on with the packet, or what was made
 * of it (a duplicate, or a PSN gap).
 */
static enum sib_resp_verdict sib_resp_psn_ok(struct sib_qp *qp,
					     struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	int cmp = sib_psn_cmp(pkt->psn, qp->resp.psn);

	if (qp->ib_qp.qp_type == IB_QPT_UC) {
		/* UC: a gap drops the message in progress (IBA 9.8.3). */
		if (cmp) {
			if (qp->resp.msg != SIB_RESP_MSG_NONE)
				sib_resp_uc_abort(qp, IB_WC_REM_INV_REQ_ERR);
			qp->resp.psn = pkt->psn;
		}
		return SIB_RV_OK;
	}
	if (cmp > 0) {
		if (!qp->resp.nak_seq) {
			qp->resp.nak_seq = true;
			sib_count(qp->sdev, SIB_CNT_SEQ_NAK_SENT);
			sib_resp_ack(qp, qp->resp.psn,
				     SIB_AETH_NAK | SIB_NAK_PSN_SEQ_ERR);
		}
		return SIB_RV_SEQ_ERR;
	}
	if (cmp < 0) {
		sib_count(qp->sdev, SIB_CNT_DUP_REQ);
		sib_resp_duplicate(qp, skb);
		return SIB_RV_DUP;
	}
	qp->resp.nak_seq = false;
	return SIB_RV_OK;
}

/*
 * ACK coalescing (IBA 9.7.5.1.2: an ACK acknowledges every PSN up to its
 * own). When the packet at the head of the input queue is the next
 * request in sequence, a SEND or WRITE packet that asks for an ACK
 * itself, the ACK the engine is about to send for it (or the NAK or RNR
 * NAK, which acknowledges the packets before it just as well) covers the
 * packet just executed too: this one is left out. A burst of small
 * messages then costs one ACK, not one per message. Never past a READ or
 * atomic: only its response may acknowledge it (see
 * sib_resp_dup_ack_psn()). If that next packet never runs (the QP leaves
 * RTS), the requester's timer recovers as for a lost ACK. Called with
 * qp->resp.psn already past the packet just executed.
 */
static bool sib_resp_ack_later(struct sib_qp *qp)
{
	const struct sib_pkt *next;
	unsigned long flags;
	bool later = false;

	/* Nothing queued: no lock (a packet queued now gets its own ACK). */
	if (skb_queue_empty_lockless(&qp->rxq))
		return false;
	spin_lock_irqsave(&qp->rxq.lock, flags);
	if (!skb_queue_empty(&qp->rxq)) {
		next = sib_pkt(skb_peek(&qp->rxq));
		later = next->ack_req && next->psn == qp->resp.psn &&
			(next->flags & SIB_OP_REQ) &&
			!(next->flags & SIB_OP_RD_ATOMIC);
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	if (later)
		sib_count(qp->sdev, SIB_CNT_ACKS_COALESCED);
	return later;
}

/*
 * What a request that failed to execute came to: an RC QP NAKed it and
 * went to error, or sent an RNR NAK; a UC QP dropped the message.
 */
static enum sib_resp_verdict sib_resp_failed(struct sib_qp *qp)
{
	if (qp->ib_qp.qp_type == IB_QPT_UC)
		return SIB_RV_UC_DROP;
	return sib_qp_state(qp) == IB_QPS_ERR ? SIB_RV_NAK : SIB_RV_RNR;
}

void sib_responder(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	enum ib_qp_state state = sib_qp_state(qp);
	enum sib_resp_verdict v = SIB_RV_IGNORED;
	int ret;

	lockdep_assert_held(&qp->engine);
	if (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	    state != IB_QPS_SQD && state != IB_QPS_SQE)
		goto out;
	if (sib_qp_type(qp) == IB_QPT_RAW_PACKET) {
		/* Only sib_raw.c queues to a raw packet QP: frames. */
		v = SIB_RV_UD;
		sib_raw_recv(qp, skb);
		goto out;
	}
	if (sib_qp_type(qp) == IB_QPT_UD) {
		if (pkt->flags & SIB_OP_UD) {
			v = SIB_RV_UD;
			sib_ud_recv(qp, skb);
		}
		goto out;
	}
	if (!sib_resp_transport_ok(qp, pkt->flags))
		goto out;
	/* XRC_TGT: the SRQ the request names, of the QP's domain. */
	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT &&
	    sib_xrc_resp_begin(qp, skb)) {
		if (pkt->psn == qp->resp.psn) {
			sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ,
				     SIB_RESP_FATAL);
			v = SIB_RV_NAK;
		}
		goto out;
	}
	v = sib_resp_psn_ok(qp, skb);
	if (v != SIB_RV_OK)
		goto out;
	/* UC: a new message while one is in progress drops that one. */
	if (qp->ib_qp.qp_type == IB_QPT_UC && (pkt->flags & SIB_OP_FIRST) &&
	    qp->resp.msg != SIB_RESP_MSG_NONE)
		sib_resp_uc_abort(qp, IB_WC_REM_INV_REQ_ERR);
	if (!sib_resp_seq_ok(qp, pkt->flags)) {
		if (qp->ib_qp.qp_type == IB_QPT_UC) {
			qp->resp.psn = sib_psn_add(pkt->psn, pkt->npkts);
			v = SIB_RV_UC_DROP;
			goto out;
		}
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		v = SIB_RV_NAK;
		goto out;
	}
	if (!sib_resp_rights_ok(qp, pkt->flags) ||
	    !sib_pkt_span_ok(pkt, qp->mtu)) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		v = SIB_RV_NAK;
		goto out;
	}

	ret = sib_resp_execute(qp, skb);
	if (ret < 0) {
		v = sib_resp_failed(qp);
		if (qp->ib_qp.qp_type == IB_QPT_UC) {
			/*
			 * No receive WQE (UC has no RNR NAK): the message is
			 * dropped, as for an error (sib_resp_nak() did that).
			 */
			if (ret == -ENOENT || ret == -EAGAIN)
				sib_resp_uc_abort(qp, IB_WC_REM_INV_REQ_ERR);
			qp->resp.psn = sib_psn_add(pkt->psn, pkt->npkts);
		}
		goto out;	/* RC: NAKed, or RNR; the PSN stays */
	}
	/*
	 * A READ, an atomic or an ATOMIC WRITE counted its message, set the
	 * PSN it expects next and answered already (sib_resp_rd.c).
	 */
	if (!(pkt->flags & SIB_OP_RD_ATOMIC)) {
		qp->resp.psn = sib_psn_add(pkt->psn, pkt->npkts);
		if (pkt->flags & SIB_OP_LAST)
			qp->resp.msn++;
		if (pkt->ack_req && sib_qp_type(qp) == IB_QPT_RC &&
		    !sib_resp_ack_later(qp))
			sib_resp_ack(qp, sib_psn_add(qp->resp.psn, SIB_PSN_MASK),
				     sib_ack_syndrome(qp));
	}
	qp->resp.msg = sib_resp_msg_after(pkt->flags);
out:
	sib_xrc_resp_end(qp);
	trace_sib_resp_verdict(qp, skb, v);
	kfree_skb(skb);
}
