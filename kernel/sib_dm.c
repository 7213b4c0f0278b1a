// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: device memory. A soft device has no memory of its own, so an
 * allocation (ibv_alloc_dm) is a set of zeroed kernel pages that the
 * device owns: the process reaches them only through a mapping of the
 * context's command file (the mmap entry made here), and the device only
 * through zero-based MRs registered on them (ibv_reg_dm_mr), which the
 * packet engines treat like MRs of pinned user pages. All allocations of
 * a device together are bounded by SIB_MAX_DM_SIZE (max_dm_size).
 *
 * The ABI: uapi/rdma_user_sib.h, "Device memory". The driver's uverbs
 * definitions add a response attribute (struct sib_dm_info) to ib_core's
 * UVERBS_METHOD_DM_ALLOC and a method that returns it again for an
 * allocation of the context (ibv_import_dm()).
 *
 * Locking: none of its own. Lifetimes and references: sib_dm.h.
 */
#include <linux/mm.h>
#include <linux/overflow.h>
#include <linux/slab.h>
#include <rdma/ib_verbs.h>

#define UVERBS_MODULE_NAME sib_ib
#include <rdma/uverbs_named_ioctl.h>

#include "sib.h"
#include "sib_dm.h"
#include "sib_queue.h"

static_assert(SIB_UVERBS_ID_DRIVER_NS == 1U << UVERBS_ID_NS_SHIFT);

static void sib_dm_mem_release(struct kref *ref)
{
	struct sib_dm_mem *mem = container_of(ref, struct sib_dm_mem, ref);
	u32 i;

	/* A page still mapped or in a packet keeps a reference of its own. */
	for (i = 0; i < mem->npages; i++)
		put_page(mem->pages[i]);
	atomic64_sub((u64)mem->npages << PAGE_SHIFT, &mem->sdev->dm_bytes);
	kvfree(mem);
}

void sib_dm_mem_put(struct sib_dm_mem *mem)
{
	if (mem)
		kref_put(&mem->ref, sib_dm_mem_release);
}

/*
 * @length bytes rounded up to pages, zeroed and charged to the caller's
 * memory cgroup (the process chooses the size: a failure is its ENOMEM,
 * not a warning in the kernel log), and counted against the device's
 * SIB_MAX_DM_SIZE. @length is 1 .. SIB_MAX_DM_SIZE.
 */
static struct sib_dm_mem *sib_dm_mem_alloc(struct sib_dev *sdev, u64 length)
{
	u32 npages = DIV_ROUND_UP(length, PAGE_SIZE);
	u64 bytes = (u64)npages << PAGE_SHIFT;
	struct sib_dm_mem *mem;
	u32 i;

	if (atomic64_add_return(bytes, &sdev->dm_bytes) > SIB_MAX_DM_SIZE) {
		atomic64_sub(bytes, &sdev->dm_bytes);
		return ERR_PTR(-ENOMEM);
	}
	mem = kvzalloc(struct_size(mem, pages, npages), GFP_KERNEL_ACCOUNT);
	if (!mem) {
		atomic64_sub(bytes, &sdev->dm_bytes);
		return ERR_PTR(-ENOMEM);
	}
	kref_init(&mem->ref);
	mem->sdev = sdev;
	for (i = 0; i < npages; i++) {
		mem->pages[i] = alloc_page(GFP_KERNEL_ACCOUNT | __GFP_ZERO |
					   __GFP_NOWARN);
		if (!mem->pages[i])
			break;
		mem->npages++;
	}
	if (mem->npages < npages) {
		/* Release uncharges the pages it frees; these never were. */
		atomic64_sub((u64)(npages - mem->npages) << PAGE_SHIFT,
			     &sdev->dm_bytes);
		sib_dm_mem_put(mem);
		return ERR_PTR(-ENOMEM);
	}
	return mem;
}

/*
 * The process' mapping: each page inserted with a reference of its own.
 * Not copied into a child by fork() (VM_DONTCOPY): device memory stays
 * with the process that mapped it.
 */
int sib_dm_mem_map(struct vm_area_struct *vma, struct sib_dm_mem *mem)
{
	unsigned long addr = vma->vm_start;
	u32 i;
	int ret;

	if (vma->vm_end - vma->vm_start != (unsigned long)mem->npages << PAGE_SHIFT)
		return -EINVAL;
	sib_vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP | VM_DONTCOPY);
	for (i = 0; i < mem->npages; i++, addr += PAGE_SIZE) {
		ret = vm_insert_page(vma, addr, mem->pages[i]);
		if (ret)
			return ret;
	}
	return 0;
}

static void sib_dm_fill_info(struct sib_dm *dm, struct sib_dm_info *info)
{
	memset(info, 0, sizeof(*info));
	info->mmap_offset = rdma_user_mmap_get_offset(dm->entry);
	info->mmap_size = (u64)dm->mem->npages << PAGE_SHIFT;
	info->length = dm->length;
}

/*
 * ib_core has taken the length and the alignment (log2 of bytes) from
 * the process; it sets ib_dm's other fields after we return. attr->flags
 * is always 0 from uverbs today; a flag sib does not know is refused.
 */
struct ib_dm *sib_alloc_dm(struct ib_device *ib_dev,
			   struct ib_ucontext *ib_uc,
			   struct ib_dm_alloc_attr *attr,
			   struct uverbs_attr_bundle *attrs)
{
	struct sib_dev *sdev = to_sdev(ib_dev);
	struct sib_dm_info info;
	struct sib_dm *dm;
	int ret;

