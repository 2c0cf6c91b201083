/* SPDX-License-Identifier: MIT */
/*
 * dwarf.c - function parameters and perf-probe style expressions on them,
 * from DWARF (elfutils: libdwfl finds the debug info, libdw reads it),
 * turned into the kernel's raw fetch-args that src/probe/compile.c takes.
 *
 * A probe fires at the function's patchable entry, before its prologue.
 * Location lists do not describe that point reliably (at -O0 they are
 * frame-based, right only after the prologue), so where a parameter is
 * comes from the calling convention alone (x86_64 SysV ABI 3.2.3), applied
 * to the prototype DWARF gives, parameters in order:
 *
 *   INTEGER eightbytes: integers, enums,     rdi rsi rdx rcx r8 r9
 *   pointers, references, aggregates of them
 *   SSE eightbytes: float, double            xmm0-7 (not fetchable: the
 *                                            kernel syntax has no xmm)
 *   MEMORY: aggregates over 16 bytes or      the stack; at the entry sp
 *   with unaligned members, long double,     points at the return address,
 *   and whatever finds its registers taken   so the first slot is 8(%sp)
 *
 * An aggregate takes all its registers or goes to the stack whole, and a
 * later parameter can still take a register left over. A C++ class with a
 * non-trivial copy or destructor is passed as a pointer to a copy (the
 * Itanium C++ ABI): its members are read through that pointer.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dwarf.h"

#define MAX_DEREF 16   /* the kernel's FETCH_INSN_MAX, as nested +OFF() */
#define MAX_PARAMS 128 /* MAX_TRACE_ARGS */
#define MAX_ARRAY 64   /* MAX_ARRAY_LEN */
#define MAX_DEPTH 16   /* type nesting followed, against loops */

struct probe_dwarf {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwfl_Callbacks cb; /* dwfl keeps a pointer to it */
	char *dbgpath;     /* cb.debuginfo_path points here */
	char cached[256];  /* the function last looked up, */
	Dwarf_Die fn;      /* and its DIE */
};

/* ------------------------------------------------------------------------
 * Opening: the object, then its separate debug file (.gnu_debuglink, build
 * id) under ":.debug:ROOT", ROOT $TRAIL_DEBUG_ROOT or /usr/lib/debug.
 */
int probe_dwarf_open(const char *path, struct probe_dwarf **out, char *err, size_t n)
{
	const char *root = getenv("TRAIL_DEBUG_ROOT");
	struct probe_dwarf *dw;
	Dwarf_Addr bias;

	*out = NULL;
	if (access(path, R_OK)) {
		int e = errno;

		snprintf(err, n, "cannot open %s: %s", path, strerror(e));
		return -e;
	}
	dw = calloc(1, sizeof(*dw));
	if (!dw || (root && *root && asprintf(&dw->dbgpath, ":.debug:%s", root) < 0)) {
		free(dw);
		snprintf(err, n, "out of memory");
		return -ENOMEM;
	}
	dw->cb.find_elf = dwfl_build_id_find_elf;
	dw->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	dw->cb.section_address = dwfl_offline_section_address;
	dw->cb.debuginfo_path = &dw->dbgpath;
	dw->dwfl = dwfl_begin(&dw->cb);
	if (dw->dwfl) {
		dwfl_report_begin(dw->dwfl);
		dw->mod = dwfl_report_offline(dw->dwfl, path, path, -1);
		dwfl_report_end(dw->dwfl, NULL, NULL);
	}
	if (!dw->mod) {
		snprintf(err, n, "%s: %s", path, dwfl_errmsg(-1));
		probe_dwarf_close(dw);
		return -ENOEXEC;
	}
	if (!dwfl_module_getdwarf(dw->mod, &bias)) {
		snprintf(err, n, "no debug info for %s (build with -g, or install its debug package)",
			 path);
		probe_dwarf_close(dw);
		return -ENOENT;
	}
	*out = dw;
	return 0;
}

void probe_dwarf_close(struct probe_dwarf *dw)
{
	if (!dw)
		return;
	if (dw->dwfl)
		dwfl_end(dw->dwfl);
	free(dw->dbgpath);
	free(dw);
}

/* ------------------------------------------------------------------------
 * Types.
 */
static const char *attr_str(Dwarf_Die *d, int at)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(d, at, &a));
}

static int attr_udata(Dwarf_Die *d, int at, Dwarf_Word *v)
{
	Dwarf_Attribute a;

	return dwarf_formudata(dwarf_attr_integrate(d, at, &a), v);
}

/* The DIE's DW_AT_type into *t; -1 for none (void). */
static int type_of(Dwarf_Die *d, Dwarf_Die *t)
{
	Dwarf_Attribute a;

	return dwarf_formref_die(dwarf_attr_integrate(d, DW_AT_type, &a), t) ? 0 : -1;
}

/* Strip qualifiers, and typedefs when asked: -1 when that leaves void. */
static int strip(Dwarf_Die *d, Dwarf_Die *t, int typedefs)
{
	*t = *d;
	for (int i = 0; i < MAX_DEPTH; i++) {
		int tag = dwarf_tag(t);

		if (tag != DW_TAG_const_type && tag != DW_TAG_volatile_type &&
		    tag != DW_TAG_restrict_type && tag != DW_TAG_atomic_type &&
		    !(typedefs && tag == DW_TAG_typedef))
			return 0;
		if (type_of(t, t))
			return -1;
	}
	return -1;
}

static int is_ptr(int tag)
{
	return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	       tag == DW_TAG_rvalue_reference_type;
}

static int is_agg(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_union_type ||
	       tag == DW_TAG_class_type;
}

static Dwarf_Word type_size(Dwarf_Die *t)
{
	Dwarf_Word sz;

	if (dwarf_aggregate_size(t, &sz) == 0)
		return sz;
	return is_ptr(dwarf_tag(t)) ? 8 : 0;
}

static Dwarf_Word encoding(Dwarf_Die *t)
{
	Dwarf_Word enc = DW_ATE_signed;
	Dwarf_Die u;

	/* an enum says it, or its underlying type does */
	if (attr_udata(t, DW_AT_encoding, &enc) && dwarf_tag(t) == DW_TAG_enumeration_type &&
	    type_of(t, &u) == 0 && strip(&u, &u, 1) == 0)
		attr_udata(&u, DW_AT_encoding, &enc);
	return enc;
}

static int is_float(Dwarf_Die *t)
{
	Dwarf_Word enc = encoding(t);

	return dwarf_tag(t) == DW_TAG_base_type &&
	       (enc == DW_ATE_float || enc == DW_ATE_complex_float || enc == DW_ATE_decimal_float);
}

/* The kernel type of an integer, enum or bool t (stripped): -1 if none. */
static int int_type(Dwarf_Die *t, char *buf, size_t n)
{
	Dwarf_Word enc = encoding(t), sz = type_size(t);
	int sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;

	if (dwarf_tag(t) != DW_TAG_base_type && dwarf_tag(t) != DW_TAG_enumeration_type)
		return -1;
	if (!sign && enc != DW_ATE_unsigned && enc != DW_ATE_unsigned_char &&
	    enc != DW_ATE_boolean && enc != DW_ATE_UTF)
		return -1;
	if (sz != 1 && sz != 2 && sz != 4 && sz != 8)
		return -1;
	snprintf(buf, n, "%c%u", sign ? 's' : 'u', (unsigned)sz * 8);
	return 0;
}

