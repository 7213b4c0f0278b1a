// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's RC error paths on sib0 over lo: the exact ibv_wc_status on both
 * sides and the QP states afterwards (IBA 9.9 and 10.3): remote access
 * errors (bad rkey, out of bounds, MR rights), invalid requests (QP
 * rights, misaligned atomics, receive buffer too small), local errors
 * (bad lkey, SGE beyond the MR, message longer than max_msg_sz), RNR with
 * and without retries, retry exhaustion towards a QP that does not exist,
 * ACKs that arrive after the ACK timeout in the middle of a message,
 * flushing, and the verbs' own refusals (posting in RESET, to a full
 * queue).
 *
 * QP 0 is the requester, QP 1 the responder.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

FIXTURE(err) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf l, r;
	uint32_t qpn[2];
};

FIXTURE_SETUP(err)
{
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, buf_new(&self->l, self->p.pd, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, buf_new(&self->r, self->p.pd, BUFSZ, ACC_ALL));
	self->qpn[0] = self->p.qp[0]->qp_num;
	self->qpn[1] = self->p.qp[1]->qp_num;
}

FIXTURE_TEARDOWN(err)
{
	buf_free(&self->l);
	buf_free(&self->r);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/*
 * Post @wr on QP 0 of @p and expect its completion with @status; then QP 0
 * must be in ERR and QP 1 in @resp_state. A receive posted on QP 1
 * beforehand is flushed if QP 1 went to ERR, untouched otherwise.
 */
static void one_error(struct __test_metadata *_metadata, struct pair *p,
		      struct ibv_send_wr *wr, enum ibv_wc_status status,
		      enum ibv_qp_state resp_state, const char *what)
{
	struct ibv_sge rs = { 0 };	/* zero length, no lkey needed */
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv_sges(p->qp[1], 0xf00, &rs, 1));
	wr->send_flags |= IBV_SEND_SIGNALED;
	ASSERT_EQ(0, post_send_wr(p->qp[0], wr)) TH_LOG("%s: post", what);
	expect_wc(what, p->scq[0], wr->wr_id, status, ANY, p->qp[0]->qp_num,
		  ANY, &wc);
	EXPECT_STATE_SOON(p->qp[0], IBV_QPS_ERR);
	EXPECT_STATE_SOON(p->qp[1], resp_state);
	if (resp_state == IBV_QPS_ERR)
		expect_wc("flushed recv", p->rcq[1], 0xf00, IBV_WC_WR_FLUSH_ERR,
			  ANY, p->qp[1]->qp_num, ANY, NULL);
	else
		EXPECT_TRUE(cq_quiet(p->rcq[1], 50));
	/* Nothing else completed on the requester. */
	EXPECT_TRUE(cq_quiet(p->scq[0], 0));
	ASSERT_EQ(0, pair_reconnect(p));
}

static void rdma_wr(struct ibv_send_wr *wr, struct ibv_sge *s,
		    enum ibv_wr_opcode op, uint64_t id, uint64_t raddr,
		    uint32_t rkey)
{
	memset(wr, 0, sizeof(*wr));
	wr->wr_id = id;
	wr->opcode = op;
	wr->sg_list = s;
	wr->num_sge = s ? 1 : 0;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP || op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		wr->wr.atomic.remote_addr = raddr;
		wr->wr.atomic.rkey = rkey;
		wr->wr.atomic.compare_add = 1;
	} else {
		wr->wr.rdma.remote_addr = raddr;
		wr->wr.rdma.rkey = rkey;
		wr->imm_data = htonl(7);
	}
}

static const enum ibv_wr_opcode remote_ops[] = {
	IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_RDMA_READ,
	IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
};
#define NOPS	(sizeof(remote_ops) / sizeof(remote_ops[0]))

static uint32_t op_len(enum ibv_wr_opcode op)
{
	return op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	       op == IBV_WR_ATOMIC_FETCH_AND_ADD ? 8 : 100;
}

TEST_F(err, bad_rkey)
{
	/* Another index, and the right index with a stale key byte. */
	const uint32_t bad[] = { self->r.mr->rkey + 0x100,
				 self->r.mr->rkey ^ 0x01, 0 };

	memset(self->r.p, 0xee, 4096);
	for (unsigned int k = 0; k < 3; k++) {
		for (unsigned int i = 0; i < NOPS; i++) {
			struct ibv_sge s = mk_sge(&self->l, 0, op_len(remote_ops[i]));
			struct ibv_send_wr wr;

			rdma_wr(&wr, &s, remote_ops[i], i, buf_addr(&self->r, 64),
				bad[k]);
			one_error(_metadata, &self->p, &wr, IBV_WC_REM_ACCESS_ERR,
				  IBV_QPS_ERR, "bad rkey");
		}
	}
	EXPECT_UNTOUCHED(self->r.p, 4096, 0xee, "target memory");
}

TEST_F(err, remote_out_of_bounds)
{
	uint64_t start = buf_addr(&self->r, 0), end = start + BUFSZ;
	uint32_t rkey = self->r.mr->rkey;

	memset(self->r.p, 0xee, BUFSZ);
	for (unsigned int i = 0; i < NOPS; i++) {
		uint32_t len = op_len(remote_ops[i]);
		const uint64_t addrs[] = { end - len + 8, start - 8, end,
					   ~0ull - 7 };
		struct ibv_sge s = mk_sge(&self->l, 0, len);
		struct ibv_send_wr wr;

		for (unsigned int k = 0; k < 4; k++) {
			rdma_wr(&wr, &s, remote_ops[i], i * 10 + k, addrs[k],
				rkey);
			one_error(_metadata, &self->p, &wr,
				  IBV_WC_REM_ACCESS_ERR, IBV_QPS_ERR, "oob");
		}
	}
	/* A range inside at both ends still works afterwards. */
	do {
		struct ibv_sge s = mk_sge(&self->l, 0, 100);

		ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 99, &s, 1,
				     IBV_SEND_SIGNALED, end - 100, rkey));
		expect_wc("last bytes", self->p.scq[0], 99, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_WRITE, self->qpn[0], ANY, NULL);
	} while (0);
	EXPECT_UNTOUCHED(self->r.p, BUFSZ - 100, 0xee, "target memory");
}

