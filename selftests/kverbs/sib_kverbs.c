// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib_kverbs: kernel verbs tests for sib, run from user space through
 * debugfs. Writing "TEST DEV0 GID0 [DEV1 GID1]" to
 * /sys/kernel/debug/sib_kverbs/run runs TEST synchronously between QPs
 * on DEV0 (side 0, the requester) and DEV1 (side 1, the target; DEV0 if
 * not given), with the given GID indexes; reading the file gives "ok",
 * "ok: <note>", "skip: <reason>" or "fail: <reason>" lines.
 *
 * The QPs are connected with ib_modify_qp() directly, not with the
 * rdma_cm: the tests drive QPs into the error state and need to know
 * where each one is, synchronously; the rdma_cm's own path is tested by
 * sib_cm and by the ULPs. sib routes RoCEv2 by IP, so the AV's DMAC is
 * left zero (a kernel consumer must pass it resolved; sib does not use
 * it).
 */

#include <linux/module.h>
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/scatterlist.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <rdma/ib_cache.h>
#include <rdma/ib_verbs.h>
#include <rdma/rw.h>

#define KV_WAIT_MS	5000
#define KV_MSG_SZ	4096	/* receive half, send half of the message buffer */
#define KV_MAXCH	16	/* chunks of a test buffer */
#define KV_OUT_SZ	2048
/* rdma_rw_ctx.type of a context that registered MRs (ib_core's rw.c) */
#define KV_RW_MR	2

/* ---- results --------------------------------------------------------- */

static char kv_out[KV_OUT_SZ];
static size_t kv_out_len;
static int kv_nfail;
static char kv_note[160];	/* "ok: <note>" or "skip: <reason>" */
static bool kv_skipped;
static DEFINE_MUTEX(kv_lock);

static __printf(2, 3) void kv_line(const char *tag, const char *fmt, ...)
{
	va_list ap;

	if (kv_out_len >= sizeof(kv_out) - 2)
		return;
	kv_out_len += scnprintf(kv_out + kv_out_len,
				sizeof(kv_out) - kv_out_len, "%s", tag);
	va_start(ap, fmt);
	kv_out_len += vscnprintf(kv_out + kv_out_len,
				 sizeof(kv_out) - kv_out_len, fmt, ap);
	va_end(ap);
	kv_out_len += scnprintf(kv_out + kv_out_len,
				sizeof(kv_out) - kv_out_len, "\n");
}

/* @cond, or record a failure (the first few) and return false. */
static __printf(3, 4) bool __kv_chk(bool cond, int line, const char *fmt, ...)
{
	struct va_format vaf;
	va_list ap;

	if (cond)
		return true;
	if (kv_nfail++ < 4) {
		va_start(ap, fmt);
		vaf.fmt = fmt;
		vaf.va = &ap;
		kv_line("fail: ", "line %d: %pV", line, &vaf);
		va_end(ap);
	}
	return false;
}

#define kv_chk(c, fmt, ...) __kv_chk(!!(c), __LINE__, fmt, ##__VA_ARGS__)

/* What "ok" says besides; or why the test could not run (@skip). */
static __printf(2, 3) void kv_say(bool skip, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vscnprintf(kv_note, sizeof(kv_note), fmt, ap);
	va_end(ap);
	kv_skipped |= skip;
}

static const char *kv_st(int status)
{
	return ib_wc_status_msg(status);
}

/* ---- test buffers: chunks of pages, and their scatterlist ------------ */

/*
 * @n chunks of 2^@order pages. The region the scatterlist describes
 * starts @off bytes into the first chunk and ends @tail bytes before the
 * end of the last one; the bytes outside it are canaries.
 */
struct kv_buf {
	struct page **pg;
	struct scatterlist *sg;
	unsigned int order, n, off, tail;
	size_t chunk, len;
	int mapped;		/* entries ib_dma_map_sg() mapped, or 0 */
	struct ib_device *dev;
};

#define KV_CANARY	0xa5

static void kv_buf_free(struct kv_buf *b)
{
	unsigned int i;

	if (b->mapped)
		ib_dma_unmap_sg(b->dev, b->sg, b->n, DMA_BIDIRECTIONAL);
	b->mapped = 0;
	for (i = 0; i < b->n; i++)
		if (b->pg[i])
			__free_pages(b->pg[i], b->order);
	b->n = 0;
	kfree(b->pg);
	kfree(b->sg);
	b->pg = NULL;
	b->sg = NULL;
}

static int kv_buf_alloc(struct kv_buf *b, unsigned int order, unsigned int n,
			unsigned int off, unsigned int tail)
{
	unsigned int i;

	memset(b, 0, sizeof(*b));
	if (n > KV_MAXCH)
		return -EINVAL;
	b->pg = kcalloc(n, sizeof(*b->pg), GFP_KERNEL);
	b->sg = kcalloc(n, sizeof(*b->sg), GFP_KERNEL);
	if (!b->pg || !b->sg) {
		kv_buf_free(b);
		return -ENOMEM;
	}
	b->order = order;
	b->chunk = PAGE_SIZE << order;
	b->off = off;
	b->tail = tail;
	sg_init_table(b->sg, n);
	for (i = 0; i < n; i++) {
		size_t start = i ? 0 : off;
		size_t end = i == n - 1 ? b->chunk - tail : b->chunk;

		b->pg[i] = alloc_pages(GFP_KERNEL | __GFP_COMP | __GFP_NOWARN,
				       order);
		b->n = i + 1;
		if (!b->pg[i]) {
			kv_buf_free(b);
			return -ENOMEM;
		}
		memset(page_address(b->pg[i]), KV_CANARY, b->chunk);
		sg_set_page(&b->sg[i], b->pg[i], end - start, start);
		b->len += end - start;
	}
	return 0;
}

static int kv_buf_map(struct kv_buf *b, struct ib_device *dev)
{
	b->dev = dev;
	b->mapped = ib_dma_map_sg(dev, b->sg, b->n, DMA_BIDIRECTIONAL);
	return b->mapped == b->n ? 0 : -EIO;
}

/* Byte @k of the region. */
static u8 *kv_buf_at(struct kv_buf *b, size_t k)
{
	size_t pos = k + b->off;

	return (u8 *)page_address(b->pg[pos / b->chunk]) + pos % b->chunk;
}

static u8 kv_pat(u32 seed, size_t k)
{
	return (u8)(k * 7 + (k >> 8) * 13 + seed);
}

static void kv_buf_fill(struct kv_buf *b, u32 seed)
{
	size_t k;

	for (k = 0; k < b->len; k++)
		*kv_buf_at(b, k) = kv_pat(seed, k);
}

/* The region holds the pattern of @seed from @pos on and the canaries are intact. */
static bool kv_buf_check(struct kv_buf *b, u32 seed, size_t pos,
			 const char *what)
{
	u8 *first = page_address(b->pg[0]);
	u8 *last = page_address(b->pg[b->n - 1]);
	size_t k;

	for (k = 0; k < b->len; k++) {
		u8 got = *kv_buf_at(b, k), want = kv_pat(seed, k + pos);

		if (!kv_chk(got == want,
			    "%s: byte %zu of %zu is 0x%02x, not 0x%02x",
			    what, k, b->len, got, want))
			return false;
	}
	for (k = 0; k < b->off; k++)
		if (!kv_chk(first[k] == KV_CANARY,
			    "%s: canary byte %zu before the region is 0x%02x",
			    what, k, first[k]))
			return false;
	for (k = b->chunk - b->tail; k < b->chunk; k++)
		if (!kv_chk(last[k] == KV_CANARY,
			    "%s: canary byte %zu of the last chunk is 0x%02x",
			    what, k, last[k]))
			return false;
	return true;
}

/* SGEs over the region, one per chunk, through @lkey. */
static int kv_buf_sges(struct kv_buf *b, struct ib_sge *sge, u32 lkey)
{
	unsigned int i;

	for (i = 0; i < b->n; i++) {
		sge[i].addr = sg_dma_address(&b->sg[i]);
		sge[i].length = sg_dma_len(&b->sg[i]);
		sge[i].lkey = lkey;
	}
	return b->n;
}

/* ---- completions -------------------------------------------------------- */

/* A WR's completion through its ib_cqe, with the context it ran in. */
struct kv_cqe {
	struct ib_cqe cqe;
	struct completion done;
	struct ib_wc wc;
	bool softirq, worker;
	bool fired;	/* done ran (the completion may be consumed) */
	struct task_struct *task;
};

static void kv_cqe_done(struct ib_cq *cq, struct ib_wc *wc)
{
	struct kv_cqe *c = container_of(wc->wr_cqe, struct kv_cqe, cqe);

	c->wc = *wc;
	c->softirq = in_serving_softirq();
	c->worker = !in_interrupt() && current_work();
	c->task = current;
	WRITE_ONCE(c->fired, true);
	complete(&c->done);
}

static void kv_cqe_init(struct kv_cqe *c)
{
	memset(c, 0, sizeof(*c));
	c->cqe.done = kv_cqe_done;
	init_completion(&c->done);
}

static bool kv_cqe_wait(struct kv_cqe *c, struct ib_cq *cq, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	if (cq->poll_ctx != IB_POLL_DIRECT)
		return wait_for_completion_timeout(&c->done,
						   msecs_to_jiffies(ms));
	while (!READ_ONCE(c->fired) && time_before(jiffies, end)) {
		if (!ib_process_cq_direct(cq, 16))
			usleep_range(20, 100);
	}
	return READ_ONCE(c->fired);
}

/* One WC from a CQ polled with ib_poll_cq(); false on time-out. */
static bool kv_poll(struct ib_cq *cq, struct ib_wc *wc, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);

	do {
		if (ib_poll_cq(cq, 1, wc) > 0)
			return true;
		usleep_range(20, 100);
	} while (time_before(jiffies, end));
	return ib_poll_cq(cq, 1, wc) > 0;
}

/* The next WC of @cq is @wr_id's, with @status and @opcode (-1: any). */
static bool kv_expect(struct ib_cq *cq, u64 wr_id, int status, int opcode,
		      const char *what, struct ib_wc *out)
{
	struct ib_wc wc;

	if (!kv_chk(kv_poll(cq, &wc, KV_WAIT_MS), "%s: no completion in %d ms",
		    what, KV_WAIT_MS))
		return false;
	if (out)
		*out = wc;
	if (!kv_chk(wc.wr_id == wr_id, "%s: completion of wr_id %llu, not %llu (%s)",
		    what, wc.wr_id, wr_id, kv_st(wc.status)))
		return false;
	if (!kv_chk(wc.status == status, "%s: status %s (%d), not %s (%d)",
		    what, kv_st(wc.status), wc.status, kv_st(status), status))
		return false;
	return kv_chk(opcode < 0 || wc.opcode == opcode,
		      "%s: opcode %d, not %d", what, wc.opcode, opcode);
}

static bool kv_expect_none(struct ib_cq *cq, int ms, const char *what)
{
	struct ib_wc wc;

	if (!kv_poll(cq, &wc, ms))
		return true;
	return kv_chk(false, "%s: unexpected completion wr_id %llu %s opcode %d",
		      what, wc.wr_id, kv_st(wc.status), wc.opcode);
}

/* ---- QP pairs ------------------------------------------------------------ */

struct kv_side {
	struct ib_device *dev;
	int gid_idx;
	struct ib_pd *pd;
	struct ib_cq *scq, *rcq;
	struct ib_qp *qp;
	u8 *msg;		/* KV_MSG_SZ receive bytes, then KV_MSG_SZ to send */
	u64 msg_dma;
	bool pool, own_pd;
	int cqe;
	spinlock_t ev_lock;	/* events */
	int nev;
	enum ib_event_type ev[8];
};

struct kv_opts {
	enum ib_qp_type type;
	enum ib_poll_context poll;
	bool pool;		/* CQs from ib_cq_pool_get() */
	u32 sq, rq, send_sge, inline_data, rdma_ctxs;
	unsigned int pd_flags[2];
	struct ib_pd *pd[2];	/* a PD to use instead of a new one */
	struct ib_srq *srq[2];
	bool sig_all;
};

struct kv_pair {
	struct kv_side s[2];
	struct kv_opts o;
	struct ib_qp_cap cap[2];	/* as granted */
	u32 psn[2];		/* sq_psn of side i, random */
};

