// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's completion queues (kernel/sib_cq.c, provider/sib_cq.c), on sib0
 * over lo: completion channels (next and solicited-only arming),
 * resize_cq with completions outstanding, CQ overrun (IBV_EVENT_CQ_ERR),
 * completion timestamps (core clock and wall clock, hca_core_clock,
 * ibv_query_rt_values_ex) and their absence without the kernel's
 * capability; the tag-matching CQ fields sib does not have.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(cq, BUFSZ);

/* ---- completion channels ------------------------------------------------ */

/* An event on @ch within @ms; acked; returns the CQ or NULL. */
static struct ibv_cq *chan_event(struct ibv_comp_channel *ch, int ms)
{
	struct pollfd pfd = { .fd = ch->fd, .events = POLLIN };
	struct ibv_cq *cq;
	void *cq_ctx;

	if (poll(&pfd, 1, ms) != 1)
		return NULL;
	if (ibv_get_cq_event(ch, &cq, &cq_ctx))
		return NULL;
	ibv_ack_cq_events(cq, 1);
	return cq;
}

TEST_F(cq, cq_event_next)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct pair_opts o;
	struct pair p;

	ASSERT_NE(NULL, ch);
	pair_default_opts(&o);
	o.chan[1] = ch;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, post_recv_sges(p.qp[1], i, &rs, 1));

	/* Not armed: a completion makes no event. */
	send_one(_metadata, &p, &self->l, 100, 0);
	expect_wc("recv", p.rcq[1], 0, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 32, NULL);
	EXPECT_EQ(NULL, chan_event(ch, 200));

	/* Armed: nothing yet, then one event for the next completion. */
	ASSERT_EQ(0, ibv_req_notify_cq(p.rcq[1], 0));
	EXPECT_EQ(NULL, chan_event(ch, 100));
	send_one(_metadata, &p, &self->l, 101, 0);
	EXPECT_EQ(p.rcq[1], chan_event(ch, WAIT_MS));
	expect_wc("recv", p.rcq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 32, NULL);

	/* The arming is used up: the next completion makes no event. */
	send_one(_metadata, &p, &self->l, 102, 0);
	expect_wc("recv", p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 32, NULL);
	EXPECT_EQ(NULL, chan_event(ch, 200));

	/* A solicited SEND wakes a next-completion arming too. */
	ASSERT_EQ(0, ibv_req_notify_cq(p.rcq[1], 0));
	send_one(_metadata, &p, &self->l, 103, IBV_SEND_SOLICITED);
	EXPECT_EQ(p.rcq[1], chan_event(ch, WAIT_MS));
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

TEST_F(cq, cq_event_solicited_only)
{
	struct ibv_comp_channel *ch = ibv_create_comp_channel(self->ctx);
	struct ibv_sge rs = mk_sge(&self->r, 0, 64);
	struct pair_opts o;
	struct pair p;
	struct ibv_wc wc;

	ASSERT_NE(NULL, ch);
	pair_default_opts(&o);
	o.chan[1] = ch;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	for (int i = 0; i < 4; i++)
		ASSERT_EQ(0, post_recv_sges(p.qp[1], i, &rs, 1));

	ASSERT_EQ(0, ibv_req_notify_cq(p.rcq[1], 1));
	/* Unsolicited: the CQE is there, but no event. */
	send_one(_metadata, &p, &self->l, 100, 0);
	expect_wc("unsolicited recv", p.rcq[1], 0, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 32, &wc);
	EXPECT_EQ(NULL, chan_event(ch, 300));
	/* Solicited: event. */
	send_one(_metadata, &p, &self->l, 101, IBV_SEND_SOLICITED);
	EXPECT_EQ(p.rcq[1], chan_event(ch, WAIT_MS));
	expect_wc("solicited recv", p.rcq[1], 1, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 32, NULL);
	/* Solicited WRITE_WITH_IMM wakes as well. */
	ASSERT_EQ(0, ibv_req_notify_cq(p.rcq[1], 1));
	do {
		struct ibv_sge s = mk_sge(&self->l, 0, 8);
		struct ibv_send_wr wr = {
			.wr_id = 102, .sg_list = &s, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED | IBV_SEND_SOLICITED,
		};

		wr.wr.rdma.remote_addr = buf_addr(&self->r, 4096);
		wr.wr.rdma.rkey = self->r.mr->rkey;
		ASSERT_EQ(0, post_send_wr(p.qp[0], &wr));
	} while (0);
	EXPECT_EQ(p.rcq[1], chan_event(ch, WAIT_MS));
	expect_wc("imm recv", p.rcq[1], 2, IBV_WC_SUCCESS,
		  IBV_WC_RECV_RDMA_WITH_IMM, p.qp[1]->qp_num, 8, NULL);
	pair_destroy(&p);
	EXPECT_EQ(0, ibv_destroy_comp_channel(ch));
}

