/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: a soft RDMA device speaking the InfiniBand transport over RoCEv2.
 *
 * Objects and their locking rules. Every structure says which lock guards
 * which field; a field with no note is written once before the object is
 * published and read-only afterwards.
 */
#ifndef SIB_H
#define SIB_H

#include <linux/atomic.h>
#include <linux/idr.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>

#include "../uapi/rdma_user_sib.h"
#include "sib_compat.h"
#include "sib_mr.h"
#include "sib_fault.h"
#include "sib_raw.h"

/* SIB_DRV_VERSION is the file VERSION, passed by kernel/Kbuild */
#define SIB_FW_VER_MAJOR	0
#define SIB_FW_VER_MINOR	1
#define SIB_FW_VER_SUB		0

/*
 * Vendor id: an IEEE CID (company id) value with the locally administered
 * bit set (0x5a: X=0b1010), so it can never collide with a real vendor's
 * OUI. rdma-core's tests require it to be non-zero and not Mellanox's.
 */
#define SIB_VENDOR_ID		0x5a1b00
#define SIB_VENDOR_PART_ID	0x0001
#define SIB_HW_VER		1

/* Limits advertised in query_device. Only what works is non-zero. */
#define SIB_MAX_PD		0x10000
#define SIB_GID_TBL_LEN		128
#define SIB_PKEY_TBL_LEN	1
#define SIB_MAX_MSG_SZ		0x1000000u	/* 16 MiB (IBTA allows up to 2 GiB) */

/*
 * RoCEv2 headroom subtracted from the netdev MTU to get the IB path MTU:
 * IPv6 (40) + UDP (8) + BTH (12) + the largest extended header set (28)
 * + ICRC (4), rounded up. 1500 gives IB_MTU_1024, 9000 gives IB_MTU_4096.
 */
#define SIB_ROCE_HDR_ROOM	96

/**
 * struct sib_av - where packets go: a RoCEv2 address vector
 * @dgid:	destination GID (IPv6 or IPv4-mapped)
 * @sgid:	source GID (IPv6 or IPv4-mapped)
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6
 * @dmac:	destination MAC from ib_core's resolution
 * @hop_limit:	GRH hop limit
 * @traffic_class: GRH traffic class
 * @flow_label:	GRH flow label
 * @udp_sport:	UDP source port (flow entropy, stable per QP)
 *
 * A copy taken when the QP is modified (or the AH created): the GID
 * attribute ib_core lends to the verb is not kept.
 */
struct sib_av {
	union ib_gid dgid;
	union ib_gid sgid;
	u8 network_type;
	u8 dmac[ETH_ALEN];
	u8 hop_limit;
	u8 traffic_class;
	u32 flow_label;
	u16 udp_sport;
};

/* Per-device counters; names in sib_verbs.c. */
enum sib_counter {
	SIB_CNT_CREDIT_STALLS,
	SIB_CNT_RNR_NAK_SENT,
	SIB_CNT_RNR_NAK_RCVD,
	SIB_CNT_SEQ_NAK_SENT,
	SIB_CNT_RETRANS,
	SIB_CNT_TIMEOUTS,
	SIB_CNT_DUP_REQ,
	SIB_CNT_QKEY_VIOL,
	SIB_CNT_SENT_PKTS,	/* handed on, locally or to the IP stack */
	SIB_CNT_RCVD_PKTS,	/* queued to a QP, locally or off the wire */
	SIB_CNT_SEND_ERRORS,	/* no route, or the IP stack refused */
	SIB_CNT_ICRC_ERRORS,
	SIB_CNT_HDR_ERRORS,	/* bad IP/UDP/transport header or length */
	SIB_CNT_UNKNOWN_QPN,	/* no such QP, or not connected to the sender */
	SIB_CNT_RX_QUEUE_FULL,	/* the QP's input queue was full */
	SIB_CNT_ONECOPY_PKTS,	/* local packets whose payload was not copied */
	SIB_CNT_DOORBELLS,	/* send doorbells (system calls) of user QPs */
	SIB_CNT_NAK_IN_RETRY,	/* a NAK or implied NAK during a go-back-N */
	SIB_CNT_WIRE_FRAG_PKTS,	/* RoCEv2 packets sent with MR page fragments */
	SIB_CNT_ACKS_COALESCED,	/* ACKs left out: a later one covers them */
	SIB_CNT_CREDIT_UPD_SENT, /* unsolicited ACKs with new credits */
	SIB_CNT_CREDIT_UPD_RCVD, /* duplicate ACKs that raised the limit */
	SIB_CNT_CREDIT_PROBES,	/* limited WQEs sent after a credit wait timed out */
	SIB_CNT_LOCAL_BURSTS,	/* local packets that stood for several PSNs */
	SIB_CNT_WIRE_TX_BATCHED, /* RoCEv2 packets sent in a batch of several */
	SIB_CNT_ASYNC_DOORBELLS, /* doorbells whose engines ran on a worker */
	SIB_CNT_ASYNC_LATE,	/* of those, workers that started late */
	SIB_CNT_LOCAL_ACKS,	/* local ACKs passed without a packet */
	SIB_CNT_UC_DROPPED,	/* UC messages the responder dropped */
	SIB_CNT_WIRE_TX_HELD,	/* passes that left RoCEv2 packets for later */
	SIB_CNT_READ_RESTARTS,	/* READs in progress ended by a duplicate */
	SIB_CNT_ODP_FAULT_PAGES, /* ODP MR pages brought in by a fault */
	SIB_CNT_ODP_FAULT_ERRORS, /* ODP faults that failed (unmapped memory) */
	SIB_CNT_ODP_INVALIDATIONS, /* ODP MR ranges the kernel invalidated */
	SIB_CNT_ODP_RNR_NAK_SENT, /* RNR NAKs sent while an ODP page came in */
	SIB_CNT_ODP_REQ_WAITS,	/* requester waits for an ODP page of an SGE */
	SIB_CNT_DMABUF_REVOCATIONS, /* dma-buf MRs revoked by their exporter */
	SIB_NUM_CNT
};

