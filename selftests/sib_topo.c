// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The selftests' network topologies (sib_topo.h).
 */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "sib_topo.h"
#include "sib_util.h"

/* Record why sib_topo_up() failed; returns @ret. */
static int topo_err(struct sib_topo *t, int ret, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

static int topo_err(struct sib_topo *t, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(t->err, sizeof(t->err), fmt, ap);
	va_end(ap);
	return ret;
}

/* "ip" or "ip -n NS", for end @i. */
static const char *ip_cmd(const struct sib_topo *t, int i, char *buf,
			  size_t size)
{
	if (t->ns[i][0])
		snprintf(buf, size, "ip -n %s", t->ns[i]);
	else
		snprintf(buf, size, "ip");
	return buf;
}

/* "" or "ip netns exec NS ", for end @i. */
static const char *ns_exec(const struct sib_topo *t, int i, char *buf,
			   size_t size)
{
	if (t->ns[i][0])
		snprintf(buf, size, "ip netns exec %s ", t->ns[i]);
	else
		buf[0] = 0;
	return buf;
}

/* The ends that get an address and a device. */
static int ends(const struct sib_topo *t)
{
	if (t->kind == SIB_TOPO_LO || (t->flags & SIB_TOPO_A_ONLY))
		return 1;
	return 2;
}

/* The ends that get a device. */
static int devs(const struct sib_topo *t)
{
	return t->flags & SIB_TOPO_NO_DEV ? 0 : ends(t);
}

/* The RDMA device name of end @i. */
static const char *dev_name(const struct sib_topo *t, int i)
{
	if (t->dev[i])
		return t->dev[i];
	if (t->kind == SIB_TOPO_LO)
		return "sib0";
	if (!i && t->kind == SIB_TOPO_RXE_PEER)
		return "rxeA";
	return i ? "sibB" : "sibA";
}

static void topo_names(struct sib_topo *t)
{
	static const char * const ip4[2] = { SIB_TOPO_IP4A, SIB_TOPO_IP4B };
	static const char * const ip6[2] = { SIB_TOPO_IP6A, SIB_TOPO_IP6B };
	bool a_init = t->kind == SIB_TOPO_RXE_PEER ||
		      (t->flags & SIB_TOPO_A_INIT);

	memset(t->ns, 0, sizeof(t->ns));
	memset(t->ifname, 0, sizeof(t->ifname));
	memset(t->ibdev, 0, sizeof(t->ibdev));
	memset(t->addr, 0, sizeof(t->addr));
	t->gid[0] = -1;
	t->gid[1] = -1;
	t->err[0] = 0;
	if (t->kind == SIB_TOPO_LO) {
		if (t->flags & SIB_TOPO_LO_NS)
			snprintf(t->ns[0], SIB_TOPO_NAME, "sib%sA", t->tag);
		snprintf(t->ifname[0], SIB_TOPO_NAME, "lo");
		if (devs(t))
			snprintf(t->ibdev[0], SIB_TOPO_NAME, "%s",
				 dev_name(t, 0));
		snprintf(t->addr[0], SIB_TOPO_ADDR, "127.0.0.1");
		return;
	}
	for (int i = 0; i < 2; i++) {
		if (i || !a_init)
			snprintf(t->ns[i], SIB_TOPO_NAME, "sib%s%c", t->tag,
				 'A' + i);
		snprintf(t->ifname[i], SIB_TOPO_NAME, "sib%s%c", t->tag,
			 'a' + i);
		if (i >= ends(t))
			continue;
		if (i < devs(t))
			snprintf(t->ibdev[i], SIB_TOPO_NAME, "%s",
				 dev_name(t, i));
		if (t->flags & SIB_TOPO_NO_IPV4)
			snprintf(t->addr[i], SIB_TOPO_ADDR, "%s", ip6[i]);
		else
			snprintf(t->addr[i], SIB_TOPO_ADDR, "%s",
				 t->ip4[i] ? t->ip4[i] : ip4[i]);
	}
}

void sib_topo_down(struct sib_topo *t)
{
	if (t->flags & SIB_TOPO_BESIDE) {
		for (int i = 0; i < devs(t); i++)
			nl_dellink(dev_name(t, i));
	} else {
		sib_delete_all();
	}
	if (t->kind == SIB_TOPO_RXE_PEER) {
		shq("rdma link del %s", dev_name(t, 0));
		shq("rmmod rdma_rxe");
	}
	if (!t->tag)
		return;
	shq("ip netns del sib%sA", t->tag);
	shq("ip netns del sib%sB", t->tag);
	/* End a of A_INIT and RXE_PEER, or of a run that failed early. */
	shq("ip link del sib%sa", t->tag);
}

int sib_topo_neigh(const struct sib_topo *t)
{
	char ip[2][48], ex[2][48];

	for (int i = 0; i < 2; i++) {
		ip_cmd(t, i, ip[i], sizeof(ip[i]));
		ns_exec(t, i, ex[i], sizeof(ex[i]));
	}
	/* A UDP datagram to the discard port starts the resolution. */
	return sh("for i in $(seq 50); do "
		  "%sbash -c 'echo > /dev/udp/%s/9' 2>/dev/null; "
		  "%sbash -c 'echo > /dev/udp/%s/9' 2>/dev/null; "
		  "%s neigh show %s | grep -q lladdr && "
		  "%s neigh show %s | grep -q lladdr && exit 0; "
		  "sleep 0.1; done; exit 1",
		  ex[0], t->addr[1], ex[1], t->addr[0],
		  ip[0], t->addr[1], ip[1], t->addr[0]) ? -1 : 0;
}

int sib_topo_mtu(const struct sib_topo *t, int mtu)
{
	char ip[2][48];

	return sh("%s link set %s mtu %d && %s link set %s mtu %d",
		  ip_cmd(t, 0, ip[0], sizeof(ip[0])), t->ifname[0], mtu,
		  ip_cmd(t, 1, ip[1], sizeof(ip[1])), t->ifname[1], mtu);
}

int sib_topo_qdisc(const struct sib_topo *t, const char *spec)
{
	char ex[2][48];

	return sh("%stc qdisc add dev %s root %s && %stc qdisc add dev %s root %s",
		  ns_exec(t, 0, ex[0], sizeof(ex[0])), t->ifname[0], spec,
		  ns_exec(t, 1, ex[1], sizeof(ex[1])), t->ifname[1], spec);
}

/* The veth, its addresses, lo, the namespaces. */
static int veth_up(struct sib_topo *t)
{
	char ip[48], peer[64] = "";

	for (int i = 0; i < 2; i++)
		if (t->ns[i][0] && sh("ip netns add %s", t->ns[i]))
			return topo_err(t, -1, "ip netns add %s failed",
					t->ns[i]);
	if (t->ns[0][0])
		snprintf(peer, sizeof(peer), " netns %s", t->ns[0]);
	if (sh("ip link add %s%s type veth peer name %s netns %s",
	       t->ifname[0], peer, t->ifname[1], t->ns[1]))
		return topo_err(t, -1, "ip link add %s type veth failed",
				t->ifname[0]);
	for (int i = 0; i < ends(t); i++) {
		ip_cmd(t, i, ip, sizeof(ip));
		if (!(t->flags & SIB_TOPO_NO_IPV4) &&
		    sh("%s addr add %s/24 dev %s", ip, t->addr[i],
		       t->ifname[i]))
			return topo_err(t, -1, "IPv4 address on %s failed",
					t->ifname[i]);
		if ((t->flags & (SIB_TOPO_IPV6 | SIB_TOPO_NO_IPV4)) &&
		    sh("%s addr add %s/64 nodad dev %s", ip,
		       i ? SIB_TOPO_IP6B : SIB_TOPO_IP6A, t->ifname[i]))
			return topo_err(t, -1, "IPv6 address on %s failed",
					t->ifname[i]);
	}
	for (int i = 0; i < 2; i++) {
		ip_cmd(t, i, ip, sizeof(ip));
		if (sh("%s link set %s up", ip, t->ifname[i]))
			return topo_err(t, -1, "%s up failed", t->ifname[i]);
		if ((t->flags & SIB_TOPO_LO_UP) && t->ns[i][0] &&
		    sh("%s link set lo up", ip))
			return topo_err(t, -1, "lo up in %s failed", t->ns[i]);
	}
	return 0;
}

/* SIB_TOPO_LO_NS: the namespace, its lo up. */
static int lo_ns_up(struct sib_topo *t)
{
	if (sh("ip netns add %s && ip -n %s link set lo up", t->ns[0],
	       t->ns[0]))
		return topo_err(t, -1, "namespace %s with lo up failed",
				t->ns[0]);
	return 0;
}

/* The RDMA device of end @i: in init_net through netlink. */
static int dev_up(struct sib_topo *t, int i)
{
	const char *type = "sib";
	char ex[48];
	int ret;

	if (!i && t->kind == SIB_TOPO_RXE_PEER)
		type = "rxe";
	if (!t->ns[i][0]) {
		ret = nl_newlink(t->ibdev[i], type, t->ifname[i]);
		if (ret)
			return topo_err(t, -1, "link add %s type %s netdev %s: %s",
					t->ibdev[i], type, t->ifname[i],
					strerror(-ret));
		return 0;
	}
	if (sh("%srdma link add %s type %s netdev %s",
	       ns_exec(t, i, ex, sizeof(ex)), t->ibdev[i], type, t->ifname[i]))
		return topo_err(t, -1, "rdma link add %s type %s netdev %s in %s failed",
				t->ibdev[i], type, t->ifname[i], t->ns[i]);
	return 0;
}

int sib_topo_up(struct sib_topo *t)
{
	if ((t->kind != SIB_TOPO_LO || (t->flags & SIB_TOPO_LO_NS)) &&
	    !t->tag)
		return topo_err(t, -1, "a topology in namespaces needs a tag");
	topo_names(t);
	if (module_load())
		return topo_err(t, -1, "modprobe " SIB_MODULE " failed");
	sib_topo_down(t);
	if (t->kind == SIB_TOPO_RXE_PEER && shq("modprobe rdma_rxe"))
		return topo_err(t, SIB_TOPO_MISSING,
				"rdma_rxe is not available");
	if (t->kind != SIB_TOPO_LO && veth_up(t))
		return -1;
	if (t->kind == SIB_TOPO_LO && t->ns[0][0] && lo_ns_up(t))
		return -1;
	for (int i = 0; i < devs(t); i++)
		if (dev_up(t, i))
			return -1;
	if (t->kind != SIB_TOPO_LO && ends(t) == 2 &&
	    (t->flags & SIB_TOPO_NEIGH) && sib_topo_neigh(t))
		return topo_err(t, -1, "neighbours of %s and %s not resolved",
				t->addr[0], t->addr[1]);
	for (int i = 0; i < devs(t); i++) {
		t->gid[i] = wait_gid_index(t->ibdev[i], t->addr[i]);
		if (t->gid[i] < 0)
			return topo_err(t, -1, "no GID of %s on %s", t->addr[i],
					t->ibdev[i]);
	}
	if (ends(t) == 1 && t->kind == SIB_TOPO_LO) {
		memcpy(t->ns[1], t->ns[0], sizeof(t->ns[0]));
		memcpy(t->ifname[1], t->ifname[0], sizeof(t->ifname[0]));
		memcpy(t->ibdev[1], t->ibdev[0], sizeof(t->ibdev[0]));
		memcpy(t->addr[1], t->addr[0], sizeof(t->addr[0]));
		t->gid[1] = t->gid[0];
	}
	return 0;
}
