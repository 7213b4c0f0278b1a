// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: where packets go, and RoCEv2 out. A packet (sib_pkt.c) between
 * QPs of the same device takes the local path (sib_local.c); which way a
 * packet goes is decided here, once per address vector (the QP's route
 * cache). To anyone else it goes as RoCEv2 (IBA annex
 * A17): UDP to port 4791 in IPv4 or IPv6, with the ICRC after the
 * payload, through the IP stack of the netdev's network namespace; the
 * neighbour layer resolves the next hop. The RoCEv2 packets of an engine
 * pass go out in batches (struct sib_pass), and the engines hold theirs
 * back while the receive backlog fills (sib_wire_busy()). Packets come
 * back through the UDP tunnel socket of that namespace (sib_udp.c) into
 * sib_pkt_rcv() (sib_recv.c).
 *
 * Locking. Packets are sent from the sending QP's engine, under its
 * @engine mutex, which guards its route cache; the routes themselves are
 * read under RCU. While packets go out, this CPU's sib_cpu_pass points at
 * the pass (preemption off), for the receive softirq that runs inside
 * the transmission.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <net/dst.h>
#include <net/ip.h>
#include <net/ip6_route.h>
#include <net/route.h>
#include <rdma/ib_cache.h>

#include "sib_capture.h"
#include "sib_icrc.h"
#include "sib_local.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_task.h"
#include "sib_trace.h"

/*
 * On veth, and between sib devices of one namespace, a packet that an
 * engine transmits is received in the softirq that runs inside the
 * transmitting call (when dev_queue_xmit() enables BHs again). The engines
 * never run in softirq, so a received packet would wake a worker, and a
 * busy-polling process would keep that worker off the CPU for up to a
 * scheduler tick. Instead, while an engine transmits, its CPU points at a
 * struct sib_pass (on the engine's stack, preemption off): the receive
 * path parks the QPs there, and the transmitting engine kicks them in its
 * own (process) context when its pass ends (or, outside a pass, when the
 * call returns), like the local path does.
 * Anything received outside such a window goes to the work queue.
 */
static DEFINE_PER_CPU(struct sib_pass *, sib_cpu_pass);

static void sib_tx_flush(struct sib_pass *d);

/**
 * sib_pass_tx - send the RoCEv2 packets a pass batched on @d
 * @d: the pass; the QPs its packets reach (in the softirq that
 *     runs inside the transmission) are parked on it
 *
 * Called at the end of each pass, with the QP's engine mutex held.
 */
void sib_pass_tx(struct sib_pass *d)
{
	if (d->ntx)
		sib_tx_flush(d);
}

/* Leave the QPs parked on @d to sib_wq, and drop their references. */
static void sib_pass_sched(struct sib_pass *d)
{
	unsigned int i;

	for (i = d->head; i < d->n; i++) {
		sib_qp_sched(d->qp[i]);
		sib_qp_put(d->qp[i]);
	}
	d->n = 0;
	d->head = 0;
}

/* Receive path (softirq): run @qp's engines soon; consumes the reference. */
void sib_rx_wake(struct sib_qp *qp)
{
	struct sib_pass *d = this_cpu_read(sib_cpu_pass);

	if (d && sib_pass_add(d, qp))
		return;
	sib_qp_sched(qp);
	sib_qp_put(qp);
}

/* ---- where packets go ------------------------------------------------------ */

bool sib_av_is_v4(const struct sib_av *av)
{
	if (av->network_type == RDMA_NETWORK_IPV4)
		return true;
	if (av->network_type == RDMA_NETWORK_IPV6)
		return false;
	return ipv6_addr_v4mapped((const struct in6_addr *)av->sgid.raw);
}

static void sib_route_drop(struct sib_route *r)
{
	dst_release(r->dst);
	r->dst = NULL;
	r->net = NULL;
}

/* Is @gid one of this device's GIDs? */
static bool sib_gid_is_ours(struct sib_dev *sdev, const union ib_gid *gid)
{
	const struct ib_gid_attr *attr;

	attr = rdma_find_gid_by_port(&sdev->ib_dev, gid,
				     IB_GID_TYPE_ROCE_UDP_ENCAP, 1, NULL);
	if (IS_ERR(attr))
		return false;
	rdma_put_gid_attr(attr);
	return true;
}

/*
 * Does a packet to @av stay on this device? On loopback always (nothing
 * else is reachable there); otherwise when the destination GID is one of
 * ours. Decided once per address vector, under the QP's engine mutex.
 */
