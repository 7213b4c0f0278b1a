// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: receive work queues (ib_core's WQs of type IB_WQT_RQ), their
 * indirection tables, and RSS QPs.
 *
 * A WQ is a receive ring with a CQ and a state of its own: it is an SRQ
 * that no QP is attached to. An indirection table lists 2^n WQs. A raw
 * packet QP created with a table and a hash configuration (struct
 * sib_create_qp_rss, the driver data of the create command) is an RSS
 * QP: it has no queues, and each frame its flows take (sib_raw.c) goes to
 * one WQ of the table, chosen by a hash of the frame.
 *
 * How a frame is steered. sib_raw.c queues it to the RSS QP like to any
 * raw packet QP, and the QP's engine calls sib_rss_recv() with the
 * frame's key. The hash input is the concatenation, in this order, of the
 * fields the QP's rx_hash_fields_mask selects that the frame has: IPv4 or
 * IPv6 source address, destination address, TCP or UDP source port,
 * destination port (network byte order, as on the wire). The hash is the
 * Toeplitz hash of that input with the QP's 40-byte key, and the frame
 * goes to the WQ at entry (hash & (size - 1)) of the table. A frame
 * without any selected field hashes to 0. The WQ's next WQE receives the
 * frame (as a raw packet QP's RQ would) and its CQ the completion, whose
 * qp_num is the WQ's number. A WQ that is not ready, or has no WQE, drops
 * the frame, as a NIC's RQ drops it.
 *
 * Locking. A WQ's @lock guards its state and the consumer side of its
 * ring: the engines of several RSS QPs (tables may share WQs, QPs may
 * share tables) and modify_wq take it; a frame is taken, copied and
 * completed under it, so that its completion is never overtaken by the
 * flush of a WQE after it. Order: WQ lock, then the CQ's. The device's
 * raw.lock guards the counts that keep objects alive: a WQ's @tables, a
 * table's @qps. ib_uverbs checks its own use counts too; these are sib's,
 * so that a WQ in use is never freed whatever ib_core lets through.
 */
#include <rdma/uverbs_ioctl.h>

#include "sib_cq.h"
#include "sib_qp.h"
#include "sib_raw.h"
#include "sib_wq.h"

/* Numbers of WQs and tables: 24 bits, like QP numbers; 0 is none's. */
#define SIB_MAX_WQN		0xffffff

static inline struct sib_wq *to_swq(struct ib_wq *ib_wq)
{
	return container_of(ib_wq, struct sib_wq, ib_wq);
}

static inline struct sib_ind_table *to_stbl(struct ib_rwq_ind_table *t)
{
	return container_of(t, struct sib_ind_table, ib_tbl);
}

/* ---- the ring and its state -------------------------------------------- */

/* Post a receive completion of @wq: nonzero if its CQ is full. */
static int sib_wq_complete(struct sib_wq *wq, u64 wr_id, u8 status,
			   u32 byte_len)
{
	struct sib_cqe cqe = {
		.wr_id = wr_id,
		.status = status,
		.opcode = SIB_WC_RECV,
		.byte_len = byte_len,
		.qp_num = wq->ib_wq.wq_num,
	};

	return sib_cq_post(wq->cq, &cqe, false);
}

/*
 * Complete every WQE of the ring with a flush error, after the ring's
 * error flag was set: a producer that missed the flag posted before this
 * reads prod (rdma_user_sib.h). One ring's worth at most: a process that
 * keeps posting meanwhile does not hold the lock, its later WQEs wait
 * for its next doorbell.
 */
static void sib_wq_flush(struct sib_wq *wq)
{
	struct sib_rwqe rwqe;
	u32 n;
	int ret;

	lockdep_assert_held(&wq->lock);
	/* The flag before prod: pairs with the producer's barrier. */
	smp_mb();
	for (n = 0; n < wq->q.nslots; n++) {
		ret = sib_ring_take_rwqe(&wq->q, wq->max_sge, &rwqe);
		if (ret && ret != -EBADMSG)
			break;	/* empty, or a corrupt ring: nothing to trust */
		if (sib_wq_complete(wq, rwqe.wr_id, IB_WC_WR_FLUSH_ERR, 0))
			break;
	}
}

static void sib_wq_set_state(struct sib_wq *wq, enum ib_wq_state state)
{
	struct sib_ring_hdr *hdr = wq->q.hdr;

	lockdep_assert_held(&wq->lock);
	switch (state) {
	case IB_WQS_RESET:
		/* Drop what the ring holds, with no completion. */
		wq->q.kidx = READ_ONCE(hdr->prod);
		/* Publish the slots before the index (ring rule). */
		smp_store_release(&hdr->cons, wq->q.kidx);
		WRITE_ONCE(hdr->flags, 0);
		break;
	case IB_WQS_ERR:
		WRITE_ONCE(hdr->flags, SIB_RING_F_QP_ERR);
		sib_wq_flush(wq);
		break;
	case IB_WQS_RDY:
		break;
	}
	wq->state = state;
	WRITE_ONCE(wq->ib_wq.state, state);
}

/*
 * The transitions: to RESET and to ERR from any state (ERR to ERR flushes
 * what was posted since), to RDY from RESET and RDY.
 */
static bool sib_wq_transition_ok(enum ib_wq_state cur, enum ib_wq_state next)
{
	if (next == IB_WQS_RDY)
		return cur != IB_WQS_ERR;
	return true;
}

static void sib_wq_event(struct sib_wq *wq, enum ib_event_type type)
{
	struct ib_event ev = {
		.device = wq->ib_wq.device,
		.element.wq = &wq->ib_wq,
		.event = type,
	};

	if (wq->ib_wq.event_handler)
		wq->ib_wq.event_handler(&ev, wq->ib_wq.wq_context);
}

/* ---- WQs ----------------------------------------------------------------- */

/*
 * Are @pd and @cq objects of @uctx? A PD's uobject tells; a CQ's is
 * ib_core's private type, but a process' CQ ring is mapped through an
 * entry of its context, which a resize_cq may replace (under the CQ's
 * lock) while this runs.
 */
static bool sib_wq_owned(struct ib_pd *pd, struct ib_cq *ib_cq,
			 struct sib_ucontext *uctx)
{
	struct sib_cq *cq = to_scq(ib_cq);
	unsigned long flags;
	bool owned;

	if (!pd->uobject || pd->uobject->context != &uctx->ib_uc)
		return false;
	spin_lock_irqsave(&cq->lock, flags);
	owned = cq->q.entry && cq->q.entry->ucontext == &uctx->ib_uc;
	spin_unlock_irqrestore(&cq->lock, flags);
	return owned;
}

static int sib_wq_check(struct ib_pd *pd, struct ib_wq_init_attr *init,
			struct sib_ucontext *uctx)
{
	if (init->wq_type != IB_WQT_RQ || init->create_flags)
		return -EOPNOTSUPP;
	if (init->max_wr < 1 || init->max_wr > SIB_MAX_WQ_WR ||
	    init->max_sge > SIB_MAX_SGE)
		return -EINVAL;
	if (!init->cq || init->cq->device != pd->device)
		return -EINVAL;
	if (!sib_wq_owned(pd, init->cq, uctx))
		return -EINVAL;
	return 0;
}

static int sib_wq_ring(struct sib_wq *wq, struct ib_wq_init_attr *init)
{
	u32 slot = roundup_pow_of_two(SIB_RECV_WQE_HDR +
				      max(init->max_sge, 1U) *
				      sizeof(struct sib_sge));
	int ret;

	ret = sib_queue_init(&wq->q, roundup_pow_of_two(init->max_wr), slot);
	if (ret)
		return ret;
	wq->max_sge = min_t(u32, (slot - SIB_RECV_WQE_HDR) /
			    sizeof(struct sib_sge), SIB_MAX_SGE);
	init->max_wr = wq->q.nslots;
	init->max_sge = wq->max_sge;
	return 0;
}

static int sib_wq_expose(struct sib_wq *wq, struct ib_udata *udata)
{
	struct sib_create_wq_resp resp = {};
	int ret;

	ret = sib_queue_expose(&wq->q, &wq->uctx->ib_uc, &resp.ring);
	if (ret)
		return ret;
	return ib_copy_to_udata(udata, &resp,
				min_t(size_t, udata->outlen, sizeof(resp)));
}

/**
 * sib_create_wq() - ib_device_ops.create_wq
 * @pd:		its PD
 * @init:	type, sizes, CQ; max_wr and max_sge are set to what it got
 * @udata:	the process' context; a kernel consumer gets -EOPNOTSUPP
 *		(ib_core has no verb to post to a WQ)
 *
 * Return: the WQ, in the RESET state, or an ERR_PTR().
 */
struct ib_wq *sib_create_wq(struct ib_pd *pd, struct ib_wq_init_attr *init,
			    struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(pd->device);
	struct sib_ucontext *uctx;
	struct sib_wq *wq;
	int ret;

	if (!udata)
		return ERR_PTR(-EOPNOTSUPP);
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return ERR_PTR(-EOPNOTSUPP);
	uctx = rdma_udata_to_drv_context(udata, struct sib_ucontext, ib_uc);
	ret = sib_wq_check(pd, init, uctx);
	if (ret)
		return ERR_PTR(ret);
	if (atomic_inc_return(&sdev->raw.nwqs) > SIB_MAX_WQ) {
		ret = -ENOMEM;
		goto err_count;
	}
	wq = kzalloc(sizeof(*wq), GFP_KERNEL_ACCOUNT);
	if (!wq) {
		ret = -ENOMEM;
		goto err_count;
	}
	spin_lock_init(&wq->lock);
	/* ib_uverbs sets neither: sib_wq_event() needs them. */
	wq->ib_wq.event_handler = init->event_handler;
	wq->ib_wq.wq_context = init->wq_context;
	wq->state = IB_WQS_RESET;
	wq->ib_wq.state = IB_WQS_RESET;
	wq->uctx = uctx;
	wq->pd = pd;
	wq->cq = to_scq(init->cq);
	ret = sib_wq_ring(wq, init);
	if (ret)
		goto err_free;
	ret = ida_alloc_range(&sdev->raw.wq_ida, 1, SIB_MAX_WQN, GFP_KERNEL);
	if (ret < 0)
		goto err_ring;
	wq->ib_wq.wq_num = ret;
	ret = sib_wq_expose(wq, udata);
	if (ret)
		goto err_ida;
	return &wq->ib_wq;

err_ida:
	ida_free(&sdev->raw.wq_ida, wq->ib_wq.wq_num);
err_ring:
	sib_queue_destroy(&wq->q);
err_free:
	kfree(wq);
err_count:
	atomic_dec(&sdev->raw.nwqs);
	return ERR_PTR(ret);
}

/**
 * sib_modify_wq() - ib_device_ops.modify_wq: change a WQ's state
 * @ib_wq:	the WQ
 * @attr:	the state asked for, and the current state as the caller
 *		believes it (ib_uverbs fills it in when not given)
 * @mask:	enum ib_wq_attr_mask
 * @udata:	sib takes no driver data
 *
 * Return: 0; -EINVAL for a current state that is not the WQ's or a
 * transition that does not exist (ERR to RDY); -EOPNOTSUPP for flags
 * (sib implements none).
 */
int sib_modify_wq(struct ib_wq *ib_wq, struct ib_wq_attr *attr, u32 mask,
		  struct ib_udata *udata)
{
	struct sib_wq *wq = to_swq(ib_wq);
	enum ib_wq_state cur, next;
	unsigned long flags;
	int ret = 0;

	if (udata && udata->inlen &&
	    !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (mask & ~(IB_WQ_STATE | IB_WQ_CUR_STATE | IB_WQ_FLAGS))
		return -EINVAL;
	if ((mask & IB_WQ_FLAGS) && (attr->flags_mask || attr->flags))
		return -EOPNOTSUPP;
	if ((mask & IB_WQ_STATE) && attr->wq_state > IB_WQS_ERR)
		return -EINVAL;
	if ((mask & IB_WQ_CUR_STATE) && attr->curr_wq_state > IB_WQS_ERR)
		return -EINVAL;

	spin_lock_irqsave(&wq->lock, flags);
	cur = (mask & IB_WQ_CUR_STATE) ? attr->curr_wq_state : wq->state;
	next = (mask & IB_WQ_STATE) ? attr->wq_state : wq->state;
	if (cur != wq->state || !sib_wq_transition_ok(cur, next))
		ret = -EINVAL;
	else if (mask & IB_WQ_STATE)
		sib_wq_set_state(wq, next);
	spin_unlock_irqrestore(&wq->lock, flags);
	return ret;
}

/**
 * sib_destroy_wq() - ib_device_ops.destroy_wq
 * @ib_wq:	the WQ
 * @udata:	unused
 *
 * Return: 0, or -EBUSY while an indirection table holds it.
 */
int sib_destroy_wq(struct ib_wq *ib_wq, struct ib_udata *udata)
{
	struct sib_wq *wq = to_swq(ib_wq);
	struct sib_dev *sdev = to_sdev(ib_wq->device);
	bool busy;

	mutex_lock(&sdev->raw.lock);
	busy = wq->tables;
	mutex_unlock(&sdev->raw.lock);
	if (busy)
		return -EBUSY;
	/* No table, so no RSS QP's engine, can reach it now. */
	ida_free(&sdev->raw.wq_ida, ib_wq->wq_num);
	sib_queue_destroy(&wq->q);
	kfree(wq);
	atomic_dec(&sdev->raw.nwqs);
	return 0;
}

/* ---- indirection tables -------------------------------------------------- */

/* Are all of a new table's WQs sib's, and of its context? */
static int sib_ind_table_check(struct sib_dev *sdev, struct ib_wq **wqs,
			       u32 size, struct sib_ucontext *uctx)
{
	u32 i;

	for (i = 0; i < size; i++)
		if (!wqs[i] || wqs[i]->device != &sdev->ib_dev ||
		    to_swq(wqs[i])->uctx != uctx)
			return -EINVAL;
	return 0;
}

/**
 * sib_create_rwq_ind_table() - ib_device_ops.create_rwq_ind_table
 * @ib_tbl:	the table ib_core allocated
 * @init:	its size (log2) and WQs
 * @udata:	the process' context; kernel consumers have no WQs
 *
 * Return: 0; -EINVAL for a size past 2^SIB_MAX_LOG_IND_TBL or a WQ that
 * is not of the caller's context; -ENOMEM past SIB_MAX_IND_TABLES.
 */
int sib_create_rwq_ind_table(struct ib_rwq_ind_table *ib_tbl,
			     struct ib_rwq_ind_table_init_attr *init,
			     struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_tbl->device);
	struct sib_ind_table *tbl = to_stbl(ib_tbl);
	u32 i;
	int ret;

	if (!udata)
		return -EOPNOTSUPP;
	if (udata->inlen && !ib_is_udata_cleared(udata, 0, udata->inlen))
		return -EOPNOTSUPP;
	if (init->log_ind_tbl_size > SIB_MAX_LOG_IND_TBL || !init->ind_tbl)
		return -EINVAL;
	tbl->uctx = rdma_udata_to_drv_context(udata, struct sib_ucontext,
					      ib_uc);
	tbl->size = 1U << init->log_ind_tbl_size;
	if (atomic_inc_return(&sdev->raw.ntables) > SIB_MAX_IND_TABLES) {
		ret = -ENOMEM;
		goto err_count;
	}
	tbl->wqs = kcalloc(tbl->size, sizeof(*tbl->wqs), GFP_KERNEL_ACCOUNT);
	if (!tbl->wqs) {
		ret = -ENOMEM;
		goto err_count;
	}
	ret = ida_alloc_range(&sdev->raw.tbl_ida, 1, SIB_MAX_WQN, GFP_KERNEL);
	if (ret < 0)
		goto err_free;
	ib_tbl->ind_tbl_num = ret;

	mutex_lock(&sdev->raw.lock);
	ret = sib_ind_table_check(sdev, init->ind_tbl, tbl->size, tbl->uctx);
	if (!ret) {
		for (i = 0; i < tbl->size; i++) {
			tbl->wqs[i] = to_swq(init->ind_tbl[i]);
			tbl->wqs[i]->tables++;
		}
	}
	mutex_unlock(&sdev->raw.lock);
	if (ret)
		goto err_ida;
	return 0;

err_ida:
	ida_free(&sdev->raw.tbl_ida, ib_tbl->ind_tbl_num);
err_free:
	kfree(tbl->wqs);
err_count:
	atomic_dec(&sdev->raw.ntables);
	return ret;
}

/**
 * sib_destroy_rwq_ind_table() - ib_device_ops.destroy_rwq_ind_table
 * @ib_tbl:	the table; ib_core frees it
 *
 * Return: 0, or -EBUSY while an RSS QP uses it.
 */
int sib_destroy_rwq_ind_table(struct ib_rwq_ind_table *ib_tbl)
{
	struct sib_dev *sdev = to_sdev(ib_tbl->device);
	struct sib_ind_table *tbl = to_stbl(ib_tbl);
	u32 i;

	mutex_lock(&sdev->raw.lock);
	if (tbl->qps) {
		mutex_unlock(&sdev->raw.lock);
		return -EBUSY;
	}
	for (i = 0; i < tbl->size; i++)
		tbl->wqs[i]->tables--;
	mutex_unlock(&sdev->raw.lock);
	ida_free(&sdev->raw.tbl_ida, ib_tbl->ind_tbl_num);
	kfree(tbl->wqs);
	atomic_dec(&sdev->raw.ntables);
	return 0;
}

/* ---- RSS QPs ------------------------------------------------------------- */

#define SIB_RX_HASH_IPV4	(SIB_RX_HASH_SRC_IPV4 | SIB_RX_HASH_DST_IPV4)
#define SIB_RX_HASH_IPV6	(SIB_RX_HASH_SRC_IPV6 | SIB_RX_HASH_DST_IPV6)
#define SIB_RX_HASH_TCP		(SIB_RX_HASH_SRC_PORT_TCP | \
				 SIB_RX_HASH_DST_PORT_TCP)
