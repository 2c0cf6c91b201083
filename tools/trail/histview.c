/* SPDX-License-Identifier: MIT */
/*
 * histview.c - the hist file format (histview.h).
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "histview.h"

static const struct histview *sorting;

static int cmp_u64(uint64_t a, uint64_t b)
{
	return a < b ? -1 : a > b;
}

/* key q of entry e: its number, or its string (s, n bytes at most) */
static uint64_t key_num(const struct histview *v, const struct trail_htab_entry *e, int q)
{
	return e->key[v->k.k[q].word];
}

static const char *key_str(const struct histview *v, const struct trail_htab_entry *e, int q,
			   size_t *n)
{
	*n = v->k.k[q].field == TRAIL_FILTER_COMM ? 16 : TRAIL_HIST_STR_MAX;
	return (const char *)(e->key + v->k.k[q].word);
}

static int cmp_key(const struct histview *v, const struct trail_htab_entry *a,
		   const struct trail_htab_entry *b, int q)
{
	const struct trail_hist_field *f = &v->h.keys[q];
	uint64_t x, y;

	if (f->str) {
		size_t n;
		const char *s = key_str(v, a, q, &n), *t = key_str(v, b, q, &n);

		return strncmp(s, t, n);
	}
	x = key_num(v, a, q);
	y = key_num(v, b, q);
	if (f->sign && !f->mod)
		return (int64_t)x < (int64_t)y ? -1 : (int64_t)x > (int64_t)y;
	return cmp_u64(x, y);
}

