// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: multicast groups for UD QPs (ibv_attach_mcast, rdma_cm's joins).
 *
 * A group is a multicast GID: an IPv4-mapped IPv4 multicast address
 * (::ffff:224.0.0.0/100) or an IPv6 multicast address (ff00::/8), which
 * is what RoCEv2 carries as the packet's IP destination. A UD packet to
 * a group has DestQP 0xffffff; sib hands a copy to every QP attached to
 * the group of its destination address (IBA 10.5.2).
 *
 * For such datagrams to reach sib at all, the IP stack of the netdev's
 * namespace must accept them: while a group has QPs attached, sib keeps
 * the netdev a member of the IP group (IGMP/MLD join), as rdma_cm does for
 * its own joins. Datagrams a host sends to a group it is a member of loop
 * back to it through the IP stack, so QPs of the same device receive them
 * too. On lo, multicast stays on the local path.
 *
 * Locking. @mcg_mutex serialises attach and detach (they sleep: the IP
 * join takes RTNL, so no caller may hold RTNL). @mcg_lock, taken with
 * interrupts off, guards @mcg_list and every group's QP list against the
 * receive path, which copies a group's QP numbers under it.
 */
#include <linux/igmp.h>
#include <linux/inetdevice.h>
#include <linux/rtnetlink.h>
#include <net/addrconf.h>

#include "sib_mcast.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_recv.h"
#include "sib_task.h"

/**
 * struct sib_mcg - a multicast group of one device
 * @node:	entry in sib_dev.mcg_list
 * @mgid:	the group's GID
 * @nqp:	QPs attached
 * @qpn:	their numbers (a QP cannot be destroyed while attached: ib_core
 *		counts attachments; the receive path looks each one up anyway)
 */
struct sib_mcg {
	struct list_head node;
	union ib_gid mgid;
	u32 nqp;
	u32 qpn[SIB_MAX_MCG_QP];
};

void sib_mcast_init(struct sib_dev *sdev)
{
	INIT_LIST_HEAD(&sdev->mcg_list);
	spin_lock_init(&sdev->mcg_lock);
	mutex_init(&sdev->mcg_mutex);
}

static bool sib_mgid_v4(const union ib_gid *mgid)
{
	return ipv6_addr_v4mapped((const struct in6_addr *)mgid->raw);
}

/* Is @mgid a RoCEv2 multicast GID (IPv4-mapped or IPv6 multicast)? */
static bool sib_mgid_ok(const union ib_gid *mgid)
{
	if (sib_mgid_v4(mgid))
		return ipv4_is_multicast(*(const __be32 *)(mgid->raw + 12));
	return mgid->raw[0] == 0xff;
}

/* Join (@join) or leave the IP group of @mgid on the device's netdev. */
static void sib_mcg_ip(struct sib_dev *sdev, const union ib_gid *mgid,
		       bool join)
{
	struct net_device *ndev = sdev->ndev;
	struct in_device *in_dev;
	__be32 addr;

	if (ndev->flags & IFF_LOOPBACK)
		return;		/* the local path delivers */
	/* Both IP layers want RTNL for group changes. */
	rtnl_lock();
	if (!sib_mgid_v4(mgid)) {
		if (join)
			ipv6_dev_mc_inc(ndev, (const struct in6_addr *)mgid);
		else
			ipv6_dev_mc_dec(ndev, (const struct in6_addr *)mgid);
		rtnl_unlock();
		return;
	}
	memcpy(&addr, mgid->raw + 12, sizeof(addr));
	in_dev = __in_dev_get_rtnl(ndev);
	if (in_dev && join)
		ip_mc_inc_group(in_dev, addr);
	else if (in_dev)
		ip_mc_dec_group(in_dev, addr);
	rtnl_unlock();
}

static struct sib_mcg *sib_mcg_find(struct sib_dev *sdev,
				    const union ib_gid *mgid)
{
	struct sib_mcg *mcg;

	list_for_each_entry(mcg, &sdev->mcg_list, node)
		if (!memcmp(&mcg->mgid, mgid, sizeof(*mgid)))
			return mcg;
	return NULL;
}

static int sib_mcg_slot(const struct sib_mcg *mcg, u32 qpn)
{
	u32 i;

	for (i = 0; i < mcg->nqp; i++)
		if (mcg->qpn[i] == qpn)
			return i;
	return -1;
}

/* A new group with @qpn attached, joined on the IP side. */
static int sib_mcg_create(struct sib_dev *sdev, const union ib_gid *mgid,
			  u32 qpn)
{
	struct sib_mcg *mcg;
	unsigned long flags;

	if (sdev->num_mcg >= SIB_MAX_MCG)
		return -ENOMEM;
	mcg = kzalloc(sizeof(*mcg), GFP_KERNEL);
	if (!mcg)
		return -ENOMEM;
	mcg->mgid = *mgid;
	mcg->qpn[0] = qpn;
	mcg->nqp = 1;
	sib_mcg_ip(sdev, mgid, true);
	spin_lock_irqsave(&sdev->mcg_lock, flags);
	list_add_tail(&mcg->node, &sdev->mcg_list);
	spin_unlock_irqrestore(&sdev->mcg_lock, flags);
	sdev->num_mcg++;
	return 0;
}

