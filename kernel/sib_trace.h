/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: tracepoints (trace system "sib"). Documentation/tracing.md lists
 * them with their fields and shows how to read a trace.
 *
 * Every event names the device and the QP (or the destination QP of a
 * packet). Opcodes, states, statuses and verdicts are printed by name.
 * The arguments are pointers the caller already holds; everything an
 * event records is read in TP_fast_assign, so a disabled event costs a
 * static branch and nothing else.
 *
 * A verdict event (sib_resp_verdict, sib_comp_verdict) closes the
 * handling of its packet: the events the packet caused (an ACK, a
 * rewind, a completion) come before it.
 *
 * The events run under the locks their call sites hold: the engine
 * mutex for the engines' events, the receive path's RCU read side for
 * packets received, the fault layer's lock for sib_fault.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM sib

#if !defined(SIB_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define SIB_TRACE_H

#include <linux/tracepoint.h>

#include "sib_comp.h"
#include "sib_cq.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_req.h"
#include "sib_resp.h"
#include "sib_resp_credit.h"

/* The device's name, copied into a dynamic string of the event. */
#define SIB_DEV_ENTRY(sdev)	__string(dev, dev_name(&(sdev)->ib_dev.dev))
#define SIB_DEV_ASSIGN(sdev)						\
	strscpy(__get_str(dev), dev_name(&(sdev)->ib_dev.dev),		\
		__get_dynamic_array_len(dev))

/*
 * The symbol tables (sib_trace_syms.h). Each list is expanded twice: once
 * to export the enum values to user space (TRACE_DEFINE_ENUM, for perf and
 * trace-cmd, which read the format files), once as { value, "name" } pairs
 * for __print_symbolic().
 */
#include "sib_trace_syms.h"

#undef EM
#undef EME
#define EM(a, b)	TRACE_DEFINE_ENUM(a);
#define EME(a, b)	TRACE_DEFINE_ENUM(a);

sib_show_opcodes
sib_show_wr_opcodes
sib_show_wc_opcodes
sib_show_wc_status
sib_show_qp_states
sib_show_req_waits
sib_show_resp_verdicts
sib_show_comp_verdicts
sib_show_drop_reasons
sib_show_faults
TRACE_DEFINE_ENUM(SIB_FAULT_TX);
TRACE_DEFINE_ENUM(SIB_FAULT_RX);

#undef EM
#undef EME
#define EM(a, b)	{ a, b },
#define EME(a, b)	{ a, b }

#define sib_opcode_name(op)	__print_symbolic(op, sib_show_opcodes)
#define sib_wr_opcode_name(op)	__print_symbolic(op, sib_show_wr_opcodes)
#define sib_wc_opcode_name(op)	__print_symbolic(op, sib_show_wc_opcodes)
#define sib_wc_status_name(st)	__print_symbolic(st, sib_show_wc_status)
#define sib_qp_state_name(st)	__print_symbolic(st, sib_show_qp_states)

/* The AETH syndrome: ACK credits=C, RNR_NAK timer=T, NAK <code>. */
#define sib_aeth_type_name(syn)						\
	__print_symbolic((syn) & SIB_AETH_TYPE_MASK, sib_show_aeth_types)
#define sib_aeth_code_name(syn)						\
	(((syn) & SIB_AETH_TYPE_MASK) == SIB_AETH_NAK ?			\
	 __print_symbolic((syn) & 0x1f, sib_show_nak_codes) :		\
	 ((syn) & SIB_AETH_TYPE_MASK) == SIB_AETH_RNR_NAK ? "timer" : "credits")

/* ---- packets ---------------------------------------------------------- */

TRACE_EVENT(sib_pkt_send,
	TP_PROTO(struct sib_qp *qp, struct sk_buff *skb, bool local),
	TP_ARGS(qp, skb, local),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u16, npkts)
		__field(u8, opcode)
		__field(bool, ack_req)
		__field(bool, local)
	),
	TP_fast_assign(
		const struct sib_pkt *pkt = sib_pkt(skb);

		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->dqpn = pkt->qpn;
		__entry->psn = pkt->psn;
		__entry->len = pkt->paylen;
		__entry->npkts = pkt->npkts;
		__entry->opcode = pkt->opcode;
		__entry->ack_req = pkt->ack_req;
		__entry->local = local;
	),
	TP_printk("dev=%s qpn=%u dqpn=%u op=%s psn=%u len=%u npkts=%u ackreq=%u path=%s",
		  __get_str(dev), __entry->qpn, __entry->dqpn,
		  sib_opcode_name(__entry->opcode), __entry->psn, __entry->len,
		  __entry->npkts, __entry->ack_req,
		  __entry->local ? "local" : "wire")
);

