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
#include <termios.h>
#include <unistd.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/filter.h"
#include "../../src/common/hist.h"
#include "../../src/common/htab.h"
#include "../../src/common/spec.h"
#include "../../src/recorder/recorder.h"
#include "../../src/tracefile/reader.h"
#include "histview.h"
#include "opt.h"
#include "tool.h"
#include "viewopt.h"

static const struct opt_cmd hist_opts = {
	.name = "hist",
	.intro = "Usage: trail hist [-i FILE] [-e EVENT ['keys=KEY[,KEY]...[:vals=...][:sort=...][:size=N] [if FILTER]']]\n"
		 "       trail hist -P PID -e EVENT 'keys=...' [--interval SECS] [-o FILE]\n"
		 "\n"
		 "A histogram of EVENT's records in a trace file, in the kernel's hist\n"
		 "grammar and output format ('hist:' may be left out); without a spec,\n"
		 "the histograms hist triggers (record -T 'hist:...') kept in the traced\n"
		 "processes. -P: a hist trigger installed in a running process, shown\n"
		 "every --interval seconds (1 on a terminal) until it exits or Ctrl-C,\n"
		 "then as it stood at the end (on a terminal, keys p, c and z pause,\n"
		 "continue and clear it). Keys: fields,\n"
		 "common_pid (.execname), common_comm, common_timestamp (.usecs), with\n"
		 ".hex .sym .sym-offset .log2 .buckets=N; vals: hitcount and numeric\n"
		 "fields, with .hex .percent .graph; sort: keys or vals, .descending.\n",
	.col = 20,
	.opts = (const struct opt[]){
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat), a core dump, or - (stdin)", 0, NULL},
		{'e', "event", OPT_REQUIRED, "EVENT", "the event (SYS:EVENT, globs: one histogram each)",
		 0, NULL},
		{'P', "pid", OPT_REQUIRED, "PID", "keep the histogram in this running process", 0, NULL},
		{1, "interval", OPT_REQUIRED, "SECS", "-P: show it every SECS seconds (0: at the end only)",
		 0, NULL},
		{'o', "output", OPT_REQUIRED, "FILE", "-P: the trace file (default: a temporary one)", 0,
		 NULL},
		OPT_HELP_ROW,
		{0},
	},
};

struct hist {
	const struct trail_revent *ev;
	struct histview v;
	struct trail_filter *filter;
	struct trail_htab *tab; /* the records', aggregated here */
	uint64_t *keys;
	const struct trail_rhist *saved; /* or the table the processes kept */
	struct hist *next;
};

/* the comm of pid, from the file's processes and streams */
static const char *comm_of(void *ctx, uint32_t pid)
{
	const struct trail_rstream *const *st;
	const struct trail_rproc *pr;
	size_t n = trail_reader_procs(ctx, &pr);
	static char c[17];

	for (size_t i = 0; i < n; i++)
		if (pr[i].pid == pid) {
			snprintf(c, sizeof(c), "%.16s", pr[i].comm);
			return c;
		}
	n = trail_reader_streams(ctx, &st);
	for (size_t i = 0; i < n; i++)
		if (st[i]->pid == pid)
			return st[i]->comm;
	return NULL;
}

static const char *sym_of(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off)
{
	return trail_reader_symbol(ctx, pid, addr, 0, off);
}

/* a record into H's table */
static void add(struct hist *H, const struct trail_record *rec)
{
	const struct trail_rstream *st = rec->stream;
	struct trail_filter_ctx c = {
		.pid = st ? st->pid : 0,
		.tid = st ? st->tid : 0,
		.cpu = rec->cpu,
		.ts = rec->ts_ns,
		.comm = st ? st->comm : "",
	};

	if (H->filter && !trail_filter_match(H->filter, rec->payload, rec->len, &c))
		return;
	trail_hist_update(&H->v.k, H->tab, 0, rec->payload, rec->len, &c, NULL);
}

