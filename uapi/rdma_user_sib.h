/* SPDX-License-Identifier: ((GPL-2.0 WITH Linux-syscall-note) OR Linux-OpenIB) */
/*
 * sib: the ABI between the rdma_sib kernel module and libsib, its
 * rdma-core provider.
 *
 * This is the only header both sides include. Everything that crosses the
 * user/kernel boundary through udata, sysfs or a mapped ring is defined here,
 * with fixed-size types and explicit padding so that its layout is the same
 * for every compiler and ABI.
 *
 * Versioning: SIB_UVERBS_ABI_VERSION is reported by the kernel as the
 * device's uverbs ABI version, and libibverbs refuses a device whose version
 * lies outside the provider's [min, max] range. The same number is repeated
 * in struct sib_alloc_ucontext_resp, and the provider checks it again there.
 * Any incompatible change to a structure in this file bumps it.
 */
#ifndef RDMA_USER_SIB_H
#define RDMA_USER_SIB_H

#include <linux/types.h>

#define SIB_UVERBS_ABI_VERSION	1

/*
 * Device identification. Every sib ib_device publishes a read-only sysfs
 * attribute /sys/class/infiniband/<ibdev>/SIB_SYSFS_ATTR whose content is
 * SIB_SYSFS_MAGIC, a space, and the ABI version in decimal, then a newline:
 * "sib 1\n". The provider matches devices by this attribute, not by the
 * device name, so that a renamed device is still found and no other
 * driver's device is ever claimed.
 */
#define SIB_SYSFS_ATTR		"sib_abi"
#define SIB_SYSFS_MAGIC		"sib"

/*
 * /sys/class/infiniband/<ibdev>/SIB_SYSFS_CAPS holds the enum
 * sib_ucontext_caps bits that alloc_ucontext reports, as "0x%x\n". A
 * context imported from another's command file (ibv_import_device) gets
 * no alloc_ucontext response and learns them here; it has no doorbell
 * file, so it ignores SIB_UCTX_CAP_DB_FD and SIB_UCTX_CAP_DB_STREAM. A
 * kernel without the attribute: an imported context assumes no caps.
 */
#define SIB_SYSFS_CAPS		"sib_caps"

/*
 * alloc_ucontext: the request asks for optional objects (an older kernel
 * ignores it); the response tells the provider which ABI the kernel speaks
 * and which optional features it implements.
 */
