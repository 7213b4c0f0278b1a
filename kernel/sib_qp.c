// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: queue pair verbs and the QP state machine (IBA 10.3). The work
 * items that run a QP's engines are sib_task.c's; flushing a QP in the
 * error state is sib_flush.c's.
 */
#include <linux/vmalloc.h>
#include <rdma/uverbs_ioctl.h>

#include "sib_cq.h"
#include "sib_net.h"
#include "sib_qp.h"
#include "sib_res.h"
#include "sib_task.h"
#include "sib_timer.h"
#include "sib_trace.h"
#include "sib_verbs.h"
#include "sib_wq.h"
#include "sib_xrc.h"

#define SIB_MIN_QPN	16
#define SIB_MAX_QPN	0xffffff

enum ib_qp_state sib_qp_state(struct sib_qp *qp)
{
	return READ_ONCE(qp->state);
}

/* ---- lookup and life time ------------------------------------------- */

struct sib_qp *sib_qp_get(struct sib_dev *sdev, u32 qpn)
{
	struct sib_qp *qp;

	rcu_read_lock();
	qp = xa_load(&sdev->qp_xa, qpn);
	if (qp) {
		sib_fault_lookup_delay(&sdev->fault);
		if (!refcount_inc_not_zero(&qp->ref))
			qp = NULL;
	}
	rcu_read_unlock();
	return qp;
}

void sib_qp_put(struct sib_qp *qp)
{
	if (refcount_dec_and_test(&qp->ref))
		complete(&qp->done);
}

/*
 * For kernel CQ polling: the QP of a completion. It is alive: a destroyed
 * kernel QP's completions are removed (sib_cq_clean()).
 */
struct ib_qp *sib_qp_ib_lookup(struct sib_dev *sdev, u32 qpn)
{
	struct sib_qp *qp = xa_load(&sdev->qp_xa, qpn);

	return qp ? &qp->ib_qp : NULL;
}

/* ---- create ---------------------------------------------------------- */

static int sib_qp_check_caps(struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;

	if (init->create_flags)
		return -EOPNOTSUPP;
	if (cap->max_send_wr > SIB_MAX_QP_WR || cap->max_send_sge > SIB_MAX_SGE ||
	    cap->max_inline_data > SIB_MAX_INLINE)
		return -EINVAL;
	if (!init->srq && (cap->max_recv_wr > SIB_MAX_QP_WR ||
			   cap->max_recv_sge > SIB_MAX_SGE))
		return -EINVAL;
	return 0;
}

/*
 * XRC QPs (sib_xrc.c): an XRC_INI QP has a send queue only, an XRC_TGT
 * QP none at all; it belongs to a domain, and no process maps its rings
 * (ib_core creates it without udata and hands out handles to it).
 */
static int sib_xrc_check_init(struct ib_qp_init_attr *init)
{
	if (init->srq)
		return -EINVAL;
	/* Queues it has not: what was asked for them is ignored. */
	if (init->qp_type == IB_QPT_XRC_TGT) {
		if (!init->xrcd)
			return -EINVAL;
		memset(&init->cap, 0, sizeof(init->cap));
	}
	init->cap.max_recv_wr = 0;
	init->cap.max_recv_sge = 0;
	return sib_qp_check_caps(init);
}

static int sib_qp_check_init(struct ib_qp_init_attr *init,
			     struct ib_udata *udata)
{
	/* RSS QPs (sib_wq.c) are raw packet QPs without queues. */
	if (init->rwq_ind_tbl)
		return init->qp_type == IB_QPT_RAW_PACKET ? 0 : -EINVAL;
	switch (init->qp_type) {
	case IB_QPT_RC:
	case IB_QPT_UC:
	case IB_QPT_UD:
		break;
	case IB_QPT_RAW_PACKET:
		/* ib_uverbs asked a process for CAP_NET_RAW (sib_raw.c). */
		if (init->srq)
			return -EOPNOTSUPP;
		break;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return sib_xrc_check_init(init);
	case IB_QPT_GSI:
		/* ib_core's MAD layer owns QP1; processes may not. */
		if (udata || init->port_num != 1)
			return -EINVAL;
		break;
	default:
		return -EOPNOTSUPP;
	}
	return sib_qp_check_caps(init);
}

