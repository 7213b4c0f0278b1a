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
 * alloc_ucontext: no driver request; the response tells the provider which
 * ABI the kernel speaks and which optional features it implements.
 */
enum sib_ucontext_caps {
	SIB_UCTX_CAP_NONE = 0,
};

struct sib_alloc_ucontext_resp {
	__u32 abi_version;	/* SIB_UVERBS_ABI_VERSION */
	__u32 caps;		/* enum sib_ucontext_caps */
	__u32 max_inline;	/* bytes of inline data per send WQE */
	__u32 reserved;
};

/* alloc_pd: the PD number, for diagnostics. */
struct sib_alloc_pd_resp {
	__u32 pdn;
	__u32 reserved;
};

#endif /* RDMA_USER_SIB_H */
