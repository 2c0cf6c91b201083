/* SPDX-License-Identifier: MIT */
/*
 * compile.c - a parsed definition (probe.h) into the blob libtrail runs
 * (fetch.h), for one object: DWARF names and $$args become raw fetch-args
 * (dwarf.h) that go through the fetch-arg parser again, eprobe fields are
 * looked up in the source event, types default as the kernel's do, and
 * each argument becomes one program:
 *
 *   base op         REG STACK RETVAL IMM SYM FIELD (none for $comm)
 *   DEREF           per dereference, innermost first; @ADDR and @SYM
 *                   read at their address: one more, at offset 0
 *   BITFIELD        b<W>@<O>/<C>
 *   store           ST_INT ST_STRING ST_ARRAY ST_COMM; a string or an
 *                   array is read at the last dereference's offset by
 *                   the store itself
 *
 * The blob then goes through trail_probe_check() as any blob would.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dwarf.h"
#include "../common/filter.h"
#include "fetcharg.h"

/* one argument's field */
struct cfield {
	char name[TRAIL_PROBE_MAX_NAME];
	struct probe_ftype t;
};

struct cc {
	const struct probe_def *d;
	const struct probe_target *t;
	struct probe_err *e;
	struct trail_fetch_insn *code;
	size_t ncode, capcode;
	char *strs;
	size_t nstrs;
	struct cfield *fields;
	char **rargs; /* the resolved texts, NAME=FETCH[:TYPE] */
	int nfields, capfields;
	unsigned flags;
	uint32_t fixed; /* payload bytes without string contents */
	uint32_t max;   /* payload bound */
};

static int nomem(struct cc *cc)
{
	trail__probe_err(cc->e, -1, "out of memory");
	return -ENOMEM;
}

static int emit(struct cc *cc, uint8_t op, uint8_t size, uint8_t arg, uint32_t u32, int64_t imm)
{
	if (cc->ncode == cc->capcode) {
		size_t cap = cc->capcode ? 2 * cc->capcode : 64;
		struct trail_fetch_insn *n = realloc(cc->code, cap * sizeof(*n));

		if (!n)
			return nomem(cc);
		cc->code = n;
		cc->capcode = cap;
	}
	cc->code[cc->ncode++] = (struct trail_fetch_insn){op, size, arg, 0, u32, imm};
	if (op == TRAIL_FOP_DEREF || op == TRAIL_FOP_STACK || op == TRAIL_FOP_ST_STRING ||
	    op == TRAIL_FOP_ST_ARRAY)
		cc->flags |= TRAIL_PROBE_F_FAULT;
	if (op == TRAIL_FOP_ST_COMM)
		cc->flags |= TRAIL_PROBE_F_COMM;
	return 0;
}

/* an object's name in strs (shared), its offset */
static long add_str(struct cc *cc, const char *s)
{
	size_t n = strlen(s) + 1;
	char *p;

	for (size_t o = 0; o < cc->nstrs; o += strlen(cc->strs + o) + 1)
		if (!strcmp(cc->strs + o, s))
			return (long)o;
	if (!(p = realloc(cc->strs, cc->nstrs + n)))
		return nomem(cc);
	memcpy(p + cc->nstrs, s, n);
	cc->strs = p;
	cc->nstrs += n;
	return (long)(cc->nstrs - n);
}

/* @SYM: where it is, as SYM's operands */
static int sym_op(struct cc *cc, const char *fetch, const struct probe_fa *fa, uint32_t *obj,
		  int64_t *imm)
{
	char name[256], where[4096] = "";
	uint64_t vaddr;
	long o;

	snprintf(name, sizeof(name), "%.*s", fa->namelen, fetch + fa->name);
	if (!cc->t->sym_addr || cc->t->sym_addr(cc->t->ctx, name, where, sizeof(where), &vaddr)) {
		trail__probe_err(cc->e, fa->base_pos, "Unknown symbol %s", name);
		return -ENOENT;
	}
	if (!where[0] && cc->d->kind == 'e')
		return trail__probe_err(cc->e, fa->base_pos,
					"%s: an eprobe has no object of its own: qualify it", name);
	*imm = (int64_t)vaddr + fa->symoff;
	*obj = 0xffffffffu;
	if (where[0]) {
		if ((o = add_str(cc, where)) < 0)
			return (int)o;
		*obj = (uint32_t)o;
	}
	return 0;
}

