/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: rdma-core provider for the rdma_sib soft RoCEv2 device.
 *
 * Object layout shared by the provider's source files. Each sib object
 * embeds the libibverbs object it extends and converts back with a to_*()
 * helper. Data-path files (sib_cq.c, sib_qp.c, sib_srq.c) add their objects
 * here and their ops in sib_ctx_ops (sib.c).
 */
#ifndef SIB_H
#define SIB_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

#include "sib_driver.h"
#include <rdma_user_sib.h>
#include "sib_abi.h"

struct sib_device {
	struct verbs_device ibv_dev;
	uint32_t abi_version;		/* kernel uverbs ABI, from sysfs_dev */
};

struct sib_context {
	struct verbs_context ibv_ctx;
	uint32_t caps;			/* enum sib_ucontext_caps */
	uint32_t max_inline;		/* inline bytes per send WQE */
	int db_fd;			/* the doorbell file, or -1 */
	/*
	 * Send doorbells rung since a CQ of this context was last polled
	 * (atomic, relaxed: a hint). From the second on, a send doorbell
	 * says that the process is posting a streak (SIB_DB_F_STREAM).
	 */
	uint32_t doorbells_since_poll;
};

/* A CQ is polled: the next send doorbell starts a new streak. */
static inline void sib_ctx_polled(struct ibv_context *ibctx)
{
	uint32_t *n = &container_of(ibctx, struct sib_context,
				    ibv_ctx.context)->doorbells_since_poll;

	if (__atomic_load_n(n, __ATOMIC_RELAXED))
		__atomic_store_n(n, 0, __ATOMIC_RELAXED);
}

/*
 * A thread domain: the application promises that one thread at a time
 * uses the QPs and CQs created on a parent domain that holds it, so
 * their locks are skipped. users counts those parent domains (atomic).
 */
struct sib_td {
	struct ibv_td ibv_td;
	uint32_t users;
};

/*
 * A protection domain, or a parent domain (parent != NULL) that extends
 * the PD parent with a thread domain and the application's allocator.
 * A parent domain shares its PD's kernel handle and pdn. users (atomic)
 * counts the parent domains that extend a PD, or the QPs and CQs made on
 * a parent domain; neither can be freed while it has users.
 */
struct sib_pd {
	struct ibv_pd ibv_pd;
	uint32_t pdn;
	uint32_t users;
	struct sib_pd *parent;
	struct sib_td *td;
	void *(*alloc)(struct ibv_pd *pd, void *pd_context, size_t size,
		       size_t alignment, uint64_t resource_type);
	void (*free)(struct ibv_pd *pd, void *pd_context, void *ptr,
		     uint64_t resource_type);
	void *pd_context;
};

/* A thread domain, if @ibpd is a parent domain that holds one. */
static inline struct sib_td *sib_pd_td(struct ibv_pd *ibpd)
{
	return ibpd ? container_of(ibpd, struct sib_pd, ibv_pd)->td : NULL;
}

/* A QP or CQ is made on (@delta 1) or leaves (-1) @ibpd. */
static inline void sib_pd_use(struct ibv_pd *ibpd, int delta)
{
	struct sib_pd *pd = ibpd ? container_of(ibpd, struct sib_pd, ibv_pd) :
				   NULL;

	if (pd && pd->parent)
		__atomic_add_fetch(&pd->users, delta, __ATOMIC_RELAXED);
}

/*
 * A lock that a thread domain turns off: the application serialises the
 * object's users itself (off is set once, at creation).
 */
struct sib_lock {
	pthread_spinlock_t spin;
	bool off;
};

static inline int sib_lock_init(struct sib_lock *l, bool off)
{
	l->off = off;
	return pthread_spin_init(&l->spin, PTHREAD_PROCESS_PRIVATE);
}

static inline void sib_lock_destroy(struct sib_lock *l)
{
	pthread_spin_destroy(&l->spin);
}

