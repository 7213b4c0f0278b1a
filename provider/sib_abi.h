/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: compile-time checks of every rdma_user_sib.h layout and value the
 * provider relies on. The header promises fixed layouts; these asserts make
 * a change to it (or a surprising ABI) fail the build instead of corrupting
 * a ring at run time.
 */
#ifndef SIB_ABI_H
#define SIB_ABI_H

#include "sib_driver.h"
#include <rdma_user_sib.h>

/* Ring header: indices in separate cache lines. */
sib_static_size(struct sib_ring_hdr, SIB_RING_HDR_SIZE);
sib_static_offset(struct sib_ring_hdr, prod, 0);
sib_static_offset(struct sib_ring_hdr, cons, 64);
sib_static_offset(struct sib_ring_hdr, flags, 128);

sib_static_size(struct sib_ring_info, 24);
sib_static_offset(struct sib_ring_info, mmap_offset, 0);
sib_static_offset(struct sib_ring_info, mmap_size, 8);
sib_static_offset(struct sib_ring_info, nslots, 16);
sib_static_offset(struct sib_ring_info, slot_size, 20);

/* SGEs are copied straight from struct ibv_sge. */
sib_static_size(struct sib_sge, 16);
sib_static_size(struct ibv_sge, 16);
sib_static_offset(struct sib_sge, addr, offsetof(struct ibv_sge, addr));
sib_static_offset(struct sib_sge, length, offsetof(struct ibv_sge, length));
sib_static_offset(struct sib_sge, lkey, offsetof(struct ibv_sge, lkey));

/* Send WQE header. */
sib_static_size(struct sib_send_wqe, SIB_SEND_WQE_HDR);
sib_static_offset(struct sib_send_wqe, wr_id, 0);
sib_static_offset(struct sib_send_wqe, opcode, 8);
sib_static_offset(struct sib_send_wqe, num_sge, 10);
sib_static_offset(struct sib_send_wqe, send_flags, 12);
sib_static_offset(struct sib_send_wqe, inline_len, 16);
sib_static_offset(struct sib_send_wqe, ex.imm_data, 20);
sib_static_offset(struct sib_send_wqe, ex.invalidate_rkey, 20);
sib_static_offset(struct sib_send_wqe, wr, 24);
sib_static_offset(struct sib_send_wqe, wr.rdma.remote_addr, 24);
sib_static_offset(struct sib_send_wqe, wr.rdma.rkey, 32);
sib_static_offset(struct sib_send_wqe, wr.atomic.remote_addr, 24);
sib_static_offset(struct sib_send_wqe, wr.atomic.compare_add, 32);
sib_static_offset(struct sib_send_wqe, wr.atomic.swap, 40);
sib_static_offset(struct sib_send_wqe, wr.atomic.rkey, 48);
sib_static_offset(struct sib_send_wqe, wr.ud.ah_handle, 24);
sib_static_offset(struct sib_send_wqe, wr.ud.remote_qpn, 28);
sib_static_offset(struct sib_send_wqe, wr.ud.remote_qkey, 32);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.addr, 24);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.length, 32);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.mw_rkey, 40);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.new_rkey, 44);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.mr_lkey, 48);
sib_static_offset(struct sib_send_wqe, wr.bind_mw.access, 52);
_Static_assert(sizeof(((struct sib_send_wqe *)0)->wr) == 40,
	       "sib_send_wqe.wr must be 40 bytes");

/* Receive WQE header. */
sib_static_size(struct sib_recv_wqe, SIB_RECV_WQE_HDR);
sib_static_offset(struct sib_recv_wqe, wr_id, 0);
sib_static_offset(struct sib_recv_wqe, num_sge, 8);

