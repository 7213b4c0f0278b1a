// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the RoCEv2 UDP sockets, one pair (IPv4, IPv6) per network
 * namespace, and which sib device a packet arriving on them is for.
 *
 * A device is attached to the namespace its netdev is in. The first device
 * attached to a namespace opens UDP port 4791 there; the last one to leave
 * closes it, so several sib devices share the sockets of their namespace,
 * and a namespace without sib devices keeps the port free (for rdma_rxe,
 * say). A device follows its netdev into another namespace. When a
 * namespace goes away, its devices are detached and its sockets closed,
 * even if the devices themselves are still being unregistered.
 *
 * Locking. sib_ns_mutex guards every struct sib_ns (sockets, @devs
 * updates, @dead) and every device's @ns and @ns_node. It nests inside
 * RTNL and sib_dev_mutex (the netdev notifier), so nothing here takes
 * either while holding it. The receive path (softirq) reaches the sib_ns
 * through the socket's sk_user_data and walks @devs under RCU; a device
 * leaves @devs with list_del_rcu() and a grace period passes before it
 * can be freed (sib_udp_dev_fini() or the socket release).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_vlan.h>
#include <linux/rtnetlink.h>
#include <net/net_namespace.h>
#include <net/netns/generic.h>
#include <linux/inetdevice.h>
#include <net/addrconf.h>
#include <net/udp_tunnel.h>

#include "sib_qp.h"
#include "sib_recv.h"
#include "sib_udp.h"

/**
 * struct sib_ns - sib's state in one network namespace (net_generic)
 * @net:	the namespace (no reference: this lives and dies with it)
 * @sk4:	the IPv4 UDP socket on port 4791, while @devs is not empty
 * @sk6:	the IPv6-only UDP socket on port 4791, while @devs is not
 *		empty; NULL in a kernel without IPv6
 * @devs:	attached devices (sib_dev.ns_node), RCU for readers
 * @dead:	the namespace is going away: attach no more devices
 *
 * sib_ns_mutex guards @sk4, @sk6, @dead and the updates of @devs; the
 * receive path (softirq) reaches the struct through the sockets'
 * sk_user_data and walks @devs under RCU. @net is constant.
 */
struct sib_ns {
	struct net *net;
	struct socket *sk4;
	struct socket *sk6;
	struct list_head devs;
	bool dead;
};

static unsigned int sib_udp_net_id;
static DEFINE_MUTEX(sib_ns_mutex);

/* ---- receiving ------------------------------------------------------------- */

/*
 * Is @skb's destination address one of @ndev's? Asked of the netdev, not
 * of the device's GID table: ib_core allocates that table only when it
 * registers the device, and frees it, without waiting for RCU readers,
 * before it lets the driver go, while the device is on the receive list
 * (it is listed before registration, so that link add can refuse a port
 * that another owns, and until dealloc_driver). The GIDs of a sib device
 * are its netdev's addresses, so the answer is the same. Under RCU.
 */
static bool sib_daddr_on_ndev(struct net *net, struct net_device *ndev,
			      struct sk_buff *skb)
{
	struct net_device *dev;

	if (skb->protocol == htons(ETH_P_IP)) {
		dev = __ip_dev_find(net, ip_hdr(skb)->daddr, false);
		return dev == ndev;
	}
	if (skb->protocol == htons(ETH_P_IPV6))
		return ipv6_chk_addr(net, &ipv6_hdr(skb)->daddr, ndev, 0);
	return false;
}

/*
 * A packet that came in over loopback was sent by this host to one of its
 * own addresses, maybe another sib device's: find the device by the
 * destination address.
 */
static struct sib_dev *sib_ns_dev_by_daddr(struct sib_ns *sns,
					   struct sk_buff *skb)
{
	struct sib_dev *sdev;

	list_for_each_entry_rcu(sdev, &sns->devs, ns_node)
		if (sib_daddr_on_ndev(sns->net, sdev->ndev, skb))
			return sdev;
	return NULL;
}

/* The device a packet is for, under RCU: the one bound to its netdev. */
static struct sib_dev *sib_ns_dev(struct sib_ns *sns, struct sk_buff *skb)
{
	struct net_device *ndev = skb->dev;
	struct sib_dev *sdev;

