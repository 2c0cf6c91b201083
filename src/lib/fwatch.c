/* SPDX-License-Identifier: MIT */
/*
 * fwatch.c - wprobes (w: in the probe grammar, fetch.h): hardware
 * watchpoints on a process's data, armed for each session that records
 * one.
 *
 * A watchpoint is a perf event of type PERF_TYPE_BREAKPOINT on each
 * thread of the process (one debug register each), opened from here for
 * the threads there are at the join (/proc/self/task) with inherit and
 * inherit_thread, so that every thread they create later has it too, and
 * sigtrap: the kernel sends the accessing thread a synchronous SIGTRAP
 * (si_code TRAP_PERF) after the access, with sig_data naming the slot.
 * src/arch's SIGTRAP handler asks on_trap first; the record is the
 * probe's (fprobe.c: __probe_ip, the instruction after the access, then
 * the arguments: $addr, $value read now, registers at the trap, memory).
 * remove_on_exec takes them away at an exec; closing the events (the last
 * session leaving) takes the inherited ones with them.
 *
 * At most TRAIL_WATCH_SLOTS (x86's four debug registers a thread) in a
 * process, whatever the sessions; a thread whose registers are taken (a
 * debugger's watchpoints, another tool's) refuses the join: -ENOSPC, as
 * a fifth watchpoint; a variable whose object is not loaded: -ENXIO.
 * Everything here runs under the control lock, in the control signal
 * handler: no malloc (mmap), async-signal-safe calls only.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "../arch/arch.h"
#include "../common/fetch.h"
#include "../common/spec.h"
#include "fobjs.h"
#include "evx.h"
#include "fprobe-int.h"
#include "internal.h"

#define TRAIL_WATCH_SLOTS 4
#define WATCH_TAG 0x7477617463680000ull /* "twatch": sig_data's high bits */
#define WATCH_FDS 4096                  /* threads at a join */

struct watch {
	struct fprobe *pr;         /* NULL: a free slot */
	struct fprobe_att *at;     /* its @SYM operands resolved */
	uintptr_t addr;
	uint32_t sessions;         /* the sessions recording it */
	uint64_t shadow;           /* the value as the last trap left it ($old) */
	int *fds;                  /* one event a thread there was (mmap) */
	int nfd;
};

static struct watch watches[TRAIL_WATCH_SLOTS];

/* where a watch with no address yet (w@-1) points: nothing writes it */
static uint64_t parked[TRAIL_WATCH_SLOTS] __attribute__((aligned(8)));

/* ---------------------------------------------------------------- traps */

/* src/arch's SIGTRAP handler's question: a trap of ours? */
static int on_trap(void *sip, void *ucv)
{
	const siginfo_t *si = sip;
	ucontext_t *uc = ucv;
	struct trail_arch_regs r;
	uintptr_t sp, ip;
	const struct watch *w;
	uint64_t data;
	uint32_t m;

	/* (glibc's siginfo_t has no si_perf_data: it follows si_addr) */
	memcpy(&data, (const char *)&si->si_addr + sizeof(void *), 8);
	if ((data & ~0xffffull) != WATCH_TAG || (data & 0xffff) >= TRAIL_WATCH_SLOTS)
		return 0;
	w = &watches[data & 0xffff];
	m = __atomic_load_n(&w->sessions, __ATOMIC_ACQUIRE);
	if (!m || !w->at)
		return 1; /* (a slot being freed: its events are closing) */
	trail_arch_regs_from_uc(uc, &r, &sp, &ip);
	{
		uintptr_t addr = __atomic_load_n(&w->addr, __ATOMIC_ACQUIRE);
		uint64_t now = 0, old;

		/* $old: what the last trap (or the arming) saw; a race of two
		 * threads' writes gives each the other's as its old value */
		trail_arch_load_safe(addr, w->pr->p.hdr->jump >> 4, &now);
		old = __atomic_exchange_n((uint64_t *)&w->shadow, now, __ATOMIC_ACQ_REL);
		trail__self++; /* (libtrail's own work: no probe records what it calls) */
		trail__fprobe_fire_watch(w->at, m, &r, sp, ip, addr, old);
		trail__self--;
	}
	return 1;
}

/* ------------------------------------------------------------- arming */

static char exe[4096];

struct find {
	const char *want;
	uintptr_t bias;
	int found;
};

static int same_file(const char *a, const char *b)
{
	struct stat sa, sb;
	const char *ba = strrchr(a, '/'), *bb = strrchr(b, '/');

	if (!strcmp(a, b))
		return 1;
	if (!strchr(b, '/')) /* a basename */
		return ba && !strcmp(ba + 1, b);
	(void)bb;
	return !stat(a, &sa) && !stat(b, &sb) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

static int find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	const char *path = info->dlpi_name && info->dlpi_name[0] ? info->dlpi_name : exe;

	(void)size;
	if (!path[0] || !same_file(path, f->want))
		return 0;
	f->bias = info->dlpi_addr;
	f->found = 1;
	return 1;
}

