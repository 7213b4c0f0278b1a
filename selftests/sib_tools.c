// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Unmodified verbs programs on sib0 over lo: ibv_rc_pingpong and
 * ibv_srq_pingpong with data checking (-c), perftest's bandwidth and
 * latency tests over their full size sweep (2 B to 8 MiB) with their own
 * checks, and rdma-core's python test suite (zero failures, zero errors).
 * Each tool's output is kept in /tmp/sib-tools/ inside the guest and shown
 * on failure.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"

#define LOGDIR	"/tmp/sib-tools"

/*
 * Run "@prog @args" as server in the background and as client against
 * localhost; both must exit 0. perftest and the pingpongs listen on TCP
 * port 18515 (0x4853) for the connection exchange.
 */
static int run_pair(const char *name, const char *prog, const char *args)
{
	return sh("mkdir -p " LOGDIR "; "
		  "(timeout 600 %s %s > " LOGDIR "/%s.srv 2>&1; "
		  " echo $? > " LOGDIR "/%s.srv.rc) & "
		  "i=0; while [ $i -lt 200 ] && ! grep -q ':4853 0*:0000 0A' "
		  "/proc/net/tcp /proc/net/tcp6 2>/dev/null; do "
		  "sleep 0.05; i=$((i+1)); done; "
		  "timeout 600 %s %s localhost > " LOGDIR "/%s.cli 2>&1; "
		  "rc=$?; wait; srv=$(cat " LOGDIR "/%s.srv.rc); "
		  "if [ $rc != 0 ] || [ \"$srv\" != 0 ]; then "
		  "echo \"# %s: client exit $rc, server exit $srv\"; "
		  "tail -n 15 " LOGDIR "/%s.cli " LOGDIR "/%s.srv | sed 's/^/# /'; "
		  "exit 1; fi",
		  prog, args, name, name, prog, args, name, name, name, name,
		  name);
}

/*
 * perftest checks its CPU clock and refuses to report when the check
 * fails ("Correlation coefficient"), which happens under TCG; that is not
 * a failure of the device, so such a run is repeated.
 */
static int run_perftest(const char *name, const char *prog, const char *args)
{
	int ret = -1;

	for (int i = 0; i < 3; i++) {
		ret = run_pair(name, prog, args);
		if (!ret || shq("grep -q 'Correlation coefficient' " LOGDIR
				"/%s.cli " LOGDIR "/%s.srv", name, name))
			break;
	}
	return ret;
}

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
	sib_delete_all();
}

TEST_F_TIMEOUT(lo, rc_pingpong, 600)
{
	static const char * const args[] = {
		"-s 1 -n 100", "-s 1024 -n 100", "-s 1025 -n 100",
		"-s 4096 -n 100", "-s 65536 -n 50", "-s 1048576 -n 10",
		"-s 1048576 -n 10 -m 4096", "-s 4096 -n 100 -e",
	};
	char a[128];

	for (unsigned int i = 0; i < ARRAY_SIZE(args); i++) {
		snprintf(a, sizeof(a), "-d sib0 -g 1 -c %s", args[i]);
		EXPECT_EQ(0, run_pair("rc_pingpong", "ibv_rc_pingpong", a)) {
			TH_LOG("ibv_rc_pingpong %s", a);
		}
	}
}

TEST_F_TIMEOUT(lo, srq_pingpong, 600)
{
	static const char * const args[] = {
		"-s 1 -n 50", "-s 4096 -n 50", "-s 65536 -n 20",
		"-s 1048576 -n 5", "-s 1048576 -n 5 -e",
	};
	char a[128];

	for (unsigned int i = 0; i < ARRAY_SIZE(args); i++) {
		snprintf(a, sizeof(a), "-d sib0 -g 1 -c %s", args[i]);
		EXPECT_EQ(0, run_pair("srq_pingpong", "ibv_srq_pingpong", a)) {
			TH_LOG("ibv_srq_pingpong %s", a);
		}
	}
}

/* Turn on the "delay" fault for every packet sib0 sends, @us long. */
static int delay_all(int us)
{
	return fault_knob_set("sib0", "delay", 1000000) ||
	       fault_knob_set("sib0", "delay_us", us) ||
	       fault_knob_set("sib0", "dir", 1) ||
	       fault_knob_set("sib0", "active", 1);
}

/*
 * The "delay" fault holds packets back and releases them later: with
 * every packet delayed by 5 ms, rc_pingpong still passes with its data
 * check (were delayed packets lost, every retransmission would be too,
 * and the QP would end in RETRY_EXC_ERR).
 */
TEST_F_TIMEOUT(lo, rc_pingpong_delayed, 600)
{
	ASSERT_EQ(0, delay_all(5000));
	EXPECT_EQ(0, run_pair("rc_delayed", "ibv_rc_pingpong",
			      "-d sib0 -g 1 -c -s 4096 -n 20"));
	EXPECT_GE(fault_knob_get("sib0", "injected_delay"), 40);
}

/*
 * Deleting the device while the fault layer holds packets of live QPs
 * (delayed by 2 s) and rc_pingpong runs: the delete completes, the held
 * packets are freed, nothing fires after the device is gone (the VM runner
 * checks dmesg), and the module unloads with no reference left.
 */
