/* SPDX-License-Identifier: MIT */
/*
 * synth.c - synthetic event definitions (synth.h).
 */
#include <stdio.h>
#include <string.h>

#include <trail/abi.h>

#include "synth.h"

static int fail(struct trail_filter_err *e, size_t pos, const char *msg)
{
	e->pos = (int)pos;
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	return -1;
}

static const struct {
	const char *name; /* as written (one blank between words) */
	uint8_t size, sign;
} types[] = {
	{"s8", 1, 1},	       {"u8", 1, 0},	      {"s16", 2, 1},	       {"u16", 2, 0},
	{"s32", 4, 1},	       {"u32", 4, 0},	      {"s64", 8, 1},	       {"u64", 8, 0},
	{"char", 1, 1},	       {"unsigned char", 1, 0}, {"short", 2, 1},	{"unsigned short", 2, 0},
	{"int", 4, 1},	       {"unsigned int", 4, 0}, {"long", 8, 1},	       {"unsigned long", 8, 0},
	{"long long", 8, 1},   {"unsigned long long", 8, 0}, {"bool", 1, 0},   {"pid_t", 4, 1},
	{"gfp_t", 4, 0},       {"size_t", 8, 0},      {"ssize_t", 8, 1},
};

static int ident(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '_';
}

/* the words of t[i .. end), blank-separated: their starts and lengths */
static int words(const char *t, size_t i, size_t end, size_t *at, size_t *len, int max)
{
	int n = 0;

	while (i < end) {
		while (i < end && (t[i] == ' ' || t[i] == '\t' || t[i] == '\n'))
			i++;
		if (i == end)
			break;
		if (n == max)
			return -1;
		at[n] = i;
		while (i < end && t[i] != ' ' && t[i] != '\t' && t[i] != '\n')
			i++;
		len[n] = i - at[n];
		n++;
	}
	return n;
}

/* one "TYPE FIELD" (t[i .. end)) */
static int field_of(const char *t, size_t i, size_t end, struct trail_synth *s,
		    struct trail_filter_err *e)
{
	size_t at[5], len[5], tl = 0;
	char ty[24];
	int n = words(t, i, end, at, len, 5), k;
	struct trail_synth_field *f;
	const char *br;
	size_t fn;

	if (n < 0)
		return fail(e, i, "Invalid field (TYPE NAME)");
	if (n < 2)
		return fail(e, n ? at[0] : i, "Missing field name (TYPE NAME)");
	if (s->nfields == TRAIL_SYNTH_MAX_FIELDS)
		return fail(e, at[0], "Too many fields (Max = 16)");
	f = &s->f[s->nfields];
	memset(f, 0, sizeof(*f));
	/* the type: every word but the last, one blank between them */
	for (k = 0; k < n - 1; k++) {
		if (tl + len[k] + 1 >= sizeof(ty))
			return fail(e, at[k], "Invalid type");
		if (k)
			ty[tl++] = ' ';
		memcpy(ty + tl, t + at[k], len[k]);
		tl += len[k];
	}
	ty[tl] = '\0';
	/* the name, with [N] or [] for a string */
	fn = len[n - 1];
	br = memchr(t + at[n - 1], '[', fn);
	if (br) {
		size_t bl = fn - (size_t)(br - (t + at[n - 1]));
		uint64_t v = 0;

		if (strcmp(ty, "char") && strcmp(ty, "unsigned char"))
			return fail(e, at[0], "Only char arrays (strings) are supported");
		if (br[bl - 1] != ']')
			return fail(e, (size_t)(br - t), "Invalid array size ([N] or [])");
		for (size_t q = 1; q + 1 < bl; q++) {
			if (br[q] < '0' || br[q] > '9' || v > TRAIL_SYNTH_STR_MAX)
				return fail(e, (size_t)(br - t) + q, "Invalid array size ([N] or [])");
			v = v * 10 + (uint64_t)(br[q] - '0');
		}
		if (bl > 2 && (!v || v > TRAIL_SYNTH_STR_MAX))
			return fail(e, (size_t)(br - t) + 1, "String size out of range (1 to 256)");
		f->str = 1;
		f->max = (uint16_t)(bl > 2 ? v : TRAIL_SYNTH_STR_MAX);
		fn = (size_t)(br - (t + at[n - 1]));
		if (bl > 2)
			snprintf(f->type, sizeof(f->type), "char[%u]", f->max);
		else
			snprintf(f->type, sizeof(f->type), "char[]");
	} else {
		size_t q;

		for (q = 0; q < sizeof(types) / sizeof(types[0]); q++)
			if (!strcmp(types[q].name, ty))
				break;
		if (q == sizeof(types) / sizeof(types[0]))
			return fail(e, at[0], "Invalid type (s8..u64, int, long, pid_t, char[N], ...)");
		f->size = types[q].size;
		f->sign = types[q].sign;
		snprintf(f->type, sizeof(f->type), "%s", ty);
	}
	if (!fn || fn >= sizeof(f->name) || (t[at[n - 1]] >= '0' && t[at[n - 1]] <= '9'))
		return fail(e, at[n - 1], "Invalid field name");
	for (size_t q = 0; q < fn; q++)
		if (!ident(t[at[n - 1] + q]))
			return fail(e, at[n - 1] + q, "Invalid field name");
	memcpy(f->name, t + at[n - 1], fn);
	for (int q = 0; q < s->nfields; q++)
		if (!strcmp(s->f[q].name, f->name))
			return fail(e, at[n - 1], "Field name already used");
	s->nfields++;
	return 0;
}

