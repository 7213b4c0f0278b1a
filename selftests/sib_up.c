// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * One host, one command: scripts/sib-up makes a sib device on its own
 * dummy netdev (or lo), prints what to use, does nothing more when run
 * again, and --down removes what it made. And containers: a device in a
 * network namespace used by an unprivileged process (uid 65534, no
 * capabilities) that has the namespace and /dev/infiniband and nothing
 * else, in ib_core's shared and exclusive netns modes.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define OUT1	"/tmp/sib_up.1"
#define OUT2	"/tmp/sib_up.2"
#define LOG	"/tmp/sib_up.log"
#define NS	"sibup"
/* Drop to nobody: no capabilities, none to gain. */
#define NOBODY	"setpriv --reuid 65534 --regid 65534 --clear-groups " \
		"--inh-caps=-all --bounding-set=-all --no-new-privs "

/* The number after "@key=" in sib-up's output @file, or -1. */
static int out_int(const char *file, const char *key)
{
	char buf[4096], *p;
	char pat[64];

	if (read_text(file, buf, sizeof(buf)) <= 0)
		return -1;
	snprintf(pat, sizeof(pat), "%s=", key);
	p = strstr(buf, pat);
	return p ? atoi(p + strlen(pat)) : -1;
}

/*
 * ibv_rc_pingpong against itself on @dev with GID index @gid, the client
 * connecting to @addr; @pre runs both ("ip netns exec NS" and/or
 * NOBODY). Data checked (-c); output in LOG, shown on failure.
 */
static int pingpong(const char *pre, const char *dev, int gid, const char *addr)
{
	int ret;

	ret = sh("%s bash -c '(timeout 60 ibv_rc_pingpong -d %s -g %d -n 20 -s 4096 -c & "
		 "for i in $(seq 100); do ss -Hltn \"sport = :18515\" | grep -q . && break; "
		 "sleep 0.1; done; timeout 60 ibv_rc_pingpong -d %s -g %d -n 20 -s 4096 -c %s; "
		 "c=$?; wait $!; s=$?; echo \"client $c server $s\"; [ $c = 0 ] && [ $s = 0 ])' "
		 ">" LOG " 2>&1", pre, dev, gid, dev, gid, addr);
	if (ret)
		sh("sed 's/^/# /' " LOG);
	return ret;
}

static void up_cleanup(void)
{
	shq("%s --down", repo_script("sib-up"));
	shq("%s --down --name sibl", repo_script("sib-up"));
	sib_delete_all();
	shq("ip link del sibdummy0");
	shq("rm -rf /run/sib-up");
	module_unload();
}

FIXTURE(up) {
	const char *up;
};

FIXTURE_SETUP(up)
{
	up_cleanup();
	self->up = repo_script("sib-up");
	ASSERT_FALSE(module_loaded());
}

FIXTURE_TEARDOWN(up)
{
	up_cleanup();
}

/*
 * Twice the same output, eval-able, one device and one address; a verbs
 * pingpong with the GID index printed; --down leaves nothing: no device,
 * no dummy netdev, no module (sib-up loaded it).
 */
TEST_F_TIMEOUT(up, twice_then_down, 120)
{
	int gid;

	ASSERT_EQ(0, sh("%s >" OUT1, self->up));
	ASSERT_EQ(0, sh("%s >" OUT2, self->up));
	EXPECT_EQ(0, sh("diff " OUT1 " " OUT2 " | sed 's/^/# /'; cmp -s " OUT1 " " OUT2));
	EXPECT_EQ(0, sh("grep -qx SIB_DEV=sib0 " OUT1 " && grep -qx SIB_NETDEV=sibdummy0 " OUT1
			" && grep -qx SIB_ADDR=10.231.0.1 " OUT1));
	/* eval-able: every line an assignment or a comment */
	EXPECT_EQ(0, sh("! grep -qvE '^(SIB_[A-Z_]+=[^ ]+|#.*)$' " OUT1 " && "
			"(eval \"$(cat " OUT1 ")\" && [ \"$SIB_DEV\" = sib0 ])"));
	gid = out_int(OUT1, "SIB_GID_INDEX");
	ASSERT_LE(0, gid);
	EXPECT_EQ(gid_index("sib0", "10.231.0.1"), gid);
	EXPECT_EQ(0, sh("rdma link show | grep -c 'link sib0/' | grep -qx 1"));
	EXPECT_EQ(0, sh("ip -o addr show dev sibdummy0 | grep -c 'inet 10.231.0.1/24' | grep -qx 1"));
	EXPECT_EQ(0, sh("ip -d link show sibdummy0 | grep -qw dummy"));
	EXPECT_TRUE(module_loaded());
	ASSERT_EQ(0, pingpong("", "sib0", gid, "10.231.0.1"));

	ASSERT_EQ(0, sh("%s --down >/dev/null", self->up));
	EXPECT_NE(0, shq("rdma link show sib0/1"));
	EXPECT_NE(0, shq("ip link show sibdummy0"));
	EXPECT_FALSE(module_loaded());
	/* and again: nothing to do, no error */
	EXPECT_EQ(0, sh("%s --down >/dev/null", self->up));
}