static int sib_qp_rings(struct sib_qp *qp, struct ib_qp_init_attr *init)
{
	struct ib_qp_cap *cap = &init->cap;
	u32 room, slot;
	int ret;

	room = max_t(u32, cap->max_send_sge * sizeof(struct sib_sge),
		     cap->max_inline_data);
	slot = roundup_pow_of_two(SIB_SEND_WQE_HDR + max_t(u32, room, 16));
	ret = sib_queue_init(&qp->sq, roundup_pow_of_two(max(cap->max_send_wr,
							     1U)), slot);
	if (ret)
		return ret;
	qp->max_send_sge = min_t(u32, (slot - SIB_SEND_WQE_HDR) /
				 sizeof(struct sib_sge), SIB_MAX_SGE);
	qp->max_inline = min_t(u32, slot - SIB_SEND_WQE_HDR, SIB_MAX_INLINE);
	qp->sq_shadow = __vmalloc(qp->sq.nslots * slot, GFP_KERNEL_ACCOUNT |
				  __GFP_ZERO | __GFP_NOWARN);
	qp->swqe = kvcalloc(qp->sq.nslots, sizeof(*qp->swqe),
			    GFP_KERNEL_ACCOUNT);
	/* 128 * 56 bytes for RC; only RC takes READs and atomics. */
	qp->resp_nres = init->qp_type == IB_QPT_RC ||
			init->qp_type == IB_QPT_XRC_TGT ? SIB_MAX_RD_ATOMIC : 1;
	qp->resp_res = kcalloc(qp->resp_nres, sizeof(*qp->resp_res),
			       GFP_KERNEL_ACCOUNT);
	if (!qp->sq_shadow || !qp->swqe || !qp->resp_res)
		return -ENOMEM;
	cap->max_send_wr = qp->sq.nslots;
	cap->max_send_sge = qp->max_send_sge;
	cap->max_inline_data = qp->max_inline;
	/* An RSS QP's send queue is a placeholder that nobody maps. */
	if (init->rwq_ind_tbl)
		memset(cap, 0, sizeof(*cap));
	if (init->srq || init->rwq_ind_tbl || sib_qpt_is_xrc(init->qp_type))
		return 0;

	slot = roundup_pow_of_two(SIB_RECV_WQE_HDR +
				  max(cap->max_recv_sge, 1U) *
				  sizeof(struct sib_sge));
	ret = sib_queue_init(&qp->rq, roundup_pow_of_two(max(cap->max_recv_wr,
							     1U)), slot);
	if (ret)
		return ret;
	qp->max_recv_sge = min_t(u32, (slot - SIB_RECV_WQE_HDR) /
				 sizeof(struct sib_sge), SIB_MAX_SGE);
	cap->max_recv_wr = qp->rq.nslots;
	cap->max_recv_sge = qp->max_recv_sge;
	return 0;
}

static void sib_qp_free_rings(struct sib_qp *qp)
{
	if (qp->sq.hdr)
		sib_queue_destroy(&qp->sq);
	if (qp->rq.hdr)
		sib_queue_destroy(&qp->rq);
	vfree(qp->sq_shadow);
	kfree(qp->resp_res);
	kvfree(qp->swqe);
}