static int cmp_ent(const void *pa, const void *pb)
{
	const struct trail_htab_entry *a = pa, *b = pb;
	const struct histview *v = sorting;
	const struct trail_hist_spec *h = &v->h;

	for (int i = 0; i < h->nsort; i++) {
		const struct trail_hist_sort *s = &h->sort[i];
		int c;

		if (s->val && s->idx == 0xff)
			c = cmp_u64(a->hits, b->hits);
		else if (s->val)
			c = cmp_u64(a->vals[s->idx], b->vals[s->idx]);
		else
			c = cmp_key(v, a, b, s->idx);
		if (c)
			return s->desc ? -c : c;
	}
	/* ties: by the keys, for an output that does not depend on the
	 * table's order */
	for (int q = 0; q < h->nkeys; q++) {
		int c = cmp_key(v, a, b, q);

		if (c)
			return c;
	}
	return memcmp(a->key, b->key, (size_t)v->k.kwords * 8u);
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

static void print_key(FILE *out, const struct histview *v, const struct trail_htab_entry *e,
		      int q)
{
	const struct trail_hist_field *f = &v->h.keys[q];
	uint64_t x;

	if (f->str) {
		size_t n;
		const char *s = key_str(v, e, q, &n);

		fprintf(out, "%s: %-50.*s", f->name, (int)strnlen(s, n), s);
		return;
	}
	x = key_num(v, e, q);
	switch (f->mod) {
	case TRAIL_HM_HEX: fprintf(out, "%s: %" PRIx64, f->name, x); break;
	case TRAIL_HM_SYM:
	case TRAIL_HM_SYM_OFFSET: {
		uint64_t off = 0;
		uint32_t pid = v->k.sympid ? (uint32_t)e->key[v->k.kwords - 1] : 0;
		const char *name = v->sym ? v->sym(v->ctx, pid, x, &off) : NULL;
		char b[300];

		if (!name)
			snprintf(b, sizeof(b), "0x%" PRIx64, x);
		else if (f->mod == TRAIL_HM_SYM_OFFSET)
			snprintf(b, sizeof(b), "%s+0x%" PRIx64, name, off);
		else
			snprintf(b, sizeof(b), "%s", name);
		fprintf(out, "%s: [%" PRIx64 "] %-*s", f->name, x, f->mod == TRAIL_HM_SYM ? 45 : 55, b);
		break;
	}
	case TRAIL_HM_EXECNAME: {
		const char *c = v->comm ? v->comm(v->ctx, (uint32_t)x) : NULL;

		fprintf(out, "%s: %-16s[%10" PRIu64 "]", f->name, c ? c : "<...>", x);
		break;
	}
	case TRAIL_HM_LOG2: fprintf(out, "%s: ~ 2^%-2" PRIu64, f->name, x); break;
	case TRAIL_HM_BUCKETS:
		fprintf(out, "%s: ~ %" PRIu64 "-%" PRIu64, f->name, x, x + f->buckets - 1);
		break;
	default:
		if (f->sign)
			fprintf(out, "%s: %10" PRId64, f->name, (int64_t)x);
		else
			fprintf(out, "%s: %10" PRIu64, f->name, x);
	}
}

static void print_val(FILE *out, const char *name, uint8_t mod, uint64_t x, uint64_t total,
		      uint64_t max, int first)
{
	const char *sep = first ? " " : "  ";

	if (mod == TRAIL_HM_PERCENT) {
		uint64_t p = total ? x * 10000 / total : 0;

		fprintf(out, "%s%s (%%):%3" PRIu64 ".%02" PRIu64, sep, name, p / 100, p % 100);
	} else if (mod == TRAIL_HM_GRAPH) {
		char b[32];

		bar(b, 20, x, max);
		fprintf(out, "%s%s: %s", sep, name, b);
	} else if (mod == TRAIL_HM_HEX) {
		fprintf(out, "%s%s: %10" PRIx64, sep, name, x);
	} else {
		fprintf(out, "%s%s: %10" PRIu64, sep, name, x);
	}
}

/* what onmax/onchange's save() kept for the entry: the tracked value,
 * then the fields, on a line of their own (as the kernel shows them) */
static void print_saved(FILE *out, const struct histview *v, const struct trail_htab_entry *e)
{
	for (int q = 0; q < v->k.nact; q++) {
		const struct trail_hist_cact *a = &v->k.act[q];

		if (a->action != TRAIL_HA_SAVE)
			continue;
		fprintf(out, "  %s: %10" PRIu64, a->handler == TRAIL_HH_ONMAX ? "max" : "changed",
			e->extra[a->track]);
		for (int j = 0; j < a->nparams; j++) {
			const struct trail_hist_part *x = &v->k.xp[a->p[j].idx];
			const struct trail_hist_field *f = &v->h.xf[a->p[j].idx];
			const uint64_t *w = e->extra + x->word;

			if (x->str) {
				size_t n = x->field == TRAIL_FILTER_COMM ? 16 : TRAIL_HIST_STR_MAX;

				fprintf(out, "  %s: %.*s", f->name, (int)strnlen((const char *)w, n),
					(const char *)w);
			} else if (x->sign) {
				fprintf(out, "  %s: %10" PRId64, f->name, (int64_t)*w);
			} else {
				fprintf(out, "  %s: %10" PRIu64, f->name, *w);
			}
		}
		fprintf(out, "\n");
	}
}

/* a snapshot action's details: the value that took the last one, and
 * the key of its event */
static void print_snapshot(FILE *out, const struct histview *v)
{
	struct trail_htab_entry e = {.key = v->aux + 3};

	for (int q = 0; q < v->h.nact; q++) {
		const struct trail_hist_action *a = &v->h.act[q];
		const char *t = v->h.text + a->pos;

		if (a->action != TRAIL_HA_SNAPSHOT)
			continue;
		fprintf(out, "\nSnapshot taken (%" PRIu64 " time%s: the recording's OUTPUT.N files).  "
			"Details:\n", v->aux[0], v->aux[0] == 1 ? "" : "s");
		fprintf(out, "    triggering value { %.*s }: %10" PRIu64 "\n",
			(int)(strchr(t, ')') - t + 1), t, v->aux[1]);
		fprintf(out, "    triggered by event with key: { ");
		for (int k = 0; k < v->h.nkeys; k++) {
			if (k)
				fprintf(out, ", ");
			print_key(out, v, &e, k);
		}
		fprintf(out, " }\n");
	}
}

void histview_print(FILE *out, struct histview *v)
{
	const struct trail_hist_spec *h = &v->h;
	uint64_t maxhit = 0, maxval[TRAIL_HIST_MAX_VALS] = {0}, sum[TRAIL_HIST_MAX_VALS] = {0};
	int distribution = 0;
	char info[1024];

	for (size_t i = 0; i < v->n; i++) {
		if (v->e[i].hits > maxhit)
			maxhit = v->e[i].hits;
		for (int q = 0; q < h->nvals; q++) {
			sum[q] += v->e[i].vals[q];
			if (v->e[i].vals[q] > maxval[q])
				maxval[q] = v->e[i].vals[q];
		}
	}
	sorting = v;
	qsort(v->e, v->n, sizeof(*v->e), cmp_ent);
	for (int q = 0; q < h->nkeys; q++)
		distribution |= h->keys[q].mod == TRAIL_HM_LOG2 || h->keys[q].mod == TRAIL_HM_BUCKETS;
	trail_hist_describe(h, info, sizeof(info));
	if (v->title)
		fprintf(out, "# %s\n", v->title);
	fprintf(out, "# event histogram\n#\n# trigger info: %s%s%s [%s]\n#\n\n", info,
		h->filter ? " if " : "", h->filter ? h->filter : "", h->paused ? "paused" : "active");
	for (size_t i = 0; i < v->n; i++) {
		const struct trail_htab_entry *e = &v->e[i];

		fprintf(out, "{ ");
		for (int q = 0; q < h->nkeys; q++) {
			if (q)
				fprintf(out, ", ");
			print_key(out, v, e, q);
		}
		fprintf(out, " }");
		print_val(out, "hitcount", h->hit_mod, e->hits, v->hits, maxhit, 1);
		for (int q = 0; q < h->nvals; q++)
			print_val(out, h->vals[q].name, h->vals[q].mod, e->vals[q], sum[q], maxval[q], 0);
		if (distribution) { /* the distribution, at a glance */
			char b[48];

			bar(b, 40, e->hits, maxhit);
			fprintf(out, "  |%s|", b);
		}
		fprintf(out, "\n");
		if (e->extra)
			print_saved(out, v, e);
	}
	if (v->aux && v->k.snap && v->aux[0])
		print_snapshot(out, v);
	fprintf(out, "\nTotals:\n    Hits: %" PRIu64 "\n    Entries: %zu\n    Dropped: %" PRIu64 "\n",
		v->hits, v->n, v->dropped);
}
