// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: completion queues.
 *
 * A CQ is a ring of struct sib_cqe. The kernel is the only producer;
 * the consumer is the process (user CQs, polling without a system call)
 * or sib_poll_cq() (kernel CQs).
 */
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sib.h"
#include "sib_cq.h"
#include "sib_main.h"
#include "sib_qp.h"
#include "sib_trace.h"

static int sib_cq_ring(struct sib_cq *cq, int cqe, struct ib_udata *udata,
		       struct sib_queue *q)
{
	struct sib_create_cq_resp resp = {};
	struct sib_ucontext *uctx;
	int ret;

	ret = sib_queue_init(q, roundup_pow_of_two(cqe), SIB_CQE_SIZE);
	if (ret || !udata)
		return ret;

	uctx = rdma_udata_to_drv_context(udata, struct sib_ucontext, ib_uc);
	ret = sib_queue_expose(q, &uctx->ib_uc, &resp.ring);
	if (!ret && udata->outlen)
		ret = ib_copy_to_udata(udata, &resp,
				       min_t(size_t, udata->outlen,
					     sizeof(resp)));
	if (ret)
		sib_queue_destroy(q);
	return ret;
}

int sib_create_cq(struct ib_cq *ib_cq, const struct ib_cq_init_attr *attr,
		  SIB_CREATE_CQ_ARG uarg)
{
	struct ib_udata *udata = sib_cq_udata(uarg);
	struct sib_dev *sdev = to_sdev(ib_cq->device);
	struct sib_cq *cq = to_scq(ib_cq);
	int ret;

	if (attr->flags & ~IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION)
		return -EOPNOTSUPP;
	if (attr->cqe < 1 || attr->cqe > SIB_MAX_CQE)
		return -EINVAL;
	if (atomic_inc_return(&sdev->num_cq) > SIB_MAX_CQ) {
		ret = -ENOMEM;
		goto err;
	}

	spin_lock_init(&cq->lock);
	cq->timestamp = attr->flags & IB_UVERBS_CQ_FLAGS_TIMESTAMP_COMPLETION;
	ret = sib_cq_ring(cq, attr->cqe, udata, &cq->q);
	if (ret)
		goto err;
	ib_cq->cqe = cq->q.nslots;
	return 0;

err:
	atomic_dec(&sdev->num_cq);
	return ret;
}

int sib_destroy_cq(struct ib_cq *ib_cq, struct ib_udata *udata)
{
	struct sib_cq *cq = to_scq(ib_cq);

	/* ib_core refuses while QPs use the CQ, so no one posts to it. */
	sib_queue_destroy(&cq->q);
	atomic_dec(&to_sdev(ib_cq->device)->num_cq);
	return 0;
}

/* Move the CQEs not yet consumed from @old to the start of @new. */
static int sib_cq_move(struct sib_queue *old, struct sib_queue *new)
{
	u32 cons = READ_ONCE(old->hdr->cons);
	u32 n = old->kidx - cons;
	u32 i;

	if (n > old->nslots)
		return -EINVAL;		/* corrupted consumer index */
	if (n > new->nslots)
		return -EINVAL;		/* IBA: no smaller than what is queued */
	for (i = 0; i < n; i++)
		memcpy(sib_queue_slot(new, i), sib_queue_slot(old, cons + i),
		       SIB_CQE_SIZE);
	new->kidx = n;
	new->hdr->prod = n;
	new->hdr->cons = 0;
	return 0;
}

int sib_resize_cq(struct ib_cq *ib_cq, SIB_RESIZE_CQE cqe,
		  struct ib_udata *udata)
{
	struct sib_cq *cq = to_scq(ib_cq);
	struct sib_queue new, old;
	unsigned long flags;
	int ret;

	if (cqe < 1 || cqe > SIB_MAX_CQE)
		return -EINVAL;
	/*
	 * Work requests whose streaming doorbell left the engines to a
	 * worker (sib_qp_kick_async()) were posted before this call: let
	 * those workers finish their runs first, as the doorbells would
	 * have inline, so that the count below includes what they
	 * completed. (Completions that wait for a peer's ACK may come
	 * later either way.)
	 */
	flush_workqueue(sib_async_wq);

