/* SPDX-License-Identifier: MIT */
/* regfile.c - the registry directory's definition files (regfile.h). */
#include "regfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../common/registry.h"

int trail__regfile_file(const char *name, char *path, size_t n, int create, char *err,
		       size_t en)
{
	char dir[512];
	int fd;

	if (trail__registry_path(dir, sizeof(dir))) {
		snprintf(err, en, "the registry directory's path is too long");
		return -ENAMETOOLONG;
	}
	fd = trail__registry_open(dir, create);
	if (fd < 0 && !(fd == -ENOENT && !create)) {
		trail__registry_why(dir, fd, err, en);
		return fd;
	}
	if (fd >= 0)
		close(fd);
	if ((size_t)snprintf(path, n, "%s/%s", dir, name) >= n) {
		snprintf(err, en, "registry %s: its path is too long", dir);
		return -ENAMETOOLONG;
	}
	return 0;
}

int trail__regfile_replace(const char *name, int (*fn)(void *arg, int i, char *buf, size_t n),
			  void *arg, char *err, size_t en)
{
	char path[600], tmp[640], *line;
	size_t ln = 65536;
	FILE *f;
	int fd;

	if (trail__regfile_file(name, path, sizeof(path), 1, err, en))
		return -EIO;
	snprintf(tmp, sizeof(tmp), "%s.%d", path, (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, "w"))) {
		snprintf(err, en, "%s: %s", tmp, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -EIO;
	}
	if (!(line = malloc(ln))) {
		fclose(f);
		unlink(tmp);
		snprintf(err, en, "out of memory");
		return -EIO;
	}
	for (int i = 0; fn(arg, i, line, ln); i++)
		fprintf(f, "%s\n", line);
	free(line);
	if (fflush(f) || fsync(fileno(f)) || fclose(f) || rename(tmp, path)) {
		snprintf(err, en, "%s: %s", path, strerror(errno));
		unlink(tmp);
		return -EIO;
	}
	return 0;
}

int trail__regfile_read(const char *name, int (*fn)(void *arg, const char *line, char *msg, size_t mn),
		       void *arg, char *err, size_t en)
{
	char path[600], msg[160], *line = NULL;
	size_t cap = 0;
	int lineno = 0, r;
	FILE *f;

	if ((r = trail__regfile_file(name, path, sizeof(path), 0, err, en)))
		return r == -ENOENT ? 0 : r;
	if (!(f = fopen(path, "r"))) {
		if (errno == ENOENT)
			return 0;
		r = -errno;
		snprintf(err, en, "%s: %s", path, strerror(-r));
		return r;
	}
	while (getline(&line, &cap, f) >= 0) {
		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!*line || *line == '#')
			continue;
		msg[0] = '\0';
		if (fn(arg, line, msg, sizeof(msg))) {
			snprintf(err, en, "%s:%d: %s", path, lineno, msg);
			r = -EINVAL;
			break;
		}
	}
	free(line);
	fclose(f);
	return r;
}
