// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the responder's RDMA READ and atomic side (rd_atomic, as IBA's
 * attributes name it). A READ is answered by responses sent a slice per
 * engine pass, an atomic by one atomic ACK, an ATOMIC WRITE or a FLUSH
 * by one READ response without payload; each is recorded in the QP's
 * responder resources (resp_res), from which a duplicate request is
 * answered again (IBA 9.7.5.2.2): a READ read again from memory, an
 * atomic's saved result replayed, an ATOMIC WRITE or FLUSH answered but
 * never executed twice.
 * sib_resp.c checks each request and hands these and duplicates here.
 *
 * Locking: everything here runs in the QP's engine, under its @engine
 * mutex, which guards the resources and the READ in progress; the MR
 * key is looked up again for each slice, so no MR reference is held
 * between passes.
 */
#include "sib_copy.h"
#include "sib_mkey.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_resp.h"
#include "sib_resp_credit.h"
#include "sib_resp_rd.h"
#include "sib_xrc.h"

/* ---- RDMA READ and atomics ----------------------------------------------------- */

static struct sib_resp_res *sib_res_new(struct sib_qp *qp)
{
	u32 n = sib_resp_nres(qp);
	struct sib_resp_res *res = &qp->resp_res[qp->resp.res_next % n];

	qp->resp.res_next = (qp->resp.res_next + 1) % n;
	return res;
}

/*
 * Record a one-PSN request (an atomic, an ATOMIC WRITE or a FLUSH) as
 * executed: a responder resource, for its duplicates, names its PSN,
 * @va and @rkey; the message is counted and the next PSN expected. The
 * caller adds what else a duplicate must match.
 */
static struct sib_resp_res *sib_res_one(struct sib_qp *qp,
					const struct sib_pkt *pkt, u64 va,
					u32 rkey)
{
	struct sib_resp_res *res = sib_res_new(qp);

	memset(res, 0, sizeof(*res));
	res->opcode = pkt->opcode;
	res->first_psn = pkt->psn;
	res->last_psn = pkt->psn;
	res->va = va;
	res->rkey = rkey;
	qp->resp.msn++;
	qp->resp.psn = sib_psn_add(pkt->psn, 1);
	return res;
}

/*
 * The MR the rest of the READ in progress comes from, with a reference:
 * the key checked against the PD of the QP, or for an XRC_TGT QP, of the
 * XRC SRQ the READ named, looked up again (it may be gone: see sib_xrc.c).
 */
static struct sib_mr *sib_resp_read_mr(struct sib_qp *qp, u64 *mr_va)
{
	struct sib_resp_read *rd = &qp->resp.rd;
	struct sib_srq *xsrq = NULL;
	struct sib_mr *mr;

	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT && !qp->resp.xsrq) {
		xsrq = sib_xrc_srq_get(qp, rd->srqn);
		if (!xsrq)
			return ERR_PTR(-EINVAL);
		qp->resp.xsrq = xsrq;
	}
	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), rd->rkey,
			rd->va + rd->off, rd->len - rd->off,
			SIB_ACC_REMOTE_READ, mr_va);
	if (xsrq)
		sib_xrc_resp_end(qp);
	return mr;
}

/*
 * Send the next READ responses of qp->resp.rd, at most SIB_READ_SLICE
 * PSNs of them: a READ of 16 MiB is 65536 packets at MTU 256, and no
 * pass may run that long. The pass that finds the READ unfinished leaves
 * its other input for later (sib_resp_read_busy()); the next pass goes
 * on here. The key is looked up again for each slice, so no MR
 * reference is held between passes (a stalled READ must not block
 * dereg_mr); if it no longer resolves, the rest is not sent, and the
 * requester's retry, a duplicate READ, gets the NAK (sib_resp_read_again()).
 */
