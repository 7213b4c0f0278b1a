// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib_bench_post: what one small work request costs, for
 * scripts/bench --profile (Documentation/benchmarks.md, "Where the
 * microseconds go").
 *
 * Two RC QPs of one process on one device, connected to each other. For
 * each of WRITE, SEND and READ of S bytes, N times one at a time: post a
 * signaled WR, note when ibv_post_send() returns and when its completion
 * is polled (for a SEND, the receive completion too). On sib's local path
 * the whole chain (requester, responder, ACK, completer) runs inside the
 * doorbell system call, so the post time is the chain; rdma_rxe runs
 * parts of it in tasklets. Prints per operation:
 *
 *   op OP size S post_p10_us . post_p50_us . post_p99_us .
 *      done_p10_us . done_p50_us . done_p99_us .
 *
 * and checks the data of the last operation of each kind byte for byte.
 *
 * usage: sib_bench_post -d DEV -g GID [-n N] [-s S]
 */
#define _GNU_SOURCE
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <infiniband/verbs.h>

#include "sib_pair.h"

struct bench {
	struct pair p;
	struct buf l, r;
	unsigned int n, size;
	double *post, *done;
};

/* Spin on @cq for one completion (10 s at most); 0 if it succeeded. */
static int spin_one(struct ibv_cq *cq, const char *what)
{
	double end = now_us() + 10e6;
	struct ibv_wc wc;
	int k;

	do {
		k = ibv_poll_cq(cq, 1, &wc);
	} while (k == 0 && now_us() < end);
	if (k == 1 && wc.status == IBV_WC_SUCCESS)
		return 0;
	fprintf(stderr, "%s: %s\n", what,
		k == 1 ? ibv_wc_status_str(wc.status) : "no completion");
	return -1;
}

static int one(struct bench *b, enum ibv_wr_opcode op, unsigned int i)
{
	struct ibv_sge s = mk_sge(&b->l, 0, b->size);
	struct ibv_sge rs = mk_sge(&b->r, 0, b->size);
	double t0;

	if (op == IBV_WR_SEND && post_recv_sges(b->p.qp[1], i, &rs, 1))
		return -1;
	t0 = now_us();
	if (post_op(b->p.qp[0], op, i, &s, 1, IBV_SEND_SIGNALED,
		    buf_addr(&b->r, 0), b->r.mr->rkey))
		return -1;
	b->post[i] = now_us() - t0;
	if (spin_one(b->p.scq[0], "send completion"))
		return -1;
	if (op == IBV_WR_SEND && spin_one(b->p.rcq[1], "receive completion"))
		return -1;
	b->done[i] = now_us() - t0;
	return 0;
}

static int run(struct bench *b, enum ibv_wr_opcode op, const char *name)
{
	uint8_t *src = op == IBV_WR_RDMA_READ ? b->r.p : b->l.p;
	uint8_t *dst = op == IBV_WR_RDMA_READ ? b->l.p : b->r.p;
	unsigned int i;

	fill_pattern(src, b->size, op + 7);
	memset(dst, 0, b->size);
	for (i = 0; i < b->n; i++)
		if (one(b, op, i))
			return -1;
	if (first_diff(src, dst, b->size) != -1) {
		fprintf(stderr, "%s: data differs\n", name);
		return -1;
	}
	qsort(b->post, b->n, sizeof(double), cmp_double);
	qsort(b->done, b->n, sizeof(double), cmp_double);
	printf("op %s size %u post_p10_us %.2f post_p50_us %.2f post_p99_us %.2f done_p10_us %.2f done_p50_us %.2f done_p99_us %.2f\n",
	       name, b->size, b->post[b->n / 10], b->post[b->n / 2],
	       b->post[b->n * 99 / 100], b->done[b->n / 10],
	       b->done[b->n / 2], b->done[b->n * 99 / 100]);
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .n = 2000, .size = 64 };
	const int rw = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
		       IBV_ACCESS_REMOTE_READ;
	const char *dev = NULL;
	struct ibv_context *ctx;
	struct pair_opts o;
	int gid = -1, c, ret;

	pair_default_opts(&o);
	while ((c = getopt(argc, argv, "d:g:n:s:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'n': b.n = strtoul(optarg, NULL, 0); break;
		case 's': b.size = strtoul(optarg, NULL, 0); break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GID [-n N] [-s SIZE]\n",
				argv[0]);
			return 2;
		}
	}
	if (!dev || gid < 0 || !b.n || !b.size) {
		fprintf(stderr, "%s: -d and -g are required\n", argv[0]);
		return 2;
	}
	ctx = pair_open_dev(dev);
	if (!ctx)
		return 1;
	b.post = calloc(b.n, sizeof(double));
	b.done = calloc(b.n, sizeof(double));
	if (!b.post || !b.done || pair_create(&b.p, ctx, NULL, gid, &o) ||
	    buf_new(&b.l, b.p.pd, b.size, rw) ||
	    buf_new(&b.r, b.p.pd, b.size, rw)) {
		fprintf(stderr, "%s: setup failed\n", argv[0]);
		return 1;
	}
	ret = run(&b, IBV_WR_RDMA_WRITE, "write") ||
	      run(&b, IBV_WR_SEND, "send") ||
	      run(&b, IBV_WR_RDMA_READ, "read");
	buf_free(&b.l);
	buf_free(&b.r);
	pair_destroy(&b.p);
	free(b.post);
	free(b.done);
	ibv_close_device(ctx);
	return ret ? 1 : 0;
}
