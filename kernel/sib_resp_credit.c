// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the responder's end-to-end credits (IBA 9.7.7.2): the credit
 * count each ACK advertises, the starved RQ that asks to hear of the
 * next receive posted, and the unsolicited ACK (a credit update) that
 * tells the requester. The requester's side is in sib_req.c and
 * sib_comp.c.
 */
#include "sib_qp.h"
#include "sib_resp.h"
#include "sib_resp_credit.h"
#include "sib_task.h"
#include "sib_trace.h"

/*
 * End-to-end credits (IBA 9.7.7.2): every ACK advertises how many receive
 * WQEs are posted, in the AETH's 5-bit logarithmic code. A QP on an SRQ
 * cannot know its share, so it says "invalid" (no limit); so does a
 * device with credits turned off.
 */
static const u16 sib_credit_table[31] = {
	0, 1, 2, 3, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384,
	512, 768, 1024, 1536, 2048, 3072, 4096, 6144, 8192, 12288, 16384,
	24576, 32768,
};

u32 sib_credit_count(u8 code)
{
	return code < ARRAY_SIZE(sib_credit_table) ? sib_credit_table[code] :
	       U32_MAX;
}

static u8 sib_credit_code(struct sib_qp *qp)
{
	int avail, lo = 0, hi = ARRAY_SIZE(sib_credit_table) - 1;

	if (!qp->rq.hdr || !sib_credits_enabled(qp))
		return SIB_AETH_CREDIT_INVALID;
	avail = sib_queue_avail(&qp->rq);
	if (avail <= 0)
		return 0;
	/* The largest code whose count does not exceed what is posted. */
	while (lo < hi) {
		int mid = (lo + hi + 1) / 2;

		if (sib_credit_table[mid] <= avail)
			lo = mid;
		else
			hi = mid - 1;
	}
	return lo;
}

/*
 * Credit updates. Once the responder has told the requester that no
 * receive WQE is posted (zero credits, or an RNR NAK), the requester
 * holds back its next SEND until it hears otherwise (sib_req_have_credit()).
 * So the responder asks to be told of the next receive posted (the RQ
 * ring's credit_wanted, see the uapi header), and then looks at the ring
 * once more: a receive posted in between is seen either here or by the
 * poster (sib_rq_posted()). Only with credits on, and only for an RQ of
 * its own: an SRQ QP advertises "invalid" and never starves.
 */
void sib_resp_starve(struct sib_qp *qp)
{
	struct sib_ring_hdr *hdr = qp->rq.hdr;

	if (!hdr || sib_qp_type(qp) != IB_QPT_RC || !sib_credits_enabled(qp))
		return;
	qp->resp.starved = true;
	WRITE_ONCE(hdr->credit_wanted, 1);
	/* Pairs with the barrier in sib_rq_posted() (or the provider's). */
	smp_mb();
	if (sib_queue_avail(&qp->rq) > 0) {
		set_bit(SIB_QP_CREDIT_UPDATE, &qp->events);
		sib_qp_sched(qp);
	}
}

/* The requester was told of credits (or of none to track): not starved. */
static void sib_resp_fed(struct sib_qp *qp)
{
	if (!qp->resp.starved)
		return;
	qp->resp.starved = false;
	WRITE_ONCE(qp->rq.hdr->credit_wanted, 0);
}

u8 sib_ack_syndrome(struct sib_qp *qp)
{
	u8 code = sib_credit_code(qp);

	if (!code)
		sib_resp_starve(qp);
	else
		sib_resp_fed(qp);
	return SIB_AETH_ACK | code;
}

