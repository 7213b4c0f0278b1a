/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: memory windows (sib_mw.c): type 1 windows bound by the bind verb,
 * type 2 windows bound by a BIND_MW send WQE to one QP. A window owns a
 * key of the device's key table (struct sib_mkey, sib_mr.h), through which remote
 * accesses resolve to the MR it is bound to.
 */
#ifndef SIB_MW_H
#define SIB_MW_H

#include "sib_mr.h"

/**
 * struct sib_mw_ent - the part of a window that the key table points to;
 * allocated by sib and freed with kfree_rcu, because ib_core frees
 * struct sib_mw itself with no grace period.
 * @mk:		key table header
 * @type:	IB_MW_TYPE_1 or IB_MW_TYPE_2; constant
 * @pd:		the window's PD; constant
 * @lock:	guards every field below; taken with irqsave. Nests
 *		outside sib_mr.lock.
 * @state:	enum sib_mem_state (BUSY: being deallocated)
 * @key:	current rkey
 * @mr:		the MR bound to, counted in its num_mw; NULL when unbound
 * @addr:	first MR address covered by the window
 * @length:	bytes in the window
 * @access:	IB_ACCESS_REMOTE_* and IB_ZERO_BASED
 * @qpn:	type 2: the QP the window is bound to
 * @rcu:	for kfree_rcu
 */
struct sib_mw_ent {
	struct sib_mkey mk;
	u8 type;
	struct ib_pd *pd;
	spinlock_t lock;	/* see above */
	u8 state;
	u32 key;
	struct sib_mr *mr;
	u64 addr;
	u64 length;
	u32 access;
	u32 qpn;
	struct rcu_head rcu;
};

/**
 * struct sib_mw - a memory window
 * @ib_mw:	the ib_core object; must stay first (allocated by ib_core)
 * @ent:	the key table entry
 */
struct sib_mw {
	struct ib_mw ib_mw;
	struct sib_mw_ent *ent;
};

static inline struct sib_mw *to_smw(struct ib_mw *ib_mw)
{
	return container_of(ib_mw, struct sib_mw, ib_mw);
}

/**
 * sib_mw_bind() - execute a BIND_MW send WQE
 * @sdev:	the device
 * @qp_pd:	the posting QP's PD
 * @qpn:	the posting QP's number (recorded by a type-2 bind)
 * @wqe:	the WQE, already copied to kernel memory
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL/-EACCES/-ERANGE; complete the WQE with
 * IB_WC_MW_BIND_ERR on error.
 */
int sib_mw_bind(struct sib_dev *sdev, struct ib_pd *qp_pd, u32 qpn,
		const struct sib_send_wqe *wqe);

/* ib_device_ops */
int sib_alloc_mw(struct ib_mw *ib_mw, struct ib_udata *udata);
int sib_dealloc_mw(struct ib_mw *ib_mw);
/* sib_mw.c, for sib_mkey.c and sib_mr.c */
int sib_mw_resolve(struct sib_mw_ent *mw, struct ib_pd *pd, u32 qpn, u32 key,
		   u64 iova, u64 len, int need, u64 *mr_iova,
		   struct sib_mr **mrp);
int sib_mw_invalidate(struct sib_mw_ent *mw, struct ib_pd *pd, u32 qpn,
		      u32 key);

#define SIB_MW_DEV_OPS							\
	.alloc_mw = sib_alloc_mw,					\
	.dealloc_mw = sib_dealloc_mw,					\
	INIT_RDMA_OBJ_SIZE(ib_mw, sib_mw, ib_mw),

#endif /* SIB_MW_H */
