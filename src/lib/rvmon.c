/* SPDX-License-Identifier: MIT */
/*
 * rvmon.c - runtime verification in the traced process (evx.h): a
 * session's monitors, the deterministic automata of its "@rv" lines
 * (rv.h: the CLI parsed the DOT model), checked on every event of their
 * alphabet, recorded or not, before its record.
 *
 * An automaton per instance: per thread (its tid), per process (its pid:
 * a forked child starts at the initial state, as a new process does in
 * `trail rv check`), or per value of an event field (an object). The
 * instances are a hash table of the monitor's, open addressing, never
 * shrunk: a slot is claimed by a CAS on its tag (0 free, 1 being made,
 * 2 made), its state moved by a CAS from the state it was read in, so
 * threads sharing an instance (per process, per object) each take one
 * transition, in some order. A slot another thread is making is waited
 * for a bounded time; a signal handler that interrupted its own thread's
 * making gives up (the event is counted as lost to the monitor, as are
 * the events of instances past the table's size).
 *
 * A violation (an event of the alphabet with no transition from the
 * instance's state) leaves the state where it was, as `trail rv check`
 * does, writes an rv:error record (the kernel's error_MONITOR event: the
 * instance's key, the monitor, the event, the state) for the sessions
 * that record it, and runs the monitor's reactor: nop and trace (the
 * record alone), printk (a line on the process's stderr), traceoff (the
 * session stops writing), snapshot (a snapshot file, as the trigger),
 * abort (the line, then abort(): the process ends with a core; the
 * arena keeps what it wrote).
 *
 * A monitor is made at the first event of the session that needs it, and
 * freed with the session's extras (trail__rv_clear). Making runs under
 * the control lock (the control signal handler, a
 * registration): memory from mmap, nothing allocated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <trail/trail.h>

#include "../common/rv.h"
#include "evx.h"
#include "record.h"

#define RV_SLOTS (1u << 16) /* instances a monitor keeps */
#define RV_PROBE 64         /* slots looked at for one key */
#define RV_WAIT 4096        /* turns waited for a slot being made */

struct rvslot {
	uint64_t key;
	uint32_t tag;   /* 0 free, 1 being made, 2 made */
	uint32_t state;
};

struct rvmon {
	size_t size;          /* bytes mapped */
	int key;              /* 0 thread, 1 process, 2 a field */
	int reactor;          /* TRAIL_RV_* */
	uint32_t lost;        /* events no instance could take */
	struct trail_rv_mon d;
	struct rvslot slot[RV_SLOTS];
};

/* each session's, by the lines' IDX (control only) */
static struct rvmon *mons[TRAIL_MAX_SESSIONS][TRAIL_RV_MONITORS];

TRAIL__DESCRIBE_ALONE(rv, error,
		      TRAIL_ARGS(uint64_t, key, const char *, monitor, const char *, event,
				 const char *, state),
		      TRAIL_FIELDS(trail_field_int(key) trail_field_string(monitor)
				   trail_field_string(event) trail_field_string(state)), )


struct scan {
	unsigned s;
	const struct evrt *rt;
	struct evx *x; /* NULL: count */
	int n, err;
};

static void mon_free(unsigned s, int i)
{
	struct rvmon *m = mons[s][i];

	mons[s][i] = NULL;
	munmap(m, m->size);
}

/* session s's monitor of the line (made if new: the line decoded) */
static struct rvmon *mon_get(unsigned s, const char *v, size_t len, int *err)
{
	size_t size = (sizeof(struct rvmon) + 4095) & ~(size_t)4095;
	struct rvmon *m;
	int idx = 0;

	for (size_t i = 0; i < len && v[i] >= '0' && v[i] <= '9' && idx < 1000; i++)
		idx = idx * 10 + (v[i] - '0');
	if (idx >= TRAIL_RV_MONITORS) {
		*err = -EBADMSG;
		return NULL;
	}
	if (mons[s][idx])
		return mons[s][idx];
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1,
		 0);
	if (m == MAP_FAILED) {
		*err = -ENOMEM;
		return NULL;
	}
	if (trail_rv_decode(v, len, &m->d) || m->d.idx != idx) {
		munmap(m, size);
		*err = -EBADMSG;
		return NULL;
	}
	m->size = size;
	m->key = !strcmp(m->d.per, "thread") ? 0 : !strcmp(m->d.per, "process") ? 1 : 2;
	m->reactor = trail_rv_reactor(m->d.reactor); /* (decode checked it) */
	mons[s][idx] = m;
	return m;
}

