/* SPDX-License-Identifier: MIT */
/* util.c - message and option helpers of the trail tools; see tool.h. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/common/arena.h"
#include "../../src/common/clock.h"
#include "../../src/common/registry.h"
#include "../../src/common/util.h"
#include "../../src/session/session.h"
#include "tool.h"

int tool_color;

void tool_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("trail: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fputs("trail: warning: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

void tool_usage_err(const char *cmd, const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "trail %s: ", cmd);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry 'trail %s --help'.\n", cmd);
}

void tool_caret(const char *what, const char *input, size_t pos, const char *msg)
{
	size_t len = strlen(input);

	if (pos > len)
		pos = len;
	fflush(stdout);
	fprintf(stderr, "trail: %s: %s\n", what, msg);
	fprintf(stderr, "  %s\n  %*s^\n", input, (int)pos, "");
}

void tool_diag(void *cmd, const struct trail_diag_msg *m)
{
	if (m->input)
		tool_caret(m->what, m->input, m->pos, m->msg);
	else if (m->level == TRAIL_DIAG_USAGE)
		tool_usage_err(cmd, "%s", m->msg);
	else if (m->level == TRAIL_DIAG_WARN)
		tool_warn("%s", m->msg);
	else if (m->level == TRAIL_DIAG_NOTE)
		fputs(m->msg, stderr);
	else
		tool_err("%s", m->msg);
}

int tool_parse_duration(const char *s, uint64_t *ns)
{
	char *end;
	double v;

	errno = 0;
	if (!s || !*s)
		return -EINVAL;
	v = strtod(s, &end);
	if (errno || end == s || v < 0)
		return -EINVAL;
	if (!*end || !strcmp(end, "s"))
		v *= 1e9;
	else if (!strcmp(end, "ms"))
		v *= 1e6;
	else if (!strcmp(end, "us"))
		v *= 1e3;
	else if (!strcmp(end, "ns"))
		;
	else if (!strcmp(end, "m"))
		v *= 60e9;
	else
		return -EINVAL;
	if (v > 1e18)
		return -EINVAL;
	*ns = (uint64_t)v;
	return 0;
}

int tool_parse_ulong(const char *s, char **end, unsigned long min,
		     unsigned long max, unsigned long *v)
{
	char *e;
	unsigned long n;

	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	n = strtoul(s, &e, 10);
	if (end)
		*end = e;
	else if (*e)
		return -EINVAL;
	if (errno == ERANGE || n < min || n > max)
		return -ERANGE;
	*v = n;
	return 0;
}

int tool_parse_pid(const char *s, char **end, pid_t *pid)
{
	unsigned long v;
	int r = tool_parse_ulong(s, end, 1, INT_MAX, &v);

	if (!r)
		*pid = (pid_t)v;
	return r;
}

int tool_pid_arg(const char *cmd, const char *opt, const char *s, pid_t *pid)
{
	int r = tool_parse_pid(s, NULL, pid);

	if (r == -ERANGE)
		tool_usage_err(cmd, "%s needs a process id from 1 to %d, not '%s'", opt,
			       INT_MAX, s);
	else if (r)
		tool_usage_err(cmd, "%s needs a process id, not '%s'", opt, s);
	return r ? EXIT_USAGE : 0;
}

const char *tool_human_bytes(uint64_t v, char *buf, size_t n)
{
	static const char *const unit[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double d = (double)v;
	int u = 0;

	while (d >= 1024 && u < 4) {
		d /= 1024;
		u++;
	}
	if (u == 0)
		snprintf(buf, n, "%llu B", (unsigned long long)v);
	else
		snprintf(buf, n, "%.1f %s", d, unit[u]);
	return buf;
}

const char *tool_thousands(uint64_t v, char *buf, size_t n)
{
	char tmp[32];
	int len = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v);
	size_t o = 0;

	for (int i = 0; i < len && o + 2 < n; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

static int usable(const char *p)
{
	struct stat st;

	return stat(p, &st) == 0 && S_ISREG(st.st_mode);
}

const char *tool_libtrail_path(void)
{
	static char path[PATH_MAX];
	static const char *const rel[] = {
		"/../lib/x86_64-linux-gnu/libtrail.so.1", "/../lib64/libtrail.so.1",
		"/../lib/libtrail.so.1", "/libtrail.so.1",
	};
	char self[PATH_MAX];
	const char *e = getenv("TRAIL_LIBRARY");
	ssize_t n;

	if (e && *e)
		return usable(e) ? e : NULL;
	n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n > 0) {
		char *slash;

		self[n] = '\0';
		slash = strrchr(self, '/');
		if (slash) {
			*slash = '\0';
			for (size_t i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
				snprintf(path, sizeof(path), "%s%s", self, rel[i]);
				if (usable(path))
					return realpath(path, self) ? strcpy(path, self) : path;
			}
		}
	}
	snprintf(path, sizeof(path), "%s/libtrail.so.1", TRAIL_BUILD_LIBDIR);
	if (usable(path))
		return path;
	snprintf(path, sizeof(path), "%s/libtrail.so.1", TRAIL_INSTALL_LIBDIR);
	if (usable(path))
		return path;
	return NULL;
}

const char *tool_decoder_path(void)
{
	static char path[PATH_MAX];
	const char *lib = tool_libtrail_path(), *slash = lib ? strrchr(lib, '/') : NULL;

	if (!slash || snprintf(path, sizeof(path), "%.*s/libtrail-decoder.so",
			       (int)(slash - lib), lib) >= (int)sizeof(path))
		return NULL;
	return usable(path) ? path : NULL;
}

/* Why a path found by name cannot be used (NULL: it can). */
static const char *unusable(const char *p, int need_exec)
{
	struct stat st;

	if (stat(p, &st) < 0)
		return strerror(errno);
	if (S_ISDIR(st.st_mode))
		return "is a directory";
	if (!S_ISREG(st.st_mode))
		return "not a regular file";
	if (need_exec && access(p, X_OK) < 0)
		return errno == EACCES ? "Permission denied (not executable)" : strerror(errno);
	if (!need_exec && access(p, R_OK) < 0)
		return strerror(errno);
	return NULL;
}

