/* SPDX-License-Identifier: MIT */
/*
 * output.c - the trace file as the recorder writes it (through the writer
 * of src/tracefile/writer.h): the header, INFO, CLOCK syncs, and the
 * metadata sections the drain writes ahead of the chunks that need them
 * (EVENT descriptions, MODULE and SYMBOLS of objects with hooked
 * functions, MODGONE), PROC and STREAM accounting. Descriptions are read
 * from the arena through shm.h and copied out before they are parsed.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "../common/meta.h"
#include "../common/rv.h"
#include "internal.h"
#include "symtab.h"

void trail__rec_add_sync(struct trail_recorder *R)
{
	if (R->offline) { /* (now says nothing of a core's clock) */
		if (!R->nsyncs && R->clock == TRAIL_CLOCK_TSC)
			R->syncs[R->nsyncs++] = R->offline_sync;
		return;
	}
	if (R->nsyncs < MAX_SYNCS)
		trail__clock_sync(R->clock, &R->syncs[R->nsyncs++]);
}

void trail__rec_write_clock(struct trail_recorder *R)
{
	struct trail_sec_clock c = {R->clock, R->shift, R->mult, 0};
	uint32_t n = R->nsyncs - R->syncs_written;

	if (!n)
		return;
	c.nsync = n;
	if (!tfw_section(&R->out, TRAIL_SEC_CLOCK, &c, sizeof(c),
			 &R->syncs[R->syncs_written], n * sizeof(R->syncs[0])))
		R->syncs_written = R->nsyncs;
}

static void write_info(struct trail_recorder *R)
{
	const struct trail_recorder_opts *o = &R->o;
	char text[8192], host[256] = "";
	size_t n = 0;

	gethostname(host, sizeof(host) - 1);
	n += (size_t)snprintf(text + n, sizeof(text) - n,
			      "trail_version=%s\nhostname=%s\nmode=%s\nbuffer_bytes=%llu\n"
			      "chunk_size=%u\n",
			      TRAIL_VERSION, host, o->overwrite ? "overwrite" : "discard",
			      (unsigned long long)R->m.g.nchunks * R->m.g.chunk_size,
			      R->m.g.chunk_size);
	if (R->priority)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "recorder_priority=%s\n",
				      R->priority);
	if (o->block_us == ~0u)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "blocking_timeout=inf\n");
	else if (o->block_us)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "blocking_timeout=%u%s\n",
				      o->block_us % 1000000 == 0 ? o->block_us / 1000000
				      : o->block_us % 1000 == 0 ? o->block_us / 1000 : o->block_us,
				      o->block_us % 1000000 == 0 ? "s"
				      : o->block_us % 1000 == 0 ? "ms" : "us");
	n += (size_t)snprintf(text + n, sizeof(text) - n, "events=");
	for (int i = 0; i < o->nevents && n < sizeof(text) - 1; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? "," : "",
				      o->events[i]);
	if (o->tracer && n < sizeof(text) - 1) {
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\ntracer=%s\nfunctions=",
				      o->tracer);
		for (int i = 0; i < o->nfuncs_user && n < sizeof(text) - 1; i++)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s-%c %s", i ? " " : "",
					      o->funcs[i][1], o->funcs[i] + 3);
		if (o->nest >= 0 && n < sizeof(text) - 1)
			n += (size_t)snprintf(text + n, sizeof(text) - n, "%s--nest %d",
					      o->nfuncs_user ? " " : "", o->nest);
	}
	/* record -f and -T: "filterK=SYS:EVENT: FILTER", "triggerK=...", K
	 * from 1 */
	for (int i = o->nfuncs_user, k = 1, kt = 1; i < o->nfuncs && n < sizeof(text) - 1; i++) {
		int filt = !strncmp(o->funcs[i], "@filter ", 8);
		const char *pat, *sp;

		if (!filt && strncmp(o->funcs[i], "@trigger ", 9))
			continue;
		pat = o->funcs[i] + (filt ? 8 : 9);
		if ((sp = strchr(pat, ' ')))
			n += (size_t)snprintf(text + n, sizeof(text) - n, "\n%s%d=%.*s: %s",
					      filt ? "filter" : "trigger", filt ? k++ : kt++,
					      (int)(sp - pat), pat, sp + 1);
	}
	/* --rv: "rvK=NAME per=PER reactor=R states=N events=N", K from 1 */
	for (int i = o->nfuncs_user, k = 1; i < o->nfuncs && n < sizeof(text) - 1; i++) {
		struct trail_rv_mon *mon;

		if (strncmp(o->funcs[i], "@rv ", 4) || !(mon = malloc(sizeof(*mon))))
			continue;
		if (!trail_rv_decode(o->funcs[i] + 4, strlen(o->funcs[i] + 4), mon))
			n += (size_t)snprintf(text + n, sizeof(text) - n,
					      "\nrv%d=%s per=%s reactor=%s states=%d events=%d", k++,
					      mon->m.name, mon->per, mon->reactor, mon->m.nstates,
					      mon->m.nevents);
		free(mon);
	}
	if (n < sizeof(text) - 1)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\ncommand=");
	for (int i = 0; o->cmd && o->cmd[i] && n < sizeof(text) - 1; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%s", i ? " " : "", o->cmd[i]);
	for (int i = 0; i < o->npids && n < sizeof(text) - 1; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "%s%d", i ? "," : "-P ",
				      (int)o->pids[i]);
	if (n < sizeof(text) - 1)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "\n");
	if (n > sizeof(text) - 1)
		n = sizeof(text) - 1;
	tfw_section(&R->out, TRAIL_SEC_INFO, text, n, NULL, 0);
}

