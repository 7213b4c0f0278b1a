// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the tracepoints' one definition (sib_trace.h declares them).
 */
#define CREATE_TRACE_POINTS
#include "sib_trace.h"
