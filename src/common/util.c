/* SPDX-License-Identifier: MIT */
/* util.c - see util.h; async-signal-safe throughout. */
#include "util.h"

#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

char *trail__utoa(char *p, uint64_t v)
{
	char tmp[24];
	int n = 0;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	while (n)
		*p++ = tmp[--n];
	return p;
}

ssize_t trail__read_full(int fd, void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = read(fd, (char *)buf + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			break;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

ssize_t trail__write_full(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t r = write(fd, (const char *)buf + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		done += (size_t)r;
	}
	return (ssize_t)done;
}

ssize_t trail__read_file(const char *path, char *buf, size_t n)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
	ssize_t r;

	if (fd < 0)
		return -errno;
	r = trail__read_full(fd, buf, n - 1);
	close(fd);
	if (r < 0)
		return r;
	buf[r] = '\0';
	return r;
}

static uint64_t parse_u64(const char **pp)
{
	const char *p = *pp;
	uint64_t v = 0;

	while (*p >= '0' && *p <= '9')
		v = v * 10 + (uint64_t)(*p++ - '0');
	*pp = p;
	return v;
}

int trail__proc_stat(pid_t pid, uint64_t *starttime, char *state, pid_t *ppid)
{
	char path[48] = "/proc/", buf[1024];
	char *e = trail__utoa(path + 6, (uint64_t)pid);
	const char *p;
	ssize_t n;

	memcpy(e, "/stat", 6);
	n = trail__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n == -ENOENT ? -ESRCH : (int)n;
	/* comm may hold spaces and parentheses: fields resume after the last ')' */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ' || !p[2])
		return -EPROTO;
	p += 2;
	if (state)
		*state = *p;
	/* fields 3 (state) .. 22 (starttime): skip 19 separators */
	for (int field = 3; field < 22; field++) {
		p = strchr(p, ' ');
		if (!p)
			return -EPROTO;
		p++;
		if (field == 3 && ppid) {
			const char *q = p;
			*ppid = (pid_t)parse_u64(&q);
		}
	}
	if (starttime)
		*starttime = parse_u64(&p);
	return 0;
}

int trail__proc_alive(pid_t pid, uint64_t starttime)
{
	uint64_t st;
	char state;

	if (pid <= 0 || trail__proc_stat(pid, &st, &state, NULL))
		return 0;
	if (state == 'Z' || state == 'X')
		return 0;
	return st == starttime;
}

int trail__proc_gone(pid_t pid)
{
	char state = 0;
	int r = trail__proc_stat(pid, NULL, &state, NULL);

	return r == -ESRCH || (!r && (state == 'Z' || state == 'X'));
}

size_t trail__utf8_seq(const uint8_t *s, size_t n, int *ok)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xbf;
	size_t need;

	if (c >= 0xc2 && c <= 0xdf) {
		need = 1;
	} else if (c >= 0xe0 && c <= 0xef) {
		need = 2;
		if (c == 0xe0)
			lo = 0xa0; /* E0 80-9F: overlong */
		else if (c == 0xed)
			hi = 0x9f; /* ED A0-BF: surrogates */
	} else if (c >= 0xf0 && c <= 0xf4) {
		need = 3;
		if (c == 0xf0)
			lo = 0x90; /* F0 80-8F: overlong */
		else if (c == 0xf4)
			hi = 0x8f; /* F4 90-BF: past U+10FFFF */
	} else {
		*ok = 0; /* 80-BF alone, C0, C1 (overlong), F5-FF */
		return 1;
	}
	for (size_t i = 1; i <= need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*ok = 0;
			return i;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	*ok = 1;
	return need + 1;
}

int trail__parse_num(const char *s, size_t n, uint64_t *v, size_t *bad)
{
	int hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	size_t q = hex ? 2 : 0;

	*v = 0;
	if (q == n) {
		*bad = n;
		return -1;
	}
	for (; q < n; q++) {
		char c = s[q];
		unsigned d = c >= '0' && c <= '9'	    ? (unsigned)(c - '0')
			     : hex && c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
			     : hex && c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
							   : 99u;

		if (d == 99u || *v > (UINT64_MAX >> 4)) {
			*bad = q;
			return -1;
		}
		*v = *v * (hex ? 16u : 10u) + d;
	}
	return 0;
}

int trail__debug_file(const uint8_t *id, size_t len, char *buf, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	const char *root = getenv("TRAIL_DEBUG_ROOT");
	size_t k, rl;

	if (!root || !*root)
		root = "/usr/lib/debug";
	rl = strlen(root);
	if (!len || rl + 2 * len + 20 > n)
		return -ENAMETOOLONG;
	memcpy(buf, root, rl);
	memcpy(buf + rl, "/.build-id/", 11);
	k = rl + 11;
	for (size_t i = 0; i < len; i++) {
		buf[k++] = hex[id[i] >> 4];
		buf[k++] = hex[id[i] & 15];
		if (!i)
			buf[k++] = '/';
	}
	memcpy(buf + k, ".debug", 7);
	return 0;
}

int trail__parse_kb(const char *s, uint64_t *bytes)
{
	char *end;
	unsigned long long v;
	uint64_t mult = 1024;

	errno = 0;
	if (!s || !*s || *s == '-')
		return -EINVAL;
	v = strtoull(s, &end, 10);
	if (end == s || (errno && errno != ERANGE))
		return -EINVAL;
	if (errno == ERANGE)
		v = ULLONG_MAX; /* too large, if the rest is a size at all */
	switch (*end) {
	case '\0':
		break;
	case 'k': case 'K':
		end++;
		break;
	case 'm': case 'M':
		mult = 1024ull * 1024;
		end++;
		break;
	case 'g': case 'G':
		mult = 1024ull * 1024 * 1024;
		end++;
		break;
	default:
		return -EINVAL;
	}
	if (*end == 'i' || *end == 'I')
		end++;
	if (*end == 'b' || *end == 'B')
		end++;
	if (*end)
		return -EINVAL;
	if (v > (1ull << 40) / mult)
		return -ERANGE;
	*bytes = v * mult;
	return 0;
}
