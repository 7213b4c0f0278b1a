// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the completer. It takes the responses to this QP's requests
 * (ACKs, NAKs, RDMA READ responses, atomic ACKs), retires send WQEs in
 * order, posts their completions, and runs the two requester timers:
 * the local ACK timeout (IBA 9.7.6.1.3) and the RNR back-off (9.7.5.2.8).
 * The timers themselves, and what they do in softirq, are sib_timer.c's.
 */
#include "sib_comp.h"
#include "sib_copy.h"
#include "sib_cq.h"
#include "sib_flush.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_req.h"
#include "sib_req_retry.h"
#include "sib_resp_credit.h"
#include "sib_task.h"
#include "sib_timer.h"
#include "sib_trace.h"
#include "sib_xrc.h"

/* RNR NAK timer field (IBA table 45), in microseconds. */
static const u32 sib_rnr_usec[32] = {
	655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960,
	1280, 1920, 2560, 3840, 5120, 7680, 10240, 15360, 20480, 30720,
	40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520,
};

/* ---- retiring WQEs ---------------------------------------------------------- */

static bool sib_swqe_signaled(struct sib_qp *qp, struct sib_swqe *s)
{
	return qp->sig_all || (s->wr->send_flags & IB_SEND_SIGNALED) ||
	       s->status != IB_WC_SUCCESS;
}

static void sib_comp_post(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_cqe cqe = {
		.wr_id = s->wr->wr_id,
		.status = s->status,
		.opcode = sib_wr_to_wc_opcode(s->wr->opcode),
		.byte_len = s->len,
		.qp_num = sib_qpn(qp),
	};

	if (sib_cq_post(sib_qp_scq(qp), &cqe, false))
		s->status = IB_WC_GENERAL_ERR;
}

static void sib_sq_drained(struct sib_qp *qp)
{
	struct ib_event ev = {
		.device = qp->ib_qp.device,
		.element.qp = &qp->ib_qp,
		.event = IB_EVENT_SQ_DRAINED,
	};

	if (qp->sq_drained_sent || sib_qp_state(qp) != IB_QPS_SQD)
		return;
	qp->sq_drained_sent = true;
	if (qp->attr.en_sqd_async_notify && qp->ib_qp.event_handler)
		qp->ib_qp.event_handler(&ev, qp->ib_qp.qp_context);
}

/* Complete, in order, every WQE that is done. */
void sib_comp_run(struct sib_qp *qp)
{
	struct sib_swqe *s;

	while (qp->comp.idx != qp->req.idx) {
		s = sib_swqe_at(qp, qp->comp.idx);
		if (s->state != SIB_SWQE_DONE)
			break;
		/*
		 * Free the slot first: a process that sees the completion
		 * may post into the slot at once (the shadow keeps our copy).
		 */
		trace_sib_swqe_done(qp, qp->comp.idx, s);
		qp->comp.idx++;
		sib_queue_consume(&qp->sq, 1);
		if (sib_swqe_signaled(qp, s))
			sib_comp_post(qp, s);
		if (s->status != IB_WC_SUCCESS) {
			sib_timer_stop(qp);
			sib_qp_error(qp);
			return;
		}
	}
	if (qp->comp.idx == qp->req.idx) {
		/* A credit wait keeps the timer: it sends the probe. */
		if (!qp->req.credit_wait)
			sib_timer_stop(qp);
		if (qp->req.idx == qp->req.fetched)
			sib_sq_drained(qp);
	}
}

/*
 * The oldest WQE that still waits for the peer, or NULL: one fully sent
 * (also if it is being sent again after a rewind), or the one being sent
 * if some of its packets are out.
 */
static struct sib_swqe *sib_comp_oldest(struct sib_qp *qp)
{
	u32 idx;