static const uint8_t arg_regs[6] = {
	TRAIL_PREG_DI, TRAIL_PREG_SI, TRAIL_PREG_DX, TRAIL_PREG_CX, TRAIL_PREG_R8, TRAIL_PREG_R9,
};

/* the ops of a resolved fetch-arg with its final type */
static int emit_arg(struct cc *cc, const char *fetch, const struct probe_fa *fa)
{
	const struct probe_ftype *t = &fa->type;
	int mem = fa->base == FA_MEM || fa->base == FA_SYM || fa->base == FA_WVALUE;
	int nd = fa->nderef + mem, last = (t->kind == TRAIL_FK_STRING || t->count) && nd;
	int64_t offs[TRAIL_PROBE_MAX_INSNS + 1], imm = 0;
	uint32_t obj = 0;
	int ret = 0;

	if (fa->base == FA_COMM)
		return emit(cc, TRAIL_FOP_ST_COMM, 0, 0, 0, 0);
	/* innermost first */
	offs[0] = 0;
	for (int i = 0; i < fa->nderef; i++)
		offs[mem + i] = fa->off[fa->nderef - 1 - i];
	switch (fa->base) {
	case FA_REG:
		ret = emit(cc, TRAIL_FOP_REG, 0, (uint8_t)fa->reg, 0, 0);
		break;
	case FA_ARG: /* the SysV ABI's: six registers, then the stack past
		      * the return address */
		ret = fa->num <= 6 ? emit(cc, TRAIL_FOP_REG, 0, arg_regs[fa->num - 1], 0, 0) :
				     emit(cc, TRAIL_FOP_STACK, 0, 0, 0, 8 * (int64_t)(fa->num - 6));
		break;
	case FA_STACK:
		ret = emit(cc, TRAIL_FOP_STACK, 0, 0, 0, 8 * (int64_t)fa->num);
		break;
	case FA_STACKP:
		ret = emit(cc, TRAIL_FOP_REG, 0, TRAIL_PREG_SP, 0, 0);
		break;
	case FA_RETVAL:
		ret = emit(cc, TRAIL_FOP_RETVAL, 0, 0, 0, 0);
		break;
	case FA_MEM:
	case FA_IMM:
		ret = emit(cc, TRAIL_FOP_IMM, 0, 0, 0, (int64_t)fa->num);
		break;
	case FA_WADDR:
	case FA_WVALUE: /* ($value: the address, then its memory) */
		ret = emit(cc, TRAIL_FOP_WADDR, 0, 0, 0, 0);
		break;
	case FA_WOLD:
		ret = emit(cc, TRAIL_FOP_WOLD, 0, 0, 0, 0);
		break;
	case FA_SYM:
		ret = sym_op(cc, fetch, fa, &obj, &imm);
		if (!ret)
			ret = emit(cc, TRAIL_FOP_SYM, 0, 0, obj, imm);
		break;
	case FA_FIELD:
		ret = emit(cc, TRAIL_FOP_FIELD, 0, 0, (uint32_t)fa->num, 0);
		break;
	}
	for (int i = 0; !ret && i < nd - last; i++)
		ret = emit(cc, TRAIL_FOP_DEREF, i == nd - 1 ? t->size : 8, 0, 0, offs[i]);
	if (!ret && t->bw)
		ret = emit(cc, TRAIL_FOP_BITFIELD, t->bw, t->bo, 0, 0);
	if (ret)
		return ret;
	if (t->kind == TRAIL_FK_STRING)
		return emit(cc, TRAIL_FOP_ST_STRING, 0, 0, TRAIL_STRING_MAX, last ? offs[nd - 1] : 0);
	if (t->count)
		return emit(cc, TRAIL_FOP_ST_ARRAY, t->size, 0, t->count, offs[nd - 1]);
	return emit(cc, TRAIL_FOP_ST_INT, t->size, 0, 0, 0);
}

