// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the parent device of each ib_device, so that
 * /sys/class/infiniband/DEV/device/net/ names the bound netdev, as it
 * does for a NIC's PCI function. rdma-core's test suite (tests/base.py)
 * finds a device's netdev, and from it the IP address its rdma_cm tests
 * use, that way.
 *
 * The parent is /sys/devices/sibN (N a number, since ib_devices can be
 * renamed); its "net" directory holds one symbolic link, named after
 * the netdev, to the netdev's device. Created before the ib_device is
 * registered; its link goes after the ib_device is unregistered
 * (sib_dealloc_driver()). The link keeps the name the netdev had at link
 * add.
 *
 * Kernel consumers put devices of their own below it: ib_iser and ib_srp
 * make their SCSI hosts children of the ib_device's parent. ib_srp
 * removes its hosts when the ib_device goes, but an iSER session, its
 * host and its disks stay until iscsid logs out. Unregistering the parent
 * under them would take their sysfs directories with it, and iscsid,
 * which finds sessions in sysfs, could never log out (as after the
 * hot-unplug of a NIC). So a parent with children left stays, out of the
 * device's sight, and a worker unregisters it once they are gone; module
 * unload takes any that remain.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>
#include <linux/workqueue.h>

#include "sib.h"
#include "sib_sysfs.h"

/**
 * struct sib_parent - the parent in sysfs of a sib ib_device
 * @dev:	the root device, /sys/devices/sibN
 * @id:		N
 * @link:	the name of its link in "net" (the netdev's name at link add)
 * @node:	on sib_parents_left once its device is gone, while other
 *		devices are still below it (under sib_parents_lock)
 */
struct sib_parent {
	struct device *dev;
	int id;
	char link[IFNAMSIZ];
	struct list_head node;
};

static DEFINE_IDA(sib_parent_ida);

/* An empty attribute list: the group exists for its directory. */
static struct attribute *sib_net_attrs[] = {
	NULL,
};

static const struct attribute_group sib_net_group = {
	.name = "net",
	.attrs = sib_net_attrs,
};

static LIST_HEAD(sib_parents_left);
static DEFINE_MUTEX(sib_parents_lock);	/* guards sib_parents_left */
static void sib_parents_reap(struct work_struct *work);
static DECLARE_DELAYED_WORK(sib_parents_work, sib_parents_reap);

/**
 * sib_parent_add - create the parent device of @sdev's ib_device
 * @sdev: a device not yet registered
 *
 * The parent is a root device (root_device_register()), so that its
 * release function is the driver core's, not sib's: a consumer may hold
 * it after the ib_device is gone, and after the module is.
 *
 * On success, @sdev->ib_dev.dev.parent is set.
 *
 * Return: 0, or a negative errno (no memory or id, or the root device
 * or its sysfs link could not be made; nothing is left behind then).
 */
int sib_parent_add(struct sib_dev *sdev)
{
	struct sib_parent *p;
	char name[16];
	int ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	p->id = ida_alloc(&sib_parent_ida, GFP_KERNEL);
	if (p->id < 0) {
		ret = p->id;
		goto err_free;
	}
	strscpy(p->link, netdev_name(sdev->ndev), sizeof(p->link));
	snprintf(name, sizeof(name), "sib%d", p->id);
	p->dev = root_device_register(name);
	if (IS_ERR(p->dev)) {
		ret = PTR_ERR(p->dev);
		goto err_ida;
	}
	ret = sysfs_create_group(&p->dev->kobj, &sib_net_group);
	if (ret)
		goto err_root;
	ret = sysfs_add_link_to_group(&p->dev->kobj, "net",
				      &sdev->ndev->dev.kobj, p->link);
	if (ret)
		goto err_group;
	sdev->parent = p;
	sdev->ib_dev.dev.parent = p->dev;
	return 0;

err_group:
	sysfs_remove_group(&p->dev->kobj, &sib_net_group);
err_root:
	root_device_unregister(p->dev);
err_ida:
	ida_free(&sib_parent_ida, p->id);
err_free:
	kfree(p);
	return ret;
}

static int sib_parent_child(struct device *dev, void *unused)
{
	return 1;
}

/* Is a device (a consumer's SCSI host) still below @p? */
static bool sib_parent_busy(struct sib_parent *p)
{
	return device_for_each_child(p->dev, NULL, sib_parent_child);
}

/* Unregister @p; its number may be reused at once. */
static void sib_parent_free(struct sib_parent *p)
{
	root_device_unregister(p->dev);
	ida_free(&sib_parent_ida, p->id);
	kfree(p);
}

/* The worker: unregister the parents that nothing is below any more. */
static void sib_parents_reap(struct work_struct *work)
{
	struct sib_parent *p, *next;
	bool left;

	mutex_lock(&sib_parents_lock);
	list_for_each_entry_safe(p, next, &sib_parents_left, node) {
		if (sib_parent_busy(p))
			continue;
		list_del(&p->node);
		sib_parent_free(p);
	}
	left = !list_empty(&sib_parents_left);
	mutex_unlock(&sib_parents_lock);
	if (left)
		schedule_delayed_work(&sib_parents_work, HZ);
}

/**
 * sib_parent_del - the ib_device is gone from sysfs: its parent goes
 * @sdev: the device
 *
 * The link to the netdev goes now. The parent goes now if nothing is
 * below it, else once its children are gone (sib_parents_reap()).
 */
void sib_parent_del(struct sib_dev *sdev)
{
	struct sib_parent *p = sdev->parent;

	if (!p)
		return;
	sdev->parent = NULL;
	sysfs_remove_link_from_group(&p->dev->kobj, "net", p->link);
	sysfs_remove_group(&p->dev->kobj, &sib_net_group);
	if (!sib_parent_busy(p)) {
		sib_parent_free(p);
		return;
	}
	pr_info("%s stays while devices are below it\n", dev_name(p->dev));
	mutex_lock(&sib_parents_lock);
	list_add_tail(&p->node, &sib_parents_left);
	mutex_unlock(&sib_parents_lock);
	schedule_delayed_work(&sib_parents_work, HZ);
}

/*
 * Every device is gone. Parents that still have devices below them (an
 * iSER session that was never logged out) go now, their sysfs directories
 * with them, since nothing of the module may stay.
 */
void sib_sysfs_exit(void)
{
	struct sib_parent *p, *next;

	cancel_delayed_work_sync(&sib_parents_work);
	list_for_each_entry_safe(p, next, &sib_parents_left, node) {
		pr_warn("%s goes with devices still below it\n",
			dev_name(p->dev));
		list_del(&p->node);
		sib_parent_free(p);
	}
	ida_destroy(&sib_parent_ida);
}
