// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib's XRC transport (kernel/sib_xrc.c), on sib0 over lo: an XRC_INI QP
 * sending through one XRC_TGT QP into several XRC SRQs (SEND of one and
 * of several packets, RDMA WRITE, READ, both atomics; every byte checked,
 * every completion on the right SRQ's CQ); two processes sharing one XRC
 * domain through a file, the second opening the first one's TGT QP with
 * ibv_open_qp() and using it after the first closed its handle; and the
 * errors: a request naming no SRQ, an SRQ of another domain, a basic SRQ,
 * a destroyed SRQ (the sender's IBV_WC_REM_INV_REQ_ERR, the TGT QP in the
 * error state), a key of another PD than the SRQ's (IBV_WC_REM_ACCESS_ERR),
 * receives posted to XRC QPs (EINVAL), closing a domain in use (EBUSY).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <pthread.h>
#include <sched.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_topo.h"
#include "sib_pair_t.h"

#define BUFSZ	(1u << 20)
#define NSRQ	3
#define SLOT	8192	/* receive buffer of each SRQ WQE */

/*
 * One side's XRC objects: a domain, NSRQ XRC SRQs on it (CQ @rcq), an
 * XRC_TGT QP of it and an XRC_INI QP (CQ @scq) on @pd; connected to each
 * other over lo.
 */
struct xrc {
	struct ibv_xrcd *xrcd;
	struct ibv_cq *scq, *rcq;
	struct ibv_srq *srq[NSRQ];
	uint32_t srqn[NSRQ];
	struct ibv_qp *ini, *tgt;
};

static struct ibv_xrcd *xrcd_open(struct ibv_context *ctx, int fd, int oflags)
{
	struct ibv_xrcd_init_attr a = {
		.comp_mask = IBV_XRCD_INIT_ATTR_FD | IBV_XRCD_INIT_ATTR_OFLAGS,
		.fd = fd,
		.oflags = oflags,
	};

	return ibv_open_xrcd(ctx, &a);
}

static struct ibv_srq *xsrq_create(struct ibv_context *ctx, struct ibv_pd *pd,
				   struct ibv_xrcd *xrcd, struct ibv_cq *cq)
{
	struct ibv_srq_init_attr_ex a = {
		.attr = { .max_wr = 16, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_XRCD | IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = pd,
		.xrcd = xrcd,
		.cq = cq,
	};

	return ibv_create_srq_ex(ctx, &a);
}

static struct ibv_qp *tgt_create(struct ibv_context *ctx,
				 struct ibv_xrcd *xrcd)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = IBV_QP_INIT_ATTR_XRCD,
		.xrcd = xrcd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

static struct ibv_qp *ini_create(struct ibv_context *ctx, struct ibv_pd *pd,
				 struct ibv_cq *cq)
{
	struct ibv_qp_init_attr_ex a = {
		.qp_type = IBV_QPT_XRC_SEND,
		.send_cq = cq,
		.recv_cq = cq,
		.cap = { .max_send_wr = 32, .max_send_sge = 1 },
		.comp_mask = IBV_QP_INIT_ATTR_PD,
		.pd = pd,
	};

	return ibv_create_qp_ex(ctx, &a);
}

/*
 * @qp (XRC_INI or XRC_TGT) from RESET to RTS, from GID index @gid to QP
 * @dqpn at @dgid.
 */
static int xrc_connect_to(struct ibv_qp *qp, int gid,
			  const union ibv_gid *dgid, uint32_t dqpn)
{
	bool tgt = qp->qp_type == IBV_QPT_XRC_RECV;
	struct ibv_qp_attr a = {
		.qp_state = IBV_QPS_INIT,
		.port_num = 1,
		.qp_access_flags = IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_READ |
				   IBV_ACCESS_REMOTE_ATOMIC,
	};
	int ret;

	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX |
			    IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTR;
	a.path_mtu = IBV_MTU_1024;
	a.dest_qp_num = dqpn;
	a.rq_psn = 100;
	a.max_dest_rd_atomic = 4;
	a.min_rnr_timer = 1;
	a.ah_attr.is_global = 1;
	a.ah_attr.port_num = 1;
	a.ah_attr.grh.hop_limit = 64;
	a.ah_attr.grh.sgid_index = gid;
	a.ah_attr.grh.dgid = *dgid;
	ret = ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV |
			    IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
			    (tgt ? IBV_QP_MAX_DEST_RD_ATOMIC |
				   IBV_QP_MIN_RNR_TIMER : 0));
	if (ret)
		return ret;
	memset(&a, 0, sizeof(a));
	a.qp_state = IBV_QPS_RTS;
	a.sq_psn = 100;
	a.timeout = sib_qp_timeout(14);
	a.retry_cnt = 7;
	a.rnr_retry = 7;
	a.max_rd_atomic = 4;
	return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_SQ_PSN |
			     IBV_QP_TIMEOUT |
			     (tgt ? 0 : IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY |
					IBV_QP_MAX_QP_RD_ATOMIC));
}

/* The same, to QP @dqpn of this device over lo. */
static int xrc_connect(struct ibv_qp *qp, struct ibv_context *ctx, int gid,
		       uint32_t dqpn)
{
	union ibv_gid dgid;

	if (ibv_query_gid(ctx, 1, gid, &dgid))
		return errno ? errno : EINVAL;
	return xrc_connect_to(qp, gid, &dgid, dqpn);
}

