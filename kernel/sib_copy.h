/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the copy engine (sib_copy.c): copies between an MR or an SGE list
 * and a kernel buffer or a packet, page fragments of an MR, and the
 * 8-byte atomics.
 */
#ifndef SIB_COPY_H
#define SIB_COPY_H

#include <linux/types.h>

struct ib_pd;
struct sib_dev;
struct sib_mr;
struct sib_sge;
struct sk_buff;

/* Copy direction. SIB_TO_MEM: kernel buffer -> memory region. */
enum sib_dir {
	SIB_TO_MEM,
	SIB_FROM_MEM,
};

/**
 * sib_mr_copy() - copy between a referenced MR and a kernel buffer
 * @mr:		from sib_mr_get() (NULL only with @len == 0)
 * @iova:	the *mr_iova sib_mr_get() returned (or further into that
 *		checked range)
 * @buf:	kernel buffer
 * @len:	bytes, within the range sib_mr_get() checked
 * @dir:	SIB_TO_MEM writes the MR, SIB_FROM_MEM reads it
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL if the exporter of a dma-buf MR revoked it since
 * sib_mr_get() (nothing was copied; answer as for an invalid key).
 */
int sib_mr_copy(struct sib_mr *mr, u64 iova, void *buf, u64 len,
		enum sib_dir dir);

/**
 * sib_mr_copy_skb() - sib_mr_copy() with the payload of an skb
 * @mr:		from sib_mr_get() (NULL only with @len == 0)
 * @iova:	the *mr_iova sib_mr_get() returned (or further into that
 *		checked range)
 * @skb:	the packet; linear or with page fragments
 * @off:	offset of the first byte in @skb's data
 * @len:	bytes, within the range sib_mr_get() checked
 * @dir:	SIB_TO_MEM writes @skb's bytes into the MR, SIB_FROM_MEM
 *		reads the MR into @skb's bytes
 *
 * Context: any, no sleeping.
 * Return: as for sib_mr_copy().
 */
int sib_mr_copy_skb(struct sib_mr *mr, u64 iova, struct sk_buff *skb,
		    u32 off, u32 len, enum sib_dir dir);

/**
 * sib_mr_add_frags() - append MR bytes to an skb as page fragments
 * @mr:		from sib_mr_get(); must be a user or device memory MR
 * @iova:	its *mr_iova
 * @skb:	the packet; each fragment takes a page reference, so the
 *		bytes stay readable (not necessarily unchanged) even after
 *		the MR is deregistered
 * @len:	bytes, within the checked range
 *
 * Context: any, no sleeping.
 * Return: 0, or -E2BIG for an MR of another kind or no fragment slot
 * left; the skb then holds part of the bytes: free it and copy instead.
 */
int sib_mr_add_frags(struct sib_mr *mr, u64 iova, struct sk_buff *skb,
		     u32 len);

/**
 * sib_mr_atomic_cmp_swp() - 8-byte compare and swap on an MR
 * @mr:		from sib_mr_get(..., 8, SIB_ACC_REMOTE_ATOMIC, &iova)
 * @iova:	the MR address of the 8 bytes
 * @compare:	value expected
 * @swap:	value stored if the memory equals @compare
 * @orig:	set to the original value
 *
 * Atomic against every other CPU and every other sib atomic. The memory
 * the 8 bytes map to must be 8-byte aligned (IBA 9.4.5): a window can
 * move an aligned offset onto an unaligned address, which would also
 * let the access run into the physically next page.
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL if the bytes are unmapped or unaligned (or a
 * revoked dma-buf MR's), -EAGAIN
 * if the page of an ODP MR was invalidated since sib_mr_get().
 */
int sib_mr_atomic_cmp_swp(struct sib_mr *mr, u64 iova, u64 compare, u64 swap,
			  u64 *orig);

/**
 * sib_mr_atomic_fetch_add() - 8-byte fetch and add on an MR
 * @mr:		as for sib_mr_atomic_cmp_swp()
 * @iova:	as for sib_mr_atomic_cmp_swp()
 * @add:	the addend
 * @orig:	set to the original value
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL if the bytes are unmapped or unaligned (or a
 * revoked dma-buf MR's).
 */
int sib_mr_atomic_fetch_add(struct sib_mr *mr, u64 iova, u64 add, u64 *orig);

/**
 * sib_mr_atomic_write() - 8-byte store on an MR, for ATOMIC WRITE
 * @mr:		from sib_mr_get(..., 8, SIB_ACC_REMOTE_WRITE, &iova)
 * @iova:	as for sib_mr_atomic_cmp_swp()
 * @val:	the 8 bytes, stored in one piece, after every store before it
 *
 * Context: any, no sleeping.
 * Return: 0, or -EINVAL if the bytes are unmapped or unaligned (or a
 * revoked dma-buf MR's).
 */
