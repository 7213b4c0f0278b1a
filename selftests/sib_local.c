// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's local path between QPs of one device (kernel/sib_local.c,
 * Documentation/datapath.md), on sib0 over lo, counted with the port
 * counters: one-copy packets that refer to the sender's pages
 * (onecopy_pkts) and the copying fallback; local bursts, several PSNs in
 * one packet (local_bursts), and their absence under fault injection;
 * errors and RNR in the middle of a burst; ACKs passed in a register
 * instead of a packet (local_acks), switched off by fault injection and
 * by the module parameter.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)

SIB_LO_FIXTURE(local, BUFSZ);

/* ---- the one-copy local path ------------------------------------------------ */

/*
 * Packets between QPs of one device refer to the sender's pinned pages
 * instead of carrying a copy (onecopy_pkts counts them); the receiver
 * copies straight into the target. WRITE, SEND and READ over unaligned
 * offsets and SGEs that cross pages deliver every byte; a packet that
 * would need more page fragments than an skb has, and inline data, take
 * the copying path, and deliver the same bytes.
 */
TEST_F(local, onecopy_paths)
{
	struct pair_opts o;
	struct pair p;
	struct ibv_sge sg[24], rg[2];
	long long c0;
	int i;

	pair_default_opts(&o);
	o.max_sge = 24;
	o.mtu = IBV_MTU_4096;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	fill_pattern(self->l.p, BUFSZ, 21);

	/* WRITE: 100000 bytes, odd offsets on both sides. */
	memset(self->r.p, 0, BUFSZ);
	c0 = sib0_counter("onecopy_pkts");
	ASSERT_LE(0, c0);
	sg[0] = mk_sge(&self->l, 123, 100000);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 1, sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 777),
			     self->r.mr->rkey));
	expect_wc("write", p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 777, self->l.p + 123, 100000, "write");
	EXPECT_EQ(-1, first_not(self->r.p, 777, 0));
	EXPECT_EQ(-1, first_not(self->r.p + 777 + 100000, 4096, 0));
	EXPECT_LE(c0 + 25, sib0_counter("onecopy_pkts"));

	/* SEND: three SGEs crossing pages into a receive of two SGEs. */
	memset(self->r.p, 0, BUFSZ);
	sg[0] = mk_sge(&self->l, 4000, 5000);
	sg[1] = mk_sge(&self->l, 20001, 3);
	sg[2] = mk_sge(&self->l, 40000, 9000);
	rg[0] = mk_sge(&self->r, 8190, 7000);
	rg[1] = mk_sge(&self->r, 60001, 10000);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 2, rg, 2));
	c0 = sib0_counter("onecopy_pkts");
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 3, sg, 3, IBV_SEND_SIGNALED,
			     0, 0));
	expect_wc("send", p.scq[0], 3, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 14003, NULL);
	EXPECT_SAME(self->r.p + 8190, self->l.p + 4000, 5000, "send sge 0");
	EXPECT_SAME(self->r.p + 8190 + 5000, self->l.p + 20001, 3, "send sge 1");
	EXPECT_SAME(self->r.p + 8190 + 5003, self->l.p + 40000, 1997,
		    "send sge 2a");
	EXPECT_SAME(self->r.p + 60001, self->l.p + 41997, 7003, "send sge 2b");
	EXPECT_LE(c0 + 4, sib0_counter("onecopy_pkts"));

	/* READ: the responses refer to the responder's pages. */
	memset(self->r.p, 0, BUFSZ);
	c0 = sib0_counter("onecopy_pkts");
	sg[0] = mk_sge(&self->r, 5, 50000);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_READ, 4, sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->l, 4097),
			     self->l.mr->rkey));
	expect_wc("read", p.scq[0], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 5, self->l.p + 4097, 50000, "read");
	EXPECT_LE(c0 + 13, sib0_counter("onecopy_pkts"));

	/* 24 scattered SGEs in one packet: more fragments than an skb has. */
	memset(self->r.p, 0, BUFSZ);
	for (i = 0; i < 24; i++)
		sg[i] = mk_sge(&self->l, 4096 * (i + 1) + 3 * i, 100);
	c0 = sib0_counter("onecopy_pkts");
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 5, sg, 24,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("24 sges", p.scq[0], 5, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	for (i = 0; i < 24; i++)
		EXPECT_SAME(self->r.p + 100 * i,
			    self->l.p + 4096 * (i + 1) + 3 * i, 100, "sge");
	EXPECT_EQ(c0, sib0_counter("onecopy_pkts"));

	/* Inline data is copied into the WQE, and from there. */
	memset(self->r.p, 0, BUFSZ);
	sg[0] = mk_sge(&self->l, 11, 200);
	c0 = sib0_counter("onecopy_pkts");
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 6, sg, 1,
			     IBV_SEND_SIGNALED | IBV_SEND_INLINE,
			     buf_addr(&self->r, 3), self->r.mr->rkey));
	expect_wc("inline", p.scq[0], 6, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 3, self->l.p + 11, 200, "inline");
	EXPECT_EQ(c0, sib0_counter("onecopy_pkts"));
	pair_destroy(&p);
}

