/* SPDX-License-Identifier: MIT */
/* registry.c - the per-user process registry; see registry.h. */
#include "registry.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

int trail__registry_path(char *buf, size_t n)
{
	const char *e = getenv("TRAIL_REGISTRY");
	int r;

	if (e && *e)
		r = snprintf(buf, n, "%s", e);
	else if ((e = getenv("XDG_RUNTIME_DIR")) && *e == '/')
		r = snprintf(buf, n, "%s/trail", e);
	else
		r = snprintf(buf, n, "/dev/shm/trail-%u", (unsigned)getuid());
	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

int trail__registry_open(const char *path, int create)
{
	struct stat st;
	int fd;

	if (create && mkdir(path, 0700) < 0 && errno != EEXIST)
		return -errno;
	fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOTDIR) /* a symlink (refused), or a file */
		return lstat(path, &st) == 0 && S_ISLNK(st.st_mode) ? -ELOOP : -ENOTDIR;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		int e = -errno;
		close(fd);
		return e;
	}
	if (st.st_uid != geteuid() || (st.st_mode & 077)) {
		close(fd);
		return -EPERM;
	}
	return fd;
}

char *trail__registry_why(const char *path, int err, char *buf, size_t n)
{
	struct stat st;

	if (err == -EPERM && lstat(path, &st) == 0 && st.st_uid != geteuid())
		snprintf(buf, n, "registry %s: owned by uid %u, not by you (uid %u): it must be "
			 "a directory of yours, mode 0700", path, (unsigned)st.st_uid,
			 (unsigned)geteuid());
	else if (err == -EPERM && lstat(path, &st) == 0)
		snprintf(buf, n, "registry %s: mode %04o gives others access: it must be mode "
			 "0700, owned by you (chmod 700 %s)", path, (unsigned)(st.st_mode & 07777),
			 path);
	else if (err == -ELOOP)
		snprintf(buf, n, "registry %s: a symbolic link (refused: it must be a directory "
			 "of yours, mode 0700)", path);
	else if (err == -ENOTDIR)
		snprintf(buf, n, "registry %s: not a directory", path);
	else
		snprintf(buf, n, "registry %s: %s", path, strerror(-err));
	return buf;
}

static char *name_of(char *buf, pid_t pid, const char *suffix)
{
	char *e = trail__utoa(buf, (uint64_t)pid);

	strcpy(e, suffix);
	return buf;
}

int trail__registry_put(int dirfd, const struct trail_reg *r)
{
	char tmp[40], name[32], text[128], *p = text;
	int fd;
	ssize_t w;

	name_of(tmp, r->pid, ".new");
	name_of(name, r->pid, "");
	p = stpcpy(p, "trail 1\npid ");
	p = trail__utoa(p, (uint64_t)r->pid);
	p = stpcpy(p, "\nstart ");
	p = trail__utoa(p, r->start);
	p = stpcpy(p, "\nsignal ");
	p = trail__utoa(p, (uint64_t)(r->signal > 0 ? r->signal : 0));
	*p++ = '\n';
	fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0 && errno == EEXIST) { /* left by a process killed here */
		unlinkat(dirfd, tmp, 0);
		fd = openat(dirfd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
			    0600);
	}
	if (fd < 0)
		return -errno;
	w = trail__write_full(fd, text, (size_t)(p - text));
	close(fd);
	if (w < 0 || renameat(dirfd, tmp, dirfd, name) < 0) {
		int e = w < 0 ? (int)w : -errno;
		unlinkat(dirfd, tmp, 0);
		return e;
	}
	return 0;
}

int trail__registry_del(int dirfd, pid_t pid)
{
	char name[32];

	return unlinkat(dirfd, name_of(name, pid, ""), 0) < 0 ? -errno : 0;
}

static int field(const char *text, const char *key, uint64_t *v)
{
	size_t kl = strlen(key);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : p) {
		if (!strncmp(p, key, kl) && p[kl] == ' ') {
			char *end;
			unsigned long long x;

			errno = 0;
			x = strtoull(p + kl + 1, &end, 10);
			if (errno || (*end != '\n' && *end))
				return -EPROTO;
			*v = x;
			return 0;
		}
	}
	return -EPROTO;
}

int trail__registry_get(int dirfd, pid_t pid, struct trail_reg *r)
{
	char name[32], text[256];
	struct stat st;
	uint64_t v;
	ssize_t n;
	int fd = openat(dirfd, name_of(name, pid, ""),
			O_RDONLY | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return errno == ELOOP ? -EPROTO : -errno;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_uid != geteuid()) {
		close(fd);
		return -EPROTO;
	}
	n = trail__read_full(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return (int)n;
	text[n] = '\0';
	if (strncmp(text, "trail 1\n", 8))
		return -EPROTO;
	if (field(text, "pid", &v) || v != (uint64_t)pid)
		return -EPROTO;
	r->pid = pid;
	if (field(text, "start", &r->start))
		return -EPROTO;
	if (field(text, "signal", &v) || v > 64)
		return -EPROTO;
	r->signal = (int)v;
	return 0;
}