	if (!ndev)
		return NULL;
	if (ndev->flags & IFF_LOOPBACK)
		return sib_ns_dev_by_daddr(sns, skb);
	if (is_vlan_dev(ndev))
		ndev = vlan_dev_real_dev(ndev);
	list_for_each_entry_rcu(sdev, &sns->devs, ns_node)
		if (sdev->ndev == ndev || sdev->ndev == skb->dev)
			return sdev;
	return NULL;
}

/* encap_rcv of the UDP sockets (softirq): always consumes the packet. */
static int sib_udp_encap_recv(struct sock *sk, struct sk_buff *skb)
{
	struct sib_dev *sdev = NULL;
	struct sib_ns *sns;

	rcu_read_lock();
	sns = rcu_dereference_sk_user_data(sk);
	if (sns)
		sdev = sib_ns_dev(sns, skb);
	if (sdev)
		sib_pkt_rcv(sdev, skb);
	else
		kfree_skb(skb);
	rcu_read_unlock();
	return 0;
}

/* ---- the sockets ----------------------------------------------------------- */

static struct socket *sib_udp_open(struct sib_ns *sns, bool ipv6)
{
	struct udp_tunnel_sock_cfg tcfg = {
		.sk_user_data = sns,
		.encap_type = 1,
		.encap_rcv = sib_udp_encap_recv,
	};
	struct udp_port_cfg cfg = {
		.family = ipv6 ? AF_INET6 : AF_INET,
		.ipv6_v6only = ipv6,
		.local_udp_port = htons(ROCE_V2_UDP_DPORT),
	};
	struct socket *sock;
	int ret;

	ret = udp_sock_create(sns->net, &cfg, &sock);
	if (ret)
		return ERR_PTR(ret);
	sib_setup_udp_tunnel_sock(sns->net, sock, &tcfg);
	return sock;
}

/* Close the sockets; waits for the receive path to let go of them. */
static void sib_ns_close(struct sib_ns *sns)
{
	lockdep_assert_held(&sib_ns_mutex);
	if (sns->sk6)
		sib_udp_tunnel_sock_release(sns->sk6);
	if (sns->sk4)
		sib_udp_tunnel_sock_release(sns->sk4);
	sns->sk4 = NULL;
	sns->sk6 = NULL;
}

/* Open the sockets for @sdev, the first device in @sns. */
static int sib_ns_open(struct sib_ns *sns, struct sib_dev *sdev)
{
	struct socket *sock;

	lockdep_assert_held(&sib_ns_mutex);
	sock = sib_udp_open(sns, false);
	if (IS_ERR(sock))
		goto err;
	sns->sk4 = sock;
	sock = sib_udp_open(sns, true);
	if (PTR_ERR(sock) == -EAFNOSUPPORT)
		return 0;	/* no IPv6 in this kernel: IPv4 only */
	if (IS_ERR(sock))
		goto err;
	sns->sk6 = sock;
	return 0;

err:
	if (PTR_ERR(sock) == -EADDRINUSE)
		pr_err("netdev %s: UDP port %u is already in use in its network namespace (inode %u): rdma_rxe, or another RoCEv2 stack, owns it there\n",
		       netdev_name(sdev->ndev), ROCE_V2_UDP_DPORT,
		       sns->net->ns.inum);
	else
		pr_err("netdev %s: cannot open UDP port %u in its network namespace: %ld\n",
		       netdev_name(sdev->ndev), ROCE_V2_UDP_DPORT,
		       PTR_ERR(sock));
	sib_ns_close(sns);
	return PTR_ERR(sock);
}

/* ---- attaching devices ----------------------------------------------------- */

static void sib_ns_detach(struct sib_dev *sdev)
{
	struct sib_ns *sns = sdev->ns;

	lockdep_assert_held(&sib_ns_mutex);
	if (!sns)
		return;
	list_del_rcu(&sdev->ns_node);
	WRITE_ONCE(sdev->ns, NULL);
	if (list_empty(&sns->devs))
		sib_ns_close(sns);	/* includes a grace period */
	else
		synchronize_rcu();
}