/*
 * After a WRITE whose packets referred to the source MR's pages, that MR
 * deregisters at once (its packets, and their page references, are
 * gone), and the QP goes on with another MR.
 */
TEST_F(local, onecopy_dereg_after)
{
	struct buf src;
	struct pair p;
	struct ibv_sge sg;

	ASSERT_EQ(0, buf_new(&src, self->pd, 64 * 1024, ACC_ALL));
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	fill_pattern(src.p, 64 * 1024, 3);
	sg = mk_sge(&src, 1, 60000);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 1, &sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("write", p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p, src.p + 1, 60000, "write");
	buf_free(&src);
	sg = mk_sge(&self->l, 0, 60000);
	fill_pattern(self->l.p, 60000, 4);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 2, &sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("write 2", p.scq[0], 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 60000, "write 2");
	pair_destroy(&p);
}

/* ---- local bursts ------------------------------------------------------------- */

/* The change of two counters of sib0 across @ops. */
struct ctr2 {
	long long onecopy, bursts;
};

static struct ctr2 ctr2_now(void)
{
	struct ctr2 c = {
		.onecopy = sib0_counter("onecopy_pkts"),
		.bursts = sib0_counter("local_bursts"),
	};
	return c;
}

/* WRITE @len bytes from l+@loff to r+@roff and check every byte. */
static void burst_write(struct __test_metadata *_metadata,
			FIXTURE_DATA(local) *self, struct pair *p, uint64_t id,
			size_t loff, size_t roff, uint32_t len)
{
	struct ibv_sge sg = mk_sge(&self->l, loff, len);

	memset(self->r.p, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, id, &sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, roff),
			     self->r.mr->rkey));
	expect_wc("write", p->scq[0], id, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p->qp[0]->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + roff, self->l.p + loff, len, "write");
	EXPECT_UNTOUCHED(self->r.p, roff, 0, "before the write");
	EXPECT_UNTOUCHED(self->r.p + roff + len, BUFSZ - roff - len, 0,
			 "after the write");
}

/*
 * Between QPs of one device, up to 64 KiB of a message (64 PSNs) travel
 * as one packet, a local burst. Every PSN is still counted (onecopy_pkts
 * goes up by the message's packets at the MTU) and every byte arrives:
 * WRITE at odd offsets, SEND scattered over three receive SGEs, READ,
 * WRITE_WITH_IMM, at MTU 4096 and 1024. A burst that would need more
 * page fragments than an skb holds goes as single packets.
 */
