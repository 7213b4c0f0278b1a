// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: device, port, context and PD verbs, and the ib_device_ops table.
 */
#include <linux/ethtool.h>
#include <linux/file.h>
#include <linux/rtnetlink.h>
#include <rdma/ib_mad.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include "sib.h"
#include "sib_capture.h"
#include "sib_cq.h"
#include "sib_db.h"
#include "sib_dm.h"
#include "sib_main.h"
#include "sib_mcast.h"
#include "sib_mw.h"
#include "sib_odp.h"
#include "sib_post.h"
#include "sib_qp.h"
#include "sib_res.h"
#include "sib_srq.h"
#include "sib_ud.h"
#include "sib_wq.h"
#include "sib_verbs.h"
#include "sib_xrc.h"

bool sib_port_is_active(struct sib_dev *sdev)
{
	return netif_running(sdev->ndev) && netif_carrier_ok(sdev->ndev);
}

static int sib_query_device(struct ib_device *ib_dev,
			    struct ib_device_attr *attr, struct ib_udata *uhw)
{
	if (uhw && (uhw->inlen || uhw->outlen))
		return -EINVAL;

	memset(attr, 0, sizeof(*attr));
	attr->fw_ver = ((u64)SIB_FW_VER_MAJOR << 32) |
		       ((u64)SIB_FW_VER_MINOR << 16) | SIB_FW_VER_SUB;
	attr->sys_image_guid = ib_dev->node_guid;
	attr->max_mr_size = SIB_MAX_MR_SIZE;
	attr->page_size_cap = PAGE_SIZE;
	attr->vendor_id = SIB_VENDOR_ID;
	attr->vendor_part_id = SIB_VENDOR_PART_ID;
	attr->hw_ver = SIB_HW_VER;
	attr->max_pd = SIB_MAX_PD;
	attr->max_pkeys = SIB_PKEY_TBL_LEN;
	attr->max_qp = SIB_MAX_QP;
	attr->max_qp_wr = SIB_MAX_QP_WR;
	attr->max_send_sge = SIB_MAX_SGE;
	attr->max_recv_sge = SIB_MAX_SGE;
	attr->max_sge_rd = SIB_MAX_SGE;
	attr->max_cq = SIB_MAX_CQ;
	attr->max_cqe = SIB_MAX_CQE;
	attr->max_mr = SIB_MAX_MR;
	attr->max_mw = SIB_MAX_MW;
	attr->max_srq = SIB_MAX_SRQ;
	attr->max_srq_wr = SIB_MAX_SRQ_WR;
	attr->max_srq_sge = SIB_MAX_SRQ_SGE;
	attr->max_qp_rd_atom = SIB_MAX_RD_ATOMIC;
	attr->max_qp_init_rd_atom = SIB_MAX_RD_ATOMIC;
	attr->max_res_rd_atom = SIB_MAX_RD_ATOMIC * SIB_MAX_QP;
	attr->atomic_cap = IB_ATOMIC_HCA;
	attr->max_ah = SIB_MAX_AH;
	attr->max_mcast_grp = SIB_MAX_MCG;
	attr->max_mcast_qp_attach = SIB_MAX_MCG_QP;
	attr->max_total_mcast_qp_attach = SIB_MAX_MCG * SIB_MAX_MCG_QP;
	attr->local_ca_ack_delay = 15;
	attr->device_cap_flags = IB_DEVICE_PORT_ACTIVE_EVENT |
				 IB_DEVICE_SYS_IMAGE_GUID |
				 IB_DEVICE_RC_RNR_NAK_GEN |
				 IB_DEVICE_CURR_QP_STATE_MOD |
				 IB_DEVICE_MEM_WINDOW |
				 IB_DEVICE_MEM_WINDOW_TYPE_2B |
				 IB_DEVICE_MEM_MGT_EXTENSIONS |
				 IB_DEVICE_XRC |
				 IB_DEVICE_MANAGED_FLOW_STEERING |
				 SIB_DEVICE_ATOMIC_WRITE |
				 SIB_DEVICE_FLUSH_GLOBAL;
	/* CQE timestamps are ns of CLOCK_MONOTONIC: a 1 GHz, 64-bit clock. */
	attr->hca_core_clock = SIB_CORE_CLOCK_KHZ;
	attr->timestamp_mask = U64_MAX;
	attr->max_fast_reg_page_list_len = SIB_MAX_FAST_REG_PAGES;
	attr->kernel_cap_flags = IBK_ALLOW_USER_UNREG | IBK_SG_GAPS_REG |
				 IBK_ON_DEMAND_PAGING;
	sib_odp_caps(&attr->odp_caps);
	attr->max_dm_size = SIB_MAX_DM_SIZE;
	/*
	 * Raw packet QPs count among max_qp; no raw_packet_caps (no VLAN
	 * stripping, FCS scatter, checksum or delay drop: sib_raw.c).
	 */
	attr->max_raw_ethy_qp = SIB_MAX_QP;
	sib_wq_caps(attr);
	return 0;
}

