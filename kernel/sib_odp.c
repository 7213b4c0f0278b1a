// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: on-demand paging. The pages of an ODP MR: the interval notifier
 * that forgets them, the fault worker that brings them in with
 * hmm_range_fault(), the presence check of the data path, and
 * ibv_advise_mr()'s prefetch. An implicit MR's chunks are explicit page
 * sets that its own worker (or a prefetch) makes on first use.
 *
 * Locking: see struct sib_odp in sib_odp.h. Lock order: fault_mutex,
 * then the mm's mmap lock (around hmm_range_fault() and the insertion of
 * a chunk's notifier only), then lock; req_lock is taken alone. An
 * implicit MR's fault_mutex and a chunk's are never held together.
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
static void sib_odp_take(struct sib_odp *odp, u64 first, u32 count)
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
			       u64 first, u32 count, bool fault)
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
 * Bring in the pages of @r (fault) or map those already present (!fault);
 * not of an implicit MR (of one of its chunks). Sleeps. Return: 0, or the
 * first error of hmm_range_fault() (-EFAULT for an address that is not
 * mapped, or not writable for a writable MR).
 */
static int sib_odp_fault(struct sib_odp *odp, struct sib_odp_range r,
			 bool fault)
{
	struct mm_struct *mm = odp->mm;
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

/* The chunk of an implicit MR that holds page @first of the address space. */
static unsigned long sib_odp_chunk_idx(u64 first)
{
	return first >> (SIB_ODP_IMP_SHIFT - PAGE_SHIFT);
}

/*
 * Record @r for the worker. Once the list is full, @r is merged into the
 * last entry; of an implicit MR only if both are of one chunk (not into a
 * range across the holes of the address space): else @r is dropped, and
 * the access that wanted it asks again after its RNR NAK or wait.
 * req_lock held.
 */
static void sib_odp_add_pending(struct sib_odp *odp, struct sib_odp_range r)
{
	struct sib_odp_range *last;
	u64 end;
	u32 i;

	lockdep_assert_held(&odp->req_lock);
	for (i = 0; i < odp->npend; i++)
		if (sib_odp_within(odp->pend[i], r))
			return;
	if (odp->npend < SIB_ODP_PENDING) {
		odp->pend[odp->npend++] = r;
		return;
	}
	last = &odp->pend[SIB_ODP_PENDING - 1];
	if (odp->implicit &&
	    sib_odp_chunk_idx(last->first) != sib_odp_chunk_idx(r.first))
		return;
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

/*
 * Fault @r in, and if that fails, once more: a fault racing with zaps of
 * the same range (MADV_DONTNEED every 5 ms) has been seen to fail once,
 * for a reason not yet known. A range is reported only when the second
 * try fails too. Not an implicit MR. Sleeps.
 */
static void sib_odp_bring_in(struct sib_odp *odp, struct sib_odp_range r)
{
	if (sib_odp_fault(odp, r, true) && sib_odp_fault(odp, r, true))
		sib_odp_fail(odp, r);
}

static struct sib_odp *sib_odp_chunk_get(struct sib_odp *odp,
					 unsigned long idx);

/*
 * An implicit MR's pending range (of one chunk): make the chunk if need
 * be, then bring the pages in there. A chunk that cannot be made fails
 * the range on the implicit MR itself. Sleeps.
 */
static void sib_odp_imp_bring_in(struct sib_odp *odp, struct sib_odp_range r)
{
	struct sib_odp *c = sib_odp_chunk_get(odp, sib_odp_chunk_idx(r.first));

	if (IS_ERR(c)) {
		sib_odp_fail(odp, r);
		return;
	}
	r.first -= c->start >> PAGE_SHIFT;
	sib_odp_bring_in(c, r);
}

/* The fault worker: bring in every pending range. Process context. */
static void sib_odp_work(struct work_struct *work)
{
	struct sib_odp *odp = container_of(work, struct sib_odp, work);
	struct sib_odp_range r;

	while (sib_odp_next(odp, &r)) {
		if (odp->implicit)
			sib_odp_imp_bring_in(odp, r);
		else
			sib_odp_bring_in(odp, r);
	}
}

struct sib_odp *sib_odp_at(struct sib_odp *odp, u64 *off, u64 *room)
{
	u64 in;

	if (!odp->implicit) {
		*room = (odp->npages << PAGE_SHIFT) - *off;
		return odp;
	}
	in = *off & (SIB_ODP_IMP_SIZE - 1);
	*room = SIB_ODP_IMP_SIZE - in;
	odp = xa_load(&odp->chunks, *off >> SIB_ODP_IMP_SHIFT);
	*off = in;
	return odp;
}

/* The pages of [@off, @off + @len) of @odp: [first, first + count). */
static struct sib_odp_range sib_odp_bytes(u64 off, u64 len)
{
	struct sib_odp_range r = {
		.first = off >> PAGE_SHIFT,
		.count = ((off + len - 1) >> PAGE_SHIFT) - (off >> PAGE_SHIFT) + 1,
	};

	return r;
}

/* sib_odp_check() of an explicit MR, or of a chunk. */
static int sib_odp_check_pages(struct sib_odp *odp, u64 off, u64 len)
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

/*
 * sib_odp_check() of an implicit MR: chunk by chunk. A chunk not made yet
 * is asked of the implicit MR's worker, which makes it and brings the
 * pages in. Every missing part is asked for at once, so that a range
 * across chunks needs one RNR NAK, not one per chunk.
 */
static int sib_odp_check_implicit(struct sib_odp *odp, u64 off, u64 len)
{
	int ret = 0;

	if (off >= odp->npages << PAGE_SHIFT ||
	    len > (odp->npages << PAGE_SHIFT) - off)
		return -EFAULT;
	while (len) {
		u64 in = off, room;
		struct sib_odp *c = sib_odp_at(odp, &in, &room);
		u64 n = min(len, room);
		int err;

		if (c)
			err = sib_odp_check_pages(c, in, n);
		else
			err = sib_odp_request(odp, sib_odp_bytes(off, n));
		if (err == -EFAULT)
			return err;
		if (err)
			ret = err;
		off += n;
		len -= n;
	}
	return ret;
}

int sib_odp_check(struct sib_odp *odp, u64 off, u64 len)
{
	if (odp->implicit)
		return sib_odp_check_implicit(odp, off, len);
	return sib_odp_check_pages(odp, off, len);
}

/* A struct sib_odp, with no pages yet. Process context. */
static struct sib_odp *sib_odp_alloc(struct sib_dev *sdev,
				     struct mm_struct *mm, int access)
{
	struct sib_odp *odp = kzalloc(sizeof(*odp), GFP_KERNEL_ACCOUNT);

	if (!odp)
		return NULL;
	odp->sdev = sdev;
	odp->mm = mm;
	odp->writable = ib_access_writable(access);
	rwlock_init(&odp->lock);
	spin_lock_init(&odp->req_lock);
	mutex_init(&odp->fault_mutex);
	INIT_WORK(&odp->work, sib_odp_work);
	xa_init(&odp->chunks);
	return odp;
}

/*
 * The page array and the notifier of an explicit MR, or of a chunk, over
 * @npages pages from @start on (page aligned), in @mm (whose users the
 * caller holds). Process context.
 */
static int sib_odp_init_pages(struct sib_odp *odp, unsigned long start,
			      u64 npages)
{
	odp->start = start;
	odp->npages = npages;
	/* One pointer per page of the range, charged to the process' memcg. */
	odp->pages = kvcalloc(npages, sizeof(*odp->pages),
			      GFP_KERNEL_ACCOUNT | __GFP_NOWARN);
	odp->pfns = kvcalloc(SIB_ODP_CHUNK, sizeof(*odp->pfns),
			     GFP_KERNEL_ACCOUNT);
	if (!odp->pages || !odp->pfns)
		return -ENOMEM;
	return mmu_interval_notifier_insert(&odp->notifier, odp->mm, start,
					    npages << PAGE_SHIFT,
					    &sib_odp_ops);
}

/* Free what sib_odp_alloc() and a failed sib_odp_init_pages() left. */
static void sib_odp_free(struct sib_odp *odp)
{
	kvfree(odp->pfns);
	kvfree(odp->pages);
	kfree(odp);
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
	odp = sib_odp_alloc(to_sdev(dev), current->mm, access);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	ret = sib_odp_init_pages(odp, first,
				 (PAGE_ALIGN(end) - first) >> PAGE_SHIFT);
	if (ret) {
		sib_odp_free(odp);
		return ERR_PTR(ret);
	}
	return odp;
}

struct sib_odp *sib_odp_create_implicit(struct ib_device *dev, int access)
{
	struct sib_odp *odp;

	if (!current->mm)
		return ERR_PTR(-EINVAL);
	odp = sib_odp_alloc(to_sdev(dev), current->mm, access);
	if (!odp)
		return ERR_PTR(-ENOMEM);
	odp->implicit = true;
	odp->npages = (TASK_SIZE & PAGE_MASK) >> PAGE_SHIFT;
	/* The chunks' notifiers hold the mm too; this keeps it for them. */
	mmgrab(odp->mm);
	return odp;
}

/*
 * Make chunk @idx of an implicit MR, over [@start, @start + @npages
 * pages), and publish it in @odp->chunks. fault_mutex held (it guards
 * nchunks, and no two chunks of one index are made); the mm's users held.
 */
static struct sib_odp *sib_odp_chunk_new(struct sib_odp *odp,
					 unsigned long idx,
					 unsigned long start, u64 npages)
{
	struct sib_odp *c;
	int ret;

	lockdep_assert_held(&odp->fault_mutex);
	if (odp->nchunks >= SIB_ODP_IMP_MAX)
		return ERR_PTR(-ENOMEM);
	c = sib_odp_alloc(odp->sdev, odp->mm,
			  odp->writable ? IB_ACCESS_LOCAL_WRITE : 0);
	if (!c)
		return ERR_PTR(-ENOMEM);
	ret = sib_odp_init_pages(c, start, npages);
	if (ret)
		goto err_free;
	ret = xa_err(xa_store(&odp->chunks, idx, c, GFP_KERNEL_ACCOUNT));
	if (ret)
		goto err_remove;
	odp->nchunks++;
	atomic_inc(&odp->sdev->mem.num_odp_chunks);
	return c;

err_remove:
	mmu_interval_notifier_remove(&c->notifier);
err_free:
	sib_odp_free(c);
	return ERR_PTR(ret);
}

/*
 * Chunk @idx of an implicit MR: found, or made (at most SIB_ODP_IMP_MAX
 * of them). Process context; sleeps. Return: the chunk, or ERR_PTR:
 * -ENOMEM (no memory, or too many chunks), -EFAULT (outside the address
 * space, or the process is exiting).
 */
static struct sib_odp *sib_odp_chunk_get(struct sib_odp *odp,
					 unsigned long idx)
{
	unsigned long start = idx << SIB_ODP_IMP_SHIFT;
	struct sib_odp *c;

	c = xa_load(&odp->chunks, idx);
	if (c)
		return c;
	if (start >= odp->npages << PAGE_SHIFT || !mmget_not_zero(odp->mm))
		return ERR_PTR(-EFAULT);
	mutex_lock(&odp->fault_mutex);
	c = xa_load(&odp->chunks, idx);
	if (!c)
		/* The last chunk ends with the address space. */
		c = sib_odp_chunk_new(odp, idx, start,
				      min_t(u64, SIB_ODP_IMP_PAGES,
					    odp->npages - (start >> PAGE_SHIFT)));
	mutex_unlock(&odp->fault_mutex);
	mmput(odp->mm);
	return c;
}

/*
 * The MR is drained (no data path user left, none can come): stop the
 * worker, then the notifier; of an implicit MR, every chunk. Sleeps.
 */
void sib_odp_destroy(struct sib_odp *odp)
{
	struct sib_odp *c;
	unsigned long idx;

	if (!odp)
		return;
	WRITE_ONCE(odp->dead, true);
	cancel_work_sync(&odp->work);
	if (odp->implicit) {
		/* The worker is stopped: no chunk can be made any more. */
		xa_for_each(&odp->chunks, idx, c) {
			sib_odp_destroy(c);
			atomic_dec(&odp->sdev->mem.num_odp_chunks);
			cond_resched();
		}
		xa_destroy(&odp->chunks);
		mmdrop(odp->mm);
	} else {
		mmu_interval_notifier_remove(&odp->notifier);
	}
	sib_odp_free(odp);
}

/*
 * Prefetch [@off, @off + @len) of @odp: fault its pages in now (@sync),
 * queue them for the worker (!@sync), or map only those present
 * (!@fault). An implicit MR's range goes chunk by chunk; a synchronous
 * prefetch makes the chunks itself. Sleeps.
 */
static int sib_odp_prefetch(struct sib_odp *odp, u64 off, u64 len,
			    bool sync, bool fault)
{
	int ret = 0;

	while (len && !ret) {
		u64 in = off, room;
		struct sib_odp *c = sib_odp_at(odp, &in, &room);
		u64 n = min(len, room);

		if (!sync && fault) {
			/* The implicit MR's worker makes missing chunks. */
			ret = c ? sib_odp_request(c, sib_odp_bytes(in, n)) :
				  sib_odp_request(odp, sib_odp_bytes(off, n));
			ret = ret == -EFAULT ? ret : 0;
		} else {
			if (!c)
				c = sib_odp_chunk_get(odp,
						      off >> SIB_ODP_IMP_SHIFT);
			ret = IS_ERR(c) ? PTR_ERR(c) :
			      sib_odp_fault(c, sib_odp_bytes(in, n), fault);
		}
		off += n;
		len -= n;
	}
	return ret;
}

/* Prefetch one SGE (see sib_odp_prefetch()). */
static int sib_odp_prefetch_sge(struct sib_dev *sdev, struct ib_pd *pd,
				enum ib_uverbs_advise_mr_advice advice,
				bool sync, const struct ib_sge *sge)
{
	bool no_fault = advice == IB_UVERBS_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT;
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
	ret = sib_odp_prefetch(mr->odp, mr_iova - mr->iova + mr->pg_off,
			       sge->length, sync || no_fault, !no_fault);
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
	caps->general_caps = IB_ODP_SUPPORT | IB_ODP_SUPPORT_IMPLICIT;
	caps->per_transport_caps.rc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_RECV | IB_ODP_SUPPORT_WRITE |
		IB_ODP_SUPPORT_READ | IB_ODP_SUPPORT_ATOMIC |
		IB_ODP_SUPPORT_SRQ_RECV;
	/* XRC is RC's transport, with SRQs only (XRC_TGT has no RQ). */
	caps->per_transport_caps.xrc_odp_caps = IB_ODP_SUPPORT_SEND |
		IB_ODP_SUPPORT_WRITE | IB_ODP_SUPPORT_READ |
		IB_ODP_SUPPORT_ATOMIC | IB_ODP_SUPPORT_SRQ_RECV;
	/* UC and UD responders have no RNR NAK to wait with: send only. */
	caps->per_transport_caps.uc_odp_caps = IB_ODP_SUPPORT_SEND;
	caps->per_transport_caps.ud_odp_caps = IB_ODP_SUPPORT_SEND;
}