/* The MR lacks the right the operation needs. */
TEST_F(err, mr_without_remote_rights)
{
	static const struct { int access; enum ibv_wr_opcode op; } c[] = {
		{ IBV_ACCESS_LOCAL_WRITE, IBV_WR_RDMA_WRITE },
		{ IBV_ACCESS_LOCAL_WRITE, IBV_WR_RDMA_READ },
		{ IBV_ACCESS_LOCAL_WRITE, IBV_WR_ATOMIC_FETCH_AND_ADD },
		{ IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_WRITE },
		{ IBV_ACCESS_REMOTE_READ, IBV_WR_RDMA_WRITE_WITH_IMM },
		{ IBV_ACCESS_REMOTE_READ, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  IBV_WR_RDMA_READ },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE,
		  IBV_WR_ATOMIC_FETCH_AND_ADD },
		{ IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		  IBV_WR_RDMA_WRITE },
		{ 0, IBV_WR_RDMA_READ },
	};

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ibv_sge s = mk_sge(&self->l, 0, op_len(c[i].op));
		struct ibv_send_wr wr;
		struct buf t;

		ASSERT_EQ(0, buf_new(&t, self->p.pd, 4096, c[i].access));
		memset(t.p, 0xee, 4096);
		rdma_wr(&wr, &s, c[i].op, i, buf_addr(&t, 8), t.mr->rkey);
		one_error(_metadata, &self->p, &wr, IBV_WC_REM_ACCESS_ERR,
			  IBV_QPS_ERR, "MR rights");
		EXPECT_UNTOUCHED(t.p, 4096, 0xee, "target memory");
		buf_free(&t);
	}
}

/* The responder QP lacks the remote right: an invalid request. */
TEST_F(err, qp_without_remote_rights)
{
	static const struct { int access; enum ibv_wr_opcode op; } c[] = {
		{ 0, IBV_WR_RDMA_WRITE },
		{ 0, IBV_WR_RDMA_WRITE_WITH_IMM },
		{ 0, IBV_WR_RDMA_READ },
		{ 0, IBV_WR_ATOMIC_CMP_AND_SWP },
		{ 0, IBV_WR_ATOMIC_FETCH_AND_ADD },
		{ IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC,
		  IBV_WR_RDMA_WRITE },
		{ IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC,
		  IBV_WR_RDMA_READ },
		{ IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ,
		  IBV_WR_ATOMIC_FETCH_AND_ADD },
	};

	memset(self->r.p, 0xee, 4096);
	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct ibv_sge s = mk_sge(&self->l, 0, op_len(c[i].op));
		struct ibv_send_wr wr;

		self->p.o.access[1] = c[i].access;
		ASSERT_EQ(0, pair_reconnect(&self->p));
		rdma_wr(&wr, &s, c[i].op, i, buf_addr(&self->r, 8),
			self->r.mr->rkey);
		one_error(_metadata, &self->p, &wr, IBV_WC_REM_INV_REQ_ERR,
			  IBV_QPS_ERR, "QP rights");
	}
	EXPECT_UNTOUCHED(self->r.p, 4096, 0xee, "target memory");
}

TEST_F(err, misaligned_atomic)
{
	for (int k = 1; k < 8; k += 3) {
		struct ibv_sge s = mk_sge(&self->l, 0, 8);
		struct ibv_send_wr wr;

		rdma_wr(&wr, &s, k & 2 ? IBV_WR_ATOMIC_CMP_AND_SWP :
			IBV_WR_ATOMIC_FETCH_AND_ADD, k,
			buf_addr(&self->r, 64 + k), self->r.mr->rkey);
		one_error(_metadata, &self->p, &wr, IBV_WC_REM_INV_REQ_ERR,
			  IBV_QPS_ERR, "misaligned atomic");
	}
}

/*
 * A SEND longer than the receive buffer: the receiver completes the WQE
 * with a local length error, the sender gets "invalid request"; in one
 * packet and when only the third packet overflows.
 */
TEST_F(err, recv_buffer_too_small)
{
	const uint32_t cases[][2] = { { 100, 99 }, { 3000, 2500 },
				      { 1024, 0 } };

	for (int k = 0; k < 3; k++) {
		struct ibv_sge s = mk_sge(&self->l, 0, cases[k][0]);
		struct ibv_sge rs = mk_sge(&self->r, 0, cases[k][1]);

		memset(self->r.p + cases[k][1], 0xee, 4096);
		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 50 + k, &rs, 1));
		ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, k, &s, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		expect_wc("sender", self->p.scq[0], k, IBV_WC_REM_INV_REQ_ERR,
			  ANY, self->qpn[0], ANY, NULL);
		expect_wc("receiver", self->p.rcq[1], 50 + k, IBV_WC_LOC_LEN_ERR,
			  ANY, self->qpn[1], ANY, NULL);
		EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
		EXPECT_STATE_SOON(self->p.qp[1], IBV_QPS_ERR);
		/* Nothing was written past the buffer. */
		EXPECT_UNTOUCHED(self->r.p + cases[k][1], 4096, 0xee,
				 "past the receive buffer");
		ASSERT_EQ(0, pair_reconnect(&self->p));
	}
}

/* The receive WQE's lkey is bad: receiver LOC_PROT_ERR, sender REM_OP_ERR. */
TEST_F(err, recv_bad_lkey)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 100);
	struct ibv_sge rs = mk_sge(&self->r, 0, 100);

	rs.lkey += 0x100;
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 5, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 1, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("sender", self->p.scq[0], 1, IBV_WC_REM_OP_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	expect_wc("receiver", self->p.rcq[1], 5, IBV_WC_LOC_PROT_ERR, ANY,
		  self->qpn[1], ANY, NULL);
	EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
	EXPECT_STATE_SOON(self->p.qp[1], IBV_QPS_ERR);
}

