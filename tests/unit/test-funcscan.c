/* SPDX-License-Identifier: MIT */
/*
 * test-funcscan.c - patchable function entries read from ELF files
 * (src/session/funcscan.c). The fixtures are built once, before the tests
 * fork, by running cc (and c++, and clang when there is one) into a
 * temporary directory; every expected address is computed here from the
 * fixture's own symbol table, never written down:
 *
 *   pie-O0, pie-O2    fs.c, -fpatchable-function-entry=5: main, pub_one,
 *                     pub_three and the static stat_two, at their entry
 *   exec              -no-pie (ET_EXEC: absolute addresses in the section)
 *   relr              -z pack-relative-relocs when the linker has it
 *   split             =5,2: 2 nops before the symbol, 3 at its entry
 *   cf                -fcf-protection=full: endbr64, then the 5 nops
 *   split-cf          both: 2 nops, the symbol, endbr64, 3 nops
 *   libfs.so          fslib.c (exported lib_add, lib_twice, static lib_mix)
 *   libfs-stripped.so the same, strip --strip-all: only .dynsym names
 *   cxx               a namespace, a template member, overloads
 *   noflag            built without the option: no sites
 *   fs.o, fs-fs.o     relocatable objects (-ffunction-sections for fs-fs.o)
 *   clang, clang-split  clang's multi-byte nops (skipped without clang)
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "funcscan.h"

#ifndef TRAIL_SOURCE_DIR
#error "build with -DTRAIL_SOURCE_DIR=\"<source tree>\""
#endif

static char fx[256];   /* fixture directory, "" if the build failed */
static int have_clang; /* clang fixtures built */
static int have_relr;  /* the linker knows -z pack-relative-relocs */

/* ------------------------------------------------------------------------
 * Fixture sources.
 */
#define KEEP_C                                                                \
	"#ifdef __clang__\n"                                                  \
	"#define KEEP __attribute__((noinline, used))\n"                      \
	"#else\n"                                                             \
	"#define KEEP __attribute__((noipa, used))\n"                         \
	"#endif\n"

static const char fs_c[] =
	KEEP_C
	"KEEP int pub_one(int x) { return x + 1; }\n"
	"KEEP static int stat_two(int x) { return x * 2 + 3; }\n"
	"KEEP int pub_three(int x) { return stat_two(x) + pub_one(x); }\n"
	"int main(int argc, char **argv)\n"
	"{\n"
	"\t(void)argv;\n"
	"\treturn pub_three(argc) == 42;\n"
	"}\n";

static const char fslib_c[] =
	KEEP_C
	"KEEP static int lib_mix(int x) { return x ^ 0x5a; }\n"
	"KEEP int lib_add(int a, int b) { return a + lib_mix(b); }\n"
	"KEEP int lib_twice(int a) { return lib_add(a, a); }\n";

static const char cxx_cc[] =
	KEEP_C
	"namespace geo {\n"
	"template <typename T> struct Box {\n"
	"\tT v;\n"
	"\tKEEP T get() const { return v; }\n"
	"};\n"
	"KEEP int area(int w, int h) { return w * h; }\n"
	"KEEP double area(double w, double h) { return w * h; }\n"
	"}\n"
	"int main(int argc, char **)\n"
	"{\n"
	"\tgeo::Box<long> b{argc};\n"
	"\treturn geo::area(argc, 2) + (int)geo::area(1.5, (double)argc) +\n"
	"\t       (int)b.get();\n"
	"}\n";

/* the functions of fs.c, all built with the option */
static const char *const fs_funcs[] = {"main", "pub_one", "stat_two",
				       "pub_three"};
#define NFS (sizeof(fs_funcs) / sizeof(fs_funcs[0]))

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

