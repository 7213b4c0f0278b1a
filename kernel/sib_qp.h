/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: queue pairs, and the state of the three IBA engines that run a QP:
 * the requester (send queue to packets), the responder (request packets
 * to memory and receive queue, plus ACKs and read/atomic responses) and
 * the completer (responses to send completions), whose functions
 * sib_req.h, sib_resp.h and sib_comp.h declare.
 *
 * A QP's engines run under its @engine mutex, which guards all engine
 * state (struct sib_req, sib_comp, sib_resp and the SQ shadow). Who runs
 * them, when and where: sib_task.c, whose opening comment is the
 * execution model.
 */
#ifndef SIB_QP_H
#define SIB_QP_H

#include <linux/skbuff.h>
#include <linux/timer.h>
#include <linux/workqueue.h>

#include "sib.h"
#include "sib_copy.h"
#include "sib_cq.h"
#include "sib_hdr.h"
#include "sib_srq.h"

struct sib_pass;
struct sib_rss;

/* A receive WQE, copied out of the RQ/SRQ ring once and validated. */
struct sib_rwqe {
	u64 wr_id;
	u32 num_sge;
	struct sib_sge sge[SIB_MAX_SGE];
};

enum sib_swqe_state {
	SIB_SWQE_SENDING,	/* packets still to send */
	SIB_SWQE_SENT,		/* all sent, waiting for ACK or response */
	SIB_SWQE_DONE,		/* ready to complete */
};

/**
 * struct sib_swqe - the kernel's copy of one send WQE and its progress
 * @wr:		the WQE as copied out of the ring, validated; its SGEs or
 *		inline data follow in the same shadow slot
 * @state:	enum sib_swqe_state
 * @status:	completion status (enum ib_wc_status)
 * @first_psn:	PSN of its first packet
 * @last_psn:	PSN of its last packet (for READ: of the last response)
 * @len:	message length
 * @sent:	bytes sent so far
 * @pos:	gather position of @sent in the SGE list
 * @rcvd:	READ: response bytes received (and scattered) so far
 * @rpos:	READ: scatter position of @rcvd in the SGE list, where the
 *		next response's payload goes
 * @ssn:	send sequence number of its message (for credits)
 * @all_sent:	every packet went out once: @first_psn and @last_psn are
 *		final, also while the WQE is being sent again after a rewind
 * @begun:	SEND/WRITE: its first packet went out, @first_psn is valid
 *
 * Engine-private: lives in the QP's @swqe array and is read and written
 * only under the QP's @engine mutex.
 */
struct sib_swqe {
	struct sib_send_wqe *wr;
	u8 state;
	u8 status;
	u32 first_psn;
	u32 last_psn;
	u32 len;
	u32 sent;
	struct sib_sgl_pos pos;
	u32 rcvd;
	struct sib_sgl_pos rpos;
	u32 ssn;
	bool all_sent;
	bool begun;
};

/**
 * struct sib_req - requester state (engine-private)
 * @psn:	next PSN to send
 * @psn_max:	next PSN never sent: after a rewind, responses up to it
 *		still answer packets that were sent
 * @idx:	SQ index of the WQE being sent
 * @fetched:	SQ index up to which WQEs have been copied and validated
 * @rd_atomic:	READ and atomic requests outstanding
 * @rnr_wait:	waiting for the RNR timer before resending
 * @ssn:	SSN of the last message fetched (24 bits, like the MSN)
 * @lsn:	limit sequence number from the responder's credits
 * @credit_unlimited: the responder sent "no credit information"
 * @noack:	packets sent since the last one asking for an ACK
 * @probe:	after a local ACK timeout, only the WQE at @probe_idx (the
 *		oldest unacknowledged one) is sent again until the peer
 *		answers: a slow or lost peer is not flooded with the window
 * @probe_idx:	SQ index of that WQE
 * @credit_known: the responder advertised credits: it sends an update
 *		when it has new ones (before that, the limited WQE goes at
 *		once, as the first message of every QP does)
 * @credit_wait: a message that takes a receive WQE waits for credit; the
 *		local ACK timer runs meanwhile (sib_req_have_credit())
 * @credit_probe: that timer expired without a credit update: the limited
 *		WQE may go now
 */
