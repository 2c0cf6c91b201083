/* SPDX-License-Identifier: MIT */
/*
 * bootsess.c - boot-time tracing of a process: TRAIL_BOOTCONFIG=FILE in
 * the environment of a program started with libtrail (LD_PRELOAD or
 * linked) records what the bootconfig file says from libtrail's first
 * constructor on, with no `trail record` started by hand.
 *
 * libtrail starts the recorder itself: `trail record -q --bootconfig FILE
 * -P PID` (the trail beside libtrail, or $TRAIL_TOOL), detached (a child
 * of init, never one of the program's: a program waiting for its children
 * does not meet it), without LD_PRELOAD and TRAIL_BOOTCONFIG in its
 * environment, and waits in its constructor (5 s at most) until that
 * recorder's session has joined: the program's own constructors and main
 * run recorded. The recorder writes the file when the process exits,
 * however it ends (a fatal signal included: the flight recorder's
 * contents are in the shared buffer). The programs it execs join that
 * session (TRAIL_SESSION in TRAIL_BOOTCONFIG's place in the environment,
 * once joined), as a command's do under `trail record -- CMD`. A file the recorder refuses (its
 * grammar, its keys: the message on the program's stderr) ends the wait
 * at once, through a pipe the recorder holds: the program runs untraced,
 * never refused. Only raw system calls before the exec: this runs before
 * the C library's own initialization (libtrail is DF_1_INITFIRST).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <dlfcn.h>

#include "../session/bconf.h"
#include "internal.h"

#define BOOT_WAIT_MS 5000
#define MAX_ENV 1024

extern char **environ;

/* the trail tool: $TRAIL_TOOL, else beside libtrail, else ../bin */
static int tool_path(char *out, size_t n)
{
	const char *t = getenv("TRAIL_TOOL"), *slash;
	Dl_info di;

	if (t && *t)
		return snprintf(out, n, "%s", t) < (int)n ? access(out, X_OK) : -1;
	if (!dladdr((const void *)tool_path, &di) || !di.dli_fname ||
	    !(slash = strrchr(di.dli_fname, '/')))
		return -1;
	if ((size_t)(slash - di.dli_fname) + sizeof("/../bin/trail") > n)
		return -1;
	memcpy(out, di.dli_fname, (size_t)(slash - di.dli_fname));
	strcpy(out + (slash - di.dli_fname), "/trail");
	if (access(out, X_OK) == 0)
		return 0;
	strcpy(out + (slash - di.dli_fname), "/../bin/trail");
	return access(out, X_OK);
}

/* the file asks for function hooks or probes (ftrace.tracer other than
 * nop, kernel.ftrace, an event's probes): a key that needs the decoder */
static int hooking_key(void *arg, const char *key, const struct trail_bconf_node *k)
{
	const struct trail_bconf_node *v = trail_bconf_values(k);
	size_t n = strlen(key);
	(void)arg;

	if ((n >= 7 && !strcmp(key + n - 7, ".tracer")) || !strcmp(key, "kernel.ftrace"))
		return v && strcmp(v->data, "nop");
	return n >= 7 && !strcmp(key + n - 7, ".probes");
}

/* does FILE hook functions? (unreadable or bad: no, the recorder says why) */
/* 1 if it hooks functions; *instances: its instances (a session each) */
static int hooks_functions(const char *file, int *instances)
{
	char *buf = malloc(TRAIL_BCONF_MAX + 1), names[TRAIL_MAX_SESSIONS][64];
	struct trail_bconf c;
	struct trail_bconf_err e;
	ssize_t n = -1;
	int fd, r = 0;

	*instances = 0;
	if (buf && (fd = open(file, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, TRAIL_BCONF_MAX + 1);
		close(fd);
	}
	if (n > 0 && !trail_bconf_parse(buf, (size_t)n, &c, &e)) {
		r = trail_bconf_each(&c, hooking_key, NULL);
		*instances = trail_bconf_names(&c, "ftrace.instance.", names, TRAIL_MAX_SESSIONS);
		trail_bconf_free(&c);
	}
	free(buf);
	return r;
}

static int active_sessions(void)
{
	int n = 0;

	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		n += __atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) == PS_ACTIVE;
	return n;
}

static int active_session(void)
{
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		if (__atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) == PS_ACTIVE)
			return 1;
	return 0;
}

/* the recorder started, detached: 0, or -1 */
static int spawn(const char *tool, char *const argv[], char *const envp[], int keep_fd)
{
	long mid = syscall(SYS_clone, 0, 0, 0, 0, 0); /* (no exit signal) */

	if (mid < 0)
		return -1;
	if (mid == 0) {
		/* the middle process: its child is init's once it exits */
		long rec = syscall(SYS_clone, 0, 0, 0, 0, 0);

		if (rec == 0) {
			/* its own session; no stdin, no stdout (a reader of the
			 * program's output must not wait for it), stderr kept */
			long nul = syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR);

			if (nul >= 0) {
				syscall(SYS_dup2, nul, 0);
				syscall(SYS_dup2, nul, 1);
				if (nul > 2)
					syscall(SYS_close, nul);
			}
			syscall(SYS_setsid);
			syscall(SYS_fcntl, keep_fd, F_SETFD, 0);
			syscall(SYS_execve, tool, argv, envp);
		}
		syscall(SYS_exit_group, 127);
	}
	/* (reaped here: it had no exit signal) */
	while (syscall(SYS_wait4, (pid_t)mid, NULL, __WALL, NULL) < 0 && errno == EINTR)
		;
	return 0;
}

