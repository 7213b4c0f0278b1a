// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib on-demand paging (IBV_ACCESS_ON_DEMAND) on sib0 over lo: the
 * capabilities, the registrations refused, SEND, RDMA WRITE, READ and
 * atomics into and out of ODP MRs whose pages were never touched (the
 * device touches them first: the responder answers with RNR NAKs while a
 * worker faults them in, the requester waits), data checked byte for
 * byte; madvise(MADV_DONTNEED), munmap and a new mapping at the same
 * address between transfers, MADV_DONTNEED during them; fork's
 * copy-on-write; ibv_advise_mr() prefetch and its errors; the counters.
 * Implicit ODP MRs (the whole address space, ibv_reg_mr(NULL, SIZE_MAX)):
 * the same transfers through their keys into never-touched mappings,
 * mappings far apart (chunks of their own) and across a chunk boundary,
 * addresses not mapped or past the user address space, prefetch, and
 * dereg with many chunks made (the "odp_chunks" object count).
 * Then WRITE, READ and SEND between ODP MRs of two sib devices on a veth
 * between two namespaces (RoCEv2: the responder runs in softirq), of
 * explicit and of implicit MRs.
 *
 * QP 0 is the requester ("A"), QP 1 the responder ("B").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_topo.h"
#include "sib_pair_t.h"

#define BUFSZ		(256 * 1024)
#define ODP_ACC		(IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

FIXTURE(odp) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf a, b;	/* ODP, of QP 0 and QP 1 */
};

FIXTURE_SETUP(odp)
{
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, odp_buf(&self->a, self->p.pd, BUFSZ, ODP_ACC));
	ASSERT_EQ(0, odp_buf(&self->b, self->p.pd, BUFSZ, ODP_ACC));
}

FIXTURE_TEARDOWN(odp)
{
	odp_free(&self->a);
	odp_free(&self->b);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/* RDMA @op of @len bytes between a[aoff] and b[boff]; completes as @st. */
static void rdma_op(struct __test_metadata *_metadata, struct pair *p,
		    enum ibv_wr_opcode op, struct buf *a, size_t aoff,
		    struct buf *b, size_t boff, uint32_t len,
		    enum ibv_wc_status st)
{
	struct ibv_sge sge = mk_sge(a, aoff, len);

	ASSERT_EQ(0, post_op(p->qp[0], op, 7, &sge, 1, IBV_SEND_SIGNALED,
			     buf_addr(b, boff), b->mr->rkey));
	expect_wc("rdma", p->scq[0], 7, st, ANY, p->qp[0]->qp_num, ANY, NULL);
}

TEST_F(odp, caps_advertised)
{
	struct ibv_device_attr_ex ax;
	struct ibv_odp_caps *c = &ax.odp_caps;
	uint32_t rc = IBV_ODP_SUPPORT_SEND | IBV_ODP_SUPPORT_RECV |
		      IBV_ODP_SUPPORT_WRITE | IBV_ODP_SUPPORT_READ |
		      IBV_ODP_SUPPORT_ATOMIC | IBV_ODP_SUPPORT_SRQ_RECV;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	EXPECT_EQ(IBV_ODP_SUPPORT | IBV_ODP_SUPPORT_IMPLICIT, c->general_caps);
	EXPECT_EQ(rc, c->per_transport_caps.rc_odp_caps);
	EXPECT_EQ(IBV_ODP_SUPPORT_SEND, c->per_transport_caps.uc_odp_caps);
	EXPECT_EQ(IBV_ODP_SUPPORT_SEND, c->per_transport_caps.ud_odp_caps);
	/* XRC: RC's, but receives go to SRQs only. */
	EXPECT_EQ(rc & ~IBV_ODP_SUPPORT_RECV, ax.xrc_odp_caps);
}

TEST_F(odp, refused_registrations)
{
	/* Implicit: with windows, or at an iova other than the address. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->p.pd, NULL, SIZE_MAX,
				   IBV_ACCESS_ON_DEMAND |
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_MW_BIND));
	EXPECT_EQ(EINVAL, errno) TH_LOG("implicit ODP with windows: %s",
					strerror(errno));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr_iova(self->p.pd, NULL, SIZE_MAX, 1 << 20,
					IBV_ACCESS_ON_DEMAND |
					IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno) TH_LOG("implicit ODP at an iova: %s",
					strerror(errno));
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->p.pd, self->a.p, 4096,
				   IBV_ACCESS_ON_DEMAND |
				   IBV_ACCESS_LOCAL_WRITE |
				   IBV_ACCESS_MW_BIND));
	EXPECT_EQ(EINVAL, errno) TH_LOG("ODP with windows: %s",
					strerror(errno));
}

TEST_F(odp, write_to_untouched_pages)
{
	long long rnr0 = sib0_counter("odp_rnr_nak_sent");
	long long pg0 = sib0_counter("odp_fault_pages");
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	fill_pattern(want, BUFSZ, 1);
	memcpy(self->a.p, want, BUFSZ);		/* the source is touched */
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p, want, BUFSZ, "written");
	EXPECT_LT(rnr0, sib0_counter("odp_rnr_nak_sent"));
	EXPECT_LE(pg0 + 2 * BUFSZ / 4096, sib0_counter("odp_fault_pages"));
	free(want);
}

