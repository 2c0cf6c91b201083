/* SPDX-License-Identifier: MIT */
/*
 * forker.c - follows-children test program.
 *
 *   forker            records proc:hello as "parent", forks; the child
 *                     records as "child" then execs "forker exec"; the parent
 *                     waits and records once more
 *   forker exec       records proc:hello as "exec" (a new program image)
 *   forker smaps      forks a child that records once and exits, then
 *                     prints what /proc/self/smaps says of the mapping
 *                     holding libtrail's code: "size=KB rss=KB anon=KB
 *                     force=1" (force=0: the kernel refuses forced writes
 *                     to /proc/self/mem, tried on forker's own code)
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(proc, hello,
	TRAIL_ARGS(const char *, who, int, n),
	TRAIL_FIELDS(trail_field_string(who) trail_field_int(n)))

static int smaps(void)
{
	void *code = dlsym(RTLD_DEFAULT, "trail__register");
	char line[512];
	unsigned long lo, hi, kb, size = 0, rss = 0, anon = 0;
	int in = 0;
	FILE *f;
	int force = 0, mem = open("/proc/self/mem", O_RDWR | O_CLOEXEC);
	unsigned char b = *(volatile const unsigned char *)(uintptr_t)smaps;
	pid_t pid;

	if (mem >= 0) {
		force = pwrite(mem, &b, 1, (off_t)(uintptr_t)smaps) == 1;
		close(mem);
	}
	pid = fork();

	if (pid == 0) {
		trail(proc, hello, "child", 0);
		exit(0);
	}
	waitpid(pid, NULL, 0);
	if (!code || !(f = fopen("/proc/self/smaps", "r")))
		return 1;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%lx-%lx ", &lo, &hi) == 2 && strchr(line, ' ') - line > 8)
			in = (uintptr_t)code >= lo && (uintptr_t)code < hi;
		else if (in && sscanf(line, "Size: %lu kB", &kb) == 1)
			size = kb;
		else if (in && sscanf(line, "Rss: %lu kB", &kb) == 1)
			rss = kb;
		else if (in && sscanf(line, "Anonymous: %lu kB", &kb) == 1)
			anon = kb;
	}
	fclose(f);
	printf("size=%lu rss=%lu anon=%lu force=%d\n", size, rss, anon, force);
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "smaps"))
		return smaps();

	if (argc > 1 && !strcmp(argv[1], "exec")) {
		for (int i = 0; i < 3; i++)
			trail(proc, hello, "exec", i);
		return 0;
	}
	trail(proc, hello, "parent", 0);
	pid = fork();
	if (pid == 0) {
		for (int i = 0; i < 3; i++)
			trail(proc, hello, "child", i);
		execl("/proc/self/exe", argv[0], "exec", (char *)NULL);
		_exit(127);
	}
	waitpid(pid, NULL, 0);
	trail(proc, hello, "parent", 1);
	return 0;
}
