// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's RC data path, the parts around the transfers, on sib0 over lo:
 * completion channels (next and solicited-only), resize_cq with
 * completions outstanding, CQ overrun; SRQs shared by two QPs, the SRQ
 * limit event and query_srq; the fence; memory windows of type 1 and 2
 * (bind, access inside and outside, invalidation locally and by
 * SEND_WITH_INV, zero-based); a stress run of 4 QP pairs with random
 * opcodes and sizes, every byte checked; the one-copy local path and its
 * bursts (several PSNs in one local packet); and scheduling: a busy QP does
 * not hold up another, and a waiting QP does not spin; parent and thread
 * domains (traffic through them, locks skipped on a thread domain, the
 * allocator callbacks, busy and invalid domains); completion timestamps
 * (core clock and wall clock, hca_core_clock, ibv_query_rt_values_ex);
 * ibv_import_device, ibv_import_pd and ibv_import_mr; 128 outstanding
 * READs and atomics.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(ext, BUFSZ);

/* ---- fence ---------------------------------------------------------------- */

/*
 * READ remote X into L, then WRITE L to remote Y. With IBV_SEND_FENCE on
 * the WRITE, Y must hold X's data: the WRITE may not gather L before the
 * READ's data arrived. The unfenced run is logged to show that the check
 * can tell (sib sends the WRITE at once without the fence).
 */