TEST_F(odp, write_from_untouched_pages)
{
	long long w0 = sib0_counter("odp_req_waits");

	memset(self->b.p, 0xee, BUFSZ);
	/* Never written: the device reads zeros. */
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 4096,
		&self->b, 100, 3 * 4096, IBV_WC_SUCCESS);
	EXPECT_UNTOUCHED(self->b.p + 100, 3 * 4096, 0, "zeros written");
	EXPECT_UNTOUCHED(self->b.p, 100, 0xee, "before");
	EXPECT_UNTOUCHED(self->b.p + 100 + 3 * 4096, 4096, 0xee, "after");
	EXPECT_LT(w0, sib0_counter("odp_req_waits"));
}

TEST_F(odp, read_into_untouched_pages)
{
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	fill_pattern(want, BUFSZ, 2);
	memcpy(self->b.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_READ, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->a.p, want, BUFSZ, "read");
	free(want);
}

TEST_F(odp, read_from_untouched_pages)
{
	memset(self->a.p, 0xee, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_READ, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_UNTOUCHED(self->a.p, BUFSZ, 0, "zeros read");
}

TEST_F(odp, send_recv_untouched_pages)
{
	uint8_t *want = malloc(BUFSZ);
	struct ibv_sge rs = mk_sge(&self->b, 0, BUFSZ);
	struct ibv_sge ss = mk_sge(&self->a, 0, 100000);

	ASSERT_NE(NULL, want);
	fill_pattern(want, 100000, 3);
	memcpy(self->a.p, want, 100000);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 9, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 8, &ss, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 9, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, 100000, NULL);
	EXPECT_SAME(self->b.p, want, 100000, "received");
	free(want);
}

TEST_F(odp, atomics_on_untouched_pages)
{
	uint64_t *res = (uint64_t *)(self->a.p + 8192);
	uint64_t *tgt = (uint64_t *)(self->b.p + 3 * 4096 + 64);
	struct ibv_sge sge = mk_sge(&self->a, 8192, 8);

	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 1,
				 &sge, IBV_SEND_SIGNALED, (uintptr_t)tgt,
				 self->b.mr->rkey, 5, 0));
	expect_wc("fetch_add", self->p.scq[0], 1, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(0, *res);
	EXPECT_EQ(5, *tgt);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 2,
				 &sge, IBV_SEND_SIGNALED, (uintptr_t)tgt,
				 self->b.mr->rkey, 5, 0x1122334455667788ULL));
	expect_wc("cmp_swp", self->p.scq[0], 2, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(5, *res);
	EXPECT_EQ(0x1122334455667788ULL, *tgt);
}

/* After MADV_DONTNEED the device writes into the new pages. */
TEST_F(odp, dontneed_between_transfers)
{
	long long inv0 = sib0_counter("odp_invalidations");
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	for (int round = 0; round < 3; round++) {
		fill_pattern(want, BUFSZ, 10 + round);
		memcpy(self->a.p, want, BUFSZ);
		rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0,
			&self->b, 0, BUFSZ, IBV_WC_SUCCESS);
		EXPECT_SAME(self->b.p, want, BUFSZ, "written");
		ASSERT_EQ(0, madvise(self->b.p, BUFSZ, MADV_DONTNEED));
		ASSERT_EQ(0, madvise(self->a.p, BUFSZ, MADV_DONTNEED));
		EXPECT_UNTOUCHED(self->b.p, BUFSZ, 0, "dropped");
	}
	EXPECT_LE(inv0 + 6, sib0_counter("odp_invalidations"));
	free(want);
}

/* A new mapping at the same address: the MR follows the address. */
TEST_F(odp, remap_between_transfers)
{
	uint8_t *want = malloc(BUFSZ);
	void *p;

	ASSERT_NE(NULL, want);
	fill_pattern(want, BUFSZ, 20);
	memcpy(self->a.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	p = mmap(self->b.p, BUFSZ, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
	ASSERT_EQ((void *)self->b.p, p);
	EXPECT_UNTOUCHED(self->b.p, BUFSZ, 0, "the new mapping");
	fill_pattern(want, BUFSZ, 21);
	memcpy(self->a.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p, want, BUFSZ, "written into the new mapping");
	free(want);
}

/* The target is unmapped: a remote access error, never a crash. */
TEST_F(odp, write_to_unmapped_range)
{
	long long err0 = sib0_counter("odp_fault_errors");

	memset(self->a.p, 1, 4096);
	ASSERT_EQ(0, munmap(self->b.p + 4096, 4096));
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, 8192, IBV_WC_REM_ACCESS_ERR);
	EXPECT_LT(err0, sib0_counter("odp_fault_errors"));
	EXPECT_UNTOUCHED(self->b.p, 4096, 0, "the mapped page");
}

/* The source is unmapped: a local protection error. */
TEST_F(odp, send_from_unmapped_range)
{
	struct ibv_sge ss = mk_sge(&self->a, 0, 8192);

	ASSERT_EQ(0, munmap(self->a.p, 8192));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 3, &ss, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->b, 0),
			     self->b.mr->rkey));
	expect_wc("write", self->p.scq[0], 3, IBV_WC_LOC_PROT_ERR, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	/* The munmap already happened: keep odp_free() from doing it again. */
	ASSERT_EQ(self->a.p, mmap(self->a.p, 8192, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0));
}