static void sib_resp_read_slice(struct sib_qp *qp)
{
	struct sib_resp_read *rd = &qp->resp.rd;
	bool burst = sib_pkt_may_burst(qp);
	u32 left = SIB_READ_SLICE, start = rd->off;
	struct sib_mr *mr = NULL;
	struct sk_buff *skb;
	u64 mr_va = 0;

	if (rd->len > rd->off) {
		mr = sib_resp_read_mr(qp, &mr_va);
		if (IS_ERR(mr)) {
			rd->active = false;
			return;
		}
		burst = burst && sib_mr_has_pages(mr);
	}
	do {
		u32 npkts = burst ? sib_burst_pkts(rd->len - rd->off, qp->mtu) : 1;
		u32 seg = min(npkts * qp->mtu, rd->len - rd->off);
		bool first = rd->off == 0, last = rd->off + seg == rd->len;
		u8 op = first && last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY :
			first ? IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST :
			last ? IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST :
			IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE;

		if (sib_wire_busy(qp))
			break;		/* the rest after tx_timer */
		skb = sib_pkt_alloc_mr(qp, op, seg, npkts, rd->psn, mr,
				       mr_va + (rd->off - start));
		if (!skb) {
			rd->active = false;	/* the requester retries */
			break;
		}
		if (sib_pkt(skb)->flags & SIB_OP_AETH)
			((struct sib_aeth *)sib_pkt_eth(skb, SIB_OP_AETH))->smsn =
				sib_aeth_val(qp, sib_ack_syndrome(qp));
		sib_pkt_send(qp, skb);
		rd->off += seg;
		rd->psn = sib_psn_add(rd->psn, npkts);
		left -= min(left, npkts);
		/* Done once the LAST (or ONLY) went: a zero-length READ has one. */
		if (last)
			rd->active = false;
	} while (rd->active && left);
	if (mr)
		sib_mr_put(mr);
}

/*
 * Answer a READ: @va, @rkey and @len as the request asks (a duplicate may
 * ask for the rest only), from PSN @psn on.
 */
static void sib_resp_read_reply(struct sib_qp *qp, u64 va, u32 rkey, u32 len,
				u32 psn)
{
	struct sib_resp_read *rd = &qp->resp.rd;

	rd->va = va;
	rd->rkey = rkey;
	rd->len = len;
	rd->off = 0;
	rd->psn = psn;
	rd->srqn = qp->resp.xsrq ? qp->resp.xsrq->srq_num : 0;
	rd->active = true;
	sib_resp_read_slice(qp);
}

/*
 * Is the next input a duplicate READ request? The requester sends one
 * when it saw a response missing (or its timer fired), and it drops every
 * response after the gap: the rest of the READ in progress is of no use
 * to it, and the retried READ would wait for all of it (65536 packets
 * for 16 MiB at MTU 256), as long as the requester's retries may not last.
 */
static bool sib_resp_next_is_dup_read(struct sib_qp *qp)
{
	const struct sib_pkt *pkt;
	struct sk_buff *skb;
	unsigned long flags;
	bool dup = false;

	spin_lock_irqsave(&qp->rxq.lock, flags);
	skb = skb_peek(&qp->rxq);
	if (skb) {
		pkt = sib_pkt(skb);
		dup = (pkt->flags & SIB_OP_REQ) && (pkt->flags & SIB_OP_READ) &&
		      sib_psn_cmp(pkt->psn, qp->resp.psn) < 0;
	}
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	return dup;
}

/*
 * A READ's responses are still being sent: the next pass sends more
 * before it takes any other input, unless that input is a duplicate READ,
 * which ends this one and is answered next (sib_resp_read_again()). True
 * while the READ goes on.
 */
bool sib_resp_read_busy(struct sib_qp *qp)
{
	struct sib_resp_read *rd = &qp->resp.rd;
	enum ib_qp_state state;

	lockdep_assert_held(&qp->engine);
	if (!rd->active)
		return false;
	state = sib_qp_state(qp);
	if (state != IB_QPS_RTS && state != IB_QPS_SQD &&
	    state != IB_QPS_SQE && state != IB_QPS_RTR) {
		rd->active = false;
		return false;
	}
	if (sib_resp_next_is_dup_read(qp)) {
		sib_count(qp->sdev, SIB_CNT_READ_RESTARTS);
		rd->active = false;
		return false;
	}
	sib_resp_read_slice(qp);
	return rd->active;
}

/*
 * May the READ at @psn read @len bytes at @va through @rkey? If not, it is
 * NAKed (remote access error) and the QP goes to ERR. A duplicate READ is
 * executed again, so it is checked again: the MR may be gone since.
 */
