/* SPDX-License-Identifier: MIT */
/*
 * hist.c - the histogram grammar (hist.h). Error texts follow the
 * kernel's (trace_events_hist.c's err_text) where it has one.
 */
#include <stdio.h>
#include <string.h>

#include "hist.h"

static int fail(struct trail_filter_err *e, size_t pos, const char *msg)
{
	e->pos = (int)pos;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return -1;
}

static const struct {
	const char *name;
	uint8_t mod;
} mods[] = {
	{"hex", TRAIL_HM_HEX},       {"sym", TRAIL_HM_SYM},         {"sym-offset", TRAIL_HM_SYM_OFFSET},
	{"execname", TRAIL_HM_EXECNAME}, {"log2", TRAIL_HM_LOG2},   {"buckets", TRAIL_HM_BUCKETS},
	{"usecs", TRAIL_HM_USECS},   {"percent", TRAIL_HM_PERCENT}, {"graph", TRAIL_HM_GRAPH},
};

/* s[0..n) names a field of m (or a common one): 0 with f filled, or -1 */
static int field_of(const struct trail_meta *m, const char *s, size_t n,
		    struct trail_hist_field *f)
{
	if (n >= sizeof(f->name))
		return -1;
	memcpy(f->name, s, n);
	f->name[n] = '\0';
	for (uint32_t i = 0; i < m->nfields; i++)
		if (!strcmp(m->fields[i].name, f->name)) {
			const struct trail_field *fd = &m->fields[i];

			if (fd->kind != TRAIL_FK_INT && fd->kind != TRAIL_FK_STRING)
				return -2; /* arrays, sequences, floats: not keys or vals */
			f->field = (uint16_t)i;
			f->str = fd->kind == TRAIL_FK_STRING;
			f->sign = !!(fd->flags & TRAIL_FF_SIGNED);
			return 0;
		}
	{
		int c = trail_filter_common(s, n);

		if (c < 0)
			return -1;
		f->field = (uint16_t)c;
		f->str = f->field == TRAIL_FILTER_COMM;
		f->sign = 0;
		if (f->field == TRAIL_FILTER_COMM)
			snprintf(f->name, sizeof(f->name), "common_comm");
		return 0;
	}
}

/* "NAME[.MOD[=N]]" at s (n bytes, at pos in the text) into f; key: a key
 * (else a val) */
static int parse_field(const char *s, size_t n, size_t pos, const struct trail_meta *m,
		       int key, struct trail_hist_field *f, struct trail_filter_err *e)
{
	const char *dot = memchr(s, '.', n);
	size_t fn = dot ? (size_t)(dot - s) : n;
	int r;

	memset(f, 0, sizeof(*f));
	if (!fn)
		return fail(e, pos, "Empty field name");
	if (!key && fn == 8 && !memcmp(s, "hitcount", 8)) {
		f->field = TRAIL_HIST_HITCOUNT;
		snprintf(f->name, sizeof(f->name), "hitcount");
	} else if ((r = field_of(m, s, fn, f)) < 0) {
		return fail(e, pos, r == -2 ? "Field type not supported for hist (integers and strings)"
					    : "Couldn't find field");
	}
	if (dot) {
		const char *ms = dot + 1;
		size_t mn = n - fn - 1, eq = strcspn(ms, "=");
		size_t k;

		if (eq > mn)
			eq = mn;
		for (k = 0; k < sizeof(mods) / sizeof(mods[0]); k++)
			if (strlen(mods[k].name) == eq && !memcmp(mods[k].name, ms, eq))
				break;
		if (k == sizeof(mods) / sizeof(mods[0]))
			return fail(e, pos + fn + 1, "Invalid field modifier");
		f->mod = mods[k].mod;
		if (f->mod == TRAIL_HM_BUCKETS) {
			uint64_t v = 0;
			size_t i = eq + 1;

			if (eq == mn || i == mn)
				return fail(e, pos + fn + 1, "Missing buckets size (.buckets=N)");
			for (; i < mn; i++) {
				if (ms[i] < '0' || ms[i] > '9' || v > 1000000000000ull)
					return fail(e, pos + fn + 1 + eq + 1, "Invalid buckets size");
				v = v * 10 + (uint64_t)(ms[i] - '0');
			}
			if (!v)
				return fail(e, pos + fn + 1 + eq + 1, "Invalid buckets size");
			f->buckets = v;
		} else if (eq != mn) {
			return fail(e, pos + fn + 1, "Invalid field modifier");
		}
		/* where each modifier goes */
		if ((key && (f->mod == TRAIL_HM_PERCENT || f->mod == TRAIL_HM_GRAPH)) ||
		    (!key && f->mod != TRAIL_HM_HEX && f->mod != TRAIL_HM_PERCENT &&
		     f->mod != TRAIL_HM_GRAPH) ||
		    (f->str && f->mod != TRAIL_HM_NONE) ||
		    (f->mod == TRAIL_HM_EXECNAME && f->field != TRAIL_FILTER_PID) ||
		    (f->mod == TRAIL_HM_USECS && f->field != TRAIL_FILTER_TS) ||
		    (f->field == TRAIL_HIST_HITCOUNT && f->mod == TRAIL_HM_HEX))
			return fail(e, pos + fn + 1, "Invalid field modifier");
	}
	if (!key && f->str)
		return fail(e, pos, "A value must be a number");
	return 0;
}

