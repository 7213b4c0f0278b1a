/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: completion queues (sib_cq.c), of the verbs layer: the CQ object,
 * its verbs, and how the engines post completions into it.
 */
#ifndef SIB_CQ_H
#define SIB_CQ_H

#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sib_compat.h"
#include "sib_queue.h"

/**
 * struct sib_cq - completion queue
 * @ib_cq:	the ib_core object; must stay first
 * @q:		the ring; the kernel produces, the consumer is the process
 *		(user CQ) or sib_poll_cq() (kernel CQ)
 * @lock:	guards @q's producer side and consumer side (kernel CQ),
 *		@notify and @error; taken with interrupts off, since
 *		completions may be posted from any context
 * @notify:	armed notification (IB_CQ_NEXT_COMP or IB_CQ_SOLICITED), or 0
 * @error:	an overrun happened (IBA 11.4.2.1); no more CQEs are posted
 * @timestamp:	write the completion time into each CQE (set at creation)
 */
struct sib_cq {
	struct ib_cq ib_cq;
	struct sib_queue q;
	spinlock_t lock;	/* see above */
	u8 notify;
	bool error;
	bool timestamp;
};

static inline struct sib_cq *to_scq(struct ib_cq *ib_cq)
{
	return container_of(ib_cq, struct sib_cq, ib_cq);
}

int sib_create_cq(struct ib_cq *ib_cq, const struct ib_cq_init_attr *attr,
		  SIB_CREATE_CQ_ARG uarg);
int sib_destroy_cq(struct ib_cq *ib_cq, struct ib_udata *udata);
int sib_resize_cq(struct ib_cq *ib_cq, SIB_RESIZE_CQE cqe,
		  struct ib_udata *udata);
int sib_poll_cq(struct ib_cq *ib_cq, int num_entries, struct ib_wc *wc);
int sib_req_notify_cq(struct ib_cq *ib_cq, enum ib_cq_notify_flags flags);
int sib_cq_post(struct sib_cq *cq, const struct sib_cqe *cqe, bool solicited);
void sib_cq_clean(struct sib_cq *cq, u32 qpn);

#endif /* SIB_CQ_H */