struct sib_parent;

/**
 * struct sib_dev - one sib ib_device, bound to one netdev
 * @ib_dev:	the ib_core device; must stay first (ib_alloc_device)
 * @ndev:	the bound netdev. A reference is held from link add until
 *		dealloc_driver, so the pointer is always valid while @ib_dev
 *		exists. It is never replaced.
 * @ndev_tracker: tracker for that reference
 * @list:	entry in sib_dev_list, guarded by sib_dev_mutex
 * @registered:	ib_register_device() succeeded; guarded by sib_dev_mutex
 * @ndev_gone:	the netdev began unregistering before @registered was set;
 *		guarded by sib_dev_mutex. Link add then unregisters the device
 *		itself.
 * @pd_ida:	PD numbers; the IDA has its own lock
 * @num_pd:	PDs allocated, bounded by SIB_MAX_PD
 * @port_active: last port state dispatched (true: ACTIVE); written only
 *		from the netdev notifier, under RTNL
 * @mem:	memory keys (MRs and MWs); see sib_mr.h for its locking
 * @qp_xa:	QPs by number; the xarray's lock guards insertion and removal,
 *		lookups run under RCU and take a QP reference
 * @ah_xa:	AHs by number; lookups under RCU copy the AV
 * @num_ah:	live AHs, bounded by SIB_MAX_AH
 * @num_cq:	live CQs, bounded by SIB_MAX_CQ
 * @num_qp:	live QPs, bounded by SIB_MAX_QP
 * @num_srq:	live SRQs, bounded by SIB_MAX_SRQ
 * @num_dm:	live device memory allocations (sib_dm.c)
 * @dm_bytes:	bytes of device memory pages not yet freed, bounded by
 *		SIB_MAX_DM_SIZE; reserved before the pages are allocated
 * @srq_xa:	SRQs by number; the xarray's lock guards insertion and
 *		removal, lookups run under RCU and take an SRQ reference
 * @srqn_next:	next SRQ number to try; guarded by @srq_xa's lock
 * @qpn_next:	next QP number to try; guarded by @qp_xa's lock
 * @credits:	responders advertise end-to-end credits (sysfs "credits")
 * @cnt:	event counters (enum sib_counter), shown by "rdma statistic"
 * @fault:	fault injection state and its debugfs knobs (sib_fault.h)
 * @qp_dir:	the debugfs directory sib/<ibdev>/qp of the QPs' views
 *		(sib_res.c); set once, before the device is registered
 * @mcg_list:	multicast groups (see sib_mcast.c for the locking)
 * @mcg_lock:	guards the readers' side of @mcg_list
 * @mcg_mutex:	serialises attach and detach
 * @num_mcg:	multicast groups in @mcg_list
 * @parent:	the ib_device's parent in sysfs (sib_sysfs.c), or NULL
 * @ns:		the RoCEv2 state (UDP sockets) of the network namespace the
 *		device is attached to, or NULL; written under sib_ns_mutex
 *		(sib_udp.c)
 * @ns_node:	entry in @ns->devs, under sib_ns_mutex; the receive path
 *		walks @ns->devs under RCU
 * @cap:	the capture netdev (sib_capture.c), or NULL; written under
 *		RTNL, read under RCU
 * @raw:	raw packet QPs and their flows (sib_raw.h has its locking)
 */