/* H's entries: from its table, or the saved ones */
static int entries(struct hist *H)
{
	struct histview *v = &H->v;
	size_t max;
	uint64_t more = 0;

	if (H->saved) {
		const struct trail_rhist *s = H->saved;
		size_t ew = (size_t)s->kwords + 1 + s->nvals + s->nextra, kw = s->kwords + s->nextra;

		v->e = calloc(s->entries ? s->entries : 1, sizeof(*v->e));
		H->keys = calloc((s->entries ? s->entries : 1) * kw + s->naux + 1, 8u);
		if (!v->e || !H->keys)
			return -1;
		for (size_t i = 0; i < s->entries; i++) {
			const uint8_t *w = s->data + i * ew * 8u;

			memcpy(H->keys + i * kw, w, (size_t)s->kwords * 8u);
			v->e[i].key = H->keys + i * kw;
			memcpy(&v->e[i].hits, w + (size_t)s->kwords * 8u, 8);
			memcpy(v->e[i].vals, w + ((size_t)s->kwords + 1) * 8u, (size_t)s->nvals * 8u);
			if (s->nextra) {
				memcpy(H->keys + i * kw + s->kwords,
				       w + ((size_t)s->kwords + 1 + s->nvals) * 8u, s->nextra * 8u);
				v->e[i].extra = H->keys + i * kw + s->kwords;
			}
		}
		if (s->naux) {
			memcpy(H->keys + s->entries * kw, s->data + s->entries * ew * 8u, s->naux * 8u);
			v->aux = H->keys + s->entries * kw;
		}
		v->n = s->entries;
		v->hits = s->hits;
		v->dropped = s->dropped;
		return 0;
	}
	max = v->h.size;
	v->e = calloc(max, sizeof(*v->e));
	H->keys = calloc(max, ((size_t)v->k.kwords + v->k.nextra) * 8u);
	if (!v->e || !H->keys)
		return -1;
	v->n = trail_htab_collect(H->tab, v->e, H->keys, max, &v->hits, &v->dropped, &more);
	v->dropped += more;
	return 0;
}

/* is the saved histogram s the one text asks for on the event m
 * describes (the same keys, vals, sort, size and filter)? */
static int same_spec(const struct trail_rhist *s, const struct trail_hist_spec *want,
		     const struct trail_meta *m)
{
	struct trail_hist_spec *h = malloc(sizeof(*h));
	struct trail_filter_err e;
	char a[1024], b[1024];
	int same = 0;

	if (h && !trail_hist_parse(s->text, m, h, &e)) {
		trail_hist_describe(h, a, sizeof(a));
		trail_hist_describe(want, b, sizeof(b));
		same = !strcmp(a, b) && !h->filter == !want->filter &&
		       (!h->filter || !strcmp(h->filter, want->filter));
	}
	free(h);
	return same;
}

static void hist_free(struct hist *H)
{
	free(H->tab);
	free(H->filter);
	free(H->keys);
	free(H->v.e);
	free(H);
}

/* ------------------------------------------------------------------ main */

/* the file's event named "SYS:EVENT" */
static const struct trail_revent *event_named(struct trail_reader *r, const char *name)
{
	uint32_t nids = trail_reader_event_ids(r);

	for (uint32_t id = 0; id < nids; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);
		size_t pl;

		if (!ev)
			continue;
		pl = strlen(ev->meta.provider);
		if (!strncmp(name, ev->meta.provider, pl) && name[pl] == ':' &&
		    !strcmp(name + pl + 1, ev->meta.name))
			return ev;
	}
	return NULL;
}

static struct hist *hist_new(struct trail_reader *r, const struct trail_revent *ev)
{
	struct hist *H = calloc(1, sizeof(*H));

	if (!H) {
		tool_err("out of memory");
		return NULL;
	}
	H->ev = ev;
	H->v.comm = comm_of;
	H->v.sym = sym_of;
	H->v.ctx = r;
	return H;
}

/* the histograms the file's hist triggers kept, on the events pat
 * selects (NULL: all), onto *list; how many */
static int saved_list(struct trail_reader *r, const char *pat, struct hist ***tail)
{
	const struct trail_rhist *s;
	size_t ns = trail_reader_hists(r, &s);
	int n = 0;

	for (size_t i = 0; i < ns; i++) {
		const struct trail_revent *ev = event_named(r, s[i].event);
		struct trail_filter_err fe;
		struct hist *H;

		if (!ev || (pat && !trail__spec_match1(pat, strlen(pat), ev->meta.provider,
						       ev->meta.name)))
			continue;
		if (!(H = hist_new(r, ev)))
			return -1;
		H->saved = &s[i];
		H->v.title = s[i].event;
		if (trail_hist_parse(s[i].text, &ev->meta, &H->v.h, &fe)) {
			tool_err("the histogram kept on %s ('%s') does not fit its fields: %s",
				 s[i].event, s[i].text, fe.msg);
			hist_free(H);
			continue;
		}
		trail_hist_keyer(&H->v.h, &ev->meta, &H->v.k);
		if (H->v.k.kwords != s[i].kwords || H->v.k.nvals != s[i].nvals ||
		    H->v.k.nextra != s[i].nextra || H->v.k.naux != s[i].naux) {
			tool_err("the histogram kept on %s ('%s') is damaged", s[i].event, s[i].text);
			hist_free(H);
			continue;
		}
		**tail = H;
		*tail = &H->next;
		n++;
	}
	return n;
}