#define SIB_RX_HASH_UDP		(SIB_RX_HASH_SRC_PORT_UDP | \
				 SIB_RX_HASH_DST_PORT_UDP)
#define SIB_RX_HASH_FIELDS	(SIB_RX_HASH_IPV4 | SIB_RX_HASH_IPV6 | \
				 SIB_RX_HASH_TCP | SIB_RX_HASH_UDP)

/*
 * A hash configuration: Toeplitz with a 40-byte key, fields of one L3
 * and one L4 protocol at most (as mlx5 asks; a frame has one of each).
 */
static int sib_rss_check(const struct sib_create_qp_rss *cmd)
{
	if (memchr_inv(cmd->reserved, 0, sizeof(cmd->reserved)))
		return -EINVAL;
	if (cmd->rx_hash_function != SIB_RX_HASH_FUNC_TOEPLITZ)
		return -EOPNOTSUPP;
	if (cmd->rx_hash_key_len != SIB_RX_HASH_KEY_LEN)
		return -EINVAL;
	if (cmd->rx_hash_fields_mask & ~(u64)SIB_RX_HASH_FIELDS)
		return -EOPNOTSUPP;
	if ((cmd->rx_hash_fields_mask & SIB_RX_HASH_IPV4) &&
	    (cmd->rx_hash_fields_mask & SIB_RX_HASH_IPV6))
		return -EINVAL;
	if ((cmd->rx_hash_fields_mask & SIB_RX_HASH_TCP) &&
	    (cmd->rx_hash_fields_mask & SIB_RX_HASH_UDP))
		return -EINVAL;
	return 0;
}

