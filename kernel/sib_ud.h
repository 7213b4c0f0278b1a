/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: address handles and the unreliable datagram service (sib_ud.c).
 */
#ifndef SIB_UD_H
#define SIB_UD_H

#include <rdma/ib_verbs.h>

#include "sib.h"

struct sib_qp;
struct sib_swqe;
struct sk_buff;

/**
 * struct sib_ah_entry - what the device's AH table points at
 * @av:		the destination, copied at creation, read-only after
 * @pd:		the AH's PD (compared only, never dereferenced)
 * @rcu:	freeing waits for readers of the table
 *
 * The entry lives apart from ib_core's AH object because ib_core frees
 * that at once, also when a kernel caller destroys the AH in atomic
 * context where we cannot wait for an RCU grace period. Readers look the
 * entry up under rcu_read_lock() and copy the AV; destroy erases it from
 * the table and frees it with kfree_rcu().
 */
struct sib_ah_entry {
	struct sib_av av;
	struct ib_pd *pd;
	struct rcu_head rcu;
};

/**
 * struct sib_ah - address handle
 * @ib_ah:	ib_core object; must stay first
 * @entry:	the table entry (see struct sib_ah_entry)
 * @ah_num:	number in the device's AH table (what UD WQEs carry)
 */
struct sib_ah {
	struct ib_ah ib_ah;
	struct sib_ah_entry *entry;
	u32 ah_num;
};

static inline struct sib_ah *to_sah(struct ib_ah *ib_ah)
{
	return container_of(ib_ah, struct sib_ah, ib_ah);
}

int sib_create_ah(struct ib_ah *ib_ah, struct rdma_ah_init_attr *init,
		  struct ib_udata *udata);
int sib_destroy_ah(struct ib_ah *ib_ah, u32 flags);
int sib_query_ah(struct ib_ah *ib_ah, struct rdma_ah_attr *attr);
int sib_ud_send(struct sib_qp *qp, struct sib_swqe *s);
void sib_ud_recv(struct sib_qp *qp, struct sk_buff *skb);

#endif /* SIB_UD_H */
