// SPDX-License-Identifier: GPL-2.0 OR Linux-OpenIB
/*
 * bench-memcpy: the copy limit for scripts/bench. Copies a buffer of SIZE
 * bytes into another with the C library's memcpy() for about SECS seconds
 * and prints the rate in MiB/s (2^20 bytes copied per second, the unit
 * perftest's "MB/sec" uses). A data path that moves each payload byte once
 * cannot beat this figure on the same machine.
 *
 *   bench-memcpy SIZE [SECS]        e.g. bench-memcpy 1048576 1
 *
 * Output: one line "memcpy SIZE MIBPS".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	size_t size = argc > 1 ? strtoull(argv[1], NULL, 0) : 1 << 20;
	double secs = argc > 2 ? atof(argv[2]) : 1.0;
	unsigned long long bytes = 0;
	volatile unsigned char sink;
	char *src, *dst;
	double t0, t;

	if (!size) {
		fprintf(stderr, "usage: %s SIZE [SECS]\n", argv[0]);
		return 2;
	}
	src = malloc(size);
	dst = malloc(size);
	if (!src || !dst) {
		perror("malloc");
		return 1;
	}
	/* Touch every page, so that no page fault is measured. */
	memset(src, 0x5a, size);
	memset(dst, 0xa5, size);
	memcpy(dst, src, size);

	t0 = now();
	do {
		memcpy(dst, src, size);
		bytes += size;
		src[bytes % size] ^= 1;	/* keep the copy from being elided */
		t = now();
	} while (t - t0 < secs);
	sink = dst[size / 2];
	(void)sink;
	printf("memcpy %zu %.1f\n", size, bytes / (t - t0) / (1 << 20));
	return 0;
}