/* A string's character: char, signed or unsigned char as written, not
 * through a typedef (uint8_t data is bytes, not text). */
static int is_char(Dwarf_Die *d)
{
	Dwarf_Die t;
	Dwarf_Word enc;

	return strip(d, &t, 0) == 0 && dwarf_tag(&t) == DW_TAG_base_type &&
	       type_size(&t) == 1 && attr_udata(&t, DW_AT_encoding, &enc) == 0 &&
	       (enc == DW_ATE_signed_char || enc == DW_ATE_unsigned_char);
}

/* What to call a type in messages. */
static const char *type_name(Dwarf_Die *d, char *buf, size_t n)
{
	const char *kw = NULL, *name;
	Dwarf_Die t;

	if (strip(d, &t, 0))
		return "void";
	name = dwarf_diename(&t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_structure_type: kw = "struct"; break;
	case DW_TAG_union_type: kw = "union"; break;
	case DW_TAG_class_type: kw = "class"; break;
	case DW_TAG_enumeration_type: kw = "enum"; break;
	case DW_TAG_pointer_type: return "a pointer";
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: return "a reference";
	case DW_TAG_array_type: return "an array";
	}
	if (!kw)
		return name ? name : "?";
	snprintf(buf, n, "%s %s", kw, name ? name : "<anonymous>");
	return buf;
}

/* An array's element type and count (0: unknown); -1 for more than one
 * dimension. */
static int array_dim(Dwarf_Die *t, Dwarf_Die *elem, Dwarf_Word *count)
{
	Dwarf_Die s;
	Dwarf_Word v;
	int dims = 0;

	*count = 0;
	if (type_of(t, elem) || dwarf_child(t, &s))
		return -1;
	do {
		if (dwarf_tag(&s) != DW_TAG_subrange_type)
			continue;
		if (dims++)
			return -1;
		if (attr_udata(&s, DW_AT_count, &v) == 0)
			*count = v;
		else if (attr_udata(&s, DW_AT_upper_bound, &v) == 0)
			*count = v + 1;
	} while (dwarf_siblingof(&s, &s) == 0);
	return 0;
}

/* The first (first != 0) or next data member of an aggregate, base
 * classes (DW_TAG_inheritance) included; static members are declarations. */
static int field_next(Dwarf_Die *agg, Dwarf_Die *m, int first)
{
	int r = first ? dwarf_child(agg, m) : dwarf_siblingof(m, m);

	for (; r == 0; r = dwarf_siblingof(m, m)) {
		int tag = dwarf_tag(m);

		if (tag == DW_TAG_inheritance ||
		    (tag == DW_TAG_member && !dwarf_hasattr(m, DW_AT_declaration) &&
		     !dwarf_hasattr(m, DW_AT_external)))
			return 0;
	}
	return -1;
}

/* A member's place: *bit its first bit from the aggregate's start, *bsize
 * its width if a bitfield (else 0). A union's members have no location. */
static int field_pos(Dwarf_Die *m, Dwarf_Word *bit, int *bsize)
{
	Dwarf_Word loc = 0, v, unit;

	if (dwarf_hasattr(m, DW_AT_data_member_location) &&
	    attr_udata(m, DW_AT_data_member_location, &loc))
		return -1; /* DWARF 2's location expressions */
	*bsize = dwarf_hasattr(m, DW_AT_bit_size) ? dwarf_bitsize(m) : 0;
	*bit = loc * 8;
	if (attr_udata(m, DW_AT_data_bit_offset, &v) == 0) {
		*bit = v;
	} else if (*bsize && attr_udata(m, DW_AT_bit_offset, &v) == 0) {
		/* DWARF 2 to 4 count from the storage unit's most
		 * significant bit: on little endian, its last */
		if (attr_udata(m, DW_AT_byte_size, &unit))
			return -1;
		*bit = loc * 8 + unit * 8 - v - (Dwarf_Word)*bsize;
	}
	return *bsize < 0 ? -1 : 0;
}

/* ------------------------------------------------------------------------
 * The calling convention: each eightbyte of a parameter classed.
 */
enum { C_NONE, C_INT, C_SSE, C_MEM };

static void mark(int cls[2], Dwarf_Word off, Dwarf_Word size, int c)
{
	for (Dwarf_Word e = off / 8; e <= (off + size - 1) / 8 && e < 2; e++) {
		if (cls[e] == C_NONE || c == C_MEM || (c == C_INT && cls[e] == C_SSE))
			cls[e] = c;
	}
}

static void classify(Dwarf_Die *type, Dwarf_Word off, int cls[2], int depth)
{
	Dwarf_Word size, bit, count, i;
	Dwarf_Die t, m, mt;
	int bsize;

	if (depth > MAX_DEPTH || strip(type, &t, 1)) {
		mark(cls, off, 1, C_MEM);
		return;
	}
	size = type_size(&t);
	switch (dwarf_tag(&t)) {
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		for (int r = field_next(&t, &m, 1); r == 0; r = field_next(&t, &m, 0)) {
			if (field_pos(&m, &bit, &bsize) || type_of(&m, &mt))
				mark(cls, off, size ? size : 1, C_MEM);
			else if (bsize)
				mark(cls, off + bit / 8, 1, C_INT);
			else
				classify(&mt, off + bit / 8, cls, depth + 1);
		}
		return;
	case DW_TAG_array_type:
		if (array_dim(&t, &mt, &count) || !(size = type_size(&mt)))
			mark(cls, off, 1, C_MEM);
		for (i = 0; i < count && off + i * size < 16; i++)
			classify(&mt, off + i * size, cls, depth + 1);
		return;
	case DW_TAG_base_type:
		if (!size || (size <= 8 && off % size)) /* packed: unaligned */
			mark(cls, off, 1, C_MEM);
		else if (!is_float(&t))
			mark(cls, off, size, size > 16 ? C_MEM : C_INT);
		else if (size <= 8 || (encoding(&t) == DW_ATE_complex_float && size <= 16))
			mark(cls, off, size, C_SSE);
		else /* long double: X87 class, in memory */
			mark(cls, off, size, C_MEM);
		return;
	default: /* pointers, references, enums */
		mark(cls, off, size ? size : 8, off % 8 ? C_MEM : C_INT);
	}
}

static Dwarf_Word align_of(Dwarf_Die *type, int depth)
{
	Dwarf_Word a = 1, v;
	Dwarf_Die t, m, mt;

	if (depth > MAX_DEPTH || strip(type, &t, 1))
		return 8;
	if (attr_udata(&t, DW_AT_alignment, &v) == 0)
		return v;
	switch (dwarf_tag(&t)) {
	case DW_TAG_structure_type:
	case DW_TAG_union_type:
	case DW_TAG_class_type:
		for (int r = field_next(&t, &m, 1); r == 0; r = field_next(&t, &m, 0)) {
			if (type_of(&m, &mt) == 0 && (v = align_of(&mt, depth + 1)) > a)
				a = v;
		}
		return a;
	case DW_TAG_array_type:
		return type_of(&t, &mt) ? 1 : align_of(&mt, depth + 1);
	}
	v = type_size(&t);
	if (dwarf_tag(&t) == DW_TAG_base_type && encoding(&t) == DW_ATE_complex_float)
		v /= 2;
	return v ? v : 1;
}

