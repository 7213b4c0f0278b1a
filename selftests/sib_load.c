// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Load: many RC QPs at once, and MR churn beside them (issue 19).
 *
 * A run creates N RC QP pairs (sib0 over lo, or sibA and sibB in two
 * namespaces joined by veth with --veth), spread over 64 CQs that each
 * serve many QPs as send and receive CQ at once, and keeps every send
 * queue full of SENDs, WRITEs, WRITEs with immediate, READs and
 * fetch-adds in both directions of every pair, for a given time. Every
 * WR is signalled and accounted for: each gets exactly one completion,
 * successful, on the right QP, with the next wr_id in posting order;
 * each receive matches the next message its peer sent (opcode, length,
 * immediate, every byte of a SEND); a WRITE's target and a READ's
 * destination are compared byte for byte; each fetch-add returns the
 * sum of the adds before it and each QP's counter ends at the exact sum.
 * After the drain no QP may be in error, and once moved to ERR each
 * gives back exactly its outstanding receives as flushed, in order.
 *
 * Beside the traffic, threads of their own QPs register and deregister
 * MRs of 4 KiB to 1 MiB (--mrs): some with remote rights, written and
 * read by the peer while they live, some local ones receiving a SEND.
 * At the end sib's object counts (debugfs "objects") are back to what
 * they were before the run.
 *
 * Without options it is a kselftest (the CI subset: 256 QP pairs for
 * 10 s, and 5000 MRs churned beside 64 pairs); with options it is the
 * long-run tool behind "make load" (--help).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <pthread.h>
#include <sched.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/resource.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_topo.h"
#include "sib_pair_t.h"

#define DBG		"/sys/kernel/debug/sib"
#define MAX_CQS		256
#define MAX_WR		256
#define MSGQ		64	/* > sq_wr + rq_wr: messages not yet received */
#define MAX_ERRLOG	20

/* ---- configuration -------------------------------------------------------- */

struct load_cfg {
	int qps;		/* QP pairs */
	int secs;		/* traffic time */
	int cqs;
	int threads;		/* traffic threads; must divide cqs / 2 */
	int wr;			/* send and receive queue depth */
	int size;		/* largest message, also the slot size */
	int mtu;		/* bytes */
	long mrs;		/* MRs to churn beside the traffic */
	int mr_threads;
	int mr_live;		/* MRs each churn thread holds at once */
	bool veth;
	bool faults;
	long long fault[4];	/* drop, dup, reorder, corrupt (ppm) */
	int timeout;		/* QP local ACK timeout exponent */
	int mr_timeout;		/* the same, of the churn threads' QPs */
	int drain_secs;
	uint64_t seed;
	int kinds;		/* bit mask of K_* to post; 0: all */
	bool per_qp;		/* print each QP's counts */
};

static void cfg_default(struct load_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->qps = 256;
	c->secs = 10;
	c->cqs = 64;
	c->threads = 2;
	c->wr = 16;
	c->size = 2048;
	c->mtu = 1024;
	c->mr_threads = 2;
	c->mr_live = 8;
	c->fault[0] = 5000;
	c->fault[1] = 2000;
	c->fault[2] = 5000;
	c->fault[3] = 1000;
	c->timeout = 17;	/* 537 ms: thousands of QPs queue behind each other */
	/*
	 * 16.8 ms: a churn SEND into a receive posted just before it waits
	 * for the requester's credit probe, one timeout (Documentation/testing.md).
	 */
	c->mr_timeout = 12;
	c->drain_secs = 60;
	c->seed = 1;
}

/* What a run measured. */
struct load_res {
	long errors;
	double secs;		/* traffic time measured */
	uint64_t msgs, bytes, recvs;
	uint64_t per_kind[5];
	uint64_t qp_min, qp_max;	/* send completions of the least/most served QP */
	double setup_s, teardown_s;
	long mrs_done;
	double mr_secs;
	uint64_t mr_remote_uses, mr_local_uses;
	double mr_reg_us, mr_dereg_us, mr_use_us;	/* totals */
	long long cnt[6];	/* counter deltas, see cnt_names */
};

static const char *const cnt_names[] = {
	"sent_pkts", "retransmits", "ack_timeouts", "rnr_nak_rcvd",
	"seq_nak_sent", "credit_stalls",
};
#define NCNT	6

/* ---- errors ------------------------------------------------------------- */

static atomic_long g_errors;
static atomic_int g_abort;
static pthread_mutex_t g_log = PTHREAD_MUTEX_INITIALIZER;

static void __attribute__((format(printf, 1, 2))) lfail(const char *fmt, ...)
{
	va_list ap;
	long n = atomic_fetch_add(&g_errors, 1);

	atomic_store(&g_abort, 1);
	if (n >= MAX_ERRLOG)
		return;
	pthread_mutex_lock(&g_log);
	fprintf(stderr, "sib_load: FAIL: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&g_log);
}

static void __attribute__((format(printf, 1, 2))) lnote(const char *fmt, ...)
{
	va_list ap;

	pthread_mutex_lock(&g_log);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	pthread_mutex_unlock(&g_log);
}

/* ---- devices ---------------------------------------------------------- */

struct ldev {
	const char *name;
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid;
	struct ibv_cq *cq[MAX_CQS];
};

/* sibA in namespace A, sibB in B, joined by a veth; IPv4. */
static struct sib_topo veth_topo = { .kind = SIB_TOPO_VETH, .tag = "L" };

/* One device (lo) or two (veth); the process holds both. 0 or -1. */
static int devs_open(struct ldev *d, bool veth)
{
	int n = veth ? 2 : 1;

	memset(d, 0, 2 * sizeof(*d));
	if (!veth) {
		d[0].name = SIB_DEV;
		d[0].ctx = sib_lo_setup(&d[0].gid);
		if (!d[0].ctx)
			return -1;
	} else {
		if (sib_topo_up(&veth_topo)) {
			fprintf(stderr, "# %s\n", veth_topo.err);
			return -1;
		}
		for (int i = 0; i < 2; i++) {
			d[i].name = veth_topo.ibdev[i];
			d[i].gid = veth_topo.gid[i];
			d[i].ctx = pair_open_dev(d[i].name);
			if (!d[i].ctx)
				return -1;
		}
	}
	for (int i = 0; i < n; i++) {
		d[i].pd = ibv_alloc_pd(d[i].ctx);
		if (!d[i].pd)
			return -1;
	}
	return 0;
}

static void devs_close(struct ldev *d, bool veth)
{
	for (int i = 0; i < (veth ? 2 : 1); i++) {
		if (d[i].pd)
			ibv_dealloc_pd(d[i].pd);
		if (d[i].ctx)
			ibv_close_device(d[i].ctx);
	}
	if (veth)
		sib_topo_down(&veth_topo);
	else
		sib_delete_all();
}

static void faults_set(struct ldev *d, int ndev, const struct load_cfg *c,
		       bool on)
{
	static const char *const k[] = { "drop", "dup", "reorder", "corrupt" };

	for (int i = 0; i < ndev; i++) {
		if (on) {
			for (int j = 0; j < 4; j++)
				fault_knob_set(d[i].name, k[j], c->fault[j]);
			fault_knob_set(d[i].name, "dir", 3);
			fault_knob_set(d[i].name, "seed", c->seed + i);
		}
		fault_knob_set(d[i].name, "active", on);
		if (!on)
			for (int j = 0; j < 4; j++)
				fault_knob_set(d[i].name, k[j], 0);
	}
}

/* The "objects" file of @dev, or "" */
static void objects_read(const char *dev, char *out, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), DBG "/%s/objects", dev);
	if (read_text(path, out, size) <= 0)
		out[0] = 0;
}

static long objects_get(const char *objs, const char *what)
{
	size_t n = strlen(what);

	for (const char *p = objs; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p)
		if (!strncmp(p, what, n) && p[n] == ' ')
			return atol(p + n + 1);
	return -1;
}

struct meminfo {
	long free_kb, slab_kb, sunreclaim_kb;
};

