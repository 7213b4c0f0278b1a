// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: packets as objects. A packet is an skb whose data starts at the
 * BTH, with what sib knows of it in skb->cb (struct sib_pkt). This file
 * allocates packets and fills their BTH, decides how a payload travels
 * (copied into the skb, or as page fragments of the sender's MR: one copy
 * on the local path, none on the wire), builds local bursts, and parses
 * the transport headers of a packet that arrives. Where a packet goes is
 * sib_net.c's and sib_local.c's business.
 *
 * Locking. The builders run in the sending QP's engine, under its @engine
 * mutex, which guards the QP's route cache and trailer page cache they
 * use. sib_pkt_parse() reads only the packet, which its caller owns.
 */
#include <linux/ipv6.h>
#include <linux/udp.h>
#include <rdma/ib_mad.h>

#include "sib_capture.h"
#include "sib_copy.h"
#include "sib_icrc.h"
#include "sib_mkey.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_req.h"
#include "sib_xrc.h"

/* Room in front of the BTH for the RoCEv2 encapsulation. */
#define SIB_HEADROOM	(LL_MAX_HEADER + sizeof(struct ipv6hdr) + \
			 sizeof(struct udphdr))

/* BTH TVer: transport header version 0 is the only one. */
#define SIB_BTH_TVER_MASK	0x0f

/*
 * Where a packet's payload goes: copied into the skb's data (with room for
 * the pad and the ICRC), or page fragments of the source MR, on the local
 * path (no pad, no ICRC) or on the wire (pad and ICRC in a trailer
 * fragment, see sib_pkt_trailer()).
 */
enum sib_paymode {
	SIB_PAY_COPY,
	SIB_PAY_LOCAL_FRAGS,
	SIB_PAY_WIRE_FRAGS,
};

static struct sk_buff *__sib_pkt_alloc(struct sib_qp *qp, u8 opcode,
				       u32 paylen, u32 psn, bool ack_req,
				       enum sib_paymode mode);

/**
 * sib_pkt_alloc - allocate a packet and fill its BTH
 * @qp:		sending QP (its destination QP number goes into the BTH)
 * @opcode:	IBA opcode (an RC one for an XRC QP: sent in the XRC class)
 * @paylen:	payload bytes (the caller copies them in)
 * @psn:	packet sequence number
 * @ack_req:	set the AckReq bit
 *
 * Every extended header is zeroed for the caller to fill.
 *
 * Return: the packet, linear, its sib_pkt filled in and room left for
 * @paylen bytes, the pad and the ICRC; or NULL (no memory).
 */
struct sk_buff *sib_pkt_alloc(struct sib_qp *qp, u8 opcode, u32 paylen,
			      u32 psn, bool ack_req)
{
	return __sib_pkt_alloc(qp, opcode, paylen, psn, ack_req, SIB_PAY_COPY);
}

/* The largest packet buffer carved from the per-CPU page fragment cache. */
#define SIB_FRAG_HEAD_MAX	2048

/*
 * A packet's buffer. Small ones (headers, ACKs, short payloads: most
 * packets of a message-rate test) come from the per-CPU page fragment
 * cache that network drivers use for their receive buffers: a pointer
 * bump instead of a kmalloc() per packet, one page per several dozen
 * packets. The fragment cache allocates atomically; when it has nothing,
 * or for larger packets, the buffer is kmalloc()ed.
 */
static struct sk_buff *sib_skb_alloc(unsigned int size)
{
	unsigned int fragsz = SKB_DATA_ALIGN(size) +
			      SKB_DATA_ALIGN(sizeof(struct skb_shared_info));
	struct sk_buff *skb;
	void *data;

	if (fragsz <= SIB_FRAG_HEAD_MAX) {
		data = netdev_alloc_frag(fragsz);
		if (data) {
			skb = build_skb(data, fragsz);
			if (skb)
				return skb;
			skb_free_frag(data);
		}
	}
	return alloc_skb(size, GFP_KERNEL);
}

/*
 * @mode: SIB_PAY_COPY leaves room for the payload (and the pad, and the
 * ICRC) in the skb's data; otherwise the payload is to come as page
 * fragments: on the local path without pad or ICRC, on the wire with the
 * pad counted in the BTH (the caller appends the trailer).
 */
static struct sk_buff *__sib_pkt_alloc(struct sib_qp *qp, u8 opcode,
				       u32 paylen, u32 psn, bool ack_req,
				       enum sib_paymode mode)
{
	bool linear = mode == SIB_PAY_COPY;
	u8 hdr_len;
	u32 pad = mode != SIB_PAY_LOCAL_FRAGS ? (4 - (paylen & 3)) & 3 : 0;
	struct sk_buff *skb;
	struct sib_bth *bth;
	struct sib_pkt *pkt;