/* The first 48 bytes of a CQE are a struct ibv_wc. */
sib_static_size(struct sib_cqe, SIB_CQE_SIZE);
sib_static_size(struct ibv_wc, 48);
sib_static_offset(struct sib_cqe, timestamp, 56);
#define sib_cqe_as_wc(cqe_member, wc_member)                                   \
	_Static_assert(offsetof(struct sib_cqe, cqe_member) ==                 \
			       offsetof(struct ibv_wc, wc_member) &&           \
		       sizeof(((struct sib_cqe *)0)->cqe_member) ==            \
			       sizeof(((struct ibv_wc *)0)->wc_member),        \
		       "sib_cqe." #cqe_member " != ibv_wc." #wc_member)
sib_cqe_as_wc(wr_id, wr_id);
sib_cqe_as_wc(status, status);
sib_cqe_as_wc(opcode, opcode);
sib_cqe_as_wc(vendor_err, vendor_err);
sib_cqe_as_wc(byte_len, byte_len);
sib_cqe_as_wc(ex, imm_data);
sib_cqe_as_wc(ex, invalidated_rkey);
sib_cqe_as_wc(qp_num, qp_num);
sib_cqe_as_wc(src_qp, src_qp);
sib_cqe_as_wc(wc_flags, wc_flags);
sib_cqe_as_wc(pkey_index, pkey_index);
sib_cqe_as_wc(slid, slid);
sib_cqe_as_wc(sl, sl);
sib_cqe_as_wc(dlid_path_bits, dlid_path_bits);
#undef sib_cqe_as_wc

/* Create responses. */
sib_static_size(struct sib_create_cq_resp, 24);
sib_static_size(struct sib_create_qp_resp, 56);
sib_static_offset(struct sib_create_qp_resp, sq, 0);
sib_static_offset(struct sib_create_qp_resp, rq, 24);
sib_static_offset(struct sib_create_qp_resp, max_inline, 48);
sib_static_size(struct sib_create_srq_resp, 32);
sib_static_size(struct sib_create_ah_resp, 8);
sib_static_offset(struct sib_create_ah_resp, ah_num, 0);
sib_static_offset(struct sib_create_srq_resp, ring, 0);
sib_static_offset(struct sib_create_srq_resp, srq_num, 24);

/* Two constants, possibly of different enum types, have the same value. */
#define sib_same_value(a, b)                                                   \
	_Static_assert((long long)(a) == (long long)(b), #a " != " #b)

/* CQE opcodes and flags are ibv's values. */
sib_same_value(SIB_WC_SEND, IBV_WC_SEND);
sib_same_value(SIB_WC_RDMA_WRITE, IBV_WC_RDMA_WRITE);
sib_same_value(SIB_WC_RDMA_READ, IBV_WC_RDMA_READ);
sib_same_value(SIB_WC_COMP_SWAP, IBV_WC_COMP_SWAP);
sib_same_value(SIB_WC_FETCH_ADD, IBV_WC_FETCH_ADD);
sib_same_value(SIB_WC_BIND_MW, IBV_WC_BIND_MW);
sib_same_value(SIB_WC_LOCAL_INV, IBV_WC_LOCAL_INV);
sib_same_value(SIB_WC_ATOMIC_WRITE, IBV_WC_ATOMIC_WRITE);
#ifdef SIB_HAVE_WR_FLUSH
sib_same_value(SIB_WC_FLUSH, IBV_WC_FLUSH);
sib_same_value(IBV_WR_FLUSH, SIB_WR_FLUSH);
sib_same_value(IBV_FLUSH_GLOBAL, SIB_FLUSH_GLOBAL);
sib_same_value(IBV_FLUSH_PERSISTENT, SIB_FLUSH_PERSISTENT);
sib_same_value(IBV_FLUSH_RANGE, SIB_FLUSH_RANGE);
sib_same_value(IBV_FLUSH_MR, SIB_FLUSH_MR);
sib_same_value(IBV_ACCESS_FLUSH_GLOBAL, SIB_ACCESS_FLUSH_GLOBAL);
sib_same_value(IBV_ACCESS_FLUSH_PERSISTENT, SIB_ACCESS_FLUSH_PERSISTENT);
#endif
sib_same_value(SIB_WC_RECV, IBV_WC_RECV);
sib_same_value(SIB_WC_RECV_RDMA_WITH_IMM, IBV_WC_RECV_RDMA_WITH_IMM);
sib_same_value(SIB_WC_F_GRH, IBV_WC_GRH);
sib_same_value(SIB_WC_F_WITH_IMM, IBV_WC_WITH_IMM);
sib_same_value(SIB_WC_F_WITH_INV, IBV_WC_WITH_INV);

/* WQE opcodes, send flags and access flags are copied unchanged. */
sib_same_value(IBV_WR_RDMA_WRITE, IB_UVERBS_WR_RDMA_WRITE);
sib_same_value(IBV_WR_RDMA_WRITE_WITH_IMM, IB_UVERBS_WR_RDMA_WRITE_WITH_IMM);
sib_same_value(IBV_WR_SEND, IB_UVERBS_WR_SEND);
sib_same_value(IBV_WR_SEND_WITH_IMM, IB_UVERBS_WR_SEND_WITH_IMM);
sib_same_value(IBV_WR_RDMA_READ, IB_UVERBS_WR_RDMA_READ);
sib_same_value(IBV_WR_ATOMIC_CMP_AND_SWP, IB_UVERBS_WR_ATOMIC_CMP_AND_SWP);
sib_same_value(IBV_WR_ATOMIC_FETCH_AND_ADD,
	       IB_UVERBS_WR_ATOMIC_FETCH_AND_ADD);
sib_same_value(IBV_WR_LOCAL_INV, IB_UVERBS_WR_LOCAL_INV);
sib_same_value(IBV_WR_BIND_MW, IB_UVERBS_WR_BIND_MW);
sib_same_value(IBV_WR_SEND_WITH_INV, IB_UVERBS_WR_SEND_WITH_INV);
sib_same_value(IBV_WR_ATOMIC_WRITE, SIB_WR_ATOMIC_WRITE);
/* The kernel's IB_SEND_* values: no uapi enum names them. */
sib_same_value(IBV_SEND_FENCE, 1);
sib_same_value(IBV_SEND_SIGNALED, 2);
sib_same_value(IBV_SEND_SOLICITED, 4);
sib_same_value(IBV_SEND_INLINE, 8);
sib_same_value(IBV_ACCESS_REMOTE_WRITE, IB_UVERBS_ACCESS_REMOTE_WRITE);
sib_same_value(IBV_ACCESS_REMOTE_READ, IB_UVERBS_ACCESS_REMOTE_READ);
sib_same_value(IBV_ACCESS_REMOTE_ATOMIC, IB_UVERBS_ACCESS_REMOTE_ATOMIC);
sib_same_value(IBV_ACCESS_ZERO_BASED, IB_UVERBS_ACCESS_ZERO_BASED);
#undef sib_same_value

/* The doorbell: a legacy POST_SEND / POST_RECV without WRs. */
sib_static_size(struct ib_uverbs_post_send, 24);
sib_static_size(struct ib_uverbs_post_recv, 24);
sib_static_offset(struct ib_uverbs_post_recv, response,
		  offsetof(struct ib_uverbs_post_send, response));
sib_static_offset(struct ib_uverbs_post_recv, qp_handle,
		  offsetof(struct ib_uverbs_post_send, qp_handle));
sib_static_offset(struct ib_uverbs_post_recv, wr_count,
		  offsetof(struct ib_uverbs_post_send, wr_count));
sib_static_offset(struct ib_uverbs_post_recv, sge_count,
		  offsetof(struct ib_uverbs_post_send, sge_count));
sib_static_offset(struct ib_uverbs_post_recv, wqe_size,
		  offsetof(struct ib_uverbs_post_send, wqe_size));
sib_static_size(struct ib_uverbs_post_send_resp, 4);
sib_static_size(struct ib_uverbs_post_recv_resp, 4);

sib_static_size(struct ib_uverbs_rereg_mr_resp, 8);
sib_static_size(struct ib_uverbs_alloc_mw_resp, 8);

#endif /* SIB_ABI_H */
