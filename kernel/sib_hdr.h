/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: InfiniBand transport headers as they appear on the wire
 * (IBA vol. 1, chapter 9), and the per-opcode facts the engines need.
 *
 * A sib packet is the IBA transport part of a RoCEv2 packet: BTH, then the
 * extended transport headers its opcode calls for, then the payload padded
 * to a multiple of four bytes. On the wire it sits in a UDP datagram to
 * port 4791 and ends with the ICRC; on the local path it travels as is.
 */
#ifndef SIB_HDR_H
#define SIB_HDR_H

#include <linux/types.h>
#include <rdma/ib_pack.h>

/* Base transport header, 12 bytes. */
struct sib_bth {
	u8 opcode;
	u8 flags;		/* SE:1 M:1 PadCnt:2 TVer:4 */
	__be16 pkey;
	__be32 qpn;		/* F/B/resv:8 DestQP:24 */
	__be32 apsn;		/* AckReq:1 resv:7 PSN:24 */
} __packed;

#define SIB_BTH_SE		0x80
#define SIB_BTH_MIG		0x40
#define SIB_BTH_PAD_SHIFT	4
#define SIB_BTH_PAD_MASK	0x30
#define SIB_BTH_ACK_REQ		0x80000000u
#define SIB_QPN_MASK		0x00ffffffu
#define SIB_PSN_MASK		0x00ffffffu

/* RDMA extended transport header, 16 bytes. */
struct sib_reth {
	__be64 va;
	__be32 rkey;
	__be32 len;
} __packed;

/*
 * FLUSH extended transport header (IBA 1.5), 4 bytes, before the RETH:
 * bits 3..0 the placement type (enum sib_flush_type), bits 5..4 the
 * selectivity level (enum sib_flush_level), the others reserved (0).
 */
struct sib_feth {
	__be32 bits;
} __packed;

#define SIB_FETH_PLT_MASK	0x0000000f
#define SIB_FETH_SEL_SHIFT	4
#define SIB_FETH_SEL_MASK	0x00000030

/* ACK extended transport header, 4 bytes. */
struct sib_aeth {
	__be32 smsn;		/* Syndrome:8 MSN:24 */
} __packed;

/* AETH syndrome: bits 7..5 type, bits 4..0 credit count / timer / code. */
#define SIB_AETH_TYPE_MASK	0xe0
#define SIB_AETH_ACK		0x00
#define SIB_AETH_RNR_NAK	0x20
#define SIB_AETH_NAK		0x60
#define SIB_AETH_CREDIT_INVALID	0x1f
#define SIB_NAK_PSN_SEQ_ERR	0x00
#define SIB_NAK_INVALID_REQ	0x01
#define SIB_NAK_REM_ACCESS_ERR	0x02
#define SIB_NAK_REM_OP_ERR	0x03
#define SIB_NAK_INVALID_RD_REQ	0x04

/* Atomic extended transport header, 28 bytes. */
struct sib_atmeth {
	__be64 va;
	__be32 rkey;
	__be64 swap_add;
	__be64 compare;
} __packed;

/* Atomic acknowledge extended transport header, 8 bytes. */
struct sib_atmack {
	__be64 orig;
} __packed;

/*
 * XRC extended transport header, 4 bytes (IBA 9.3.6): the XRC SRQ a
 * request of an XRC_INI QP is for, at the XRC_TGT QP. Only requests carry
 * it; ACKs and READ responses do not.
 */
struct sib_xrceth {
	__be32 srqn;		/* resv:8 XRCSRQ:24 */
} __packed;

#define SIB_XRC_SRQN_MASK	0x00ffffffu

/* Datagram extended transport header, 8 bytes. */
struct sib_deth {
	__be32 qkey;
	__be32 sqp;		/* resv:8 SrcQP:24 */
} __packed;

/*
 * A controlled Q_Key (the high bit set): only privileged consumers may own one
 * (QP1's is 0x80010000), and a work request naming one sends the QP's own.
 */
#define SIB_QKEY_CONTROLLED	0x80000000u

