// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the requester. It copies each send WQE out of the SQ ring once,
 * validates the copy, and turns it into request packets: one per path MTU
 * of payload for SEND and RDMA WRITE, one for an RDMA READ (whose
 * responses take one PSN each) or an atomic. Local operations (bind,
 * invalidate) execute here and produce no packet.
 */
#include "sib_comp.h"
#include "sib_copy.h"
#include "sib_mw.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_raw.h"
#include "sib_req.h"
#include "sib_task.h"
#include "sib_timer.h"
#include "sib_trace.h"
#include "sib_ud.h"
#include "sib_xrc.h"

#define SIB_REQ_BUDGET		64	/* packets per run, then requeue */
#define SIB_MAX_INFLIGHT	1024	/* PSNs sent but not acknowledged */
#define SIB_ACK_EVERY		64	/* AckReq at least this often */

static bool sib_op_needs_rwqe(u8 op);

static void *sib_shadow_at(struct sib_qp *qp, u32 idx)
{
	return qp->sq_shadow + (size_t)(idx & (qp->sq.nslots - 1)) *
	       qp->sq.slot_size;
}

static bool sib_op_allowed(struct sib_qp *qp, u8 op)
{
	enum ib_qp_type type = sib_qp_type(qp);

	/* A raw packet QP sends frames: SEND, without immediate data. */
	if (type == IB_QPT_RAW_PACKET)
		return op == IB_WR_SEND;
	/* An XRC_TGT QP sends nothing; XRC has no ATOMIC WRITE or FLUSH. */
	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT)
		return false;
	if (qp->ib_qp.qp_type == IB_QPT_XRC_INI &&
	    (op == SIB_WR_ATOMIC_WRITE || op == SIB_WR_FLUSH))
		return false;
	switch (op) {
	case IB_WR_SEND:
	case IB_WR_SEND_WITH_IMM:
		return true;
	case IB_WR_RDMA_WRITE:
	case IB_WR_RDMA_WRITE_WITH_IMM:
	case IB_WR_LOCAL_INV:
	case IB_WR_BIND_MW:
	case IB_WR_REG_MR:
		return type != IB_QPT_UD;
	case IB_WR_SEND_WITH_INV:
	case IB_WR_RDMA_READ:
	case IB_WR_ATOMIC_CMP_AND_SWP:
	case IB_WR_ATOMIC_FETCH_AND_ADD:
	case SIB_WR_ATOMIC_WRITE:
	case SIB_WR_FLUSH:
		return type == IB_QPT_RC;
	default:
		return false;
	}
}

/*
 * A FLUSH names its target in the WQE (wr.flush) and moves no data: one
 * or both placement types, a selectivity level, no SGE.
 */
static u8 sib_req_check_flush(struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	u8 type = w->wr.flush.type;

	if ((w->send_flags & IB_SEND_INLINE) || w->num_sge ||
	    !type || (type & ~(SIB_FLUSH_GLOBAL | SIB_FLUSH_PERSISTENT)) ||
	    w->wr.flush.level > SIB_FLUSH_MR)
		return IB_WC_LOC_QP_OP_ERR;
	s->len = 0;
	return 0;
}

/* Validate a WQE copy; returns 0 or the completion status to fail it with. */
static u8 sib_req_check(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	bool inl = w->send_flags & IB_SEND_INLINE;
	s64 len;

	if (!sib_op_allowed(qp, w->opcode))
		return IB_WC_LOC_QP_OP_ERR;
	/* A REG_MR's MR and page list are kernel objects. */
	if (w->opcode == IB_WR_REG_MR && sib_qp_is_user(qp))
		return IB_WC_LOC_QP_OP_ERR;
	if (sib_op_is_local(w->opcode))
		return 0;
	/* ATOMIC WRITE's 8 bytes travel in the WQE (wr.atomic.swap). */
	if (w->opcode == SIB_WR_ATOMIC_WRITE) {
		if (inl || w->num_sge)
			return IB_WC_LOC_QP_OP_ERR;
		s->len = 8;
		return 0;
	}
	if (w->opcode == SIB_WR_FLUSH)
		return sib_req_check_flush(s);
	if (inl) {
		if (w->inline_len > qp->max_inline ||
		    sib_op_is_rd_atomic(w->opcode))
			return IB_WC_LOC_QP_OP_ERR;
		len = w->inline_len;
	} else {
		if (w->num_sge > qp->max_send_sge)
			return IB_WC_LOC_QP_OP_ERR;
		len = sib_sgl_len(sib_swqe_sge(s), w->num_sge);
	}
	if (len < 0 || len > SIB_MAX_MSG_SZ)
		return IB_WC_LOC_LEN_ERR;
	if ((w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ||
	     w->opcode == IB_WR_ATOMIC_FETCH_AND_ADD) && len != 8)
		return IB_WC_LOC_LEN_ERR;
	if (sib_qp_type(qp) == IB_QPT_UD && len > qp->mtu)
		return IB_WC_LOC_LEN_ERR;
	if (sib_qp_type(qp) == IB_QPT_RAW_PACKET && sib_raw_check_len(qp, len))
		return IB_WC_LOC_LEN_ERR;
	s->len = len;
	return 0;
}

