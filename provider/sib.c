/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: rdma-core provider for the rdma_sib soft RoCEv2 device.
 *
 * This file holds device matching, the device and context life cycle,
 * device/port queries, protection domains, the ring mapping helpers that
 * the CQ, QP and SRQ code share, and the ops table. Every op left NULL in
 * sib_ctx_ops keeps libibverbs' stub, which fails with EOPNOTSUPP.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

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
	sib_rss_caps(attr, attr_size);
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

/*
 * A parent domain only drops its references; a PD that parent domains
 * still extend is busy.
 */
static int sib_dealloc_pd(struct ibv_pd *ibpd)
{
	struct sib_pd *pd = to_spd(ibpd);
	int ret;

	if (pd->parent) {
		if (__atomic_load_n(&pd->users, __ATOMIC_RELAXED))
			return EBUSY;
		__atomic_sub_fetch(&pd->parent->users, 1, __ATOMIC_RELAXED);
		if (pd->td)
			__atomic_sub_fetch(&pd->td->users, 1, __ATOMIC_RELAXED);
		free(pd);
		return 0;
	}
	if (__atomic_load_n(&pd->users, __ATOMIC_RELAXED))
		return EBUSY;

	ret = ibv_cmd_dealloc_pd(ibpd);
	if (ret)
		return ret;

	free(pd);
	return 0;
}

/*
 * A PD of the context's command file, by its handle. There is no kernel
 * query for a PD: a wrong handle shows when the PD is used (EINVAL).
 */
static struct ibv_pd *sib_import_pd(struct ibv_context *ibctx,
				    uint32_t pd_handle)
{
	struct sib_pd *pd;

	pd = calloc(1, sizeof(*pd));
	if (!pd)
		return NULL;

	pd->ibv_pd.context = ibctx;
	pd->ibv_pd.handle = pd_handle;
	return &pd->ibv_pd;
}

static void sib_unimport_pd(struct ibv_pd *ibpd)
{
	free(to_spd(ibpd));
}

/* ---------------------------------------------------------------------
 * Thread domains and parent domains
 *
 * Both live in the provider only: the kernel sees the PD a parent domain
 * extends (same handle). A thread domain turns off the locks of the QPs
 * and CQs created on a parent domain that holds it. sib's queues are
 * rings the kernel allocates and the process maps, so the provider has
 * no queue memory of its own to take from the parent domain's allocator:
 * alloc and free are kept for the application but never called.
 */
static struct ibv_td *sib_alloc_td(struct ibv_context *ibctx,
				   struct ibv_td_init_attr *attr)
{
	struct sib_td *td;

	if (!attr || attr->comp_mask) {
		errno = EINVAL;
		return NULL;
	}

	td = calloc(1, sizeof(*td));
	if (!td)
		return NULL;

	td->ibv_td.context = ibctx;
	return &td->ibv_td;
}

static int sib_dealloc_td(struct ibv_td *ibtd)
{
	struct sib_td *td = container_of(ibtd, struct sib_td, ibv_td);

	if (__atomic_load_n(&td->users, __ATOMIC_RELAXED))
		return EBUSY;

	free(td);
	return 0;
}

enum {
	SIB_PDOM_COMP_MASK = IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS |
			     IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT,
};

/* EINVAL unless @attr names a PD (not a parent domain) of @ibctx. */
static int sib_check_pdom_attr(struct ibv_context *ibctx,
			       const struct ibv_parent_domain_init_attr *attr)
{
	if (attr->comp_mask & ~(uint32_t)SIB_PDOM_COMP_MASK)
		return EINVAL;
	if (!attr->pd || attr->pd->context != ibctx || to_spd(attr->pd)->parent)
		return EINVAL;
	if (attr->td && attr->td->context != ibctx)
		return EINVAL;
	if ((attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) &&
	    (!attr->alloc || !attr->free))
		return EINVAL;
	return 0;
}

static struct ibv_pd *
sib_alloc_parent_domain(struct ibv_context *ibctx,
			struct ibv_parent_domain_init_attr *attr)
{
	struct sib_pd *pdom, *pd;
	int ret;