/* Is c (a member function of class cname) one that makes copies of the
 * class non-trivial: a destructor, a copy or move constructor the user
 * wrote (not defaulted in the class)? */
static int special_member(Dwarf_Die *c, const char *cname)
{
	const char *name = dwarf_diename(c);
	size_t len = strcspn(cname, "<"); /* a template's "vec<int>" */
	Dwarf_Die p, pt;
	Dwarf_Word dflt;

	if (!name || dwarf_hasattr(c, DW_AT_artificial) ||
	    (attr_udata(c, DW_AT_defaulted, &dflt) == 0 && dflt == DW_DEFAULTED_in_class))
		return 0;
	if (name[0] == '~')
		return 1;
	if (strlen(name) != len || strncmp(name, cname, len) || dwarf_child(c, &p))
		return 0;
	/* a constructor: is its first parameter after 'this' a reference
	 * to the class? */
	while (dwarf_tag(&p) != DW_TAG_formal_parameter || dwarf_hasattr(&p, DW_AT_artificial))
		if (dwarf_siblingof(&p, &p))
			return 0;
	if (type_of(&p, &pt) || (dwarf_tag(&pt) != DW_TAG_reference_type &&
				 dwarf_tag(&pt) != DW_TAG_rvalue_reference_type) ||
	    type_of(&pt, &pt) || strip(&pt, &pt, 1))
		return 0;
	name = dwarf_diename(&pt);
	return name && !strcmp(name, cname);
}

/* Passed by invisible reference (Itanium C++ ABI 3.1.2.3)? DWARF may say
 * it (DW_AT_calling_convention, clang); else a special member, a virtual
 * table, or a base or member that has one. */
static int by_reference(Dwarf_Die *t, int depth)
{
	const char *cname = dwarf_diename(t), *name;
	Dwarf_Word cc, count;
	Dwarf_Die c, mt;

	if (attr_udata(t, DW_AT_calling_convention, &cc) == 0)
		return cc == DW_CC_pass_by_reference;
	if (depth > MAX_DEPTH || dwarf_child(t, &c))
		return 0;
	do {
		if (dwarf_tag(&c) == DW_TAG_subprogram && cname && special_member(&c, cname))
			return 1;
	} while (dwarf_siblingof(&c, &c) == 0);
	for (int r = field_next(t, &c, 1); r == 0; r = field_next(t, &c, 0)) {
		name = dwarf_diename(&c);
		if (name && !strncmp(name, "_vptr", 5))
			return 1;
		if (type_of(&c, &mt) || strip(&mt, &mt, 1))
			continue;
		if (dwarf_tag(&mt) == DW_TAG_array_type &&
		    (array_dim(&mt, &mt, &count) || strip(&mt, &mt, 1)))
			continue;
		if (is_agg(dwarf_tag(&mt)) && by_reference(&mt, depth + 1))
			return 1;
	}
	return 0;
}

/* A parameter, where it is at the function's entry. */
struct param {
	const char *name;   /* NULL: unnamed (called argN) */
	Dwarf_Die type;
	const char *reg[2]; /* in registers: each eightbyte's (NULL: SSE) */
	int inreg;
	Dwarf_Word sp;      /* else on the stack at sp + this */
	int byref;          /* there is a pointer to it instead */
	const char *mreg;   /* at an address (a variable's DWARF location):
			     * in memory at mreg + moff (mreg NULL: not) */
	int64_t moff;
	int imm;            /* ... or a constant there, immv */
	int64_t immv;
};

static const char *const iregs[6] = {"%di", "%si", "%dx", "%cx", "%r8", "%r9"};

static void place(struct param *ps, int n)
{
	Dwarf_Word stk = 0; /* bytes of the stack argument area, from 8(%sp) */
	int ni = 0, ns = 0;

	for (int i = 0; i < n; i++) {
		struct param *p = &ps[i];
		int cls[2] = {C_NONE, C_NONE}, need_i = 0, need_s = 0, neb;
		Dwarf_Word size = 8, align = 8;
		Dwarf_Die t;

		if (strip(&p->type, &t, 1)) {
			cls[0] = C_MEM;
		} else if (is_agg(dwarf_tag(&t)) && by_reference(&t, 0)) {
			p->byref = 1;
			cls[0] = C_INT;
		} else {
			size = type_size(&t);
			align = align_of(&t, 0);
			if (size > 16 || size == 0)
				cls[0] = C_MEM;
			else
				classify(&t, 0, cls, 0);
		}
		neb = size > 8 ? 2 : 1;
		for (int e = 0; e < neb; e++) {
			need_i += cls[e] == C_INT;
			need_s += cls[e] == C_SSE;
		}
		if (cls[0] != C_MEM && cls[1] != C_MEM && ni + need_i <= 6 && ns + need_s <= 8) {
			p->inreg = 1;
			ns += need_s;
			for (int e = 0; e < neb; e++)
				p->reg[e] = cls[e] == C_INT ? iregs[ni++] : NULL;
			continue;
		}
		align = align > 8 ? align : 8;
		stk = (stk + align - 1) / align * align;
		p->sp = 8 + stk;
		stk += (size + 7) / 8 * 8;
	}
}

/* ------------------------------------------------------------------------
 * Functions: found by name, linkage name or qualified name ("ns::cls::f",
 * or its tail "cls::f"), in any unit; a definition with code is preferred,
 * and among those the one the symbol of that name starts (not a clone).
 */
struct lookup {
	struct probe_dwarf *dw;
	const char *func, *tail; /* tail: after the last "::" */
	Dwarf_Addr bias;
	Dwarf_Die best;
	int score;
};

static int qualified_is(Dwarf_Die *d, const char *func)
{
	Dwarf_Die decl = *d, *scopes = NULL;
	Dwarf_Attribute a;
	char q[512] = "";
	size_t len = 0, flen = strlen(func);
	int n, ok;

	/* the scopes are the declaration's: a definition outside its class
	 * points there */
	for (int i = 0; i < MAX_DEPTH; i++) {
		if (!dwarf_attr(&decl, DW_AT_specification, &a) &&
		    !dwarf_attr(&decl, DW_AT_abstract_origin, &a))
			break;
		if (!dwarf_formref_die(&a, &decl))
			return 0;
	}
	n = dwarf_getscopes_die(&decl, &scopes);
	for (int i = n - 1; i > 0 && len < sizeof(q); i--) {
		const char *s = dwarf_diename(&scopes[i]);
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_namespace || is_agg(tag))
			len += snprintf(q + len, sizeof(q) - len, "%s::",
					s ? s : "(anonymous namespace)");
	}
	free(scopes);
	if (len < sizeof(q) && dwarf_diename(&decl))
		snprintf(q + len, sizeof(q) - len, "%s", dwarf_diename(&decl));
	len = strlen(q);
	ok = len >= flen && !strcmp(q + len - flen, func) &&
	     (len == flen || (len > flen + 1 && q[len - flen - 1] == ':'));
	return ok;
}