int sib_mr_atomic_write(struct sib_mr *mr, u64 iova, u64 val);

/**
 * struct sib_sgl_pos - a position in an SGE list
 * @sge:	index of the current SGE
 * @off:	bytes of it already consumed
 *
 * Start with {0, 0}; sib_sgl_copy() advances it.
 */
struct sib_sgl_pos {
	u32 sge;
	u32 off;
};

/**
 * sib_sgl_copy() - copy between a local SGE list and a kernel buffer
 * @sdev:	the device
 * @pd:		the QP's PD
 * @qpn:	the QP's number
 * @sge:	the SGE list, in kernel memory
 * @num_sge:	entries in @sge
 * @pos:	where to continue; advanced by the bytes copied
 * @buf:	kernel buffer
 * @len:	bytes to copy
 * @dir:	SIB_TO_MEM scatters @buf into the SGEs (needs local write),
 *		SIB_FROM_MEM gathers them into @buf (local read)
 *
 * Each SGE's lkey, PD, right and bounds are checked for the part used.
 * Zero-length SGEs are skipped without looking at their lkey.
 *
 * Context: any, no sleeping.
 * Return: 0; -EINVAL, -EACCES or -ERANGE for a key problem (a local
 * protection error); -EMSGSIZE if the list ends before @len bytes (a local
 * length error). On error @pos is where the failure happened.
 */
int sib_sgl_copy(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		 const struct sib_sge *sge, u32 num_sge,
		 struct sib_sgl_pos *pos, void *buf, u32 len, enum sib_dir dir);

/**
 * sib_sgl_copy_skb() - sib_sgl_copy() with the payload of an skb
 * @sdev:	the device
 * @pd:		the QP's PD
 * @qpn:	the QP's number
 * @sge:	the SGE list, in kernel memory
 * @num_sge:	entries in @sge
 * @pos:	where to continue; advanced by the bytes copied
 * @skb:	the packet; linear or with page fragments
 * @off:	offset of the first byte in @skb's data
 * @len:	bytes to copy
 * @dir:	SIB_TO_MEM scatters @skb's bytes into the SGEs (needs local
 *		write), SIB_FROM_MEM gathers them into @skb (local read)
 *
 * Context: any, no sleeping.
 * Return: as for sib_sgl_copy().
 */
int sib_sgl_copy_skb(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		     const struct sib_sge *sge, u32 num_sge,
		     struct sib_sgl_pos *pos, struct sk_buff *skb, u32 off,
		     u32 len, enum sib_dir dir);

/**
 * sib_sgl_frags() - gather SGEs into an skb as page fragments
 * @sdev:	the device
 * @pd:		the QP's PD
 * @qpn:	the QP's number
 * @sge:	the SGE list, in kernel memory; each SGE used needs local
 *		read, as for sib_sgl_copy() with SIB_FROM_MEM
 * @num_sge:	entries in @sge
 * @pos:	where to continue; advanced by the bytes appended
 * @skb:	the packet the fragments are appended to
 * @len:	bytes to append
 *
 * Context: any, no sleeping.
 * Return: as sib_sgl_copy(), or -E2BIG when an SGE's MR cannot give
 * fragments or the skb is full (see sib_mr_add_frags()).
 */
int sib_sgl_frags(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		  const struct sib_sge *sge, u32 num_sge,
		  struct sib_sgl_pos *pos, struct sk_buff *skb, u32 len);

/**
 * sib_sgl_fault_in() - have the ODP pages of a local SGE list brought in
 * @sdev:	the device
 * @pd:		the QP's PD
 * @qpn:	the QP's number
 * @sge:	the SGE list, in kernel memory, that an answer will be
 *		written to (a READ's or an atomic's)
 * @num_sge:	entries in @sge
 *
 * Queues a fault for every missing page of an ODP MR in the list. Other
 * key problems are left for the copy to report.
 *
 * Context: any, no sleeping.
 * Return: 0 if every page is present, -EAGAIN if some are being brought
 * in, -EFAULT if bringing them in failed (sib_odp_check()).
 */
int sib_sgl_fault_in(struct sib_dev *sdev, struct ib_pd *pd, u32 qpn,
		     const struct sib_sge *sge, u32 num_sge);

/**
 * sib_sgl_len() - total length of an SGE list
 * @sge:	the list
 * @num_sge:	its entries
 *
 * Return: the sum of the lengths, or -EOVERFLOW if it exceeds U32_MAX
 * (compare the result with the port's max_msg_sz yourself).
 */
s64 sib_sgl_len(const struct sib_sge *sge, u32 num_sge);

#endif /* SIB_COPY_H */
