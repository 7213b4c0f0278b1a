/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: memory regions (MRs), and the key table that MRs and memory
 * windows share; windows are sib_mw.h's, the key lookup and the copy API
 * that the packet engines use are sib_mkey.h's and sib_copy.h's.
 * Documentation/memory.md explains the rules for users; this header
 * states the contract for the rest of the driver.
 *
 * Keys. Every MR and MW owns one index in the device's key table, and its
 * key is (index << 8) | key byte. An MR uses the same value as lkey and
 * rkey. The key byte starts random and changes on every rereg, fast
 * registration and window bind, so a stale key (right index, old byte)
 * no longer matches.
 *
 * Lifetimes. Lookups run under rcu_read_lock() and never sleep: an MR is
 * found with xa_load() and pinned with refcount_inc_not_zero(). Dereg and
 * rereg drop the MR's base reference and wait (a completion) until every
 * user has called sib_mr_put(); only then are pages unpinned or replaced.
 * MR and window memory is freed after an RCU grace period.
 */
#ifndef SIB_MR_H
#define SIB_MR_H

#include <linux/atomic.h>
#include <linux/bits.h>
#include <linux/completion.h>
#include <linux/rcupdate.h>
#include <linux/refcount.h>
#include <linux/seqlock.h>
#include <linux/skbuff.h>
#include <linux/spinlock.h>
#include <linux/xarray.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

#include "../uapi/rdma_user_sib.h"
#include "sib_compat.h"

struct sib_dev;
struct sib_dm_mem;
struct sib_dmabuf;
struct sib_odp;

#define SIB_MAX_MR		0x40000
#define SIB_MAX_MW		0x40000
/* Largest MR: 256 GiB, a 512 MiB page array with 4 KiB pages. */
#define SIB_MAX_MR_SIZE		BIT_ULL(38)
/* Largest page list of a fast-registration MR. */
#define SIB_MAX_FAST_REG_PAGES	512

#define SIB_KEY_INDEX(key)	((key) >> 8)
#define SIB_KEY_BYTE(key)	((key) & 0xff)

/**
 * struct sib_mem_table - the key table of one device
 * @xa:		index -> struct sib_mkey (an MR or a window). XA_FLAGS_ALLOC1,
 *		written with its internal lock from process context only
 *		(reg, dereg, alloc, dealloc); read under RCU from anywhere.
 * @next:	cyclic allocation cursor, guarded by @xa's lock
 * @num_mr:	live MRs, bounded by SIB_MAX_MR
 * @num_mw:	live windows, bounded by SIB_MAX_MW
 * @num_dmabuf:	live dma-buf MRs (also counted in @num_mr)
 * @num_odp_chunks: live chunks of implicit ODP MRs (sib_odp.h)
 */
struct sib_mem_table {
	struct xarray xa;
	u32 next;
	atomic_t num_mr;
	atomic_t num_mw;
	atomic_t num_dmabuf;
	atomic_t num_odp_chunks;
};

enum sib_mkey_kind {
	SIB_MKEY_MR = 1,
	SIB_MKEY_MW,
};

/**
 * struct sib_mkey - what a key table slot points to; first in MRs and MWs
 * @kind:	enum sib_mkey_kind; constant
 * @index:	the table index, constant
 */
struct sib_mkey {
	u8 kind;
	u32 index;
};

/**
 * struct sib_fr_ent - one entry of a fast-registration MR's list
 * @addr:	kernel address of a page (IB_MR_TYPE_MEM_REG), or of a
 *		segment (IB_MR_TYPE_SG_GAPS)
 * @end:	IB_MR_TYPE_SG_GAPS: offset from the region's first byte just
 *		past the segment; the ends grow with the index
 */
struct sib_fr_ent {
	u64 addr;
	u64 end;
};

enum sib_mr_kind {
	SIB_MR_USER,	/* reg_user_mr: pinned user pages */
	SIB_MR_DMA,	/* get_dma_mr: addresses are kernel virtual */
	SIB_MR_FAST,	/* alloc_mr + REG_MR WQE: kernel virtual page list */
	SIB_MR_DM,	/* reg_dm_mr: zero-based, over device memory pages */
	SIB_MR_ODP,	/* reg_user_mr with IB_ACCESS_ON_DEMAND: sib_odp.h */
	SIB_MR_DMABUF,	/* reg_user_mr_dmabuf: a dma-buf's vmap, sib_dmabuf.h */
};

