/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the ICRC of RoCEv2 packets (sib_icrc.c).
 */
#ifndef SIB_ICRC_H
#define SIB_ICRC_H

#include <linux/types.h>

struct sk_buff;

#define SIB_ICRC_LEN	4
u32 sib_icrc(struct sk_buff *skb);

#endif /* SIB_ICRC_H */
