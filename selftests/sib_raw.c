// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Raw packet QPs and flow steering (kernel/sib_raw.c): whole Ethernet
 * frames sent from a raw QP of sibA and received through a flow by a raw
 * QP of sibB across a veth, byte for byte; frames that match no flow are
 * not delivered; masks, VLAN tags, IPv6 and TCP, priorities, sniffer and
 * default flows; too short, too long and too large for the receive
 * buffer; flows and QPs destroyed while frames arrive; CAP_NET_RAW; and,
 * on one device, the loopback of its own frames (dummy) and no double
 * delivery (lo), with RoCEv2 still reaching its path.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/capability.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"
#include "sib_topo.h"

#define TAG	"r"
#define BUF	8192
#define NRECV	16

static const uint8_t MC_MAC[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa7 };
static const uint8_t OTHER_MAC[6] = { 0x01, 0x50, 0x56, 0x19, 0x20, 0xa8 };
static const uint8_t SRC_MAC[6] = { 0x24, 0x8a, 0x07, 0xa5, 0x28, 0xc8 };

/* ---- a raw QP and its resources -------------------------------------------- */

struct rawq {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq;
	struct ibv_qp *qp;
	struct ibv_mr *mr;
	uint8_t *buf;		/* [0, BUF): send; [BUF, ...): receives */
	bool own_ctx;
};

static struct ibv_context *open_dev(const char *name)
{
	struct ibv_device **list = ibv_get_device_list(NULL);
	struct ibv_context *ctx = NULL;

	for (int i = 0; list && list[i]; i++)
		if (!strcmp(ibv_get_device_name(list[i]), name))
			ctx = ibv_open_device(list[i]);
	ibv_free_device_list(list);
	return ctx;
}

static int qp_to_rts(struct ibv_qp *qp)
{
	struct ibv_qp_attr a = { .qp_state = IBV_QPS_INIT, .port_num = 1 };

	if (ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PORT))
		return -1;
	a.qp_state = IBV_QPS_RTR;
	if (ibv_modify_qp(qp, &a, IBV_QP_STATE))
		return -1;
	a.qp_state = IBV_QPS_RTS;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE) ? -1 : 0;
}

/* A raw QP in RTS on @ctx (or a new context of @dev); 0 or -1. */
static int rawq_open(struct rawq *r, struct ibv_context *ctx, const char *dev)
{
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.sq_sig_all = 1,
		.cap = { .max_send_wr = 64, .max_recv_wr = 256,
			 .max_send_sge = 2, .max_recv_sge = 2 },
	};

	memset(r, 0, sizeof(*r));
	r->own_ctx = !ctx;
	r->ctx = ctx ? ctx : open_dev(dev);
	if (!r->ctx)
		return -1;
	r->pd = ibv_alloc_pd(r->ctx);
	r->cq = ibv_create_cq(r->ctx, 512, NULL, NULL, 0);
	r->buf = calloc(1, BUF * (NRECV + 1));
	if (!r->pd || !r->cq || !r->buf)
		return -1;
	r->mr = ibv_reg_mr(r->pd, r->buf, BUF * (NRECV + 1),
			   IBV_ACCESS_LOCAL_WRITE);
	ia.send_cq = r->cq;
	ia.recv_cq = r->cq;
	r->qp = ibv_create_qp(r->pd, &ia);
	if (!r->mr || !r->qp)
		return -1;
	return qp_to_rts(r->qp);
}

static void rawq_close(struct rawq *r)
{
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	if (r->cq)
		ibv_destroy_cq(r->cq);
	if (r->pd)
		ibv_dealloc_pd(r->pd);
	if (r->own_ctx && r->ctx)
		ibv_close_device(r->ctx);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

static uint8_t *rbuf(struct rawq *r, int slot)
{
	return r->buf + BUF * (1 + slot % NRECV);
}

/* Post receive WQEs for slots [first, first + n) of @len bytes each. */
static int post_recv(struct rawq *r, int first, int n, uint32_t len)
{
	for (int i = first; i < first + n; i++) {
		struct ibv_sge sge = {
			.addr = (uintptr_t)rbuf(r, i), .length = len,
			.lkey = r->mr->lkey,
		};
		struct ibv_recv_wr wr = { .wr_id = i, .sg_list = &sge,
					  .num_sge = 1 }, *bad;

		memset(rbuf(r, i), 0xee, len);
		if (ibv_post_recv(r->qp, &wr, &bad))
			return -1;
	}
	return 0;
}

/* Send @len bytes of @frame (copied to the send buffer), in @nsge SGEs. */
static int send_frame(struct rawq *r, const void *frame, uint32_t len,
		      int nsge)
{
	struct ibv_sge sge[2] = {
		{ .addr = (uintptr_t)r->buf, .length = len, .lkey = r->mr->lkey },
	};
	struct ibv_send_wr wr = { .wr_id = 0x5e, .sg_list = sge,
				  .num_sge = 1, .opcode = IBV_WR_SEND }, *bad;

	memcpy(r->buf, frame, len);
	if (nsge == 2 && len > 7) {
		sge[0].length = 7;
		sge[1] = (struct ibv_sge){ .addr = (uintptr_t)r->buf + 7,
					   .length = len - 7,
					   .lkey = r->mr->lkey };
		wr.num_sge = 2;
	}
	return ibv_post_send(r->qp, &wr, &bad);
}

/* One completion within @ms milliseconds: 1, or 0 if none came. */
static int poll_one(struct rawq *r, struct ibv_wc *wc, int ms)
{
	for (int i = 0; i <= ms; i++) {
		int n = ibv_poll_cq(r->cq, 1, wc);

		if (n)
			return n;
		usleep(1000);
	}
	return 0;
}

/* Send and take the send completion; its status, or -1. */
static int send_wait(struct rawq *r, const void *frame, uint32_t len)
{
	struct ibv_wc wc;

	if (send_frame(r, frame, len, 1) || poll_one(r, &wc, 2000) != 1)
		return -1;
	return wc.opcode == IBV_WC_SEND ? (int)wc.status : -1;
}

/*
 * Frames to @dmac that @r receives until none comes for @ms milliseconds;
 * other frames (IPv6 neighbour discovery, MLD on the veth) are counted
 * out, and every receive WQE taken is posted again.
 */
static int frames_to(struct rawq *r, const uint8_t *dmac, int ms)
{
	struct ibv_wc wc;
	int n = 0;

	while (poll_one(r, &wc, ms) == 1) {
		if (wc.status != IBV_WC_SUCCESS)
			return -1;
		if (!memcmp(rbuf(r, wc.wr_id), dmac, 6))
			n++;
		if (post_recv(r, wc.wr_id, 1, BUF))
			return -1;
	}
	return n;
}

/* ---- frames ------------------------------------------------------------------- */

struct fspec {
	const uint8_t *dmac;
	uint16_t vlan;		/* TCI, with vlan_on */
	bool vlan_on;
	bool v6;
	uint8_t proto;		/* IPPROTO_UDP or IPPROTO_TCP */
	const char *sip, *dip;
	uint16_t sport, dport;
	uint32_t paylen;
};

static uint16_t csum16(const void *p, int len)
{
	const uint8_t *b = p;
	uint32_t s = 0;

	for (int i = 0; i + 1 < len; i += 2)
		s += (b[i] << 8) | b[i + 1];
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return htons(~s & 0xffff);
}

/* Build a frame into @f; its length. */
static int build(uint8_t *f, const struct fspec *s)
{
	int off = 12, l4len = (s->proto == IPPROTO_TCP ? 20 : 8) + s->paylen;
	uint16_t type = htons(s->v6 ? 0x86dd : 0x0800);

	memcpy(f, s->dmac ? s->dmac : MC_MAC, 6);
	memcpy(f + 6, SRC_MAC, 6);
	if (s->vlan_on) {
		uint16_t tpid = htons(0x8100), tci = htons(s->vlan);

		memcpy(f + off, &tpid, 2);
		memcpy(f + off + 2, &tci, 2);
		off += 4;
	}
	memcpy(f + off, &type, 2);
	off += 2;
	if (s->v6) {
		uint32_t w = htonl(0x60000000 | 0x12345);
		uint16_t pl = htons(l4len);

		memcpy(f + off, &w, 4);
		memcpy(f + off + 4, &pl, 2);
		f[off + 6] = s->proto;
		f[off + 7] = 64;
		inet_pton(AF_INET6, s->sip ? s->sip : "a0a1::a2a3:a4a5:a6a7:a8a9",
			  f + off + 8);
		inet_pton(AF_INET6, s->dip ? s->dip : "b0b1::b2b3:b4b5:b6b7:b8b9",
			  f + off + 24);
		off += 40;
	} else {
		uint16_t tot = htons(20 + l4len), df = htons(0x4000), c;

		memset(f + off, 0, 20);
		f[off] = 0x45;
		memcpy(f + off + 2, &tot, 2);
		memcpy(f + off + 6, &df, 2);
		f[off + 8] = 64;
		f[off + 9] = s->proto;
		inet_pton(AF_INET, s->sip ? s->sip : "1.1.1.1", f + off + 12);
		inet_pton(AF_INET, s->dip ? s->dip : "2.2.2.2", f + off + 16);
		c = csum16(f + off, 20);
		memcpy(f + off + 10, &c, 2);
		off += 20;
	}
	{
		uint16_t sp = htons(s->sport ? s->sport : 1234);
		uint16_t dp = htons(s->dport ? s->dport : 5678);

		memcpy(f + off, &sp, 2);
		memcpy(f + off + 2, &dp, 2);
		if (s->proto == IPPROTO_TCP) {
			memset(f + off + 4, 0, 16);
			f[off + 12] = 5 << 4;
		} else {
			uint16_t ul = htons(l4len);

			memcpy(f + off + 4, &ul, 2);
			memset(f + off + 6, 0, 2);
		}
		off += s->proto == IPPROTO_TCP ? 20 : 8;
	}
	for (uint32_t i = 0; i < s->paylen; i++)
		f[off + i] = (uint8_t)(i * 7 + 3);
	return off + s->paylen;
}

/* ---- flow attributes ---------------------------------------------------------- */

struct fattr {
	struct ibv_flow_attr attr;
	uint8_t specs[512];
	size_t len;
};

static void fattr_init(struct fattr *a, enum ibv_flow_attr_type type,
		       uint16_t prio)
{
	memset(a, 0, sizeof(*a));
	a->attr.type = type;
	a->attr.priority = prio;
	a->attr.port = 1;
	a->attr.size = sizeof(a->attr);
}

static void *fattr_add(struct fattr *a, const void *spec, size_t size)
{
	void *p = a->specs + a->len;

	memcpy(p, spec, size);
	a->len += size;
	a->attr.size += size;
	a->attr.num_of_specs++;
	return p;
}

static void add_eth(struct fattr *a, const uint8_t *dmac, uint16_t type,
		    int vlan)
{
	struct ibv_flow_spec_eth s = { .type = IBV_FLOW_SPEC_ETH,
				       .size = sizeof(s) };

	if (dmac) {
		memcpy(s.val.dst_mac, dmac, 6);
		memset(s.mask.dst_mac, 0xff, 6);
	}
	if (type) {
		s.val.ether_type = htons(type);
		s.mask.ether_type = 0xffff;
	}
	if (vlan >= 0) {
		s.val.vlan_tag = htons(vlan);
		s.mask.vlan_tag = htons(0x0fff);
	}
	fattr_add(a, &s, sizeof(s));
}

static void add_ipv4(struct fattr *a, const char *dip, const char *dmask)
{
	struct ibv_flow_spec_ipv4_ext s = { .type = IBV_FLOW_SPEC_IPV4_EXT,
					    .size = sizeof(s) };

	inet_pton(AF_INET, dip, &s.val.dst_ip);
	inet_pton(AF_INET, dmask, &s.mask.dst_ip);
	fattr_add(a, &s, sizeof(s));
}

static void add_ipv6(struct fattr *a, const char *dip)
{
	struct ibv_flow_spec_ipv6 s = { .type = IBV_FLOW_SPEC_IPV6,
					.size = sizeof(s) };

	inet_pton(AF_INET6, dip, s.val.dst_ip);
	memset(s.mask.dst_ip, 0xff, 16);
	fattr_add(a, &s, sizeof(s));
}

static void add_l4(struct fattr *a, bool tcp, uint16_t dport)
{
	struct ibv_flow_spec_tcp_udp s = {
		.type = tcp ? IBV_FLOW_SPEC_TCP : IBV_FLOW_SPEC_UDP,
		.size = sizeof(s),
	};

	s.val.dst_port = htons(dport);
	s.mask.dst_port = 0xffff;
	fattr_add(a, &s, sizeof(s));
}

static struct ibv_flow *flow(struct rawq *r, struct fattr *a)
{
	return ibv_create_flow(r->qp, &a->attr);
}

/* A NORMAL flow on the multicast MAC of the frames. */
static struct ibv_flow *mc_flow(struct rawq *r)
{
	struct fattr a;

	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, MC_MAC, 0, -1);
	return flow(r, &a);
}