static int fence_run(struct __test_metadata *_metadata, struct pair *p,
		     struct buf *l, struct buf *r, bool fence, uint32_t seed)
{
	const uint32_t len = 256 * 1024;
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

TEST_F(ext, fence_read_then_write)
{
	struct pair p;
	int ok;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	ok = fence_run(_metadata, &p, &self->l, &self->r, false, 1);
	TH_LOG("without the fence the WRITE carried %s data", ok == 1 ?
	       "the READ's" : "stale");
	for (int i = 0; i < 5; i++) {
		EXPECT_EQ(1, fence_run(_metadata, &p, &self->l, &self->r, true,
				       10 + i)) TH_LOG("fenced run %d", i);
	}
	pair_destroy(&p);
}

/* FETCH_ADD's result, then a fenced SEND of it: the original value goes. */
TEST_F(ext, fence_atomic_then_send)
{
	uint64_t *ctr = (uint64_t *)self->r.p, *res = (uint64_t *)self->l.p;
	struct ibv_sge as = mk_sge(&self->l, 0, 8), rs = mk_sge(&self->r, 64, 8);
	struct ibv_send_wr w[2] = { };
	struct pair p;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
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

#define NPAIRS	4
#define SLOTS	16
#define SLOT	(32 * 1024)

enum { OP_SEND, OP_WRITE, OP_READ, OP_CAS, OP_FADD, NOPK };

struct op_rec {
	int kind;
	uint32_t len, seed, slot;
	uint64_t add, cas_old, cas_new;
	bool busy;
};

struct st_pair {
	struct pair p;
	struct buf l, r;	/* SLOTS slots each; r also has recv slots */
	struct op_rec op[SLOTS];
	uint32_t posted, done, recv_next, recv_done;
	uint32_t send_fifo[SLOTS], fifo_h, fifo_t;
	uint64_t cas_val;	/* value of this pair's CAS word */
};

static uint32_t rnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s >> 11;
}

static uint32_t rnd_len(uint64_t *s)
{
	static const uint32_t edge[] = { 0, 1, 1023, 1024, 1025, 2048, SLOT };

	if (rnd(s) % 4 == 0)
		return edge[rnd(s) % 7];
	return rnd(s) % (SLOT + 1);
}

TEST_F_TIMEOUT(ext, stress_4_pairs, 240)
{
	struct st_pair *sp = calloc(NPAIRS, sizeof(*sp));
	struct buf ctr;
	uint64_t seed = 0x5eed1234abcdull, sum = 0;
	uint64_t *origs = calloc(8192, sizeof(uint64_t)), *adds = calloc(8192, 8);
	uint32_t norig = 0, total = 2400, issued = 0, completed = 0;
	long deadline = now_ms() + 200000;

	ASSERT_NE(NULL, sp);
	ASSERT_EQ(0, buf_new(&ctr, self->pd, 4096, ACC_ALL));
	for (int k = 0; k < NPAIRS; k++) {
		struct pair_opts o;

		pair_default_opts(&o);
		o.sq_wr = SLOTS;
		o.rq_wr = SLOTS;
		o.psn[0] = 0xffff00 + k * 0x10;	/* cross the PSN wrap too */
		ASSERT_EQ(0, pair_create(&sp[k].p, self->ctx, self->pd,
					 self->gid, &o));
		ASSERT_EQ(0, buf_new(&sp[k].l, self->pd, SLOTS * SLOT, ACC_ALL));
		ASSERT_EQ(0, buf_new(&sp[k].r, self->pd, 2 * SLOTS * SLOT + 4096,
				     ACC_ALL));
		sp[k].cas_val = 0;
	}
	while (completed < total) {
		ASSERT_GT(deadline, now_ms()) TH_LOG("stuck at %u of %u", completed,
						     total);
		for (int k = 0; k < NPAIRS; k++) {
			struct st_pair *q = &sp[k];
			struct ibv_wc wc[SLOTS];
			int n;

			/* Issue into free slots. */
			while (issued < total && q->posted - q->done < SLOTS) {
				uint32_t slot = q->posted % SLOTS;
				struct op_rec *op = &q->op[slot];
				struct ibv_sge s;
				int kind = rnd(&seed) % NOPK, ret;
				uint64_t cas_addr = buf_addr(&q->r, 2 * SLOTS * SLOT);

				memset(op, 0, sizeof(*op));
				op->kind = kind;
				op->slot = slot;
				op->seed = rnd(&seed);
				op->busy = true;
				if (kind <= OP_READ) {
					op->len = rnd_len(&seed);
					s = mk_sge(&q->l, slot * SLOT, op->len);
				} else {
					op->len = 8;
					s = mk_sge(&q->l, slot * SLOT, 8);
				}
				switch (kind) {
				case OP_SEND: {
					struct ibv_sge rs = mk_sge(&q->r,
						(SLOTS + slot) * SLOT, SLOT);

					fill_pattern(q->l.p + slot * SLOT,
						     op->len, op->seed);
					ASSERT_EQ(0, post_recv_sges(q->p.qp[1],
								    slot, &rs, 1));
					ret = post_op(q->p.qp[0], IBV_WR_SEND,
						      q->posted, &s, 1,
						      IBV_SEND_SIGNALED, 0, 0);
					break;
				}
				case OP_WRITE:
					fill_pattern(q->l.p + slot * SLOT,
						     op->len, op->seed);
					ret = post_op(q->p.qp[0],
						      IBV_WR_RDMA_WRITE,
						      q->posted, &s, 1,
						      IBV_SEND_SIGNALED,
						      buf_addr(&q->r, slot * SLOT),
						      q->r.mr->rkey);
					break;
				case OP_READ:
					fill_pattern(q->r.p + slot * SLOT,
						     op->len, op->seed);
					memset(q->l.p + slot * SLOT, 0, op->len);
					ret = post_op(q->p.qp[0],
						      IBV_WR_RDMA_READ,
						      q->posted, &s, 1,
						      IBV_SEND_SIGNALED,
						      buf_addr(&q->r, slot * SLOT),
						      q->r.mr->rkey);
					break;
				case OP_CAS:
					/* Alternate matching and not. */
					op->cas_old = q->cas_val;
					op->cas_new = rnd(&seed);
					ret = post_atomic(q->p.qp[0],
						IBV_WR_ATOMIC_CMP_AND_SWP,
						q->posted, &s, IBV_SEND_SIGNALED,
						cas_addr, q->r.mr->rkey,
						op->seed & 1 ? q->cas_val :
						q->cas_val + 1, op->cas_new);
					if (op->seed & 1)
						q->cas_val = op->cas_new;
					break;
				default:
					op->add = 1 + rnd(&seed) % 1000;
					sum += op->add;
					ret = post_atomic(q->p.qp[0],
						IBV_WR_ATOMIC_FETCH_AND_ADD,
						q->posted, &s, IBV_SEND_SIGNALED,
						buf_addr(&ctr, 0), ctr.mr->rkey,
						op->add, 0);
					break;
				}
				ASSERT_EQ(0, ret);
				q->posted++;
				issued++;
			}
			/* Retire completions, in order. */
			n = ibv_poll_cq(q->p.scq[0], SLOTS, wc);
			ASSERT_LE(0, n);
			for (int i = 0; i < n; i++) {
				struct op_rec *op = &q->op[q->done % SLOTS];
				uint8_t *lp = q->l.p + op->slot * SLOT;

				ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status)
					TH_LOG("pair %d op %u kind %d: %s", k,
					       q->done, op->kind, wcs(wc[i].status));
				ASSERT_EQ((uint64_t)q->done, wc[i].wr_id);
				switch (op->kind) {
				case OP_SEND: {
					struct ibv_wc rw;

					ASSERT_EQ(1, poll_n(q->p.rcq[1], &rw, 1,
							    WAIT_MS));
					ASSERT_EQ(IBV_WC_SUCCESS, rw.status);
					ASSERT_EQ(op->slot, rw.wr_id);
					ASSERT_EQ(op->len, rw.byte_len);
					EXPECT_SAME(q->r.p + (SLOTS + op->slot) * SLOT,
						    lp, op->len, "send");
					break;
				}
				case OP_WRITE:
					EXPECT_SAME(q->r.p + op->slot * SLOT, lp,
						    op->len, "write");
					break;
				case OP_READ:
					EXPECT_SAME(lp, q->r.p + op->slot * SLOT,
						    op->len, "read");
					EXPECT_EQ(op->len, wc[i].byte_len);
					break;
				case OP_CAS: {
					uint64_t got = *(uint64_t *)lp;

					EXPECT_EQ(op->cas_old, got);
					break;
				}
				default:
					origs[norig] = *(uint64_t *)lp;
					adds[norig++] = op->add;
					break;
				}
				op->busy = false;
				q->done++;
				completed++;
			}
		}
	}
	/* The shared counter is exactly the sum... */
	EXPECT_EQ(sum, *(uint64_t *)ctr.p);
	/* ...and every fetch-add saw a distinct value: the intervals
	 * [orig, orig + add) tile [0, sum) (no add lost or doubled).
	 */
	do {
		uint64_t covered = 0;
		bool progress = true;

		while (progress && covered < sum) {
			progress = false;
			for (uint32_t i = 0; i < norig; i++)
				if (origs[i] == covered) {
					covered += adds[i];
					progress = true;
				}
		}
		EXPECT_EQ(sum, covered);
	} while (0);
	for (int k = 0; k < NPAIRS; k++) {
		EXPECT_EQ(sp[k].cas_val,
			  *(uint64_t *)(sp[k].r.p + 2 * SLOTS * SLOT));
		EXPECT_STATE(sp[k].p.qp[0], IBV_QPS_RTS);
		EXPECT_TRUE(cq_quiet(sp[k].p.rcq[1], 0));
		pair_destroy(&sp[k].p);
		buf_free(&sp[k].l);
		buf_free(&sp[k].r);
	}
	TH_LOG("%u operations, %u fetch-adds, counter %llu", completed, norig,
	       (unsigned long long)sum);
	buf_free(&ctr);
	free(sp);
	free(origs);
	free(adds);
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

TEST_F(ext, rd_atomic_128)
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
		qp[i] = ibv_create_qp(self->pd, &qa);
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
	q3 = ibv_create_qp(self->pd, &qa);
	ASSERT_NE(NULL, q3);
	EXPECT_EQ(EINVAL, rd_connect(q3, self->gid, &g, qp[0]->qp_num, 129));
	EXPECT_EQ(0, ibv_destroy_qp(q3));

	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

SIB_HARNESS_MAIN
