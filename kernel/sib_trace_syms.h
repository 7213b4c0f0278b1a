/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: the symbol tables of the tracepoints (sib_trace.h) and of the
 * debugfs views (sib_res.c): every opcode, state, status, verdict and
 * reason that they print by name. Each list is a sequence of
 * EM(value, "name") ended by EME(value, "name"); the includer defines EM
 * and EME before it expands one (for instance as TRACE_DEFINE_ENUM() or
 * as { value, "name" } pairs). The values come from the headers that
 * sib_trace.h includes.
 */
#ifndef SIB_TRACE_SYMS_H
#define SIB_TRACE_SYMS_H

#define sib_show_opcodes						\
	EM(IB_OPCODE_RC_SEND_FIRST, "RC_SEND_FIRST")			\
	EM(IB_OPCODE_RC_SEND_MIDDLE, "RC_SEND_MIDDLE")			\
	EM(IB_OPCODE_RC_SEND_LAST, "RC_SEND_LAST")			\
	EM(IB_OPCODE_RC_SEND_LAST_WITH_IMMEDIATE, "RC_SEND_LAST_IMM")	\
	EM(IB_OPCODE_RC_SEND_ONLY, "RC_SEND_ONLY")			\
	EM(IB_OPCODE_RC_SEND_ONLY_WITH_IMMEDIATE, "RC_SEND_ONLY_IMM")	\
	EM(IB_OPCODE_RC_RDMA_WRITE_FIRST, "RC_WRITE_FIRST")		\
	EM(IB_OPCODE_RC_RDMA_WRITE_MIDDLE, "RC_WRITE_MIDDLE")		\
	EM(IB_OPCODE_RC_RDMA_WRITE_LAST, "RC_WRITE_LAST")		\
	EM(IB_OPCODE_RC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "RC_WRITE_LAST_IMM") \
	EM(IB_OPCODE_RC_RDMA_WRITE_ONLY, "RC_WRITE_ONLY")		\
	EM(IB_OPCODE_RC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "RC_WRITE_ONLY_IMM") \
	EM(IB_OPCODE_RC_RDMA_READ_REQUEST, "RC_READ_REQUEST")		\
	EM(IB_OPCODE_RC_RDMA_READ_RESPONSE_FIRST, "RC_READ_RESPONSE_FIRST") \
	EM(IB_OPCODE_RC_RDMA_READ_RESPONSE_MIDDLE, "RC_READ_RESPONSE_MIDDLE") \
	EM(IB_OPCODE_RC_RDMA_READ_RESPONSE_LAST, "RC_READ_RESPONSE_LAST") \
	EM(IB_OPCODE_RC_RDMA_READ_RESPONSE_ONLY, "RC_READ_RESPONSE_ONLY") \
	EM(IB_OPCODE_RC_ACKNOWLEDGE, "RC_ACK")				\
	EM(IB_OPCODE_RC_ATOMIC_ACKNOWLEDGE, "RC_ATOMIC_ACK")		\
	EM(IB_OPCODE_RC_COMPARE_SWAP, "RC_COMPARE_SWAP")		\
	EM(IB_OPCODE_RC_FETCH_ADD, "RC_FETCH_ADD")			\
	EM(IB_OPCODE_RC_SEND_LAST_WITH_INVALIDATE, "RC_SEND_LAST_INV")	\
	EM(IB_OPCODE_RC_SEND_ONLY_WITH_INVALIDATE, "RC_SEND_ONLY_INV")	\
	EM(SIB_OPCODE_RC_FLUSH, "RC_FLUSH")				\
	EM(SIB_OPCODE_RC_ATOMIC_WRITE, "RC_ATOMIC_WRITE")		\
	EM(IB_OPCODE_UC_SEND_FIRST, "UC_SEND_FIRST")			\
	EM(IB_OPCODE_UC_SEND_MIDDLE, "UC_SEND_MIDDLE")			\
	EM(IB_OPCODE_UC_SEND_LAST, "UC_SEND_LAST")			\
	EM(IB_OPCODE_UC_SEND_LAST_WITH_IMMEDIATE, "UC_SEND_LAST_IMM")	\
	EM(IB_OPCODE_UC_SEND_ONLY, "UC_SEND_ONLY")			\
	EM(IB_OPCODE_UC_SEND_ONLY_WITH_IMMEDIATE, "UC_SEND_ONLY_IMM")	\
	EM(IB_OPCODE_UC_RDMA_WRITE_FIRST, "UC_WRITE_FIRST")		\
	EM(IB_OPCODE_UC_RDMA_WRITE_MIDDLE, "UC_WRITE_MIDDLE")		\
	EM(IB_OPCODE_UC_RDMA_WRITE_LAST, "UC_WRITE_LAST")		\
	EM(IB_OPCODE_UC_RDMA_WRITE_LAST_WITH_IMMEDIATE, "UC_WRITE_LAST_IMM") \
	EM(IB_OPCODE_UC_RDMA_WRITE_ONLY, "UC_WRITE_ONLY")		\
	EM(IB_OPCODE_UC_RDMA_WRITE_ONLY_WITH_IMMEDIATE, "UC_WRITE_ONLY_IMM") \
	EM(IB_OPCODE_UD_SEND_ONLY, "UD_SEND_ONLY")			\
	EME(IB_OPCODE_UD_SEND_ONLY_WITH_IMMEDIATE, "UD_SEND_ONLY_IMM")