/*
 * The PSN a credit update names: the newest one executed that is no part
 * of a READ or atomic in the resource table. Only a READ's or an atomic's
 * response may acknowledge it: to an IBA requester a plain ACK for its
 * PSN is an implied NAK (or, with all responses in, nothing), but
 * rdma_rxe's requester completes a READ or an atomic on it, without the
 * data or result of the responses it lost, or fails the QP if it has the
 * first of them. The ACK then names a PSN the requester may well have
 * seen acknowledged already: a duplicate, whose credits still count
 * (LSN = MSN + credits, IBA 9.7.7.2). A READ or atomic that left the
 * table is complete at the requester, which has only max_rd_atomic of
 * them outstanding.
 */
static u32 sib_resp_update_psn(struct sib_qp *qp)
{
	u32 i, pass, n = sib_resp_nres(qp);
	u32 psn = sib_psn_add(qp->resp.psn, SIB_PSN_MASK);
	bool moved = true;

	for (pass = 0; moved && pass <= n; pass++) {
		moved = false;
		for (i = 0; i < n; i++) {
			struct sib_resp_res *res = &qp->resp_res[i];

			if (res->opcode &&
			    sib_psn_cmp(res->first_psn, psn) <= 0 &&
			    sib_psn_cmp(res->last_psn, psn) >= 0) {
				psn = sib_psn_add(res->first_psn, SIB_PSN_MASK);
				moved = true;
			}
		}
	}
	return psn;
}

/*
 * Receives were posted to a starved RQ (SIB_QP_CREDIT_UPDATE): send one
 * unsolicited ACK for the newest PSN executed outside any READ or atomic
 * (sib_resp_update_psn()), with the current MSN and credits (IBA 9.7.7.2
 * lets a responder send an ACK at any time), always between messages.
 * For the requester it acknowledges nothing new: a duplicate ACK that
 * only moves its limit. In the engine's context.
 */
void sib_resp_credit_update(struct sib_qp *qp)
{
	enum ib_qp_state state = sib_qp_state(qp);
	u8 code;

	lockdep_assert_held(&qp->engine);
	if (!qp->resp.starved ||
	    (state != IB_QPS_RTR && state != IB_QPS_RTS &&
	     state != IB_QPS_SQD && state != IB_QPS_SQE))
		return;
	/*
	 * In the middle of a message the requester waits for no credit;
	 * the ACK that ends the message brings the credits (and ends the
	 * starvation). An update now would acknowledge a PSN inside a
	 * message, which the requester must then resume from. Look again
	 * after the next packet, in case the message ends without an ACK.
	 */
	if (qp->resp.msg != SIB_RESP_MSG_NONE) {
		set_bit(SIB_QP_CREDIT_UPDATE, &qp->events);
		return;
	}
	/* READ responses still going: the LAST one brings the credits. */
	if (qp->resp.rd.active) {
		set_bit(SIB_QP_CREDIT_UPDATE, &qp->events);
		return;
	}
	code = sib_credit_code(qp);
	if (!code) {
		sib_resp_starve(qp);	/* a stray doorbell: still none */
		return;
	}
	sib_resp_fed(qp);
	sib_count(qp->sdev, SIB_CNT_CREDIT_UPD_SENT);
	trace_sib_credit_update_sent(qp, code);
	sib_resp_ack(qp, sib_resp_update_psn(qp), SIB_AETH_ACK | code);
}

/*
 * Receives were posted: by a kernel consumer (after it published them),
 * or by a process, whose POST_RECV doorbell says it saw credit_wanted
 * set. Any context. True if the engines must run to send a credit update.
 * The word is the process' to write too: whatever it holds costs at most
 * one engine pass.
 */
bool sib_rq_posted(struct sib_qp *qp)
{
	struct sib_ring_hdr *hdr = qp->rq.hdr;

	if (!hdr)
		return false;
	/* Pairs with the barrier in sib_resp_starve(). */
	smp_mb();
	if (!READ_ONCE(hdr->credit_wanted))
		return false;
	WRITE_ONCE(hdr->credit_wanted, 0);
	set_bit(SIB_QP_CREDIT_UPDATE, &qp->events);
	return true;
}