/* the watched address of pr: its variable's in its object as loaded
 * (0: the object is not) */
static uintptr_t watch_addr(const struct fprobe *pr, uintptr_t *bias)
{
	struct find f = {pr->p.obj, 0, 0};

	*bias = 0;
	if (pr->p.hdr->flags & TRAIL_PROBE_F_ABS)
		return pr->p.hdr->offset == UINT64_MAX ? 1 : (uintptr_t)pr->p.hdr->offset;
	if (!exe[0]) {
		ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

		exe[n > 0 ? n : 0] = '\0';
	}
	dl_iterate_phdr(find_one, &f);
	if (!f.found)
		return 0;
	*bias = f.bias;
	return f.bias + (uintptr_t)pr->p.hdr->offset;
}

/* the watch's event (a move changes bp_addr alone: the kernel compares
 * the rest with what the event has) */
static void watch_attr(const struct fprobe *pr, uintptr_t addr, unsigned slot, struct perf_event_attr *pa)
{
	struct perf_event_attr a;
	unsigned access = pr->p.hdr->jump & 3, len = pr->p.hdr->jump >> 4;

	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = access == 1 ? HW_BREAKPOINT_R : access == 2 ? HW_BREAKPOINT_W : HW_BREAKPOINT_RW;
	a.bp_addr = addr;
	a.bp_len = len == 1 ? HW_BREAKPOINT_LEN_1 : len == 2 ? HW_BREAKPOINT_LEN_2
		   : len == 4 ? HW_BREAKPOINT_LEN_4 : HW_BREAKPOINT_LEN_8;
	a.sample_period = 1;
	a.sigtrap = 1;
	a.remove_on_exec = 1;
	a.inherit = 1;
	a.inherit_thread = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	a.sig_data = WATCH_TAG | slot;
	*pa = a;
}

