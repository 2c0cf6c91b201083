/* SPDX-License-Identifier: MIT */
/*
 * parse.c - dynamic event definitions in the kernel's grammar (probe.h):
 * a text into a struct probe_def, every error with its caret where the
 * kernel's error_log puts it (kprobe_syntax_errors.tc is the model), the
 * kernel's wording where it has one, and back to the normalized text
 * `cat dynamic_events` prints. Only the grammar is checked; symbols, DWARF
 * names and eprobe fields are the compiler's (compile.c), which runs the
 * fetch-arg parser below (fetcharg.h) again on the raw fetch-args DWARF
 * gives.
 */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../common/uevent.h"
#include "fetcharg.h"

/* User space has no kprobes nor uprobes group of its own: p and r events
 * go to "probes" (the kernel's are "kprobes"/"uprobes"). */
#define GROUP_PROBES "probes"
#define GROUP_EPROBES "eprobes"
#define GROUP_WPROBES "wprobes"
#define GROUP_FUNCTIONS "functions"
/* The groups trail writes its own events into (the function tracers',
 * synthetic events, user events): a probe there would pass for one of
 * them (a probe named ftrace/funcgraph_entry nests the whole report
 * under it), so no definition takes them. */
static const char *const reserved_groups[] = {"ftrace", "synthetic", "user_events"};
#define MAX_MAXACTIVE 4096u /* KRETPROBE_MAXACTIVE_MAX */
#define MAX_STACK_NUM 2048u /* PARAM_MAX_STACK: THREAD_SIZE / 8 on x86_64 */
#define MAX_ARG_NUM 64u
/* a function event's parameter, normalized (parse_param): TYPE words (63),
 * a space, stars (8), NAME (31), [N] as written (65), NUL */
#define MAX_DECL 169
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

int trail__probe_err(struct probe_err *e, int pos, const char *fmt, ...)
{
	va_list ap;

	e->pos = pos;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int nomem(struct probe_err *e)
{
	trail__probe_err(e, -1, "out of memory");
	return -ENOMEM;
}

static int is_ident_char(char c)
{
	return isalnum((unsigned char)c) || c == '_';
}

/* the kernel's is_good_name(): a C identifier */
static int good_name(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!is_ident_char(s[i]))
			return 0;
	return 1;
}

/* s[0..n) as a whole unsigned number, C base rules (the kernel's kstrtoul) */
static int span_u64(const char *s, size_t n, int base, uint64_t *v)
{
	char buf[TRAIL_PROBE_MAX_ARGSTR + 1], *end;

	if (!n || n >= sizeof(buf) || !isdigit((unsigned char)s[0]))
		return -1;
	memcpy(buf, s, n);
	buf[n] = '\0';
	errno = 0;
	*v = strtoull(buf, &end, base);
	return errno || *end ? -1 : 0;
}

/* an optional sign, then a whole number */
static int span_s64(const char *s, size_t n, int64_t *v)
{
	int neg = n && s[0] == '-';
	uint64_t u;

	if (n && (s[0] == '+' || s[0] == '-'))
		s++, n--;
	if (span_u64(s, n, 0, &u) || u > INT64_MAX)
		return -1;
	*v = neg ? -(int64_t)u : (int64_t)u;
	return 0;
}

/* ---- types ---- */

static const struct {
	const char *name;
	uint8_t kind, size, flags;
} type_names[] = {
	{"u8", TRAIL_FK_INT, 1, 0},
	{"u16", TRAIL_FK_INT, 2, 0},
	{"u32", TRAIL_FK_INT, 4, 0},
	{"u64", TRAIL_FK_INT, 8, 0},
	{"s8", TRAIL_FK_INT, 1, TRAIL_FF_SIGNED},
	{"s16", TRAIL_FK_INT, 2, TRAIL_FF_SIGNED},
	{"s32", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED},
	{"s64", TRAIL_FK_INT, 8, TRAIL_FF_SIGNED},
	{"x8", TRAIL_FK_INT, 1, TRAIL_FF_HEX},
	{"x16", TRAIL_FK_INT, 2, TRAIL_FF_HEX},
	{"x32", TRAIL_FK_INT, 4, TRAIL_FF_HEX},
	{"x64", TRAIL_FK_INT, 8, TRAIL_FF_HEX},
	{"char", TRAIL_FK_INT, 1, TRAIL_FF_CHAR},
	{"symbol", TRAIL_FK_INT, 8, TRAIL_FF_SYM},
	{"symstr", TRAIL_FK_INT, 8, TRAIL_FF_SYM},
	{"string", TRAIL_FK_STRING, 1, 0},
	{"ustring", TRAIL_FK_STRING, 1, 0},
};

/* b<WIDTH>@<OFFSET>/<CONTAINER>, container in bits (8, 16, 32, 64) */
static int bitfield(const char *s, size_t n, int pos, struct probe_ftype *t, struct probe_err *e)
{
	const char *slash = memchr(s, '/', n), *at = memchr(s, '@', n);
	uint64_t w, o, c;

	if (!slash || span_u64(slash + 1, n - (size_t)(slash + 1 - s), 0, &c) ||
	    (c != 8 && c != 16 && c != 32 && c != 64))
		return trail__probe_err(e, pos, "Unknown type is specified");
	if (!at || at > slash || span_u64(s + 1, (size_t)(at - s - 1), 0, &w) || !w ||
	    span_u64(at + 1, (size_t)(slash - at - 1), 0, &o) || w + o > c)
		return trail__probe_err(e, pos, "Invalid bitfield");
	*t = (struct probe_ftype){TRAIL_FK_INT, (uint8_t)(c / 8), 0, (uint8_t)w, (uint8_t)o, 0};
	return 0;
}

int trail__probe_type(const char *type, int pos, struct probe_ftype *t, struct probe_err *e)
{
	const char *lb = strchr(type, '['), *rb;
	size_t n = lb ? (size_t)(lb - type) : strlen(type);
	uint64_t count = 0;
	unsigned i;

	if (lb) {
		rb = strchr(lb, ']');
		if (!rb)
			return trail__probe_err(e, pos + (int)strlen(type), "Array is not closed");
		if (rb[1])
			return trail__probe_err(e, pos + (int)(rb + 1 - type), "Array has wrong suffix");
		if (span_u64(lb + 1, (size_t)(rb - lb - 1), 0, &count) || !count)
			return trail__probe_err(e, pos + (int)(lb + 1 - type), "Invalid array size");
		if (count > TRAIL_PROBE_MAX_ARRAY)
			return trail__probe_err(e, pos + (int)(lb + 1 - type), "Array number is too big");
	}
	if (n && type[0] == 'b') {
		if (bitfield(type, n, pos, t, e))
			return -EINVAL;
		if (count)
			return trail__probe_err(e, pos, "A bitfield can not be an array");
		return 0;
	}
	for (i = 0; i < ARRAY_SIZE(type_names); i++)
		if (strlen(type_names[i].name) == n && !memcmp(type_names[i].name, type, n))
			break;
	if (i == ARRAY_SIZE(type_names))
		return trail__probe_err(e, pos, "Unknown type is specified");
	if (count && type_names[i].kind == TRAIL_FK_STRING)
		return trail__probe_err(e, pos, "String arrays are not supported");
	*t = (struct probe_ftype){type_names[i].kind, type_names[i].size, type_names[i].flags, 0, 0,
				  (uint8_t)count};
	return 0;
}

/* ---- fetch-args ---- */

static const char *const reg_names[TRAIL_PREG_COUNT] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "ip",
};

