/* SPDX-License-Identifier: MIT */
/*
 * arena.c - the start of the data path on the consumer's side: size the
 * session's buffer to what this machine, its cgroup and the file size
 * limit leave, build the enable spec, create the arena as a sealed memfd
 * (no process can shrink it under the recorder: its mappings never fault
 * with SIGBUS), map it and format its header. Also the recorder object's
 * create/free.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "../common/util.h"
#include "../common/htab.h"
#include "internal.h"

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux 5.14 */
#endif

/*
 * The pages of the chunks writers are about to take, allocated here
 * before they are: a chunk's first use otherwise allocates and zeroes its
 * pages in the writer's thread (its MADV_POPULATE_WRITE, record.c), 6 ns
 * more per event with the default buffer on the machine of
 * doc/performance.md (15.4-19.0 ns against 9.6-11.1 with -b 32M, whose
 * chunks are all reused). Writers take chunks from the lowest free one
 * up, so the pages are allocated from chunk 0 to RUN_AHEAD bytes past
 * the highest chunk seen in use, at most STEP bytes a pass: a buffer is
 * still allocated only as far as it is used, plus RUN_AHEAD.
 */
#define RUN_AHEAD (32ull << 20)
#define STEP (8ull << 20)

void trail__rec_populate_ahead(struct trail_recorder *R)
{
	const struct trail_arena_geom *g = &R->m.g;
	uint64_t want = (uint64_t)R->high + 1 + RUN_AHEAD / g->chunk_size;
	uint32_t stop, n;

	if (want > g->nchunks)
		want = g->nchunks;
	if (R->ahead >= want)
		return;
	n = (uint32_t)(STEP / g->chunk_size);
	stop = R->ahead + (n ? n : 1);
	if (stop > want)
		stop = (uint32_t)want;
	madvise(R->m.base + g->chunks_off + (uint64_t)R->ahead * g->chunk_size,
		(size_t)(stop - R->ahead) * g->chunk_size, MADV_POPULATE_WRITE);
	for (uint32_t i = R->ahead; i < stop; i++) /* the drain needs no mapping of its own */
		R->chunk_mapped[i >> 3] |= (uint8_t)(1u << (i & 7));
	R->ahead = stop;
}

/*
 * The buffer is a memfd, and sizing a file counts against the file size
 * limit (ulimit -f), which is meant for the trace file, not for memory.
 * Below the hard limit, the soft one is lifted while the memfd is sized
 * (and only then: the output file and the command keep the user's limit).
 * A hard limit below the buffer caps the buffer, with a warning.
 */
static int fit_file_limit(struct trail_recorder *R, uint32_t spec_len)
{
	struct trail_arena_geom *g = &R->m.g;
	struct rlimit rl;
	uint64_t want = g->size;
	char a[32], b[32];

	if (getrlimit(RLIMIT_FSIZE, &rl) || rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= want)
		return 0;
	while (g->size > rl.rlim_max &&
	       !trail__arena_geom(g, (uint64_t)(g->nchunks - 1) * g->chunk_size,
				  g->chunk_size, spec_len) &&
	       !trail__arena_geom_hist(g, R->o.hist_bytes))
		;
	if (g->size > rl.rlim_max) {
		rec_err(R, "the file size limit (ulimit -f: %s) is too small for a trace buffer "
			"(%s at least): raise it (ulimit -f unlimited) or use a smaller --chunk-size",
			trail__rec_bytes(R, rl.rlim_max, a, sizeof(a)),
			trail__rec_bytes(R, want > g->size ? g->size : want, b, sizeof(b)));
		return -EFBIG;
	}
	R->buffer_bytes = (uint64_t)g->nchunks * g->chunk_size;
	rec_warn(R, "the file size limit (ulimit -f: %s) caps the buffer at %s "
		 "(the trace file stops at that limit too)",
		 trail__rec_bytes(R, rl.rlim_max, a, sizeof(a)),
		 trail__rec_bytes(R, R->buffer_bytes, b, sizeof(b)));
	return 0;
}

