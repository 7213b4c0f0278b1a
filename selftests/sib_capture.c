// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The capture device (kernel/sib_capture.c): /sys/class/infiniband/DEV/
 * capture makes DEVmon, on which tcpdump sees every packet of DEV as a
 * RoCEv2 frame. Traffic of the local path (sib0 on lo) and of the wire
 * (veth between two namespaces) is captured there; every frame must be
 * well formed (scripts/pcap-roce-check: lengths, IP checksum, ICRC; the
 * PSNs of each requester without gap), decode in tshark as
 * InfiniBand without a malformed packet, and every expected opcode must
 * appear. The netdev's life: created and deleted on request, with the
 * device, while traffic runs.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"
#include "sib_topo.h"

#define PCAP	"/tmp/sib_capture.pcap"
#define LOG	"/tmp/sib_capture.log"
#define FIELDS	"/tmp/sib_capture.fields"	/* check_pcap() */
#define USERNS_PID	"/tmp/sib_capture_userns.pid"	/* wire.userns_refused */
#define TAG	"cap"
#define NSA	SIB_TOPO_NSA(TAG)
#define NSB	SIB_TOPO_NSB(TAG)
#define IFA	SIB_TOPO_IFA(TAG)
#define IP4A	SIB_TOPO_IP4A

/*
 * Write @val to @dev's capture attribute (from namespace @ns, or "" for
 * this one; the capture netdev is made in the namespace of @dev's netdev
 * whoever writes).
 */
static int capture_set(const char *ns, const char *dev, int val)
{
	return sh("%s%s sh -c 'echo %d > /sys/class/infiniband/%s/capture'",
		  *ns ? "ip netns exec " : "", ns, val, dev);
}

/* Write @val to the file @path: 0, or the errno of open() or write(). */
static int write_errno(const char *path, const char *val)
{
	int fd = open(path, O_WRONLY), err = 0;

	if (fd < 0)
		return errno;
	if (write(fd, val, strlen(val)) < 0)
		err = errno;
	close(fd);
	return err;
}

/* Start tcpdump on @ifname (in @ns) into PCAP; 0 once it listens. */
static int tcpdump_start(const char *ns, const char *ifname)
{
	shq("rm -f " PCAP " /tmp/sib_capture.err");
	if (sh("%s%s tcpdump -Z root -q -s 0 -i %s -w " PCAP
	       " >/dev/null 2>/tmp/sib_capture.err & echo $! > /tmp/sib_capture.pid",
	       *ns ? "ip netns exec " : "", ns, ifname))
		return -1;
	return sh("for i in $(seq 300); do grep -q 'listening on' "
		  "/tmp/sib_capture.err && exit 0; sleep 0.1; done; "
		  "cat /tmp/sib_capture.err; exit 1");
}

static void tcpdump_stop(void)
{
	sleep(1);
	shq("kill -INT $(cat /tmp/sib_capture.pid); sleep 1");
	sh("cat /tmp/sib_capture.err | sed 's/^/# tcpdump: /'");
}

/* @tool with @args on @dev: server, then client to @addr (all in @ns). */
static int run_tool(const char *ns, const char *dev, const char *tool,
		    const char *args, const char *addr)
{
	const char *in = *ns ? "ip netns exec " : "";
	char srv[256], cli[256];

	snprintf(srv, sizeof(srv), "%s%s timeout 120 %s -d %s %s", in, ns,
		 tool, dev, args);
	snprintf(cli, sizeof(cli), "%s%s timeout 120 %s -d %s %s %s", in, ns,
		 tool, dev, args, addr);
	return tcp_pair(LOG, ns, srv, cli);
}

/* The traffic every capture test runs: every RC opcode family and UD. */
static void traffic(struct __test_metadata *_metadata, const char *ns,
		    const char *dev, const char *addr)
{
	EXPECT_EQ(0, run_tool(ns, dev, "ibv_rc_pingpong", "-g 1 -n 10 -s 2000",
			      addr));
	EXPECT_EQ(0, run_tool(ns, dev, "ib_write_bw", "-x 1 -n 20 -s 3000",
			      addr));
	EXPECT_EQ(0, run_tool(ns, dev, "ib_read_bw", "-x 1 -n 20 -s 3000",
			      addr));
	EXPECT_EQ(0, run_tool(ns, dev, "ib_atomic_bw", "-x 1 -n 20", addr));
	EXPECT_EQ(0, run_tool(ns, dev, "ib_atomic_bw", "-x 1 -n 20 -A CMP_AND_SWAP",
			      addr));
	EXPECT_EQ(0, run_tool(ns, dev, "ibv_ud_pingpong", "-g 1 -n 10 -s 500",
			      addr));
}

