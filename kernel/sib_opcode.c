// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the IBA transport opcodes sib speaks (IBA vol. 1, table 38) and the
 * headers each one carries.
 */
#include "sib_hdr.h"

#define BTH_LEN		12
#define RETH_LEN	16
#define AETH_LEN	4
#define ATMETH_LEN	28
#define ATMACK_LEN	8
#define IMMDT_LEN	4
#define IETH_LEN	4
#define DETH_LEN	8
#define FETH_LEN	4
#define XRCETH_LEN	4

/* Canonical order of extended headers after the BTH (IBA 9.2). */
static const struct {
	u32 flag;
	u8 len;
} sib_eth_order[] = {
	{ SIB_OP_XRCETH, XRCETH_LEN },
	{ SIB_OP_DETH, DETH_LEN },
	{ SIB_OP_FETH, FETH_LEN },
	{ SIB_OP_RETH, RETH_LEN },
	{ SIB_OP_ATMETH, ATMETH_LEN },
	{ SIB_OP_AETH, AETH_LEN },
	{ SIB_OP_ATMACK, ATMACK_LEN },
	{ SIB_OP_IMMDT, IMMDT_LEN },
	{ SIB_OP_IETH, IETH_LEN },
};

static u8 sib_hdr_len(u32 flags)
{
	unsigned int i;
	u8 len = BTH_LEN;

	for (i = 0; i < ARRAY_SIZE(sib_eth_order); i++)
		if (flags & sib_eth_order[i].flag)
			len += sib_eth_order[i].len;
	return len;
}

unsigned int sib_eth_offset(u8 opcode, u32 which)
{
	u32 flags = sib_opinfo[opcode].flags;
	unsigned int i, off = BTH_LEN;

	for (i = 0; i < ARRAY_SIZE(sib_eth_order); i++) {
		if (sib_eth_order[i].flag == which)
			break;
		if (flags & sib_eth_order[i].flag)
			off += sib_eth_order[i].len;
	}
	return off;
}

#define ONLY	(SIB_OP_FIRST | SIB_OP_LAST)
#define RQ	(SIB_OP_REQ | SIB_OP_VALID)
#define RS	(SIB_OP_RESP | SIB_OP_VALID)
#define PL	SIB_OP_PAYLOAD
#define SEND	(SIB_OP_SEND | RQ | PL)
#define WR_OP	(SIB_OP_WRITE | RQ | PL)

/* The flags of each opcode, without the transport bit (RC/UC/UD). */
#define OPS(x)								\
	[IB_OPCODE_SEND_FIRST] = SEND | SIB_OP_FIRST,			\
	[IB_OPCODE_SEND_MIDDLE] = SEND | SIB_OP_MIDDLE,			\
	[IB_OPCODE_SEND_LAST] = SEND | SIB_OP_LAST,			\
	[IB_OPCODE_SEND_LAST_WITH_IMMEDIATE] =				\
		SEND | SIB_OP_LAST | SIB_OP_IMMDT,			\
	[IB_OPCODE_SEND_ONLY] = SEND | ONLY,				\
	[IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE] = SEND | ONLY | SIB_OP_IMMDT, \
	[IB_OPCODE_RDMA_WRITE_FIRST] = WR_OP | SIB_OP_FIRST | SIB_OP_RETH, \
	[IB_OPCODE_RDMA_WRITE_MIDDLE] = WR_OP | SIB_OP_MIDDLE,		\
	[IB_OPCODE_RDMA_WRITE_LAST] = WR_OP | SIB_OP_LAST,		\
	[IB_OPCODE_RDMA_WRITE_LAST_WITH_IMMEDIATE] =			\
		WR_OP | SIB_OP_LAST | SIB_OP_IMMDT,			\
	[IB_OPCODE_RDMA_WRITE_ONLY] = WR_OP | ONLY | SIB_OP_RETH,	\
	[IB_OPCODE_RDMA_WRITE_ONLY_WITH_IMMEDIATE] =			\
		WR_OP | ONLY | SIB_OP_RETH | SIB_OP_IMMDT

