/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the histograms hist triggers keep in the processes (arena.h,
 * "The histogram area"): read while the recording runs (trail hist -P
 * shows them) and written into the trace file at its end (HIST sections,
 * layout.h). The area is the processes' to write: each table is copied
 * out and checked before it is read, so a process scribbling over it can
 * make a histogram wrong, never the recorder read out of bounds.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/filter.h"
#include "../common/htab.h"
#include "../common/meta.h"
#include "internal.h"

/* the TEXT of the spec's @trigger line number `line` (0: the first) */
static const char *trigger_text(const char *spec, uint32_t line, size_t *len)
{
	uint32_t n = 0;

	for (const char *p = spec; *p;) {
		const char *eol = strchr(p, '\n'), *sp;
		size_t l = eol ? (size_t)(eol - p) : strlen(p);

		if (l > 9 && !memcmp(p, "@trigger ", 9) && n++ == line &&
		    (sp = memchr(p + 9, ' ', l - 9))) {
			*len = l - (size_t)(sp + 1 - p);
			return sp + 1;
		}
		p += l + (eol ? 1 : 0);
	}
	return NULL;
}

/* directory slot i, copied out (0), or -1 if it names no table */
static int dir_slot(struct trail_recorder *R, uint32_t i, struct trail_hist_dir *d)
{
	const struct trail_hist_dir *dir = (const void *)(R->m.base + R->m.g.hist_off);

	/* acquire: pairs with the maker's release of READY */
	if (__atomic_load_n(&dir[i].state, __ATOMIC_ACQUIRE) != TRAIL_HD_READY)
		return -1;
	memcpy(d, &dir[i], sizeof(*d));
	d->event[sizeof(d->event) - 1] = d->name[sizeof(d->name) - 1] = '\0';
	return d->off < TRAIL_HIST_DIR * sizeof(*d) || d->bytes > R->m.g.hist_size ||
			       d->off > R->m.g.hist_size - d->bytes
		       ? -1
		       : 0;
}

static int same_hist(const struct trail_hist_dir *a, const struct trail_hist_dir *b)
{
	if (a->name[0] || b->name[0])
		return !strcmp(a->name, b->name);
	return a->trig == b->trig && !strcmp(a->event, b->event);
}

int trail_recorder_hists(struct trail_recorder *R,
			 void (*fn)(void *arg, const struct trail_recorder_hist *h), void *arg)
{
	struct trail_hist_dir d[TRAIL_HIST_DIR];
	uint8_t ok[TRAIL_HIST_DIR], done[TRAIL_HIST_DIR];
	int count = 0;

	if (!R->m.g.hist_size)
		return 0;
	for (uint32_t i = 0; i < TRAIL_HIST_DIR; i++) {
		ok[i] = !dir_slot(R, i, &d[i]);
		done[i] = 0;
	}
	for (uint32_t i = 0; i < TRAIL_HIST_DIR; i++) {
		struct trail_htab *tabs[TRAIL_HIST_DIR];
		struct trail_recorder_hist h;
		size_t nt = 0, tl = 0, max;
		const char *text;
		uint64_t *keys = NULL;

		if (!ok[i] || done[i])
			continue;
		memset(&h, 0, sizeof(h));
		for (uint32_t j = i; j < TRAIL_HIST_DIR; j++) {
			struct trail_htab *t;

			if (!ok[j] || done[j] || !same_hist(&d[i], &d[j]))
				continue;
			done[j] = 1;
			/* a private copy, checked: the process may write it still */
			if (!(t = malloc(d[j].bytes)))
				continue;
			memcpy(t, R->m.base + R->m.g.hist_off + d[j].off, d[j].bytes);
			if (trail_htab_check(t, d[j].bytes) ||
			    (nt && (t->kwords != tabs[0]->kwords || t->nvals != tabs[0]->nvals ||
				    t->nextra != tabs[0]->nextra || t->naux != tabs[0]->naux))) {
				free(t);
				continue;
			}
			tabs[nt++] = t;
		}
		text = trigger_text(R->spec, d[i].trig, &tl);
		if (nt && text && tl < sizeof(h.text)) {
			memcpy(h.text, text, tl);
			h.text[tl] = '\0';
			h.event = d[i].event;
			h.name = d[i].name;
			h.kwords = tabs[0]->kwords;
			h.nvals = tabs[0]->nvals;
			h.nextra = tabs[0]->nextra;
			h.naux = tabs[0]->naux;
			/* (a snapshot's details: the first table's) */
			h.aux = trail_htab_aux(tabs[0]);
			max = 0;
			for (size_t q = 0; q < nt; q++)
				max += (size_t)tabs[q]->size * tabs[q]->copies;
			h.e = calloc(max ? max : 1, sizeof(*h.e));
			keys = calloc(max ? max : 1, ((size_t)h.kwords + h.nextra) * 8u);
			if (h.e && keys) {
				h.n = trail_htab_collect_many((const struct trail_htab *const *)tabs, nt,
							      h.e, keys, max, &h.hits, &h.dropped,
							      &h.more);
				fn(arg, &h);
				count++;
			}
			free(h.e);
			free(keys);
		}
		for (size_t q = 0; q < nt; q++)
			free(tabs[q]);
	}
	return count;
}

