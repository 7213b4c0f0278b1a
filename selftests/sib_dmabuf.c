// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * sib dma-buf MRs (ibv_reg_dmabuf_mr()) on sib0 over lo. Buffers come
 * from vgem (a DRM driver of shmem-backed dumb buffers that never move,
 * exported with DRM_IOCTL_PRIME_HANDLE_TO_FD) and from sib_dmabuf_exp.ko
 * (selftests/kverbs), a test exporter that moves its buffers on request.
 * RDMA WRITE into and READ out of a dma-buf MR, a dma-buf MR as the
 * source and the target of SEND, fetch-and-add on one, at offsets, data
 * checked byte for byte through the exporter's own mmap; every refusal
 * with its errno; dereg, closing the dma-buf first, process exit with a
 * live dma-buf MR (the objects come back); the exporter moving the
 * buffer: every later access fails with the IBTA status, and neither the
 * old pages nor the new ones are touched.
 *
 * QP 0 is the requester, QP 1 the responder.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>
#include <infiniband/verbs.h>

#include "kselftest_harness.h"
#include "sib_util.h"
#include "sib_pair_t.h"
#include "kverbs/sib_dmabuf_exp.h"
#include "rdma_user_sib.h"

#define BUFSZ		(64 * 1024)
#define DB_ACC		(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | \
			 IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC)
#define EXP_DEV		"/dev/sib_dmabuf_exp"

/* The DRM uapi that the test uses (no libdrm headers on the host). */
struct t_drm_version {
	int major, minor, patch;
	size_t name_len;
	char *name;
	size_t date_len;
	char *date;
	size_t desc_len;
	char *desc;
};

struct t_drm_create_dumb {
	uint32_t height, width, bpp, flags;
	uint32_t handle, pitch;
	uint64_t size;
};

struct t_drm_prime_handle {
	uint32_t handle, flags;
	int32_t fd;
};

#define T_DRM_IOCTL_VERSION	_IOWR('d', 0x00, struct t_drm_version)
#define T_DRM_IOCTL_PRIME_H2FD	_IOWR('d', 0x2d, struct t_drm_prime_handle)
#define T_DRM_IOCTL_CREATE_DUMB	_IOWR('d', 0xb2, struct t_drm_create_dumb)

/* A DRM node of vgem (loaded if needed), or -1. */
static int vgem_open(void)
{
	char path[64], name[32];
	int i, fd;

	shq("modprobe vgem");
	for (i = 0; i < 16; i++) {
		struct t_drm_version v = { .name_len = sizeof(name) - 1,
					   .name = name };

		snprintf(path, sizeof(path), "/dev/dri/card%d", i);
		fd = open(path, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;
		memset(name, 0, sizeof(name));
		if (!ioctl(fd, T_DRM_IOCTL_VERSION, &v) && !strcmp(name, "vgem"))
			return fd;
		close(fd);
	}
	return -1;
}

/* A vgem dumb buffer of @len bytes (pages), exported: its dma-buf fd. */
static int vgem_dmabuf(int card, size_t len)
{
	struct t_drm_create_dumb c = { .height = len / 4096, .width = 1024,
				       .bpp = 32 };
	struct t_drm_prime_handle h = { .flags = O_CLOEXEC | O_RDWR };

	if (ioctl(card, T_DRM_IOCTL_CREATE_DUMB, &c))
		return -1;
	h.handle = c.handle;
	if (ioctl(card, T_DRM_IOCTL_PRIME_H2FD, &h))
		return -1;
	return h.fd;
}

FIXTURE(vgem) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf l;		/* an ordinary MR */
	int card;
	int fd;			/* the dma-buf */
	uint8_t *map;		/* the exporter's mmap of it */
	struct ibv_mr *mr;	/* all of it, DB_ACC, iova 0 */
};

FIXTURE_SETUP(vgem)
{
	self->fd = -1;
	self->card = vgem_open();
	if (self->card < 0)
		SETUP_SKIP("no vgem device");
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, buf_new(&self->l, self->p.pd, BUFSZ, ACC_ALL));
	self->fd = vgem_dmabuf(self->card, BUFSZ);
	ASSERT_LE(0, self->fd) TH_LOG("vgem export: %s", strerror(errno));
	self->map = mmap(NULL, BUFSZ, PROT_READ | PROT_WRITE, MAP_SHARED,
			 self->fd, 0);
	ASSERT_NE(MAP_FAILED, self->map) TH_LOG("mmap: %s", strerror(errno));
	memset(self->map, 0xee, BUFSZ);
	self->mr = ibv_reg_dmabuf_mr(self->p.pd, 0, BUFSZ, 0, self->fd,
				     DB_ACC);
	ASSERT_NE(NULL, self->mr) TH_LOG("reg_dmabuf_mr: %s", strerror(errno));
	EXPECT_EQ(1, objects_value("dmabuf"));
}