/* ---- two devices across a veth ---------------------------------------------- */

/*
 * Each test has 120 s (times SIB_TIMEOUT_SCALE): on a debug kernel the
 * fixture alone, a veth pair and a device on each end, takes about a
 * minute.
 */
FIXTURE(veth) {
	struct sib_topo t;
	struct rawq a, b;
	uint8_t frame[BUF];
};

FIXTURE_SETUP(veth)
{
	int ret;

	self->t = (struct sib_topo){ .kind = SIB_TOPO_VETH, .tag = TAG,
				     .flags = SIB_TOPO_LO_UP | SIB_TOPO_NEIGH };
	ret = sib_topo_up(&self->t);
	if (ret == SIB_TOPO_MISSING)
		SETUP_SKIP("%s", self->t.err);
	ASSERT_EQ(0, ret) TH_LOG("%s", self->t.err);
	ASSERT_EQ(0, rawq_open(&self->a, NULL, "sibA"));
	ASSERT_EQ(0, rawq_open(&self->b, NULL, "sibB"));
}

FIXTURE_TEARDOWN(veth)
{
	rawq_close(&self->a);
	rawq_close(&self->b);
	sib_topo_down(&self->t);
}

/* Send @s from A; does B take it (within @ms), into slot @slot? */
static int a_to_b(struct __test_metadata *_metadata,
		  FIXTURE_DATA(veth) *self, const struct fspec *s, int ms,
		  struct ibv_wc *wc)
{
	int len = build(self->frame, s);

	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	return poll_one(&self->b, wc, ms);
}