#define AT(c, off) ((c)->fixed ? (c)->pos : (c)->pos + (int)(off))

/* The helpers below get the fetch-arg f and their part's offset o and
 * length n in it. */

static int fa_reg(const char *f, size_t o, size_t n, const struct probe_fctx *c,
		  struct probe_fa *fa, struct probe_err *e)
{
	if (c->kind == 'e')
		return trail__probe_err(e, AT(c, o),
					"Invalid $-variable specified: an eprobe reads fields ($FIELD)");
	for (int r = 0; r < TRAIL_PREG_COUNT; r++)
		if (strlen(reg_names[r]) == n - 1 && !memcmp(reg_names[r], f + o + 1, n - 1)) {
			if (c->kind == 'r' && !(TRAIL_PREG_AT_RETURN >> r & 1))
				return trail__probe_err(e, AT(c, o),
					"%%%s is not saved at a return probe (only %%ax %%dx %%sp %%ip)",
					reg_names[r]);
			fa->base = FA_REG;
			fa->reg = r;
			return 0;
		}
	return trail__probe_err(e, AT(c, o), "Invalid register name");
}

/* $retval $stack $stackN $comm $argN; an eprobe's $FIELD */
static int fa_var(const char *f, size_t o, size_t n, const struct probe_fctx *c,
		  struct probe_fa *fa, struct probe_err *e)
{
	const char *v = f + o + 1;
	size_t vn = n - 1;

	if (c->kind == 'e') {
		if (!good_name(v, vn))
			return trail__probe_err(e, AT(c, o), "Invalid $-variable specified");
		fa->base = FA_FIELD;
		fa->name = (int)o + 1;
		fa->namelen = (int)vn;
		return 0;
	}
	if (c->kind == 'w') {
		if (vn == 4 && !memcmp(v, "addr", 4)) {
			fa->base = FA_WADDR;
			return 0;
		}
		if ((vn == 5 && !memcmp(v, "value", 5)) || (vn == 3 && !memcmp(v, "old", 3))) {
			fa->base = vn == 3 ? FA_WOLD : FA_WVALUE;
			/* (the watch's own width, unsigned) */
			if (!fa->typed && c->wlen)
				fa->type = (struct probe_ftype){TRAIL_FK_INT, (uint8_t)c->wlen, TRAIL_FF_HEX, 0, 0, 0};
			return 0;
		}
		if (!(vn == 4 && (!memcmp(v, "comm", 4) || !memcmp(v, "COMM", 4))))
			return trail__probe_err(e, AT(c, o),
				"Invalid $-variable specified: a wprobe has $addr, $value, $old and $comm");
	} else if ((vn == 4 && !memcmp(v, "addr", 4)) || (vn == 5 && !memcmp(v, "value", 5)) ||
		   (vn == 3 && !memcmp(v, "old", 3))) {
		return trail__probe_err(e, AT(c, o), "$%.*s is a wprobe's (w:)", (int)vn, v);
	}
	if (vn == 6 && !memcmp(v, "retval", 6)) {
		if (c->kind != 'r')
			return trail__probe_err(e, AT(c, o), "$retval is not available on probe");
		fa->base = FA_RETVAL;
		return 0;
	}
	if (vn == 4 && (!memcmp(v, "comm", 4) || !memcmp(v, "COMM", 4))) {
		fa->base = FA_COMM;
		return 0;
	}
	if (vn >= 5 && !memcmp(v, "stack", 5)) {
		fa->base = vn == 5 ? FA_STACKP : FA_STACK;
		if (vn > 5 && span_u64(v + 5, vn - 5, 10, &fa->num))
			return trail__probe_err(e, AT(c, o), "Invalid $-variable specified");
		if (fa->num > MAX_STACK_NUM)
			return trail__probe_err(e, AT(c, o), "Invalid stack number");
		return 0;
	}
	if (vn > 3 && !memcmp(v, "arg", 3) && isdigit((unsigned char)v[3])) {
		fa->base = FA_ARG;
		fa->num_pos = AT(c, o + 4);
		if (span_u64(v + 3, vn - 3, 10, &fa->num) || !fa->num || fa->num > MAX_ARG_NUM)
			return trail__probe_err(e, AT(c, o), "Invalid argument number");
		if (c->kind == 'r')
			return trail__probe_err(e, AT(c, o),
				"$argN is not available on a return probe (the entry registers are gone)");
		return 0;
	}
	return trail__probe_err(e, AT(c, o), "Invalid $-variable specified");
}

/* @ADDR, @SYM[+|-OFFS] */
static int fa_mem(const char *f, size_t o, size_t n, const struct probe_fctx *c,
		  struct probe_fa *fa, struct probe_err *e)
{
	const char *s = f + o;
	size_t i = 1;

	if (n > 1 && isdigit((unsigned char)s[1])) {
		fa->base = FA_MEM;
		if (span_u64(s + 1, n - 1, 0, &fa->num))
			return trail__probe_err(e, AT(c, o), "Invalid memory address");
		return 0;
	}
	if (n > 1 && s[1] == '+')
		return trail__probe_err(e, AT(c, o), "File offset (@+OFFS) is not supported: use @SYM");
	if (n < 2 || !(isalpha((unsigned char)s[1]) || s[1] == '_' || s[1] == '.'))
		return trail__probe_err(e, AT(c, o), "Invalid memory address");
	while (i < n && (is_ident_char(s[i]) || s[i] == '.' || s[i] == '$' || s[i] == '@'))
		i++;
	fa->base = FA_SYM;
	fa->name = (int)o + 1;
	fa->namelen = (int)i - 1;
	if (i < n && span_s64(s + i, n - i, &fa->symoff))
		return trail__probe_err(e, AT(c, o + i), "Invalid symbol offset");
	return 0;
}

/* VAR, VAR->F.G, VAR.F, VAR[I]: checked for shape only, DWARF says the rest */
static int fa_dwarf(const char *f, size_t o, size_t n, const struct probe_fctx *c,
		    struct probe_fa *fa, struct probe_err *e)
{
	const char *s = f + o;
	size_t i = 0;

	if (c->kind == 'e')
		return trail__probe_err(e, AT(c, o),
					"Invalid fetch argument: an eprobe reads fields ($FIELD)");
	if (c->kind == 'w')
		return trail__probe_err(e, AT(c, o),
			"Invalid fetch argument: a wprobe reads $addr, $value, @SYM, registers and memory");
	/* (on a return probe, a variable is read at the function's ret
	 * instructions: the compiler says whether it can be) */
	for (;;) {
		if (i >= n || !(isalpha((unsigned char)s[i]) || s[i] == '_'))
			return trail__probe_err(e, AT(c, o + i), "Invalid fetch argument");
		while (i < n && is_ident_char(s[i]))
			i++;
		while (i < n && s[i] == '[') {
			size_t j = i + 1;

			while (j < n && isdigit((unsigned char)s[j]))
				j++;
			if (j == i + 1 || j >= n || s[j] != ']')
				return trail__probe_err(e, AT(c, o + i + 1), "Invalid array index");
			i = j + 1;
		}
		if (i == n)
			break;
		if (s[i] == '-' && i + 1 < n && s[i + 1] == '>')
			i += 2;
		else if (s[i] == '-')
			return trail__probe_err(e, AT(c, o + i),
						"Failed to parse single hyphen. Forgot '>'?");
		else if (s[i] == '.')
			i++;
		else
			return trail__probe_err(e, AT(c, o + i), "Invalid fetch argument");
	}
	fa->base = FA_DWARF;
	fa->name = (int)o;
	fa->namelen = (int)n;
	return 0;
}