static const u32 sib_rc_ops[32] = {
	OPS(RC),
	[IB_OPCODE_RDMA_READ_REQUEST] = SIB_OP_READ | RQ | ONLY | SIB_OP_RETH,
	[IB_OPCODE_RDMA_READ_RESPONSE_FIRST] =
		SIB_OP_READ | RS | PL | SIB_OP_FIRST | SIB_OP_AETH,
	[IB_OPCODE_RDMA_READ_RESPONSE_MIDDLE] =
		SIB_OP_READ | RS | PL | SIB_OP_MIDDLE,
	[IB_OPCODE_RDMA_READ_RESPONSE_LAST] =
		SIB_OP_READ | RS | PL | SIB_OP_LAST | SIB_OP_AETH,
	[IB_OPCODE_RDMA_READ_RESPONSE_ONLY] =
		SIB_OP_READ | RS | PL | ONLY | SIB_OP_AETH,
	[IB_OPCODE_ACKNOWLEDGE] = SIB_OP_ACK | RS | ONLY | SIB_OP_AETH,
	[IB_OPCODE_ATOMIC_ACKNOWLEDGE] =
		SIB_OP_ATOMIC | RS | ONLY | SIB_OP_AETH | SIB_OP_ATMACK,
	[IB_OPCODE_COMPARE_SWAP] = SIB_OP_ATOMIC | RQ | ONLY | SIB_OP_ATMETH,
	[IB_OPCODE_FETCH_ADD] = SIB_OP_ATOMIC | RQ | ONLY | SIB_OP_ATMETH,
	[IB_OPCODE_SEND_LAST_WITH_INVALIDATE] =
		SEND | SIB_OP_LAST | SIB_OP_IETH,
	[IB_OPCODE_SEND_ONLY_WITH_INVALIDATE] = SEND | ONLY | SIB_OP_IETH,
	[SIB_OPCODE_ATOMIC_WRITE] =
		WR_OP | SIB_OP_ATOMIC_WRITE | ONLY | SIB_OP_RETH,
	[SIB_OPCODE_FLUSH] =
		SIB_OP_FLUSH | RQ | ONLY | SIB_OP_FETH | SIB_OP_RETH,
};

static const u32 sib_uc_ops[32] = {
	OPS(UC),
};

static const u32 sib_ud_ops[32] = {
	[IB_OPCODE_SEND_ONLY] = SEND | ONLY | SIB_OP_DETH,
	[IB_OPCODE_SEND_ONLY_WITH_IMMEDIATE] =
		SEND | ONLY | SIB_OP_DETH | SIB_OP_IMMDT,
};

struct sib_opinfo sib_opinfo[256] __ro_after_init;

static void __init sib_fill(u8 base, const u32 *ops, u32 transport)
{
	struct sib_opinfo *t = sib_opinfo;
	unsigned int i;

	for (i = 0; i < 32; i++) {
		if (!ops[i])
			continue;
		t[base + i].flags = ops[i] | transport;
		t[base + i].hdr_len = sib_hdr_len(ops[i]);
	}
}

/*
 * XRC speaks RC's opcodes in its own class, and its requests carry an
 * XRCETH right after the BTH. FLUSH and ATOMIC WRITE stay RC's only.
 */
static void __init sib_fill_xrc(void)
{
	struct sib_opinfo *t = sib_opinfo;
	unsigned int i;
	u32 f;

	for (i = 0; i < 32; i++) {
		f = sib_rc_ops[i];
		if (!f || (f & (SIB_OP_FLUSH | SIB_OP_ATOMIC_WRITE)))
			continue;
		if (f & SIB_OP_REQ)
			f |= SIB_OP_XRCETH;
		t[SIB_OPCODE_XRC + i].flags = f | SIB_OP_RC | SIB_OP_XRC;
		t[SIB_OPCODE_XRC + i].hdr_len = sib_hdr_len(f);
	}
}

/* Called once at module load, before any device exists. */
void __init sib_opcode_init(void)
{
	sib_fill(IB_OPCODE_RC, sib_rc_ops, SIB_OP_RC);
	sib_fill_xrc();
	sib_fill(IB_OPCODE_UC, sib_uc_ops, SIB_OP_UC);
	sib_fill(IB_OPCODE_UD, sib_ud_ops, SIB_OP_UD);
}
