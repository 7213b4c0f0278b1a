/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: running a QP's engines (sib_task.c), and the context of one run,
 * struct sib_pass, where the engines' passes leave what must wait until
 * no engine is held.
 */
#ifndef SIB_TASK_H
#define SIB_TASK_H

#include <linux/types.h>

struct sib_dev;
struct sib_qp;
struct sk_buff;
struct work_struct;

/* QPs to kick later, in process context (sib_task.c). */
#define SIB_PASS_QP_MAX		16
/* RoCEv2 packets of one pass sent together, at most (sib_net.c). */
#define SIB_TX_BATCH_MAX	16

/**
 * struct sib_pass - what waits for the end of a transmission or a pass
 * @n:		entries of @qp used
 * @head:	entries of @qp already taken (run), in the order parked
 * @qp:		QPs to kick, each with a reference
 * @ntx:	entries of @tx used
 * @tx:		RoCEv2 packets of the pass, ready to go (headers and ICRC
 *		in place, route attached), in the order they were built
 * @tx_sdev:	the device that sends @tx
 *
 * Lives on the stack of whoever runs engines (sib_qp_drive()): each pass
 * of those engines parks there the QPs it delivered local packets or
 * ACKs to, and the QPs that its RoCEv2 packets reached in the softirq
 * that runs inside their transmission (sib_tx_out()); the owner runs
 * them, one at a time, once it holds no engine. A wire transmission
 * outside a pass (sib_xmit()) has one of its own, whose QPs go to
 * sib_wq. Only the pass running touches @tx and @tx_sdev, under its QP's
 * engine mutex, and sends them before it ends (sib_pass_tx()); @n and
 * @qp are also written by the receive softirq of the owner's CPU, while
 * the owner has it installed there (preemption off).
 */
struct sib_pass {
	unsigned int n;
	unsigned int head;
	struct sib_qp *qp[SIB_PASS_QP_MAX];
	unsigned int ntx;
	struct sk_buff *tx[SIB_TX_BATCH_MAX];
	struct sib_dev *tx_sdev;
};

bool sib_pass_add(struct sib_pass *d, struct sib_qp *qp);
void sib_qp_sched(struct sib_qp *qp);
void sib_qp_kick(struct sib_qp *qp);
void sib_qp_run_sync(struct sib_qp *qp);
void sib_qp_run_out(struct sib_qp *qp);
void sib_qp_doorbell(struct sib_qp *qp, bool rq, bool stream);
void sib_qp_work(struct work_struct *work);
void sib_qp_async_work(struct work_struct *work);

#endif /* SIB_TASK_H */
