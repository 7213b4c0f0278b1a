// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: address handles and the unreliable datagram (UD) service.
 *
 * A UD send WQE names its destination through an AH number, which the
 * kernel resolves (and checks against the QP's PD) when it sends. A UD
 * message is a single packet with a DETH (Q_Key and source QP). The
 * receiver puts the 40-byte GRH area in front of the payload: for RoCEv2
 * that is the IPv6 header, or 20 unused bytes and the IPv4 header
 * (IBA A17.4.5.1), so that ibv_init_ah_from_wc() can answer the sender.
 */
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <net/ip.h>
#include <rdma/uverbs_ioctl.h>

#include "sib_copy.h"
#include "sib_cq.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_req.h"
#include "sib_resp.h"
#include "sib_task.h"
#include "sib_ud.h"

#define SIB_GRH_LEN	40

/* ---- address handles --------------------------------------------------- */

int sib_create_ah(struct ib_ah *ib_ah, struct rdma_ah_init_attr *init,
		  struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_ah->device);
	struct sib_ah *ah = to_sah(ib_ah);
	gfp_t gfp = (init->flags & RDMA_CREATE_AH_SLEEPABLE) ? GFP_KERNEL :
		    GFP_ATOMIC;
	struct sib_create_ah_resp resp = {};
	int ret;

	if (!(rdma_ah_get_ah_flags(init->ah_attr) & IB_AH_GRH))
		return -EINVAL;	/* RoCE needs a GRH */
	if (atomic_inc_return(&sdev->num_ah) > SIB_MAX_AH) {
		ret = -ENOMEM;
		goto err;
	}
	ah->entry = kzalloc(sizeof(*ah->entry), gfp);
	if (!ah->entry) {
		ret = -ENOMEM;
		goto err;
	}
	sib_av_from_attr(&ah->entry->av, init->ah_attr, 0, 0);
	ah->entry->pd = ib_ah->pd;
	ret = xa_alloc(&sdev->ah_xa, &ah->ah_num, ah->entry,
		       XA_LIMIT(1, SIB_MAX_AH), gfp);
	if (ret)
		goto err_free;
	if (udata && udata->outlen) {
		resp.ah_num = ah->ah_num;
		ret = ib_copy_to_udata(udata, &resp,
				       min_t(size_t, udata->outlen,
					     sizeof(resp)));
		if (ret) {
			xa_erase(&sdev->ah_xa, ah->ah_num);
			goto err_free;
		}
	}
	return 0;

err_free:
	/* Never published, or erased: a reader may still hold it. */
	kfree_rcu(ah->entry, rcu);
err:
	atomic_dec(&sdev->num_ah);
	return ret;
}

/*
 * The UD QPs of @pd send what they hold before an AH goes: a send WQE
 * names its AH by number, resolved when it is sent, while a NIC copies
 * the address vector into the WQE at the post, so that destroying the
 * AH right after posting (as rdma-core's mckey does) loses nothing.
 */
static void sib_ah_run_out(struct sib_dev *sdev, struct ib_pd *pd)
{
	struct sib_qp *qp;
	unsigned long qpn;
	void *entry;

	xa_for_each(&sdev->qp_xa, qpn, entry) {
		qp = sib_qp_get(sdev, qpn);
		if (!qp)
			continue;
		if (sib_qp_type(qp) == IB_QPT_UD && qp->ib_qp.pd == pd)
			sib_qp_run_out(qp);
		sib_qp_put(qp);
	}
}

int sib_destroy_ah(struct ib_ah *ib_ah, u32 flags)
{
	struct sib_dev *sdev = to_sdev(ib_ah->device);
	struct sib_ah *ah = to_sah(ib_ah);

	if (flags & RDMA_DESTROY_AH_SLEEPABLE)
		sib_ah_run_out(sdev, ib_ah->pd);
	xa_erase(&sdev->ah_xa, ah->ah_num);
	/* The requester may be copying the AV under RCU (any context). */
	kfree_rcu(ah->entry, rcu);
	atomic_dec(&sdev->num_ah);
	return 0;
}