enum sib_ucontext_caps {
	SIB_UCTX_CAP_NONE = 0,
	/*
	 * The kernel maintains sib_ring_hdr.kpoll of send queues (see
	 * "Doorbell suppression" below). A provider must not skip a doorbell
	 * unless the kernel sets this bit; a kernel without it leaves kpoll 0.
	 */
	SIB_UCTX_CAP_SQ_KPOLL = 1 << 0,
	/*
	 * The kernel sets sib_ring_hdr.credit_wanted of receive queues (see
	 * "Credit updates" below) and answers a POST_RECV doorbell while it
	 * is set. Without this bit, the word stays 0 and no doorbell is
	 * needed: the peer then learns of new receives only from its retry.
	 */
	SIB_UCTX_CAP_RQ_CREDIT = 1 << 1,
	/*
	 * The kernel understands SIB_UCTX_REQ_DB_FD (see "The doorbell
	 * file" below). Without this bit, db_fd is 0 and means nothing.
	 */
	SIB_UCTX_CAP_DB_FD = 1 << 2,
	/*
	 * The doorbell file takes SIB_DB_F_STREAM on SQ doorbells (see "The
	 * doorbell file" below). Without this bit the flag gets EINVAL.
	 */
	SIB_UCTX_CAP_DB_STREAM = 1 << 3,
	/*
	 * The kernel writes sib_cqe.timestamp into every CQE of a CQ created
	 * with IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION (see "Completion
	 * timestamps" below). Without this bit the word stays 0.
	 */
	SIB_UCTX_CAP_CQE_TS = 1 << 4,
	/*
	 * The SQ takes SIB_WR_ATOMIC_WRITE on RC QPs (see "ATOMIC WRITE"
	 * below). Without this bit the WQE fails with IB_WC_LOC_QP_OP_ERR.
	 */
	SIB_UCTX_CAP_ATOMIC_WRITE = 1 << 5,
	/*
	 * The SQ takes SIB_WR_FLUSH on RC QPs, and MRs take
	 * SIB_ACCESS_FLUSH_GLOBAL (see "FLUSH" below). Without this bit the
	 * WQE fails with IB_WC_LOC_QP_OP_ERR.
	 */
	SIB_UCTX_CAP_FLUSH = 1 << 6,
	/*
	 * The kernel implements device memory (see "Device memory" below):
	 * UVERBS_METHOD_DM_ALLOC takes SIB_ATTR_ALLOC_DM_RESP, and
	 * SIB_METHOD_DM_QUERY exists. Without this bit a provider offers no
	 * device memory (the kernel has no alloc_dm and answers EOPNOTSUPP).
	 */
	SIB_UCTX_CAP_DM = 1 << 7,
	/*
	 * XRC: XRC domains, XRC SRQs, XRC_INI and XRC_TGT QPs. The XRC SRQ
	 * a request of an XRC_INI QP is for travels in the send WQE's
	 * wr.xrc.remote_srqn, which no opcode an XRC_INI QP sends uses for
	 * anything else.
	 */
	SIB_UCTX_CAP_XRC = 1 << 8,
	/*
	 * The kernel implements on-demand paging: reg_mr takes
	 * IBV_ACCESS_ON_DEMAND (explicit ODP; implicit ODP is refused with
	 * EOPNOTSUPP) and ibv_advise_mr() prefetches. Without this bit a
	 * provider answers ibv_advise_mr() with EOPNOTSUPP itself.
	 */
	SIB_UCTX_CAP_ODP = 1 << 9,
	/*
	 * The kernel registers dma-bufs as MRs (ibv_reg_dmabuf_mr()):
	 * buffers in system memory that the exporter lets the kernel map.
	 * Without this bit a provider answers ibv_reg_dmabuf_mr() with
	 * EOPNOTSUPP itself.
	 */
	SIB_UCTX_CAP_DMABUF = 1 << 10,
};

enum sib_ucontext_req_flags {
	/* Open a doorbell file for this context; its number is in db_fd. */
	SIB_UCTX_REQ_DB_FD = 1 << 0,
};

struct sib_alloc_ucontext_cmd {
	__u32 flags;		/* enum sib_ucontext_req_flags; others: EINVAL */
	__u32 reserved;		/* 0 */
};

struct sib_alloc_ucontext_resp {
	__u32 abi_version;	/* SIB_UVERBS_ABI_VERSION */
	__u32 caps;		/* enum sib_ucontext_caps */
	__u32 max_inline;	/* bytes of inline data per send WQE */
	__s32 db_fd;		/* the doorbell file, or -1 (with CAP_DB_FD) */
};

/*
 * The doorbell file (SIB_UCTX_CAP_DB_FD): a file descriptor of the
 * calling process, opened with O_CLOEXEC, bound to the context that asked
 * for it. A write() of exactly one struct sib_db_req is the same doorbell
 * as a legacy POST_SEND (op SIB_DB_SQ) or POST_RECV (op SIB_DB_RQ) command
 * without work requests on the QP numbered qpn, but skips uverbs' command
 * path. It returns sizeof(struct sib_db_req), or fails with EINVAL (another
 * size, an unknown op, a QP number that is not one of this context's QPs)
 * EIO (the context is gone: destroyed or disassociated) or EACCES (the
 * writer's credentials are not the opener's, e.g. a child after fork(),
 * as for uverbs' own command file). The file only kicks QPs of its own
 * context; the process closes it when it frees the context (the kernel
 * does not).
 */