	ret = sib_check_pdom_attr(ibctx, attr);
	if (ret) {
		errno = ret;
		return NULL;
	}

	pdom = calloc(1, sizeof(*pdom));
	if (!pdom)
		return NULL;

	pd = to_spd(attr->pd);
	pdom->ibv_pd.context = ibctx;
	pdom->ibv_pd.handle = pd->ibv_pd.handle;
	pdom->pdn = pd->pdn;
	pdom->parent = pd;
	if (attr->td)
		pdom->td = container_of(attr->td, struct sib_td, ibv_td);
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_ALLOCATORS) {
		pdom->alloc = attr->alloc;
		pdom->free = attr->free;
	}
	if (attr->comp_mask & IBV_PARENT_DOMAIN_INIT_ATTR_PD_CONTEXT)
		pdom->pd_context = attr->pd_context;

	__atomic_add_fetch(&pd->users, 1, __ATOMIC_RELAXED);
	if (pdom->td)
		__atomic_add_fetch(&pdom->td->users, 1, __ATOMIC_RELAXED);
	return &pdom->ibv_pd;
}

/* ---------------------------------------------------------------------
 * Address handles
 *
 * The kernel keeps the address vector (and resolves the destination MAC);
 * UD send WQEs name it by the AH number the create response carries.
 */
struct ibv_ah *sib_create_ah(struct ibv_pd *pd, struct ibv_ah_attr *attr)
{
	struct sib_cmd_create_ah_resp resp;
	struct sib_ah *ah;
	int ret;

	ah = calloc(1, sizeof(*ah));
	if (!ah)
		return NULL;

	memset(&resp, 0, sizeof(resp));
	ret = ibv_cmd_create_ah(pd, &ah->ibv_ah, attr, &resp.ibv_resp,
				sizeof(resp));
	if (ret) {
		free(ah);
		errno = ret;
		return NULL;
	}
	if (!resp.drv_payload.ah_num) {
		verbs_err(&to_sctx(pd->context)->ibv_ctx,
			  "kernel created an AH without an AH number");
		ibv_cmd_destroy_ah(&ah->ibv_ah);
		free(ah);
		errno = EPROTO;
		return NULL;
	}

	ah->ah_num = resp.drv_payload.ah_num;
	return &ah->ibv_ah;
}

int sib_destroy_ah(struct ibv_ah *ibah)
{
	int ret;

	ret = ibv_cmd_destroy_ah(ibah);
	if (ret)
		return ret;

	free(to_sah(ibah));
	return 0;
}

/* ---------------------------------------------------------------------
 * Shared rings
 */
static bool sib_is_pow2(uint32_t v)
{
	return v && !(v & (v - 1));
}

/*
 * Map the ring a create/resize response describes. A ring of zero size
 * means the kernel made none (ring->buf stays NULL). The geometry is
 * checked before anything is touched: a response that does not describe
 * a well-formed ring big enough for min_slot_size bytes per slot is a
 * kernel/provider ABI mismatch (EPROTO).
 */
int sib_ring_map(struct ibv_context *ibctx, struct sib_ring *ring,
		 const struct sib_ring_info *info, uint32_t min_slot_size)
{
	struct verbs_context *vctx = &to_sctx(ibctx)->ibv_ctx;
	uint64_t need;
	void *buf;

	memset(ring, 0, sizeof(*ring));
	if (!info->mmap_size && !info->nslots)
		return 0;

	need = SIB_RING_HDR_SIZE + (uint64_t)info->nslots * info->slot_size;
	if (!sib_is_pow2(info->nslots) || !sib_is_pow2(info->slot_size) ||
	    info->slot_size < min_slot_size || info->mmap_size < need ||
	    info->mmap_size > SIZE_MAX) {
		verbs_err(vctx,
			  "bad ring from kernel: nslots %u slot_size %u (need >= %u) mmap_size %llu",
			  info->nslots, info->slot_size, min_slot_size,
			  (unsigned long long)info->mmap_size);
		return EPROTO;
	}

	buf = mmap(NULL, info->mmap_size, PROT_READ | PROT_WRITE, MAP_SHARED,
		   ibctx->cmd_fd, info->mmap_offset);
	if (buf == MAP_FAILED)
		return errno;

	ring->buf = buf;
	ring->map_size = info->mmap_size;
	ring->nslots = info->nslots;
	ring->slot_size = info->slot_size;
	return 0;
}

