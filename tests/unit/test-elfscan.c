/* SPDX-License-Identifier: MIT */
/*
 * test-elfscan.c - finding trail_meta blobs in ELF files, programs and
 * processes (src/session/elfscan.c). The fixtures are built once, before the
 * tests fork, by running cc into a temporary directory:
 *
 *   app          main.c + other.c (both use app:request; main.c also
 *                app:reply), needs libtev.so through DT_RUNPATH $ORIGIN;
 *                "app sleep" prints "ready" and waits to be killed
 *   libtev.so    lib:work
 *   bin/app-rpath   same, DT_RPATH ${ORIGIN}/../lib, with lib/libtev.so
 *   app-norpath  same, no search path of its own
 *   plain        no events
 *   pad.o, badpad.o, pad.a   hand-made sections (golden bytes below)
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../../src/common/meta.h"
#include "check.h"
#include "elfscan.h"

#ifndef TRAIL_SOURCE_DIR
#error "build with -DTRAIL_SOURCE_DIR=\"<source tree>\""
#endif

static char fx[256]; /* fixture directory, "" if the build failed */

/* ------------------------------------------------------------------------
 * Fixture sources.
 */
static const char ev_h[] =
	"#include <trail/trail.h>\n"
	"TRAIL_EVENT(app, request, TRAIL_ARGS(int, fd, const char *, path),\n"
	"\tTRAIL_FIELDS(trail_field_int(fd) trail_field_string(path)))\n"
	"TRAIL_EVENT(app, reply, TRAIL_ARGS(int, fd, int, status),\n"
	"\tTRAIL_FIELDS(trail_field_int(fd) trail_field_int(status)))\n";

static const char main_c[] =
	"#include <stdio.h>\n"
	"#include <string.h>\n"
	"#include <unistd.h>\n"
	"#include \"ev.h\"\n"
	"void other(int fd);\n"
	"void lib_work(long n);\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\ttrail(app, request, 1, \"main\");\n"
	"\ttrail(app, reply, 1, 200);\n"
	"\tother(2);\n"
	"\tlib_work(3);\n"
	"\tif (argc > 1 && !strcmp(argv[1], \"sleep\")) {\n"
	"\t\tputs(\"ready\");\n"
	"\t\tfflush(stdout);\n"
	"\t\tfor (;;)\n"
	"\t\t\tpause();\n"
	"\t}\n"
	"\treturn 0;\n"
	"}\n";

static const char other_c[] =
	"#include \"ev.h\"\n"
	"void other(int fd) { trail(app, request, fd, \"other\"); }\n";

static const char tev_c[] =
	"#include <trail/trail.h>\n"
	"TRAIL_EVENT(lib, work, TRAIL_ARGS(long, n), TRAIL_FIELDS(trail_field_int(n)))\n"
	"void lib_work(long n) { trail(lib, work, n); }\n";

static const char plain_c[] = "int main(void) { return 0; }\n";

/*
 * Golden blobs, byte by byte.
 */
static const unsigned char blob_one[] = {
	0x54, 0x52, 0x4d, 0x31, /* magic "TRM1" */
	0x10, 0x00,             /* size 16 */
	0x01,                   /* version 1 */
	0x00,                   /* nfields 0 */
	'p', 'a', 'd', 0,       /* provider */
	'o', 'n', 'e', 0,       /* event */
};

static const unsigned char blob_two[] = {
	0x54, 0x52, 0x4d, 0x31, /* magic */
	0x18, 0x00,             /* size 24 */
	0x01,                   /* version */
	0x01,                   /* nfields 1 */
	'p', 'a', 'd', 0,       /* provider */
	't', 'w', 'o', 0,       /* event */
	0x01,                   /* field kind TRAIL_FK_INT */
	0x04,                   /* size 4 */
	0x01,                   /* flags TRAIL_FF_SIGNED */
	0x01,                   /* namelen 1 */
	0x00, 0x00,             /* count 0 */
	'x', 0,                 /* field name */
};

static const unsigned char blob_huge[] = {
	0x54, 0x52, 0x4d, 0x31, /* magic */
	0xff, 0xff,             /* size 65535: past the end of the section */
	0x01, 0x00,             /* version, nfields */
	'p', 'a', 'd', 0,
	'b', 'a', 'd', 0,
};

