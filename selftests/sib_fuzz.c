// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's fuzzers, seeded and reproducible:
 *
 *   sib_fuzz wire   [--seed N] [--count N] [--path veth|lo|both]
 *	RoCEv2 packets mutated from a corpus captured (AF_PACKET) from real
 *	sib traffic of every opcode, aimed at live RC, UC and UD QPs, from a
 *	raw socket on a veth (the wire path) and to 127.0.0.1 (the receive
 *	path of a device on lo); every drop counted, real traffic running
 *	and byte-verified on other QPs.
 *   sib_fuzz ring   [--seed N] [--count N] [--threads N]
 *	garbage and half-valid WQEs, scribbled indices and ring headers in
 *	SQs, RQs, SRQs and CQs, from several threads; every fuzzed QP ends
 *	in ERR and flushes what is posted then; other QPs are unharmed.
 *   sib_fuzz uverbs [--seed N] [--count N] [--no-link-race-lo]
 *	random verbs command sequences, destroy under doorbells, a uverbs
 *	file closed or its process killed mid-operation, link add/delete
 *	races, random fault-injection knobs and doorbell-file writes.
 *   sib_fuzz all    runs the three in a row.
 *
 * Without a subcommand it is a kselftest-harness suite of short runs of
 * each (make check). A failure prints the command that repeats it.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <linux/if_packet.h>
#include <net/ethernet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <netinet/ip.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_topo.h"
#include "sib_pair_t.h"
#include "sib_rings.h"

/* ---- options, randomness, reporting ------------------------------------ */

struct fopts {
	const char *cmd;	/* wire, ring, uverbs */
	uint64_t seed;
	long count;		/* -1: the default of the fuzzer */
	int paths;		/* wire: 1 veth, 2 lo */
	int threads;		/* ring */
	bool no_link_race_lo;	/* uverbs: no rdma link add/delete on lo */
	bool quiet;
};

struct rng {
	uint64_t s;
};

static uint64_t rnd(struct rng *r)
{
	/* xorshift64* */
	r->s ^= r->s >> 12;
	r->s ^= r->s << 25;
	r->s ^= r->s >> 27;
	return r->s * 0x2545f4914f6cdd1dull;
}

static void rng_init(struct rng *r, uint64_t seed, uint64_t stream)
{
	r->s = (seed + 1) * 0x9e3779b97f4a7c15ull ^ (stream << 32 | stream);
	if (!r->s)
		r->s = 1;
	for (int i = 0; i < 4; i++)
		rnd(r);
}

/* Uniform in [0, n). */
static uint32_t rn(struct rng *r, uint32_t n)
{
	return n ? (uint32_t)((rnd(r) >> 32) * n >> 32) : 0;
}

/* True with probability @pct percent. */
static bool pct(struct rng *r, uint32_t p)
{
	return rn(r, 100) < p;
}

/* A "boundary" 32-bit value, or a random one. */
static uint32_t edge32(struct rng *r)
{
	static const uint32_t e[] = { 0, 1, 2, 3, 4, 7, 8, 63, 64, 255, 256,
				      1023, 1024, 1025, 4095, 4096, 4097,
				      65535, 65536, 0x7fffffff, 0x80000000,
				      0xfffffffe, 0xffffffff };

	return pct(r, 60) ? e[rn(r, sizeof(e) / sizeof(e[0]))] : rnd(r);
}

static int say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int say(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	printf("# ");
	vprintf(fmt, ap);
	va_end(ap);
	fflush(stdout);
	return 0;
}

static char fail_msg[512];
static volatile int fuzz_failed;

/* Record the first failure; the run goes on to its end and then fails. */
static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...)
{
	va_list ap;
	char m[512];

	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	say("FAIL: %s\n", m);
	if (!__atomic_exchange_n(&fuzz_failed, 1, __ATOMIC_SEQ_CST))
		snprintf(fail_msg, sizeof(fail_msg), "%s", m);
}

static double now_s(void)
{
	return now_us() / 1e6;
}

/* ---- counters ------------------------------------------------------------ */

static const char *const cnt_names[] = {
	"rcvd_pkts", "icrc_errors", "hdr_errors", "unknown_qpn",
	"rx_queue_full", "sent_pkts", "send_errors", "seq_nak_sent",
	"duplicate_requests", "rnr_nak_sent", "retransmits", "local_acks",
	"local_bursts", "doorbells",
};

#define NCNT		(sizeof(cnt_names) / sizeof(cnt_names[0]))
#define C_RCVD		0
#define C_ICRC		1
#define C_HDR		2
#define C_UNK		3
#define C_RXQ		4
#define C_SENT		5
#define C_SENDERR	6

struct cnts {
	long long v[NCNT];
};

static void cnt_read(const char *dev, struct cnts *c)
{
	usleep(30000);	/* ib_core's 10 ms counter cache */
	for (unsigned int i = 0; i < NCNT; i++)
		c->v[i] = hw_counter(dev, cnt_names[i]);
}

/* Everything the receive path did with a packet: queued or counted. */
static long long rx_sum(const struct cnts *c)
{
	return c->v[C_RCVD] + c->v[C_ICRC] + c->v[C_HDR] + c->v[C_UNK] +
	       c->v[C_RXQ];
}

static void cnt_report(const char *dev, const struct cnts *a,
		       const struct cnts *b)
{
	char line[1024];
	int n = 0;

	for (unsigned int i = 0; i < NCNT; i++)
		if (b->v[i] != a->v[i])
			n += snprintf(line + n, sizeof(line) - n, " %s +%lld",
				      cnt_names[i], b->v[i] - a->v[i]);
	say("%s counters:%s\n", dev, n ? line : " no change");
}

/* ---- verbs endpoints ------------------------------------------------------- */

#define EP_BUF		(64 * 1024)
#define ACC_RW		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define FUZZ_QKEY	0x11110000u

/* One QP with its CQs and a registered buffer. */
struct ep {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *scq, *rcq;
	struct ibv_qp *qp;
	struct ibv_ah *ah;		/* UD: to the peer */
	struct ibv_mr *mr;
	uint8_t *buf;
	int gid;
	enum ibv_qp_type type;
	uint32_t sq_psn;		/* what it sends next (estimate) */
	uint32_t rq_psn;		/* what it expects next (estimate) */
	int recvs;			/* receives posted, not completed */
};

static uint8_t ep_rnr_retry = 7;	/* the ring fuzzer wants few */

static int ep_open_srq(struct ep *e, struct ibv_context *ctx,
		       struct ibv_pd *pd, int gid, enum ibv_qp_type type,
		       struct ibv_srq *srq)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = type,
		.cap = { .max_send_wr = 64, .max_recv_wr = 64,
			 .max_send_sge = 2, .max_recv_sge = 2,
			 .max_inline_data = 64 },
	};

	memset(e, 0, sizeof(*e));
	e->ctx = ctx;
	e->pd = pd;
	e->gid = gid;
	e->type = type;
	e->scq = ibv_create_cq(ctx, 512, NULL, NULL, 0);
	e->rcq = ibv_create_cq(ctx, 512, NULL, NULL, 0);
	e->buf = aligned_alloc(4096, EP_BUF);
	if (!e->scq || !e->rcq || !e->buf)
		return -1;
	memset(e->buf, 0, EP_BUF);
	ia.send_cq = e->scq;
	ia.recv_cq = e->rcq;
	if (srq) {
		ia.srq = srq;
		ia.cap.max_recv_wr = 0;
		ia.cap.max_recv_sge = 0;
	}
	e->qp = ibv_create_qp(pd, &ia);
	e->mr = ibv_reg_mr(pd, e->buf, EP_BUF, ACC_RW);
	return e->qp && e->mr ? 0 : -1;
}

static int ep_open(struct ep *e, struct ibv_context *ctx, struct ibv_pd *pd,
		   int gid, enum ibv_qp_type type)
{
	return ep_open_srq(e, ctx, pd, gid, type, NULL);
}

/*
 * Destroy, again while it is EBUSY: a uverbs command of another thread
 * (a doorbell) may hold the object for a moment.
 */
static int destroy_retry(int (*fn)(void *), void *obj)
{
	int ret = 0;

	for (int i = 0; i < 1000; i++) {
		ret = fn(obj);
		if (ret != EBUSY)
			break;
		usleep(1000);
	}
	return ret;
}

static int qp_destroy(void *q)
{
	return ibv_destroy_qp(q);
}

static int cq_destroy(void *c)
{
	return ibv_destroy_cq(c);
}

static void ep_close(struct ep *e)
{
	if (e->qp)
		destroy_retry(qp_destroy, e->qp);
	if (e->ah)
		ibv_destroy_ah(e->ah);
	if (e->mr)
		ibv_dereg_mr(e->mr);
	if (e->scq)
		destroy_retry(cq_destroy, e->scq);
	if (e->rcq)
		destroy_retry(cq_destroy, e->rcq);
	free(e->buf);
	memset(e, 0, sizeof(*e));
}

static void ep_ah_attr(struct ep *e, struct ep *peer, struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = 1;
	ah->port_num = 1;
	ah->grh.hop_limit = 64;
	ah->grh.sgid_index = e->gid;
	ibv_query_gid(peer->ctx, 1, peer->gid, &ah->grh.dgid);
}

/* RESET -> INIT -> RTR -> RTS towards @peer; the PSNs of both are set. */
static int ep_connect(struct ep *e, struct ep *peer, uint32_t sq_psn,
		      uint32_t rq_psn)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };
	int mask = IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT;

	if (e->type == IBV_QPT_UD) {
		a.qkey = FUZZ_QKEY;
		mask |= IBV_QP_QKEY;
	} else {
		a.qp_access_flags = e->type == IBV_QPT_RC ? ACC_RW :
				    IBV_ACCESS_REMOTE_WRITE;
		mask |= IBV_QP_ACCESS_FLAGS;
	}
	if (ibv_modify_qp(e->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	mask = IBV_QP_STATE;
	if (e->type != IBV_QPT_UD) {
		a.path_mtu = IBV_MTU_1024;
		a.dest_qp_num = peer->qp->qp_num;
		a.rq_psn = rq_psn;
		ep_ah_attr(e, peer, &a.ah_attr);
		mask |= IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
			IBV_QP_RQ_PSN;
		if (e->type == IBV_QPT_RC) {
			a.max_dest_rd_atomic = 16;
			a.min_rnr_timer = 1;
			mask |= IBV_QP_MAX_DEST_RD_ATOMIC |
				IBV_QP_MIN_RNR_TIMER;
		}
	}
	if (ibv_modify_qp(e->qp, &a, mask))
		return -1;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = sq_psn;
	mask = IBV_QP_STATE | IBV_QP_SQ_PSN;
	if (e->type == IBV_QPT_RC) {
		a.timeout = 12;		/* 16 ms */
		a.retry_cnt = 7;
		a.rnr_retry = ep_rnr_retry;
		a.max_rd_atomic = 16;
		mask |= IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
			IBV_QP_MAX_QP_RD_ATOMIC;
	}
	if (ibv_modify_qp(e->qp, &a, mask))
		return -1;
	e->sq_psn = sq_psn;
	e->rq_psn = rq_psn;
	if (e->type == IBV_QPT_UD && !e->ah) {
		struct ibv_ah_attr ah;

		ep_ah_attr(e, peer, &ah);
		e->ah = ibv_create_ah(e->pd, &ah);
		if (!e->ah)
			return -1;
	}
	return 0;
}

/* Connect @a and @b to each other with random PSNs. */
static int ep_pair_connect(struct ep *a, struct ep *b, struct rng *r)
{
	uint32_t pa = rnd(r) & 0xffffff, pb = rnd(r) & 0xffffff;

	return ep_connect(a, b, pa, pb) || ep_connect(b, a, pb, pa) ? -1 : 0;
}

static int ep_post_recv(struct ep *e, uint64_t id, uint32_t off, uint32_t len)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = id, .sg_list = &s, .num_sge = 1 };
	struct ibv_recv_wr *bad;
	int ret = ibv_post_recv(e->qp, &wr, &bad);

	if (!ret)
		e->recvs++;
	return ret;
}