enum sib_mem_state {
	SIB_MEM_FREE,	/* no valid translation (fast MR, type-2 window) */
	SIB_MEM_VALID,
	SIB_MEM_BUSY,	/* being reregistered, or deregistered */
	SIB_MEM_REVOKED, /* a dma-buf MR whose exporter moved the buffer */
};

/**
 * struct sib_mr - a memory region
 * @ib_mr:	the ib_core object (allocated by sib, freed with kfree_rcu)
 * @mk:		key table header
 * @mr_kind:	enum sib_mr_kind; constant
 * @ref:	base reference (1 while registered) plus one per user; a
 *		lookup takes it with refcount_inc_not_zero()
 * @drained:	completed when @ref drops to zero
 * @lock:	guards @state transitions and serialises writers of @seq;
 *		taken with irqsave
 * @seq:	readers snapshot @state, @key, @access, @iova, @length,
 *		@pd and the translation through it
 * @state:	enum sib_mem_state
 * @key:	current lkey == rkey
 * @access:	IB_ACCESS_* flags
 * @iova:	first address of the region
 * @length:	bytes in the region
 * @pd:		the PD used for checks (ib_core updates ib_mr.pd only after
 *		an in-place rereg returns)
 * @num_mw:	windows bound to this MR; incremented under @lock with
 *		@state VALID, decremented by unbind without it
 * @umem:	SIB_MR_USER: the pinned pages; replaced only while drained
 * @pages:	SIB_MR_USER: one struct page per PAGE_SIZE of @umem;
 *		SIB_MR_DM: the device memory pages from the MR's first on
 *		(part of @dm_mem's array, constant)
 * @npages:	entries in @pages, or in @fr_live
 * @pg_off:	SIB_MR_USER, SIB_MR_DM, SIB_MR_ODP: offset of @iova within
 *		its first page (0 for an implicit ODP MR)
 * @odp:	SIB_MR_ODP: the pages, present or not, or the chunks of an
 *		implicit MR (sib_odp.h); constant from registration to dereg
 * @dm_mem:	SIB_MR_DM: the device memory, referenced until dereg
 * @dmabuf:	SIB_MR_DMABUF: the dma-buf and its kernel mapping
 *		(sib_dmabuf.h); constant from registration to dereg
 * @fr_map:	SIB_MR_FAST: list written by map_mr_sg (staging)
 * @fr_live:	SIB_MR_FAST: list copied from @fr_map by a REG_MR, read by
 *		the data path
 * @fr_max:	SIB_MR_FAST: capacity of both lists
 * @fr_nmap:	SIB_MR_FAST: entries in @fr_map
 * @fr_shift:	SIB_MR_FAST: log2 of the page size of @fr_live (pages)
 * @fr_gaps:	SIB_MR_FAST: IB_MR_TYPE_SG_GAPS, the lists hold segments of
 *		any address and length, not pages; constant
 * @rcu:	for kfree_rcu
 */
struct sib_mr {
	struct ib_mr ib_mr;
	struct sib_mkey mk;
	u8 mr_kind;
	refcount_t ref;
	struct completion drained;
	spinlock_t lock;	/* see above */
	seqcount_spinlock_t seq;
	u8 state;
	u32 key;
	int access;
	u64 iova;
	u64 length;
	struct ib_pd *pd;
	atomic_t num_mw;
	struct ib_umem *umem;
	struct page **pages;
	u32 npages;
	u32 pg_off;
	struct sib_odp *odp;
	struct sib_dm_mem *dm_mem;
	struct sib_dmabuf *dmabuf;
	struct sib_fr_ent *fr_map;
	struct sib_fr_ent *fr_live;
	u32 fr_max;
	u32 fr_nmap;
	u32 fr_shift;
	bool fr_gaps;
	struct rcu_head rcu;
};

