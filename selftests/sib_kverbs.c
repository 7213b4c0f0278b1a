// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Kernel verbs: the cases of the test module selftests/kverbs/sib_kverbs.ko
 * (fast registration, invalidation, fences, inline sends, drains, CQ
 * polling contexts, SRQs, rdma_rw, the DMA MR), each run through its
 * debugfs file between two kernel QPs: on one sib device on lo (variant
 * lo) and between two sib devices on the ends of a veth pair in two
 * network namespaces (variant veth). The module is loaded for each test
 * and unloaded after it; then no QP or MR of the test may be left, and
 * the sib devices must delete cleanly.
 *
 * The module's path: $SIB_KVERBS_KO, or selftests/kverbs/sib_kverbs.ko
 * beside this program's .build/selftests/.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sib_pair_t.h"
#include "sib_util.h"
#include "sib_topo.h"

#define RUN	"/sys/kernel/debug/sib_kverbs/run"

static const char *ko_path(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (getenv("SIB_KVERBS_KO"))
		return getenv("SIB_KVERBS_KO");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return "selftests/kverbs/sib_kverbs.ko";
	exe[n] = 0;
	snprintf(path, sizeof(path), "%s/../../selftests/kverbs/sib_kverbs.ko",
		 dirname(exe));
	return path;
}

static void net_cleanup(struct sib_topo *t)
{
	shq("rmmod sib_kverbs");
	sib_topo_down(t);
}

/* Objects of the test still on the devices: QPs other than QP1, MRs, SRQs. */
static int leftovers(const char *devs)
{
	return sh("for d in %s; do "
		  "l=$({ rdma res show qp | grep -v 'type GSI'; rdma res show mr; "
		  "rdma res show srq 2>/dev/null; } | grep -w \"$d\"); "
		  "[ -z \"$l\" ] || { echo \"# left on $d: $l\"; exit 1; }; done",
		  devs);
}

FIXTURE(kv) {
	struct sib_topo t;
	char cmd[128];		/* the devices and GID indexes of a run */
	char devs[32];
};

FIXTURE_VARIANT(kv) {
	const char *name;
	bool veth;
};

FIXTURE_VARIANT_ADD(kv, lo) {
	.name = "lo",
	.veth = false,
};

FIXTURE_VARIANT_ADD(kv, veth) {
	.name = "veth",
	.veth = true,
};

FIXTURE_SETUP(kv)
{
	const char *only = getenv("SIB_KVERBS_VARIANT");
	struct sib_topo *t = &self->t;

	/* SIB_KVERBS_VARIANT=lo or =veth: one of the two only. */
	if (only && *only && strcmp(only, variant->name))
		SETUP_SKIP("variant %s only", only);
	*t = (struct sib_topo){
		.kind = variant->veth ? SIB_TOPO_VETH : SIB_TOPO_LO,
		.tag = "k",
		.flags = SIB_TOPO_LO_UP | SIB_TOPO_NEIGH,
		.ip4 = { "198.18.0.1", "198.18.0.2" },
	};
	net_cleanup(t);
	ASSERT_EQ(0, shq("mountpoint -q /sys/kernel/debug || "
			 "mount -t debugfs none /sys/kernel/debug"));
	ASSERT_EQ(0, sib_topo_up(t)) TH_LOG("%s", t->err);
	if (!variant->veth) {
		snprintf(self->cmd, sizeof(self->cmd), "%s %d", t->ibdev[0],
			 t->gid[0]);
		snprintf(self->devs, sizeof(self->devs), "%s", t->ibdev[0]);
	} else {
		snprintf(self->cmd, sizeof(self->cmd), "%s %d %s %d",
			 t->ibdev[0], t->gid[0], t->ibdev[1], t->gid[1]);
		snprintf(self->devs, sizeof(self->devs), "%s %s", t->ibdev[0],
			 t->ibdev[1]);
	}
	ASSERT_EQ(0, sh("insmod %s", ko_path()));
}

FIXTURE_TEARDOWN(kv)
{
	if (!self->devs[0])
		return;
	/* Unload, nothing left behind, the devices delete cleanly. */
	EXPECT_EQ(0, sh("rmmod sib_kverbs"));
	EXPECT_EQ(0, leftovers(self->devs));
	EXPECT_EQ(0, nl_dellink(self->t.ibdev[0]));
	if (variant->veth)
		EXPECT_EQ(0, nl_dellink(self->t.ibdev[1]));
	net_cleanup(&self->t);
}

/*
 * Run @name in the module; its result, the first line, in @res. 0 when
 * the run could be asked for.
 */
static int kv_run(const char *cmd, const char *name, char *res, size_t size)
{
	char line[256];
	int fd, n, len;

	len = snprintf(line, sizeof(line), "%s %s\n", name, cmd);
	fd = open(RUN, O_RDWR);
	if (fd < 0)
		return -errno;
	n = write(fd, line, len);
	if (n != len) {
		close(fd);
		return -EIO;
	}
	n = pread(fd, res, size - 1, 0);
	close(fd);
	if (n < 0)
		return -errno;
	res[n] = 0;
	return 0;
}

static bool self_ok(const char *cmd)
{
	return cmd[0];	/* set up (not skipped) */
}

static void kv_case(struct __test_metadata *_metadata, const char *cmd,
		    const char *name, bool must_fail)
{
	char res[2048];

	if (!self_ok(cmd))
		return;
	ASSERT_EQ(0, kv_run(cmd, name, res, sizeof(res)));
	if (!strncmp(res, "skip:", 5))
		SKIP(return, "%.900s", res + 6);
	if (must_fail) {
		/* The suite's own check: a wrong expectation is caught. */
		TH_LOG("%s", res);
		ASSERT_EQ(0, strncmp(res, "fail:", 5));
		return;
	}
	if (strncmp(res, "ok", 2) || strstr(res, "\nfail:"))
		TH_LOG("%s: %s", name, res);
	else if (res[2] == ':')
		TH_LOG("%s", res);
	ASSERT_EQ(0, strncmp(res, "ok", 2));
}

/*
 * 120 s, not the harness' 30: under the debug kernel (KASAN, lockdep) a
 * 4 MiB fast-registered WRITE over veth, its fill and check take longer.
 */
#define KV_CASE(name) \
	TEST_F_TIMEOUT(kv, name, 120) { kv_case(_metadata, self->cmd, #name, false); }

KV_CASE(attrs)
KV_CASE(fastreg_write_4k)
KV_CASE(fastreg_write_64k)
KV_CASE(fastreg_write_2m)
KV_CASE(fastreg_read_4k)
KV_CASE(fastreg_read_64k)
KV_CASE(fastreg_read_2m)
KV_CASE(key_rotation)
KV_CASE(reg_valid_mr_fails)
KV_CASE(local_inv)
KV_CASE(send_with_inv)
KV_CASE(fence)
KV_CASE(inline)
KV_CASE(unsignaled)
KV_CASE(drain_rc)
KV_CASE(drain_rc_direct)
KV_CASE(drain_ud)
KV_CASE(cq_direct)
KV_CASE(cq_softirq)
KV_CASE(cq_workqueue)
KV_CASE(cq_unbound_workqueue)
KV_CASE(cq_pool)
KV_CASE(srq)
KV_CASE(rdma_rw)
KV_CASE(rdma_rw_mr)
KV_CASE(dma_mr)
KV_CASE(pd_in_use)

TEST_F(kv, selfcheck_must_fail)
{
	kv_case(_metadata, self->cmd, "selfcheck_must_fail", true);
}

SIB_HARNESS_MAIN