/* ------------------------------------------------------------------------
 * Helpers.
 */
__attribute__((format(printf, 1, 2)))
static int run(const char *fmt, ...)
{
	char cmd[8192];
	va_list ap;
	int st;

	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	fflush(NULL);
	st = system(cmd);
	return st == -1 ? -1 : (WIFEXITED(st) ? WEXITSTATUS(st) : -1);
}

static int write_file(const char *path, const void *p, size_t n)
{
	FILE *f = fopen(path, "w");
	int ok;

	if (!f)
		return -1;
	ok = fwrite(p, 1, n, f) == n;
	return fclose(f) == 0 && ok ? 0 : -1;
}

static char *read_all(const char *path, size_t *n)
{
	FILE *f = fopen(path, "r");
	char *p = NULL;
	long len;

	if (!f)
		return NULL;
	if (!fseek(f, 0, SEEK_END) && (len = ftell(f)) > 0 &&
	    !fseek(f, 0, SEEK_SET) && (p = malloc((size_t)len)) &&
	    fread(p, 1, (size_t)len, f) != (size_t)len) {
		free(p);
		p = NULL;
	}
	if (p)
		*n = (size_t)len;
	fclose(f);
	return p;
}

/* fx/name, in a rotating static buffer */
static const char *at(const char *name)
{
	static char bufs[8][PATH_MAX];
	static int i;
	char *b = bufs[i++ & 7];

	snprintf(b, PATH_MAX, "%s/%s", fx, name);
	return b;
}

/* A C file holding one trail_meta section with these bytes. */
static int write_section_c(const char *path, const unsigned char *p, size_t n)
{
	FILE *f = fopen(path, "w");

	if (!f)
		return -1;
	fprintf(f, "__attribute__((section(\"trail_meta\"), used))\n"
		   "static const unsigned char sec[] = {");
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%u", i ? "," : "", p[i]);
	fprintf(f, "};\n");
	return fclose(f);
}

static size_t put(unsigned char *buf, size_t off, const void *p, size_t n)
{
	memcpy(buf + off, p, n);
	return off + n;
}

static int build_fixtures(void)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *inc = TRAIL_SOURCE_DIR "/include";
	unsigned char sec[256] = {0};
	size_t n = 0;

	if (write_file(at("ev.h"), ev_h, strlen(ev_h)) ||
	    write_file(at("main.c"), main_c, strlen(main_c)) ||
	    write_file(at("other.c"), other_c, strlen(other_c)) ||
	    write_file(at("tev.c"), tev_c, strlen(tev_c)) ||
	    write_file(at("plain.c"), plain_c, strlen(plain_c)))
		return -1;

	/* one, 16 bytes of padding, two, 8 bytes of padding, one again, 3 */
	n = put(sec, n, blob_one, sizeof(blob_one));
	n = put(sec, n + 16, blob_two, sizeof(blob_two));
	n = put(sec, n + 8, blob_one, sizeof(blob_one));
	if (write_section_c(at("pad.c"), sec, n + 3))
		return -1;
	/* one, 2 bytes of padding, a blob running past the end, two */
	memset(sec, 0, sizeof(sec));
	n = put(sec, 0, blob_one, sizeof(blob_one));
	n = put(sec, n + 2, blob_huge, sizeof(blob_huge));
	n = put(sec, n, blob_two, sizeof(blob_two));
	if (write_section_c(at("badpad.c"), sec, n))
		return -1;

	return run("cd '%s' && mkdir -p bin lib wrong hw && "
		   "%s -O2 -I'%s' -fPIC -shared tev.c -o libtev.so && "
		   "cp libtev.so lib/ && cp libtev.so hw/ && cp libtev.so wrong/ && "
		   "%s -O2 -I'%s' main.c other.c -L. -ltev "
		   "-Wl,--enable-new-dtags,-rpath,'$ORIGIN' -o app && "
		   "%s -O2 -I'%s' main.c other.c -L. -ltev "
		   "-Wl,--disable-new-dtags,-rpath,'${ORIGIN}/../lib' -o bin/app-rpath && "
		   "%s -O2 -I'%s' main.c other.c -L. -ltev -o app-norpath && "
		   "%s -O2 plain.c -o plain && "
		   "%s -c pad.c -o pad.o && %s -c badpad.c -o badpad.o && "
		   "ar rcs pad.a pad.o",
		   fx, cc, inc, cc, inc, cc, inc, cc, inc, cc, cc, cc);
}

