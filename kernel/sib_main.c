// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: module entry, device life cycle and netdev tracking.
 *
 * A sib device exists between "rdma link add NAME type sib netdev IFACE"
 * and whichever comes first of "rdma link delete NAME", the netdev going
 * away, or module unload. All three paths end in ib_core's unregistration,
 * which calls sib_dealloc_driver() exactly once; that is the only place
 * where a device leaves sib_dev_list and drops its netdev reference.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/if_arp.h>
#include <linux/module.h>
#include <rdma/rdma_netlink.h>

#include "sib.h"
#include "sib_capture.h"
#include "sib_dm.h"
#include "sib_main.h"
#include "sib_mcast.h"
#include "sib_mkey.h"
#include "sib_qp.h"
#include "sib_recv.h"
#include "sib_res.h"
#include "sib_sysfs.h"
#include "sib_udp.h"
#include "sib_verbs.h"

struct workqueue_struct *sib_wq;
/* Engines of streaming doorbells (sib_qp_doorbell()): high priority. */
struct workqueue_struct *sib_async_wq;

/*
 * sib_dev_list holds every sib_dev from link add until dealloc_driver.
 * sib_dev_mutex guards the list and the @registered/@ndev_gone flags. It
 * is taken inside RTNL (by the netdev notifier), so never take RTNL, or
 * call into ib_core registration, while holding it.
 */
static LIST_HEAD(sib_dev_list);
static DEFINE_MUTEX(sib_dev_mutex);

static struct sib_dev *sib_find_by_ndev(struct net_device *ndev)
{
	struct sib_dev *sdev;

	lockdep_assert_held(&sib_dev_mutex);
	list_for_each_entry(sdev, &sib_dev_list, list)
		if (sdev->ndev == ndev)
			return sdev;
	return NULL;
}

static bool sib_ndev_suitable(struct net_device *ndev)
{
	if (ndev->type == ARPHRD_LOOPBACK)
		return true;
	return ndev->type == ARPHRD_ETHER && ndev->addr_len == ETH_ALEN;
}

static void sib_init_guid(struct sib_dev *sdev)
{
	const u8 *mac = sdev->ndev->dev_addr;
	u8 eui[8];

	/* Modified EUI-64 from the MAC, as for IPv6 link-local addresses. */
	eui[0] = mac[0] ^ 2;
	eui[1] = mac[1];
	eui[2] = mac[2];
	eui[3] = 0xff;
	eui[4] = 0xfe;
	eui[5] = mac[3];
	eui[6] = mac[4];
	eui[7] = mac[5];
	memcpy(&sdev->ib_dev.node_guid, eui, sizeof(eui));
}

static struct sib_dev *sib_alloc(struct net_device *ndev, const char *name)
{
	struct sib_dev *sdev;

	sdev = ib_alloc_device(sib_dev, ib_dev);
	if (!sdev)
		return NULL;

	sdev->ndev = ndev;
	netdev_hold(ndev, &sdev->ndev_tracker, GFP_KERNEL);
	ida_init(&sdev->pd_ida);
	atomic_set(&sdev->num_pd, 0);
	sib_mem_table_init(&sdev->mem);
	atomic_set(&sdev->num_dm, 0);
	atomic64_set(&sdev->dm_bytes, 0);
	xa_init_flags(&sdev->qp_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->srq_xa, XA_FLAGS_ALLOC);
	xa_init_flags(&sdev->ah_xa, XA_FLAGS_ALLOC1);
	sdev->credits = true;
	sib_mcast_init(sdev);
	sib_raw_dev_init(sdev);
	sib_fault_init(&sdev->fault, sdev, name, sib_fault_deliver);
	sib_res_debugfs(sdev, sdev->fault.dir_dentry);
	INIT_LIST_HEAD(&sdev->list);