	/*
	 * The process learns of the new ring before the CQ moves to it: a
	 * failure to tell it (a bad response buffer) leaves the old ring.
	 */
	ret = sib_cq_ring(cq, cqe, udata, &new);
	if (ret)
		return ret;

	spin_lock_irqsave(&cq->lock, flags);
	ret = sib_cq_move(&cq->q, &new);
	if (!ret) {
		old = cq->q;
		cq->q = new;
		ib_cq->cqe = new.nslots;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	if (ret) {
		sib_queue_destroy(&new);
		return ret;
	}
	sib_queue_destroy(&old);
	return 0;
}

static void sib_cq_overrun(struct sib_cq *cq)
{
	struct ib_event ev = {
		.device = cq->ib_cq.device,
		.element.cq = &cq->ib_cq,
		.event = IB_EVENT_CQ_ERR,
	};

	lockdep_assert_held(&cq->lock);
	cq->error = true;
	WRITE_ONCE(cq->q.hdr->flags, cq->q.hdr->flags | SIB_RING_F_CQ_ERR);
	if (cq->ib_cq.event_handler)
		cq->ib_cq.event_handler(&ev, cq->ib_cq.cq_context);
}

/**
 * sib_cq_post - add a completion
 * @cq:		the CQ
 * @cqe:	the completion
 * @solicited:	the completion is for a solicited event (IBA 11.4.2.2)
 *
 * Return: 0, or -EOVERFLOW if the CQ is full or in error (the caller then
 * moves its QP to the error state).
 */
int sib_cq_post(struct sib_cq *cq, const struct sib_cqe *cqe, bool solicited)
{
	struct sib_cqe *slot;
	unsigned long flags;
	bool notify = false;
	int room;

	spin_lock_irqsave(&cq->lock, flags);
	room = cq->error ? 0 : sib_queue_room(&cq->q);
	if (room <= 0) {
		if (!cq->error)
			sib_cq_overrun(cq);
		spin_unlock_irqrestore(&cq->lock, flags);
		trace_sib_cqe(cq, cqe, false);
		return -EOVERFLOW;
	}
	trace_sib_cqe(cq, cqe, true);
	slot = sib_queue_slot(&cq->q, cq->q.kidx);
	memcpy(slot, cqe, sizeof(*cqe));
	if (cq->timestamp)
		slot->timestamp = ktime_get_ns();
	sib_queue_produce(&cq->q);
	if (cq->notify == IB_CQ_NEXT_COMP ||
	    (cq->notify == IB_CQ_SOLICITED && solicited)) {
		cq->notify = 0;
		notify = true;
	}
	spin_unlock_irqrestore(&cq->lock, flags);

	if (notify && cq->ib_cq.comp_handler)
		cq->ib_cq.comp_handler(&cq->ib_cq, cq->ib_cq.cq_context);
	return 0;
}

int sib_req_notify_cq(struct ib_cq *ib_cq, enum ib_cq_notify_flags flags)
{
	struct sib_cq *cq = to_scq(ib_cq);
	unsigned long irqflags;
	int ret = 0;

	spin_lock_irqsave(&cq->lock, irqflags);
	if (cq->notify != IB_CQ_NEXT_COMP)
		cq->notify = flags & IB_CQ_SOLICITED_MASK;
	if ((flags & IB_CQ_REPORT_MISSED_EVENTS) &&
	    READ_ONCE(cq->q.hdr->cons) != cq->q.kidx)
		ret = 1;
	spin_unlock_irqrestore(&cq->lock, irqflags);
	return ret;
}

static void sib_cqe_to_wc(struct sib_dev *sdev, const struct sib_cqe *cqe,
			  struct ib_wc *wc)
{
	static const u8 opcode[] = {
		[SIB_WC_SEND] = IB_WC_SEND,
		[SIB_WC_RDMA_WRITE] = IB_WC_RDMA_WRITE,
		[SIB_WC_RDMA_READ] = IB_WC_RDMA_READ,
		[SIB_WC_COMP_SWAP] = IB_WC_COMP_SWAP,
		[SIB_WC_FETCH_ADD] = IB_WC_FETCH_ADD,
		[SIB_WC_FLUSH] = SIB_WC_FLUSH,			/* 6.2's value */
		[SIB_WC_ATOMIC_WRITE] = SIB_WC_ATOMIC_WRITE,	/* 6.2's value */
		[SIB_WC_BIND_MW] = IB_WC_BIND_MW,
		[SIB_WC_LOCAL_INV] = IB_WC_LOCAL_INV,
		[SIB_WC_REG_MR] = IB_WC_REG_MR,
	};

