/* SPDX-License-Identifier: MIT */
/*
 * test-probe-dwarf.c - parameters and expressions from DWARF
 * (src/probe/dwarf.c) on the programs of tests/unit/dwarf/, built by meson
 * with -g: prog.c at -O0 and -O1 (the same answers: the calling convention
 * does not change with -O), prog.cc. Struct offsets are the compiler's own
 * (offsetof on types.h, which prog.c includes too); bitfield places are
 * found by setting the field in a zeroed struct.
 *
 * Separate debug files are made at test time in a temporary directory
 * with objcopy and strip: next to the stripped program through
 * .gnu_debuglink, and under $TRAIL_DEBUG_ROOT/.build-id/.
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <elfutils/libdwelf.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "dwarf/types.h"
#include "probe/dwarf.h"

#if !defined(DWARF_PROG_C_O0) || !defined(DWARF_PROG_C_O1) || !defined(DWARF_PROG_CXX)
#error "build with -DDWARF_PROG_C_O0=... (tests/unit/meson.build)"
#endif

static const char *const c_progs[] = {DWARF_PROG_C_O0, DWARF_PROG_C_O1};

static struct probe_dwarf *open_ok(const char *path)
{
	struct probe_dwarf *dw = NULL;
	char err[256] = "";
	int r = probe_dwarf_open(path, &dw, err, sizeof(err));

	if (r)
		fprintf(stderr, "  open %s: %d %s\n", path, r, err);
	CHECK_EQ(r, 0);
	CHECK(dw != NULL);
	return dw;
}

/* $$args as "name=fetch:type ..." */
static int params_str(struct probe_dwarf *dw, const char *func, char *buf, size_t n,
		      int *skipped)
{
	struct probe_dvar *v;
	char err[256];
	int nv, r, len = 0;

	buf[0] = 0;
	r = probe_dwarf_params(dw, func, &v, &nv, skipped, err, sizeof(err));
	if (r)
		return r;
	for (int i = 0; i < nv; i++)
		len += snprintf(buf + len, n - (size_t)len, "%s%s=%s:%s", i ? " " : "", v[i].name,
				v[i].fetch, v[i].type);
	free(v);
	return 0;
}

/* ------------------------------------------------------------------------
 * Every parameter, where the ABI puts it at the entry.
 */
static const struct {
	const char *func, *want;
	int skipped;
} c_param_rows[] = {
	{"handle", "req=%di:x64 flags=%si:s32", 0},
	{"by_small", "", 2}, /* two by-value structs: members only */
	{"by_big", "a=%di:s32 c=%si:s32", 1},
	{"eight", "a=%di:s32 b=%si:s32 c=%dx:s32 d=%cx:s32 e=%r8:s32 f=%r9:s32 "
		  "g=$stack1:s32 h=$stack2:s64", 0},
	/* the pair needs two registers, one is left: it goes to the stack,
	 * and g still takes r9 */
	{"five_pair", "a=%di:s32 b=%si:s32 c=%dx:s32 d=%cx:s32 e=%r8:s32 g=%r9:s32", 1},
	{"mix", "a=%di:s32 s=+0(%si):string l=%dx:s64", 2},
	{"with_mixed", "x=%si:s32", 1}, /* m takes xmm0 and rdi */
	{"vsum", "n=%di:s32", 0},
	{"scalars", "b=%di:u8 c=%si:u32 s=%dx:s32 ch=%cx:s8 uc=%r8:u8 sh=%r9:s16 "
		    "ul=$stack1:u64 ustr=+0($stack2):string", 0},
	/* char ** is a pointer; uint8_t * is bytes, not a string */
	{"takes_argv", "argc=%di:s32 argv=%si:x64 pp=%dx:x64 raw=%cx:x64", 0},
	{"ret_void", "", 0},
};

