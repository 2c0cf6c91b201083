/* SPDX-License-Identifier: MIT */
/* viewopt.c - the options every view takes; see viewopt.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/spec.h"
#include "tool.h"
#include "viewopt.h"

void viewopt_init(struct viewopt *vo)
{
	memset(vo, 0, sizeof(*vo));
	vo->v.sz = sizeof(vo->v);
}

static int add_str(const char ***v, size_t *n, const char *s)
{
	const char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (!nv)
		return -1;
	nv[(*n)++] = s;
	*v = nv;
	return 0;
}

/* "12,34": ids added to *v; 0 or -1 (the usage error reported) */
static int add_ids(const char *cmd, const char *opt, const char *arg, uint32_t **v, size_t *n)
{
	const char *p = arg;

	do {
		char *end;
		pid_t id;
		uint32_t *nv;

		if (tool_parse_pid(p, &end, &id) || (*end && *end != ',')) {
			tool_usage_err(cmd, "%s needs thread or process ids like 12,34, not '%s'", opt,
				       arg);
			return -1;
		}
		nv = realloc(*v, (*n + 1) * sizeof(**v));
		if (!nv)
			return -1;
		nv[(*n)++] = (uint32_t)id;
		*v = nv;
		p = *end ? end + 1 : end;
	} while (*p);
	return 0;
}

/* One side of --time-range: "" (open), "SEC[.FRAC]" absolute (exact to
 * the nanosecond), "+DURATION" from the first record. 0, or -1. */
static int range_side(const char *s, size_t len, uint64_t *ns, int *has, int *rel)
{
	char buf[64];

	if (!len)
		return 0;
	if (len >= sizeof(buf))
		return -1;
	memcpy(buf, s, len);
	buf[len] = '\0';
	*has = 1;
	if (buf[0] == '+') {
		*rel = 1;
		return tool_parse_duration(buf + 1, ns) ? -1 : 0;
	}
	{
		unsigned long sec;
		char *end;
		uint64_t frac = 0, scale = 100000000ull;

		if (tool_parse_ulong(buf, &end, 0, 1ul << 33, &sec))
			return -1;
		if (*end == '.') {
			end++;
			if (!*end)
				return -1;
			for (; *end >= '0' && *end <= '9'; end++) {
				frac += (uint64_t)(*end - '0') * scale;
				scale /= 10;
			}
		}
		if (*end)
			return -1;
		*ns = (uint64_t)sec * 1000000000ull + frac;
	}
	return 0;
}