/*
 * Local protection errors on the requester: bad lkey, an SGE running past
 * its MR, a READ into memory without local write. Nothing reaches the
 * responder, which stays in RTS.
 */
TEST_F(err, local_protection)
{
	struct buf ro;

	ASSERT_EQ(0, buf_new(&ro, self->p.pd, 4096, IBV_ACCESS_REMOTE_READ));
	for (int k = 0; k < 6; k++) {
		struct ibv_sge s[2] = { mk_sge(&self->l, 0, 100),
					mk_sge(&self->l, 200, 100) };
		struct ibv_send_wr wr;
		enum ibv_wr_opcode op = k % 2 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND;

		switch (k) {
		case 0: case 1:	/* bad lkey in the second SGE */
			s[1].lkey ^= 0x100;
			break;
		case 2: case 3:	/* second SGE one byte past the MR */
			s[1] = mk_sge(&self->l, BUFSZ - 99, 100);
			break;
		case 4:		/* READ sink without local write */
			s[1] = mk_sge(&ro, 0, 100);
			op = IBV_WR_RDMA_READ;
			break;
		case 5:		/* atomic result without local write */
			s[0] = mk_sge(&ro, 0, 8);
			op = IBV_WR_ATOMIC_FETCH_AND_ADD;
			break;
		}
		rdma_wr(&wr, s, op, k, buf_addr(&self->r, 0), self->r.mr->rkey);
		wr.num_sge = k == 5 ? 1 : 2;
		one_error(_metadata, &self->p, &wr, IBV_WC_LOC_PROT_ERR,
			  IBV_QPS_RTS, "local protection");
	}
	buf_free(&ro);
}

/* More than max_msg_sz: a local length error, nothing is sent. */
TEST_F(err, message_too_long)
{
	struct ibv_port_attr pa;
	struct buf big;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	ASSERT_EQ(0, buf_new(&big, self->p.pd, pa.max_msg_sz + 4096, ACC_ALL));
	for (int k = 0; k < 3; k++) {
		struct ibv_sge s[2] = { mk_sge(&big, 0, pa.max_msg_sz + 1),
					mk_sge(&big, 0, 1) };
		struct ibv_send_wr wr;

		if (k == 2) {	/* two SGEs adding up to one byte too many */
			s[0].length = pa.max_msg_sz;
		}
		rdma_wr(&wr, s, k == 1 ? IBV_WR_RDMA_WRITE : IBV_WR_SEND, k,
			buf_addr(&big, 0), big.mr->rkey);
		wr.num_sge = k == 2 ? 2 : 1;
		one_error(_metadata, &self->p, &wr, IBV_WC_LOC_LEN_ERR,
			  IBV_QPS_RTS, "too long");
	}
	/* The READ's length is its scatter list's. */
	do {
		struct ibv_sge s = mk_sge(&big, 0, pa.max_msg_sz + 1);
		struct ibv_send_wr wr;

		rdma_wr(&wr, &s, IBV_WR_RDMA_READ, 9, buf_addr(&big, 0),
			big.mr->rkey);
		one_error(_metadata, &self->p, &wr, IBV_WC_LOC_LEN_ERR,
			  IBV_QPS_RTS, "READ too long");
	} while (0);
	buf_free(&big);
}

/* No receive and rnr_retry 0: the first RNR NAK fails the SEND. */
TEST_F(err, rnr_retry_0)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 10);
	struct ibv_send_wr wr;
	long t;

	self->p.o.rnr_retry = 0;
	ASSERT_EQ(0, pair_reconnect(&self->p));
	for (int k = 0; k < 2; k++) {
		rdma_wr(&wr, &s, k ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND, k,
			buf_addr(&self->r, 0), self->r.mr->rkey);
		wr.send_flags = IBV_SEND_SIGNALED;
		t = now_ms();
		ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
		expect_wc("rnr", self->p.scq[0], k, IBV_WC_RNR_RETRY_EXC_ERR,
			  ANY, self->qpn[0], ANY, NULL);
		EXPECT_GT(1000, now_ms() - t);
		EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
		/* RNR is no error for the responder. */
		EXPECT_STATE(self->p.qp[1], IBV_QPS_RTS);
		EXPECT_TRUE(cq_quiet(self->p.rcq[1], 50));
		ASSERT_EQ(0, pair_reconnect(&self->p));
	}
}

/* rnr_retry 3 and a 1 ms RNR timer: gives up after a few tries. */
TEST_F(err, rnr_retry_exhausted)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 10);
	long t;

	self->p.o.rnr_retry = 3;
	self->p.o.min_rnr_timer = 14;	/* 0.96 ms */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	t = now_ms();
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 1, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("rnr", self->p.scq[0], 1, IBV_WC_RNR_RETRY_EXC_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	EXPECT_GT(2000, now_ms() - t);
	EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
	EXPECT_STATE(self->p.qp[1], IBV_QPS_RTS);
}

/* rnr_retry 7 (infinite): a receive posted later lets the SEND through. */
TEST_F(err, rnr_retry_7_recv_later)
{
	struct ibv_sge rs = mk_sge(&self->r, 0, 4096);

	self->p.o.min_rnr_timer = 10;	/* 0.32 ms */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	for (int k = 0; k < 2; k++) {
		uint32_t len = k ? 2000 : 3000;
		struct ibv_sge s = mk_sge(&self->l, 0, len);
		struct ibv_send_wr wr;

		fill_pattern(self->l.p, len, k);
		memset(self->r.p, 0, 8192);
		rdma_wr(&wr, &s, k ? IBV_WR_RDMA_WRITE_WITH_IMM : IBV_WR_SEND,
			k, buf_addr(&self->r, 4096), self->r.mr->rkey);
		wr.send_flags = IBV_SEND_SIGNALED;
		ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
		EXPECT_TRUE(cq_quiet(self->p.scq[0], 200));
		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 10 + k, &rs, 1));
		expect_wc("sender", self->p.scq[0], k, IBV_WC_SUCCESS,
			  k ? IBV_WC_RDMA_WRITE : IBV_WC_SEND, self->qpn[0],
			  ANY, NULL);
		expect_wc("receiver", self->p.rcq[1], 10 + k, IBV_WC_SUCCESS,
			  k ? IBV_WC_RECV_RDMA_WITH_IMM : IBV_WC_RECV,
			  self->qpn[1], len, NULL);
		EXPECT_SAME(self->r.p + (k ? 4096 : 0), self->l.p, len, "data");
	}
	EXPECT_STATE(self->p.qp[0], IBV_QPS_RTS);
}