/* An RSS QP has no queues: no capacity may be asked of them. */
static int sib_rss_check_init(struct ib_qp_init_attr *init)
{
	const struct ib_qp_cap *cap = &init->cap;

	if (init->qp_type != IB_QPT_RAW_PACKET || init->srq ||
	    init->create_flags)
		return -EINVAL;
	if (cap->max_send_wr || cap->max_send_sge || cap->max_recv_wr ||
	    cap->max_recv_sge || cap->max_inline_data)
		return -EINVAL;
	return 0;
}

static int sib_rss_read_cmd(struct ib_udata *udata,
			    struct sib_create_qp_rss *cmd)
{
	if (!udata || udata->inlen < sizeof(*cmd))
		return -EINVAL;
	if (udata->inlen > sizeof(*cmd) &&
	    !ib_is_udata_cleared(udata, sizeof(*cmd),
				 udata->inlen - sizeof(*cmd)))
		return -EOPNOTSUPP;
	if (ib_copy_from_udata(cmd, udata, sizeof(*cmd)))
		return -EFAULT;
	return sib_rss_check(cmd);
}

/**
 * sib_rss_qp_init() - make a new raw packet QP an RSS QP
 * @qp:		the QP, before its rings are made
 * @init:	its attributes, with @rwq_ind_tbl set
 * @udata:	the create command's driver data: struct sib_create_qp_rss
 *
 * On success the QP counts in its table's @qps until
 * sib_rss_qp_destroy().
 *
 * Return: 0, -EINVAL for a QP that is not a raw packet one, asks for
 * queues, or names a table of another context, or for a malformed hash
 * configuration; -EOPNOTSUPP for a hash function or field sib lacks.
 */