TRACE_EVENT(sib_pkt_recv,
	TP_PROTO(struct sib_dev *sdev, struct sk_buff *skb),
	TP_ARGS(sdev, skb),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(sdev)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, len)
		__field(u16, npkts)
		__field(u8, opcode)
		__field(bool, ack_req)
		__field(bool, local)
	),
	TP_fast_assign(
		const struct sib_pkt *pkt = sib_pkt(skb);

		SIB_DEV_ASSIGN(sdev);
		__entry->dqpn = pkt->qpn;
		__entry->psn = pkt->psn;
		__entry->len = pkt->paylen;
		__entry->npkts = pkt->npkts;
		__entry->opcode = pkt->opcode;
		__entry->ack_req = pkt->ack_req;
		__entry->local = pkt->local;
	),
	TP_printk("dev=%s dqpn=%u op=%s psn=%u len=%u npkts=%u ackreq=%u path=%s",
		  __get_str(dev), __entry->dqpn,
		  sib_opcode_name(__entry->opcode), __entry->psn, __entry->len,
		  __entry->npkts, __entry->ack_req,
		  __entry->local ? "local" : "wire")
);

/* @pkt is NULL when the packet's transport headers were not parsed yet. */
TRACE_EVENT(sib_pkt_drop,
	TP_PROTO(struct sib_dev *sdev, const struct sib_pkt *pkt,
		 unsigned int reason),
	TP_ARGS(sdev, pkt, reason),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(sdev)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, reason)
		__field(u8, opcode)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(sdev);
		__entry->dqpn = pkt ? pkt->qpn : 0;
		__entry->psn = pkt ? pkt->psn : 0;
		__entry->opcode = pkt ? pkt->opcode : 0xff;
		__entry->reason = reason;
	),
	TP_printk("dev=%s dqpn=%u op=%s psn=%u reason=%s",
		  __get_str(dev), __entry->dqpn,
		  sib_opcode_name(__entry->opcode), __entry->psn,
		  __print_symbolic(__entry->reason, sib_show_drop_reasons))
);

/* ---- send WQEs and completions ---------------------------------------- */

DECLARE_EVENT_CLASS(sib_swqe_class,
	TP_PROTO(struct sib_qp *qp, u32 idx, const struct sib_swqe *s),
	TP_ARGS(qp, idx, s),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u64, wr_id)
		__field(u32, qpn)
		__field(u32, idx)
		__field(u32, len)
		__field(u32, ssn)
		__field(u32, first_psn)
		__field(u32, last_psn)
		__field(u8, opcode)
		__field(u8, status)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->wr_id = s->wr->wr_id;
		__entry->qpn = sib_qpn(qp);
		__entry->idx = idx;
		__entry->len = s->len;
		__entry->ssn = s->ssn;
		__entry->first_psn = s->first_psn;
		__entry->last_psn = s->last_psn;
		__entry->opcode = s->wr->opcode;
		__entry->status = s->status;
	),
	TP_printk("dev=%s qpn=%u idx=%u wr_id=0x%llx op=%s len=%u ssn=%u psn=%u-%u status=%s",
		  __get_str(dev), __entry->qpn, __entry->idx,
		  (unsigned long long)__entry->wr_id,
		  sib_wr_opcode_name(__entry->opcode), __entry->len,
		  __entry->ssn, __entry->first_psn, __entry->last_psn,
		  sib_wc_status_name(__entry->status))
);

/* The requester copied a WQE out of the SQ and checked it (no PSNs yet). */
DEFINE_EVENT_PRINT(sib_swqe_class, sib_req_fetch,
	TP_PROTO(struct sib_qp *qp, u32 idx, const struct sib_swqe *s),
	TP_ARGS(qp, idx, s),
	TP_printk("dev=%s qpn=%u idx=%u wr_id=0x%llx op=%s len=%u ssn=%u status=%s",
		  __get_str(dev), __entry->qpn, __entry->idx,
		  (unsigned long long)__entry->wr_id,
		  sib_wr_opcode_name(__entry->opcode), __entry->len,
		  __entry->ssn, sib_wc_status_name(__entry->status))
);

