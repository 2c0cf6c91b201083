/* SPDX-License-Identifier: MIT */
/*
 * test-probe-parse.c - the dynamic event grammar (src/probe/parse.c) and
 * its compiler (src/probe/compile.c) on raw definitions: good definitions
 * with their normalized text, bad ones with the caret column and a word of
 * the message (rows written as kprobe_syntax_errors.tc writes them, '^'
 * where the caret goes), and the compiled programs decoded back to ops.
 */
#include <errno.h>

#include "check.h"
#include "common/fetch.h"
#include "common/meta.h"
#include "probe/dwarf.h"
#include "probe/probe.h"

/* ---- (1) good definitions and their normalized text ---- */

static const struct {
	const char *def, *norm;
} good_rows[] = {
	/* heads, default names, groups */
	{"p foo", "p:probes/p_foo_0 foo"},
	{"p foo+16 %di", "p:probes/p_foo_16 foo+16 arg1=%di"},
	{"p foo+0x10", "p:probes/p_foo_16 foo+16"},
	{"p:ev foo", "p:probes/ev foo"},
	{"p:grp/ev foo a=%di:u32 b=%si:s16", "p:grp/ev foo a=%di:u32 b=%si:s16"},
	{"p:grp/ foo", "p:grp/p_foo_0 foo"},
	{"p:grp.ev foo", "p:grp/ev foo"},
	{"  p   foo   %ax   ", "p:probes/p_foo_0 foo arg1=%ax"},
	{"r foo $retval", "r:probes/r_foo_0 foo arg1=$retval"},
	{"r foo+0", "r:probes/r_foo_0 foo"},
	{"r5:g/e foo ret=$retval:s32", "r5:g/e foo ret=$retval:s32"},
	{"r0x10 foo", "r16:probes/r_foo_0 foo"},
	{"p foo%return $retval:u8", "r:probes/r_foo_0 foo arg1=$retval:u8"},
	{"p libfoo.so:bar_baz", "p:probes/p_bar_baz_0 libfoo.so:bar_baz"},
	{"p /usr/lib/libfoo.so.1:f.isra.0+4", "p:probes/p_f_isra_0_4 /usr/lib/libfoo.so.1:f.isra.0+4"},
	{"p ./app:main", "p:probes/p_main_0 ./app:main"},
	/* every type */
	{"p f %ax:u8 %ax:u16 %ax:u32 %ax:u64 %ax:s8 %ax:s16 %ax:s32 %ax:s64",
	 "p:probes/p_f_0 f arg1=%ax:u8 arg2=%ax:u16 arg3=%ax:u32 arg4=%ax:u64 arg5=%ax:s8 "
	 "arg6=%ax:s16 arg7=%ax:s32 arg8=%ax:s64"},
	{"p f %ax:x8 %ax:x16 %ax:x32 %ax:x64 %ax:char %ax:symbol %ax:symstr",
	 "p:probes/p_f_0 f arg1=%ax:x8 arg2=%ax:x16 arg3=%ax:x32 arg4=%ax:x64 arg5=%ax:char "
	 "arg6=%ax:symbol arg7=%ax:symstr"},
	{"p f s=+0(%di):string u=+0(%si):ustring", "p:probes/p_f_0 f s=+0(%di):string u=+0(%si):ustring"},
	{"p f bf=+4($arg1):b3@2/32 r=%ax:b1@0/8 w=%ax:b64@0/64",
	 "p:probes/p_f_0 f bf=+4($arg1):b3@2/32 r=%ax:b1@0/8 w=%ax:b64@0/64"},
	{"p f v=+0($arg1):u8[4] w=+8(%di):x64[64] c=@4096:char[16]",
	 "p:probes/p_f_0 f v=+0($arg1):u8[4] w=+8(%di):x64[64] c=@4096:char[16]"},
	/* fetch-args */
	{"p f +0(+8(+16(%di))):u64 -8(%bp):s32 +u8(%di)",
	 "p:probes/p_f_0 f arg1=+0(+8(+16(%di))):u64 arg2=-8(%bp):s32 arg3=+u8(%di)"},
	{"p f +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0)))))))))))))",
	 "p:probes/p_f_0 f arg1=+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0)))))))))))))"},
	{"p f @0x1000:u32 @4096 @counter @counter+8:s32 @counter-4 @.Lx",
	 "p:probes/p_f_0 f arg1=@0x1000:u32 arg2=@4096 arg3=@counter arg4=@counter+8:s32 "
	 "arg5=@counter-4 arg6=@.Lx"},
	{"p f $comm c=$comm:string $COMM", "p:probes/p_f_0 f arg1=$comm c=$comm:string arg3=$COMM"},
	{"p f $stack $stack0 $stack3 $arg1 $arg7 $arg64",
	 "p:probes/p_f_0 f arg1=$stack arg2=$stack0 arg3=$stack3 arg4=$arg1 arg5=$arg7 arg6=$arg64"},
	{"p f %r8 %r15 %ip %sp %bp %bx", "p:probes/p_f_0 f arg1=%r8 arg2=%r15 arg3=%ip arg4=%sp "
					 "arg5=%bp arg6=%bx"},
	{"r f %ax %dx:s32 %sp %ip $stack2", "r:probes/r_f_0 f arg1=%ax arg2=%dx:s32 arg3=%sp arg4=%ip "
					   "arg5=$stack2"},
	/* DWARF expressions are kept for the compiler; a bare variable names
	 * itself (the kernel's BTF args) */
	{"p f argc argv[1] req->hdr.len s.x:u8 len=req->len",
	 "p:probes/p_f_0 f argc=argc arg2=argv[1] arg3=req->hdr.len arg4=s.x:u8 len=req->len"},
	{"p f $$args", "p:probes/p_f_0 f $$args"},
	{"p f x=%di $arg*", "p:probes/p_f_0 f x=%di $arg*"},
	/* eprobes */
	{"e:g/n app/request p=+0($path):string l=$len",
	 "e:g/n app.request p=+0($path):string l=$len"},
	{"e app.request $len $comm", "e:eprobes/request app.request arg1=$len arg2=$comm"},
	{"e:g/ sys/ev", "e:g/ev sys.ev"},
	{"e:g/n app/req l=$len  if  len > 1 && path ~ \"/a b*\"  ",
	 "e:g/n app.req l=$len if len > 1 && path ~ \"/a b*\""},
	/* deletes */
	{"-:g/ev", "-:g/ev"},
	{"-:ev", "-:ev"},
	/* function events */
	{"load_config(string path, x32 flags)", "load_config(string path, x32 flags)"},
	{"SyS_openat(int dfd, string path, x32 flags, x16 mode)",
	 "SyS_openat(int dfd, string path, x32 flags, x16 mode)"},
	{"f( const  char*name,unsigned   int n , struct req *r, char **argv, int v[4], long long big)",
	 "f(const char *name, unsigned int n, struct req *r, char **argv, int v[4], long long big)"},
	{"f(char c, short s, long l, unsigned char uc, unsigned short us, unsigned long ul, u8 a, s64 b)",
	 "f(char c, short s, long l, unsigned char uc, unsigned short us, unsigned long ul, u8 a, s64 b)"},
	/* PATH:OFFSET (uprobe_events: a file offset) and FUNC+OFFS */
	{"p /lib/libc.so.6:0x8a7f0 fd=%di:s32", "p:probes/p_libc_so_6_0x8a7f0 /lib/libc.so.6:0x8a7f0 fd=%di:s32"},
	{"p:u/w ./app:4096", "p:u/w ./app:4096"},
	{"p:g/mid parse+0x2a len=%si:u32", "p:g/mid parse+42 len=%si:u32"},
	/* source lines, perf probe's FUNC:RLN and FILE:LINE */
	{"p parse:3 n=count", "p:probes/p_parse_L3 parse:3 n=count"},
	{"p:g/l app.c:42 total", "p:g/l app.c:42 total=total"},
	{"p src/x.cc:7", "p:probes/p_src_x_cc_L7 src/x.cc:7"},
	{"p /bin/app:parse:0", "p:probes/p_parse_L0 /bin/app:parse:0"},
	/* wprobes (the wprobe series' w:, the kernel's listing) */
	{"w w@counter", "w:wprobes/w_counter w@counter"},
	{"w:g/e rw@counter:4 v=$value a=$addr", "w:g/e rw@counter:4 v=$value a=$addr"},
	{"w:g/e w@counter:8 $old $value", "w:g/e w@counter:8 arg1=$old arg2=$value"},
	{"w:g/e w@-1:8", "w:g/e w@-1:8"},
	{"w @counter+8:8", "w:wprobes/w_counter_8 rw@counter+8:8"},
	{"w:g/e w@obj-8:2", "w:g/e w@obj-8:2"},
	{"w w@0x1000:4 $comm %ax", "w:wprobes/w_0x1000 w@0x1000:4 arg1=$comm arg2=%ax"},
	{"w:g/e w@libfoo.so:var +0($addr):u8 @other", "w:g/e w@libfoo.so:var arg1=+0($addr):u8 arg2=@other"},
	{"w:g/e r@v", "w:g/e r@v"},
	{"foo()", "foo()"},
	{"foo( void )", "foo()"},
	{"libx.so:foo (int a)", "libx.so:foo(int a)"},
};