/*
 * Copy the next WQE out of the ring into the shadow and validate it.
 * Returns 0, -ENOENT when the ring has nothing new, -EINVAL when the
 * process corrupted the ring's producer index.
 */
static int sib_req_fetch(struct sib_qp *qp)
{
	/* Pairs with the other side's release of its index. */
	u32 prod = smp_load_acquire(&qp->sq.hdr->prod);
	u32 posted = prod - qp->sq.kidx;
	struct sib_swqe *s;

	if (posted > qp->sq.nslots)
		return -EINVAL;
	if (qp->req.fetched - qp->sq.kidx >= posted)
		return -ENOENT;

	s = sib_swqe_at(qp, qp->req.fetched);
	memset(s, 0, sizeof(*s));
	s->wr = sib_shadow_at(qp, qp->req.fetched);
	memcpy(s->wr, sib_queue_slot(&qp->sq, qp->req.fetched),
	       qp->sq.slot_size);
	s->status = sib_req_check(qp, s);
	s->state = SIB_SWQE_SENDING;
	if (!sib_op_is_local(s->wr->opcode)) {
		qp->req.ssn = sib_psn_add(qp->req.ssn, 1);
		s->ssn = qp->req.ssn;
		/*
		 * A message that takes no receive WQE still counts in the
		 * responder's MSN: move the limit past it, so that it does
		 * not use up a credit (as rdmavt does).
		 */
		if (!sib_op_needs_rwqe(s->wr->opcode))
			qp->req.lsn = sib_psn_add(qp->req.lsn, 1);
	}
	trace_sib_req_fetch(qp, qp->req.fetched, s);
	qp->req.fetched++;
	return 0;
}

static void sib_swqe_fail(struct sib_qp *qp, struct sib_swqe *s, u8 status)
{
	s->status = status;
	s->state = SIB_SWQE_DONE;
}

/* ---- local operations ---------------------------------------------------- */

static void sib_req_local(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	struct ib_pd *pd = qp->ib_qp.pd;
	int ret;

	if (w->opcode == IB_WR_BIND_MW) {
		ret = sib_mw_bind(qp->sdev, pd, sib_qpn(qp), w);
		s->status = ret ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	} else {
		ret = sib_mem_invalidate(qp->sdev, pd, sib_qpn(qp),
					 w->ex.invalidate_rkey, false);
		s->status = ret ? IB_WC_MW_BIND_ERR : IB_WC_SUCCESS;
	}
	s->state = SIB_SWQE_DONE;
}

/* ---- packets -------------------------------------------------------------- */

