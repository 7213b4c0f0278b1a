/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the completer (sib_comp.c), which turns responses into send
 * completions and acts on the requester's timers (sib_timer.h).
 */
#ifndef SIB_COMP_H
#define SIB_COMP_H

struct sib_qp;
struct sk_buff;

/*
 * The completer's verdict on a response (an ACK-type packet, a local ACK,
 * a READ response or an atomic ACK), as the sib_comp_verdict tracepoint
 * reports it.
 */
enum sib_comp_verdict {
	SIB_CV_ACK,		/* acknowledges new PSNs */
	SIB_CV_DUP_ACK,		/* the PSN acknowledged last (or older): credits */
	SIB_CV_IMPLIED_NAK,	/* passes a READ or atomic: go back */
	SIB_CV_RNR,		/* an RNR NAK: wait, then send again */
	SIB_CV_SEQ_NAK,		/* a sequence error NAK: go back */
	SIB_CV_ERR_NAK,		/* a NAK the WQE fails with */
	SIB_CV_RESP,		/* the READ response or atomic ACK expected */
	SIB_CV_RESP_GAP,	/* a response missing before it: go back */
	SIB_CV_STALE,		/* outside the window, a duplicate: ignored */
};

void sib_completer(struct sib_qp *qp, struct sk_buff *skb);
void sib_comp_local_ack(struct sib_qp *qp);
void sib_comp_run(struct sib_qp *qp);
void sib_comp_timers(struct sib_qp *qp);

#endif /* SIB_COMP_H */