static int build_fixtures(void)
{
	const char *cc = getenv("CC") ? getenv("CC") : "cc";
	const char *cxx = getenv("CXX") ? getenv("CXX") : "c++";
	const char *pfe = "-fpatchable-function-entry=5";

	if (write_file(at("fs.c"), fs_c, strlen(fs_c)) ||
	    write_file(at("fslib.c"), fslib_c, strlen(fslib_c)) ||
	    write_file(at("cxx.cc"), cxx_cc, strlen(cxx_cc)))
		return -1;
	if (run("cd '%s' && "
		"%s -O0 %s -fPIE -pie fs.c -o pie-O0 && "
		"%s -O2 %s -fPIE -pie fs.c -o pie-O2 && "
		"%s -O2 %s -fno-pie -no-pie fs.c -o exec && "
		"%s -O2 -fpatchable-function-entry=5,2 -fcf-protection=none fs.c -o split && "
		"%s -O2 %s -fcf-protection=full fs.c -o cf && "
		"%s -O2 -fpatchable-function-entry=5,2 -fcf-protection=full fs.c -o split-cf && "
		"%s -O2 %s -fPIC -shared fslib.c -o libfs.so && "
		"strip --strip-all -o libfs-stripped.so libfs.so && "
		"%s -O2 %s cxx.cc -o cxx && "
		"%s -O2 fs.c -o noflag && "
		"strip --strip-all -o noflag-stripped noflag && "
		"%s -O2 %s -c fs.c -o fs.o && "
		"%s -O2 %s -ffunction-sections -c fs.c -o fs-fs.o && "
		"ar rcs fs.a fs.o",
		fx, cc, pfe, cc, pfe, cc, pfe, cc, cc, pfe, cc, cc, pfe, cxx, pfe,
		cc, cc, pfe, cc, pfe))
		return -1;
	/* optional: a newer linker, another compiler */
	have_relr = !run("cd '%s' && %s -O2 %s -fPIE -pie "
			 "-Wl,-z,pack-relative-relocs fs.c -o relr 2>/dev/null && "
			 "readelf -SW relr | grep -q RELR",
			 fx, cc, pfe);
	have_clang = !run("cd '%s' && command -v clang >/dev/null && "
			  "clang -O2 %s fs.c -o clang 2>/dev/null && "
			  "clang -O2 -fpatchable-function-entry=5,2 -fcf-protection=none "
			  "fs.c -o clang-split 2>/dev/null",
			  fx, pfe);
	return 0;
}

__attribute__((constructor)) static void fixtures_init(void)
{
	const char *tmp = getenv("TRAIL_TEST_TMP");

	if (!tmp || !*tmp)
		tmp = getenv("TMPDIR");
	if (!tmp || !*tmp)
		tmp = "/tmp";
	if (strlen(tmp) > 150)
		return;
	snprintf(fx, sizeof(fx), "%s/trail-funcscan-XXXXXX", tmp);
	if (!mkdtemp(fx)) {
		fx[0] = '\0';
		return;
	}
	if (build_fixtures()) {
		run("rm -rf '%s'", fx);
		fx[0] = '\0';
	}
}

/* Only the parent gets here: the tests run in children that _exit(). */
__attribute__((destructor)) static void fixtures_fini(void)
{
	if (fx[0])
		run("rm -rf '%s'", fx);
}

static void need_fixtures(void)
{
#ifndef __x86_64__
	SKIP("x86-64 only");
#endif
	if (!fx[0])
		SKIP("cannot build the fixtures with cc");
}

/*
 * A symbol's value and section, read here with libelf from .symtab, else
 * .dynsym: the reference every expected address is computed from.
 */
struct symv {
	uint64_t value;
	uint32_t shndx;
};

static int sym_lookup(const char *path, const char *name, struct symv *v)
{
	int fd = open(path, O_RDONLY), found = 0;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	for (int pass = 0; elf && pass < 2 && !found; pass++) {
		Elf_Scn *scn = NULL;

		while (!found && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			Elf_Data *d;

			if (!gelf_getshdr(scn, &sh) ||
			    sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) ||
			    !(d = elf_getdata(scn, NULL)))
				continue;
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;
				const char *n;

				if (!gelf_getsym(d, (int)i, &s))
					break;
				n = elf_strptr(elf, sh.sh_link, s.st_name);
				if (n && !strcmp(n, name) &&
				    GELF_ST_TYPE(s.st_info) == STT_FUNC) {
					v->value = s.st_value;
					v->shndx = s.st_shndx;
					found = 1;
					break;
				}
			}
		}
	}
	elf_end(elf);
	close(fd);
	return found;
}

