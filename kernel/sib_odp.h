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
 */
#ifndef SIB_ODP_H
#define SIB_ODP_H

#include <linux/mmu_notifier.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <rdma/ib_verbs.h>

struct sib_dev;
struct sib_mr;

/* Pages one hmm_range_fault() call looks up, at most. */
#define SIB_ODP_CHUNK		512
/* Ranges waiting for the fault worker; more are merged into the last. */
#define SIB_ODP_PENDING		8

/* A range of an ODP MR's pages: [first, first + count). */
struct sib_odp_range {
	u32 first;
	u32 count;
};

/**
 * struct sib_odp - the pages of one ODP MR
 * @notifier:	the interval notifier over [@start, @start + @npages pages)
 * @sdev:	the device, for the counters
 * @lock:	guards @pages. Readers (the copy engine, any context but
 *		hard interrupts) take read_lock() for the time they use a
 *		page; writers (the invalidation, the fault worker) take
 *		write_lock_irqsave()
 * @pages:	one entry per page; NULL while the page is not present
 * @start:	user address of @pages[0]'s page (page aligned)
 * @npages:	entries in @pages
 * @writable:	the MR may be written: pages are faulted for writing, and
 *		only writable ones are taken
 * @req_lock:	guards @pend, @npend and @failed; spin_lock_irqsave()
 * @pend:	ranges the fault worker is to bring in
 * @npend:	entries used in @pend
 * @failed:	a range whose fault failed (-EFAULT: not mapped, or not
 *		writable); the next access that overlaps it gets the error,
 *		once
 * @has_failed:	@failed is set
 * @work:	the fault worker (sib_odp_work()), on system_unbound_wq
 * @fault_mutex: serialises faults of this MR, guards @pfns
 * @pfns:	hmm_range_fault()'s output for one chunk
 * @dead:	the MR is being deregistered: the worker does nothing
 */
struct sib_odp {
	struct mmu_interval_notifier notifier;
	struct sib_dev *sdev;
	rwlock_t lock;		/* see above */
	struct page **pages;
	unsigned long start;
	u32 npages;
	bool writable;
	spinlock_t req_lock;	/* see above */
	struct sib_odp_range pend[SIB_ODP_PENDING];
	u32 npend;
	struct sib_odp_range failed;
	bool has_failed;
	struct work_struct work;
	struct mutex fault_mutex; /* see above */
	unsigned long *pfns;
	bool dead;
};

struct sib_odp *sib_odp_create(struct ib_device *dev, u64 start, u64 length,
			       int access);
void sib_odp_destroy(struct sib_odp *odp);

/**
 * sib_odp_check() - is a range of an ODP MR present?
 * @odp:	the MR's pages
 * @off:	byte offset of the range from @odp's first page
 * @len:	its bytes (> 0)
 *
 * If some page is missing, queues a fault for the missing part.
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
 * @odp:	the MR's pages; read_lock(&odp->lock) held
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
 * Explicit ODP only (no IB_ODP_SUPPORT_IMPLICIT). RC: an ODP MR may be
 * the source of SENDs, WRITEs and READ responses, and a receive buffer
 * (of the QP or an SRQ), WRITE, READ-response or atomic target. UC and
 * UD: the source of SENDs only, since their responders cannot make the
 * sender wait with an RNR NAK.
 */
void sib_odp_caps(struct ib_odp_caps *caps);

#endif /* SIB_ODP_H */
