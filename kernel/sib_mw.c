// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: memory windows, type 1 and type 2B.
 *
 * A window's state lives in struct sib_mw_ent, which sib allocates and
 * frees after an RCU grace period, so that the data path can find it in
 * the key table under rcu_read_lock() and take its lock. Every field of
 * the entry but the constant ones is guarded by its lock.
 */
#include <linux/random.h>
#include <linux/slab.h>

#include "sib.h"
#include "sib_mkey.h"
#include "sib_mw.h"

/* Rights a bind may grant. */
#define SIB_MW_ACCESS_OK	(IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_ATOMIC | IB_ZERO_BASED)

int sib_alloc_mw(struct ib_mw *ib_mw, struct ib_udata *udata)
{
	struct sib_mem_table *t = &to_sdev(ib_mw->device)->mem;
	struct sib_mw_ent *ent;
	int ret;

	if (ib_mw->type != IB_MW_TYPE_1 && ib_mw->type != IB_MW_TYPE_2)
		return -EINVAL;
	if (atomic_inc_return(&t->num_mw) > SIB_MAX_MW) {
		ret = -ENOMEM;
		goto err_count;
	}
	ent = kzalloc(sizeof(*ent), GFP_KERNEL);
	if (!ent) {
		ret = -ENOMEM;
		goto err_count;
	}
	ent->mk.kind = SIB_MKEY_MW;
	ent->type = ib_mw->type;
	ent->pd = ib_mw->pd;
	spin_lock_init(&ent->lock);
	ret = sib_mkey_reserve(t, &ent->mk);
	if (ret)
		goto err_free;
	ent->key = sib_new_key(ent->mk.index);
	/* IBTA: a type-1 window starts valid (bound to nothing). */
	ent->state = ent->type == IB_MW_TYPE_1 ? SIB_MEM_VALID : SIB_MEM_FREE;
	ib_mw->rkey = ent->key;
	to_smw(ib_mw)->ent = ent;
	sib_mkey_publish(t, &ent->mk);
	return 0;

err_free:
	kfree(ent);
err_count:
	atomic_dec(&t->num_mw);
	return ret;
}

/* Forget the MR the window is bound to. Caller holds ent->lock. */
static void sib_mw_unbind(struct sib_mw_ent *ent)
{
	lockdep_assert_held(&ent->lock);
	if (ent->mr) {
		atomic_dec(&ent->mr->num_mw);
		ent->mr = NULL;
	}
	ent->addr = 0;
	ent->length = 0;
	ent->access = 0;
	ent->qpn = 0;
}

/* IBTA allows deallocating a bound window of either type. */
int sib_dealloc_mw(struct ib_mw *ib_mw)
{
	struct sib_mem_table *t = &to_sdev(ib_mw->device)->mem;
	struct sib_mw_ent *ent = to_smw(ib_mw)->ent;
	unsigned long flags;

	xa_erase(&t->xa, ent->mk.index);
	spin_lock_irqsave(&ent->lock, flags);
	sib_mw_unbind(ent);
	ent->state = SIB_MEM_BUSY;
	spin_unlock_irqrestore(&ent->lock, flags);
	atomic_dec(&t->num_mw);
	kfree_rcu(ent, rcu);
	return 0;
}

/* Checks on the window alone (IBTA 10.6.7.2). Caller holds ent->lock. */
static int sib_mw_bind_check(struct sib_mw_ent *ent, struct ib_pd *qp_pd,
			     const struct sib_send_wqe *wqe)
{
	u32 access = wqe->wr.bind_mw.access;

	lockdep_assert_held(&ent->lock);
	if (ent->state == SIB_MEM_BUSY || ent->key != wqe->wr.bind_mw.mw_rkey)
		return -EINVAL;
	/*
	 * C10-72: QP, window (and below: MR) share a PD, for both types:
	 * the key table is the device's, so without this any QP could
	 * bind, re-key or unbind another process' type-1 window.
	 */
	if (ent->pd != qp_pd)
		return -EINVAL;
	if (ent->type == IB_MW_TYPE_1)
		/* o10-36.2.2: no zero-based type-1 windows */
		return access & IB_ZERO_BASED ? -EINVAL : 0;
	/* o10-37.2.30: a bound type-2 window is invalidated before rebind */
	if (ent->state != SIB_MEM_FREE)
		return -EINVAL;
	/* o10-37.2.40: no zero-length type-2 bind */
	return wqe->wr.bind_mw.length ? 0 : -EINVAL;
}

/* Checks on the MR; caller holds mr->lock. */
static int sib_mw_mr_check(struct sib_mw_ent *ent, struct sib_mr *mr,
			   const struct sib_send_wqe *wqe)
{
	u32 access = wqe->wr.bind_mw.access;

	lockdep_assert_held(&mr->lock);
	if (mr->state != SIB_MEM_VALID || mr->key != wqe->wr.bind_mw.mr_lkey ||
	    mr->pd != ent->pd)
		return -EINVAL;
	/* C10-73 */
	if (!(mr->access & IB_ACCESS_MW_BIND))
		return -EACCES;
	/* C10-74 */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(mr->access & IB_ACCESS_LOCAL_WRITE))
		return -EACCES;
	/* C10-75: the window lies inside the MR */
	if (!sib_range_ok(mr->iova, mr->length, wqe->wr.bind_mw.addr,
			  wqe->wr.bind_mw.length))
		return -ERANGE;
	return 0;
}

