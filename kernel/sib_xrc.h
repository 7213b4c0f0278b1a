/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the eXtended Reliable Connected transport (sib_xrc.c): XRC domains,
 * the rules that tie XRC SRQs and XRC_TGT QPs to their domain, and the
 * XRCETH of XRC requests.
 */
#ifndef SIB_XRC_H
#define SIB_XRC_H

#include <rdma/ib_verbs.h>

struct sib_qp;
struct sib_srq;
struct sk_buff;
struct sib_send_wqe;
struct sib_cqe;

/**
 * struct sib_xrcd - an XRC domain
 * @ib_xrcd:	ib_core object; must stay first
 *
 * ib_core counts its users (XRC SRQs, XRC_TGT QPs, the processes that
 * opened it through a file) and refuses to free it while any is left;
 * sib keeps no state of its own in it.
 */
struct sib_xrcd {
	struct ib_xrcd ib_xrcd;
};

/* An XRC QP of either side: RC's reliable service, XRC's opcodes. */
static inline bool sib_qpt_is_xrc(enum ib_qp_type type)
{
	return type == IB_QPT_XRC_INI || type == IB_QPT_XRC_TGT;
}

int sib_alloc_xrcd(struct ib_xrcd *ib_xrcd, struct ib_udata *udata);
int sib_dealloc_xrcd(struct ib_xrcd *ib_xrcd, struct ib_udata *udata);
u8 sib_xrc_opcode(struct sib_qp *qp, u8 opcode);
void sib_xrc_fill(struct sk_buff *skb, const struct sib_send_wqe *w);
bool sib_xrc_transport_ok(struct sib_qp *qp, u32 flags);
int sib_xrc_resp_begin(struct sib_qp *qp, struct sk_buff *skb);
void sib_xrc_resp_end(struct sib_qp *qp);
struct sib_srq *sib_xrc_srq_get(struct sib_qp *qp, u32 srqn);
void sib_xrc_flush_rwqe(struct sib_qp *qp, struct sib_cqe *cqe);

#endif /* SIB_XRC_H */