static int sib_qp_expose(struct sib_qp *qp, struct ib_udata *udata)
{
	struct sib_create_qp_resp resp = { .max_inline = qp->max_inline };
	struct sib_ucontext *uctx;
	int ret = 0;

	uctx = rdma_udata_to_drv_context(udata, struct sib_ucontext, ib_uc);
	qp->uctx = uctx;
	/* An RSS QP's send queue is only a placeholder: never shown. */
	if (qp->rss)
		resp.max_inline = 0;
	else
		ret = sib_queue_expose(&qp->sq, &uctx->ib_uc, &resp.sq);
	if (!ret && qp->rq.hdr)
		ret = sib_queue_expose(&qp->rq, &uctx->ib_uc, &resp.rq);
	if (ret)
		return ret;
	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

static void sib_qp_init_state(struct sib_qp *qp, struct ib_qp_init_attr *init)
{
	refcount_set(&qp->ref, 1);
	init_completion(&qp->done);
	spin_lock_init(&qp->state_lock);
	skb_queue_head_init(&qp->rxq);
	INIT_WORK(&qp->work, sib_qp_work);
	INIT_WORK(&qp->async_work, sib_qp_async_work);
	qp->async_backoff = jiffies;
	mutex_init(&qp->engine);
	timer_setup(&qp->rnr_timer, sib_rnr_timer, 0);
	timer_setup(&qp->retrans_timer, sib_retrans_timer, 0);
	timer_setup(&qp->tx_timer, sib_tx_timer, 0);
	spin_lock_init(&qp->sq_lock);
	spin_lock_init(&qp->rq_lock);
	qp->sig_all = init->sq_sig_type == IB_SIGNAL_ALL_WR;
	qp->state = IB_QPS_RESET;
	qp->attr.qp_state = IB_QPS_RESET;
	qp->attr.path_mtu = IB_MTU_1024;
	qp->mtu = 1024;
	qp->resp.msg = SIB_RESP_MSG_NONE;
	qp->attr.cap = init->cap;
}

/*
 * Reserve a QP number: 1 for the GSI QP (one per port, and sib has one
 * port), the others cyclically from SIB_MIN_QPN.
 */
static int sib_qp_alloc_qpn(struct sib_dev *sdev, enum ib_qp_type type,
			    u32 *qpn)
{
	if (type == IB_QPT_GSI) {
		*qpn = 1;
		return xa_insert(&sdev->qp_xa, 1, NULL, GFP_KERNEL);
	}
	return xa_alloc_cyclic(&sdev->qp_xa, qpn, NULL,
			       XA_LIMIT(SIB_MIN_QPN, SIB_MAX_QPN),
			       &sdev->qpn_next, GFP_KERNEL);
}

int sib_create_qp(struct ib_qp *ib_qp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_qp->device);
	struct sib_qp *qp = to_sqp(ib_qp);
	u32 qpn;
	int ret;

	ret = sib_qp_check_init(init, udata);
	if (ret)
		return ret;
	if (atomic_inc_return(&sdev->num_qp) > SIB_MAX_QP) {
		ret = -ENOMEM;
		goto err_count;
	}
	qp->sdev = sdev;
	if (init->qp_type == IB_QPT_XRC_TGT)
		qp->xrcd = init->xrcd;
	if (init->rwq_ind_tbl) {
		ret = sib_rss_qp_init(qp, init, udata);
		if (ret)
			goto err_count;
	}
	ret = sib_qp_rings(qp, init);
	if (ret)
		goto err_rings;
	sib_qp_init_state(qp, init);
	/* An RSS QP receives from its creation on (sib_wq.c). */
	if (qp->rss) {
		qp->state = IB_QPS_RTR;
		qp->attr.qp_state = IB_QPS_RTR;
	}

	ret = sib_qp_alloc_qpn(sdev, init->qp_type, &qpn);
	if (ret < 0)
		goto err_rings;
	ib_qp->qp_num = qpn;
	if (udata) {
		ret = sib_qp_expose(qp, udata);
		if (ret)
			goto err_xa;
	}
	/* Publish last: from now on packets can find the QP. */
	if (init->qp_type == IB_QPT_RAW_PACKET)
		sib_raw_qp_init(qp);
	xa_store(&sdev->qp_xa, qpn, qp, GFP_KERNEL);
	sib_res_qp_add(qp);
	return 0;

err_xa:
	xa_erase(&sdev->qp_xa, qpn);
err_rings:
	sib_qp_free_rings(qp);
	sib_rss_qp_destroy(qp);
err_count:
	atomic_dec(&sdev->num_qp);
	return ret;
}

/* ---- destroy ----------------------------------------------------------- */

