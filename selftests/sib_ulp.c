// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Kernel consumers (ULPs) on an RDMA device: NVMe over RDMA (the nvmet-rdma
 * target on a brd ramdisk, the nvme-rdma host), NFS over RDMA (knfsd's
 * RDMA listener, mounts with proto=rdma for NFSv3 and NFSv4.2), iSCSI
 * over iSER and SRP (LIO's ib_isert and ib_srpt on the ramdisk,
 * open-iscsi with ib_iser, ib_srp), every byte verified. Each test runs
 * on rdma_rxe (variant rxe: proves the harness) and on sib (variant
 * sib), the device on a veth whose address both ends use: rxe does not
 * work on lo, and both rxe and sib keep traffic to their own address on
 * the device (sib on its local path).
 *
 * Every external command runs under timeout(1) with its output in
 * /tmp/sib-ulp/<step>.log; a failed step is named, with the tail of its
 * log and of the kernel log. Each data check is shown to fail on
 * corrupted data in the same test: a block of the target's ramdisk, or a
 * byte of the exported file, is overwritten behind the host's back, and
 * fio's verification or the comparison must then fail.
 *
 * Options: -t NAME (run only tests NAME; repeatable), -v VARIANT (rxe or
 * sib; repeatable), -l (list). SIB_ULP_NFS_MB sets the size of the NFS
 * file (default 64; 1024 needs a guest with vm-run -m 4G).
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <linux/rds.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "kselftest_harness.h"
#include "sib_harness.h"
#include "sib_util.h"

#define LOGDIR		"/tmp/sib-ulp"
#define VETH		"sibu0"
#define VETH_PEER	"sibu1"
#define ADDR		"203.0.113.1"
#define NET		"203.0.113.0/24"

#define NQN		"nqn.2024-12.io.sib:ulp"
#define NVMET		"/sys/kernel/config/nvmet"
#define SUBSYS		NVMET "/subsystems/" NQN
#define PORT		NVMET "/ports/1"
#define RAMDISK		"/dev/ram0"
#define RAMDISK_MB	64
/*
 * --reconnect-delay 1: after a lost connection the host retries every
 * second; --ctrl-loss-tmo 30: for 30 s, holding its I/O meanwhile.
 */
#define CONNECT		"nvme connect -t rdma -a " ADDR " -s 4420 -n " NQN \
			" -i 4 --reconnect-delay 1"
#define CONNECT_TMO	" --ctrl-loss-tmo 30"
/*
 * On a slow kernel (the debug lane's), a keep-alive can take longer than
 * the target's default 5 s under nvme_faults' loss, and the target then
 * ends the controller: give keep-alive 30 s and the host 300 s to
 * reconnect. NVMe's timers are not what these tests check.
 */
#define CONNECT_SLOW	" --keep-alive-tmo 30 --ctrl-loss-tmo 300"

/* Two regions of the namespace: 4 KiB random writes, 1 MiB sequential. */
#define FIO		"fio --filename=%s --direct=1 --ioengine=libaio " \
			"--iodepth=32 --verify=crc32c --verify_fatal=1 "
#define FIO_RAND	FIO "--name=rand --rw=randwrite --bs=4k --offset=0 --size=8M "
#define FIO_SEQ		FIO "--name=seq --rw=write --bs=1M --offset=16M --size=32M "
#define RAND_CORRUPT	"seek=100 bs=4k"	/* a block of the random region */
#define SEQ_CORRUPT	"seek=5000 bs=4k"	/* one of the sequential region */

#define EXPORT		LOGDIR "/export"
#define MNT		LOGDIR "/mnt"
#define EXPORTS_FILE	"/etc/exports.d/sib-ulp.exports"
#define NFS_PORT	"20049"
#define PIPEFS		LOGDIR "/rpc_pipefs"	/* nfsdcld's rpc_pipefs */
#define CLD_DIR		LOGDIR "/nfsdcld"	/* nfsdcld's client records */

/* ---- steps -------------------------------------------------------------- */

/*
 * What a failed step leaves to look at: the kernel log, every QP and CQ
 * of the RDMA devices with its engine state (sib's restrack driver
 * attributes: Documentation/tracing.md), sib's counters (retransmits, RNR,
 * drops) and, when the sib trace events are on (tracefs mounted and
 * events/sib/enable set beforehand), the last of the trace.
 */
static void show_dmesg(void)
{
	sh("dmesg | tail -n 30 | sed 's/^/# dmesg: /' >&2");
	sh("rdma res show qp -dd 2>&1 | sed 's/^/# qp: /' >&2");
	sh("rdma res show cq -dd 2>&1 | sed 's/^/# cq: /' >&2");
	sh("for d in /sys/class/infiniband/*; do [ -e $d/sib_abi ] || continue; "
	   "rdma statistic show link ${d##*/}/1 2>&1 | tr ' ' '\\n' | "
	   "paste -d' ' - - | awk '$2 != 0' | tr '\\n' ' ' | "
	   "sed \"s/^/# ${d##*/} counters: /\"; echo; done >&2");
	sh("t=/sys/kernel/tracing; [ \"$(cat $t/events/sib/enable 2>/dev/null)\" = 1 ] && "
	   "tail -n 200 $t/trace | sed 's/^/# trace: /' >&2");
}

/* @s in single quotes for the shell (a static buffer: one at a time). */
static const char *quote(const char *s)
{
	static char buf[4096];
	size_t n = 0;

	buf[n++] = '\'';
	for (; *s && n < sizeof(buf) - 6; s++) {
		if (*s == '\'') {
			memcpy(buf + n, "'\\''", 4);
			n += 4;
		} else {
			buf[n++] = *s;
		}
	}
	buf[n++] = '\'';
	buf[n] = 0;
	return buf;
}

/*
 * Run step @name: the command made from @fmt under "timeout -k 5 @secs",
 * its output in LOGDIR/@name.log. On failure, say which step failed and
 * show the tail of its log and of dmesg. Returns the exit status.
 */
static int __attribute__((format(printf, 3, 4)))
step(const char *name, int secs, const char *fmt, ...)
{
	char *cmd;
	va_list ap;
	int rc;

	va_start(ap, fmt);
	if (vasprintf(&cmd, fmt, ap) < 0)
		cmd = NULL;
	va_end(ap);
	if (!cmd)
		return -1;
	rc = sh("timeout -k 5 %d sh -c %s > " LOGDIR "/%s.log 2>&1",
		secs, quote(cmd), name);
	if (rc) {
		fprintf(stderr, "# step %s failed (exit %d%s): %s\n", name, rc,
			rc == 124 || rc == 137 ? ", timed out" : "", cmd);
		sh("tail -n 20 " LOGDIR "/%s.log | sed 's/^/# %s: /' >&2",
		   name, name);
		show_dmesg();
	}
	free(cmd);
	return rc;
}

/* Start @cmd in the background (LOGDIR/@name.pid, exit status in .rc). */
static int step_bg(const char *name, int secs, const char *cmd)
{
	return sh("rm -f " LOGDIR "/%s.rc; "
		  "( timeout -k 5 %d sh -c %s > " LOGDIR "/%s.log 2>&1 & "
		  "  echo $! > " LOGDIR "/%s.pid; wait $!; "
		  "  echo $? > " LOGDIR "/%s.rc ) &",
		  name, secs, quote(cmd), name, name, name);
}

/* Wait for background step @name: its exit status, or -1 if still running. */
static int step_wait(const char *name, int secs)
{
	char path[128], buf[16];

	snprintf(path, sizeof(path), LOGDIR "/%s.rc", name);
	for (int i = 0; i < secs * 10; i++) {
		if (read_text(path, buf, sizeof(buf)) > 0) {
			int rc = atoi(buf);

			/* its pid is nobody's now: not for ulp_cleanup() */
			shq("rm -f " LOGDIR "/%s.pid", name);

			if (rc) {
				fprintf(stderr, "# step %s failed (exit %d)\n",
					name, rc);
				sh("tail -n 20 " LOGDIR "/%s.log | sed 's/^/# %s: /' >&2",
				   name, name);
				show_dmesg();
			}
			return rc;
		}
		usleep(100000);
	}
	fprintf(stderr, "# step %s still running after %d s\n", name, secs);
	show_dmesg();
	return -1;
}

/* ---- environment -------------------------------------------------------- */

static void nvme_host_down(void)
{
	shq("timeout -k 5 60 nvme disconnect -n " NQN);
}

static void nvmet_port_del(void)
{
	shq("rm -f " PORT "/subsystems/" NQN "; rmdir " PORT);
}

static void nfs_down(void)
{
	shq("timeout -k 5 60 umount " MNT " || umount -f -l " MNT);
	shq("timeout -k 5 60 rpc.nfsd 0");
	shq("timeout -k 5 30 exportfs -ua; rm -f " EXPORTS_FILE);
	shq("for p in " LOGDIR "/*.pid; do [ -f $p ] && kill $(cat $p); "
	    "rm -f $p; done; sleep 0.2");
	shq("umount " EXPORT);
	shq("umount " PIPEFS " || umount -l " PIPEFS);
}

/*
 * A LIO target on the brd ramdisk (an iblock backstore), exported twice:
 * by iscsi_target_mod with an iSER portal (ib_isert) and by ib_srpt; the
 * initiators are open-iscsi with an iser iface (ib_iser) and ib_srp. The
 * SCSI disk is found through sysfs and checked with the same fio jobs as
 * NVMe, the same corruption of the ramdisk behind the initiator's back.
 */
#define LIO		"/sys/kernel/config/target"
#define BACKSTORE	LIO "/core/iblock_0/sib_ulp"
#define IQN		"iqn.2024-12.io.sib:ulp"
#define ISCSI_TPG	LIO "/iscsi/" IQN "/tpgt_1"
#define ISCSI_PORTAL	ADDR ":3260"
#define ISCSI_NP	ISCSI_TPG "/np/" ISCSI_PORTAL
#define INITIATOR	LOGDIR "/initiatorname.iscsi"
#define IFACE		"sib_iser"
#define ISCSI_NODE	"iscsiadm -m node -T " IQN " -p " ISCSI_PORTAL " -I " IFACE
#define SRPT		LIO "/srpt"
#define SRP_PORT	"5555"	/* ib_srpt's RDMA/CM listener (rdma_cm_port) */

/*
 * iscsid is needed to log out; after a test killed by its timeout it may
 * be gone (ulp_cleanup() kills what step_bg() started), so a session left
 * behind gets a new iscsid first.
 */
static void iser_down(void)
{
	shq("ls -d /sys/class/iscsi_session/session* && "
	    "! grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix && "
	    "{ timeout -k 5 120 iscsid -f -n -i " INITIATOR " > " LOGDIR
	    "/iscsid_cleanup.log 2>&1 & echo $! > " LOGDIR "/iscsid.pid; "
	    "timeout 10 sh -c 'until grep -q ISCSIADM_ABSTRACT_NAMESPACE "
	    "/proc/net/unix; do sleep 0.1; done'; }");
	shq("ls -d /sys/class/iscsi_session/session* && "
	    "timeout -k 5 60 iscsiadm -m session -u");
	/*
	 * A session that outlives its logout keeps ib_iser loaded, and the
	 * next iscsid finds it in sysfs and tries to recover it: say so.
	 */
	sh("for i in $(seq 100); do ls -d /sys/class/iscsi_session/session* "
	   ">/dev/null 2>&1 || exit 0; sleep 0.1; done; "
	   "for s in /sys/class/iscsi_session/session*; do echo \"# iser_down: "
	   "${s##*/} ($(cat $s/state)) outlived its logout\"; done >&2");
	shq("timeout -k 5 30 iscsiadm -m node -o delete -T " IQN);
	shq("timeout -k 5 30 iscsiadm -m discoverydb -t st -p " ISCSI_PORTAL
	    " -o delete");
	shq("timeout -k 5 30 iscsiadm -m iface -I " IFACE " -o delete");
	/*
	 * iscsid gone, its socket with it, before the next test starts one:
	 * a new iscsid cannot bind the socket while the old one holds it.
	 */
	shq("[ -f " LOGDIR "/iscsid.pid ] && { p=$(cat " LOGDIR "/iscsid.pid); "
	    "kill $p; for i in $(seq 100); do kill -0 $p 2>/dev/null || break; "
	    "sleep 0.1; done; }; rm -f " LOGDIR "/iscsid.pid");
	sh("for i in $(seq 100); do grep -q ISCSIADM_ABSTRACT_NAMESPACE "
	   "/proc/net/unix || exit 0; sleep 0.1; done; "
	   "echo '# iser_down: an iscsid is still there' >&2");
	shq("rmmod ib_iser iscsi_tcp");
	sh("[ ! -d /sys/module/ib_iser ] || echo \"# iser_down: ib_iser stays "
	   "loaded (refcnt $(cat /sys/module/ib_iser/refcnt))\" >&2");
}

static void srp_down(void)
{
	shq("for p in /sys/class/srp_remote_ports/port-*; do "
	    "[ -e $p/delete ] && echo 1 > $p/delete; done");
	shq("timeout -k 5 60 rmmod ib_srp");
}

/*
 * The LIO configuration in reverse order: each portal group disabled,
 * the mapped LUNs of its ACLs, the ACLs, its LUNs, its portals, the
 * group, the target; the SRP listener; the backstore; the modules.
 */
static void lio_down(void)
{
	shq("cd " LIO " && for tpg in iscsi/" IQN "/tpgt_* srpt/*/tpgt_*; do "
	    "[ -d $tpg ] || continue; echo 0 > $tpg/enable; "
	    "for l in $tpg/acls/*/lun_*/* $tpg/lun/lun_*/*; do "
	    "[ -L $l ] && rm -f $l; done; "
	    "rmdir $tpg/acls/*/lun_*; rmdir $tpg/acls/*; rmdir $tpg/lun/lun_*; "
	    "rmdir $tpg/np/*; rmdir $tpg; done; "
	    "rmdir iscsi/" IQN "; for p in srpt/*; do [ \"$p\" != srpt/discovery_auth ] && "
	    "rmdir $p; done");
	shq("[ -d " SRPT " ] && echo 0 > " SRPT "/discovery_auth/rdma_cm_port");
	shq("rmdir " SRPT " " LIO "/iscsi");
	shq("rmdir " BACKSTORE " " LIO "/core/iblock_0");
	shq("timeout -k 5 60 rmmod ib_isert");
	shq("timeout -k 5 60 rmmod ib_srpt");
	shq("rmmod iscsi_target_mod target_core_iblock");
}