/* Post one WR of @op from @e to @peer's buffer at @roff. */
static int ep_post(struct ep *e, struct ep *peer, enum ibv_wr_opcode op,
		   uint64_t id, uint32_t off, uint32_t len, uint32_t roff,
		   uint32_t imm_or_rkey)
{
	struct ibv_sge s = { (uintptr_t)e->buf + off, len, e->mr->lkey };
	struct ibv_send_wr wr = {
		.wr_id = id, .sg_list = &s, .num_sge = 1, .opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	if (op == IBV_WR_SEND_WITH_IMM || op == IBV_WR_RDMA_WRITE_WITH_IMM)
		wr.imm_data = htonl(imm_or_rkey);
	if (op == IBV_WR_SEND_WITH_INV)
		wr.invalidate_rkey = imm_or_rkey;
	if (op == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    op == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		s.length = 8;
		wr.wr.atomic.remote_addr = (uintptr_t)peer->buf + (roff & ~7u);
		wr.wr.atomic.rkey = peer->mr->rkey;
		wr.wr.atomic.compare_add = 1;
		wr.wr.atomic.swap = 2;
	} else if (e->type == IBV_QPT_UD) {
		wr.wr.ud.ah = e->ah;
		wr.wr.ud.remote_qpn = peer->qp->qp_num;
		wr.wr.ud.remote_qkey = FUZZ_QKEY;
	} else if (op != IBV_WR_SEND && op != IBV_WR_SEND_WITH_IMM &&
		   op != IBV_WR_SEND_WITH_INV) {
		wr.wr.rdma.remote_addr = (uintptr_t)peer->buf + roff;
		wr.wr.rdma.rkey = peer->mr->rkey;
	}
	return ibv_post_send(e->qp, &wr, &bad);
}

/*
 * Take @n completions from @cq within @ms: how many were successful, or
 * -1 when fewer than @n came. Each receive completion lowers *recvs.
 */
static int ep_wait(struct ibv_cq *cq, int n, int ms, int *recvs,
		   struct ibv_wc *last)
{
	struct ibv_wc wc[16];
	int got = 0, ok = 0;
	long end = now_ms() + ms;

	while (got < n) {
		int k = ibv_poll_cq(cq, n - got < 16 ? n - got : 16, wc);

		if (k < 0)
			return -1;
		for (int i = 0; i < k; i++) {
			ok += wc[i].status == IBV_WC_SUCCESS;
			if (recvs && (wc[i].opcode & IBV_WC_RECV))
				(*recvs)--;
			if (last)
				*last = wc[i];
		}
		got += k;
		if (!k) {
			if (now_ms() > end)
				return -1;
			usleep(200);
		}
	}
	return ok;
}

/* Take whatever is on @cq now; receive completions lower *recvs. */
static void ep_drain(struct ibv_cq *cq, int *recvs)
{
	struct ibv_wc wc[16];
	int k;

	while ((k = ibv_poll_cq(cq, 16, wc)) > 0)
		for (int i = 0; i < k; i++)
			if (recvs && (wc[i].opcode & IBV_WC_RECV) &&
			    wc[i].status != IBV_WC_WR_FLUSH_ERR)
				(*recvs)--;
}

/*
 * A fresh RC pair between @ca and @cb (devices may be the same): a SEND,
 * a WRITE and a READ of 20000 bytes, every byte checked. 0 if all is well.
 */
static int verified_transfer(struct ibv_context *ca, int ga,
			     struct ibv_context *cb, int gb, uint64_t seed)
{
	struct ibv_pd *pa = ibv_alloc_pd(ca), *pb = ibv_alloc_pd(cb);
	struct ep a = { 0 }, b = { 0 };
	struct rng r;
	int ret = -1;
	const uint32_t len = 20000;

	rng_init(&r, seed, 99);
	if (!pa || !pb || ep_open(&a, ca, pa, ga, IBV_QPT_RC) ||
	    ep_open(&b, cb, pb, gb, IBV_QPT_RC) || ep_pair_connect(&a, &b, &r))
		goto out;
	fill_pattern(a.buf, len, seed);
	if (ep_post_recv(&b, 1, 0, len) ||
	    ep_post(&a, &b, IBV_WR_SEND, 2, 0, len, 0, 0) ||
	    ep_wait(a.scq, 1, 10000, NULL, NULL) != 1 ||
	    ep_wait(b.rcq, 1, 10000, &b.recvs, NULL) != 1 ||
	    memcmp(a.buf, b.buf, len))
		goto out;
	fill_pattern(a.buf + 32768, len, seed + 1);
	if (ep_post(&a, &b, IBV_WR_RDMA_WRITE, 3, 32768, len, 32768, 0) ||
	    ep_wait(a.scq, 1, 10000, NULL, NULL) != 1 ||
	    memcmp(a.buf + 32768, b.buf + 32768, len))
		goto out;
	fill_pattern(b.buf + 100, len, seed + 2);
	if (ep_post(&a, &b, IBV_WR_RDMA_READ, 4, 40000 & ~63u, len, 100, 0) ||
	    ep_wait(a.scq, 1, 10000, NULL, NULL) != 1 ||
	    memcmp(a.buf + (40000 & ~63u), b.buf + 100, len))
		goto out;
	ret = 0;
out:
	ep_close(&a);
	ep_close(&b);
	if (pa)
		ibv_dealloc_pd(pa);
	if (pb)
		ibv_dealloc_pd(pb);
	return ret;
}

/* ---- namespaces ------------------------------------------------------------ */

#define TAG	"fz"
#define NS_A	SIB_TOPO_NSA(TAG)
#define NS_B	SIB_TOPO_NSB(TAG)
#define NS_L	SIB_TOPO_NSA(TAG "L")
#define DEV_A	"sibfA"
#define DEV_B	"sibfB"
#define DEV_L	"sibfL"
#define IF_A	SIB_TOPO_IFA(TAG)
#define IF_B	SIB_TOPO_IFB(TAG)
#define IP_A	"198.18.0.1"
#define IP_B	"198.18.0.2"
#define ROCE_PORT 4791

/* DEV_A in NS_A, DEV_B in NS_B, a veth between them; DEV_L on NS_L's lo. */
static struct sib_topo wire_topo = {
	.kind = SIB_TOPO_VETH, .tag = TAG,
	.flags = SIB_TOPO_LO_UP | SIB_TOPO_NEIGH,
	.dev = { DEV_A, DEV_B },
	.ip4 = { IP_A, IP_B },
};

static struct sib_topo lo_topo = {
	.kind = SIB_TOPO_LO, .tag = TAG "L",
	.flags = SIB_TOPO_LO_NS | SIB_TOPO_BESIDE,
	.dev = { DEV_L },
};

static void wire_cleanup(void)
{
	sib_topo_down(&wire_topo);
	sib_topo_down(&lo_topo);
}

/* Enter namespace @ns; returns the old one's fd (for ns_leave), or -1. */
static int ns_enter(const char *ns)
{
	char path[128];
	int self = open("/proc/self/ns/net", O_RDONLY), fd;

	snprintf(path, sizeof(path), "/run/netns/%s", ns);
	fd = open(path, O_RDONLY);
	if (self < 0 || fd < 0 || setns(fd, CLONE_NEWNET)) {
		if (fd >= 0)
			close(fd);
		if (self >= 0)
			close(self);
		return -1;
	}
	close(fd);
	return self;
}

static void ns_leave(int self)
{
	if (self >= 0) {
		setns(self, CLONE_NEWNET);
		close(self);
	}
}

/* A packet socket bound to @ifname of @ns, for capture and injection. */
static int packet_socket(const char *ns, const char *ifname,
			 struct sockaddr_ll *sll, uint8_t mac[6])
{
	struct ifreq ifr = { 0 };
	int self = ns_enter(ns), fd, ifd;

	if (self < 0)
		return -1;
	fd = socket(AF_PACKET, SOCK_RAW | SOCK_CLOEXEC, htons(ETH_P_ALL));
	memset(sll, 0, sizeof(*sll));
	sll->sll_family = AF_PACKET;
	sll->sll_protocol = htons(ETH_P_ALL);
	sll->sll_ifindex = if_nametoindex(ifname);
	ifd = socket(AF_INET, SOCK_DGRAM, 0);
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", ifname);
	if (ifd >= 0 && !ioctl(ifd, SIOCGIFHWADDR, &ifr))
		memcpy(mac, ifr.ifr_hwaddr.sa_data, 6);
	if (ifd >= 0)
		close(ifd);
	ns_leave(self);
	if (fd >= 0 && bind(fd, (struct sockaddr *)sll, sizeof(*sll))) {
		close(fd);
		return -1;
	}
	return fd;
}

static int mac_of(const char *ns, const char *ifname, uint8_t mac[6])
{
	struct sockaddr_ll sll;
	int fd = packet_socket(ns, ifname, &sll, mac);

	if (fd < 0)
		return -1;
	close(fd);
	return 0;
}

/* sib_topo_up(), saying why it failed. */
static int topo_up(struct sib_topo *t)
{
	if (!sib_topo_up(t))
		return 0;
	fprintf(stderr, "# %s\n", t->err);
	return -1;
}

static int wire_setup(void)
{
	return topo_up(&wire_topo) || topo_up(&lo_topo) ? -1 : 0;
}

/* ---- RoCEv2 framing ------------------------------------------------------------ */

static uint32_t crc32_ieee(uint32_t crc, const void *buf, size_t len)
{
	static uint32_t tab[256];
	const uint8_t *p = buf;

	if (!tab[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;

			for (int k = 0; k < 8; k++)
				c = (c >> 1) ^ (0xedb88320 & -(c & 1));
			tab[i] = c;
		}
	while (len--)
		crc = tab[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}

static uint16_t ip_csum(const uint8_t *p, int len)
{
	uint32_t s = 0;

	for (int i = 0; i < len; i += 2)
		s += p[i] << 8 | p[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return ~s;
}

/*
 * The ICRC of a packet whose IPv4 header (no options) starts at @ip and
 * whose transport part, @tlen bytes, follows the UDP header: the CRC of
 * the masked LRH, IP, UDP and BTH, then of the rest (IBA A17.4.6).
 */
static uint32_t roce_icrc(const uint8_t *ip, int tlen)
{
	static const uint8_t lrh[8] = { 0xff, 0xff, 0xff, 0xff,
					0xff, 0xff, 0xff, 0xff };
	uint8_t h[40];
	uint32_t crc;
	int n = tlen < 12 ? tlen : 12;

	memcpy(h, ip, 28 + n);
	h[1] = 0xff;			/* TOS */
	h[8] = 0xff;			/* TTL */
	h[10] = h[11] = 0xff;		/* IP checksum */
	h[26] = h[27] = 0xff;		/* UDP checksum */
	if (n > 4)
		h[28 + 4] = 0xff;	/* BTH resv8a */
	crc = crc32_ieee(0xffffffff, lrh, 8);
	crc = crc32_ieee(crc, h, 28 + n);
	return ~crc32_ieee(crc, ip + 28 + n, tlen - n);
}

enum icrc_mode { ICRC_GOOD, ICRC_BAD, ICRC_NONE };

/*
 * Build at @f: [Ethernet,] IPv4 (with 4 bytes of options if @ipopt), UDP
 * to 4791, the transport part @t of @tlen bytes, its ICRC. Returns the
 * frame length.
 */
static int roce_frame(uint8_t *f, bool eth, const uint8_t *smac,
		      const uint8_t *dmac, struct in_addr sip,
		      struct in_addr dip, uint16_t sport, uint16_t ipid,
		      const uint8_t *t, int tlen, enum icrc_mode icrc,
		      bool ipopt)
{
	int ihl = ipopt ? 24 : 20, off = eth ? 14 : 0;
	int ulen = 8 + tlen + (icrc == ICRC_NONE ? 0 : 4);
	uint8_t *ip = f + off, *udp = ip + ihl;

	if (eth) {
		memcpy(f, dmac, 6);
		memcpy(f + 6, smac, 6);
		f[12] = 0x08;
		f[13] = 0x00;
	}
	memset(ip, 0, ihl);
	ip[0] = 0x40 | ihl / 4;
	ip[2] = (ihl + ulen) >> 8;
	ip[3] = (ihl + ulen) & 0xff;
	ip[4] = ipid >> 8;
	ip[5] = ipid & 0xff;
	ip[6] = 0x40;			/* DF */
	ip[8] = 64;
	ip[9] = IPPROTO_UDP;
	memcpy(ip + 12, &sip, 4);
	memcpy(ip + 16, &dip, 4);
	if (ipopt)
		ip[20] = ip[21] = ip[22] = ip[23] = 1;	/* NOPs */
	udp[0] = sport >> 8;
	udp[1] = sport & 0xff;
	udp[2] = ROCE_PORT >> 8;
	udp[3] = ROCE_PORT & 0xff;
	udp[4] = ulen >> 8;
	udp[5] = ulen & 0xff;
	udp[6] = udp[7] = 0;
	memcpy(udp + 8, t, tlen);
	if (icrc != ICRC_NONE) {
		uint32_t c = ipopt ? 0x12345678 : roce_icrc(ip, tlen);

		if (icrc == ICRC_BAD)
			c ^= 1u << (ipid & 31);
		udp[8 + tlen] = c;
		udp[9 + tlen] = c >> 8;
		udp[10 + tlen] = c >> 16;
		udp[11 + tlen] = c >> 24;
	}
	ip[10] = 0;
	ip[11] = 0;
	{
		uint16_t cs = ip_csum(ip, ihl);

		ip[10] = cs >> 8;
		ip[11] = cs & 0xff;
	}
	return off + ihl + ulen;
}

/* ---- opcodes ------------------------------------------------------------------- */

/* Extended headers of the low five opcode bits (RC/UC; UD adds DETH). */
#define H_RETH	1
#define H_AETH	2
#define H_ATM	4
#define H_ATMACK 8
#define H_IMM	16
#define H_IETH	32
#define H_RESP	64	/* a response: its PSN is the requester's */

static const uint8_t op_hdrs[32] = {
	[0x03] = H_IMM, [0x05] = H_IMM,
	[0x06] = H_RETH, [0x09] = H_IMM, [0x0a] = H_RETH,
	[0x0b] = H_RETH | H_IMM, [0x0c] = H_RETH,
	[0x0d] = H_AETH | H_RESP, [0x0e] = H_RESP, [0x0f] = H_AETH | H_RESP,
	[0x10] = H_AETH | H_RESP, [0x11] = H_AETH | H_RESP,
	[0x12] = H_AETH | H_ATMACK | H_RESP, [0x13] = H_ATM, [0x14] = H_ATM,
	[0x16] = H_IETH, [0x17] = H_IETH, [0x1d] = H_RETH,
};

/* The opcodes a complete corpus holds (CNP, 0x81, is made up). */
static const uint8_t corpus_want[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a,
	0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10, 0x11, 0x12, 0x13, 0x14, 0x16,
	0x17, 0x1d, 0x20, 0x21, 0x22, 0x23, 0x24, 0x25, 0x26, 0x27, 0x28, 0x29,
	0x2a, 0x2b, 0x64, 0x65,
};

static const char *op_name(uint8_t op)
{
	static const char *const n[32] = {
		"SEND_FIRST", "SEND_MIDDLE", "SEND_LAST", "SEND_LAST_IMM",
		"SEND_ONLY", "SEND_ONLY_IMM", "WRITE_FIRST", "WRITE_MIDDLE",
		"WRITE_LAST", "WRITE_LAST_IMM", "WRITE_ONLY", "WRITE_ONLY_IMM",
		"READ_REQ", "READ_RESP_FIRST", "READ_RESP_MIDDLE",
		"READ_RESP_LAST", "READ_RESP_ONLY", "ACK", "ATOMIC_ACK", "CAS",
		"FADD", "?", "SEND_LAST_INV", "SEND_ONLY_INV",
		[0x1d] = "ATOMIC_WRITE",
	};
	static char buf[8][32];
	static int k;
	char *b = buf[k++ & 7];
	const char *t = op >> 5 == 0 ? "RC" : op >> 5 == 1 ? "UC" :
			op >> 5 == 3 ? "UD" : op == 0x81 ? "CNP" : "??";

	if (op == 0x81)
		return "CNP";
	snprintf(b, 32, "%s_%s", t, n[op & 31] ? n[op & 31] : "?");
	return b;
}

/* ---- the corpus ---------------------------------------------------------------- */

#define CORPUS_PER_OP	8
#define TMAX		1400	/* transport bytes of a fuzzed packet */

struct cpkt {
	uint16_t len;
	uint8_t b[TMAX];
};

struct corpus {
	struct cpkt *p[256][CORPUS_PER_OP];
	int n[256];
	uint8_t ops[256];	/* opcodes present */
	int nops;
	long frames;		/* RoCEv2 frames captured */
	bool nak_seen, rnr_seen;
	pthread_t t;
	int fd;
	volatile bool stop;
};

static void corpus_add(struct corpus *c, const uint8_t *t, int len)
{
	uint8_t op = t[0];
	struct cpkt *k;

	if (len < 12 || len > TMAX)
		return;
	if (op == 0x11 && len >= 16) {
		c->nak_seen |= (t[12] & 0xe0) == 0x60;
		c->rnr_seen |= (t[12] & 0xe0) == 0x20;
	}
	/* Keep the first ones, and every NAK-like ACK. */
	if (c->n[op] >= CORPUS_PER_OP) {
		if (op != 0x11 || !(t[12] & 0xe0))
			return;
		c->n[op] = CORPUS_PER_OP - 1;
		free(c->p[op][c->n[op]]);
	}
	k = malloc(sizeof(*k));
	if (!k)
		return;
	k->len = len;
	memcpy(k->b, t, len);
	if (!c->n[op])
		c->ops[c->nops++] = op;
	c->p[op][c->n[op]++] = k;
}

static void *capture_thread(void *arg)
{
	struct corpus *c = arg;
	uint8_t f[9216];

	while (!c->stop) {
		ssize_t n = recv(c->fd, f, sizeof(f), 0);
		const uint8_t *ip = f + 14, *udp;
		int ihl;

		if (n < 14 + 20 + 8 + 12 + 4 || f[12] != 0x08 || f[13] != 0)
			continue;
		ihl = (ip[0] & 15) * 4;
		udp = ip + ihl;
		if (ip[9] != IPPROTO_UDP || (udp[2] << 8 | udp[3]) != ROCE_PORT)
			continue;
		c->frames++;
		corpus_add(c, udp + 8, (udp[4] << 8 | udp[5]) - 8 - 4);
	}
	return NULL;
}

static void ep_reset(struct ep *e)
{
	qp_modify_state(e->qp, IBV_QPS_RESET);
	ep_drain(e->scq, NULL);
	ep_drain(e->rcq, NULL);
	e->recvs = 0;
}

/*
 * Real traffic of every opcode between DEV_B (requester) and DEV_A,
 * captured on IF_B: RC, UC and UD messages of one and of several packets,
 * with immediate data and invalidation, READs, atomics, their ACKs,
 * an RNR NAK and sequence NAKs (packets lost by sibB's fault injection).
 */
static int corpus_capture(struct corpus *c, struct ibv_context *ca, int ga,
			  struct ibv_context *cb, int gb, uint64_t seed)
{
	static const struct { enum ibv_wr_opcode op; uint32_t len; } rc[] = {
		{ IBV_WR_SEND, 3000 }, { IBV_WR_SEND, 100 },
		{ IBV_WR_SEND_WITH_IMM, 3000 }, { IBV_WR_SEND_WITH_IMM, 100 },
		{ IBV_WR_RDMA_WRITE, 3000 }, { IBV_WR_RDMA_WRITE, 100 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 3000 },
		{ IBV_WR_RDMA_WRITE_WITH_IMM, 100 },
		{ IBV_WR_RDMA_READ, 3000 }, { IBV_WR_RDMA_READ, 100 },
		{ IBV_WR_ATOMIC_CMP_AND_SWP, 8 },
		{ IBV_WR_ATOMIC_FETCH_AND_ADD, 8 }, { IBV_WR_ATOMIC_WRITE, 8 },
	};
	struct ibv_pd *pa = ibv_alloc_pd(ca), *pb = ibv_alloc_pd(cb);
	struct ep a[3] = { 0 }, b[3] = { 0 };
	static const enum ibv_qp_type ty[3] = { IBV_QPT_RC, IBV_QPT_UC,
						IBV_QPT_UD };
	struct sockaddr_ll sll;
	uint8_t mac[6];
	struct rng r;
	int ret = -1, ok;

	rng_init(&r, seed, 77);
	c->fd = packet_socket(NS_B, IF_B, &sll, mac);
	if (c->fd < 0)
		return -1;
	{
		struct timeval tv = { .tv_usec = 100000 };

		setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	}
	if (pthread_create(&c->t, NULL, capture_thread, c)) {
		close(c->fd);
		return -1;
	}
	for (int i = 0; i < 3; i++)
		if (!pa || !pb || ep_open(&a[i], ca, pa, ga, ty[i]) ||
		    ep_open(&b[i], cb, pb, gb, ty[i]) ||
		    ep_pair_connect(&a[i], &b[i], &r))
			goto out;
	usleep(200000);
	/* RC: every request kind, one packet and several. */
	for (int i = 0; i < 8; i++)
		ep_post_recv(&a[0], 100 + i, i * 4096, 4096);
	for (unsigned int i = 0; i < sizeof(rc) / sizeof(rc[0]); i++)
		ep_post(&b[0], &a[0], rc[i].op, i, 0, rc[i].len, 8192, 7);
	ok = ep_wait(b[0].scq, 13, 20000, NULL, NULL);
	say("corpus: RC requests %d/13 completed\n", ok);
	/* An RNR NAK: a SEND before its receive. */
	ep_drain(a[0].rcq, NULL);
	ep_reset(&a[0]);
	ep_reset(&b[0]);
	ep_pair_connect(&a[0], &b[0], &r);
	ep_post(&b[0], &a[0], IBV_WR_SEND, 20, 0, 100, 0, 0);
	usleep(300000);
	ep_post_recv(&a[0], 21, 0, 4096);
	ep_wait(b[0].scq, 1, 10000, NULL, NULL);
	/* Sequence NAKs: sibB loses some of the SENDs' packets. */
	fault_knob_set(DEV_B, "drop", 250000);
	fault_knob_set(DEV_B, "classes", 1);
	fault_knob_set(DEV_B, "dir", 1);
	fault_knob_set(DEV_B, "seed", seed & 0xffff);
	fault_knob_set(DEV_B, "active", 1);
	for (int i = 0; i < 4; i++) {
		ep_post_recv(&a[0], 30 + i, i * 8192, 8192);
		ep_post(&b[0], &a[0], IBV_WR_SEND, 30 + i, 0, 8000, 0, 0);
	}
	ep_wait(b[0].scq, 4, 20000, NULL, NULL);
	fault_knob_set(DEV_B, "active", 0);
	/* SEND with invalidate of an rkey that cannot be: NAKed, errors. */
	for (int i = 0; i < 2; i++) {
		struct ibv_wc wc = { 0 };

		ep_reset(&a[0]);
		ep_reset(&b[0]);
		ep_pair_connect(&a[0], &b[0], &r);
		ep_post_recv(&a[0], 40, 0, 4096);
		ok = ep_post(&b[0], &a[0], IBV_WR_SEND_WITH_INV, 41, 0,
			     i ? 100 : 3000, 0, a[0].mr->rkey);
		if (ok || ep_wait(b[0].scq, 1, 5000, NULL, &wc) < 0)
			say("corpus: SEND_WITH_INV of %d bytes: post %d, %s\n",
			    i ? 100 : 3000, ok, wcs(wc.status));
	}
	/* UC: SENDs and WRITEs, one packet and several, with immediate. */
	for (int i = 0; i < 8; i++)
		ep_post_recv(&a[1], 200 + i, i * 4096, 4096);
	for (int i = 0; i < 8; i++) {
		static const enum ibv_wr_opcode uc[4] = {
			IBV_WR_SEND, IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_WRITE,
			IBV_WR_RDMA_WRITE_WITH_IMM,
		};

		ep_post(&b[1], &a[1], uc[i / 2], 200 + i, 0,
			i & 1 ? 100 : 3000, 8192, 9);
	}
	ep_wait(b[1].scq, 8, 10000, NULL, NULL);
	/* UD: SEND and SEND with immediate. */
	for (int i = 0; i < 4; i++)
		ep_post_recv(&a[2], 300 + i, i * 4096, 4096);
	ep_post(&b[2], &a[2], IBV_WR_SEND, 300, 0, 100, 0, 0);
	ep_post(&b[2], &a[2], IBV_WR_SEND_WITH_IMM, 301, 0, 200, 0, 5);
	ep_wait(b[2].scq, 2, 10000, NULL, NULL);
	usleep(300000);
	ret = 0;
out:
	c->stop = true;
	pthread_join(c->t, NULL);
	close(c->fd);
	for (int i = 0; i < 3; i++) {
		ep_close(&a[i]);
		ep_close(&b[i]);
	}
	if (pa)
		ibv_dealloc_pd(pa);
	if (pb)
		ibv_dealloc_pd(pb);
	/* A CNP, which sib never sends: made up from its definition. */
	{
		uint8_t cnp[28] = { 0x81, 0, 0xff, 0xff };

		corpus_add(c, cnp, sizeof(cnp));
	}
	return ret;
}

static void corpus_report(struct corpus *c)
{
	char line[2048];
	int n = 0;

	n += snprintf(line + n, sizeof(line) - n, "%d opcodes from %ld frames:",
		      c->nops, c->frames);
	for (int i = 0; i < c->nops; i++)
		n += snprintf(line + n, sizeof(line) - n, " %s",
			      op_name(c->ops[i]));
	say("corpus: %s%s%s\n", line, c->nak_seen ? " NAK" : "",
	    c->rnr_seen ? " RNR_NAK" : "");
	for (unsigned int i = 0; i < sizeof(corpus_want); i++)
		if (!c->n[corpus_want[i]])
			say("corpus: no %s captured\n", op_name(corpus_want[i]));
	/*
	 * The corpus traffic sends no one-packet message of a full path MTU
	 * (1024) or more: such a packet is the first of a longer message
	 * under a wrong opcode.
	 */
	for (int i = 0; i < c->nops; i++) {
		uint8_t op = c->ops[i], h = op_hdrs[op & 31];
		static const uint8_t only[] = { 0x04, 0x05, 0x0a, 0x0b, 0x10,
						0x17 };
		int hl = 12 + (h & H_RETH ? 16 : 0) + (h & H_AETH ? 4 : 0) +
			 (h & (H_IMM | H_IETH) ? 4 : 0) +
			 (op >> 5 == 3 ? 8 : 0);

		if (op >> 5 > 3 || !memchr(only, op & 31, sizeof(only)))
			continue;
		for (int j = 0; j < c->n[op]; j++)
			if (c->p[op][j]->len - hl >= 1024)
				say("corpus: WARNING: sib sent a %s with %d bytes "
				    "of payload, the first packet of a longer "
				    "message\n", op_name(op), c->p[op][j]->len - hl);
	}
	if (!getenv("SIB_FUZZ_DEBUG"))
		return;
	for (int i = 0; i < c->nops; i++) {
		uint8_t op = c->ops[i];

		n = 0;
		for (int j = 0; j < c->n[op]; j++)
			n += snprintf(line + n, sizeof(line) - n, " %u",
				      c->p[op][j]->len);
		say("corpus: %s, bytes:%s\n", op_name(op), line);
	}
}

static void corpus_free(struct corpus *c)
{
	for (int i = 0; i < 256; i++)
		for (int j = 0; j < c->n[i]; j++)
			free(c->p[i][j]);
	memset(c, 0, sizeof(*c));
}

/* ---- the wire fuzzer ---------------------------------------------------------- */

/* What the fuzzer knows of a live target QP (published by its traffic). */
struct tinfo {
	uint32_t qpn, peer_qpn;
	uint32_t rq_psn, sq_psn;	/* estimates */
	uint32_t rkey;
	uint64_t va;
};

enum { T_RC, T_UC, T_UD, NT };

/* One path: a target device (fuzzed) and the device of the QPs' peers. */
struct wpath {
	const char *name;
	struct ibv_context *tctx, *pctx;
	int tgid, pgid;
	struct ibv_pd *tpd, *ppd, *bpd[2];
	struct ep by[2];		/* bystander RC pair: strict traffic */
	struct ep tg[NT][2];		/* targets [0] and their peers [1] */
	pthread_mutex_t mu;
	struct tinfo ti[NT];		/* under mu */
	uint32_t avoid[2];		/* the bystanders' QPNs */
	pthread_t t;
	volatile bool stop;
	struct rng r;
	long by_rounds, by_bytes, tg_rounds, tg_ok, rebuilds;
	bool by_failed;
	bool no_targets;		/* bystanders only (ring, uverbs) */
	/* injection */
	int fd;
	bool eth;
	uint8_t smac[6], dmac[6];
	struct in_addr sip, dip;
	struct sockaddr_ll sll;
	struct sockaddr_in sin;
	long sent, send_fail;
	long by_op[256];		/* packets sent by opcode */
};

static const enum ibv_qp_type tq[NT] = { IBV_QPT_RC, IBV_QPT_UC,
					 IBV_QPT_UD };

static void publish(struct wpath *p, int t)
{
	struct ep *e = &p->tg[t][0];
	struct tinfo ti = { 0 };

	if (e->qp) {
		ti.qpn = e->qp->qp_num;
		ti.peer_qpn = p->tg[t][1].qp ? p->tg[t][1].qp->qp_num : 0;
		ti.rq_psn = e->rq_psn;
		ti.sq_psn = e->sq_psn;
		ti.rkey = e->mr->rkey;
		ti.va = (uintptr_t)e->buf;
	}
	pthread_mutex_lock(&p->mu);
	p->ti[t] = ti;
	pthread_mutex_unlock(&p->mu);
}

static int target_build(struct wpath *p, int t)
{
	ep_close(&p->tg[t][0]);
	ep_close(&p->tg[t][1]);
	if (ep_open(&p->tg[t][0], p->tctx, p->tpd, p->tgid, tq[t]) ||
	    ep_open(&p->tg[t][1], p->pctx, p->ppd, p->pgid, tq[t]) ||
	    ep_pair_connect(&p->tg[t][0], &p->tg[t][1], &p->r))
		return -1;
	publish(p, t);
	return 0;
}

/*
 * One round of real traffic at target @t, results not checked (the
 * fuzzer may have written, consumed or broken anything): the peer sends
 * and writes, an RC target also reads and adds. A QP that ended in error
 * or stopped completing is rebuilt (new QP numbers).
 */
static void target_round(struct wpath *p, int t)
{
	struct ep *e = &p->tg[t][0], *q = &p->tg[t][1];
	int want = 0, ok = 0, n;
	bool bad = false;

	if (!e->qp || !q->qp) {
		bad = true;
		goto rebuild;
	}
	ep_drain(e->rcq, &e->recvs);
	while (e->recvs < 16)
		if (ep_post_recv(e, e->recvs, (e->recvs & 15) * 2048, 2048))
			break;
	want += !ep_post(q, e, IBV_WR_SEND, 1, 0, 200, 0, 0);
	if (t != T_UD)
		want += !ep_post(q, e, IBV_WR_RDMA_WRITE, 2, 0, 2000,
				 40000, 0);
	n = ep_wait(q->scq, want, 2000, NULL, NULL);
	bad |= n != want;
	ok += n > 0 ? n : 0;
	e->rq_psn = (e->rq_psn + 3) & 0xffffff;
	q->sq_psn = (q->sq_psn + 3) & 0xffffff;
	if (t == T_RC) {
		want = !ep_post(e, q, IBV_WR_RDMA_READ, 3, 32768, 2000, 100, 0);
		want += !ep_post(e, q, IBV_WR_ATOMIC_FETCH_AND_ADD, 4, 36864,
				 8, 64, 0);
		n = ep_wait(e->scq, want, 2000, NULL, NULL);
		bad |= n != want;
		ok += n > 0 ? n : 0;
		e->sq_psn = (e->sq_psn + 3) & 0xffffff;
	} else {
		ep_drain(e->scq, NULL);
	}
	ep_drain(e->rcq, &e->recvs);
	ep_drain(q->rcq, &q->recvs);
	bad |= qp_state(e->qp) != IBV_QPS_RTS || qp_state(q->qp) != IBV_QPS_RTS;
	p->tg_rounds++;
	p->tg_ok += ok;
rebuild:
	if (bad) {
		p->rebuilds++;
		if (target_build(p, t))
			fail("%s: cannot rebuild target %d", p->name, t);
	} else {
		publish(p, t);
	}
}

/*
 * One strict round on the bystanders: a SEND, WRITE or READ of a random
 * size, each byte checked. The fuzzer never aims at them; they share the
 * devices, the receive path and the engines' workers with the targets.
 */
static void bystander_round(struct wpath *p)
{
	struct ep *a = &p->by[0], *b = &p->by[1];
	uint32_t len = 1 + rn(&p->r, 16384), roff = rn(&p->r, 16384);
	int op = rn(&p->r, 3), seed = p->by_rounds;
	struct ibv_wc wc = { 0 };
	const char *what = op == 0 ? "SEND" : op == 1 ? "WRITE" : "READ";

	if (p->by_failed)
		return;
	fill_pattern(b->buf, len, seed);
	fill_pattern(a->buf + 32768 + roff, len, seed + 7);
	if (op == 0) {
		if (ep_post_recv(a, seed, roff, 16384) ||
		    ep_post(b, a, IBV_WR_SEND, seed, 0, len, 0, 0))
			goto bad;
	} else if (op == 1) {
		if (ep_post(b, a, IBV_WR_RDMA_WRITE, seed, 0, len, roff, 0))
			goto bad;
	} else {
		if (ep_post(b, a, IBV_WR_RDMA_READ, seed, 20000, len,
			    32768 + roff, 0))
			goto bad;
	}
	if (ep_wait(b->scq, 1, 30000, NULL, &wc) != 1)
		goto bad;
	if (op == 0 && (ep_wait(a->rcq, 1, 30000, &a->recvs, &wc) != 1 ||
			wc.byte_len != len))
		goto bad;
	if ((op < 2 && memcmp(a->buf + roff, b->buf, len)) ||
	    (op == 2 && memcmp(b->buf + 20000, a->buf + 32768 + roff, len)))
		goto bad;
	p->by_rounds++;
	p->by_bytes += len;
	return;
bad:
	p->by_failed = true;
	fail("%s: bystander %s of %u bytes (round %ld) failed: %s, QPs %s/%s",
	     p->name, what, len, p->by_rounds, wcs(wc.status),
	     qps_str(qp_state(a->qp)), qps_str(qp_state(b->qp)));
}

static void *traffic_thread(void *arg)
{
	struct wpath *p = arg;

	while (!p->stop) {
		bystander_round(p);
		if (p->no_targets)
			usleep(2000);	/* leave the fuzzers the CPUs */
		for (int t = 0; t < NT && !p->stop && !p->no_targets; t++)
			target_round(p, t);
	}
	return NULL;
}

static int wpath_open(struct wpath *p, const char *name, const char *tdev,
		      const char *taddr, const char *pdev, const char *paddr,
		      uint64_t seed)
{
	memset(p, 0, sizeof(*p));
	p->name = name;
	pthread_mutex_init(&p->mu, NULL);
	rng_init(&p->r, seed, name[0]);
	p->tctx = pair_open_dev(tdev);
	p->pctx = strcmp(tdev, pdev) ? pair_open_dev(pdev) : p->tctx;
	if (!p->tctx || !p->pctx)
		return -1;
	p->tgid = wait_gid_index(tdev, taddr);
	p->pgid = wait_gid_index(pdev, paddr);
	p->tpd = ibv_alloc_pd(p->tctx);
	p->ppd = ibv_alloc_pd(p->pctx);
	p->bpd[0] = ibv_alloc_pd(p->tctx);
	p->bpd[1] = ibv_alloc_pd(p->pctx);
	if (p->tgid < 0 || p->pgid < 0 || !p->tpd || !p->ppd || !p->bpd[0] ||
	    !p->bpd[1])
		return -1;
	if (ep_open(&p->by[0], p->tctx, p->bpd[0], p->tgid, IBV_QPT_RC) ||
	    ep_open(&p->by[1], p->pctx, p->bpd[1], p->pgid, IBV_QPT_RC) ||
	    ep_pair_connect(&p->by[0], &p->by[1], &p->r))
		return -1;
	p->avoid[0] = p->by[0].qp->qp_num;
	p->avoid[1] = p->by[1].qp->qp_num;
	for (int t = 0; t < NT; t++)
		if (target_build(p, t))
			return -1;
	return 0;
}

static void wpath_close(struct wpath *p)
{
	for (int t = 0; t < NT; t++) {
		ep_close(&p->tg[t][0]);
		ep_close(&p->tg[t][1]);
	}
	ep_close(&p->by[0]);
	ep_close(&p->by[1]);
	for (int i = 0; i < 2; i++)
		if (p->bpd[i])
			ibv_dealloc_pd(p->bpd[i]);
	if (p->tpd)
		ibv_dealloc_pd(p->tpd);
	if (p->ppd)
		ibv_dealloc_pd(p->ppd);
	if (p->pctx && p->pctx != p->tctx)
		ibv_close_device(p->pctx);
	if (p->tctx)
		ibv_close_device(p->tctx);
	if (p->fd > 0)
		close(p->fd);
	p->tctx = p->pctx = NULL;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = v >> 24;
	p[1] = v >> 16;
	p[2] = v >> 8;
	p[3] = v;
}

static void put64(uint8_t *p, uint64_t v)
{
	put32(p, v >> 32);
	put32(p + 4, v);
}

/* An rkey: the target's, a neighbour of it, or anything. */
static uint32_t fz_rkey(struct rng *r, const struct tinfo *ti)
{
	int x = rn(r, 10);

	if (x < 6)
		return ti->rkey;
	if (x < 7)
		return ti->rkey ^ (1u << rn(r, 32));
	if (x < 8)
		return (ti->rkey & ~0xffu) | rn(r, 256);
	return edge32(r);
}

/* A virtual address: inside the target's buffer, near its ends, or not. */
static uint64_t fz_va(struct rng *r, const struct tinfo *ti, bool align8)
{
	uint64_t va;
	int x = rn(r, 10);

	if (x < 6)
		va = ti->va + rn(r, EP_BUF);
	else if (x < 7)
		va = ti->va + EP_BUF - rn(r, 64);
	else if (x < 8)
		va = ti->va - rn(r, 64);
	else
		va = x == 8 ? rnd(r) : ~0ull - rn(r, 4096);
	return align8 && pct(r, 80) ? va & ~7ull : va;
}

/*
 * Make one hostile packet's transport part at @t from the corpus, aimed
 * at @tis; returns its length, *icrc and *ipopt say how to frame it.
 */
static int mutate(struct wpath *p, struct corpus *c, struct rng *r,
		  const struct tinfo *tis, uint8_t *t, enum icrc_mode *icrc,
		  bool *ipopt)
{
	const struct tinfo *ti;
	uint32_t qpn, psn, base;
	uint8_t op, h;
	int len, x, off;

	if (pct(r, 3) || !c->nops) {
		len = 1 + rn(r, 64);
		for (int i = 0; i < len; i++)
			t[i] = rnd(r);
	} else {
		uint8_t o = c->ops[rn(r, c->nops)];
		struct cpkt *k = c->p[o][rn(r, c->n[o])];

		len = k->len;
		memcpy(t, k->b, len);
	}
	if (len < 12) {
		*icrc = ICRC_GOOD;
		*ipopt = false;
		return len;
	}
	op = t[0];
	/* Where it goes. */
	x = rn(r, 100);
	ti = &tis[op >> 5 == 1 ? T_UC : op >> 5 == 3 ? T_UD :
		  op >> 5 == 0 ? T_RC : rn(r, NT)];
	if (x >= 65 && x < 75)
		ti = &tis[rn(r, NT)];
	qpn = ti->qpn;
	if (x >= 75 && x < 82)
		qpn = rnd(r) & 0xffffff;
	else if (x >= 82 && x < 86)
		qpn = 1;
	else if (x >= 86 && x < 89)
		qpn = 0xffffff;
	else if (x >= 89 && x < 95)
		qpn = (qpn + rn(r, 9) - 4) & 0xffffff;
	else if (x >= 95)
		qpn = rn(r, 3) ? 0 : ti->peer_qpn;
	/* Valid PSNs, nearly valid ones, any. */
	h = op >> 5 <= 1 ? op_hdrs[op & 31] : 0;
	base = h & H_RESP ? ti->sq_psn : ti->rq_psn;
	x = rn(r, 100);
	psn = x < 20 ? base : x < 60 ? base + rn(r, 17) - 8 : rnd(r);
	if (pct(r, 3))
		psn = base + 0x800000 + rn(r, 5) - 2;	/* the other half */
	t[5] = qpn >> 16;
	t[6] = qpn >> 8;
	t[7] = qpn;
	t[9] = psn >> 16;
	t[10] = psn >> 8;
	t[11] = psn;
	if (pct(r, 20))
		t[8] ^= 0x80;			/* AckReq */
	/* Its extended headers, aimed as well. */
	off = 12;
	if (op >> 5 == 3 && len >= off + 8) {	/* DETH */
		x = rn(r, 10);
		put32(t + off, x < 6 ? FUZZ_QKEY : x < 7 ? 0x80010000 :
			       edge32(r));
		put32(t + off + 4, pct(r, 50) ? ti->peer_qpn : rnd(r));
		off += 8;
	}
	if ((h & H_RETH) && len >= off + 16) {
		uint32_t l;

		x = rn(r, 10);
		l = x < 5 ? rn(r, 3000) : x < 7 ? rn(r, EP_BUF + 2) :
		    edge32(r);
		put64(t + off, fz_va(r, ti, false));
		put32(t + off + 8, fz_rkey(r, ti));
		put32(t + off + 12, l);
		off += 16;
	}
	if ((h & H_ATM) && len >= off + 28) {
		put64(t + off, fz_va(r, ti, true));
		put32(t + off + 8, fz_rkey(r, ti));
		put64(t + off + 12, rnd(r));
		put64(t + off + 20, pct(r, 50) ? 0 : rnd(r));
		off += 28;
	}
	if ((h & H_AETH) && len >= off + 4) {
		static const uint8_t syn[] = { 0x1f, 0x00, 0x05, 0x20, 0x21,
					       0x3f, 0x60, 0x61, 0x62, 0x63,
					       0x64, 0x65, 0x7f, 0x80, 0xff };

		t[off] = pct(r, 80) ? syn[rn(r, sizeof(syn))] : rnd(r);
		if (pct(r, 50)) {
			uint32_t msn = rnd(r);

			t[off + 1] = msn >> 16;
			t[off + 2] = msn >> 8;
			t[off + 3] = msn;
		}
		off += 4;
	}
	if ((h & H_ATMACK) && len >= off + 8)
		put64(t + off, rnd(r));
	if ((h & (H_IMM | H_IETH)) && len >= off + 4)
		put32(t + off, (h & H_IETH) && pct(r, 50) ? fz_rkey(r, ti) :
			       (uint32_t)rnd(r));
	/* And then damage, maybe. */
	for (int m = pct(r, 30) ? 0 : 1 + rn(r, 3); m > 0; m--) {
		switch (rn(r, 16)) {
		case 0:
			t[0] = rnd(r);
			break;
		case 1:
			t[0] ^= 1u << rn(r, 8);
			break;
		case 2:
			t[1] = rnd(r);		/* SE, M, pad, TVer */
			break;
		case 3:
			t[1] = (t[1] & ~0x30) | rn(r, 4) << 4;
			break;
		case 4:
			t[1] = (t[1] & 0xf0) | (1 + rn(r, 15));
			break;
		case 5:
			x = rn(r, 3);
			t[2] = x == 0 ? 0x7f : x == 1 ? 0 : rnd(r);
			t[3] = x == 0 ? 0xff : x == 1 ? 0 : rnd(r);
			break;
		case 6:
			t[4] = rnd(r);		/* F, B, resv */
			break;
		case 7:
			t[8] = rnd(r);		/* AckReq, resv7 */
			break;
		case 8:
			t[rn(r, len)] = rnd(r);
			break;
		case 9:
			x = rn(r, len < 48 ? len : 48);
			t[x] ^= 1u << rn(r, 8);
			break;
		case 10:
			len = 1 + rn(r, len);	/* truncated */
			break;
		case 11:
		case 12: {
			/* Longer: anything, or around the path MTU. */
			int nl = m & 1 ? 12 + rn(r, TMAX - 12) :
					 1024 + rn(r, 48);

			for (int i = len; i < nl; i++)
				t[i] = rnd(r);
			len = nl;
			break;
		}
		case 13:
			t[0] = (t[0] & 31) | (uint8_t[]){ 0, 0x20, 0x60,
							  0x80 }[rn(r, 4)];
			break;
		case 14:
			put32(t + 8, rnd(r));
			break;
		default:
			if (len >= 28)
				put32(t + 24, edge32(r));
			break;
		}
	}
	/* Never at the bystanders: their traffic must stay intact. */
	if (len >= 8) {
		qpn = t[5] << 16 | t[6] << 8 | t[7];
		if (qpn == p->avoid[0] || qpn == p->avoid[1])
			t[5] = 0xee;
	}
	x = rn(r, 100);
	*icrc = x < 88 ? ICRC_GOOD : x < 95 ? ICRC_BAD : ICRC_NONE;
	*ipopt = pct(r, 2);
	return len;
}

#define BATCH	32

/* Send @n hostile packets on path @p; returns how many went out. */
static long wire_blast(struct wpath *p, struct corpus *c, struct rng *r,
		       long n)
{
	static uint8_t fr[BATCH][TMAX + 64];
	uint8_t t[TMAX + 64];
	struct mmsghdr mm[BATCH];
	struct iovec iov[BATCH];
	struct tinfo tis[NT];
	long done = 0, last = 0;
	double t0 = now_s();

	while (done < n) {
		int k = n - done < BATCH ? n - done : BATCH, s;

		if (!(done & 255)) {
			pthread_mutex_lock(&p->mu);
			memcpy(tis, p->ti, sizeof(tis));
			pthread_mutex_unlock(&p->mu);
		}
		memset(mm, 0, sizeof(mm));
		for (int i = 0; i < k; i++) {
			enum icrc_mode icrc;
			bool ipopt;
			int len = mutate(p, c, r, tis, t, &icrc, &ipopt);

			p->by_op[t[0]]++;
			iov[i].iov_base = fr[i];
			iov[i].iov_len = roce_frame(fr[i], p->eth, p->smac,
						    p->dmac, p->sip, p->dip,
						    0x8000 | (rnd(r) & 0x3fff),
						    1 + rn(r, 65535), t, len,
						    icrc, ipopt);
			mm[i].msg_hdr.msg_iov = &iov[i];
			mm[i].msg_hdr.msg_iovlen = 1;
			if (p->eth) {
				mm[i].msg_hdr.msg_name = &p->sll;
				mm[i].msg_hdr.msg_namelen = sizeof(p->sll);
			} else {
				mm[i].msg_hdr.msg_name = &p->sin;
				mm[i].msg_hdr.msg_namelen = sizeof(p->sin);
			}
		}
		s = sendmmsg(p->fd, mm, k, 0);
		if (s < 0) {
			if (errno != ENOBUFS && errno != EAGAIN) {
				fail("%s: sendmmsg: %s", p->name,
				     strerror(errno));
				break;
			}
			s = 0;
			usleep(1000);
		}
		p->send_fail += k - s;
		done += k;
		p->sent += s;
		if (done - last >= 100000) {
			last = done;
			say("%s: %ld packets, %.0f/s, traffic %ld bystander "
			    "rounds, %ld target rounds, %ld rebuilds\n",
			    p->name, done, done / (now_s() - t0), p->by_rounds,
			    p->tg_rounds, p->rebuilds);
		}
		if (fuzz_failed && p->by_failed)
			break;
	}
	return p->sent;
}

/* /proc/net/softnet_stat's dropped column, summed over the CPUs. */
static long long softnet_drops(void)
{
	FILE *f = fopen("/proc/net/softnet_stat", "r");
	unsigned int a, b;
	long long sum = 0;

	if (!f)
		return -1;
	while (fscanf(f, "%x %x%*[^\n]", &a, &b) == 2)
		sum += b;
	fclose(f);
	return sum;
}

/* Quiet the path's QPs (no more packets) before the counters are read. */
static void wpath_quiesce(struct wpath *p)
{
	for (int t = 0; t < NT; t++)
		for (int i = 0; i < 2; i++)
			if (p->tg[t][i].qp)
				qp_modify_state(p->tg[t][i].qp, IBV_QPS_ERR);
	for (int i = 0; i < 2; i++)
		qp_modify_state(p->by[i].qp, IBV_QPS_ERR);
	usleep(300000);
}

/*
 * Fuzz one path: the veth (frames from IF_B in NS_B to sibfA, whose
 * peers are on sibfB) or lo (raw IPv4 to 127.0.0.1 in NS_L, sibfL, peers
 * on the same device). Then check the books: every packet that reached
 * the target device was queued or counted as a drop.
 */
static int wire_path(struct corpus *c, bool veth, uint64_t seed, long n)
{
	struct cnts t0, t1, p0, p1;
	long long sd0, sd1;
	struct wpath *p = calloc(1, sizeof(*p));
	const char *tdev = veth ? DEV_A : DEV_L, *pdev = veth ? DEV_B : DEV_L;
	struct rng r;
	double ts;
	int ret = 0;

	if (!p)
		return -1;
	rng_init(&r, seed, veth ? 1 : 2);
	if (wpath_open(p, veth ? "veth" : "lo", tdev,
		       veth ? IP_A : "127.0.0.1", pdev,
		       veth ? IP_B : "127.0.0.1", seed)) {
		fail("%s: cannot set up the QPs", veth ? "veth" : "lo");
		wpath_close(p);
		free(p);
		return -1;
	}
	if (veth) {
		p->eth = true;
		p->fd = packet_socket(NS_B, IF_B, &p->sll, p->smac);
		mac_of(NS_A, IF_A, p->dmac);
		memcpy(p->sll.sll_addr, p->dmac, 6);
		p->sll.sll_halen = 6;
		inet_pton(AF_INET, IP_B, &p->sip);
		inet_pton(AF_INET, IP_A, &p->dip);
	} else {
		int self = ns_enter(NS_L);

		p->fd = socket(AF_INET, SOCK_RAW | SOCK_CLOEXEC, IPPROTO_RAW);
		ns_leave(self);
		inet_pton(AF_INET, "127.0.0.1", &p->sip);
		p->dip = p->sip;
		p->sin.sin_family = AF_INET;
		p->sin.sin_addr = p->dip;
	}
	if (p->fd < 0) {
		fail("%s: no injection socket: %s", p->name, strerror(errno));
		wpath_close(p);
		free(p);
		return -1;
	}
	cnt_read(tdev, &t0);
	if (veth)
		cnt_read(pdev, &p0);
	sd0 = softnet_drops();
	ts = now_s();
	pthread_create(&p->t, NULL, traffic_thread, p);
	wire_blast(p, c, &r, n);
	p->stop = true;
	pthread_join(p->t, NULL);
	ts = now_s() - ts;
	wpath_quiesce(p);
	cnt_read(tdev, &t1);
	if (veth)
		cnt_read(pdev, &p1);
	sd1 = softnet_drops();
	say("%s: %ld packets sent (%ld refused by the socket) in %.1f s, "
	    "%.0f/s\n", p->name, p->sent, p->send_fail, ts, p->sent / ts);
	say("%s: bystander %ld rounds, %ld bytes verified; targets %ld "
	    "rounds, %ld completions ok, %ld rebuilt\n", p->name,
	    p->by_rounds, p->by_bytes, p->tg_rounds, p->tg_ok, p->rebuilds);
	cnt_report(tdev, &t0, &t1);
	if (veth) {
		long long in = p->sent + (p1.v[C_SENT] - p0.v[C_SENT]) -
			       (p1.v[C_SENDERR] - p0.v[C_SENDERR]);
		long long got = rx_sum(&t1) - rx_sum(&t0);
		long long back = (t1.v[C_SENT] - t0.v[C_SENT]) -
				 (t1.v[C_SENDERR] - t0.v[C_SENDERR]);
		long long pgot = rx_sum(&p1) - rx_sum(&p0);

		cnt_report(pdev, &p0, &p1);
		say("veth: %s received %lld, took or counted %lld (%+lld); "
		    "%s received %lld, took or counted %lld (%+lld); "
		    "softnet drops %+lld\n", tdev, in, got, got - in, pdev,
		    back, pgot, pgot - back, sd1 - sd0);
		if (got != in || pgot != back)
			fail("veth: packets neither queued nor counted: %s %lld, "
			     "%s %lld (softnet drops %+lld)", tdev, in - got,
			     pdev, back - pgot, sd1 - sd0);
	} else {
		/* The device's own packets count as sent and received. */
		long long in = p->sent + (t1.v[C_SENT] - t0.v[C_SENT]) -
			       (t1.v[C_SENDERR] - t0.v[C_SENDERR]);
		long long got = rx_sum(&t1) - rx_sum(&t0);

		say("lo: %s received %lld (%ld injected), took or counted "
		    "%lld (%+lld)\n", tdev, in, p->sent, got, got - in);
		if (got != in)
			fail("lo: %lld packets neither queued nor counted",
			     in - got);
	}
	if (p->by_rounds == 0)
		fail("%s: no bystander traffic completed", p->name);
	if (!p->by_failed && verified_transfer(p->tctx, p->tgid, p->pctx,
					       p->pgid, seed))
		fail("%s: the final verified transfer on a fresh pair failed",
		     p->name);
	ret = fuzz_failed ? -1 : 0;
	wpath_close(p);
	free(p);
	return ret;
}

static int run_wire(const struct fopts *o)
{
	long n = o->count < 0 ? 1000000 : o->count;
	int paths = o->paths ? o->paths : 3, np = (paths & 1) + !!(paths & 2);
	struct corpus *c = calloc(1, sizeof(*c));
	struct ibv_context *ca = NULL, *cb = NULL;
	double t0 = now_s();
	int ret = -1;

	say("wire: seed %llu, %ld packets over %s\n",
	    (unsigned long long)o->seed, n,
	    paths == 3 ? "veth and lo" : paths == 1 ? "veth" : "lo");
	if (!c || wire_setup()) {
		fail("wire: setup failed");
		goto out;
	}
	ca = pair_open_dev(DEV_A);
	cb = pair_open_dev(DEV_B);
	if (!ca || !cb ||
	    corpus_capture(c, ca, wire_topo.gid[0], cb, wire_topo.gid[1],
			   o->seed)) {
		fail("wire: corpus capture failed");
		goto out;
	}
	ibv_close_device(ca);
	ibv_close_device(cb);
	ca = cb = NULL;
	corpus_report(c);
	if (c->nops < 20)
		fail("wire: only %d opcodes captured", c->nops);
	/* The capture's NAKs came from fault injection: all off now. */
	fault_knob_set(DEV_B, "active", 0);
	if (!fuzz_failed && (paths & 1))
		wire_path(c, true, o->seed, n / np);
	if (!fuzz_failed && (paths & 2))
		wire_path(c, false, o->seed, n - (paths & 1) * (n / np));
	ret = fuzz_failed ? -1 : 0;
	say("wire: %s in %.1f s\n", ret ? "FAILED" : "done", now_s() - t0);
out:
	if (ca)
		ibv_close_device(ca);
	if (cb)
		ibv_close_device(cb);
	if (c)
		corpus_free(c);
	free(c);
	wire_cleanup();
	return ret;
}

/* ---- the ring fuzzer ---------------------------------------------------------- */

#define DBG_SIB	"/sys/kernel/debug/sib"

/* A fuzzed QP (e[0]) and its peer (e[1]), both on sib0. */
struct victim {
	pthread_mutex_t mu;		/* rings mapped and touchable */
	bool live;
	bool scribbled;			/* the scribbler thread may write */
	bool idx_hit, cq_hit;		/* indices or a CQ were damaged */
	bool wild;			/* not only WQEs: indices, CQs too */
	struct ep e[2];
	struct ibv_srq *srq;
	int type;
};

struct rfuzz {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid, dbfd;
	long target;			/* WQEs and scribbles to make */
	long done;			/* atomic */
	long victims, went_err, forced_err, flush_ok, flush_skip;
	long doorbells, db_file, cqes, bad_cqes;
	struct victim *v;		/* [threads] */
	int nv;
	volatile bool stop;
	uint64_t seed;
};

static void ring_db(struct rfuzz *f, struct rng *r, struct ibv_qp *qp,
		    bool recv)
{
	int x = rn(r, 10);

	if (x < 6) {
		uv_doorbell(qp, recv);
	} else if (x < 9 && f->dbfd >= 0) {
		struct sib_db_req req = { .qpn = qp->qp_num,
					  .op = recv ? SIB_DB_RQ : SIB_DB_SQ };

		if (!recv && pct(r, 30))
			req.op |= SIB_DB_F_STREAM;
		if (write(f->dbfd, &req, sizeof(req)) == sizeof(req))
			__atomic_add_fetch(&f->db_file, 1, __ATOMIC_RELAXED);
	} else {
		return;
	}
	__atomic_add_fetch(&f->doorbells, 1, __ATOMIC_RELAXED);
}

static void fz_sges(struct rng *r, struct sib_sge *sg, int n, struct ep *e)
{
	for (int i = 0; i < n; i++) {
		int x = rn(r, 10);

		sg[i].addr = x < 5 ? (uintptr_t)e->buf + rn(r, EP_BUF) :
			     x < 7 ? rnd(r) : x < 8 ? 0 :
			     (uintptr_t)e->buf - 4096 * (1 + rn(r, 16));
		sg[i].length = pct(r, 60) ? rn(r, 4097) : edge32(r);
		x = rn(r, 10);
		sg[i].lkey = x < 6 ? e->mr->lkey : x < 8 ? e->mr->lkey ^
			     (1u << rn(r, 32)) : (uint32_t)rnd(r);
	}
}

/* A send WQE: half-valid (a real opcode, random lengths and keys) or not. */
static void fz_send_wqe(struct rng *r, struct uring *u, uint8_t *slot,
			struct ep *e, struct ep *peer)
{
	static const uint8_t ops[] = {
		IBV_WR_RDMA_WRITE, IBV_WR_RDMA_WRITE_WITH_IMM, IBV_WR_SEND,
		IBV_WR_SEND_WITH_IMM, IBV_WR_RDMA_READ,
		IBV_WR_ATOMIC_CMP_AND_SWP, IBV_WR_ATOMIC_FETCH_AND_ADD,
		IBV_WR_LOCAL_INV, IBV_WR_BIND_MW, IBV_WR_SEND_WITH_INV,
	};
	struct sib_send_wqe *w = (void *)slot;
	uint32_t room = u->slot_size - SIB_SEND_WQE_HDR;
	uint32_t maxsge = room / sizeof(struct sib_sge);
	uint64_t s = rnd(r);
	int x = rn(r, 10);

	if (x == 0) {
		scribble(slot, u->slot_size, &s);
		return;
	}
	memset(slot, 0, u->slot_size);
	w->wr_id = rnd(r);
	w->opcode = x < 8 ? ops[rn(r, sizeof(ops))] : rnd(r);
	w->send_flags = pct(r, 60) ? IBV_SEND_SIGNALED : rnd(r) & 0x3f;
	if (pct(r, 10))
		w->send_flags = rnd(r);
	w->num_sge = pct(r, 75) ? rn(r, maxsge + 1) : edge32(r);
	if (w->send_flags & IBV_SEND_INLINE)
		w->inline_len = pct(r, 70) ? rn(r, room + 1) : edge32(r);
	else if (pct(r, 5))
		w->inline_len = edge32(r);
	w->ex.imm_data = rnd(r);
	if (w->opcode == IBV_WR_ATOMIC_CMP_AND_SWP ||
	    w->opcode == IBV_WR_ATOMIC_FETCH_AND_ADD) {
		w->wr.atomic.remote_addr = pct(r, 60) ?
			((uintptr_t)peer->buf + rn(r, EP_BUF)) & ~7ull : rnd(r);
		w->wr.atomic.rkey = pct(r, 60) ? peer->mr->rkey : rnd(r);
		w->wr.atomic.compare_add = rnd(r);
		w->wr.atomic.swap = rnd(r);
	} else if (e->type == IBV_QPT_UD) {
		w->wr.ud.ah_handle = pct(r, 60) && e->ah ?
				     to_sah(e->ah)->ah_num : edge32(r);
		w->wr.ud.remote_qpn = pct(r, 60) ? peer->qp->qp_num : rnd(r);
		w->wr.ud.remote_qkey = pct(r, 60) ? FUZZ_QKEY : rnd(r);
	} else if (w->opcode == IBV_WR_BIND_MW) {
		w->wr.bind_mw.addr = (uintptr_t)e->buf + rn(r, EP_BUF);
		w->wr.bind_mw.length = edge32(r);
		w->wr.bind_mw.mw_rkey = rnd(r);
		w->wr.bind_mw.new_rkey = rnd(r);
		w->wr.bind_mw.mr_lkey = pct(r, 50) ? e->mr->lkey : rnd(r);
		w->wr.bind_mw.access = rnd(r);
	} else {
		w->wr.rdma.remote_addr = pct(r, 60) ?
			(uintptr_t)peer->buf + rn(r, EP_BUF) : rnd(r);
		w->wr.rdma.rkey = pct(r, 60) ? peer->mr->rkey : rnd(r);
	}
	if (w->send_flags & IBV_SEND_INLINE) {
		scribble(slot + SIB_SEND_WQE_HDR, room, &s);
	} else {
		fz_sges(r, (struct sib_sge *)(slot + SIB_SEND_WQE_HDR),
			w->num_sge < maxsge ? w->num_sge : maxsge, e);
	}
}

static void fz_recv_wqe(struct rng *r, struct uring *u, uint8_t *slot,
			struct ep *e)
{
	struct sib_recv_wqe *w = (void *)slot;
	uint32_t maxsge = (u->slot_size - SIB_RECV_WQE_HDR) /
			  sizeof(struct sib_sge);
	uint64_t s = rnd(r);

	if (pct(r, 10)) {
		scribble(slot, u->slot_size, &s);
		return;
	}
	memset(slot, 0, u->slot_size);
	w->wr_id = rnd(r);
	w->num_sge = pct(r, 75) ? rn(r, maxsge + 1) : edge32(r);
	w->reserved = pct(r, 90) ? 0 : rnd(r);
	fz_sges(r, (struct sib_sge *)(slot + SIB_RECV_WQE_HDR),
		w->num_sge < maxsge ? w->num_sge : maxsge, e);
}

/*
 * Publish one WQE into a work queue ring (SQ, RQ or SRQ); into a full
 * ring (an impossible producer index, which *overfill is set for) only
 * if @overfill is not NULL.
 */
static void put_wqe(struct rng *r, struct uring *u, bool send, struct ep *e,
		    struct ep *peer, bool *overfill)
{
	struct sib_ring_hdr *h = uring_hdr(u);
	uint32_t prod = __atomic_load_n(&h->prod, __ATOMIC_RELAXED);
	uint32_t cons = __atomic_load_n(&h->cons, __ATOMIC_ACQUIRE);

	if (prod - cons >= u->nslots) {
		if (!overfill)
			return;
		*overfill = true;
	}

	if (send)
		fz_send_wqe(r, u, uring_slot(u, prod), e, peer);
	else
		fz_recv_wqe(r, u, uring_slot(u, prod), e);
	__atomic_store_n(&h->prod, prod + 1, __ATOMIC_RELEASE);
}

/* An impossible or merely odd index, or a scribbled header word. */
static void fz_index(struct rng *r, struct uring *u)
{
	struct sib_ring_hdr *h = uring_hdr(u);
	static const uint32_t d[] = { 1, 2, 17, 0x80000000u, 0xffffffffu,
				      1u << 20 };

	switch (rn(r, 5)) {
	case 0:
		h->prod = h->cons + u->nslots + d[rn(r, 6)];
		break;
	case 1:
		h->prod = h->cons - d[rn(r, 6)];
		break;
	case 2:
		h->cons = rnd(r);
		break;
	case 3:
		h->prod = rnd(r);
		break;
	default:
		h->prod = h->cons + rn(r, u->nslots + 1);
		break;
	}
}

static void fz_hdr_words(struct rng *r, struct uring *u)
{
	struct sib_ring_hdr *h = uring_hdr(u);

	switch (rn(r, 4)) {
	case 0:
		h->flags = rnd(r);
		break;
	case 1:
		h->kpoll = pct(r, 50) ? 1 : rnd(r);
		break;
	case 2:
		h->credit_wanted = rnd(r);
		break;
	default:
		h->pad0[rn(r, 15)] = rnd(r);
		h->pad2[rn(r, 29)] = rnd(r);
		break;
	}
}

static void fz_cq(struct rng *r, struct uring *u)
{
	struct sib_ring_hdr *h = uring_hdr(u);
	uint64_t s = rnd(r);

	switch (rn(r, 5)) {
	case 0:
		h->cons = h->prod + 1 + rn(r, 1000);
		break;
	case 1:
		h->cons = rnd(r);
		break;
	case 2:
		h->prod = rnd(r);
		break;
	case 3:
		h->flags = rnd(r);
		break;
	default:
		scribble(u->buf + SIB_RING_HDR_SIZE,
			 u->len - SIB_RING_HDR_SIZE, &s);
		break;
	}
}

/* Take the CQEs of a CQ nobody scribbled on: each must be the QP's own. */
static int check_cq(struct rfuzz *f, struct ibv_cq *cq, uint32_t qpn,
		    uint64_t want_id, int *st)
{
	struct ibv_wc wc[16];
	int k, found = 0;

	while ((k = ibv_poll_cq(cq, 16, wc)) > 0) {
		for (int i = 0; i < k; i++) {
			__atomic_add_fetch(&f->cqes, 1, __ATOMIC_RELAXED);
			if (wc[i].qp_num != qpn ||
			    wc[i].status > IBV_WC_TM_RNDV_INCOMPLETE) {
				__atomic_add_fetch(&f->bad_cqes, 1,
						   __ATOMIC_RELAXED);
				fail("ring: CQE of QP %#x on QP %#x's CQ, status %u",
				     wc[i].qp_num, qpn, wc[i].status);
			}
			if (want_id && wc[i].wr_id == want_id) {
				found = 1;
				*st = wc[i].status;
			}
		}
	}
	return found;
}

/* Wait until a completion with @id arrives on @cq: its status, or -1. */
static int wait_id(struct rfuzz *f, struct ibv_cq *cq, uint32_t qpn,
		   uint64_t id, int ms)
{
	long end = now_ms() + ms;
	int st = -1;

	do {
		if (check_cq(f, cq, qpn, id, &st))
			return st;
		usleep(1000);
	} while (now_ms() < end);
	return -1;
}

static int victim_make(struct rfuzz *f, struct victim *v, struct rng *r)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 32,
						  .max_sge = 2 } };

	v->type = rn(r, 3);
	v->srq = pct(r, 30) ? ibv_create_srq(f->pd, &sa) : NULL;
	if (ep_open_srq(&v->e[0], f->ctx, f->pd, f->gid, tq[v->type],
			v->srq) ||
	    ep_open(&v->e[1], f->ctx, f->pd, f->gid, tq[v->type]) ||
	    ep_pair_connect(&v->e[0], &v->e[1], r))
		return -1;
	v->idx_hit = v->cq_hit = false;
	v->wild = pct(r, 50);
	v->scribbled = v->wild && pct(r, 50);
	pthread_mutex_lock(&v->mu);
	v->live = true;
	pthread_mutex_unlock(&v->mu);
	return 0;
}

static void victim_free(struct victim *v)
{
	pthread_mutex_lock(&v->mu);
	v->live = false;
	ep_close(&v->e[0]);
	ep_close(&v->e[1]);
	if (v->srq)
		ibv_destroy_srq(v->srq);
	v->srq = NULL;
	pthread_mutex_unlock(&v->mu);
}

/*
 * The end of a victim: it is in ERR (by itself or because we move it
 * there: a QP may well survive half-valid WQEs), and with its rings
 * repaired (prod = the kernel's cons, kpoll 0) a WR posted to it
 * completes with IBV_WC_WR_FLUSH_ERR (IBA 10.3.1 and 11.4.2.1;
 * sib_rc_err's flush tests). A victim whose CQs or indices were
 * damaged must only be in ERR.
 */
static void victim_end(struct rfuzz *f, struct victim *v, struct rng *r)
{
	struct ep *e = &v->e[0];
	struct uring sq = qp_sq_ring(e->qp), rq = qp_rq_ring(e->qp);
	uint64_t id = 0xf1005e0000000000ull | rnd(r) >> 24;
	bool check = !v->idx_hit && !v->cq_hit && !v->scribbled;
	int st;

	if (qp_wait_state(e->qp, IBV_QPS_ERR, check ? 300 : 50)) {
		f->went_err++;
	} else {
		f->forced_err++;
		if (qp_modify_state(e->qp, IBV_QPS_ERR))
			fail("ring: QP %#x (%s) refuses ERR: %s", e->qp->qp_num,
			     qps_str(qp_state(e->qp)), strerror(errno));
	}
	if (!qp_wait_state(e->qp, IBV_QPS_ERR, 2000))
		fail("ring: QP %#x in %s, not ERR", e->qp->qp_num,
		     qps_str(qp_state(e->qp)));
	if (!check) {
		f->flush_skip++;
		return;
	}
	/*
	 * Everything the rings held is consumed (flushed, or executed before
	 * the error) and completed: cons reaches prod on the SQ and RQ.
	 */
	uring_hdr(&sq)->kpoll = 0;
	/* The last WQEs may have had no doorbell. */
	uv_doorbell(e->qp, false);
	if (rq.buf)
		uv_doorbell(e->qp, true);
	for (int i = 0; i < 2000; i++) {
		bool rq_done = !rq.buf ||
			       uring_hdr(&rq)->cons == uring_hdr(&rq)->prod;

		if (uring_hdr(&sq)->cons == uring_hdr(&sq)->prod && rq_done)
			break;
		usleep(1000);
	}
	if (uring_hdr(&sq)->cons != uring_hdr(&sq)->prod)
		fail("ring: QP %#x in ERR kept send WQEs: cons %u prod %u",
		     e->qp->qp_num, uring_hdr(&sq)->cons, uring_hdr(&sq)->prod);
	/* Malformed receive WQEs (num_sge above max_sge) are flushed too. */
	if (rq.buf && uring_hdr(&rq)->cons != uring_hdr(&rq)->prod)
		fail("ring: QP %#x in ERR kept receive WQEs: cons %u prod %u",
		     e->qp->qp_num, uring_hdr(&rq)->cons, uring_hdr(&rq)->prod);
	check_cq(f, e->scq, e->qp->qp_num, 0, &st);
	check_cq(f, e->rcq, e->qp->qp_num, 0, &st);
	if (ep_post(e, &v->e[1], IBV_WR_SEND, id, 0, 64, 0, 0)) {
		fail("ring: post to QP %#x in ERR: %s", e->qp->qp_num,
		     strerror(errno));
		return;
	}
	/* The process may have scribbled kpoll or flags: ring anyway. */
	uv_doorbell(e->qp, false);
	st = wait_id(f, e->scq, e->qp->qp_num, id, 3000);
	if (st != IBV_WC_WR_FLUSH_ERR)
		fail("ring: send WR posted to QP %#x in ERR: %s, not flushed",
		     e->qp->qp_num, st < 0 ? "no completion" : wcs(st));
	if (rq.buf) {
		if (ep_post_recv(e, id + 1, 0, 64)) {
			fail("ring: post_recv to QP %#x in ERR: %s",
			     e->qp->qp_num, strerror(errno));
			return;
		}
		uv_doorbell(e->qp, true);
		st = wait_id(f, e->rcq, e->qp->qp_num, id + 1, 3000);
		if (st != IBV_WC_WR_FLUSH_ERR)
			fail("ring: receive posted to QP %#x in ERR: %s, not flushed",
			     e->qp->qp_num, st < 0 ? "no completion" : wcs(st));
	}
	f->flush_ok++;
}

struct rthread {
	struct rfuzz *f;
	struct victim *v;
	pthread_t t;
	int id;
	bool joined;
};

/* One fuzzing thread: victim after victim, until the count is reached. */
static void *ring_thread(void *arg)
{
	struct rthread *rt = arg;
	struct rfuzz *f = rt->f;
	struct victim *v = rt->v;
	struct rng r;

	rng_init(&r, f->seed, 100 + rt->id);
	while (!f->stop && __atomic_load_n(&f->done, __ATOMIC_RELAXED) <
			   f->target) {
		int ops = 20 + rn(&r, 180);

		if (victim_make(f, v, &r)) {
			fail("ring: cannot create a victim: %s",
			     strerror(errno));
			victim_free(v);
			break;
		}
		__atomic_add_fetch(&f->victims, 1, __ATOMIC_RELAXED);
		for (int i = 0; i < ops; i++) {
			struct ep *e = &v->e[0], *peer = &v->e[1];
			struct uring sq = qp_sq_ring(e->qp);
			struct uring rq = v->srq ? srq_ring(v->srq) :
					  qp_rq_ring(e->qp);
			struct uring cq = cq_ring(pct(&r, 50) ? e->scq :
						  e->rcq);
			int x = rn(&r, 100);

			/* Half the victims get only WQEs (and real WRs). */
			if (!v->wild && ((x >= 65 && x < 78) || x >= 96))
				x = rn(&r, 65);
			if (x < 45) {
				put_wqe(&r, &sq, true, e, peer,
					v->wild ? &v->idx_hit : NULL);
				ring_db(f, &r, e->qp, false);
			} else if (x < 65) {
				put_wqe(&r, &rq, false, e, peer,
					v->wild ? &v->idx_hit : NULL);
				if (!v->srq)
					ring_db(f, &r, e->qp, true);
				ep_post(peer, e, IBV_WR_SEND, i, 0,
					rn(&r, 3000), 0, 0);
			} else if (x < 72) {
				fz_index(&r, pct(&r, 60) ? &sq : &rq);
				v->idx_hit = true;
				ring_db(f, &r, e->qp, pct(&r, 30));
			} else if (x < 78) {
				fz_cq(&r, &cq);
				v->cq_hit = true;
			} else if (x < 84) {
				fz_hdr_words(&r, pct(&r, 50) ? &sq : &rq);
				ring_db(f, &r, e->qp, pct(&r, 30));
			} else if (x < 96) {
				/* Real WRs both ways, the peer's checked. */
				ep_post(e, peer, pct(&r, 50) ? IBV_WR_SEND :
					IBV_WR_RDMA_WRITE, i, 0, 100, 0, 0);
				if (!v->srq)
					ep_post_recv(e, i, 0, 4096);
				ep_post(peer, e, v->type == T_UD ?
					IBV_WR_SEND : IBV_WR_RDMA_WRITE, i,
					0, 100, 200, 0);
			} else {
				uint64_t s = rnd(&r);
				struct uring *all = pct(&r, 50) ? &sq : &rq;

				scribble(all->buf, all->len, &s);
				v->idx_hit = true;
				ring_db(f, &r, e->qp, all == &rq);
			}
			if (!v->cq_hit && !v->scribbled) {
				int st;

				check_cq(f, e->scq, e->qp->qp_num, 0, &st);
				check_cq(f, e->rcq, e->qp->qp_num, 0, &st);
			}
			{
				int st;

				check_cq(f, peer->scq, peer->qp->qp_num, 0,
					 &st);
				check_cq(f, peer->rcq, peer->qp->qp_num, 0,
					 &st);
			}
			__atomic_add_fetch(&f->done, 1, __ATOMIC_RELAXED);
		}
		victim_end(f, v, &r);
		victim_free(v);
	}
	return NULL;
}

/* Another thread writes into the rings of victims that allow it. */
static void *ring_scribbler(void *arg)
{
	struct rfuzz *f = arg;
	struct rng r;
	long n = 0;

	rng_init(&r, f->seed, 99);
	while (!f->stop) {
		struct victim *v = &f->v[rn(&r, f->nv)];

		pthread_mutex_lock(&v->mu);
		if (v->live && v->scribbled) {
			struct ibv_cq *cqs[2] = { v->e[0].scq, v->e[0].rcq };
			struct uring u;
			uint64_t s = rnd(&r);
			int x = rn(&r, 4);

			u = x == 0 ? qp_sq_ring(v->e[0].qp) :
			    x == 1 ? (v->srq ? srq_ring(v->srq) :
				      qp_rq_ring(v->e[0].qp)) :
			    cq_ring(cqs[x & 1]);
			if (u.buf) {
				size_t off = rn(&r, u.len - 64);

				scribble(u.buf + off, 4 + rn(&r, 60), &s);
				n++;
			}
		}
		pthread_mutex_unlock(&v->mu);
		if (!(n & 63))
			sched_yield();
	}
	return NULL;
}

static bool objects_back(const char *dev, const char *base)
{
	char path[128], now[4096];

	snprintf(path, sizeof(path), DBG_SIB "/%s/objects", dev);
	for (int i = 0; i < 250; i++) {
		if (read_text(path, now, sizeof(now)) > 0 &&
		    !strcmp(now, base))
			return true;
		usleep(20000);
	}
	say("objects now:\n%s", now);
	return false;
}

static int run_ring(const struct fopts *o)
{
	struct rfuzz f = { .seed = o->seed, .dbfd = -1 };
	int nt = o->threads > 0 ? o->threads : 3;
	struct rthread *rt = calloc(nt, sizeof(*rt));
	struct wpath *by = calloc(1, sizeof(*by));
	struct cnts c0, c1;
	char base[4096] = "";
	pthread_t sc;
	double t0 = now_s();
	int fds[4];

	f.target = o->count < 0 ? 100000 : o->count;
	say("ring: seed %llu, %ld WQEs and scribbles from %d threads\n",
	    (unsigned long long)o->seed, f.target, nt);
	ep_rnr_retry = 2;
	f.ctx = sib_lo_setup(&f.gid);
	if (!f.ctx || !rt || !by) {
		fail("ring: no sib0");
		goto out;
	}
	read_text(DBG_SIB "/" SIB_DEV "/objects", base, sizeof(base));
	if (sib_db_fds(fds, 4) == 1)
		f.dbfd = fds[0];
	f.pd = ibv_alloc_pd(f.ctx);
	f.nv = nt;
	f.v = calloc(nt, sizeof(*f.v));
	/* The bystanders: same context, their own PD and CQs. */
	by->name = "ring";
	by->no_targets = true;
	by->tctx = by->pctx = f.ctx;
	by->tgid = by->pgid = f.gid;
	rng_init(&by->r, o->seed, 7);
	by->bpd[0] = ibv_alloc_pd(f.ctx);
	if (!f.pd || !f.v || !by->bpd[0] ||
	    ep_open(&by->by[0], f.ctx, by->bpd[0], f.gid, IBV_QPT_RC) ||
	    ep_open(&by->by[1], f.ctx, by->bpd[0], f.gid, IBV_QPT_RC) ||
	    ep_pair_connect(&by->by[0], &by->by[1], &by->r)) {
		fail("ring: setup failed");
		goto out;
	}
	cnt_read(SIB_DEV, &c0);
	pthread_create(&by->t, NULL, traffic_thread, by);
	for (int i = 0; i < nt; i++) {
		pthread_mutex_init(&f.v[i].mu, NULL);
		rt[i] = (struct rthread){ .f = &f, .v = &f.v[i], .id = i };
		pthread_create(&rt[i].t, NULL, ring_thread, &rt[i]);
	}
	pthread_create(&sc, NULL, ring_scribbler, &f);
	for (long last = 0; ; sleep(1)) {
		long d = __atomic_load_n(&f.done, __ATOMIC_RELAXED);
		int left = 0;

		for (int i = 0; i < nt; i++) {
			if (!rt[i].joined && !pthread_tryjoin_np(rt[i].t, NULL))
				rt[i].joined = true;
			left += !rt[i].joined;
		}
		if (!left)
			break;
		if (d - last >= 10000) {
			last = d;
			say("ring: %ld done, %ld victims, bystander rounds %ld\n",
			    d, f.victims, by->by_rounds);
		}
	}
	f.stop = true;
	pthread_join(sc, NULL);
	by->stop = true;
	pthread_join(by->t, NULL);
	cnt_read(SIB_DEV, &c1);
	say("ring: %ld WQEs and scribbles in %.1f s on %ld victims; %ld went "
	    "to ERR by themselves, %ld were moved there; %ld flushed the WRs "
	    "posted then, %ld (rings or CQs damaged) not checked\n", f.done,
	    now_s() - t0, f.victims, f.went_err, f.forced_err, f.flush_ok,
	    f.flush_skip);
	say("ring: %ld doorbells (%ld through the doorbell file), %ld CQEs "
	    "checked, %ld bad; bystanders %ld rounds, %ld bytes verified\n",
	    f.doorbells, f.db_file, f.cqes, f.bad_cqes, by->by_rounds,
	    by->by_bytes);
	cnt_report(SIB_DEV, &c0, &c1);
	if (!by->by_rounds)
		fail("ring: no bystander traffic completed");
	if (!by->by_failed && verified_transfer(f.ctx, f.gid, f.ctx, f.gid,
						o->seed))
		fail("ring: the final verified transfer on a fresh pair failed");
out:
	if (by) {
		ep_close(&by->by[0]);
		ep_close(&by->by[1]);
		if (by->bpd[0])
			ibv_dealloc_pd(by->bpd[0]);
	}
	if (f.pd)
		ibv_dealloc_pd(f.pd);
	if (f.ctx) {
		ibv_close_device(f.ctx);
		if (base[0] && !objects_back(SIB_DEV, base))
			fail("ring: objects left behind");
	}
	sib_delete_all();
	free(f.v);
	free(rt);
	free(by);
	ep_rnr_retry = 7;
	say("ring: %s\n", fuzz_failed ? "FAILED" : "done");
	return fuzz_failed ? -1 : 0;
}

/* ---- the uverbs and doorbell fuzzer ------------------------------------------ */

/*
 * The fault knobs get random values on a device of their own, sibfK on
 * a dummy netdev, whose QPs run traffic meanwhile (not checked: the
 * knobs may drop everything): sib0's bystanders must stay intact.
 */
#define DEV_K	"sibfK"
#define IF_K	"sibfzk"
#define IP_K	"198.20.0.1"


#define UP_PD	4
#define UP_CQ	6
#define UP_QP	8
#define UP_SRQ	3
#define UP_MR	6
#define UP_MW	4
#define UP_AH	4
#define UP_MEM	(1 << 20)

/* The objects of a random command sequence, any of them NULL. */
struct upool {
	struct ibv_context *ctx;
	int gid, dbfd;
	struct ibv_pd *pd[UP_PD];
	struct ibv_cq *cq[UP_CQ];
	struct ibv_qp *qp[UP_QP];
	struct ibv_srq *srq[UP_SRQ];
	struct ibv_mr *mr[UP_MR];
	struct ibv_mw *mw[UP_MW];
	struct ibv_ah *ah[UP_AH];
	uint8_t *mem;
	long ok[32], err[32];
};

static const char *const ucmd_names[] = {
	"alloc_pd", "dealloc_pd", "create_cq", "destroy_cq", "resize_cq",
	"create_qp", "modify_qp", "query_qp", "destroy_qp", "create_srq",
	"modify_srq", "destroy_srq", "reg_mr", "dereg_mr", "rereg_mr",
	"alloc_mw", "dealloc_mw", "bind_mw", "create_ah", "destroy_ah",
	"post_send", "post_recv", "poll_cq", "req_notify", "doorbell",
	"db_file", "fault_knob",
};

#define NUCMD	ARRAY_SIZE(ucmd_names)

#define PICK(r, a)	((a)[rn(r, sizeof(a) / sizeof((a)[0]))])

static int pick_slot(struct rng *r, void **a, int n, bool want_empty)
{
	int s = rn(r, n);

	for (int i = 0; i < n; i++, s = (s + 1) % n)
		if (!a[s] == want_empty)
			return s;
	return -1;
}

#define SLOT_FREE(r, a)	pick_slot(r, (void **)(a), sizeof(a) / sizeof((a)[0]), true)
#define SLOT_USED(r, a)	pick_slot(r, (void **)(a), sizeof(a) / sizeof((a)[0]), false)

static const char *const knobs[] = {
	"active", "drop", "dup", "reorder", "delay", "corrupt", "delay_us",
	"dir", "classes", "seed",
};

/* A random value, of the kind a knob takes or not, as text. */
static void knob_write(struct rng *r, const char *dev)
{
	const char *k = PICK(r, knobs);
	char path[256], v[64];
	int fd, x = rn(r, 10);

	if (!strcmp(k, "delay_us") && x < 8)
		snprintf(v, sizeof(v), "%u\n", rn(r, 20000));
	else if (x < 5)
		snprintf(v, sizeof(v), "%u\n", rn(r, 200000));
	else if (x < 6)
		snprintf(v, sizeof(v), "%u\n", rn(r, 2));
	else if (x < 7)
		snprintf(v, sizeof(v), "%lld\n", (long long)rnd(r));
	else if (x < 8)
		snprintf(v, sizeof(v), "-%u\n", rn(r, 100));
	else if (x < 9)
		snprintf(v, sizeof(v), "%s", PICK(r, ((const char *[]){
			"", "\n", "abc\n", "0x10\n", "99999999999999999999999\n",
			" 5", "1 2 3", "1000001\n" })));
	else
		snprintf(v, sizeof(v), "%u\n", 1000000 + rn(r, 5));
	snprintf(path, sizeof(path), DBG_SIB "/%s/fault/%s", dev, k);
	fd = open(path, O_WRONLY);
	if (fd >= 0) {
		if (write(fd, v, strlen(v)) < 0)
			errno = 0;
		close(fd);
	}
}

static void knobs_reset(const char *dev)
{
	fault_knob_set(dev, "active", 0);
	for (int i = 1; i < 6; i++)
		fault_knob_set(dev, knobs[i], 0);
	fault_knob_set(dev, "delay_us", 1000);
	fault_knob_set(dev, "dir", 1);
	fault_knob_set(dev, "classes", 31);
}

static struct ibv_cq *any_cq(struct upool *u, struct rng *r)
{
	int s = SLOT_USED(r, u->cq);

	return s < 0 ? NULL : u->cq[s];
}

static void rand_ah_attr(struct upool *u, struct rng *r,
			 struct ibv_ah_attr *ah)
{
	memset(ah, 0, sizeof(*ah));
	ah->is_global = pct(r, 90);
	ah->port_num = pct(r, 95) ? 1 : rn(r, 4);
	ah->grh.hop_limit = rnd(r);
	ah->grh.sgid_index = pct(r, 90) ? u->gid : rn(r, 20);
	ah->sl = rn(r, 16);
	ah->dlid = rnd(r);
	ah->static_rate = rn(r, 20);
	ibv_query_gid(u->ctx, 1, u->gid, &ah->grh.dgid);
	if (pct(r, 10))
		for (int i = 0; i < 16; i++)
			ah->grh.dgid.raw[i] = rnd(r);
}

/*
 * One random command: its index in ucmd_names and in *ok whether it
 * worked, or -1 if there was nothing to do it to.
 */
static int ucmd(struct upool *u, struct rng *r, bool *ok)
{
	int c = rn(r, NUCMD), s, t;
	int ret = -2;	/* not applicable: no object to act on */

	switch (c) {
	case 0:
		s = SLOT_FREE(r, u->pd);
		if (s >= 0)
			ret = !(u->pd[s] = ibv_alloc_pd(u->ctx));
		break;
	case 1:
		s = SLOT_USED(r, u->pd);
		if (s < 0)
			break;
		ret = ibv_dealloc_pd(u->pd[s]);
		if (!ret)
			u->pd[s] = NULL;
		break;
	case 2:
		s = SLOT_FREE(r, u->cq);
		if (s >= 0)
			ret = !(u->cq[s] = ibv_create_cq(u->ctx, pct(r, 80) ?
					1 + rn(r, 600) : (int)edge32(r), NULL,
					NULL, rn(r, 3)));
		break;
	case 3:
		s = SLOT_USED(r, u->cq);
		if (s < 0)
			break;
		ret = ibv_destroy_cq(u->cq[s]);
		if (!ret)
			u->cq[s] = NULL;
		break;
	case 4:
		s = SLOT_USED(r, u->cq);
		if (s >= 0)
			ret = ibv_resize_cq(u->cq[s], pct(r, 80) ?
					    rn(r, 1000) : (int)edge32(r));
		break;
	case 5: {
		static const enum ibv_qp_type ty[] = { IBV_QPT_RC, IBV_QPT_UC,
						       IBV_QPT_UD, IBV_QPT_RC };
		struct ibv_qp_init_attr ia = { 0 };

		s = SLOT_FREE(r, u->qp);
		t = SLOT_USED(r, u->pd);
		if (s < 0 || t < 0)
			break;
		ia.qp_type = pct(r, 95) ? PICK(r, ty) : rn(r, 12);
		ia.send_cq = any_cq(u, r);
		ia.recv_cq = any_cq(u, r);
		if (pct(r, 25)) {
			int q = SLOT_USED(r, u->srq);

			ia.srq = q < 0 ? NULL : u->srq[q];
		}
		ia.cap.max_send_wr = pct(r, 90) ? 1 + rn(r, 256) : edge32(r);
		ia.cap.max_recv_wr = pct(r, 90) ? 1 + rn(r, 256) : edge32(r);
		ia.cap.max_send_sge = pct(r, 90) ? 1 + rn(r, 4) : edge32(r);
		ia.cap.max_recv_sge = pct(r, 90) ? 1 + rn(r, 4) : edge32(r);
		ia.cap.max_inline_data = pct(r, 90) ? rn(r, 128) : edge32(r);
		ia.sq_sig_all = rn(r, 2);
		if (ia.send_cq && ia.recv_cq)
			ret = !(u->qp[s] = ibv_create_qp(u->pd[t], &ia));
		break;
	}
	case 6: {
		struct ibv_qp_attr a = { 0 };
		int mask = IBV_QP_STATE;

		s = SLOT_USED(r, u->qp);
		if (s < 0)
			break;
		if (pct(r, 25)) {
			/* All the way to RTS, at a pool QP or itself. */
			struct ep e = { .ctx = u->ctx, .pd = u->qp[s]->pd,
					.qp = u->qp[s], .gid = u->gid,
					.type = u->qp[s]->qp_type };
			struct ep peer = e;

			t = SLOT_USED(r, u->qp);
			if (t >= 0 && u->qp[t]->qp_type == e.type)
				peer.qp = u->qp[t];
			qp_modify_state(e.qp, IBV_QPS_RESET);
			ret = ep_connect(&e, &peer, rnd(r) & 0xffffff,
					 rnd(r) & 0xffffff);
			if (e.ah)
				ibv_destroy_ah(e.ah);
			break;
		}
		a.qp_state = rn(r, 7);
		if (pct(r, 60)) {
			/* What the transition usually needs. */
			a.pkey_index = 0;
			a.port_num = 1;
			a.qp_access_flags = rnd(r) & 0xf;
			a.qkey = FUZZ_QKEY;
			a.path_mtu = 1 + rn(r, 5);
			t = rn(r, UP_QP);
			a.dest_qp_num = pct(r, 50) && u->qp[t] ?
					u->qp[t]->qp_num : rnd(r) & 0xffffff;
			a.rq_psn = rnd(r);
			a.sq_psn = rnd(r);
			a.max_dest_rd_atomic = rn(r, 20);
			a.max_rd_atomic = rn(r, 20);
			a.min_rnr_timer = rn(r, 32);
			a.timeout = rn(r, 32);
			a.retry_cnt = rn(r, 8);
			a.rnr_retry = rn(r, 8);
			rand_ah_attr(u, r, &a.ah_attr);
			mask |= a.qp_state == IBV_QPS_INIT ?
				IBV_QP_PKEY_INDEX | IBV_QP_PORT |
				(u->qp[s]->qp_type == IBV_QPT_UD ?
				 IBV_QP_QKEY : IBV_QP_ACCESS_FLAGS) :
				a.qp_state == IBV_QPS_RTR ?
				(u->qp[s]->qp_type == IBV_QPT_UD ? 0 :
				 IBV_QP_AV | IBV_QP_PATH_MTU |
				 IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
				 (u->qp[s]->qp_type == IBV_QPT_RC ?
				  IBV_QP_MAX_DEST_RD_ATOMIC |
				  IBV_QP_MIN_RNR_TIMER : 0)) :
				a.qp_state == IBV_QPS_RTS ? IBV_QP_SQ_PSN |
				(u->qp[s]->qp_type == IBV_QPT_RC ?
				 IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
				 IBV_QP_RNR_RETRY |
				 IBV_QP_MAX_QP_RD_ATOMIC : 0) : 0;
		}
		if (pct(r, 30)) {
			/* Anything at all. */
			mask = rnd(r) & 0x1fffff;
			a.cur_qp_state = rn(r, 8);
			a.path_mig_state = rn(r, 4);
			a.cap.max_send_wr = edge32(r);
			a.cap.max_inline_data = edge32(r);
			a.alt_port_num = rn(r, 3);
			a.en_sqd_async_notify = rn(r, 2);
			a.rate_limit = edge32(r);
		}
		ret = ibv_modify_qp(u->qp[s], &a, mask);
		break;
	}
	case 7: {
		struct ibv_qp_attr a;
		struct ibv_qp_init_attr ia;

		s = SLOT_USED(r, u->qp);
		if (s >= 0)
			ret = ibv_query_qp(u->qp[s], &a, rnd(r) & 0x1fffff,
					   &ia);
		break;
	}
	case 8:
		s = SLOT_USED(r, u->qp);
		if (s < 0)
			break;
		ret = ibv_destroy_qp(u->qp[s]);
		if (!ret)
			u->qp[s] = NULL;
		break;
	case 9: {
		struct ibv_srq_init_attr sa = { 0 };

		s = SLOT_FREE(r, u->srq);
		t = SLOT_USED(r, u->pd);
		if (s < 0 || t < 0)
			break;
		sa.attr.max_wr = pct(r, 90) ? 1 + rn(r, 256) : edge32(r);
		sa.attr.max_sge = pct(r, 90) ? 1 + rn(r, 4) : edge32(r);
		sa.attr.srq_limit = rn(r, 300);
		ret = !(u->srq[s] = ibv_create_srq(u->pd[t], &sa));
		break;
	}
	case 10: {
		struct ibv_srq_attr a = { .max_wr = edge32(r),
					  .srq_limit = rn(r, 400) };

		s = SLOT_USED(r, u->srq);
		if (s >= 0)
			ret = ibv_modify_srq(u->srq[s], &a, rn(r, 4));
		break;
	}
	case 11:
		s = SLOT_USED(r, u->srq);
		if (s < 0)
			break;
		ret = ibv_destroy_srq(u->srq[s]);
		if (!ret)
			u->srq[s] = NULL;
		break;
	case 12: {
		uint64_t off = rn(r, UP_MEM), len = rn(r, UP_MEM - off + 1);
		void *addr = u->mem + off;

		s = SLOT_FREE(r, u->mr);
		t = SLOT_USED(r, u->pd);
		if (s < 0 || t < 0)
			break;
		if (pct(r, 10))
			addr = (void *)(uintptr_t)(rnd(r) & ~0xfffull);
		if (pct(r, 10))
			len = edge32(r);
		ret = !(u->mr[s] = ibv_reg_mr(u->pd[t], addr, len,
					      pct(r, 80) ? rnd(r) & 0x1f :
					      (int)rnd(r)));
		break;
	}
	case 13:
		s = SLOT_USED(r, u->mr);
		if (s < 0)
			break;
		ret = ibv_dereg_mr(u->mr[s]);
		if (!ret)
			u->mr[s] = NULL;
		break;
	case 14: {
		uint64_t off = rn(r, UP_MEM / 2);

		s = SLOT_USED(r, u->mr);
		t = SLOT_USED(r, u->pd);
		if (s >= 0 && t >= 0)
			ret = ibv_rereg_mr(u->mr[s], rn(r, 8), u->pd[t],
					   u->mem + off, rn(r, UP_MEM / 2),
					   rnd(r) & 0x1f);
		break;
	}
	case 15:
		s = SLOT_FREE(r, u->mw);
		t = SLOT_USED(r, u->pd);
		if (s >= 0 && t >= 0)
			ret = !(u->mw[s] = ibv_alloc_mw(u->pd[t], pct(r, 50) ?
							IBV_MW_TYPE_1 :
							IBV_MW_TYPE_2));
		break;
	case 16:
		s = SLOT_USED(r, u->mw);
		if (s < 0)
			break;
		ret = ibv_dealloc_mw(u->mw[s]);
		if (!ret)
			u->mw[s] = NULL;
		break;
	case 17: {
		struct ibv_mw_bind b = { .wr_id = rnd(r),
					 .send_flags = IBV_SEND_SIGNALED };
		int q = SLOT_USED(r, u->qp), m = SLOT_USED(r, u->mr);

		s = SLOT_USED(r, u->mw);
		if (s < 0 || q < 0 || u->mw[s]->type != IBV_MW_TYPE_1)
			break;
		b.bind_info.mr = m < 0 ? NULL : u->mr[m];
		b.bind_info.addr = m < 0 ? 0 : (uintptr_t)u->mr[m]->addr +
					      rn(r, 4096);
		b.bind_info.length = rn(r, 8192);
		b.bind_info.mw_access_flags = rnd(r) & 0x1f;
		if (b.bind_info.mr)
			ret = !!ibv_bind_mw(u->qp[q], u->mw[s], &b);
		break;
	}
	case 18: {
		struct ibv_ah_attr ah;

		s = SLOT_FREE(r, u->ah);
		t = SLOT_USED(r, u->pd);
		if (s < 0 || t < 0)
			break;
		rand_ah_attr(u, r, &ah);
		ret = !(u->ah[s] = ibv_create_ah(u->pd[t], &ah));
		break;
	}
	case 19:
		s = SLOT_USED(r, u->ah);
		if (s < 0)
			break;
		ret = ibv_destroy_ah(u->ah[s]);
		if (!ret)
			u->ah[s] = NULL;
		break;
	case 20: {
		struct ibv_sge sg[4];
		struct ibv_send_wr wr = { .wr_id = rnd(r), .sg_list = sg,
					  .num_sge = rn(r, 5) }, *bad;
		int m = SLOT_USED(r, u->mr), a = SLOT_USED(r, u->ah);

		s = SLOT_USED(r, u->qp);
		if (s < 0)
			break;
		for (int i = 0; i < 4; i++) {
			sg[i].addr = (uintptr_t)u->mem + rn(r, UP_MEM - 8192);
			sg[i].length = rn(r, 8192);
			sg[i].lkey = m < 0 || pct(r, 10) ? rnd(r) :
				     u->mr[m]->lkey;
		}
		wr.opcode = pct(r, 90) ? rn(r, 11) : rnd(r);
		wr.send_flags = rnd(r) & 0xf;
		if (wr.send_flags & IBV_SEND_INLINE)
			sg[0].length = rn(r, 600);
		wr.wr.rdma.remote_addr = (uintptr_t)u->mem + rn(r, UP_MEM);
		wr.wr.rdma.rkey = m < 0 ? rnd(r) : u->mr[m]->rkey;
		if (wr.opcode == IBV_WR_BIND_MW) {
			int w = SLOT_USED(r, u->mw);

			wr.bind_mw.mw = w < 0 || pct(r, 20) ? NULL : u->mw[w];
			wr.bind_mw.rkey = rnd(r);
			wr.bind_mw.bind_info.mr = m < 0 ? NULL : u->mr[m];
			wr.bind_mw.bind_info.addr = wr.wr.rdma.remote_addr;
			wr.bind_mw.bind_info.length = edge32(r);
			wr.bind_mw.bind_info.mw_access_flags = rnd(r) & 0x1f;
		}
		if (u->qp[s]->qp_type == IBV_QPT_UD) {
			if (a < 0)
				break;
			wr.wr.ud.ah = u->ah[a];
			wr.wr.ud.remote_qpn = rnd(r) & 0xffffff;
			wr.wr.ud.remote_qkey = rnd(r);
		}
		ret = ibv_post_send(u->qp[s], &wr, &bad);
		break;
	}
	case 21: {
		struct ibv_sge sg[4];
		struct ibv_recv_wr wr = { .wr_id = rnd(r), .sg_list = sg,
					  .num_sge = rn(r, 5) }, *bad;
		int m = SLOT_USED(r, u->mr);

		for (int i = 0; i < 4; i++) {
			sg[i].addr = (uintptr_t)u->mem + rn(r, UP_MEM - 8192);
			sg[i].length = rn(r, 8192);
			sg[i].lkey = m < 0 ? rnd(r) : u->mr[m]->lkey;
		}
		if (pct(r, 30)) {
			s = SLOT_USED(r, u->srq);
			if (s >= 0)
				ret = ibv_post_srq_recv(u->srq[s], &wr, &bad);
		} else {
			s = SLOT_USED(r, u->qp);
			if (s >= 0 && !u->qp[s]->srq)
				ret = ibv_post_recv(u->qp[s], &wr, &bad);
		}
		break;
	}
	case 22: {
		struct ibv_wc wc[8];

		s = SLOT_USED(r, u->cq);
		if (s >= 0)
			ret = ibv_poll_cq(u->cq[s], 8, wc) < 0;
		break;
	}
	case 23:
		s = SLOT_USED(r, u->cq);
		if (s >= 0)
			ret = ibv_req_notify_cq(u->cq[s], rn(r, 2));
		break;
	case 24:
		s = SLOT_USED(r, u->qp);
		if (s >= 0)
			ret = uv_doorbell(u->qp[s], rn(r, 2));
		break;
	case 25: {
		uint8_t b[16];
		struct sib_db_req *req = (void *)b;
		size_t len = pct(r, 80) ? sizeof(*req) : rn(r, 17);

		for (int i = 0; i < 16; i++)
			b[i] = rnd(r);
		s = SLOT_USED(r, u->qp);
		if (s >= 0 && pct(r, 70))
			req->qpn = u->qp[s]->qp_num;
		if (pct(r, 70))
			req->op = PICK(r, ((uint32_t[]){ SIB_DB_SQ, SIB_DB_RQ,
				SIB_DB_SQ | SIB_DB_F_STREAM }));
		if (u->dbfd >= 0)
			ret = write(u->dbfd, b, len) != (ssize_t)len;
		break;
	}
	default:
		knob_write(r, DEV_K);
		ret = 0;
		break;
	}
	if (ret == -2)
		return -1;
	*ok = !ret;
	return c;
}

static void upool_free(struct upool *u)
{
	/* In dependency order; whatever refuses now leaks into close. */
	for (int i = 0; i < UP_QP; i++)
		if (u->qp[i])
			destroy_retry(qp_destroy, u->qp[i]);
	for (int i = 0; i < UP_SRQ; i++)
		if (u->srq[i])
			ibv_destroy_srq(u->srq[i]);
	for (int i = 0; i < UP_CQ; i++)
		if (u->cq[i])
			destroy_retry(cq_destroy, u->cq[i]);
	for (int i = 0; i < UP_MW; i++)
		if (u->mw[i])
			ibv_dealloc_mw(u->mw[i]);
	for (int i = 0; i < UP_MR; i++)
		if (u->mr[i])
			ibv_dereg_mr(u->mr[i]);
	for (int i = 0; i < UP_AH; i++)
		if (u->ah[i])
			ibv_destroy_ah(u->ah[i]);
	for (int i = 0; i < UP_PD; i++)
		if (u->pd[i])
			ibv_dealloc_pd(u->pd[i]);
	memset(u->pd, 0, sizeof(u->pd));
	memset(u->cq, 0, sizeof(u->cq));
	memset(u->qp, 0, sizeof(u->qp));
	memset(u->srq, 0, sizeof(u->srq));
	memset(u->mr, 0, sizeof(u->mr));
	memset(u->mw, 0, sizeof(u->mw));
	memset(u->ah, 0, sizeof(u->ah));
}

/* ---- races: doorbells under destroy ---------------------------------------------- */

struct dbrace {
	struct ibv_context *ctx;
	int dbfd;
	volatile uint32_t qpn, handle;
	volatile bool stop;
	long rung;
};

/*
 * Rings the QP whose number and handle are published, through the
 * doorbell file and the legacy command, whether or not it still exists:
 * the kernel alone decides. (The provider's objects are not touched:
 * that would be a use-after-free in this process, not a kernel test.)
 */
static void *dbrace_thread(void *arg)
{
	struct dbrace *d = arg;

	while (!d->stop) {
		struct sib_db_req req = { .qpn = d->qpn,
					  .op = d->rung & 1 ? SIB_DB_RQ :
							      SIB_DB_SQ };
		struct {
			struct ib_uverbs_cmd_hdr hdr;
			struct ib_uverbs_post_send cmd;
		} c = { };
		struct ib_uverbs_post_send_resp resp;

		if (d->dbfd >= 0 && write(d->dbfd, &req, sizeof(req)) < 0)
			errno = 0;
		c.hdr.command = d->rung & 2 ? IB_USER_VERBS_CMD_POST_RECV :
					      IB_USER_VERBS_CMD_POST_SEND;
		c.hdr.in_words = sizeof(c) / 4;
		c.hdr.out_words = sizeof(resp) / 4;
		c.cmd.response = (uintptr_t)&resp;
		c.cmd.qp_handle = d->handle;
		c.cmd.wqe_size = sizeof(struct ib_uverbs_send_wr);
		if (write(d->ctx->cmd_fd, &c, sizeof(c)) < 0)
			errno = 0;
		d->rung++;
	}
	return NULL;
}

/* Pairs with traffic in flight, destroyed while another thread rings. */
static void race_destroy(struct upool *u, struct rng *r, int rounds)
{
	struct dbrace d = { .ctx = u->ctx, .dbfd = u->dbfd };
	struct ibv_pd *pd = ibv_alloc_pd(u->ctx);
	pthread_t t;

	if (!pd)
		return;
	pthread_create(&t, NULL, dbrace_thread, &d);
	for (int i = 0; i < rounds; i++) {
		struct ep a = { 0 }, b = { 0 };
		int ty = rn(r, NT);

		if (ep_open(&a, u->ctx, pd, u->gid, tq[ty]) ||
		    ep_open(&b, u->ctx, pd, u->gid, tq[ty]) ||
		    ep_pair_connect(&a, &b, r)) {
			ep_close(&a);
			ep_close(&b);
			continue;
		}
		d.handle = a.qp->handle;
		d.qpn = a.qp->qp_num;
		for (int k = 0; k < 8; k++) {
			ep_post_recv(&b, k, k * 4096, 4096);
			ep_post(&a, &b, k & 1 ? IBV_WR_SEND :
				IBV_WR_RDMA_WRITE, k, 0, 1 + rn(r, 20000),
				0, 0);
		}
		usleep(rn(r, 3000));
		/* Either end first; the other with its packets in flight. */
		if (rn(r, 2)) {
			ep_close(&b);
			ep_close(&a);
		} else {
			ep_close(&a);
			ep_close(&b);
		}
	}
	d.stop = true;
	pthread_join(t, NULL);
	ibv_dealloc_pd(pd);
}

/* ---- races: a process killed, its uverbs file closed mid-operation ------------ */

struct closer {
	int fd;
	int delay_us;
};

static void *closer_thread(void *arg)
{
	struct closer *c = arg;

	usleep(c->delay_us);
	close(c->fd);
	return NULL;
}

/*
 * In a child: open sib0, make objects and traffic with random commands;
 * maybe close the uverbs command file from another thread meanwhile.
 * The parent kills it at a random moment.
 */
static void child_work(uint64_t seed, bool close_fd)
{
	struct upool u = { .dbfd = -1 };
	struct rng r;
	int fds[4];

	rng_init(&r, seed, 555);
	u.ctx = pair_open_dev(SIB_DEV);
	u.mem = aligned_alloc(4096, UP_MEM);
	if (!u.ctx || !u.mem)
		_exit(1);
	u.gid = find_lo_gid(u.ctx);
	if (sib_db_fds(fds, 4) >= 1)
		u.dbfd = fds[0];
	if (close_fd) {
		static struct closer c;
		pthread_t t;

		c.fd = u.ctx->cmd_fd;
		c.delay_us = rn(&r, 20000);
		pthread_create(&t, NULL, closer_thread, &c);
	}
	for (int i = 0; i < 100000; i++) {
		bool ok;

		if (i % 40 == 0)
			race_destroy(&u, &r, 1);
		ucmd(&u, &r, &ok);
		(void)ok;
	}
	_exit(0);
}

static int race_kill(uint64_t seed, struct rng *r, int n)
{
	int killed = 0;

	for (int i = 0; i < n; i++) {
		bool close_fd = pct(r, 40);
		pid_t pid = fork();
		int st;

		if (pid < 0)
			return killed;
		if (!pid)
			child_work(seed + i, close_fd);
		usleep(5000 + rn(r, 200000));
		kill(pid, SIGKILL);
		if (waitpid(pid, &st, 0) == pid && WIFSIGNALED(st))
			killed++;
	}
	return killed;
}

/* ---- races: rdma link add/delete with packets arriving ------------------------ */

#define RTAG	"fzr"
#define NS_R	SIB_TOPO_NSA(RTAG)
#define NS_S	SIB_TOPO_NSB(RTAG)
#define IF_R	SIB_TOPO_IFA(RTAG)
#define IP_R	"198.19.0.1"
#define DEV_R	"sibfR"

struct linkrace {
	const char *ns, *ndev, *dst;	/* where the device goes, packets to */
	const char *from_ns;
	volatile bool stop;
	long adds, dels, pkts, opens;
};

/* UDP datagrams to port 4791 of ->dst, from ->from_ns, as fast as it goes. */
static void *lr_sender(void *arg)
{
	struct linkrace *l = arg;
	struct sockaddr_in to = { .sin_family = AF_INET,
				  .sin_port = htons(ROCE_PORT) };
	uint8_t p[64] = { 0x04, 0, 0xff, 0xff, 0, 0, 0, 0x11 };
	int self = ns_enter(l->from_ns), fd;

	fd = socket(AF_INET, SOCK_DGRAM, 0);
	ns_leave(self);
	inet_pton(AF_INET, l->dst, &to.sin_addr);
	while (!l->stop && fd >= 0) {
		p[7]++;
		if (sendto(fd, p, 12 + 16 + 4, MSG_DONTWAIT,
			   (struct sockaddr *)&to, sizeof(to)) > 0)
			l->pkts++;
		else
			usleep(100);
	}
	if (fd >= 0)
		close(fd);
	return NULL;
}

/* Open the device whenever it exists, make a pair, drop it again. */
static void *lr_opener(void *arg)
{
	struct linkrace *l = arg;
	struct rng r;

	rng_init(&r, l->adds, 3);
	while (!l->stop) {
		struct ibv_context *ctx = pair_open_dev(DEV_R);
		struct ibv_pd *pd;
		struct ep a = { 0 }, b = { 0 };

		if (!ctx) {
			usleep(1000);
			continue;
		}
		l->opens++;
		pd = ibv_alloc_pd(ctx);
		if (pd && !ep_open(&a, ctx, pd, 0, IBV_QPT_UD) &&
		    !ep_open(&b, ctx, pd, 0, IBV_QPT_RC))
			ep_post_recv(&a, 1, 0, 4096);
		ep_close(&a);
		ep_close(&b);
		if (pd)
			ibv_dealloc_pd(pd);
		ibv_close_device(ctx);
	}
	return NULL;
}

/*
 * The device comes and goes on lo of NS_R, or on IF_R of NS_R with the
 * veth's other end in NS_S; sib0 stays meanwhile.
 */
static void race_link(struct rng *r, int n, bool lo, struct linkrace *l)
{
	struct sib_topo t = {
		.kind = lo ? SIB_TOPO_LO : SIB_TOPO_VETH, .tag = RTAG,
		.flags = SIB_TOPO_NO_DEV | SIB_TOPO_BESIDE |
			 (lo ? SIB_TOPO_LO_NS : 0),
		.ip4 = { IP_R, "198.19.0.2" },
	};
	pthread_t ts, to;
	int self;

	memset(l, 0, sizeof(*l));
	if (topo_up(&t))
		return;
	if (lo)
		*l = (struct linkrace){ .ns = NS_R, .ndev = "lo",
					.dst = "127.0.0.1", .from_ns = NS_R };
	else
		*l = (struct linkrace){ .ns = NS_R, .ndev = IF_R,
					.dst = IP_R, .from_ns = NS_S };
	pthread_create(&ts, NULL, lr_sender, l);
	pthread_create(&to, NULL, lr_opener, l);
	/* This thread's netlink sockets live in the device's namespace. */
	self = ns_enter(l->ns);
	for (int i = 0; i < n; i++) {
		if (!nl_newlink(DEV_R, "sib", l->ndev))
			l->adds++;
		usleep(rn(r, 20000));
		if (!nl_dellink(DEV_R))
			l->dels++;
		usleep(rn(r, 5000));
	}
	ns_leave(self);
	l->stop = true;
	pthread_join(ts, NULL);
	pthread_join(to, NULL);
	sib_topo_down(&t);
}

static struct wpath *knob_dev_open(uint64_t seed)
{
	struct wpath *k = calloc(1, sizeof(*k));

	shq("ip link del " IF_K);
	if (!k || sh("ip link add " IF_K " type dummy && "
		     "ip addr add " IP_K "/24 dev " IF_K " && "
		     "ip link set " IF_K " up") ||
	    nl_newlink(DEV_K, "sib", IF_K)) {
		free(k);
		return NULL;
	}
	k->name = "knobs";
	k->by_failed = true;		/* targets only: nothing checked */
	pthread_mutex_init(&k->mu, NULL);
	rng_init(&k->r, seed, 11);
	k->tctx = k->pctx = pair_open_dev(DEV_K);
	k->tgid = k->pgid = k->tctx ? wait_gid_index(DEV_K, IP_K) : -1;
	k->tpd = k->tgid >= 0 ? ibv_alloc_pd(k->tctx) : NULL;
	k->ppd = k->tpd;
	if (!k->tpd) {
		free(k);
		return NULL;
	}
	for (int t = 0; t < NT; t++)
		target_build(k, t);
	pthread_create(&k->t, NULL, traffic_thread, k);
	return k;
}

static void knob_dev_close(struct wpath *k)
{
	if (!k)
		return;
	knobs_reset(DEV_K);
	k->stop = true;
	pthread_join(k->t, NULL);
	say("uverbs: %s under random fault knobs: %ld traffic rounds, %ld "
	    "completions ok, %ld QPs rebuilt\n", DEV_K, k->tg_rounds,
	    k->tg_ok, k->rebuilds);
	k->ppd = NULL;
	wpath_close(k);
	free(k);
	nl_dellink(DEV_K);
	shq("ip link del " IF_K);
}

/* With SIB_FUZZ_DEBUG set: the device's object counts, on one line. */
static void objects_note(const char *when)
{
	char buf[512];

	if (!getenv("SIB_FUZZ_DEBUG") ||
	    read_text(DBG_SIB "/" SIB_DEV "/objects", buf, sizeof(buf)) <= 0)
		return;
	for (char *c = buf; *c; c++)
		if (*c == '\n')
			*c = ' ';
	say("objects %s: %s\n", when, buf);
}

static int run_uverbs(const struct fopts *o)
{
	long n = o->count < 0 ? 20000 : o->count, nok = 0;
	struct upool u = { .dbfd = -1 };
	struct wpath *by = calloc(1, sizeof(*by));
	struct linkrace lv, ll = { 0 };
	struct wpath *kdev = NULL;
	struct cnts c0, c1;
	char base[4096] = "";
	double t0 = now_s();
	struct rng r;
	int fds[4], killed, rounds = n / 2000 + 1;

	rng_init(&r, o->seed, 1000);
	say("uverbs: seed %llu, %ld commands%s\n", (unsigned long long)o->seed,
	    n, o->no_link_race_lo ? ", no link races on lo" : "");
	u.ctx = sib_lo_setup(&u.gid);
	u.mem = aligned_alloc(4096, UP_MEM);
	if (!u.ctx || !u.mem || !by) {
		fail("uverbs: no sib0");
		goto out;
	}
	read_text(DBG_SIB "/" SIB_DEV "/objects", base, sizeof(base));
	if (sib_db_fds(fds, 4) == 1)
		u.dbfd = fds[0];
	/* Bystanders on another context: its traffic checked throughout. */
	by->name = "uverbs";
	by->no_targets = true;
	by->tctx = by->pctx = pair_open_dev(SIB_DEV);
	by->tgid = by->pgid = u.gid;
	rng_init(&by->r, o->seed, 8);
	by->bpd[0] = by->tctx ? ibv_alloc_pd(by->tctx) : NULL;
	if (!by->bpd[0] ||
	    ep_open(&by->by[0], by->tctx, by->bpd[0], u.gid, IBV_QPT_RC) ||
	    ep_open(&by->by[1], by->tctx, by->bpd[0], u.gid, IBV_QPT_RC) ||
	    ep_pair_connect(&by->by[0], &by->by[1], &by->r)) {
		fail("uverbs: bystander setup failed");
		goto out;
	}
	kdev = knob_dev_open(o->seed);
	if (!kdev) {
		fail("uverbs: no " DEV_K " for the fault knobs");
		goto out;
	}
	cnt_read(SIB_DEV, &c0);
	pthread_create(&by->t, NULL, traffic_thread, by);
	for (long i = 0; i < n; i++) {
		bool ok;
		int c;

		while ((c = ucmd(&u, &r, &ok)) < 0)
			;

		u.ok[c] += ok;
		u.err[c] += !ok;
		nok += ok;
		if (i % 2000 == 1999)
			say("uverbs: %ld commands, %ld succeeded\n", i + 1, nok);
		if (i % 500 == 250)
			race_destroy(&u, &r, 4);
	}
	knobs_reset(DEV_K);
	objects_note("after the commands");
	upool_free(&u);
	objects_note("after freeing the pool");
	race_destroy(&u, &r, 10 * rounds);
	objects_note("after the destroy races");
	killed = race_kill(o->seed, &r, 4 * rounds);
	objects_note("after the killed processes");
	sleep(1);
	objects_note("a second later");
	/* The children set knobs too. */
	knob_dev_close(kdev);
	kdev = NULL;
	by->stop = true;
	pthread_join(by->t, NULL);
	cnt_read(SIB_DEV, &c1);
	say("uverbs: %ld commands in %.1f s, %ld succeeded; %d processes "
	    "killed mid-operation\n", n, now_s() - t0, nok, killed);
	for (unsigned int i = 0; i < NUCMD; i++)
		say("uverbs:   %-10s %5ld ok %5ld refused\n", ucmd_names[i],
		    u.ok[i], u.err[i]);
	say("uverbs: bystanders %ld rounds, %ld bytes verified\n",
	    by->by_rounds, by->by_bytes);
	cnt_report(SIB_DEV, &c0, &c1);
	if (!by->by_failed && verified_transfer(u.ctx, u.gid, u.ctx, u.gid,
						o->seed))
		fail("uverbs: the final verified transfer on a fresh pair failed");
	race_link(&r, 10 * rounds, false, &lv);
	say("uverbs: link races on a veth: %ld adds, %ld deletes, %ld opens, "
	    "%ld packets\n", lv.adds, lv.dels, lv.opens, lv.pkts);
	if (!o->no_link_race_lo) {
		race_link(&r, 10 * rounds, true, &ll);
		say("uverbs: link races on lo: %ld adds, %ld deletes, %ld opens, "
		    "%ld packets\n", ll.adds, ll.dels, ll.opens, ll.pkts);
	}
	if (!lv.adds)
		fail("uverbs: no link add succeeded in the race");
out:
	knob_dev_close(kdev);
	if (by) {
		ep_close(&by->by[0]);
		ep_close(&by->by[1]);
		if (by->bpd[0])
			ibv_dealloc_pd(by->bpd[0]);
		if (by->tctx)
			ibv_close_device(by->tctx);
	}
	if (u.ctx) {
		upool_free(&u);
		objects_note("before close");
		ibv_close_device(u.ctx);
		objects_note("after close");
		if (base[0] && !objects_back(SIB_DEV, base))
			fail("uverbs: objects left behind");
	}
	free(u.mem);
	free(by);
	sib_delete_all();
	say("uverbs: %s\n", fuzz_failed ? "FAILED" : "done");
	return fuzz_failed ? -1 : 0;
}

/* ---- main, and the short runs of make check ------------------------------------ */

static void print_repro(const struct fopts *o)
{
	char extra[64] = "";

	if (!strcmp(o->cmd, "wire") && o->paths && o->paths != 3)
		snprintf(extra, sizeof(extra), " --path %s",
			 o->paths == 1 ? "veth" : "lo");
	if (!strcmp(o->cmd, "ring") && o->threads)
		snprintf(extra, sizeof(extra), " --threads %d", o->threads);
	if (!strcmp(o->cmd, "uverbs") && o->no_link_race_lo)
		snprintf(extra, sizeof(extra), " --no-link-race-lo");
	printf("# sib_fuzz %s FAILED: %s\n"
	       "# reproduce: scripts/vm-run --no-load -- .build/selftests/sib_fuzz "
	       "%s --seed %llu --count %ld%s\n", o->cmd, fail_msg, o->cmd,
	       (unsigned long long)o->seed, o->count, extra);
	fflush(stdout);
}

static int run_one(struct fopts *o)
{
	int ret;

	fuzz_failed = 0;
	fail_msg[0] = 0;
	if (!strcmp(o->cmd, "wire")) {
		if (o->count < 0)
			o->count = 1000000;
		ret = run_wire(o);
	} else if (!strcmp(o->cmd, "ring")) {
		if (o->count < 0)
			o->count = 100000;
		ret = run_ring(o);
	} else if (!strcmp(o->cmd, "uverbs")) {
		if (o->count < 0)
			o->count = 20000;
		ret = run_uverbs(o);
	} else {
		fprintf(stderr, "unknown fuzzer %s\n", o->cmd);
		return 2;
	}
	if (ret || fuzz_failed)
		print_repro(o);
	return ret || fuzz_failed ? 1 : 0;
}

static uint64_t default_seed(void)
{
	const char *e = getenv("SIB_FUZZ_SEED");
	struct timespec ts;

	if (e && *e)
		return strtoull(e, NULL, 0);
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000 % 1000;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: sib_fuzz wire|ring|uverbs|all [--seed N] [--count N]\n"
		"                [--path veth|lo|both] [--threads N] [--no-link-race-lo]\n"
		"       sib_fuzz [-t TEST] [-l]     the short runs (kselftest harness)\n"
		"defaults: seed from the clock (printed); count 1000000 packets,\n"
		"100000 WQEs, 20000 commands; all: each with its default count\n");
}