static int sib_resp_read_key(struct sib_qp *qp, u32 psn, u64 va, u32 rkey,
			     u32 len)
{
	struct sib_mr *mr;
	u64 mr_va = 0;

	if (!len)
		return 0;
	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), rkey, va, len,
			SIB_ACC_REMOTE_READ, &mr_va);
	if (PTR_ERR(mr) == -EAGAIN)
		return sib_resp_odp_rnr(qp, psn);
	if (IS_ERR(mr)) {
		sib_resp_nak(qp, psn, SIB_NAK_REM_ACCESS_ERR, SIB_RESP_FATAL);
		return PTR_ERR(mr);
	}
	sib_mr_put(mr);
	return 0;
}

int sib_resp_read(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_resp_res *res;
	u32 len = be32_to_cpu(reth->len);
	int ret;

	/* C9-94, and the message size the port advertises. */
	if (len > SIB_MAX_MSG_SZ) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return -EINVAL;
	}
	ret = sib_resp_read_key(qp, pkt->psn, be64_to_cpu(reth->va),
				be32_to_cpu(reth->rkey), len);
	if (ret)
		return ret;
	res = sib_res_new(qp);
	res->opcode = pkt->opcode;
	res->va = be64_to_cpu(reth->va);
	res->rkey = be32_to_cpu(reth->rkey);
	res->len = len;
	res->first_psn = pkt->psn;
	res->last_psn = sib_psn_add(pkt->psn,
				    max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu)) - 1);
	qp->resp.msn++;
	/* The request takes the PSNs of its responses (IBA 9.7.5.1.1). */
	qp->resp.psn = sib_psn_add(res->last_psn, 1);
	sib_resp_read_reply(qp, res->va, res->rkey, len, pkt->psn);
	return 0;
}

static void sib_resp_atomic_ack(struct sib_qp *qp, u32 psn, u64 orig)
{
	struct sk_buff *skb;

	skb = sib_pkt_alloc(qp, IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, 0, psn, false);
	if (!skb)
		return;
	((struct sib_aeth *)sib_pkt_eth(skb, SIB_OP_AETH))->smsn =
		sib_aeth_val(qp, sib_ack_syndrome(qp));
	((struct sib_atmack *)sib_pkt_eth(skb, SIB_OP_ATMACK))->orig =
		cpu_to_be64(orig);
	sib_pkt_send(qp, skb);
}

int sib_resp_atomic(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_atmeth *a = sib_pkt_eth(skb, SIB_OP_ATMETH);
	struct sib_pkt *pkt = sib_pkt(skb);
	u64 va = be64_to_cpu(a->va), mr_va, orig;
	struct sib_resp_res *res;
	struct sib_mr *mr;
	int ret;

	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp),
			be32_to_cpu(a->rkey), va, 8, SIB_ACC_REMOTE_ATOMIC,
			&mr_va);
	if (PTR_ERR(mr) == -EAGAIN)
		return sib_resp_odp_rnr(qp, pkt->psn);
	if (IS_ERR(mr)) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_REM_ACCESS_ERR, SIB_RESP_FATAL);
		return PTR_ERR(mr);
	}
	/*
	 * The 8 bytes must be aligned (IBA 9.4.5), and the alignment that
	 * counts is that of the memory: through a zero-based window the
	 * packet's address is an offset, and the window may start at any
	 * byte of the MR. So the address the key resolves to is checked,
	 * and the MR checks the kernel address too.
	 */
	if (mr_va & 7) {
		sib_mr_put(mr);
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return -EINVAL;
	}
	if ((pkt->opcode & SIB_OPCODE_OP_MASK) == IB_OPCODE_COMPARE_SWAP)
		ret = sib_mr_atomic_cmp_swp(mr, mr_va, be64_to_cpu(a->compare),
					    be64_to_cpu(a->swap_add), &orig);
	else
		ret = sib_mr_atomic_fetch_add(mr, mr_va,
					      be64_to_cpu(a->swap_add), &orig);
	sib_mr_put(mr);
	if (ret == -EAGAIN)
		return sib_resp_odp_rnr(qp, pkt->psn);
	if (ret) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return ret;
	}

	res = sib_res_one(qp, pkt, va, be32_to_cpu(a->rkey));
	res->compare = be64_to_cpu(a->compare);
	res->swap_add = be64_to_cpu(a->swap_add);
	res->atomic_orig = orig;
	sib_resp_atomic_ack(qp, pkt->psn, orig);
	return 0;
}