static void meminfo_read(struct meminfo *m, bool drop_caches)
{
	char buf[8192], *p;

	/* Give back what the process' heap keeps of freed buffers. */
	malloc_trim(0);
	/*
	 * Then shrink every slab cache: empty slabs go back to the page
	 * allocator, and under KASAN each cache's quarantine (freed objects
	 * held back to catch a use after free, up to 1/32 of RAM, counted as
	 * Slab) is emptied first.
	 */
	if (drop_caches)
		shq("sync; echo 3 > /proc/sys/vm/drop_caches; "
		    "for f in /sys/kernel/slab/*/shrink; do "
		    "echo 1 > \"$f\"; done 2>/dev/null");
	memset(m, 0, sizeof(*m));
	if (read_text("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return;
	p = strstr(buf, "MemFree:");
	if (p)
		m->free_kb = atol(p + 8);
	p = strstr(buf, "Slab:");
	if (p)
		m->slab_kb = atol(p + 5);
	p = strstr(buf, "SUnreclaim:");
	if (p)
		m->sunreclaim_kb = atol(p + 11);
}

/* ---- the traffic ------------------------------------------------------- */

enum { K_SEND, K_WRITE, K_WRITE_IMM, K_READ, K_FADD, NKIND };
static const char *const kind_names[] = {
	"send", "write", "write_imm", "read", "fadd",
};

#define POISON	0xa5

struct lop {
	uint8_t kind;
	uint32_t len, seed;
	uint64_t expect;	/* fetch-add: the value it must return */
};

struct lmsg {
	uint8_t kind;
	uint32_t len, seed, imm;
};

struct lqp {
	struct ibv_qp *qp;
	struct ldev *dev;
	struct lqp *peer;
	uint32_t idx;
	int thread;
	uint8_t *own;		/* sq slots (loc) then rq slots (rbuf) */
	uint8_t *loc, *rbuf;
	struct ibv_mr *own_mr;
	uint8_t *winmem;	/* counter then sq slots, on the peer's PD */
	uint8_t *win;
	uint64_t *ctr;
	struct ibv_mr *win_mr;
	struct lop ops[MAX_WR];
	struct lmsg msgs[MSGQ];
	uint32_t mhead, mtail;	/* messages for the peer's receives */
	uint32_t posted, done, rposted, rdone;
	uint64_t fadd_sum;
	uint64_t rnd;
	bool dirty;
};

struct lrun;

struct lthr {
	struct lrun *r;
	int id;
	pthread_t tid;
	uint8_t *scratch;
	struct lqp **dirty;
	int ndirty;
	long pending;		/* WRs and messages not yet completed */
	uint64_t msgs, bytes, recvs, per_kind[NKIND];
};

struct lrun {
	const struct load_cfg *c;
	struct ldev *dev;	/* [0], and [1] with veth */
	int ndev;
	int nq;			/* 2 * qps */
	struct lqp *q;
	struct lthr *t;
	atomic_int stop;	/* no more posting */
	atomic_int counting;	/* completions count for throughput */
	long stop_ms;
	int depth, cqe;
};

static inline uint32_t xrnd(uint64_t *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 7;
	*s ^= *s << 17;
	return *s >> 11;
}

static uint32_t rnd_len(uint64_t *s, uint32_t max, uint32_t mtu)
{
	const uint32_t edge[] = { 1, 8, 63, mtu - 1, mtu, mtu + 1, max };
	uint32_t l;

	if (xrnd(s) % 8 == 0)
		l = edge[xrnd(s) % 7];
	else
		l = 1 + xrnd(s) % max;
	return l > max ? max : l;
}

static inline uint64_t wr_id(const struct lqp *q, bool recv, uint32_t seq)
{
	return (uint64_t)q->idx << 33 | (uint64_t)recv << 32 | seq;
}

static int qp_connect(struct lqp *q, const struct load_cfg *c,
		      uint32_t sq_psn, uint32_t rq_psn)
{
	const struct ldev *me = q->dev, *peer = q->peer->dev;
	enum ibv_mtu mtu = c->mtu >= 4096 ? IBV_MTU_4096 :
			   c->mtu >= 2048 ? IBV_MTU_2048 :
			   c->mtu >= 1024 ? IBV_MTU_1024 :
			   c->mtu >= 512 ? IBV_MTU_512 : IBV_MTU_256;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};

	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			  IBV_QP_PORT | IBV_QP_ACCESS_FLAGS))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = mtu;
	a.dest_qp_num = q->peer->qp->qp_num;
	a.rq_psn = rq_psn;
	a.max_dest_rd_atomic = 16;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.sgid_index = me->gid;
	a.ah_attr.grh.hop_limit = 64;
	if (ibv_query_gid(peer->ctx, 1, peer->gid, &a.ah_attr.grh.dgid))
		return errno;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_AV |
			  IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			  IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER))
		return errno;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	a.timeout = c->timeout;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 16;
	if (ibv_modify_qp(q->qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			  IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
			  IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC))
		return errno;
	return 0;
}

static size_t page_up(size_t n)
{
	return (n + 4095) & ~(size_t)4095;
}

/* Pair k: QP 2k on dev[0], QP 2k+1 on dev[ndev - 1]. 0 or an errno. */
static int run_setup(struct lrun *r)
{
	const struct load_cfg *c = r->c;
	int half = c->cqs / 2, per_cq = (c->qps + c->cqs - 1) / c->cqs;
	size_t own_len = page_up((size_t)2 * c->wr * c->size);
	size_t win_len = page_up(64 + (size_t)c->wr * c->size);

	r->nq = 2 * c->qps;
	r->depth = c->wr;
	/* Each CQ serves per_cq QPs of each side, sends and receives. */
	r->cqe = 2 * per_cq * 2 * c->wr + 16;
	r->q = calloc(r->nq + 1, sizeof(*r->q));
	if (!r->q)
		return ENOMEM;
	for (int d = 0; d < r->ndev; d++)
		for (int i = 0; i < c->cqs; i++) {
			r->dev[d].cq[i] = ibv_create_cq(r->dev[d].ctx, r->cqe,
							NULL, NULL, 0);
			if (!r->dev[d].cq[i]) {
				fprintf(stderr, "create CQ %d (%d CQEs): %s\n",
					i, r->cqe, strerror(errno));
				return errno;
			}
		}
	for (int i = 0; i < r->nq; i++) {
		struct lqp *q = &r->q[i];
		int k = i / 2, side = i % 2, a = k % c->cqs, b = (a + half) % c->cqs;
		struct ldev *dv = &r->dev[side ? r->ndev - 1 : 0];
		struct ldev *pdv = &r->dev[side ? 0 : r->ndev - 1];
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RC,
			.send_cq = dv->cq[side ? b : a],
			.recv_cq = dv->cq[side ? a : b],
			.cap = { .max_send_wr = c->wr, .max_recv_wr = c->wr,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};

		q->idx = i;
		q->dev = dv;
		q->peer = &r->q[i ^ 1];
		q->thread = a % c->threads;
		q->rnd = c->seed * 0x9e3779b97f4a7c15ull + i + 1;
		q->own = aligned_alloc(4096, own_len);
		q->winmem = aligned_alloc(4096, win_len);
		if (!q->own || !q->winmem)
			return ENOMEM;
		memset(q->own, 0, own_len);
		memset(q->winmem, 0, win_len);
		q->loc = q->own;
		q->rbuf = q->own + (size_t)c->wr * c->size;
		q->ctr = (uint64_t *)q->winmem;
		q->win = q->winmem + 64;
		q->own_mr = ibv_reg_mr(dv->pd, q->own, own_len,
				       IBV_ACCESS_LOCAL_WRITE);
		q->win_mr = ibv_reg_mr(pdv->pd, q->winmem, win_len,
				       IBV_ACCESS_LOCAL_WRITE |
				       IBV_ACCESS_REMOTE_WRITE |
				       IBV_ACCESS_REMOTE_READ |
				       IBV_ACCESS_REMOTE_ATOMIC);
		if (!q->own_mr || !q->win_mr) {
			fprintf(stderr, "QP %d: reg_mr: %s\n", i, strerror(errno));
			return errno;
		}
		q->qp = ibv_create_qp(dv->pd, &ia);
		if (!q->qp) {
			fprintf(stderr, "create QP %d of %d: %s\n", i, r->nq,
				strerror(errno));
			return errno;
		}
	}
	for (int i = 0; i < r->nq; i++) {
		struct lqp *q = &r->q[i];
		uint32_t k = i / 2;
		/* The two PSNs of pair k; some just below the wrap. */
		uint32_t psn[2] = {
			k % 3 ? (k * 7919) & 0xffffff : 0xfffff0 + k % 16,
			(k * 104729 + 77) & 0xffffff,
		};
		int ret = qp_connect(q, c, psn[i % 2], psn[!(i % 2)]);

		if (ret) {
			fprintf(stderr, "connect QP %d: %s\n", i, strerror(ret));
			return ret;
		}
	}
	return 0;
}

