/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: queue pairs, the send/receive post paths and the ibv_qp_ex
 * work-request builder API.
 *
 * The SQ and RQ are rings this process produces into. Posting fills slots
 * under the queue's lock and then release-stores prod once for the whole
 * batch. The kernel needs a nudge to look at a send queue: after every
 * successful send post we write() a legacy POST_SEND command without work
 * requests (the doorbell), unless the kernel says that it is running the
 * QP's engines and will look at the ring again before it stops (kpoll in
 * the ring header, SIB_UCTX_CAP_SQ_KPOLL). Receives need no system call, except when the
 * QP is in the error state: then a POST_RECV doorbell asks the kernel to
 * flush the new WQEs; and when the kernel asks to hear of the next receive
 * (credit_wanted, SIB_UCTX_CAP_RQ_CREDIT), to send the peer new credits.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sib.h"

#define sib_db_field(field)                                                    \
	sib_static_offset(struct sib_doorbell, field,                          \
			  sizeof(struct ib_uverbs_cmd_hdr) +                   \
				  offsetof(struct ib_uverbs_post_send, field))
sib_static_size(struct sib_doorbell, sizeof(struct ib_uverbs_cmd_hdr) +
			sizeof(struct ib_uverbs_post_send));
sib_db_field(response);
sib_db_field(qp_handle);
sib_db_field(wr_count);
sib_db_field(sge_count);
sib_db_field(wqe_size);
#undef sib_db_field

#define SIB_OP(op) (1u << IBV_WR_##op)
/*
 * FLUSH, with SIB_UCTX_CAP_FLUSH and an rdma-core that has ibv_wr_flush()
 * (struct ibv_send_wr has no place for it: ibv_post_send() refuses it).
 */
#ifdef SIB_HAVE_WR_FLUSH
#define SIB_OP_FLUSH SIB_OP(FLUSH)
#define SIB_QPX_OP_FLUSH IBV_QP_EX_WITH_FLUSH
#else
#define SIB_OP_FLUSH 0
#define SIB_QPX_OP_FLUSH 0
#endif

enum {
	/* A raw packet QP sends whole Ethernet frames. */
	SIB_RAW_OPS = SIB_OP(SEND),
	SIB_UD_OPS = SIB_OP(SEND) | SIB_OP(SEND_WITH_IMM),
	SIB_UC_OPS = SIB_UD_OPS | SIB_OP(RDMA_WRITE) |
		     SIB_OP(RDMA_WRITE_WITH_IMM) | SIB_OP(LOCAL_INV) |
		     SIB_OP(BIND_MW),
	SIB_RC_OPS = SIB_UC_OPS | SIB_OP(SEND_WITH_INV) | SIB_OP(RDMA_READ) |
		     SIB_OP(ATOMIC_CMP_AND_SWP) | SIB_OP(ATOMIC_FETCH_AND_ADD),
	/* Opcodes whose outbound data may be inline. */
	SIB_INLINE_OPS = SIB_OP(SEND) | SIB_OP(SEND_WITH_IMM) |
			 SIB_OP(SEND_WITH_INV) | SIB_OP(RDMA_WRITE) |
			 SIB_OP(RDMA_WRITE_WITH_IMM),
	/* Opcodes that carry no SGE or inline data in the WQE. */
	SIB_NODATA_OPS = SIB_OP(LOCAL_INV) | SIB_OP(BIND_MW) |
			 SIB_OP(ATOMIC_WRITE) | SIB_OP_FLUSH,
};

#define SIB_QPX_OP(op) IBV_QP_EX_WITH_##op

enum {
	SIB_RAW_SEND_OPS = SIB_QPX_OP(SEND),
	SIB_UD_SEND_OPS = SIB_QPX_OP(SEND) | SIB_QPX_OP(SEND_WITH_IMM),
	SIB_UC_SEND_OPS = SIB_UD_SEND_OPS | SIB_QPX_OP(RDMA_WRITE) |
			  SIB_QPX_OP(RDMA_WRITE_WITH_IMM) |
			  SIB_QPX_OP(LOCAL_INV) | SIB_QPX_OP(BIND_MW),
	SIB_RC_SEND_OPS = SIB_UC_SEND_OPS | SIB_QPX_OP(SEND_WITH_INV) |
			  SIB_QPX_OP(RDMA_READ) |
			  SIB_QPX_OP(ATOMIC_CMP_AND_SWP) |
			  SIB_QPX_OP(ATOMIC_FETCH_AND_ADD),
};

/* RC opcodes that the kernel takes only with SIB_UCTX_CAP_ATOMIC_WRITE. */
enum {
	SIB_RC_ATOMIC_WRITE_OPS = SIB_OP(ATOMIC_WRITE),
	SIB_RC_ATOMIC_WRITE_SEND_OPS = SIB_QPX_OP(ATOMIC_WRITE),
};

enum {
	SIB_SEND_FLAGS = IBV_SEND_FENCE | IBV_SEND_SIGNALED |
			 IBV_SEND_SOLICITED | IBV_SEND_INLINE,
	SIB_QP_COMP_MASK = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_CREATE_FLAGS |
			   IBV_QP_INIT_ATTR_SEND_OPS_FLAGS |
			   IBV_QP_INIT_ATTR_XRCD,
};

static struct sib_sge *sib_wqe_sges(struct sib_send_wqe *wqe)
{
	return (struct sib_sge *)((uint8_t *)wqe + SIB_SEND_WQE_HDR);
}

static uint8_t *sib_wqe_inline(struct sib_send_wqe *wqe)
{
	return (uint8_t *)wqe + SIB_SEND_WQE_HDR;
}

/* Can a send be posted in this state? (SQD and SQE/ERR: yes, flushed.) */
static bool sib_sq_state_ok(const struct ibv_qp *ibqp)
{
	switch (ibqp->state) {
	case IBV_QPS_RESET:
	case IBV_QPS_INIT:
	case IBV_QPS_RTR:
		return false;
	default:
		return true;
	}
}