	memset(wc, 0, sizeof(*wc));
	wc->wr_id = cqe->wr_id;
	wc->status = cqe->status;
	if (cqe->opcode == SIB_WC_RECV)
		wc->opcode = IB_WC_RECV;
	else if (cqe->opcode == SIB_WC_RECV_RDMA_WITH_IMM)
		wc->opcode = IB_WC_RECV_RDMA_WITH_IMM;
	else if (cqe->opcode < ARRAY_SIZE(opcode))
		wc->opcode = opcode[cqe->opcode];
	wc->vendor_err = cqe->vendor_err;
	wc->byte_len = cqe->byte_len;
	wc->ex.imm_data = (__force __be32)cqe->ex;
	wc->src_qp = cqe->src_qp;
	if (cqe->wc_flags & SIB_WC_F_GRH)
		wc->wc_flags |= IB_WC_GRH | IB_WC_WITH_NETWORK_HDR_TYPE;
	if (cqe->wc_flags & SIB_WC_F_WITH_IMM)
		wc->wc_flags |= IB_WC_WITH_IMM;
	if (cqe->wc_flags & SIB_WC_F_WITH_INV)
		wc->wc_flags |= IB_WC_WITH_INVALIDATE;
	wc->pkey_index = cqe->pkey_index;
	wc->slid = cqe->slid;
	wc->sl = cqe->sl;
	wc->port_num = 1;
	wc->network_hdr_type = cqe->network_hdr_type;
	wc->qp = sib_qp_ib_lookup(sdev, cqe->qp_num);
}

/* Kernel consumers only; user CQs are polled from user space. */
int sib_poll_cq(struct ib_cq *ib_cq, int num_entries, struct ib_wc *wc)
{
	struct sib_dev *sdev = to_sdev(ib_cq->device);
	struct sib_cq *cq = to_scq(ib_cq);
	struct sib_queue *q = &cq->q;
	unsigned long flags;
	int n = 0;

	spin_lock_irqsave(&cq->lock, flags);
	while (n < num_entries && q->hdr->cons != q->kidx) {
		sib_cqe_to_wc(sdev, sib_queue_slot(q, q->hdr->cons), &wc[n]);
		/* A destroyed QP's completion (see sib_cq_clean()): skipped. */
		if (wc[n].qp)
			n++;
		/* Publish the slots before the index (ring rule). */
		smp_store_release(&q->hdr->cons, q->hdr->cons + 1);
	}
	spin_unlock_irqrestore(&cq->lock, flags);
	return n;
}

/**
 * sib_cq_clean - forget a destroyed kernel QP's completions
 * @cq:		a kernel consumer's CQ
 * @qpn:	the QP's number, already out of the QP table
 *
 * Every work completion names its QP (wc->qp), which a consumer may
 * dereference. A QP destroyed without draining would leave completions
 * that name nothing, or, once its number is reused, another QP. As
 * hardware drivers do, its completions are removed: they are marked with
 * QP number 0, which names no sib QP, and sib_poll_cq() skips them. The
 * QP's engines have stopped: no more of them come.
 */
void sib_cq_clean(struct sib_cq *cq, u32 qpn)
{
	struct sib_queue *q = &cq->q;
	struct sib_cqe *cqe;
	unsigned long flags;
	u32 i;

	spin_lock_irqsave(&cq->lock, flags);
	for (i = q->hdr->cons; i != q->kidx; i++) {
		cqe = sib_queue_slot(q, i);
		if (cqe->qp_num == qpn)
			cqe->qp_num = 0;
	}
	spin_unlock_irqrestore(&cq->lock, flags);
}