struct sib_req {
	u32 psn;
	u32 psn_max;
	u32 idx;
	u32 fetched;
	u32 rd_atomic;
	bool rnr_wait;
	u32 ssn;
	u32 lsn;
	bool credit_unlimited;
	u32 noack;
	bool probe;
	u32 probe_idx;
	bool credit_known;
	bool credit_wait;
	bool credit_probe;
};

/**
 * struct sib_comp - completer state (engine-private)
 * @idx:	SQ index of the oldest WQE not yet completed
 * @psn:	PSN of the oldest packet not yet acknowledged
 * @rnr_retry:	RNR retries left (7: infinite)
 * @retry:	transport retries left
 * @retrying:	a go-back-N started and nothing progressed since: only the
 *		timer may start another (sib_comp_retry())
 */
struct sib_comp {
	u32 idx;
	u32 psn;
	u8 rnr_retry;
	u8 retry;
	bool retrying;
};

/*
 * A READ, atomic or ATOMIC WRITE the responder executed, kept for
 * duplicates: its PSNs, what it asked for (a duplicate must ask the
 * same: an ATOMIC WRITE's value is in @swap_add), and for an atomic the
 * original value it returned.
 */
struct sib_resp_res {
	u8 opcode;
	u32 first_psn;
	u32 last_psn;
	u64 va;
	u32 rkey;
	u32 len;
	u64 compare;
	u64 swap_add;
	u64 atomic_orig;
};

/**
 * struct sib_resp_read - the READ (or duplicate READ) being answered
 * @active:	responses are still to be sent: the responder takes no
 *		other input until they are (sib_resp_read_busy())
 * @va:		the READ's address, as the request asked
 * @rkey:	its key
 * @len:	its length
 * @off:	bytes answered so far
 * @psn:	PSN of the next response
 * @srqn:	XRC_TGT QP: the XRC SRQ the READ named, whose PD its key is
 *		checked against for every slice (sib_xrc.c)
 */
struct sib_resp_read {
	bool active;
	u64 va;
	u32 rkey;
	u32 len;
	u32 off;
	u32 psn;
	u32 srqn;
};

/**
 * enum sib_resp_msg - the kind of message the responder is in the middle of
 * @SIB_RESP_MSG_NONE:	between messages: the next request packet must be
 *			a FIRST or an ONLY
 * @SIB_RESP_MSG_SEND:	a SEND's FIRST (or MIDDLE) was accepted: a SEND
 *			MIDDLE or LAST must follow
 * @SIB_RESP_MSG_WRITE:	an RDMA WRITE's FIRST (or MIDDLE) was accepted: a
 *			WRITE MIDDLE or LAST must follow
 */
enum sib_resp_msg {
	SIB_RESP_MSG_NONE,
	SIB_RESP_MSG_SEND,
	SIB_RESP_MSG_WRITE,
};

/**
 * struct sib_resp - responder state (engine-private)
 * @psn:	next expected request PSN
 * @msn:	message sequence number: requests completed
 * @msg:	the message in progress, for the FIRST/MIDDLE/LAST sequence
 *		check (IBA 9.7.5.2.1)
 * @nak_seq:	a PSN sequence error NAK was sent and not yet cleared
 * @rwqe_valid:	@rwqe holds the receive WQE of the SEND in progress
 * @rwqe:	the receive WQE taken (from the RQ or the SRQ) for the SEND or
 *		WRITE_WITH_IMM in progress, copied and validated; valid while
 *		@rwqe_valid
 * @pos:	scatter position in @rwqe's SGE list of the next payload byte
 * @rcvd:	bytes of the message received into @rwqe so far (the
 *		completion's byte_len)
 * @rkey:	RDMA WRITE in progress: the RETH's rkey, looked up again for
 *		every packet (no MR reference is held between packets)
 * @va:		RDMA WRITE in progress: the target address of the next byte
 * @resid:	RDMA WRITE in progress: bytes left of the RETH's length
 * @write_len:	RDMA WRITE in progress: the RETH's length (the byte_len of
 *		a WRITE_WITH_IMM completion)
 * @res_next:	index in the QP's resp_res of the entry the next READ or
 *		atomic overwrites (the oldest), modulo sib_resp_nres()
 * @rd:		the READ whose responses are being sent
 * @starved:	the last credits told to the requester were zero (or an
 *		RNR NAK): the next receive posted sends a credit update
 * @xsrq:	XRC_TGT QP: the XRC SRQ of the request being executed, with a
 *		reference; NULL between packets (sib_xrc.c)
 * @xsrqn:	XRC_TGT QP: the XRC SRQ number of the message in progress,
 *		which its every packet must name; the SRQ @rwqe came from
 */