static void run_free(struct lrun *r)
{
	for (int i = 0; r->q && i < r->nq; i++) {
		struct lqp *q = &r->q[i];

		if (q->qp && ibv_destroy_qp(q->qp))
			lfail("destroy QP %d: %s", i, strerror(errno));
	}
	for (int i = 0; r->q && i < r->nq; i++) {
		struct lqp *q = &r->q[i];

		if (q->own_mr && ibv_dereg_mr(q->own_mr))
			lfail("dereg MR of QP %d: %s", i, strerror(errno));
		if (q->win_mr && ibv_dereg_mr(q->win_mr))
			lfail("dereg MR of QP %d: %s", i, strerror(errno));
		free(q->own);
		free(q->winmem);
	}
	for (int d = 0; d < r->ndev; d++)
		for (int i = 0; i < r->c->cqs; i++) {
			if (r->dev[d].cq[i] && ibv_destroy_cq(r->dev[d].cq[i]))
				lfail("destroy CQ %d: %s", i, strerror(errno));
			r->dev[d].cq[i] = NULL;
		}
	free(r->q);
	r->q = NULL;
}

/* Post the receives that @q lacks. */
static void refill_rq(struct lthr *t, struct lqp *q)
{
	const struct load_cfg *c = t->r->c;
	struct ibv_recv_wr wr[MAX_WR], *bad;
	struct ibv_sge sge[MAX_WR];
	int n = 0;

	while (q->rposted - q->rdone < (uint32_t)c->wr) {
		uint32_t slot = q->rposted % c->wr;

		sge[n].addr = (uintptr_t)(q->rbuf + (size_t)slot * c->size);
		sge[n].length = c->size;
		sge[n].lkey = q->own_mr->lkey;
		wr[n].wr_id = wr_id(q, true, q->rposted);
		wr[n].sg_list = &sge[n];
		wr[n].num_sge = 1;
		wr[n].next = NULL;
		if (n)
			wr[n - 1].next = &wr[n];
		n++;
		q->rposted++;
	}
	if (n && ibv_post_recv(q->qp, wr, &bad))
		lfail("QP %u (%#x): post_recv of %d: %s", q->idx, q->qp->qp_num,
		      n, strerror(errno));
}

static int pick_kind(uint64_t *s, int mask)
{
	for (;;) {
		uint32_t x = xrnd(s) % 100;
		int k = x < 30 ? K_SEND : x < 52 ? K_WRITE :
			x < 70 ? K_WRITE_IMM : x < 94 ? K_READ : K_FADD;

		if (!mask || mask & 1 << k)
			return k;
	}
}

/* Fill @q's send queue up to the depth. */
static void refill_sq(struct lthr *t, struct lqp *q)
{
	struct lrun *r = t->r;
	const struct load_cfg *c = r->c;
	struct ibv_send_wr wr[MAX_WR], *bad;
	struct ibv_sge sge[MAX_WR];
	int n = 0;

	if (atomic_load_explicit(&r->stop, memory_order_relaxed))
		return;
	while (q->posted - q->done < (uint32_t)r->depth) {
		uint32_t slot = q->posted % c->wr;
		struct lop *op = &q->ops[slot];
		uint8_t *lp = q->loc + (size_t)slot * c->size;
		uint8_t *wp = q->win + (size_t)slot * c->size;
		struct ibv_send_wr *w = &wr[n];

		memset(w, 0, sizeof(*w));
		op->kind = pick_kind(&q->rnd, c->kinds);
		if ((op->kind == K_SEND || op->kind == K_WRITE_IMM) &&
		    q->mhead - q->mtail >= MSGQ)
			op->kind = K_WRITE;
		op->seed = xrnd(&q->rnd);
		op->len = op->kind == K_FADD ? 8 :
			  rnd_len(&q->rnd, c->size, c->mtu);
		sge[n].addr = (uintptr_t)lp;
		sge[n].length = op->len;
		sge[n].lkey = q->own_mr->lkey;
		w->wr_id = wr_id(q, false, q->posted);
		w->sg_list = &sge[n];
		w->num_sge = 1;
		w->send_flags = IBV_SEND_SIGNALED;
		w->wr.rdma.remote_addr = (uintptr_t)wp;
		w->wr.rdma.rkey = q->win_mr->rkey;
		switch (op->kind) {
		case K_SEND:
			fill_pattern(lp, op->len, op->seed);
			w->opcode = IBV_WR_SEND;
			q->msgs[q->mhead++ % MSGQ] = (struct lmsg){
				K_SEND, op->len, op->seed, 0 };
			t->pending++;
			break;
		case K_WRITE_IMM:
		case K_WRITE:
			fill_pattern(lp, op->len, op->seed);
			memset(wp, POISON, op->len);
			w->opcode = IBV_WR_RDMA_WRITE;
			if (op->kind == K_WRITE_IMM) {
				uint32_t imm = q->idx << 12 ^ q->posted;

				w->opcode = IBV_WR_RDMA_WRITE_WITH_IMM;
				w->imm_data = htonl(imm);
				q->msgs[q->mhead++ % MSGQ] = (struct lmsg){
					K_WRITE_IMM, op->len, op->seed, imm };
				t->pending++;
			}
			break;
		case K_READ:
			fill_pattern(wp, op->len, op->seed);
			memset(lp, POISON, op->len);
			w->opcode = IBV_WR_RDMA_READ;
			break;
		default: {
			uint64_t add = 1 + xrnd(&q->rnd) % 100000;

			memset(lp, POISON, 8);
			op->expect = q->fadd_sum;
			q->fadd_sum += add;
			w->opcode = IBV_WR_ATOMIC_FETCH_AND_ADD;
			w->wr.atomic.remote_addr = (uintptr_t)q->ctr;
			w->wr.atomic.rkey = q->win_mr->rkey;
			w->wr.atomic.compare_add = add;
			break;
		}
		}
		if (n)
			wr[n - 1].next = w;
		n++;
		q->posted++;
		t->pending++;
	}
	if (n && ibv_post_send(q->qp, wr, &bad))
		lfail("QP %u (%#x): post_send of %d: %s", q->idx, q->qp->qp_num,
		      n, strerror(errno));
}

static void mark_dirty(struct lthr *t, struct lqp *q)
{
	if (!q->dirty) {
		q->dirty = true;
		t->dirty[t->ndirty++] = q;
	}
}

