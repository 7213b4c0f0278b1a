/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: packets as objects (sib_pkt.c): what sib knows of a packet (struct
 * sib_pkt, in skb->cb), the packet builders and the transport header
 * parser.
 */
#ifndef SIB_PKT_H
#define SIB_PKT_H

#include <linux/build_bug.h>
#include <linux/sizes.h>
#include <linux/skbuff.h>

#include "sib_hdr.h"

struct sib_mr;
struct sib_qp;
struct sib_swqe;

/* A local burst (sib_pkt_may_burst()) carries at most this much. */
#define SIB_BURST_BYTES		SZ_64K
#define SIB_BURST_PKTS		64

/* Parsed packet facts, in skb->cb. */
struct sib_pkt {
	u32 psn;
	u32 qpn;		/* destination QP */
	u32 flags;		/* sib_op_flags(opcode) */
	u32 paylen;		/* payload bytes, without padding */
	u16 npkts;		/* PSNs it stands for: > 1 for a local burst */
	u8 opcode;
	u8 hdr_len;
	bool ack_req;
	bool se;
	bool corrupt;		/* fault injection: fails the ICRC check */
	bool local;		/* came by the local path */
	bool icrc_room;		/* ends with the pad and the ICRC's place */
	unsigned long due;	/* fault injection: when a delayed one goes */
};

static inline struct sib_pkt *sib_pkt(struct sk_buff *skb)
{
	BUILD_BUG_ON(sizeof(struct sib_pkt) > sizeof(skb->cb));
	return (struct sib_pkt *)skb->cb;
}

static inline void *sib_pkt_eth(struct sk_buff *skb, u32 which)
{
	return skb->data + sib_eth_offset(sib_pkt(skb)->opcode, which);
}

/* The payload of a packet built linear, for sending. */
static inline void *sib_pkt_payload(struct sk_buff *skb)
{
	return skb->data + sib_pkt(skb)->hdr_len;
}

struct sk_buff *sib_pkt_alloc(struct sib_qp *qp, u8 opcode, u32 paylen,
			      u32 psn, bool ack_req);
bool sib_pkt_may_burst(struct sib_qp *qp);
u32 sib_burst_pkts(u32 left, u32 mtu);
bool sib_pkt_span_ok(const struct sib_pkt *pkt, u32 mtu);
struct sk_buff *sib_pkt_alloc_gather(struct sib_qp *qp, u8 opcode,
				     u32 paylen, u32 npkts, u32 psn,
				     bool ack_req, struct sib_swqe *s,
				     int *err);
struct sk_buff *sib_pkt_alloc_mr(struct sib_qp *qp, u8 opcode, u32 paylen,
				 u32 npkts, u32 psn, struct sib_mr *mr,
				 u64 iova);
int sib_pkt_parse(struct sk_buff *skb);

#endif /* SIB_PKT_H */
