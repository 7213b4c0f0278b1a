// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: memory regions: the MR verbs (DMA, user and fast-registration MRs,
 * rereg, dereg, map_mr_sg), and the fast registration and invalidation
 * that send WQEs execute. The key table and the key lookup are
 * sib_mkey.c's, the copy engine sib_copy.c's.
 *
 * Locking: see struct sib_mem_table, struct sib_mr and struct sib_mw_ent
 * in sib_mr.h. Lock order: sib_mw_ent.lock, then sib_mr.lock.
 */
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>

#include "sib.h"
#include "sib_dm.h"
#include "sib_dmabuf.h"
#include "sib_mkey.h"
#include "sib_mw.h"
#include "sib_odp.h"

/*
 * Flags a registration accepts; the optional range is ignored. A FLUSH
 * may make writes visible (SIB_ACCESS_FLUSH_GLOBAL) but not persistent:
 * sib has no persistent memory, and SIB_ACCESS_FLUSH_PERSISTENT is
 * refused, as rdma_rxe refuses it for memory that is not pmem.
 */
#define SIB_MR_ACCESS_OK	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
				 IB_ACCESS_REMOTE_READ | IB_ACCESS_REMOTE_ATOMIC | \
				 IB_ACCESS_MW_BIND | IB_ACCESS_HUGETLB |	  \
				 SIB_ACCESS_FLUSH_GLOBAL | IB_ACCESS_OPTIONAL)

/* User pages pinned for one registration. */
struct sib_pin {
	struct ib_umem *umem;
	struct page **pages;
	u32 npages;
	u32 pg_off;
};

/* Drop the base reference and wait for every user. Sleeps. */
static void sib_mr_drain(struct sib_mr *mr)
{
	sib_mr_put(mr);
	wait_for_completion(&mr->drained);
}

/* Undo sib_mr_drain() once the MR may be looked up again. */
static void sib_mr_undrain(struct sib_mr *mr)
{
	reinit_completion(&mr->drained);
	refcount_set(&mr->ref, 1);
}

static int sib_check_access(int access)
{
	if (access & ~SIB_MR_ACCESS_OK)
		return -EINVAL;
	/* IBTA C10-80 (and ib_core): remote write/atomic need local write. */
	if ((access & (IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_ATOMIC)) &&
	    !(access & IB_ACCESS_LOCAL_WRITE))
		return -EINVAL;
	return 0;
}

/*
 * Only user MRs may page on demand (reg_user_mr's IB_ACCESS_ON_DEMAND);
 * they cannot have windows, which sib would have to keep mapped. Nor
 * can dma-buf MRs, which their exporter may revoke.
 */
static int sib_check_kind_access(u8 kind, int access)
{
	if (kind != SIB_MR_ODP && kind != SIB_MR_DMABUF)
		return sib_check_access(access);
	if (access & IB_ACCESS_MW_BIND)
		return -EINVAL;
	if (kind == SIB_MR_DMABUF)
		return sib_check_access(access);
	return sib_check_access(access & ~IB_ACCESS_ON_DEMAND);
}

static struct sib_mr *sib_mr_alloc(struct ib_pd *pd, u8 kind, int access)
{
	struct sib_mem_table *t = &to_sdev(pd->device)->mem;
	struct sib_mr *mr;
	int ret;

	ret = sib_check_kind_access(kind, access);
	if (ret)
		return ERR_PTR(ret);
	if (atomic_inc_return(&t->num_mr) > SIB_MAX_MR) {
		ret = -ENOMEM;
		goto err_count;
	}
	mr = kzalloc(sizeof(*mr), GFP_KERNEL);
	if (!mr) {
		ret = -ENOMEM;
		goto err_count;
	}
	mr->mk.kind = SIB_MKEY_MR;
	mr->mr_kind = kind;
	refcount_set(&mr->ref, 1);
	init_completion(&mr->drained);
	spin_lock_init(&mr->lock);
	seqcount_spinlock_init(&mr->seq, &mr->lock);
	mr->access = access;
	mr->pd = pd;
	atomic_set(&mr->num_mw, 0);
	ret = sib_mkey_reserve(t, &mr->mk);
	if (ret)
		goto err_free;
	mr->key = sib_new_key(mr->mk.index);
	mr->ib_mr.lkey = mr->key;
	mr->ib_mr.rkey = mr->key;
	mr->ib_mr.page_size = PAGE_SIZE;
	return mr;

err_free:
	kfree(mr);
err_count:
	atomic_dec(&t->num_mr);
	return ERR_PTR(ret);
}