/* The whole of struct xrc on @pd (a domain without a file). 0 or errno. */
static int xrc_build(struct xrc *x, struct ibv_context *ctx,
		     struct ibv_pd *pd, int gid)
{
	memset(x, 0, sizeof(*x));
	x->xrcd = xrcd_open(ctx, -1, O_CREAT);
	x->scq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	x->rcq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
	if (!x->xrcd || !x->scq || !x->rcq)
		return errno ? errno : EINVAL;
	for (int i = 0; i < NSRQ; i++) {
		x->srq[i] = xsrq_create(ctx, pd, x->xrcd, x->rcq);
		if (!x->srq[i] || ibv_get_srq_num(x->srq[i], &x->srqn[i]))
			return errno ? errno : EINVAL;
	}
	x->tgt = tgt_create(ctx, x->xrcd);
	x->ini = ini_create(ctx, pd, x->scq);
	if (!x->tgt || !x->ini)
		return errno ? errno : EINVAL;
	if (xrc_connect(x->tgt, ctx, gid, x->ini->qp_num) ||
	    xrc_connect(x->ini, ctx, gid, x->tgt->qp_num))
		return errno ? errno : EINVAL;
	return 0;
}

static void xrc_free(struct xrc *x)
{
	if (x->ini)
		ibv_destroy_qp(x->ini);
	if (x->tgt)
		ibv_destroy_qp(x->tgt);
	for (int i = 0; i < NSRQ; i++)
		if (x->srq[i])
			ibv_destroy_srq(x->srq[i]);
	if (x->rcq)
		ibv_destroy_cq(x->rcq);
	if (x->scq)
		ibv_destroy_cq(x->scq);
	if (x->xrcd)
		ibv_close_xrcd(x->xrcd);
}

/* One signaled request of the INI QP for XRC SRQ @srqn. */
static int xrc_post(struct ibv_qp *ini, enum ibv_wr_opcode op, uint64_t id,
		    struct ibv_sge *sge, uint32_t srqn, uint64_t raddr,
		    uint32_t rkey, uint64_t cmp_add, uint64_t swap)
{
	struct ibv_send_wr wr = {
		.wr_id = id,
		.sg_list = sge,
		.num_sge = sge ? 1 : 0,
		.opcode = op,
		.send_flags = IBV_SEND_SIGNALED,
	}, *bad;

	wr.qp_type.xrc.remote_srqn = srqn;
	if (op == IBV_WR_ATOMIC_FETCH_AND_ADD || op == IBV_WR_ATOMIC_CMP_AND_SWP) {
		wr.wr.atomic.remote_addr = raddr;
		wr.wr.atomic.rkey = rkey;
		wr.wr.atomic.compare_add = cmp_add;
		wr.wr.atomic.swap = swap;
	} else {
		wr.wr.rdma.remote_addr = raddr;
		wr.wr.rdma.rkey = rkey;
	}
	return ibv_post_send(ini, &wr, &bad);
}

SIB_LO_FIXTURE(xrc, BUFSZ);

TEST_F(xrc, device_advertises_xrc)
{
	struct ibv_device_attr a;

	ASSERT_EQ(0, ibv_query_device(self->ctx, &a));
	EXPECT_TRUE(a.device_cap_flags & IBV_DEVICE_XRC);
}

/*
 * SENDs of 1 to 5000 bytes (one and several packets) through one TGT QP
 * into three SRQs: each lands in a WQE of the SRQ it named, completes on
 * the SRQs' CQ with the TGT QP's number, byte for byte.
 */
TEST_F(xrc, send_to_several_srqs)
{
	static const uint32_t len[] = { 1, 700, 1024, 3000, 5000, 64 };
	enum { N = sizeof(len) / sizeof(len[0]) };
	struct ibv_wc wc;
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	memset(self->r.p, 0xee, BUFSZ);
	/* WQE j of SRQ i receives into slot i * 4 + j. */
	for (int i = 0; i < NSRQ; i++)
		for (int j = 0; j < 4; j++) {
			struct ibv_sge s = mk_sge(&self->r, (i * 4 + j) * SLOT,
						  SLOT);

			ASSERT_EQ(0, post_srq_recv_sges(x.srq[i],
							 1000 + i * 4 + j,
							 &s, 1));
		}
	fill_pattern(self->l.p, N * SLOT, 77);
	for (int k = 0; k < N; k++) {
		struct ibv_sge s = mk_sge(&self->l, k * SLOT, len[k]);

		ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_SEND, k, &s,
				      x.srqn[k % NSRQ], 0, 0, 0, 0));
		expect_wc("send", x.scq, k, IBV_WC_SUCCESS, IBV_WC_SEND,
			  x.ini->qp_num, ANY, NULL);
		/* Message k is the (k / NSRQ)th of SRQ k % NSRQ. */
		expect_wc("recv", x.rcq, 1000 + (k % NSRQ) * 4 + k / NSRQ,
			  IBV_WC_SUCCESS, IBV_WC_RECV, x.tgt->qp_num,
			  len[k], &wc);
		EXPECT_SAME(self->r.p + ((k % NSRQ) * 4 + k / NSRQ) * SLOT,
			    self->l.p + k * SLOT, len[k], "received");
	}
	/* Nothing else arrived, and the WQEs not used are still there. */
	EXPECT_TRUE(cq_quiet(x.rcq, 100));
	EXPECT_UNTOUCHED(self->r.p + 2 * SLOT, SLOT, 0xee, "unused WQE");
	EXPECT_STATE(x.tgt, IBV_QPS_RTS);
	xrc_free(&x);
}

/*
 * RDMA WRITE, READ, fetch-and-add and compare-and-swap: the keys are
 * checked against the PD of the SRQ each request names.
 */
