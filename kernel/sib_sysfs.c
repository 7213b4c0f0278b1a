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
 * registered, removed after it is unregistered (sib_dealloc_driver()).
 * The link keeps the name the netdev had at link add.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>

#include "sib.h"

static DEFINE_IDA(sib_parent_ida);

/* An empty attribute list: the group exists for its directory. */
static struct attribute *sib_net_attrs[] = {
	NULL,
};

static const struct attribute_group sib_net_group = {
	.name = "net",
	.attrs = sib_net_attrs,
};

/**
 * sib_parent_add - create the parent device of @sdev's ib_device
 * @sdev: a device not yet registered
 *
 * The parent is a root device (root_device_register()), so that its
 * release function is the driver core's, not sib's: a consumer may hold
 * it after the ib_device is gone, and after the module is (ib_srp's SCSI
 * hosts, whose parent is the ib_device's parent, are freed by a worker
 * some time after the device is unregistered).
 *
 * On success, @sdev->ib_dev.dev.parent is set.
 *
 * Return: 0, or a negative errno (no id, or the root device or its sysfs
 * link could not be made; nothing is left behind then).
 */
int sib_parent_add(struct sib_dev *sdev)
{
	char name[16];
	struct device *dev;
	int id, ret;

	id = ida_alloc(&sib_parent_ida, GFP_KERNEL);
	if (id < 0)
		return id;
	strscpy(sdev->parent_link, netdev_name(sdev->ndev),
		sizeof(sdev->parent_link));
	snprintf(name, sizeof(name), "sib%d", id);
	dev = root_device_register(name);
	if (IS_ERR(dev)) {
		ida_free(&sib_parent_ida, id);
		return PTR_ERR(dev);
	}
	ret = sysfs_create_group(&dev->kobj, &sib_net_group);
	if (!ret) {
		ret = sysfs_add_link_to_group(&dev->kobj, "net",
					      &sdev->ndev->dev.kobj,
					      sdev->parent_link);
		if (ret)
			sysfs_remove_group(&dev->kobj, &sib_net_group);
	}
	if (ret) {
		root_device_unregister(dev);
		ida_free(&sib_parent_ida, id);
		return ret;
	}
	sdev->parent = dev;
	sdev->parent_id = id;
	sdev->ib_dev.dev.parent = dev;
	return 0;
}

/*
 * Remove the parent; the ib_device is no longer in sysfs. Its number may
 * be reused at once: its name leaves sysfs here, whoever still holds it.
 */
void sib_parent_del(struct sib_dev *sdev)
{
	struct device *dev = sdev->parent;

	if (!dev)
		return;
	sdev->parent = NULL;
	sysfs_remove_link_from_group(&dev->kobj, "net", sdev->parent_link);
	sysfs_remove_group(&dev->kobj, &sib_net_group);
	root_device_unregister(dev);
	ida_free(&sib_parent_ida, sdev->parent_id);
}

/* Every device is gone: their parents are unregistered. */
void sib_sysfs_exit(void)
{
	ida_destroy(&sib_parent_ida);
}
