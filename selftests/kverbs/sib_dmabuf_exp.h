/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * The ioctls of sib_dmabuf_exp.ko (/dev/sib_dmabuf_exp), the test
 * exporter of selftests/sib_dmabuf.c. Shared by the module and the test.
 */
#ifndef SIB_DMABUF_EXP_H
#define SIB_DMABUF_EXP_H

#include <linux/ioctl.h>
#include <linux/types.h>

/* SIB_EXP_CREATE: a dma-buf of @pages zeroed pages; its fd in @fd. */
struct sib_exp_create {
	__u32 pages;
	__s32 fd;
};

/*
 * SIB_EXP_RW: copy @len bytes at @off of the buffer @fd to (@write 0) or
 * from (@write 1) the user memory at @uaddr; @old 1 means the pages the
 * buffer had before its last move (EINVAL if it never moved).
 */
struct sib_exp_rw {
	__s32 fd;
	__u32 write;
	__u32 old;
	__u32 reserved;
	__u64 off;
	__u64 len;
	__u64 uaddr;
};

/*
 * SIB_EXP_MOVE: give the buffer @fd new pages with the same bytes, after
 * telling its importers (dma_buf_move_notify()); the old pages stay, for
 * SIB_EXP_RW, until the buffer is freed. @arg is the fd.
 */
#define SIB_EXP_CREATE	_IOWR('S', 1, struct sib_exp_create)
#define SIB_EXP_RW	_IOW('S', 2, struct sib_exp_rw)
#define SIB_EXP_MOVE	_IO('S', 3)

#endif /* SIB_DMABUF_EXP_H */