/* a label's event part (SYS:EVENT or EVENT) against rt */
static int label_selects(const char *label, const struct evrt *rt)
{
	const char *filter;
	size_t pl, fl;

	trail_rv_label(label, &pl, &filter, &fl);
	return memchr(label, ':', pl) ? trail__spec_match1(label, pl, rt->provider, rt->name)
				      : trail__glob(label, pl, rt->name, strlen(rt->name));
}

/* one entry of x->rv: the label's filter compiled, the key's field found */
static int entry(struct scan *sc, struct rvmon *m, int ev)
{
	struct evx *x = sc->x;
	struct evx_rv *e = &x->rv[x->nrv];
	const char *filter;
	size_t pl, fl;
	struct trail_filter_err fe;
	char text[TRAIL_RV_NAME_MAX];

	memset(e, 0, sizeof(*e));
	e->mon = m;
	e->ev = (int16_t)ev;
	e->key = (uint8_t)m->key;
	trail_rv_label(m->d.m.events[ev], &pl, &filter, &fl);
	if (fl) {
		memcpy(text, filter, fl);
		text[fl] = '\0';
		if (trail_filter_compile(text, &x->meta, &e->cond, &fe))
			return -EBADMSG;
		e->has_cond = 1;
	}
	if (m->key == 2) {
		uint32_t i;

		for (i = 0; i < x->meta.nfields && strcmp(x->meta.fields[i].name, m->d.per); i++)
			;
		if (i == x->meta.nfields || x->meta.fields[i].kind == TRAIL_FK_FLOAT)
			return -EBADMSG;
		e->kfield = i;
	}
	x->nrv++;
	return 0;
}

static int rv_line(const char *v, size_t len, void *arg)
{
	struct scan *sc = arg;
	struct rvmon *m = mon_get(sc->s, v, len, &sc->err);

	if (!m)
		return 1;
	for (int ev = 0; ev < m->d.m.nevents; ev++) {
		if (!label_selects(m->d.m.events[ev], sc->rt))
			continue;
		if (sc->x) {
			if (sc->x->nrv == TRAIL_EVX_RV) {
				sc->err = -E2BIG;
				return 1;
			}
			if ((sc->err = entry(sc, m, ev)))
				return 1;
		}
		sc->n++;
	}
	return 0;
}

int trail__rv_make(unsigned s, const char *spec, const struct evrt *rt, struct evx *x)
{
	struct scan sc = {.s = s, .rt = rt, .x = x};

	trail__spec_opts(spec, "rv", rv_line, &sc);
	return sc.err ? sc.err : sc.n;
}

void trail__rv_clear(unsigned s)
{
	for (int i = 0; i < TRAIL_RV_MONITORS; i++)
		if (mons[s][i])
			mon_free(s, i);
}

/* ------------------------------------------------------------ the check */

static uint64_t fnv(const uint8_t *p, size_t n)
{
	uint64_t h = 1469598103934665603ull;

	for (size_t j = 0; j < n; j++)
		h = (h ^ p[j]) * 1099511628211ull;
	return h;
}

/* field i of the payload as a key, as `trail rv check` takes it (an
 * integer zero-extended; a string, array or sequence hashed): 0, or -1
 * when the payload is shorter than its fields */