int sib_attach_mcast(struct ib_qp *ib_qp, union ib_gid *gid, u16 lid)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	struct sib_dev *sdev = qp->sdev;
	struct sib_mcg *mcg;
	unsigned long flags;
	int ret = 0;

	if (sib_qp_type(qp) != IB_QPT_UD || !sib_mgid_ok(gid))
		return -EINVAL;
	mutex_lock(&sdev->mcg_mutex);
	mcg = sib_mcg_find(sdev, gid);
	if (!mcg) {
		ret = sib_mcg_create(sdev, gid, sib_qpn(qp));
	} else if (sib_mcg_slot(mcg, sib_qpn(qp)) >= 0) {
		ret = 0;	/* attached already */
	} else if (mcg->nqp >= SIB_MAX_MCG_QP) {
		ret = -ENOMEM;
	} else {
		spin_lock_irqsave(&sdev->mcg_lock, flags);
		mcg->qpn[mcg->nqp++] = sib_qpn(qp);
		spin_unlock_irqrestore(&sdev->mcg_lock, flags);
	}
	mutex_unlock(&sdev->mcg_mutex);
	return ret;
}

int sib_detach_mcast(struct ib_qp *ib_qp, union ib_gid *gid, u16 lid)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	struct sib_dev *sdev = qp->sdev;
	struct sib_mcg *mcg;
	unsigned long flags;
	bool empty;
	int slot;

	mutex_lock(&sdev->mcg_mutex);
	mcg = sib_mcg_find(sdev, gid);
	slot = mcg ? sib_mcg_slot(mcg, sib_qpn(qp)) : -1;
	if (slot < 0) {
		mutex_unlock(&sdev->mcg_mutex);
		return -EINVAL;
	}
	spin_lock_irqsave(&sdev->mcg_lock, flags);
	mcg->qpn[slot] = mcg->qpn[--mcg->nqp];
	empty = !mcg->nqp;
	if (empty)
		list_del(&mcg->node);
	spin_unlock_irqrestore(&sdev->mcg_lock, flags);
	if (empty) {
		sdev->num_mcg--;
		sib_mcg_ip(sdev, &mcg->mgid, false);
		kfree(mcg);
	}
	mutex_unlock(&sdev->mcg_mutex);
	return 0;
}

/* The device goes away: no QP is left, but leave the IP groups anyway. */
void sib_mcast_fini(struct sib_dev *sdev)
{
	struct sib_mcg *mcg, *next;

	list_for_each_entry_safe(mcg, next, &sdev->mcg_list, node) {
		list_del(&mcg->node);
		sib_mcg_ip(sdev, &mcg->mgid, false);
		kfree(mcg);
	}
	sdev->num_mcg = 0;
}

/* The destination GID of a received packet, from its IP header. */
static void sib_mcast_dgid(struct sk_buff *skb, union ib_gid *dgid)
{
	if (ip_hdr(skb)->version == 4)
		ipv6_addr_set_v4mapped(ip_hdr(skb)->daddr,
				       (struct in6_addr *)dgid->raw);
	else
		memcpy(dgid->raw, &ipv6_hdr(skb)->daddr, sizeof(*dgid));
}

/* Copy the QP numbers attached to @dgid's group; returns how many. */
static u32 sib_mcast_qpns(struct sib_dev *sdev, const union ib_gid *dgid,
			  u32 *qpn)
{
	struct sib_mcg *mcg;
	unsigned long flags;
	u32 n = 0;

	spin_lock_irqsave(&sdev->mcg_lock, flags);
	mcg = sib_mcg_find(sdev, dgid);
	if (mcg) {
		n = mcg->nqp;
		memcpy(qpn, mcg->qpn, n * sizeof(*qpn));
	}
	spin_unlock_irqrestore(&sdev->mcg_lock, flags);
	return n;
}

/* Queue a copy of @skb to QP @qpn, if it takes it. */
static enum sib_rx_verdict sib_mcast_to_qp(struct sib_dev *sdev,
					   struct sk_buff *skb, u32 qpn)
{
	enum sib_rx_verdict v = SIB_RX_ACCEPT;
	struct sk_buff *copy;
	struct sib_qp *qp;

	qp = sib_qp_get(sdev, qpn);
	if (!qp)
		return SIB_RX_UNKNOWN_QPN;
	if (sib_qp_type(qp) != IB_QPT_UD)
		v = SIB_RX_UNKNOWN_QPN;
	else if (sib_pkt(skb)->paylen > qp->mtu)
		v = SIB_RX_HDR_ERROR;
	else if (skb_queue_len(&qp->rxq) >= SIB_RXQ_MAX)
		v = SIB_RX_QUEUE_FULL;
	copy = v == SIB_RX_ACCEPT ? skb_clone(skb, GFP_ATOMIC) : NULL;
	if (copy) {
		skb_queue_tail(&qp->rxq, copy);
		sib_qp_sched(qp);
	} else if (v == SIB_RX_ACCEPT) {
		v = SIB_RX_QUEUE_FULL;
	}
	sib_qp_put(qp);
	return v;
}

/**
 * sib_mcast_rcv - deliver a packet sent to a multicast group
 * @sdev:	the device it arrived on (wire or local path)
 * @skb:	the packet, checked and parsed, DestQP 0xffffff (consumed)
 *
 * Any context. Only UD SENDs may go to a group (IBA 10.5.2.2); each QP
 * attached to the destination address's group gets a copy, which its
 * responder checks like any datagram (Q_Key, receive WQE).
 */
void sib_mcast_rcv(struct sib_dev *sdev, struct sk_buff *skb)
{
	u32 qpn[SIB_MAX_MCG_QP], n = 0, i;
	union ib_gid dgid;

	if (sib_pkt(skb)->flags & SIB_OP_UD) {
		sib_mcast_dgid(skb, &dgid);
		n = sib_mcast_qpns(sdev, &dgid, qpn);
	}
	if (!n)
		sib_count(sdev, SIB_CNT_UNKNOWN_QPN);
	skb_scrub_packet(skb, true);
	skb->dev = NULL;
	for (i = 0; i < n; i++)
		sib_count(sdev, sib_rx_cnt(sib_mcast_to_qp(sdev, skb, qpn[i])));
	kfree_skb(skb);
}