int sib_destroy_qp(struct ib_qp *ib_qp, struct ib_udata *udata)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	struct sib_dev *sdev = qp->sdev;
	unsigned long gp;

	sib_res_qp_del(qp);
	/* No frame reaches a raw packet QP from now on. */
	if (ib_qp->qp_type == IB_QPT_RAW_PACKET)
		sib_raw_qp_destroy(qp);
	/*
	 * Honour the doorbells rung before the destroy: a NIC has sent
	 * what it was told of by the time its firmware destroys the QP.
	 */
	sib_qp_run_out(qp);
	xa_erase(&sdev->qp_xa, sib_qpn(qp));
	/*
	 * ib_core frees the QP once this returns, with no grace period, and
	 * a lookup (sib_qp_get()) that found it before the erase may not
	 * have taken its reference yet: it does so under RCU. Start a grace
	 * period now and wait for it at the end, after the teardown. An
	 * expedited one: a normal grace period per QP made sib_load's
	 * teardown of 512 QPs take twice as long.
	 */
	gp = start_poll_synchronize_rcu_expedited();
	WRITE_ONCE(qp->destroying, true);
	/* Wait for every lookup in flight (packet delivery) to end. */
	sib_qp_put(qp);
	wait_for_completion(&qp->done);
	/* And for an engine running in some caller's context. */
	mutex_lock(&qp->engine);
	mutex_unlock(&qp->engine);
	timer_delete_sync(&qp->rnr_timer);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->tx_timer);
	cancel_work_sync(&qp->work);
	cancel_work_sync(&qp->async_work);
	timer_delete_sync(&qp->rnr_timer);
	timer_delete_sync(&qp->retrans_timer);
	timer_delete_sync(&qp->tx_timer);
	skb_queue_purge(&qp->rxq);
	/* An XRC_TGT QP has no CQs: its completions are the SRQs' owners'. */
	if (!sib_qp_is_user(qp) && qp->ib_qp.qp_type != IB_QPT_XRC_TGT) {
		sib_cq_clean(sib_qp_scq(qp), sib_qpn(qp));
		if (qp->ib_qp.recv_cq != qp->ib_qp.send_cq)
			sib_cq_clean(sib_qp_rcq(qp), sib_qpn(qp));
	}
	sib_net_qp_fini(qp);
	sib_qp_free_rings(qp);
	sib_rss_qp_destroy(qp);
	atomic_dec(&sdev->num_qp);
	cond_synchronize_rcu_expedited(gp);
	return 0;
}

/* ---- modify and query -------------------------------------------------- */

#define SIB_QP_UNSUPPORTED	(IB_QP_ALT_PATH | IB_QP_PATH_MIG_STATE | \
				 IB_QP_CAP | IB_QP_RATE_LIMIT)

static int sib_qp_check_attr(struct sib_qp *qp, struct ib_qp_attr *attr,
			     int mask)
{
	if (mask & ~IB_QP_ATTR_STANDARD_BITS)
		return -EOPNOTSUPP;
	if (mask & SIB_QP_UNSUPPORTED)
		return -EOPNOTSUPP;
	if ((mask & IB_QP_PORT) && attr->port_num != 1)
		return -EINVAL;
	if ((mask & IB_QP_PKEY_INDEX) && attr->pkey_index >= SIB_PKEY_TBL_LEN)
		return -EINVAL;
	if ((mask & IB_QP_PATH_MTU) &&
	    (attr->path_mtu < IB_MTU_256 || attr->path_mtu > IB_MTU_4096))
		return -EINVAL;
	if ((mask & IB_QP_RETRY_CNT) && attr->retry_cnt > 7)
		return -EINVAL;
	if ((mask & IB_QP_RNR_RETRY) && attr->rnr_retry > 7)
		return -EINVAL;
	if ((mask & IB_QP_TIMEOUT) && attr->timeout > 31)
		return -EINVAL;
	if ((mask & IB_QP_MIN_RNR_TIMER) && attr->min_rnr_timer > 31)
		return -EINVAL;
	if ((mask & IB_QP_MAX_QP_RD_ATOMIC) &&
	    attr->max_rd_atomic > SIB_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_MAX_DEST_RD_ATOMIC) &&
	    attr->max_dest_rd_atomic > SIB_MAX_RD_ATOMIC)
		return -EINVAL;
	if ((mask & IB_QP_DEST_QPN) && attr->dest_qp_num > SIB_QPN_MASK)
		return -EINVAL;
	if ((mask & IB_QP_AV) &&
	    !(rdma_ah_get_ah_flags(&attr->ah_attr) & IB_AH_GRH))
		return -EINVAL;	/* RoCE needs a GRH */
	return 0;
}

/* Take what sib needs from an address handle attribute (RoCEv2 only). */
void sib_av_from_attr(struct sib_av *av, const struct rdma_ah_attr *ah,
		      u32 lqpn, u32 rqpn)
{
	const struct ib_global_route *grh = rdma_ah_read_grh(ah);

	memset(av, 0, sizeof(*av));
	av->dgid = grh->dgid;
	if (grh->sgid_attr) {
		av->sgid = grh->sgid_attr->gid;
		av->network_type = rdma_gid_attr_network_type(grh->sgid_attr);
	}
	memcpy(av->dmac, ah->roce.dmac, ETH_ALEN);
	av->hop_limit = grh->hop_limit;
	av->traffic_class = grh->traffic_class;
	av->flow_label = grh->flow_label;
	av->udp_sport = rdma_get_udp_sport(grh->flow_label, lqpn, rqpn);
}