/* n bytes of the file at virtual address addr (ET_REL: offset in section
 * shndx), through the section headers. */
static int bytes_at(const char *path, uint64_t addr, uint32_t shndx,
		    unsigned char *buf, size_t n)
{
	int fd = open(path, O_RDONLY), ok = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	Elf *elf;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && gelf_getehdr(elf, &eh))
		while (!ok && (scn = elf_nextscn(elf, scn))) {
			GElf_Shdr sh;
			uint64_t lo;

			if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS ||
			    !(sh.sh_flags & SHF_EXECINSTR))
				continue;
			if (eh.e_type == ET_REL && elf_ndxscn(scn) != shndx)
				continue;
			lo = eh.e_type == ET_REL ? 0 : sh.sh_addr;
			if (addr >= lo && addr + n <= lo + sh.sh_size)
				ok = pread(fd, buf, n, (off_t)(sh.sh_offset + addr - lo)) ==
				     (ssize_t)n;
		}
	elf_end(elf);
	close(fd);
	return ok;
}

static const struct fsite *by_name(const struct fscan *f, const char *name)
{
	for (size_t i = 0; i < f->n; i++)
		if (!strcmp(f->sites[i].name, name))
			return &f->sites[i];
	return NULL;
}

static const struct fsite *by_addr(const struct fscan *f, uint64_t addr)
{
	for (size_t i = 0; i < f->n; i++)
		if (f->sites[i].addr == addr)
			return &f->sites[i];
	return NULL;
}

/* Sorted by (shndx for ET_REL, addr), no duplicates. */
static void check_sorted(const struct fscan *f)
{
	for (size_t i = 1; i < f->n; i++) {
		const struct fsite *a = &f->sites[i - 1], *b = &f->sites[i];

		if (f->e_type == ET_REL && a->shndx != b->shndx)
			CHECK(a->shndx < b->shndx);
		else
			CHECK(a->addr < b->addr);
	}
}

/* gcc's area; clang's (one nopl 0x8(%rax,%rax,1)); 2 bytes before an
 * endbr64 (=5,2 with -fcf-protection) */
static const unsigned char nop5[] = {0x90, 0x90, 0x90, 0x90, 0x90};
static const unsigned char clang5[] = {0x0f, 0x1f, 0x44, 0x00, 0x08};
static const unsigned char nop2_endbr[] = {0x90, 0x90, 0xf3, 0x0f, 0x1e, 0xfa};
static const unsigned char endbr64[] = {0xf3, 0x0f, 0x1e, 0xfa};
/* clang =5,2: 2 nops, the symbol, nopl (%rax) */
static const unsigned char clang_split[] = {0x90, 0x90, 0x0f, 0x1f, 0x00};
#define NOP5 nop5, sizeof(nop5)

/*
 * Every function of fs.c has exactly one site: at its symbol + offset
 * (-2 for =5,2, +4 after an endbr64), with nops/before as given; and the
 * bytes there in the file are want (read here, through the section
 * headers).
 */
