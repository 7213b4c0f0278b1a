// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib from user space through libibverbs and libsib: the device is found
 * by its sysfs attribute (also after a rename), query_device and
 * query_port report honest values, the GID table holds the netdev's
 * addresses, PDs come and go, port events arrive, and a device whose
 * netdev vanishes under an open context goes away without waiting for the
 * process.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"
#include "sib_pair.h"
#include "sib_topo.h"
#include "../uapi/rdma_user_sib.h"

#define MAC	"02:00:5e:10:20:30"
#define IP4	"192.0.2.1"
#define IP6	"2001:db8::1"
#define SIB_VENDOR_ID_EXPECTED	0x5a1b00

static bool gid_present(struct ibv_context *ctx, const char *addr, int len)
{
	union ibv_gid gid, want = {};

	if (strchr(addr, ':')) {
		inet_pton(AF_INET6, addr, want.raw);
	} else {
		want.raw[10] = 0xff;
		want.raw[11] = 0xff;
		inet_pton(AF_INET, addr, want.raw + 12);
	}
	for (int i = 0; i < len; i++)
		if (!ibv_query_gid(ctx, 1, i, &gid) &&
		    !memcmp(&gid, &want, sizeof(gid)))
			return true;
	return false;
}

static bool wait_gid(struct ibv_context *ctx, const char *addr, int len)
{
	for (int i = 0; i < 250; i++) {
		if (gid_present(ctx, addr, len))
			return true;
		usleep(20000);
	}
	return false;
}

/* Wait up to @ms for an async event of type @type. */
static bool wait_async(struct ibv_context *ctx, enum ibv_event_type type,
		       int ms)
{
	struct pollfd p = { .fd = ctx->async_fd, .events = POLLIN };
	struct ibv_async_event ev;

	while (poll(&p, 1, ms) == 1) {
		if (ibv_get_async_event(ctx, &ev))
			return false;
		ibv_ack_async_event(&ev);
		if (ev.event_type == type)
			return true;
	}
	return false;
}

FIXTURE(dev) {
	struct ibv_context *ctx;
};

FIXTURE_SETUP(dev)
{
	shq("ip link del sibva");
	ASSERT_EQ(0, module_load());
	sib_delete_all();
	ASSERT_EQ(0, sh("ip link add sibva address " MAC " type veth peer name sibvb && "
			"ip addr add " IP4 "/24 dev sibva && "
			"ip addr add " IP6 "/64 nodad dev sibva && "
			"ip link set sibva up && ip link set sibvb up"));
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "sibva"));
	self->ctx = pair_open_dev("sib0");
	ASSERT_NE(NULL, self->ctx) TH_LOG("libsib did not open sib0");
}

FIXTURE_TEARDOWN(dev)
{
	if (self->ctx)
		ibv_close_device(self->ctx);
	sib_delete_all();
	shq("ip link del sibva");
}

TEST_F(dev, sysfs_abi_attribute)
{
	char buf[64];

	ASSERT_LT(0, read_text(SIB_SYSFS_IB "/sib0/" SIB_SYSFS_ATTR, buf,
			       sizeof(buf)));
	EXPECT_STREQ("sib 1\n", buf);
	ASSERT_LT(0, read_text(SIB_SYSFS_IB "/sib0/netdev", buf, sizeof(buf)));
	EXPECT_STREQ("sibva\n", buf);
}

TEST_F(dev, query_device)
{
	struct ibv_device_attr_ex ax = {};
	struct ibv_device_attr *a = &ax.orig_attr;
	/* Modified EUI-64 of 02:00:5e:10:20:30 */
	const uint8_t guid[8] = { 0x00, 0x00, 0x5e, 0xff, 0xfe, 0x10, 0x20, 0x30 };

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	EXPECT_EQ(SIB_VENDOR_ID_EXPECTED, a->vendor_id);
	EXPECT_NE(0, a->vendor_part_id);
	EXPECT_EQ(0, memcmp(&a->node_guid, guid, 8));
	EXPECT_EQ(a->node_guid, a->sys_image_guid);
	EXPECT_STREQ("0.1.0", a->fw_ver);
	EXPECT_EQ(1, a->phys_port_cnt);
	EXPECT_EQ(0x10000, a->max_pd);
	EXPECT_EQ(1, a->max_pkeys);
	EXPECT_NE(0, a->device_cap_flags & IBV_DEVICE_PORT_ACTIVE_EVENT);
	EXPECT_EQ(0x10000, a->max_qp);
	EXPECT_EQ(0x4000, a->max_qp_wr);
	EXPECT_EQ(32, a->max_sge);
	EXPECT_EQ(0x10000, a->max_cq);
	EXPECT_EQ(0x10000, a->max_cqe);
	EXPECT_EQ(0x40000, a->max_mr);
	EXPECT_EQ(0x1000, a->max_srq);
	EXPECT_EQ(128, a->max_qp_rd_atom);
	EXPECT_EQ(128, a->max_qp_init_rd_atom);
	EXPECT_EQ(IBV_ATOMIC_HCA, a->atomic_cap);
	EXPECT_NE(0, a->device_cap_flags & IBV_DEVICE_MEM_WINDOW);
	EXPECT_NE(0, a->device_cap_flags & IBV_DEVICE_MEM_WINDOW_TYPE_2B);
	EXPECT_LT(4096, a->max_mr_size);
	EXPECT_EQ(0x10000, a->max_ah);
	EXPECT_EQ(256, a->max_mcast_grp);
	EXPECT_EQ(32, a->max_mcast_qp_attach);
	EXPECT_EQ(256 * 32, a->max_total_mcast_qp_attach);
}

