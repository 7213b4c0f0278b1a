// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_device_ops.create_cq() takes the uverbs attribute bundle
 * (NULL for a kernel CQ) instead of the udata (Linux 6.11).
 */
#include <rdma/ib_verbs.h>

static int sib_probe_create_cq(struct ib_cq *ib_cq,
			       const struct ib_cq_init_attr *attr,
			       struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static const struct ib_device_ops sib_probe_ops = {
	.create_cq = sib_probe_create_cq,
};

const struct ib_device_ops *sib_probe_create_cq_attrs(void);
const struct ib_device_ops *sib_probe_create_cq_attrs(void)
{
	return &sib_probe_ops;
}
