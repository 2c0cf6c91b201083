/* SPDX-License-Identifier: MIT */
/*
 * cmd-rv.c - `trail rv check -i FILE MODEL.dot`: runtime verification
 * offline, the kernel's RV deterministic-automaton monitors (their DOT
 * models, src/common/rv.c) replayed over a recorded trace in time
 * order: one automaton per thread (default), per process, or per value
 * of a field (--per FIELD: per object); an event of the model's alphabet
 * with no transition from the instance's state is a violation, said as
 * the kernel's printk reactor says it ("rv: monitor wip does not allow
 * event preempt_enable on state non_preemptive"), and the event is
 * refused: the instance stays in its state (the kernel's monitor resets
 * and waits for its start event). Events the model does not name pass
 * by.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../src/common/filter.h"
#include "../../src/common/rv.h"
#include "../../src/common/spec.h"
#include "../../src/tracefile/reader.h"
#include "keymap.h"
#include "opt.h"
#include "tool.h"

enum { O_PER = OPT_LONG_ID, O_REACTOR };

static const struct opt_cmd rv_opts = {
	.name = "rv",
	.intro = "Usage: trail rv check [-i FILE] [--per thread|process|FIELD] MODEL.dot\n"
		 "       trail rv list [-i FILE | MODEL.dot...]\n"
		 "\n"
		 "Runtime verification: a deterministic automaton in the kernel's rvgen DOT\n"
		 "format (states; \"__init_S\" -> S, the initial state; doublecircle,\n"
		 "accepting; edges labelled with events: SYS:EVENT or EVENT, a filter in\n"
		 "brackets: app:lock[id == 3]) checked against a recording, in time order.\n"
		 "Each violation is printed as the kernel's printk reactor prints it; exit\n"
		 "status 1 when there is one. 'trail record --rv MODEL.dot' checks it in\n"
		 "the process instead. list: the monitors a recording ran (with its\n"
		 "rv:error records a monitor), or what models say (states, transitions).\n",
	.col = 28,
	.opts = (const struct opt[]){
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat)", 0, "a file"},
		{0, "per", OPT_REQUIRED, "WHAT", "an automaton per thread (default), process,\n"
						  "or value of this field", O_PER, "thread, process or a field"},
		{0, "reactor", OPT_REQUIRED, "R", "printk (each violation, default) or nop (the\n"
						  "counts only)", O_REACTOR, "printk or nop"},
		OPT_HELP_ROW,
		{0},
	},
};

struct lab { /* an event of the model, on one event of the trace */
	int ev;                 /* the model's event */
	struct trail_filter *f; /* NULL: none */
	struct lab *next;
};

struct inst {
	struct keyent k;
	int state;
};

