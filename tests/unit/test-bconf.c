/* SPDX-License-Identifier: MIT */
/*
 * test-bconf.c - the bootconfig grammar (src/session/bconf.c) against the
 * kernel's documentation: every example of admin-guide/bootconfig.rst and
 * trace/boottime-trace.rst flattened to "key = values" lines as
 * /proc/bootconfig shows them, and its error cases with the kernel's
 * messages at their line and column.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "session/bconf.h"

/* "key = "v1", "v2"" lines, as /proc/bootconfig prints them */
struct flat {
	char buf[8192];
	size_t len;
};

static int flat_one(void *arg, const char *key, const struct trail_bconf_node *k)
{
	struct flat *f = arg;
	const struct trail_bconf_node *v = trail_bconf_values(k);

	f->len += (size_t)snprintf(f->buf + f->len, sizeof(f->buf) - f->len, "%s%s", key,
				   v ? " = " : "");
	for (int i = 0; v && v->value; v = v->next, i++)
		f->len += (size_t)snprintf(f->buf + f->len, sizeof(f->buf) - f->len, "%s\"%s\"",
					   i ? ", " : "", v->data);
	f->len += (size_t)snprintf(f->buf + f->len, sizeof(f->buf) - f->len, "\n");
	return 0;
}

static const char *flatten(const char *text, struct flat *f)
{
	struct trail_bconf c;
	struct trail_bconf_err e;

	f->len = 0;
	f->buf[0] = '\0';
	if (trail_bconf_parse(text, strlen(text), &c, &e)) {
		snprintf(f->buf, sizeof(f->buf), "error %u:%u %s", e.line, e.col, e.msg);
		return f->buf;
	}
	trail_bconf_each(&c, flat_one, f);
	trail_bconf_free(&c);
	return f->buf;
}

TEST(documentation_examples)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{"foo.bar.baz = value1\nfoo.bar.qux.quux = value2\n",
		 "foo.bar.baz = \"value1\"\nfoo.bar.qux.quux = \"value2\"\n"},
		{"foo.bar {\n   baz = value1\n   qux.quux = value2\n}\n",
		 "foo.bar.baz = \"value1\"\nfoo.bar.qux.quux = \"value2\"\n"},
		{"foo.bar { baz = value1; qux.quux = value2 }",
		 "foo.bar.baz = \"value1\"\nfoo.bar.qux.quux = \"value2\"\n"},
		/* := replaces, += appends */
		{"foo = bar, baz\nfoo := qux\n", "foo = \"qux\"\n"},
		{"foo = bar, baz\nfoo += qux\n", "foo = \"bar\", \"baz\", \"qux\"\n"},
		/* comments, an array across lines */
		{"# comment line\nfoo = value # value is set to foo.\nbar = 1, # 1st element\n"
		 "      2, # 2nd element\n      3  # 3rd element\n",
		 "foo = \"value\"\nbar = \"1\", \"2\", \"3\"\n"},
		/* quotes hold delimiters; a key alone is a boolean; empty value */
		{"a = \"x; y, z # w }\", 'q\"r'\nflag\nempty =\n",
		 "a = \"x; y, z # w }\", \"q\"r\"\nflag\nempty = \"\"\n"},
		/* boottime-trace.rst's examples */
		{"ftrace.event {\n\ttask.task_newtask {\n\t\tfilter = \"pid < 128\"\n\t\tenable\n\t}\n"
		 "\tkprobes.vfs_read {\n\t\tprobes = \"vfs_read $arg1 $arg2\"\n"
		 "\t\tfilter = \"common_pid < 200\"\n\t\tenable\n\t}\n"
		 "\tsynthetic.initcall_latency {\n\t\tfields = \"unsigned long func\", \"u64 lat\"\n"
		 "\t\tactions = \"hist:keys=func.sym,lat:vals=lat:sort=lat\"\n\t}\n}\n",
		 "ftrace.event.task.task_newtask.filter = \"pid < 128\"\n"
		 "ftrace.event.task.task_newtask.enable\n"
		 "ftrace.event.kprobes.vfs_read.probes = \"vfs_read $arg1 $arg2\"\n"
		 "ftrace.event.kprobes.vfs_read.filter = \"common_pid < 200\"\n"
		 "ftrace.event.kprobes.vfs_read.enable\n"
		 "ftrace.event.synthetic.initcall_latency.fields = \"unsigned long func\", \"u64 lat\"\n"
		 "ftrace.event.synthetic.initcall_latency.actions = "
		 "\"hist:keys=func.sym,lat:vals=lat:sort=lat\"\n"},
		{"ftrace.instance {\n\tfoo {\n\t\ttracer = \"function\"\n\t\tftrace.filters = \"user_*\"\n\t}\n"
		 "\tbar {\n\t\ttracer = \"function\"\n\t\tftrace.filters = \"kernel_*\"\n\t}\n}\n",
		 "ftrace.instance.foo.tracer = \"function\"\nftrace.instance.foo.ftrace.filters = \"user_*\"\n"
		 "ftrace.instance.bar.tracer = \"function\"\nftrace.instance.bar.ftrace.filters = \"kernel_*\"\n"},
		{"kernel {\n\ttrace_options = sym-addr\n\ttrace_event = \"initcall:*\"\n\ttp_printk\n"
		 "\ttrace_buf_size = 1M\n\tftrace = function\n\tftrace_filter = \"vfs*\"\n}\n",
		 "kernel.trace_options = \"sym-addr\"\nkernel.trace_event = \"initcall:*\"\n"
		 "kernel.tp_printk\nkernel.trace_buf_size = \"1M\"\nkernel.ftrace = \"function\"\n"
		 "kernel.ftrace_filter = \"vfs*\"\n"},
		/* same words merge; a value and subkeys may share a key */
		{"a.b = 1\na { c = 2 }\na.b.d = 3\n", "a.b = \"1\"\na.b.d = \"3\"\na.c = \"2\"\n"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct flat f;

		if (strcmp(flatten(rows[i].in, &f), rows[i].want)) {
			fprintf(stderr, "  row %zu:\n%s\n  wanted:\n%s\n", i, f.buf, rows[i].want);
			check_failures++;
		}
	}
}

