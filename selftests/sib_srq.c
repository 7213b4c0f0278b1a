// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's shared receive queues (kernel/sib_srq.c), on sib0 over lo: an SRQ
 * shared by two QPs (scatter over two SGEs, every byte checked),
 * query_srq, the SRQ limit event (once, below the limit, then disarmed)
 * a full SRQ refusing a receive with ENOMEM, and tag-matching SRQs
 * refused.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(srq, BUFSZ);

/* ---- SRQ ---------------------------------------------------------------- */

TEST_F(srq, srq_shared_by_two_qps)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32, .max_sge = 2 } };
	struct ibv_srq *srq = ibv_create_srq(self->pd, &sa);
	struct pair_opts o;
	struct pair p[2];
	struct ibv_srq_attr qa;
	struct ibv_wc wc[8];
	bool seen[8] = { };
	enum { N = 8, SZ = 3000 };

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_query_srq(srq, &qa));
	EXPECT_LE(32u, qa.max_wr);
	EXPECT_LE(2u, qa.max_sge);
	EXPECT_EQ(0u, qa.srq_limit);
	pair_default_opts(&o);
	o.srq[1] = srq;
	ASSERT_EQ(0, pair_create(&p[0], self->ctx, self->pd, self->gid, &o));
	ASSERT_EQ(0, pair_create(&p[1], self->ctx, self->pd, self->gid, &o));
	/* A QP on an SRQ has no receive queue of its own. */
	do {
		struct ibv_sge s = mk_sge(&self->r, 0, 8);

		EXPECT_NE(0, post_recv_sges(p[0].qp[1], 1, &s, 1));
	} while (0);
	memset(self->r.p, 0xee, N * 4096);
	for (int i = 0; i < N; i++) {
		struct ibv_sge s[2] = { mk_sge(&self->r, i * 4096, 1000),
					mk_sge(&self->r, i * 4096 + 1001,
					       4096 - 1001) };

		ASSERT_EQ(0, post_srq_recv_sges(srq, 500 + i, s, 2));
	}
	fill_pattern(self->l.p, N * SZ, 5);
	for (int i = 0; i < N; i++) {
		struct ibv_sge s = mk_sge(&self->l, i * SZ, SZ);

		ASSERT_EQ(0, post_op(p[i % 2].qp[0], IBV_WR_SEND, i, &s, 1,
				     IBV_SEND_SIGNALED, 0, 0));
	}
	for (int i = 0; i < N; i++)
		expect_wc("send", p[i % 2].scq[0], i, IBV_WC_SUCCESS,
			  IBV_WC_SEND, p[i % 2].qp[0]->qp_num, ANY, NULL);
	for (int k = 0; k < 2; k++) {
		ASSERT_EQ(N / 2, poll_n(p[k].rcq[1], wc, N / 2, WAIT_MS));
		for (int j = 0; j < N / 2; j++) {
			int slot = wc[j].wr_id - 500;
			/* Message j of pair k is message 2j+k overall. */
			int msg = 2 * j + k;
			uint8_t *d = self->r.p + slot * 4096;

			EXPECT_EQ(IBV_WC_SUCCESS, wc[j].status);
			EXPECT_EQ(p[k].qp[1]->qp_num, wc[j].qp_num);
			EXPECT_EQ((uint32_t)SZ, wc[j].byte_len);
			ASSERT_TRUE(slot >= 0 && slot < N);
			EXPECT_FALSE(seen[slot]);
			seen[slot] = true;
			EXPECT_SAME(d, self->l.p + msg * SZ, 1000, "SGE 0");
			EXPECT_EQ(0xee, d[1000]);
			EXPECT_SAME(d + 1001, self->l.p + msg * SZ + 1000,
				    SZ - 1000, "SGE 1");
		}
	}
	pair_destroy(&p[0]);
	pair_destroy(&p[1]);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/* The limit event fires once, when the WQE count drops below the limit. */
TEST_F(srq, srq_limit_event)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 16, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(self->pd, &sa);
	struct ibv_srq_attr qa = { .srq_limit = 5 };
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_async_event ev;
	struct pair_opts o;
	struct pair p;
	int posted = 10;

	ASSERT_NE(NULL, srq);
	pair_default_opts(&o);
	o.srq[1] = srq;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	for (int i = 0; i < posted; i++)
		ASSERT_EQ(0, post_srq_recv_sges(srq, i, &rs, 1));
	/* A limit above max_wr is refused. */
	do {
		struct ibv_srq_attr big = { .srq_limit = 100000 };

		EXPECT_NE(0, ibv_modify_srq(srq, &big, IBV_SRQ_LIMIT));
	} while (0);
	ASSERT_EQ(0, ibv_modify_srq(srq, &qa, IBV_SRQ_LIMIT));
	ASSERT_EQ(0, ibv_query_srq(srq, &qa));
	EXPECT_EQ(5u, qa.srq_limit);
	/* 10 -> 5 WQEs: not below the limit yet. */
	for (int i = 0; i < 5; i++)
		send_one(_metadata, &p, &self->l, i, 0);
	EXPECT_FALSE(wait_async_event(self->ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				      200, NULL));
	ASSERT_EQ(0, ibv_query_srq(srq, &qa));
	EXPECT_EQ(5u, qa.srq_limit);
	/* 5 -> 4: the event, for this SRQ; the limit disarms. */
	send_one(_metadata, &p, &self->l, 5, 0);
	ASSERT_TRUE(wait_async_event(self->ctx, IBV_EVENT_SRQ_LIMIT_REACHED,
				     WAIT_MS, &ev));
	EXPECT_EQ(srq, ev.element.srq);
	ASSERT_EQ(0, ibv_query_srq(srq, &qa));
	EXPECT_EQ(0u, qa.srq_limit);
	/* Only once. */
	for (int i = 6; i < 9; i++)
		send_one(_metadata, &p, &self->l, i, 0);
	EXPECT_EQ(0, count_async_events(self->ctx,
					IBV_EVENT_SRQ_LIMIT_REACHED, 200));
	EXPECT_EQ(9, cq_drain(p.rcq[1]));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

TEST_F(srq, srq_full_enomem)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 8, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(self->pd, &sa);
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct ibv_srq_attr qa;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_query_srq(srq, &qa));
	EXPECT_EQ(sa.attr.max_wr, qa.max_wr);
	for (uint32_t i = 0; i < qa.max_wr; i++)
		ASSERT_EQ(0, post_srq_recv_sges(srq, i, &rs, 1));
	EXPECT_EQ(ENOMEM, post_srq_recv_sges(srq, 99, &rs, 1));
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/*
 * Tag-matching SRQs are not implemented: EOPNOTSUPP, whether asked for by
 * type alone or with their attributes (rdma-core's tests skip on it).
 */
TEST_F(srq, tm_srq_unsupported)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 16, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 8, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_TM,
		.pd = self->pd,
		.cq = cq,
	};

	ASSERT_NE(NULL, cq);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sa));
	EXPECT_EQ(EOPNOTSUPP, errno);
	sa.comp_mask |= IBV_SRQ_INIT_ATTR_TM;
	sa.tm_cap.max_num_tags = 16;
	sa.tm_cap.max_ops = 10;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sa));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, ibv_destroy_cq(cq));
}

SIB_HARNESS_MAIN
