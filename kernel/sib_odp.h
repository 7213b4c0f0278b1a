/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: on-demand paging (sib_odp.c). An ODP MR (IB_ACCESS_ON_DEMAND)
 * pins nothing: its pages are looked up with hmm_range_fault() when the
 * device first needs them, and forgotten when the kernel invalidates
 * them (munmap, madvise, migration, fork's copy-on-write, reclaim),
 * through an mmu_interval_notifier. Documentation/memory.md tells how a
 * fault travels.
 *
 * The data path never sleeps: sib_odp_check() tells it whether a range
 * is present and, when it is not, asks sib's fault worker to bring it in
 * and answers -EAGAIN (the responder sends an RNR NAK, the requester
 * waits and tries again). The copy engine reads @pages only under
 * @lock's read side, and the invalidation clears them under its write
 * side, so no page is touched after its invalidation returned.
 *
 * An implicit ODP MR (reg_user_mr(start 0, length U64_MAX)) covers the
 * whole user address space, its iova being the virtual address. Its
 * struct sib_odp holds no pages and no notifier: it holds chunks, one
 * struct sib_odp per SIB_ODP_IMP_SIZE-aligned piece of the address space
 * that the device used, each an explicit-ODP page set with its own
 * notifier, made by the fault worker or ibv_advise_mr() on first use
 * (never by the data path) and kept until dereg.
 */
#ifndef SIB_ODP_H
#define SIB_ODP_H

#include <linux/bits.h>
#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>
#include <rdma/ib_verbs.h>

struct sib_dev;
struct sib_mr;

/* Pages one hmm_range_fault() call looks up, at most. */
#define SIB_ODP_CHUNK		512
/* Ranges waiting for the fault worker; more are merged into the last. */
#define SIB_ODP_PENDING		8
/* An implicit MR's chunks: 16 MiB of address space each (4096 pages). */
#define SIB_ODP_IMP_SHIFT	24
#define SIB_ODP_IMP_SIZE	BIT_ULL(SIB_ODP_IMP_SHIFT)
#define SIB_ODP_IMP_PAGES	(SIB_ODP_IMP_SIZE >> PAGE_SHIFT)
/*
 * Chunks of one implicit MR, at most: 256 GiB of address space in use,
 * the page array of the largest explicit MR (SIB_MAX_MR_SIZE).
 */
#define SIB_ODP_IMP_MAX		(SIB_MAX_MR_SIZE >> SIB_ODP_IMP_SHIFT)

/*
 * A range of an ODP MR's pages: [first, first + count). Of an implicit
 * MR: pages of the address space, within one chunk.
 */
struct sib_odp_range {
	u64 first;
	u32 count;
};

/**
 * struct sib_odp - the pages of one ODP MR, or of one chunk of an
 *		    implicit MR, or an implicit MR's chunks
 * @notifier:	the interval notifier over [@start, @start + @npages pages);
 *		not of an implicit MR
 * @sdev:	the device, for the counters
 * @mm:		the address space of the pages; the notifier holds it (an
 *		implicit MR holds it itself, with mmgrab(), until dereg)
 * @lock:	guards @pages. Readers (the copy engine, any context but
 *		hard interrupts) take read_lock() for the time they use a
 *		page; writers (the invalidation, the fault worker) take
 *		write_lock_irqsave()
 * @pages:	one entry per page; NULL while the page is not present;
 *		an implicit MR has none
 * @start:	user address of @pages[0]'s page (page aligned); 0 for an
 *		implicit MR
 * @npages:	entries in @pages; of an implicit MR, the pages of the
 *		address space it covers (TASK_SIZE)
 * @writable:	the MR may be written: pages are faulted for writing, and
 *		only writable ones are taken
 * @implicit:	an implicit MR: @chunks, no pages; constant
 * @req_lock:	guards @pend, @npend and @failed; spin_lock_irqsave()
 * @pend:	ranges the fault worker is to bring in
 * @npend:	entries used in @pend
 * @failed:	a range whose fault failed (-EFAULT: not mapped, or not
 *		writable); the next access that overlaps it gets the error,
 *		once
 * @has_failed:	@failed is set
 * @work:	the fault worker (sib_odp_work()), on system_unbound_wq
 * @fault_mutex: serialises faults of this MR, guards @pfns; of an
 *		implicit MR, serialises the creation of chunks and guards
 *		@nchunks
 * @pfns:	hmm_range_fault()'s output for SIB_ODP_CHUNK pages
 * @dead:	the MR is being deregistered: the worker does nothing
 * @chunks:	implicit MR: chunk index (address >> SIB_ODP_IMP_SHIFT) ->
 *		struct sib_odp. Stored under @fault_mutex from process
 *		context only (the worker, ibv_advise_mr()); erased only by
 *		sib_odp_destroy(), once no data path user is left. So the
 *		data path finds a chunk with xa_load() (RCU inside, no
 *		allocation) and may use it while it holds the MR
 * @nchunks:	implicit MR: entries in @chunks, at most SIB_ODP_IMP_MAX
 */
struct sib_odp {
	struct mmu_interval_notifier notifier;
	struct sib_dev *sdev;
	struct mm_struct *mm;
	rwlock_t lock;		/* see above */
	struct page **pages;
	unsigned long start;
	u64 npages;
	bool writable;
	bool implicit;
	spinlock_t req_lock;	/* see above */
	struct sib_odp_range pend[SIB_ODP_PENDING];
	u32 npend;
	struct sib_odp_range failed;
	bool has_failed;
	struct work_struct work;
	struct mutex fault_mutex; /* see above */
	unsigned long *pfns;
	bool dead;
	struct xarray chunks;
	u32 nchunks;
};

struct sib_odp *sib_odp_create(struct ib_device *dev, u64 start, u64 length,
			       int access);
/**
 * sib_odp_create_implicit() - the chunks of an implicit ODP MR
 * @dev:	the device
 * @access:	the MR's IB_ACCESS_* flags
 *
 * Covers the calling process' address space, [0, TASK_SIZE); no chunk
 * yet.
 *
 * Context: process, of the MR's owner.
 * Return: the new object, or an ERR_PTR.
 */
struct sib_odp *sib_odp_create_implicit(struct ib_device *dev, int access);
void sib_odp_destroy(struct sib_odp *odp);

/**
 * sib_odp_at() - the page set that holds a byte of an ODP MR
 * @odp:	the MR's pages
 * @off:	byte offset from @odp's first page; on return, the offset
 *		from the returned page set's first page
 * @room:	set to the bytes from *@off to the end of the returned page
 *		set (of the chunk, if implicit)
 *
 * Context: any; never sleeps nor allocates. The caller holds the MR.
 * Return: @odp itself for an explicit MR; for an implicit one, the chunk
 * that holds @off, or NULL if it was never made (nothing there is
 * present).
 */
struct sib_odp *sib_odp_at(struct sib_odp *odp, u64 *off, u64 *room);

/**
 * sib_odp_check() - is a range of an ODP MR present?
 * @odp:	the MR's pages
 * @off:	byte offset of the range from @odp's first page
 * @len:	its bytes (> 0)
 *
 * If some page is missing, queues a fault for the missing part (for an
 * implicit MR, with the chunks to make first, if any).
 *
 * Context: any but hard interrupts; never sleeps.
 * Return: 0 if every page is present now (an invalidation may still
 * come before the copy: the copy engine checks each page again),
 * -EAGAIN if a fault was queued or is under way, -EFAULT if the last
 * fault of an overlapping range failed (reported once).
 */
int sib_odp_check(struct sib_odp *odp, u64 off, u64 len);

/**
 * sib_odp_page() - a present page, for the copy engine
 * @odp:	the MR's pages (not an implicit MR: one of its chunks, from
 *		sib_odp_at()); read_lock(&odp->lock) held
 * @idx:	page index
 *
 * Return: the page, or NULL if it is not present (invalidated since
 * sib_odp_check()).
 */
static inline struct page *sib_odp_page(struct sib_odp *odp, u64 idx)
{
	lockdep_assert_held_read(&odp->lock);
	return idx < odp->npages ? odp->pages[idx] : NULL;
}

int sib_odp_advise_mr(struct ib_pd *pd,
		      enum ib_uverbs_advise_mr_advice advice, u32 flags,
		      struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs);

/**
 * sib_odp_caps() - the ODP capabilities sib implements, per transport
 * @caps:	filled in for query_device
 *
 * Explicit and implicit ODP alike. RC: an ODP MR may be
 * the source of SENDs, WRITEs and READ responses, and a receive buffer
 * (of the QP or an SRQ), WRITE, READ-response or atomic target. UC and
 * UD: the source of SENDs only, since their responders cannot make the
 * sender wait with an RNR NAK.
 */
void sib_odp_caps(struct ib_odp_caps *caps);

#endif /* SIB_ODP_H */
