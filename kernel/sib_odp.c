// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: on-demand paging. The pages of an ODP MR: the interval notifier
 * that forgets them, the fault worker that brings them in with
 * hmm_range_fault(), the presence check of the data path, and
 * ibv_advise_mr()'s prefetch.
 *
 * Locking: see struct sib_odp in sib_odp.h. Lock order: fault_mutex,
 * then the mm's mmap lock (around hmm_range_fault() only), then lock;
 * req_lock is taken alone.
 */
#include <linux/hmm.h>
#include <linux/mm.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>

#include "sib.h"
#include "sib_mkey.h"
#include "sib_odp.h"

/* Forget the pages of [first, first + count); lock held for writing. */
static void sib_odp_clear(struct sib_odp *odp, u64 first, u64 count)
{
	lockdep_assert_held_write(&odp->lock);
	memset(&odp->pages[first], 0, count * sizeof(*odp->pages));
}

/*
 * The kernel is about to change the mapping of [range->start,
 * range->end): forget the pages there. Readers hold odp->lock's read side
 * while they use a page, so once the write side is taken no copy is
 * using them, and after it is dropped none can find them. Never sleeps,
 * so it serves non-blockable invalidations (the OOM reaper) too.
 */
static bool sib_odp_invalidate(struct mmu_interval_notifier *mni,
			       const struct mmu_notifier_range *range,
			       unsigned long cur_seq)
{
	struct sib_odp *odp = container_of(mni, struct sib_odp, notifier);
	unsigned long end = odp->start + ((unsigned long)odp->npages << PAGE_SHIFT);
	unsigned long from = max(range->start, odp->start);
	unsigned long to = min(range->end, end);
	unsigned long flags;

	write_lock_irqsave(&odp->lock, flags);
	mmu_interval_set_seq(mni, cur_seq);
	if (from < to)
		sib_odp_clear(odp, (from - odp->start) >> PAGE_SHIFT,
			      ((to - 1 - odp->start) >> PAGE_SHIFT) -
			      ((from - odp->start) >> PAGE_SHIFT) + 1);
	write_unlock_irqrestore(&odp->lock, flags);
	sib_count(odp->sdev, SIB_CNT_ODP_INVALIDATIONS);
	return true;
}

static const struct mmu_interval_notifier_ops sib_odp_ops = {
	.invalidate = sib_odp_invalidate,
};

/* Take the pages hmm_range_fault() found; lock held for writing. */
static void sib_odp_take(struct sib_odp *odp, u32 first, u32 count)
{
	u32 i;

	lockdep_assert_held_write(&odp->lock);
	for (i = 0; i < count; i++) {
		unsigned long pfn = odp->pfns[i];

		if (!(pfn & HMM_PFN_VALID) ||
		    (odp->writable && !(pfn & HMM_PFN_WRITE)))
			continue;
		odp->pages[first + i] = hmm_pfn_to_page(pfn);
	}
}

/*
 * Look up [first, first + count) (at most SIB_ODP_CHUNK pages), faulting
 * them in if @fault, and store what was found unless an invalidation
 * came in between (then look again). fault_mutex held; sleeps.
 */
static int sib_odp_fault_chunk(struct sib_odp *odp, struct mm_struct *mm,
			       u32 first, u32 count, bool fault)
{
	struct hmm_range range = {
		.notifier = &odp->notifier,
		.start = odp->start + ((unsigned long)first << PAGE_SHIFT),
		.end = odp->start + ((unsigned long)(first + count) << PAGE_SHIFT),
		.hmm_pfns = odp->pfns,
	};
	unsigned long flags;
	int ret;

	lockdep_assert_held(&odp->fault_mutex);
	if (fault)
		range.default_flags = HMM_PFN_REQ_FAULT |
				      (odp->writable ? HMM_PFN_REQ_WRITE : 0);
	for (;;) {
		range.notifier_seq = mmu_interval_read_begin(&odp->notifier);
		mmap_read_lock(mm);
		ret = hmm_range_fault(&range);
		mmap_read_unlock(mm);
		if (ret == -EBUSY)
			continue;
		if (ret)
			return ret;
		write_lock_irqsave(&odp->lock, flags);
		if (!mmu_interval_read_retry(&odp->notifier,
					     range.notifier_seq)) {
			sib_odp_take(odp, first, count);
			write_unlock_irqrestore(&odp->lock, flags);
			return 0;
		}
		write_unlock_irqrestore(&odp->lock, flags);
		cond_resched();
	}
}

/*
 * Bring in the pages of @r (fault) or map those already present (!fault).
 * Sleeps. Return: 0, or the first error of hmm_range_fault() (-EFAULT
 * for an address that is not mapped, or not writable for a writable MR).
 */
