// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: MODULE_IMPORT_NS() takes the namespace as an identifier, which
 * it turns into a string (before 6.13); since, it takes a string literal.
 */
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