/* Resize with CQEs outstanding: none lost, order kept; too small refused. */
TEST_F(cq, resize_cq_outstanding)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 16);
	struct pair_opts o;
	struct pair p;
	struct ibv_wc wc[64];
	int n = 12;

	pair_default_opts(&o);
	o.cq_depth = 16;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	for (int i = 0; i < n; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
	/* Let them all reach the CQ, without polling it. */
	usleep(300000);
	/* Smaller than what is queued: refused, nothing lost. */
	EXPECT_NE(0, ibv_resize_cq(p.scq[0], 4));
	ASSERT_EQ(0, ibv_resize_cq(p.scq[0], 64));
	EXPECT_LE(64, p.scq[0]->cqe);
	ASSERT_EQ(n, poll_n(p.scq[0], wc, n, WAIT_MS));
	for (int i = 0; i < n; i++) {
		EXPECT_EQ((uint64_t)i, wc[i].wr_id);
		EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		EXPECT_EQ(IBV_WC_RDMA_WRITE, wc[i].opcode);
	}
	/* The resized CQ takes more than the old size. */
	for (int i = 0; i < 40; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 100 + i, &s, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
	usleep(200000);
	ASSERT_EQ(40, poll_n(p.scq[0], wc, 40, WAIT_MS));
	for (int i = 0; i < 40; i++)
		EXPECT_EQ((uint64_t)100 + i, wc[i].wr_id);
	/* And shrinks again, with some CQEs outstanding. */
	for (int i = 0; i < 3; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 200 + i, &s, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
	usleep(200000);
	ASSERT_EQ(0, ibv_resize_cq(p.scq[0], 8));
	ASSERT_EQ(3, poll_n(p.scq[0], wc, 3, WAIT_MS));
	for (int i = 0; i < 3; i++)
		EXPECT_EQ((uint64_t)200 + i, wc[i].wr_id);
	EXPECT_TRUE(cq_quiet(p.scq[0], 50));
	EXPECT_STATE(p.qp[0], IBV_QPS_RTS);
	pair_destroy(&p);
}

/* More completions than the CQ holds: IBV_EVENT_CQ_ERR, the QP in ERR. */
TEST_F(cq, cq_overrun)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 16);
	struct ibv_async_event ev;
	struct pair_opts o;
	struct pair p;
	int n;

	pair_default_opts(&o);
	o.cq_depth = 4;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	n = p.scq[0]->cqe;
	ASSERT_GE(8, n);
	for (int i = 0; i < n + 2; i++)
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, i, &s, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
	ASSERT_TRUE(wait_async_event(self->ctx, IBV_EVENT_CQ_ERR, WAIT_MS, &ev));
	EXPECT_EQ(p.scq[0], ev.element.cq);
	EXPECT_STATE_SOON(p.qp[0], IBV_QPS_ERR);
	/* What made it onto the CQ is intact. */
	do {
		struct ibv_wc wc[16];
		int got = poll_n(p.scq[0], wc, n, 100);

		EXPECT_EQ(n, got);
		for (int i = 0; i < got; i++) {
			EXPECT_EQ((uint64_t)i, wc[i].wr_id);
			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
		}
	} while (0);
	pair_destroy(&p);
}

/* ---- completion timestamps --------------------------------------------- */

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

#define TS_SLACK_NS	10000000ull	/* NTP may slew the real-time clock */

/*
 * SEND 4 KiB twice between two QPs sharing @cq (made with @wc_flags) and
 * check each completion's timestamps against the clocks read around it.
 */
