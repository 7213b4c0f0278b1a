// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib device memory (ibv_alloc_dm) on sib0 over lo: allocation, the
 * device-wide limit and the object counts, copies to and from it byte
 * for byte with their bounds and alignment rules, the mapping (exactly
 * the allocation's pages, through its own context only), zero-based MRs
 * on it (ibv_reg_dm_mr) used as lkey and rkey by SEND, RECV, RDMA WRITE,
 * READ and atomics over RC, with bounds, PD and busy checks, import, and
 * cleanup by process exit and by device removal.
 *
 * QP 0 is the requester ("A"), QP 1 the responder ("B").
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"
#include "../provider/sib.h"

#define BUFSZ		(64 * 1024)
#define DM_ACC		(IBV_ACCESS_ZERO_BASED | IBV_ACCESS_LOCAL_WRITE | \
			 IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ | \
			 IBV_ACCESS_REMOTE_ATOMIC)

static struct ibv_dm *dm_new(struct ibv_context *ctx, size_t len,
			     uint32_t log_align)
{
	struct ibv_alloc_dm_attr a = { .length = len,
				       .log_align_req = log_align };

	return ibv_alloc_dm(ctx, &a);
}

/* The kernel's description of allocation @handle (SIB_METHOD_DM_QUERY). */
static int dm_query(struct ibv_context *ctx, uint32_t handle,
		    struct sib_dm_info *info)
{
	SIB_CMD_BUFFER(cmd, UVERBS_OBJECT_DM, SIB_METHOD_DM_QUERY, 2);

	memset(info, 0, sizeof(*info));
	sib_cmd_attr_in_obj(cmd, SIB_ATTR_QUERY_DM_HANDLE, handle);
	sib_cmd_attr_out(cmd, SIB_ATTR_QUERY_DM_RESP, info, sizeof(*info));
	return execute_ioctl(ctx, cmd);
}

FIXTURE(dm) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf l;
	uint64_t max;
};

FIXTURE_SETUP(dm)
{
	struct ibv_device_attr_ex ax;

	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, buf_new(&self->l, self->p.pd, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, ibv_query_device_ex(self->ctx, NULL, &ax));
	self->max = ax.max_dm_size;
}

FIXTURE_TEARDOWN(dm)
{
	buf_free(&self->l);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/* Write @len bytes of @seed's pattern at @off and read them back. */
static void round_trip(struct __test_metadata *_metadata, struct ibv_dm *dm,
		       size_t dmlen, uint64_t off, size_t len, uint32_t seed)
{
	uint8_t *all = malloc(dmlen), *want = malloc(dmlen);

	ASSERT_NE(NULL, all);
	ASSERT_NE(NULL, want);
	memset(want, 0xee, dmlen);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, dmlen));
	fill_pattern(want + off, len, seed);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, off, want + off, len))
		TH_LOG("offset %llu length %zu", (unsigned long long)off, len);
	memset(all, 0, dmlen);
	ASSERT_EQ(0, ibv_memcpy_from_dm(all, dm, 0, dmlen));
	EXPECT_SAME(all, want, dmlen, "the whole allocation");
	memset(all, 0, len);
	ASSERT_EQ(0, ibv_memcpy_from_dm(all, dm, off, len));
	EXPECT_SAME(all, want + off, len, "the part read back");
	free(all);
	free(want);
}

TEST_F(dm, max_dm_size_advertised)
{
	EXPECT_EQ(16ull << 20, self->max);
	EXPECT_EQ(0, self->max % sysconf(_SC_PAGESIZE));
}

/*
 * New allocations read as zeroes, even where an earlier allocation of the
 * device wrote; each counts its pages against the device, until freed.
 */
TEST_F(dm, alloc_free_zeroed_and_counted)
{
	static const size_t lens[] = { 4, 8, 4092, 4096, 4100, 65536 + 12 };
	long long dm0 = objects_value("dm"), bytes0 = objects_value("dm_bytes");
	uint8_t *b = malloc(65536 + 12);

	ASSERT_NE(NULL, b);
	ASSERT_EQ(0, dm0) TH_LOG("objects file: dm %lld", dm0);
	ASSERT_EQ(0, bytes0);
	for (int round = 0; round < 2; round++) {
		for (unsigned int i = 0; i < ARRAY_SIZE(lens); i++) {
			struct ibv_dm *dm = dm_new(self->ctx, lens[i], 0);
			size_t pages = (lens[i] + 4095) / 4096;

			ASSERT_NE(NULL, dm) TH_LOG("%zu: %s", lens[i], strerror(errno));
			EXPECT_EQ(self->ctx, dm->context);
			EXPECT_EQ(1, objects_value("dm"));
			EXPECT_EQ((long long)pages * 4096, objects_value("dm_bytes"));
			memset(b, 0x5a, lens[i]);
			ASSERT_EQ(0, ibv_memcpy_from_dm(b, dm, 0, lens[i]));
			EXPECT_EQ(-1, first_not(b, lens[i], 0))
				TH_LOG("%zu bytes: not zeroed", lens[i]);
			/* Dirty it for the next allocation of the same pages. */
			memset(b, 0xa5, lens[i]);
			ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, b, lens[i]));
			EXPECT_EQ(0, ibv_free_dm(dm));
			EXPECT_EQ(0, objects_value("dm"));
			EXPECT_EQ(0, objects_value("dm_bytes"));
		}
	}
	free(b);
}