struct kv_run {
	struct ib_device *dev[2];
	int gid[2];
};

static void kv_opts_default(struct kv_opts *o)
{
	memset(o, 0, sizeof(*o));
	o->type = IB_QPT_RC;
	o->poll = IB_POLL_DIRECT;
	o->sq = 64;
	o->rq = 64;
	o->send_sge = 8;
}

static void kv_qp_event(struct ib_event *ev, void *ctx)
{
	struct kv_side *s = ctx;
	unsigned long flags;

	spin_lock_irqsave(&s->ev_lock, flags);
	if (s->nev < ARRAY_SIZE(s->ev))
		s->ev[s->nev++] = ev->event;
	spin_unlock_irqrestore(&s->ev_lock, flags);
}

static bool kv_wait_event(struct kv_side *s, enum ib_event_type e, int ms)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	unsigned long flags;
	bool found;
	int i;

	do {
		found = false;
		spin_lock_irqsave(&s->ev_lock, flags);
		for (i = 0; i < s->nev; i++)
			found |= s->ev[i] == e;
		spin_unlock_irqrestore(&s->ev_lock, flags);
		if (found)
			return true;
		usleep_range(500, 1000);
	} while (time_before(jiffies, end));
	return false;
}

static int kv_qp_state(struct ib_qp *qp)
{
	struct ib_qp_init_attr init;
	struct ib_qp_attr attr;
	int ret;

	ret = ib_query_qp(qp, &attr, IB_QP_STATE, &init);
	return ret ? ret : attr.qp_state;
}

/* The QP reaches @state within @ms (the engines move it asynchronously). */
static bool kv_wait_state(struct ib_qp *qp, int state, int ms,
			  const char *what)
{
	unsigned long end = jiffies + msecs_to_jiffies(ms);
	int st;

	do {
		st = kv_qp_state(qp);
		if (st == state)
			return true;
		usleep_range(200, 500);
	} while (time_before(jiffies, end));
	return kv_chk(false, "%s: QP state %d, not %d", what, st, state);
}

static void kv_side_destroy(struct kv_side *s)
{
	if (s->qp)
		ib_destroy_qp(s->qp);
	if (s->pool) {
		if (s->scq)
			ib_cq_pool_put(s->scq, s->cqe);
		if (s->rcq)
			ib_cq_pool_put(s->rcq, s->cqe);
	} else {
		if (s->scq)
			ib_free_cq(s->scq);
		if (s->rcq)
			ib_free_cq(s->rcq);
	}
	if (s->msg) {
		ib_dma_unmap_single(s->dev, s->msg_dma, 2 * KV_MSG_SZ,
				    DMA_BIDIRECTIONAL);
		kfree(s->msg);
	}
	if (s->pd && s->own_pd)
		ib_dealloc_pd(s->pd);
	memset(s, 0, sizeof(*s));
}

static void kv_pair_destroy(struct kv_pair *p)
{
	kv_side_destroy(&p->s[0]);
	kv_side_destroy(&p->s[1]);
}

static int kv_side_create(struct kv_pair *p, struct kv_run *r, int i)
{
	struct kv_side *s = &p->s[i];
	struct ib_qp_init_attr init = {};
	const struct kv_opts *o = &p->o;
	struct ib_cq *cq;

	s->dev = r->dev[i];
	s->gid_idx = r->gid[i];
	spin_lock_init(&s->ev_lock);
	s->pd = o->pd[i];
	if (!s->pd) {
		s->pd = ib_alloc_pd(s->dev, o->pd_flags[i]);
		s->own_pd = true;
	}
	if (IS_ERR(s->pd)) {
		kv_chk(false, "ib_alloc_pd: %ld", PTR_ERR(s->pd));
		s->pd = NULL;
		return -EIO;
	}
	s->msg = kzalloc(2 * KV_MSG_SZ, GFP_KERNEL);
	if (!s->msg)
		return -ENOMEM;
	s->msg_dma = ib_dma_map_single(s->dev, s->msg, 2 * KV_MSG_SZ,
				       DMA_BIDIRECTIONAL);
	s->cqe = min_t(int, o->sq + o->rq + 16, s->dev->attrs.max_cqe);
	s->pool = o->pool;
	if (o->pool) {
		cq = ib_cq_pool_get(s->dev, s->cqe, -1, IB_POLL_SOFTIRQ);
		if (!kv_chk(!IS_ERR(cq), "ib_cq_pool_get: %ld", PTR_ERR(cq)))
			return -EIO;
		s->scq = cq;
		s->rcq = ib_cq_pool_get(s->dev, s->cqe, -1, IB_POLL_SOFTIRQ);
		if (!kv_chk(!IS_ERR(s->rcq), "ib_cq_pool_get: %ld",
			    PTR_ERR(s->rcq))) {
			s->rcq = NULL;
			return -EIO;
		}
	} else {
		cq = ib_alloc_cq(s->dev, s, s->cqe, 0, o->poll);
		if (!kv_chk(!IS_ERR(cq), "ib_alloc_cq: %ld", PTR_ERR(cq)))
			return -EIO;
		s->scq = cq;
		cq = ib_alloc_cq(s->dev, s, s->cqe, 0, o->poll);
		if (!kv_chk(!IS_ERR(cq), "ib_alloc_cq: %ld", PTR_ERR(cq)))
			return -EIO;
		s->rcq = cq;
	}
	init.event_handler = kv_qp_event;
	init.qp_context = s;
	init.send_cq = s->scq;
	init.recv_cq = s->rcq;
	init.srq = o->srq[i];
	init.cap.max_send_wr = o->sq;
	init.cap.max_recv_wr = o->srq[i] ? 0 : o->rq;
	init.cap.max_send_sge = o->send_sge;
	init.cap.max_recv_sge = 4;
	init.cap.max_inline_data = o->inline_data;
	init.cap.max_rdma_ctxs = o->rdma_ctxs;
	init.sq_sig_type = o->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	init.qp_type = o->type;
	init.port_num = 1;
	s->qp = ib_create_qp(s->pd, &init);
	if (!kv_chk(!IS_ERR(s->qp), "ib_create_qp: %ld", PTR_ERR(s->qp))) {
		s->qp = NULL;
		return -EIO;
	}
	p->cap[i] = init.cap;
	return 0;
}

static int kv_modify(struct ib_qp *qp, struct ib_qp_attr *a, int mask,
		     const char *what)
{
	int ret = ib_modify_qp(qp, a, mask);

	kv_chk(!ret, "ib_modify_qp(%s): %d", what, ret);
	return ret;
}

static int kv_connect_rc(struct kv_pair *p, int i)
{
	struct kv_side *s = &p->s[i], *peer = &p->s[!i];
	struct ib_qp_attr a = {};
	union ib_gid dgid;
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.pkey_index = 0;
	a.port_num = 1;
	a.qp_access_flags = IB_ACCESS_REMOTE_WRITE | IB_ACCESS_REMOTE_READ |
			    IB_ACCESS_REMOTE_ATOMIC;
	ret = kv_modify(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			IB_QP_PORT | IB_QP_ACCESS_FLAGS, "INIT");
	if (ret)
		return ret;
	ret = rdma_query_gid(peer->dev, 1, peer->gid_idx, &dgid);
	if (!kv_chk(!ret, "rdma_query_gid(%s, %d): %d", dev_name(&peer->dev->dev),
		    peer->gid_idx, ret))
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTR;
	a.path_mtu = IB_MTU_1024;
	a.dest_qp_num = peer->qp->qp_num;
	a.rq_psn = p->psn[!i];
	a.max_dest_rd_atomic = min_t(int, 8, s->dev->attrs.max_qp_rd_atom);
	a.min_rnr_timer = 1;
	a.ah_attr.type = rdma_ah_find_type(s->dev, 1);
	rdma_ah_set_port_num(&a.ah_attr, 1);
	rdma_ah_set_grh(&a.ah_attr, &dgid, 0, s->gid_idx, 64, 0);
	ret = kv_modify(s->qp, &a, IB_QP_STATE | IB_QP_AV | IB_QP_PATH_MTU |
			IB_QP_DEST_QPN | IB_QP_RQ_PSN |
			IB_QP_MAX_DEST_RD_ATOMIC | IB_QP_MIN_RNR_TIMER, "RTR");
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IB_QPS_RTS;
	a.timeout = 14;
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.sq_psn = p->psn[i];
	a.max_rd_atomic = min_t(int, 8, s->dev->attrs.max_qp_rd_atom);
	return kv_modify(s->qp, &a, IB_QP_STATE | IB_QP_TIMEOUT |
			 IB_QP_RETRY_CNT | IB_QP_RNR_RETRY | IB_QP_SQ_PSN |
			 IB_QP_MAX_QP_RD_ATOMIC, "RTS");
}

static int kv_connect_ud(struct kv_side *s)
{
	struct ib_qp_attr a = {};
	int ret;

	a.qp_state = IB_QPS_INIT;
	a.port_num = 1;
	a.qkey = 0x11111111;
	ret = kv_modify(s->qp, &a, IB_QP_STATE | IB_QP_PKEY_INDEX |
			IB_QP_PORT | IB_QP_QKEY, "UD INIT");
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTR;
	ret = kv_modify(s->qp, &a, IB_QP_STATE, "UD RTR");
	if (ret)
		return ret;
	a.qp_state = IB_QPS_RTS;
	a.sq_psn = 1;
	return kv_modify(s->qp, &a, IB_QP_STATE | IB_QP_SQ_PSN, "UD RTS");
}

static int kv_pair_create(struct kv_pair *p, struct kv_run *r,
			  const struct kv_opts *o)
{
	int ret, i;

	memset(p, 0, sizeof(*p));
	p->o = *o;
	/* No packet of an earlier pair's QPN is in sequence for this one. */
	p->psn[0] = get_random_u32() & 0xffffff;
	p->psn[1] = get_random_u32() & 0xffffff;
	for (i = 0; i < 2; i++) {
		ret = kv_side_create(p, r, i);
		if (ret)
			goto err;
	}
	for (i = 0; i < 2; i++) {
		ret = o->type == IB_QPT_RC ? kv_connect_rc(p, i) :
		      kv_connect_ud(&p->s[i]);
		if (ret)
			goto err;
	}
	return 0;
err:
	kv_pair_destroy(p);
	return ret ? ret : -EIO;
}

/* ---- posting ------------------------------------------------------------- */

static int kv_post(struct ib_qp *qp, struct ib_send_wr *wr, const char *what)
{
	const struct ib_send_wr *bad = NULL;
	int ret = ib_post_send(qp, wr, &bad);

	kv_chk(!ret, "%s: ib_post_send: %d", what, ret);
	return ret;
}

/* An RDMA or send WR with @n SGEs; @key: rkey, or the key to invalidate. */
static void kv_wr(struct ib_rdma_wr *w, enum ib_wr_opcode op, u64 wr_id,
		  struct ib_sge *sge, int n, int flags, u64 raddr, u32 key)
{
	memset(w, 0, sizeof(*w));
	w->wr.opcode = op;
	w->wr.wr_id = wr_id;
	w->wr.sg_list = sge;
	w->wr.num_sge = n;
	w->wr.send_flags = flags;
	w->remote_addr = raddr;
	w->rkey = key;
	if (op == IB_WR_LOCAL_INV || op == IB_WR_SEND_WITH_INV)
		w->wr.ex.invalidate_rkey = key;
}

static int kv_post1(struct ib_qp *qp, enum ib_wr_opcode op, u64 wr_id,
		    struct ib_sge *sge, int n, int flags, u64 raddr, u32 key,
		    const char *what)
{
	struct ib_rdma_wr w;

	kv_wr(&w, op, wr_id, sge, n, flags, raddr, key);
	return kv_post(qp, &w.wr, what);
}

static void kv_reg_wr(struct ib_reg_wr *w, struct ib_mr *mr, int access,
		      u64 wr_id, int flags)
{
	memset(w, 0, sizeof(*w));
	w->wr.opcode = IB_WR_REG_MR;
	w->wr.wr_id = wr_id;
	w->wr.send_flags = flags;
	w->mr = mr;
	w->key = mr->rkey;
	w->access = access;
}

