/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the requester (sib_req.c), which turns send WQEs into packets.
 */
#ifndef SIB_REQ_H
#define SIB_REQ_H

#include <linux/types.h>

struct sib_qp;
struct sib_swqe;

/**
 * enum sib_req_wait - may the WQE at the requester's index go now?
 * @SIB_REQ_GO:		yes
 * @SIB_REQ_WAIT_SQD:	the QP is draining its SQ (SQD): no new WQE starts
 * @SIB_REQ_WAIT_PROBE:	after a local ACK timeout only the probe, the
 *			oldest unacknowledged WQE, goes until the peer
 *			answers (struct sib_req, @probe)
 * @SIB_REQ_WAIT_FENCE:	a fenced WQE waits for the READs and atomics
 *			before it to complete
 * @SIB_REQ_WAIT_RD_ATOMIC: a READ or atomic waits for one of the
 *			max_rd_atomic outstanding ones to complete
 * @SIB_REQ_WAIT_WINDOW: SIB_MAX_INFLIGHT PSNs are unacknowledged
 * @SIB_REQ_WAIT_CREDIT: a message that takes a receive WQE waits for the
 *			responder's credit (sib_req_have_credit())
 *
 * The requester stops at the first WQE that may not go, and goes on when
 * an ACK, a completion, a credit update or a timer runs the engines again.
 */
enum sib_req_wait {
	SIB_REQ_GO,
	SIB_REQ_WAIT_SQD,
	SIB_REQ_WAIT_PROBE,
	SIB_REQ_WAIT_FENCE,
	SIB_REQ_WAIT_RD_ATOMIC,
	SIB_REQ_WAIT_WINDOW,
	SIB_REQ_WAIT_CREDIT,
};

void sib_requester(struct sib_qp *qp);
int sib_req_odp_wait(struct sib_qp *qp);
int sib_req_gather(struct sib_qp *qp, struct sib_swqe *s, void *buf,
		   u32 len);

#endif /* SIB_REQ_H */
