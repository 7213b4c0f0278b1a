// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: page_frag_cache_drain(), which frees what a page_frag_cache
 * holds, since its page is no longer kept as ->va but encoded with its
 * order (Linux 6.13).
 */
#include <linux/page_frag_cache.h>

void sib_probe_page_frag_cache_drain(struct page_frag_cache *nc);
void sib_probe_page_frag_cache_drain(struct page_frag_cache *nc)
{
	page_frag_cache_drain(nc);
}
