// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Hostile rings: the process scribbles over the SQ, RQ, SRQ and CQ rings
 * it shares with the kernel (found as the mappings of
 * /dev/infiniband/uverbs* that each create added), including their
 * indices, and rings the doorbell. The kernel must survive (vm-run fails
 * the run on any WARNING/BUG in dmesg), never trust an index or a WQE
 * field, and put the QP (or CQ) in the error state, or fail the WQEs with
 * the right status. The rings' layout is the ABI in uapi/rdma_user_sib.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"
#include "../uapi/rdma_user_sib.h"
#include "sib_rings.h"

#define BUFSZ	(256 * 1024)
#define MAXMAP	64

struct map {
	uint8_t *start;
	size_t len;
	unsigned long pgoff;
};

/* The uverbs mappings of this process, sorted by file offset. */
static int uverbs_maps(struct map *m, int max)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	int n = 0;

	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f) && n < max) {
		unsigned long a, b, off;

		if (!strstr(line, "/dev/infiniband/uverbs"))
			continue;
		if (sscanf(line, "%lx-%lx %*s %lx", &a, &b, &off) != 3)
			continue;
		m[n].start = (uint8_t *)a;
		m[n].len = b - a;
		m[n].pgoff = off;
		n++;
	}
	fclose(f);
	for (int i = 0; i < n; i++)
		for (int j = i + 1; j < n; j++)
			if (m[j].pgoff < m[i].pgoff) {
				struct map t = m[i];

				m[i] = m[j];
				m[j] = t;
			}
	return n;
}

/* Mappings in @after that are not in @before, in file-offset order. */
static int new_maps(struct map *before, int nb, struct map *after, int na,
		    struct map *out)
{
	int n = 0;

	for (int i = 0; i < na; i++) {
		bool old = false;

		for (int j = 0; j < nb; j++)
			old |= after[i].start == before[j].start;
		if (!old)
			out[n++] = after[i];
	}
	return n;
}

/* A pair whose QP 0 rings we know. */
struct hpair {
	struct pair p;
	struct map scq0, rcq0, sq0, rq0;
	uint32_t sq_slot, rq_slot;	/* found by posting */
};

#define MAGIC	0xfeedface12345678ull

/* Byte offset of the 8-byte @v at an 8-aligned place in @m, or -1. */
static long find_u64(struct map *m, uint64_t v)
{
	for (size_t off = SIB_RING_HDR_SIZE; off + 8 <= m->len; off += 8)
		if (!memcmp(m->start + off, &v, 8))
			return off;
	return -1;
}

static struct sib_ring_hdr *hdr(struct map *m)
{
	return (struct sib_ring_hdr *)m->start;
}

static void *slot(struct map *m, uint32_t slot_size, uint32_t nslots,
		  uint32_t idx)
{
	return m->start + SIB_RING_HDR_SIZE +
	       (size_t)(idx & (nslots - 1)) * slot_size;
}

static void hostile_opts(struct pair_opts *o)
{
	pair_default_opts(o);
	o->sq_wr = 16;
	o->rq_wr = 16;
	o->max_sge = 2;
	o->max_inline = 64;
	o->cq_depth = 64;
	o->rnr_retry = 0;
	o->timeout = 8;
	o->retry_cnt = 1;
}

/*
 * Create a pair and find QP 0's rings: pair_create makes 4 CQs (send and
 * recv of QP 0, then of QP 1), then QP 0 (SQ, RQ), then QP 1.
 */
static void hpair_create(struct __test_metadata *_metadata,
			 struct ibv_context *ctx, struct ibv_pd *pd, int gid,
			 struct hpair *h)
{
	struct map before[MAXMAP], after[MAXMAP], nm[MAXMAP];
	struct pair_opts o;
	struct ibv_sge s = { 0 };
	int nb, na, n;

	hostile_opts(&o);
	nb = uverbs_maps(before, MAXMAP);
	ASSERT_LE(0, nb);
	ASSERT_EQ(0, pair_create(&h->p, ctx, pd, gid, &o));
	na = uverbs_maps(after, MAXMAP);
	n = new_maps(before, nb, after, na, nm);
	ASSERT_EQ(8, n) TH_LOG("%d new uverbs mappings", n);
	h->scq0 = nm[0];
	h->rcq0 = nm[1];
	h->sq0 = nm[4];
	h->rq0 = nm[5];
	/* Check the guess: a receive moves exactly QP 0's RQ prod. */
	ASSERT_EQ(0u, hdr(&h->rq0)->prod);
	ASSERT_EQ(0, post_recv_sges(h->p.qp[0], 1, &s, 1));
	ASSERT_EQ(1u, hdr(&h->rq0)->prod);
	ASSERT_EQ(0u, hdr(&h->sq0)->prod);
	/* A send moves the SQ prod and lands on QP 0's send CQ. */
	ASSERT_EQ(0, post_op(h->p.qp[0], IBV_WR_RDMA_WRITE, 2, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1u, hdr(&h->sq0)->prod);
	do {
		struct ibv_wc wc;

		ASSERT_EQ(1, poll_n(h->p.scq[0], &wc, 1, WAIT_MS));
		ASSERT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(1u, hdr(&h->scq0)->cons);
		ASSERT_EQ(1u, hdr(&h->scq0)->prod);
	} while (0);
	/*
	 * Slot sizes: the second WQE of each queue (index 1) starts at
	 * SIB_RING_HDR_SIZE + slot_size (wr_id is a WQE's first field).
	 */
	ASSERT_EQ(0, post_recv_sges(h->p.qp[0], MAGIC, &s, 1));
	ASSERT_EQ(0, post_op(h->p.qp[0], IBV_WR_RDMA_WRITE, MAGIC, NULL, 0, 0,
			     0, 0));
	h->rq_slot = find_u64(&h->rq0, MAGIC) - SIB_RING_HDR_SIZE;
	h->sq_slot = find_u64(&h->sq0, MAGIC) - SIB_RING_HDR_SIZE;
	ASSERT_TRUE(h->rq_slot >= 32 && !(h->rq_slot & (h->rq_slot - 1)))
		TH_LOG("RQ slot size %u", h->rq_slot);
	ASSERT_TRUE(h->sq_slot >= 64 && !(h->sq_slot & (h->sq_slot - 1)))
		TH_LOG("SQ slot size %u", h->sq_slot);
	/* Drop the receives: rings empty and in step again. */
	usleep(50000);
	ASSERT_EQ(0, pair_reconnect(&h->p));
}

FIXTURE(ring) {
	struct ibv_context *ctx;
	int gid;
	struct ibv_pd *pd;
	struct buf l, r;
	struct hpair h;
	uint32_t sq_slot, sq_n, rq_slot, rq_n;
};

FIXTURE_SETUP(ring)
{
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	ASSERT_EQ(0, buf_new(&self->l, self->pd, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, buf_new(&self->r, self->pd, BUFSZ, ACC_ALL));
	hpair_create(_metadata, self->ctx, self->pd, self->gid, &self->h);
	/* Slot geometry: nslots = granted max_wr (a power of two). */
	self->sq_n = self->h.p.cap[0].max_send_wr;
	self->rq_n = self->h.p.cap[0].max_recv_wr;
	self->sq_slot = self->h.sq_slot;
	self->rq_slot = self->h.rq_slot;
}

FIXTURE_TEARDOWN(ring)
{
	pair_destroy(&self->h.p);
	buf_free(&self->l);
	buf_free(&self->r);
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	sib_lo_teardown(self->ctx);
	/* The device goes away cleanly after all of it. */
}

/* The device still works: a fresh pair moves a SEND. */
static void device_healthy(struct __test_metadata *_metadata,
			   FIXTURE_DATA(ring) *self)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 2000);
	struct ibv_sge rs = mk_sge(&self->r, 0, 2000);
	struct pair p;

	fill_pattern(self->l.p, 2000, 99);
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 1, &rs, 1));
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 2, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("healthy send", p.scq[0], 2, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	expect_wc("healthy recv", p.rcq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 2000, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 2000, "healthy data");
	pair_destroy(&p);
}

