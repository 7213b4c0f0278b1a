/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Resource tracking views (sib_res.c): driver attributes of RDMA netlink,
 * and the device's object counts and per-QP views in debugfs.
 */
#ifndef SIB_RES_H
#define SIB_RES_H

struct dentry;
struct sk_buff;
struct ib_qp;
struct ib_cq;
struct sib_dev;
struct sib_qp;

int sib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ib_qp);
int sib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ib_cq);
void sib_res_debugfs(struct sib_dev *sdev, struct dentry *dir);
void sib_res_qp_add(struct sib_qp *qp);
void sib_res_qp_del(struct sib_qp *qp);

#endif /* SIB_RES_H */