static void check_fs(const char *file, int64_t offset, uint32_t nops,
		     uint32_t before, uint16_t e_type, const unsigned char *want,
		     size_t wantlen)
{
	char err[PATH_MAX + 64];
	struct fscan f;

	CHECK_EQ(funcscan_file(at(file), &f, err, sizeof(err)), 0);
	CHECK_STR(err, "");
	CHECK_STR(f.object, at(file));
	CHECK_EQ(f.e_type, e_type);
	CHECK_EQ(f.n, NFS);
	CHECK_EQ(f.entries, NFS);
	CHECK_EQ(f.skipped, 0);
	check_sorted(&f);
	for (size_t i = 0; i < NFS; i++) {
		const struct fsite *s = by_name(&f, fs_funcs[i]);
		struct symv v = {0};
		unsigned char b[8];

		CHECK(sym_lookup(at(file), fs_funcs[i], &v));
		CHECK(s != NULL);
		if (!s) {
			fprintf(stderr, "  %s: no site named %s\n", file, fs_funcs[i]);
			continue;
		}
		CHECK_EQ(s->addr, v.value + (uint64_t)offset);
		CHECK_EQ(s->func, v.value);
		CHECK_EQ(s->nops, nops);
		CHECK_EQ(s->before, before);
		CHECK_STR(s->symbol, fs_funcs[i]);
		CHECK_EQ(funcscan_usable(s), before == 0 && nops >= 5);
		if (e_type == ET_REL)
			CHECK_EQ(s->shndx, v.shndx);
		CHECK(bytes_at(at(file), s->addr, s->shndx, b, wantlen));
		CHECK(!memcmp(b, want, wantlen));
		if (offset == 4) {
			CHECK(bytes_at(at(file), v.value, s->shndx, b, 4));
			CHECK(!memcmp(b, endbr64, 4));
		}
	}
	funcscan_free(&f);
	funcscan_free(&f); /* NULL-safe, idempotent */
}

/* ------------------------------------------------------------------------
 * The tests.
 */
TEST(pie_O0)
{
	need_fixtures();
	check_fs("pie-O0", 0, 5, 0, ET_DYN, NOP5);
}

TEST(pie_O2)
{
	need_fixtures();
	check_fs("pie-O2", 0, 5, 0, ET_DYN, NOP5);
}

/* ET_EXEC: the addresses are in the section, no relocation */
TEST(exec_no_pie)
{
	need_fixtures();
	check_fs("exec", 0, 5, 0, ET_EXEC, NOP5);
}

/* DT_RELR: the addresses are in the section too, relocated in place */
TEST(pie_relr)
{
	need_fixtures();
	if (!have_relr)
		SKIP("the linker has no -z pack-relative-relocs");
	check_fs("relr", 0, 5, 0, ET_DYN, NOP5);
}

/* =5,2: the area starts 2 bytes before the symbol and runs through it */
TEST(nops_before_entry)
{
	need_fixtures();
	check_fs("split", -2, 5, 2, ET_DYN, NOP5);
}

/* endbr64 first, then the area */
TEST(cf_protection)
{
	need_fixtures();
	check_fs("cf", 4, 5, 0, ET_DYN, NOP5);
}

/* =5,2 with endbr64: 2 nops, the symbol, endbr64, 3 nops: only the 2
 * bytes before the entry are the site's, and it cannot be hooked */
TEST(cf_protection_nops_before_entry)
{
	need_fixtures();
	check_fs("split-cf", -2, 2, 2, ET_DYN, nop2_endbr,
		 sizeof(nop2_endbr));
}

/* ET_REL: sites from .rela__patchable_function_entries against section
 * symbols; offsets in their section */
TEST(relocatable_object)
{
	need_fixtures();
	check_fs("fs.o", 0, 5, 0, ET_REL, NOP5);
	check_fs("fs-fs.o", 0, 5, 0, ET_REL, NOP5);
}

/* clang: one 5-byte nop (0f 1f 44 00 08), and for =5,2 two 0x90 then a
 * 3-byte nop at the entry */
TEST(clang_multibyte_nops)
{
	need_fixtures();
	if (!have_clang)
		SKIP("no clang");
	check_fs("clang", 0, 5, 0, ET_DYN, clang5, sizeof(clang5));
	check_fs("clang-split", -2, 5, 2, ET_DYN, clang_split,
		 sizeof(clang_split));
}

/* A shared object: exported and static functions, all named from .symtab;
 * stripped, the same sites, only the exported ones named */
