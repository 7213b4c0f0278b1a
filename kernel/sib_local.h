/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the local path (sib_local.c): packets, and ACKs without packets,
 * between QPs of one device.
 */
#ifndef SIB_LOCAL_H
#define SIB_LOCAL_H

#include <linux/types.h>

struct sib_av;
struct sib_dev;
struct sib_pass;
struct sib_qp;
struct sk_buff;

void sib_accept_local(struct sib_dev *sdev, struct sk_buff *skb,
		      struct sib_pass *pass);
void sib_deliver_local(struct sib_qp *qp, struct sk_buff *skb,
		       const struct sib_av *av);
bool sib_ack_local(struct sib_qp *qp, u32 psn, u32 smsn);

#endif /* SIB_LOCAL_H */