/* The completer retired a WQE (in SQ order), with a CQE or not. */
DEFINE_EVENT(sib_swqe_class, sib_swqe_done,
	TP_PROTO(struct sib_qp *qp, u32 idx, const struct sib_swqe *s),
	TP_ARGS(qp, idx, s)
);

TRACE_EVENT(sib_cqe,
	TP_PROTO(struct sib_cq *cq, const struct sib_cqe *cqe, bool posted),
	TP_ARGS(cq, cqe, posted),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(to_sdev(cq->ib_cq.device))
		__field(u64, wr_id)
		__field(u32, cq)
		__field(u32, qpn)
		__field(u32, byte_len)
		__field(u32, opcode)
		__field(u32, status)
		__field(bool, posted)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(to_sdev(cq->ib_cq.device));
		__entry->wr_id = cqe->wr_id;
		__entry->cq = cq->ib_cq.res.id;
		__entry->qpn = cqe->qp_num;
		__entry->byte_len = cqe->byte_len;
		__entry->opcode = cqe->opcode;
		__entry->status = cqe->status;
		__entry->posted = posted;
	),
	TP_printk("dev=%s cq=%u qpn=%u wr_id=0x%llx op=%s status=%s len=%u%s",
		  __get_str(dev), __entry->cq, __entry->qpn,
		  (unsigned long long)__entry->wr_id,
		  sib_wc_opcode_name(__entry->opcode),
		  sib_wc_status_name(__entry->status), __entry->byte_len,
		  __entry->posted ? "" : " overrun")
);

/* ---- the requester ------------------------------------------------------ */

/*
 * The requester stops at the WQE at @s, which may not go yet, for
 * @wait; it sends again when an ACK, a completion, a credit update or a
 * timer runs the engines.
 */
TRACE_EVENT(sib_req_wait,
	TP_PROTO(struct sib_qp *qp, const struct sib_swqe *s,
		 enum sib_req_wait wait),
	TP_ARGS(qp, s, wait),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, idx)
		__field(u32, psn)
		__field(u32, comp_psn)
		__field(u32, rd_atomic)
		__field(u32, wait)
		__field(u8, opcode)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->idx = qp->req.idx;
		__entry->psn = qp->req.psn;
		__entry->comp_psn = qp->comp.psn;
		__entry->rd_atomic = qp->req.rd_atomic;
		__entry->wait = wait;
		__entry->opcode = s->wr->opcode;
	),
	TP_printk("dev=%s qpn=%u idx=%u op=%s wait=%s psn=%u unacked=%u rd_atomic=%u",
		  __get_str(dev), __entry->qpn, __entry->idx,
		  sib_wr_opcode_name(__entry->opcode),
		  __print_symbolic(__entry->wait, sib_show_req_waits),
		  __entry->psn, __entry->comp_psn, __entry->rd_atomic)
);

/* ---- the responder ------------------------------------------------------ */

TRACE_EVENT(sib_resp_verdict,
	TP_PROTO(struct sib_qp *qp, struct sk_buff *skb,
		 enum sib_resp_verdict verdict),
	TP_ARGS(qp, skb, verdict),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, epsn)
		__field(u32, len)
		__field(u32, verdict)
		__field(u8, opcode)
	),
	TP_fast_assign(
		const struct sib_pkt *pkt = sib_pkt(skb);

		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = pkt->psn;
		__entry->epsn = qp->resp.psn;
		__entry->len = pkt->paylen;
		__entry->verdict = verdict;
		__entry->opcode = pkt->opcode;
	),
	TP_printk("dev=%s qpn=%u op=%s psn=%u len=%u verdict=%s epsn=%u",
		  __get_str(dev), __entry->qpn,
		  sib_opcode_name(__entry->opcode), __entry->psn, __entry->len,
		  __print_symbolic(__entry->verdict, sib_show_resp_verdicts),
		  __entry->epsn)
);

/* An ACK, NAK or RNR NAK the responder sends (or passes locally). */
TRACE_EVENT(sib_resp_ack,
	TP_PROTO(struct sib_qp *qp, u32 psn, u8 syn, bool local),
	TP_ARGS(qp, psn, syn, local),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, msn)
		__field(u8, syn)
		__field(bool, local)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = psn & SIB_PSN_MASK;
		__entry->msn = qp->resp.msn & SIB_PSN_MASK;
		__entry->syn = syn;
		__entry->local = local;
	),
	TP_printk("dev=%s qpn=%u psn=%u aeth=%s %s=%u msn=%u path=%s",
		  __get_str(dev), __entry->qpn, __entry->psn,
		  sib_aeth_type_name(__entry->syn),
		  sib_aeth_code_name(__entry->syn), __entry->syn & 0x1f,
		  __entry->msn, __entry->local ? "local" : "packet")
);