static void on_send(struct lthr *t, struct lqp *q, const struct ibv_wc *wc,
		    uint32_t seq)
{
	const struct load_cfg *c = t->r->c;
	static const int want_op[] = {
		IBV_WC_SEND, IBV_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE,
		IBV_WC_RDMA_READ, IBV_WC_FETCH_ADD,
	};
	struct lop *op = &q->ops[q->done % c->wr];
	uint8_t *lp = q->loc + (size_t)(q->done % c->wr) * c->size;
	uint8_t *wp = q->win + (size_t)(q->done % c->wr) * c->size;
	long d;

	if (q->done == q->posted) {
		lfail("QP %u (%#x): send completion wr_id %#lx with nothing outstanding",
		      q->idx, q->qp->qp_num, (unsigned long)wc->wr_id);
		return;
	}
	if (seq != q->done)
		lfail("QP %u (%#x): send completion seq %u, wanted %u (lost or duplicated)",
		      q->idx, q->qp->qp_num, seq, q->done);
	if (wc->status != IBV_WC_SUCCESS) {
		lfail("QP %u (%#x): %s #%u (len %u): %s (vendor_err %#x)",
		      q->idx, q->qp->qp_num, kind_names[op->kind], seq,
		      op->len, wcs(wc->status), wc->vendor_err);
	} else if ((int)wc->opcode != want_op[op->kind]) {
		lfail("QP %u (%#x): %s #%u: completion opcode %d",
		      q->idx, q->qp->qp_num, kind_names[op->kind], seq,
		      wc->opcode);
	} else {
		switch (op->kind) {
		case K_WRITE:
		case K_WRITE_IMM:
			d = first_diff(wp, lp, op->len);
			if (d >= 0)
				lfail("QP %u (%#x): %s #%u: target differs at byte %ld of %u",
				      q->idx, q->qp->qp_num,
				      kind_names[op->kind], seq, d, op->len);
			break;
		case K_READ:
			if (wc->byte_len != op->len)
				lfail("QP %u: read #%u: byte_len %u, wanted %u",
				      q->idx, seq, wc->byte_len, op->len);
			d = first_diff(lp, wp, op->len);
			if (d >= 0)
				lfail("QP %u (%#x): read #%u: data differs at byte %ld of %u",
				      q->idx, q->qp->qp_num, seq, d, op->len);
			break;
		case K_FADD:
			if (*(uint64_t *)lp != op->expect)
				lfail("QP %u (%#x): fetch-add #%u returned %#llx, wanted %#llx",
				      q->idx, q->qp->qp_num, seq,
				      (unsigned long long)*(uint64_t *)lp,
				      (unsigned long long)op->expect);
			break;
		}
	}
	if (atomic_load_explicit(&t->r->counting, memory_order_relaxed)) {
		t->msgs++;
		t->bytes += op->len;
		t->per_kind[op->kind]++;
	}
	q->done++;
	t->pending--;
	mark_dirty(t, q);
}

static void on_recv(struct lthr *t, struct lqp *q, const struct ibv_wc *wc,
		    uint32_t seq)
{
	const struct load_cfg *c = t->r->c;
	struct lqp *p = q->peer;
	uint8_t *rp = q->rbuf + (size_t)(q->rdone % c->wr) * c->size;
	struct lmsg m;
	long d;

	if (seq != q->rdone)
		lfail("QP %u (%#x): receive completion seq %u, wanted %u (lost or duplicated)",
		      q->idx, q->qp->qp_num, seq, q->rdone);
	if (wc->status != IBV_WC_SUCCESS) {
		lfail("QP %u (%#x): receive #%u: %s (vendor_err %#x)",
		      q->idx, q->qp->qp_num, seq, wcs(wc->status),
		      wc->vendor_err);
		return;
	}
	if (p->mtail == p->mhead) {
		lfail("QP %u (%#x): receive #%u (opcode %d, %u bytes) but the peer sent nothing",
		      q->idx, q->qp->qp_num, seq, wc->opcode, wc->byte_len);
		return;
	}
	m = p->msgs[p->mtail++ % MSGQ];
	if (m.kind == K_SEND) {
		if (wc->opcode != IBV_WC_RECV ||
		    (wc->wc_flags & IBV_WC_WITH_IMM)) {
			lfail("QP %u (%#x): receive #%u: opcode %d flags %#x for a SEND",
			      q->idx, q->qp->qp_num, seq, wc->opcode,
			      wc->wc_flags);
		} else if (wc->byte_len != m.len) {
			lfail("QP %u (%#x): receive #%u: %u bytes, the SEND had %u",
			      q->idx, q->qp->qp_num, seq, wc->byte_len, m.len);
		} else {
			fill_pattern(t->scratch, m.len, m.seed);
			d = first_diff(rp, t->scratch, m.len);
			if (d >= 0)
				lfail("QP %u (%#x): receive #%u: data differs at byte %ld of %u",
				      q->idx, q->qp->qp_num, seq, d, m.len);
		}
	} else {
		if (wc->opcode != IBV_WC_RECV_RDMA_WITH_IMM ||
		    !(wc->wc_flags & IBV_WC_WITH_IMM))
			lfail("QP %u (%#x): receive #%u: opcode %d flags %#x for a WRITE_IMM",
			      q->idx, q->qp->qp_num, seq, wc->opcode,
			      wc->wc_flags);
		else if (ntohl(wc->imm_data) != m.imm ||
			 wc->byte_len != m.len)
			lfail("QP %u (%#x): receive #%u: imm %#x len %u, wanted %#x len %u",
			      q->idx, q->qp->qp_num, seq, ntohl(wc->imm_data),
			      wc->byte_len, m.imm, m.len);
	}
	if (atomic_load_explicit(&t->r->counting, memory_order_relaxed))
		t->recvs++;
	q->rdone++;
	t->pending--;
	mark_dirty(t, q);
}

static void on_wc(struct lthr *t, const struct ibv_wc *wc)
{
	struct lrun *r = t->r;
	uint64_t idx = wc->wr_id >> 33;
	bool recv = wc->wr_id >> 32 & 1;
	struct lqp *q;

	if (idx >= (uint64_t)r->nq) {
		lfail("completion with unknown wr_id %#llx (qp_num %#x, %s)",
		      (unsigned long long)wc->wr_id, wc->qp_num,
		      wcs(wc->status));
		return;
	}
	q = &r->q[idx];
	if (q->thread != t->id || wc->qp_num != q->qp->qp_num) {
		lfail("completion of QP %#x with wr_id %#llx of QP %u (%#x)",
		      wc->qp_num, (unsigned long long)wc->wr_id, q->idx,
		      q->qp->qp_num);
		return;
	}
	if (recv)
		on_recv(t, q, wc, (uint32_t)wc->wr_id);
	else
		on_send(t, q, wc, (uint32_t)wc->wr_id);
}

static void *traffic_thread(void *arg)
{
	struct lthr *t = arg;
	struct lrun *r = t->r;
	const struct load_cfg *c = r->c;
	struct ibv_wc wc[64];
	long last_progress = now_ms();
	int idle = 0;

	for (int i = 0; i < r->nq; i++)
		if (r->q[i].thread == t->id)
			refill_rq(t, &r->q[i]);
	for (int i = 0; i < r->nq; i++)
		if (r->q[i].thread == t->id)
			refill_sq(t, &r->q[i]);
	while (!atomic_load(&g_abort)) {
		int got = 0;

		for (int d = 0; d < r->ndev; d++)
			for (int k = t->id; k < c->cqs; k += c->threads) {
				int n = ibv_poll_cq(r->dev[d].cq[k], 64, wc);

				if (n < 0) {
					lfail("poll_cq: %d", n);
					break;
				}
				for (int i = 0; i < n; i++)
					on_wc(t, &wc[i]);
				got += n;
			}
		for (int i = 0; i < t->ndirty; i++) {
			struct lqp *q = t->dirty[i];

			q->dirty = false;
			refill_rq(t, q);
			refill_sq(t, q);
		}
		t->ndirty = 0;
		if (got) {
			last_progress = now_ms();
			idle = 0;
			continue;
		}
		if (atomic_load(&r->stop) && !t->pending)
			break;
		if (!t->pending) {
			last_progress = now_ms();
		} else if (now_ms() - last_progress > c->drain_secs * 1000L) {
			lfail("thread %d: no completion for %d s with %ld WRs and messages outstanding",
			      t->id, c->drain_secs, t->pending);
			break;
		}
		if (++idle > 20)
			usleep(50);
		else
			sched_yield();
	}
	return NULL;
}

/* Say which QPs still wait for completions. */
static void report_outstanding(struct lrun *r)
{
	int shown = 0, stuck = 0;

	for (int i = 0; i < r->nq; i++) {
		struct lqp *q = &r->q[i];

		if (q->posted == q->done && q->mhead == q->mtail)
			continue;
		stuck++;
		if (shown++ < 16)
			fprintf(stderr, "  QP %u (%#x, %s): sends %u posted %u completed; receives %u posted %u completed; messages to the peer %u sent %u received\n",
				q->idx, q->qp->qp_num, qps_str(qp_state(q->qp)),
				q->posted, q->done, q->rposted, q->rdone,
				q->mhead, q->mtail);
	}
	fprintf(stderr, "  %d of %d QPs with WRs outstanding\n", stuck, r->nq);
}

