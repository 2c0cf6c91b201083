/* SPDX-License-Identifier: MIT */
/* tracefile.c - the trace file writer; see tracefile.h. */
#include "tracefile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../../src/common/crc32c.h"

int tfw_open(struct tf_writer *w, const char *path)
{
	memset(w, 0, sizeof(*w));
	w->path = path;
	w->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (w->fd < 0)
		return w->err = -errno;
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

int tfw_section(struct tf_writer *w, uint32_t type, const void *a, size_t alen,
		const void *b, size_t blen)
{
	struct trail_sec s;
	struct iovec iov[3];
	int n = 0, r;

	if (w->err)
		return w->err;
	s.type = type;
	s.len = alen + blen;
	s.crc = trail__crc32c(trail__crc32c(0, a, alen), b, blen);
	/* crc32c(crc32c(0, a), b) == crc32c(0, a || b) */
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

int tfw_close(struct tf_writer *w)
{
	int r = 0;

	if (w->fd >= 0) {
		if (close(w->fd) < 0 && !w->err)
			r = -errno;
		w->fd = -1;
	}
	return w->err ? w->err : r;
}
