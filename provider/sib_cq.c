/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: completion queues.
 *
 * A CQ is a ring of struct sib_cqe that the kernel produces into and this
 * process consumes from without system calls. The first 48 bytes of a
 * CQE are a struct ibv_wc (sib_abi.h pins every field), so ibv_poll_cq()
 * copies them unchanged; the extended API reads the CQE in place. The
 * kernel does not reuse a slot before cons has moved past it, so a CQE
 * stays stable until we release-store the new cons.
 *
 * The per-CQ lock serialises pollers of this process and the resize,
 * which replaces the ring under it. A CQ made on a parent domain with a
 * thread domain, or with IBV_CREATE_CQ_ATTR_SINGLE_THREADED, skips it:
 * the application serialises those calls.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sib.h"

enum {
	SIB_CQ_WC_FLAGS = IBV_WC_EX_WITH_BYTE_LEN | IBV_WC_EX_WITH_IMM |
			  IBV_WC_EX_WITH_QP_NUM | IBV_WC_EX_WITH_SRC_QP |
			  IBV_WC_EX_WITH_SLID | IBV_WC_EX_WITH_SL |
			  IBV_WC_EX_WITH_DLID_PATH_BITS,
	/* With SIB_UCTX_CAP_CQE_TS. */
	SIB_CQ_WC_TS_FLAGS = IBV_WC_EX_WITH_COMPLETION_TIMESTAMP |
			     IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK,
	/* One thread at a time polls: the CQ's lock is skipped. */
	SIB_CQ_CREATE_FLAGS = IBV_CREATE_CQ_ATTR_SINGLE_THREADED,
	SIB_CQ_COMP_MASK = IBV_CQ_INIT_ATTR_MASK_FLAGS |
			   IBV_CQ_INIT_ATTR_MASK_PD,
};

static int sib_cq_init(struct sib_cq *cq, struct ibv_context *ibctx,
		       const struct sib_create_cq_resp *uresp, bool lockless)
{
	int ret;

	ret = sib_ring_map(ibctx, &cq->ring, &uresp->ring, SIB_CQE_SIZE);
	if (ret)
		return ret;
	if (!cq->ring.buf) {
		verbs_err(&to_sctx(ibctx)->ibv_ctx,
			  "kernel created a CQ without a ring");
		return EPROTO;
	}

	ret = sib_lock_init(&cq->lock, lockless);
	if (ret) {
		sib_ring_unmap(&cq->ring);
		return ret;
	}
	return 0;
}

struct ibv_cq *sib_create_cq(struct ibv_context *ibctx, int cqe,
			     struct ibv_comp_channel *channel, int comp_vector)
{
	struct sib_cmd_create_cq_resp resp;
	struct sib_cmd_create_cq cmd;
	struct sib_cq *cq;
	int ret;

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_cq(ibctx, cqe, channel, comp_vector, &cq->vcq.cq,
				&cmd.ibv_cmd, sizeof(cmd), &resp.ibv_resp,
				sizeof(resp));
	if (ret)
		goto err_free;

	ret = sib_cq_init(cq, ibctx, &resp.drv_payload, false);
	if (ret)
		goto err_destroy;

	return &cq->vcq.cq;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}

int sib_destroy_cq(struct ibv_cq *ibcq)
{
	struct sib_cq *cq = to_scq(ibcq);
	int ret;

	ret = ibv_cmd_destroy_cq(ibcq);
	if (ret)
		return ret;

	sib_pd_use(cq->pdom, -1);
	sib_ring_unmap(&cq->ring);
	sib_lock_destroy(&cq->lock);
	free(cq);
	return 0;
}

int sib_req_notify_cq(struct ibv_cq *ibcq, int solicited_only)
{
	return ibv_cmd_req_notify_cq(ibcq, solicited_only);
}

/*
 * The kernel builds the new ring, moves the CQEs not yet consumed into it
 * and returns it; cons and prod are then those of the new ring. Holding
 * the lock across the command keeps our pollers off the old ring while the
 * kernel copies it.
 */
