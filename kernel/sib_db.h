/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the doorbell file (sib_db.c), a user context's file whose write()
 * kicks one of its QPs: of the rings and doorbells layer.
 */
#ifndef SIB_DB_H
#define SIB_DB_H

struct file;
struct sib_ucontext;

int sib_db_open(struct sib_ucontext *uctx, struct file **filep);
void sib_db_close(struct sib_ucontext *uctx);

#endif /* SIB_DB_H */
