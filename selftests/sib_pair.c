// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Helpers for sib's data-path selftests; see sib_pair.h.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sib_pair.h"
#include "sib_topo.h"
#include "sib_util.h"

int sib_wait_ms = 5000;

/*
 * SIB_WAIT_MS, if set, is the least completion timeout: a slow kernel (the
 * debug lane's KASAN or KCSAN build under TCG) moves data several times
 * slower, and a test that waits 5 s for a 4 MiB READ would fail on time
 * alone. Tests that raise sib_wait_ms above it keep their value.
 */
static void __attribute__((constructor)) sib_wait_from_env(void)
{
	const char *e = getenv("SIB_WAIT_MS");

	if (e && atoi(e) > sib_wait_ms)
		sib_wait_ms = atoi(e);
}

long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000L + ts.tv_nsec / 1000000;
}

double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct ibv_context *pair_open_dev(const char *name)
{
	struct ibv_device **list;
	struct ibv_context *ctx = NULL;
	int n;

	list = ibv_get_device_list(&n);
	if (!list)
		return NULL;
	for (int i = 0; i < n; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

int find_lo_gid(struct ibv_context *ctx)
{
	union ibv_gid gid, want = {};
	struct ibv_port_attr pa;

	want.raw[10] = 0xff;
	want.raw[11] = 0xff;
	inet_pton(AF_INET, "127.0.0.1", want.raw + 12);
	if (ibv_query_port(ctx, 1, &pa))
		return -1;
	for (int i = 0; i < pa.gid_tbl_len; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(&gid, &want, sizeof(gid)))
			return i;
	return -1;
}

struct ibv_context *sib_lo_setup(int *gid_index)
{
	struct ibv_context *ctx;
	int ret;

	if (module_load()) {
		fprintf(stderr, "modprobe " SIB_MODULE " failed\n");
		return NULL;
	}
	sib_delete_all();
	ret = nl_newlink(SIB_DEV, "sib", "lo");
	if (ret) {
		fprintf(stderr, "link add on lo: %s\n", strerror(-ret));
		return NULL;
	}
	ctx = pair_open_dev(SIB_DEV);
	if (!ctx) {
		fprintf(stderr, "libsib did not open " SIB_DEV "\n");
		return NULL;
	}
	for (int i = 0; i < 250; i++) {
		*gid_index = find_lo_gid(ctx);
		if (*gid_index >= 0)
			return ctx;
		usleep(20000);
	}
	fprintf(stderr, "no GID ::ffff:127.0.0.1 on " SIB_DEV "\n");
	ibv_close_device(ctx);
	return NULL;
}

void sib_lo_teardown(struct ibv_context *ctx)
{
	if (ctx)
		ibv_close_device(ctx);
	sib_delete_all();
}

void pair_default_opts(struct pair_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->sq_wr = 64;
	o->rq_wr = 64;
	o->max_sge = 4;
	o->max_inline = 256;
	o->cq_depth = 256;
	o->access[0] = o->access[1] = IBV_ACCESS_REMOTE_WRITE |
				      IBV_ACCESS_REMOTE_READ |
				      IBV_ACCESS_REMOTE_ATOMIC;
	o->timeout = 14;	/* 67 ms */
	o->retry_cnt = 7;
	o->rnr_retry = 7;
	o->min_rnr_timer = 1;	/* 0.01 ms */
	o->mtu = IBV_MTU_1024;
	o->psn[0] = 0x1234;
	o->psn[1] = 0xabcd;
}

const char *qps_str(int s)
{
	static const char *const n[] = { "RESET", "INIT", "RTR", "RTS", "SQD",
					  "SQE", "ERR" };

	return s >= 0 && s < 7 ? n[s] : "?";
}

int qp_state(struct ibv_qp *qp)
{
	struct ibv_qp_init_attr init;
	struct ibv_qp_attr attr;

	if (ibv_query_qp(qp, &attr, IBV_QP_STATE, &init))
		return -1;
	return attr.qp_state;
}

bool qp_wait_state(struct ibv_qp *qp, enum ibv_qp_state s, int ms)
{
	long end = now_ms() + ms;

	do {
		if (qp_state(qp) == (int)s)
			return true;
		usleep(1000);
	} while (now_ms() < end);
	return qp_state(qp) == (int)s;
}

/*
 * Connect @qp (RC, UC or UD) to QP @dqpn at @dgid, from GID index @sgid:
 * RESET -> INIT -> RTR -> RTS. 0 or an errno.
 */
int qp_connect_to(struct ibv_qp *qp, int sgid, const union ibv_gid *dgid,
		  uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
		  enum ibv_mtu mtu, uint8_t timeout, uint8_t retry_cnt)
{
	bool rc = qp->qp_type == IBV_QPT_RC, ud = qp->qp_type == IBV_QPT_UD;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qkey = 0x11111111,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   (rc ? IBV_ACCESS_REMOTE_READ |
					 IBV_ACCESS_REMOTE_ATOMIC : 0),
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT |
			    (ud ? IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS));
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = dqpn;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = sgid;
	if (dgid)
		a.ah_attr.grh.dgid = *dgid;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE |
			    (ud ? 0 : IBV_QP_AV | IBV_QP_PATH_MTU |
				      IBV_QP_DEST_QPN | IBV_QP_RQ_PSN) |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = timeout;
	a.retry_cnt = retry_cnt;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				   IBV_QP_RNR_RETRY |
				   IBV_QP_MAX_QP_RD_ATOMIC : 0));
}

int qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state s)
{
	struct ibv_qp_attr a = { .qp_state = s };

	return ibv_modify_qp(qp, &a, IBV_QP_STATE);
}

int qp_to_rts(struct pair *p, int i)
{
	const struct pair_opts *o = &p->o;
	struct ibv_qp *qp = p->qp[i];
	bool rc = !o->qp_type || o->qp_type == IBV_QPT_RC;
	struct ibv_qp_attr a;
	int ret;

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = o->access[i];
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret) {
		fprintf(stderr, "QP %d to INIT: %s\n", i, strerror(ret));
		return ret;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = o->mtu;
	a.dest_qp_num = o->dest_qpn[i] ? o->dest_qpn[i] : p->qp[!i]->qp_num;
	a.rq_psn = o->psn[!i];
	a.max_dest_rd_atomic = o->rd_atomic ? o->rd_atomic : 16;
	a.min_rnr_timer = o->min_rnr_timer;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = p->end[i].gid;
	ibv_query_gid(p->end[!i].ctx, 1, p->end[!i].gid, &a.ah_attr.grh.dgid);
	/* UC has no responder resources, RNR timer, retries or timeout. */
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU |
			    IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (rc ? IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER : 0));
	if (ret) {
		fprintf(stderr, "QP %d to RTR: %s\n", i, strerror(ret));
		return ret;
	}

	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.timeout = o->timeout;
	a.retry_cnt = o->retry_cnt;
	a.rnr_retry = o->rnr_retry;
	a.sq_psn = o->psn[i];
	a.max_rd_atomic = o->rd_atomic ? o->rd_atomic : 16;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			    (rc ? IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				  IBV_QP_RNR_RETRY |
				  IBV_QP_MAX_QP_RD_ATOMIC : 0));
	if (ret)
		fprintf(stderr, "QP %d to RTS: %s\n", i, strerror(ret));
	return ret;
}

static int pair_create_qp(struct pair *p, int i)
{
	const struct pair_opts *o = &p->o;
	struct ibv_qp_init_attr_ex a = {};

	a.qp_type = o->qp_type ? o->qp_type : IBV_QPT_RC;
	a.send_cq = p->scq[i];
	a.recv_cq = p->rcq[i];
	a.srq = o->srq[i];
	a.sq_sig_all = o->sig_all;
	a.cap.max_send_wr = o->sq_wr;
	a.cap.max_recv_wr = o->srq[i] ? 0 : o->rq_wr;
	a.cap.max_send_sge = o->max_sge;
	a.cap.max_recv_sge = o->srq[i] ? 0 : o->max_sge;
	a.cap.max_inline_data = o->max_inline;
	a.comp_mask = IBV_QP_INIT_ATTR_PD;
	a.pd = p->end[i].pd;
	if (o->send_ops[i]) {
		a.comp_mask |= IBV_QP_INIT_ATTR_SEND_OPS_FLAGS;
		a.send_ops_flags = o->send_ops[i];
	}
	p->qp[i] = ibv_create_qp_ex(p->end[i].ctx, &a);
	if (!p->qp[i]) {
		fprintf(stderr, "create QP %d: %s\n", i, strerror(errno));
		return errno ? errno : EIO;
	}
	p->cap[i] = a.cap;
	return 0;
}