/*
 * Undo everything the tests set up, whatever state they left (also after
 * a test killed by its timeout, whose teardown did not run). Consumers
 * first, then the device.
 */
static void smb_down(void);
static void rds_down(void);

static void ulp_cleanup(void)
{
	iser_down();
	srp_down();
	lio_down();
	smb_down();
	rds_down();
	nfs_down();
	nvme_host_down();
	nvmet_port_del();
	/*
	 * fio, writing or verifying after its device went away, creates a
	 * plain file of that name, and devtmpfs makes no node over it.
	 */
	shq("for f in /dev/nvme*; do [ -f \"$f\" ] && rm -f \"$f\"; done");
	shq("echo 0 > " SUBSYS "/namespaces/1/enable; "
	    "rmdir " SUBSYS "/namespaces/1; rmdir " SUBSYS);
	/*
	 * Each bounded: after rdma_rxe kept a reference to a deleted netdev
	 * (remove_under_fio()), unloading it waits for that netdev forever,
	 * and a cleanup that hangs would cost the test its timeout.
	 */
	shq("timeout -k 5 60 rmmod brd");
	shq("timeout -k 5 60 rdma link del rxe_ulp");
	sib_delete_all();
	shq("timeout -k 5 60 rmmod rdma_rxe");
	shq("timeout -k 5 60 ip link del " VETH);
}

FIXTURE(ulp) {
	time_t start;
	long long sent;		/* sent_pkts when a data phase started */
	char ctrl[32];		/* nvmeN */
	char dev[64];		/* /dev/nvmeNnM */
};

FIXTURE_VARIANT(ulp) {
	const char *type;	/* of "rdma link add" */
	const char *ibdev;
};

FIXTURE_VARIANT_ADD(ulp, rxe) {
	.type = "rxe",
	.ibdev = "rxe_ulp",
};

FIXTURE_VARIANT_ADD(ulp, sib) {
	.type = "sib",
	.ibdev = "sib_ulp",
};

/*
 * The veth pair, its address, and the device on it. sib and rdma_rxe
 * cannot both own UDP port 4791: rdma_rxe is not loaded for sib.
 */
static int dev_setup(const char *type, const char *ibdev)
{
	if (sh("mkdir -p " LOGDIR " " EXPORT " " MNT))
		return -1;
	if (!strcmp(type, "sib")) {
		if (module_load())
			return -1;
	} else if (step("modprobe_rxe", 60, "modprobe rdma_rxe")) {
		return -1;
	}
	if (step("veth", 30,
		 "ip link add " VETH " type veth peer name " VETH_PEER " && "
		 "ip addr add " ADDR "/24 dev " VETH " && "
		 "ip link set " VETH " up && ip link set " VETH_PEER " up"))
		return -1;
	if (step("link_add", 60, "rdma link add %s type %s netdev " VETH,
		 ibdev, type))
		return -1;
	if (wait_gid_index(ibdev, ADDR) < 0) {
		fprintf(stderr, "# no GID for " ADDR " on %s\n", ibdev);
		return -1;
	}
	return 0;
}

FIXTURE_SETUP(ulp)
{
	int ret;

	self->start = time(NULL);
	ulp_cleanup();
	dmesg_clear();
	ret = dev_setup(variant->type, variant->ibdev);
	if (ret) {
		show_dmesg();
		ulp_cleanup();
	}
	ASSERT_EQ(0, ret) TH_LOG("setting up %s on " VETH, variant->ibdev);
}

FIXTURE_TEARDOWN(ulp)
{
	ulp_cleanup();
	fprintf(stderr, "# %s took %ld s\n", variant->ibdev,
		(long)(time(NULL) - self->start));
}

/* Start counting the device's packets. */
static void count_start(FIXTURE_DATA(ulp) *self, const char *ibdev)
{
	self->sent = hw_counter(ibdev, "sent_pkts");
}

/* Packets the device sent since count_start(), or -1. */
static long long count_sent(FIXTURE_DATA(ulp) *self, const char *ibdev)
{
	long long now = hw_counter(ibdev, "sent_pkts");

	return now < 0 || self->sent < 0 ? -1 : now - self->sent;
}

/* ---- NVMe over RDMA ------------------------------------------------------ */

/* The subsystem with its namespace on the ramdisk, not yet on a port. */
static int nvmet_subsys_up(void)
{
	return step("modprobe_nvme", 60,
		    "modprobe brd rd_nr=1 rd_size=%d && modprobe nvmet-rdma && "
		    "modprobe nvme-rdma", RAMDISK_MB * 1024) ||
	       step("nvmet_subsys", 30,
		    "mkdir " SUBSYS " && "
		    "echo 1 > " SUBSYS "/attr_allow_any_host && "
		    "mkdir " SUBSYS "/namespaces/1 && "
		    "echo " RAMDISK " > " SUBSYS "/namespaces/1/device_path && "
		    "echo 1 > " SUBSYS "/namespaces/1/enable");
}

/* Port 1 (rdma, ADDR:4420) with the subsystem on it: it listens. */
static int nvmet_port_add(void)
{
	return step("nvmet_port", 30,
		    "mkdir " PORT " && cd " PORT " && "
		    "echo rdma > addr_trtype && echo ipv4 > addr_adrfam && "
		    "echo " ADDR " > addr_traddr && echo 4420 > addr_trsvcid && "
		    "ln -s " SUBSYS " " PORT "/subsystems/" NQN);
}