	for (idx = qp->comp.idx; idx != qp->req.fetched; idx++) {
		struct sib_swqe *s = sib_swqe_at(qp, idx);

		if (s->state == SIB_SWQE_DONE)
			continue;
		if (s->state == SIB_SWQE_SENT || s->sent || s->all_sent)
			return s;
		return NULL;
	}
	return NULL;
}

/*
 * Forward progress (IBA 9.7.6.1.3): the retry counters start over, the
 * local ACK timer starts again (an expiry the engine has not handled yet
 * no longer counts), and a NAK or implied NAK may start a new go-back-N
 * (see sib_comp_retry()).
 */
static void sib_comp_progress(struct sib_qp *qp)
{
	qp->comp.retry = qp->attr.retry_cnt;
	qp->comp.rnr_retry = qp->attr.rnr_retry;
	qp->comp.retrying = false;
	qp->req.probe = false;
	sib_timer_restart(qp);
	/* An expiry not yet handled is void: the timer starts over. */
	clear_bit(SIB_QP_RETRANS_FIRED, &qp->events);
}

/*
 * @s is done: its ACK or response arrived. One that took a responder
 * resource frees its place in max_rd_atomic (unless a go-back-N did, by
 * taking it back to be sent again).
 */
static void sib_comp_retire(struct sib_qp *qp, struct sib_swqe *s)
{
	if (s->state == SIB_SWQE_SENT && sib_op_takes_rd_res(s->wr->opcode))
		qp->req.rd_atomic--;
	s->state = SIB_SWQE_DONE;
}

/*
 * Everything up to and including @psn arrived: retire SEND, WRITE, ATOMIC
 * WRITE and FLUSH WQEs that end there. A READ or atomic is retired only
 * by its response.
 */
static bool sib_comp_ack_upto(struct sib_qp *qp, u32 psn)
{
	u32 next = sib_psn_add(psn, 1);
	bool progress = false, implied = false;
	struct sib_swqe *s;

	while ((s = sib_comp_oldest(qp))) {
		if (!s->all_sent || sib_op_is_rd_atomic(s->wr->opcode) ||
		    sib_psn_cmp(s->last_psn, psn) > 0)
			break;
		sib_comp_retire(qp, s);
		progress = true;
	}
	/*
	 * An ACK cannot acknowledge a READ or atomic: only its response can.
	 * An ACK past one whose response is missing means the response was
	 * lost (IBA 9.7.5.1.5, implied NAK): stop there and tell the caller.
	 */
	if (s && sib_op_is_rd_atomic(s->wr->opcode)) {
		u32 limit = s->rcvd ? qp->comp.psn : s->first_psn;

		if (sib_psn_cmp(next, limit) > 0) {
			next = limit;
			implied = true;
		}
	}
	if (sib_psn_cmp(next, qp->comp.psn) > 0) {
		qp->comp.psn = next;
		progress = true;
	}
	/* Past where the requester resends from since a rewind: skip ahead. */
	if (sib_psn_cmp(qp->comp.psn, qp->req.psn) > 0)
		sib_req_forward(qp, qp->comp.psn);
	if (progress)
		sib_comp_progress(qp);
	return implied;
}

static void sib_comp_fail(struct sib_qp *qp, struct sib_swqe *s, u8 status)
{
	s->status = status;
	s->state = SIB_SWQE_DONE;
	/* Later WQEs are flushed once the QP is in error. */
	qp->req.idx = qp->comp.idx;
	while (qp->req.idx != qp->req.fetched &&
	       sib_swqe_at(qp, qp->req.idx) != s)
		qp->req.idx++;
	qp->req.idx++;
}

static void sib_comp_rnr(struct sib_qp *qp, struct sib_swqe *s, u32 psn,
			 u8 timer)
{
	if (!qp->comp.rnr_retry) {
		sib_comp_fail(qp, s, IB_WC_RNR_RETRY_EXC_ERR);
		return;
	}
	sib_count(qp->sdev, SIB_CNT_RNR_NAK_RCVD);
	if (qp->comp.rnr_retry != 7)
		qp->comp.rnr_retry--;
	trace_sib_rnr_wait(qp, psn, sib_rnr_usec[timer & 31]);
	sib_req_rewind(qp, psn);
	qp->req.rnr_wait = true;
	sib_timer_stop(qp);
	mod_timer(&qp->rnr_timer,
		  jiffies + usecs_to_jiffies(sib_rnr_usec[timer & 31]) + 1);
}