/* A READ whose sink is unmapped fails locally before it is sent. */
TEST_F(odp, read_into_unmapped_range)
{
	ASSERT_EQ(0, munmap(self->a.p, 4096));
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_READ, &self->a, 0, &self->b,
		0, 4096, IBV_WC_LOC_PROT_ERR);
	ASSERT_EQ(self->a.p, mmap(self->a.p, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0));
}

struct dontneed_arg {
	void *p;
	size_t len;
	atomic_bool stop;
	long n;
};

static void *dontneed_loop(void *arg)
{
	struct dontneed_arg *d = arg;

	while (!atomic_load(&d->stop)) {
		madvise(d->p, d->len, MADV_DONTNEED);
		d->n++;
		/*
		 * Much longer than a fault and a retry (a few jiffies
		 * each): a loop as fast as those would drop the pages
		 * again before every retry, and nothing could progress.
		 */
		usleep(50000);
	}
	return NULL;
}

/*
 * MADV_DONTNEED of both MRs while WRITEs run: every WRITE completes
 * (the pages come back, and no page is used after its invalidation), and
 * once it stops the data lands where the process sees it.
 */
TEST_F(odp, dontneed_during_transfers)
{
	struct dontneed_arg da = { .p = self->b.p, .len = BUFSZ };
	struct dontneed_arg db = { .p = self->a.p, .len = BUFSZ };
	uint8_t *want = malloc(BUFSZ);
	pthread_t ta, tb;
	long long inv0 = sib0_counter("odp_invalidations"), t0 = now_ms();

	ASSERT_NE(NULL, want);
	sib_wait_ms = 30000;
	ASSERT_EQ(0, pthread_create(&ta, NULL, dontneed_loop, &da));
	ASSERT_EQ(0, pthread_create(&tb, NULL, dontneed_loop, &db));
	while (now_ms() - t0 < 2000)
		rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0,
			&self->b, 0, BUFSZ, IBV_WC_SUCCESS);
	atomic_store(&da.stop, true);
	atomic_store(&db.stop, true);
	pthread_join(ta, NULL);
	pthread_join(tb, NULL);
	EXPECT_LT(inv0 + 2 * 10, sib0_counter("odp_invalidations"));
	fill_pattern(want, BUFSZ, 30);
	memcpy(self->a.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p, want, BUFSZ, "written after");
	free(want);
}

/*
 * fork() makes the parent's pages copy-on-write, which invalidates them:
 * the device then writes into the parent's own new pages, and the child
 * keeps its copy.
 */
TEST_F(odp, fork_copy_on_write)
{
	uint8_t *want = malloc(BUFSZ);
	int pipefd[2], status;
	char c;
	pid_t pid;

	ASSERT_NE(NULL, want);
	memset(self->b.p, 0x11, BUFSZ);
	ASSERT_EQ(0, pipe(pipefd));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* Wait for the parent's WRITE; the child's copy stays 0x11. */
		if (read(pipefd[0], &c, 1) != 1)
			_exit(2);
		_exit(first_not(self->b.p, BUFSZ, 0x11) == -1 ? 0 : 1);
	}
	fill_pattern(want, BUFSZ, 40);
	memcpy(self->a.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p, want, BUFSZ, "the parent's pages");
	ASSERT_EQ(1, write(pipefd[1], "x", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0)
		TH_LOG("the child's copy changed");
	close(pipefd[0]);
	close(pipefd[1]);
	free(want);
}

static int advise(struct ibv_pd *pd, enum ibv_advise_mr_advice adv,
		  uint32_t flags, struct ibv_sge *sge, uint32_t n)
{
	return ibv_advise_mr(pd, adv, flags, sge, n);
}

/* A synchronous prefetch brings the pages in: no RNR NAK afterwards. */
TEST_F(odp, prefetch_sync)
{
	struct ibv_sge sge = mk_sge(&self->b, 0, BUFSZ);
	long long pg0 = sib0_counter("odp_fault_pages"), rnr0;
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	EXPECT_LE(pg0 + BUFSZ / 4096, sib0_counter("odp_fault_pages"));
	fill_pattern(want, BUFSZ, 50);
	memcpy(self->a.p, want, BUFSZ);
	rnr0 = sib0_counter("odp_rnr_nak_sent");
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_EQ(rnr0, sib0_counter("odp_rnr_nak_sent"));
	EXPECT_SAME(self->b.p, want, BUFSZ, "written");
	free(want);
}