	sdev->ib_dev.node_type = RDMA_NODE_IB_CA;
	sdev->ib_dev.phys_port_cnt = 1;
	/*
	 * Completions are signalled from whichever CPU runs the engines;
	 * the vector is only a hint. One per CPU lets ULPs that size their
	 * queues by it (nvme-rdma: I/O queues) use every CPU.
	 */
	sdev->ib_dev.num_comp_vectors = num_possible_cpus();
	sib_init_guid(sdev);
	strscpy(sdev->ib_dev.node_desc, "sib", sizeof(sdev->ib_dev.node_desc));
	ib_set_device_ops(&sdev->ib_dev, &sib_dev_ops);
	/* Device memory's additions to the uverbs ioctl interface. */
	sdev->ib_dev.driver_def = sib_uapi_defs;
	/* The doorbells: write() commands that drivers must opt into. */
	sdev->ib_dev.uverbs_cmd_mask |=
		BIT_ULL(IB_USER_VERBS_CMD_POST_SEND) |
		BIT_ULL(IB_USER_VERBS_CMD_POST_RECV) |
		BIT_ULL(IB_USER_VERBS_CMD_REQ_NOTIFY_CQ);
	return sdev;
}

/*
 * Undo sib_alloc() for a device that never registered: ib_dealloc_device()
 * calls sib_dealloc_driver() for it too, which undoes everything.
 */
static void sib_free_unregistered(struct sib_dev *sdev)
{
	ib_dealloc_device(&sdev->ib_dev);
}

/* Called by ib_core exactly once, at the end of unregistration. */
void sib_dealloc_driver(struct ib_device *ib_dev)
{
	struct sib_dev *sdev = to_sdev(ib_dev);
	bool registered;

	mutex_lock(&sib_dev_mutex);
	registered = sdev->registered;
	sdev->registered = false;
	mutex_unlock(&sib_dev_mutex);

	sib_cap_fini(sdev);
	sib_udp_dev_fini(sdev);
	sib_mcast_fini(sdev);
	sib_parent_del(sdev);
	WARN_ON(atomic_read(&sdev->num_pd) || atomic_read(&sdev->num_qp) ||
		atomic_read(&sdev->num_cq) || atomic_read(&sdev->num_srq));
	WARN_ON(!xa_empty(&sdev->qp_xa) || !xa_empty(&sdev->ah_xa) ||
		!xa_empty(&sdev->srq_xa) ||
		atomic_read(&sdev->num_ah));
	WARN_ON(atomic_read(&sdev->num_dm) || atomic64_read(&sdev->dm_bytes));
	xa_destroy(&sdev->qp_xa);
	xa_destroy(&sdev->srq_xa);
	xa_destroy(&sdev->ah_xa);
	ida_destroy(&sdev->pd_ida);
	sib_raw_dev_fini(sdev);
	sib_mem_table_destroy(&sdev->mem);
	if (registered)
		pr_info("%s: removed (netdev %s)\n", dev_name(&ib_dev->dev),
			netdev_name(sdev->ndev));
	sib_fault_fini(&sdev->fault);
	netdev_put(sdev->ndev, &sdev->ndev_tracker);
	/*
	 * Last: module unload (sib_unregister_all()) waits for every listed
	 * device, so that no queued unregistration still runs sib's code, or
	 * uses its sockets, workqueues or debugfs, once the module is gone.
	 */
	mutex_lock(&sib_dev_mutex);
	list_del_init(&sdev->list);
	mutex_unlock(&sib_dev_mutex);
}

/* Reserve @ndev for a new device, refusing a netdev already bound. */
static int sib_claim_ndev(struct sib_dev *sdev)
{
	struct sib_dev *other;
	int ret = 0;

	mutex_lock(&sib_dev_mutex);
	other = sib_find_by_ndev(sdev->ndev);
	if (other) {
		pr_err("netdev %s is already used by %s\n",
		       netdev_name(sdev->ndev),
		       other->registered ? dev_name(&other->ib_dev.dev) :
		       "a device being created or removed");
		ret = -EEXIST;
	} else {
		list_add_tail(&sdev->list, &sib_dev_list);
	}
	mutex_unlock(&sib_dev_mutex);
	return ret;
}

