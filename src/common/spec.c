/* SPDX-License-Identifier: MIT */
/* spec.c - event selection patterns; see spec.h. */
#include "spec.h"

#include <string.h>

/* [set] at p (after '['), returns bytes consumed incl. ']' or 0 if bad */
static size_t set_match(const char *p, size_t plen, char c, int *hit)
{
	size_t i = 0;
	int neg = 0, any = 0;

	if (i < plen && (p[i] == '!' || p[i] == '^')) {
		neg = 1;
		i++;
	}
	for (int first = 1; i < plen; first = 0) {
		char lo = p[i], hi;

		if (lo == ']' && !first)
			break;
		hi = lo;
		if (i + 2 < plen && p[i + 1] == '-' && p[i + 2] != ']') {
			hi = p[i + 2];
			i += 3;
		} else {
			i++;
		}
		if (c >= lo && c <= hi)
			any = 1;
	}
	if (i >= plen)
		return 0;
	*hit = any != neg;
	return i + 1;
}

int trail__glob(const char *p, size_t plen, const char *s, size_t slen)
{
	size_t pi = 0, si = 0, star_p = (size_t)-1, star_s = 0;

	while (si < slen) {
		if (pi < plen && p[pi] == '*') {
			star_p = ++pi;
			star_s = si;
			continue;
		}
		if (pi < plen && p[pi] == '?') {
			pi++;
			si++;
			continue;
		}
		if (pi < plen && p[pi] == '[') {
			int hit = 0;
			size_t n = set_match(p + pi + 1, plen - pi - 1, s[si], &hit);

			if (n && hit) {
				pi += 1 + n;
				si++;
				continue;
			}
			if (!n && s[si] == '[') { /* unterminated: literal */
				pi++;
				si++;
				continue;
			}
		} else if (pi < plen && p[pi] == s[si]) {
			pi++;
			si++;
			continue;
		}
		if (star_p == (size_t)-1)
			return 0;
		pi = star_p;
		si = ++star_s;
	}
	while (pi < plen && p[pi] == '*')
		pi++;
	return pi == plen;
}

int trail__spec_match1(const char *pat, size_t plen, const char *provider,
		       const char *name)
{
	const char *colon = memchr(pat, ':', plen);
	size_t pl = strlen(provider), nl = strlen(name);

	if ((plen == 3 && !memcmp(pat, "all", 3)) || (plen == 1 && pat[0] == '*'))
		return 1;
	if (colon) {
		size_t a = (size_t)(colon - pat);

		return trail__glob(pat, a, provider, pl) &&
		       trail__glob(colon + 1, plen - a - 1, name, nl);
	}
	return trail__glob(pat, plen, provider, pl) ||
	       trail__glob(pat, plen, name, nl);
}

int trail__spec_match(const char *spec, const char *provider, const char *name)
{
	while (*spec) {
		const char *nl = strchr(spec, '\n');
		size_t len = nl ? (size_t)(nl - spec) : strlen(spec);

		if (len && spec[0] != '@' && trail__spec_match1(spec, len, provider, name))
			return 1;
		spec += len + (nl ? 1 : 0);
	}
	return 0;
}

int trail__obj_glob(const char *pat, size_t plen, const char *obj)
{
	const char *b;

	if (!obj)
		return 0;
	b = strrchr(obj, '/');
	b = b ? b + 1 : obj;
	if (trail__glob(pat, plen, b, strlen(b)))
		return 1;
	for (const char *d = strchr(b, '.'); d; d = strchr(d + 1, '.'))
		if (d > b && trail__glob(pat, plen, b, (size_t)(d - b)))
			return 1;
	return 0;
}

int trail__func_glob(const char *pat, size_t plen, const char *name, const char *obj)
{
	const char *at = memrchr(pat, '@', plen);

	if (!at)
		return trail__glob(pat, plen, name, strlen(name));
	return trail__glob(pat, (size_t)(at - pat), name, strlen(name)) &&
	       trail__obj_glob(at + 1, plen - (size_t)(at + 1 - pat), obj);
}

size_t trail__glob_check(const char *pat, size_t len, const char **why)
{
	for (size_t i = 0; i < len; i++) {
		size_t n;
		int hit;

		if (pat[i] == ']') {
			*why = "']' without its '['";
			return i + 1;
		}
		if (pat[i] != '[')
			continue;
		n = set_match(pat + i + 1, len - i - 1, 0, &hit);
		if (!n) {
			*why = "'[' set without its ']'";
			return i + 1;
		}
		i += n;
	}
	return 0;
}

size_t trail__spec_check(const char *pat, const char **why)
{
	size_t len = strlen(pat), colons = 0, bad;

	if (!len) {
		*why = "empty event name";
		return 1;
	}
	bad = trail__glob_check(pat, len, why);
	if (bad)
		return bad;
	for (size_t i = 0; i < len; i++) {
		char c = pat[i];
		int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			 (c >= '0' && c <= '9') || c == '_' || c == '*' ||
			 c == '?' || c == '[' || c == ']' || c == '!' ||
			 c == '^' || c == '-' || c == ':' || c == '.';

		if (!ok) {
			*why = "unexpected character in event name";
			return i + 1;
		}
		if (c == ':' && ++colons > 1) {
			*why = "more than one ':' in event name";
			return i + 1;
		}
		if (c == ':' && (i == 0 || i + 1 == len)) {
			*why = "empty system or event name around ':'";
			return i + 1;
		}
	}
	return 0;
}

int trail__spec_opts(const char *spec, const char *key,
		     int (*fn)(const char *value, size_t len, void *arg), void *arg)
{
	size_t kl = strlen(key);

	while (*spec) {
		const char *nl = strchr(spec, '\n');
		size_t len = nl ? (size_t)(nl - spec) : strlen(spec);

		if (len > kl + 1 && spec[0] == '@' && !memcmp(spec + 1, key, kl) &&
		    spec[kl + 1] == ' ') {
			int r = fn(spec + kl + 2, len - kl - 2, arg);

			if (r)
				return r;
		}
		spec += len + (nl ? 1 : 0);
	}
	return 0;
}

struct last_opt {
	char *buf;
	size_t n;
	int found;
};

static int keep_last(const char *v, size_t len, void *arg)
{
	struct last_opt *l = arg;

	if (len >= l->n)
		len = l->n - 1;
	memcpy(l->buf, v, len);
	l->buf[len] = '\0';
	l->found = 1;
	return 0;
}

int trail__spec_opt(const char *spec, const char *key, char *buf, size_t n)
{
	struct last_opt l = {buf, n, 0};

	if (!n)
		return 0;
	buf[0] = '\0';
	trail__spec_opts(spec, key, keep_last, &l);
	return l.found;
}
