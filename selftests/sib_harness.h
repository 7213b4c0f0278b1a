/* SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB */
/*
 * A main for the selftests that selects tests by name. Include after
 * kselftest_harness.h.
 */
#ifndef SIB_HARNESS_H
#define SIB_HARNESS_H

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/*
 * SKIP from a FIXTURE_SETUP. The 6.1 harness runs the test after a setup
 * that skipped (it checks only that the setup passed), on a fixture the
 * setup left half made, so the test fails or crashes instead of being
 * skipped. The test runs in a child of its own: end it there with the
 * harness' exit status for a skip, 255; the reason is in the results
 * that the parent reads. No teardown runs: skip before taking anything.
 */
#define SETUP_SKIP(fmt, ...)						\
	SKIP(do { fflush(NULL); _exit(255); } while (0), fmt, ##__VA_ARGS__)

/*
 * SIB_TIMEOUT_SCALE=N (a whole number, 1 to 20) multiplies every test's
 * timeout: the debug kernels run the same work several times slower
 * (scripts/check-debug sets it). Nothing else changes.
 */
static inline void sib_harness_scale_timeouts(void)
{
	const char *e = getenv("SIB_TIMEOUT_SCALE");
	int scale = e ? atoi(e) : 1;

	if (scale <= 1 || scale > 20)
		return;
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
		for (struct __test_metadata *t = f->tests; t; t = t->next)
			t->timeout *= scale;
}

/*
 * The kernel 6.1 harness takes no arguments; this main adds "-t NAME"
 * (repeatable: run only these tests), "-x NAME" (repeatable: leave these
 * out) and "-l" (list the tests), so that SIB_TEST_ARGS="-t name",
 * run_tests' PROG:NAME,... and its lean default suite work. A NAME that
 * names no test fails the program before any test runs.
 */
static inline int sib_harness_main(int argc, char **argv)
{
	const char *want[64], *skip[64];
	bool skip_seen[64] = { false };
	int nwant = 0, nskip = 0;
	bool list = false;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-t") && i + 1 < argc && nwant < 64)
			want[nwant++] = argv[++i];
		else if (!strcmp(argv[i], "-x") && i + 1 < argc && nskip < 64)
			skip[nskip++] = argv[++i];
		else if (!strcmp(argv[i], "-l"))
			list = true;
	}
	for (struct __fixture_metadata *f = __fixture_list; f; f = f->next) {
		struct __test_metadata *t = f->tests, *head = NULL, *last = NULL;

		while (t) {
			struct __test_metadata *next = t->next;
			bool keep = !nwant;

			for (int i = 0; i < nwant; i++)
				keep |= !strcmp(want[i], t->name);
			for (int i = 0; i < nskip; i++) {
				if (strcmp(skip[i], t->name))
					continue;
				keep = false;
				skip_seen[i] = true;
			}
			if (list)
				printf("%s.%s\n", f->name, t->name);
			if (keep) {
				if (last)
					last->next = t;
				else
					head = t;
				last = t;
			}
			t = next;
		}
		if (last) {
			last->next = NULL;
			head->prev = last;
		}
		f->tests = head;
	}
	if (list)
		return 0;
	/* a name that matches nothing is a typo, not a test that passed */
	for (int i = 0; i < nskip; i++) {
		if (!skip_seen[i]) {
			fprintf(stderr, "%s: no test named %s\n", argv[0], skip[i]);
			return 1;
		}
	}
	for (int i = 0; i < nwant; i++) {
		bool found = false;

		for (struct __fixture_metadata *f = __fixture_list; f; f = f->next)
			for (struct __test_metadata *t = f->tests; t; t = t->next)
				found |= !strcmp(want[i], t->name);
		if (!found) {
			fprintf(stderr, "%s: no test named %s\n", argv[0], want[i]);
			return 1;
		}
	}
	sib_harness_scale_timeouts();
	return test_harness_run(argc, argv);
}

#define SIB_HARNESS_MAIN \
	int main(int argc, char **argv) { return sib_harness_main(argc, argv); }

#endif /* SIB_HARNESS_H */
