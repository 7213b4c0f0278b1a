// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib_dmabuf_exp: a dma-buf exporter for sib's selftests (sib_dmabuf).
 * Its buffers are pages of system memory that it may move on request:
 * it is a dynamic exporter (pin/unpin), so a dynamic importer such as
 * sib learns of a move through its attachment's move callback. The
 * buffers are read and written through an ioctl, before and after a
 * move, so a test can check that an importer never touches the old
 * pages. They cannot be mapped for DMA (sib does not ask for it).
 */
#include <linux/dma-buf.h>
#include <linux/dma-resv.h>
#include <linux/fs.h>
#include <linux/highmem.h>
#include <linux/iosys-map.h>
#include <linux/miscdevice.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include <sib_probes.h>
#include "sib_dmabuf_exp.h"

#ifdef SIB_HAVE_MODULE_IMPORT_NS_IDENT
MODULE_IMPORT_NS(DMA_BUF);
#else
MODULE_IMPORT_NS("DMA_BUF");
#endif

#ifdef SIB_HAVE_DMA_BUF_INVALIDATE_MAPPINGS
#define exp_move_notify		dma_buf_invalidate_mappings
#else
#define exp_move_notify		dma_buf_move_notify
#endif

/* Largest buffer: 16 MiB of 4 KiB pages. */
#define EXP_MAX_PAGES	4096

/**
 * struct exp_buf - one exported buffer
 * @pages:	its pages now; replaced by a move, under the buffer's
 *		reservation lock
 * @old:	the pages before the last move, or NULL; freed with the
 *		buffer (an importer's kernel mapping may still name them)
 * @npages:	entries in each
 */
struct exp_buf {
	struct page **pages;
	struct page **old;
	u32 npages;
};

static void exp_free_pages(struct page **pages, u32 n)
{
	u32 i;

	if (!pages)
		return;
	for (i = 0; i < n; i++)
		if (pages[i])
			__free_page(pages[i]);
	kvfree(pages);
}

static struct page **exp_alloc_pages(u32 n)
{
	struct page **pages = kvcalloc(n, sizeof(*pages), GFP_KERNEL);
	u32 i;

	if (!pages)
		return NULL;
	for (i = 0; i < n; i++) {
		pages[i] = alloc_page(GFP_KERNEL | __GFP_ZERO);
		if (!pages[i]) {
			exp_free_pages(pages, n);
			return NULL;
		}
	}
	return pages;
}

static int exp_pin(struct dma_buf_attachment *attach)
{
	return 0;
}

static void exp_unpin(struct dma_buf_attachment *attach)
{
}

static struct sg_table *exp_map(struct dma_buf_attachment *attach,
				enum dma_data_direction dir)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static void exp_unmap(struct dma_buf_attachment *attach,
		      struct sg_table *sgt, enum dma_data_direction dir)
{
}

static void exp_release(struct dma_buf *dmabuf)
{
	struct exp_buf *b = dmabuf->priv;

	exp_free_pages(b->pages, b->npages);
	exp_free_pages(b->old, b->npages);
	kfree(b);
}

/* A kernel mapping of the pages the buffer has now. */
static int exp_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct exp_buf *b = dmabuf->priv;
	void *va = vmap(b->pages, b->npages, VM_MAP, PAGE_KERNEL);

	if (!va)
		return -ENOMEM;
	iosys_map_set_vaddr(map, va);
	return 0;
}

static void exp_vunmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	vunmap(map->vaddr);
}

static const struct dma_buf_ops exp_ops = {
	.pin = exp_pin,
	.unpin = exp_unpin,
	.map_dma_buf = exp_map,
	.unmap_dma_buf = exp_unmap,
	.release = exp_release,
	.vmap = exp_vmap,
	.vunmap = exp_vunmap,
};

static int exp_create(struct sib_exp_create __user *uarg)
{
	DEFINE_DMA_BUF_EXPORT_INFO(info);
	struct sib_exp_create arg;
	struct dma_buf *dmabuf;
	struct exp_buf *b;
	int fd;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (!arg.pages || arg.pages > EXP_MAX_PAGES)
		return -EINVAL;
	b = kzalloc(sizeof(*b), GFP_KERNEL);
	if (!b)
		return -ENOMEM;
	b->npages = arg.pages;
	b->pages = exp_alloc_pages(arg.pages);
	if (!b->pages) {
		kfree(b);
		return -ENOMEM;
	}
	info.ops = &exp_ops;
	info.size = (size_t)arg.pages << PAGE_SHIFT;
	info.flags = O_RDWR | O_CLOEXEC;
	info.priv = b;
	dmabuf = dma_buf_export(&info);
	if (IS_ERR(dmabuf)) {
		exp_free_pages(b->pages, b->npages);
		kfree(b);
		return PTR_ERR(dmabuf);
	}
	fd = dma_buf_fd(dmabuf, O_CLOEXEC);
	if (fd < 0) {
		dma_buf_put(dmabuf);
		return fd;
	}
	arg.fd = fd;
	if (copy_to_user(uarg, &arg, sizeof(arg)))
		return -EFAULT;	/* the fd stays open: the test closes it */
	return 0;
}