/* Which extended headers an opcode carries, and what it means. */
enum sib_op_flags {
	SIB_OP_RETH	= BIT(0),
	SIB_OP_AETH	= BIT(1),
	SIB_OP_ATMETH	= BIT(2),
	SIB_OP_ATMACK	= BIT(3),
	SIB_OP_IMMDT	= BIT(4),
	SIB_OP_IETH	= BIT(5),
	SIB_OP_DETH	= BIT(6),
	SIB_OP_PAYLOAD	= BIT(7),
	SIB_OP_REQ	= BIT(8),	/* a request (to the responder) */
	SIB_OP_RESP	= BIT(9),	/* a response (to the requester) */
	SIB_OP_FIRST	= BIT(10),
	SIB_OP_MIDDLE	= BIT(11),
	SIB_OP_LAST	= BIT(12),	/* ends a message (ONLY = FIRST|LAST) */
	SIB_OP_SEND	= BIT(13),
	SIB_OP_WRITE	= BIT(14),
	SIB_OP_READ	= BIT(15),
	SIB_OP_ATOMIC	= BIT(16),
	SIB_OP_ACK	= BIT(17),
	SIB_OP_RC	= BIT(18),
	SIB_OP_UC	= BIT(19),
	SIB_OP_UD	= BIT(20),
	SIB_OP_VALID	= BIT(21),
	SIB_OP_ATOMIC_WRITE = BIT(22),	/* with SIB_OP_WRITE: 8 bytes at once */
	SIB_OP_FETH	= BIT(23),
	SIB_OP_FLUSH	= BIT(24),
	SIB_OP_XRC	= BIT(25),	/* with SIB_OP_RC: the XRC transport */
	SIB_OP_XRCETH	= BIT(26),
};

/*
 * The requests a responder answers with a response of their own, and
 * records in a responder resource to answer a duplicate again: READ,
 * the atomics, ATOMIC WRITE and FLUSH (the requester's max_rd_atomic
 * counts them all).
 */
#define SIB_OP_RD_ATOMIC	(SIB_OP_READ | SIB_OP_ATOMIC | SIB_OP_ATOMIC_WRITE | \
				 SIB_OP_FLUSH)

/*
 * IBA 1.5's ATOMIC WRITE request (RC only): a RETH and 8 bytes of payload;
 * its FLUSH request: a FETH and a RETH, no payload. Both are answered by
 * an RDMA READ response without payload. Linux 6.2 and later call it
 * IB_OPCODE_RC_ATOMIC_WRITE; 6.1's headers do not have it.
 */
enum sib_opcode_ext {
	SIB_OPCODE_FLUSH = 0x1c,
	SIB_OPCODE_ATOMIC_WRITE = 0x1d,
	SIB_OPCODE_RC_FLUSH = IB_OPCODE_RC + SIB_OPCODE_FLUSH,
	SIB_OPCODE_RC_ATOMIC_WRITE = IB_OPCODE_RC + SIB_OPCODE_ATOMIC_WRITE,
	/* The XRC transport's opcodes: bits 7..5 = 101 (IBA 9.2.3). */
	SIB_OPCODE_XRC = 0xa0,
	SIB_OPCODE_OP_MASK = 0x1f,
};

struct sib_opinfo {
	u32 flags;		/* enum sib_op_flags */
	u8 hdr_len;		/* BTH and every extended header */
};

extern struct sib_opinfo sib_opinfo[256];
void sib_opcode_init(void);

static inline u32 sib_op_flags(u8 opcode)
{
	return sib_opinfo[opcode].flags;
}

/* Offsets of the extended headers of @opcode within the packet. */
unsigned int sib_eth_offset(u8 opcode, u32 which);

static inline u32 sib_psn_add(u32 psn, u32 n)
{
	return (psn + n) & SIB_PSN_MASK;
}

/*
 * PSN comparison on the 24-bit circle: negative if @a is before @b,
 * zero if equal, positive if after (IBA 9.7.1: half the space each way).
 */
static inline int sib_psn_cmp(u32 a, u32 b)
{
	return (s32)((a - b) << 8);
}

#endif /* SIB_HDR_H */