TEST_F(xrc, write_read_atomics)
{
	struct ibv_sge s;
	uint64_t *t;
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	fill_pattern(self->l.p, 6000, 3);
	memset(self->r.p, 0, BUFSZ);
	s = mk_sge(&self->l, 0, 6000);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_RDMA_WRITE, 1, &s, x.srqn[1],
			      buf_addr(&self->r, 100), self->r.mr->rkey, 0, 0));
	expect_wc("write", x.scq, 1, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  x.ini->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 100, self->l.p, 6000, "written");
	/* No receive WQE was used: the SRQs' CQ stays quiet. */
	EXPECT_TRUE(cq_quiet(x.rcq, 50));

	fill_pattern(self->r.p + 65536, 5000, 9);
	memset(self->l.p + 65536, 0, 5000);
	s = mk_sge(&self->l, 65536, 5000);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_RDMA_READ, 2, &s, x.srqn[2],
			      buf_addr(&self->r, 65536), self->r.mr->rkey, 0, 0));
	expect_wc("read", x.scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  x.ini->qp_num, 5000, NULL);
	EXPECT_SAME(self->l.p + 65536, self->r.p + 65536, 5000, "read");

	t = (uint64_t *)(self->r.p + 131072);
	*t = 40;
	s = mk_sge(&self->l, 131072, 8);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_ATOMIC_FETCH_AND_ADD, 3, &s,
			      x.srqn[0], buf_addr(&self->r, 131072),
			      self->r.mr->rkey, 2, 0));
	expect_wc("fadd", x.scq, 3, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD,
		  x.ini->qp_num, ANY, NULL);
	EXPECT_EQ(40u, *(uint64_t *)(self->l.p + 131072));
	EXPECT_EQ(42u, *t);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_ATOMIC_CMP_AND_SWP, 4, &s,
			      x.srqn[0], buf_addr(&self->r, 131072),
			      self->r.mr->rkey, 42, 0x1234));
	expect_wc("cswap", x.scq, 4, IBV_WC_SUCCESS, IBV_WC_COMP_SWAP,
		  x.ini->qp_num, ANY, NULL);
	EXPECT_EQ(42u, *(uint64_t *)(self->l.p + 131072));
	EXPECT_EQ(0x1234u, *t);
	xrc_free(&x);
}

/*
 * On-demand paging through XRC: a SEND of several packets into an XRC
 * SRQ's WQE whose buffer is in pages of an ODP MR that were never
 * touched, an RDMA WRITE into such pages and a READ from them. The TGT
 * QP answers each page fault as an RC QP does, with an RNR NAK, and the
 * INI QP sends again after the RNR timer: every message arrives byte for
 * byte and none waits for the 67 ms ACK timeout (a TGT QP that only
 * dropped the packet would leave the requester to it).
 */
TEST_F(xrc, odp_untouched_pages)
{
	const int acc = IBV_ACCESS_ON_DEMAND | IBV_ACCESS_LOCAL_WRITE |
			IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
	long long rnr0 = sib0_counter("odp_rnr_nak_sent");
	long long to0 = sib0_counter("ack_timeouts");
	struct ibv_device_attr_ex ax;
	struct buf src, dst;
	struct ibv_sge s, rs;
	uint8_t *want;
	long long rnr;
	struct xrc x;

	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	ASSERT_TRUE(ax.xrc_odp_caps & IBV_ODP_SUPPORT_SRQ_RECV);
	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	ASSERT_EQ(0, odp_buf(&src, self->pd, 65536, acc));
	ASSERT_EQ(0, odp_buf(&dst, self->pd, 65536, acc));
	want = malloc(5000);
	ASSERT_NE(NULL, want);
	fill_pattern(want, 5000, 21);
	memcpy(src.p, want, 5000);
	s = mk_sge(&src, 0, 5000);

	rs = mk_sge(&dst, 0, SLOT);
	ASSERT_EQ(0, post_srq_recv_sges(x.srq[1], 7, &rs, 1));
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_SEND, 1, &s, x.srqn[1], 0, 0, 0,
			      0));
	expect_wc("send", x.scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  x.ini->qp_num, ANY, NULL);
	expect_wc("recv", x.rcq, 7, IBV_WC_SUCCESS, IBV_WC_RECV,
		  x.tgt->qp_num, 5000, NULL);
	EXPECT_SAME(dst.p, want, 5000, "received");
	rnr = sib0_counter("odp_rnr_nak_sent");
	EXPECT_LT(rnr0, rnr) TH_LOG("no RNR NAK for the SRQ's page faults");

	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_RDMA_WRITE, 2, &s, x.srqn[0],
			      buf_addr(&dst, 16384), dst.mr->rkey, 0, 0));
	expect_wc("write", x.scq, 2, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  x.ini->qp_num, ANY, NULL);
	EXPECT_SAME(dst.p + 16384, want, 5000, "written");
	EXPECT_LT(rnr, sib0_counter("odp_rnr_nak_sent"))
		TH_LOG("no RNR NAK for the WRITE's page faults");

	/* Pages never touched on both sides: the READ brings zeros. */
	memset(src.p + 8192, 0xee, 5000);
	s = mk_sge(&src, 8192, 5000);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_RDMA_READ, 3, &s, x.srqn[2],
			      buf_addr(&dst, 40960), dst.mr->rkey, 0, 0));
	expect_wc("read", x.scq, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  x.ini->qp_num, 5000, NULL);
	EXPECT_UNTOUCHED(src.p + 8192, 5000, 0, "read");

	EXPECT_EQ(to0, sib0_counter("ack_timeouts"))
		TH_LOG("a request waited for the ACK timeout");
	EXPECT_STATE(x.tgt, IBV_QPS_RTS);
	xrc_free(&x);
	odp_free(&src);
	odp_free(&dst);
	free(want);
}