TEST(errors_where_the_kernel_says)
{
	static const struct {
		const char *in, *want;
	} rows[] = {
		{"foo = bar, baz\nfoo = qux\n", "error 2:7 Value is redefined"},
		{"foo {\n bar = 1\n", "error 1:1 Brace is not closed"},
		{"a { b { c = 1 }\n", "error 1:1 Brace is not closed"},
		{"foo = 1\n}\n", "error 2:1 Unexpected '}'"},
		{"foo = \"bar\n", "error 1:7 No closing quotes"},
		{"foo = \"bar\" baz\n", "error 1:13 No value delimiter"},
		{"foo bar = 1\n", "error 1:1 Invalid keyword"},
		{"foo..bar = 1\n", "error 1:1 Invalid keyword"},
		{"foo.bar! = 1\n", "error 1:1 Invalid keyword"},
		{"foo + 1\n", "error 1:5 Wrong '+' operator"},
		{"foo : 1\n", "error 1:5 Wrong ':' operator"},
		{"# nothing\n\n", "error 1:1 Empty config"},
		{"a.b.c.d.e.f.g.h.i.j.k.l.m.n.o.p.q = 1\n", "error 1:33 Too many key words"},
		{"x = 1\nk = \"a\0\"\n", "error 2:7 A NUL byte in the config data"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct flat f;
		size_t len = strlen(rows[i].in);
		struct trail_bconf c;
		struct trail_bconf_err e;

		/* (the NUL row: its length through the end of its text) */
		if (strstr(rows[i].want, "NUL"))
			len = 14;
		if (trail_bconf_parse(rows[i].in, len, &c, &e)) {
			snprintf(f.buf, sizeof(f.buf), "error %u:%u %s", e.line, e.col, e.msg);
		} else {
			trail_bconf_free(&c);
			snprintf(f.buf, sizeof(f.buf), "parsed");
		}
		if (strcmp(f.buf, rows[i].want)) {
			fprintf(stderr, "  row %zu: %s, wanted %s\n", i, f.buf, rows[i].want);
			check_failures++;
		}
	}
}

TEST(limits)
{
	struct trail_bconf c;
	struct trail_bconf_err e;
	size_t n = 1 << 20;
	char *big = malloc(n + 1), key[300];

	CHECK(big != NULL);
	/* a 1 MB file: refused as the kernel does, not read */
	memset(big, 'a', n);
	big[n] = '\0';
	CHECK_EQ(trail_bconf_parse(big, n, &c, &e), -ERANGE);
	CHECK_STR(e.msg, "Config data is too big");
	CHECK_EQ(trail_bconf_parse(big, 0, &c, &e), -ERANGE);
	CHECK_STR(e.msg, "Config data is empty");
	/* more nodes than 1024 */
	n = 0;
	for (int i = 0; i < 1100 && n < 30000; i++)
		n += (size_t)snprintf(big + n, 32, "k%d = %d\n", i, i);
	CHECK_EQ(trail_bconf_parse(big, n, &c, &e), -EINVAL);
	CHECK_STR(e.msg, "Too many nodes");
	/* a key longer than 256 bytes */
	memset(key, 'k', 260);
	memcpy(key + 260, " = 1\n", 6);
	CHECK_EQ(trail_bconf_parse(key, strlen(key), &c, &e), -EINVAL);
	CHECK_STR(e.msg, "Too long key length");
	/* braces 16 deep */
	n = 0;
	for (int i = 0; i < 17; i++)
		n += (size_t)snprintf(big + n, 16, "k%d {", i);
	CHECK_EQ(trail_bconf_parse(big, n, &c, &e), -EINVAL);
	CHECK(!strcmp(e.msg, "Exceed max depth of braces") || !strcmp(e.msg, "Too many key words"));
	free(big);
}

TEST(values_and_positions)
{
	static const char text[] = "ftrace {\n  tracer = function_graph\n  ftrace.filters = \"parse_*\", 'handle_*'\n}\n";
	struct trail_bconf c;
	struct trail_bconf_err e;
	const struct trail_bconf_node *k, *v;

	CHECK_EQ(trail_bconf_parse(text, sizeof(text) - 1, &c, &e), 0);
	k = c.root;
	CHECK_STR(k->data, "ftrace");
	CHECK_EQ(k->line, 1);
	k = k->child; /* tracer */
	CHECK_STR(k->data, "tracer");
	CHECK_EQ(k->line, 2);
	CHECK_EQ(k->col, 3);
	CHECK_EQ(trail_bconf_nvalues(k), 1);
	CHECK_STR(trail_bconf_values(k)->data, "function_graph");
	k = k->next->child; /* ftrace.filters */
	CHECK_STR(k->data, "filters");
	CHECK_EQ(trail_bconf_nvalues(k), 2);
	v = trail_bconf_values(k)->next;
	CHECK_STR(v->data, "handle_*");
	CHECK_EQ(v->line, 3);
	CHECK_EQ(v->col, 32);
	trail_bconf_free(&c);
}

TEST_MAIN(CHECK_T(documentation_examples), CHECK_T(errors_where_the_kernel_says), CHECK_T(limits),
	  CHECK_T(values_and_positions))
