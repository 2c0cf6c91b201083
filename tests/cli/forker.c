/* SPDX-License-Identifier: MIT */
/*
 * forker.c - follows-children test program.
 *
 *   forker            records proc:hello as "parent", forks; the child
 *                     records as "child" then execs "forker exec"; the parent
 *                     waits and records once more
 *   forker exec       records proc:hello as "exec" (a new program image)
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <trail/trail.h>

TRAIL_EVENT(proc, hello,
	TRAIL_ARGS(const char *, who, int, n),
	TRAIL_FIELDS(trail_field_string(who) trail_field_int(n)))

int main(int argc, char **argv)
{
	pid_t pid;

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