/*
 * A request naming SRQ @srqn, which the TGT QP may not deliver to: the
 * sender's IBV_WC_REM_INV_REQ_ERR, the TGT QP in the error state, and no
 * byte or completion anywhere.
 */
static void expect_inv_srq(struct __test_metadata *_metadata,
			   FIXTURE_DATA(xrc) *self, struct xrc *x,
			   uint32_t srqn)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 100);

	memset(self->r.p, 0xee, SLOT);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_SEND, 9, &s, srqn, 0, 0, 0, 0));
	expect_wc("send", x->scq, 9, IBV_WC_REM_INV_REQ_ERR, ANY,
		  x->ini->qp_num, ANY, NULL);
	EXPECT_STATE_SOON(x->tgt, IBV_QPS_ERR);
	EXPECT_TRUE(cq_quiet(x->rcq, 100));
	EXPECT_UNTOUCHED(self->r.p, SLOT, 0xee, "receive buffer");
}

static void post_slot(struct __test_metadata *_metadata,
		      FIXTURE_DATA(xrc) *self, struct ibv_srq *srq)
{
	struct ibv_sge s = mk_sge(&self->r, 0, SLOT);

	ASSERT_EQ(0, post_srq_recv_sges(srq, 1, &s, 1));
}

TEST_F(xrc, srq_number_unknown)
{
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	post_slot(_metadata, self, x.srq[0]);
	expect_inv_srq(_metadata, self, &x, 0xfffff0);
	xrc_free(&x);
}

TEST_F(xrc, srq_of_another_domain)
{
	struct ibv_xrcd *other = xrcd_open(self->ctx, -1, O_CREAT);
	struct ibv_srq *srq;
	uint32_t n;
	struct xrc x;

	ASSERT_NE(NULL, other);
	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	srq = xsrq_create(self->ctx, self->pd, other, x.rcq);
	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &n));
	post_slot(_metadata, self, srq);
	expect_inv_srq(_metadata, self, &x, n);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
	xrc_free(&x);
	EXPECT_EQ(0, ibv_close_xrcd(other));
}

TEST_F(xrc, basic_srq_number)
{
	struct ibv_srq_init_attr sa = { .attr = { .max_wr = 4, .max_sge = 1 } };
	struct ibv_srq *srq = ibv_create_srq(self->pd, &sa);
	uint32_t n;
	struct xrc x;

	ASSERT_NE(NULL, srq);
	ASSERT_EQ(0, ibv_get_srq_num(srq, &n));
	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	post_slot(_metadata, self, srq);
	expect_inv_srq(_metadata, self, &x, n);
	xrc_free(&x);
	EXPECT_EQ(0, ibv_destroy_srq(srq));
}

/* An XRC SRQ may go while TGT QPs still name it: then it is unknown. */
TEST_F(xrc, srq_destroyed_while_named)
{
	uint32_t n;
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	n = x.srqn[1];
	post_slot(_metadata, self, x.srq[1]);
	ASSERT_EQ(0, ibv_destroy_srq(x.srq[1]));
	x.srq[1] = NULL;
	expect_inv_srq(_metadata, self, &x, n);
	xrc_free(&x);
}

/* One SEND of an INI QP to XRC SRQ ->srqn, from a thread of its own. */
struct xrc_one_send {
	struct ibv_qp *ini;
	struct ibv_cq *scq;
	struct ibv_sge sge;
	uint32_t srqn;
	int status;		/* the completion's, or -1: none came */
};

static void *xrc_one_send(void *arg)
{
	struct xrc_one_send *o = arg;
	struct ibv_wc wc;

	o->status = -1;
	if (!xrc_post(o->ini, IBV_WR_SEND, 7, &o->sge, o->srqn, 0, 0, 0, 0) &&
	    poll_n(o->scq, &wc, 1, 60000) == 1)
		o->status = wc.status;
	return NULL;
}

#define XRC_LOOKUP_ROUNDS	12
#define XRC_LOOKUP_DELAY_US	50000

/*
 * An XRC SRQ destroyed while a request for it is being delivered. Every
 * lookup by number waits 50 ms between finding its object and taking the
 * reference ("lookup_delay_us"): the doorbell's of the INI QP, the
 * delivery's of the TGT QP, the TGT QP's of the SRQ. The destroy comes at
 * a different moment of that chain each round, within the SRQ's lookup
 * in some rounds. ib_core frees the SRQ when destroy returns: only the
 * destroy's RCU grace period keeps it until such a lookup is done (a
 * module without it: "use-after-free in sib_srq_get" on the KASAN kernel).
 * The SEND either arrived before the destroy or found no SRQ
 * (IBV_WC_REM_INV_REQ_ERR), and the kernel said nothing.
 */