int sib_rss_qp_init(struct sib_qp *qp, struct ib_qp_init_attr *init,
		    struct ib_udata *udata)
{
	struct sib_ind_table *tbl = to_stbl(init->rwq_ind_tbl);
	struct sib_dev *sdev = qp->sdev;
	struct sib_create_qp_rss cmd;
	struct sib_rss *rss;
	int ret;

	ret = sib_rss_check_init(init);
	if (ret)
		return ret;
	ret = sib_rss_read_cmd(udata, &cmd);
	if (ret)
		return ret;
	if (init->rwq_ind_tbl->device != &sdev->ib_dev ||
	    tbl->uctx != rdma_udata_to_drv_context(udata, struct sib_ucontext,
						   ib_uc))
		return -EINVAL;
	rss = kzalloc(sizeof(*rss), GFP_KERNEL_ACCOUNT);
	if (!rss)
		return -ENOMEM;
	rss->tbl = tbl;
	rss->fields = cmd.rx_hash_fields_mask;
	memcpy(rss->key, cmd.rx_hash_key, sizeof(rss->key));
	mutex_lock(&sdev->raw.lock);
	tbl->qps++;
	mutex_unlock(&sdev->raw.lock);
	qp->rss = rss;
	return 0;
}

/**
 * sib_rss_qp_destroy() - release what sib_rss_qp_init() took
 * @qp:		the QP; its engine runs no more. Nothing if it is not an
 *		RSS QP
 */