/* Publish one hand-made send WQE at QP 0's SQ and ring the doorbell. */
static void put_swqe(FIXTURE_DATA(ring) *self, const struct sib_send_wqe *w,
		     const void *tail, size_t tail_len)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	uint32_t prod = h->prod;
	uint8_t *s = slot(&self->h.sq0, self->sq_slot, self->sq_n, prod);

	memcpy(s, w, sizeof(*w));
	if (tail_len)
		memcpy(s + SIB_SEND_WQE_HDR, tail,
		       tail_len < self->sq_slot - SIB_SEND_WQE_HDR ?
		       tail_len : self->sq_slot - SIB_SEND_WQE_HDR);
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
	uv_doorbell(self->h.p.qp[0], false);
}

/* Each bad WQE fails with the status the kernel's checks give. */
TEST_F(ring, bad_send_wqes)
{
	struct sib_sge big[2] = {
		{ buf_addr(&self->l, 0), 0xffffffff, self->l.mr->lkey },
		{ buf_addr(&self->l, 0), 0xffffffff, self->l.mr->lkey },
	};
	struct sib_sge ok = { buf_addr(&self->l, 0), 8, self->l.mr->lkey };
	static const struct { const char *what; uint8_t opcode; uint16_t num_sge;
			      uint32_t flags, inline_len; int tail;
			      enum ibv_wc_status st; } c[] = {
		{ "bogus opcode", 0xee, 0, IBV_SEND_SIGNALED, 0, 0,
		  IBV_WC_LOC_QP_OP_ERR },
		{ "opcode 0xff", 0xff, 1, IBV_SEND_SIGNALED, 0, 1,
		  IBV_WC_LOC_QP_OP_ERR },
		{ "huge num_sge", IBV_WR_SEND, 0xffff, IBV_SEND_SIGNALED, 0, 1,
		  IBV_WC_LOC_QP_OP_ERR },
		{ "huge inline_len", IBV_WR_SEND, 0,
		  IBV_SEND_SIGNALED | IBV_SEND_INLINE, 0xffffffff, 0,
		  IBV_WC_LOC_QP_OP_ERR },
		{ "inline atomic", IBV_WR_ATOMIC_FETCH_AND_ADD, 0,
		  IBV_SEND_SIGNALED | IBV_SEND_INLINE, 8, 0,
		  IBV_WC_LOC_QP_OP_ERR },
		{ "length overflows 32 bits", IBV_WR_RDMA_WRITE, 2,
		  IBV_SEND_SIGNALED, 0, 2, IBV_WC_LOC_LEN_ERR },
		{ "atomic of 16 bytes", IBV_WR_ATOMIC_FETCH_AND_ADD, 2,
		  IBV_SEND_SIGNALED, 0, 3, IBV_WC_LOC_LEN_ERR },
		{ "unsignaled bad opcode", 0x42, 0, 0, 0, 0,
		  IBV_WC_LOC_QP_OP_ERR },
	};

	for (unsigned int i = 0; i < sizeof(c) / sizeof(c[0]); i++) {
		struct sib_send_wqe w = { .wr_id = 0xbad0 + i };
		struct sib_sge two_ok[2] = { ok, ok };

		w.opcode = c[i].opcode;
		w.num_sge = c[i].num_sge;
		w.send_flags = c[i].flags;
		w.inline_len = c[i].inline_len;
		w.wr.rdma.remote_addr = buf_addr(&self->r, 0);
		w.wr.rdma.rkey = self->r.mr->rkey;
		if (c[i].opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
			w.wr.atomic.remote_addr = buf_addr(&self->r, 0);
			w.wr.atomic.rkey = self->r.mr->rkey;
		}
		put_swqe(self, &w, c[i].tail == 2 ? (void *)big :
			 c[i].tail == 3 ? (void *)two_ok : (void *)&ok,
			 c[i].tail ? 2 * sizeof(ok) : 0);
		expect_wc(c[i].what, self->h.p.scq[0], 0xbad0 + i, c[i].st, ANY,
			  self->h.p.qp[0]->qp_num, ANY, NULL);
		EXPECT_STATE_SOON(self->h.p.qp[0], IBV_QPS_ERR);
		/* Nothing reached the peer. */
		EXPECT_STATE(self->h.p.qp[1], IBV_QPS_RTS);
		ASSERT_EQ(0, pair_reconnect(&self->h.p));
	}
	device_healthy(_metadata, self);
}

/* prod far ahead of what the kernel consumed: a corrupted ring. */
TEST_F(ring, sq_prod_far_ahead)
{
	static const uint32_t d[] = { 17, 0x80000000u, 0xffffffffu, 1u << 20 };

	for (int k = 0; k < 4; k++) {
		struct sib_ring_hdr *h = hdr(&self->h.sq0);

		h->prod = h->cons + d[k];
		EXPECT_EQ(0, uv_doorbell(self->h.p.qp[0], false));
		EXPECT_STATE_SOON(self->h.p.qp[0], IBV_QPS_ERR);
		/* A valid WR on top still rings the doorbell; the kernel
		 * keeps the QP in ERR.
		 */
		post_op(self->h.p.qp[0], IBV_WR_SEND, 5, NULL, 0,
			IBV_SEND_SIGNALED, 0, 0);
		EXPECT_STATE_SOON(self->h.p.qp[0], IBV_QPS_ERR);
		EXPECT_STATE(self->h.p.qp[1], IBV_QPS_RTS);
		cq_drain(self->h.p.scq[0]);
		ASSERT_EQ(0, pair_reconnect(&self->h.p));
	}
	device_healthy(_metadata, self);
}