TEST_F_TIMEOUT(xrc, srq_destroyed_during_lookup, 300)
{
	int arrived = 0, refused = 0;

	for (int round = 0; round < XRC_LOOKUP_ROUNDS; round++) {
		struct xrc_one_send o = { .sge = mk_sge(&self->l, 0, 100) };
		struct ibv_wc wc;
		struct xrc x;
		pthread_t t;

		ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
		post_slot(_metadata, self, x.srq[1]);
		o.ini = x.ini;
		o.scq = x.scq;
		o.srqn = x.srqn[1];
		dmesg_clear();
		ASSERT_EQ(0, fault_knob_set(SIB_DEV, "lookup_delay_us",
					    XRC_LOOKUP_DELAY_US));
		ASSERT_EQ(0, pthread_create(&t, NULL, xrc_one_send, &o));
		usleep(10000 + (round * 37000) % 160000);
		ASSERT_EQ(0, ibv_destroy_srq(x.srq[1]));
		x.srq[1] = NULL;
		pthread_join(t, NULL);
		ASSERT_EQ(0, fault_knob_set(SIB_DEV, "lookup_delay_us", 0));
		if (o.status == IBV_WC_SUCCESS) {
			arrived++;
			EXPECT_EQ(1, poll_n(x.rcq, &wc, 1, 1000));
		} else {
			refused++;
			EXPECT_EQ(IBV_WC_REM_INV_REQ_ERR, o.status)
				TH_LOG("round %d: %s", round,
				       o.status < 0 ? "no completion" :
				       wcs(o.status));
		}
		ASSERT_FALSE(dmesg_has("BUG:") || dmesg_has("WARNING:"))
			TH_LOG("round %d", round);
		xrc_free(&x);
	}
	TH_LOG("%d SENDs arrived before the destroy, %d found no SRQ",
	       arrived, refused);
}

/* The rkey of a PD other than the named SRQ's: a remote access error. */
TEST_F(xrc, key_of_another_pd)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_sge s;
	struct buf b;
	struct xrc x;

	ASSERT_NE(NULL, pd2);
	ASSERT_EQ(0, buf_new(&b, pd2, 4096, ACC_ALL));
	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	memset(b.p, 0xee, 4096);
	s = mk_sge(&self->l, 0, 64);
	ASSERT_EQ(0, xrc_post(x.ini, IBV_WR_RDMA_WRITE, 5, &s, x.srqn[0],
			      buf_addr(&b, 0), b.mr->rkey, 0, 0));
	expect_wc("write", x.scq, 5, IBV_WC_REM_ACCESS_ERR, ANY,
		  x.ini->qp_num, ANY, NULL);
	EXPECT_UNTOUCHED(b.p, 4096, 0xee, "other PD's buffer");
	EXPECT_STATE_SOON(x.tgt, IBV_QPS_ERR);
	xrc_free(&x);
	buf_free(&b);
	ibv_dealloc_pd(pd2);
}

TEST_F(xrc, post_recv_refused)
{
	struct ibv_sge s = mk_sge(&self->r, 0, 64);
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	EXPECT_EQ(EINVAL, post_recv_sges(x.ini, 1, &s, 1));
	EXPECT_EQ(EINVAL, post_recv_sges(x.tgt, 2, &s, 1));
	xrc_free(&x);
}

/* A TGT QP sends nothing: a SEND posted to it is refused. */
TEST_F(xrc, post_send_on_tgt_refused)
{
	struct ibv_sge s = mk_sge(&self->l, 0, 64);
	struct xrc x;

	ASSERT_EQ(0, xrc_build(&x, self->ctx, self->pd, self->gid));
	EXPECT_NE(0, post_op(x.tgt, IBV_WR_SEND, 1, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	xrc_free(&x);
}

TEST_F(xrc, close_domain_in_use)
{
	struct ibv_xrcd *xrcd = xrcd_open(self->ctx, -1, O_CREAT);
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_srq *srq;
	struct ibv_qp *tgt;

	ASSERT_NE(NULL, xrcd);
	ASSERT_NE(NULL, cq);
	srq = xsrq_create(self->ctx, self->pd, xrcd, cq);
	ASSERT_NE(NULL, srq);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(xrcd));
	ASSERT_EQ(0, ibv_destroy_srq(srq));
	tgt = tgt_create(self->ctx, xrcd);
	ASSERT_NE(NULL, tgt);
	EXPECT_EQ(EBUSY, ibv_close_xrcd(xrcd));
	ASSERT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
	ibv_destroy_cq(cq);
}

/* An XRC SRQ needs its domain and its CQ; XRC QPs their own attributes. */
TEST_F(xrc, create_errors)
{
	struct ibv_cq *cq = ibv_create_cq(self->ctx, 4, NULL, NULL, 0);
	struct ibv_srq_init_attr_ex sa = {
		.attr = { .max_wr = 4, .max_sge = 1 },
		.comp_mask = IBV_SRQ_INIT_ATTR_TYPE | IBV_SRQ_INIT_ATTR_PD |
			     IBV_SRQ_INIT_ATTR_CQ,
		.srq_type = IBV_SRQT_XRC,
		.pd = self->pd,
		.cq = cq,
	};
	struct ibv_qp_init_attr_ex qa = {
		.qp_type = IBV_QPT_XRC_RECV,
		.comp_mask = 0,
	};

	ASSERT_NE(NULL, cq);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_srq_ex(self->ctx, &sa));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_create_qp_ex(self->ctx, &qa));
	EXPECT_NE(0, errno);
	ibv_destroy_cq(cq);
}

/* ---- two processes ---------------------------------------------------- */

static int xrc_child_fail(const char *what)
{
	fprintf(stderr, "# child: %s: %s\n", what, strerror(errno));
	return 1;
}

/*
 * The second process: opens the domain through the file, and the TGT QP
 * the first one created; waits until the first closed its handles; then
 * connects its own INI QP to that TGT QP and SENDs into its own SRQ.
 */