/* A frame through a flow: the posted buffer holds it byte for byte. */
TEST_F_TIMEOUT(veth, frame_through_flow, 120)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 1000 };
	struct ibv_flow *f;
	struct ibv_wc wc;
	int len;

	ASSERT_EQ(0, post_recv(&self->b, 0, 4, BUF));
	ASSERT_EQ(0, post_recv(&self->a, 0, 4, BUF));
	f = mc_flow(&self->b);
	ASSERT_NE(NULL, f) TH_LOG("ibv_create_flow: %s", strerror(errno));
	len = build(self->frame, &s);
	for (int i = 0; i < 3; i++) {
		/* in two SGEs the second time: the frame is gathered */
		ASSERT_EQ(0, send_frame(&self->a, self->frame, len, 1 + i % 2));
		ASSERT_EQ(1, poll_one(&self->a, &wc, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(1, poll_one(&self->b, &wc, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ((uint32_t)len, wc.byte_len);
		EXPECT_EQ(self->b.qp->qp_num, wc.qp_num);
		EXPECT_EQ(0, memcmp(rbuf(&self->b, wc.wr_id), self->frame, len));
		EXPECT_EQ(0xee, rbuf(&self->b, wc.wr_id)[len]);
	}
	/* A, without flows, got nothing. */
	EXPECT_EQ(0, poll_one(&self->a, &wc, 200));
	EXPECT_EQ(0, ibv_destroy_flow(f));
	/* Without the flow, nothing more. */
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
}

/* A frame that matches no flow is not delivered; one that does is. */
TEST_F_TIMEOUT(veth, no_match_no_delivery, 120)
{
	struct fspec other = { .dmac = OTHER_MAC, .proto = IPPROTO_UDP,
			       .paylen = 64 };
	struct fspec mc = { .proto = IPPROTO_UDP, .paylen = 64 };
	struct ibv_flow *f;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(&self->b, 0, 4, BUF));
	/* No flow at all: nothing. */
	EXPECT_EQ(0, a_to_b(_metadata, self, &mc, 300, &wc));
	f = mc_flow(&self->b);
	ASSERT_NE(NULL, f);
	EXPECT_EQ(0, a_to_b(_metadata, self, &other, 300, &wc));
	ASSERT_EQ(1, a_to_b(_metadata, self, &mc, 2000, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/* Masks: a /24 destination, a UDP port, and each spec's implied type. */
TEST_F_TIMEOUT(veth, masks, 120)
{
	struct fspec in = { .proto = IPPROTO_UDP, .dip = "10.1.2.77",
			    .dport = 4000, .paylen = 32 };
	struct fspec s;
	struct ibv_flow *f;
	struct fattr a;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(&self->b, 0, 8, BUF));
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, NULL, 0, -1);
	add_ipv4(&a, "10.1.2.0", "255.255.255.0");
	add_l4(&a, false, 4000);
	f = flow(&self->b, &a);
	ASSERT_NE(NULL, f) TH_LOG("ibv_create_flow: %s", strerror(errno));

	ASSERT_EQ(1, a_to_b(_metadata, self, &in, 2000, &wc));
	s = in;
	s.dip = "10.1.2.200";		/* same /24 */
	EXPECT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	s.dip = "10.1.3.77";		/* another /24 */
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	s = in;
	s.dport = 4001;			/* another port */
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	s = in;
	s.proto = IPPROTO_TCP;		/* the UDP spec asks for UDP */
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	s = in;
	s.v6 = true;			/* the IPv4 spec asks for IPv4 */
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/* IPv6 and TCP, and a VLAN-tagged frame delivered with its tag. */
TEST_F_TIMEOUT(veth, ipv6_tcp_vlan, 120)
{
	struct fspec s = { .v6 = true, .proto = IPPROTO_TCP,
			   .dip = "2001:db8:1::9", .dport = 80, .paylen = 100 };
	struct ibv_flow *f6, *fv;
	struct fattr a;
	struct ibv_wc wc;
	int len;

	ASSERT_EQ(0, post_recv(&self->b, 0, 8, BUF));
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_ipv6(&a, "2001:db8:1::9");
	add_l4(&a, true, 80);
	f6 = flow(&self->b, &a);
	ASSERT_NE(NULL, f6) TH_LOG("ibv_create_flow: %s", strerror(errno));
	len = build(self->frame, &s);
	ASSERT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ((uint32_t)len, wc.byte_len);
	EXPECT_EQ(0, memcmp(rbuf(&self->b, wc.wr_id), self->frame, len));
	s.dport = 81;
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	EXPECT_EQ(0, ibv_destroy_flow(f6));

	/* VLAN 12: the tag is matched, and delivered in the frame. */
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, MC_MAC, 0x0800, 12);
	fv = flow(&self->b, &a);
	ASSERT_NE(NULL, fv) TH_LOG("ibv_create_flow: %s", strerror(errno));
	s = (struct fspec){ .proto = IPPROTO_UDP, .vlan_on = true,
			    .vlan = (5 << 13) | 12, .paylen = 1500 - 28 };
	len = build(self->frame, &s);
	ASSERT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ((uint32_t)len, wc.byte_len);
	EXPECT_EQ(0, memcmp(rbuf(&self->b, wc.wr_id), self->frame, len));
	s.vlan = 13;
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	s.vlan_on = false;
	EXPECT_EQ(0, a_to_b(_metadata, self, &s, 300, &wc));
	EXPECT_EQ(0, ibv_destroy_flow(fv));
}

/*
 * Priorities, sniffer and default flows: of two NORMAL flows the lower
 * priority value wins; a sniffer sees everything; ALL_DEFAULT what no
 * NORMAL flow took. One copy per QP.
 */
TEST_F_TIMEOUT(veth, priority_sniffer_default, 120)
{
	struct fspec mc = { .proto = IPPROTO_UDP, .paylen = 64 };
	struct fspec other = { .dmac = OTHER_MAC, .proto = IPPROTO_UDP,
			       .paylen = 64 };
	struct rawq q[3];	/* prio 0, sniffer, all-default */
	struct ibv_flow *f[5];
	struct fattr a;
	struct ibv_wc wc;

	for (int i = 0; i < 3; i++) {
		ASSERT_EQ(0, rawq_open(&q[i], self->b.ctx, NULL));
		ASSERT_EQ(0, post_recv(&q[i], 0, NRECV, BUF));
	}
	ASSERT_EQ(0, post_recv(&self->b, 0, 8, BUF));
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 3);
	add_eth(&a, MC_MAC, 0, -1);
	f[0] = flow(&self->b, &a);			/* prio 3 */
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, MC_MAC, 0x0800, -1);
	f[1] = flow(&q[0], &a);				/* prio 0 */
	f[2] = flow(&q[0], &a);				/* the same again */
	fattr_init(&a, IBV_FLOW_ATTR_SNIFFER, 0);
	f[3] = flow(&q[1], &a);
	fattr_init(&a, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	f[4] = flow(&q[2], &a);
	for (int k = 0; k < 5; k++) {
		ASSERT_NE(NULL, f[k]) {
			TH_LOG("flow %d: %s", k, strerror(errno));
		}
	}

	/* The multicast frame: q[0] (prio 0, once) and the sniffer. */
	EXPECT_EQ(0, a_to_b(_metadata, self, &mc, 300, &wc));
	EXPECT_EQ(1, frames_to(&q[0], MC_MAC, 500));
	EXPECT_EQ(1, frames_to(&q[1], MC_MAC, 500));
	EXPECT_EQ(0, frames_to(&q[2], MC_MAC, 300));
	/* Another MAC: no NORMAL flow; the sniffer and the default one. */
	EXPECT_EQ(0, a_to_b(_metadata, self, &other, 300, &wc));
	EXPECT_EQ(0, frames_to(&q[0], OTHER_MAC, 300));
	EXPECT_EQ(1, frames_to(&q[1], OTHER_MAC, 500));
	EXPECT_EQ(1, frames_to(&q[2], OTHER_MAC, 500));
	/* Without q[0]'s flows, b's (prio 3) takes the multicast frame. */
	EXPECT_EQ(0, ibv_destroy_flow(f[1]));
	EXPECT_EQ(0, ibv_destroy_flow(f[2]));
	EXPECT_EQ(1, a_to_b(_metadata, self, &mc, 2000, &wc));
	EXPECT_EQ(1, frames_to(&q[1], MC_MAC, 500));
	EXPECT_EQ(0, frames_to(&q[2], MC_MAC, 300));
	EXPECT_EQ(0, ibv_destroy_flow(f[0]));
	EXPECT_EQ(0, ibv_destroy_flow(f[3]));
	EXPECT_EQ(0, ibv_destroy_flow(f[4]));
	for (int i = 0; i < 3; i++)
		rawq_close(&q[i]);
}

/* Flow specs sib lacks, malformed or contradicting ones, other QP types. */
TEST_F_TIMEOUT(veth, flow_refusals, 120)
{
	struct ibv_flow_spec_esp esp = { .type = IBV_FLOW_SPEC_ESP,
					 .size = sizeof(esp) };
	struct ibv_flow_spec_eth inner = { .type = IBV_FLOW_SPEC_ETH |
						   IBV_FLOW_SPEC_INNER,
					   .size = sizeof(inner) };
	struct ibv_qp_init_attr ia = {
		.qp_type = IBV_QPT_UD, .send_cq = self->b.cq,
		.recv_cq = self->b.cq,
		.cap = { .max_send_wr = 1, .max_recv_wr = 1,
			 .max_send_sge = 1, .max_recv_sge = 1 },
	};
	struct ibv_flow_spec_eth *e;
	struct ibv_qp *ud;
	struct fattr a;

	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	fattr_add(&a, &esp, sizeof(esp));
	errno = 0;
	EXPECT_EQ(NULL, flow(&self->b, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);

	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	fattr_add(&a, &inner, sizeof(inner));
	errno = 0;
	EXPECT_EQ(NULL, flow(&self->b, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* EtherType IPv6 and an IPv4 spec: a contradiction. */
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, NULL, 0x86dd, -1);
	add_ipv4(&a, "10.0.0.1", "255.255.255.255");
	errno = 0;
	EXPECT_EQ(NULL, flow(&self->b, &a));
	EXPECT_EQ(EINVAL, errno);

	/* A default flow with specs. */
	fattr_init(&a, IBV_FLOW_ATTR_ALL_DEFAULT, 0);
	add_eth(&a, MC_MAC, 0, -1);
	errno = 0;
	EXPECT_EQ(NULL, flow(&self->b, &a));
	EXPECT_EQ(EINVAL, errno);

	/* Egress flows. */
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	e = fattr_add(&a, &inner, sizeof(inner));
	e->type = IBV_FLOW_SPEC_ETH;
	a.attr.flags = IBV_FLOW_ATTR_FLAGS_EGRESS;
	errno = 0;
	EXPECT_EQ(NULL, flow(&self->b, &a));
	EXPECT_EQ(EOPNOTSUPP, errno);

	/* A UD QP: ib_core lets it through, sib has no flows for it. */
	ud = ibv_create_qp(self->b.pd, &ia);
	ASSERT_NE(NULL, ud);
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, MC_MAC, 0, -1);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_flow(ud, &a.attr));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(0, ibv_destroy_qp(ud));
}

/*
 * Too short (less than an Ethernet header) and too long (more than the
 * MTU and the header, or with a VLAN tag the tag as well): the send
 * completes with IBV_WC_LOC_LEN_ERR and the QP enters the error state.
 */
TEST_F_TIMEOUT(veth, frame_length, 120)
{
	struct fspec s = { .proto = IPPROTO_UDP };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_flow *f;
	struct ibv_wc wc;
	int len;

	ASSERT_EQ(0, post_recv(&self->b, 0, 8, BUF));
	f = mc_flow(&self->b);
	ASSERT_NE(NULL, f);
	/* The longest untagged and tagged frames go through whole. */
	s.paylen = 1500 - 28;
	EXPECT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	EXPECT_EQ(1514u, wc.byte_len);
	s.vlan_on = true;
	EXPECT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	EXPECT_EQ(1518u, wc.byte_len);

	len = build(self->frame, &s);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, send_wait(&self->a, self->frame, len + 1));
	ASSERT_EQ(0, ibv_query_qp(self->a.qp, &qa, IBV_QP_STATE, &qi));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	rawq_close(&self->a);

	ASSERT_EQ(0, rawq_open(&self->a, NULL, "sibA"));
	s.vlan_on = false;
	len = build(self->frame, &s);
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, send_wait(&self->a, self->frame, len + 1));
	rawq_close(&self->a);

	ASSERT_EQ(0, rawq_open(&self->a, NULL, "sibA"));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, send_wait(&self->a, self->frame, 13));
	rawq_close(&self->a);

	/* The shortest, a bare Ethernet header, goes. */
	ASSERT_EQ(0, rawq_open(&self->a, NULL, "sibA"));
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, 14));
	ASSERT_EQ(1, poll_one(&self->b, &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(14u, wc.byte_len);
	/* Nothing of the refused frames arrived. */
	EXPECT_EQ(0, poll_one(&self->b, &wc, 200));
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/*
 * A frame larger than the receive buffer: IBV_WC_LOC_LEN_ERR, and the QP
 * enters the error state (its other receives are flushed), as on mlx5.
 */
TEST_F_TIMEOUT(veth, small_recv_buffer, 120)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 200 };
	struct ibv_qp_attr qa;
	struct ibv_qp_init_attr qi;
	struct ibv_flow *f;
	struct ibv_wc wc;

	ASSERT_EQ(0, post_recv(&self->b, 0, 1, 64));
	ASSERT_EQ(0, post_recv(&self->b, 1, 1, BUF));
	f = mc_flow(&self->b);
	ASSERT_NE(NULL, f);
	ASSERT_EQ(1, a_to_b(_metadata, self, &s, 2000, &wc));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(0u, wc.wr_id);
	ASSERT_EQ(1, poll_one(&self->b, &wc, 2000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(1u, wc.wr_id);
	ASSERT_EQ(0, ibv_query_qp(self->b.qp, &qa, IBV_QP_STATE, &qi));
	EXPECT_EQ(IBV_QPS_ERR, qa.qp_state);
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/* Send matching frames from sibA as fast as it goes, until killed. */
static void flood(void)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 256 };
	static uint8_t frame[BUF];
	struct rawq r;
	struct ibv_wc wc[16];
	int len = build(frame, &s), out = 0;

	if (rawq_open(&r, NULL, "sibA"))
		_exit(1);
	for (;;) {
		while (out < 32 && !send_frame(&r, frame, len, 1))
			out++;
		out -= ibv_poll_cq(r.cq, 16, wc);
	}
}

/*
 * Flows and QPs destroyed while frames arrive: ibv_destroy_qp refuses a
 * QP that still has flows (EBUSY, ib_core); a context closed with its
 * QPs and flows tears all down; no frame crashes anything.
 */
TEST_F_TIMEOUT(veth, destroy_while_receiving, 300)
{
	long long before = link_counter("sibB", "rcvd_pkts");
	pid_t pid;
	int got = 0;

	rawq_close(&self->a);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		flood();
	for (int i = 0; i < 40; i++) {
		struct rawq r;
		struct ibv_flow *f, *g;
		struct ibv_wc wc;

		ASSERT_EQ(0, rawq_open(&r, NULL, "sibB"));
		ASSERT_EQ(0, post_recv(&r, 0, 8, BUF));
		f = mc_flow(&r);
		ASSERT_NE(NULL, f);
		g = mc_flow(&r);
		ASSERT_NE(NULL, g);
		usleep(20000);
		while (ibv_poll_cq(r.cq, 1, &wc) == 1)
			got++;
		switch (i % 3) {
		case 0:
			/* ib_core: not while flows hold it */
			EXPECT_EQ(EBUSY, ibv_destroy_qp(r.qp));
			EXPECT_EQ(0, ibv_destroy_flow(f));
			EXPECT_EQ(0, ibv_destroy_flow(g));
			rawq_close(&r);
			break;
		case 1:
			EXPECT_EQ(0, ibv_destroy_flow(g));
			/* to the error state with frames arriving */
			EXPECT_EQ(0, ibv_modify_qp(r.qp, &(struct ibv_qp_attr){
				.qp_state = IBV_QPS_ERR }, IBV_QP_STATE));
			usleep(5000);
			EXPECT_EQ(0, ibv_destroy_flow(f));
			rawq_close(&r);
			break;
		default:
			/* the process goes: everything with its context */
			ibv_close_device(r.ctx);
			free(r.buf);
			break;
		}
	}
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	TH_LOG("%d frames received, %lld counted", got,
	       link_counter("sibB", "rcvd_pkts") - before);
	EXPECT_LT(0, got);
}

/*
 * RoCEv2 is untouched by flows: ibv_rc_pingpong from sibA to sibB while a
 * sniffer flow on sibB takes a copy of every frame, RoCEv2 (UDP 4791)
 * among them.
 */
TEST_F_TIMEOUT(veth, roce_with_sniffer, 300)
{
	char srv[256], cli[256];
	struct ibv_flow *f;
	struct fattr a;
	struct ibv_wc wc;
	int roce = 0, n = 0;

	ASSERT_EQ(0, post_recv(&self->b, 0, NRECV, BUF));
	fattr_init(&a, IBV_FLOW_ATTR_SNIFFER, 0);
	f = flow(&self->b, &a);
	ASSERT_NE(NULL, f);
	snprintf(srv, sizeof(srv), "ip netns exec " SIB_TOPO_NSA(TAG)
		 " timeout 120 ibv_rc_pingpong -d sibA -g %d -n 20",
		 self->t.gid[0]);
	snprintf(cli, sizeof(cli), "ip netns exec " SIB_TOPO_NSB(TAG)
		 " timeout 120 ibv_rc_pingpong -d sibB -g %d -n 20 "
		 SIB_TOPO_IP4A, self->t.gid[1]);
	EXPECT_EQ(0, tcp_pair("/tmp/sib_raw.log", SIB_TOPO_NSA(TAG), srv, cli));
	while (n < NRECV && poll_one(&self->b, &wc, 300) == 1) {
		uint8_t *p = rbuf(&self->b, wc.wr_id);

		n++;
		/* IPv4, UDP, destination port 4791 */
		if (wc.status == IBV_WC_SUCCESS && p[12] == 0x08 &&
		    p[13] == 0x00 && p[23] == 17 && p[36] == 0x12 &&
		    p[37] == 0xb7)
			roce++;
	}
	TH_LOG("%d frames sniffed, %d RoCEv2", n, roce);
	EXPECT_LT(0, roce);
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/* Drop CAP_NET_RAW from the effective, permitted and inheritable sets. */
static int drop_net_raw(void)
{
	struct __user_cap_header_struct h = {
		.version = _LINUX_CAPABILITY_VERSION_3,
	};
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d))
		return -1;
	d[0].effective &= ~(1u << CAP_NET_RAW);
	d[0].permitted &= ~(1u << CAP_NET_RAW);
	d[0].inheritable &= ~(1u << CAP_NET_RAW);
	return syscall(SYS_capset, &h, d) ? -1 : 0;
}