/*
 * Engine field @name of QP @qpn as "rdma -dd resource show qp" prints it
 * (sib's restrack driver attributes), or -1.
 */
static long res_field(uint32_t qpn, const char *name)
{
	char cmd[160], line[4096], *at;
	long val = -1;
	size_t n;
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma -dd resource show qp link " SIB_DEV
		 "/1 lqpn %u 2>&1", qpn);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	n = fread(line, 1, sizeof(line) - 1, f);
	line[n] = 0;
	pclose(f);
	/* iproute2 prints driver attributes as "drv_NAME VALUE" */
	for (at = line; (at = strstr(at, "drv_")); at++) {
		if (!strncmp(at + 4, name, strlen(name)) &&
		    at[4 + strlen(name)] == ' ') {
			val = strtol(at + 4 + strlen(name) + 1, NULL, 0);
			break;
		}
	}
	if (val < 0)
		fprintf(stderr, "# no %s in: %s\n", name, line);
	return val;
}

/*
 * "rdma resource show qp -dd" shows the engines' state: a SEND that met
 * an RNR NAK (no receive, a 491 ms RNR timer) is the one WQE outstanding,
 * and the requester waits for the timer; once a receive lets it through,
 * nothing is outstanding, every PSN is acknowledged, and the responder
 * expects the requester's next PSN.
 */
TEST_F(err, res_show_engine_state)
{
	struct ibv_sge rs = mk_sge(&self->r, 0, 4096);
	struct ibv_sge s = mk_sge(&self->l, 0, 3000);
	struct ibv_send_wr wr;

	self->p.o.min_rnr_timer = 31;	/* 491.52 ms */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	fill_pattern(self->l.p, 3000, 5);
	rdma_wr(&wr, &s, IBV_WR_SEND, 1, 0, 0);
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
	usleep(100000);
	EXPECT_EQ(1, res_field(self->qpn[0], "rnr_wait"));
	EXPECT_EQ(res_field(self->qpn[0], "sq_oldest") + 1,
		  res_field(self->qpn[0], "sq_fetched"));
	EXPECT_EQ(0, res_field(self->qpn[0], "sq_oldest"));

	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 2, &rs, 1));
	expect_wc("sender", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("receiver", self->p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 3000, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 3000, "data");
	EXPECT_EQ(0, res_field(self->qpn[0], "rnr_wait"));
	EXPECT_EQ(1, res_field(self->qpn[0], "sq_oldest"));
	EXPECT_EQ(1, res_field(self->qpn[0], "sq_next"));
	EXPECT_EQ(res_field(self->qpn[0], "psn_next"),
		  res_field(self->qpn[0], "psn_unacked"));
	EXPECT_EQ(res_field(self->qpn[0], "psn_next"),
		  res_field(self->qpn[1], "resp_psn"));
}

#define DBG_QP	"/sys/kernel/debug/sib/" SIB_DEV "/qp"

/* The debugfs view of QP @qpn into @v; its "sq" line's indices. */
static int qp_view(uint32_t qpn, char *v, size_t size, unsigned int sq[6])
{
	char path[96];
	const char *at;

	snprintf(path, sizeof(path), DBG_QP "/%u", qpn);
	if (read_text(path, v, size) <= 0)
		return -1;
	at = strstr(v, "\nsq ");
	if (!sq)
		return 0;
	if (!at || sscanf(at, " sq slots %u prod %u cons %u fetched %u next %u oldest %u",
			  &sq[0], &sq[1], &sq[2], &sq[3], &sq[4], &sq[5]) != 6)
		return -1;
	return 0;
}

/* Field after @key in the line of @v that starts with @line, or -1. */
static long view_field(const char *v, const char *line, const char *key)
{
	char tok[32];
	const char *at, *end;

	snprintf(tok, sizeof(tok), "\n%s ", line);
	at = strstr(v, tok);
	if (!at)
		return -1;
	end = strchr(at + 1, '\n');
	snprintf(tok, sizeof(tok), " %s ", key);
	at = strstr(at, tok);
	if (!at || (end && at > end))
		return -1;
	return strtol(at + strlen(tok), NULL, 10);
}

/*
 * The debugfs view of a QP (sib/<dev>/qp/<qpn>) while a SEND waits for
 * the RNR timer: the SQ's indices with one WQE outstanding, that WQE with
 * its opcode, length and PSNs; after the receive, nothing outstanding,
 * every PSN acknowledged. A destroyed QP's view goes with it.
 */
