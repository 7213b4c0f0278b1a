/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: flushing (sib_flush.c), of the engines: a QP in the error state
 * completes its WQEs with "flushed in error".
 */
#ifndef SIB_FLUSH_H
#define SIB_FLUSH_H

#include <linux/types.h>

struct sib_qp;

void sib_qp_flush(struct sib_qp *qp);
u8 sib_wr_to_wc_opcode(u8 wr_opcode);

#endif /* SIB_FLUSH_H */