__attribute__((constructor)) static void fixtures_init(void)
{
	const char *tmp = getenv("TRAIL_TEST_TMP");

	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	/* leaves room in fx for the fixture names */
	if (strlen(tmp) > 150)
		return;
	snprintf(fx, sizeof(fx), "%s/trail-elfscan-XXXXXX", tmp);
	if (!mkdtemp(fx)) {
		fx[0] = '\0';
		return;
	}
	if (build_fixtures()) {
		run("rm -rf '%s'", fx);
		fx[0] = '\0';
	}
}

/* The tests run in forked children that _exit(); only the parent gets
 * here. */
__attribute__((destructor)) static void fixtures_fini(void)
{
	if (fx[0])
		run("rm -rf '%s'", fx);
}

static void need_fixtures(void)
{
	if (!fx[0])
		SKIP("cannot build the fixtures with cc");
}

/* What a scan reported. */
struct seen {
	int n, calls, stop_at, ret;
	char name[16][64];
	char object[16][PATH_MAX];
	int nobj;
	char objs[64][PATH_MAX];
};

static int collect(const char *object, const void *blob, size_t size,
		   void *arg)
{
	struct seen *s = arg;
	struct trail_meta m;
	const char *why;

	s->calls++;
	CHECK(trail__meta_parse(blob, size, &m, &why) == 0);
	CHECK_EQ(m.size, size);
	if (s->n < 16) {
		snprintf(s->name[s->n], sizeof(s->name[0]), "%s:%s", m.provider,
			 m.name);
		snprintf(s->object[s->n], sizeof(s->object[0]), "%s", object);
		s->n++;
	}
	return s->stop_at && s->calls == s->stop_at ? s->ret : 0;
}

static int collect_obj(const char *object, void *arg)
{
	struct seen *s = arg;

	if (s->nobj < 64)
		snprintf(s->objs[s->nobj++], sizeof(s->objs[0]), "%s", object);
	return 0;
}

static int count(const struct seen *s, const char *name)
{
	int k = 0;

	for (int i = 0; i < s->n; i++)
		k += !strcmp(s->name[i], name);
	return k;
}

static const char *object_of(const struct seen *s, const char *name)
{
	for (int i = 0; i < s->n; i++)
		if (!strcmp(s->name[i], name))
			return s->object[i];
	return NULL;
}

static int ends_with(const char *s, const char *suffix)
{
	size_t a = s ? strlen(s) : 0, b = strlen(suffix);

	return s && a >= b && !strcmp(s + a - b, suffix);
}

static int objs_ending(const struct seen *s, const char *suffix)
{
	int k = 0;

	for (int i = 0; i < s->nobj; i++)
		k += ends_with(s->objs[i], suffix);
	return k;
}

static void check_three(const struct seen *s)
{
	CHECK_EQ(s->n, 3);
	CHECK_EQ(count(s, "app:request"), 1);
	CHECK_EQ(count(s, "app:reply"), 1);
	CHECK_EQ(count(s, "lib:work"), 1);
}

/* ------------------------------------------------------------------------
 * Tests.
 */
TEST(file_own_events)
{
	struct seen s = {0};
	char err[256] = "x";
	int r;

	need_fixtures();
	r = elfscan_file(at("app"), collect, &s, err, sizeof(err));
	CHECK_EQ(r, 2);
	CHECK_STR(err, "");
	CHECK_EQ(s.n, 2);
	CHECK_EQ(count(&s, "app:request"), 1); /* from main.c and other.c */
	CHECK_EQ(count(&s, "app:reply"), 1);
	CHECK_STR(s.object[0], at("app"));

	memset(&s, 0, sizeof(s));
	r = elfscan_file(at("libtev.so"), collect, &s, err, sizeof(err));
	CHECK_EQ(r, 1);
	CHECK_EQ(count(&s, "lib:work"), 1);
}

