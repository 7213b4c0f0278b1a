/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the requester's go-back-N (sib_req_retry.c).
 */
#ifndef SIB_REQ_RETRY_H
#define SIB_REQ_RETRY_H

#include <linux/types.h>

struct sib_qp;

void sib_req_rewind(struct sib_qp *qp, u32 psn);
void sib_req_forward(struct sib_qp *qp, u32 psn);

#endif /* SIB_REQ_RETRY_H */
