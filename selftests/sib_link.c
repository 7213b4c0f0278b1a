// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib device life cycle: module load and unload, "rdma link add/delete" on
 * lo, veth and dummy, refusal of bad netdevs with the right errno and a
 * dmesg line, removal when the netdev or its namespace goes away, port
 * state following the carrier, and load/add/delete/unload cycles.
 *
 * Runs as root inside the VM (scripts/vm-run), which must not have loaded
 * the module (--no-load): these tests load and unload it themselves.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"

#define GONE_MS 10000

static void cleanup_netdevs(void)
{
	shq("ip link del sibva");
	shq("ip link del sibdum0");
	shq("ip link del sibtun0");
	shq("ip netns del sibns");
}

static void veth_up(void)
{
	sh("ip link add sibva type veth peer name sibvb && "
	   "ip link set sibva up && ip link set sibvb up");
}

static bool port_state_is(const char *ibdev, const char *state)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s/ports/1/state", ibdev);
	if (read_text(path, buf, sizeof(buf)) < 0)
		return false;
	return strstr(buf, state) != NULL;
}

static bool wait_port_state(const char *ibdev, const char *state)
{
	for (int i = 0; i < 250; i++) {
		if (port_state_is(ibdev, state))
			return true;
		usleep(20000);
	}
	return false;
}

FIXTURE(link) {
	int unused;
};

FIXTURE_SETUP(link)
{
	cleanup_netdevs();
	ASSERT_EQ(0, module_load());
	sib_delete_all();
	dmesg_clear();
}

FIXTURE_TEARDOWN(link)
{
	if (module_loaded())
		sib_delete_all();
	cleanup_netdevs();
}

TEST(module_load_unload)
{
	ASSERT_EQ(0, module_unload());
	ASSERT_FALSE(module_loaded());
	dmesg_clear();
	ASSERT_EQ(0, module_load());
	ASSERT_TRUE(module_loaded());
	EXPECT_EQ(0, module_refcnt());
	EXPECT_TRUE(dmesg_has("rdma_sib: loaded"));
	ASSERT_EQ(0, module_unload());
	ASSERT_FALSE(module_loaded());
	EXPECT_TRUE(dmesg_has("rdma_sib: unloaded"));
}

/* "rdma link add ... type sib" loads the module through rdma-link-sib. */
TEST(link_add_autoloads_module)
{
	ASSERT_EQ(0, module_unload());
	ASSERT_FALSE(module_loaded());
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	EXPECT_TRUE(module_loaded());
	EXPECT_TRUE(ibdev_exists("sib0"));
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_EQ(0, module_unload());
}

TEST_F(link, add_delete_lo)
{
	char buf[64];

	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	ASSERT_TRUE(ibdev_exists("sib0"));
	ASSERT_LT(0, read_text(SIB_SYSFS_IB "/sib0/sib_abi", buf, sizeof(buf)));
	EXPECT_STREQ("sib 1\n", buf);
	ASSERT_LT(0, read_text(SIB_SYSFS_IB "/sib0/netdev", buf, sizeof(buf)));
	EXPECT_STREQ("lo\n", buf);
	EXPECT_TRUE(dmesg_has("sib0: added on netdev lo"));
	/* The iproute2 front end works too. */
	ASSERT_EQ(0, sh("rdma link show sib0/1 | grep -q 'netdev lo'"));
	ASSERT_EQ(0, shq("rdma link delete sib0"));
	EXPECT_FALSE(ibdev_exists("sib0"));
	EXPECT_TRUE(dmesg_has("sib0: removed (netdev lo)"));
	/* And the netdev can be bound again. */
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	EXPECT_EQ(0, nl_dellink("sib0"));
}

TEST_F(link, add_delete_veth)
{
	veth_up();
	ASSERT_EQ(0, nl_newlink("sibv", "sib", "sibva"));
	ASSERT_TRUE(ibdev_exists("sibv"));
	EXPECT_TRUE(wait_port_state("sibv", "ACTIVE"));
	ASSERT_EQ(0, nl_dellink("sibv"));
	EXPECT_FALSE(ibdev_exists("sibv"));
}

TEST_F(link, add_delete_dummy)
{
	ASSERT_EQ(0, sh("ip link add sibdum0 type dummy && ip link set sibdum0 up"));
	ASSERT_EQ(0, nl_newlink("sibd", "sib", "sibdum0"));
	ASSERT_TRUE(ibdev_exists("sibd"));
	EXPECT_TRUE(wait_port_state("sibd", "ACTIVE"));
	ASSERT_EQ(0, nl_dellink("sibd"));
	EXPECT_FALSE(ibdev_exists("sibd"));
}

TEST_F(link, two_devices_on_two_netdevs)
{
	veth_up();
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "sibva"));
	ASSERT_EQ(0, nl_newlink("sib1", "sib", "sibvb"));
	EXPECT_TRUE(ibdev_exists("sib0"));
	EXPECT_TRUE(ibdev_exists("sib1"));
	EXPECT_EQ(2, sib_delete_all());
}

