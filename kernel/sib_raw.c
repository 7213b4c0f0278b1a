// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: raw packet QPs (IB_QPT_RAW_PACKET) and flow steering.
 *
 * A raw packet QP has no transport: no AH, PSN or Q_Key, only a port. A
 * SEND WQE's SGEs hold one whole Ethernet frame, which the requester
 * gathers once into an skb and hands to the device's netdev with
 * dev_queue_xmit(), as a packet socket would; the frame is the process'
 * and is treated as hostile: it is only checked for length (at least an
 * Ethernet header, at most the MTU plus the header and one VLAN tag) and
 * the IP stack of a receiver parses it as it parses any frame off a wire.
 *
 * Frames reach a raw QP only through its flows (ib_core's create_flow).
 * While a device has at least one flow, an ETH_P_ALL packet_type bound to
 * its netdev sees every frame the netdev receives; the hook reads the
 * frame's key (struct sib_flow_key: MACs, VLAN, EtherType, IP addresses
 * and fields, TCP/UDP ports), finds the QPs whose flows match, and queues
 * a clone of the skb to each (one per QP, however many of its flows
 * match), whose engine copies the frame into a posted receive WQE. The
 * hook only looks: the frame goes on to the IP stack (and RoCEv2 frames
 * to sib's UDP socket) as before, as with IB_FLOW_ATTR_FLAGS_DONT_TRAP on
 * a NIC. Frames the raw QPs of a device send are also matched against
 * that device's own flows (on lo the netdev brings them back itself), as
 * a NIC's embedded switch loops them back.
 *
 * Which QPs take a frame: of the NORMAL flows that match, those of the
 * lowest priority value; every SNIFFER flow that matches; ALL_DEFAULT
 * flows when no NORMAL flow matched, MC_DEFAULT flows when none did and
 * the destination MAC is a multicast one.
 *
 * Locking. The device's raw.lock serialises the writers (create_flow,
 * destroy_flow, raw QP creation and destruction); the readers (the hook,
 * in softirq, and the send loopback, in a QP's engine) walk the QPs and
 * their flows under RCU and take a QP reference before queueing. A raw
 * QP's destruction takes it and its flows off the lists and waits for an
 * RCU grace period: no reader can then find the QP, and the references
 * taken before are waited for by sib_destroy_qp().
 */
#include <linux/if_vlan.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/dsfield.h>
#include <net/ipv6.h>
#include <rdma/uverbs_ioctl.h>

#include "sib_copy.h"
#include "sib_cq.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_raw.h"
#include "sib_req.h"
#include "sib_resp.h"
#include "sib_wq.h"

static inline struct sib_flow *to_sflow(struct ib_flow *ib_flow)
{
	return container_of(ib_flow, struct sib_flow, ib_flow);
}

/* ---- frame keys and matching -------------------------------------------- */

/*
 * Read the key of a frame. Its Ethernet header is @eth (in the linear
 * part), what follows the header starts at offset @off of @skb's data. A
 * VLAN tag that the receive path took out of the frame is in @skb's
 * vlan_tci. Fields that the frame does not have stay zero.
 */
static void sib_flow_key_of(struct sk_buff *skb, const struct ethhdr *eth,
			    int off, struct sib_flow_key *k)
{
	__be16 proto = eth->h_proto, _ports[2];
	const __be16 *ports;
	int l4off;

	memset(k, 0, sizeof(*k));
	memcpy(k->dmac, eth->h_dest, ETH_ALEN);
	memcpy(k->smac, eth->h_source, ETH_ALEN);
	if (skb_vlan_tag_present(skb)) {
		k->has_vlan = 1;
		k->vlan_tci = htons(skb_vlan_tag_get(skb));
	} else if (eth_type_vlan(proto)) {
		const struct vlan_hdr *vh;
		struct vlan_hdr _vh;

		vh = skb_header_pointer(skb, off, sizeof(_vh), &_vh);
		if (!vh) {
			k->ethertype = proto;
			return;
		}
		k->has_vlan = 1;
		k->vlan_tci = vh->h_vlan_TCI;
		proto = vh->h_vlan_encapsulated_proto;
		off += VLAN_HLEN;
	}
	k->ethertype = proto;

	if (proto == htons(ETH_P_IP)) {
		const struct iphdr *ip;
		struct iphdr _ip;

		ip = skb_header_pointer(skb, off, sizeof(_ip), &_ip);
		if (!ip || ip->version != 4 || ip->ihl < 5)
			return;
		k->ip4_src = ip->saddr;
		k->ip4_dst = ip->daddr;
		k->ip_proto = ip->protocol;
		k->tos = ip->tos;
		k->ttl = ip->ttl;
		k->ip4_flags = ntohs(ip->frag_off) >> 13;
		if (ip->frag_off & htons(IP_OFFSET))
			return;		/* a later fragment: no L4 header */
		l4off = off + ip->ihl * 4;
	} else if (proto == htons(ETH_P_IPV6)) {
		const struct ipv6hdr *ip6;
		struct ipv6hdr _ip6;

		ip6 = skb_header_pointer(skb, off, sizeof(_ip6), &_ip6);
		if (!ip6 || ip6->version != 6)
			return;
		memcpy(k->ip6_src, &ip6->saddr, 16);
		memcpy(k->ip6_dst, &ip6->daddr, 16);
		k->ip_proto = ip6->nexthdr;
		k->tos = ipv6_get_dsfield(ip6);
		k->ttl = ip6->hop_limit;
		k->flow_label = ip6_flowlabel(ip6);
		l4off = off + sizeof(*ip6);
	} else {
		return;
	}
	if (k->ip_proto != IPPROTO_TCP && k->ip_proto != IPPROTO_UDP)
		return;
	ports = skb_header_pointer(skb, l4off, sizeof(_ports), _ports);
	if (!ports)
		return;
	k->has_l4 = 1;
	k->sport = ports[0];
	k->dport = ports[1];
}

static bool sib_flow_match(const struct sib_flow *f,
			   const struct sib_flow_key *k)
{
	const u64 *a = (const u64 *)k, *v = (const u64 *)&f->key;
	const u64 *m = (const u64 *)&f->mask;
	unsigned int i;

	BUILD_BUG_ON(sizeof(*k) % sizeof(u64));
	for (i = 0; i < sizeof(*k) / sizeof(u64); i++)
		if ((a[i] ^ v[i]) & m[i])
			return false;
	return true;
}

/*
 * Does @qp take a frame of key @k? @best is the lowest priority value of
 * the NORMAL flows that match it (U32_MAX if none does).
 */
static bool sib_raw_qp_takes(struct sib_qp *qp, const struct sib_flow_key *k,
			     u32 best)
{
	struct sib_flow *f;

	list_for_each_entry_rcu(f, &qp->raw_flows, node) {
		switch (f->type) {
		case IB_FLOW_ATTR_NORMAL:
			if (f->priority == best && sib_flow_match(f, k))
				return true;
			break;
		case IB_FLOW_ATTR_SNIFFER:
			if (sib_flow_match(f, k))
				return true;
			break;
		case IB_FLOW_ATTR_ALL_DEFAULT:
			if (best == U32_MAX)
				return true;
			break;
		case IB_FLOW_ATTR_MC_DEFAULT:
			if (best == U32_MAX && is_multicast_ether_addr(k->dmac))
				return true;
			break;
		}
	}
	return false;
}

/*
 * Queue a clone of @skb, whose frame starts at offset @off (<= 0) of its
 * data, to @qp's input queue, and have its engine run.
 */
static void sib_raw_queue(struct sib_qp *qp, struct sk_buff *skb, int off)
{
	struct sib_dev *sdev = qp->sdev;
	struct sk_buff *nskb;

	if (!refcount_inc_not_zero(&qp->ref))
		return;
	if (skb_queue_len(&qp->rxq) >= SIB_RXQ_MAX) {
		sib_count(sdev, SIB_CNT_RX_QUEUE_FULL);
		sib_qp_put(qp);
		return;
	}
	nskb = skb_clone(skb, GFP_ATOMIC);
	if (!nskb) {
		sib_qp_put(qp);
		return;
	}
	if (off < 0)
		skb_push(nskb, -off);
	skb_dst_drop(nskb);
	nf_reset_ct(nskb);
	nskb->dev = NULL;
	memset(sib_pkt(nskb), 0, sizeof(struct sib_pkt));
	sib_pkt(nskb)->flags = SIB_OP_REQ;
	sib_pkt(nskb)->npkts = 1;
	sib_pkt(nskb)->qpn = sib_qpn(qp);
	sib_count(sdev, SIB_CNT_RCVD_PKTS);
	skb_queue_tail(&qp->rxq, nskb);
	sib_rx_wake(qp);	/* takes our reference */
}

/*
 * Hand a frame to the raw QPs whose flows take it. Its Ethernet header is
 * at offset @off of @skb's data, in the linear part. Any context.
 */
static void sib_raw_deliver(struct sib_dev *sdev, struct sk_buff *skb, int off)
{
	struct sib_flow_key k;
	struct sib_flow *f;
	enum ib_qp_state state;
	struct sib_qp *qp;
	u32 best = U32_MAX;

	sib_flow_key_of(skb, (const struct ethhdr *)(skb->data + off),
			off + ETH_HLEN, &k);
	rcu_read_lock();
	list_for_each_entry_rcu(qp, &sdev->raw.qps, raw_node)
		list_for_each_entry_rcu(f, &qp->raw_flows, node)
			if (f->type == IB_FLOW_ATTR_NORMAL &&
			    f->priority < best && sib_flow_match(f, &k))
				best = f->priority;
	list_for_each_entry_rcu(qp, &sdev->raw.qps, raw_node) {
		state = sib_qp_state(qp);
		if (state < IB_QPS_RTR || state == IB_QPS_ERR)
			continue;	/* receives nothing */
		if (sib_raw_qp_takes(qp, &k, best))
			sib_raw_queue(qp, skb, off);
	}
	rcu_read_unlock();
}

/*
 * The receive hook: every frame the netdev receives, while there are
 * flows. Frames the host sends (PACKET_OUTGOING, and multicast looped
 * back by the IP stack) are not received frames; a GRO or LRO aggregate is
 * not a frame of the wire.
 */
static int sib_raw_rcv(struct sk_buff *skb, struct net_device *ndev,
		       struct packet_type *pt, struct net_device *orig_dev)
{
	struct sib_dev *sdev = container_of(pt, struct sib_dev, raw.pt);

	if (skb->pkt_type != PACKET_OUTGOING &&
	    skb->pkt_type != PACKET_LOOPBACK &&
	    skb_mac_header_was_set(skb) &&
	    skb_mac_offset(skb) == -ETH_HLEN && !skb_is_gso(skb))
		sib_raw_deliver(sdev, skb, -ETH_HLEN);
	consume_skb(skb);
	return NET_RX_SUCCESS;
}

/* ---- flows ---------------------------------------------------------------- */

/*
 * Add a spec's value and mask for one field of the flow's key (@field,
 * @n bytes; its mask is at the same offset of the flow's mask): a bit
 * that an earlier spec already fixed to another value is a contradiction.
 */
static int sib_flow_set(struct sib_flow *f, void *field, const void *val,
			const void *vmask, size_t n)
{
	size_t off = (u8 *)field - (u8 *)&f->key;
	u8 *k = field, *m = (u8 *)&f->mask + off;
	const u8 *nv = val, *nm = vmask;
	size_t i;

	for (i = 0; i < n; i++)
		if ((k[i] ^ nv[i]) & m[i] & nm[i])
			return -EINVAL;
	for (i = 0; i < n; i++) {
		k[i] = (k[i] & ~nm[i]) | (nv[i] & nm[i]);
		m[i] |= nm[i];
	}
	return 0;
}

/* An exact value for a field: an IP spec's EtherType, an L4 spec's protocol. */
static int sib_flow_set_exact(struct sib_flow *f, void *field, const void *val,
			      size_t n)
{
	static const u8 ones[2] = { 0xff, 0xff };

	return sib_flow_set(f, field, val, ones, n);
}

static int sib_flow_eth(struct sib_flow *f, const struct ib_flow_spec_eth *s)
{
	const struct ib_flow_eth_filter *v = &s->val, *m = &s->mask;
	u8 one = 1;

	if (s->size < sizeof(*s))
		return -EINVAL;
	if (sib_flow_set(f, f->key.dmac, v->dst_mac, m->dst_mac, ETH_ALEN) ||
	    sib_flow_set(f, f->key.smac, v->src_mac, m->src_mac, ETH_ALEN) ||
	    sib_flow_set(f, &f->key.ethertype, &v->ether_type, &m->ether_type,
			 sizeof(f->key.ethertype)))
		return -EINVAL;
	if (!m->vlan_tag)
		return 0;
	/* A VLAN tag's mask asks for a tagged frame. */
	if (sib_flow_set(f, &f->key.vlan_tci, &v->vlan_tag, &m->vlan_tag,
			 sizeof(f->key.vlan_tci)) ||
	    sib_flow_set_exact(f, &f->key.has_vlan, &one, 1))
		return -EINVAL;
	return 0;
}

static int sib_flow_ipv4(struct sib_flow *f, const struct ib_flow_spec_ipv4 *s)
{
	const struct ib_flow_ipv4_filter *v = &s->val, *m = &s->mask;
	__be16 type = htons(ETH_P_IP);

	if (s->size < sizeof(*s))
		return -EINVAL;
	if (sib_flow_set_exact(f, &f->key.ethertype, &type,
			       sizeof(type)) ||
	    sib_flow_set(f, &f->key.ip4_src, &v->src_ip, &m->src_ip,
			 sizeof(f->key.ip4_src)) ||
	    sib_flow_set(f, &f->key.ip4_dst, &v->dst_ip, &m->dst_ip,
			 sizeof(f->key.ip4_dst)) ||
	    sib_flow_set(f, &f->key.ip_proto, &v->proto, &m->proto,
			 sizeof(f->key.ip_proto)) ||
	    sib_flow_set(f, &f->key.tos, &v->tos, &m->tos,
			 sizeof(f->key.tos)) ||
	    sib_flow_set(f, &f->key.ttl, &v->ttl, &m->ttl,
			 sizeof(f->key.ttl)) ||
	    sib_flow_set(f, &f->key.ip4_flags, &v->flags, &m->flags,
			 sizeof(f->key.ip4_flags)))
		return -EINVAL;
	return 0;
}

static int sib_flow_ipv6(struct sib_flow *f, const struct ib_flow_spec_ipv6 *s)
{
	const struct ib_flow_ipv6_filter *v = &s->val, *m = &s->mask;
	__be16 type = htons(ETH_P_IPV6);

	if (s->size < sizeof(*s))
		return -EINVAL;
	if (sib_flow_set_exact(f, &f->key.ethertype, &type,
			       sizeof(type)) ||
	    sib_flow_set(f, f->key.ip6_src, v->src_ip, m->src_ip, 16) ||
	    sib_flow_set(f, f->key.ip6_dst, v->dst_ip, m->dst_ip, 16) ||
	    sib_flow_set(f, &f->key.flow_label, &v->flow_label, &m->flow_label,
			 sizeof(f->key.flow_label)) ||
	    sib_flow_set(f, &f->key.ip_proto, &v->next_hdr, &m->next_hdr,
			 sizeof(f->key.ip_proto)) ||
	    sib_flow_set(f, &f->key.tos, &v->traffic_class, &m->traffic_class,
			 sizeof(f->key.tos)) ||
	    sib_flow_set(f, &f->key.ttl, &v->hop_limit, &m->hop_limit,
			 sizeof(f->key.ttl)))
		return -EINVAL;
	return 0;
}

static int sib_flow_l4(struct sib_flow *f, const struct ib_flow_spec_tcp_udp *s,
		       u8 proto)
{
	const struct ib_flow_tcp_udp_filter *v = &s->val, *m = &s->mask;
	u8 one = 1;

	if (s->size < sizeof(*s))
		return -EINVAL;
	if (sib_flow_set_exact(f, &f->key.ip_proto, &proto, 1) ||
	    sib_flow_set(f, &f->key.sport, &v->src_port, &m->src_port,
			 sizeof(f->key.sport)) ||
	    sib_flow_set(f, &f->key.dport, &v->dst_port, &m->dst_port,
			 sizeof(f->key.dport)))
		return -EINVAL;
	if ((m->src_port || m->dst_port) &&
	    sib_flow_set_exact(f, &f->key.has_l4, &one, 1))
		return -EINVAL;
	return 0;
}

/* One spec of a flow: -EOPNOTSUPP for a type (or inner header) sib lacks. */
static int sib_flow_spec(struct sib_flow *f, const union ib_flow_spec *spec)
{
	switch (spec->type) {
	case IB_FLOW_SPEC_ETH:
		return sib_flow_eth(f, &spec->eth);
	case IB_FLOW_SPEC_IPV4:
		return sib_flow_ipv4(f, &spec->ipv4);
	case IB_FLOW_SPEC_IPV6:
		return sib_flow_ipv6(f, &spec->ipv6);
	case IB_FLOW_SPEC_TCP:
		return sib_flow_l4(f, &spec->tcp_udp, IPPROTO_TCP);
	case IB_FLOW_SPEC_UDP:
		return sib_flow_l4(f, &spec->tcp_udp, IPPROTO_UDP);
	default:
		return -EOPNOTSUPP;
	}
}

static int sib_flow_parse(struct sib_flow *f, const struct ib_flow_attr *attr)
{
	const void *p = attr + 1;
	u32 left, i;
	int ret;

	if (attr->size < sizeof(*attr))
		return -EINVAL;
	left = attr->size - sizeof(*attr);
	for (i = 0; i < attr->num_of_specs; i++) {
		const union ib_flow_spec *spec = p;

		if (left < sizeof(spec->type) + sizeof(spec->size) ||
		    spec->size < sizeof(spec->type) + sizeof(spec->size) ||
		    spec->size > left)
			return -EINVAL;
		ret = sib_flow_spec(f, spec);
		if (ret)
			return ret;
		left -= spec->size;
		p += spec->size;
	}
	return 0;
}

/* A flow is gone from the lists: the hook goes with the last one. */
static void sib_raw_flow_gone(struct sib_dev *sdev)
{
	lockdep_assert_held(&sdev->raw.lock);
	WRITE_ONCE(sdev->raw.nflows, sdev->raw.nflows - 1);
	if (!sdev->raw.nflows && sdev->raw.pt_on) {
		dev_remove_pack(&sdev->raw.pt);	/* waits for the hook */
		sdev->raw.pt_on = false;
	}
}

/**
 * sib_create_flow() - ib_device_ops.create_flow: steer frames to a raw QP
 * @ib_qp:	the QP, a raw packet one
 * @attr:	the rule: its type, priority, port and specs
 * @udata:	the driver's part of the command; sib takes none
 *
 * ib_uverbs has checked CAP_NET_RAW (capable() up to 6.16; from 6.17
 * rdma_uattrs_has_raw_cap(), in the user namespace of the device's
 * network namespace), the port and the flags' range.
 *
 * Return: the flow, or an ERR_PTR(): -EOPNOTSUPP for a QP that is not a
 * raw packet one, a spec type, an inner spec, a rule type or a flag
 * (EGRESS) sib does not implement; -EINVAL for a malformed rule or one
 * that contradicts itself; -ENOSPC past SIB_MAX_FLOWS.
 */
struct ib_flow *sib_create_flow(struct ib_qp *ib_qp, struct ib_flow_attr *attr,
				struct ib_udata *udata)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	struct sib_dev *sdev = qp->sdev;
	struct sib_flow *f;
	unsigned int i;
	int ret;

	if (ib_qp->qp_type != IB_QPT_RAW_PACKET)
		return ERR_PTR(-EOPNOTSUPP);
	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);
	if (attr->port != 1)
		return ERR_PTR(-EINVAL);
	if (attr->flags & ~IB_FLOW_ATTR_FLAGS_DONT_TRAP)
		return ERR_PTR(-EOPNOTSUPP);
	switch (attr->type) {
	case IB_FLOW_ATTR_NORMAL:
	case IB_FLOW_ATTR_SNIFFER:
		break;
	case IB_FLOW_ATTR_ALL_DEFAULT:
	case IB_FLOW_ATTR_MC_DEFAULT:
		if (attr->num_of_specs)
			return ERR_PTR(-EINVAL);
		break;
	default:
		return ERR_PTR(-EOPNOTSUPP);
	}

	f = kzalloc(sizeof(*f), GFP_KERNEL);
	if (!f)
		return ERR_PTR(-ENOMEM);
	f->qp = qp;
	f->type = attr->type;
	f->priority = attr->priority;
	ret = sib_flow_parse(f, attr);
	if (ret)
		goto err;
	for (i = 0; i < sizeof(f->key); i++)
		((u8 *)&f->key)[i] &= ((u8 *)&f->mask)[i];

	mutex_lock(&sdev->raw.lock);
	if (sdev->raw.nflows >= SIB_MAX_FLOWS) {
		mutex_unlock(&sdev->raw.lock);
		ret = -ENOSPC;
		goto err;
	}
	list_add_tail_rcu(&f->node, &qp->raw_flows);
	WRITE_ONCE(sdev->raw.nflows, sdev->raw.nflows + 1);
	if (!sdev->raw.pt_on) {
		dev_add_pack(&sdev->raw.pt);
		sdev->raw.pt_on = true;
	}
	mutex_unlock(&sdev->raw.lock);
	return &f->ib_flow;

