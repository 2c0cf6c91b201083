/* SPDX-License-Identifier: MIT */
/*
 * cmd-hist.c - `trail hist -i FILE -e EVENT 'keys=...'`: a histogram of
 * an event's records in a trace file, in the kernel's hist file format
 * (histogram.rst): "{ key: value } hitcount: N  val: N" lines, sorted,
 * then the totals (Hits, Entries, Dropped). The table is bounded as the
 * kernel's is (size=, 2048 by default): records whose key finds no room
 * are counted as Dropped. .log2 and .buckets keys also get a bar, so a
 * distribution can be seen at a glance.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/filter.h"
#include "../../src/common/hist.h"
#include "../../src/common/spec.h"
#include "../../src/tracefile/reader.h"
#include "opt.h"
#include "tool.h"
#include "viewopt.h"

static const struct opt_cmd hist_opts = {
	.name = "hist",
	.intro = "Usage: trail hist [-i FILE] -e EVENT 'keys=KEY[,KEY]...[:vals=...][:sort=...][:size=N] [if FILTER]'\n"
		 "\n"
		 "A histogram of EVENT's records in a trace file, in the kernel's hist\n"
		 "grammar and output format ('hist:' may be left out). Keys: fields,\n"
		 "common_pid (.execname), common_comm, common_timestamp (.usecs), with\n"
		 ".hex .sym .sym-offset .log2 .buckets=N; vals: hitcount and numeric\n"
		 "fields, with .hex .percent .graph; sort: keys or vals, .descending.\n",
	.col = 20,
	.opts = (const struct opt[]){
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat)", 0, NULL},
		{'e', "event", OPT_REQUIRED, "EVENT", "the event (SYS:EVENT, globs: one histogram each)",
		 0, NULL},
		OPT_HELP_ROW,
		{0},
	},
};

struct hent {
	uint64_t hash;
	uint64_t kv[TRAIL_HIST_MAX_KEYS];
	char ks[TRAIL_HIST_MAX_KEYS][TRAIL_HIST_STR_MAX];
	uint32_t pid; /* of its first record: .sym and .execname names */
	uint64_t ts;
	uint64_t hits;
	uint64_t vals[TRAIL_HIST_MAX_VALS];
	int used;
};

struct hist {
	const struct trail_revent *ev;
	struct trail_hist_spec h;
	struct trail_filter *filter;
	struct hent *tab; /* 2 * size slots, open addressing */
	uint32_t cap, entries;
	uint64_t hits, dropped;
	uint64_t sum[TRAIL_HIST_MAX_VALS]; /* for .percent */
	struct hist *next;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const uint8_t *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ull;
	return h;
}

/* ceil(log2(v)): the kernel's ilog2(roundup_pow_of_two(v)) */
static uint64_t log2_up(uint64_t v)
{
	uint64_t l = 0;

	if (v <= 1)
		return 0;
	v--;
	while (v) {
		v >>= 1;
		l++;
	}
	return l;
}

/* field f of rec: its number (mod applied) or string into *v / s */
static void field_value(const struct trail_record *rec, const struct trail_hist_field *f,
			uint64_t *v, char *s)
{
	const struct trail_rstream *st = rec->stream;

	*v = 0;
	if (s)
		s[0] = '\0';
	switch (f->field) {
	case TRAIL_FILTER_PID: *v = st ? st->pid : 0; break;
	case TRAIL_FILTER_TID: *v = st ? st->tid : 0; break;
	case TRAIL_FILTER_CPU: *v = rec->cpu; break;
	case TRAIL_FILTER_TS: *v = rec->ts_ns; break;
	case TRAIL_FILTER_COMM:
		if (s && st)
			snprintf(s, TRAIL_HIST_STR_MAX, "%.16s", st->comm);
		break;
	default: {
		uint32_t off = 0;
		struct trail_fval fv;

		for (uint32_t i = 0; i <= f->field; i++)
			if (!trail_field_at(rec->event, i, rec->payload, rec->len, &off, &fv))
				return;
		if (f->str) {
			uint32_t n = fv.count < TRAIL_HIST_STR_MAX - 1 ? fv.count : TRAIL_HIST_STR_MAX - 1;

			if (s) {
				memcpy(s, fv.data, n);
				s[n] = '\0';
				s[strnlen(s, n)] = '\0';
			}
		} else {
			*v = f->sign ? (uint64_t)trail_fval_s64(&fv, 0) : trail_fval_u64(&fv, 0);
		}
	}
	}
	switch (f->mod) {
	case TRAIL_HM_LOG2: *v = log2_up(*v); break;
	case TRAIL_HM_BUCKETS: *v = *v / f->buckets * f->buckets; break;
	case TRAIL_HM_USECS: *v /= 1000; break;
	default: break;
	}
}