struct sib_resp {
	u32 psn;
	u32 msn;
	enum sib_resp_msg msg;
	bool nak_seq;
	bool rwqe_valid;
	struct sib_rwqe rwqe;
	struct sib_sgl_pos pos;
	u32 rcvd;
	u32 rkey;
	u64 va;
	u32 resid;
	u32 write_len;
	u32 res_next;
	struct sib_resp_read rd;
	bool starved;
	struct sib_srq *xsrq;
	u32 xsrqn;
};

/**
 * struct sib_route - where a QP's packets went last (sib_net.c)
 * @dgid:	destination GID of the address vector this was computed for
 * @sgid:	source GID of that address vector
 * @network_type: RDMA_NETWORK_IPV4 or RDMA_NETWORK_IPV6, of that address
 *		vector
 * @valid:	the fields below belong to that address vector
 * @local:	the destination is this device: the local path
 * @dst:	cached route to a remote destination (a reference), or NULL
 * @net:	the namespace @dst was looked up in
 * @cookie:	IPv6 route cookie for dst_check()
 * @trailer:	page fragments for the pad and ICRC of RoCEv2 packets whose
 *		payload is MR page fragments (sib_pkt_trailer())
 *
 * Used only by the packet builders and sib_pkt_send(), under the QP's
 * @engine mutex.
 */
struct sib_route {
	union ib_gid dgid;
	union ib_gid sgid;
	u8 network_type;
	bool valid;
	bool local;
	struct dst_entry *dst;
	struct net *net;
	u32 cookie;
	struct page_frag_cache trailer;
};

/**
 * struct sib_local_ack - an ACK on the local path, without a packet
 * @psn:	the PSN acknowledged up to
 * @smsn:	the AETH's syndrome and MSN, host order
 * @valid:	set by the peer's responder, cleared by the completer
 *
 * IBA 9.7.5.1.1 lets a responder coalesce ACKs: a later one stands for the
 * earlier. So the responder of a QP on the same device, instead of a
 * packet, leaves its ACK here when the requester's input queue is empty,
 * and the completer takes it before its next input packet: the order of
 * ACKs and packets is kept. Guarded by the requester's rxq lock.
 */
struct sib_local_ack {
	u32 psn;
	u32 smsn;
	bool valid;
};

