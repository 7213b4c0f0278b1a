// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib memory regions and memory windows from user space, without traffic:
 * registration with every access combination, refusal of bad flags,
 * key layout (index << 8 | key byte), rereg of translation, access and
 * PD (the keys stay), windows of both types, and
 * cleanup by process exit and by device removal without leaks (vm-run
 * fails the run on the WARN that a leak would print).
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
#include "sib_harness.h"
#include "sib_util.h"
#include "sib_pair.h"

#define MAC	"02:00:5e:10:20:31"
#define BUFSZ	(1 << 20)

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		 IBV_ACCESS_MW_BIND)

/* IBTA: remote write and remote atomic need local write. */
static bool access_valid(int acc)
{
	return !(acc & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC)) ||
	       (acc & IBV_ACCESS_LOCAL_WRITE);
}

FIXTURE(mr) {
	struct ibv_context *ctx;
	struct ibv_pd *pd;
	char *buf;
};

FIXTURE_SETUP(mr)
{
	shq("ip link del sibma");
	ASSERT_EQ(0, module_load());
	sib_delete_all();
	ASSERT_EQ(0, sh("ip link add sibma address " MAC " type veth peer name sibmb && "
			"ip link set sibma up && ip link set sibmb up"));
	ASSERT_EQ(0, nl_newlink("sib0", "sib", "sibma"));
	self->ctx = pair_open_dev("sib0");
	ASSERT_NE(NULL, self->ctx) TH_LOG("libsib did not open sib0");
	self->pd = ibv_alloc_pd(self->ctx);
	ASSERT_NE(NULL, self->pd);
	self->buf = aligned_alloc(4096, BUFSZ);
	ASSERT_NE(NULL, self->buf);
	memset(self->buf, 0, BUFSZ);
}

FIXTURE_TEARDOWN(mr)
{
	if (self->pd)
		ibv_dealloc_pd(self->pd);
	if (self->ctx)
		ibv_close_device(self->ctx);
	free(self->buf);
	sib_delete_all();
	shq("ip link del sibma");
}

TEST_F(mr, every_access_combination)
{
	for (int acc = 0; acc <= ACC_ALL; acc++) {
		struct ibv_mr *mr;

		errno = 0;
		mr = ibv_reg_mr(self->pd, self->buf, BUFSZ, acc);
		if (!access_valid(acc)) {
			EXPECT_EQ(NULL, mr) TH_LOG("access %#x accepted", acc);
			EXPECT_EQ(EINVAL, errno);
			if (mr)
				ibv_dereg_mr(mr);
			continue;
		}
		ASSERT_NE(NULL, mr) TH_LOG("access %#x: %s", acc, strerror(errno));
		EXPECT_EQ(mr->lkey, mr->rkey);
		EXPECT_NE(0, mr->lkey >> 8);
		EXPECT_EQ(self->buf, mr->addr);
		EXPECT_EQ(BUFSZ, mr->length);
		EXPECT_EQ(0, ibv_dereg_mr(mr));
	}
}

TEST_F(mr, optional_flags_tolerated)
{
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_RELAXED_ORDERING);
	ASSERT_NE(NULL, mr) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, unknown_and_unsupported_flags_refused)
{
	static const int bad[] = {
		IBV_ACCESS_ZERO_BASED,	/* windows only */
		1 << 12,		/* undefined */
	};

	for (unsigned int i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, BUFSZ,
					   IBV_ACCESS_LOCAL_WRITE | bad[i]))
			TH_LOG("flag %#x accepted", bad[i]);
		EXPECT_EQ(EINVAL, errno) TH_LOG("flag %#x", bad[i]);
	}
}

TEST_F(mr, zero_length_refused)
{
	errno = 0;
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, self->buf, 0, 0));
	EXPECT_EQ(EINVAL, errno);
}

TEST_F(mr, read_only_memory)
{
	char *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	struct ibv_mr *mr;

	ASSERT_NE(MAP_FAILED, ro);
	mr = ibv_reg_mr(self->pd, ro, 8192, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr) TH_LOG("%s", strerror(errno));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	/* Writable access must pin writable pages, which it cannot. */
	EXPECT_EQ(NULL, ibv_reg_mr(self->pd, ro, 8192, IBV_ACCESS_LOCAL_WRITE));
	munmap(ro, 8192);
}