int sib_query_ah(struct ib_ah *ib_ah, struct rdma_ah_attr *attr)
{
	struct sib_av *av = &to_sah(ib_ah)->entry->av;

	memset(attr, 0, sizeof(*attr));
	attr->type = RDMA_AH_ATTR_TYPE_ROCE;
	rdma_ah_set_port_num(attr, 1);
	rdma_ah_set_grh(attr, &av->dgid, av->flow_label, 0,
			av->hop_limit, av->traffic_class);
	memcpy(attr->roce.dmac, av->dmac, ETH_ALEN);
	return 0;
}

/* Copy the AV of AH @num, which must belong to @pd. */
static int sib_ah_av(struct sib_dev *sdev, struct ib_pd *pd, u32 num,
		     struct sib_av *av)
{
	struct sib_ah_entry *e;
	int ret = -EINVAL;

	rcu_read_lock();
	e = xa_load(&sdev->ah_xa, num);
	if (e && e->pd == pd) {
		*av = e->av;
		ret = 0;
	}
	rcu_read_unlock();
	return ret;
}

/* ---- sending ----------------------------------------------------------- */

/*
 * Put the IP header a RoCEv2 packet from @av would carry in front of the
 * BTH, as the network header. On the wire the same header is rebuilt;
 * on the local path it tells the receiver who sent the datagram.
 */
static void sib_ud_push_iphdr(struct sk_buff *skb, const struct sib_av *av,
			      u32 len)
{
	if (av->network_type == RDMA_NETWORK_IPV4) {
		struct iphdr *ip = skb_push(skb, sizeof(*ip));

		memset(ip, 0, sizeof(*ip));
		ip->version = 4;
		ip->ihl = 5;
		ip->tos = av->traffic_class;
		ip->tot_len = htons(sizeof(*ip) + sizeof(struct udphdr) + len);
		ip->ttl = av->hop_limit;
		ip->protocol = IPPROTO_UDP;
		memcpy(&ip->saddr, av->sgid.raw + 12, 4);
		memcpy(&ip->daddr, av->dgid.raw + 12, 4);
		ip->check = ip_fast_csum(ip, ip->ihl);
		skb_reset_network_header(skb);
		skb_pull(skb, sizeof(*ip));
	} else {
		struct ipv6hdr *ip6 = skb_push(skb, sizeof(*ip6));

		memset(ip6, 0, sizeof(*ip6));
		ip6_flow_hdr(ip6, av->traffic_class,
			     htonl(av->flow_label & IB_GRH_FLOWLABEL_MASK));
		ip6->payload_len = htons(sizeof(struct udphdr) + len);
		ip6->nexthdr = IPPROTO_UDP;
		ip6->hop_limit = av->hop_limit;
		memcpy(&ip6->saddr, av->sgid.raw, 16);
		memcpy(&ip6->daddr, av->dgid.raw, 16);
		skb_reset_network_header(skb);
		skb_pull(skb, sizeof(*ip6));
	}
}

/* Build and send the one packet of a UD SEND; the WQE is then done. */
int sib_ud_send(struct sib_qp *qp, struct sib_swqe *s)
{
	struct sib_send_wqe *w = s->wr;
	u8 op = w->opcode == IB_WR_SEND_WITH_IMM ?
		IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE : IB_OPCODE_UD_SEND_ONLY;
	u32 dqpn = w->wr.ud.remote_qpn & SIB_QPN_MASK;
	u32 qkey = w->wr.ud.remote_qkey;
	struct sib_deth *deth;
	struct sk_buff *skb;
	struct sib_av av;
	int ret;

	if (sib_ah_av(qp->sdev, qp->ib_qp.pd, w->wr.ud.ah_handle, &av)) {
		s->status = IB_WC_LOC_QP_OP_ERR;
		s->state = SIB_SWQE_DONE;
		return 0;
	}
	skb = sib_pkt_alloc(qp, op, s->len, qp->req.psn, false);
	if (!skb)
		return -ENOMEM;
	((struct sib_bth *)skb->data)->qpn = cpu_to_be32(dqpn);
	sib_pkt(skb)->qpn = dqpn;
	deth = sib_pkt_eth(skb, SIB_OP_DETH);
	/* IBA 10.2.5: a Q_Key with the high bit set means the QP's own. */
	deth->qkey = cpu_to_be32((qkey & SIB_QKEY_CONTROLLED) ?
				 qp->attr.qkey : qkey);
	deth->sqp = cpu_to_be32(sib_qpn(qp));
	if (op == IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE)
		*(__be32 *)sib_pkt_eth(skb, SIB_OP_IMMDT) = w->ex.imm_data;
	if (w->send_flags & IB_SEND_SOLICITED) {
		((struct sib_bth *)skb->data)->flags |= SIB_BTH_SE;
		sib_pkt(skb)->se = true;
	}

	ret = sib_req_gather(qp, s, sib_pkt_payload(skb), s->len);
	if (ret == -EAGAIN) {
		kfree_skb(skb);
		return sib_req_odp_wait(qp);
	}
	if (ret) {
		kfree_skb(skb);
		s->status = ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
			    IB_WC_LOC_PROT_ERR;
		s->state = SIB_SWQE_DONE;
		return 0;
	}
	av.udp_sport = rdma_get_udp_sport(av.flow_label, sib_qpn(qp), dqpn);
	sib_ud_push_iphdr(skb, &av, skb->len);
	s->first_psn = qp->req.psn;
	s->last_psn = qp->req.psn;
	qp->req.psn = sib_psn_add(qp->req.psn, 1);
	s->state = SIB_SWQE_DONE;
	sib_pkt_send_av(qp, skb, &av);
	return 0;
}