TEST_F(dm, alloc_errors)
{
	struct ibv_alloc_dm_attr a = { .length = 4096 };
	struct ibv_dm *dm;

	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, 0, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("length 0");
	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, self->max + 1, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("max_dm_size + 1");
	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, SIZE_MAX, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("SIZE_MAX");
	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, 1ull << 32, 0));
	EXPECT_EQ(EINVAL, errno) TH_LOG("4 GiB");
	/* Alignment: up to the page size (allocations start a page). */
	for (uint32_t al = 0; al <= 12; al++) {
		dm = dm_new(self->ctx, 100, al);
		EXPECT_NE(NULL, dm) TH_LOG("log_align_req %u: %s", al,
					   strerror(errno));
		if (dm)
			EXPECT_EQ(0, ibv_free_dm(dm));
	}
	for (uint32_t al = 13; al < 40; al += 13) {
		errno = 0;
		EXPECT_EQ(NULL, dm_new(self->ctx, 100, al));
		EXPECT_EQ(EINVAL, errno) TH_LOG("log_align_req %u", al);
	}
	a.comp_mask = 1;
	errno = 0;
	EXPECT_EQ(NULL, ibv_alloc_dm(self->ctx, &a));
	EXPECT_EQ(EINVAL, errno) TH_LOG("comp_mask");
	EXPECT_EQ(0, objects_value("dm"));
	EXPECT_EQ(0, objects_value("dm_bytes"));
}

/* All allocations of the device together stay within max_dm_size. */
TEST_F(dm, device_memory_limit)
{
	struct ibv_dm *big, *half[2], *one;

	big = dm_new(self->ctx, self->max, 0);
	ASSERT_NE(NULL, big) TH_LOG("%s", strerror(errno));
	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, 4, 0));
	EXPECT_EQ(ENOMEM, errno);
	EXPECT_EQ((long long)self->max, objects_value("dm_bytes"));
	EXPECT_EQ(0, ibv_free_dm(big));

	half[0] = dm_new(self->ctx, self->max / 2, 0);
	/* Rounded up to max / 2 - 4096. */
	half[1] = dm_new(self->ctx, self->max / 2 - 2 * 4096 + 1, 0);
	ASSERT_NE(NULL, half[0]);
	ASSERT_NE(NULL, half[1]);
	/* A page is left; two are not. */
	errno = 0;
	EXPECT_EQ(NULL, dm_new(self->ctx, 4097, 0));
	EXPECT_EQ(ENOMEM, errno);
	one = dm_new(self->ctx, 4096, 0);
	EXPECT_NE(NULL, one);
	if (one)
		EXPECT_EQ(0, ibv_free_dm(one));
	EXPECT_EQ(0, ibv_free_dm(half[0]));
	EXPECT_EQ(0, ibv_free_dm(half[1]));
	EXPECT_EQ(0, objects_value("dm_bytes"));
}

/* Byte for byte at 4-byte multiples, across pages, nothing else touched. */
TEST_F(dm, memcpy_round_trips)
{
	static const uint64_t offs[] = { 0, 4, 12, 4092, 4096, 8188, 3 * 4096 };
	static const size_t lens[] = { 0, 4, 8, 20, 4096, 4100, 8192 + 36 };
	size_t dmlen = 4 * 4096 + 44;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 3);
	uint32_t seed = 1;

	ASSERT_NE(NULL, dm);
	for (unsigned int i = 0; i < ARRAY_SIZE(offs); i++)
		for (unsigned int j = 0; j < ARRAY_SIZE(lens); j++)
			if (offs[i] + lens[j] <= dmlen)
				round_trip(_metadata, dm, dmlen, offs[i],
					   lens[j], seed++);
	/* The last bytes, up to the end exactly. */
	round_trip(_metadata, dm, dmlen, dmlen - 4, 4, seed++);
	round_trip(_metadata, dm, dmlen, 0, dmlen, seed++);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/* mlx5's rules: 4-byte multiples (EINVAL), inside the allocation (EFAULT). */