TEST_F(dev, query_port)
{
	struct ibv_port_attr pa;

	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_PORT_ACTIVE, pa.state);
	EXPECT_EQ(5, pa.phys_state);	/* LinkUp */
	EXPECT_EQ(IBV_LINK_LAYER_ETHERNET, pa.link_layer);
	EXPECT_EQ(IBV_MTU_4096, pa.max_mtu);
	EXPECT_EQ(IBV_MTU_1024, pa.active_mtu);	/* netdev MTU 1500 */
	EXPECT_EQ(128, pa.gid_tbl_len);
	EXPECT_EQ(1, pa.pkey_tbl_len);
	EXPECT_LT(0x1000, pa.max_msg_sz);
	/* A port that does not exist is refused. */
	EXPECT_NE(0, ibv_query_port(self->ctx, 2, &pa));

	ASSERT_EQ(0, sh("ip link set sibva mtu 9000"));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_MTU_4096, pa.active_mtu);
	ASSERT_EQ(0, sh("ip link set sibva mtu 2200"));
	ASSERT_EQ(0, ibv_query_port(self->ctx, 1, &pa));
	EXPECT_EQ(IBV_MTU_2048, pa.active_mtu);
}

TEST_F(dev, gid_table_has_netdev_addresses)
{
	struct ibv_gid_entry e;

	EXPECT_TRUE(wait_gid(self->ctx, IP4, 128));
	EXPECT_TRUE(wait_gid(self->ctx, IP6, 128));
	/* Addresses added later appear, removed ones go. */
	ASSERT_EQ(0, sh("ip addr add 198.51.100.7/24 dev sibva"));
	EXPECT_TRUE(wait_gid(self->ctx, "198.51.100.7", 128));
	ASSERT_EQ(0, sh("ip addr del 198.51.100.7/24 dev sibva"));
	usleep(500000);
	EXPECT_FALSE(gid_present(self->ctx, "198.51.100.7", 128));
	/* Index 0 is the default GID, of RoCEv2 type. */
	ASSERT_EQ(0, ibv_query_gid_ex(self->ctx, 1, 0, &e, 0));
	EXPECT_EQ(IBV_GID_TYPE_ROCE_V2, e.gid_type);
}

TEST_F(dev, pkey)
{
	__be16 pkey;

	ASSERT_EQ(0, ibv_query_pkey(self->ctx, 1, 0, &pkey));
	EXPECT_EQ(0xffff, ntohs(pkey));
}

TEST_F(dev, devinfo_shows_active_port_and_gids)
{
	EXPECT_TRUE(wait_gid(self->ctx, IP4, 128));
	EXPECT_EQ(0, sh("ibv_devices | grep -q 'sib0'"));
	EXPECT_EQ(0, sh("ibv_devinfo -v -d sib0 > /tmp/devinfo.txt"));
	EXPECT_EQ(0, sh("grep -q 'PORT_ACTIVE' /tmp/devinfo.txt"));
	EXPECT_EQ(0, sh("grep -q 'link_layer:.*Ethernet' /tmp/devinfo.txt"));
	EXPECT_EQ(0, sh("grep -q '::ffff:" IP4 ".*RoCE v2' /tmp/devinfo.txt"));
	EXPECT_EQ(0, sh("grep -q '" IP6 ".*RoCE v2' /tmp/devinfo.txt"));
	EXPECT_EQ(0, sh("grep -q 'vendor_id:.*0x5a1b00' /tmp/devinfo.txt"));
}

TEST_F(dev, pd_alloc_free)
{
	struct ibv_pd *pd[256];

	for (int i = 0; i < 256; i++) {
		pd[i] = ibv_alloc_pd(self->ctx);
		ASSERT_NE(NULL, pd[i]) TH_LOG("PD %d: %s", i, strerror(errno));
	}
	for (int i = 0; i < 256; i++)
		ASSERT_EQ(0, ibv_dealloc_pd(pd[i]));
	/* PDs left allocated are reclaimed when the context closes. */
	for (int i = 0; i < 16; i++)
		ASSERT_NE(NULL, ibv_alloc_pd(self->ctx));
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_EQ(0, module_refcnt());
}