/* a new field for the argument named name: unique, and the event fits */
static int add_field(struct cc *cc, const char *name, const struct probe_fa *fa,
		     const char *rtext, int pos)
{
	const struct probe_ftype *t = &fa->type;
	struct cfield *f;
	uint32_t fixed = t->kind == TRAIL_FK_STRING ? 2 : (uint32_t)t->size * (t->count ? t->count : 1);

	for (int i = 0; i < cc->nfields; i++)
		if (!strcmp(cc->fields[i].name, name))
			return trail__probe_err(cc->e, pos, "This argument name is already used (%s)", name);
	if (cc->nfields == (int)TRAIL_PROBE_MAX_ARGS)
		return trail__probe_err(cc->e, pos, "Too many arguments are specified");
	if (cc->fixed + fixed > TRAIL_PROBE_MAX_PAYLOAD)
		return trail__probe_err(cc->e, pos, "Event too big (too many fields?)");
	if (cc->nfields == cc->capfields) {
		int cap = cc->capfields ? 2 * cc->capfields : 16;
		struct cfield *nf = realloc(cc->fields, (size_t)cap * sizeof(*nf));
		char **nr = nf ? realloc(cc->rargs, (size_t)cap * sizeof(*nr)) : NULL;

		if (nf)
			cc->fields = nf;
		if (!nr)
			return nomem(cc);
		cc->rargs = nr;
		cc->capfields = cap;
	}
	if (!(cc->rargs[cc->nfields] = strdup(rtext)))
		return nomem(cc);
	f = &cc->fields[cc->nfields++];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->t = *t;
	cc->fixed += fixed;
	/* a thread's name is at most 16 bytes (TASK_COMM_LEN) */
	cc->max += t->kind != TRAIL_FK_STRING ? fixed : 2 + (fa->base == FA_COMM ? 16 : TRAIL_STRING_MAX);
	return 0;
}

/* an eprobe's $FIELD: its number and default type */
static int field(struct cc *cc, const char *fetch, struct probe_fa *fa)
{
	const struct trail_meta *m = cc->t->src;
	const struct trail_field *f = NULL;
	/* the whole $FIELD: a source field name may be longer than an argument's */
	char name[TRAIL_PROBE_MAX_ARGSTR + 1], list[200] = "";

	snprintf(name, sizeof(name), "%.*s", fa->namelen, fetch + fa->name);
	for (uint32_t k = 0; m && k < m->nfields; k++)
		if (!strcmp(m->fields[k].name, name))
			f = &m->fields[fa->num = k];
	if (!f && (!strcmp(name, "comm") || !strcmp(name, "COMM"))) {
		fa->base = FA_COMM;
		if (!fa->typed)
			fa->type = (struct probe_ftype){TRAIL_FK_STRING, 1, 0, 0, 0, 0};
		return 0;
	}
	if (!f) {
		for (uint32_t k = 0; m && k < m->nfields; k++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s", k ? " " : "",
				 m->fields[k].name);
		trail__probe_err(cc->e, fa->base_pos,
				 "Attached event does not have this field (%s has: %s)", name, list);
		return -ENOENT;
	}
	if (f->kind == TRAIL_FK_STRING) {
		/* $f, $f:string and +0($f):string: the string itself */
		if (fa->nderef > 1 || (fa->nderef && fa->off[0]) ||
		    (fa->typed && fa->type.kind != TRAIL_FK_STRING))
			return trail__probe_err(cc->e, fa->base_pos,
				"Field %s is a string: it can only be stored as one ($%s:string)", name, name);
		fa->nderef = 0;
		fa->type = (struct probe_ftype){TRAIL_FK_STRING, 1, 0, 0, 0, 0};
		return 0;
	}
	if (f->kind != TRAIL_FK_INT)
		return trail__probe_err(cc->e, fa->base_pos,
					"Field %s is not an integer nor a string: it can not be read", name);
	if (!fa->typed && !fa->nderef) /* the field's own type; pointers in hex */
		fa->type = (struct probe_ftype){TRAIL_FK_INT, f->size,
			(uint8_t)((f->flags & (TRAIL_FF_SIGNED | TRAIL_FF_HEX | TRAIL_FF_CHAR | TRAIL_FF_SYM)) |
				  (f->flags & TRAIL_FF_PTR ? TRAIL_FF_HEX : 0)),
			0, 0, 0};
	return 0;
}