void sib_ring_unmap(struct sib_ring *ring)
{
	if (ring->buf)
		munmap(ring->buf, ring->map_size);
	memset(ring, 0, sizeof(*ring));
}

/* ---------------------------------------------------------------------
 * Context
 */
static void sib_free_context(struct ibv_context *ibctx);

static const struct verbs_context_ops sib_ctx_ops = {
	.alloc_dm = sib_alloc_dm,
	.alloc_mw = sib_alloc_mw,
	.alloc_parent_domain = sib_alloc_parent_domain,
	.alloc_pd = sib_alloc_pd,
	.alloc_td = sib_alloc_td,
	.advise_mr = sib_advise_mr,
	.attach_mcast = ibv_cmd_attach_mcast,
	.bind_mw = sib_bind_mw,
	.close_xrcd = sib_close_xrcd,
	.create_ah = sib_create_ah,
	.create_cq = sib_create_cq,
	.create_cq_ex = sib_create_cq_ex,
	.create_flow = sib_create_flow,
	.create_qp = sib_create_qp,
	.create_qp_ex = sib_create_qp_ex,
	.create_rwq_ind_table = sib_create_rwq_ind_table,
	.create_srq = sib_create_srq,
	.create_srq_ex = sib_create_srq_ex,
	.create_wq = sib_create_wq,
	.dealloc_mw = sib_dealloc_mw,
	.dealloc_pd = sib_dealloc_pd,
	.dealloc_td = sib_dealloc_td,
	.dereg_mr = sib_dereg_mr,
	.destroy_ah = sib_destroy_ah,
	.destroy_cq = sib_destroy_cq,
	.destroy_flow = sib_destroy_flow,
	.destroy_qp = sib_destroy_qp,
	.destroy_rwq_ind_table = sib_destroy_rwq_ind_table,
	.destroy_srq = sib_destroy_srq,
	.destroy_wq = sib_destroy_wq,
	.detach_mcast = ibv_cmd_detach_mcast,
	.free_context = sib_free_context,
	.free_dm = sib_free_dm,
	.get_srq_num = sib_get_srq_num,
	.import_dm = sib_import_dm,
	.import_mr = sib_import_mr,
	.import_pd = sib_import_pd,
	.modify_qp = sib_modify_qp,
	.modify_srq = sib_modify_srq,
	.modify_wq = sib_modify_wq,
	.open_qp = sib_open_qp,
	.open_xrcd = sib_open_xrcd,
	.poll_cq = sib_poll_cq,
	.post_recv = sib_post_recv,
	.post_send = sib_post_send,
	.post_srq_recv = sib_post_srq_recv,
	.query_device_ex = sib_query_device_ex,
	.query_port = sib_query_port,
	.query_qp = sib_query_qp,
	.query_rt_values = sib_query_rt_values,
	.query_srq = sib_query_srq,
	.reg_dm_mr = sib_reg_dm_mr,
	.reg_dmabuf_mr = sib_reg_dmabuf_mr,
	.reg_mr = sib_reg_mr,
	.req_notify_cq = sib_req_notify_cq,
	.rereg_mr = sib_rereg_mr,
	.resize_cq = sib_resize_cq,
	.unimport_dm = sib_unimport_dm,
	.unimport_mr = sib_unimport_mr,
	.unimport_pd = sib_unimport_pd,
};

static void sib_caps_from_env(struct sib_context *ctx);

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
	/* An older kernel ignores the request and leaves db_fd 0. */
	if ((ctx->caps & SIB_UCTX_CAP_DB_FD) && uresp->db_fd >= 0)
		ctx->db_fd = uresp->db_fd;
	sib_caps_from_env(ctx);
	return 0;
}