/* +|-OFFS(FETCHARG) levels, then the base */
static int fa_parse(const char *f, size_t o, size_t n, const struct probe_fctx *c,
		    struct probe_fa *fa, struct probe_err *e)
{
	for (;;) {
		const char *s = f + o, *lp, *rp;
		size_t k = 1;
		uint64_t off;

		if (!n || (s[0] != '+' && s[0] != '-'))
			break;
		if (n > 1 && s[1] == 'u') /* +u: user memory, and all of it is */
			k = 2;
		lp = memchr(s, '(', n);
		if (!lp)
			return trail__probe_err(e, AT(c, o), "Dereference needs a brace");
		if (span_u64(s + k, (size_t)(lp - s) - k, 0, &off) || off > INT64_MAX)
			return trail__probe_err(e, AT(c, o), "Invalid dereference offset");
		for (rp = s + n - 1; rp > lp && *rp != ')'; rp--)
			;
		if (rp == lp)
			return trail__probe_err(e, AT(c, o + n), "Dereference brace is not closed");
		if (rp != s + n - 1)
			return trail__probe_err(e, AT(c, rp + 1 - f), "Dereference has wrong suffix");
		if (!fa->nderef)
			fa->deep_pos = AT(c, lp + 1 - f);
		if (fa->nderef == TRAIL_PROBE_MAX_INSNS)
			return trail__probe_err(e, AT(c, lp + 1 - f), "Dereference is too much nested");
		fa->off[fa->nderef++] = s[0] == '-' ? -(int64_t)off : (int64_t)off;
		n = (size_t)(rp - lp - 1);
		o = (size_t)(lp + 1 - f);
	}
	fa->base_pos = AT(c, o);
	if (!n)
		return trail__probe_err(e, fa->base_pos, "Invalid fetch argument");
	switch (f[o]) {
	case '%':
		return fa_reg(f, o, n, c, fa, e);
	case '$':
		return fa_var(f, o, n, c, fa, e);
	case '@':
		return fa_mem(f, o, n, c, fa, e);
	case '\\': { /* \IMM, an immediate (a USDT argument's constant) */
		int64_t v;

		if (fa->nderef || span_s64(f + o + 1, n - 1, &v))
			return trail__probe_err(e, fa->base_pos, "Invalid immediate value");
		fa->base = FA_IMM;
		fa->num = (uint64_t)v;
		return 0;
	}
	}
	if (isalpha((unsigned char)f[o]) || f[o] == '_')
		return fa_dwarf(f, o, n, c, fa, e);
	return trail__probe_err(e, fa->base_pos, "Invalid fetch argument");
}

/* ops of the argument's program: base, dereferences, bitfield, store; a
 * string or array store takes the last dereference in */
static int nops(const struct probe_fa *fa)
{
	int deref = fa->nderef + (fa->base == FA_MEM || fa->base == FA_SYM || fa->base == FA_WVALUE);
	int n = fa->base == FA_COMM ? 0 : 1 + deref;

	if ((fa->type.kind == TRAIL_FK_STRING || fa->type.count) && deref)
		n--;
	return n + (fa->type.bw != 0) + 1;
}

int trail__probe_fit(const struct probe_fa *fa, const struct probe_fctx *c, struct probe_err *e)
{
	const struct probe_ftype *t = &fa->type;
	int mem = fa->nderef || fa->base == FA_MEM || fa->base == FA_SYM || fa->base == FA_WVALUE;

	if (fa->base == FA_COMM) {
		if (fa->nderef)
			return trail__probe_err(e, fa->base_pos, "$comm can not be dereferenced");
		if (t->kind != TRAIL_FK_STRING)
			return trail__probe_err(e, fa->type_pos,
						"$comm and immediate-string only accepts string type");
	}
	if (t->kind == TRAIL_FK_STRING && !mem && fa->base != FA_FIELD && fa->base != FA_COMM)
		return trail__probe_err(e, fa->type_pos, "String accepts only memory argument");
	if (t->count && !mem)
		return trail__probe_err(e, fa->type_pos, "Array accepts only memory argument");
	if (nops(fa) > (int)TRAIL_PROBE_MAX_INSNS)
		return trail__probe_err(e, fa->nderef ? fa->deep_pos : AT(c, 0),
					"Dereference is too much nested");
	return 0;
}

int trail__probe_fetcharg(const char *fetch, const char *type, const struct probe_fctx *c,
			  struct probe_fa *fa, struct probe_err *e)
{
	memset(fa, 0, sizeof(*fa));
	fa->type_pos = c->tpos >= 0 ? c->tpos : c->pos;
	fa->typed = type != NULL;
	/* the kernel's default type: unsigned long in hex (x64) */
	fa->type = (struct probe_ftype){TRAIL_FK_INT, 8, TRAIL_FF_HEX, 0, 0, 0};
	if (type && trail__probe_type(type, fa->type_pos, &fa->type, e))
		return -EINVAL;
	if (fa_parse(fetch, 0, strlen(fetch), c, fa, e))
		return -EINVAL;
	if (fa->base == FA_COMM && !type)
		fa->type = (struct probe_ftype){TRAIL_FK_STRING, 1, 0, 0, 0, 0};
	if (fa->base == FA_DWARF)
		return 0; /* its value is the compiler's to know */
	return trail__probe_fit(fa, c, e);
}

/* ---- definitions ---- */

struct tok {
	const char *s;
	int len, pos;
};

static int split(const char *text, struct tok **out)
{
	int n = 0, cap = 0;
	struct tok *t = NULL;

	for (const char *p = text;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (!*p)
			break;
		if (n == cap) {
			struct tok *nt = realloc(t, (size_t)(cap = cap ? 2 * cap : 16) * sizeof(*t));

			if (!nt)
				return free(t), -1;
			t = nt;
		}
		t[n].s = p;
		t[n].pos = (int)(p - text);
		while (*p && !isspace((unsigned char)*p))
			p++;
		t[n].len = (int)(p - t[n].s);
		n++;
	}
	*out = t;
	return n;
}

/* [GRP/][EVENT] (or GRP.EVENT) at pos */
int probe_group_reserved(const char *group)
{
	for (size_t i = 0; i < ARRAY_SIZE(reserved_groups); i++)
		if (!strcmp(group, reserved_groups[i]))
			return 1;
	return 0;
}

static int event_name(const char *s, int n, int pos, char *grp, char *ev, struct probe_err *e)
{
	const char *slash = memchr(s, '/', (size_t)n);

	if (!slash)
		slash = memchr(s, '.', (size_t)n);
	if (slash) {
		int gl = (int)(slash - s);

		if (!gl)
			return trail__probe_err(e, pos, "Group name is not specified");
		if (gl + 1 > (int)TRAIL_PROBE_MAX_EVNAME)
			return trail__probe_err(e, pos, "Group name is too long");
		if (!good_name(s, (size_t)gl))
			return trail__probe_err(e, pos,
				"Group name must follow the same rules as C identifiers");
		memcpy(grp, s, (size_t)gl);
		grp[gl] = '\0';
		pos += gl + 1;
		n -= gl + 1;
		s = slash + 1;
	}
	if (!n && slash)
		return 0;
	if (!n)
		return trail__probe_err(e, pos, "Event name is not specified");
	if (n >= (int)TRAIL_PROBE_MAX_EVNAME)
		return trail__probe_err(e, pos, "Event name is too long");
	if (!good_name(s, (size_t)n))
		return trail__probe_err(e, pos, "Event name must follow the same rules as C identifiers");
	memcpy(ev, s, (size_t)n);
	ev[n] = '\0';
	return 0;
}

