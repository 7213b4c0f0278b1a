// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_device_ops.reg_user_mr_dmabuf() takes the uverbs attribute
 * bundle instead of the udata (Linux 6.10), and no DMA handle yet.
 */
#include <rdma/ib_verbs.h>

static struct ib_mr *sib_probe_reg_dmabuf(struct ib_pd *pd, u64 offset,
					  u64 length, u64 iova, int fd,
					  int access,
					  struct uverbs_attr_bundle *attrs)
{
	return ERR_PTR(-EOPNOTSUPP);
}

static const struct ib_device_ops sib_probe_ops = {
	.reg_user_mr_dmabuf = sib_probe_reg_dmabuf,
};

const struct ib_device_ops *sib_probe_reg_user_mr_dmabuf_attrs(void);
const struct ib_device_ops *sib_probe_reg_user_mr_dmabuf_attrs(void)
{
	return &sib_probe_ops;
}