TEST(c_params)
{
	char buf[512];
	int skipped;

	for (size_t p = 0; p < 2; p++) {
		struct probe_dwarf *dw = open_ok(c_progs[p]);

		for (size_t i = 0; i < sizeof(c_param_rows) / sizeof(c_param_rows[0]); i++) {
			CHECK_EQ(params_str(dw, c_param_rows[i].func, buf, sizeof(buf), &skipped), 0);
			if (strcmp(buf, c_param_rows[i].want) || skipped != c_param_rows[i].skipped)
				fprintf(stderr, "  %s %s: \"%s\" skipped %d\n", c_progs[p],
					c_param_rows[i].func, buf, skipped);
			CHECK_STR(buf, c_param_rows[i].want);
			CHECK_EQ(skipped, c_param_rows[i].skipped);
		}
		CHECK_EQ(params_str(dw, "no_such_function", buf, sizeof(buf), &skipped), -ENOENT);
		probe_dwarf_close(dw);
	}
}

/* ------------------------------------------------------------------------
 * Expressions: want is a printf format of up to two offsets a, b.
 */
#define OFF(t, m) offsetof(t, m)
static const struct {
	const char *func, *expr, *want;
	size_t a, b;
	const char *type, *name;
} c_expr_rows[] = {
	{"handle", "req", "%%di", 0, 0, "x64", "req"},
	{"handle", "flags", "%%si", 0, 0, "s32", "flags"},
	{"handle", "req->id", "+%zu(%%di)", OFF(struct req, id), 0, "s32", "id"},
	{"handle", "req->hdr.len", "+%zu(%%di)", OFF(struct req, hdr.len), 0, "u32", "len"},
	{"handle", "req->hdr.kind", "+%zu(%%di)", OFF(struct req, hdr.kind), 0, "u16", "kind"},
	{"handle", "req->next->id", "+%zu(+%zu(%%di))", OFF(struct req, id),
	 OFF(struct req, next), "s32", "id"},
	{"handle", "req->next->hdr.len", "+%zu(+%zu(%%di))", OFF(struct req, hdr.len),
	 OFF(struct req, next), "u32", "len"},
	{"handle", "req->next", "+%zu(%%di)", OFF(struct req, next), 0, "x64", "next"},
	{"handle", "req->path", "+0(+%zu(%%di))", OFF(struct req, path), 0, "string", "path"},
	{"handle", "req->path[0]", "+0(+%zu(%%di))", OFF(struct req, path), 0, "s8", "path"},
	{"handle", "req->name", "+%zu(%%di)", OFF(struct req, name), 0, "string", "name"},
	{"handle", "req->name[3]", "+%zu(%%di)", OFF(struct req, name[3]), 0, "s8", "name"},
	{"handle", "req->vals", "+%zu(%%di)", OFF(struct req, vals), 0, "u32[4]", "vals"},
	{"handle", "req->vals[2]", "+%zu(%%di)", OFF(struct req, vals[2]), 0, "u32", "vals"},
	{"handle", "req->bytes", "+%zu(%%di)", OFF(struct req, bytes), 0, "u8[4]", "bytes"},
	{"handle", "req->many[99]", "+%zu(%%di)", OFF(struct req, many[99]), 0, "s64", "many"},
	{"handle", "req->hdrs[1].len", "+%zu(%%di)", OFF(struct req, hdrs[1].len), 0, "u32",
	 "len"},
	{"handle", "req->u.i", "+%zu(%%di)", OFF(struct req, u.i), 0, "s32", "i"},
	{"handle", "req->u.l", "+%zu(%%di)", OFF(struct req, u.l), 0, "s64", "l"},
	{"handle", "req->s", "+%zu(%%di)", OFF(struct req, s), 0, "s16", "s"}, /* anonymous */
	{"handle", "req->b", "+%zu(%%di)", OFF(struct req, b), 0, "u8", "b"},
	{"handle", "req->color", "+%zu(%%di)", OFF(struct req, color), 0, "u32", "color"},
	{"handle", "req->ok", "+%zu(%%di)", OFF(struct req, ok), 0, "u8", "ok"},
	/* by-value structs in registers: a field is bits of one register */
	{"by_small", "p.x", "%%di", 0, 0, "s32", "x"},
	{"by_small", "p.y", "%%di", 0, 0, "b32@32/64", "y"},
	{"by_small", "q.a", "%%si", 0, 0, "s64", "a"},
	{"by_small", "q.b", "%%dx", 0, 0, "s32", "b"},
	{"by_small", "q.c", "%%dx", 0, 0, "b16@32/64", "c"},
	{"by_small", "q.d", "%%dx", 0, 0, "b8@48/64", "d"},
	{"with_mixed", "m.l", "%%di", 0, 0, "s64", "l"},
	{"with_mixed", "x", "%%si", 0, 0, "s32", "x"},
	/* on the stack: the first slot is 8(%sp) */
	{"by_big", "b.a", "+%zu(%%sp)", 8 + OFF(struct big, a), 0, "s64", "a"},
	{"by_big", "b.c", "+%zu(%%sp)", 8 + OFF(struct big, c), 0, "s64", "c"},
	{"five_pair", "p.a", "+%zu(%%sp)", 8 + OFF(struct pair, a), 0, "s64", "a"},
	{"five_pair", "p.c", "+%zu(%%sp)", 8 + OFF(struct pair, c), 0, "s16", "c"},
	{"five_pair", "g", "%%r9", 0, 0, "s32", "g"},
	{"eight", "g", "$stack1", 0, 0, "s32", "g"},
	{"eight", "h", "$stack2", 0, 0, "s64", "h"},
	{"scalars", "ustr", "+0($stack2)", 0, 0, "string", "ustr"},
	{"scalars", "ul", "$stack1", 0, 0, "u64", "ul"},
	{"scalars", "s", "%%dx", 0, 0, "s32", "s"},
	{"mix", "s", "+0(%%si)", 0, 0, "string", "s"},
	{"mix", "l", "%%dx", 0, 0, "s64", "l"},
	/* indexes on pointers: read, then offset */
	{"takes_argv", "argv[1]", "+0(+8(%%si))", 0, 0, "string", "argv"},
	{"takes_argv", "argv[1][2]", "+2(+8(%%si))", 0, 0, "s8", "argv"},
	{"takes_argv", "pp->y", "+%zu(%%dx)", OFF(point_t, y), 0, "s32", "y"},
	{"takes_argv", "raw[3]", "+3(%%cx)", 0, 0, "u8", "raw"},
};