bool sib_route_local(struct sib_qp *qp, const struct sib_av *av)
{
	struct sib_route *r = &qp->route;

	if (r->valid && r->network_type == av->network_type &&
	    !memcmp(&r->dgid, &av->dgid, sizeof(r->dgid)) &&
	    !memcmp(&r->sgid, &av->sgid, sizeof(r->sgid)))
		return r->local;

	sib_route_drop(r);
	r->dgid = av->dgid;
	r->sgid = av->sgid;
	r->network_type = av->network_type;
	r->local = (qp->sdev->ndev->flags & IFF_LOOPBACK) ||
		   !memcmp(&av->dgid, &av->sgid, sizeof(av->dgid)) ||
		   sib_gid_is_ours(qp->sdev, &av->dgid);
	r->valid = true;
	return r->local;
}

static struct dst_entry *sib_lookup4(struct net *net, struct net_device *ndev,
				     const struct sib_av *av)
{
	struct flowi4 fl4 = {
		.flowi4_oif = ndev->ifindex,
		.flowi4_proto = IPPROTO_UDP,
		.fl4_dport = htons(ROCE_V2_UDP_DPORT),
		.fl4_sport = htons(av->udp_sport),
	};
	struct rtable *rt;

	memcpy(&fl4.saddr, av->sgid.raw + 12, sizeof(fl4.saddr));
	memcpy(&fl4.daddr, av->dgid.raw + 12, sizeof(fl4.daddr));
	rt = ip_route_output_key(net, &fl4);
	return IS_ERR(rt) ? ERR_CAST(rt) : &rt->dst;
}

static struct dst_entry *sib_lookup6(struct net *net, struct net_device *ndev,
				     const struct sib_av *av, u32 *cookie)
{
	struct flowi6 fl6 = {
		.flowi6_oif = ndev->ifindex,
		.flowi6_proto = IPPROTO_UDP,
		.fl6_dport = htons(ROCE_V2_UDP_DPORT),
		.fl6_sport = htons(av->udp_sport),
	};
	struct dst_entry *dst;

	memcpy(&fl6.saddr, av->sgid.raw, sizeof(fl6.saddr));
	memcpy(&fl6.daddr, av->dgid.raw, sizeof(fl6.daddr));
	dst = sib_ip6_dst_lookup_flow(net, &fl6);
	if (IS_ERR(dst))
		return dst;
	if (dst->error) {
		int err = dst->error;

		dst_release(dst);
		return ERR_PTR(err);
	}
	*cookie = rt6_get_cookie((struct rt6_info *)dst);
	return dst;
}

/*
 * The route to a remote @av in @net, with a reference for the caller. The
 * route is cached in the QP (sib_route_local() has keyed the cache to
 * @av) until dst_check() says it is stale, or the netdev changed
 * namespace. Called under rcu_read_lock() and the QP's engine mutex.
 */
static struct dst_entry *sib_route_get(struct sib_qp *qp,
				       const struct sib_av *av, struct net *net)
{
	struct sib_route *r = &qp->route;
	struct dst_entry *dst;

	if (r->dst && r->net == net && dst_check(r->dst, r->cookie))
		return dst_clone(r->dst);
	sib_route_drop(r);
	r->cookie = 0;
	if (sib_av_is_v4(av))
		dst = sib_lookup4(net, qp->sdev->ndev, av);
	else
		dst = sib_lookup6(net, qp->sdev->ndev, av, &r->cookie);
	if (IS_ERR(dst))
		return dst;
	r->dst = dst;
	r->net = net;
	return dst_clone(dst);
}

/* ---- RoCEv2 encapsulation ------------------------------------------------- */

void sib_push_udp(struct sk_buff *skb, u16 sport)
{
	struct udphdr *uh = skb_push(skb, sizeof(*uh));

	skb_reset_transport_header(skb);
	uh->source = htons(sport);
	uh->dest = htons(ROCE_V2_UDP_DPORT);
	uh->len = htons(skb->len);
	uh->check = 0;		/* RoCEv2 over IPv4 and IPv6, as rdma_rxe */
}

static void sib_push_ip4(struct sk_buff *skb, const struct sib_av *av,
			 u8 ttl)
{
	struct iphdr *iph = skb_push(skb, sizeof(*iph));

	skb_reset_network_header(skb);
	memset(iph, 0, sizeof(*iph));
	iph->version = 4;
	iph->ihl = sizeof(*iph) >> 2;
	iph->tos = av->traffic_class;
	iph->tot_len = htons(skb->len);
	iph->frag_off = htons(IP_DF);
	iph->ttl = av->hop_limit ?: ttl;
	iph->protocol = IPPROTO_UDP;
	memcpy(&iph->saddr, av->sgid.raw + 12, sizeof(iph->saddr));
	memcpy(&iph->daddr, av->dgid.raw + 12, sizeof(iph->daddr));
	skb->protocol = htons(ETH_P_IP);
}

