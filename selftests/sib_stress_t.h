/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The random-operation stress engine of sib's selftests, shared by
 * sib_rc (stress_4_pairs, on lo) and sib_stress (with faults, over veth,
 * against rdma_rxe). Include after kselftest_harness.h and sib_pair_t.h:
 * run_stress() uses the harness' ASSERT macros.
 *
 * NPAIRS RC pairs, whose two ends may live on two devices (pair_end),
 * each with SLOTS operations in flight: SEND, WRITE, WRITE with
 * immediate, READ (random lengths with the edges of the MTU), compare
 * and swap on a word of the pair, fetch and add on one counter shared by
 * all pairs. Every completion is checked in order, every byte of every
 * payload, the receives in message order; at the end the counter is
 * exactly the sum of the adds and the values the adds fetched tile
 * [0, sum), so no atomic was lost or executed twice.
 */
#ifndef SIB_STRESS_T_H
#define SIB_STRESS_T_H

#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "sib_pair_t.h"

/*
 * The options of the engine's pairs (struct pair, whose two ends may live
 * on two devices): @depth WRs each way, one SGE, 64 bytes inline, local
 * write and remote access, ACK timeout @timeout, 7 retries and RNR
 * retries, PSNs 0 (run_stress() sets its own).
 */
static inline void stress_opts(struct pair_opts *o, uint32_t depth,
			       uint8_t timeout)
{
	pair_default_opts(o);
	o->sq_wr = depth;
	o->rq_wr = depth;
	o->max_sge = 1;
	o->max_inline = 64;
	o->access[0] = o->access[1] = ACC_ALL & ~IBV_ACCESS_MW_BIND;
	o->timeout = timeout;
	o->psn[0] = o->psn[1] = 0;
}

/* ---- the engine ------------------------------------------------------------ */

#define NPAIRS	4
#define SLOTS	16
#define SLOT	(32 * 1024)

enum { OP_SEND, OP_WRITE, OP_WRITE_IMM, OP_READ, OP_CAS, OP_FADD, NOPK };

struct op_rec {
	int kind;
	uint32_t len, seed, slot, seq;
	uint64_t add, cas_old, cas_new;
};

struct st_pair {
	struct pair p;
	struct buf l, r;	/* l at end 0; r (slots, receives, CAS) at end 1 */
	struct op_rec op[SLOTS];
	uint32_t posted, done, recvs;
	uint64_t cas_val;
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
	static const uint32_t edge[] = { 0, 1, 8, 1023, 1024, 1025, 2048, SLOT };

	if (rnd(s) % 4 == 0)
		return edge[rnd(s) % 8];
	return rnd(s) % (SLOT + 1);
}

/* The tag at the start of a SEND payload: pair and message number. */
static uint64_t seq_tag(int k, uint32_t seq)
{
	return (uint64_t)0x5e << 56 | (uint64_t)k << 32 | seq;
}

