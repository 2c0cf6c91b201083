/* SPDX-License-Identifier: MIT */
/*
 * test-unwind-real.c - the unwind readers on what a real toolchain
 * wrote: tests/cli/uwprog-sframe (gcc -O2 -fomit-frame-pointer
 * -Wa,--gsframe, binutils' SFrame version 1). At every address of its
 * .text, the row of its .sframe, of the same section rewritten as
 * version 2 (with and without FUNC_START_PCREL), and of its .eh_frame
 * (through .eh_frame_hdr) must agree wherever both kinds of table cover
 * the address: two readers of two formats that gas wrote from the same
 * CFI directives. In .plt, the linker's: SFrame's repetitive block and
 * the CFI's expression.
 */
#include <elf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/cfi.h"
#include "common/sframe.h"

static uint8_t *file;
static size_t flen;

/* the file's allocated sections: addresses to file offsets */
static struct sec {
	uint64_t addr, off, size;
	char name[32];
} secs[64];
static int nsecs;

/* a .sframe to read in place of the file's (ctx; NULL: none) */
struct view {
	const uint8_t *p;
	uint64_t addr, size;
};

static int rd(void *ctx, uint64_t addr, void *buf, size_t n)
{
	const struct view *v = ctx;

	if (v && addr >= v->addr && addr - v->addr <= v->size && n <= v->size - (addr - v->addr)) {
		memcpy(buf, v->p + (addr - v->addr), n);
		return 0;
	}
	for (int i = 0; i < nsecs; i++)
		if (addr >= secs[i].addr && addr - secs[i].addr <= secs[i].size &&
		    n <= secs[i].size - (addr - secs[i].addr)) {
			memcpy(buf, file + secs[i].off + (addr - secs[i].addr), n);
			return 0;
		}
	return -1;
}

static const struct sec *sec(const char *name)
{
	for (int i = 0; i < nsecs; i++)
		if (!strcmp(secs[i].name, name))
			return &secs[i];
	return NULL;
}

static int load(const char *path)
{
	FILE *f = fopen(path, "rb");
	Elf64_Ehdr eh;
	const Elf64_Shdr *sh;
	const char *names;

	if (!f)
		return -1;
	fseek(f, 0, SEEK_END);
	flen = (size_t)ftell(f);
	rewind(f);
	file = malloc(flen);
	if (!file || fread(file, 1, flen, f) != flen) {
		fclose(f);
		return -1;
	}
	fclose(f);
	memcpy(&eh, file, sizeof(eh));
	sh = (const Elf64_Shdr *)(file + eh.e_shoff);
	names = (const char *)file + sh[eh.e_shstrndx].sh_offset;
	for (int i = 0; i < eh.e_shnum && nsecs < 64; i++)
		if ((sh[i].sh_flags & SHF_ALLOC) && sh[i].sh_type != SHT_NOBITS) {
			secs[nsecs] = (struct sec){sh[i].sh_addr, sh[i].sh_offset, sh[i].sh_size, ""};
			snprintf(secs[nsecs].name, sizeof(secs[nsecs].name), "%s", names + sh[i].sh_name);
			nsecs++;
		}
	return 0;
}

/* the version 1 section v1 rewritten as version 2, at the same address
 * (pcrel: function starts from their own field) */
static struct view to_v2(const struct sec *v1, int pcrel)
{
	const uint8_t *p = file + v1->off;
	uint32_t nfdes, frelen, fdeoff, freoff;
	size_t hl = 28 + p[7], size;
	uint8_t *q;

	memcpy(&nfdes, p + 8, 4);
	memcpy(&frelen, p + 16, 4);
	memcpy(&fdeoff, p + 20, 4);
	memcpy(&freoff, p + 24, 4);
	CHECK_EQ(fdeoff, 0);
	CHECK_EQ(freoff, nfdes * 17); /* (the FREs right after the FDEs) */
	size = hl + (size_t)nfdes * 20 + frelen;
	q = calloc(1, size);
	memcpy(q, p, hl);
	q[2] = 2;       /* sfp_version */
	if (pcrel)
		q[3] |= 0x4; /* SFRAME_F_FDE_FUNC_START_PCREL */
	freoff = nfdes * 20;
	memcpy(q + 24, &freoff, 4);
	for (uint32_t i = 0; i < nfdes; i++) {
		const uint8_t *f = p + hl + i * 17;
		uint8_t *g = q + hl + i * 20;
		int32_t start;

		memcpy(g, f, 17);
		if (pcrel) {
			memcpy(&start, f, 4);
			start -= (int32_t)(hl + i * 20);
			memcpy(g, &start, 4);
		}
		g[17] = (f[16] & 0x10) ? 16 : 0; /* sfde_func_rep_size: a PLT entry */
	}
	memcpy(q + hl + (size_t)nfdes * 20, p + hl + nfdes * 17u, frelen);
	return (struct view){q, v1->addr, size};
}

static int same(const struct trail_uwrow *a, const struct trail_uwrow *b)
{
	return a->cfa_reg == b->cfa_reg && a->cfa_off == b->cfa_off && a->ra_off == b->ra_off &&
	       a->fp_saved == b->fp_saved && (!a->fp_saved || a->fp_off == b->fp_off);
}