/* Attach @sdev to @net, opening the sockets if it is the first there. */
static int sib_ns_attach(struct sib_dev *sdev, struct net *net)
{
	struct sib_ns *sns = net_generic(net, sib_udp_net_id);
	int ret;

	lockdep_assert_held(&sib_ns_mutex);
	if (sdev->ns == sns)
		return 0;
	sib_ns_detach(sdev);
	if (sns->dead)
		return -ENODEV;
	if (list_empty(&sns->devs)) {
		ret = sib_ns_open(sns, sdev);
		if (ret)
			return ret;
	}
	list_add_tail_rcu(&sdev->ns_node, &sns->devs);
	WRITE_ONCE(sdev->ns, sns);
	return 0;
}

/*
 * The netdev's namespace, or NULL if it is going away. Under RTNL, which
 * keeps the netdev where it is; a registered netdev's namespace is alive.
 */
static struct net *sib_ndev_net(struct sib_dev *sdev)
{
	ASSERT_RTNL();
	if (sdev->ndev->reg_state != NETREG_REGISTERED)
		return NULL;
	return dev_net(sdev->ndev);
}

/**
 * sib_udp_dev_init - attach a new device to its netdev's namespace
 * @sdev: the device, not yet registered
 *
 * Context: process; takes RTNL and sib_ns_mutex.
 *
 * Return: 0; -EADDRINUSE, said in the kernel log too, when someone else
 * (rdma_rxe) holds UDP port 4791 in that namespace; -ENODEV when the
 * netdev is not registered or its namespace is going away; another
 * error of opening the sockets.
 */
int sib_udp_dev_init(struct sib_dev *sdev)
{
	struct net *net;
	int ret;

	rtnl_lock();
	mutex_lock(&sib_ns_mutex);
	net = sib_ndev_net(sdev);
	ret = net ? sib_ns_attach(sdev, net) : -ENODEV;
	mutex_unlock(&sib_ns_mutex);
	rtnl_unlock();
	return ret;
}

/* The device is going away (or failed to register): let go of the sockets. */
void sib_udp_dev_fini(struct sib_dev *sdev)
{
	mutex_lock(&sib_ns_mutex);
	sib_ns_detach(sdev);
	mutex_unlock(&sib_ns_mutex);
}

/**
 * sib_udp_dev_moved - the netdev now lives in another namespace
 * @sdev: its device
 *
 * Called from the netdev notifier (NETDEV_REGISTER after a move), under
 * RTNL. The device follows: it leaves the old namespace's sockets and
 * takes (or opens) the new one's. If that fails, the device keeps sending
 * but receives nothing until it moves again.
 */
void sib_udp_dev_moved(struct sib_dev *sdev)
{
	struct net *net;
	int ret;

	mutex_lock(&sib_ns_mutex);
	net = sib_ndev_net(sdev);
	ret = net ? sib_ns_attach(sdev, net) : -ENODEV;
	mutex_unlock(&sib_ns_mutex);
	if (ret)
		pr_warn("%s: followed %s to another network namespace, but cannot receive there: %d\n",
			sdev->ib_dev.name, netdev_name(sdev->ndev), ret);
}

/* ---- namespaces ------------------------------------------------------------ */

static int __net_init sib_ns_init(struct net *net)
{
	struct sib_ns *sns = net_generic(net, sib_udp_net_id);

	sns->net = net;
	INIT_LIST_HEAD(&sns->devs);
	return 0;
}

/*
 * The namespace is dying; its netdevs are already gone or moved away, but
 * the devices bound to gone netdevs may still be unregistering. Detach
 * them all and close the sockets.
 */
static void __net_exit sib_ns_exit(struct net *net)
{
	struct sib_ns *sns = net_generic(net, sib_udp_net_id);
	struct sib_dev *sdev, *next;

	mutex_lock(&sib_ns_mutex);
	sns->dead = true;
	list_for_each_entry_safe(sdev, next, &sns->devs, ns_node) {
		list_del_rcu(&sdev->ns_node);
		WRITE_ONCE(sdev->ns, NULL);
	}
	sib_ns_close(sns);	/* includes a grace period if it had sockets */
	mutex_unlock(&sib_ns_mutex);
}

static struct pernet_operations sib_net_ops = {
	.init = sib_ns_init,
	.exit = sib_ns_exit,
	.id = &sib_udp_net_id,
	.size = sizeof(struct sib_ns),
};

/* Module-wide setup of the RoCEv2 transport. */
int sib_udp_init(void)
{
	return register_pernet_subsys(&sib_net_ops);
}

void sib_udp_exit(void)
{
	unregister_pernet_subsys(&sib_net_ops);
}