/* ---------------------------------------------------------------------
 * Doorbells
 */
static void sib_doorbell_init(struct sib_doorbell *db, uint32_t command,
			      uint32_t qp_handle, uint32_t wqe_size)
{
	memset(db, 0, sizeof(*db));
	db->hdr.command = command;
	/* Legacy commands count 32-bit words, header included. */
	db->hdr.in_words = sizeof(*db) / 4;
	db->hdr.out_words = sizeof(struct ib_uverbs_post_send_resp) / 4;
	db->qp_handle = qp_handle;
	db->wr_count = 0;
	db->sge_count = 0;
	db->wqe_size = wqe_size;
}

/*
 * With the doorbell file (SIB_UCTX_CAP_DB_FD), write the QP number and
 * the queue; otherwise write the prebuilt uverbs command. Its response
 * (bad_wr, always 0 without WRs) goes to the stack, so that concurrent
 * rings of one QP share nothing.
 */
static int sib_ring_doorbell(struct sib_qp *qp, const struct sib_doorbell *db,
			     uint32_t op)
{
	struct ibv_context *ibctx = qp->vqp.qp.context;
	int db_fd = to_sctx(ibctx)->db_fd;
	struct ib_uverbs_post_send_resp resp;
	struct sib_doorbell cmd;
	ssize_t ret;

	if (db_fd >= 0) {
		struct sib_db_req req = { .qpn = qp->vqp.qp.qp_num, .op = op };

		ret = write(db_fd, &req, sizeof(req));
		if (ret == (ssize_t)sizeof(req))
			return 0;
		return ret < 0 ? errno : EIO;
	}
	cmd = *db;
	cmd.response = (uintptr_t)&resp;
	ret = write(ibctx->cmd_fd, &cmd, sizeof(cmd));
	if (ret == (ssize_t)sizeof(cmd))
		return 0;
	return ret < 0 ? errno : EIO;
}

/*
 * Called after prod was stored. Doorbell suppression (rdma_user_sib.h):
 * store prod, full barrier, load kpoll; the kernel stores kpoll = 0, full
 * barrier, loads prod. One of the two sees the other's store, so a WQE
 * is never left in the ring with nobody to look at it.
 */
static bool sib_sq_need_doorbell(struct sib_qp *qp)
{
	if (!qp->sq_kpoll)
		return true;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return !__atomic_load_n(&sib_ring_hdr(&qp->sq.ring)->kpoll,
				__ATOMIC_RELAXED);
}

/*
 * Ring the SQ doorbell unless kpoll makes it needless. From the second
 * doorbell since the context last polled a CQ, the process is posting a
 * streak: the doorbell says so (SIB_DB_F_STREAM), if the kernel takes
 * the hint. Posts that ring no doorbell are not counted: no atomic
 * operation on a shared word for them.
 */
static int sib_sq_doorbell(struct sib_qp *qp)
{
	struct sib_context *ctx = to_sctx(qp->vqp.qp.context);
	uint32_t op = SIB_DB_SQ;

	if (!sib_sq_need_doorbell(qp))
		return 0;
	if (__atomic_add_fetch(&ctx->doorbells_since_poll, 1,
			       __ATOMIC_RELAXED) > 1 &&
	    (ctx->caps & SIB_UCTX_CAP_DB_STREAM))
		op |= SIB_DB_F_STREAM;
	return sib_ring_doorbell(qp, &qp->sq_db, op);
}

/* ---------------------------------------------------------------------
 * Work queues
 */
int sib_wq_init(struct ibv_context *ibctx, struct sib_wq *wq,
		const struct sib_ring_info *info, uint32_t max_wr,
		uint32_t max_sge, uint32_t max_inline, uint32_t hdr_size)
{
	uint64_t data = (uint64_t)max_sge * sizeof(struct sib_sge);
	int ret;

	if (max_inline > data)
		data = max_inline;
	/* num_sge is 16 bits wide in a send WQE. */
	if (max_sge > UINT16_MAX || hdr_size + data > UINT32_MAX)
		return EPROTO;

	ret = sib_ring_map(ibctx, &wq->ring, info, hdr_size + data);
	if (ret)
		return ret;

	ret = sib_lock_init(&wq->lock, false);
	if (ret) {
		sib_ring_unmap(&wq->ring);
		return ret;
	}

	wq->max_wr = max_wr < wq->ring.nslots ? max_wr : wq->ring.nslots;
	wq->max_sge = max_sge;
	wq->max_inline = max_inline;
	return 0;
}

void sib_wq_destroy(struct sib_wq *wq)
{
	sib_ring_unmap(&wq->ring);
	sib_lock_destroy(&wq->lock);
}

/*
 * Post receive WQEs to an RQ or SRQ ring and publish them. Returns 0 or
 * an errno value with *bad_wr at the first WR not posted; the WRs before
 * it are posted either way.
 */
int sib_wq_post_recv(struct sib_wq *wq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr)
{
	struct sib_ring_hdr *hdr = sib_ring_hdr(&wq->ring);
	uint32_t prod, start, room;
	int ret = 0;

	sib_lock(&wq->lock);
	prod = sib_load_relaxed(&hdr->prod);
	start = prod;
	room = sib_wq_room(wq, prod);

	for (; wr; wr = wr->next) {
		struct sib_recv_wqe *wqe;

		if (wr->num_sge < 0 || (uint32_t)wr->num_sge > wq->max_sge) {
			ret = EINVAL;
			break;
		}
		if (!room) {
			room = sib_wq_room(wq, prod);
			if (!room) {
				ret = ENOMEM;
				break;
			}
		}

		wqe = sib_ring_slot(&wq->ring, prod);
		wqe->wr_id = wr->wr_id;
		wqe->num_sge = wr->num_sge;
		wqe->reserved = 0;
		memcpy(wqe + 1, wr->sg_list,
		       (size_t)wr->num_sge * sizeof(struct sib_sge));
		prod++;
		room--;
	}

	if (prod != start)
		sib_store_release(&hdr->prod, prod);
	sib_unlock(&wq->lock);

	if (ret)
		*bad_wr = wr;
	return ret;
}