static int no_debug(struct cc *cc, int pos)
{
	trail__probe_err(cc->e, pos, "no debug info for %s: use the raw syntax ($argN, %%REG, +OFFS(...))",
			 cc->t->objpath ? cc->t->objpath : "the probed object");
	return -ENOENT;
}

/* $argN past the function's parameters, $retval's type (into rt): from
 * DWARF */
static int dwarf_checks(struct cc *cc, struct probe_fa *fa, char *rt, size_t rtn)
{
	int np, variadic = 0;

	if (!cc->t->dw)
		return 0;
	if (fa->base == FA_ARG && !probe_dwarf_func(cc->t->dw, cc->d->sym, &np, &variadic) &&
	    !variadic && fa->num > (uint64_t)np)
		return trail__probe_err(cc->e, fa->num_pos, "Invalid argument number: %s has %d parameter%s",
					cc->d->sym, np, np == 1 ? "" : "s");
	if (fa->base != FA_RETVAL || fa->typed || fa->nderef ||
	    probe_dwarf_rettype(cc->t->dw, cc->d->sym, rt, rtn))
		return rt[0] = '\0', 0;
	if (!strcmp(rt, "void"))
		return trail__probe_err(cc->e, fa->base_pos, "This function returns 'void' type");
	if (trail__probe_type(rt, fa->base_pos, &fa->type, cc->e))
		return -EINVAL;
	if (fa->type.kind == TRAIL_FK_STRING) /* a char *: the string it points to */
		fa->off[fa->nderef++] = 0;
	return 0;
}

static int compile_fetch(struct cc *cc, const char *fetch, const char *type,
			 const struct probe_fctx *c, const char *name, int pos);

/* A function event's parameter types against DWARF's, where it has them
 * all (a float or by-value struct parameter leaves the positions unknown):
 * an integer of another size, or a string where DWARF has no pointer, is
 * refused under the type. */
static int func_event_types(struct cc *cc)
{
	const struct probe_def *d = cc->d;
	struct probe_dvar *v = NULL;
	int n = 0, skipped = 0, ret = 0;
	char err[256];

	if (!cc->t->dw || probe_dwarf_params(cc->t->dw, d->sym, &v, &n, &skipped, err, sizeof(err)))
		return 0;
	for (int i = 0; !skipped && !ret && i < d->nargs && i < n; i++) {
		const struct probe_arg *a = &d->args[i];
		struct probe_ftype want, have;
		struct probe_err ignore;
		int pos = a->type_pos >= 0 ? a->type_pos : a->pos;

		if (!a->type || trail__probe_type(a->type, pos, &want, cc->e) ||
		    trail__probe_type(v[i].type, 0, &have, &ignore))
			continue;
		/* a string is a pointer argument; DWARF's pointers are x64 */
		int ptr = have.kind == TRAIL_FK_STRING ||
			  (have.size == 8 && (have.flags & TRAIL_FF_HEX) && !have.count);
		unsigned wsize = want.kind == TRAIL_FK_STRING ? 8 : want.size;
		unsigned hsize = have.kind == TRAIL_FK_STRING ? 8 : have.size;

		if (want.count || want.bw || have.count || have.bw)
			continue;
		if (want.kind == TRAIL_FK_STRING && !ptr)
			ret = trail__probe_err(cc->e, pos, "%s is not a pointer in %s (DWARF: %s %s)",
					       a->name, d->sym, v[i].type, v[i].name);
		else if (wsize != hsize)
			ret = trail__probe_err(cc->e, pos, "%s is %u bytes in %s, not %u (DWARF: %s %s)",
					       a->name, hsize, d->sym, wsize, v[i].type, v[i].name);
	}
	free(v);
	return ret;
}