static int check(const char *input, const char *model_path, const char *per, int printk)
{
	struct trail_rv_model *m = malloc(sizeof(*m));
	struct trail_reader *r = NULL;
	struct lab **byid = NULL;
	int *keyfield = NULL, *used = NULL, rc = 1, mode;
	uint64_t events = 0, violations = 0;
	struct keymap T = {.esize = sizeof(struct inst)};
	struct trail_record rec;
	uint32_t nids;
	char err[512];

	mode = !strcmp(per, "thread") ? 0 : !strcmp(per, "process") ? 1 : 2;
	if (!m || trail_rv_load(model_path, m, err, sizeof(err))) {
		tool_err("rv: %s", m ? err : "out of memory");
		free(m);
		return 1;
	}
	if (trail_reader_open(input, &r, err, sizeof(err))) {
		tool_err("rv: %s", err);
		goto out;
	}
	nids = trail_reader_event_ids(r);
	byid = calloc(nids + 1, sizeof(*byid));
	keyfield = calloc(nids + 1, sizeof(*keyfield));
	used = calloc((size_t)m->nevents, sizeof(*used));
	if (!byid || !keyfield || !used)
		goto out;
	/* each label on the trace's events it names, its filter compiled */
	for (uint32_t id = 0; id < nids; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);

		if (!ev)
			continue;
		keyfield[id] = -1;
		for (int k = m->nevents - 1; k >= 0; k--) {
			const char *filter, *lb = m->events[k];
			size_t pl, fl;
			int hit;
			struct lab *L;

			trail_rv_label(lb, &pl, &filter, &fl);
			hit = memchr(lb, ':', pl) ? trail__spec_match1(lb, pl, ev->meta.provider, ev->meta.name)
						  : trail__glob(lb, pl, ev->meta.name, strlen(ev->meta.name));
			if (!hit)
				continue;
			if (!(L = calloc(1, sizeof(*L))))
				goto out;
			L->ev = k;
			L->next = byid[id];
			byid[id] = L;
			used[k] = 1;
			if (fl) {
				char ftext[TRAIL_RV_NAME_MAX];
				struct trail_filter_err fe;

				snprintf(ftext, sizeof(ftext), "%.*s", (int)fl, filter);
				if (!(L->f = malloc(sizeof(*L->f))) ||
				    trail_filter_compile(ftext, &ev->meta, L->f, &fe)) {
					char what[300];

					snprintf(what, sizeof(what), "rv: %s: event %s, for %s:%s", model_path, lb,
						 ev->meta.provider, ev->meta.name);
					if (L->f)
						tool_caret(what, lb, (size_t)(filter - lb) + (size_t)fe.pos, fe.msg);
					goto out;
				}
			}
			if (mode == 2 && keyfield[id] < 0) {
				uint32_t i;

				for (i = 0; i < ev->meta.nfields && strcmp(ev->meta.fields[i].name, per); i++)
					;
				if (i == ev->meta.nfields) {
					tool_err("rv: per %s: event %s:%s has no field %s", per, ev->meta.provider,
						 ev->meta.name, per);
					goto out;
				}
				keyfield[id] = (int)i;
			}
		}
	}
	for (int k = 0; k < m->nevents; k++)
		if (!used[k]) {
			tool_err("rv: %s: event %s is in none of %s's events ('trail report --stat -i %s' "
				 "lists them)", model_path, m->events[k], input, input);
			goto out;
		}
	while (trail_reader_next(r, &rec) > 0) {
		struct lab *L;
		struct inst *in;
		uint64_t key;
		int nx;

		if (rec.type != TRAIL_RT_EVENT || !rec.event || rec.event->id >= nids ||
		    !(L = byid[rec.event->id]))
			continue;
		for (; L; L = L->next) {
			struct trail_filter_ctx c = {.pid = rec.stream->pid, .tid = rec.stream->tid,
						     .cpu = rec.cpu, .ts = rec.ts_ns, .comm = rec.stream->comm};

			if (!L->f || trail_filter_match(L->f, rec.payload, rec.len, &c))
				break;
		}
		if (!L)
			continue;
		if (mode == 0)
			key = rec.stream->tid;
		else if (mode == 1)
			key = rec.stream->pid;
		else if (keymap_field(&rec, keyfield[rec.event->id], &key))
			continue;
		nx = (int)T.n;
		if (!(in = keymap_get(&T, key)))
			goto out;
		if ((int)T.n != nx) /* (a new instance: at the initial state) */
			in->state = m->init;
		events++;
		nx = m->next[in->state][L->ev];
		if (nx >= 0) {
			in->state = nx;
			continue;
		}
		violations++;
		if (printk) {
			printf("%16s-%-7u [%03d] %6llu.%06llu: rv: monitor %s does not allow event %s on state %s",
			       rec.stream->comm, rec.stream->tid, rec.cpu == ~0u ? -1 : (int)rec.cpu,
			       (unsigned long long)(rec.ts_ns / 1000000000ull),
			       (unsigned long long)(rec.ts_ns % 1000000000ull / 1000), m->name, m->events[L->ev],
			       m->states[in->state]);
			if (mode == 2)
				printf(" (%s %llu)", per, (unsigned long long)key);
			putchar('\n');
		}
		/* (the event is refused: the instance stays in its state,
		 * where the kernel's monitor resets and waits for its start) */
	}
	{
		size_t open = 0;

		for (size_t i = 0; i < T.cap; i++) {
			const struct inst *x = keymap_at(&T, i);

			open += x && !(m->accepting >> x->state & 1);
		}
		printf("rv: monitor %s: %llu events, %llu violation%s, %zu instance%s (per %s)", m->name,
		       (unsigned long long)events, (unsigned long long)violations, violations == 1 ? "" : "s",
		       T.n, T.n == 1 ? "" : "s", per);
		if (m->accepting && open)
			printf(", %zu left in a state that is not accepting", open);
		putchar('\n');
	}
	{
		const char *const *msgs;
		size_t ne = trail_reader_errors(r, &msgs);

		for (size_t i = 0; i < ne; i++)
			tool_err("%s: %s", input, msgs[i]);
	}
	rc = violations ? 1 : 0;
out:
	for (uint32_t id = 0; byid && id < trail_reader_event_ids(r); id++)
		while (byid[id]) {
			struct lab *n = byid[id]->next;

			free(byid[id]->f);
			free(byid[id]);
			byid[id] = n;
		}
	free(byid);
	free(keyfield);
	free(used);
	keymap_free(&T);
	if (r)
		trail_reader_close(r);
	free(m);
	return rc;
}

/* a model: its states (initial, accepting) and transitions */
static int list_model(const char *path)
{
	struct trail_rv_model *m = malloc(sizeof(*m));
	char err[600];

	if (!m || trail_rv_load(path, m, err, sizeof(err))) {
		tool_err("rv: %s", m ? err : "out of memory");
		free(m);
		return 1;
	}
	printf("%s: %d state%s, %d event%s (%s)\n", m->name, m->nstates, m->nstates == 1 ? "" : "s",
	       m->nevents, m->nevents == 1 ? "" : "s", path);
	for (int s = 0; s < m->nstates; s++) {
		int any = 0;

		printf("  %s%s%s\n", m->states[s], s == m->init ? " (initial)" : "",
		       m->accepting >> s & 1 ? " (accepting)" : "");
		for (int e = 0; e < m->nevents; e++)
			if (m->next[s][e] >= 0) {
				printf("    %s -> %s\n", m->events[e], m->states[m->next[s][e]]);
				any = 1;
			}
		if (!any)
			printf("    (no event leaves it)\n");
	}
	free(m);
	return 0;
}