int sib_resize_cq(struct ibv_cq *ibcq, int cqe)
{
	struct sib_cq *cq = to_scq(ibcq);
	struct sib_cmd_resize_cq_resp resp;
	struct sib_cmd_resize_cq cmd;
	struct sib_ring ring;
	int ret;

	memset(&resp, 0, sizeof(resp));
	sib_lock(&cq->lock);

	ret = ibv_cmd_resize_cq(ibcq, cqe, &cmd.ibv_cmd, sizeof(cmd),
				&resp.ibv_resp, sizeof(resp));
	if (ret)
		goto out;

	ret = sib_ring_map(ibcq->context, &ring, &resp.drv_payload.ring,
			   SIB_CQE_SIZE);
	if (!ret && !ring.buf)
		ret = EPROTO;

	/*
	 * The old ring is dead either way. If the new one could not be
	 * mapped the CQ is unusable: polling it fails with EIO.
	 */
	sib_ring_unmap(&cq->ring);
	if (ret) {
		verbs_err(&to_sctx(ibcq->context)->ibv_ctx,
			  "CQ resized but its new ring could not be mapped: %s",
			  strerror(ret));
		goto out;
	}
	cq->ring = ring;
out:
	sib_unlock(&cq->lock);
	return ret;
}

/* ---------------------------------------------------------------------
 * ibv_poll_cq()
 */
int sib_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc)
{
	struct sib_cq *cq = to_scq(ibcq);
	struct sib_ring_hdr *hdr;
	uint32_t cons, avail;
	int n;

	sib_ctx_polled(ibcq->context);
	sib_lock(&cq->lock);
	if (!cq->ring.buf) {
		sib_unlock(&cq->lock);
		errno = EIO;
		return -1;
	}

	hdr = sib_ring_hdr(&cq->ring);
	cons = sib_load_relaxed(&hdr->cons);
	avail = sib_load_acquire(&hdr->prod) - cons;

	for (n = 0; n < ne && (uint32_t)n < avail; n++)
		memcpy(&wc[n], sib_ring_slot(&cq->ring, cons + n),
		       sizeof(*wc));

	if (n)
		sib_store_release(&hdr->cons, cons + n);
	sib_unlock(&cq->lock);
	return n;
}

/*
 * Remove the CQEs of QP @qpn that the process has not polled yet, as a
 * QP moving to Reset leaves no trace in its CQs. The slots between cons
 * and prod belong to the consumer until cons moves past them, so the
 * CQEs to keep are packed towards prod (in order) and cons is moved up
 * over the freed slots. CQEs the kernel adds meanwhile lie beyond the
 * prod read here and are not touched; none of them is for @qpn, whose
 * engines the kernel stopped before the reset returned.
 */
void sib_cq_clean(struct ibv_cq *ibcq, uint32_t qpn)
{
	struct sib_cq *cq = to_scq(ibcq);
	struct sib_ring_hdr *hdr;
	uint32_t cons, prod, src, dst;

	sib_lock(&cq->lock);
	if (!cq->ring.buf)
		goto out;

	hdr = sib_ring_hdr(&cq->ring);
	cons = sib_load_relaxed(&hdr->cons);
	prod = sib_load_acquire(&hdr->prod);
	dst = prod;
	for (src = prod; src != cons; ) {
		const struct sib_cqe *cqe = sib_ring_slot(&cq->ring, --src);

		if (cqe->qp_num == qpn)
			continue;
		if (--dst != src)
			memcpy(sib_ring_slot(&cq->ring, dst), cqe, sizeof(*cqe));
	}
	if (dst != cons)
		sib_store_release(&hdr->cons, dst);
out:
	sib_unlock(&cq->lock);
}

/* ---------------------------------------------------------------------
 * Extended polling (ibv_start_poll / ibv_next_poll / ibv_end_poll)
 *
 * The lock is held from a successful start_poll until end_poll. cq->cur
 * is the CQE the read_* callbacks look at; it is consumed (cons moved past
 * it) by the next next_poll or by end_poll.
 */
static bool sib_cq_fetch(struct sib_cq *cq, uint32_t idx)
{
	struct sib_ring_hdr *hdr = sib_ring_hdr(&cq->ring);
	const struct sib_cqe *cqe;

	if (sib_load_acquire(&hdr->prod) == idx) {
		cq->cur = NULL;
		return false;
	}

	cqe = sib_ring_slot(&cq->ring, idx);
	cq->cur = cqe;
	cq->cur_idx = idx;
	cq->vcq.cq_ex.wr_id = cqe->wr_id;
	cq->vcq.cq_ex.status = cqe->status;
	return true;
}