#define sib_show_wr_opcodes						\
	EM(IB_WR_RDMA_WRITE, "WRITE")					\
	EM(IB_WR_RDMA_WRITE_WITH_IMM, "WRITE_IMM")			\
	EM(IB_WR_SEND, "SEND")						\
	EM(IB_WR_SEND_WITH_IMM, "SEND_IMM")				\
	EM(IB_WR_RDMA_READ, "READ")					\
	EM(IB_WR_ATOMIC_CMP_AND_SWP, "CMP_SWAP")			\
	EM(IB_WR_ATOMIC_FETCH_AND_ADD, "FETCH_ADD")			\
	EM(IB_WR_BIND_MW, "BIND_MW")					\
	EM(IB_WR_SEND_WITH_INV, "SEND_INV")				\
	EM(IB_WR_LOCAL_INV, "LOCAL_INV")				\
	EM(SIB_WR_FLUSH, "FLUSH")					\
	EM(SIB_WR_ATOMIC_WRITE, "ATOMIC_WRITE")				\
	EME(IB_WR_REG_MR, "REG_MR")

#define sib_show_wc_opcodes						\
	EM(SIB_WC_SEND, "SEND")						\
	EM(SIB_WC_RDMA_WRITE, "RDMA_WRITE")				\
	EM(SIB_WC_RDMA_READ, "RDMA_READ")				\
	EM(SIB_WC_COMP_SWAP, "COMP_SWAP")				\
	EM(SIB_WC_FETCH_ADD, "FETCH_ADD")				\
	EM(SIB_WC_BIND_MW, "BIND_MW")					\
	EM(SIB_WC_LOCAL_INV, "LOCAL_INV")				\
	EM(SIB_WC_FLUSH, "FLUSH")					\
	EM(SIB_WC_ATOMIC_WRITE, "ATOMIC_WRITE")				\
	EM(SIB_WC_REG_MR, "REG_MR")					\
	EM(SIB_WC_RECV, "RECV")						\
	EME(SIB_WC_RECV_RDMA_WITH_IMM, "RECV_RDMA_WITH_IMM")

#define sib_show_wc_status						\
	EM(IB_WC_SUCCESS, "SUCCESS")					\
	EM(IB_WC_LOC_LEN_ERR, "LOC_LEN_ERR")				\
	EM(IB_WC_LOC_QP_OP_ERR, "LOC_QP_OP_ERR")			\
	EM(IB_WC_LOC_PROT_ERR, "LOC_PROT_ERR")				\
	EM(IB_WC_WR_FLUSH_ERR, "WR_FLUSH_ERR")				\
	EM(IB_WC_MW_BIND_ERR, "MW_BIND_ERR")				\
	EM(IB_WC_BAD_RESP_ERR, "BAD_RESP_ERR")				\
	EM(IB_WC_LOC_ACCESS_ERR, "LOC_ACCESS_ERR")			\
	EM(IB_WC_REM_INV_REQ_ERR, "REM_INV_REQ_ERR")			\
	EM(IB_WC_REM_ACCESS_ERR, "REM_ACCESS_ERR")			\
	EM(IB_WC_REM_OP_ERR, "REM_OP_ERR")				\
	EM(IB_WC_RETRY_EXC_ERR, "RETRY_EXC_ERR")			\
	EM(IB_WC_RNR_RETRY_EXC_ERR, "RNR_RETRY_EXC_ERR")		\
	EM(IB_WC_REM_INV_RD_REQ_ERR, "REM_INV_RD_REQ_ERR")		\
	EM(IB_WC_FATAL_ERR, "FATAL_ERR")				\
	EME(IB_WC_GENERAL_ERR, "GENERAL_ERR")

