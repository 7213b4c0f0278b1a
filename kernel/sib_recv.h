/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: receiving RoCEv2 packets (sib_recv.c): the checks of a packet off
 * the wire, and the fault layer's way back in.
 */
#ifndef SIB_RECV_H
#define SIB_RECV_H

#include <linux/types.h>

struct sib_dev;
struct sib_pass;
struct sk_buff;

void sib_pkt_rcv(struct sib_dev *sdev, struct sk_buff *skb);
void sib_rx_fault(struct sib_dev *sdev, struct sk_buff *skb, u32 dir,
		  struct sib_pass *pass);
void sib_fault_deliver(struct sib_dev *sdev, struct sk_buff *skb);

#endif /* SIB_RECV_H */