static int kv_post_recv(struct kv_side *s, u64 wr_id)
{
	const struct ib_recv_wr *bad;
	struct ib_sge sge = {
		.addr = s->msg_dma, .length = KV_MSG_SZ,
		.lkey = s->pd->local_dma_lkey,
	};
	struct ib_recv_wr wr = { .wr_id = wr_id, .sg_list = &sge, .num_sge = 1 };
	int ret = ib_post_recv(s->qp, &wr, &bad);

	kv_chk(!ret, "ib_post_recv: %d", ret);
	return ret;
}

/* The message the target sends to name its region. */
struct kv_msg {
	u64 addr;
	u32 rkey;
	u32 len;
	u32 seq;
};

static struct ib_sge kv_msg_sge(struct kv_side *s, u32 len)
{
	struct ib_sge sge = {
		.addr = s->msg_dma + KV_MSG_SZ, .length = len,
		.lkey = s->pd->local_dma_lkey,
	};
	return sge;
}

/* Side 0 receives side 1's kv_msg (its receive posted before). */
static bool kv_recv_msg(struct kv_pair *p, u64 wr_id, struct kv_msg *m)
{
	struct ib_wc wc;

	if (!kv_expect(p->s[0].rcq, wr_id, IB_WC_SUCCESS, IB_WC_RECV, "msg",
		       &wc))
		return false;
	if (!kv_chk(wc.byte_len == sizeof(*m), "msg: byte_len %u, not %zu",
		    wc.byte_len, sizeof(*m)))
		return false;
	memcpy(m, p->s[0].msg, sizeof(*m));
	return true;
}

/* ---- fast registration ------------------------------------------------- */

#define KV_MR_ACCESS	(IB_ACCESS_LOCAL_WRITE | IB_ACCESS_REMOTE_WRITE | \
			 IB_ACCESS_REMOTE_READ)

/* Map @b into @mr with @pgsz pages, and check what ib_map_mr_sg() made. */
static bool kv_map(struct ib_mr *mr, struct kv_buf *b, unsigned int pgsz)
{
	int n = ib_map_mr_sg(mr, b->sg, b->n, NULL, pgsz);

	if (!kv_chk(n == b->n, "ib_map_mr_sg: %d of %u entries", n, b->n))
		return false;
	if (!kv_chk(mr->iova == sg_dma_address(&b->sg[0]),
		    "mr iova 0x%llx, not 0x%llx", mr->iova,
		    (u64)sg_dma_address(&b->sg[0])))
		return false;
	if (!kv_chk(mr->length == b->len, "mr length %llu, not %zu",
		    mr->length, b->len))
		return false;
	return kv_chk(mr->page_size == pgsz, "mr page_size %u, not %u",
		      mr->page_size, pgsz);
}

/*
 * Side 1 registers @b in @mr with key byte @key (REG_MR unsignaled, as
 * ULPs post it), then SENDs the rkey and address; side 0 (its receive
 * posted) gets them in @m.
 */
static bool kv_fastreg(struct kv_pair *p, struct ib_mr *mr, struct kv_buf *b,
		       unsigned int pgsz, u8 key, int access, struct kv_msg *m)
{
	struct kv_side *t = &p->s[1];
	struct kv_msg *out = (void *)(t->msg + KV_MSG_SZ);
	struct ib_reg_wr reg;
	struct ib_rdma_wr send;
	struct ib_sge sge;

	if (!kv_map(mr, b, pgsz))
		return false;
	ib_update_fast_reg_key(mr, key);
	if (kv_post_recv(&p->s[0], 77))
		return false;
	out->addr = mr->iova;
	out->rkey = mr->rkey;
	out->len = mr->length;
	sge = kv_msg_sge(t, sizeof(*out));
	kv_reg_wr(&reg, mr, access, 1, 0);
	kv_wr(&send, IB_WR_SEND, 2, &sge, 1, IB_SEND_SIGNALED, 0, 0);
	reg.wr.next = &send.wr;
	if (kv_post(t->qp, &reg.wr, "REG_MR + SEND"))
		return false;
	if (!kv_expect(t->scq, 2, IB_WC_SUCCESS, IB_WC_SEND, "SEND after REG_MR",
		       NULL))
		return false;
	if (!kv_recv_msg(p, 77, m))
		return false;
	return kv_chk(m->rkey == mr->rkey && m->addr == mr->iova,
		      "msg carries rkey 0x%x addr 0x%llx", m->rkey, m->addr);
}

/* Side 0's RDMA @op of its buffer @a to/from the target's (addr, rkey). */
static bool kv_rdma(struct kv_pair *p, enum ib_wr_opcode op, struct kv_buf *a,
		    u64 addr, u32 rkey, int status, const char *what)
{
	struct ib_sge sge[KV_MAXCH];
	int n = kv_buf_sges(a, sge, p->s[0].pd->local_dma_lkey);

	if (kv_post1(p->s[0].qp, op, 10, sge, n, IB_SEND_SIGNALED, addr, rkey,
		     what))
		return false;
	return kv_expect(p->s[0].scq, 10, status,
			 op == IB_WR_RDMA_READ ? IB_WC_RDMA_READ :
			 IB_WC_RDMA_WRITE, what, NULL);
}

/* Side 0 SENDs a small message and side 1 gets it: what precedes it landed. */
static bool kv_sync(struct kv_pair *p)
{
	struct ib_sge sge = kv_msg_sge(&p->s[0], 8);

	if (kv_post_recv(&p->s[1], 88))
		return false;
	if (kv_post1(p->s[0].qp, IB_WR_SEND, 11, &sge, 1, IB_SEND_SIGNALED, 0,
		     0, "sync SEND"))
		return false;
	return kv_expect(p->s[0].scq, 11, IB_WC_SUCCESS, IB_WC_SEND, "sync SEND",
			 NULL) &&
	       kv_expect(p->s[1].rcq, 88, IB_WC_SUCCESS, IB_WC_RECV, "sync RECV",
			 NULL);
}

/*
 * An access error's aftermath: the requester's QP and the responder's
 * are in the error state, and the responder's owner had
 * IB_EVENT_QP_ACCESS_ERR.
 */
static bool kv_access_err_after(struct kv_pair *p)
{
	return kv_wait_state(p->s[0].qp, IB_QPS_ERR, 1000, "requester") &&
	       kv_wait_state(p->s[1].qp, IB_QPS_ERR, 1000, "responder") &&
	       kv_chk(kv_wait_event(&p->s[1], IB_EVENT_QP_ACCESS_ERR, 1000),
		      "responder: no IB_EVENT_QP_ACCESS_ERR (%d events)",
		      p->s[1].nev);
}

/* Geometry of a fast registration test buffer by page size. */
static void kv_geom(unsigned int order, unsigned int *n, unsigned int *off,
		    unsigned int *tail)
{
	*n = order >= 9 ? 2 : 4;
	*off = 300 + (order ? 4096 * 3 : 0);
	*tail = 500;
}

/* fastreg_write / fastreg_read: @arg is the page order, | 0x100 for READ. */
static int t_fastreg(struct kv_run *r, unsigned long arg)
{
	unsigned int order = arg & 0xff, pgsz = PAGE_SIZE << order;
	bool read = arg & 0x100;
	unsigned int n, off, tail;
	struct kv_buf t = {}, a = {};
	struct ib_mr *mr = NULL;
	struct kv_pair p = {};
	struct kv_opts o;
	struct kv_msg m;

	kv_geom(order, &n, &off, &tail);
	if (kv_buf_alloc(&t, order, n, off, tail) ||
	    kv_buf_alloc(&a, order, n, off, tail)) {
		kv_say(true, "no %u chunks of order %u", n, order);
		goto out;
	}
	kv_opts_default(&o);
	if (kv_pair_create(&p, r, &o))
		goto out;
	mr = ib_alloc_mr(p.s[1].pd, IB_MR_TYPE_MEM_REG, n);
	if (!kv_chk(!IS_ERR(mr), "ib_alloc_mr(%u): %ld", n, PTR_ERR(mr))) {
		mr = NULL;
		goto out;
	}
	if (!kv_chk(!kv_buf_map(&t, p.s[1].dev), "map target") ||
	    !kv_chk(!kv_buf_map(&a, p.s[0].dev), "map source"))
		goto out;
	if (read)
		kv_buf_fill(&t, 31);
	else
		kv_buf_fill(&a, 17);
	if (!kv_fastreg(&p, mr, &t, pgsz, 0x5a, KV_MR_ACCESS, &m))
		goto out;
	if (!kv_chk(m.len == t.len, "region %u bytes, not %zu", m.len, t.len))
		goto out;
	if (read) {
		if (!kv_rdma(&p, IB_WR_RDMA_READ, &a, m.addr, m.rkey,
			     IB_WC_SUCCESS, "READ"))
			goto out;
		kv_buf_check(&a, 31, 0, "READ's sink");
		kv_buf_check(&t, 31, 0, "READ's source");
	} else {
		if (!kv_rdma(&p, IB_WR_RDMA_WRITE, &a, m.addr, m.rkey,
			     IB_WC_SUCCESS, "WRITE") || !kv_sync(&p))
			goto out;
		kv_buf_check(&t, 17, 0, "WRITE's target");
	}
	/* The region ends where it ends: one byte more is outside it. */
	if (!read) {
		struct ib_sge sge = { .addr = sg_dma_address(&a.sg[0]),
				      .length = 1,
				      .lkey = p.s[0].pd->local_dma_lkey };

		if (!kv_post1(p.s[0].qp, IB_WR_RDMA_WRITE, 12, &sge, 1,
			      IB_SEND_SIGNALED, m.addr + m.len, m.rkey,
			      "WRITE past the end"))
			kv_expect(p.s[0].scq, 12, IB_WC_REM_ACCESS_ERR,
				  IB_WC_RDMA_WRITE, "WRITE past the end", NULL);
		kv_buf_check(&t, 17, 0, "WRITE's target after the bad WRITE");
	}
out:
	/* The MR before its PD, which goes with the pair. */
	if (mr)
		ib_dereg_mr(mr);
	kv_pair_destroy(&p);
	kv_buf_free(&t);
	kv_buf_free(&a);
	return 0;
}

/* Side 1 posts one local WR (signaled) and it completes with @status. */
static bool kv_local(struct kv_pair *p, struct ib_send_wr *wr, int status,
		     int opcode, const char *what)
{
	struct kv_side *t = &p->s[1];

	wr->send_flags |= IB_SEND_SIGNALED;
	if (kv_post(t->qp, wr, what))
		return false;
	return kv_expect(t->scq, wr->wr_id, status, opcode, what, NULL);
}

static bool kv_local_inv(struct kv_pair *p, u32 key, int status,
			 const char *what)
{
	struct ib_rdma_wr w;

	kv_wr(&w, IB_WR_LOCAL_INV, 30, NULL, 0, 0, 0, key);
	return kv_local(p, &w.wr, status, IB_WC_LOCAL_INV, what);
}

/* A pair, a 4 KiB-page target region registered and named to side 0. */
struct kv_fr {
	struct kv_pair p;
	struct kv_buf t, a;
	struct ib_mr *mr;
	struct kv_msg m;
};

static void kv_fr_destroy(struct kv_fr *f)
{
	if (f->mr)
		ib_dereg_mr(f->mr);
	f->mr = NULL;
	kv_pair_destroy(&f->p);
	kv_buf_free(&f->t);
	kv_buf_free(&f->a);
}

static bool kv_fr_create(struct kv_fr *f, struct kv_run *r, u8 key)
{
	struct kv_opts o;

	memset(f, 0, sizeof(*f));
	kv_opts_default(&o);
	if (!kv_chk(!kv_buf_alloc(&f->t, 0, 4, 300, 500) &&
		    !kv_buf_alloc(&f->a, 0, 4, 300, 500), "no pages"))
		return false;
	if (kv_pair_create(&f->p, r, &o))
		return false;
	f->mr = ib_alloc_mr(f->p.s[1].pd, IB_MR_TYPE_MEM_REG, 4);
	if (!kv_chk(!IS_ERR(f->mr), "ib_alloc_mr: %ld", PTR_ERR(f->mr))) {
		f->mr = NULL;
		return false;
	}
	if (!kv_chk(!kv_buf_map(&f->t, f->p.s[1].dev), "map target") ||
	    !kv_chk(!kv_buf_map(&f->a, f->p.s[0].dev), "map source"))
		return false;
	return kv_fastreg(&f->p, f->mr, &f->t, SZ_4K, key, KV_MR_ACCESS,
			  &f->m);
}

