// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the copy engine, which moves bytes between registered memory and
 * kernel buffers or packets. An MR's bytes are reached by its kind: pinned
 * user pages or device memory pages mapped one at a time, the kernel
 * virtual addresses of a DMA MR, or a fast-registration MR's page list;
 * an skb's bytes are in its linear part or its page fragments. On top of that: the one-copy path
 * (an MR's pages appended to an skb as page fragments), the 8-byte
 * atomics, and the SGE list operations, which look each SGE's lkey up for
 * the part of it they use.
 *
 * Locking: none of its own, and nothing here sleeps. The caller holds a
 * reference on the MR (sib_mr_get()), and dereg and rereg wait for it
 * (Lifetimes, in sib_mr.h).
 */
#include <linux/highmem.h>
#include <linux/overflow.h>

#include "sib.h"
#include "sib_copy.h"
#include "sib_dmabuf.h"
#include "sib_mkey.h"
#include "sib_odp.h"

/*
 * The kernel side of a copy: a flat buffer, or the bytes of an skb from an
 * offset on (its linear part and its page fragments alike). Advanced by
 * each chunk copied. Reading an skb's page fragments in order, @frag and
 * @frag_off keep the place (the fragment that holds @off, and where in
 * it), so that a copy of many pages does not walk the fragments from the
 * first one for each page; @frag is -1 until the place is known.
 */
struct sib_kbuf {
	void *p;
	struct sk_buff *skb;
	u32 off;
	int frag;
	u32 frag_off;
};

/* Find the fragment that holds @b->off; false if it is not in one. */
static bool sib_kbuf_seek(struct sib_kbuf *b)
{
	const struct skb_shared_info *sh = skb_shinfo(b->skb);
	u32 at = skb_headlen(b->skb);
	int i;

	if (skb_has_frag_list(b->skb) || b->off < at)
		return false;
	for (i = 0; i < sh->nr_frags; i++) {
		u32 size = skb_frag_size(&sh->frags[i]);

		if (b->off < at + size) {
			b->frag = i;
			b->frag_off = b->off - at;
			return true;
		}
		at += size;
	}
	return false;
}

/* Copy @len bytes of @b's fragments from its place on into @va. */
static bool sib_kbuf_read_frags(struct sib_kbuf *b, void *va, u32 len)
{
	const struct skb_shared_info *sh = skb_shinfo(b->skb);

	/* Past the linear part and without a frag_list, all of it is here. */
	if (b->off + len > b->skb->len ||
	    (b->frag < 0 && !sib_kbuf_seek(b)))
		return false;
	while (len) {
		const skb_frag_t *f;
		u32 at, n;
		void *src;

		f = &sh->frags[b->frag];
		at = skb_frag_off(f) + b->frag_off;
		n = min3(len, skb_frag_size(f) - b->frag_off,
			 (u32)(PAGE_SIZE - offset_in_page(at)));
		src = kmap_local_page(skb_frag_page(f) + (at >> PAGE_SHIFT));
		memcpy(va, src + offset_in_page(at), n);
		kunmap_local(src);
		va += n;
		len -= n;
		b->off += n;
		b->frag_off += n;
		if (b->frag_off == skb_frag_size(f)) {
			b->frag++;
			b->frag_off = 0;
		}
	}
	return true;
}

static void sib_copy_kva(void *va, struct sib_kbuf *b, u64 len,
			 enum sib_dir dir)
{
	if (b->skb) {
		if (dir == SIB_TO_MEM && sib_kbuf_read_frags(b, va, len))
			return;
		b->frag = -1;	/* the place is lost: seek again */
		if (dir == SIB_TO_MEM)
			skb_copy_bits(b->skb, b->off, va, len);
		else
			skb_store_bits(b->skb, b->off, va, len);
		b->off += len;
		return;
	}
	if (dir == SIB_TO_MEM)
		memcpy(va, b->p, len);
	else
		memcpy(b->p, va, len);
	b->p += len;
}

static void sib_copy_user(struct sib_mr *mr, u64 iova, struct sib_kbuf *b,
			  u64 len, enum sib_dir dir)
{
	u64 off = iova - mr->iova + mr->pg_off;

	while (len) {
		u64 idx = off >> PAGE_SHIFT;
		u32 po = offset_in_page(off);
		u32 n = min_t(u64, len, PAGE_SIZE - po);
		void *va;

		if (idx >= mr->npages)
			return;
		va = kmap_local_page(mr->pages[idx]);
		sib_copy_kva(va + po, b, n, dir);
		kunmap_local(va);
		off += n;
		len -= n;
	}
}

/* Pass over @len bytes of @b, as if they had been copied. */
static void sib_kbuf_skip(struct sib_kbuf *b, u64 len)
{
	if (b->skb) {
		b->off += len;
		b->frag = -1;
	} else {
		b->p += len;
	}
}

/* @len zeros into @b. */
static void sib_copy_zeros(struct sib_kbuf *b, u64 len)
{
	while (len) {
		u32 n = min_t(u64, len, PAGE_SIZE);

		sib_copy_kva(page_address(ZERO_PAGE(0)), b, n, SIB_FROM_MEM);
		len -= n;
	}
}

/*
 * An ODP MR (or one chunk of an implicit MR): each page is used under
 * the read side of its lock, so that an invalidation waits for the copy.
 * A page invalidated since
 * sib_mr_get() checked it is not touched: what was to be written there
 * is dropped (as if written just before the invalidation), and what was
 * to be read from it reads as zeros (what an anonymous page reads after
 * MADV_DONTNEED); no stale or foreign byte is ever read.
 */
static void sib_copy_odp_pages(struct sib_odp *odp, u64 off,
			       struct sib_kbuf *b, u64 len, enum sib_dir dir)
{
	read_lock(&odp->lock);
	while (len) {
		u32 po = offset_in_page(off);
		u32 n = min_t(u64, len, PAGE_SIZE - po);
		struct page *page = sib_odp_page(odp, off >> PAGE_SHIFT);
		void *va;

		if (page) {
			va = kmap_local_page(page);
			sib_copy_kva(va + po, b, n, dir);
			kunmap_local(va);
		} else if (dir == SIB_FROM_MEM) {
			sib_copy_zeros(b, n);
		} else {
			sib_kbuf_skip(b, n);
		}
		off += n;
		len -= n;
	}
	read_unlock(&odp->lock);
}

/*
 * An implicit MR's range goes chunk by chunk, each under its own lock; a
 * chunk never made (not possible once sib_mr_get() checked the range: no
 * chunk goes before dereg) holds no page.
 */
static void sib_copy_odp(struct sib_mr *mr, u64 iova, struct sib_kbuf *b,
			 u64 len, enum sib_dir dir)
{
	u64 off = iova - mr->iova + mr->pg_off;

	while (len) {
		u64 in = off, room;
		struct sib_odp *odp = sib_odp_at(mr->odp, &in, &room);
		u64 n = min(len, room);

		if (odp)
			sib_copy_odp_pages(odp, in, b, n, dir);
		else if (dir == SIB_FROM_MEM)
			sib_copy_zeros(b, n);
		else
			sib_kbuf_skip(b, n);
		off += n;
		len -= n;
	}
}

/*
 * IB_MR_TYPE_SG_GAPS: the segment that holds @iova (a binary search of
 * the ends), its kernel address and the bytes left in it; 0 if none.
 */
static u64 sib_gaps_kva(struct sib_mr *mr, u64 iova, u64 *room)
{
	u32 lo = 0, hi = min(READ_ONCE(mr->npages), mr->fr_max), mid;
	u64 off = iova - READ_ONCE(mr->iova), start, end;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (READ_ONCE(mr->fr_live[mid].end) > off)
			hi = mid;
		else
			lo = mid + 1;
	}
	if (lo >= min(READ_ONCE(mr->npages), mr->fr_max))
		return 0;
	start = lo ? READ_ONCE(mr->fr_live[lo - 1].end) : 0;
	end = READ_ONCE(mr->fr_live[lo].end);
	if (off < start || off >= end)
		return 0;
	*room = end - off;
	return READ_ONCE(mr->fr_live[lo].addr) + (off - start);
}

