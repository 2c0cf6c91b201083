/* SPDX-License-Identifier: MIT */
/*
 * wfile.c - the output streams of report and export, and trail's
 * standard output: a stdio stream on a file descriptor that keeps why a
 * write failed. stdio keeps only an
 * error flag, and by the time the outputs (src/export) see it the errno
 * of the failed write(2) is gone; the tools name the cause and the output
 * ("writing standard output: No space left on device").
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "tool.h"

static ssize_t wf_write(void *cookie, const char *buf, size_t n)
{
	struct tool_wfile *w = cookie;
	size_t done = 0;

	if (w->err) { /* (stdio retries what is left: once is enough) */
		errno = w->err;
		return -1;
	}
	while (done < n) {
		ssize_t r = write(w->fd, buf + done, n - done);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			w->err = r < 0 ? errno : EIO;
			errno = w->err;
			return done ? (ssize_t)done : -1;
		}
		done += (size_t)r;
	}
	return (ssize_t)done;
}

static int wf_close(void *cookie)
{
	struct tool_wfile *w = cookie;

	if (w->fd > 2 && close(w->fd) < 0 && !w->err && errno != EINTR)
		w->err = errno;
	return w->err ? -1 : 0;
}

int tool_wfile_open(struct tool_wfile *w, int fd, const char *name)
{
	static const cookie_io_functions_t io = {.write = wf_write, .close = wf_close};

	w->fd = fd;
	w->err = 0;
	w->name = name;
	w->f = fopencookie(w, "w", io);
	if (!w->f)
		return -1;
	/* (a terminal gets its lines as stdio gives them: live views) */
	setvbuf(w->f, NULL, isatty(fd) ? _IOLBF : _IOFBF, 1 << 20);
	return 0;
}

int tool_wfile_close(struct tool_wfile *w, const char *cmd)
{
	int bad;

	if (!w->f)
		return 0;
	bad = fclose(w->f) != 0;
	w->f = NULL;
	if (!bad)
		return 0;
	if (!w->err)
		w->err = EIO;
	/* a reader that went away (| head) is no failure to report */
	if (cmd && w->err != EPIPE)
		tool_err("%s%swriting %s: %s", cmd, *cmd ? ": " : "", w->name, strerror(w->err));
	return -1;
}