TEST_F(err, debugfs_qp_view)
{
	struct ibv_sge rs = mk_sge(&self->r, 0, 4096);
	struct ibv_sge s = mk_sge(&self->l, 0, 3000);
	unsigned int sq[6], idx, len, first, last;
	char v[4096], op[16], state[16], status[32], path[96];
	struct ibv_send_wr wr;
	const char *at;
	struct pair p;
	int fd[2], i;
	ssize_t n;

	self->p.o.min_rnr_timer = 31;	/* 491.52 ms */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	rdma_wr(&wr, &s, IBV_WR_SEND, 1, 0, 0);
	wr.send_flags = IBV_SEND_SIGNALED;
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
	usleep(100000);
	ASSERT_EQ(0, qp_view(self->qpn[0], v, sizeof(v), sq))
		TH_LOG("no view of QP %u: %s", self->qpn[0], v);
	TH_LOG("a SEND waiting for the RNR timer:\n%s", v);
	EXPECT_EQ(sq[1], sq[3]);		/* prod == fetched */
	EXPECT_EQ(sq[5] + 1, sq[3]);		/* one outstanding */
	EXPECT_EQ(sq[5], sq[2]);		/* cons == oldest */
	EXPECT_NE(NULL, strstr(v, " state RTS\n"));
	at = strstr(v, "\nwqe ");
	ASSERT_NE(NULL, at);
	ASSERT_EQ(7, sscanf(at, " wqe idx %u op %15s len %u psn %u-%u state %15s status %31s",
			    &idx, op, &len, &first, &last, state, status));
	EXPECT_EQ(sq[5], idx);
	EXPECT_STREQ("SEND", op);
	EXPECT_EQ(3000, len);
	EXPECT_EQ(view_field(v, "psn", "unacked"), first);
	EXPECT_EQ(first + 2, last);		/* 3 packets of 1024 */
	EXPECT_TRUE(!strcmp(state, "sending") || !strcmp(state, "sent"))
		TH_LOG("state %s", state);
	EXPECT_STREQ("SUCCESS", status);
	EXPECT_EQ(NULL, strstr(at + 1, "\nwqe "));
	ASSERT_EQ(0, qp_view(self->qpn[1], v, sizeof(v), NULL));
	EXPECT_EQ(view_field(v, "rq", "prod"), view_field(v, "rq", "cons"));

	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 2, &rs, 1));
	expect_wc("sender", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("receiver", self->p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 3000, NULL);
	ASSERT_EQ(0, qp_view(self->qpn[0], v, sizeof(v), sq));
	EXPECT_EQ(sq[1], sq[3]);
	EXPECT_EQ(sq[2], sq[3]);
	EXPECT_EQ(sq[4], sq[3]);
	EXPECT_EQ(sq[5], sq[3]);
	EXPECT_EQ(NULL, strstr(v, "\nwqe "));
	EXPECT_EQ(view_field(v, "psn", "next"), view_field(v, "psn", "unacked"));
	EXPECT_LE(0, view_field(v, "psn", "next"));
	ASSERT_EQ(0, qp_view(self->qpn[1], v, sizeof(v), NULL));
	EXPECT_EQ(view_field(v, "rq", "prod"), view_field(v, "rq", "cons"));
	EXPECT_LE(1, view_field(v, "rq", "prod"));

	/*
	 * The view lives as long as its QP. A view open across its QP's
	 * destroy, read in part before or not at all, reads as an error
	 * (EIO) or nothing afterwards: never the freed QP.
	 */
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, NULL));
	snprintf(path, sizeof(path), DBG_QP "/%u", p.qp[0]->qp_num);
	EXPECT_TRUE(path_exists(path));
	fd[0] = open(path, O_RDONLY);
	ASSERT_LE(0, fd[0]);
	fd[1] = open(path, O_RDONLY);
	ASSERT_LE(0, fd[1]);
	EXPECT_EQ(16, read(fd[0], v, 16));
	pair_destroy(&p);
	EXPECT_FALSE(path_exists(path));
	for (i = 0; i < 2; i++) {
		errno = 0;
		n = read(fd[i], v, sizeof(v));
		TH_LOG("fd %d: read %zd after the destroy, errno %d", i, n,
		       errno);
		EXPECT_TRUE(n == 0 || (n < 0 && errno == EIO));
		close(fd[i]);
	}
}

/*
 * A read shows the 64 oldest outstanding WQEs and counts the others: 100
 * WRITEs to a QP number that does not exist, with an infinite timeout,
 * all sent and none acknowledged. The QP is then destroyed with them
 * outstanding.
 */
TEST_F(err, debugfs_qp_view_bounded)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 8);
	unsigned int sq[6], lines = 0;
	struct pair_opts o;
	char v[16384];
	const char *at;
	struct pair p;

	pair_default_opts(&o);
	o.dest_qpn[0] = 0xfedcba;
	o.timeout = 0;
	o.sq_wr = 128;
	o.cq_depth = 256;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	for (uint32_t i = 0; i < 100; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1, 0,
				     buf_addr(&self->r, 0), self->r.mr->rkey));
	usleep(100000);
	ASSERT_EQ(0, qp_view(p.qp[0]->qp_num, v, sizeof(v), sq));
	EXPECT_EQ(100, sq[1]);
	EXPECT_EQ(100, sq[3]);			/* all fetched */
	EXPECT_EQ(0, sq[5]);			/* none completed */
	for (at = v; (at = strstr(at, "\nwqe idx ")); at++)
		lines++;
	EXPECT_EQ(64, lines);
	EXPECT_NE(NULL, strstr(v, "\nwqe idx 63 op WRITE len 8 "));
	EXPECT_NE(NULL, strstr(v, "\nmore 36\n")) TH_LOG("%s", v);
	pair_destroy(&p);
}

/* Reads every QP's view until *@arg turns true; the number of reads. */
static void *qp_view_reader(void *arg)
{
	volatile bool *stop = arg;
	char path[300], buf[4096];
	uintptr_t reads = 0;
	struct dirent *e;
	DIR *d;

	while (!*stop) {
		d = opendir(DBG_QP);
		if (!d)
			break;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), DBG_QP "/%s", e->d_name);
			if (read_text(path, buf, sizeof(buf)) > 0)
				reads++;
		}
		closedir(d);
	}
	return (void *)reads;
}

/*
 * The views read in a loop while QPs come and go: each read finds its QP
 * or fails, and destroy_qp waits for a read in progress (a use after
 * free here would end the guest: oops=panic).
 */
TEST_F(err, debugfs_qp_view_churn)
{
	volatile bool stop = false;
	pthread_t reader;
	struct pair p;
	void *reads;
	int i;

	if (!path_exists(DBG_QP))
		SKIP(return, "no " DBG_QP);
	ASSERT_EQ(0, pthread_create(&reader, NULL, qp_view_reader,
				    (void *)&stop));
	for (i = 0; i < 30; i++) {
		ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid,
					 NULL));
		usleep(1000);
		pair_destroy(&p);
	}
	stop = true;
	ASSERT_EQ(0, pthread_join(reader, &reads));
	TH_LOG("%lu reads of views", (unsigned long)(uintptr_t)reads);
	EXPECT_LT(0, (uintptr_t)reads);
}

