/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the capture device (sib_capture.c), a netdev on which every packet
 * of a sib device appears as a full RoCEv2 frame for tcpdump and
 * Wireshark.
 *
 * The hooks below cost one pointer test while the device has no capture
 * netdev; the out-of-line part then checks that the netdev is up and that
 * a packet socket listens, and copies only then.
 */
#ifndef SIB_CAPTURE_H
#define SIB_CAPTURE_H

#include <linux/netdevice.h>
#include <linux/skbuff.h>

#include "sib.h"

extern struct device_attribute dev_attr_capture;

bool __sib_cap_listening(struct sib_dev *sdev);
void __sib_cap_local(struct sib_dev *sdev, struct sk_buff *skb,
		     const struct sib_av *av);
void __sib_cap_wire_tx(struct sib_dev *sdev, struct sk_buff *skb,
		       const struct sib_av *av);
void __sib_cap_wire_rx(struct sib_dev *sdev, struct sk_buff *skb);
void sib_cap_del(struct sib_dev *sdev);
void sib_cap_fini(struct sib_dev *sdev);
bool sib_cap_netdev_event(struct net_device *ndev, unsigned long event);

/*
 * Is someone capturing @sdev's packets? While so, the local path sends
 * each packet as the wire would: no local bursts, no ACKs without a
 * packet.
 */
static inline bool sib_cap_listening(struct sib_dev *sdev)
{
	return rcu_access_pointer(sdev->cap) && __sib_cap_listening(sdev);
}

/* A packet (data at the BTH) of the local path, sent to @av. */
static inline void sib_cap_local(struct sib_dev *sdev, struct sk_buff *skb,
				 const struct sib_av *av)
{
	if (rcu_access_pointer(sdev->cap))
		__sib_cap_local(sdev, skb, av);
}

/* A RoCEv2 packet to @av, ready for the IP stack (data at the IP header). */
static inline void sib_cap_wire_tx(struct sib_dev *sdev, struct sk_buff *skb,
				   const struct sib_av *av)
{
	if (rcu_access_pointer(sdev->cap))
		__sib_cap_wire_tx(sdev, skb, av);
}

/* A RoCEv2 packet off the wire, data at the UDP header, not checked yet. */
static inline void sib_cap_wire_rx(struct sib_dev *sdev, struct sk_buff *skb)
{
	if (rcu_access_pointer(sdev->cap))
		__sib_cap_wire_rx(sdev, skb);
}

#endif /* SIB_CAPTURE_H */
