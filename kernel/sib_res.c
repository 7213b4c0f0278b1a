// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Resource tracking views: the engine state that "rdma resource show qp
 * -dd" and "rdma resource show cq -dd" print next to ib_core's own fields,
 * as driver attributes of RDMA netlink.
 *
 * The fields are engine-private and change while they are read: the view
 * is a snapshot, read without the engines' mutex (a dump must never wait
 * for a busy QP), each field once. ib_core holds a reference on the
 * object for the call.
 *
 * Also the device's object counts, for leak checks in tests, and a view
 * of each QP's rings, read the same way (a snapshot):
 *
 *   /sys/kernel/debug/sib/<ibdev>/objects
 *     live PDs, CQs, QPs, SRQs, AHs, MRs and MWs, device memory
 *     allocations and the bytes of device memory they hold
 *   /sys/kernel/debug/sib/<ibdev>/qp/<qpn>
 *     the QP's SQ and RQ indices, its PSNs, and each send WQE fetched
 *     and not yet completed, the 64 oldest (Documentation/tracing.md)
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <rdma/restrack.h>

#include "sib.h"
#include "sib_cq.h"
#include "sib_qp.h"
#include "sib_res.h"
#include "sib_trace.h"

/* An engine field read while the engines may change it: a snapshot. */
#define sib_snap(x)	data_race(x)

struct sib_res_field {
	const char *name;
	u32 val;
};

static int sib_res_put(struct sk_buff *msg, const struct sib_res_field *f,
		       int n)
{
	struct nlattr *table;
	int i;

	table = nla_nest_start_noflag(msg, RDMA_NLDEV_ATTR_DRIVER);
	if (!table)
		return -EMSGSIZE;
	for (i = 0; i < n; i++)
		if (rdma_nl_put_driver_u32(msg, f[i].name, f[i].val))
			goto err;
	nla_nest_end(msg, table);
	return 0;
err:
	nla_nest_cancel(msg, table);
	return -EMSGSIZE;
}

/*
 * The requester's and completer's positions in the send queue and in the
 * PSN space, what they wait for (the RNR timer, credits: the SSN of the
 * last message fetched against the limit the responder advertised), and
 * the responder's position, with its receive queue's consumer and
 * producer indices (0 and 0 on an SRQ).
 */
int sib_fill_res_qp_entry(struct sk_buff *msg, struct ib_qp *ib_qp)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	unsigned long events = sib_snap(qp->events);
	const struct sib_res_field f[] = {
		{ "sq_fetched", sib_snap(qp->req.fetched) },
		{ "sq_next", sib_snap(qp->req.idx) },
		{ "sq_oldest", sib_snap(qp->comp.idx) },
		{ "psn_next", sib_snap(qp->req.psn) },
		{ "psn_unacked", sib_snap(qp->comp.psn) },
		{ "rd_atomic_out", sib_snap(qp->req.rd_atomic) },
		{ "retry_left", sib_snap(qp->comp.retry) },
		{ "rnr_retry_left", sib_snap(qp->comp.rnr_retry) },
		{ "rnr_wait", sib_snap(qp->req.rnr_wait) },
		{ "credit_wait", sib_snap(qp->req.credit_wait) },
		{ "credit_probe", sib_snap(qp->req.credit_probe) },
		{ "ssn", sib_snap(qp->req.ssn) },
		{ "lsn", sib_snap(qp->req.lsn) },
		{ "probe", sib_snap(qp->req.probe) },
		{ "retrans_armed", sib_snap(qp->retrans_on) },
		{ "tx_held", sib_snap(qp->tx_held) },
		{ "resp_psn", sib_snap(qp->resp.psn) },
		{ "resp_msn", sib_snap(qp->resp.msn) },
		{ "resp_read_active", sib_snap(qp->resp.rd.active) },
		{ "resp_starved", sib_snap(qp->resp.starved) },
		{ "rq_taken", qp->rq.hdr ? sib_snap(qp->rq.kidx) : 0 },
		{ "rq_posted", qp->rq.hdr ? READ_ONCE(qp->rq.hdr->prod) : 0 },
		{ "rxq_len", skb_queue_len_lockless(&qp->rxq) },
		{ "engine_running", !!sib_snap(qp->runner) },
		{ "pending", !!(events & BIT(SIB_QP_PENDING)) },
	};

	return sib_res_put(msg, f, ARRAY_SIZE(f));
}