/*
 * Go back to @psn and send again (go-back-N), counting one transport retry.
 * @timeout: the local ACK timer fired; otherwise a sequence error NAK or
 * an implied NAK (an ACK past a READ or atomic still waiting) asks for it.
 *
 * Once a go-back-N has started, NAKs and implied NAKs do not start
 * another until there is progress: they are answers to packets sent before
 * the retry (a duplicate SEND or WRITE is acknowledged with the newest PSN,
 * which looks like an implied NAK until the retried READ's responses
 * arrive), and each would otherwise resend the whole window and use up a
 * retry, until the QP fails with RETRY_EXC_ERR under mere reordering. Only
 * the timer retries again without progress.
 */
static void sib_comp_retry(struct sib_qp *qp, u32 psn, bool timeout)
{
	struct sib_swqe *s = sib_comp_oldest(qp);

	if (!s)
		return;
	trace_sib_retry(qp, psn, timeout, qp->comp.retrying && !timeout);
	if (qp->comp.retrying && !timeout) {
		sib_count(qp->sdev, SIB_CNT_NAK_IN_RETRY);
		return;
	}
	if (!qp->comp.retry) {
		sib_comp_fail(qp, s, IB_WC_RETRY_EXC_ERR);
		return;
	}
	qp->comp.retry--;
	qp->comp.retrying = true;
	sib_count(qp->sdev, SIB_CNT_RETRANS);
	sib_req_rewind(qp, psn);
	/*
	 * A timeout says nothing came back: the peer may be slow or
	 * congested, or the path lossy. Probe with the oldest WQE alone;
	 * the rest of the window follows its answer (sib_comp_progress()).
	 */
	qp->req.probe = timeout;
	qp->req.probe_idx = qp->req.idx;
	sib_timer_restart(qp);
}

static enum sib_comp_verdict sib_comp_nak(struct sib_qp *qp,
					  struct sib_swqe *s, u32 psn, u8 syn)
{
	static const u8 status[] = {
		[SIB_NAK_INVALID_REQ] = IB_WC_REM_INV_REQ_ERR,
		[SIB_NAK_REM_ACCESS_ERR] = IB_WC_REM_ACCESS_ERR,
		[SIB_NAK_REM_OP_ERR] = IB_WC_REM_OP_ERR,
		[SIB_NAK_INVALID_RD_REQ] = IB_WC_REM_INV_RD_REQ_ERR,
	};
	u8 code = syn & 0x1f;

	if (code == SIB_NAK_PSN_SEQ_ERR) {
		sib_comp_ack_upto(qp, sib_psn_add(psn, SIB_PSN_MASK));
		sib_comp_retry(qp, psn, false);
		return SIB_CV_SEQ_NAK;
	}
	/* The NAK names the failed request; everything before it arrived. */
	sib_comp_ack_upto(qp, sib_psn_add(psn, SIB_PSN_MASK));
	s = sib_comp_oldest(qp);
	if (!s)
		return SIB_CV_STALE;
	sib_comp_fail(qp, s, code < ARRAY_SIZE(status) && status[code] ?
		      status[code] : IB_WC_REM_OP_ERR);
	return SIB_CV_ERR_NAK;
}

/*
 * Credits from an ACK-type AETH: LSN = MSN + credits (IBA 9.7.7.2).
 * Returns true if they let the requester send more than before.
 */
