// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's memory windows (kernel/sib_mw.c), on sib0 over lo: type 1 and
 * type 2 (bind, access inside and outside, the rights a window grants,
 * invalidation locally and by SEND_WITH_INV, a type-2 window answering
 * only its QP, zero-based windows bound with the ibv_wr_* API). Memory
 * regions are sib_mr's.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(mw, BUFSZ);

/* ---- memory windows ------------------------------------------------------ */

/* One RDMA op on QP 0 of @p; returns its completion status. */
static int rdma_status(struct pair *p, enum ibv_wr_opcode op, struct buf *l,
		       uint32_t len, uint64_t raddr, uint32_t rkey)
{
	struct ibv_sge s = mk_sge(l, 0, len);
	struct ibv_wc wc;

	int ret;

	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD)
		ret = post_atomic(p->qp[0], op, 77, &s, IBV_SEND_SIGNALED,
				  raddr, rkey, 1, 2);
	else
		ret = post_op(p->qp[0], op, 77, &s, 1, IBV_SEND_SIGNALED, raddr,
			      rkey);
	if (ret)
		return -1;
	if (poll_n(p->scq[0], &wc, 1, WAIT_MS) != 1)
		return -2;
	return wc.status;
}

#define WIN_OFF	8192
#define WIN_LEN	8192

TEST_F(mw, mw_type1)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	struct ibv_mw_bind bind = {
		.wr_id = 9, .send_flags = IBV_SEND_SIGNALED,
		.bind_info = {
			.mr = self->r.mr, .addr = buf_addr(&self->r, WIN_OFF),
			.length = WIN_LEN,
			.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
					   IBV_ACCESS_REMOTE_READ,
		},
	};
	uint64_t win = buf_addr(&self->r, WIN_OFF);
	struct pair p;
	uint32_t old;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	old = mw->rkey;
	/* Bound through QP 1's send queue; usable by any QP of the PD. */
	ASSERT_EQ(0, ibv_bind_mw(p.qp[1], mw, &bind));
	expect_wc("bind", p.scq[1], 9, IBV_WC_SUCCESS, IBV_WC_BIND_MW,
		  p.qp[1]->qp_num, ANY, NULL);
	EXPECT_EQ(old >> 8, mw->rkey >> 8);
	EXPECT_NE(old, mw->rkey);

	fill_pattern(self->l.p, WIN_LEN, 3);
	memset(self->r.p, 0xee, 3 * WIN_LEN);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l,
					      WIN_LEN, win, mw->rkey));
	EXPECT_SAME(self->r.p + WIN_OFF, self->l.p, WIN_LEN, "through window");
	EXPECT_UNTOUCHED(self->r.p, WIN_OFF, 0xee, "before window");
	EXPECT_UNTOUCHED(self->r.p + WIN_OFF + WIN_LEN, WIN_LEN, 0xee,
			 "after window");
	memset(self->l.p, 0, WIN_LEN);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_READ, &self->l,
					      100, win + WIN_LEN - 100,
					      mw->rkey));
	EXPECT_SAME(self->l.p, self->r.p + WIN_OFF + WIN_LEN - 100, 100, "read");
	/* The window grants no atomics. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, &self->l, 8, win,
			      mw->rkey));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* One byte outside, at either end. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 2,
			      win + WIN_LEN - 1, mw->rkey));
	ASSERT_EQ(0, pair_reconnect(&p));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_READ, &self->l, 2, win - 1,
			      mw->rkey));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* The old rkey is stale. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 2, win, old));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* A type-1 window cannot be invalidated (o10-37.2.26). */
	do {
		struct ibv_send_wr inv = { .wr_id = 10, .opcode = IBV_WR_LOCAL_INV,
					   .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = mw->rkey };
		struct ibv_wc wc;

		ASSERT_EQ(0, post_send_wr(p.qp[1], &inv));
		ASSERT_EQ(1, poll_n(p.scq[1], &wc, 1, WAIT_MS));
		EXPECT_NE(IBV_WC_SUCCESS, wc.status);
		TH_LOG("LOCAL_INV of a type-1 window: %s", wcs(wc.status));
		ASSERT_EQ(0, pair_reconnect(&p));
	} while (0);
	/* A zero-length bind unbinds it: the key no longer works. */
	old = mw->rkey;
	bind.bind_info.length = 0;
	bind.wr_id = 11;
	ASSERT_EQ(0, ibv_bind_mw(p.qp[0], mw, &bind));
	expect_wc("unbind", p.scq[0], 11, IBV_WC_SUCCESS, IBV_WC_BIND_MW,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 8, win, mw->rkey));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* Bind a type-2 window with a BIND_MW WQE on @qp; returns the new rkey. */