/* Side 0 WRITEs its buffer (pattern @seed) to (addr, rkey); side 1 checks. */
static bool kv_fr_write(struct kv_fr *f, u32 rkey, u32 seed)
{
	kv_buf_fill(&f->a, seed);
	return kv_rdma(&f->p, IB_WR_RDMA_WRITE, &f->a, f->m.addr, rkey,
		       IB_WC_SUCCESS, "WRITE") && kv_sync(&f->p) &&
	       kv_buf_check(&f->t, seed, 0, "WRITE's target");
}

/* Side 0's WRITE to @rkey fails, the target's bytes (pattern @seed) stay. */
static bool kv_fr_write_fails(struct kv_fr *f, u32 rkey, u32 seed)
{
	kv_buf_fill(&f->a, seed + 1);
	return kv_rdma(&f->p, IB_WR_RDMA_WRITE, &f->a, f->m.addr, rkey,
		       IB_WC_REM_ACCESS_ERR, "WRITE to an invalid rkey") &&
	       kv_access_err_after(&f->p) &&
	       kv_buf_check(&f->t, seed, 0, "target after the refused WRITE");
}

static int t_key_rotation(struct kv_run *r, unsigned long arg)
{
	struct ib_reg_wr reg;
	struct kv_fr f;
	u32 old;

	if (!kv_fr_create(&f, r, 0x10) || !kv_fr_write(&f, f.m.rkey, 3))
		goto out;
	old = f.m.rkey;
	if (!kv_local_inv(&f.p, old, IB_WC_SUCCESS, "LOCAL_INV"))
		goto out;
	/* The MR is free: map it again under the next key. */
	if (!kv_map(f.mr, &f.t, SZ_4K))
		goto out;
	ib_update_fast_reg_key(f.mr, 0x11);
	if (!kv_chk(f.mr->rkey != old && (f.mr->rkey >> 8) == (old >> 8),
		    "new rkey 0x%x, old 0x%x", f.mr->rkey, old))
		goto out;
	kv_reg_wr(&reg, f.mr, KV_MR_ACCESS, 31, 0);
	if (!kv_local(&f.p, &reg.wr, IB_WC_SUCCESS, IB_WC_REG_MR, "REG_MR"))
		goto out;
	if (!kv_fr_write(&f, f.mr->rkey, 4))
		goto out;
	kv_fr_write_fails(&f, old, 4);
out:
	kv_fr_destroy(&f);
	return 0;
}

static int t_local_inv(struct kv_run *r, unsigned long arg)
{
	struct ib_rdma_wr send;
	struct ib_sge sge;
	struct kv_fr f;

	if (!kv_fr_create(&f, r, 0x20) || !kv_fr_write(&f, f.m.rkey, 5))
		goto out;
	if (!kv_local_inv(&f.p, f.m.rkey, IB_WC_SUCCESS, "LOCAL_INV") ||
	    !kv_fr_write_fails(&f, f.m.rkey, 5))
		goto out;
	kv_fr_destroy(&f);

	/* LOCAL_INV of the wrong key: the key byte differs. */
	if (!kv_fr_create(&f, r, 0x30) || !kv_fr_write(&f, f.m.rkey, 6))
		goto out;
	if (!kv_local_inv(&f.p, f.m.rkey ^ 0x01, IB_WC_MW_BIND_ERR,
			  "LOCAL_INV of a wrong key") ||
	    !kv_wait_state(f.p.s[1].qp, IB_QPS_ERR, 1000, "after the bad LOCAL_INV"))
		goto out;
	/* What follows is flushed. */
	sge = kv_msg_sge(&f.p.s[1], 8);
	kv_wr(&send, IB_WR_SEND, 32, &sge, 1, IB_SEND_SIGNALED, 0, 0);
	if (kv_post(f.p.s[1].qp, &send.wr, "SEND after the bad LOCAL_INV"))
		goto out;
	kv_expect(f.p.s[1].scq, 32, IB_WC_WR_FLUSH_ERR, IB_WC_SEND,
		  "SEND after the bad LOCAL_INV", NULL);
out:
	kv_fr_destroy(&f);
	return 0;
}

static int t_reg_valid_mr(struct kv_run *r, unsigned long arg)
{
	struct kv_side *t;
	struct ib_rdma_wr send, send2;
	struct ib_reg_wr reg;
	struct ib_sge sge;
	struct kv_fr f;

	if (!kv_fr_create(&f, r, 0x40) || !kv_fr_write(&f, f.m.rkey, 7))
		goto out;
	t = &f.p.s[1];
	/* Side 0 waits for a message that must not come. */
	if (kv_post_recv(&f.p.s[0], 78))
		goto out;
	if (!kv_map(f.mr, &f.t, SZ_4K))
		goto out;
	ib_update_fast_reg_key(f.mr, 0x41);
	sge = kv_msg_sge(t, 8);
	kv_reg_wr(&reg, f.mr, KV_MR_ACCESS, 40, 0);	/* unsignaled */
	kv_wr(&send, IB_WR_SEND, 41, &sge, 1, IB_SEND_SIGNALED, 0, 0);
	reg.wr.next = &send.wr;
	if (kv_post(t->qp, &reg.wr, "REG_MR of a valid MR + SEND"))
		goto out;
	if (!kv_expect(t->scq, 40, IB_WC_LOC_QP_OP_ERR, IB_WC_REG_MR,
		       "REG_MR of a valid MR", NULL) ||
	    !kv_expect(t->scq, 41, IB_WC_WR_FLUSH_ERR, IB_WC_SEND,
		       "SEND after the failed REG_MR", NULL) ||
	    !kv_wait_state(t->qp, IB_QPS_ERR, 1000, "after the failed REG_MR"))
		goto out;
	/* Later WRs flush too, sends and receives. */
	kv_wr(&send2, IB_WR_SEND, 42, &sge, 1, IB_SEND_SIGNALED, 0, 0);
	if (kv_post(t->qp, &send2.wr, "SEND in the error state") ||
	    !kv_expect(t->scq, 42, IB_WC_WR_FLUSH_ERR, IB_WC_SEND,
		       "SEND in the error state", NULL))
		goto out;
	if (kv_post_recv(t, 43) ||
	    !kv_expect(t->rcq, 43, IB_WC_WR_FLUSH_ERR, IB_WC_RECV,
		       "RECV in the error state", NULL))
		goto out;
	kv_expect_none(t->scq, 50, "target SQ");
	kv_expect_none(f.p.s[0].rcq, 50, "side 0 RQ (the SEND was flushed)");
	/* Nothing reached the target region. */
	kv_buf_check(&f.t, 7, 0, "target after the failed REG_MR");
out:
	kv_fr_destroy(&f);
	return 0;
}

static int t_send_with_inv(struct kv_run *r, unsigned long arg)
{
	struct kv_side *s, *t;
	struct ib_sge sge;
	struct ib_wc wc;
	struct kv_fr f;
	u32 i, len = 3000;	/* three packets at MTU 1024 */

	if (!kv_fr_create(&f, r, 0x50) || !kv_fr_write(&f, f.m.rkey, 8))
		goto out;
	s = &f.p.s[0];
	t = &f.p.s[1];
	for (i = 0; i < len; i++)
		s->msg[KV_MSG_SZ + i] = kv_pat(9, i);
	sge = kv_msg_sge(s, len);
	if (kv_post_recv(t, 50) ||
	    kv_post1(s->qp, IB_WR_SEND_WITH_INV, 51, &sge, 1, IB_SEND_SIGNALED,
		     0, f.m.rkey, "SEND_WITH_INV"))
		goto out;
	if (!kv_expect(s->scq, 51, IB_WC_SUCCESS, IB_WC_SEND, "SEND_WITH_INV",
		       NULL) ||
	    !kv_expect(t->rcq, 50, IB_WC_SUCCESS, IB_WC_RECV,
		       "RECV of SEND_WITH_INV", &wc))
		goto out;
	if (!kv_chk(wc.wc_flags & IB_WC_WITH_INVALIDATE,
		    "wc_flags 0x%x without IB_WC_WITH_INVALIDATE", wc.wc_flags) ||
	    !kv_chk(wc.ex.invalidate_rkey == f.m.rkey,
		    "invalidate_rkey 0x%x, not 0x%x", wc.ex.invalidate_rkey,
		    f.m.rkey) ||
	    !kv_chk(wc.byte_len == len, "byte_len %u, not %u", wc.byte_len, len))
		goto out;
	for (i = 0; i < len; i++)
		if (!kv_chk(t->msg[i] == kv_pat(9, i),
			    "received byte %u is 0x%02x", i, t->msg[i]))
			goto out;
	kv_fr_write_fails(&f, f.m.rkey, 8);
out:
	kv_fr_destroy(&f);
	return 0;
}

/*
 * IB_SEND_FENCE: side 0 READs into its own fast-registered MR and
 * invalidates it with a fenced LOCAL_INV, then registers it over other
 * pages with a fenced REG_MR and READs again. Each READ's bytes land in
 * its own pages: the invalidation waited for the READ before it.
 */
static int t_fence(struct kv_run *r, unsigned long arg)
{
	struct ib_rdma_wr rd1, inv, rd2;
	struct ib_reg_wr reg1, reg2;
	struct kv_buf src = {}, p1 = {}, p2 = {};
	struct ib_sge sge1, sge2;
	struct ib_mr *mr = NULL;
	struct kv_pair p = {};
	struct kv_side *s;
	struct kv_opts o;
	u32 k1;
	size_t k;

	kv_opts_default(&o);
	o.pd_flags[1] = IB_PD_UNSAFE_GLOBAL_RKEY;
	if (!kv_chk(!kv_buf_alloc(&src, 5, 1, 0, 0) &&
		    !kv_buf_alloc(&p1, 0, 16, 0, 0) &&
		    !kv_buf_alloc(&p2, 0, 16, 0, 0), "no pages"))
		goto out;
	if (kv_pair_create(&p, r, &o))
		goto out;
	s = &p.s[0];
	mr = ib_alloc_mr(s->pd, IB_MR_TYPE_MEM_REG, 16);
	if (!kv_chk(!IS_ERR(mr), "ib_alloc_mr: %ld", PTR_ERR(mr))) {
		mr = NULL;
		goto out;
	}
	if (kv_buf_map(&src, p.s[1].dev) || kv_buf_map(&p1, s->dev) ||
	    kv_buf_map(&p2, s->dev))
		goto out;
	kv_buf_fill(&src, 61);	/* 128 KiB: p1 gets the first half */
	if (!kv_map(mr, &p1, SZ_4K))
		goto out;
	ib_update_fast_reg_key(mr, 1);
	k1 = mr->lkey;
	sge1 = (struct ib_sge){ .addr = mr->iova, .length = p1.len, .lkey = k1 };
	kv_reg_wr(&reg1, mr, IB_ACCESS_LOCAL_WRITE, 60, IB_SEND_SIGNALED);
	kv_wr(&rd1, IB_WR_RDMA_READ, 61, &sge1, 1, IB_SEND_SIGNALED,
	      sg_dma_address(&src.sg[0]), p.s[1].pd->unsafe_global_rkey);
	kv_wr(&inv, IB_WR_LOCAL_INV, 62, NULL, 0,
	      IB_SEND_SIGNALED | IB_SEND_FENCE, 0, k1);
	reg1.wr.next = &rd1.wr;
	rd1.wr.next = &inv.wr;
	if (kv_post(s->qp, &reg1.wr, "REG_MR, READ, fenced LOCAL_INV") ||
	    !kv_expect(s->scq, 60, IB_WC_SUCCESS, IB_WC_REG_MR, "REG_MR 1", NULL))
		goto out;
	/* The READ may still be under way: map the next pages now. */
	if (!kv_map(mr, &p2, SZ_4K))
		goto out;
	ib_update_fast_reg_key(mr, 2);
	sge2 = (struct ib_sge){ .addr = mr->iova, .length = p2.len,
				.lkey = mr->lkey };
	kv_reg_wr(&reg2, mr, IB_ACCESS_LOCAL_WRITE, 63,
		  IB_SEND_SIGNALED | IB_SEND_FENCE);
	kv_wr(&rd2, IB_WR_RDMA_READ, 64, &sge2, 1, IB_SEND_SIGNALED,
	      sg_dma_address(&src.sg[0]) + p1.len,
	      p.s[1].pd->unsafe_global_rkey);
	reg2.wr.next = &rd2.wr;
	if (kv_post(s->qp, &reg2.wr, "fenced REG_MR, READ"))
		goto out;
	if (!kv_expect(s->scq, 61, IB_WC_SUCCESS, IB_WC_RDMA_READ, "READ 1", NULL) ||
	    !kv_expect(s->scq, 62, IB_WC_SUCCESS, IB_WC_LOCAL_INV,
		       "fenced LOCAL_INV", NULL) ||
	    !kv_expect(s->scq, 63, IB_WC_SUCCESS, IB_WC_REG_MR,
		       "fenced REG_MR", NULL) ||
	    !kv_expect(s->scq, 64, IB_WC_SUCCESS, IB_WC_RDMA_READ, "READ 2", NULL))
		goto out;
	kv_buf_check(&p1, 61, 0, "READ 1's pages");
	kv_buf_check(&p2, 61, p1.len, "READ 2's pages");
	for (k = 0; k < src.len; k++)
		if (!kv_chk(*kv_buf_at(&src, k) == kv_pat(61, k),
			    "source byte %zu changed", k))
			break;
out:
	/* The MR before its PD, which goes with the pair. */
	if (mr)
		ib_dereg_mr(mr);
	kv_pair_destroy(&p);
	kv_buf_free(&src);
	kv_buf_free(&p1);
	kv_buf_free(&p2);
	return 0;
}