TEST(probe_good)
{
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		struct probe_def d;
		struct probe_err e;
		char *s;
		int ret = probe_parse(good_rows[i].def, &d, &e);

		if (ret) {
			fprintf(stderr, "  '%s': %s at %d\n", good_rows[i].def, e.msg, e.pos);
			CHECK(!ret);
			continue;
		}
		s = probe_def_format(&d);
		CHECK_STR(s, good_rows[i].norm);
		free(s);
		probe_def_free(&d);
	}
}

/* the normalized text parses to itself */
TEST(probe_format_fixpoint)
{
	for (size_t i = 0; i < sizeof(good_rows) / sizeof(good_rows[0]); i++) {
		struct probe_def d;
		struct probe_err e;
		char *s;

		CHECK_EQ(probe_parse(good_rows[i].norm, &d, &e), 0);
		s = probe_def_format(&d);
		CHECK_STR(s, good_rows[i].norm);
		free(s);
		probe_def_free(&d);
	}
}

TEST(probe_def_fields)
{
	struct probe_def d;
	struct probe_err e;

	/* a return probe may name variables: read at its ret instructions
	 * (the compiler decides whether they can be) */
	CHECK_EQ(probe_parse("r foo argc", &d, &e), 0);
	CHECK_STR(d.args[0].fetch, "argc");
	probe_def_free(&d);
	/* lines: FUNC:RLN, FILE:LINE, OBJ:FUNC:RLN; PATH:OFFSET stays one */
	CHECK_EQ(probe_parse("p parse:3", &d, &e), 0);
	CHECK(d.lined && !d.srcfile && d.line == 3);
	CHECK_STR(d.sym, "parse");
	probe_def_free(&d);
	CHECK_EQ(probe_parse("p app.c:42", &d, &e), 0);
	CHECK(d.lined && d.srcfile && d.line == 42);
	CHECK_STR(d.sym, "app.c");
	probe_def_free(&d);
	CHECK_EQ(probe_parse("p /bin/app:parse:3", &d, &e), 0);
	CHECK(d.lined && d.line == 3);
	CHECK_STR(d.obj, "/bin/app");
	CHECK_STR(d.sym, "parse");
	CHECK_EQ(d.sym_pos, 11);
	probe_def_free(&d);
	CHECK_EQ(probe_parse("p /bin/app:1234", &d, &e), 0);
	CHECK(!d.lined && d.fileoff && d.offset == 1234);
	probe_def_free(&d);

	CHECK_EQ(probe_parse("p:g/ev /lib/libx.so:f+8 n=+4(%di):u32 %si", &d, &e), 0);
	CHECK_EQ(d.kind, 'p');
	CHECK_STR(d.group, "g");
	CHECK_STR(d.event, "ev");
	CHECK_EQ(d.named, 1);
	CHECK_STR(d.obj, "/lib/libx.so");
	CHECK_STR(d.sym, "f");
	CHECK_EQ(d.offset, 8);
	CHECK_EQ(d.sym_pos, 7);
	CHECK_EQ(d.nargs, 2);
	CHECK_STR(d.args[0].name, "n");
	CHECK_EQ(d.args[0].named, 1);
	CHECK_STR(d.args[0].fetch, "+4(%di)");
	CHECK_STR(d.args[0].type, "u32");
	CHECK_EQ(d.args[0].pos, 24);
	CHECK_EQ(d.args[0].fetch_pos, 26);
	CHECK_EQ(d.args[0].type_pos, 34);
	CHECK_STR(d.args[1].name, "arg2");
	CHECK_EQ(d.args[1].named, 0);
	CHECK(d.args[1].type == NULL);
	CHECK_EQ(d.args[1].type_pos, -1);
	probe_def_free(&d);

	CHECK_EQ(probe_parse("e app/req $len", &d, &e), 0);
	CHECK_EQ(d.kind, 'e');
	CHECK_STR(d.sym, "app:req");
	CHECK_STR(d.group, "eprobes");
	CHECK_STR(d.event, "req");
	CHECK_EQ(d.named, 0);
	probe_def_free(&d);

	CHECK_EQ(probe_parse("-:ev", &d, &e), 0);
	CHECK_EQ(d.kind, '-');
	CHECK_STR(d.group, "");
	CHECK_STR(d.event, "ev");
	probe_def_free(&d);

	/* each parameter is $argN with its type */
	CHECK_EQ(probe_parse("open(int dfd, const char *path, unsigned int v[3], void *p)", &d, &e), 0);
	CHECK_EQ(d.kind, 'f');
	CHECK_STR(d.group, "functions");
	CHECK_STR(d.event, "open");
	CHECK_STR(d.sym, "open");
	CHECK_EQ(d.nargs, 4);
	CHECK_STR(d.args[0].fetch, "$arg1");
	CHECK_STR(d.args[0].type, "s32");
	CHECK_STR(d.args[1].name, "path");
	CHECK_STR(d.args[1].fetch, "+0($arg2)");
	CHECK_STR(d.args[1].type, "string");
	CHECK_STR(d.args[2].fetch, "+0($arg3)");
	CHECK_STR(d.args[2].type, "u32[3]");
	CHECK_STR(d.args[3].fetch, "$arg4");
	CHECK_STR(d.args[3].type, "x64");
	probe_def_free(&d);

	/* a failed parse leaves the caller's definition alone */
	memset(&d, 0x5a, sizeof(d));
	CHECK(probe_parse("p foo %nope", &d, &e) == -EINVAL);
	CHECK_EQ(d.kind, 0x5a);
	probe_def_free(NULL);
}

