/* SPDX-License-Identifier: MIT */
/*
 * evx.c - a session's extras on an event (evx.h): its filter, compiled
 * here from the spec's text against the event's own fields (the CLI
 * compiled it already, against the formats it could read, for the
 * user's caret; the process binds it to the layout the event really has,
 * which a library loaded later may be the first to show). The record
 * path runs it (record.c's trail__write_ext).
 *
 * Making runs under the control lock, in the control signal handler or
 * at registration: memory comes from mmap, never malloc, and the filter
 * compiler allocates nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <trail/trail.h>

#include "../common/counters.h"
#include "evx.h"
#include "record.h"
#include "synth.h"

int (*trail__wprobe_move)(const char *provider, const char *name, int op, uintptr_t addr);

/* the sessions' extras, each session's in a list (control only) */
static struct evx *all[TRAIL_MAX_SESSIONS];

struct want {
	const struct evrt *rt;
	const char *text; /* the filter: after the pattern, up to the line's end */
	size_t len;
};

/* one "@filter PATTERN TEXT" line: the first whose pattern selects rt */
static int filter_line(const char *v, size_t len, void *arg)
{
	struct want *w = arg;
	const char *sp = memchr(v, ' ', len);

	if (!sp || !trail__spec_match1(v, (size_t)(sp - v), w->rt->provider, w->rt->name))
		return 0;
	w->text = sp + 1;
	w->len = len - (size_t)(sp + 1 - v);
	return 1;
}

struct trigs {
	struct evx *x; /* NULL: count them, and say whether rt is a target */
	const struct evrt *rt;
	unsigned s;
	int n, target, err;
	uint32_t line; /* @trigger lines seen */
};

/* "SYS:EVENT" into d (n bytes, zero-padded; truncated) */
static void event_key(char *d, size_t n, const struct evrt *rt)
{
	size_t o = 0;
	const char *parts[3] = {rt->provider, ":", rt->name};

	memset(d, 0, n);
	for (int i = 0; i < 3; i++)
		for (const char *c = parts[i]; *c && o + 1 < n; c++)
			d[o++] = *c;
}

/* session s's table for the hist trigger on @trigger line `line` of its
 * spec (arena.h, "The histogram area"): the one a process made already,
 * else a new one; NULL when there is no room */
