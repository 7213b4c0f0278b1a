// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the local path. Between QPs of the same device a packet is
 * delivered directly to the destination QP's input queue, never as
 * RoCEv2: after the checks that the wire would make (the destination is
 * connected to the sender, the payload fits its MTU), and through the
 * fault layer when faults are injected, which then acts for the sending
 * and the receiving side at once. The destination's engines run once
 * the sender's have let go (struct sib_pass). An ACK need not even be a
 * packet: the responder leaves it in the requester's local ACK register
 * (struct sib_local_ack).
 *
 * Locking. A packet or an ACK is sent from the sending QP's engine, with
 * its @engine mutex held; a packet the fault layer held back is accepted
 * later, from the fault layer's timer. The destination QP is held by a
 * reference (sib_qp_get()); its input queue's lock guards the queue and
 * its local ACK register, and its @state_lock its address for the peer
 * check.
 */
#include "sib_capture.h"
#include "sib_local.h"
#include "sib_mcast.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_recv.h"
#include "sib_task.h"
#include "sib_trace.h"

/*
 * Queue a packet that may enter @dst (the caller's reference, consumed)
 * and have @dst's engines run: once, when the sending engine lets go, if
 * @pass is the running pass' (see sib_qp_drive()), otherwise on sib_wq.
 * Never here: the sender's engines are held.
 */
static void sib_local_queue(struct sib_dev *sdev, struct sib_qp *dst,
			    struct sk_buff *skb, struct sib_pass *pass)
{
	if (skb_queue_len(&dst->rxq) >= SIB_RXQ_MAX) {
		sib_rx_drop(sdev, skb, sib_pkt(skb), SIB_RX_QUEUE_FULL);
		sib_qp_put(dst);
		return;
	}
	sib_count_n(sdev, SIB_CNT_RCVD_PKTS, sib_pkt(skb)->npkts);
	trace_sib_pkt_recv(sdev, skb);
	skb_queue_tail(&dst->rxq, skb);
	if (pass && sib_pass_add(pass, dst))
		return;
	sib_qp_sched(dst);
	sib_qp_put(dst);
}

/*
 * Hand a packet that the fault layer held back, or let through, to its
 * destination QP on this device. The packet was built by sib itself, so
 * its sib_pkt is already filled in, and its sender was checked before the
 * fault layer saw it (sib_deliver_local()).
 */
void sib_accept_local(struct sib_dev *sdev, struct sk_buff *skb,
		      struct sib_pass *pass)
{
	struct sib_qp *dst;

	if (sib_pkt(skb)->corrupt) {
		/* An injected corruption: the ICRC check would fail. */
		sib_rx_drop(sdev, skb, sib_pkt(skb), SIB_RX_ICRC_ERROR);
		return;
	}
	if (sib_pkt(skb)->qpn == IB_MULTICAST_QPN) {
		sib_mcast_rcv(sdev, skb);
		return;
	}
	dst = sib_qp_get(sdev, sib_pkt(skb)->qpn);
	if (!dst) {
		sib_rx_drop(sdev, skb, sib_pkt(skb), SIB_RX_UNKNOWN_QPN);
		return;
	}
	sib_local_queue(sdev, dst, skb, pass);
}

/*
 * Is @dst connected to @qp, sending to it by @av? A connected QP takes
 * packets only from the QP it is connected to: its destination QP number
 * is the sender's, and its address vector mirrors the sender's. The
 * local path obeys the wire's rules (sib_rcv_qp_check()), so that no
 * process can reach another's QPs, or a kernel consumer's, by aiming its
 * own QP at them. QP numbers are unique on the device, so the sender's
 * number is its identity. A datagram QP checks the Q_Key itself.
 */
static bool sib_local_peer_ok(struct sib_qp *qp, const struct sib_av *av,
			      struct sib_qp *dst)
{
	unsigned long flags;
	bool ok;

	lockdep_assert_held(&qp->engine);
	if (sib_qp_type(dst) == IB_QPT_RAW_PACKET)
		return false;	/* frames only, through its flows */
	if (sib_qp_type(dst) == IB_QPT_UD)
		return true;
	spin_lock_irqsave(&dst->state_lock, flags);
	ok = (dst->attr.dest_qp_num & SIB_QPN_MASK) == sib_qpn(qp) &&
	     !memcmp(&dst->av.dgid, &av->sgid, sizeof(av->sgid)) &&
	     !memcmp(&dst->av.sgid, &av->dgid, sizeof(av->dgid));
	spin_unlock_irqrestore(&dst->state_lock, flags);
	return ok;
}

/*
 * May @dst take @skb of @qp (to @av)? From its peer, no payload above its
 * path MTU (a local burst's length is the responder's to check).
 */
