/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib: what differs between the kernels sib builds for, in one place.
 *
 * Every difference is found at build time by a probe,
 * kernel/compat/NAME.c, that defines SIB_HAVE_NAME when it compiles
 * against the kernel being built for (kernel/compat/compat.mk); this
 * header is the only user of SIB_HAVE_* and gives the rest of sib one
 * interface whatever the kernel. No LINUX_VERSION_CODE tests.
 */
#ifndef SIB_COMPAT_H
#define SIB_COMPAT_H

#include <linux/mm.h>
#include <linux/netdevice.h>
#include <linux/skbuff.h>
#include <linux/timer.h>
#include <net/udp_tunnel.h>
#include <rdma/ib_umem.h>
#include <rdma/ib_verbs.h>
#include <rdma/uverbs_ioctl.h>

#include <sib_probes.h>

#ifdef SIB_HAVE_NET_HOTDATA
#include <net/hotdata.h>
#endif
#ifdef SIB_HAVE_IPV6_STUB
#include <net/ipv6_stubs.h>
#else
#include <net/ipv6.h>
#endif

/*
 * SIB_CREATE_CQ_ARG is the type of ib_device_ops.create_cq()'s last
 * argument: the uverbs attribute bundle where the kernel passes one, else
 * the udata; NULL for a kernel CQ either way. sib_cq_udata() gives the
 * udata (or NULL).
 */
#ifdef SIB_HAVE_CREATE_CQ_ATTRS
#define SIB_CREATE_CQ_ARG	struct uverbs_attr_bundle *

static inline struct ib_udata *sib_cq_udata(struct uverbs_attr_bundle *attrs)
{
	return attrs ? &attrs->driver_udata : NULL;
}
#else
#define SIB_CREATE_CQ_ARG	struct ib_udata *

static inline struct ib_udata *sib_cq_udata(struct ib_udata *udata)
{
	return udata;
}
#endif

/* Set @flags in @vma->vm_flags (read-only where vm_flags_set() exists). */
static inline void sib_vm_flags_set(struct vm_area_struct *vma,
				    vm_flags_t flags)
{
#ifdef SIB_HAVE_VM_FLAGS_SET
	vm_flags_set(vma, flags);
#else
	vma->vm_flags |= flags;
#endif
}

/* The net.core.netdev_max_backlog sysctl. */
static inline int sib_netdev_max_backlog(void)
{
#ifdef SIB_HAVE_NET_HOTDATA
	return READ_ONCE(net_hotdata.max_backlog);
#else
	return READ_ONCE(netdev_max_backlog);
#endif
}

/*
 * SIB_RESIZE_CQ_OP is the member of ib_device_ops that resizes a CQ:
 * resize_user_cq where only a process' CQ can be resized, else
 * resize_cq; SIB_RESIZE_CQE is the type of its count.
 */
#ifdef SIB_HAVE_RESIZE_USER_CQ
#define SIB_RESIZE_CQ_OP	resize_user_cq
#define SIB_RESIZE_CQE		unsigned int
#else
#define SIB_RESIZE_CQ_OP	resize_cq
#define SIB_RESIZE_CQE		int
#endif

/*
 * SIB_REG_USER_MR_DMAH is the parameter ib_device_ops.reg_user_mr() has
 * before the udata where it takes a DMA handle, or nothing. A handle
 * (struct ib_dmah, PCIe TPH steering hints) exists only for a device
 * with alloc_dmah(), which sib has not: the one sib gets is always NULL.
 */
#ifdef SIB_HAVE_REG_USER_MR_DMAH
#define SIB_REG_USER_MR_DMAH	struct ib_dmah *dmah,
#else
#define SIB_REG_USER_MR_DMAH
#endif

/*
 * ib_device_ops.reg_user_mr_dmabuf(): SIB_REG_DMABUF_DMAH is its DMA
 * handle parameter (always NULL for sib, as for reg_user_mr()) or
 * nothing, SIB_REG_DMABUF_UDATA its last parameter: the udata before
 * Linux 6.10, the uverbs attribute bundle since.
 */
#if defined(SIB_HAVE_REG_USER_MR_DMABUF_DMAH)
#define SIB_REG_DMABUF_DMAH	struct ib_dmah *dmah,
#define SIB_REG_DMABUF_UDATA	struct uverbs_attr_bundle *attrs
#elif defined(SIB_HAVE_REG_USER_MR_DMABUF_ATTRS)
#define SIB_REG_DMABUF_DMAH
#define SIB_REG_DMABUF_UDATA	struct uverbs_attr_bundle *attrs
#else
#define SIB_REG_DMABUF_DMAH
#define SIB_REG_DMABUF_UDATA	struct ib_udata *udata
#endif

/*
 * A dma-buf importer's kernel mapping of the whole buffer, taken and
 * dropped without the reservation lock held: dma_buf_vmap_unlocked()
 * since Linux 6.2, dma_buf_vmap() (which locks on its own) before.
 */
#ifdef SIB_HAVE_DMA_BUF_VMAP_UNLOCKED
#define sib_dma_buf_vmap	dma_buf_vmap_unlocked
#define sib_dma_buf_vunmap	dma_buf_vunmap_unlocked
#else
#define sib_dma_buf_vmap	dma_buf_vmap
#define sib_dma_buf_vunmap	dma_buf_vunmap
#endif