/* ------------------------------------------------------------------- -P */

static const char *proc_comm(void *ctx, uint32_t pid)
{
	static char c[32];
	char path[64];
	FILE *f;

	(void)ctx;
	snprintf(path, sizeof(path), "/proc/%u/comm", pid);
	if (!(f = fopen(path, "r")))
		return NULL;
	if (!fgets(c, sizeof(c), f))
		c[0] = '\0';
	fclose(f);
	c[strcspn(c, "\n")] = '\0';
	return c;
}

struct live {
	int tty;
	unsigned shown;
	int keys;   /* a terminal's keys read: p pause, c continue, z clear */
	int paused;
	struct termios saved;
};

/* the keys typed since the last view: the kernel's :pause, :cont and
 * :clear on the histograms kept in the processes */
static void live_keys(struct trail_recorder *R, struct live *L)
{
	char b[32];
	ssize_t n;

	while (L->keys && (n = read(0, b, sizeof(b))) > 0)
		for (ssize_t i = 0; i < n; i++)
			if (b[i] == 'p' || b[i] == 'c') {
				L->paused = b[i] == 'p';
				trail_recorder_hist_control(R, L->paused ? TRAIL_HIST_PAUSE
									: TRAIL_HIST_CONT);
			} else if (b[i] == 'z') {
				trail_recorder_hist_control(R, TRAIL_HIST_CLEAR);
			}
}

/* one histogram as it stands in the processes */
static void live_one(void *arg, const struct trail_recorder_hist *rh)
{
	struct trail_recorder *R = ((void **)arg)[0];
	struct live *L = ((void **)arg)[1];
	uint8_t *blob = malloc(1 << 16);
	struct trail_meta *m = malloc(sizeof(*m));
	struct histview *v = calloc(1, sizeof(*v));
	struct trail_filter_err fe;
	const char *why;
	int size;

	if (blob && m && v && (size = trail_recorder_event_meta(R, rh->event, blob, 1 << 16)) > 0 &&
	    !trail__meta_parse(blob, (size_t)size, m, &why) &&
	    !trail_hist_parse(rh->text, m, &v->h, &fe)) {
		trail_hist_keyer(&v->h, m, &v->k);
		if (v->k.kwords == rh->kwords && v->k.nextra == rh->nextra && v->k.naux == rh->naux) {
			v->title = rh->event;
			v->aux = rh->aux;
			v->e = rh->e;
			v->n = rh->n;
			v->hits = rh->hits;
			v->dropped = rh->dropped + rh->more;
			v->comm = proc_comm;
			if (L->shown++)
				printf("\n");
			histview_print(stdout, v);
		}
	}
	free(blob);
	free(m);
	free(v);
}

static void live_show(struct trail_recorder *R, void *arg)
{
	struct live *L = arg;
	void *pair[2] = {R, L};

	live_keys(R, L);
	if (L->tty)
		printf("\033[H\033[J"); /* the screen, redrawn */
	else if (L->shown)
		printf("\n");
	if (L->keys)
		printf("# %s   (keys: p pause, c continue, z clear; Ctrl-C ends)\n",
		       L->paused ? "[paused]" : "[active]");
	L->shown = 0;
	trail_recorder_hists(R, live_one, pair);
	fflush(stdout);
}

/* trail hist -P: a recording of the processes with the hist trigger and
 * nothing else, its live view on the way, its kept histogram at the end */
