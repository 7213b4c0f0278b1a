/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: receive work queues, their indirection tables, and RSS QPs (raw
 * packet QPs that spread frames over a table's WQs). See sib_wq.c.
 */
#ifndef SIB_WQ_H
#define SIB_WQ_H

#include <linux/refcount.h>
#include <linux/spinlock.h>
#include <rdma/ib_verbs.h>

#include "sib_queue.h"

struct sib_cq;
struct sib_dev;
struct sib_qp;
struct sib_ucontext;
struct sk_buff;
struct sib_flow_key;

/* WQs and indirection tables a device may hold, all contexts together. */
#define SIB_MAX_WQ		0x1000
#define SIB_MAX_WQ_WR		0x4000
#define SIB_MAX_IND_TABLES	0x400

/**
 * struct sib_wq - a receive work queue (IB_WQT_RQ)
 * @ib_wq:	the ib_core object; must stay first
 * @q:		the ring, which the process produces
 * @lock:	guards the consumer side of @q and @state, and orders a
 *		frame's take against a modify_wq: RSS QPs on several CPUs
 *		take WQEs from one WQ
 * @state:	enum ib_wq_state; also copied to @ib_wq's state, which
 *		ib_uverbs reads for the current state
 * @max_sge:	SGEs per WQE the ring's slots hold
 * @uctx:	the context it belongs to
 * @pd:		its PD, which its WQEs' lkeys are checked against
 * @cq:		where its completions go
 * @tables:	indirection tables that hold it; under the device's
 *		raw.lock. destroy_wq fails with -EBUSY while it is not 0
 */
struct sib_wq {
	struct ib_wq ib_wq;
	struct sib_queue q;
	spinlock_t lock;	/* see above */
	enum ib_wq_state state;
	u32 max_sge;
	struct sib_ucontext *uctx;
	struct ib_pd *pd;
	struct sib_cq *cq;
	unsigned int tables;
};

/**
 * struct sib_ind_table - an indirection table of receive WQs
 * @ib_tbl:	the ib_core object (ib_core allocates it); must stay first
 * @uctx:	the context it belongs to
 * @size:	entries, a power of two
 * @wqs:	the WQs; each entry holds one count of its WQ's @tables
 * @qps:	RSS QPs that use it; under the device's raw.lock.
 *		destroy_rwq_ind_table fails with -EBUSY while it is not 0
 *
 * Immutable from creation to destruction but for @qps: the receive path
 * reads @size and @wqs without a lock, from the engine of an RSS QP that
 * holds a count of @qps.
 */
struct sib_ind_table {
	struct ib_rwq_ind_table ib_tbl;
	struct sib_ucontext *uctx;
	u32 size;
	struct sib_wq **wqs;
	unsigned int qps;
};

/**
 * struct sib_rss - what makes a raw packet QP an RSS QP
 * @tbl:	its indirection table, which counts it in @qps
 * @fields:	enum sib_rx_hash_fields: what the hash reads
 * @key:	the Toeplitz key
 *
 * Immutable while the QP lives.
 */
struct sib_rss {
	struct sib_ind_table *tbl;
	u64 fields;
	u8 key[SIB_RX_HASH_KEY_LEN];
};

struct ib_wq *sib_create_wq(struct ib_pd *pd, struct ib_wq_init_attr *init,
			    struct ib_udata *udata);
int sib_modify_wq(struct ib_wq *ib_wq, struct ib_wq_attr *attr, u32 mask,
		  struct ib_udata *udata);
int sib_destroy_wq(struct ib_wq *ib_wq, struct ib_udata *udata);
int sib_create_rwq_ind_table(struct ib_rwq_ind_table *ib_tbl,
			     struct ib_rwq_ind_table_init_attr *init,
			     struct ib_udata *udata);
int sib_destroy_rwq_ind_table(struct ib_rwq_ind_table *ib_tbl);

int sib_rss_qp_init(struct sib_qp *qp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata);
void sib_rss_qp_destroy(struct sib_qp *qp);
void sib_rss_recv(struct sib_qp *qp, struct sk_buff *skb,
		  const struct sib_flow_key *k);
u32 sib_toeplitz(const u8 *key, const u8 *in, unsigned int len);
void sib_wq_caps(struct ib_device_attr *attr);

#endif /* SIB_WQ_H */