/* The ends are set: PDs, CQs, QPs and buffers, connected. */
static int pair_make(struct pair *p)
{
	const struct pair_opts *o = &p->o;
	int ret;

	for (int i = 0; i < 2; i++) {
		struct pair_end *e = &p->end[i];

		if (!e->ctx) {
			e->ctx = pair_open_dev(e->dev);
			if (!e->ctx) {
				fprintf(stderr, "open %s failed\n", e->dev);
				return errno ? errno : ENODEV;
			}
			p->own_ctx[i] = true;
		}
		if (!e->pd) {
			e->pd = ibv_alloc_pd(e->ctx);
			if (!e->pd)
				return errno ? errno : ENOMEM;
			p->own_pd[i] = true;
		}
	}
	p->ctx = p->end[0].ctx;
	p->pd = p->end[0].pd;
	p->gid_index = p->end[0].gid;
	for (int i = 0; i < 2; i++) {
		struct ibv_context *ctx = p->end[i].ctx;

		p->scq[i] = o->one_cq ? NULL :
			    ibv_create_cq(ctx, o->cq_depth, NULL, NULL, 0);
		p->rcq[i] = ibv_create_cq(ctx, o->cq_depth, NULL, o->chan[i],
					  0);
		if (o->one_cq)
			p->scq[i] = p->rcq[i];
		if (!p->scq[i] || !p->rcq[i]) {
			fprintf(stderr, "create CQ: %s\n", strerror(errno));
			return errno ? errno : EIO;
		}
	}
	for (int i = 0; i < 2; i++) {
		ret = pair_create_qp(p, i);
		if (ret)
			return ret;
	}
	for (int i = 0; i < 2 && o->buf_len; i++) {
		ret = buf_new(&p->buf[i], p->end[i].pd, o->buf_len,
			      o->buf_access);
		if (ret)
			return ret;
	}
	for (int i = 0; i < 2; i++) {
		ret = qp_to_rts(p, i);
		if (ret)
			return ret;
	}
	return 0;
}

static void pair_set_opts(struct pair *p, const struct pair_opts *o)
{
	memset(p, 0, sizeof(*p));
	if (o)
		p->o = *o;
	else
		pair_default_opts(&p->o);
}

int pair_create(struct pair *p, struct ibv_context *ctx, struct ibv_pd *pd,
		int gid_index, const struct pair_opts *o)
{
	pair_set_opts(p, o);
	p->end[0].ctx = ctx;
	p->end[0].gid = gid_index;
	p->end[0].pd = pd;
	if (!pd) {
		/* One new PD for both QPs. */
		p->end[0].pd = ibv_alloc_pd(ctx);
		if (!p->end[0].pd)
			return errno;
		p->own_pd[0] = true;
	}
	p->end[1] = p->end[0];
	return pair_make(p);
}

int pair_create_ends(struct pair *p, const struct pair_end end[2],
		     const struct pair_opts *o)
{
	pair_set_opts(p, o);
	p->end[0] = end[0];
	p->end[1] = end[1];
	return pair_make(p);
}

int pair_create_topo(struct pair *p, const struct sib_topo *t,
		     const struct pair_opts *o)
{
	struct pair_end e[2];

	for (int i = 0; i < 2; i++)
		e[i] = (struct pair_end){ .dev = t->ibdev[i],
					  .gid = t->gid[i] };
	return pair_create_ends(p, e, o);
}

void pair_destroy(struct pair *p)
{
	for (int i = 0; i < 2; i++)
		if (p->qp[i] && ibv_destroy_qp(p->qp[i]))
			fprintf(stderr, "destroy QP %d: %s\n", i,
				strerror(errno));
	for (int i = 0; i < 2; i++) {
		buf_free(&p->buf[i]);
		if (p->scq[i] && p->scq[i] != p->rcq[i])
			ibv_destroy_cq(p->scq[i]);
		if (p->rcq[i])
			ibv_destroy_cq(p->rcq[i]);
	}
	for (int i = 0; i < 2; i++)
		if (p->own_pd[i] && p->end[i].pd)
			ibv_dealloc_pd(p->end[i].pd);
	for (int i = 0; i < 2; i++)
		if (p->own_ctx[i] && p->end[i].ctx)
			ibv_close_device(p->end[i].ctx);
	memset(p, 0, sizeof(*p));
}

int pair_reconnect(struct pair *p)
{
	int ret;

	for (int i = 0; i < 2; i++) {
		ret = qp_modify_state(p->qp[i], IBV_QPS_RESET);
		if (ret)
			return ret;
	}
	for (int i = 0; i < 2; i++) {
		cq_drain(p->scq[i]);
		cq_drain(p->rcq[i]);
	}
	for (int i = 0; i < 2; i++) {
		ret = qp_to_rts(p, i);
		if (ret)
			return ret;
	}
	return 0;
}