static void sib_push_ip6(struct sk_buff *skb, const struct sib_av *av,
			 u8 hop_limit)
{
	struct ipv6hdr *ip6h = skb_push(skb, sizeof(*ip6h));

	skb_reset_network_header(skb);
	ip6_flow_hdr(ip6h, av->traffic_class,
		     htonl(av->flow_label & IB_GRH_FLOWLABEL_MASK));
	ip6h->payload_len = htons(skb->len - sizeof(*ip6h));
	ip6h->nexthdr = IPPROTO_UDP;
	ip6h->hop_limit = av->hop_limit ?: hop_limit;
	memcpy(&ip6h->saddr, av->sgid.raw, sizeof(ip6h->saddr));
	memcpy(&ip6h->daddr, av->dgid.raw, sizeof(ip6h->daddr));
	skb->protocol = htons(ETH_P_IPV6);
}

/**
 * sib_push_ip - push the IP header of a RoCEv2 packet
 * @skb:	the packet, data at the UDP header
 * @av:		where it goes: IPv4 or IPv6, addresses, traffic class
 * @hop_limit:	the TTL or hop limit when @av has none (0)
 *
 * An IPv4 header leaves its identification and checksum zero, for the
 * caller to fill in.
 */
void sib_push_ip(struct sk_buff *skb, const struct sib_av *av, u8 hop_limit)
{
	if (sib_av_is_v4(av))
		sib_push_ip4(skb, av, hop_limit);
	else
		sib_push_ip6(skb, av, hop_limit);
}

/*
 * Make @skb (data at the BTH) ready for the wire to @av: the ICRC goes in
 * the tailroom sib_pkt_alloc() kept, or in the trailer fragment of a
 * packet of page fragments; UDP and IP go in its headroom; the route is
 * attached. Called with the QP's engine mutex held, in process context.
 * Returns 0, or an error (the packet is freed).
 */
static int sib_xmit_prep(struct sib_qp *qp, struct sk_buff *skb,
			 const struct sib_av *av)
{
	struct dst_entry *dst;
	struct net *net;
	bool corrupt;
	__le32 icrc;

	lockdep_assert_held(&qp->engine);
	rcu_read_lock();
	/* Stable under RCU: a netns move synchronises RCU before changing it. */
	net = dev_net(qp->sdev->ndev);
	dst = sib_route_get(qp, av, net);
	if (IS_ERR(dst)) {
		rcu_read_unlock();
		kfree_skb(skb);
		return PTR_ERR(dst);
	}
	corrupt = sib_pkt(skb)->corrupt;
	if (!sib_pkt(skb)->icrc_room)
		skb_put_zero(skb, SIB_ICRC_LEN);
	sib_push_udp(skb, av->udp_sport);
	if (sib_av_is_v4(av)) {
		sib_push_ip(skb, av, ip4_dst_hoplimit(dst));
		ip_select_ident(net, skb, NULL);	/* ip_local_out() sums it */
	} else {
		sib_push_ip(skb, av, ip6_dst_hoplimit(dst));
	}
	rcu_read_unlock();
	/* An injected corruption damages the ICRC, as a bad link would. */
	icrc = cpu_to_le32(sib_icrc(skb) ^ corrupt);
	skb_store_bits(skb, skb->len - SIB_ICRC_LEN, &icrc, sizeof(icrc));

	/* skb->cb becomes the IP layer's; sib_pkt is no longer needed. */
	memset(skb->cb, 0, sizeof(skb->cb));
	skb->ip_summed = CHECKSUM_NONE;
	skb->dev = dst->dev;
	skb_dst_set(skb, dst);
	return 0;
}

/*
 * Hand @n prepared packets to the IP stack, in order, with bottom halves
 * off: the receive softirq that veth (or a loopback) raises runs once,
 * for all of them, when they are back on. What it receives for our QPs
 * waits on @park until the engine pass that built the packets ends and
 * its QP's engines are released (sib_qp_drive(); or sib_xmit(), for a
 * packet sent outside a pass, leaves them to sib_wq):
 * the peer's engines then take the whole burst in one run, and can
 * coalesce their ACKs. Returns how many packets the stack refused.
 */