/* A module that was loaded before stays loaded after --down. */
TEST_F_TIMEOUT(up, module_not_ours, 120)
{
	ASSERT_EQ(0, module_load());
	ASSERT_EQ(0, sh("%s >/dev/null", self->up));
	ASSERT_EQ(0, sh("%s --down >/dev/null", self->up));
	EXPECT_NE(0, shq("rdma link show sib0/1"));
	EXPECT_NE(0, shq("ip link show sibdummy0"));
	EXPECT_TRUE(module_loaded());
}

/* --from-tree: insmod of the tree's rdma_sib.ko (its dependencies first). */
TEST_F_TIMEOUT(up, from_tree, 120)
{
	ASSERT_EQ(0, sh("%s --from-tree --name sibt >" OUT1, self->up));
	EXPECT_TRUE(module_loaded());
	EXPECT_EQ(0, sh("grep -qx SIB_DEV=sibt " OUT1));
	EXPECT_LE(0, gid_index("sibt", "10.231.0.1"));
	ASSERT_EQ(0, sh("%s --down --name sibt >/dev/null", self->up));
	EXPECT_FALSE(module_loaded());
}

/* --netdev lo: 127.0.0.1, lo left alone by --down. */
TEST_F_TIMEOUT(up, lo, 120)
{
	int gid;

	ASSERT_EQ(0, sh("%s --netdev lo --name sibl >" OUT1, self->up));
	EXPECT_EQ(0, sh("grep -qx SIB_NETDEV=lo " OUT1 " && grep -qx SIB_ADDR=127.0.0.1 " OUT1));
	gid = out_int(OUT1, "SIB_GID_INDEX");
	ASSERT_LE(0, gid);
	EXPECT_EQ(gid_index("sibl", "127.0.0.1"), gid);
	ASSERT_EQ(0, pingpong("", "sibl", gid, "127.0.0.1"));
	ASSERT_EQ(0, sh("%s --down --name sibl >/dev/null", self->up));
	EXPECT_NE(0, shq("rdma link show sibl/1"));
	EXPECT_EQ(0, sh("ip link show lo | grep -q UP"));
	EXPECT_EQ(0, sh("ip -o addr show dev lo | grep -q 'inet 127.0.0.1/8'"));
}

/* The name is taken by a device on another netdev: refused, left alone. */
TEST_F_TIMEOUT(up, name_taken, 120)
{
	ASSERT_EQ(0, module_load());
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	EXPECT_NE(0, sh("%s 2>" LOG " >/dev/null", self->up));
	EXPECT_EQ(0, sh("grep -q 'exists already' " LOG));
	EXPECT_TRUE(ibdev_exists("sib0"));
	EXPECT_EQ(0, sh("rdma link show sib0/1 | grep -q 'netdev lo'"));
}

/* ---- containers --------------------------------------------------------- */

static void ns_cleanup(void)
{
	sib_delete_all();
	shq("ip netns exec " NS " rdma link del sibx");
	shq("ip netns del " NS);
	shq("rm -rf /run/sib-up");
	/* ib_core refuses a change of mode while other namespaces exist. */
	for (int i = 0; i < 50 && shq("rdma system set netns shared"); i++)
		usleep(100000);
}

FIXTURE(ns) {
	int unused;
};

FIXTURE_SETUP(ns)
{
	ASSERT_EQ(0, module_load());
	ns_cleanup();
	ASSERT_EQ(0, sh("rdma system show | grep -q 'netns shared'"));
}

FIXTURE_TEARDOWN(ns)
{
	ns_cleanup();
}

/*
 * Shared mode (ib_core's default): sib-up inside the namespace makes the
 * dummy netdev and the device there; nobody in the namespace runs
 * ibv_rc_pingpong over it. Without /dev/infiniband (a tmpfs over it) the
 * same process finds no device. The device is visible from init_net too:
 * that is what shared means.
 */