/* the list of a "keys=" or "vals=" part (s, n bytes at pos) */
static int parse_list(const char *s, size_t n, size_t pos, const struct trail_meta *m, int key,
		      struct trail_hist_spec *h, struct trail_filter_err *e)
{
	size_t i = 0;

	if (!n)
		return fail(e, pos, key ? "Missing keys" : "Missing vals");
	while (i <= n) {
		size_t k = i;
		struct trail_hist_field f;

		while (k < n && s[k] != ',')
			k++;
		if (parse_field(s + i, k - i, pos + i, m, key, &f, e))
			return -1;
		if (key) {
			if (h->nkeys == TRAIL_HIST_MAX_KEYS)
				return fail(e, pos + i, "Too many keys (Max = 3)");
			h->keys[h->nkeys++] = f;
		} else if (f.field == TRAIL_HIST_HITCOUNT) {
			h->hit_mod = f.mod;
		} else {
			if (h->nvals == TRAIL_HIST_MAX_VALS)
				return fail(e, pos + i, "Too many vals (Max = 3, hitcount aside)");
			h->vals[h->nvals++] = f;
		}
		i = k + 1;
	}
	return 0;
}

/* "sort=" (s, n bytes at pos): after keys and vals are known */
static int parse_sort(const char *s, size_t n, size_t pos, struct trail_hist_spec *h,
		      struct trail_filter_err *e)
{
	size_t i = 0;

	h->nsort = 0;
	while (i <= n) {
		size_t k = i, fn;
		const char *dot;
		struct trail_hist_sort so = {0, 0, 0};
		int found = 0;

		while (k < n && s[k] != ',')
			k++;
		if (k == i)
			return fail(e, pos + i, "Empty sort field");
		if (h->nsort == TRAIL_HIST_MAX_SORT)
			return fail(e, pos + i, "Too many sort fields (Max = 2)");
		/* the last ".ascending"/".descending" is the direction; a key's
		 * own modifier may come before it (bytes.log2.descending) */
		fn = k - i;
		dot = NULL;
		for (size_t j = k; j > i; j--)
			if (s[j - 1] == '.') {
				dot = s + j - 1;
				break;
			}
		if (dot && (size_t)(s + k - dot - 1) == 10 && !memcmp(dot + 1, "descending", 10)) {
			so.desc = 1;
			fn = (size_t)(dot - (s + i));
		} else if (dot && (size_t)(s + k - dot - 1) == 9 && !memcmp(dot + 1, "ascending", 9)) {
			fn = (size_t)(dot - (s + i));
		}
		{
			/* the name alone (a key's modifier may be repeated) */
			size_t nn = strcspn(s + i, ".,");

			if (nn > fn)
				nn = fn;
			if (nn == 8 && !memcmp(s + i, "hitcount", 8)) {
				so.val = 1;
				so.idx = 0xff;
				found = 1;
			}
			for (uint8_t q = 0; !found && q < h->nkeys; q++)
				if (strlen(h->keys[q].name) == nn && !memcmp(h->keys[q].name, s + i, nn))
					so.idx = q, found = 1;
			for (uint8_t q = 0; !found && q < h->nvals; q++)
				if (strlen(h->vals[q].name) == nn && !memcmp(h->vals[q].name, s + i, nn))
					so.val = 1, so.idx = q, found = 1;
			if (!found)
				return fail(e, pos + i, "Sort field must be a key or a val");
			if (fn > nn && s[i + nn] == '.' && !so.val) {
				/* a key's own modifier, as written there */
				size_t ml = fn - nn - 1;
				const struct trail_hist_field *kf = &h->keys[so.idx];
				int ok = 0;

				for (size_t q = 0; q < sizeof(mods) / sizeof(mods[0]); q++) {
					size_t l = strlen(mods[q].name);

					if (mods[q].mod == kf->mod && ml >= l &&
					    !memcmp(mods[q].name, s + i + nn + 1, l) &&
					    (ml == l || (kf->mod == TRAIL_HM_BUCKETS && s[i + nn + 1 + l] == '=')))
						ok = 1;
				}
				if (!ok)
					return fail(e, pos + i + nn + 1, "Invalid sort modifier");
			} else if (fn > nn) {
				return fail(e, pos + i + nn + 1, "Invalid sort modifier");
			}
		}
		h->sort[h->nsort++] = so;
		i = k + 1;
	}
	return 0;
}

