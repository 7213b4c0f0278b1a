/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The selftests' network topologies: sib0 on lo (of init_net or of a
 * namespace), two namespaces joined by a veth with a sib device on each
 * end, and the same with rdma_rxe on one end. A test fills the first
 * fields of a struct sib_topo, calls sib_topo_up() in its fixture's
 * setup and sib_topo_down() in its teardown, and reads the names,
 * addresses and GID indexes from the struct (or, in shell strings, from
 * the SIB_TOPO_* macros of its tag).
 */
#ifndef SIB_TOPO_H
#define SIB_TOPO_H

#include <stdbool.h>

enum sib_topo_kind {
	SIB_TOPO_LO,		/* sib0 on lo, in init_net (or LO_NS) */
	SIB_TOPO_VETH,		/* sibA in namespace A, sibB in B, a veth between */
	SIB_TOPO_RXE_PEER,	/* rdma_rxe on end a in init_net, sibB in B */
};

/*
 * The names of a topology of tag T: namespaces sibTA and sibTB, veth
 * ends sibTa and sibTb (sib_cm's tag "c": sibcA, sibcB, sibca, sibcb).
 */
#define SIB_TOPO_NSA(tag)	"sib" tag "A"
#define SIB_TOPO_NSB(tag)	"sib" tag "B"
#define SIB_TOPO_IFA(tag)	"sib" tag "a"
#define SIB_TOPO_IFB(tag)	"sib" tag "b"

/* The default addresses of ends a and b. */
#define SIB_TOPO_IP4A		"192.0.2.1"
#define SIB_TOPO_IP4B		"192.0.2.2"
#define SIB_TOPO_IP6A		"2001:db8::1"
#define SIB_TOPO_IP6B		"2001:db8::2"

/* Flags of the veth topologies. */
#define SIB_TOPO_IPV6		0x01	/* IPv6 addresses too (/64, nodad) */
#define SIB_TOPO_NO_IPV4	0x02	/* IPv6 addresses only */
#define SIB_TOPO_LO_UP		0x04	/* lo up in the namespaces */
#define SIB_TOPO_NEIGH		0x08	/* neighbours resolved both ways */
#define SIB_TOPO_A_INIT		0x10	/* end a in init_net (RXE_PEER: always) */
#define SIB_TOPO_A_ONLY		0x20	/* a device and an address on a only */
/* SIB_TOPO_LO: on lo of namespace sibTA (lo up), not of init_net's. */
#define SIB_TOPO_LO_NS		0x40
/* No RDMA device: the test adds its own on ifname[]; ibdev[] is "". */
#define SIB_TOPO_NO_DEV		0x80
/*
 * Beside other sib devices (another topology's, sib0): sib_topo_up() and
 * sib_topo_down() delete this topology's devices only, by name (none
 * with NO_DEV), instead of every sib device.
 */
#define SIB_TOPO_BESIDE		0x100

/* sib_topo_up(): a module the topology needs is missing (skip). */
#define SIB_TOPO_MISSING	1

#define SIB_TOPO_NAME		16	/* IFNAMSIZ; namespace names as short */
#define SIB_TOPO_ADDR		48	/* INET6_ADDRSTRLEN and more */

struct sib_topo {
	/* Set by the test; zero is the default. */
	enum sib_topo_kind kind;
	const char *tag;	/* names, see SIB_TOPO_NSA(); veth kinds, LO_NS */
	unsigned int flags;
	const char *dev[2];	/* sibA, sibB (rxeA for RXE_PEER's a; sib0) */
	const char *ip4[2];	/* SIB_TOPO_IP4A, SIB_TOPO_IP4B */

	/* Set by sib_topo_up(); end b is a copy of end a on lo. */
	char ns[2][SIB_TOPO_NAME];	/* "" for init_net */
	char ifname[2][SIB_TOPO_NAME];
	char ibdev[2][SIB_TOPO_NAME];	/* "" for none */
	char addr[2][SIB_TOPO_ADDR];	/* of the GID: IPv4 unless NO_IPV4 */
	int gid[2];			/* GID index of addr on ibdev, or -1 */
	char err[256];			/* why sib_topo_up() failed */
};

/*
 * Clean up what an earlier run may have left (sib_topo_down()), load
 * the modules and build the topology: names and addresses, each device
 * made and its GID index found. 0, SIB_TOPO_MISSING (err says which
 * module), or -1 (err says which step; the command's own output went
 * to stderr). In a fixture:
 *
 *	ret = sib_topo_up(&self->t);
 *	if (ret == SIB_TOPO_MISSING)
 *		SETUP_SKIP("%s", self->t.err);
 *	ASSERT_EQ(0, ret) TH_LOG("%s", self->t.err);
 */
int sib_topo_up(struct sib_topo *t);
/*
 * Remove every sib device (with SIB_TOPO_BESIDE, @t's own), the
 * rdma_rxe device and module (RXE_PEER), the namespaces and the veth of
 * @t's names. Needs only the fields the test sets, so it also cleans up
 * after a run that crashed; it may run any number of times.
 */
void sib_topo_down(struct sib_topo *t);

/* Set the MTU of both veth ends; 0 or the failing command's status. */
int sib_topo_mtu(const struct sib_topo *t, int mtu);
/* Add the root qdisc @spec ("netem loss 2%") on both veth ends. */
int sib_topo_qdisc(const struct sib_topo *t, const char *spec);
/*
 * Resolve the neighbours of both ends, both ways (SIB_TOPO_NEIGH does it
 * in sib_topo_up()); 0 or -1 after 5 s.
 */
int sib_topo_neigh(const struct sib_topo *t);

#endif /* SIB_TOPO_H */