/* The answer to an ATOMIC WRITE or a FLUSH: a READ response without data. */
static void sib_resp_empty_ack(struct sib_qp *qp, u32 psn)
{
	struct sk_buff *skb;

	skb = sib_pkt_alloc(qp, IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, 0, psn,
			    false);
	if (!skb)
		return;		/* the requester's timer asks again */
	((struct sib_aeth *)sib_pkt_eth(skb, SIB_OP_AETH))->smsn =
		sib_aeth_val(qp, sib_ack_syndrome(qp));
	sib_pkt_send(qp, skb);
}

/*
 * ATOMIC WRITE (IBA 1.5): 8 bytes stored at once at an aligned address,
 * after every request before it (the responder executes in PSN order). It
 * needs remote write rights, as a WRITE does, and takes a responder
 * resource, as a READ does: its answer is a READ response without data
 * (as rdma_rxe answers it too), and a duplicate is answered again from
 * the resource, never executed again.
 */
int sib_resp_atomic_write(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_resp_res *res;
	u64 mr_va, val;
	struct sib_mr *mr;
	int ret;

	if (be32_to_cpu(reth->len) != 8 || pkt->paylen != 8 ||
	    skb_copy_bits(skb, pkt->hdr_len, &val, 8)) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return -EINVAL;
	}
	mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp),
			be32_to_cpu(reth->rkey), be64_to_cpu(reth->va), 8,
			SIB_ACC_REMOTE_WRITE, &mr_va);
	if (PTR_ERR(mr) == -EAGAIN)
		return sib_resp_odp_rnr(qp, pkt->psn);
	if (IS_ERR(mr)) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_REM_ACCESS_ERR, SIB_RESP_FATAL);
		return PTR_ERR(mr);
	}
	/* Aligned in memory, as an atomic's target (sib_resp_atomic()). */
	ret = mr_va & 7 ? -EINVAL : sib_mr_atomic_write(mr, mr_va, val);
	sib_mr_put(mr);
	if (ret == -EAGAIN)
		return sib_resp_odp_rnr(qp, pkt->psn);
	if (ret) {
		sib_resp_nak(qp, pkt->psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return ret;
	}
	res = sib_res_one(qp, pkt, be64_to_cpu(reth->va),
			  be32_to_cpu(reth->rkey));
	res->len = 8;
	res->swap_add = val;
	sib_resp_empty_ack(qp, pkt->psn);
	return 0;
}

/* The QP's right for each placement type @plt asks for. */
static bool sib_resp_flush_rights_ok(struct sib_qp *qp, u32 plt)
{
	int acc = qp->attr.qp_access_flags;

	if ((plt & SIB_FLUSH_GLOBAL) && !(acc & SIB_ACCESS_FLUSH_GLOBAL))
		return false;
	if ((plt & SIB_FLUSH_PERSISTENT) &&
	    !(acc & SIB_ACCESS_FLUSH_PERSISTENT))
		return false;
	return true;
}

/*
 * Resolve a FLUSH's key for one placement type @acc: the range of the
 * RETH, or the whole MR. 0, or a negative errno (sib_mr_get()).
 */
static int sib_resp_flush_key(struct sib_qp *qp, struct sk_buff *skb,
			      u32 sel, enum sib_acc acc)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	u32 rkey = be32_to_cpu(reth->rkey);
	struct sib_mr *mr;
	u64 mr_va;

	if (sel == SIB_FLUSH_MR)
		mr = sib_mr_get_whole(qp->sdev, sib_resp_pd(qp), rkey, acc);
	else
		mr = sib_mr_get(qp->sdev, sib_resp_pd(qp), sib_qpn(qp), rkey,
				be64_to_cpu(reth->va), be32_to_cpu(reth->len),
				acc, &mr_va);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	sib_mr_put(mr);
	return 0;
}