int trail_recorder_hist_control(struct trail_recorder *R, int what)
{
	struct trail_hist_dir *dir = (void *)(R->m.base + R->m.g.hist_off);
	int n = 0;

	for (uint32_t i = 0; R->m.g.hist_size && i < TRAIL_HIST_DIR; i++) {
		struct trail_hist_dir d;
		struct trail_htab *t;

		if (dir_slot(R, i, &d))
			continue;
		n++;
		if (what != TRAIL_HIST_CLEAR) {
			__atomic_store_n(&dir[i].paused, what == TRAIL_HIST_PAUSE, __ATOMIC_RELAXED);
			continue;
		}
		t = (void *)(R->m.base + R->m.g.hist_off + d.off);
		/* (the processes write it: its dimensions checked first) */
		if (trail_htab_check(t, d.bytes))
			continue;
		memset((char *)t + sizeof(*t), 0, d.bytes - sizeof(*t));
	}
	return n;
}

uint32_t trail_recorder_hist_nomem(const struct trail_recorder *R)
{
	return R->m.g.hist_size ? __atomic_load_n(&shm_hdr(&R->m)->hist_nomem, __ATOMIC_RELAXED) : 0;
}

/* one HIST section */
static void write_one(void *arg, const struct trail_recorder_hist *h)
{
	struct trail_recorder *R = arg;
	size_t el = strlen(h->event) + 1, nl = strlen(h->name) + 1, tl = strlen(h->text) + 1;
	size_t texts = (el + nl + tl + 7) & ~(size_t)7, ew = h->kwords + 1u + h->nvals + h->nextra;
	size_t len = texts + (h->n * ew + h->naux) * 8u;
	struct trail_sec_hist s = {
		.kwords = h->kwords,
		.nvals = h->nvals,
		.entries = (uint32_t)h->n,
		.event_len = (uint16_t)el,
		.name_len = (uint16_t)nl,
		.text_len = (uint32_t)tl,
		.nextra = (uint16_t)h->nextra,
		.naux = (uint16_t)h->naux,
		.hits = h->hits,
		.dropped = h->dropped + h->more,
	};
	uint8_t *b = calloc(1, len);
	uint64_t *w;

	if (!b || sizeof(s) + len > TRAIL_SEC_MAX_LEN) {
		rec_warn(R, "histogram on %s: too large for the trace file", h->event);
		free(b);
		return;
	}
	memcpy(b, h->event, el);
	memcpy(b + el, h->name, nl);
	memcpy(b + el + nl, h->text, tl);
	w = (uint64_t *)(b + texts);
	for (size_t i = 0; i < h->n; i++, w += ew) {
		memcpy(w, h->e[i].key, h->kwords * 8u);
		w[h->kwords] = h->e[i].hits;
		memcpy(w + h->kwords + 1, h->e[i].vals, h->nvals * 8u);
		if (h->nextra && h->e[i].extra)
			memcpy(w + h->kwords + 1 + h->nvals, h->e[i].extra, h->nextra * 8u);
	}
	if (h->naux)
		memcpy(w, h->aux, h->naux * 8u);
	tfw_section(&R->out, TRAIL_SEC_HIST, &s, sizeof(s), b, len);
	free(b);
}

void trail__rec_write_hists(struct trail_recorder *R)
{
	uint32_t nomem = trail_recorder_hist_nomem(R);

	trail_recorder_hists(R, write_one, R);
	if (nomem)
		rec_warn(R, "%u hist trigger%s found no room for %s table (the histogram area is "
			 "full): %s nothing", nomem, nomem == 1 ? "" : "s", nomem == 1 ? "its" : "their",
			 nomem == 1 ? "it counted" : "they counted");
}

int trail_recorder_event_meta(const struct trail_recorder *R, const char *name, void *buf,
			      size_t n)
{
	uint32_t ne = shm_nevents(&R->m);

	for (uint32_t i = 0; i < ne; i++) {
		struct trail_evrec rec;
		const uint8_t *blob;
		struct trail_meta m;
		const char *why;
		size_t pl;

		if (shm_event(&R->m, i, &rec, &blob) != 1 || rec.size > n)
			continue;
		memcpy(buf, blob, rec.size); /* (the processes may write it: a copy) */
		if (trail__meta_parse(buf, rec.size, &m, &why))
			continue;
		pl = strlen(m.provider);
		if (!strncmp(name, m.provider, pl) && name[pl] == ':' && !strcmp(name + pl + 1, m.name))
			return (int)rec.size;
	}
	return -1;
}