static uint32_t bind2(struct __test_metadata *_metadata, struct ibv_qp *qp,
		      struct ibv_cq *cq, struct ibv_mw *mw, struct buf *b,
		      int access, enum ibv_wc_status want)
{
	struct ibv_send_wr wr = { .wr_id = 0xb1d, .opcode = IBV_WR_BIND_MW,
				  .send_flags = IBV_SEND_SIGNALED };
	uint32_t rkey = ibv_inc_rkey(mw->rkey);

	wr.bind_mw.mw = mw;
	wr.bind_mw.rkey = rkey;
	wr.bind_mw.bind_info.mr = b->mr;
	wr.bind_mw.bind_info.addr = buf_addr(b, WIN_OFF);
	wr.bind_mw.bind_info.length = WIN_LEN;
	wr.bind_mw.bind_info.mw_access_flags = access;
	ASSERT_EQ(0, post_send_wr(qp, &wr)) TH_LOG("post BIND_MW");
	expect_wc("bind", cq, 0xb1d, want, want ? ANY : IBV_WC_BIND_MW,
		  qp->qp_num, ANY, NULL);
	if (want == IBV_WC_SUCCESS)
		mw->rkey = rkey;
	return rkey;
}

TEST_F(mw, mw_type2)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint64_t win = buf_addr(&self->r, WIN_OFF);
	const int acc = IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ |
			IBV_ACCESS_REMOTE_ATOMIC;
	struct pair p;
	uint32_t rkey;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	/* Bound by the responder QP, which is the one that may use it. */
	rkey = bind2(_metadata, p.qp[1], p.scq[1], mw, &self->r, acc,
		     IBV_WC_SUCCESS);
	fill_pattern(self->l.p, 4096, 8);
	memset(self->r.p, 0xee, 3 * WIN_LEN);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l,
					      4096, win + 100, rkey));
	EXPECT_SAME(self->r.p + WIN_OFF + 100, self->l.p, 4096, "written");
	EXPECT_UNTOUCHED(self->r.p, WIN_OFF + 100, 0xee, "before");
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_READ, &self->l,
					      WIN_LEN, win, rkey));
	EXPECT_SAME(self->l.p, self->r.p + WIN_OFF, WIN_LEN, "read");
	EXPECT_EQ(IBV_WC_SUCCESS,
		  rdma_status(&p, IBV_WR_ATOMIC_FETCH_AND_ADD, &self->l, 8,
			      win + WIN_LEN - 8, rkey));
	/* Outside: REM_ACCESS_ERR. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 8,
			      win + WIN_LEN - 4, rkey));
	EXPECT_STATE_SOON(p.qp[0], IBV_QPS_ERR);
	ASSERT_EQ(0, pair_reconnect(&p));
	/* Still bound after the QPs were reset: works again. */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l,
					      8, win, rkey));
	/* A bound type-2 window cannot be bound again. */
	bind2(_metadata, p.qp[1], p.scq[1], mw, &self->r, acc,
	      IBV_WC_MW_BIND_ERR);
	ASSERT_EQ(0, pair_reconnect(&p));
	/* LOCAL_INV by its QP: then REM_ACCESS_ERR. */
	do {
		struct ibv_send_wr inv = { .wr_id = 12, .opcode = IBV_WR_LOCAL_INV,
					   .send_flags = IBV_SEND_SIGNALED,
					   .invalidate_rkey = rkey };

		ASSERT_EQ(0, post_send_wr(p.qp[1], &inv));
		expect_wc("local inv", p.scq[1], 12, IBV_WC_SUCCESS,
			  IBV_WC_LOCAL_INV, p.qp[1]->qp_num, ANY, NULL);
	} while (0);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 8, win, rkey));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* Bound by QP 0, it does not answer requests arriving at QP 1. */
	rkey = bind2(_metadata, p.qp[0], p.scq[0], mw, &self->r, acc,
		     IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_READ, &self->l, 8, win, rkey));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* SEND_WITH_INV invalidates the responder's type-2 window. */
