// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: fault injection. Per device, packets leaving (tx) or arriving (rx)
 * can be dropped, duplicated, reordered, delayed or corrupted with given
 * probabilities, chosen per opcode class, from a seeded generator so that
 * a run can be repeated. The controls live in debugfs:
 *
 *   /sys/kernel/debug/sib/<ibdev>/fault/
 *     active                           master switch (0 or 1)
 *     drop dup reorder delay corrupt   probability, parts per million
 *     delay_us                         how long a delayed packet waits
 *     dir                              1 = tx, 2 = rx, 3 = both
 *     classes                          opcode classes (enum sib_fault_class)
 *     seed                             writing it restarts the sequence
 *     injected_{drop,dup,...}          how many faults were injected
 *     lookup_delay_us                  a test hook: QP and SRQ lookups
 *                                      wait this long before they take
 *                                      their reference
 *
 * Documentation/fault-injection.md explains the choice of debugfs.
 */
#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/prandom.h>
#include <linux/slab.h>

#include "sib_pkt.h"
#include "sib_qp.h"
#include "sib_fault.h"
#include "sib_trace.h"

static struct dentry *sib_debugfs_root;

static u32 sib_fault_class(struct sk_buff *skb)
{
	u32 f = sib_pkt(skb)->flags;

	if (f & SIB_OP_ACK)
		return SIB_FC_ACK;
	if (f & SIB_OP_RESP)
		return SIB_FC_RESP;
	if (f & (SIB_OP_READ | SIB_OP_ATOMIC))
		return SIB_FC_RDATOMIC;
	if (f & SIB_OP_WRITE)
		return SIB_FC_WRITE;
	return SIB_FC_SEND;
}

/* True with probability @ppm / 10^6; called under f->lock. */
static bool sib_fault_roll(struct sib_fault *f, u32 ppm)
{
	lockdep_assert_held(&f->lock);
	return ppm && prandom_u32_state(&f->rnd) % 1000000 < ppm;
}

/*
 * Release the delayed packets that are due, in order; wait again for the
 * next one. Each packet waits its own delay_us, however many follow it.
 */
static void sib_fault_release(struct timer_list *t)
{
	struct sib_fault *f = sib_timer_container_of(f, t, timer);
	struct sk_buff_head due;
	struct sk_buff *skb;
	unsigned long flags;

	__skb_queue_head_init(&due);
	spin_lock_irqsave(&f->lock, flags);
	while ((skb = skb_peek(&f->delayed)) &&
	       time_after_eq(jiffies, sib_pkt(skb)->due)) {
		__skb_unlink(skb, &f->delayed);
		__skb_queue_tail(&due, skb);
	}
	if (skb && !f->dying)
		mod_timer(&f->timer, sib_pkt(skb)->due);
	spin_unlock_irqrestore(&f->lock, flags);
	while ((skb = __skb_dequeue(&due)))
		f->deliver(f->sdev, skb);
}

/* Nothing came after a held packet in time: let it go on its own. */
static void sib_fault_release_held(struct timer_list *t)
{
	struct sib_fault *f = sib_timer_container_of(f, t, held_timer);
	struct sk_buff *held;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	held = f->held;
	f->held = NULL;
	spin_unlock_irqrestore(&f->lock, flags);
	if (held)
		f->deliver(f->sdev, held);
}

/**
 * sib_fault_apply - let the configured faults act on a packet
 * @f:		the device's fault state
 * @dir:	SIB_FAULT_TX or SIB_FAULT_RX
 * @skb:	the packet (its sib_pkt filled in)
 * @extra:	set to a second packet to deliver after the returned one
 *		(a duplicate, or the packet held back for reordering), or NULL
 * @can_hold:	reordering and delay may keep the packet (f->deliver can
 *		deliver it later); otherwise only drop, dup and corrupt act
 *
 * Context: any; takes @f->lock with irqsave.
 *
 * Return: the packet to deliver now (possibly with a held-back one or a
 * duplicate to deliver after it in *@extra), or NULL when the fault layer
 * took it (dropped, held for reordering, or delayed).
 */