/*
 * How many frames of FIELDS (one line per frame of PCAP: its number, its
 * BTH opcode, empty unless tshark decoded it as InfiniBand, its IP source
 * and destination) have an opcode that matches the extended regular
 * expression @ops.
 */
static int count_ops(const char *ops)
{
	return sh_num("awk -F'\\t' '$2 ~ /^(%s)$/' " FIELDS " | wc -l", ops);
}

/*
 * Check PCAP: every frame valid with its ICRC and PSNs, decoded as
 * InfiniBand, nothing malformed, every opcode of traffic() seen. tshark
 * reads the capture three times (each start costs seconds under TCG):
 * the frames' opcodes, the malformed frames, the expert warnings.
 */
static void check_pcap(struct __test_metadata *_metadata)
{
	static const struct {
		const char *what, *ops;
	} want[] = {
		{ "SEND", "0|1|2|4" },
		{ "RDMA WRITE", "6|7|8|10" },
		{ "RDMA READ request", "12" },
		{ "RDMA READ response", "13|14|15|16" },
		{ "ACK", "17" },
		{ "atomic ACK", "18" },
		{ "compare and swap", "19" },
		{ "fetch and add", "20" },
		{ "UD SEND", "100" },
	};
	int all, ib, n;

	EXPECT_EQ(0, sh("%s --psn " PCAP " > " LOG "; r=$?; tail -n 1 " LOG
			" | sed 's/^/# /'; grep ERROR " LOG " | head | sed 's/^/# /'; "
			"exit $r", repo_script("pcap-roce-check")));
	ASSERT_EQ(0, sh("tshark -r " PCAP " -T fields -e frame.number "
			"-e infiniband.bth.opcode -e ip.src -e ip.dst > " FIELDS
			" 2>/dev/null"));
	sh("echo \"# opcodes (count opcode): $(cut -f 2 " FIELDS
	   " | grep . | sort -n | uniq -c | tr -s ' \\n' ' ')\"");
	all = sh_num("wc -l < " FIELDS);
	ib = count_ops("[0-9]+");
	TH_LOG("%d frames, %d decoded as InfiniBand", all, ib);
	EXPECT_LT(100, all);
	EXPECT_EQ(all, ib);
	EXPECT_EQ(0, sh_num("tshark -r " PCAP " -Y _ws.malformed 2>/dev/null | wc -l"));
	/* Wireshark warns about every zero UDP checksum; nothing else. */
	EXPECT_EQ(0, sh("test $(tshark -r " PCAP " -Y '_ws.expert.severity >= warning' "
			"-T fields -e _ws.expert.message 2>/dev/null | "
			"grep -vxc 'Illegal checksum value (0)') = 0"))
		sh("tshark -r " PCAP " -Y '_ws.expert.severity >= warning' -T fields "
		   "-e _ws.expert.message | sort | uniq -c | head");
	for (unsigned int i = 0; i < ARRAY_SIZE(want); i++) {
		n = count_ops(want[i].ops);
		EXPECT_LT(0, n) TH_LOG("no %s captured", want[i].what);
	}
}

/* ---- the local path: sib0 on lo ------------------------------------------ */

FIXTURE(lo) {
	int unused;
};

FIXTURE_SETUP(lo)
{
	ASSERT_EQ(0, module_load());
	sib_delete_all();
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
}

FIXTURE_TEARDOWN(lo)
{
	shq("kill $(cat /tmp/sib_capture.pid) 2>/dev/null");
	sib_delete_all();
}

/* Made on request, named DEVmon, up, gone on request and with the device. */
TEST_F(lo, create_delete)
{
	char buf[64];

	ASSERT_LE(0, read_text("/sys/class/infiniband/sib0/capture", buf,
			       sizeof(buf)));
	EXPECT_STREQ("\n", buf);
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	ASSERT_LE(0, read_text("/sys/class/infiniband/sib0/capture", buf,
			       sizeof(buf)));
	EXPECT_STREQ("sib0mon\n", buf);
	EXPECT_EQ(0, sh("ip -d link show sib0mon | grep -q 'link/ether' && "
			"ip link show sib0mon | grep -q 'state UNKNOWN\\|,UP'"));
	/* Again: nothing changes. */
	EXPECT_EQ(0, capture_set("", "sib0", 1));
	/* It stays where its device is. */
	EXPECT_EQ(0, sh("ip netns add " NSA));
	EXPECT_NE(0, shq("ip link set sib0mon netns " NSA));
	shq("ip netns del " NSA);
	/* Not a way to delete it: only the attribute. */
	EXPECT_NE(0, shq("ip link del sib0mon"));
	EXPECT_EQ(0, capture_set("", "sib0", 0));
	EXPECT_NE(0, shq("ip link show sib0mon"));
	EXPECT_EQ(0, capture_set("", "sib0", 0));
	EXPECT_NE(0, shq("echo 1 > /sys/class/infiniband/sib0/capture_x"));
	EXPECT_NE(0, shq("echo maybe > /sys/class/infiniband/sib0/capture"));
	/* With the device. */
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_NE(0, shq("ip link show sib0mon"));
	/* And with the module. */
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	EXPECT_EQ(0, module_unload());
	EXPECT_NE(0, shq("ip link show sib0mon"));
	EXPECT_EQ(0, module_load());
}

