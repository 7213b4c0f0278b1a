/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * Helpers shared by sib's selftests: shell commands, sysfs, dmesg, the
 * module, and RDMA netlink (link add/delete with the exact errno).
 */
#ifndef SIB_UTIL_H
#define SIB_UTIL_H

#include <stdbool.h>
#include <stddef.h>

#define SIB_MODULE	"rdma_sib"
#define SIB_SYSFS_IB	"/sys/class/infiniband"

/* Run a shell command (printf-style); returns its exit status, or -1. */
int sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Same, with stdout and stderr discarded. */
int shq(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* The number a shell command prints first (strtol base 0), or -1. */
long sh_num(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Read a whole small file into @buf (NUL-terminated); returns length or -errno. */
int read_text(const char *path, char *buf, size_t size);
bool path_exists(const char *path);
/* Poll until @path exists (@want true) or is gone (@want false). */
bool wait_path(const char *path, bool want, int timeout_ms);

/*
 * Run the server command @srv in the background and, once the shell
 * condition @ready holds (polled for 30 s), the client command @cli; 0 if
 * both exit 0. Their output, and a last line "client C server S" with
 * both exit statuses, go to the file @log, shown on failure.
 */
int run_pair_log(const char *log, const char *srv, const char *ready,
		 const char *cli);
/*
 * run_pair_log() of a verbs tool that exchanges addresses over TCP 18515
 * (pingpongs, perftest without -R), its server listening in namespace @ns
 * ("" for the initial one). perftest refuses to report when its check of
 * the CPU clock fails ("Correlation coefficient"), which happens under
 * TCG on a busy host: not the device's fault, so such a run is repeated,
 * up to three times in all.
 */
int tcp_pair(const char *log, const char *ns, const char *srv, const char *cli);

/* Does the kernel log contain @needle? */
bool dmesg_has(const char *needle);
/* Clear the kernel log, so that dmesg_has() sees only what follows. */
void dmesg_clear(void);

bool module_loaded(void);
/* /sys/module/rdma_sib/refcnt, or -1 when not loaded. */
int module_refcnt(void);
/* Load (modprobe) or unload (rmmod) the module; 0 on success. */
int module_load(void);
int module_unload(void);

/* RDMA netlink: returns 0 or a negative errno from the kernel. */
int nl_newlink(const char *ibdev, const char *type, const char *ndev);
int nl_dellink(const char *ibdev);
/* Device index of @ibdev, or a negative errno. */
int nl_dev_index(const char *ibdev);

/* Remove every sib device (used in teardown); returns how many. */
int sib_delete_all(void);
bool ibdev_exists(const char *ibdev);

/* Index of @addr (IPv4 dotted or IPv6) in port 1's GID table, or -1. */
int gid_index(const char *ibdev, const char *addr);
/* gid_index(), waiting up to 5 s for ib_core to add the GID. */
int wait_gid_index(const char *ibdev, const char *addr);
/* A counter of "rdma statistic show link IBDEV/1", or -1. */
long long link_counter(const char *ibdev, const char *name);
/*
 * A port counter from sysfs (hw_counters; cheaper than "rdma statistic"),
 * or -1. ib_core serves a read within 10 ms of the last from a cache.
 */
long long hw_counter(const char *ibdev, const char *name);
/*
 * hw_counter() of sib0, read after 30 ms: ib_core's cache then no longer
 * answers with the value of an earlier read.
 */
long long sib0_counter(const char *name);

/* Write @val to fault-injection knob @knob of @ibdev (debugfs); 0 or -errno. */
int fault_knob_set(const char *ibdev, const char *knob, long long val);
/* Read fault-injection knob or counter @knob of @ibdev, or -1. */
long long fault_knob_get(const char *ibdev, const char *knob);

/*
 * Set module parameter @name of rdma_sib (a bool takes 0 or 1); 0 or
 * -errno.
 */
int sib_param_set(const char *name, long long val);

/*
 * The sib doorbell files (anon_inode:[sib_db]) open in this process,
 * lowest descriptor first, at most @max of them in @fds; how many.
 */
int sib_db_fds(int *fds, int max);

/*
 * The path of the repository's scripts/@name, found from this program's
 * place in .build/selftests/; a static buffer.
 */
const char *repo_script(const char *name);

/*
 * The local ACK timeout (IBA exponent: 4.096 us << t) for a test's QP:
 * @t, or SIB_QP_TIMEOUT_MIN when that is larger (0, no timeout, stays
 * 0). Tests that use short timeouts to retry quickly call it, so that a
 * slow kernel (the debug lane sets 18, about 1 s) does not time out round
 * trips that are merely slow.
 */
unsigned int sib_qp_timeout(unsigned int t);

/*
 * Is this a slow (debug) kernel, as the debug lane says by raising
 * SIB_WAIT_MS above its 5000 ms default? Tests that repeat an operation
 * many times repeat it fewer times there, to fit in their time limit.
 */
bool sib_slow_kernel(void);

#endif /* SIB_UTIL_H */