err:
	kfree(f);
	return ERR_PTR(ret);
}

/**
 * sib_destroy_flow() - ib_device_ops.destroy_flow
 * @ib_flow:	a flow of sib_create_flow()
 *
 * Return: 0.
 */
int sib_destroy_flow(struct ib_flow *ib_flow)
{
	struct sib_flow *f = to_sflow(ib_flow);
	struct sib_dev *sdev = to_sdev(ib_flow->device);

	mutex_lock(&sdev->raw.lock);
	if (!f->detached) {
		list_del_rcu(&f->node);
		sib_raw_flow_gone(sdev);
	}
	mutex_unlock(&sdev->raw.lock);
	kfree_rcu(f, rcu);
	return 0;
}

/* ---- QPs ------------------------------------------------------------------ */

/**
 * sib_raw_dev_init() - set up a device's raw packet state
 * @sdev:	the device, before it is registered
 */
void sib_raw_dev_init(struct sib_dev *sdev)
{
	mutex_init(&sdev->raw.lock);
	INIT_LIST_HEAD(&sdev->raw.qps);
	sdev->raw.pt.type = htons(ETH_P_ALL);
	sdev->raw.pt.dev = sdev->ndev;
	sdev->raw.pt.func = sib_raw_rcv;
	/* Not even a clone of what the host sends (dev_queue_xmit_nit()). */
	sdev->raw.pt.ignore_outgoing = true;
	ida_init(&sdev->raw.wq_ida);
	ida_init(&sdev->raw.tbl_ida);
}