TEST_F(local, local_bursts)
{
	struct ibv_sge sg[16], rg[3];
	struct pair_opts o;
	struct ibv_wc wc;
	struct ctr2 c0, c1;
	struct pair p;
	int i;

	pair_default_opts(&o);
	o.max_sge = 16;
	o.mtu = IBV_MTU_4096;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	fill_pattern(self->l.p, BUFSZ, 31);

	/* WRITE: 256 packets, 16 bursts of 16. */
	c0 = ctr2_now();
	burst_write(_metadata, self, &p, 1, 5, 3, BUFSZ - 9);
	c1 = ctr2_now();
	EXPECT_EQ(c0.onecopy + 256, c1.onecopy);
	EXPECT_EQ(c0.bursts + 16, c1.bursts);

	/* SEND of 200000 bytes: 3 bursts and a last single packet. */
	memset(self->r.p, 0, BUFSZ);
	rg[0] = mk_sge(&self->r, 0, 70000);
	rg[1] = mk_sge(&self->r, 100001, 70000);
	rg[2] = mk_sge(&self->r, 300000, 70000);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 2, rg, 3));
	sg[0] = mk_sge(&self->l, 1, 200000);
	c0 = ctr2_now();
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 3, sg, 1, IBV_SEND_SIGNALED,
			     0, 0));
	expect_wc("send", p.scq[0], 3, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, 200000, NULL);
	c1 = ctr2_now();
	EXPECT_SAME(self->r.p, self->l.p + 1, 70000, "send sge 0");
	EXPECT_SAME(self->r.p + 100001, self->l.p + 70001, 70000, "send sge 1");
	EXPECT_SAME(self->r.p + 300000, self->l.p + 140001, 60000,
		    "send sge 2");
	EXPECT_UNTOUCHED(self->r.p + 360000, 10000, 0, "after the send");
	EXPECT_EQ(c0.onecopy + 49, c1.onecopy);
	EXPECT_EQ(c0.bursts + 3, c1.bursts);

	/* READ of 300001 bytes: 74 responses in 5 bursts. */
	memset(self->r.p, 0, BUFSZ);
	sg[0] = mk_sge(&self->r, 11, 300001);
	c0 = ctr2_now();
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_READ, 4, sg, 1,
			     IBV_SEND_SIGNALED, buf_addr(&self->l, 7),
			     self->l.mr->rkey));
	expect_wc("read", p.scq[0], 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  p.qp[0]->qp_num, ANY, NULL);
	c1 = ctr2_now();
	EXPECT_SAME(self->r.p + 11, self->l.p + 7, 300001, "read");
	EXPECT_UNTOUCHED(self->r.p + 11 + 300001, 4096, 0, "after the read");
	EXPECT_EQ(c0.onecopy + 74, c1.onecopy);
	EXPECT_EQ(c0.bursts + 5, c1.bursts);

	/* WRITE_WITH_IMM: the receive completes with the length and imm. */
	memset(self->r.p, 0, BUFSZ);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 5, NULL, 0));
	sg[0] = mk_sge(&self->l, 0, 100000);
	{
		struct ibv_send_wr wr = {
			.wr_id = 6, .sg_list = sg, .num_sge = 1,
			.opcode = IBV_WR_RDMA_WRITE_WITH_IMM,
			.send_flags = IBV_SEND_SIGNALED,
			.imm_data = htonl(0x5eed),
			.wr.rdma.remote_addr = buf_addr(&self->r, 64),
			.wr.rdma.rkey = self->r.mr->rkey,
		};

		ASSERT_EQ(0, post_send_wr(p.qp[0], &wr));
	}
	expect_wc("write imm", p.scq[0], 6, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv imm", p.rcq[1], 5, IBV_WC_SUCCESS,
		  IBV_WC_RECV_RDMA_WITH_IMM, p.qp[1]->qp_num, 100000, &wc);
	EXPECT_EQ(htonl(0x5eed), wc.imm_data);
	EXPECT_SAME(self->r.p + 64, self->l.p, 100000, "write imm");

	/*
	 * 16 SGEs of 8000 bytes, each over three pages: 64 KiB of them
	 * would need about 27 fragments. Such bursts go as single packets;
	 * only the tail, when it fits, is a burst.
	 */
	memset(self->r.p, 0, BUFSZ);
	for (i = 0; i < 16; i++)
		sg[i] = mk_sge(&self->l, 12288 * i + 4000, 8000);
	c0 = ctr2_now();
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 7, sg, 16,
			     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
			     self->r.mr->rkey));
	expect_wc("16 sges", p.scq[0], 7, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  p.qp[0]->qp_num, ANY, NULL);
	c1 = ctr2_now();
	for (i = 0; i < 16; i++)
		EXPECT_SAME(self->r.p + 8000 * i, self->l.p + 12288 * i + 4000,
			    8000, "sge");
	EXPECT_EQ(c0.onecopy + 32, c1.onecopy);
	EXPECT_GT(c0.bursts + 2, c1.bursts);
	pair_destroy(&p);

	/* MTU 1024: bursts of 64 packets. */
	o.mtu = IBV_MTU_1024;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	c0 = ctr2_now();
	burst_write(_metadata, self, &p, 8, 0, 1, BUFSZ - 1);
	c1 = ctr2_now();
	EXPECT_EQ(c0.onecopy + 1024, c1.onecopy);
	EXPECT_EQ(c0.bursts + 16, c1.bursts);
	pair_destroy(&p);
}

/*
 * While fault injection is switched on, even with every probability at
 * zero, the local path sends each PSN as a packet of its own, so that the
 * injector can act on each; bursts come back when it is switched off.
 */
TEST_F(local, local_bursts_not_under_faults)
{
	struct ctr2 c0, c1;
	struct pair p;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	fill_pattern(self->l.p, BUFSZ, 32);
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 1));
	c0 = ctr2_now();
	burst_write(_metadata, self, &p, 1, 0, 0, BUFSZ);
	c1 = ctr2_now();
	EXPECT_EQ(c0.bursts, c1.bursts);
	EXPECT_EQ(c0.onecopy + 1024, c1.onecopy);
	ASSERT_EQ(0, fault_knob_set("sib0", "active", 0));
	c0 = ctr2_now();
	burst_write(_metadata, self, &p, 2, 0, 0, BUFSZ);
	c1 = ctr2_now();
	EXPECT_EQ(c0.bursts + 16, c1.bursts);
	EXPECT_EQ(c0.onecopy + 1024, c1.onecopy);
	pair_destroy(&p);
}

