/* SPDX-License-Identifier: MIT */
/*
 * core.c - `trail report -i CORE` (every view's -i): the records a
 * process that dumped core had in its session's buffer.
 *
 * The core is an ELF file (ET_CORE): its PT_LOAD segments are the
 * process's mappings as the kernel dumped them. The session's arena is a
 * memfd mapped shared, which the default coredump_filter (0x33: bit 1,
 * anonymous shared memory) dumps; a segment that starts with the arena's
 * magic is the arena. src/recorder (trail_recorder_from_core) checks it
 * and writes what was committed, by the salvage rules of a killed
 * process, into a trace file in $TMPDIR that the view then reads (and
 * that is removed once open). The notes name the process (NT_PRPSINFO)
 * and its executable (the NT_FILE mapping holding AT_ENTRY, from
 * NT_AUXV), which /proc cannot say any more. A zstd-compressed core
 * (systemd-coredump's /var/lib/systemd/coredump/core.*.zst) is
 * decompressed into $TMPDIR first.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "../../src/common/arena.h"
#include "../../src/common/corefile.h"
#include "../../src/recorder/recorder.h"
#include "tool.h"
#include "viewopt.h"


static const uint8_t zstd_magic[4] = {0x28, 0xb5, 0x2f, 0xfd};

static int is_core_hdr(const Elf64_Ehdr *eh)
{
	return trail_core_is(eh, sizeof(*eh));
}

/* Decompress the zstd file fd into out (a descriptor), or its first
 * want bytes into head (out < 0): 0, or -1 (not zstd, damaged) */
static int unzstd(int fd, int out, void *head, size_t want)
{
	ZSTD_DStream *z = ZSTD_createDStream();
	size_t inl = ZSTD_DStreamInSize(), outl = ZSTD_DStreamOutSize(), got = 0, ret = 1;
	uint8_t *ib = malloc(inl), *ob = malloc(outl);
	ssize_t k;
	int r = -1;

	if (!z || !ib || !ob || ZSTD_isError(ZSTD_initDStream(z)))
		goto out;
	while ((k = read(fd, ib, inl)) > 0) {
		ZSTD_inBuffer in = {ib, (size_t)k, 0};

		while (in.pos < in.size) {
			ZSTD_outBuffer o = {ob, outl, 0};

			ret = ZSTD_decompressStream(z, &o, &in);
			if (ZSTD_isError(ret))
				goto out;
			if (out >= 0 && o.pos && write(out, ob, o.pos) != (ssize_t)o.pos)
				goto out;
			if (out < 0) {
				size_t c = o.pos < want - got ? o.pos : want - got;

				memcpy((uint8_t *)head + got, ob, c);
				if ((got += c) == want) {
					r = 0;
					goto out;
				}
			}
		}
	}
	r = k == 0 && ret == 0 && out >= 0 ? 0 : -1;
out:
	ZSTD_freeDStream(z);
	free(ib);
	free(ob);
	return r;
}

int core_is(const char *path)
{
	Elf64_Ehdr eh;
	int fd = open(path, O_RDONLY | O_CLOEXEC), r;
	uint8_t m[4];

	if (fd < 0)
		return 0;
	r = pread(fd, &eh, sizeof(eh), 0) == (ssize_t)sizeof(eh) && is_core_hdr(&eh);
	if (!r && pread(fd, m, 4, 0) == 4 && !memcmp(m, zstd_magic, 4))
		r = !unzstd(fd, -1, &eh, sizeof(eh)) && is_core_hdr(&eh);
	close(fd);
	return r;
}

struct core {
	const char *path;
	int fd;
	uint64_t size;
	struct trail_core c;
};

static int rd_at(void *ctx, uint64_t off, void *buf, size_t n)
{
	const struct core *c = ctx;

	return pread(c->fd, buf, n, (off_t)off) == (ssize_t)n ? 0 : -1;
}

static void core_log(void *ctx, enum trail_recorder_level level, const char *msg)
{
	(void)ctx;
	if (level == TRAIL_RECORDER_ERR)
		tool_err("%s", msg);
	else if (level == TRAIL_RECORDER_WARN)
		tool_warn("%s", msg);
}

