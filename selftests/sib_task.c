// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Running the QPs' engines (kernel/sib_task.c), on sib0 over lo: a QP
 * with a deep queue of large WRITEs does not hold up another QP, and a
 * QP waiting out an RNR NAK waits on a timer instead of spinning.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(task, BUFSZ);

/* ---- scheduling ------------------------------------------------------------ */

#define FLOOD	512	/* 1 MiB WRITEs on the busy QP */

/* Take what @cq holds; all must be successes. Returns the count or -1. */
static int take_ok(struct ibv_cq *cq)
{
	struct ibv_wc wc[32];
	int n, total = 0;

	while ((n = ibv_poll_cq(cq, 32, wc)) > 0) {
		for (int i = 0; i < n; i++)
			if (wc[i].status != IBV_WC_SUCCESS)
				return -1;
		total += n;
	}
	return n < 0 ? -1 : total;
}

/*
 * A QP with a deep queue of large WRITEs must not hold up another QP: the
 * engines run a bounded budget per pass, then requeue. QP pair A gets 512
 * WRITEs of 1 MiB (512 MiB to move) in one post; pair B then does 20 SENDs, each
 * waited for. They all complete while A still has WRITEs outstanding (A
 * starving B would show as all 512 done first), and A completes too.
 */
TEST_F_TIMEOUT(task, busy_qp_does_not_starve_others, 300)
{
	struct ibv_sge wsge = mk_sge(&self->l, 0, BUFSZ), ssge, rsge;
	static struct ibv_send_wr wr[FLOOD];
	struct pair_opts o;
	struct pair a, b;
	struct buf c;
	int done = 0, n;
	long t0;

	pair_default_opts(&o);
	o.sq_wr = FLOOD;
	o.cq_depth = FLOOD * 2;
	o.mtu = IBV_MTU_4096;
	ASSERT_EQ(0, pair_create(&a, self->ctx, self->pd, self->gid, &o));
	pair_default_opts(&o);
	ASSERT_EQ(0, pair_create(&b, self->ctx, self->pd, self->gid, &o));
	ASSERT_EQ(0, buf_new(&c, self->pd, 4096, ACC_ALL));
	fill_pattern(self->l.p, BUFSZ, 31);
	/* One post, one doorbell: the rest is the engines' work. */
	for (int i = 0; i < FLOOD; i++)
		wr[i] = (struct ibv_send_wr){
			.wr_id = i, .sg_list = &wsge, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE,
			.send_flags = IBV_SEND_SIGNALED,
			.wr.rdma.remote_addr = buf_addr(&self->r, 0),
			.wr.rdma.rkey = self->r.mr->rkey,
			.next = i + 1 < FLOOD ? &wr[i + 1] : NULL,
		};
	ASSERT_EQ(0, post_send_wr(a.qp[0], wr));
	ssge = mk_sge(&self->l, 0, 64);
	rsge = mk_sge(&c, 0, 64);
	for (int i = 0; i < 20; i++) {
		ASSERT_EQ(0, post_recv_sges(b.qp[1], i, &rsge, 1));
		ASSERT_EQ(0, post_op(b.qp[0], IBV_WR_SEND, i, &ssge, 1,
				     IBV_SEND_SIGNALED, 0, 0));
		expect_wc("b recv", b.rcq[1], i, IBV_WC_SUCCESS, IBV_WC_RECV,
			  b.qp[1]->qp_num, 64, NULL);
		expect_wc("b send", b.scq[0], i, IBV_WC_SUCCESS, IBV_WC_SEND,
			  b.qp[0]->qp_num, ANY, NULL);
	}
	done = take_ok(a.scq[0]);
	ASSERT_LE(0, done);
	EXPECT_GT(FLOOD, done) TH_LOG("B's 20 SENDs waited for A's flood");
	TH_LOG("A had completed %d of %d WRITEs", done, FLOOD);
	/* A finishes, every WRITE a success, the data in place. */
	for (t0 = now_ms(); done < FLOOD && now_ms() - t0 < 120000;) {
		n = take_ok(a.scq[0]);
		ASSERT_LE(0, n);
		done += n;
	}
	EXPECT_EQ(FLOOD, done);
	EXPECT_SAME(self->r.p, self->l.p, BUFSZ, "flood");
	EXPECT_SAME(c.p, self->l.p, 64, "send");
	buf_free(&c);
	pair_destroy(&b);
	pair_destroy(&a);
}

/* Busy (non-idle) and total jiffies of all CPUs, from /proc/stat. */
static int cpu_jiffies(long long *busy, long long *total)
{
	long long v[8] = {};
	FILE *f = fopen("/proc/stat", "r");
	int n;

	if (!f)
		return -1;
	n = fscanf(f, "cpu %lld %lld %lld %lld %lld %lld %lld %lld", &v[0],
		   &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]);
	fclose(f);
	if (n != 8)
		return -1;
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	*busy = *total - v[3] - v[4];	/* minus idle and iowait */
	return 0;
}

/*
 * A requester waiting out an RNR NAK (min_rnr_timer 0: 655 ms, infinite
 * retries) waits on a timer: over a second of waiting the CPUs stay
 * mostly idle (a spinning engine would keep one of the two busy, 50%),
 * and the SEND completes once a receive is posted.
 */
TEST_F_TIMEOUT(task, no_spin_while_waiting, 120)
{
	struct ibv_sge ssge = mk_sge(&self->l, 0, 64), rsge;
	long long b0, t0, b1, t1;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.min_rnr_timer = 0;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 1, &ssge, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	usleep(100000);
	ASSERT_EQ(0, cpu_jiffies(&b0, &t0));
	sleep(1);
	ASSERT_EQ(0, cpu_jiffies(&b1, &t1));
	ASSERT_LT(0, t1 - t0);
	TH_LOG("busy %lld of %lld jiffies", b1 - b0, t1 - t0);
	EXPECT_GT(25, 100 * (b1 - b0) / (t1 - t0));
	EXPECT_TRUE(cq_quiet(p.scq[0], 0));
	rsge = mk_sge(&self->r, 0, 64);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 2, &rsge, 1));
	expect_wc("send", p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 64, "send");
	pair_destroy(&p);
}

SIB_HARNESS_MAIN