/* The receiver's RQ is corrupted: the SEND fails, the receiver goes to ERR. */
TEST_F(ring, rq_corrupted)
{
	for (int k = 0; k < 3; k++) {
		struct sib_ring_hdr *h = hdr(&self->h.rq0);
		struct ibv_sge s = mk_sge(&self->l, 0, 100);
		struct ibv_wc wc;

		if (k == 0) {
			h->prod = h->cons + 1000;
		} else {
			struct sib_recv_wqe *w = slot(&self->h.rq0,
						      self->rq_slot,
						      self->rq_n, h->prod);

			w->wr_id = 0x1234;
			w->num_sge = k == 1 ? 0xffffffff : 33;
			__atomic_store_n(&h->prod, h->prod + 1,
					 __ATOMIC_RELEASE);
		}
		/* QP 1 sends to QP 0, whose RQ is bad. */
		ASSERT_EQ(0, post_op(self->h.p.qp[1], IBV_WR_SEND, 7, &s, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		ASSERT_EQ(1, poll_n(self->h.p.scq[1], &wc, 1, WAIT_MS));
		EXPECT_EQ(IBV_WC_REM_OP_ERR, wc.status)
			TH_LOG("case %d: sender got %s", k, wcs(wc.status));
		EXPECT_STATE_SOON(self->h.p.qp[0], IBV_QPS_ERR);
		cq_drain(self->h.p.rcq[0]);
		ASSERT_EQ(0, pair_reconnect(&self->h.p));
	}
	device_healthy(_metadata, self);
}

/* The CQ's consumer index ahead of its producer: an overrun. */
TEST_F(ring, cq_cons_ahead_of_prod)
{
	struct sib_ring_hdr *h = hdr(&self->h.scq0);
	struct ibv_async_event ev;

	h->cons = h->prod + 1000;
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 3, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	ASSERT_TRUE(wait_async_event(self->ctx, IBV_EVENT_CQ_ERR, WAIT_MS, &ev));
	EXPECT_EQ(self->h.p.scq[0], ev.element.cq);
	EXPECT_STATE_SOON(self->h.p.qp[0], IBV_QPS_ERR);
	EXPECT_TRUE(h->flags & SIB_RING_F_CQ_ERR);
	/* Resizing a CQ with a corrupted consumer index is refused. */
	EXPECT_NE(0, ibv_resize_cq(self->h.p.scq[0], 128));
	device_healthy(_metadata, self);
}

/* The kernel never reads a CQ's prod: garbage there is overwritten. */
TEST_F(ring, cq_prod_garbage)
{
	struct sib_ring_hdr *h = hdr(&self->h.scq0);
	uint32_t cons = h->cons;
	struct ibv_wc wc;

	h->prod = 0xdeadbeef;
	h->pad0[0] = 0xffffffff;
	h->flags = 0xffffffff;
	h->prod = cons;		/* leave the provider a sane view meanwhile */
	h->prod = 0x7fffffff;
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 4, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	usleep(300000);
	EXPECT_EQ(cons + 1, h->prod);
	ASSERT_EQ(1, poll_n(self->h.p.scq[0], &wc, 1, WAIT_MS));
	EXPECT_EQ(4u, wc.wr_id);
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_STATE(self->h.p.qp[0], IBV_QPS_RTS);
}

/* An SRQ with a corrupted producer index. */
TEST_F(ring, srq_corrupted)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct map before[MAXMAP], after[MAXMAP], nm[MAXMAP];
	struct ibv_sge s = mk_sge(&self->l, 0, 100);
	struct ibv_srq *srq;
	struct pair_opts o;
	struct pair p;
	struct ibv_wc wc;
	int nb, na;

	nb = uverbs_maps(before, MAXMAP);
	srq = ibv_create_srq(self->pd, &sa);
	ASSERT_NE(NULL, srq);
	na = uverbs_maps(after, MAXMAP);
	ASSERT_EQ(1, new_maps(before, nb, after, na, nm));
	hostile_opts(&o);
	o.srq[1] = srq;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	ASSERT_EQ(0, post_srq_recv_sges(srq, 1, &s, 1));
	ASSERT_EQ(1u, hdr(&nm[0])->prod);
	hdr(&nm[0])->prod = 0x80000000u;
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 7, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(1, poll_n(p.scq[0], &wc, 1, WAIT_MS));
	EXPECT_EQ(IBV_WC_REM_OP_ERR, wc.status) TH_LOG("sender got %s",
						      wcs(wc.status));
	EXPECT_STATE_SOON(p.qp[1], IBV_QPS_ERR);
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	device_healthy(_metadata, self);
}

/*
 * Random garbage over every ring of QP 0 (indices included), several seeds
 * and patterns; then doorbells and traffic from the peer. The kernel must
 * survive and QP 0 must end in ERR.
 */
TEST_F_TIMEOUT(ring, random_garbage, 120)
{
	for (uint64_t seed = 1; seed <= 12; seed++) {
		uint64_t s = seed * 0x9e3779b97f4a7c15ull;
		struct hpair *h = &self->h;
		struct map *rings[4] = { &h->sq0, &h->rq0, &h->scq0, &h->rcq0 };
		int pattern = seed % 3;
		struct ibv_sge sg = mk_sge(&self->l, 0, 64);
		struct ibv_wc wc;

		for (int i = 0; i < 4; i++) {
			if (pattern == 0) {
				/* Everything random, indices too. */
				scribble(rings[i]->start, rings[i]->len, &s);
			} else {
				/* Random slots and flags, valid indices. */
				struct sib_ring_hdr *hh = hdr(rings[i]);
				uint32_t c = hh->cons, pr = hh->prod;

				scribble(rings[i]->start + SIB_RING_HDR_SIZE,
					 rings[i]->len - SIB_RING_HDR_SIZE, &s);
				scribble((uint8_t *)&hh->flags, 4, &s);
				/* Pattern 1: full rings of garbage WQEs;
				 * pattern 2: one garbage WQE each.
				 */
				if (i == 0)
					hh->prod = c + (pattern == 1 ?
							self->sq_n : 1);
				else if (i == 1)
					hh->prod = c + (pattern == 1 ?
							self->rq_n : 1);
				else
					hh->prod = pr;
			}
		}
		uv_doorbell(h->p.qp[0], false);
		uv_doorbell(h->p.qp[0], true);
		/* The peer sends, writes and reads at QP 0. */
		post_op(h->p.qp[1], IBV_WR_SEND, 1, &sg, 1, IBV_SEND_SIGNALED,
			0, 0);
		post_op(h->p.qp[1], IBV_WR_RDMA_WRITE, 2, &sg, 1,
			IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			self->r.mr->rkey);
		uv_doorbell(h->p.qp[0], false);
		/* The peer's WQEs complete, one way or the other. */
		EXPECT_LE(1, poll_n(h->p.scq[1], &wc, 1, WAIT_MS))
			TH_LOG("seed %llu: the peer got no completion",
			       (unsigned long long)seed);
		EXPECT_STATE_SOON(h->p.qp[0], IBV_QPS_ERR);
		TH_LOG("seed %llu pattern %d: QP 0 %s, peer %s", (unsigned long long)seed,
		       pattern, qps_str(qp_state(h->p.qp[0])),
		       qps_str(qp_state(h->p.qp[1])));
		/* Start over with clean rings (reset rewrites the indices). */
		pair_destroy(&h->p);
		hpair_create(_metadata, self->ctx, self->pd, self->gid, h);
	}
	device_healthy(_metadata, self);
}

struct scribbler {
	uint8_t *p;
	size_t len;
	volatile bool stop;
	uint64_t seed;
};

static void *scribble_thread(void *arg)
{
	struct scribbler *sc = arg;

	while (!sc->stop) {
		scribble(sc->p, sc->len, &sc->seed);
		sched_yield();
	}
	return NULL;
}

/*
 * A thread rewrites the SQ slots (not the indices) while WQEs are posted
 * and consumed: the kernel copies each WQE once and checks the copy, so
 * whatever it read, it stays consistent.
 */
TEST_F_TIMEOUT(ring, concurrent_scribbling, 60)
{
	struct scribbler sc = {
		.p = self->h.sq0.start + SIB_RING_HDR_SIZE,
		.len = self->h.sq0.len - SIB_RING_HDR_SIZE,
		.seed = 77,
	};
	struct ibv_sge s = mk_sge(&self->l, 0, 3000);
	long end = now_ms() + 2000;
	pthread_t t;
	int posted = 0, polled = 0, errors = 0;

	ASSERT_EQ(0, pthread_create(&t, NULL, scribble_thread, &sc));
	while (now_ms() < end && qp_state(self->h.p.qp[0]) == IBV_QPS_RTS) {
		struct ibv_wc wc[16];
		int n;

		if (!post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, posted, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey))
			posted++;
		n = ibv_poll_cq(self->h.p.scq[0], 16, wc);
		for (int i = 0; i < n; i++)
			errors += wc[i].status != IBV_WC_SUCCESS;
		polled += n > 0 ? n : 0;
	}
	sc.stop = true;
	pthread_join(t, NULL);
	TH_LOG("%d posted, %d completions, %d errors, QP 0 %s", posted, polled,
	       errors, qps_str(qp_state(self->h.p.qp[0])));
	EXPECT_LT(0, posted);
	/* Whatever happened, modify to ERR and destroy work. */
	EXPECT_EQ(0, qp_modify_state(self->h.p.qp[0], IBV_QPS_ERR));
	usleep(100000);
	device_healthy(_metadata, self);
}

/* ---- doorbell suppression (SIB_UCTX_CAP_SQ_KPOLL) ------------------------ */

/*
 * kpoll is 0 while the engines are idle, and the provider honours it: a
 * WRITE posted while kpoll reads 1 gets no doorbell (the process lied, so
 * nothing looks at the ring and only this process' QP waits); the next
 * post with kpoll 0 rings, and the kernel then executes both, in order.
 */
