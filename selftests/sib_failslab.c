// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib_failslab: every allocation a control verb makes fails once, in turn.
 *
 * The kernel's fault injection (CONFIG_FAULT_INJECTION, failslab and
 * fail_page_alloc) has a per-task countdown, /proc/thread-self/fail-nth:
 * writing N there makes the N-th allocation of this thread (slab or page)
 * fail. For each operation below, the sweep arms N = 1, 2, 3, ... and runs
 * the operation once per N, until an N is not reached (the countdown is
 * still running when the operation returns): then every allocation point
 * of the operation has failed once. Each run must either succeed (the
 * failure was absorbed) or fail with a clean errno; after the sweep, sib's
 * object counts (debugfs "objects") are back where they were, and the
 * operation succeeds again. The debug lane's runner fails the run on any
 * splat, and its kmemleak scan after the program on any leak.
 *
 * Only a kernel with fault injection has fail-nth (the debug lane's);
 * elsewhere every test skips.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define FAIL_NTH	"/proc/thread-self/fail-nth"
#define DBG		"/sys/kernel/debug"
#define SWEEP_MAX	20000	/* more allocation points than this: a bug */
#define FS_NETDEV	"sibfs0"
#define FS_IBDEV	"sibfs"
#define MR_LEN		(1 << 20)

/* What the sweeps need, made before any fault is armed. */
struct fs_env {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	union ibv_gid gid;
	int gid_index;
	void *mr_buf;
	struct pair pair;	/* for post_send */
	struct buf sbuf, rbuf;
	uint32_t seed;
};

/*
 * One operation: @prep (may be NULL) makes what it works on, with no fault
 * armed; @make runs with the fault armed and returns 0 or a negative errno;
 * @undo (no fault armed) destroys what @make made on success, and what
 * @prep made in any case; @gone (may be NULL) says that nothing of it is
 * left where the objects file does not count (a device, for instance).
 * @dense: an operation with thousands of allocations (link add: ib_core's
 * sysfs, MAD agents and GID table) fails each of its first @dense ones,
 * then every tenth, unless SIB_FAILSLAB_FULL=1 asks for all of them.
 */
struct fs_op {
	const char *name;
	int (*prep)(struct fs_env *e, void **obj);
	int (*make)(struct fs_env *e, void **obj);
	void (*undo)(struct fs_env *e, void *obj, bool made);
	bool (*gone)(struct fs_env *e);
	unsigned int dense;	/* 0: every allocation fails once */
};

/* ---- the fault countdown --------------------------------------------------- */

static int nth_fd = -1;

static int nth_arm(unsigned int n)
{
	char s[16];
	int len = snprintf(s, sizeof(s), "%u", n);

	return pwrite(nth_fd, s, len, 0) == len ? 0 : -1;
}

/* The countdown left: 0 once the armed allocation was reached. */
static long nth_left(void)
{
	char s[16] = "";
	ssize_t n = pread(nth_fd, s, sizeof(s) - 1, 0);

	return n > 0 ? strtol(s, NULL, 10) : -1;
}

/* Knobs that make every allocation a candidate (saved and restored). */
static const char *const knobs[][2] = {
	{ DBG "/failslab/ignore-gfp-wait", "N" },
	{ DBG "/failslab/verbose", "0" },
	{ DBG "/fail_page_alloc/ignore-gfp-wait", "N" },
	{ DBG "/fail_page_alloc/ignore-gfp-highmem", "N" },
	{ DBG "/fail_page_alloc/min-order", "0" },
	{ DBG "/fail_page_alloc/verbose", "0" },
};
#define NKNOBS	(sizeof(knobs) / sizeof(knobs[0]))
static char saved[NKNOBS][16];

static int knob_write(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY);
	ssize_t n;

	if (fd < 0)
		return -1;
	n = write(fd, val, strlen(val));
	close(fd);
	return n == (ssize_t)strlen(val) ? 0 : -1;
}

/* Fault injection set up; on failure, why in @why (the tests skip). */
static bool faults_ready(char *why, size_t size)
{
	if (access(FAIL_NTH, W_OK)) {
		snprintf(why, size, "no %s: kernel without fault injection (make check-debug)",
			 FAIL_NTH);
		return false;
	}
	for (size_t i = 0; i < NKNOBS; i++) {
		if (read_text(knobs[i][0], saved[i], sizeof(saved[i])) <= 0 ||
		    knob_write(knobs[i][0], knobs[i][1])) {
			snprintf(why, size, "no %s: kernel without failslab or fail_page_alloc",
				 knobs[i][0]);
			return false;
		}
		saved[i][strcspn(saved[i], "\n")] = 0;
	}
	nth_fd = open(FAIL_NTH, O_RDWR);
	if (nth_fd < 0) {
		snprintf(why, size, "open %s: %s", FAIL_NTH, strerror(errno));
		return false;
	}
	return true;
}