static struct trail_htab *hist_table(unsigned s, const struct evrt *rt, uint32_t line,
				     const struct trail_hist_spec *h,
				     const struct trail_hist_keyer *k, struct trail_hist_dir **dirp)
{
	struct psess *ps = &trail__sess[s];
	struct trail_arena_hdr *hdr = ps->hdr;
	struct trail_hist_dir *dir;
	uint32_t copies = trail_hist_copies(k, hdr->hist_copies ? hdr->hist_copies : 1);
	size_t bytes = trail_hist_bytes(h, k, hdr->hist_copies ? hdr->hist_copies : 1);
	char key[sizeof(dir->event)], name[sizeof(dir->name)];

	if (!hdr->hist_size || !bytes)
		return NULL;
	dir = (struct trail_hist_dir *)(ps->base + hdr->hist_off);
	event_key(key, sizeof(key), rt);
	memset(name, 0, sizeof(name));
	memcpy(name, h->name, strnlen(h->name, sizeof(name) - 1));
	for (uint32_t i = 0; i < TRAIL_HIST_DIR; i++) {
		struct trail_hist_dir *d = &dir[i];

		/* acquire: pairs with the maker's release of READY */
		if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) == TRAIL_HD_READY &&
		    (h->name[0] ? !memcmp(d->name, name, sizeof(name))
				: d->trig == line && !d->name[0] && !memcmp(d->event, key, sizeof(key))) &&
		    d->bytes == bytes && d->off + bytes <= hdr->hist_size) {
			struct trail_htab *t = (void *)(ps->base + hdr->hist_off + d->off);

			if (t->kwords == k->kwords && t->nvals == k->nvals && t->size == h->size &&
			    t->nextra == k->nextra && t->naux == k->naux) {
				*dirp = d;
				return t;
			}
		}
	}
	for (uint32_t i = 0; i < TRAIL_HIST_DIR; i++) {
		struct trail_hist_dir *d = &dir[i];
		uint32_t st = TRAIL_HD_FREE;
		uint64_t off;

		if (!__atomic_compare_exchange_n(&d->state, &st, TRAIL_HD_MAKING, 0, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		d->trig = line;
		memcpy(d->event, key, sizeof(key));
		memcpy(d->name, name, sizeof(name));
		d->paused = h->paused;
		d->kwords = k->kwords;
		d->nvars = h->nvars;
		memset(d->vars, 0, sizeof(d->vars));
		for (uint32_t v = 0; v < h->nvars && v < sizeof(d->vars) / sizeof(d->vars[0]); v++)
			memcpy(d->vars[v], h->vars[v].name, strnlen(h->vars[v].name, sizeof(d->vars[v]) - 1));
		off = __atomic_fetch_add(&hdr->hist_used, bytes, __ATOMIC_RELAXED);
		if (off + bytes > hdr->hist_size) {
			__atomic_store_n(&d->state, TRAIL_HD_FAILED, __ATOMIC_RELEASE);
			break;
		}
		d->off = off;
		d->bytes = bytes;
		trail_htab_init(ps->base + hdr->hist_off + off, h->size, k->kwords, k->nvals, k->nextra,
				k->naux, copies);
		/* release: the table and the slot before READY */
		__atomic_store_n(&d->state, TRAIL_HD_READY, __ATOMIC_RELEASE);
		*dirp = d;
		return (struct trail_htab *)(ps->base + hdr->hist_off + off);
	}
	__atomic_fetch_add(&hdr->hist_nomem, 1, __ATOMIC_RELAXED);
	return NULL;
}

struct reads {
	const struct trail_hist_spec *h;
	uint32_t line, at, mask;
};

static int reads_line(const char *v, size_t len, void *arg)
{
	struct reads *r = arg;

	if (r->at++ == r->line)
		return 0;
	for (uint8_t i = 0; i < r->h->nvars; i++) {
		const char *name = r->h->vars[i].name;
		size_t nl = strlen(name);

		for (const char *p = memchr(v, '$', len); p; p = memchr(p + 1, '$', len - (size_t)(p + 1 - v)))
			if ((size_t)(v + len - (p + 1)) >= nl && !memcmp(p + 1, name, nl) &&
			    (p + 1 + nl == v + len || !((p[1 + nl] >= 'a' && p[1 + nl] <= 'z') ||
							(p[1 + nl] >= 'A' && p[1 + nl] <= 'Z') ||
							(p[1 + nl] >= '0' && p[1 + nl] <= '9') ||
							p[1 + nl] == '_')))
				r->mask |= 1u << i;
	}
	return 0;
}

/* the variables of h (the spec's @trigger line `line`) that another
 * trigger names ($NAME): those its entries keep; the others are only
 * this update's */
static uint32_t read_elsewhere(const char *spec, uint32_t line, const struct trail_hist_spec *h)
{
	struct reads r = {h, line, 0, 0};

	trail__spec_opts(spec, "trigger", reads_line, &r);
	return r.mask;
}

/* a hist trigger of g->x from the text t->hist: its spec, `if`, key,
 * the synthetic events its actions write, its table */
static int hist_make(struct trigs *g, struct evx_trig *tr, const struct trail_trigger *t)
{
	struct trail_hist_spec h;
	struct trail_filter_err e;
	const char *spec = trail__sess[g->s].spec;

	if (trail_hist_parse(t->hist, &g->x->meta, &h, &e))
		return -EBADMSG;
	if (h.filter && trail_filter_compile(h.filter, &g->x->meta, &tr->cond, &e))
		return -EBADMSG;
	tr->has_cond = h.filter != NULL;
	trail_hist_keyer(&h, &g->x->meta, &tr->keyer);
	tr->keyer.vstore = read_elsewhere(spec, g->line - 1, &h);
	memcpy(tr->refs, h.refs, sizeof(tr->refs));
	for (int q = 0; q < h.nact; q++) {
		const struct trail_hist_action *a = &h.act[q];
		const struct trail_synth *def;

		if (a->handler == TRAIL_HH_ONMATCH)
			memcpy(tr->onmatch, a->event, sizeof(tr->onmatch));
		if (a->action != TRAIL_HA_TRACE)
			continue;
		/* its synthetic event, params matching its fields */
		if (!(tr->synth[q] = trail__synth_find(spec, a->synth)))
			return -EBADMSG;
		def = trail__synth_def(tr->synth[q]);
		if (def->nfields != a->nparams)
			return -EBADMSG;
		for (int j = 0; j < a->nparams; j++)
			if (def->f[j].str != (a->p[j].kind == TRAIL_HX_FIELD && h.xf[a->p[j].idx].str))
				return -EBADMSG;
		tr->after = 1;
	}
	tr->tab = hist_table(g->s, g->rt, g->line - 1 /* (this line's) */, &h, &tr->keyer,
			     &tr->dir);
	return 0;
}

/* an objtrace trigger: its FIELD read as a one-number key (hist.c's
 * keyer); the fault-safe reads' guard on (its objects' values) */
static int obj_make(struct trigs *g, struct evx_trig *tr, const struct trail_trigger *t)
{
	char text[80];
	struct trail_hist_spec h;
	struct trail_filter_err e;

	snprintf(text, sizeof(text), "keys=%s", t->obj_field);
	if (trail_hist_parse(text, &g->x->meta, &h, &e) || h.keys[0].str ||
	    h.keys[0].field >= TRAIL_FILTER_PID)
		return -EBADMSG;
	trail_hist_keyer(&h, &g->x->meta, &tr->keyer);
	return trail__signals_guard_faults() < 0 ? -EIO : 0;
}

/* does the enable/disable_event of t name rt? */
static int targets(const struct trail_trigger *t, const struct evrt *rt)
{
	return (t->cmd == TRAIL_TRIG_ENABLE_EVENT || t->cmd == TRAIL_TRIG_DISABLE_EVENT) &&
	       trail__spec_match1(t->target, strlen(t->target), rt->provider, rt->name);
}

static int trigger_line(const char *v, size_t len, void *arg)
{
	struct trigs *g = arg;
	char buf[TRAIL_FILTER_MAX_TEXT];
	struct trail_trigger t;
	size_t plen;

	g->line++;
	if (trail_trigger_spec_line(v, len, buf, &plen, &t)) {
		g->err = -EBADMSG;
		return 1;
	}
	g->target |= targets(&t, g->rt);
	if (!trail__spec_match1(v, plen, g->rt->provider, g->rt->name))
		return 0;
	/* (the counters' own record reads none: it would write itself) */
	if (t.cmd == TRAIL_TRIG_COUNTERS && !strcmp(g->rt->provider, TRAIL_SYNTH_PROVIDER) &&
	    !strcmp(g->rt->name, TRAIL_CTR_EVENT))
		return 0;
	if (g->n == TRAIL_EVX_TRIGS) {
		g->err = -E2BIG;
		return 1;
	}
	if (g->x) {
		struct evx_trig *tr = &g->x->trig[g->n];
		struct trail_filter_err e;

		tr->t = t;
		tr->left = t.count;
		tr->after = t.cmd == TRAIL_TRIG_STACKTRACE || t.cmd == TRAIL_TRIG_COUNTERS;
		if (t.cmd == TRAIL_TRIG_COUNTERS &&
		    !(tr->synth[0] = trail__synth_find(trail__sess[g->s].spec, TRAIL_CTR_EVENT))) {
			g->err = -EBADMSG; /* (the CLI defines it with the trigger) */
			return 1;
		}
		if (t.cmd == TRAIL_TRIG_HIST) {
			tr->t.hist = NULL; /* (buf's) */
			if ((g->err = hist_make(g, tr, &t)))
				return 1;
		} else {
			if ((t.cmd == TRAIL_TRIG_OBJTRACE ||
			     ((t.cmd == TRAIL_TRIG_SET_WPROBE || t.cmd == TRAIL_TRIG_CLEAR_WPROBE) &&
			      t.obj_field[0])) &&
			    (g->err = obj_make(g, tr, &t)))
				return 1;
			if (t.filter && trail_filter_compile(t.filter, &g->x->meta, &tr->cond, &e)) {
				g->err = -EBADMSG;
				return 1;
			}
			tr->has_cond = t.filter != NULL;
		}
		tr->t.filter = NULL; /* (buf's) */
	}
	g->n++;
	return 0;
}

/* o into tr's targets if tr's enable/disable_event names o's event */
static void add_target(struct evx_trig *tr, struct evx *o)
{
	if (!o->target || !targets(&tr->t, o->rt) || tr->ntargets == TRAIL_EVX_TARGETS)
		return;
	tr->targets[tr->ntargets] = o;
	/* release: pairs with the running trigger's acquire */
	__atomic_store_n(&tr->ntargets, tr->ntargets + 1, __ATOMIC_RELEASE);
}

/* x among the session's extras: its event into the targets of the
 * triggers that name it (its own too), the events x's triggers name into
 * theirs */
static void link_targets(unsigned s, struct evx *x)
{
	x->next = all[s];
	all[s] = x;
	for (struct evx *o = all[s]; o; o = o->next) {
		for (uint16_t i = 0; i < o->ntrig; i++)
			add_target(&o->trig[i], x);
		for (uint16_t i = 0; o != x && i < x->ntrig; i++)
			add_target(&x->trig[i], o);
	}
}

static void triggers_run(struct evx *x, struct writer *w, unsigned d, unsigned s,
			 const void *payload, uint32_t len, int after, struct trig_clock *tc);

int trail__evx_make(unsigned s, const char *spec, struct evrt *rt, int sel)
{
	struct want want = {.rt = rt};
	struct trigs g = {.rt = rt, .s = s};
	struct trail_filter_err e;
	char text[TRAIL_FILTER_MAX_TEXT];
	const char *why;
	struct evx *x;
	size_t size = (sizeof(*x) + 4095) & ~(size_t)4095;
	int filt, nrv;

	if (rt->x[s])
		return 1;
	filt = sel && trail__spec_opts(spec, "filter", filter_line, &want);
	trail__spec_opts(spec, "trigger", trigger_line, &g);
	if (g.err)
		return g.err;
	if ((nrv = trail__rv_make(s, spec, rt, NULL)) < 0)
		return nrv;
	if (!filt && !g.n && !g.target && !nrv)
		return 0;
	if (filt && want.len >= sizeof(text))
		return -EBADMSG;
	x = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x == MAP_FAILED)
		return -ENOMEM;
	x->size = size;
	x->rt = rt;
	x->how = sel ? EVX_REC : 0;
	x->target = (uint8_t)g.target;
	if (trail__meta_parse(rt->meta, rt->meta_size, &x->meta, &why))
		goto bad;
	if (filt) {
		memcpy(text, want.text, want.len);
		text[want.len] = '\0';
		if (trail_filter_compile(text, &x->meta, &x->filter, &e))
			goto bad;
		x->how |= EVX_FILT;
		if (x->filter.fast && !x->meta.variable && x->filter.fast_len <= x->meta.fixed_len)
			x->how |= EVX_FAST;
	}
	g.x = x;
	g.n = 0;
	g.line = 0;
	trail__spec_opts(spec, "trigger", trigger_line, &g);
	if (g.err)
		goto bad;
	x->ntrig = (uint16_t)g.n;
	if (nrv && trail__rv_make(s, spec, rt, x) < 0)
		goto bad;
	if (x->ntrig || x->nrv)
		x->how |= EVX_TRIG;
	for (uint16_t i = 0; i < x->ntrig; i++)
		x->after |= x->trig[i].after;
	if (x->ntrig || x->nrv)
		__atomic_store_n(&trail__trigger_hook, triggers_run, __ATOMIC_RELEASE);
	link_targets(s, x);
	/* release: the extras before the pointer; the status word's bits
	 * come after (enable_in) */
	__atomic_store_n(&rt->x[s], x, __ATOMIC_RELEASE);
	return 1;
bad:
	munmap(x, size);
	return -EBADMSG;
}