TEST_F(ring, kpoll_honoured)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	struct ibv_sge s0 = mk_sge(&self->l, 0, 3000);
	struct ibv_sge s1 = mk_sge(&self->l, 3000, 5000);
	long long db;

	fill_pattern(self->l.p, 8000, 5);
	memset(self->r.p, 0, 8000);
	ASSERT_EQ(0u, __atomic_load_n(&h->kpoll, __ATOMIC_ACQUIRE));
	db = sib0_counter("doorbells");
	ASSERT_LE(0, db);

	__atomic_store_n(&h->kpoll, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 1, &s0, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	EXPECT_TRUE(cq_quiet(self->h.p.scq[0], 300));
	EXPECT_EQ(db, sib0_counter("doorbells"));
	EXPECT_EQ(-1, first_not(self->r.p, 8000, 0));

	__atomic_store_n(&h->kpoll, 0, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 2, &s1, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 3000),
			     self->r.mr->rkey));
	expect_wc("first", self->h.p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->h.p.qp[0]->qp_num, ANY, NULL);
	expect_wc("second", self->h.p.scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->h.p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(db + 1, sib0_counter("doorbells"));
	EXPECT_SAME(self->r.p, self->l.p, 8000, "both writes");
	EXPECT_EQ(0u, __atomic_load_n(&h->kpoll, __ATOMIC_ACQUIRE));
}

/*
 * A destroy honours what the process posted before it: a WRITE posted
 * while kpoll reads 1 (no doorbell: the engines were promised to look)
 * executes when QP 0 is destroyed right after, as a NIC has sent what
 * it was told of by then. rdma-core's mckey counts on it: it posts its
 * datagrams and destroys its QP without waiting for a completion.
 */
TEST_F(ring, destroy_sends_what_was_posted)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	struct ibv_sge s = mk_sge(&self->l, 0, 6000);
	long long db;

	fill_pattern(self->l.p, 6000, 41);
	memset(self->r.p, 0, 6000);
	db = sib0_counter("doorbells");
	ASSERT_LE(0, db);
	__atomic_store_n(&h->kpoll, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1, 0,
			     buf_addr(&self->r, 0), self->r.mr->rkey));
	EXPECT_EQ(db, sib0_counter("doorbells"));
	EXPECT_EQ(-1, first_not(self->r.p, 6000, 0));
	ASSERT_EQ(0, ibv_destroy_qp(self->h.p.qp[0]));
	self->h.p.qp[0] = NULL;
	EXPECT_SAME(self->r.p, self->l.p, 6000, "write posted before destroy");
	device_healthy(_metadata, self);
}

struct kp_poster {
	pthread_t t;
	struct ibv_qp *qp;
	struct buf *l, *r;
	int *inflight;		/* posted and not yet polled, all threads */
	int id, n, posted;
};

#define KP_THREADS	4
#define KP_POSTS	1000
#define KP_LEN		64
#define KP_INFLIGHT	48	/* the fixture's CQs hold 64 */

/*
 * Each thread posts KP_POSTS small WRITEs, each to its own place, so
 * that the data proves every one executed exactly where it should.
 */
static void *kp_post_thread(void *arg)
{
	struct kp_poster *k = arg;

	while (k->posted < k->n) {
		uint32_t off = (k->id * KP_POSTS + k->posted) * KP_LEN;
		struct ibv_sge s = mk_sge(k->l, off, KP_LEN);

		/* Never more completions than the CQ holds. */
		if (__atomic_add_fetch(k->inflight, 1, __ATOMIC_SEQ_CST) >
		    KP_INFLIGHT) {
			__atomic_sub_fetch(k->inflight, 1, __ATOMIC_SEQ_CST);
			sched_yield();
			continue;
		}
		if (post_op(k->qp, IBV_WR_RDMA_WRITE, off, &s, 1,
			    IBV_SEND_SIGNALED, buf_addr(k->r, off),
			    k->r->mr->rkey)) {
			__atomic_sub_fetch(k->inflight, 1, __ATOMIC_SEQ_CST);
			sched_yield();	/* SQ full: wait for completions */
		} else {
			k->posted++;
		}
	}
	return NULL;
}

/*
 * The race the suppression must win: several threads post to one QP
 * while the engines run in one thread's doorbell and go idle, again and
 * again. Posters skip the doorbell whenever they see kpoll set; the
 * kernel clears it, and looks at the producer index once more, before it
 * stops. No WQE may be stranded: every one completes, and the target
 * memory holds every thread's data.
 */
TEST_F_TIMEOUT(ring, kpoll_race, 120)
{
	size_t len = (size_t)KP_THREADS * KP_POSTS * KP_LEN;
	struct kp_poster k[KP_THREADS];
	long long db0 = sib0_counter("doorbells");
	int want = KP_THREADS * KP_POSTS, got = 0, errors = 0, inflight = 0;
	struct ibv_wc wc[32];
	long idle = now_ms();

	struct pair p;

	ASSERT_LE(len, BUFSZ);
	/* Not the hostile pair: ACK timeouts must not end the race early. */
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	fill_pattern(self->l.p, len, 11);
	memset(self->r.p, 0, len);
	for (int i = 0; i < KP_THREADS; i++) {
		k[i] = (struct kp_poster){ .qp = p.qp[0],
					   .l = &self->l, .r = &self->r,
					   .inflight = &inflight,
					   .id = i, .n = KP_POSTS };
		ASSERT_EQ(0, pthread_create(&k[i].t, NULL, kp_post_thread,
					    &k[i]));
	}
	/* A stranded WQE shows as WAIT_MS without any completion. */
	while (got < want && now_ms() - idle < WAIT_MS) {
		int n = ibv_poll_cq(p.scq[0], 32, wc);

		for (int i = 0; i < n; i++)
			errors += wc[i].status != IBV_WC_SUCCESS;
		if (n > 0) {
			got += n;
			__atomic_sub_fetch(&inflight, n, __ATOMIC_SEQ_CST);
			idle = now_ms();
		}
	}
	for (int i = 0; i < KP_THREADS; i++)
		pthread_join(k[i].t, NULL);
	TH_LOG("%d WRITEs by %d threads, %lld doorbells", want, KP_THREADS,
	       sib0_counter("doorbells") - db0);
	EXPECT_EQ(want, got);
	EXPECT_EQ(0, errors);
	EXPECT_SAME(self->r.p, self->l.p, len, "every thread's data");
	EXPECT_LE(sib0_counter("doorbells") - db0, want);
	pair_destroy(&p);
}

/*
 * The same without the provider's help: the test sets kpoll to 1 by
 * itself after every post (a process may write anything there) while
 * another thread rings doorbells now and then. The kernel overwrites
 * kpoll when it runs, and nothing in the kernel trusts it.
 */
TEST_F_TIMEOUT(ring, kpoll_scribbled, 60)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	struct ibv_sge s = mk_sge(&self->l, 0, 1000);
	int posted = 0, got = 0;
	struct ibv_wc wc[16];
	long end = now_ms() + 1000;

	while (now_ms() < end) {
		if (posted - got < KP_INFLIGHT &&
		    !post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, posted, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey))
			posted++;
		__atomic_store_n(&h->kpoll, posted & 1 ? 1u : 0xffffffffu,
				 __ATOMIC_SEQ_CST);
		if (!(posted % 7))
			uv_doorbell(self->h.p.qp[0], false);
		got += poll_n(self->h.p.scq[0], wc, 1, 0) > 0;
	}
	__atomic_store_n(&h->kpoll, 0, __ATOMIC_SEQ_CST);
	uv_doorbell(self->h.p.qp[0], false);
	got += poll_n(self->h.p.scq[0], wc, posted - got, WAIT_MS);
	EXPECT_EQ(posted, got);
	device_healthy(_metadata, self);
}

/* ---- credit updates (SIB_UCTX_CAP_RQ_CREDIT) --------------------------- */