/* ---- buffers -------------------------------------------------------- */

int buf_new(struct buf *b, struct ibv_pd *pd, size_t len, int access)
{
	size_t alloc = (len + 4095) & ~(size_t)4095;

	memset(b, 0, sizeof(*b));
	b->p = aligned_alloc(4096, alloc ? alloc : 4096);
	if (!b->p)
		return ENOMEM;
	memset(b->p, 0, alloc);
	b->len = len;
	if (access < 0)
		return 0;
	b->mr = ibv_reg_mr(pd, b->p, len, access);
	if (!b->mr) {
		fprintf(stderr, "reg_mr(%zu, %#x): %s\n", len, access,
			strerror(errno));
		free(b->p);
		b->p = NULL;
		return errno ? errno : EIO;
	}
	return 0;
}

void buf_free(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int odp_buf(struct buf *b, struct ibv_pd *pd, size_t len, int access)
{
	memset(b, 0, sizeof(*b));
	b->p = mmap(NULL, len, PROT_READ | PROT_WRITE,
		    MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (b->p == MAP_FAILED) {
		b->p = NULL;
		return errno;
	}
	b->len = len;
	b->mr = ibv_reg_mr(pd, b->p, len, access);
	if (!b->mr) {
		int err = errno;

		munmap(b->p, len);
		b->p = NULL;
		return err;
	}
	return 0;
}

void odp_free(struct buf *b)
{
	if (b->mr)
		ibv_dereg_mr(b->mr);
	if (b->p)
		munmap(b->p, b->len);
	memset(b, 0, sizeof(*b));
}

void fill_pattern(void *p, size_t len, uint32_t seed)
{
	uint64_t x = 0x9e3779b97f4a7c15ull * (seed + 1);
	uint8_t *q = p;
	size_t i = 0;

	for (; i + 8 <= len; i += 8) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		memcpy(q + i, &x, 8);
	}
	for (; i < len; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		q[i] = x;
	}
}

long first_diff(const void *a, const void *b, size_t len)
{
	const uint8_t *x = a, *y = b;

	if (!memcmp(a, b, len))
		return -1;
	for (size_t i = 0; i < len; i++)
		if (x[i] != y[i])
			return i;
	return -1;
}

long first_not(const void *p, size_t len, uint8_t c)
{
	const uint8_t *x = p;

	for (size_t i = 0; i < len; i++)
		if (x[i] != c)
			return i;
	return -1;
}

/* ---- posting ---------------------------------------------------------- */

struct ibv_sge mk_sge(const struct buf *b, size_t off, uint32_t len)
{
	struct ibv_sge s = {
		.addr = buf_addr(b, off),
		.length = len,
		.lkey = b->mr ? b->mr->lkey : 0,
	};

	return s;
}

int post_send_wr(struct ibv_qp *qp, struct ibv_send_wr *wr)
{
	struct ibv_send_wr *bad = NULL;

	return ibv_post_send(qp, wr, &bad);
}

int post_op(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint64_t wr_id,
	    struct ibv_sge *sge, int nsge, unsigned int flags,
	    uint64_t raddr, uint32_t rkey)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = nsge,
		.opcode = opcode,
		.send_flags = flags,
	};

	wr.wr.rdma.remote_addr = raddr;
	wr.wr.rdma.rkey = rkey;
	return post_send_wr(qp, &wr);
}

int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint64_t wr_id,
		struct ibv_sge *sge, unsigned int flags, uint64_t raddr,
		uint32_t rkey, uint64_t compare_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = wr_id,
		.sg_list = sge,
		.num_sge = 1,
		.opcode = opcode,
		.send_flags = flags,
	};

	wr.wr.atomic.remote_addr = raddr;
	wr.wr.atomic.rkey = rkey;
	wr.wr.atomic.compare_add = compare_add;
	wr.wr.atomic.swap = swap;
	return post_send_wr(qp, &wr);
}

int post_recv_sges(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge,
		   int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = nsge }, *bad;

	return ibv_post_recv(qp, &wr, &bad);
}

int post_srq_recv_sges(struct ibv_srq *srq, uint64_t wr_id,
		       struct ibv_sge *sge, int nsge)
{
	struct ibv_recv_wr wr = { .wr_id = wr_id, .sg_list = sge,
				  .num_sge = nsge }, *bad;