static void __ts_traffic(struct __test_metadata *_metadata,
			 struct ibv_context *ctx, struct ibv_pd *pd, int gid,
			 uint64_t wc_flags)
{
	struct ibv_cq_init_attr_ex ca = { .cqe = 64, .wc_flags = wc_flags };
	bool core = wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	bool wall = wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	struct ibv_poll_cq_attr pa = {};
	uint64_t last_ts = 0;
	struct ibv_qp *qp[2];
	struct ibv_cq_ex *cq;
	struct ibv_sge sge;
	struct buf l, r;

	cq = ibv_create_cq_ex(ctx, &ca);
	ASSERT_NE(NULL, cq) TH_LOG("create_cq_ex(%#lx): %s",
				   (unsigned long)wc_flags, strerror(errno));
	ASSERT_EQ(0, qp_ex_pair(ctx, pd, gid, cq, qp));
	ASSERT_EQ(0, buf_new(&l, pd, 4096, ACC_ALL));
	ASSERT_EQ(0, buf_new(&r, pd, 4096, ACC_ALL));

	for (int round = 0; round < 2; round++) {
		uint64_t t0 = clock_ns(CLOCK_MONOTONIC);
		uint64_t r0 = clock_ns(CLOCK_REALTIME);
		uint64_t ts[2], wc_wall[2], t1, r1;
		int n = 0, ret;

		fill_pattern(l.p, 4096, 40 + round);
		sge = mk_sge(&r, 0, 4096);
		ASSERT_EQ(0, post_recv_sges(qp[1], 1, &sge, 1));
		sge = mk_sge(&l, 0, 4096);
		ASSERT_EQ(0, post_op(qp[0], IBV_WR_SEND, 2, &sge, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		for (long end = now_ms() + WAIT_MS; n < 2 && now_ms() < end; ) {
			ret = ibv_start_poll(cq, &pa);
			if (ret == ENOENT) {
				usleep(100);
				continue;
			}
			ASSERT_EQ(0, ret);
			do {
				EXPECT_EQ(IBV_WC_SUCCESS, cq->status);
				ts[n] = core ? ibv_wc_read_completion_ts(cq) : 0;
				wc_wall[n] = wall ?
					ibv_wc_read_completion_wallclock_ns(cq) : 0;
				n++;
			} while (n < 2 && !ibv_next_poll(cq));
			ibv_end_poll(cq);
		}
		t1 = clock_ns(CLOCK_MONOTONIC);
		r1 = clock_ns(CLOCK_REALTIME);
		ASSERT_EQ(2, n);
		EXPECT_SAME(r.p, l.p, 4096, "send with timestamps");
		for (int i = 0; i < 2; i++) {
			if (core) {
				EXPECT_LE(t0, ts[i]);
				EXPECT_GE(t1, ts[i]);
				EXPECT_LE(last_ts, ts[i]) TH_LOG("went back");
				last_ts = ts[i];
			}
			if (wall) {
				EXPECT_LE(r0 - TS_SLACK_NS, wc_wall[i]);
				EXPECT_GE(r1 + TS_SLACK_NS, wc_wall[i]);
			}
		}
	}

	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	buf_free(&l);
	buf_free(&r);
}

TEST_F(cq, cq_timestamps)
{
	struct ibv_values_ex v = {
		.comp_mask = IBV_VALUES_MASK_RAW_CLOCK | (1u << 5),
	};
	struct ibv_device_attr_ex da;
	uint64_t t0, t1, raw;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &da));
	EXPECT_EQ(1000000, da.hca_core_clock) TH_LOG("kHz of a 1 GHz clock");
	EXPECT_EQ(UINT64_MAX, da.completion_timestamp_mask);

	t0 = clock_ns(CLOCK_MONOTONIC);
	ASSERT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	t1 = clock_ns(CLOCK_MONOTONIC);
	EXPECT_EQ(IBV_VALUES_MASK_RAW_CLOCK, v.comp_mask);
	raw = (uint64_t)v.raw_clock.tv_sec * 1000000000u + v.raw_clock.tv_nsec;
	EXPECT_LE(t0, raw);
	EXPECT_GE(t1, raw);
	v.comp_mask = 0;
	EXPECT_EQ(0, ibv_query_rt_values_ex(self->ctx, &v));
	EXPECT_EQ(0, v.comp_mask);

	__ts_traffic(_metadata, self->ctx, self->pd, self->gid,
		     IBV_WC_STANDARD_FLAGS |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
	__ts_traffic(_metadata, self->ctx, self->pd, self->gid,
		     IBV_WC_STANDARD_FLAGS |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP);
	__ts_traffic(_metadata, self->ctx, self->pd, self->gid,
		     IBV_WC_STANDARD_FLAGS |
		     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK);
}

/* A kernel without SIB_UCTX_CAP_CQE_TS (the provider told to ignore it). */
TEST_F(cq, cq_timestamps_unsupported)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_values_ex v = { .comp_mask = IBV_VALUES_MASK_RAW_CLOCK };
	struct ibv_context *ctx;

	ca.wc_flags = IBV_WC_EX_WITH_CVLAN;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno) TH_LOG("a flag sib lacks");

	setenv("SIB_NO_CQE_TS", "1", 1);
	ctx = pair_open_dev(SIB_DEV);
	unsetenv("SIB_NO_CQE_TS");
	ASSERT_NE(NULL, ctx);
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(ctx, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ca.wc_flags = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(ctx, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(EOPNOTSUPP, ibv_query_rt_values_ex(ctx, &v));
	ibv_close_device(ctx);
}

/*
 * Tag matching is not implemented: no tm_caps, and a CQ asking for the
 * tag-matching fields is EOPNOTSUPP (rdma-core's tests skip on it).
 */
TEST_F(cq, tm_info_unsupported)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_EX_WITH_TM_INFO,
	};
	struct ibv_device_attr_ex da = {};

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &da));
	EXPECT_EQ(0, da.tm_caps.flags);
	EXPECT_EQ(0, da.tm_caps.max_num_tags);
	EXPECT_EQ(0, da.tm_caps.max_ops);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
	ca.wc_flags |= IBV_WC_STANDARD_FLAGS;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EOPNOTSUPP, errno);
}

SIB_HARNESS_MAIN