/*
 * After the drain: every QP in RTS with the exact fetch-add sum; then each
 * moved to ERR gives back its outstanding receives, flushed, in order.
 */
static void run_final_checks(struct lrun *r)
{
	struct ibv_wc wc[64];
	long want = 0, got = 0, end;

	for (int i = 0; i < r->nq; i++) {
		struct lqp *q = &r->q[i];
		int s = qp_state(q->qp);

		if (s != IBV_QPS_RTS)
			lfail("QP %u (%#x) in %s after the drain", q->idx,
			      q->qp->qp_num, qps_str(s));
		if (*q->ctr != q->fadd_sum)
			lfail("QP %u (%#x): counter %#llx, the adds sum to %#llx",
			      q->idx, q->qp->qp_num,
			      (unsigned long long)*q->ctr,
			      (unsigned long long)q->fadd_sum);
		if (!q->done && r->c->secs)
			lfail("QP %u (%#x): no WR completed at all", q->idx,
			      q->qp->qp_num);
	}
	for (int d = 0; d < r->ndev; d++)
		for (int k = 0; k < r->c->cqs; k++)
			if (ibv_poll_cq(r->dev[d].cq[k], 1, wc) != 0)
				lfail("CQ %d of %s: a completion after the drain (wr_id %#llx, %s)",
				      k, r->dev[d].name,
				      (unsigned long long)wc[0].wr_id,
				      wcs(wc[0].status));
	if (atomic_load(&g_abort))
		return;
	for (int i = 0; i < r->nq; i++) {
		struct lqp *q = &r->q[i];

		want += q->rposted - q->rdone;
		if (qp_modify_state(q->qp, IBV_QPS_ERR))
			lfail("QP %u to ERR: %s", q->idx, strerror(errno));
	}
	end = now_ms() + r->c->drain_secs * 1000L;
	while (got < want && now_ms() < end && !atomic_load(&g_abort)) {
		int polled = 0;

		for (int d = 0; d < r->ndev; d++)
			for (int k = 0; k < r->c->cqs; k++) {
				int n = ibv_poll_cq(r->dev[d].cq[k], 64, wc);

				for (int i = 0; i < n; i++) {
					uint64_t idx = wc[i].wr_id >> 33;
					struct lqp *q = &r->q[idx < (uint64_t)r->nq ? idx : 0];

					if (idx >= (uint64_t)r->nq ||
					    !(wc[i].wr_id >> 32 & 1) ||
					    wc[i].status != IBV_WC_WR_FLUSH_ERR ||
					    (uint32_t)wc[i].wr_id != q->rdone ||
					    wc[i].qp_num != q->qp->qp_num) {
						lfail("flush: wr_id %#llx qp %#x %s; wanted a flushed receive #%u of QP %u",
						      (unsigned long long)wc[i].wr_id,
						      wc[i].qp_num, wcs(wc[i].status),
						      q->rdone, q->idx);
						continue;
					}
					q->rdone++;
					got++;
				}
				polled += n > 0 ? n : 0;
			}
		if (!polled)
			usleep(1000);
	}
	if (got != want) {
		lfail("flush: %ld of %ld outstanding receives came back", got,
		      want);
		report_outstanding(r);
	}
}

/* ---- MR churn -------------------------------------------------------- */

#define CHURN_MAX	(1 << 20)
#define CHURN_POOL	(CHURN_MAX + 64 * 1024)
#define CHURN_IO	4096

struct churn {
	struct lrun *r;
	int id;
	pthread_t tid;
	long count, done;
	struct ldev *da, *db;	/* requester side, MR owner side */
	struct ibv_cq *cqa, *cqb;
	struct ibv_qp *qa, *qb;
	struct buf stage;	/* on da: write source, then read destination */
	uint8_t *pool[64];
	struct ibv_mr *mr[64];
	uint64_t remote_uses, local_uses;
	double reg_us, dereg_us, use_us;
	uint64_t rnd;
};

static atomic_int g_churn_running;

static bool churn_wait(struct churn *ch, struct ibv_cq *cq, uint64_t id,
		       const char *what)
{
	struct ibv_wc wc;

	if (poll_n(cq, &wc, 1, 60000) != 1) {
		lfail("churn %d: %s: no completion within 60 s", ch->id, what);
		return false;
	}
	if (wc.status != IBV_WC_SUCCESS || wc.wr_id != id) {
		lfail("churn %d: %s: %s, wr_id %#llx (wanted %#llx)", ch->id,
		      what, wcs(wc.status), (unsigned long long)wc.wr_id,
		      (unsigned long long)id);
		return false;
	}
	return true;
}

/* Use MR @mr (at @p, @len bytes) from the peer: 0 or -1. */
static int churn_use(struct churn *ch, struct ibv_mr *mr, uint8_t *p,
		     size_t len, int how, long i)
{
	uint32_t io = 1 + xrnd(&ch->rnd) % CHURN_IO, seed = xrnd(&ch->rnd);
	size_t off;
	uint8_t *src = ch->stage.p, *dst = ch->stage.p + CHURN_IO;
	struct ibv_sge s = mk_sge(&ch->stage, 0, io);
	long d;

	if (io > len)
		io = len;
	s.length = io;
	off = xrnd(&ch->rnd) % (len - io + 1);
	switch (how) {
	case 0:		/* remote write, then read back */
		fill_pattern(src, io, seed);
		if (post_op(ch->qa, IBV_WR_RDMA_WRITE, 2 * i, &s, 1,
			    IBV_SEND_SIGNALED, (uintptr_t)(p + off), mr->rkey) ||
		    !churn_wait(ch, ch->cqa, 2 * i, "WRITE into a new MR"))
			return -1;
		d = first_diff(p + off, src, io);
		if (d >= 0) {
			lfail("churn %d: MR %#x: WRITE differs at byte %ld of %u",
			      ch->id, mr->rkey, d, io);
			return -1;
		}
		/* fall through */
	case 2:		/* remote read */
		if (how == 2)
			fill_pattern(p + off, io, seed);
		memset(dst, POISON, io);
		s.addr = (uintptr_t)dst;
		if (post_op(ch->qa, IBV_WR_RDMA_READ, 2 * i + 1, &s, 1,
			    IBV_SEND_SIGNALED, (uintptr_t)(p + off), mr->rkey) ||
		    !churn_wait(ch, ch->cqa, 2 * i + 1, "READ from a new MR"))
			return -1;
		d = first_diff(dst, p + off, io);
		if (d >= 0) {
			lfail("churn %d: MR %#x: READ differs at byte %ld of %u",
			      ch->id, mr->rkey, d, io);
			return -1;
		}
		ch->remote_uses++;
		break;
	case 1: {	/* the MR receives a SEND */
		struct ibv_sge rs = { (uintptr_t)(p + off), io, mr->lkey };

		fill_pattern(src, io, seed);
		memset(p + off, POISON, io);
		if (post_recv_sges(ch->qb, 2 * i, &rs, 1) ||
		    post_op(ch->qa, IBV_WR_SEND, 2 * i, &s, 1,
			    IBV_SEND_SIGNALED, 0, 0) ||
		    !churn_wait(ch, ch->cqa, 2 * i, "SEND into a new MR") ||
		    !churn_wait(ch, ch->cqb, 2 * i, "receive into a new MR"))
			return -1;
		d = first_diff(p + off, src, io);
		if (d >= 0) {
			lfail("churn %d: MR %#x: received data differs at byte %ld of %u",
			      ch->id, mr->lkey, d, io);
			return -1;
		}
		ch->local_uses++;
		break;
	}
	}
	return 0;
}