enum sib_db_op {
	SIB_DB_SQ = 0,
	SIB_DB_RQ = 1,
	/*
	 * With SIB_DB_SQ (SIB_UCTX_CAP_DB_STREAM): the process is posting a
	 * streak, more than one send doorbell since it last polled a
	 * completion queue, and is likely to post more before it waits. The kernel may
	 * then run the QP's engines on another, idle CPU instead of in this
	 * call, with kpoll set (see "Doorbell suppression") so that the
	 * posts that follow need no doorbell. Only a hint: the work is done
	 * either way.
	 */
	SIB_DB_F_STREAM = 1 << 8,
};

struct sib_db_req {
	__u32 qpn;
	__u32 op;		/* enum sib_db_op */
};

/*
 * ---------------------------------------------------------------------
 * Device memory (SIB_UCTX_CAP_DM)
 *
 * A device memory allocation (ibv_alloc_dm) is a set of zeroed kernel
 * pages that the device owns, as many as its length rounded up to
 * pages. The process reaches it through mmap(cmd_fd, mmap_offset) of
 * exactly mmap_size bytes, MAP_SHARED; the device reaches it through the
 * zero-based MRs registered on it (ibv_reg_dm_mr). Byte 0 of the
 * allocation is the first byte of the mapping, so any log_align_req up
 * to the page shift is met; a larger one is refused (EINVAL).
 *
 * The kernel returns struct sib_dm_info in a driver attribute of ib_core's
 * UVERBS_METHOD_DM_ALLOC (SIB_ATTR_ALLOC_DM_RESP, mandatory), and again
 * for an existing allocation of the context through the driver method
 * SIB_METHOD_DM_QUERY of UVERBS_OBJECT_DM (for ibv_import_dm()).
 *
 * Driver attribute and method ids live in the driver namespace of the
 * uverbs ioctl interface: SIB_UVERBS_ID_DRIVER_NS is
 * 1 << UVERBS_ID_NS_SHIFT of <rdma/rdma_user_ioctl_cmds.h>.
 */
#define SIB_UVERBS_ID_DRIVER_NS	0x1000

enum sib_dm_alloc_attrs {
	/* PTR_OUT, struct sib_dm_info */
	SIB_ATTR_ALLOC_DM_RESP = SIB_UVERBS_ID_DRIVER_NS,
};

enum sib_dm_methods {
	SIB_METHOD_DM_QUERY = SIB_UVERBS_ID_DRIVER_NS,
};

enum sib_dm_query_attrs {
	/* IDR, UVERBS_OBJECT_DM, read access: the allocation */
	SIB_ATTR_QUERY_DM_HANDLE = SIB_UVERBS_ID_DRIVER_NS,
	/* PTR_OUT, struct sib_dm_info */
	SIB_ATTR_QUERY_DM_RESP,
};

struct sib_dm_info {
	__aligned_u64 mmap_offset;	/* for mmap() on the command file */
	__aligned_u64 mmap_size;	/* bytes to map: length, page aligned */
	__aligned_u64 length;		/* bytes of the allocation */
};

/* alloc_pd: the PD number, for diagnostics. */
struct sib_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