/* Map the netdev's link speed to an IB speed and width, without warnings. */
static void sib_query_speed(struct sib_dev *sdev, struct ib_port_attr *attr)
{
	struct ethtool_link_ksettings ks = {};
	u32 mbps = SPEED_UNKNOWN;

	rtnl_lock();
	if (sdev->ndev->reg_state == NETREG_REGISTERED &&
	    !__ethtool_get_link_ksettings(sdev->ndev, &ks))
		mbps = ks.base.speed;
	rtnl_unlock();

	/* A virtual link (lo, dummy) has no speed: call it 4X EDR. */
	if (mbps == SPEED_UNKNOWN || mbps == 0 || mbps > SPEED_50000) {
		attr->active_width = IB_WIDTH_4X;
		attr->active_speed = IB_SPEED_EDR;
	} else if (mbps > SPEED_25000) {
		attr->active_width = IB_WIDTH_2X;
		attr->active_speed = IB_SPEED_EDR;
	} else if (mbps > SPEED_10000) {
		attr->active_width = IB_WIDTH_1X;
		attr->active_speed = IB_SPEED_EDR;
	} else if (mbps > SPEED_1000) {
		attr->active_width = IB_WIDTH_1X;
		attr->active_speed = IB_SPEED_FDR10;
	} else {
		attr->active_width = IB_WIDTH_1X;
		attr->active_speed = IB_SPEED_SDR;
	}
}

enum ib_mtu sib_active_mtu(struct sib_dev *sdev)
{
	int mtu = READ_ONCE(sdev->ndev->mtu) - SIB_ROCE_HDR_ROOM;

	if (mtu >= 4096)
		return IB_MTU_4096;
	if (mtu >= 2048)
		return IB_MTU_2048;
	if (mtu >= 1024)
		return IB_MTU_1024;
	if (mtu >= 512)
		return IB_MTU_512;
	return IB_MTU_256;
}

static int sib_query_port(struct ib_device *ib_dev, u32 port,
			  struct ib_port_attr *attr)
{
	struct sib_dev *sdev = to_sdev(ib_dev);

	/* ib_core zeroes *attr and has checked @port already. */
	if (sib_port_is_active(sdev)) {
		attr->state = IB_PORT_ACTIVE;
		attr->phys_state = IB_PORT_PHYS_STATE_LINK_UP;
	} else {
		attr->state = IB_PORT_DOWN;
		attr->phys_state = (sib_netdev_flags(sdev->ndev) & IFF_UP) ?
				   IB_PORT_PHYS_STATE_POLLING :
				   IB_PORT_PHYS_STATE_DISABLED;
	}
	attr->max_mtu = IB_MTU_4096;
	attr->active_mtu = sib_active_mtu(sdev);
	attr->gid_tbl_len = SIB_GID_TBL_LEN;
	attr->pkey_tbl_len = SIB_PKEY_TBL_LEN;
	attr->max_msg_sz = SIB_MAX_MSG_SZ;
	attr->port_cap_flags = 0;
	attr->bad_pkey_cntr = 0;
	attr->qkey_viol_cntr = 0;
	attr->lid = 0;
	attr->sm_lid = 0;
	attr->lmc = 0;
	attr->max_vl_num = 1;
	attr->sm_sl = 0;
	attr->subnet_timeout = 0;
	attr->init_type_reply = 0;
	sib_query_speed(sdev, attr);
	return 0;
}

