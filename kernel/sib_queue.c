// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: ring memory and device memory, and their mapping into user space.
 *
 * A user ring's memory belongs to its mmap entry: destroying the queue
 * removes the entry, and ib_core calls sib_mmap_free() (which frees the
 * memory) once no mmap() is in progress on it. Pages already mapped into
 * a process stay referenced by that mapping, so a process that keeps a
 * ring mapped after destroying its object only sees stale memory.
 * Device memory (sib_dm.c) is mapped through entries of the same kind;
 * such an entry holds a reference on the pages instead of owning them.
 */
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "sib_compat.h"
#include "sib_dm.h"
#include "sib_queue.h"

/*
 * What an mmap entry exposes: a ring (@buf, vmalloc memory that the entry
 * owns) or device memory (@dm, on which the entry holds a reference).
 */
struct sib_mmap_entry {
	struct rdma_user_mmap_entry rdma;
	void *buf;
	struct sib_dm_mem *dm;
};

int sib_queue_init(struct sib_queue *q, u32 nslots, u32 slot_size)
{
	size_t size;

	if (!is_power_of_2(nslots) || !is_power_of_2(slot_size))
		return -EINVAL;
	size = PAGE_ALIGN(SIB_RING_HDR_SIZE + (size_t)nslots * slot_size);
	/*
	 * Charged to the creator's memory cgroup: a ring can be 16 MiB. Its
	 * size is the user's choice, so a failure is the user's ENOMEM, not
	 * a warning in the kernel log.
	 */
	q->hdr = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (!q->hdr)
		return -ENOMEM;
	q->slots = (void *)q->hdr + SIB_RING_HDR_SIZE;
	q->nslots = nslots;
	q->slot_size = slot_size;
	q->size = size;
	q->kidx = 0;
	q->entry = NULL;
	return 0;
}

/* Hand the ring to user space: its memory then belongs to the entry. */
int sib_queue_expose(struct sib_queue *q, struct ib_ucontext *uctx,
		     struct sib_ring_info *info)
{
	struct sib_mmap_entry *e;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->buf = q->hdr;
	ret = rdma_user_mmap_entry_insert(uctx, &e->rdma, q->size);
	if (ret) {
		kfree(e);
		return ret;
	}
	q->entry = &e->rdma;
	info->mmap_offset = rdma_user_mmap_get_offset(q->entry);
	info->mmap_size = q->size;
	info->nslots = q->nslots;
	info->slot_size = q->slot_size;
	return 0;
}

struct rdma_user_mmap_entry *sib_mmap_insert_dm(struct ib_ucontext *uctx,
						struct sib_dm_mem *dm)
{
	struct sib_mmap_entry *e;
	int ret;

	e = kzalloc(sizeof(*e), GFP_KERNEL_ACCOUNT);
	if (!e)
		return ERR_PTR(-ENOMEM);
	e->dm = dm;
	ret = rdma_user_mmap_entry_insert(uctx, &e->rdma,
					  (size_t)dm->npages << PAGE_SHIFT);
	if (ret) {
		kfree(e);
		return ERR_PTR(ret);
	}
	sib_dm_mem_get(dm);
	return &e->rdma;
}

void sib_queue_destroy(struct sib_queue *q)
{
	if (q->entry)
		rdma_user_mmap_entry_remove(q->entry);
	else
		vfree(q->hdr);
	q->entry = NULL;
	q->hdr = NULL;
	q->slots = NULL;
}

/*
 * Map the ring's pages, one by one, as remap_vmalloc_range() does (which
 * wants vmalloc_user() memory, and that cannot be charged to a memory
 * cgroup). Each mapped page holds a reference of its own.
 */
static int sib_map_pages(struct vm_area_struct *vma, void *buf)
{
	unsigned long addr;
	int ret;

	sib_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
	for (addr = vma->vm_start; addr < vma->vm_end; addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, vmalloc_to_page(buf));
		if (ret)
			return ret;
		buf += PAGE_SIZE;
	}
	return 0;
}

int sib_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma)
{
	struct rdma_user_mmap_entry *re;
	struct sib_mmap_entry *e;
	int ret;

	re = rdma_user_mmap_entry_get(uctx, vma);
	if (!re)
		return -EINVAL;
	e = container_of(re, struct sib_mmap_entry, rdma);
	if (vma->vm_end - vma->vm_start > re->npages << PAGE_SHIFT)
		ret = -EINVAL;
	else if (e->dm)
		ret = sib_dm_mem_map(vma, e->dm);
	else
		ret = sib_map_pages(vma, e->buf);
	rdma_user_mmap_entry_put(re);
	return ret;
}

void sib_mmap_free(struct rdma_user_mmap_entry *re)
{
	struct sib_mmap_entry *e = container_of(re, struct sib_mmap_entry,
						rdma);

	if (e->dm)
		sib_dm_mem_put(e->dm);
	else
		vfree(e->buf);
	kfree(e);
}