/* p r e -, r's MAXACTIVE; *evs: the [GRP/][EVENT] part after ':' */
static int parse_head(const struct tok *t, struct probe_def *d, const char **evs, int *evn,
		      struct probe_err *e)
{
	const char *colon = memchr(t->s, ':', (size_t)t->len);
	int hl = colon ? (int)(colon - t->s) : t->len;
	uint64_t maxact;

	d->kind = t->s[0];
	if (!strchr("prew-", d->kind))
		return trail__probe_err(e, t->pos, "Unknown probe type: p, r, e, w, -: or FUNC(TYPE NAME, ...)");
	if (hl > 1 && isdigit((unsigned char)t->s[1])) {
		if (d->kind != 'r')
			return trail__probe_err(e, t->pos + 1, "Maxactive is only for function exit");
		if (span_u64(t->s + 1, (size_t)hl - 1, 0, &maxact) || !maxact)
			return trail__probe_err(e, t->pos + 1, "Invalid maxactive number");
		if (maxact > MAX_MAXACTIVE)
			return trail__probe_err(e, t->pos + 1, "Maxactive is too big");
	} else if (hl > 1) {
		return trail__probe_err(e, t->pos + 1, "Unknown probe type: p, r, e, w, -: or FUNC(TYPE NAME, ...)");
	}
	if (d->kind == '-' && !colon)
		return trail__probe_err(e, t->pos + 1, "Event name is not specified");
	*evs = colon ? colon + 1 : NULL;
	*evn = colon ? t->len - hl - 1 : 0;
	return 0;
}

/* An object: a path, or a library (libfoo.so, libfoo.so.1). */
static int is_obj(const char *s, size_t n)
{
	return memchr(s, '/', n) || (n > 3 && !memcmp(s + n - 3, ".so", 3)) ||
	       memmem(s, n, ".so.", 4);
}

static int is_sym(const char *s, size_t n)
{
	if (!n || !(isalpha((unsigned char)s[0]) || s[0] == '_' || s[0] == '.'))
		return 0;
	for (size_t i = 1; i < n; i++)
		if (!is_ident_char(s[i]) && s[i] != '.' && s[i] != '$' && s[i] != '@')
			return 0;
	return 1;
}

/* A source file's name: a C, C++ or assembly source or header */
static int is_srcfile(const char *s, size_t n)
{
	static const char *const ext[] = {".c", ".h", ".cc", ".cpp", ".cxx", ".hh", ".hpp",
					  ".hxx", ".C", ".S", ".s", ".inc"};

	for (size_t i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		size_t l = strlen(ext[i]);

		if (n > l && !memcmp(s + n - l, ext[i], l))
			return 1;
	}
	return 0;
}

/* [OBJ:]FUNC:RLN or [OBJ:]FILE:LINE (perf probe's lines): 1 if the point
 * is one (then parsed, or 0 returned through *r with e), else 0 */
static int line_point(const struct tok *t, struct probe_def *d, struct probe_err *e, int *r)
{
	const char *s = t->s, *lc = NULL, *first = memchr(s, ':', (size_t)t->len), *p;
	size_t n = (size_t)t->len, k;
	unsigned long v;

	for (size_t i = n; i-- > 0 && !lc;)
		if (s[i] == ':')
			lc = s + i;
	if (!lc || lc + 1 == s + n)
		return 0;
	for (p = lc + 1; p < s + n; p++)
		if (!isdigit((unsigned char)*p))
			return 0;
	if (first != lc) { /* OBJ:...: the object first */
		if (!is_obj(s, (size_t)(first - s)))
			return 0;
		s = first + 1;
	} else if (is_obj(s, (size_t)(lc - s)) && !is_srcfile(s, (size_t)(lc - s))) {
		return 0; /* PATH:OFFSET (src/app.c:42 is a line) */
	}
	k = (size_t)(lc - s);
	*r = -EINVAL;
	if (d->kind != 'p') {
		trail__probe_err(e, t->pos, "A source line is for p: probes (a return is FUNC%%return)");
		return 1;
	}
	errno = 0;
	v = strtoul(lc + 1, NULL, 10);
	if (errno || v > 10000000) {
		trail__probe_err(e, t->pos + (int)(lc + 1 - t->s), "Invalid line number");
		return 1;
	}
	d->srcfile = is_srcfile(s, k);
	if (!k || (!d->srcfile && !is_sym(s, k))) {
		trail__probe_err(e, t->pos + (int)(s - t->s),
				 "A line needs a function (FUNC:RLN) or a source file (FILE:LINE)");
		return 1;
	}
	if ((s != t->s && !(d->obj = strndup(t->s, (size_t)(first - t->s)))) ||
	    !(d->sym = strndup(s, k))) {
		*r = nomem(e);
		return 1;
	}
	d->line = (int)v;
	d->lined = 1;
	d->sym_pos = t->pos + (int)(s - t->s);
	*r = 0;
	return 1;
}

/* [OBJ:]SYM[+OFFS][%return] */
static int parse_point(const struct tok *t, struct probe_def *d, struct probe_err *e)
{
	const char *s = t->s, *colon = memchr(s, ':', (size_t)t->len), *pct, *op;
	size_t n = (size_t)t->len;
	int64_t off = 0;
	int r;

	if (line_point(t, d, e, &r))
		return r;

	pct = memchr(s, '%', n);
	if (pct) {
		if (d->kind == 'f' || n - (size_t)(pct - s) != 7 || memcmp(pct, "%return", 7))
			return trail__probe_err(e, t->pos + (int)(pct - s), "Invalid probed address suffix");
		d->kind = 'r';
		n = (size_t)(pct - s);
	}
	if (colon) {
		if (!is_obj(s, (size_t)(colon - s)))
			return trail__probe_err(e, t->pos,
				"OBJ:SYM needs a path or a library name as OBJ (libfoo.so:func)");
		if (!(d->obj = strndup(s, (size_t)(colon - s))))
			return nomem(e);
		n -= (size_t)(colon + 1 - s);
		s = colon + 1;
	}
	if (colon && n && isdigit((unsigned char)s[0])) {
		/* PATH:OFFSET, uprobe_events' form: a file offset */
		uint64_t v;

		if (d->kind != 'p' || span_u64(s, n, 0, &v))
			return trail__probe_err(e, t->pos + (int)(s - t->s),
						d->kind != 'p' ? "PATH:OFFSET is for p: probes"
							       : "Invalid file offset");
		if (!(d->sym = strndup(s, n)))
			return nomem(e);
		d->offset = v;
		d->fileoff = 1;
		d->sym_pos = t->pos;
		return 0;
	}
	op = strpbrk(s, "+-");
	if (op && op < s + n) {
		if (span_s64(op, n - (size_t)(op - s), &off) || off < 0 || off > UINT32_MAX)
			return trail__probe_err(e, t->pos, "Invalid probed address or symbol");
		n = (size_t)(op - s);
	}
	if (n && isdigit((unsigned char)s[0]))
		return trail__probe_err(e, t->pos, "Invalid probed address or symbol: give a function name");
	if (!is_sym(s, n))
		return trail__probe_err(e, t->pos, "Invalid probed address or symbol");
	if (d->kind == 'r' && off)
		return trail__probe_err(e, t->pos, "Retprobe address must be an function entry");
	if (!(d->sym = strndup(s, n)))
		return nomem(e);
	d->offset = (uint64_t)off;
	d->sym_pos = t->pos;
	return 0;
}

