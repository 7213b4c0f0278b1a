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
#include "sib_mr.h"

#define SIB_DRV_VERSION		"0.1"
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
#define SIB_MAX_MSG_SZ		0x80000000u	/* 2 GiB, the IBTA maximum */

/*
 * RoCEv2 headroom subtracted from the netdev MTU to get the IB path MTU:
 * IPv6 (40) + UDP (8) + BTH (12) + the largest extended header set (28)
 * + ICRC (4), rounded up. 1500 gives IB_MTU_1024, 9000 gives IB_MTU_4096.
 */
#define SIB_ROCE_HDR_ROOM	96

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
};

/**
 * struct sib_ucontext - a user process's context on a sib device
 * @ib_uc: the ib_core object; must stay first
 */
struct sib_ucontext {
	struct ib_ucontext ib_uc;
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

static inline struct sib_dev *to_sdev(struct ib_device *ib_dev)
{
	return container_of(ib_dev, struct sib_dev, ib_dev);
}

static inline struct sib_pd *to_spd(struct ib_pd *ib_pd)
{
	return container_of(ib_pd, struct sib_pd, ib_pd);
}

/* sib_verbs.c */
extern const struct ib_device_ops sib_dev_ops;
bool sib_port_is_active(struct sib_dev *sdev);

/* sib_main.c */
void sib_dealloc_driver(struct ib_device *ib_dev);

#endif /* SIB_H */