static bool file_is(const char *path, const char *want)
{
	char buf[256];

	if (read_text(path, buf, sizeof(buf)) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = 0;
	return !strcmp(buf, want);
}

/* The name of our RDMA controller (nvmeN) in @ctrl, or false. */
static bool find_ctrl(char *ctrl, size_t size)
{
	char path[256];
	bool found = false;
	glob_t g;

	if (glob("/sys/class/nvme/nvme*", 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc && !found; i++) {
		snprintf(path, sizeof(path), "%s/subsysnqn", g.gl_pathv[i]);
		if (!file_is(path, NQN))
			continue;
		snprintf(path, sizeof(path), "%s/transport", g.gl_pathv[i]);
		if (!file_is(path, "rdma"))
			continue;
		snprintf(ctrl, size, "%s", strrchr(g.gl_pathv[i], '/') + 1);
		found = true;
	}
	globfree(&g);
	return found;
}

/*
 * The block device of namespace 1 in @dev, or false: with native
 * multipath the head device of the subsystem that lists @ctrl, else the
 * controller's own.
 */
static bool find_ns(const char *ctrl, char *dev, size_t size)
{
	char path[256];
	bool found = false;
	glob_t g, n;

	snprintf(path, sizeof(path), "/sys/class/nvme-subsystem/nvme-subsys*/%s", ctrl);
	if (!glob(path, 0, NULL, &g) && g.gl_pathc) {
		*strrchr(g.gl_pathv[0], '/') = 0;
		snprintf(path, sizeof(path), "%s/nvme*n1", g.gl_pathv[0]);
		if (!glob(path, 0, NULL, &n) && n.gl_pathc) {
			snprintf(dev, size, "/dev/%s", strrchr(n.gl_pathv[0], '/') + 1);
			found = true;
		}
		globfree(&n);
	}
	globfree(&g);
	if (!found) {
		snprintf(path, sizeof(path), "/sys/class/nvme/%s/%sn1", ctrl, ctrl);
		if (path_exists(path)) {
			snprintf(dev, size, "/dev/%sn1", ctrl);
			found = true;
		}
	}
	return found;
}

static bool is_blockdev(const char *path)
{
	struct stat st;

	return !stat(path, &st) && S_ISBLK(st.st_mode);
}

/* The controller's state ("live", "connecting", ...) in @buf. */
static const char *ctrl_state(const char *ctrl, char *buf, size_t size)
{
	char path[128];

	snprintf(path, sizeof(path), "/sys/class/nvme/%s/state", ctrl);
	if (read_text(path, buf, size) <= 0)
		snprintf(buf, size, "gone");
	buf[strcspn(buf, "\n")] = 0;
	return buf;
}

/* Wait up to @secs for @ctrl to be in state @want (or out of it: !@in). */
static bool wait_state(const char *ctrl, const char *want, bool in, int secs)
{
	char buf[32];

	for (int i = 0; i < secs * 10; i++) {
		if (!strcmp(ctrl_state(ctrl, buf, sizeof(buf)), want) == in)
			return true;
		usleep(100000);
	}
	return false;
}

/*
 * nvme connect, then find the controller and wait for its namespace's
 * block device (devtmpfs makes it; fio would create a plain file).
 */
static int nvme_host_up(FIXTURE_DATA(ulp) *self)
{
	char path[128], buf[16];

	if (step("connect", 60, CONNECT "%s",
		 sib_slow_kernel() ? CONNECT_SLOW : CONNECT_TMO))
		return -1;
	if (!find_ctrl(self->ctrl, sizeof(self->ctrl))) {
		fprintf(stderr, "# nvme connect: no RDMA controller of " NQN "\n");
		sh("ls /sys/class/nvme | sed 's/^/# /' >&2");
		return -1;
	}
	self->dev[0] = 0;
	for (int i = 0; i < 150 && !self->dev[0]; i++) {
		if (!find_ns(self->ctrl, self->dev, sizeof(self->dev)) ||
		    !is_blockdev(self->dev)) {
			self->dev[0] = 0;
			usleep(100000);
		}
	}
	if (!self->dev[0]) {
		fprintf(stderr, "# %s: no block device for namespace 1 in 15 s\n",
			self->ctrl);
		show_dmesg();
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/class/nvme/%s/queue_count", self->ctrl);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		snprintf(buf, sizeof(buf), "0");
	fprintf(stderr, "# %s: %s, %d I/O queues (asked for 4, %ld CPUs)\n",
		self->ctrl, self->dev, atoi(buf) - 1,
		sysconf(_SC_NPROCESSORS_ONLN));
	return 0;
}

/* nvme disconnect; the controller must go away. */
static int nvme_host_disconnect(FIXTURE_DATA(ulp) *self)
{
	char path[128];

	if (step("disconnect", 60, "nvme disconnect -n " NQN))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", self->ctrl);
	if (!wait_path(path, false, 10000)) {
		fprintf(stderr, "# %s still there after nvme disconnect\n",
			self->ctrl);
		return -1;
	}
	return 0;
}

/*
 * fio's verification must fail once a block of @region (RAND_CORRUPT or
 * SEQ_CORRUPT) is overwritten on the target's ramdisk: else it would not
 * see corruption either. Returns 0 when it failed as it should.
 */
static int verify_catches_corruption(const char *name, const char *job,
				     const char *where)
{
	char log[64];
	int rc;

	if (step("corrupt", 30, "dd if=/dev/zero of=" RAMDISK " %s count=1 "
		 "oflag=direct conv=notrunc status=none", where))
		return -1;
	snprintf(log, sizeof(log), "%s_corrupt", name);
	rc = shq("timeout -k 5 120 %s --verify_only > " LOGDIR "/%s.log 2>&1",
		 job, log);
	if (!rc || shq("grep -Eq 'verify: bad|verify failed' " LOGDIR "/%s.log", log)) {
		fprintf(stderr, "# %s: fio --verify_only exit %d after the "
			"ramdisk was overwritten (%s): must fail with a verify error\n",
			name, rc, where);
		sh("tail -n 20 " LOGDIR "/%s.log | sed 's/^/# /' >&2", log);
		return -1;
	}
	return 0;
}

#define JOB(buf, fmt, dev) snprintf(buf, sizeof(buf), fmt, dev)

/*
 * The data phase of nvme_data, iser_data and srp_data, on the block device
 * self->dev: fio writes and verifies both regions (4 KiB random and 1 MiB
 * sequential writes at queue depth 32, crc32c in every block), and the
 * device's packets cover the data; @down and @up give a new connection
 * (nvme disconnect and connect, or logout and login), on which both
 * regions are verified again; then the ramdisk is overwritten behind the
 * host's back, which the verification must catch.
 */
static void block_data(struct __test_metadata *_metadata,
		       FIXTURE_DATA(ulp) *self, const char *ibdev,
		       int (*down)(FIXTURE_DATA(ulp) *self),
		       int (*up)(FIXTURE_DATA(ulp) *self, const char *ibdev))
{
	char rand[512], seq[512];
	long long sent;

	JOB(rand, FIO_RAND, self->dev);
	JOB(seq, FIO_SEQ, self->dev);
	count_start(self, ibdev);
	ASSERT_EQ(0, step("fio_rand", 300, "%s", rand)) TH_LOG("4 KiB randwrite + verify");
	ASSERT_EQ(0, step("fio_seq", 300, "%s", seq)) TH_LOG("1 MiB write + verify");
	sent = count_sent(self, ibdev);
	fprintf(stderr, "# %s: %lld packets sent\n", ibdev, sent);
	/* 40 MiB written and read back, at most 4 KiB in a packet */
	EXPECT_GE(sent, 80 << 8) TH_LOG("too few packets on %s for the data", ibdev);

	ASSERT_EQ(0, down(self));
	ASSERT_EQ(0, up(self, ibdev)) TH_LOG("connecting again");
	JOB(rand, FIO_RAND, self->dev);
	JOB(seq, FIO_SEQ, self->dev);
	EXPECT_EQ(0, step("verify_rand", 300, "%s --verify_only", rand))
		TH_LOG("4 KiB region after connecting again");
	EXPECT_EQ(0, step("verify_seq", 300, "%s --verify_only", seq))
		TH_LOG("1 MiB region after connecting again");

	EXPECT_EQ(0, verify_catches_corruption("rand", rand, RAND_CORRUPT));
	EXPECT_EQ(0, verify_catches_corruption("seq", seq, SEQ_CORRUPT));
}

static int nvme_reconnect_up(FIXTURE_DATA(ulp) *self, const char *ibdev)
{
	return nvme_host_up(self);
}

/*
 * nvmet on brd, nvme-rdma on the host: block_data() on the namespace,
 * with nvme disconnect and connect in between.
 */
TEST_F_TIMEOUT(ulp, nvme_data, 600)
{
	ASSERT_EQ(0, nvmet_subsys_up());
	ASSERT_EQ(0, nvmet_port_add());
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect over %s", variant->ibdev);
	block_data(_metadata, self, variant->ibdev, nvme_host_disconnect,
		   nvme_reconnect_up);
}

/*
 * The target's port goes away while fio writes (rate-limited, so that the
 * outage falls in its write phase): the host loses the connection, holds
 * the I/O and retries every second; the port comes back after 3 s, the
 * same controller is live again within ctrl_loss_tmo, and fio completes
 * with every block verified. Then nvme disconnect and connect, and fio
 * verifies once more.
 */
TEST_F_TIMEOUT(ulp, nvme_port_removal, 600)
{
	char job[600], st[32];
	bool left_live;

	ASSERT_EQ(0, nvmet_subsys_up());
	ASSERT_EQ(0, nvmet_port_add());
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect over %s", variant->ibdev);
	snprintf(job, sizeof(job), FIO_RAND "--rate=2m", self->dev);

	ASSERT_EQ(0, step_bg("fio_outage", 300, job));
	sleep(1);
	ASSERT_EQ(0, shq("[ ! -f " LOGDIR "/fio_outage.rc ]"))
		TH_LOG("fio ended before the port went away");
	nvmet_port_del();
	ASSERT_FALSE(path_exists(PORT)) TH_LOG("port 1 still in configfs");
	left_live = wait_state(self->ctrl, "live", false, 20);
	fprintf(stderr, "# %s: %s after the port went away\n", self->ctrl,
		ctrl_state(self->ctrl, st, sizeof(st)));
	EXPECT_TRUE(left_live) TH_LOG("%s stayed live without its port", self->ctrl);
	sleep(3);
	ASSERT_EQ(0, nvmet_port_add()) TH_LOG("adding the port back");
	EXPECT_TRUE(wait_state(self->ctrl, "live", true, 30)) {
		TH_LOG("%s is %s 30 s after the port came back", self->ctrl,
		       ctrl_state(self->ctrl, st, sizeof(st)));
		show_dmesg();
	}
	EXPECT_EQ(0, shq("dmesg | grep -q '%s: Successfully reconnected'",
			 self->ctrl)) TH_LOG("no reconnect in dmesg");
	EXPECT_EQ(0, step_wait("fio_outage", 240)) TH_LOG("fio across the outage");

	ASSERT_EQ(0, nvme_host_disconnect(self));
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect again");
	JOB(job, FIO_RAND, self->dev);
	EXPECT_EQ(0, step("verify_outage", 300, "%s --verify_only", job))
		TH_LOG("data written across the outage, after reconnecting");
	EXPECT_EQ(0, verify_catches_corruption("outage", job, RAND_CORRUPT));
}

/*
 * The first half of a removal test: fio writes (2 MiB/s) to self->dev in
 * the background and, 2 s in, @how (a command naming the device with its
 * one %s) removes the RDMA device under @ulp. The removal must return
 * within 30 s, and the device leave sysfs. Returns false if the test was
 * skipped: rdma_rxe 6.1 sometimes keeps a reference to its netdev when
 * the netdev is deleted under traffic ("unregister_netdevice: waiting
 * for ... to become free"), which is rxe's bug, not the ULP's.
 */
static bool remove_under_fio(struct __test_metadata *_metadata,
			     FIXTURE_DATA(ulp) *self, const char *ibdev,
			     const char *how, const char *ulp)
{
	char job[600], path[128];
	time_t t0;
	int rc;

	snprintf(job, sizeof(job), FIO_RAND "--rate=2m", self->dev);
	ASSERT_EQ(0, step_bg("fio_removal", 300, job));
	sleep(2);
	ASSERT_EQ(0, shq("[ ! -f " LOGDIR "/fio_removal.rc ]"))
		TH_LOG("fio ended before the removal");
	t0 = time(NULL);
	rc = step("removal", 60, how, ibdev);
	fprintf(stderr, "# %s: \"%s\" took %ld s\n", ibdev, how,
		(long)(time(NULL) - t0));
	if (rc && !strncmp(ibdev, "rxe", 3) &&
	    !shq("dmesg | grep -q 'waiting for .* to become free'"))
		SKIP(return false, "rdma_rxe kept a reference to its netdev");
	ASSERT_EQ(0, rc) TH_LOG("removing the device under %s", ulp);
	EXPECT_GE(30, time(NULL) - t0);
	snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s", ibdev);
	EXPECT_FALSE(path_exists(path)) TH_LOG("%s still registered", ibdev);
	return true;
}

/*
 * The second half: fio, left with no path, must end within @secs (with
 * I/O errors) instead of hanging, and the kernel log hold no complaint.
 */
static void fio_ends_after_removal(struct __test_metadata *_metadata,
				   int secs)
{
	fprintf(stderr, "# fio must fail now, with I/O errors:\n");
	EXPECT_NE(-1, step_wait("fio_removal", secs)) TH_LOG("fio hung");
	EXPECT_EQ(0, shq("! dmesg | grep -Eq 'WARNING:|BUG:|hung_task'"));
}

/*
 * The RDMA device goes away under the ULP while fio writes: @how removes
 * it (the device itself, or its netdev). ib_core calls nvme-rdma's and
 * nvmet-rdma's remove callbacks: the host deletes its controller (fio
 * sees I/O errors: there is no other path), the target its queues, and
 * the removal must return within 30 s, without a kernel complaint. A new
 * device on a new veth then carries a new connection whose data fio
 * verifies.
 */
static void nvme_removal(struct __test_metadata *_metadata,
			 FIXTURE_DATA(ulp) *self,
			 const FIXTURE_VARIANT(ulp) *variant, const char *how)
{
	char job[600], path[128];

	ASSERT_EQ(0, nvmet_subsys_up());
	ASSERT_EQ(0, nvmet_port_add());
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect over %s", variant->ibdev);
	if (!remove_under_fio(_metadata, self, variant->ibdev, how, "nvme-rdma"))
		return;
	snprintf(path, sizeof(path), "/sys/class/nvme/%s", self->ctrl);
	EXPECT_TRUE(wait_path(path, false, 30000))
		TH_LOG("%s still there 30 s after its device went away", self->ctrl);
	fio_ends_after_removal(_metadata, 60);
	shq("[ -f %s ] && rm -f %s", self->dev, self->dev);

	/* A new device, a new connection, new data. */
	nvme_host_down();
	nvmet_port_del();
	shq("ip link del " VETH);
	ASSERT_EQ(0, dev_setup(variant->type, variant->ibdev));
	ASSERT_EQ(0, nvmet_port_add());
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect over the new device");
	JOB(job, FIO_RAND, self->dev);
	EXPECT_EQ(0, step("fio_after", 300, "%s", job)) TH_LOG("4 KiB randwrite + verify");
}

TEST_F_TIMEOUT(ulp, nvme_device_removal, 600)
{
	nvme_removal(_metadata, self, variant, "rdma link del %s");
}

TEST_F_TIMEOUT(ulp, nvme_netdev_removal, 600)
{
	nvme_removal(_metadata, self, variant, "ip link del " VETH " # %s");
}

/*
 * sib's fault injection on @ibdev (debugfs), both directions: 1 % of the
 * packets dropped, 1 % reordered, a fixed seed.
 */
static int faults_on(const char *ibdev)
{
	static const char *const knobs[][2] = {
		{ "drop", "10000" }, { "reorder", "10000" }, { "dir", "3" },
		{ "seed", "7" }, { "active", "1" },
	};

	for (size_t i = 0; i < sizeof(knobs) / sizeof(knobs[0]); i++)
		if (sh("echo %s > /sys/kernel/debug/sib/%s/fault/%s",
		       knobs[i][1], ibdev, knobs[i][0]))
			return -1;
	return 0;
}

/* Fault injection off; print what it did. Returns the retransmissions. */
static long long faults_off(const char *ibdev)
{
	long long rexmit = hw_counter(ibdev, "retransmits");

	sh("echo 0 > /sys/kernel/debug/sib/%s/fault/active", ibdev);
	sh("cd /sys/kernel/debug/sib/%s/fault && for k in injected_drop "
	   "injected_reorder; do echo \"# $k $(cat $k)\"; done >&2", ibdev);
	fprintf(stderr, "# %s: retransmits %lld, ack_timeouts %lld\n", ibdev,
		rexmit, hw_counter(ibdev, "ack_timeouts"));
	return rexmit;
}

/*
 * sib's fault injection on both directions, 1 % of packets dropped and
 * 1 % reordered, while fio writes to @dev: the I/O must still complete
 * and verify (RC recovers every loss), only slower, and @ibdev must have
 * retransmitted.
 */
static void fio_faults(struct __test_metadata *_metadata, const char *ibdev,
		       const char *dev)
{
	char rand[512], seq[512];

	ASSERT_EQ(0, faults_on(ibdev));
	snprintf(rand, sizeof(rand), FIO "--name=rand --rw=randwrite --bs=4k "
		 "--offset=0 --size=4M ", dev);
	snprintf(seq, sizeof(seq), FIO "--name=seq --rw=write --bs=1M "
		 "--offset=16M --size=8M ", dev);
	EXPECT_EQ(0, step("fio_rand_faults", 400, "%s", rand));
	EXPECT_EQ(0, step("fio_seq_faults", 400, "%s", seq));
	EXPECT_LT(0, faults_off(ibdev));
	/* after the faults, the same data once more */
	EXPECT_EQ(0, step("verify_rand_faults", 300, "%s --verify_only", rand));
	EXPECT_EQ(0, step("verify_seq_faults", 300, "%s --verify_only", seq));
}

/* nvme-rdma under faults; rdma_rxe has no fault injection. */
TEST_F_TIMEOUT(ulp, nvme_faults, 900)
{
	if (strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	ASSERT_EQ(0, nvmet_subsys_up());
	ASSERT_EQ(0, nvmet_port_add());
	ASSERT_EQ(0, nvme_host_up(self)) TH_LOG("nvme connect over %s", variant->ibdev);
	fio_faults(_metadata, variant->ibdev, self->dev);
}

/* ---- NFS over RDMA ------------------------------------------------------ */

/*
 * knfsd with the RDMA listener on port 20049, exporting a tmpfs (the
 * guest's root is a read-only 9p overlay; tmpfs needs fsid=). fsid=0 makes
 * it NFSv4's root as well. rpcbind, rpc.mountd (for NFSv3's MOUNT) and
 * nfsdcld run in the foreground, in the background, their pids in LOGDIR.
 * The NFSv4 grace period is ended at once, or OPEN would wait for it.
 *
 * nfsdcld is nfsd's NFSv4 client tracker, on an rpc_pipefs of our own,
 * with its records in an empty directory. Without a tracker nfsd starts
 * but refuses to end the grace period (v4_end_grace: EBUSY). 6.1 falls
 * back to the legacy tracker (/var/lib/nfs/v4recovery); a kernel built
 * without CONFIG_NFSD_LEGACY_CLIENT_TRACKING (Debian's 7.2) has no other.
 * nfsd makes the pipe nfsd/cld when it starts and waits 1 s for nfsdcld
 * to open it, so nfsdcld must be watching for it (inotify) by then.
 * With nfsdcld and no client to reclaim, nfsd skips the grace period, and
 * a v4_end_grace write is refused then too (EBUSY: nothing to end); where
 * 7.2 takes the write, its laundromat ends the period after the write
 * returned. So the write may fail, and v4_end_grace must read Y in time.
 */
static int nfs_server_up(int mb)
{
	return step("modprobe_nfs", 60, "modprobe nfsd && modprobe rpcrdma") ||
	       step("nfsd_fs", 30,
		    "grep -q \"^nfsd /proc/fs/nfsd \" /proc/mounts || "
		    "mount -t nfsd nfsd /proc/fs/nfsd") ||
	       step("pipefs", 30, "mkdir -p " PIPEFS " && rm -rf " CLD_DIR " && "
		    "mkdir " CLD_DIR " && mount -t rpc_pipefs sunrpc " PIPEFS) ||
	       step_bg("nfsdcld", 3600,
		       "exec nfsdcld -F -p " PIPEFS " -s " CLD_DIR) ||
	       step("nfsdcld_up", 30,
		    "until ls -l /proc/$(pgrep -x nfsdcld | head -n 1)/fd 2>/dev/null | "
		    "grep -q inotify; do sleep 0.1; done") ||
	       step("export_fs", 30, "mount -t tmpfs -o size=%dM tmpfs " EXPORT,
		    mb + 16) ||
	       step_bg("rpcbind", 3600, "exec rpcbind -f -w") ||
	       step("rpcbind_up", 30, "until rpcinfo -p; do sleep 0.1; done") ||
	       step("exports", 30,
		    "mkdir -p /etc/exports.d && echo \"" EXPORT " " NET
		    "(rw,sync,no_root_squash,insecure,no_subtree_check,fsid=0)\" > "
		    EXPORTS_FILE " && exportfs -ra") ||
	       step_bg("mountd", 3600, "exec rpc.mountd -F") ||
	       step("mountd_up", 30,
		    "until rpcinfo -p | grep -q mountd; do sleep 0.1; done") ||
	       step("nfsd", 60,
		    "echo 10 > /proc/fs/nfsd/nfsv4gracetime; "
		    "echo 10 > /proc/fs/nfsd/nfsv4leasetime; "
		    "rpc.nfsd 4 && echo rdma " NFS_PORT " > /proc/fs/nfsd/portlist && "
		    "grep -qx \"rdma " NFS_PORT "\" /proc/fs/nfsd/portlist && "
		    "{ echo Y > /proc/fs/nfsd/v4_end_grace 2>/dev/null; "
		    "until grep -qx Y /proc/fs/nfsd/v4_end_grace; do sleep 0.1; done; }");
}

/*
 * Whether the running kernel was built with CONFIG_@sym (=y or =m), from
 * /proc/config.gz or /boot/config-<release>; true when neither is there
 * to say otherwise.
 */
static bool kernel_has(const char *sym)
{
	return shq("{ zcat /proc/config.gz 2>/dev/null || "
		   "cat /boot/config-$(uname -r) 2>/dev/null || echo CONFIG_%s=y; } | "
		   "grep -Eq '^CONFIG_%s=[ym]$'", sym, sym) == 0;
}

/*
 * Why the NFS tests cannot run on this kernel, or NULL: knfsd with
 * NFSv4 (nfs_server_up() sets its v4 lease and grace times) and the
 * client's @vers ("3" or "4.2"). The debug lane's kernel has neither.
 */
static const char *nfs_missing(const char *vers)
{
	if (!kernel_has("NFSD_V4"))
		return "the kernel has no NFSv4 server (CONFIG_NFSD_V4)";
	if (!strcmp(vers, "4.2") && !kernel_has("NFS_V4_2"))
		return "the kernel has no NFSv4.2 client (CONFIG_NFS_V4_2)";
	if (!strcmp(vers, "3") && !kernel_has("NFS_V3"))
		return "the kernel has no NFSv3 client (CONFIG_NFS_V3)";
	return NULL;
}

/* Skip the test, saying why, on a kernel without NFS @vers (see above). */
#define NFS_NEEDED(vers)						\
	do {								\
		const char *why_ = nfs_missing(vers);			\
		if (why_)						\
			SKIP(return, "%s", why_);			\
	} while (0)

static int nfs_mb(void)
{
	const char *s = getenv("SIB_ULP_NFS_MB");
	int mb = s ? atoi(s) : 0;

	return mb > 0 ? mb : 64;
}

static int sha256(const char *path, char *out, size_t size)
{
	char cmd[256];
	FILE *f;
	int ok;

	snprintf(cmd, sizeof(cmd), "timeout -k 5 600 sha256sum %s", path);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%64s", out) == 1 && strlen(out) == 64;
	if (pclose(f) || !ok) {
		snprintf(out, size, "(sha256sum %s failed)", path);
		return -1;
	}
	return 0;
}

/*
 * Mount the export with proto=rdma and @vers, write a file of
 * SIB_ULP_NFS_MB MiB of random data through it (fsync), drop the caches,
 * read it back: same SHA-256. Then a byte of the file is changed on the
 * server: read back again, the sum must differ. With @faults, sib's fault
 * injection is on while the file is written and read (16 MiB at most).
 */
static void nfs_test(struct __test_metadata *_metadata,
		     FIXTURE_DATA(ulp) *self, const char *ibdev,
		     const char *vers, const char *opts, const char *path,
		     bool faults)
{
	char want[80], got[80], opt[128];
	int mb = faults && nfs_mb() > 16 ? 16 : nfs_mb();
	long long sent;

	NFS_NEEDED(vers);
	ASSERT_EQ(0, nfs_server_up(mb));
	ASSERT_EQ(0, step("mount", 60,
			  "mount -t nfs -o vers=%s,proto=rdma,port=" NFS_PORT "%s "
			  ADDR ":%s " MNT, vers, opts, path))
		TH_LOG("mount NFSv%s over %s", vers, ibdev);
	snprintf(opt, sizeof(opt), "grep \" " MNT " \" /proc/mounts | "
		 "grep -q \"vers=%s,.*proto=rdma,port=" NFS_PORT "\"", vers);
	ASSERT_EQ(0, shq("%s", opt)) {
		TH_LOG("not an NFSv%s mount over RDMA", vers);
		sh("grep \" " MNT " \" /proc/mounts | sed 's/^/# /' >&2");
	}
	if (faults)
		ASSERT_EQ(0, faults_on(ibdev));

	count_start(self, ibdev);
	ASSERT_EQ(0, step("write", 600, "head -c %dM /dev/urandom > " LOGDIR
			  "/src && cp " LOGDIR "/src " MNT "/f && sync " MNT "/f",
			  mb)) TH_LOG("writing %d MiB", mb);
	ASSERT_EQ(0, sha256(LOGDIR "/src", want, sizeof(want)));
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(MNT "/f", got, sizeof(got))) TH_LOG("reading back");
	EXPECT_STREQ(want, got) TH_LOG("%d MiB read back over NFSv%s", mb, vers);
	sent = count_sent(self, ibdev);
	fprintf(stderr, "# %s: %lld packets sent\n", ibdev, sent);
	/* written and read back, at most 4 KiB in a packet */
	EXPECT_GE(sent, 2LL * mb << 8) TH_LOG("too few packets on %s for the data",
					      ibdev);
	EXPECT_EQ(0, shq("cmp " LOGDIR "/src " EXPORT "/f")) TH_LOG("the server's copy");
	if (faults)
		EXPECT_LT(0, faults_off(ibdev)) TH_LOG("no loss was recovered");

	/* one byte changed on the server: the client must see it */
	ASSERT_EQ(0, step("corrupt", 30, "printf X | dd of=" EXPORT "/f bs=1 "
			  "seek=%lld conv=notrunc status=none", mb * 1048576LL / 2 + 1));
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(MNT "/f", got, sizeof(got)));
	EXPECT_STRNE(want, got) TH_LOG("a byte changed on the server went unseen");
	EXPECT_NE(0, shq("timeout -k 5 600 cmp " LOGDIR "/src " MNT "/f"))
		TH_LOG("cmp did not see the changed byte");

	EXPECT_EQ(0, step("umount", 60, "umount " MNT));
}

TEST_F_TIMEOUT(ulp, nfs_v3, 900)
{
	nfs_test(_metadata, self, variant->ibdev, "3", ",nolock", EXPORT, false);
}

TEST_F_TIMEOUT(ulp, nfs_v4_2, 900)
{
	nfs_test(_metadata, self, variant->ibdev, "4.2", "", "/", false);
}

/*
 * The RDMA device goes away under an NFSv4.2 mount while fio writes a
 * file through it (rate-limited, O_DIRECT): the removal must return
 * within 30 s (rpcrdma and svcrdma let go of the device), and the mount
 * is hard, so its I/O waits. The same device comes back on the same
 * veth; the client must reconnect on it by itself, fio complete and
 * verify, and a file written before the removal read back unchanged.
 */
TEST_F_TIMEOUT(ulp, nfs_device_removal, 900)
{
	char want[80], got[80], path[128];
	time_t t0;
	int rc;

	NFS_NEEDED("4.2");
	ASSERT_EQ(0, nfs_server_up(64));
	ASSERT_EQ(0, step("mount", 60, "mount -t nfs -o vers=4.2,proto=rdma,port="
			  NFS_PORT " " ADDR ":/ " MNT));
	ASSERT_EQ(0, step("write", 120, "head -c 8M /dev/urandom > " LOGDIR
			  "/src && cp " LOGDIR "/src " MNT "/f && sync " MNT "/f"));
	ASSERT_EQ(0, sha256(LOGDIR "/src", want, sizeof(want)));
	ASSERT_EQ(0, step_bg("fio_nfs", 600, "fio --name=nfs --filename=" MNT
			     "/g --direct=1 --rw=write --bs=64k --size=8M "
			     "--rate=1m --verify=crc32c --verify_fatal=1"));
	sleep(2);
	ASSERT_EQ(0, shq("[ ! -f " LOGDIR "/fio_nfs.rc ]"))
		TH_LOG("fio ended before the removal");

	t0 = time(NULL);
	rc = step("removal", 60, "rdma link del %s", variant->ibdev);
	fprintf(stderr, "# %s: rdma link del under NFS took %ld s\n",
		variant->ibdev, (long)(time(NULL) - t0));
	ASSERT_EQ(0, rc) TH_LOG("removing the device under rpcrdma");
	EXPECT_GE(30, time(NULL) - t0);
	snprintf(path, sizeof(path), "/sys/class/infiniband/%s", variant->ibdev);
	EXPECT_FALSE(path_exists(path)) TH_LOG("%s still registered", variant->ibdev);
	sleep(2);

	t0 = time(NULL);
	ASSERT_EQ(0, step("link_add_again", 60, "rdma link add %s type %s netdev "
			  VETH, variant->ibdev, variant->type));
	ASSERT_LE(0, wait_gid_index(variant->ibdev, ADDR));
	EXPECT_EQ(0, step_wait("fio_nfs", 300)) TH_LOG("fio across the removal");
	fprintf(stderr, "# fio done %ld s after the device came back\n",
		(long)(time(NULL) - t0));
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(MNT "/f", got, sizeof(got))) TH_LOG("reading back");
	EXPECT_STREQ(want, got) TH_LOG("the file written before the removal");
	EXPECT_EQ(0, shq("! dmesg | grep -Eq 'WARNING:|BUG:|hung_task'"));
	EXPECT_EQ(0, step("umount", 60, "umount " MNT));
}

/* NFSv4.2 with 1 % of the packets dropped and 1 % reordered: sib only. */
/* MiB of memory the guest has available, or -1. */
static long long mem_available_mb(void)
{
	char buf[4096], *p;

	if (read_text("/proc/meminfo", buf, sizeof(buf)) <= 0)
		return -1;
	p = strstr(buf, "MemAvailable:");
	return p ? atoll(p + strlen("MemAvailable:")) / 1024 : -1;
}

/*
 * fio on the NFS mount, crc32c in every block and every block read back
 * (O_DIRECT: the reads come over the wire, not from the client's cache):
 * the first three quarters of @mb MiB in 1 MiB writes, the last quarter
 * in 4 KiB writes in random order at queue depth 16 (each block once).
 */
#define NFS_FIO		"fio --filename=" MNT "/big --direct=1 --ioengine=libaio " \
			"--verify=crc32c --verify_fatal=1 "
#define NFS_FIO_SEQ	NFS_FIO "--name=seq --rw=write --bs=1M --iodepth=4 " \
			"--offset=0 --size=%dM"
#define NFS_FIO_RAND	NFS_FIO "--name=rand --rw=randwrite --bs=4k --iodepth=16 " \
			"--offset=%dM --size=%dM"

/*
 * A large file over NFSv4.2 on RDMA: SIB_ULP_NFS_LARGE_MB (default
 * 1024) MiB through fio (NFS_FIO_SEQ and NFS_FIO_RAND), both regions
 * verified again after a remount; then a block of the sequential region
 * is zeroed in the server's copy, and its verification must fail. The
 * export is a tmpfs of that size: the test needs the guest to have about
 * twice the file free (vm-run -m 4G; make check-full gives it).
 */
TEST_F_TIMEOUT(ulp, nfs_large, 1800)
{
	const char *env = getenv("SIB_ULP_NFS_LARGE_MB");
	int mb = env && atoi(env) > 0 ? atoi(env) : 1024;
	long long avail = mem_available_mb();
	char seq[256], rand[256];
	long long sent;

	NFS_NEEDED("4.2");
	if (avail < 2LL * mb + 256)
		SKIP(return, "%d MiB over NFS needs %lld MiB free, the guest has %lld "
		     "(vm-run -m 4G)", mb, 2LL * mb + 256, avail);
	snprintf(seq, sizeof(seq), NFS_FIO_SEQ, mb / 4 * 3);
	snprintf(rand, sizeof(rand), NFS_FIO_RAND, mb / 4 * 3, mb / 4);
	ASSERT_EQ(0, nfs_server_up(mb));
	ASSERT_EQ(0, step("mount", 60, "mount -t nfs -o vers=4.2,proto=rdma,port="
			  NFS_PORT " " ADDR ":/ " MNT));
	/*
	 * The whole file first (sparse): fio lays out anew (truncates) a
	 * file too short for its job, which would wipe the first region
	 * when the second job starts.
	 */
	ASSERT_EQ(0, step("truncate", 60, "truncate -s %dM " MNT "/big", mb));
	count_start(self, variant->ibdev);
	ASSERT_EQ(0, step("fio_seq", 1200, "%s", seq))
		TH_LOG("%d MiB in 1 MiB writes + verify", mb / 4 * 3);
	ASSERT_EQ(0, step("fio_rand", 1200, "%s", rand))
		TH_LOG("%d MiB in 4 KiB random writes + verify", mb / 4);
	sent = count_sent(self, variant->ibdev);
	fprintf(stderr, "# %s: %lld packets sent\n", variant->ibdev, sent);
	/* written and read back, at most 4 KiB in a packet */
	EXPECT_GE(sent, 2LL * mb << 8) TH_LOG("too few packets on %s for the data",
					      variant->ibdev);
	EXPECT_EQ(0, shq("[ $(stat -c %%s " EXPORT "/big) -eq %lld ]", mb * 1048576LL))
		TH_LOG("the server's file is not %d MiB", mb);

	ASSERT_EQ(0, step("umount", 60, "umount " MNT));
	ASSERT_EQ(0, step("remount", 60, "mount -t nfs -o vers=4.2,proto=rdma,port="
			  NFS_PORT " " ADDR ":/ " MNT));
	EXPECT_EQ(0, step("verify_seq", 1200, "%s --verify_only", seq))
		TH_LOG("the sequential region after a remount");
	EXPECT_EQ(0, step("verify_rand", 1200, "%s --verify_only", rand))
		TH_LOG("the random region after a remount");

	/* a block in the middle of the sequential region */
	ASSERT_EQ(0, step("corrupt", 30, "dd if=/dev/zero of=" EXPORT "/big bs=4k "
			  "seek=%d count=1 conv=notrunc status=none", mb * 128));
	EXPECT_NE(0, shq("timeout -k 5 1200 %s --verify_only > " LOGDIR
			 "/nfs_corrupt.log 2>&1", seq))
		TH_LOG("fio --verify_only passed over a block zeroed on the server");
	EXPECT_EQ(0, shq("grep -Eq 'verify: bad|verify failed' " LOGDIR
			 "/nfs_corrupt.log")) TH_LOG("no verify error in fio's log");
	EXPECT_EQ(0, step("umount", 60, "umount " MNT));
}

TEST_F_TIMEOUT(ulp, nfs_faults, 900)
{
	if (strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	nfs_test(_metadata, self, variant->ibdev, "4.2", "", "/", true);
}

/* ---- SCSI over RDMA: iSER and SRP -------------------------------------- */

/* The iblock backstore on the ramdisk. */
static int lio_backstore_up(void)
{
	return step("modprobe_lio", 60,
		    "modprobe brd rd_nr=1 rd_size=%d && "
		    "modprobe target_core_iblock", RAMDISK_MB * 1024) ||
	       step("lio_backstore", 30,
		    "mkdir -p " BACKSTORE " && "
		    "echo udev_path=" RAMDISK " > " BACKSTORE "/control && "
		    "echo 1 > " BACKSTORE "/enable");
}

/*
 * The SCSI disk (/dev/sdX) under the sysfs device @sysdir (a session's or
 * a SCSI host's: target*\/H:C:T:L/block/sdX) in @dev, waiting up to 15 s
 * for its node; or false. The guest has no udev to load sd_mod for a
 * new disk: the initiators load it.
 */
static bool scsi_disk(const char *sysdir, char *dev, size_t size)
{
	char pattern[256];
	glob_t g;

	snprintf(pattern, sizeof(pattern), "%s/target*/*/block/*", sysdir);
	for (int i = 0; i < 150; i++) {
		if (!glob(pattern, 0, NULL, &g) && g.gl_pathc == 1) {
			snprintf(dev, size, "/dev/%s", strrchr(g.gl_pathv[0], '/') + 1);
			globfree(&g);
			if (is_blockdev(dev))
				return true;
		} else {
			globfree(&g);
		}
		usleep(100000);
	}
	fprintf(stderr, "# no (single) SCSI disk under %s in 15 s\n", sysdir);
	sh("ls -d %s 2>&1 | sed 's/^/# /' >&2", pattern);
	return false;
}

/* ---- iSER ---- */

/*
 * An iSCSI target with LUN 0 on the backstore and a portal on ADDR:3260
 * with iSER on (its TCP portal stays for nobody); demo mode: any
 * initiator, no authentication, writable.
 */
static int iser_target_up(void)
{
	return lio_backstore_up() ||
	       step("modprobe_isert", 60,
		    "modprobe iscsi_target_mod && modprobe ib_isert") ||
	       step("iscsi_target", 30,
		    "mkdir -p " ISCSI_TPG "/lun/lun_0 && "
		    "ln -s " BACKSTORE " " ISCSI_TPG "/lun/lun_0/sib_ulp && "
		    "mkdir " ISCSI_NP " && echo 1 > " ISCSI_NP "/iser && "
		    "cd " ISCSI_TPG "/attrib && echo 0 > authentication && "
		    "echo 1 > generate_node_acls && echo 1 > cache_dynamic_acls && "
		    "echo 0 > demo_mode_write_protect && "
		    "echo 1 > " ISCSI_TPG "/enable && "
		    "grep -qx 1 " ISCSI_NP "/iser");
}

/*
 * SendTargets discovery over iSER: a login and one Text request, whose
 * answer makes the node record. If iscsiadm times out waiting for the
 * answer (30 s), it is asked once more, after the state that
 * show_dmesg() prints: a discovery that went unanswered once, after a
 * device removal, is an open question (Documentation/testing.md,
 * "Kernel consumers"); twice fails the test.
 */
#define DISCOVERY	"iscsiadm -m discovery -t st -p " ISCSI_PORTAL " -I " IFACE \
			" | grep -F '" ISCSI_PORTAL ",1 " IQN "' && " ISCSI_NODE

static int iser_discovery(void)
{
	if (!step("discovery", 60, DISCOVERY))
		return 0;
	fprintf(stderr, "# discovery failed: once more\n");
	return step("discovery_again", 90, DISCOVERY);
}

/*
 * ib_iser, iscsid in the foreground (its own initiator name; iscsiadm
 * needs /run/lock/iscsi, which the guest does not have), an iface
 * with iface.transport_name = iser, and SendTargets discovery through it:
 * the node record of IQN on that iface.
 */
static int iser_initiator_up(void)
{
	return step("modprobe_iser", 60, "modprobe ib_iser && modprobe sd_mod") ||
	       step("initiatorname", 30, "mkdir -p /run/lock/iscsi && "
		    "echo InitiatorName=" IQN ":host > " INITIATOR) ||
	       step_bg("iscsid", 3600, "exec iscsid -f -n -i " INITIATOR) ||
	       step("iscsid_up", 30,
		    "until grep -q ISCSIADM_ABSTRACT_NAMESPACE /proc/net/unix; "
		    "do sleep 0.1; done; sleep 0.2; [ ! -f " LOGDIR "/iscsid.rc ]") ||
	       step("iface", 30,
		    "iscsiadm -m iface -I " IFACE " -o new && "
		    "iscsiadm -m iface -I " IFACE " -o update "
		    "-n iface.transport_name -v iser && "
		    "iscsiadm -m iface -I " IFACE " | "
		    "grep -qx 'iface.transport_name = iser'") ||
	       iser_discovery();
}

/* The session of IQN (sessionN) in @sess, or false. */
static bool find_session(char *sess, size_t size)
{
	char path[256];
	bool found = false;
	glob_t g;

	if (glob("/sys/class/iscsi_session/session*", 0, NULL, &g))
		return false;
	for (size_t i = 0; i < g.gl_pathc && !found; i++) {
		snprintf(path, sizeof(path), "%s/targetname", g.gl_pathv[i]);
		if (!file_is(path, IQN))
			continue;
		snprintf(sess, size, "%s", strrchr(g.gl_pathv[i], '/') + 1);
		found = true;
	}
	globfree(&g);
	return found;
}

/*
 * Log in; the session must be on the iser transport: its SCSI host is
 * ib_iser's ("iscsi_iser") and iscsiadm says "Iface Transport: iser".
 * Then its disk.
 */
static int iser_login(FIXTURE_DATA(ulp) *self, const char *ibdev)
{
	char path[PATH_MAX], host[PATH_MAX], *h;

	if (step("login", 60, ISCSI_NODE " --login"))
		return -1;
	if (!find_session(self->ctrl, sizeof(self->ctrl))) {
		fprintf(stderr, "# iscsiadm --login: no session of " IQN "\n");
		return -1;
	}
	snprintf(path, sizeof(path), "/sys/class/iscsi_session/%s/device", self->ctrl);
	if (!realpath(path, host))
		return -1;
	/* .../hostN/sessionN: the host is the parent */
	*strrchr(host, '/') = 0;
	h = strrchr(host, '/') + 1;
	snprintf(path, sizeof(path), "/sys/class/scsi_host/%s/proc_name", h);
	if (!file_is(path, "iscsi_iser")) {
		fprintf(stderr, "# %s: %s is not ib_iser's host\n", self->ctrl, h);
		return -1;
	}
	if (step("iser_transport", 30, "iscsiadm -m session -P 1 | "
		 "grep -A 20 'Target: " IQN "' | grep -q 'Iface Transport: iser'"))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/iscsi_session/%s/device", self->ctrl);
	if (!scsi_disk(path, self->dev, sizeof(self->dev)))
		return -1;
	fprintf(stderr, "# %s on %s (iser): %s\n", self->ctrl, h, self->dev);
	return 0;
}

/* Log out; the session must go away. */
static int iser_logout(FIXTURE_DATA(ulp) *self)
{
	char path[128];

	if (step("logout", 60, ISCSI_NODE " --logout"))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/iscsi_session/%s", self->ctrl);
	if (!wait_path(path, false, 10000)) {
		fprintf(stderr, "# %s still there after the logout\n", self->ctrl);
		return -1;
	}
	return 0;
}

/* ---- SRP ---- */

/*
 * ib_srpt's target on port 1 of @ibdev: LIO names the port by the GUID
 * part of its GID 0 ("xxxx:xxxx:xxxx:xxxx", here the link-local GID's
 * interface ID), in @port. A login over RDMA/CM reaches the target port
 * named like that, its session named by the source address of the
 * target's rdma_cm id: the target's own address, ADDR (here both ends'):
 * an ACL for ADDR, LUN 0 mapped into it (ib_srpt has no demo mode).
 * RDMA/CM listens on SRP_PORT, any address, set through
 * discovery_auth/rdma_cm_port.
 */
static int srp_target_up(const char *ibdev, char *port, size_t size)
{
	char path[128], gid[64];

	if (lio_backstore_up() || step("modprobe_srpt", 60, "modprobe ib_srpt"))
		return -1;
	snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s/ports/1/gids/0", ibdev);
	if (read_text(path, gid, sizeof(gid)) < 39) {
		fprintf(stderr, "# no GID 0 on %s\n", ibdev);
		return -1;
	}
	gid[39] = 0;
	snprintf(port, size, "%.19s", gid + 20);
	return step("srpt_target", 30,
		    "mkdir -p " SRPT " && "
		    "echo " SRP_PORT " > " SRPT "/discovery_auth/rdma_cm_port && "
		    "cd " SRPT " && T=%s/tpgt_1 && "
		    "mkdir -p $T/lun/lun_0 && "
		    "ln -s " BACKSTORE " $T/lun/lun_0/sib_ulp && "
		    "mkdir -p $T/acls/" ADDR "/lun_0 && "
		    "ln -s " SRPT "/$T/lun/lun_0 $T/acls/" ADDR "/lun_0/lun_0 && "
		    "echo 1 > $T/enable", port);
}

/*
 * ib_srp logs in to ADDR:SRP_PORT over RDMA/CM: id_ext and ioc_guid of
 * the target port are ib_srpt's srpt_service_guid (the node GUID of the
 * first device it saw). The SCSI host's remote port (port-H:1) in
 * self->ctrl, its disk in self->dev.
 */
static int srp_login(FIXTURE_DATA(ulp) *self, const char *ibdev)
{
	char guid[32], path[128];
	glob_t g;
	int host;

	if (step("modprobe_srp", 60, "modprobe ib_srp && modprobe sd_mod"))
		return -1;
	if (read_text("/sys/module/ib_srpt/parameters/srpt_service_guid",
		      guid, sizeof(guid)) <= 0)
		return -1;
	guid[strcspn(guid, "\n")] = 0;
	if (step("add_target", 60, "echo id_ext=%s,ioc_guid=%s,dest=" ADDR ":"
		 SRP_PORT " > /sys/class/infiniband_srp/srp-%s-1/add_target",
		 guid, guid, ibdev))
		return -1;
	if (glob("/sys/class/srp_remote_ports/port-*", 0, NULL, &g) ||
	    g.gl_pathc != 1) {
		fprintf(stderr, "# add_target: not one SRP remote port\n");
		globfree(&g);
		return -1;
	}
	snprintf(self->ctrl, sizeof(self->ctrl), "%s", strrchr(g.gl_pathv[0], '/') + 1);
	globfree(&g);
	if (sscanf(self->ctrl, "port-%d:", &host) != 1)
		return -1;
	snprintf(path, sizeof(path), "/sys/class/scsi_host/host%d/device", host);
	if (!scsi_disk(path, self->dev, sizeof(self->dev)))
		return -1;
	fprintf(stderr, "# %s (host%d, id_ext=ioc_guid=%s): %s\n", self->ctrl,
		host, guid, self->dev);
	return 0;
}

/* Delete the remote port: its SCSI host and disk must go away. */
static int srp_logout(FIXTURE_DATA(ulp) *self)
{
	char path[128], disk[64];

	snprintf(disk, sizeof(disk), "/sys/block/%s", strrchr(self->dev, '/') + 1);
	if (step("srp_delete", 60, "echo 1 > /sys/class/srp_remote_ports/%s/delete",
		 self->ctrl))
		return -1;
	snprintf(path, sizeof(path), "/sys/class/srp_remote_ports/%s", self->ctrl);
	if (!wait_path(path, false, 10000) || !wait_path(disk, false, 10000)) {
		fprintf(stderr, "# %s or %s still there after delete\n",
			self->ctrl, disk);
		return -1;
	}
	return 0;
}

/* ---- the tests ---- */

/* The LIO tests need the iblock backstore (the debug lane's kernel lacks it). */
#define LIO_NEEDED()							\
	do {								\
		if (!kernel_has("TCM_IBLOCK"))				\
			SKIP(return, "the kernel has no LIO block backstore " \
			     "(CONFIG_TCM_IBLOCK)");			\
	} while (0)

TEST_F_TIMEOUT(ulp, iser_data, 600)
{
	LIO_NEEDED();
	ASSERT_EQ(0, iser_target_up());
	ASSERT_EQ(0, iser_initiator_up());
	ASSERT_EQ(0, iser_login(self, variant->ibdev)) TH_LOG("iSER login over %s", variant->ibdev);
	block_data(_metadata, self, variant->ibdev, iser_logout, iser_login);
}

TEST_F_TIMEOUT(ulp, srp_data, 600)
{
	char port[32];

	LIO_NEEDED();
	ASSERT_EQ(0, srp_target_up(variant->ibdev, port, sizeof(port)));
	ASSERT_EQ(0, srp_login(self, variant->ibdev))
		TH_LOG("SRP login over %s", variant->ibdev);
	block_data(_metadata, self, variant->ibdev, srp_logout, srp_login);
}

/* iSER and SRP under sib's faults, as nvme_faults. */
TEST_F_TIMEOUT(ulp, iser_faults, 900)
{
	LIO_NEEDED();
	if (strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	ASSERT_EQ(0, iser_target_up());
	ASSERT_EQ(0, iser_initiator_up());
	ASSERT_EQ(0, iser_login(self, variant->ibdev)) TH_LOG("iSER login over %s", variant->ibdev);
	fio_faults(_metadata, variant->ibdev, self->dev);
}

TEST_F_TIMEOUT(ulp, srp_faults, 900)
{
	char port[32];

	LIO_NEEDED();
	if (strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	ASSERT_EQ(0, srp_target_up(variant->ibdev, port, sizeof(port)));
	ASSERT_EQ(0, srp_login(self, variant->ibdev))
		TH_LOG("SRP login over %s", variant->ibdev);
	fio_faults(_metadata, variant->ibdev, self->dev);
}

/*
 * The RDMA device goes away under SRP while fio writes (as in
 * nvme_removal): ib_srp's remove callback removes its SCSI host (fio
 * sees I/O errors and must end), ib_srpt's closes its channels, and "rdma
 * link del" must return within 30 s, without a kernel complaint. Then
 * target and initiator are set up again from scratch on a new device,
 * and carry new data that fio verifies.
 */
TEST_F_TIMEOUT(ulp, srp_device_removal, 600)
{
	char port[32], job[600], path[128], disk[64];

	LIO_NEEDED();
	ASSERT_EQ(0, srp_target_up(variant->ibdev, port, sizeof(port)));
	ASSERT_EQ(0, srp_login(self, variant->ibdev))
		TH_LOG("SRP login over %s", variant->ibdev);
	snprintf(disk, sizeof(disk), "/sys/block/%s", strrchr(self->dev, '/') + 1);
	if (!remove_under_fio(_metadata, self, variant->ibdev,
			      "rdma link del %s", "ib_srp and ib_srpt"))
		return;
	snprintf(path, sizeof(path), "/sys/class/srp_remote_ports/%s", self->ctrl);
	EXPECT_TRUE(wait_path(path, false, 30000))
		TH_LOG("%s still there 30 s after its device went away", self->ctrl);
	EXPECT_TRUE(wait_path(disk, false, 30000)) TH_LOG("%s still there", disk);
	fio_ends_after_removal(_metadata, 60);
	shq("[ -f %s ] && rm -f %s", self->dev, self->dev);

	/* Everything again on a new device, new data. */
	srp_down();
	lio_down();
	shq("ip link del " VETH);
	ASSERT_EQ(0, dev_setup(variant->type, variant->ibdev));
	ASSERT_EQ(0, srp_target_up(variant->ibdev, port, sizeof(port)));
	ASSERT_EQ(0, srp_login(self, variant->ibdev)) TH_LOG("SRP login over the new device");
	JOB(job, FIO_RAND, self->dev);
	EXPECT_EQ(0, step("fio_after", 300, "%s", job)) TH_LOG("4 KiB randwrite + verify");
}

/*
 * The RDMA device goes away under iSER while fio writes. ib_iser's
 * connection gets RDMA_CM_EVENT_DEVICE_REMOVAL and fails; "rdma link del"
 * must return within 30 s, without a kernel complaint. The iSCSI session
 * goes into recovery, and iscsid's attempts to log in again cannot reach
 * a portal through a device that is gone: once the session's replacement
 * timeout (10 s here, 120 s by default) is over, the queued I/O fails and
 * fio must end. iscsid does not move a session to a new device by
 * itself, so after a logout target and initiator are set up again from
 * scratch on a new device, and carry new data that fio verifies.
 */
TEST_F_TIMEOUT(ulp, iser_device_removal, 600)
{
	char job[600];

	LIO_NEEDED();
	ASSERT_EQ(0, iser_target_up());
	ASSERT_EQ(0, iser_initiator_up());
	ASSERT_EQ(0, step("replacement_timeout", 30, ISCSI_NODE " -o update "
			  "-n node.session.timeo.replacement_timeout -v 10"));
	ASSERT_EQ(0, iser_login(self, variant->ibdev)) TH_LOG("iSER login over %s", variant->ibdev);
	if (!remove_under_fio(_metadata, self, variant->ibdev,
			      "rdma link del %s", "ib_iser and ib_isert"))
		return;
	/* the 10 s replacement timeout, then the queued I/O fails */
	fio_ends_after_removal(_metadata, 90);
	/*
	 * The session outlives its device whole, as on rdma_rxe: its sysfs
	 * directory is readable, it logs out, and then nothing is left:
	 * no session, no parent device of the old sib device in sysfs
	 * (/sys/devices/sibN, under which ib_iser put its SCSI host), and
	 * ib_iser unloads.
	 */
	EXPECT_EQ(0, sh("for s in /sys/class/iscsi_session/session*; do "
			"st=$(cat $s/state) || exit 1; echo \"# ${s##*/}: $st\"; done"));
	EXPECT_EQ(0, step("logout_after_removal", 60, "iscsiadm -m session -u"));
	EXPECT_EQ(0, sh("for i in $(seq 50); do "
			"ls -d /sys/class/iscsi_session/session* /sys/devices/sib[0-9]* "
			">/dev/null 2>&1 || exit 0; sleep 0.2; done; "
			"ls -d /sys/class/iscsi_session/session* /sys/devices/sib[0-9]* "
			"| sed 's/^/# left: /'; exit 1"));
	EXPECT_EQ(0, sh("rmmod ib_iser"));

	/* Everything again on a new device, new data. */
	iser_down();
	lio_down();
	shq("ip link del " VETH);
	ASSERT_EQ(0, dev_setup(variant->type, variant->ibdev));
	ASSERT_EQ(0, iser_target_up());
	ASSERT_EQ(0, iser_initiator_up());
	ASSERT_EQ(0, iser_login(self, variant->ibdev)) TH_LOG("iSER login over the new device");
	JOB(job, FIO_RAND, self->dev);
	EXPECT_EQ(0, step("fio_after", 300, "%s", job)) TH_LOG("4 KiB randwrite + verify");
}

/* ---- SMB Direct --------------------------------------------------------- */

/*
 * Debian builds cifs and ksmbd without SMB Direct: scripts/smbdirect-modules
 * builds both again with it (make selftests SMBDIRECT=1 does, into .build/smbdirect),
 * ksmbd with a NULL check in opinfo_put() without which 6.1.192's oopses
 * in smb2_open() at the first mount. SIB_SMBDIRECT_DIR names another
 * directory holding cifs.ko and ksmbd.ko.
 *
 * ksmbd-tools must be 3.5.2 or later: ksmbd's ipc_validate_msg() (6.1
 * stable) drops a share-config response whose payload_sz is not the size
 * of its payload, and ksmbd-tools before 3.5.2 leave that field 0, so
 * every tree connect fails with STATUS_BAD_NETWORK_NAME. Debian 12 has
 * 3.4.7: scripts/ksmbd-tools gets Debian 13's (make selftests SMBDIRECT=1
 * does, into .build/ksmbd-tools); SIB_KSMBD_TOOLS_DIR names another
 * directory holding ksmbd.mountd, ksmbd.adduser and ksmbd.control. Without
 * either, the ones in PATH serve if they are recent enough.
 */
#define SMB_SHARE	LOGDIR "/smb_share"
#define SMB_MNT		LOGDIR "/smb_mnt"
#define SMB_USER	"sibulp"
#define SMB_PASS	"sib-ulp-pw"
#define KSMBD_DIR	"/etc/ksmbd"
#define KSMBD_TOOLS_MIN	"3.5.2"

/* "DIR/" of the ksmbd-tools in use, or "" for those in PATH */
static char ksmbd_bin[600];

static void smb_down(void)
{
	shq("grep -q \" " SMB_MNT " \" /proc/mounts && "
	    "{ timeout -k 5 60 umount " SMB_MNT " || umount -f -l " SMB_MNT "; }");
	shq("grep -q '^ksmbd ' /proc/modules && timeout -k 5 30 %sksmbd.control -s",
	    ksmbd_bin);
	shq("for p in " LOGDIR "/ksmbd*.pid; do [ -f $p ] && kill $(cat $p); "
	    "rm -f $p; done; sleep 0.2");
	shq("grep -q '^cifs ' /proc/modules && rmmod cifs");
	/* ksmbd's threads end shortly after ksmbd.control -s */
	shq("for i in $(seq 50); do grep -q '^ksmbd ' /proc/modules || break; "
	    "rmmod ksmbd && break; sleep 0.2; done");
	shq("grep -q \" " SMB_SHARE " \" /proc/mounts && umount " SMB_SHARE);
	shq("rm -f " KSMBD_DIR "/ksmbd.conf " KSMBD_DIR "/ksmbdpwd.db");
}

/*
 * In @buf, the directory $@env names, else .build/@name next to this
 * program's .build/selftests; NULL if neither can be had.
 */
static const char *build_dir(char *buf, size_t size, const char *env,
			     const char *name)
{
	const char *val = getenv(env);
	char exe[256];
	ssize_t n;

	if (val && *val) {
		snprintf(buf, size, "%s", val);
		return buf;
	}
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n <= 0)
		return NULL;
	exe[n] = 0;
	*strrchr(exe, '/') = 0;		/* .build/selftests */
	snprintf(buf, size, "%s/../%s", exe, name);
	return buf;
}

/* The directory of the SMB Direct modules in @buf, or NULL. */
static const char *smbdirect_dir(char *buf, size_t size)
{
	return build_dir(buf, size, "SIB_SMBDIRECT_DIR", "smbdirect");
}

/* Whether @prefix's ksmbd.mountd says it is KSMBD_TOOLS_MIN or later. */
static bool ksmbd_tools_recent(const char *prefix)
{
	return !shq("v=$(%sksmbd.mountd -V 2>&1 | "
		    "sed -n 's/.*ksmbd-tools version : *//p'); [ -n \"$v\" ] && "
		    "[ \"$(printf '%%s\\n' " KSMBD_TOOLS_MIN " \"$v\" | sort -V | "
		    "head -n 1)\" = " KSMBD_TOOLS_MIN " ]", prefix);
}

/*
 * Choose the ksmbd-tools (ksmbd_bin): SIB_KSMBD_TOOLS_DIR's, else those
 * of .build/ksmbd-tools, else those in PATH. Why none will do, in @why,
 * or NULL when they will.
 */
static const char *ksmbd_tools_missing(char *why, size_t size)
{
	const char *env = getenv("SIB_KSMBD_TOOLS_DIR");
	char dir[512];

	if (build_dir(dir, sizeof(dir), "SIB_KSMBD_TOOLS_DIR", "ksmbd-tools")) {
		snprintf(ksmbd_bin, sizeof(ksmbd_bin), "%s/", dir);
		if (ksmbd_tools_recent(ksmbd_bin))
			return NULL;
	}
	if (!env || !*env) {
		ksmbd_bin[0] = 0;
		if (ksmbd_tools_recent(ksmbd_bin))
			return NULL;
	}
	snprintf(why, size, "no ksmbd-tools %s or later (%s%s): older ones leave "
		 "the share-config response's payload_sz 0 and this kernel's "
		 "ksmbd serves no share; get them with scripts/ksmbd-tools "
		 "(make selftests SMBDIRECT=1 does) or set SIB_KSMBD_TOOLS_DIR",
		 KSMBD_TOOLS_MIN, env && *env ? env : "neither .build/ksmbd-tools",
		 env && *env ? "" : " nor PATH");
	return why;
}

/*
 * Why the SMB Direct modules cannot be used here, in @why, or NULL when
 * they can: both present, built for the running kernel.
 */
static const char *smbdirect_missing(const char *dir, char *why, size_t size)
{
	struct utsname u;
	char path[600];
	bool ok;

	if (!dir) {
		snprintf(why, size, "no directory for the SMB Direct modules");
		return why;
	}
	snprintf(path, sizeof(path), "%s/cifs.ko", dir);
	ok = path_exists(path);
	snprintf(path, sizeof(path), "%s/ksmbd.ko", dir);
	if (!ok || !path_exists(path)) {
		snprintf(why, size, "no cifs.ko and ksmbd.ko with SMB Direct in %s: "
			 "build them with scripts/smbdirect-modules (make selftests "
			 "SMBDIRECT=1 does) or set SIB_SMBDIRECT_DIR", dir);
		return why;
	}
	uname(&u);
	if (shq("modinfo -F vermagic %s/cifs.ko | grep -q '^%s '", dir, u.release) ||
	    shq("modinfo -F vermagic %s/ksmbd.ko | grep -q '^%s '", dir, u.release)) {
		snprintf(why, size, "the SMB Direct modules in %s are not built "
			 "for %s", dir, u.release);
		return why;
	}
	return NULL;
}

/*
 * Our cifs.ko and ksmbd.ko in place of the kernel's: the in-tree ones
 * unloaded, the modules they depend on (modinfo) loaded, ours inserted;
 * /proc/fs/cifs/DebugData must then list SMB_DIRECT among its features.
 */
static int smb_modules_up(const char *dir)
{
	return step("smb_modules", 120,
		    "set -e; for m in cifs ksmbd; do "
		    "  if grep -q \"^$m \" /proc/modules; then rmmod $m; fi; done; "
		    "for m in $(modinfo -F depends %s/ksmbd.ko %s/cifs.ko | tr , ' '); do "
		    "  modprobe $m; done; "
		    "insmod %s/ksmbd.ko && insmod %s/cifs.ko && "
		    "grep -q SMB_DIRECT /proc/fs/cifs/DebugData",
		    dir, dir, dir, dir);
}

/*
 * ksmbd sharing a tmpfs as "share" to one user (ksmbd.adduser), its
 * configuration in the guest's (tmpfs overlaid) /etc/ksmbd, ksmbd.mountd
 * in the foreground, in the background. ksmbd listens on TCP port 445
 * and, SMB Direct on RoCE, on RDMA CM port 445 of every device.
 */
static int smb_server_up(int mb)
{
	char cmd[700];
	FILE *f;

	if (step("smb_share", 30, "mkdir -p " SMB_SHARE " " SMB_MNT " " KSMBD_DIR
		 " && mount -t tmpfs -o size=%dM,mode=1777 tmpfs " SMB_SHARE,
		 2 * mb + 16))
		return -1;
	f = fopen(KSMBD_DIR "/ksmbd.conf", "w");
	if (!f)
		return -1;
	fprintf(f, "[global]\n"
		"\tserver string = sib-ulp\n"
		"[share]\n"
		"\tpath = " SMB_SHARE "\n"
		"\tread only = no\n"
		"\tbrowseable = yes\n");
	if (fclose(f))
		return -1;
	snprintf(cmd, sizeof(cmd), "exec %sksmbd.mountd -n", ksmbd_bin);
	return step("smb_user", 30, "%sksmbd.adduser -a " SMB_USER " -p " SMB_PASS,
		    ksmbd_bin) ||
	       step_bg("ksmbd_mountd", 3600, cmd) ||
	       step("ksmbd_up", 30,
		    "until ss -Hltn 'sport = :445' | grep -q .; do sleep 0.1; done");
}

/* The client's mount must be over RDMA: /proc/mounts and DebugData say so. */
static int smb_is_rdma(void)
{
	int rc = shq("grep \" " SMB_MNT " \" /proc/mounts | grep -Eq ',rdma(,| )'") ||
		 shq("grep -q 'SMBDirect (in hex) protocol version' /proc/fs/cifs/DebugData");

	sh("grep \" " SMB_MNT " \" /proc/mounts | sed 's/^/# mount: /' >&2; "
	   "grep -A3 SMBDirect /proc/fs/cifs/DebugData | sed 's/^/# DebugData: /' >&2");
	return rc;
}

/*
 * SMB 3.1.1 over SMB Direct: a file of random data copied to the share
 * through the mount (the server's copy and the client's reading back,
 * after the caches are dropped, have its SHA-256), and one made on the
 * server read through the mount; then a byte of that one is changed on
 * the server, and the client must read the change. With @faults, sib
 * drops and reorders 1 % of the packets meanwhile (nvme_faults' knobs).
 */
static void smb_test(struct __test_metadata *_metadata, FIXTURE_DATA(ulp) *self,
		     const FIXTURE_VARIANT(ulp) *variant, int mb, bool faults)
{
	char dirbuf[512], why[1024], src[80], got[80];
	const char *dir = smbdirect_dir(dirbuf, sizeof(dirbuf));
	long long sent;

	if (faults && strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	if (smbdirect_missing(dir, why, sizeof(why)) ||
	    ksmbd_tools_missing(why, sizeof(why)))
		SKIP(return, "%s", why);
	ASSERT_EQ(0, smb_modules_up(dir)) TH_LOG("loading %s/{ksmbd,cifs}.ko", dir);
	ASSERT_EQ(0, smb_server_up(mb)) TH_LOG("ksmbd-tools: %s",
					       *ksmbd_bin ? ksmbd_bin : "PATH");
	/* over TCP first: a failure there is no RDMA matter */
	ASSERT_EQ(0, step("smb_tcp_mount", 60, "mount -t cifs //" ADDR "/share "
			  SMB_MNT " -o vers=3.1.1,username=" SMB_USER
			  ",password=" SMB_PASS));
	ASSERT_EQ(0, step("smb_tcp_umount", 60, "umount " SMB_MNT));
	ASSERT_EQ(0, step("smb_mount", 120, "mount -t cifs //" ADDR "/share " SMB_MNT
			  " -o rdma,vers=3.1.1,username=" SMB_USER ",password=" SMB_PASS))
		TH_LOG("mount -t cifs -o rdma over %s", variant->ibdev);
	ASSERT_EQ(0, smb_is_rdma()) TH_LOG("not an SMB Direct mount");

	if (faults)
		ASSERT_EQ(0, faults_on(variant->ibdev));

	count_start(self, variant->ibdev);
	/* client to server */
	ASSERT_EQ(0, step("smb_write", 600, "head -c %dM /dev/urandom > " LOGDIR
			  "/smb_src && cp " LOGDIR "/smb_src " SMB_MNT "/up && "
			  "sync " SMB_MNT "/up", mb)) TH_LOG("writing %d MiB", mb);
	ASSERT_EQ(0, sha256(LOGDIR "/smb_src", src, sizeof(src)));
	ASSERT_EQ(0, sha256(SMB_SHARE "/up", got, sizeof(got)));
	EXPECT_STREQ(src, got) TH_LOG("the server's copy of the written file");
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(SMB_MNT "/up", got, sizeof(got))) TH_LOG("reading back");
	EXPECT_STREQ(src, got) TH_LOG("%d MiB read back over SMB Direct", mb);

	/* server to client */
	ASSERT_EQ(0, step("smb_server_file", 120, "head -c %dM /dev/urandom > "
			  SMB_SHARE "/down && cp " SMB_SHARE "/down " LOGDIR
			  "/smb_down", mb));
	ASSERT_EQ(0, sha256(SMB_SHARE "/down", src, sizeof(src)));
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(SMB_MNT "/down", got, sizeof(got))) TH_LOG("reading");
	EXPECT_STREQ(src, got) TH_LOG("%d MiB made on the server, read by the client", mb);
	sent = count_sent(self, variant->ibdev);
	fprintf(stderr, "# %s: %lld packets sent\n", variant->ibdev, sent);
	/* written, read back and read: at most 4 KiB in a packet */
	EXPECT_GE(sent, 3LL * mb << 8) TH_LOG("too few packets on %s for the data",
					      variant->ibdev);
	sh("grep -E 'SMBDirect|count_' /proc/fs/cifs/DebugData | sed 's/^/# /' >&2");

	if (faults)
		EXPECT_LT(0, faults_off(variant->ibdev));

	/* one byte changed on the server: the client must see it */
	ASSERT_EQ(0, step("corrupt", 30, "printf X | dd of=" SMB_SHARE "/down bs=1 "
			  "seek=%lld conv=notrunc status=none", mb * 1048576LL / 2 + 1));
	ASSERT_EQ(0, step("drop_caches", 60, "echo 3 > /proc/sys/vm/drop_caches"));
	ASSERT_EQ(0, sha256(SMB_MNT "/down", got, sizeof(got)));
	EXPECT_STRNE(src, got) TH_LOG("a byte changed on the server went unseen");
	EXPECT_NE(0, shq("timeout -k 5 600 cmp " LOGDIR "/smb_down " SMB_MNT "/down"))
		TH_LOG("cmp did not see the changed byte");

	EXPECT_EQ(0, step("smb_umount", 60, "umount " SMB_MNT));
}

static int smb_mb(void)
{
	const char *s = getenv("SIB_ULP_SMB_MB");
	int mb = s ? atoi(s) : 0;

	return mb > 0 ? mb : 64;
}

TEST_F_TIMEOUT(ulp, smb_direct, 900)
{
	smb_test(_metadata, self, variant, smb_mb(), false);
}

TEST_F_TIMEOUT(ulp, smb_direct_faults, 900)
{
	smb_test(_metadata, self, variant, 16, true);
}

/* ---- RDS over RDMA ------------------------------------------------------ */

/*
 * Two RDS sockets of this process, both bound to ADDR (ports RDS_PORT_A
 * and RDS_PORT_B) with SO_RDS_TRANSPORT set to RDS_TRANS_IB before bind:
 * bind then only succeeds where rds_rdma can reach the address through
 * an RDMA device. RDS makes one connection from ADDR to ADDR; rds_rdma
 * carries it on two QPs of the device (a looped back IB connection: the
 * active and the passive side).
 */
#define RDS_PORT_A	18634
#define RDS_PORT_B	18635
#define RDS_BUF		(1 << 20)	/* RDS_MAX_MSG_SIZE */
#define RDS_TIMEOUT	60		/* s, per message */

/*
 * Whether this kernel's RDS gives each connection path a workqueue of
 * its own (the name "krds_cp_wq#..." in rds.ko, as 7.2's does; 6.1's
 * queues all work on one, krdsd). Such an RDS, on 7.2 at least, cannot
 * let go of an IB connection that is up: unloading rds_rdma leaves the
 * connection behind (rds_ib_incoming objects "remaining on
 * __kmem_cache_shutdown()") and its workqueue then runs work in the
 * unloaded module, which kills the guest; removing the connection's
 * device instead blocks for good in rdma_cm's removal, which waits for
 * RDS's CM IDs (rdma_rxe and sib alike), and the netdev stays held.
 * Nothing that ends such a test is safe, so the RDS tests skip there.
 */
static bool rds_cp_wq(void)
{
	return shq("f=$(modinfo -n rds) && case $f in "
		   "*.xz) xz -dc $f;; *.zst) zstd -dc $f;; *) cat $f;; esac | "
		   "grep -aq 'krds_cp_wq#'") == 0;
}

static void rds_down(void)
{
	shq("grep -q '^rds_rdma ' /proc/modules && rmmod rds_rdma");
	shq("grep -q '^rds ' /proc/modules && rmmod rds");
}

/* A byte stream that depends on @seed and on each byte's offset. */
static void rds_fill(unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = x >> 23;
	}
}

/* Offset of the first byte of @buf that differs from rds_fill(), or -1. */
static long rds_check(const unsigned char *buf, size_t len, uint32_t seed)
{
	uint32_t x = seed * 2654435761u + 1;

	for (size_t i = 0; i < len; i++) {
		x = x * 1103515245u + 12345u;
		if (buf[i] != (unsigned char)(x >> 23))
			return i;
	}
	return -1;
}

static struct sockaddr_in rds_addr(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons(port) };

	inet_pton(AF_INET, ADDR, &sin.sin_addr);
	return sin;
}

