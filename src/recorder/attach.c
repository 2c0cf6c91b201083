/* SPDX-License-Identifier: MIT */
/*
 * attach.c - the processes of a session, as the recorder sees them: ask
 * running ones to join (trail record -P: one by one, waiting for each;
 * -a: every registered one, asynchronously) or to leave, by the control
 * signal of src/common/control.h carrying the arena's memfd; follow the
 * process table of the arena (announce new processes in PROC sections,
 * notice dead ones and salvage their chunks). doc/design/control-plane.md
 * tells the protocol.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "../common/control.h"
#include "../common/registry.h"
#include "../common/trigger.h"
#include "../common/util.h"
#include "internal.h"

static int send_cmd(struct trail_recorder *R, pid_t pid, int sig, uint32_t cmd)
{
	return trail__rec_sigqueue(R, pid, sig, trail_ctl_encode(cmd, R->memfd));
}

/* The attach request, sent only while pid catches sig: a process checked
 * before may have run a new program since (`env VAR=... CMD`), whose
 * libtrail has not installed its handler yet, and the signal's default
 * action would end it. Waited for 3 s at most; 0, -ESRCH (it exited) or
 * -EAGAIN (it catches the signal no more). */
static int send_attach(struct trail_recorder *R, pid_t pid, int sig)
{
	for (int t = 0; !trail_recorder_pid_catches(pid, sig); t++) {
		struct timespec ts = {0, 1000000};

		if (trail__proc_gone(pid))
			return -ESRCH;
		if (t == 3000)
			return -EAGAIN;
		nanosleep(&ts, NULL);
	}
	return send_cmd(R, pid, sig, TRAIL_CTL_ATTACH);
}

/* Is `sig` caught by pid (SigCgt in /proc/PID/status)? */
int trail_recorder_pid_catches(pid_t pid, int sig)
{
	char path[64], buf[4096], *p;
	unsigned long long mask;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (trail__read_file(path, buf, sizeof(buf)) < 0)
		return 0;
	p = strstr(buf, "\nSigCgt:");
	if (!p)
		return 0;
	mask = strtoull(p + 8, NULL, 16);
	return sig > 0 && sig <= 64 && ((mask >> (sig - 1)) & 1);
}

int trail_recorder_pid_maps_libtrail(pid_t pid)
{
	return trail_recorder_pid_maps(pid, "/libtrail.so");
}

int trail_recorder_pid_maps(pid_t pid, const char *name)
{
	char path[64], *buf;
	int found = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	buf = malloc(1 << 22);
	if (!buf)
		return 0;
	n = trail__read_file(path, buf, 1 << 22);
	if (n > 0)
		found = strstr(buf, name) != NULL;
	free(buf);
	return found;
}

/* Announce new processes, notice dead ones and take their chunks. */
void trail__rec_check_procs(struct trail_recorder *R)
{
	uint32_t n = shm_nprocs(&R->m);

	for (uint32_t i = 0; i < n; i++) {
		struct proc_track *t = &R->pt[i];
		const struct trail_proc *pr = shm_proc(&R->m, i);
		uint32_t st = __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE);

		if (st == TRAIL_PS_FREE)
			continue;
		if (!t->announced) {
			t->pid = pr->pid;
			t->start = pr->start_time;
			t->announced = 1;
			trail__rec_write_proc(R, i, st);
		}
		if (st == TRAIL_PS_DETACHED || st == TRAIL_PS_FAILED)
			t->detached = 1;
		if (!t->dead && (st == TRAIL_PS_EXECED || !trail__proc_alive((pid_t)t->pid, t->start))) {
			if (R->child && (pid_t)t->pid == R->child && !R->child_done)
				continue; /* our zombie: reaped in the main loop */
			t->dead = 1;
			if (!R->o.overwrite) {
				trail__rec_salvage(R, i, 1);
				trail__rec_recycle_streams(R, (int)i);
			}
		}
	}
}

static struct trail_proc *find_proc(struct trail_recorder *R, pid_t pid)
{
	for (uint32_t i = shm_nprocs(&R->m); i-- > 0;) {
		struct trail_proc *pr = shm_proc(&R->m, i);

		if (pr->pid == (uint32_t)pid &&
		    __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE) != TRAIL_PS_FREE)
			return pr;
	}
	return NULL;
}

