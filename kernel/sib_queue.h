/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: rings shared with user space (see uapi/rdma_user_sib.h for the
 * layout and the producer/consumer rules).
 */
#ifndef SIB_QUEUE_H
#define SIB_QUEUE_H

#include <linux/types.h>
#include <rdma/ib_verbs.h>

#include "../uapi/rdma_user_sib.h"

/**
 * struct sib_queue - one ring
 * @hdr:	the shared header; the process may write anything into it
 * @slots:	the first slot
 * @nslots:	number of slots, a power of two
 * @slot_size:	bytes per slot, a power of two
 * @size:	bytes allocated (header and slots, page aligned)
 * @kidx:	the kernel's own index (prod for a CQ, cons for SQ/RQ/SRQ);
 *		the kernel never reads it back from @hdr
 * @entry:	mmap entry for a user ring (owns the memory then), or NULL
 *
 * The queue does no locking of its own: the owning object's lock (CQ, SRQ)
 * or engine (QP) serialises the kernel side.
 */
struct sib_queue {
	struct sib_ring_hdr *hdr;
	void *slots;
	u32 nslots;
	u32 slot_size;
	size_t size;
	u32 kidx;
	struct rdma_user_mmap_entry *entry;
};

int sib_queue_init(struct sib_queue *q, u32 nslots, u32 slot_size);
int sib_queue_expose(struct sib_queue *q, struct ib_ucontext *uctx,
		     struct sib_ring_info *info);
void sib_queue_destroy(struct sib_queue *q);

struct sib_dm_mem;

/**
 * sib_mmap_insert_dm() - expose device memory through the command file
 * @uctx:	the context whose command file maps it
 * @dm:		the pages; the entry takes a reference of its own, dropped
 *		when ib_core frees the entry (sib_mmap_free())
 *
 * Return: the entry (its offset: rdma_user_mmap_get_offset(); remove it
 * with rdma_user_mmap_entry_remove()), or an ERR_PTR.
 */
struct rdma_user_mmap_entry *sib_mmap_insert_dm(struct ib_ucontext *uctx,
						struct sib_dm_mem *dm);

int sib_mmap(struct ib_ucontext *uctx, struct vm_area_struct *vma);
void sib_mmap_free(struct rdma_user_mmap_entry *entry);

static inline void *sib_queue_slot(struct sib_queue *q, u32 idx)
{
	return q->slots + (size_t)(idx & (q->nslots - 1)) * q->slot_size;
}

/*
 * Consumer side (SQ, RQ, SRQ): how many elements the producer published
 * beyond our index, or -1 if its index is impossible (corrupted ring).
 */
static inline int sib_queue_avail(struct sib_queue *q)
{
	/* Pairs with the other side's release of its index. */
	u32 prod = smp_load_acquire(&q->hdr->prod);
	u32 n = prod - q->kidx;

	return n > q->nslots ? -1 : (int)n;
}

static inline void sib_queue_consume(struct sib_queue *q, u32 n)
{
	q->kidx += n;
	/* Publish the slots before the index (ring rule). */
	smp_store_release(&q->hdr->cons, q->kidx);
}

/*
 * Producer side (CQ): free slots, or -1 if the consumer's index is
 * impossible (corrupted ring).
 */
static inline int sib_queue_room(struct sib_queue *q)
{
	/* Pairs with the other side's release of its index. */
	u32 cons = smp_load_acquire(&q->hdr->cons);
	u32 used = q->kidx - cons;

	return used > q->nslots ? -1 : (int)(q->nslots - used);
}

static inline void sib_queue_produce(struct sib_queue *q)
{
	q->kidx++;
	/* Publish the slots before the index (ring rule). */
	smp_store_release(&q->hdr->prod, q->kidx);
}

#endif /* SIB_QUEUE_H */
