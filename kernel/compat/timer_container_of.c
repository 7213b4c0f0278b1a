// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: timer_container_of(), the name from_timer() took when it was
 * renamed (Linux 6.16); from_timer() is gone since.
 */
#include <linux/timer.h>

struct sib_probe_timer {
	struct timer_list t;
};

struct sib_probe_timer *sib_probe_timer_container_of(struct timer_list *t);
struct sib_probe_timer *sib_probe_timer_container_of(struct timer_list *t)
{
	struct sib_probe_timer *p = timer_container_of(p, t, t);

	return p;
}