/* An asynchronous prefetch, and one that only maps present pages. */
TEST_F(odp, prefetch_async_and_no_fault)
{
	struct ibv_sge sge = mk_sge(&self->b, 0, BUFSZ);
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	EXPECT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
			    &sge, 1));
	memset(self->a.p, 0x5a, BUFSZ);
	EXPECT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	fill_pattern(want, BUFSZ, 51);
	memcpy(self->a.p, want, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p, want, BUFSZ, "written");
	free(want);
}

TEST_F(odp, prefetch_errors)
{
	struct ibv_sge sge = mk_sge(&self->b, 0, 4096);
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct buf plain;
	int ret;

	ASSERT_NE(NULL, pd2);
	/* Unknown flags. */
	ret = advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0x10, &sge, 1);
	EXPECT_TRUE(ret == EOPNOTSUPP || ret == EINVAL) TH_LOG("%d", ret);
	/* Unknown advice. */
	ret = advise(self->p.pd, 7, 0, &sge, 1);
	EXPECT_TRUE(ret == EOPNOTSUPP || ret == EINVAL) TH_LOG("%d", ret);
	/* A key that names nothing, a key of another PD. */
	sge.lkey = self->b.mr->lkey ^ 0x100;
	EXPECT_EQ(ENOENT, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	sge.lkey = self->b.mr->lkey;
	EXPECT_EQ(ENOENT, advise(pd2, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	/* Outside the MR. */
	sge.addr = buf_addr(&self->b, BUFSZ - 100);
	sge.length = 200;
	EXPECT_EQ(EINVAL, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	/* An MR that is not ODP. */
	ASSERT_EQ(0, buf_new(&plain, self->p.pd, 4096, IBV_ACCESS_LOCAL_WRITE));
	sge = mk_sge(&plain, 0, 4096);
	EXPECT_EQ(ENOENT, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	buf_free(&plain);
	/* An unmapped range: the synchronous fault fails. */
	ASSERT_EQ(0, munmap(self->b.p, 4096));
	sge = mk_sge(&self->b, 0, 4096);
	EXPECT_EQ(EFAULT, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	ASSERT_EQ(self->b.p, mmap(self->b.p, 4096, PROT_READ | PROT_WRITE,
				  MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED,
				  -1, 0));
	ibv_dealloc_pd(pd2);
}

/* Deregistration while pages are present and the worker may still run. */
TEST_F(odp, dereg_after_use)
{
	for (int i = 0; i < 20; i++) {
		struct buf t;

		ASSERT_EQ(0, odp_buf(&t, self->p.pd, BUFSZ, ODP_ACC));
		memset(self->a.p, i, 4096);
		rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0,
			&t, i * 4096, 4096, IBV_WC_SUCCESS);
		EXPECT_UNTOUCHED(t.p + i * 4096, 4096, i, "written");
		odp_free(&t);
	}
}

/* ---- implicit ODP: one MR over the whole address space ---- */

/* An implicit ODP MR of @pd, or NULL. */
static struct ibv_mr *imr_reg(struct ibv_pd *pd)
{
	return ibv_reg_mr(pd, NULL, SIZE_MAX, ODP_ACC);
}

/*
 * @len bytes of fresh anonymous memory (never touched), at @hint if not
 * NULL, reached through the implicit MR @mr: buf_free() must not be used
 * (it would deregister @mr); imap_free() unmaps.
 */
static int imap(struct buf *b, struct ibv_mr *mr, size_t len, void *hint)
{
	memset(b, 0, sizeof(*b));
	b->p = mmap(hint, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE |
		    (hint ? MAP_FIXED_NOREPLACE : 0), -1, 0);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		return errno;
	}
	b->len = len;
	b->mr = mr;
	return 0;
}

static void imap_free(struct buf *b)
{
	if (b->p)
		munmap(b->p, b->len);
	memset(b, 0, sizeof(*b));
}

FIXTURE(imp) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct ibv_mr *mr;	/* implicit */
	struct buf a, b;	/* fresh mappings, through @mr */
};

FIXTURE_SETUP(imp)
{
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	self->mr = imr_reg(self->p.pd);
	ASSERT_NE(NULL, self->mr) TH_LOG("implicit ODP MR: %s",
					 strerror(errno));
	ASSERT_EQ(0, imap(&self->a, self->mr, BUFSZ, NULL));
	ASSERT_EQ(0, imap(&self->b, self->mr, BUFSZ, NULL));
}

FIXTURE_TEARDOWN(imp)
{
	if (self->mr)
		ibv_dereg_mr(self->mr);
	imap_free(&self->a);
	imap_free(&self->b);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/* Its keys; the iova is the address (checked by every transfer below). */
TEST_F(imp, registered)
{
	EXPECT_EQ(self->mr->lkey, self->mr->rkey);
	EXPECT_LE(1, objects_value("mr"));
}

/*
 * WRITE into never-touched pages through the rkey, READ out of them into
 * never-touched pages through the lkey; the bytes around stay as they
 * were.
 */
TEST_F(imp, write_read_untouched)
{
	long long rnr0 = sib0_counter("odp_rnr_nak_sent");
	uint32_t len = BUFSZ - 2 * 4096 - 200;
	uint8_t *want = malloc(BUFSZ);
	struct buf c;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, imap(&c, self->mr, BUFSZ, NULL));
	fill_pattern(want, BUFSZ, 70);
	memcpy(self->a.p, want, BUFSZ);		/* the source is touched */
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		4096 + 100, len, IBV_WC_SUCCESS);
	EXPECT_SAME(self->b.p + 4096 + 100, want, len, "written");
	EXPECT_UNTOUCHED(self->b.p, 4096 + 100, 0, "before");
	EXPECT_UNTOUCHED(self->b.p + 4096 + 100 + len, 4096 + 100, 0, "after");
	EXPECT_LT(rnr0, sib0_counter("odp_rnr_nak_sent"));
	/* The READ's sink (c) was never touched either. */
	memset(c.p, 0xee, 4096);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_READ, &c, 4096, &self->b,
		4096 + 100, len, IBV_WC_SUCCESS);
	EXPECT_SAME(c.p + 4096, want, len, "read");
	EXPECT_UNTOUCHED(c.p, 4096, 0xee, "before the sink");
	EXPECT_UNTOUCHED(c.p + 4096 + len, BUFSZ - 4096 - len, 0,
			 "after the sink");
	imap_free(&c);
	free(want);
}