static int xrc_child(const char *path, uint32_t tgt_qpn, int rd, int wr)
{
	struct ibv_context *ctx = pair_open_dev(SIB_DEV);
	struct ibv_qp_open_attr oa = {
		.comp_mask = IBV_QP_OPEN_ATTR_NUM | IBV_QP_OPEN_ATTR_XRCD |
			     IBV_QP_OPEN_ATTR_TYPE,
		.qp_num = tgt_qpn,
		.qp_type = IBV_QPT_XRC_RECV,
	};
	struct ibv_qp *tgt, *ini;
	struct ibv_xrcd *xrcd;
	struct ibv_srq *srq;
	struct ibv_cq *cq;
	struct ibv_pd *pd;
	struct ibv_wc wc;
	struct buf l, r;
	uint32_t srqn;
	int gid, fd;
	char c = 0;

	if (!ctx)
		return xrc_child_fail("open sib0");
	gid = find_lo_gid(ctx);
	fd = open(path, O_RDONLY);
	pd = ibv_alloc_pd(ctx);
	if (fd < 0 || !pd || gid < 0)
		return xrc_child_fail("setup");
	xrcd = xrcd_open(ctx, fd, 0);
	if (!xrcd)
		return xrc_child_fail("ibv_open_xrcd");
	oa.xrcd = xrcd;
	tgt = ibv_open_qp(ctx, &oa);
	if (!tgt)
		return xrc_child_fail("ibv_open_qp");
	/* Opened: the first process may close its handles now. */
	if (write(wr, "o", 1) != 1 || read(rd, &c, 1) != 1 || c != 'c')
		return xrc_child_fail("sync");
	cq = ibv_create_cq(ctx, 16, NULL, NULL, 0);
	srq = cq ? xsrq_create(ctx, pd, xrcd, cq) : NULL;
	ini = cq ? ini_create(ctx, pd, cq) : NULL;
	if (!srq || !ini || ibv_get_srq_num(srq, &srqn))
		return xrc_child_fail("create");
	if (buf_new(&l, pd, 8192, ACC_ALL) || buf_new(&r, pd, 8192, ACC_ALL))
		return xrc_child_fail("buffers");
	if (xrc_connect(tgt, ctx, gid, ini->qp_num) ||
	    xrc_connect(ini, ctx, gid, tgt_qpn))
		return xrc_child_fail("connect");
	do {
		struct ibv_sge s = mk_sge(&r, 0, 8192);

		if (post_srq_recv_sges(srq, 77, &s, 1))
			return xrc_child_fail("post_srq_recv");
		fill_pattern(l.p, 3000, 11);
		s = mk_sge(&l, 0, 3000);
		if (xrc_post(ini, IBV_WR_SEND, 1, &s, srqn, 0, 0, 0, 0))
			return xrc_child_fail("post_send");
	} while (0);
	/* The send's and the receive's completions, both on cq. */
	for (int i = 0; i < 2; i++) {
		if (poll_n(cq, &wc, 1, WAIT_MS) != 1 ||
		    wc.status != IBV_WC_SUCCESS)
			return xrc_child_fail("completion");
		if (wc.opcode == IBV_WC_RECV &&
		    (wc.wr_id != 77 || wc.byte_len != 3000 ||
		     wc.qp_num != tgt_qpn))
			return xrc_child_fail("receive completion");
	}
	if (first_diff(l.p, r.p, 3000) != -1)
		return xrc_child_fail("data");
	ibv_destroy_qp(ini);
	ibv_destroy_qp(tgt);
	ibv_destroy_srq(srq);
	ibv_destroy_cq(cq);
	buf_free(&l);
	buf_free(&r);
	if (ibv_close_xrcd(xrcd))
		return xrc_child_fail("close_xrcd");
	close(fd);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	return 0;
}

TEST_F(xrc, two_processes_share_domain)
{
	char path[] = "/tmp/sib_xrc_XXXXXX";
	int to_child[2], to_parent[2], fd, status;
	struct ibv_xrcd *xrcd;
	struct ibv_qp *tgt;
	uint32_t qpn;
	pid_t pid;
	char c = 0;

	fd = mkstemp(path);
	ASSERT_LE(0, fd);
	xrcd = xrcd_open(self->ctx, fd, O_CREAT);
	ASSERT_NE(NULL, xrcd);
	tgt = tgt_create(self->ctx, xrcd);
	ASSERT_NE(NULL, tgt);
	qpn = tgt->qp_num;
	ASSERT_EQ(0, pipe(to_child));
	ASSERT_EQ(0, pipe(to_parent));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid)
		_exit(xrc_child(path, qpn, to_child[0], to_parent[1]));
	ASSERT_EQ(1, read(to_parent[0], &c, 1));
	EXPECT_EQ('o', c);
	/* The TGT QP outlives the handle of the process that created it. */
	EXPECT_EQ(0, ibv_destroy_qp(tgt));
	EXPECT_EQ(0, ibv_close_xrcd(xrcd));
	ASSERT_EQ(1, write(to_child[1], "c", 1));
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(fd);
	unlink(path);
}

/* ---- two devices over RoCEv2 ---------------------------------------- */

#define TAG	"x"

/*
 * The target side (domain, SRQs, TGT QP, memory) on sibA, the XRC_INI QP
 * on sibB: every XRC packet crosses the veth as RoCEv2.
 */
FIXTURE(wire) {
	struct sib_topo t;	/* sibA in namespace A, sibB in B; IPv4 */
	struct ibv_context *ca, *cb;
	struct ibv_pd *pa, *pb;
	int ga, gb;
	struct buf l, r;
	struct xrc x;		/* its ini and scq are on sibB */
};

