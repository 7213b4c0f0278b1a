/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: device, port, context and PD verbs, and the ib_device_ops table
 * (sib_verbs.c), of the verbs layer.
 */
#ifndef SIB_VERBS_H
#define SIB_VERBS_H

#include <rdma/ib_verbs.h>

struct sib_dev;

extern const struct ib_device_ops sib_dev_ops;
bool sib_port_is_active(struct sib_dev *sdev);
enum ib_mtu sib_active_mtu(struct sib_dev *sdev);

#endif /* SIB_VERBS_H */
