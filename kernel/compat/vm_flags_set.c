// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Probe: vm_flags_set(), the only way to change vma->vm_flags once the
 * field became read-only (Linux 6.3).
 */
#include <linux/mm.h>

void sib_probe_vm_flags_set(struct vm_area_struct *vma);
void sib_probe_vm_flags_set(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND | VM_DONTDUMP);
}
