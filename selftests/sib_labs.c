// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * The labs (scripts/lab, Documentation/labs.md) keep their promises: each
 * runs as a learner runs it (scripts/lab --guest NAME), and what the lab
 * says the learner will see is checked in what it recorded, not in its
 * own excerpt only.
 *
 *   lossy  a drop in the trace (sib_fault), the sequence NAK naming the
 *          lost PSN, the go-back-N to it (sib_retry, sib_req_rewind), the
 *          lost PSN sent again and executed; the capture shows that PSN
 *          twice and the NAK; the counters moved; the excerpts printed
 *   slow   credits off: RNR NAKs counted and captured; credits on: no
 *          RNR NAK (in the counters and the capture), credit stalls and
 *          credit updates. The QP the lab catches waiting is sampled
 *          every 20 ms and not always caught: it is not checked.
 *
 * A lab whose injector or credits did nothing fails here.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"
#include "sib_trace.h"

#define OUT	"/tmp/sib-labs"

/* The change of counter @name in a lab's counters-@what-{before,after}.txt. */
static long delta(const char *lab, const char *what, const char *name)
{
	return sh_num("awk -v n=%s 'FNR == NR && $1 == n { b = $2 } "
		      "FNR != NR && $1 == n { a = $2 } END { print a - b }' "
		      OUT "/%s/counters-%sbefore.txt " OUT "/%s/counters-%safter.txt",
		      name, lab, what, lab, what);
}

/* Frames of a capture that match the tshark display filter @filter. */
static long frames(const char *pcap, const char *filter)
{
	return sh_num("tshark -r %s -Y '%s' 2>/dev/null | wc -l", pcap, filter);
}

/*
 * Run lab @name as a learner would, with its defaults (no SIB_LAB_*
 * knob of the caller's), its records in OUT/@name; its exit status.
 */
static int run_lab(const char *name)
{
	shq("rm -rf " OUT "/%s", name);
	return sh("mkdir -p " OUT "; "
		  "unset $(env | sed -n 's/^\\(SIB_LAB_[A-Z_]*\\)=.*/\\1/p'); "
		  "timeout 150 %s --guest --out " OUT "/%s %s "
		  "> " OUT "/%s.log 2>&1; rc=$?; "
		  "[ $rc = 0 ] || tail -n 30 " OUT "/%s.log | sed 's/^/# /'; exit $rc",
		  repo_script("lab"), name, name, name, name);
}

FIXTURE(lab) {
	int unused;
};

FIXTURE_SETUP(lab)
{
	ASSERT_EQ(0, module_load());
	sib_delete_all();
}

FIXTURE_TEARDOWN(lab)
{
	sib_delete_all();
}