/*
 * Kernel address of @iova in a fast-registration MR, and the bytes left in
 * its page (or segment); 0 if the list has no such entry (never for a
 * correctly used MR: the range was checked against the registration).
 */
static u64 sib_fast_kva(struct sib_mr *mr, u64 iova, u64 *room)
{
	u32 shift = READ_ONCE(mr->fr_shift);
	u64 mask = (1ULL << shift) - 1;
	u64 idx = (iova - (READ_ONCE(mr->iova) & ~mask)) >> shift;
	u64 base;

	if (mr->fr_gaps)
		return sib_gaps_kva(mr, iova, room);
	if (idx >= mr->fr_max)
		return 0;
	base = READ_ONCE(mr->fr_live[idx].addr);
	if (!base)
		return 0;
	*room = mask + 1 - (iova & mask);
	return base + (iova & mask);
}

static void sib_copy_fast(struct sib_mr *mr, u64 iova, struct sib_kbuf *b,
			  u64 len, enum sib_dir dir)
{
	while (len) {
		u64 room, kva = sib_fast_kva(mr, iova, &room);
		u64 n = min(len, room);

		if (!kva)
			return;
		sib_copy_kva((void *)(uintptr_t)kva, b, n, dir);
		iova += n;
		len -= n;
	}
}