TEST_F(dm, memcpy_errors)
{
	size_t dmlen = 8192 + 100;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0);
	uint8_t b[64] = { 0 }, *big = calloc(1, dmlen + 8), *now, *want;
	static const struct { uint64_t off; size_t len; int err; } c[] = {
		{ 1, 4, EINVAL }, { 3, 4, EINVAL }, { 4, 3, EINVAL },
		{ 4, 1, EINVAL }, { 8190, 8, EINVAL },
		{ 8192 + 100, 4, EFAULT }, { 8192 + 96, 8, EFAULT },
		{ 0, 8192 + 104, EFAULT }, { 1ull << 40, 4, EFAULT },
		{ UINT64_MAX - 3, 8, EFAULT }, { UINT64_MAX - 3, 4, EFAULT },
		{ 8, SIZE_MAX - 7, EFAULT },
	};

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, big);
	fill_pattern(big, dmlen, 9);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, big, dmlen));
	for (unsigned int i = 0; i < ARRAY_SIZE(c); i++) {
		/* A copy wrongly accepted reads or writes @big (or crashes). */
		EXPECT_EQ(c[i].err, ibv_memcpy_to_dm(dm, c[i].off, big,
						     c[i].len))
			TH_LOG("to_dm offset %llu length %zu",
			       (unsigned long long)c[i].off, c[i].len);
		EXPECT_EQ(c[i].err, ibv_memcpy_from_dm(big, dm, c[i].off,
						       c[i].len))
			TH_LOG("from_dm offset %llu length %zu",
			       (unsigned long long)c[i].off, c[i].len);
	}
	/* At the end with nothing to copy: fine. */
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, dmlen, b, 0));
	EXPECT_EQ(0, ibv_memcpy_from_dm(b, dm, dmlen, 0));
	/* Nothing refused wrote anything. */
	now = calloc(1, dmlen);
	want = calloc(1, dmlen);
	ASSERT_NE(NULL, now);
	ASSERT_NE(NULL, want);
	fill_pattern(want, dmlen, 9);
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "after refused copies");
	free(now);
	free(want);
	free(big);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * The mapping the kernel offers is exactly the allocation's pages: any
 * other size at its offset is refused, and the pages mapped are the
 * device memory (a write through one mapping reads back through the
 * other). Another context of the same process (another command file)
 * cannot map them.
 */
TEST_F(dm, mmap_exact_pages_only)
{
	size_t dmlen = 2 * 4096 + 8;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0);
	struct ibv_context *other;
	struct sib_dm_info info;
	uint32_t v = 0x12345678, r = 0;
	uint64_t off;
	uint8_t *m;

	ASSERT_NE(NULL, dm);
	ASSERT_EQ(0, dm_query(self->ctx, dm->handle, &info));
	EXPECT_EQ(dmlen, info.length);
	EXPECT_EQ(3 * 4096, info.mmap_size);
	for (size_t sz = 4096; sz <= 5 * 4096; sz += 4096) {
		if (sz == info.mmap_size)
			continue;
		m = mmap(NULL, sz, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->ctx->cmd_fd, info.mmap_offset);
		EXPECT_EQ(MAP_FAILED, m) TH_LOG("%zu bytes mapped", sz);
		if (m != MAP_FAILED)
			munmap(m, sz);
	}
	/* One page further in is no mapping offset at all. */
	m = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, self->ctx->cmd_fd,
		 info.mmap_offset + 4096);
	EXPECT_EQ(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, 2 * 4096);
	/* Private mappings are refused (ib_core wants VM_SHARED). */
	m = mmap(NULL, info.mmap_size, PROT_READ | PROT_WRITE, MAP_PRIVATE,
		 self->ctx->cmd_fd, info.mmap_offset);
	EXPECT_EQ(MAP_FAILED, m);
	if (m != MAP_FAILED)
		munmap(m, info.mmap_size);

	m = mmap(NULL, info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->ctx->cmd_fd, info.mmap_offset);
	ASSERT_NE(MAP_FAILED, m) TH_LOG("%s", strerror(errno));
	memcpy(m + 4096 + 4, &v, 4);
	ASSERT_EQ(0, ibv_memcpy_from_dm(&r, dm, 4096 + 4, 4));
	EXPECT_EQ(v, r);
	/* The tail of the last page is mapped, but beyond the allocation. */
	EXPECT_EQ(EFAULT, ibv_memcpy_from_dm(&r, dm, dmlen, 4));
	munmap(m, info.mmap_size);

	other = pair_open_dev(SIB_DEV);
	ASSERT_NE(NULL, other);
	off = info.mmap_offset;
	EXPECT_NE(0, dm_query(other, dm->handle, &info))
		TH_LOG("another context knows the allocation's handle");
	m = mmap(NULL, 3 * 4096, PROT_READ, MAP_SHARED, other->cmd_fd, off);
	EXPECT_EQ(MAP_FAILED, m) TH_LOG("another context mapped it");
	if (m != MAP_FAILED)
		munmap(m, 3 * 4096);
	ibv_close_device(other);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