/* The trace of core c's first session into tmp: 0, or 1 (said) */
static int convert(struct core *c, unsigned nsess, char *tmp)
{
	struct trail_recorder_opts o;
	struct trail_recorder *R;
	const char *why = "";
	uint64_t have;
	char *cmd[] = {c->c.exe[0] ? c->c.exe : c->c.comm, NULL};
	int fd, r;

	memset(&o, 0, sizeof(o));
	o.sz = sizeof(o);
	o.cmd = cmd; /* (the file's "of:": the program that dumped it) */
	o.nest = -1;
	o.log = core_log;
	/* what the core holds of the segment: a truncated core (ulimit -c)
	 * stops short of its size */
	have = c->c.have[0];
	r = trail_recorder_from_core(&o, c->fd, c->c.off[0], have, &R, &why);
	if (r) {
		tool_err("%s: process %u's trace buffer is there, but %s%s", c->path, c->c.pid, why,
			 have < c->c.size[0] || (r == -EPROTO && !strcmp(why, "arena larger than its mapping"))
			 ? " (a truncated core: ulimit -c, or the disk filled?)" : "");
		return 1;
	}
	trail_recorder_core_exe(R, c->c.pid, c->c.exe);
	fd = mkstemp(tmp);
	if (fd < 0) {
		tool_err("%s: a file for its trace: %s: %s", c->path, tmp, strerror(errno));
		trail_recorder_free(R);
		return 1;
	}
	close(fd);
	if (trail_recorder_open(R, tmp) || trail_recorder_begin(R)) {
		tool_err("%s: cannot write %s", c->path, tmp);
		trail_recorder_free(R);
		unlink(tmp);
		return 1;
	}
	trail_recorder_finish_offline(R);
	r = trail_recorder_error(R) || trail_recorder_close(R, 1);
	trail_recorder_free(R);
	if (r) {
		tool_err("%s: cannot write its trace into %s", c->path, tmp);
		unlink(tmp);
		return 1;
	}
	if (nsess > 1)
		tool_warn("%s: %u sessions' buffers in it: the first one's shown", c->path, nsess);
	return 0;
}

int core_open(const char *path, struct trail_reader **rd, char *err, size_t errlen)
{
	struct core c = {.path = path, .fd = -1};
	const char *dir = getenv("TMPDIR"), *why;
	char tmp[4096];
	uint8_t m[4];
	struct stat st;
	int r = 1;

	snprintf(tmp, sizeof(tmp), "%s/trail-core.XXXXXX", dir && *dir ? dir : "/tmp");
	c.fd = open(path, O_RDONLY | O_CLOEXEC);
	if (c.fd >= 0 && pread(c.fd, m, 4, 0) == 4 && !memcmp(m, zstd_magic, 4)) {
		/* systemd-coredump's: the core itself, decompressed */
		char raw[4096];
		int fd;

		snprintf(raw, sizeof(raw), "%s/trail-core-raw.XXXXXX", dir && *dir ? dir : "/tmp");
		if ((fd = mkstemp(raw)) < 0) {
			tool_err("%s: a file to decompress it into: %s: %s", path, raw, strerror(errno));
			goto out;
		}
		unlink(raw); /* (only this descriptor needs it) */
		if (unzstd(c.fd, fd, NULL, 0)) {
			tool_err("%s: a zstd-compressed core that does not decompress (damaged, "
				 "truncated, or no room in %s)", path, dir && *dir ? dir : "/tmp");
			close(fd);
			goto out;
		}
		close(c.fd);
		c.fd = fd;
	}
	if (c.fd < 0 || fstat(c.fd, &st)) {
		tool_err("%s: %s", path, strerror(errno));
		goto out;
	}
	c.size = (uint64_t)st.st_size;
	if (trail_core_scan(rd_at, &c, c.size, &c.c, &why)) {
		if (c.c.machine)
			tool_err("%s: %s (ELF machine %u): trail reads x86-64 cores", path, why,
				 c.c.machine);
		else
			tool_err("%s: %s", path, why);
		goto out;
	}
	if (!c.c.narenas) {
		tool_err("%s: a core of %s %u without a trail buffer (no session was recording it, "
			 "or /proc/PID/coredump_filter left out shared memory: bit 1)",
			 path, c.c.comm[0] ? c.c.comm : "process", c.c.pid);
		goto out;
	}
	if (convert(&c, c.c.narenas, tmp))
		goto out;
	r = trail_reader_open(tmp, rd, err, errlen);
	unlink(tmp);
	if (r)
		tool_err("%s: its trace: %s", path, err);
	r = r ? 1 : 0;
out:
	if (c.fd >= 0)
		close(c.fd);
	return r;
}