static void check_expr(struct probe_dwarf *dw, const char *func, const char *expr,
		       const char *fetch, const char *type, const char *name)
{
	struct probe_dvar v;
	char err[256] = "";
	int pos = -1, r;

	memset(&v, 0, sizeof(v));
	r = probe_dwarf_expr(dw, func, expr, &v, &pos, err, sizeof(err));
	if (r || strcmp(v.fetch, fetch) || strcmp(v.type, type) || strcmp(v.name, name))
		fprintf(stderr, "  %s %s: %d %s (%s:%s %s)\n", func, expr, r, err, v.fetch,
			v.type, v.name);
	CHECK_EQ(r, 0);
	CHECK_STR(v.fetch, fetch);
	CHECK_STR(v.type, type);
	CHECK_STR(v.name, name);
}

TEST(c_exprs)
{
	char want[128];

	for (size_t p = 0; p < 2; p++) {
		struct probe_dwarf *dw = open_ok(c_progs[p]);

		for (size_t i = 0; i < sizeof(c_expr_rows) / sizeof(c_expr_rows[0]); i++) {
			snprintf(want, sizeof(want), c_expr_rows[i].want, c_expr_rows[i].a, c_expr_rows[i].b);
			check_expr(dw, c_expr_rows[i].func, c_expr_rows[i].expr, want, c_expr_rows[i].type,
				   c_expr_rows[i].name);
		}
		probe_dwarf_close(dw);
	}
}

/* The first bit set in a struct with one field set to all ones. */
static unsigned first_bit(const void *s, size_t n)
{
	const unsigned char *b = s;

	for (unsigned i = 0; i < n * 8; i++)
		if (b[i / 8] >> (i % 8) & 1)
			return i;
	return ~0u;
}