/* ---- inline ------------------------------------------------------------- */

/* Side 1 receives @len bytes of pattern @seed. */
static bool kv_recv_check(struct kv_side *t, u64 wr_id, u32 len, u32 seed,
			  const char *what)
{
	struct ib_wc wc;
	u32 i;

	if (!kv_expect(t->rcq, wr_id, IB_WC_SUCCESS, IB_WC_RECV, what, &wc) ||
	    !kv_chk(wc.byte_len == len, "%s: byte_len %u, not %u", what,
		    wc.byte_len, len))
		return false;
	for (i = 0; i < len; i++)
		if (!kv_chk(t->msg[i] == kv_pat(seed, i),
			    "%s: byte %u of %u is 0x%02x, not 0x%02x", what, i,
			    len, t->msg[i], kv_pat(seed, i)))
			return false;
	return true;
}

static int t_inline(struct kv_run *r, unsigned long arg)
{
	const struct ib_send_wr *bad;
	struct ib_rdma_wr w, w2;
	u8 *kbuf = NULL, *kbuf2 = NULL, *dst = NULL;
	struct ib_sge sge[4];
	struct kv_side *s, *t;
	struct kv_pair p = {};
	struct kv_opts o;
	u8 stack[64];
	u32 max, len, i, sum;
	u64 dst_dma = 0;
	int ret;

	kv_opts_default(&o);
	o.inline_data = 512;
	o.pd_flags[1] = IB_PD_UNSAFE_GLOBAL_RKEY;
	if (kv_pair_create(&p, r, &o))
		goto out;
	s = &p.s[0];
	t = &p.s[1];
	max = p.cap[0].max_inline_data;
	if (!kv_chk(max >= 64 && max <= KV_MSG_SZ, "max_inline_data %u", max))
		goto out;
	kbuf = kmalloc(max + 1, GFP_KERNEL);
	kbuf2 = kmalloc(max, GFP_KERNEL);
	dst = kzalloc(max, GFP_KERNEL);
	if (!kv_chk(kbuf && kbuf2 && dst, "no memory"))
		goto out;
	dst_dma = ib_dma_map_single(t->dev, dst, max, DMA_BIDIRECTIONAL);
	/* 1..max bytes from a kmalloc buffer, overwritten once posted. */
	for (len = 1; len <= max; len++) {
		bool sig = len % 8 == 0 || len == max;

		for (i = 0; i < len; i++)
			kbuf[i] = kv_pat(len, i);
		/* IBTA: an inline WR's lkey is not checked. */
		sge[0] = (struct ib_sge){ .addr = (uintptr_t)kbuf, .length = len,
					  .lkey = 0xdeadbeef };
		if (kv_post_recv(t, len) ||
		    kv_post1(s->qp, IB_WR_SEND, len, sge, 1,
			     IB_SEND_INLINE | (sig ? IB_SEND_SIGNALED : 0), 0, 0,
			     "inline SEND"))
			goto out;
		memset(kbuf, 0, len);
		if (!kv_recv_check(t, len, len, len, "inline SEND"))
			goto out;
		if (sig && !kv_expect(s->scq, len, IB_WC_SUCCESS, IB_WC_SEND,
				      "inline SEND", NULL))
			goto out;
	}
	/* Four SGEs, from the stack and from kmalloc, max bytes in all. */
	sum = 0;
	for (i = 0; i < max; i++)
		kbuf2[i] = kv_pat(99, i);
	memcpy(stack, kbuf2, 10);
	sge[0] = (struct ib_sge){ .addr = (uintptr_t)stack, .length = 10 };
	sge[1] = (struct ib_sge){ .addr = (uintptr_t)kbuf2 + 10, .length = 1 };
	sge[2] = (struct ib_sge){ .addr = (uintptr_t)kbuf2 + 11, .length = 0 };
	sge[3] = (struct ib_sge){ .addr = (uintptr_t)kbuf2 + 11,
				  .length = max - 11 };
	for (i = 0; i < 4; i++)
		sum += sge[i].length;
	if (kv_post_recv(t, 1000) ||
	    kv_post1(s->qp, IB_WR_SEND, 1000, sge, 4,
		     IB_SEND_INLINE | IB_SEND_SIGNALED, 0, 0, "4-SGE inline"))
		goto out;
	memset(stack, 0, sizeof(stack));
	if (!kv_recv_check(t, 1000, sum, 99, "4-SGE inline SEND") ||
	    !kv_expect(s->scq, 1000, IB_WC_SUCCESS, IB_WC_SEND, "4-SGE inline",
		       NULL))
		goto out;
	/* An inline RDMA WRITE of max bytes. */
	sge[0] = (struct ib_sge){ .addr = (uintptr_t)kbuf2, .length = max };
	if (kv_post1(s->qp, IB_WR_RDMA_WRITE, 1001, sge, 1,
		     IB_SEND_INLINE | IB_SEND_SIGNALED, dst_dma,
		     t->pd->unsafe_global_rkey, "inline WRITE") ||
	    !kv_expect(s->scq, 1001, IB_WC_SUCCESS, IB_WC_RDMA_WRITE,
		       "inline WRITE", NULL) || !kv_sync(&p))
		goto out;
	for (i = 0; i < max; i++)
		if (!kv_chk(dst[i] == kv_pat(99, i),
			    "inline WRITE: byte %u is 0x%02x", i, dst[i]))
			goto out;
	/* max + 1 bytes: refused at post time, the WR before it posted. */
	for (i = 0; i <= max; i++)
		kbuf[i] = kv_pat(5, i);
	sge[0] = (struct ib_sge){ .addr = (uintptr_t)kbuf, .length = 5 };
	sge[1] = (struct ib_sge){ .addr = (uintptr_t)kbuf, .length = max };
	sge[2] = (struct ib_sge){ .addr = (uintptr_t)kbuf + max, .length = 1 };
	kv_wr(&w, IB_WR_SEND, 1002, &sge[0], 1,
	      IB_SEND_INLINE | IB_SEND_SIGNALED, 0, 0);
	kv_wr(&w2, IB_WR_SEND, 1003, &sge[1], 2,
	      IB_SEND_INLINE | IB_SEND_SIGNALED, 0, 0);
	w.wr.next = &w2.wr;
	if (kv_post_recv(t, 1002))
		goto out;
	bad = NULL;
	ret = ib_post_send(s->qp, &w.wr, &bad);
	if (!kv_chk(ret == -EINVAL || ret == -ENOMEM,
		    "inline SEND of %u bytes (max %u): ib_post_send %d", max + 1,
		    max, ret) ||
	    !kv_chk(bad == &w2.wr, "bad_wr %p, not the second WR %p (first %p)",
		    bad, &w2.wr, &w.wr))
		goto out;
	if (!kv_recv_check(t, 1002, 5, 5, "the WR before the refused one") ||
	    !kv_expect(s->scq, 1002, IB_WC_SUCCESS, IB_WC_SEND,
		       "the WR before the refused one", NULL) ||
	    !kv_expect_none(s->scq, 20, "the refused WR") ||
	    !kv_expect_none(t->rcq, 20, "the refused WR"))
		goto out;
	kv_chk(kv_qp_state(s->qp) == IB_QPS_RTS, "QP state %d after the refusal",
	       kv_qp_state(s->qp));
	/* And an inline WR with one SGE longer than max alone. */
	sge[1].length = max + 1;
	kv_wr(&w2, IB_WR_SEND, 1004, &sge[1], 1, IB_SEND_INLINE, 0, 0);
	bad = NULL;
	ret = ib_post_send(s->qp, &w2.wr, &bad);
	kv_chk((ret == -EINVAL || ret == -ENOMEM) && bad == &w2.wr,
	       "one SGE of %u bytes inline: %d, bad_wr %p", max + 1, ret, bad);
	if (!kv_sync(&p))
		goto out;
	kv_say(false, "max_inline_data %u", max);
out:
	if (dst_dma)
		ib_dma_unmap_single(p.s[1].dev, dst_dma, max, DMA_BIDIRECTIONAL);
	kv_pair_destroy(&p);
	kfree(kbuf);
	kfree(kbuf2);
	kfree(dst);
	return 0;
}

/* ---- unsignaled WRs, drain ------------------------------------------ */

static int t_unsignaled(struct kv_run *r, unsigned long arg)
{
	const u32 nwr = 200, sz = 256, every = 8, depth = 16;
	struct kv_buf src = {}, dst = {};
	u32 posted = 0, retired = 0;
	struct kv_pair p = {};
	struct ib_sge sge;
	struct kv_opts o;
	struct ib_wc wc;
	size_t k;

	kv_opts_default(&o);
	o.sq = depth;
	o.pd_flags[1] = IB_PD_UNSAFE_GLOBAL_RKEY;
	if (!kv_chk(!kv_buf_alloc(&src, 4, 1, 0, 0) &&
		    !kv_buf_alloc(&dst, 4, 1, 0, 0), "no pages"))
		goto out;
	if (kv_pair_create(&p, r, &o) || kv_buf_map(&src, p.s[0].dev) ||
	    kv_buf_map(&dst, p.s[1].dev))
		goto out;
	kv_buf_fill(&src, 71);
	while (retired < nwr) {
		/* Only a signaled WR's completion frees the slots before it. */
		while (posted < nwr && posted - retired < depth) {
			bool sig = posted % every == every - 1 ||
				   posted == nwr - 1;

			sge = (struct ib_sge){
				.addr = sg_dma_address(&src.sg[0]) + posted * sz,
				.length = sz, .lkey = p.s[0].pd->local_dma_lkey };
			if (kv_post1(p.s[0].qp, IB_WR_RDMA_WRITE, posted, &sge, 1,
				     sig ? IB_SEND_SIGNALED : 0,
				     sg_dma_address(&dst.sg[0]) + posted * sz,
				     p.s[1].pd->unsafe_global_rkey,
				     "WRITE"))
				goto out;
			posted++;
		}
		if (!kv_chk(kv_poll(p.s[0].scq, &wc, KV_WAIT_MS),
			    "no completion after %u posted, %u retired",
			    posted, retired))
			goto out;
		if (!kv_chk(wc.status == IB_WC_SUCCESS &&
			    wc.opcode == IB_WC_RDMA_WRITE,
			    "WRITE %llu: %s opcode %d", wc.wr_id,
			    kv_st(wc.status), wc.opcode))
			goto out;
		/* The next signaled one, not an unsignaled one. */
		if (!kv_chk(wc.wr_id == min(retired + every, nwr) - 1,
			    "completion of WRITE %llu after %u retired",
			    wc.wr_id, retired))
			goto out;
		retired = wc.wr_id + 1;
	}
	if (!kv_expect_none(p.s[0].scq, 50, "after the last") || !kv_sync(&p))
		goto out;
	for (k = 0; k < nwr * sz; k++)
		if (!kv_chk(*kv_buf_at(&dst, k) == kv_pat(71, k),
			    "byte %zu of %u is 0x%02x", k, nwr * sz,
			    *kv_buf_at(&dst, k)))
			break;
out:
	kv_pair_destroy(&p);
	kv_buf_free(&src);
	kv_buf_free(&dst);
	return 0;
}