/* Without TRAIL_BOOTCONFIG, the default files: the user's
 * ($XDG_CONFIG_HOME/trail/bootconfig, else ~/.config/trail/bootconfig),
 * then the system's (/etc/trail/bootconfig): the first readable one, into
 * buf; NULL if none. (TRAIL_BOOTCONFIG set empty: none at all.) */
static const char *default_file(char *buf, size_t n)
{
	const char *xdg = getenv("XDG_CONFIG_HOME"), *home = getenv("HOME");
	int k = -1;

	if (xdg && *xdg == '/')
		k = snprintf(buf, n, "%s/trail/bootconfig", xdg);
	else if (home && *home == '/')
		k = snprintf(buf, n, "%s/.config/trail/bootconfig", home);
	if (k > 0 && (size_t)k < n && !access(buf, R_OK))
		return buf;
	if (!access("/etc/trail/bootconfig", R_OK))
		return "/etc/trail/bootconfig";
	return NULL;
}

static void boot_session(char **envp)
{
	const char *file = getenv("TRAIL_BOOTCONFIG");
	char tool[PATH_MAX], pid[24], *renv[MAX_ENV], dflt[PATH_MAX];
	/* (--allow-unknown: the events of a program a launcher execs, or of
	 * libraries loaded later, are not in the image that starts it) */
	char *argv[] = {tool, "record", "-q", "--allow-unknown", "--bootconfig", NULL, "-P", pid,
			NULL};
	int fds[2], n = 0, instances = 0;

	if (active_session() || getenv("TRAIL_SESSION") ||
	    (!file && !(file = default_file(dflt, sizeof(dflt)))) || !*file)
		return;
	if (tool_path(tool, sizeof(tool))) {
		fprintf(stderr, "trail: TRAIL_BOOTCONFIG=%s: no trail tool to record it ($TRAIL_TOOL, "
			"or trail beside libtrail): running untraced\n", file);
		return;
	}
	argv[5] = (char *)file;
	snprintf(pid, sizeof(pid), "%d", (int)getpid());
	for (char **e = environ; e && *e && n < MAX_ENV - 2; e++)
		if (strncmp(*e, "LD_PRELOAD=", 11) && strncmp(*e, "TRAIL_BOOTCONFIG=", 17) &&
		    strncmp(*e, "TRAIL_SESSION=", 14))
			renv[n++] = *e;
	/* (what `trail record -P PID` looks for to take the session over) */
	renv[n++] = "TRAIL_BOOT_RECORDER=1";
	renv[n] = NULL;
	/* functions the file hooks are hooked with the decoder: in before
	 * the recorder looks (it would load it through ptrace); a file of
	 * events only leaves the program without it */
	if (hooks_functions(file, &instances))
		trail__decoder_load();
	if (pipe2(fds, O_CLOEXEC))
		return;
	if (spawn(tool, argv, renv, fds[1])) {
		close(fds[0]);
		close(fds[1]);
		return;
	}
	close(fds[1]);
	/* the top's session, and one for each instance (their recorders
	 * the top's starts): the program runs once they record, or the top's
	 * is gone, or in 5 s */
	for (int ms = 0; ms < BOOT_WAIT_MS && active_sessions() < 1 + instances; ms++) {
		struct pollfd p = {fds[0], POLLIN, 0};
		struct timespec ts = {0, 1000000};

		/* the recorder gone (a file it refused, said on stderr) */
		if (poll(&p, 1, 0) == 1 && (p.revents & (POLLIN | POLLHUP)))
			break;
		nanosleep(&ts, NULL);
	}
	close(fds[0]);
	/* the programs it execs, itself or in its children, join the same
	 * session (TRAIL_SESSION, as `trail record -- CMD` gives its
	 * command): one recording, not a recorder per image. Written in the
	 * place of TRAIL_BOOTCONFIG in the environment the loader passed,
	 * not by setenv: the C library may not have started yet, and sets
	 * environ to that array when it does */
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		if (__atomic_load_n(&trail__sess[s].state, __ATOMIC_ACQUIRE) == PS_ACTIVE) {
			static char v[64];

			snprintf(v, sizeof(v), "TRAIL_SESSION=%d:%d", (int)trail__sess[s].cli_pid,
				 trail__sess[s].cli_fd);
			for (char **e = envp; e && *e; e++)
				if (!strncmp(*e, "TRAIL_BOOTCONFIG=", 17)) {
					*e = v;
					break;
				}
			break;
		}
}

/* after libtrail's own start (runtime.c's constructor, 101) */
__attribute__((constructor(102))) static void boot_ctor(int argc, char **argv, char **envp)
{
	(void)argc;
	(void)argv;
	/* (disabled: TRAIL_DISABLE; loaded by an attach's injection, inside
	 * its dlopen: a recorder is attaching already) */
	if (trail__pid != getpid() || !trail__at_start)
		return;
	boot_session(envp);
}
