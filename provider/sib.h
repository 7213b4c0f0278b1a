/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: rdma-core provider for the rdma_sib soft RoCEv2 device.
 *
 * Object layout shared by the provider's source files. Each sib object
 * embeds the libibverbs object it extends and converts back with a to_*()
 * helper. Data-path files (sib_cq.c, sib_qp.c, sib_srq.c) add their objects
 * here and their ops in sib_ctx_ops (sib.c).
 */
#ifndef SIB_H
#define SIB_H

#include <stdint.h>

#include "sib_driver.h"
#include <rdma_user_sib.h>

struct sib_device {
	struct verbs_device ibv_dev;
	uint32_t abi_version;		/* kernel uverbs ABI, from sysfs_dev */
};

struct sib_context {
	struct verbs_context ibv_ctx;
	uint32_t caps;			/* enum sib_ucontext_caps */
	uint32_t max_inline;		/* inline bytes per send WQE */
};

struct sib_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
};

/* Driver udata carried by the core commands. */
SIB_DECLARE_DRV_CMD(sib_cmd_get_context, ibv_get_context, sib_empty,
		    ib_uverbs_get_context_resp, sib_alloc_ucontext_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_alloc_pd, ibv_alloc_pd, sib_empty,
		    ib_uverbs_alloc_pd_resp, sib_alloc_pd_resp);

static inline struct sib_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct sib_device, ibv_dev.device);
}

static inline struct sib_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sib_context, ibv_ctx.context);
}

static inline struct sib_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct sib_pd, ibv_pd);
}

#endif /* SIB_H */