int trail_hist_parse(const char *text, const struct trail_meta *m, struct trail_hist_spec *h,
		     struct trail_filter_err *e)
{
	size_t len = strlen(text), head = len, i = 0, sort_at = 0, sort_n = 0;
	const char *sort = NULL;

	memset(h, 0, sizeof(*h));
	h->size = TRAIL_HIST_SIZE_DEFAULT;
	e->pos = -1;
	e->msg[0] = '\0';
	/* "... if FILTER" */
	for (size_t k = 0; k + 2 <= len; k++)
		if ((k == 0 || text[k - 1] == ' ' || text[k - 1] == '\t') && text[k] == 'i' &&
		    text[k + 1] == 'f' && (!text[k + 2] || text[k + 2] == ' ' || text[k + 2] == '\t')) {
			head = k;
			h->filter = text + k + 2;
			while (*h->filter == ' ' || *h->filter == '\t')
				h->filter++;
			if (!*h->filter)
				return fail(e, k + 2, "Meaningless filter expression");
			break;
		}
	while (head && (text[head - 1] == ' ' || text[head - 1] == '\t'))
		head--;
	while (i < head && (text[i] == ' ' || text[i] == '\t'))
		i++;
	if (head - i >= 5 && !memcmp(text + i, "hist:", 5))
		i += 5;
	else if (head - i == 4 && !memcmp(text + i, "hist", 4))
		i += 4;
	while (i < head) {
		size_t k = i, eq;

		while (k < head && text[k] != ':')
			k++;
		eq = i;
		while (eq < k && text[eq] != '=')
			eq++;
		if ((eq - i == 4 && !memcmp(text + i, "keys", 4)) ||
		    (eq - i == 3 && !memcmp(text + i, "key", 3))) {
			if (h->nkeys)
				return fail(e, i, "Keys given twice");
			if (eq == k || parse_list(text + eq + 1, k - eq - 1, eq + 1, m, 1, h, e))
				return eq == k ? fail(e, i, "Missing keys") : -1;
		} else if ((eq - i == 4 && !memcmp(text + i, "vals", 4)) ||
			   (eq - i == 6 && !memcmp(text + i, "values", 6))) {
			if (eq == k || parse_list(text + eq + 1, k - eq - 1, eq + 1, m, 0, h, e))
				return eq == k ? fail(e, i, "Missing vals") : -1;
		} else if (eq - i == 4 && !memcmp(text + i, "sort", 4) && eq < k) {
			sort = text + eq + 1;
			sort_n = k - eq - 1;
			sort_at = eq + 1;
		} else if (eq - i == 4 && !memcmp(text + i, "size", 4) && eq < k) {
			uint64_t v = 0;

			for (size_t q = eq + 1; q < k; q++) {
				if (text[q] < '0' || text[q] > '9' || v > TRAIL_HIST_SIZE_MAX)
					return fail(e, eq + 1, "Invalid size (128 to 131072)");
				v = v * 10 + (uint64_t)(text[q] - '0');
			}
			if (k == eq + 1 || v < 1 || v > TRAIL_HIST_SIZE_MAX)
				return fail(e, eq + 1, "Invalid size (128 to 131072)");
			/* rounded up to a power of two, at least the minimum */
			h->size = TRAIL_HIST_SIZE_MIN;
			while (h->size < v)
				h->size <<= 1;
		} else if (eq - i == 4 && !memcmp(text + i, "name", 4) && eq < k) {
			if (k - eq - 1 == 0 || k - eq - 1 >= sizeof(h->name))
				return fail(e, eq + 1, "Invalid name");
			memcpy(h->name, text + eq + 1, k - eq - 1);
			h->name[k - eq - 1] = '\0';
		} else if (k - i == 5 && !memcmp(text + i, "pause", 5)) {
			h->paused = 1;
		} else if ((k - i == 4 && !memcmp(text + i, "cont", 4)) ||
			   (k - i == 8 && !memcmp(text + i, "continue", 8))) {
			h->cont = 1;
		} else if (k - i == 5 && !memcmp(text + i, "clear", 5)) {
			h->clear = 1;
		} else {
			return fail(e, i, "Unknown hist parameter (keys vals sort size name pause "
					  "cont clear)");
		}
		i = k + 1;
	}
	if (!h->nkeys)
		return fail(e, i < head ? i : head, "Missing keys (hist:keys=...)");
	if (sort) {
		if (parse_sort(sort, sort_n, sort_at, h, e))
			return -1;
	} else { /* the kernel's default: hitcount, ascending */
		h->nsort = 1;
		h->sort[0] = (struct trail_hist_sort){1, 0xff, 0};
	}
	return 0;
}