/*
 * A DWARF expression, the whole fetch-arg or under dereferences: its raw
 * fetch-arg takes its place in the text, which is compiled again. A char *
 * resolves to the string it points to ("+0(X)", type string); used as a
 * value (another type, or dereferenced further) it is X.
 */
static int compile_dwarf(struct cc *cc, const char *fetch, const char *type,
			 const struct probe_fctx *c, const struct probe_fa *fa, const char *name,
			 int pos)
{
	struct probe_fctx c2 = {c->kind, c->fixed ? c->pos : c->pos + fa->name, c->tpos, 1, c->wlen};
	struct probe_dvar dv;
	char *expr, *raw, err[256];
	const char *rf, *rtype = type;
	size_t rn;
	int errpos = 0, ret;

	if (!cc->t->dw)
		return no_debug(cc, c2.pos);
	if (!(expr = strndup(fetch + fa->name, (size_t)fa->namelen)))
		return nomem(cc);
	err[0] = '\0';
	/* at an instruction: the variables in scope there, where they are */
	ret = cc->t->insn_addr
		      ? probe_dwarf_expr_at(cc->t->dw, cc->t->insn_addr, cc->d->sym, expr, &dv,
					    &errpos, err, sizeof(err))
		      : probe_dwarf_expr(cc->t->dw, cc->d->sym, expr, &dv, &errpos, err, sizeof(err));
	free(expr);
	if (ret) {
		trail__probe_err(cc->e, c->fixed ? c->pos : c2.pos + errpos, "%s",
				 err[0] ? err : "Invalid fetch argument");
		return ret == -ENOENT ? -ENOENT : -EINVAL;
	}
	/* perf's cast: a string is read from a pointer to char or a char
	 * array; an element of one is one char (r->path[5]), not a string
	 * at its address, and anything else is no string at all */
	if (type && strstr(type, "string") && !fa->nderef && strcmp(dv.type, "string")) {
		trail__probe_err(cc->e, c->fixed ? c->pos : c2.pos,
				 "Failed to cast into string: '%.*s' (%s) is %s", fa->namelen,
				 fetch + fa->name, dv.type,
				 !strcmp(dv.type, "x64") || strchr(dv.type, '[')
					 ? "not (unsigned) char * nor a char array"
					 : "not a pointer nor array");
		return -EINVAL;
	}
	rf = dv.fetch;
	rn = strlen(rf);
	if (!strcmp(dv.type, "string") && (fa->nderef || (type && !strstr(type, "string"))) &&
	    rn > 4 && !memcmp(rf, "+0(", 3) && rf[rn - 1] == ')')
		rf += 3, rn -= 4;
	if (!type && !fa->nderef)
		rtype = dv.type;
	if (asprintf(&raw, "%.*s%.*s%s", fa->name, fetch, (int)rn, rf,
		     fetch + fa->name + fa->namelen) < 0)
		return nomem(cc);
	ret = compile_fetch(cc, raw, rtype, &c2, name, pos);
	free(raw);
	return ret;
}