int trail_recorder_open(struct trail_recorder *R, const char *path)
{
	return tfw_open(&R->out, path);
}

int trail_recorder_begin(struct trail_recorder *R)
{
	const struct trail_arena_hdr *hdr = shm_hdr(&R->m);
	struct trail_file_hdr fh;
	struct timespec rt;

	memset(&fh, 0, sizeof(fh));
	memcpy(fh.magic, TRAIL_FILE_MAGIC, 8);
	fh.major = TRAIL_FILE_MAJOR;
	fh.minor = TRAIL_FILE_MINOR;
	fh.endian = 1;
	fh.hdr_size = sizeof(fh);
	fh.session_id = hdr->session_id;
	fh.flags = hdr->flags;
	fh.clock = R->clock;
	fh.chunk_size = R->m.g.chunk_size;
	fh.ncpus = (uint32_t)sysconf(_SC_NPROCESSORS_ONLN);
	clock_gettime(CLOCK_REALTIME, &rt);
	fh.created_ns = (uint64_t)rt.tv_sec * 1000000000ull + (uint64_t)rt.tv_nsec;
	trail__rec_add_sync(R);
	if (tfw_header(&R->out, &fh))
		return R->out.err;
	write_info(R);
	trail__rec_write_clock(R);
	return R->out.err;
}

int trail_recorder_close(struct trail_recorder *R, int keep)
{
	return tfw_finish(&R->out, keep);
}

/* New entries of the session's event table. */
void trail__rec_write_events(struct trail_recorder *R)
{
	uint32_t n = shm_nevents(&R->m);

	for (uint32_t i = 0; i < n; i++) {
		struct trail_sec_event se = {i, 0};
		struct trail_evrec rec;
		struct trail_meta m;
		const uint8_t *src;
		uint8_t blob[65536];
		const char *why;
		int r;

		if (R->event_done[i])
			continue;
		r = shm_event(&R->m, i, &rec, &src);
		if (!r)
			continue;
		if (r < 0 || rec.size > sizeof(blob)) {
			R->event_done[i] = 1; /* broken: never valid */
			continue;
		}
		memcpy(blob, src, rec.size);
		if (trail__meta_parse(blob, rec.size, &m, &why)) {
			R->event_done[i] = 1;
			continue;
		}
		if (!tfw_section(&R->out, TRAIL_SEC_EVENT, &se, sizeof(se), blob, rec.size)) {
			R->event_done[i] = 1;
			/* (not a tracer's own, nor --mmio's, nor a monitor's
			 * violations: libtrail's, which -e '*' matches in
			 * every process) */
			if (strcmp(m.provider, "ftrace") && strcmp(m.provider, "mmio") &&
			    (strcmp(m.provider, "rv") || strcmp(m.name, "error")))
				R->user_events++;
		}
	}
}

