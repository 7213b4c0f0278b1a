/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Hostile-ring helpers shared by sib_ring and sib_fuzz: the legacy
 * doorbell command, a pseudo-random scribbler, and the rings of a QP, SRQ
 * or CQ as libsib mapped them (the provider's own objects, from
 * provider/sib.h: the selftests are built against this tree's libsib).
 */
#ifndef SIB_RINGS_H
#define SIB_RINGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <errno.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "../provider/sib.h"

/* The legacy POST_SEND (POST_RECV) command without WRs: sib's doorbell. */
static inline int uv_doorbell(struct ibv_qp *qp, bool recv)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_post_send cmd;
	} c = { };
	struct ib_uverbs_post_send_resp resp;

	c.hdr.command = recv ? IB_USER_VERBS_CMD_POST_RECV :
			       IB_USER_VERBS_CMD_POST_SEND;
	c.hdr.in_words = sizeof(c) / 4;
	c.hdr.out_words = sizeof(resp) / 4;
	c.cmd.response = (uintptr_t)&resp;
	c.cmd.qp_handle = qp->handle;
	c.cmd.wqe_size = recv ? sizeof(struct ib_uverbs_recv_wr) :
				sizeof(struct ib_uverbs_send_wr);
	return write(qp->context->cmd_fd, &c, sizeof(c)) == sizeof(c) ? 0 : errno;
}

/* Fill @len bytes at @p from the xorshift generator *@seed. */
static inline void scribble(uint8_t *p, size_t len, uint64_t *seed)
{
	for (size_t i = 0; i < len; i += 4) {
		uint32_t v;

		*seed ^= *seed << 13;
		*seed ^= *seed >> 7;
		*seed ^= *seed << 17;
		v = *seed;
		memcpy(p + i, &v, len - i < 4 ? len - i : 4);
	}
}

/* A mapped ring: header at buf, nslots slots of slot_size after it. */
struct uring {
	uint8_t *buf;		/* NULL: no such ring */
	size_t len;		/* bytes mapped */
	uint32_t nslots, slot_size;
};

static inline struct uring uring_of(const struct sib_ring *r)
{
	struct uring u = { r->buf, r->map_size, r->nslots, r->slot_size };

	return u;
}

static inline struct uring qp_sq_ring(struct ibv_qp *qp)
{
	return uring_of(&to_sqp(qp)->sq.ring);
}

static inline struct uring qp_rq_ring(struct ibv_qp *qp)
{
	return uring_of(&to_sqp(qp)->rq.ring);
}

static inline struct uring srq_ring(struct ibv_srq *srq)
{
	return uring_of(&to_ssrq(srq)->rq.ring);
}

static inline struct uring cq_ring(struct ibv_cq *cq)
{
	return uring_of(&to_scq(cq)->ring);
}

static inline struct sib_ring_hdr *uring_hdr(const struct uring *u)
{
	return (struct sib_ring_hdr *)u->buf;
}

static inline uint8_t *uring_slot(const struct uring *u, uint32_t idx)
{
	return u->buf + SIB_RING_HDR_SIZE +
	       (size_t)(idx & (u->nslots - 1)) * u->slot_size;
}

#endif /* SIB_RINGS_H */