/* Copy the attributes in @mask into the QP; under state_lock. */
static void sib_qp_set_attr(struct sib_qp *qp, struct ib_qp_attr *attr,
			    int mask)
{
	struct ib_qp_attr *a = &qp->attr;

	lockdep_assert_held(&qp->state_lock);
	if (mask & IB_QP_ACCESS_FLAGS)
		a->qp_access_flags = attr->qp_access_flags;
	if (mask & IB_QP_PKEY_INDEX)
		a->pkey_index = attr->pkey_index;
	if (mask & IB_QP_PORT)
		a->port_num = attr->port_num;
	if (mask & IB_QP_QKEY)
		a->qkey = attr->qkey;
	if (mask & IB_QP_AV) {
		a->ah_attr = attr->ah_attr;
		/* Only lent to this call: never keep or report it. */
		a->ah_attr.grh.sgid_attr = NULL;
		sib_av_from_attr(&qp->av, &attr->ah_attr, sib_qpn(qp),
				 (mask & IB_QP_DEST_QPN) ? attr->dest_qp_num :
				 a->dest_qp_num);
	}
	if (mask & IB_QP_PATH_MTU) {
		a->path_mtu = attr->path_mtu;
		qp->mtu = ib_mtu_enum_to_int(attr->path_mtu);
	}
	if (mask & IB_QP_TIMEOUT)
		a->timeout = attr->timeout;
	if (mask & IB_QP_RETRY_CNT)
		a->retry_cnt = attr->retry_cnt;
	if (mask & IB_QP_RNR_RETRY)
		a->rnr_retry = attr->rnr_retry;
	if (mask & IB_QP_RQ_PSN)
		a->rq_psn = attr->rq_psn & SIB_PSN_MASK;
	if (mask & IB_QP_MAX_QP_RD_ATOMIC)
		a->max_rd_atomic = attr->max_rd_atomic;
	if (mask & IB_QP_MIN_RNR_TIMER)
		a->min_rnr_timer = attr->min_rnr_timer;
	if (mask & IB_QP_SQ_PSN)
		a->sq_psn = attr->sq_psn & SIB_PSN_MASK;
	if (mask & IB_QP_MAX_DEST_RD_ATOMIC)
		a->max_dest_rd_atomic = attr->max_dest_rd_atomic;
	if (mask & IB_QP_DEST_QPN)
		a->dest_qp_num = attr->dest_qp_num;
	if (mask & IB_QP_EN_SQD_ASYNC_NOTIFY)
		a->en_sqd_async_notify = attr->en_sqd_async_notify;
}

/* Engine state for a QP entering RTR or RTS; the engines are idle. */
static void sib_qp_enter(struct sib_qp *qp, enum ib_qp_state state)
{
	if (state == IB_QPS_RTR) {
		qp->resp.psn = qp->attr.rq_psn;
		qp->resp.msn = 0;
		qp->resp.msg = SIB_RESP_MSG_NONE;
		qp->resp.nak_seq = false;
	} else if (state == IB_QPS_RTS && qp->state == IB_QPS_RTR) {
		qp->req.psn = qp->attr.sq_psn;
		qp->req.psn_max = qp->attr.sq_psn;
		qp->comp.psn = qp->attr.sq_psn;
		qp->comp.retry = qp->attr.retry_cnt;
		qp->comp.rnr_retry = qp->attr.rnr_retry;
		qp->req.ssn = 0;
		qp->req.lsn = 0;
		qp->req.credit_unlimited = false;
		qp->req.credit_known = false;
	}
}