static int sib_get_port_immutable(struct ib_device *ib_dev, u32 port,
				  struct ib_port_immutable *immutable)
{
	struct ib_port_attr attr = {};
	int ret;

	ret = ib_query_port(ib_dev, port, &attr);
	if (ret)
		return ret;
	immutable->pkey_tbl_len = attr.pkey_tbl_len;
	immutable->gid_tbl_len = attr.gid_tbl_len;
	immutable->core_cap_flags = RDMA_CORE_PORT_IBA_ROCE_UDP_ENCAP;
	immutable->max_mad_size = IB_MGMT_MAD_SIZE;
	return 0;
}

static enum rdma_link_layer sib_get_link_layer(struct ib_device *ib_dev,
					       u32 port)
{
	return IB_LINK_LAYER_ETHERNET;
}

static struct net_device *sib_get_netdev(struct ib_device *ib_dev, u32 port)
{
	struct net_device *ndev = to_sdev(ib_dev)->ndev;

	dev_hold(ndev);
	return ndev;
}

static int sib_query_pkey(struct ib_device *ib_dev, u32 port, u16 index,
			  u16 *pkey)
{
	if (index >= SIB_PKEY_TBL_LEN)
		return -EINVAL;
	*pkey = IB_DEFAULT_PKEY_FULL;
	return 0;
}

/* The driver request: an older provider sends none. */
static int sib_ucontext_cmd(struct ib_udata *udata,
			    struct sib_alloc_ucontext_cmd *cmd)
{
	int ret;

	memset(cmd, 0, sizeof(*cmd));
	ret = ib_copy_from_udata(cmd, udata,
				 min_t(size_t, udata->inlen, sizeof(*cmd)));
	if (ret)
		return ret;
	if (cmd->flags & ~SIB_UCTX_REQ_DB_FD || cmd->reserved)
		return -EINVAL;
	return 0;
}

static int sib_alloc_ucontext(struct ib_ucontext *ib_uc,
			      struct ib_udata *udata)
{
	struct sib_ucontext *uctx = to_suctx(ib_uc);
	struct sib_alloc_ucontext_resp resp = {
		.abi_version = SIB_UVERBS_ABI_VERSION,
		.caps = SIB_UCTX_CAPS,
		.db_fd = -1,
	};
	struct sib_alloc_ucontext_cmd cmd;
	struct file *file = NULL;
	int ret;

	ret = sib_ucontext_cmd(udata, &cmd);
	if (ret)
		return ret;
	if (!udata->outlen)
		return 0;
	if (cmd.flags & SIB_UCTX_REQ_DB_FD) {
		resp.db_fd = get_unused_fd_flags(O_CLOEXEC);
		if (resp.db_fd < 0)
			return resp.db_fd;
		ret = sib_db_open(uctx, &file);
		if (ret)
			goto err_fd;
	}
	ret = ib_copy_to_udata(udata, &resp,
			       min_t(size_t, udata->outlen, sizeof(resp)));
	if (ret)
		goto err_file;
	/* Nothing fails after this: the process may use the file at once. */
	if (file)
		fd_install(resp.db_fd, file);
	return 0;

err_file:
	if (file) {
		fput(file);
		sib_db_close(uctx);
	}
err_fd:
	if (resp.db_fd >= 0)
		put_unused_fd(resp.db_fd);
	return ret;
}

/*
 * UVERBS_METHOD_QUERY_CONTEXT, which ibv_import_device() issues: ib_core
 * answers it; sib adds nothing (the caps are in sysfs, SIB_SYSFS_CAPS).
 */
static int sib_query_ucontext(struct ib_ucontext *ib_uc,
			      struct uverbs_attr_bundle *attrs)
{
	return 0;
}

static void sib_dealloc_ucontext(struct ib_ucontext *ib_uc)
{
	sib_db_close(to_suctx(ib_uc));
}