static void run_stress(struct __test_metadata *_metadata,
		       const struct pair_end s[2], uint32_t total,
		       uint64_t seed, const struct pair_opts *po)
{
	struct st_pair *sp = calloc(NPAIRS, sizeof(*sp));
	uint64_t *origs = calloc(total, 8), *adds = calloc(total, 8), sum = 0;
	uint32_t norig = 0, issued = 0, completed = 0, nkind[NOPK] = {};
	long deadline = now_ms() + 150000;
	struct buf ctr;
	/* For bisecting: SIB_STRESS_KINDS (bit mask of OP_*), SIB_STRESS_TIMEOUT */
	int kind_mask = getenv("SIB_STRESS_KINDS") ? atoi(getenv("SIB_STRESS_KINDS")) : 0;
	struct pair_opts o = *po;

	if (getenv("SIB_STRESS_TIMEOUT"))
		o.timeout = atoi(getenv("SIB_STRESS_TIMEOUT"));
	ASSERT_NE(NULL, sp);
	ASSERT_EQ(0, buf_new(&ctr, s[1].pd, 4096, ACC_ALL & ~IBV_ACCESS_MW_BIND));
	for (int k = 0; k < NPAIRS; k++) {
		o.psn[0] = 0xffff00 + k * 0x10;	/* cross the PSN wrap */
		o.psn[1] = 0x1000 * (k + 1);
		ASSERT_EQ(0, pair_create_ends(&sp[k].p, s, &o));
		ASSERT_EQ(0, buf_new(&sp[k].l, s[0].pd, SLOTS * SLOT, ACC_ALL));
		ASSERT_EQ(0, buf_new(&sp[k].r, s[1].pd, 2 * SLOTS * SLOT + 4096,
				     ACC_ALL));
	}
	while (completed < total) {
		ASSERT_GT(deadline, now_ms()) TH_LOG("stuck at %u of %u", completed,
						     total);
		for (int k = 0; k < NPAIRS; k++) {
			struct st_pair *q = &sp[k];
			struct ibv_wc wc[SLOTS];
			int n;

			while (issued < total && q->posted - q->done < SLOTS) {
				uint32_t slot = q->posted % SLOTS;
				struct op_rec *op = &q->op[slot];
				uint8_t *lp = q->l.p + slot * SLOT;
				uint64_t cas_addr = buf_addr(&q->r, 2 * SLOTS * SLOT);
				uint64_t raddr = buf_addr(&q->r, slot * SLOT);
				int kind = rnd(&seed) % NOPK, ret;

				while (kind_mask && !(kind_mask & (1 << kind)))
					kind = rnd(&seed) % NOPK;
				struct ibv_sge ls;

				memset(op, 0, sizeof(*op));
				op->kind = kind;
				op->slot = slot;
				op->seq = q->posted;
				op->seed = rnd(&seed);
				op->len = kind <= OP_READ ? rnd_len(&seed) : 8;
				ls = mk_sge(&q->l, slot * SLOT, op->len);
				nkind[kind]++;
				if (kind == OP_SEND || kind == OP_WRITE_IMM) {
					struct ibv_sge rs = mk_sge(&q->r,
						(SLOTS + slot) * SLOT, SLOT);

					ASSERT_EQ(0, post_recv_sges(q->p.qp[1],
								    q->posted, &rs, 1));
				}
				switch (kind) {
				case OP_SEND:
					fill_pattern(lp, op->len, op->seed);
					if (op->len >= 8) {
						uint64_t t = seq_tag(k, op->seq);

						memcpy(lp, &t, 8);
					}
					ret = post_op(q->p.qp[0], IBV_WR_SEND,
						      q->posted, &ls, 1,
						      IBV_SEND_SIGNALED, 0, 0);
					break;
				case OP_WRITE:
				case OP_WRITE_IMM: {
					struct ibv_send_wr wr = {
						.wr_id = q->posted,
						.sg_list = &ls,
						.num_sge = 1,
						.opcode = kind == OP_WRITE ?
							IBV_WR_RDMA_WRITE :
							IBV_WR_RDMA_WRITE_WITH_IMM,
						.send_flags = IBV_SEND_SIGNALED,
						.imm_data = htonl(seq_tag(k, op->seq)),
					};

					fill_pattern(lp, op->len, op->seed);
					wr.wr.rdma.remote_addr = raddr;
					wr.wr.rdma.rkey = q->r.mr->rkey;
					ret = post_send_wr(q->p.qp[0], &wr);
					break;
				}
				case OP_READ:
					fill_pattern(q->r.p + slot * SLOT, op->len,
						     op->seed);
					memset(lp, 0, op->len);
					ret = post_op(q->p.qp[0], IBV_WR_RDMA_READ,
						      q->posted, &ls, 1,
						      IBV_SEND_SIGNALED, raddr,
						      q->r.mr->rkey);
					break;
				case OP_CAS:
					op->cas_old = q->cas_val;
					op->cas_new = rnd(&seed);
					ret = post_atomic(q->p.qp[0],
						IBV_WR_ATOMIC_CMP_AND_SWP,
						q->posted, &ls, IBV_SEND_SIGNALED,
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
						q->posted, &ls, IBV_SEND_SIGNALED,
						buf_addr(&ctr, 0), ctr.mr->rkey,
						op->add, 0);
					break;
				}
				ASSERT_EQ(0, ret);
				q->posted++;
				issued++;
			}
			n = ibv_poll_cq(q->p.scq[0], SLOTS, wc);
			ASSERT_LE(0, n);
			for (int i = 0; i < n; i++) {
				struct op_rec *op = &q->op[q->done % SLOTS];
				uint8_t *lp = q->l.p + op->slot * SLOT;
				uint8_t *rp = q->r.p + op->slot * SLOT;
				uint8_t *rv = q->r.p + (SLOTS + op->slot) * SLOT;

				ASSERT_EQ(IBV_WC_SUCCESS, wc[i].status)
					TH_LOG("pair %d op %u kind %d: %s", k,
					       q->done, op->kind, wcs(wc[i].status));
				ASSERT_EQ((uint64_t)q->done, wc[i].wr_id);
				if (op->kind == OP_SEND || op->kind == OP_WRITE_IMM) {
					struct ibv_wc rw;

					/* Receives complete in message order. */
					ASSERT_EQ(1, poll_n(q->p.rcq[1], &rw, 1,
							    WAIT_MS));
					ASSERT_EQ(IBV_WC_SUCCESS, rw.status)
						TH_LOG("pair %d recv: %s", k,
						       wcs(rw.status));
					ASSERT_EQ((uint64_t)op->seq, rw.wr_id)
						TH_LOG("pair %d: receive out of order", k);
					EXPECT_EQ(op->len, rw.byte_len);
					q->recvs++;
					if (op->kind == OP_SEND) {
						EXPECT_EQ(IBV_WC_RECV, rw.opcode);
						if (op->len >= 8)
							EXPECT_EQ(seq_tag(k, op->seq),
								  *(uint64_t *)rv)
								TH_LOG("pair %d: payload seq", k);
						EXPECT_SAME(rv, lp, op->len, "send");
					} else {
						EXPECT_EQ(IBV_WC_RECV_RDMA_WITH_IMM,
							  rw.opcode);
						EXPECT_TRUE(rw.wc_flags & IBV_WC_WITH_IMM);
						EXPECT_EQ((uint32_t)seq_tag(k, op->seq),
							  ntohl(rw.imm_data));
						EXPECT_SAME(rp, lp, op->len, "write_imm");
					}
				}
				switch (op->kind) {
				case OP_WRITE:
					EXPECT_SAME(rp, lp, op->len, "write");
					break;
				case OP_READ:
					EXPECT_SAME(lp, rp, op->len, "read");
					EXPECT_EQ(op->len, wc[i].byte_len);
					break;
				case OP_CAS:
					EXPECT_EQ(op->cas_old, *(uint64_t *)lp);
					break;
				case OP_FADD:
					origs[norig] = *(uint64_t *)lp;
					adds[norig++] = op->add;
					break;
				}
				q->done++;
				completed++;
			}
		}
	}
	EXPECT_EQ(sum, *(uint64_t *)ctr.p);
	/* Every fetch-add saw a distinct value: [orig, orig + add) tile [0, sum). */
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
		EXPECT_EQ(sp[k].cas_val, *(uint64_t *)(sp[k].r.p + 2 * SLOTS * SLOT));
		EXPECT_STATE(sp[k].p.qp[0], IBV_QPS_RTS);
		EXPECT_STATE(sp[k].p.qp[1], IBV_QPS_RTS);
		EXPECT_TRUE(cq_quiet(sp[k].p.rcq[1], 0));
		pair_destroy(&sp[k].p);
		buf_free(&sp[k].l);
		buf_free(&sp[k].r);
	}
	TH_LOG("%u ops (send %u write %u write_imm %u read %u cas %u fadd %u), counter %llu",
	       completed, nkind[0], nkind[1], nkind[2], nkind[3], nkind[4],
	       nkind[5], (unsigned long long)sum);
	buf_free(&ctr);
	free(sp);
	free(origs);
	free(adds);
}

#endif /* SIB_STRESS_T_H */