void trail__evx_free(unsigned s, struct evrt *rt)
{
	struct evx *x = rt->x[s];
	unsigned k;

	if (!x)
		return;
	__atomic_store_n(&rt->x[s], NULL, __ATOMIC_RELAXED);
	for (struct evx **p = &all[s]; *p; p = &(*p)->next)
		if (*p == x) {
			*p = x->next;
			break;
		}
	for (k = 0; k < TRAIL_MAX_SESSIONS && !rt->x[k]; k++)
		;
	if (k == TRAIL_MAX_SESSIONS)
		__atomic_fetch_and(rt->ev->state, ~TRAIL_STATE_EXT, __ATOMIC_RELAXED);
	munmap(x, x->size);
}

/* ------------------------------------------------------------- triggers */

/* a stacktrace trigger's record: ftrace:user_stack, u16 count, then the
 * return addresses (fstack.c); at most 64 (1 KiB on the stack, which
 * may be a signal handler's) */
#define STACK_MAX 64

TRAIL__DESCRIBE_ALONE(ftrace, user_stack, TRAIL_ARGS(const uint64_t *, ips, uint16_t, n),
		      TRAIL_FIELDS(trail_field_seq_hex(caller, ips, n)), )

static __attribute__((noinline)) void stacktrace(struct writer *w, unsigned d, unsigned s)
{
	struct trail_event *ev = TRAIL__DESC(ftrace, user_stack);
	struct evrt *rt = ev->rt;
	uint64_t ips[STACK_MAX];
	uint8_t buf[2 + sizeof(ips)];
	uint16_t n = 0;
	uint32_t cpu;
	uint64_t ts;

	if (!rt || !(__atomic_load_n(ev->state, __ATOMIC_ACQUIRE) & (1u << s)))
		return;
	if (trail__ustack_hook)
		n = (uint16_t)trail__ustack_hook(ips, STACK_MAX);
	memcpy(buf, &n, 2);
	memcpy(buf + 2, ips, n * 8u);
	ts = now_cpu(&cpu);
	write_sessions(ev, rt, w, d, 1u << s, buf, 2u + n * 8u, ts, cpu);
}