/* ---------------------------------------------------------------------
 * Post send
 */

/*
 * Fill the send WQE in @wqe from @wr after checking it against the QP.
 * Nothing is visible to the kernel until prod moves, so a WQE abandoned
 * half-way is harmless.
 */
static int sib_build_send_wqe(struct sib_qp *qp, struct sib_send_wqe *wqe,
			      const struct ibv_send_wr *wr)
{
	uint32_t opbit, flags = wr->send_flags;
	int i;

	if ((unsigned int)wr->opcode >= 32)
		return EINVAL;
	opbit = 1u << wr->opcode;
	if (!(qp->sq_opcodes & opbit) || (flags & ~SIB_SEND_FLAGS))
		return EINVAL;
	if (wr->num_sge < 0 || (uint32_t)wr->num_sge > qp->sq.max_sge)
		return EINVAL;
	/* Inline means nothing for an opcode without outbound data. */
	if (!(opbit & SIB_INLINE_OPS))
		flags &= ~IBV_SEND_INLINE;

	memset(wqe, 0, SIB_SEND_WQE_HDR);
	wqe->wr_id = wr->wr_id;
	wqe->opcode = wr->opcode;
	wqe->send_flags = flags | qp->sig_all;

	switch (wr->opcode) {
	case IBV_WR_SEND_WITH_IMM:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
		wqe->ex.imm_data = wr->imm_data;
		break;
	case IBV_WR_SEND_WITH_INV:
	case IBV_WR_LOCAL_INV:
		wqe->ex.invalidate_rkey = wr->invalidate_rkey;
		break;
	default:
		break;
	}

	switch (wr->opcode) {
	case IBV_WR_SEND:
	case IBV_WR_SEND_WITH_IMM:
		if (qp->vqp.qp.qp_type != IBV_QPT_UD)
			break;
		if (!wr->wr.ud.ah)
			return EINVAL;
		wqe->wr.ud.ah_handle = to_sah(wr->wr.ud.ah)->ah_num;
		wqe->wr.ud.remote_qpn = wr->wr.ud.remote_qpn;
		wqe->wr.ud.remote_qkey = wr->wr.ud.remote_qkey;
		break;
	case IBV_WR_RDMA_WRITE:
	case IBV_WR_RDMA_WRITE_WITH_IMM:
	case IBV_WR_RDMA_READ:
		wqe->wr.rdma.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.rdma.rkey = wr->wr.rdma.rkey;
		break;
	case IBV_WR_ATOMIC_CMP_AND_SWP:
	case IBV_WR_ATOMIC_FETCH_AND_ADD:
		wqe->wr.atomic.remote_addr = wr->wr.atomic.remote_addr;
		wqe->wr.atomic.compare_add = wr->wr.atomic.compare_add;
		wqe->wr.atomic.swap = wr->wr.atomic.swap;
		wqe->wr.atomic.rkey = wr->wr.atomic.rkey;
		break;
	case IBV_WR_ATOMIC_WRITE:
		/* The 8 bytes travel in the WQE, read now as inline data is. */
		if (wr->num_sge != 1 || wr->sg_list[0].length != 8)
			return EINVAL;
		wqe->wr.atomic.remote_addr = wr->wr.rdma.remote_addr;
		wqe->wr.atomic.rkey = wr->wr.rdma.rkey;
		memcpy(&wqe->wr.atomic.swap,
		       (void *)(uintptr_t)wr->sg_list[0].addr, 8);
		break;
#ifdef SIB_HAVE_WR_FLUSH
	case IBV_WR_FLUSH:
		return EINVAL;	/* only by ibv_wr_flush() */
#endif
	case IBV_WR_BIND_MW:
		if (!wr->bind_mw.mw)
			return EINVAL;
		wqe->wr.bind_mw.addr = wr->bind_mw.bind_info.addr;
		wqe->wr.bind_mw.length = wr->bind_mw.bind_info.length;
		wqe->wr.bind_mw.mw_rkey = wr->bind_mw.mw->rkey;
		wqe->wr.bind_mw.new_rkey = wr->bind_mw.rkey;
		wqe->wr.bind_mw.mr_lkey = wr->bind_mw.bind_info.mr ?
					  wr->bind_mw.bind_info.mr->lkey : 0;
		wqe->wr.bind_mw.access =
			wr->bind_mw.bind_info.mw_access_flags;
		break;
	default:
		break;
	}

	/* Every request of an XRC_INI QP names the remote XRC SRQ. */
	if (qp->vqp.qp.qp_type == IBV_QPT_XRC_SEND)
		wqe->wr.xrc.remote_srqn = wr->qp_type.xrc.remote_srqn;

	if (opbit & SIB_NODATA_OPS)
		return 0;

	if (flags & IBV_SEND_INLINE) {
		uint8_t *dst = sib_wqe_inline(wqe);
		uint64_t len = 0;

		for (i = 0; i < wr->num_sge; i++)
			len += wr->sg_list[i].length;
		if (len > qp->sq.max_inline)
			return EINVAL;

		for (i = 0; i < wr->num_sge; i++) {
			memcpy(dst, (void *)(uintptr_t)wr->sg_list[i].addr,
			       wr->sg_list[i].length);
			dst += wr->sg_list[i].length;
		}
		wqe->inline_len = len;
		return 0;
	}

	wqe->num_sge = wr->num_sge;
	memcpy(sib_wqe_sges(wqe), wr->sg_list,
	       (size_t)wr->num_sge * sizeof(struct sib_sge));
	return 0;
}