static int field_key(const struct trail_meta *mt, uint32_t want, const uint8_t *p, uint32_t len,
		     uint64_t *k)
{
	uint32_t off = 0;

	for (uint32_t i = 0; i <= want; i++) {
		const struct trail_field *f = &mt->fields[i];
		uint32_t n, data = off;

		switch (f->kind) {
		case TRAIL_FK_STRING:
		case TRAIL_FK_SEQ: {
			uint16_t c;

			if (off + 2 > len)
				return -1;
			memcpy(&c, p + off, 2);
			n = f->kind == TRAIL_FK_STRING ? (c == 0xffff ? 0 : c) : (uint32_t)c * f->size;
			data = off + 2;
			break;
		}
		case TRAIL_FK_ARRAY:
			n = (uint32_t)f->count * f->size;
			break;
		default:
			n = f->size;
		}
		if (data + n > len)
			return -1;
		if (i == want) {
			if (f->kind == TRAIL_FK_INT) {
				uint64_t v = 0;

				memcpy(&v, p + data, n < 8 ? n : 8); /* (little-endian) */
				*k = v;
			} else {
				*k = fnv(p + data, n);
			}
			return 0;
		}
		off = data + n;
	}
	return -1;
}

/* the instance of key: its slot, made at the initial state if new; NULL
 * when none can be had */
static struct rvslot *instance(struct rvmon *m, uint64_t key)
{
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 48) & (RV_SLOTS - 1);

	for (int i = 0; i < RV_PROBE; i++, h = (h + 1) & (RV_SLOTS - 1)) {
		struct rvslot *sl = &m->slot[h];
		/* acquire: pairs with the maker's release of 2 (key, state) */
		uint32_t tag = __atomic_load_n(&sl->tag, __ATOMIC_ACQUIRE);

		if (tag == 0) {
			if (__atomic_compare_exchange_n(&sl->tag, &tag, 1, 0, __ATOMIC_ACQUIRE,
							__ATOMIC_ACQUIRE)) {
				sl->key = key;
				__atomic_store_n(&sl->state, (uint32_t)m->d.m.init, __ATOMIC_RELAXED);
				__atomic_store_n(&sl->tag, 2, __ATOMIC_RELEASE);
				return sl;
			}
		}
		for (int t = 0; tag == 1 && t < RV_WAIT; t++) {
			__builtin_ia32_pause();
			tag = __atomic_load_n(&sl->tag, __ATOMIC_ACQUIRE);
		}
		if (tag == 1)
			return NULL; /* (its maker is the thread we interrupted) */
		if (sl->key == key)
			return sl;
	}
	return NULL;
}

/* compare and swap against this thread's signal handlers only: no lock
 * prefix (one instruction, which a signal cannot split) */
static inline int cas_local(uint32_t *p, uint32_t *old, uint32_t nw)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t prev = *old;
	unsigned char ok;

	__asm__ __volatile__("cmpxchgl %3, %1\n\tsete %0"
			     : "=q"(ok), "+m"(*p), "+a"(prev)
			     : "r"(nw)
			     : "memory", "cc");
	*old = prev;
	return ok;
#else
	return __atomic_compare_exchange_n(p, old, nw, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
#endif
}

static char *put(char *o, const char *end, const char *s)
{
	while (*s && o < end)
		*o++ = *s++;
	return o;
}

static char *put_u64(char *o, const char *end, uint64_t v)
{
	char d[20];
	int n = 0;

	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	while (n && o < end)
		*o++ = d[--n];
	return o;
}

/* the kernel's printk reactor's line, on the process's stderr */
static void printk(const struct rvmon *m, int ev, uint32_t state, uint64_t key)
{
	char line[640], *o = line, *end = line + sizeof(line) - 1;

	o = put(o, end, "rv: monitor ");
	o = put(o, end, m->d.m.name);
	o = put(o, end, " does not allow event ");
	o = put(o, end, m->d.m.events[ev]);
	o = put(o, end, " on state ");
	o = put(o, end, m->d.m.states[state]);
	if (m->key == 2) { /* (an object's: which, as `trail rv check` says it) */
		o = put(o, end, " (");
		o = put(o, end, m->d.per);
		o = put(o, end, " ");
		o = put_u64(o, end, key);
		o = put(o, end, ")");
	}
	*o++ = '\n';
	if (write(2, line, (size_t)(o - line)) < 0)
		return;
}

static uint8_t *put_str(uint8_t *o, const char *s)
{
	uint16_t n = (uint16_t)strnlen(s, TRAIL_RV_NAME_MAX);

	memcpy(o, &n, 2);
	memcpy(o + 2, s, n);
	return o + 2 + n;
}