TEST_F_TIMEOUT(lab, lossy, 300)
{
	unsigned long q = 0, d = 0, p = 0;
	struct trace_log log;
	char filt[160];
	long drops, injected;
	int i, f;
	FILE *pk;

	ASSERT_EQ(0, run_lab("lossy"));
	/* the data check of ibv_rc_pingpong passed, every round trip made */
	EXPECT_EQ(0, shq("grep -q 'iters in' " OUT "/lossy/pingpong.cli"));

	/* the injector dropped packets, and the trace shows each drop */
	trace_read_file(&log, OUT "/lossy/trace.txt");
	ASSERT_LT(0, log.n) TH_LOG("no sib events in the lab's trace");
	drops = 0;
	for (i = tfind(&log, 0, "sib_fault", "action=drop", NULL); i >= 0;
	     i = tfind(&log, i + 1, "sib_fault", "action=drop", NULL))
		drops++;
	injected = sh_num("cat " OUT "/lossy/injected_drop.txt");
	TH_LOG("%ld packets dropped, %ld sib_fault drop events", injected, drops);
	ASSERT_LT(0, injected) TH_LOG("the injector dropped nothing");
	EXPECT_EQ(injected, drops);

	/* the lost PSN the lab shows: q's packet to d */
	pk = fopen(OUT "/lossy/picked.txt", "r");
	ASSERT_NE(NULL, pk);
	EXPECT_EQ(3, fscanf(pk, "%lu %lu %lu", &q, &d, &p));
	fclose(pk);

	/* sent, dropped, a sequence NAK naming it, go-back-N, sent again, executed */
	TSTEP(i, 0, "sib_pkt_send", kv("qpn", q), kv("dqpn", d), kv("psn", p));
	TSTEP(f, i, "sib_fault", kv("dqpn", d), kv("psn", p), "action=drop");
	TSTEP(i, f, "sib_resp_verdict", kv("qpn", d), "verdict=seq_err",
	      kv("epsn", p));
	/* the NAK comes before the verdict that closes its packet */
	TSTEP(i, f, "sib_resp_ack", kv("qpn", d), kv("psn", p), "aeth=NAK",
	      "psn_seq_err=0");
	TSTEP(i, i, "sib_retry", kv("qpn", q), kv("psn", p), "cause=nak",
	      "action=go_back");
	TSTEP(i, i, "sib_req_rewind", kv("qpn", q), kv("psn", p));
	TSTEP(i, i, "sib_pkt_send", kv("qpn", q), kv("dqpn", d), kv("psn", p));
	TSTEP(i, i, "sib_resp_verdict", kv("qpn", d), kv("psn", p), "verdict=ok");
	if (!_metadata->passed)
		trace_dump(&log);
	trace_log_free(&log);

	/* the counters the lab prints */
	EXPECT_LT(0, delta("lossy", "", "seq_nak_sent"));
	EXPECT_LT(0, delta("lossy", "", "retransmits"));

	/* the capture: the lost PSN twice (lost, resent), the NAK naming it */
	snprintf(filt, sizeof(filt),
		 "infiniband.bth.destqp == %lu && infiniband.bth.psn == %lu && infiniband.bth.opcode != 17",
		 d, p);
	EXPECT_LE(2, frames(OUT "/lossy/lossy.pcap", filt));
	snprintf(filt, sizeof(filt),
		 "infiniband.bth.destqp == %lu && infiniband.bth.psn == %lu && infiniband.aeth.syndrome == 0x60",
		 q, p);
	EXPECT_LE(1, frames(OUT "/lossy/lossy.pcap", filt));

	/* the learner's excerpts hold the story */
	EXPECT_EQ(0, shq("grep -q ' sib_fault .*action=drop' " OUT "/lossy/excerpt-trace.txt"));
	EXPECT_EQ(0, shq("grep -q ' sib_req_rewind ' " OUT "/lossy/excerpt-trace.txt"));
	EXPECT_EQ(0, shq("grep -q 'the retransmission' " OUT "/lossy/excerpt-trace.txt"));
	EXPECT_EQ(0, shq("grep -q 'the sequence NAK' " OUT "/lossy/excerpt-capture.txt"));
	EXPECT_EQ(0, shq("grep -q 'the retransmission' " OUT "/lossy/excerpt-capture.txt"));
}

/* RNR NAKs in a capture: Acknowledge with an AETH syndrome of 001xxxxx. */
#define RNR_NAKS "infiniband.bth.opcode == 17 && infiniband.aeth.syndrome >= 0x20 && infiniband.aeth.syndrome < 0x40"

TEST_F_TIMEOUT(lab, slow, 300)
{
	ASSERT_EQ(0, run_lab("slow"));

	/* credits off: RNR NAKs sent and taken, resends, seen on the capture */
	EXPECT_LT(0, delta("slow", "off-", "rnr_nak_sent"));
	EXPECT_LT(0, delta("slow", "off-", "rnr_nak_rcvd"));
	EXPECT_LT(0, delta("slow", "off-", "retransmits"));
	EXPECT_EQ(0, delta("slow", "off-", "credit_stalls"));
	EXPECT_LT(0, frames(OUT "/slow/slow-off.pcap", RNR_NAKS));
	EXPECT_EQ(0, shq("grep -q 'RNR NAK: no receive' " OUT "/slow/excerpt-capture-off.txt"));

	/* credits on: the sender waits for credit updates, no RNR NAK at all */
	EXPECT_EQ(0, delta("slow", "on-", "rnr_nak_sent"));
	EXPECT_EQ(0, delta("slow", "on-", "retransmits"));
	EXPECT_LT(0, delta("slow", "on-", "credit_stalls"));
	EXPECT_LT(0, delta("slow", "on-", "credit_updates_sent"));
	EXPECT_LT(0, delta("slow", "on-", "credit_updates_rcvd"));
	EXPECT_EQ(0, frames(OUT "/slow/slow-on.pcap", RNR_NAKS));
	EXPECT_EQ(0, shq("grep -q 'credit update' " OUT "/slow/excerpt-capture-on.txt"));
}

SIB_HARNESS_MAIN