/* Free an MR that sib_mr_alloc() made but that was never published. */
static void sib_mr_free_new(struct sib_mr *mr)
{
	struct sib_mem_table *t = &to_sdev(mr->pd->device)->mem;

	xa_erase(&t->xa, mr->mk.index);
	kfree(mr->fr_map);
	kfree(mr->fr_live);
	kfree(mr);
	atomic_dec(&t->num_mr);
}

static void sib_mr_publish(struct sib_mr *mr, u8 state)
{
	mr->state = state;
	mr->ib_mr.iova = mr->iova;
	mr->ib_mr.length = mr->length;
	sib_mkey_publish(&to_sdev(mr->pd->device)->mem, &mr->mk);
}

struct ib_mr *sib_get_dma_mr(struct ib_pd *pd, int access)
{
	struct sib_mr *mr = sib_mr_alloc(pd, SIB_MR_DMA, access);

	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->iova = 0;
	mr->length = U64_MAX;
	sib_mr_publish(mr, SIB_MEM_VALID);
	return &mr->ib_mr;
}

static int sib_pin(struct ib_device *dev, u64 start, u64 length, int access,
		   struct sib_pin *p)
{
	struct sg_page_iter it;
	u32 i = 0;

	p->umem = sib_umem_get(dev, start, length, access);
	if (IS_ERR(p->umem))
		return PTR_ERR(p->umem);
	p->npages = ib_umem_num_pages(p->umem);
	p->pages = kvmalloc_array(p->npages, sizeof(*p->pages), GFP_KERNEL);
	if (!p->pages) {
		ib_umem_release(p->umem);
		return -ENOMEM;
	}
	for_each_sgtable_page(&p->umem->sgt_append.sgt, &it, 0) {
		if (i == p->npages)
			break;
		p->pages[i++] = sg_page_iter_page(&it);
	}
	p->npages = i;
	p->pg_off = ib_umem_offset(p->umem);
	return 0;
}

static void sib_unpin(struct sib_pin *p)
{
	if (!p->umem)
		return;
	kvfree(p->pages);
	ib_umem_release(p->umem);
}

/* Exchange @p and the MR's pinned pages. Writers of mr->seq only. */
static void sib_mr_swap_pin(struct sib_mr *mr, struct sib_pin *p)
{
	swap(mr->umem, p->umem);
	swap(mr->pages, p->pages);
	swap(mr->npages, p->npages);
	swap(mr->pg_off, p->pg_off);
}

static int sib_check_length(u64 length)
{
	return length && length <= SIB_MAX_MR_SIZE ? 0 : -EINVAL;
}

/*
 * An ODP MR: nothing is pinned, pages come in on first use (sib_odp.h).
 * Explicit: [@start, @start + @length) at @iova. Implicit (@implicit,
 * ib_core's start 0 and length U64_MAX): the process' whole address
 * space, [0, TASK_SIZE), at its own addresses (@iova must be 0); an
 * access past TASK_SIZE is out of the MR's range.
 */