/*
 * The ring's indices (the kernel's producer, the consumer's index as it
 * published it), and what the next completion raises: "armed" is 0
 * (nothing), 1 (IB_CQ_SOLICITED: a solicited one) or 2 (IB_CQ_NEXT_COMP:
 * any).
 */
int sib_fill_res_cq_entry(struct sk_buff *msg, struct ib_cq *ib_cq)
{
	struct sib_cq *cq = to_scq(ib_cq);
	struct sib_res_field f[] = {
		{ "prod" }, { "cons" }, { "armed" }, { "error" },
	};
	unsigned long flags;

	/* the lock keeps the ring: resize_cq() frees the old one */
	spin_lock_irqsave(&cq->lock, flags);
	f[0].val = cq->q.kidx;
	f[1].val = READ_ONCE(cq->q.hdr->cons);
	f[2].val = cq->notify;
	f[3].val = cq->error;
	spin_unlock_irqrestore(&cq->lock, flags);
	return sib_res_put(msg, f, ARRAY_SIZE(f));
}

/* "objects": live objects of each type, for leak checks in tests. */
static int sib_objects_show(struct seq_file *m, void *v)
{
	struct sib_dev *sdev = m->private;

	seq_printf(m, "pd %d\ncq %d\nqp %d\nsrq %d\nah %d\nmr %d\nmw %d\n",
		   atomic_read(&sdev->num_pd), atomic_read(&sdev->num_cq),
		   atomic_read(&sdev->num_qp), atomic_read(&sdev->num_srq),
		   atomic_read(&sdev->num_ah), atomic_read(&sdev->mem.num_mr),
		   atomic_read(&sdev->mem.num_mw));
	seq_printf(m, "dm %d\ndm_bytes %lld\n", atomic_read(&sdev->num_dm),
		   (long long)atomic64_read(&sdev->dm_bytes));
	seq_printf(m, "dmabuf %d\n", atomic_read(&sdev->mem.num_dmabuf));
	seq_printf(m, "odp_chunks %d\n",
		   atomic_read(&sdev->mem.num_odp_chunks));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sib_objects);

/* The "objects" file and the "qp" directory, in the device's @dir. */
void sib_res_debugfs(struct sib_dev *sdev, struct dentry *dir)
{
	debugfs_create_file("objects", 0400, dir, sdev, &sib_objects_fops);
	sdev->qp_dir = debugfs_create_dir("qp", dir);
}

/* ---- qp/<qpn>: a QP's rings and outstanding send WQEs ------------------- */

/*
 * Names by value: the tracepoints' symbol lists (sib_trace.h), whose EM()
 * entries read { value, "name" } here, each list ended by a NULL name.
 */
static const struct trace_print_flags sib_wr_op_syms[] = {
	sib_show_wr_opcodes, { 0, NULL }
};

static const struct trace_print_flags sib_qp_state_syms[] = {
	sib_show_qp_states, { 0, NULL }
};

static const struct trace_print_flags sib_wc_status_syms[] = {
	sib_show_wc_status, { 0, NULL }
};

static const struct trace_print_flags sib_swqe_state_syms[] = {
	{ SIB_SWQE_SENDING, "sending" },
	{ SIB_SWQE_SENT, "sent" },
	{ SIB_SWQE_DONE, "done" },
	{ 0, NULL }
};

static const char *sib_name(const struct trace_print_flags *sym,
			    unsigned long v)
{
	for (; sym->name; sym++)
		if (sym->mask == v)
			return sym->name;
	return "?";
}