void trail__rec_write_proc(struct trail_recorder *R, uint32_t i, uint32_t state)
{
	const struct trail_proc *src = shm_proc(&R->m, i);
	struct trail_proc pr;
	struct trail_sec_proc sp;
	char path[64], exe[PATH_MAX] = "";
	ssize_t n;

	if (!src)
		return;
	memcpy(&pr, src, sizeof(pr));
	memset(&sp, 0, sizeof(sp));
	sp.pid = pr.pid;
	sp.ppid = pr.ppid;
	sp.how = pr.how;
	sp.state = state;
	sp.result = pr.result;
	sp.exited = R->pt[i].dead;
	memcpy(sp.comm, pr.comm, sizeof(sp.comm));
	sp.comm[15] = '\0';
	if (R->offline) { /* (a pid of the core's time: not this system's) */
		if (pr.pid == R->core_pid)
			snprintf(exe, sizeof(exe), "%s", R->core_exe);
	} else {
		snprintf(path, sizeof(path), "/proc/%u/exe", pr.pid);
		n = readlink(path, exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = '\0';
	}
	tfw_section(&R->out, TRAIL_SEC_PROC, &sp, sizeof(sp), exe, strlen(exe) + 1);
}

/* TRAIL_SYM_TRAP on the symbols of the functions of m (an object of
 * process m->pid) that libtrail hooked through a breakpoint (v sorted by
 * address, as symtab_load gives them) */
static void mark_traps(struct trail_recorder *R, const struct trail_mod *m, struct trail_sym *v,
		       size_t n)
{
	uint32_t nt;
	const struct trail_trapsite *t = shm_traps(&R->m, &nt);

	for (uint32_t i = 0; i < nt; i++) {
		uint64_t a;
		size_t lo = 0, hi = n;

		if (!__atomic_load_n(&t[i].state, __ATOMIC_ACQUIRE) || t[i].pid != m->pid ||
		    t[i].addr < m->lo || t[i].addr >= m->hi)
			continue;
		a = t[i].addr - m->base;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;

			if (v[mid].addr < a)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < n && v[lo].addr == a; lo++)
			v[lo].flags |= TRAIL_SYM_TRAP;
	}
}

/* The SYMBOLS section of an object file, written once per file (the first
 * process's module m marks its breakpoint functions). */
static uint32_t symbols_for(struct trail_recorder *R, const char *path, uint64_t dev,
			    uint64_t ino, const struct trail_mod *m)
{
	struct trail_sec_symbols ss;
	struct symtab t;
	struct trail_sym *v;
	char err[256];
	void *nc;
	uint32_t id;

	for (size_t i = 0; i < R->nsymc; i++)
		if (R->symc[i].dev == dev && R->symc[i].ino == ino &&
		    !strcmp(R->symc[i].path, path))
			return R->symc[i].id;
	nc = realloc(R->symc, (R->nsymc + 1) * sizeof(*R->symc));
	if (!nc)
		return TRAIL_NO_SYMBOLS;
	R->symc = nc;
	id = (uint32_t)R->nsymc;
	R->symc[R->nsymc++] = (struct symcache){dev, ino, strdup(path), TRAIL_NO_SYMBOLS};
	if (symtab_load(path, &t, err, sizeof(err)))
		return TRAIL_NO_SYMBOLS;
	v = calloc(t.n ? t.n : 1, sizeof(*v));
	if (v) {
		for (size_t i = 0; i < t.n; i++) {
			v[i].addr = t.syms[i].addr;
			v[i].size = t.syms[i].size;
			v[i].name = t.syms[i].name;
		}
		mark_traps(R, m, v, t.n);
		ss.id = id;
		ss.nsyms = (uint32_t)t.n;
		ss.names_len = t.names_len;
		/* one section: header, symbols, names */
		{
			size_t len = sizeof(ss) + t.n * sizeof(*v) + t.names_len;
			char *buf = malloc(len);

			if (buf) {
				memcpy(buf, &ss, sizeof(ss));
				memcpy(buf + sizeof(ss), v, t.n * sizeof(*v));
				memcpy(buf + sizeof(ss) + t.n * sizeof(*v), t.names, t.names_len);
				if (!tfw_section(&R->out, TRAIL_SEC_SYMBOLS, buf, len, NULL, 0))
					R->symc[id].id = id;
				free(buf);
			}
		}
		free(v);
	}
	symtab_free(&t);
	return R->symc[id].id;
}