TEST(c_bitfields)
{
	struct probe_dwarf *dw = open_ok(DWARF_PROG_C_O0);
	static const struct {
		const char *expr, *name;
		unsigned width;
	} bf[] = {{"req->flag", "flag", 1}, {"req->mode", "mode", 3}, {"req->level", "level", 12}};
	char fetch[64], type[32];
	struct req r;

	for (size_t i = 0; i < 3; i++) {
		unsigned bit;

		memset(&r, 0, sizeof(r));
		if (i == 0)
			r.flag = 1;
		else if (i == 1)
			r.mode = 7;
		else
			r.level = 0xfff;
		bit = first_bit(&r, sizeof(r));
		/* unsigned int storage: a 4-byte container */
		snprintf(fetch, sizeof(fetch), "+%u(%%di)", bit / 32 * 4);
		snprintf(type, sizeof(type), "b%u@%u/32", bf[i].width, bit % 32);
		check_expr(dw, "handle", bf[i].expr, fetch, type, bf[i].name);
	}
	probe_dwarf_close(dw);
}

/* ------------------------------------------------------------------------
 * Errors: where, and the words that say it.
 */
static const struct {
	const char *func, *expr;
	int pos, code;
	const char *words[2];
} c_error_rows[] = {
	{"handle", "nope", 0, -ENOENT, {"'nope'", "parameters req, flags"}},
	{"handle", "req.id", 3, -EINVAL, {"'req' is a pointer", "use '->'"}},
	{"handle", "req->nope", 5, -EINVAL, {"no member 'nope' in struct req", "id, hdr, next, path"}},
	{"handle", "req->x", 5, -EINVAL, {"members:", "s, b, color"}}, /* anonymous union's */
	{"handle", "req->hdr->len", 8, -EINVAL, {"'hdr' is struct hdr, not a pointer", "use '.'"}},
	{"handle", "req->id.x", 7, -EINVAL, {"'id' is not a struct or union", "int"}},
	{"handle", "req->id[0]", 7, -EINVAL, {"'id' is not an array or a pointer", NULL}},
	{"handle", "flags[1]", 5, -EINVAL, {"'flags' is not an array or a pointer", NULL}},
	{"handle", "flags->x", 5, -EINVAL, {"not a pointer to union/structure", "'flags' is int"}},
	{"handle", "req->vals[99999999999999999999]", 10, -EINVAL, {"index is too big", NULL}},
	{"handle", "req->vals[4]", 10, -EINVAL, {"index 4", "(4 elements)"}},
	{"handle", "req->many", 5, -EINVAL, {"Array number is too big", "100"}},
	{"handle", "req->hdrs", 5, -EINVAL, {"'hdrs' cannot be fetched whole", NULL}},
	{"handle", "req->hdr", 5, -EINVAL, {"Non pointer structure/union", "struct hdr"}},
	{"handle", "req-id", 3, -EINVAL, {"hyphen", NULL}},
	{"handle", "req->", 5, -EINVAL, {"expected a member name", NULL}},
	{"handle", "req->vals[2", 11, -EINVAL, {"expected ']'", NULL}},
	{"handle", "req->vals[x]", 10, -EINVAL, {"expected an index", NULL}},
	{"handle", "req+1", 3, -EINVAL, {"unexpected '+'", NULL}},
	{"by_small", "p", 0, -EINVAL, {"Non pointer structure/union", "'p'"}},
	{"by_small", "q->a", 1, -EINVAL, {"'q' is struct pair, not a pointer", "use '.'"}},
	{"by_big", "b", 0, -EINVAL, {"Non pointer structure/union", "struct big"}},
	{"mix", "d", 0, -EINVAL, {"float parameters cannot be fetched", "'d'"}},
	{"mix", "f", 0, -EINVAL, {"float parameters cannot be fetched", "'f'"}},
	{"with_mixed", "m.d", 2, -EINVAL, {"float members cannot be fetched", "'d'"}},
	{"takes_argv", "pp.x", 2, -EINVAL, {"'pp' is a pointer", "use '->'"}},
	{"takes_argv", "argc->x", 4, -EINVAL, {"not a pointer to union/structure", "'argc' is int"}},
	{"takes_argv", "raw->x", 3, -EINVAL, {"not a pointer to union/structure", "points to uint8_t"}},
	{"ret_void", "x", 0, -ENOENT, {"ret_void has no parameters", NULL}},
	{"no_such_function", "x", 0, -ENOENT, {"no function 'no_such_function'", NULL}},
};