int sib_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr)
{
	struct sib_qp *qp = to_sqp(ibqp);
	struct ibv_send_wr *first = wr;
	struct sib_ring_hdr *hdr;
	uint32_t prod, start, room;
	int ret = 0, db_ret;

	if (!qp->sq.ring.buf) {
		/*
		 * A QP created without a send queue: always full; an
		 * XRC_TGT QP has none to post to.
		 */
		*bad_wr = wr;
		if (!wr)
			return 0;
		return sib_sq_state_ok(ibqp) &&
		       ibqp->qp_type != IBV_QPT_XRC_RECV ? ENOMEM : EINVAL;
	}

	hdr = sib_ring_hdr(&qp->sq.ring);
	sib_lock(&qp->sq.lock);
	prod = sib_load_relaxed(&hdr->prod);
	start = prod;
	room = sib_wq_room(&qp->sq, prod);

	for (; wr; wr = wr->next) {
		if (!sib_sq_state_ok(ibqp)) {
			ret = EINVAL;
			break;
		}
		if (!room) {
			room = sib_wq_room(&qp->sq, prod);
			if (!room) {
				ret = ENOMEM;
				break;
			}
		}

		ret = sib_build_send_wqe(qp, sib_ring_slot(&qp->sq.ring, prod),
					 wr);
		if (ret)
			break;
		prod++;
		room--;
	}

	if (prod != start)
		sib_store_release(&hdr->prod, prod);
	sib_unlock(&qp->sq.lock);

	if (ret)
		*bad_wr = wr;

	if (prod == start)
		return ret;

	db_ret = sib_sq_doorbell(qp);
	if (db_ret && !ret) {
		/* Posted, but the kernel refused the doorbell. */
		*bad_wr = first;
		ret = db_ret;
	}
	return ret;
}

/* ---------------------------------------------------------------------
 * Post receive
 */
int sib_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr)
{
	struct sib_qp *qp = to_sqp(ibqp);
	struct sib_ring_hdr *hdr;
	int ret, db_ret;

	/* XRC QPs receive into XRC SRQs only (the TGT's), never their own. */
	if (ibqp->state == IBV_QPS_RESET || ibqp->srq ||
	    ibqp->qp_type == IBV_QPT_XRC_SEND ||
	    ibqp->qp_type == IBV_QPT_XRC_RECV) {
		*bad_wr = wr;
		return EINVAL;
	}
	if (!qp->rq.ring.buf) {
		/* A QP created without a receive queue: always full. */
		*bad_wr = wr;
		return wr ? ENOMEM : 0;
	}

	ret = sib_wq_post_recv(&qp->rq, wr, bad_wr);

	/*
	 * In the error state the kernel only looks when asked to flush.
	 * The kernel sets the flag and then reads prod to flush; we store
	 * prod and then read the flag. The full fence (paired with one in
	 * the kernel) makes sure at least one side sees the other's store,
	 * so no WQE posted while the QP enters the error state is missed.
	 * Likewise credit_wanted: the kernel told the peer that no receive
	 * was posted and wants to hear of the next one (a credit update).
	 */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	hdr = sib_ring_hdr(&qp->rq.ring);
	if ((sib_load_relaxed(&hdr->flags) & SIB_RING_F_QP_ERR) ||
	    (qp->rq_credit && sib_load_relaxed(&hdr->credit_wanted))) {
		db_ret = sib_ring_doorbell(qp, &qp->rq_db, SIB_DB_RQ);
		if (db_ret && !ret) {
			*bad_wr = wr;
			ret = db_ret;
		}
	}
	return ret;
}

/* ---------------------------------------------------------------------
 * ibv_qp_ex work-request builders
 *
 * wr_start takes the SQ lock, which wr_complete / wr_abort release. Each
 * opcode builder claims the next slot and fills the header from the
 * qp_ex's wr_id and wr_flags as they are at that call; the wr_set_*
 * calls then complete the WQE built last. The first error is remembered,
 * and wr_complete then publishes nothing and returns it.
 */
static void sib_wr_fail(struct sib_qp *qp, int err)
{
	if (!qp->wr_err)
		qp->wr_err = err;
	qp->wr_wqe = NULL;
}

static struct sib_send_wqe *sib_wr_begin(struct ibv_qp_ex *ibqp,
					 enum ibv_wr_opcode opcode)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	uint32_t flags = ibqp->wr_flags;
	struct sib_send_wqe *wqe;

	qp->wr_wqe = NULL;
	if (qp->wr_err)
		return NULL;

	if (!(qp->sq_opcodes & (1u << opcode)) ||
	    (flags & ~SIB_SEND_FLAGS)) {
		sib_wr_fail(qp, EINVAL);
		return NULL;
	}
	if (!qp->sq.ring.buf || !sib_wq_room(&qp->sq, qp->wr_prod)) {
		sib_wr_fail(qp, ENOMEM);
		return NULL;
	}

	wqe = sib_ring_slot(&qp->sq.ring, qp->wr_prod++);
	memset(wqe, 0, SIB_SEND_WQE_HDR);
	wqe->wr_id = ibqp->wr_id;
	wqe->opcode = opcode;
	/* Inline is decided by wr_set_inline_data*, not by the flags. */
	wqe->send_flags = (flags & ~IBV_SEND_INLINE) | qp->sig_all;
	qp->wr_wqe = wqe;
	return wqe;
}

static void sib_wr_send(struct ibv_qp_ex *ibqp)
{
	sib_wr_begin(ibqp, IBV_WR_SEND);
}

static void sib_wr_send_imm(struct ibv_qp_ex *ibqp, __be32 imm_data)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_SEND_WITH_IMM);

	if (wqe)
		wqe->ex.imm_data = imm_data;
}