/**
 * sib_raw_dev_fini() - free what sib_raw_dev_init() set up
 * @sdev:	the device; ib_core destroyed its objects
 */
void sib_raw_dev_fini(struct sib_dev *sdev)
{
	ida_destroy(&sdev->raw.wq_ida);
	ida_destroy(&sdev->raw.tbl_ida);
}

/**
 * sib_raw_qp_init() - publish a new raw packet QP to the receive side
 * @qp:		the QP, ready but for its flows
 */
void sib_raw_qp_init(struct sib_qp *qp)
{
	struct sib_dev *sdev = qp->sdev;

	INIT_LIST_HEAD(&qp->raw_flows);
	mutex_lock(&sdev->raw.lock);
	list_add_tail_rcu(&qp->raw_node, &sdev->raw.qps);
	mutex_unlock(&sdev->raw.lock);
}

/**
 * sib_raw_qp_destroy() - take a raw packet QP and its flows off the lists
 * @qp:		the QP being destroyed
 *
 * ib_core destroys a QP's flows first (they hold its use count), except
 * if it must tear everything down; a flow still there is detached here,
 * and freed by its own destroy_flow later. On return no reader of the
 * lists can find the QP any more.
 */
void sib_raw_qp_destroy(struct sib_qp *qp)
{
	struct sib_dev *sdev = qp->sdev;
	struct sib_flow *f, *next;

	mutex_lock(&sdev->raw.lock);
	list_del_rcu(&qp->raw_node);
	list_for_each_entry_safe(f, next, &qp->raw_flows, node) {
		list_del_rcu(&f->node);
		f->detached = true;
		sib_raw_flow_gone(sdev);
	}
	mutex_unlock(&sdev->raw.lock);
	synchronize_rcu();
}

