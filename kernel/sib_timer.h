/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the requester's timers (sib_timer.c), of the engines: the local
 * ACK timeout and the RNR back-off.
 */
#ifndef SIB_TIMER_H
#define SIB_TIMER_H

#include <linux/types.h>

struct sib_qp;
struct timer_list;

void sib_timer_arm(struct sib_qp *qp);
void sib_timer_restart(struct sib_qp *qp);
void sib_timer_stop(struct sib_qp *qp);
bool sib_timer_expired(struct sib_qp *qp);
void sib_retrans_timer(struct timer_list *t);
void sib_rnr_timer(struct timer_list *t);

#endif /* SIB_TIMER_H */