/* One fetch-arg with its type, named name, into ops and a field. */
static int compile_fetch(struct cc *cc, const char *fetch, const char *type,
			 const struct probe_fctx *c, const char *name, int pos)
{
	struct probe_fa fa;
	char *rtext, rt[32] = "";
	int ret;

	if ((ret = trail__probe_fetcharg(fetch, type, c, &fa, cc->e)))
		return ret;
	if (fa.base == FA_DWARF)
		return compile_dwarf(cc, fetch, type, c, &fa, name, pos);
	if (fa.base == FA_FIELD && (ret = field(cc, fetch, &fa)))
		return ret;
	if ((ret = dwarf_checks(cc, &fa, rt, sizeof(rt))) || (ret = trail__probe_fit(&fa, c, cc->e)))
		return ret;
	if (rt[0]) /* $retval typed by DWARF */
		ret = asprintf(&rtext, strcmp(rt, "string") ? "%s=%s:%s" : "%s=+0(%s):%s", name, fetch, rt);
	else
		ret = asprintf(&rtext, "%s=%s%s%s", name, fetch, type ? ":" : "", type ? type : "");
	if (ret < 0)
		return nomem(cc);
	ret = add_field(cc, name, &fa, rtext, pos);
	free(rtext);
	return ret ? ret : emit_arg(cc, fetch, &fa);
}

/* $$args, $arg*: every parameter, named and typed by DWARF */
static int compile_all_args(struct cc *cc, const struct probe_arg *a)
{
	struct probe_dvar *v = NULL;
	int n = 0, skipped = 0, ret;
	char err[256] = "";

	if (!cc->t->dw)
		return no_debug(cc, a->pos);
	if (cc->t->insn_addr) /* the registers hold other things by then */
		return trail__probe_err(cc->e, a->pos,
					"$$args is for a function's entry: name the variables here");
	ret = probe_dwarf_params(cc->t->dw, cc->d->sym, &v, &n, &skipped, err, sizeof(err));
	if (ret) {
		trail__probe_err(cc->e, a->pos, "%s", err[0] ? err : "No debug info entry for this function");
		return ret == -ENOENT ? -ENOENT : -EINVAL;
	}
	for (int i = 0; !ret && i < n; i++) {
		struct probe_fctx c = {'p', a->pos, -1, 1, 0};

		ret = compile_fetch(cc, v[i].fetch, v[i].type, &c, v[i].name, a->pos);
	}
	free(v);
	return ret;
}

/* the event description: the probe's own fields, then the arguments' */
static uint8_t *meta_blob(struct cc *cc, size_t *len)
{
	static const char *const own[] = {"__probe_ip", "__probe_func", "__probe_ret_ip",
					  "__probe_fault"};
	const char *names[4];
	int nown = 0;
	char *buf = NULL;
	size_t n;
	FILE *f = open_memstream(&buf, &n);
	struct trail_meta_hdr h = {TRAIL_META_MAGIC, 0, 1, 0};

	if (!f)
		return NULL;
	if (cc->d->kind == 'r')
		names[nown++] = own[1], names[nown++] = own[2];
	else if (cc->d->kind != 'e')
		names[nown++] = own[0];
	if (cc->flags & TRAIL_PROBE_F_FAULT)
		names[nown++] = own[3];
	h.nfields = (uint8_t)(nown + cc->nfields);
	fwrite(&h, sizeof(h), 1, f);
	fprintf(f, "%s%c%s%c", cc->d->group, 0, cc->d->event, 0);
	for (int i = 0; i < nown + cc->nfields; i++) {
		const struct probe_ftype *t = i < nown ? NULL : &cc->fields[i - nown].t;
		const char *name = i < nown ? names[i] : cc->fields[i - nown].name;
		struct trail_meta_field mf = {TRAIL_FK_INT, 8, TRAIL_FF_SYM, (uint8_t)strlen(name), 0};

		if (i < nown && !strcmp(name, own[3]))
			mf.flags = TRAIL_FF_HEX;
		else if (t && t->kind == TRAIL_FK_STRING)
			mf = (struct trail_meta_field){TRAIL_FK_STRING, 1, 0, mf.namelen, 0};
		else if (t)
			mf = (struct trail_meta_field){t->count ? TRAIL_FK_ARRAY : TRAIL_FK_INT, t->size,
						       t->flags, mf.namelen, t->count};
		fwrite(&mf, sizeof(mf), 1, f);
		fwrite(name, strlen(name) + 1, 1, f);
	}
	if (fclose(f) || n > UINT16_MAX) {
		free(buf);
		return NULL;
	}
	h.size = (uint16_t)n;
	memcpy(buf, &h, sizeof(h));
	*len = n;
	return (uint8_t *)buf;
}

