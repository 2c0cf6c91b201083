/* SPDX-License-Identifier: MIT */
/*
 * targets.c - what `trail record` records, checked before it starts
 * (targets.h). A command: its program found and dynamically linked,
 * libtrail a shared library, the output not one of them, the session
 * checked against the program's objects. A running process (-P): yours
 * (or root's to take), its control signal known (its registry entry, or
 * another user's environment), the session checked against its objects,
 * and libtrail (with the decoder, to hook functions) loaded into it
 * through ptrace when it was not started with it. A process caught in an
 * exec or still in its loader is looked at again.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/arena.h"
#include "../../src/common/registry.h"
#include "../../src/common/util.h"
#include "../../src/recorder/recorder.h"
#include "../../src/session/elfscan.h"
#include "../../src/session/session.h"
#include "targets.h"
#include "tool.h"

/* Another user's process (trail run by root): its control signal, as
 * its libtrail chose it (TRAIL_SIGNAL in its environment, else the
 * default) and catches it; its registry is that user's. 0, or -1 said. */
static int others_signal(pid_t pid, const char *comm, int *sig)
{
	char path[64], *env = malloc(1 << 20), *p, *end;
	ssize_t n;
	int s = SIGRTMIN + 7;

	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	n = env ? trail__read_file(path, env, 1 << 20) : -1;
	for (p = env; n > 0 && p < env + n; p += strlen(p) + 1)
		if (!strncmp(p, "TRAIL_SIGNAL=", 13)) {
			long v = strtol(p + 13, &end, 10);

			s = !*end && v >= 0 ? (int)v : s;
		}
	free(env);
	if (trail__proc_gone(pid))
		return -2;
	if (s <= 0 || s > SIGRTMAX || !trail_recorder_pid_catches(pid, s)) {
		tool_err("process %d (%s) has libtrail but attaching is disabled "
			 "(TRAIL_SIGNAL=0, or the program took over signal %d)", (int)pid, comm, s);
		return -1;
	}
	*sig = s;
	return 0;
}

/* pid's name into comm (n bytes): 0, or -1 (none read) */
static int read_comm(pid_t pid, char *comm, size_t n)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (trail__read_file(path, comm, n) <= 0)
		return -1;
	comm[strcspn(comm, "\n")] = '\0';
	return 0;
}

/* Has pid run a new program since its name was read as comm? (`env
 * VAR=... CMD` caught in its exec: what it is now is checked again) */
static int execed(pid_t pid, const char *comm)
{
	char now[64] = "";

	return !read_comm(pid, now, sizeof(now)) && strcmp(now, comm) != 0;
}

/* pid's control signal, from its registry entry (libtrail loaded): 0, -1
 * said, -2: it exited, or -3: it ran a new program meanwhile (neither
 * said) */
/* pid's registry entry, if it is this process's (its start time): 0,
 * -ENOENT, -EPROTO, or -ESTALE (an earlier process's of that pid) */
static int current_entry(int dfd, pid_t pid, struct trail_reg *reg)
{
	int r = trail__registry_get(dfd, pid, reg);

	if (r)
		return r;
	return trail__proc_alive(pid, reg->start) ? 0 : -ESTALE;
}