int viewopt_take(struct viewopt *vo, const char *cmd, int id, const char *arg)
{
	struct trail_view *v = &vo->v;
	unsigned long n;
	uint64_t ns;
	size_t where;
	const char *why;

	switch (id) {
	case 'l':
	case 'n':
	case 'g':
	case VO_COMM:
		if (!*arg) {
			tool_usage_err(cmd, "option %s needs a glob, not an empty one",
				       id == VO_COMM ? "--comm" : id == 'l' ? "-l" : id == 'n' ? "-n" : "-g");
			return -1;
		}
		where = trail__glob_check(arg, strlen(arg), &why);
		if (where) {
			tool_caret(cmd, arg, where - 1, why);
			return -1;
		}
		if (id == 'l' && add_str(&vo->only, &v->nonly, arg))
			return -1;
		if (id == 'n' && add_str(&vo->notrace, &v->nnotrace, arg))
			return -1;
		if (id == 'g' && add_str(&vo->graph, &v->ngraph, arg))
			return -1;
		if (id == VO_COMM && add_str(&vo->comms, &v->ncomms, arg))
			return -1;
		v->only = vo->only;
		v->notrace = vo->notrace;
		v->graph = vo->graph;
		v->comms = vo->comms;
		return 1;
	case VO_FILTER: {
		const char *text;
		char pat[256];
		size_t pl;

		/* EVENT, or EVENT: FILTER (its errors are found against each
		 * event's fields, when the file names it) */
		if (trail_filter_split(arg, &pl, &text) || !pl) {
			tool_caret(cmd, arg, pl, "expected EVENT or 'EVENT: FILTER'");
			return -1;
		}
		if (pl >= sizeof(pat)) {
			tool_caret(cmd, arg, sizeof(pat), "event pattern too long");
			return -1;
		}
		memcpy(pat, arg, pl);
		pat[pl] = 0;
		where = trail__spec_check(pat, &why);
		if (where) {
			tool_caret(cmd, arg, where - 1, why);
			return -1;
		}
		if (add_str(&vo->filters, &v->nfilters, arg))
			return -1;
		v->filters = vo->filters;
		v->filter_err = &vo->filter_err;
		v->filter_which = &vo->filter_which;
		return 1;
	}
	case VO_TID:
		if (add_ids(cmd, "--tid", arg, &vo->tids, &v->ntids))
			return -1;
		v->tids = vo->tids;
		return 1;
	case VO_PID:
		if (add_ids(cmd, "--pid", arg, &vo->pids, &v->npids))
			return -1;
		v->pids = vo->pids;
		return 1;
	case VO_RANGE: {
		const char *comma = strchr(arg, ',');

		v->has_start = v->has_end = v->rel_start = v->rel_end = 0;
		if (!comma || strchr(comma + 1, ',') ||
		    range_side(arg, (size_t)(comma - arg), &v->start_ns, &v->has_start,
			       &v->rel_start) ||
		    range_side(comma + 1, strlen(comma + 1), &v->end_ns, &v->has_end, &v->rel_end)) {
			tool_usage_err(cmd, "--time-range needs START,END (seconds like 5012.104432, "
				       "or +1.5s from the first record; a side may be empty), not '%s'",
				       arg);
			return -1;
		}
		if (v->has_start && v->has_end && v->rel_start == v->rel_end &&
		    v->end_ns < v->start_ns) {
			tool_usage_err(cmd, "--time-range '%s' ends before it starts", arg);
			return -1;
		}
		return 1;
	}
	case VO_DEPTH:
		if (tool_parse_ulong(arg, NULL, 1, 1u << 20, &n)) {
			tool_usage_err(cmd, "--max-graph-depth needs a depth of 1 or more, not '%s'",
				       arg);
			return -1;
		}
		v->max_depth = (uint32_t)n;
		return 1;
	case VO_THRESH:
		if (tool_parse_duration(arg, &ns) || !ns) {
			tool_usage_err(cmd, "--graph-time-thresh needs a duration like 50us, not '%s'",
				       arg);
			return -1;
		}
		v->thresh_ns = ns;
		return 1;
	}
	return 0;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void progress(void *arg, uint64_t records, uint64_t offset)
{
	struct viewopt *vo = arg;
	uint64_t el = now_ns() - vo->started_ns;
	char a[32], b[32], c[32];

	if (el < vo->delay_ns) /* short views show nothing */
		return;
	fprintf(stderr, "\r\033[Ktrail %s: %s records  %s of %s  %.1f M records/s", vo->what,
		tool_thousands(records, a, sizeof(a)), tool_human_bytes(offset, b, sizeof(b)),
		tool_human_bytes(vo->total_bytes, c, sizeof(c)), (double)records * 1e3 / (double)el);
	vo->shown = 1;
}

void viewopt_progress(struct viewopt *vo, const char *what, uint64_t file_bytes)
{
	vo->tty = isatty(2);
	if (!vo->tty)
		return;
	vo->what = what;
	vo->total_bytes = file_bytes;
	{
		const char *d = getenv("TRAIL_PROGRESS_DELAY");
		unsigned long ms = 1000;

		if (d && tool_parse_ulong(d, NULL, 0, 3600000, &ms))
			ms = 1000;
		vo->delay_ns = (uint64_t)ms * 1000000ull;
	}
	vo->started_ns = now_ns();
	vo->v.progress = progress;
	vo->v.progress_arg = vo;
}

void viewopt_progress_done(struct viewopt *vo)
{
	if (vo->shown)
		fputs("\r\033[K", stderr);
	vo->shown = 0;
}

void viewopt_free(struct viewopt *vo)
{
	free(vo->only);
	free(vo->notrace);
	free(vo->graph);
	free(vo->comms);
	free(vo->filters);
	free(vo->tids);
	free(vo->pids);
}

int viewopt_filter_failed(const struct viewopt *vo, const char *cmd)
{
	if (!vo->filter_err.msg[0])
		return 0;
	tool_caret(cmd, vo->filters[vo->filter_which], (size_t)vo->filter_err.pos,
		   vo->filter_err.msg);
	return 1;
}

/* No FILE, but a FILE.part: a recorder was killed while writing it. */
static void unfinished_hint(const char *path)
{
	struct stat st;
	char *part = NULL;

	if (stat(path, &st) == 0 || asprintf(&part, "%s.part", path) < 0)
		return;
	if (stat(part, &st) == 0)
		fprintf(stderr, "  %s is an unfinished recording (its recorder was killed?): "
			"trail report -i %s\n", part, part);
	free(part);
}

/* -i -: standard input (a trace on a pipe, a socket, a serial line)
 * taken whole into an unlinked file of $TMPDIR, then read as any file:
 * one cut short is read as a file cut short is, up to its last whole
 * section */
static int open_stdin(struct trail_reader **r, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	char tmp[4096], buf[1 << 16];
	ssize_t n;
	int fd, rc;

	if (isatty(STDIN_FILENO)) {
		tool_err("-i -: standard input is a terminal; pipe a trace into it "
			 "(trail record -o - ... | trail report -i -)");
		return 1;
	}
	snprintf(tmp, sizeof(tmp), "%s/trail-stdin.XXXXXX", dir && *dir ? dir : "/tmp");
	if ((fd = mkstemp(tmp)) < 0) {
		tool_err("-i -: a file to take standard input into: %s: %s", tmp, strerror(errno));
		return 1;
	}
	while ((n = read(STDIN_FILENO, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 || write(fd, buf, (size_t)n) != n) {
			tool_err("-i -: %s: %s", n < 0 ? "reading standard input" : tmp, strerror(errno));
			close(fd);
			unlink(tmp);
			return 1;
		}
	}
	close(fd);
	rc = trail_reader_open(tmp, r, err, errlen);
	unlink(tmp);
	if (rc) { /* (the file is ours; the stream is what the user gave) */
		const char *at = strstr(err, tmp);

		tool_err("-i -: %s", at ? at + strlen(tmp) + (at[strlen(tmp)] == ':' ? 2 : 0) : err);
	}
	return rc ? 1 : 0;
}

int viewopt_open(const char *path, struct trail_reader **r, char *err, size_t errlen)
{
	if (!strcmp(path, "-"))
		return open_stdin(r, err, errlen);
	if (core_is(path)) /* a core dump: its trace buffer (core.c) */
		return core_open(path, r, err, errlen);
	if (!trail_reader_open(path, r, err, errlen))
		return 0;
	tool_err("%s", err);
	unfinished_hint(path);
	return 1;
}

size_t viewopt_damage(const char *path, struct trail_reader *r)
{
	const char *const *errs;
	size_t n = trail_reader_errors(r, &errs);

	for (size_t i = 0; i < n; i++)
		tool_err("%s: %s", path, errs[i]);
	return n;
}