static u8 sib_send_opcode(struct sib_qp *qp, u8 op, bool first, bool last)
{
	u8 base = qp->ib_qp.qp_type == IB_QPT_UC ? IB_OPCODE_UC :
		  sib_qp_type(qp) == IB_QPT_UD ? IB_OPCODE_UD : IB_OPCODE_RC;
	bool imm = op == IB_WR_SEND_WITH_IMM || op == IB_WR_RDMA_WRITE_WITH_IMM;
	bool wr = op == IB_WR_RDMA_WRITE || op == IB_WR_RDMA_WRITE_WITH_IMM;

	/* The IETH goes in the last packet: ONLY or LAST, after FIRST, MIDDLE. */
	if (op == IB_WR_SEND_WITH_INV && last)
		return base + (first ? IB_OPCODE_SEND_ONLY_WITH_INVALIDATE :
			       IB_OPCODE_SEND_LAST_WITH_INVALIDATE);
	if (first && last)
		return base + (wr ? (imm ? IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE :
				     IB_OPCODE_RDMA_WRITE_ONLY) :
			       (imm ? IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE :
				IB_OPCODE_SEND_ONLY));
	if (first)
		return base + (wr ? IB_OPCODE_RDMA_WRITE_FIRST :
			       IB_OPCODE_SEND_FIRST);
	if (!last)
		return base + (wr ? IB_OPCODE_RDMA_WRITE_MIDDLE :
			       IB_OPCODE_SEND_MIDDLE);
	return base + (wr ? (imm ? IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE :
			     IB_OPCODE_RDMA_WRITE_LAST) :
		       (imm ? IB_OPCODE_SEND_LAST_WITH_IMMEDIATE :
			IB_OPCODE_SEND_LAST));
}

static void sib_fill_exts(struct sk_buff *skb, struct sib_send_wqe *w,
			  u32 total)
{
	u32 f = sib_pkt(skb)->flags;

	if (f & SIB_OP_RETH) {
		struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);

		reth->va = cpu_to_be64(w->wr.rdma.remote_addr);
		reth->rkey = cpu_to_be32(w->wr.rdma.rkey);
		reth->len = cpu_to_be32(total);
	}
	if (f & SIB_OP_IMMDT)
		*(__be32 *)sib_pkt_eth(skb, SIB_OP_IMMDT) = w->ex.imm_data;
	if (f & SIB_OP_IETH)
		*(__be32 *)sib_pkt_eth(skb, SIB_OP_IETH) =
			cpu_to_be32(w->ex.invalidate_rkey);
	sib_xrc_fill(skb, w);
}

/*
 * Copy @len payload bytes of @s at its send position into @buf. On
 * -EAGAIN (an ODP page is being brought in) the position stays, so that
 * the packet is built again from the same bytes.
 */
int sib_req_gather(struct sib_qp *qp, struct sib_swqe *s, void *buf, u32 len)
{
	struct sib_sgl_pos pos = s->pos;
	int ret;

	if (s->wr->send_flags & IB_SEND_INLINE) {
		memcpy(buf, (void *)(s->wr + 1) + s->sent, len);
		return 0;
	}
	ret = sib_sgl_copy(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
			   sib_swqe_sge(s), s->wr->num_sge, &s->pos, buf, len,
			   SIB_FROM_MEM);
	if (ret == -EAGAIN)
		s->pos = pos;
	return ret;
}

/*
 * A page of an ODP MR that an SGE names is being brought in (sib_odp.h):
 * stop the requester for a tick and try again, with the RNR wait's
 * timer (unless a real RNR wait runs already). Returns -EAGAIN.
 */
int sib_req_odp_wait(struct sib_qp *qp)
{
	sib_count(qp->sdev, SIB_CNT_ODP_REQ_WAITS);
	qp->req.rnr_wait = true;
	if (!timer_pending(&qp->rnr_timer))
		mod_timer(&qp->rnr_timer, jiffies + 1);
	return -EAGAIN;
}