/*
 * FLUSH (IBA 1.5): every write placed before it, in PSN order, is made
 * visible (placement type global) or persistent (persistent) for a range
 * of an MR or the whole MR, and then the FLUSH is answered, with a READ
 * response without data, from a responder resource as an ATOMIC WRITE
 * is. sib places writes with CPU stores into the MR's pages, which every
 * CPU and device that snoops the caches sees at once: making them
 * globally visible takes a full barrier, after the stores and before the
 * answer. sib has no persistent memory, so no MR grants the persistent
 * type (sib_mr.c refuses it) and asking for it is a remote access error.
 * The QP needs the right for each type asked for (Invalid Request
 * otherwise, as for the other rights); unknown types and levels are
 * Invalid Requests. A duplicate is answered again, not executed again
 * (executing it again would change nothing).
 */
int sib_resp_flush(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_feth *feth = sib_pkt_eth(skb, SIB_OP_FETH);
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	u32 bits = be32_to_cpu(feth->bits), psn = sib_pkt(skb)->psn;
	u32 plt = bits & SIB_FETH_PLT_MASK;
	u32 sel = (bits & SIB_FETH_SEL_MASK) >> SIB_FETH_SEL_SHIFT;
	struct sib_resp_res *res;
	int ret = 0;

	if (!plt || (plt & ~(SIB_FLUSH_GLOBAL | SIB_FLUSH_PERSISTENT)) ||
	    (bits & ~(SIB_FETH_PLT_MASK | SIB_FETH_SEL_MASK)) ||
	    sel > SIB_FLUSH_MR || !sib_resp_flush_rights_ok(qp, plt)) {
		sib_resp_nak(qp, psn, SIB_NAK_INVALID_REQ, SIB_RESP_FATAL);
		return -EINVAL;
	}
	if (plt & SIB_FLUSH_GLOBAL)
		ret = sib_resp_flush_key(qp, skb, sel, SIB_ACC_FLUSH_GLOBAL);
	if (!ret && (plt & SIB_FLUSH_PERSISTENT))
		ret = sib_resp_flush_key(qp, skb, sel,
					 SIB_ACC_FLUSH_PERSISTENT);
	if (ret == -EAGAIN)
		return sib_resp_odp_rnr(qp, psn);
	if (ret) {
		sib_resp_nak(qp, psn, SIB_NAK_REM_ACCESS_ERR, SIB_RESP_FATAL);
		return ret;
	}
	/* Every store before it is seen before its answer is. */
	smp_mb();
	res = sib_res_one(qp, sib_pkt(skb), be64_to_cpu(reth->va),
			  be32_to_cpu(reth->rkey));
	res->len = be32_to_cpu(reth->len);
	res->compare = bits;
	sib_resp_empty_ack(qp, psn);
	return 0;
}

static void sib_resp_read_again(struct sib_qp *qp, struct sib_resp_res *res,
				struct sk_buff *skb);

/* ---- duplicates (IBA 9.7.5.2.2) ---------------------------------------------- */

/*
 * Is this atomic request the one @res saved? A requester that sends
 * another atomic under an old PSN must not get the old result.
 */
static bool sib_resp_atomic_same(const struct sib_resp_res *res,
				 struct sk_buff *skb)
{
	struct sib_atmeth *a = sib_pkt_eth(skb, SIB_OP_ATMETH);

	return sib_pkt(skb)->psn == res->first_psn &&
	       be64_to_cpu(a->va) == res->va &&
	       be32_to_cpu(a->rkey) == res->rkey &&
	       be64_to_cpu(a->compare) == res->compare &&
	       be64_to_cpu(a->swap_add) == res->swap_add;
}

/* Is this ATOMIC WRITE the one @res recorded (same PSN, target, value)? */
static bool sib_resp_atomic_write_same(const struct sib_resp_res *res,
				       struct sk_buff *skb)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	struct sib_pkt *pkt = sib_pkt(skb);
	u64 val;

	return pkt->paylen == 8 &&
	       !skb_copy_bits(skb, pkt->hdr_len, &val, 8) &&
	       pkt->psn == res->first_psn &&
	       be64_to_cpu(reth->va) == res->va &&
	       be32_to_cpu(reth->rkey) == res->rkey && val == res->swap_add;
}

