// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: shared receive queues, and taking receive WQEs out of a ring.
 */
#include <rdma/uverbs_ioctl.h>

#include "sib_qp.h"
#include "sib_srq.h"

static u32 sib_recv_slot_size(u32 max_sge)
{
	return roundup_pow_of_two(SIB_RECV_WQE_HDR +
				  max_sge * sizeof(struct sib_sge));
}

/*
 * Copy the WQE at @q's consumer index into @rwqe, once, and validate the
 * copy. Returns 0, -ENOENT if the ring is empty, -EINVAL if the ring or
 * the WQE is corrupt (the caller moves the QP to the error state).
 */
int sib_ring_take_rwqe(struct sib_queue *q, u32 max_sge,
		       struct sib_rwqe *rwqe)
{
	const struct sib_recv_wqe *w;
	int avail = sib_queue_avail(q);

	if (avail < 0)
		return -EINVAL;
	if (!avail)
		return -ENOENT;
	w = sib_queue_slot(q, q->kidx);
	rwqe->wr_id = READ_ONCE(w->wr_id);
	rwqe->num_sge = READ_ONCE(w->num_sge);
	if (rwqe->num_sge > max_sge) {
		/*
		 * Malformed: taken all the same, with no SGE, so that the
		 * flush that follows completes it, and the WQEs after it.
		 */
		rwqe->num_sge = 0;
		sib_queue_consume(q, 1);
		return -EBADMSG;
	}
	memcpy(rwqe->sge, (const void *)(w + 1),
	       rwqe->num_sge * sizeof(struct sib_sge));
	sib_queue_consume(q, 1);
	return 0;
}

/* XRCETH's XRCSRQ field is 24 bits; 0 is never an SRQ's number. */
#define SIB_MIN_SRQN	1
#define SIB_MAX_SRQN	0xffffff

/* The SRQ numbered @srq_num, with a reference, or NULL. */
struct sib_srq *sib_srq_get(struct sib_dev *sdev, u32 srq_num)
{
	struct sib_srq *srq;

	rcu_read_lock();
	srq = xa_load(&sdev->srq_xa, srq_num);
	if (srq) {
		sib_fault_lookup_delay(&sdev->fault);
		if (!refcount_inc_not_zero(&srq->ref))
			srq = NULL;
	}
	rcu_read_unlock();
	return srq;
}

void sib_srq_put(struct sib_srq *srq)
{
	if (refcount_dec_and_test(&srq->ref))
		complete(&srq->done);
}

static void sib_srq_limit_event(struct sib_srq *srq)
{
	struct ib_event ev = {
		.device = srq->ib_srq.device,
		.element.srq = &srq->ib_srq,
		.event = IB_EVENT_SRQ_LIMIT_REACHED,
	};

	if (srq->ib_srq.event_handler)
		srq->ib_srq.event_handler(&ev, srq->ib_srq.srq_context);
}

