// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's RC data path, byte for byte, on sib0 over lo: two RC QPs of this
 * process connected to each other (GID ::ffff:127.0.0.1, path MTU 1024
 * unless a test says otherwise). Every opcode at sizes 0, 1, MTU-1, MTU,
 * MTU+1, 1 MiB and max_msg_sz; several SGEs at odd offsets on both sides;
 * inline data from unregistered memory; unsignaled WQEs; PSN wrap; other
 * path MTUs; the fence (a fenced WRITE or SEND after a READ or an atomic);
 * a stress run of 4 QP pairs with random opcodes and sizes; 128
 * outstanding READs and atomics. Each check looks at the data, the bytes
 * around it (which must be untouched) and every CQE field the IBTA
 * defines.
 *
 * QP 0 is the requester ("A"), QP 1 the responder ("B"); self->l is A's
 * memory, self->r is B's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdarg.h>
#include <string.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"
#include "sib_stress_t.h"
#include "sib_trace.h"

#define BUFSZ	((2u << 20) + 8192)
#define GUARD	64
#define MTU	1024u

static const uint32_t sizes[] = { 0, 1, MTU - 1, MTU, MTU + 1, 3 * MTU + 7,
				  1u << 20 };

FIXTURE(rc) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf l, r;
	uint32_t qpn[2];
};

FIXTURE_SETUP(rc)
{
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, buf_new(&self->l, self->p.pd, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, buf_new(&self->r, self->p.pd, BUFSZ, ACC_ALL));
	self->qpn[0] = self->p.qp[0]->qp_num;
	self->qpn[1] = self->p.qp[1]->qp_num;
}

FIXTURE_TEARDOWN(rc)
{
	buf_free(&self->l);
	buf_free(&self->r);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/*
 * A SEND (or SEND_WITH_IMM) of @len bytes from @src (in @sbuf at @soff)
 * into a receive buffer of @len + GUARD bytes at @rbuf/@roff; checks both
 * CQEs and the bytes.
 */
static void do_send(struct __test_metadata *_metadata, FIXTURE_DATA(rc) *self,
		    struct pair *p, struct buf *sbuf, size_t soff,
		    struct buf *rbuf, size_t roff, uint32_t len,
		    enum ibv_wr_opcode op, uint32_t seed)
{
	struct ibv_sge s = mk_sge(sbuf, soff, len);
	struct ibv_sge rs = mk_sge(rbuf, roff, len + GUARD);
	struct ibv_send_wr wr = {
		.wr_id = 0x5000 + seed, .sg_list = &s, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xc0de0000 + seed),
	};
	struct ibv_wc wc;

	fill_pattern(sbuf->p + soff, len, seed);
	memset(rbuf->p + roff, 0xee, len + GUARD);
	ASSERT_EQ(0, post_recv_sges(p->qp[1], 0x7000 + seed, &rs, 1));
	ASSERT_EQ(0, post_send_wr(p->qp[0], &wr));
	expect_wc("send", p->scq[0], wr.wr_id, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p->qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", p->rcq[1], 0x7000 + seed, IBV_WC_SUCCESS,
		  IBV_WC_RECV, p->qp[1]->qp_num, len, &wc);
	if (op == IBV_WR_SEND_WITH_IMM) {
		EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(htonl(0xc0de0000 + seed), wc.imm_data);
	} else {
		EXPECT_FALSE(wc.wc_flags & (IBV_WC_WITH_IMM | IBV_WC_WITH_INV));
	}
	EXPECT_SAME(rbuf->p + roff, sbuf->p + soff, len, "received data");
	EXPECT_UNTOUCHED(rbuf->p + roff + len, GUARD, 0xee, "after message");
}

/* An RDMA WRITE (or WRITE_WITH_IMM) of @len bytes at an odd remote offset. */
static void do_write(struct __test_metadata *_metadata, struct pair *p,
		     struct buf *lb, struct buf *rb, uint32_t len,
		     enum ibv_wr_opcode op, uint32_t seed)
{
	size_t loff = 1, roff = GUARD + 3;
	struct ibv_sge s = mk_sge(lb, loff, len);
	struct ibv_send_wr wr = {
		.wr_id = 0x6000 + seed, .sg_list = &s, .num_sge = 1,
		.opcode = op, .send_flags = IBV_SEND_SIGNALED,
		.imm_data = htonl(0xbeef0000 + seed),
	};
	struct ibv_wc wc;
	uint8_t rq_canary[32];
	struct ibv_sge rs = mk_sge(rb, rb->len - sizeof(rq_canary),
				   sizeof(rq_canary));

	wr.wr.rdma.remote_addr = buf_addr(rb, roff);
	wr.wr.rdma.rkey = rb->mr->rkey;
	fill_pattern(lb->p + loff, len, seed);
	memset(rb->p, 0xee, roff + len + GUARD);
	memset(rb->p + rb->len - sizeof(rq_canary), 0x5a, sizeof(rq_canary));
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM)
		ASSERT_EQ(0, post_recv_sges(p->qp[1], 0x8000 + seed, &rs, 1));
	ASSERT_EQ(0, post_send_wr(p->qp[0], &wr));
	expect_wc("write", p->scq[0], wr.wr_id, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, p->qp[0]->qp_num, ANY, NULL);
	if (op == IBV_WR_RDMA_WRITE_WITH_IMM) {
		expect_wc("recv imm", p->rcq[1], 0x8000 + seed, IBV_WC_SUCCESS,
			  IBV_WC_RECV_RDMA_WITH_IMM, p->qp[1]->qp_num, len,
			  &wc);
		EXPECT_TRUE(wc.wc_flags & IBV_WC_WITH_IMM);
		EXPECT_EQ(htonl(0xbeef0000 + seed), wc.imm_data);
		/* The receive WQE's buffer is not written to. */
		EXPECT_UNTOUCHED(rb->p + rb->len - sizeof(rq_canary),
				 sizeof(rq_canary), 0x5a, "recv buffer");
	} else {
		EXPECT_TRUE(cq_quiet(p->rcq[1], 0));
	}
	EXPECT_SAME(rb->p + roff, lb->p + loff, len, "written data");
	EXPECT_UNTOUCHED(rb->p, roff, 0xee, "before target");
	EXPECT_UNTOUCHED(rb->p + roff + len, GUARD, 0xee, "after target");
}

static void do_read(struct __test_metadata *_metadata, struct pair *p,
		    struct buf *lb, struct buf *rb, uint32_t len, uint32_t seed)
{
	size_t loff = GUARD + 5, roff = 7;
	struct ibv_sge s = mk_sge(lb, loff, len);

	fill_pattern(rb->p + roff, len, seed);
	memset(lb->p, 0xee, loff + len + GUARD);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_READ, 0x9000 + seed, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(rb, roff),
			     rb->mr->rkey));
	expect_wc("read", p->scq[0], 0x9000 + seed, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_READ, p->qp[0]->qp_num, len, NULL);
	EXPECT_SAME(lb->p + loff, rb->p + roff, len, "read data");
	EXPECT_UNTOUCHED(lb->p, loff, 0xee, "before sink");
	EXPECT_UNTOUCHED(lb->p + loff + len, GUARD, 0xee, "after sink");
	EXPECT_TRUE(cq_quiet(p->rcq[1], 0));
}

TEST_F(rc, send_sizes)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		do_send(_metadata, self, &self->p, &self->l, 3, &self->r, 5,
			sizes[i], IBV_WR_SEND, i);
}

TEST_F(rc, send_with_imm_sizes)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		do_send(_metadata, self, &self->p, &self->l, 0, &self->r, 0,
			sizes[i], IBV_WR_SEND_WITH_IMM, 100 + i);
}

TEST_F(rc, write_sizes)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		do_write(_metadata, &self->p, &self->l, &self->r, sizes[i],
			 IBV_WR_RDMA_WRITE, i);
}

TEST_F(rc, write_with_imm_sizes)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		do_write(_metadata, &self->p, &self->l, &self->r, sizes[i],
			 IBV_WR_RDMA_WRITE_WITH_IMM, 200 + i);
}

TEST_F(rc, read_sizes)
{
	for (unsigned int i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++)
		do_read(_metadata, &self->p, &self->l, &self->r, sizes[i], i);
}

/*
 * Long messages: max_msg_sz (from query_port) for SEND, WRITE and READ,
 * and 1 MiB + 1 byte, the first size of more than 1024 packets.
 */
static uint32_t max_msg(struct __test_metadata *_metadata,
			FIXTURE_DATA(rc) *self, struct buf *a, struct buf *b)
{
	struct ibv_port_attr pa;
	uint32_t max;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	max = pa.max_msg_sz;
	EXPECT_EQ(16u << 20, max);
	/* 16 MiB takes about 0.2 s; allow for a slow machine. */
	if (sib_wait_ms < 15000)
		sib_wait_ms = 15000;
	ASSERT_EQ(0, buf_new(a, self->p.pd, max + 8192, ACC_ALL));
	ASSERT_EQ(0, buf_new(b, self->p.pd, max + 8192, ACC_ALL));
	return max;
}

