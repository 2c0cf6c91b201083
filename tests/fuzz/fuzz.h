/* SPDX-License-Identifier: MIT */
/*
 * fuzz.h - what the fuzz targets share: each target file defines
 * fuzz_<target>_one(), the whole work on one input, and (unless built with
 * FUZZ_NO_MAIN) the libFuzzer entry point calling it, so the same file runs
 * under libFuzzer (scripts/fuzz.sh) and in the plain test suite
 * (tests/unit/test-fuzz-inputs.c runs the corpus and regress inputs). The
 * reader's fuzz_reader_one() has a file of its own, reader-one.c, which
 * fuzz-reader.c (entry point and custom mutator) and the fuzzer-less
 * tests/unit/test-mutate.c link as well.
 *
 * A target checks what its API promises, not only that nothing crashes: a
 * broken promise aborts (FUZZ_ASSERT), which libFuzzer reports as a crash.
 */
#ifndef TRAIL_FUZZ_H
#define TRAIL_FUZZ_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

int fuzz_reader_one(const uint8_t *data, size_t size);
int fuzz_meta_one(const uint8_t *data, size_t size);
int fuzz_spec_one(const uint8_t *data, size_t size);
int fuzz_elf_one(const uint8_t *data, size_t size);
int fuzz_ldcache_one(const uint8_t *data, size_t size);
int fuzz_probe_one(const uint8_t *data, size_t size);
int fuzz_core_one(const uint8_t *data, size_t size);

#define FUZZ_ASSERT(c)                                                        \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "%s:%d: FUZZ_ASSERT(%s) failed\n",    \
				__FILE__, __LINE__, #c);                      \
			abort();                                              \
		}                                                             \
	} while (0)

/* The input as a file for APIs that take a path: a memfd, named by its
 * /proc/self/fd link in path. Returns the fd (close it), or -1. */
static inline int fuzz_memfd(const uint8_t *data, size_t size, char *path,
			     size_t n)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);

	if (fd < 0)
		return -1;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return -1;
	}
	snprintf(path, n, "/proc/self/fd/%d", fd);
	return fd;
}

#endif /* TRAIL_FUZZ_H */