FIXTURE_TEARDOWN(vgem)
{
	if (self->card < 0)
		return;
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->map && self->map != MAP_FAILED)
		munmap(self->map, BUFSZ);
	if (self->fd >= 0)
		close(self->fd);
	close(self->card);
	if (!self->ctx)
		return;
	EXPECT_EQ(0, objects_value("dmabuf"));
	buf_free(&self->l);
	pair_destroy(&self->p);
	sib_lo_teardown(self->ctx);
}

/* RDMA @op of @len bytes: QP 0's @sge and (@raddr, @rkey); status @st. */
static void rdma(struct __test_metadata *_metadata, struct pair *p,
		 enum ibv_wr_opcode op, struct ibv_sge *sge, uint64_t raddr,
		 uint32_t rkey, enum ibv_wc_status st)
{
	ASSERT_EQ(0, post_op(p->qp[0], op, 7, sge, 1, IBV_SEND_SIGNALED,
			     raddr, rkey));
	expect_wc("rdma", p->scq[0], 7, st, ANY, p->qp[0]->qp_num, ANY, NULL);
}

/* An SGE of a dma-buf MR, at @iova. */
static struct ibv_sge db_sge(struct ibv_mr *mr, uint64_t iova, uint32_t len)
{
	return (struct ibv_sge){ .addr = iova, .length = len,
				 .lkey = mr->lkey };
}

TEST_F(vgem, write_read)
{
	static const struct { size_t off, len; } c[] = {
		{ 0, 1 }, { 1, 4095 }, { 4095, 2 }, { 4097, 8191 },
		{ 100, 3 * 4096 + 7 }, { 0, BUFSZ },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(c); i++) {
		struct ibv_sge sge = mk_sge(&self->l, 0, c[i].len);

		/* WRITE into the dma-buf MR: its rkey. */
		memset(self->map, 0xee, BUFSZ);
		fill_pattern(self->l.p, c[i].len, i + 1);
		rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, c[i].off,
		     self->mr->rkey, IBV_WC_SUCCESS);
		EXPECT_SAME(self->map + c[i].off, self->l.p, c[i].len, "write");
		EXPECT_UNTOUCHED(self->map, c[i].off, 0xee, "before");
		EXPECT_UNTOUCHED(self->map + c[i].off + c[i].len,
				 BUFSZ - c[i].off - c[i].len, 0xee, "after");

		/* READ out of it. */
		fill_pattern(self->map + c[i].off, c[i].len, i + 100);
		memset(self->l.p, 0, BUFSZ);
		rdma(_metadata, &self->p, IBV_WR_RDMA_READ, &sge, c[i].off,
		     self->mr->rkey, IBV_WC_SUCCESS);
		EXPECT_SAME(self->l.p, self->map + c[i].off, c[i].len, "read");

		/* The dma-buf MR as the local side: WRITE from, READ into. */
		sge = db_sge(self->mr, c[i].off, c[i].len);
		memset(self->l.p, 0x11, BUFSZ);
		rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge,
		     buf_addr(&self->l, 0), self->l.mr->rkey, IBV_WC_SUCCESS);
		EXPECT_SAME(self->l.p, self->map + c[i].off, c[i].len,
			    "write from");
		fill_pattern(self->l.p, c[i].len, i + 200);
		rdma(_metadata, &self->p, IBV_WR_RDMA_READ, &sge,
		     buf_addr(&self->l, 0), self->l.mr->rkey, IBV_WC_SUCCESS);
		EXPECT_SAME(self->map + c[i].off, self->l.p, c[i].len,
			    "read into");
	}
}