static void sib_wr_send_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_SEND_WITH_INV);

	if (wqe)
		wqe->ex.invalidate_rkey = invalidate_rkey;
}

static void sib_wr_rdma(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			uint32_t rkey, uint64_t remote_addr, __be32 imm_data)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, opcode);

	if (!wqe)
		return;
	wqe->wr.rdma.remote_addr = remote_addr;
	wqe->wr.rdma.rkey = rkey;
	if (opcode == IBV_WR_RDMA_WRITE_WITH_IMM)
		wqe->ex.imm_data = imm_data;
}

static void sib_wr_rdma_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
			      uint64_t remote_addr)
{
	sib_wr_rdma(ibqp, IBV_WR_RDMA_WRITE, rkey, remote_addr, 0);
}

static void sib_wr_rdma_write_imm(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t remote_addr, __be32 imm_data)
{
	sib_wr_rdma(ibqp, IBV_WR_RDMA_WRITE_WITH_IMM, rkey, remote_addr,
		    imm_data);
}

static void sib_wr_rdma_read(struct ibv_qp_ex *ibqp, uint32_t rkey,
			     uint64_t remote_addr)
{
	sib_wr_rdma(ibqp, IBV_WR_RDMA_READ, rkey, remote_addr, 0);
}

static void sib_wr_atomic(struct ibv_qp_ex *ibqp, enum ibv_wr_opcode opcode,
			  uint32_t rkey, uint64_t remote_addr,
			  uint64_t compare_add, uint64_t swap)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, opcode);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.compare_add = compare_add;
	wqe->wr.atomic.swap = swap;
	wqe->wr.atomic.rkey = rkey;
}

static void sib_wr_atomic_cmp_swp(struct ibv_qp_ex *ibqp, uint32_t rkey,
				  uint64_t remote_addr, uint64_t compare,
				  uint64_t swap)
{
	sib_wr_atomic(ibqp, IBV_WR_ATOMIC_CMP_AND_SWP, rkey, remote_addr,
		      compare, swap);
}

static void sib_wr_atomic_fetch_add(struct ibv_qp_ex *ibqp, uint32_t rkey,
				    uint64_t remote_addr, uint64_t add)
{
	sib_wr_atomic(ibqp, IBV_WR_ATOMIC_FETCH_AND_ADD, rkey, remote_addr,
		      add, 0);
}

static void sib_wr_atomic_write(struct ibv_qp_ex *ibqp, uint32_t rkey,
				uint64_t remote_addr, const void *atomic_wr)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_ATOMIC_WRITE);

	if (!wqe)
		return;
	wqe->wr.atomic.remote_addr = remote_addr;
	wqe->wr.atomic.rkey = rkey;
	memcpy(&wqe->wr.atomic.swap, atomic_wr, 8);
}

#ifdef SIB_HAVE_WR_FLUSH
static void sib_wr_flush(struct ibv_qp_ex *ibqp, uint32_t rkey,
			 uint64_t remote_addr, size_t len, uint8_t type,
			 uint8_t level)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_FLUSH);

	if (!wqe)
		return;
	if (!type || (type & ~(IBV_FLUSH_GLOBAL | IBV_FLUSH_PERSISTENT)) ||
	    level > IBV_FLUSH_MR ||
	    (level == IBV_FLUSH_RANGE && len > UINT32_MAX)) {
		sib_wr_fail(to_sqp_ex(ibqp), EINVAL);
		return;
	}
	wqe->wr.flush.remote_addr = remote_addr;
	wqe->wr.flush.rkey = rkey;
	/* A whole MR's FLUSH names no range: the length means nothing. */
	wqe->wr.flush.length = level == IBV_FLUSH_RANGE ? len : 0;
	wqe->wr.flush.type = type;
	wqe->wr.flush.level = level;
}
#endif

static void sib_wr_bind_mw(struct ibv_qp_ex *ibqp, struct ibv_mw *mw,
			   uint32_t rkey,
			   const struct ibv_mw_bind_info *bind_info)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_BIND_MW);

	if (!wqe)
		return;
	if (!mw || !bind_info) {
		sib_wr_fail(to_sqp_ex(ibqp), EINVAL);
		return;
	}
	wqe->wr.bind_mw.addr = bind_info->addr;
	wqe->wr.bind_mw.length = bind_info->length;
	wqe->wr.bind_mw.mw_rkey = mw->rkey;
	wqe->wr.bind_mw.new_rkey = rkey;
	wqe->wr.bind_mw.mr_lkey = bind_info->mr ? bind_info->mr->lkey : 0;
	wqe->wr.bind_mw.access = bind_info->mw_access_flags;
}

static void sib_wr_local_inv(struct ibv_qp_ex *ibqp, uint32_t invalidate_rkey)
{
	struct sib_send_wqe *wqe = sib_wr_begin(ibqp, IBV_WR_LOCAL_INV);

	if (wqe)
		wqe->ex.invalidate_rkey = invalidate_rkey;
}

/* The WQE the data setters apply to, if it takes data. */
static struct sib_send_wqe *sib_wr_data_wqe(struct sib_qp *qp)
{
	struct sib_send_wqe *wqe = qp->wr_wqe;

	if (wqe && ((1u << wqe->opcode) & SIB_NODATA_OPS)) {
		sib_wr_fail(qp, EINVAL);
		return NULL;
	}
	return wqe;
}

static void sib_wr_set_sge_list(struct ibv_qp_ex *ibqp, size_t num_sge,
				const struct ibv_sge *sg_list)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	struct sib_send_wqe *wqe = sib_wr_data_wqe(qp);

	if (!wqe)
		return;
	if (num_sge > qp->sq.max_sge) {
		sib_wr_fail(qp, EINVAL);
		return;
	}
	wqe->send_flags &= ~IBV_SEND_INLINE;
	wqe->inline_len = 0;
	wqe->num_sge = num_sge;
	memcpy(sib_wqe_sges(wqe), sg_list, num_sge * sizeof(struct sib_sge));
}