static void add(struct hist *H, const struct trail_record *rec)
{
	struct hent k;
	uint64_t h = 0xcbf29ce484222325ull;
	uint32_t i;

	memset(&k.kv, 0, sizeof(k.kv));
	for (int q = 0; q < H->h.nkeys; q++) {
		const struct trail_hist_field *f = &H->h.keys[q];

		field_value(rec, f, &k.kv[q], f->str ? k.ks[q] : NULL);
		h = f->str ? fnv(h, k.ks[q], strlen(k.ks[q]) + 1) : fnv(h, &k.kv[q], 8);
	}
	H->hits++;
	for (i = (uint32_t)(h & (H->cap - 1));; i = (i + 1) & (H->cap - 1)) {
		struct hent *e = &H->tab[i];
		int same = 1;

		if (!e->used)
			break;
		if (e->hash != h)
			continue;
		for (int q = 0; q < H->h.nkeys && same; q++)
			same = H->h.keys[q].str ? !strcmp(e->ks[q], k.ks[q]) : e->kv[q] == k.kv[q];
		if (same) {
			e->hits++;
			goto vals;
		}
	}
	if (H->entries == H->h.size) { /* the table is full: the kernel's Dropped */
		H->dropped++;
		H->hits--;
		return;
	}
	H->entries++;
	{
		struct hent *e = &H->tab[i];

		e->used = 1;
		e->hash = h;
		memcpy(e->kv, k.kv, sizeof(k.kv));
		for (int q = 0; q < H->h.nkeys; q++)
			if (H->h.keys[q].str)
				memcpy(e->ks[q], k.ks[q], strlen(k.ks[q]) + 1);
		e->pid = rec->stream ? rec->stream->pid : 0;
		e->ts = rec->ts_raw;
		e->hits = 1;
	}
vals:
	for (int q = 0; q < H->h.nvals; q++) {
		uint64_t v;

		field_value(rec, &H->h.vals[q], &v, NULL);
		H->tab[i].vals[q] += v;
		H->sum[q] += v;
	}
}

/* ---------------------------------------------------------------- output */

static const struct hist *sorting;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct hent *a = *(const struct hent *const *)pa, *b = *(const struct hent *const *)pb;
	const struct trail_hist_spec *h = &sorting->h;

	for (int i = 0; i < h->nsort; i++) {
		const struct trail_hist_sort *s = &h->sort[i];
		int c;

		if (s->val && s->idx == 0xff)
			c = cmp_u64(a->hits, b->hits);
		else if (s->val)
			c = cmp_u64(a->vals[s->idx], b->vals[s->idx]);
		else if (h->keys[s->idx].str)
			c = strcmp(a->ks[s->idx], b->ks[s->idx]);
		else if (h->keys[s->idx].sign && !h->keys[s->idx].mod)
			c = (int64_t)a->kv[s->idx] < (int64_t)b->kv[s->idx]	? -1
			    : (int64_t)a->kv[s->idx] > (int64_t)b->kv[s->idx] ? 1
										: 0;
		else
			c = cmp_u64(a->kv[s->idx], b->kv[s->idx]);
		if (c)
			return s->desc ? -c : c;
	}
	/* ties: by the keys, for an output that does not depend on the
	 * table's order */
	for (int q = 0; q < h->nkeys; q++) {
		int c = h->keys[q].str ? strcmp(a->ks[q], b->ks[q]) : cmp_u64(a->kv[q], b->kv[q]);

		if (c)
			return c;
	}
	return 0;
}

/* the comm of pid, from the file's processes and streams */
static const char *comm_of(struct trail_reader *r, uint32_t pid)
{
	const struct trail_rstream *const *st;
	size_t n = trail_reader_streams(r, &st);

	for (size_t i = 0; i < n; i++)
		if (st[i]->pid == pid)
			return st[i]->comm;
	return "<...>";
}

static void bar(char *b, size_t width, uint64_t v, uint64_t max)
{
	size_t n = max ? (size_t)((v * width + max - 1) / max) : 0;

	if (n > width)
		n = width;
	memset(b, '#', n);
	memset(b + n, ' ', width - n);
	b[width] = '\0';
}

