// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: running a QP's engines, the rxe_task.c of sib: who runs the
 * requester, the responder and the completer (sib_req.c, sib_resp.c,
 * sib_comp.c), when, and in which context.
 *
 * Execution model. A QP's engines run under its @engine mutex, which
 * guards all engine state (struct sib_req, sib_comp, sib_resp and the SQ
 * shadow). A pass drains the QP's input packet queue (requests to the
 * responder, responses to the completer), then runs the requester. The
 * engines run wherever work appears, if they can: in the doorbell system
 * call of a user QP, or, once the engine of the QP that just delivered a
 * packet has let go, in that same context (sib_qp_drive(): one engine
 * at a time, never one nested inside another; sib_qp_kick() only
 * try-locks, so two QPs never wait for each other); otherwise the QP's
 * work item on sib_wq runs them. A pending
 * bit makes whoever holds the mutex run another pass, so nothing is lost
 * to a failed try-lock: every holder looks at the bit after it unlocks
 * (sib_qp_unlock(), sib_modify_qp()), and the work item only try-locks
 * too. Timers (softirq) only set bits and queue the work.
 * Everything else reaches a QP by queueing a packet and kicking it.
 *
 * Locking. Here the engines run with qp->engine held, taken by a
 * try-lock everywhere but in sib_qp_run_sync(); nothing here holds two
 * QPs' engines at once. @events changes by atomic bit operations from any
 * context, and each barrier that orders it says which one it pairs with.
 */
#include <linux/sched/clock.h>
#include <linux/sched/stat.h>

#include "sib_comp.h"
#include "sib_flush.h"
#include "sib_main.h"
#include "sib_net.h"
#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_req.h"
#include "sib_resp.h"
#include "sib_resp_credit.h"
#include "sib_resp_rd.h"
#include "sib_task.h"

/*
 * Run the engines later, from sib_wq (any context). From the engines
 * themselves (a requester out of budget, an error), the pending bit is
 * enough: the running task makes another pass before it lets go, and
 * hands over to sib_wq only after SIB_RUN_LOOPS passes (sib_qp_unlock()).
 */
void sib_qp_sched(struct sib_qp *qp)
{
	set_bit(SIB_QP_PENDING, &qp->events);
	if (READ_ONCE(qp->runner) == current)
		return;
	if (!READ_ONCE(qp->destroying))
		queue_work(sib_wq, &qp->work);
}

/* ---- the engines -------------------------------------------------------- */

#define SIB_RX_BUDGET	256
#define SIB_RUN_LOOPS	8

/*
 * The next input packet, or NULL. Only the engine dequeues, so an empty
 * queue seen without the lock is empty for this pass: a packet queued
 * meanwhile sets the pending bit, and the engines run again. Most passes
 * find the queue empty at least once, and under TCG the unlock that
 * turns interrupts back on was among the costliest steps of a small
 * message's chain (Documentation/performance.md).
 */
static struct sk_buff *sib_rxq_next(struct sib_qp *qp)
{
	if (skb_queue_empty_lockless(&qp->rxq))
		return NULL;
	return skb_dequeue(&qp->rxq);
}

/**
 * sib_pass_add - park @qp on @d, to run once its owner holds no engine
 * @d:	the pass of the engines' run in progress (see sib_qp_drive())
 * @qp:	the QP, with a reference that @d takes over
 *
 * A QP parked already and not yet taken keeps its one entry (the extra
 * reference is dropped). Entries already taken (before @d->head) make
 * room when @d is full.
 *
 * Return: true if @qp is parked; false if @d is full (the caller keeps
 * its reference).
 */
bool sib_pass_add(struct sib_pass *d, struct sib_qp *qp)
{
	unsigned int i;

	for (i = d->head; i < d->n; i++) {
		if (d->qp[i] == qp) {
			sib_qp_put(qp);
			return true;
		}
	}
	if (d->n >= SIB_PASS_QP_MAX && d->head) {
		d->n -= d->head;
		memmove(d->qp, d->qp + d->head, d->n * sizeof(d->qp[0]));
		d->head = 0;
	}
	if (d->n >= SIB_PASS_QP_MAX)
		return false;
	d->qp[d->n++] = qp;
	return true;
}