TEST_F_TIMEOUT(rc, max_msg_sz_send, 60)
{
	struct buf a, b;
	uint32_t max = max_msg(_metadata, self, &a, &b);

	do_send(_metadata, self, &self->p, &a, 0, &b, 0, max, IBV_WR_SEND, 1);
}

TEST_F_TIMEOUT(rc, max_msg_sz_write, 60)
{
	struct buf a, b;
	uint32_t max = max_msg(_metadata, self, &a, &b);

	do_write(_metadata, &self->p, &a, &b, max, IBV_WR_RDMA_WRITE, 2);
}

TEST_F_TIMEOUT(rc, max_msg_sz_read, 60)
{
	struct buf a, b;
	uint32_t max = max_msg(_metadata, self, &a, &b);

	do_read(_metadata, &self->p, &a, &b, max, 3);
}

TEST_F_TIMEOUT(rc, message_of_1025_packets, 60)
{
	if (sib_wait_ms < 10000)
		sib_wait_ms = 10000;
	do_write(_metadata, &self->p, &self->l, &self->r, (1u << 20) + 1,
		 IBV_WR_RDMA_WRITE, 4);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	do_send(_metadata, self, &self->p, &self->l, 0, &self->r, 0,
		(1u << 20) + 1, IBV_WR_SEND, 5);
}

TEST_F(rc, atomics)
{
	uint64_t *mem = (uint64_t *)(self->r.p + 64);
	uint64_t *res = (uint64_t *)(self->l.p + 8);
	struct ibv_sge s = mk_sge(&self->l, 8, 8);
	uint64_t ra = buf_addr(&self->r, 64);
	uint32_t rkey = self->r.mr->rkey, q0 = self->qpn[0];

	memset(self->r.p, 0xee, 256);
	memset(self->l.p, 0xcc, 64);
	*mem = 0x1111222233334444ull;

	/* Compare matches: swapped, the original comes back. */
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 1,
				 &s, IBV_SEND_SIGNALED, ra, rkey,
				 0x1111222233334444ull, 0x5555666677778888ull));
	expect_wc("cas match", self->p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_COMP_SWAP, q0, ANY, NULL);
	EXPECT_EQ(0x1111222233334444ull, *res);
	EXPECT_EQ(0x5555666677778888ull, *mem);

	/* No match: memory unchanged, the current value comes back. */
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 2,
				 &s, IBV_SEND_SIGNALED, ra, rkey,
				 0x1111222233334444ull, 0x9999ull));
	expect_wc("cas no match", self->p.scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_COMP_SWAP, q0, ANY, NULL);
	EXPECT_EQ(0x5555666677778888ull, *res);
	EXPECT_EQ(0x5555666677778888ull, *mem);

	/* Fetch and add. */
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 3,
				 &s, IBV_SEND_SIGNALED, ra, rkey, 0x10, 0));
	expect_wc("fetch add", self->p.scq[0], 3, IBV_WC_SUCCESS,
		  IBV_WC_FETCH_ADD, q0, ANY, NULL);
	EXPECT_EQ(0x5555666677778888ull, *res);
	EXPECT_EQ(0x5555666677778898ull, *mem);

	/* 64-bit wrap-around. */
	*mem = ~0ull;
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 4,
				 &s, IBV_SEND_SIGNALED, ra, rkey, 3, 0));
	expect_wc("fetch add wrap", self->p.scq[0], 4, IBV_WC_SUCCESS,
		  IBV_WC_FETCH_ADD, q0, ANY, NULL);
	EXPECT_EQ(~0ull, *res);
	EXPECT_EQ(2ull, *mem);

	/* Only the 8 bytes were touched on either side. */
	EXPECT_UNTOUCHED(self->r.p, 64, 0xee, "before atomic target");
	EXPECT_UNTOUCHED(self->r.p + 72, 256 - 72, 0xee, "after atomic target");
	EXPECT_UNTOUCHED(self->l.p, 8, 0xcc, "before result");
	EXPECT_UNTOUCHED(self->l.p + 16, 48, 0xcc, "after result");
	EXPECT_TRUE(cq_quiet(self->p.rcq[1], 0));
}

/* ATOMIC WRITE of the 8 bytes at A's @loff to B's @roff, by ibv_post_send. */
static int post_atomic_write(struct pair *p, struct buf *l, uint32_t loff,
			     uint64_t raddr, uint32_t rkey, uint64_t wr_id)
{
	struct ibv_sge s = mk_sge(l, loff, 8);

	return post_op(p->qp[0], IBV_WR_ATOMIC_WRITE, wr_id, &s, 1,
		       IBV_SEND_SIGNALED, raddr, rkey);
}

/*
 * ATOMIC WRITE (IBA 1.5): 8 bytes land whole at an aligned address, and
 * nothing else moves; by ibv_post_send (the 8 bytes from an SGE) and by
 * ibv_wr_atomic_write (the 8 bytes given by pointer); after a 64 KiB
 * WRITE on the same QP, which must be in place when it completes.
 */
TEST_F(rc, atomic_write)
{
	static const uint8_t v[8] = { 1, 2, 3, 4, 0xfd, 0xfe, 0xff, 0x80 };
	uint64_t ra = buf_addr(&self->r, 64), val = 0x0123456789abcdefull;
	uint32_t rkey = self->r.mr->rkey, q0 = self->qpn[0];
	struct ibv_sge big = mk_sge(&self->l, 4096, 65536);
	struct pair_opts o;
	struct ibv_qp_ex *qx;
	struct pair p;

	memset(self->r.p, 0xee, 8192 + 65536);
	memset(self->l.p, 0xcc, 64);
	memcpy(self->l.p + 8, v, 8);
	ASSERT_EQ(0, post_atomic_write(&self->p, &self->l, 8, ra, rkey, 1));
	expect_wc("atomic write", self->p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_ATOMIC_WRITE, q0, ANY, NULL);
	EXPECT_SAME(self->r.p + 64, v, 8, "the 8 bytes");
	EXPECT_UNTOUCHED(self->r.p, 64, 0xee, "before the target");
	EXPECT_UNTOUCHED(self->r.p + 72, 256 - 72, 0xee, "after the target");
	EXPECT_UNTOUCHED(self->l.p, 8, 0xcc, "A's memory before the value");
	EXPECT_TRUE(cq_quiet(self->p.rcq[1], 0));

	/* A WRITE, then an ATOMIC WRITE that says the data is there. */
	fill_pattern(self->l.p + 4096, 65536, 21);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 2, &big, 1, 0,
			     buf_addr(&self->r, 8192), rkey));
	ASSERT_EQ(0, post_atomic_write(&self->p, &self->l, 8, ra + 8, rkey, 3));
	expect_wc("atomic write after a write", self->p.scq[0], 3,
		  IBV_WC_SUCCESS, IBV_WC_ATOMIC_WRITE, q0, ANY, NULL);
	EXPECT_SAME(self->r.p + 72, v, 8, "the flag");
	EXPECT_SAME(self->r.p + 8192, self->l.p + 4096, 65536, "the data");

	/* The extended API: the value comes by pointer, in the WQE. */
	pair_default_opts(&o);
	o.send_ops[0] = PAIR_QPX_OPS | IBV_QP_EX_WITH_ATOMIC_WRITE;
	o.send_ops[1] = o.send_ops[0];
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	qx = ibv_qp_to_qp_ex(p.qp[0]);
	ASSERT_NE(NULL, qx);
	ibv_wr_start(qx);
	qx->wr_id = 4;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_atomic_write(qx, rkey, ra + 16, &val);
	val = 0;	/* the WQE holds its copy */
	ASSERT_EQ(0, ibv_wr_complete(qx));
	expect_wc("ibv_wr_atomic_write", p.scq[0], 4, IBV_WC_SUCCESS,
		  IBV_WC_ATOMIC_WRITE, p.qp[0]->qp_num, ANY, NULL);
	val = 0x0123456789abcdefull;
	EXPECT_SAME(self->r.p + 80, &val, 8, "the value by pointer");
	EXPECT_UNTOUCHED(self->r.p + 88, 256 - 88, 0xee, "after it");
	/* It carries no SGE. */
	ibv_wr_start(qx);
	ibv_wr_atomic_write(qx, rkey, ra + 16, &val);
	ibv_wr_set_sge(qx, self->l.mr->lkey, buf_addr(&self->l, 0), 8);
	EXPECT_EQ(EINVAL, ibv_wr_complete(qx));
	pair_destroy(&p);
}

/*
 * The errno of creating a UC QP on @p's PD and CQs that takes @send_ops
 * by ibv_wr_*(), or 0 if it was created (and is destroyed again).
 */
