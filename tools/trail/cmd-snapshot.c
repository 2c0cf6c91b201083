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

/* One session of pid's (its arena mapped at lo, inode ino): 1 asked, 0
 * not a flight recorder or not ours to ask (said), -1 not an arena */
static int ask(pid_t pid, unsigned long lo, ino_t ino)
{
	struct trail_arena_hdr h;
	char path[64];
	int fd, mfd;
	void *m;

	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	if (pread(fd, &h, sizeof(h), (off_t)lo) != (ssize_t)sizeof(h) ||
	    h.magic != TRAIL_ARENA_MAGIC) {
		close(fd);
		return -1;
	}
	close(fd);
	if (!(h.flags & TRAIL_ARENA_OVERWRITE)) {
		tool_warn("process %d records for trail record %u, which is not a flight recorder "
			  "(--overwrite): its file gets every event already", (int)pid,
			  h.recorder_pid);
		return 0;
	}
	if ((mfd = recorder_memfd((pid_t)h.recorder_pid, ino)) < 0) {
		tool_warn("process %d records for trail record %u, whose buffer cannot be opened "
			  "(%s)", (int)pid, h.recorder_pid, strerror(errno));
		return 0;
	}
	m = mmap(NULL, sizeof(h), PROT_READ | PROT_WRITE, MAP_SHARED, mfd, 0);
	close(mfd);
	if (m == MAP_FAILED)
		return 0;
	/* the recorder writes a snapshot when the count changes */
	__atomic_fetch_add(&((struct trail_arena_hdr *)m)->snapshots, 1, __ATOMIC_RELEASE);
	munmap(m, sizeof(h));
	printf("trail record %u (process %d's flight recorder) writes a snapshot: its output's "
	       "next .N file\n", h.recorder_pid, (int)pid);
	return 1;
}

int cmd_snapshot(int argc, char **argv)
{
	struct opt_parser op;
	char path[64], line[4608];
	int c, asked = 0, seen = 0;
	pid_t pid;
	FILE *f;

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
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re"))) {
		if (errno == ENOENT)
			tool_err("no process with pid %d", (int)pid);
		else
			tool_err("cannot read %s: %s", path, strerror(errno));
		return 1;
	}
	/* each arena once: its first mapping (offset 0) */
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off, ino;
		char obj[4096] = "";

		if (sscanf(line, "%lx-%lx %*s %lx %*s %lu %4095s", &lo, &hi, &off, &ino, obj) != 5 ||
		    off || strncmp(obj, "/memfd:trail-arena", 18))
			continue;
		c = ask(pid, lo, (ino_t)ino);
		seen += c >= 0;
		asked += c > 0;
	}
	fclose(f);
	if (!seen) {
		tool_err("process %d records for no trail session", (int)pid);
		return 1;
	}
	return asked ? 0 : 1;
}
