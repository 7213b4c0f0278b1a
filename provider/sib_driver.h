/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib_driver.h: libibverbs' private provider interface, private ABI 34
 * or 65.
 *
 * Distributions do not ship rdma-core's internal driver.h / kern-abi.h, so
 * this header restates the part of that interface sib uses, written from
 * the documented layouts (see /work/shared/docs/provider-abi.md).
 *
 * SIB_IBVERBS_PABI_VERSION (given by provider/Makefile, which reads it
 * from the libibverbs it builds against) picks one of two layouts:
 *
 *   34  rdma-core v44 (Debian 12) and v56 (Debian 13). v37.0 .. v56.x
 *       all export IBVERBS_PRIVATE_34 with the same driver.h structures,
 *       but the public struct ibv_qp_ex inside struct verbs_qp has 20
 *       operations before v44, 21 in v44 (wr_atomic_write) and 22 from
 *       v45 (wr_flush): the verbs_qp checks below follow
 *       SIB_HAVE_WR_FLUSH (the Makefile's verbs.h probe), so v44 and
 *       v45..v56 pass them and v37..v43 do not. v34.x, v35.x and v36.x
 *       share the PABI number but differ in layout or lack __verbs_log;
 *       the Makefile refuses to build against them.
 *   65  rdma-core v65.x (since v57 every release has a PABI of its own).
 *       Against 34: 17 more context operations (DMA handles, buffers,
 *       completion counters, reg_mr_ex, query_port_speed,
 *       dm_export_dmabuf_fd), six more members at the head of the public
 *       struct verbs_context, and one more argument to
 *       ibv_cmd_get_context() (file descriptors), ibv_cmd_create_cq_ex()
 *       (a provider-supplied CQ buffer) and ibv_cmd_create_qp_ex2() (driver
 *       attributes), NULL for sib: see sib_cmd_*() below.
 *
 * Every size and offset the library depends on is pinned by a
 * _Static_assert below, so a wrong layout fails to compile instead of
 * corrupting memory at run time.
 *
 * Only x86_64 (LP64) layouts are asserted.
 */
#ifndef SIB_DRIVER_H
#define SIB_DRIVER_H

#include <errno.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>

#include <infiniband/verbs.h>
#include <rdma/ib_user_verbs.h>
#include <rdma/ib_user_ioctl_verbs.h>
#include <rdma/ib_user_ioctl_cmds.h>
#include <rdma/rdma_user_ioctl.h>

#ifndef SIB_IBVERBS_PABI_VERSION
#error "SIB_IBVERBS_PABI_VERSION is not set: build through provider/Makefile"
#endif
#if SIB_IBVERBS_PABI_VERSION == 65
#define SIB_PABI65 1
#elif SIB_IBVERBS_PABI_VERSION == 34
#define SIB_PABI65 0
#else
#error "sib_driver.h knows libibverbs' private ABI 34 and 65 only"
#endif

#define sib_static_size(type, size)                                            \
	_Static_assert(sizeof(type) == (size), "sizeof(" #type ") != " #size)
#define sib_static_offset(type, member, off)                                   \
	_Static_assert(offsetof(type, member) == (off),                        \
		       "offsetof(" #type ", " #member ") != " #off)

#ifndef container_of
#define container_of(ptr, type, member)                                        \
	((type *)((uint8_t *)(ptr) - offsetof(type, member)))
#endif

/* ccan/list.h node, as embedded in the library's structures. */
struct list_node {
	struct list_node *next;
	struct list_node *prev;
};

/* ---------------------------------------------------------------------
 * Device matching
 */
enum {
	VERBS_MATCH_SENTINEL = 0,
	VERBS_MATCH_PCI = 1,
	VERBS_MATCH_MODALIAS = 2,
	VERBS_MATCH_DRIVER_ID = 3,
};

struct verbs_match_ent {
	void *driver_data;
	union {
		const char *modalias;
		uint64_t driver_id;
	} u;
	uint16_t vendor;
	uint16_t device;
	uint8_t kind;
};

enum {
	VSYSFS_READ_MODALIAS = 1 << 0,
	VSYSFS_READ_NODE_GUID = 1 << 1,
};

/* One uverbs device found by the library (netlink or sysfs). */
struct verbs_sysfs_dev {
	struct list_node entry;
	void *provider_data;
	const struct verbs_match_ent *match;
	unsigned int flags;
	char sysfs_name[IBV_SYSFS_NAME_MAX];
	dev_t sysfs_cdev;
	char ibdev_name[IBV_SYSFS_NAME_MAX];
	char ibdev_path[IBV_SYSFS_PATH_MAX];
	char modalias[512];
	uint64_t node_guid;
	uint32_t driver_id;
	enum ibv_node_type node_type;
	int ibdev_idx;
	uint32_t num_ports;
	uint32_t abi_ver;
	struct timespec time_created;
};

struct verbs_device;

struct verbs_device_ops {
	const char *name;

	uint32_t match_min_abi_version;
	uint32_t match_max_abi_version;
	const struct verbs_match_ent *match_table;
	const struct verbs_device_ops **static_providers;

	bool (*match_device)(struct verbs_sysfs_dev *sysfs_dev);

	struct verbs_context *(*alloc_context)(struct ibv_device *device,
					       int cmd_fd, void *private_data);
	struct verbs_context *(*import_context)(struct ibv_device *device,
						int cmd_fd);

	struct verbs_device *(*alloc_device)(struct verbs_sysfs_dev *sysfs_dev);
	void (*uninit_device)(struct verbs_device *device);
};

struct verbs_device {
	struct ibv_device device;	/* must be first */
	const struct verbs_device_ops *ops;
	atomic_int refcount;
	struct list_node entry;
	struct verbs_sysfs_dev *sysfs;
	uint64_t core_support;
};

static inline struct verbs_device *verbs_get_device(const struct ibv_device *dev)
{
	return container_of(dev, struct verbs_device, device);
}

/* ---------------------------------------------------------------------
 * Objects the library and providers share
 */
struct verbs_xrcd {
	struct ibv_xrcd xrcd;
	uint32_t comp_mask;
	uint32_t handle;
};

enum {
	VERBS_QP_XRCD = 1 << 0,
	VERBS_QP_EX = 1 << 1,
};

struct verbs_qp {
	union {
		struct ibv_qp qp;
		struct ibv_qp_ex qp_ex;
	};
	uint32_t comp_mask;
	struct verbs_xrcd *xrcd;
};

struct verbs_cq {
	union {
		struct ibv_cq cq;
		struct ibv_cq_ex cq_ex;
	};
};

enum ibv_mr_type {
	IBV_MR_TYPE_MR,
	IBV_MR_TYPE_NULL_MR,
	IBV_MR_TYPE_IMPORTED_MR,
	IBV_MR_TYPE_DMABUF_MR,
};

struct verbs_mr {
	struct ibv_mr ibv_mr;
	enum ibv_mr_type mr_type;
	int access;
};

static inline struct verbs_mr *verbs_get_mr(struct ibv_mr *mr)
{
	return container_of(mr, struct verbs_mr, ibv_mr);
}

struct verbs_dm {
	struct ibv_dm dm;
	uint32_t handle;
};

struct verbs_srq {
	struct ibv_srq srq;
	enum ibv_srq_type srq_type;
	struct verbs_xrcd *xrcd;
	struct ibv_cq *cq;
	uint32_t srq_num;
};

/* ---------------------------------------------------------------------
 * Context operations. 76 members (PABI 34) or 93 (PABI 65), alphabetical;
 * the library copies them one by one in verbs_set_ops(), so the order is
 * ABI. NULL members keep the library's stubs, which fail with EOPNOTSUPP.
 */
struct verbs_context_ops {
	int (*advise_mr)(struct ibv_pd *pd, enum ibv_advise_mr_advice advice,
			 uint32_t flags, struct ibv_sge *sg_list,
			 uint32_t num_sges);
#if SIB_PABI65
	void *(*alloc_buf)(struct ibv_pd *pd, size_t size, struct ibv_buf **buf);
#endif
	struct ibv_dm *(*alloc_dm)(struct ibv_context *context,
				   struct ibv_alloc_dm_attr *attr);
#if SIB_PABI65
	struct ibv_dmah *(*alloc_dmah)(struct ibv_context *context,
				       struct ibv_dmah_init_attr *attr);
#endif
	struct ibv_mw *(*alloc_mw)(struct ibv_pd *pd, enum ibv_mw_type type);
	struct ibv_mr *(*alloc_null_mr)(struct ibv_pd *pd);
	struct ibv_pd *(*alloc_parent_domain)(
		struct ibv_context *context,
		struct ibv_parent_domain_init_attr *attr);
	struct ibv_pd *(*alloc_pd)(struct ibv_context *context);
	struct ibv_td *(*alloc_td)(struct ibv_context *context,
				   struct ibv_td_init_attr *init_attr);
	void (*async_event)(struct ibv_context *context,
			    struct ibv_async_event *event);
	int (*attach_counters_point_flow)(struct ibv_counters *counters,
					  struct ibv_counter_attach_attr *attr,
					  struct ibv_flow *flow);
	int (*attach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
	int (*bind_mw)(struct ibv_qp *qp, struct ibv_mw *mw,
		       struct ibv_mw_bind *mw_bind);
	int (*close_xrcd)(struct ibv_xrcd *xrcd);
	void (*cq_event)(struct ibv_cq *cq);
	struct ibv_ah *(*create_ah)(struct ibv_pd *pd, struct ibv_ah_attr *attr);
#if SIB_PABI65
	struct ibv_comp_cntr *(*create_comp_cntr)(
		struct ibv_context *context,
		struct ibv_comp_cntr_init_attr *attr);
#endif
	struct ibv_counters *(*create_counters)(
		struct ibv_context *context,
		struct ibv_counters_init_attr *init_attr);
	struct ibv_cq *(*create_cq)(struct ibv_context *context, int cqe,
				    struct ibv_comp_channel *channel,
				    int comp_vector);
	struct ibv_cq_ex *(*create_cq_ex)(struct ibv_context *context,
					  struct ibv_cq_init_attr_ex *init_attr);
	struct ibv_flow *(*create_flow)(struct ibv_qp *qp,
					struct ibv_flow_attr *flow_attr);
	struct ibv_flow_action *(*create_flow_action_esp)(
		struct ibv_context *context,
		struct ibv_flow_action_esp_attr *attr);
	struct ibv_qp *(*create_qp)(struct ibv_pd *pd,
				    struct ibv_qp_init_attr *attr);
	struct ibv_qp *(*create_qp_ex)(struct ibv_context *context,
				       struct ibv_qp_init_attr_ex *attr);
	struct ibv_rwq_ind_table *(*create_rwq_ind_table)(
		struct ibv_context *context,
		struct ibv_rwq_ind_table_init_attr *init_attr);
	struct ibv_srq *(*create_srq)(struct ibv_pd *pd,
				      struct ibv_srq_init_attr *attr);
	struct ibv_srq *(*create_srq_ex)(struct ibv_context *context,
					 struct ibv_srq_init_attr_ex *attr);
	struct ibv_wq *(*create_wq)(struct ibv_context *context,
				    struct ibv_wq_init_attr *attr);
#if SIB_PABI65
	int (*dealloc_dmah)(struct ibv_dmah *dmah);
#endif
	int (*dealloc_mw)(struct ibv_mw *mw);
	int (*dealloc_pd)(struct ibv_pd *pd);
	int (*dealloc_td)(struct ibv_td *td);
	int (*dereg_mr)(struct verbs_mr *vmr);
	int (*destroy_ah)(struct ibv_ah *ah);
#if SIB_PABI65
	int (*destroy_comp_cntr)(struct ibv_comp_cntr *comp_cntr);
#endif
	int (*destroy_counters)(struct ibv_counters *counters);
	int (*destroy_cq)(struct ibv_cq *cq);
	int (*destroy_flow)(struct ibv_flow *flow);
	int (*destroy_flow_action)(struct ibv_flow_action *action);
	int (*destroy_qp)(struct ibv_qp *qp);
	int (*destroy_rwq_ind_table)(struct ibv_rwq_ind_table *rwq_ind_table);
	int (*destroy_srq)(struct ibv_srq *srq);
	int (*destroy_wq)(struct ibv_wq *wq);
	int (*detach_mcast)(struct ibv_qp *qp, const union ibv_gid *gid,
			    uint16_t lid);
#if SIB_PABI65
	int (*dm_export_dmabuf_fd)(struct ibv_dm *dm);
	void (*free_buf)(struct ibv_buf *buf);
#endif
	void (*free_context)(struct ibv_context *context);
	int (*free_dm)(struct ibv_dm *dm);
	int (*get_srq_num)(struct ibv_srq *srq, uint32_t *srq_num);
	struct ibv_dm *(*import_dm)(struct ibv_context *context,
				    uint32_t dm_handle);
	struct ibv_mr *(*import_mr)(struct ibv_pd *pd, uint32_t mr_handle);
	struct ibv_pd *(*import_pd)(struct ibv_context *context,
				    uint32_t pd_handle);
#if SIB_PABI65
	int (*inc_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t amount);
	int (*inc_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t amount);
#endif
	int (*modify_cq)(struct ibv_cq *cq, struct ibv_modify_cq_attr *attr);
	int (*modify_flow_action_esp)(struct ibv_flow_action *action,
				      struct ibv_flow_action_esp_attr *attr);
	int (*modify_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask);
	int (*modify_qp_rate_limit)(struct ibv_qp *qp,
				    struct ibv_qp_rate_limit_attr *attr);
	int (*modify_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
			  int srq_attr_mask);
	int (*modify_wq)(struct ibv_wq *wq, struct ibv_wq_attr *wq_attr);
	struct ibv_qp *(*open_qp)(struct ibv_context *context,
				  struct ibv_qp_open_attr *attr);
	struct ibv_xrcd *(*open_xrcd)(struct ibv_context *context,
				      struct ibv_xrcd_init_attr *attr);
	int (*poll_cq)(struct ibv_cq *cq, int num_entries, struct ibv_wc *wc);
	int (*post_recv)(struct ibv_qp *qp, struct ibv_recv_wr *wr,
			 struct ibv_recv_wr **bad_wr);
	int (*post_send)(struct ibv_qp *qp, struct ibv_send_wr *wr,
			 struct ibv_send_wr **bad_wr);
	int (*post_srq_ops)(struct ibv_srq *srq, struct ibv_ops_wr *op,
			    struct ibv_ops_wr **bad_op);
	int (*post_srq_recv)(struct ibv_srq *srq, struct ibv_recv_wr *recv_wr,
			     struct ibv_recv_wr **bad_recv_wr);
#if SIB_PABI65
	int (*qp_attach_comp_cntr)(struct ibv_qp *qp,
				   struct ibv_comp_cntr *comp_cntr,
				   struct ibv_qp_attach_comp_cntr_attr *attr);
	int (*query_comp_cntr_caps)(struct ibv_context *context,
				    struct ibv_comp_cntr_caps *caps,
				    size_t caps_size);
#endif
	int (*query_device_ex)(struct ibv_context *context,
			       const struct ibv_query_device_ex_input *input,
			       struct ibv_device_attr_ex *attr,
			       size_t attr_size);
	int (*query_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
	int (*query_port)(struct ibv_context *context, uint8_t port_num,
			  struct ibv_port_attr *port_attr);
#if SIB_PABI65
	int (*query_port_speed)(struct ibv_context *context, uint32_t port_num,
				uint64_t *speed);
#endif
	int (*query_qp)(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			int attr_mask, struct ibv_qp_init_attr *init_attr);
	int (*query_qp_data_in_order)(struct ibv_qp *qp, enum ibv_wr_opcode op,
				      uint32_t flags);
	int (*query_rt_values)(struct ibv_context *context,
			       struct ibv_values_ex *values);
	int (*query_srq)(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr);
#if SIB_PABI65
	int (*read_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t *value);
#endif
	int (*read_counters)(struct ibv_counters *counters,
			     uint64_t *counters_value, uint32_t ncounters,
			     uint32_t flags);
#if SIB_PABI65
	int (*read_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				  uint64_t *value);
#endif
	struct ibv_mr *(*reg_dm_mr)(struct ibv_pd *pd, struct ibv_dm *dm,
				    uint64_t dm_offset, size_t length,
				    unsigned int access);
	struct ibv_mr *(*reg_dmabuf_mr)(struct ibv_pd *pd, uint64_t offset,
					size_t length, uint64_t iova, int fd,
					int access);
	struct ibv_mr *(*reg_mr)(struct ibv_pd *pd, void *addr, size_t length,
				 uint64_t hca_va, int access);
#if SIB_PABI65
	struct ibv_mr *(*reg_mr_ex)(struct ibv_pd *pd,
				    struct ibv_mr_init_attr *mr_init_attr);
#endif
	int (*req_notify_cq)(struct ibv_cq *cq, int solicited_only);
	int (*rereg_mr)(struct verbs_mr *vmr, int flags, struct ibv_pd *pd,
			void *addr, size_t length, int access);
	int (*resize_cq)(struct ibv_cq *cq, int cqe);
#if SIB_PABI65
	int (*set_comp_cntr)(struct ibv_comp_cntr *comp_cntr, uint64_t value);
#endif
	int (*set_ece)(struct ibv_qp *qp, struct ibv_ece *ece);
#if SIB_PABI65
	int (*set_err_comp_cntr)(struct ibv_comp_cntr *comp_cntr,
				 uint64_t value);
#endif
	void (*unimport_dm)(struct ibv_dm *dm);
	void (*unimport_mr)(struct ibv_mr *mr);
	void (*unimport_pd)(struct ibv_pd *pd);
};

/* ---------------------------------------------------------------------
 * Command buffers for the write()-compatible ibv_cmd_* calls.
 *
 * A core command is the 8-byte uverbs header followed by the kernel's
 * request struct; extended commands use the 24-byte extended header. The
 * library fills header and core fields itself; the provider only owns the
 * driver payload that SIB_DECLARE_DRV_CMD appends.
 */
struct ex_hdr {
	struct ib_uverbs_cmd_hdr hdr;
	struct ib_uverbs_ex_cmd_hdr ex_hdr;
};

#define SIB_DECLARE_CMD(name, kabi)                                            \
	struct name {                                                          \
		struct ib_uverbs_cmd_hdr hdr;                                  \
		struct kabi core_payload;                                      \
	};                                                                     \
	sib_static_size(struct name,                                           \
			sizeof(struct ib_uverbs_cmd_hdr) + sizeof(struct kabi))

#define SIB_DECLARE_CMD_EX(name, kabi)                                         \
	struct name {                                                          \
		struct ex_hdr hdr;                                             \
		struct kabi core_payload;                                      \
	};                                                                     \
	sib_static_size(struct name,                                           \
			sizeof(struct ex_hdr) + sizeof(struct kabi));          \
	_Static_assert(sizeof(struct name) % 8 == 0, #name " not u64 sized")

SIB_DECLARE_CMD(ibv_get_context, ib_uverbs_get_context);
SIB_DECLARE_CMD(ibv_query_port, ib_uverbs_query_port);
SIB_DECLARE_CMD(ibv_alloc_pd, ib_uverbs_alloc_pd);
SIB_DECLARE_CMD(ibv_reg_mr, ib_uverbs_reg_mr);
SIB_DECLARE_CMD(ibv_rereg_mr, ib_uverbs_rereg_mr);
SIB_DECLARE_CMD(ibv_alloc_mw, ib_uverbs_alloc_mw);
SIB_DECLARE_CMD(ibv_create_cq, ib_uverbs_create_cq);
SIB_DECLARE_CMD_EX(ibv_create_cq_ex, ib_uverbs_ex_create_cq);
SIB_DECLARE_CMD(ibv_resize_cq, ib_uverbs_resize_cq);
SIB_DECLARE_CMD(ibv_create_srq, ib_uverbs_create_srq);
SIB_DECLARE_CMD(ibv_create_xsrq, ib_uverbs_create_xsrq);
SIB_DECLARE_CMD(ibv_open_xrcd, ib_uverbs_open_xrcd);
SIB_DECLARE_CMD(ibv_open_qp, ib_uverbs_open_qp);
SIB_DECLARE_CMD(ibv_modify_srq, ib_uverbs_modify_srq);
SIB_DECLARE_CMD(ibv_query_srq, ib_uverbs_query_srq);
SIB_DECLARE_CMD(ibv_create_qp, ib_uverbs_create_qp);
SIB_DECLARE_CMD_EX(ibv_create_qp_ex, ib_uverbs_ex_create_qp);
SIB_DECLARE_CMD(ibv_query_qp, ib_uverbs_query_qp);
SIB_DECLARE_CMD(ibv_modify_qp, ib_uverbs_modify_qp);
SIB_DECLARE_CMD_EX(ibv_modify_qp_ex, ib_uverbs_ex_modify_qp);
SIB_DECLARE_CMD(ibv_post_send, ib_uverbs_post_send);
SIB_DECLARE_CMD_EX(ibv_create_wq, ib_uverbs_ex_create_wq);
SIB_DECLARE_CMD_EX(ibv_modify_wq, ib_uverbs_ex_modify_wq);

/* Placeholder for a command or response side without driver data. */
struct sib_empty {
};

/*
 * SIB_DECLARE_DRV_CMD(name, core_cmd, drv_req, core_resp, drv_resp)
 * defines struct name = { struct core_cmd ibv_cmd; struct drv_req
 * drv_payload; } and struct name##_resp = { struct core_resp ibv_resp;
 * struct drv_resp drv_payload; }. Pass sib_empty for a side without
 * driver data. The asserts reject hidden padding between the core and
 * driver parts (the kernel would read it as driver data) and sizes that
 * are not whole 32-bit words.
 *
 * Use: ibv_cmd_xxx(..., &cmd.ibv_cmd, sizeof(cmd),
 *		    &resp.ibv_resp, sizeof(resp));
 */
#define SIB_DECLARE_DRV_CMD(name, core_cmd, drv_req, core_resp, drv_resp)     \
	struct name {                                                          \
		struct core_cmd ibv_cmd;                                       \
		struct drv_req drv_payload;                                    \
	};                                                                     \
	struct name##_resp {                                                   \
		struct core_resp ibv_resp;                                     \
		struct drv_resp drv_payload;                                   \
	};                                                                     \
	sib_static_size(struct name,                                           \
			sizeof(struct core_cmd) + sizeof(struct drv_req));     \
	sib_static_size(struct name##_resp,                                    \
			sizeof(struct core_resp) + sizeof(struct drv_resp));   \
	_Static_assert(sizeof(struct name) % 4 == 0 &&                         \
		       sizeof(struct name##_resp) % 4 == 0,                    \
		       #name " is not made of 32-bit words")

/* ---------------------------------------------------------------------
 * Private functions exported by libibverbs under IBVERBS_PRIVATE_<PABI>.
 */
#if SIB_PABI65
void verbs_register_driver_65(const struct verbs_device_ops *ops);
#define sib_verbs_register_driver verbs_register_driver_65
#else
void verbs_register_driver_34(const struct verbs_device_ops *ops);
#define sib_verbs_register_driver verbs_register_driver_34
#endif

/*
 * Register a provider from an ELF constructor when the DSO is dlopen()ed.
 * (rdma-core's own macro also emits a verbs_provider_<name> alias, which
 * only static builds use; sib is never linked statically.)
 */
#define SIB_PROVIDER_DRIVER(provider_name, drv_struct)                         \
	static __attribute__((constructor)) void                               \
	provider_name##_register_driver(void)                                  \
	{                                                                      \
		sib_verbs_register_driver(&(drv_struct));                      \
	}

void *_verbs_init_and_alloc_context(struct ibv_device *device, int cmd_fd,
				    size_t alloc_size,
				    struct verbs_context *context_offset,
				    uint32_t driver_id);

/*
 * Allocate the provider context type of drv_ctx_ptr (zeroed), with its
 * struct verbs_context member ctx_memb initialised. On failure returns
 * NULL and the library has closed cmd_fd.
 */
#define verbs_init_and_alloc_context(ibdev, cmd_fd, drv_ctx_ptr, ctx_memb,     \
				     driver_id)                                \
	((typeof(drv_ctx_ptr))_verbs_init_and_alloc_context(                   \
		ibdev, cmd_fd, sizeof(*(drv_ctx_ptr)),                         \
		&((typeof(drv_ctx_ptr))NULL)->ctx_memb, (driver_id)))

void verbs_uninit_context(struct verbs_context *context);
void verbs_set_ops(struct verbs_context *vctx,
		   const struct verbs_context_ops *ops);
void verbs_init_cq(struct ibv_cq *cq, struct ibv_context *context,
		   struct ibv_comp_channel *channel, void *cq_context);

/* Logging (VERBS_LOG_LEVEL / VERBS_LOG_FILE in the environment). */
enum {
	VERBS_LOG_LEVEL_NONE,
	VERBS_LOG_ERR,
	VERBS_LOG_WARN,
	VERBS_LOG_INFO,
	VERBS_LOG_DEBUG,
};

void __verbs_log(struct verbs_context *ctx, uint32_t level,
		 const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Log with device name, function and line; errno is preserved. */
#define verbs_log(ctx, level, fmt, ...)                                        \
	do {                                                                   \
		int __sib_saved_errno = errno;                                 \
		__verbs_log(ctx, level, "%s: %s:%d: " fmt,                     \
			    (ctx)->context.device->name, __func__, __LINE__,   \
			    ##__VA_ARGS__);                                    \
		errno = __sib_saved_errno;                                     \
	} while (0)
#define verbs_err(ctx, fmt, ...) verbs_log(ctx, VERBS_LOG_ERR, fmt, ##__VA_ARGS__)
#define verbs_warn(ctx, fmt, ...)                                              \
	verbs_log(ctx, VERBS_LOG_WARN, fmt, ##__VA_ARGS__)
#define verbs_info(ctx, fmt, ...)                                              \
	verbs_log(ctx, VERBS_LOG_INFO, fmt, ##__VA_ARGS__)
#define verbs_debug(ctx, fmt, ...)                                             \
	verbs_log(ctx, VERBS_LOG_DEBUG, fmt, ##__VA_ARGS__)

/*
 * Reads <ibdev_path>/<fnfmt...> into buf. Returns the length (a trailing
 * newline is stripped and buf NUL-terminated when it fits), or -1.
 */
int ibv_read_ibdev_sysfs_file(char *buf, size_t size,
			      struct verbs_sysfs_dev *sysfs_dev,
			      const char *fnfmt, ...)
	__attribute__((format(printf, 4, 5)));

/*
 * The ibv_cmd_* calls return 0 or a positive errno value. Where cmd_size
 * or resp_size exceed the core struct, the bytes beyond it are the
 * driver's udata in/out buffers.
 */
#if SIB_PABI65
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ibv_fd_arr *fd_arr,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#else
int ibv_cmd_get_context(struct verbs_context *context,
			struct ibv_get_context *cmd, size_t cmd_size,
			struct ib_uverbs_get_context_resp *resp,
			size_t resp_size);
#endif

/* ibv_cmd_get_context() without file descriptors for the kernel. */
static inline int
sib_cmd_get_context(struct verbs_context *context, struct ibv_get_context *cmd,
		    size_t cmd_size, struct ib_uverbs_get_context_resp *resp,
		    size_t resp_size)
{
#if SIB_PABI65
	return ibv_cmd_get_context(context, cmd, cmd_size, NULL, resp,
				   resp_size);
#else
	return ibv_cmd_get_context(context, cmd, cmd_size, resp, resp_size);
#endif
}

int ibv_cmd_query_device_any(struct ibv_context *context,
			     const struct ibv_query_device_ex_input *input,
			     struct ibv_device_attr_ex *attr, size_t attr_size,
			     struct ib_uverbs_ex_query_device_resp *resp,
			     size_t *resp_size);
int ibv_cmd_query_port(struct ibv_context *context, uint8_t port_num,
		       struct ibv_port_attr *port_attr,
		       struct ibv_query_port *cmd, size_t cmd_size);

int ibv_cmd_alloc_pd(struct ibv_context *context, struct ibv_pd *pd,
		     struct ibv_alloc_pd *cmd, size_t cmd_size,
		     struct ib_uverbs_alloc_pd_resp *resp, size_t resp_size);
int ibv_cmd_dealloc_pd(struct ibv_pd *pd);
/* UVERBS_METHOD_QUERY_CONTEXT; driver: extra attributes, or NULL. */
struct ibv_command_buffer;
int ibv_cmd_query_context(struct ibv_context *ctx,
			  struct ibv_command_buffer *driver);
/*
 * ioctl() command buffers (rdma-core's private cmd_ioctl.h): a block of
 * attributes, from hdr.attrs to next_attr, that an ibv_cmd_*() call
 * appends to its own (a "link", when it takes one), or that
 * execute_ioctl() sends as a command of its own. Same layout in v44 and
 * v65.
 */
struct ibv_command_buffer {
	struct ibv_command_buffer *next;
	struct ib_uverbs_attr *next_attr;
	struct ib_uverbs_attr *last_attr;
	uint8_t uhw_in_idx;
	uint8_t uhw_out_idx;
	uint8_t uhw_in_headroom_dwords;
	uint8_t uhw_out_headroom_dwords;
	uint8_t buffer_error:1;
	uint8_t fallback_require_ex:1;
	uint8_t fallback_ioctl_only:1;
	struct ib_uverbs_ioctl_hdr hdr;
};

#define SIB_UHW_NO_INDEX	0xff

/*
 * SIB_CMD_BUFFER(name, object, method, n): a command buffer named name
 * on the stack, for object_id object and method_id method, with room for
 * n attributes, filled with sib_cmd_attr_*().
 */
#define SIB_CMD_BUFFER(name, object, method, n)                                \
	uint64_t name##_store[(sizeof(struct ibv_command_buffer) +             \
			       (n) * sizeof(struct ib_uverbs_attr) + 7) / 8];  \
	struct ibv_command_buffer *name =                                      \
		sib_cmd_init((void *)name##_store, object, method, n)

static inline struct ibv_command_buffer *
sib_cmd_init(struct ibv_command_buffer *cmd, uint16_t object_id,
	     uint16_t method_id, unsigned int num_attrs)
{
	memset(cmd, 0, sizeof(*cmd));
	cmd->hdr.object_id = object_id;
	cmd->hdr.method_id = method_id;
	cmd->uhw_in_idx = SIB_UHW_NO_INDEX;
	cmd->uhw_out_idx = SIB_UHW_NO_INDEX;
	cmd->next_attr = cmd->hdr.attrs;
	cmd->last_attr = cmd->hdr.attrs + num_attrs;
	return cmd;
}

/* The next attribute, mandatory; a full buffer fails the command. */
static inline struct ib_uverbs_attr *
sib_cmd_next_attr(struct ibv_command_buffer *cmd, uint16_t attr_id)
{
	static struct ib_uverbs_attr sink;
	struct ib_uverbs_attr *attr;

	if (cmd->next_attr >= cmd->last_attr) {
		cmd->buffer_error = 1;
		return &sink;
	}
	attr = cmd->next_attr++;
	memset(attr, 0, sizeof(*attr));
	attr->attr_id = attr_id;
	attr->flags = UVERBS_ATTR_F_MANDATORY;
	return attr;
}

/* A UVERBS_ATTR_TYPE_PTR_OUT attribute: the kernel writes *ptr. */
static inline void sib_cmd_attr_out(struct ibv_command_buffer *cmd,
				    uint16_t attr_id, void *ptr, size_t len)
{
	struct ib_uverbs_attr *attr = sib_cmd_next_attr(cmd, attr_id);

	if (len > UINT16_MAX)
		cmd->buffer_error = 1;
	attr->len = len;
	attr->data = (uintptr_t)ptr;
}

/* A UVERBS_ATTR_TYPE_IDR attribute naming an existing object. */
static inline void sib_cmd_attr_in_obj(struct ibv_command_buffer *cmd,
				       uint16_t attr_id, uint32_t handle)
{
	sib_cmd_next_attr(cmd, attr_id)->data = handle;
}

/* Sends cmd (and its links); 0 or an errno value. */
int execute_ioctl(struct ibv_context *context, struct ibv_command_buffer *cmd);

/* UVERBS_METHOD_QUERY_MR: keys and length of MR mr_handle, as imported. */
int ibv_cmd_query_mr(struct ibv_pd *pd, struct verbs_mr *vmr,
		     uint32_t mr_handle);

int ibv_cmd_reg_mr(struct ibv_pd *pd, void *addr, size_t length,
		   uint64_t hca_va, int access, struct verbs_mr *vmr,
		   struct ibv_reg_mr *cmd, size_t cmd_size,
		   struct ib_uverbs_reg_mr_resp *resp, size_t resp_size);
int ibv_cmd_rereg_mr(struct verbs_mr *vmr, uint32_t flags, void *addr,
		     size_t length, uint64_t hca_va, int access,
		     struct ibv_pd *pd, struct ibv_rereg_mr *cmd,
		     size_t cmd_sz, struct ib_uverbs_rereg_mr_resp *resp,
		     size_t resp_sz);
int ibv_cmd_dereg_mr(struct verbs_mr *vmr);

/* Device memory; link: driver attributes, or NULL. */
int ibv_cmd_alloc_dm(struct ibv_context *ctx,
		     const struct ibv_alloc_dm_attr *dm_attr,
		     struct verbs_dm *dm, struct ibv_command_buffer *link);
int ibv_cmd_free_dm(struct verbs_dm *dm);
int ibv_cmd_reg_dm_mr(struct ibv_pd *pd, struct verbs_dm *dm,
		      uint64_t offset, size_t length, unsigned int access,
		      struct verbs_mr *vmr, struct ibv_command_buffer *link);
/*
 * UVERBS_METHOD_REG_DMABUF_MR. rdma-core v54 added the @driver argument
 * within private ABI 34; provider/Makefile tells which one the library
 * has (SIB_IBV_CMD_DMABUF_DRIVER, from its release).
 */
#if SIB_IBV_CMD_DMABUF_DRIVER
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr,
			  struct ibv_command_buffer *driver);
#define sib_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr) \
	ibv_cmd_reg_dmabuf_mr(pd, offset, length, iova, fd, access, vmr, NULL)
#else
int ibv_cmd_reg_dmabuf_mr(struct ibv_pd *pd, uint64_t offset, size_t length,
			  uint64_t iova, int fd, int access,
			  struct verbs_mr *vmr);
#define sib_cmd_reg_dmabuf_mr ibv_cmd_reg_dmabuf_mr
#endif
int ibv_cmd_advise_mr(struct ibv_pd *pd,
		      enum ibv_advise_mr_advice advice,
		      uint32_t flags,
		      struct ibv_sge *sg_list,
		      uint32_t num_sge);

int ibv_cmd_alloc_mw(struct ibv_pd *pd, enum ibv_mw_type type,
		     struct ibv_mw *mw, struct ibv_alloc_mw *cmd,
		     size_t cmd_size, struct ib_uverbs_alloc_mw_resp *resp,
		     size_t resp_size);
int ibv_cmd_dealloc_mw(struct ibv_mw *mw);

enum {
	CREATE_CQ_CMD_FLAGS_TS_IGNORED_EX = 1 << 0,
};

int ibv_cmd_create_cq(struct ibv_context *context, int cqe,
		      struct ibv_comp_channel *channel, int comp_vector,
		      struct ibv_cq *cq, struct ibv_create_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_create_cq_resp *resp,
		      size_t resp_size);
#if SIB_PABI65
/* A CQ buffer the provider allocated (CREATE_CQ_CMD_FLAGS_WITH_MEM_*). */
struct verbs_create_cq_prov_attr;

int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_create_cq_prov_attr *prov_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#else
int ibv_cmd_create_cq_ex(struct ibv_context *context,
			 const struct ibv_cq_init_attr_ex *cq_attr,
			 struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_create_cq_resp *resp,
			 size_t resp_size, uint32_t cmd_flags);
#endif

/* ibv_cmd_create_cq_ex() of a CQ whose ring the kernel allocates. */
static inline int
sib_cmd_create_cq_ex(struct ibv_context *context,
		     const struct ibv_cq_init_attr_ex *cq_attr,
		     struct verbs_cq *cq, struct ibv_create_cq_ex *cmd,
		     size_t cmd_size, struct ib_uverbs_ex_create_cq_resp *resp,
		     size_t resp_size, uint32_t cmd_flags)
{
#if SIB_PABI65
	return ibv_cmd_create_cq_ex(context, cq_attr, NULL, cq, cmd, cmd_size,
				    resp, resp_size, cmd_flags);
#else
	return ibv_cmd_create_cq_ex(context, cq_attr, cq, cmd, cmd_size, resp,
				    resp_size, cmd_flags);
#endif
}

int ibv_cmd_resize_cq(struct ibv_cq *cq, int cqe, struct ibv_resize_cq *cmd,
		      size_t cmd_size, struct ib_uverbs_resize_cq_resp *resp,
		      size_t resp_size);
int ibv_cmd_destroy_cq(struct ibv_cq *cq);
int ibv_cmd_req_notify_cq(struct ibv_cq *cq, int solicited_only);

int ibv_cmd_create_srq(struct ibv_pd *pd, struct ibv_srq *srq,
		       struct ibv_srq_init_attr *attr,
		       struct ibv_create_srq *cmd, size_t cmd_size,
		       struct ib_uverbs_create_srq_resp *resp,
		       size_t resp_size);
int ibv_cmd_create_srq_ex(struct ibv_context *context, struct verbs_srq *srq,
			  struct ibv_srq_init_attr_ex *attr_ex,
			  struct ibv_create_xsrq *cmd, size_t cmd_size,
			  struct ib_uverbs_create_srq_resp *resp,
			  size_t resp_size);
int ibv_cmd_modify_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		       int srq_attr_mask, struct ibv_modify_srq *cmd,
		       size_t cmd_size);
int ibv_cmd_query_srq(struct ibv_srq *srq, struct ibv_srq_attr *srq_attr,
		      struct ibv_query_srq *cmd, size_t cmd_size);
int ibv_cmd_destroy_srq(struct ibv_srq *srq);

int ibv_cmd_open_xrcd(struct ibv_context *context, struct verbs_xrcd *xrcd,
		      int vxrcd_size, struct ibv_xrcd_init_attr *attr,
		      struct ibv_open_xrcd *cmd, size_t cmd_size,
		      struct ib_uverbs_open_xrcd_resp *resp, size_t resp_size);
int ibv_cmd_close_xrcd(struct verbs_xrcd *xrcd);
int ibv_cmd_open_qp(struct ibv_context *context, struct verbs_qp *qp,
		    int vqp_sz, struct ibv_qp_open_attr *attr,
		    struct ibv_open_qp *cmd, size_t cmd_size,
		    struct ib_uverbs_create_qp_resp *resp, size_t resp_size);

int ibv_cmd_create_qp(struct ibv_pd *pd, struct ibv_qp *qp,
		      struct ibv_qp_init_attr *attr, struct ibv_create_qp *cmd,
		      size_t cmd_size, struct ib_uverbs_create_qp_resp *resp,
		      size_t resp_size);
int ibv_cmd_create_qp_ex(struct ibv_context *context, struct verbs_qp *qp,
			 struct ibv_qp_init_attr_ex *attr_ex,
			 struct ibv_create_qp *cmd, size_t cmd_size,
			 struct ib_uverbs_create_qp_resp *resp,
			 size_t resp_size);
#if SIB_PABI65
/* Driver-specific ioctl attributes, linked into a command. */
struct ibv_command_buffer;

int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size, struct ibv_command_buffer *driver);
#else
int ibv_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
			  struct ibv_qp_init_attr_ex *qp_attr,
			  struct ibv_create_qp_ex *cmd, size_t cmd_size,
			  struct ib_uverbs_ex_create_qp_resp *resp,
			  size_t resp_size);
#endif

/* ibv_cmd_create_qp_ex2() with no ioctl attributes of the driver's. */
static inline int
sib_cmd_create_qp_ex2(struct ibv_context *context, struct verbs_qp *qp,
		      struct ibv_qp_init_attr_ex *qp_attr,
		      struct ibv_create_qp_ex *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_qp_resp *resp,
		      size_t resp_size)
{
#if SIB_PABI65
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size, NULL);
#else
	return ibv_cmd_create_qp_ex2(context, qp, qp_attr, cmd, cmd_size, resp,
				     resp_size);
#endif
}

int ibv_cmd_query_qp(struct ibv_qp *qp, struct ibv_qp_attr *qp_attr,
		     int attr_mask, struct ibv_qp_init_attr *qp_init_attr,
		     struct ibv_query_qp *cmd, size_t cmd_size);
int ibv_cmd_modify_qp(struct ibv_qp *qp, struct ibv_qp_attr *attr,
		      int attr_mask, struct ibv_modify_qp *cmd,
		      size_t cmd_size);
int ibv_cmd_modify_qp_ex(struct ibv_qp *qp, struct ibv_qp_attr *attr,
			 int attr_mask, struct ibv_modify_qp_ex *cmd,
			 size_t cmd_size,
			 struct ib_uverbs_ex_modify_qp_resp *resp,
			 size_t resp_size);
int ibv_cmd_destroy_qp(struct ibv_qp *qp);

int ibv_cmd_create_ah(struct ibv_pd *pd, struct ibv_ah *ah,
		      struct ibv_ah_attr *attr,
		      struct ib_uverbs_create_ah_resp *resp, size_t resp_size);
int ibv_cmd_destroy_ah(struct ibv_ah *ah);

int ibv_cmd_attach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);
int ibv_cmd_detach_mcast(struct ibv_qp *qp, const union ibv_gid *gid,
			 uint16_t lid);

/* The same in ABI 34 and 65 (rdma-core v44 .. v65). */
int ibv_cmd_create_flow(struct ibv_qp *qp, struct ibv_flow *flow_id,
			struct ibv_flow_attr *flow_attr, void *ucmd,
			size_t ucmd_size);
int ibv_cmd_destroy_flow(struct ibv_flow *flow_id);

/* Receive WQs and indirection tables: the same in ABI 34 and 65. */
int ibv_cmd_create_wq(struct ibv_context *context,
		      struct ibv_wq_init_attr *wq_init_attr, struct ibv_wq *wq,
		      struct ibv_create_wq *cmd, size_t cmd_size,
		      struct ib_uverbs_ex_create_wq_resp *resp,
		      size_t resp_size);
int ibv_cmd_modify_wq(struct ibv_wq *wq, struct ibv_wq_attr *attr,
		      struct ibv_modify_wq *cmd, size_t cmd_size);
int ibv_cmd_destroy_wq(struct ibv_wq *wq);
int ibv_cmd_create_rwq_ind_table(struct ibv_context *context,
				 struct ibv_rwq_ind_table_init_attr *init_attr,
				 struct ibv_rwq_ind_table *rwq_ind_table,
				 struct ib_uverbs_ex_create_rwq_ind_table_resp *resp,
				 size_t resp_size);
int ibv_cmd_destroy_rwq_ind_table(struct ibv_rwq_ind_table *rwq_ind_table);

/* ---------------------------------------------------------------------
 * Layout checks (x86_64; rdma-core v44 / PABI 34, v65 / PABI 65)
 */
#if defined(__x86_64__) && defined(__LP64__)
sib_static_size(struct list_node, 16);
sib_static_size(struct verbs_match_ent, 24);
sib_static_offset(struct verbs_match_ent, u, 8);
sib_static_offset(struct verbs_match_ent, vendor, 16);
sib_static_offset(struct verbs_match_ent, device, 18);
sib_static_offset(struct verbs_match_ent, kind, 20);

sib_static_size(struct verbs_sysfs_dev, 992);
sib_static_offset(struct verbs_sysfs_dev, entry, 0);
sib_static_offset(struct verbs_sysfs_dev, provider_data, 16);
sib_static_offset(struct verbs_sysfs_dev, match, 24);
sib_static_offset(struct verbs_sysfs_dev, flags, 32);
sib_static_offset(struct verbs_sysfs_dev, sysfs_name, 36);
sib_static_offset(struct verbs_sysfs_dev, sysfs_cdev, 104);
sib_static_offset(struct verbs_sysfs_dev, ibdev_name, 112);
sib_static_offset(struct verbs_sysfs_dev, ibdev_path, 176);
sib_static_offset(struct verbs_sysfs_dev, modalias, 432);
sib_static_offset(struct verbs_sysfs_dev, node_guid, 944);
sib_static_offset(struct verbs_sysfs_dev, driver_id, 952);
sib_static_offset(struct verbs_sysfs_dev, node_type, 956);
sib_static_offset(struct verbs_sysfs_dev, ibdev_idx, 960);
sib_static_offset(struct verbs_sysfs_dev, num_ports, 964);
sib_static_offset(struct verbs_sysfs_dev, abi_ver, 968);
sib_static_offset(struct verbs_sysfs_dev, time_created, 976);

sib_static_size(struct verbs_device_ops, 72);
sib_static_offset(struct verbs_device_ops, name, 0);
sib_static_offset(struct verbs_device_ops, match_min_abi_version, 8);
sib_static_offset(struct verbs_device_ops, match_max_abi_version, 12);
sib_static_offset(struct verbs_device_ops, match_table, 16);
sib_static_offset(struct verbs_device_ops, static_providers, 24);
sib_static_offset(struct verbs_device_ops, match_device, 32);
sib_static_offset(struct verbs_device_ops, alloc_context, 40);
sib_static_offset(struct verbs_device_ops, import_context, 48);
sib_static_offset(struct verbs_device_ops, alloc_device, 56);
sib_static_offset(struct verbs_device_ops, uninit_device, 64);

sib_static_size(struct ibv_device, 664);
sib_static_size(struct verbs_device, 712);
sib_static_offset(struct verbs_device, device, 0);
sib_static_offset(struct verbs_device, ops, 664);
sib_static_offset(struct verbs_device, refcount, 672);
sib_static_offset(struct verbs_device, entry, 680);
sib_static_offset(struct verbs_device, sysfs, 696);
sib_static_offset(struct verbs_device, core_support, 704);

sib_static_size(struct verbs_xrcd, 16);
#if SIB_PABI65 && !defined(SIB_HAVE_WR_FLUSH)
#error "private ABI 65 (rdma-core v65) without ibv_wr_flush() in verbs.h"
#endif
#ifdef SIB_HAVE_WR_FLUSH
/* ibv_qp_ex has wr_flush() (rdma-core v45 on): 22 operations, not 21 */
sib_static_size(struct verbs_qp, 376);
sib_static_offset(struct verbs_qp, comp_mask, 360);
sib_static_offset(struct verbs_qp, xrcd, 368);
#else
sib_static_size(struct verbs_qp, 368);
sib_static_offset(struct verbs_qp, comp_mask, 352);
sib_static_offset(struct verbs_qp, xrcd, 360);
#endif
_Static_assert(offsetof(struct ibv_qp_ex, qp_base) == 0, "ibv_qp_ex layout");
sib_static_size(struct verbs_cq, 288);
_Static_assert(offsetof(struct ibv_cq_ex, context) ==
		       offsetof(struct ibv_cq, context),
	       "ibv_cq_ex must start like ibv_cq");
sib_static_size(struct ibv_mr, 48);
sib_static_size(struct verbs_mr, 56);
sib_static_offset(struct verbs_mr, mr_type, 48);
sib_static_offset(struct verbs_mr, access, 52);
sib_static_size(struct ibv_dm, 32);
sib_static_size(struct verbs_dm, 40);
sib_static_offset(struct verbs_dm, handle, 32);
sib_static_size(struct ib_uverbs_attr, 16);
sib_static_size(struct ibv_command_buffer, 56);
sib_static_offset(struct ibv_command_buffer, uhw_in_idx, 24);
sib_static_offset(struct ibv_command_buffer, hdr, 32);
sib_static_size(struct ibv_srq, 128);
sib_static_size(struct verbs_srq, 160);
sib_static_offset(struct verbs_srq, srq_type, 128);
sib_static_offset(struct verbs_srq, xrcd, 136);
sib_static_offset(struct verbs_srq, cq, 144);
sib_static_offset(struct verbs_srq, srq_num, 152);

#if SIB_PABI65
sib_static_size(struct verbs_context_ops, 93 * sizeof(void *));
sib_static_size(struct verbs_context_ops, 744);
sib_static_offset(struct verbs_context_ops, alloc_buf, 8);
sib_static_offset(struct verbs_context_ops, alloc_pd, 56);
sib_static_offset(struct verbs_context_ops, create_cq, 144);
sib_static_offset(struct verbs_context_ops, free_context, 368);
sib_static_offset(struct verbs_context_ops, poll_cq, 496);
sib_static_offset(struct verbs_context_ops, post_send, 512);
sib_static_offset(struct verbs_context_ops, query_device_ex, 552);
sib_static_offset(struct verbs_context_ops, reg_mr, 656);
sib_static_offset(struct verbs_context_ops, set_err_comp_cntr, 712);
sib_static_offset(struct verbs_context_ops, unimport_pd, 736);

/* Public, but the provider embeds it: pin it too. */
sib_static_size(struct verbs_context, 696);
sib_static_offset(struct verbs_context, priv, 256);
sib_static_offset(struct verbs_context, sz, 360);
sib_static_offset(struct verbs_context, context, 368);
#else
sib_static_size(struct verbs_context_ops, 76 * sizeof(void *));
sib_static_size(struct verbs_context_ops, 608);
sib_static_offset(struct verbs_context_ops, alloc_pd, 40);
sib_static_offset(struct verbs_context_ops, create_cq, 120);
sib_static_offset(struct verbs_context_ops, free_context, 312);
sib_static_offset(struct verbs_context_ops, poll_cq, 424);
sib_static_offset(struct verbs_context_ops, post_send, 440);
sib_static_offset(struct verbs_context_ops, query_device_ex, 464);
sib_static_offset(struct verbs_context_ops, reg_mr, 544);
sib_static_offset(struct verbs_context_ops, unimport_pd, 600);

/* Public, but the provider embeds it: pin it too. */
sib_static_size(struct verbs_context, 648);
sib_static_offset(struct verbs_context, priv, 208);
sib_static_offset(struct verbs_context, sz, 312);
sib_static_offset(struct verbs_context, context, 320);
#endif

sib_static_size(struct ib_uverbs_cmd_hdr, 8);
sib_static_size(struct ex_hdr, 24);
sib_static_size(struct ibv_get_context, 16);
sib_static_size(struct ibv_query_port, 24);
sib_static_size(struct ibv_alloc_pd, 16);
sib_static_size(struct ibv_reg_mr, 48);
sib_static_size(struct ibv_rereg_mr, 56);
sib_static_size(struct ibv_alloc_mw, 24);
sib_static_size(struct ibv_create_cq, 40);
sib_static_size(struct ibv_create_cq_ex, 56);
sib_static_size(struct ibv_resize_cq, 24);
sib_static_size(struct ibv_create_srq, 40);
sib_static_size(struct ibv_create_xsrq, 56);
sib_static_size(struct ibv_modify_srq, 24);
sib_static_size(struct ibv_query_srq, 24);
sib_static_size(struct ibv_create_qp, 64);
sib_static_size(struct ibv_create_qp_ex, 88);
sib_static_size(struct ibv_query_qp, 24);
sib_static_size(struct ibv_modify_qp, 120);
sib_static_size(struct ibv_modify_qp_ex, 144);
sib_static_size(struct ibv_post_send, 32);

sib_static_size(struct ib_uverbs_get_context_resp, 8);
sib_static_size(struct ib_uverbs_alloc_pd_resp, 4);
sib_static_size(struct ib_uverbs_reg_mr_resp, 12);
sib_static_size(struct ib_uverbs_create_cq_resp, 8);
sib_static_size(struct ib_uverbs_ex_create_cq_resp, 16);
sib_static_size(struct ib_uverbs_create_qp_resp, 32);
sib_static_size(struct ib_uverbs_ex_create_qp_resp, 40);
sib_static_size(struct ib_uverbs_create_srq_resp, 16);
sib_static_size(struct ib_uverbs_resize_cq_resp, 8);
sib_static_size(struct ib_uverbs_alloc_mw_resp, 8);
sib_static_size(struct ib_uverbs_create_ah_resp, 4);
sib_static_size(struct ib_uverbs_ex_query_device_resp, 304);
#else
#error "sib_driver.h: only the x86_64 layout of the provider ABI is checked"
#endif

#endif /* SIB_DRIVER_H */