/*
 * Present but not listened to: the local path keeps its shortcuts. A
 * packet socket bound to every netdev ("tcpdump -i any", but also DHCP
 * clients or lldpd) is no listener of sib0mon: it must not make every
 * packet pay for a copy.
 */
TEST_F(lo, unobserved)
{
	long long acks = link_counter("sib0", "local_acks");

	ASSERT_EQ(0, capture_set("", "sib0", 1));
	ASSERT_EQ(0, tcpdump_start("", "any"));
	EXPECT_EQ(0, run_tool("", "sib0", "ib_write_bw", "-x 1 -n 200 -s 8192",
			      "localhost"));
	tcpdump_stop();
	EXPECT_LT(acks, link_counter("sib0", "local_acks"));
	EXPECT_LT(0, link_counter("sib0", "local_bursts"));
	EXPECT_EQ(0, sh("test $(cat /sys/class/net/sib0mon/statistics/tx_packets) = 0"));
}

TEST_F_TIMEOUT(lo, local_traffic, 600)
{
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	ASSERT_EQ(0, tcpdump_start("", "sib0mon"));
	traffic(_metadata, "", "sib0", "localhost");
	tcpdump_stop();
	check_pcap(_metadata);
	sh("tshark -r " PCAP " -c 3 -Y 'infiniband.bth.opcode == 10' -V 2>/dev/null "
	   "| sed -n '/^Frame/,/Invariant CRC/p' | head -n 80 | sed 's/^/# /'");
	EXPECT_EQ(0, sh("test $(cat /sys/class/net/sib0mon/statistics/tx_packets) -gt 100"));
}

/* The netdev goes while packets are shown on it, again and again. */
TEST_F_TIMEOUT(lo, delete_busy, 300)
{
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	ASSERT_EQ(0, sh("(timeout 100 ib_write_bw -d sib0 -x 1 -s 64 -D 20 "
			">/dev/null 2>&1 &) ; sleep 0.5; "
			"(timeout 100 ib_write_bw -d sib0 -x 1 -s 64 -D 20 localhost "
			">/dev/null 2>&1 &)"));
	for (int i = 0; i < 15; i++) {
		ASSERT_EQ(0, capture_set("", "sib0", 1));
		shq("timeout 0.7 tcpdump -q -c 200 -i sib0mon -w /dev/null 2>/dev/null &"
		    " sleep 0.5");
		ASSERT_EQ(0, capture_set("", "sib0", 0));
	}
	ASSERT_EQ(0, capture_set("", "sib0", 1));
	shq("timeout 2 tcpdump -q -i sib0mon -w /dev/null 2>/dev/null & sleep 1");
	/* The device goes with a listened-to capture netdev and traffic. */
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_NE(0, shq("ip link show sib0mon"));
	shq("pkill -x ib_write_bw; sleep 1");
}

/* ---- the wire: veth between two namespaces -------------------------------- */

FIXTURE(wire) {
	struct sib_topo t;
};

static void wire_cleanup(struct sib_topo *t)
{
	shq("[ -f " USERNS_PID " ] && kill $(cat " USERNS_PID "); rm -f " USERNS_PID);
	sib_topo_down(t);
}

/* Neighbours resolved before a QP needs them (as sib_wire does). */
FIXTURE_SETUP(wire)
{
	self->t = (struct sib_topo){
		.kind = SIB_TOPO_VETH, .tag = TAG,
		.flags = SIB_TOPO_LO_UP | SIB_TOPO_NEIGH,
	};
	wire_cleanup(&self->t);
	ASSERT_EQ(0, sib_topo_up(&self->t)) TH_LOG("%s", self->t.err);
}

FIXTURE_TEARDOWN(wire)
{
	shq("kill $(cat /tmp/sib_capture.pid) 2>/dev/null");
	wire_cleanup(&self->t);
}

/*
 * Both ends' capture netdevs: A sees what A sends and receives. Server
 * in A, client in B; the client's packets are A's received ones.
 */
