/* SPDX-License-Identifier: MIT */
/*
 * fuzz-ldcache.c - libFuzzer target for the loader cache reader of
 * elfscan_program() (src/session/elfscan.c: cache_load, cache_search): the
 * input is an /etc/ld.so.cache file, given as elfscan_opts.ld_cache while
 * scanning a tiny executable made here that needs FUZZ_LIB. The seeds
 * (tests/fuzz/make-corpus.sh) map FUZZ_LIB to paths that do not exist, so
 * a run reads no other file unless the fuzzer writes a real path.
 *
 * Checked besides memory safety: the scan of the executable succeeds
 * whatever the cache holds.
 */
#include <gelf.h>
#include <libelf.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include "elfscan.h"
#include "fuzz.h"

#define FUZZ_LIB "libtrailfuzz.so.1"

/*
 * An ELF64 x86-64 ET_DYN with section headers only: .dynstr, .dynamic
 * (DT_NEEDED FUZZ_LIB) and .shstrtab, in a memfd kept open for the whole
 * run. Returns its /proc/self/fd path, or NULL.
 */
static const char *tiny_exe(void)
{
	static char path[64];
	static const char dynstr[] = "\0" FUZZ_LIB;
	static const char shstr[] = "\0.dynstr\0.dynamic\0.shstrtab";
	static Elf64_Dyn dyn[] = {{DT_NEEDED, {1}}, {DT_NULL, {0}}};
	static const struct {
		const void *buf;
		size_t size;
		Elf_Type type;
		Elf64_Word sh_type, sh_name;
		size_t entsize;
	} secs[] = {
		{dynstr, sizeof(dynstr), ELF_T_BYTE, SHT_STRTAB, 1, 0},
		{dyn, sizeof(dyn), ELF_T_DYN, SHT_DYNAMIC, 9, sizeof(Elf64_Dyn)},
		{shstr, sizeof(shstr), ELF_T_BYTE, SHT_STRTAB, 18, 0},
	};
	Elf64_Ehdr *eh;
	Elf *e;
	int fd;

	if (path[0])
		return path;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return NULL;
	fd = memfd_create("fuzz-exe", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	e = elf_begin(fd, ELF_C_WRITE, NULL);
	if (!e || !(eh = elf64_newehdr(e)))
		goto fail;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	for (size_t i = 0; i < sizeof(secs) / sizeof(*secs); i++) {
		Elf_Scn *scn = elf_newscn(e);
		Elf_Data *d = scn ? elf_newdata(scn) : NULL;
		Elf64_Shdr *sh = scn ? elf64_getshdr(scn) : NULL;

		if (!d || !sh)
			goto fail;
		d->d_buf = (void *)secs[i].buf;
		d->d_size = secs[i].size;
		d->d_type = secs[i].type;
		d->d_align = secs[i].type == ELF_T_DYN ? 8 : 1;
		sh->sh_type = secs[i].sh_type;
		sh->sh_name = secs[i].sh_name;
		sh->sh_entsize = secs[i].entsize;
		sh->sh_link = secs[i].sh_type == SHT_DYNAMIC ? 1 : 0;
	}
	eh->e_shstrndx = 3;
	if (elf_update(e, ELF_C_WRITE) < 0)
		goto fail;
	elf_end(e);
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return path;
fail:
	fprintf(stderr, "fuzz-ldcache: cannot make the executable: %s\n",
		elf_errmsg(-1));
	elf_end(e);
	close(fd);
	return NULL;
}

static int on_blob(const char *object, const void *blob, size_t size, void *arg)
{
	(void)object, (void)blob, (void)size, (void)arg;
	return 0;
}

int fuzz_ldcache_one(const uint8_t *data, size_t size)
{
	const char *exe = tiny_exe();
	char path[64], err[256];
	struct elfscan_opts o = {.sz = sizeof(o), .ld_library_path = "",
				 .ld_cache = path};
	int fd, r;

	FUZZ_ASSERT(exe != NULL);
	fd = fuzz_memfd(data, size, path, sizeof(path));
	if (fd < 0)
		return 0;
	r = elfscan_program_opts(exe, on_blob, NULL, &o, err, sizeof(err));
	FUZZ_ASSERT(r >= 0);
	close(fd);
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_ldcache_one(data, size);
}
#endif
