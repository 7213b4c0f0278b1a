// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the invariant CRC of a RoCEv2 packet (IBA vol. 1 annex A17.3.3).
 *
 * The ICRC is the IBA CRC-32 (the Ethernet polynomial, reflected) over the
 * packet from the IP header to the end of the padded payload, with the
 * fields that routers may change replaced by ones: the 8-byte LRH that
 * RoCEv2 has not, IPv4 TOS, TTL and header checksum, IPv6 traffic class,
 * flow label and hop limit, the UDP checksum, and the BTH's reserved byte
 * in front of the destination QP number (with the FECN/BECN bits). It goes
 * on the wire least significant byte first, as rdma_rxe and RoCE NICs
 * send it.
 */
#include <linux/crc32.h>
#include <linux/ip.h>
#include <linux/ipv6.h>
#include <linux/udp.h>

#include "sib_icrc.h"
#include "sib_hdr.h"

/*
 * crc32_le() of eight 0xff bytes (the masked LRH), started from the usual
 * all-ones seed: every ICRC starts from here.
 */
#define SIB_ICRC_SEED	0xdebb20e3

/* The longest masked prefix: IPv6, UDP and the BTH. */
#define SIB_ICRC_HDR_MAX (sizeof(struct ipv6hdr) + sizeof(struct udphdr) + \
			  sizeof(struct sib_bth))

/* Copy the IP, UDP and BTH headers at @nh and mask them; returns the length. */
static unsigned int sib_icrc_mask(const u8 *nh, u8 *buf)
{
	bool v4 = (nh[0] >> 4) == 4;
	unsigned int ip_len = v4 ? sizeof(struct iphdr) : sizeof(struct ipv6hdr);
	struct udphdr *uh = (struct udphdr *)(buf + ip_len);
	struct sib_bth *bth = (struct sib_bth *)(uh + 1);

	memcpy(buf, nh, ip_len + sizeof(*uh) + sizeof(*bth));
	if (v4) {
		struct iphdr *iph = (struct iphdr *)buf;

		iph->tos = 0xff;
		iph->ttl = 0xff;
		iph->check = (__force __sum16)0xffff;
	} else {
		struct ipv6hdr *ip6h = (struct ipv6hdr *)buf;

		ip6h->priority = 0xf;
		memset(ip6h->flow_lbl, 0xff, sizeof(ip6h->flow_lbl));
		ip6h->hop_limit = 0xff;
	}
	uh->check = (__force __sum16)0xffff;
	bth->qpn |= cpu_to_be32(~SIB_QPN_MASK);
	return ip_len + sizeof(*uh) + sizeof(*bth);
}

/**
 * sib_icrc - compute the ICRC of a RoCEv2 packet
 * @skb: the packet; its network header is an IPv4 header without options
 *	 or an IPv6 header without extension headers, followed by UDP and
 *	 the BTH, all three in the linear part; the rest (extended headers,
 *	 payload and pad) may be linear or in page fragments, and the last
 *	 four bytes of the packet are the ICRC's place (not read)
 *
 * One pass of crc32_le() (lib/crc32.c, slice-by-8) over the packet:
 * the masked copy of the headers, then the bytes after them wherever
 * they are (skb_seq_read() maps each fragment's page in turn; nothing is
 * allocated or copied).
 *
 * Return: the ICRC, the value to store, least significant byte first, in
 * the last four bytes.
 */
u32 sib_icrc(struct sk_buff *skb)
{
	unsigned int to = skb->len - SIB_ICRC_LEN, n, done = 0;
	u8 buf[SIB_ICRC_HDR_MAX];
	struct skb_seq_state st;
	const u8 *data;
	int from;
	u32 crc;

	n = sib_icrc_mask(skb_network_header(skb), buf);
	crc = crc32_le(SIB_ICRC_SEED, buf, n);
	/* The first byte after the masked headers, from skb->data on. */
	from = skb_network_offset(skb) + n;
	if (from < 0 || from >= to)
		return ~crc;
	/* skb_seq_read() may return a block that runs past @to: clamp it. */
	to -= from;
	skb_prepare_seq_read(skb, from, from + to, &st);
	while (done < to && (n = skb_seq_read(done, &data, &st)) != 0) {
		n = min(n, to - done);
		crc = crc32_le(crc, data, n);
		done += n;
	}
	skb_abort_seq_read(&st);	/* unmaps the last fragment's page */
	return ~crc;
}