TEST_F(dm, reg_dm_mr_rules)
{
	size_t dmlen = 3 * 4096;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0);
	struct ibv_mr *mr;
	long long mrs = objects_value("mr");

	ASSERT_NE(NULL, dm);
	/* A DM MR is zero based, always. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen,
				      IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* Remote write needs local write. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen,
				      IBV_ACCESS_ZERO_BASED |
				      IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(EINVAL, errno);
	/* Outside the allocation. */
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen + 1, DM_ACC));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, 4, dmlen, DM_ACC));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, dmlen + 4, 0, DM_ACC));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, UINT64_MAX - 3, 8,
				      DM_ACC));
	EXPECT_EQ(EINVAL, errno);
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_dm_mr(self->p.pd, dm, 4, SIZE_MAX - 3,
				      DM_ACC));
	EXPECT_EQ(EINVAL, errno);
	EXPECT_EQ(mrs, objects_value("mr"));

	/* Whole, part, empty (as on mlx5), and every access combination. */
	mr = ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen, DM_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(NULL, mr->addr);
	EXPECT_EQ(dmlen, mr->length);
	EXPECT_EQ(mrs + 1, objects_value("mr"));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(self->p.pd, dm, 100, 4096, DM_ACC);
	ASSERT_NE(NULL, mr);
	/* Not reregistrable: it is not of user memory. */
	EXPECT_NE(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(self->p.pd, dm, dmlen, 0, DM_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("zero length: %s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	for (int acc = 0; acc <= (IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_READ |
				  IBV_ACCESS_REMOTE_ATOMIC); acc++) {
		bool ok = !(acc & (IBV_ACCESS_REMOTE_WRITE |
				   IBV_ACCESS_REMOTE_ATOMIC)) ||
			  (acc & IBV_ACCESS_LOCAL_WRITE);

		mr = ibv_reg_dm_mr(self->p.pd, dm, 8, 64,
				   acc | IBV_ACCESS_ZERO_BASED);
		EXPECT_EQ(ok, mr != NULL) TH_LOG("access %#x", acc);
		if (mr)
			EXPECT_EQ(0, ibv_dereg_mr(mr));
	}
	EXPECT_EQ(mrs, objects_value("mr"));
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/* An allocation with MRs on it cannot be freed (EBUSY), and stays usable. */
TEST_F(dm, free_with_mr_busy)
{
	struct ibv_dm *dm = dm_new(self->ctx, 4096, 0);
	struct ibv_mr *mr[2];
	uint32_t v = 0xabcdef01, r = 0;

	ASSERT_NE(NULL, dm);
	mr[0] = ibv_reg_dm_mr(self->p.pd, dm, 0, 4096, DM_ACC);
	mr[1] = ibv_reg_dm_mr(self->p.pd, dm, 64, 64, DM_ACC);
	ASSERT_NE(NULL, mr[0]);
	ASSERT_NE(NULL, mr[1]);
	EXPECT_EQ(EBUSY, ibv_free_dm(dm));
	EXPECT_EQ(0, ibv_memcpy_to_dm(dm, 64, &v, 4));
	EXPECT_EQ(0, ibv_memcpy_from_dm(&r, dm, 64, 4));
	EXPECT_EQ(v, r);
	EXPECT_EQ(0, ibv_dereg_mr(mr[0]));
	EXPECT_EQ(EBUSY, ibv_free_dm(dm));
	EXPECT_EQ(1, objects_value("dm"));
	EXPECT_EQ(0, ibv_dereg_mr(mr[1]));
	EXPECT_EQ(0, ibv_free_dm(dm));
	EXPECT_EQ(0, objects_value("dm"));
}

/*
 * SEND from a DM MR and RECV into one, at odd offsets (the device reaches
 * any byte; only the CPU's copies are in 4-byte units), across pages.
 */
TEST_F(dm, send_recv_through_dm)
{
	size_t dmlen = 3 * 4096, len = 4096 + 777;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0);
	uint8_t *want = malloc(dmlen), *now = malloc(dmlen);
	struct ibv_sge s, r;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, now);
	/* MR at DM offset 12: MR address x is DM byte 12 + x. */
	mr = ibv_reg_dm_mr(self->p.pd, dm, 12, dmlen - 12, DM_ACC);
	ASSERT_NE(NULL, mr);

	/* DM -> ordinary buffer. */
	fill_pattern(want, dmlen, 31);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, dmlen));
	memset(self->l.p, 0xee, len + 64);
	s = (struct ibv_sge){ .addr = 3, .length = len, .lkey = mr->lkey };
	r = mk_sge(&self->l, 0, len + 64);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x71, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x61, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 0x61, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 0x71, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, len, NULL);
	EXPECT_SAME(self->l.p, want + 12 + 3, len, "sent from DM");
	EXPECT_UNTOUCHED(self->l.p + len, 64, 0xee, "after the message");

	/* Ordinary buffer -> DM. */
	memset(want, 0xee, dmlen);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, dmlen));
	fill_pattern(self->l.p, len, 32);
	memcpy(want + 12 + 5, self->l.p, len);
	r = (struct ibv_sge){ .addr = 5, .length = len, .lkey = mr->lkey };
	s = mk_sge(&self->l, 0, len);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x72, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x62, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 0x62, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 0x72, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, len, NULL);
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "received into DM (and around it)");

	/* A receive SGE past the MR's end: local protection error. */
	r = (struct ibv_sge){ .addr = dmlen - 12 - 8, .length = 16,
			      .lkey = mr->lkey };
	s = mk_sge(&self->l, 0, 16);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0x73, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0x63, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("recv past the end", self->p.rcq[1], 0x73,
		  IBV_WC_LOC_PROT_ERR, ANY, self->p.qp[1]->qp_num, ANY, NULL);
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "DM after the refused receive");

	pair_reconnect(&self->p);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(dm));
	free(want);
	free(now);
}