TEST(shared_and_stripped)
{
	static const char *const lib[] = {"lib_add", "lib_twice", "lib_mix"};
	struct fscan f, g;
	char err[PATH_MAX + 64];

	need_fixtures();
	CHECK_EQ(funcscan_file(at("libfs.so"), &f, err, sizeof(err)), 0);
	CHECK_EQ(funcscan_file(at("libfs-stripped.so"), &g, err, sizeof(err)), 0);
	CHECK_EQ(f.e_type, ET_DYN);
	CHECK_EQ(f.n, 3);
	CHECK_EQ(g.n, 3);
	check_sorted(&f);
	check_sorted(&g);
	for (size_t i = 0; i < 3; i++) {
		const struct fsite *s = by_name(&f, lib[i]), *t;
		struct symv v = {0}, dv = {0};
		int exported = i < 2;

		CHECK(sym_lookup(at("libfs.so"), lib[i], &v));
		CHECK(s && s->addr == v.value && s->func == v.value && s->nops == 5);
		if (!s)
			continue;
		/* strip moves no code */
		t = by_addr(&g, s->addr);
		CHECK(t != NULL);
		if (!t)
			continue;
		CHECK_EQ(t->nops, 5);
		CHECK_EQ(sym_lookup(at("libfs-stripped.so"), lib[i], &dv), exported);
		if (exported) {
			CHECK_STR(t->name, lib[i]);
			CHECK_EQ(t->func, dv.value);
		} else {
			CHECK_STR(t->name, "");
			CHECK_STR(t->symbol, "");
			CHECK_EQ(t->func, 0);
		}
	}
	funcscan_free(&f);
	funcscan_free(&g);
}

TEST(cxx_demangled)
{
	static const struct {
		const char *mangled, *name;
	} want[] = {
		{"_ZN3geo4areaEii", "geo::area(int, int)"},
		{"_ZN3geo4areaEdd", "geo::area(double, double)"},
		{"_ZNK3geo3BoxIlE3getEv", "geo::Box<long>::get() const"},
		{"main", "main"},
	};
	char err[PATH_MAX + 64];
	struct fscan f;

	need_fixtures();
	CHECK_EQ(funcscan_file(at("cxx"), &f, err, sizeof(err)), 0);
	CHECK_EQ(f.n, 4);
	for (size_t i = 0; i < 4; i++) {
		const struct fsite *s = by_name(&f, want[i].name);
		struct symv v = {0};

		CHECK(sym_lookup(at("cxx"), want[i].mangled, &v));
		CHECK(s != NULL);
		if (!s) {
			fprintf(stderr, "  no site named %s\n", want[i].name);
			continue;
		}
		CHECK_STR(s->symbol, want[i].mangled);
		CHECK_EQ(s->addr, v.value);
	}
	funcscan_free(&f);
}

TEST(demangle)
{
	static const struct {
		const char *in, *out;
	} rows[] = {
		{"_ZN3geo4areaEii", "geo::area(int, int)"},
		{"_ZNK3geo3BoxIlE3getEv.isra.0", "geo::Box<long>::get() const [clone .isra.0]"},
		{"_ZN3geo4areaEdd@@V_1.0", "geo::area(double, double)@@V_1.0"},
		{"memcpy@GLIBC_2.2.5", "memcpy@GLIBC_2.2.5"},
		{"main", "main"},
		{"_Z", "_Z"},
		{"_Znotmangled!", "_Znotmangled!"},
		{"", ""},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *d = funcscan_demangle(rows[i].in);

		CHECK_STR(d, rows[i].out);
		free(d);
	}
}

/* A program built without the option: its functions, whose entries a
 * jump can displace (src/arch reloc.c) */