static void faults_restore(void)
{
	for (size_t i = 0; i < NKNOBS; i++)
		if (saved[i][0])
			knob_write(knobs[i][0], saved[i]);
	if (nth_fd >= 0)
		close(nth_fd);
	nth_fd = -1;
}

/* ---- the operations -------------------------------------------------------- */

static int errno_of(void *p)
{
	return p ? 0 : -(errno ? errno : EIO);
}

static int pd_make(struct fs_env *e, void **obj)
{
	*obj = ibv_alloc_pd(e->ctx);
	return errno_of(*obj);
}

static void pd_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_dealloc_pd(obj);
}

static int cq_make(struct fs_env *e, void **obj)
{
	*obj = ibv_create_cq(e->ctx, 256, NULL, NULL, 0);
	return errno_of(*obj);
}

static void cq_undo(struct fs_env *e, void *obj, bool made)
{
	if (obj)
		ibv_destroy_cq(obj);
}

static int cq_prep(struct fs_env *e, void **obj)
{
	*obj = ibv_create_cq(e->ctx, 16, NULL, NULL, 0);
	return errno_of(*obj);
}

/* The CQ must keep working whether or not the resize happened. */
static int resize_make(struct fs_env *e, void **obj)
{
	return -ibv_resize_cq(*obj, 4096);
}

static void resize_undo(struct fs_env *e, void *obj, bool made)
{
	struct ibv_wc wc;

	if (ibv_poll_cq(obj, 1, &wc) != 0)
		fprintf(stderr, "# resized CQ: poll does not say empty\n");
	ibv_destroy_cq(obj);
}

static struct ibv_qp *fs_qp(struct fs_env *e, enum ibv_qp_type type,
			    struct ibv_srq *srq)
{
	struct ibv_qp_init_attr a = {
		.send_cq = e->cq, .recv_cq = e->cq, .srq = srq,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 4, .max_recv_sge = 4,
			 .max_inline_data = 64 },
		.qp_type = type,
	};

	return ibv_create_qp(e->pd, &a);
}

static int qp_rc_make(struct fs_env *e, void **obj)
{
	*obj = fs_qp(e, IBV_QPT_RC, NULL);
	return errno_of(*obj);
}

static int qp_uc_make(struct fs_env *e, void **obj)
{
	*obj = fs_qp(e, IBV_QPT_UC, NULL);
	return errno_of(*obj);
}

static int qp_ud_make(struct fs_env *e, void **obj)
{
	*obj = fs_qp(e, IBV_QPT_UD, NULL);
	return errno_of(*obj);
}

static void qp_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_destroy_qp(obj);
}

static struct ibv_srq *fs_srq(struct fs_env *e)
{
	struct ibv_srq_init_attr a = {
		.attr = { .max_wr = 128, .max_sge = 2 },
	};

	return ibv_create_srq(e->pd, &a);
}

static int srq_make(struct fs_env *e, void **obj)
{
	*obj = fs_srq(e);
	return errno_of(*obj);
}

static void srq_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_destroy_srq(obj);
}

/* An RC QP on an SRQ: @obj holds both. */
struct qp_srq {
	struct ibv_srq *srq;
	struct ibv_qp *qp;
};

static int qp_srq_prep(struct fs_env *e, void **obj)
{
	struct qp_srq *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	*obj = q;
	q->srq = fs_srq(e);
	return errno_of(q->srq);
}

static int qp_srq_make(struct fs_env *e, void **obj)
{
	struct qp_srq *q = *obj;

	q->qp = fs_qp(e, IBV_QPT_RC, q->srq);
	return errno_of(q->qp);
}

static void qp_srq_undo(struct fs_env *e, void *obj, bool made)
{
	struct qp_srq *q = obj;

	if (!q)
		return;
	if (q->qp)
		ibv_destroy_qp(q->qp);
	if (q->srq)
		ibv_destroy_srq(q->srq);
	free(q);
}

static int modify_prep(struct fs_env *e, void **obj)
{
	*obj = fs_qp(e, IBV_QPT_RC, NULL);
	return errno_of(*obj);
}

