// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: struct net_device's netns_immutable bit, the netns_local bit's
 * later name (Debian's 6.12.118 and 7.2 have it): a netdev that cannot
 * move to another network namespace.
 */
#include <linux/netdevice.h>

void sib_probe_netns_immutable(struct net_device *dev);
void sib_probe_netns_immutable(struct net_device *dev)
{
	dev->netns_immutable = true;
}