TEST(file_no_events)
{
	struct seen s = {0};
	char err[256];

	need_fixtures();
	CHECK_EQ(elfscan_file(at("plain"), collect, &s, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_EQ(s.calls, 0);
	CHECK_EQ(elfscan_program(at("plain"), collect, &s, err, sizeof(err)), 0);
	CHECK_STR(err, "");
}

TEST(file_errors)
{
	char path[PATH_MAX + 32], err[PATH_MAX + 64];
	unsigned char junk[4096];
	int r;

	need_fixtures();
	snprintf(path, sizeof(path), "%s/nonexistent", fx);
	CHECK_EQ(elfscan_file(path, collect, NULL, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, path) && strstr(err, "No such file or directory"));
	CHECK_EQ(elfscan_program(path, collect, NULL, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "No such file or directory"));
	CHECK_EQ(elfscan_file(fx, collect, NULL, err, sizeof(err)), -EISDIR);

	/* text, random bytes, empty */
	CHECK_EQ(elfscan_file(at("main.c"), collect, NULL, err, sizeof(err)),
		 -ENOEXEC);
	CHECK(ends_with(err, "main.c: not an ELF file"));
	srand(1);
	for (size_t i = 0; i < sizeof(junk); i++)
		junk[i] = (unsigned char)rand();
	CHECK(write_file(at("junk"), junk, sizeof(junk)) == 0);
	CHECK_EQ(elfscan_file(at("junk"), collect, NULL, err, sizeof(err)),
		 -ENOEXEC);
	CHECK_EQ(elfscan_program(at("junk"), collect, NULL, err, sizeof(err)),
		 -ENOEXEC);
	CHECK(write_file(at("empty"), "", 0) == 0);
	CHECK_EQ(elfscan_file(at("empty"), collect, NULL, err, sizeof(err)),
		 -ENOEXEC);
	/* an ELF magic and garbage */
	memcpy(junk, "\177ELF\002\001\001", 7);
	CHECK(write_file(at("junk"), junk, sizeof(junk)) == 0);
	r = elfscan_file(at("junk"), collect, NULL, err, sizeof(err));
	CHECK(r == 0 || (r < 0 && err[0]));
	/* a NULL error buffer is fine */
	CHECK_EQ(elfscan_file(path, collect, NULL, NULL, 0), -ENOENT);
}

/* Every prefix length (in steps) of the executable and of the library:
 * an error with a reason, or a count, and no crash (run under ASan). */
TEST(file_truncated)
{
	static const char *const names[] = {"app", "libtev.so"};
	char err[PATH_MAX + 64];

	need_fixtures();
	for (int k = 0; k < 2; k++) {
		size_t n;
		char *p = read_all(at(names[k]), &n);

		CHECK(p != NULL);
		if (!p)
			return;
		for (size_t len = 0; len < n; len += len < 128 ? 1 : 37) {
			struct seen s = {0};
			int r;

			CHECK(write_file(at("trunc"), p, len) == 0);
			r = elfscan_file(at("trunc"), collect, &s, err, sizeof(err));
			CHECK(r <= 2);
			if (r < 0)
				CHECK(err[0] != '\0');
			r = elfscan_program(at("trunc"), collect, &s, err, sizeof(err));
			CHECK(r <= 3);
			if (r < 0)
				CHECK(err[0] != '\0');
		}
		free(p);
	}
}

/* Random byte changes all over the executable. */
TEST(file_mutated)
{
	struct elfscan_opts o = {.sz = sizeof(o), .ld_library_path = "",
				 .ld_cache = ""};
	char err[PATH_MAX + 64];
	size_t n;
	char *orig, *p;

	need_fixtures();
	orig = read_all(at("app"), &n);
	CHECK(orig != NULL);
	if (!orig)
		return;
	p = malloc(n);
	srand(2);
	for (int iter = 0; iter < 400; iter++) {
		int flips = 1 + rand() % 8;
		int r;

		memcpy(p, orig, n);
		for (int i = 0; i < flips; i++) {
			/* half the changes in the headers, where it hurts */
			size_t at_ = rand() % 2 ? (size_t)rand() % 64
						: (size_t)rand() % n;
			p[at_] = (char)rand();
		}
		/* sometimes in the section header table, at the end */
		if (iter % 3 == 0)
			p[n - 1 - (size_t)rand() % (n < 2048 ? n : 2048)] = (char)rand();
		CHECK(write_file(at("mut"), p, n) == 0);
		r = elfscan_file(at("mut"), collect, &(struct seen){0}, err,
				 sizeof(err));
		CHECK(r <= 2);
		r = elfscan_program_opts(at("mut"), collect, &(struct seen){0}, &o,
					 err, sizeof(err));
		CHECK(r <= 3);
	}
	free(p);
	free(orig);
}

/* A bad blob stops the walk of its section: what came before counts. */
TEST(file_bad_blob)
{
	struct elfscan_opts o = {.sz = sizeof(o)};
	char err[PATH_MAX + 64];
	size_t n, first = 0, last = 0;
	int bad = -1, r, found = 0;
	char *p;

	need_fixtures();
	p = read_all(at("app"), &n);
	CHECK(p != NULL);
	if (!p)
		return;
	for (size_t i = 0; i + 4 <= n; i++)
		if (!memcmp(p + i, "TRM1", 4)) {
			if (!found++)
				first = i;
			last = i;
		}
	CHECK_EQ(found, 3); /* request twice, reply once */
	o.bad = &bad;

	p[first + 6] = 9; /* version */
	CHECK(write_file(at("badv"), p, n) == 0);
	r = elfscan_file_opts(at("badv"), collect, &(struct seen){0}, &o, err,
			      sizeof(err));
	CHECK_EQ(r, 0);
	CHECK_EQ(bad, 1);
	CHECK(strstr(err, "trail_meta+0x0: unsupported event description version"));

	p[first + 6] = 1;
	p[last + 4] = (char)0xff; /* size past the section */
	CHECK(write_file(at("badv"), p, n) == 0);
	bad = -1;
	r = elfscan_file_opts(at("badv"), collect, &(struct seen){0}, &o, err,
			      sizeof(err));
	CHECK(r == 1 || r == 2);
	CHECK_EQ(bad, 1);
	CHECK(strstr(err, "size out of bounds"));
	free(p);
}

/* The hand-made sections: padding skipped, duplicates dropped, and the
 * walk stops at a blob running past the end. Also archives. */
TEST(file_golden_sections)
{
	struct elfscan_opts o = {.sz = sizeof(o)};
	struct seen s = {0};
	char err[PATH_MAX + 64];
	int bad = -1;

	need_fixtures();
	o.bad = &bad;
	CHECK_EQ(elfscan_file_opts(at("pad.o"), collect, &s, &o, err, sizeof(err)), 2);
	CHECK_STR(err, "");
	CHECK_EQ(bad, 0);
	CHECK_EQ(s.n, 2);
	CHECK_STR(s.name[0], "pad:one");
	CHECK_STR(s.name[1], "pad:two");

	memset(&s, 0, sizeof(s));
	CHECK_EQ(elfscan_file_opts(at("badpad.o"), collect, &s, &o, err,
				   sizeof(err)), 1);
	CHECK_EQ(bad, 1);
	CHECK_STR(s.name[0], "pad:one");
	CHECK(ends_with(err, "badpad.o: trail_meta+0x12: event description size out of bounds"));

	memset(&s, 0, sizeof(s));
	CHECK_EQ(elfscan_file(at("pad.a"), collect, &s, err, sizeof(err)), 2);
	CHECK(ends_with(s.object[0], "pad.a(pad.o)"));
}

TEST(callback_stops)
{
	struct seen s = {.stop_at = 2, .ret = 42};
	char err[256];

	need_fixtures();
	CHECK_EQ(elfscan_program(at("app"), collect, &s, err, sizeof(err)), 42);
	CHECK_EQ(s.calls, 2);
	s = (struct seen){.stop_at = 1, .ret = -ENOMEM};
	CHECK_EQ(elfscan_file(at("app"), collect, &s, err, sizeof(err)), -ENOMEM);
	CHECK_EQ(s.calls, 1);
}

/* DT_RUNPATH $ORIGIN; each event once, the library's from the library. */
TEST(program_runpath)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = collect_obj,
				 .ld_library_path = ""};
	struct seen s = {0};
	char err[256];

	need_fixtures();
	CHECK_EQ(elfscan_program_opts(at("app"), collect, &s, &o, err,
				      sizeof(err)), 3);
	CHECK_STR(err, "");
	check_three(&s);
	CHECK_STR(object_of(&s, "app:request"), at("app"));
	CHECK(ends_with(object_of(&s, "lib:work"), "/libtev.so"));
	CHECK(!strstr(object_of(&s, "lib:work"), "/lib/libtev.so"));
	/* the executable first, each object once, libc found too */
	CHECK_STR(s.objs[0], at("app"));
	CHECK_EQ(objs_ending(&s, "/libtev.so"), 1);
	CHECK_EQ(objs_ending(&s, "/libc.so.6"), 1);
}