static int fuzz_main(int argc, char **argv)
{
	static const struct option lo[] = {
		{ "seed", required_argument, NULL, 's' },
		{ "count", required_argument, NULL, 'n' },
		{ "path", required_argument, NULL, 'p' },
		{ "threads", required_argument, NULL, 'j' },
		{ "no-link-race-lo", no_argument, NULL, 'L' },
		{ "help", no_argument, NULL, 'h' },
		{ }
	};
	struct fopts o = { .cmd = argv[1], .count = -1 };
	int c, ret = 0;

	o.seed = default_seed();
	optind = 2;
	while ((c = getopt_long(argc, argv, "s:n:p:j:Lh", lo, NULL)) != -1) {
		switch (c) {
		case 's':
			o.seed = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			o.count = strtol(optarg, NULL, 0);
			break;
		case 'p':
			o.paths = !strcmp(optarg, "veth") ? 1 :
				  !strcmp(optarg, "lo") ? 2 : 3;
			break;
		case 'j':
			o.threads = atoi(optarg);
			break;
		case 'L':
			o.no_link_race_lo = true;
			break;
		default:
			usage();
			return 2;
		}
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("# sib_fuzz %s: seed %llu\n", o.cmd, (unsigned long long)o.seed);
	if (strcmp(o.cmd, "all"))
		return run_one(&o);
	{
		static const char *const all[] = { "wire", "ring", "uverbs" };
		long count = o.count;
		double t0 = now_s();

		for (int i = 0; i < 3; i++) {
			o.cmd = all[i];
			o.count = count;
			ret |= run_one(&o);
		}
		printf("# sib_fuzz all: %s in %.0f s\n", ret ? "FAILED" : "passed",
		       now_s() - t0);
	}
	return ret;
}

/*
 * The short runs: a regression that any fuzzer finds in a few seconds is
 * caught by make check. The seed comes from SIB_FUZZ_SEED or the clock.
 */
static int short_run(const char *cmd, long count)
{
	struct fopts o = { .cmd = cmd, .count = count };

	o.seed = default_seed();
	printf("# sib_fuzz %s: seed %llu\n", cmd, (unsigned long long)o.seed);
	return run_one(&o);
}

FIXTURE(fuzz) {
	int unused;
};

FIXTURE_SETUP(fuzz)
{
}

FIXTURE_TEARDOWN(fuzz)
{
	wire_cleanup();
}

TEST_F_TIMEOUT(fuzz, wire_short, 600)
{
	ASSERT_EQ(0, short_run("wire", 20000));
}

TEST_F_TIMEOUT(fuzz, ring_short, 600)
{
	ASSERT_EQ(0, short_run("ring", 10000));
}

TEST_F_TIMEOUT(fuzz, uverbs_short, 600)
{
	ASSERT_EQ(0, short_run("uverbs", 400));
}

int main(int argc, char **argv)
{
	if (argc > 1 && argv[1][0] != '-')
		return fuzz_main(argc, argv);
	return sib_harness_main(argc, argv);
}