#define KV_NDRAIN	24

/*
 * ib_drain_qp() with WRITEs in flight (once the first completed) and
 * receives that never match: it returns, every WR completed (the WRITEs
 * successfully up to some point, flushed after it), every receive
 * flushed; drain_sq and drain_rq apart on the peer.
 */
static int t_drain_rc(struct kv_run *r, unsigned long arg)
{
	struct kv_cqe *c = NULL;
	struct kv_buf src = {}, dst = {};
	const struct ib_recv_wr *rbad;
	struct kv_pair p = {};
	struct kv_opts o;
	bool flushed = false;
	int i, nsucc = 0;

	kv_opts_default(&o);
	o.poll = arg;
	o.pd_flags[1] = IB_PD_UNSAFE_GLOBAL_RKEY;
	c = kcalloc(3 * KV_NDRAIN, sizeof(*c), GFP_KERNEL);
	if (!kv_chk(c, "no memory") ||
	    !kv_chk(!kv_buf_alloc(&src, 4, 1, 0, 0) &&
		    !kv_buf_alloc(&dst, 4, 1, 0, 0), "no pages"))
		goto out;
	if (kv_pair_create(&p, r, &o) || kv_buf_map(&src, p.s[0].dev) ||
	    kv_buf_map(&dst, p.s[1].dev))
		goto out;
	for (i = 0; i < KV_NDRAIN; i++) {
		struct ib_sge sge = { .addr = sg_dma_address(&src.sg[0]),
				      .length = src.len,
				      .lkey = p.s[0].pd->local_dma_lkey };
		struct ib_sge rsge = { .addr = sg_dma_address(&src.sg[0]),
				       .length = 64,
				       .lkey = p.s[0].pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1 };
		struct ib_rdma_wr w;

		kv_cqe_init(&c[i]);
		kv_cqe_init(&c[KV_NDRAIN + i]);
		kv_cqe_init(&c[2 * KV_NDRAIN + i]);
		kv_wr(&w, IB_WR_RDMA_WRITE, 0, &sge, 1, IB_SEND_SIGNALED,
		      sg_dma_address(&dst.sg[0]), p.s[1].pd->unsafe_global_rkey);
		w.wr.wr_cqe = &c[i].cqe;
		if (kv_post(p.s[0].qp, &w.wr, "WRITE"))
			goto out;
		rwr.wr_cqe = &c[KV_NDRAIN + i].cqe;
		if (!kv_chk(!ib_post_recv(p.s[0].qp, &rwr, &rbad), "post_recv"))
			goto out;
		rwr.wr_cqe = &c[2 * KV_NDRAIN + i].cqe;
		if (!kv_chk(!ib_post_recv(p.s[1].qp, &rwr, &rbad), "post_recv"))
			goto out;
	}
	/* The first WRITE done, the others in flight or queued: drain. */
	if (!kv_chk(kv_cqe_wait(&c[0], p.s[0].scq, KV_WAIT_MS),
		    "first WRITE: no completion"))
		goto out;
	ib_drain_qp(p.s[0].qp);
	for (i = 0; i < 2 * KV_NDRAIN; i++)
		if (!kv_chk(READ_ONCE(c[i].fired),
			    "WR %d not completed after ib_drain_qp", i))
			goto out;
	for (i = 0; i < KV_NDRAIN; i++) {
		int st = c[i].wc.status;

		if (!kv_chk(st == IB_WC_SUCCESS || st == IB_WC_WR_FLUSH_ERR,
			    "WRITE %d: %s", i, kv_st(st)) ||
		    !kv_chk(st == IB_WC_WR_FLUSH_ERR || !flushed,
			    "WRITE %d succeeded after a flushed one", i) ||
		    !kv_chk(c[i].wc.opcode == IB_WC_RDMA_WRITE,
			    "WRITE %d: opcode %d", i, c[i].wc.opcode))
			goto out;
		flushed |= st == IB_WC_WR_FLUSH_ERR;
		nsucc += st == IB_WC_SUCCESS;
		st = c[KV_NDRAIN + i].wc.status;
		if (!kv_chk(st == IB_WC_WR_FLUSH_ERR, "RECV %d: %s", i,
			    kv_st(st)) ||
		    !kv_chk(c[KV_NDRAIN + i].wc.opcode == IB_WC_RECV,
			    "RECV %d: opcode %d", i, c[KV_NDRAIN + i].wc.opcode))
			goto out;
	}
	if (!kv_chk(kv_qp_state(p.s[0].qp) == IB_QPS_ERR, "state %d after drain",
		    kv_qp_state(p.s[0].qp)))
		goto out;
	/* The peer: its SQ (empty), then its RQ, apart. */
	ib_drain_sq(p.s[1].qp);
	if (!kv_chk(kv_qp_state(p.s[1].qp) == IB_QPS_ERR,
		    "peer state %d after ib_drain_sq", kv_qp_state(p.s[1].qp)))
		goto out;
	ib_drain_rq(p.s[1].qp);
	for (i = 0; i < KV_NDRAIN; i++) {
		struct kv_cqe *rc = &c[2 * KV_NDRAIN + i];

		if (!kv_chk(READ_ONCE(rc->fired) &&
			    rc->wc.status == IB_WC_WR_FLUSH_ERR,
			    "peer RECV %d: %s after ib_drain_rq", i,
			    READ_ONCE(rc->fired) ?
			    kv_st(rc->wc.status) : "not completed"))
			goto out;
	}
	kv_say(false, "%d of %d WRITEs done before the drain", nsucc,
	       KV_NDRAIN);
out:
	kv_pair_destroy(&p);
	kv_buf_free(&src);
	kv_buf_free(&dst);
	kfree(c);
	return 0;
}

static int t_drain_ud(struct kv_run *r, unsigned long arg)
{
	struct kv_cqe c[8];
	const struct ib_recv_wr *rbad;
	struct kv_pair p = {};
	struct kv_opts o;
	int i;

	kv_opts_default(&o);
	o.type = IB_QPT_UD;
	o.poll = IB_POLL_SOFTIRQ;
	if (kv_pair_create(&p, r, &o))
		goto out;
	for (i = 0; i < 8; i++) {
		struct ib_sge sge = { .addr = p.s[0].msg_dma, .length = 512,
				      .lkey = p.s[0].pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .sg_list = &sge, .num_sge = 1,
					  .wr_cqe = &c[i].cqe };

		kv_cqe_init(&c[i]);
		if (!kv_chk(!ib_post_recv(p.s[0].qp, &rwr, &rbad), "post_recv"))
			goto out;
	}
	ib_drain_qp(p.s[0].qp);
	for (i = 0; i < 8; i++)
		if (!kv_chk(READ_ONCE(c[i].fired) &&
			    c[i].wc.status == IB_WC_WR_FLUSH_ERR &&
			    c[i].wc.opcode == IB_WC_RECV,
			    "UD RECV %d after ib_drain_qp: %s opcode %d", i,
			    READ_ONCE(c[i].fired) ?
			    kv_st(c[i].wc.status) : "not completed",
			    c[i].wc.opcode))
			goto out;
	kv_chk(kv_qp_state(p.s[0].qp) == IB_QPS_ERR, "UD state %d after drain",
	       kv_qp_state(p.s[0].qp));
out:
	kv_pair_destroy(&p);
	return 0;
}

/* ---- CQ polling contexts -------------------------------------------- */

static int t_cq_ctx(struct kv_run *r, unsigned long arg)
{
	const bool pool = arg == (unsigned long)-1;
	enum ib_poll_context ctx = pool ? IB_POLL_SOFTIRQ : arg;
	struct kv_cqe sc, rc;
	struct kv_pair p = {};
	struct kv_side *s, *t;
	const struct ib_recv_wr *rbad;
	struct kv_opts o;
	int round;
	u32 i, len;

	kv_opts_default(&o);
	o.poll = ctx;
	o.pool = pool;
	if (kv_pair_create(&p, r, &o))
		goto out;
	s = &p.s[0];
	t = &p.s[1];
	if (pool && !kv_chk(s->scq->poll_ctx == IB_POLL_SOFTIRQ,
			    "pool CQ poll_ctx %d", s->scq->poll_ctx))
		goto out;
	for (round = 0; round < 16; round++) {
		struct ib_sge rsge = { .addr = t->msg_dma, .length = KV_MSG_SZ,
				       .lkey = t->pd->local_dma_lkey };
		struct ib_recv_wr rwr = { .sg_list = &rsge, .num_sge = 1,
					  .wr_cqe = &rc.cqe };
		struct ib_sge sge;
		struct ib_rdma_wr w;

		len = 1 + round * 250;	/* up to four packets */
		for (i = 0; i < len; i++)
			s->msg[KV_MSG_SZ + i] = kv_pat(round, i);
		kv_cqe_init(&sc);
		kv_cqe_init(&rc);
		if (!kv_chk(!ib_post_recv(t->qp, &rwr, &rbad), "post_recv"))
			goto out;
		sge = kv_msg_sge(s, len);
		kv_wr(&w, IB_WR_SEND, 0, &sge, 1, IB_SEND_SIGNALED, 0, 0);
		w.wr.wr_cqe = &sc.cqe;
		if (kv_post(s->qp, &w.wr, "SEND"))
			goto out;
		if (!kv_chk(kv_cqe_wait(&rc, t->rcq, KV_WAIT_MS),
			    "round %d: no RECV completion", round) ||
		    !kv_chk(kv_cqe_wait(&sc, s->scq, KV_WAIT_MS),
			    "round %d: no SEND completion", round))
			goto out;
		if (!kv_chk(sc.wc.status == IB_WC_SUCCESS &&
			    sc.wc.opcode == IB_WC_SEND, "SEND: %s opcode %d",
			    kv_st(sc.wc.status), sc.wc.opcode) ||
		    !kv_chk(rc.wc.status == IB_WC_SUCCESS &&
			    rc.wc.opcode == IB_WC_RECV && rc.wc.byte_len == len,
			    "RECV: %s opcode %d byte_len %u (%u)",
			    kv_st(rc.wc.status), rc.wc.opcode, rc.wc.byte_len,
			    len))
			goto out;
		for (i = 0; i < len; i++)
			if (!kv_chk(t->msg[i] == kv_pat(round, i),
				    "round %d byte %u is 0x%02x", round, i,
				    t->msg[i]))
				goto out;
		/* The callbacks ran where the poll context says. */
		switch (ctx) {
		case IB_POLL_DIRECT:
			kv_chk(rc.task == current && !rc.softirq,
			       "DIRECT: done ran elsewhere");
			break;
		case IB_POLL_SOFTIRQ:
			kv_chk(rc.softirq && sc.softirq,
			       "SOFTIRQ: done not in softirq");
			break;
		default:
			kv_chk(rc.worker && sc.worker && !rc.softirq,
			       "WORKQUEUE: done not on a worker");
			break;
		}
		if (kv_nfail)
			goto out;
	}
out:
	kv_pair_destroy(&p);
	return 0;
}

/* ---- SRQ ------------------------------------------------------------ */

/*
 * Two QPs of side 1 receive from one SRQ; then one of them goes to the
 * error state: IBA 11.6.3.1 (C11-?) wants IB_EVENT_QP_LAST_WQE_REACHED
 * for it, and the other QP keeps receiving.
 */