/* ---- sending -------------------------------------------------------------- */

/**
 * sib_raw_check_len() - may a raw QP send a frame of @len bytes?
 * @qp:		the QP
 * @len:	the frame's length, the SGEs' sum
 *
 * Return: 0, or IB_WC_LOC_LEN_ERR for less than an Ethernet header or
 * more than the netdev's MTU with the header and one VLAN tag (an
 * untagged frame is checked again without the tag once it is gathered).
 */
u8 sib_raw_check_len(struct sib_qp *qp, u32 len)
{
	u32 max = READ_ONCE(qp->sdev->ndev->mtu) + ETH_HLEN + VLAN_HLEN;

	return len < ETH_HLEN || len > max ? IB_WC_LOC_LEN_ERR : 0;
}

/**
 * sib_raw_send() - send the frame of a raw QP's SEND WQE
 * @qp:		the QP, its @engine held
 * @s:		the WQE, checked by sib_req_check()
 *
 * Return: 0 (the WQE is done, maybe with an error status), or -ENOMEM or
 * -EAGAIN to try again later.
 */
int sib_raw_send(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_dev *sdev = qp->sdev;
	struct net_device *ndev = sdev->ndev;
	struct sk_buff *skb;
	struct ethhdr *eth;
	u32 max;
	int ret;

	lockdep_assert_held(&qp->engine);
	skb = alloc_skb(LL_RESERVED_SPACE(ndev) + s->len +
			ndev->needed_tailroom, GFP_KERNEL);
	if (!skb)
		return -ENOMEM;
	skb_reserve(skb, LL_RESERVED_SPACE(ndev));
	ret = sib_req_gather(qp, s, skb_put(skb, s->len), s->len);
	if (ret == -EAGAIN) {
		kfree_skb(skb);
		return sib_req_odp_wait(qp);
	}
	s->state = SIB_SWQE_DONE;
	if (ret) {
		kfree_skb(skb);
		s->status = ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
			    IB_WC_LOC_PROT_ERR;
		return 0;
	}
	eth = (struct ethhdr *)skb->data;
	max = READ_ONCE(ndev->mtu) + ETH_HLEN;
	if (eth_type_vlan(eth->h_proto))
		max += VLAN_HLEN;
	if (s->len > max) {
		kfree_skb(skb);
		s->status = IB_WC_LOC_LEN_ERR;
		return 0;
	}
	skb_reset_mac_header(skb);
	skb_set_network_header(skb, ETH_HLEN);
	skb->protocol = eth->h_proto;
	skb->dev = ndev;
	skb->ip_summed = CHECKSUM_NONE;
	skb_probe_transport_header(skb);

	/* The device's own flows see what it sends; lo brings it back. */
	if (!(ndev->flags & IFF_LOOPBACK) && READ_ONCE(sdev->raw.nflows))
		sib_raw_deliver(sdev, skb, 0);
	if (dev_queue_xmit(skb) == NET_XMIT_SUCCESS)
		sib_count(sdev, SIB_CNT_SENT_PKTS);
	else
		sib_count(sdev, SIB_CNT_SEND_ERRORS);
	return 0;
}

