/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: shared receive queues (sib_srq.c), and the receive rings' WQEs,
 * which an SRQ and a QP's own RQ share.
 */
#ifndef SIB_SRQ_H
#define SIB_SRQ_H

#include <linux/completion.h>
#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sib_queue.h"

struct sib_dev;
struct sib_rwqe;

/**
 * struct sib_srq - shared receive queue
 * @ib_srq:	ib_core object; must stay first
 * @q:		the ring (process or sib_post_srq_recv() produces)
 * @lock:	guards the consumer side of @q, @limit and @max_sge; QPs on
 *		several CPUs take WQEs from one SRQ
 * @limit:	SRQ limit (IBA 10.2.9.2); 0 when not armed
 * @max_sge:	SGEs per WQE the ring's slots hold
 * @srq_num:	number reported to the process, the key of the device's
 *		srq_xa, and an XRC SRQ's number in the XRCETH
 * @xrcd:	an XRC SRQ's domain (ib_core holds it while the SRQ lives),
 *		else NULL
 * @ref:	references: one for the srq_xa entry, one per lookup in
 *		flight (an XRC_TGT QP's responder executing a packet for
 *		this SRQ); @done completes when it drops to zero
 * @done:	sib_destroy_srq() waits for it before freeing the ring
 */
struct sib_srq {
	struct ib_srq ib_srq;
	struct sib_queue q;
	spinlock_t lock;	/* see above */
	u32 limit;
	u32 max_sge;
	u32 srq_num;
	struct ib_xrcd *xrcd;
	refcount_t ref;
	struct completion done;
};

static inline struct sib_srq *to_ssrq(struct ib_srq *ib_srq)
{
	return container_of(ib_srq, struct sib_srq, ib_srq);
}

int sib_create_srq(struct ib_srq *ib_srq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata);
int sib_modify_srq(struct ib_srq *ib_srq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata);
int sib_query_srq(struct ib_srq *ib_srq, struct ib_srq_attr *attr);
int sib_destroy_srq(struct ib_srq *ib_srq, struct ib_udata *udata);
int sib_post_srq_recv(struct ib_srq *ib_srq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr);
struct sib_srq *sib_srq_get(struct sib_dev *sdev, u32 srq_num);
void sib_srq_put(struct sib_srq *srq);
int sib_srq_take(struct sib_srq *srq, struct sib_rwqe *rwqe);
int sib_ring_take_rwqe(struct sib_queue *q, u32 max_sge,
		       struct sib_rwqe *rwqe);
int sib_ring_put_rwqe(struct sib_queue *q, u32 max_sge,
		      const struct ib_recv_wr *wr);

#endif /* SIB_SRQ_H */
