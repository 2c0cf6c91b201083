/* SPDX-License-Identifier: MIT */
/* argtypes.c - a function's parameters and return type for function_graph
 * from DWARF, cached; see argtypes.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "../probe/dwarf.h"
#include "../tracefile/reader.h"
#include "argtypes.h"

#define MAX_PARAMS TRAIL_ARGTYPES_MAX

/* what DWARF says of one function of one object */
struct fninfo {
	char *module, *name;
	int known;    /* DWARF has the function */
	int nparams;
	int more;     /* parameters not in the integer argument registers */
	struct {
		char name[32];
		char type[32];
		int reg; /* 0..5: rdi rsi rdx rcx r8 r9 */
	} p[MAX_PARAMS];
	char ret[32]; /* the kernel's type name, "void", or "" unknown */
};

/* an object's DWARF, opened once (NULL: it has none) */
struct dwobj {
	char *path;
	struct probe_dwarf *dw;
};

/* (pid, address) -> its fninfo */
struct slot {
	uint64_t func;
	uint32_t pid, used;
	struct fninfo *fi;
};

struct trail_argtypes {
	struct trail_reader *r;
	struct slot *slots;
	size_t cap, used;
	struct fninfo **fns;
	size_t nfns;
	struct dwobj *objs;
	size_t nobjs;
};

struct trail_argtypes *trail_argtypes_new(struct trail_reader *r)
{
	struct trail_argtypes *a = calloc(1, sizeof(*a));

	if (a)
		a->r = r;
	return a;
}

void trail_argtypes_free(struct trail_argtypes *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->nfns; i++) {
		free(a->fns[i]->module);
		free(a->fns[i]->name);
		free(a->fns[i]);
	}
	for (size_t i = 0; i < a->nobjs; i++) {
		if (a->objs[i].dw)
			probe_dwarf_close(a->objs[i].dw);
		free(a->objs[i].path);
	}
	free(a->fns);
	free(a->objs);
	free(a->slots);
	free(a);
}

static struct probe_dwarf *dwarf_of(struct trail_argtypes *a, const char *path)
{
	struct dwobj *o;
	char err[256];

	for (size_t i = 0; i < a->nobjs; i++)
		if (!strcmp(a->objs[i].path, path))
			return a->objs[i].dw;
	o = realloc(a->objs, (a->nobjs + 1) * sizeof(*o));
	if (!o)
		return NULL;
	a->objs = o;
	o = &a->objs[a->nobjs];
	if (!(o->path = strdup(path)))
		return NULL;
	if (probe_dwarf_open(path, &o->dw, err, sizeof(err)))
		o->dw = NULL;
	a->nobjs++;
	return o->dw;
}

/* the argument register a raw fetch-arg names, or -1; a string's is
 * "+0(REG)": the pointer in REG (shown as a pointer: the memory is not in
 * the record) */
static int reg_of(const char *fetch, int string)
{
	static const char *const regs[6] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};
	size_t n = strlen(fetch);

	if (string) {
		if (n != 7 || strncmp(fetch, "+0(", 3) || fetch[6] != ')')
			return -1;
		fetch += 3;
		n = 3;
	}
	for (int i = 0; i < 6; i++)
		if (n == 3 && !strncmp(fetch, regs[i], 3))
			return i;
	return -1;
}

static void learn(struct fninfo *fi, struct probe_dwarf *dw)
{
	struct probe_dvar *v = NULL;
	int n = 0, skipped = 0, np, variadic;
	char err[256];

	if (probe_dwarf_func(dw, fi->name, &np, &variadic))
		return;
	fi->known = 1;
	if (!probe_dwarf_params(dw, fi->name, &v, &n, &skipped, err, sizeof(err))) {
		fi->more = skipped || variadic;
		for (int i = 0; i < n; i++) {
			int string = !strcmp(v[i].type, "string") || !strcmp(v[i].type, "ustring");
			int reg = reg_of(v[i].fetch, string);

			/* a part of a by-value struct, a stack argument, a
			 * bitfield: not in what was recorded */
			if (reg < 0 || v[i].type[0] == 'b' || strchr(v[i].type, '[') ||
			    fi->nparams == MAX_PARAMS) {
				fi->more = 1;
				continue;
			}
			memcpy(fi->p[fi->nparams].name, v[i].name, sizeof(v[i].name));
			memcpy(fi->p[fi->nparams].type, string ? "x64" : v[i].type,
			       string ? 4 : sizeof(v[i].type));
			fi->p[fi->nparams].reg = reg;
			fi->nparams++;
		}
		free(v);
	}
	if (probe_dwarf_rettype(dw, fi->name, fi->ret, sizeof(fi->ret)))
		fi->ret[0] = '\0';
}

static struct fninfo *fn_new(struct trail_argtypes *a, const char *module, const char *name)
{
	struct fninfo **g, *fi;
	struct probe_dwarf *dw;

	for (size_t i = 0; i < a->nfns; i++)
		if (!strcmp(a->fns[i]->module, module) && !strcmp(a->fns[i]->name, name))
			return a->fns[i];
	g = realloc(a->fns, (a->nfns + 1) * sizeof(*g));
	if (!g)
		return NULL;
	a->fns = g;
	if (!(fi = calloc(1, sizeof(*fi))))
		return NULL;
	fi->module = strdup(module);
	fi->name = strdup(name);
	if (!fi->module || !fi->name) {
		free(fi->module);
		free(fi->name);
		free(fi);
		return NULL;
	}
	if ((dw = dwarf_of(a, module)))
		learn(fi, dw);
	a->fns[a->nfns++] = fi;
	return fi;
}

