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
 * Also the device's object counts, for leak checks in tests:
 *
 *   /sys/kernel/debug/sib/<ibdev>/objects
 *     live PDs, CQs, QPs, SRQs, AHs, MRs and MWs, device memory
 *     allocations and the bytes of device memory they hold
 */
#include <linux/debugfs.h>
#include <linux/seq_file.h>
#include <rdma/restrack.h>

#include "sib.h"
#include "sib_cq.h"
#include "sib_qp.h"
#include "sib_res.h"

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

/* The "objects" file, in the device's debugfs directory @dir. */
void sib_res_debugfs(struct sib_dev *sdev, struct dentry *dir)
{
	debugfs_create_file("objects", 0400, dir, sdev, &sib_objects_fops);
}
