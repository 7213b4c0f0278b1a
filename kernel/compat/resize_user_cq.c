// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_device_ops.resize_user_cq(), with an unsigned count, in
 * place of resize_cq() (after 6.12, by 7.2): only a process' CQ can be
 * resized (the kernel's ib_resize_cq() went away).
 */
#include <rdma/ib_verbs.h>

static int sib_probe_resize(struct ib_cq *cq, unsigned int cqe,
			    struct ib_udata *udata)
{
	return 0;
}

static const struct ib_device_ops sib_probe_ops = {
	.resize_user_cq = sib_probe_resize,
};

const struct ib_device_ops *sib_probe_resize_user_cq(void);
const struct ib_device_ops *sib_probe_resize_user_cq(void)
{
	return &sib_probe_ops;
}