static size_t hslot(uint64_t func, uint32_t pid, size_t cap)
{
	return (size_t)(((func ^ ((uint64_t)pid << 40)) * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
}

static int grow(struct trail_argtypes *a)
{
	size_t cap = a->cap ? a->cap * 2 : 256;
	struct slot *s = calloc(cap, sizeof(*s));

	if (!s)
		return -ENOMEM;
	for (size_t i = 0; i < a->cap; i++) {
		size_t k;

		if (!a->slots[i].used)
			continue;
		for (k = hslot(a->slots[i].func, a->slots[i].pid, cap); s[k].used; k = (k + 1) & (cap - 1))
			;
		s[k] = a->slots[i];
	}
	free(a->slots);
	a->slots = s;
	a->cap = cap;
	return 0;
}

/* what is known of the function at func in pid (name: its bare symbol) */
static const struct fninfo *lookup(struct trail_argtypes *a, uint32_t pid, uint64_t func,
				   uint64_t ts_raw, const char *name)
{
	const char *module;
	size_t k;

	if (!a || !name)
		return NULL;
	if (a->cap) {
		for (k = hslot(func, pid, a->cap); a->slots[k].used; k = (k + 1) & (a->cap - 1))
			if (a->slots[k].func == func && a->slots[k].pid == pid)
				return a->slots[k].fi;
	}
	if ((a->used + 1) * 2 > a->cap && grow(a))
		return NULL;
	module = trail_reader_module(a->r, pid, func, ts_raw);
	for (k = hslot(func, pid, a->cap); a->slots[k].used; k = (k + 1) & (a->cap - 1))
		;
	a->slots[k] = (struct slot){func, pid, 1, module ? fn_new(a, module, name) : NULL};
	a->used++;
	return a->slots[k].fi;
}

/* v as the kernel's fetch type t has it: sN signed, uN unsigned, anything
 * else (xN, pointers, strings) hex, all trimmed to the type's width */
static struct trail_argval trim(const char *name, const char *t, uint64_t v)
{
	unsigned bits = (unsigned)strtoul(t + 1, NULL, 10);
	char kind = t[0] == 's' || t[0] == 'u' ? t[0] : 'x';

	if ((t[0] == 's' || t[0] == 'u' || t[0] == 'x') && bits && bits < 64)
		v &= (1ull << bits) - 1;
	if (t[0] == 's' && bits && bits < 64 && (v >> (bits - 1) & 1))
		v |= ~0ull << bits;
	return (struct trail_argval){name, kind, v};
}

static void typed(struct lbuf *l, const char *t, uint64_t v)
{
	struct trail_argval a = trim(NULL, t, v);

	if (a.kind == 's' && (int64_t)a.v < 0) {
		lb_put(l, "-", 1);
		lb_num(l, -(unsigned long long)a.v, 0, ' ');
	} else if (a.kind != 'x') {
		lb_num(l, (unsigned long long)a.v, 0, ' ');
	} else {
		lb_hex(l, (unsigned long long)a.v);
	}
}

int trail_argtypes_args(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, const uint64_t args[6], struct lbuf *l)
{
	const struct fninfo *fi = lookup(a, pid, func, ts_raw, name);

	if (!fi || !fi->known)
		return 0;
	lb_put(l, "(", 1);
	for (int i = 0; i < fi->nparams; i++) {
		if (i)
			lb_put(l, ", ", 2);
		lb_str(l, fi->p[i].name);
		lb_put(l, "=", 1);
		typed(l, fi->p[i].type, args[fi->p[i].reg]);
	}
	if (fi->more)
		lb_str(l, fi->nparams ? ", ..." : "...");
	lb_put(l, ")", 1);
	return 1;
}

int trail_argtypes_retval(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			  const char *name, uint64_t retval, struct lbuf *l)
{
	const struct fninfo *fi = lookup(a, pid, func, ts_raw, name);

	if (!fi || !fi->known || !fi->ret[0])
		return -1;
	if (!strcmp(fi->ret, "void"))
		return 0;
	if (l)
		typed(l, fi->ret, retval);
	return 1;
}

int trail_argtypes_vals(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, const uint64_t args[6], struct trail_argval *out,
			int *more)
{
	const struct fninfo *fi = lookup(a, pid, func, ts_raw, name);

	if (!fi || !fi->known)
		return -1;
	for (int i = 0; i < fi->nparams; i++)
		out[i] = trim(fi->p[i].name, fi->p[i].type, args[fi->p[i].reg]);
	*more = fi->more;
	return fi->nparams;
}

int trail_argtypes_retv(struct trail_argtypes *a, uint32_t pid, uint64_t func, uint64_t ts_raw,
			const char *name, uint64_t retval, struct trail_argval *out)
{
	const struct fninfo *fi = lookup(a, pid, func, ts_raw, name);

	if (!fi || !fi->known || !fi->ret[0])
		return -1;
	if (!strcmp(fi->ret, "void"))
		return 0;
	*out = trim(NULL, fi->ret, retval);
	return 1;
}

const char *trail_argtypes_bare(const char *name, char *buf, size_t n)
{
	const char *paren;

	if (!name || !(paren = strchr(name, '(')))
		return name;
	if ((size_t)(paren - name) >= n)
		return NULL;
	memcpy(buf, name, (size_t)(paren - name));
	buf[paren - name] = '\0';
	return buf;
}