/* An RDS socket on the IB transport bound to ADDR:@port, or -1. */
static int rds_socket(int port)
{
	struct timeval tv = { .tv_sec = RDS_TIMEOUT };
	struct sockaddr_in sin = rds_addr(port);
	int trans = RDS_TRANS_IB, buf = 4 * RDS_BUF;
	socklen_t len = sizeof(trans);
	int fd;

	fd = socket(AF_RDS, SOCK_SEQPACKET, 0);
	if (fd < 0) {
		fprintf(stderr, "# socket(AF_RDS): %m\n");
		return -1;
	}
	if (setsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, sizeof(trans)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &buf, sizeof(buf)) ||
	    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) ||
	    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv))) {
		fprintf(stderr, "# setsockopt on the RDS socket: %m\n");
		goto fail;
	}
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin))) {
		fprintf(stderr, "# bind(" ADDR ":%d) on RDS's IB transport: %m\n", port);
		goto fail;
	}
	trans = -1;
	if (getsockopt(fd, SOL_RDS, SO_RDS_TRANSPORT, &trans, &len) ||
	    trans != RDS_TRANS_IB) {
		fprintf(stderr, "# SO_RDS_TRANSPORT after bind: %d, not RDS_TRANS_IB (%m)\n",
			trans);
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/*
 * sendmsg of @len bytes to ADDR:@port, with @cmsg (@clen bytes) if any.
 * RDS says ENOBUFS while its send queue is full: retried.
 */
static int rds_send(int fd, int port, const void *buf, size_t len,
		    void *cmsg, size_t clen)
{
	struct sockaddr_in to = rds_addr(port);
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = {
		.msg_name = &to, .msg_namelen = sizeof(to),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cmsg, .msg_controllen = clen,
	};
	ssize_t n;

	for (int i = 0; i < RDS_TIMEOUT * 100; i++) {
		n = sendmsg(fd, &msg, 0);
		if (n == (ssize_t)len)
			return 0;
		if (n >= 0 || (errno != ENOBUFS && errno != EAGAIN))
			break;
		usleep(10000);
	}
	fprintf(stderr, "# RDS sendmsg of %zu bytes to port %d: %zd (%m)\n",
		len, port, n);
	return -1;
}

/*
 * recvmsg into @buf (@size), control data into @cbuf (@csize, may be 0):
 * the message's length (set in *@clen the control data's), or -1.
 */
static ssize_t rds_recv(int fd, void *buf, size_t size, void *cbuf,
			size_t *clen, int *from_port)
{
	struct sockaddr_in from = {};
	struct iovec iov = { .iov_base = buf, .iov_len = size };
	struct msghdr msg = {
		.msg_name = &from, .msg_namelen = sizeof(from),
		.msg_iov = &iov, .msg_iovlen = 1,
		.msg_control = cbuf, .msg_controllen = clen ? *clen : 0,
	};
	ssize_t n = recvmsg(fd, &msg, 0);

	if (n < 0) {
		fprintf(stderr, "# RDS recvmsg: %m\n");
		return -1;
	}
	if (msg.msg_flags & MSG_TRUNC) {
		fprintf(stderr, "# RDS recvmsg: message truncated\n");
		return -1;
	}
	if (clen)
		*clen = msg.msg_controllen;
	if (from_port)
		*from_port = ntohs(from.sin_port);
	return n;
}

/*
 * One message of @len bytes (pattern @seed; with @flip, one byte of it
 * changed before sending) from @from to @to, port @to_port; the receiver
 * checks length, sender and every byte. Returns 0 if all match, 1 on a
 * mismatch, -1 on a failed send or receive.
 */
static int rds_one(int from, int from_port, int to, int to_port,
		   unsigned char *sbuf, unsigned char *rbuf, size_t len,
		   uint32_t seed, bool flip)
{
	int port = 0;
	ssize_t n;
	long bad;

	rds_fill(sbuf, len, seed);
	if (flip)
		sbuf[len / 2] ^= 0x10;
	memset(rbuf, 0, len);
	if (rds_send(from, to_port, sbuf, len, NULL, 0))
		return -1;
	n = rds_recv(to, rbuf, RDS_BUF, NULL, NULL, &port);
	if (n < 0)
		return -1;
	if (n != (ssize_t)len || port != from_port) {
		if (!flip)
			fprintf(stderr, "# RDS: %zd bytes from port %d, sent %zu from %d\n",
				n, port, len, from_port);
		return 1;
	}
	bad = rds_check(rbuf, len, seed);
	if (bad >= 0 && !flip)
		fprintf(stderr, "# RDS: message of %zu bytes differs at offset %ld\n",
			len, bad);
	return bad >= 0;
}

/* The connection ADDR -> ADDR in RDS_INFO_CONNECTIONS: its transport's name. */
static int rds_conn_transport(int fd, char *name, size_t size)
{
	static unsigned char info[1 << 16];
	socklen_t len = sizeof(info);
	struct in_addr a;
	int each;

	inet_pton(AF_INET, ADDR, &a);
	each = getsockopt(fd, SOL_RDS, RDS_INFO_CONNECTIONS, info, &len);
	if (each < (int)sizeof(struct rds_info_connection)) {
		fprintf(stderr, "# RDS_INFO_CONNECTIONS: %d (%m)\n", each);
		return -1;
	}
	for (socklen_t off = 0; off + each <= len; off += each) {
		struct rds_info_connection *c = (void *)(info + off);

		if (c->laddr == a.s_addr && c->faddr == a.s_addr) {
			snprintf(name, size, "%.*s", TRANSNAMSIZ, c->transport);
			return 0;
		}
	}
	fprintf(stderr, "# RDS_INFO_CONNECTIONS: no connection " ADDR " -> " ADDR "\n");
	return -1;
}

static struct cmsghdr *rds_cmsg(void *cbuf, size_t clen, int type)
{
	struct msghdr msg = { .msg_control = cbuf, .msg_controllen = clen };

	for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c))
		if (c->cmsg_level == SOL_RDS && c->cmsg_type == type)
			return c;
	return NULL;
}