/* The buffer of @fd, if it is one of ours; dma_buf_put() it after. */
static struct dma_buf *exp_get(int fd)
{
	struct dma_buf *dmabuf = dma_buf_get(fd);

	if (IS_ERR(dmabuf))
		return dmabuf;
	if (dmabuf->ops != &exp_ops) {
		dma_buf_put(dmabuf);
		return ERR_PTR(-EINVAL);
	}
	return dmabuf;
}

/* Copy between the pages and @buf; the reservation lock held. */
static void exp_copy(struct page **pages, u64 off, void *buf, u64 len,
		     bool write)
{
	while (len) {
		u32 po = offset_in_page(off);
		u32 n = min_t(u64, len, PAGE_SIZE - po);
		void *va = kmap_local_page(pages[off >> PAGE_SHIFT]);

		if (write)
			memcpy(va + po, buf, n);
		else
			memcpy(buf, va + po, n);
		kunmap_local(va);
		off += n;
		buf += n;
		len -= n;
	}
}

/*
 * Through a bounce buffer: user memory may fault, and the mm's lock
 * comes before a reservation lock.
 */
static int exp_rw(struct sib_exp_rw __user *uarg)
{
	void __user *u;
	struct dma_buf *dmabuf;
	struct sib_exp_rw arg;
	struct page **pages;
	struct exp_buf *b;
	void *bounce;
	int ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	u = u64_to_user_ptr(arg.uaddr);
	dmabuf = exp_get(arg.fd);
	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	if (arg.off > dmabuf->size || arg.len > dmabuf->size - arg.off) {
		ret = -EINVAL;
		goto out_put;
	}
	bounce = kvmalloc(arg.len ? arg.len : 1, GFP_KERNEL);
	if (!bounce) {
		ret = -ENOMEM;
		goto out_put;
	}
	if (arg.write && copy_from_user(bounce, u, arg.len)) {
		ret = -EFAULT;
		goto out_free;
	}
	b = dmabuf->priv;
	dma_resv_lock(dmabuf->resv, NULL);
	pages = arg.old ? b->old : b->pages;
	if (pages)
		exp_copy(pages, arg.off, bounce, arg.len, arg.write);
	else
		ret = -EINVAL;
	dma_resv_unlock(dmabuf->resv);
	if (!ret && !arg.write && copy_to_user(u, bounce, arg.len))
		ret = -EFAULT;
out_free:
	kvfree(bounce);
out_put:
	dma_buf_put(dmabuf);
	return ret;
}

static int exp_move(int fd)
{
	struct dma_buf *dmabuf = exp_get(fd);
	struct page **pages;
	struct exp_buf *b;
	u32 i;

	if (IS_ERR(dmabuf))
		return PTR_ERR(dmabuf);
	b = dmabuf->priv;
	pages = exp_alloc_pages(b->npages);
	if (!pages) {
		dma_buf_put(dmabuf);
		return -ENOMEM;
	}
	dma_resv_lock(dmabuf->resv, NULL);
	/* The importers stop using the old pages before the copy. */
	exp_move_notify(dmabuf);
	for (i = 0; i < b->npages; i++)
		copy_highpage(pages[i], b->pages[i]);
	exp_free_pages(b->old, b->npages);
	b->old = b->pages;
	b->pages = pages;
	dma_resv_unlock(dmabuf->resv);
	dma_buf_put(dmabuf);
	return 0;
}

static long exp_ioctl(struct file *f, unsigned int cmd, unsigned long arg)
{
	switch (cmd) {
	case SIB_EXP_CREATE:
		return exp_create((void __user *)arg);
	case SIB_EXP_RW:
		return exp_rw((void __user *)arg);
	case SIB_EXP_MOVE:
		return exp_move((int)arg);
	default:
		return -ENOTTY;
	}
}

static const struct file_operations exp_fops = {
	.owner = THIS_MODULE,
	.unlocked_ioctl = exp_ioctl,
};

static struct miscdevice exp_misc = {
	.minor = MISC_DYNAMIC_MINOR,
	.name = "sib_dmabuf_exp",
	.fops = &exp_fops,
};

module_misc_device(exp_misc);

MODULE_DESCRIPTION("sib selftests: a dma-buf exporter that moves its buffers");
MODULE_LICENSE("Dual BSD/GPL");