static int sib_start_poll(struct ibv_cq_ex *ibcq,
			  struct ibv_poll_cq_attr *attr)
{
	struct sib_cq *cq = to_scq_ex(ibcq);
	uint32_t cons;

	if (attr && attr->comp_mask)
		return EINVAL;

	sib_ctx_polled(ibcq->context);
	sib_lock(&cq->lock);
	if (!cq->ring.buf) {
		sib_unlock(&cq->lock);
		return EIO;
	}

	cons = sib_load_relaxed(&sib_ring_hdr(&cq->ring)->cons);
	if (!sib_cq_fetch(cq, cons)) {
		sib_unlock(&cq->lock);
		return ENOENT;
	}
	return 0;
}

static int sib_next_poll(struct ibv_cq_ex *ibcq)
{
	struct sib_cq *cq = to_scq_ex(ibcq);
	uint32_t next;

	if (!cq->cur)
		return ENOENT;

	next = cq->cur_idx + 1;
	sib_store_release(&sib_ring_hdr(&cq->ring)->cons, next);
	return sib_cq_fetch(cq, next) ? 0 : ENOENT;
}

static void sib_end_poll(struct ibv_cq_ex *ibcq)
{
	struct sib_cq *cq = to_scq_ex(ibcq);

	if (cq->cur) {
		sib_store_release(&sib_ring_hdr(&cq->ring)->cons,
				  cq->cur_idx + 1);
		cq->cur = NULL;
	}
	sib_unlock(&cq->lock);
}

static enum ibv_wc_opcode sib_read_opcode(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->opcode;
}

static uint32_t sib_read_vendor_err(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->vendor_err;
}

static uint32_t sib_read_byte_len(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->byte_len;
}

static __be32 sib_read_imm_data(struct ibv_cq_ex *ibcq)
{
	/* Big-endian immediate data, or the host-order invalidated rkey. */
	return (__be32)to_scq_ex(ibcq)->cur->ex;
}

static uint32_t sib_read_qp_num(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->qp_num;
}

static uint32_t sib_read_src_qp(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->src_qp;
}

static unsigned int sib_read_wc_flags(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->wc_flags;
}

static uint32_t sib_read_slid(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->slid;
}

static uint8_t sib_read_sl(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->sl;
}

static uint8_t sib_read_dlid_path_bits(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->dlid_path_bits;
}

/*
 * The extended CQ's attributes: EOPNOTSUPP for what sib lacks, EINVAL
 * for a parent_domain that is not a parent domain of this context. The
 * CQ polls without its lock when the parent domain holds a thread domain
 * or the application says it polls from one thread.
 */
static int sib_check_cq_attr(struct ibv_context *ibctx,
			     const struct ibv_cq_init_attr_ex *attr,
			     bool *lockless)
{
	uint64_t wc_flags = SIB_CQ_WC_FLAGS;
	struct sib_pd *pdom = NULL;

	if (to_sctx(ibctx)->caps & SIB_UCTX_CAP_CQE_TS)
		wc_flags |= SIB_CQ_WC_TS_FLAGS;
	if ((attr->wc_flags & ~wc_flags) ||
	    (attr->comp_mask & ~(uint32_t)SIB_CQ_COMP_MASK) ||
	    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
	     (attr->flags & ~(uint32_t)SIB_CQ_CREATE_FLAGS)))
		return EOPNOTSUPP;

	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		if (!attr->parent_domain ||
		    attr->parent_domain->context != ibctx)
			return EINVAL;
		pdom = to_spd(attr->parent_domain);
		if (!pdom->parent)
			return EINVAL;
	}

	*lockless = (pdom && pdom->td) ||
		    ((attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_FLAGS) &&
		     (attr->flags & IBV_CREATE_CQ_ATTR_SINGLE_THREADED));
	return 0;
}

/*
 * Completion timestamps. The core clock is the kernel's CLOCK_MONOTONIC in
 * ns; the wall-clock time is that plus CLOCK_REALTIME - CLOCK_MONOTONIC as
 * it stands when the CQE is read (so a step of the real-time clock between
 * completion and poll shows in it).
 */
static uint64_t sib_read_completion_ts(struct ibv_cq_ex *ibcq)
{
	return to_scq_ex(ibcq)->cur->timestamp;
}