/*
 * A dma-buf MR: through the buffer's kernel mapping, under its lock's
 * read side, so that a revocation waits for the copy. -EINVAL if the
 * exporter revoked the MR since sib_mr_get(): nothing was copied.
 */
static int sib_copy_dmabuf(struct sib_mr *mr, u64 iova, struct sib_kbuf *b,
			   u64 len, enum sib_dir dir)
{
	struct sib_dmabuf *d = mr->dmabuf;
	void *va;

	read_lock(&d->lock);
	va = sib_dmabuf_kva(d, iova - mr->iova);
	if (va)
		sib_copy_kva(va, b, len, dir);
	read_unlock(&d->lock);
	return va ? 0 : -EINVAL;
}

/* 0, or -EINVAL if a dma-buf MR was revoked (nothing was copied). */
static int sib_mr_copy_kbuf(struct sib_mr *mr, u64 iova, struct sib_kbuf *b,
			    u64 len, enum sib_dir dir)
{
	if (!len || !mr)
		return 0;
	switch (mr->mr_kind) {
	case SIB_MR_USER:
	case SIB_MR_DM:
		sib_copy_user(mr, iova, b, len, dir);
		break;
	case SIB_MR_DMA:
		sib_copy_kva((void *)(uintptr_t)iova, b, len, dir);
		break;
	case SIB_MR_FAST:
		sib_copy_fast(mr, iova, b, len, dir);
		break;
	case SIB_MR_ODP:
		sib_copy_odp(mr, iova, b, len, dir);
		break;
	case SIB_MR_DMABUF:
		return sib_copy_dmabuf(mr, iova, b, len, dir);
	}
	return 0;
}

int sib_mr_copy(struct sib_mr *mr, u64 iova, void *buf, u64 len,
		enum sib_dir dir)
{
	struct sib_kbuf b = { .p = buf };

	return sib_mr_copy_kbuf(mr, iova, &b, len, dir);
}

/* A linear skb is copied as a flat buffer: no per-chunk lookup. */
static void sib_kbuf_skb(struct sib_kbuf *b, struct sk_buff *skb, u32 off)
{
	if (skb_is_nonlinear(skb)) {
		b->skb = skb;
		b->off = off;
		b->frag = -1;
	} else {
		b->p = skb->data + off;
	}
}

