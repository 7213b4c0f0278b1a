// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: receiving RoCEv2 packets, the rxe_recv.c of sib. Packets come in
 * through the UDP tunnel socket of the netdev's namespace (sib_udp.c)
 * into sib_pkt_rcv().
 *
 * Every packet off the wire is hostile: sib_pkt_rcv() checks the IP and
 * UDP framing, the ICRC, the transport headers and lengths, and that the
 * destination QP exists and is connected to the sender, before it queues
 * the packet for the QP's engines. Each refusal is counted.
 *
 * The fault layer acts between those checks and the queueing, on the
 * wire's packets and the local path's alike (sib_rx_fault()): what it
 * lets through, at once or later, comes back to sib_deliver().
 *
 * Locking. sib_pkt_rcv() runs in softirq, under RCU. The destination QP
 * is held by a reference (sib_qp_get()), its @state_lock taken for the
 * peer check; the packet is queued under the input queue's own lock, and
 * the QP's engines never run here (sib_rx_wake()).
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "sib_capture.h"
#include "sib_icrc.h"
#include "sib_local.h"
#include "sib_mcast.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_recv.h"
#include "sib_trace.h"

static void sib_accept_wire(struct sib_dev *sdev, struct sk_buff *skb);

/* Where the fault layer sends packets it held back (any context). */
static void sib_deliver(struct sib_dev *sdev, struct sk_buff *skb,
			struct sib_pass *pass)
{
	if (sib_pkt(skb)->local)
		sib_accept_local(sdev, skb, pass);
	else
		sib_accept_wire(sdev, skb);
}

void sib_fault_deliver(struct sib_dev *sdev, struct sk_buff *skb)
{
	sib_deliver(sdev, skb, NULL);
}

/* Let the fault layer act on a received (or locally sent) packet. */
void sib_rx_fault(struct sib_dev *sdev, struct sk_buff *skb, u32 dir,
		  struct sib_pass *pass)
{
	struct sk_buff *extra;

	skb = sib_fault_apply(&sdev->fault, dir, skb, &extra, true);
	if (skb)
		sib_deliver(sdev, skb, pass);
	if (extra)
		sib_deliver(sdev, extra, pass);
}

/* The counter of each verdict (struct rdma_hw_stats, sib_verbs.c). */
static const unsigned int sib_rx_cnts[] = {
	[SIB_RX_ACCEPT]		= SIB_CNT_RCVD_PKTS,
	[SIB_RX_ICRC_ERROR]	= SIB_CNT_ICRC_ERRORS,
	[SIB_RX_HDR_ERROR]	= SIB_CNT_HDR_ERRORS,
	[SIB_RX_UNKNOWN_QPN]	= SIB_CNT_UNKNOWN_QPN,
	[SIB_RX_QUEUE_FULL]	= SIB_CNT_RX_QUEUE_FULL,
};

/**
 * sib_rx_cnt - the counter of a packet given a verdict
 * @v:	the verdict
 *
 * Return: the SIB_CNT_ index that counts such packets: rcvd_pkts for
 * SIB_RX_ACCEPT, the drop's reason otherwise.
 */
unsigned int sib_rx_cnt(enum sib_rx_verdict v)
{
	return sib_rx_cnts[v];
}

/**
 * sib_rx_drop - refuse a packet: count it, trace it, free it
 * @sdev:	the device that refuses it
 * @skb:	the packet (consumed)
 * @pkt:	its parsed headers, or NULL if they were not parsed yet
 * @v:		why, not SIB_RX_ACCEPT
 */
void sib_rx_drop(struct sib_dev *sdev, struct sk_buff *skb,
		 const struct sib_pkt *pkt, enum sib_rx_verdict v)
{
	unsigned int cnt = sib_rx_cnt(v);

	sib_count(sdev, cnt);
	trace_sib_pkt_drop(sdev, pkt, cnt);
	kfree_skb(skb);
}

/* ---- off the wire ---------------------------------------------------------- */

/*
 * The IP header in front of UDP must be plain: IPv4 without options or
 * IPv6 without extension headers, as the ICRC covers exactly those.
 */
static bool sib_rcv_ip_ok(struct sk_buff *skb)
{
	int ip_len = skb->data - skb_network_header(skb);

	if (skb->protocol == htons(ETH_P_IP))
		return ip_hdr(skb)->version == 4 &&
		       ip_len == sizeof(struct iphdr);
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_hdr(skb)->version == 6 &&
		       ip_len == sizeof(struct ipv6hdr);
	return false;
}

/* Does the packet come from, and go to, where @qp is connected? */
static bool sib_rcv_addr_ok(struct sk_buff *skb, const struct sib_av *av)
{
	if (skb->protocol == htons(ETH_P_IP)) {
		const struct iphdr *iph = ip_hdr(skb);

		return sib_av_is_v4(av) &&
		       !memcmp(&iph->saddr, av->dgid.raw + 12, 4) &&
		       !memcmp(&iph->daddr, av->sgid.raw + 12, 4);
	}
	return !sib_av_is_v4(av) &&
	       !memcmp(&ipv6_hdr(skb)->saddr, av->dgid.raw, 16) &&
	       !memcmp(&ipv6_hdr(skb)->daddr, av->sgid.raw, 16);
}