/*
 * ---------------------------------------------------------------------
 * Shared rings
 *
 * Every CQ, send queue (SQ), receive queue (RQ) and shared receive queue
 * (SRQ) is a ring in kernel memory (vmalloc_user), mapped into the process
 * with mmap(cmd_fd, offset) at the offset and size that the create (or
 * resize) response gives in struct sib_ring_info.
 *
 * Layout: struct sib_ring_hdr at offset 0, then nslots slots of slot_size
 * bytes each from offset SIB_RING_HDR_SIZE. nslots and slot_size are
 * powers of two. Slot i holds the element of index i & (nslots - 1).
 *
 * Indices are free-running 32-bit counters: the producer only ever
 * increments prod, the consumer only ever increments cons, and both wrap
 * at 2^32. The ring holds prod - cons elements (unsigned arithmetic); it
 * is empty when prod == cons and full when prod - cons == nslots.
 *
 * Ordering: the producer writes the element, then stores prod with
 * release semantics; the consumer loads prod with acquire semantics,
 * then reads the element. Likewise for cons in the other direction.
 *
 * Roles:
 *   SQ, RQ, SRQ: the process produces WQEs; the kernel consumes them.
 *   CQ:          the kernel produces CQEs; the process consumes them.
 *
 * The kernel trusts nothing in a mapped ring. It copies each WQE into
 * kernel memory exactly once and validates the copy. An index the
 * process wrote that would make prod - cons exceed nslots is a
 * corrupted ring: the QP (or CQ) goes to the error state.
 *
 * Doorbell suppression (SQ, with SIB_UCTX_CAP_SQ_KPOLL): the kernel sets
 * kpoll to 1 while it runs the QP's engines, and before it stops it
 * stores 0, issues a full barrier and reads prod once more, running again
 * if prod moved. A producer that stored prod, issued a full barrier and
 * then read kpoll as 1 may therefore skip the doorbell: either the kernel
 * sees the new prod, or it had not cleared kpoll yet. Any other value
 * means "ring the doorbell". A process that never skips loses nothing.
 *
 * Credit updates (RQ of an RC QP, with SIB_UCTX_CAP_RQ_CREDIT): when the
 * responder has told its peer that no receive WQE is posted (an ACK
 * advertising zero end-to-end credits, or an RNR NAK), the kernel stores
 * credit_wanted = 1, issues a full barrier and reads prod once more. A
 * producer that stored prod, issued a full barrier and then read
 * credit_wanted as nonzero writes one POST_RECV doorbell (a legacy
 * POST_RECV command without work requests); the kernel then clears the
 * word and sends the peer an ACK with the new credits, so that the peer
 * sends what it held back. Either the kernel sees the new prod, or the
 * producer sees the word. A producer that never looks loses only speed:
 * the peer probes when its timer expires. The kernel trusts nothing in
 * this word: any value merely costs a doorbell.
 *
 * When the kernel advances the consumer index of an SQ or RQ: a send WQE
 * stays in the ring, counting against the SQ's capacity, until its
 * completion has been generated (or it would have been, for an
 * unsignalled WQE), so cons moves in completion order. A receive WQE is
 * consumed when the message that uses it completes.
 */
#define SIB_RING_HDR_SIZE	256

struct sib_ring_hdr {
	__u32 prod;		/* written only by the producer */
	__u32 pad0[15];
	__u32 cons;		/* written only by the consumer */
	__u32 pad1[15];
	__u32 flags;		/* enum sib_ring_flags; written by the kernel */
	__u32 kpoll;		/* SQ: doorbell suppression; by the kernel */
	__u32 credit_wanted;	/* RQ: credit updates; by the kernel */
	__u32 pad2[29];
};

enum sib_ring_flags {
	/* SQ/RQ: the QP is in the error state; WQEs posted now get flushed. */
	SIB_RING_F_QP_ERR = 1 << 0,
	/* CQ: an overrun happened; the CQ is in error. */
	SIB_RING_F_CQ_ERR = 1 << 1,
};

struct sib_ring_info {
	__aligned_u64 mmap_offset;
	__aligned_u64 mmap_size;
	__u32 nslots;
	__u32 slot_size;
};

/* A scatter/gather element; same layout as struct ibv_sge. */
struct sib_sge {
	__aligned_u64 addr;
	__u32 length;
	__u32 lkey;
};

/*
 * Send WQE. opcode takes enum ib_uverbs_wr_opcode values (the same as
 * enum ibv_wr_opcode); send_flags takes the IB_SEND_* values (the same as
 * enum ibv_send_flags).
 * With IB_UVERBS_SEND_INLINE, inline_len bytes of data follow the header
 * in place of the SGE array; otherwise num_sge SGEs do.
 */
