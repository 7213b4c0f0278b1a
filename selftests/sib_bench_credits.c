// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib_bench_credits: a sender against a slow receiver, for
 * scripts/bench-credits (Documentation/reliability.md, "What credits buy").
 *
 * Two RC QPs of one device, connected to each other. QP 0 sends N SENDs
 * of S bytes, keeping up to W of them posted; QP 1 posts one receive every
 * U microseconds (a receiver that cannot keep up), so the sender runs into
 * an empty receive queue again and again. With end-to-end credits the
 * sender holds its SENDs back; without, the responder refuses them with
 * RNR NAKs and the sender retries after min_rnr_timer.
 *
 * Prints one line:
 *   msgs N size S secs T msg_per_s X mib_per_s Y lat_avg_us A lat_p50_us B
 *   lat_p99_us C
 * where latency is from ibv_post_send to the send completion. The caller
 * reads the devices' counters (RNR NAKs) itself.
 *
 * usage: sib_bench_credits -d DEV -g GID [-n N] [-s S] [-w W] [-u U]
 *        [-t MIN_RNR_TIMER]
 */
#define _GNU_SOURCE
#include <errno.h>
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
	unsigned int n, size, window, recv_us;
	double *post_t, *lat;
};

static int post_one_send(struct bench *b, unsigned int i)
{
	struct ibv_sge s = mk_sge(&b->l, 0, b->size);

	b->post_t[i] = now_us();
	return post_op(b->p.qp[0], IBV_WR_SEND, i, &s, 1, IBV_SEND_SIGNALED,
		       0, 0);
}

/* The main loop: returns 0 when all N SENDs completed successfully. */
static int run(struct bench *b)
{
	unsigned int posted = 0, done = 0, recvs = 0, received = 0;
	double next_recv = now_us(), deadline = now_us() + 600e6;
	struct ibv_wc wc[32];
	int k;

	while (done < b->n || received < b->n) {
		double t = now_us();

		if (t > deadline) {
			fprintf(stderr, "stuck: %u sent, %u received\n", done,
				received);
			return -1;
		}
		if (recvs < b->n && t >= next_recv) {
			struct ibv_sge s = mk_sge(&b->r, 0, b->size);

			if (post_recv_sges(b->p.qp[1], recvs, &s, 1))
				return -1;
			recvs++;
			next_recv += b->recv_us;
		}
		while (posted < b->n && posted - done < b->window)
			if (post_one_send(b, posted++))
				return -1;
		k = ibv_poll_cq(b->p.scq[0], 32, wc);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS) {
				fprintf(stderr, "send %lu: %s\n",
					(unsigned long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status));
				return -1;
			}
			b->lat[done++] = now_us() - b->post_t[wc[i].wr_id];
		}
		k = ibv_poll_cq(b->p.rcq[1], 32, wc);
		for (int i = 0; i < k; i++) {
			if (wc[i].status != IBV_WC_SUCCESS ||
			    wc[i].byte_len != b->size) {
				fprintf(stderr, "receive %lu: %s, %u bytes\n",
					(unsigned long)wc[i].wr_id,
					ibv_wc_status_str(wc[i].status),
					wc[i].byte_len);
				return -1;
			}
			received++;
		}
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct bench b = { .n = 2000, .size = 4096, .window = 64,
			   .recv_us = 200 };
	const char *dev = NULL;
	struct ibv_context *ctx;
	struct pair_opts o;
	double t0, secs, sum = 0;
	int gid = -1, c;

	pair_default_opts(&o);
	while ((c = getopt(argc, argv, "d:g:n:s:w:u:t:")) != -1) {
		switch (c) {
		case 'd': dev = optarg; break;
		case 'g': gid = atoi(optarg); break;
		case 'n': b.n = strtoul(optarg, NULL, 0); break;
		case 's': b.size = strtoul(optarg, NULL, 0); break;
		case 'w': b.window = strtoul(optarg, NULL, 0); break;
		case 'u': b.recv_us = strtoul(optarg, NULL, 0); break;
		case 't': o.min_rnr_timer = atoi(optarg); break;
		default:
			fprintf(stderr, "usage: %s -d DEV -g GID [-n N] [-s SIZE] [-w WINDOW] [-u RECV_US] [-t MIN_RNR_TIMER]\n",
				argv[0]);
			return 2;
		}
	}
	if (!dev || gid < 0 || !b.n || !b.window) {
		fprintf(stderr, "%s: -d and -g are required\n", argv[0]);
		return 2;
	}
	ctx = pair_open_dev(dev);
	if (!ctx)
		return 1;
	o.sq_wr = b.window;
	o.rq_wr = b.n < 4096 ? b.n : 4096;
	o.cq_depth = b.n < 4096 ? b.n : 4096;
	o.rnr_retry = 7;	/* retry RNR NAKs without limit */
	b.post_t = calloc(b.n, sizeof(double));
	b.lat = calloc(b.n, sizeof(double));
	if (!b.post_t || !b.lat || pair_create(&b.p, ctx, NULL, gid, &o) ||
	    buf_new(&b.l, b.p.pd, b.size, IBV_ACCESS_LOCAL_WRITE) ||
	    buf_new(&b.r, b.p.pd, b.size, IBV_ACCESS_LOCAL_WRITE)) {
		fprintf(stderr, "%s: setup failed\n", argv[0]);
		return 1;
	}
	fill_pattern(b.l.p, b.size, 1);
	t0 = now_us();
	if (run(&b))
		return 1;
	secs = (now_us() - t0) / 1e6;
	if (first_diff(b.l.p, b.r.p, b.size) != -1) {
		fprintf(stderr, "%s: received data differs\n", argv[0]);
		return 1;
	}
	for (unsigned int i = 0; i < b.n; i++)
		sum += b.lat[i];
	qsort(b.lat, b.n, sizeof(double), cmp_double);
	printf("msgs %u size %u secs %.3f msg_per_s %.0f mib_per_s %.2f lat_avg_us %.0f lat_p50_us %.0f lat_p99_us %.0f\n",
	       b.n, b.size, secs, b.n / secs, b.n * (double)b.size / secs / 1048576,
	       sum / b.n, b.lat[b.n / 2], b.lat[b.n * 99 / 100]);
	buf_free(&b.l);
	buf_free(&b.r);
	pair_destroy(&b.p);
	free(b.post_t);
	free(b.lat);
	ibv_close_device(ctx);
	return 0;
}