static bool sib_comp_credit(struct sib_qp *qp, u32 smsn)
{
	u8 code = (smsn >> 24) & SIB_AETH_CREDIT_INVALID;
	bool was = qp->req.credit_unlimited;
	u32 lsn;

	if (code == SIB_AETH_CREDIT_INVALID) {
		qp->req.credit_unlimited = true;
		return !was;
	}
	qp->req.credit_unlimited = false;
	qp->req.credit_known = true;
	lsn = (smsn + sib_credit_count(code)) & SIB_PSN_MASK;
	if (sib_psn_cmp(lsn, qp->req.lsn) <= 0)
		return false;
	qp->req.lsn = lsn;
	return true;
}

/*
 * An ACK-type packet's AETH (@smsn, host order) for @psn. Returns the
 * verdict (for the sib_comp_verdict tracepoint).
 */
static enum sib_comp_verdict sib_comp_aeth(struct sib_qp *qp, u32 psn,
					   u32 smsn)
{
	u8 syn = smsn >> 24;
	struct sib_swqe *s = sib_comp_oldest(qp);
	bool more;

	switch (syn & SIB_AETH_TYPE_MASK) {
	case SIB_AETH_ACK:
		more = sib_comp_credit(qp, smsn);
		/*
		 * An ACK for the PSN acknowledged last is a duplicate: the
		 * responder's credit update, or the answer to a resent
		 * request. It moves the limit and nothing else: never an
		 * implied NAK, never a retry.
		 */
		if (psn == sib_psn_add(qp->comp.psn, SIB_PSN_MASK)) {
			if (more) {
				sib_count(qp->sdev, SIB_CNT_CREDIT_UPD_RCVD);
				trace_sib_credit_update_rcvd(qp, qp->req.ssn);
			}
			return SIB_CV_DUP_ACK;
		}
		if (sib_comp_ack_upto(qp, psn)) {
			sib_comp_retry(qp, qp->comp.psn, false);
			return SIB_CV_IMPLIED_NAK;
		}
		return SIB_CV_ACK;
	case SIB_AETH_RNR_NAK:
		/* A stale (duplicated or late) NAK must not send us back. */
		if (sib_psn_cmp(psn, qp->comp.psn) < 0)
			return SIB_CV_STALE;
		sib_comp_ack_upto(qp, sib_psn_add(psn, SIB_PSN_MASK));
		s = sib_comp_oldest(qp);
		if (!s)
			return SIB_CV_STALE;
		sib_comp_rnr(qp, s, psn, syn);
		return SIB_CV_RNR;
	case SIB_AETH_NAK:
		if (sib_psn_cmp(psn, qp->comp.psn) < 0 || !s)
			return SIB_CV_STALE;
		return sib_comp_nak(qp, s, psn, syn);
	default:
		return SIB_CV_STALE;	/* reserved syndromes are ignored */
	}
}

/* Scatter a READ response's payload; complete the READ on its last one. */
static void sib_comp_read_resp(struct sib_qp *qp, struct sib_swqe *s,
			       struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_sgl_pos rpos = s->rpos;
	u32 len = pkt->paylen;
	int ret;

	if (len > s->len - s->rcvd || !sib_pkt_span_ok(pkt, qp->mtu) ||
	    (!(pkt->flags & SIB_OP_LAST) && len != pkt->npkts * qp->mtu)) {
		sib_comp_fail(qp, s, IB_WC_REM_INV_REQ_ERR);
		return;
	}
	ret = sib_sgl_copy_skb(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
			       (struct sib_sge *)(s->wr + 1), s->wr->num_sge,
			       &s->rpos, skb, pkt->hdr_len, len, SIB_TO_MEM);
	if (ret == -EAGAIN) {
		/*
		 * An ODP page of the SGEs was invalidated since the request
		 * went (sib_sgl_fault_in()) and is being brought in again:
		 * the response is dropped, and the READ asked again.
		 */
		s->rpos = rpos;
		return;
	}
	if (ret) {
		sib_comp_fail(qp, s, ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
			      IB_WC_LOC_PROT_ERR);
		return;
	}
	s->rcvd += len;
	qp->comp.psn = sib_psn_add(pkt->psn, pkt->npkts);
	/* Every response is progress (IBA 9.7.6.1.3). */
	sib_comp_progress(qp);
	if (pkt->flags & SIB_OP_LAST) {
		if (s->rcvd != s->len) {
			sib_comp_fail(qp, s, IB_WC_REM_INV_REQ_ERR);
			return;
		}
		sib_comp_retire(qp, s);
	}
}