/*
 * The PSN to acknowledge a duplicate SEND or WRITE at @psn with: the
 * newest one executed (a coalesced ACK, IBA 9.7.5.2.2), but short of the
 * first READ or atomic after @psn. Only its response may acknowledge a
 * READ or atomic; an ACK naming or passing one is an implied NAK to an
 * IBA requester (one more go-back-N), and rdma_rxe 6.1's requester even
 * completes an atomic on a plain ACK with its PSN, without the result.
 * A requester that resends @psn has none of the READs and atomics after
 * it completed, so all of them are still in the resource table.
 */
static u32 sib_resp_dup_ack_psn(struct sib_qp *qp, u32 psn)
{
	u32 i, n = sib_resp_nres(qp);
	u32 ack = sib_psn_add(qp->resp.psn, SIB_PSN_MASK);

	for (i = 0; i < n; i++) {
		struct sib_resp_res *res = &qp->resp_res[i];

		if (!res->opcode)
			continue;
		if (sib_psn_cmp(res->first_psn, psn) > 0 &&
		    sib_psn_cmp(res->first_psn, ack) <= 0)
			ack = sib_psn_add(res->first_psn, SIB_PSN_MASK);
	}
	return ack;
}

void sib_resp_duplicate(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	u32 i, n = sib_resp_nres(qp);

	if (!(pkt->flags & SIB_OP_RD_ATOMIC)) {
		/* Already executed: acknowledge, never execute again. */
		if (pkt->ack_req)
			sib_resp_ack(qp, sib_resp_dup_ack_psn(qp, pkt->psn),
				     sib_ack_syndrome(qp));
		return;
	}
	for (i = 0; i < n; i++) {
		struct sib_resp_res *res = &qp->resp_res[i];

		if (res->opcode != pkt->opcode ||
		    sib_psn_cmp(pkt->psn, res->first_psn) < 0 ||
		    sib_psn_cmp(pkt->psn, res->last_psn) > 0)
			continue;
		if (pkt->flags & SIB_OP_ATOMIC) {
			/* Replay the saved result; never execute twice. */
			if (sib_resp_atomic_same(res, skb))
				sib_resp_atomic_ack(qp, pkt->psn,
						    res->atomic_orig);
		} else if (pkt->flags & SIB_OP_ATOMIC_WRITE) {
			if (sib_resp_atomic_write_same(res, skb))
				sib_resp_empty_ack(qp, pkt->psn);
		} else if (pkt->flags & SIB_OP_FLUSH) {
			if (pkt->psn == res->first_psn)
				sib_resp_empty_ack(qp, pkt->psn);
		} else {
			sib_resp_read_again(qp, res, skb);
		}
		return;
	}
	/* Not found: too old to replay. The requester will time out. */
}

/*
 * A duplicate READ: answer again, from memory. The requester may ask for
 * the rest of a READ only (from the PSN of its first missing response,
 * with the RETH moved on accordingly); the answer starts at that PSN and
 * must stay within the original READ's PSNs.
 */
static void sib_resp_read_again(struct sib_qp *qp, struct sib_resp_res *res,
				struct sk_buff *skb)
{
	struct sib_reth *reth = sib_pkt_eth(skb, SIB_OP_RETH);
	struct sib_pkt *pkt = sib_pkt(skb);
	u32 len = be32_to_cpu(reth->len);
	u32 npkts;

	if (len > res->len)
		return;		/* not a part of that READ: ignore */
	npkts = max_t(u32, 1, DIV_ROUND_UP(len, qp->mtu));
	if (sib_psn_cmp(sib_psn_add(pkt->psn, npkts - 1), res->last_psn) > 0)
		return;		/* not a part of that READ: ignore */
	if (sib_resp_read_key(qp, pkt->psn, be64_to_cpu(reth->va),
			      be32_to_cpu(reth->rkey), len))
		return;
	sib_resp_read_reply(qp, be64_to_cpu(reth->va), be32_to_cpu(reth->rkey),
			    len, pkt->psn);
}