/*
 * RDMA WRITE into, READ from, and atomics on a DM MR of B, which A
 * addresses from 0; the data checked through ibv_memcpy_from_dm().
 */
TEST_F(dm, rdma_write_read_atomic_on_dm)
{
	size_t dmlen = 4 * 4096, len = 2 * 4096 + 333;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 3);
	uint8_t *want = malloc(dmlen), *now = malloc(dmlen);
	uint64_t off = 4096 - 7, v;
	struct ibv_sge s;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, now);
	mr = ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen, DM_ACC);
	ASSERT_NE(NULL, mr);
	memset(want, 0xee, dmlen);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, dmlen));

	/* WRITE */
	fill_pattern(self->l.p + 1, len, 41);
	memcpy(want + off, self->l.p + 1, len);
	s = mk_sge(&self->l, 1, len);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 0x81, &s, 1,
			     IBV_SEND_SIGNALED, off, mr->rkey));
	expect_wc("write", self->p.scq[0], 0x81, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "DM after the WRITE");

	/* READ it back, and the untouched bytes around it. */
	memset(self->l.p, 0, len + 200);
	s = mk_sge(&self->l, 3, len + 100);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 0x82, &s, 1,
			     IBV_SEND_SIGNALED, off - 50, mr->rkey));
	expect_wc("read", self->p.scq[0], 0x82, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_READ, self->p.qp[0]->qp_num, len + 100, NULL);
	EXPECT_SAME(self->l.p + 3, want + off - 50, len + 100, "read from DM");

	/* Atomics on DM byte 8192 + 16. */
	v = 0x1111222233334444ull;
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 8192 + 16, &v, 8));
	s = mk_sge(&self->l, 0, 8);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
				 0x83, &s, IBV_SEND_SIGNALED, 8192 + 16,
				 mr->rkey, 5, 0));
	expect_wc("fetch_add", self->p.scq[0], 0x83, IBV_WC_SUCCESS,
		  IBV_WC_FETCH_ADD, self->p.qp[0]->qp_num, ANY, NULL);
	memcpy(&v, self->l.p, 8);
	EXPECT_EQ(0x1111222233334444ull, v);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_CMP_AND_SWP,
				 0x84, &s, IBV_SEND_SIGNALED, 8192 + 16,
				 mr->rkey, 0x1111222233334449ull, 7));
	expect_wc("cmp_swp", self->p.scq[0], 0x84, IBV_WC_SUCCESS,
		  IBV_WC_COMP_SWAP, self->p.qp[0]->qp_num, ANY, NULL);
	memcpy(&v, self->l.p, 8);
	EXPECT_EQ(0x1111222233334449ull, v);
	ASSERT_EQ(0, ibv_memcpy_from_dm(&v, dm, 8192 + 16, 8));
	EXPECT_EQ(7, v);
	/* A misaligned atomic: invalid request, DM untouched. */
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
				 0x85, &s, IBV_SEND_SIGNALED, 8192 + 20,
				 mr->rkey, 1, 0));
	expect_wc("misaligned", self->p.scq[0], 0x85, IBV_WC_REM_INV_REQ_ERR,
		  ANY, self->p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, ibv_memcpy_from_dm(&v, dm, 8192 + 16, 8));
	EXPECT_EQ(7, v);
	pair_reconnect(&self->p);

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(dm));
	free(want);
	free(now);
}

/*
 * An MR at DM offset 100: MR address x is DM byte 100 + x. An atomic
 * needs its address (the offset into the MR, IBA 9.4.5) and the byte it
 * lands on to be 8-byte aligned: on this MR neither MR address 0 (DM byte
 * 100) nor 4 (an unaligned address) will do; on an MR at DM offset 104,
 * MR address 0 (DM byte 104) does.
 */