static int hist_live(char **pids, int npids, const char *event, const char *text,
		     double interval, const char *output)
{
	char tmp[] = "/tmp/trail-hist-XXXXXX", *trig = NULL, **av;
	struct live L = {.tty = isatty(1)};
	int ac = 0, rc, fd = -1;

	if (!output) {
		if ((fd = mkstemp(tmp)) < 0) {
			tool_err("cannot make a temporary file: %s", strerror(errno));
			return 1;
		}
		close(fd);
		output = tmp;
	}
	while (*text == ' ')
		text++;
	if (asprintf(&trig, "%s:%s%s", event, strncmp(text, "hist", 4) ? "hist:" : "", text) < 0 ||
	    !(av = calloc((size_t)(2 * npids + 8), sizeof(*av)))) {
		free(trig);
		return 1;
	}
	av[ac++] = "record";
	av[ac++] = "-q";
	for (int i = 0; i < npids; i++) {
		av[ac++] = "-P";
		av[ac++] = pids[i];
	}
	av[ac++] = "-T";
	av[ac++] = trig;
	av[ac++] = "-o";
	av[ac++] = (char *)output;
	if (interval > 0) {
		record_live.fn = live_show;
		record_live.arg = &L;
		record_live.period_ns = (uint64_t)(interval * 1e9);
		/* keys from a terminal, one at a time, not echoed */
		if (L.tty && isatty(0) && !tcgetattr(0, &L.saved)) {
			struct termios raw = L.saved;

			raw.c_lflag &= ~(tcflag_t)(ICANON | ECHO);
			raw.c_cc[VMIN] = 0;
			raw.c_cc[VTIME] = 0;
			L.keys = !tcsetattr(0, TCSANOW, &raw);
		}
	}
	optind = 1;
	rc = cmd_record(ac, av);
	record_live.fn = NULL;
	if (L.keys)
		tcsetattr(0, TCSANOW, &L.saved);
	if (!rc) {
		char *hv[] = {"hist", "-i", (char *)output, "-e", (char *)event, NULL};

		if (L.tty && interval > 0)
			printf("\033[H\033[J");
		else if (L.shown)
			printf("\n");
		optind = 1;
		rc = cmd_hist(5, hv);
	}
	if (fd >= 0)
		unlink(tmp);
	free(av);
	free(trig);
	return rc;
}