/* the monitors a recording ran (its INFO's rvK), and each one's
 * violations (rv:error records) */
static int list_file(const char *input)
{
	struct trail_reader *r;
	struct trail_record rec;
	char err[512], key[16], names[TRAIL_RV_MONITORS][TRAIL_RV_NAME_MAX];
	uint64_t count[TRAIL_RV_MONITORS] = {0}, other = 0;
	int n = 0;

	if (trail_reader_open(input, &r, err, sizeof(err))) {
		tool_err("rv: %s", err);
		return 1;
	}
	for (; n < TRAIL_RV_MONITORS; n++) {
		const char *v;

		snprintf(key, sizeof(key), "rv%d", n + 1);
		if (!(v = trail_reader_info(r, key)))
			break;
		snprintf(names[n], sizeof(names[n]), "%.*s", (int)strcspn(v, " "), v);
	}
	while (n && trail_reader_next(r, &rec) > 0) {
		struct trail_fval fv;
		uint32_t off = 0;
		int k;

		if (rec.type != TRAIL_RT_EVENT || !rec.event || strcmp(rec.event->meta.provider, "rv") ||
		    strcmp(rec.event->meta.name, "error"))
			continue;
		/* (its second field: the monitor) */
		if (!trail_field_at(rec.event, 0, rec.payload, rec.len, &off, &fv) ||
		    !trail_field_at(rec.event, 1, rec.payload, rec.len, &off, &fv) ||
		    fv.f->kind != TRAIL_FK_STRING) {
			other++;
			continue;
		}
		for (k = 0; k < n && (strlen(names[k]) != fv.count || memcmp(names[k], fv.data, fv.count));
		     k++)
			;
		if (k < n)
			count[k]++;
		else
			other++;
	}
	if (!n)
		printf("# %s: no monitor ran (trail record --rv MODEL.dot)\n", input);
	for (int k = 0; k < n; k++) {
		snprintf(key, sizeof(key), "rv%d", k + 1);
		printf("%s: %llu violation%s\n", trail_reader_info(r, key), (unsigned long long)count[k],
		       count[k] == 1 ? "" : "s");
	}
	if (other)
		printf("# %llu rv:error records of no monitor listed\n", (unsigned long long)other);
	trail_reader_close(r);
	return 0;
}

int cmd_rv(int argc, char **argv)
{
	const char *input = "trace.dat", *per = "thread";
	struct opt_parser op;
	int id, printk = 1;

	if (argc >= 2 && !strcmp(argv[1], "list")) {
		int rc = 0, file = 0;

		opt_init(&op, &rv_opts, argc - 1, argv + 1);
		while ((id = opt_next(&op)) != OPT_END) {
			if (id == OPT_EXIT)
				return op.status;
			if (id == 'i') {
				input = optarg;
				file = 1;
			} else {
				tool_usage_err("rv", "list takes -i FILE or models");
				return EXIT_USAGE;
			}
		}
		if (optind < argc - 1 && file) {
			tool_usage_err("rv", "list: -i FILE or models, not both");
			return EXIT_USAGE;
		}
		if (optind == argc - 1)
			return list_file(input);
		for (int i = optind; i < argc - 1; i++)
			rc |= list_model(argv[1 + i]);
		return rc;
	}
	if (argc < 2 || strcmp(argv[1], "check")) {
		if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
			opt_init(&op, &rv_opts, argc, argv);
			return opt_next(&op) == OPT_EXIT ? op.status : 0;
		}
		tool_usage_err("rv", "'trail rv check -i FILE MODEL.dot' or 'trail rv list'");
		return EXIT_USAGE;
	}
	argv++;
	argc--;
	opt_init(&op, &rv_opts, argc, argv);
	while ((id = opt_next(&op)) != OPT_END) {
		switch (id) {
		case OPT_EXIT:
			return op.status;
		case 'i': input = optarg; break;
		case O_PER: per = optarg; break;
		case O_REACTOR:
			if (strcmp(optarg, "printk") && strcmp(optarg, "nop")) {
				tool_usage_err("rv", "--reactor %s: printk or nop", optarg);
				return EXIT_USAGE;
			}
			printk = optarg[0] == 'p';
			break;
		}
	}
	if (optind + 1 != argc) {
		tool_usage_err("rv", "one MODEL.dot is needed");
		return EXIT_USAGE;
	}
	return check(input, argv[optind], per, printk);
}