/* the writers' clock ticks in nanoseconds (the arena header's
 * conversion), for common_timestamp */
static uint64_t ticks_ns(const struct trail_arena_hdr *hdr, uint64_t t)
{
	if (!hdr->clk_mult)
		return t;
	return hdr->clk_ns0 + (uint64_t)((unsigned __int128)(t - hdr->clk_ticks0) * hdr->clk_mult >>
					 hdr->clk_shift);
}

/* ref i of tr (another event's variable): its table, found in session
 * s's histogram directory by its name (and event; onmatch()'s first),
 * with keys like tr's. 0, or -1: no table has it yet */
static int ref_find(unsigned s, struct evx_trig *tr, uint8_t i)
{
	struct psess *ps = &trail__sess[s];
	struct trail_arena_hdr *hdr = ps->hdr;
	const struct trail_hist_ref *r = &tr->refs[i];
	struct trail_hist_dir *dir = (struct trail_hist_dir *)(ps->base + hdr->hist_off);

	for (int pass = 0; pass < 2; pass++) {
		const char *want = r->event[0] ? r->event : pass ? NULL : tr->onmatch;

		if (pass && r->event[0])
			break;
		for (uint32_t q = 0; q < TRAIL_HIST_DIR; q++) {
			struct trail_hist_dir *d = &dir[q];
			struct trail_htab *t;

			/* acquire: pairs with the maker's release of READY */
			if (__atomic_load_n(&d->state, __ATOMIC_ACQUIRE) != TRAIL_HD_READY ||
			    d->kwords != tr->keyer.kwords || (want && strncmp(d->event, want, sizeof(d->event))) ||
			    d->off + d->bytes > hdr->hist_size)
				continue;
			t = (struct trail_htab *)(ps->base + hdr->hist_off + d->off);
			if (t == tr->tab || t->kwords != tr->keyer.kwords)
				continue;
			for (uint32_t v = 0; v < d->nvars && v < 16; v++)
				if (!strncmp(d->vars[v], r->name, sizeof(d->vars[v])) &&
				    1 + v < t->nextra) {
					tr->refvar[i] = (uint8_t)v;
					/* release: refvar before the table it is for */
					__atomic_store_n(&tr->reft[i], t, __ATOMIC_RELEASE);
					return 0;
				}
		}
	}
	return -1;
}