struct sib_send_wqe {
	__aligned_u64 wr_id;
	__u8 opcode;
	__u8 reserved;
	__u16 num_sge;
	__u32 send_flags;
	__u32 inline_len;
	union {
		__be32 imm_data;	/* *_WITH_IMM */
		__u32 invalidate_rkey;	/* SEND_WITH_INV, LOCAL_INV */
	} ex;
	union {
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 reserved;
		} rdma;
		struct {
			__aligned_u64 remote_addr;
			__aligned_u64 compare_add;
			__aligned_u64 swap;
			__u32 rkey;
			__u32 reserved;
		} atomic;
		struct {
			__u32 ah_handle;
			__u32 remote_qpn;
			__u32 remote_qkey;
			__u32 reserved;
		} ud;
		struct {
			__aligned_u64 addr;	/* start of the window */
			__aligned_u64 length;
			__u32 mw_rkey;		/* the window's current rkey */
			__u32 new_rkey;		/* rkey after the bind */
			__u32 mr_lkey;		/* MR the window binds to */
			__u32 access;		/* IB_ACCESS_REMOTE_* | ZERO_BASED */
		} bind_mw;
		/*
		 * IB_WR_REG_MR, posted by kernel consumers only (a user QP's
		 * completes with IB_WC_LOC_QP_OP_ERR): the MR is the one of
		 * key's index, its page list the one ib_map_mr_sg() wrote.
		 */
		struct {
			__aligned_u64 iova;	/* first address of the region */
			__aligned_u64 length;	/* bytes in the region */
			__u32 key;		/* lkey == rkey after the WQE */
			__u32 access;		/* IB_ACCESS_* */
			__u32 npages;		/* entries of the page list */
			__u32 page_shift;	/* log2 of their page size */
		} reg_mr;
		/* SIB_WR_FLUSH (see "FLUSH" below). */
		struct {
			__aligned_u64 remote_addr;
			__u32 rkey;
			__u32 length;	/* bytes, with SIB_FLUSH_RANGE */
			__u8 type;	/* enum sib_flush_type, one or both */
			__u8 level;	/* enum sib_flush_level */
			__u8 reserved[6];
		} flush;
		/*
		 * XRC_INI QPs: the remote XRC SRQ, after the largest of
		 * the fields above that SEND, RDMA and atomics use.
		 */
		struct {
			__u32 reserved[8];
			__u32 remote_srqn;
			__u32 reserved2;
		} xrc;
		__u8 raw[40];
	} wr;
	/* struct sib_sge sge[num_sge], or inline data, follows. */
};

#define SIB_SEND_WQE_HDR	64

/*
 * ATOMIC WRITE (IBA 1.5, with SIB_UCTX_CAP_ATOMIC_WRITE): an RC request
 * that stores 8 bytes at an 8-byte aligned remote address in one
 * indivisible store, after every request before it has been placed. The
 * opcode is IB_UVERBS_WR_ATOMIC_WRITE of Linux 6.2 and later (which 6.1's
 * headers lack) and IBV_WR_ATOMIC_WRITE. The WQE uses wr.atomic:
 * remote_addr and rkey name the target, swap holds the value (in host
 * byte order, as the process wrote it; it travels as the payload's eight
 * bytes, unchanged), compare_add, num_sge and inline_len are 0.
 */
enum sib_wr_opcode {
	SIB_WR_FLUSH = 14,
	SIB_WR_ATOMIC_WRITE = 15,
};

/*
 * FLUSH (IBA 1.5, with SIB_UCTX_CAP_FLUSH): an RC request that makes
 * every write placed before it at the responder visible (placement type
 * SIB_FLUSH_GLOBAL) or persistent (SIB_FLUSH_PERSISTENT), for a range of
 * an MR (SIB_FLUSH_RANGE: remote_addr and length) or a whole MR
 * (SIB_FLUSH_MR: remote_addr and length mean nothing). The opcode is
 * IB_UVERBS_WR_FLUSH of Linux 6.2 and later and IBV_WR_FLUSH; the WQE
 * uses wr.flush, num_sge and inline_len are 0. The target MR needs the
 * access of each placement type asked for (SIB_ACCESS_FLUSH_GLOBAL, the
 * value of IB_UVERBS_ACCESS_FLUSH_GLOBAL; sib has no persistent memory
 * and refuses SIB_ACCESS_FLUSH_PERSISTENT), and so does the responder's
 * QP.
 */