void sib_rss_qp_destroy(struct sib_qp *qp)
{
	struct sib_dev *sdev = qp->sdev;
	struct sib_rss *rss = qp->rss;

	if (!rss)
		return;
	mutex_lock(&sdev->raw.lock);
	rss->tbl->qps--;
	mutex_unlock(&sdev->raw.lock);
	qp->rss = NULL;
	kfree(rss);
}

/**
 * sib_toeplitz() - the Toeplitz hash of @len bytes
 * @key:	SIB_RX_HASH_KEY_LEN bytes
 * @in:		the input
 * @len:	its length; at most SIB_RX_HASH_KEY_LEN - 4
 *
 * For each bit of the input that is set, from the most significant bit of
 * its first byte on, the 32 bits of the key that start at that bit's
 * position are XORed into the result.
 *
 * Return: the hash.
 */
u32 sib_toeplitz(const u8 *key, const u8 *in, unsigned int len)
{
	u32 window = (u32)key[0] << 24 | key[1] << 16 | key[2] << 8 | key[3];
	u32 hash = 0;
	unsigned int i, b;

	for (i = 0; i < len; i++) {
		for (b = 0; b < 8; b++) {
			if (in[i] & (0x80 >> b))
				hash ^= window;
			window = (window << 1) | ((key[i + 4] >> (7 - b)) & 1);
		}
	}
	return hash;
}