static unsigned int sib_tx_out(struct sib_pass *park,
			       struct sk_buff **skbs, unsigned int n)
{
	struct sib_pass *prev;
	unsigned int i, errs = 0;
	struct sk_buff *skb;
	int ret;

	rcu_read_lock();
	preempt_disable();
	prev = this_cpu_read(sib_cpu_pass);
	this_cpu_write(sib_cpu_pass, park);
	local_bh_disable();
	for (i = 0; i < n; i++) {
		skb = skbs[i];
		/*
		 * The route holds its device only while it is up: if it went
		 * away since sib_xmit_prep() (another CPU removed it while
		 * the pass went on), the route now names blackhole_netdev,
		 * which drops the packet. Read it again under RCU.
		 */
		skb->dev = skb_dst(skb)->dev;
		if (skb->protocol == htons(ETH_P_IP))
			ret = ip_local_out(dev_net(skb->dev), NULL, skb);
		else
			ret = ip6_local_out(dev_net(skb->dev), NULL, skb);
		if (net_xmit_eval(ret))
			errs++;
	}
	local_bh_enable();
	this_cpu_write(sib_cpu_pass, prev);
	preempt_enable();
	rcu_read_unlock();
	return errs;
}

static bool sib_wire_hold = true;
module_param_named(wire_hold, sib_wire_hold, bool, 0644);
MODULE_PARM_DESC(wire_hold,
		 "hold RoCEv2 packets back while this CPU's receive backlog is half full (default: on)");

/**
 * sib_wire_busy - must @qp leave its next RoCEv2 packets for later?
 * @qp: the sending QP, whose engine mutex the caller holds
 *
 * veth, and loopback between sib devices of one namespace, queue each
 * packet on the transmitting CPU's receive backlog (netif_rx()), which
 * drops what exceeds netdev_max_backlog. The receive softirq normally
 * empties it when sib_tx_out() enables bottom halves again, but once
 * ksoftirqd runs on this CPU, softirqs wait for it, and busy-polling
 * processes keep it off the CPU: an engine that goes on sending then
 * overflows the backlog, and a lossless link loses packets (each costs
 * a retransmission, a sequence NAK or an ACK timeout). So while the
 * backlog is half full, the requester and the READ responder stop (the
 * rest of the pass, the ACKs included, goes on) and tx_timer runs the
 * engines again a jiffy later, when softirqs had the CPU. Up to a
 * batch of packets already built still goes; half the backlog is
 * room for it.
 *
 * The backlogs are per CPU, so packets sent from two CPUs can overtake
 * each other, and the engines move between CPUs (a streaming doorbell
 * runs them on a worker, the next doorbell in the process): the peer
 * sees a PSN gap and NAKs a sequence error, which costs a go-back-N. So
 * the engines also wait while the backlog of the CPU that sent the
 * QP's last packet is not empty, unless that is this CPU (as TCP
 * changes a flow's transmit queue only when nothing of it is in flight,
 * skb->ooo_okay). The CPU may still change before the packets go: the
 * checks are hints, not reservations.
 *
 * Return: true if the caller must stop sending for now.
 */
bool sib_wire_busy(struct sib_qp *qp)
{
	unsigned int cpu = raw_smp_processor_id(), last = qp->tx_cpu;
	struct softnet_data *sd;

	lockdep_assert_held(&qp->engine);
	if (!READ_ONCE(sib_wire_hold))
		return false;
	if (sib_qp_type(qp) == IB_QPT_UD ?
	    qp->sdev->ndev->flags & IFF_LOOPBACK :
	    sib_route_local(qp, &qp->av))
		return false;
	sd = per_cpu_ptr(&softnet_data, cpu);
	if (skb_queue_len_lockless(&sd->input_pkt_queue) <
	    sib_netdev_max_backlog() / 2) {
		if (last == cpu || !cpu_online(last))
			return false;
		sd = per_cpu_ptr(&softnet_data, last);
		if (!skb_queue_len_lockless(&sd->input_pkt_queue) &&
		    !skb_queue_len_lockless(&sd->process_queue))
			return false;
	}
	if (!qp->tx_held)
		sib_count(qp->sdev, SIB_CNT_WIRE_TX_HELD);
	qp->tx_held = true;
	if (!timer_pending(&qp->tx_timer) && !READ_ONCE(qp->destroying))
		mod_timer(&qp->tx_timer, jiffies + 1);
	return true;
}

void sib_tx_timer(struct timer_list *t)
{
	struct sib_qp *qp = sib_timer_container_of(qp, t, tx_timer);

	sib_qp_sched(qp);
}

