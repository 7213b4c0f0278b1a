// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * Helpers shared by sib's selftests.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/klog.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <linux/netlink.h>
#include <rdma/rdma_netlink.h>

#include "sib_util.h"

static int vsh(bool quiet, const char *fmt, va_list ap)
{
	char *cmd, *full;
	int ret;

	if (vasprintf(&cmd, fmt, ap) < 0)
		return -1;
	if (quiet) {
		if (asprintf(&full, "{ %s ; } >/dev/null 2>&1", cmd) < 0) {
			free(cmd);
			return -1;
		}
		free(cmd);
		cmd = full;
	}
	ret = system(cmd);
	free(cmd);
	if (ret == -1 || !WIFEXITED(ret))
		return -1;
	return WEXITSTATUS(ret);
}

int sh(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(false, fmt, ap);
	va_end(ap);
	return ret;
}

int shq(const char *fmt, ...)
{
	va_list ap;
	int ret;

	va_start(ap, fmt);
	ret = vsh(true, fmt, ap);
	va_end(ap);
	return ret;
}

int run_pair_log(const char *log, const char *srv, const char *ready,
		 const char *cli)
{
	int ret;

	ret = sh("{ %s & s=$!; for i in $(seq 150); do "
		 "{ %s; } >/dev/null 2>&1 && break; sleep 0.2; done; "
		 "%s; c=$?; wait $s; w=$?; "
		 "echo \"client $c server $w\"; [ $c = 0 ] && [ $w = 0 ]; } "
		 ">%s 2>&1", srv, ready, cli, log);
	if (ret)
		sh("sed 's/^/# /' %s", log);
	return ret;
}

int tcp_pair(const char *log, const char *ns, const char *srv, const char *cli)
{
	char ready[128];
	int ret = -1;

	snprintf(ready, sizeof(ready), "%s%s ss -Hltn 'sport = :18515' | grep -q .",
		 *ns ? "ip netns exec " : "", ns);
	for (int i = 0; i < 3; i++) {
		ret = run_pair_log(log, srv, ready, cli);
		if (!ret || shq("grep -q 'Correlation coefficient' %s", log))
			break;
		sh("echo '# perftest could not measure its clock: once more'");
	}
	return ret;
}

int read_text(const char *path, char *buf, size_t size)
{
	ssize_t n;
	int fd;

	fd = open(path, O_RDONLY);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	if (n < 0)
		n = -errno;
	else
		buf[n] = 0;
	close(fd);
	return n;
}

bool path_exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

bool wait_path(const char *path, bool want, int timeout_ms)
{
	for (int t = 0; t <= timeout_ms; t += 20) {
		if (path_exists(path) == want)
			return true;
		usleep(20000);
	}
	return false;
}

bool dmesg_has(const char *needle)
{
	int len = klogctl(10 /* SYSLOG_ACTION_SIZE_BUFFER */, NULL, 0);
	bool found = false;
	char *buf;
	int n;

	if (len <= 0)
		return false;
	buf = malloc(len + 1);
	if (!buf)
		return false;
	n = klogctl(3 /* SYSLOG_ACTION_READ_ALL */, buf, len);
	if (n > 0) {
		buf[n] = 0;
		found = strstr(buf, needle) != NULL;
	}
	free(buf);
	return found;
}

void dmesg_clear(void)
{
	klogctl(5 /* SYSLOG_ACTION_CLEAR */, NULL, 0);
}

bool module_loaded(void)
{
	return path_exists("/sys/module/" SIB_MODULE "/refcnt");
}

int module_refcnt(void)
{
	char buf[32];

	if (read_text("/sys/module/" SIB_MODULE "/refcnt", buf, sizeof(buf)) < 0)
		return -1;
	return atoi(buf);
}

int module_load(void)
{
	return shq("modprobe " SIB_MODULE);
}

int module_unload(void)
{
	if (!module_loaded())
		return 0;
	return shq("rmmod " SIB_MODULE);
}

/* ---- RDMA netlink ---------------------------------------------------- */

struct nl_req {
	struct nlmsghdr nh;
	char attrs[512];
};

static void nl_put(struct nl_req *req, unsigned short type, const void *data,
		   size_t len)
{
	struct nlattr *a = (void *)((char *)req + NLMSG_ALIGN(req->nh.nlmsg_len));

	a->nla_type = type;
	a->nla_len = NLA_HDRLEN + len;
	memcpy((char *)a + NLA_HDRLEN, data, len);
	req->nh.nlmsg_len = NLMSG_ALIGN(req->nh.nlmsg_len) + NLA_ALIGN(a->nla_len);
}

static void nl_put_str(struct nl_req *req, unsigned short type, const char *s)
{
	nl_put(req, type, s, strlen(s) + 1);
}