/* Park @qp itself on @d, behind the QPs there; false if @d is full. */
static bool sib_pass_add_self(struct sib_qp *qp, struct sib_pass *d)
{
	if (!refcount_inc_not_zero(&qp->ref))
		return true;	/* being destroyed: nothing to run */
	if (sib_pass_add(d, qp))
		return true;
	sib_qp_put(qp);
	return false;
}

/*
 * A READ is still being answered: go on after the QPs this pass
 * delivered to (the requester, on the local path, whose input queue the
 * responses fill), not before them: park this QP behind them.
 */
static void sib_qp_yield(struct sib_qp *qp)
{
	if (!sib_pass_add_self(qp, qp->pass))
		sib_qp_sched(qp);
}

/* One pass of the engines. Called with qp->engine held. */
static void __sib_qp_pass(struct sib_qp *qp)
{
	struct sk_buff *skb;
	int budget = SIB_RX_BUDGET;

	lockdep_assert_held(&qp->engine);
	qp->tx_held = false;
	/*
	 * A local burst counts for the packets it stands for. A local ACK
	 * (struct sib_local_ack) goes before the packets queued after it.
	 */
	for (;;) {
		if (READ_ONCE(qp->lack.valid))
			sib_comp_local_ack(qp);
		if (budget <= 0)
			break;
		/* A READ's responses go before any later input. */
		if (qp->resp.rd.active && sib_resp_read_busy(qp))
			break;
		skb = sib_rxq_next(qp);
		if (!skb)
			break;
		budget -= sib_pkt(skb)->npkts;
		if (sib_pkt(skb)->flags & SIB_OP_REQ)
			sib_responder(qp, skb);
		else
			sib_completer(qp, skb);
	}
	if ((qp->events & BIT(SIB_QP_CREDIT_UPDATE)) &&
	    test_and_clear_bit(SIB_QP_CREDIT_UPDATE, &qp->events))
		sib_resp_credit_update(qp);
	/* After the input: a response that came in time cancels a timeout. */
	if (qp->events & (BIT(SIB_QP_RETRANS_FIRED) | BIT(SIB_QP_RNR_FIRED)))
		sib_comp_timers(qp);
	switch (sib_qp_state(qp)) {
	case IB_QPS_ERR:
		sib_qp_flush(qp);
		break;
	case IB_QPS_RTS:
	case IB_QPS_SQD:
		sib_requester(qp);
		break;
	case IB_QPS_RESET:
		skb_queue_purge(&qp->rxq);
		return;
	default:
		break;
	}
	/* A READ held back waits for tx_timer, with the input behind it. */
	if (qp->tx_held && qp->resp.rd.active)
		return;
	if (qp->resp.rd.active)
		sib_qp_yield(qp);
	if (!skb_queue_empty(&qp->rxq) || READ_ONCE(qp->lack.valid))
		set_bit(SIB_QP_PENDING, &qp->events);
}

/*
 * One pass, with @d for the packets it sends: the QPs that it delivers
 * local packets to are parked on @d, each once, and run after this QP's
 * engines are released (sib_pass_drain()): the receiving engine then
 * takes all of them in one run, instead of one run (lock, pass, unlock)
 * per packet. The RoCEv2 packets it batched go out before the pass ends.
 */
static void sib_qp_pass(struct sib_qp *qp, struct sib_pass *d)
{
	lockdep_assert_held(&qp->engine);
	qp->pass = d;
	__sib_qp_pass(qp);
	qp->pass = NULL;
	sib_pass_tx(d);
}

/*
 * Doorbell suppression (see the uapi header): while the engines run, the
 * SQ's kpoll word tells the process that a doorbell is not needed. Set
 * when the engines start; the producer index seen then is remembered.
 */
static void sib_kpoll_set(struct sib_qp *qp)
{
	struct sib_ring_hdr *hdr = qp->sq.hdr;

	if (!hdr || !sib_qp_is_user(qp))
		return;
	WRITE_ONCE(hdr->kpoll, 1);
	/* Pairs with the process' barrier between its prod store and kpoll load. */
	smp_mb();
	qp->kpoll_prod = READ_ONCE(hdr->prod);
}

/*
 * Clear kpoll before the engines stop, then look at the producer index
 * once more: a WQE the process posted without a doorbell while kpoll was
 * set is seen here, and makes the engines run again.
 */