/*
 * Wait on @fd for the completion notice (RDS_CMSG_RDMA_STATUS) of the
 * RDMA operation @token: its status, or -1.
 */
static int rds_rdma_status(int fd, uint64_t token)
{
	unsigned char cbuf[256], dummy[64];
	struct rds_rdma_notify note;
	struct cmsghdr *c;
	size_t clen = sizeof(cbuf);

	if (rds_recv(fd, dummy, sizeof(dummy), cbuf, &clen, NULL) < 0)
		return -1;
	c = rds_cmsg(cbuf, clen, RDS_CMSG_RDMA_STATUS);
	if (!c) {
		fprintf(stderr, "# RDS: a message instead of an RDMA status\n");
		return -1;
	}
	memcpy(&note, CMSG_DATA(c), sizeof(note));
	if (note.user_token != token) {
		fprintf(stderr, "# RDS: status of token %llu, not %llu\n",
			(unsigned long long)note.user_token, (unsigned long long)token);
		return -1;
	}
	return note.status;
}

/*
 * RDMA through RDS: B maps @len bytes of its buffer for A in a message
 * (RDS_CMSG_RDMA_MAP: rds_rdma registers them on the connection's device
 * and sends the R_Key along); A gets the cookie (RDS_CMSG_RDMA_DEST) and
 * sends B messages carrying an RDMA operation on it (RDS_CMSG_RDMA_ARGS),
 * first an RDMA WRITE of a pattern into B's buffer, then an RDMA READ of
 * another one out of it, each with a completion notice for A. Both
 * patterns are checked byte for byte. Returns 0 if all went well.
 */