/* QP 1 SENDs @len bytes at @off to QP 0, whose receive is posted first. */
static void cw_exchange(struct __test_metadata *_metadata,
			FIXTURE_DATA(ring) *self, uint64_t id, uint32_t off,
			uint32_t len)
{
	struct ibv_sge ls = mk_sge(&self->l, off, len);
	struct ibv_sge rs = mk_sge(&self->r, off, len);

	fill_pattern(self->l.p + off, len, id);
	ASSERT_EQ(0, post_recv_sges(self->h.p.qp[0], id, &rs, 1));
	ASSERT_EQ(0, post_op(self->h.p.qp[1], IBV_WR_SEND, id, &ls, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->h.p.scq[1], id, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->h.p.qp[1]->qp_num, ANY, NULL);
	expect_wc("recv", self->h.p.rcq[0], id, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->h.p.qp[0]->qp_num, len, NULL);
	EXPECT_SAME(self->r.p + off, self->l.p + off, len, "payload");
}

/*
 * The RQ's credit_wanted: the kernel sets it when its ACK told the peer
 * that no receive is left, and the next receive posted makes the
 * provider ring the POST_RECV doorbell, which clears it and sends the
 * peer one credit update.
 */
TEST_F(ring, credit_wanted_set_and_answered)
{
	struct sib_ring_hdr *h = hdr(&self->h.rq0);
	struct ibv_sge rs = mk_sge(&self->r, 0, 100);
	long long upd;

	ASSERT_EQ(0, sh("echo 1 > " SIB_SYSFS_IB "/sib0/credits"));
	cw_exchange(_metadata, self, 1, 0, 100);
	/* The ACK for that SEND advertised zero credits. */
	EXPECT_EQ(1u, __atomic_load_n(&h->credit_wanted, __ATOMIC_ACQUIRE));
	upd = sib0_counter("credit_updates_sent");
	ASSERT_LE(0, upd);
	ASSERT_EQ(0, post_recv_sges(self->h.p.qp[0], 2, &rs, 1));
	EXPECT_EQ(0u, __atomic_load_n(&h->credit_wanted, __ATOMIC_ACQUIRE));
	EXPECT_EQ(upd + 1, sib0_counter("credit_updates_sent"));
}

/*
 * A process may write anything into credit_wanted at any time: another
 * thread scribbles on it while QP 1 SENDs to QP 0 (each receive posted
 * first, and rnr_retry 0: an RNR NAK would fail the QP). Every message
 * arrives; a lie costs the sender at most a timeout (its probe).
 */
struct cw_scribbler {
	pthread_t t;
	uint32_t *word;
	volatile int stop;
};

static void *cw_scribble(void *arg)
{
	struct cw_scribbler *c = arg;
	uint32_t v = 0x9e3779b9;

	while (!c->stop) {
		v = v * 1103515245 + 12345;
		__atomic_store_n(c->word, v % 3 ? v : 0, __ATOMIC_SEQ_CST);
		sched_yield();
	}
	return NULL;
}

TEST_F_TIMEOUT(ring, credit_wanted_scribbled, 60)
{
	struct cw_scribbler c = { .word = &hdr(&self->h.rq0)->credit_wanted };

	ASSERT_EQ(0, sh("echo 1 > " SIB_SYSFS_IB "/sib0/credits"));
	ASSERT_EQ(0, pthread_create(&c.t, NULL, cw_scribble, &c));
	for (int i = 0; i < 200 && _metadata->passed; i++) {
		cw_exchange(_metadata, self, 100 + i, (i % 8) * 1000, 1000);
		if (!(i % 5))
			uv_doorbell(self->h.p.qp[0], true);
	}
	c.stop = 1;
	pthread_join(c.t, NULL);
	EXPECT_STATE(self->h.p.qp[0], IBV_QPS_RTS);
	EXPECT_STATE(self->h.p.qp[1], IBV_QPS_RTS);
	device_healthy(_metadata, self);
}

/* ---- the doorbell file (SIB_UCTX_CAP_DB_FD) ---------------------------- */

/* write() of one doorbell request: 0 or the errno. */
static int db_ring(int fd, uint32_t qpn, uint32_t op)
{
	struct sib_db_req req = { .qpn = qpn, .op = op };
	ssize_t ret = write(fd, &req, sizeof(req));

	if (ret == sizeof(req))
		return 0;
	return ret < 0 ? errno : EIO;
}

/* db_ring() in a child process (after fork()); its errno, or -1. */
static int db_ring_in_child(int fd, uint32_t qpn)
{
	pid_t pid = fork();
	int st;

	if (pid < 0)
		return -1;
	if (!pid)
		_exit(db_ring(fd, qpn, SIB_DB_SQ));
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

/*
 * The fixture's context has exactly one doorbell file, close-on-exec and
 * write-only; a write naming QP 0 runs a WQE that the provider left
 * without a doorbell (kpoll forced to 1), and counts one doorbell. An RQ
 * doorbell with nothing to do counts none.
 */
TEST_F(ring, dbfile_kicks)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	struct ibv_sge s = mk_sge(&self->l, 0, 4000);
	uint32_t qpn = self->h.p.qp[0]->qp_num;
	int fds[4], fd, n;
	long long db;
	char c;

	n = sib_db_fds(fds, 4);
	ASSERT_EQ(1, n);
	fd = fds[0];
	EXPECT_EQ(FD_CLOEXEC, fcntl(fd, F_GETFD) & FD_CLOEXEC);
	EXPECT_EQ(-1, read(fd, &c, 1));
	EXPECT_EQ(EBADF, errno);

	fill_pattern(self->l.p, 4000, 17);
	memset(self->r.p, 0, 4000);
	db = sib0_counter("doorbells");
	__atomic_store_n(&h->kpoll, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	EXPECT_TRUE(cq_quiet(self->h.p.scq[0], 200));
	EXPECT_EQ(-1, first_not(self->r.p, 4000, 0));
	EXPECT_EQ(db, sib0_counter("doorbells"));

	EXPECT_EQ(0, db_ring(fd, qpn, SIB_DB_RQ));
	EXPECT_TRUE(cq_quiet(self->h.p.scq[0], 200));
	EXPECT_EQ(db, sib0_counter("doorbells"));

	EXPECT_EQ(0, db_ring(fd, qpn, SIB_DB_SQ));
	expect_wc("kicked", self->h.p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, qpn, ANY, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 4000, "kicked write");
	EXPECT_EQ(db + 1, sib0_counter("doorbells"));
	/* The provider rings through the file: one post, one doorbell. */
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 2, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("provider", self->h.p.scq[0], 2, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, qpn, ANY, NULL);
	EXPECT_EQ(db + 2, sib0_counter("doorbells"));
}

/*
 * Hostile doorbells: wrong sizes, a bad buffer, unknown ops, QP numbers
 * that are not this context's (none, the GSI QP, another context's QP, a
 * destroyed QP). Each fails with its errno and kicks nothing.
 */
TEST_F(ring, dbfile_hostile)
{
	struct sib_db_req req = { .qpn = self->h.p.qp[0]->qp_num };
	struct ibv_context *other;
	struct pair p, q;
	uint8_t big[16] = { 0 };
	int fds[4], fd, ofd, n;
	long long db;
	uint32_t dead;

	ASSERT_EQ(1, sib_db_fds(fds, 4));
	fd = fds[0];
	db = sib0_counter("doorbells");
	memcpy(big, &req, sizeof(req));
	for (size_t len = 0; len <= sizeof(big); len++) {
		if (len == sizeof(req))
			continue;
		errno = 0;
		EXPECT_EQ(-1, write(fd, big, len)) TH_LOG("len %zu", len);
		EXPECT_EQ(EINVAL, errno) TH_LOG("len %zu", len);
	}
	EXPECT_EQ(-1, write(fd, (void *)4096, sizeof(req)));
	EXPECT_EQ(EFAULT, errno);
	EXPECT_EQ(EINVAL, db_ring(fd, req.qpn, 2));
	EXPECT_EQ(EINVAL, db_ring(fd, req.qpn, 0xffffffffu));
	EXPECT_EQ(EINVAL, db_ring(fd, 0, SIB_DB_SQ));
	EXPECT_EQ(EINVAL, db_ring(fd, 1, SIB_DB_SQ));
	EXPECT_EQ(EINVAL, db_ring(fd, 0xffffff, SIB_DB_SQ));
	EXPECT_EQ(EINVAL, db_ring(fd, 0xffffffffu, SIB_DB_RQ));
	EXPECT_EQ(-1, lseek(fd, 0, SEEK_SET));
	EXPECT_EQ(ESPIPE, errno);

	/* A child after fork() may not ring the parent's doorbells. */
	EXPECT_EQ(EACCES, db_ring_in_child(fd, req.qpn));

	/* A QP of another context of the same process. */
	other = pair_open_dev(SIB_DEV);
	ASSERT_NE(NULL, other);
	n = sib_db_fds(fds, 4);
	ASSERT_EQ(2, n);
	ofd = fds[0] == fd ? fds[1] : fds[0];
	ASSERT_EQ(0, pair_create(&q, other, NULL, self->gid, NULL));
	EXPECT_EQ(EINVAL, db_ring(fd, q.qp[0]->qp_num, SIB_DB_SQ));
	EXPECT_EQ(EINVAL, db_ring(ofd, req.qpn, SIB_DB_SQ));
	EXPECT_EQ(db, sib0_counter("doorbells"));
	EXPECT_EQ(0, db_ring(ofd, q.qp[0]->qp_num, SIB_DB_SQ));
	EXPECT_EQ(db + 1, sib0_counter("doorbells"));
	pair_destroy(&q);
	ibv_close_device(other);
	EXPECT_EQ(1, sib_db_fds(fds, 4));

	/* A destroyed QP. */
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	dead = p.qp[1]->qp_num;
	EXPECT_EQ(0, db_ring(fd, dead, SIB_DB_SQ));
	pair_destroy(&p);
	EXPECT_EQ(EINVAL, db_ring(fd, dead, SIB_DB_SQ));
	EXPECT_EQ(EINVAL, db_ring(fd, dead, SIB_DB_RQ));
	EXPECT_EQ(db + 2, sib0_counter("doorbells"));
	device_healthy(_metadata, self);
}

/* ---- streaming doorbells (SIB_DB_F_STREAM) ------------------------------ */

/* Set the module parameter async_doorbells; 0 or -errno. */
static int async_param(bool on)
{
	return sib_param_set("async_doorbells", on);
}

/* kpoll of @h reads 0 within @ms (the engines stopped and said so). */
static bool kpoll_cleared(struct sib_ring_hdr *h, int ms)
{
	for (int i = 0; i < ms; i++) {
		if (!__atomic_load_n(&h->kpoll, __ATOMIC_ACQUIRE))
			return true;
		usleep(1000);
	}
	return false;
}

/*
 * The stream flag goes with SQ doorbells only, and no other bit is
 * accepted. An SQ doorbell with it executes what the ring holds, on a
 * worker (async_doorbells counts it), and kpoll reads 0 again once that
 * worker is done.
 */
TEST_F(ring, dbfile_stream_op)
{
	struct sib_ring_hdr *h = hdr(&self->h.sq0);
	struct ibv_sge s = mk_sge(&self->l, 0, 6000);
	uint32_t qpn = self->h.p.qp[0]->qp_num;
	long long db, as;
	int fds[4], fd;

	ASSERT_EQ(0, async_param(true));
	ASSERT_EQ(1, sib_db_fds(fds, 4));
	fd = fds[0];
	db = sib0_counter("doorbells");
	as = sib0_counter("async_doorbells");
	ASSERT_LE(0, as);
	EXPECT_EQ(EINVAL, db_ring(fd, qpn, SIB_DB_RQ | SIB_DB_F_STREAM));
	EXPECT_EQ(EINVAL, db_ring(fd, qpn, SIB_DB_F_STREAM << 1));
	EXPECT_EQ(EINVAL, db_ring(fd, qpn,
				  SIB_DB_SQ | SIB_DB_F_STREAM | (1u << 9)));
	EXPECT_EQ(EINVAL, db_ring(fd, 0, SIB_DB_SQ | SIB_DB_F_STREAM));
	EXPECT_EQ(db, sib0_counter("doorbells"));

	fill_pattern(self->l.p, 6000, 29);
	memset(self->r.p, 0, 6000);
	__atomic_store_n(&h->kpoll, 1, __ATOMIC_SEQ_CST);
	ASSERT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, 1, &s, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	EXPECT_TRUE(cq_quiet(self->h.p.scq[0], 200));
	EXPECT_EQ(0, db_ring(fd, qpn, SIB_DB_SQ | SIB_DB_F_STREAM));
	expect_wc("streamed", self->h.p.scq[0], 1, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, qpn, ANY, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 6000, "streamed write");
	EXPECT_TRUE(kpoll_cleared(h, 1000));
	EXPECT_EQ(db + 1, sib0_counter("doorbells"));
	EXPECT_EQ(as + 1, sib0_counter("async_doorbells"));
}

#define ST_POSTS	48	/* the fixture's CQs hold 64 */
#define ST_LEN		1000

/*
 * Post ST_POSTS WRITEs (at most the SQ's depth), one ibv_post_send() each
 * and no polling in between (a streak: the provider flags its doorbells),
 * each to its own place; then take every completion, in order, and check
 * every byte. Returns the number of async doorbells it caused.
 */
static long long stream_writes(struct __test_metadata *_metadata,
			       FIXTURE_DATA(ring) *self, int seed)
{
	int n = self->sq_n < ST_POSTS ? self->sq_n : ST_POSTS;
	long long as = sib0_counter("async_doorbells");
	struct ibv_wc wc[ST_POSTS];
	int i;

	/* Never more than the SQ holds: the worker may not have run yet. */
	fill_pattern(self->l.p, ST_POSTS * ST_LEN, seed);
	memset(self->r.p, 0, ST_POSTS * ST_LEN);
	for (i = 0; i < n; i++) {
		struct ibv_sge s = mk_sge(&self->l, i * ST_LEN, ST_LEN);

		EXPECT_EQ(0, post_op(self->h.p.qp[0], IBV_WR_RDMA_WRITE, i,
				     &s, 1, IBV_SEND_SIGNALED,
				     buf_addr(&self->r, i * ST_LEN),
				     self->r.mr->rkey)) TH_LOG("post %d", i);
	}
	EXPECT_EQ(n, poll_n(self->h.p.scq[0], wc, n, 5000));
	for (i = 0; i < n; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status) TH_LOG("wc %d", i);
		EXPECT_EQ((uint64_t)i, wc[i].wr_id);
	}
	EXPECT_SAME(self->r.p, self->l.p, n * ST_LEN, "streak");
	EXPECT_EQ(-1, first_not((uint8_t *)self->r.p + n * ST_LEN,
				(ST_POSTS - n) * ST_LEN, 0));
	EXPECT_TRUE(kpoll_cleared(hdr(&self->h.sq0), 1000));
	return sib0_counter("async_doorbells") - as;
}

/*
 * A streak of posts hands the engines to a worker: at least one async
 * doorbell, every WRITE executed once, in order. With the module
 * parameter off the same streak runs inline only.
 */
TEST_F(ring, stream_posts)
{
	EXPECT_EQ(0, async_param(true));
	EXPECT_LE(1, stream_writes(_metadata, self, 31));
	EXPECT_EQ(0, async_param(false));
	EXPECT_EQ(0, stream_writes(_metadata, self, 37));
	EXPECT_EQ(0, async_param(true));
}

/*
 * QPs destroyed while a worker may be about to run their engines: a
 * streak of posts, then destroy at once without polling, many times.
 * Nothing may crash or leak; the device still works.
 */
TEST_F_TIMEOUT(ring, stream_destroy_race, 120)
{
	long long as = sib0_counter("async_doorbells");

	ASSERT_EQ(0, async_param(true));
	for (int round = 0; round < 40; round++) {
		struct pair p;

		ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid,
					 NULL));
		for (int i = 0; i < 16; i++) {
			struct ibv_sge s = mk_sge(&self->l, i * 512, 512);

			post_op(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
				IBV_SEND_SIGNALED, buf_addr(&self->r, i * 512),
				self->r.mr->rkey);
		}
		if (round & 1)
			usleep(round * 10);
		pair_destroy(&p);
	}
	TH_LOG("%lld async doorbells", sib0_counter("async_doorbells") - as);
	EXPECT_LT(0, sib0_counter("async_doorbells") - as);
	device_healthy(_metadata, self);
}

