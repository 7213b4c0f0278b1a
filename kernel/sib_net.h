/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: where packets go, and RoCEv2 out (sib_net.c): the route cache, the
 * encapsulation, and the transmit batch of an engine pass.
 */
#ifndef SIB_NET_H
#define SIB_NET_H

#include <linux/types.h>

struct sib_av;
struct sib_pass;
struct sib_qp;
struct sk_buff;
struct timer_list;

bool sib_route_local(struct sib_qp *qp, const struct sib_av *av);
void sib_pkt_send(struct sib_qp *qp, struct sk_buff *skb);
void sib_pkt_send_av(struct sib_qp *qp, struct sk_buff *skb,
		     const struct sib_av *av);
void sib_pass_tx(struct sib_pass *d);
bool sib_wire_busy(struct sib_qp *qp);
void sib_tx_timer(struct timer_list *t);
void sib_rx_wake(struct sib_qp *qp);
void sib_net_qp_fini(struct sib_qp *qp);
bool sib_av_is_v4(const struct sib_av *av);
void sib_push_udp(struct sk_buff *skb, u16 sport);
void sib_push_ip(struct sk_buff *skb, const struct sib_av *av, u8 hop_limit);

#endif /* SIB_NET_H */