TEST_F_TIMEOUT(ns, shared_unprivileged, 120)
{
	int gid;

	ASSERT_EQ(0, sh("ip netns add " NS));
	ASSERT_EQ(0, sh("ip netns exec " NS " %s --name sibn >" OUT1, repo_script("sib-up")));
	gid = out_int(OUT1, "SIB_GID_INDEX");
	ASSERT_LE(0, gid);
	EXPECT_NE(0, shq("ip link show sibdummy0"));	/* not in init_net */
	EXPECT_EQ(0, sh("ip netns exec " NS " " NOBODY "grep -q 'CapEff:.0000000000000000' "
			"/proc/self/status"));
	ASSERT_EQ(0, pingpong("ip netns exec " NS " " NOBODY, "sibn", gid, "10.231.0.1"));
	EXPECT_NE(0, sh("ip netns exec " NS " unshare -m sh -c 'mount -t tmpfs none /dev/infiniband && "
			NOBODY "ibv_devinfo -d sibn' >" LOG " 2>&1"));
	EXPECT_EQ(0, sh(NOBODY "ibv_devices | grep -qw sibn"));
	ASSERT_EQ(0, sh("ip netns exec " NS " %s --down --name sibn >/dev/null",
			repo_script("sib-up")));
	EXPECT_FALSE(ibdev_exists("sibn"));
	EXPECT_NE(0, shq("ip -n " NS " link show sibdummy0"));
}

/* The GID index of @addr on @dev as seen from namespace NS, or -1. */
static int ns_gid_index(const char *dev, const char *addr)
{
	char cmd[512];
	FILE *f;
	int idx = -1;

	snprintf(cmd, sizeof(cmd),
		 "ip netns exec " NS " sh -c 'for i in $(seq 50); do "
		 "for g in /sys/class/infiniband/%s/ports/1/gids/*; do "
		 "grep -qx 0000:0000:0000:0000:0000:ffff:%s $g && "
		 "{ echo ${g##*/}; exit 0; }; done; sleep 0.1; done; echo -1'",
		 dev, addr);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	if (fscanf(f, "%d", &idx) != 1)
		idx = -1;
	pclose(f);
	return idx;
}

/*
 * Exclusive mode: the device lives in the namespace (rdma dev set ...
 * netns), init_net no longer sees it; nobody in the namespace runs
 * ibv_rc_pingpong and rping (rdma_cm) over it, nobody outside cannot open it.
 */
TEST_F_TIMEOUT(ns, exclusive_unprivileged, 120)
{
	int gid;

	ASSERT_EQ(0, sh("rdma system set netns exclusive"));
	ASSERT_EQ(0, sh("ip netns add " NS " && ip -n " NS " link add sibdx type dummy && "
			"ip -n " NS " link set sibdx up && ip -n " NS " link set lo up && "
			"ip -n " NS " addr add 10.231.0.1/24 dev sibdx"));
	ASSERT_EQ(0, sh("ip netns exec " NS " rdma link add sibx type sib netdev sibdx"));
	/* ib_core 6.1 registers a new device in init_net; move it. */
	ASSERT_EQ(0, sh("rdma dev set sibx netns " NS));
	EXPECT_NE(0, shq("rdma dev show sibx"));
	EXPECT_EQ(0, sh("ip netns exec " NS " rdma dev show sibx >/dev/null"));
	gid = ns_gid_index("sibx", "0ae7:0001");
	ASSERT_LE(0, gid);
	ASSERT_EQ(0, pingpong("ip netns exec " NS " " NOBODY, "sibx", gid, "10.231.0.1"));
	EXPECT_EQ(0, sh("ip netns exec " NS " " NOBODY "bash -c '"
			"(timeout 60 rping -s -a 10.231.0.1 -C 10 -V & sleep 2; "
			"timeout 30 rping -c -a 10.231.0.1 -C 10 -V; c=$?; wait $!; s=$?; "
			"[ $c = 0 ] && [ $s = 0 ])' >" LOG " 2>&1 || { sed 's/^/# /' " LOG "; exit 1; }"));
	EXPECT_NE(0, shq(NOBODY "ibv_devinfo -d sibx"));
	EXPECT_NE(0, shq("ibv_devices | grep -qw sibx"));
}

/* "-t NAME" (repeatable) runs only those tests, "-l" lists them. */
int main(int argc, char **argv)
{
	return sib_harness_main(argc, argv);
}
