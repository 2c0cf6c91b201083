/* SPDX-License-Identifier: MIT */
/*
 * proxy.c - control requests to another user's process, for a recorder
 * run by root (trail record -P on an nginx worker running as nobody).
 *
 * A process joins by opening /proc/SENDER/fd/FD, which the kernel allows
 * only if it may inspect the sender: same user, and dumpable. A root
 * recorder is neither to it. So, for each user whose processes it
 * records, the recorder forks a proxy that takes that user's ids, is
 * dumpable, keeps the arena's memfd at the same descriptor number, and
 * sends the control signals on the recorder's behalf:
 *
 *   recorder --(pid, signal, value) over a socketpair--> proxy (uid U)
 *   proxy    --sigqueue--> the process (uid U): si_uid is its own, and
 *            /proc/PROXY/fd/FD is open to it
 *   proxy    --errno--> recorder
 *
 * The process takes the proxy for its recorder (it detaches on the
 * proxy's requests, and a proxy that died means an orphaned session), so
 * the proxy lives as long as the recorder: PR_SET_PDEATHSIG ends it with
 * the recorder, however that ends; closing the socket ends it earlier.
 * It keeps no other descriptor (the output file's lock must go with the
 * recorder). The arena is root's file: libtrail accepts one of its own
 * user's or root's.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../common/util.h"
#include "internal.h"

struct proxy_req {
	int32_t pid, sig, value;
};

/* the uid and gid a process runs as (its real ones, which si_uid and
 * the /proc fd check compare), or -1 */
static int ids_of(pid_t pid, uid_t *uid, gid_t *gid)
{
	char path[64], st[4096], *p;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if (trail__read_file(path, st, sizeof(st)) <= 0 || !(p = strstr(st, "\nUid:")))
		return -1;
	*uid = (uid_t)strtoul(p + 5, NULL, 10);
	if (!(p = strstr(st, "\nGid:")))
		return -1;
	*gid = (gid_t)strtoul(p + 5, NULL, 10);
	return 0;
}

/* every descriptor but keep and sock closed */
static void close_others(int keep, int sock)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int dfd = d ? dirfd(d) : -1;

	while (d && (e = readdir(d))) {
		int fd = atoi(e->d_name);

		if (e->d_name[0] != '.' && fd > 2 && fd != keep && fd != sock && fd != dfd)
			close(fd);
	}
	if (d)
		closedir(d);
}

static __attribute__((noreturn)) void proxy_main(int memfd, int sock, uid_t uid, gid_t gid,
						  pid_t parent)
{
	static const int ignored[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGTSTP, SIGCHLD};

	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(0);
	/* a terminal's Ctrl-C (the whole process group) or timeout(1)'s
	 * signal is the recorder's to act on: it ends the proxy when done */
	for (size_t i = 0; i < sizeof(ignored) / sizeof(ignored[0]); i++)
		signal(ignored[i], SIG_IGN);
	close_others(memfd, sock);
	if (setgroups(0, NULL) || setresgid(gid, gid, gid) || setresuid(uid, uid, uid))
		_exit(1);
	prctl(PR_SET_DUMPABLE, 1); /* reset by the change of ids */
	for (;;) {
		struct proxy_req q;
		union sigval v;
		ssize_t n = recv(sock, &q, sizeof(q), 0);
		int32_t e;

		if (n < 0 && errno == EINTR)
			continue;
		if (n != (ssize_t)sizeof(q))
			break;
		v.sival_int = q.value;
		e = sigqueue((pid_t)q.pid, q.sig, v) ? errno : 0;
		if (send(sock, &e, sizeof(e), MSG_NOSIGNAL) != (ssize_t)sizeof(e))
			break;
	}
	_exit(0);
}

/* the proxy for uid (made now if needed): its slot, or -errno */
static int proxy_for(struct trail_recorder *R, uid_t uid, gid_t gid)
{
	int sv[2];
	pid_t parent = getpid(), child;

	for (int i = 0; i < R->nproxies; i++)
		if (R->proxies[i].uid == uid)
			return i;
	if (R->nproxies == (int)(sizeof(R->proxies) / sizeof(R->proxies[0])))
		return -EUSERS;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -errno;
	child = fork();
	if (child < 0) {
		int e = -errno;

		close(sv[0]);
		close(sv[1]);
		return e;
	}
	if (!child) {
		close(sv[0]);
		proxy_main(R->memfd, sv[1], uid, gid, parent);
	}
	close(sv[1]);
	R->proxies[R->nproxies].uid = uid;
	R->proxies[R->nproxies].pid = child;
	R->proxies[R->nproxies].sock = sv[0];
	return R->nproxies++;
}

int trail__rec_sigqueue(struct trail_recorder *R, pid_t pid, int sig, int value)
{
	struct proxy_req q = {pid, sig, value};
	uid_t uid;
	gid_t gid;
	int32_t e;
	int i;

	if (geteuid() != 0 || ids_of(pid, &uid, &gid) || uid == geteuid()) {
		union sigval v;

		v.sival_int = value;
		return sigqueue(pid, sig, v) < 0 ? -errno : 0;
	}
	if ((i = proxy_for(R, uid, gid)) < 0)
		return i;
	if (send(R->proxies[i].sock, &q, sizeof(q), MSG_NOSIGNAL) != (ssize_t)sizeof(q) ||
	    recv(R->proxies[i].sock, &e, sizeof(e), 0) != (ssize_t)sizeof(e))
		return -EPIPE;
	return -e;
}

void trail__rec_proxies_end(struct trail_recorder *R)
{
	for (int i = 0; i < R->nproxies; i++) {
		close(R->proxies[i].sock);
		waitpid(R->proxies[i].pid, NULL, 0);
	}
	R->nproxies = 0;
}
