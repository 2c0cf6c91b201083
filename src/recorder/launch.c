/* SPDX-License-Identifier: MIT */
/*
 * launch.c - the command a recording starts: fork, exec with libtrail
 * preloaded and TRAIL_SESSION naming the arena (libtrail's constructor
 * joins before main), and reap it; and the drain's scheduling priority,
 * which the command must not inherit.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "internal.h"

/*
 * The drain must run when it is due. It needs little CPU (~12 % of one at
 * 240 MB/s), but on a machine the traced program keeps busy the scheduler
 * left it waiting 1.3 to 7 times its CPU time, seconds per run, and the
 * buffer filled: a busy server under function_graph lost up to 6 % of its
 * events at the default buffer, none with the recorder SCHED_FIFO
 * (doc/performance.md). So the recorder asks for SCHED_FIFO 1 where it may
 * (root, CAP_SYS_NICE, RLIMIT_RTPRIO), else for nice -10 (RLIMIT_NICE), else
 * runs as it was started. It sleeps between passes, and the kernel's RT
 * throttling bounds it anyway. The command gets the policy and nice value
 * trail was started with.
 */
static const char *drain_priority(struct trail_recorder *R)
{
	struct sched_param sp = {.sched_priority = 1};

	R->sched_orig.policy = sched_getscheduler(0);
	sched_getparam(0, &R->sched_orig.param);
	errno = 0;
	R->sched_orig.nice = getpriority(PRIO_PROCESS, 0);
	if (R->sched_orig.policy < 0 || errno)
		return NULL;
	R->sched_orig.saved = 1;
	if (R->sched_orig.policy != SCHED_OTHER)
		return NULL; /* the user chose: keep it */
	if (!sched_setscheduler(0, SCHED_FIFO | SCHED_RESET_ON_FORK, &sp))
		return "SCHED_FIFO 1";
	if (R->sched_orig.nice > -10 && !setpriority(PRIO_PROCESS, 0, -10))
		return "nice -10";
	return NULL;
}

const char *trail_recorder_raise_priority(struct trail_recorder *R)
{
	R->priority = drain_priority(R);
	return R->priority;
}

/* In the command's process, before exec: as trail was started. */
void trail__rec_priority_restore(struct trail_recorder *R)
{
	if (!R->sched_orig.saved)
		return;
	sched_setscheduler(0, R->sched_orig.policy, &R->sched_orig.param);
	setpriority(PRIO_PROCESS, 0, R->sched_orig.nice);
}

int trail_recorder_launch(struct trail_recorder *R, const char *libtrail,
			  void (*child_setup)(void *ctx), void *ctx)
{
	char env_session[64], *preload = NULL;
	const char *old = getenv("LD_PRELOAD");
	int pfd[2], err = 0;
	ssize_t n;

	snprintf(env_session, sizeof(env_session), "%d:%d", (int)getpid(), R->memfd);
	if (asprintf(&preload, "%s%s%s", libtrail, old && *old ? " " : "",
		     old ? old : "") < 0)
		return -1;
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		rec_err(R, "pipe: %s", strerror(errno));
		free(preload);
		return -1;
	}
	R->child = fork();
	if (R->child < 0) {
		rec_err(R, "fork: %s", strerror(errno));
		close(pfd[0]);
		close(pfd[1]);
		free(preload);
		R->child = 0;
		return -1;
	}
	if (R->child == 0) {
		sigset_t none;

		close(pfd[0]);
		if (child_setup)
			child_setup(ctx);
		trail__rec_priority_restore(R);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		setenv("TRAIL_SESSION", env_session, 1);
		setenv("LD_PRELOAD", preload, 1);
#if defined(__SANITIZE_ADDRESS__)
		{ /* an ASan build preloads an ASan libtrail */
			const char *ao = getenv("ASAN_OPTIONS");
			char *v = NULL;

			if (asprintf(&v, "%s%sverify_asan_link_order=0", ao ? ao : "",
				     ao && *ao ? ":" : "") > 0)
				setenv("ASAN_OPTIONS", v, 1);
		}
#endif
		execv(R->o.cmd_path, R->o.cmd);
		err = errno;
		if (write(pfd[1], &err, sizeof(err)) < 0)
			_exit(127);
		_exit(127);
	}
	free(preload);
	close(pfd[1]);
	n = read(pfd[0], &err, sizeof(err));
	close(pfd[0]);
	if (n == (ssize_t)sizeof(err)) {
		rec_err(R, "cannot run %s: %s", R->o.cmd[0], strerror(err));
		waitpid(R->child, NULL, 0);
		R->child = 0;
		return -1;
	}
	return 0;
}

int trail_recorder_reap(struct trail_recorder *R)
{
	if (R->child && !R->child_done) {
		int st;

		if (waitpid(R->child, &st, WNOHANG) == R->child) {
			R->child_done = 1;
			R->child_status = st;
		}
	}
	return R->child_done;
}

pid_t trail_recorder_child(const struct trail_recorder *R, int *done, int *status)
{
	if (done)
		*done = R->child_done;
	if (status)
		*status = R->child_status;
	return R->child;
}