/* ---- (2) bad definitions: '^' marks the caret ---- */

static const struct {
	const char *def, *word;
} bad_rows[] = {
	/* kprobe_syntax_errors.tc, on a user-space function */
	{"p^100 foo", "Maxactive"},
	{"r^1a111 foo", "Invalid maxactive"},
	{"r^100000 foo", "too big"},
	{"r^0 foo", "Invalid maxactive"},
	{"p ^non+exist", "Invalid probed address"},
	{"p ^hoge-fuga", "Invalid probed address"},
	{"p ^hoge+1000-1000", "Invalid probed address"},
	{"r ^foo+10", "Retprobe"},
	{"p:^/bar foo", "Group name is not specified"},
	{"p:^12345678901234567890123456789012345678901234567890123456789012345/bar foo",
	 "Group name is too long"},
	{"p:^foo.1/bar foo", "Group name must follow"},
	/* trail's own groups */
	{"p:^ftrace/funcgraph_entry foo", "Group 'ftrace' is trail's own"},
	{"r:^synthetic/x foo", "Group 'synthetic' is trail's own"},
	{"p:^user_events.x foo", "Group 'user_events' is trail's own"},
	{"e:^ftrace/x app/req", "(ftrace, synthetic, user_events are reserved)"},
	{"p:^ foo", "Event name is not specified"},
	{"p:foo/^12345678901234567890123456789012345678901234567890123456789012345 foo",
	 "Event name is too long"},
	{"p:foo/^bar.1 foo", "Event name must follow"},
	{"p foo ^$retval", "$retval is not available"},
	{"p foo ^$stack10000", "Invalid stack number"},
	{"p foo ^$arg10000", "Invalid argument number"},
	{"p foo ^$arg0", "Invalid argument number"},
	{"p foo ^$none_var", "Invalid $-variable"},
	{"p foo ^%none_reg", "Invalid register name"},
	{"p foo ^@12345678abcde", "Invalid memory address"},
	{"p foo ^@+10", "File offset"},
	{"p foo ^+0@0)", "Dereference needs a brace"},
	{"p foo ^+0ab1(@0)", "Invalid dereference offset"},
	{"p foo +0(+0(@0^)", "Dereference brace is not closed"},
	{"p foo +0(^$comm)", "$comm can not be dereferenced"},
	{"p foo ^&1", "Invalid fetch argument"},
	{"p foo +0(^+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))))",
	 "Dereference is too much nested"},
	{"p foo +0(@11):u8[10^", "Array is not closed"},
	{"p foo +0(@11):u8[10]^a", "Array has wrong suffix"},
	{"p foo +0(@11):u8[^10a]", "Invalid array size"},
	{"p foo +0(@11):u8[^256]", "Array number is too big"},
	{"p foo @11:^unknown_type", "Unknown type"},
	{"p foo $stack0:^string", "String accepts only memory"},
	{"p foo @11:^b10@a/16", "Invalid bitfield"},
	{"p foo ^arg123456789012345678901234567890=@11", "Argument name is too long"},
	{"p foo ^=@11", "Argument name is not specified"},
	{"p foo ^var.1=@11", "Argument name must follow"},
	{"p foo var1=@11 ^var1=@12", "already used"},
	{"p foo ^+1234567(+1234567(+1234567(+1234567(+1234567(+1234567(@1234))))))",
	 "Argument expression is too long"},
	{"p foo arg1=^", "No argument expression"},
	/* more of the same kinds */
	{"^x foo", "Unknown probe type"},
	{"p^x foo", "Unknown probe type"},
	{"p ^0x1234", "give a function name"},
	{"p foo^%ret", "Invalid probed address suffix"},
	{"p ^bar:foo", "OBJ:SYM"},
	{"p:g/e ^", "Probe point is not specified"},
	{"p foo ^%rax", "Invalid register name"},
	{"p foo ^%eax", "Invalid register name"},
	{"p foo ^__probe_ip=%ax", "reserved"},
	{"p foo ^common_pid=%ax", "reserved"},
	{"p foo ^__probe_fault=%ax", "reserved"},
	{"p foo %ax ^arg1=%bx", "already used"},
	{"p foo %ax:^u128", "Unknown type"},
	{"p foo %ax:^", "Unknown type"},
	{"p foo %di:^string", "String accepts only memory"},
	{"p foo $arg1:^ustring", "String accepts only memory"},
	{"p foo %di:^u8[4]", "Array accepts only memory"},
	{"p foo +0(%di):^string[2]", "String arrays"},
	{"p foo %ax:^b9@0/8", "Invalid bitfield"},
	{"p foo %ax:^b4@6/8", "Invalid bitfield"},
	{"p foo %ax:^b0@0/8", "Invalid bitfield"},
	{"p foo %ax:^b4@0/12", "Unknown type"},
	{"p foo +0(%di):^b4@0/8[2]", "bitfield"},
	{"p foo $comm:^u32", "only accepts string"},
	{"p foo c=$comm:^x64", "only accepts string"},
	{"p foo +0(%di)^x", "wrong suffix"},
	{"p foo +0(^)", "Invalid fetch argument"},
	{"p foo ^+(%di)", "Invalid dereference offset"},
	{"p foo x=@counter^+", "Invalid symbol offset"},
	{"p foo ^@", "Invalid memory address"},
	{"p foo req^-len", "single hyphen"},
	{"p foo arr[^x]", "Invalid array index"},
	{"p foo a.^1", "Invalid fetch argument"},
	{"r foo ^%di", "not saved at a return"},
	{"r foo ^$arg1", "return probe"},
	{"r foo ^$$args", "return probe"},
	{"p foo ^$$args:u32", "independent"},
	{"p foo ^x=$$args", "independent"},
	{"p foo $$args ^$arg*", "only once"},
	{"p foo +0(^$$args)", "Invalid $-variable"},
	/* eprobes */
	{"e:g/n app/req ^%ax", "eprobe"},
	{"e:g/n app/req ^$arg*", "function entry"},
	{"e:g/n app/req ^len", "eprobe"},
	{"e:g/n app/req ^$9x", "Invalid $-variable"},
	{"e:g/n ^app", "requires both group and event"},
	{"e:g/n ^app/", "requires both group and event"},
	{"e:g/n ^/req", "Group name is not specified"},
	{"e:g/n ^", "requires both group and event"},
	{"e app/req $len if^", "Meaningless filter expression"},
	{"e app/req $len if a == 1 ^\n|| b == 2", "one line"},
	{"e^5 app/req", "Maxactive"},
	/* deletes */
	{"-:g/e ^foo", "takes no arguments"},
	{"-^", "Event name is not specified"},
	{"-:g/^", "Event name is not specified"},
	/* function events */
	{"foo(int^)", "Argument name is not specified"},
	{"foo(^float x)", "Unknown type"},
	{"foo(int x, int ^x)", "already used"},
	{"foo(int x^", "Parameter list is not closed"},
	{"foo(int x) ^junk", "wrong suffix"},
	{"foo(^string s[2])", "String arrays"},
	{"foo(int v[^0])", "Invalid array size"},
	{"foo(int v[^65])", "too big"},
	{"foo(int ^%x)", "Invalid parameter"},
	{"foo(int ^__probe_ip)", "reserved"},
	{"foo(char ^p*)", "Invalid parameter"},
	{"^1foo(int x)", "give a function name"},
	{"^foo+4(int x)", "no offset"},
	{"foo^%return(int x)", "Invalid probed address"},
	{"^", "Empty"},
	{"r ./app:^0x10", "PATH:OFFSET is for p: probes"},
	{"r ^parse:3", "A source line is for p: probes"},
	{"p ^3x:3", "A line needs a function (FUNC:RLN) or a source file (FILE:LINE)"},
	{"p parse:^99999999999", "Invalid line number"},
	{"p ./app:^0x1g", "Invalid file offset"},
	/* wprobes */
	{"w:g/e ^counter", "Invalid watch specification"},
	{"w:g/e ^x@counter", "Invalid access type"},
	{"w:g/e w@counter:^3", "Invalid length"},
	{"w:g/e w@counter:^", "Invalid length"},
	{"w:g/e w@^", "Invalid watch address or symbol"},
	{"w:g/e w@^0x1g", "Invalid watch address"},
	{"w:g/e w@^1x", "Invalid watch address"},
	{"w:g/e w@counter^+x", "Invalid symbol offset"},
	{"w:g/e w@counter ^$arg1", "a wprobe has $addr"},
	{"w:g/e w@counter ^$retval", "a wprobe has $addr"},
	{"w:g/e w@counter ^var", "a wprobe reads"},
	{"p:g/e foo ^$addr", "wprobe's"},
	{"r:g/e foo ^$value", "wprobe's"},
	{"p:g/e foo ^$old", "wprobe's"},
	{"w:g/e ^", "Watch point is not specified"},
};