static int t_srq(struct kv_run *r, unsigned long arg)
{
	struct ib_srq_init_attr sa = {};
	const struct ib_recv_wr *rbad;
	struct kv_pair p[2] = {};
	struct ib_srq *srq = NULL;
	struct ib_pd *pd = NULL;
	struct kv_opts o;
	u8 *buf = NULL;
	u64 dma = 0;
	int i, j, got[2] = {}, n = 0;
	struct ib_wc wc;

	pd = ib_alloc_pd(r->dev[1], 0);
	if (!kv_chk(!IS_ERR(pd), "ib_alloc_pd: %ld", PTR_ERR(pd))) {
		pd = NULL;
		goto out;
	}
	sa.attr.max_wr = 32;
	sa.attr.max_sge = 1;
	sa.srq_type = IB_SRQT_BASIC;
	srq = ib_create_srq(pd, &sa);
	if (!kv_chk(!IS_ERR(srq), "ib_create_srq: %ld", PTR_ERR(srq))) {
		srq = NULL;
		goto out;
	}
	buf = kzalloc(32 * 256, GFP_KERNEL);
	if (!kv_chk(buf, "no memory"))
		goto out;
	dma = ib_dma_map_single(r->dev[1], buf, 32 * 256, DMA_BIDIRECTIONAL);
	for (i = 0; i < 16; i++) {
		struct ib_sge sge = { .addr = dma + i * 256, .length = 256,
				      .lkey = pd->local_dma_lkey };
		struct ib_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					 .num_sge = 1 };

		if (!kv_chk(!ib_post_srq_recv(srq, &wr, &rbad), "post_srq_recv"))
			goto out;
	}
	kv_opts_default(&o);
	o.srq[1] = srq;
	o.pd[1] = pd;	/* the receiving QPs are of the SRQ's PD */
	for (i = 0; i < 2; i++) {
		if (kv_pair_create(&p[i], r, &o))
			goto out;
	}
	for (j = 0; j < 3; j++)
		for (i = 0; i < 2; i++) {
			struct kv_side *s = &p[i].s[0];
			struct ib_sge sge = kv_msg_sge(s, 100);

			memset(s->msg + KV_MSG_SZ, 0x30 + i * 16 + j, 100);
			if (kv_post1(s->qp, IB_WR_SEND, j, &sge, 1,
				     IB_SEND_SIGNALED, 0, 0, "SEND to the SRQ") ||
			    !kv_expect(s->scq, j, IB_WC_SUCCESS, IB_WC_SEND,
				       "SEND to the SRQ", NULL))
				goto out;
		}
	for (i = 0; i < 2; i++)
		while (n < 6 && kv_poll(p[i].s[1].rcq, &wc, 200)) {
			int q = wc.qp == p[1].s[1].qp;
			u8 *m = buf + wc.wr_id * 256;

			n++;
			if (!kv_chk(wc.status == IB_WC_SUCCESS &&
				    wc.opcode == IB_WC_RECV && wc.byte_len == 100,
				    "SRQ RECV: %s opcode %d len %u",
				    kv_st(wc.status), wc.opcode, wc.byte_len) ||
			    !kv_chk(wc.qp == p[q].s[1].qp, "wc.qp is no QP of ours") ||
			    !kv_chk(m[0] == 0x30 + q * 16 + got[q] &&
				    m[99] == m[0],
				    "SRQ RECV %llu of QP %d: bytes 0x%02x..0x%02x, not 0x%02x",
				    wc.wr_id, q, m[0], m[99],
				    0x30 + q * 16 + got[q]))
				goto out;
			got[q]++;
		}
	if (!kv_chk(got[0] == 3 && got[1] == 3, "SRQ receives %d + %d, not 3 + 3",
		    got[0], got[1]))
		goto out;
	/* QP 0 of side 1 to the error state: its last WQE was reached. */
	{
		struct ib_qp_attr a = { .qp_state = IB_QPS_ERR };

		if (kv_modify(p[0].s[1].qp, &a, IB_QP_STATE, "ERR"))
			goto out;
	}
	kv_chk(kv_wait_event(&p[0].s[1], IB_EVENT_QP_LAST_WQE_REACHED, 1000),
	       "no IB_EVENT_QP_LAST_WQE_REACHED within 1 s of ERR (%d events)",
	       p[0].s[1].nev);
	/* The other QP still receives from the SRQ. */
	{
		struct kv_side *s = &p[1].s[0];
		struct ib_sge sge = kv_msg_sge(s, 100);

		memset(s->msg + KV_MSG_SZ, 0x77, 100);
		if (kv_post1(s->qp, IB_WR_SEND, 9, &sge, 1, IB_SEND_SIGNALED, 0,
			     0, "SEND after the other QP's error") ||
		    !kv_expect(s->scq, 9, IB_WC_SUCCESS, IB_WC_SEND,
			       "SEND after the other QP's error", NULL) ||
		    !kv_chk(kv_poll(p[1].s[1].rcq, &wc, KV_WAIT_MS),
			    "no SRQ RECV after the other QP's error") ||
		    !kv_chk(wc.status == IB_WC_SUCCESS &&
			    buf[wc.wr_id * 256] == 0x77,
			    "SRQ RECV after the error: %s byte 0x%02x",
			    kv_st(wc.status), buf[wc.wr_id * 256]))
			goto out;
	}
	/* The QP in error consumed no SRQ WQE: nothing flushed from it. */
	kv_expect_none(p[0].s[1].rcq, 50, "SRQ QP in error");
out:
	kv_pair_destroy(&p[0]);
	kv_pair_destroy(&p[1]);
	if (srq)
		ib_destroy_srq(srq);
	if (dma)
		ib_dma_unmap_single(r->dev[1], dma, 32 * 256, DMA_BIDIRECTIONAL);
	kfree(buf);
	if (pd)
		ib_dealloc_pd(pd);
	return 0;
}

/* ---- rdma_rw ---------------------------------------------------------- */

static void kv_rw_done(struct ib_cq *cq, struct ib_wc *wc)
{
	kv_cqe_done(cq, wc);
}

/*
 * rdma_rw_ctx over 6 page entries (the first at an offset, the last
 * short: a list one MR can map, as rdma_rw wants when it registers) on a
 * QP of 2 send SGEs (several WRs without MRs), a READ then a WRITE
 * against a fast-registered region. @arg: require that rdma_rw
 * registered MRs (ib_core.force_mr=1).
 */
static int t_rdma_rw(struct kv_run *r, unsigned long arg)
{
	struct rdma_rw_ctx ctx;
	struct kv_buf a = {};
	struct kv_fr f;
	struct kv_cqe c;
	struct kv_opts o;
	int ret, type = -1, pass = 0;
	bool inited = false;

	memset(&f, 0, sizeof(f));
	kv_opts_default(&o);
	/* DIRECT: the wr_id WRs of kv_fastreg() share the CQs */
	o.send_sge = 2;
	o.rdma_ctxs = 4;
	if (!kv_chk(!kv_buf_alloc(&f.t, 0, 6, 300, 500) &&
		    !kv_buf_alloc(&a, 0, 6, 300, 500), "no pages"))
		goto out;
	if (kv_pair_create(&f.p, r, &o))
		goto out;
	f.mr = ib_alloc_mr(f.p.s[1].pd, IB_MR_TYPE_MEM_REG, 6);
	if (!kv_chk(!IS_ERR(f.mr), "ib_alloc_mr: %ld", PTR_ERR(f.mr))) {
		f.mr = NULL;
		goto out;
	}
	if (kv_buf_map(&f.t, f.p.s[1].dev) ||
	    !kv_fastreg(&f.p, f.mr, &f.t, SZ_4K, 0x70, KV_MR_ACCESS, &f.m))
		goto out;
	for (pass = 0; pass < 2; pass++) {
		enum dma_data_direction dir = pass ? DMA_TO_DEVICE :
						     DMA_FROM_DEVICE;
		const char *what = pass ? "WRITE" : "READ";

		if (pass) {
			kv_buf_fill(&a, 82);
		} else {
			memset(kv_buf_at(&a, 0), 0, a.chunk - a.off);
			kv_buf_fill(&f.t, 81);
		}
		ret = rdma_rw_ctx_init(&ctx, f.p.s[0].qp, 1, a.sg, a.n, 0,
				       f.m.addr, f.m.rkey, dir);
		if (!kv_chk(ret > 0, "rdma_rw_ctx_init(%s): %d", what, ret))
			goto out;
		inited = true;
		type = ctx.type;
		if (arg && type != KV_RW_MR) {
			kv_say(true, "rdma_rw used no MR (type %d); boot with %s",
			       type, "ib_core.force_mr=1");
			goto out;
		}
		kv_cqe_init(&c);
		c.cqe.done = kv_rw_done;
		ret = rdma_rw_ctx_post(&ctx, f.p.s[0].qp, 1, &c.cqe, NULL);
		if (!kv_chk(!ret, "rdma_rw_ctx_post(%s): %d", what, ret) ||
		    !kv_chk(kv_cqe_wait(&c, f.p.s[0].scq, KV_WAIT_MS),
			    "rdma_rw %s: no completion", what) ||
		    !kv_chk(c.wc.status == IB_WC_SUCCESS,
			    "rdma_rw %s: %s opcode %d", what,
			    kv_st(c.wc.status), c.wc.opcode))
			goto out;
		rdma_rw_ctx_destroy(&ctx, f.p.s[0].qp, 1, a.sg, a.n, dir);
		inited = false;
		if (pass) {
			if (!kv_sync(&f.p) ||
			    !kv_buf_check(&f.t, 82, 0, "rdma_rw WRITE's target"))
				goto out;
		} else if (!kv_buf_check(&a, 81, 0, "rdma_rw READ's sink")) {
			goto out;
		}
	}
	kv_say(false, "rdma_rw context type %d (%s)", type,
	       type == KV_RW_MR ? "MRs" : "SGEs");
out:
	if (inited)
		rdma_rw_ctx_destroy(&ctx, f.p.s[0].qp, 1, a.sg, a.n,
				    pass ? DMA_TO_DEVICE : DMA_FROM_DEVICE);
	kv_fr_destroy(&f);
	kv_buf_free(&a);
	return 0;
}

/* ---- the DMA MR ---------------------------------------------------------- */

/*
 * IBA's Deallocate Protection Domain fails while QPs, MRs, windows, SRQs
 * or AHs are on the PD. ib_core checks that for processes only: a kernel
 * consumer's PD with an MR on it must stay, or the MR points at freed
 * memory when it goes (ib_dealloc_pd_user(), not ib_dealloc_pd(), whose
 * warning would fail the run).
 */
static int t_pd_in_use(struct kv_run *r, unsigned long arg)
{
	struct ib_pd *pd = ib_alloc_pd(r->dev[0], 0);
	struct ib_mr *mr;
	int ret;

	if (!kv_chk(!IS_ERR(pd), "ib_alloc_pd: %ld", PTR_ERR(pd)))
		return 0;
	mr = ib_alloc_mr(pd, IB_MR_TYPE_MEM_REG, 4);
	if (!kv_chk(!IS_ERR(mr), "ib_alloc_mr: %ld", PTR_ERR(mr))) {
		ib_dealloc_pd(pd);
		return 0;
	}
	ret = ib_dealloc_pd_user(pd, NULL);
	/* If it went, so did the MR's PD: leave the MR rather than touch it. */
	if (!kv_chk(ret == -EBUSY, "a PD with an MR on it deallocated: %d", ret))
		return 0;
	ib_dereg_mr(mr);
	ret = ib_dealloc_pd_user(pd, NULL);
	kv_chk(!ret, "the PD after its MR: %d", ret);
	return 0;
}