static const char *mod_name(const struct trail_hist_field *f, char *buf, size_t n)
{
	for (size_t k = 0; k < sizeof(mods) / sizeof(mods[0]); k++)
		if (mods[k].mod == f->mod) {
			if (f->mod == TRAIL_HM_BUCKETS)
				snprintf(buf, n, ".buckets=%llu", (unsigned long long)f->buckets);
			else
				snprintf(buf, n, ".%s", mods[k].name);
			return buf;
		}
	return "";
}

void trail_hist_describe(const struct trail_hist_spec *h, char *buf, size_t n)
{
	size_t o = 0;
	char mb[32];

#define PUT(...) (o += (size_t)snprintf(buf + o, o < n ? n - o : 0, __VA_ARGS__))
	PUT("hist:");
	if (h->name[0])
		PUT("name=%s:", h->name);
	PUT("keys=");
	for (int i = 0; i < h->nkeys; i++)
		PUT("%s%s%s", i ? "," : "", h->keys[i].name, mod_name(&h->keys[i], mb, sizeof(mb)));
	PUT(":vals=hitcount");
	if (h->hit_mod) {
		struct trail_hist_field hf = {.mod = h->hit_mod};

		PUT("%s", mod_name(&hf, mb, sizeof(mb)));
	}
	for (int i = 0; i < h->nvals; i++)
		PUT(",%s%s", h->vals[i].name, mod_name(&h->vals[i], mb, sizeof(mb)));
	PUT(":sort=");
	for (int i = 0; i < h->nsort; i++) {
		const struct trail_hist_sort *s = &h->sort[i];
		const struct trail_hist_field *f =
			s->idx == 0xff ? NULL : s->val ? &h->vals[s->idx] : &h->keys[s->idx];

		PUT("%s%s%s%s", i ? "," : "", f ? f->name : "hitcount",
		    f && !s->val ? mod_name(f, mb, sizeof(mb)) : "", s->desc ? ".descending" : "");
	}
	PUT(":size=%u", h->size);
#undef PUT
	if (o >= n && n)
		buf[n - 1] = '\0';
}

/* ------------------------------------------------------------------ keys */

