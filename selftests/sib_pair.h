/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers for sib's data-path selftests: a "pair" of RC QPs of one process
 * on sib0 over lo, connected to each other; registered buffers; posting
 * and waiting for completions with a timeout, so that a bug never hangs
 * the suite.
 *
 * The helpers do not use the harness' ASSERT macros (they need the test's
 * metadata); they return false or a negative value and say why on stderr.
 */
#ifndef SIB_PAIR_H
#define SIB_PAIR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <infiniband/verbs.h>

#define SIB_DEV		"sib0"
extern int sib_wait_ms;	/* completion timeout, 5000 ms unless a test changes it */
#define WAIT_MS		sib_wait_ms

/* Open @name, or NULL. */
struct ibv_context *pair_open_dev(const char *name);

/*
 * Create sib0 on lo (module loaded, old devices removed) and open it;
 * wait until the GID table holds ::ffff:127.0.0.1. Returns the context
 * and the GID index in *gid_index, or NULL.
 */
struct ibv_context *sib_lo_setup(int *gid_index);
void sib_lo_teardown(struct ibv_context *ctx);

/* GID index holding ::ffff:127.0.0.1, or -1. */
int find_lo_gid(struct ibv_context *ctx);
/* "key N" of sib0's debugfs objects file (live objects by type), or -1. */
long long objects_value(const char *key);

/* Bytes and their MR (buf_new()). */
struct buf {
	uint8_t *p;
	size_t len;
	struct ibv_mr *mr;
};

struct pair_opts {
	uint32_t sq_wr, rq_wr, max_sge, max_inline, cq_depth;
	int access[2];		/* qp_access_flags of QP 0 / QP 1 */
	uint8_t timeout, retry_cnt, rnr_retry, min_rnr_timer;
	enum ibv_mtu mtu;
	uint32_t psn[2];	/* sq_psn of QP i (= rq_psn of its peer) */
	uint32_t dest_qpn[2];	/* 0: the other QP of the pair */
	struct ibv_srq *srq[2];	/* receive from an SRQ */
	struct ibv_comp_channel *chan[2];	/* for the recv CQ of QP i */
	bool sig_all;
	uint64_t send_ops[2];	/* not 0: QP i takes ibv_wr_*, created with */
				/* these send_ops_flags (PAIR_QPX_OPS | ...) */
	enum ibv_qp_type qp_type;	/* 0: IBV_QPT_RC; or IBV_QPT_UC */
	bool one_cq;		/* QP i sends and receives on one CQ: */
				/* scq[i] == rcq[i] (chan[i] is its channel) */
	uint8_t rd_atomic;	/* max_rd_atomic, max_dest_rd_atomic; 0: 16 */
	size_t buf_len;		/* not 0: a buffer buf[i] on each end's PD, */
	int buf_access;		/* registered with buf_access */
};

void pair_default_opts(struct pair_opts *o);

/* The ibv_wr_* operations most tests of the extended API want. */
#define PAIR_QPX_OPS	(IBV_QP_EX_WITH_SEND | IBV_QP_EX_WITH_RDMA_WRITE | \
			 IBV_QP_EX_WITH_RDMA_READ | IBV_QP_EX_WITH_BIND_MW | \
			 IBV_QP_EX_WITH_LOCAL_INV | \
			 IBV_QP_EX_WITH_SEND_WITH_INV)

/*
 * One end of a pair: the device, PD and GID index of QP i. pair_create()
 * puts both ends on one device; pair_create_ends() on two.
 */
struct pair_end {
	const char *dev;	/* opened (and closed with the pair) if !ctx */
	struct ibv_context *ctx;
	struct ibv_pd *pd;	/* NULL: a PD of the pair's own */
	int gid;		/* GID index of the end's address */
};

/*
 * The one endpoint type of the selftests: two QPs connected to each
 * other, QP i with its CQs (and buffer) at end i. ctx, pd and gid_index
 * are end 0's, which on one device are end 1's too.
 */
struct pair {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	int gid_index;
	struct pair_end end[2];
	bool own_ctx[2], own_pd[2];
	struct pair_opts o;
	struct ibv_cq *scq[2], *rcq[2];
	struct ibv_qp *qp[2];
	struct ibv_qp_cap cap[2];	/* as granted */
	struct buf buf[2];		/* o.buf_len bytes, or none */
};

/*
 * Create CQs and QPs (on @pd, or a new PD if NULL) and connect QP 0 and
 * QP 1 to each other (RESET -> INIT -> RTR -> RTS). 0 or an errno.
 */
int pair_create(struct pair *p, struct ibv_context *ctx, struct ibv_pd *pd,
		int gid_index, const struct pair_opts *o);
/*
 * The same with QP i at @end[i], e.g. on two devices: a device named in
 * end[i].dev is opened and a PD made on it (p->end[i] then holds them);
 * pair_destroy() closes what the pair opened.
 */
int pair_create_ends(struct pair *p, const struct pair_end end[2],
		     const struct pair_opts *o);
struct sib_topo;
/*
 * pair_create_ends() on the topology's two devices (sib_topo.h): QP 0 on
 * end a (t->ibdev[0], GID t->gid[0]), QP 1 on end b.
 */
int pair_create_topo(struct pair *p, const struct sib_topo *t,
		     const struct pair_opts *o);