static int uc_qp_ex_errno(struct pair *p, struct ibv_context *ctx,
			  uint64_t send_ops)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_UC,
		.send_cq = p->scq[0], .recv_cq = p->rcq[0],
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = p->pd,
		.send_ops_flags = send_ops,
	};
	struct ibv_qp *qp;

	errno = 0;
	qp = ibv_create_qp_ex(ctx, &a);
	if (!qp)
		return errno;
	ibv_destroy_qp(qp);
	return 0;
}

/* The status an ATOMIC WRITE to @raddr/@rkey completes with; -1: none. */
static int atomic_write_status(struct pair *p, struct buf *l, uint64_t raddr,
			       uint32_t rkey)
{
	struct ibv_wc wc;

	if (post_atomic_write(p, l, 8, raddr, rkey, 9))
		return -1;
	if (poll_n(p->scq[0], &wc, 1, WAIT_MS) != 1)
		return -1;
	return wc.status;
}

/*
 * What ATOMIC WRITE refuses: an unaligned target (Invalid Request), an MR
 * or a QP without remote write rights, a length other than 8 or other than
 * one SGE (EINVAL at posting), a UC or UD QP (not an RC operation). The
 * target stays as it was each time.
 */
TEST_F(rc, atomic_write_errors)
{
	uint64_t ra = buf_addr(&self->r, 64);
	struct ibv_sge s2[2] = { mk_sge(&self->l, 8, 4), mk_sge(&self->l, 12, 4) };
	struct ibv_sge s4 = mk_sge(&self->l, 8, 4);
	struct pair_opts o;
	struct ibv_mr *ro;
	struct pair p;

	memset(self->r.p, 0xee, 256);
	fill_pattern(self->l.p, 64, 5);

	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR,
		  atomic_write_status(&self->p, &self->l, ra + 4,
				      self->r.mr->rkey));
	ASSERT_EQ(0, pair_reconnect(&self->p));

	ro = ibv_reg_mr(self->p.pd, self->r.p, 4096, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, ro);
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  atomic_write_status(&self->p, &self->l, ra, ro->rkey));
	ASSERT_EQ(0, ibv_dereg_mr(ro));
	ASSERT_EQ(0, pair_reconnect(&self->p));
	EXPECT_UNTOUCHED(self->r.p, 256, 0xee, "the target");

	EXPECT_EQ(EINVAL, post_op(self->p.qp[0], IBV_WR_ATOMIC_WRITE, 1, &s4,
				  1, 0, ra, self->r.mr->rkey));
	EXPECT_EQ(EINVAL, post_op(self->p.qp[0], IBV_WR_ATOMIC_WRITE, 1, s2,
				  2, 0, ra, self->r.mr->rkey));

	/* B's QP without remote write: Invalid Request. */
	pair_default_opts(&o);
	o.access[1] = IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR,
		  atomic_write_status(&p, &self->l, ra, self->r.mr->rkey));
	pair_destroy(&p);
	EXPECT_UNTOUCHED(self->r.p, 256, 0xee, "the target");

	/* Not on UC: neither created nor posted. */
	EXPECT_EQ(EOPNOTSUPP, uc_qp_ex_errno(&self->p, self->ctx,
					     IBV_QP_EX_WITH_ATOMIC_WRITE));
	pair_default_opts(&o);
	o.qp_type = IBV_QPT_UC;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	EXPECT_EQ(EINVAL, post_atomic_write(&p, &self->l, 8, ra,
					    self->r.mr->rkey, 1));
	pair_destroy(&p);
}

/* ---- FLUSH (IBA 1.5) ---------------------------------------------------- */

/* Bit 38 of device_cap_flags_ex: IB_UVERBS_DEVICE_FLUSH_GLOBAL. */
#define DEV_FLUSH_GLOBAL	(1ULL << 38)
#define DEV_FLUSH_PERSISTENT	(1ULL << 39)

#ifdef SIB_HAVE_WR_FLUSH
/* Post one signalled FLUSH on @qp; ibv_wr_complete()'s result. */
static int post_flush(struct ibv_qp *qp, uint64_t wr_id, uint32_t rkey,
		      uint64_t raddr, size_t len, uint8_t type, uint8_t level)
{
	struct ibv_qp_ex *qx = ibv_qp_to_qp_ex(qp);

	ibv_wr_start(qx);
	qx->wr_id = wr_id;
	qx->wr_flags = IBV_SEND_SIGNALED;
	ibv_wr_flush(qx, rkey, raddr, len, type, level);
	return ibv_wr_complete(qx);
}

/* The status a FLUSH completes with on QP 0 of @p; -1: none. */
static int flush_status(struct pair *p, uint32_t rkey, uint64_t raddr,
			size_t len, uint8_t type, uint8_t level)
{
	struct ibv_wc wc;

	if (post_flush(p->qp[0], 7, rkey, raddr, len, type, level))
		return -1;
	if (poll_n(p->scq[0], &wc, 1, WAIT_MS) != 1)
		return -1;
	return wc.status;
}

/*
 * A FLUSH pair: QP 0 posts ibv_wr_flush() and WRITEs, QP 1 grants
 * @qp_access on top of the usual remote rights.
 */
static int flush_pair(struct pair *p, struct ibv_context *ctx,
		      struct ibv_pd *pd, int gid, int qp_access)
{
	struct pair_opts o;

	pair_default_opts(&o);
	o.send_ops[0] = o.send_ops[1] = PAIR_QPX_OPS | IBV_QP_EX_WITH_FLUSH;
	o.access[1] |= qp_access;
	return pair_create(p, ctx, pd, gid, &o);
}

/*
 * An MR that a FLUSH may target, over B's buffer; NULL (the test skips)
 * where ib_core refuses the access (Linux before 6.2).
 */
static struct ibv_mr *flush_mr(struct buf *b, size_t len)
{
	return ibv_reg_mr(b->mr->pd, b->p, len, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_FLUSH_GLOBAL);
}
#endif

/*
 * FLUSH with placement type global: a 64 KiB WRITE, then a FLUSH of its
 * range, completes with IBV_WC_FLUSH once the data is in place; a FLUSH
 * of the whole MR ignores the range (any length, even 0 or more than the
 * MR); a FLUSH of an empty range succeeds too. The device advertises the
 * global type, not the persistent one (sib has no persistent memory).
 */
TEST_F(rc, flush)
{
#ifndef SIB_HAVE_WR_FLUSH
	SKIP(return, "this rdma-core has no ibv_wr_flush() (v45 and later)");
#else
	struct ibv_sge big = mk_sge(&self->l, 4096, 65536);
	uint64_t ra = buf_addr(&self->r, 8192);
	struct ibv_device_attr_ex ax;
	struct ibv_mr *fm;
	struct pair p;

	fm = flush_mr(&self->r, BUFSZ);
	if (!fm && errno == EINVAL)
		SKIP(return, "ib_core refuses IBV_ACCESS_FLUSH_GLOBAL (Linux < 6.2)");
	ASSERT_NE(NULL, fm);
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	EXPECT_TRUE(ax.device_cap_flags_ex & DEV_FLUSH_GLOBAL);
	EXPECT_FALSE(ax.device_cap_flags_ex & DEV_FLUSH_PERSISTENT);
	ASSERT_EQ(0, flush_pair(&p, self->ctx, self->p.pd, self->gid,
				IBV_ACCESS_FLUSH_GLOBAL));

	memset(self->r.p, 0xee, BUFSZ);
	fill_pattern(self->l.p + 4096, 65536, 31);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 1, &big, 1, 0, ra,
			     fm->rkey));
	ASSERT_EQ(0, post_flush(p.qp[0], 2, fm->rkey, ra, 65536,
				IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE));
	expect_wc("flush of a range", p.scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_FLUSH, p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 8192, self->l.p + 4096, 65536, "the data");
	EXPECT_UNTOUCHED(self->r.p, 8192, 0xee, "before it");

	ASSERT_EQ(0, post_flush(p.qp[0], 3, fm->rkey, 0, 0, IBV_FLUSH_GLOBAL,
				IBV_FLUSH_MR));
	expect_wc("flush of the MR, length 0", p.scq[0], 3, IBV_WC_SUCCESS,
		  IBV_WC_FLUSH, p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, post_flush(p.qp[0], 4, fm->rkey, 12345, 3 * BUFSZ,
				IBV_FLUSH_GLOBAL, IBV_FLUSH_MR));
	expect_wc("flush of the MR, any length", p.scq[0], 4, IBV_WC_SUCCESS,
		  IBV_WC_FLUSH, p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, post_flush(p.qp[0], 5, fm->rkey, ra, 0, IBV_FLUSH_GLOBAL,
				IBV_FLUSH_RANGE));
	expect_wc("flush of an empty range", p.scq[0], 5, IBV_WC_SUCCESS,
		  IBV_WC_FLUSH, p.qp[0]->qp_num, ANY, NULL);
	EXPECT_TRUE(cq_quiet(p.rcq[1], 0));
	pair_destroy(&p);
	ASSERT_EQ(0, ibv_dereg_mr(fm));