/* the row's text without its '^', and where the '^' was */
static int caret(const char *row, char *text, size_t n)
{
	const char *c = strchr(row, '^');
	int pos = c ? (int)(c - row) : (int)strlen(row) + 1;

	snprintf(text, n, "%.*s%s", c ? pos : (int)strlen(row), row, c ? c + 1 : "");
	return pos;
}

TEST(probe_bad)
{
	size_t n = sizeof(bad_rows) / sizeof(bad_rows[0]);

	CHECK(n >= 40);
	for (size_t i = 0; i < n; i++) {
		char text[256];
		int pos = caret(bad_rows[i].def, text, sizeof(text));
		struct probe_def d;
		struct probe_err e;
		int ret = probe_parse(text, &d, &e);

		if (!ret) {
			fprintf(stderr, "  '%s' parsed\n", text);
			probe_def_free(&d);
			CHECK(ret);
			continue;
		}
		CHECK_EQ(ret, -EINVAL);
		if (e.pos != pos || !strstr(e.msg, bad_rows[i].word))
			fprintf(stderr, "  '%s': \"%s\" at %d, want \"%s\" at %d\n", text, e.msg, e.pos,
				bad_rows[i].word, pos);
		CHECK_EQ(e.pos, pos);
		CHECK(strstr(e.msg, bad_rows[i].word) != NULL);
	}
}