static int sib_newlink(const char *ibdev_name, struct net_device *ndev)
{
	struct sib_dev *sdev;
	bool gone;
	int ret;

	if (!sib_ndev_suitable(ndev)) {
		pr_err("netdev %s is unsuitable: type %u is neither Ethernet nor loopback\n",
		       netdev_name(ndev), ndev->type);
		return -EINVAL;
	}

	sdev = sib_alloc(ndev, ibdev_name);
	if (!sdev)
		return -ENOMEM;

	ret = sib_claim_ndev(sdev);
	if (ret) {
		ib_dealloc_device(&sdev->ib_dev);
		return ret;
	}

	/*
	 * From here on the notifier sees the device. A netdev that started
	 * unregistering before we were listed is refused now; one that starts
	 * later is caught by the notifier through @ndev_gone.
	 */
	if (READ_ONCE(ndev->reg_state) != NETREG_REGISTERED) {
		pr_err("netdev %s is going away\n", netdev_name(ndev));
		ret = -ENODEV;
		goto err_free;
	}

	sdev->port_active = sib_port_is_active(sdev);
	ret = ib_device_set_netdev(&sdev->ib_dev, ndev, 1);
	if (ret)
		goto err_free;
	ret = sib_udp_dev_init(sdev);
	if (ret)
		goto err_free;
	ret = sib_parent_add(sdev);
	if (ret)
		goto err_free;

	/* Pin the memory: the device may be unregistered by others below. */
	get_device(&sdev->ib_dev.dev);
	ret = ib_register_device(&sdev->ib_dev, ibdev_name, NULL);
	if (ret == -ENFILE) {
		/* ib_core's answer to a name in use: say so, as EEXIST */
		pr_err("device name %s is already taken\n", ibdev_name);
		ret = -EEXIST;
	} else if (ret) {
		pr_err("cannot register %s on %s: %d\n", ibdev_name,
		       netdev_name(ndev), ret);
	}
	if (ret) {
		put_device(&sdev->ib_dev.dev);
		sib_udp_dev_fini(sdev);
		goto err_free;
	}

	mutex_lock(&sib_dev_mutex);
	sdev->registered = true;
	gone = sdev->ndev_gone;
	mutex_unlock(&sib_dev_mutex);

	pr_info("%s: added on netdev %s\n", ibdev_name, netdev_name(ndev));
	if (gone)
		ib_unregister_device(&sdev->ib_dev);
	put_device(&sdev->ib_dev.dev);
	return 0;

err_free:
	sib_free_unregistered(sdev);
	return ret;
}

static struct rdma_link_ops sib_link_ops = {
	.type = "sib",
	.newlink = sib_newlink,
};

static void sib_port_event(struct sib_dev *sdev)
{
	bool active = sib_port_is_active(sdev);
	struct ib_event ev = {};

	if (active == sdev->port_active)
		return;
	sdev->port_active = active;
	ev.device = &sdev->ib_dev;
	ev.element.port_num = 1;
	ev.event = active ? IB_EVENT_PORT_ACTIVE : IB_EVENT_PORT_ERR;
	ib_dispatch_event(&ev);
}

/* The netdev is being unregistered (not merely moved to another netns). */
static void sib_ndev_unregister(struct sib_dev *sdev)
{
	if (!sdev->registered) {
		sdev->ndev_gone = true;
		return;
	}
	/* A failed get means an unregistration is already under way. */
	if (ib_device_try_get(&sdev->ib_dev)) {
		ib_unregister_device_queued(&sdev->ib_dev);
		ib_device_put(&sdev->ib_dev);
	}
}