static int consider(struct lookup *l, Dwarf_Die *d)
{
	const char *name = attr_str(d, DW_AT_name), *link, *sym;
	Dwarf_Addr lo, base, end;
	int s = 1;

	link = attr_str(d, DW_AT_linkage_name);
	if (!link)
		link = attr_str(d, DW_AT_MIPS_linkage_name);
	if (!(link && !strcmp(link, l->func)) &&
	    !(name && !strcmp(name, l->tail) && (l->tail == l->func || qualified_is(d, l->func))))
		return 0;
	if (dwarf_lowpc(d, &lo) == 0 || dwarf_ranges(d, 0, &base, &lo, &end) > 0) {
		sym = dwfl_module_addrname(l->dw->mod, lo + l->bias);
		s = 2 + (sym && (!strcmp(sym, l->func) || (link && !strcmp(sym, link))));
	}
	if (s > l->score) {
		l->score = s;
		l->best = *d;
	}
	return s == 3;
}

static int scan(struct lookup *l, Dwarf_Die *parent, int depth)
{
	Dwarf_Die d;

	if (depth > MAX_DEPTH || dwarf_child(parent, &d))
		return 0;
	do {
		int tag = dwarf_tag(&d);

		if (tag == DW_TAG_subprogram) {
			if (consider(l, &d))
				return 1;
		} else if (tag == DW_TAG_namespace || is_agg(tag)) {
			if (scan(l, &d, depth + 1))
				return 1;
		}
	} while (dwarf_siblingof(&d, &d) == 0);
	return 0;
}

static int func_die(struct probe_dwarf *dw, const char *func, Dwarf_Die *out)
{
	struct lookup l = {.dw = dw, .func = func, .tail = func};
	Dwarf_Die *cu = NULL;
	const char *c;

	if (dw->cached[0] && !strcmp(dw->cached, func)) {
		*out = dw->fn;
		return 0;
	}
	for (c = strstr(func, "::"); c; c = strstr(c + 2, "::"))
		l.tail = c + 2;
	while ((cu = dwfl_nextcu(dw->dwfl, cu, &l.bias)))
		if (scan(&l, cu, 0))
			break;
	if (!l.score)
		return -ENOENT;
	*out = dw->fn = l.best;
	dw->cached[0] = 0;
	if (strlen(func) < sizeof(dw->cached))
		strcpy(dw->cached, func);
	return 0;
}

/* The parameters of fn, placed; their count, at most max. */
static int params_of(Dwarf_Die *fn, struct param *ps, int max, int *variadic)
{
	Dwarf_Die proto = *fn, c;
	Dwarf_Attribute a;
	int n = 0;

	/* the prototype: a concrete instance (out of line, or a clone)
	 * may list its parameters in another order, or not all of them */
	for (int i = 0; i < MAX_DEPTH && dwarf_attr(&proto, DW_AT_abstract_origin, &a); i++)
		if (!dwarf_formref_die(&a, &proto))
			return 0;
	*variadic = 0;
	if (dwarf_child(&proto, &c))
		return 0;
	do {
		if (dwarf_tag(&c) == DW_TAG_unspecified_parameters)
			*variadic = 1;
		if (dwarf_tag(&c) != DW_TAG_formal_parameter || n == max)
			continue;
		memset(&ps[n], 0, sizeof(ps[n]));
		ps[n].name = attr_str(&c, DW_AT_name);
		if (type_of(&c, &ps[n].type) == 0)
			n++;
	} while (dwarf_siblingof(&c, &c) == 0);
	place(ps, n);
	return n;
}

static void param_name(const struct param *p, int i, char *buf, size_t n)
{
	if (p->name)
		snprintf(buf, n, "%s", p->name);
	else
		snprintf(buf, n, "arg%d", i + 1);
}

int probe_dwarf_func(struct probe_dwarf *dw, const char *func, int *nparams, int *variadic)
{
	struct param ps[MAX_PARAMS];
	Dwarf_Die fn;
	int n, va;

	if (func_die(dw, func, &fn))
		return -ENOENT;
	n = params_of(&fn, ps, MAX_PARAMS, &va);
	if (nparams)
		*nparams = n;
	if (variadic)
		*variadic = va;
	return 0;
}

/* ------------------------------------------------------------------------
 * Expressions: a walk from a parameter, member by member.
 */
struct walk {
	const char *expr;
	int *errpos;
	char *err;
	size_t en;
	Dwarf_Die type;     /* the current object's type, as declared */
	const char *reg[2]; /* in registers (inreg): their eightbytes */
	int inreg;
	char base[128];     /* else in memory at base + off (base: a fetch-arg
			     * giving an address) */
	Dwarf_Word off;     /* bytes from base, or into the registers */
	int bsize, boff;    /* a bitfield: width, and first bit after off */
	int whole;          /* the parameter itself: no member, no index */
	int pos;            /* where in expr the current object is named */
	char name[32];
};

static int fail(struct walk *w, int pos, int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(w->err, w->en, fmt, ap);
	va_end(ap);
	if (w->errpos)
		*w->errpos = pos;
	return code;
}

static void walk_start(struct walk *w, const struct param *p, int i)
{
	w->type = p->type;
	w->whole = 1;
	w->pos = 0;
	param_name(p, i, w->name, sizeof(w->name));
	if (p->byref) { /* its address is the parameter */
		w->whole = 0;
		if (p->inreg)
			strcpy(w->base, p->reg[0]);
		else
			snprintf(w->base, sizeof(w->base), "$stack%u", (unsigned)(p->sp / 8));
	} else if (p->inreg) {
		w->inreg = 1;
		w->reg[0] = p->reg[0];
		w->reg[1] = p->reg[1];
	} else if (p->mreg) {
		strcpy(w->base, p->mreg);
		w->off = (Dwarf_Word)p->moff;
	} else {
		strcpy(w->base, "%sp");
		w->off = p->sp;
	}
}

/* The fetch-arg reading the sz bytes (at most 8) the walk is at. In
 * registers, *shift gets their first bit in the register. */
static int value(struct walk *w, Dwarf_Word sz, char *v, size_t n, int *shift)
{
	const char *r;
	int len;

	*shift = 0;
	if (w->inreg) {
		r = w->off < 16 ? w->reg[w->off / 8] : NULL;
		if (!r || w->off % 8 + sz > 8)
			return fail(w, w->pos, -EINVAL, "'%s' is not in an integer register",
				    w->name);
		*shift = (int)(w->off % 8) * 8;
		len = snprintf(v, n, "%s", r);
	} else if (w->whole && !strcmp(w->base, "%sp") && w->off < (1u << 20) && !(w->off % 8)) {
		len = snprintf(v, n, "$stack%u", (unsigned)(w->off / 8));
	} else {
		len = snprintf(v, n, "%+lld(%s)", (long long)(int64_t)w->off, w->base);
	}
	if (len < 0 || (size_t)len >= n)
		return fail(w, w->pos, -EINVAL, "Argument expression is too long");
	return 0;
}

/* The current object, a pointer or reference, read: its target becomes
 * the current object (of type *pt). */
static int deref(struct walk *w, Dwarf_Die *pt, int pos)
{
	char v[sizeof(w->base)];
	int shift, parens = 0;

	if (value(w, 8, v, sizeof(v), &shift))
		return -EINVAL;
	for (const char *c = v; *c; c++)
		parens += *c == '(';
	if (shift)
		return fail(w, pos, -EINVAL, "'%s' is not aligned in its register", w->name);
	/* reading the target takes one more */
	if (parens + 1 > MAX_DEREF)
		return fail(w, pos, -EINVAL, "Dereference is too much nested (at most %d)",
			    MAX_DEREF);
	strcpy(w->base, v);
	w->inreg = 0;
	w->off = 0;
	w->whole = 0;
	w->type = *pt;
	return 0;
}