static void sib_wr_set_sge(struct ibv_qp_ex *ibqp, uint32_t lkey,
			   uint64_t addr, uint32_t length)
{
	struct ibv_sge sge = { .addr = addr, .length = length, .lkey = lkey };

	sib_wr_set_sge_list(ibqp, 1, &sge);
}

static void sib_wr_set_inline_data_list(struct ibv_qp_ex *ibqp,
					size_t num_buf,
					const struct ibv_data_buf *buf_list)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	struct sib_send_wqe *wqe = sib_wr_data_wqe(qp);
	uint64_t len = 0;
	uint8_t *dst;
	size_t i;

	if (!wqe)
		return;
	if (!((1u << wqe->opcode) & SIB_INLINE_OPS)) {
		sib_wr_fail(qp, EINVAL);
		return;
	}

	for (i = 0; i < num_buf; i++)
		len += buf_list[i].length;
	if (len > qp->sq.max_inline) {
		sib_wr_fail(qp, EINVAL);
		return;
	}

	dst = sib_wqe_inline(wqe);
	for (i = 0; i < num_buf; i++) {
		memcpy(dst, buf_list[i].addr, buf_list[i].length);
		dst += buf_list[i].length;
	}
	wqe->send_flags |= IBV_SEND_INLINE;
	wqe->num_sge = 0;
	wqe->inline_len = len;
}

static void sib_wr_set_inline_data(struct ibv_qp_ex *ibqp, void *addr,
				   size_t length)
{
	struct ibv_data_buf buf = { .addr = addr, .length = length };

	sib_wr_set_inline_data_list(ibqp, 1, &buf);
}

static void sib_wr_set_ud_addr(struct ibv_qp_ex *ibqp, struct ibv_ah *ah,
			       uint32_t remote_qpn, uint32_t remote_qkey)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	struct sib_send_wqe *wqe = qp->wr_wqe;

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_UD || !ah) {
		sib_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.ud.ah_handle = to_sah(ah)->ah_num;
	wqe->wr.ud.remote_qpn = remote_qpn;
	wqe->wr.ud.remote_qkey = remote_qkey;
}

static void sib_wr_set_xrc_srqn(struct ibv_qp_ex *ibqp,
				uint32_t remote_srqn)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	struct sib_send_wqe *wqe = qp->wr_wqe;

	if (!wqe)
		return;
	if (qp->vqp.qp.qp_type != IBV_QPT_XRC_SEND) {
		sib_wr_fail(qp, EINVAL);
		return;
	}
	wqe->wr.xrc.remote_srqn = remote_srqn;
}

static void sib_wr_start(struct ibv_qp_ex *ibqp)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);

	sib_lock(&qp->sq.lock);
	qp->wr_start_prod = qp->sq.ring.buf ?
		sib_load_relaxed(&sib_ring_hdr(&qp->sq.ring)->prod) : 0;
	qp->wr_prod = qp->wr_start_prod;
	qp->wr_wqe = NULL;
	qp->wr_err = sib_sq_state_ok(&qp->vqp.qp) ? 0 : EINVAL;
}

static int sib_wr_complete(struct ibv_qp_ex *ibqp)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);
	bool posted = false;
	int ret = qp->wr_err;

	if (!ret && qp->wr_prod != qp->wr_start_prod) {
		sib_store_release(&sib_ring_hdr(&qp->sq.ring)->prod,
				  qp->wr_prod);
		posted = true;
	}
	qp->wr_wqe = NULL;
	sib_unlock(&qp->sq.lock);

	if (posted)
		ret = sib_sq_doorbell(qp);
	return ret;
}

static void sib_wr_abort(struct ibv_qp_ex *ibqp)
{
	struct sib_qp *qp = to_sqp_ex(ibqp);

	qp->wr_wqe = NULL;
	sib_unlock(&qp->sq.lock);
}

static void sib_qp_init_ex_ops(struct sib_qp *qp)
{
	struct ibv_qp_ex *qpx = &qp->vqp.qp_ex;

	qpx->wr_start = sib_wr_start;
	qpx->wr_complete = sib_wr_complete;
	qpx->wr_abort = sib_wr_abort;

	qpx->wr_send = sib_wr_send;
	qpx->wr_send_imm = sib_wr_send_imm;
	qpx->wr_send_inv = sib_wr_send_inv;
	qpx->wr_rdma_write = sib_wr_rdma_write;
	qpx->wr_rdma_write_imm = sib_wr_rdma_write_imm;
	qpx->wr_rdma_read = sib_wr_rdma_read;
	qpx->wr_atomic_cmp_swp = sib_wr_atomic_cmp_swp;
	qpx->wr_atomic_fetch_add = sib_wr_atomic_fetch_add;
	qpx->wr_atomic_write = sib_wr_atomic_write;
#ifdef SIB_HAVE_WR_FLUSH
	qpx->wr_flush = sib_wr_flush;
#endif
	qpx->wr_bind_mw = sib_wr_bind_mw;
	qpx->wr_local_inv = sib_wr_local_inv;

	qpx->wr_set_sge = sib_wr_set_sge;
	qpx->wr_set_sge_list = sib_wr_set_sge_list;
	qpx->wr_set_inline_data = sib_wr_set_inline_data;
	qpx->wr_set_inline_data_list = sib_wr_set_inline_data_list;
	qpx->wr_set_ud_addr = sib_wr_set_ud_addr;
	qpx->wr_set_xrc_srqn = sib_wr_set_xrc_srqn;

	qp->vqp.comp_mask |= VERBS_QP_EX;
}

