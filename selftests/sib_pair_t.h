/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Completion checks for sib's data-path selftests. Include after
 * kselftest_harness.h: these use the harness' ASSERT macros, which need
 * the test's _metadata (a failed ASSERT jumps back into the harness).
 */
#ifndef SIB_PAIR_T_H
#define SIB_PAIR_T_H

#include "sib_harness.h"
#include "sib_pair.h"

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		 IBV_ACCESS_MW_BIND)
#define ANY	(-1L)	/* do not check this CQE field */

/*
 * Wait for the next completion on @cq and check it: @wr_id, @status,
 * @opcode (ANY: not checked; IBTA leaves the opcode of an error
 * completion undefined, so pass ANY then), @qpn, @byte_len (ANY).
 */
static inline void __expect_wc(struct __test_metadata *_metadata,
			       const char *what, struct ibv_cq *cq,
			       uint64_t wr_id, enum ibv_wc_status status,
			       long opcode, uint32_t qpn, long byte_len,
			       struct ibv_wc *out)
{
	struct ibv_wc wc;
	int n = poll_n(cq, &wc, 1, WAIT_MS);

	ASSERT_EQ(1, n) TH_LOG("%s: no completion within %d ms (wanted wr_id %#lx, %s)",
			       what, WAIT_MS, (unsigned long)wr_id, wcs(status));
	EXPECT_EQ(status, wc.status) TH_LOG("%s: status %s, wanted %s (wr_id %#lx)",
					    what, wcs(wc.status), wcs(status),
					    (unsigned long)wc.wr_id);
	EXPECT_EQ(wr_id, wc.wr_id) TH_LOG("%s: wr_id", what);
	if (opcode != ANY)
		EXPECT_EQ(opcode, (long)wc.opcode) TH_LOG("%s: opcode", what);
	EXPECT_EQ(qpn, wc.qp_num) TH_LOG("%s: qp_num", what);
	if (byte_len != ANY && status == IBV_WC_SUCCESS)
		EXPECT_EQ(byte_len, (long)wc.byte_len) TH_LOG("%s: byte_len", what);
	if (out)
		*out = wc;
}

#define expect_wc(what, cq, wr_id, status, opcode, qpn, byte_len, out) \
	__expect_wc(_metadata, what, cq, wr_id, status, opcode, qpn, byte_len, out)

/* Data checks that say where the first difference is. */
#define EXPECT_SAME(a, b, len, what) do { \
	long __d = first_diff(a, b, len); \
	EXPECT_EQ(-1, __d) TH_LOG("%s: first difference at byte %ld of %zu", \
				  what, __d, (size_t)(len)); \
} while (0)

#define EXPECT_UNTOUCHED(p, len, c, what) do { \
	long __d = first_not(p, len, c); \
	EXPECT_EQ(-1, __d) TH_LOG("%s: byte %ld of %zu overwritten", \
				  what, __d, (size_t)(len)); \
} while (0)

#define EXPECT_STATE(qp, s) do { \
	int __s = qp_state(qp); \
	EXPECT_EQ((int)(s), __s) TH_LOG("QP %#x in %s, wanted %s", (qp)->qp_num, \
					qps_str(__s), qps_str(s)); \
} while (0)

/* The engines move a QP to ERR asynchronously: allow them a moment. */
#define EXPECT_STATE_SOON(qp, s) do { \
	qp_wait_state(qp, s, 2000); \
	EXPECT_STATE(qp, s); \
} while (0)

/*
 * A signaled SEND of the first 32 bytes of @l on QP 0 of @p (with @flags
 * too, e.g. IBV_SEND_SOLICITED), and its send completion checked; the
 * receive is the caller's.
 */
static inline void send_one(struct __test_metadata *_metadata, struct pair *p,
			    struct buf *l, uint64_t id, unsigned int flags)
{
	struct ibv_sge s = mk_sge(l, 0, 32);

	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_SEND, id, &s, 1,
			     IBV_SEND_SIGNALED | flags, 0, 0));
	expect_wc("send", p->scq[0], id, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p->qp[0]->qp_num, ANY, NULL);
}

/*
 * SIB_LO_FIXTURE(name, len): the fixture of the programs whose tests make
 * their own QPs on sib0 over lo: self->ctx (sib_lo_setup()) and its GID
 * index self->gid, a PD self->pd, and two buffers self->l and self->r of
 * @len bytes on it, registered with ACC_ALL. The device is removed after
 * each test. One line at the top of a program: SIB_LO_FIXTURE(cq, BUFSZ);
 */
#define SIB_LO_FIXTURE(name, len)					\
FIXTURE(name) {								\
	struct ibv_context *ctx;					\
	int gid;							\
	struct ibv_pd *pd;						\
	struct buf l, r;						\
};									\
									\
FIXTURE_SETUP(name)							\
{									\
	self->ctx = sib_lo_setup(&self->gid);				\
	ASSERT_NE(NULL, self->ctx);					\
	self->pd = ibv_alloc_pd(self->ctx);				\
	ASSERT_NE(NULL, self->pd);					\
	ASSERT_EQ(0, buf_new(&self->l, self->pd, (len), ACC_ALL));	\
	ASSERT_EQ(0, buf_new(&self->r, self->pd, (len), ACC_ALL));	\
}									\
									\
FIXTURE_TEARDOWN(name)							\
{									\
	buf_free(&self->l);						\
	buf_free(&self->r);						\
	if (self->pd)							\
		ibv_dealloc_pd(self->pd);				\
	sib_lo_teardown(self->ctx);					\
}

#endif /* SIB_PAIR_T_H */
