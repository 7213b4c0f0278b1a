// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: the importer's callback of struct dma_buf_attach_ops is
 * invalidate_mappings (after 6.12, by 7.2), no longer move_notify.
 */
#include <linux/dma-buf.h>

static void sib_probe_invalidate(struct dma_buf_attachment *attach)
{
}

const struct dma_buf_attach_ops sib_probe_attach_ops;
const struct dma_buf_attach_ops sib_probe_attach_ops = {
	.invalidate_mappings = sib_probe_invalidate,
};