static void sib_kpoll_clear(struct sib_qp *qp)
{
	struct sib_ring_hdr *hdr = qp->sq.hdr;
	u32 prod;

	if (!hdr || !sib_qp_is_user(qp))
		return;
	WRITE_ONCE(hdr->kpoll, 0);
	/* Pairs with the process' barrier between its prod store and kpoll load. */
	smp_mb();
	prod = READ_ONCE(hdr->prod);
	if (prod != qp->kpoll_prod) {
		qp->kpoll_prod = prod;
		set_bit(SIB_QP_PENDING, &qp->events);
	}
}

/*
 * Run the engines until nothing is pending, a bounded number of passes.
 * Called with qp->engine held; sib_qp_unlock() deals with what is left.
 */
static void sib_qp_run(struct sib_qp *qp, struct sib_pass *d)
{
	int loops = SIB_RUN_LOOPS;

	lockdep_assert_held(&qp->engine);
	WRITE_ONCE(qp->runner, current);
	sib_kpoll_set(qp);

	while (loops-- && test_and_clear_bit(SIB_QP_PENDING, &qp->events)) {
		if (READ_ONCE(qp->destroying))
			return;
		sib_qp_pass(qp, d);
		/* Let the QPs it delivered to run first (sib_qp_unlock()). */
		if (d->n > d->head)
			break;
	}
}

/*
 * Release the engines. Someone may have set the pending bit while we held
 * them, and left the work to us (see sib_qp_kick()): look again after
 * unlocking, and run again if we can take the lock back. If we cannot,
 * whoever took it looks at the pending bit when they unlock (every holder
 * of qp->engine does, see sib_modify_qp()): no worker is woken for that.
 * Such a worker only found the engines busy, or ran them late: it waits
 * for a CPU that busy-polling processes hold.
 */
static void sib_qp_unlock(struct sib_qp *qp, struct sib_pass *d)
{
	int loops = SIB_RUN_LOOPS;

	for (;;) {
		sib_kpoll_clear(qp);
		WRITE_ONCE(qp->runner, NULL);
		mutex_unlock(&qp->engine);
		/* Pairs with the barrier after set_bit() in sib_qp_kick(). */
		smp_mb();
		if (!test_bit(SIB_QP_PENDING, &qp->events) ||
		    READ_ONCE(qp->destroying))
			return;
		if (!loops--) {
			sib_qp_sched(qp);
			return;
		}
		/*
		 * QPs that the last pass delivered to wait on @d: they go
		 * first, and this QP runs again after them, as on a wire
		 * the peer answers between two bursts of the sender.
		 */
		if (d->n > d->head && sib_pass_add_self(qp, d))
			return;
		if (!mutex_trylock(&qp->engine))
			return;
		sib_qp_run(qp, d);
	}
}

/* Engine runs that one caller makes for the QPs parked on its pass. */
#define SIB_DRAIN_RUNS	64

/*
 * Run the engines of the QPs parked on @d, one after the other, in the
 * order they were parked, never one inside another: the caller holds no
 * engine. Their passes may park more QPs on @d (the peer of a ping-pong,
 * the next QP of a chain, a QP that yields to its peer), which this loop
 * takes too, up to SIB_DRAIN_RUNS runs; the rest go to sib_wq. A QP
 * whose engines someone else holds is theirs to run: they see its
 * pending bit when they unlock. Consumes the references parked on @d.
 */
static void sib_pass_drain(struct sib_pass *d)
{
	unsigned int runs = SIB_DRAIN_RUNS;
	struct sib_qp *qp;

	while (d->head < d->n) {
		qp = d->qp[d->head++];
		set_bit(SIB_QP_PENDING, &qp->events);
		/* Pairs with the barrier in sib_qp_unlock(). */
		smp_mb__after_atomic();
		if (READ_ONCE(qp->destroying)) {
			/* nothing: destroy waits for our reference */
		} else if (!runs) {
			queue_work(sib_wq, &qp->work);
		} else if (mutex_trylock(&qp->engine)) {
			runs--;
			sib_qp_run(qp, d);
			sib_qp_unlock(qp, d);
		}
		sib_qp_put(qp);
	}
	d->head = 0;
	d->n = 0;
}