	return ibv_post_srq_recv(srq, &wr, &bad);
}

/* ---- completions ------------------------------------------------------ */

int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms)
{
	long end = now_ms() + ms;
	int got = 0, spins = 0;

	while (got < n) {
		int r = ibv_poll_cq(cq, n - got, wc + got);

		if (r < 0)
			return -1;
		got += r;
		if (got >= n)
			break;
		if (r == 0) {
			if (now_ms() > end)
				break;
			if (++spins > 100)
				usleep(200);
			else
				sched_yield();
		}
	}
	return got;
}

bool cq_quiet(struct ibv_cq *cq, int ms)
{
	struct ibv_wc wc;

	return poll_n(cq, &wc, 1, ms) == 0;
}

int cq_drain(struct ibv_cq *cq)
{
	struct ibv_wc wc[16];
	int n = 0, r;

	while ((r = ibv_poll_cq(cq, 16, wc)) > 0)
		n += r;
	return n;
}

const char *wcs(enum ibv_wc_status s)
{
	return ibv_wc_status_str(s);
}

bool wait_async_event(struct ibv_context *ctx, enum ibv_event_type type,
		      int ms, struct ibv_async_event *out)
{
	struct pollfd pfd = { .fd = ctx->async_fd, .events = POLLIN };
	long end = now_ms() + ms;

	for (;;) {
		struct ibv_async_event ev;
		long left = end - now_ms();

		if (left < 0 || poll(&pfd, 1, left) != 1)
			return false;
		if (ibv_get_async_event(ctx, &ev))
			return false;
		if (out)
			*out = ev;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return true;
		fprintf(stderr, "(other async event %s)\n",
			ibv_event_type_str(ev.event_type));
	}
}

int count_async_events(struct ibv_context *ctx, enum ibv_event_type type,
		       int ms)
{
	int n = 0;

	while (wait_async_event(ctx, type, ms, NULL))
		n++;
	return n;
}

/* ---- extended QPs and CQs (ibv_wr_*, ibv_start_poll) ------------------- */

int qp_ex_pair(struct ibv_context *ctx, struct ibv_pd *pd, int gid,
	       struct ibv_cq_ex *cq, struct ibv_qp *qp[2])
{
	struct ibv_qp_init_attr_ex a = {
		.send_cq = ibv_cq_ex_to_cq(cq),
		.recv_cq = ibv_cq_ex_to_cq(cq),
		.cap = { .max_send_wr = 16, .max_recv_wr = 16,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RC,
		.comp_mask = IBV_QP_INIT_ATTR_PD |
			     IBV_QP_INIT_ATTR_SEND_OPS_FLAGS,
		.pd = pd,
		.send_ops_flags = IBV_QP_EX_WITH_SEND |
				  IBV_QP_EX_WITH_RDMA_WRITE,
	};
	union ibv_gid g;
	int ret;

	if (ibv_query_gid(ctx, 1, gid, &g))
		return EIO;
	for (int i = 0; i < 2; i++) {
		qp[i] = ibv_create_qp_ex(ctx, &a);
		if (!qp[i])
			return errno;
	}
	for (int i = 0; i < 2; i++) {
		ret = qp_connect_to(qp[i], gid, &g, qp[!i]->qp_num, 0, 0,
				    IBV_MTU_1024, 14, 7);
		if (ret)
			return ret;
	}
	return 0;
}

int cq_ex_next(struct ibv_cq_ex *cq, struct ibv_wc *wc)
{
	struct ibv_poll_cq_attr pa = {};
	long end = now_ms() + WAIT_MS;
	int ret;

	while ((ret = ibv_start_poll(cq, &pa)) == ENOENT && now_ms() < end)
		usleep(100);
	if (ret)
		return ret;
	wc->wr_id = cq->wr_id;
	wc->status = cq->status;
	wc->opcode = ibv_wc_read_opcode(cq);
	wc->byte_len = ibv_wc_read_byte_len(cq);
	wc->qp_num = ibv_wc_read_qp_num(cq);
	ibv_end_poll(cq);
	return 0;
}

long long objects_value(const char *key)
{
	char buf[512], *p;
	size_t klen = strlen(key);

	if (read_text("/sys/kernel/debug/sib/" SIB_DEV "/objects", buf,
		      sizeof(buf)) <= 0)
		return -1;
	for (p = buf; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (!strncmp(p, key, klen) && p[klen] == ' ')
			return strtoll(p + klen + 1, NULL, 10);
	return -1;
}