/* Count one more window on @mr if it may take it. Caller holds ent->lock. */
static int sib_mw_attach(struct sib_mw_ent *ent, struct sib_mr *mr,
			 const struct sib_send_wqe *wqe)
{
	unsigned long flags;
	int ret;

	lockdep_assert_held(&ent->lock);
	spin_lock_irqsave(&mr->lock, flags);
	ret = sib_mw_mr_check(ent, mr, wqe);
	if (!ret)
		atomic_inc(&mr->num_mw);
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}

static int sib_mw_bind_ent(struct sib_mw_ent *ent, struct ib_pd *qp_pd,
			   u32 qpn, const struct sib_send_wqe *wqe,
			   struct sib_mr *mr)
{
	unsigned long flags;
	int ret;

	spin_lock_irqsave(&ent->lock, flags);
	ret = sib_mw_bind_check(ent, qp_pd, wqe);
	if (!ret && mr)
		ret = sib_mw_attach(ent, mr, wqe);
	if (ret)
		goto out;
	/* The new MR is counted: let go of the old one, then bind. */
	sib_mw_unbind(ent);
	ent->mr = mr;
	if (mr) {
		ent->addr = wqe->wr.bind_mw.addr;
		ent->length = wqe->wr.bind_mw.length;
		ent->access = wqe->wr.bind_mw.access & SIB_MW_ACCESS_OK;
	}
	if (ent->type == IB_MW_TYPE_2)
		ent->qpn = qpn;
	ent->key = wqe->wr.bind_mw.new_rkey;
	ent->state = SIB_MEM_VALID;
out:
	spin_unlock_irqrestore(&ent->lock, flags);
	return ret;
}

int sib_mw_bind(struct sib_dev *sdev, struct ib_pd *qp_pd, u32 qpn,
		const struct sib_send_wqe *wqe)
{
	struct sib_mem_table *t = &sdev->mem;
	struct sib_mr *mr = NULL;
	struct sib_mkey *mk;
	int ret;

	/* Local write means nothing for a window: tolerated, ignored. */
	if (wqe->wr.bind_mw.access & ~(SIB_MW_ACCESS_OK | IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	/* The consumer owns only the key byte of the new rkey. */
	if (SIB_KEY_INDEX(wqe->wr.bind_mw.new_rkey) !=
	    SIB_KEY_INDEX(wqe->wr.bind_mw.mw_rkey))
		return -EINVAL;
	/* A zero-length bind unbinds a type-1 window: no MR is needed. */
	if (wqe->wr.bind_mw.length) {
		mr = sib_mr_find_get(t, wqe->wr.bind_mw.mr_lkey);
		if (!mr)
			return -EINVAL;
	}
	rcu_read_lock();
	mk = sib_mkey_find(t, wqe->wr.bind_mw.mw_rkey);
	if (mk && mk->kind == SIB_MKEY_MW)
		ret = sib_mw_bind_ent(container_of(mk, struct sib_mw_ent, mk),
				      qp_pd, qpn, wqe, mr);
	else
		ret = -EINVAL;
	rcu_read_unlock();
	sib_mr_put(mr);
	return ret;
}

/* Caller holds rcu_read_lock(); see sib_mr_get(). */
int sib_mw_resolve(struct sib_mw_ent *ent, struct ib_pd *pd, u32 qpn, u32 key,
		   u64 iova, u64 len, int need, u64 *mr_iova,
		   struct sib_mr **mrp)
{
	unsigned long flags;
	u64 base;
	int ret = 0;

	spin_lock_irqsave(&ent->lock, flags);
	base = ent->access & IB_ZERO_BASED ? 0 : ent->addr;
	if (ent->state != SIB_MEM_VALID || ent->key != key || ent->pd != pd ||
	    !ent->mr)
		ret = -EINVAL;
	/* IBTA 10.6.7: a type-2 window answers only the QP it is bound to */
	else if (ent->type == IB_MW_TYPE_2 && ent->qpn != qpn)
		ret = -EINVAL;
	else if ((ent->access & need) != need)
		ret = -EACCES;
	else if (!sib_range_ok(base, ent->length, iova, len))
		ret = -ERANGE;
	/* Bound windows keep the MR registered, so this cannot fail. */
	else if (!sib_mr_get_live(ent->mr))
		ret = -EINVAL;
	if (!ret) {
		*mr_iova = ent->addr + (iova - base);
		*mrp = ent->mr;
	}
	spin_unlock_irqrestore(&ent->lock, flags);
	return ret;
}

/* LOCAL_INV or SEND_WITH_INV of a window; caller holds rcu_read_lock(). */
int sib_mw_invalidate(struct sib_mw_ent *ent, struct ib_pd *pd, u32 qpn,
		      u32 key)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&ent->lock, flags);
	/* o10-37.2.26: type-1 windows cannot be invalidated */
	if (ent->type != IB_MW_TYPE_2 || ent->state != SIB_MEM_VALID ||
	    ent->key != key || ent->pd != pd || ent->qpn != qpn) {
		ret = -EINVAL;
	} else {
		sib_mw_unbind(ent);
		ent->state = SIB_MEM_FREE;
	}
	spin_unlock_irqrestore(&ent->lock, flags);
	return ret;
}