TEST_F(vgem, send_recv)
{
	uint32_t len = 3 * 4096 + 5;
	struct ibv_sge s, r;

	/* From the dma-buf MR into an ordinary one. */
	fill_pattern(self->map + 17, len, 5);
	memset(self->l.p, 0, BUFSZ);
	r = mk_sge(&self->l, 0, len);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 9, &r, 1));
	s = db_sge(self->mr, 17, len);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 8, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 8, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 9, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, len, NULL);
	EXPECT_SAME(self->l.p, self->map + 17, len, "send from");

	/* From an ordinary MR into the dma-buf MR. */
	memset(self->map, 0xee, BUFSZ);
	fill_pattern(self->l.p, len, 6);
	r = db_sge(self->mr, 4099, len);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 11, &r, 1));
	s = mk_sge(&self->l, 0, len);
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 10, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 10, IBV_WC_SUCCESS, IBV_WC_SEND,
		  self->p.qp[0]->qp_num, ANY, NULL);
	expect_wc("recv", self->p.rcq[1], 11, IBV_WC_SUCCESS, IBV_WC_RECV,
		  self->p.qp[1]->qp_num, len, NULL);
	EXPECT_SAME(self->map + 4099, self->l.p, len, "recv into");
	EXPECT_UNTOUCHED(self->map, 4099, 0xee, "before");
	EXPECT_UNTOUCHED(self->map + 4099 + len, BUFSZ - 4099 - len, 0xee,
			 "after");
}

TEST_F(vgem, fetch_add)
{
	struct ibv_sge sge = mk_sge(&self->l, 0, 8);
	uint64_t v = 41, got;

	memcpy(self->map + 4096, &v, 8);
	ASSERT_EQ(0, post_atomic(self->p.qp[0], IBV_WR_ATOMIC_FETCH_AND_ADD,
				 3, &sge, IBV_SEND_SIGNALED, 4096,
				 self->mr->rkey, 1, 0));
	expect_wc("fadd", self->p.scq[0], 3, IBV_WC_SUCCESS, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	memcpy(&got, self->l.p, 8);
	EXPECT_EQ(41, got);
	memcpy(&got, self->map + 4096, 8);
	EXPECT_EQ(42, got);
}

/* An MR of part of the buffer, at an iova of its own. */
TEST_F(vgem, offset_iova)
{
	uint64_t off = 2 * 4096 + 100, iova = 0x7000000000ULL + 100;
	uint32_t len = 4096;
	struct ibv_sge sge = mk_sge(&self->l, 0, len);
	struct ibv_mr *mr;

	mr = ibv_reg_dmabuf_mr(self->p.pd, off, 2 * len, iova, self->fd,
			       DB_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("reg: %s", strerror(errno));
	EXPECT_EQ(2 * len, mr->length);
	memset(self->map, 0xee, BUFSZ);
	fill_pattern(self->l.p, len, 9);
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, iova + len,
	     mr->rkey, IBV_WC_SUCCESS);
	EXPECT_SAME(self->map + off + len, self->l.p, len, "write at iova");
	EXPECT_UNTOUCHED(self->map, off + len, 0xee, "before");
	/* One byte past the MR's end. */
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, iova + len + 1,
	     mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_UNTOUCHED(self->map + off + 2 * len,
			 BUFSZ - off - 2 * len, 0xee, "past the end");
	EXPECT_EQ(0, ibv_dereg_mr(mr));
}

TEST_F(vgem, refused)
{
	long long mr0 = objects_value("mr");
	int file = open("/proc/self/exe", O_RDONLY | O_CLOEXEC);
	static const struct {
		uint64_t off, len, iova;
		int fd, access, err;
		const char *what;
	} c[] = {
		{ 0, 4096, 0, -1, DB_ACC, EBADF, "fd -1" },
		{ 0, 4096, 0, 1000, DB_ACC, EBADF, "fd not open" },
		{ 0, 4096, 0, -2, DB_ACC, EINVAL, "not a dma-buf" },
		{ BUFSZ, 4096, 0, 0, DB_ACC, EINVAL, "offset at the end" },
		{ 4096, BUFSZ, 0, 0, DB_ACC, EINVAL, "past the end" },
		{ 1ULL << 62, 4096, 0, 0, DB_ACC, EINVAL, "offset far away" },
		{ UINT64_MAX - 4095, 8192, UINT64_MAX - 4095, 0, DB_ACC, EINVAL,
		  "offset + length overflow" },
		{ 0, 4096, UINT64_MAX - 4095, 0, DB_ACC, EINVAL,
		  "iova + length overflow" },
		{ 0, 0, 0, 0, DB_ACC, EINVAL, "length 0" },
		{ 0, 4096, 1, 0, DB_ACC, EINVAL, "iova and offset apart" },
		{ 0, 4096, 0, 0, DB_ACC | IBV_ACCESS_ON_DEMAND, EINVAL, "ODP" },
		{ 0, 4096, 0, 0, DB_ACC | IBV_ACCESS_MW_BIND, EINVAL,
		  "MW_BIND" },
		{ 0, 4096, 0, 0, IBV_ACCESS_REMOTE_WRITE, EINVAL,
		  "remote write without local write" },
		{ 0, 4096, 0, 0, 1 << 29, EINVAL, "unknown access flag" },
	};
	size_t i;

	ASSERT_LE(0, file);
	EXPECT_TRUE(sh_num("cat /sys/class/infiniband/" SIB_DEV "/"
			   SIB_SYSFS_CAPS) & SIB_UCTX_CAP_DMABUF);
	for (i = 0; i < ARRAY_SIZE(c); i++) {
		int fd = c[i].fd == -2 ? file : c[i].fd ? c[i].fd : self->fd;
		struct ibv_mr *mr;

		errno = 0;
		mr = ibv_reg_dmabuf_mr(self->p.pd, c[i].off, c[i].len,
				       c[i].iova, fd, c[i].access);
		EXPECT_EQ(NULL, mr) TH_LOG("%s: registered", c[i].what);
		if (mr)
			ibv_dereg_mr(mr);
		EXPECT_EQ(c[i].err, errno) TH_LOG("%s: %s", c[i].what,
						  strerror(errno));
	}
	close(file);
	EXPECT_EQ(mr0, objects_value("mr"));
	EXPECT_EQ(1, objects_value("dmabuf"));
}

/*
 * Dereg: the key no longer answers and the buffer is released; an MR
 * outlives the close of its dma-buf fd (it holds the buffer).
 */
TEST_F(vgem, dereg)
{
	struct ibv_sge sge = mk_sge(&self->l, 0, 4096);
	uint32_t rkey = self->mr->rkey;

	EXPECT_EQ(0, close(self->fd));
	self->fd = -1;
	fill_pattern(self->l.p, 4096, 3);
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, 4096, rkey,
	     IBV_WC_SUCCESS);
	EXPECT_SAME(self->map + 4096, self->l.p, 4096, "after close");
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, objects_value("dmabuf"));
	memset(self->map, 0xee, BUFSZ);
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, 4096, rkey,
	     IBV_WC_REM_ACCESS_ERR);
	EXPECT_UNTOUCHED(self->map, BUFSZ, 0xee, "after dereg");
}

