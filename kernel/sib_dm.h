/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: device memory (ibv_alloc_dm), sib_dm.c. Documentation/memory.md
 * explains it for users; uapi/rdma_user_sib.h ("Device memory") states
 * the ABI.
 *
 * An allocation is a set of zeroed kernel pages (struct sib_dm_mem) that
 * three kinds of owner share, each holding a reference: the allocation
 * itself (struct sib_dm) until the mmap entry that exposes it is
 * removed, that mmap entry, and every MR registered on it (ibv_reg_dm_mr).
 * So the pages outlive whichever owner goes first, whatever order ib_core
 * destroys the objects of a dying process in. Pages mapped into a process
 * or attached to a packet hold page references of their own.
 */
#ifndef SIB_DM_H
#define SIB_DM_H

#include <linux/kref.h>
#include <linux/sizes.h>
#include <linux/types.h>
#include <rdma/ib_verbs.h>

struct sib_dev;
struct vm_area_struct;

/*
 * Device memory of one device, all allocations together: advertised as
 * max_dm_size. Also the largest single allocation.
 */
#define SIB_MAX_DM_SIZE		SZ_16M

/**
 * struct sib_dm_mem - the pages of one allocation
 * @ref:	one per owner (see above); the last put frees the pages
 * @sdev:	the device whose SIB_MAX_DM_SIZE the pages count against
 * @npages:	entries in @pages; constant
 * @pages:	order-0 pages, zeroed at allocation, charged to the
 *		allocating process' memory cgroup; constant
 *
 * No lock: nothing changes after sib_dm_mem_alloc() but @ref.
 */
struct sib_dm_mem {
	struct kref ref;
	struct sib_dev *sdev;
	u32 npages;
	struct page *pages[];
};

/**
 * struct sib_dm - one allocation (ib_dm)
 * @ib_dm:	the ib_core object, allocated by sib (ib_core's ib_dm.length
 *		is 32 bits)
 * @mem:	the pages; this object holds a reference until the end
 * @entry:	the mmap entry that exposes @mem to the process
 * @length:	bytes asked for; @mem holds them rounded up to pages
 *
 * No lock: constant from alloc_dm to dealloc_dm, which ib_core
 * serialises with every other use of the object (uobject locking).
 */
struct sib_dm {
	struct ib_dm ib_dm;
	struct sib_dm_mem *mem;
	struct rdma_user_mmap_entry *entry;
	u64 length;
};

static inline struct sib_dm *to_sdm(struct ib_dm *ib_dm)
{
	return container_of(ib_dm, struct sib_dm, ib_dm);
}

/**
 * sib_dm_mem_get() - take a reference on device memory pages
 * @mem:	pages with a reference held by the caller already
 */
static inline void sib_dm_mem_get(struct sib_dm_mem *mem)
{
	kref_get(&mem->ref);
}

/**
 * sib_dm_mem_put() - drop a reference; the last one frees the pages
 * @mem:	the pages, or NULL
 *
 * Context: process (may free a large page array).
 */
void sib_dm_mem_put(struct sib_dm_mem *mem);

/**
 * sib_dm_mem_map() - map all the pages of @mem into @vma
 * @vma:	a mapping of exactly @mem->npages pages (ib_core's
 *		rdma_user_mmap_entry_get() has checked the size)
 * @mem:	the pages
 *
 * Return: 0 or -errno from vm_insert_page().
 */
int sib_dm_mem_map(struct vm_area_struct *vma, struct sib_dm_mem *mem);

/* sib_dm.c: the driver's uverbs definitions (ib_device.driver_def) */
extern const struct uapi_definition sib_uapi_defs[];

/* ib_device_ops */
struct ib_dm *sib_alloc_dm(struct ib_device *ib_dev,
			   struct ib_ucontext *ib_uc,
			   struct ib_dm_alloc_attr *attr,
			   struct uverbs_attr_bundle *attrs);
int sib_dealloc_dm(struct ib_dm *ib_dm, struct uverbs_attr_bundle *attrs);
struct ib_mr *sib_reg_dm_mr(struct ib_pd *pd, struct ib_dm *ib_dm,
			    struct ib_dm_mr_attr *attr,
			    struct uverbs_attr_bundle *attrs);

#define SIB_DM_DEV_OPS							\
	.alloc_dm = sib_alloc_dm,					\
	.dealloc_dm = sib_dealloc_dm,					\
	.reg_dm_mr = sib_reg_dm_mr,

#endif /* SIB_DM_H */
