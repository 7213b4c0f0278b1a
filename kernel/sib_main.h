/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the module and the devices' life cycle (sib_main.c), the layer of
 * module entry, link add and delete and netdev tracking.
 */
#ifndef SIB_MAIN_H
#define SIB_MAIN_H

struct ib_device;
struct workqueue_struct;

/* The workqueue that runs every QP's engines (sib_main.c). */
extern struct workqueue_struct *sib_wq;
extern struct workqueue_struct *sib_async_wq;

void sib_dealloc_driver(struct ib_device *ib_dev);

#endif /* SIB_MAIN_H */