/* A process that exits with a live dma-buf MR leaves nothing behind. */
TEST_F(vgem, exit_with_mr)
{
	long long mr0 = objects_value("mr");
	pid_t pid = fork();
	int status;

	ASSERT_LE(0, pid);
	if (!pid) {
		struct ibv_context *ctx = pair_open_dev(SIB_DEV);
		struct ibv_pd *pd = ctx ? ibv_alloc_pd(ctx) : NULL;
		int fd = vgem_dmabuf(self->card, BUFSZ);

		if (!pd || fd < 0 ||
		    !ibv_reg_dmabuf_mr(pd, 0, BUFSZ, 0, fd, DB_ACC) ||
		    !ibv_reg_dmabuf_mr(pd, 4096, 4096, 4096, fd, DB_ACC))
			_exit(1);
		close(fd);
		_exit(objects_value("dmabuf") == 3 ? 0 : 2);
	}
	ASSERT_EQ(pid, waitpid(pid, &status, 0));
	ASSERT_TRUE(WIFEXITED(status));
	EXPECT_EQ(0, WEXITSTATUS(status));
	EXPECT_EQ(1, objects_value("dmabuf"));
	EXPECT_EQ(mr0, objects_value("mr"));
}

/* ------------------------------------------------------------------
 * The moving exporter (sib_dmabuf_exp.ko)
 */
static const char *exp_ko(void)
{
	static char path[PATH_MAX];
	char exe[PATH_MAX];
	ssize_t n;

	if (getenv("SIB_DMABUF_EXP_KO"))
		return getenv("SIB_DMABUF_EXP_KO");
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		return "selftests/kverbs/sib_dmabuf_exp.ko";
	exe[n] = 0;
	snprintf(path, sizeof(path),
		 "%s/../../selftests/kverbs/sib_dmabuf_exp.ko", dirname(exe));
	return path;
}