TEST_F_TIMEOUT(lo, delete_with_packets_held, 600)
{
	long long held = 0;

	ASSERT_EQ(0, delay_all(2000000));
	ASSERT_EQ(0, sh("mkdir -p " LOGDIR "; "
			"(ibv_rc_pingpong -d sib0 -g 1 -n 100000 "
			" > " LOGDIR "/held.srv 2>&1 &); sleep 0.5; "
			"(ibv_rc_pingpong -d sib0 -g 1 -n 100000 localhost "
			" > " LOGDIR "/held.cli 2>&1 &)"));
	for (int i = 0; i < 100 && held <= 0; i++) {
		usleep(50000);
		held = fault_knob_get("sib0", "injected_delay");
	}
	ASSERT_GT(held, 0);
	EXPECT_EQ(0, nl_dellink("sib0"));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/sib0", false, 10000));
	shq("pkill -9 ibv_rc_pingpong; sleep 0.2");
	/* Past the delay: a timer armed after the delete would fire now. */
	sleep(3);
	EXPECT_EQ(0, module_refcnt());
	EXPECT_EQ(0, module_unload());
}

/*
 * Bandwidth tests over every size from 2 B to 8 MiB (-a). ib_write_bw has
 * a test of its own, for the smoke set (run_tests --smoke).
 */
TEST_F_TIMEOUT(lo, perftest_write_bw, 600)
{
	EXPECT_EQ(0, run_perftest("ib_write_bw", "ib_write_bw",
				  "-d sib0 -x 1 -a -n 5"));
}

TEST_F_TIMEOUT(lo, perftest_bw, 1200)
{
	static const char * const progs[] = {
		"ib_read_bw", "ib_send_bw",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(progs); i++) {
		EXPECT_EQ(0, run_perftest(progs[i], progs[i],
					  "-d sib0 -x 1 -a -n 5")) {
			TH_LOG("%s -a", progs[i]);
		}
	}
	EXPECT_EQ(0, run_perftest("ib_atomic_bw", "ib_atomic_bw",
				  "-d sib0 -x 1 -n 200"));
}

TEST_F_TIMEOUT(lo, perftest_lat, 1200)
{
	static const char * const progs[] = {
		"ib_write_lat", "ib_read_lat", "ib_send_lat",
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(progs); i++) {
		EXPECT_EQ(0, run_perftest(progs[i], progs[i],
					  "-d sib0 -x 1 -a -n 5")) {
			TH_LOG("%s -a", progs[i]);
		}
	}
	EXPECT_EQ(0, run_perftest("ib_atomic_lat", "ib_atomic_lat",
				  "-d sib0 -x 1 -n 200"));
}

/*
 * rdma-core's own test suite (python3-pyverbs, v44), in the modules given
 * (run_tests.py's arguments): no failure and no error; skips are only for
 * what sib does not advertise (dma-buf, raw packet, ODP) or what
 * needs mlx5 or a GPU.
 */
static void rdma_core_suite(struct __test_metadata *_metadata,
			    const char *modules)
{
	ASSERT_EQ(0, sh("rm -rf " LOGDIR "/py && mkdir -p " LOGDIR "/py && "
			"cp /usr/share/doc/rdma-core/tests/* " LOGDIR "/py/ && "
			"gunzip -f " LOGDIR "/py/*.gz"));
	EXPECT_EQ(0, sh("cd " LOGDIR "/py && timeout 1500 /usr/bin/python3 "
			"run_tests.py --dev sib0 --gid 1 %s > ../py.log 2>&1; "
			"rc=$?; grep -E '^(FAIL|ERROR):|^Ran |^OK|^FAILED' "
			"../py.log | sed 's/^/# /'; exit $rc", modules));
	EXPECT_NE(0, shq("grep -qE '^(FAIL|ERROR):' " LOGDIR "/py.log"));
}

/* The core modules: device, PD, MR, CQ, QP (in the smoke set too). */
TEST_F_TIMEOUT(lo, rdma_core_suite_core, 1800)
{
	rdma_core_suite(_metadata, "test_device test_pd test_mr test_cq test_qp");
}

/* The RC data path's other modules. */
TEST_F_TIMEOUT(lo, rdma_core_suite, 1800)
{
	/* test_parent_domain's huge-page allocator test needs some reserved */
	ASSERT_EQ(0, sh("echo 8 > /proc/sys/vm/nr_hugepages"));
	rdma_core_suite(_metadata, "test_cq_events test_cqex test_qpex test_atomic "
			"test_parent_domain");
}

/*
 * Raw packet QPs, flows and RSS: test_flow, test_qp's raw packet tests,
 * test_mlx5_timestamp's raw tests (the free-running ones skip: they
 * convert with mlx5dv) and test_rss_traffic (receive WQs, an
 * indirection table, an RSS QP).
 */
TEST_F_TIMEOUT(lo, rdma_core_suite_raw, 1800)
{
	rdma_core_suite(_metadata, "-k raw -k flow -k rss test_flow test_qp "
			"test_mlx5_timestamp test_rss_traffic");
}

/* On-demand paging; the huge-page tests need some reserved. */
TEST_F_TIMEOUT(lo, rdma_core_suite_odp, 1800)
{
	ASSERT_EQ(0, sh("echo 8 > /proc/sys/vm/nr_hugepages"));
	rdma_core_suite(_metadata, "test_odp");
}

SIB_HARNESS_MAIN