TEST_F(mr, keys_unique_with_key_byte)
{
	enum { N = 64 };
	struct ibv_mr *mr[N];
	unsigned int bytes = 0;

	for (int i = 0; i < N; i++) {
		mr[i] = ibv_reg_mr(self->pd, self->buf + i * 4096, 4096,
				   IBV_ACCESS_LOCAL_WRITE);
		ASSERT_NE(NULL, mr[i]);
		for (int j = 0; j < i; j++) {
			EXPECT_NE(mr[i]->lkey, mr[j]->lkey);
			EXPECT_NE(mr[i]->lkey >> 8, mr[j]->lkey >> 8);
		}
		if ((mr[i]->lkey & 0xff) != (mr[0]->lkey & 0xff))
			bytes++;
	}
	/* Key bytes are random: 64 equal ones would be a 2^-378 fluke. */
	EXPECT_LT(0, bytes);
	for (int i = 0; i < N; i++)
		EXPECT_EQ(0, ibv_dereg_mr(mr[i]));
}

/* A freed index is not handed out again at once (cyclic allocation). */
TEST_F(mr, dereg_then_reg_gets_new_key)
{
	struct ibv_mr *a, *b;
	uint32_t old;

	a = ibv_reg_mr(self->pd, self->buf, BUFSZ, 0);
	ASSERT_NE(NULL, a);
	old = a->lkey;
	ASSERT_EQ(0, ibv_dereg_mr(a));
	b = ibv_reg_mr(self->pd, self->buf, BUFSZ, 0);
	ASSERT_NE(NULL, b);
	EXPECT_NE(old, b->lkey);
	EXPECT_EQ(0, ibv_dereg_mr(b));
}

TEST_F(mr, rereg_translation)
{
	struct ibv_mr *mr;
	uint32_t key;

	mr = ibv_reg_mr(self->pd, self->buf, 4096, IBV_ACCESS_LOCAL_WRITE);
	ASSERT_NE(NULL, mr);
	key = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  self->buf + 8192, 3 * 4096, 0));
	EXPECT_EQ(key, mr->lkey);	/* rereg keeps the keys */
	EXPECT_EQ(mr->lkey, mr->rkey);
	EXPECT_EQ(self->buf + 8192, mr->addr);
	EXPECT_EQ(3 * 4096, mr->length);
	/* An unaligned start works too. */
	key = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_TRANSLATION, NULL,
				  self->buf + 100, 5000, 0));
	EXPECT_EQ(key, mr->lkey);	/* rereg keeps the keys */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, rereg_access)
{
	char *ro = mmap(NULL, 8192, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS,
			-1, 0);
	struct ibv_mr *mr;
	uint32_t key;

	mr = ibv_reg_mr(self->pd, self->buf, BUFSZ, IBV_ACCESS_REMOTE_READ);
	ASSERT_NE(NULL, mr);
	key = mr->lkey;
	/* From read-only to writable: the pages are pinned again. */
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE |
				  IBV_ACCESS_REMOTE_WRITE |
				  IBV_ACCESS_REMOTE_ATOMIC));
	EXPECT_EQ(key, mr->lkey);	/* rereg keeps the keys */
	key = mr->lkey;
	/* Remote write without local write is refused; the MR is intact. */
	EXPECT_NE(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_REMOTE_WRITE));
	EXPECT_EQ(key, mr->lkey);
	EXPECT_EQ(0, ibv_dereg_mr(mr));

	/* Read-only memory cannot become writable through rereg either. */
	ASSERT_NE(MAP_FAILED, ro);
	mr = ibv_reg_mr(self->pd, ro, 8192, 0);
	ASSERT_NE(NULL, mr);
	key = mr->lkey;
	EXPECT_NE(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL, NULL,
				  0, IBV_ACCESS_LOCAL_WRITE));
	EXPECT_EQ(key, mr->lkey);
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	munmap(ro, 8192);
}

TEST_F(mr, rereg_pd_and_everything)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mr *mr;
	uint32_t key;

	ASSERT_NE(NULL, pd2);
	mr = ibv_reg_mr(self->pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	key = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD, pd2, NULL, 0, 0));
	EXPECT_EQ(pd2, mr->pd);
	EXPECT_EQ(key, mr->lkey);	/* rereg keeps the keys */
	/* The old PD is free now, the new one is not. */
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd2));
	key = mr->lkey;
	ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_PD |
				  IBV_REREG_MR_CHANGE_TRANSLATION |
				  IBV_REREG_MR_CHANGE_ACCESS, self->pd,
				  self->buf + 4096, 8192,
				  IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND));
	EXPECT_EQ(key, mr->lkey);	/* rereg keeps the keys */
	EXPECT_EQ(self->pd, mr->pd);
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