/**
 * struct sib_qp - queue pair
 * @ib_qp:	ib_core object; must stay first
 * @sdev:	the device
 * @xrcd:	an XRC_TGT QP's domain, else NULL; ib_core holds it while
 *		the QP lives
 * @uctx:	the owning user context, or NULL for a kernel QP; set before
 *		the QP is published, compared (never dereferenced) by the
 *		doorbell file
 * @ref:	references: one for the QP number table entry, one per
 *		lookup in flight; @done completes when it drops to zero
 * @done:	completed by sib_qp_put() when @ref drops to zero;
 *		sib_destroy_qp() drops the table's reference and waits for it
 * @state_lock:	guards @state and @attr against concurrent verbs and the
 *		engines; a spinlock taken with interrupts off, since engines
 *		read the state from the work item
 * @state:	the IBA state
 * @attr:	attributes as last modified (for query_qp), under @state_lock;
 *		modify_qp holds @engine too, so the engines read the fields
 *		only modify_qp changes under @engine
 * @mtu:	path MTU in bytes
 * @av:		RC/UC destination, from the last modify with IB_QP_AV; written
 *		under both @engine and @state_lock, so either one suffices
 *		to read it (the engines use @engine)
 * @max_send_sge: SGEs a send WQE may carry (what an @sq slot holds, at
 *		most SIB_MAX_SGE); set at creation, constant
 * @max_recv_sge: SGEs a receive WQE may carry (what an @rq slot holds, at
 *		most SIB_MAX_SGE); set at creation, constant; 0 with an SRQ
 * @sq:		the send ring. Its producer is the process, or sib_post_send()
 *		under @sq_lock for a kernel QP; its consumer side (@sq.kidx)
 *		is under @engine
 * @rq:		the receive ring, none (@rq.hdr NULL) with an SRQ. Its
 *		producer is the process, or sib_post_recv() under @rq_lock;
 *		its consumer side is under @engine
 * @sq_shadow:	the kernel's copy of every SQ slot (@sq.slot_size each)
 * @swqe:	per SQ slot progress
 * @resp_res:	the responder's READ/atomic resources, kept to answer
 *		duplicates: @resp_nres entries, used as a ring of
 *		sib_resp_nres(); an entry with opcode 0 is unused; under @engine
 * @resp_nres:	entries of @resp_res: SIB_MAX_RD_ATOMIC for RC, else 1
 * @max_inline: inline bytes a SQ slot holds
 * @rxq:	input packets; skb_queue's own lock guards it
 * @lack:	the latest ACK of a local peer, passed without a packet
 *		(sib_ack_local()); under @rxq's lock
 * @work:	the engines' work item
 * @async_work:	the engines' work item on sib_async_wq (a streaming doorbell;
 *		its own item, so that destroy can cancel both)
 * @async_backoff: until when streaming doorbells run the engines in the
 *		caller (jiffies): set when the worker found its CPU busy or
 *		came late (sib_qp_async_work())
 * @async_queued: when the worker was queued (local_clock(), ns); written
 *		by the doorbell that queues it, read by the worker
 * @async_late:	the worker came late this many times in a row: the
 *		back-off doubles with each, up to SIB_ASYNC_BACKOFF_MAX_MS;
 *		the worker's alone
 * @engine:	serialises the engines, and guards their state (@req,
 *		@comp, @resp, @swqe, @sq_shadow, the consumer side of the
 *		rings); held by whoever runs them, by modify_qp (with
 *		@state_lock inside it) and, briefly, by destroy
 * @rnr_timer:	RNR NAK back-off
 * @retrans_timer: local ACK timeout; lazy (see sib_timer.c): it expires at
 *		@retrans_due if @retrans_on, both written under @engine
 * @retrans_due: the local ACK timeout's deadline, in jiffies
 * @retrans_on:	the local ACK timeout runs
 * @tx_timer:	runs the engines again after they held RoCEv2 packets back
 *		(sib_wire_busy())
 * @tx_held:	this pass held RoCEv2 packets back; under @engine
 * @tx_cpu:	the CPU that sent the QP's last RoCEv2 packet; under @engine
 * @events:	bits for the engine (the SIB_QP_* enum below): timer
 *		expiries, work pending, a credit update to send; atomic
 *		bit operations from any context
 * @destroying:	set once destroy begins; nothing re-arms work or timers
 * @sig_all:	every send WQE completes (IB_SIGNAL_ALL_WR)
 * @sq_lock:	serialises kernel consumers posting to @sq (sib_post_send());
 *		taken with irqsave; unused for a user QP
 * @rq_lock:	serialises kernel consumers posting to @rq (sib_post_recv());
 *		taken with irqsave; unused for a user QP
 * @sq_drained_sent: IB_EVENT_SQ_DRAINED was sent for this drain (set
 *		under @engine)
 * @last_wqe_sent: IB_EVENT_QP_LAST_WQE_REACHED was sent since the QP
 *		entered the error state (a QP of an SRQ), under @engine
 * @req:	requester state, under @engine
 * @comp:	completer state, under @engine
 * @resp:	responder state, under @engine
 * @route:	transmit route cache, under @engine
 * @kpoll_prod:	SQ producer index last seen by the doorbell suppression
 *		(sib_kpoll_set()), under @engine
 * @pass:	while a pass runs (sib_qp_pass()), that pass: where the
 *		local path parks the QPs it delivered packets to, and
 *		where sib_xmit() batches RoCEv2 packets; under @engine
 * @runner:	the task running the engines (sib_qp_run() to
 *		sib_qp_unlock()), or NULL; written under @engine
 * @debugfs:	its view in debugfs (sib_res.c); written by create_qp and
 *		destroy_qp only
 * @raw_node:	a raw packet QP's entry in its device's raw.qps: added at
 *		creation, removed at destruction, under raw.lock; walked
 *		under RCU (sib_raw.c)
 * @raw_flows:	a raw packet QP's flows (struct sib_flow); written under
 *		the device's raw.lock, walked under RCU
 * @rss:	an RSS QP's table and hash (sib_wq.c), else NULL; set at
 *		creation, freed at destruction after the engine stopped
 */
