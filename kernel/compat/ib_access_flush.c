// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: IB_ACCESS_FLUSH_GLOBAL (Linux 6.2), which ib_core's
 * ib_check_mr_access() then lets a registration ask for, if the device
 * advertises IB_DEVICE_FLUSH_GLOBAL. Before it, ib_core refuses the
 * flag, and no MR can be the target of a FLUSH.
 */
#include <rdma/ib_verbs.h>

int sib_probe_ib_access_flush(void);
int sib_probe_ib_access_flush(void)
{
	return IB_ACCESS_FLUSH_GLOBAL | (int)IB_DEVICE_FLUSH_GLOBAL;
}
