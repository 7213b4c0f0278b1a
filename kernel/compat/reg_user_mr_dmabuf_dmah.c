// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_device_ops.reg_user_mr_dmabuf() takes a DMA handle before
 * the uverbs attribute bundle (Linux 6.17, with reg_user_mr()'s).
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *sib_probe_reg_dmabuf(struct ib_pd *pd, u64 offset,
					  u64 length, u64 iova, int fd,
					  int access, struct ib_dmah *dmah,
					  struct uverbs_attr_bundle *attrs)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static const struct ib_device_ops sib_probe_ops = {
	.reg_user_mr_dmabuf = sib_probe_reg_dmabuf,
};

const struct ib_device_ops *sib_probe_reg_user_mr_dmabuf_dmah(void);
const struct ib_device_ops *sib_probe_reg_user_mr_dmabuf_dmah(void)
{
	return &sib_probe_ops;
}