/* ---- receiving ------------------------------------------------------------ */

/**
 * sib_raw_scatter() - copy a frame into a receive WQE's buffers
 * @qp:		the raw packet QP that took it, for the keys' checks
 * @pd:		the PD the WQE's lkeys must belong to
 * @rwqe:	the WQE
 * @skb:	the frame, from its first byte; a VLAN tag the receive path
 *		took out is put back after the MACs
 * @byte_len:	set to the frame's length, the tag included
 *
 * Return: 0, or the completion status of a failed copy:
 * IB_WC_LOC_LEN_ERR if the frame does not fit, IB_WC_LOC_PROT_ERR for a
 * bad lkey.
 */
u8 sib_raw_scatter(struct sib_qp *qp, struct ib_pd *pd,
		   const struct sib_rwqe *rwqe, struct sk_buff *skb,
		   u32 *byte_len)
{
	struct sib_sgl_pos pos = {};
	bool vlan = skb_vlan_tag_present(skb);
	struct sib_dev *sdev = qp->sdev;
	u32 qpn = sib_qpn(qp);
	__be16 tag[2];
	int ret;

	*byte_len = skb->len + (vlan ? VLAN_HLEN : 0);
	if (!vlan) {
		ret = sib_sgl_copy_skb(sdev, pd, qpn, rwqe->sge, rwqe->num_sge,
				       &pos, skb, 0, skb->len, SIB_TO_MEM);
		goto out;
	}
	tag[0] = skb->vlan_proto;
	tag[1] = htons(skb_vlan_tag_get(skb));
	ret = sib_sgl_copy_skb(sdev, pd, qpn, rwqe->sge, rwqe->num_sge, &pos,
			       skb, 0, 2 * ETH_ALEN, SIB_TO_MEM);
	if (!ret)
		ret = sib_sgl_copy(sdev, pd, qpn, rwqe->sge, rwqe->num_sge,
				   &pos, tag, VLAN_HLEN, SIB_TO_MEM);
	if (!ret)
		ret = sib_sgl_copy_skb(sdev, pd, qpn, rwqe->sge, rwqe->num_sge,
				       &pos, skb, 2 * ETH_ALEN,
				       skb->len - 2 * ETH_ALEN, SIB_TO_MEM);
out:
	if (!ret)
		return 0;
	return ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR : IB_WC_LOC_PROT_ERR;
}