/* Find the member name (len bytes) in the aggregate t, through anonymous
 * members and base classes: *bit advanced by its place. */
static int find_member(Dwarf_Die *t, const char *name, size_t len, Dwarf_Word *bit,
		       int *bsize, Dwarf_Die *mt, int depth)
{
	Dwarf_Die m, ft;
	Dwarf_Word b;

	for (int r = field_next(t, &m, 1); r == 0; r = field_next(t, &m, 0)) {
		const char *mn = dwarf_diename(&m);

		if (field_pos(&m, &b, bsize) || type_of(&m, &ft))
			continue;
		if (mn && dwarf_tag(&m) == DW_TAG_member && strlen(mn) == len &&
		    !strncmp(mn, name, len)) {
			*bit += b;
			*mt = ft;
			return 0;
		}
		if ((!mn || dwarf_tag(&m) == DW_TAG_inheritance) && depth < MAX_DEPTH &&
		    strip(&ft, &ft, 1) == 0 && is_agg(dwarf_tag(&ft)) &&
		    find_member(&ft, name, len, &b, bsize, mt, depth + 1) == 0) {
			*bit += b;
			return 0;
		}
	}
	return -1;
}

static void list_members(Dwarf_Die *t, char *buf, size_t n, int depth)
{
	Dwarf_Die m, ft;

	for (int r = field_next(t, &m, 1); r == 0; r = field_next(t, &m, 0)) {
		const char *mn = dwarf_diename(&m);
		size_t len = strlen(buf);

		if ((!mn || dwarf_tag(&m) == DW_TAG_inheritance) && depth < MAX_DEPTH &&
		    type_of(&m, &ft) == 0 && strip(&ft, &ft, 1) == 0 && is_agg(dwarf_tag(&ft)))
			list_members(&ft, buf, n, depth + 1);
		else if (mn && len + strlen(mn) + 6 < n)
			snprintf(buf + len, n - len, "%s%s", len ? ", " : "", mn);
		else if (mn && len + 6 < n && !strstr(buf, "..."))
			snprintf(buf + len, n - len, ", ...");
	}
}

/* ".NAME" or "->NAME" (op at opos, the name at npos, len bytes) */
static int member(struct walk *w, int arrow, int opos, int npos, size_t len)
{
	const char *name = w->expr + npos;
	char tn[128], list[256] = "";
	Dwarf_Die t, mt;
	Dwarf_Word bit = 0;
	int tag, bsize;

	if (strip(&w->type, &t, 1))
		return fail(w, opos, -EINVAL, "'%s' is void", w->name);
	tag = dwarf_tag(&t);
	if (arrow && is_agg(tag))
		return fail(w, opos, -EINVAL, "'%s' is %s, not a pointer: use '.'", w->name,
			    type_name(&w->type, tn, sizeof(tn)));
	if (!arrow && tag == DW_TAG_pointer_type)
		return fail(w, opos, -EINVAL, "'%s' is a pointer: use '->'", w->name);
	if (is_ptr(tag)) {
		int void_ptr = type_of(&t, &mt) != 0;

		if (void_ptr || strip(&mt, &t, 1) || !is_agg(dwarf_tag(&t)))
			return fail(w, opos, -EINVAL,
				    "This is not a pointer to union/structure: '%s' points to %s",
				    w->name, void_ptr ? "void" : type_name(&mt, tn, sizeof(tn)));
		if (deref(w, &mt, opos))
			return -EINVAL;
	} else if (!is_agg(tag)) {
		return fail(w, opos, -EINVAL, arrow ? "This is not a pointer to union/structure: '%s' is %s" :
				"'%s' is not a struct or union (it is %s)",
			    w->name, type_name(&w->type, tn, sizeof(tn)));
	}
	if (find_member(&t, name, len, &bit, &bsize, &mt, 0)) {
		list_members(&t, list, sizeof(list), 0);
		return fail(w, npos, -EINVAL, "no member '%.*s' in %s (members: %s)", (int)len, name,
			    type_name(&t, tn, sizeof(tn)), list);
	}
	w->off += bit / 8;
	w->boff = (int)(bit % 8);
	w->bsize = bsize;
	w->type = mt;
	w->whole = 0;
	w->pos = npos;
	snprintf(w->name, sizeof(w->name), "%.*s", (int)len, name);
	return 0;
}

/* "[idx]": '[' at bpos, the number at npos */
static int element(struct walk *w, unsigned long idx, int bpos, int npos)
{
	Dwarf_Die t, et;
	Dwarf_Word count, esz;
	int tag;

	if (strip(&w->type, &t, 1))
		return fail(w, bpos, -EINVAL, "'%s' is void", w->name);
	tag = dwarf_tag(&t);
	if (tag == DW_TAG_array_type) {
		if (array_dim(&t, &et, &count))
			return fail(w, bpos, -EINVAL, "'%s': multi-dimensional arrays are not supported",
				    w->name);
		if (count && idx >= count)
			return fail(w, npos, -EINVAL, "index %lu is past the end of '%s' (%lu elements)",
				    idx, w->name, (unsigned long)count);
	} else if (tag == DW_TAG_pointer_type) {
		if (type_of(&t, &et))
			return fail(w, bpos, -EINVAL, "'%s' points to void: it cannot be indexed",
				    w->name);
		if (deref(w, &et, bpos))
			return -EINVAL;
	} else {
		return fail(w, bpos, -EINVAL, "'%s' is not an array or a pointer", w->name);
	}
	if (strip(&et, &t, 1) || !(esz = type_size(&t)))
		return fail(w, bpos, -EINVAL, "'%s': elements of unknown size", w->name);
	w->off += idx * esz;
	w->type = et;
	w->bsize = 0;
	w->whole = 0;
	w->pos = bpos;
	return 0;
}

/* The result, written only when it fits. */
static int __attribute__((format(printf, 4, 5)))
put(struct walk *w, struct probe_dvar *out, const char *type, const char *fmt, ...)
{
	char fetch[sizeof(out->fetch)];
	va_list ap;
	int len;

	va_start(ap, fmt);
	len = vsnprintf(fetch, sizeof(fetch), fmt, ap);
	va_end(ap);
	if (len < 0 || (size_t)len >= sizeof(fetch))
		return fail(w, w->pos, -EINVAL, "Argument expression is too long");
	memcpy(out->fetch, fetch, sizeof(fetch));
	snprintf(out->type, sizeof(out->type), "%s", type);
	snprintf(out->name, sizeof(out->name), "%s", w->name);
	return 0;
}

static int bitfield(struct walk *w, Dwarf_Die *t, struct probe_dvar *out)
{
	Dwarf_Word bit = w->off * 8 + (Dwarf_Word)w->boff, c = w->inreg ? 8 : type_size(t), co;
	char type[32];

	/* the storage unit the field is in; a packed one may cross it */
	while (c < 8 && bit / (c * 8) != (bit + w->bsize - 1) / (c * 8))
		c *= 2;
	co = bit / (c * 8) * c;
	if (c > 8 || bit / (c * 8) != (bit + w->bsize - 1) / (c * 8) ||
	    (w->inreg && (co >= 16 || !w->reg[co / 8])))
		return fail(w, w->pos, -EINVAL, "Invalid bitfield: '%s' crosses its storage unit",
			    w->name);
	snprintf(type, sizeof(type), "b%d@%u/%u", w->bsize, (unsigned)(bit - co * 8),
		 (unsigned)c * 8);
	if (w->inreg)
		return put(w, out, type, "%s", w->reg[co / 8]);
	return put(w, out, type, "+%u(%s)", (unsigned)co, w->base);
}