static void nl_init(struct nl_req *req, int op, unsigned short flags)
{
	memset(req, 0, sizeof(*req));
	req->nh.nlmsg_len = NLMSG_HDRLEN;
	req->nh.nlmsg_type = RDMA_NL_GET_TYPE(RDMA_NL_NLDEV, op);
	req->nh.nlmsg_flags = NLM_F_REQUEST | flags;
	req->nh.nlmsg_seq = 1;
}

static int nl_open(void)
{
	struct timeval tv = { .tv_sec = 30 };
	int fd;

	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_RDMA);
	if (fd < 0)
		return -errno;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	return fd;
}

/* Send a request with NLM_F_ACK and return the kernel's error code. */
static int nl_transact(struct nl_req *req)
{
	char buf[8192];
	ssize_t n;
	int fd, ret = -EPROTO;

	fd = nl_open();
	if (fd < 0)
		return fd;
	req->nh.nlmsg_flags |= NLM_F_ACK;
	if (send(fd, req, req->nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *nh = (void *)buf;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n < 0) {
			ret = -errno;
			break;
		}
		for (; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			if (nh->nlmsg_type == NLMSG_ERROR) {
				ret = ((struct nlmsgerr *)NLMSG_DATA(nh))->error;
				goto out;
			}
		}
	}
out:
	close(fd);
	return ret;
}

int nl_newlink(const char *ibdev, const char *type, const char *ndev)
{
	struct nl_req req;

	nl_init(&req, RDMA_NLDEV_CMD_NEWLINK, 0);
	nl_put_str(&req, RDMA_NLDEV_ATTR_DEV_NAME, ibdev);
	nl_put_str(&req, RDMA_NLDEV_ATTR_LINK_TYPE, type);
	nl_put_str(&req, RDMA_NLDEV_ATTR_NDEV_NAME, ndev);
	return nl_transact(&req);
}

/* Scan one dump reply for @ibdev's index. */
static int nl_find_index(struct nlmsghdr *nh, const char *ibdev)
{
	struct nlattr *a = (void *)((char *)NLMSG_DATA(nh));
	int left = nh->nlmsg_len - NLMSG_HDRLEN;
	int index = -1;
	bool match = false;

	while (left >= NLA_HDRLEN && a->nla_len >= NLA_HDRLEN &&
	       a->nla_len <= left) {
		void *data = (char *)a + NLA_HDRLEN;

		if (a->nla_type == RDMA_NLDEV_ATTR_DEV_INDEX)
			memcpy(&index, data, sizeof(index));
		if (a->nla_type == RDMA_NLDEV_ATTR_DEV_NAME)
			match = !strcmp(data, ibdev);
		left -= NLA_ALIGN(a->nla_len);
		a = (void *)((char *)a + NLA_ALIGN(a->nla_len));
	}
	return match ? index : -1;
}

int nl_dev_index(const char *ibdev)
{
	struct nl_req req;
	char buf[16384];
	int fd, ret = -ENODEV;
	ssize_t n;

	fd = nl_open();
	if (fd < 0)
		return fd;
	nl_init(&req, RDMA_NLDEV_CMD_GET, NLM_F_DUMP);
	if (send(fd, &req, req.nh.nlmsg_len, 0) < 0) {
		ret = -errno;
		goto out;
	}
	for (;;) {
		struct nlmsghdr *nh = (void *)buf;

		n = recv(fd, buf, sizeof(buf), 0);
		if (n <= 0) {
			ret = n < 0 ? -errno : ret;
			break;
		}
		for (; NLMSG_OK(nh, n); nh = NLMSG_NEXT(nh, n)) {
			int idx;

			if (nh->nlmsg_type == NLMSG_DONE ||
			    nh->nlmsg_type == NLMSG_ERROR)
				goto out;
			idx = nl_find_index(nh, ibdev);
			if (idx >= 0 && ret < 0)
				ret = idx;
		}
	}
out:
	close(fd);
	return ret;
}

int nl_dellink(const char *ibdev)
{
	struct nl_req req;
	int index = nl_dev_index(ibdev);
	unsigned int idx;

	if (index < 0)
		return index;
	idx = index;
	nl_init(&req, RDMA_NLDEV_CMD_DELLINK, 0);
	nl_put(&req, RDMA_NLDEV_ATTR_DEV_INDEX, &idx, sizeof(idx));
	return nl_transact(&req);
}

bool ibdev_exists(const char *ibdev)
{
	char path[256];

	snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s", ibdev);
	return path_exists(path);
}

/* A sib device is one whose sysfs directory has the sib_abi attribute. */
int sib_delete_all(void)
{
	struct dirent *de;
	char path[512];
	int n = 0;
	DIR *d;

	d = opendir(SIB_SYSFS_IB);
	if (!d)
		return 0;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s/sib_abi",
			 de->d_name);
		if (path_exists(path) && nl_dellink(de->d_name) == 0)
			n++;
	}
	closedir(d);
	return n;
}

