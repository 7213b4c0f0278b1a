// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: the networking sysctls read on hot paths live in struct
 * net_hotdata, netdev_max_backlog as net_hotdata.max_backlog (Linux 6.9).
 */
#include <net/hotdata.h>

int sib_probe_net_hotdata(void);
int sib_probe_net_hotdata(void)
{
	return READ_ONCE(net_hotdata.max_backlog);
}