enum sib_flush_type {
	SIB_FLUSH_GLOBAL = 1 << 0,
	SIB_FLUSH_PERSISTENT = 1 << 1,
};

enum sib_flush_level {
	SIB_FLUSH_RANGE = 0,
	SIB_FLUSH_MR = 1,
};

enum sib_access_flags {
	SIB_ACCESS_FLUSH_GLOBAL = 1 << 8,
	SIB_ACCESS_FLUSH_PERSISTENT = 1 << 9,
};

/* Receive WQE, for RQs and SRQs. */
struct sib_recv_wqe {
	__aligned_u64 wr_id;
	__u32 num_sge;
	__u32 reserved;
	/* struct sib_sge sge[num_sge] follows. */
};

#define SIB_RECV_WQE_HDR	16

/* Work completion opcodes: the values of enum ibv_wc_opcode. */
enum sib_wc_opcode {
	SIB_WC_SEND = 0,
	SIB_WC_RDMA_WRITE = 1,
	SIB_WC_RDMA_READ = 2,
	SIB_WC_COMP_SWAP = 3,
	SIB_WC_FETCH_ADD = 4,
	SIB_WC_BIND_MW = 5,
	SIB_WC_LOCAL_INV = 6,
	SIB_WC_FLUSH = 8,		/* IBV_WC_FLUSH */
	SIB_WC_ATOMIC_WRITE = 9,	/* IBV_WC_ATOMIC_WRITE */
	SIB_WC_REG_MR = 64,	/* kernel CQs only: IB_WC_REG_MR */
	SIB_WC_RECV = 128,
	SIB_WC_RECV_RDMA_WITH_IMM = 129,
};

/* Work completion flags: the values of enum ibv_wc_flags. */
enum sib_wc_flags {
	SIB_WC_F_GRH = 1 << 0,
	SIB_WC_F_WITH_IMM = 1 << 1,
	SIB_WC_F_WITH_INV = 1 << 3,
};

/*
 * Completion queue entry. The first 48 bytes have the layout of
 * struct ibv_wc; status takes enum ibv_wc_status values.
 *
 * Completion timestamps (SIB_UCTX_CAP_CQE_TS): on a CQ created with
 * IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION, timestamp is the kernel's
 * CLOCK_MONOTONIC in nanoseconds (ktime_get_ns()) at the moment the
 * kernel wrote the CQE into the ring. sib's "core clock" is that clock:
 * 1 GHz (hca_core_clock 1000000 kHz), 64 bits wide. On other CQs, and
 * with a kernel without the capability, timestamp is 0.
 */
struct sib_cqe {
	__aligned_u64 wr_id;
	__u32 status;
	__u32 opcode;		/* enum sib_wc_opcode */
	__u32 vendor_err;
	__u32 byte_len;
	__u32 ex;		/* imm_data (big endian) or invalidated rkey */
	__u32 qp_num;
	__u32 src_qp;
	__u32 wc_flags;		/* enum sib_wc_flags */
	__u16 pkey_index;
	__u16 slid;
	__u8 sl;
	__u8 dlid_path_bits;
	__u8 network_hdr_type;	/* UD over RoCEv2: 2 = IPv4, 3 = IPv6 */
	__u8 reserved0;
	__u32 reserved1;
	__aligned_u64 timestamp;	/* ns of CLOCK_MONOTONIC, or 0 */
};

#define SIB_CQE_SIZE		64

/* create_cq and resize_cq responses. */
struct sib_create_cq_resp {
	struct sib_ring_info ring;
};

