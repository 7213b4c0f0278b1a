/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * sib's trace events (Documentation/tracing.md) in the selftests: tracefs
 * set up and the sib events enabled, the trace read into a list of events
 * (from the buffer, or from a file a lab saved), and events found by name
 * and fields, in order. Include after kselftest_harness.h and sib_util.h.
 */
#ifndef SIB_TRACE_H
#define SIB_TRACE_H

#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TRACEFS	"/sys/kernel/tracing"

/* One sib event of the trace buffer: its name and its fields. */
struct tev {
	char name[40];
	char text[320];		/* " field=value ... " (spaces around) */
};

struct trace_log {
	struct tev *ev;
	int n;
};

static inline int tfs_write(const char *file, const char *val)
{
	char path[256];
	FILE *f;
	int ret;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	f = fopen(path, "w");
	if (!f)
		return -errno;
	ret = fputs(val, f) < 0 ? -EIO : 0;
	if (fclose(f) && !ret)
		ret = -errno;
	return ret;
}

/* tracefs mounted, the buffer empty, the global clock (events of all CPUs in order). */
static inline bool trace_ready(void)
{
	if (!path_exists(TRACEFS "/trace"))
		shq("mount -t tracefs nodev " TRACEFS);
	return !tfs_write("tracing_on", "0") && !tfs_write("trace", "") &&
	       !tfs_write("trace_clock", "global") &&
	       !tfs_write("buffer_size_kb", "8192") &&
	       !tfs_write("tracing_on", "1");
}

static inline void trace_restore(void)
{
	tfs_write("events/sib/enable", "0");
	tfs_write("trace", "");
	tfs_write("trace_clock", "local");
}

/* Read the sib events of a trace saved in @path, in order. */
static inline void trace_read_file(struct trace_log *log, const char *path)
{
	FILE *f = fopen(path, "r");
	char line[512];
	int cap = 0;

	log->ev = NULL;
	log->n = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		char *at = strstr(line, ": sib_"), *end;
		struct tev *e;

		if (line[0] == '#' || !at)
			continue;
		end = strchr(at + 2, ':');
		if (!end)
			continue;
		if (log->n == cap) {
			cap = cap ? 2 * cap : 256;
			log->ev = realloc(log->ev, cap * sizeof(*log->ev));
			if (!log->ev)
				break;
		}
		e = &log->ev[log->n++];
		snprintf(e->name, sizeof(e->name), "%.*s", (int)(end - at - 2),
			 at + 2);
		line[strcspn(line, "\n")] = 0;
		snprintf(e->text, sizeof(e->text), "%s ", end + 1);
	}
	fclose(f);
}

/* Read the trace buffer's sib events, in order. */
static inline void trace_read(struct trace_log *log)
{
	trace_read_file(log, TRACEFS "/trace");
}

static inline void trace_log_free(struct trace_log *log)
{
	free(log->ev);
	log->ev = NULL;
	log->n = 0;
}

/*
 * The first event @name at or after @from whose fields hold every string
 * of the NULL-terminated list (each one whole, "psn=12" or "RTR -> RTS");
 * its index, or -1.
 */
static inline int tfind(const struct trace_log *log, int from, const char *name, ...)
{
	for (int i = from < 0 ? 0 : from; i < log->n; i++) {
		bool all = true;
		const char *want;
		va_list ap;

		if (strcmp(log->ev[i].name, name))
			continue;
		va_start(ap, name);
		while (all && (want = va_arg(ap, const char *))) {
			char tok[128];

			snprintf(tok, sizeof(tok), " %s ", want);
			all = strstr(log->ev[i].text, tok);
		}
		va_end(ap);
		if (all)
			return i;
	}
	return -1;
}

/* Field @key of event @i as a number, or -1. */
static inline long tfield(const struct trace_log *log, int i, const char *key)
{
	char tok[64];
	const char *at;

	if (i < 0 || i >= log->n)
		return -1;
	snprintf(tok, sizeof(tok), " %s=", key);
	at = strstr(log->ev[i].text, tok);
	return at ? strtol(at + strlen(tok), NULL, 0) : -1;
}

/* Print the log (a failing test shows what it saw). */
static inline void trace_dump(const struct trace_log *log)
{
	for (int i = 0; i < log->n; i++)
		fprintf(stderr, "# %4d %s:%s\n", i, log->ev[i].name,
			log->ev[i].text);
}

/* "key=value" in a static buffer of its own (up to 8 in use at once). */
static inline const char *kv(const char *key, unsigned long val)
{
	static char buf[8][48];
	static int next;
	char *b = buf[next++ % 8];

	snprintf(b, sizeof(buf[0]), "%s=%lu", key, val);
	return b;
}

/*
 * Enable the sib events; a module without them fails the test (it is
 * what the test is about), it is not skipped.
 */
#define TRACE_ON() do { \
	ASSERT_TRUE(trace_ready()) TH_LOG("tracefs not usable"); \
	ASSERT_TRUE(path_exists(TRACEFS "/events/sib/enable")) \
		TH_LOG("the module has no sib trace events"); \
	ASSERT_EQ(0, tfs_write("events/sib/enable", "1")); \
} while (0)

/* Index of event @name with the fields given, after @from; must exist. */
#define TSTEP(at, from, ...) do { \
	(at) = tfind(&log, (from), __VA_ARGS__, NULL); \
	EXPECT_LE(0, (at)) TH_LOG("no %s after event %d", #__VA_ARGS__, (from)); \
	if ((at) < 0) \
		(at) = (from); \
} while (0)

#endif /* SIB_TRACE_H */