static int rds_rdma(int a, int b, unsigned char *abuf, unsigned char *bbuf,
		    size_t len)
{
	union {
		struct cmsghdr hdr;
		unsigned char buf[CMSG_SPACE(sizeof(struct rds_rdma_args))];
	} ctl;
	unsigned char cbuf[256], msg[64];
	struct rds_get_mr_args map = {
		.vec = { .addr = (uintptr_t)bbuf, .bytes = len },
	};
	struct rds_iovec local = { .addr = (uintptr_t)abuf, .bytes = len };
	struct rds_rdma_args op = {
		.remote_vec = { .addr = 0, .bytes = len },
		.local_vec_addr = (uintptr_t)&local, .nr_local = 1,
	};
	struct cmsghdr *c = &ctl.hdr;
	size_t clen = sizeof(cbuf);
	long bad;
	int st;

	/* B: "map" with its buffer's cookie */
	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_MAP;
	c->cmsg_len = CMSG_LEN(sizeof(map));
	memcpy(CMSG_DATA(c), &map, sizeof(map));
	if (rds_send(b, RDS_PORT_A, "map", 3, &ctl, CMSG_SPACE(sizeof(map))))
		return -1;
	if (rds_recv(a, msg, sizeof(msg), cbuf, &clen, NULL) != 3)
		return -1;
	c = rds_cmsg(cbuf, clen, RDS_CMSG_RDMA_DEST);
	if (!c) {
		fprintf(stderr, "# RDS: no RDS_CMSG_RDMA_DEST with the map message\n");
		return -1;
	}
	memcpy(&op.cookie, CMSG_DATA(c), sizeof(op.cookie));
	fprintf(stderr, "# RDS: cookie %#llx for %zu bytes of B's buffer\n",
		(unsigned long long)op.cookie, len);

	/* A: RDMA WRITE of pattern 101 into B's buffer, with "write" */
	rds_fill(abuf, len, 101);
	memset(bbuf, 0, len);
	op.flags = RDS_RDMA_READWRITE | RDS_RDMA_NOTIFY_ME;
	op.user_token = 1;
	c = &ctl.hdr;
	memset(&ctl, 0, sizeof(ctl));
	c->cmsg_level = SOL_RDS;
	c->cmsg_type = RDS_CMSG_RDMA_ARGS;
	c->cmsg_len = CMSG_LEN(sizeof(op));
	memcpy(CMSG_DATA(c), &op, sizeof(op));
	if (rds_send(a, RDS_PORT_B, "write", 5, &ctl, sizeof(ctl)))
		return -1;
	if (rds_recv(b, msg, sizeof(msg), NULL, NULL, NULL) != 5)
		return -1;
	st = rds_rdma_status(a, 1);
	if (st) {
		fprintf(stderr, "# RDS: RDMA WRITE status %d\n", st);
		return -1;
	}
	bad = rds_check(bbuf, len, 101);
	if (bad >= 0) {
		fprintf(stderr, "# RDS: RDMA WRITE: B's buffer differs at %ld\n", bad);
		return -1;
	}

	/* A: RDMA READ of pattern 202 out of B's buffer, with "read" */
	rds_fill(bbuf, len, 202);
	memset(abuf, 0, len);
	op.flags = RDS_RDMA_NOTIFY_ME;
	op.user_token = 2;
	memcpy(CMSG_DATA(c), &op, sizeof(op));
	if (rds_send(a, RDS_PORT_B, "read", 4, &ctl, sizeof(ctl)))
		return -1;
	st = rds_rdma_status(a, 2);
	if (st) {
		fprintf(stderr, "# RDS: RDMA READ status %d\n", st);
		return -1;
	}
	if (rds_recv(b, msg, sizeof(msg), NULL, NULL, NULL) != 4)
		return -1;
	bad = rds_check(abuf, len, 202);
	if (bad >= 0) {
		fprintf(stderr, "# RDS: RDMA READ: A's buffer differs at %ld\n", bad);
		return -1;
	}
	return 0;
}