/* Why process pid could not join, from its FAILED slot pr. */
static void join_failed(struct trail_recorder *R, pid_t pid, int sig, const struct trail_proc *pr)
{
	char st[2048], path[64], *b;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", (int)pid, pr->tid);
	if (pr->result == -EBUSY && trail__read_file(path, st, sizeof(st)) > 0 &&
	    (b = strstr(st, "\nSigBlk:")) && (strtoull(b + 8, NULL, 16) & (1ull << (SIGTRAP - 1))))
		rec_err(R, "process %d: its thread %d blocks SIGTRAP, and would be killed "
			"by a breakpoint if it ran into one while function entries are "
			"patched; nothing was changed", (int)pid, pr->tid);
	else if (pr->result == -EBUSY)
		rec_err(R, "process %d: its thread %d blocks signal %d, so it cannot be "
			"moved out of the function entries being patched; nothing was "
			"changed", (int)pid, pr->tid, sig);
	else if (pr->result == -ETIMEDOUT)
		rec_err(R, "process %d: its thread %d did not answer signal %d within "
			"2 s while function entries were being patched (stopped, or "
			"starved of CPU); nothing was changed", (int)pid, pr->tid, sig);
	else if (pr->result == -EBADMSG)
		rec_err(R, "process %d: a filter (-f) or trigger (-T) does not compile for the "
			"fields of one of its events; nothing was changed", (int)pid);
	else if (pr->result == -E2BIG)
		rec_err(R, "process %d: more than %d triggers (-T) on one of its events; nothing "
			"was changed", (int)pid, TRAIL_TRIG_PER_EVENT);
	else if (pr->result == -ENOSPC)
		rec_err(R, "process %d: its threads' debug registers are taken (a debugger's "
			"watchpoints, or another tool's): a wprobe (w:) needs one in each thread, "
			"x86 has 4; nothing was changed", (int)pid);
	else if (pr->result == -ENXIO)
		rec_err(R, "process %d: a wprobe's (w:) variable is in an object it has not "
			"loaded; nothing was changed", (int)pid);
	else if (pr->result == -ENOMEDIUM)
		rec_err(R, "process %d: an --mmio PATH is not mapped in it (as /proc/%d/maps "
			"names it; a region it maps later is traced only in a program started "
			"by trail record -- CMD); nothing was changed", (int)pid, (int)pid);
	else if (pr->result == -EDOM)
		rec_err(R, "process %d: an --mmio-range is outside the file offsets PATH is "
			"mapped at; nothing was changed", (int)pid);
	else if (pr->result == -EMEDIUMTYPE)
		rec_err(R, "process %d: an --mmio PATH is mapped private (MAP_PRIVATE: its "
			"pages are the process's own copies), or no second mapping of it could "
			"be made; nothing was changed", (int)pid);
	else if (pr->result == -EUSERS)
		rec_err(R, "process %d is already in %d trail sessions, the most it "
			"can be in", (int)pid, TRAIL_MAX_SESSIONS);
	else
		rec_err(R, "process %d could not join: %s", (int)pid, strerror(-pr->result));
}

/* A session that patches code: pid's threads that block what patching
 * sends them opened (threads.c). 0, or -1 logged (as an error if
 * must, else as a warning, once per process: pt). */
static int open_signals(struct trail_recorder *R, pid_t pid, int sig, int must,
			struct proc_track *pt)
{
	char err[768];
	int opened = 0;

	if (!R->o.patches || (pt && pt->unopened))
		return 0;
	if (!trail_recorder_open_signals(pid, sig, &opened, err, sizeof(err)))
		return 0;
	if (must) {
		rec_err(R, "%s; nothing was changed (the way out: start the program under "
			"trail record -- CMD, where libtrail keeps them open)", err);
	} else {
		rec_warn(R, "%s: a breakpoint it meets would kill the process", err);
		if (pt)
			pt->unopened = 1;
	}
	return -1;
}

/* Every half second: threads the program created with every signal
 * blocked, opened before they meet a breakpoint. */
void trail__rec_watch_threads(struct trail_recorder *R)
{
	for (uint32_t i = 0; R->o.patches && i < shm_nprocs(&R->m); i++) {
		struct proc_track *t = &R->pt[i];
		const struct trail_proc *pr = shm_proc(&R->m, i);
		uint32_t st = __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE);

		if (t->announced && !t->dead && st == TRAIL_PS_ACTIVE)
			open_signals(R, (pid_t)pr->pid, pr->signal, 0, t);
	}
}