static inline struct sib_mr *to_smr(struct ib_mr *ib_mr)
{
	return container_of(ib_mr, struct sib_mr, ib_mr);
}

/*
 * Is @mr made of struct pages (@pages, @npages, @pg_off), which the copy
 * engine maps one at a time and may attach to packets?
 */
static inline bool sib_mr_has_pages(const struct sib_mr *mr)
{
	return mr->mr_kind == SIB_MR_USER || mr->mr_kind == SIB_MR_DM;
}

/**
 * sib_mem_invalidate() - LOCAL_INV or SEND_WITH_INV of an rkey
 * @sdev:	the device
 * @pd:		the PD of the QP that executes it
 * @qpn:	that QP's number
 * @rkey:	the key to invalidate: a type-2 window bound to this QP, or a
 *		fast-registration MR
 * @remote:	true for SEND_WITH_INV (responder), false for LOCAL_INV
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL (unknown/stale key, wrong PD or QP, a type-1
 * window, a user or DMA MR, not valid), -EBUSY (an MR with bound windows).
 */
int sib_mem_invalidate(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 rkey, bool remote);

/**
 * sib_mr_fast_reg() - execute a REG_MR send WQE (kernel consumers)
 * @sdev:	the device
 * @pd:		the posting QP's PD
 * @w:		the WQE, already copied to kernel memory: its key names the
 *		MR (from alloc_mr(IB_MR_TYPE_MEM_REG)) by its index, and
 *		becomes the MR's lkey and rkey; the page list is the one
 *		ib_map_mr_sg() wrote, of which @w takes npages entries
 *
 * The MR must be free (new, or invalidated) and of @pd.
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL for a wrong MR, PD, access, page size or range,
 * or an MR still valid; complete the WQE with IB_WC_LOC_QP_OP_ERR then
 * (as rdma_rxe does).
 */
int sib_mr_fast_reg(struct sib_dev *sdev, struct ib_pd *pd,
		    const struct sib_send_wqe *w);

/**
 * sib_mr_reg_dm() - register device memory as a zero-based MR
 * @pd:		the MR's PD
 * @mem:	the device memory; the MR takes a reference until dereg
 * @offset:	first byte of @mem in the MR (its address 0)
 * @length:	bytes in the MR; 0 is allowed (the MR covers nothing)
 * @access:	IB_ACCESS_* flags, without IB_ZERO_BASED
 *
 * Context: process.
 * Return: the MR, or an ERR_PTR (-EINVAL for a range outside @mem or bad
 * access flags, -ENOMEM).
 */
struct ib_mr *sib_mr_reg_dm(struct ib_pd *pd, struct sib_dm_mem *mem,
			    u64 offset, u64 length, int access);

/* ib_device_ops (sib_mr.c) */
struct ib_mr *sib_get_dma_mr(struct ib_pd *pd, int access);
struct ib_mr *sib_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			      u64 iova, int access, SIB_REG_USER_MR_DMAH
			      struct ib_udata *udata);
struct ib_mr *sib_rereg_user_mr(struct ib_mr *ib_mr, int flags, u64 start,
				u64 length, u64 iova, int access,
				struct ib_pd *pd, struct ib_udata *udata);
int sib_dereg_mr(struct ib_mr *ib_mr, struct ib_udata *udata);
struct ib_mr *sib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
				     u64 length, u64 iova, int fd, int access,
				     SIB_REG_DMABUF_DMAH
				     SIB_REG_DMABUF_UDATA);
struct ib_mr *sib_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			   u32 max_num_sg);
int sib_map_mr_sg(struct ib_mr *ib_mr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset);

#define SIB_MR_DEV_OPS							\
	.alloc_mr = sib_alloc_mr,					\
	.dereg_mr = sib_dereg_mr,					\
	.get_dma_mr = sib_get_dma_mr,					\
	.map_mr_sg = sib_map_mr_sg,					\
	.reg_user_mr = sib_reg_user_mr,					\
	.reg_user_mr_dmabuf = sib_reg_user_mr_dmabuf,			\
	.rereg_user_mr = sib_rereg_user_mr,

#endif /* SIB_MR_H */
