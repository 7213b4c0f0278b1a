// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the requester's go-back-N (IBA 9.7.5.1.2). When the completer
 * learns that packets were lost (a PSN sequence error NAK, an RNR NAK, a
 * READ response that skips one, the local ACK timer), the requester goes
 * back to the first PSN the responder lacks and sends every WQE again
 * from that packet on (sib_req_rewind()); when a late ACK shows that the
 * responder got further than that, it goes forward again
 * (sib_req_forward()). Both run in the QP's engine, under its @engine
 * mutex, which guards the send WQEs and the requester's state.
 */
#include "sib_comp.h"
#include "sib_qp.h"
#include "sib_req_retry.h"
#include "sib_trace.h"

/* Move @pos forward by @off bytes of the SGE list (lengths only). */
static void sib_sgl_advance(const struct sib_sge *sge, u32 num_sge,
			    struct sib_sgl_pos *pos, u32 off)
{
	while (off && pos->sge < num_sge) {
		u32 left = sge[pos->sge].length - pos->off;

		if (off < left) {
			pos->off += off;
			return;
		}
		off -= left;
		pos->sge++;
		pos->off = 0;
	}
}

/* Restart @s, skipping its first @skip packets (already acknowledged). */
static void sib_swqe_restart(struct sib_qp *qp, struct sib_swqe *s, u32 skip)
{
	u32 off = min_t(u32, skip * qp->mtu, s->len);

	s->state = SIB_SWQE_SENDING;
	s->sent = 0;
	s->rcvd = 0;
	memset(&s->pos, 0, sizeof(s->pos));
	memset(&s->rpos, 0, sizeof(s->rpos));
	if (s->wr->opcode == IB_WR_RDMA_READ) {
		/* The responses before @skip are in place already. */
		sib_sgl_advance(sib_swqe_sge(s), s->wr->num_sge, &s->rpos,
				off);
		s->rcvd = off;
		return;
	}
	if (sib_op_is_rd_atomic(s->wr->opcode))
		return;		/* an atomic is asked for again, whole */
	if (off && !(s->wr->send_flags & IB_SEND_INLINE))
		sib_sgl_advance(sib_swqe_sge(s), s->wr->num_sge, &s->pos, off);
	s->sent = off;
}

/*
 * Go back to @psn (IBA 9.7.5.1.2: go-back-N): every WQE from the one
 * that contains @psn is sent again from that packet on.
 */
void sib_req_rewind(struct sib_qp *qp, u32 psn)
{
	u32 idx;

	/* Never forward: the WQE at req.idx is not sent from its start. */
	if (sib_psn_cmp(psn, qp->req.psn) > 0)
		psn = qp->req.psn;
	trace_sib_req_rewind(qp, psn);

	for (idx = qp->comp.idx; idx != qp->req.idx; idx++) {
		struct sib_swqe *s = sib_swqe_at(qp, idx);

		if (s->state == SIB_SWQE_DONE)
			continue;
		if (sib_psn_cmp(s->last_psn, psn) < 0)
			continue;
		break;
	}
	qp->req.idx = idx;
	for (; idx != qp->req.fetched; idx++) {
		struct sib_swqe *s = sib_swqe_at(qp, idx);
		u32 skip = 0;

		if (s->state == SIB_SWQE_DONE || s->status)
			continue;
		if (s->state != SIB_SWQE_SENDING || s->sent) {
			/*
			 * Resume after what arrived: a SEND or WRITE from the
			 * packet at @psn, a READ from its first missing
			 * response (a new request for the rest, IBA 9.7.5.1.4).
			 */
			if (sib_psn_cmp(psn, s->first_psn) > 0)
				skip = (psn - s->first_psn) & SIB_PSN_MASK;
			if (s->state == SIB_SWQE_SENT &&
			    sib_op_takes_rd_res(s->wr->opcode))
				qp->req.rd_atomic--;
			sib_swqe_restart(qp, s, skip);
		}
	}
	qp->req.psn = psn;
}

/*
 * The responder has everything before @psn, which is further than the
 * requester got since it went back (sib_req_rewind()): the completer
 * retired the WQEs before @psn (none of them a READ or atomic still
 * waiting). Go on sending from @psn.
 */
void sib_req_forward(struct sib_qp *qp, u32 psn)
{
	struct sib_swqe *s;

	while (qp->req.idx != qp->req.fetched) {
		s = sib_swqe_at(qp, qp->req.idx);
		if (s->state != SIB_SWQE_DONE)
			break;
		qp->req.idx++;
	}
	if (qp->req.idx != qp->req.fetched) {
		s = sib_swqe_at(qp, qp->req.idx);
		/*
		 * Also a WQE not yet sent in full: its packets up to @psn
		 * arrived, and it must go on with the data of @psn.
		 */
		if (s->begun && !sib_op_is_rd_atomic(s->wr->opcode) &&
		    sib_psn_cmp(psn, s->first_psn) > 0 &&
		    (!s->all_sent || sib_psn_cmp(psn, s->last_psn) <= 0))
			sib_swqe_restart(qp, s, (psn - s->first_psn) &
					 SIB_PSN_MASK);
	}
	qp->req.psn = psn;
}