struct act {
	struct evx_trig *tr;
	struct writer *w;
	unsigned d, s;
};

static void act_trace(void *arg, unsigned q, const uint64_t *vals, const char *const *strs,
		      const uint16_t *slen)
{
	struct act *a = arg;

	if (a->tr->synth[q])
		trail__synth_emit(a->tr->synth[q], a->w, a->d, a->s, vals, strs, slen);
}

/* the recorder writes it (finish.c), one file for the requests it finds */
static void act_snapshot(void *arg, unsigned q)
{
	(void)q;
	__atomic_fetch_add(&trail__sess[((struct act *)arg)->s].hdr->snapshots, 1, __ATOMIC_RELEASE);
}

/* a hist trigger's update: variables, the record's key counted, its
 * vals added, actions */
static void hist_update(struct evx_trig *tr, struct writer *w, unsigned d, unsigned s,
			const void *payload, uint32_t len, struct trig_clock *tc)
{
	const struct trail_hist_keyer *k = &tr->keyer;
	struct trail_filter_ctx c = {.pid = (uint32_t)trail__pid, .tid = w ? (uint32_t)w->tid : 0};
	struct act a = {tr, w, d, s};
	struct trail_hist_io io; /* (reft, refvar: only the first nrefs) */
	char comm[17];
	uint32_t cpu;

	if (!tr->tab || __atomic_load_n(&tr->dir->paused, __ATOMIC_RELAXED))
		return;
	io.trace = act_trace;
	io.snapshot = act_snapshot;
	io.arg = &a;
	for (uint8_t i = 0; i < k->nrefs; i++) {
		/* acquire: pairs with ref_find's release */
		io.reft[i] = __atomic_load_n(&tr->reft[i], __ATOMIC_ACQUIRE);
		if (!io.reft[i]) {
			if (ref_find(s, tr, i))
				return; /* (nothing to match yet) */
			io.reft[i] = tr->reft[i];
		}
		io.refvar[i] = tr->refvar[i];
	}
	if (k->clock) { /* the event's time: its record's */
		if (!tc->have) {
			tc->ts = now_cpu(&tc->cpu);
			tc->have = 1;
		}
		c.ts = ticks_ns(trail__sess[s].hdr, tc->ts);
		c.cpu = cpu = tc->cpu;
	} else {
		cpu = this_cpu();
	}
	if (k->comm) {
		memset(comm, 0, sizeof(comm));
		prctl(PR_GET_NAME, comm, 0, 0, 0);
		c.comm = comm;
	}
	trail_hist_update(k, tr->tab, cpu, payload, len, &c, &io);
}