int gid_index(const char *ibdev, const char *addr)
{
	unsigned char want[16] = {}, raw[16];
	char path[128], buf[64];

	if (strchr(addr, ':')) {
		inet_pton(AF_INET6, addr, want);
	} else {
		want[10] = 0xff;
		want[11] = 0xff;
		inet_pton(AF_INET, addr, want + 12);
	}
	for (int i = 0; i < 16; i++) {
		snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s/ports/1/gids/%d",
			 ibdev, i);
		if (read_text(path, buf, sizeof(buf)) <= 0)
			continue;
		buf[strcspn(buf, "\n")] = 0;
		if (inet_pton(AF_INET6, buf, raw) == 1 &&
		    !memcmp(raw, want, 16))
			return i;
	}
	return -1;
}

int wait_gid_index(const char *ibdev, const char *addr)
{
	int idx = -1;

	for (int i = 0; i < 250 && idx < 0; i++) {
		idx = gid_index(ibdev, addr);
		if (idx < 0)
			usleep(20000);
	}
	return idx;
}

long long link_counter(const char *ibdev, const char *name)
{
	char cmd[128], line[4096], *p;
	long long v = -1;
	size_t n = strlen(name);
	FILE *f;

	snprintf(cmd, sizeof(cmd), "rdma statistic show link %s/1", ibdev);
	f = popen(cmd, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		for (p = strstr(line, name); p; p = strstr(p + 1, name))
			if (p[-1] == ' ' && p[n] == ' ')
				v = atoll(p + n + 1);
	pclose(f);
	return v;
}

long long hw_counter(const char *ibdev, const char *name)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), SIB_SYSFS_IB "/%s/ports/1/hw_counters/%s",
		 ibdev, name);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

long long sib0_counter(const char *name)
{
	usleep(30000);
	return hw_counter("sib0", name);
}

#define SIB_FAULT_DIR "/sys/kernel/debug/sib/%s/fault/%s"

/* Write @val in decimal to the file @path; 0 or -errno. */
static int write_ll(const char *path, long long val)
{
	char buf[32];
	int fd, n, ret = 0;

	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -errno;
	n = snprintf(buf, sizeof(buf), "%lld\n", val);
	errno = EIO;
	if (write(fd, buf, n) != n)
		ret = -errno;	/* the kernel's refusal, or EIO if short */
	close(fd);
	return ret;
}

int fault_knob_set(const char *ibdev, const char *knob, long long val)
{
	char path[256];

	snprintf(path, sizeof(path), SIB_FAULT_DIR, ibdev, knob);
	return write_ll(path, val);
}

int sib_param_set(const char *name, long long val)
{
	char path[256];

	snprintf(path, sizeof(path), "/sys/module/rdma_sib/parameters/%s",
		 name);
	return write_ll(path, val);
}

long long fault_knob_get(const char *ibdev, const char *knob)
{
	char path[256], buf[64];

	snprintf(path, sizeof(path), SIB_FAULT_DIR, ibdev, knob);
	if (read_text(path, buf, sizeof(buf)) <= 0)
		return -1;
	return atoll(buf);
}

int sib_db_fds(int *fds, int max)
{
	char path[64], link[64];
	int n = 0;

	for (int fd = 0; fd < 1024 && n < max; fd++) {
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (!strcmp(link, "anon_inode:[sib_db]"))
			fds[n++] = fd;
	}
	return n;
}

const char *repo_script(const char *name)
{
	static char path[4096];
	char exe[4000];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	char *slash;

	if (n <= 0)
		return name;
	exe[n] = 0;
	slash = strrchr(exe, '/');
	if (slash)
		*slash = 0;
	snprintf(path, sizeof(path), "%s/../../scripts/%s", exe, name);
	return path;
}

unsigned int sib_qp_timeout(unsigned int t)
{
	const char *e = getenv("SIB_QP_TIMEOUT_MIN");
	int min = e ? atoi(e) : 0;

	if (!t || min <= (int)t || min > 31)
		return t;
	return min;
}

bool sib_slow_kernel(void)
{
	const char *e = getenv("SIB_WAIT_MS");

	return e && atoi(e) > 5000;
}

long sh_num(const char *fmt, ...)
{
	char *cmd, buf[64] = "";
	va_list ap;
	FILE *f;
	int n;

	va_start(ap, fmt);
	n = vasprintf(&cmd, fmt, ap);
	va_end(ap);
	if (n < 0)
		return -1;
	f = popen(cmd, "r");
	free(cmd);
	if (!f)
		return -1;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = 0;
	pclose(f);
	return buf[0] ? strtol(buf, NULL, 0) : -1;
}