/*
 * Run @qp's engines, whose mutex the caller took, release them, then run
 * the engines of the QPs they delivered to (sib_pass_drain()). Every
 * run of the engines starts here, so no engine ever runs nested inside
 * another, however the QPs chain: the kernel stack holds one engine.
 */
static void sib_qp_drive(struct sib_qp *qp)
{
	struct sib_pass d = { .n = 0, .head = 0, .ntx = 0 };

	sib_qp_run(qp, &d);
	sib_qp_unlock(qp, &d);
	sib_pass_drain(&d);
}

/*
 * Run the engines now, in the caller's context, if nobody else is running
 * them; if someone is, they see the pending bit when they unlock and run
 * another pass, so no wake-up of a worker is needed. The caller must be
 * able to sleep and must hold no QP's engines: a system call on behalf of
 * a user QP. From softirq, the work goes to sib_wq.
 */
void sib_qp_kick(struct sib_qp *qp)
{
	set_bit(SIB_QP_PENDING, &qp->events);
	/* Pairs with the barrier in sib_qp_unlock(). */
	smp_mb__after_atomic();
	if (READ_ONCE(qp->destroying))
		return;
	if (!in_task()) {
		queue_work(sib_wq, &qp->work);
		return;
	}
	if (!mutex_trylock(&qp->engine))
		return;
	sib_qp_drive(qp);
}

/* Run the engines now, waiting for anyone running them. */
void sib_qp_run_sync(struct sib_qp *qp)
{
	set_bit(SIB_QP_PENDING, &qp->events);
	mutex_lock(&qp->engine);
	sib_qp_drive(qp);
}

/* How long sib_qp_run_out() retries engines that cannot send yet */
#define SIB_RUN_OUT_MS	100

/**
 * sib_qp_run_out - let a QP that can send execute what its SQ holds
 * @qp: the QP, about to be destroyed or to lose an AH its WQEs name
 *
 * Process context, holding no engine. A NIC has fetched and sent what
 * a doorbell told it of by the time its firmware destroys the QP, or
 * the address handle a datagram names (it copies the address vector
 * into the WQE), and programs count on it: rdma-core's mckey posts its
 * datagrams, then destroys its AH and its QP without waiting for a
 * completion. On sib, the posts of a streak go without doorbells while
 * kpoll promises that a worker runs the engines, and that worker may
 * not have had a CPU yet. So the engines run here, in the caller: what
 * the SQ holds goes out, and the sends that need an answer (RC) get
 * none. Engines held back by a full receive backlog (sib_wire_busy())
 * or out of passes run again a jiffy later, for up to SIB_RUN_OUT_MS.
 */
void sib_qp_run_out(struct sib_qp *qp)
{
	unsigned long end = jiffies + msecs_to_jiffies(SIB_RUN_OUT_MS);
	enum ib_qp_state state;

	might_sleep();
	for (;;) {
		state = sib_qp_state(qp);
		if (state != IB_QPS_RTS && state != IB_QPS_SQD)
			return;
		sib_qp_run_sync(qp);
		if (!READ_ONCE(qp->tx_held) &&
		    !test_bit(SIB_QP_PENDING, &qp->events))
			return;
		if (time_after(jiffies, end))
			return;
		schedule_timeout_uninterruptible(1);
	}
}

void sib_qp_work(struct work_struct *work)
{
	struct sib_qp *qp = container_of(work, struct sib_qp, work);

	/* A holder of the engines sees the pending bit when it unlocks. */
	if (READ_ONCE(qp->destroying) || !mutex_trylock(&qp->engine))
		return;
	sib_qp_drive(qp);
}

/* How long streaming doorbells run inline after the worker found no idle CPU */
#define SIB_ASYNC_BACKOFF_MS	20
/* ... at most, after the worker came late several times in a row */
#define SIB_ASYNC_BACKOFF_MAX_MS 640
/*
 * A worker that starts this long after its doorbell came late: its vCPU
 * (or CPU) was not free to run it, for instance on a host whose other
 * tasks take the CPU that runs the guest's vCPU. Running the engines in
 * the poster's own call costs about 10 us of a small message's chain.
 */
#define SIB_ASYNC_LATE_NS	(200 * NSEC_PER_USEC)