/* w's SPEC: [r|w|rw]@<ADDR|[OBJ:]SYM[+|-OFFS]>[:LEN] */
static int parse_wspec(const struct tok *t, struct probe_def *d, struct probe_err *e)
{
	const char *s = t->s, *at = memchr(s, '@', (size_t)t->len), *end = s + t->len, *lc, *colon, *op;
	int64_t off = 0;

	d->wpos = t->pos;
	if (!at)
		return trail__probe_err(e, t->pos, "Invalid watch specification: [r|w|rw]@ADDR|SYM[:LEN]");
	if (at == s || (at - s == 2 && !memcmp(s, "rw", 2)))
		d->wtype = 3;
	else if (at - s == 1 && s[0] == 'r')
		d->wtype = 1;
	else if (at - s == 1 && s[0] == 'w')
		d->wtype = 2;
	else
		return trail__probe_err(e, t->pos, "Invalid access type: r, w or rw");
	s = at + 1;
	/* :LEN, the last ':' followed by digits only (OBJ:SYM has one too) */
	for (lc = end; lc > s && lc[-1] != ':'; lc--)
		;
	if (lc > s && lc < end && strspn(lc, "0123456789") == (size_t)(end - lc)) {
		uint64_t v;

		if (span_u64(lc, (size_t)(end - lc), 10, &v) || (v != 1 && v != 2 && v != 4 && v != 8))
			return trail__probe_err(e, t->pos + (int)(lc - t->s),
						"Invalid length: 1, 2, 4 or 8 bytes");
		d->wlen = (int)v;
		end = lc - 1;
	} else if (lc > s && lc == end) {
		return trail__probe_err(e, t->pos + (int)(lc - t->s), "Invalid length: 1, 2, 4 or 8 bytes");
	}
	if (s == end)
		return trail__probe_err(e, t->pos + (int)(s - t->s), "Invalid watch address or symbol");
	if (end - s == 2 && !memcmp(s, "-1", 2)) {
		/* no address yet: a set_wprobe trigger gives one (the wprobe
		 * series' dummy address) */
		if (!(d->sym = strdup("-1")))
			return nomem(e);
		d->offset = UINT64_MAX;
		d->wabs = 1;
		d->sym_pos = t->pos + (int)(s - t->s);
		return 0;
	}
	if (isdigit((unsigned char)s[0])) { /* an address */
		uint64_t v;

		if (span_u64(s, (size_t)(end - s), 0, &v))
			return trail__probe_err(e, t->pos + (int)(s - t->s), "Invalid watch address");
		/* (its text as listed: 0x..., whatever the base written) */
		if (asprintf(&d->sym, "0x%llx", (unsigned long long)v) < 0) {
			d->sym = NULL;
			return nomem(e);
		}
		d->offset = v;
		d->wabs = 1;
		d->sym_pos = t->pos + (int)(s - t->s);
		return 0;
	}
	colon = memchr(s, ':', (size_t)(end - s));
	if (colon) {
		if (!is_obj(s, (size_t)(colon - s)))
			return trail__probe_err(e, t->pos + (int)(s - t->s),
				"OBJ:SYM needs a path or a library name as OBJ (libfoo.so:var)");
		if (!(d->obj = strndup(s, (size_t)(colon - s))))
			return nomem(e);
		s = colon + 1;
	}
	d->sym_pos = t->pos + (int)(s - t->s);
	op = s;
	while (op < end && *op != '+' && *op != '-')
		op++;
	if (op < end && span_s64(op, (size_t)(end - op), &off))
		return trail__probe_err(e, t->pos + (int)(op - t->s), "Invalid symbol offset");
	if (!is_sym(s, (size_t)(op - s)))
		return trail__probe_err(e, d->sym_pos, "Invalid watch address or symbol");
	if (!(d->sym = strndup(s, (size_t)(op - s))))
		return nomem(e);
	d->offset = (uint64_t)off;
	return 0;
}

/* e's source, SYS/EVENT or SYS.EVENT, kept as "SYS:EVENT" */
static int parse_source(const struct tok *t, struct probe_def *d, struct probe_err *e)
{
	char sys[TRAIL_PROBE_MAX_EVNAME] = "", ev[TRAIL_PROBE_MAX_EVNAME] = "";

	if (event_name(t->s, t->len, t->pos, sys, ev, e))
		return -EINVAL;
	if (!sys[0] || !ev[0])
		return trail__probe_err(e, t->pos, "This requires both group and event name to attach");
	if (!(d->sym = malloc(strlen(sys) + strlen(ev) + 2)))
		return nomem(e);
	sprintf(d->sym, "%s:%s", sys, ev);
	d->sym_pos = t->pos;
	return 0;
}

static int reserved(const char *name)
{
	return !strncmp(name, "common_", 7) || !strcmp(name, "__probe_ip") ||
	       !strcmp(name, "__probe_ret_ip") || !strcmp(name, "__probe_func") ||
	       !strcmp(name, "__probe_fault");
}

/* name checks: the kernel's order and carets (all at the argument) */
static int arg_name(struct probe_def *d, int i, const char *name, size_t n, int pos,
		    struct probe_err *e)
{
	if (n >= TRAIL_PROBE_MAX_NAME)
		return trail__probe_err(e, pos, "Argument name is too long");
	if (!n)
		return trail__probe_err(e, pos, "Argument name is not specified");
	if (!good_name(name, n))
		return trail__probe_err(e, pos, "Argument name must follow the same rules as C identifiers");
	memcpy(d->args[i].name, name, n);
	d->args[i].name[n] = '\0';
	if (reserved(d->args[i].name))
		return trail__probe_err(e, pos, "This argument name is reserved");
	for (int j = 0; j < i; j++)
		if (!strcmp(d->args[j].name, d->args[i].name))
			return trail__probe_err(e, pos, "This argument name is already used");
	return 0;
}

static int is_all_args(const char *s, size_t n)
{
	return (n >= 6 && !memcmp(s, "$$args", 6) && (n == 6 || s[6] == ':')) ||
	       (n >= 5 && !memcmp(s, "$arg*", 5) && (n == 5 || s[5] == ':'));
}

/* [NAME=]FETCHARG[:TYPE] */
static int parse_arg(struct probe_def *d, int i, const struct tok *t, int *all_args,
		     struct probe_err *e)
{
	struct probe_arg *a = &d->args[i];
	const char *eq = memchr(t->s, '=', (size_t)t->len), *body = eq ? eq + 1 : t->s, *colon;
	int blen = t->len - (int)(body - t->s), bpos = t->pos + (int)(body - t->s);
	struct probe_fctx c = {d->kind == 'f' ? 'p' : d->kind, bpos, 0, 0, d->wlen ? d->wlen : 8};
	struct probe_fa fa;
	char dflt[16];