static int exp_rw(int dev, int fd, bool write, bool old, uint64_t off,
		  void *p, uint64_t len)
{
	struct sib_exp_rw a = { .fd = fd, .write = write, .old = old,
				.off = off, .len = len,
				.uaddr = (uintptr_t)p };

	return ioctl(dev, SIB_EXP_RW, &a) ? errno : 0;
}

FIXTURE(mover) {
	struct ibv_context *ctx;
	int gid;
	struct pair p;
	struct buf l;
	int dev;		/* /dev/sib_dmabuf_exp */
	int fd;			/* a buffer of BUFSZ */
	struct ibv_mr *mr;	/* all of it, DB_ACC */
	uint8_t *shadow;	/* what the buffer should hold */
	uint8_t *tmp;
};

FIXTURE_SETUP(mover)
{
	struct sib_exp_create c = { .pages = BUFSZ / 4096 };

	self->dev = -1;
	self->fd = -1;
	self->ctx = sib_lo_setup(&self->gid);
	ASSERT_NE(NULL, self->ctx);
	ASSERT_EQ(0, sh("insmod %s", exp_ko()));
	self->dev = open(EXP_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, self->dev) TH_LOG(EXP_DEV ": %s", strerror(errno));
	ASSERT_EQ(0, pair_create(&self->p, self->ctx, NULL, self->gid, NULL));
	ASSERT_EQ(0, buf_new(&self->l, self->p.pd, BUFSZ, ACC_ALL));
	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_CREATE, &c));
	self->fd = c.fd;
	self->shadow = malloc(BUFSZ);
	self->tmp = malloc(BUFSZ);
	ASSERT_NE(NULL, self->shadow);
	ASSERT_NE(NULL, self->tmp);
	fill_pattern(self->shadow, BUFSZ, 77);
	ASSERT_EQ(0, exp_rw(self->dev, self->fd, true, false, 0,
			    self->shadow, BUFSZ));
	self->mr = ibv_reg_dmabuf_mr(self->p.pd, 0, BUFSZ, 0, self->fd,
				     DB_ACC);
	ASSERT_NE(NULL, self->mr) TH_LOG("reg_dmabuf_mr: %s", strerror(errno));
}

FIXTURE_TEARDOWN(mover)
{
	if (self->mr)
		EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	if (self->fd >= 0)
		close(self->fd);
	if (self->dev >= 0)
		close(self->dev);
	free(self->shadow);
	free(self->tmp);
	if (!self->ctx)
		return;
	buf_free(&self->l);
	pair_destroy(&self->p);
	EXPECT_EQ(0, objects_value("dmabuf"));
	/* The module goes only once no one holds one of its buffers. */
	EXPECT_EQ(0, shq("rmmod sib_dmabuf_exp"));
	sib_lo_teardown(self->ctx);
}

/* The buffer's current (or old) pages hold exactly self->shadow. */
#define EXPECT_BUFFER(old, what) do { \
	ASSERT_EQ(0, exp_rw(self->dev, self->fd, false, old, 0, self->tmp, \
			    BUFSZ)); \
	EXPECT_SAME(self->tmp, self->shadow, BUFSZ, what); \
} while (0)

TEST_F(mover, write_then_move)
{
	struct ibv_sge sge = mk_sge(&self->l, 0, 8192);
	long long rev0 = sib0_counter("dmabuf_revocations");

	/* Before the move: the MR works. */
	fill_pattern(self->l.p, 8192, 1);
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, 4000,
	     self->mr->rkey, IBV_WC_SUCCESS);
	memcpy(self->shadow + 4000, self->l.p, 8192);
	EXPECT_BUFFER(false, "before the move");

	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_MOVE, self->fd));
	EXPECT_EQ(rev0 + 1, sib0_counter("dmabuf_revocations"));
	/* The new pages got the bytes from the exporter. */
	EXPECT_BUFFER(false, "new pages");

	/* WRITE through the rkey: remote access error, nothing written. */
	fill_pattern(self->l.p, 8192, 2);
	rdma(_metadata, &self->p, IBV_WR_RDMA_WRITE, &sge, 4000,
	     self->mr->rkey, IBV_WC_REM_ACCESS_ERR);
	EXPECT_BUFFER(false, "new pages after the WRITE");
	EXPECT_BUFFER(true, "old pages after the WRITE");
	EXPECT_TRUE(qp_wait_state(self->p.qp[0], IBV_QPS_ERR, 1000));
}

