// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Protection, thread and parent domains, and importing (provider/sib.c,
 * provider/sib_cq.c, kernel/sib_verbs.c), on sib0 over lo: traffic through
 * QPs, an extended CQ and MRs of a parent domain with and without a
 * thread domain, the locks a thread domain lets the provider skip, the
 * allocator callbacks, busy and invalid domains; ibv_import_device,
 * ibv_import_pd and ibv_import_mr, and their errors.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(domain, BUFSZ);

/* ---- parent and thread domains ----------------------------------------- */

static int pdom_alloc_calls;

static void *pdom_alloc(struct ibv_pd *pd, void *pd_context, size_t size,
			size_t alignment, uint64_t resource_type)
{
	(*(int *)pd_context)++;
	return IBV_ALLOCATOR_USE_DEFAULT;
}

static void pdom_free(struct ibv_pd *pd, void *pd_context, void *ptr,
		      uint64_t resource_type)
{
	(*(int *)pd_context)++;
}

/* A parent domain of @pd with @td (or none) and counting allocators. */
static struct ibv_pd *pdom_new(struct ibv_context *ctx, struct ibv_pd *pd,
			       struct ibv_td *td)
{
	struct ibv_parent_domain_init_attr a = {
		.pd = pd,
		.td = td,
		.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
		.alloc = pdom_alloc,
		.free = pdom_free,
		.pd_context = &pdom_alloc_calls,
	};

	return ibv_alloc_parent_domain(ctx, &a);
}

static struct ibv_cq_ex *pdom_cq(struct ibv_context *ctx, struct ibv_pd *pdom)
{
	struct ibv_cq_init_attr_ex a = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
		.parent_domain = pdom,
	};

	return ibv_create_cq_ex(ctx, &a);
}

