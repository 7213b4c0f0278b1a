// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: dma-buf MRs: taking a dma-buf and its kernel mapping for an MR,
 * the exporter's revocation, and the release at dereg. The rules are in
 * sib_dmabuf.h; the verb is sib_mr.c's, the copies sib_copy.c's.
 */
#include <linux/dma-buf.h>
#include <linux/dma-direction.h>
#include <linux/dma-resv.h>
#include <linux/module.h>
#include <linux/slab.h>

#include "sib.h"
#include "sib_dmabuf.h"

MODULE_IMPORT_NS(SIB_NS_DMA_BUF);

/*
 * New lookups of @mr fail from here on: sib_mr_get() refuses a revoked
 * MR. An MR being deregistered (SIB_MEM_BUSY) stays so.
 */
static void sib_dmabuf_revoke_mr(struct sib_mr *mr)
{
	unsigned long flags;

	spin_lock_irqsave(&mr->lock, flags);
	if (mr->state == SIB_MEM_VALID) {
		write_seqcount_begin(&mr->seq);
		mr->state = SIB_MEM_REVOKED;
		write_seqcount_end(&mr->seq);
	}
	spin_unlock_irqrestore(&mr->lock, flags);
}

/*
 * The exporter moves the buffer (called with its reservation lock held):
 * no copy may use the mapping once this returns. The copies in progress
 * hold @lock's read side, so taking the write side waits for them.
 */
static void sib_dmabuf_move(struct dma_buf_attachment *attach)
{
	struct sib_dmabuf *d = attach->importer_priv;
	struct sib_mr *mr = d->mr;
	unsigned long flags;
	bool was;

	dma_resv_assert_held(attach->dmabuf->resv);
	write_lock_irqsave(&d->lock, flags);
	was = d->revoked;
	d->revoked = true;
	write_unlock_irqrestore(&d->lock, flags);
	if (was)
		return;
	sib_dmabuf_revoke_mr(mr);
	sib_count(d->sdev, SIB_CNT_DMABUF_REVOCATIONS);
}

/* sib never maps the buffer for DMA, so peer memory is of no use to it. */
static const struct dma_buf_attach_ops sib_dmabuf_attach_ops = {
	.allow_peer2peer = false,
	.SIB_DMA_BUF_MOVE_OP = sib_dmabuf_move,
};

int sib_dmabuf_create(struct sib_mr *mr, int fd, u64 offset, u64 length)
{
	struct sib_dev *sdev = to_sdev(mr->pd->device);
	struct sib_dmabuf *d;
	int ret;

	d = kzalloc(sizeof(*d), GFP_KERNEL);
	if (!d)
		return -ENOMEM;
	d->mr = mr;
	d->sdev = sdev;
	d->offset = offset;
	rwlock_init(&d->lock);
	d->dmabuf = dma_buf_get(fd);
	if (IS_ERR(d->dmabuf)) {
		ret = PTR_ERR(d->dmabuf);
		goto err_free;
	}
	if (offset > d->dmabuf->size || length > d->dmabuf->size - offset) {
		ret = -EINVAL;
		goto err_put;
	}
	/*
	 * An exporter that moves buffers must be able to tell sib. One that
	 * never does needs no attachment: the mapping holds the buffer in
	 * place until it is dropped (and a static attachment would have it
	 * map the buffer for DMA by a device that does none).
	 */
	if (dma_buf_is_dynamic(d->dmabuf)) {
		d->attach = dma_buf_dynamic_attach(d->dmabuf, &sdev->ib_dev.dev,
						   &sib_dmabuf_attach_ops, d);
		if (IS_ERR(d->attach)) {
			ret = PTR_ERR(d->attach);
			d->attach = NULL;
			goto err_put;
		}
	}
	ret = sib_dma_buf_vmap(d->dmabuf, &d->map);
	if (ret)
		goto err_detach;
	/* I/O memory would need memcpy_toio(); the copy engine has none. */
	if (d->map.is_iomem || !d->map.vaddr) {
		ret = -EOPNOTSUPP;
		goto err_vunmap;
	}
	/* Waits for the writes of devices that are still under way. */
	ret = dma_buf_begin_cpu_access(d->dmabuf, DMA_BIDIRECTIONAL);
	if (ret)
		goto err_vunmap;
	d->cpu_access = true;
	mr->dmabuf = d;
	atomic_inc(&sdev->mem.num_dmabuf);
	return 0;

err_vunmap:
	sib_dma_buf_vunmap(d->dmabuf, &d->map);
err_detach:
	if (d->attach)
		dma_buf_detach(d->dmabuf, d->attach);
err_put:
	dma_buf_put(d->dmabuf);
err_free:
	kfree(d);
	return ret;
}

void sib_dmabuf_published(struct sib_mr *mr)
{
	struct sib_dmabuf *d = mr->dmabuf;
	unsigned long flags;
	bool revoked;

	read_lock_irqsave(&d->lock, flags);
	revoked = d->revoked;
	read_unlock_irqrestore(&d->lock, flags);
	/*
	 * A revocation that set @revoked after this read finds the MR
	 * VALID and revokes it itself.
	 */
	if (revoked)
		sib_dmabuf_revoke_mr(mr);
}

void sib_dmabuf_destroy(struct sib_dmabuf *d)
{
	if (!d)
		return;
	/* After the detach, the exporter calls sib_dmabuf_move() no more. */
	if (d->attach)
		dma_buf_detach(d->dmabuf, d->attach);
	if (d->cpu_access)
		dma_buf_end_cpu_access(d->dmabuf, DMA_BIDIRECTIONAL);
	sib_dma_buf_vunmap(d->dmabuf, &d->map);
	dma_buf_put(d->dmabuf);
	atomic_dec(&d->sdev->mem.num_dmabuf);
	kfree(d);
}