/* New entries of the module table: objects with hooked functions. */
void trail__rec_write_modules(struct trail_recorder *R)
{
	uint32_t n = shm_nmods(&R->m);

	for (; R->mods_seen < n && !R->out.err; R->mods_seen++) {
		const struct trail_mod *src = shm_mod(&R->m, R->mods_seen);
		struct trail_mod m;
		struct trail_sec_module sm;

		uint32_t st = __atomic_load_n(&src->state, __ATOMIC_ACQUIRE);

		if (st != TRAIL_MS_READY && st != TRAIL_MS_GONE)
			break; /* still being filled: next time */
		memcpy(&m, src, sizeof(m));
		m.path[sizeof(m.path) - 1] = '\0';
		if (m.path[0] != '/')
			continue;
		memset(&sm, 0, sizeof(sm));
		sm.pid = m.pid;
		sm.base = m.base;
		sm.lo = m.lo;
		sm.hi = m.hi;
		sm.symbols = symbols_for(R, m.path, m.dev, m.ino, &m);
		tfw_section(&R->out, TRAIL_SEC_MODULE, &sm, sizeof(sm), m.path, strlen(m.path) + 1);
	}
	/* objects unloaded since (dlclose): later events at their addresses
	 * are another object's */
	for (uint32_t i = 0; i < R->mods_seen && !R->out.err; i++) {
		const struct trail_mod *src = shm_mod(&R->m, i);
		struct trail_mod m;
		struct trail_sec_modgone g;

		if ((R->mods_gone && R->mods_gone[i]) ||
		    __atomic_load_n(&src->state, __ATOMIC_ACQUIRE) != TRAIL_MS_GONE)
			continue;
		if (!R->mods_gone && !(R->mods_gone = calloc(R->m.g.max_mods, 1)))
			return;
		memcpy(&m, src, sizeof(m));
		R->mods_gone[i] = 1;
		if (m.path[0] != '/')
			continue;
		memset(&g, 0, sizeof(g));
		g.pid = m.pid;
		g.base = m.base;
		g.lo = m.lo;
		g.hi = m.hi;
		g.gone = m.gone;
		tfw_section(&R->out, TRAIL_SEC_MODGONE, &g, sizeof(g), NULL, 0);
	}
}

/* The accounting of stream slot i as it stands (final if it exited). */
void trail__rec_write_stream(struct trail_recorder *R, uint32_t i)
{
	const struct trail_stream *src = shm_stream(&R->m, i);
	struct trail_stream st;

	if (!src)
		return;
	memcpy(&st, src, sizeof(st));
	trail__rec_write_stream_as(R, i, &st);
}

void trail__rec_write_stream_as(struct trail_recorder *R, uint32_t i, const struct trail_stream *s)
{
	struct trail_stream st = *s;
	struct trail_sec_stream ss;

	memset(&ss, 0, sizeof(ss));
	ss.idx = i;
	ss.gen = st.gen;
	ss.pid = st.pid;
	ss.tid = st.tid;
	ss.level = st.level;
	ss.final = 1;
	ss.dropped = st.dropped;
	ss.overwritten = st.overwritten;
	ss.chunks = st.chunks;
	memcpy(ss.comm, st.comm, sizeof(ss.comm));
	ss.comm[15] = '\0';
	if (tfw_section(&R->out, TRAIL_SEC_STREAM, &ss, sizeof(ss), NULL, 0))
		return;
	/* the file's accounting: a later STREAM section of the same (slot,
	 * generation) replaces the earlier one */
	if (R->slot_written[i] && R->slot_gen[i] == ss.gen)
		R->lost_written -= R->slot_lost[i];
	R->slot_written[i] = 1;
	R->slot_gen[i] = ss.gen;
	R->slot_lost[i] = ss.dropped + ss.overwritten;
	R->lost_written += R->slot_lost[i];
}