int sib_mr_copy_skb(struct sib_mr *mr, u64 iova, struct sk_buff *skb,
		    u32 off, u32 len, enum sib_dir dir)
{
	struct sib_kbuf b = {};

	sib_kbuf_skb(&b, skb, off);
	return sib_mr_copy_kbuf(mr, iova, &b, len, dir);
}

/*
 * Append @len bytes of @mr at @iova to @skb as page fragments, each
 * holding a page reference: the one-copy path. Only for MRs of pinned
 * user pages or of device memory (sib_mr_has_pages()). User pages are
 * the process' (an MR needs no LOCAL_WRITE to
 * be sent from, so they may be page cache that it can only read): the
 * skb says its fragments are shared, so that anything that would write
 * to a packet in place copies it first, as for sendpage() and
 * MSG_ZEROCOPY. Returns 0, or -E2BIG when the MR is of another kind or
 * the skb has no fragment slot left (the caller copies instead).
 */
int sib_mr_add_frags(struct sib_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 len)
{
	u64 off;

	if (!len)
		return 0;
	if (!mr || !sib_mr_has_pages(mr))
		return -E2BIG;
	skb_shinfo(skb)->flags |= SKBFL_SHARED_FRAG;
	off = iova - mr->iova + mr->pg_off;
	while (len) {
		u64 idx = off >> PAGE_SHIFT;
		u32 po = offset_in_page(off);
		u32 n = min_t(u32, len, PAGE_SIZE - po);
		int nr = skb_shinfo(skb)->nr_frags;
		struct page *page;

		if (idx >= mr->npages)
			return -E2BIG;
		page = mr->pages[idx];
		if (nr && skb_can_coalesce(skb, nr, page, po)) {
			skb_frag_size_add(&skb_shinfo(skb)->frags[nr - 1], n);
		} else {
			if (nr >= MAX_SKB_FRAGS)
				return -E2BIG;
			get_page(page);
			skb_fill_page_desc(skb, nr, page, po, n);
		}
		skb->len += n;
		skb->data_len += n;
		skb->truesize += n;
		off += n;
		len -= n;
	}
	return 0;
}

/*
 * Map the 8 bytes at @iova for an atomic; NULL if unmapped (see
 * sib_fast_kva()) or if the kernel address is not 8-byte aligned. An
 * aligned 8-byte access never crosses a page, so it stays in @mr's page.
 */
static u64 *sib_mr_map8(struct sib_mr *mr, u64 iova)
{
	u64 off, room, kva;
	u64 *p;

	switch (mr->mr_kind) {
	case SIB_MR_USER:
	case SIB_MR_DM:
		off = iova - mr->iova + mr->pg_off;
		if ((off >> PAGE_SHIFT) >= mr->npages || (off & 7))
			return NULL;
		p = kmap_local_page(mr->pages[off >> PAGE_SHIFT]) +
		    offset_in_page(off);
		if ((uintptr_t)p & 7) {
			kunmap_local(p);
			return NULL;
		}
		return p;
	case SIB_MR_FAST:
		kva = sib_fast_kva(mr, iova, &room);
		return kva && !(kva & 7) && room >= 8 ?
		       (u64 *)(uintptr_t)kva : NULL;
	default:
		return iova & 7 ? NULL : (u64 *)(uintptr_t)iova;
	}
}

/*
 * An ODP MR's 8 bytes, mapped with its lock's read side held until
 * sib_mr_unmap8(): ERR_PTR(-EINVAL) if unaligned, ERR_PTR(-EAGAIN) if
 * the page was invalidated since sib_mr_get() (answer with an RNR NAK).
 */