char *tool_find_file(const char *name, int need_exec, const char **why)
{
	const char *path = getenv("PATH");
	char buf[PATH_MAX];

	*why = "No such file or directory";
	if (!*name)
		return NULL;
	if (strchr(name, '/')) {
		*why = unusable(name, need_exec);
		return *why ? NULL : strdup(name);
	}
	if (!path)
		path = "/usr/local/bin:/usr/bin:/bin";
	while (*path) {
		size_t len = strcspn(path, ":");

		snprintf(buf, sizeof(buf), "%.*s/%s", (int)(len ? len : 1),
			 len ? path : ".", name);
		if (usable(buf) && access(buf, need_exec ? X_OK : R_OK) == 0)
			return strdup(buf);
		path += len + (path[len] == ':');
	}
	*why = "command not found";
	return NULL;
}

int tool_registry_usable(void)
{
	char path[512], why[1200];
	int fd;

	if (trail__registry_path(path, sizeof(path))) {
		tool_err("the registry directory's path is too long");
		return -1;
	}
	if ((fd = trail__registry_open(path, 0)) < 0 && fd != -ENOENT) {
		tool_err("%s", trail__registry_why(path, fd, why, sizeof(why)));
		return -1;
	}
	if (fd >= 0)
		close(fd);
	return 0;
}


uint32_t tool_clock_choose(const char *want, const char **why)
{
	char path[512], boot[64] = "", line[128], tmp[32];
	uint32_t clock;
	int dfd, fd, settled;
	ssize_t n;

	if ((want && strcmp(want, "auto")) || trail__registry_path(path, sizeof(path)) ||
	    trail__read_file("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) <= 0)
		return trail__clock_choose(want, why, &settled);
	boot[strcspn(boot, "\n")] = '\0';
	if ((dfd = trail__registry_open(path, 1)) < 0)
		return trail__clock_choose(want, why, &settled);
	if ((fd = openat(dfd, "clock", O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) >= 0) {
		n = read(fd, line, sizeof(line) - 1);
		close(fd);
		line[n > 0 ? n : 0] = '\0';
		if (n > 0 && !strncmp(line, boot, strlen(boot)) && line[strlen(boot)] == ' ') {
			const char *c = line + strlen(boot) + 1;

			if (!strncmp(c, "tsc\n", 4) || !strncmp(c, "mono\n", 5)) {
				close(dfd);
				*why = "as measured earlier since this boot";
				return *c == 't' ? TRAIL_CLOCK_TSC : TRAIL_CLOCK_MONO;
			}
		}
	}
	clock = trail__clock_choose(want, why, &settled);
	if (settled) {
		/* a new file renamed over the old: never read half written */
		snprintf(tmp, sizeof(tmp), ".clock.%d", (int)getpid());
		if ((fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
				 0600)) >= 0) {
			int len = snprintf(line, sizeof(line), "%s %s\n", boot,
					   clock == TRAIL_CLOCK_TSC ? "tsc" : "mono");
			int ok = write(fd, line, (size_t)len) == len;

			close(fd);
			if (!ok || renameat(dfd, tmp, dfd, "clock"))
				unlinkat(dfd, tmp, 0);
		}
	}
	close(dfd);
	return clock;
}

int tool_arenas(pid_t pid, int (*fn)(void *arg, unsigned long lo, ino_t ino,
				     const struct trail_arena_hdr *h), void *arg)
{
	char path[64], line[4608];
	int n = 0, mem;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -1;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	mem = open(path, O_RDONLY | O_CLOEXEC);
	/* each arena once: its first mapping (offset 0) */
	while (mem >= 0 && fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		char obj[4096] = "";
		struct trail_arena_hdr h;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu %4095s", &lo, &hi, &off, &ino, obj) != 5 ||
		    off || strncmp(obj, "/memfd:trail-arena", 18) ||
		    pread(mem, &h, sizeof(h), (off_t)lo) != (ssize_t)sizeof(h) ||
		    h.magic != TRAIL_ARENA_MAGIC)
			continue;
		n++;
		if (fn(arg, lo, (ino_t)ino, &h))
			break;
	}
	if (mem >= 0)
		close(mem);
	fclose(f);
	return n;
}