/* One send WQE between the oldest not completed and the last fetched. */
static void sib_qp_show_swqe(struct seq_file *m, struct sib_qp *qp, u32 idx)
{
	struct sib_swqe *s = sib_swqe_at(qp, idx);
	struct sib_send_wqe *wr = sib_snap(s->wr);

	seq_printf(m, "wqe idx %u op %s len %u psn %u-%u state %s status %s\n",
		   idx, wr ? sib_name(sib_wr_op_syms, sib_snap(wr->opcode)) : "?",
		   sib_snap(s->len), sib_snap(s->first_psn),
		   sib_snap(s->last_psn),
		   sib_name(sib_swqe_state_syms, sib_snap(s->state)),
		   sib_name(sib_wc_status_syms, sib_snap(s->status)));
}

/*
 * The WQE lines a read shows at most, the oldest first: a full SQ has
 * SIB_MAX_QP_WR, which would make a read of a megabyte.
 */
#define SIB_QP_VIEW_WQES	64

static void sib_qp_show(struct seq_file *m, struct sib_qp *qp)
{
	u32 oldest = sib_snap(qp->comp.idx), next = sib_snap(qp->req.idx);
	u32 fetched = sib_snap(qp->req.fetched), i, n, shown;
	/* An RSS QP's send queue is a placeholder (sib_qp.c): not shown. */
	bool sq = qp->sq.hdr && qp->swqe && !qp->rss;

	seq_printf(m, "qpn %u state %s\n", sib_qpn(qp),
		   sib_name(sib_qp_state_syms, sib_qp_state(qp)));
	if (sq)
		seq_printf(m, "sq slots %u prod %u cons %u fetched %u next %u oldest %u\n",
			   qp->sq.nslots, READ_ONCE(qp->sq.hdr->prod),
			   sib_snap(qp->sq.kidx), fetched, next, oldest);
	if (qp->rq.hdr)
		seq_printf(m, "rq slots %u prod %u cons %u\n", qp->rq.nslots,
			   READ_ONCE(qp->rq.hdr->prod), sib_snap(qp->rq.kidx));
	seq_printf(m, "psn next %u unacked %u resp %u\n",
		   sib_snap(qp->req.psn), sib_snap(qp->comp.psn),
		   sib_snap(qp->resp.psn));
	if (!sq)
		return;
	/* Each index read once: a torn view lists at most one ring. */
	n = min(fetched - oldest, qp->sq.nslots);
	shown = min_t(u32, n, SIB_QP_VIEW_WQES);
	for (i = 0; i < shown; i++)
		sib_qp_show_swqe(m, qp, oldest + i);
	if (n > shown)
		seq_printf(m, "more %u\n", n - shown);
}

/*
 * The file's name is the QPN; its data the device. The QP is looked up
 * by number, with a reference, for each read: a QP destroyed meanwhile
 * reads as gone (-ENOENT), never as freed memory.
 */
static int sib_qp_view_show(struct seq_file *m, void *v)
{
	struct sib_dev *sdev = m->private;
	struct sib_qp *qp;
	u32 qpn;

	if (kstrtou32(file_dentry(m->file)->d_name.name, 10, &qpn))
		return -ENOENT;
	qp = sib_qp_get(sdev, qpn);
	if (!qp)
		return -ENOENT;
	sib_qp_show(m, qp);
	sib_qp_put(qp);
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(sib_qp_view);

/**
 * sib_res_qp_add - create the debugfs view of a QP
 * @qp:	the QP, published in its device's table (create_qp)
 */
void sib_res_qp_add(struct sib_qp *qp)
{
	char name[12];

	snprintf(name, sizeof(name), "%u", sib_qpn(qp));
	qp->debugfs = debugfs_create_file(name, 0400, qp->sdev->qp_dir,
					  qp->sdev, &sib_qp_view_fops);
}

/**
 * sib_res_qp_del - remove the debugfs view of a QP
 * @qp:	the QP, being destroyed
 *
 * Waits for a read in progress to end.
 */
void sib_res_qp_del(struct sib_qp *qp)
{
	debugfs_remove(qp->debugfs);
	qp->debugfs = NULL;
}