static void sib_comp_atomic_ack(struct sib_qp *qp, struct sib_swqe *s,
				struct sk_buff *skb)
{
	struct sib_atmack *ack = sib_pkt_eth(skb, SIB_OP_ATMACK);
	u64 orig = be64_to_cpu(ack->orig);
	struct sib_sgl_pos pos = {};
	int ret;

	ret = sib_sgl_copy(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
			   (struct sib_sge *)(s->wr + 1), s->wr->num_sge, &pos,
			   &orig, sizeof(orig), SIB_TO_MEM);
	if (ret == -EAGAIN)
		return;	/* as for a READ response (sib_comp_read_resp()) */
	if (ret) {
		sib_comp_fail(qp, s, IB_WC_LOC_PROT_ERR);
		return;
	}
	sib_comp_retire(qp, s);
	qp->comp.psn = sib_psn_add(sib_pkt(skb)->psn, 1);
	sib_comp_progress(qp);
}

/*
 * An ATOMIC WRITE's or a FLUSH's answer: a READ response ONLY without
 * data (IBA 1.5). Anything else under its PSN is not for it.
 */
static enum sib_comp_verdict
sib_comp_empty_resp(struct sib_qp *qp, struct sib_swqe *s,
		    struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);

	if (pkt->paylen || (pkt->opcode & SIB_OPCODE_OP_MASK) !=
	    IB_OPCODE_RDMA_READ_RESPONSE_ONLY)
		return SIB_CV_STALE;
	sib_comp_retire(qp, s);
	qp->comp.psn = sib_psn_add(pkt->psn, 1);
	sib_comp_progress(qp);
	return SIB_CV_RESP;
}

/* The oldest WQE waiting for its response (sib_op_takes_rd_res()), or NULL. */
static struct sib_swqe *sib_comp_rd_atomic(struct sib_qp *qp)
{
	u32 idx;

	for (idx = qp->comp.idx; idx != qp->req.idx; idx++) {
		struct sib_swqe *s = sib_swqe_at(qp, idx);

		if (s->state == SIB_SWQE_SENT &&
		    sib_op_takes_rd_res(s->wr->opcode))
			return s;
	}
	return NULL;
}

/*
 * A response for a READ or atomic: it must be the next one expected.
 * Returns the verdict (for the sib_comp_verdict tracepoint).
 */