/* An eprobe's `if FILTER`, compiled against the source event's fields
 * (the process compiles it again, against the fields the event has
 * there), then carried as the last string of strs. */
static int eprobe_filter(struct cc *cc)
{
	const struct probe_def *d = cc->d;
	struct trail_filter *f = malloc(sizeof(*f));
	struct trail_filter_err fe;
	size_t n = strlen(d->filter) + 1;
	char *p;
	int r = 0;

	if (!f)
		return nomem(cc);
	if (trail_filter_compile(d->filter, cc->t->src, f, &fe)) {
		r = trail__probe_err(cc->e, d->filter_pos + fe.pos, "%s", fe.msg);
	} else {
		for (uint16_t i = 0; i < f->npreds && !r; i++)
			if (f->p[i].field == TRAIL_FILTER_TS)
				r = trail__probe_err(cc->e, d->filter_pos,
						     "common_timestamp is not known where the "
						     "event fires");
	}
	free(f);
	if (r)
		return r;
	if (!(p = realloc(cc->strs, cc->nstrs + n)))
		return nomem(cc);
	memcpy(p + cc->nstrs, d->filter, n);
	cc->strs = p;
	cc->nstrs += n;
	cc->flags |= TRAIL_PROBE_F_FILTER;
	return 0;
}

/* A probe at an instruction: F_INSN, and a USDT probe's semaphore as the
 * last string (fetch.h). */
static int insn_parts(struct cc *cc)
{
	char hex[24];
	size_t n;
	char *p;

	if (cc->t->entry_addr && !cc->t->insn_addr)
		cc->flags |= TRAIL_PROBE_F_ADDR;
	if (!cc->t->insn_addr)
		return 0;
	cc->flags |= TRAIL_PROBE_F_INSN;
	if (cc->t->insn_vector)
		cc->flags |= TRAIL_PROBE_F_VEC;
	if (!cc->t->sema)
		return 0;
	n = (size_t)snprintf(hex, sizeof(hex), "%llx", (unsigned long long)cc->t->sema) + 1;
	if (!(p = realloc(cc->strs, cc->nstrs + n)))
		return nomem(cc);
	memcpy(p + cc->nstrs, hex, n);
	cc->strs = p;
	cc->nstrs += n;
	cc->flags |= TRAIL_PROBE_F_SEMA;
	return 0;
}