static u64 *sib_odp_map8(struct sib_mr *mr, u64 iova)
{
	u64 off = iova - mr->iova + mr->pg_off, room;
	struct sib_odp *odp;
	struct page *page;

	if (off & 7)
		return ERR_PTR(-EINVAL);
	odp = sib_odp_at(mr->odp, &off, &room);
	if (!odp)
		return ERR_PTR(-EAGAIN);
	read_lock(&odp->lock);
	page = sib_odp_page(odp, off >> PAGE_SHIFT);
	if (!page) {
		read_unlock(&odp->lock);
		return ERR_PTR(-EAGAIN);
	}
	return kmap_local_page(page) + offset_in_page(off);
}

/* Undo sib_odp_map8() of @iova. */
static void sib_odp_unmap8(struct sib_mr *mr, u64 iova, u64 *p)
{
	u64 off = iova - mr->iova + mr->pg_off, room;
	struct sib_odp *odp = sib_odp_at(mr->odp, &off, &room);

	kunmap_local(p);
	read_unlock(&odp->lock);
}

/*
 * A dma-buf MR's 8 bytes, mapped with its lock's read side held until
 * sib_mr_unmap8(); NULL if unaligned or revoked since sib_mr_get().
 */
static u64 *sib_dmabuf_map8(struct sib_mr *mr, u64 iova)
{
	struct sib_dmabuf *d = mr->dmabuf;
	u64 *p;

	read_lock(&d->lock);
	p = sib_dmabuf_kva(d, iova - mr->iova);
	if (!p || ((uintptr_t)p & 7)) {
		read_unlock(&d->lock);
		return NULL;
	}
	return p;
}

/*
 * sib_mr_map8(), sib_odp_map8() or sib_dmabuf_map8(): the pointer, or
 * NULL and *@err.
 */
static u64 *sib_mr_map8_err(struct sib_mr *mr, u64 iova, int *err)
{
	u64 *p;

	*err = -EINVAL;
	if (mr->mr_kind == SIB_MR_DMABUF)
		return sib_dmabuf_map8(mr, iova);
	if (mr->mr_kind != SIB_MR_ODP)
		return sib_mr_map8(mr, iova);
	p = sib_odp_map8(mr, iova);
	if (!IS_ERR(p))
		return p;
	*err = PTR_ERR(p);
	return NULL;
}

static void sib_mr_unmap8(struct sib_mr *mr, u64 iova, u64 *p)
{
	if (mr->mr_kind == SIB_MR_ODP)
		sib_odp_unmap8(mr, iova, p);
	else if (sib_mr_has_pages(mr))
		kunmap_local(p);
	else if (mr->mr_kind == SIB_MR_DMABUF)
		read_unlock(&mr->dmabuf->lock);
}

int sib_mr_atomic_cmp_swp(struct sib_mr *mr, u64 iova, u64 compare, u64 swap,
			  u64 *orig)
{
	int err;
	u64 *p = sib_mr_map8_err(mr, iova, &err);

	if (!p)
		return err;
	*orig = cmpxchg64(p, compare, swap);
	sib_mr_unmap8(mr, iova, p);
	return 0;
}

int sib_mr_atomic_fetch_add(struct sib_mr *mr, u64 iova, u64 add, u64 *orig)
{
	int err;
	u64 *p = sib_mr_map8_err(mr, iova, &err);

	if (!p)
		return err;
	*orig = atomic64_fetch_add(add, (atomic64_t *)p);
	sib_mr_unmap8(mr, iova, p);
	return 0;
}

int sib_mr_atomic_write(struct sib_mr *mr, u64 iova, u64 val)
{
	int err;
	u64 *p = sib_mr_map8_err(mr, iova, &err);

	if (!p)
		return err;
	/* Ordered after the stores of the requests before it. */
	smp_store_release(p, val);
	sib_mr_unmap8(mr, iova, p);
	return 0;
}

/*
 * One SGE's part of a copy: @len bytes at most, from @pos_off into the SGE.
 * With @frags, the bytes are appended to @b->skb as page fragments
 * instead of being copied. Returns the bytes done, or -errno.
 */