/*
 * A SEND of bursts into a receive that is too small: the responder
 * finds it in the burst that crosses the end. The receive completes with
 * LOC_LEN_ERR, the SEND with REM_INV_REQ_ERR, and both QPs are in ERR.
 */
TEST_F(local, local_burst_send_too_long)
{
	struct ibv_sge sg, rg;
	struct ctr2 c0, c1;
	struct pair p;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	rg = mk_sge(&self->r, 0, 150000);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 1, &rg, 1));
	sg = mk_sge(&self->l, 0, 200000);
	c0 = ctr2_now();
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 2, &sg, 1, IBV_SEND_SIGNALED,
			     0, 0));
	expect_wc("recv", p.rcq[1], 1, IBV_WC_LOC_LEN_ERR, ANY,
		  p.qp[1]->qp_num, ANY, NULL);
	expect_wc("send", p.scq[0], 2, IBV_WC_REM_INV_REQ_ERR, ANY,
		  p.qp[0]->qp_num, ANY, NULL);
	c1 = ctr2_now();
	EXPECT_LT(c0.bursts, c1.bursts);
	EXPECT_STATE_SOON(p.qp[0], IBV_QPS_ERR);
	EXPECT_STATE_SOON(p.qp[1], IBV_QPS_ERR);
	pair_destroy(&p);
}

/*
 * A 1 MiB SEND whose first burst meets an empty receive queue: RNR NAK,
 * then (once a receive is posted) the requester goes back and sends the
 * rest again, packet by packet up to where it had been, then in bursts.
 * Every byte arrives once.
 */
TEST_F(local, local_burst_rnr_resend)
{
	long long rnr0 = sib0_counter("rnr_nak_rcvd");
	struct ibv_sge sg, rg;
	struct pair_opts o;
	struct pair p;

	pair_default_opts(&o);
	o.rnr_retry = 7;
	o.min_rnr_timer = 1;	/* 0.01 ms */
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	fill_pattern(self->l.p, BUFSZ, 33);
	memset(self->r.p, 0, BUFSZ);
	sg = mk_sge(&self->l, 0, BUFSZ);
	ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_SEND, 1, &sg, 1, IBV_SEND_SIGNALED,
			     0, 0));
	usleep(20000);
	rg = mk_sge(&self->r, 0, BUFSZ);
	ASSERT_EQ(0, post_recv_sges(p.qp[1], 2, &rg, 1));
	expect_wc("send", p.scq[0], 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", p.rcq[1], 2, IBV_WC_SUCCESS, IBV_WC_RECV,
		  p.qp[1]->qp_num, BUFSZ, NULL);
	EXPECT_SAME(self->r.p, self->l.p, BUFSZ, "send");
	EXPECT_LT(rnr0, sib0_counter("rnr_nak_rcvd"));
	EXPECT_TRUE(cq_quiet(p.rcq[1], 50));
	pair_destroy(&p);
}

/* ---- ACKs without packets on the local path -------------------------------- */

#define LACK_N	32

/* The change of local_acks and sent_pkts across LACK_N waited WRITEs. */
static void lack_writes(struct __test_metadata *_metadata,
			FIXTURE_DATA(local) *self, struct pair *p, int seed,
			long long *acks, long long *pkts)
{
	long long a0 = sib0_counter("local_acks");
	long long s0 = sib0_counter("sent_pkts");

	fill_pattern(self->l.p, LACK_N * 64, seed);
	memset(self->r.p, 0, LACK_N * 64);
	for (int i = 0; i < LACK_N; i++) {
		struct ibv_sge sg = mk_sge(&self->l, i * 64, 64);

		ASSERT_EQ(0, post_op(p->qp[0], IBV_WR_RDMA_WRITE, i, &sg, 1,
				     IBV_SEND_SIGNALED,
				     buf_addr(&self->r, i * 64),
				     self->r.mr->rkey));
		expect_wc("write", p->scq[0], i, IBV_WC_SUCCESS,
			  IBV_WC_RDMA_WRITE, p->qp[0]->qp_num, ANY, NULL);
	}
	EXPECT_SAME(self->r.p, self->l.p, LACK_N * 64, "writes");
	*acks = sib0_counter("local_acks") - a0;
	*pkts = sib0_counter("sent_pkts") - s0;
}

