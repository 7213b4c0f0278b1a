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
struct sib_pkt;
struct sk_buff;

/**
 * enum sib_rx_verdict - may a packet enter its QP's input queue?
 * @SIB_RX_ACCEPT:	yes: it is queued, and counted in rcvd_pkts
 * @SIB_RX_ICRC_ERROR:	no, its ICRC is wrong (icrc_errors)
 * @SIB_RX_HDR_ERROR:	no, its framing, a header or its length is bad
 *			(hdr_errors)
 * @SIB_RX_UNKNOWN_QPN:	no, there is no such QP, or the QP takes nothing
 *			from the sender (unknown_qpn)
 * @SIB_RX_QUEUE_FULL:	no, the QP's input queue is full (rx_queue_full)
 *
 * The checks of the wire (sib_recv.c), of the local path (sib_local.c)
 * and of multicast (sib_mcast.c) end in one of these; a packet refused is
 * counted under the counter named, and shows as a sib_pkt_drop event
 * (sib_rx_drop()).
 */
enum sib_rx_verdict {
	SIB_RX_ACCEPT,
	SIB_RX_ICRC_ERROR,
	SIB_RX_HDR_ERROR,
	SIB_RX_UNKNOWN_QPN,
	SIB_RX_QUEUE_FULL,
};

unsigned int sib_rx_cnt(enum sib_rx_verdict v);
void sib_rx_drop(struct sib_dev *sdev, struct sk_buff *skb,
		 const struct sib_pkt *pkt, enum sib_rx_verdict v);
void sib_pkt_rcv(struct sib_dev *sdev, struct sk_buff *skb);
void sib_rx_fault(struct sib_dev *sdev, struct sk_buff *skb, u32 dir,
		  struct sib_pass *pass);
void sib_fault_deliver(struct sib_dev *sdev, struct sk_buff *skb);

#endif /* SIB_RECV_H */