/* DT_RPATH (old dtags) with ${ORIGIN}/.. */
TEST(program_rpath)
{
	struct seen s = {0};
	char err[256];

	need_fixtures();
	CHECK_EQ(elfscan_program(at("bin/app-rpath"), collect, &s, err,
				 sizeof(err)), 3);
	check_three(&s);
	CHECK(ends_with(object_of(&s, "lib:work"), "/bin/../lib/libtev.so"));
}

/* LD_LIBRARY_PATH; a library of another machine is passed over; a library
 * not found is no error. */
TEST(program_ld_library_path)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = collect_obj};
	char err[256], llp[2 * PATH_MAX + 8];
	struct seen s = {0};
	size_t n;
	char *p;

	need_fixtures();
	p = read_all(at("wrong/libtev.so"), &n);
	CHECK(p && n > 20);
	if (!p)
		return;
	p[18] = (char)183; /* e_machine = EM_AARCH64 */
	p[19] = 0;
	CHECK(write_file(at("wrong/libtev.so"), p, n) == 0);
	free(p);

	snprintf(llp, sizeof(llp), "%s:%s", at("wrong"), fx);
	o.ld_library_path = llp;
	CHECK_EQ(elfscan_program_opts(at("app-norpath"), collect, &s, &o, err,
				      sizeof(err)), 3);
	check_three(&s);
	CHECK_STR(object_of(&s, "lib:work"), at("libtev.so"));

	memset(&s, 0, sizeof(s));
	o.ld_library_path = "";
	o.ld_cache = "";
	CHECK_EQ(elfscan_program_opts(at("app-norpath"), collect, &s, &o, err,
				      sizeof(err)), 2);
	CHECK_STR(err, "");
	CHECK_EQ(count(&s, "lib:work"), 0);
	/* libc from the default directories, without a cache */
	CHECK_EQ(objs_ending(&s, "/libc.so.6"), 1);
}