TEST(no_sites)
{
	char err[PATH_MAX + 64];
	struct fscan f;

	need_fixtures();
	CHECK_EQ(funcscan_file(at("noflag"), &f, err, sizeof(err)), 0);
	CHECK_EQ(f.reloc, 1);
	CHECK(f.n > 0);
	CHECK(f.entries >= f.n);
	for (size_t i = 0; i < f.n; i++) {
		/* whole instructions displaced for a jump; one (a breakpoint);
		 * or fewer than 5 bytes when the function is that short */
		CHECK(f.sites[i].reloc >= 1);
		CHECK(!f.sites[i].trap || f.sites[i].reloc <= 15);
		CHECK(strcmp(f.sites[i].symbol, "_start") != 0);
	}
	CHECK(f.traps <= f.n);
	CHECK_STR(err, "");
	/* stripped: the same entries, from .eh_frame_hdr, named sub_<address>
	 * (the crt files' functions too, _start not: no return address on
	 * its stack) */
	{
		struct fscan g;
		size_t found = 0;

		CHECK_EQ(funcscan_file(at("noflag-stripped"), &g, err, sizeof(err)), 0);
		CHECK_EQ(g.reloc, 1);
		CHECK(g.n >= f.n);
		for (size_t i = 0; i < g.n; i++) {
			char sub[32];

			snprintf(sub, sizeof(sub), "sub_%" PRIx64, g.sites[i].addr);
			CHECK_STR(g.sites[i].symbol, sub);
			CHECK_STR(g.sites[i].name, sub);
			for (size_t k = 0; k < f.n; k++)
				found += g.sites[i].addr == f.sites[k].addr;
		}
		CHECK_EQ(found, f.n);
		funcscan_free(&g);
	}
	funcscan_free(&f);
}

TEST(file_errors)
{
	static const char garbage[] = "\x7f" "ELF this is not really an ELF file";
	char err[PATH_MAX + 64];
	struct fscan f;

	need_fixtures();
	CHECK_EQ(funcscan_file(at("missing"), &f, err, sizeof(err)), -ENOENT);
	CHECK(strstr(err, "No such file"));
	CHECK(f.n == 0 && f.sites == NULL);
	funcscan_free(&f);
	CHECK_EQ(funcscan_file(fx, &f, err, sizeof(err)), -EISDIR);
	funcscan_free(&f);
	CHECK_EQ(funcscan_file(at("fs.c"), &f, err, sizeof(err)), -ENOEXEC);
	CHECK(strstr(err, "not an ELF file"));
	funcscan_free(&f);
	CHECK_EQ(funcscan_file(at("fs.a"), &f, err, sizeof(err)), -ENOEXEC);
	CHECK(strstr(err, "archive"));
	funcscan_free(&f);
	CHECK_EQ(funcscan_file("/dev/null", &f, err, sizeof(err)), -ENOEXEC);
	funcscan_free(&f);
	CHECK(write_file(at("empty"), "", 0) == 0);
	CHECK(funcscan_file(at("empty"), &f, err, sizeof(err)) < 0);
	CHECK(err[0]);
	funcscan_free(&f);
	CHECK(write_file(at("garbage"), garbage, sizeof(garbage)) == 0);
	CHECK(funcscan_file(at("garbage"), &f, err, sizeof(err)) < 0);
	CHECK(err[0]);
	funcscan_free(&f);
	/* no error buffer at all */
	CHECK_EQ(funcscan_file(at("missing"), &f, NULL, 0), -ENOENT);
	funcscan_free(&f);
	funcscan_free(NULL);
}

/* Sites of the result of a damaged file: plausible, or none. */
static void check_sane(const struct fscan *f, size_t max_n)
{
	CHECK(f->n <= max_n);
	check_sorted(f);
	for (size_t i = 0; i < f->n; i++) {
		CHECK(f->sites[i].nops >= 1 && f->sites[i].nops <= 64);
		CHECK(f->sites[i].name && f->sites[i].symbol);
	}
}

TEST(file_truncated)
{
	static const char *const names[] = {"pie-O2", "libfs.so", "fs.o"};
	char err[PATH_MAX + 64];

	need_fixtures();
	for (int k = 0; k < 3; k++) {
		size_t n;
		char *p = read_all(at(names[k]), &n);

		CHECK(p != NULL);
		if (!p)
			return;
		for (size_t len = 0; len < n; len += len < 256 ? 1 : 13) {
			struct fscan f;
			int r;

			CHECK(write_file(at("trunc"), p, len) == 0);
			r = funcscan_file(at("trunc"), &f, err, sizeof(err));
			if (r < 0)
				CHECK(err[0] != '\0');
			check_sane(&f, NFS);
			funcscan_free(&f);
		}
		free(p);
	}
}