static struct ib_mr *sib_reg_odp_mr(struct ib_pd *pd, u64 start, u64 length,
				    u64 iova, int access, bool implicit)
{
	struct sib_odp *odp;
	struct sib_mr *mr;

	if (implicit && iova)
		return ERR_PTR(-EINVAL);
	mr = sib_mr_alloc(pd, SIB_MR_ODP, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	if (implicit)
		odp = sib_odp_create_implicit(pd->device, access);
	else
		odp = sib_odp_create(pd->device, start, length, access);
	if (IS_ERR(odp)) {
		sib_mr_free_new(mr);
		return ERR_CAST(odp);
	}
	mr->odp = odp;
	mr->pg_off = offset_in_page(start);
	mr->iova = iova;
	mr->length = implicit ? odp->npages << PAGE_SHIFT : length;
	sib_mr_publish(mr, SIB_MEM_VALID);
	return &mr->ib_mr;
}

struct ib_mr *sib_reg_user_mr(struct ib_pd *pd, u64 start, u64 length,
			      u64 iova, int access, SIB_REG_USER_MR_DMAH
			      struct ib_udata *udata)
{
	struct sib_pin pin = {};
	struct sib_mr *mr;
	int ret;

	/* Implicit ODP: the whole address space. */
	if ((access & IB_ACCESS_ON_DEMAND) && !start && length == U64_MAX)
		return sib_reg_odp_mr(pd, 0, 0, iova, access, true);
	ret = sib_check_length(length);
	if (ret)
		return ERR_PTR(ret);
	if (access & IB_ACCESS_ON_DEMAND)
		return sib_reg_odp_mr(pd, start, length, iova, access, false);
	mr = sib_mr_alloc(pd, SIB_MR_USER, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ret = sib_pin(pd->device, start, length, access, &pin);
	if (ret) {
		sib_mr_free_new(mr);
		return ERR_PTR(ret);
	}
	sib_mr_swap_pin(mr, &pin);
	mr->iova = iova;
	mr->length = length;
	sib_mr_publish(mr, SIB_MEM_VALID);
	return &mr->ib_mr;
}

/*
 * A dma-buf MR: @length bytes of the dma-buf @fd from @offset on, at
 * address @iova; sib_dmabuf.h. ib_core has checked that @offset and
 * @iova have the same offset in a page.
 */
struct ib_mr *sib_reg_user_mr_dmabuf(struct ib_pd *pd, u64 offset,
				     u64 length, u64 iova, int fd, int access,
				     SIB_REG_DMABUF_DMAH
				     SIB_REG_DMABUF_UDATA)
{
	struct sib_mr *mr;
	u64 end;
	int ret;

	ret = sib_check_length(length);
	if (ret)
		return ERR_PTR(ret);
	if (check_add_overflow(offset, length, &end) ||
	    check_add_overflow(iova, length, &end))
		return ERR_PTR(-EINVAL);
	mr = sib_mr_alloc(pd, SIB_MR_DMABUF, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	ret = sib_dmabuf_create(mr, fd, offset, length);
	if (ret) {
		sib_mr_free_new(mr);
		return ERR_PTR(ret);
	}
	mr->iova = iova;
	mr->length = length;
	sib_mr_publish(mr, SIB_MEM_VALID);
	sib_dmabuf_published(mr);
	return &mr->ib_mr;
}

struct ib_mr *sib_mr_reg_dm(struct ib_pd *pd, struct sib_dm_mem *mem,
			    u64 offset, u64 length, int access)
{
	u64 size = (u64)mem->npages << PAGE_SHIFT;
	struct sib_mr *mr;

	if (offset > size || length > size - offset)
		return ERR_PTR(-EINVAL);
	mr = sib_mr_alloc(pd, SIB_MR_DM, access);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	sib_dm_mem_get(mem);
	mr->dm_mem = mem;
	mr->pages = mem->pages + (offset >> PAGE_SHIFT);
	mr->npages = mem->npages - (offset >> PAGE_SHIFT);
	mr->pg_off = offset_in_page(offset);
	mr->iova = 0;
	mr->length = length;
	sib_mr_publish(mr, SIB_MEM_VALID);
	return &mr->ib_mr;
}

/*
 * Stop new lookups of @mr: refused with -EBUSY while windows are bound
 * (IBTA 10.6.7.2.6: an MR with bound windows can be neither deregistered
 * nor reregistered). Afterwards bind and invalidate see SIB_MEM_BUSY.
 */
static int sib_mr_quiesce(struct sib_mr *mr)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (atomic_read(&mr->num_mw)) {
		ret = -EBUSY;
	} else {
		write_seqcount_begin(&mr->seq);
		mr->state = SIB_MEM_BUSY;
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}

int sib_dereg_mr(struct ib_mr *ib_mr, struct ib_udata *udata)
{
	struct sib_mr *mr = to_smr(ib_mr);
	struct sib_mem_table *t = &to_sdev(mr->pd->device)->mem;
	struct sib_pin pin = {};
	int ret;

	ret = sib_mr_quiesce(mr);
	if (ret)
		return ret;
	xa_erase(&t->xa, mr->mk.index);
	sib_mr_drain(mr);
	sib_odp_destroy(mr->odp);
	sib_mr_swap_pin(mr, &pin);
	sib_unpin(&pin);
	sib_dm_mem_put(mr->dm_mem);
	sib_dmabuf_destroy(mr->dmabuf);
	kfree(mr->fr_map);
	kfree(mr->fr_live);
	atomic_dec(&t->num_mr);
	kfree_rcu(mr, rcu);
	return 0;
}

/* What a rereg changes, worked out before the MR is touched. */
struct sib_rereg {
	int access;
	struct ib_pd *pd;
	u64 iova;
	u64 length;
	struct sib_pin pin;	/* new pages, or none */
};

static int sib_rereg_prepare(struct sib_mr *mr, int flags, u64 start,
			     u64 length, u64 iova, int access,
			     struct ib_pd *pd, struct sib_rereg *r)
{
	bool repin;
	int ret;

	r->access = flags & IB_MR_REREG_ACCESS ? access : mr->access;
	r->pd = flags & IB_MR_REREG_PD ? pd : mr->pd;
	ret = sib_check_access(r->access);
	if (ret)
		return ret;
	if (flags & IB_MR_REREG_TRANS) {
		ret = sib_check_length(length);
		if (ret)
			return ret;
	} else {
		start = mr->umem->address;
		length = mr->umem->length;
		iova = mr->iova;
	}
	r->iova = iova;
	r->length = length;
	/* Pages pinned read-only must be pinned again to become writable. */
	repin = (flags & IB_MR_REREG_TRANS) ||
		(ib_access_writable(r->access) &&
		 !ib_access_writable(mr->access));
	if (!repin)
		return 0;
	return sib_pin(mr->ib_mr.device, start, length, r->access, &r->pin);
}

static void sib_rereg_apply(struct sib_mr *mr, struct sib_rereg *r)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	write_seqcount_begin(&mr->seq);
	if (r->pin.umem)
		sib_mr_swap_pin(mr, &r->pin);
	mr->iova = r->iova;
	mr->length = r->length;
	mr->access = r->access;
	mr->pd = r->pd;
	mr->state = SIB_MEM_VALID;
	write_seqcount_end(&mr->seq);
	spin_unlock_irqrestore(&mr->lock, flags);

	mr->ib_mr.lkey = mr->key;
	mr->ib_mr.rkey = mr->key;
	mr->ib_mr.iova = mr->iova;
	mr->ib_mr.length = mr->length;
}

/*
 * Always modified in place (returns NULL): the keys stay (as on mlx5;
 * rdma-core's tests rely on it), and no lookup succeeds while the MR
 * changes. ib_core updates
 * ib_mr.pd, .iova and .length itself after we return.
 */
struct ib_mr *sib_rereg_user_mr(struct ib_mr *ib_mr, int flags, u64 start,
				u64 length, u64 iova, int access,
				struct ib_pd *pd, struct ib_udata *udata)
{
	struct sib_mr *mr = to_smr(ib_mr);
	struct sib_rereg r = {};
	int ret;

	if (mr->mr_kind != SIB_MR_USER)
		return ERR_PTR(-EINVAL);
	if (flags & ~IB_MR_REREG_SUPPORTED)
		return ERR_PTR(-EOPNOTSUPP);
	ret = sib_rereg_prepare(mr, flags, start, length, iova, access, pd,
				&r);
	if (ret)
		return ERR_PTR(ret);
	ret = sib_mr_quiesce(mr);
	if (ret) {
		sib_unpin(&r.pin);
		return ERR_PTR(ret);
	}
	sib_mr_drain(mr);
	sib_rereg_apply(mr, &r);
	sib_mr_undrain(mr);
	/* r.pin now holds the old pages, if they were replaced. */
	sib_unpin(&r.pin);
	return NULL;
}

struct ib_mr *sib_alloc_mr(struct ib_pd *pd, enum ib_mr_type type,
			   u32 max_num_sg)
{
	struct sib_mr *mr;

	if ((type != IB_MR_TYPE_MEM_REG && type != IB_MR_TYPE_SG_GAPS) ||
	    !max_num_sg || max_num_sg > SIB_MAX_FAST_REG_PAGES)
		return ERR_PTR(-EINVAL);
	mr = sib_mr_alloc(pd, SIB_MR_FAST, 0);
	if (IS_ERR(mr))
		return ERR_CAST(mr);
	mr->fr_map = kcalloc(max_num_sg, sizeof(*mr->fr_map), GFP_KERNEL);
	mr->fr_live = kcalloc(max_num_sg, sizeof(*mr->fr_live), GFP_KERNEL);
	if (!mr->fr_map || !mr->fr_live) {
		sib_mr_free_new(mr);
		return ERR_PTR(-ENOMEM);
	}
	mr->fr_max = max_num_sg;
	mr->fr_shift = PAGE_SHIFT;
	mr->fr_gaps = type == IB_MR_TYPE_SG_GAPS;
	sib_mr_publish(mr, SIB_MEM_FREE);
	return &mr->ib_mr;
}

static int sib_set_page(struct ib_mr *ib_mr, u64 addr)
{
	struct sib_mr *mr = to_smr(ib_mr);

	if (mr->fr_nmap >= mr->fr_max)
		return -ENOMEM;
	mr->fr_map[mr->fr_nmap++].addr = addr;
	return 0;
}

/*
 * IB_MR_TYPE_SG_GAPS: every SG entry is a segment, whatever its address
 * and length; the region is their concatenation, from the first one's
 * address on. Returns the number of entries mapped (all of them, or as
 * many as the list holds).
 */
static int sib_map_gaps(struct sib_mr *mr, struct scatterlist *sgl,
			int sg_nents, unsigned int *sg_offset)
{
	unsigned int skip = sg_offset ? *sg_offset : 0;
	struct scatterlist *sg;
	u64 total = 0;
	int i;

	for_each_sg(sgl, sg, sg_nents, i) {
		u64 addr = sg_dma_address(sg) + skip;
		u32 len = sg_dma_len(sg) - skip;

		if (mr->fr_nmap >= mr->fr_max)
			break;
		if (!i)
			mr->ib_mr.iova = addr;
		total += len;
		mr->fr_map[mr->fr_nmap].addr = addr;
		mr->fr_map[mr->fr_nmap].end = total;
		mr->fr_nmap++;
		skip = 0;
	}
	mr->ib_mr.length = total;
	if (sg_offset)
		*sg_offset = 0;
	return i;
}

/*
 * Fill the staging list. With virtual DMA (sib has no DMA device) the
 * "DMA addresses" are kernel virtual addresses.
 */
int sib_map_mr_sg(struct ib_mr *ib_mr, struct scatterlist *sg, int sg_nents,
		  unsigned int *sg_offset)
{
	struct sib_mr *mr = to_smr(ib_mr);

	if (mr->mr_kind != SIB_MR_FAST)
		return -EINVAL;
	mr->fr_nmap = 0;
	if (mr->fr_gaps)
		return sib_map_gaps(mr, sg, sg_nents, sg_offset);
	return ib_sg_to_pages(ib_mr, sg, sg_nents, sg_offset, sib_set_page);
}

/*
 * The registration a REG_MR WQE asks for, against the page list that
 * ib_map_mr_sg() wrote: 0 or -EINVAL. The page size is one that
 * ib_sg_to_pages() may have used (4 KiB to 2 GiB), and the pages cover
 * the region.
 */
static int sib_fast_reg_check(struct sib_mr *mr, const struct sib_send_wqe *w)
{
	u32 shift = w->wr.reg_mr.page_shift, npages = w->wr.reg_mr.npages;
	u64 iova = w->wr.reg_mr.iova, length = w->wr.reg_mr.length;
	u64 pgsz, first;

	if (sib_check_access(w->wr.reg_mr.access) || shift < 12 ||
	    shift > 31 || !npages || npages > mr->fr_max ||
	    npages > READ_ONCE(mr->fr_nmap) || !length ||
	    length > SIB_MAX_MR_SIZE || iova + length < iova)
		return -EINVAL;
	/* Segments: the region is as long as they are together. */
	if (mr->fr_gaps)
		return length == READ_ONCE(mr->fr_map[npages - 1].end) ?
		       0 : -EINVAL;
	pgsz = 1ULL << shift;
	first = iova & (pgsz - 1);
	return first + length <= (u64)npages * pgsz ? 0 : -EINVAL;
}

int sib_mr_fast_reg(struct sib_dev *sdev, struct ib_pd *pd,
		    const struct sib_send_wqe *w)
{
	u32 key = w->wr.reg_mr.key;
	struct sib_mkey *mk;
	struct sib_mr *mr;
	unsigned long flags;
	int ret = -EINVAL;
	u32 i;

	rcu_read_lock();
	mk = sib_mkey_find(&sdev->mem, key);
	if (!mk || mk->kind != SIB_MKEY_MR)
		goto out_rcu;
	mr = container_of(mk, struct sib_mr, mk);
	if (mr->mr_kind != SIB_MR_FAST || sib_fast_reg_check(mr, w))
		goto out_rcu;
	spin_lock_irqsave(&mr->lock, flags);
	/* Only a free MR (new, or invalidated) may be registered. */
	if (mr->state != SIB_MEM_FREE || mr->pd != pd)
		goto out;
	write_seqcount_begin(&mr->seq);
	for (i = 0; i < mr->fr_max; i++) {
		bool in = i < w->wr.reg_mr.npages;

		WRITE_ONCE(mr->fr_live[i].addr, in ? mr->fr_map[i].addr : 0);
		WRITE_ONCE(mr->fr_live[i].end, in ? mr->fr_map[i].end : 0);
	}
	WRITE_ONCE(mr->fr_shift, w->wr.reg_mr.page_shift);
	mr->npages = w->wr.reg_mr.npages;
	mr->iova = w->wr.reg_mr.iova;
	mr->length = w->wr.reg_mr.length;
	mr->access = w->wr.reg_mr.access;
	mr->key = key;
	mr->state = SIB_MEM_VALID;
	write_seqcount_end(&mr->seq);
	ret = 0;
out:
	spin_unlock_irqrestore(&mr->lock, flags);
out_rcu:
	rcu_read_unlock();
	return ret;
}

/* Invalidate a fast-registration MR; called under RCU. */
static int sib_mr_invalidate(struct sib_mr *mr, struct ib_pd *pd, u32 key)
{
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->mr_kind != SIB_MR_FAST || mr->state != SIB_MEM_VALID ||
	    mr->key != key || mr->pd != pd) {
		ret = -EINVAL;
	} else if (atomic_read(&mr->num_mw)) {
		ret = -EBUSY;
	} else {
		write_seqcount_begin(&mr->seq);
		mr->state = SIB_MEM_FREE;
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
	return ret;
}

int sib_mem_invalidate(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		       u32 rkey, bool remote)
{
	struct sib_mkey *mk;
	int ret;

	/* The same rules apply to local and remote invalidation. */
	rcu_read_lock();
	mk = sib_mkey_find(&sdev->mem, rkey);
	if (!mk)
		ret = -EINVAL;
	else if (mk->kind == SIB_MKEY_MW)
		ret = sib_mw_invalidate(container_of(mk, struct sib_mw_ent, mk),
					pd, qpn, rkey);
	else
		ret = sib_mr_invalidate(container_of(mk, struct sib_mr, mk),
					pd, rkey);
	rcu_read_unlock();
	return ret;
}