static int sib_netdev_event(struct notifier_block *nb, unsigned long event,
			    void *arg)
{
	struct net_device *ndev = netdev_notifier_info_to_dev(arg);
	struct sib_dev *sdev;

	if (sib_cap_netdev_event(ndev, event))
		return NOTIFY_DONE;
	mutex_lock(&sib_dev_mutex);
	sdev = sib_find_by_ndev(ndev);
	if (!sdev)
		goto out;

	switch (event) {
	case NETDEV_UNREGISTER:
		if (ndev->reg_state != NETREG_REGISTERED)
			sib_ndev_unregister(sdev);
		break;
	case NETDEV_REGISTER:	/* moved to another network namespace */
		sib_udp_dev_moved(sdev);
		/* The capture netdev stays behind: it goes. */
		sib_cap_del(sdev);
		break;
	case NETDEV_UP:
	case NETDEV_DOWN:
	case NETDEV_CHANGE:
		if (sdev->registered)
			sib_port_event(sdev);
		break;
	default:
		break;
	}
out:
	mutex_unlock(&sib_dev_mutex);
	return NOTIFY_DONE;
}

static struct notifier_block sib_netdev_notifier = {
	.notifier_call = sib_netdev_event,
};

/*
 * Unregister every device. Called after the link ops are gone, so no
 * device can be added; ib_unregister_device() is safe against a
 * concurrent "rdma link delete" or a queued unregistration (it waits for
 * it), and returns only once the device is fully gone. A device leaves
 * the list at the very end of sib_dealloc_driver(), so an unregistration
 * queued by the netdev notifier is waited for too.
 */
static void sib_unregister_all(void)
{
	struct sib_dev *sdev;

	for (;;) {
		mutex_lock(&sib_dev_mutex);
		sdev = list_first_entry_or_null(&sib_dev_list, struct sib_dev,
						list);
		if (sdev)
			get_device(&sdev->ib_dev.dev);
		mutex_unlock(&sib_dev_mutex);
		if (!sdev)
			break;
		ib_unregister_device(&sdev->ib_dev);
		put_device(&sdev->ib_dev.dev);
	}
}

static int __init sib_init(void)
{
	int ret;

	sib_opcode_init();
	sib_fault_module_init();
	sib_wq = alloc_workqueue("sib", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!sib_wq)
		return -ENOMEM;
	sib_async_wq = alloc_workqueue("sib_async", WQ_UNBOUND | WQ_HIGHPRI |
				       WQ_MEM_RECLAIM, 0);
	if (!sib_async_wq) {
		ret = -ENOMEM;
		goto err_wq;
	}
	ret = sib_udp_init();
	if (ret)
		goto err_async_wq;
	ret = register_netdevice_notifier(&sib_netdev_notifier);
	if (ret)
		goto err_net;
	rdma_link_register(&sib_link_ops);
	pr_info("loaded, version " SIB_DRV_VERSION "\n");
	return 0;

err_net:
	sib_udp_exit();
err_async_wq:
	destroy_workqueue(sib_async_wq);
err_wq:
	destroy_workqueue(sib_wq);
	sib_fault_module_exit();
	return ret;
}

static void __exit sib_exit(void)
{
	rdma_link_unregister(&sib_link_ops);
	/*
	 * The notifier stays until every device is gone: a namespace that
	 * dies meanwhile unregisters a capture netdev, and only the
	 * notifier takes it from its device.
	 */
	sib_unregister_all();
	unregister_netdevice_notifier(&sib_netdev_notifier);
	sib_udp_exit();
	sib_sysfs_exit();
	destroy_workqueue(sib_async_wq);
	destroy_workqueue(sib_wq);
	sib_fault_module_exit();
	pr_info("unloaded\n");
}

module_init(sib_init);
module_exit(sib_exit);

MODULE_AUTHOR("The sib authors");
MODULE_DESCRIPTION("sib: soft RDMA device, InfiniBand transport over RoCEv2");
MODULE_LICENSE("Dual BSD/GPL");
MODULE_VERSION(SIB_DRV_VERSION);
MODULE_ALIAS_RDMA_LINK("sib");