TEST_F(link, refuse_missing_netdev)
{
	EXPECT_EQ(-ENODEV, nl_newlink("sib0", "sib", "nosuchdev0"));
	EXPECT_FALSE(ibdev_exists("sib0"));
}

TEST_F(link, refuse_unsuitable_netdev)
{
	/* A tun device is ARPHRD_NONE: no Ethernet header, no MAC. */
	ASSERT_EQ(0, sh("modprobe tun && ip tuntap add dev sibtun0 mode tun"));
	EXPECT_EQ(-EINVAL, nl_newlink("sib0", "sib", "sibtun0"));
	EXPECT_FALSE(ibdev_exists("sib0"));
	EXPECT_TRUE(dmesg_has("netdev sibtun0 is unsuitable"));
}

TEST_F(link, refuse_netdev_in_use)
{
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	EXPECT_EQ(-EEXIST, nl_newlink("sib1", "sib", "lo"));
	EXPECT_FALSE(ibdev_exists("sib1"));
	EXPECT_TRUE(ibdev_exists("sib0"));
	EXPECT_TRUE(dmesg_has("netdev lo is already used by sib0"));
}

TEST_F(link, refuse_duplicate_name)
{
	ASSERT_EQ(0, sh("ip link add sibdum0 type dummy"));
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	EXPECT_EQ(-EEXIST, nl_newlink("sib0", "sib", "sibdum0"));
	EXPECT_TRUE(ibdev_exists("sib0"));
	EXPECT_TRUE(dmesg_has("device name sib0 is already taken"));
	/* The refused netdev was released: it can be bound now. */
	EXPECT_EQ(0, nl_newlink("sib1", "sib", "sibdum0"));
}

TEST_F(link, netdev_delete_removes_device)
{
	veth_up();
	ASSERT_EQ(0, nl_newlink("sibv", "sib", "sibva"));
	ASSERT_EQ(0, sh("ip link del sibva"));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/sibv", false, GONE_MS));
	EXPECT_TRUE(dmesg_has("sibv: removed (netdev sibva)"));
	/* No dangling reference: the module unloads. */
	EXPECT_EQ(0, module_refcnt());
	EXPECT_EQ(0, module_unload());
}

TEST_F(link, netns_move_keeps_then_destroy_removes)
{
	ASSERT_EQ(0, sh("ip netns add sibns && "
			"ip link add sibva type veth peer name sibvb"));
	ASSERT_EQ(0, nl_newlink("sibn", "sib", "sibvb"));
	/* Moving the netdev to another namespace keeps the device. */
	ASSERT_EQ(0, sh("ip link set sibvb netns sibns"));
	usleep(200000);
	EXPECT_TRUE(ibdev_exists("sibn"));
	/* Destroying the namespace destroys the veth, and the device. */
	ASSERT_EQ(0, sh("ip netns del sibns"));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/sibn", false, GONE_MS));
	EXPECT_EQ(0, module_unload());
}

TEST_F(link, port_state_follows_carrier)
{
	veth_up();
	ASSERT_EQ(0, nl_newlink("sibv", "sib", "sibva"));
	ASSERT_TRUE(wait_port_state("sibv", "ACTIVE"));
	ASSERT_EQ(0, sh("ip link set sibvb down"));
	EXPECT_TRUE(wait_port_state("sibv", "DOWN"));
	ASSERT_EQ(0, sh("ip link set sibvb up"));
	EXPECT_TRUE(wait_port_state("sibv", "ACTIVE"));
	ASSERT_EQ(0, sh("ip link set sibva down"));
	EXPECT_TRUE(wait_port_state("sibv", "DOWN"));
}

TEST_F(link, unload_with_devices)
{
	veth_up();
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
	ASSERT_EQ(0, nl_newlink("sib1", "sib", "sibva"));
	ASSERT_EQ(0, module_unload());
	EXPECT_FALSE(module_loaded());
	EXPECT_FALSE(ibdev_exists("sib0"));
	EXPECT_FALSE(ibdev_exists("sib1"));
	/* The netdevs were released: they can be deleted at once. */
	EXPECT_EQ(0, sh("ip link del sibva"));
}

TEST_F_TIMEOUT(link, ten_load_add_delete_unload_cycles, 300)
{
	ASSERT_EQ(0, sh("ip link add sibdum0 type dummy && ip link set sibdum0 up"));
	for (int i = 0; i < 10; i++) {
		ASSERT_EQ(0, module_load());
		ASSERT_EQ(0, module_refcnt());
		ASSERT_EQ(0, nl_newlink("sib0", "sib", "lo"));
		ASSERT_EQ(0, nl_newlink("sib1", "sib", "sibdum0"));
		ASSERT_EQ(0, nl_dellink("sib0"));
		/* sib1 is left for the unload to remove. */
		ASSERT_EQ(0, module_refcnt());
		ASSERT_EQ(0, module_unload()) TH_LOG("cycle %d", i);
		ASSERT_FALSE(module_loaded());
	}
}

SIB_HARNESS_MAIN