TEST_F(domain, parent_domain_td_traffic)
{
	struct ibv_td_init_attr ta = {};
	struct ibv_qp *qp[2] = {};
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct ibv_cq_ex *cq;
	struct ibv_pd *pdom;
	struct ibv_td *td;
	struct buf l, r;

	pdom_alloc_calls = 0;
	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td) TH_LOG("alloc_td: %s", strerror(errno));
	pdom = pdom_new(self->ctx, self->pd, td);
	ASSERT_NE(NULL, pdom) TH_LOG("alloc_parent_domain: %s", strerror(errno));
	EXPECT_EQ(self->ctx, pdom->context);
	EXPECT_EQ(self->pd->handle, pdom->handle);
	cq = pdom_cq(self->ctx, pdom);
	ASSERT_NE(NULL, cq) TH_LOG("create_cq_ex on a parent domain: %s",
				   strerror(errno));
	ASSERT_EQ(0, qp_ex_pair(self->ctx, pdom, self->gid, cq, qp));
	EXPECT_EQ(pdom, qp[0]->pd);
	/* MRs through the parent domain. */
	ASSERT_EQ(0, buf_new(&l, pdom, 8192, ACC_ALL));
	ASSERT_EQ(0, buf_new(&r, pdom, 8192, ACC_ALL));

	fill_pattern(l.p, 8192, 15);
	sge = mk_sge(&r, 0, 4096);
	ASSERT_EQ(0, post_recv_sges(qp[1], 1, &sge, 1));
	sge = mk_sge(&l, 0, 4096);
	ASSERT_EQ(0, post_op(qp[0], IBV_WR_SEND, 2, &sge, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, cq_ex_next(cq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		if (wc.wr_id == 1) {
			EXPECT_EQ(IBV_WC_RECV, wc.opcode);
			EXPECT_EQ(4096, wc.byte_len);
			EXPECT_EQ(qp[1]->qp_num, wc.qp_num);
		} else {
			EXPECT_EQ(2, wc.wr_id);
			EXPECT_EQ(IBV_WC_SEND, wc.opcode);
			EXPECT_EQ(qp[0]->qp_num, wc.qp_num);
		}
	}
	EXPECT_SAME(r.p, l.p, 4096, "send on a thread domain");

	sge = mk_sge(&l, 4096, 4096);
	ASSERT_EQ(0, post_op(qp[0], IBV_WR_RDMA_WRITE, 3, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(&r, 4096),
			     r.mr->rkey));
	ASSERT_EQ(0, cq_ex_next(cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(3, wc.wr_id);
	EXPECT_SAME(r.p + 4096, l.p + 4096, 4096, "write on a thread domain");

	/* Busy while used, free once not. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(EBUSY, ibv_dealloc_td(td));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	buf_free(&l);
	buf_free(&r);
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
	EXPECT_EQ(0, ibv_dealloc_td(td));
	/* sib's rings are kernel memory: nothing asked the allocator. */
	EXPECT_EQ(0, pdom_alloc_calls);
}

/* A parent domain without a thread domain, with plain CQs (pair_create). */
TEST_F(domain, parent_domain_without_td)
{
	struct ibv_parent_domain_init_attr a = { .pd = self->pd };
	struct pair_opts o;
	struct ibv_sge sge;
	struct ibv_pd *pdom;
	struct pair p;
	struct buf l, r;

	pdom = ibv_alloc_parent_domain(self->ctx, &a);
	ASSERT_NE(NULL, pdom) TH_LOG("alloc_parent_domain: %s", strerror(errno));
	pair_default_opts(&o);
	ASSERT_EQ(0, pair_create(&p, self->ctx, pdom, self->gid, &o));
	ASSERT_EQ(0, buf_new(&l, pdom, 4096, ACC_ALL));
	ASSERT_EQ(0, buf_new(&r, pdom, 4096, ACC_ALL));
	fill_pattern(r.p, 4096, 16);
	sge = mk_sge(&l, 0, 4096);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_READ, 1, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(&r, 0), r.mr->rkey));
	expect_wc("read", p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  p.qp[0]->qp_num, 4096, NULL);
	EXPECT_SAME(l.p, r.p, 4096, "read on a parent domain");
	pair_destroy(&p);
	buf_free(&l);
	buf_free(&r);
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
}

struct lock_probe {
	pthread_t thread;
	atomic_bool done;
	struct ibv_qp *qp;	/* post_send(NULL) takes the SQ's lock */
	struct ibv_cq *cq;	/* poll_cq(0) takes the CQ's lock */
};

static void *lock_probe_fn(void *arg)
{
	struct lock_probe *lp = arg;
	struct ibv_send_wr *bad;
	struct ibv_wc wc;

	if (lp->qp)
		ibv_post_send(lp->qp, NULL, &bad);
	else
		ibv_poll_cq(lp->cq, 0, &wc);
	atomic_store(&lp->done, true);
	return NULL;
}

/* Whether the probe's call returned within @ms. */
static bool lock_probe_done(struct lock_probe *lp, int ms)
{
	for (long end = now_ms() + ms; now_ms() < end; usleep(1000))
		if (atomic_load(&lp->done))
			return true;
	return atomic_load(&lp->done);
}

/*
 * Hold the SQ (ibv_wr_start) and CQ (ibv_start_poll) of QPs on a parent
 * domain while another thread takes the same lock: it waits unless the
 * parent domain holds a thread domain.
 */
static void __lock_probe_run(struct __test_metadata *_metadata,
			     struct ibv_context *ctx, struct ibv_pd *pd,
			     int gid, struct ibv_td *td)
{
	struct ibv_qp *qp[2] = {};
	struct lock_probe lp;
	struct ibv_cq_ex *cq;
	struct ibv_pd *pdom;
	struct ibv_wc wc;
	bool skipped;

	pdom = pdom_new(ctx, pd, td);
	ASSERT_NE(NULL, pdom);
	cq = pdom_cq(ctx, pdom);
	ASSERT_NE(NULL, cq);
	ASSERT_EQ(0, qp_ex_pair(ctx, pdom, gid, cq, qp));

	/* The send queue. */
	memset(&lp, 0, sizeof(lp));
	lp.qp = qp[0];
	ibv_wr_start(ibv_qp_to_qp_ex(qp[0]));
	ASSERT_EQ(0, pthread_create(&lp.thread, NULL, lock_probe_fn, &lp));
	skipped = lock_probe_done(&lp, td ? 2000 : 300);
	ibv_wr_abort(ibv_qp_to_qp_ex(qp[0]));
	EXPECT_EQ(!!td, skipped) TH_LOG("SQ lock %s", td ? "taken" : "skipped");
	EXPECT_TRUE(lock_probe_done(&lp, 2000));
	pthread_join(lp.thread, NULL);

	/* The CQ, holding a completion (zero-length SEND). */
	ASSERT_EQ(0, post_recv_sges(qp[1], 1, NULL, 0));
	ASSERT_EQ(0, post_op(qp[0], IBV_WR_SEND, 2, NULL, 0,
			     IBV_SEND_SIGNALED, 0, 0));
	ASSERT_EQ(0, cq_ex_next(cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	for (long end = now_ms() + WAIT_MS; now_ms() < end; usleep(100)) {
		if (!ibv_start_poll(cq, &(struct ibv_poll_cq_attr){}))
			break;
	}
	memset(&lp, 0, sizeof(lp));
	lp.cq = ibv_cq_ex_to_cq(cq);
	ASSERT_EQ(0, pthread_create(&lp.thread, NULL, lock_probe_fn, &lp));
	skipped = lock_probe_done(&lp, td ? 2000 : 300);
	EXPECT_EQ(IBV_WC_SUCCESS, cq->status);
	ibv_end_poll(cq);
	EXPECT_EQ(!!td, skipped) TH_LOG("CQ lock %s", td ? "taken" : "skipped");
	EXPECT_TRUE(lock_probe_done(&lp, 2000));
	pthread_join(lp.thread, NULL);

	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
}

TEST_F(domain, thread_domain_skips_locks)
{
	struct ibv_td_init_attr ta = {};
	struct ibv_td *td;

	/* Without a thread domain the locks are taken... */
	__lock_probe_run(_metadata, self->ctx, self->pd, self->gid, NULL);
	/* ...with one they are not. */
	td = ibv_alloc_td(self->ctx, &ta);
	ASSERT_NE(NULL, td);
	__lock_probe_run(_metadata, self->ctx, self->pd, self->gid, td);
	EXPECT_EQ(0, ibv_dealloc_td(td));
}

TEST_F(domain, parent_domain_invalid)
{
	struct ibv_parent_domain_init_attr a = { .pd = self->pd };
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 16,
		.wc_flags = IBV_WC_STANDARD_FLAGS,
		.comp_mask = IBV_CQ_INIT_ATTR_MASK_PD,
	};
	struct ibv_td_init_attr ta = { .comp_mask = 1 };
	struct ibv_pd *pdom, *nested;

	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_td(self->ctx, &ta));
	EXPECT_EQ(EINVAL, errno);

	a.pd = NULL;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.pd = self->pd;
	a.comp_mask = 1u << 7;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	a.comp_mask = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_parent_domain(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno) TH_LOG("allocators without functions");

	a.comp_mask = 0;
	pdom = ibv_alloc_parent_domain(self->ctx, &a);
	ASSERT_NE(NULL, pdom);
	a.pd = pdom;
	errno = 0;
	nested = ibv_alloc_parent_domain(self->ctx, &a);
	EXPECT_EQ(NULL, nested) TH_LOG("a parent domain of a parent domain");
	EXPECT_EQ(EINVAL, errno);
	if (nested)
		ibv_dealloc_pd(nested);

	/* An extended CQ's parent_domain must be a parent domain. */
	ca.parent_domain = self->pd;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EINVAL, errno);
	ca.parent_domain = NULL;
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_cq_ex(self->ctx, &ca));
	EXPECT_EQ(EINVAL, errno);

	EXPECT_EQ(EBUSY, ibv_dealloc_pd(self->pd));
	EXPECT_EQ(0, ibv_dealloc_pd(pdom));
}