/* ---- the completer ------------------------------------------------------ */

/* A response taken or refused; @aeth: it has an AETH, whose syndrome is @syn. */
TRACE_EVENT(sib_comp_verdict,
	TP_PROTO(struct sib_qp *qp, u8 opcode, u32 psn, bool aeth, u8 syn,
		 enum sib_comp_verdict verdict, bool local),
	TP_ARGS(qp, opcode, psn, aeth, syn, verdict, local),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, comp_psn)
		__field(u32, verdict)
		__field(u8, opcode)
		__field(u8, syn)
		__field(bool, aeth)
		__field(bool, local)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = psn;
		__entry->comp_psn = qp->comp.psn;
		__entry->verdict = verdict;
		__entry->opcode = opcode;
		__entry->syn = syn;
		__entry->aeth = aeth;
		__entry->local = local;
	),
	TP_printk("dev=%s qpn=%u op=%s psn=%u aeth=%s %s=%u verdict=%s unacked=%u path=%s",
		  __get_str(dev), __entry->qpn,
		  sib_opcode_name(__entry->opcode), __entry->psn,
		  __entry->aeth ? sib_aeth_type_name(__entry->syn) : "none",
		  __entry->aeth ? sib_aeth_code_name(__entry->syn) : "syn",
		  __entry->syn & 0x1f,
		  __print_symbolic(__entry->verdict, sib_show_comp_verdicts),
		  __entry->comp_psn, __entry->local ? "local" : "packet")
);

/* A go-back-N asked for (by a NAK, an implied NAK or the ACK timeout). */
TRACE_EVENT(sib_retry,
	TP_PROTO(struct sib_qp *qp, u32 psn, bool timeout, bool in_retry),
	TP_ARGS(qp, psn, timeout, in_retry),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u8, left)
		__field(bool, timeout)
		__field(bool, in_retry)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = psn;
		__entry->left = qp->comp.retry;
		__entry->timeout = timeout;
		__entry->in_retry = in_retry;
	),
	TP_printk("dev=%s qpn=%u psn=%u cause=%s retries_left=%u action=%s",
		  __get_str(dev), __entry->qpn, __entry->psn,
		  __entry->timeout ? "timeout" : "nak",
		  __entry->left,
		  __entry->in_retry ? "none_in_retry" :
		  !__entry->left ? "fail_retry_exc" : "go_back")
);

/* The requester goes back to @psn and sends from there again. */
TRACE_EVENT(sib_req_rewind,
	TP_PROTO(struct sib_qp *qp, u32 psn),
	TP_ARGS(qp, psn),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, from)
		__field(u32, psn)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->from = qp->req.psn;
		__entry->psn = psn;
	),
	TP_printk("dev=%s qpn=%u psn=%u from=%u",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->from)
);

/* An RNR NAK received: the requester waits @usec, then sends again. */
TRACE_EVENT(sib_rnr_wait,
	TP_PROTO(struct sib_qp *qp, u32 psn, u32 usec),
	TP_ARGS(qp, psn, usec),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, usec)
		__field(u8, left)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = psn;
		__entry->usec = usec;
		__entry->left = qp->comp.rnr_retry;
	),
	TP_printk("dev=%s qpn=%u psn=%u usec=%u rnr_retries_left=%u%s",
		  __get_str(dev), __entry->qpn, __entry->psn, __entry->usec,
		  __entry->left, __entry->left == 7 ? " (infinite)" : "")
);

DECLARE_EVENT_CLASS(sib_qp_timer_class,
	TP_PROTO(struct sib_qp *qp),
	TP_ARGS(qp),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, psn)
		__field(u32, comp_psn)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->psn = qp->req.psn;
		__entry->comp_psn = qp->comp.psn;
	),
	TP_printk("dev=%s qpn=%u psn=%u unacked=%u", __get_str(dev),
		  __entry->qpn, __entry->psn, __entry->comp_psn)
);

/* The RNR timer expired: the requester may send again. */
DEFINE_EVENT(sib_qp_timer_class, sib_rnr_timer,
	TP_PROTO(struct sib_qp *qp),
	TP_ARGS(qp)
);

