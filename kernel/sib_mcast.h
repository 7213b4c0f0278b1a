/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: multicast groups (sib_mcast.c).
 */
#ifndef SIB_MCAST_H
#define SIB_MCAST_H

#include <rdma/ib_verbs.h>

struct sib_dev;
struct sk_buff;

void sib_mcast_init(struct sib_dev *sdev);
void sib_mcast_fini(struct sib_dev *sdev);
int sib_attach_mcast(struct ib_qp *ib_qp, union ib_gid *gid, u16 lid);
int sib_detach_mcast(struct ib_qp *ib_qp, union ib_gid *gid, u16 lid);
void sib_mcast_rcv(struct sib_dev *sdev, struct sk_buff *skb);

#endif /* SIB_MCAST_H */