static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	int live = ch->r->c->mr_live;
	double t0, t1;

	for (long i = 0; i < ch->count && !atomic_load(&g_abort); i++) {
		int j = i % live, how = i % 4, acc;
		uint32_t e = xrnd(&ch->rnd) % 9;
		size_t pages = (1u << e) + xrnd(&ch->rnd) % (1u << e);
		size_t len, off = (xrnd(&ch->rnd) % 16) * 4096;
		uint8_t *p;

		if (pages > 256)
			pages = 256;
		len = pages * 4096;
		p = ch->pool[j] + off;
		t0 = now_us();
		if (ch->mr[j] && ibv_dereg_mr(ch->mr[j])) {
			lfail("churn %d: dereg_mr: %s", ch->id, strerror(errno));
			break;
		}
		t1 = now_us();
		ch->dereg_us += t1 - t0;
		ch->mr[j] = NULL;
		acc = how == 0 ? IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_READ :
		      how == 1 ? IBV_ACCESS_LOCAL_WRITE :
		      how == 2 ? IBV_ACCESS_REMOTE_READ :
				 IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				 IBV_ACCESS_REMOTE_ATOMIC;
		ch->mr[j] = ibv_reg_mr(ch->db->pd, p, len, acc);
		t0 = now_us();
		ch->reg_us += t0 - t1;
		if (!ch->mr[j]) {
			lfail("churn %d: reg_mr #%ld of %zu bytes (access %#x): %s",
			      ch->id, i, len, acc, strerror(errno));
			break;
		}
		if (how < 3 && churn_use(ch, ch->mr[j], p, len, how, i))
			break;
		ch->use_us += now_us() - t0;
		ch->done++;
	}
	for (int j = 0; j < live; j++) {
		if (ch->mr[j] && ibv_dereg_mr(ch->mr[j]))
			lfail("churn %d: dereg_mr: %s", ch->id, strerror(errno));
		ch->mr[j] = NULL;
	}
	atomic_fetch_sub(&g_churn_running, 1);
	return NULL;
}

static int churn_setup(struct churn *ch, struct lrun *r, int id, long count)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RC,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct lqp a = {}, b = {};
	struct load_cfg cc = *r->c;

	memset(ch, 0, sizeof(*ch));
	ch->r = r;
	ch->id = id;
	ch->count = count;
	ch->rnd = r->c->seed * 31 + id + 7;
	ch->da = &r->dev[0];
	ch->db = &r->dev[r->ndev - 1];
	ch->cqa = ibv_create_cq(ch->da->ctx, 16, NULL, NULL, 0);
	ch->cqb = ibv_create_cq(ch->db->ctx, 16, NULL, NULL, 0);
	if (!ch->cqa || !ch->cqb)
		return -1;
	ia.send_cq = ia.recv_cq = ch->cqa;
	ch->qa = ibv_create_qp(ch->da->pd, &ia);
	ia.send_cq = ia.recv_cq = ch->cqb;
	ch->qb = ibv_create_qp(ch->db->pd, &ia);
	if (!ch->qa || !ch->qb)
		return -1;
	a.qp = ch->qa;
	a.dev = ch->da;
	a.peer = &b;
	b.qp = ch->qb;
	b.dev = ch->db;
	b.peer = &a;
	cc.timeout = cc.mr_timeout;
	if (qp_connect(&a, &cc, 0x100 + id, 0x200 + id) ||
	    qp_connect(&b, &cc, 0x200 + id, 0x100 + id))
		return -1;
	if (buf_new(&ch->stage, ch->da->pd, 2 * CHURN_IO, IBV_ACCESS_LOCAL_WRITE))
		return -1;
	for (int j = 0; j < r->c->mr_live; j++) {
		ch->pool[j] = aligned_alloc(4096, CHURN_POOL);
		if (!ch->pool[j])
			return -1;
		memset(ch->pool[j], 0, CHURN_POOL);
	}
	return 0;
}

static void churn_free(struct churn *ch)
{
	if (ch->qa)
		ibv_destroy_qp(ch->qa);
	if (ch->qb)
		ibv_destroy_qp(ch->qb);
	if (ch->cqa)
		ibv_destroy_cq(ch->cqa);
	if (ch->cqb)
		ibv_destroy_cq(ch->cqb);
	if (ch->stage.p)
		buf_free(&ch->stage);
	for (int j = 0; j < 64; j++)
		free(ch->pool[j]);
	memset(ch, 0, sizeof(*ch));
}

/* ---- one run ------------------------------------------------------------ */

static void counters_read(struct ldev *d, int ndev, long long *v)
{
	for (int c = 0; c < NCNT; c++) {
		v[c] = 0;
		for (int i = 0; i < ndev; i++)
			v[c] += hw_counter(d[i].name, cnt_names[c]);
	}
}

/*
 * N pairs with traffic for c->secs (and as long as the MR churn runs),
 * on devices that are open. Returns the number of errors.
 */
static long load_run(const struct load_cfg *c, struct ldev *dev,
		     struct load_res *res)
{
	struct lrun r = { .c = c, .dev = dev, .ndev = c->veth ? 2 : 1 };
	struct churn *ch = NULL;
	long long cnt0[NCNT], cnt1[NCNT];
	char objs0[2][256], objs1[2][256];
	double t0, t1, tm0 = 0;
	int ret;

	memset(res, 0, sizeof(*res));
	atomic_store(&g_errors, 0);
	atomic_store(&g_abort, 0);
	sib_wait_ms = 60000;
	for (int d = 0; d < r.ndev; d++)
		objects_read(dev[d].name, objs0[d], sizeof(objs0[d]));
	t0 = now_us();
	ret = run_setup(&r);
	res->setup_s = (now_us() - t0) / 1e6;
	if (ret) {
		lfail("setup of %d QP pairs failed: %s", c->qps, strerror(ret));
		goto out;
	}
	r.t = calloc(c->threads, sizeof(*r.t));
	if (c->mrs) {
		ch = calloc(c->mr_threads, sizeof(*ch));
		for (int i = 0; i < c->mr_threads; i++)
			if (churn_setup(&ch[i], &r, i,
					c->mrs / c->mr_threads +
					(i < c->mrs % c->mr_threads))) {
				lfail("churn %d setup: %s", i, strerror(errno));
				goto out;
			}
	}
	counters_read(dev, r.ndev, cnt0);
	atomic_store(&r.counting, 1);
	t0 = now_us();
	for (int i = 0; i < c->threads; i++) {
		struct lthr *t = &r.t[i];

		t->r = &r;
		t->id = i;
		t->scratch = malloc(c->size);
		t->dirty = calloc(r.nq, sizeof(*t->dirty));
		pthread_create(&t->tid, NULL, traffic_thread, t);
	}
	if (ch) {
		tm0 = now_us();
		atomic_store(&g_churn_running, c->mr_threads);
		for (int i = 0; i < c->mr_threads; i++)
			pthread_create(&ch[i].tid, NULL, churn_thread, &ch[i]);
	}
	for (;;) {
		long el = (now_us() - t0) / 1e6;

		if (atomic_load(&g_abort))
			break;
		if (el >= c->secs && !atomic_load(&g_churn_running))
			break;
		usleep(100000);
	}
	atomic_store(&r.counting, 0);
	t1 = now_us();
	atomic_store(&r.stop, 1);
	for (int i = 0; ch && i < c->mr_threads; i++) {
		pthread_join(ch[i].tid, NULL);
		res->mrs_done += ch[i].done;
		res->mr_remote_uses += ch[i].remote_uses;
		res->mr_local_uses += ch[i].local_uses;
		res->mr_reg_us += ch[i].reg_us;
		res->mr_dereg_us += ch[i].dereg_us;
		res->mr_use_us += ch[i].use_us;
	}
	if (ch)
		res->mr_secs = (now_us() - tm0) / 1e6;
	for (int i = 0; i < c->threads; i++) {
		struct lthr *t = &r.t[i];

		pthread_join(t->tid, NULL);
		res->msgs += t->msgs;
		res->bytes += t->bytes;
		res->recvs += t->recvs;
		for (int k = 0; k < NKIND; k++)
			res->per_kind[k] += t->per_kind[k];
		free(t->scratch);
		free(t->dirty);
	}
	res->secs = (t1 - t0) / 1e6;
	counters_read(dev, r.ndev, cnt1);
	for (int i = 0; i < NCNT; i++)
		res->cnt[i] = cnt1[i] - cnt0[i];
	res->qp_min = r.nq ? UINT64_MAX : 0;
	for (int i = 0; i < r.nq; i++) {
		if (r.q[i].done < res->qp_min)
			res->qp_min = r.q[i].done;
		if (r.q[i].done > res->qp_max)
			res->qp_max = r.q[i].done;
	}
	for (int i = 0; c->per_qp && i < r.nq; i++)
		lnote("#   QP %d (%#x): %u sends, %u receives\n", i,
		      r.q[i].qp->qp_num, r.q[i].done, r.q[i].rdone);
	if (atomic_load(&g_abort))
		report_outstanding(&r);
	else
		run_final_checks(&r);
out:
	t0 = now_us();
	for (int i = 0; ch && i < c->mr_threads; i++)
		churn_free(&ch[i]);
	free(ch);
	run_free(&r);
	free(r.t);
	res->teardown_s = (now_us() - t0) / 1e6;
	/* Destroyed objects may take a moment (deferred work). */
	for (int d = 0; d < r.ndev; d++) {
		for (int i = 0; i < 300; i++) {
			objects_read(dev[d].name, objs1[d], sizeof(objs1[d]));
			if (!strcmp(objs0[d], objs1[d]))
				break;
			usleep(10000);
		}
		if (strcmp(objs0[d], objs1[d]))
			lfail("%s's objects not back: before\n%safter\n%s",
			      dev[d].name, objs0[d], objs1[d]);
	}
	res->errors = atomic_load(&g_errors);
	return res->errors;
}