static u8 sib_copy_status(int err)
{
	return err == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/* Move the next PSN on by @n; remember the furthest ever sent. */
static void sib_req_psn_next(struct sib_qp *qp, u32 n)
{
	qp->req.psn = sib_psn_add(qp->req.psn, n);
	if (sib_psn_cmp(qp->req.psn, qp->req.psn_max) > 0)
		qp->req.psn_max = qp->req.psn;
}

/*
 * How many packets the next one of @s may stand for: a local burst (see
 * sib_pkt_may_burst()) of new PSNs (a resend goes packet by packet),
 * within the window of unacknowledged PSNs.
 */
static u32 sib_req_burst(struct sib_qp *qp, struct sib_swqe *s)
{
	u32 used = (qp->req.psn - qp->comp.psn) & SIB_PSN_MASK;
	u32 room = used < SIB_MAX_INFLIGHT ? SIB_MAX_INFLIGHT - used : 1;
	u32 n = min(sib_burst_pkts(s->len - s->sent, qp->mtu), room);

	if (n <= 1 || qp->ib_qp.qp_type == IB_QPT_UD ||
	    (s->wr->send_flags & IB_SEND_INLINE) ||
	    qp->req.psn != qp->req.psn_max || !sib_pkt_may_burst(qp))
		return 1;
	return n;
}

/* Build the next packet of a SEND or RDMA WRITE: @npkts PSNs' worth. */
static struct sk_buff *sib_req_seg_pkt(struct sib_qp *qp, struct sib_swqe *s,
				       u32 npkts, int *err)
{
	u32 seg = min(npkts * qp->mtu, s->len - s->sent);
	bool first = !s->sent, last = s->sent + seg == s->len;
	bool rc = sib_qp_type(qp) == IB_QPT_RC;
	struct sk_buff *skb;
	bool ack;
	u8 op;

	op = sib_send_opcode(qp, s->wr->opcode, first, last);
	/*
	 * Ask for an ACK at the end of each message, and every
	 * SIB_ACK_EVERY packets within a long one, so that the window of
	 * unacknowledged PSNs keeps moving.
	 */
	ack = rc && (last || qp->req.noack + npkts >= SIB_ACK_EVERY);
	skb = sib_pkt_alloc_gather(qp, op, seg, npkts, qp->req.psn, ack, s,
				   err);
	if (skb)
		qp->req.noack = ack ? 0 : qp->req.noack + npkts;
	return skb;
}

/* Send the next packet of a SEND or RDMA WRITE. */
static int sib_req_send_seg(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	u32 npkts = sib_req_burst(qp, s);
	bool first = !s->sent, last;
	struct sk_buff *skb;
	int ret;

	skb = sib_req_seg_pkt(qp, s, npkts, &ret);
	if (!skb && ret == -E2BIG && npkts > 1) {
		npkts = 1;	/* too many fragments: single packets */
		skb = sib_req_seg_pkt(qp, s, npkts, &ret);
	}
	if (!skb) {
		if (ret == -ENOMEM)
			return ret;
		if (ret == -EAGAIN)
			return sib_req_odp_wait(qp);
		sib_swqe_fail(qp, s, sib_copy_status(ret));
		return 0;
	}
	last = sib_pkt(skb)->flags & SIB_OP_LAST;
	sib_fill_exts(skb, w, s->len);
	if (last && (w->send_flags & IB_SEND_SOLICITED)) {
		((struct sib_bth *)skb->data)->flags |= SIB_BTH_SE;
		sib_pkt(skb)->se = true;
	}
	if (first) {
		s->first_psn = qp->req.psn;
		s->begun = true;
	}
	if (!s->all_sent)
		s->last_psn = sib_psn_add(qp->req.psn, npkts - 1);
	s->sent += sib_pkt(skb)->paylen;
	sib_req_psn_next(qp, npkts);
	if (last) {
		s->state = sib_qp_type(qp) == IB_QPT_RC ?
			   SIB_SWQE_SENT : SIB_SWQE_DONE;
		s->all_sent = true;
	}
	sib_pkt_send(qp, skb);
	return 0;
}

static int sib_req_send_rd_atomic(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	struct sk_buff *skb;
	u32 npkts = 1;
	int ret;

	/* The answer lands in the SGEs: bring ODP pages in first. */
	ret = sib_sgl_fault_in(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
			       sib_swqe_sge(s), w->num_sge);
	if (ret == -EAGAIN)
		return sib_req_odp_wait(qp);
	if (ret) {
		sib_swqe_fail(qp, s, IB_WC_LOC_PROT_ERR);
		return 0;
	}

	if (w->opcode == IB_WR_RDMA_READ) {
		struct sib_reth *reth;

		skb = sib_pkt_alloc(qp, IB_OPCODE_RC_RDMA_READ_REQUEST, 0,
				    qp->req.psn, true);
		if (!skb)
			return -ENOMEM;
		/* A resumed READ asks for the rest only (s->rcvd onwards). */
		reth = sib_pkt_eth(skb, SIB_OP_RETH);
		reth->va = cpu_to_be64(w->wr.rdma.remote_addr + s->rcvd);
		reth->rkey = cpu_to_be32(w->wr.rdma.rkey);
		reth->len = cpu_to_be32(s->len - s->rcvd);
		npkts = max_t(u32, 1, DIV_ROUND_UP(s->len - s->rcvd, qp->mtu));
		sib_xrc_fill(skb, w);
	} else {
		struct sib_atmeth *a;
		u8 op = w->opcode == IB_WR_ATOMIC_CMP_AND_SWP ?
			IB_OPCODE_RC_COMPARE_SWAP : IB_OPCODE_RC_FETCH_ADD;

		skb = sib_pkt_alloc(qp, op, 0, qp->req.psn, true);
		if (!skb)
			return -ENOMEM;
		a = sib_pkt_eth(skb, SIB_OP_ATMETH);
		a->va = cpu_to_be64(w->wr.atomic.remote_addr);
		a->rkey = cpu_to_be32(w->wr.atomic.rkey);
		a->swap_add = cpu_to_be64(op == IB_OPCODE_RC_COMPARE_SWAP ?
					  w->wr.atomic.swap :
					  w->wr.atomic.compare_add);
		a->compare = cpu_to_be64(w->wr.atomic.compare_add);
		sib_xrc_fill(skb, w);
	}
	if (!s->rcvd)
		s->first_psn = qp->req.psn;
	s->last_psn = sib_psn_add(qp->req.psn, npkts - 1);
	sib_req_psn_next(qp, npkts);
	qp->req.rd_atomic++;
	s->state = SIB_SWQE_SENT;
	s->all_sent = true;
	sib_pkt_send(qp, skb);
	return 0;
}

/*
 * Send @skb, the one packet of @s, an ATOMIC WRITE or a FLUSH: it takes
 * the next PSN and a responder resource, and @s waits for its answer.
 */
static void sib_req_send_one(struct sib_qp *qp, struct sib_swqe *s,
			     struct sk_buff *skb)
{
	s->first_psn = qp->req.psn;
	s->last_psn = qp->req.psn;
	s->begun = true;
	sib_req_psn_next(qp, 1);
	qp->req.noack = 0;
	qp->req.rd_atomic++;
	s->state = SIB_SWQE_SENT;
	s->all_sent = true;
	sib_pkt_send(qp, skb);
}

/*
 * ATOMIC WRITE: one packet, a RETH and the 8 bytes. It takes a responder
 * resource (max_rd_atomic counts it); its answer, a READ response without
 * data, or an ACK past it retires it. Sent again whole after a go-back-N.
 */
static int sib_req_send_atomic_write(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	struct sib_reth *reth;
	struct sk_buff *skb;

	skb = sib_pkt_alloc(qp, SIB_OPCODE_RC_ATOMIC_WRITE, 8, qp->req.psn,
			    true);
	if (!skb)
		return -ENOMEM;
	reth = sib_pkt_eth(skb, SIB_OP_RETH);
	reth->va = cpu_to_be64(w->wr.atomic.remote_addr);
	reth->rkey = cpu_to_be32(w->wr.atomic.rkey);
	reth->len = cpu_to_be32(8);
	memcpy(skb->data + sib_pkt(skb)->hdr_len, &w->wr.atomic.swap, 8);
	s->sent = 8;
	sib_req_send_one(qp, s, skb);
	return 0;
}

/*
 * FLUSH: one packet, a FETH (placement type, selectivity level) and a
 * RETH, no payload. Like ATOMIC WRITE it takes a responder resource, and
 * its answer, a READ response without data, or an ACK past it retires it.
 */
static int sib_req_send_flush(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	struct sib_feth *feth;
	struct sib_reth *reth;
	struct sk_buff *skb;

	skb = sib_pkt_alloc(qp, SIB_OPCODE_RC_FLUSH, 0, qp->req.psn, true);
	if (!skb)
		return -ENOMEM;
	feth = sib_pkt_eth(skb, SIB_OP_FETH);
	feth->bits = cpu_to_be32(w->wr.flush.type |
				 w->wr.flush.level << SIB_FETH_SEL_SHIFT);
	reth = sib_pkt_eth(skb, SIB_OP_RETH);
	reth->va = cpu_to_be64(w->wr.flush.remote_addr);
	reth->rkey = cpu_to_be32(w->wr.flush.rkey);
	reth->len = cpu_to_be32(w->wr.flush.length);
	sib_req_send_one(qp, s, skb);
	return 0;
}

static bool sib_op_needs_rwqe(u8 op)
{
	return op == IB_WR_SEND || op == IB_WR_SEND_WITH_IMM ||
	       op == IB_WR_SEND_WITH_INV || op == IB_WR_RDMA_WRITE_WITH_IMM;
}

/*
 * End-to-end credits (IBA 9.7.7.2): a message that consumes a receive WQE
 * may start only if its SSN is within the limit the responder advertised,
 * or is the one "limited WQE" just beyond it. Other messages do not count.
 *
 * The limited WQE probes for new credits, but sent at once it mostly
 * meets an empty RQ and an RNR NAK. So the requester first waits: a
 * responder that advertised no credit sends an update when a receive is
 * posted (sib_resp_credit_update()). The local ACK timer runs meanwhile;
 * only if it expires without an update does the probe go
 * (@credit_probe, see sib_comp_timers()): a lost update, or a peer that
 * sends none, costs one timeout, never a deadlock. Waiting is not a
 * retry. The probe goes at once, as before, with no timer (timeout 0),
 * and while the responder has not advertised credits yet: the first
 * message of a QP is always the limited WQE (IBA 9.7.7.2).
 */
static bool sib_req_have_credit(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_req *r = &qp->req;

	if (sib_qp_type(qp) != IB_QPT_RC || r->credit_unlimited ||
	    !sib_op_needs_rwqe(s->wr->opcode) || s->sent ||
	    !sib_credits_enabled(qp) || sib_psn_cmp(s->ssn, r->lsn) <= 0)
		goto go;
	if (s->ssn == sib_psn_add(r->lsn, 1) &&
	    (!r->credit_known || r->credit_probe || !qp->attr.timeout)) {
		if (r->credit_probe) {
			sib_count(qp->sdev, SIB_CNT_CREDIT_PROBES);
			trace_sib_credit_probe(qp, s->ssn);
		}
		goto go;
	}
	if (!r->credit_wait) {
		r->credit_wait = true;
		sib_count(qp->sdev, SIB_CNT_CREDIT_STALLS);
		trace_sib_credit_stall(qp, s->ssn);
	}
	sib_timer_arm(qp);
	return false;
go:
	r->credit_wait = false;
	r->credit_probe = false;
	return true;
}

/* May the WQE at req.idx start or go on now? If not, what it waits for. */
static enum sib_req_wait sib_req_may_send(struct sib_qp *qp,
					  struct sib_swqe *s)
{
	u8 op = s->wr->opcode;
	u32 limit = max_t(u32, qp->attr.max_rd_atomic, 1);

	if (!s->sent && sib_qp_state(qp) == IB_QPS_SQD)
		return SIB_REQ_WAIT_SQD;
	if (qp->req.probe && qp->req.idx != qp->req.probe_idx)
		return SIB_REQ_WAIT_PROBE;
	if (!s->sent && (s->wr->send_flags & IB_SEND_FENCE) &&
	    qp->req.rd_atomic)
		return SIB_REQ_WAIT_FENCE;
	if (sib_op_takes_rd_res(op) && qp->req.rd_atomic >= limit)
		return SIB_REQ_WAIT_RD_ATOMIC;
	if (sib_qp_type(qp) != IB_QPT_RC)
		return SIB_REQ_GO;	/* no ACKs: no window, no credits */
	if (sib_psn_cmp(qp->req.psn,
			sib_psn_add(qp->comp.psn, SIB_MAX_INFLIGHT)) >= 0)
		return SIB_REQ_WAIT_WINDOW;
	if (!sib_req_have_credit(qp, s))
		return SIB_REQ_WAIT_CREDIT;
	return SIB_REQ_GO;
}

/*
 * Is the WQE at req.idx the oldest one not completed, once the completer
 * retired what it can? A local operation that must not pass the requests
 * before it waits for that. If the QP just failed, it is not.
 */
static bool sib_req_is_oldest(struct sib_qp *qp)
{
	if (qp->req.idx != qp->comp.idx)
		sib_comp_run(qp);
	return qp->req.idx == qp->comp.idx &&
	       sib_qp_state(qp) != IB_QPS_ERR;
}

/*
 * REG_MR: no request before it can use the registration it makes (the
 * MR is free until then), so it need not wait for them to complete; ULPs
 * post it just before the SEND that names its key. Only a fence waits, for
 * the READs and atomics before it. A REG_MR that fails must fail in order:
 * it waits to be the oldest, so that nothing after it is sent before the
 * QP enters the error state. False to stop the requester.
 */
static bool sib_req_reg_mr(struct sib_qp *qp, struct sib_swqe *s)
{
	int ret;

	if ((s->wr->send_flags & IB_SEND_FENCE) && qp->req.rd_atomic) {
		trace_sib_req_wait(qp, s, SIB_REQ_WAIT_FENCE);
		return false;
	}
	ret = sib_mr_fast_reg(qp->sdev, qp->ib_qp.pd, s->wr);
	if (ret && !sib_req_is_oldest(qp))
		return false;
	s->status = ret ? IB_WC_LOC_QP_OP_ERR : IB_WC_SUCCESS;
	s->state = SIB_SWQE_DONE;
	return true;
}

/* One step for the WQE at req.idx; false when the requester must stop. */
static bool sib_req_step(struct sib_qp *qp, struct sib_swqe *s)
{
	u8 op = s->wr->opcode;
	enum sib_req_wait wait;
	int ret;

	if (s->state == SIB_SWQE_DONE) {
		/* A REG_MR executed before a go-back-N went back past it. */
	} else if (s->status) {
		s->state = SIB_SWQE_DONE;
	} else if (op == IB_WR_REG_MR) {
		if (!sib_req_reg_mr(qp, s))
			return false;
	} else if (op == IB_WR_LOCAL_INV || op == IB_WR_BIND_MW) {
		if (!sib_req_is_oldest(qp))
			return false;	/* wait for what precedes it */
		sib_req_local(qp, s);
	} else {
		wait = sib_req_may_send(qp, s);
		if (wait != SIB_REQ_GO) {
			trace_sib_req_wait(qp, s, wait);
			return false;
		}
		if (sib_qp_type(qp) == IB_QPT_RAW_PACKET)
			ret = sib_raw_send(qp, s);
		else if (sib_wire_busy(qp))
			return false;
		else if (sib_qp_type(qp) == IB_QPT_UD)
			ret = sib_ud_send(qp, s);
		else if (sib_op_is_rd_atomic(op))
			ret = sib_req_send_rd_atomic(qp, s);
		else if (op == SIB_WR_ATOMIC_WRITE)
			ret = sib_req_send_atomic_write(qp, s);
		else if (op == SIB_WR_FLUSH)
			ret = sib_req_send_flush(qp, s);
		else
			ret = sib_req_send_seg(qp, s);
		if (ret)
			return false;	/* out of memory: try again later */
		sib_timer_arm(qp);
	}
	if (s->state != SIB_SWQE_SENDING)
		qp->req.idx++;
	return !s->status;
}

void sib_requester(struct sib_qp *qp)
{
	int budget = SIB_REQ_BUDGET;
	bool more = false;
	struct sib_swqe *s;
	u32 sent;
	int ret;

	lockdep_assert_held(&qp->engine);
	while (!qp->req.rnr_wait) {
		if (budget <= 0) {
			more = true;
			break;
		}
		if (qp->req.idx == qp->req.fetched) {
			ret = sib_req_fetch(qp);
			if (ret == -ENOENT)
				break;
			if (ret) {
				/* A WQE that no completion can name. */
				sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
				return;
			}
		}
		s = sib_swqe_at(qp, qp->req.idx);
		sent = s->sent;
		if (!sib_req_step(qp, s))
			break;
		/* A local burst counts for the packets it stands for. */
		budget -= max_t(u32, 1, (s->sent - sent) / qp->mtu);
	}
	sib_comp_run(qp);
	if (more)
		sib_qp_sched(qp);
}
