/* SPDX-License-Identifier: MIT */
/*
 * fuzz-reader.c - libFuzzer target for the trace file reader: the input is
 * a trace file; every record is decoded and formatted. Also compiled into
 * tests/unit/test-mutate.c (with FUZZ_NO_MAIN) for a fuzzer-less run.
 *
 *   clang -fsanitize=fuzzer,address ... ; ./fuzz-reader tests/fuzz/corpus
 */
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "reader/reader.h"

int fuzz_reader_one(const uint8_t *data, size_t size);

int fuzz_reader_one(const uint8_t *data, size_t size)
{
	struct trail_reader *r;
	struct trail_record rec;
	const struct trail_rstream *const *st;
	const char *const *errs;
	char err[256], path[64], buf[4096];
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	size_t n = 0;

	if (fd < 0)
		return 0;
	if (write(fd, data, size) != (ssize_t)size) {
		close(fd);
		return 0;
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (trail_reader_open(path, &r, err, sizeof(err)) == 0) {
		while (trail_reader_next(r, &rec) > 0 && n++ < 1000000) {
			if (rec.type == TRAIL_RT_EVENT)
				trail_format_fields(rec.event, rec.payload, rec.len, buf,
						    sizeof(buf));
		}
		trail_reader_streams(r, &st);
		trail_reader_errors(r, &errs);
		trail_reader_info(r, "command");
		trail_reader_close(r);
	}
	close(fd);
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_reader_one(data, size);
}
#endif