/* Discard everything: back to a fresh QP (IBA 10.3.1, Reset). */
static void sib_qp_reset(struct sib_qp *qp)
{
	unsigned long flags;

	sib_timer_stop(qp);
	timer_delete_sync(&qp->rnr_timer);
	timer_delete_sync(&qp->retrans_timer);
	qp->events = 0;
	spin_lock_irqsave(&qp->rxq.lock, flags);
	qp->lack.valid = false;
	spin_unlock_irqrestore(&qp->rxq.lock, flags);
	skb_queue_purge(&qp->rxq);
	memset(&qp->req, 0, sizeof(qp->req));
	memset(&qp->comp, 0, sizeof(qp->comp));
	memset(&qp->resp, 0, sizeof(qp->resp));	/* SIB_RESP_MSG_NONE */
	memset(qp->resp_res, 0, qp->resp_nres * sizeof(*qp->resp_res));
	/* Drop every WQE in the rings: consumer catches up with producer. */
	qp->sq.kidx = READ_ONCE(qp->sq.hdr->prod);
	/* Publish the slots before the index (ring rule). */
	smp_store_release(&qp->sq.hdr->cons, qp->sq.kidx);
	qp->req.idx = qp->sq.kidx;
	qp->req.fetched = qp->sq.kidx;
	qp->comp.idx = qp->sq.kidx;
	WRITE_ONCE(qp->sq.hdr->flags, 0);
	if (qp->rq.hdr) {
		qp->rq.kidx = READ_ONCE(qp->rq.hdr->prod);
		/* Publish the slots before the index (ring rule). */
		smp_store_release(&qp->rq.hdr->cons, qp->rq.kidx);
		WRITE_ONCE(qp->rq.hdr->flags, 0);
		WRITE_ONCE(qp->rq.hdr->credit_wanted, 0);
	}
	qp->sq_drained_sent = false;
	qp->last_wqe_sent = false;
}

/*
 * Tell the process that WQEs it posts from now on get flushed. The flag
 * is set before the engine reads the producer indices to flush (the full
 * barrier pairs with the provider's, between publishing a receive and
 * reading the flag), so no receive can slip between the two unflushed.
 */
static void sib_qp_mark_error(struct sib_qp *qp)
{
	lockdep_assert_held(&qp->state_lock);
	WRITE_ONCE(qp->sq.hdr->flags, qp->sq.hdr->flags | SIB_RING_F_QP_ERR);
	if (qp->rq.hdr)
		WRITE_ONCE(qp->rq.hdr->flags,
			   qp->rq.hdr->flags | SIB_RING_F_QP_ERR);
	/* Flag before the flush reads prod: see above. */
	smp_mb();
}

/* Work left to us while we held the engines (see sib_qp_unlock()). */
static void sib_qp_left_pending(struct sib_qp *qp)
{
	/* Pairs with the barrier after set_bit() in sib_qp_kick(). */
	smp_mb();
	if (test_bit(SIB_QP_PENDING, &qp->events))
		sib_qp_sched(qp);
}

int sib_modify_qp(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	enum ib_qp_state cur, next, prev;
	unsigned long flags;
	int ret;

	if (udata && udata->inlen)
		return -EOPNOTSUPP;
	/* An RSS QP has no state machine: it receives while it lives. */
	if (qp->rss)
		return -EOPNOTSUPP;
	ret = sib_qp_check_attr(qp, attr, mask);
	if (ret)
		return ret;

	/*
	 * The engines must not run while their state is (re)set, and the
	 * transition is checked and made under one hold of the engines:
	 * only the engines and modify_qp change the state, so no engine
	 * error and no other modify_qp can come between (ERR to RTS).
	 */
	mutex_lock(&qp->engine);
	spin_lock_irqsave(&qp->state_lock, flags);
	cur = (mask & IB_QP_CUR_STATE) ? attr->cur_qp_state : qp->state;
	next = (mask & IB_QP_STATE) ? attr->qp_state : cur;
	if (cur != qp->state && !(cur == IB_QPS_SQE && qp->state == IB_QPS_RTS))
		ret = -EINVAL;
	else if (!ib_modify_qp_is_ok(qp->state, next, ib_qp->qp_type, mask))
		ret = -EINVAL;
	prev = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	if (ret) {
		mutex_unlock(&qp->engine);
		sib_qp_left_pending(qp);
		return ret;
	}

	if (next == IB_QPS_RESET && qp->state != IB_QPS_RESET) {
		spin_lock_irqsave(&qp->state_lock, flags);
		WRITE_ONCE(qp->state, IB_QPS_RESET);
		spin_unlock_irqrestore(&qp->state_lock, flags);
		sib_qp_reset(qp);
	}

	spin_lock_irqsave(&qp->state_lock, flags);
	sib_qp_set_attr(qp, attr, mask);
	/* A datagram QP has no path MTU attribute: it uses the port's. */
	if (sib_qp_type(qp) == IB_QPT_UD && next == IB_QPS_RTR &&
	    qp->state != IB_QPS_RTR) {
		qp->attr.path_mtu = sib_active_mtu(qp->sdev);
		qp->mtu = ib_mtu_enum_to_int(qp->attr.path_mtu);
	}
	if (next != prev)
		trace_sib_qp_state(qp, prev, next, false);
	if (next != qp->state)
		sib_qp_enter(qp, next);
	WRITE_ONCE(qp->state, next);
	qp->attr.qp_state = next;
	if (next == IB_QPS_ERR)
		sib_qp_mark_error(qp);
	if (next == IB_QPS_SQD)
		qp->sq_drained_sent = false;
	spin_unlock_irqrestore(&qp->state_lock, flags);
	mutex_unlock(&qp->engine);

	/* Flush completions are visible when modify returns. */
	if (next == IB_QPS_ERR || next == IB_QPS_RTS || next == IB_QPS_SQD) {
		sib_qp_run_sync(qp);
		return 0;
	}
	sib_qp_left_pending(qp);
	return 0;
}