static int array(struct walk *w, Dwarf_Die *t, struct probe_dvar *out)
{
	char type[32], et_name[16];
	Dwarf_Die et, e;
	Dwarf_Word count;

	if (w->inreg)
		return fail(w, w->pos, -EINVAL, "'%s' is in registers, not memory: index it",
			    w->name);
	if (array_dim(t, &et, &count) || !count)
		return fail(w, w->pos, -EINVAL, "'%s' has no known size: index it", w->name);
	if (is_char(&et))
		return put(w, out, "string", "%+lld(%s)", (long long)(int64_t)w->off, w->base);
	if (strip(&et, &e, 1) == 0 && is_ptr(dwarf_tag(&e)))
		strcpy(et_name, "x64");
	else if (strip(&et, &e, 1) || int_type(&e, et_name, sizeof(et_name)))
		return fail(w, w->pos, -EINVAL, "'%s' cannot be fetched whole: index it", w->name);
	if (count > MAX_ARRAY)
		return fail(w, w->pos, -EINVAL, "Array number is too big: '%s' has %lu elements (at most %d)",
			    w->name, (unsigned long)count, MAX_ARRAY);
	snprintf(type, sizeof(type), "%s[%u]", et_name, (unsigned)count);
	return put(w, out, type, "%+lld(%s)", (long long)(int64_t)w->off, w->base);
}

/* The walk's object as a fetch-arg and a kernel type. */
static int finish(struct walk *w, struct probe_dvar *out)
{
	char v[sizeof(w->base)], type[32], tn[128];
	Dwarf_Die t, pt;
	int shift, tag;

	if (strip(&w->type, &t, 1))
		return fail(w, w->pos, -EINVAL, "'%s' is void", w->name);
	tag = dwarf_tag(&t);
	if (is_float(&t))
		return fail(w, w->pos, -EINVAL, w->whole ? "float parameters cannot be fetched ('%s')" :
				"float members cannot be fetched ('%s')", w->name);
	if (tag == DW_TAG_array_type)
		return array(w, &t, out);
	if (is_agg(tag))
		return fail(w, w->pos, -EINVAL,
			    "Non pointer structure/union argument is not supported: '%s' is %s, fetch one of its members",
			    w->name, type_name(&w->type, tn, sizeof(tn)));
	if (is_ptr(tag)) {
		if (value(w, 8, v, sizeof(v), &shift))
			return -EINVAL;
		if (shift)
			return fail(w, w->pos, -EINVAL, "'%s' is not aligned in its register", w->name);
		if (tag == DW_TAG_pointer_type && type_of(&t, &pt) == 0 && is_char(&pt))
			return put(w, out, "string", "+0(%s)", v);
		return put(w, out, "x64", "%s", v);
	}
	if (int_type(&t, type, sizeof(type)))
		return fail(w, w->pos, -EINVAL, "'%s' cannot be fetched: no kernel type for %s",
			    w->name, type_name(&w->type, tn, sizeof(tn)));
	if (w->bsize)
		return bitfield(w, &t, out);
	if (value(w, type_size(&t), v, sizeof(v), &shift))
		return -EINVAL;
	if (shift)
		snprintf(type, sizeof(type), "b%u@%d/64", (unsigned)type_size(&t) * 8, shift);
	return put(w, out, type, "%s", v);
}