static void res_print(const struct load_cfg *c, const struct load_res *r)
{
	lnote("# qps %d: %.0f msgs/s, %.1f MB/s (%.1f s, %llu msgs, %llu receives; send %llu write %llu write_imm %llu read %llu fadd %llu; per QP %llu..%llu)\n",
	      c->qps, r->msgs / r->secs, r->bytes / r->secs / 1e6, r->secs,
	      (unsigned long long)r->msgs, (unsigned long long)r->recvs,
	      (unsigned long long)r->per_kind[0],
	      (unsigned long long)r->per_kind[1],
	      (unsigned long long)r->per_kind[2],
	      (unsigned long long)r->per_kind[3],
	      (unsigned long long)r->per_kind[4],
	      (unsigned long long)r->qp_min, (unsigned long long)r->qp_max);
	lnote("#   setup %.1f s, teardown %.1f s; sent_pkts %lld retransmits %lld ack_timeouts %lld rnr_nak_rcvd %lld seq_nak_sent %lld credit_stalls %lld; errors %ld\n",
	      r->setup_s, r->teardown_s, r->cnt[0], r->cnt[1], r->cnt[2],
	      r->cnt[3], r->cnt[4], r->cnt[5], r->errors);
	if (c->mrs && r->mrs_done)
		lnote("#   MR churn: %ld MRs in %.1f s (%.0f MRs/s), %llu used remotely, %llu locally; per MR: reg %.0f us, dereg %.0f us, use %.0f us\n",
		      r->mrs_done, r->mr_secs, r->mrs_done / r->mr_secs,
		      (unsigned long long)r->mr_remote_uses,
		      (unsigned long long)r->mr_local_uses,
		      r->mr_reg_us / r->mrs_done, r->mr_dereg_us / r->mrs_done,
		      r->mr_use_us / r->mrs_done);
}