/* ftruncate, with the soft file size limit lifted to the hard one. */
static int size_memfd(int fd, uint64_t size)
{
	struct rlimit rl, up;
	int r, e, lifted = 0;

	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < size) {
		up = rl;
		up.rlim_cur = rl.rlim_max;
		lifted = !setrlimit(RLIMIT_FSIZE, &up);
	}
	r = ftruncate(fd, (off_t)size);
	e = errno;
	if (lifted)
		setrlimit(RLIMIT_FSIZE, &rl);
	errno = e;
	return r;
}

/* Memory this process may still take: MemAvailable, and the room left
 * under its cgroup's memory.max. */
static uint64_t memory_available(void)
{
	char buf[4096], path[4200], *p;
	uint64_t avail = UINT64_MAX;

	if (trail__read_file("/proc/meminfo", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "MemAvailable:")))
		avail = strtoull(p + 13, NULL, 10) * 1024;
	if (trail__read_file("/proc/self/cgroup", buf, sizeof(buf)) > 0 &&
	    !strncmp(buf, "0::", 3)) {
		char v[64];
		uint64_t max, cur;

		buf[strcspn(buf, "\n")] = '\0';
		snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.max", buf + 3);
		if (trail__read_file(path, v, sizeof(v)) > 0 && strncmp(v, "max", 3)) {
			max = strtoull(v, NULL, 10);
			snprintf(path, sizeof(path), "/sys/fs/cgroup%s/memory.current", buf + 3);
			cur = trail__read_file(path, v, sizeof(v)) > 0 ? strtoull(v, NULL, 10) : 0;
			if (max > cur && max - cur < avail)
				avail = max - cur;
			else if (max <= cur)
				avail = 0;
		}
	}
	return avail;
}

/*
 * The default buffer: 1/64 of the machine's memory, from 32 MiB to 1 GiB
 * (384 MiB with 24 GiB). The buffer absorbs the times the recorder cannot
 * drain: a busy 2-CPU machine tracing a server at ~240 MB/s left it off the
 * CPU for 100-150 ms routinely, over a second at worst (doc/performance.md),
 * longer than 32 MiB lasts. Its pages are taken only as chunks are used.
 */
uint64_t trail_recorder_default_buffer(void)
{
	char buf[4096], *p;
	uint64_t total = 0, b;

	if (trail__read_file("/proc/meminfo", buf, sizeof(buf)) > 0 &&
	    (p = strstr(buf, "MemTotal:")))
		total = strtoull(p + 9, NULL, 10) * 1024;
	b = total / 64;
	if (b < (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024)
		b = (uint64_t)TRAIL_ARENA_DEFAULT_KB * 1024;
	if (b > (1ull << 30))
		b = 1ull << 30;
	return b;
}

/* The buffer can be filled whole (its pages are taken as chunks are used):
 * it must fit in the memory this machine (and cgroup) has left, with a
 * quarter to spare for the programs being traced. A default buffer shrinks to fit; a -b that does
 * not fit is refused before anything starts. */
static int fit_memory(struct trail_recorder *R)
{
	uint64_t avail = memory_available(), room = avail / 4 * 3;
	uint32_t chunk = R->o.chunk_size;
	char a[32], b[32], c[32], d[32];

	if (R->buffer_bytes <= room)
		return 0;
	if (!R->o.buffer_given && room >= 2ull * chunk) {
		R->buffer_bytes = room / chunk * chunk;
		return 0;
	}
	rec_err(R, "a %s buffer does not fit in memory: %s available%s, so %s at most "
		"(-b, with --chunk-size %s)",
		trail__rec_bytes(R, R->buffer_bytes, a, sizeof(a)),
		trail__rec_bytes(R, avail, b, sizeof(b)), " (MemAvailable, cgroup memory.max)",
		trail__rec_bytes(R, room, c, sizeof(c)),
		trail__rec_bytes(R, chunk, d, sizeof(d)));
	return -ENOMEM;
}

/* The enable spec: the -e patterns, then the tracer's options and events,
 * one per line, into R->spec (malloc'd to its size). Its length, or
 * -E2BIG (over TRAIL_SPEC_MAX), -ENOMEM. */
static int build_spec(struct trail_recorder *R)
{
	const struct trail_recorder_opts *o = &R->o;
	char tracer[512] = "";
	size_t len = 0, need = 0;

	if (o->tracer) {
		int graph = !strcmp(o->tracer, "function_graph");
		size_t n = (size_t)snprintf(tracer, sizeof(tracer), "@tracer %s\n%s", o->tracer,
					    graph ? "ftrace:funcgraph_*" : "ftrace:function");

		if (o->max_depth)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@depth %u",
					      o->max_depth);
		if (o->retval)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@retval 1");
		if (o->args)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@args 1");
		if (o->no_libcall)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@nolibcall 1");
		if (o->nest_libcall)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@nestlibcall 1");
		if (o->thresh_ns) { /* in the writers' clock ticks */
			unsigned __int128 t = ((unsigned __int128)o->thresh_ns << R->shift) /
					      (R->mult ? R->mult : 1);

			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@thresh %llu",
					      (unsigned long long)(t ? t : 1));
		}
		for (int i = 0; i < o->ntids; i++)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@tid %ld", o->tids[i]);
		if (o->nest >= 0)
			n += (size_t)snprintf(tracer + n, sizeof(tracer) - n, "\n@nest %d", o->nest);
	}
	for (int i = 0; i < o->nevents + o->nfuncs + (o->tracer ? 1 : 0); i++)
		need += strlen(i < o->nevents ? o->events[i]
			       : i < o->nevents + o->nfuncs ? o->funcs[i - o->nevents] : tracer) + 1;
	if (need > TRAIL_SPEC_MAX) {
		char h[32];

		rec_err(R, "the -e/-l/-n patterns and probes take %zu bytes: more than a "
			"session's spec holds (%s)", need,
			trail__rec_bytes(R, TRAIL_SPEC_MAX, h, sizeof(h)));
		return -E2BIG;
	}
	free(R->spec);
	if (!(R->spec = malloc(need + 1))) {
		rec_err(R, "no memory for the spec (%zu bytes)", need);
		return -ENOMEM;
	}
	for (int i = 0; i < o->nevents + o->nfuncs + (o->tracer ? 1 : 0); i++) {
		const char *line = i < o->nevents ? o->events[i]
			: i < o->nevents + o->nfuncs ? o->funcs[i - o->nevents] : tracer;
		size_t l = strlen(line);

		memcpy(R->spec + len, line, l);
		len += l;
		R->spec[len++] = '\n';
	}
	R->spec[len] = '\0';
	return (int)len;
}