int sib_query_qp(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init)
{
	struct sib_qp *qp = to_sqp(ib_qp);
	unsigned long flags;

	spin_lock_irqsave(&qp->state_lock, flags);
	*attr = qp->attr;
	attr->qp_state = qp->state;
	attr->cur_qp_state = qp->state;
	spin_unlock_irqrestore(&qp->state_lock, flags);

	attr->cap.max_send_wr = qp->sq.nslots;
	attr->cap.max_send_sge = qp->max_send_sge;
	attr->cap.max_inline_data = qp->max_inline;
	attr->cap.max_recv_wr = qp->rq.hdr ? qp->rq.nslots : 0;
	attr->cap.max_recv_sge = qp->rq.hdr ? qp->max_recv_sge : 0;
	if (qp->rss)	/* its send queue is a placeholder */
		memset(&attr->cap, 0, sizeof(attr->cap));
	attr->sq_draining = attr->qp_state == IB_QPS_SQD &&
			    !READ_ONCE(qp->sq_drained_sent);

	memset(init, 0, sizeof(*init));
	init->qp_type = ib_qp->qp_type;
	init->send_cq = ib_qp->send_cq;
	init->recv_cq = ib_qp->recv_cq;
	init->srq = ib_qp->srq;
	init->cap = attr->cap;
	init->sq_sig_type = qp->sig_all ? IB_SIGNAL_ALL_WR : IB_SIGNAL_REQ_WR;
	return 0;
}

/* Move to the error state from the engines; true if this call did it. */
static bool __sib_qp_error(struct sib_qp *qp)
{
	unsigned long flags;
	bool moved = false;

	spin_lock_irqsave(&qp->state_lock, flags);
	if (qp->state != IB_QPS_RESET && qp->state != IB_QPS_ERR) {
		trace_sib_qp_state(qp, qp->state, IB_QPS_ERR, true);
		WRITE_ONCE(qp->state, IB_QPS_ERR);
		qp->attr.qp_state = IB_QPS_ERR;
		sib_qp_mark_error(qp);
		moved = true;
	}
	spin_unlock_irqrestore(&qp->state_lock, flags);
	sib_qp_sched(qp);
	return moved;
}

/*
 * Move to the error state from the engines (IBA 10.3.1, Error), for an
 * error that a completion reports (the WQE's status).
 */
void sib_qp_error(struct sib_qp *qp)
{
	__sib_qp_error(qp);
}

/**
 * sib_qp_fatal - move to the error state for an error no completion reports
 * @qp:		the QP, from its engines
 * @event:	its affiliated asynchronous error (IBA 11.6.3.1):
 *		IB_EVENT_QP_FATAL (a catastrophic error: a corrupted ring, a
 *		CQ overrun), IB_EVENT_QP_REQ_ERR (the responder refused an
 *		invalid request) or IB_EVENT_QP_ACCESS_ERR (a request's
 *		access violated the QP's or a key's rights)
 *
 * The event goes to the QP's owner once, when the QP enters the error
 * state: a process sees it in ibv_get_async_event(), a kernel consumer in
 * its QP event handler.
 */
void sib_qp_fatal(struct sib_qp *qp, enum ib_event_type event)
{
	struct ib_event ev = {
		.device = qp->ib_qp.device,
		.element.qp = &qp->ib_qp,
		.event = event,
	};

	if (__sib_qp_error(qp) && qp->ib_qp.event_handler)
		qp->ib_qp.event_handler(&ev, qp->ib_qp.qp_context);
}