#endif
}

/*
 * What FLUSH refuses: an MR registered without the placement type asked
 * for, or a range outside it (remote access error); a responder QP
 * without the right for the type (Invalid Request); an MR that asks for
 * the persistent type (sib has no persistent memory: ib_core refuses it
 * with EOPNOTSUPP as the device does not advertise it); an unknown
 * type or level (EINVAL at posting); a UC QP (not created).
 */
TEST_F(rc, flush_errors)
{
#ifndef SIB_HAVE_WR_FLUSH
	SKIP(return, "this rdma-core has no ibv_wr_flush() (v45 and later)");
#else
	uint64_t ra = buf_addr(&self->r, 0);
	struct ibv_mr *fm, *pm;
	struct pair p;

	fm = flush_mr(&self->r, 65536);
	if (!fm && errno == EINVAL)
		SKIP(return, "ib_core refuses IBV_ACCESS_FLUSH_GLOBAL (Linux < 6.2)");
	ASSERT_NE(NULL, fm);
	errno = 0;
	pm = ibv_reg_mr(self->p.pd, self->r.p, 4096, IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_FLUSH_PERSISTENT);
	EXPECT_EQ(NULL, pm);
	/* ib_core refuses it for the device (EOPNOTSUPP), sib (EINVAL). */
	EXPECT_TRUE(errno == EOPNOTSUPP || errno == EINVAL)
		TH_LOG("errno %d", errno);
	if (pm)
		ibv_dereg_mr(pm);

	ASSERT_EQ(0, flush_pair(&p, self->ctx, self->p.pd, self->gid,
				IBV_ACCESS_FLUSH_GLOBAL |
				IBV_ACCESS_FLUSH_PERSISTENT));
	/* The MR has no persistent type, the fixture's MR no flush at all. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush_status(&p, fm->rkey, ra, 64, IBV_FLUSH_PERSISTENT,
			       IBV_FLUSH_RANGE));
	ASSERT_EQ(0, pair_reconnect(&p));
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush_status(&p, self->r.mr->rkey, ra, 64, IBV_FLUSH_GLOBAL,
			       IBV_FLUSH_MR));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* A range that ends past the MR. */
	EXPECT_EQ(IBV_WC_REM_ACCESS_ERR,
		  flush_status(&p, fm->rkey, ra + 65536 - 64, 128,
			       IBV_FLUSH_GLOBAL, IBV_FLUSH_RANGE));
	ASSERT_EQ(0, pair_reconnect(&p));
	/* Unknown types and levels never leave the provider. */
	EXPECT_EQ(EINVAL, post_flush(p.qp[0], 1, fm->rkey, ra, 64, 0,
				     IBV_FLUSH_RANGE));
	EXPECT_EQ(EINVAL, post_flush(p.qp[0], 1, fm->rkey, ra, 64, 4,
				     IBV_FLUSH_RANGE));
	EXPECT_EQ(EINVAL, post_flush(p.qp[0], 1, fm->rkey, ra, 64,
				     IBV_FLUSH_GLOBAL, 2));
	EXPECT_EQ(IBV_WC_SUCCESS,
		  flush_status(&p, fm->rkey, ra, 64, IBV_FLUSH_GLOBAL,
			       IBV_FLUSH_RANGE));
	pair_destroy(&p);

	/* The responder's QP grants no flush right: Invalid Request. */
	ASSERT_EQ(0, flush_pair(&p, self->ctx, self->p.pd, self->gid, 0));
	EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR,
		  flush_status(&p, fm->rkey, ra, 64, IBV_FLUSH_GLOBAL,
			       IBV_FLUSH_RANGE));
	pair_destroy(&p);

	EXPECT_EQ(EOPNOTSUPP, uc_qp_ex_errno(&self->p, self->ctx,
					     IBV_QP_EX_WITH_FLUSH));
	ASSERT_EQ(0, ibv_dereg_mr(fm));
#endif
}

/* 3 gather SGEs of odd lengths at odd offsets, 3 scatter SGEs of others. */
static const struct { uint32_t off, len; } gsg[3] = {
	{ 1, 1023 }, { 2049, 7 }, { 3001, 1537 },
}, ssg[3] = {
	{ 5, 100 }, { 1003, 2000 }, { 4097, 1000 },
};
#define GTOTAL	(1023 + 7 + 1537)

/* The message as one contiguous buffer: the gather SGEs concatenated. */
static void gather_ref(const struct buf *b, uint8_t *out)
{
	for (int i = 0, o = 0; i < 3; o += gsg[i].len, i++)
		memcpy(out + o, b->p + gsg[i].off, gsg[i].len);
}

/* Check the scatter SGEs of @b against @msg of @len bytes. */
static void check_scatter(struct __test_metadata *_metadata,
			  const struct buf *b, const uint8_t *msg,
			  uint32_t len)
{
	uint32_t o = 0;

	EXPECT_UNTOUCHED(b->p, ssg[0].off, 0xee, "before SGE 0");
	for (int i = 0; i < 3; i++) {
		uint32_t n = len - o < ssg[i].len ? len - o : ssg[i].len;
		uint32_t end = ssg[i].off + ssg[i].len;
		uint32_t next = i < 2 ? ssg[i + 1].off : end + GUARD;

		EXPECT_SAME(b->p + ssg[i].off, msg + o, n, "scattered data");
		EXPECT_UNTOUCHED(b->p + ssg[i].off + n, next - ssg[i].off - n,
				 0xee, "after SGE");
		o += n;
	}
}

TEST_F(rc, multi_sge_send)
{
	struct ibv_sge g[3], s[3];
	uint8_t msg[GTOTAL];
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = g, .num_sge = 3,
				  .opcode = IBV_WR_SEND,
				  .send_flags = IBV_SEND_SIGNALED };

	fill_pattern(self->l.p, 8192, 11);
	memset(self->r.p, 0xee, 8192);
	for (int i = 0; i < 3; i++) {
		g[i] = mk_sge(&self->l, gsg[i].off, gsg[i].len);
		s[i] = mk_sge(&self->r, ssg[i].off, ssg[i].len);
	}
	gather_ref(&self->l, msg);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 2, s, 3));
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
	expect_wc("send", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], GTOTAL, NULL);
	check_scatter(_metadata, &self->r, msg, GTOTAL);
}

TEST_F(rc, multi_sge_write_read)
{
	struct ibv_sge g[3], s[3];
	uint8_t msg[GTOTAL];
	uint64_t ra = buf_addr(&self->r, 4096 + 13);

	/* WRITE gathers from 3 SGEs into one remote range. */
	fill_pattern(self->l.p, 8192, 12);
	memset(self->r.p, 0xee, 16384);
	for (int i = 0; i < 3; i++)
		g[i] = mk_sge(&self->l, gsg[i].off, gsg[i].len);
	gather_ref(&self->l, msg);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 1, g, 3,
			     IBV_SEND_SIGNALED, ra, self->r.mr->rkey));
	expect_wc("write", self->p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->qpn[0], ANY, NULL);
	EXPECT_SAME(self->r.p + 4096 + 13, msg, GTOTAL, "written");
	EXPECT_UNTOUCHED(self->r.p, 4096 + 13, 0xee, "before target");
	EXPECT_UNTOUCHED(self->r.p + 4096 + 13 + GTOTAL, GUARD, 0xee,
			 "after target");

	/* READ scatters one remote range into 3 SGEs of A. */
	memset(self->l.p, 0xee, 8192);
	for (int i = 0; i < 3; i++)
		s[i] = mk_sge(&self->l, ssg[i].off, ssg[i].len);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 2, s, 3,
			     IBV_SEND_SIGNALED, ra, self->r.mr->rkey));
	expect_wc("read", self->p.scq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  self->qpn[0], 3100, NULL);
	/* 3100 bytes read: the 2567 written plus 533 of guard (0xee). */
	do {
		uint8_t ref[3100];

		memcpy(ref, msg, GTOTAL);
		memset(ref + GTOTAL, 0xee, sizeof(ref) - GTOTAL);
		check_scatter(_metadata, &self->l, ref, sizeof(ref));
	} while (0);
}