/* the kernel's limits, at their edges */
TEST(probe_limits)
{
	char text[4096], ev[80];
	struct probe_def d;
	struct probe_err e;
	int n;

	/* 128 arguments pass, 129 do not: caret on the first, as the kernel */
	n = snprintf(text, sizeof(text), "p foo");
	for (int i = 0; i < 128; i++)
		n += snprintf(text + n, sizeof(text) - (size_t)n, " %%ax");
	CHECK_EQ(probe_parse(text, &d, &e), 0);
	CHECK_EQ(d.nargs, 128);
	CHECK_STR(d.args[127].name, "arg128");
	probe_def_free(&d);
	snprintf(text + n, sizeof(text) - (size_t)n, " %%bx");
	CHECK_EQ(probe_parse(text, &d, &e), -EINVAL);
	CHECK_EQ(e.pos, 6);
	CHECK(strstr(e.msg, "Too many arguments") != NULL);

	/* event names: 63 characters pass, 64 do not */
	memset(ev, 'e', 63);
	ev[63] = '\0';
	snprintf(text, sizeof(text), "p:g/%s foo", ev);
	CHECK_EQ(probe_parse(text, &d, &e), 0);
	probe_def_free(&d);
	snprintf(text, sizeof(text), "p:g/%se foo", ev);
	CHECK_EQ(probe_parse(text, &d, &e), -EINVAL);
	CHECK_EQ(e.pos, 4);

	/* argument names: 31 pass (the NUL takes the 32nd byte) */
	snprintf(text, sizeof(text), "p foo %.31s=%%ax", "abcdefghijklmnopqrstuvwxyzABCDEFG");
	CHECK_EQ(probe_parse(text, &d, &e), 0);
	probe_def_free(&d);
	snprintf(text, sizeof(text), "p foo %.32s=%%ax", "abcdefghijklmnopqrstuvwxyzABCDEFG");
	CHECK_EQ(probe_parse(text, &d, &e), -EINVAL);

	/* a fetch-arg of 63 characters passes, 64 do not */
	snprintf(text, sizeof(text), "p foo +%058d(%%di)", 0);
	CHECK_EQ(probe_parse(text, &d, &e), -EINVAL);
	CHECK(strstr(e.msg, "too long") != NULL);
	snprintf(text, sizeof(text), "p foo +%057d(%%di)", 0);
	CHECK_EQ(probe_parse(text, &d, &e), 0);
	probe_def_free(&d);

	/* arrays of 64 elements pass, of 65 do not; maxactive 4096, 4097 */
	CHECK_EQ(probe_parse("p foo +0(%di):u8[64]", &d, &e), 0);
	probe_def_free(&d);
	CHECK_EQ(probe_parse("p foo +0(%di):u8[65]", &d, &e), -EINVAL);
	CHECK_EQ(probe_parse("r4096 foo", &d, &e), 0);
	probe_def_free(&d);
	CHECK_EQ(probe_parse("r4097 foo", &d, &e), -EINVAL);
	CHECK_EQ(probe_parse("p foo $stack2048 $arg64", &d, &e), 0);
	probe_def_free(&d);
	CHECK_EQ(probe_parse("p foo $arg65", &d, &e), -EINVAL);
}

/* ---- (3) compiling raw definitions ---- */

static const char *const reg_names[] = {
	"ax", "bx", "cx", "dx", "si", "di", "bp", "sp", "r8", "r9",
	"r10", "r11", "r12", "r13", "r14", "r15", "ip",
};

/* the ops as fetch.h's comment writes them */
static void disasm(const struct trail_probe *p, char *out, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (uint16_t i = 0; i < p->hdr->ninsns && o < n; i++) {
		struct trail_fetch_insn c;
		const char *sep = i ? "; " : "";

		memcpy(&c, &p->code[i], sizeof(c));
		switch (c.op) {
		case TRAIL_FOP_REG:
			o += (size_t)snprintf(out + o, n - o, "%sREG %s", sep, reg_names[c.arg]);
			break;
		case TRAIL_FOP_STACK:
			o += (size_t)snprintf(out + o, n - o, "%sSTACK +%lld", sep, (long long)c.imm);
			break;
		case TRAIL_FOP_RETVAL:
			o += (size_t)snprintf(out + o, n - o, "%sRETVAL", sep);
			break;
		case TRAIL_FOP_IMM:
			o += (size_t)snprintf(out + o, n - o, "%sIMM 0x%llx", sep, (long long)c.imm);
			break;
		case TRAIL_FOP_SYM:
			o += (size_t)snprintf(out + o, n - o, "%sSYM \"%s\" +0x%llx", sep,
					      c.u32 == 0xffffffffu ? "" : p->strs + c.u32, (long long)c.imm);
			break;
		case TRAIL_FOP_FIELD:
			o += (size_t)snprintf(out + o, n - o, "%sFIELD %u", sep, c.u32);
			break;
		case TRAIL_FOP_DEREF:
			o += (size_t)snprintf(out + o, n - o, "%sDEREF %u %+lld", sep, c.size, (long long)c.imm);
			break;
		case TRAIL_FOP_BITFIELD:
			o += (size_t)snprintf(out + o, n - o, "%sBITFIELD %u@%u", sep, c.size, c.arg);
			break;
		case TRAIL_FOP_ST_INT:
			o += (size_t)snprintf(out + o, n - o, "%sST_INT %u", sep, c.size);
			break;
		case TRAIL_FOP_ST_STRING:
			o += (size_t)snprintf(out + o, n - o, "%sST_STRING %+lld max %u", sep, (long long)c.imm,
					      c.u32);
			break;
		case TRAIL_FOP_ST_ARRAY:
			o += (size_t)snprintf(out + o, n - o, "%sST_ARRAY %u x %u %+lld", sep, c.size, c.u32,
					      (long long)c.imm);
			break;
		case TRAIL_FOP_ST_COMM:
			o += (size_t)snprintf(out + o, n - o, "%sST_COMM", sep);
			break;
		default:
			o += (size_t)snprintf(out + o, n - o, "%s?%u", sep, c.op);
		}
	}
}