/*
 * Called when the device goes away while processes still hold contexts.
 * ib_core destroys their objects and zaps their mappings itself; sib keeps
 * no per-context hardware state, so there is nothing left to do here.
 * Having the op lets a device go away without waiting for those
 * processes to exit. The module waits for them to close their doorbell
 * files (sib_db.c), whose code it holds: until then rmmod says it is in
 * use.
 */
static void sib_disassociate_ucontext(struct ib_ucontext *ib_uc)
{
}

static int sib_alloc_pd(struct ib_pd *ib_pd, struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_pd->device);
	struct sib_pd *pd = to_spd(ib_pd);
	struct sib_alloc_pd_resp resp = {};
	int id, ret;

	if (atomic_inc_return(&sdev->num_pd) > SIB_MAX_PD) {
		ret = -ENOMEM;
		goto err_count;
	}
	id = ida_alloc_max(&sdev->pd_ida, SIB_MAX_PD - 1, GFP_KERNEL);
	if (id < 0) {
		ret = id;
		goto err_count;
	}
	pd->pdn = id;

	if (udata && udata->outlen) {
		resp.pdn = pd->pdn;
		ret = ib_copy_to_udata(udata, &resp,
				       min_t(size_t, udata->outlen,
					     sizeof(resp)));
		if (ret)
			goto err_ida;
	}
	return 0;

err_ida:
	ida_free(&sdev->pd_ida, pd->pdn);
err_count:
	atomic_dec(&sdev->num_pd);
	return ret;
}

/*
 * IBA's Deallocate Protection Domain fails while objects are on the PD.
 * uverbs refuses that before it gets here; a kernel consumer that does it
 * gets EBUSY (and ib_dealloc_pd()'s warning) and keeps the PD, instead of
 * MRs and QPs that point at freed memory.
 */
static int sib_dealloc_pd(struct ib_pd *ib_pd, struct ib_udata *udata)
{
	struct sib_dev *sdev = to_sdev(ib_pd->device);

	if (atomic_read(&ib_pd->usecnt))
		return -EBUSY;
	ida_free(&sdev->pd_ida, to_spd(ib_pd)->pdn);
	atomic_dec(&sdev->num_pd);
	return 0;
}

static void sib_get_dev_fw_str(struct ib_device *ib_dev, char *str)
{
	snprintf(str, IB_FW_VERSION_NAME_MAX, "%d.%d.%d", SIB_FW_VER_MAJOR,
		 SIB_FW_VER_MINOR, SIB_FW_VER_SUB);
}

/* The attribute libsib matches devices by: "sib <abi>\n". */
static ssize_t sib_abi_show(struct device *device,
			    struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, SIB_SYSFS_MAGIC " %d\n",
			  SIB_UVERBS_ABI_VERSION);
}
static DEVICE_ATTR_RO(sib_abi);

/* What alloc_ucontext reports in caps, for imported contexts. */
static ssize_t sib_caps_show(struct device *device,
			     struct device_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "0x%x\n", SIB_UCTX_CAPS);
}
static DEVICE_ATTR_RO(sib_caps);

static ssize_t netdev_show(struct device *device,
			   struct device_attribute *attr, char *buf)
{
	struct sib_dev *sdev = rdma_device_to_drv_device(device, struct sib_dev,
							 ib_dev);

	return sysfs_emit(buf, "%s\n", netdev_name(sdev->ndev));
}
static DEVICE_ATTR_RO(netdev);

/* End-to-end credits on (1, the default) or off (0): see status.md. */
static ssize_t credits_show(struct device *device,
			    struct device_attribute *attr, char *buf)
{
	struct sib_dev *sdev = rdma_device_to_drv_device(device, struct sib_dev,
							 ib_dev);

	return sysfs_emit(buf, "%d\n", READ_ONCE(sdev->credits));
}

static ssize_t credits_store(struct device *device,
			     struct device_attribute *attr, const char *buf,
			     size_t count)
{
	struct sib_dev *sdev = rdma_device_to_drv_device(device, struct sib_dev,
							 ib_dev);
	bool on;
	int ret;

	ret = kstrtobool(buf, &on);
	if (ret)
		return ret;
	WRITE_ONCE(sdev->credits, on);
	return count;
}
static DEVICE_ATTR_RW(credits);

