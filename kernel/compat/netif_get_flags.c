// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: netif_get_flags(), the name dev_get_flags() took when the
 * netdev functions that do not take the device's lock were renamed
 * (Linux 6.17); dev_get_flags() is gone since.
 */
#include <linux/netdevice.h>

unsigned int sib_probe_netif_get_flags(const struct net_device *dev);
unsigned int sib_probe_netif_get_flags(const struct net_device *dev)
{
	return netif_get_flags(dev);
}
