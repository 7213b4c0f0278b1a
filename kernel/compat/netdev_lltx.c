// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: struct net_device's lltx bit, which replaced the feature flag
 * NETIF_F_LLTX (Linux 6.12): a netdev whose transmit function takes no
 * transmit queue lock.
 */
#include <linux/netdevice.h>

void sib_probe_netdev_lltx(struct net_device *dev);
void sib_probe_netdev_lltx(struct net_device *dev)
{
	dev->lltx = true;
}
