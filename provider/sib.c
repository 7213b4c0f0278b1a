/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: rdma-core provider for the rdma_sib soft RoCEv2 device.
 *
 * This file holds device matching, the device and context life cycle,
 * device/port queries and protection domains. Every op left NULL in
 * sib_ctx_ops keeps libibverbs' stub, which fails with EOPNOTSUPP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sib.h"

/* ---------------------------------------------------------------------
 * Queries
 */
static void sib_format_fw_ver(char *str, size_t len, uint64_t raw)
{
	snprintf(str, len, "%u.%u.%u", (unsigned int)((raw >> 32) & 0xffff),
		 (unsigned int)((raw >> 16) & 0xffff),
		 (unsigned int)(raw & 0xffff));
}

static int sib_query_device_ex(struct ibv_context *ibctx,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size)
{
	struct ib_uverbs_ex_query_device_resp resp;
	size_t resp_size = sizeof(resp);
	int ret;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_query_device_any(ibctx, input, attr, attr_size, &resp,
				       &resp_size);
	if (ret)
		return ret;

	sib_format_fw_ver(attr->orig_attr.fw_ver,
			  sizeof(attr->orig_attr.fw_ver), resp.base.fw_ver);
	return 0;
}

static int sib_query_port(struct ibv_context *ibctx, uint8_t port,
			  struct ibv_port_attr *attr)
{
	struct ibv_query_port cmd;

	return ibv_cmd_query_port(ibctx, port, attr, &cmd, sizeof(cmd));
}

/* ---------------------------------------------------------------------
 * Protection domains
 */
static struct ibv_pd *sib_alloc_pd(struct ibv_context *ibctx)
{
	struct sib_cmd_alloc_pd cmd;
	struct sib_cmd_alloc_pd_resp resp;
	struct sib_pd *pd;
	int ret;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_alloc_pd(ibctx, &pd->ibv_pd, &cmd.ibv_cmd, sizeof(cmd),
			       &resp.ibv_resp, sizeof(resp));
	if (ret) {
		free(pd);
		errno = ret;
		return NULL;
	}

	pd->pdn = resp.drv_payload.pdn;
	return &pd->ibv_pd;
}

static int sib_dealloc_pd(struct ibv_pd *ibpd)
{
	int ret;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(to_spd(ibpd));
	return 0;
}

/* ---------------------------------------------------------------------
 * Context
 */
static void sib_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops sib_ctx_ops = {
	.alloc_pd = sib_alloc_pd,
	.dealloc_pd = sib_dealloc_pd,
	.free_context = sib_free_context,
	.query_device_ex = sib_query_device_ex,
	.query_port = sib_query_port,
};

/*
 * The kernel writes struct sib_alloc_ucontext_resp into the udata out
 * buffer. A kernel that speaks another ABI (or writes nothing, which
 * leaves abi_version 0) is refused with EPROTO: the device exists, but
 * its user/kernel protocol is not ours.
 */
static int sib_check_ucontext_resp(struct sib_context *ctx,
				   const struct sib_alloc_ucontext_resp *uresp)
{
	if (uresp->abi_version != SIB_UVERBS_ABI_VERSION) {
		verbs_err(&ctx->ibv_ctx,
			  "kernel sib ABI %u, provider speaks %u; refusing context",
			  uresp->abi_version, SIB_UVERBS_ABI_VERSION);
		return EPROTO;
	}

	ctx->caps = uresp->caps;
	ctx->max_inline = uresp->max_inline;
	return 0;
}

static struct verbs_context *sib_alloc_context(struct ibv_device *ibdev,
					       int cmd_fd,
					       void *private_data __attribute__((unused)))
{
	struct sib_cmd_get_context cmd;
	struct sib_cmd_get_context_resp resp;
	struct sib_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = sib_check_ucontext_resp(ctx, &resp.drv_payload);
	if (ret)
		goto err_free;

	verbs_set_ops(&ctx->ibv_ctx, &sib_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

static void sib_free_context(struct ibv_context *ibctx)
{
	struct sib_context *ctx = to_sctx(ibctx);

	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
}

/* ---------------------------------------------------------------------
 * Device
 */

/*
 * A sib device carries <ibdev_path>/SIB_SYSFS_ATTR = "sib <abi>\n". Any
 * well-formed value claims the device; the library then checks the
 * kernel's uverbs ABI against [match_min, match_max] and prints a warning
 * on mismatch, which is more useful than silently not matching.
 */
static bool sib_parse_abi_attr(const char *buf, unsigned long *abi)
{
	static const char magic[] = SIB_SYSFS_MAGIC " ";
	const char *num = buf + sizeof(magic) - 1;
	char *end;

	if (strncmp(buf, magic, sizeof(magic) - 1) != 0)
		return false;
	if (*num < '0' || *num > '9')
		return false;

	errno = 0;
	*abi = strtoul(num, &end, 10);
	return errno == 0 && *end == '\0';
}

static bool sib_match_device(struct verbs_sysfs_dev *sysfs_dev)
{
	char buf[32];
	unsigned long abi;
	int len;

	memset(buf, 0, sizeof(buf));
	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf), sysfs_dev, "%s",
					SIB_SYSFS_ATTR);
	if (len <= 0 || (size_t)len >= sizeof(buf))
		return false;

	return sib_parse_abi_attr(buf, &abi);
}

static struct verbs_device *sib_alloc_device(struct verbs_sysfs_dev *sysfs_dev)
{
	struct sib_device *dev;

	dev = calloc(1, sizeof(*dev));
	if (!dev)
		return NULL;

	dev->abi_version = sysfs_dev->abi_ver;
	return &dev->ibv_dev;
}

static void sib_uninit_device(struct verbs_device *verbs_device)
{
	free(to_sdev(&verbs_device->device));
}

/*
 * No table entry ever matches (sib has no driver id, PCI id or modalias;
 * sib_match_device() decides), but libibverbs walks the table for devices
 * with a known driver id, so it must exist and be terminated.
 */
static const struct verbs_match_ent sib_match_table[] = {
	{},
};

static const struct verbs_device_ops sib_dev_ops = {
	.name = "sib",
	.match_min_abi_version = SIB_UVERBS_ABI_VERSION,
	.match_max_abi_version = SIB_UVERBS_ABI_VERSION,
	.match_table = sib_match_table,
	.match_device = sib_match_device,
	.alloc_device = sib_alloc_device,
	.uninit_device = sib_uninit_device,
	.alloc_context = sib_alloc_context,
};

SIB_PROVIDER_DRIVER(sib, sib_dev_ops);