static size_t ident(const char *s)
{
	size_t n = 0;

	if ((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')
		while ((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		       (s[n] >= '0' && s[n] <= '9') || s[n] == '_')
			n++;
	return n;
}

static int unknown_var(struct walk *w, const char *func, size_t len, struct param *ps, int n)
{
	char list[256] = "", name[32];

	for (int i = 0; i < n; i++) {
		size_t l = strlen(list);

		param_name(&ps[i], i, name, sizeof(name));
		snprintf(list + l, sizeof(list) - l, "%s%s", i ? ", " : "", name);
	}
	return fail(w, 0, -ENOENT, "This variable is not found at this probe point: '%.*s' (%s has %s%s)",
		    (int)len, w->expr, func, n ? "parameters " : "no parameters", list);
}

static int walk_rest(struct walk *w, const char *p, struct probe_dvar *out);

/*
 *   EXPR := VAR { '->' NAME | '.' NAME | '[' INDEX ']' }
 */
int probe_dwarf_expr(struct probe_dwarf *dw, const char *func, const char *expr,
		     struct probe_dvar *out, int *errpos, char *err, size_t en)
{
	struct walk w = {.expr = expr, .errpos = errpos, .err = err, .en = en};
	struct param ps[MAX_PARAMS];
	char name[32];
	Dwarf_Die fn;
	size_t len = ident(expr);
	int n, va, i;

	if (errpos)
		*errpos = 0;
	if (func_die(dw, func, &fn))
		return fail(&w, 0, -ENOENT, "no function '%s' in the debug info", func);
	n = params_of(&fn, ps, MAX_PARAMS, &va);
	for (i = 0; i < n; i++) {
		param_name(&ps[i], i, name, sizeof(name));
		if (len && strlen(name) == len && !strncmp(name, expr, len))
			break;
	}
	if (i == n)
		return unknown_var(&w, func, len ? len : strlen(expr), ps, n);
	walk_start(&w, &ps[i], i);
	return walk_rest(&w, expr + len, out);
}

/* The rest of an expression, from where its variable's name ends. */
static int walk_rest(struct walk *w, const char *p, struct probe_dvar *out)
{
	const char *expr = w->expr;
	size_t len;
	int r = 0;

	for (; *p && !r; ) {
		int opos = (int)(p - expr), arrow = *p == '-';
		char *end;

		if (p[0] == '-' && p[1] != '>')
			return fail(w, opos, -EINVAL, "Failed to parse single hyphen. Forgot '>'?");
		if (*p == '.' || *p == '-') {
			p += *p == '.' ? 1 : 2;
			if (!(len = ident(p)))
				return fail(w, (int)(p - expr), -EINVAL, "expected a member name");
			r = member(w, arrow, opos, (int)(p - expr), len);
			p += len;
		} else if (*p == '[') {
			unsigned long idx;

			if (p[1] < '0' || p[1] > '9')
				return fail(w, opos + 1, -EINVAL, "expected an index");
			errno = 0;
			idx = strtoul(p + 1, &end, 10);
			if (errno)
				return fail(w, opos + 1, -EINVAL, "index is too big");
			if (*end != ']')
				return fail(w, (int)(end - expr), -EINVAL, "expected ']'");
			r = element(w, idx, opos, opos + 1);
			p = end + 1;
		} else {
			return fail(w, opos, -EINVAL, "unexpected '%c'", *p);
		}
	}
	return r ? r : finish(w, out);
}

/* ------------------------------------------------------------------------
 * At an address inside a function (a probe at an instruction, a source
 * line): the variables in scope there, each where its DWARF location
 * (a location list entry for that address) says it is: a register, or
 * memory at a register plus an offset, the frame base being the CFA the
 * unwind tables give for that address.
 */
static const char *const dregs[17] = {"%ax", "%dx", "%cx", "%bx", "%si", "%di", "%bp", "%sp",
				      "%r8", "%r9", "%r10", "%r11", "%r12", "%r13", "%r14",
				      "%r15", "%ip"};

/* the CU holding pc (a file address) */
static Dwarf_Die *cu_at(struct probe_dwarf *dw, Dwarf_Addr pc)
{
	Dwarf_Addr bias = 0;

	if (!dwfl_module_getdwarf(dw->mod, &bias))
		return NULL;
	return dwfl_module_addrdie(dw->mod, pc + bias, &bias);
}

/* The CFA at pc as a register and an offset, from the unwind tables. */
static int cfa_at(struct probe_dwarf *dw, Dwarf_Addr pc, int *reg, int64_t *off)
{
	Dwarf_Addr bias = 0;
	Dwarf_CFI *cfi = dwfl_module_eh_cfi(dw->mod, &bias);
	Dwarf_Frame *fr = NULL;
	Dwarf_Op *ops;
	size_t nops;
	int r = -1;

	if (!cfi)
		cfi = dwfl_module_dwarf_cfi(dw->mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &fr))
		return -1;
	/* a register plus an offset: libdw gives it as DW_OP_bregx */
	if (!dwarf_frame_cfa(fr, &ops, &nops) && nops == 1) {
		if (ops[0].atom == DW_OP_bregx && ops[0].number < 16) {
			*reg = (int)ops[0].number;
			*off = (int64_t)ops[0].number2;
			r = 0;
		} else if (ops[0].atom >= DW_OP_breg0 && ops[0].atom <= DW_OP_breg15) {
			*reg = ops[0].atom - DW_OP_breg0;
			*off = (int64_t)ops[0].number;
			r = 0;
		}
	}
	free(fr);
	return r;
}

static const char *die_name(Dwarf_Die *d)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(d, DW_AT_name, &a) ? dwarf_formstring(&a) : NULL;
}

/* The variable or parameter name (len bytes) visible at pc: innermost
 * scope first, up to its function (*fn: the function's DIE, an inlined
 * one's caller out of line). Else -ENOENT with the names there in list. */
static int var_at(struct probe_dwarf *dw, Dwarf_Addr pc, const char *name, size_t len,
		  Dwarf_Die *var, Dwarf_Die *fn, char *list, size_t ln)
{
	Dwarf_Die *cu = cu_at(dw, pc), *scopes = NULL, c;
	int n, found = -ENOENT, have_fn = 0;

	list[0] = '\0';
	if (!cu || (n = dwarf_getscopes(cu, pc, &scopes)) <= 0)
		return -ESRCH;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (found && dwarf_child(&scopes[i], &c) == 0) {
			do {
				const char *nm;
				int t = dwarf_tag(&c);

				if ((t != DW_TAG_variable && t != DW_TAG_formal_parameter) ||
				    !(nm = die_name(&c)))
					continue;
				if (strlen(nm) == len && !strncmp(nm, name, len)) {
					*var = c;
					found = 0;
					break;
				}
				if (strlen(list) + strlen(nm) + 3 < ln)
					snprintf(list + strlen(list), ln - strlen(list), "%s%s",
						 list[0] ? ", " : "", nm);
			} while (dwarf_siblingof(&c, &c) == 0);
		}
		if (tag == DW_TAG_subprogram) {
			*fn = scopes[i];
			have_fn = 1;
			break;
		}
	}
	free(scopes);
	return have_fn ? found : -ESRCH;
}

/* Where a location expression (one entry) puts the value: *p filled in
 * as a register or memory place. 0, or -EINVAL with why. */
static int place_loc(struct probe_dwarf *dw, Dwarf_Addr pc, Dwarf_Die *fn, const Dwarf_Op *ops,
		     size_t nops, struct param *p, const char **why)
{
	unsigned atom = nops ? ops[0].atom : 0;

	/* a value the code computes from one register alone, or a constant
	 * (DW_OP_stack_value): the register, or the kernel's immediate */
	if (nops == 2 && ops[1].atom == DW_OP_stack_value) {
		if (atom >= DW_OP_breg0 && atom <= DW_OP_breg15 && !ops[0].number) {
			p->inreg = 1;
			p->reg[0] = dregs[atom - DW_OP_breg0];
			return 0;
		}
		if ((atom >= DW_OP_lit0 && atom <= DW_OP_lit31) || atom == DW_OP_constu ||
		    atom == DW_OP_consts || (atom >= DW_OP_const1u && atom <= DW_OP_const8s)) {
			p->imm = 1;
			p->immv = atom >= DW_OP_lit0 && atom <= DW_OP_lit31 ? (int64_t)(atom - DW_OP_lit0)
									     : (int64_t)ops[0].number;
			return 0;
		}
	}
	if (nops != 1) {
		*why = nops ? "a computed value or pieces (optimized): not in memory or a register"
			    : "optimized out here";
		return -EINVAL;
	}
	if ((atom >= DW_OP_reg0 && atom <= DW_OP_reg16) || atom == DW_OP_regx) {
		unsigned r = atom == DW_OP_regx ? (unsigned)ops[0].number : atom - DW_OP_reg0;

		if (r > 15) {
			*why = "in a vector register: not readable";
			return -EINVAL;
		}
		p->inreg = 1;
		p->reg[0] = dregs[r];
		return 0;
	}
	if (atom >= DW_OP_breg0 && atom <= DW_OP_breg16) {
		p->mreg = dregs[atom - DW_OP_breg0];
		p->moff = (int64_t)ops[0].number;
		return 0;
	}
	if (atom == DW_OP_fbreg) {
		Dwarf_Attribute a;
		Dwarf_Op *fb;
		size_t nfb;
		int reg;
		int64_t off;

		if (!dwarf_attr_integrate(fn, DW_AT_frame_base, &a) ||
		    dwarf_getlocation_addr(&a, pc, &fb, &nfb, 1) <= 0 || nfb != 1) {
			*why = "its function's frame base is not known here";
			return -EINVAL;
		}
		if (fb[0].atom == DW_OP_call_frame_cfa) {
			if (cfa_at(dw, pc, &reg, &off)) {
				*why = "no unwind information for this address (the frame base)";
				return -EINVAL;
			}
		} else if (fb[0].atom >= DW_OP_breg0 && fb[0].atom <= DW_OP_breg15) {
			reg = fb[0].atom - DW_OP_breg0;
			off = (int64_t)fb[0].number;
		} else {
			*why = "a frame base trail cannot follow";
			return -EINVAL;
		}
		p->mreg = dregs[reg];
		p->moff = off + (int64_t)ops[0].number;
		return 0;
	}
	*why = atom == DW_OP_addr ? "a global: name it @SYMBOL" : "a location trail cannot read";
	return -EINVAL;
}