/*
 * After an error every later WQE, signaled or not, and every receive
 * completes with WR_FLUSH_ERR, in order; WQEs posted in ERR too.
 */
TEST_F(err, flush_after_error)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 64);
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_send_wr wr[5];

	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 100 + i, &rs, 1));
	for (int i = 0; i < 5; i++) {
		rdma_wr(&wr[i], &s, i % 2 ? IBV_WR_SEND : IBV_WR_RDMA_WRITE, i,
			buf_addr(&self->r, 0), self->r.mr->rkey);
		wr[i].send_flags = i == 3 ? 0 : IBV_SEND_SIGNALED;
		wr[i].next = i < 4 ? &wr[i + 1] : NULL;
	}
	wr[2].opcode = IBV_WR_RDMA_READ;
	wr[2].wr.rdma.rkey ^= 0x100;	/* the failing one */
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], wr));
	expect_wc("write", self->p.scq[0], 0, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->qpn[0], ANY, NULL);
	expect_wc("send", self->p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("bad read", self->p.scq[0], 2, IBV_WC_REM_ACCESS_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	/* IBA: WQEs completed in error complete even if unsignaled. */
	expect_wc("flushed unsignaled", self->p.scq[0], 3,
		  IBV_WC_WR_FLUSH_ERR, ANY, self->qpn[0], ANY, NULL);
	expect_wc("flushed", self->p.scq[0], 4, IBV_WC_WR_FLUSH_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
	/* The responder NAKed a remote access error: ERR, receives flushed. */
	expect_wc("recv 0", self->p.rcq[1], 100, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 64, NULL);
	expect_wc("recv 1", self->p.rcq[1], 101, IBV_WC_WR_FLUSH_ERR, ANY,
		  self->qpn[1], ANY, NULL);
	expect_wc("recv 2", self->p.rcq[1], 102, IBV_WC_WR_FLUSH_ERR, ANY,
		  self->qpn[1], ANY, NULL);
	EXPECT_STATE_SOON(self->p.qp[1], IBV_QPS_ERR);

	/* Posting in ERR works and flushes at once, on both queues. */
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 7, &s, 1, 0, 0, 0));
	expect_wc("posted in ERR", self->p.scq[0], 7, IBV_WC_WR_FLUSH_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[0], 8, &rs, 1));
	expect_wc("recv posted in ERR", self->p.rcq[0], 8, IBV_WC_WR_FLUSH_ERR,
		  ANY, self->qpn[0], ANY, NULL);
	EXPECT_TRUE(cq_quiet(self->p.scq[0], 50));
	EXPECT_TRUE(cq_quiet(self->p.rcq[1], 0));
}

/* Modify to ERR flushes the posted receives, in order. */
TEST_F(err, modify_to_err_flushes)
{
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_sge s = mk_sge(&self->l, 0, 64);

	for (int i = 0; i < 5; i++)
		ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 200 + i, &rs, 1));
	ASSERT_EQ(0, qp_modify_state(self->p.qp[1], IBV_QPS_ERR));
	EXPECT_STATE(self->p.qp[1], IBV_QPS_ERR);
	for (int i = 0; i < 5; i++)
		expect_wc("flushed", self->p.rcq[1], 200 + i,
			  IBV_WC_WR_FLUSH_ERR, ANY, self->qpn[1], ANY, NULL);
	EXPECT_TRUE(cq_quiet(self->p.rcq[1], 50));
	EXPECT_TRUE(cq_quiet(self->p.scq[1], 0));
	/* And back: ERR -> RESET -> RTS works, traffic flows again. */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 300, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 301, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 301, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->qpn[0], ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 300, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->qpn[1], 64, NULL);
}

/* The verbs refuse posting where the IBA says so. */
TEST_F(err, post_in_wrong_state)
{
	struct ibv_qp_init_attr a = {
		.send_cq = self->p.scq[0], .recv_cq = self->p.rcq[0],
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
	};
	struct ibv_sge s = mk_sge(&self->l, 0, 8);
	struct ibv_qp *qp = ibv_create_qp(self->p.pd, &a);
	struct ibv_qp_attr at = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	ASSERT_NE(NULL, qp);
	EXPECT_STATE(qp, IBV_QPS_RESET);
	EXPECT_EQ(EINVAL, post_recv_sges(qp, 1, &s, 1));
	EXPECT_EQ(EINVAL, post_op(qp, IBV_WR_SEND, 2, &s, 1, 0, 0, 0));
	ASSERT_EQ(0, ibv_modify_qp(qp, &at, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
				   IBV_QP_PORT | IBV_QP_ACCESS_FLAGS));
	/* INIT: receives yes, sends no. */
	EXPECT_EQ(0, post_recv_sges(qp, 3, &s, 1));
	EXPECT_EQ(EINVAL, post_op(qp, IBV_WR_SEND, 4, &s, 1, 0, 0, 0));
	/* Back to RESET drops the receive without a completion. */
	ASSERT_EQ(0, qp_modify_state(qp, IBV_QPS_RESET));
	EXPECT_TRUE(cq_quiet(self->p.rcq[0], 50));
	EXPECT_EQ(EINVAL, post_recv_sges(qp, 5, &s, 1));
	EXPECT_EQ(0, ibv_destroy_qp(qp));
}

/*
 * A full SQ or RQ refuses the next WQE with ENOMEM: the QP sends to a QP
 * number that does not exist and has an infinite timeout, so nothing it
 * posts completes.
 */