/* Without CAP_NET_RAW: no raw QP, no flow (ib_uverbs: EPERM). */
TEST_F_TIMEOUT(veth, no_cap_net_raw, 120)
{
	pid_t pid = fork();
	int st;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_qp_init_attr ia = {
			.qp_type = IBV_QPT_RAW_PACKET, .send_cq = self->b.cq,
			.recv_cq = self->b.cq,
			.cap = { .max_send_wr = 1, .max_recv_wr = 1,
				 .max_send_sge = 1, .max_recv_sge = 1 },
		};
		struct rawq r;
		struct fattr a;

		if (rawq_open(&r, NULL, "sibB"))
			_exit(10);
		if (drop_net_raw())
			_exit(11);
		ia.send_cq = ia.recv_cq = r.cq;
		errno = 0;
		if (ibv_create_qp(r.pd, &ia) || errno != EPERM)
			_exit(12);
		fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
		add_eth(&a, MC_MAC, 0, -1);
		errno = 0;
		if (ibv_create_flow(r.qp, &a.attr) || errno != EPERM)
			_exit(13);
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &st, 0));
	EXPECT_TRUE(WIFEXITED(st));
	EXPECT_EQ(0, WEXITSTATUS(st));
}

/* ---- one device ---------------------------------------------------------------- */