static int build(struct cc *cc, uint8_t **blob, size_t *len)
{
	const struct probe_def *d = cc->d;
	const char *obj = d->kind == 'w' ? (d->wobj ? d->wobj : "") : d->obj ? d->obj : "";
	size_t mlen, size;
	uint8_t *meta = insn_parts(cc) ? NULL : meta_blob(cc, &mlen), *b;
	uint32_t own = d->kind == 'e' ? 0 : d->kind == 'r' ? 16 : 8;
	struct trail_probe_hdr h = {
		.magic = TRAIL_PROBE_MAGIC,
		.kind = d->kind == 'f' ? TRAIL_PROBE_ENTRY : (uint8_t)d->kind,
		.flags = (uint8_t)cc->flags,
		.nargs = (uint8_t)cc->nfields,
		.jump = (uint8_t)(d->kind == 'w' ? (unsigned)(d->wtype | d->wlen << 4)
				  : cc->t->insn_addr ? cc->t->insn_jump : 0),
		.offset = cc->t->insn_addr ? cc->t->insn_addr
			  : cc->t->entry_addr ? cc->t->entry_addr
			  : d->kind == 'w' ? d->waddr : d->kind == 'p' ? d->offset : 0,
		.sym_len = (uint16_t)(strlen(d->sym) + 1),
		.obj_len = (uint16_t)(strlen(obj) + 1),
		.ninsns = (uint16_t)cc->ncode,
		.strs_size = (uint16_t)cc->nstrs,
	};
	struct trail_probe p;
	const char *why;
	uint32_t max;

	if (d->kind == 'w' && d->wabs)
		h.flags |= TRAIL_PROBE_F_ABS;
	max = cc->max + own + (cc->flags & TRAIL_PROBE_F_FAULT ? 8 : 0);

	if (!meta)
		return nomem(cc);
	h.meta_size = (uint16_t)mlen;
	h.payload_max = (uint16_t)(max < TRAIL_PROBE_MAX_PAYLOAD ? max : TRAIL_PROBE_MAX_PAYLOAD);
	size = sizeof(h) + h.sym_len + h.obj_len + mlen + cc->ncode * sizeof(*cc->code) + cc->nstrs;
	h.size = (uint32_t)size;
	if (size > TRAIL_PROBE_MAX_BLOB || h.sym_len > 4096 || h.obj_len > 4096) {
		free(meta);
		return trail__probe_err(cc->e, -1, "Event too big (too many fields?): %zu bytes of program",
					size);
	}
	if (!(b = malloc(size))) {
		free(meta);
		return nomem(cc);
	}
	memcpy(b, &h, sizeof(h));
	size = sizeof(h);
	memcpy(b + size, d->sym, h.sym_len), size += h.sym_len;
	memcpy(b + size, obj, h.obj_len), size += h.obj_len;
	memcpy(b + size, meta, mlen), size += mlen;
	if (cc->ncode)
		memcpy(b + size, cc->code, cc->ncode * sizeof(*cc->code));
	size += cc->ncode * sizeof(*cc->code);
	if (cc->nstrs)
		memcpy(b + size, cc->strs, cc->nstrs);
	free(meta);
	if (trail_probe_check(b, h.size, &p, &why)) {
		free(b);
		trail__probe_err(cc->e, -1, "internal error: the compiled probe is refused: %s", why);
		return -EPROTO;
	}
	*blob = b;
	*len = h.size;
	return 0;
}

int probe_compile(const struct probe_def *d, const struct probe_target *t, uint8_t **blob,
		  size_t *len, char **resolved, struct probe_err *e)
{
	/* the probe's own fields, and __probe_fault if it comes */
	struct cc cc = {.d = d, .t = t, .e = e,
			.fixed = (d->kind == 'e' ? 0 : d->kind == 'r' ? 16 : 8) + 8};
	int ret = 0;

	e->pos = -1;
	e->msg[0] = '\0';
	if (d->kind == '-')
		return trail__probe_err(e, 0, "A delete has nothing to compile");
	if (d->kind == 'u') /* (libtrail takes its definition: "@uevent DEF") */
		return trail__probe_err(e, 0, "A user event has nothing to compile");
	if (d->kind == 'e' && !t->src)
		return trail__probe_err(e, d->sym_pos, "Attached event does not exist");
	if (d->kind == 'f')
		ret = func_event_types(&cc);
	for (int i = 0; !ret && i < d->nargs; i++) {
		const struct probe_arg *a = &d->args[i];
		/* a function event's fetch-args are built, not written */
		struct probe_fctx c = {d->kind == 'f' ? 'p' : d->kind, a->fetch_pos, a->type_pos,
				       d->kind == 'f', d->wlen ? d->wlen : 8};

		if (!a->name[0])
			ret = compile_all_args(&cc, a);
		else
			ret = compile_fetch(&cc, a->fetch, a->type, &c, a->name, a->pos);
	}
	if (!ret && d->filter)
		ret = eprobe_filter(&cc);
	if (!ret)
		ret = build(&cc, blob, len);
	/* DWARF names and $$args resolved, the rest as written */
	if (!ret && resolved && !(*resolved = trail__probe_format(d, cc.rargs, cc.nfields))) {
		free(*blob);
		*blob = NULL;
		ret = nomem(&cc);
	}
	for (int i = 0; i < cc.nfields; i++)
		free(cc.rargs[i]);
	free(cc.rargs);
	free(cc.fields);
	free(cc.code);
	free(cc.strs);
	return ret;
}