TEST_F(dev, unimplemented_verbs_say_eopnotsupp)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex tm = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ | IBV_SRQ_INIT_ATTR_TM,
		.srq_type = IBV_SRQT_TM,
		.pd = pd,
		.cq = cq,
		.tm_cap = { .max_num_tags = 4, .max_ops = 4 },
	};

	struct ibv_qp_init_attr qa = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 4, .max_recv_wr = 4,
			 .max_send_sge = 1, .max_recv_sge = 1 },
		.qp_type = IBV_QPT_RAW_PACKET,
	};
	struct ibv_qp_init_attr_ex qx = {
		.send_cq = cq,
		.recv_cq = cq,
		.cap = qa.cap,
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};
	struct ibv_device_attr_ex ax = {};
	struct ibv_qp *qp;

	ASSERT_NE(NULL, pd);
	ASSERT_NE(NULL, cq);
	/* Tag matching is not implemented (work queues are: sib_raw). */
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &tm));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/*
	 * Raw packet QPs are (sib_raw), through either call, with flow
	 * steering, but no raw_packet_caps: none of those offloads is.
	 */
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	EXPECT_EQ(0, ax.raw_packet_caps);
	EXPECT_LT(0, ax.orig_attr.max_raw_ethy_qp);
	EXPECT_NE(0, ax.orig_attr.device_cap_flags &
		  IBV_DEVICE_MANAGED_FLOW_STEERING);
	qp = ibv_create_qp(pd, &qa);
	EXPECT_NE(NULL, qp);
	if (qp)
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	qp = ibv_create_qp_ex(self->ctx, &qx);
	EXPECT_NE(NULL, qp);
	if (qp)
		EXPECT_EQ(0, ibv_destroy_qp(qp));
	ibv_destroy_cq(cq);
	ibv_dealloc_pd(pd);
}

TEST_F(dev, renamed_device_still_matched)
{
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	ASSERT_EQ(0, sh("rdma dev set sib0 name renamed7"));
	/*
	 * libibverbs keeps its device list per process, so look from a new
	 * one: ibv_devinfo opens a context through libsib and queries it.
	 */
	EXPECT_EQ(0, sh("ibv_devinfo -d renamed7 | grep -q 'vendor_id:.*0x5a1b00'"));
	ASSERT_EQ(0, sh("rdma dev set renamed7 name sib0"));
}

TEST_F(dev, port_events_follow_carrier)
{
	ASSERT_EQ(0, sh("ip link set sibvb down"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ERR, 5000));
	ASSERT_EQ(0, sh("ip link set sibvb up"));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_PORT_ACTIVE, 5000));
}

TEST_F(dev, netdev_delete_under_open_context)
{
	struct ibv_pd *pd = ibv_alloc_pd(self->ctx);

	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, sh("ip link del sibva"));
	/* The device goes away without waiting for this process. */
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/sib0", false, 10000));
	EXPECT_TRUE(wait_async(self->ctx, IBV_EVENT_DEVICE_FATAL, 5000));
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_pd(self->ctx));
	EXPECT_EQ(EIO, errno);
	ibv_dealloc_pd(pd);
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(0, module_unload());
}

/*
 * libsib claims sib devices only, and rdma_rxe's provider leaves ours
 * alone. On 6.1, rdma_rxe holds UDP port 4791 in init_net from the moment
 * it loads, so sib lives in another namespace here (see sib_wire for what
 * happens when both want the same one).
 */
FIXTURE(rxe) {
	struct sib_topo t;
};

/* rxe0 on sibva in init_net, sib0 on sibvb in namespace sibvB. */
FIXTURE_SETUP(rxe)
{
	self->t = (struct sib_topo){
		.kind = SIB_TOPO_RXE_PEER, .tag = "v",
		.dev = { "rxe0", "sib0" },
	};
	/* No rdma_rxe (SIB_TOPO_MISSING) fails: it is what the test is about. */
	ASSERT_EQ(0, sib_topo_up(&self->t)) TH_LOG("%s", self->t.err);
}

FIXTURE_TEARDOWN(rxe)
{
	sib_topo_down(&self->t);
}

/* Loading rdma_rxe and a namespace take long on a crowded TCG host. */
TEST_F_TIMEOUT(rxe, coexists_with_rxe, 120)
{
	EXPECT_EQ(0, sh("ibv_devinfo -d rxe0 | grep -q 'vendor_id:.*0xffffff'"));
	EXPECT_EQ(0, sh("ibv_devinfo -d sib0 | grep -q 'vendor_id:.*0x5a1b00'"));
	EXPECT_NE(0, shq("test -e " SIB_SYSFS_IB "/rxe0/" SIB_SYSFS_ATTR));
	EXPECT_EQ(0, sh("rdma link delete rxe0 && rmmod rdma_rxe"));
}

SIB_HARNESS_MAIN
