// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: dma_buf_vmap_unlocked() (Linux 6.2). Since then dma_buf_vmap()
 * wants the caller to hold the reservation lock; before, it took the
 * dma-buf's own lock and had no unlocked variant.
 */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

int sib_probe_dma_buf_vmap_unlocked(struct dma_buf *dmabuf,
				    struct iosys_map *map);
int sib_probe_dma_buf_vmap_unlocked(struct dma_buf *dmabuf,
				    struct iosys_map *map)
{
	return dma_buf_vmap_unlocked(dmabuf, map);
}
