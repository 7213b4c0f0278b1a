// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ipv6_stub, the table through which code that must not depend
 * on ipv6.ko reaches IPv6's route lookup. A probe of the older interface:
 * it went away (with <net/ipv6_stubs.h>) when IPv6 could no longer be
 * built as a module, and what replaces it, ip6_dst_lookup_flow(), was
 * there all along.
 */
#include <net/ipv6_stubs.h>

struct dst_entry *sib_probe_ipv6_stub(struct net *net, struct flowi6 *fl6);
struct dst_entry *sib_probe_ipv6_stub(struct net *net, struct flowi6 *fl6)
{
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
}