struct sib_qp {
	struct ib_qp ib_qp;
	struct sib_dev *sdev;
	struct ib_xrcd *xrcd;
	struct sib_ucontext *uctx;
	refcount_t ref;
	struct completion done;
	spinlock_t state_lock;	/* see above */
	enum ib_qp_state state;
	struct ib_qp_attr attr;
	u32 mtu;
	struct sib_av av;
	u32 max_send_sge;
	u32 max_recv_sge;
	u32 max_inline;
	struct sib_queue sq;
	struct sib_queue rq;
	void *sq_shadow;
	struct sib_swqe *swqe;
	struct sib_resp_res *resp_res;
	u32 resp_nres;
	struct sk_buff_head rxq;
	struct sib_local_ack lack;
	struct work_struct work;
	struct work_struct async_work;
	unsigned long async_backoff;
	u64 async_queued;
	unsigned int async_late;
	struct mutex engine;	/* see above */
	struct timer_list rnr_timer;
	struct timer_list retrans_timer;
	unsigned long retrans_due;
	bool retrans_on;
	struct timer_list tx_timer;
	bool tx_held;
	unsigned int tx_cpu;
	unsigned long events;
	bool destroying;
	bool sig_all;
	spinlock_t sq_lock;	/* see above */
	spinlock_t rq_lock;	/* see above */
	bool sq_drained_sent;
	bool last_wqe_sent;
	struct sib_req req;
	struct sib_comp comp;
	struct sib_resp resp;
	struct sib_route route;
	u32 kpoll_prod;
	struct sib_pass *pass;
	struct task_struct *runner;
	struct dentry *debugfs;
	struct list_head raw_node;
	struct list_head raw_flows;
	struct sib_rss *rss;
};

enum {
	SIB_QP_RETRANS_FIRED,
	SIB_QP_RNR_FIRED,
	SIB_QP_PENDING,		/* the engines have work */
	SIB_QP_CREDIT_UPDATE,	/* receives were posted to a starved RQ */
};

static inline struct sib_qp *to_sqp(struct ib_qp *ib_qp)
{
	return container_of(ib_qp, struct sib_qp, ib_qp);
}

/* The engine-private copy of the send WQE at SQ index @idx. */
static inline struct sib_swqe *sib_swqe_at(struct sib_qp *qp, u32 idx)
{
	return &qp->swqe[idx & (qp->sq.nslots - 1)];
}

/* Its scatter/gather list, which follows the WQE in the copy. */
static inline struct sib_sge *sib_swqe_sge(struct sib_swqe *s)
{
	return (struct sib_sge *)(s->wr + 1);
}

static inline struct sib_cq *sib_qp_scq(struct sib_qp *qp)
{
	return to_scq(qp->ib_qp.send_cq);
}

/*
 * The SRQ the responder takes receive WQEs from: an XRC_TGT QP's is the
 * one of the request being executed (NULL between packets).
 */
static inline struct sib_srq *sib_qp_srq(struct sib_qp *qp)
{
	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT)
		return qp->resp.xsrq;
	return qp->ib_qp.srq ? to_ssrq(qp->ib_qp.srq) : NULL;
}

/* Where receive completions go: an XRC SRQ's own CQ for XRC_TGT QPs. */
static inline struct sib_cq *sib_qp_rcq(struct sib_qp *qp)
{
	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT)
		return qp->resp.xsrq ? to_scq(qp->resp.xsrq->ib_srq.ext.cq) :
		       NULL;
	return to_scq(qp->ib_qp.recv_cq);
}

