/* SPDX-License-Identifier: MIT */
/*
 * fuzz-probe.c - libFuzzer target for dynamic event definitions
 * (src/probe/parse.c, compile.c) and the probe blobs they compile to
 * (src/common/fetch.c). The input is used twice:
 *
 * - as a definition, cut at its first NUL, in an exact-size heap buffer:
 *   probe_parse(), probe_def_format(), then probe_compile() against a
 *   target with nothing in it: no object, no DWARF, no symbol (@SYM is
 *   unknown); an eprobe's source event is app:request with an int fd, a
 *   string path and a u64 bytes (the bundled example's, less its double).
 * - as a probe blob, as libtrail takes one from a spec line:
 *   trail_probe_check() on the raw bytes.
 *
 * Checked besides memory safety: an error has a message and a caret
 * within the text, or none (-1); a definition's normalized text parses
 * again to itself and compiles to the same blob; a compiled blob passes
 * trail_probe_check() and holds the definition's function, object and
 * arguments; the resolved text parses; a blob the check accepts has its
 * strings, event description and code inside the input, one store per
 * argument, and every SYM object string inside its strings.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fetch.h"
#include "common/meta.h"
#include "fuzz.h"
#include "probe/probe.h"

/* app:request's description (abi.h), byte by byte; each field is kind,
 * size, flags, name length, u16 count, then its name */
static const uint8_t request_blob[] = {
	0x54, 0x52, 0x4d, 0x31, /* magic "TRM1" */
	52, 0,                  /* size: all of it */
	1, 3,                   /* version, fields */
	'a', 'p', 'p', 0, 'r', 'e', 'q', 'u', 'e', 's', 't', 0,
	TRAIL_FK_INT, 4, TRAIL_FF_SIGNED, 2, 0, 0, 'f', 'd', 0,
	TRAIL_FK_STRING, 1, 0, 4, 0, 0, 'p', 'a', 't', 'h', 0,
	TRAIL_FK_INT, 8, 0, 5, 0, 0, 'b', 'y', 't', 'e', 's', 0,
};

static const struct trail_meta *request_meta(void)
{
	static struct trail_meta m;
	static int done;
	const char *why;

	if (!done) {
		FUZZ_ASSERT(!trail__meta_parse(request_blob, sizeof(request_blob), &m, &why));
		FUZZ_ASSERT(m.size == sizeof(request_blob) && m.nfields == 3);
		done = 1;
	}
	return &m;
}

static int no_sym(void *ctx, const char *sym, char *obj, size_t objn, uint64_t *vaddr)
{
	(void)ctx, (void)sym, (void)obj, (void)objn, (void)vaddr;
	return -ENOENT;
}

static int inside(const void *p, size_t n, const uint8_t *b, size_t len)
{
	const uint8_t *q = p;

	return q >= b && n <= len && (size_t)(q - b) <= len - n;
}

/* every part of a blob the check accepted, read where libtrail reads it */
static void walk(const uint8_t *b, size_t len, const struct trail_probe *p)
{
	const struct trail_probe_hdr *h = p->hdr;
	struct trail_meta m;
	const char *why;
	unsigned stores = 0;
	size_t code = (size_t)h->ninsns * sizeof(*p->code);

	FUZZ_ASSERT((const uint8_t *)h == b && h->size == len);
	FUZZ_ASSERT(inside(p->sym, h->sym_len, b, len) && strlen(p->sym) + 1 == h->sym_len);
	FUZZ_ASSERT(inside(p->obj, h->obj_len, b, len) && strlen(p->obj) + 1 == h->obj_len);
	FUZZ_ASSERT(inside(p->meta, h->meta_size, b, len));
	FUZZ_ASSERT(inside(p->code, code, b, len));
	FUZZ_ASSERT(inside(p->strs, h->strs_size, b, len));
	FUZZ_ASSERT((const uint8_t *)p->strs + h->strs_size == b + len);
	FUZZ_ASSERT(!trail__meta_parse(p->meta, h->meta_size, &m, &why));
	FUZZ_ASSERT(m.size == h->meta_size);
	FUZZ_ASSERT(inside(m.provider, strlen(m.provider) + 1, p->meta, m.size));
	FUZZ_ASSERT(inside(m.name, strlen(m.name) + 1, p->meta, m.size));
	for (uint32_t i = 0; i < m.nfields; i++)
		FUZZ_ASSERT(inside(m.fields[i].name, strlen(m.fields[i].name) + 1, p->meta, m.size));
	for (uint16_t i = 0; i < h->ninsns; i++) {
		struct trail_fetch_insn in;

		memcpy(&in, &p->code[i], sizeof(in));
		if (in.op >= TRAIL_FOP_ST_INT)
			stores++;
		if (in.op == TRAIL_FOP_SYM && in.u32 != 0xffffffffu)
			FUZZ_ASSERT(in.u32 < h->strs_size &&
				    strlen(p->strs + in.u32) < h->strs_size - in.u32);
	}
	FUZZ_ASSERT(stores == h->nargs && m.nfields >= h->nargs);
}

