/* SPDX-License-Identifier: MIT */
/*
 * filter.c - event filters (filter.h): a recursive-descent parser into a
 * small tree on the stack, the tree laid out as predicates with true and
 * false targets, and their evaluation. The error messages are the
 * kernel's (trace_events_filter.c's err_text), each at the position of
 * what caused it.
 */
#include <stdio.h>
#include <string.h>

#include "filter.h"
#include "spec.h"


enum { N_LEAF, N_AND, N_OR, N_NOT };

struct node {
	uint8_t type;
	uint16_t a, b;     /* children (AND, OR: both; NOT: a) */
	uint16_t leaves;   /* predicates under it */
};

#define MAX_NODES (2 * TRAIL_FILTER_MAX_PREDS)
#define MAX_NEST 32

struct parser {
	const char *s;
	size_t i;
	const struct trail_meta *m;
	struct trail_filter *f;
	struct trail_filter_err *e;
	struct node n[MAX_NODES];
	uint16_t nn;
	size_t tlen; /* bytes of f->text used */
	int nest;
};

static int fail(struct parser *p, size_t pos, const char *msg)
{
	if (p->e->pos < 0) {
		p->e->pos = (int)pos;
		snprintf(p->e->msg, sizeof(p->e->msg), "%s", msg);
	}
	return -1;
}

static void skip(struct parser *p)
{
	while (p->s[p->i] == ' ' || p->s[p->i] == '\t')
		p->i++;
}

static int ident_char(char c, int first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
	       (!first && ((c >= '0' && c <= '9') || c == '.'));
}

static int new_node(struct parser *p, uint8_t type, uint16_t a, uint16_t b, size_t pos)
{
	struct node *n;

	if (p->nn >= MAX_NODES)
		return fail(p, pos, "Too many terms in predicate expression");
	n = &p->n[p->nn];
	n->type = type;
	n->a = a;
	n->b = b;
	n->leaves = type == N_LEAF ? 1
		    : type == N_NOT ? p->n[a].leaves
				    : (uint16_t)(p->n[a].leaves + p->n[b].leaves);
	return p->nn++;
}