static int t_dma_mr(struct kv_run *r, unsigned long arg)
{
	struct kv_buf a = {}, b = {}, c = {};
	struct kv_pair p = {};
	struct kv_opts o;
	u32 grkey;
	int i;

	/* One chunk each: the DMA MR maps addresses, the region is linear. */
	if (!kv_chk(!kv_buf_alloc(&a, 3, 1, 100, 200) &&
		    !kv_buf_alloc(&b, 3, 1, 100, 200) &&
		    !kv_buf_alloc(&c, 3, 1, 100, 200), "no pages"))
		goto out;
	for (i = 0; i < 2; i++) {
		kv_opts_default(&o);
		o.pd_flags[1] = i ? 0 : IB_PD_UNSAFE_GLOBAL_RKEY;
		if (kv_pair_create(&p, r, &o))
			goto out;
		if (kv_buf_map(&a, p.s[0].dev) || kv_buf_map(&b, p.s[1].dev) ||
		    kv_buf_map(&c, p.s[0].dev))
			goto out;
		if (i == 0) {
			grkey = p.s[1].pd->unsafe_global_rkey;
			kv_buf_fill(&a, 91);
			/* WRITE through the global rkey, READ it back. */
			if (!kv_rdma(&p, IB_WR_RDMA_WRITE, &a,
				     sg_dma_address(&b.sg[0]), grkey,
				     IB_WC_SUCCESS, "WRITE via the global rkey") ||
			    !kv_sync(&p) ||
			    !kv_buf_check(&b, 91, 0, "global rkey WRITE") ||
			    !kv_rdma(&p, IB_WR_RDMA_READ, &c,
				     sg_dma_address(&b.sg[0]), grkey,
				     IB_WC_SUCCESS, "READ via the global rkey") ||
			    !kv_buf_check(&c, 91, 0, "global rkey READ"))
				goto out;
		} else {
			/* The local DMA lkey grants no remote access. */
			kv_buf_fill(&a, 92);
			if (!kv_rdma(&p, IB_WR_RDMA_WRITE, &a,
				     sg_dma_address(&b.sg[0]),
				     p.s[1].pd->local_dma_lkey,
				     IB_WC_REM_ACCESS_ERR,
				     "WRITE via the local_dma_lkey") ||
			    !kv_access_err_after(&p) ||
			    !kv_buf_check(&b, 91, 0, "target of the refused WRITE"))
				goto out;
		}
		kv_pair_destroy(&p);
		kv_buf_free(&a);
		kv_buf_free(&c);
		/* b keeps its bytes for the second pass; unmapped only */
		ib_dma_unmap_sg(b.dev, b.sg, b.n, DMA_BIDIRECTIONAL);
		b.mapped = 0;
		if (kv_buf_alloc(&a, 3, 1, 100, 200) ||
		    kv_buf_alloc(&c, 3, 1, 100, 200))
			goto out;
	}
out:
	kv_pair_destroy(&p);
	kv_buf_free(&a);
	kv_buf_free(&b);
	kv_buf_free(&c);
	return 0;
}

/* ---- attributes --------------------------------------------------------- */

static int t_attrs(struct kv_run *r, unsigned long arg)
{
	const struct ib_device_attr *a = &r->dev[0]->attrs;

	kv_chk(a->max_fast_reg_page_list_len > 0,
	       "max_fast_reg_page_list_len %u", a->max_fast_reg_page_list_len);
	kv_chk(a->device_cap_flags & IB_DEVICE_MEM_MGT_EXTENSIONS,
	       "no IB_DEVICE_MEM_MGT_EXTENSIONS (0x%llx)", a->device_cap_flags);
	kv_chk(a->max_pi_fast_reg_page_list_len == 0,
	       "max_pi_fast_reg_page_list_len %u",
	       a->max_pi_fast_reg_page_list_len);
	kv_chk(!(a->kernel_cap_flags & IBK_INTEGRITY_HANDOVER),
	       "IBK_INTEGRITY_HANDOVER set");
	kv_chk(a->max_qp_wr >= 1024, "max_qp_wr %d", a->max_qp_wr);
	kv_chk(a->max_send_sge >= 2 && a->max_recv_sge >= 2,
	       "max_send_sge %d max_recv_sge %d", a->max_send_sge,
	       a->max_recv_sge);
	kv_chk(a->max_sge_rd >= 1 && a->max_sge_rd <= a->max_send_sge,
	       "max_sge_rd %d (max_send_sge %d)", a->max_sge_rd, a->max_send_sge);
	kv_chk(a->max_qp_rd_atom >= 1 && a->max_qp_init_rd_atom >= 1,
	       "max_qp_rd_atom %d max_qp_init_rd_atom %d", a->max_qp_rd_atom,
	       a->max_qp_init_rd_atom);
	kv_chk(a->max_mr_size >= SZ_1G, "max_mr_size %llu", a->max_mr_size);
	kv_chk(ib_uses_virt_dma(r->dev[0]), "not virtual DMA");
	kv_chk(rdma_rw_mr_factor(r->dev[0], 1, 256) >= 1, "rdma_rw_mr_factor");
	/* A QP of every advertised SGE and the full depth can be made. */
	if (!kv_nfail) {
		struct kv_pair p;
		struct kv_opts o;

		kv_opts_default(&o);
		o.send_sge = a->max_send_sge;
		o.sq = a->max_qp_wr;
		if (!kv_pair_create(&p, r, &o)) {
			kv_chk(p.cap[0].max_send_sge >= a->max_send_sge &&
			       p.cap[0].max_send_wr >= a->max_qp_wr,
			       "QP granted %u SGEs %u WRs", p.cap[0].max_send_sge,
			       p.cap[0].max_send_wr);
			kv_pair_destroy(&p);
		}
	}
	if (!kv_nfail)
		kv_say(false, "max_fast_reg_page_list_len %u max_qp_wr %d %s %d %s %d",
		       a->max_fast_reg_page_list_len, a->max_qp_wr,
		       "max_send_sge", a->max_send_sge, "max_sge_rd", a->max_sge_rd);
	return 0;
}

/* A case that must fail: the suite's own check. */
static int t_selfcheck(struct kv_run *r, unsigned long arg)
{
	struct kv_fr f;

	if (kv_fr_create(&f, r, 0x60) && kv_fr_write(&f, f.m.rkey, 1))
		kv_chk(*kv_buf_at(&f.t, 0) == kv_pat(2, 0),
		       "deliberately wrong expectation: byte 0 is 0x%02x, expected 0x%02x",
		       *kv_buf_at(&f.t, 0), kv_pat(2, 0));
	kv_fr_destroy(&f);
	return 0;
}

/* ---- the debugfs interface ---------------------------------------------- */

struct kv_test {
	const char *name;
	int (*fn)(struct kv_run *r, unsigned long arg);
	unsigned long arg;
};

static const struct kv_test kv_tests[] = {
	{ "attrs", t_attrs, 0 },
	{ "fastreg_write_4k", t_fastreg, 0 },
	{ "fastreg_write_64k", t_fastreg, 4 },
	{ "fastreg_write_2m", t_fastreg, 9 },
	{ "fastreg_read_4k", t_fastreg, 0x100 },
	{ "fastreg_read_64k", t_fastreg, 0x104 },
	{ "fastreg_read_2m", t_fastreg, 0x109 },
	{ "key_rotation", t_key_rotation, 0 },
	{ "reg_valid_mr_fails", t_reg_valid_mr, 0 },
	{ "local_inv", t_local_inv, 0 },
	{ "send_with_inv", t_send_with_inv, 0 },
	{ "fence", t_fence, 0 },
	{ "inline", t_inline, 0 },
	{ "unsignaled", t_unsignaled, 0 },
	{ "drain_rc", t_drain_rc, IB_POLL_SOFTIRQ },
	{ "drain_rc_direct", t_drain_rc, IB_POLL_DIRECT },
	{ "drain_ud", t_drain_ud, 0 },
	{ "cq_direct", t_cq_ctx, IB_POLL_DIRECT },
	{ "cq_softirq", t_cq_ctx, IB_POLL_SOFTIRQ },
	{ "cq_workqueue", t_cq_ctx, IB_POLL_WORKQUEUE },
	{ "cq_unbound_workqueue", t_cq_ctx, IB_POLL_UNBOUND_WORKQUEUE },
	{ "cq_pool", t_cq_ctx, (unsigned long)-1 },
	{ "srq", t_srq, 0 },
	{ "rdma_rw", t_rdma_rw, 0 },
	{ "rdma_rw_mr", t_rdma_rw, 1 },
	{ "dma_mr", t_dma_mr, 0 },
	{ "pd_in_use", t_pd_in_use, 0 },
	{ "selfcheck_must_fail", t_selfcheck, 0 },
};

/* ---- devices by name ------------------------------------------------- */

/*
 * The devices ib_core has, as this module's ib_client sees them, so that
 * a test can name them: ib_core's lookup by name, ib_device_get_by_name(),
 * went away after 6.12.
 */
struct kv_dev {
	struct list_head list;
	struct ib_device *dev;
};

static LIST_HEAD(kv_devs);
static DEFINE_MUTEX(kv_devs_lock);
static struct ib_client kv_client;

static int kv_client_add(struct ib_device *dev)
{
	struct kv_dev *d = kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return -ENOMEM;
	d->dev = dev;
	mutex_lock(&kv_devs_lock);
	list_add_tail(&d->list, &kv_devs);
	mutex_unlock(&kv_devs_lock);
	ib_set_client_data(dev, &kv_client, d);
	return 0;
}

static void kv_client_remove(struct ib_device *dev, void *client_data)
{
	struct kv_dev *d = client_data;

	mutex_lock(&kv_devs_lock);
	list_del(&d->list);
	mutex_unlock(&kv_devs_lock);
	kfree(d);
}

static struct ib_client kv_client = {
	.name = "sib_kverbs",
	.add = kv_client_add,
	.remove = kv_client_remove,
};

/* The device called @name, with a reference (ib_device_put()), or NULL. */
static struct ib_device *kv_dev_get(const char *name)
{
	struct ib_device *dev = NULL;
	struct kv_dev *d;

	mutex_lock(&kv_devs_lock);
	list_for_each_entry(d, &kv_devs, list) {
		if (!strcmp(d->dev->name, name) && ib_device_try_get(d->dev)) {
			dev = d->dev;
			break;
		}
	}
	mutex_unlock(&kv_devs_lock);
	return dev;
}

static void kv_run_cmd(char *cmd)
{
	char *name, *dn[2] = {}, *gs[2] = {};
	struct kv_run r = {};
	const struct kv_test *t = NULL;
	int i;

	strim(cmd);
	name = strsep(&cmd, " ");
	for (i = 0; i < 2; i++) {
		dn[i] = strsep(&cmd, " ");
		gs[i] = strsep(&cmd, " ");
	}
	for (i = 0; i < ARRAY_SIZE(kv_tests); i++)
		if (name && !strcmp(name, kv_tests[i].name))
			t = &kv_tests[i];
	if (!t) {
		kv_line("fail: ", "no test \"%s\"", name ? name : "");
		return;
	}
	if (!dn[1] || !*dn[1]) {
		dn[1] = dn[0];
		gs[1] = gs[0];
	}
	for (i = 0; i < 2; i++) {
		if (!dn[i] || !gs[i] || kstrtoint(gs[i], 0, &r.gid[i])) {
			kv_line("fail: ", "usage: TEST DEV GID [DEV GID]");
			goto out;
		}
		r.dev[i] = kv_dev_get(dn[i]);
		if (!r.dev[i]) {
			kv_line("fail: ", "no device %s", dn[i]);
			goto out;
		}
	}
	t->fn(&r, t->arg);
	if (kv_nfail)
		kv_line("fail: ", "%d failed checks", kv_nfail);
	else if (kv_skipped)
		kv_line("skip: ", "%s", kv_note);
	else if (kv_note[0])
		kv_line("ok: ", "%s", kv_note);
	else
		kv_line("ok", "%s", "");
out:
	for (i = 0; i < 2; i++)
		if (r.dev[i])
			ib_device_put(r.dev[i]);
}

static ssize_t kv_run_write(struct file *file, const char __user *ubuf,
			    size_t count, loff_t *ppos)
{
	char cmd[128];

	if (count >= sizeof(cmd))
		return -EINVAL;
	if (copy_from_user(cmd, ubuf, count))
		return -EFAULT;
	cmd[count] = 0;
	mutex_lock(&kv_lock);
	kv_out_len = 0;
	kv_out[0] = 0;
	kv_nfail = 0;
	kv_note[0] = 0;
	kv_skipped = false;
	kv_run_cmd(cmd);
	mutex_unlock(&kv_lock);
	return count;
}

static ssize_t kv_run_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	ssize_t ret;

	mutex_lock(&kv_lock);
	ret = simple_read_from_buffer(ubuf, count, ppos, kv_out, kv_out_len);
	mutex_unlock(&kv_lock);
	return ret;
}

static const struct file_operations kv_run_fops = {
	.owner = THIS_MODULE,
	.write = kv_run_write,
	.read = kv_run_read,
	.llseek = default_llseek,
};

static struct dentry *kv_dir;

static int __init kv_init(void)
{
	int ret;

	ret = ib_register_client(&kv_client);
	if (ret)
		return ret;
	kv_dir = debugfs_create_dir("sib_kverbs", NULL);
	debugfs_create_file("run", 0600, kv_dir, NULL, &kv_run_fops);
	return 0;
}

static void __exit kv_exit(void)
{
	debugfs_remove_recursive(kv_dir);
	ib_unregister_client(&kv_client);
}

module_init(kv_init);
module_exit(kv_exit);
MODULE_DESCRIPTION("sib kernel verbs tests");
MODULE_LICENSE("Dual BSD/GPL");