/* ---- importing a context, a PD and an MR -------------------------------- */

/*
 * A second context on a dup of the first one's command file, the PD and
 * MR imported into it: QPs made there move data with the imported keys,
 * and unimporting leaves the objects to their owner.
 */
TEST_F(domain, import_device_pd_mr)
{
	struct ibv_cq_init_attr_ex ca = {
		.cqe = 64,
		.wc_flags = IBV_WC_STANDARD_FLAGS |
			    IBV_WC_EX_WITH_COMPLETION_TIMESTAMP,
	};
	struct ibv_qp *qp[2] = {};
	struct ibv_context *ictx;
	struct ibv_cq_ex *cq;
	struct ibv_pd *ipd;
	struct ibv_mr *imr;
	struct ibv_sge sge;
	struct ibv_wc wc;
	struct buf b;
	int fd;

	ASSERT_EQ(0, buf_new(&b, self->pd, 16384, ACC_ALL));
	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx) TH_LOG("import_device: %s", strerror(errno));
	EXPECT_EQ(fd, ictx->cmd_fd);
	EXPECT_STREQ(ibv_get_device_name(self->ctx->device),
		     ibv_get_device_name(ictx->device));
	ipd = ibv_import_pd(ictx, self->pd->handle);
	ASSERT_NE(NULL, ipd) TH_LOG("import_pd: %s", strerror(errno));
	EXPECT_EQ(self->pd->handle, ipd->handle);
	imr = ibv_import_mr(ipd, b.mr->handle);
	ASSERT_NE(NULL, imr) TH_LOG("import_mr: %s", strerror(errno));
	EXPECT_EQ(b.mr->lkey, imr->lkey);
	EXPECT_EQ(b.mr->rkey, imr->rkey);
	EXPECT_EQ(b.mr->length, imr->length);
	EXPECT_EQ(b.mr->handle, imr->handle);
	EXPECT_EQ(ipd, imr->pd);

	/* The imported context takes the kernel's caps from sysfs. */
	cq = ibv_create_cq_ex(ictx, &ca);
	ASSERT_NE(NULL, cq) TH_LOG("timestamped CQ in an imported context: %s",
				   strerror(errno));
	ASSERT_EQ(0, qp_ex_pair(ictx, ipd, self->gid, cq, qp));
	fill_pattern(b.p, 4096, 77);
	sge = (struct ibv_sge){ .addr = buf_addr(&b, 4096), .length = 4096,
				.lkey = imr->lkey };
	ASSERT_EQ(0, post_recv_sges(qp[1], 1, &sge, 1));
	sge = (struct ibv_sge){ .addr = buf_addr(&b, 0), .length = 4096,
				.lkey = imr->lkey };
	ASSERT_EQ(0, post_op(qp[0], IBV_WR_SEND, 2, &sge, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	for (int i = 0; i < 2; i++) {
		ASSERT_EQ(0, cq_ex_next(cq, &wc));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	}
	EXPECT_SAME(b.p + 4096, b.p, 4096, "send with an imported MR");
	ASSERT_EQ(0, post_op(qp[0], IBV_WR_RDMA_WRITE, 3, &sge, 1,
			     IBV_SEND_SIGNALED, buf_addr(&b, 8192),
			     imr->rkey));
	ASSERT_EQ(0, cq_ex_next(cq, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_SAME(b.p + 8192, b.p, 4096, "write to an imported MR's rkey");

	for (int i = 0; i < 2; i++)
		EXPECT_EQ(0, ibv_destroy_qp(qp[i]));
	EXPECT_EQ(0, ibv_destroy_cq(ibv_cq_ex_to_cq(cq)));
	ibv_unimport_mr(imr);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(0, ibv_close_device(ictx));
	/* The owner's MR and PD are still there. */
	EXPECT_EQ(0, ibv_dereg_mr(b.mr));
	b.mr = NULL;
	buf_free(&b);
}

TEST_F(domain, import_invalid)
{
	struct ibv_context *ictx;
	struct ibv_pd *ipd;
	struct ibv_mr *mr;
	int fd;

	errno = 0;
	EXPECT_EQ(NULL, ibv_import_device(-1));
	EXPECT_EQ(EINVAL, errno);
	fd = open("/dev/null", O_RDWR);
	ASSERT_LE(0, fd);
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_device(fd)) TH_LOG("not a uverbs file");
	EXPECT_EQ(ENODEV, errno);
	close(fd);

	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx);
	/* An MR handle that does not exist. */
	errno = 0;
	mr = ibv_import_mr(self->pd, 0x7fffff);
	EXPECT_EQ(NULL, mr);
	EXPECT_NE(0, errno);
	/* A PD handle that does not exist fails where it is used. */
	ipd = ibv_import_pd(ictx, 0x7fffff);
	ASSERT_NE(NULL, ipd);
	errno = 0;
	mr = ibv_reg_mr(ipd, self->l.p, 4096, IBV_ACCESS_LOCAL_WRITE);
	EXPECT_EQ(NULL, mr) TH_LOG("reg_mr on an imported non-PD");
	EXPECT_NE(0, errno);
	if (mr)
		ibv_dereg_mr(mr);
	ibv_unimport_pd(ipd);
	EXPECT_EQ(0, ibv_close_device(ictx));
}

SIB_HARNESS_MAIN