TEST_F(mover, read_then_move)
{
	struct ibv_sge sge = mk_sge(&self->l, 0, 4096);

	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_MOVE, self->fd));
	memset(self->l.p, 0x5a, BUFSZ);
	rdma(_metadata, &self->p, IBV_WR_RDMA_READ, &sge, 0, self->mr->rkey,
	     IBV_WC_REM_ACCESS_ERR);
	EXPECT_UNTOUCHED(self->l.p, BUFSZ, 0x5a, "READ target");
	/* Moving again changes nothing for sib. */
	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_MOVE, self->fd));
	EXPECT_BUFFER(false, "new pages");
}

/* Revoked as an lkey: SEND from it, RECV into it. */
TEST_F(mover, lkey_after_move)
{
	struct ibv_sge s = db_sge(self->mr, 0, 4096), r = mk_sge(&self->l, 0,
								 4096);

	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_MOVE, self->fd));
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 9, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 8, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("send", self->p.scq[0], 8, IBV_WC_LOC_PROT_ERR, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_TRUE(cq_quiet(self->p.rcq[1], 100));

	/* Again: the dma-buf MR as a receive buffer. */
	ASSERT_EQ(0, pair_reconnect(&self->p));
	r = db_sge(self->mr, 0, 4096);
	s = mk_sge(&self->l, 0, 4096);
	ASSERT_EQ(0, post_recv_sges(self->p.qp[1], 11, &r, 1));
	ASSERT_EQ(0, post_op(self->p.qp[0], IBV_WR_SEND, 10, &s, 1,
			     IBV_SEND_SIGNALED, 0, 0));
	expect_wc("recv", self->p.rcq[1], 11, IBV_WC_LOC_PROT_ERR, ANY,
		  self->p.qp[1]->qp_num, ANY, NULL);
	expect_wc("send", self->p.scq[0], 10, IBV_WC_REM_OP_ERR, ANY,
		  self->p.qp[0]->qp_num, ANY, NULL);
	EXPECT_BUFFER(false, "new pages");
	EXPECT_BUFFER(true, "old pages");
}

/* A buffer of the exporter works like vgem's until it moves; dereg after. */
TEST_F(mover, dereg_after_move)
{
	ASSERT_EQ(0, ioctl(self->dev, SIB_EXP_MOVE, self->fd));
	EXPECT_EQ(1, objects_value("dmabuf"));
	EXPECT_EQ(0, ibv_dereg_mr(self->mr));
	self->mr = NULL;
	EXPECT_EQ(0, objects_value("dmabuf"));
}

/*
 * Removing the device with a live dma-buf MR releases the buffer: the
 * exporter's module, which each of its buffers holds, then unloads
 * before the process deregisters anything.
 */
TEST(device_removal_with_mr)
{
	struct sib_exp_create c = { .pages = 4 };
	struct ibv_context *ctx;
	struct ibv_mr *mr;
	struct ibv_pd *pd;
	int gid, dev;

	ctx = sib_lo_setup(&gid);
	ASSERT_NE(NULL, ctx);
	pd = ibv_alloc_pd(ctx);
	ASSERT_NE(NULL, pd);
	ASSERT_EQ(0, sh("insmod %s", exp_ko()));
	dev = open(EXP_DEV, O_RDWR | O_CLOEXEC);
	ASSERT_LE(0, dev);
	ASSERT_EQ(0, ioctl(dev, SIB_EXP_CREATE, &c));
	mr = ibv_reg_dmabuf_mr(pd, 0, 4 * 4096, 0, c.fd, DB_ACC);
	ASSERT_NE(NULL, mr) TH_LOG("reg_dmabuf_mr: %s", strerror(errno));
	close(c.fd);
	close(dev);
	/* The MR holds the buffer, which holds the module. */
	EXPECT_NE(0, shq("rmmod sib_dmabuf_exp"));
	EXPECT_EQ(0, nl_dellink(SIB_DEV));
	EXPECT_TRUE(wait_path(SIB_SYSFS_IB "/" SIB_DEV, false, 10000));
	EXPECT_EQ(0, shq("rmmod sib_dmabuf_exp"));
	ibv_dereg_mr(mr);
	ibv_dealloc_pd(pd);
	ibv_close_device(ctx);
	EXPECT_EQ(0, module_unload());
}

SIB_HARNESS_MAIN