	opcode = sib_xrc_opcode(qp, opcode);
	hdr_len = sib_opinfo[opcode].hdr_len;
	skb = sib_skb_alloc(SIB_HEADROOM + hdr_len +
			    (linear ? paylen + pad + SIB_ICRC_LEN : 0));
	if (!skb)
		return NULL;
	skb_reserve(skb, SIB_HEADROOM);
	bth = skb_put_zero(skb, hdr_len);
	if (linear) {
		skb_put(skb, paylen);
		skb_put_zero(skb, pad);
	}

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
	pkt->npkts = 1;
	pkt->psn = psn & SIB_PSN_MASK;
	pkt->qpn = qp->attr.dest_qp_num & SIB_QPN_MASK;
	pkt->ack_req = ack_req;
	return skb;
}

/**
 * sib_pkt_parse - check a packet's transport headers and fill sib_pkt
 * @skb: the packet, data at the BTH; the headers are pulled into the
 *	 linear part, the payload may stay in page fragments
 *
 * Nothing in the packet is trusted: the opcode must be one sib speaks, the
 * transport version 0 and the P_Key the default one, the headers the
 * opcode implies must fit, and the pad count must fit the payload.
 *
 * Return: 0, or -EINVAL (the caller drops the packet and counts it).
 */
int sib_pkt_parse(struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	const struct sib_bth *bth;
	u32 pad, apsn;
	u8 hdr_len;

	if (!pskb_may_pull(skb, sizeof(*bth)))
		return -EINVAL;
	bth = (const struct sib_bth *)skb->data;
	if (!(sib_op_flags(bth->opcode) & SIB_OP_VALID))
		return -EINVAL;
	if ((bth->flags & SIB_BTH_TVER_MASK) ||
	    (be16_to_cpu(bth->pkey) & 0x7fff) != 0x7fff)
		return -EINVAL;
	hdr_len = sib_opinfo[bth->opcode].hdr_len;
	pad = (bth->flags & SIB_BTH_PAD_MASK) >> SIB_BTH_PAD_SHIFT;
	if (skb->len < hdr_len + pad)
		return -EINVAL;
	/* The extended headers are read in place: pull them in (may move data). */
	if (!pskb_may_pull(skb, hdr_len))
		return -EINVAL;
	bth = (const struct sib_bth *)skb->data;
	if (!(sib_op_flags(bth->opcode) & SIB_OP_PAYLOAD) &&
	    skb->len != hdr_len)
		return -EINVAL;
	if (skb->len - hdr_len - pad > U16_MAX)
		return -EINVAL;

	apsn = be32_to_cpu(bth->apsn);
	memset(pkt, 0, sizeof(*pkt));
	pkt->opcode = bth->opcode;
	pkt->flags = sib_op_flags(bth->opcode);
	pkt->hdr_len = hdr_len;
	pkt->paylen = skb->len - hdr_len - pad;
	pkt->npkts = 1;
	pkt->psn = apsn & SIB_PSN_MASK;
	pkt->qpn = be32_to_cpu(bth->qpn) & SIB_QPN_MASK;
	pkt->ack_req = !!(apsn & SIB_BTH_ACK_REQ);
	pkt->se = !!(bth->flags & SIB_BTH_SE);
	return 0;
}

/* ---- payload: page fragments instead of copies ------------------------- */

static bool sib_wire_frags = true;
module_param_named(wire_frags, sib_wire_frags, bool, 0644);
MODULE_PARM_DESC(wire_frags,
		 "RoCEv2 packets carry MR page fragments instead of a copy of the payload (default: on)");

/*
 * A packet need not carry a copy of its payload: it can refer to the
 * sender's pinned pages (page fragments, each holding a page reference).
 * On the local path, the receiving engine copies from there straight into
 * the target memory: each byte is moved once. On the wire (RoCEv2) the
 * ICRC is computed over the fragments, and a veth peer in this kernel
 * receives them as they are: again one copy, by its responder. This works
 * for user MRs of RC QPs; any other memory, inline data, UC and UD
 * packets are copied into the skb as before. Fault injection sees the same
 * packets (a duplicate is a linear copy). onecopy_pkts and wire_frag_pkts
 * count the packets built this way.
 */