int cmd_hist(int argc, char **argv)
{
	const char *input = "trace.dat", *event = NULL, *text = NULL, *output = NULL;
	char **pids = NULL;
	int npids = 0;
	double interval = -1;
	struct trail_reader *r = NULL;
	struct opt_parser op;
	struct hist *hists = NULL, **tail = &hists, **byid = NULL;
	struct trail_record rec;
	char err[512];
	uint32_t nids;
	int c, rc = 0, nh = 0, records = 0;

	opt_init(&op, &hist_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		switch (c) {
		case 'i': input = optarg; break;
		case 'e': event = optarg; break;
		case 'o': output = optarg; break;
		case 'P': {
			pid_t pid;
			char **g;

			if (tool_pid_arg("hist", "-P", optarg, &pid) ||
			    !(g = realloc(pids, (size_t)(npids + 1) * sizeof(*g)))) {
				free(pids);
				return EXIT_USAGE;
			}
			pids = g;
			pids[npids++] = optarg;
			break;
		}
		case 1: {
			char *end;

			interval = strtod(optarg, &end);
			if (end == optarg || *end || !(interval >= 0 && interval <= 86400)) {
				tool_usage_err("hist", "--interval: seconds, 0 to 86400");
				free(pids);
				return EXIT_USAGE;
			}
			break;
		}
		case OPT_EXIT: free(pids); return op.status;
		}
	}
	if (npids) {
		if (!event || optind != argc - 1) {
			tool_usage_err("hist", "-P takes the event and the histogram: -e SYS:EVENT 'keys=...'");
			free(pids);
			return EXIT_USAGE;
		}
		c = hist_live(pids, npids, event, argv[optind], interval < 0 ? (isatty(1) ? 1 : 0)
									   : interval, output);
		free(pids);
		return c;
	}
	if (output || interval >= 0) {
		tool_usage_err("hist", output ? "-o goes with -P" : "--interval goes with -P");
		return EXIT_USAGE;
	}
	if (optind < argc - 1) {
		tool_usage_err("hist", "one histogram at a time ('keys=...:vals=...')");
		return EXIT_USAGE;
	}
	if (optind == argc - 1)
		text = argv[optind];
	if (text && !event) {
		tool_usage_err("hist", "give the event: -e SYS:EVENT");
		return EXIT_USAGE;
	}
	if (viewopt_open(input, &r, err, sizeof(err)))
		return 1;
	nids = trail_reader_event_ids(r);
	if (!text) { /* the histograms the processes kept */
		nh = saved_list(r, event, &tail);
		if (nh < 0)
			rc = 1;
		else if (!nh) {
			tool_err("%s has no histogram kept by a hist trigger%s%s: give -e EVENT "
				 "'keys=...' to make one from its records",
				 input, event ? " on " : "", event ? event : "");
			rc = 1;
		}
	} else if (!(byid = calloc(nids ? nids : 1, sizeof(*byid)))) {
		rc = 1;
	}
	for (uint32_t id = 0; text && id < nids && !rc; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);
		const struct trail_rhist *s;
		size_t ns = trail_reader_hists(r, &s);
		struct trail_filter_err fe;
		struct hist *H;
		char name[300];

		if (!ev || !trail__spec_match1(event, strlen(event), ev->meta.provider, ev->meta.name))
			continue;
		if (!(H = hist_new(r, ev))) {
			rc = 1;
			break;
		}
		*tail = H;
		tail = &H->next;
		byid[id] = H;
		nh++;
		if (trail_hist_parse(text, &ev->meta, &H->v.h, &fe)) {
			tool_caret("hist", text, (size_t)fe.pos, fe.msg);
			rc = 1;
			break;
		}
		trail_hist_keyer(&H->v.h, &ev->meta, &H->v.k);
		/* the processes kept this very histogram: theirs (it saw
		 * every event, recorded or not) */
		snprintf(name, sizeof(name), "%s:%s", ev->meta.provider, ev->meta.name);
		for (size_t i = 0; i < ns && !H->saved; i++)
			if (!strcmp(s[i].event, name) && s[i].kwords == H->v.k.kwords &&
			    s[i].nvals == H->v.k.nvals && same_spec(&s[i], &H->v.h, &ev->meta))
				H->saved = &s[i];
		if (H->saved)
			continue;
		/* from the records: what one event's records can give (its own
		 * variables, onmax/onchange's save) */
		for (int q = 0; q < H->v.h.nact && !rc; q++)
			if (H->v.h.act[q].action != TRAIL_HA_SAVE) {
				tool_caret("hist", text, H->v.h.act[q].pos,
					   "actions that write events or snapshots run in the "
					   "traced process: record with -T 'hist:...'");
				rc = 1;
			}
		if (!rc && H->v.h.nrefs) {
			tool_caret("hist", text, H->v.h.refs[0].pos,
				   "other events' variables are read in the traced process: record "
				   "with -T 'hist:...' on both events");
			rc = 1;
		}
		if (rc)
			break;
		records = 1;
		if (H->v.h.filter) {
			if (!(H->filter = malloc(sizeof(*H->filter)))) {
				rc = 1;
				break;
			}
			if (trail_filter_compile(H->v.h.filter, &ev->meta, H->filter, &fe)) {
				tool_caret("hist", text, (size_t)(H->v.h.filter - text) + (size_t)fe.pos,
					   fe.msg);
				rc = 1;
				break;
			}
		}
		{
			size_t bytes = trail_hist_bytes(&H->v.h, &H->v.k, 1);

			if (!bytes || !(H->tab = calloc(1, bytes))) {
				tool_err("hist: %u entries: out of memory", H->v.h.size);
				rc = 1;
				break;
			}
			trail_htab_init(H->tab, H->v.h.size, H->v.k.kwords, H->v.k.nvals, H->v.k.nextra,
					H->v.k.naux, 1);
		}
	}
	if (!rc && text && !nh) {
		tool_err("%s has no event matching '%s'", input, event);
		rc = 1;
	}
	while (!rc && records && trail_reader_next(r, &rec) > 0) {
		struct hist *H;

		if (rec.type != TRAIL_RT_EVENT || !rec.event || rec.event->id >= nids ||
		    !(H = byid[rec.event->id]) || !H->tab)
			continue;
		add(H, &rec);
	}
	if (!rc) {
		int k = 0;

		for (struct hist *H = hists; H && !rc; H = H->next) {
			char title[300];

			if (entries(H)) {
				tool_err("out of memory");
				rc = 1;
				break;
			}
			if (!H->v.title && nh > 1) {
				snprintf(title, sizeof(title), "%s:%s", H->ev->meta.provider,
					 H->ev->meta.name);
				H->v.title = title;
			}
			if (k++)
				printf("\n");
			histview_print(stdout, &H->v);
			if (H->v.title == title)
				H->v.title = NULL;
		}
		if (records) {
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

		hist_free(hists);
		hists = n;
	}
	free(byid);
	trail_reader_close(r);
	return rc;
}
