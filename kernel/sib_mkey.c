// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the key table and the key lookup of the data path. Every MR and
 * every memory window owns one index in the device's key table (struct
 * sib_mem_table); sib_mr_get() resolves a key, an MR's own or a window's
 * (sib_mw.c), for one access, checks the PD, the right and the bounds,
 * and returns the MR referenced. Keys and lifetimes: sib_mr.h.
 *
 * Locking: see struct sib_mem_table and struct sib_mr in sib_mr.h. The
 * data path takes no lock for an MR key, only rcu_read_lock() and a
 * reference; it reads an MR's checked fields through its seqcount
 * (sib_mr_snapshot()).
 */
#include <linux/random.h>

#include "sib.h"
#include "sib_mkey.h"
#include "sib_mw.h"
#include "sib_odp.h"

/* Indices 1..SIB_MEM_MAX_INDEX; each kind is counted separately. */
#define SIB_MEM_MAX_INDEX	(SIB_MAX_MR + SIB_MAX_MW)

void sib_mem_table_init(struct sib_mem_table *t)
{
	xa_init_flags(&t->xa, XA_FLAGS_ALLOC1);
	t->next = 1;
	atomic_set(&t->num_mr, 0);
	atomic_set(&t->num_mw, 0);
	atomic_set(&t->num_dmabuf, 0);
	atomic_set(&t->num_odp_chunks, 0);
}

void sib_mem_table_destroy(struct sib_mem_table *t)
{
	WARN_ON(atomic_read(&t->num_mr));
	WARN_ON(atomic_read(&t->num_mw));
	WARN_ON(atomic_read(&t->num_dmabuf));
	WARN_ON(atomic_read(&t->num_odp_chunks));
	WARN_ON(!xa_empty(&t->xa));
	xa_destroy(&t->xa);
}

/* Reserve an index for @mk; the slot reads as empty until published. */
int sib_mkey_reserve(struct sib_mem_table *t, struct sib_mkey *mk)
{
	u32 id;
	int ret;

	ret = xa_alloc_cyclic(&t->xa, &id, NULL,
			      XA_LIMIT(1, SIB_MEM_MAX_INDEX), &t->next,
			      GFP_KERNEL);
	if (ret < 0)
		return ret == -EBUSY ? -ENOMEM : ret;
	mk->index = id;
	return 0;
}

/* Make @mk visible to lookups; it must be fully initialised. */
void sib_mkey_publish(struct sib_mem_table *t, struct sib_mkey *mk)
{
	/* The slot is reserved: storing into it allocates nothing. */
	xa_store(&t->xa, mk->index, mk, GFP_KERNEL);
}

/* A fresh key for @index with a random key byte. */
u32 sib_new_key(u32 index)
{
	return (index << 8) | get_random_u8();
}

/* Caller holds rcu_read_lock(); the result stays valid until it drops it. */
struct sib_mkey *sib_mkey_find(struct sib_mem_table *t, u32 key)
{
	return xa_load(&t->xa, SIB_KEY_INDEX(key));
}

bool sib_mr_get_live(struct sib_mr *mr)
{
	return refcount_inc_not_zero(&mr->ref);
}

void sib_mr_put(struct sib_mr *mr)
{
	if (mr && refcount_dec_and_test(&mr->ref))
		complete(&mr->drained);
}

/* Referenced MR whose slot matches @key's index, or NULL; key unchecked. */
struct sib_mr *sib_mr_find_get(struct sib_mem_table *t, u32 key)
{
	struct sib_mr *mr = NULL;
	struct sib_mkey *mk;

	rcu_read_lock();
	mk = sib_mkey_find(t, key);
	if (mk && mk->kind == SIB_MKEY_MR) {
		mr = container_of(mk, struct sib_mr, mk);
		if (!sib_mr_get_live(mr))
			mr = NULL;
	}
	rcu_read_unlock();
	return mr;
}

/**
 * struct sib_mr_snap - a consistent copy of an MR's checked fields
 * @state:	enum sib_mem_state
 * @key:	current key
 * @access:	IB_ACCESS_* flags
 * @iova:	first address
 * @length:	bytes
 * @pd:		the MR's PD
 */
struct sib_mr_snap {
	u8 state;
	u32 key;
	int access;
	u64 iova;
	u64 length;
	struct ib_pd *pd;
};

static void sib_mr_snapshot(struct sib_mr *mr, struct sib_mr_snap *s)
{
	unsigned int seq;

	do {
		seq = read_seqcount_begin(&mr->seq);
		s->state = mr->state;
		s->key = mr->key;
		s->access = mr->access;
		s->iova = mr->iova;
		s->length = mr->length;
		s->pd = mr->pd;
	} while (read_seqcount_retry(&mr->seq, seq));
}