static enum sib_rx_verdict sib_local_check(struct sib_qp *qp,
					   const struct sib_av *av,
					   struct sib_qp *dst,
					   struct sk_buff *skb)
{
	const struct sib_pkt *pkt = sib_pkt(skb);

	if (!sib_local_peer_ok(qp, av, dst))
		return SIB_RX_UNKNOWN_QPN;
	if (pkt->npkts == 1 && pkt->paylen > READ_ONCE(dst->mtu))
		return SIB_RX_HDR_ERROR;
	return SIB_RX_ACCEPT;
}

/*
 * A packet of @qp to a QP of this device (to @av): checked as the wire
 * checks it, then delivered, through the fault layer if it acts (the
 * local path is both the sending and the receiving side).
 */
void sib_deliver_local(struct sib_qp *qp, struct sk_buff *skb,
		       const struct sib_av *av)
{
	struct sib_dev *sdev = qp->sdev;
	enum sib_rx_verdict v;
	struct sib_qp *dst;

	sib_pkt(skb)->local = true;
	if (sib_pkt(skb)->qpn != IB_MULTICAST_QPN) {
		dst = sib_qp_get(sdev, sib_pkt(skb)->qpn);
		v = dst ? sib_local_check(qp, av, dst, skb) :
		    SIB_RX_UNKNOWN_QPN;
		if (v != SIB_RX_ACCEPT) {
			sib_rx_drop(sdev, skb, sib_pkt(skb), v);
			if (dst)
				sib_qp_put(dst);
			return;
		}
		if (!READ_ONCE(sdev->fault.active) && !sib_pkt(skb)->corrupt) {
			sib_local_queue(sdev, dst, skb, qp->pass);
			return;
		}
		sib_qp_put(dst);
	}
	sib_rx_fault(sdev, skb, SIB_FAULT_TX | SIB_FAULT_RX, qp->pass);
}

/* ---- the local ACK register --------------------------------------------- */

static bool sib_local_acks = true;
module_param_named(local_acks, sib_local_acks, bool, 0644);
MODULE_PARM_DESC(local_acks,
		 "pass ACKs between QPs of one device without a packet (default: on)");

/* Leave the ACK in @dst's register if its input queue is empty. */
static bool sib_local_ack_put(struct sib_qp *dst, u32 psn, u32 smsn)
{
	struct sib_local_ack *l = &dst->lack;
	unsigned long flags;
	bool put = false;

	spin_lock_irqsave(&dst->rxq.lock, flags);
	if (skb_queue_empty(&dst->rxq)) {
		/* Cumulative: the highest PSN; the AETH is the newest. */
		if (!l->valid || sib_psn_cmp(psn, l->psn) > 0)
			l->psn = psn;
		l->smsn = smsn;
		l->valid = true;
		put = true;
	}
	spin_unlock_irqrestore(&dst->rxq.lock, flags);
	return put;
}

/**
 * sib_ack_local - pass an ACK to a QP of this device without a packet
 * @qp:		the responder's QP; its engine mutex is held
 * @psn:	the PSN acknowledged up to
 * @smsn:	the AETH (an ACK syndrome, not a NAK), host order
 *
 * See struct sib_local_ack. A packet goes instead when fault injection is on
 * (its faults act on packets), when the peer is not on this device, or
 * when the peer's input queue holds packets that the ACK must not pass.
 *
 * Return: true if the ACK was passed, false if the caller sends a packet.
 */
bool sib_ack_local(struct sib_qp *qp, u32 psn, u32 smsn)
{
	struct sib_dev *sdev = qp->sdev;
	struct sib_qp *dst;

	lockdep_assert_held(&qp->engine);
	if (!READ_ONCE(sib_local_acks) || READ_ONCE(sdev->fault.active) ||
	    !sib_route_local(qp, &qp->av) || sib_cap_listening(sdev))
		return false;
	dst = sib_qp_get(sdev, qp->attr.dest_qp_num & SIB_QPN_MASK);
	if (!dst)
		return false;
	/*
	 * As for a packet: only to the QP that @qp is connected to, and that
	 * is connected to @qp (a refusal sends a packet, which is refused and
	 * counted on its way).
	 */
	if (sib_qp_type(dst) != IB_QPT_RC ||
	    !sib_local_peer_ok(qp, &qp->av, dst) ||
	    !sib_local_ack_put(dst, psn, smsn)) {
		sib_qp_put(dst);
		return false;
	}
	sib_count(sdev, SIB_CNT_LOCAL_ACKS);
	if (qp->pass && sib_pass_add(qp->pass, dst))
		return true;
	sib_qp_sched(dst);
	sib_qp_put(dst);
	return true;
}
