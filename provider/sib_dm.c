/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: device memory (ibv_alloc_dm, ibv_reg_dm_mr, ibv_import_dm).
 *
 * The kernel allocates the pages and tells where to map them (struct
 * sib_dm_info, uapi/rdma_user_sib.h "Device memory"); the provider maps
 * all of them, shared, through the context's command file, and copies to
 * and from the mapping. Copies follow mlx5's rules, which rdma-core's
 * tests and portable applications expect: offset and length must be
 * multiples of 4 bytes (EINVAL), and the range must lie inside the
 * allocation (EFAULT).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sib.h"

struct sib_dm {
	struct verbs_dm vdm;
	void *map;		/* all of the allocation's pages */
	size_t map_size;
	uint64_t length;	/* bytes of the allocation */
};

static struct sib_dm *to_sdm(struct ibv_dm *ibdm)
{
	return container_of(ibdm, struct sib_dm, vdm.dm);
}

/* 0, or the errno value of a copy that mlx5 would refuse. */
static int sib_dm_check(struct sib_dm *dm, uint64_t offset, size_t length)
{
	if (offset > dm->length || length > dm->length - offset)
		return EFAULT;
	if ((offset | length) & 3)
		return EINVAL;
	return 0;
}

static int sib_memcpy_to_dm(struct ibv_dm *ibdm, uint64_t dm_offset,
			    const void *host_addr, size_t length)
{
	struct sib_dm *dm = to_sdm(ibdm);
	int ret = sib_dm_check(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy((uint8_t *)dm->map + dm_offset, host_addr, length);
	return 0;
}

static int sib_memcpy_from_dm(void *host_addr, struct ibv_dm *ibdm,
			      uint64_t dm_offset, size_t length)
{
	struct sib_dm *dm = to_sdm(ibdm);
	int ret = sib_dm_check(dm, dm_offset, length);

	if (ret)
		return ret;
	memcpy(host_addr, (uint8_t *)dm->map + dm_offset, length);
	return 0;
}

/*
 * Map what the kernel described, after checking that the description is
 * consistent (a kernel we do not understand gets EPROTO, not a mapping
 * of the wrong size).
 */
static int sib_dm_map(struct ibv_context *ibctx, struct sib_dm *dm,
		      const struct sib_dm_info *info)
{
	uint64_t page = sysconf(_SC_PAGESIZE);

	if (!info->length || info->mmap_size < info->length ||
	    info->mmap_size - info->length >= page ||
	    info->mmap_size % page || info->mmap_size > SIZE_MAX)
		return EPROTO;
	dm->map = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE,
		       MAP_SHARED, ibctx->cmd_fd, info->mmap_offset);
	if (dm->map == MAP_FAILED) {
		dm->map = NULL;
		return errno;
	}
	dm->map_size = info->mmap_size;
	dm->length = info->length;
	dm->vdm.dm.context = ibctx;
	dm->vdm.dm.memcpy_to_dm = sib_memcpy_to_dm;
	dm->vdm.dm.memcpy_from_dm = sib_memcpy_from_dm;
	return 0;
}

struct ibv_dm *sib_alloc_dm(struct ibv_context *ibctx,
			    struct ibv_alloc_dm_attr *attr)
{
	SIB_CMD_BUFFER(link, UVERBS_OBJECT_DM, UVERBS_METHOD_DM_ALLOC, 1);
	struct sib_dm_info info;
	struct sib_dm *dm;
	int ret;

	if (!(to_sctx(ibctx)->caps & SIB_UCTX_CAP_DM)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	if (attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;

	memset(&info, 0, sizeof(info));
	sib_cmd_attr_out(link, SIB_ATTR_ALLOC_DM_RESP, &info, sizeof(info));
	ret = ibv_cmd_alloc_dm(ibctx, attr, &dm->vdm, link);
	if (ret)
		goto err_free;
	if (info.length != attr->length)
		ret = EPROTO;
	else
		ret = sib_dm_map(ibctx, dm, &info);
	if (ret)
		goto err_cmd;
	return &dm->vdm.dm;

err_cmd:
	ibv_cmd_free_dm(&dm->vdm);
err_free:
	free(dm);
	errno = ret;
	return NULL;
}

/* EBUSY while MRs are registered on it: the mapping stays then. */
int sib_free_dm(struct ibv_dm *ibdm)
{
	struct sib_dm *dm = to_sdm(ibdm);
	int ret;

	ret = ibv_cmd_free_dm(&dm->vdm);
	if (ret)
		return ret;
	munmap(dm->map, dm->map_size);
	free(dm);
	return 0;
}

/*
 * An allocation of the context's command file (made by another
 * ibv_context on it, or by another process that passed the file on):
 * the kernel describes it again and we map it too. Unimporting unmaps
 * our copy only.
 */
struct ibv_dm *sib_import_dm(struct ibv_context *ibctx, uint32_t dm_handle)
{
	SIB_CMD_BUFFER(cmd, UVERBS_OBJECT_DM, SIB_METHOD_DM_QUERY, 2);
	struct sib_dm_info info;
	struct sib_dm *dm;
	int ret;

	if (!(to_sctx(ibctx)->caps & SIB_UCTX_CAP_DM)) {
		errno = EOPNOTSUPP;
		return NULL;
	}
	dm = calloc(1, sizeof(*dm));
	if (!dm)
		return NULL;

	memset(&info, 0, sizeof(info));
	sib_cmd_attr_in_obj(cmd, SIB_ATTR_QUERY_DM_HANDLE, dm_handle);
	sib_cmd_attr_out(cmd, SIB_ATTR_QUERY_DM_RESP, &info, sizeof(info));
	ret = execute_ioctl(ibctx, cmd);
	if (!ret)
		ret = sib_dm_map(ibctx, dm, &info);
	if (ret) {
		free(dm);
		errno = ret;
		return NULL;
	}
	dm->vdm.handle = dm_handle;
	dm->vdm.dm.handle = dm_handle;
	dm->vdm.dm.comp_mask = IBV_DM_MASK_HANDLE;
	return &dm->vdm.dm;
}

void sib_unimport_dm(struct ibv_dm *ibdm)
{
	struct sib_dm *dm = to_sdm(ibdm);

	munmap(dm->map, dm->map_size);
	free(dm);
}

/*
 * A zero-based MR over [dm_offset, dm_offset + length) of the allocation
 * (ibv_cmd_reg_dm_mr() refuses it without IBV_ACCESS_ZERO_BASED; the
 * kernel checks the range). Deregistered like any MR (sib_dereg_mr()).
 */
struct ibv_mr *sib_reg_dm_mr(struct ibv_pd *pd, struct ibv_dm *ibdm,
			     uint64_t dm_offset, size_t length,
			     unsigned int access)
{
	struct sib_dm *dm = to_sdm(ibdm);
	struct verbs_mr *vmr;
	int ret;

	vmr = calloc(1, sizeof(*vmr));
	if (!vmr)
		return NULL;
	ret = ibv_cmd_reg_dm_mr(pd, &dm->vdm, dm_offset, length, access, vmr,
				NULL);
	if (ret) {
		free(vmr);
		errno = ret;
		return NULL;
	}
	return &vmr->ibv_mr;
}
