/* SPDX-License-Identifier: MIT */
/*
 * cmd-snapshot.c - `trail snapshot PID`: the flight recorder a process
 * records into writes what it holds now, into a file of its own
 * (OUTPUT.N), while the recording goes on: what the snapshot trigger
 * does, asked from outside (a boot-time session's recorder, started by
 * libtrail, has no terminal to ask it from). The process's sessions are
 * the trail arenas it maps; each one's recorder holds the arena's memfd,
 * opened through /proc to count the request in its header, which the
 * recorder watches.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <dirent.h>

#include "../../src/common/arena.h"
#include "opt.h"
#include "tool.h"

static const struct opt_cmd snapshot_opts = {
	.name = "snapshot",
	.intro = "Usage: trail snapshot PID\n"
		 "\n"
		 "Have the flight recorder (a recording with --overwrite, or a boot-time\n"
		 "session with ftrace.alloc_snapshot or options = overwrite) that process\n"
		 "PID records into write what it holds now into a file of its own,\n"
		 "OUTPUT.N, as the snapshot trigger does; the recording goes on.\n",
	.col = 22,
	.opts = (const struct opt[]){
		OPT_HELP_ROW,
		{0},
	},
};

/* The arena's memfd among the recorder's descriptors (its inode ino):
 * opened read-write, or -1 */
static int recorder_memfd(pid_t rpid, ino_t ino)
{
	char dir[64], path[320];
	struct dirent *d;
	DIR *D;
	int fd = -1;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)rpid);
	if (!(D = opendir(dir)))
		return -1;
	while (fd < 0 && (d = readdir(D))) {
		struct stat st;

		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		if (d->d_name[0] != '.' && stat(path, &st) == 0 && st.st_ino == ino)
			fd = open(path, O_RDWR | O_CLOEXEC);
	}
	closedir(D);
	return fd;
}

struct asked {
	pid_t pid;
	int asked;
};

/* One session of pid's (its arena mapped at lo, inode ino, header h):
 * asked, if a flight recorder and ours to ask (else said) */
static int ask(void *arg, unsigned long lo, ino_t ino, const struct trail_arena_hdr *h)
{
	struct asked *a = arg;
	int mfd;
	void *m;

	(void)lo;
	if (!(h->flags & TRAIL_ARENA_OVERWRITE)) {
		tool_warn("process %d records for trail record %u, which is not a flight recorder "
			  "(--overwrite): its file gets every event already", (int)a->pid,
			  h->recorder_pid);
		return 0;
	}
	if ((mfd = recorder_memfd((pid_t)h->recorder_pid, ino)) < 0) {
		tool_warn("process %d records for trail record %u, whose buffer cannot be opened "
			  "(%s)", (int)a->pid, h->recorder_pid, strerror(errno));
		return 0;
	}
	m = mmap(NULL, sizeof(*h), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (m == MAP_FAILED)
		return 0;
	/* the recorder writes a snapshot when the count changes */
	__atomic_fetch_add(&((struct trail_arena_hdr *)m)->snapshots, 1, __ATOMIC_RELEASE);
	munmap(m, sizeof(*h));
	printf("trail record %u (process %d's flight recorder) writes a snapshot: its output's "
	       "next .N file\n", h->recorder_pid, (int)a->pid);
	a->asked++;
	return 0;
}

int cmd_snapshot(int argc, char **argv)
{
	struct opt_parser op;
	struct asked a = {0, 0};
	int c, seen;
	pid_t pid;

	opt_init(&op, &snapshot_opts, argc, argv);
	while ((c = opt_next(&op)) != OPT_END)
		if (c == OPT_EXIT)
			return op.status;
	if (optind != argc - 1) {
		tool_usage_err("snapshot", "give one PID");
		return EXIT_USAGE;
	}
	if (tool_pid_arg("snapshot", "PID", argv[optind], &pid))
		return EXIT_USAGE;
	a.pid = pid;
	seen = tool_arenas(pid, ask, &a);
	if (seen < 0) {
		if (errno == ENOENT)
			tool_err("no process with pid %d", (int)pid);
		else
			tool_err("cannot read /proc/%d/maps: %s", (int)pid, strerror(errno));
		return 1;
	}
	if (!seen) {
		tool_err("process %d records for no trail session", (int)pid);
		return 1;
	}
	return a.asked ? 0 : 1;
}