static int registry_signal(pid_t pid, const char *comm, int *sig)
{
	char path[512];
	struct trail_reg reg;
	int dfd, r;

	if (trail__registry_path(path, sizeof(path)))
		return -1;
	dfd = trail__registry_open(path, 0);
	if (dfd < 0 && dfd != -ENOENT) {
		char why[1200];

		tool_err("%s", trail__registry_why(path, dfd, why, sizeof(why)));
		return -1;
	}
	/* a process that has just started may map libtrail before its
	 * constructor writes the entry: 3 s to do it (a loaded machine took
	 * more than 1); an entry of an earlier process of that pid (it
	 * died without removing it) is not its */
	for (int tries = 0; dfd >= 0 && tries < 300 && current_entry(dfd, pid, &reg) < 0 &&
			    !trail__proc_gone(pid); tries++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	if (dfd < 0 || (r = current_entry(dfd, pid, &reg), close(dfd), r)) {
		/* one ending may have removed its entry long before it is
		 * gone (its atexit handlers: TSan's runtime sleeps a second
		 * there): 2 s more to see it go */
		for (int t = 0; t < 200 && !trail__proc_gone(pid); t++) {
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
		}
		if (trail__proc_gone(pid))
			return -2;
		if (execed(pid, comm))
			return -3;
		tool_err("process %d (%s) has libtrail loaded but is not in the registry %s "
			 "(another TRAIL_REGISTRY?)", (int)pid, comm, path);
		return -1;
	}
	/* (a process ending: its handler gone before its entry, for a
	 * moment; one starting: its entry there before the check saw the
	 * handler) half a second to tell */
	for (int t = 0; reg.signal && t < 100 && !trail_recorder_pid_catches(pid, reg.signal) &&
			!trail__proc_gone(pid); t++) {
		struct timespec ts = {0, 5000000};

		nanosleep(&ts, NULL);
	}
	if (!reg.signal || !trail_recorder_pid_catches(pid, reg.signal)) {
		if (trail__proc_gone(pid))
			return -2;
		tool_err("process %d (%s) has libtrail but attaching is disabled "
			 "(TRAIL_SIGNAL=0, or the program took over signal %d)",
			 (int)pid, comm, reg.signal);
		return -1;
	}
	*sig = reg.signal;
	return 0;
}

/* pid's control signal (another user's process: other), as
 * registry_signal says; -3 (a new program: check it again) at most 5
 * times in a row */
static int control_signal(pid_t pid, const char *comm, int other, int *sig, int *execs)
{
	int r = other ? others_signal(pid, comm, sig) : registry_signal(pid, comm, sig);

	if (r == -3 && ++*execs > 5) {
		tool_err("process %d keeps running new programs: not attached", (int)pid);
		return -1;
	}
	return r;
}

/* Recorders load libraries into processes one at a time (two attaching
 * to the same process at once would meet each other's ptrace): a lock on
 * a file of the registry, waited for 20 s at most (an injection gives up
 * after 5). Its descriptor, or -1 (then unlocked). */
static int inject_lock(void)
{
	char path[512];
	int dfd, fd;

	if (trail__registry_path(path, sizeof(path)) || (dfd = trail__registry_open(path, 1)) < 0)
		return -1;
	fd = openat(dfd, ".inject", O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
	close(dfd);
	for (int i = 0; fd >= 0 && i < 2000 && flock(fd, LOCK_EX | LOCK_NB); i++) {
		struct timespec ts = {0, 10000000};

		nanosleep(&ts, NULL);
	}
	return fd;
}

/* The checks a user deserves a clear message for, before anything starts:
 * 0, -1 (said), or -2: the process exited meanwhile (not said: the
 * caller goes on with the others) */
int record_check_pid(struct trail_session *S, pid_t pid, int *sig)
{
	char path[512], comm[64] = "?";
	struct stat st;
	int r, injected, other, decoder, lock, execs = 0, starts = 0;

again:
	snprintf(path, sizeof(path), "/proc/%d", (int)pid);
	if (pid <= 0 || stat(path, &st) < 0)
		return -2;
	read_comm(pid, comm, sizeof(comm));
	/* root attaches to anyone's, as perf and gdb do (the requests go
	 * through a proxy of that user: src/recorder/proxy.c) */
	if (st.st_uid != geteuid() && geteuid() != 0) {
		tool_err("process %d (%s) belongs to uid %u, not to you (uid %u): "
			 "trail attaches to your own processes (root: to any)",
			 (int)pid, comm, (unsigned)st.st_uid, (unsigned)geteuid());
		return -1;
	}
	other = st.st_uid != geteuid();
	/* a bad registry is said first, whatever the process has */
	if (tool_registry_usable())
		return -1;
	injected = !trail_recorder_pid_maps_libtrail(pid);
	if (!injected && (r = control_signal(pid, comm, other, sig, &execs))) {
		if (r == -3)
			goto again;
		return r;
	}
	if ((r = trail_session_check_process(S, pid, comm)))
		return r;
	/* not started with libtrail: loaded now, through ptrace (inject.c),
	 * once everything asked of the process is known to be there; and
	 * hooking functions, the instruction decoder (which libtrail cannot
	 * load in its control signal's handler), libtrail with it */
	decoder = trail_session_patches(S) &&
		  !trail_recorder_pid_maps(pid, "/libtrail-decoder.so");
	if (decoder && !tool_decoder_path()) {
		fprintf(stderr, "trail: no libtrail-decoder.so beside libtrail.so.1: functions of "
			"process %d (%s) without patchable entries are not hooked\n", (int)pid, comm);
		decoder = 0;
	}
	if (injected || decoder) {
		const char *lib = decoder ? tool_decoder_path() : tool_libtrail_path();
		char err[512] = "";

		if (!lib) {
			tool_err("process %d (%s) has no libtrail loaded, and no libtrail.so.1 was "
				 "found to load into it (TRAIL_LIBRARY)", (int)pid, comm);
			return -1;
		}
		if (!S->quiet)
			fprintf(stderr, "trail: loading %s into process %d (%s)\n", lib, (int)pid, comm);
		/* TERM, HUP and INT to trail wait until the process is back
		 * on its own (a SIGKILL cannot: the injection survives it) */
		sigset_t hold, was;

		sigemptyset(&hold);
		sigaddset(&hold, SIGTERM);
		sigaddset(&hold, SIGHUP);
		sigaddset(&hold, SIGINT);
		sigprocmask(SIG_BLOCK, &hold, &was);
		lock = inject_lock();
		/* (another recorder may have loaded it meanwhile) */
		if (!trail_recorder_pid_maps(pid, decoder ? "/libtrail-decoder.so" : "/libtrail.so"))
			r = trail_recorder_inject(pid, lib, err, sizeof(err));
		else
			r = 0;
		if (lock >= 0)
			close(lock);
		sigprocmask(SIG_SETMASK, &was, NULL);
		if (r == -ESRCH || (r && trail__proc_gone(pid)))
			return -2;
		/* it ran a new program meanwhile (`env ... CMD`): what it
		 * is now decides, checked again */
		if (r == -ESTALE && execs++ < 5)
			goto again;
		/* caught starting, in its loader: 10 ms later, 2 s at most */
		if (r == -EINPROGRESS && starts++ < 200) {
			nanosleep(&(struct timespec){0, 10000000}, NULL);
			goto again;
		}
		if (r && !injected) {
			fprintf(stderr, "trail: %s: functions of process %d (%s) without "
				"patchable entries are not hooked\n",
				err[0] ? err : strerror(-r), (int)pid, comm);
			return 0;
		}
		if (r == -EIO && other)
			tool_err("%s (can uid %u read %s?)", err, (unsigned)st.st_uid, lib);
		else if (r && err[0])
			tool_err("%s", err);
		if (r)
			return -1;
		if ((r = control_signal(pid, comm, other, sig, &execs))) {
			if (r == -3)
				goto again;
			return r;
		}
	}
	return 0;
}


/* Do the two paths name one file? */
static int same_file(const char *a, const char *b)
{
	struct stat x, y;

	return stat(a, &x) == 0 && stat(b, &y) == 0 && x.st_dev == y.st_dev &&
	       x.st_ino == y.st_ino;
}

/* The library to preload must be one: ld.so only warns about a bad one,
 * and the command would run untraced. */
static int check_libtrail(const char *path)
{
	unsigned char h[20];
	const char *why = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, h, sizeof(h));

	if (fd >= 0)
		close(fd);
	if (n < 0)
		why = strerror(errno);
	else if (n < (ssize_t)sizeof(h) || memcmp(h, "\177ELF", 4))
		why = "not an ELF file";
	else if (h[4] != 2 || h[5] != 1)
		why = "not a 64-bit little-endian ELF file";
	else if (h[16] != 3 || h[17] != 0) /* e_type: ET_DYN */
		why = "not a shared library";
	if (!why)
		return 0;
	tool_err("%s%s: %s: it cannot be preloaded", getenv("TRAIL_LIBRARY") ? "TRAIL_LIBRARY=" : "",
		 path, why);
	return -1;
}

/* ---------------------------------------------------------------- status */

/* What is checked before a command runs: its program, libtrail, the
 * output file, then the session against the program's objects. */
int record_check_command(struct trail_session *S, const char **libtrail)
{
	const char *why;

	S->cmd_path = tool_find_file(S->cmd[0], 1, &why);
	if (!S->cmd_path) {
		tool_err("%s: %s", S->cmd[0], why);
		return 1;
	}
	if (elfscan_is_static(S->cmd_path)) {
		tool_err("%s is a static program: libtrail cannot be loaded into it (no "
			 "dynamic loader for LD_PRELOAD, no dlopen to call); trail traces "
			 "dynamically linked programs", S->cmd[0]);
		return 1;
	}
	*libtrail = tool_libtrail_path();
	if (!*libtrail) {
		tool_err("cannot find libtrail.so.1 (install trail, or set TRAIL_LIBRARY)");
		return 1;
	}
	if (check_libtrail(*libtrail))
		return 1;
	if (same_file(S->output, S->cmd_path) || same_file(S->output, *libtrail))
		return trail_session_usage(S, "-o %s is the program being recorded: choose another "
					   "output file", S->output);
	return trail_session_check_program(S);
}


/* ------------------------------------------------- a bootconfig's instances */

#define MAX_INSTANCES 64
static pid_t inst_pid[MAX_INSTANCES];
static int ninst;

void record_instances_start(const struct trail_session *S, pid_t pid)
{
	char names[MAX_INSTANCES][64], pids[32][24];
	int n;

	if (!S->bconf || S->instance || !S->bconf_path)
		return;
	n = trail_session_bootconfig_instances(S, names, MAX_INSTANCES);
	if (n > MAX_INSTANCES) {
		tool_warn("%s: %d instances, the first %d recorded", S->bconf_path, n, MAX_INSTANCES);
		n = MAX_INSTANCES;
	}
	for (int i = 0; i < n; i++) {
		char *argv[16 + 2 * 32];
		int a = 0;
		pid_t c;

		argv[a++] = "trail";
		argv[a++] = "record";
		argv[a++] = "-q";
		argv[a++] = "--allow-unknown";
		argv[a++] = "--bootconfig";
		argv[a++] = (char *)S->bconf_path;
		argv[a++] = "--instance";
		argv[a++] = names[i];
		if (S->all) {
			argv[a++] = "-a";
		} else if (pid) {
			snprintf(pids[0], sizeof(pids[0]), "%d", (int)pid);
			argv[a++] = "-P";
			argv[a++] = pids[0];
		} else {
			for (int k = 0; k < S->npids && k < 32; k++) {
				snprintf(pids[k], sizeof(pids[k]), "%d", (int)S->pids[k]);
				argv[a++] = "-P";
				argv[a++] = pids[k];
			}
		}
		argv[a] = NULL;
		if ((c = fork()) == 0) {
			execv("/proc/self/exe", argv);
			_exit(127);
		}
		if (c > 0)
			inst_pid[ninst++] = c;
	}
}

void record_instances_stop(void)
{
	for (int i = 0; i < ninst; i++)
		kill(inst_pid[i], SIGINT);
	for (int i = 0; i < ninst; i++) {
		int st, t;

		for (t = 0; t < 1000 && waitpid(inst_pid[i], &st, WNOHANG) != inst_pid[i]; t++) {
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
		}
		if (t == 1000) {
			kill(inst_pid[i], SIGKILL);
			waitpid(inst_pid[i], &st, 0);
		}
	}
	ninst = 0;
}

/* ------------------------------------------------ a boot-time session's */

struct boot {
	pid_t rec[TRAIL_MAX_SESSIONS];
	int n;
};

static int boot_arena(void *arg, unsigned long lo, ino_t ino, const struct trail_arena_hdr *h)
{
	struct boot *b = arg;
	char path[64], env[65536];
	pid_t r = (pid_t)h->recorder_pid;
	ssize_t k;

	(void)lo;
	(void)ino;
	if (r == getpid() || b->n == TRAIL_MAX_SESSIONS)
		return 0;
	for (int i = 0; i < b->n; i++)
		if (b->rec[i] == r)
			return 0;
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)r);
	k = trail__read_file(path, env, sizeof(env));
	for (ssize_t i = 0; i < k; i += (ssize_t)strlen(env + i) + 1)
		if (!strcmp(env + i, "TRAIL_BOOT_RECORDER=1")) {
			b->rec[b->n++] = r;
			break;
		}
	return 0;
}