static inline void sib_lock(struct sib_lock *l)
{
	if (!l->off)
		pthread_spin_lock(&l->spin);
}

static inline void sib_unlock(struct sib_lock *l)
{
	if (!l->off)
		pthread_spin_unlock(&l->spin);
}

/* ---------------------------------------------------------------------
 * Shared rings (see "Shared rings" in rdma_user_sib.h)
 */

/* One ring mapped from the kernel; buf == NULL means "no ring". */
struct sib_ring {
	void *buf;			/* struct sib_ring_hdr at offset 0 */
	size_t map_size;		/* bytes mapped, for munmap */
	uint32_t nslots;		/* power of two */
	uint32_t slot_size;		/* power of two */
};

static inline struct sib_ring_hdr *sib_ring_hdr(const struct sib_ring *ring)
{
	return ring->buf;
}

static inline void *sib_ring_slot(const struct sib_ring *ring, uint32_t idx)
{
	return (uint8_t *)ring->buf + SIB_RING_HDR_SIZE +
	       (size_t)(idx & (ring->nslots - 1)) * ring->slot_size;
}

/*
 * Index accessors. Our own index is only ever written by this process
 * (under the queue's lock), so it is read relaxed; the other side's index
 * is read with acquire and ours is published with release.
 */
static inline uint32_t sib_load_relaxed(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_RELAXED);
}

static inline uint32_t sib_load_acquire(const uint32_t *p)
{
	return __atomic_load_n(p, __ATOMIC_ACQUIRE);
}

static inline void sib_store_release(uint32_t *p, uint32_t val)
{
	__atomic_store_n(p, val, __ATOMIC_RELEASE);
}

int sib_ring_map(struct ibv_context *ibctx, struct sib_ring *ring,
		 const struct sib_ring_info *info, uint32_t min_slot_size);
void sib_ring_unmap(struct sib_ring *ring);

/*
 * A work queue the process produces into: SQ, RQ or SRQ. Capacity is
 * max_wr (the kernel's reported cap, never more than nslots).
 */
struct sib_wq {
	struct sib_ring ring;
	struct sib_lock lock;		/* serialises this process' producers */
	uint32_t max_wr;
	uint32_t max_sge;
	uint32_t max_inline;		/* SQ only */
};

/* Number of WQEs the queue can still take (reads cons with acquire). */
static inline uint32_t sib_wq_room(struct sib_wq *wq, uint32_t prod)
{
	uint32_t used = prod - sib_load_acquire(&sib_ring_hdr(&wq->ring)->cons);

	return used >= wq->max_wr ? 0 : wq->max_wr - used;
}

int sib_wq_init(struct ibv_context *ibctx, struct sib_wq *wq,
		const struct sib_ring_info *info, uint32_t max_wr,
		uint32_t max_sge, uint32_t max_inline, uint32_t hdr_size);
void sib_wq_destroy(struct sib_wq *wq);
int sib_wq_post_recv(struct sib_wq *wq, struct ibv_recv_wr *wr,
		     struct ibv_recv_wr **bad_wr);

/* ---------------------------------------------------------------------
 * Completion queues
 */
struct sib_cq {
	struct verbs_cq vcq;
	struct sib_ring ring;		/* buf NULL after a failed remap */
	struct sib_lock lock;		/* serialises this process' pollers */
	struct ibv_pd *pdom;		/* the parent domain it was made on */
	/* Extended polling: the CQE between start_poll and end_poll. */
	const struct sib_cqe *cur;
	uint32_t cur_idx;
};

static inline struct sib_cq *to_scq(struct ibv_cq *ibcq)
{
	return container_of(ibcq, struct sib_cq, vcq.cq);
}

static inline struct sib_cq *to_scq_ex(struct ibv_cq_ex *ibcq)
{
	return container_of(ibcq, struct sib_cq, vcq.cq_ex);
}

/* ---------------------------------------------------------------------
 * Queue pairs
 */

