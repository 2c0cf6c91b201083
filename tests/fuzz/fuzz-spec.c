/* SPDX-License-Identifier: MIT */
/*
 * fuzz-spec.c - libFuzzer target for event patterns and specs
 * (src/common/spec.c): the glob matcher, the -e pattern checker and
 * matcher, the multi-line spec matcher and its "@key value" options.
 *
 * Input: "SYS:EVENT\n" (the event to match; without a newline, the whole
 * input is the spec and the event is app:request), then a spec: patterns
 * and "@key value" options, one per line; its first line is also used as
 * a lone pattern. Patterns and names go in exact-size heap buffers, not
 * NUL-terminated where the API takes a length, so a read past them is seen.
 *
 * Checked besides memory safety: trail__spec_check() gives 0 or a caret
 * inside the pattern (plus one) and a reason; a pattern without glob
 * characters matches itself; a well-formed pattern matches an ASCII name
 * as fnmatch(3) does (the -e globs are the shell's); a
 * one-line spec selects what its pattern selects; an option value is
 * NUL-terminated within the caller's buffer.
 */
#include <fnmatch.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/spec.h"
#include "fuzz.h"

static char *dup_exact(const uint8_t *p, size_t n)
{
	char *q = malloc(n ? n : 1);

	if (q && n)
		memcpy(q, p, n);
	return q;
}

/* p[0..n) as a C string, cut at its first NUL */
static char *dup_str(const uint8_t *p, size_t n)
{
	const uint8_t *z = memchr(p, 0, n);
	char *q;

	if (z)
		n = (size_t)(z - p);
	q = malloc(n + 1);
	if (q) {
		memcpy(q, p, n);
		q[n] = '\0';
	}
	return q;
}

static int is_ascii(const char *s)
{
	for (; *s; s++)
		if ((unsigned char)*s >= 0x80)
			return 0;
	return 1;
}

static int count_opt(const char *value, size_t len, void *arg)
{
	FUZZ_ASSERT(!memchr(value, '\n', len)); /* one line each */
	return ++*(int *)arg > 1000; /* stops a long walk: returned as is */
}

int fuzz_spec_one(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size), *sp = data, *end;
	char *ev = nl ? dup_str(data, (size_t)(nl - data)) : NULL;
	char *spec, *pat = NULL, *cpat = NULL, *glob_s = NULL;
	const char *why = NULL, *prov = "app", *name = "request";
	size_t plen, caret, slen;
	char opt[8], *colon;
	int n = 0, m1;

	if (nl) {
		sp = nl + 1;
		prov = ev;
		if (ev && (colon = strchr(ev, ':'))) {
			*colon = '\0';
			name = colon + 1;
		}
	}
	end = memchr(sp, '\n', size - (size_t)(sp - data));
	plen = end ? (size_t)(end - sp) : size - (size_t)(sp - data);
	spec = dup_str(sp, size - (size_t)(sp - data));
	pat = dup_exact(sp, plen);
	cpat = dup_str(sp, plen);
	slen = strlen(name);
	glob_s = dup_exact((const uint8_t *)name, slen);
	if ((nl && !ev) || !spec || !pat || !cpat || !glob_s)
		goto out;

	caret = trail__spec_check(cpat, &why);
	FUZZ_ASSERT(caret <= strlen(cpat) + 1);
	FUZZ_ASSERT(!caret || why);
	FUZZ_ASSERT(caret || *cpat);

	m1 = trail__spec_match1(pat, plen, prov, name);
	if (plen && pat[0] != '@' && !memchr(pat, 0, plen))
		FUZZ_ASSERT(trail__spec_match(cpat, prov, name) == m1);
	/* (fnmatch's POSIX bracket elements, [.x.] [=x=] [:class:], are not
	 * trail's glob: inside a set their '[' is a character like another) */
	if (!caret && strlen(cpat) == plen && !strchr(cpat, ':') && is_ascii(name) &&
	    !strstr(cpat, "[.") && !strstr(cpat, "[="))
		FUZZ_ASSERT(trail__glob(pat, plen, glob_s, slen) ==
			    !fnmatch(cpat, name, FNM_NOESCAPE));
	else
		trail__glob(pat, plen, glob_s, slen);
	if (!memchr(pat, '*', plen) && !memchr(pat, '?', plen) &&
	    !memchr(pat, '[', plen))
		FUZZ_ASSERT(trail__glob(pat, plen, pat, plen));

	trail__spec_match(spec, prov, name);
	trail__spec_opts(spec, "l", count_opt, &n);
	if (trail__spec_opt(spec, "tracer", opt, sizeof(opt)))
		FUZZ_ASSERT(strlen(opt) < sizeof(opt));
out:
	free(ev);
	free(spec);
	free(pat);
	free(cpat);
	free(glob_s);
	return 0;
}

#ifndef FUZZ_NO_MAIN
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	return fuzz_spec_one(data, size);
}
#endif