int trail_synth_parse(const char *text, struct trail_synth *s, struct trail_filter_err *e)
{
	size_t len = strlen(text), i = 0, n;

	memset(s, 0, sizeof(*s));
	e->pos = -1;
	e->msg[0] = '\0';
	while (i < len && (text[i] == ' ' || text[i] == '\t'))
		i++;
	n = 0;
	while (i + n < len && ident(text[i + n]))
		n++;
	if (!n)
		return fail(e, i, "Missing synthetic event name");
	if (text[i] >= '0' && text[i] <= '9')
		return fail(e, i, "Invalid synthetic event name");
	if (n >= sizeof(s->name))
		return fail(e, i, "Synthetic event name too long");
	if (i + n < len && text[i + n] != ' ' && text[i + n] != '\t')
		return fail(e, i + n, "Invalid synthetic event name");
	memcpy(s->name, text + i, n);
	i += n;
	while (i < len) {
		size_t end = i;

		while (end < len && text[end] != ';')
			end++;
		{
			size_t q = i;

			while (q < end && (text[q] == ' ' || text[q] == '\t'))
				q++;
			if (q == end) { /* nothing between: a trailing ';' */
				if (end < len)
					return fail(e, end, "Missing field (TYPE NAME)");
				break;
			}
		}
		if (field_of(text, i, end, s, e))
			return -1;
		i = end + 1;
	}
	if (!s->nfields)
		return fail(e, len, "Missing fields (NAME TYPE FIELD[; TYPE FIELD...])");
	return 0;
}

void trail_synth_describe(const struct trail_synth *s, char *buf, size_t n)
{
	size_t o = (size_t)snprintf(buf, n, "%s", s->name);

	for (int i = 0; i < s->nfields && o < n; i++) {
		const struct trail_synth_field *f = &s->f[i];

		if (f->str && !strcmp(f->type, "char[]"))
			o += (size_t)snprintf(buf + o, n - o, "%s char %s[]", i ? ";" : "", f->name);
		else if (f->str)
			o += (size_t)snprintf(buf + o, n - o, "%s char %s[%u]", i ? ";" : "", f->name,
					      f->max);
		else
			o += (size_t)snprintf(buf + o, n - o, "%s %s %s", i ? ";" : "", f->type,
					      f->name);
	}
}

size_t trail_synth_meta(const struct trail_synth *s, void *buf, size_t n)
{
	uint8_t *b = buf;
	struct trail_meta_hdr h = {TRAIL_META_MAGIC, 0, 1, s->nfields};
	size_t o = sizeof(h), pl = strlen(TRAIL_SYNTH_PROVIDER) + 1, nl = strlen(s->name) + 1;

	if (o + pl + nl > n)
		return 0;
	memcpy(b + o, TRAIL_SYNTH_PROVIDER, pl);
	o += pl;
	memcpy(b + o, s->name, nl);
	o += nl;
	for (int i = 0; i < s->nfields; i++) {
		const struct trail_synth_field *f = &s->f[i];
		size_t fl = strlen(f->name);
		struct trail_meta_field mf = {
			.kind = f->str ? TRAIL_FK_STRING : TRAIL_FK_INT,
			.size = f->str ? 1 : f->size,
			.flags = (uint8_t)(f->sign && !f->str ? TRAIL_FF_SIGNED : 0),
			.namelen = (uint8_t)fl,
		};

		if (!f->str && !strcmp(f->type, "bool"))
			mf.flags |= TRAIL_FF_BOOL;
		if (o + sizeof(mf) + fl + 1 > n || o + sizeof(mf) + fl + 1 > 0xffff)
			return 0;
		memcpy(b + o, &mf, sizeof(mf));
		o += sizeof(mf);
		memcpy(b + o, f->name, fl + 1);
		o += fl + 1;
	}
	h.size = (uint16_t)o;
	memcpy(b, &h, sizeof(h));
	return o;
}

size_t trail_synth_payload_max(const struct trail_synth *s)
{
	size_t n = 0;

	for (int i = 0; i < s->nfields; i++)
		n += s->f[i].str ? 2u + s->f[i].max : s->f[i].size;
	return n;
}

size_t trail_synth_payload(const struct trail_synth *s, const uint64_t *vals,
			   const char *const *strs, const uint16_t *slen, uint8_t *buf)
{
	size_t o = 0;

	for (int i = 0; i < s->nfields; i++) {
		const struct trail_synth_field *f = &s->f[i];

		if (f->str) {
			uint16_t l = strs && strs[i] ? slen[i] : 0;

			if (l > f->max)
				l = f->max;
			memcpy(buf + o, &l, 2);
			if (l)
				memcpy(buf + o + 2, strs[i], l);
			o += 2u + l;
		} else {
			/* (little-endian: a number's low bytes) */
			switch (f->size) {
			case 8: memcpy(buf + o, &vals[i], 8); break;
			case 4: memcpy(buf + o, &vals[i], 4); break;
			case 2: memcpy(buf + o, &vals[i], 2); break;
			default: buf[o] = (uint8_t)vals[i]; break;
			}
			o += f->size;
		}
	}
	return o;
}