/* Take one WQE for a QP attached to @srq; same returns as above. */
int sib_srq_take(struct sib_srq *srq, struct sib_rwqe *rwqe)
{
	unsigned long flags;
	bool limit = false;
	int ret, left;

	spin_lock_irqsave(&srq->lock, flags);
	ret = sib_ring_take_rwqe(&srq->q, srq->max_sge, rwqe);
	if (!ret && srq->limit) {
		left = sib_queue_avail(&srq->q);
		if (left >= 0 && left < srq->limit) {
			srq->limit = 0;	/* IBA: the limit disarms itself */
			limit = true;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	if (limit)
		sib_srq_limit_event(srq);
	return ret;
}

static int sib_srq_check(struct ib_srq_attr *attr)
{
	if (attr->max_wr < 1 || attr->max_wr > SIB_MAX_SRQ_WR)
		return -EINVAL;
	if (attr->max_sge > SIB_MAX_SRQ_SGE)
		return -EINVAL;
	if (attr->srq_limit > attr->max_wr)
		return -EINVAL;
	return 0;
}

static int sib_srq_expose(struct sib_srq *srq, struct ib_udata *udata)
{
	struct sib_create_srq_resp resp = { .srq_num = srq->srq_num };
	struct sib_ucontext *uctx;
	int ret;

	uctx = rdma_udata_to_drv_context(udata, struct sib_ucontext, ib_uc);
	ret = sib_queue_expose(&srq->q, &uctx->ib_uc, &resp.ring);
	if (ret)
		return ret;
	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

int sib_create_srq(struct ib_srq *ib_srq, struct ib_srq_init_attr *init,
		   struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_srq->device);
	struct sib_srq *srq = to_ssrq(ib_srq);
	struct ib_srq_attr *attr = &init->attr;
	int ret;

	if (init->srq_type != IB_SRQT_BASIC && init->srq_type != IB_SRQT_XRC)
		return -EOPNOTSUPP;
	if (init->srq_type == IB_SRQT_XRC && !init->ext.xrc.xrcd)
		return -EINVAL;
	ret = sib_srq_check(attr);
	if (ret)
		return ret;
	if (atomic_inc_return(&sdev->num_srq) > SIB_MAX_SRQ) {
		ret = -ENOMEM;
		goto err_count;
	}

	attr->max_sge = max_t(u32, attr->max_sge, 1);
	spin_lock_init(&srq->lock);
	srq->max_sge = attr->max_sge;
	srq->limit = attr->srq_limit;
	refcount_set(&srq->ref, 1);
	init_completion(&srq->done);
	if (init->srq_type == IB_SRQT_XRC)
		srq->xrcd = init->ext.xrc.xrcd;
	ret = xa_alloc_cyclic(&sdev->srq_xa, &srq->srq_num, NULL,
			      XA_LIMIT(SIB_MIN_SRQN, SIB_MAX_SRQN),
			      &sdev->srqn_next, GFP_KERNEL);
	if (ret < 0)
		goto err_count;
	if (init->srq_type == IB_SRQT_XRC)
		ib_srq->ext.xrc.srq_num = srq->srq_num;
	ret = sib_queue_init(&srq->q, roundup_pow_of_two(attr->max_wr),
			     sib_recv_slot_size(srq->max_sge));
	if (ret)
		goto err_xa;
	srq->max_sge = (srq->q.slot_size - SIB_RECV_WQE_HDR) /
		       sizeof(struct sib_sge);
	srq->max_sge = min_t(u32, srq->max_sge, SIB_MAX_SRQ_SGE);
	attr->max_wr = srq->q.nslots;
	attr->max_sge = srq->max_sge;
	if (udata) {
		ret = sib_srq_expose(srq, udata);
		if (ret)
			goto err_queue;
	}
	/* Publish last: from now on XRC requests can find the SRQ. */
	xa_store(&sdev->srq_xa, srq->srq_num, srq, GFP_KERNEL);
	return 0;

err_queue:
	sib_queue_destroy(&srq->q);
err_xa:
	xa_erase(&sdev->srq_xa, srq->srq_num);
err_count:
	atomic_dec(&sdev->num_srq);
	return ret;
}

int sib_modify_srq(struct ib_srq *ib_srq, struct ib_srq_attr *attr,
		   enum ib_srq_attr_mask mask, struct ib_udata *udata)
{
	struct sib_srq *srq = to_ssrq(ib_srq);
	unsigned long flags;

	/* Resizing is not supported (IB_DEVICE_SRQ_RESIZE is not set). */
	if (mask & IB_SRQ_MAX_WR)
		return -EINVAL;
	if (!(mask & IB_SRQ_LIMIT))
		return 0;
	if (attr->srq_limit > srq->q.nslots)
		return -EINVAL;
	spin_lock_irqsave(&srq->lock, flags);
	srq->limit = attr->srq_limit;
	spin_unlock_irqrestore(&srq->lock, flags);
	return 0;
}

int sib_query_srq(struct ib_srq *ib_srq, struct ib_srq_attr *attr)
{
	struct sib_srq *srq = to_ssrq(ib_srq);

	attr->max_wr = srq->q.nslots;
	attr->max_sge = srq->max_sge;
	attr->srq_limit = READ_ONCE(srq->limit);
	return 0;
}

int sib_destroy_srq(struct ib_srq *ib_srq, struct ib_udata *udata)
{
	struct sib_srq *srq = to_ssrq(ib_srq);
	struct sib_dev *sdev = to_sdev(ib_srq->device);
	unsigned long gp;

	/*
	 * ib_core refuses while QPs are attached to a basic SRQ; an XRC SRQ
	 * has none, but XRC_TGT QPs may be executing a packet for it: wait
	 * for them (sib_xrc.c).
	 */
	xa_erase(&sdev->srq_xa, srq->srq_num);
	/* As for a QP: ib_core frees the SRQ with no grace period. */
	gp = start_poll_synchronize_rcu_expedited();
	sib_srq_put(srq);
	wait_for_completion(&srq->done);
	sib_queue_destroy(&srq->q);
	atomic_dec(&to_sdev(ib_srq->device)->num_srq);
	cond_synchronize_rcu_expedited(gp);
	return 0;
}

/* Kernel consumers: write WQEs into the ring as a process would. */
int sib_post_srq_recv(struct ib_srq *ib_srq, const struct ib_recv_wr *wr,
		      const struct ib_recv_wr **bad_wr)
{
	struct sib_srq *srq = to_ssrq(ib_srq);
	unsigned long flags;
	int ret = 0;

	spin_lock_irqsave(&srq->lock, flags);
	for (; wr; wr = wr->next) {
		ret = sib_ring_put_rwqe(&srq->q, srq->max_sge, wr);
		if (ret) {
			*bad_wr = wr;
			break;
		}
	}
	spin_unlock_irqrestore(&srq->lock, flags);
	return ret;
}

/* Producer side for kernel RQs and SRQs; the caller serialises. */
int sib_ring_put_rwqe(struct sib_queue *q, u32 max_sge,
		      const struct ib_recv_wr *wr)
{
	u32 prod = q->hdr->prod;
	struct sib_recv_wqe *w;
	struct sib_sge *sge;
	int i;

	if (wr->num_sge > max_sge)
		return -EINVAL;
	if (prod - READ_ONCE(q->hdr->cons) >= q->nslots)
		return -ENOMEM;
	w = sib_queue_slot(q, prod);
	w->wr_id = wr->wr_id;
	w->num_sge = wr->num_sge;
	sge = (struct sib_sge *)(w + 1);
	for (i = 0; i < wr->num_sge; i++) {
		sge[i].addr = wr->sg_list[i].addr;
		sge[i].length = wr->sg_list[i].length;
		sge[i].lkey = wr->sg_list[i].lkey;
	}
	/* Publish the slots before the index (ring rule). */
	smp_store_release(&q->hdr->prod, prod + 1);
	return 0;
}