/* the CFA's offset at pc, the PLT's expression applied */
static int32_t cfa_at(const struct trail_uwrow *r, uint64_t pc)
{
	return r->cfa_off + (r->plt_k && (pc & 15) >= r->plt_k ? 8 : 0);
}

/* In .plt, the linker's tables: PLT0's FDE, then one of PCMASK type
 * (SFrame) or the expression (CFI) for the 16-byte entries; their CFAs
 * agree at every address. */
TEST(plt)
{
	const char *path = TRAIL_BUILD_DIR "/tests/cli/uwprog-sframe";
	const struct sec *sf, *plt, *hdr;
	struct trail_sframe s1, s2;
	struct view v2;
	unsigned masked = 0;

	if (load(path))
		SKIP("no tests/cli/uwprog-sframe (the assembler has no --gsframe)");
	sf = sec(".sframe");
	plt = sec(".plt");
	hdr = sec(".eh_frame_hdr");
	if (!sf || !plt || !hdr)
		SKIP("no .plt with tables in uwprog-sframe");
	v2 = to_v2(sf, 0);
	CHECK_EQ(trail__sframe_open(&s1, sf->addr, sf->size, rd, NULL), 0);
	CHECK_EQ(trail__sframe_open(&s2, sf->addr, v2.size, rd, &v2), 0);
	for (uint64_t pc = plt->addr; pc < plt->addr + plt->size; pc++) {
		struct trail_uwrow a, b, e;

		CHECK_EQ(trail__sframe_find(&s1, pc, &a, rd, NULL), 0);
		CHECK_EQ(trail__sframe_find(&s2, pc, &b, rd, &v2), 0);
		CHECK_EQ(trail__cfi_find(hdr->addr, hdr->size, pc, &e, rd, NULL), 0);
		CHECK_EQ(a.cfa_reg, TRAIL_UW_SP);
		CHECK_EQ(e.cfa_reg, TRAIL_UW_SP);
		CHECK_EQ(a.cfa_off, b.cfa_off);
		if (cfa_at(&a, pc) != cfa_at(&e, pc))
			fprintf(stderr, "  pc %#llx: sframe %d, cfi %d\n", (unsigned long long)pc,
				cfa_at(&a, pc), cfa_at(&e, pc));
		CHECK_EQ(cfa_at(&a, pc), cfa_at(&e, pc));
		masked += e.plt_k != 0;
	}
	/* (the entries after PLT0 went through the expression) */
	CHECK(masked >= 16);
	free((void *)v2.p);
}

TEST(sframe_versions_and_cfi)
{
	const char *path = TRAIL_BUILD_DIR "/tests/cli/uwprog-sframe";
	const struct sec *sf, *text, *hdr;
	struct trail_sframe s1, s2, s3;
	struct view v2, v3;
	unsigned rows = 0, both = 0;

	if (load(path))
		SKIP("no tests/cli/uwprog-sframe (the assembler has no --gsframe)");
	sf = sec(".sframe");
	text = sec(".text");
	hdr = sec(".eh_frame_hdr");
	CHECK(sf && text && hdr);
	if (!sf || !text || !hdr)
		return;
	CHECK_EQ(file[sf->off + 2], 1); /* binutils 2.40: version 1 */
	v2 = to_v2(sf, 0);
	v3 = to_v2(sf, 1);
	CHECK_EQ(trail__sframe_open(&s1, sf->addr, sf->size, rd, NULL), 0);
	CHECK_EQ(trail__sframe_open(&s2, sf->addr, v2.size, rd, &v2), 0);
	CHECK_EQ(trail__sframe_open(&s3, sf->addr, v3.size, rd, &v3), 0);
	for (uint64_t pc = text->addr; pc < text->addr + text->size; pc++) {
		struct trail_uwrow a, b, c, e;
		int r1 = trail__sframe_find(&s1, pc, &a, rd, NULL);
		int rc = trail__cfi_find(hdr->addr, hdr->size, pc, &e, rd, NULL);

		CHECK_EQ(trail__sframe_find(&s2, pc, &b, rd, &v2), r1);
		CHECK_EQ(trail__sframe_find(&s3, pc, &c, rd, &v3), r1);
		if (r1)
			continue;
		rows++;
		CHECK(same(&a, &b));
		CHECK(same(&a, &c));
		if (rc)
			continue;
		both++;
		if (!same(&a, &e))
			fprintf(stderr, "  pc %#llx: sframe cfa %u%+d fp %u, cfi cfa %u%+d fp %u\n",
				(unsigned long long)pc, a.cfa_reg, a.cfa_off, a.fp_saved, e.cfa_reg,
				e.cfa_off, e.fp_saved);
		CHECK(same(&a, &e));
	}
	printf("# %u addresses with an SFrame row, %u with a CFI row too\n", rows, both);
	/* (its functions have both: a, b, c, d, main, on_sig, s2...) */
	CHECK(rows > 100);
	CHECK(both > 100);
	free((void *)v2.p);
	free((void *)v3.p);
}

TEST_MAIN(CHECK_T(sframe_versions_and_cfi), CHECK_T(plt))