int trail_recorder_attach(struct trail_recorder *R, const int *sigs)
{
	int joined = 0;

	for (int i = 0; i < R->o.npids; i++) {
		pid_t pid = R->o.pids[i];
		struct trail_proc *pr = NULL;
		int r;

		if (open_signals(R, pid, sigs[i], 1, NULL))
			return -1;
		r = send_attach(R, pid, sigs[i]);
		if (r == -ESRCH) { /* it exited since it was checked */
			rec_warn(R, "process %d exited before it could be attached", (int)pid);
			continue;
		}
		if (r == -EAGAIN) {
			rec_err(R, "process %d catches signal %d no more (it ran a program "
				"without libtrail?): not attached", (int)pid, sigs[i]);
			return -1;
		}
		if (r) {
			rec_err(R, "cannot signal process %d: %s", (int)pid, strerror(-r));
			return -1;
		}
		/* 3 s to take the request (it then claims a process slot, k),
		 * 60 s to join: it may wait for other sessions' attaches first */
		const struct trail_proc *k = NULL;

		for (int t = 0; t < (k ? 60000 : 3000) && !(pr = find_proc(R, pid)); t++) {
			struct timespec ts = {0, 1000000};

			for (uint32_t n = shm_nprocs(&R->m), j = 0; !k && j < n; j++)
				if (__atomic_load_n(&shm_proc(&R->m, j)->pid, __ATOMIC_ACQUIRE) ==
				    (uint32_t)pid)
					k = shm_proc(&R->m, j);
			if (k && !trail__proc_alive(pid, k->start_time))
				break;
			if (!k && t % 50 == 0 && trail__proc_gone(pid))
				break;
			/* asked again every 0.5 s: a signal can be lost on the
			 * way (TSan defers it to the thread the kernel chose,
			 * and drops it if that thread ends first); a repeat of
			 * a request already taken is ignored */
			if (!k && t && t % 500 == 0 &&
			    trail_recorder_pid_catches(pid, sigs[i]) &&
			    send_cmd(R, pid, sigs[i], TRAIL_CTL_ATTACH) == -ESRCH)
				break;
			nanosleep(&ts, NULL);
		}
		if (!pr && !k && trail__proc_gone(pid)) {
			rec_warn(R, "process %d exited before it could be attached", (int)pid);
			continue;
		}
		if (!pr && !k) {
			rec_err(R, "process %d did not answer the attach request within 3 s "
				"(is signal %d blocked in all its threads?)", (int)pid, sigs[i]);
			return -1;
		}
		if (!pr && !trail__proc_alive(pid, k->start_time)) {
			rec_warn(R, "process %d exited while it was joining", (int)pid);
			continue;
		}
		if (!pr) {
			rec_err(R, "process %d took the attach request but did not finish "
				"joining within 60 s", (int)pid);
			return -1;
		}
		if (__atomic_load_n(&pr->state, __ATOMIC_ACQUIRE) == TRAIL_PS_FAILED) {
			join_failed(R, pid, sigs[i], pr);
			return -1;
		}
		if (R->o.tracer)
			rec_info(R, "attached to process %d (%.16s): %u function%s hooked",
				 (int)pid, pr->comm, pr->functions, pr->functions == 1 ? "" : "s");
		else
			rec_info(R, "attached to process %d (%.16s): %d event%s enabled",
				 (int)pid, pr->comm, pr->result, pr->result == 1 ? "" : "s");
		joined++;
	}
	if (!joined) {
		rec_err(R, R->o.npids == 1 ? "process %d exited before it could be attached: "
					     "nothing was recorded"
					   : "every process exited before it could be attached "
					     "(the first: %d): nothing was recorded",
			(int)R->o.pids[0]);
		return -1;
	}
	return 0;
}

/* Ask every live process to detach; wait for them (signalling again while
 * one reports that it was interrupted mid-write). */