/* The importer's "the buffer moves" callback in dma_buf_attach_ops. */
#ifdef SIB_HAVE_DMA_BUF_INVALIDATE_MAPPINGS
#define SIB_DMA_BUF_MOVE_OP	invalidate_mappings
#else
#define SIB_DMA_BUF_MOVE_OP	move_notify
#endif

/* The dma-buf symbols' namespace, as MODULE_IMPORT_NS() wants it. */
#ifdef SIB_HAVE_MODULE_IMPORT_NS_IDENT
#define SIB_NS_DMA_BUF		DMA_BUF
#else
#define SIB_NS_DMA_BUF		"DMA_BUF"
#endif

/*
 * FLUSH targets (IBA 1.5): Linux 6.2 and later let a registration ask
 * for IB_ACCESS_FLUSH_GLOBAL (SIB_ACCESS_FLUSH_GLOBAL, the uapi value)
 * when the device advertises IB_DEVICE_FLUSH_GLOBAL (bit 38 of the
 * capabilities). 6.1's ib_core refuses the flag, so sib does not
 * advertise the capability there (its requester still sends FLUSHes).
 */
#ifdef SIB_HAVE_IB_ACCESS_FLUSH
#define SIB_DEVICE_FLUSH_GLOBAL		BIT_ULL(38)
#else
#define SIB_DEVICE_FLUSH_GLOBAL		0
#endif

/* Pin @size bytes of the calling process' memory at @addr. */
static inline struct ib_umem *sib_umem_get(struct ib_device *dev,
					   unsigned long addr, size_t size,
					   int access)
{
#ifdef SIB_HAVE_IB_UMEM_GET_VA
	return ib_umem_get_va(dev, addr, size, access);
#else
	return ib_umem_get(dev, addr, size, access);
#endif
}

/* The structure of type @var's that embeds the timer_list @t as @field. */
#ifdef SIB_HAVE_TIMER_CONTAINER_OF
#define sib_timer_container_of(var, t, field)	\
	timer_container_of(var, t, field)
#else
#define sib_timer_container_of(var, t, field)	\
	from_timer(var, t, field)
#endif

/* @ndev's flags, as SIOCGIFFLAGS reports them (IFF_UP, IFF_RUNNING...). */
static inline unsigned int sib_netdev_flags(const struct net_device *ndev)
{
#ifdef SIB_HAVE_NETIF_GET_FLAGS
	return netif_get_flags(ndev);
#else
	return dev_get_flags(ndev);
#endif
}

/* @dev may not move to another network namespace. */
static inline void sib_netdev_set_netns_local(struct net_device *dev)
{
#if defined(SIB_HAVE_NETNS_IMMUTABLE)
	dev->netns_immutable = true;
#elif defined(SIB_HAVE_NETNS_LOCAL)
	dev->netns_local = true;
#else
	dev->features |= NETIF_F_NETNS_LOCAL;
#endif
}

/* @dev's transmit function needs no transmit queue lock. */
static inline void sib_netdev_set_lltx(struct net_device *dev)
{
#ifdef SIB_HAVE_NETDEV_LLTX
	dev->lltx = true;
#else
	dev->features |= NETIF_F_LLTX;
#endif
}

/* Free the page @nc holds; it may be used again. */
static inline void sib_page_frag_cache_drain(struct page_frag_cache *nc)
{
#ifdef SIB_HAVE_PAGE_FRAG_CACHE_DRAIN
	page_frag_cache_drain(nc);
#else
	if (nc->va)
		__page_frag_cache_drain(virt_to_head_page(nc->va),
					nc->pagecnt_bias);
	nc->va = NULL;
#endif
}

/* Make @sock, a kernel UDP socket, receive encapsulated packets. */
static inline void sib_setup_udp_tunnel_sock(struct net *net,
					     struct socket *sock,
					     struct udp_tunnel_sock_cfg *cfg)
{
#ifdef SIB_HAVE_UDP_TUNNEL_SOCK_SK
	setup_udp_tunnel_sock(net, sock->sk, cfg);
#else
	setup_udp_tunnel_sock(net, sock, cfg);
#endif
}

/* Shut @sock, a UDP tunnel socket, down and release it. */
static inline void sib_udp_tunnel_sock_release(struct socket *sock)
{
#ifdef SIB_HAVE_UDP_TUNNEL_SOCK_SK
	udp_tunnel_sock_release(sock->sk);
#else
	udp_tunnel_sock_release(sock);
#endif
}

/*
 * The IPv6 route for @fl6 in @net, with a reference, or an ERR_PTR();
 * through ipv6_stub where IPv6 can be a module that sib must not
 * depend on.
 */
static inline struct dst_entry *
sib_ip6_dst_lookup_flow(struct net *net, struct flowi6 *fl6)
{
#ifdef SIB_HAVE_IPV6_STUB
	return ipv6_stub->ipv6_dst_lookup_flow(net, NULL, fl6, NULL);
#else
	return ip6_dst_lookup_flow(net, NULL, fl6, NULL);
#endif
}

#endif /* SIB_COMPAT_H */