/* Every SGE the QP was granted, on both sides, a few bytes each. */
TEST_F(rc, max_sge)
{
	uint32_t n = self->p.cap[0].max_send_sge;
	uint32_t m = self->p.cap[1].max_recv_sge;
	uint32_t tot = 0, rtot = 0, o = 0;
	struct ibv_sge g[64], s[64];
	uint8_t msg[64 * 3];

	ASSERT_GE(63, n);
	ASSERT_GE(63, m);
	ASSERT_LE(4, n);
	ASSERT_LE(4, m);
	fill_pattern(self->l.p, 8192, 13);
	memset(self->r.p, 0xee, 8192);
	for (uint32_t i = 0; i < n; i++) {
		g[i] = mk_sge(&self->l, i * 61 + 1, 1 + i % 3);
		memcpy(msg + tot, self->l.p + i * 61 + 1, g[i].length);
		tot += g[i].length;
	}
	for (uint32_t i = 0; i < m; i++) {
		s[i] = mk_sge(&self->r, i * 211 + 2, (tot + m - 1) / m + i % 2);
		rtot += s[i].length;
	}
	ASSERT_GE(rtot, tot);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 2, s, m));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 1, g, n,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], tot, NULL);
	for (uint32_t i = 0; i < m && o < tot; i++) {
		uint32_t k = tot - o < s[i].length ? tot - o : s[i].length;

		EXPECT_SAME(self->r.p + i * 211 + 2, msg + o, k, "scattered");
		o += k;
	}
	/* One SGE more than granted is refused at post time, both sides. */
	g[n] = g[0];
	s[m] = s[0];
	EXPECT_EQ(EINVAL, post_op(self->p.qp[0], IBV_WR_SEND, 3, g, n + 1,
				  IBV_SEND_SIGNALED, 0, 0));
	EXPECT_EQ(EINVAL, post_recv_sges(self->p.qp[1], 4, s, m + 1));
	EXPECT_TRUE(cq_quiet(self->p.scq[0], 100));
}

/*
 * Inline data comes from unregistered memory (bogus lkey) and is copied at
 * post time: overwriting the source right after the post changes nothing.
 */
TEST_F(rc, inline_send_and_write)
{
	uint32_t max = self->p.cap[0].max_inline_data;
	const uint32_t lens[] = { 0, 1, 17, max / 2 + 3, max };
	uint8_t *src = malloc(max + 1), *ref = malloc(max + 1);

	ASSERT_NE(NULL, src);
	ASSERT_LE(64, max);
	for (unsigned int i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		uint32_t len = lens[i];
		struct ibv_sge s = { .addr = (uintptr_t)src, .length = len,
				     .lkey = 0xdeadbeef };
		struct ibv_sge rs = mk_sge(&self->r, 0, max + GUARD);

		fill_pattern(src, len, 300 + i);
		memcpy(ref, src, len);
		memset(self->r.p, 0xee, 2 * (max + GUARD));

		/* SEND */
		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 10 + i, &rs, 1));
		ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 20 + i, &s, 1,
				     IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0, 0));
		memset(src, 0, len);
		expect_wc("inline send", self->p.scq[0], 20 + i,
			  IBV_WC_SUCCESS, IBV_WC_SEND, self->qpn[0], ANY, NULL);
		expect_wc("recv", self->p.rcq[1], 10 + i, IBV_WC_SUCCESS,
			  IBV_WC_RECV, self->qpn[1], len, NULL);
		EXPECT_SAME(self->r.p, ref, len, "inline send data");
		EXPECT_UNTOUCHED(self->r.p + len, GUARD, 0xee, "after");

		/* RDMA WRITE, two inline pieces */
		{
			struct ibv_sge two[2] = {
				{ (uintptr_t)ref, len / 2, 0 },
				{ (uintptr_t)ref + len / 2, len - len / 2, 1 },
			};
			uint8_t *dst = self->r.p + max + GUARD;

			ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE,
					     30 + i, two, 2,
					     IBV_SEND_SIGNALED | IBV_SEND_INLINE,
					     (uintptr_t)dst, self->r.mr->rkey));
			expect_wc("inline write", self->p.scq[0], 30 + i,
				  IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
				  self->qpn[0], ANY, NULL);
			EXPECT_SAME(dst, ref, len, "inline write data");
			EXPECT_UNTOUCHED(dst + len, GUARD, 0xee, "after");
		}
	}
	/* One byte more than max_inline is refused at post time. */
	do {
		struct ibv_sge s = { .addr = (uintptr_t)src, .length = max + 1 };

		EXPECT_EQ(EINVAL, post_op(self->p.qp[0], IBV_WR_SEND, 99, &s, 1,
					  IBV_SEND_SIGNALED | IBV_SEND_INLINE,
					  0, 0));
		EXPECT_TRUE(cq_quiet(self->p.scq[0], 100));
	} while (0);
	free(src);
	free(ref);
}

/*
 * Unsignaled WQEs: only the signaled ones complete, yet all are executed
 * and retired (far more WQEs than the SQ holds go through).
 */
TEST_F(rc, unsignaled_then_signaled)
{
	uint32_t depth = self->p.cap[0].max_send_wr;
	uint32_t n = 4 * depth + 5, next = 15, got = 0;
	struct ibv_wc wc;

	fill_pattern(self->l.p, n * 16, 21);
	memset(self->r.p, 0xee, n * 16 + GUARD);
	for (uint32_t i = 0; i < n; i++) {
		struct ibv_sge s = mk_sge(&self->l, i * 16, 16);
		bool sig = (i % 16) == 15 || i == n - 1;
		int ret = 0;

		for (;;) {
			ret = post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, i, &s,
				      1, sig ? IBV_SEND_SIGNALED : 0,
				      buf_addr(&self->r, i * 16),
				      self->r.mr->rkey);
			if (ret != ENOMEM)
				break;
			/* SQ full: wait for a signaled WQE to retire. */
			ASSERT_EQ(1, poll_n(self->p.scq[0], &wc, 1, WAIT_MS));
			EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
			EXPECT_EQ(next, wc.wr_id);
			next = next + 16 < n ? next + 16 : n - 1;
			got++;
		}
		ASSERT_EQ(0, ret);
	}
	while (got < (n + 15) / 16) {
		ASSERT_EQ(1, poll_n(self->p.scq[0], &wc, 1, WAIT_MS));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(next, wc.wr_id);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc.opcode);
		next = next + 16 < n ? next + 16 : n - 1;
		got++;
	}
	EXPECT_TRUE(cq_quiet(self->p.scq[0], 100));
	EXPECT_SAME(self->r.p, self->l.p, n * 16, "written");
	EXPECT_UNTOUCHED(self->r.p + n * 16, GUARD, 0xee, "after");
}

/* sq_sig_all: every WQE completes whether it asks or not. */
TEST_F(rc, sq_sig_all)
{
	struct pair_opts o;
	struct pair p;
	struct ibv_sge s = mk_sge(&self->l, 0, 8);
	struct ibv_wc wc;

	pair_default_opts(&o);
	o.sig_all = true;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1, 0,
				     buf_addr(&self->r, 0), self->r.mr->rkey));
	for (int i = 0; i < 4; i++)
		expect_wc("sig_all", p.scq[0], i, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_WRITE, p.qp[0]->qp_num, ANY, &wc);
	pair_destroy(&p);
}

/*
 * Zero-length messages: no SGE at all, and RDMA with no valid rkey (IBTA:
 * a zero-length RDMA operation does not check R_Key and address).
 */
TEST_F(rc, zero_length)
{
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_send_wr wr = { .wr_id = 3, .num_sge = 0,
				  .opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
				  .send_flags = IBV_SEND_SIGNALED,
				  .imm_data = htonl(0x12345678) };
	struct ibv_wc wc;

	memset(self->r.p, 0xee, 64);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 100, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 1, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send 0", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("recv 0", self->p.rcq[1], 100, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 0, NULL);

	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 2, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("write 0", self->p.scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->qpn[0], ANY, NULL);

	wr.wr.rdma.remote_addr = 0;
	wr.wr.rdma.rkey = 0;
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 101, &rs, 1));
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
	expect_wc("write imm 0", self->p.scq[0], 3, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->qpn[0], ANY, NULL);
	expect_wc("recv imm 0", self->p.rcq[1], 101, IBV_WC_SUCCESS,
		  IBV_WC_RECV_RDMA_WITH_IMM, self->qpn[1], 0, &wc);
	EXPECT_EQ(htonl(0x12345678), wc.imm_data);

	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 4, NULL, 0,
			     IBV_SEND_SIGNALED, 0xdead0000, 0x1234));
	expect_wc("read 0", self->p.scq[0], 4, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_READ, self->qpn[0], 0, NULL);
	EXPECT_UNTOUCHED(self->r.p, 64, 0xee, "recv buffer");
	EXPECT_STATE(self->p.qp[0], IBV_QPS_RTS);
	EXPECT_STATE(self->p.qp[1], IBV_QPS_RTS);
}