static struct attribute *sib_dev_attrs[] = {
	&dev_attr_sib_abi.attr,
	&dev_attr_sib_caps.attr,
	&dev_attr_netdev.attr,
	&dev_attr_credits.attr,
	&dev_attr_capture.attr,
	NULL,
};

static const struct rdma_stat_desc sib_counter_descs[] = {
	[SIB_CNT_CREDIT_STALLS].name = "credit_stalls",
	[SIB_CNT_RNR_NAK_SENT].name = "rnr_nak_sent",
	[SIB_CNT_RNR_NAK_RCVD].name = "rnr_nak_rcvd",
	[SIB_CNT_SEQ_NAK_SENT].name = "seq_nak_sent",
	[SIB_CNT_RETRANS].name = "retransmits",
	[SIB_CNT_TIMEOUTS].name = "ack_timeouts",
	[SIB_CNT_DUP_REQ].name = "duplicate_requests",
	[SIB_CNT_QKEY_VIOL].name = "qkey_violations",
	[SIB_CNT_SENT_PKTS].name = "sent_pkts",
	[SIB_CNT_RCVD_PKTS].name = "rcvd_pkts",
	[SIB_CNT_SEND_ERRORS].name = "send_errors",
	[SIB_CNT_ICRC_ERRORS].name = "icrc_errors",
	[SIB_CNT_HDR_ERRORS].name = "hdr_errors",
	[SIB_CNT_UNKNOWN_QPN].name = "unknown_qpn",
	[SIB_CNT_RX_QUEUE_FULL].name = "rx_queue_full",
	[SIB_CNT_ONECOPY_PKTS].name = "onecopy_pkts",
	[SIB_CNT_DOORBELLS].name = "doorbells",
	[SIB_CNT_NAK_IN_RETRY].name = "naks_during_retry",
	[SIB_CNT_WIRE_FRAG_PKTS].name = "wire_frag_pkts",
	[SIB_CNT_ACKS_COALESCED].name = "acks_coalesced",
	[SIB_CNT_CREDIT_UPD_SENT].name = "credit_updates_sent",
	[SIB_CNT_CREDIT_UPD_RCVD].name = "credit_updates_rcvd",
	[SIB_CNT_CREDIT_PROBES].name = "credit_probes",
	[SIB_CNT_LOCAL_BURSTS].name = "local_bursts",
	[SIB_CNT_WIRE_TX_BATCHED].name = "wire_tx_batched",
	[SIB_CNT_ASYNC_DOORBELLS].name = "async_doorbells",
	[SIB_CNT_ASYNC_LATE].name = "async_late",
	[SIB_CNT_LOCAL_ACKS].name = "local_acks",
	[SIB_CNT_UC_DROPPED].name = "uc_dropped_msgs",
	[SIB_CNT_WIRE_TX_HELD].name = "wire_tx_held",
	[SIB_CNT_READ_RESTARTS].name = "read_restarts",
	[SIB_CNT_ODP_FAULT_PAGES].name = "odp_fault_pages",
	[SIB_CNT_ODP_FAULT_ERRORS].name = "odp_fault_errors",
	[SIB_CNT_ODP_INVALIDATIONS].name = "odp_invalidations",
	[SIB_CNT_ODP_RNR_NAK_SENT].name = "odp_rnr_nak_sent",
	[SIB_CNT_ODP_REQ_WAITS].name = "odp_req_waits",
	[SIB_CNT_DMABUF_REVOCATIONS].name = "dmabuf_revocations",
};

static struct rdma_hw_stats *sib_alloc_hw_port_stats(struct ib_device *ib_dev,
						     u32 port)
{
	BUILD_BUG_ON(ARRAY_SIZE(sib_counter_descs) != SIB_NUM_CNT);
	return rdma_alloc_hw_stats_struct(sib_counter_descs, SIB_NUM_CNT,
					  RDMA_HW_STATS_DEFAULT_LIFESPAN);
}

static int sib_get_hw_stats(struct ib_device *ib_dev,
			    struct rdma_hw_stats *stats, u32 port, int index)
{
	struct sib_dev *sdev = to_sdev(ib_dev);
	int i;