static s64 sib_sge_copy(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
			const struct sib_sge *s, u32 pos_off,
			struct sib_kbuf *b, u32 len, enum sib_dir dir,
			bool frags)
{
	enum sib_acc acc = dir == SIB_TO_MEM ? SIB_ACC_LOCAL_WRITE :
					       SIB_ACC_LOCAL_READ;
	u32 n = min(len, s->length - pos_off);
	struct sib_mr *mr;
	u64 end, at;
	int ret = 0;

	if (check_add_overflow((u64)s->addr, (u64)s->length, &end))
		return -ERANGE;
	mr = sib_mr_get(sdev, pd, qpn, s->lkey, s->addr + pos_off, n, acc,
			&at);
	if (IS_ERR(mr))
		return PTR_ERR(mr);
	if (frags)
		ret = sib_mr_add_frags(mr, at, b->skb, n);
	else
		ret = sib_mr_copy_kbuf(mr, at, b, n, dir);
	sib_mr_put(mr);
	return ret ? ret : (s64)n;
}

static int sib_sgl_copy_kbuf(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
			     const struct sib_sge *sge, u32 num_sge,
			     struct sib_sgl_pos *pos, struct sib_kbuf *b,
			     u32 len, enum sib_dir dir, bool frags)
{
	s64 n;

	while (len) {
		if (pos->sge >= num_sge)
			return -EMSGSIZE;
		if (pos->off >= sge[pos->sge].length) {
			pos->sge++;
			pos->off = 0;
			continue;
		}
		n = sib_sge_copy(sdev, pd, qpn, &sge[pos->sge], pos->off, b,
				 len, dir, frags);
		if (n < 0)
			return n;
		len -= n;
		pos->off += n;
	}
	return 0;
}

int sib_sgl_copy(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct sib_sge *sge, u32 num_sge,
		 struct sib_sgl_pos *pos, void *buf, u32 len, enum sib_dir dir)
{
	struct sib_kbuf b = { .p = buf };

	return sib_sgl_copy_kbuf(sdev, pd, qpn, sge, num_sge, pos, &b, len,
				 dir, false);
}

int sib_sgl_copy_skb(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		     const struct sib_sge *sge, u32 num_sge,
		     struct sib_sgl_pos *pos, struct sk_buff *skb, u32 off,
		     u32 len, enum sib_dir dir)
{
	struct sib_kbuf b = {};

	sib_kbuf_skb(&b, skb, off);
	return sib_sgl_copy_kbuf(sdev, pd, qpn, sge, num_sge, pos, &b, len,
				 dir, false);
}

int sib_sgl_frags(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		  const struct sib_sge *sge, u32 num_sge,
		  struct sib_sgl_pos *pos, struct sk_buff *skb, u32 len)
{
	struct sib_kbuf b = { .skb = skb };

	return sib_sgl_copy_kbuf(sdev, pd, qpn, sge, num_sge, pos, &b, len,
				 SIB_FROM_MEM, true);
}

int sib_sgl_fault_in(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		     const struct sib_sge *sge, u32 num_sge)
{
	struct sib_mr *mr;
	int ret = 0;
	u64 at;
	u32 i;

	for (i = 0; i < num_sge; i++) {
		mr = sib_mr_get(sdev, pd, qpn, sge[i].lkey, sge[i].addr,
				sge[i].length, SIB_ACC_LOCAL_WRITE, &at);
		if (PTR_ERR(mr) == -EFAULT)
			return -EFAULT;
		if (PTR_ERR(mr) == -EAGAIN)
			ret = -EAGAIN;
		else if (!IS_ERR(mr))
			sib_mr_put(mr);
	}
	return ret;
}

s64 sib_sgl_len(const struct sib_sge *sge, u32 num_sge)
{
	u64 sum = 0;
	u32 i;

	for (i = 0; i < num_sge; i++)
		sum += sge[i].length;
	return sum > U32_MAX ? -EOVERFLOW : (s64)sum;
}