TEST_F_TIMEOUT(wire, veth_traffic, 600)
{
	int ga = self->t.gid[0], gb = self->t.gid[1];
	char srv[256], cli[256];

	ASSERT_EQ(0, capture_set("", "sibA", 1));
	ASSERT_EQ(0, sh("ip netns exec " NSA " ip link show sibAmon >/dev/null"));
	ASSERT_EQ(0, tcpdump_start(NSA, "sibAmon"));
	for (int i = 0; i < 5; i++) {
		static const char * const t[][2] = {
			{ "ibv_rc_pingpong", "-g %d -n 10 -s 2000" },
			{ "ib_write_bw", "-x %d -n 20 -s 3000" },
			{ "ib_read_bw", "-x %d -n 20 -s 3000" },
			{ "ib_atomic_bw", "-x %d -n 20" },
			{ "ib_atomic_bw", "-x %d -n 20 -A CMP_AND_SWAP" },
		};
		char a[64], b[64];

		snprintf(a, sizeof(a), t[i][1], ga);
		snprintf(b, sizeof(b), t[i][1], gb);
		snprintf(srv, sizeof(srv),
			 "ip netns exec " NSA " timeout 120 %s -d sibA %s",
			 t[i][0], a);
		snprintf(cli, sizeof(cli),
			 "ip netns exec " NSB " timeout 120 %s -d sibB %s " IP4A,
			 t[i][0], b);
		EXPECT_EQ(0, tcp_pair(LOG, NSA, srv, cli));
	}
	snprintf(srv, sizeof(srv),
		 "ip netns exec " NSA " timeout 120 ibv_ud_pingpong -d sibA -g %d -n 10 -s 500",
		 ga);
	snprintf(cli, sizeof(cli),
		 "ip netns exec " NSB " timeout 120 ibv_ud_pingpong -d sibB -g %d -n 10 -s 500 " IP4A,
		 gb);
	EXPECT_EQ(0, tcp_pair(LOG, NSA, srv, cli));
	tcpdump_stop();
	check_pcap(_metadata);
	/* Both directions: frames from A's address and to it. */
	EXPECT_LT(0, sh_num("awk -F'\\t' '$3 == \"" IP4A "\"' " FIELDS " | wc -l"));
	EXPECT_LT(0, sh_num("awk -F'\\t' '$4 == \"" IP4A "\"' " FIELDS " | wc -l"));
}

/* The capture netdev goes with its namespace; the device survives it. */
TEST_F_TIMEOUT(wire, netns_dies, 120)
{
	ASSERT_EQ(0, capture_set("", "sibA", 1));
	/* The device follows its netdev to another namespace: the netdev goes. */
	ASSERT_EQ(0, sh("ip netns add sibcapc && ip -n " NSA " link set " IFA " netns sibcapc"));
	EXPECT_NE(0, shq("ip -n " NSA " link show sibAmon"));
	EXPECT_EQ(0, capture_set("", "sibA", 1));
	EXPECT_EQ(0, sh("ip -n sibcapc link show sibAmon >/dev/null"));
	/* The namespace dies: its veth and capture netdev go, sibA with them. */
	shq("ip netns del sibcapc; sleep 2");
	EXPECT_NE(0, shq("rdma link show sibA/1"));
}

/*
 * Refused in a namespace that another user namespace owns: its root would
 * see every user's packets on the capture netdev, the local path's too.
 */
TEST_F_TIMEOUT(wire, userns_refused, 120)
{
	char buf[64];

	ASSERT_EQ(0, sh("unshare --user --map-root-user --net sleep 120 & "
			"echo $! > " USERNS_PID "; sleep 1; "
			"ip -n " NSA " link set " IFA " netns $(cat " USERNS_PID ")"));
	/* sibA followed its netdev there. */
	EXPECT_EQ(0, sh("nsenter -t $(cat " USERNS_PID ") -n ip link show " IFA " >/dev/null && "
			"rdma link show sibA/1 >/dev/null"));
	EXPECT_EQ(EPERM, write_errno("/sys/class/infiniband/sibA/capture", "1"));
	ASSERT_LE(0, read_text("/sys/class/infiniband/sibA/capture", buf,
			       sizeof(buf)));
	EXPECT_STREQ("\n", buf);
	/* Where the initial user namespace owns the namespace, it is made. */
	EXPECT_EQ(0, capture_set("", "sibB", 1));
	EXPECT_EQ(0, sh("ip -n " NSB " link show sibBmon >/dev/null"));
	/* The namespace dies: the veth goes, both ends, sibA and sibB with it. */
	shq("kill $(cat " USERNS_PID "); sleep 2");
	EXPECT_NE(0, shq("rdma link show sibA/1"));
}

SIB_HARNESS_MAIN