/* Many messages of each kind back to back, completing in order. */
TEST_F(rc, pipelined_mixed_opcodes)
{
	enum { N = 48 };
	struct ibv_wc wc;

	fill_pattern(self->l.p, N * 4096, 31);
	memset(self->r.p, 0xee, 2 * N * 4096);
	for (int i = 0; i < N; i++) {
		struct ibv_sge rs = mk_sge(&self->r, N * 4096 + i * 4096, 4096);

		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 1000 + i, &rs, 1));
	}
	for (int i = 0; i < N; i++) {
		uint32_t len = 1 + (i * 397) % 4096;
		struct ibv_sge s = mk_sge(&self->l, i * 4096, len);
		enum ibv_wr_opcode op = i % 2 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE;

		ASSERT_EQ(0, post_op(self->p.qp[0], op, i, &s, 1,
				     IBV_SEND_SIGNALED,
				     buf_addr(&self->r, i * 4096),
				     self->r.mr->rkey));
	}
	for (int i = 0, r = 0; i < N; i++) {
		uint32_t len = 1 + (i * 397) % 4096;

		expect_wc("pipelined", self->p.scq[0], i, IBV_WC_SUCCESS,
			  i % 2 ? IBV_WC_SEND : IBV_WC_RDMA_WRITE,
			  self->qpn[0], ANY, NULL);
		if (i % 2) {
			expect_wc("recv", self->p.rcq[1], 1000 + r,
				  IBV_WC_SUCCESS, IBV_WC_RECV, self->qpn[1],
				  len, &wc);
			EXPECT_SAME(self->r.p + N * 4096 + r * 4096,
				    self->l.p + i * 4096, len, "send data");
			r++;
		} else {
			EXPECT_SAME(self->r.p + i * 4096, self->l.p + i * 4096,
				    len, "write data");
		}
	}
}

/*
 * PSNs wrap at 2^24: start both directions just below and move multi-packet
 * messages of every kind across the wrap.
 */
TEST_F(rc, psn_wrap)
{
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.psn[0] = 0xfffff0;
	o.psn[1] = 0xfffffe;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	for (int k = 0; k < 2; k++) {
		do_send(_metadata, self, &p, &self->l, 0, &self->r, 0,
			20 * MTU + 5, IBV_WR_SEND, 40 + k);
		do_write(_metadata, &p, &self->l, &self->r, 20 * MTU + 1,
			 IBV_WR_RDMA_WRITE, 50 + k);
		do_read(_metadata, &p, &self->l, &self->r, 20 * MTU - 1, 60 + k);
	}
	pair_destroy(&p);
}

/* The other path MTUs: 256, 2048 and 4096 (lo's MTU allows them all). */
TEST_F(rc, other_path_mtus)
{
	static const struct { enum ibv_mtu e; uint32_t n; } mtus[] = {
		{ IBV_MTU_256, 256 }, { IBV_MTU_2048, 2048 },
		{ IBV_MTU_4096, 4096 },
	};

	for (unsigned int m = 0; m < 3; m++) {
		uint32_t n = mtus[m].n;
		const uint32_t lens[] = { n - 1, n, n + 1, 5 * n + 3 };

		self->p.o.mtu = mtus[m].e;
		ASSERT_EQ(0, pair_reconnect(&self->p));
		for (int i = 0; i < 4; i++) {
			do_send(_metadata, self, &self->p, &self->l, 1,
				&self->r, 2, lens[i], IBV_WR_SEND, m * 10 + i);
			do_write(_metadata, &self->p, &self->l, &self->r,
				 lens[i], IBV_WR_RDMA_WRITE, m * 10 + i);
			do_read(_metadata, &self->p, &self->l, &self->r,
				lens[i], m * 10 + i);
		}
	}
}

