/* SPDX-License-Identifier: MIT */
/* writer.c - the trace file writer; see writer.h. */
#include "writer.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../common/crc32c.h"

/* Open FILE.part locked, and empty it (a .part nobody holds is what a
 * killed recorder left: this recording replaces it, as it replaces FILE). */
static int open_part(struct tf_writer *w)
{
	mode_t mask = umask(0);

	umask(mask);
	for (int tries = 0; tries < 8; tries++) {
		struct stat a, b;
		int fd = open(w->part, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644 & ~mask);

		if (fd < 0)
			return -errno;
		if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
			int e = errno;

			close(fd);
			return e == EWOULDBLOCK ? -EBUSY : -e;
		}
		/* the lock is on the file the name still gives: a recorder that
		 * renamed its .part away meanwhile leaves us a lock on nothing */
		if (fstat(fd, &a) == 0 && stat(w->part, &b) == 0 && a.st_dev == b.st_dev &&
		    a.st_ino == b.st_ino) {
			if (ftruncate(fd, 0) < 0) {
				int e = errno;

				close(fd);
				return -e;
			}
			w->fd = fd;
			return 0;
		}
		close(fd);
	}
	return -EBUSY;
}

int tfw_open(struct tf_writer *w, const char *path)
{
	struct stat st;
	int r;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->path = path;
	if (!*path)
		return w->err = -ENOENT;
	if (!strcmp(path, "-")) {
		/* standard output, as it is (a pipe, a socket, a serial
		 * line, a file): written in order, never sought nor renamed */
		w->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
		return w->fd < 0 ? (w->err = -errno) : 0;
	}
	if (stat(path, &st) == 0 && S_ISDIR(st.st_mode))
		return w->err = -EISDIR;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* a device or a FIFO: nothing to replace */
		w->fd = open(path, O_WRONLY | O_CLOEXEC);
		return w->fd < 0 ? (w->err = -errno) : 0;
	}
	/* a symlink is followed, as open() would: its target is replaced */
	w->final = realpath(path, NULL);
	if (!w->final)
		w->final = strdup(path);
	if (!w->final || asprintf(&w->part, "%s.part", w->final) < 0) {
		w->part = NULL;
		return w->err = -ENOMEM;
	}
	r = open_part(w);
	if (r) {
		/* not ours: another recorder's .part must stay */
		free(w->part);
		free(w->final);
		w->part = w->final = NULL;
		return w->err = r;
	}
	return 0;
}

static int write_all(struct tf_writer *w, struct iovec *iov, int n)
{
	while (n > 0) {
		ssize_t r = writev(w->fd, iov, n);

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (r == 0)
			return -EIO;
		while (n > 0 && (size_t)r >= iov->iov_len) {
			r -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + r;
			iov->iov_len -= (size_t)r;
		}
	}
	return 0;
}

static int fail(struct tf_writer *w, int err)
{
	/* keep only whole sections; if even that fails the reader still
	 * stops at the torn one */
	if (ftruncate(w->fd, (off_t)w->off) == 0)
		lseek(w->fd, (off_t)w->off, SEEK_SET);
	return w->err = err;
}

int tfw_header(struct tf_writer *w, struct trail_file_hdr *h)
{
	struct iovec iov = {h, sizeof(*h)};
	int r;

	if (w->err)
		return w->err;
	h->hdr_crc = trail__crc32c(0, h, offsetof(struct trail_file_hdr, hdr_crc));
	r = write_all(w, &iov, 1);
	if (r)
		return fail(w, r);
	w->off += sizeof(*h);
	return 0;
}

/*
 * Blocks are allocated ahead of the writes, 64 MiB at a time: ext4's
 * delayed allocation otherwise reserves them a page at a time inside every
 * write, two thirds of the drain's CPU at a few hundred MB/s (22 us per
 * 64 KiB chunk, 8 with the blocks there). The file's size is not changed
 * (KEEP_SIZE); what is left past the end is given back when the file is
 * done. A filesystem that cannot, or a full one, just writes as before.
 */
#define RESERVE_STEP (64ull << 20)

static void reserve(struct tf_writer *w, uint64_t end)
{
	if (end <= w->reserved || !w->part)
		return;
	if (fallocate(w->fd, FALLOC_FL_KEEP_SIZE, (off_t)w->off, (off_t)RESERVE_STEP) == 0)
		w->reserved = w->off + RESERVE_STEP;
	else
		w->reserved = UINT64_MAX; /* not here: never again */
}

int tfw_section(struct tf_writer *w, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen)
{
	struct trail_sec s;
	struct iovec iov[3];
	int n = 0, r;

	if (w->err)
		return w->err;
	s.type = (uint16_t)type;
	s.magic = TRAIL_SEC_MAGIC;
	s.len = alen + blen;
	s.crc = trail__sec_crc(&s, a, alen, b, blen);
	reserve(w, w->off + sizeof(s) + alen + blen);
	iov[n++] = (struct iovec){&s, sizeof(s)};
	if (alen)
		iov[n++] = (struct iovec){(void *)a, alen};
	if (blen)
		iov[n++] = (struct iovec){(void *)b, blen};
	r = write_all(w, iov, n);
	if (r)
		return fail(w, r);
	w->off += sizeof(s) + alen + blen;
	return 0;
}

int tfw_finish(struct tf_writer *w, int keep)
{
	int r = 0;

	/* blocks reserved past the end go back */
	if (w->part && keep && w->reserved > w->off && w->reserved != UINT64_MAX &&
	    !w->err)
		ftruncate(w->fd, (off_t)w->off);
	/* rename or unlink before the close drops the lock, so that no
	 * other recorder can take FILE.part in between */
	if (w->part && keep && rename(w->part, w->final) < 0)
		r = -errno;
	else if (w->part && !keep)
		unlink(w->part);
	if (w->fd >= 0 && close(w->fd) < 0 && !r)
		r = -errno;
	w->fd = -1;
	free(w->part);
	free(w->final);
	w->part = w->final = NULL;
	if (w->err)
		return w->err;
	return r;
}