	a->pos = t->pos;
	a->fetch_pos = bpos;
	a->type_pos = -1;
	if (is_all_args(body, (size_t)blen)) {
		if (eq || memchr(body, ':', (size_t)blen))
			return trail__probe_err(e, t->pos,
				"$arg* must be an independent parameter without name etc.");
		if (*all_args)
			return trail__probe_err(e, t->pos, "$arg* can be used only once in the parameters");
		if (d->kind != 'p')
			return trail__probe_err(e, t->pos, d->kind == 'e' ?
				"$arg* can be used only on function entry or exit" :
				"$arg* is not available on a return probe (the entry registers are gone)");
		*all_args = 1;
		return (a->fetch = strndup(body, (size_t)blen)) ? 0 : nomem(e);
	}
	colon = memchr(body, ':', (size_t)blen);
	if (eq) {
		if (arg_name(d, i, t->s, (size_t)(eq - t->s), t->pos, e))
			return -EINVAL;
		a->named = 1;
	} else if (good_name(body, colon ? (size_t)(colon - body) : (size_t)blen) &&
		   (colon ? colon - body : blen) < (int)TRAIL_PROBE_MAX_NAME) {
		/* a bare variable names itself, as the kernel's BTF args do */
		if (arg_name(d, i, body, colon ? (size_t)(colon - body) : (size_t)blen, t->pos, e))
			return -EINVAL;
	} else {
		snprintf(dflt, sizeof(dflt), "arg%d", i + 1);
		if (arg_name(d, i, dflt, strlen(dflt), t->pos, e))
			return -EINVAL;
	}
	if (blen > (int)TRAIL_PROBE_MAX_ARGSTR)
		return trail__probe_err(e, bpos, "Argument expression is too long");
	if (!blen)
		return trail__probe_err(e, bpos, "No argument expression");
	if (!(a->fetch = strndup(body, colon ? (size_t)(colon - body) : (size_t)blen)))
		return nomem(e);
	if (colon) {
		a->type_pos = bpos + (int)(colon + 1 - body);
		if (!(a->type = strndup(colon + 1, (size_t)(body + blen - colon - 1))))
			return nomem(e);
	}
	c.tpos = a->type_pos;
	return trail__probe_fetcharg(a->fetch, a->type, &c, &fa, e);
}

static int parse_args(struct probe_def *d, const struct tok *t, int n, struct probe_err *e)
{
	int all_args = 0;

	/* an eprobe's `if FILTER`: the rest of the text (the filter's own
	 * grammar, checked against the source event's fields when compiled) */
	for (int i = 0; i < n; i++)
		if (d->kind == 'e' && t[i].len == 2 && !memcmp(t[i].s, "if", 2)) {
			size_t len;

			if (i + 1 == n)
				return trail__probe_err(e, t[i].pos + 2, "Meaningless filter expression");
			len = strlen(t[i + 1].s);
			while (len && isspace((unsigned char)t[i + 1].s[len - 1]))
				len--;
			/* one line, as dynamic_events keeps it */
			for (size_t k = 0; k < len; k++)
				if (t[i + 1].s[k] == '\n' || t[i + 1].s[k] == '\r' ||
				    t[i + 1].s[k] == '\v' || t[i + 1].s[k] == '\f')
					return trail__probe_err(e, t[i + 1].pos + (int)k,
								"A filter is one line");
			if (!(d->filter = strndup(t[i + 1].s, len)))
				return nomem(e);
			d->filter_pos = t[i + 1].pos;
			n = i;
			break;
		}
	if (n > (int)TRAIL_PROBE_MAX_ARGS)
		return trail__probe_err(e, t[0].pos, "Too many arguments are specified");
	if (n && !(d->args = calloc((size_t)n, sizeof(*d->args))))
		return nomem(e);
	for (int i = 0; i < n; i++) {
		d->nargs = i + 1;
		if (parse_arg(d, i, &t[i], &all_args, e))
			return -EINVAL;
	}
	return 0;
}

/* the kernel's default names: p_SYM_OFFS, r_SYM_0, sanitized */
static void default_event(struct probe_def *d)
{
	if (d->lined) { /* perf's FUNC_L3, as p_FUNC_L3 (p_app_c_L42) */
		snprintf(d->event, sizeof(d->event), "p_%s_L%d", d->sym, d->line);
	} else if (d->fileoff) { /* p_BASENAME_0xOFFSET */
		const char *b = strrchr(d->obj, '/');

		snprintf(d->event, sizeof(d->event), "p_%s_0x%llx", b ? b + 1 : d->obj,
			 (unsigned long long)d->offset);
	} else if (d->kind == 'w' && d->wabs && d->offset == UINT64_MAX) {
		snprintf(d->event, sizeof(d->event), "w_unset");
	} else if (d->kind == 'w' && d->wabs) { /* w_0xADDR */
		snprintf(d->event, sizeof(d->event), "w_0x%llx", (unsigned long long)d->offset);
	} else if (d->kind == 'w') { /* w_SYM, w_SYM_OFFS */
		snprintf(d->event, sizeof(d->event), d->offset ? "w_%s_%lld" : "w_%s", d->sym,
			 (long long)d->offset);
	} else {
		snprintf(d->event, sizeof(d->event), "%c_%s_%llu", d->kind, d->sym,
			 (unsigned long long)d->offset);
	}
	for (char *p = d->event; *p; p++)
		if (!is_ident_char(*p))
			*p = '_';
}

static int parse_probe(const struct tok *t, int n, struct probe_def *d, struct probe_err *e)
{
	const char *evs = NULL;
	/* past the end and a space, as the kernel; but inside the text */
	int evn = 0, last = t[n - 1].pos + t[n - 1].len + (t[n - 1].s[t[n - 1].len] != '\0');

	if (parse_head(&t[0], d, &evs, &evn, e))
		return -EINVAL;
	if (d->kind == '-') {
		if (event_name(evs, evn, (int)(evs - t[0].s) + t[0].pos, d->group, d->event, e))
			return -EINVAL;
		if (!d->event[0])
			return trail__probe_err(e, t[0].pos + t[0].len, "Event name is not specified");
		if (n > 1)
			return trail__probe_err(e, t[1].pos, "A delete takes no arguments");
		d->named = 1;
		return 0;
	}
	if (d->kind == 'w') {
		if (n < 2)
			return trail__probe_err(e, last, "Watch point is not specified");
		if (parse_wspec(&t[1], d, e))
			return -EINVAL;
	} else if (d->kind != 'e') {
		if (n < 2)
			return trail__probe_err(e, last, "Probe point is not specified");
		if (parse_point(&t[1], d, e))
			return -EINVAL;
	}
	strcpy(d->group, d->kind == 'e' ? GROUP_EPROBES : d->kind == 'w' ? GROUP_WPROBES : GROUP_PROBES);
	if (evs && event_name(evs, evn, (int)(evs - t[0].s) + t[0].pos, d->group, d->event, e))
		return -EINVAL;
	if (probe_group_reserved(d->group))
		return trail__probe_err(e, (int)(evs - t[0].s) + t[0].pos,
					"Group '%s' is trail's own (%s, %s, %s are reserved)", d->group,
					reserved_groups[0], reserved_groups[1], reserved_groups[2]);
	d->named = d->event[0] != '\0';
	if (d->kind == 'e') {
		if (n < 2)
			return trail__probe_err(e, last, "This requires both group and event name to attach");
		if (parse_source(&t[1], d, e))
			return -EINVAL;
		if (!d->named)
			strcpy(d->event, strchr(d->sym, ':') + 1);
	} else if (!d->named) {
		default_event(d);
	}
	return parse_args(d, t + 2, n - 2, e);
}

/* ---- function events: SYM(TYPE NAME, TYPE NAME[N], ...) ---- */