/* Both directions at once: QP 1 is a requester too. */
TEST_F(rc, bidirectional)
{
	struct ibv_sge s0 = mk_sge(&self->l, 0, 5000);
	struct ibv_sge s1 = mk_sge(&self->r, 0, 6000);
	struct ibv_sge r0 = mk_sge(&self->l, 65536, 8192);
	struct ibv_sge r1 = mk_sge(&self->r, 65536, 8192);

	fill_pattern(self->l.p, 5000, 71);
	fill_pattern(self->r.p, 6000, 72);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[0], 10, &r0, 1));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 11, &r1, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 1, &s0, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(0, post_op(self->p.qp[1], IBV_WR_SEND, 2, &s1, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send 0", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("send 1", self->p.scq[1], 2, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[1], ANY, NULL);
	expect_wc("recv 0", self->p.rcq[0], 10, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[0], 6000, NULL);
	expect_wc("recv 1", self->p.rcq[1], 11, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 5000, NULL);
	EXPECT_SAME(self->l.p + 65536, self->r.p, 6000, "to QP 0");
	EXPECT_SAME(self->r.p + 65536, self->l.p, 5000, "to QP 1");
}


/* ---- tracepoints (the helpers are sib_trace.h's) ---------------------- */

/*
 * The events of one RC exchange on lo: the state walk of both QPs, a
 * SEND, a WRITE, a READ and a SEND that meets an RNR NAK, each with the
 * right QPNs, opcodes, PSNs and verdicts, in causal order; once the
 * events are disabled, nothing more is recorded.
 */
TEST_F(rc, trace_events)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 512);
	struct ibv_sge rs = mk_sge(&self->r, 0, 4096);
	uint32_t q0 = self->qpn[0], q1 = self->qpn[1];
	struct trace_log log;
	char range[48];
	int i, j, k;
	long psn;

	TRACE_ON();
	/* A 10 ms RNR timer: one RNR NAK (or a few) while the test waits. */
	self->p.o.min_rnr_timer = 20;
	ASSERT_EQ(0, pair_reconnect(&self->p));

	/*
	 * No receive posted: the first message of a QP goes whatever the
	 * credits, and meets an RNR NAK until the receive comes.
	 */
	fill_pattern(self->l.p, 4096, 1);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x50, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	EXPECT_TRUE(cq_quiet(self->p.scq[0], 30));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x70, &rs, 1));
	expect_wc("send after rnr", self->p.scq[0], 0x50, IBV_WC_SUCCESS,
		  IBV_WC_SEND, q0, ANY, NULL);
	expect_wc("recv after rnr", self->p.rcq[1], 0x70, IBV_WC_SUCCESS,
		  IBV_WC_RECV, q1, 512, NULL);
	/* A receive for a starved RQ: a credit update, then the SEND. */
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x71, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x51, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 0x51, IBV_WC_SUCCESS, IBV_WC_SEND,
		  q0, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 0x71, IBV_WC_SUCCESS, IBV_WC_RECV,
		  q1, 512, NULL);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 0x52, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 8192),
			     self->r.mr->rkey));
	expect_wc("write", self->p.scq[0], 0x52, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, q0, ANY, NULL);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 0x53, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 8192),
			     self->r.mr->rkey));
	expect_wc("read", self->p.scq[0], 0x53, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_READ, q0, 512, NULL);

	ASSERT_EQ(0, tfs_write("events/sib/enable", "0"));
	trace_read(&log);
	ASSERT_LT(0, log.n) TH_LOG("no sib events recorded");

	/* The state walk of pair_reconnect(), by modify_qp. */
	TSTEP(i, 0, "sib_qp_state", kv("qpn", q0), "RTS -> RESET",
	      "by=modify_qp");
	TSTEP(i, i, "sib_qp_state", kv("qpn", q0), "RESET -> INIT");
	TSTEP(i, i, "sib_qp_state", kv("qpn", q0), "INIT -> RTR");
	TSTEP(i, i, "sib_qp_state", kv("qpn", q0), "RTR -> RTS");
	TSTEP(i, 0, "sib_qp_state", kv("qpn", q1), "INIT -> RTR");

	/* RNR: NAKed, backed off, rewound, resent at the same PSN, then ACKed. */
	TSTEP(i, 0, "sib_req_fetch", kv("qpn", q0), "wr_id=0x50", "op=SEND",
	      "len=512", "status=SUCCESS");
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_SEND_ONLY", "len=512", "ackreq=1", "path=local");
	psn = tfield(&log, i, "psn");
	EXPECT_EQ(0x1234, psn);
	TSTEP(i, i, "sib_pkt_recv", kv("dqpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn));
	TSTEP(i, i, "sib_resp_ack", kv("qpn", q1), kv("psn", psn),
	      "aeth=RNR_NAK", "timer=20");
	TSTEP(i, i, "sib_resp_verdict", kv("qpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn), "verdict=rnr", kv("epsn", psn));
	TSTEP(i, i, "sib_rnr_wait", kv("qpn", q0), kv("psn", psn),
	      "usec=10240");
	TSTEP(i, i, "sib_req_rewind", kv("qpn", q0), kv("psn", psn),
	      kv("from", psn + 1));
	TSTEP(i, i, "sib_comp_verdict", kv("qpn", q0), kv("psn", psn),
	      "aeth=RNR_NAK", "verdict=rnr");
	TSTEP(i, i, "sib_rnr_timer", kv("qpn", q0));
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q0), "op=RC_SEND_ONLY",
	      kv("psn", psn));
	/* the receive came: the last try is executed, ACKed, completed */
	TSTEP(j, i, "sib_cqe", kv("qpn", q1), "op=RECV", "status=SUCCESS",
	      "len=512", "wr_id=0x70");
	TSTEP(j, j, "sib_resp_ack", kv("qpn", q1), kv("psn", psn), "aeth=ACK");
	TSTEP(j, j, "sib_resp_verdict", kv("qpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn), "verdict=ok", kv("epsn", psn + 1));
	snprintf(range, sizeof(range), "psn=%ld-%ld", psn, psn);
	TSTEP(j, j, "sib_swqe_done", kv("qpn", q0), "wr_id=0x50", "op=SEND",
	      range, "status=SUCCESS");
	TSTEP(j, j, "sib_cqe", kv("qpn", q0), "op=SEND", "status=SUCCESS",
	      "wr_id=0x50");
	TSTEP(j, j, "sib_comp_verdict", kv("qpn", q0), kv("psn", psn),
	      "aeth=ACK", "verdict=ack");

	/* The next receive ends QP 1's starvation: a credit update. */
	TSTEP(k, j, "sib_credit_update_sent", kv("qpn", q1), "credits=1");
	TSTEP(k, k, "sib_credit_update_rcvd", kv("qpn", q0));

	/* SEND: fetched, sent, received, executed, ACKed, completed. */
	TSTEP(i, j, "sib_req_fetch", kv("qpn", q0), "wr_id=0x51", "op=SEND");
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_SEND_ONLY", kv("psn", psn + 1), "len=512");
	TSTEP(i, i, "sib_pkt_recv", kv("dqpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn + 1));
	TSTEP(i, i, "sib_resp_verdict", kv("qpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn + 1), "verdict=ok");
	TSTEP(i, i, "sib_cqe", kv("qpn", q0), "op=SEND", "wr_id=0x51",
	      "status=SUCCESS");
	TSTEP(i, i, "sib_comp_verdict", kv("qpn", q0), kv("psn", psn + 1),
	      "verdict=ack");

	/* WRITE: one packet, the next PSN. */
	TSTEP(i, i, "sib_req_fetch", kv("qpn", q0), "wr_id=0x52", "op=WRITE");
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_WRITE_ONLY", kv("psn", psn + 2), "len=512");
	TSTEP(i, i, "sib_resp_verdict", kv("qpn", q1), "op=RC_WRITE_ONLY",
	      kv("psn", psn + 2), "verdict=ok");
	TSTEP(i, i, "sib_cqe", kv("qpn", q0), "op=RDMA_WRITE", "wr_id=0x52",
	      "status=SUCCESS");
	TSTEP(i, i, "sib_comp_verdict", kv("qpn", q0), kv("psn", psn + 2),
	      "verdict=ack");

	/* READ: the request, then the response from QP 1 at the same PSN. */
	TSTEP(i, i, "sib_req_fetch", kv("qpn", q0), "wr_id=0x53", "op=READ");
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_READ_REQUEST", kv("psn", psn + 3), "len=0");
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q1), kv("dqpn", q0),
	      "op=RC_READ_RESPONSE_ONLY", kv("psn", psn + 3), "len=512");
	TSTEP(i, i, "sib_resp_verdict", kv("qpn", q1), "op=RC_READ_REQUEST",
	      kv("psn", psn + 3), "verdict=ok");
	TSTEP(i, i, "sib_cqe", kv("qpn", q0), "op=RDMA_READ", "wr_id=0x53",
	      "status=SUCCESS", "len=512");
	TSTEP(i, i, "sib_comp_verdict", kv("qpn", q0),
	      "op=RC_READ_RESPONSE_ONLY", kv("psn", psn + 3), "verdict=resp");

	/* Nothing failed, nothing was dropped. */
	EXPECT_EQ(-1, tfind(&log, 0, "sib_pkt_drop", NULL));
	EXPECT_EQ(-1, tfind(&log, 0, "sib_resp_verdict", "verdict=nak", NULL));
	if (!_metadata->passed || getenv("SIB_TRACE_DUMP"))
		trace_dump(&log);
	trace_log_free(&log);

	/* Disabled: a SEND records nothing. */
	ASSERT_EQ(0, tfs_write("trace", ""));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x75, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x55, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send, not traced", self->p.scq[0], 0x55, IBV_WC_SUCCESS,
		  IBV_WC_SEND, q0, ANY, NULL);
	trace_read(&log);
	EXPECT_EQ(0, log.n);
	trace_dump(&log);
	trace_log_free(&log);
	trace_restore();
}

/*
 * A packet that fault injection drops shows as a sib_fault event, and the
 * retransmission follows: the ACK timeout, a go-back-N to the lost PSN,
 * the packet sent again and executed.
 */
TEST_F(rc, trace_fault_drop)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 100);
	struct ibv_sge rs = mk_sge(&self->r, 0, 4096);
	uint32_t q0 = self->qpn[0], q1 = self->qpn[1];
	struct trace_log log;
	long drops = 0, psn;
	int i, d;

	TRACE_ON();
	ASSERT_EQ(0, fault_knob_set(SIB_DEV, "classes", 1));	/* SENDs */
	ASSERT_EQ(0, fault_knob_set(SIB_DEV, "drop", 1000000));
	ASSERT_EQ(0, fault_knob_set(SIB_DEV, "dir", 3));
	ASSERT_EQ(0, fault_knob_set(SIB_DEV, "active", 1));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x81, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x61, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	/* Drop the first try only: the retransmission goes through. */
	for (long t0 = now_ms(); drops < 1 && now_ms() - t0 < 2000;)
		drops = fault_knob_get(SIB_DEV, "injected_drop");
	ASSERT_EQ(0, fault_knob_set(SIB_DEV, "active", 0));
	ASSERT_LE(1, drops);
	expect_wc("send", self->p.scq[0], 0x61, IBV_WC_SUCCESS, IBV_WC_SEND,
		  q0, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 0x81, IBV_WC_SUCCESS, IBV_WC_RECV,
		  q1, 100, NULL);
	ASSERT_EQ(0, tfs_write("events/sib/enable", "0"));
	trace_read(&log);

	TSTEP(i, 0, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_SEND_ONLY", "len=100");
	psn = tfield(&log, i, "psn");
	TSTEP(d, i, "sib_fault", kv("dqpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn), "action=drop", "dir=local");
	/* the drop is the only fate of that packet: no receive before the retry */
	i = tfind(&log, i, "sib_pkt_recv", kv("dqpn", q1), kv("psn", psn), NULL);
	TSTEP(d, d, "sib_ack_timeout", kv("qpn", q0), kv("unacked", psn));
	EXPECT_LT(d, i) TH_LOG("received (%d) before the ACK timeout (%d)", i, d);
	TSTEP(d, d, "sib_retry", kv("qpn", q0), kv("psn", psn), "cause=timeout",
	      "action=go_back");
	TSTEP(d, d, "sib_req_rewind", kv("qpn", q0), kv("psn", psn));
	TSTEP(d, d, "sib_pkt_send", kv("qpn", q0), "op=RC_SEND_ONLY",
	      kv("psn", psn));
	TSTEP(d, d, "sib_pkt_recv", kv("dqpn", q1), "op=RC_SEND_ONLY",
	      kv("psn", psn));
	TSTEP(d, d, "sib_resp_verdict", kv("qpn", q1), kv("psn", psn),
	      "verdict=ok");
	TSTEP(d, d, "sib_cqe", kv("qpn", q0), "op=SEND", "wr_id=0x61",
	      "status=SUCCESS");
	if (!_metadata->passed || getenv("SIB_TRACE_DUMP"))
		trace_dump(&log);
	trace_log_free(&log);
	trace_restore();
}

/* ---- fence ---------------------------------------------------------------- */

/*
 * READ remote X into L, then WRITE L to remote Y. With IBV_SEND_FENCE on
 * the WRITE, Y must hold X's data: the WRITE may not gather L before the
 * READ's data arrived. The unfenced run is logged to show that the check
 * can tell (sib sends the WRITE at once without the fence).
 */
static int fence_run(struct __test_metadata *_metadata, struct pair *p,
		     struct buf *l, struct buf *r, bool fence, uint32_t seed,
		     uint32_t len)
{
	struct ibv_sge ls = mk_sge(l, 0, len);
	struct ibv_send_wr w[2] = { };

	fill_pattern(r->p, len, seed);		/* X */
	memset(l->p, 0x11, len);		/* L: stale */
	memset(r->p + len, 0x22, len);		/* Y */
	w[0].wr_id = 1;
	w[0].opcode = IBV_WR_RDMA_READ;
	w[0].sg_list = &ls;
	w[0].num_sge = 1;
	w[0].wr.rdma.remote_addr = buf_addr(r, 0);
	w[0].wr.rdma.rkey = r->mr->rkey;
	w[0].next = &w[1];
	w[1] = w[0];
	w[1].next = NULL;
	w[1].wr_id = 2;
	w[1].opcode = IBV_WR_RDMA_WRITE;
	w[1].send_flags = IBV_SEND_SIGNALED | (fence ? IBV_SEND_FENCE : 0);
	w[1].wr.rdma.remote_addr = buf_addr(r, len);
	if (post_send_wr(p->qp[0], w))
		return -1;
	expect_wc("fenced write", p->scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, p->qp[0]->qp_num, ANY, NULL);
	return first_diff(r->p + len, r->p, len) < 0;
}

TEST_F(rc, fence_read_then_write)
{
	struct pair p;
	int ok;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, NULL));
	ok = fence_run(_metadata, &p, &self->l, &self->r, false, 1,
		       256 * 1024);
	TH_LOG("without the fence the WRITE carried %s data", ok == 1 ?
	       "the READ's" : "stale");
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(1, fence_run(_metadata, &p, &self->l, &self->r, true,
				       10 + i, 256 * 1024))
			TH_LOG("fenced run %d", i);
	}
	pair_destroy(&p);
}

/*
 * Why the requester waits: a READ, then a fenced WRITE posted with it.
 * The READ goes; the WRITE waits (sib_req_wait wait=fence, one READ
 * outstanding) until the READ's response came, and goes after it.
 */
TEST_F(rc, trace_req_wait)
{
	uint32_t q0 = self->qpn[0], q1 = self->qpn[1];
	struct trace_log log;
	int i, j;

	TRACE_ON();
	EXPECT_EQ(1, fence_run(_metadata, &self->p, &self->l, &self->r, true,
			       7, 512));
	ASSERT_EQ(0, tfs_write("events/sib/enable", "0"));
	trace_read(&log);
	ASSERT_LT(0, log.n) TH_LOG("no sib events recorded");
	TSTEP(i, 0, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_READ_REQUEST");
	TSTEP(i, i, "sib_req_wait", kv("qpn", q0), "op=WRITE", "wait=fence",
	      "rd_atomic=1");
	TSTEP(j, i, "sib_comp_verdict", kv("qpn", q0),
	      "op=RC_READ_RESPONSE_ONLY", "verdict=resp");
	TSTEP(j, j, "sib_pkt_send", kv("qpn", q0), kv("dqpn", q1),
	      "op=RC_WRITE_ONLY");
	/* nothing else made it wait */
	EXPECT_EQ(-1, tfind(&log, 0, "sib_req_wait", "wait=window", NULL));
	EXPECT_EQ(-1, tfind(&log, 0, "sib_req_wait", "wait=credit", NULL));
	if (!_metadata->passed || getenv("SIB_TRACE_DUMP"))
		trace_dump(&log);
	trace_log_free(&log);
	trace_restore();
}

/* FETCH_ADD's result, then a fenced SEND of it: the original value goes. */
TEST_F(rc, fence_atomic_then_send)
{
	uint64_t *ctr = (uint64_t *)self->r.p, *res = (uint64_t *)self->l.p;
	struct ibv_sge as = mk_sge(&self->l, 0, 8), rs = mk_sge(&self->r, 64, 8);
	struct ibv_send_wr w[2] = { };
	struct pair p;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, NULL));
	for (int i = 0; i < 5; i++) {
		*ctr = 1000 * i + 7;
		*res = 0;
		ASSERT_EQ(0, post_recv_sges(p.qp[1], 50 + i, &rs, 1));
		w[0].wr_id = 1;
		w[0].opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
		w[0].sg_list = &as;
		w[0].num_sge = 1;
		w[0].wr.atomic.remote_addr = buf_addr(&self->r, 0);
		w[0].wr.atomic.rkey = self->r.mr->rkey;
		w[0].wr.atomic.compare_add = 1;
		w[0].next = &w[1];
		w[1].wr_id = 2;
		w[1].opcode = IBV_WR_SEND;
		w[1].sg_list = &as;
		w[1].num_sge = 1;
		w[1].send_flags = IBV_SEND_SIGNALED | IBV_SEND_FENCE;
		ASSERT_EQ(0, post_send_wr(p.qp[0], w));
		expect_wc("send", p.scq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND,
			  p.qp[0]->qp_num, ANY, NULL);
		expect_wc("recv", p.rcq[1], 50 + i, IBV_WC_SUCCESS, IBV_WC_RECV,
			  p.qp[1]->qp_num, 8, NULL);
		EXPECT_EQ((uint64_t)1000 * i + 7, *(uint64_t *)(self->r.p + 64));
		EXPECT_EQ((uint64_t)1000 * i + 8, *ctr);
	}
	pair_destroy(&p);
}

/* ---- stress ----------------------------------------------------------------- */

/*
 * sib_stress_t.h's engine on sib0 over lo, with no faults: 2400 random
 * operations on 4 pairs whose PSNs cross the wrap, every byte checked.
 */
TEST_F_TIMEOUT(rc, stress_4_pairs, 240)
{
	struct pair_end e = {
		.dev = SIB_DEV, .ctx = self->ctx, .pd = self->p.pd,
		.gid = self->gid,
	};
	struct pair_end ends[2] = { e, e };
	struct pair_opts o;

	stress_opts(&o, SLOTS, 14);
	run_stress(_metadata, ends, 2400, 0x5eed1234abcdull, &o);
}

/* ---- 128 outstanding READs and atomics ---------------------------------- */

/* RESET -> RTS towards @dqpn with @nrd READs/atomics each way. */
static int rd_connect(struct ibv_qp *qp, int gid, const union ibv_gid *dgid,
		      uint32_t dqpn, uint8_t nrd)
{
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.max_dest_rd_atomic = nrd;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = gid;
	a.ah_attr.grh.dgid = *dgid;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			    IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC |
			    IBV_QP_MIN_RNR_TIMER);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = nrd;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			     IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC);
}