static void print_key(struct trail_reader *r, const struct trail_hist_field *f,
		      const struct hent *e, int q)
{
	uint64_t v = e->kv[q];

	if (f->str) {
		printf("%s: %-50s", f->name, e->ks[q]);
		return;
	}
	switch (f->mod) {
	case TRAIL_HM_HEX: printf("%s: %" PRIx64, f->name, v); break;
	case TRAIL_HM_SYM:
	case TRAIL_HM_SYM_OFFSET: {
		uint64_t off = 0, size = 0;
		const char *name = trail_reader_symbol_size(r, e->pid, v, e->ts, &off, &size);
		char b[300];

		if (!name)
			snprintf(b, sizeof(b), "0x%" PRIx64, v);
		else if (f->mod == TRAIL_HM_SYM_OFFSET)
			snprintf(b, sizeof(b), "%s+0x%" PRIx64, name, off);
		else
			snprintf(b, sizeof(b), "%s", name);
		printf("%s: [%" PRIx64 "] %-*s", f->name, v, f->mod == TRAIL_HM_SYM ? 45 : 55, b);
		break;
	}
	case TRAIL_HM_EXECNAME:
		printf("%s: %-16s[%10" PRIu64 "]", f->name, comm_of(r, (uint32_t)v), v);
		break;
	case TRAIL_HM_LOG2: printf("%s: ~ 2^%-2" PRIu64, f->name, v); break;
	case TRAIL_HM_BUCKETS:
		printf("%s: ~ %" PRIu64 "-%" PRIu64, f->name, v, v + f->buckets - 1);
		break;
	default:
		if (f->sign)
			printf("%s: %10" PRId64, f->name, (int64_t)v);
		else
			printf("%s: %10" PRIu64, f->name, v);
	}
}

static void print_val(const char *name, uint8_t mod, uint64_t v, uint64_t total, uint64_t max,
		      int first)
{
	const char *sep = first ? " " : "  ";

	if (mod == TRAIL_HM_PERCENT) {
		uint64_t p = total ? v * 10000 / total : 0;

		printf("%s%s (%%):%3" PRIu64 ".%02" PRIu64, sep, name, p / 100, p % 100);
	} else if (mod == TRAIL_HM_GRAPH) {
		char b[32];

		bar(b, 20, v, max);
		printf("%s%s: %s", sep, name, b);
	} else if (mod == TRAIL_HM_HEX) {
		printf("%s%s: %10" PRIx64, sep, name, v);
	} else {
		printf("%s%s: %10" PRIu64, sep, name, v);
	}
}

static void print_hist(struct trail_reader *r, struct hist *H, int several)
{
	const struct trail_hist_spec *h = &H->h;
	struct hent **list = calloc(H->entries ? H->entries : 1, sizeof(*list));
	uint64_t maxhit = 0, maxval[TRAIL_HIST_MAX_VALS] = {0};
	int distribution = 0;
	char info[1024];
	uint32_t n = 0;

	if (!list) {
		tool_err("out of memory");
		return;
	}
	for (uint32_t i = 0; i < H->cap; i++)
		if (H->tab[i].used) {
			list[n++] = &H->tab[i];
			if (H->tab[i].hits > maxhit)
				maxhit = H->tab[i].hits;
			for (int q = 0; q < h->nvals; q++)
				if (H->tab[i].vals[q] > maxval[q])
					maxval[q] = H->tab[i].vals[q];
		}
	sorting = H;
	qsort(list, n, sizeof(*list), cmp_ent);
	for (int q = 0; q < h->nkeys; q++)
		distribution |= h->keys[q].mod == TRAIL_HM_LOG2 || h->keys[q].mod == TRAIL_HM_BUCKETS;
	trail_hist_describe(h, info, sizeof(info));
	if (several)
		printf("# %s:%s\n", H->ev->meta.provider, H->ev->meta.name);
	printf("# event histogram\n#\n# trigger info: %s [active]\n#\n\n", info);
	for (uint32_t i = 0; i < n; i++) {
		const struct hent *e = list[i];

		printf("{ ");
		for (int q = 0; q < h->nkeys; q++) {
			if (q)
				printf(", ");
			print_key(r, &h->keys[q], e, q);
		}
		printf(" }");
		print_val("hitcount", h->hit_mod, e->hits, H->hits, maxhit, 1);
		for (int q = 0; q < h->nvals; q++)
			print_val(h->vals[q].name, h->vals[q].mod, e->vals[q], H->sum[q], maxval[q], 0);
		if (distribution) { /* the distribution, at a glance */
			char b[48];

			bar(b, 40, e->hits, maxhit);
			printf("  |%s|", b);
		}
		printf("\n");
	}
	printf("\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %u\n    Dropped: %" PRIu64 "\n",
	       H->hits, H->entries, H->dropped);
	free(list);
}