static enum sib_paymode sib_pkt_paymode(struct sib_qp *qp, u32 paylen)
{
	lockdep_assert_held(&qp->engine);
	/*
	 * Only RC: its WQE completes when the peer acknowledged the packet,
	 * so the process cannot reuse the buffer while a packet still points
	 * at it. A UC WQE completes when its last packet is built: the local
	 * peer copies later, the wire's ICRC was computed earlier.
	 */
	if (!paylen || sib_qp_type(qp) != IB_QPT_RC)
		return SIB_PAY_COPY;
	if (sib_route_local(qp, &qp->av))
		return SIB_PAY_LOCAL_FRAGS;
	return READ_ONCE(sib_wire_frags) ? SIB_PAY_WIRE_FRAGS : SIB_PAY_COPY;
}

/* The pad (at most 3 bytes) and the ICRC, in one fragment. */
#define SIB_TRAILER_MAX		8

/*
 * The pad and the ICRC's place of a RoCEv2 packet whose payload is page
 * fragments: they must follow the payload, so they are one more fragment,
 * carved from the QP's page_frag_cache (one page allocation per several
 * thousand packets, none per packet). Returns 0, -E2BIG (no fragment slot
 * left: the caller copies instead) or -ENOMEM.
 */
static int sib_pkt_trailer(struct sib_qp *qp, struct sk_buff *skb)
{
	u32 len = ((4 - (sib_pkt(skb)->paylen & 3)) & 3) + SIB_ICRC_LEN;
	int nr = skb_shinfo(skb)->nr_frags;
	struct page *page;
	void *va;

	if (nr >= MAX_SKB_FRAGS)
		return -E2BIG;
	va = page_frag_alloc(&qp->route.trailer, SIB_TRAILER_MAX, GFP_KERNEL);
	if (!va)
		return -ENOMEM;
	memset(va, 0, len);
	page = virt_to_head_page(va);
	skb_fill_page_desc(skb, nr, page, va - page_address(page), len);
	skb->len += len;
	skb->data_len += len;
	skb->truesize += SIB_TRAILER_MAX;
	sib_pkt(skb)->icrc_room = true;
	return 0;
}

/* Count a packet built of fragments; on the wire, append its trailer. */
static int sib_pkt_frags_done(struct sib_qp *qp, struct sk_buff *skb,
			      enum sib_paymode mode)
{
	int ret;

	if (mode == SIB_PAY_LOCAL_FRAGS) {
		sib_count_n(qp->sdev, SIB_CNT_ONECOPY_PKTS,
			    sib_pkt(skb)->npkts);
		return 0;
	}
	ret = sib_pkt_trailer(qp, skb);
	if (!ret)
		sib_count(qp->sdev, SIB_CNT_WIRE_FRAG_PKTS);
	return ret;
}

/*
 * A local burst: one packet on the local path that stands for @npkts
 * consecutive PSNs of one message, each full but the last (IBA's
 * FIRST/MIDDLE/LAST rules hold for the burst as a whole). Nothing reaches
 * a wire, so the packet need not be cut at the MTU: the sender builds one
 * skb of MR page fragments, the responder makes one sequence check and
 * one copy, and answers for the burst's last PSN. The PSN space, the ACK
 * requests and the window are those of the single packets. Bursts are
 * only built while no fault is injected on the device (each packet must
 * be there for the injector to act on), never on the wire, and only for
 * RC, whose packets may be page fragments (sib_pkt_paymode()).
 */
bool sib_pkt_may_burst(struct sib_qp *qp)
{
	return sib_qp_type(qp) == IB_QPT_RC &&
	       !READ_ONCE(qp->sdev->fault.active) &&
	       sib_route_local(qp, &qp->av) &&
	       !sib_cap_listening(qp->sdev);
}

/* How many packets a burst of the next @left bytes may stand for. */
u32 sib_burst_pkts(u32 left, u32 mtu)
{
	return clamp_t(u32, DIV_ROUND_UP(left, mtu), 1,
		       min_t(u32, SIB_BURST_BYTES / mtu, SIB_BURST_PKTS));
}

/*
 * Is the payload of @pkt right for the PSNs it stands for? A single
 * packet's length is checked by its engine; a local burst's packets are
 * all full but the last.
 */
bool sib_pkt_span_ok(const struct sib_pkt *pkt, u32 mtu)
{
	u32 full = pkt->npkts * mtu;

	if (pkt->npkts == 1)
		return true;
	if (!pkt->local || pkt->npkts > SIB_BURST_PKTS)
		return false;
	if (!(pkt->flags & SIB_OP_LAST))
		return pkt->paylen == full;
	return pkt->paylen > full - mtu && pkt->paylen <= full;
}