static void check_error(struct probe_dwarf *dw, const char *func, const char *expr, int pos,
			int code, const char *const words[2])
{
	struct probe_dvar v;
	char err[256] = "";
	int got = -1, r = probe_dwarf_expr(dw, func, expr, &v, &got, err, sizeof(err));

	if (r != code || got != pos || !strstr(err, words[0]) || (words[1] && !strstr(err, words[1])))
		fprintf(stderr, "  %s %s: %d at %d: %s\n", func, expr, r, got, err);
	CHECK_EQ(r, code);
	CHECK_EQ(got, pos);
	CHECK(strstr(err, words[0]) != NULL);
	CHECK(!words[1] || strstr(err, words[1]) != NULL);
}

TEST(c_errors)
{
	for (size_t p = 0; p < 2; p++) {
		struct probe_dwarf *dw = open_ok(c_progs[p]);

		for (size_t i = 0; i < sizeof(c_error_rows) / sizeof(c_error_rows[0]); i++)
			check_error(dw, c_error_rows[i].func, c_error_rows[i].expr, c_error_rows[i].pos,
				    c_error_rows[i].code, c_error_rows[i].words);
		probe_dwarf_close(dw);
	}
}

/* n->next->...->v: 16 nested reads are the most */
TEST(c_deref_limit)
{
	static const char *const words[2] = {"Dereference is too much nested", NULL};
	struct probe_dwarf *dw = open_ok(DWARF_PROG_C_O0);
	char expr[256] = "n", want[256];
	size_t len;

	for (int i = 0; i < 15; i++)
		strcat(expr, "->next");
	/* want: +V(+N(+N(...+N(%di)...))), 15 reads of next and one of v */
	snprintf(want, sizeof(want), "+%zu(", offsetof(struct node, v));
	for (int i = 0; i < 15; i++)
		sprintf(want + strlen(want), "+%zu(", offsetof(struct node, next));
	strcat(want, "%di");
	for (int i = 0; i < 16; i++)
		strcat(want, ")");
	len = strlen(expr);
	strcat(expr, "->v");
	check_expr(dw, "walk", expr, want, "s32", "v");
	/* one more */
	strcpy(expr + len, "->next->v");
	check_error(dw, "walk", expr, (int)len + 6, -EINVAL, words);
	probe_dwarf_close(dw);
}

TEST(c_func_rettype)
{
	static const struct {
		const char *func, *type;
		int r;
	} rt[] = {
		{"ret_void", "void", 0}, {"ret_ptr", "x64", 0},   {"ret_bool", "u8", 0},
		{"ret_u16", "u16", 0},   {"ret_enum", "s32", 0},  {"ret_s8", "s8", 0},
		{"handle", "s32", 0},    {"eight", "s64", 0},     {"ret_double", "", -ENOTSUP},
		{"ret_big", "", -ENOTSUP}, {"no_such_function", "", -ENOENT},
	};
	struct probe_dwarf *dw = open_ok(DWARF_PROG_C_O1);
	int n = -1, va = -1;

	for (size_t i = 0; i < sizeof(rt) / sizeof(rt[0]); i++) {
		char type[32] = "";
		int r = probe_dwarf_rettype(dw, rt[i].func, type, sizeof(type));

		CHECK_EQ(r, rt[i].r);
		if (!r)
			CHECK_STR(type, rt[i].type);
	}
	CHECK_EQ(probe_dwarf_func(dw, "handle", &n, &va), 0);
	CHECK_EQ(n, 2);
	CHECK_EQ(va, 0);
	CHECK_EQ(probe_dwarf_func(dw, "vsum", &n, &va), 0);
	CHECK_EQ(n, 1);
	CHECK_EQ(va, 1);
	CHECK_EQ(probe_dwarf_func(dw, "eight", &n, &va), 0);
	CHECK_EQ(n, 8);
	CHECK_EQ(probe_dwarf_func(dw, "ret_void", &n, &va), 0);
	CHECK_EQ(n, 0);
	CHECK_EQ(probe_dwarf_func(dw, "no_such_function", &n, &va), -ENOENT);
	probe_dwarf_close(dw);
}

