// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: struct net_device's netns_local bit, which replaced the feature
 * flag NETIF_F_NETNS_LOCAL (Linux 6.12): a netdev that cannot move to
 * another network namespace.
 */
#include <linux/netdevice.h>

void sib_probe_netns_local(struct net_device *dev);
void sib_probe_netns_local(struct net_device *dev)
{
	dev->netns_local = true;
}
