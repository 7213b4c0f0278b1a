/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: fault injection (see sib_fault.c for the debugfs interface).
 */
#ifndef SIB_FAULT_H
#define SIB_FAULT_H

#include <linux/prandom.h>
#include <linux/skbuff.h>
#include <linux/timer.h>

struct sib_dev;

enum {
	SIB_FAULT_TX = 1,
	SIB_FAULT_RX = 2,
};

/* Opcode classes a fault applies to (the "classes" knob, a bit mask). */
enum sib_fault_class {
	SIB_FC_SEND = 1 << 0,		/* SEND requests */
	SIB_FC_WRITE = 1 << 1,		/* RDMA WRITE requests */
	SIB_FC_RDATOMIC = 1 << 2,	/* RDMA READ and atomic requests */
	SIB_FC_RESP = 1 << 3,		/* READ responses, atomic ACKs */
	SIB_FC_ACK = 1 << 4,		/* ACKs and NAKs */
	SIB_FC_ALL = 0x1f,
};

enum sib_fault_injected {
	SIB_FI_DROP,
	SIB_FI_DUP,
	SIB_FI_REORDER,
	SIB_FI_DELAY,
	SIB_FI_CORRUPT,
	SIB_FI_NUM
};

/**
 * struct sib_fault - a device's fault injection state
 * @lock:	guards the generator (@seed, @rnd), @held, @delayed,
 *		@injected and @dying, and the arming of both timers; taken
 *		with irqsave. The knobs (@drop to @classes) are u32s that
 *		debugfs writes with WRITE_ONCE() without it;
 *		sib_fault_apply() reads each with READ_ONCE() under it
 * @active:	master switch, written with WRITE_ONCE() (debugfs "active",
 *		sib_fault_fini()) and read locklessly on the hot path
 * @drop:	probability that a packet is dropped, in parts per million
 *		(debugfs "drop"; 1000000 or more: every packet)
 * @dup:	probability that a packet is duplicated, in parts per
 *		million; the copy is delivered right after it
 * @reorder:	probability that a packet is held back for reordering
 *		(see @held), in parts per million
 * @delay:	probability that a packet is delayed by @delay_us, in parts
 *		per million
 * @corrupt:	probability that a packet is corrupted, in parts per
 *		million: the wire path sends it with a wrong ICRC, the local
 *		path drops it as an ICRC error
 * @delay_us:	how long a delayed packet is held, in microseconds (rounded
 *		up to whole jiffies); 1000 at first
 * @dir:	where faults act: SIB_FAULT_TX and/or SIB_FAULT_RX;
 *		SIB_FAULT_TX at first
 * @classes:	enum sib_fault_class mask of the opcode classes faults act
 *		on; SIB_FC_ALL at first
 * @seed:	the seed @rnd started from (1 at first); writing debugfs
 *		"seed" reseeds @rnd, so that a run can be repeated. Written
 *		under @lock, read without it by debugfs
 * @rnd:	the pseudo-random generator every roll draws from; under @lock
 * @held:	a packet held back for reordering, or NULL; it goes after the
 *		next packet, or when @held_timer fires if none comes
 * @held_timer:	fires a jiffy after a packet is held and lets @held go on
 *		its own
 * @delayed:	delayed packets, in the order they are due (each one's
 *		sib_pkt.due, in jiffies); manipulated with the unlocked
 *		skb queue helpers under @lock
 * @timer:	releases the packets of @delayed that are due, and re-arms
 *		itself for the next one unless @dying
 * @sdev:	the device, passed to @deliver; constant
 * @deliver:	how released packets continue (the device's delivery for
 *		@dir); called from the timers without @lock; constant
 * @injected:	faults injected so far, by enum sib_fault_injected; counted
 *		under @lock, read without it by debugfs ("injected_*")
 * @dir_dentry:	the device's debugfs directory, sib/<ibdev>, which holds
 *		"objects" (sib_res.c) and "fault/"; removed by sib_fault_fini()
 * @dying:	the device is going away: hold and delay nothing more, so
 *		that no timer is armed after sib_fault_fini() stopped them;
 *		set under @lock
 * @lookup_delay_us: a test hook for lifetime races, not a packet fault:
 *		how long a QP or SRQ lookup waits between finding the object
 *		and taking its reference (sib_fault_lookup_delay()); 0 (no
 *		wait) at first, at most %SIB_FAULT_LOOKUP_DELAY_MAX. Works
 *		whether or not @active is set. Written with WRITE_ONCE() by
 *		debugfs, read with READ_ONCE()
 */
struct sib_fault {
	spinlock_t lock;	/* see above */
	bool active;
	u32 drop;
	u32 dup;
	u32 reorder;
	u32 delay;
	u32 corrupt;
	u32 delay_us;
	u32 dir;
	u32 classes;
	u64 seed;
	struct rnd_state rnd;
	struct sk_buff *held;
	struct timer_list held_timer;
	struct sk_buff_head delayed;
	struct timer_list timer;
	struct sib_dev *sdev;
	void (*deliver)(struct sib_dev *sdev, struct sk_buff *skb);
	u64 injected[SIB_FI_NUM];
	struct dentry *dir_dentry;
	bool dying;
	u32 lookup_delay_us;
};

/*
 * The longest lookup_delay_us, in microseconds: it busy-waits, in softirq
 * too. Long enough for a QP's whole destroy on a debug kernel under TCG.
 */
#define SIB_FAULT_LOOKUP_DELAY_MAX	100000

void sib_fault_lookup_wait(u32 us);

/**
 * sib_fault_lookup_delay() - widen a lookup's race window, if asked to
 * @f: the device's fault state
 *
 * Called by the QP and SRQ lookups inside their RCU read-side section,
 * between finding the object and taking its reference: the window in
 * which only the grace period that destroy waits for keeps the object's
 * memory alive. Tests make it long enough to hit (sib_trust's
 * destroy_during_lookup, sib_xrc's srq_destroyed_during_lookup). One load
 * and a branch when off.
 */
static inline void sib_fault_lookup_delay(struct sib_fault *f)
{
	u32 us = READ_ONCE(f->lookup_delay_us);

	if (unlikely(us))
		sib_fault_lookup_wait(us);
}

void sib_fault_init(struct sib_fault *f, struct sib_dev *sdev,
		    const char *name,
		    void (*deliver)(struct sib_dev *, struct sk_buff *));
void sib_fault_fini(struct sib_fault *f);
struct sk_buff *sib_fault_apply(struct sib_fault *f, u32 dir,
				struct sk_buff *skb, struct sk_buff **extra,
				bool can_hold);
void sib_fault_module_init(void);
void sib_fault_module_exit(void);

#endif /* SIB_FAULT_H */
