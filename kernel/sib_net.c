// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: building packets, and delivering them.
 *
 * A packet is an skb whose data starts at the BTH. Between QPs of the
 * same device it is delivered directly to the destination QP's input
 * queue (the local path); the RoCEv2 path adds IP/UDP and the ICRC around
 * the same bytes.
 */
#include <rdma/ib_mad.h>

#include "sib_qp.h"

/* Room in front of the BTH for the RoCEv2 encapsulation. */
#define SIB_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr))
#define SIB_ICRC_LEN	4

/**
 * sib_pkt_alloc - allocate a packet and fill its BTH
 * @qp:		sending QP (its destination QP number goes into the BTH)
 * @opcode:	IBA opcode
 * @paylen:	payload bytes (the caller copies them in)
 * @psn:	packet sequence number
 * @ack_req:	set the AckReq bit
 *
 * Every extended header is zeroed for the caller to fill.
 */
struct sk_buff *sib_pkt_alloc(struct sib_qp *qp, u8 opcode, u32 paylen,
			      u32 psn, bool ack_req)
{
	u8 hdr_len = sib_opinfo[opcode].hdr_len;
	u32 pad = (4 - (paylen & 3)) & 3;
	struct sk_buff *skb;
	struct sib_bth *bth;
	struct sib_pkt *pkt;

	skb = alloc_skb(SIB_HEADROOM + hdr_len + paylen + pad + SIB_ICRC_LEN,
			GFP_KERNEL);
	if (!skb)
		return NULL;
	skb_reserve(skb, SIB_HEADROOM);
	bth = skb_put_zero(skb, hdr_len);
	skb_put(skb, paylen);
	skb_put_zero(skb, pad);

	bth->opcode = opcode;
	bth->flags = pad << SIB_BTH_PAD_SHIFT;
	bth->pkey = cpu_to_be16(IB_DEFAULT_PKEY_FULL);
	bth->qpn = cpu_to_be32(qp->attr.dest_qp_num & SIB_QPN_MASK);
	bth->apsn = cpu_to_be32((psn & SIB_PSN_MASK) |
				(ack_req ? SIB_BTH_ACK_REQ : 0));

	pkt = sib_pkt(skb);
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = opcode;
	pkt->flags = sib_op_flags(opcode);
	pkt->hdr_len = hdr_len;
	pkt->paylen = paylen;
	pkt->psn = psn & SIB_PSN_MASK;
	pkt->qpn = qp->attr.dest_qp_num & SIB_QPN_MASK;
	pkt->ack_req = ack_req;
	return skb;
}

/**
 * sib_pkt_parse - check a packet's transport headers and fill sib_pkt
 * @skb: the packet, data at the BTH, linear
 *
 * Nothing in the packet is trusted: the opcode must be one sib speaks, the
 * headers it implies must fit, and the pad count must fit the payload.
 * Returns 0 or -EINVAL (the caller drops the packet and counts it).
 */
int sib_pkt_parse(struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	const struct sib_bth *bth;
	u32 pad, apsn;
	u8 hdr_len;

	if (skb->len < sizeof(*bth))
		return -EINVAL;
	bth = (const struct sib_bth *)skb->data;
	if (!(sib_op_flags(bth->opcode) & SIB_OP_VALID))
		return -EINVAL;
	hdr_len = sib_opinfo[bth->opcode].hdr_len;
	pad = (bth->flags & SIB_BTH_PAD_MASK) >> SIB_BTH_PAD_SHIFT;
	if (skb->len < hdr_len + pad)
		return -EINVAL;
	if (!(sib_op_flags(bth->opcode) & SIB_OP_PAYLOAD) &&
	    skb->len != hdr_len)
		return -EINVAL;
	if (skb->len - hdr_len - pad > U16_MAX)
		return -EINVAL;

	apsn = be32_to_cpu(bth->apsn);
	pkt->opcode = bth->opcode;
	pkt->flags = sib_op_flags(bth->opcode);
	pkt->hdr_len = hdr_len;
	pkt->paylen = skb->len - hdr_len - pad;
	pkt->psn = apsn & SIB_PSN_MASK;
	pkt->qpn = be32_to_cpu(bth->qpn) & SIB_QPN_MASK;
	pkt->ack_req = !!(apsn & SIB_BTH_ACK_REQ);
	pkt->se = !!(bth->flags & SIB_BTH_SE);
	return 0;
}

/*
 * Hand a packet to its destination QP on this device. The packet was built
 * by sib itself, so its sib_pkt is already filled in.
 */
static void sib_deliver_local(struct sib_dev *sdev, struct sk_buff *skb)
{
	struct sib_qp *dst = sib_qp_get(sdev, sib_pkt(skb)->qpn);

	if (!dst) {
		kfree_skb(skb);
		return;
	}
	skb_queue_tail(&dst->rxq, skb);
	sib_qp_kick(dst);
	sib_qp_put(dst);
}

void sib_pkt_send(struct sib_qp *qp, struct sk_buff *skb)
{
	sib_deliver_local(qp->sdev, skb);
}

/* Module-wide setup of the RoCEv2 transport (not yet: local path only). */
int sib_net_init(void)
{
	return 0;
}

void sib_net_exit(void)
{
}

/* Per device: attach to the UDP socket of the netdev's namespace. */
int sib_net_dev_init(struct sib_dev *sdev)
{
	return 0;
}

void sib_net_dev_fini(struct sib_dev *sdev)
{
}