#define sib_show_qp_states						\
	EM(IB_QPS_RESET, "RESET")					\
	EM(IB_QPS_INIT, "INIT")						\
	EM(IB_QPS_RTR, "RTR")						\
	EM(IB_QPS_RTS, "RTS")						\
	EM(IB_QPS_SQD, "SQD")						\
	EM(IB_QPS_SQE, "SQE")						\
	EME(IB_QPS_ERR, "ERR")

#define sib_show_req_waits						\
	EM(SIB_REQ_GO, "go")						\
	EM(SIB_REQ_WAIT_SQD, "sqd")					\
	EM(SIB_REQ_WAIT_PROBE, "probe")					\
	EM(SIB_REQ_WAIT_FENCE, "fence")					\
	EM(SIB_REQ_WAIT_RD_ATOMIC, "rd_atomic")				\
	EM(SIB_REQ_WAIT_WINDOW, "window")				\
	EME(SIB_REQ_WAIT_CREDIT, "credit")

#define sib_show_resp_verdicts						\
	EM(SIB_RV_OK, "ok")						\
	EM(SIB_RV_DUP, "duplicate")					\
	EM(SIB_RV_SEQ_ERR, "seq_err")					\
	EM(SIB_RV_RNR, "rnr")						\
	EM(SIB_RV_NAK, "nak")						\
	EM(SIB_RV_UC_DROP, "uc_drop")					\
	EM(SIB_RV_UD, "ud")						\
	EME(SIB_RV_IGNORED, "ignored")

#define sib_show_comp_verdicts						\
	EM(SIB_CV_ACK, "ack")						\
	EM(SIB_CV_DUP_ACK, "dup_ack")					\
	EM(SIB_CV_IMPLIED_NAK, "implied_nak")				\
	EM(SIB_CV_RNR, "rnr")						\
	EM(SIB_CV_SEQ_NAK, "seq_nak")					\
	EM(SIB_CV_ERR_NAK, "err_nak")					\
	EM(SIB_CV_RESP, "resp")						\
	EM(SIB_CV_RESP_GAP, "resp_gap")					\
	EME(SIB_CV_STALE, "stale")

#define sib_show_drop_reasons						\
	EM(SIB_CNT_ICRC_ERRORS, "icrc_error")				\
	EM(SIB_CNT_HDR_ERRORS, "hdr_error")				\
	EM(SIB_CNT_UNKNOWN_QPN, "unknown_qpn")				\
	EME(SIB_CNT_RX_QUEUE_FULL, "rx_queue_full")

#define sib_show_faults							\
	EM(SIB_FI_DROP, "drop")						\
	EM(SIB_FI_DUP, "dup")						\
	EM(SIB_FI_REORDER, "reorder")					\
	EM(SIB_FI_DELAY, "delay")					\
	EME(SIB_FI_CORRUPT, "corrupt")

/* The AETH syndrome's type (bits 7..5) and NAK codes (bits 4..0). */
#define sib_show_aeth_types						\
	EM(SIB_AETH_ACK, "ACK")						\
	EM(SIB_AETH_RNR_NAK, "RNR_NAK")					\
	EME(SIB_AETH_NAK, "NAK")

#define sib_show_nak_codes						\
	EM(SIB_NAK_PSN_SEQ_ERR, "psn_seq_err")				\
	EM(SIB_NAK_INVALID_REQ, "invalid_req")				\
	EM(SIB_NAK_REM_ACCESS_ERR, "rem_access_err")			\
	EM(SIB_NAK_REM_OP_ERR, "rem_op_err")				\
	EME(SIB_NAK_INVALID_RD_REQ, "invalid_rd_req")

#endif /* SIB_TRACE_SYMS_H */