/* A WRITE whose source was never touched sends zeros. */
TEST_F(imp, write_from_untouched)
{
	long long w0 = sib0_counter("odp_req_waits");

	memset(self->b.p, 0xee, BUFSZ);
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 8192,
		&self->b, 100, 3 * 4096, IBV_WC_SUCCESS);
	EXPECT_UNTOUCHED(self->b.p + 100, 3 * 4096, 0, "zeros written");
	EXPECT_UNTOUCHED(self->b.p, 100, 0xee, "before");
	EXPECT_UNTOUCHED(self->b.p + 100 + 3 * 4096, 4096, 0xee, "after");
	EXPECT_LT(w0, sib0_counter("odp_req_waits"));
}

/* SEND and RECV with the implicit lkey, both mappings untouched by us. */
TEST_F(imp, send_recv)
{
	struct ibv_sge rs = mk_sge(&self->b, 64, BUFSZ - 64);
	struct ibv_sge ss = mk_sge(&self->a, 0, 100000);
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	fill_pattern(want, 100000, 71);
	memcpy(self->a.p, want, 100000);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 9, &rs, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 8, &ss, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 9, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, 100000, NULL);
	EXPECT_SAME(self->b.p + 64, want, 100000, "received");
	EXPECT_UNTOUCHED(self->b.p, 64, 0, "before");
	EXPECT_UNTOUCHED(self->b.p + 64 + 100000, 4096, 0, "after");
	free(want);
}

TEST_F(imp, atomics)
{
	uint64_t *res = (uint64_t *)(self->a.p + 8192);
	uint64_t *tgt = (uint64_t *)(self->b.p + 3 * 4096 + 64);
	struct ibv_sge sge = mk_sge(&self->a, 8192, 8);

	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD, 1,
				 &sge, IBV_SEND_SIGNALED, (uintptr_t)tgt,
				 self->mr->rkey, 5, 0));
	expect_wc("fetch_add", self->p.scq[0], 1, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(0, *res);
	EXPECT_EQ(5, *tgt);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP, 2,
				 &sge, IBV_SEND_SIGNALED, (uintptr_t)tgt,
				 self->mr->rkey, 5, 0x1122334455667788ULL));
	expect_wc("cmp_swp", self->p.scq[0], 2, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_EQ(5, *res);
	EXPECT_EQ(0x1122334455667788ULL, *tgt);
	EXPECT_EQ(0, tgt[-1]);
	EXPECT_EQ(0, tgt[1]);
}

#define CHUNK		(16UL << 20)	/* SIB_ODP_IMP_SIZE */

/*
 * Mappings 64 GiB apart (chunks of their own), and a WRITE and a READ
 * across a chunk boundary, gathered from and scattered to both.
 */