/* A UD QP in RTS on @cq, and an AH to this port's @gid; 0 or -1. */
static int ud_qp_create(struct ibv_pd *pd, struct ibv_cq *cq, int gid,
			uint32_t depth, struct ibv_qp **qp, struct ibv_ah **ah)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = cq, .recv_cq = cq,
		.cap = { .max_send_wr = depth, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_ah_attr aa = {
		.is_global = 1, .port_num = 1,
		.grh = { .sgid_index = gid, .hop_limit = 64 },
	};
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1,
				 .qkey = 0x11111111 };

	*qp = ibv_create_qp(pd, &ia);
	if (!*qp ||
	    ibv_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_QKEY))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(*qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	if (ibv_modify_qp(*qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN))
		return -1;
	if (ibv_query_gid(pd->context, 1, gid, &aa.grh.dgid))
		return -1;
	*ah = ibv_create_ah(pd, &aa);
	return *ah ? 0 : -1;
}

#define UDR_POSTS	60

/*
 * What rdma-core's test_resize_cq does: a streak of UD SENDs (which
 * complete as soon as they are sent), no polling, then a resize below the
 * number of their completions. The resize counts the completions of
 * every WR posted before it, also those whose engines a worker runs:
 * EINVAL, and nothing lost. Racy by nature (the worker may be done
 * already), hence many posts and several rounds.
 */