FIXTURE_SETUP(wire)
{
	struct xrc *x = &self->x;
	union ibv_gid da, db;

	memset(x, 0, sizeof(*x));
	self->t = (struct sib_topo){ .kind = SIB_TOPO_VETH, .tag = TAG };
	ASSERT_EQ(0, sib_topo_up(&self->t)) TH_LOG("%s", self->t.err);
	self->ga = self->t.gid[0];
	self->gb = self->t.gid[1];
	self->ca = pair_open_dev(self->t.ibdev[0]);
	self->cb = pair_open_dev(self->t.ibdev[1]);
	ASSERT_NE(NULL, self->ca);
	ASSERT_NE(NULL, self->cb);
	self->pa = ibv_alloc_pd(self->ca);
	self->pb = ibv_alloc_pd(self->cb);
	ASSERT_NE(NULL, self->pa);
	ASSERT_NE(NULL, self->pb);
	ASSERT_EQ(0, buf_new(&self->r, self->pa, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, buf_new(&self->l, self->pb, BUFSZ, ACC_ALL));
	x->xrcd = xrcd_open(self->ca, -1, O_CREAT);
	ASSERT_NE(NULL, x->xrcd);
	x->rcq = ibv_create_cq(self->ca, 64, NULL, NULL, 0);
	x->scq = ibv_create_cq(self->cb, 64, NULL, NULL, 0);
	ASSERT_NE(NULL, x->rcq);
	ASSERT_NE(NULL, x->scq);
	for (int i = 0; i < NSRQ; i++) {
		x->srq[i] = xsrq_create(self->ca, self->pa, x->xrcd, x->rcq);
		ASSERT_NE(NULL, x->srq[i]);
		ASSERT_EQ(0, ibv_get_srq_num(x->srq[i], &x->srqn[i]));
	}
	x->tgt = tgt_create(self->ca, x->xrcd);
	x->ini = ini_create(self->cb, self->pb, x->scq);
	ASSERT_NE(NULL, x->tgt);
	ASSERT_NE(NULL, x->ini);
	ASSERT_EQ(0, ibv_query_gid(self->ca, 1, self->ga, &da));
	ASSERT_EQ(0, ibv_query_gid(self->cb, 1, self->gb, &db));
	ASSERT_EQ(0, xrc_connect_to(x->tgt, self->ga, &db, x->ini->qp_num));
	ASSERT_EQ(0, xrc_connect_to(x->ini, self->gb, &da, x->tgt->qp_num));
}

FIXTURE_TEARDOWN(wire)
{
	xrc_free(&self->x);
	buf_free(&self->l);
	buf_free(&self->r);
	if (self->pa)
		ibv_dealloc_pd(self->pa);
	if (self->pb)
		ibv_dealloc_pd(self->pb);
	if (self->ca)
		ibv_close_device(self->ca);
	if (self->cb)
		ibv_close_device(self->cb);
	sib_topo_down(&self->t);
}

/*
 * A packet socket on veth end @ifname in namespace @nsname: the IPv4
 * frames it receives (sib's own transmit path passes packet sockets by,
 * so each end sees what the other sent). Returns the socket or -1.
 */
static int wire_tap(const char *nsname, const char *ifname)
{
	char path[64];
	int self_ns = open("/proc/self/ns/net", O_RDONLY);
	int ns;
	struct sockaddr_ll a = {
		.sll_family = AF_PACKET,
		.sll_protocol = htons(ETH_P_IP),
	};
	int fd = -1;

	snprintf(path, sizeof(path), "/run/netns/%s", nsname);
	ns = open(path, O_RDONLY);
	if (self_ns < 0 || ns < 0 || setns(ns, CLONE_NEWNET))
		goto out;
	a.sll_ifindex = if_nametoindex(ifname);
	fd = socket(AF_PACKET, SOCK_DGRAM | SOCK_NONBLOCK, htons(ETH_P_IP));
	if (fd >= 0 && (!a.sll_ifindex ||
			bind(fd, (struct sockaddr *)&a, sizeof(a)))) {
		close(fd);
		fd = -1;
	}
	setns(self_ns, CLONE_NEWNET);
out:
	if (ns >= 0)
		close(ns);
	if (self_ns >= 0)
		close(self_ns);
	return fd;
}

/*
 * The RoCEv2 packets the tap saw: how many XRC SEND_ONLY requests whose
 * XRCETH names @srqn and whose length is BTH + XRCETH + @paylen + ICRC,
 * and how many XRC ACKs (BTH + AETH, no XRCETH).
 */
static void wire_count(int fd, uint32_t srqn, uint32_t paylen, int *sends,
		       int *acks)
{
	uint8_t f[2048];
	ssize_t n;

	*sends = 0;
	*acks = 0;
	while ((n = recv(fd, f, sizeof(f), 0)) > 0) {
		const uint8_t *t = f + 28;	/* IPv4 (no options) and UDP */
		size_t tl = n - 28;

		if (n < 28 + 12 || (f[0] & 0x0f) != 5 || f[9] != IPPROTO_UDP ||
		    ((f[22] << 8) | f[23]) != 4791)
			continue;
		if (t[0] == 0xa4 && tl == 12 + 4 + paylen + 4 &&
		    ((t[13] << 16) | (t[14] << 8) | t[15]) == srqn)
			(*sends)++;
		if (t[0] == 0xb1 && tl == 12 + 4 + 4)
			(*acks)++;
	}
}

/*
 * On the wire, an XRC SEND is opcode 0xa4 with the XRCETH after the BTH,
 * and its ACK opcode 0xb1 without one.
 */
TEST_F_TIMEOUT(wire, xrceth_on_the_wire, 120)
{
	struct xrc *x = &self->x;
	int fa = wire_tap(self->t.ns[0], self->t.ifname[0]);
	int fb = wire_tap(self->t.ns[1], self->t.ifname[1]);
	int sends, acks, n;
	struct ibv_sge s;

	ASSERT_LE(0, fa);
	ASSERT_LE(0, fb);
	s = mk_sge(&self->r, 0, SLOT);
	ASSERT_EQ(0, post_srq_recv_sges(x->srq[2], 30, &s, 1));
	fill_pattern(self->l.p, 200, 8);
	s = mk_sge(&self->l, 0, 200);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_SEND, 7, &s, x->srqn[2],
			      0, 0, 0, 0));
	expect_wc("send", x->scq, 7, IBV_WC_SUCCESS, IBV_WC_SEND,
		  x->ini->qp_num, ANY, NULL);
	expect_wc("recv", x->rcq, 30, IBV_WC_SUCCESS, IBV_WC_RECV,
		  x->tgt->qp_num, 200, NULL);
	EXPECT_SAME(self->r.p, self->l.p, 200, "received");
	usleep(100000);
	wire_count(fa, x->srqn[2], 200, &sends, &n);
	EXPECT_EQ(1, sends);
	wire_count(fb, x->srqn[2], 200, &n, &acks);
	EXPECT_LE(1, acks);
	close(fa);
	close(fb);
}

