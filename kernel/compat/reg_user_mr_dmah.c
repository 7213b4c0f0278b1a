// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_device_ops.reg_user_mr() takes a DMA handle (struct ib_dmah,
 * PCIe TPH steering hints; NULL unless the process allocated one with
 * the device's alloc_dmah()) before the udata (Linux 6.17).
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *sib_probe_reg_user_mr(struct ib_pd *pd, u64 start,
					   u64 length, u64 iova, int access,
					   struct ib_dmah *dmah,
					   struct ib_udata *udata)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static const struct ib_device_ops sib_probe_ops = {
	.reg_user_mr = sib_probe_reg_user_mr,
};

const struct ib_device_ops *sib_probe_reg_user_mr_dmah(void);
const struct ib_device_ops *sib_probe_reg_user_mr_dmah(void)
{
	return &sib_probe_ops;
}