TEST_F(ring, stream_resize_cq)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 64);
	struct ibv_wc wc[UDR_POSTS];
	long long as = sib0_counter("async_doorbells");

	ASSERT_EQ(0, async_param(true));
	for (int round = 0; round < 10; round++) {
		struct ibv_cq *cq = ibv_create_cq(self->ctx, 64, NULL, NULL, 0);
		struct ibv_qp *qp = NULL;
		struct ibv_ah *ah = NULL;

		ASSERT_NE(NULL, cq);
		ASSERT_EQ(0, ud_qp_create(self->pd, cq, self->gid, 64, &qp,
					  &ah));
		for (int i = 0; i < UDR_POSTS; i++) {
			struct ibv_send_wr w = {
				.wr_id = i, .sg_list = &s, .num_sge = 1,
				.opcode = IBV_WR_SEND,
				.send_flags = IBV_SEND_SIGNALED,
				.wr.ud = { .ah = ah, .remote_qpn = 0xfff0,
					   .remote_qkey = 0x11111111 },
			}, *bad;

			ASSERT_EQ(0, ibv_post_send(qp, &w, &bad));
		}
		EXPECT_EQ(EINVAL, ibv_resize_cq(cq, 2)) TH_LOG("round %d",
							      round);
		ASSERT_EQ(UDR_POSTS, poll_n(cq, wc, UDR_POSTS, 5000));
		for (int i = 0; i < UDR_POSTS; i++) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
			EXPECT_EQ((uint64_t)i, wc[i].wr_id);
		}
		EXPECT_TRUE(cq_quiet(cq, 10));
		EXPECT_EQ(0, ibv_resize_cq(cq, 2));
		EXPECT_EQ(0, ibv_destroy_ah(ah));
		EXPECT_EQ(0, ibv_destroy_qp(qp));
		EXPECT_EQ(0, ibv_destroy_cq(cq));
	}
	TH_LOG("%lld async doorbells", sib0_counter("async_doorbells") - as);
	EXPECT_LT(0, sib0_counter("async_doorbells") - as);
}

/*
 * A UD SEND posted without a doorbell (kpoll forced to 1: the engines
 * were promised to look) still goes when its AH is destroyed right
 * after, before the QP is: a NIC copies the address vector into the
 * WQE at the post, and rdma-core's mckey destroys its AH, then its QP,
 * right after posting. The receiver gets the datagram, byte for byte.
 */
TEST_F(ring, destroy_ah_after_post)
{
	struct map before[MAXMAP], after[MAXMAP], nm[MAXMAP];
	struct ibv_sge s = mk_sge(&self->l, 0, 512);
	struct ibv_sge rs = mk_sge(&self->r, 0, 40 + 512);
	struct ibv_qp *rqp = NULL, *sqp = NULL;
	struct ibv_ah *rah = NULL, *ah = NULL;
	struct ibv_wc wc[2];
	struct ibv_cq *cq;
	int nb, na;

	cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, ud_qp_create(self->pd, cq, self->gid, 4, &rqp, &rah));
	nb = uverbs_maps(before, MAXMAP);
	ASSERT_LE(0, nb);
	ASSERT_EQ(0, ud_qp_create(self->pd, cq, self->gid, 4, &sqp, &ah));
	na = uverbs_maps(after, MAXMAP);
	ASSERT_EQ(2, new_maps(before, nb, after, na, nm));
	ASSERT_EQ(0u, hdr(&nm[0])->prod);

	fill_pattern(self->l.p, 512, 43);
	memset(self->r.p, 0, 40 + 512);
	ASSERT_EQ(0, post_recv_sges(rqp, 7, &rs, 1));
	__atomic_store_n(&hdr(&nm[0])->kpoll, 1, __ATOMIC_SEQ_CST);
	do {
		struct ibv_send_wr w = {
			.wr_id = 8, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_SEND, .send_flags = IBV_SEND_SIGNALED,
			.wr.ud = { .ah = ah, .remote_qpn = rqp->qp_num,
				   .remote_qkey = 0x11111111 },
		}, *bad;

		ASSERT_EQ(0, ibv_post_send(sqp, &w, &bad));
	} while (0);
	ASSERT_EQ(1u, hdr(&nm[0])->prod);
	EXPECT_TRUE(cq_quiet(cq, 200));
	ASSERT_EQ(0, ibv_destroy_ah(ah));
	ASSERT_EQ(2, poll_n(cq, wc, 2, WAIT_MS));
	for (int i = 0; i < 2; i++) {
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		if (wc[i].wr_id == 7) {
			EXPECT_EQ(40u + 512, wc[i].byte_len);
		} else {
			EXPECT_EQ(8u, wc[i].wr_id);
		}
	}
	EXPECT_NE(wc[0].wr_id, wc[1].wr_id);
	EXPECT_SAME((uint8_t *)self->r.p + 40, self->l.p, 512, "datagram");
	EXPECT_EQ(0, ibv_destroy_qp(sqp));
	EXPECT_EQ(0, ibv_destroy_ah(rah));
	EXPECT_EQ(0, ibv_destroy_qp(rqp));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

/*
 * Open another context of this process with a QP pair on it; returns a
 * dup of that context's doorbell file (the one that is not @mine), or -1.
 */
static int open_other(FIXTURE_DATA(ring) *self, int mine,
		      struct ibv_context **other, struct pair *q)
{
	int fds[4];

	*other = pair_open_dev(SIB_DEV);
	if (!*other || pair_create(q, *other, NULL, self->gid, NULL))
		return -1;
	if (sib_db_fds(fds, 4) != 2)
		return -1;
	return dup(fds[0] == mine ? fds[1] : fds[0]);
}

/*
 * The context goes away while its doorbell file stays open (a dup the
 * provider does not know of): closed normally, and disassociated by the
 * device's removal. Every later doorbell fails with EIO; the module
 * unloads once the file is closed.
 */
TEST_F(ring, dbfile_context_gone)
{
	struct ibv_context *other;
	struct pair q;
	int fds[4], before, keep;
	uint32_t qpn;

	before = sib_db_fds(fds, 4);
	ASSERT_EQ(1, before);
	before = fds[0];
	keep = open_other(self, before, &other, &q);
	ASSERT_LE(0, keep);
	qpn = q.qp[0]->qp_num;
	EXPECT_EQ(0, db_ring(keep, qpn, SIB_DB_SQ));
	pair_destroy(&q);
	EXPECT_EQ(EINVAL, db_ring(keep, qpn, SIB_DB_SQ));
	ibv_close_device(other);
	EXPECT_EQ(EIO, db_ring(keep, qpn, SIB_DB_SQ));
	EXPECT_EQ(EIO, db_ring(keep, 0, SIB_DB_RQ));
	close(keep);

	/* Disassociated: the device is deleted under an open context. */
	keep = open_other(self, before, &other, &q);
	ASSERT_LE(0, keep);
	qpn = q.qp[0]->qp_num;
	pair_destroy(&self->h.p);
	memset(&self->h.p, 0, sizeof(self->h.p));
	ibv_dealloc_pd(self->pd);
	self->pd = NULL;
	buf_free(&self->l);
	buf_free(&self->r);
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	ASSERT_EQ(0, nl_dellink(SIB_DEV));
	EXPECT_EQ(EIO, db_ring(keep, qpn, SIB_DB_SQ));
	pair_destroy(&q);
	ibv_close_device(other);
	EXPECT_EQ(EIO, db_ring(keep, qpn, SIB_DB_SQ));
	close(keep);
	EXPECT_EQ(0, module_unload());
	EXPECT_EQ(0, module_load());
}