TEST_F(imp, far_apart_and_across_chunks)
{
	long long ch0 = objects_value("odp_chunks");
	uint8_t *want = malloc(2 * BUFSZ);
	struct buf far, big;
	struct ibv_sge sge[2];
	uintptr_t bnd;

	ASSERT_NE(NULL, want);
	ASSERT_LE(0, ch0);
	ASSERT_EQ(0, imap(&far, self->mr, BUFSZ,
			  (void *)(((uintptr_t)self->a.p - (64UL << 30)) &
				   ~(CHUNK - 1))));
	ASSERT_EQ(0, imap(&big, self->mr, 3 * CHUNK, NULL));
	fill_pattern(want, 2 * BUFSZ, 72);
	memcpy(self->a.p, want, BUFSZ);
	memcpy(far.p, want + BUFSZ, BUFSZ);
	/*
	 * A chunk boundary inside big (16 to 32 MiB from its start), BUFSZ / 2
	 * after the target's start.
	 */
	bnd = ((uintptr_t)big.p + 2 * CHUNK - 1) & ~(CHUNK - 1);
	sge[0] = mk_sge(&self->a, 0, BUFSZ);
	sge[1] = mk_sge(&far, 0, BUFSZ);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 1, sge, 2,
			     IBV_SEND_SIGNALED, bnd - BUFSZ / 2,
			     self->mr->rkey));
	expect_wc("write", self->p.scq[0], 1, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME((uint8_t *)bnd - BUFSZ / 2, want, 2 * BUFSZ,
		    "written across");
	EXPECT_UNTOUCHED((uint8_t *)bnd - BUFSZ / 2 - 4096, 4096, 0, "before");
	EXPECT_UNTOUCHED((uint8_t *)bnd + 3 * BUFSZ / 2, 4096, 0, "after");
	/* And back, scattered into untouched pages of both far mappings. */
	memset(self->a.p, 0, BUFSZ);
	ASSERT_EQ(0, madvise(far.p, BUFSZ, MADV_DONTNEED));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 2, sge, 2,
			     IBV_SEND_SIGNALED, bnd - BUFSZ / 2,
			     self->mr->rkey));
	expect_wc("read", self->p.scq[0], 2, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->a.p, want, BUFSZ, "read into the first");
	EXPECT_SAME(far.p, want + BUFSZ, BUFSZ, "read into the far one");
	/* far's, and the two on either side of bnd, at least. */
	EXPECT_LE(ch0 + 3, objects_value("odp_chunks"));
	imap_free(&far);
	imap_free(&big);
	free(want);
}

/* MADV_DONTNEED, then munmap and a new mapping, between WRITEs. */
TEST_F(imp, dontneed_and_remap_between_transfers)
{
	long long inv0 = sib0_counter("odp_invalidations");
	uint8_t *want = malloc(BUFSZ);

	ASSERT_NE(NULL, want);
	for (int round = 0; round < 4; round++) {
		fill_pattern(want, BUFSZ, 80 + round);
		memcpy(self->a.p, want, BUFSZ);
		rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0,
			&self->b, 0, BUFSZ, IBV_WC_SUCCESS);
		EXPECT_SAME(self->b.p, want, BUFSZ, "written");
		if (round & 1) {
			ASSERT_EQ(0, madvise(self->b.p, BUFSZ, MADV_DONTNEED));
			EXPECT_UNTOUCHED(self->b.p, BUFSZ, 0, "dropped");
		} else {
			ASSERT_EQ(0, munmap(self->b.p, BUFSZ));
			ASSERT_EQ(self->b.p, mmap(self->b.p, BUFSZ,
						  PROT_READ | PROT_WRITE,
						  MAP_PRIVATE | MAP_ANONYMOUS |
						  MAP_FIXED, -1, 0));
			EXPECT_UNTOUCHED(self->b.p, BUFSZ, 0, "new mapping");
		}
	}
	EXPECT_LE(inv0 + 4, sib0_counter("odp_invalidations"));
	free(want);
}

/* The target is not mapped: a remote access error. */
TEST_F(imp, write_to_unmapped)
{
	long long err0 = sib0_counter("odp_fault_errors");

	memset(self->a.p, 1, 8192);
	ASSERT_EQ(0, munmap(self->b.p + 4096, 4096));
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, 8192, IBV_WC_REM_ACCESS_ERR);
	EXPECT_LT(err0, sib0_counter("odp_fault_errors"));
	EXPECT_UNTOUCHED(self->b.p, 4096, 0, "the mapped page");
}

/* Past the user address space: out of the MR, a remote access error. */
TEST_F(imp, write_past_user_space)
{
	memset(self->a.p, 1, 4096);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 3,
			     &(struct ibv_sge){ (uintptr_t)self->a.p, 4096,
						self->mr->lkey }, 1,
			     IBV_SEND_SIGNALED, 0xffff880000000000ULL,
			     self->mr->rkey));
	expect_wc("write", self->p.scq[0], 3, IBV_WC_REM_ACCESS_ERR, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
}

/* The source is not mapped: a local protection error. */
TEST_F(imp, send_from_unmapped)
{
	struct ibv_sge ss = mk_sge(&self->a, 0, 8192);

	ASSERT_EQ(0, munmap(self->a.p, 8192));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 3, &ss, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->b, 0),
			     self->mr->rkey));
	expect_wc("write", self->p.scq[0], 3, IBV_WC_LOC_PROT_ERR, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_UNTOUCHED(self->b.p, 8192, 0, "the target");
}