struct sib_dev {
	struct ib_device ib_dev;
	struct net_device *ndev;
	netdevice_tracker ndev_tracker;
	struct list_head list;
	bool registered;
	bool ndev_gone;
	struct ida pd_ida;
	atomic_t num_pd;
	bool port_active;
	struct sib_mem_table mem;
	struct xarray qp_xa;
	struct xarray ah_xa;
	atomic_t num_ah;
	atomic_t num_cq;
	atomic_t num_qp;
	atomic_t num_srq;
	atomic_t num_dm;
	atomic64_t dm_bytes;
	struct xarray srq_xa;
	u32 srqn_next;
	u32 qpn_next;
	bool credits;
	atomic64_t cnt[SIB_NUM_CNT];
	struct list_head mcg_list;
	spinlock_t mcg_lock;	/* see sib_mcast.c */
	struct mutex mcg_mutex;	/* see sib_mcast.c */
	u32 num_mcg;
	struct sib_parent *parent;
	struct sib_ns *ns;
	struct list_head ns_node;
	struct sib_fault fault;
	struct dentry *qp_dir;
	struct net_device __rcu *cap;
	struct sib_raw raw;
};

static inline void sib_count(struct sib_dev *sdev, unsigned int idx)
{
	atomic64_inc(&sdev->cnt[idx]);
}

static inline void sib_count_n(struct sib_dev *sdev, unsigned int idx,
			       unsigned int n)
{
	atomic64_add(n, &sdev->cnt[idx]);
}

struct sib_db;

/**
 * struct sib_ucontext - a user process's context on a sib device
 * @ib_uc: the ib_core object; must stay first
 * @db:    its doorbell file's state (sib_db.c), or NULL; set at alloc,
 *         cut off from the context at dealloc
 */
struct sib_ucontext {
	struct ib_ucontext ib_uc;
	struct sib_db *db;
};

/**
 * struct sib_pd - protection domain
 * @ib_pd: the ib_core object; must stay first
 * @pdn:   PD number, unique per device
 */
struct sib_pd {
	struct ib_pd ib_pd;
	u32 pdn;
};

/* Queue limits. Ring capacities are powers of two. */
#define SIB_MAX_CQ		0x10000
#define SIB_MAX_CQE		0x10000
#define SIB_MAX_QP		0x10000
#define SIB_MAX_QP_WR		0x4000
#define SIB_MAX_SGE		32
#define SIB_MAX_INLINE		512
#define SIB_MAX_SRQ		0x1000
#define SIB_MAX_SRQ_WR		0x4000
#define SIB_MAX_SRQ_SGE		32
#define SIB_MAX_RD_ATOMIC	128
#define SIB_MAX_AH		0x10000
#define SIB_MAX_MCG		256	/* multicast groups per device */
#define SIB_MAX_MCG_QP		32	/* QPs attached to one group */
/* The caps every user context gets (enum sib_ucontext_caps). */
#define SIB_UCTX_CAPS	(SIB_UCTX_CAP_SQ_KPOLL | SIB_UCTX_CAP_RQ_CREDIT | \
			 SIB_UCTX_CAP_DB_FD | SIB_UCTX_CAP_DB_STREAM | \
			 SIB_UCTX_CAP_CQE_TS | SIB_UCTX_CAP_ATOMIC_WRITE | \
			 SIB_UCTX_CAP_FLUSH | SIB_UCTX_CAP_DM | \
			 SIB_UCTX_CAP_XRC | SIB_UCTX_CAP_ODP | \
			 SIB_UCTX_CAP_DMABUF)
/*
 * ATOMIC WRITE in query_device's capabilities: IB_DEVICE_ATOMIC_WRITE
 * (IB_UVERBS_DEVICE_ATOMIC_WRITE) of Linux 6.2 and later, which 6.1's
 * headers lack; ib_core passes the 64-bit flags on to ibv_query_device_ex.
 */
#define SIB_DEVICE_ATOMIC_WRITE	BIT_ULL(40)
/* The "core clock" of CQE timestamps: ns of CLOCK_MONOTONIC, in kHz. */
#define SIB_CORE_CLOCK_KHZ	1000000

static inline struct sib_dev *to_sdev(struct ib_device *ib_dev)
{
	return container_of(ib_dev, struct sib_dev, ib_dev);
}

static inline struct sib_ucontext *to_suctx(struct ib_ucontext *ib_uc)
{
	return container_of(ib_uc, struct sib_ucontext, ib_uc);
}

static inline struct sib_pd *to_spd(struct ib_pd *ib_pd)
{
	return container_of(ib_pd, struct sib_pd, ib_pd);
}

#endif /* SIB_H */