/* ---------------------------------------------------------------------
 * Create / modify / query / destroy
 */
/*
 * An XRC_TGT QP: an XRC domain's, no PD, no CQ, no queue of its own; the
 * kernel maps nothing of it (ib_core creates it for the domain).
 */
static int sib_check_xrc_tgt_attr(struct sib_context *ctx,
				  const struct ibv_qp_init_attr_ex *attr,
				  uint32_t *opcodes)
{
	if (!(ctx->caps & SIB_UCTX_CAP_XRC))
		return EOPNOTSUPP;
	if (attr->comp_mask & ~(uint32_t)(IBV_QP_INIT_ATTR_XRCD |
					  IBV_QP_INIT_ATTR_PD |
					  IBV_QP_INIT_ATTR_CREATE_FLAGS))
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_XRCD) || !attr->xrcd)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	*opcodes = 0;
	return 0;
}

static int sib_check_qp_attr(struct sib_context *ctx,
			     const struct ibv_qp_init_attr_ex *attr,
			     uint32_t *opcodes)
{
	uint64_t send_ops;

	switch (attr->qp_type) {
	case IBV_QPT_RC:
		*opcodes = SIB_RC_OPS;
		send_ops = SIB_RC_SEND_OPS;
		if (ctx->caps & SIB_UCTX_CAP_ATOMIC_WRITE) {
			*opcodes |= SIB_RC_ATOMIC_WRITE_OPS;
			send_ops |= SIB_RC_ATOMIC_WRITE_SEND_OPS;
		}
		if (ctx->caps & SIB_UCTX_CAP_FLUSH) {
			*opcodes |= SIB_OP_FLUSH;
			send_ops |= SIB_QPX_OP_FLUSH;
		}
		break;
	case IBV_QPT_UC:
		*opcodes = SIB_UC_OPS;
		send_ops = SIB_UC_SEND_OPS;
		break;
	case IBV_QPT_UD:
		*opcodes = SIB_UD_OPS;
		send_ops = SIB_UD_SEND_OPS;
		break;
	case IBV_QPT_RAW_PACKET:
		/* The kernel asks for CAP_NET_RAW. No SRQ, as the kernel. */
		if (attr->srq)
			return EOPNOTSUPP;
		*opcodes = SIB_RAW_OPS;
		send_ops = SIB_RAW_SEND_OPS;
		break;
	case IBV_QPT_XRC_SEND:
		/* RC's requests, less ATOMIC WRITE and FLUSH (no XRC opcode). */
		if (!(ctx->caps & SIB_UCTX_CAP_XRC))
			return EOPNOTSUPP;
		*opcodes = SIB_RC_OPS;
		send_ops = SIB_RC_SEND_OPS;
		break;
	case IBV_QPT_XRC_RECV:
		return sib_check_xrc_tgt_attr(ctx, attr, opcodes);
	default:
		/* DRIVER, ... */
		return EOPNOTSUPP;
	}

	if (attr->comp_mask & ~(uint32_t)SIB_QP_COMP_MASK)
		return EOPNOTSUPP;
	if (!(attr->comp_mask & IBV_QP_INIT_ATTR_PD) || !attr->pd)
		return EINVAL;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_CREATE_FLAGS) &&
	    attr->create_flags)
		return EOPNOTSUPP;
	if ((attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS) &&
	    (attr->send_ops_flags & ~send_ops))
		return EOPNOTSUPP;
	return 0;
}

static struct ibv_qp *sib_create_qp_common(struct ibv_context *ibctx,
					   struct ibv_qp_init_attr_ex *attr)
{
	struct sib_cmd_create_qp_ex_resp resp;
	struct sib_cmd_create_qp_ex cmd;
	const struct sib_create_qp_resp *uresp = &resp.drv_payload;
	struct verbs_context *vctx = &to_sctx(ibctx)->ibv_ctx;
	/* An XRC_TGT QP is its domain's, on no PD. */
	struct ibv_pd *pd = attr->qp_type == IBV_QPT_XRC_RECV ? NULL : attr->pd;
	struct sib_qp *qp;
	uint32_t opcodes;
	bool rq_ok;
	int ret;