static enum sib_comp_verdict sib_comp_data(struct sib_qp *qp,
					   struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_swqe *s;

	if (pkt->flags & SIB_OP_AETH)
		sib_comp_credit(qp, be32_to_cpu(((struct sib_aeth *)
				sib_pkt_eth(skb, SIB_OP_AETH))->smsn));
	/*
	 * A response acknowledges the requests before its READ or atomic,
	 * not the earlier responses of the same READ, which may be missing.
	 */
	s = sib_comp_rd_atomic(qp);
	if (!s || sib_psn_cmp(pkt->psn, s->first_psn) < 0 ||
	    sib_psn_cmp(sib_psn_add(pkt->psn, pkt->npkts - 1),
			s->last_psn) > 0)
		return SIB_CV_STALE;	/* duplicate, or not ours: drop */
	sib_comp_ack_upto(qp, sib_psn_add(s->first_psn, SIB_PSN_MASK));
	if (sib_comp_oldest(qp) != s)
		return SIB_CV_STALE;
	if (pkt->psn != qp->comp.psn) {
		/*
		 * A response is missing before this one. Every later one
		 * would be dropped too, and the timer would find the gap
		 * only after the whole READ went by: ask for the rest now,
		 * as for a sequence NAK (once per go-back-N, see
		 * sib_comp_retry()). An earlier PSN is a duplicate.
		 */
		if (sib_psn_cmp(pkt->psn, qp->comp.psn) > 0) {
			sib_comp_retry(qp, qp->comp.psn, false);
			return SIB_CV_RESP_GAP;
		}
		return SIB_CV_STALE;
	}
	if (pkt->flags & SIB_OP_READ) {
		if (s->wr->opcode == SIB_WR_ATOMIC_WRITE ||
		    s->wr->opcode == SIB_WR_FLUSH)
			return sib_comp_empty_resp(qp, s, skb);
		if (s->wr->opcode != IB_WR_RDMA_READ)
			return SIB_CV_STALE;
		sib_comp_read_resp(qp, s, skb);
	} else if ((pkt->flags & SIB_OP_ATMACK) &&
		   (s->wr->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
		    s->wr->opcode == IB_WR_ATOMIC_FETCH_AND_ADD)) {
		sib_comp_atomic_ack(qp, s, skb);
	} else {
		return SIB_CV_STALE;
	}
	return SIB_CV_RESP;
}

/*
 * May the completer take a response for @psn now? Only an RC QP that
 * sends, and only for something sent (IBA 9.7.5.1.1).
 */
static bool sib_comp_accepts(struct sib_qp *qp, u32 psn)
{
	enum ib_qp_state state = sib_qp_state(qp);

	if (sib_qp_type(qp) != IB_QPT_RC ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD))
		return false;
	return sib_psn_cmp(psn, qp->req.psn_max) < 0 &&
	       sib_psn_cmp(psn, sib_psn_add(qp->comp.psn, SIB_PSN_MASK)) >= 0;
}

/*
 * An ACK for a PSN older than the one acknowledged last: a late duplicate,
 * or a responder's credit update that names the PSN before a READ or
 * atomic whose responses came since (sib_resp_update_psn()). It
 * acknowledges nothing, but its credits hold: LSN = MSN + credits never
 * shrinks at the responder, so an older ACK can only be behind. Returns
 * true if it let the requester send more.
 */
static bool sib_comp_old_ack_credit(struct sib_qp *qp, u32 psn, u32 smsn)
{
	enum ib_qp_state state = sib_qp_state(qp);
	u8 syn = smsn >> 24;

	if (sib_qp_type(qp) != IB_QPT_RC ||
	    (state != IB_QPS_RTS && state != IB_QPS_SQD) ||
	    (syn & SIB_AETH_TYPE_MASK) != SIB_AETH_ACK ||
	    (syn & SIB_AETH_CREDIT_INVALID) == SIB_AETH_CREDIT_INVALID ||
	    sib_psn_cmp(psn, sib_psn_add(qp->comp.psn, SIB_PSN_MASK)) >= 0 ||
	    !sib_comp_credit(qp, smsn))
		return false;
	sib_count(qp->sdev, SIB_CNT_CREDIT_UPD_RCVD);
	trace_sib_credit_update_rcvd(qp, qp->req.ssn);
	return true;
}

/* The AETH syndrome of a response, for the tracepoint; 0 if none. */
static u8 sib_comp_syn(struct sk_buff *skb)
{
	if (!(sib_pkt(skb)->flags & SIB_OP_AETH))
		return 0;
	return be32_to_cpu(((struct sib_aeth *)
			    sib_pkt_eth(skb, SIB_OP_AETH))->smsn) >> 24;
}

