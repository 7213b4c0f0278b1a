/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the requester (sib_req.c), which turns send WQEs into packets.
 */
#ifndef SIB_REQ_H
#define SIB_REQ_H

#include <linux/types.h>

struct sib_qp;
struct sib_swqe;

void sib_requester(struct sib_qp *qp);
int sib_req_odp_wait(struct sib_qp *qp);
int sib_req_gather(struct sib_qp *qp, struct sib_swqe *s, void *buf,
		   u32 len);

#endif /* SIB_REQ_H */