/*
 * May @qp take this packet? A connected QP only from its peer, and no
 * payload above its path MTU; a UD QP checks the Q_Key itself.
 */
static enum sib_rx_verdict sib_rcv_qp_check(struct sib_qp *qp,
					    struct sk_buff *skb)
{
	enum sib_rx_verdict v = SIB_RX_ACCEPT;
	unsigned long flags;

	/* A raw packet QP takes frames through its flows, not RoCEv2. */
	if (sib_qp_type(qp) == IB_QPT_RAW_PACKET)
		return SIB_RX_UNKNOWN_QPN;
	if (sib_qp_type(qp) == IB_QPT_UD)
		return sib_pkt(skb)->paylen > qp->mtu ? SIB_RX_HDR_ERROR :
		       SIB_RX_ACCEPT;
	spin_lock_irqsave(&qp->state_lock, flags);
	if (!sib_rcv_addr_ok(skb, &qp->av))
		v = SIB_RX_UNKNOWN_QPN;
	else if (sib_pkt(skb)->paylen > qp->mtu)
		v = SIB_RX_HDR_ERROR;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	return v;
}

/*
 * Check the framing and the ICRC of a packet whose data starts at the UDP
 * header, and strip both: on success the data starts at the BTH and ends
 * with the padded payload. The packet is not linearised: the IP, UDP and
 * transport headers are pulled into the linear part, the payload stays
 * where it is (page fragments of a veth peer's packet, say) until the
 * engines copy it into the target memory.
 */
static enum sib_rx_verdict sib_rcv_unwrap(struct sk_buff *skb)
{
	__le32 icrc;

	if (skb->len < sizeof(struct udphdr) + sizeof(struct sib_bth) +
		       SIB_ICRC_LEN ||
	    !pskb_may_pull(skb, sizeof(struct udphdr) + sizeof(struct sib_bth)) ||
	    !sib_rcv_ip_ok(skb))
		return SIB_RX_HDR_ERROR;
	if (skb_copy_bits(skb, skb->len - SIB_ICRC_LEN, &icrc, sizeof(icrc)))
		return SIB_RX_HDR_ERROR;
	if (le32_to_cpu(icrc) != sib_icrc(skb))
		return SIB_RX_ICRC_ERROR;
	__skb_pull(skb, sizeof(struct udphdr));
	if (pskb_trim(skb, skb->len - SIB_ICRC_LEN))
		return SIB_RX_HDR_ERROR;
	if (sib_pkt_parse(skb))
		return SIB_RX_HDR_ERROR;
	return SIB_RX_ACCEPT;
}

/**
 * sib_pkt_rcv - take a RoCEv2 packet off the wire
 * @sdev:	the device bound to the netdev it arrived on
 * @skb:	the packet, data at the UDP header (consumed)
 *
 * Called in softirq from the UDP tunnel socket (sib_udp.c), under RCU.
 * Queues the packet to its QP and has the QP's engines run, which never
 * happens here: in the transmitting engine's context if one of ours sent
 * the packet from this CPU (struct sib_pass), otherwise on sib_wq.
 */
void sib_pkt_rcv(struct sib_dev *sdev, struct sk_buff *skb)
{
	enum sib_rx_verdict v;

	sib_cap_wire_rx(sdev, skb);
	v = sib_rcv_unwrap(skb);
	if (v != SIB_RX_ACCEPT) {
		sib_rx_drop(sdev, skb, NULL, v);
		return;
	}
	sib_rx_fault(sdev, skb, SIB_FAULT_RX, NULL);
}

/* A packet whose framing, ICRC and headers are good: to its QP. */
static void sib_accept_wire(struct sib_dev *sdev, struct sk_buff *skb)
{
	enum sib_rx_verdict v;
	struct sib_qp *qp;

	if (sib_pkt(skb)->corrupt) {
		v = SIB_RX_ICRC_ERROR;
		goto drop;
	}
	if (sib_pkt(skb)->qpn == IB_MULTICAST_QPN) {
		sib_mcast_rcv(sdev, skb);
		return;
	}
	qp = sib_qp_get(sdev, sib_pkt(skb)->qpn);
	if (!qp) {
		v = SIB_RX_UNKNOWN_QPN;
		goto drop;
	}
	v = sib_rcv_qp_check(qp, skb);
	if (v == SIB_RX_ACCEPT && skb_queue_len(&qp->rxq) >= SIB_RXQ_MAX)
		v = SIB_RX_QUEUE_FULL;
	if (v != SIB_RX_ACCEPT) {
		sib_qp_put(qp);
		goto drop;
	}
	/* Keep the headers (UD reads the IP header); drop the rest. */
	skb_scrub_packet(skb, true);
	skb->dev = NULL;
	sib_count(sdev, SIB_CNT_RCVD_PKTS);
	trace_sib_pkt_recv(sdev, skb);
	skb_queue_tail(&qp->rxq, skb);
	sib_rx_wake(qp);
	return;

drop:
	sib_rx_drop(sdev, skb, sib_pkt(skb), v);
}