/*
 * The legacy POST_SEND / POST_RECV command without work requests that
 * rings a doorbell: the header, then the fixed part of struct
 * ib_uverbs_post_send (== ib_uverbs_post_recv) spelt out, since the
 * kernel struct ends in a flexible array. sib_qp.c pins the layout.
 */
struct sib_doorbell {
	struct ib_uverbs_cmd_hdr hdr;
	__aligned_u64 response;
	__u32 qp_handle;
	__u32 wr_count;
	__u32 sge_count;
	__u32 wqe_size;
};

struct sib_qp {
	struct verbs_qp vqp;
	struct sib_wq sq;		/* sq.ring.buf NULL: no send queue */
	struct sib_wq rq;		/* rq.ring.buf NULL: SRQ or no RQ */
	uint32_t sq_opcodes;		/* bit (1 << ibv_wr_opcode) if allowed */
	uint32_t sig_all;		/* IBV_SEND_SIGNALED if sq_sig_all */
	bool sq_kpoll;			/* the kernel publishes SQ kpoll */
	bool rq_credit;			/* the kernel sets RQ credit_wanted */
	struct sib_doorbell sq_db;	/* prebuilt; response set per call */
	struct sib_doorbell rq_db;
	/* ibv_qp_ex builder state, valid between wr_start and complete. */
	uint32_t wr_start_prod;
	uint32_t wr_prod;		/* next slot to fill */
	int wr_err;			/* first error; nothing is published */
	struct sib_send_wqe *wr_wqe;	/* WQE the wr_set_* calls refer to */
};

static inline struct sib_qp *to_sqp(struct ibv_qp *ibqp)
{
	return container_of(ibqp, struct sib_qp, vqp.qp);
}

static inline struct sib_qp *to_sqp_ex(struct ibv_qp_ex *ibqp)
{
	return container_of(ibqp, struct sib_qp, vqp.qp_ex);
}

/* ---------------------------------------------------------------------
 * Receive work queues
 *
 * A receive work queue (ibv_create_wq): an RQ ring of its own, which RSS
 * QPs fill (sib_rwq.c).
 */
struct sib_rwq {
	struct ibv_wq ibv_wq;
	struct sib_wq rq;
};

static inline struct sib_rwq *to_srwq(struct ibv_wq *ibwq)
{
	return container_of(ibwq, struct sib_rwq, ibv_wq);
}

/* ---------------------------------------------------------------------
 * Address handles
 */
struct sib_ah {
	struct ibv_ah ibv_ah;
	uint32_t ah_num;		/* what UD send WQEs carry */
};

static inline struct sib_ah *to_sah(struct ibv_ah *ibah)
{
	return container_of(ibah, struct sib_ah, ibv_ah);
}

/* ---------------------------------------------------------------------
 * Shared receive queues
 */
struct sib_srq {
	struct verbs_srq vsrq;
	struct sib_wq rq;
};

static inline struct sib_srq *to_ssrq(struct ibv_srq *ibsrq)
{
	return container_of(ibsrq, struct sib_srq, vsrq.srq);
}

/* ---------------------------------------------------------------------
 * Driver udata carried by the core commands.
 */
SIB_DECLARE_DRV_CMD(sib_cmd_get_context, ibv_get_context,
		    sib_alloc_ucontext_cmd,
		    ib_uverbs_get_context_resp, sib_alloc_ucontext_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_alloc_pd, ibv_alloc_pd, sib_empty,
		    ib_uverbs_alloc_pd_resp, sib_alloc_pd_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_cq, ibv_create_cq, sib_empty,
		    ib_uverbs_create_cq_resp, sib_create_cq_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_cq_ex, ibv_create_cq_ex, sib_empty,
		    ib_uverbs_ex_create_cq_resp, sib_create_cq_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_resize_cq, ibv_resize_cq, sib_empty,
		    ib_uverbs_resize_cq_resp, sib_create_cq_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_qp_ex, ibv_create_qp_ex, sib_empty,
		    ib_uverbs_ex_create_qp_resp, sib_create_qp_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_qp_rss, ibv_create_qp_ex, sib_create_qp_rss,
		    ib_uverbs_ex_create_qp_resp, sib_create_qp_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_wq, ibv_create_wq, sib_empty,
		    ib_uverbs_ex_create_wq_resp, sib_create_wq_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_ah, ib_uverbs_create_ah, sib_empty,
		    ib_uverbs_create_ah_resp, sib_create_ah_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_srq, ibv_create_srq, sib_empty,
		    ib_uverbs_create_srq_resp, sib_create_srq_resp);
