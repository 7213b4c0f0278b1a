/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the parent device of sib's devices in sysfs (sib_sysfs.c).
 */
#ifndef SIB_SYSFS_H
#define SIB_SYSFS_H

struct sib_dev;

int sib_parent_add(struct sib_dev *sdev);
void sib_parent_del(struct sib_dev *sdev);
void sib_sysfs_exit(void);

#endif /* SIB_SYSFS_H */