/* The PD a request's keys are checked against: an XRC SRQ's for XRC_TGT. */
static inline struct ib_pd *sib_resp_pd(struct sib_qp *qp)
{
	if (qp->ib_qp.qp_type == IB_QPT_XRC_TGT)
		return qp->resp.xsrq ? qp->resp.xsrq->ib_srq.pd : NULL;
	return qp->ib_qp.pd;
}

static inline u32 sib_qpn(struct sib_qp *qp)
{
	return qp->ib_qp.qp_num;
}

/* A process' QP (its rings are shared with it), not a kernel consumer's. */
static inline bool sib_qp_is_user(struct sib_qp *qp)
{
	return !!qp->ib_qp.uobject;
}

/*
 * The transport service: the GSI QP (QP1) is a UD QP (IBA 13.5.1); XRC
 * QPs are RC's reliable service (sib_xrc.c tells them apart where it
 * matters: opcodes, the XRCETH, the SRQ and the PD of a request).
 */
static inline enum ib_qp_type sib_qp_type(struct sib_qp *qp)
{
	switch (qp->ib_qp.qp_type) {
	case IB_QPT_GSI:
		return IB_QPT_UD;
	case IB_QPT_XRC_INI:
	case IB_QPT_XRC_TGT:
		return IB_QPT_RC;
	default:
		return qp->ib_qp.qp_type;
	}
}

/* Responder resources in use: max(max_dest_rd_atomic, 1), within resp_res. */
static inline u32 sib_resp_nres(struct sib_qp *qp)
{
	return clamp_t(u32, qp->attr.max_dest_rd_atomic, 1, qp->resp_nres);
}

/* sib_qp.c */
int sib_create_qp(struct ib_qp *ib_qp, struct ib_qp_init_attr *init,
		  struct ib_udata *udata);
int sib_modify_qp(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int mask,
		  struct ib_udata *udata);
int sib_query_qp(struct ib_qp *ib_qp, struct ib_qp_attr *attr, int mask,
		 struct ib_qp_init_attr *init);
int sib_destroy_qp(struct ib_qp *ib_qp, struct ib_udata *udata);
struct sib_qp *sib_qp_get(struct sib_dev *sdev, u32 qpn);
void sib_qp_put(struct sib_qp *qp);
struct ib_qp *sib_qp_ib_lookup(struct sib_dev *sdev, u32 qpn);
void sib_qp_error(struct sib_qp *qp);
void sib_qp_fatal(struct sib_qp *qp, enum ib_event_type event);
enum ib_qp_state sib_qp_state(struct sib_qp *qp);
void sib_av_from_attr(struct sib_av *av, const struct rdma_ah_attr *ah,
		      u32 lqpn, u32 rqpn);

/* Work requests executed by the requester itself: no packet, no PSN. */
static inline bool sib_op_is_local(u8 op)
{
	return op == IB_WR_LOCAL_INV || op == IB_WR_BIND_MW ||
	       op == IB_WR_REG_MR;
}

/* An RDMA READ or atomic: completed by its response, not by an ACK. */
static inline bool sib_op_is_rd_atomic(u8 op)
{
	return op == IB_WR_RDMA_READ || op == IB_WR_ATOMIC_CMP_AND_SWP ||
	       op == IB_WR_ATOMIC_FETCH_AND_ADD;
}

/*
 * Does @op take one of the responder's resources, so that max_rd_atomic
 * counts it? READs and atomics, and ATOMIC WRITE and FLUSH, which the
 * responder answers with a READ response without data (but which, unlike
 * a READ, an ACK past them completes as well: they return nothing).
 */
static inline bool sib_op_takes_rd_res(u8 op)
{
	return sib_op_is_rd_atomic(op) || op == SIB_WR_ATOMIC_WRITE ||
	       op == SIB_WR_FLUSH;
}

static inline bool sib_credits_enabled(struct sib_qp *qp)
{
	return READ_ONCE(qp->sdev->credits);
}

/* Packets a QP's input queue may hold before the wire path drops more. */
#define SIB_RXQ_MAX		4096

#endif /* SIB_QP_H */