FIXTURE(one) {
	struct rawq a, b;
	uint8_t frame[BUF];
};

FIXTURE_VARIANT(one) {
	const char *netdev;
};

/* A dummy netdev drops what it is given: frames come back only by sib. */
FIXTURE_VARIANT_ADD(one, dummy) {
	.netdev = "sibrd",
};

/* lo brings every frame back itself: sib must not deliver it twice. */
FIXTURE_VARIANT_ADD(one, lo) {
	.netdev = "lo",
};

FIXTURE_SETUP(one)
{
	ASSERT_EQ(0, module_load());
	sib_delete_all();
	shq("ip link del sibrd");
	if (strcmp(variant->netdev, "lo"))
		ASSERT_EQ(0, sh("ip link add sibrd type dummy && "
				"ip link set sibrd up"));
	ASSERT_EQ(0, nl_newlink("sib0", "sib", variant->netdev));
	ASSERT_EQ(0, rawq_open(&self->a, NULL, "sib0"));
	ASSERT_EQ(0, rawq_open(&self->b, self->a.ctx, NULL));
}

FIXTURE_TEARDOWN(one)
{
	struct ibv_context *ctx = self->a.ctx;

	self->a.own_ctx = false;
	rawq_close(&self->b);
	rawq_close(&self->a);
	if (ctx)
		ibv_close_device(ctx);
	sib_delete_all();
	shq("ip link del sibrd");
}

/*
 * As rdma-core's tests do: one QP of a device sends to a multicast MAC,
 * another of the same device receives it through a flow, once.
 */
TEST_F(one, loopback_once)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 500 };
	struct ibv_flow *f;
	struct ibv_wc wc;
	int len = build(self->frame, &s);

	ASSERT_EQ(0, post_recv(&self->b, 0, 8, BUF));
	f = mc_flow(&self->b);
	ASSERT_NE(NULL, f);
	for (int i = 0; i < 5; i++) {
		ASSERT_EQ(0, send_frame(&self->a, self->frame, len, 1));
		/* the send's and the receive's completions, one CQ each */
		ASSERT_EQ(1, poll_one(&self->a, &wc, 2000));
		EXPECT_EQ(IBV_WC_SEND, wc.opcode);
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		ASSERT_EQ(1, poll_one(&self->b, &wc, 2000));
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
		EXPECT_EQ((uint32_t)len, wc.byte_len);
		EXPECT_EQ(0, memcmp(rbuf(&self->b, wc.wr_id), self->frame, len));
	}
	EXPECT_EQ(0, poll_one(&self->b, &wc, 300));
	EXPECT_EQ(0, ibv_destroy_flow(f));
}

/* ---- receive work queues and RSS (kernel/sib_wq.c) ---------------------------- */

/* The test's own Toeplitz hash, as Microsoft's RSS specification has it. */
static uint32_t toeplitz(const uint8_t *key, const uint8_t *in, int len)
{
	uint32_t window = (uint32_t)key[0] << 24 | key[1] << 16 |
			  key[2] << 8 | key[3];
	uint32_t hash = 0;

	for (int i = 0; i < len; i++) {
		for (int b = 7; b >= 0; b--) {
			if (in[i] >> b & 1)
				hash ^= window;
			window = window << 1 | (key[i + 4] >> b & 1);
		}
	}
	return hash;
}

/* Microsoft's verification key. */
static const uint8_t MS_KEY[40] = {
	0x6d, 0x5a, 0x56, 0xda, 0x25, 0x5b, 0x0e, 0xc2, 0x41, 0x67,
	0x25, 0x3d, 0x43, 0xa3, 0x8f, 0xb0, 0xd0, 0xca, 0x2b, 0xcb,
	0xae, 0x7b, 0x30, 0xb4, 0x77, 0xcb, 0x2d, 0xa3, 0x80, 0x30,
	0xf2, 0x0c, 0x6a, 0x42, 0xb7, 0x3b, 0xbe, 0xac, 0x01, 0xfa,
};

/*
 * The hash input sib reads (kernel/sib_wq.c): source address, destination
 * address, source port, destination port, each if @fields selects it and
 * the frame has it.
 */
static int rss_input(const struct fspec *s, uint64_t fields, uint8_t *in)
{
	uint64_t sip = s->v6 ? IBV_RX_HASH_SRC_IPV6 : IBV_RX_HASH_SRC_IPV4;
	uint64_t dip = s->v6 ? IBV_RX_HASH_DST_IPV6 : IBV_RX_HASH_DST_IPV4;
	bool tcp = s->proto == IPPROTO_TCP;
	uint64_t sp = tcp ? IBV_RX_HASH_SRC_PORT_TCP : IBV_RX_HASH_SRC_PORT_UDP;
	uint64_t dp = tcp ? IBV_RX_HASH_DST_PORT_TCP : IBV_RX_HASH_DST_PORT_UDP;
	int af = s->v6 ? AF_INET6 : AF_INET, alen = s->v6 ? 16 : 4, n = 0;
	uint16_t port;

	if (fields & sip) {
		inet_pton(af, s->sip ? s->sip : s->v6 ?
			  "a0a1::a2a3:a4a5:a6a7:a8a9" : "1.1.1.1", in + n);
		n += alen;
	}
	if (fields & dip) {
		inet_pton(af, s->dip ? s->dip : s->v6 ?
			  "b0b1::b2b3:b4b5:b6b7:b8b9" : "2.2.2.2", in + n);
		n += alen;
	}
	if (fields & sp) {
		port = htons(s->sport ? s->sport : 1234);
		memcpy(in + n, &port, 2);
		n += 2;
	}
	if (fields & dp) {
		port = htons(s->dport ? s->dport : 5678);
		memcpy(in + n, &port, 2);
		n += 2;
	}
	return n;
}

/* The test's hash against the specification's published results. */
TEST(toeplitz_reference)
{
	static const struct {
		struct fspec s;
		uint32_t ip, ip_ports;
	} v[] = {
		{ { .sip = "66.9.149.187", .dip = "161.142.100.80",
		    .sport = 2794, .dport = 1766, .proto = IPPROTO_TCP },
		  0x323e8fc2, 0x51ccc178 },
		{ { .sip = "199.92.111.2", .dip = "65.69.140.83",
		    .sport = 14230, .dport = 4739, .proto = IPPROTO_TCP },
		  0xd718262a, 0xc626b0ea },
		{ { .v6 = true, .sip = "3ffe:2501:200:1fff::7",
		    .dip = "3ffe:2501:200:3::1", .sport = 2794,
		    .dport = 1766, .proto = IPPROTO_TCP },
		  0x2cc18cd5, 0x40207d3d },
	};
	uint64_t ip4 = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
	uint64_t ip6 = IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6;
	uint64_t tcp = IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP;
	uint8_t in[36];

	for (unsigned int i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		uint64_t ip = v[i].s.v6 ? ip6 : ip4;
		int n = rss_input(&v[i].s, ip, in);

		EXPECT_EQ(v[i].ip, toeplitz(MS_KEY, in, n)) TH_LOG("vector %u", i);
		n = rss_input(&v[i].s, ip | tcp, in);
		EXPECT_EQ(v[i].ip_ports, toeplitz(MS_KEY, in, n))
			TH_LOG("vector %u with ports", i);
	}
}

#define RSS_MAXWQ	16
#define RSS_SLOT	2048
#define RSS_DEPTH	4

/* An RSS QP on B: its table of WQs, their two CQs, its buffers. */
struct rss {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	struct ibv_cq *cq[2];
	struct ibv_wq *wq[RSS_MAXWQ];
	int nwq;
	struct ibv_rwq_ind_table *tbl;
	struct ibv_qp *qp;
	struct ibv_flow *flow;
	struct ibv_mr *mr;
	uint8_t *buf;		/* RSS_DEPTH slots of RSS_SLOT per WQ */
	uint64_t fields;
};

static uint8_t *rss_slot(struct rss *r, int wq, int slot)
{
	return r->buf + ((size_t)wq * RSS_DEPTH + slot) * RSS_SLOT;
}