	/* An allocation starts a page: any alignment up to a page is met. */
	if (!attr->length || attr->length > SIB_MAX_DM_SIZE ||
	    attr->alignment > PAGE_SHIFT || attr->flags)
		return ERR_PTR(-EINVAL);
	dm = kzalloc(sizeof(*dm), GFP_KERNEL_ACCOUNT);
	if (!dm)
		return ERR_PTR(-ENOMEM);
	dm->length = attr->length;
	dm->mem = sib_dm_mem_alloc(sdev, attr->length);
	if (IS_ERR(dm->mem)) {
		ret = PTR_ERR(dm->mem);
		goto err_free;
	}
	/* The entry takes a reference of its own, dropped when it is freed. */
	dm->entry = sib_mmap_insert_dm(ib_uc, dm->mem);
	if (IS_ERR(dm->entry)) {
		ret = PTR_ERR(dm->entry);
		goto err_mem;
	}
	sib_dm_fill_info(dm, &info);
	ret = uverbs_copy_to(attrs, SIB_ATTR_ALLOC_DM_RESP, &info,
			     sizeof(info));
	if (ret)
		goto err_entry;
	atomic_inc(&sdev->num_dm);
	return &dm->ib_dm;

err_entry:
	rdma_user_mmap_entry_remove(dm->entry);
err_mem:
	sib_dm_mem_put(dm->mem);
err_free:
	kfree(dm);
	return ERR_PTR(ret);
}

/*
 * ib_core calls it only when no MR uses the allocation any more (EBUSY
 * before that, ib_dm.usecnt); it never fails. A process that still has
 * the pages mapped keeps them until it unmaps them, but they are no
 * longer device memory: no new mapping or MR can reach them.
 */
int sib_dealloc_dm(struct ib_dm *ib_dm, struct uverbs_attr_bundle *attrs)
{
	struct sib_dm *dm = to_sdm(ib_dm);
	struct sib_dev *sdev = to_sdev(ib_dm->device);

	rdma_user_mmap_entry_remove(dm->entry);
	sib_dm_mem_put(dm->mem);
	atomic_dec(&sdev->num_dm);
	kfree(dm);
	return 0;
}

/*
 * ib_core has checked that IB_ZERO_BASED is set, the access flags, and
 * that [offset, offset + length) lies inside the allocation (checked
 * again here, against our own 64-bit length). A zero-length MR is
 * allowed, as on mlx5: it covers nothing.
 */
struct ib_mr *sib_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ib_dm,
			    struct ib_dm_mr_attr *attr,
			    struct uverbs_attr_bundle *attrs)
{
	struct sib_dm *dm = to_sdm(ib_dm);

	if (!(attr->access_flags & IB_ZERO_BASED) ||
	    attr->offset > dm->length ||
	    attr->length > dm->length - attr->offset)
		return ERR_PTR(-EINVAL);
	return sib_mr_reg_dm(pd, dm->mem, attr->offset, attr->length,
			     attr->access_flags & ~IB_ZERO_BASED);
}

/* SIB_METHOD_DM_QUERY: the sib_dm_info of an allocation of the context. */
static int UVERBS_HANDLER(SIB_METHOD_DM_QUERY)(struct uverbs_attr_bundle *attrs)
{
	struct ib_dm *ib_dm = uverbs_attr_get_obj(attrs,
						  SIB_ATTR_QUERY_DM_HANDLE);
	struct sib_dm_info info;

	if (IS_ERR(ib_dm))
		return PTR_ERR(ib_dm);
	sib_dm_fill_info(to_sdm(ib_dm), &info);
	return uverbs_copy_to(attrs, SIB_ATTR_QUERY_DM_RESP, &info,
			      sizeof(info));
}

/* Both responses: struct sib_dm_info, all of it. */
#define SIB_DM_INFO_ATTR	UVERBS_ATTR_STRUCT(struct sib_dm_info, length)

DECLARE_UVERBS_NAMED_METHOD(SIB_METHOD_DM_QUERY,
			    UVERBS_ATTR_IDR(SIB_ATTR_QUERY_DM_HANDLE,
					    UVERBS_OBJECT_DM,
					    UVERBS_ACCESS_READ, UA_MANDATORY),
			    UVERBS_ATTR_PTR_OUT(SIB_ATTR_QUERY_DM_RESP,
						SIB_DM_INFO_ATTR, UA_MANDATORY));

ADD_UVERBS_METHODS(sib_dm_methods, UVERBS_OBJECT_DM,
		   &UVERBS_METHOD(SIB_METHOD_DM_QUERY));

ADD_UVERBS_ATTRIBUTES_SIMPLE(sib_dm_alloc_attrs, UVERBS_OBJECT_DM,
			     UVERBS_METHOD_DM_ALLOC,
			     UVERBS_ATTR_PTR_OUT(SIB_ATTR_ALLOC_DM_RESP,
						 SIB_DM_INFO_ATTR,
						 UA_MANDATORY));

const struct uapi_definition sib_uapi_defs[] = {
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &sib_dm_alloc_attrs),
	UAPI_DEF_CHAIN_OBJ_TREE(UVERBS_OBJECT_DM, &sib_dm_methods),
	{},
};