/* the event's fields: "name=type ..." (u32 s8 x64 char sym64 str u8[4]) */
static void fields(const struct trail_meta *m, char *out, size_t n)
{
	size_t o = 0;

	out[0] = '\0';
	for (uint32_t i = 0; i < m->nfields && o < n; i++) {
		const struct trail_field *f = &m->fields[i];
		char t[32];

		if (f->kind == TRAIL_FK_STRING)
			snprintf(t, sizeof(t), "str");
		else if (f->flags & TRAIL_FF_CHAR)
			snprintf(t, sizeof(t), "char");
		else
			snprintf(t, sizeof(t), "%s%d",
				 f->flags & TRAIL_FF_SYM ? "sym" : f->flags & TRAIL_FF_SIGNED ? "s" :
				 f->flags & TRAIL_FF_HEX ? "x" : "u", f->size * 8);
		if (f->kind == TRAIL_FK_ARRAY)
			snprintf(t + strlen(t), sizeof(t) - strlen(t), "[%u]", f->count);
		o += (size_t)snprintf(out + o, n - o, "%s%s=%s", i ? " " : "", f->name, t);
	}
}

/* @SYM: "counter" in the probed object, "lib_global" in a library */
static int fake_sym_addr(void *ctx, const char *sym, char *obj, size_t objn, uint64_t *vaddr)
{
	(*(int *)ctx)++;
	if (!strcmp(sym, "counter")) {
		snprintf(obj, objn, "%s", "");
		*vaddr = 0x4010;
		return 0;
	}
	if (!strcmp(sym, "lib_global")) {
		snprintf(obj, objn, "%s", "/usr/lib/libx.so");
		*vaddr = 0x2000;
		return 0;
	}
	return -ENOENT;
}

/* the source event of the eprobes: app:request {string path; s32 len;
 * x64 ptr; u8 flag; double f}, a meta blob written byte by byte */
static uint8_t src_blob[256];

static void source_event(struct trail_meta *m)
{
	static const struct {
		const char *name;
		uint8_t kind, size, flags;
	} f[] = {
		{"path", TRAIL_FK_STRING, 1, 0},
		{"len", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED},
		{"ptr", TRAIL_FK_INT, 8, TRAIL_FF_HEX},
		{"flag", TRAIL_FK_INT, 1, 0},
		{"f", TRAIL_FK_FLOAT, 8, 0},
	};
	struct trail_meta_hdr h = {TRAIL_META_MAGIC, 0, 1, 5};
	size_t o = sizeof(h);
	const char *why;

	memcpy(src_blob + o, "app\0request\0", 12); /* provider, name */
	o += 12;
	for (int i = 0; i < 5; i++) {
		struct trail_meta_field mf = {f[i].kind, f[i].size, f[i].flags,
					      (uint8_t)strlen(f[i].name), 0};

		memcpy(src_blob + o, &mf, sizeof(mf)); /* kind size flags namelen count */
		o += sizeof(mf);
		memcpy(src_blob + o, f[i].name, mf.namelen + 1u); /* name, NUL */
		o += mf.namelen + 1u;
	}
	h.size = (uint16_t)o;
	memcpy(src_blob, &h, sizeof(h));
	CHECK_EQ(trail__meta_parse(src_blob, o, m, &why), 0);
}

static struct trail_meta src_meta;

static int compile(const char *text, const struct probe_target *t, uint8_t **blob, size_t *len,
		   char **res, struct probe_err *e)
{
	struct probe_def d;
	int ret = probe_parse(text, &d, e);

	if (ret)
		return ret;
	ret = probe_compile(&d, t, blob, len, res, e);
	probe_def_free(&d);
	return ret;
}