/* Everything the pair made, and the contexts it opened. Again is a no-op. */
void pair_destroy(struct pair *p);
/* Both QPs to RESET, CQs drained, and connected again (p->o as it is now). */
int pair_reconnect(struct pair *p);
/* Just the state walk of one QP to RTS. */
int qp_to_rts(struct pair *p, int i);
/*
 * Any RC, UC or UD QP from RESET to RTS, connected to QP @dqpn at @dgid
 * (from GID index @sgid; max_rd_atomic 4, rnr_retry 7, UD Q_Key
 * 0x11111111). 0 or an errno.
 */
int qp_connect_to(struct ibv_qp *qp, int sgid, const union ibv_gid *dgid,
		  uint32_t dqpn, uint32_t rq_psn, uint32_t sq_psn,
		  enum ibv_mtu mtu, uint8_t timeout, uint8_t retry_cnt);
int qp_modify_state(struct ibv_qp *qp, enum ibv_qp_state s);
/* The QP's state according to ibv_query_qp, or -1. */
int qp_state(struct ibv_qp *qp);
/* Wait until the QP reaches @s (engines move it asynchronously). */
bool qp_wait_state(struct ibv_qp *qp, enum ibv_qp_state s, int ms);
const char *qps_str(int s);

/* ---- buffers -------------------------------------------------------- */

/* Page-aligned @len bytes (zeroed), registered with @access (-1: none). */
int buf_new(struct buf *b, struct ibv_pd *pd, size_t len, int access);
void buf_free(struct buf *b);
/*
 * @len bytes of fresh anonymous memory, never touched (no page is
 * present), registered with @access (IBV_ACCESS_ON_DEMAND for the ODP
 * tests); freed with odp_free().
 */
int odp_buf(struct buf *b, struct ibv_pd *pd, size_t len, int access);
void odp_free(struct buf *b);
static inline uint64_t buf_addr(const struct buf *b, size_t off)
{
	return (uintptr_t)(b->p + off);
}

/* Deterministic pseudo-random bytes. */
void fill_pattern(void *p, size_t len, uint32_t seed);
/* Offset of the first difference, or -1. */
long first_diff(const void *a, const void *b, size_t len);
/* Offset of the first byte != @c, or -1. */
long first_not(const void *p, size_t len, uint8_t c);

/* ---- posting ---------------------------------------------------------- */

struct ibv_sge mk_sge(const struct buf *b, size_t off, uint32_t len);

int post_send_wr(struct ibv_qp *qp, struct ibv_send_wr *wr);
/* One WR: @opcode with @nsge SGEs; remote fields for RDMA/atomics. */
int post_op(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint64_t wr_id,
	    struct ibv_sge *sge, int nsge, unsigned int flags,
	    uint64_t raddr, uint32_t rkey);
int post_atomic(struct ibv_qp *qp, enum ibv_wr_opcode opcode, uint64_t wr_id,
		struct ibv_sge *sge, unsigned int flags, uint64_t raddr,
		uint32_t rkey, uint64_t compare_add, uint64_t swap);
int post_recv_sges(struct ibv_qp *qp, uint64_t wr_id, struct ibv_sge *sge,
		   int nsge);
int post_srq_recv_sges(struct ibv_srq *srq, uint64_t wr_id,
		       struct ibv_sge *sge, int nsge);

/* ---- completions ------------------------------------------------------ */

/*
 * Poll until @n completions were taken or @ms passed; returns how many
 * (or -1 if ibv_poll_cq failed).
 */
int poll_n(struct ibv_cq *cq, struct ibv_wc *wc, int n, int ms);
/* Nothing arrives on @cq within @ms. */
bool cq_quiet(struct ibv_cq *cq, int ms);
/* Take everything that is there now; returns the count. */
int cq_drain(struct ibv_cq *cq);

const char *wcs(enum ibv_wc_status s);

/* Wait up to @ms for an async event of @type; acks everything seen. */
bool wait_async_event(struct ibv_context *ctx, enum ibv_event_type type,
		      int ms, struct ibv_async_event *out);
/* Count the async events of @type that arrive within @ms. */
int count_async_events(struct ibv_context *ctx, enum ibv_event_type type,
		       int ms);

/* ---- extended QPs and CQs (ibv_wr_*, ibv_start_poll) ------------------- */

/*
 * Two RC QPs (ibv_wr_* API: SEND and RDMA_WRITE; 16 WRs and one SGE each
 * way) on @pd, which may be a parent domain, sharing the extended CQ @cq,
 * connected to each other over GID index @gid (MTU 1024). 0 or an errno.
 */
int qp_ex_pair(struct ibv_context *ctx, struct ibv_pd *pd, int gid,
	       struct ibv_cq_ex *cq, struct ibv_qp *qp[2]);
/*
 * The next completion of @cq through the extended API (ibv_start_poll),
 * within WAIT_MS: wr_id, status, opcode, byte_len and qp_num in @wc. 0, or
 * ENOENT when none came, or ibv_start_poll's error.
 */
int cq_ex_next(struct ibv_cq_ex *cq, struct ibv_wc *wc);

/* Milliseconds of CLOCK_MONOTONIC. */
long now_ms(void);
/* Microseconds of CLOCK_MONOTONIC. */
double now_us(void);
/* qsort() comparison of doubles (the benchmark helpers' percentiles). */
int cmp_double(const void *a, const void *b);

#endif /* SIB_PAIR_H */
