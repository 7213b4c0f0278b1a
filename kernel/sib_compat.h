/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: what differs between the kernels sib builds for, in one place.
 *
 * Every difference is found at build time by a probe,
 * kernel/compat/NAME.c, that defines SIB_HAVE_NAME when it compiles
 * against the kernel being built for (kernel/compat/compat.mk); this
 * header is the only user of SIB_HAVE_* and gives the rest of sib one
 * interface whatever the kernel. No LINUX_VERSION_CODE tests.
 */
#ifndef SIB_COMPAT_H
#define SIB_COMPAT_H

#include <linux/mm.h>
#include <linux/netdevice.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include <sib_probes.h>

#ifdef SIB_HAVE_NET_HOTDATA
#include <net/hotdata.h>
#endif

/*
 * SIB_CREATE_CQ_ARG is the type of ib_device_ops.create_cq()'s last
 * argument: the uverbs attribute bundle where the kernel passes one, else
 * the udata; NULL for a kernel CQ either way. sib_cq_udata() gives the
 * udata (or NULL).
 */
#ifdef SIB_HAVE_CREATE_CQ_ATTRS
#define SIB_CREATE_CQ_ARG	struct uverbs_attr_bundle *

static inline struct ib_udata *sib_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SIB_CREATE_CQ_ARG	struct ib_udata *

static inline struct ib_udata *sib_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* Set @flags in @vma->vm_flags (read-only where vm_flags_set() exists). */
static inline void sib_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
#ifdef SIB_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* The net.core.netdev_max_backlog sysctl. */
static inline int sib_netdev_max_backlog(void)
{
#ifdef SIB_HAVE_NET_HOTDATA
	return READ_ONCE(net_hotdata.max_backlog);
#else
	return READ_ONCE(netdev_max_backlog);
#endif
}

#endif /* SIB_COMPAT_H */