/**
 * sib_raw_recv() - put a frame into a raw QP's next receive WQE
 * @qp:		the QP, its @engine held
 * @skb:	the frame, from its first byte
 *
 * The completion's byte_len is the frame's length (sib_raw_scatter()). A
 * frame larger than the WQE's buffers completes it with
 * IB_WC_LOC_LEN_ERR, and the QP enters the error state, as mlx5's does
 * (IBA: a local length error is a local error of the receive queue).
 * Without a posted WQE the frame is dropped, as a NIC drops it. An RSS
 * QP has no receive queue: sib_rss_recv() steers the frame to a WQ.
 */
void sib_raw_recv(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_cqe cqe = {
		.opcode = SIB_WC_RECV,
		.qp_num = sib_qpn(qp),
	};
	struct sib_flow_key k;
	struct sib_rwqe rwqe;

	lockdep_assert_held(&qp->engine);
	if (skb->len < ETH_HLEN)
		return;
	if (qp->rss) {
		sib_flow_key_of(skb, (const struct ethhdr *)skb->data, ETH_HLEN,
				&k);
		sib_rss_recv(qp, skb, &k);
		return;
	}
	if (sib_rq_take_dgram(qp, &rwqe))
		return;

	cqe.wr_id = rwqe.wr_id;
	cqe.status = sib_raw_scatter(qp, qp->ib_qp.pd, &rwqe, skb,
				     &cqe.byte_len);
	if (sib_cq_post(sib_qp_rcq(qp), &cqe, false))
		sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
	else if (cqe.status)
		sib_qp_error(qp);
}