/* ------------------------------------------------------------------------
 * C++: 'this' first, references are pointers, names qualified or mangled.
 */
TEST(cxx)
{
	static const char *const accept_names[] = {
		"net::server::accept", "server::accept", "accept",
		"_ZN3net6server6acceptERNS_4connEi",
	};
	static const char *const nope[2] = {"Non pointer structure/union", "'o'"};
	struct probe_dwarf *dw = open_ok(DWARF_PROG_CXX);
	char buf[512], type[32];
	int skipped, n = -1, va = -1;

	for (size_t i = 0; i < 4; i++) {
		const char *f = accept_names[i];

		CHECK_EQ(params_str(dw, f, buf, sizeof(buf), &skipped), 0);
		CHECK_STR(buf, "this=%di:x64 c=%si:x64 backlog=%dx:s32");
		CHECK_EQ(probe_dwarf_func(dw, f, &n, &va), 0);
		CHECK_EQ(n, 3);
		CHECK_EQ(probe_dwarf_rettype(dw, f, type, sizeof(type)), 0);
		CHECK_STR(type, "s32");
	}
	CHECK_EQ(params_str(dw, "et::server::accept", buf, sizeof(buf), &skipped), -ENOENT);
	check_expr(dw, "net::server::accept", "this->port", "+0(%di)", "s32", "port");
	check_expr(dw, "net::server::accept", "this->last->peer", "+0(+8(+8(%di)))", "string",
		   "peer");
	check_expr(dw, "net::server::accept", "c.fd", "+0(%si)", "s32", "fd");
	check_expr(dw, "net::server::accept", "c.peer", "+0(+8(%si))", "string", "peer");
	check_expr(dw, "net::server::accept", "c->peer", "+0(+8(%si))", "string", "peer");

	CHECK_EQ(params_str(dw, "net::lookup", buf, sizeof(buf), &skipped), 0);
	CHECK_STR(buf, "c=%di:x64 key=%si:s64");
	CHECK_EQ(probe_dwarf_rettype(dw, "lookup", type, sizeof(type)), 0);
	CHECK_STR(type, "s64");
	check_expr(dw, "lookup", "c.fd", "+0(%di)", "s32", "fd");

	/* a destructor: passed as a pointer to a copy */
	CHECK_EQ(params_str(dw, "take_owned", buf, sizeof(buf), &skipped), 0);
	CHECK_STR(buf, "x=%si:s32");
	CHECK_EQ(skipped, 1);
	check_expr(dw, "take_owned", "o.n", "+8(%di)", "s32", "n");
	check_expr(dw, "take_owned", "o.p", "+0(%di)", "x64", "p");
	check_error(dw, "take_owned", "o", 0, -EINVAL, nope);
	probe_dwarf_close(dw);
}

/* ------------------------------------------------------------------------
 * Separate debug files.
 */
static char tmp[64];

