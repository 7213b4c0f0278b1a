/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Completion checks for sib's data-path selftests. Include after
 * kselftest_harness.h: these use the harness' ASSERT macros, which need
 * the test's _metadata (a failed ASSERT jumps back into the harness).
 */
#ifndef SIB_PAIR_T_H
#define SIB_PAIR_T_H

#include "sib_harness.h"
#include "sib_pair.h"

#define ACC_ALL	(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
		 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC | \
		 IBV_ACCESS_MW_BIND)
#define ANY	(-1L)	/* do not check this CQE field */

/*
 * Wait for the next completion on @cq and check it: @wr_id, @status,
 * @opcode (ANY: not checked; IBTA leaves the opcode of an error
 * completion undefined, so pass ANY then), @qpn, @byte_len (ANY).
 */
static inline void __expect_wc(struct __test_metadata *_metadata,
			       const char *what, struct ibv_cq *cq,
			       uint64_t wr_id, enum ibv_wc_status status,
			       long opcode, uint32_t qpn, long byte_len,
			       struct ibv_wc *out)
{
	struct ibv_wc wc;
	int n = poll_n(cq, &wc, 1, WAIT_MS);

	ASSERT_EQ(1, n) TH_LOG("%s: no completion within %d ms (wanted wr_id %#lx, %s)",
			       what, WAIT_MS, (unsigned long)wr_id, wcs(status));
	EXPECT_EQ(status, wc.status) TH_LOG("%s: status %s, wanted %s (wr_id %#lx)",
					    what, wcs(wc.status), wcs(status),
					    (unsigned long)wc.wr_id);
	EXPECT_EQ(wr_id, wc.wr_id) TH_LOG("%s: wr_id", what);
	if (opcode != ANY)
		EXPECT_EQ(opcode, (long)wc.opcode) TH_LOG("%s: opcode", what);
	EXPECT_EQ(qpn, wc.qp_num) TH_LOG("%s: qp_num", what);
	if (byte_len != ANY && status == IBV_WC_SUCCESS)
		EXPECT_EQ(byte_len, (long)wc.byte_len) TH_LOG("%s: byte_len", what);
	if (out)
		*out = wc;
}

#define expect_wc(what, cq, wr_id, status, opcode, qpn, byte_len, out) \
	__expect_wc(_metadata, what, cq, wr_id, status, opcode, qpn, byte_len, out)

/* Data checks that say where the first difference is. */
#define EXPECT_SAME(a, b, len, what) do { \
	long __d = first_diff(a, b, len); \
	EXPECT_EQ(-1, __d) TH_LOG("%s: first difference at byte %ld of %zu", \
				  what, __d, (size_t)(len)); \
} while (0)

#define EXPECT_UNTOUCHED(p, len, c, what) do { \
	long __d = first_not(p, len, c); \
	EXPECT_EQ(-1, __d) TH_LOG("%s: byte %ld of %zu overwritten", \
				  what, __d, (size_t)(len)); \
} while (0)

#define EXPECT_STATE(qp, s) do { \
	int __s = qp_state(qp); \
	EXPECT_EQ((int)(s), __s) TH_LOG("QP %#x in %s, wanted %s", (qp)->qp_num, \
					qps_str(__s), qps_str(s)); \
} while (0)

/* The engines move a QP to ERR asynchronously: allow them a moment. */
#define EXPECT_STATE_SOON(qp, s) do { \
	qp_wait_state(qp, s, 2000); \
	EXPECT_STATE(qp, s); \
} while (0)

#endif /* SIB_PAIR_T_H */
