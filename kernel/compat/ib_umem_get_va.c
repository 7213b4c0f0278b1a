// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: ib_umem_get_va(), the name ib_umem_get() took when the umem
 * helpers that take a uverbs attribute or a buffer descriptor came
 * (after 6.12, by 7.2); ib_umem_get() is gone since.
 */
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>

struct ib_umem *sib_probe_ib_umem_get_va(struct ib_device *dev,
					 unsigned long addr, size_t size);
struct ib_umem *sib_probe_ib_umem_get_va(struct ib_device *dev,
					 unsigned long addr, size_t size)
{
	return ib_umem_get_va(dev, addr, size, IB_ACCESS_LOCAL_WRITE);
}