static int sib_odp_fault(struct sib_odp *odp, struct sib_odp_range r,
			 bool fault)
{
	struct mm_struct *mm = odp->notifier.mm;
	int ret = 0;

	if (!mmget_not_zero(mm))
		return -EFAULT;
	mutex_lock(&odp->fault_mutex);
	while (r.count && !ret) {
		u32 n = min_t(u32, r.count, SIB_ODP_CHUNK);

		ret = sib_odp_fault_chunk(odp, mm, r.first, n, fault);
		if (!ret && fault)
			sib_count_n(odp->sdev, SIB_CNT_ODP_FAULT_PAGES, n);
		r.first += n;
		r.count -= n;
	}
	mutex_unlock(&odp->fault_mutex);
	mmput(mm);
	return ret;
}

static bool sib_odp_overlap(struct sib_odp_range a, struct sib_odp_range b)
{
	return a.first < b.first + b.count && b.first < a.first + a.count;
}

static bool sib_odp_within(struct sib_odp_range in, struct sib_odp_range r)
{
	return r.first >= in.first &&
	       r.first + r.count <= in.first + in.count;
}

/* Record @r for the worker, merged with one that holds it. req_lock held. */
static void sib_odp_add_pending(struct sib_odp *odp, struct sib_odp_range r)
{
	struct sib_odp_range *last;
	u32 i, end;

	lockdep_assert_held(&odp->req_lock);
	for (i = 0; i < odp->npend; i++)
		if (sib_odp_within(odp->pend[i], r))
			return;
	if (odp->npend < SIB_ODP_PENDING) {
		odp->pend[odp->npend++] = r;
		return;
	}
	last = &odp->pend[SIB_ODP_PENDING - 1];
	end = max(last->first + last->count, r.first + r.count);
	last->first = min(last->first, r.first);
	last->count = end - last->first;
}

/*
 * Queue a fault of @r, unless the last fault of an overlapping range
 * failed: then report that failure (once). Any context.
 */
static int sib_odp_request(struct sib_odp *odp, struct sib_odp_range r)
{
	unsigned long flags;
	int ret = -EAGAIN;

	spin_lock_irqsave(&odp->req_lock, flags);
	if (odp->has_failed && sib_odp_overlap(odp->failed, r)) {
		odp->has_failed = false;
		ret = -EFAULT;
	} else {
		sib_odp_add_pending(odp, r);
	}
	spin_unlock_irqrestore(&odp->req_lock, flags);
	if (ret == -EAGAIN)
		queue_work(system_unbound_wq, &odp->work);
	return ret;
}

static bool sib_odp_next(struct sib_odp *odp, struct sib_odp_range *r)
{
	unsigned long flags;
	bool more;

	spin_lock_irqsave(&odp->req_lock, flags);
	more = odp->npend && !READ_ONCE(odp->dead);
	if (more) {
		*r = odp->pend[0];
		odp->npend--;
		memmove(&odp->pend[0], &odp->pend[1],
			odp->npend * sizeof(odp->pend[0]));
	}
	spin_unlock_irqrestore(&odp->req_lock, flags);
	return more;
}

static void sib_odp_fail(struct sib_odp *odp, struct sib_odp_range r)
{
	unsigned long flags;

	spin_lock_irqsave(&odp->req_lock, flags);
	odp->failed = r;
	odp->has_failed = true;
	spin_unlock_irqrestore(&odp->req_lock, flags);
	sib_count(odp->sdev, SIB_CNT_ODP_FAULT_ERRORS);
}

/* The fault worker: bring in every pending range. Process context. */
static void sib_odp_work(struct work_struct *work)
{
	struct sib_odp *odp = container_of(work, struct sib_odp, work);
	struct sib_odp_range r;

	/*
	 * A fault racing with zaps of the same range (MADV_DONTNEED every
	 * 5 ms) has been seen to fail once, for a reason not yet known: a
	 * range is reported only when a second try fails too.
	 */
	while (sib_odp_next(odp, &r))
		if (sib_odp_fault(odp, r, true) && sib_odp_fault(odp, r, true))
			sib_odp_fail(odp, r);
}

int sib_odp_check(struct sib_odp *odp, u64 off, u64 len)
{
	u64 first = off >> PAGE_SHIFT, last = (off + len - 1) >> PAGE_SHIFT;
	struct sib_odp_range r;
	u64 i;

	if (last >= odp->npages)
		return -EFAULT;
	read_lock(&odp->lock);
	for (i = first; i <= last && odp->pages[i]; i++)
		;
	read_unlock(&odp->lock);
	if (i > last)
		return 0;
	r.first = i;
	r.count = last + 1 - i;
	return sib_odp_request(odp, r);
}