/**
 * sib_pkt_alloc_gather - a packet with @paylen bytes of a send WQE
 * @qp:		the sending QP (engine mutex held)
 * @opcode:	IBA opcode
 * @paylen:	payload bytes, from @s's current position on
 * @npkts:	PSNs the packet stands for (> 1: a local burst, see
 *		sib_pkt_may_burst(); built of page fragments or not at all)
 * @psn:	packet sequence number (of the first PSN of a burst)
 * @ack_req:	set the AckReq bit
 * @s:		the WQE; its gather position moves past the bytes
 * @err:	set on failure: -ENOMEM, -E2BIG (a burst that needs a
 *		copy: send single packets), or the error of sib_sgl_copy()
 *
 * Return: the packet, or NULL.
 */
struct sk_buff *sib_pkt_alloc_gather(struct sib_qp *qp, u8 opcode,
				     u32 paylen, u32 npkts, u32 psn,
				     bool ack_req, struct sib_swqe *s,
				     int *err)
{
	struct sib_sgl_pos pos = s->pos;
	enum sib_paymode mode = SIB_PAY_COPY;
	struct sk_buff *skb;
	int ret = -E2BIG;

	lockdep_assert_held(&qp->engine);
	if (!(s->wr->send_flags & IB_SEND_INLINE))
		mode = sib_pkt_paymode(qp, paylen);
	if (npkts > 1 && mode != SIB_PAY_LOCAL_FRAGS)
		goto fail;
	if (mode != SIB_PAY_COPY) {
		skb = __sib_pkt_alloc(qp, opcode, paylen, psn, ack_req, mode);
		if (!skb)
			goto nomem;
		sib_pkt(skb)->npkts = npkts;
		ret = sib_sgl_frags(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
				    (struct sib_sge *)(s->wr + 1),
				    s->wr->num_sge, &pos, skb, paylen);
		if (!ret)
			ret = sib_pkt_frags_done(qp, skb, mode);
		if (!ret) {
			s->pos = pos;
			if (npkts > 1)
				sib_count(qp->sdev, SIB_CNT_LOCAL_BURSTS);
			return skb;
		}
		kfree_skb(skb);
		if (ret != -E2BIG || npkts > 1)
			goto fail;
	}
	skb = sib_pkt_alloc(qp, opcode, paylen, psn, ack_req);
	if (!skb)
		goto nomem;
	ret = sib_req_gather(qp, s, sib_pkt_payload(skb), paylen);
	if (ret) {
		kfree_skb(skb);
		*err = ret;
		return NULL;
	}
	return skb;
nomem:
	*err = -ENOMEM;
	return NULL;
fail:
	*err = ret;
	return NULL;
}

/**
 * sib_pkt_alloc_mr - a READ response with @paylen bytes of an MR
 * @qp:		the sending QP (engine mutex held)
 * @opcode:	IBA opcode (an RDMA READ response)
 * @paylen:	payload bytes
 * @npkts:	PSNs it stands for (> 1: a local burst, see
 *		sib_pkt_may_burst(); a user MR's range of at most
 *		SIB_BURST_BYTES always fits in the fragments)
 * @psn:	packet sequence number (of the first PSN of a burst); the
 *		AckReq bit is never set
 * @mr:		the MR the payload is read from, from sib_mr_get() and
 *		referenced by the caller (NULL only with @paylen 0)
 * @iova:	the payload's address in @mr, within the range sib_mr_get()
 *		checked (its *mr_iova, or further on)
 *
 * Return: the packet, or NULL (no memory, or @mr is a dma-buf MR that
 * was revoked: the requester's retry then finds the key invalid).
 */
struct sk_buff *sib_pkt_alloc_mr(struct sib_qp *qp, u8 opcode, u32 paylen,
				 u32 npkts, u32 psn, struct sib_mr *mr,
				 u64 iova)
{
	enum sib_paymode mode = sib_pkt_paymode(qp, paylen);
	struct sk_buff *skb;

	lockdep_assert_held(&qp->engine);
	if (mode != SIB_PAY_COPY && sib_mr_has_pages(mr)) {
		skb = __sib_pkt_alloc(qp, opcode, paylen, psn, false, mode);
		if (!skb)
			return NULL;
		sib_pkt(skb)->npkts = npkts;
		if (!sib_mr_add_frags(mr, iova, skb, paylen) &&
		    !sib_pkt_frags_done(qp, skb, mode)) {
			if (npkts > 1)
				sib_count(qp->sdev, SIB_CNT_LOCAL_BURSTS);
			return skb;
		}
		kfree_skb(skb);
	}
	skb = sib_pkt_alloc(qp, opcode, paylen, psn, false);
	if (!skb)
		return NULL;
	sib_pkt(skb)->npkts = npkts;
	/* A dma-buf MR revoked since the lookup: as if no memory. */
	if (paylen && sib_mr_copy(mr, iova, sib_pkt_payload(skb), paylen,
				  SIB_FROM_MEM)) {
		kfree_skb(skb);
		return NULL;
	}
	return skb;
}