/* Random byte changes all over the files. */
TEST(file_mutated)
{
	static const char *const names[] = {"pie-O2", "exec", "fs.o", "split"};
	char err[PATH_MAX + 64];

	need_fixtures();
	srand(3);
	for (int k = 0; k < 4; k++) {
		size_t n;
		char *orig = read_all(at(names[k]), &n), *p;

		CHECK(orig != NULL);
		if (!orig)
			return;
		p = malloc(n);
		for (int iter = 0; iter < 300; iter++) {
			int flips = 1 + rand() % 8;
			struct fscan f;

			memcpy(p, orig, n);
			for (int i = 0; i < flips; i++) {
				/* half in the ELF header, half anywhere; the
				 * section header table sits at the end */
				size_t o = rand() % 2 ? (size_t)rand() % 64
						      : (size_t)rand() % n;
				p[o] = (char)rand();
			}
			if (iter % 3 == 0)
				p[n - 1 - (size_t)rand() % (n < 2048 ? n : 2048)] = (char)rand();
			CHECK(write_file(at("mut"), p, n) == 0);
			if (funcscan_file(at("mut"), &f, err, sizeof(err)) < 0)
				CHECK(err[0] != '\0');
			check_sane(&f, 64);
			funcscan_free(&f);
		}
		free(p);
		free(orig);
	}
}

/* A site whose bytes were patched (a call written over the nops) is
 * skipped and counted, the others are kept. */
TEST(patched_site_skipped)
{
	static const unsigned char call[] = {0xe8, 0x11, 0x22, 0x33, 0x44};
	char err[PATH_MAX + 64];
	struct fscan f, g;
	size_t n;
	char *p;

	need_fixtures();
	CHECK_EQ(funcscan_file(at("pie-O2"), &f, err, sizeof(err)), 0);
	p = read_all(at("pie-O2"), &n);
	CHECK(p != NULL && f.n == NFS);
	if (p && f.n == NFS) {
		const struct fsite *s = by_name(&f, "pub_one");
		Elf_Scn *scn;
		GElf_Shdr sh;
		Elf *elf;
		int fd;

		CHECK(s != NULL);
		CHECK(write_file(at("patched"), p, n) == 0);
		fd = open(at("patched"), O_RDWR);
		CHECK(fd >= 0);
		if (s && fd >= 0) {
			/* the site's file offset, from its section's header */
			elf_version(EV_CURRENT);
			elf = elf_begin(fd, ELF_C_READ, NULL);
			scn = elf_getscn(elf, s->shndx);
			CHECK(scn && gelf_getshdr(scn, &sh));
			if (scn && gelf_getshdr(scn, &sh))
				CHECK(pwrite(fd, call, 5, (off_t)(sh.sh_offset + s->addr -
								  sh.sh_addr)) == 5);
			elf_end(elf);
		}
		if (fd >= 0)
			close(fd);
		CHECK_EQ(funcscan_file(at("patched"), &g, err, sizeof(err)), 0);
		CHECK_EQ(g.n, NFS - 1);
		CHECK_EQ(g.skipped, 1);
		CHECK_EQ(g.entries, NFS);
		CHECK(by_name(&g, "pub_one") == NULL);
		CHECK(by_name(&g, "pub_three") != NULL);
		funcscan_free(&g);
	}
	free(p);
	funcscan_free(&f);
}

TEST_MAIN(CHECK_T(pie_O0), CHECK_T(pie_O2), CHECK_T(exec_no_pie),
	  CHECK_T(pie_relr), CHECK_T(nops_before_entry), CHECK_T(cf_protection),
	  CHECK_T(cf_protection_nops_before_entry), CHECK_T(relocatable_object),
	  CHECK_T(clang_multibyte_nops), CHECK_T(shared_and_stripped),
	  CHECK_T(cxx_demangled), CHECK_T(demangle), CHECK_T(no_sites),
	  CHECK_T(file_errors), CHECK_T(file_truncated), CHECK_T(file_mutated),
	  CHECK_T(patched_site_skipped))
