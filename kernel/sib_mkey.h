/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the key table and the key lookup of the data path (sib_mkey.c).
 * The rules for keys and lifetimes are in sib_mr.h.
 */
#ifndef SIB_MKEY_H
#define SIB_MKEY_H

#include <linux/types.h>

struct ib_pd;
struct sib_dev;
struct sib_mem_table;
struct sib_mkey;
struct sib_mr;

void sib_mem_table_init(struct sib_mem_table *t);
void sib_mem_table_destroy(struct sib_mem_table *t);

/* The right an access needs. */
enum sib_acc {
	SIB_ACC_LOCAL_READ,
	SIB_ACC_LOCAL_WRITE,
	SIB_ACC_REMOTE_READ,
	SIB_ACC_REMOTE_WRITE,
	SIB_ACC_REMOTE_ATOMIC,
	SIB_ACC_FLUSH_GLOBAL,		/* FLUSH, placement type global */
	SIB_ACC_FLUSH_PERSISTENT,	/* FLUSH, placement type persistent */
};

/**
 * sib_mr_get() - resolve a key for one access
 * @sdev:	the device
 * @pd:		the PD of the QP making the access
 * @qpn:	that QP's number (a type-2 window only answers its own QP)
 * @key:	lkey (for SIB_ACC_LOCAL_*) or rkey (SIB_ACC_REMOTE_*); an
 *		rkey may name an MR or a window, an lkey only an MR
 * @iova:	first address accessed, in the key's address space (for a
 *		zero-based window: the offset into the window)
 * @len:	bytes accessed
 * @acc:	the right needed
 * @mr_iova:	set to the address of the access within the returned MR
 *
 * Context: any, no sleeping; call it outside rcu_read_lock() or inside.
 *
 * A zero-length access needs no valid key (IBTA: a zero-length RDMA
 * operation does not validate its R_Key, a zero-length SGE its L_Key):
 * with @len == 0 the result is NULL with *@mr_iova = @iova, and nothing
 * is checked.
 *
 * Return: a referenced MR (release it with sib_mr_put()), NULL for
 * @len == 0, or ERR_PTR(-EINVAL) for an unknown or stale key, a wrong PD,
 * a window used by another QP or through an lkey, ERR_PTR(-EACCES) for a
 * missing right, ERR_PTR(-ERANGE) for an access outside the region or
 * window; for an ODP MR also ERR_PTR(-EAGAIN) while missing pages are
 * brought in (try again later) and ERR_PTR(-EFAULT) when bringing them
 * in failed (sib_odp_check()).
 */
struct sib_mr *sib_mr_get(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
			  u32 key, u64 iova, u64 len, enum sib_acc acc,
			  u64 *mr_iova);

/**
 * sib_mr_get_whole() - resolve an rkey for an access to its whole MR
 * @sdev:	the device
 * @pd:		the PD of the QP making the access
 * @key:	the rkey; it must name an MR, not a window
 * @acc:	the right needed
 *
 * For a FLUSH of selectivity level "memory region", which names no range.
 *
 * Context: any, no sleeping.
 *
 * Return: a referenced MR (release it with sib_mr_put()), ERR_PTR(-EINVAL)
 * for an unknown or stale key, a window or a wrong PD, ERR_PTR(-EACCES) for
 * a missing right.
 */
struct sib_mr *sib_mr_get_whole(struct sib_dev *sdev, struct ib_pd *pd,
				u32 key, enum sib_acc acc);

/**
 * sib_mr_get_odp() - resolve an lkey of an ODP MR for a prefetch
 * @sdev:	the device
 * @pd:		the PD the lkey must belong to
 * @lkey:	the key
 * @iova:	first address to prefetch
 * @len:	bytes (> 0)
 * @write:	the MR must grant local write (PREFETCH_WRITE)
 * @mr_iova:	set to @iova
 *
 * Unlike sib_mr_get(), pages need not be present.
 *
 * Context: any, no sleeping.
 * Return: a referenced MR (release it with sib_mr_put()),
 * ERR_PTR(-ENOENT) for an unknown or stale key, a wrong PD, an MR that
 * is not ODP or lacks the right, ERR_PTR(-EINVAL) for a range outside it.
 */
struct sib_mr *sib_mr_get_odp(struct sib_dev *sdev, struct ib_pd *pd,
			      u32 lkey, u64 iova, u64 len, bool write,
			      u64 *mr_iova);

/**
 * sib_mr_put() - drop a reference taken by sib_mr_get(); NULL is a no-op
 * @mr:	the MR
 *
 * Context: any. Do not keep a reference across an unbounded wait: dereg
 * and rereg of the MR wait until it is dropped.
 */
void sib_mr_put(struct sib_mr *mr);

/* For sib_mr.c and sib_mw.c. */
int sib_mkey_reserve(struct sib_mem_table *t, struct sib_mkey *mk);
void sib_mkey_publish(struct sib_mem_table *t, struct sib_mkey *mk);
u32 sib_new_key(u32 index);
struct sib_mkey *sib_mkey_find(struct sib_mem_table *t, u32 key);
struct sib_mr *sib_mr_find_get(struct sib_mem_table *t, u32 key);
bool sib_mr_get_live(struct sib_mr *mr);

bool sib_range_ok(u64 start, u64 length, u64 iova, u64 len);

#endif /* SIB_MKEY_H */