/*
 * Between two sib devices: SENDs of one and of five packets into two
 * SRQs, a WRITE, a READ and a fetch-and-add, every byte checked; then an
 * unknown SRQ number, NAKed across the wire.
 */
TEST_F_TIMEOUT(wire, xrc_over_roce, 120)
{
	struct xrc *x = &self->x;
	struct ibv_sge s;
	struct ibv_wc wc;
	uint64_t *t;

	memset(self->r.p, 0xee, 4 * SLOT);
	for (int i = 0; i < 2; i++) {
		s = mk_sge(&self->r, i * SLOT, SLOT);
		ASSERT_EQ(0, post_srq_recv_sges(x->srq[i], 10 + i, &s, 1));
	}
	fill_pattern(self->l.p, 2 * SLOT, 21);
	s = mk_sge(&self->l, 0, 5000);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_SEND, 1, &s, x->srqn[1],
			      0, 0, 0, 0));
	expect_wc("send", x->scq, 1, IBV_WC_SUCCESS, IBV_WC_SEND,
		  x->ini->qp_num, ANY, NULL);
	expect_wc("recv", x->rcq, 11, IBV_WC_SUCCESS, IBV_WC_RECV,
		  x->tgt->qp_num, 5000, &wc);
	EXPECT_SAME(self->r.p + SLOT, self->l.p, 5000, "SEND of 5 packets");
	s = mk_sge(&self->l, SLOT, 300);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_SEND, 2, &s, x->srqn[0],
			      0, 0, 0, 0));
	expect_wc("send", x->scq, 2, IBV_WC_SUCCESS, IBV_WC_SEND,
		  x->ini->qp_num, ANY, NULL);
	expect_wc("recv", x->rcq, 10, IBV_WC_SUCCESS, IBV_WC_RECV,
		  x->tgt->qp_num, 300, &wc);
	EXPECT_SAME(self->r.p, self->l.p + SLOT, 300, "SEND of 1 packet");

	s = mk_sge(&self->l, 0, 6000);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_RDMA_WRITE, 3, &s, x->srqn[2],
			      buf_addr(&self->r, 65536), self->r.mr->rkey,
			      0, 0));
	expect_wc("write", x->scq, 3, IBV_WC_SUCCESS, IBV_WC_RDMA_WRITE,
		  x->ini->qp_num, ANY, NULL);
	EXPECT_SAME(self->r.p + 65536, self->l.p, 6000, "written");
	fill_pattern(self->r.p + 131072, 7000, 5);
	s = mk_sge(&self->l, 131072, 7000);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_RDMA_READ, 4, &s, x->srqn[2],
			      buf_addr(&self->r, 131072), self->r.mr->rkey,
			      0, 0));
	expect_wc("read", x->scq, 4, IBV_WC_SUCCESS, IBV_WC_RDMA_READ,
		  x->ini->qp_num, 7000, NULL);
	EXPECT_SAME(self->l.p + 131072, self->r.p + 131072, 7000, "read");
	t = (uint64_t *)(self->r.p + 262144);
	*t = 1000;
	s = mk_sge(&self->l, 262144, 8);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_ATOMIC_FETCH_AND_ADD, 5, &s,
			      x->srqn[0], buf_addr(&self->r, 262144),
			      self->r.mr->rkey, 5, 0));
	expect_wc("fadd", x->scq, 5, IBV_WC_SUCCESS, IBV_WC_FETCH_ADD,
		  x->ini->qp_num, ANY, NULL);
	EXPECT_EQ(1000u, *(uint64_t *)(self->l.p + 262144));
	EXPECT_EQ(1005u, *t);
	EXPECT_TRUE(cq_quiet(x->rcq, 50));

	s = mk_sge(&self->l, 0, 64);
	ASSERT_EQ(0, xrc_post(x->ini, IBV_WR_SEND, 6, &s, 0xabcdef,
			      0, 0, 0, 0));
	expect_wc("send", x->scq, 6, IBV_WC_REM_INV_REQ_ERR, ANY,
		  x->ini->qp_num, ANY, NULL);
	EXPECT_STATE_SOON(x->tgt, IBV_QPS_ERR);
}

SIB_HARNESS_MAIN