/* Caps that the environment turns off, for measurements and tests. */
static void sib_caps_from_env(struct sib_context *ctx)
{
	/* For measurements and tests: ring every doorbell. */
	if (getenv("SIB_DOORBELL_ALWAYS"))
		ctx->caps &= ~SIB_UCTX_CAP_SQ_KPOLL;
	/* For tests: behave like a provider without credit updates. */
	if (getenv("SIB_NO_CREDIT_UPDATES"))
		ctx->caps &= ~SIB_UCTX_CAP_RQ_CREDIT;
	/* For measurements and tests: no streaming hints, engines inline. */
	if (getenv("SIB_DOORBELL_NOSTREAM"))
		ctx->caps &= ~SIB_UCTX_CAP_DB_STREAM;
	/* For tests: behave like a provider on a kernel without timestamps. */
	if (getenv("SIB_NO_CQE_TS"))
		ctx->caps &= ~SIB_UCTX_CAP_CQE_TS;
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

	ctx->db_fd = -1;
	memset(&cmd, 0, sizeof(cmd));
	/* For measurements and tests: the uverbs doorbells only. */
	if (!getenv("SIB_DOORBELL_UVERBS"))
		cmd.drv_payload.flags = SIB_UCTX_REQ_DB_FD;
	memset(&resp, 0, sizeof(resp));
	ret = sib_cmd_get_context(&ctx->ibv_ctx, &cmd.ibv_cmd, sizeof(cmd),
				  &resp.ibv_resp, sizeof(resp));
	if (ret)
		goto err_free;

	ret = sib_check_ucontext_resp(ctx, &resp.drv_payload);
	if (ret)
		goto err_free;

	verbs_set_ops(&ctx->ibv_ctx, &sib_ctx_ops);
	return &ctx->ibv_ctx;

err_free:
	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
	verbs_uninit_context(&ctx->ibv_ctx);
	free(ctx);
	errno = ret;
	return NULL;
}

/* The caps of SIB_SYSFS_CAPS, or none (a kernel without the attribute). */
static uint32_t sib_sysfs_caps(struct ibv_device *ibdev)
{
	char buf[32], *end;
	unsigned long caps;
	int len;

	memset(buf, 0, sizeof(buf));
	len = ibv_read_ibdev_sysfs_file(buf, sizeof(buf),
					verbs_get_device(ibdev)->sysfs, "%s",
					SIB_SYSFS_CAPS);
	if (len <= 0 || (size_t)len >= sizeof(buf))
		return 0;
	errno = 0;
	caps = strtoul(buf, &end, 16);
	if (errno || *end || caps > UINT32_MAX)
		return 0;
	return caps;
}

/*
 * ibv_import_device(): a context on another context's command file. The
 * kernel context (and its ABI check) is the exporter's; QUERY_CONTEXT
 * checks that the file is alive. The exporter's doorbell file is not
 * ours, so doorbells go through uverbs, which takes them only from the
 * credentials that opened the file: in another process, posts fail.
 */
static struct verbs_context *sib_import_context(struct ibv_device *ibdev,
						int cmd_fd)
{
	struct sib_context *ctx;
	int ret;

	ctx = verbs_init_and_alloc_context(ibdev, cmd_fd, ctx, ibv_ctx,
					   RDMA_DRIVER_UNKNOWN);
	if (!ctx)
		return NULL;

	ctx->db_fd = -1;
	ret = ibv_cmd_query_context(&ctx->ibv_ctx.context, NULL);
	if (ret) {
		verbs_uninit_context(&ctx->ibv_ctx);
		free(ctx);
		errno = ret;
		return NULL;
	}

	ctx->caps = sib_sysfs_caps(ibdev) &
		    ~(uint32_t)(SIB_UCTX_CAP_DB_FD | SIB_UCTX_CAP_DB_STREAM);
	sib_caps_from_env(ctx);
	verbs_set_ops(&ctx->ibv_ctx, &sib_ctx_ops);
	return &ctx->ibv_ctx;
}

static void sib_free_context(struct ibv_context *ibctx)
{
	struct sib_context *ctx = to_sctx(ibctx);

	if (ctx->db_fd >= 0)
		close(ctx->db_fd);
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
	.import_context = sib_import_context,
};

SIB_PROVIDER_DRIVER(sib, sib_dev_ops);