/*
 * Did the worker of a streaming doorbell find a CPU free for it? Not if
 * it runs beside other work (the poster itself, or a process polling
 * there: running here only took the CPU from them), nor if it started
 * late. Then the QP's next streaming doorbells run the engines inline
 * for a while, twice as long for each late start in a row, so that a
 * host that is busy for long costs one late worker per back-off.
 */
static void sib_qp_async_judge(struct sib_qp *qp)
{
	bool late = local_clock() - READ_ONCE(qp->async_queued) >
		    SIB_ASYNC_LATE_NS;
	unsigned int ms = SIB_ASYNC_BACKOFF_MS;

	if (late) {
		sib_count(qp->sdev, SIB_CNT_ASYNC_LATE);
		ms = min_t(unsigned int, SIB_ASYNC_BACKOFF_MS << qp->async_late,
			   SIB_ASYNC_BACKOFF_MAX_MS);
		if (ms < SIB_ASYNC_BACKOFF_MAX_MS)
			qp->async_late++;
	} else {
		qp->async_late = 0;
		if (single_task_running())
			return;
	}
	WRITE_ONCE(qp->async_backoff, jiffies + msecs_to_jiffies(ms));
}

/*
 * The engines of a streaming doorbell (sib_qp_doorbell()). They run
 * either way: kpoll promised it.
 */
void sib_qp_async_work(struct work_struct *work)
{
	struct sib_qp *qp = container_of(work, struct sib_qp, async_work);

	sib_qp_async_judge(qp);
	if (READ_ONCE(qp->destroying) || !mutex_trylock(&qp->engine))
		return;
	sib_qp_drive(qp);
}

static bool sib_async_doorbells = true;
module_param_named(async_doorbells, sib_async_doorbells, bool, 0644);
MODULE_PARM_DESC(async_doorbells,
		 "run the engines of streaming send doorbells on an idle CPU (default: on)");

/*
 * Leave a streaming doorbell's engines to a worker: set kpoll (the
 * process may post without doorbells from now on) and queue the work,
 * whose run clears kpoll and looks at the ring again, as every run of
 * the engines does (sib_qp_unlock()). The worker is unbound and of high
 * priority: the scheduler puts it on an idle CPU if there is one, and
 * the QP's engines then run beside the posting process instead of
 * inside its calls, taking the WQEs it posts meanwhile in one run. If
 * someone runs the engines already, they see the pending bit.
 */
static void sib_qp_kick_async(struct sib_qp *qp)
{
	set_bit(SIB_QP_PENDING, &qp->events);
	/* Pairs with the barrier in sib_qp_unlock(). */
	smp_mb__after_atomic();
	if (READ_ONCE(qp->destroying) || !mutex_trylock(&qp->engine))
		return;
	sib_kpoll_set(qp);
	mutex_unlock(&qp->engine);
	sib_count(qp->sdev, SIB_CNT_ASYNC_DOORBELLS);
	/* the first doorbell of those the worker takes in one run */
	if (!work_pending(&qp->async_work))
		WRITE_ONCE(qp->async_queued, local_clock());
	queue_work(sib_async_wq, &qp->async_work);
}

/*
 * A user QP's doorbell, from a legacy POST_SEND/POST_RECV command or from
 * the doorbell file (sib_db.c): the WQEs are in the ring already. A send
 * doorbell runs the engines in the caller, or, with @stream (the process
 * is posting a streak, SIB_DB_F_STREAM) and unless a worker lately found
 * no idle CPU for this QP, on a worker. Receives posted in the error
 * state are flushed at once; receives posted to a starved RQ send a
 * credit update; otherwise an RQ doorbell does nothing.
 */
void sib_qp_doorbell(struct sib_qp *qp, bool rq, bool stream)
{
	if (!rq) {
		sib_count(qp->sdev, SIB_CNT_DOORBELLS);
		if (stream && READ_ONCE(sib_async_doorbells) &&
		    time_after_eq(jiffies, READ_ONCE(qp->async_backoff)))
			sib_qp_kick_async(qp);
		else
			sib_qp_kick(qp);
		return;
	}
	if (sib_rq_posted(qp) || sib_qp_state(qp) == IB_QPS_ERR)
		sib_qp_kick(qp);
}