/* The input as a blob: the exact-size buffer libFuzzer hands over. */
static void fuzz_blob(const uint8_t *data, size_t size)
{
	struct trail_probe p;
	const char *why = NULL;

	if (trail_probe_check(data, size, &p, &why)) {
		FUZZ_ASSERT(why && *why);
		return;
	}
	walk(data, size, &p);
}

static void check_err(const struct probe_err *e, const char *text)
{
	FUZZ_ASSERT(e->pos >= -1 && e->pos <= (int)strlen(text));
	FUZZ_ASSERT(e->msg[0]);
}

/* text's normalized form, NULL if it does not parse */
static char *normalize(const char *text)
{
	struct probe_def d;
	struct probe_err e;
	char *s;

	if (probe_parse(text, &d, &e)) {
		check_err(&e, text);
		return NULL;
	}
	s = probe_def_format(&d);
	probe_def_free(&d);
	return s;
}

/* d compiled (malloc'd, *len bytes), NULL if it does not compile */
static uint8_t *compile(const struct probe_def *d, size_t *len)
{
	struct probe_target t = {0};
	struct probe_err e;
	struct trail_probe p;
	const char *why;
	uint8_t *blob = NULL;
	char *resolved = NULL, *again;

	t.sym_addr = no_sym;
	if (d->kind == 'e')
		t.src = request_meta();
	if (probe_compile(d, &t, &blob, len, &resolved, &e)) {
		check_err(&e, d->text);
		return NULL;
	}
	FUZZ_ASSERT(blob && resolved);
	FUZZ_ASSERT(!trail_probe_check(blob, *len, &p, &why));
	walk(blob, *len, &p);
	FUZZ_ASSERT(p.hdr->kind == (d->kind == 'f' ? 'p' : d->kind));
	/* (a watchpoint's object is the one its caller resolved, wobj: none
	 * here, whatever OBJ: the text named) */
	FUZZ_ASSERT(!strcmp(p.sym, d->sym));
	FUZZ_ASSERT(!strcmp(p.obj, d->kind == 'w' ? (d->wobj ? d->wobj : "")
				  : d->obj ? d->obj : ""));
	FUZZ_ASSERT(p.hdr->nargs == d->nargs);
	again = normalize(resolved);
	FUZZ_ASSERT(again);
	free(again);
	free(resolved);
	return blob;
}

/* The input as a definition. The normalized text is what the registry
 * of definitions keeps, one a line, and compiles at each recording. */
static void fuzz_def(const uint8_t *data, size_t size)
{
	const uint8_t *z = memchr(data, 0, size);
	size_t n = z ? (size_t)(z - data) : size, len, len2;
	char *text = malloc(n + 1), *norm = NULL, *again = NULL;
	uint8_t *blob, *blob2;
	struct probe_def d, d2;
	struct probe_err e;

	if (!text)
		return;
	memcpy(text, data, n);
	text[n] = '\0';
	if (probe_parse(text, &d, &e)) {
		check_err(&e, text);
		goto out;
	}
	norm = probe_def_format(&d);
	FUZZ_ASSERT(norm && !strchr(norm, '\n'));
	again = normalize(norm);
	if (!again || strcmp(again, norm)) {
		fprintf(stderr, "'%s'\n -> '%s'\n -> '%s'\n", text, norm, again ? again : "(error)");
		FUZZ_ASSERT(!"the normalized text parses to itself");
	}
	blob = compile(&d, &len);
	probe_def_free(&d);
	if (!blob)
		goto out;
	FUZZ_ASSERT(!probe_parse(norm, &d2, &e));
	blob2 = compile(&d2, &len2);
	if (!blob2 || len2 != len || memcmp(blob, blob2, len)) {
		fprintf(stderr, "'%s'\n -> '%s' compiles %s\n", text, norm,
			blob2 ? "to another blob" : "no more");
		FUZZ_ASSERT(!"the normalized text compiles to the same blob");
	}
	probe_def_free(&d2);
	free(blob2);
	free(blob);
out:
	free(again);
	free(norm);
	free(text);
}

int fuzz_probe_one(const uint8_t *data, size_t size)
{
	fuzz_def(data, size);
	fuzz_blob(data, size);
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_probe_one(data, size);
}
#endif