/* ------------------------------------------------------------------ main */

int cmd_hist(int argc, char **argv)
{
	const char *input = "trace.dat", *event = NULL, *text;
	struct trail_reader *r = NULL;
	struct opt_parser op;
	struct hist *hists = NULL, **byid;
	struct trail_record rec;
	char err[512];
	uint32_t nids;
	int c, rc = 0, nh = 0;

	opt_init(&op, &hist_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'e': event = optarg; break;
		case OPT_EXIT: return op.status;
		}
	}
	if (!event) {
		tool_usage_err("hist", "give the event: -e SYS:EVENT");
		return EXIT_USAGE;
	}
	if (optind != argc - 1) {
		tool_usage_err("hist", optind == argc ? "give the histogram: 'keys=...'"
						      : "one histogram at a time ('keys=...:vals=...')");
		return EXIT_USAGE;
	}
	text = argv[optind];
	if (viewopt_open(input, &r, err, sizeof(err)))
		return 1;
	nids = trail_reader_event_ids(r);
	byid = calloc(nids ? nids : 1, sizeof(*byid));
	if (!byid) {
		trail_reader_close(r);
		return 1;
	}
	for (uint32_t id = 0; id < nids && !rc; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);
		struct trail_filter_err fe;
		struct hist *H;

		if (!ev || !trail__spec_match1(event, strlen(event), ev->meta.provider, ev->meta.name))
			continue;
		if (!(H = calloc(1, sizeof(*H)))) {
			rc = 1;
			break;
		}
		H->ev = ev;
		H->next = hists;
		hists = H;
		byid[id] = H;
		nh++;
		if (trail_hist_parse(text, &ev->meta, &H->h, &fe)) {
			tool_caret("hist", text, (size_t)fe.pos, fe.msg);
			rc = 1;
			break;
		}
		if (H->h.filter) {
			if (!(H->filter = malloc(sizeof(*H->filter)))) {
				rc = 1;
				break;
			}
			if (trail_filter_compile(H->h.filter, &ev->meta, H->filter, &fe)) {
				tool_caret("hist", text, (size_t)(H->h.filter - text) + (size_t)fe.pos,
					   fe.msg);
				rc = 1;
				break;
			}
		}
		H->cap = H->h.size * 2;
		if (!(H->tab = calloc(H->cap, sizeof(*H->tab)))) {
			tool_err("hist: %u entries: out of memory", H->h.size);
			rc = 1;
		}
	}
	if (!rc && !nh) {
		tool_err("%s has no event matching '%s'", input, event);
		rc = 1;
	}
	while (!rc && trail_reader_next(r, &rec) > 0) {
		struct hist *H;

		if (rec.type != TRAIL_RT_EVENT || !rec.event || rec.event->id >= nids ||
		    !(H = byid[rec.event->id]))
			continue;
		if (H->filter) {
			struct trail_filter_ctx fc = {
				.pid = rec.stream ? rec.stream->pid : 0,
				.tid = rec.stream ? rec.stream->tid : 0,
				.cpu = rec.cpu,
				.ts = rec.ts_ns,
				.comm = rec.stream ? rec.stream->comm : "",
			};

			if (!trail_filter_match(H->filter, rec.payload, rec.len, &fc))
				continue;
		}
		add(H, &rec);
	}
	if (!rc) {
		/* in the file's order of events */
		for (uint32_t id = 0, k = 0; id < nids; id++)
			if (byid[id]) {
				if (k++)
					printf("\n");
				print_hist(r, byid[id], nh > 1);
			}
		{
			const char *const *msgs;
			size_t ne = trail_reader_errors(r, &msgs);

			for (size_t i = 0; i < ne; i++)
				tool_err("%s: %s", input, msgs[i]);
			if (ne) /* (what was read is counted above) */
				rc = 1;
		}
	}
	while (hists) {
		struct hist *n = hists->next;

		free(hists->tab);
		free(hists->filter);
		free(hists);
		hists = n;
	}
	free(byid);
	trail_reader_close(r);
	return rc;
}