void trail_recorder_detach(struct trail_recorder *R)
{
	/* 2 s for every process to answer; one that took the request
	 * (DETACH_PENDING: its events are off, it unpatches its code, which
	 * takes a loaded machine a few seconds for thousands of functions)
	 * gets 10 */
	for (int round = 0, pending = 0; round < (pending ? 1000 : 200); round++) {
		uint32_t n = shm_nprocs(&R->m);
		int waiting = 0;

		pending = 0;
		for (uint32_t i = 0; i < n; i++) {
			struct proc_track *t = &R->pt[i];
			const struct trail_proc *pr = shm_proc(&R->m, i);
			uint32_t st = __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE);
			int sig = pr->signal;

			if (st == TRAIL_PS_FREE || st == TRAIL_PS_DETACHED || st == TRAIL_PS_FAILED) {
				t->detached = st != TRAIL_PS_FREE;
				continue;
			}
			if (!t->announced)
				trail__rec_check_procs(R);
			/* an image replaced by exec never answers: it joined again
			 * (EXECED), or catches the control signal no more (exec
			 * resets handlers) and has no libtrail mapped; finish()
			 * salvages it as a dead one */
			if (t->dead || st == TRAIL_PS_EXECED ||
			    !trail__proc_alive((pid_t)pr->pid, pr->start_time) ||
			    (round && sig > 0 && sig <= 64 &&
			     !trail_recorder_pid_catches((pid_t)pr->pid, sig) &&
			     !trail_recorder_pid_maps_libtrail((pid_t)pr->pid))) {
				t->dead = 1;
				continue;
			}
			if (sig <= 0 || sig > 64) {
				t->stuck = 1;
				continue;
			}
			if (!round) /* leaving unpatches: threads made since */
				open_signals(R, (pid_t)pr->pid, sig, 0, t);
			/* every 50 ms; every 250 once taken (it is at work) */
			if (round % (st == TRAIL_PS_DETACH_PENDING ? 25 : 5) == 0)
				send_cmd(R, (pid_t)pr->pid, sig, TRAIL_CTL_DETACH);
			waiting++;
			pending += st == TRAIL_PS_DETACH_PENDING;
		}
		if (!waiting)
			return;
		struct timespec ts = {0, 10000000};
		nanosleep(&ts, NULL);
	}
	for (uint32_t i = 0; i < shm_nprocs(&R->m); i++) {
		const struct trail_proc *pr = shm_proc(&R->m, i);
		uint32_t st = __atomic_load_n(&pr->state, __ATOMIC_ACQUIRE);

		if (!R->pt[i].dead && (st == TRAIL_PS_ACTIVE || st == TRAIL_PS_DETACH_PENDING)) {
			R->pt[i].stuck = 1;
			rec_warn(R, "process %u did not detach within %d s; taking its events "
				 "committed so far", pr->pid, st == TRAIL_PS_DETACH_PENDING ? 10 : 2);
		}
	}
}

/*
 * -a: ask every registered process of ours that is not in the session yet.
 * Asynchronous: a process that does not answer is simply not recorded.
 */
size_t trail_recorder_attach_new(struct trail_recorder *R)
{
	char path[512];
	struct dirent *d;
	DIR *dir;
	int dfd;

	if (trail__registry_path(path, sizeof(path)) ||
	    (dfd = trail__registry_open(path, 0)) < 0)
		return R->ntried;
	dir = fdopendir(dfd);
	if (!dir) {
		close(dfd);
		return R->ntried;
	}
	while ((d = readdir(dir))) {
		struct trail_reg reg;
		struct stat st;
		char *end, p2[64];
		long pid = strtol(d->d_name, &end, 10);
		size_t k;

		if (*end || pid <= 0 || pid == getpid() ||
		    trail__registry_get(dfd, (pid_t)pid, &reg) ||
		    !trail__proc_alive((pid_t)pid, reg.start))
			continue;
		for (k = 0; k < R->ntried; k++)
			if (R->tried[k].pid == (pid_t)pid && R->tried[k].start == reg.start)
				break;
		if (k < R->ntried)
			continue;
		if (R->ntried == R->tried_cap) {
			size_t cap = R->tried_cap ? R->tried_cap * 2 : 64;
			void *nt = realloc(R->tried, cap * sizeof(*R->tried));

			if (!nt)
				break;
			R->tried = nt;
			R->tried_cap = cap;
		}
		R->tried[R->ntried].pid = (pid_t)pid;
		R->tried[R->ntried].start = reg.start;
		R->ntried++;
		snprintf(p2, sizeof(p2), "/proc/%ld", pid);
		if (stat(p2, &st) || st.st_uid != geteuid() || !reg.signal ||
		    !trail_recorder_pid_catches((pid_t)pid, reg.signal) ||
		    !trail_recorder_pid_maps_libtrail((pid_t)pid))
			continue;
		if (R->o.patches) {
			char err[512];

			/* the decoder (libtrail cannot load it in its signal
			 * handler), then its threads made to take what
			 * patching sends them, before it is asked */
			if (R->o.decoder && !trail_recorder_pid_maps((pid_t)pid, "/libtrail-decoder.so") &&
			    trail_recorder_inject((pid_t)pid, R->o.decoder, err, sizeof(err)) &&
			    !trail__proc_gone((pid_t)pid))
				rec_warn(R, "process %ld: %s: its functions without patchable entries "
					 "are not hooked", pid, err);
			if (open_signals(R, (pid_t)pid, reg.signal, 0, NULL))
				continue;
		}
		send_cmd(R, (pid_t)pid, reg.signal, TRAIL_CTL_ATTACH);
	}
	closedir(dir);
	return R->ntried;
}