/* A loader cache built byte by byte. */
TEST(program_ld_cache)
{
	struct elfscan_opts o = {.sz = sizeof(o), .ld_library_path = ""};
	unsigned char c[4096] = {0};
	const char *key = "libtev.so";
	char hw[PATH_MAX], plain[PATH_MAX];
	uint32_t u, str = 48 + 3 * 24, k, v1, v2;
	struct seen s = {0};
	char err[256];
	size_t n;

	need_fixtures();
	snprintf(hw, sizeof(hw), "%s", at("hw/libtev.so"));
	snprintf(plain, sizeof(plain), "%s", at("libtev.so"));
	memcpy(c, "glibc-ld.so.cache", 17);    /* magic */
	memcpy(c + 17, "1.1", 3);              /* version */
	u = 3;
	memcpy(c + 20, &u, 4);                 /* nlibs */
	c[28] = 2;                             /* flags: little endian */
	/* strings: key, hwcap variant, plain path */
	k = str;
	n = put(c, str, key, strlen(key) + 1);
	v1 = (uint32_t)n;
	n = put(c, n, hw, strlen(hw) + 1);
	v2 = (uint32_t)n;
	n = put(c, n, plain, strlen(plain) + 1);
	u = (uint32_t)n - str;
	memcpy(c + 24, &u, 4);                 /* len_strings */
	/* entry 0: key out of the file (skipped) */
	u = 0x0303;
	memcpy(c + 48, &u, 4);                 /* flags: libc6, x86-64 */
	u = 0xfffffff0;
	memcpy(c + 52, &u, 4);                 /* key */
	memcpy(c + 56, &v2, 4);                /* value */
	/* entry 1: an hwcaps variant, only used without a plain entry */
	u = 0x0303;
	memcpy(c + 72, &u, 4);
	memcpy(c + 76, &k, 4);
	memcpy(c + 80, &v1, 4);
	c[95] = 0x40;                          /* hwcap: bit 62, extension */
	/* entry 2: the plain one */
	memcpy(c + 96, &u, 4);
	memcpy(c + 100, &k, 4);
	memcpy(c + 104, &v2, 4);
	CHECK(write_file(at("ld.so.cache"), c, n) == 0);

	o.ld_cache = at("ld.so.cache");
	CHECK_EQ(elfscan_program_opts(at("app-norpath"), collect, &s, &o, err,
				      sizeof(err)), 3);
	check_three(&s);
	CHECK_STR(object_of(&s, "lib:work"), plain);

	/* truncated caches: what is whole is used, the rest ignored (the
	 * hwcaps variant is complete before the plain path is) */
	for (size_t len = 0; len < n; len += 3) {
		int r;

		CHECK(write_file(at("ld.so.cache"), c, len) == 0);
		memset(&s, 0, sizeof(s));
		r = elfscan_program_opts(at("app-norpath"), collect, &s, &o,
					 err, sizeof(err));
		CHECK(r == 2 || (r == 3 && !strcmp(object_of(&s, "lib:work"), hw)));
	}
	u = 1000000;
	memcpy(c + 20, &u, 4); /* nlibs past the end */
	CHECK(write_file(at("ld.so.cache"), c, n) == 0);
	CHECK_EQ(elfscan_program_opts(at("app-norpath"), collect, &(struct seen){0},
				      &o, err, sizeof(err)), 2);
}