/* Post @len bytes of slot @slot of WQ @wq; wr_id = wq << 8 | slot. */
static int rss_post_len(struct rss *r, int wq, int slot, uint32_t len)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rss_slot(r, wq, slot),
			       .length = len, .lkey = r->mr->lkey };
	struct ibv_recv_wr wr = { .wr_id = (uint64_t)wq << 8 | slot,
				  .sg_list = &sge, .num_sge = 1 }, *bad;

	memset(rss_slot(r, wq, slot), 0xee, RSS_SLOT);
	return ibv_post_wq_recv(r->wq[wq], &wr, &bad);
}

static int rss_post(struct rss *r, int wq, int slot)
{
	return rss_post_len(r, wq, slot, RSS_SLOT);
}

static struct ibv_wq *wq_new(struct ibv_context *ctx, struct ibv_pd *pd,
			     struct ibv_cq *cq, uint32_t max_wr)
{
	struct ibv_wq_init_attr a = { .wq_type = IBV_WQT_RQ, .max_wr = max_wr,
				      .max_sge = 1, .pd = pd, .cq = cq };

	return ibv_create_wq(ctx, &a);
}

static int wq_state(struct ibv_wq *wq, enum ibv_wq_state state)
{
	struct ibv_wq_attr a = { .attr_mask = IBV_WQ_ATTR_STATE,
				 .wq_state = state };

	return ibv_modify_wq(wq, &a);
}

static struct ibv_rwq_ind_table *tbl_new(struct ibv_context *ctx,
					 struct ibv_wq **wqs, int log)
{
	struct ibv_rwq_ind_table_init_attr a = { .log_ind_tbl_size = log,
						 .ind_tbl = wqs };

	return ibv_create_rwq_ind_table(ctx, &a);
}

static struct ibv_qp *rss_qp_new(struct ibv_context *ctx, struct ibv_pd *pd,
				 struct ibv_rwq_ind_table *tbl, uint64_t fields,
				 uint8_t func, uint8_t keylen)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd,
		.rwq_ind_tbl = tbl,
		.rx_hash_conf = {
			.rx_hash_function = func,
			.rx_hash_key_len = keylen,
			.rx_hash_key = (uint8_t *)MS_KEY,
			.rx_hash_fields_mask = fields,
		},
	};

	return ibv_create_qp_ex(ctx, &a);
}

/*
 * 2^@log ready WQs (WQ i on CQ i % 2) with RSS_DEPTH WQEs each, a table,
 * an RSS QP hashing @fields with MS_KEY, and a flow on the frames' MAC.
 */
static int rss_open(struct rss *r, struct rawq *b, int log, uint64_t fields)
{
	struct fattr a;

	memset(r, 0, sizeof(*r));
	r->ctx = b->ctx;
	r->pd = b->pd;
	r->nwq = 1 << log;
	r->fields = fields;
	r->buf = calloc(RSS_MAXWQ * RSS_DEPTH, RSS_SLOT);
	r->cq[0] = ibv_create_cq(r->ctx, 256, NULL, NULL, 0);
	r->cq[1] = ibv_create_cq(r->ctx, 256, NULL, NULL, 0);
	if (!r->buf || !r->cq[0] || !r->cq[1])
		return -1;
	r->mr = ibv_reg_mr(r->pd, r->buf, RSS_MAXWQ * RSS_DEPTH * RSS_SLOT,
			   IBV_ACCESS_LOCAL_WRITE);
	if (!r->mr)
		return -1;
	for (int i = 0; i < r->nwq; i++) {
		r->wq[i] = wq_new(r->ctx, r->pd, r->cq[i % 2], RSS_DEPTH);
		if (!r->wq[i] || wq_state(r->wq[i], IBV_WQS_RDY))
			return -1;
		for (int j = 0; j < RSS_DEPTH; j++)
			if (rss_post(r, i, j))
				return -1;
	}
	r->tbl = tbl_new(r->ctx, r->wq, log);
	if (!r->tbl)
		return -1;
	r->qp = rss_qp_new(r->ctx, r->pd, r->tbl, fields,
			   IBV_RX_HASH_FUNC_TOEPLITZ, 40);
	if (!r->qp)
		return -1;
	fattr_init(&a, IBV_FLOW_ATTR_NORMAL, 0);
	add_eth(&a, MC_MAC, 0, -1);
	r->flow = ibv_create_flow(r->qp, &a.attr);
	return r->flow ? 0 : -1;
}

static void rss_close(struct rss *r)
{
	if (r->flow)
		ibv_destroy_flow(r->flow);
	if (r->qp)
		ibv_destroy_qp(r->qp);
	if (r->tbl)
		ibv_destroy_rwq_ind_table(r->tbl);
	for (int i = 0; i < RSS_MAXWQ; i++)
		if (r->wq[i])
			ibv_destroy_wq(r->wq[i]);
	if (r->mr)
		ibv_dereg_mr(r->mr);
	for (int i = 0; i < 2; i++)
		if (r->cq[i])
			ibv_destroy_cq(r->cq[i]);
	free(r->buf);
	memset(r, 0, sizeof(*r));
}

/*
 * One completion from either CQ within @ms milliseconds: 1 + the index
 * of the CQ it came from, or 0.
 */
static int rss_poll(struct rss *r, struct ibv_wc *wc, int ms)
{
	for (int i = 0; i <= ms; i++) {
		for (int c = 0; c < 2; c++)
			if (ibv_poll_cq(r->cq[c], 1, wc) == 1)
				return 1 + c;
		usleep(1000);
	}
	return 0;
}

/* The WQ the test computes for frame @s. */
static int rss_expect(struct rss *r, const struct fspec *s)
{
	uint8_t in[36];
	int n = rss_input(s, r->fields, in);

	return toeplitz(MS_KEY, in, n) & (r->nwq - 1);
}

/*
 * Send each frame from A; each must land, byte for byte, in the next WQE
 * of the WQ the hash selects, with its completion on that WQ's CQ. Frames
 * are sent one at a time, so that a completion belongs to the last one.
 * Returns how many distinct WQs took frames.
 */
static int rss_check(struct __test_metadata *_metadata,
		     FIXTURE_DATA(veth) *self, struct rss *r,
		     const struct fspec *s, int n)
{
	int next[RSS_MAXWQ] = { 0 }, hit[RSS_MAXWQ] = { 0 }, used = 0;
	struct ibv_wc wc;

	for (int i = 0; i < n; i++) {
		int want = rss_expect(r, &s[i]), len = build(self->frame, &s[i]);
		int wq, slot, cq;

		EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
		cq = rss_poll(r, &wc, 2000);
		if (!cq) {
			EXPECT_TRUE(false) TH_LOG("frame %d: no completion", i);
			return -1;
		}
		wq = wc.wr_id >> 8;
		slot = wc.wr_id & 0xff;
		EXPECT_EQ(IBV_WC_SUCCESS, wc.status) TH_LOG("frame %d", i);
		EXPECT_EQ(IBV_WC_RECV, wc.opcode);
		EXPECT_EQ(want, wq) TH_LOG("frame %d: hash %#x", i,
					   rss_expect(r, &s[i]));
		ASSERT_LT(wq, r->nwq);
		EXPECT_EQ(r->wq[wq]->wq_num, wc.qp_num);
		/* the WQ's own CQ, and its WQEs in ring order */
		EXPECT_EQ(1 + wq % 2, cq);
		EXPECT_EQ(next[wq], slot);
		EXPECT_EQ((uint32_t)len, wc.byte_len);
		EXPECT_EQ(0, memcmp(rss_slot(r, wq, slot), self->frame, len));
		EXPECT_EQ(0xee, rss_slot(r, wq, slot)[len]);
		next[wq] = (slot + 1) % RSS_DEPTH;
		EXPECT_EQ(0, rss_post(r, wq, slot));
		if (!hit[wq]++)
			used++;
	}
	/* and nothing more */
	EXPECT_EQ(0, rss_poll(r, &wc, 200));
	return used;
}

static const char *const SRC4[] = {
	"10.0.0.1", "10.0.0.2", "10.0.1.7", "172.16.5.9", "192.168.3.200",
	"11.22.33.44", "100.64.0.1", "198.51.100.17",
};

/* UDP over IPv4, 4-tuple hash over 8 WQs: each frame where Toeplitz says. */
TEST_F_TIMEOUT(veth, rss_spread, 120)
{
	uint64_t f = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4 |
		     IBV_RX_HASH_SRC_PORT_UDP | IBV_RX_HASH_DST_PORT_UDP;
	struct fspec s[32];
	int want[RSS_MAXWQ] = { 0 }, nwant = 0;
	struct rss r;

	ASSERT_EQ(0, rss_open(&r, &self->b, 3, f)) TH_LOG("%s",
							  strerror(errno));
	for (int i = 0; i < 32; i++) {
		s[i] = (struct fspec){ .proto = IPPROTO_UDP,
				       .sip = SRC4[i % 8],
				       .sport = 1000 + 37 * i,
				       .dport = 4791 + (i / 8),
				       .paylen = 64 + 29 * i };
		if (!want[rss_expect(&r, &s[i])]++)
			nwant++;
	}
	/* The inputs spread: the test is not satisfied by one WQ. */
	ASSERT_GE(nwant, 5);
	EXPECT_EQ(nwant, rss_check(_metadata, self, &r, s, 32));
	rss_close(&r);
}