static unsigned int sib_wire_batch = SIB_TX_BATCH_MAX;
module_param_named(wire_batch, sib_wire_batch, uint, 0644);
MODULE_PARM_DESC(wire_batch,
		 "RoCEv2 packets of an engine pass sent together, 1-16 (1: one at a time; default 16)");

/* Send the packets batched on @d (process context, any time). */
static void sib_tx_flush(struct sib_pass *d)
{
	unsigned int n = d->ntx, errs;

	d->ntx = 0;
	errs = sib_tx_out(d, d->tx, n);
	if (n > 1)
		sib_count_n(d->tx_sdev, SIB_CNT_WIRE_TX_BATCHED, n);
	if (errs)
		sib_count_n(d->tx_sdev, SIB_CNT_SEND_ERRORS, errs);
}

/*
 * Put @skb (data at the BTH) on the wire to @av. Inside an engine pass,
 * the packet joins the pass' batch (struct sib_pass), sent when
 * wire_batch packets are ready or the pass ends; the packets of a long
 * message then cost one softirq run, one hand-off to the peer QP, per
 * batch instead of per packet. Outside a pass it goes at once. Called
 * with the QP's engine mutex held, in process context. Returns 0 or an
 * error; a batched packet the stack refuses later is counted then.
 */
static int sib_xmit(struct sib_qp *qp, struct sk_buff *skb,
		    const struct sib_av *av)
{
	unsigned int batch = clamp_t(unsigned int, READ_ONCE(sib_wire_batch),
				     1, SIB_TX_BATCH_MAX);
	struct sib_pass own, *d = qp->pass;
	int ret;

	ret = sib_xmit_prep(qp, skb, av);
	if (ret)
		return ret;
	sib_cap_wire_tx(qp->sdev, skb, av);
	qp->tx_cpu = raw_smp_processor_id();
	if (d && batch > 1) {
		if (d->ntx && d->tx_sdev != qp->sdev)
			sib_tx_flush(d);
		d->tx[d->ntx++] = skb;
		d->tx_sdev = qp->sdev;
		if (d->ntx >= batch)
			sib_tx_flush(d);
		return 0;
	}
	own.n = 0;
	own.head = 0;
	own.ntx = 0;
	ret = sib_tx_out(d ?: &own, &skb, 1) ? -ENOBUFS : 0;
	sib_pass_sched(&own);
	return ret;
}

/**
 * sib_pkt_send_av - send a packet to an address vector
 * @qp:		the sending QP, whose engine mutex the caller holds
 * @skb:	the packet, from sib_pkt_alloc(), data at the BTH
 * @av:		where it goes (the QP's own for RC/UC, an AH's for UD)
 *
 * To a QP of this device directly, to anyone else as RoCEv2. A packet the
 * IP stack cannot take (no route, no memory) is dropped and counted; the
 * QP's retransmission recovers.
 */
void sib_pkt_send_av(struct sib_qp *qp, struct sk_buff *skb,
		     const struct sib_av *av)
{
	struct sib_dev *sdev = qp->sdev;
	struct sk_buff *extra;

	lockdep_assert_held(&qp->engine);
	sib_count_n(sdev, SIB_CNT_SENT_PKTS, sib_pkt(skb)->npkts);
	if (sib_route_local(qp, av)) {
		trace_sib_pkt_send(qp, skb, true);
		sib_cap_local(sdev, skb, av);
		sib_deliver_local(qp, skb, av);
		return;
	}
	trace_sib_pkt_send(qp, skb, false);
	/* On the wire, transmit faults cannot hold packets back. */
	skb = sib_fault_apply(&sdev->fault, SIB_FAULT_TX, skb, &extra, false);
	if (skb && sib_xmit(qp, skb, av))
		sib_count(sdev, SIB_CNT_SEND_ERRORS);
	if (extra && sib_xmit(qp, extra, av))
		sib_count(sdev, SIB_CNT_SEND_ERRORS);
}

/*
 * Send a packet of a connected (RC or UC) QP to its peer. modify_qp
 * changes @qp->av with the engine mutex held as well as the state lock,
 * so the engines read it under their mutex alone, without a copy.
 */
void sib_pkt_send(struct sib_qp *qp, struct sk_buff *skb)
{
	sib_pkt_send_av(qp, skb, &qp->av);
}

/* The QP is being destroyed and its engines have stopped. */
void sib_net_qp_fini(struct sib_qp *qp)
{
	struct page_frag_cache *nc = &qp->route.trailer;

	sib_route_drop(&qp->route);
	qp->route.valid = false;
	/* Trailers still in flight hold references of their own. */
	sib_page_frag_cache_drain(nc);
}