TEST_F(mw, mw_send_with_inv)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	uint64_t win = buf_addr(&self->r, WIN_OFF);
	struct ibv_sge s = mk_sge(&self->l, 0, 100);
	struct ibv_sge rs = mk_sge(&self->r, 0, 200);
	struct ibv_send_wr wr = { .wr_id = 5, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED };
	struct ibv_wc wc;
	struct pair p;
	uint32_t rkey;

	ASSERT_NE(NULL, mw);
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	rkey = bind2(_metadata, p.qp[1], p.scq[1], mw, &self->r,
		     IBV_ACCESS_REMOTE_WRITE, IBV_WC_SUCCESS);
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l,
					      8, win, rkey));
	fill_pattern(self->l.p, 100, 4);
	wr.invalidate_rkey = rkey;
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 6, &rs, 1));
	ASSERT_EQ(0, post_send_wr(p.qp[0], &wr));
	expect_wc("send inv", p.scq[0], 5, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv inv", p.rcq[1], 6, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 100, &wc);
	EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_INV);
	EXPECT_FALSE(wc.wc_flags & IBV_WC_WITH_IMM);
	EXPECT_EQ(rkey, wc.invalidated_rkey);
	EXPECT_SAME(self->r.p, self->l.p, 100, "data");
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l, 8, win, rkey));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

/* A zero-based type-2 window, bound with the ibv_wr_* API. */
TEST_F(mw, mw_zero_based_wr_api)
{
	struct ibv_mw *mw = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	struct ibv_mw_bind_info bi = {
		.mr = self->r.mr, .addr = buf_addr(&self->r, WIN_OFF),
		.length = WIN_LEN,
		.mw_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_ZERO_BASED,
	};
	struct pair_opts o;
	struct pair p;
	struct ibv_qp_ex *qx;
	uint32_t rkey;

	ASSERT_NE(NULL, mw);
	pair_default_opts(&o);
	o.send_ops[0] = o.send_ops[1] = PAIR_QPX_OPS;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	qx = ibv_qp_to_qp_ex(p.qp[1]);
	ASSERT_NE(NULL, qx);
	rkey = ibv_inc_rkey(mw->rkey);
	ibv_wr_start(qx);
	qx->wr_id = 0x77;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_bind_mw(qx, mw, rkey, &bi);
	ASSERT_EQ(0, ibv_wr_complete(qx));
	expect_wc("bind", p.scq[1], 0x77, IBV_WC_SUCCESS, IBV_WC_BIND_MW,
		  p.qp[1]->qp_num, ANY, NULL);
	fill_pattern(self->l.p, 300, 9);
	memset(self->r.p, 0xee, 3 * WIN_LEN);
	/* Address 100 of the window is MR byte WIN_OFF + 100. */
	EXPECT_EQ(IBV_WC_SUCCESS, rdma_status(&p, IBV_WR_RDMA_WRITE, &self->l,
					      300, 100, rkey));
	EXPECT_SAME(self->r.p + WIN_OFF + 100, self->l.p, 300, "zero based");
	EXPECT_UNTOUCHED(self->r.p, WIN_OFF + 100, 0xee, "before");
	EXPECT_UNTOUCHED(self->r.p + WIN_OFF + 400, 100, 0xee, "after");
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  rdma_status(&p, IBV_WR_RDMA_READ, &self->l, 8, WIN_LEN - 4,
			      rkey));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
}

SIB_HARNESS_MAIN