/* Prefetch through the implicit lkey: sync, async, no-fault, errors. */
TEST_F(imp, prefetch)
{
	struct ibv_sge sge = mk_sge(&self->b, 0, BUFSZ);
	long long pg0 = sib0_counter("odp_fault_pages"), rnr0;
	uint8_t *want = malloc(BUFSZ);
	struct buf c;

	ASSERT_NE(NULL, want);
	ASSERT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_WRITE,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	EXPECT_LE(pg0 + BUFSZ / 4096, sib0_counter("odp_fault_pages"));
	fill_pattern(want, BUFSZ, 90);
	memcpy(self->a.p, want, BUFSZ);
	rnr0 = sib0_counter("odp_rnr_nak_sent");
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &self->b,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_EQ(rnr0, sib0_counter("odp_rnr_nak_sent"));
	EXPECT_SAME(self->b.p, want, BUFSZ, "written");
	/* Asynchronous and no-fault, of a mapping of its own. */
	ASSERT_EQ(0, imap(&c, self->mr, BUFSZ, NULL));
	sge = mk_sge(&c, 0, BUFSZ);
	EXPECT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH, 0,
			    &sge, 1));
	EXPECT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH_NO_FAULT,
			    IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0, &c,
		0, BUFSZ, IBV_WC_SUCCESS);
	EXPECT_SAME(c.p, want, BUFSZ, "written after async");
	/* Not mapped: the synchronous fault fails. */
	ASSERT_EQ(0, munmap(c.p, 4096));
	sge = mk_sge(&c, 0, 4096);
	EXPECT_EQ(EFAULT, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	/* Past the user address space: outside the MR. */
	sge.addr = 0xffff880000000000ULL;
	EXPECT_EQ(EINVAL, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
				 IBV_ADVISE_MR_FLAG_FLUSH, &sge, 1));
	c.p += 4096;
	c.len -= 4096;
	imap_free(&c);
	free(want);
}

/*
 * 64 chunks made (one page written in each of 64 chunks of a 1 GiB
 * mapping), then dereg: no chunk and no MR left behind.
 */
TEST_F(imp, dereg_many_chunks)
{
	long long ch0 = objects_value("odp_chunks");
	long long mr0 = objects_value("mr");
	struct ibv_mr *mr = imr_reg(self->p.pd);
	struct buf big;
	int i;

	ASSERT_LE(0, ch0);
	ASSERT_NE(NULL, mr);
	EXPECT_EQ(mr0 + 1, objects_value("mr"));
	/* The source's chunk (of the fixture's MR) is made first. */
	ASSERT_EQ(0, advise(self->p.pd, IBV_ADVISE_MR_ADVICE_PREFETCH,
			    IBV_ADVISE_MR_FLAG_FLUSH,
			    &(struct ibv_sge){ (uintptr_t)self->a.p, 4096,
					       self->mr->lkey }, 1));
	ch0 = objects_value("odp_chunks");
	ASSERT_EQ(0, imap(&big, mr, 64 * CHUNK, NULL));
	memset(self->a.p, 0x3c, 4096);
	for (i = 0; i < 64; i++)
		rdma_op(_metadata, &self->p, IBV_WR_RDMA_WRITE, &self->a, 0,
			&big, i * CHUNK + 8192, 4096, IBV_WC_SUCCESS);
	for (i = 0; i < 64; i++)
		EXPECT_UNTOUCHED(big.p + i * CHUNK + 8192, 4096, 0x3c,
				 "written");
	EXPECT_EQ(ch0 + 64, objects_value("odp_chunks"));
	ASSERT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(ch0, objects_value("odp_chunks"));
	EXPECT_EQ(mr0, objects_value("mr"));
	imap_free(&big);
}

/* ---- over RoCEv2: two sib devices on a veth between two namespaces ---- */

FIXTURE(wire) {
	struct sib_topo t;
	struct pair p;		/* QP 0 on sibA, QP 1 on sibB */
	struct buf a, b;	/* ODP buffers on sibA's and sibB's PD */
};

FIXTURE_SETUP(wire)
{
	struct pair_opts o;

	self->t = (struct sib_topo){ .kind = SIB_TOPO_VETH, .tag = "odp" };
	ASSERT_EQ(0, sib_topo_up(&self->t)) TH_LOG("%s", self->t.err);
	pair_default_opts(&o);
	o.sq_wr = 16;
	o.rq_wr = 16;
	o.max_sge = 1;
	o.max_inline = 0;
	o.cq_depth = 64;
	o.one_cq = true;
	o.rd_atomic = 4;
	o.timeout = sib_qp_timeout(14);
	o.psn[0] = 200;
	o.psn[1] = 100;
	ASSERT_EQ(0, pair_create_topo(&self->p, &self->t, &o));
	ASSERT_EQ(0, odp_buf(&self->a, self->p.end[0].pd, BUFSZ, ODP_ACC));
	ASSERT_EQ(0, odp_buf(&self->b, self->p.end[1].pd, BUFSZ, ODP_ACC));
}

FIXTURE_TEARDOWN(wire)
{
	odp_free(&self->a);
	odp_free(&self->b);
	pair_destroy(&self->p);
	sib_topo_down(&self->t);
}