/* TCP over IPv6 over 4 WQs, and a frame of the other L4 protocol. */
TEST_F_TIMEOUT(veth, rss_ipv6_tcp, 120)
{
	uint64_t f = IBV_RX_HASH_SRC_IPV6 | IBV_RX_HASH_DST_IPV6 |
		     IBV_RX_HASH_SRC_PORT_TCP | IBV_RX_HASH_DST_PORT_TCP;
	static const char *const src6[] = {
		"2001:db8::1", "2001:db8::2", "2001:db8:5::77", "fe80::1234",
		"2001:db8:ffff::9", "3ffe:2501:200:1fff::7",
	};
	struct fspec s[13];
	struct rss r;

	ASSERT_EQ(0, rss_open(&r, &self->b, 2, f));
	for (int i = 0; i < 12; i++)
		s[i] = (struct fspec){ .v6 = true, .proto = IPPROTO_TCP,
				       .sip = src6[i % 6],
				       .dip = "2001:db8:1::9",
				       .sport = 40000 + i * 101, .dport = 443,
				       .paylen = 200 };
	/* UDP: the TCP port fields are not the frame's; addresses only. */
	s[12] = (struct fspec){ .v6 = true, .proto = IPPROTO_UDP,
				.sip = src6[2], .sport = 7, .paylen = 10 };
	EXPECT_LE(2, rss_check(_metadata, self, &r, s, 13));
	rss_close(&r);
}

/* Only the destination port is hashed: other fields do not move a frame. */
TEST_F_TIMEOUT(veth, rss_fields, 120)
{
	struct fspec s[16];
	struct rss r;
	uint8_t in[36];

	ASSERT_EQ(0, rss_open(&r, &self->b, 3, IBV_RX_HASH_DST_PORT_UDP));
	for (int i = 0; i < 16; i++)
		s[i] = (struct fspec){ .proto = IPPROTO_UDP, .sip = SRC4[i % 8],
				       .sport = 999 + i,
				       .dport = i < 8 ? 5000 : 5001 + i,
				       .paylen = 16 };
	/* the first eight share a destination port, hence a WQ */
	for (int i = 1; i < 8; i++)
		EXPECT_EQ(rss_expect(&r, &s[0]), rss_expect(&r, &s[i]));
	EXPECT_EQ(2, rss_input(&s[0], r.fields, in));
	EXPECT_LE(2, rss_check(_metadata, self, &r, s, 16));
	rss_close(&r);
}

/* WQ states: RESET and ERR take nothing; ERR flushes; no ERR to RDY. */
TEST_F_TIMEOUT(veth, wq_states, 120)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 100 };
	struct ibv_wq_attr wa = {};
	struct ibv_wc wc;
	struct rss r;
	int len = build(self->frame, &s);

	ASSERT_EQ(0, rss_open(&r, &self->b, 0, IBV_RX_HASH_SRC_IPV4));
	/* RDY: the frame is taken */
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, rss_post(&r, 0, wc.wr_id & 0xff));

	/* RESET: dropped, its WQEs too, without completions */
	EXPECT_EQ(0, wq_state(r.wq[0], IBV_WQS_RESET));
	EXPECT_EQ(IBV_WQS_RESET, r.wq[0]->state);
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	EXPECT_EQ(0, rss_poll(&r, &wc, 300));
	/* back to RDY with two new WQEs: the next frame takes the first */
	EXPECT_EQ(0, wq_state(r.wq[0], IBV_WQS_RDY));
	EXPECT_EQ(0, rss_post(&r, 0, 2));
	EXPECT_EQ(0, rss_post(&r, 0, 3));
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(2, wc.wr_id & 0xff);
	EXPECT_EQ(0, memcmp(rss_slot(&r, 0, 2), self->frame, len));

	/* a wrong current state; no way from RDY to... ERR is fine */
	wa.attr_mask = IBV_WQ_ATTR_STATE | IBV_WQ_ATTR_CURR_STATE;
	wa.curr_wq_state = IBV_WQS_RESET;
	wa.wq_state = IBV_WQS_ERR;
	EXPECT_EQ(EINVAL, ibv_modify_wq(r.wq[0], &wa));
	wa.curr_wq_state = IBV_WQS_RDY;
	/* ERR: the WQE left (slot 3) is flushed */
	EXPECT_EQ(0, ibv_modify_wq(r.wq[0], &wa));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(3, wc.wr_id & 0xff);
	EXPECT_EQ(r.wq[0]->wq_num, wc.qp_num);
	EXPECT_EQ(0, rss_poll(&r, &wc, 100));
	/* a WQE posted in ERR is flushed too, and frames are not taken */
	EXPECT_EQ(0, rss_post(&r, 0, 1));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
	EXPECT_EQ(1, wc.wr_id & 0xff);
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	EXPECT_EQ(0, rss_poll(&r, &wc, 300));
	/* ERR to RDY does not exist; ERR to RESET to RDY does */
	EXPECT_EQ(EINVAL, wq_state(r.wq[0], IBV_WQS_RDY));
	EXPECT_EQ(IBV_WQS_ERR, r.wq[0]->state);
	EXPECT_EQ(0, wq_state(r.wq[0], IBV_WQS_RESET));
	EXPECT_EQ(0, wq_state(r.wq[0], IBV_WQS_RDY));
	EXPECT_EQ(0, rss_post(&r, 0, 0));
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_SUCCESS, wc.status);
	EXPECT_EQ(0, memcmp(rss_slot(&r, 0, 0), self->frame, len));
	/* WQ flags: none implemented */
	wa.attr_mask = IBV_WQ_ATTR_FLAGS;
	wa.flags = IBV_WQ_FLAGS_SCATTER_FCS;
	wa.flags_mask = IBV_WQ_FLAGS_SCATTER_FCS;
	EXPECT_EQ(EOPNOTSUPP, ibv_modify_wq(r.wq[0], &wa));
	rss_close(&r);
}

/* A frame larger than the WQE: a length error, and the WQ enters ERR. */
TEST_F_TIMEOUT(veth, wq_len_error, 120)
{
	struct fspec s = { .proto = IPPROTO_UDP, .paylen = 500 };
	struct ibv_wc wc;
	struct rss r;
	int len = build(self->frame, &s);

	ASSERT_EQ(0, rss_open(&r, &self->b, 0, 0));
	/* WQEs of 100 bytes in place of the ones posted */
	ASSERT_EQ(0, wq_state(r.wq[0], IBV_WQS_RESET));
	ASSERT_EQ(0, wq_state(r.wq[0], IBV_WQS_RDY));
	for (int i = 0; i < RSS_DEPTH; i++)
		ASSERT_EQ(0, rss_post_len(&r, 0, i, 100));
	EXPECT_EQ(IBV_WC_SUCCESS, send_wait(&self->a, self->frame, len));
	ASSERT_NE(0, rss_poll(&r, &wc, 2000));
	EXPECT_EQ(IBV_WC_LOC_LEN_ERR, wc.status);
	EXPECT_EQ(0, wc.wr_id & 0xff);
	/* the other WQEs are flushed */
	for (int i = 1; i < RSS_DEPTH; i++) {
		ASSERT_NE(0, rss_poll(&r, &wc, 2000));
		EXPECT_EQ(IBV_WC_WR_FLUSH_ERR, wc.status);
		EXPECT_EQ(i, wc.wr_id & 0xff);
	}
	EXPECT_EQ(0, rss_poll(&r, &wc, 100));
	EXPECT_EQ(EINVAL, wq_state(r.wq[0], IBV_WQS_RDY));
	rss_close(&r);
}