/* RESET -> INIT -> RTR -> RTS, connected to itself over lo. */
static int modify_make(struct fs_env *e, void **obj)
{
	struct ibv_qp *qp = *obj;

	return -qp_connect_to(qp, e->gid_index, &e->gid, qp->qp_num, 1, 1,
			      IBV_MTU_1024, 14, 7);
}

static void modify_undo(struct fs_env *e, void *obj, bool made)
{
	ibv_destroy_qp(obj);
}

static int mr_make(struct fs_env *e, void **obj)
{
	*obj = ibv_reg_mr(e->pd, e->mr_buf, MR_LEN, IBV_ACCESS_LOCAL_WRITE |
			  IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return errno_of(*obj);
}

static void mr_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_dereg_mr(obj);
}

static int mw_make(struct fs_env *e, void **obj)
{
	*obj = ibv_alloc_mw(e->pd, IBV_MW_TYPE_2);
	return errno_of(*obj);
}

static void mw_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_dealloc_mw(obj);
}

/* 64 KiB of device memory: 16 page allocations, any of which may fail. */
#define FS_DM_LEN	(64 * 1024)

static int dm_make(struct fs_env *e, void **obj)
{
	struct ibv_alloc_dm_attr a = { .length = FS_DM_LEN };

	*obj = ibv_alloc_dm(e->ctx, &a);
	return errno_of(*obj);
}

static void dm_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_free_dm(obj);
}

/* ibv_reg_dm_mr over an allocation made beforehand. */
struct fs_dm_mr {
	struct ibv_dm *dm;
	struct ibv_mr *mr;
};

static int dm_mr_prep(struct fs_env *e, void **obj)
{
	struct ibv_alloc_dm_attr a = { .length = FS_DM_LEN };
	struct fs_dm_mr *d = calloc(1, sizeof(*d));

	if (!d)
		return -ENOMEM;
	d->dm = ibv_alloc_dm(e->ctx, &a);
	if (!d->dm) {
		free(d);
		return -errno;
	}
	*obj = d;
	return 0;
}

static int dm_mr_make(struct fs_env *e, void **obj)
{
	struct fs_dm_mr *d = *obj;

	d->mr = ibv_reg_dm_mr(e->pd, d->dm, 0, FS_DM_LEN,
			      IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE |
			      IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ);
	return errno_of(d->mr);
}

static void dm_mr_undo(struct fs_env *e, void *obj, bool made)
{
	struct fs_dm_mr *d = obj;

	if (made)
		ibv_dereg_mr(d->mr);
	ibv_free_dm(d->dm);
	free(d);
}

static int ah_make(struct fs_env *e, void **obj)
{
	struct ibv_ah_attr a = {
		.is_global = 1, .port_num = 1,
		.grh = { .dgid = e->gid, .sgid_index = e->gid_index,
			 .hop_limit = 64 },
	};

	*obj = ibv_create_ah(e->pd, &a);
	return errno_of(*obj);
}

static void ah_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		ibv_destroy_ah(obj);
}

/*
 * libibverbs finds devices by reading sysfs, which allocates too: the
 * device list is taken before the fault is armed, and only the open
 * (sib's alloc_ucontext, the rings' mmaps) runs under it.
 */
struct fs_open {
	struct ibv_device **list;
	struct ibv_context *ctx;
};

static int open_prep(struct fs_env *e, void **obj)
{
	struct fs_open *o = calloc(1, sizeof(*o));

	if (!o)
		return -ENOMEM;
	*obj = o;
	o->list = ibv_get_device_list(NULL);
	return errno_of(o->list);
}

static int open_make(struct fs_env *e, void **obj)
{
	struct fs_open *o = *obj;

	for (int i = 0; o->list[i]; i++)
		if (!strcmp(ibv_get_device_name(o->list[i]), SIB_DEV)) {
			o->ctx = ibv_open_device(o->list[i]);
			return errno_of(o->ctx);
		}
	return -ENODEV;
}

static void open_undo(struct fs_env *e, void *obj, bool made)
{
	struct fs_open *o = obj;

	if (!o)
		return;
	if (o->ctx)
		ibv_close_device(o->ctx);
	if (o->list)
		ibv_free_device_list(o->list);
	free(o);
}

static int link_make(struct fs_env *e, void **obj)
{
	return nl_newlink(FS_IBDEV, "sib", FS_NETDEV);
}

static void link_undo(struct fs_env *e, void *obj, bool made)
{
	if (made)
		nl_dellink(FS_IBDEV);
}

/* A failed link add leaves no device behind. */
static bool link_gone(struct fs_env *e)
{
	return wait_path(SIB_SYSFS_IB "/" FS_IBDEV, false, 2000);
}