TEST_F(dm, dm_mr_at_offset)
{
	struct ibv_dm *dm = dm_new(self->ctx, 8192, 0);
	uint8_t now[256], want[256];
	struct ibv_mr *mr, *mr8;
	struct ibv_sge s;
	uint64_t v = 40;

	ASSERT_NE(NULL, dm);
	mr = ibv_reg_dm_mr(self->p.pd, dm, 100, 4096, DM_ACC);
	ASSERT_NE(NULL, mr);
	mr8 = ibv_reg_dm_mr(self->p.pd, dm, 104, 4096, DM_ACC);
	ASSERT_NE(NULL, mr8);
	memset(want, 0, sizeof(want));
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, sizeof(want)));
	fill_pattern(self->l.p, 20, 51);
	memcpy(want + 100, self->l.p, 20);
	s = mk_sge(&self->l, 0, 20);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 0x91, &s, 1,
			     IBV_SEND_SIGNALED, 0, mr->rkey));
	expect_wc("write at 0", self->p.scq[0], 0x91, IBV_WC_SUCCESS,
		  IBV_WC_RDMA_WRITE, self->p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, sizeof(now)));
	EXPECT_SAME(now, want, sizeof(now), "DM after a WRITE at MR address 0");

	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 104, &v, 8));
	s = mk_sge(&self->l, 0, 8);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
				 0x92, &s, IBV_SEND_SIGNALED, 0, mr8->rkey, 2,
				 0));
	expect_wc("fetch_add at 0 of the MR at 104", self->p.scq[0], 0x92,
		  IBV_WC_SUCCESS, IBV_WC_FETCH_ADD, self->p.qp[0]->qp_num,
		  ANY, NULL);
	memcpy(&v, self->l.p, 8);
	EXPECT_EQ(40, v);
	ASSERT_EQ(0, ibv_memcpy_from_dm(&v, dm, 104, 8));
	EXPECT_EQ(42, v);
	for (uint64_t a = 0; a <= 4; a += 4) {
		ASSERT_EQ(0, post_atomic(self->p.qp[0],
					 IBV_WR_ATOMIC_FETCH_AND_ADD, 0x93 + a,
					 &s, IBV_SEND_SIGNALED, a, mr->rkey,
					 2, 0));
		expect_wc("fetch_add on the MR at 100", self->p.scq[0],
			  0x93 + a, IBV_WC_REM_INV_REQ_ERR, ANY,
			  self->p.qp[0]->qp_num, ANY, NULL);
		ASSERT_EQ(0, pair_reconnect(&self->p));
	}
	ASSERT_EQ(0, ibv_memcpy_from_dm(&v, dm, 104, 8));
	EXPECT_EQ(42, v);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dereg_mr(mr8));
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * Remote accesses past an MR's end, or to DM bytes outside the MR, are
 * remote access errors and change nothing.
 */
TEST_F(dm, remote_out_of_bounds)
{
	size_t dmlen = 8192;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0);
	uint8_t *want = malloc(dmlen), *now = malloc(dmlen);
	static const struct { uint64_t addr; uint32_t len; } c[] = {
		{ 4096 - 4, 8 }, { 4096, 1 }, { 8192, 4 }, { UINT64_MAX - 3, 8 },
		{ 0, 4097 },
	};
	struct ibv_sge s;
	struct ibv_mr *mr;
	uint64_t id = 0xa0;

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, want);
	ASSERT_NE(NULL, now);
	/* The MR covers DM bytes 2048 .. 6143. */
	mr = ibv_reg_dm_mr(self->p.pd, dm, 2048, 4096, DM_ACC);
	ASSERT_NE(NULL, mr);
	fill_pattern(want, dmlen, 61);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, dmlen));
	for (unsigned int i = 0; i < ARRAY_SIZE(c); i++) {
		enum ibv_wr_opcode ops[] = { IBV_WR_RDMA_WRITE,
					     IBV_WR_RDMA_READ };

		for (unsigned int k = 0; k < ARRAY_SIZE(ops); k++) {
			s = mk_sge(&self->l, 0, c[i].len);
			ASSERT_EQ(0, post_op(self->p.qp[0], ops[k], ++id, &s,
					     1, IBV_SEND_SIGNALED, c[i].addr,
					     mr->rkey));
			expect_wc("out of bounds", self->p.scq[0], id,
				  IBV_WC_REM_ACCESS_ERR, ANY,
				  self->p.qp[0]->qp_num, ANY, NULL);
			ASSERT_EQ(0, pair_reconnect(&self->p));
		}
	}
	s = mk_sge(&self->l, 0, 8);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
				 ++id, &s, IBV_SEND_SIGNALED, 4096, mr->rkey,
				 1, 0));
	expect_wc("atomic past the end", self->p.scq[0], id,
		  IBV_WC_REM_ACCESS_ERR, ANY, self->p.qp[0]->qp_num, ANY,
		  NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "DM after the refused accesses");

	/* Without remote write: a WRITE is refused. */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	mr = ibv_reg_dm_mr(self->p.pd, dm, 0, dmlen, IBV_ACCESS_ZERO_BASED |
			   IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	s = mk_sge(&self->l, 0, 8);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, ++id, &s, 1,
			     IBV_SEND_SIGNALED, 0, mr->rkey));
	expect_wc("write without the right", self->p.scq[0], id,
		  IBV_WC_REM_ACCESS_ERR, ANY, self->p.qp[0]->qp_num, ANY,
		  NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, dmlen));
	EXPECT_SAME(now, want, dmlen, "DM after the refused WRITE");
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_free_dm(dm));
	free(want);
	free(now);
}