static int sh(const char *fmt, ...)
{
	char cmd[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	return system(cmd);
}

static void mktmp(void)
{
	snprintf(tmp, sizeof(tmp), "/tmp/trail-dwarf-XXXXXX");
	CHECK(mkdtemp(tmp) != NULL);
	/* only what the test puts there, and no network */
	setenv("TRAIL_DEBUG_ROOT", tmp, 1);
	unsetenv("DEBUGINFOD_URLS");
}

/* tmp/prog: the C program stripped of its DWARF, which goes to tmp/dbg */
static void split(const char *dbg, int debuglink)
{
	CHECK_EQ(sh("cp %s %s/prog", DWARF_PROG_C_O0, tmp), 0);
	CHECK_EQ(sh("cd %s && objcopy --only-keep-debug prog %s && strip --strip-debug prog",
		    tmp, dbg), 0);
	if (debuglink)
		CHECK_EQ(sh("cd %s && objcopy --add-gnu-debuglink=%s prog", tmp, dbg), 0);
}

static void check_handle(const char *path)
{
	struct probe_dwarf *dw = open_ok(path);
	char buf[256];
	int skipped;

	if (!dw)
		return;
	CHECK_EQ(params_str(dw, "handle", buf, sizeof(buf), &skipped), 0);
	CHECK_STR(buf, "req=%di:x64 flags=%si:s32");
	check_expr(dw, "handle", "req->hdr.len", "+8(%di)", "u32", "len");
	probe_dwarf_close(dw);
}

static void no_debug_info(const char *path)
{
	struct probe_dwarf *dw = (void *)1;
	char err[512] = "";

	CHECK_EQ(probe_dwarf_open(path, &dw, err, sizeof(err)), -ENOENT);
	CHECK(dw == NULL);
	CHECK(strstr(err, "no debug info for ") != NULL);
	CHECK(strstr(err, path) != NULL);
	CHECK(strstr(err, "build with -g") != NULL);
}

TEST(debuglink)
{
	char path[128];

	mktmp();
	split("prog.dbg", 1);
	snprintf(path, sizeof(path), "%s/prog", tmp);
	check_handle(path);
	/* the link names a file that is gone: nothing left */
	CHECK_EQ(sh("rm %s/prog.dbg", tmp), 0);
	no_debug_info(path);
	sh("rm -rf %s", tmp);
}

TEST(build_id)
{
	char path[128], hex[96];
	const unsigned char *id;
	ssize_t len;
	Elf *e;
	int fd, k = 0;

	mktmp();
	split("keep.dbg", 0);
	snprintf(path, sizeof(path), "%s/prog", tmp);
	CHECK(elf_version(EV_CURRENT) != EV_NONE);
	fd = open(path, O_RDONLY);
	e = elf_begin(fd, ELF_C_READ, NULL);
	len = e ? dwelf_elf_gnu_build_id(e, (const void **)&id) : -1;
	for (ssize_t i = 0; i < len && i < 40; i++)
		k += sprintf(hex + k, i == 1 ? "/%02x" : "%02x", id[i]);
	elf_end(e);
	close(fd);
	if (len < 2) {
		sh("rm -rf %s", tmp);
		SKIP("the linker gave no build id");
	}
	/* no link, and keep.dbg is not prog's name: not found */
	no_debug_info(path);
	CHECK_EQ(sh("mkdir -p %s/.build-id/%.2s && mv %s/keep.dbg %s/.build-id/%s.debug", tmp, hex,
		    tmp, tmp, hex), 0);
	check_handle(path);
	sh("rm -rf %s", tmp);
}

TEST(no_debug)
{
	struct probe_dwarf *dw = NULL;
	char path[128], err[256] = "";

	mktmp();
	snprintf(path, sizeof(path), "%s/prog", tmp);
	CHECK_EQ(sh("cp %s %s && strip --strip-debug %s", DWARF_PROG_C_O0, path, path), 0);
	no_debug_info(path);
	/* not there; not ELF */
	snprintf(path, sizeof(path), "%s/absent", tmp);
	CHECK_EQ(probe_dwarf_open(path, &dw, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, path) != NULL);
	snprintf(path, sizeof(path), "%s/text", tmp);
	CHECK_EQ(sh("echo hello > %s", path), 0);
	CHECK(probe_dwarf_open(path, &dw, err, sizeof(err)) < 0);
	CHECK(dw == NULL);
	CHECK(strstr(err, path) != NULL);
	sh("rm -rf %s", tmp);
}

TEST_MAIN(CHECK_T(c_params), CHECK_T(c_exprs), CHECK_T(c_bitfields), CHECK_T(c_errors),
	  CHECK_T(c_deref_limit), CHECK_T(c_func_rettype), CHECK_T(cxx), CHECK_T(debuglink),
	  CHECK_T(build_id), CHECK_T(no_debug))
