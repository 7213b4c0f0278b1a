/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: memory regions and memory windows (placeholder: being written).
 */
#ifndef SIB_MR_H
#define SIB_MR_H

struct sib_mem_table {
	int unused;
};

static inline void sib_mem_table_init(struct sib_mem_table *t) { }
static inline void sib_mem_table_destroy(struct sib_mem_table *t) { }

#define SIB_MR_DEV_OPS

#endif /* SIB_MR_H */