/*
 * Over the wire the responder runs from the receive softirq: WRITE,
 * READ and SEND between ODP MRs whose pages were never touched, and a
 * WRITE after MADV_DONTNEED of the target.
 */
TEST_F(wire, write_read_send_untouched)
{
	struct pair *p = &self->p;
	struct buf *a = &self->a, *b = &self->b;
	uint8_t *want = malloc(BUFSZ);
	long long rnr0 = hw_counter("sibB", "odp_rnr_nak_sent");
	struct ibv_sge sge;

	ASSERT_NE(NULL, want);
	fill_pattern(want, BUFSZ, 60);
	memcpy(a->p, want, BUFSZ);
	sge = mk_sge(a, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, 1, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(b, 0), b->mr->rkey));
	expect_wc("write", p->scq[0], 1, IBV_WC_SUCCESS, ANY,
		  p->qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(b->p, want, BUFSZ, "written");
	EXPECT_LT(rnr0, hw_counter("sibB", "odp_rnr_nak_sent"));

	/* B reads A's bytes into its untouched half... after DONTNEED. */
	ASSERT_EQ(0, madvise(b->p, BUFSZ, MADV_DONTNEED));
	sge = mk_sge(b, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p->qp[1], IBV_WR_RDMA_READ, 2, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(a, 0), a->mr->rkey));
	expect_wc("read", p->scq[1], 2, IBV_WC_SUCCESS, ANY,
		  p->qp[1]->qp_num, ANY, NULL);
	EXPECT_SAME(b->p, want, BUFSZ, "read");

	/* A SEND into A's dropped pages. */
	ASSERT_EQ(0, madvise(a->p, BUFSZ, MADV_DONTNEED));
	sge = mk_sge(a, 0, BUFSZ);
	ASSERT_EQ(0, post_recv_sges(p->qp[0], 3, &sge, 1));
	sge = mk_sge(b, 0, 65536);
	ASSERT_EQ(0, post_op(p->qp[1], IBV_WR_SEND, 4, &sge, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", p->scq[1], 4, IBV_WC_SUCCESS, ANY,
		  p->qp[1]->qp_num, ANY, NULL);
	expect_wc("recv", p->rcq[0], 3, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p->qp[0]->qp_num, 65536, NULL);
	EXPECT_SAME(a->p, want, 65536, "received");
	free(want);
}

/*
 * The same through implicit MRs at both ends: WRITE into B's untouched
 * mapping through B's implicit rkey, READ back into A's untouched one,
 * and a SEND into untouched pages of A.
 */
TEST_F(wire, implicit_write_read_send)
{
	struct pair *p = &self->p;
	struct ibv_mr *ma = imr_reg(p->end[0].pd), *mb = imr_reg(p->end[1].pd);
	uint8_t *want = malloc(BUFSZ);
	struct buf sa, ra, tb;
	struct ibv_sge sge;

	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, ma);
	ASSERT_NE(NULL, mb);
	ASSERT_EQ(0, imap(&sa, ma, BUFSZ, NULL));
	ASSERT_EQ(0, imap(&ra, ma, BUFSZ, NULL));
	ASSERT_EQ(0, imap(&tb, mb, BUFSZ, NULL));
	fill_pattern(want, BUFSZ, 61);
	memcpy(sa.p, want, BUFSZ);
	sge = mk_sge(&sa, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, 1, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(&tb, 0), mb->rkey));
	expect_wc("write", p->scq[0], 1, IBV_WC_SUCCESS, ANY,
		  p->qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(tb.p, want, BUFSZ, "written");

	sge = mk_sge(&ra, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_READ, 2, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(&tb, 0), mb->rkey));
	expect_wc("read", p->scq[0], 2, IBV_WC_SUCCESS, ANY,
		  p->qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(ra.p, want, BUFSZ, "read");

	ASSERT_EQ(0, madvise(ra.p, BUFSZ, MADV_DONTNEED));
	sge = mk_sge(&ra, 0, BUFSZ);
	ASSERT_EQ(0, post_recv_sges(p->qp[0], 3, &sge, 1));
	sge = mk_sge(&tb, 0, 65536);
	ASSERT_EQ(0, post_op(p->qp[1], IBV_WR_SEND, 4, &sge, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", p->scq[1], 4, IBV_WC_SUCCESS, ANY,
		  p->qp[1]->qp_num, ANY, NULL);
	expect_wc("recv", p->rcq[0], 3, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p->qp[0]->qp_num, 65536, NULL);
	EXPECT_SAME(ra.p, want, 65536, "received");
	EXPECT_UNTOUCHED(ra.p + 65536, 4096, 0, "after");
	ASSERT_EQ(0, ibv_dereg_mr(ma));
	ASSERT_EQ(0, ibv_dereg_mr(mb));
	imap_free(&sa);
	imap_free(&ra);
	imap_free(&tb);
	free(want);
}

SIB_HARNESS_MAIN
