/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/* Resource tracking views (sib_res.c): driver attributes of RDMA netlink. */
#ifndef SIB_RES_H
#define SIB_RES_H

struct sk_buff;
struct ib_qp;
struct ib_cq;

int sib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ib_qp);
int sib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ib_cq);

#endif /* SIB_RES_H */