static int watch_open(const struct fprobe *pr, uintptr_t addr, unsigned slot, pid_t tid)
{
	struct perf_event_attr a;

	watch_attr(pr, addr, slot, &a);
	return (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static void watch_close(struct watch *w)
{
	for (int i = 0; i < w->nfd; i++)
		close(w->fds[i]);
	w->nfd = 0;
}

/* one event on each thread there is: 0, or -errno (none left open) */
static int arm(struct watch *w, unsigned slot)
{
	char buf[4096];
	int dfd = open("/proc/self/task", O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;
	long n;

	if (dfd < 0)
		return -errno;
	while (!r && (n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n && !r;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			pid_t tid = 0;
			int fd;

			off += d->d_reclen;
			for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
				tid = tid * 10 + (*c - '0');
			if (!tid)
				continue;
			if (w->nfd == WATCH_FDS) {
				r = -E2BIG;
				break;
			}
			fd = watch_open(w->pr, w->addr, slot, tid);
			if (fd < 0 && errno != ESRCH) /* (a thread that ended meanwhile) */
				r = -errno; /* (ENOSPC: its debug registers are taken) */
			else if (fd >= 0)
				w->fds[w->nfd++] = fd;
		}
	close(dfd);
	if (r)
		watch_close(w);
	return r;
}

/* ---------------------------------------------------- set/clear_wprobe */

/* the watch's events moved to addr (the inherited ones with them:
 * PERF_EVENT_IOC_MODIFY_ATTRIBUTES) */
static int watch_move(struct watch *w, unsigned slot, uintptr_t addr)
{
	struct perf_event_attr a;
	int bad = 0;

	watch_attr(w->pr, addr, slot, &a);
	for (int i = 0; i < w->nfd; i++)
		bad |= ioctl(w->fds[i], PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a) != 0;
	{
		uint64_t v = 0;

		trail_arch_load_safe(addr, w->pr->p.hdr->jump >> 4, &v);
		__atomic_store_n(&w->shadow, v, __ATOMIC_RELAXED);
	}
	__atomic_store_n(&w->addr, addr, __ATOMIC_RELEASE);
	return bad ? -1 : 0;
}

/* evx.h's trail__wprobe_move */
static int watch_set(const char *provider, const char *name, int op, uintptr_t addr)
{
	for (unsigned i = 0; i < TRAIL_WATCH_SLOTS; i++) {
		struct watch *w = &watches[i];
		struct fprobe *pr = __atomic_load_n(&w->pr, __ATOMIC_ACQUIRE);
		unsigned len;

		if (!pr || strcmp(pr->rt.provider, provider) || strcmp(pr->rt.name, name))
			continue;
		len = pr->p.hdr->jump >> 4;
		if (op == TRAIL_FWATCH_SET) {
			if (!addr || (addr & (len - 1u)))
				return -EINVAL; /* (unaligned: x86 cannot) */
			return watch_move(w, i, addr);
		}
		if (op == TRAIL_FWATCH_CLEAR_IF && __atomic_load_n(&w->addr, __ATOMIC_ACQUIRE) != addr)
			return 0;
		return watch_move(w, i, (uintptr_t)&parked[i]);
	}
	return -ENOENT;
}

/* ------------------------------------------------------------ sessions */

struct wjoin {
	unsigned s;
	const char *spec;
	int err, any;
};

static int watch_line(const char *v, size_t len, void *arg)
{
	struct wjoin *j = arg;
	struct fprobe *pr = trail__fprobe_get(v, len);
	struct watch *w = NULL;
	uintptr_t bias;
	unsigned slot;
	int r;

	if (!pr) {
		j->err = -EPROTO;
		return 1;
	}
	if (pr->kind != TRAIL_PROBE_WATCH ||
	    (!trail__spec_match(j->spec, pr->rt.provider, pr->rt.name) && !pr->rt.x[j->s]))
		return 0;
	j->any = 1;
	for (slot = 0; slot < TRAIL_WATCH_SLOTS; slot++)
		if (watches[slot].pr == pr) {
			__atomic_fetch_or(&watches[slot].sessions, 1u << j->s, __ATOMIC_RELEASE);
			return 0;
		}
	for (slot = 0; slot < TRAIL_WATCH_SLOTS && watches[slot].pr; slot++)
		;
	if (slot == TRAIL_WATCH_SLOTS) {
		j->err = -ENOSPC; /* (a fifth: the CLI says it before) */
		return 1;
	}
	w = &watches[slot];
	if (!w->fds) {
		void *m = mmap(NULL, WATCH_FDS * sizeof(int), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (m == MAP_FAILED) {
			j->err = -ENOMEM;
			return 1;
		}
		w->fds = m;
	}
	w->addr = watch_addr(pr, &bias);
	if (w->addr == 1) /* (no address yet: parked until a set_wprobe) */
		w->addr = (uintptr_t)&parked[slot];
	if (!w->addr) {
		j->err = -ENXIO; /* (its object is not loaded) */
		return 1;
	}
	if (!(w->at = trail__fprobe_att_make(pr, bias))) {
		j->err = -ENOMEM;
		return 1;
	}
	if ((r = trail_arch_perf_trap(on_trap))) {
		j->err = r;
		return 1;
	}
	if (trail__signals_guard_faults() < 0) { /* (the loads below: fault-safe) */
		j->err = -EIO;
		return 1;
	}
	__atomic_store_n(&trail__wprobe_move, watch_set, __ATOMIC_RELEASE);
	w->pr = pr;
	w->shadow = 0;
	trail_arch_load_safe(w->addr, pr->p.hdr->jump >> 4, &w->shadow);
	__atomic_store_n(&w->sessions, 1u << j->s, __ATOMIC_RELEASE);
	if ((r = arm(w, slot))) {
		__atomic_store_n(&w->sessions, 0, __ATOMIC_RELEASE);
		w->pr = NULL;
		j->err = r;
		return 1;
	}
	return 0;
}

static void fwatch_leave(unsigned s)
{
	for (unsigned i = 0; i < TRAIL_WATCH_SLOTS; i++) {
		struct watch *w = &watches[i];

		if (!w->pr || !(__atomic_and_fetch(&w->sessions, ~(1u << s), __ATOMIC_RELEASE) == 0))
			continue;
		/* the last session: its events closed (those the threads
		 * inherited go with them); a trap already sent finds the slot
		 * without sessions */
		watch_close(w);
		w->pr = NULL;
	}
}

static int fwatch_join(unsigned s, struct psess *ps, void *uc)
{
	struct wjoin j = {s, ps->spec, 0, 0};

	(void)uc;
	trail__spec_opts(ps->spec, "probe", watch_line, &j);
	/* the arguments' loads need the fault handler; the recorder the
	 * objects, to name the instructions (__probe_ip) */
	if (!j.err && j.any && (trail__signals_guard_faults() < 0 || trail__fobjs_discover()))
		j.err = -ENOMEM;
	if (j.err) {
		fwatch_leave(s);
		return j.err;
	}
	for (unsigned i = 0; j.any && i < trail__nobjs; i++)
		trail__fobjs_publish(ps, s, &trail__objs[i]);
	return 0;
}

/* a forked child: its thread has none of the events (inherit_thread:
 * threads only), the fds it got are the parent's: closed, and each watch
 * armed again on its own thread, for the sessions it stays in */
static void fwatch_forked_child(void)
{
	for (unsigned i = 0; i < TRAIL_WATCH_SLOTS; i++) {
		struct watch *w = &watches[i];

		watch_close(w);
		if (w->pr && __atomic_load_n(&w->sessions, __ATOMIC_RELAXED) && arm(w, i)) {
			__atomic_store_n(&w->sessions, 0, __ATOMIC_RELEASE);
			w->pr = NULL;
		}
	}
}

static const struct trail_source fwatch = {
	.name = "wprobes",
	.join = fwatch_join,
	.leave = fwatch_leave,
	.forked_child = fwatch_forked_child,
};
TRAIL_SOURCE(fwatch);