static int local_acks_param(int on)
{
	return sib_param_set("local_acks", on);
}

/*
 * Between QPs of one device each WRITE's ACK is passed without a packet:
 * local_acks counts one per WRITE, and only the WRITEs are packets. With
 * fault injection on (all probabilities 0) or the module parameter off,
 * every ACK is a packet again.
 */
TEST_F(local, local_acks)
{
	long long acks, pkts;
	struct pair p;

	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, NULL));
	ASSERT_EQ(0, local_acks_param(1));
	lack_writes(_metadata, self, &p, 51, &acks, &pkts);
	EXPECT_EQ(LACK_N, acks);
	EXPECT_EQ(LACK_N, pkts);

	ASSERT_EQ(0, fault_knob_set("sib0", "active", 1));
	lack_writes(_metadata, self, &p, 52, &acks, &pkts);
	EXPECT_EQ(0, fault_knob_set("sib0", "active", 0));
	EXPECT_EQ(0, acks);
	EXPECT_EQ(2 * LACK_N, pkts);

	ASSERT_EQ(0, local_acks_param(0));
	lack_writes(_metadata, self, &p, 53, &acks, &pkts);
	EXPECT_EQ(0, local_acks_param(1));
	EXPECT_EQ(0, acks);
	EXPECT_EQ(2 * LACK_N, pkts);
	pair_destroy(&p);
}

/*
 * ACKs in the register and responses as packets, interleaved: WRITE,
 * READ, WRITE, FETCH_ADD, ... posted without waiting, 200 rounds. Every
 * completion comes in order with its status, every byte and every
 * fetched value is right, and no retransmission was needed (an ACK that
 * passed a READ response would look like a lost response: implied NAK).
 */
TEST_F(local, local_acks_mixed)
{
	long long re0 = sib0_counter("retransmits");
	long long a0 = sib0_counter("local_acks");
	struct pair_opts o;
	struct pair p;
	uint64_t *ctr = (uint64_t *)(self->r.p + 8192);
	uint64_t *res = (uint64_t *)(self->l.p + 8192);

	pair_default_opts(&o);
	o.sq_wr = 64;
	o.cq_depth = 256;
	ASSERT_EQ(0, pair_create(&p, self->ctx, self->pd, self->gid, &o));
	*ctr = 0;
	for (int r = 0; r < 200 && _metadata->passed; r++) {
		struct ibv_sge w1 = mk_sge(&self->l, 0, 100 + r);
		struct ibv_sge rd = mk_sge(&self->l, 4096, 100 + r);
		struct ibv_sge w2 = mk_sge(&self->l, 2048, 50);
		struct ibv_sge fa = mk_sge(&self->l, 8192, 8);
		struct ibv_wc wc[4];

		fill_pattern(self->l.p, 4096, r);
		fill_pattern(self->r.p + 4096, 4096, r + 1000);
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 1, &w1, 1,
				     IBV_SEND_SIGNALED, buf_addr(&self->r, 0),
				     self->r.mr->rkey));
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_READ, 2, &rd, 1,
				     IBV_SEND_SIGNALED,
				     buf_addr(&self->r, 4096),
				     self->r.mr->rkey));
		ASSERT_EQ(0, post_op(p.qp[0], IBV_WR_RDMA_WRITE, 3, &w2, 1,
				     IBV_SEND_SIGNALED,
				     buf_addr(&self->r, 2048),
				     self->r.mr->rkey));
		ASSERT_EQ(0, post_atomic(p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
					 4, &fa, IBV_SEND_SIGNALED,
					 buf_addr(&self->r, 8192),
					 self->r.mr->rkey, 1, 0));
		ASSERT_EQ(4, poll_n(p.scq[0], wc, 4, WAIT_MS));
		for (int i = 0; i < 4; i++) {
			EXPECT_EQ(IBV_WC_SUCCESS, wc[i].status);
			EXPECT_EQ((uint64_t)i + 1, wc[i].wr_id);
		}
		EXPECT_SAME(self->r.p, self->l.p, 100 + r, "write 1");
		EXPECT_SAME(self->r.p + 2048, self->l.p + 2048, 50, "write 2");
		EXPECT_SAME(self->l.p + 4096, self->r.p + 4096, 100 + r, "read");
		EXPECT_EQ((uint64_t)r, *res);
	}
	EXPECT_EQ((uint64_t)200, *ctr);
	EXPECT_EQ(re0, sib0_counter("retransmits"));
	EXPECT_LT(a0, sib0_counter("local_acks"));
	pair_destroy(&p);
}

SIB_HARNESS_MAIN