static const struct {
	const char *c, *type;
} c_types[] = {
	{"char", "char"}, {"signed char", "s8"}, {"unsigned char", "u8"},
	{"short", "s16"}, {"short int", "s16"}, {"unsigned short", "u16"},
	{"int", "s32"}, {"signed", "s32"}, {"signed int", "s32"},
	{"unsigned", "u32"}, {"unsigned int", "u32"},
	{"long", "s64"}, {"long int", "s64"}, {"unsigned long", "u64"},
	{"long long", "s64"}, {"unsigned long long", "u64"}, {"bool", "u8"}, {"_Bool", "u8"},
};

/* words[] gets w; 0 or -1: too long */
static int type_word(char *words, size_t sz, const char *w, size_t n)
{
	if (strlen(words) + n + 2 > sz)
		return -1;
	if (words[0])
		strcat(words, " ");
	strncat(words, w, n);
	return 0;
}

/* a C type ("unsigned int", "const char" with stars) to a fetch type */
static const char *c_type(const char *decl, int stars)
{
	char words[64] = "";

	/* qualifiers change nothing here */
	for (const char *w = decl; *w; w += strspn(w, " ")) {
		size_t n = strcspn(w, " ");

		if (!(n == 5 && !memcmp(w, "const", 5)) && !(n == 8 && !memcmp(w, "volatile", 8)))
			type_word(words, sizeof(words), w, n);
		w += n;
	}
	if (stars)
		return stars == 1 && !strcmp(words, "char") ? "string" : "x64";
	for (unsigned i = 0; i < ARRAY_SIZE(c_types); i++)
		if (!strcmp(words, c_types[i].c))
			return c_types[i].type;
	for (unsigned i = 0; i < ARRAY_SIZE(type_names); i++)
		if (!strcmp(words, type_names[i].name))
			return type_names[i].name; /* u8..x64, string, symbol, ... */
	return NULL;
}

/*
 * One parameter, text[a..b): TYPE words, stars, the NAME, maybe [N].
 * Parameter i is $arg(i+1); a string is the one its char * points to, an
 * array the one it points to. decl: the declaration, normalized
 * ("char *path", "int v[4]").
 */
static int parse_param(const char *text, int a, int b, struct probe_def *d, int i,
		       char *decl, size_t declsz, struct probe_err *e)
{
	struct probe_arg *arg = &d->args[i];
	char words[64] = "", fetch[24], type[24];
	int stars = 0, name_stars = 0, name = -1, namelen = 0, tpos = -1, lb = -1, rb = -1, p = a;
	const char *ft;
	struct probe_ftype t;
	uint64_t count = 0;

	while (p < b) {
		int q = p;

		if (isspace((unsigned char)text[p])) {
			p++;
			continue;
		}
		if (rb >= 0 || !(text[p] == '*' || text[p] == '[' || isalpha((unsigned char)text[p]) ||
				 text[p] == '_'))
			return trail__probe_err(e, p, "Invalid parameter: TYPE NAME");
		if (text[p] == '*') {
			stars++, p++;
			continue;
		}
		if (text[p] == '[') {
			if (name < 0)
				return trail__probe_err(e, p, "Argument name is not specified");
			for (lb = p; p < b && text[p] != ']'; p++)
				;
			if (p == b)
				return trail__probe_err(e, b, "Array is not closed");
			if (span_u64(text + lb + 1, (size_t)(p - lb - 1), 0, &count) || !count)
				return trail__probe_err(e, lb + 1, "Invalid array size");
			if (count > TRAIL_PROBE_MAX_ARRAY)
				return trail__probe_err(e, lb + 1, "Array number is too big");
			rb = p++;
			continue;
		}
		while (q < b && is_ident_char(text[q]))
			q++;
		if (name >= 0) { /* the word before was the type's */
			if (name_stars) /* stars go between the type and the name */
				return trail__probe_err(e, name, "Invalid parameter: TYPE NAME");
			if (type_word(words, sizeof(words), text + name, (size_t)namelen))
				return trail__probe_err(e, name, "Unknown type is specified");
			if (tpos < 0)
				tpos = name;
		}
		name_stars = stars;
		name = p;
		namelen = q - p;
		p = q;
	}
	if (name < 0 || tpos < 0)
		return trail__probe_err(e, name < 0 ? b : name + namelen, "Argument name is not specified");
	if (stars > name_stars)
		return trail__probe_err(e, name, "Invalid parameter: TYPE NAME");
	ft = c_type(words, stars);
	if (!ft)
		return trail__probe_err(e, tpos, "Unknown type is specified");
	if (arg_name(d, i, text + name, (size_t)namelen, name, e))
		return -EINVAL;
	trail__probe_type(ft, tpos, &t, e);
	if (count && t.kind == TRAIL_FK_STRING)
		return trail__probe_err(e, tpos, "String arrays are not supported");
	snprintf(fetch, sizeof(fetch), t.kind == TRAIL_FK_STRING || count ? "+0($arg%d)" : "$arg%d",
		 i + 1);
	snprintf(type, sizeof(type), count ? "%s[%llu]" : "%s", ft, (unsigned long long)count);
	arg->named = 1;
	arg->pos = a;
	arg->fetch_pos = a;
	arg->type_pos = tpos;
	if (!(arg->fetch = strdup(fetch)) || !(arg->type = strdup(type)))
		return nomem(e);
	if (decl)
		snprintf(decl, declsz, "%s %.*s%.*s%.*s", words, stars, "********", namelen,
			 text + name, lb < 0 ? 0 : rb + 1 - lb, lb < 0 ? "" : text + lb);
	return 0;
}

/* decls (NULL: not wanted): one normalized declaration per parameter */
static int parse_func(const char *text, struct probe_def *d, char (*decls)[MAX_DECL],
		      struct probe_err *e)
{
	const char *lp = strchr(text, '('), *rp = strrchr(text, ')');
	struct tok pt = {text, 0, 0};
	int a, n = 0, end;

	while (isspace((unsigned char)*pt.s))
		pt.s++;
	pt.pos = (int)(pt.s - text);
	pt.len = (int)(lp - pt.s);
	while (pt.len && isspace((unsigned char)pt.s[pt.len - 1]))
		pt.len--;
	d->kind = 'f';
	if (parse_point(&pt, d, e))
		return -EINVAL;
	if (d->offset)
		return trail__probe_err(e, pt.pos, "A function event has no offset");
	if (strlen(d->sym) >= TRAIL_PROBE_MAX_EVNAME)
		return trail__probe_err(e, pt.pos, "Event name is too long");
	if (!good_name(d->sym, strlen(d->sym)))
		return trail__probe_err(e, pt.pos, "Event name must follow the same rules as C identifiers");
	strcpy(d->group, GROUP_FUNCTIONS);
	strcpy(d->event, d->sym);
	d->named = 1;
	if (!rp || rp < lp)
		return trail__probe_err(e, (int)strlen(text), "Parameter list is not closed");
	for (const char *s = rp + 1; *s; s++)
		if (!isspace((unsigned char)*s))
			return trail__probe_err(e, (int)(s - text), "Parameter list has wrong suffix");
	a = (int)(lp + 1 - text);
	end = (int)(rp - text);
	while (a < end && isspace((unsigned char)text[a]))
		a++;
	if (a == end || (end - a >= 4 && !strncmp(text + a, "void", 4) &&
			 strspn(text + a + 4, " \t") == (size_t)(end - a - 4)))
		return 0;
	for (const char *s = text + a; s < rp; s++)
		n += *s == ',';
	if (++n > (int)TRAIL_PROBE_MAX_ARGS)
		return trail__probe_err(e, a, "Too many arguments are specified");
	if (!(d->args = calloc((size_t)n, sizeof(*d->args))))
		return nomem(e);
	for (int i = 0; i < n; i++) {
		const char *comma = memchr(text + a, ',', (size_t)(end - a));
		int b = comma ? (int)(comma - text) : end;

		while (a < b && isspace((unsigned char)text[a]))
			a++;
		d->nargs = i + 1;
		if (parse_param(text, a, b, d, i, decls ? decls[i] : NULL, sizeof(decls[0]), e))
			return -EINVAL;
		a = b + 1;
	}
	return 0;
}

