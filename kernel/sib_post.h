/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: posting for kernel consumers (sib_post.c), the post_send and
 * post_recv of ib_device_ops.
 */
#ifndef SIB_POST_H
#define SIB_POST_H

#include <rdma/ib_verbs.h>

int sib_post_send(struct ib_qp *ib_qp, const struct ib_send_wr *wr,
		  const struct ib_send_wr **bad_wr);
int sib_post_recv(struct ib_qp *ib_qp, const struct ib_recv_wr *wr,
		  const struct ib_recv_wr **bad_wr);

#endif /* SIB_POST_H */
