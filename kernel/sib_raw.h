/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: raw packet QPs (IB_QPT_RAW_PACKET) and flow steering. See
 * sib_raw.c for how frames travel and how flows match.
 */
#ifndef SIB_RAW_H
#define SIB_RAW_H

#include <linux/idr.h>
#include <linux/if_ether.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

struct sib_dev;
struct sib_qp;
struct sib_rwqe;
struct sib_swqe;

/* Flows a device may hold, all QPs together: bounds the per-frame work. */
#define SIB_MAX_FLOWS		1024

/**
 * struct sib_flow_key - the fields of a frame a flow can match on
 * @dmac:	destination MAC
 * @smac:	source MAC
 * @ethertype:	the EtherType after any VLAN tag
 * @vlan_tci:	the (outer) VLAN tag's TCI, or 0
 * @has_vlan:	1 if the frame carries a VLAN tag
 * @ip_proto:	IPv4 protocol or IPv6 next header
 * @tos:	IPv4 TOS or IPv6 traffic class
 * @ttl:	IPv4 TTL or IPv6 hop limit
 * @ip4_flags:	the IPv4 flags (bit 0: MF, bit 1: DF)
 * @has_l4:	1 if @sport and @dport were read from a TCP or UDP header
 * @sport:	TCP or UDP source port
 * @dport:	TCP or UDP destination port
 * @pad:	zero
 * @flow_label:	IPv6 flow label (low 20 bits)
 * @ip4_src:	IPv4 source address
 * @ip4_dst:	IPv4 destination address
 * @ip6_src:	IPv6 source address
 * @ip6_dst:	IPv6 destination address
 *
 * A flow holds a key and a mask of this layout; a frame's key matches
 * when it equals the flow's key in every bit the mask sets. The size is
 * a multiple of 8 so that sib_flow_match() compares words.
 */
struct sib_flow_key {
	u8 dmac[ETH_ALEN];
	u8 smac[ETH_ALEN];
	__be16 ethertype;
	__be16 vlan_tci;
	u8 has_vlan;
	u8 ip_proto;
	u8 tos;
	u8 ttl;
	u8 ip4_flags;
	u8 has_l4;
	__be16 sport;
	__be16 dport;
	u8 pad[2];
	__be32 flow_label;
	__be32 ip4_src;
	__be32 ip4_dst;
	u8 ip6_src[16];
	u8 ip6_dst[16];
} __aligned(8);

/**
 * struct sib_flow - a steering rule of a raw packet QP
 * @ib_flow:	the ib_core object; ib_core fills it after create_flow
 * @node:	entry in its QP's @raw_flows; written under the device's
 *		raw.lock, read under RCU
 * @qp:		the QP frames go to
 * @type:	enum ib_flow_attr_type
 * @priority:	among NORMAL flows that match, the lowest value wins
 * @detached:	the QP was destroyed first and took the flow off its list;
 *		under raw.lock
 * @key:	the values to match, already masked
 * @mask:	which bits of a frame's key must equal @key
 * @rcu:	frees the flow after the readers that may see it
 *
 * Freed by destroy_flow, after an RCU grace period.
 */
struct sib_flow {
	struct ib_flow ib_flow;
	struct list_head node;
	struct sib_qp *qp;
	u8 type;
	u16 priority;
	bool detached;
	struct sib_flow_key key;
	struct sib_flow_key mask;
	struct rcu_head rcu;
};

/**
 * struct sib_raw - a device's raw packet QPs and their flows
 * @lock:	serialises create_flow, destroy_flow and the creation and
 *		destruction of raw QPs: guards the writers of @qps and of
 *		each QP's @raw_flows, @nflows and @pt_on; also the counts
 *		that keep WQs and indirection tables alive (sib_wq.h)
 * @qps:	the raw packet QPs (struct sib_qp's @raw_node); an RCU list,
 *		walked by the receive hook and the send loopback
 * @nflows:	flows of all QPs; also read without the lock, as a hint
 * @pt_on:	@pt is registered: it is while @nflows is not zero, so that
 *		the netdev's other traffic (RoCEv2 included) pays nothing
 *		otherwise
 * @pt:		the ETH_P_ALL receive hook bound to the device's netdev
 * @nwqs:	live receive WQs, bounded by SIB_MAX_WQ
 * @ntables:	live indirection tables, bounded by SIB_MAX_IND_TABLES
 * @wq_ida:	WQ numbers; the IDA has its own lock
 * @tbl_ida:	indirection table numbers; likewise
 */
struct sib_raw {
	struct mutex lock;	/* see above */
	struct list_head qps;
	unsigned int nflows;
	bool pt_on;
	struct packet_type pt;
	atomic_t nwqs;
	atomic_t ntables;
	struct ida wq_ida;
	struct ida tbl_ida;
};

void sib_raw_dev_init(struct sib_dev *sdev);
void sib_raw_dev_fini(struct sib_dev *sdev);
void sib_raw_qp_init(struct sib_qp *qp);
void sib_raw_qp_destroy(struct sib_qp *qp);
u8 sib_raw_check_len(struct sib_qp *qp, u32 len);
int sib_raw_send(struct sib_qp *qp, struct sib_swqe *s);
void sib_raw_recv(struct sib_qp *qp, struct sk_buff *skb);
u8 sib_raw_scatter(struct sib_qp *qp, struct ib_pd *pd,
		   const struct sib_rwqe *rwqe, struct sk_buff *skb,
		   u32 *byte_len);
struct ib_flow *sib_create_flow(struct ib_qp *ib_qp,
				struct ib_flow_attr *attr,
				struct ib_udata *udata);
int sib_destroy_flow(struct ib_flow *ib_flow);

#endif /* SIB_RAW_H */
