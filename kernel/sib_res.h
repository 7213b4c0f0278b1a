/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Resource tracking views (sib_res.c): driver attributes of RDMA netlink,
 * and the device's object counts in debugfs.
 */
#ifndef SIB_RES_H
#define SIB_RES_H

struct dentry;
struct sk_buff;
struct ib_qp;
struct ib_cq;
struct sib_dev;

int sib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ib_qp);
int sib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ib_cq);
void sib_res_debugfs(struct sib_dev *sdev, struct dentry *dir);

#endif /* SIB_RES_H */
