// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the requester's two timers, the local ACK timeout (IBA 9.7.6.1.3)
 * and the RNR back-off (9.7.5.2.8). They run in softirq and only flag the
 * engine and schedule it; the completer acts on them (sib_comp_timers()).
 */
#include "sib_qp.h"
#include "sib_task.h"
#include "sib_timer.h"

/*
 * The local ACK timer is lazy. The engine only moves a deadline
 * (@retrans_due) and switches it on and off (@retrans_on); the timer_list
 * stays armed, and when it expires before the deadline it re-arms itself
 * for it. Each message used to cost two or three timer operations (a lock
 * with interrupts off each): arm, restart on the ACK, delete.
 */
static void sib_timer_start(struct sib_qp *qp)
{
	unsigned long due = jiffies +
			    nsecs_to_jiffies(4096ULL << qp->attr.timeout) + 1;

	WRITE_ONCE(qp->retrans_due, due);
	WRITE_ONCE(qp->retrans_on, true);
	if (!timer_pending(&qp->retrans_timer) ||
	    time_after(READ_ONCE(qp->retrans_timer.expires), due))
		mod_timer(&qp->retrans_timer, due);
}

void sib_timer_arm(struct sib_qp *qp)
{
	if (sib_qp_type(qp) != IB_QPT_RC || !qp->attr.timeout)
		return;		/* timeout 0 means infinite (IBA 9.7.6.1.3) */
	if (!qp->retrans_on)
		sib_timer_start(qp);
}

void sib_timer_restart(struct sib_qp *qp)
{
	if (qp->attr.timeout)
		sib_timer_start(qp);
}

void sib_timer_stop(struct sib_qp *qp)
{
	WRITE_ONCE(qp->retrans_on, false);
}

void sib_retrans_timer(struct timer_list *t)
{
	struct sib_qp *qp = sib_timer_container_of(qp, t, retrans_timer);
	unsigned long due = READ_ONCE(qp->retrans_due);

	if (!READ_ONCE(qp->retrans_on) || READ_ONCE(qp->destroying))
		return;
	if (time_before(jiffies, due)) {
		mod_timer(t, due);
		return;
	}
	set_bit(SIB_QP_RETRANS_FIRED, &qp->events);
	sib_qp_sched(qp);
}

/*
 * An expiry counts if the deadline, as the engine knows it, has passed:
 * the timer may have read a deadline just before the engine moved it.
 * Otherwise the timer waits for the new deadline.
 */
bool sib_timer_expired(struct sib_qp *qp)
{
	if (!qp->retrans_on)
		return false;
	if (!time_before(jiffies, qp->retrans_due))
		return true;
	if (!timer_pending(&qp->retrans_timer))
		mod_timer(&qp->retrans_timer, qp->retrans_due);
	return false;
}

void sib_rnr_timer(struct timer_list *t)
{
	struct sib_qp *qp = sib_timer_container_of(qp, t, rnr_timer);

	set_bit(SIB_QP_RNR_FIRED, &qp->events);
	sib_qp_sched(qp);
}
