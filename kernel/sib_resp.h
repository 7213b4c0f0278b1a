/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the responder (sib_resp.c), which executes request packets and
 * answers them.
 */
#ifndef SIB_RESP_H
#define SIB_RESP_H

#include <linux/types.h>

struct sib_qp;
struct sib_rwqe;
struct sk_buff;

/* How the responder fails a request it refuses (sib_resp_nak()). */
enum sib_resp_err {
	SIB_RESP_FATAL,		/* QP to error, affiliated async error */
	SIB_RESP_FATAL_CQE,	/* QP to error; a receive completion told */
};

/*
 * The responder's verdict on a request packet (sib_responder()), as the
 * sib_resp_verdict tracepoint reports it.
 */
enum sib_resp_verdict {
	SIB_RV_OK,		/* executed (a READ: its responses start) */
	SIB_RV_DUP,		/* a duplicate: acknowledged or replayed */
	SIB_RV_SEQ_ERR,		/* a PSN gap: a sequence error NAK (once) */
	SIB_RV_RNR,		/* no receive WQE: an RNR NAK */
	SIB_RV_NAK,		/* refused: a NAK, and the QP to error */
	SIB_RV_UC_DROP,		/* UC: the message is dropped */
	SIB_RV_UD,		/* handed to the datagram receive path */
	SIB_RV_IGNORED,		/* wrong state or transport: dropped */
};

void sib_responder(struct sib_qp *qp, struct sk_buff *skb);
int sib_rq_take(struct sib_qp *qp, struct sib_rwqe *rwqe);
int sib_rq_take_dgram(struct sib_qp *qp, struct sib_rwqe *rwqe);

/* The answers, for sib_resp_rd.c too. */
__be32 sib_aeth_val(struct sib_qp *qp, u8 syn);
void sib_resp_ack(struct sib_qp *qp, u32 psn, u8 syn);
int sib_resp_odp_rnr(struct sib_qp *qp, u32 psn);
void sib_resp_nak(struct sib_qp *qp, u32 psn, u8 code,
		  enum sib_resp_err how);

#endif /* SIB_RESP_H */
