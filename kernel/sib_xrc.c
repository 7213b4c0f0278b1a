// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the eXtended Reliable Connected transport (IBA 14.2, 9.3.6).
 *
 * An XRC_INI QP is an RC requester without a receive queue; each request
 * names, in its XRCETH, an XRC SRQ at the far end. An XRC_TGT QP is an RC
 * responder without a send queue, owned by an XRC domain rather than a PD:
 * each request it takes goes to the SRQ its XRCETH names, which must be an
 * XRC SRQ of the same domain; memory is checked against that SRQ's PD and
 * the receive completion goes to that SRQ's CQ. A request naming any other
 * SRQ is an invalid request: NAKed, and the TGT QP goes to the error state.
 *
 * Life times. ib_core holds the domain while SRQs and TGT QPs use it, and
 * the TGT QP while any process has it open (ibv_open_qp()). It does not
 * tie an XRC SRQ to the TGT QPs that deliver into it: an SRQ may be
 * destroyed at any time. So the responder looks the SRQ up by number for
 * every packet and holds a reference on it while the packet executes
 * (sib_xrc_resp_begin() to sib_xrc_resp_end(), under the QP's engine
 * mutex); sib_destroy_srq() unpublishes the SRQ and waits for those
 * references. Between packets only the number is kept.
 */
#include "sib_hdr.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_srq.h"
#include "sib_xrc.h"

int sib_alloc_xrcd(struct ib_xrcd *ib_xrcd, struct ib_udata *udata)
{
	return 0;
}

int sib_dealloc_xrcd(struct ib_xrcd *ib_xrcd, struct ib_udata *udata)
{
	return 0;
}

/*
 * The opcode a packet of @qp goes out with: XRC QPs send RC's opcodes in
 * the XRC class. @opcode is an RC opcode.
 */
u8 sib_xrc_opcode(struct sib_qp *qp, u8 opcode)
{
	if (!sib_qpt_is_xrc(qp->ib_qp.qp_type))
		return opcode;
	return SIB_OPCODE_XRC | (opcode & SIB_OPCODE_OP_MASK);
}

/* The XRCETH of a request built from send WQE @w, if it has one. */
void sib_xrc_fill(struct sk_buff *skb, const struct sib_send_wqe *w)
{
	struct sib_xrceth *x;

	if (!(sib_pkt(skb)->flags & SIB_OP_XRCETH))
		return;
	x = sib_pkt_eth(skb, SIB_OP_XRCETH);
	x->srqn = cpu_to_be32(w->wr.xrc.remote_srqn & SIB_XRC_SRQN_MASK);
}

/*
 * Does a packet of transport @flags belong to @qp? RC QPs take RC packets,
 * XRC_TGT QPs XRC requests, XRC_INI QPs XRC responses.
 */
bool sib_xrc_transport_ok(struct sib_qp *qp, u32 flags)
{
	switch (qp->ib_qp.qp_type) {
	case IB_QPT_RC:
		return (flags & SIB_OP_RC) && !(flags & SIB_OP_XRC);
	case IB_QPT_XRC_INI:
		return (flags & SIB_OP_XRC) && (flags & SIB_OP_RESP);
	case IB_QPT_XRC_TGT:
		return (flags & SIB_OP_XRC) && (flags & SIB_OP_REQ);
	default:
		return false;
	}
}

/*
 * The XRC SRQ number @srqn as seen from TGT QP @qp: an XRC SRQ of the
 * QP's domain, with a reference (sib_srq_put()), or NULL.
 */
struct sib_srq *sib_xrc_srq_get(struct sib_qp *qp, u32 srqn)
{
	struct sib_srq *srq = sib_srq_get(qp->sdev, srqn);

	if (!srq)
		return NULL;
	if (srq->ib_srq.srq_type != IB_SRQT_XRC || !qp->xrcd ||
	    srq->xrcd != qp->xrcd) {
		sib_srq_put(srq);
		return NULL;
	}
	return srq;
}

/**
 * sib_xrc_resp_begin - find the SRQ of a request to an XRC_TGT QP
 * @qp:		the TGT QP; its engine mutex is held
 * @skb:	the request (its XRCETH is within the parsed header)
 *
 * Sets qp->resp.xsrq, with a reference that sib_xrc_resp_end() drops.
 *
 * Return: 0, or -EINVAL when the XRCETH names no XRC SRQ of the QP's
 * domain (the caller NAKs: Invalid Request).
 */
int sib_xrc_resp_begin(struct sib_qp *qp, struct sk_buff *skb)
{
	const struct sib_xrceth *x = sib_pkt_eth(skb, SIB_OP_XRCETH);
	u32 srqn = be32_to_cpu(x->srqn) & SIB_XRC_SRQN_MASK;

	lockdep_assert_held(&qp->engine);
	qp->resp.xsrq = sib_xrc_srq_get(qp, srqn);
	return qp->resp.xsrq ? 0 : -EINVAL;
}

void sib_xrc_resp_end(struct sib_qp *qp)
{
	lockdep_assert_held(&qp->engine);
	if (!qp->resp.xsrq)
		return;
	sib_srq_put(qp->resp.xsrq);
	qp->resp.xsrq = NULL;
}

/*
 * Complete @cqe, the flush of the receive WQE an XRC_TGT QP was receiving
 * a message into, on the CQ of the SRQ it came from; if that SRQ is gone,
 * so is the claim of its owner to the WQE.
 */
void sib_xrc_flush_rwqe(struct sib_qp *qp, struct sib_cqe *cqe)
{
	struct sib_srq *srq = sib_xrc_srq_get(qp, qp->resp.xsrqn);

	lockdep_assert_held(&qp->engine);
	if (!srq)
		return;
	sib_cq_post(to_scq(srq->ib_srq.ext.cq), cqe, false);
	sib_srq_put(srq);
}