/*
 * Messages of 1 B to 1 MiB (RDS's largest) both ways between the two
 * sockets, each checked byte for byte; the connection must be RDS's IB
 * transport ("infiniband" in RDS_INFO_CONNECTIONS) and its packets must
 * have gone through the device. A message with one byte changed before
 * sending must be caught by the same check. Then the RDMA operations of
 * rds_rdma(). With @faults, sib drops and reorders 1 % of the packets.
 */
static void rds_test(struct __test_metadata *_metadata, FIXTURE_DATA(ulp) *self,
		     const FIXTURE_VARIANT(ulp) *variant, bool faults)
{
	static const size_t sizes[] = {
		1, 2, 7, 64, 1000, 4095, 4096, 4097, 8192, 65535, 65536, 65537,
		131072, 262143, 524288, 1048575, RDS_BUF,
	};
	int rounds = faults ? 3 : 2, a = -1, b = -1, rc;
	unsigned char *sbuf = NULL, *rbuf = NULL;
	long long sent, bytes = 0;
	char trans[32];

	if (faults && strcmp(variant->type, "sib"))
		SKIP(return, "fault injection is sib's");
	if (!kernel_has("RDS_RDMA"))
		SKIP(return, "the kernel has no RDS over RDMA (CONFIG_RDS_RDMA)");
	if (rds_cp_wq())
		SKIP(return, "this kernel's RDS cannot let go of a connection: "
		     "unloading rds_rdma or removing the device under it is "
		     "unsafe (Documentation/kernels.md)");
	/*
	 * rds_rdma gives its RC QPs a transport retry count of 1 (its
	 * rds_ib_retry_count): two losses in a row without progress between
	 * them end the QP with RETRY_EXC_ERR, and RDS connects again and
	 * sends its messages again, but an RDMA operation caught in that
	 * did not report its completion within 60 s. Under 1 % loss that is
	 * all but certain within seconds, by the RC rules on any device:
	 * the faults run gives rds_rdma 7 retries.
	 */
	ASSERT_EQ(0, step("modprobe_rds", 60, faults ?
			  "rmmod rds_rdma 2>/dev/null; modprobe rds_rdma rds_ib_retry_count=7 && "
			  "grep -qx 7 /sys/module/rds_rdma/parameters/rds_ib_retry_count" :
			  "modprobe rds_rdma"));
	ASSERT_EQ(0, posix_memalign((void **)&sbuf, 4096, RDS_BUF));
	ASSERT_EQ(0, posix_memalign((void **)&rbuf, 4096, RDS_BUF));
	a = rds_socket(RDS_PORT_A);
	b = rds_socket(RDS_PORT_B);
	ASSERT_LE(0, a) TH_LOG("RDS socket on " ADDR " over %s", variant->ibdev);
	ASSERT_LE(0, b);

	if (faults)
		ASSERT_EQ(0, faults_on(variant->ibdev));
	count_start(self, variant->ibdev);
	for (int r = 0; r < rounds; r++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			uint32_t seed = r * 1000 + i;

			rc = rds_one(a, RDS_PORT_A, b, RDS_PORT_B, sbuf, rbuf,
				     sizes[i], seed, false);
			ASSERT_EQ(0, rc) TH_LOG("A -> B, %zu bytes", sizes[i]);
			rc = rds_one(b, RDS_PORT_B, a, RDS_PORT_A, sbuf, rbuf,
				     sizes[i], seed + 500, false);
			ASSERT_EQ(0, rc) TH_LOG("B -> A, %zu bytes", sizes[i]);
			bytes += 2 * sizes[i];
		}
	}
	fprintf(stderr, "# RDS: %lld bytes in %zu messages\n", bytes,
		rounds * 2 * sizeof(sizes) / sizeof(sizes[0]));
	ASSERT_EQ(0, rds_conn_transport(a, trans, sizeof(trans)));
	fprintf(stderr, "# RDS connection " ADDR " -> " ADDR ": transport %s\n", trans);
	EXPECT_STREQ("infiniband", trans);

	/* the check must see one changed byte */
	EXPECT_EQ(1, rds_one(a, RDS_PORT_A, b, RDS_PORT_B, sbuf, rbuf, 65536, 7, true))
		TH_LOG("a message with a changed byte passed the check");

	EXPECT_EQ(0, rds_rdma(a, b, sbuf, rbuf, RDS_BUF)) TH_LOG("RDMA over RDS");
	sent = count_sent(self, variant->ibdev);
	fprintf(stderr, "# %s: %lld packets sent\n", variant->ibdev, sent);
	/* both QPs' packets: every byte once, at most 4 KiB in a packet */
	EXPECT_GE(sent, (bytes + 2 * RDS_BUF) >> 12)
		TH_LOG("too few packets on %s for the data", variant->ibdev);

	if (faults)
		EXPECT_LT(0, faults_off(variant->ibdev));
	close(a);
	close(b);
	free(sbuf);
	free(rbuf);
}