void sib_completer(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	enum sib_comp_verdict v = SIB_CV_STALE;
	struct sib_aeth *aeth;

	lockdep_assert_held(&qp->engine);
	/* RC responses to RC QPs, XRC responses to XRC_INI QPs only. */
	if (sib_qp_type(qp) == IB_QPT_RC &&
	    !sib_xrc_transport_ok(qp, pkt->flags)) {
		kfree_skb(skb);
		return;
	}
	if ((pkt->flags & SIB_OP_RC) && sib_comp_accepts(qp, pkt->psn)) {
		if (pkt->flags & SIB_OP_ACK) {
			aeth = sib_pkt_eth(skb, SIB_OP_AETH);
			v = sib_comp_aeth(qp, pkt->psn, be32_to_cpu(aeth->smsn));
		} else {
			v = sib_comp_data(qp, skb);
		}
		sib_comp_run(qp);
	} else if ((pkt->flags & (SIB_OP_RC | SIB_OP_ACK)) ==
		   (SIB_OP_RC | SIB_OP_ACK)) {
		aeth = sib_pkt_eth(skb, SIB_OP_AETH);
		if (sib_comp_old_ack_credit(qp, pkt->psn,
					    be32_to_cpu(aeth->smsn))) {
			v = SIB_CV_DUP_ACK;
			sib_comp_run(qp);
		}
	}
	/* After what the response caused (see sib_trace.h). */
	if (trace_sib_comp_verdict_enabled())
		trace_sib_comp_verdict(qp, pkt->opcode, pkt->psn,
				       pkt->flags & SIB_OP_AETH,
				       sib_comp_syn(skb), v, false);
	kfree_skb(skb);
}

/*
 * Take the ACK a local peer left in the register (struct sib_local_ack), as
 * if it were the next input packet.
 */
void sib_comp_local_ack(struct sib_qp *qp)
{
	enum sib_comp_verdict v;
	unsigned long flags;
	u32 psn, smsn;
	bool valid;

	lockdep_assert_held(&qp->engine);
	spin_lock_irqsave(&qp->rxq.lock, flags);
	valid = qp->lack.valid;
	psn = qp->lack.psn;
	smsn = qp->lack.smsn;
	qp->lack.valid = false;
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	if (!valid)
		return;
	if (!sib_comp_accepts(qp, psn)) {
		v = SIB_CV_STALE;
		if (sib_comp_old_ack_credit(qp, psn, smsn)) {
			v = SIB_CV_DUP_ACK;
			sib_comp_run(qp);
		}
		trace_sib_comp_verdict(qp, IB_OPCODE_RC_ACKNOWLEDGE, psn, true,
				       smsn >> 24, v, true);
		return;
	}
	v = sib_comp_aeth(qp, psn, smsn);
	sib_comp_run(qp);
	trace_sib_comp_verdict(qp, IB_OPCODE_RC_ACKNOWLEDGE, psn, true,
			       smsn >> 24, v, true);
}

/* Timer work, in the engine's context. */
void sib_comp_timers(struct sib_qp *qp)
{
	if (test_and_clear_bit(SIB_QP_RNR_FIRED, &qp->events)) {
		trace_sib_rnr_timer(qp);
		qp->req.rnr_wait = false;
	}
	if (test_and_clear_bit(SIB_QP_RETRANS_FIRED, &qp->events) &&
	    sib_timer_expired(qp)) {
		struct sib_swqe *s = sib_comp_oldest(qp);

		/*
		 * No credit update in time: send the limited WQE. It may be
		 * the oldest WQE itself, sent before and rewound (by an RNR
		 * NAK): waiting for it to go is still not a retry. The timer
		 * starts again when the probe goes (sib_timer_arm()).
		 */
		if (qp->req.credit_wait &&
		    (!s || s == sib_swqe_at(qp, qp->req.idx))) {
			sib_timer_stop(qp);
			qp->req.credit_probe = true;
		} else if (s) {
			sib_count(qp->sdev, SIB_CNT_TIMEOUTS);
			trace_sib_ack_timeout(qp);
			sib_comp_retry(qp, qp->comp.psn, true);
		} else {
			/* Nothing waits: off, so that the next send arms it. */
			sib_timer_stop(qp);
		}
	}
	sib_comp_run(qp);
}