/* the file recorder r writes (its FILE.part), into out */
static void rec_output(pid_t r, char *out, size_t n)
{
	char dir[64], p[320], link[4096];
	struct dirent *d;
	DIR *D;

	snprintf(out, n, "its file");
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)r);
	if (!(D = opendir(dir)))
		return;
	while ((d = readdir(D))) {
		ssize_t k;

		snprintf(p, sizeof(p), "%s/%s", dir, d->d_name);
		k = readlink(p, link, sizeof(link) - 1);
		if (k > 5 && !memcmp(link + k - 5, ".part", 5)) {
			snprintf(out, n, "%.*s", (int)(k - 5), link);
			break;
		}
	}
	closedir(D);
}

void record_take_over(const struct trail_session *S)
{
	struct boot b = {.n = 0};
	char out[4096];

	/* (a boot-time session's own recorders: its instances') */
	if (getenv("TRAIL_BOOT_RECORDER"))
		return;
	for (int i = 0; i < S->npids; i++)
		tool_arenas(S->pids[i], boot_arena, &b);
	for (int i = 0; i < b.n; i++) {
		rec_output(b.rec[i], out, sizeof(out));
		if (kill(b.rec[i], SIGINT))
			continue;
		/* (not our child: gone once init has reaped it) */
		for (int t = 0; t < 1000 && !trail__proc_gone(b.rec[i]); t++) {
			struct timespec ts = {0, 10000000};

			nanosleep(&ts, NULL);
		}
		if (!S->quiet)
			fprintf(stderr, "trail: took over the boot-time session (trail record %d): "
				"what it recorded is in %s\n", (int)b.rec[i], out);
	}
}

/* ------------------------------------------------------------- --tid */

/* --tid TID[,TID...] */
int record_parse_tids(struct trail_session *S, const char *arg)
{
	const char *p = arg;
	char *end;

	for (;;) {
		pid_t t;

		if (tool_parse_pid(p, &end, &t) || (*end && *end != ',')) {
			tool_usage_err("record", "--tid needs thread ids (TID[,TID...]), not '%s'", arg);
			return EXIT_USAGE;
		}
		if (S->ntids == (int)(sizeof(S->tids) / sizeof(S->tids[0]))) {
			tool_usage_err("record", "--tid: 32 threads at most");
			return EXIT_USAGE;
		}
		S->tids[S->ntids++] = t;
		if (!*end)
			return 0;
		p = end + 1;
	}
}