struct sk_buff *sib_fault_apply(struct sib_fault *f, u32 dir,
				struct sk_buff *skb, struct sk_buff **extra,
				bool can_hold)
{
	struct sk_buff *out = skb;
	unsigned long flags;

	*extra = NULL;
	if (!READ_ONCE(f->active))
		return skb;

	spin_lock_irqsave(&f->lock, flags);
	if (!(READ_ONCE(f->dir) & dir) ||
	    !(READ_ONCE(f->classes) & sib_fault_class(skb)))
		goto out;
	if (sib_fault_roll(f, READ_ONCE(f->drop))) {
		f->injected[SIB_FI_DROP]++;
		trace_sib_fault(f, skb, SIB_FI_DROP, dir);
		out = NULL;
		kfree_skb(skb);
		goto out;
	}
	if (sib_fault_roll(f, READ_ONCE(f->corrupt))) {
		/*
		 * Corrupted on the link: the receiver's ICRC check fails.
		 * The wire path flips a bit of the ICRC it sends; the local
		 * path, which has no ICRC, drops it as an ICRC error.
		 */
		f->injected[SIB_FI_CORRUPT]++;
		trace_sib_fault(f, skb, SIB_FI_CORRUPT, dir);
		sib_pkt(skb)->corrupt = true;
	}
	if (sib_fault_roll(f, READ_ONCE(f->dup))) {
		*extra = skb_copy(skb, GFP_ATOMIC);
		if (*extra) {
			f->injected[SIB_FI_DUP]++;
			trace_sib_fault(f, skb, SIB_FI_DUP, dir);
		}
	}
	if (!can_hold || f->dying)
		goto out;
	if (sib_fault_roll(f, READ_ONCE(f->delay))) {
		f->injected[SIB_FI_DELAY]++;
		trace_sib_fault(f, skb, SIB_FI_DELAY, dir);
		sib_pkt(skb)->due = jiffies + usecs_to_jiffies(READ_ONCE(f->delay_us));
		__skb_queue_tail(&f->delayed, skb);
		if (!timer_pending(&f->timer))
			mod_timer(&f->timer, sib_pkt(skb)->due);
		out = *extra;
		*extra = NULL;
		goto out;
	}
	if (!f->held && sib_fault_roll(f, READ_ONCE(f->reorder))) {
		/* Hold this one back: it goes after the next packet. */
		f->injected[SIB_FI_REORDER]++;
		trace_sib_fault(f, skb, SIB_FI_REORDER, dir);
		f->held = skb;
		mod_timer(&f->held_timer, jiffies + 1);
		out = *extra;
		*extra = NULL;
		goto out;
	}
	if (f->held && !*extra) {
		*extra = f->held;
		f->held = NULL;
	}
out:
	spin_unlock_irqrestore(&f->lock, flags);
	return out;
}

/*
 * Free what the fault layer holds. From sib_fault_fini(), once @dying is
 * set, so that no packet on another CPU can be held, or a timer armed,
 * after the timers are stopped. From sib_fault_active_set() when the
 * switch goes off, @dying stays clear: a packet that another CPU is in
 * sib_fault_apply() with may still be held or delayed after this, and
 * the timer that it arms releases it.
 */
static void sib_fault_flush(struct sib_fault *f)
{
	struct sk_buff_head gone;
	struct sk_buff *held;
	unsigned long flags;

	__skb_queue_head_init(&gone);
	timer_delete_sync(&f->timer);
	timer_delete_sync(&f->held_timer);
	spin_lock_irqsave(&f->lock, flags);
	held = f->held;
	f->held = NULL;
	/* @delayed is guarded by @lock, not by its own queue lock */
	skb_queue_splice_init(&f->delayed, &gone);
	spin_unlock_irqrestore(&f->lock, flags);
	kfree_skb(held);
	__skb_queue_purge(&gone);
}

static int sib_fault_seed_set(void *data, u64 val)
{
	struct sib_fault *f = data;
	unsigned long flags;

	spin_lock_irqsave(&f->lock, flags);
	WRITE_ONCE(f->seed, val);
	prandom_seed_state(&f->rnd, val);
	spin_unlock_irqrestore(&f->lock, flags);
	return 0;
}

static int sib_fault_seed_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct sib_fault *)data)->seed);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sib_fault_seed_fops, sib_fault_seed_get,
			 sib_fault_seed_set, "%llu\n");

/*
 * A probability, delay_us, dir or classes knob: a single store, which
 * sib_fault_apply() sees at its next packet (it reads each knob once,
 * with READ_ONCE(), under f->lock, which the store does not take). @active
 * is a knob of its own (sib_fault_active_set()).
 */
static int sib_fault_knob_set(void *data, u64 val)
{
	u32 *knob = data;

	WRITE_ONCE(*knob, val);
	return 0;
}