/* create_qp response; rq is all zero for a QP attached to an SRQ. */
struct sib_create_qp_resp {
	struct sib_ring_info sq;
	struct sib_ring_info rq;
	__u32 max_inline;	/* inline bytes that fit in an SQ slot */
	__u32 reserved;
};

/*
 * create_ah response: the AH number that UD send WQEs carry in
 * wr.ud.ah_handle. The kernel checks it belongs to the QP's PD.
 */
struct sib_create_ah_resp {
	__u32 ah_num;
	__u32 reserved;
};

/* create_srq response. */
struct sib_create_srq_resp {
	struct sib_ring_info ring;
	__u32 srq_num;
	__u32 reserved;
};

/*
 * ---------------------------------------------------------------------
 * Receive work queues and RSS
 *
 * A receive work queue (ibv_create_wq, IBV_WQT_RQ) is a receive ring of
 * its own, with the layout and rules of an SRQ's: struct sib_recv_wqe
 * slots that the process produces and the kernel consumes. Its
 * completions go to the CQ it was created with; their qp_num is the WQ's
 * number (wq_num). Only a WQ in the ready state (IBV_WQS_RDY) takes
 * frames. Moving it to IBV_WQS_ERR completes every WQE in the ring with
 * IBV_WC_WR_FLUSH_ERR and sets SIB_RING_F_QP_ERR in the ring's flags; a
 * WQE posted after that is flushed by the next modify_wq to IBV_WQS_ERR,
 * which a provider sends as the doorbell of a WQ in error. Moving it to
 * IBV_WQS_RESET drops the WQEs in the ring without completions and
 * clears the flag.
 *
 * An RSS QP is a raw packet QP created with an indirection table
 * (IB_UVERBS_CREATE_QP_MASK_IND_TABLE) and, as driver data of the create
 * command, struct sib_create_qp_rss. It has no queues of its own: it
 * receives from its creation on, cannot be modified, and each frame one
 * of its flows takes goes to the WQ at entry (hash & (table size - 1)) of
 * the table, hash being the Toeplitz hash with rx_hash_key of the fields
 * rx_hash_fields_mask selects (Documentation/roce.md, "RSS").
 */
struct sib_create_wq_resp {
	struct sib_ring_info ring;
};

enum sib_rx_hash_function {
	SIB_RX_HASH_FUNC_TOEPLITZ = 1 << 0,	/* IBV_RX_HASH_FUNC_TOEPLITZ */
};

/* The fields hashed: the values of enum ibv_rx_hash_fields. */
enum sib_rx_hash_fields {
	SIB_RX_HASH_SRC_IPV4 = 1 << 0,
	SIB_RX_HASH_DST_IPV4 = 1 << 1,
	SIB_RX_HASH_SRC_IPV6 = 1 << 2,
	SIB_RX_HASH_DST_IPV6 = 1 << 3,
	SIB_RX_HASH_SRC_PORT_TCP = 1 << 4,
	SIB_RX_HASH_DST_PORT_TCP = 1 << 5,
	SIB_RX_HASH_SRC_PORT_UDP = 1 << 6,
	SIB_RX_HASH_DST_PORT_UDP = 1 << 7,
};

/* An indirection table has 2^SIB_MAX_LOG_IND_TBL entries at most. */
#define SIB_MAX_LOG_IND_TBL	10

/* The Toeplitz key: 40 bytes hash an IPv6 4-tuple (36 bytes). */
#define SIB_RX_HASH_KEY_LEN	40

struct sib_create_qp_rss {
	__aligned_u64 rx_hash_fields_mask;	/* enum ibv_rx_hash_fields */
	__u8 rx_hash_function;		/* enum sib_rx_hash_function */
	__u8 rx_hash_key_len;		/* SIB_RX_HASH_KEY_LEN */
	__u8 reserved[6];		/* 0 */
	__u8 rx_hash_key[SIB_RX_HASH_KEY_LEN];
};

#endif /* RDMA_USER_SIB_H */