static void part_of(const struct trail_hist_field *f, const struct trail_meta *m,
		    struct trail_hist_keyer *k, struct trail_hist_part *p)
{
	memset(p, 0, sizeof(*p));
	p->field = f->field;
	p->mod = f->mod;
	p->str = f->str;
	p->sign = f->sign;
	p->buckets = f->buckets ? f->buckets : 1;
	p->off = 0xffff;
	p->size = 8;
	if (f->field < m->nfields) {
		p->size = (uint8_t)m->fields[f->field].size;
		p->off = trail_filter_fixed_off(m, f->field);
		if (f->field + 1u > k->nlay)
			k->nlay = (uint16_t)(f->field + 1);
	}
	k->clock |= f->field == TRAIL_FILTER_TS || f->field == TRAIL_FILTER_CPU;
	k->comm |= f->field == TRAIL_FILTER_COMM;
}

void trail_hist_keyer(const struct trail_hist_spec *h, const struct trail_meta *m,
		      struct trail_hist_keyer *k)
{
	uint16_t w = 0;

	memset(k, 0, sizeof(*k));
	k->nkeys = h->nkeys;
	k->nvals = h->nvals;
	for (int i = 0; i < h->nkeys; i++) {
		struct trail_hist_part *p = &k->k[i];

		part_of(&h->keys[i], m, k, p);
		p->word = w;
		w += p->field == TRAIL_FILTER_COMM ? 2 : p->str ? TRAIL_HIST_STR_MAX / 8 : 1;
		k->sympid |= p->mod == TRAIL_HM_SYM || p->mod == TRAIL_HM_SYM_OFFSET;
	}
	for (int i = 0; i < h->nvals; i++)
		part_of(&h->vals[i], m, k, &k->v[i]);
	k->kwords = (uint16_t)(w + k->sympid);
	for (uint16_t i = 0; i < k->nlay; i++) {
		k->lay[i].kind = m->fields[i].kind;
		k->lay[i].size = m->fields[i].size;
		k->lay[i].count = m->fields[i].count;
	}
}

/* ceil(log2(v)): the kernel's ilog2(roundup_pow_of_two(v)) */
static uint64_t log2_up(uint64_t v)
{
	return v <= 1 ? 0 : 64u - (uint64_t)__builtin_clzll(v - 1);
}

/* a number of the record, modifier applied; -1: not in the payload */
static int number(const struct trail_hist_keyer *k, const struct trail_hist_part *p,
		  const uint8_t *pl, uint32_t len, const struct trail_filter_ctx *c, uint64_t *out)
{
	uint64_t v;

	if (trail_filter_value(k->lay, k->nlay, p->field, p->off, p->size, p->sign, pl, len, c, &v))
		return -1;
	switch (p->mod) {
	case TRAIL_HM_LOG2: v = log2_up(v); break;
	case TRAIL_HM_BUCKETS: v = v / p->buckets * p->buckets; break;
	case TRAIL_HM_USECS: v /= 1000; break;
	default: break;
	}
	*out = v;
	return 0;
}

int trail_hist_key(const struct trail_hist_keyer *k, const uint8_t *p, uint32_t len,
		   const struct trail_filter_ctx *c, uint64_t *key, uint64_t *vals)
{
	for (int i = 0; i < k->nkeys; i++) {
		const struct trail_hist_part *q = &k->k[i];
		uint64_t *w = key + q->word;

		if (q->field == TRAIL_FILTER_COMM) {
			const char *s = c->comm ? c->comm : "";
			size_t n = strnlen(s, 16);

			w[0] = w[1] = 0;
			memcpy(w, s, n);
		} else if (q->str) {
			uint32_t at, n;

			memset(w, 0, TRAIL_HIST_STR_MAX);
			if (trail_filter_locate(k->lay, k->nlay, q->field, p, len, &at, &n))
				return -1;
			if (n > TRAIL_HIST_STR_MAX - 1)
				n = TRAIL_HIST_STR_MAX - 1;
			memcpy(w, p + at, n);
			/* a string ends at its first NUL */
			{
				size_t l = strnlen((const char *)w, n);

				memset((char *)w + l, 0, n - l);
			}
		} else if (number(k, q, p, len, c, w)) {
			return -1;
		}
	}
	if (k->sympid)
		key[k->kwords - 1] = c->pid;
	for (int i = 0; i < k->nvals; i++)
		if (number(k, &k->v[i], p, len, c, &vals[i]))
			return -1;
	return 0;
}