static int arena_create(struct trail_recorder *R)
{
	struct trail_arena_geom *g = &R->m.g;
	struct trail_arena_hdr *hdr;
	uint64_t sid, start = 0;
	int r, len;

	trail__clock_calibrate(R->clock, &R->mult, &R->shift, 20);
	len = build_spec(R);
	if (len < 0)
		return len;
	if (trail__arena_geom(g, R->buffer_bytes, R->o.chunk_size, (uint32_t)len)) {
		rec_err(R, "buffer of %llu KiB cannot hold two chunks of %u KiB",
			(unsigned long long)(R->buffer_bytes / 1024), R->o.chunk_size / 1024);
		return -EINVAL;
	}
	if (trail__arena_geom_hist(g, R->o.hist_bytes)) {
		char h[32];

		rec_err(R, "the hist triggers want %s of tables: more than %s",
			trail__rec_bytes(R, R->o.hist_bytes, h, sizeof(h)), "1 GiB");
		return -E2BIG;
	}
	r = fit_file_limit(R, (uint32_t)len);
	if (r)
		return r;
	R->memfd = memfd_create("trail-arena", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (R->memfd < 0) {
		r = -errno;
		rec_err(R, "memfd_create: %s", strerror(errno));
		return r;
	}
	if (size_memfd(R->memfd, g->size) < 0) {
		char h[32];

		r = -errno;
		rec_err(R, "cannot size the %s buffer: %s", trail__rec_bytes(R, g->size, h, sizeof(h)),
			strerror(errno));
		return r;
	}
	/* nobody may shrink or grow it: mappings never fault with SIGBUS */
	if (fcntl(R->memfd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) < 0) {
		r = -errno;
		rec_err(R, "cannot seal the buffer: %s", strerror(errno));
		return r;
	}
	/* The tables are populated here at once; chunks' pages a little
	 * ahead of the writers (trail__rec_populate_ahead()) or when the drain
	 * first reads them (chunk_map()), so a large buffer costs memory and
	 * time only as far as it is used. Either way not by a fault a
	 * page: a fault can cost 23 us in a virtual machine, doc/performance.md. */
	R->m.base = mmap(NULL, g->size, PROT_READ | PROT_WRITE, MAP_SHARED, R->memfd, 0);
	if (R->m.base == MAP_FAILED) {
		r = -errno;
		R->m.base = NULL;
		rec_err(R, "cannot map the buffer: %s", strerror(-r));
		return r;
	}
	madvise(R->m.base, g->chunks_off, MADV_POPULATE_WRITE);
	r = (int)trail__read_file("/proc/sys/kernel/random/boot_id", (char *)R->syncs, 64);
	sid = trail__mono_ns() ^ ((uint64_t)getpid() << 40) ^ (r > 0 ? ((uint64_t *)R->syncs)[0] : 0);
	trail__proc_stat(getpid(), &start, NULL, NULL);
	trail__arena_format(R->m.base, g, sid, R->o.overwrite ? TRAIL_ARENA_OVERWRITE : 0,
			    R->clock, R->spec, (uint32_t)getpid(), start);
	hdr = shm_hdr(&R->m);
	hdr->block_us = R->o.block_us; /* before anybody maps it */
	hdr->paused = R->o.start_paused ? 1 : 0;
	hdr->hist_copies = trail_htab_copies();
	if (R->clock == TRAIL_CLOCK_TSC) {
		struct trail_clock_sync cs;

		trail__clock_sync(R->clock, &cs);
		hdr->clk_mult = R->mult;
		hdr->clk_shift = R->shift;
		hdr->clk_ticks0 = cs.ticks;
		hdr->clk_ns0 = cs.mono_ns;
	}
	R->chunkbuf = malloc(g->chunk_size);
	R->event_done = calloc(g->max_events, 1);
	R->stream_seen = calloc(g->max_streams, 1);
	R->pt = calloc(g->max_procs, sizeof(*R->pt));
	R->slot_lost = calloc(g->max_streams, sizeof(*R->slot_lost));
	R->slot_gen = calloc(g->max_streams, sizeof(*R->slot_gen));
	R->slot_written = calloc(g->max_streams, 1);
	R->chunk_mapped = calloc(g->nchunks / 8 + 1, 1);
	if (!R->chunkbuf || !R->event_done || !R->stream_seen || !R->pt || !R->slot_lost ||
	    !R->slot_gen || !R->slot_written || !R->chunk_mapped ||
	    (R->o.overwrite && trail__rec_keep_init(R))) {
		rec_err(R, "out of memory");
		return -ENOMEM;
	}
	/* the first chunks' pages now: a head start on the first writers */
	for (uint32_t k = 0; k < RUN_AHEAD / STEP && R->ahead < g->nchunks; k++)
		trail__rec_populate_ahead(R);
	return 0;
}

int trail_recorder_create(const struct trail_recorder_opts *o, struct trail_recorder **out)
{
	struct trail_recorder *R;
	int r;

	*out = NULL;
	if (!o || o->sz < sizeof(*o))
		return -EINVAL;
	R = calloc(1, sizeof(*R));
	if (!R)
		return -ENOMEM;
	R->o = *o;
	R->memfd = -1;
	R->out.fd = -1;
	R->buffer_bytes = o->buffer_bytes;
	R->clock = o->clock;
	r = fit_memory(R);
	if (!r)
		r = arena_create(R);
	if (r) {
		trail_recorder_free(R);
		return r;
	}
	*out = R;
	return 0;
}

void trail_recorder_free(struct trail_recorder *R)
{
	if (!R)
		return;
	trail__rec_proxies_end(R);
	if (R->out.part)
		tfw_finish(&R->out, 0);
	for (size_t i = 0; i < R->nsymc; i++)
		free(R->symc[i].path);
	free(R->tried);
	free(R->offline_events);
	free(R->spec);
	free(R->symc);
	free(R->mods_gone);
	free(R->chunkbuf);
	free(R->event_done);
	free(R->stream_seen);
	free(R->pt);
	free(R->slot_lost);
	free(R->slot_gen);
	free(R->slot_written);
	free(R->chunk_mapped);
	trail__rec_keep_free(R);
	free(R->pending);
	if (R->offline_map)
		munmap(R->offline_map, R->offline_len);
	else if (R->m.base)
		munmap(R->m.base, R->m.g.size);
	if (R->memfd >= 0)
		close(R->memfd);
	free(R);
}