static uint64_t sib_timespec_ns(const struct timespec *ts)
{
	return (uint64_t)ts->tv_sec * 1000000000u + (uint64_t)ts->tv_nsec;
}

static uint64_t sib_read_completion_wallclock_ns(struct ibv_cq_ex *ibcq)
{
	struct timespec mono, real;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	return to_scq_ex(ibcq)->cur->timestamp + sib_timespec_ns(&real) -
	       sib_timespec_ns(&mono);
}

/* The core clock now: CLOCK_MONOTONIC, which is what the kernel stamps. */
int sib_query_rt_values(struct ibv_context *ibctx, struct ibv_values_ex *values)
{
	uint32_t mask = values->comp_mask;

	if (!(to_sctx(ibctx)->caps & SIB_UCTX_CAP_CQE_TS))
		return EOPNOTSUPP;

	values->comp_mask = 0;
	if (mask & IBV_VALUES_MASK_RAW_CLOCK) {
		if (clock_gettime(CLOCK_MONOTONIC, &values->raw_clock))
			return errno;
		values->comp_mask |= IBV_VALUES_MASK_RAW_CLOCK;
	}
	return 0;
}

struct ibv_cq_ex *sib_create_cq_ex(struct ibv_context *ibctx,
				   struct ibv_cq_init_attr_ex *attr)
{
	struct sib_cmd_create_cq_ex_resp resp;
	struct sib_cmd_create_cq_ex cmd;
	struct ibv_cq_init_attr_ex kattr;
	struct ibv_cq_ex *cq_ex;
	struct sib_cq *cq;
	bool lockless;
	int ret;

	ret = sib_check_cq_attr(ibctx, attr, &lockless);
	if (ret) {
		errno = ret;
		return NULL;
	}

	cq = calloc(1, sizeof(*cq));
	if (!cq)
		return NULL;

	/* The parent domain is the provider's business, not the kernel's. */
	kattr = *attr;
	kattr.comp_mask &= ~(uint32_t)IBV_CQ_INIT_ATTR_MASK_PD;
	kattr.parent_domain = NULL;
	/* The kernel stamps CQEs if asked for either timestamp. */
	if (attr->wc_flags & SIB_CQ_WC_TS_FLAGS)
		kattr.wc_flags |= IBV_WC_EX_WITH_COMPLETION_TIMESTAMP;
	memset(&resp, 0, sizeof(resp));
	ret = sib_cmd_create_cq_ex(ibctx, &kattr, &cq->vcq, &cmd.ibv_cmd,
				   sizeof(cmd), &resp.ibv_resp, sizeof(resp),
				   0);
	if (ret)
		goto err_free;

	ret = sib_cq_init(cq, ibctx, &resp.drv_payload, lockless);
	if (ret)
		goto err_destroy;

	if (attr->comp_mask & IBV_CQ_INIT_ATTR_MASK_PD) {
		cq->pdom = attr->parent_domain;
		sib_pd_use(cq->pdom, 1);
	}
	cq_ex = &cq->vcq.cq_ex;
	cq_ex->start_poll = sib_start_poll;
	cq_ex->next_poll = sib_next_poll;
	cq_ex->end_poll = sib_end_poll;
	cq_ex->read_opcode = sib_read_opcode;
	cq_ex->read_vendor_err = sib_read_vendor_err;
	cq_ex->read_wc_flags = sib_read_wc_flags;
	cq_ex->read_byte_len = sib_read_byte_len;
	cq_ex->read_imm_data = sib_read_imm_data;
	cq_ex->read_qp_num = sib_read_qp_num;
	cq_ex->read_src_qp = sib_read_src_qp;
	cq_ex->read_slid = sib_read_slid;
	cq_ex->read_sl = sib_read_sl;
	cq_ex->read_dlid_path_bits = sib_read_dlid_path_bits;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP)
		cq_ex->read_completion_ts = sib_read_completion_ts;
	if (attr->wc_flags & IBV_WC_EX_WITH_COMPLETION_TIMESTAMP_WALLCLOCK)
		cq_ex->read_completion_wallclock_ns =
			sib_read_completion_wallclock_ns;
	return cq_ex;

err_destroy:
	ibv_cmd_destroy_cq(&cq->vcq.cq);
err_free:
	free(cq);
	errno = ret;
	return NULL;
}