	ret = sib_check_qp_attr(to_sctx(ibctx), attr, &opcodes);
	if (ret) {
		errno = ret;
		return NULL;
	}

	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = sib_cmd_create_qp_ex2(ibctx, &qp->vqp, attr, &cmd.ibv_cmd,
				    sizeof(cmd), &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;
	/* An XRC_TGT QP has no queue to map and nothing to post to. */
	if (attr->qp_type == IBV_QPT_XRC_RECV)
		return &qp->vqp.qp;

	/* attr->cap now holds what the kernel granted. */
	ret = sib_wq_init(ibctx, &qp->sq, &uresp->sq, attr->cap.max_send_wr,
			  attr->cap.max_send_sge, uresp->max_inline,
			  SIB_SEND_WQE_HDR);
	if (ret)
		goto err_destroy;

	ret = sib_wq_init(ibctx, &qp->rq, &uresp->rq, attr->cap.max_recv_wr,
			  attr->cap.max_recv_sge, 0, SIB_RECV_WQE_HDR);
	if (ret)
		goto err_unmap_sq;
	/* An SRQ QP has no RQ ring; any other QP has the rings it asked for. */
	if (attr->srq)
		rq_ok = !qp->rq.ring.buf;
	else
		rq_ok = qp->rq.ring.buf || !attr->cap.max_recv_wr;
	if ((!qp->sq.ring.buf && attr->cap.max_send_wr) || !rq_ok) {
		verbs_err(vctx, "kernel's QP rings do not match its caps");
		ret = EPROTO;
		goto err_unmap_rq;
	}

	/* On a thread domain the application serialises the queues' users. */
	qp->sq.lock.off = sib_pd_td(pd);
	qp->rq.lock.off = qp->sq.lock.off;
	qp->sq_opcodes = opcodes;
	qp->sig_all = attr->sq_sig_all ? IBV_SEND_SIGNALED : 0;
	qp->sq_kpoll = to_sctx(ibctx)->caps & SIB_UCTX_CAP_SQ_KPOLL;
	qp->rq_credit = to_sctx(ibctx)->caps & SIB_UCTX_CAP_RQ_CREDIT;
	sib_doorbell_init(&qp->sq_db, IB_USER_VERBS_CMD_POST_SEND,
			  qp->vqp.qp.handle, sizeof(struct ib_uverbs_send_wr));
	sib_doorbell_init(&qp->rq_db, IB_USER_VERBS_CMD_POST_RECV,
			  qp->vqp.qp.handle, sizeof(struct ib_uverbs_recv_wr));

	if (attr->comp_mask & IBV_QP_INIT_ATTR_SEND_OPS_FLAGS)
		sib_qp_init_ex_ops(qp);

	sib_pd_use(pd, 1);
	return &qp->vqp.qp;

err_unmap_rq:
	sib_wq_destroy(&qp->rq);
err_unmap_sq:
	sib_wq_destroy(&qp->sq);
err_destroy:
	ibv_cmd_destroy_qp(&qp->vqp.qp);
err_free:
	free(qp);
	errno = ret;
	return NULL;
}

struct ibv_qp *sib_create_qp_ex(struct ibv_context *ibctx,
				struct ibv_qp_init_attr_ex *attr)
{
	/* An RSS QP has no queues: sib_rwq.c. */
	if (attr->comp_mask &
	    (IBV_QP_INIT_ATTR_IND_TABLE | IBV_QP_INIT_ATTR_RX_HASH))
		return sib_create_rss_qp(ibctx, attr);
	return sib_create_qp_common(ibctx, attr);
}

struct ibv_qp *sib_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr)
{
	struct ibv_qp_init_attr_ex attr_ex = {};
	struct ibv_qp *qp;

	attr_ex.qp_context = attr->qp_context;
	attr_ex.send_cq = attr->send_cq;
	attr_ex.recv_cq = attr->recv_cq;
	attr_ex.srq = attr->srq;
	attr_ex.cap = attr->cap;
	attr_ex.qp_type = attr->qp_type;
	attr_ex.sq_sig_all = attr->sq_sig_all;
	attr_ex.comp_mask = IBV_QP_INIT_ATTR_PD;
	attr_ex.pd = pd;

	qp = sib_create_qp_common(pd->context, &attr_ex);
	if (qp)
		attr->cap = attr_ex.cap;
	return qp;
}

/*
 * Open, in this process, an XRC_TGT QP of a domain it opened: a handle to
 * the QP (ib_core's), with no queue to map.
 */
struct ibv_qp *sib_open_qp(struct ibv_context *ibctx,
			   struct ibv_qp_open_attr *attr)
{
	struct ib_uverbs_create_qp_resp resp;
	struct ibv_open_qp cmd;
	struct sib_qp *qp;
	int ret;

	if (!(to_sctx(ibctx)->caps & SIB_UCTX_CAP_XRC)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	qp = calloc(1, sizeof(*qp));
	if (!qp)
		return NULL;
	ret = ibv_cmd_open_qp(ibctx, &qp->vqp, sizeof(qp->vqp), attr, &cmd,
			      sizeof(cmd), &resp, sizeof(resp));
	if (ret) {
		free(qp);
		errno = ret;
		return NULL;
	}
	return &qp->vqp.qp;
}

int sib_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask)
{
	struct ibv_modify_qp cmd;
	int ret;

	ret = ibv_cmd_modify_qp(ibqp, attr, attr_mask, &cmd, sizeof(cmd));
	if (ret)
		return ret;

	/* Reset discards the QP's work, completions included. */
	if ((attr_mask & IBV_QP_STATE) && attr->qp_state == IBV_QPS_RESET) {
		if (ibqp->recv_cq)
			sib_cq_clean(ibqp->recv_cq, ibqp->qp_num);
		if (ibqp->send_cq && ibqp->send_cq != ibqp->recv_cq)
			sib_cq_clean(ibqp->send_cq, ibqp->qp_num);
	}
	return 0;
}

int sib_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr)
{
	struct ibv_query_qp cmd;

	return ibv_cmd_query_qp(ibqp, attr, attr_mask, init_attr, &cmd,
				sizeof(cmd));
}

int sib_destroy_qp(struct ibv_qp *ibqp)
{
	struct sib_qp *qp = to_sqp(ibqp);
	int ret;

	ret = ibv_cmd_destroy_qp(ibqp);
	if (ret)
		return ret;

	if (ibqp->qp_type != IBV_QPT_XRC_RECV)
		sib_pd_use(ibqp->pd, -1);
	sib_wq_destroy(&qp->rq);
	sib_wq_destroy(&qp->sq);
	free(qp);
	return 0;
}

/*
 * Flow steering for raw packet QPs: the kernel matches the specs (sib_raw.c)
 * and takes no driver data.
 */
struct ibv_flow *sib_create_flow(struct ibv_qp *ibqp,
				 struct ibv_flow_attr *flow_attr)
{
	struct ibv_flow *flow;
	int ret;

	flow = calloc(1, sizeof(*flow));
	if (!flow) {
		errno = ENOMEM;
		return NULL;
	}
	ret = ibv_cmd_create_flow(ibqp, flow, flow_attr, NULL, 0);
	if (ret) {
		free(flow);
		errno = ret;
		return NULL;
	}
	return flow;
}

int sib_destroy_flow(struct ibv_flow *flow)
{
	int ret;

	ret = ibv_cmd_destroy_flow(flow);
	if (ret)
		return ret;
	free(flow);
	return 0;
}