/* The hash input of a frame: the selected fields it has, in order. */
static unsigned int sib_rss_input(u64 fields, const struct sib_flow_key *k,
				  u8 *in)
{
	unsigned int n = 0;
	u64 sport, dport;

	if (k->ethertype == htons(ETH_P_IP)) {
		if (fields & SIB_RX_HASH_SRC_IPV4) {
			memcpy(in + n, &k->ip4_src, 4);
			n += 4;
		}
		if (fields & SIB_RX_HASH_DST_IPV4) {
			memcpy(in + n, &k->ip4_dst, 4);
			n += 4;
		}
	} else if (k->ethertype == htons(ETH_P_IPV6)) {
		if (fields & SIB_RX_HASH_SRC_IPV6) {
			memcpy(in + n, k->ip6_src, 16);
			n += 16;
		}
		if (fields & SIB_RX_HASH_DST_IPV6) {
			memcpy(in + n, k->ip6_dst, 16);
			n += 16;
		}
	}
	if (!k->has_l4)
		return n;
	sport = k->ip_proto == IPPROTO_TCP ? SIB_RX_HASH_SRC_PORT_TCP :
					     SIB_RX_HASH_SRC_PORT_UDP;
	dport = k->ip_proto == IPPROTO_TCP ? SIB_RX_HASH_DST_PORT_TCP :
					     SIB_RX_HASH_DST_PORT_UDP;
	if (fields & sport) {
		memcpy(in + n, &k->sport, 2);
		n += 2;
	}
	if (fields & dport) {
		memcpy(in + n, &k->dport, 2);
		n += 2;
	}
	return n;
}