/* A legacy GET_CONTEXT on a fresh uverbs file, with @drv (NULL: none). */
static int raw_get_context(const char *uverbs,
			   const struct sib_alloc_ucontext_cmd *drv,
			   struct sib_alloc_ucontext_resp *out, int *ufd)
{
	struct {
		struct ib_uverbs_cmd_hdr hdr;
		struct ib_uverbs_get_context cmd;
		struct sib_alloc_ucontext_cmd drv;
	} c = { };
	struct {
		struct ib_uverbs_get_context_resp core;
		struct sib_alloc_ucontext_resp drv;
	} r = { };
	size_t len = drv ? sizeof(c) : sizeof(c) - sizeof(c.drv);
	int fd = open(uverbs, O_RDWR | O_CLOEXEC);

	if (fd < 0)
		return errno;
	c.hdr.command = IB_USER_VERBS_CMD_GET_CONTEXT;
	c.hdr.in_words = len / 4;
	c.hdr.out_words = sizeof(r) / 4;
	c.cmd.response = (uintptr_t)&r;
	if (drv)
		c.drv = *drv;
	if (write(fd, &c, len) != (ssize_t)len) {
		int err = errno;

		close(fd);
		return err;
	}
	*out = r.drv;
	*ufd = fd;
	return 0;
}

/*
 * The file is opened only on request: a context request without driver
 * data (an older libsib) gets none, unknown request flags are refused,
 * and the fd a request returns is a doorbell file of the process.
 */
TEST_F(ring, dbfile_only_on_request)
{
	struct sib_alloc_ucontext_cmd cmd = { };
	struct sib_alloc_ucontext_resp resp;
	char uverbs[96];
	int fds[4], ufd, n;

	snprintf(uverbs, sizeof(uverbs), "/dev/infiniband/%s",
		 self->ctx->device->dev_name);
	n = sib_db_fds(fds, 4);
	ASSERT_EQ(1, n);

	ASSERT_EQ(0, raw_get_context(uverbs, NULL, &resp, &ufd));
	EXPECT_EQ(SIB_UVERBS_ABI_VERSION, resp.abi_version);
	EXPECT_TRUE(resp.caps & SIB_UCTX_CAP_DB_FD);
	EXPECT_EQ(-1, resp.db_fd);
	EXPECT_EQ(1, sib_db_fds(fds, 4));
	close(ufd);

	ASSERT_EQ(0, raw_get_context(uverbs, &cmd, &resp, &ufd));
	EXPECT_EQ(-1, resp.db_fd);
	EXPECT_EQ(1, sib_db_fds(fds, 4));
	close(ufd);

	cmd.flags = 2;
	EXPECT_EQ(EINVAL, raw_get_context(uverbs, &cmd, &resp, &ufd));
	cmd.flags = SIB_UCTX_REQ_DB_FD;
	cmd.reserved = 1;
	EXPECT_EQ(EINVAL, raw_get_context(uverbs, &cmd, &resp, &ufd));
	EXPECT_EQ(1, sib_db_fds(fds, 4));

	cmd.reserved = 0;
	ASSERT_EQ(0, raw_get_context(uverbs, &cmd, &resp, &ufd));
	ASSERT_LE(0, resp.db_fd);
	EXPECT_EQ(2, sib_db_fds(fds, 4));
	EXPECT_TRUE(fds[0] == resp.db_fd || fds[1] == resp.db_fd);
	EXPECT_EQ(FD_CLOEXEC, fcntl(resp.db_fd, F_GETFD) & FD_CLOEXEC);
	/* A QP of the fixture's context is not this context's. */
	EXPECT_EQ(EINVAL, db_ring(resp.db_fd, self->h.p.qp[0]->qp_num,
				  SIB_DB_SQ));
	close(ufd);
	EXPECT_EQ(EIO, db_ring(resp.db_fd, self->h.p.qp[0]->qp_num,
			       SIB_DB_SQ));
	close(resp.db_fd);
	EXPECT_EQ(1, sib_db_fds(fds, 4));
	device_healthy(_metadata, self);
}

struct db_hammer {
	pthread_t t;
	int fd;
	volatile uint32_t qpn;
	volatile int stop;
	long ok, einval, eio, other;
};

static void *db_hammer(void *arg)
{
	struct db_hammer *d = arg;

	while (!d->stop) {
		int ret = db_ring(d->fd, d->qpn, d->ok & 1 ? SIB_DB_RQ :
							     SIB_DB_SQ);

		if (!ret)
			d->ok++;
		else if (ret == EINVAL)
			d->einval++;
		else if (ret == EIO)
			d->eio++;
		else
			d->other++;
	}
	return NULL;
}

/*
 * A thread rings doorbells of QPs that another thread creates, uses and
 * destroys, and finally of a context that is closed under it. Every
 * doorbell succeeds or fails with EINVAL or EIO; the SENDs of each pair
 * arrive intact.
 */
TEST_F_TIMEOUT(ring, dbfile_race, 120)
{
	struct db_hammer d = { 0 };
	struct ibv_context *other;
	struct buf l, r;
	struct ibv_pd *pd;
	int fds[4], n, before;

	ASSERT_EQ(1, sib_db_fds(fds, 4));
	before = fds[0];
	other = pair_open_dev(SIB_DEV);
	ASSERT_NE(NULL, other);
	n = sib_db_fds(fds, 4);
	ASSERT_EQ(2, n);
	d.fd = dup(fds[0] == before ? fds[1] : fds[0]);
	ASSERT_LE(0, d.fd);
	pd = ibv_alloc_pd(other);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, buf_new(&l, pd, 4096, ACC_ALL));
	ASSERT_EQ(0, buf_new(&r, pd, 4096, ACC_ALL));
	ASSERT_EQ(0, pthread_create(&d.t, NULL, db_hammer, &d));
	for (int i = 0; i < 30 && _metadata->passed; i++) {
		struct ibv_sge s = mk_sge(&l, 0, 3000);
		struct ibv_sge rs = mk_sge(&r, 0, 3000);
		struct pair q;

		ASSERT_EQ(0, pair_create(&q, other, pd, self->gid, NULL));
		d.qpn = q.qp[i & 1]->qp_num;
		fill_pattern(l.p, 3000, i);
		memset(r.p, 0, 3000);
		ASSERT_EQ(0, post_recv_sges(q.qp[1], 1, &rs, 1));
		ASSERT_EQ(0, post_op(q.qp[0], IBV_WR_SEND, 2, &s, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		expect_wc("race send", q.scq[0], 2, IBV_WC_SUCCESS,
			  IBV_WC_SEND, q.qp[0]->qp_num, ANY, NULL);
		expect_wc("race recv", q.rcq[1], 1, IBV_WC_SUCCESS,
			  IBV_WC_RECV, q.qp[1]->qp_num, 3000, NULL);
		EXPECT_SAME(r.p, l.p, 3000, "race data");
		pair_destroy(&q);
	}
	buf_free(&l);
	buf_free(&r);
	ibv_dealloc_pd(pd);
	ibv_close_device(other);
	usleep(20000);
	d.stop = 1;
	pthread_join(d.t, NULL);
	close(d.fd);
	TH_LOG("doorbells: %ld ok, %ld EINVAL, %ld EIO", d.ok, d.einval,
	       d.eio);
	EXPECT_EQ(0, d.other);
	EXPECT_LT(0, d.eio);
	device_healthy(_metadata, self);
}

SIB_HARNESS_MAIN