TEST_F_TIMEOUT(ulp, rds, 600)
{
	rds_test(_metadata, self, variant, false);
}

/* rds under sib's fault injection, with 7 transport retries (above). */
TEST_F_TIMEOUT(ulp, rds_faults, 900)
{
	rds_test(_metadata, self, variant, true);
}

/* ---- main --------------------------------------------------------------- */

/*
 * The kernel 6.1 harness takes no arguments: "-t NAME" and "-v VARIANT"
 * (each repeatable) keep only those tests and variants, "-x NAME"
 * (repeatable) leaves a test out, "-l" lists them.
 * Whatever a test left behind (a test killed by its timeout runs no
 * teardown) is cleaned up at exit.
 */
static bool wanted(const char *name, const char **want, int n)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(want[i], name))
			return true;
	return !n;
}

/* @name is one of @skip; @seen records which of them named a test. */
static bool left_out(const char *name, const char **skip, bool *seen, int n)
{
	bool out = false;

	for (int i = 0; i < n; i++) {
		if (!strcmp(skip[i], name)) {
			seen[i] = true;
			out = true;
		}
	}
	return out;
}

int main(int argc, char **argv)
{
	const char *tests[16], *variants[8], *skip[32];
	bool skip_seen[32] = { false };
	int nt = 0, nv = 0, nx = 0;
	bool list = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc && nt < 16)
			tests[nt++] = argv[++i];
		else if (!strcmp(argv[i], "-v") && i + 1 < argc && nv < 8)
			variants[nv++] = argv[++i];
		else if (!strcmp(argv[i], "-x") && i + 1 < argc && nx < 32)
			skip[nx++] = argv[++i];
		else if (!strcmp(argv[i], "-l"))
			list = true;
	}
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		struct __fixture_variant_metadata *v, *vnext, *vlast = NULL;
		struct __test_metadata *t, *tnext, *tlast = NULL;

		for (t = f->tests, f->tests = NULL; t; t = tnext) {
			tnext = t->next;
			if (left_out(t->name, skip, skip_seen, nx) ||
			    !wanted(t->name, tests, nt))
				continue;
			if (tlast)
				tlast->next = t;
			else
				f->tests = t;
			tlast = t;
			t->next = NULL;
			f->tests->prev = t;
		}
		for (v = f->variant, f->variant = NULL; v; v = vnext) {
			vnext = v->next;
			if (!wanted(v->name, variants, nv))
				continue;
			if (vlast)
				vlast->next = v;
			else
				f->variant = v;
			vlast = v;
			v->next = NULL;
			f->variant->prev = v;
		}
		/* no variant left: no test either (else one without data) */
		if (nv && !f->variant)
			f->tests = NULL;
		if (list)
			for (v = f->variant; v; v = v->next)
				for (t = f->tests; t; t = t->next)
					printf("%s.%s.%s\n", f->name, v->name, t->name);
	}
	if (list)
		return 0;
	/* a name that matches nothing is a typo, not a test left out */
	for (int i = 0; i < nx; i++) {
		if (!skip_seen[i]) {
			fprintf(stderr, "%s: no test named %s\n", argv[0], skip[i]);
			return 1;
		}
	}
	atexit(ulp_cleanup);
	sib_harness_scale_timeouts();
	return test_harness_run(argc, argv);
}