/* ---- receiving ----------------------------------------------------------- */

/* Fill the 40-byte GRH area from the packet's IP header (IBA A17.4.5.1). */
static void sib_ud_grh(struct sk_buff *skb, u8 *grh, u8 *net_type)
{
	memset(grh, 0, SIB_GRH_LEN);
	if (ip_hdr(skb)->version == 4) {
		memcpy(grh + 20, skb_network_header(skb), sizeof(struct iphdr));
		*net_type = RDMA_NETWORK_IPV4;
	} else {
		memcpy(grh, skb_network_header(skb), sizeof(struct ipv6hdr));
		*net_type = RDMA_NETWORK_IPV6;
	}
}

void sib_ud_recv(struct sib_qp *qp, struct sk_buff *skb)
{
	struct sib_pkt *pkt = sib_pkt(skb);
	struct sib_deth *deth = sib_pkt_eth(skb, SIB_OP_DETH);
	struct sib_cqe cqe = {
		.opcode = SIB_WC_RECV,
		.qp_num = sib_qpn(qp),
		.wc_flags = SIB_WC_F_GRH,
	};
	struct sib_sgl_pos pos = {};
	struct sib_rwqe rwqe;
	u8 grh[SIB_GRH_LEN];
	int ret;

	if (be32_to_cpu(deth->qkey) != qp->attr.qkey) {
		sib_count(qp->sdev, SIB_CNT_QKEY_VIOL);
		return;		/* IBA 10.2.5: silently dropped */
	}
	if (sib_rq_take_dgram(qp, &rwqe))
		return;		/* no receive posted: UD drops */

	cqe.wr_id = rwqe.wr_id;
	cqe.src_qp = be32_to_cpu(deth->sqp) & SIB_QPN_MASK;
	cqe.byte_len = SIB_GRH_LEN + pkt->paylen;
	sib_ud_grh(skb, grh, &cqe.network_hdr_type);
	ret = sib_sgl_copy(qp->sdev, qp->ib_qp.pd, sib_qpn(qp), rwqe.sge,
			   rwqe.num_sge, &pos, grh, SIB_GRH_LEN, SIB_TO_MEM);
	if (!ret)
		ret = sib_sgl_copy_skb(qp->sdev, qp->ib_qp.pd, sib_qpn(qp),
				       rwqe.sge, rwqe.num_sge, &pos, skb,
				       pkt->hdr_len, pkt->paylen, SIB_TO_MEM);
	if (ret)
		cqe.status = ret == -EMSGSIZE ? IB_WC_LOC_LEN_ERR :
			     IB_WC_LOC_PROT_ERR;
	if (pkt->flags & SIB_OP_IMMDT) {
		cqe.ex = *(u32 *)sib_pkt_eth(skb, SIB_OP_IMMDT);
		cqe.wc_flags |= SIB_WC_F_WITH_IMM;
	}
	if (sib_cq_post(sib_qp_rcq(qp), &cqe, pkt->se))
		sib_qp_fatal(qp, IB_EVENT_QP_FATAL);
}