/* Is [@iova, @iova + @len) inside [@start, @start + @length)? No wrap. */
bool sib_range_ok(u64 start, u64 length, u64 iova, u64 len)
{
	u64 off = iova - start;

	return iova >= start && off <= length && len <= length - off;
}

static int sib_acc_flag(enum sib_acc acc)
{
	switch (acc) {
	case SIB_ACC_LOCAL_WRITE:
		return IB_ACCESS_LOCAL_WRITE;
	case SIB_ACC_REMOTE_READ:
		return IB_ACCESS_REMOTE_READ;
	case SIB_ACC_REMOTE_WRITE:
		return IB_ACCESS_REMOTE_WRITE;
	case SIB_ACC_REMOTE_ATOMIC:
		return IB_ACCESS_REMOTE_ATOMIC;
	case SIB_ACC_FLUSH_GLOBAL:
		return SIB_ACCESS_FLUSH_GLOBAL;
	case SIB_ACC_FLUSH_PERSISTENT:
		return SIB_ACCESS_FLUSH_PERSISTENT;
	default:
		return 0;
	}
}

/* May @key of @pd, with rights @need, reach the MR @s is a snapshot of? */
static int sib_mr_snap_check(const struct sib_mr_snap *s, struct ib_pd *pd,
			     u32 key, int need)
{
	if (s->state != SIB_MEM_VALID || s->key != key || s->pd != pd)
		return -EINVAL;
	if ((s->access & need) != need)
		return -EACCES;
	return 0;
}

/* Take a reference on @mr for an access through its own key. */
static int sib_mr_check_get(struct sib_mr *mr, struct ib_pd *pd, u32 key,
			    u64 iova, u64 len, int need)
{
	struct sib_mr_snap s;
	int ret;

	if (!sib_mr_get_live(mr))
		return -EINVAL;
	sib_mr_snapshot(mr, &s);
	ret = sib_mr_snap_check(&s, pd, key, need);
	if (!ret && !sib_range_ok(s.iova, s.length, iova, len))
		ret = -ERANGE;
	/* ODP: the pages must be present (or come in: -EAGAIN). */
	if (!ret && mr->mr_kind == SIB_MR_ODP)
		ret = sib_odp_check(mr->odp, iova - s.iova + mr->pg_off, len);
	if (ret)
		sib_mr_put(mr);
	return ret;
}

struct sib_mr *sib_mr_get(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
			  u32 key, u64 iova, u64 len, enum sib_acc acc,
			  u64 *mr_iova)
{
	int need = sib_acc_flag(acc);
	struct sib_mr *mr = NULL;
	struct sib_mkey *mk;
	int ret;

	*mr_iova = iova;
	if (!len)
		return NULL;

	rcu_read_lock();
	mk = sib_mkey_find(&sdev->mem, key);
	if (!mk) {
		ret = -EINVAL;
	} else if (mk->kind == SIB_MKEY_MW) {
		/* A window is an rkey only. */
		ret = acc < SIB_ACC_REMOTE_READ ? -EINVAL :
		      sib_mw_resolve(container_of(mk, struct sib_mw_ent, mk),
				     pd, qpn, key, iova, len, need, mr_iova,
				     &mr);
	} else {
		mr = container_of(mk, struct sib_mr, mk);
		ret = sib_mr_check_get(mr, pd, key, iova, len, need);
	}
	rcu_read_unlock();
	return ret ? ERR_PTR(ret) : mr;
}

struct sib_mr *sib_mr_get_odp(struct sib_dev *sdev, struct ib_pd *pd,
			      u32 lkey, u64 iova, u64 len, bool write,
			      u64 *mr_iova)
{
	struct sib_mr *mr = sib_mr_find_get(&sdev->mem, lkey);
	struct sib_mr_snap s;
	int ret = 0;

	*mr_iova = iova;
	if (!mr)
		return ERR_PTR(-ENOENT);
	sib_mr_snapshot(mr, &s);
	if (mr->mr_kind != SIB_MR_ODP ||
	    sib_mr_snap_check(&s, pd, lkey,
			      write ? IB_ACCESS_LOCAL_WRITE : 0))
		ret = -ENOENT;
	else if (!sib_range_ok(s.iova, s.length, iova, len))
		ret = -EINVAL;
	if (ret) {
		sib_mr_put(mr);
		return ERR_PTR(ret);
	}
	return mr;
}

struct sib_mr *sib_mr_get_whole(struct sib_dev *sdev, struct ib_pd *pd,
				u32 key, enum sib_acc acc)
{
	struct sib_mr *mr = sib_mr_find_get(&sdev->mem, key);
	struct sib_mr_snap snap;
	int ret;

	if (!mr)
		return ERR_PTR(-EINVAL);
	sib_mr_snapshot(mr, &snap);
	ret = sib_mr_snap_check(&snap, pd, key, sib_acc_flag(acc));
	if (ret) {
		sib_mr_put(mr);
		return ERR_PTR(ret);
	}
	return mr;
}
