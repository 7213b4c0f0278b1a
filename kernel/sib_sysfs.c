// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib: the parent device of each ib_device, so that
 * /sys/class/infiniband/DEV/device/net/ names the bound netdev, as it
 * does for a NIC's PCI function. rdma-core's test suite (tests/base.py)
 * finds a device's netdev, and from it the IP address its rdma_cm tests
 * use, that way.
 *
 * The parent is /sys/devices/sib/sibN (N a number, since ib_devices can
 * be renamed); its "net" directory holds one symbolic link, named after
 * the netdev, to the netdev's device. Created before the ib_device is
 * registered, removed after it is unregistered (sib_dealloc_driver()).
 * The link keeps the name the netdev had at link add.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/device.h>
#include <linux/slab.h>

#include "sib.h"

/**
 * struct sib_parent - the parent device
 * @dev:	the device; its release frees this
 * @link:	name of the link in "net" (the netdev's name at link add)
 */
struct sib_parent {
	struct device dev;
	char link[IFNAMSIZ];
};

static struct device *sib_root;
static DEFINE_IDA(sib_parent_ida);

/* An empty attribute list: the group exists for its directory. */
static struct attribute *sib_net_attrs[] = {
	NULL,
};

static const struct attribute_group sib_net_group = {
	.name = "net",
	.attrs = sib_net_attrs,
};

static const struct attribute_group *sib_parent_groups[] = {
	&sib_net_group,
	NULL,
};

static void sib_parent_release(struct device *dev)
{
	ida_free(&sib_parent_ida, dev->id);
	kfree(container_of(dev, struct sib_parent, dev));
}

/**
 * sib_parent_add - create the parent device of @sdev's ib_device
 * @sdev: a device not yet registered
 *
 * On success, @sdev->ib_dev.dev.parent is set.
 */
int sib_parent_add(struct sib_dev *sdev)
{
	struct sib_parent *p;
	struct device *dev;
	int id, ret;

	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		return -ENOMEM;
	id = ida_alloc(&sib_parent_ida, GFP_KERNEL);
	if (id < 0) {
		kfree(p);
		return id;
	}
	dev = &p->dev;
	strscpy(p->link, netdev_name(sdev->ndev), sizeof(p->link));
	device_initialize(dev);
	dev->id = id;
	dev->parent = sib_root;
	dev->groups = sib_parent_groups;
	dev->release = sib_parent_release;
	ret = dev_set_name(dev, "sib%d", id);
	if (!ret)
		ret = device_add(dev);
	if (ret)
		goto err;
	ret = sysfs_add_link_to_group(&dev->kobj, "net", &sdev->ndev->dev.kobj,
				      p->link);
	if (ret) {
		device_del(dev);
		goto err;
	}
	sdev->parent = dev;
	sdev->ib_dev.dev.parent = dev;
	return 0;

err:
	put_device(dev);
	return ret;
}

/* Remove the parent; the ib_device is no longer in sysfs. */
void sib_parent_del(struct sib_dev *sdev)
{
	struct device *dev = sdev->parent;

	if (!dev)
		return;
	sdev->parent = NULL;
	sysfs_remove_link_from_group(&dev->kobj, "net",
				     container_of(dev, struct sib_parent, dev)->link);
	device_unregister(dev);
}

int sib_sysfs_init(void)
{
	sib_root = root_device_register("sib");
	return PTR_ERR_OR_ZERO(sib_root);
}

void sib_sysfs_exit(void)
{
	root_device_unregister(sib_root);
}