int trail_filter_common(const char *s, size_t len)
{
	static const struct {
		const char *name;
		int num;
	} common[] = {
		{"common_pid", TRAIL_FILTER_PID},       {"common_tid", TRAIL_FILTER_TID},
		{"common_cpu", TRAIL_FILTER_CPU},       {"CPU", TRAIL_FILTER_CPU},
		{"cpu", TRAIL_FILTER_CPU},              {"common_timestamp", TRAIL_FILTER_TS},
		{"COMM", TRAIL_FILTER_COMM},            {"common_comm", TRAIL_FILTER_COMM},
	};

	for (size_t i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		if (strlen(common[i].name) == len && !memcmp(common[i].name, s, len))
			return common[i].num;
	return -1;
}

/* the field named by s[0..len): its number, or -1 */
static int field_named(const struct trail_meta *m, const char *s, size_t len)
{
	for (uint32_t i = 0; i < m->nfields; i++)
		if (strlen(m->fields[i].name) == len && !memcmp(m->fields[i].name, s, len))
			return (int)i;
	return trail_filter_common(s, len);
}

uint16_t trail_filter_fixed_off(const struct trail_meta *m, uint32_t i)
{
	uint32_t off = 0;

	for (uint32_t k = 0; k < i; k++) {
		const struct trail_field *f = &m->fields[k];

		if (f->kind == TRAIL_FK_STRING || f->kind == TRAIL_FK_SEQ)
			return 0xffff;
		off += f->kind == TRAIL_FK_ARRAY ? (uint32_t)f->size * f->count : f->size;
	}
	return off < 0xffff ? (uint16_t)off : 0xffff;
}

static int parse_op(struct parser *p, uint8_t *op)
{
	const char *s = p->s + p->i;
	static const struct {
		const char *t;
		uint8_t op;
	} ops[] = {{"==", TRAIL_FLT_EQ}, {"!=", TRAIL_FLT_NE}, {"<=", TRAIL_FLT_LE}, {">=", TRAIL_FLT_GE},
		   {"<", TRAIL_FLT_LT},  {">", TRAIL_FLT_GT},  {"~", TRAIL_FLT_GLOB}};

	if (s[0] == '&' && s[1] != '&') {
		*op = TRAIL_FLT_BAND;
		p->i++;
		return 0;
	}
	for (size_t k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		size_t l = strlen(ops[k].t);

		if (!strncmp(s, ops[k].t, l)) {
			*op = ops[k].op;
			p->i += l;
			return 0;
		}
	}
	return fail(p, p->i, "Invalid operator");
}

/* FIELD OP VALUE */
static int parse_pred(struct parser *p)
{
	struct trail_fpred *pr;
	size_t fpos = p->i, opos, vpos;
	int field;
	uint8_t op;

	if (!ident_char(p->s[p->i], 1))
		return fail(p, p->i, "Missing field name and/or value");
	while (ident_char(p->s[p->i], 0))
		p->i++;
	field = field_named(p->m, p->s + fpos, p->i - fpos);
	if (field < 0)
		return fail(p, fpos, "Field not found");
	skip(p);
	opos = p->i;
	if (parse_op(p, &op))
		return -1;
	skip(p);
	vpos = p->i;
	if (p->f->npreds >= TRAIL_FILTER_MAX_PREDS)
		return fail(p, fpos, "Too many filter predicates");
	pr = &p->f->p[p->f->npreds];
	memset(pr, 0, sizeof(*pr));
	pr->field = (uint16_t)field;
	pr->op = op;
	pr->off = 0xffff;
	if (field == TRAIL_FILTER_COMM ||
	    (field < TRAIL_FILTER_PID && p->m->fields[field].kind == TRAIL_FK_STRING)) {
		char q = p->s[p->i];
		size_t start, end;

		if (op != TRAIL_FLT_EQ && op != TRAIL_FLT_NE && op != TRAIL_FLT_GLOB)
			return fail(p, opos, "Illegal operation for field type");
		if (q == '"' || q == '\'') {
			start = ++p->i;
			while (p->s[p->i] && p->s[p->i] != q)
				p->i++;
			if (!p->s[p->i])
				return fail(p, vpos, "Missing quote");
			end = p->i++;
		} else {
			start = p->i;
			while (p->s[p->i] && p->s[p->i] != ' ' && p->s[p->i] != '\t' &&
			       p->s[p->i] != ')' && p->s[p->i] != '&' && p->s[p->i] != '|')
				p->i++;
			end = p->i;
		}
		if (end == start && q != '"' && q != '\'')
			return fail(p, vpos, "Missing field name and/or value");
		if (p->tlen + (end - start) > sizeof(p->f->text))
			return fail(p, vpos, "Operand too long");
		memcpy(p->f->text + p->tlen, p->s + start, end - start);
		pr->spos = (uint32_t)p->tlen;
		pr->slen = (uint16_t)(end - start);
		p->tlen += end - start;
		pr->str = 1;
		p->f->comm |= field == TRAIL_FILTER_COMM;
	} else {
		const char *v = p->s + p->i;
		int neg = *v == '-';
		uint64_t x = 0;
		unsigned base = 10, digits = 0;

		if (field < TRAIL_FILTER_PID && p->m->fields[field].kind != TRAIL_FK_INT)
			return fail(p, fpos, "Illegal operation for field type");
		if (op == TRAIL_FLT_GLOB)
			return fail(p, opos, "Illegal operation for field type");
		v += neg;
		if (v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
			base = 16;
			v += 2;
		}
		for (;; v++, digits++) {
			unsigned d;

			if (*v >= '0' && *v <= '9')
				d = (unsigned)(*v - '0');
			else if (base == 16 && *v >= 'a' && *v <= 'f')
				d = (unsigned)(*v - 'a' + 10);
			else if (base == 16 && *v >= 'A' && *v <= 'F')
				d = (unsigned)(*v - 'A' + 10);
			else
				break;
			if (x > (UINT64_MAX - d) / base)
				return fail(p, vpos, "Illegal integer value");
			x = x * base + d;
		}
		if (!digits || ident_char(*v, 0))
			return fail(p, vpos, *v || digits || base == 16 || neg
						     ? "Illegal integer value"
						     : "Missing field name and/or value");
		p->i = (size_t)(v - p->s);
		pr->val = neg ? (uint64_t)0 - x : x;
		if (field < TRAIL_FILTER_PID) {
			const struct trail_field *fd = &p->m->fields[field];

			pr->size = fd->size;
			pr->sign = !!(fd->flags & TRAIL_FF_SIGNED);
			pr->off = trail_filter_fixed_off(p->m, (uint32_t)field);
		} else {
			pr->size = 8;
			p->f->clock |= field == TRAIL_FILTER_CPU || field == TRAIL_FILTER_TS;
		}
	}
	p->f->npreds++;
	return new_node(p, N_LEAF, 0, 0, fpos);
}

static int parse_chain(struct parser *p, int or);

/* ! unary | ( or ) | pred */
static int parse_unary(struct parser *p)
{
	size_t pos;
	int a;

	skip(p);
	pos = p->i;
	if (p->s[p->i] == '!' && p->s[p->i + 1] != '=') {
		p->i++;
		if ((a = parse_unary(p)) < 0)
			return -1;
		return new_node(p, N_NOT, (uint16_t)a, 0, pos);
	}
	if (p->s[p->i] == '(') {
		if (++p->nest > MAX_NEST)
			return fail(p, pos, "Too many terms in predicate expression");
		p->i++;
		if ((a = parse_chain(p, 1)) < 0)
			return -1;
		skip(p);
		if (p->s[p->i] != ')')
			return fail(p, pos, "Unbalanced parens");
		p->i++;
		p->nest--;
		return a;
	}
	return parse_pred(p);
}

/* a chain of || (or: 1) or of && (or: 0) */
static int parse_chain(struct parser *p, int or)
{
	char c = or ? '|' : '&';
	int a = or ? parse_chain(p, 0) : parse_unary(p), b;

	while (a >= 0) {
		size_t pos;

		skip(p);
		pos = p->i;
		if (p->s[p->i] != c || p->s[p->i + 1] != c)
			break;
		p->i += 2;
		if ((b = or ? parse_chain(p, 0) : parse_unary(p)) < 0)
			return -1;
		a = new_node(p, or ? N_OR : N_AND, (uint16_t)a, (uint16_t)b, pos);
	}
	return a;
}

/* Targets of the predicates under node k, the first being at *pc: t when
 * the node holds, f when not. The predicates are in the text's order. */
static void layout(struct parser *p, uint16_t k, uint16_t t, uint16_t f, uint16_t *pc)
{
	const struct node *n = &p->n[k];

	switch (n->type) {
	case N_LEAF:
		p->f->p[*pc].t = t;
		p->f->p[*pc].f = f;
		(*pc)++;
		break;
	case N_AND:
		layout(p, n->a, (uint16_t)(*pc + p->n[n->a].leaves), f, pc);
		layout(p, n->b, t, f, pc);
		break;
	case N_OR:
		layout(p, n->a, t, (uint16_t)(*pc + p->n[n->a].leaves), pc);
		layout(p, n->b, t, f, pc);
		break;
	default:
		layout(p, n->a, f, t, pc);
	}
}

int trail_filter_split(const char *s, size_t *plen, const char **text)
{
	const char *sp = strchr(s, ' ');
	size_t n = sp ? (size_t)(sp - s) : strlen(s);

	*text = NULL;
	*plen = n;
	if (n && s[n - 1] == ':') {
		*plen = n - 1;
		*text = s + n;
		while (**text == ' ')
			(*text)++;
		return 0;
	}
	return sp ? -1 : 0;
}

/* a numeric predicate's trail_filter_match_fast form (filter.h) */
static void fast_pred(struct trail_fpred *pr, const struct trail_meta *m)
{
	uint64_t c;

	/* 8 bytes from its offset stay in every payload when the event's
	 * fields are fixed and enough of them follow */
	pr->wide = !m->variable && pr->off + 8u <= m->fixed_len;
	pr->mask = pr->size == 8 ? ~0ull : (1ull << (8 * pr->size)) - 1;
	pr->sh = pr->sign ? (uint8_t)(64 - 8 * pr->size) : 0;
	pr->bias = (uint64_t)pr->sign << 63;
	c = pr->val ^ pr->bias;
	pr->neg = 0;
	switch (pr->op) {
	case TRAIL_FLT_EQ: pr->lo = c, pr->span = 0; break;
	case TRAIL_FLT_NE: pr->lo = c, pr->span = 0, pr->neg = 1; break;
	case TRAIL_FLT_LT: /* [0, c - 1]; none below 0 */
		if (c)
			pr->lo = 0, pr->span = c - 1;
		else
			pr->lo = 0, pr->span = ~0ull, pr->neg = 1;
		break;
	case TRAIL_FLT_LE: pr->lo = 0, pr->span = c; break;
	case TRAIL_FLT_GT: pr->lo = 0, pr->span = c, pr->neg = 1; break;
	case TRAIL_FLT_GE: pr->lo = c, pr->span = ~0ull - c; break;
	default: break; /* & */
	}
}

int trail_filter_compile(const char *text, const struct trail_meta *m, struct trail_filter *f,
			 struct trail_filter_err *e)
{
	struct parser p = {.s = text, .m = m, .f = f, .e = e};
	uint16_t pc = 0;
	int root;

	e->pos = -1;
	e->msg[0] = 0;
	f->npreds = 0;
	f->clock = f->comm = f->ids = f->fast = 0;
	f->nlay = 0;
	if (strlen(text) >= TRAIL_FILTER_MAX_TEXT)
		return fail(&p, 0, "Operand too long");
	skip(&p);
	if (!text[p.i])
		return fail(&p, p.i, "Meaningless filter expression");
	root = parse_chain(&p, 1);
	if (root < 0)
		return -1;
	skip(&p);
	if (text[p.i])
		return fail(&p, p.i, text[p.i] == ')' ? "Unbalanced parens"
						     : "Meaningless filter expression");
	layout(&p, (uint16_t)root, TRAIL_FILTER_ACCEPT, TRAIL_FILTER_REJECT, &pc);
	f->nlay = 0;
	for (uint16_t i = 0; i < f->npreds; i++) {
		const struct trail_fpred *pr = &f->p[i];

		if (pr->field < m->nfields && pr->field >= f->nlay)
			f->nlay = (uint16_t)(pr->field + 1);
		f->ids |= pr->field == TRAIL_FILTER_PID || pr->field == TRAIL_FILTER_TID;
	}
	f->fast = 1;
	f->fast_len = 0;
	for (uint16_t i = 0; i < f->npreds; i++) {
		struct trail_fpred *pr = &f->p[i];

		if (pr->str || pr->field >= TRAIL_FILTER_PID || pr->off == 0xffff ||
		    (pr->size != 1 && pr->size != 2 && pr->size != 4 && pr->size != 8)) {
			f->fast = 0;
			continue;
		}
		fast_pred(pr, m);
		if (pr->off + (pr->wide ? 8u : pr->size) > f->fast_len)
			f->fast_len = (uint16_t)(pr->off + (pr->wide ? 8u : pr->size));
	}
	for (uint16_t i = 0; i < f->nlay; i++) {
		f->lay[i].kind = m->fields[i].kind;
		f->lay[i].size = m->fields[i].size;
		f->lay[i].count = m->fields[i].count;
	}
	return 0;
}

/* ------------------------------------------------------------ evaluation */

int trail_filter_locate(const struct trail_flay *lay, uint32_t nlay, uint32_t i,
			const uint8_t *p, uint32_t len, uint32_t *at, uint32_t *slen)
{
	uint32_t off = 0;

	for (uint32_t k = 0; k <= i && k < nlay; k++) {
		const struct trail_flay *f = &lay[k];
		uint32_t n = f->size;
		uint16_t cnt;

		if (f->kind == TRAIL_FK_STRING || f->kind == TRAIL_FK_SEQ) {
			if (off + 2 > len)
				return -1;
			memcpy(&cnt, p + off, 2);
			if (k == i) {
				*at = off + 2;
				*slen = cnt == TRAIL_STRING_NULL ? 0 : cnt;
				return *at + *slen <= len ? 0 : -1;
			}
			off += 2;
			n = f->kind == TRAIL_FK_STRING ? (cnt == TRAIL_STRING_NULL ? 0 : cnt)
						       : (uint32_t)cnt * f->size;
		} else if (f->kind == TRAIL_FK_ARRAY) {
			n = (uint32_t)f->size * f->count;
		}
		if (k == i) {
			*at = off;
			return off + n <= len ? 0 : -1;
		}
		off += n;
	}
	return -1;
}

int trail_filter_value(const struct trail_flay *lay, uint32_t nlay, uint32_t field, uint16_t off,
		       uint8_t size, uint8_t sign, const uint8_t *p, uint32_t len,
		       const struct trail_filter_ctx *c, uint64_t *out)
{
	uint64_t v = 0;

	switch (field) {
	case TRAIL_FILTER_PID: v = c->pid; break;
	case TRAIL_FILTER_TID: v = c->tid; break;
	case TRAIL_FILTER_CPU: v = c->cpu; break;
	case TRAIL_FILTER_TS: v = c->ts; break;
	default: {
		uint32_t at = off, n;

		if (at == 0xffff && trail_filter_locate(lay, nlay, field, p, len, &at, &n))
			return -1;
		if (at + size > len || size > 8)
			return -1;
		switch (size) { /* (little endian) */
		case 8: memcpy(&v, p + at, 8); break;
		case 4: { uint32_t x; memcpy(&x, p + at, 4); v = x; break; }
		default: memcpy(&v, p + at, size);
		}
		if (sign && size < 8 && (v >> (size * 8 - 1) & 1))
			v |= ~0ull << (size * 8);
	}
	}
	*out = v;
	return 0;
}

static int holds(const struct trail_filter *f, const struct trail_fpred *pr, const uint8_t *p,
		 uint32_t len, const struct trail_filter_ctx *c)
{
	uint64_t v = 0;

	if (pr->str) {
		const char *s;
		uint32_t at = 0, n = 0;
		int eq;

		if (pr->field == TRAIL_FILTER_COMM) {
			s = c->comm ? c->comm : "";
			n = (uint32_t)strnlen(s, 16);
		} else {
			if (trail_filter_locate(f->lay, f->nlay, pr->field, p, len, &at, &n))
				return 0;
			s = (const char *)p + at;
		}
		if (pr->op == TRAIL_FLT_GLOB)
			return trail__glob(f->text + pr->spos, pr->slen, s, n);
		eq = n == pr->slen && !memcmp(s, f->text + pr->spos, n);
		return pr->op == TRAIL_FLT_EQ ? eq : !eq;
	}
	if (trail_filter_value(f->lay, f->nlay, pr->field, pr->off, pr->size, pr->sign, p, len, c,
			       &v))
		return 0;
	switch (pr->op) {
	case TRAIL_FLT_EQ: return v == pr->val;
	case TRAIL_FLT_NE: return v != pr->val;
	case TRAIL_FLT_BAND: return (v & pr->val) != 0;
	default: break;
	}
	if (pr->sign) {
		int64_t a = (int64_t)v, b = (int64_t)pr->val;

		return pr->op == TRAIL_FLT_LT ? a < b : pr->op == TRAIL_FLT_LE ? a <= b : pr->op == TRAIL_FLT_GT ? a > b : a >= b;
	}
	return pr->op == TRAIL_FLT_LT ? v < pr->val : pr->op == TRAIL_FLT_LE ? v <= pr->val
					 : pr->op == TRAIL_FLT_GT ? v > pr->val
							   : v >= pr->val;
}

int trail_filter_match(const struct trail_filter *f, const uint8_t *payload, uint32_t len,
		       const struct trail_filter_ctx *c)
{
	uint32_t pc = 0;

	if (f->fast && !c->steps && len >= f->fast_len)
		return trail_filter_match_fast(f, payload);
	while (pc < f->npreds) {
		const struct trail_fpred *pr = &f->p[pc];
		uint32_t next = holds(f, pr, payload, len, c) ? pr->t : pr->f;

		if (c->steps)
			(*c->steps)++;
		if (next == TRAIL_FILTER_ACCEPT)
			return 1;
		if (next <= pc || next >= f->npreds) /* (forward only) */
			return 0;
		pc = next;
	}
	return 0;
}