SIB_DECLARE_DRV_CMD(sib_cmd_create_xsrq, ibv_create_xsrq, sib_empty,
		    ib_uverbs_create_srq_resp, sib_create_srq_resp);

/* Extended commands travel in 8-byte words on the write() path. */
#define SIB_EX_CMD_WORDS_OK                                                    \
	(sizeof(struct sib_cmd_create_cq_ex) % 8 == 0 &&                       \
	 sizeof(struct sib_cmd_create_cq_ex_resp) % 8 == 0 &&                  \
	 sizeof(struct sib_cmd_create_qp_ex) % 8 == 0 &&                       \
	 sizeof(struct sib_cmd_create_qp_rss) % 8 == 0 &&                      \
	 sizeof(struct sib_cmd_create_wq) % 8 == 0 &&                          \
	 sizeof(struct sib_cmd_create_wq_resp) % 8 == 0 &&                     \
	 sizeof(struct sib_cmd_create_qp_ex_resp) % 8 == 0)
_Static_assert(SIB_EX_CMD_WORDS_OK,
	       "extended sib commands must be made of 64-bit words");
#undef SIB_EX_CMD_WORDS_OK

/* ---------------------------------------------------------------------
 * Conversions
 */
static inline struct sib_device *to_sdev(struct ibv_device *ibdev)
{
	return container_of(ibdev, struct sib_device, ibv_dev.device);
}

static inline struct sib_context *to_sctx(struct ibv_context *ibctx)
{
	return container_of(ibctx, struct sib_context, ibv_ctx.context);
}

static inline struct sib_pd *to_spd(struct ibv_pd *ibpd)
{
	return container_of(ibpd, struct sib_pd, ibv_pd);
}

/* ---------------------------------------------------------------------
 * Verbs, by file
 */

/* sib.c */
struct ibv_ah *sib_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr);
int sib_destroy_ah(struct ibv_ah *ibah);

/* sib_mr.c */
int sib_advise_mr(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
		  uint32_t flags, struct ibv_sge *sg_list, uint32_t num_sge);
struct ibv_mr *sib_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
			  uint64_t hca_va, int access);
struct ibv_mr *sib_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset,
				 size_t length, uint64_t iova, int fd,
				 int access);
int sib_rereg_mr(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
		 void *addr, size_t length, int access);
int sib_dereg_mr(struct verbs_mr *vmr);
struct ibv_mr *sib_import_mr(struct ibv_pd *pd, uint32_t mr_handle);
void sib_unimport_mr(struct ibv_mr *mr);
struct ibv_mw *sib_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type);
int sib_dealloc_mw(struct ibv_mw *mw);
int sib_bind_mw(struct ibv_qp *qp, struct ibv_mw *mw,
		struct ibv_mw_bind *mw_bind);

/* sib_dm.c */
struct ibv_dm *sib_alloc_dm(struct ibv_context *ibctx,
			    struct ibv_alloc_dm_attr *attr);
int sib_free_dm(struct ibv_dm *ibdm);
struct ibv_dm *sib_import_dm(struct ibv_context *ibctx, uint32_t dm_handle);
void sib_unimport_dm(struct ibv_dm *ibdm);
struct ibv_mr *sib_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			     uint64_t dm_offset, size_t length,
			     unsigned int access);