/* rv:error, for session s if it records it */
static void error_record(struct writer *w, unsigned d, unsigned s, const struct rvmon *m, int ev,
			 uint32_t state, uint64_t key)
{
	struct trail_event *e = TRAIL__DESC(rv, error);
	struct evrt *rt = e->rt;
	uint8_t buf[8 + 3 * (2 + TRAIL_RV_NAME_MAX)], *o = buf + 8;
	uint32_t cpu;
	uint64_t ts;

	if (!rt || !(__atomic_load_n(e->state, __ATOMIC_ACQUIRE) & (1u << s)))
		return;
	memcpy(buf, &key, 8);
	o = put_str(o, m->d.m.name);
	o = put_str(o, m->d.m.events[ev]);
	o = put_str(o, m->d.m.states[state]);
	ts = now_cpu(&cpu);
	write_sessions(e, rt, w, d, 1u << s, buf, (uint32_t)(o - buf), ts, cpu);
}

static void violation(struct writer *w, unsigned d, unsigned s, const struct rvmon *m, int ev,
		      uint32_t state, uint64_t key)
{
	error_record(w, d, s, m, ev, state, key);
	switch (m->reactor) {
	case TRAIL_RV_PRINTK:
		printk(m, ev, state, key);
		break;
	case TRAIL_RV_ABORT:
		printk(m, ev, state, key);
		abort();
	case TRAIL_RV_TRACEOFF:
		trail__session_pause(s, 1);
		break;
	case TRAIL_RV_SNAPSHOT: /* the recorder writes it (finish.c) */
		__atomic_fetch_add(&trail__sess[s].hdr->snapshots, 1, __ATOMIC_RELEASE);
		break;
	}
}

void trail__rv_run(struct evx *x, struct writer *w, unsigned d, unsigned s, const void *payload,
		   uint32_t len)
{
	const struct rvmon *done[TRAIL_EVX_RV];
	int ndone = 0;

	for (uint16_t i = 0; i < x->nrv; i++) {
		struct evx_rv *e = &x->rv[i];
		struct rvmon *m = e->mon;
		struct rvslot *sl;
		__typeof__(&w->rvc[0]) c;
		uint64_t key;
		uint32_t st;
		int taken = 0, nx;

		/* one event of each model: its first label that passes */
		for (int k = 0; k < ndone; k++)
			taken |= done[k] == m;
		if (taken || (e->has_cond && !trail__filter_pass(&e->cond, w, payload, len)))
			continue;
		done[ndone++] = m;
		if (e->key == 0)
			key = (uint64_t)(w ? w->tid : 0);
		else if (e->key == 1)
			key = (uint64_t)trail__pid;
		else if (field_key(&x->meta, e->kfield, payload, len, &key))
			continue;
		/* the instance this thread found last, if it is the one (the
		 * monitor is live: e holds it; its slot made, its key this) */
		c = w ? &w->rvc[(uintptr_t)m >> 12 & 7] : NULL;
		sl = c && c->mon == m ? c->slot : NULL;
		if (!sl || __atomic_load_n(&sl->tag, __ATOMIC_ACQUIRE) != 2 || sl->key != key) {
			if (!(sl = instance(m, key))) {
				__atomic_fetch_add(&m->lost, 1, __ATOMIC_RELAXED);
				continue;
			}
			if (c) {
				c->mon = m;
				c->slot = sl;
			}
		}
		st = __atomic_load_n(&sl->state, __ATOMIC_RELAXED);
		if (e->key == 0) /* (the thread's own: a signal handler its only rival) */
			while ((nx = m->d.m.next[st][e->ev]) >= 0 && !cas_local(&sl->state, &st, (uint32_t)nx))
				;
		else
			do
				nx = m->d.m.next[st][e->ev];
			while (nx >= 0 && !__atomic_compare_exchange_n(&sl->state, &st, (uint32_t)nx, 0,
								       __ATOMIC_RELAXED, __ATOMIC_RELAXED));
		if (nx < 0)
			violation(w, d, s, m, e->ev, st, key);
	}
}