/*
 * Put a frame into @wq's next WQE. A WQE the frame does not fit, a
 * malformed WQE, a corrupt ring or a full CQ moves the WQ to the error
 * state (as a local error of a QP's RQ moves the QP): true then.
 */
static bool sib_wq_recv(struct sib_wq *wq, struct sib_qp *qp,
			struct sk_buff *skb)
{
	struct sib_rwqe rwqe;
	u32 byte_len = 0;
	u8 status;
	int ret;

	lockdep_assert_held(&wq->lock);
	if (wq->state != IB_WQS_RDY)
		return false;
	ret = sib_ring_take_rwqe(&wq->q, wq->max_sge, &rwqe);
	if (ret == -ENOENT)
		return false;
	if (ret) {
		if (ret == -EBADMSG)
			sib_wq_complete(wq, rwqe.wr_id, IB_WC_LOC_QP_OP_ERR, 0);
		sib_wq_set_state(wq, IB_WQS_ERR);
		return true;
	}
	status = sib_raw_scatter(qp, wq->pd, &rwqe, skb, &byte_len);
	if (sib_wq_complete(wq, rwqe.wr_id, status, byte_len) || status) {
		sib_wq_set_state(wq, IB_WQS_ERR);
		return true;
	}
	return false;
}

/**
 * sib_rss_recv() - steer a frame an RSS QP's flow took to one of its WQs
 * @qp:		the RSS QP, its @engine held
 * @skb:	the frame, from its first byte
 * @k:		the frame's key
 */
void sib_rss_recv(struct sib_qp *qp, struct sk_buff *skb,
		  const struct sib_flow_key *k)
{
	const struct sib_rss *rss = qp->rss;
	u8 in[SIB_RX_HASH_KEY_LEN - 4];
	unsigned long flags;
	struct sib_wq *wq;
	unsigned int n;
	bool fatal;
	u32 hash;

	lockdep_assert_held(&qp->engine);
	n = sib_rss_input(rss->fields, k, in);
	hash = sib_toeplitz(rss->key, in, n);
	wq = rss->tbl->wqs[hash & (rss->tbl->size - 1)];
	spin_lock_irqsave(&wq->lock, flags);
	fatal = sib_wq_recv(wq, qp, skb);
	spin_unlock_irqrestore(&wq->lock, flags);
	if (fatal)
		sib_wq_event(wq, IB_EVENT_WQ_FATAL);
}

/**
 * sib_wq_caps() - what query_device tells of WQs and RSS
 * @attr:	the device attributes being filled
 */
void sib_wq_caps(struct ib_device_attr *attr)
{
	attr->max_wq_type_rq = SIB_MAX_WQ;
	attr->rss_caps.supported_qpts = BIT(IB_QPT_RAW_PACKET);
	attr->rss_caps.max_rwq_indirection_tables = SIB_MAX_IND_TABLES;
	attr->rss_caps.max_rwq_indirection_table_size =
		1U << SIB_MAX_LOG_IND_TBL;
}