/* What the device says it has, and WQs and tables of bad sizes. */
TEST_F_TIMEOUT(veth, wq_caps_sizes, 120)
{
	struct ibv_context *ctx = self->b.ctx;
	struct ibv_pd *pd = self->b.pd;
	struct ibv_cq *cq = self->b.cq;
	struct ibv_wq_init_attr wa = { .wq_type = IBV_WQT_RQ, .max_wr = 4,
				       .max_sge = 33, .pd = pd, .cq = cq };
	struct ibv_device_attr_ex dev;
	struct ibv_rwq_ind_table *t;
	static struct ibv_wq *many[2048];
	struct ibv_wq *wqs[2];

	ASSERT_EQ(0, ibv_query_device_ex(ctx, NULL, &dev));
	EXPECT_TRUE(dev.rss_caps.supported_qpts & (1 << IBV_QPT_RAW_PACKET));
	EXPECT_EQ(1024, dev.rss_caps.max_rwq_indirection_table_size);
	EXPECT_LT(0, dev.rss_caps.max_rwq_indirection_tables);
	EXPECT_LT(0, dev.max_wq_type_rq);
	EXPECT_EQ(IBV_RX_HASH_FUNC_TOEPLITZ, dev.rss_caps.rx_hash_function);
	EXPECT_EQ(0xff, dev.rss_caps.rx_hash_fields_mask);

	errno = 0;
	EXPECT_EQ(NULL, wq_new(ctx, pd, cq, 0));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, wq_new(ctx, pd, cq, 0x4001));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, ibv_create_wq(ctx, &wa));
	EXPECT_EQ(EINVAL, errno);
	wa.max_sge = 1;
	wa.comp_mask = IBV_WQ_INIT_ATTR_FLAGS;
	wa.create_flags = IBV_WQ_FLAGS_CVLAN_STRIPPING;
	EXPECT_EQ(NULL, ibv_create_wq(ctx, &wa));
	EXPECT_EQ(EOPNOTSUPP, errno);

	wqs[0] = wq_new(ctx, pd, cq, 8);
	wqs[1] = wq_new(ctx, pd, cq, 8);
	ASSERT_NE(NULL, wqs[0]);
	ASSERT_NE(NULL, wqs[1]);
	EXPECT_NE(wqs[0]->wq_num, wqs[1]->wq_num);
	EXPECT_EQ(IBV_WQS_RESET, wqs[0]->state);
	for (int i = 0; i < 2048; i++)
		many[i] = wqs[i % 2];
	/* 2^11 entries is past the device's 2^10 */
	EXPECT_EQ(NULL, tbl_new(ctx, many, 11));
	EXPECT_EQ(EINVAL, errno);
	t = tbl_new(ctx, many, 10);
	ASSERT_NE(NULL, t) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	/* one entry is a table too */
	t = tbl_new(ctx, many, 0);
	ASSERT_NE(NULL, t) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_wq(wqs[0]));
	EXPECT_EQ(0, ibv_destroy_wq(wqs[1]));
}

/*
 * A table of B may hold only B's WQs: a WQ that B's context does not
 * know (A's, named by a handle B never handed out) is refused. uverbs
 * resolves handles per context, so sib's own ownership check stands
 * behind ib_core's here and no process reaches it.
 */
TEST_F_TIMEOUT(veth, wq_foreign, 120)
{
	struct ibv_wq *own, *aw, fake, *mixed[2];

	own = wq_new(self->b.ctx, self->b.pd, self->b.cq, 8);
	aw = wq_new(self->a.ctx, self->a.pd, self->a.cq, 8);
	ASSERT_NE(NULL, own);
	ASSERT_NE(NULL, aw);
	fake = *aw;
	fake.handle = 0x7ffff;
	mixed[0] = own;
	mixed[1] = &fake;
	errno = 0;
	EXPECT_EQ(NULL, tbl_new(self->b.ctx, mixed, 1));
	EXPECT_TRUE(errno == ENOENT || errno == EINVAL) TH_LOG("%d", errno);
	EXPECT_EQ(0, ibv_destroy_wq(aw));
	EXPECT_EQ(0, ibv_destroy_wq(own));
}

/* Hash configurations and QP attributes an RSS QP is refused for. */
TEST_F_TIMEOUT(veth, rss_qp_refusals, 120)
{
	uint64_t ip4 = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
	struct ibv_context *ctx = self->b.ctx;
	struct ibv_pd *pd = self->b.pd;
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_RAW_PACKET,
		.comp_mask = IBV_QP_INIT_ATTR_PD | IBV_QP_INIT_ATTR_IND_TABLE |
			     IBV_QP_INIT_ATTR_RX_HASH,
		.pd = pd, .send_cq = self->b.cq,
		.cap = { .max_send_wr = 4, .max_send_sge = 1 },
		.rx_hash_conf = {
			.rx_hash_function = IBV_RX_HASH_FUNC_TOEPLITZ,
			.rx_hash_key_len = 40,
			.rx_hash_key = (uint8_t *)MS_KEY,
			.rx_hash_fields_mask = ip4,
		},
	};
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *wq;

	wq = wq_new(ctx, pd, self->b.cq, 8);
	ASSERT_NE(NULL, wq);
	t = tbl_new(ctx, &wq, 0);
	ASSERT_NE(NULL, t);
	a.rwq_ind_tbl = t;
	errno = 0;
	EXPECT_EQ(NULL, rss_qp_new(ctx, pd, t, ip4,
				   IBV_RX_HASH_FUNC_TOEPLITZ, 39));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, rss_qp_new(ctx, pd, t, ip4, 0, 40));
	EXPECT_EQ(EOPNOTSUPP, errno);
	EXPECT_EQ(NULL, rss_qp_new(ctx, pd, t, ip4 | IBV_RX_HASH_SRC_IPV6,
				   IBV_RX_HASH_FUNC_TOEPLITZ, 40));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, rss_qp_new(ctx, pd, t, IBV_RX_HASH_SRC_PORT_TCP |
				   IBV_RX_HASH_DST_PORT_UDP,
				   IBV_RX_HASH_FUNC_TOEPLITZ, 40));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(NULL, rss_qp_new(ctx, pd, t, IBV_RX_HASH_IPSEC_SPI,
				   IBV_RX_HASH_FUNC_TOEPLITZ, 40));
	EXPECT_EQ(EOPNOTSUPP, errno);
	/* an RSS QP has no send queue */
	EXPECT_EQ(NULL, ibv_create_qp_ex(ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	/* and only a raw packet QP is one */
	a.qp_type = IBV_QPT_UD;
	a.cap = (struct ibv_qp_cap){};
	EXPECT_EQ(NULL, ibv_create_qp_ex(ctx, &a));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_wq(wq));
}

/* A WQ in a table, a table under an RSS QP: EBUSY until they go. */
TEST_F_TIMEOUT(veth, wq_busy, 120)
{
	char path[96], v[1024];
	uint64_t ip4 = IBV_RX_HASH_SRC_IPV4 | IBV_RX_HASH_DST_IPV4;
	struct ibv_context *ctx = self->b.ctx;
	struct ibv_qp_attr qa = { .qp_state = IBV_QPS_RESET };
	struct ibv_send_wr swr = { .opcode = IBV_WR_SEND }, *sbad;
	struct ibv_recv_wr rwr = {}, *rbad;
	struct ibv_rwq_ind_table *t;
	struct ibv_wq *wqs[2];
	struct ibv_qp *qp;

	wqs[0] = wq_new(ctx, self->b.pd, self->b.cq, 8);
	wqs[1] = wq_new(ctx, self->b.pd, self->b.cq, 8);
	ASSERT_NE(NULL, wqs[0]);
	ASSERT_NE(NULL, wqs[1]);
	t = tbl_new(ctx, wqs, 1);
	ASSERT_NE(NULL, t);
	EXPECT_EQ(EBUSY, ibv_destroy_wq(wqs[1]));
	qp = rss_qp_new(ctx, self->b.pd, t, ip4, IBV_RX_HASH_FUNC_TOEPLITZ, 40);
	ASSERT_NE(NULL, qp) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(EBUSY, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(EBUSY, ibv_destroy_wq(wqs[0]));
	/* no state machine, no queues of its own */
	EXPECT_EQ(EOPNOTSUPP, ibv_modify_qp(qp, &qa, IBV_QP_STATE));
	EXPECT_NE(0, ibv_post_recv(qp, &rwr, &rbad));
	EXPECT_NE(0, ibv_post_send(qp, &swr, &sbad));
	/* its debugfs view (sib_res.c) shows no send queue either */
	snprintf(path, sizeof(path), "/sys/kernel/debug/sib/sibB/qp/%u",
		 qp->qp_num);
	ASSERT_LT(0, read_text(path, v, sizeof(v))) TH_LOG("%s", path);
	EXPECT_EQ(NULL, strstr(v, "\nsq ")) TH_LOG("%s", v);
	EXPECT_EQ(NULL, strstr(v, "\nwqe ")) TH_LOG("%s", v);
	EXPECT_EQ(0, ibv_destroy_qp(qp));
	EXPECT_EQ(EBUSY, ibv_destroy_wq(wqs[0]));
	EXPECT_EQ(0, ibv_destroy_rwq_ind_table(t));
	EXPECT_EQ(0, ibv_destroy_wq(wqs[0]));
	EXPECT_EQ(0, ibv_destroy_wq(wqs[1]));
}

SIB_HARNESS_MAIN
