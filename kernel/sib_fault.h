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
 * @lock:	guards the generator, @held, @delayed and @injected; the
 *		knobs are plain u32s written from debugfs and read under it
 * @active:	master switch, read locklessly on the hot path
 * @drop, @dup, @reorder, @delay, @corrupt: probabilities in ppm
 * @delay_us:	how long a delayed packet is held
 * @dir:	SIB_FAULT_TX and/or SIB_FAULT_RX
 * @classes:	enum sib_fault_class mask
 * @seed, @rnd:	the generator and the seed it started from
 * @held:	a packet held back for reordering; it goes after the next
 *		packet, or when @held_timer fires (a jiffy later) if none comes
 * @delayed, @timer: delayed packets and the timer that releases them
 * @deliver:	how released packets continue (the device's delivery)
 * @injected:	faults injected so far, by kind
 * @dying:	the device is going away: hold and delay nothing more, so
 *		that no timer is armed after sib_fault_fini() stopped them
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
};

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
