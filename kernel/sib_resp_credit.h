/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the responder's end-to-end credits (sib_resp_credit.c), of the
 * engines: what ACKs advertise, and credit updates.
 */
#ifndef SIB_RESP_CREDIT_H
#define SIB_RESP_CREDIT_H

#include <linux/types.h>

struct sib_qp;

u32 sib_credit_count(u8 code);
u8 sib_ack_syndrome(struct sib_qp *qp);
void sib_resp_starve(struct sib_qp *qp);
void sib_resp_credit_update(struct sib_qp *qp);
bool sib_rq_posted(struct sib_qp *qp);

#endif /* SIB_RESP_CREDIT_H */