/* An MR of another PD is neither an lkey nor an rkey for these QPs. */
TEST_F(dm, other_pd_refused)
{
	struct ibv_dm *dm = dm_new(self->ctx, 4096, 0);
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	uint8_t want[4096], now[4096];
	struct ibv_sge s, r;
	struct ibv_mr *mr;

	ASSERT_NE(NULL, dm);
	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_dm_mr(pd2, dm, 0, 4096, DM_ACC);
	ASSERT_NE(NULL, mr);
	fill_pattern(want, sizeof(want), 71);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 0, want, sizeof(want)));

	s = mk_sge(&self->l, 0, 64);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_WRITE, 0xb1, &s, 1,
			     IBV_SEND_SIGNALED, 0, mr->rkey));
	expect_wc("rkey of another PD", self->p.scq[0], 0xb1,
		  IBV_WC_REM_ACCESS_ERR, ANY, self->p.qp[0]->qp_num, ANY,
		  NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	s = mk_sge(&self->l, 0, 64);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_RDMA_READ, 0xb2, &s, 1,
			     IBV_SEND_SIGNALED, 0, mr->rkey));
	expect_wc("read, rkey of another PD", self->p.scq[0], 0xb2,
		  IBV_WC_REM_ACCESS_ERR, ANY, self->p.qp[0]->qp_num, ANY,
		  NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));

	/* As the lkey of a SEND and of a RECV. */
	s = (struct ibv_sge){ .addr = 0, .length = 64, .lkey = mr->lkey };
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0xb3, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send, lkey of another PD", self->p.scq[0], 0xb3,
		  IBV_WC_LOC_PROT_ERR, ANY, self->p.qp[0]->qp_num, ANY, NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	r = (struct ibv_sge){ .addr = 0, .length = 64, .lkey = mr->lkey };
	s = mk_sge(&self->l, 0, 64);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 0xb4, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 0xb5, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("recv, lkey of another PD", self->p.rcq[1], 0xb4,
		  IBV_WC_LOC_PROT_ERR, ANY, self->p.qp[1]->qp_num, ANY, NULL);
	ASSERT_EQ(0, pair_reconnect(&self->p));
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 0, sizeof(now)));
	EXPECT_SAME(now, want, sizeof(now), "DM of the other PD");

	EXPECT_EQ(0, ibv_dereg_mr(mr));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/* ibv_import_dm() on a context of the same command file. */
TEST_F(dm, import_dm)
{
	size_t dmlen = 4096 + 256;
	struct ibv_dm *dm = dm_new(self->ctx, dmlen, 0), *imp;
	struct ibv_context *ictx;
	uint8_t want[256], now[256];
	int fd;

	ASSERT_NE(NULL, dm);
	fd = dup(self->ctx->cmd_fd);
	ASSERT_LE(0, fd);
	ictx = ibv_import_device(fd);
	ASSERT_NE(NULL, ictx) TH_LOG("%s", strerror(errno));
	imp = ibv_import_dm(ictx, dm->handle);
	ASSERT_NE(NULL, imp) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(dm->handle, imp->handle);
	fill_pattern(want, sizeof(want), 81);
	ASSERT_EQ(0, ibv_memcpy_to_dm(dm, 4096 - 128, want, sizeof(want)));
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, imp, 4096 - 128, sizeof(now)));
	EXPECT_SAME(now, want, sizeof(now), "through the imported DM");
	EXPECT_EQ(EFAULT, ibv_memcpy_from_dm(now, imp, dmlen, 4));
	ibv_unimport_dm(imp);
	/* The allocation is still the original's. */
	ASSERT_EQ(0, ibv_memcpy_from_dm(now, dm, 4096 - 128, sizeof(now)));
	EXPECT_SAME(now, want, sizeof(now), "after unimport");
	errno = 0;
	EXPECT_EQ(NULL, ibv_import_dm(ictx, dm->handle + 1000));
	EXPECT_NE(0, errno);
	ibv_close_device(ictx);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * A process that exits with allocations, MRs on them and mappings leaves
 * nothing behind; another process cannot map the parent's allocation
 * through a context of its own.
 */