struct sib_odp *sib_odp_create(struct ib_device *dev, u64 start, u64 length,
			       int access)
{
	unsigned long first = start & PAGE_MASK;
	struct sib_odp *odp;
	u64 end;
	int ret;

	if (check_add_overflow(start, length, &end) || end > TASK_SIZE ||
	    !current->mm)
		return ERR_PTR(-EINVAL);
	odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	odp->sdev = to_sdev(dev);
	odp->start = first;
	odp->npages = (PAGE_ALIGN(end) - first) >> PAGE_SHIFT;
	odp->writable = ib_access_writable(access);
	rwlock_init(&odp->lock);
	spin_lock_init(&odp->req_lock);
	mutex_init(&odp->fault_mutex);
	INIT_WORK(&odp->work, sib_odp_work);
	ret = -ENOMEM;
	/* One pointer per page of the range, charged to the process' memcg. */
	odp->pages = kvcalloc(odp->npages, sizeof(*odp->pages),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	odp->pfns = kvcalloc(SIB_ODP_CHUNK, sizeof(*odp->pfns),
			     GFP_KERNEL_ACCOUNT);
	if (!odp->pages || !odp->pfns)
		goto err;
	ret = mmu_interval_notifier_insert(&odp->notifier, current->mm, first,
					   PAGE_ALIGN(end) - first,
					   &sib_odp_ops);
	if (ret)
		goto err;
	return odp;
err:
	kvfree(odp->pfns);
	kvfree(odp->pages);
	kfree(odp);
	return ERR_PTR(ret);
}

/*
 * The MR is drained (no data path user left, none can come): stop the
 * worker, then the notifier. Sleeps.
 */
void sib_odp_destroy(struct sib_odp *odp)
{
	if (!odp)
		return;
	WRITE_ONCE(odp->dead, true);
	cancel_work_sync(&odp->work);
	mmu_interval_notifier_remove(&odp->notifier);
	kvfree(odp->pfns);
	kvfree(odp->pages);
	kfree(odp);
}

/* The pages of one prefetch SGE, as a range of @odp's pages. */
static struct sib_odp_range sib_odp_sge_range(struct sib_mr *mr, u64 mr_iova,
					      u32 len)
{
	u64 off = mr_iova - mr->iova + mr->pg_off;
	struct sib_odp_range r = {
		.first = off >> PAGE_SHIFT,
		.count = ((off + len - 1) >> PAGE_SHIFT) - (off >> PAGE_SHIFT) + 1,
	};

	return r;
}

/*
 * Prefetch one SGE: fault its pages in now (@sync), queue them for the
 * worker (!@sync), or map only those present (NO_FAULT).
 */
static int sib_odp_prefetch_sge(struct sib_dev *sdev, struct ib_pd *pd,
				enum ib_uverbs_advise_mr_advice advice,
				bool sync, const struct ib_sge *sge)
{
	bool no_fault = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
	struct sib_odp_range r;
	struct sib_mr *mr;
	u64 mr_iova;
	int ret;

	if (!sge->length)
		return 0;
	mr = sib_mr_get_odp(sdev, pd, sge->lkey, sge->addr, sge->length,
			    advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    &mr_iova);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	r = sib_odp_sge_range(mr, mr_iova, sge->length);
	if (sync || no_fault)
		ret = sib_odp_fault(mr->odp, r, !no_fault);
	else
		ret = sib_odp_request(mr->odp, r) == -EFAULT ? -EFAULT : 0;
	sib_mr_put(mr);
	return ret;
}

int sib_odp_advise_mr(struct ib_pd *pd,
		      enum ib_uverbs_advise_mr_advice advice, u32 flags,
		      struct ib_sge *sg_list, u32 num_sge,
		      struct uverbs_attr_bundle *attrs)
{
	bool sync = flags & IB_UVERBS_ADVISE_MR_FLAG_FLUSH;
	u32 i;
	int ret;

	if (advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_WRITE &&
	    advice != IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT)
		return -EOPNOTSUPP;
	if (flags & ~IB_UVERBS_ADVISE_MR_FLAG_FLUSH)
		return -EOPNOTSUPP;
	for (i = 0; i < num_sge; i++) {
		ret = sib_odp_prefetch_sge(to_sdev(pd->device), pd, advice,
					   sync, &sg_list[i]);
		if (ret)
			return ret;
	}
	return 0;
}

void sib_odp_caps(struct ib_odp_caps *caps)
{
	caps->general_caps = IB_ODP_SUPPORT;
	caps->per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV;
	/* UC and UD responders have no RNR NAK to wait with: send only. */
	caps->per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND;
	caps->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}