/* sib_cq.c */
struct ibv_cq *sib_create_cq(struct ibv_context *ibctx, int cqe,
			     struct ibv_comp_channel *channel,
			     int comp_vector);
struct ibv_cq_ex *sib_create_cq_ex(struct ibv_context *ibctx,
				   struct ibv_cq_init_attr_ex *attr);
int sib_destroy_cq(struct ibv_cq *ibcq);
int sib_poll_cq(struct ibv_cq *ibcq, int ne, struct ibv_wc *wc);
int sib_req_notify_cq(struct ibv_cq *ibcq, int solicited_only);
int sib_resize_cq(struct ibv_cq *ibcq, int cqe);
int sib_query_rt_values(struct ibv_context *ibctx,
			struct ibv_values_ex *values);
void sib_cq_clean(struct ibv_cq *ibcq, uint32_t qpn);

/* sib_qp.c */
struct ibv_qp *sib_create_qp(struct ibv_pd *pd, struct ibv_qp_init_attr *attr);
struct ibv_qp *sib_create_qp_ex(struct ibv_context *ibctx,
				struct ibv_qp_init_attr_ex *attr);
int sib_modify_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		  int attr_mask);
int sib_query_qp(struct ibv_qp *ibqp, struct ibv_qp_attr *attr,
		 int attr_mask, struct ibv_qp_init_attr *init_attr);
int sib_destroy_qp(struct ibv_qp *ibqp);
struct ibv_flow *sib_create_flow(struct ibv_qp *ibqp,
				 struct ibv_flow_attr *flow_attr);
int sib_destroy_flow(struct ibv_flow *flow);
struct ibv_qp *sib_open_qp(struct ibv_context *ibctx,
			   struct ibv_qp_open_attr *attr);
int sib_post_send(struct ibv_qp *ibqp, struct ibv_send_wr *wr,
		  struct ibv_send_wr **bad_wr);
int sib_post_recv(struct ibv_qp *ibqp, struct ibv_recv_wr *wr,
		  struct ibv_recv_wr **bad_wr);

/* sib_rwq.c */
struct ibv_wq *sib_create_wq(struct ibv_context *ibctx,
			     struct ibv_wq_init_attr *attr);
int sib_modify_wq(struct ibv_wq *ibwq, struct ibv_wq_attr *attr);
int sib_destroy_wq(struct ibv_wq *ibwq);
struct ibv_rwq_ind_table *
sib_create_rwq_ind_table(struct ibv_context *ibctx,
			 struct ibv_rwq_ind_table_init_attr *attr);
int sib_destroy_rwq_ind_table(struct ibv_rwq_ind_table *tbl);
struct ibv_qp *sib_create_rss_qp(struct ibv_context *ibctx,
				 struct ibv_qp_init_attr_ex *attr);
void sib_rss_caps(struct ibv_device_attr_ex *attr, size_t attr_size);

/* sib_srq.c */
struct ibv_srq *sib_create_srq(struct ibv_pd *pd,
			       struct ibv_srq_init_attr *attr);
struct ibv_srq *sib_create_srq_ex(struct ibv_context *ibctx,
				  struct ibv_srq_init_attr_ex *attr);
int sib_modify_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr,
		   int attr_mask);
int sib_query_srq(struct ibv_srq *ibsrq, struct ibv_srq_attr *attr);
int sib_destroy_srq(struct ibv_srq *ibsrq);
int sib_post_srq_recv(struct ibv_srq *ibsrq, struct ibv_recv_wr *wr,
		      struct ibv_recv_wr **bad_wr);
int sib_get_srq_num(struct ibv_srq *ibsrq, uint32_t *srq_num);
struct ibv_xrcd *sib_open_xrcd(struct ibv_context *ibctx,
			       struct ibv_xrcd_init_attr *attr);
int sib_close_xrcd(struct ibv_xrcd *ibxrcd);

#endif /* SIB_H */
