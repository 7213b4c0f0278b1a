// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the capture device.
 *
 * On request ("echo 1 > /sys/class/infiniband/DEV/capture") a sib device
 * gets a netdev of its own, DEVmon, in its netdev's network namespace. It
 * is an Ethernet netdev that never sends anything anywhere: every packet
 * that the device sends or receives, on the wire and on the local path,
 * is shown to the packet sockets bound to it (tcpdump, Wireshark) as a
 * full frame: Ethernet, IPv4 or IPv6, UDP to port 4791, the IBA transport
 * headers, the payload, the pad and the ICRC.
 *
 * - A RoCEv2 packet is shown as it is: as sent (the IP checksum filled
 *   in, as the IP stack will), or as received, before any check.
 *   Ethernet addresses of a sent packet are the address vector's.
 * - A packet of the local path never had IP, UDP or an ICRC: they are
 *   made from the address vector as the wire would carry them (the
 *   QP's UDP source port, a valid IP checksum, a valid ICRC), shown
 *   once, when sent.
 *
 * A frame is a copy (GFP_ATOMIC; a failed allocation is counted as the
 * capture netdev's tx_dropped, the packet itself goes on), made only
 * while the netdev is up and a packet socket listens; it is passed to
 * dev_queue_xmit() on the capture netdev, whose transmit function counts
 * it and frees it: the packet sockets see it on the way.
 *
 * Lifetime: sib_dev.cap points at the netdev; it is set and cleared under
 * RTNL, and read under RCU. The netdev goes with "echo 0", with the sib
 * device (sib_cap_fini()), when the sib device follows its netdev to
 * another namespace, and when its namespace dies (the core unregisters
 * it; sib_cap_netdev_event() clears the pointer). It cannot move to
 * another namespace itself.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/etherdevice.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/rtnetlink.h>
#include <linux/udp.h>
#include <net/addrconf.h>
#include <net/ip.h>
#include <net/ipv6.h>

#include "sib_capture.h"
#include "sib_icrc.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"

/*
 * The largest frame a valid RoCEv2 packet makes: Ethernet, IPv6, UDP, the
 * largest IBA header set and ICRC (SIB_ROCE_HDR_ROOM), 4096 bytes of
 * payload and its pad. A longer one is not shown but counted as dropped:
 * a hostile datagram, which costs no copy, or a local burst made before
 * the listener came.
 */
#define SIB_CAP_MAX	(ETH_HLEN + SIB_ROCE_HDR_ROOM + 4096 + 3)

/* Default hop limit of a synthesised local packet whose AV has none. */
#define SIB_CAP_TTL	64

/**
 * struct sib_cap_priv - the capture netdev's private part
 * @sdev:	its sib device; valid while the netdev is registered (the
 *		device unregisters it before it goes, under RTNL)
 * @pkts:	frames shown
 * @bytes:	their bytes
 * @dropped:	frames not shown: no memory, or longer than SIB_CAP_MAX
 *
 * The counters are atomic: any CPU's engines and softirqs add to them.
 */
struct sib_cap_priv {
	struct sib_dev *sdev;
	atomic64_t pkts;
	atomic64_t bytes;
	atomic64_t dropped;
};

static netdev_tx_t sib_cap_xmit(struct sk_buff *skb, struct net_device *dev)
{
	struct sib_cap_priv *priv = netdev_priv(dev);

	atomic64_inc(&priv->pkts);
	atomic64_add(skb->len, &priv->bytes);
	consume_skb(skb);
	return NETDEV_TX_OK;
}

static void sib_cap_stats(struct net_device *dev,
			  struct rtnl_link_stats64 *s)
{
	struct sib_cap_priv *priv = netdev_priv(dev);

	s->tx_packets = atomic64_read(&priv->pkts);
	s->tx_bytes = atomic64_read(&priv->bytes);
	s->tx_dropped = atomic64_read(&priv->dropped);
}

static const struct net_device_ops sib_cap_ops = {
	.ndo_start_xmit = sib_cap_xmit,
	.ndo_get_stats64 = sib_cap_stats,
};

static void sib_cap_setup(struct net_device *dev)
{
	ether_setup(dev);
	dev->netdev_ops = &sib_cap_ops;
	dev->needs_free_netdev = true;
	dev->flags |= IFF_NOARP;
	dev->flags &= ~IFF_MULTICAST;
	dev->priv_flags |= IFF_NO_QUEUE;
	sib_netdev_set_netns_local(dev);
	sib_netdev_set_lltx(dev);	/* the counters are atomic */
	dev->min_mtu = ETH_MIN_MTU;
	dev->max_mtu = ETH_MAX_MTU;
	dev->mtu = ETH_MAX_MTU;
	eth_hw_addr_random(dev);
}

/*
 * The netdev must show sib's frames only: no IPv6 link-local address, so
 * no router solicitation or neighbour discovery of its own. Under RTNL.
 */
static void sib_cap_no_addrconf(struct net_device *dev)
{
#if IS_ENABLED(CONFIG_IPV6)
	struct inet6_dev *idev = __in6_dev_get(dev);

	if (idev)
		idev->cnf.addr_gen_mode = IN6_ADDR_GEN_MODE_NONE;
#endif
}

/* ---- frames -------------------------------------------------------------- */

/*
 * The capture netdev of @sdev if a packet socket bound to it listens
 * (RCU). Sockets bound to every netdev ("tcpdump -i any", DHCP clients,
 * lldpd, any process in a network namespace of its own) do not count:
 * they would make every packet of every device pay for a copy.
 */
static struct net_device *sib_cap_dev(struct sib_dev *sdev)
{
	struct net_device *mon = rcu_dereference(sdev->cap);

	if (!mon || !netif_running(mon) || list_empty(&mon->ptype_all))
		return NULL;
	return mon;
}

bool __sib_cap_listening(struct sib_dev *sdev)
{
	bool on;

	rcu_read_lock();
	on = sib_cap_dev(sdev);
	rcu_read_unlock();
	return on;
}

/* A frame of @len bytes with room for all headers in front of @len. */
static struct sk_buff *sib_cap_alloc(struct net_device *mon,
				     unsigned int head, unsigned int len)
{
	struct sib_cap_priv *priv = netdev_priv(mon);
	struct sk_buff *skb = NULL;

	if (head + len <= SIB_CAP_MAX)
		skb = alloc_skb(NET_IP_ALIGN + head + len, GFP_ATOMIC);
	if (!skb) {
		atomic64_inc(&priv->dropped);
		return NULL;
	}
	skb_reserve(skb, NET_IP_ALIGN + head);
	return skb;
}

/* Put the Ethernet header in front of @skb (data at the IP header). */
static void sib_cap_push_eth(struct sk_buff *skb, const u8 *dst,
			     const u8 *src)
{
	struct ethhdr *eth;
	bool v4 = (skb->data[0] >> 4) == 4;

	skb_reset_network_header(skb);
	eth = skb_push(skb, ETH_HLEN);
	skb_reset_mac_header(skb);
	ether_addr_copy(eth->h_dest, dst);
	ether_addr_copy(eth->h_source, src);
	eth->h_proto = htons(v4 ? ETH_P_IP : ETH_P_IPV6);
	skb->protocol = eth->h_proto;
}

/* Show @skb (data at the Ethernet header) on @mon; consumes it. */
static void sib_cap_show(struct net_device *mon, struct sk_buff *skb)
{
	skb->dev = mon;
	dev_queue_xmit(skb);
}

/*
 * The transport part of a local packet as the wire carries it: headers
 * and payload, then the pad (which a packet of page fragments has not)
 * counted in the BTH, then room for the ICRC.
 */
static int sib_cap_put_ib(struct sk_buff *skb, struct sk_buff *pkt)
{
	const struct sib_pkt *p = sib_pkt(pkt);
	u32 pad = (4 - (p->paylen & 3)) & 3;
	unsigned int len = p->hdr_len + p->paylen;
	struct sib_bth *bth = skb_put(skb, len);

	if (skb_copy_bits(pkt, 0, bth, len))
		return -EINVAL;
	skb_put_zero(skb, pad + SIB_ICRC_LEN);
	bth->flags = (bth->flags & ~SIB_BTH_PAD_MASK) |
		     (pad << SIB_BTH_PAD_SHIFT);
	return 0;
}

/**
 * __sib_cap_local - show a packet of the local path
 * @sdev:	the device
 * @skb:	the packet, data at the BTH, its sib_pkt filled in; not
 *		changed
 * @av:		where it goes (its source and destination GIDs, UDP source
 *		port, traffic class, flow label and hop limit make the
 *		headers)
 *
 * Called by the sending engine (process context, engine mutex held).
 */
void __sib_cap_local(struct sib_dev *sdev, struct sk_buff *skb,
		     const struct sib_av *av)
{
	const struct sib_pkt *p = sib_pkt(skb);
	bool v4 = sib_av_is_v4(av);
	unsigned int head = ETH_HLEN + sizeof(struct udphdr) +
			    (v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr));
	struct net_device *mon;
	struct sk_buff *frame;
	__le32 icrc;

	rcu_read_lock();
	mon = sib_cap_dev(sdev);
	if (!mon)
		goto out;
	frame = sib_cap_alloc(mon, head,
			      p->hdr_len + p->paylen + 3 + SIB_ICRC_LEN);
	if (!frame)
		goto out;
	if (sib_cap_put_ib(frame, skb)) {
		kfree_skb(frame);
		goto out;
	}
	sib_push_udp(frame, av->udp_sport);
	sib_push_ip(frame, av, SIB_CAP_TTL);
	if (v4)
		ip_send_check(ip_hdr(frame));
	icrc = cpu_to_le32(sib_icrc(frame));
	memcpy(skb_tail_pointer(frame) - SIB_ICRC_LEN, &icrc, sizeof(icrc));
	sib_cap_push_eth(frame, av->dmac, sdev->ndev->dev_addr);
	sib_cap_show(mon, frame);
out:
	rcu_read_unlock();
}

/*
 * A copy of the RoCEv2 packet @pkt from its IP header on, options and
 * extension headers included; its data starts at the IP header (sent) or
 * after it (received), the IP header being in its linear part. NULL, and
 * counted as dropped, if @mon takes no frame now.
 */
static struct sk_buff *sib_cap_copy(struct net_device *mon,
				    struct sk_buff *pkt)
{
	struct sib_cap_priv *priv = netdev_priv(mon);
	int nh = -skb_network_offset(pkt);
	struct sk_buff *frame;

	if (nh < 0) {
		atomic64_inc(&priv->dropped);
		return NULL;
	}
	/* sib_cap_alloc() refuses, and counts, a frame over SIB_CAP_MAX. */
	frame = sib_cap_alloc(mon, ETH_HLEN, nh + pkt->len);
	if (!frame)
		return NULL;
	skb_put_data(frame, skb_network_header(pkt), nh);
	if (skb_copy_bits(pkt, 0, skb_put(frame, pkt->len), pkt->len)) {
		kfree_skb(frame);
		atomic64_inc(&priv->dropped);
		return NULL;
	}
	return frame;
}

/*
 * Show a copy of @skb (data at its IP or UDP header) on @sdev's capture
 * device, if it has one, as a frame from Ethernet address @src to @dst;
 * @sum_ip: fill in an IPv4 header's checksum in the copy.
 */
static void sib_cap_wire(struct sib_dev *sdev, struct sk_buff *skb,
			 const u8 *dst, const u8 *src, bool sum_ip)
{
	struct net_device *mon;
	struct sk_buff *frame;

	rcu_read_lock();
	mon = sib_cap_dev(sdev);
	frame = mon ? sib_cap_copy(mon, skb) : NULL;
	if (frame) {
		if (sum_ip && (frame->data[0] >> 4) == 4)
			ip_send_check((struct iphdr *)frame->data);
		sib_cap_push_eth(frame, dst, src);
		sib_cap_show(mon, frame);
	}
	rcu_read_unlock();
}

/**
 * __sib_cap_wire_tx - show a RoCEv2 packet that @sdev sends
 * @sdev:	the device
 * @skb:	the packet, data at the IP header, its ICRC in place; the IP
 *		checksum is the IP stack's to fill in, the copy has it
 * @av:		where it goes (the Ethernet addresses)
 *
 * Called by the sending engine (process context, engine mutex held).
 */
void __sib_cap_wire_tx(struct sib_dev *sdev, struct sk_buff *skb,
		       const struct sib_av *av)
{
	sib_cap_wire(sdev, skb, av->dmac, sdev->ndev->dev_addr, true);
}

/**
 * __sib_cap_wire_rx - show a RoCEv2 packet that @sdev receives
 * @sdev:	the device
 * @skb:	the packet as the UDP socket passed it, data at the UDP
 *		header, nothing checked yet; not changed
 *
 * The Ethernet addresses are the received ones when the packet has an
 * Ethernet header, zero otherwise. Called in softirq, under RCU.
 */
void __sib_cap_wire_rx(struct sib_dev *sdev, struct sk_buff *skb)
{
	static const u8 zero[ETH_ALEN];
	const struct ethhdr *eth = NULL;

	if (skb_mac_header_was_set(skb) &&
	    skb_network_header(skb) - skb_mac_header(skb) >= ETH_HLEN)
		eth = (const struct ethhdr *)skb_mac_header(skb);
	sib_cap_wire(sdev, skb, eth ? eth->h_dest : zero,
		     eth ? eth->h_source : zero, false);
}

/* ---- the netdev's life ---------------------------------------------------- */

/* Create, register and open @sdev's capture netdev. Under RTNL. */
static int sib_cap_add(struct sib_dev *sdev)
{
	struct sib_cap_priv *priv;
	char name[IFNAMSIZ];
	struct net_device *mon;
	int ret;

	ASSERT_RTNL();
	if (rtnl_dereference(sdev->cap))
		return 0;
	/*
	 * Whoever is root in the netdev's namespace would see every user's
	 * packets on it, the local path's included: only in a namespace of
	 * the initial user namespace, where that is the host's root.
	 */
	if (dev_net(sdev->ndev)->user_ns != &init_user_ns)
		return -EPERM;
	snprintf(name, sizeof(name), "%.*smon", IFNAMSIZ - 4,
		 dev_name(&sdev->ib_dev.dev));
	mon = alloc_netdev(sizeof(*priv), name, NET_NAME_PREDICTABLE,
			   sib_cap_setup);
	if (!mon)
		return -ENOMEM;
	priv = netdev_priv(mon);
	priv->sdev = sdev;
	dev_net_set(mon, dev_net(sdev->ndev));
	ret = register_netdevice(mon);
	if (ret) {
		free_netdev(mon);
		return ret;
	}
	sib_cap_no_addrconf(mon);
	ret = dev_open(mon, NULL);
	if (ret) {
		unregister_netdevice(mon);
		return ret;
	}
	rcu_assign_pointer(sdev->cap, mon);
	return 0;
}

/**
 * sib_cap_del - remove @sdev's capture netdev, if it has one
 * @sdev: the device
 *
 * Under RTNL. Readers that still hold the pointer finish before the
 * netdev is freed: unregistering it waits for an RCU grace period.
 */
void sib_cap_del(struct sib_dev *sdev)
{
	struct net_device *mon;

	ASSERT_RTNL();
	mon = rtnl_dereference(sdev->cap);
	if (!mon)
		return;
	RCU_INIT_POINTER(sdev->cap, NULL);
	unregister_netdevice(mon);
}

/**
 * sib_cap_fini - the device goes: its capture netdev with it
 * @sdev: the device, whose engines have stopped
 *
 * Called from sib_dealloc_driver() with no lock held; takes RTNL only if
 * there is a netdev to remove. The ib_device has left sysfs, so none can
 * be created any more.
 */
void sib_cap_fini(struct sib_dev *sdev)
{
	if (!rcu_access_pointer(sdev->cap))
		return;
	rtnl_lock();
	sib_cap_del(sdev);
	rtnl_unlock();
}

/**
 * sib_cap_netdev_event - the netdev notifier's part for capture netdevs
 * @ndev:	the netdev of the event
 * @event:	the event
 *
 * A capture netdev that the core unregisters (its namespace is dying)
 * leaves its device. The notifier's unregistration replays
 * NETDEV_UNREGISTER for netdevs still registered: those stay. Under RTNL.
 *
 * Return: true if @ndev is a capture netdev (nothing else to do for it).
 */
bool sib_cap_netdev_event(struct net_device *ndev, unsigned long event)
{
	struct sib_cap_priv *priv;

	if (ndev->netdev_ops != &sib_cap_ops)
		return false;
	if (event != NETDEV_UNREGISTER || ndev->reg_state == NETREG_REGISTERED)
		return true;
	priv = netdev_priv(ndev);
	if (rtnl_dereference(priv->sdev->cap) == ndev)
		RCU_INIT_POINTER(priv->sdev->cap, NULL);
	return true;
}

/* ---- sysfs: /sys/class/infiniband/DEV/capture ------------------------------ */

static ssize_t capture_show(struct device *device,
			    struct device_attribute *attr, char *buf)
{
	struct sib_dev *sdev = rdma_device_to_drv_device(device, struct sib_dev,
							 ib_dev);
	struct net_device *mon;
	ssize_t ret;

	rcu_read_lock();
	mon = rcu_dereference(sdev->cap);
	ret = sysfs_emit(buf, "%s\n", mon ? netdev_name(mon) : "");
	rcu_read_unlock();
	return ret;
}

static ssize_t capture_store(struct device *device,
			     struct device_attribute *attr, const char *buf,
			     size_t count)
{
	struct sib_dev *sdev = rdma_device_to_drv_device(device, struct sib_dev,
							 ib_dev);
	bool on;
	int ret;

	if (!capable(CAP_NET_ADMIN))
		return -EPERM;
	ret = kstrtobool(buf, &on);
	if (ret)
		return ret;
	rtnl_lock();
	if (on)
		ret = sib_cap_add(sdev);
	else
		sib_cap_del(sdev);
	rtnl_unlock();
	return ret ?: count;
}
DEVICE_ATTR_RW(capture);