/* a counters trigger: the thread's counters now, as its synthetic event
 * (after the event's record) */
static __attribute__((noinline)) void counters(struct evx_trig *tr, struct writer *w, unsigned d,
					       unsigned s)
{
	uint64_t vals[TRAIL_CTR_MAX] = {0};

	if (!w)
		return;
	for (uint8_t i = 0; i < tr->t.nctr; i++)
		trail__writer_counter(w, tr->t.ctr[i], &vals[i]);
	trail__synth_emit(tr->synth[0], w, d, s, vals, NULL, NULL);
}

/* may this run of tr go (its count not spent)? */
static int take(struct evx_trig *tr)
{
	int32_t left = __atomic_load_n(&tr->left, __ATOMIC_RELAXED);

	while (left > 0)
		if (__atomic_compare_exchange_n(&tr->left, &left, left - 1, 0, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return 1;
	return left < 0;
}

/* record.c's trail__trigger_hook: session s's triggers on the event
 * (payload, len), before its record (after: 0) or after it (1: stack
 * traces); in the record path at level d */
static void triggers_run(struct evx *x, struct writer *w, unsigned d, unsigned s,
			 const void *payload, uint32_t len, int after, struct trig_clock *tc)
{
	/* the monitors first: a violation's traceoff or snapshot takes in
	 * the event itself, as the kernel's reactors run in its tracepoint */
	if (x->nrv && !after)
		trail__rv_run(x, w, d, s, payload, len);
	for (uint16_t i = 0; i < x->ntrig; i++) {
		struct evx_trig *tr = &x->trig[i];

		if (tr->after != after)
			continue;
		if (tr->has_cond && !trail__filter_pass(&tr->cond, w, payload, len))
			continue;
		if (!take(tr))
			continue;
		switch (tr->t.cmd) {
		case TRAIL_TRIG_TRACEON:
			trail__session_pause(s, 0);
			break;
		case TRAIL_TRIG_TRACEOFF:
			trail__session_pause(s, 1);
			break;
		case TRAIL_TRIG_STACKTRACE:
			stacktrace(w, d, s);
			break;
		case TRAIL_TRIG_HIST:
			hist_update(tr, w, d, s, payload, len, tc);
			break;
		case TRAIL_TRIG_OBJTRACE: {
			uint64_t key[TRAIL_HTAB_MAX_KWORDS], vals[TRAIL_HTAB_MAX_VALS];
			struct trail_filter_ctx c = {.pid = (uint32_t)trail__pid};

			if (trail_hist_key(&tr->keyer, payload, len, &c, key, vals))
				break;
			if (tr->t.obj_remove)
				trail__obj_remove(s, key[0]);
			else
				trail__obj_add(s, key[0], tr->t.obj_off, tr->t.obj_size);
			break;
		}
		case TRAIL_TRIG_SET_WPROBE:
		case TRAIL_TRIG_CLEAR_WPROBE: { /* the wprobe "GRP:EVENT" moved */
			uint64_t key[TRAIL_HTAB_MAX_KWORDS], vals[TRAIL_HTAB_MAX_VALS], addr = 0;
			struct trail_filter_ctx c = {.pid = (uint32_t)trail__pid};
			char prov[TRAIL_TRIG_MAX_TARGET];
			size_t pl = strcspn(tr->t.target, ":");
			int op = tr->t.cmd == TRAIL_TRIG_SET_WPROBE ? TRAIL_FWATCH_SET : TRAIL_FWATCH_CLEAR;
			int (*move)(const char *, const char *, int, uintptr_t) =
				__atomic_load_n(&trail__wprobe_move, __ATOMIC_ACQUIRE);

			if (tr->t.obj_field[0]) {
				if (trail_hist_key(&tr->keyer, payload, len, &c, key, vals))
					break;
				addr = key[0] + (uint64_t)tr->t.obj_off;
				if (op == TRAIL_FWATCH_CLEAR)
					op = TRAIL_FWATCH_CLEAR_IF;
			}
			memcpy(prov, tr->t.target, pl);
			prov[pl] = '\0';
			if (move) /* (none armed yet: nothing to move) */
				move(prov, tr->t.target + pl + 1, op, (uintptr_t)addr);
			break;
		}
		case TRAIL_TRIG_COUNTERS:
			counters(tr, w, d, s);
			break;
		case TRAIL_TRIG_SNAPSHOT: /* the recorder writes it (finish.c) */
			__atomic_fetch_add(&trail__sess[s].hdr->snapshots, 1, __ATOMIC_RELEASE);
			break;
		default: { /* enable_event, disable_event */
			uint32_t n = __atomic_load_n(&tr->ntargets, __ATOMIC_ACQUIRE);

			for (uint32_t k = 0; k < n; k++)
				if (tr->t.cmd == TRAIL_TRIG_ENABLE_EVENT)
					__atomic_fetch_or(&tr->targets[k]->how, EVX_REC,
							  __ATOMIC_RELAXED);
				else
					__atomic_fetch_and(&tr->targets[k]->how, ~EVX_REC,
							   __ATOMIC_RELAXED);
		}
		}
	}
}