	for (i = 0; i < SIB_NUM_CNT; i++)
		stats->value[i] = atomic64_read(&sdev->cnt[i]);
	return SIB_NUM_CNT;
}

static const struct attribute_group sib_dev_attr_group = {
	.attrs = sib_dev_attrs,
};

const struct ib_device_ops sib_dev_ops = {
	.owner = THIS_MODULE,
	.driver_id = RDMA_DRIVER_UNKNOWN,
	.uverbs_abi_ver = SIB_UVERBS_ABI_VERSION,
	.device_group = &sib_dev_attr_group,

	.alloc_hw_port_stats = sib_alloc_hw_port_stats,
	.alloc_pd = sib_alloc_pd,
	.alloc_xrcd = sib_alloc_xrcd,
	.attach_mcast = sib_attach_mcast,
	.create_ah = sib_create_ah,
	.create_user_ah = sib_create_ah,
	.create_cq = sib_create_cq,
	.create_flow = sib_create_flow,
	.create_qp = sib_create_qp,
	.create_rwq_ind_table = sib_create_rwq_ind_table,
	.create_srq = sib_create_srq,
	.create_wq = sib_create_wq,
	.destroy_ah = sib_destroy_ah,
	.destroy_cq = sib_destroy_cq,
	.destroy_flow = sib_destroy_flow,
	.destroy_qp = sib_destroy_qp,
	.destroy_rwq_ind_table = sib_destroy_rwq_ind_table,
	.destroy_srq = sib_destroy_srq,
	.destroy_wq = sib_destroy_wq,
	.detach_mcast = sib_detach_mcast,
	.fill_res_cq_entry = sib_fill_res_cq_entry,
	.fill_res_qp_entry = sib_fill_res_qp_entry,
	.mmap = sib_mmap,
	.mmap_free = sib_mmap_free,
	.modify_qp = sib_modify_qp,
	.modify_wq = sib_modify_wq,
	.modify_srq = sib_modify_srq,
	.poll_cq = sib_poll_cq,
	.post_recv = sib_post_recv,
	.post_send = sib_post_send,
	.post_srq_recv = sib_post_srq_recv,
	.query_ah = sib_query_ah,
	.query_qp = sib_query_qp,
	.query_srq = sib_query_srq,
	.req_notify_cq = sib_req_notify_cq,
	.SIB_RESIZE_CQ_OP = sib_resize_cq,
	.alloc_ucontext = sib_alloc_ucontext,
	.dealloc_driver = sib_dealloc_driver,
	.dealloc_pd = sib_dealloc_pd,
	.dealloc_xrcd = sib_dealloc_xrcd,
	.dealloc_ucontext = sib_dealloc_ucontext,
	.disassociate_ucontext = sib_disassociate_ucontext,
	.get_dev_fw_str = sib_get_dev_fw_str,
	.get_hw_stats = sib_get_hw_stats,
	.get_link_layer = sib_get_link_layer,
	.get_netdev = sib_get_netdev,
	.get_port_immutable = sib_get_port_immutable,
	.query_device = sib_query_device,
	.query_pkey = sib_query_pkey,
	.query_port = sib_query_port,
	.query_ucontext = sib_query_ucontext,
	SIB_MR_DEV_OPS
	.advise_mr = sib_odp_advise_mr,
	SIB_MW_DEV_OPS
	SIB_DM_DEV_OPS

	INIT_RDMA_OBJ_SIZE(ib_ah, sib_ah, ib_ah),
	INIT_RDMA_OBJ_SIZE(ib_cq, sib_cq, ib_cq),
	INIT_RDMA_OBJ_SIZE(ib_pd, sib_pd, ib_pd),
	INIT_RDMA_OBJ_SIZE(ib_qp, sib_qp, ib_qp),
	INIT_RDMA_OBJ_SIZE(ib_rwq_ind_table, sib_ind_table, ib_tbl),
	INIT_RDMA_OBJ_SIZE(ib_srq, sib_srq, ib_srq),
	INIT_RDMA_OBJ_SIZE(ib_ucontext, sib_ucontext, ib_uc),
	INIT_RDMA_OBJ_SIZE(ib_xrcd, sib_xrcd, ib_xrcd),
};