static const struct {
	const char *def, *ops, *fields;
	int payload_max; /* -1: not checked here (trail_probe_check checks it) */
} compile_rows[] = {
	/* fetch.h's examples */
	{"p:g/e foo $arg2:x32", "REG si; ST_INT 4", "__probe_ip=sym64 arg1=x32", 12},
	{"p:g/e foo +8($arg1):u32", "REG di; DEREF 4 +8; ST_INT 4",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=u32", 20},
	{"p:g/e foo +0(+16(%di)):string", "REG di; DEREF 8 +16; ST_STRING +0 max 4095",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=str", 3072},
	{"p:g/e foo +0($arg1):u8[4]", "REG di; ST_ARRAY 1 x 4 +0",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=u8[4]", 20},
	{"p:g/e foo +4($arg1):b3@2/32", "REG di; DEREF 4 +4; BITFIELD 3@2; ST_INT 4",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=u32", 20},
	{"p:g/e foo $stack2", "STACK +16; ST_INT 8", "__probe_ip=sym64 __probe_fault=x64 arg1=x64", 24},
	{"p:g/e foo @counter+8:s32", "SYM \"\" +0x4018; DEREF 4 +0; ST_INT 4",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=s32", 20},
	{"p:g/e foo $comm", "ST_COMM", "__probe_ip=sym64 arg1=str", 8 + 2 + 16},
	/* the rest of the grammar */
	{"p:g/e foo @counter", "SYM \"\" +0x4010; DEREF 8 +0; ST_INT 8",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=x64", 24},
	{"p:g/e foo a=@lib_global-8:u16 b=@counter:string",
	 "SYM \"/usr/lib/libx.so\" +0x1ff8; DEREF 2 +0; ST_INT 2; SYM \"\" +0x4010; ST_STRING +0 max 4095",
	 "__probe_ip=sym64 __probe_fault=x64 a=u16 b=str", -1},
	{"p:g/e foo @0x1000:u16 @4096:u8[2]", "IMM 0x1000; DEREF 2 +0; ST_INT 2; IMM 0x1000; ST_ARRAY 1 x 2 +0",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=u16 arg2=u8[2]", 20},
	{"p:g/e foo $arg1 $arg6:s8 $arg7 $arg8:u32",
	 "REG di; ST_INT 8; REG r9; ST_INT 1; STACK +8; ST_INT 8; STACK +16; ST_INT 4",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=x64 arg2=s8 arg3=x64 arg4=u32", 37},
	{"p:g/e foo $stack %r15:s64 %ip:symbol %ax:b4@4/8 %dx:char",
	 "REG sp; ST_INT 8; REG r15; ST_INT 8; REG ip; ST_INT 8; REG ax; BITFIELD 4@4; ST_INT 1; "
	 "REG dx; ST_INT 1",
	 "__probe_ip=sym64 arg1=x64 arg2=s64 arg3=sym64 arg4=u8 arg5=char", 34},
	{"p:g/e foo -8(%bp):s32 +0(+8(+16(%di))):u64 +u2(%si):x16",
	 "REG bp; DEREF 4 -8; ST_INT 4; REG di; DEREF 8 +16; DEREF 8 +8; DEREF 8 +0; ST_INT 8; "
	 "REG si; DEREF 2 +2; ST_INT 2",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=s32 arg2=u64 arg3=x16", 30},
	{"p:g/e foo +0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(+0(@0))))))))))))):string",
	 "IMM 0x0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; "
	 "DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; DEREF 8 +0; ST_STRING +0 max 4095",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=str", -1},
	{"p:g/e foo +0(%di):char[8] +16(%si):symstr", "REG di; ST_ARRAY 1 x 8 +0; REG si; DEREF 8 +16; ST_INT 8",
	 "__probe_ip=sym64 __probe_fault=x64 arg1=char[8] arg2=sym64", 32},
	/* return probes */
	{"r:g/e foo $retval", "RETVAL; ST_INT 8", "__probe_func=sym64 __probe_ret_ip=sym64 arg1=x64", 24},
	{"r:g/e foo ret=$retval:s32 sp=$stack1 %ax:x32 +0($retval):string",
	 "RETVAL; ST_INT 4; STACK +8; ST_INT 8; REG ax; ST_INT 4; RETVAL; ST_STRING +0 max 4095",
	 "__probe_func=sym64 __probe_ret_ip=sym64 __probe_fault=x64 ret=s32 sp=x64 arg3=x32 arg4=str", -1},
	/* function events */
	{"load_config(string path, x32 flags)", "REG di; ST_STRING +0 max 4095; REG si; ST_INT 4",
	 "__probe_ip=sym64 __probe_fault=x64 path=str flags=x32", -1},
	{"f(char c, long l, void *p, int v[2], unsigned short a5, u8 a6, s16 a7)",
	 "REG di; ST_INT 1; REG si; ST_INT 8; REG dx; ST_INT 8; REG cx; ST_ARRAY 4 x 2 +0; "
	 "REG r8; ST_INT 2; REG r9; ST_INT 1; STACK +8; ST_INT 2",
	 "__probe_ip=sym64 __probe_fault=x64 c=char l=s64 p=x64 v=s32[2] a5=u16 a6=u8 a7=s16", 46},
	/* eprobes: app:request {path, len, ptr, flag, f} */
	{"e:g/n app/request p=+0($path):string l=$len x=$ptr s=$ptr:string b=+4($ptr):u8 c=$comm",
	 "FIELD 0; ST_STRING +0 max 4095; FIELD 1; ST_INT 4; FIELD 2; ST_INT 8; FIELD 2; "
	 "ST_STRING +0 max 4095; FIELD 2; DEREF 1 +4; ST_INT 1; ST_COMM",
	 "__probe_fault=x64 p=str l=s32 x=x64 s=str b=u8 c=str", -1},
	{"e:g/n app/request $path $flag:x8 $len:u64", "FIELD 0; ST_STRING +0 max 4095; FIELD 3; ST_INT 1; "
	 "FIELD 1; ST_INT 8", "__probe_fault=x64 arg1=str arg2=x8 arg3=u64", -1},
	{"e:g/n app/request $flag", "FIELD 3; ST_INT 1", "arg1=u8", 1},
};

TEST(probe_compile_raw)
{
	int calls = 0;
	struct probe_target t = {"/bin/app", NULL, &src_meta, fake_sym_addr, &calls, 0, 0, 0, 0, 0};

	source_event(&src_meta);
	for (size_t i = 0; i < sizeof(compile_rows) / sizeof(compile_rows[0]); i++) {
		uint8_t *blob = NULL;
		size_t len = 0;
		char *res = NULL, buf[1024];
		struct probe_err e;
		struct trail_probe p;
		struct trail_meta m;
		const char *why;
		int ret = compile(compile_rows[i].def, &t, &blob, &len, &res, &e);

		if (ret) {
			fprintf(stderr, "  '%s': %s at %d\n", compile_rows[i].def, e.msg, e.pos);
			CHECK_EQ(ret, 0);
			continue;
		}
		CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
		disasm(&p, buf, sizeof(buf));
		CHECK_STR(buf, compile_rows[i].ops);
		CHECK_EQ(trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why), 0);
		fields(&m, buf, sizeof(buf));
		CHECK_STR(buf, compile_rows[i].fields);
		if (compile_rows[i].payload_max >= 0)
			CHECK_EQ(p.hdr->payload_max, compile_rows[i].payload_max);
		CHECK_EQ(!!(p.hdr->flags & TRAIL_PROBE_F_COMM), strstr(compile_rows[i].ops, "ST_COMM") != NULL);
		/* raw definitions resolve to themselves */
		{
			struct probe_def d;
			char *norm;

			CHECK_EQ(probe_parse(compile_rows[i].def, &d, &e), 0);
			norm = probe_def_format(&d);
			CHECK_STR(res, norm);
			free(norm);
			probe_def_free(&d);
		}
		free(blob);
		free(res);
	}
	CHECK(calls >= 4);
}

TEST(probe_compile_header)
{
	int calls = 0;
	struct probe_target t = {"/bin/app", NULL, &src_meta, fake_sym_addr, &calls, 0, 0, 0, 0, 0};
	uint8_t *blob;
	size_t len;
	char *res;
	struct probe_err e;
	struct trail_probe p;
	struct trail_meta m;
	const char *why;

	source_event(&src_meta);
	CHECK_EQ(compile("p:grp/ev libfoo.so:fn+4 %di", &t, &blob, &len, &res, &e), 0);
	CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
	CHECK_EQ(p.hdr->kind, TRAIL_PROBE_ENTRY);
	CHECK_EQ(p.hdr->offset, 4);
	CHECK_EQ(p.hdr->nargs, 1);
	CHECK_EQ(p.hdr->flags, 0);
	CHECK_STR(p.sym, "fn");
	CHECK_STR(p.obj, "libfoo.so");
	CHECK_EQ(trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why), 0);
	CHECK_STR(m.provider, "grp");
	CHECK_STR(m.name, "ev");
	CHECK_STR(res, "p:grp/ev libfoo.so:fn+4 arg1=%di");
	free(blob);
	free(res);

	CHECK_EQ(compile("r foo $retval", &t, &blob, &len, &res, &e), 0);
	CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
	CHECK_EQ(p.hdr->kind, TRAIL_PROBE_RETURN);
	CHECK_EQ(p.hdr->offset, 0);
	CHECK_STR(p.obj, "");
	free(blob);
	free(res);

	CHECK_EQ(compile("x(int a)", &t, &blob, &len, &res, &e), 0);
	CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
	CHECK_EQ(p.hdr->kind, TRAIL_PROBE_ENTRY);
	CHECK_STR(p.sym, "x");
	CHECK_EQ(trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why), 0);
	CHECK_STR(m.provider, "functions");
	CHECK_STR(m.name, "x");
	CHECK_STR(res, "x(int a)");
	free(blob);
	free(res);

	CHECK_EQ(compile("e app/request $len", &t, &blob, &len, &res, &e), 0);
	CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
	CHECK_EQ(p.hdr->kind, TRAIL_PROBE_EVENT);
	CHECK_STR(p.sym, "app:request");
	CHECK_EQ(trail__meta_parse(p.meta, p.hdr->meta_size, &m, &why), 0);
	CHECK_STR(m.provider, "eprobes");
	CHECK_STR(m.name, "request");
	free(blob);
	free(res);

	/* no arguments at all */
	CHECK_EQ(compile("p foo", &t, &blob, &len, NULL, &e), 0);
	CHECK_EQ(trail_probe_check(blob, len, &p, &why), 0);
	CHECK_EQ(p.hdr->ninsns, 0);
	CHECK_EQ(p.hdr->payload_max, 8);
	free(blob);
}

/* compile errors: '^' marks the caret */
static const struct {
	const char *def, *word;
	int ret;
} compile_bad[] = {
	{"p foo ^@nosuch", "Unknown symbol nosuch", -ENOENT},
	{"p foo x=+8(^@nosuch+4):u8", "Unknown symbol", -ENOENT},
	{"p foo ^req->len", "no debug info for /bin/app", -ENOENT},
	{"p foo +8(^req->next):u32", "raw syntax", -ENOENT},
	{"p foo len=^argc:s32", "no debug info", -ENOENT},
	{"p foo ^$$args", "no debug info for /bin/app", -ENOENT},
	{"p foo %ax ^$arg*", "no debug info", -ENOENT},
	{"e:g/n app/request ^$nosuch", "path len ptr flag f", -ENOENT},
	{"e:g/n app/request ^$path:u32", "string", -EINVAL},
	{"e:g/n app/request +4(^$path):string", "string", -EINVAL},
	{"e:g/n app/request ^$f", "not an integer", -EINVAL},
	{"e:g/n app/request ^@counter", "eprobe", -EINVAL},
	{"e:g/n app/request $len $comm:^u32", "only accepts string", -EINVAL},
	{"e:g/n app/request +0(^$comm):string", "can not be dereferenced", -EINVAL},
	{"e:g/n app/request $len:^string[2]", "String arrays", -EINVAL},
	{"e:g/n app/request $len:^u8[2]", "Array accepts only memory", -EINVAL},
	{"e:g/n app/request len=$len ^len=$ptr", "already used", -EINVAL},
	{"^-:g/e", "nothing to compile", -EINVAL},
	/* 3072 bytes of payload at most: the sixth 512-byte array is too many */
	{"p foo +0(%di):u64[64] +0(%di):u64[64] +0(%di):u64[64] +0(%di):u64[64] +0(%di):u64[64] "
	 "^+0(%di):u64[64]", "Event too big", -EINVAL},
};

TEST(probe_compile_errors)
{
	int calls = 0;
	struct probe_target t = {"/bin/app", NULL, &src_meta, fake_sym_addr, &calls, 0, 0, 0, 0, 0};

	source_event(&src_meta);
	for (size_t i = 0; i < sizeof(compile_bad) / sizeof(compile_bad[0]); i++) {
		char text[512];
		int pos = caret(compile_bad[i].def, text, sizeof(text));
		uint8_t *blob = NULL;
		size_t len = 0;
		char *res = NULL;
		struct probe_err e;
		int ret = compile(text, &t, &blob, &len, &res, &e);

		if (e.pos != pos || !strstr(e.msg, compile_bad[i].word) || ret != compile_bad[i].ret)
			fprintf(stderr, "  '%s': %d \"%s\" at %d, want \"%s\" at %d\n", text, ret, e.msg,
				e.pos, compile_bad[i].word, pos);
		CHECK_EQ(ret, compile_bad[i].ret);
		CHECK_EQ(e.pos, pos);
		CHECK(strstr(e.msg, compile_bad[i].word) != NULL);
		CHECK(blob == NULL && res == NULL);
	}

	/* an eprobe needs its source event */
	{
		struct probe_target none = {"/bin/app", NULL, NULL, NULL, NULL, 0, 0, 0, 0, 0};
		uint8_t *blob = NULL;
		size_t len;
		struct probe_err e;

		CHECK_EQ(compile("e:g/n app/request $len", &none, &blob, &len, NULL, &e), -EINVAL);
		CHECK_EQ(e.pos, 6);
		CHECK(strstr(e.msg, "does not exist") != NULL);
		/* and @SYM a way to find symbols */
		CHECK_EQ(compile("p foo @counter", &none, &blob, &len, NULL, &e), -ENOENT);
		CHECK_EQ(e.pos, 6);
	}
}

TEST_MAIN(CHECK_T(probe_good), CHECK_T(probe_format_fixpoint), CHECK_T(probe_def_fields),
	  CHECK_T(probe_bad), CHECK_T(probe_limits), CHECK_T(probe_compile_raw),
	  CHECK_T(probe_compile_header), CHECK_T(probe_compile_errors))