TEST_F(rc, rd_atomic_128)
{
	struct ibv_qp_init_attr qa = {
		.cap = { .max_send_wr = 256, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	static struct ibv_wc wc[256];
	struct ibv_device_attr da;
	struct ibv_qp *qp[2], *q3;
	uint64_t *cnt, seen[128];
	union ibv_gid g;
	struct ibv_sge sge;
	struct ibv_cq *cq;
	int n;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &da));
	EXPECT_EQ(128, da.max_qp_rd_atom);
	EXPECT_EQ(128, da.max_qp_init_rd_atom);

	cq = ibv_create_cq(self->ctx, 512, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	qa.send_cq = cq;
	qa.recv_cq = cq;
	ASSERT_EQ(0, ibv_query_gid(self->ctx, 1, self->gid, &g));
	for (int i = 0; i < 2; i++) {
		qp[i] = ibv_create_qp(self->p.pd, &qa);
		ASSERT_NE(NULL, qp[i]);
	}
	for (int i = 0; i < 2; i++)
		ASSERT_EQ(0, rd_connect(qp[i], self->gid, &g, qp[!i]->qp_num,
					128));

	/* 128 READs of 4 KiB in flight at once, every byte checked. */
	fill_pattern(self->r.p, 128 * 4096, 128);
	memset(self->l.p, 0, 128 * 4096);
	for (int i = 0; i < 128; i++) {
		sge = mk_sge(&self->l, i * 4096, 4096);
		ASSERT_EQ(0, post_op(qp[0], IBV_WR_RDMA_READ, i, &sge, 1,
				     IBV_SEND_SIGNALED,
				     buf_addr(&self->r, i * 4096),
				     self->r.mr->rkey));
	}
	n = poll_n(cq, wc, 128, WAIT_MS * 4);
	ASSERT_EQ(128, n);
	for (int i = 0; i < n; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(i, wc[i].wr_id) TH_LOG("in order");
	}
	EXPECT_SAME(self->l.p, self->r.p, 128 * 4096, "128 READs");

	/* 128 fetch-and-adds in flight: each sees a different count. */
	cnt = (uint64_t *)self->r.p;
	*cnt = 0;
	for (int i = 0; i < 128; i++) {
		sge = mk_sge(&self->l, i * 8, 8);
		ASSERT_EQ(0, post_atomic(qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
					 i, &sge, IBV_SEND_SIGNALED,
					 buf_addr(&self->r, 0),
					 self->r.mr->rkey, 1, 0));
	}
	n = poll_n(cq, wc, 128, WAIT_MS * 4);
	ASSERT_EQ(128, n);
	for (int i = 0; i < n; i++)
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
	EXPECT_EQ(128, *cnt);
	memcpy(seen, self->l.p, sizeof(seen));
	for (int i = 0; i < 128; i++) {
		EXPECT_EQ(i, seen[i]) TH_LOG("fetched value %d", i);
	}

	/* More than the device offers. */
	q3 = ibv_create_qp(self->p.pd, &qa);
	ASSERT_NE(NULL, q3);
	EXPECT_EQ(EINVAL, rd_connect(q3, self->gid, &g, qp[0]->qp_num, 129));
	EXPECT_EQ(0, ibv_destroy_qp(q3));

	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

SIB_HARNESS_MAIN
