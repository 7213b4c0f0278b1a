/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: dma-buf MRs (sib_dmabuf.c). ibv_reg_dmabuf_mr() registers part
 * of a dma-buf that another driver exported (a GPU's memory, a DRM dumb
 * buffer, a udmabuf). sib copies with the CPU, so it needs no DMA
 * address of the buffer: it takes a kernel mapping of the whole buffer
 * (dma_buf_vmap()) at registration and copies through it. Memory that
 * only a device can reach (I/O memory) is refused.
 *
 * An exporter that may move its buffers (a dynamic exporter, one with
 * pin/unpin) gets a dynamic attachment, so that it tells sib when a
 * buffer moves. From then on the MR is revoked: sib_mr_get() refuses it
 * (SIB_MEM_REVOKED) and no copy touches the mapping again; the MR stays
 * revoked until it is deregistered. The copy engine uses the mapping
 * only under @lock's read side, and the revocation takes the write side,
 * so when the exporter's callback returns no copy is in progress and
 * none will start.
 *
 * Locks: the exporter calls the revocation with the buffer's reservation
 * lock held; inside it sib takes @lock, then sib_mr.lock. The data path
 * never takes the reservation lock.
 */
#ifndef SIB_DMABUF_H
#define SIB_DMABUF_H

#include <linux/iosys-map.h>
#include <linux/spinlock.h>
#include <linux/types.h>

struct dma_buf;
struct dma_buf_attachment;
struct ib_device;
struct sib_dev;
struct sib_mr;

/**
 * struct sib_dmabuf - the dma-buf behind one dma-buf MR
 * @dmabuf:	the buffer, referenced from registration to dereg
 * @attach:	the dynamic attachment through which a dynamic exporter
 *		tells that the buffer moves; NULL for an exporter that
 *		never moves buffers it exported
 * @map:	the kernel mapping of the whole buffer (system memory)
 * @mr:		the MR; constant
 * @sdev:	its device, for the counters
 * @offset:	offset in the buffer of the MR's first byte; constant
 * @lock:	readers (the copy engine, any context but hard interrupts)
 *		hold read_lock() while they touch @map; the revocation
 *		takes write_lock_irqsave()
 * @revoked:	the exporter moved the buffer: @map is no longer used
 * @cpu_access:	dma_buf_begin_cpu_access() succeeded; ended at dereg
 */
struct sib_dmabuf {
	struct dma_buf *dmabuf;
	struct dma_buf_attachment *attach;
	struct iosys_map map;
	struct sib_mr *mr;
	struct sib_dev *sdev;
	u64 offset;
	rwlock_t lock;		/* see above */
	bool revoked;
	bool cpu_access;
};

/**
 * sib_dmabuf_create() - take a dma-buf for an MR
 * @mr:		the MR, not yet published; its mr->dmabuf is set
 * @fd:		the dma-buf's file descriptor
 * @offset:	first byte of the MR in the buffer
 * @length:	bytes of the MR (> 0, offset + length checked here)
 *
 * Context: process; sleeps.
 * Return: 0, or -EBADF (not an open file), -EINVAL (not a dma-buf, a
 * range beyond its end), -EOPNOTSUPP (the exporter gives no kernel
 * mapping in system memory), -ENOMEM, or the exporter's error.
 */
int sib_dmabuf_create(struct sib_mr *mr, int fd, u64 offset, u64 length);

/**
 * sib_dmabuf_published() - the MR was published in state VALID
 * @mr:		the MR
 *
 * Makes it revoked if the exporter moved the buffer in between.
 *
 * Context: process.
 */
void sib_dmabuf_published(struct sib_mr *mr);

/**
 * sib_dmabuf_destroy() - release an MR's dma-buf; NULL is a no-op
 * @d:		mr->dmabuf of a deregistered MR that no one uses any more
 *
 * Context: process; sleeps.
 */
void sib_dmabuf_destroy(struct sib_dmabuf *d);

/**
 * sib_dmabuf_kva() - the kernel address of an MR byte, for a copy
 * @d:		the MR's dma-buf; read_lock(&d->lock) held
 * @off:	offset of the byte from the MR's first byte (checked
 *		against the MR's length by sib_mr_get())
 *
 * Return: the address, or NULL when the MR was revoked.
 */
static inline void *sib_dmabuf_kva(struct sib_dmabuf *d, u64 off)
{
	lockdep_assert_held_read(&d->lock);
	if (d->revoked)
		return NULL;
	return d->map.vaddr + d->offset + off;
}

#endif /* SIB_DMABUF_H */