/* SYM(...) rather than a p, r, e or - head? */
static int is_func(const struct tok *t, int n)
{
	return memchr(t[0].s, '(', (size_t)t[0].len) || (n > 1 && t[1].s[0] == '(');
}

/*
 * u:NAME [TYPE FIELD[;TYPE FIELD...]]: a user event (the kernel's
 * dynamic_events line for user_events: uevent.h's grammar, trail's types
 * too), kept in group user_events; sym holds the definition after "u:".
 */
static int parse_user(const char *text, size_t at, struct probe_def *d, struct probe_err *e)
{
	struct trail_ue_def *def = malloc(sizeof(*def));
	struct trail_filter_err fe = {0, ""};
	struct probe_def n = {0};
	int r;

	if (!def)
		return nomem(e);
	r = trail_ue_parse(text + at, TRAIL_UE_EXT, def, &fe);
	if (r) {
		free(def);
		return trail__probe_err(e, (int)at + fe.pos, "%s", fe.msg);
	}
	n.kind = 'u';
	n.named = 1;
	snprintf(n.group, sizeof(n.group), "%s", TRAIL_UE_PROVIDER);
	snprintf(n.event, sizeof(n.event), "%s", trail_ue_name(def));
	if (strlen(trail_ue_name(def)) >= sizeof(n.event)) {
		free(def);
		return trail__probe_err(e, (int)at, "Event name is too long");
	}
	free(def);
	n.sym = strdup(text + at);
	n.text = strdup(text);
	n.sym_pos = (int)at;
	if (!n.sym || !n.text) {
		probe_def_free(&n);
		return nomem(e);
	}
	*d = n;
	return 0;
}

int probe_parse(const char *text, struct probe_def *d, struct probe_err *e)
{
	struct probe_def n = {0};
	struct tok *t;
	int nt, ret;

	e->pos = -1;
	e->msg[0] = '\0';
	{
		size_t lead = strspn(text, " \t");

		if (!strncmp(text + lead, "u:", 2))
			return parse_user(text, lead + 2, d, e);
	}
	nt = split(text, &t);
	if (nt < 0 || !(n.text = strdup(text)))
		return free(n.text), nomem(e);
	if (!nt)
		ret = trail__probe_err(e, 0, "Empty definition");
	else if (is_func(t, nt))
		ret = parse_func(text, &n, NULL, e);
	else
		ret = parse_probe(t, nt, &n, e);
	free(t);
	if (ret) {
		probe_def_free(&n);
		return ret;
	}
	*d = n;
	return 0;
}

void probe_def_free(struct probe_def *d)
{
	if (!d)
		return;
	for (int i = 0; i < d->nargs; i++) {
		free(d->args[i].fetch);
		free(d->args[i].type);
	}
	free(d->args);
	free(d->obj);
	free(d->sym);
	free(d->text);
	free(d->filter);
	memset(d, 0, sizeof(*d));
}

/* ---- the normalized text ---- */

static void format_func(FILE *f, const struct probe_def *d)
{
	struct probe_def tmp = {0};
	struct probe_err e;
	char(*decls)[MAX_DECL] = calloc(TRAIL_PROBE_MAX_ARGS, sizeof(*decls));

	fprintf(f, "%s%s%s(", d->obj ? d->obj : "", d->obj ? ":" : "", d->sym);
	/* the C declarations are only in the text: read it again */
	if (decls && !parse_func(d->text, &tmp, decls, &e))
		for (int i = 0; i < tmp.nargs; i++)
			fprintf(f, "%s%s", i ? ", " : "", decls[i]);
	fputc(')', f);
	probe_def_free(&tmp);
	free(decls);
}

char *trail__probe_format(const struct probe_def *d, char *const *args, int nargs)
{
	const char *t = d->text;
	char *buf = NULL;
	size_t len;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return NULL;
	switch (d->kind) {
	case '-':
		fprintf(f, "-:%s%s%s", d->group, d->group[0] ? "/" : "", d->event);
		break;
	case 'f':
		format_func(f, d);
		break;
	case 'e':
		fprintf(f, "e:%s/%s %.*s.%s", d->group, d->event, (int)strcspn(d->sym, ":"), d->sym,
			strchr(d->sym, ':') + 1);
		break;
	case 'w': /* as the kernel lists it: "w:wprobes/my_jiffies w@jiffies:4" */
		fprintf(f, "w:%s/%s %s@", d->group, d->event,
			d->wtype == 1 ? "r" : d->wtype == 2 ? "w" : "rw");
		if (d->wabs && d->offset == UINT64_MAX)
			fprintf(f, "-1");
		else if (d->wabs)
			fprintf(f, "0x%llx", (unsigned long long)d->offset);
		else
			fprintf(f, "%s%s%s", d->obj ? d->obj : "", d->obj ? ":" : "", d->sym);
		if (!d->wabs && d->offset)
			fprintf(f, "%+lld", (long long)d->offset);
		if (d->wlen)
			fprintf(f, ":%d", d->wlen);
		break;
	case 'u': { /* as the kernel lists it: "u:NAME TYPE FIELD; TYPE FIELD" */
		struct trail_ue_def *def = malloc(sizeof(*def));
		struct trail_filter_err fe;
		char line[TRAIL_UE_DESC_MAX + 64];

		if (def && !trail_ue_parse(d->sym, TRAIL_UE_EXT, def, &fe)) {
			trail_ue_format(def, line, sizeof(line));
			fprintf(f, "u:%s", line);
		} else {
			fprintf(f, "u:%s", d->sym);
		}
		free(def);
		break;
	}
	default:
		fputc(d->kind, f);
		/* MAXACTIVE has no use here (the shadow stack has no limit)
		 * but is kept as written, as the kernel shows it */
		while (isspace((unsigned char)*t))
			t++;
		if (d->kind == 'r' && t[0] == 'r' && isdigit((unsigned char)t[1]))
			fprintf(f, "%lu", strtoul(t + 1, NULL, 0));
		fprintf(f, ":%s/%s %s%s%s", d->group, d->event, d->obj ? d->obj : "",
			d->obj ? ":" : "", d->sym);
		if (d->lined)
			fprintf(f, ":%d", d->line);
		else if (d->offset && !d->fileoff)
			fprintf(f, "+%llu", (unsigned long long)d->offset);
	}
	if (d->kind != 'f' && d->kind != 'u') {
		for (int i = 0; args && i < nargs; i++)
			fprintf(f, " %s", args[i]);
		for (int i = 0; !args && i < d->nargs; i++) {
			const struct probe_arg *a = &d->args[i];

			if (!a->name[0]) /* $$args */
				fprintf(f, " %s", a->fetch);
			else
				fprintf(f, " %s=%s%s%s", a->name, a->fetch, a->type ? ":" : "",
					a->type ? a->type : "");
		}
		if (d->filter)
			fprintf(f, " if %s", d->filter);
	}
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

char *probe_def_format(const struct probe_def *d)
{
	return trail__probe_format(d, NULL, 0);
}