/* The local ACK timeout expired with requests outstanding. */
DEFINE_EVENT(sib_qp_timer_class, sib_ack_timeout,
	TP_PROTO(struct sib_qp *qp),
	TP_ARGS(qp)
);

/* ---- end-to-end credits ------------------------------------------------ */

DECLARE_EVENT_CLASS(sib_credit_class,
	TP_PROTO(struct sib_qp *qp, u32 ssn),
	TP_ARGS(qp, ssn),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, ssn)
		__field(u32, lsn)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->ssn = ssn;
		__entry->lsn = qp->req.lsn;
	),
	TP_printk("dev=%s qpn=%u ssn=%u lsn=%u", __get_str(dev),
		  __entry->qpn, __entry->ssn, __entry->lsn)
);

/* A message that takes a receive WQE waits for credit. */
DEFINE_EVENT(sib_credit_class, sib_credit_stall,
	TP_PROTO(struct sib_qp *qp, u32 ssn),
	TP_ARGS(qp, ssn)
);

/* No update came in time: the limited WQE goes as a probe. */
DEFINE_EVENT(sib_credit_class, sib_credit_probe,
	TP_PROTO(struct sib_qp *qp, u32 ssn),
	TP_ARGS(qp, ssn)
);

/* An ACK raised the limit (lsn is the new one). */
DEFINE_EVENT(sib_credit_class, sib_credit_update_rcvd,
	TP_PROTO(struct sib_qp *qp, u32 ssn),
	TP_ARGS(qp, ssn)
);

/* The responder of a starved RQ sends an unsolicited ACK with credits. */
TRACE_EVENT(sib_credit_update_sent,
	TP_PROTO(struct sib_qp *qp, u8 code),
	TP_ARGS(qp, code),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, msn)
		__field(u32, credits)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->msn = qp->resp.msn & SIB_PSN_MASK;
		__entry->credits = sib_credit_count(code);
	),
	TP_printk("dev=%s qpn=%u msn=%u credits=%u", __get_str(dev),
		  __entry->qpn, __entry->msn, __entry->credits)
);

/* ---- QP states and fault injection ------------------------------------- */

TRACE_EVENT(sib_qp_state,
	TP_PROTO(struct sib_qp *qp, enum ib_qp_state old, enum ib_qp_state new,
		 bool engine),
	TP_ARGS(qp, old, new, engine),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(qp->sdev)
		__field(u32, qpn)
		__field(u32, old)
		__field(u32, new)
		__field(bool, engine)
	),
	TP_fast_assign(
		SIB_DEV_ASSIGN(qp->sdev);
		__entry->qpn = sib_qpn(qp);
		__entry->old = old;
		__entry->new = new;
		__entry->engine = engine;
	),
	TP_printk("dev=%s qpn=%u %s -> %s by=%s", __get_str(dev),
		  __entry->qpn, sib_qp_state_name(__entry->old),
		  sib_qp_state_name(__entry->new),
		  __entry->engine ? "engine" : "modify_qp")
);

TRACE_EVENT(sib_fault,
	TP_PROTO(struct sib_fault *f, struct sk_buff *skb, unsigned int action,
		 u32 dir),
	TP_ARGS(f, skb, action, dir),
	TP_STRUCT__entry(
		SIB_DEV_ENTRY(f->sdev)
		__field(u32, dqpn)
		__field(u32, psn)
		__field(u32, action)
		__field(u8, opcode)
		__field(u8, dir)
	),
	TP_fast_assign(
		const struct sib_pkt *pkt = sib_pkt(skb);

		SIB_DEV_ASSIGN(f->sdev);
		__entry->dqpn = pkt->qpn;
		__entry->psn = pkt->psn;
		__entry->action = action;
		__entry->opcode = pkt->opcode;
		__entry->dir = dir;
	),
	TP_printk("dev=%s dqpn=%u op=%s psn=%u action=%s dir=%s",
		  __get_str(dev), __entry->dqpn,
		  sib_opcode_name(__entry->opcode), __entry->psn,
		  __print_symbolic(__entry->action, sib_show_faults),
		  __entry->dir == (SIB_FAULT_TX | SIB_FAULT_RX) ? "local" :
		  __entry->dir == SIB_FAULT_TX ? "tx" : "rx")
);

#endif /* SIB_TRACE_H */

/* Out of the kernel tree: the header is found through -I$(src). */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE sib_trace
#include <trace/define_trace.h>