static int sib_fault_knob_get(void *data, u64 *val)
{
	*val = READ_ONCE(*(u32 *)data);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sib_fault_knob_fops, sib_fault_knob_get,
			 sib_fault_knob_set, "%llu\n");

static int sib_fault_active_set(void *data, u64 val)
{
	struct sib_fault *f = data;

	WRITE_ONCE(f->active, !!val);
	if (!val)
		sib_fault_flush(f);
	return 0;
}

static int sib_fault_active_get(void *data, u64 *val)
{
	*val = READ_ONCE(((struct sib_fault *)data)->active);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sib_fault_active_fops, sib_fault_active_get,
			 sib_fault_active_set, "%llu\n");

void sib_fault_lookup_wait(u32 us)
{
	if (us >= 1000)
		mdelay(us / 1000);
	udelay(us % 1000);
}

static int sib_fault_lookup_delay_set(void *data, u64 val)
{
	if (val > SIB_FAULT_LOOKUP_DELAY_MAX)
		return -EINVAL;
	WRITE_ONCE(*(u32 *)data, val);
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(sib_fault_lookup_delay_fops, sib_fault_knob_get,
			 sib_fault_lookup_delay_set, "%llu\n");

static const char * const sib_fi_names[SIB_FI_NUM] = {
	[SIB_FI_DROP] = "injected_drop",
	[SIB_FI_DUP] = "injected_dup",
	[SIB_FI_REORDER] = "injected_reorder",
	[SIB_FI_DELAY] = "injected_delay",
	[SIB_FI_CORRUPT] = "injected_corrupt",
};

static void sib_fault_debugfs(struct sib_fault *f, const char *name)
{
	struct dentry *dir;
	int i;

	f->dir_dentry = debugfs_create_dir(name, sib_debugfs_root);
	dir = debugfs_create_dir("fault", f->dir_dentry);
	debugfs_create_file("active", 0600, dir, f, &sib_fault_active_fops);
	debugfs_create_file("drop", 0600, dir, &f->drop, &sib_fault_knob_fops);
	debugfs_create_file("dup", 0600, dir, &f->dup, &sib_fault_knob_fops);
	debugfs_create_file("reorder", 0600, dir, &f->reorder,
			    &sib_fault_knob_fops);
	debugfs_create_file("delay", 0600, dir, &f->delay,
			    &sib_fault_knob_fops);
	debugfs_create_file("corrupt", 0600, dir, &f->corrupt,
			    &sib_fault_knob_fops);
	debugfs_create_file("delay_us", 0600, dir, &f->delay_us,
			    &sib_fault_knob_fops);
	debugfs_create_file("dir", 0600, dir, &f->dir, &sib_fault_knob_fops);
	debugfs_create_file("classes", 0600, dir, &f->classes,
			    &sib_fault_knob_fops);
	debugfs_create_file("seed", 0600, dir, f, &sib_fault_seed_fops);
	debugfs_create_file("lookup_delay_us", 0600, dir, &f->lookup_delay_us,
			    &sib_fault_lookup_delay_fops);
	for (i = 0; i < SIB_FI_NUM; i++)
		debugfs_create_u64(sib_fi_names[i], 0400, dir, &f->injected[i]);
}

void sib_fault_init(struct sib_fault *f, struct sib_dev *sdev,
		    const char *name,
		    void (*deliver)(struct sib_dev *, struct sk_buff *))
{
	memset(f, 0, sizeof(*f));
	spin_lock_init(&f->lock);
	skb_queue_head_init(&f->delayed);
	timer_setup(&f->timer, sib_fault_release, 0);
	timer_setup(&f->held_timer, sib_fault_release_held, 0);
	f->sdev = sdev;
	f->deliver = deliver;
	f->dir = SIB_FAULT_TX;
	f->classes = SIB_FC_ALL;
	f->delay_us = 1000;
	f->seed = 1;
	prandom_seed_state(&f->rnd, f->seed);
	sib_fault_debugfs(f, name);
}

void sib_fault_fini(struct sib_fault *f)
{
	unsigned long flags;

	debugfs_remove_recursive(f->dir_dentry);
	WRITE_ONCE(f->active, false);
	spin_lock_irqsave(&f->lock, flags);
	f->dying = true;
	spin_unlock_irqrestore(&f->lock, flags);
	sib_fault_flush(f);
}

void sib_fault_module_init(void)
{
	sib_debugfs_root = debugfs_create_dir("sib", NULL);
}

void sib_fault_module_exit(void)
{
	debugfs_remove_recursive(sib_debugfs_root);
}
