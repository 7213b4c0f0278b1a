/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the responder's RDMA READ and atomic side (sib_resp_rd.c): READs,
 * atomics, ATOMIC WRITEs, FLUSHes and duplicate requests, as sib_resp.c hands them over.
 */
#ifndef SIB_RESP_RD_H
#define SIB_RESP_RD_H

#include <linux/types.h>

struct sib_qp;
struct sk_buff;

/* READ responses one pass sends at most, in PSNs (sib_resp_rd.c). */
#define SIB_READ_SLICE		256

int sib_resp_read(struct sib_qp *qp, struct sk_buff *skb);
int sib_resp_atomic(struct sib_qp *qp, struct sk_buff *skb);
int sib_resp_atomic_write(struct sib_qp *qp, struct sk_buff *skb);
int sib_resp_flush(struct sib_qp *qp, struct sk_buff *skb);
void sib_resp_duplicate(struct sib_qp *qp, struct sk_buff *skb);
bool sib_resp_read_busy(struct sib_qp *qp);

#endif /* SIB_RESP_RD_H */