TEST_F(dm, process_exit_no_leak)
{
	long long mrs = objects_value("mr");
	struct ibv_dm *dm = dm_new(self->ctx, 8192, 0);
	struct sib_dm_info info;
	int status;
	pid_t pid;

	ASSERT_NE(NULL, dm);
	ASSERT_EQ(0, dm_query(self->ctx, dm->handle, &info));
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *c = pair_open_dev(SIB_DEV);
		struct ibv_pd *pd;
		int bad = 0;

		if (!c)
			_exit(10);
		/* The parent's offset means nothing on this command file. */
		for (uint64_t o = 0; o < 64; o++) {
			void *m = mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED,
				       c->cmd_fd, o * 4096);

			if (m != MAP_FAILED)
				bad++;
		}
		if (mmap(NULL, 2 * 4096, PROT_READ, MAP_SHARED, c->cmd_fd,
			 info.mmap_offset) != MAP_FAILED)
			bad++;
		if (bad)
			_exit(11);
		pd = ibv_alloc_pd(c);
		if (!pd)
			_exit(12);
		for (int i = 0; i < 4; i++) {
			struct ibv_dm *d = dm_new(c, 4096 * (i + 1), 0);

			if (!d || !ibv_reg_dm_mr(pd, d, 0, 4096, DM_ACC))
				_exit(13);
		}
		_exit(0);	/* nothing freed */
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("child step %d failed",
						  WEXITSTATUS(status));
	EXPECT_EQ(1, objects_value("dm"));
	EXPECT_EQ(8192, objects_value("dm_bytes"));
	EXPECT_EQ(mrs, objects_value("mr"));
	EXPECT_EQ(0, ibv_free_dm(dm));
	EXPECT_EQ(0, objects_value("dm"));
	EXPECT_EQ(0, objects_value("dm_bytes"));
}

/*
 * A child made by fork() does not inherit the mapping of device memory
 * (the pages are the device's, reached through the parent's context):
 * the range is unmapped in the child, and the parent's stays intact.
 */
TEST_F(dm, fork_child_has_no_mapping)
{
	struct ibv_dm *dm = dm_new(self->ctx, 8192, 0);
	struct sib_dm_info info;
	uint32_t v = 0x600dcafe, r = 0;
	int status;
	uint8_t *m;
	pid_t pid;

	ASSERT_NE(NULL, dm);
	ASSERT_EQ(0, dm_query(self->ctx, dm->handle, &info));
	m = mmap(NULL, info.mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		 self->ctx->cmd_fd, info.mmap_offset);
	ASSERT_NE(MAP_FAILED, m);
	memcpy(m + 4096, &v, 4);
	pid = fork();
	ASSERT_LE(0, pid);
	if (!pid) {
		/* msync() of an unmapped range fails with ENOMEM. */
		if (msync(m, info.mmap_size, MS_ASYNC) == 0)
			_exit(1);
		_exit(errno == ENOMEM ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status)) TH_LOG("the child has the mapping");
	EXPECT_EQ(0, msync(m, info.mmap_size, MS_ASYNC));
	ASSERT_EQ(0, ibv_memcpy_from_dm(&r, dm, 4096, 4));
	EXPECT_EQ(v, r);
	munmap(m, info.mmap_size);
	EXPECT_EQ(0, ibv_free_dm(dm));
}

/*
 * The device goes away under allocations that have MRs and mappings:
 * ib_core destroys them (vm-run fails the run on the WARN a leak would
 * print when the device is freed), the process survives, and the module
 * unloads.
 */
TEST(device_removal_with_dm)
{
	struct ibv_context *ctx;
	struct ibv_dm *dm[3];
	struct ibv_mr *mr[3];
	struct ibv_pd *pd;
	uint32_t v = 7;
	int gid;

	ctx = sib_lo_setup(&gid);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	for (int i = 0; i < 3; i++) {
		dm[i] = dm_new(ctx, 4096 * (i + 1), 0);
		ASSERT_NE(NULL, dm[i]);
		mr[i] = ibv_reg_dm_mr(pd, dm[i], 0, 4096, DM_ACC);
		ASSERT_NE(NULL, mr[i]);
		ASSERT_EQ(0, ibv_memcpy_to_dm(dm[i], 0, &v, 4));
	}
	EXPECT_EQ(0, nl_dellink(SIB_DEV));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/" SIB_DEV, false, 10000));
	/* The mapping stays the process' until it is unmapped. */
	v = 0;
	EXPECT_EQ(0, ibv_memcpy_from_dm(&v, dm[0], 0, 4));
	EXPECT_EQ(7, v);
	for (int i = 0; i < 3; i++) {
		ibv_dereg_mr(mr[i]);
		ibv_free_dm(dm[i]);
	}
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	EXPECT_EQ(0, module_unload());
}

SIB_HARNESS_MAIN