TEST_F(err, queue_full_enomem)
{
	struct pair_opts o;
	struct pair p;
	struct ibv_sge s = mk_sge(&self->l, 0, 8);

	pair_default_opts(&o);
	o.dest_qpn[0] = 0xfedcba;
	o.timeout = 0;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	ASSERT_LE(o.sq_wr, p.cap[0].max_send_wr);
	ASSERT_LE(o.rq_wr, p.cap[0].max_recv_wr);
	for (uint32_t i = 0; i < p.cap[0].max_send_wr; i++) {
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, i, &s, 1,
				     IBV_SEND_SIGNALED, 0, 0))
			TH_LOG("WQE %u of %u", i, p.cap[0].max_send_wr);
	}
	EXPECT_EQ(ENOMEM, post_op(p.qp[0], IBV_WR_SEND, 999, &s, 1, 0, 0, 0));
	for (uint32_t i = 0; i < p.cap[0].max_recv_wr; i++)
		ASSERT_EQ(0, post_recv_sges(p.qp[0], i, &s, 1));
	EXPECT_EQ(ENOMEM, post_recv_sges(p.qp[0], 999, &s, 1));
	EXPECT_TRUE(cq_quiet(p.scq[0], 100));
	/* ERR flushes all of them, each once. */
	ASSERT_EQ(0, qp_modify_state(p.qp[0], IBV_QPS_ERR));
	for (uint32_t i = 0; i < p.cap[0].max_send_wr; i++)
		expect_wc("flushed send", p.scq[0], i, IBV_WC_WR_FLUSH_ERR, ANY,
			  p.qp[0]->qp_num, ANY, NULL);
	for (uint32_t i = 0; i < p.cap[0].max_recv_wr; i++)
		expect_wc("flushed recv", p.rcq[0], i, IBV_WC_WR_FLUSH_ERR, ANY,
			  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_TRUE(cq_quiet(p.scq[0], 50));
	EXPECT_TRUE(cq_quiet(p.rcq[0], 0));
	pair_destroy(&p);
}

/*
 * Nobody answers (no such QP behind the GID): with timeout 8 (about 1 ms)
 * and retry_cnt 1 the WQE fails with RETRY_EXC_ERR in bounded time.
 */
TEST_F(err, retry_exhausted)
{
	struct pair_opts o;
	struct pair p;
	struct ibv_sge s = mk_sge(&self->l, 0, 3000);
	long t;

	pair_default_opts(&o);
	o.dest_qpn[0] = 0xfedcba;
	o.timeout = 8;
	o.retry_cnt = 1;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	for (int k = 0; k < 3; k++) {
		enum ibv_wr_opcode op = k == 0 ? IBV_WR_SEND : k == 1 ?
			IBV_WR_RDMA_READ : IBV_WR_ATOMIC_FETCH_AND_ADD;

		if (k == 2)
			s.length = 8;
		t = now_ms();
		ASSERT_EQ(0, post_op(p.qp[0], op, k, &s, 1, IBV_SEND_SIGNALED,
				     buf_addr(&self->r, 0), self->r.mr->rkey));
		expect_wc("retry", p.scq[0], k, IBV_WC_RETRY_EXC_ERR, ANY,
			  p.qp[0]->qp_num, ANY, NULL);
		t = now_ms() - t;
		TH_LOG("opcode %d: RETRY_EXC_ERR after %ld ms", op, t);
		EXPECT_GT(2000, t);
		EXPECT_STATE_SOON(p.qp[0], IBV_QPS_ERR);
		ASSERT_EQ(0, pair_reconnect(&p));
	}
	pair_destroy(&p);
}

/*
 * A READ whose responses are all lost, and the responder's MR deregistered
 * before the requester retries: the retried READ is a duplicate (IBA
 * 9.7.5.2.2), executed again and so checked again like a new one. Its
 * R_Key no longer resolves, so the responder answers with a remote access
 * NAK: the READ completes with REM_ACCESS_ERR and both QPs go to ERR. A
 * responder that dropped the duplicate silently would leave the requester
 * to use up its retries (RETRY_EXC_ERR), as if the peer were gone.
 */
TEST_F(err, dup_read_after_dereg)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 65536);
	struct pair_opts o;
	struct pair p;
	struct buf r2;
	long long drops = 0;

	pair_default_opts(&o);
	o.timeout = 14;		/* 67 ms: 7 retries take half a second */
	o.retry_cnt = 7;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	ASSERT_EQ(0, buf_new(&r2, self->p.pd, 65536, ACC_ALL));
	ASSERT_EQ(0, fault_knob_set("sib0", "classes", 8));	/* READ responses */
	ASSERT_EQ(0, fault_knob_set("sib0", "drop", 1000000));
	ASSERT_EQ(0, fault_knob_set("sib0", "dir", 3));
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 1));
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_READ, 1, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&r2, 0), r2.mr->rkey));
	/* The READ was answered, and the answer lost. */
	for (int i = 0; i < 200 && drops <= 0; i++) {
		usleep(5000);
		drops = fault_knob_get("sib0", "injected_drop");
	}
	ASSERT_LT(0, drops) TH_LOG("no READ response was sent");
	ASSERT_EQ(0, ibv_dereg_mr(r2.mr));
	r2.mr = NULL;
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 0));
	expect_wc("READ retried after the MR went away", p.scq[0], 1,
		  IBV_WC_REM_ACCESS_ERR, ANY, p.qp[0]->qp_num, ANY, NULL);
	EXPECT_STATE_SOON(p.qp[0], IBV_QPS_ERR);
	EXPECT_STATE_SOON(p.qp[1], IBV_QPS_ERR);
	buf_free(&r2);
	pair_destroy(&p);
}

/*
 * An ATOMIC WRITE is answered by a READ response without data (IBA 1.5,
 * and rdma_rxe's answer), from a responder resource: with every response
 * lost, the requester sends it again, and the duplicate is answered again
 * but not executed again. Between the first execution and the retry the
 * target is changed: it must keep that change. (A responder that answered
 * with a plain ACK loses no response here; one that executed the
 * duplicate writes the old value back.)
 */