/*
 * A 64 KiB SEND on an RC pair: an allocation that fails on the data path
 * must not lose or change the message. Both completions succeed and the
 * bytes match.
 */
static int send_make(struct fs_env *e, void **obj)
{
	struct pair *p = &e->pair;
	struct ibv_sge rs = mk_sge(&e->rbuf, 0, e->rbuf.len);
	struct ibv_sge ss = mk_sge(&e->sbuf, 0, e->sbuf.len);
	struct ibv_wc wc;
	int ret;

	fill_pattern(e->sbuf.p, e->sbuf.len, ++e->seed);
	memset(e->rbuf.p, 0, e->rbuf.len);
	ret = post_recv_sges(p->qp[1], 2, &rs, 1);
	if (ret)
		return -ret;
	ret = post_op(p->qp[0], IBV_WR_SEND, 1, &ss, 1, IBV_SEND_SIGNALED, 0, 0);
	if (ret)
		return -ret;
	if (poll_n(p->scq[0], &wc, 1, WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS ||
	    poll_n(p->rcq[1], &wc, 1, WAIT_MS) != 1 || wc.status != IBV_WC_SUCCESS ||
	    wc.byte_len != e->sbuf.len)
		return -EPROTO;	/* not an allocation's errno: reported as wrong */
	if (first_diff(e->sbuf.p, e->rbuf.p, e->sbuf.len) != -1)
		return -EBADMSG;
	return 0;
}

/* ---- the sweep ------------------------------------------------------------- */

FIXTURE(fs) {
	struct fs_env e;
	bool ready;
	char why[160];
	char objs[256];
};

FIXTURE_SETUP(fs)
{
	struct pair_opts o;

	memset(&self->e, 0, sizeof(self->e));
	self->ready = faults_ready(self->why, sizeof(self->why));
	if (!self->ready)
		return;	/* each test skips: SKIP here would still run the body */
	self->e.ctx = sib_lo_setup(&self->e.gid_index);
	ASSERT_NE(NULL, self->e.ctx);
	ASSERT_EQ(0, ibv_query_gid(self->e.ctx, 1, self->e.gid_index, &self->e.gid));
	self->e.pd = ibv_alloc_pd(self->e.ctx);
	ASSERT_NE(NULL, self->e.pd);
	self->e.cq = ibv_create_cq(self->e.ctx, 512, NULL, NULL, 0);
	ASSERT_NE(NULL, self->e.cq);
	self->e.mr_buf = mmap(NULL, MR_LEN, PROT_READ | PROT_WRITE,
			      MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	ASSERT_NE(MAP_FAILED, self->e.mr_buf);
	pair_default_opts(&o);
	ASSERT_EQ(0, pair_create(&self->e.pair, self->e.ctx, self->e.pd,
				 self->e.gid_index, &o));
	ASSERT_EQ(0, buf_new(&self->e.sbuf, self->e.pd, 65536, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, buf_new(&self->e.rbuf, self->e.pd, 65536, IBV_ACCESS_LOCAL_WRITE));
	ASSERT_EQ(0, shq("ip link del " FS_NETDEV "; ip link add " FS_NETDEV
			 " type dummy && ip link set " FS_NETDEV " up"));
}

FIXTURE_TEARDOWN(fs)
{
	struct fs_env *e = &self->e;

	if (self->ready) {
		nth_arm(0);
		faults_restore();
	}
	buf_free(&e->sbuf);
	buf_free(&e->rbuf);
	if (e->pair.qp[0])
		pair_destroy(&e->pair);
	if (e->cq)
		ibv_destroy_cq(e->cq);
	if (e->pd)
		ibv_dealloc_pd(e->pd);
	if (e->mr_buf && e->mr_buf != MAP_FAILED)
		munmap(e->mr_buf, MR_LEN);
	sib_lo_teardown(e->ctx);
	shq("ip link del " FS_NETDEV);
}

/*
 * Is @err what a failed allocation may give? ENFILE is socket()'s (the
 * netlink socket of link add: its inode could not be allocated).
 */
static bool clean_errno(int err)
{
	return err == -ENOMEM || err == -ENOBUFS || err == -EAGAIN ||
	       err == -ENFILE;
}

static void objects(char *buf, size_t size)
{
	if (read_text(DBG "/sib/" SIB_DEV "/objects", buf, size) <= 0)
		buf[0] = 0;
}

/* Deferred destruction may take a moment: wait for the counts. */
static bool objects_back(const char *base)
{
	char now[256];

	for (int i = 0; i < 100; i++) {
		objects(now, sizeof(now));
		if (!strcmp(now, base))
			return true;
		usleep(20000);
	}
	fprintf(stderr, "# objects before:\n%s# after:\n%s", base, now);
	return false;
}

static void sweep(struct __test_metadata *_metadata, FIXTURE_DATA(fs) *self,
		  const struct fs_op *op)
{
	int points = 0, failed = 0, absorbed = 0, ret;
	struct fs_env *e = &self->e;
	void *obj = NULL;
	long left = 0;

	if (!self->ready)
		SKIP(return, "%s", self->why);
	objects(self->objs, sizeof(self->objs));
	ASSERT_NE(0, self->objs[0]) TH_LOG("no debugfs objects file for " SIB_DEV);

	bool full = !op->dense || getenv("SIB_FAILSLAB_FULL");

	for (unsigned int n = 1; n <= SWEEP_MAX;
	     n += full || n < op->dense ? 1 : 10) {
		obj = NULL;
		if (op->prep)
			ASSERT_EQ(0, op->prep(e, &obj)) TH_LOG("%s: prepare", op->name);
		errno = 0;
		ASSERT_EQ(0, nth_arm(n));
		ret = op->make(e, &obj);
		left = nth_left();
		nth_arm(0);
		if (op->undo)
			op->undo(e, obj, !ret);
		if (op->gone)
			EXPECT_TRUE(op->gone(e))
				TH_LOG("%s: allocation %u: left behind", op->name, n);
		if (left > 0)
			break;	/* the n-th allocation was never reached */
		points++;
		if (!ret) {
			absorbed++;
			continue;
		}
		failed++;
		EXPECT_TRUE(clean_errno(ret))
			TH_LOG("%s: allocation %u failed made it return %d (%s)",
			       op->name, n, ret, strerror(-ret));
	}
	ASSERT_LT(0, left) TH_LOG("%s: over %d allocations", op->name, SWEEP_MAX);
	fprintf(stderr, "# %s: %d allocations failed once each%s: %d gave an errno, %d were absorbed\n",
		op->name, points, full ? "" : " (every tenth after the first ones)",
		failed, absorbed);
	ASSERT_LT(0, points) TH_LOG("%s: no allocation was reached", op->name);
	EXPECT_TRUE(objects_back(self->objs)) TH_LOG("%s: objects not back", op->name);

	/* and with no fault, it works */
	obj = NULL;
	if (op->prep)
		ASSERT_EQ(0, op->prep(e, &obj));
	ret = op->make(e, &obj);
	EXPECT_EQ(0, ret) TH_LOG("%s after the sweep: %s", op->name, strerror(-ret));
	if (op->undo)
		op->undo(e, obj, !ret);
	EXPECT_TRUE(objects_back(self->objs));
}

#define SWEEP(tname, ...)						\
	TEST_F_TIMEOUT(fs, tname, 900)					\
	{								\
		static const struct fs_op op = { .name = #tname, __VA_ARGS__ };\
		sweep(_metadata, self, &op);				\
	}

SWEEP(alloc_pd, .make = pd_make, .undo = pd_undo)
SWEEP(create_cq, .make = cq_make, .undo = cq_undo)
SWEEP(resize_cq, .prep = cq_prep, .make = resize_make, .undo = resize_undo)
SWEEP(create_qp_rc, .make = qp_rc_make, .undo = qp_undo)
SWEEP(create_qp_uc, .make = qp_uc_make, .undo = qp_undo)
SWEEP(create_qp_ud, .make = qp_ud_make, .undo = qp_undo)
SWEEP(create_qp_srq, .prep = qp_srq_prep, .make = qp_srq_make, .undo = qp_srq_undo)
SWEEP(create_srq, .make = srq_make, .undo = srq_undo)
SWEEP(modify_qp, .prep = modify_prep, .make = modify_make, .undo = modify_undo)
SWEEP(reg_mr, .make = mr_make, .undo = mr_undo)
SWEEP(alloc_mw, .make = mw_make, .undo = mw_undo)
SWEEP(alloc_dm, .make = dm_make, .undo = dm_undo)
SWEEP(reg_dm_mr, .prep = dm_mr_prep, .make = dm_mr_make, .undo = dm_mr_undo)
SWEEP(create_ah, .make = ah_make, .undo = ah_undo)
SWEEP(open_device, .prep = open_prep, .make = open_make, .undo = open_undo)
SWEEP(link_add, .make = link_make, .undo = link_undo, .gone = link_gone,
      .dense = 300)
SWEEP(post_send, .make = send_make)

int main(int argc, char **argv)
{
	return sib_harness_main(argc, argv);
}
