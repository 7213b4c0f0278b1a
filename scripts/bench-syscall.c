// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * bench-syscall: the floor under a doorbell, measured in the guest by
 * scripts/bench --profile. Prints, in ns per call (the fastest of 15
 * rounds):
 *
 *   getppid     a null system call
 *   db_badqp    write() of a POST_SEND doorbell (no WRs) naming no QP:
 *               the system call plus uverbs' command dispatch
 *   db_reset    the same doorbell on a real RC QP in the RESET state:
 *               plus the QP lookup and the driver's post_send (for sib,
 *               the engine lock and one empty pass)
 *   dbfile_reset the doorbell of sib's doorbell file (rdma_user_sib.h,
 *               SIB_UCTX_CAP_DB_FD) on the same QP; printed only when
 *               the context has one
 *
 * Usage: bench-syscall DEVICE [ITERATIONS]
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/types.h>
#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>

#include "../uapi/rdma_user_sib.h"
#include "sib_util.h"

struct doorbell {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_post_send cmd;
};

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static void ring(int fd, struct doorbell *db)
{
	if (write(fd, db, sizeof(*db)) < 0 && errno == EBADF)
		abort();
}

static struct sib_db_req dbreq;

static void ring_file(int fd)
{
	if (write(fd, &dbreq, sizeof(dbreq)) != sizeof(dbreq))
		abort();
}

/* The context's doorbell file, or -1. */
static int find_db_fd(void)
{
	int fd;

	return sib_db_fds(&fd, 1) == 1 ? fd : -1;
}

#define ROUNDS 15

/*
 * The fastest of ROUNDS rounds, in ns per call (kind 0: getppid, 2: the
 * doorbell file, else the uverbs doorbell): other guests on the host only ever add time, so the minimum
 * is the figure that repeats.
 */
static double measure(int kind, int fd, struct doorbell *db, long iters)
{
	double r[ROUNDS], t0;
	long i;
	int k;

	for (k = 0; k < ROUNDS; k++) {
		t0 = now_ns();
		for (i = 0; i < iters; i++) {
			if (kind == 0)
				syscall(SYS_getppid);
			else if (kind == 2)
				ring_file(fd);
			else
				ring(fd, db);
		}
		r[k] = (now_ns() - t0) / iters;
	}
	qsort(r, ROUNDS, sizeof(r[0]), cmp_double);
	return r[0];
}

static void doorbell_init(struct doorbell *db, uint32_t handle,
			  struct ib_uverbs_post_send_resp *resp)
{
	memset(db, 0, sizeof(*db));
	db->hdr.command = IB_USER_VERBS_CMD_POST_SEND;
	db->hdr.in_words = sizeof(*db) / 4;
	db->hdr.out_words = sizeof(*resp) / 4;
	db->cmd.response = (uintptr_t)resp;
	db->cmd.qp_handle = handle;
	db->cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
}

int main(int argc, char **argv)
{
	struct ib_uverbs_post_send_resp resp;
	struct ibv_qp_init_attr init = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	struct doorbell db;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	long iters;
	int i, dbfd;

	if (argc < 2) {
		fprintf(stderr, "usage: %s DEVICE [ITERATIONS]\n", argv[0]);
		return 2;
	}
	iters = argc > 2 ? atol(argv[2]) : 5000;
	list = ibv_get_device_list(NULL);
	for (i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), argv[1]))
			ctx = ibv_open_device(list[i]);
	if (!ctx) {
		fprintf(stderr, "bench-syscall: no device %s\n", argv[1]);
		return 1;
	}
	pd = ibv_alloc_pd(ctx);
	cq = pd ? ibv_create_cq(ctx, 16, NULL, NULL, 0) : NULL;
	init.send_cq = cq;
	init.recv_cq = cq;
	qp = cq ? ibv_create_qp(pd, &init) : NULL;
	if (!qp) {
		perror("bench-syscall: setup");
		return 1;
	}
	printf("getppid %.0f\n", measure(0, 0, NULL, iters));
	doorbell_init(&db, 0xfffffff0u, &resp);
	printf("db_badqp %.0f\n", measure(1, ctx->cmd_fd, &db, iters));
	doorbell_init(&db, qp->handle, &resp);
	printf("db_reset %.0f\n", measure(1, ctx->cmd_fd, &db, iters));
	dbfd = find_db_fd();
	if (dbfd >= 0) {
		dbreq.qpn = qp->qp_num;
		dbreq.op = SIB_DB_SQ;
		printf("dbfile_reset %.0f\n", measure(2, dbfd, NULL, iters));
	}
	ibv_destroy_qp(qp);
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	ibv_free_device_list(list);
	return 0;
}