TEST(pid_running)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = collect_obj};
	struct seen s = {0};
	char err[256], buf[16] = "";
	int pfd[2], st;
	pid_t pid;
	ssize_t k;

	need_fixtures();
	CHECK(pipe(pfd) == 0);
	pid = fork();
	if (pid == 0) {
		dup2(pfd[1], 1);
		close(pfd[0]);
		execl(at("app"), "app", "sleep", (char *)NULL);
		_exit(127);
	}
	close(pfd[1]);
	k = read(pfd[0], buf, sizeof(buf) - 1);
	CHECK(k > 0 && !strncmp(buf, "ready", 5));
	if (k > 0) {
		CHECK_EQ(elfscan_pid_opts(pid, collect, &s, &o, err, sizeof(err)), 3);
		check_three(&s);
		CHECK_STR(object_of(&s, "app:request"), at("app"));
		CHECK_EQ(objs_ending(&s, "/libtev.so"), 1);
		CHECK_EQ(objs_ending(&s, "/libc.so.6"), 1);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &st, 0);
	close(pfd[0]);
}

TEST(pid_errors)
{
	char err[256];
	struct stat st;

	CHECK_EQ(elfscan_pid(INT_MAX, collect, NULL, err, sizeof(err)), -ESRCH);
	CHECK(strstr(err, "No such process"));
	CHECK_EQ(elfscan_pid(0, collect, NULL, err, sizeof(err)), -ESRCH);
	CHECK_EQ(elfscan_pid(-1, collect, NULL, err, sizeof(err)), -ESRCH);
	/* our own process: no events, but no error either */
	CHECK_EQ(elfscan_pid(getpid(), collect, NULL, err, sizeof(err)), 0);
	if (geteuid() != 0 && !stat("/proc/1", &st) && st.st_uid != geteuid()) {
		CHECK_EQ(elfscan_pid(1, collect, NULL, err, sizeof(err)), -EACCES);
		CHECK(err[0]);
	}
}

TEST_MAIN(CHECK_T(file_own_events), CHECK_T(file_no_events),
	  CHECK_T(file_errors), CHECK_T(file_truncated), CHECK_T(file_mutated),
	  CHECK_T(file_bad_blob), CHECK_T(file_golden_sections),
	  CHECK_T(callback_stops), CHECK_T(program_runpath),
	  CHECK_T(program_rpath), CHECK_T(program_ld_library_path),
	  CHECK_T(program_ld_cache), CHECK_T(pid_running), CHECK_T(pid_errors))