TEST_F(err, dup_atomic_write)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 8);
	uint64_t v = 0x1122334455667788ull, w = 0xa5a5a5a5a5a5a5a5ull;
	long long drops = 0, dup0 = link_counter("sib0", "duplicate_requests");
	volatile uint64_t *target = (uint64_t *)(self->r.p + 64);
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.timeout = 14;		/* 67 ms */
	o.retry_cnt = 7;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	memcpy(self->l.p, &v, 8);
	*target = 0;
	ASSERT_EQ(0, fault_knob_set("sib0", "classes", 8));	/* responses */
	ASSERT_EQ(0, fault_knob_set("sib0", "drop", 1000000));
	ASSERT_EQ(0, fault_knob_set("sib0", "dir", 3));
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 1));
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_ATOMIC_WRITE, 1, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 64),
			     self->r.mr->rkey));
	for (int i = 0; i < 400 && (drops <= 0 || *target != v); i++) {
		usleep(5000);
		drops = fault_knob_get("sib0", "injected_drop");
	}
	EXPECT_EQ(v, *target);
	ASSERT_LT(0, drops) TH_LOG("no response to the ATOMIC WRITE was lost");
	*target = w;
	/* Let a retry or two come, answered and lost, then let one through. */
	usleep(150000);
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 0));
	expect_wc("ATOMIC WRITE answered again", p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_ATOMIC_WRITE, p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(w, *target) TH_LOG("the duplicate was executed again");
	EXPECT_LT(0, link_counter("sib0", "duplicate_requests") - dup0);
	pair_destroy(&p);
}

/*
 * ACKs that come back after the local ACK timeout, in the middle of a
 * message longer than the window (1 MiB at MTU 256: 4096 packets, 1024 in
 * flight): the timeout sends the oldest packet again, then the late ACKs
 * acknowledge past it and the requester must go on from the acknowledged
 * PSN *with the data of that PSN*. The timeout is 33.6 ms; every ACK
 * is delayed by 30 to 70 ms. A WRITE and a SEND of 1 MiB arrive intact, and
 * the receive completes with the right length (a requester that went on
 * from the wrong offset sends more data than the message holds: the
 * responder answers with an invalid request NAK, or the receive fails
 * with a length error).
 */
TEST_F_TIMEOUT(err, late_acks_mid_message, 600)
{
	struct ibv_sge ls = mk_sge(&self->l, 0, BUFSZ);
	struct ibv_sge rs = mk_sge(&self->r, 0, BUFSZ);
	long long t0 = link_counter("sib0", "ack_timeouts");
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.mtu = IBV_MTU_256;
	o.timeout = 13;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->p.pd, self->gid, &o));
	ASSERT_EQ(0, fault_knob_set("sib0", "classes", 16));	/* ACKs */
	ASSERT_EQ(0, fault_knob_set("sib0", "delay", 1000000));
	ASSERT_EQ(0, fault_knob_set("sib0", "dir", 3));
	fill_pattern(self->l.p, BUFSZ, 41);
	/*
	 * When the late ACKs arrive relative to the timeout and the resend
	 * depends on the machine's speed: sweep the delay around it.
	 */
	for (int d = 30; d <= 70; d += 4) {
		ASSERT_EQ(0, fault_knob_set("sib0", "delay_us", d * 1000));
		ASSERT_EQ(0, fault_knob_set("sib0", "active", 1));
		memset(self->r.p, 0, BUFSZ);
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, d, &ls, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
		expect_wc("write", p.scq[0], d, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_WRITE, p.qp[0]->qp_num, ANY, NULL);
		EXPECT_SAME(self->r.p, self->l.p, BUFSZ, "write");

		memset(self->r.p, 0, BUFSZ);
		ASSERT_EQ(0, post_recv_sges(p.qp[1], d + 1, &rs, 1));
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, d + 2, &ls, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		expect_wc("recv", p.rcq[1], d + 1, IBV_WC_SUCCESS,
			  IBV_WC_RECV, p.qp[1]->qp_num, BUFSZ, NULL);
		expect_wc("send", p.scq[0], d + 2, IBV_WC_SUCCESS, IBV_WC_SEND,
			  p.qp[0]->qp_num, ANY, NULL);
		EXPECT_SAME(self->r.p, self->l.p, BUFSZ, "send");
		/* Let the last late ACKs come home before the next round. */
		ASSERT_EQ(0, fault_knob_set("sib0", "active", 0));
		usleep(100000);
	}
	EXPECT_LT(0, fault_knob_get("sib0", "injected_delay"));
	/* The case happened: the ACK timer fired while ACKs were on the way. */
	EXPECT_LT(t0, link_counter("sib0", "ack_timeouts"));
	TH_LOG("ack_timeouts %lld, retransmits %lld",
	       link_counter("sib0", "ack_timeouts"),
	       link_counter("sib0", "retransmits"));
	pair_destroy(&p);
}

/* SEND_WITH_INV naming a user MR's rkey: MRs cannot be invalidated. */
TEST_F(err, send_with_inv_of_mr)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 16);
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_send_wr wr = { .wr_id = 1, .sg_list = &s, .num_sge = 1,
				  .opcode = IBV_WR_SEND_WITH_INV,
				  .send_flags = IBV_SEND_SIGNALED,
				  .invalidate_rkey = self->r.mr->rkey };

	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 2, &rs, 1));
	ASSERT_EQ(0, post_send_wr(self->p.qp[0], &wr));
	expect_wc("sender", self->p.scq[0], 1, IBV_WC_REM_INV_REQ_ERR, ANY,
		  self->qpn[0], ANY, NULL);
	expect_wc("receiver", self->p.rcq[1], 2, IBV_WC_REM_INV_REQ_ERR, ANY,
		  self->qpn[1], ANY, NULL);
	EXPECT_STATE_SOON(self->p.qp[0], IBV_QPS_ERR);
	EXPECT_STATE_SOON(self->p.qp[1], IBV_QPS_ERR);
	/* The MR still works. */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 3, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("write", self->p.scq[0], 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  self->qpn[0], ANY, NULL);
}

SIB_HARNESS_MAIN