/*
 * Reregistration keeps the keys (as mlx5 does, and as rdma-core's tests
 * expect: they go on using the rkey they had).
 */
TEST_F(mr, rereg_keeps_keys)
{
	struct ibv_mr *mr;
	uint32_t lkey, rkey;

	mr = ibv_reg_mr(self->pd, self->buf, 4096, 0);
	ASSERT_NE(NULL, mr);
	lkey = mr->lkey;
	rkey = mr->rkey;
	for (int i = 1; i <= 16; i++) {
		ASSERT_EQ(0, ibv_rereg_mr(mr, IBV_REREG_MR_CHANGE_ACCESS, NULL,
					  NULL, 0, i & 1 ? IBV_ACCESS_REMOTE_READ : 0));
		EXPECT_EQ(lkey, mr->lkey);
		EXPECT_EQ(rkey, mr->rkey);
	}
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(mr, windows_alloc_dealloc)
{
	enum { N = 32 };
	struct ibv_mw *mw[N];
	struct ibv_mr *mr;

	mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	for (int i = 0; i < N; i++) {
		mw[i] = ibv_alloc_mw(self->pd, i & 1 ? IBV_MW_TYPE_2 :
						      IBV_MW_TYPE_1);
		ASSERT_NE(NULL, mw[i]) TH_LOG("%s", strerror(errno));
		EXPECT_EQ(i & 1 ? IBV_MW_TYPE_2 : IBV_MW_TYPE_1, mw[i]->type);
		/* Windows and MRs share one index space. */
		EXPECT_NE(mr->lkey >> 8, mw[i]->rkey >> 8);
		EXPECT_NE(0, mw[i]->rkey >> 8);
		for (int j = 0; j < i; j++)
			EXPECT_NE(mw[i]->rkey >> 8, mw[j]->rkey >> 8);
	}
	/* No window is bound, so the MR may go first. */
	EXPECT_EQ(0, ibv_dereg_mr(mr));
	for (int i = 0; i < N; i++)
		EXPECT_EQ(0, ibv_dealloc_mw(mw[i]));
}

TEST_F(mr, window_keeps_pd_busy)
{
	struct ibv_pd *pd2 = ibv_alloc_pd(self->ctx);
	struct ibv_mw *mw;

	ASSERT_NE(NULL, pd2);
	mw = ibv_alloc_mw(pd2, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw);
	EXPECT_EQ(EBUSY, ibv_dealloc_pd(pd2));
	EXPECT_EQ(0, ibv_dealloc_mw(mw));
	EXPECT_EQ(0, ibv_dealloc_pd(pd2));
}

/* A child registers and exits without cleaning up: ib_core does it. */
TEST_F(mr, process_exit_cleans_up)
{
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (pid == 0) {
		struct ibv_context *ctx = pair_open_dev("sib0");
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		char *b = malloc(BUFSZ);

		if (!pd || !b)
			_exit(1);
		for (int i = 0; i < 16; i++) {
			if (!ibv_reg_mr(pd, b, BUFSZ, IBV_ACCESS_LOCAL_WRITE |
					IBV_ACCESS_MW_BIND) ||
			    !ibv_alloc_mw(pd, i & 1 ? IBV_MW_TYPE_2 :
						      IBV_MW_TYPE_1))
				_exit(2);
		}
		_exit(0);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	EXPECT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
}

/* The device goes away under live MRs and windows; nothing leaks. */
TEST_F(mr, device_removal_with_live_objects)
{
	struct ibv_mr *mr;
	struct ibv_mw *mw1, *mw2;

	mr = ibv_reg_mr(self->pd, self->buf, BUFSZ,
			IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_MW_BIND);
	ASSERT_NE(NULL, mr);
	mw1 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_1);
	mw2 = ibv_alloc_mw(self->pd, IBV_MW_TYPE_2);
	ASSERT_NE(NULL, mw1);
	ASSERT_NE(NULL, mw2);
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/sib0", false, 10000));
	ibv_dealloc_mw(mw1);
	ibv_dealloc_mw(mw2);
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(self->pd);
	self->pd = NULL;
	ibv_close_device(self->ctx);
	self->ctx = NULL;
	EXPECT_EQ(0, module_unload());
}

SIB_HARNESS_MAIN