static void raise_limits(void)
{
	struct rlimit rl = { RLIM_INFINITY, RLIM_INFINITY };

	if (setrlimit(RLIMIT_MEMLOCK, &rl))
		perror("setrlimit(RLIMIT_MEMLOCK)");
	if (!getrlimit(RLIMIT_NOFILE, &rl)) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/* Check @c against the device's limits; false with a message if not. */
static bool cfg_fits(const struct load_cfg *c, struct ibv_context *ctx)
{
	struct ibv_device_attr a;
	long qps = 2L * c->qps + 2L * c->mr_threads;

	if (ibv_query_device(ctx, &a))
		return false;
	if (qps > a.max_qp || c->wr > a.max_qp_wr || 2 * c->cqs > a.max_cq ||
	    4L * c->qps + c->mr_threads * c->mr_live > a.max_mr) {
		fprintf(stderr, "sib_load: %ld QPs of %d WRs, %d CQs: beyond the device (max_qp %d, max_qp_wr %d, max_cq %d, max_mr %d)\n",
			qps, c->wr, c->cqs, a.max_qp, a.max_qp_wr, a.max_cq,
			a.max_mr);
		return false;
	}
	return true;
}

/* ---- the kselftest subset --------------------------------------------- */

FIXTURE(load) {
	struct ldev dev[2];
};

FIXTURE_SETUP(load)
{
	raise_limits();
	ASSERT_EQ(0, devs_open(self->dev, false));
}

FIXTURE_TEARDOWN(load)
{
	devs_close(self->dev, false);
}

/* 256 QP pairs over 64 CQs, every opcode, for 10 s. */
TEST_F_TIMEOUT(load, many_qps, 90)
{
	struct load_cfg c;
	struct load_res r;

	cfg_default(&c);
	c.qps = 256;
	c.secs = 10;
	c.drain_secs = 30;
	ASSERT_TRUE(cfg_fits(&c, self->dev[0].ctx));
	EXPECT_EQ(0, load_run(&c, self->dev, &r));
	res_print(&c, &r);
	EXPECT_LT(0, r.msgs);
}

/*
 * 5000 MRs registered and deregistered beside 64 pairs' traffic; 1000 on
 * a slow (debug) kernel, where 5000 take longer than the test's 120 s.
 */
TEST_F_TIMEOUT(load, mr_churn, 120)
{
	struct load_cfg c;
	struct load_res r;
	char objs[256];

	cfg_default(&c);
	c.qps = 64;
	c.secs = 3;
	c.mrs = sib_slow_kernel() ? 1000 : 5000;
	c.drain_secs = 30;
	EXPECT_EQ(0, load_run(&c, self->dev, &r));
	res_print(&c, &r);
	EXPECT_EQ(c.mrs, r.mrs_done);
	EXPECT_LT(0, r.mr_remote_uses);
	EXPECT_LT(0, r.mr_local_uses);
	objects_read(SIB_DEV, objs, sizeof(objs));
	/* ib_core's MAD layer keeps one MR of its own on each device. */
	EXPECT_GE(1, objects_get(objs, "mr")) TH_LOG("objects:\n%s", objs);
}

/* ---- the long-run tool ------------------------------------------------ */

static void usage(void)
{
	printf("usage: sib_load [options]   (no options: the kselftest subset)\n"
	       "  --qps N          QP pairs (1 to 4096; default 256)\n"
	       "  --sweep N,N,...  one run per N (e.g. 1,16,256,1024,4096)\n"
	       "  --time S         traffic time of each run (default 10)\n"
	       "  --mrs N          MRs to register and deregister beside the traffic;\n"
	       "                   with --sweep, in one more run at the last N\n"
	       "  --mr-threads N   churn threads (default 2)\n"
	       "  --threads N      traffic threads, dividing cqs/2 (default 2)\n"
	       "  --cqs N          CQs (default 64)\n"
	       "  --wr N           send and receive queue depth (default 16)\n"
	       "  --size B         largest message (default 2048)\n"
	       "  --mtu B          path MTU (default 1024)\n"
	       "  --timeout N      QP ACK timeout exponent (default 17)\n"
	       "  --mr-timeout N   the same, of the churn QPs (default 12)\n"
	       "  --veth           between two namespaces over veth (RoCEv2)\n"
	       "  --faults D,U,R,C fault injection on: drop, dup, reorder, corrupt in ppm\n"
	       "  --soak S         runs of --time (default 60) with faults and MR churn for\n"
	       "                   S seconds; memory and objects back at the end\n"
	       "  --drain S        longest wait for outstanding completions (default 60)\n"
	       "  --kinds MASK     post only these: 1 SEND, 2 WRITE, 4 WRITE_IMM, 8 READ, 16 FADD\n"
	       "  --per-qp         print each QP's completions\n"
	       "  --seed N\n");
}

static int parse_list(const char *s, int *v, int max)
{
	int n = 0;

	while (*s && n < max) {
		v[n++] = strtol(s, (char **)&s, 0);
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return n;
}

static bool meminfo_back(const struct meminfo *a, const struct meminfo *b)
{
	/* Slab within 4 MiB or 3%, free memory within 32 MiB. */
	long slab_margin = a->slab_kb * 3 / 100 > 4096 ? a->slab_kb * 3 / 100 : 4096;

	return b->slab_kb - a->slab_kb <= slab_margin &&
	       a->free_kb - b->free_kb <= 32768;
}

static int tool_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "qps", 1, NULL, 'q' }, { "sweep", 1, NULL, 'S' },
		{ "time", 1, NULL, 't' }, { "mrs", 1, NULL, 'm' },
		{ "mr-threads", 1, NULL, 'M' }, { "threads", 1, NULL, 'T' },
		{ "cqs", 1, NULL, 'c' }, { "wr", 1, NULL, 'w' },
		{ "size", 1, NULL, 's' }, { "mtu", 1, NULL, 'u' },
		{ "timeout", 1, NULL, 'o' }, { "veth", 0, NULL, 'v' },
		{ "faults", 1, NULL, 'f' }, { "soak", 1, NULL, 'k' },
		{ "drain", 1, NULL, 'd' }, { "seed", 1, NULL, 'e' },
		{ "kinds", 1, NULL, 'K' }, { "mr-timeout", 1, NULL, 'O' }, { "per-qp", 0, NULL, 'P' },
		{ "help", 0, NULL, 'h' }, {}
	};
	struct load_cfg c;
	struct ldev dev[2];
	int sweep[32], nsweep = 0, soak = 0, opt, fails = 0;
	bool time_set = false;
	struct meminfo m0, m1;
	char objs0[256], objs1[256];
	double t_all = now_us();

	cfg_default(&c);
	while ((opt = getopt_long(argc, argv, "h", lo, NULL)) != -1) {
		switch (opt) {
		case 'q':
			c.qps = atoi(optarg);
			break;
		case 'S':
			nsweep = parse_list(optarg, sweep, 32);
			if (nsweep <= 0) {
				fprintf(stderr, "bad --sweep %s\n", optarg);
				return 2;
			}
			break;
		case 't':
			c.secs = atoi(optarg);
			time_set = true;
			break;
		case 'm':
			c.mrs = atol(optarg);
			break;
		case 'M':
			c.mr_threads = atoi(optarg);
			break;
		case 'T':
			c.threads = atoi(optarg);
			break;
		case 'c':
			c.cqs = atoi(optarg);
			break;
		case 'w':
			c.wr = atoi(optarg);
			break;
		case 's':
			c.size = atoi(optarg);
			break;
		case 'u':
			c.mtu = atoi(optarg);
			break;
		case 'o':
			c.timeout = atoi(optarg);
			break;
		case 'v':
			c.veth = true;
			break;
		case 'f':
			c.faults = true;
			if (sscanf(optarg, "%lld,%lld,%lld,%lld", &c.fault[0],
				   &c.fault[1], &c.fault[2], &c.fault[3]) != 4) {
				fprintf(stderr, "bad --faults %s\n", optarg);
				return 2;
			}
			break;
		case 'k':
			soak = atoi(optarg);
			break;
		case 'd':
			c.drain_secs = atoi(optarg);
			break;
		case 'e':
			c.seed = strtoull(optarg, NULL, 0);
			break;
		case 'O':
			c.mr_timeout = atoi(optarg);
			break;
		case 'K':
			c.kinds = strtol(optarg, NULL, 0);
			break;
		case 'P':
			c.per_qp = true;
			break;
		default:
			usage();
			return opt == 'h' ? 0 : 2;
		}
	}
	if (c.cqs < 2 || c.cqs > MAX_CQS || c.cqs % 2 || c.threads < 1 ||
	    (c.cqs / 2) % c.threads || c.wr < 1 || c.wr > MAX_WR ||
	    c.size < 16 || c.mtu < 256 || c.mr_threads < 1 ||
	    c.mr_live > 64 || c.qps < !c.mrs) {
		fprintf(stderr, "sib_load: bad options (threads must divide cqs/2)\n");
		return 2;
	}
	if (!nsweep)
		sweep[nsweep++] = c.qps;
	if (soak) {
		c.faults = true;
		if (!time_set)
			c.secs = 60;
		if (!c.mrs)
			c.mrs = 2000;
		if (c.timeout == 17)
			c.timeout = 14;
	}
	raise_limits();
	if (devs_open(dev, c.veth)) {
		fprintf(stderr, "sib_load: could not set up the device(s)\n");
		devs_close(dev, c.veth);
		return 1;
	}
	for (int i = 0; i < nsweep; i++) {
		struct load_cfg ci = c;

		ci.qps = sweep[i];
		if (!cfg_fits(&ci, dev[0].ctx))
			return 2;
	}
	lnote("# sib_load: %s, %d CQs, %d WRs per queue, messages up to %d bytes, MTU %d, %d traffic threads%s\n",
	      c.veth ? "sibA-sibB over veth" : "sib0 over lo", c.cqs, c.wr,
	      c.size, c.mtu, c.threads, c.faults ? ", faults on" : "");
	meminfo_read(&m0, true);
	objects_read(dev[0].name, objs0, sizeof(objs0));
	if (soak) {
		long end = now_ms() + soak * 1000L;
		int round = 0;

		faults_set(dev, c.veth ? 2 : 1, &c, true);
		do {
			struct load_res r;
			struct load_cfg ci = c;

			ci.seed = c.seed + round;
			if (load_run(&ci, dev, &r))
				fails++;
			lnote("# soak round %d (%ld s left):\n", ++round,
			      (end - now_ms()) / 1000);
			res_print(&ci, &r);
			if (round == 1) {
				/* Caches of the first round are the baseline. */
				meminfo_read(&m0, true);
				lnote("# memory after round 1: MemFree %ld kB, Slab %ld kB (SUnreclaim %ld kB)\n",
				      m0.free_kb, m0.slab_kb, m0.sunreclaim_kb);
			}
		} while (!fails && now_ms() < end);
		faults_set(dev, c.veth ? 2 : 1, &c, false);
	} else {
		if (c.faults)
			faults_set(dev, c.veth ? 2 : 1, &c, true);
		for (int i = 0; i < nsweep; i++) {
			struct load_res r;
			struct load_cfg ci = c;

			ci.qps = sweep[i];
			if (nsweep > 1)
				ci.mrs = 0;
			if (load_run(&ci, dev, &r))
				fails++;
			res_print(&ci, &r);
		}
		if (nsweep > 1 && c.mrs) {
			struct load_res r;
			struct load_cfg ci = c;

			ci.qps = sweep[nsweep - 1];
			lnote("# with MR churn:\n");
			if (load_run(&ci, dev, &r))
				fails++;
			res_print(&ci, &r);
		}
		if (c.faults)
			faults_set(dev, c.veth ? 2 : 1, &c, false);
	}
	meminfo_read(&m1, true);
	objects_read(dev[0].name, objs1, sizeof(objs1));
	lnote("# memory: MemFree %ld -> %ld kB, Slab %ld -> %ld kB (SUnreclaim %ld -> %ld kB); objects %s\n",
	      m0.free_kb, m1.free_kb, m0.slab_kb, m1.slab_kb,
	      m0.sunreclaim_kb, m1.sunreclaim_kb,
	      strcmp(objs0, objs1) ? "NOT back" : "back");
	if (strcmp(objs0, objs1)) {
		fprintf(stderr, "objects before:\n%safter:\n%s", objs0, objs1);
		fails++;
	}
	if (soak && !meminfo_back(&m0, &m1)) {
		fprintf(stderr, "sib_load: memory not back after the soak\n");
		fails++;
	}
	devs_close(dev, c.veth);
	lnote("# sib_load: %s in %.0f s\n", fails ? "FAILED" : "passed",
	      (now_us() - t_all) / 1e6);
	return fails ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strncmp(argv[1], "--", 2))
		return tool_main(argc, argv);
	return sib_harness_main(argc, argv);
}
