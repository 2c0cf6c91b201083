/* SPDX-License-Identifier: MIT */
/*
 * fuzz-elf.c - libFuzzer target for the ELF scanners of the trail command:
 * the input is an ELF file (or an archive, or garbage), handed by path (a
 * memfd) to each scanner that takes a file:
 *   - elfscan_file_opts(): the trail_meta sections (src/session/elfscan.c);
 *   - elfscan_program_opts(): the same plus the dynamic section's
 *     DT_NEEDED/RPATH/RUNPATH walk, with no LD_LIBRARY_PATH and no loader
 *     cache (libraries the input names are still looked up on this
 *     machine's default directories: those are real files);
 *   - funcscan_file(): the patchable function entries, relocations and
 *     symbols (src/session/funcscan.c);
 *   - symtab_load(): the function symbols (src/recorder/symtab.c).
 *
 * Checked besides memory safety, from the headers' promises: every blob
 * reported parses with its size; error strings are NUL-terminated (and
 * set on an error); sites
 * are sorted and distinct, with nops and readable names; symbols are sorted,
 * one per address, their names inside the names buffer.
 */
#include <elf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "common/meta.h"
#include "elfscan.h"
#include "funcscan.h"
#include "fuzz.h"
#include "symtab.h"

static int on_blob(const char *object, const void *blob, size_t size, void *arg)
{
	struct trail_meta m;
	const char *why;

	FUZZ_ASSERT(object && *object);
	FUZZ_ASSERT(trail__meta_parse(blob, size, &m, &why) == 0 && m.size == size);
	++*(int *)arg;
	return 0;
}

static int on_object(const char *object, void *arg)
{
	(void)arg;
	FUZZ_ASSERT(object && *object);
	return 0;
}

static void check_err(int r, const char *err, size_t n)
{
	FUZZ_ASSERT(memchr(err, 0, n));
	FUZZ_ASSERT(r >= 0 || *err);
}

static void scan_meta(const char *path)
{
	struct elfscan_opts o = {.sz = sizeof(o), .object_cb = on_object,
				 .ld_library_path = "", .ld_cache = ""};
	char err[256];
	int bad = 0, n = 0, r;

	o.bad = &bad;
	memset(err, 'x', sizeof(err));
	r = elfscan_file_opts(path, on_blob, &n, &o, err, sizeof(err));
	check_err(r, err, sizeof(err));
	FUZZ_ASSERT(r < 0 || r == n);
	FUZZ_ASSERT(bad >= 0);

	n = 0;
	memset(err, 'x', sizeof(err));
	r = elfscan_program_opts(path, on_blob, &n, &o, err, sizeof(err));
	check_err(r, err, sizeof(err));
	FUZZ_ASSERT(r < 0 || r == n);
}

static void scan_funcs(const char *path)
{
	struct fscan f;
	char err[256];
	int r;

	memset(err, 'x', sizeof(err));
	r = funcscan_file(path, &f, err, sizeof(err));
	check_err(r, err, sizeof(err));
	if (r) {
		FUZZ_ASSERT(f.n == 0 && !f.sites);
	} else {
		FUZZ_ASSERT(f.n <= f.entries);
		for (size_t i = 0; i < f.n; i++) {
			const struct fsite *s = &f.sites[i];

			FUZZ_ASSERT(s->nops > 0);
			FUZZ_ASSERT(strlen(s->name) < 1u << 20 &&
				    strlen(s->symbol) < 1u << 20);
			FUZZ_ASSERT(!*s->name == !*s->symbol);
			if (i && f.e_type == ET_REL)
				FUZZ_ASSERT(s[-1].shndx < s->shndx ||
					    (s[-1].shndx == s->shndx && s[-1].addr < s->addr));
			else if (i)
				FUZZ_ASSERT(s[-1].addr < s->addr);
		}
	}
	funcscan_free(&f);
}

static void scan_symbols(const char *path)
{
	struct symtab t;
	char err[256];
	int r;

	memset(err, 'x', sizeof(err));
	r = symtab_load(path, &t, err, sizeof(err));
	if (r) /* err is only written on an error */
		check_err(r, err, sizeof(err));
	else
		for (size_t i = 0; i < t.n; i++) {
			FUZZ_ASSERT(t.syms[i].name < t.names_len);
			FUZZ_ASSERT(memchr(t.names + t.syms[i].name, 0,
					   t.names_len - t.syms[i].name));
			FUZZ_ASSERT(!i || t.syms[i - 1].addr < t.syms[i].addr);
		}
	symtab_free(&t);
}

int fuzz_elf_one(const uint8_t *data, size_t size)
{
	char path[64];
	int fd = fuzz_memfd(data, size, path, sizeof(path));

	if (fd < 0)
		return 0;
	scan_meta(path);
	scan_funcs(path);
	scan_symbols(path);
	close(fd);
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_elf_one(data, size);
}
#endif