int probe_dwarf_expr_at(struct probe_dwarf *dw, uint64_t pc, const char *where,
			const char *expr, struct probe_dvar *out, int *errpos, char *err,
			size_t en)
{
	struct walk w = {.expr = expr, .errpos = errpos, .err = err, .en = en};
	struct param p;
	Dwarf_Die var, fn;
	Dwarf_Attribute a;
	Dwarf_Op *ops = NULL;
	size_t nops = 0, len = ident(expr);
	char list[200];
	const char *why = NULL;
	int r;

	if (errpos)
		*errpos = 0;
	r = var_at(dw, pc, expr, len ? len : strlen(expr), &var, &fn, list, sizeof(list));
	if (r == -ESRCH)
		return fail(&w, 0, -ENOENT, "no function in the debug info holds %s", where);
	if (r)
		return fail(&w, 0, -ENOENT,
			    "This variable is not found at this probe point: '%.*s' (%s sees %s)",
			    (int)(len ? len : strlen(expr)), expr, where, list[0] ? list : "none");
	memset(&p, 0, sizeof(p));
	p.name = die_name(&var);
	if (type_of(&var, &p.type))
		return fail(&w, 0, -EINVAL, "'%.*s' has no type in the debug info", (int)len, expr);
	if (!dwarf_attr_integrate(&var, DW_AT_location, &a))
		why = "optimized out (no location)";
	else if (dwarf_getlocation_addr(&a, pc, &ops, &nops, 1) <= 0)
		why = "optimized out here";
	if (why || place_loc(dw, pc, &fn, ops, nops, &p, &why))
		return fail(&w, 0, -EINVAL, "'%.*s' cannot be read at %s: %s", (int)len, expr, where,
			    why);
	if (p.imm) { /* a constant at that address: the kernel's immediate */
		Dwarf_Die t;
		char type[32];

		if (expr[len] || strip(&p.type, &t, 1) || int_type(&t, type, sizeof(type)))
			return fail(&w, (int)len, -EINVAL, "'%.*s' is a constant here (%lld)",
				    (int)len, expr, (long long)p.immv);
		snprintf(out->name, sizeof(out->name), "%.*s", (int)len, expr);
		snprintf(out->fetch, sizeof(out->fetch), "\\%lld", (long long)p.immv);
		snprintf(out->type, sizeof(out->type), "%s", type);
		return 0;
	}
	walk_start(&w, &p, 0);
	return walk_rest(&w, expr + len, out);
}

int probe_dwarf_line(struct probe_dwarf *dw, const char *func, const char *file, int line,
		     uint64_t *pc, char *fname, size_t fn_n, char *err, size_t en)
{
	Dwarf_Addr best = 0;
	Dwarf_Die fn, *cu = NULL;
	Dwarf_Addr bias;
	int want = line, have = 0;
	const char *fnfile = NULL;

	if (func) {
		Dwarf_Word decl;
		Dwarf_Attribute a;

		if (func_die(dw, func, &fn)) {
			snprintf(err, en, "no function '%s' in the debug info", func);
			return -ESRCH;
		}
		/* perf probe's FUNC:RLN: lines from the function's first */
		if (!dwarf_attr_integrate(&fn, DW_AT_decl_line, &a) || dwarf_formudata(&a, &decl)) {
			snprintf(err, en, "%s has no line in the debug info", func);
			return -ENOENT;
		}
		want = (int)decl + line;
		fnfile = dwarf_decl_file(&fn);
	}
	while ((cu = dwfl_nextcu(dw->dwfl, cu, &bias))) {
		Dwarf_Lines *lines;
		size_t n;

		if (dwarf_getsrclines(cu, &lines, &n))
			continue;
		for (size_t i = 0; i < n; i++) {
			Dwarf_Line *l = dwarf_onesrcline(lines, i);
			Dwarf_Addr addr;
			int ln;
			bool stmt = false, end = false;
			const char *src;
			size_t sl, fl;

			if (!l || dwarf_lineno(l, &ln) || ln != want || dwarf_lineaddr(l, &addr) ||
			    dwarf_linebeginstatement(l, &stmt) || !stmt ||
			    dwarf_lineendsequence(l, &end) || end || !(src = dwarf_linesrc(l, NULL, NULL)))
				continue;
			if (func) {
				if (!dwarf_haspc(&fn, addr) || (fnfile && strcmp(src, fnfile)))
					continue;
			} else {
				/* FILE: the path's tail, at a '/' */
				sl = strlen(src);
				fl = strlen(file);
				if (fl > sl || strcmp(src + sl - fl, file) ||
				    (fl < sl && src[sl - fl - 1] != '/'))
					continue;
			}
			if (!have || addr < best)
				best = addr;
			have = 1;
		}
	}
	if (!have) {
		if (func)
			snprintf(err, en, "no code at line %d of %s (its line %d, relative %d)", want,
				 func, want, line);
		else
			snprintf(err, en, "no code at %s:%d in the debug info", file, line);
		return func ? -ENOENT : -ESRCH;
	}
	*pc = best;
	/* the function out of line holding it */
	{
		Dwarf_Die *c = cu_at(dw, best), *scopes = NULL;
		int ns = c ? dwarf_getscopes(c, best, &scopes) : 0;

		fname[0] = '\0';
		for (int i = 0; i < ns; i++)
			if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
				Dwarf_Attribute a;
				const char *nm = NULL;

				/* the symbol's name: the linkage name, else the name */
				if (dwarf_attr_integrate(&scopes[i], DW_AT_linkage_name, &a))
					nm = dwarf_formstring(&a);
				if (!nm)
					nm = die_name(&scopes[i]);
				if (nm)
					snprintf(fname, fn_n, "%s", nm);
				break;
			}
		free(scopes);
	}
	if (!fname[0]) {
		snprintf(err, en, "no function holds %s:%d", func ? func : file, line);
		return -ENOENT;
	}
	return 0;
}

int probe_dwarf_params(struct probe_dwarf *dw, const char *func, struct probe_dvar **vars,
		       int *n, int *skipped, char *err, size_t en)
{
	struct param ps[MAX_PARAMS];
	struct probe_dvar *v;
	char scratch[256];
	Dwarf_Die fn;
	int np, va;

	*vars = NULL;
	*n = *skipped = 0;
	if (func_die(dw, func, &fn)) {
		snprintf(err, en, "no function '%s' in the debug info", func);
		return -ENOENT;
	}
	np = params_of(&fn, ps, MAX_PARAMS, &va);
	v = calloc(np ? (size_t)np : 1, sizeof(*v));
	if (!v) {
		snprintf(err, en, "out of memory");
		return -ENOMEM;
	}
	/* each as its own expression: floats and aggregates are skipped */
	for (int i = 0; i < np; i++) {
		struct walk w = {.err = scratch, .en = sizeof(scratch)};

		walk_start(&w, &ps[i], i);
		if (finish(&w, &v[*n]) == 0)
			(*n)++;
		else
			(*skipped)++;
	}
	*vars = v;
	return 0;
}

int probe_dwarf_rettype(struct probe_dwarf *dw, const char *func, char *type, size_t n)
{
	Dwarf_Die fn, t;

	if (func_die(dw, func, &fn))
		return -ENOENT;
	if (type_of(&fn, &t) || strip(&t, &t, 1)) {
		snprintf(type, n, "void");
		return 0;
	}
	if (is_ptr(dwarf_tag(&t))) {
		snprintf(type, n, "x64");
		return 0;
	}
	/* floats come back in xmm0, aggregates in two registers or memory */
	return int_type(&t, type, n) ? -ENOTSUP : 0;
}
