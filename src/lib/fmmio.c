/* SPDX-License-Identifier: MIT */
/*
 * fmmio.c - MMIO tracing (trail record --mmio PATH[,START,END]): every load
 * and store the program makes to a shared mapping of PATH (a UIO or VFIO
 * BAR, /dev/mem, a memfd), recorded as mmio:rw, while all its threads
 * keep running.
 *
 * The kernel's mmiotrace arms a page, single-steps the access, re-arms,
 * and so must offline all but one CPU: another CPU would find the page
 * present during the step. Here the program's pages stay PROT_NONE for as
 * long as a session records them, and are never made present again for
 * it: the access faults (SEGV_ACCERR), the SIGSEGV handler decodes the
 * instruction (src/arch/x86_64/mmio.c) and runs it against a second
 * mapping of the same pages that only libtrail uses (the alias), writes
 * its registers and flags into the signal's context, moves %rip past it,
 * and records the access. No thread can ever see the pages mapped while
 * they are traced, whatever the number of CPUs.
 *
 *   program:  [ lo ........ hi )  PROT_NONE while traced
 *                  \ same pages (page cache, device memory) /
 *   libtrail: [ alias ..... )     the program's protection
 *
 * The alias: mremap(lo, 0, len, MREMAP_MAYMOVE), which duplicates a
 * MAP_SHARED mapping; else a descriptor the program has open on the same
 * file (a VFIO device's), or the file opened again (a path that names a
 * file: /dev/uio0, /dev/mem, a regular file), mapped at the same
 * offset (alias_of()). A private mapping has none (its pages are the process's own
 * copies): refused (-EMEDIUMTYPE), as is a PATH not mapped at an attach
 * (-ENOMEDIUM) and a range outside the mapping (-EDOM).
 *
 * An instruction the decoder does not emulate (LOCK, string, vector,
 * XCHG) is recorded as mmio:unknown (its bytes, its address) and ends the
 * region's tracing: the program's protection back, the instruction run
 * again natively, the program unchanged from then on.
 *
 * Regions mapped after the join: libtrail (preloaded by trail record --
 * CMD) interposes mmap, mmap64, munmap and mremap: a new shared mapping of
 * a wanted file is armed before mmap returns; a traced region unmapped or
 * moved stops being traced first (mmio:unmap).
 *
 * Stopping a region while other threads may be in the handler: the
 * protection is given back first (no new fault), then the state says
 * STOPPED (a handler that faulted before sees it and re-runs the
 * instruction natively), then `busy` (handlers using the alias) is
 * waited for, then the alias goes. The slot stays as a tombstone with
 * its range: a fault that arrives late still finds it. The handler's
 * increment of busy and its load of the state, and the stopper's store
 * of the state and its load of busy, are sequentially consistent (the
 * Dekker pattern: one of them sees the other).
 *
 * Joins run under the control lock in the control signal handler; the
 * interposed calls take the same lock (trail__ctl_enter). No malloc
 * anywhere: static tables, async-signal-safe calls.
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include <trail/trail.h>

#include "../arch/arch.h"
#include "../common/spec.h"
#include "fobjs.h"
#include "internal.h"
#include "record.h"

#define REGIONS 16
#define WANTS 8
#define PATH_MAX_M 256

/* mmio:rw: one access; write 1 for a store, 0 for a load */
TRAIL__DESCRIBE_ALONE(mmio, rw,
		      TRAIL_ARGS(uint64_t, ip, uint64_t, addr, uint64_t, offset, uint64_t, value,
				 uint8_t, width, uint8_t, write),
		      TRAIL_FIELDS(trail_field_ptr(ip) trail_field_hex(addr) trail_field_hex(offset)
				   trail_field_hex(value) trail_field_int(width)
				   trail_field_int(write)), )
/* mmio:map: a region armed (the kernel's MAP line) */
TRAIL__DESCRIBE_ALONE(mmio, map,
		      TRAIL_ARGS(uint64_t, addr, uint64_t, len, uint64_t, offset, const char *, path),
		      TRAIL_FIELDS(trail_field_hex(addr) trail_field_hex(len) trail_field_hex(offset)
				   trail_field_string(path)), )
/* mmio:unmap: a region's tracing stopped, and why */
TRAIL__DESCRIBE_ALONE(mmio, unmap,
		      TRAIL_ARGS(uint64_t, addr, uint64_t, len, const char *, why),
		      TRAIL_FIELDS(trail_field_hex(addr) trail_field_hex(len)
				   trail_field_string(why)), )
/* mmio:unknown: an access the decoder does not emulate (the region then
 * stops being traced) */
TRAIL__DESCRIBE_ALONE(mmio, unknown,
		      TRAIL_ARGS(uint64_t, ip, uint64_t, addr, const uint8_t *, insn, uint16_t, n),
		      TRAIL_FIELDS(trail_field_ptr(ip) trail_field_hex(addr)
				   trail_field_seq_hex(insn, insn, n)), )

enum { R_FREE, R_ARMED, R_STOPPED };

struct region {
	uintptr_t lo, hi;    /* the program's protected pages */
	uintptr_t alias;     /* the same pages, libtrail's */
	uint64_t off;        /* the file offset of lo */
	uint64_t rlo, rhi;   /* the offsets recorded (--mmio's range) */
	int prot;            /* the program's protection */
	int state;
	int busy;            /* handlers using the alias */
	int stopping;        /* a handler met an instruction it does not do */
	uint32_t sessions;
};

struct want {
	char path[PATH_MAX_M]; /* normalized (norm()) */
	uint64_t lo, hi;       /* file offsets; hi 0: to the mapping's end */
	int armed;             /* a region came of it */
	int err;               /* else why the last mapping of PATH was not */
};

static struct region regions[REGIONS];
static struct want wants[TRAIL_MAX_SESSIONS][WANTS];
static int nwants[TRAIL_MAX_SESSIONS];
static int any_wants; /* the interposed calls' fast way out */
static pid_t join_pid; /* the process that joined (a forked child inherits the wants) */

/* ------------------------------------------------------------- records */

static void rec_rw(const struct region *r, uintptr_t ip, uintptr_t addr, uint64_t v, unsigned w,
		   int write)
{
	uint8_t buf[34];
	uint64_t a[4] = {ip, addr, r->off + (addr - r->lo), v};

	if (a[2] < r->rlo || a[2] >= r->rhi)
		return; /* (on a traced page, outside the range asked for) */
	memcpy(buf, a, 32);
	buf[32] = (uint8_t)w;
	buf[33] = (uint8_t)write;
	write_event(TRAIL__DESC(mmio, rw), r->sessions, buf, sizeof(buf));
}

static uint8_t *put_str(uint8_t *o, const char *s, size_t max)
{
	uint16_t n = (uint16_t)strnlen(s, max);

	memcpy(o, &n, 2);
	memcpy(o + 2, s, n);
	return o + 2 + n;
}

static void rec_map(const struct region *r, const char *path)
{
	uint8_t buf[24 + 2 + PATH_MAX_M], *o = buf + 24;
	uint64_t a[3] = {r->lo, r->hi - r->lo, r->off};

	memcpy(buf, a, 24);
	o = put_str(o, path, PATH_MAX_M);
	write_event(TRAIL__DESC(mmio, map), r->sessions, buf, (uint32_t)(o - buf));
}

static void rec_unmap(const struct region *r, uint32_t m, const char *why)
{
	uint8_t buf[16 + 2 + 64], *o = buf + 16;
	uint64_t a[2] = {r->lo, r->hi - r->lo};

	memcpy(buf, a, 16);
	o = put_str(o, why, 64);
	write_event(TRAIL__DESC(mmio, unmap), m, buf, (uint32_t)(o - buf));
}

static void rec_unknown(const struct region *r, uintptr_t ip, uintptr_t addr, const uint8_t *code,
			unsigned n)
{
	uint8_t buf[16 + 2 + 16];
	uint64_t a[2] = {ip, addr};
	uint16_t k = (uint16_t)n;

	memcpy(buf, a, 16);
	memcpy(buf + 16, &k, 2);
	memcpy(buf + 18, code, n);
	write_event(TRAIL__DESC(mmio, unknown), r->sessions, buf, 18u + n);
}

/* ------------------------------------------------------------- faults */

static size_t page(void)
{
	static size_t p;

	if (!p)
		p = (size_t)sysconf(_SC_PAGESIZE);
	return p;
}

/* the program's protection back; handlers that faulted before re-run
 * their instruction natively (they see STOPPED) */
static void stop(struct region *r)
{
	mprotect((void *)r->lo, r->hi - r->lo, r->prot);
	__atomic_store_n(&r->state, R_STOPPED, __ATOMIC_SEQ_CST);
}

/* ... and, where waiting is allowed (not in the handler), the alias
 * unmapped once no handler uses it (a handler is a few hundred
 * nanoseconds: 2 s of waiting means a thread stopped inside one, and the
 * alias stays) */
static void release(struct region *r)
{
	for (int i = 0; __atomic_load_n(&r->busy, __ATOMIC_SEQ_CST); i++) {
		if (i == 2000)
			return;
		if (i < 100)
			sched_yield();
		else
			usleep(1000);
	}
	if (r->alias)
		syscall(SYS_munmap, r->alias, r->hi - r->lo);
	r->alias = 0;
	r->sessions = 0;
}

#define PF_WRITE 2 /* the page fault's error code: a write */

/* signals.c's SIGSEGV wrapper asks first: an access to a traced region?
 * 1 when handled (uc moved on, or the instruction to re-run), 0 to pass
 * the fault on to whatever handled it before. */
static int on_fault(void *sip, void *ucv)
{
	const siginfo_t *si = sip;
	ucontext_t *uc = ucv;
	uintptr_t addr = (uintptr_t)si->si_addr, ip = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
	int wr_fault = (uc->uc_mcontext.gregs[REG_ERR] & PF_WRITE) != 0;
	struct trail_arch_mmio_op op;
	struct region *r = NULL;
	uint8_t code[16];
	unsigned n = 15;
	uint64_t rd, wv;
	int rc;

	if (si->si_code != SEGV_ACCERR)
		return 0;
	for (unsigned i = 0; i < REGIONS; i++)
		if (__atomic_load_n(&regions[i].state, __ATOMIC_ACQUIRE) != R_FREE &&
		    addr >= regions[i].lo && addr < regions[i].hi) {
			r = &regions[i];
			break;
		}
	if (!r)
		return 0;
	__atomic_fetch_add(&r->busy, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->state, __ATOMIC_SEQ_CST) != R_ARMED) {
		uint64_t v;

		__atomic_fetch_sub(&r->busy, 1, __ATOMIC_SEQ_CST);
		/* stopped since it faulted: re-run it natively, if the page is
		 * the program's again (else a fault of its own: passed on) */
		return !trail_arch_load_safe(addr, 1, &v) && (!wr_fault || (r->prot & PROT_WRITE));
	}
	if (wr_fault && !(r->prot & PROT_WRITE)) {
		__atomic_fetch_sub(&r->busy, 1, __ATOMIC_SEQ_CST);
		return 0; /* a store to a read-only mapping: the program's fault */
	}
	/* the instruction's bytes, those before the end of the readable */
	while (n && trail_arch_copy_safe(code, ip, n))
		n = n > 1 && ((ip + n - 1) & ~(page() - 1)) != (ip & ~(page() - 1))
			    ? (unsigned)(page() - (ip & (page() - 1)))
			    : 0;
	rc = n ? trail_arch_mmio_decode(code, n, uc, &op) : -EFAULT;
	/* never a guess: the operand decoded is the access the kernel saw,
	 * all of it inside the region */
	if (!rc && (addr < op.addr || addr >= op.addr + op.width))
		rc = -EFAULT;
	if (!rc && (op.addr < r->lo || op.addr + op.width > r->hi))
		rc = -ERANGE;
	trail__self++; /* (libtrail's own work: no probe records what it calls) */
	if (rc) {
		/* the first such thread records and stops the region; another
		 * one meanwhile runs its instruction again, faulting until the
		 * pages are back (never emulated: it is not ours to do) */
		if (!__atomic_exchange_n(&r->stopping, 1, __ATOMIC_ACQ_REL)) {
			rec_unknown(r, ip, addr, code, n);
			stop(r);
			rec_unmap(r, r->sessions, "unknown instruction");
		}
		trail__self--;
		__atomic_fetch_sub(&r->busy, 1, __ATOMIC_SEQ_CST);
		return 1; /* run again, natively */
	}
	trail_arch_mmio_emulate(&op, uc, r->alias + (op.addr - r->lo), &rd, &wv);
	if (op.kind != TRAIL_ARCH_MMIO_STORE)
		rec_rw(r, ip, op.addr, rd, op.width, 0);
	if (op.kind != TRAIL_ARCH_MMIO_LOAD)
		rec_rw(r, ip, op.addr, wv, op.width, 1);
	trail__self--;
	__atomic_fetch_sub(&r->busy, 1, __ATOMIC_SEQ_CST);
	return 1;
}

/* ------------------------------------------------------------- arming */

/* PATH as /proc/PID/maps and /proc/self/fd show it, and as the user may
 * give it: "/memfd:name (deleted)" and "memfd:name" are the same */
static void norm(char *out, const char *in, size_t len)
{
	size_t n;

	if (len >= 7 && !memcmp(in, "/memfd:", 7)) {
		in++;
		len--;
	}
	if (len >= 10 && !memcmp(in + len - 10, " (deleted)", 10))
		len -= 10;
	n = len < PATH_MAX_M - 1 ? len : PATH_MAX_M - 1;
	memcpy(out, in, n);
	out[n] = '\0';
}

/* which file a mapping is of: its device and inode, as the maps show them */
struct fid {
	unsigned maj, min;
	uint64_t ino;
};

/* TRAIL_MMIO_NO_MREMAP: the tests' way to the other ways to the pages
 * (1: no mremap, 2: nor the program's descriptor) */
static int no_mremap;

/* a descriptor of the process open on the file of id, or -1 */
static int find_fd(const struct fid *id)
{
	char buf[2048];
	int dfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | O_CLOEXEC), found = -1;
	long n;

	if (dfd < 0)
		return -1;
	while (found < 0 && (n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0)
		for (long off = 0; off < n && found < 0;) {
			struct dirent64 *d = (struct dirent64 *)(void *)(buf + off);
			struct stat st;
			int fd = 0;

			off += d->d_reclen;
			if (d->d_name[0] < '0' || d->d_name[0] > '9')
				continue;
			for (const char *c = d->d_name; *c >= '0' && *c <= '9'; c++)
				fd = fd * 10 + (*c - '0');
			if (fd != dfd && !fstat(fd, &st) && st.st_ino == id->ino &&
			    major(st.st_dev) == id->maj && minor(st.st_dev) == id->min)
				found = fd;
		}
	close(dfd);
	return found;
}

/* the alias of [lo, hi) (file offset off of path, the file id; fd: the
 * program's descriptor of it, or -1), or 0. Three ways, the first that
 * works: mremap(lo, 0, len), which duplicates a shared mapping (not a
 * device's: VM_PFNMAP and VM_DONTEXPAND refuse it, UIO, /dev/mem, VFIO);
 * a descriptor of the program's open on the same file (a VFIO device's,
 * which no path opens again; the one mmap was given); PATH opened again. */
static uintptr_t alias_of(uintptr_t lo, uintptr_t hi, uint64_t off, int prot, const char *path,
			  int fd, const struct fid *id)
{
	/* (system calls: not our own interposed functions) */
	void *a = no_mremap ? MAP_FAILED
			    : (void *)syscall(SYS_mremap, lo, 0, hi - lo, MREMAP_MAYMOVE);
	int own = -1;

	if (a != MAP_FAILED)
		return (uintptr_t)a;
	if (no_mremap < 2 && fd < 0 && id)
		fd = find_fd(id);
	if (no_mremap < 2 && fd >= 0) {
		a = (void *)syscall(SYS_mmap, NULL, hi - lo, prot, MAP_SHARED, fd, (off_t)off);
		if (a != MAP_FAILED)
			return (uintptr_t)a;
	}
	if (path[0] != '/' || (own = open(path, ((prot & PROT_WRITE) ? O_RDWR : O_RDONLY) |
							O_CLOEXEC | O_SYNC)) < 0)
		return 0;
	a = (void *)syscall(SYS_mmap, NULL, hi - lo, prot, MAP_SHARED, own, (off_t)off);
	close(own);
	return a == MAP_FAILED ? 0 : (uintptr_t)a;
}

/* the mapping [start, end) of path (normalized), file offset moff,
 * shared or not, wanted by session s's want wt: armed, or joined to the
 * region that has it. 0 or -errno. */
static int arm(unsigned s, struct want *wt, uintptr_t start, uintptr_t end, uint64_t moff,
	       int prot, int shared, const char *path, int fd, const struct fid *id)
{
	uint64_t flo = wt->lo > moff ? wt->lo : moff;
	uint64_t fhi = wt->hi && wt->hi < moff + (end - start) ? wt->hi : moff + (end - start);
	uintptr_t lo, hi;
	struct region *r = NULL;

	if (flo >= fhi)
		return -EDOM; /* the range is not in this mapping */
	if (!shared)
		return -EMEDIUMTYPE;
	lo = (start + (uintptr_t)(flo - moff)) & ~(page() - 1);
	hi = (start + (uintptr_t)(fhi - moff) + page() - 1) & ~(page() - 1);
	for (unsigned i = 0; i < REGIONS; i++)
		if (regions[i].state == R_ARMED && regions[i].lo < hi && lo < regions[i].hi) {
			/* another session's already: this one records it too */
			__atomic_fetch_or(&regions[i].sessions, 1u << s, __ATOMIC_RELEASE);
			wt->armed = 1;
			return 0;
		}
	/* a free slot, else the tombstone of a stopped one whose alias is
	 * gone (its late faults long handled) */
	for (unsigned i = 0; i < REGIONS && !r; i++)
		if (regions[i].state == R_FREE)
			r = &regions[i];
	for (unsigned i = 0; i < REGIONS && !r; i++)
		if (regions[i].state == R_STOPPED && !regions[i].alias)
			r = &regions[i];
	if (!r)
		return -ENOSPC;
	__atomic_store_n(&r->state, R_FREE, __ATOMIC_SEQ_CST);
	r->lo = lo;
	r->hi = hi;
	r->off = moff + (lo - start);
	r->rlo = flo;
	r->rhi = fhi;
	r->prot = prot;
	r->busy = 0;
	r->stopping = 0;
	if (!(r->alias = alias_of(lo, hi, r->off, prot, path, fd, id)))
		return -EMEDIUMTYPE;
	r->sessions = 1u << s;
	/* armed before the pages go: a fault from now on finds the region */
	__atomic_store_n(&r->state, R_ARMED, __ATOMIC_SEQ_CST);
	if (mprotect((void *)lo, hi - lo, PROT_NONE)) {
		int e = -errno;

		__atomic_store_n(&r->state, R_STOPPED, __ATOMIC_SEQ_CST);
		release(r);
		return e;
	}
	wt->armed = 1;
	trail__self++;
	rec_map(r, path);
	trail__self--;
	return 0;
}

static int hexnum(const char **p, uint64_t *v)
{
	const char *c = *p;

	*v = 0;
	if (!((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
		return -1;
	for (; (*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f'); c++)
		*v = *v * 16 + (uint64_t)(*c <= '9' ? *c - '0' : *c - 'a' + 10);
	*p = c;
	return 0;
}

/* a /proc/self/maps line: start-end perms offset dev inode path */
static int maps_line(const char *l, uintptr_t *start, uintptr_t *end, uint64_t *off, int *prot,
		     int *shared, const char **path, struct fid *id)
{
	uint64_t a, b, o, maj, min;

	if (hexnum(&l, &a) || *l++ != '-' || hexnum(&l, &b) || *l++ != ' ')
		return -1;
	*prot = (l[0] == 'r' ? PROT_READ : 0) | (l[1] == 'w' ? PROT_WRITE : 0) |
		(l[2] == 'x' ? PROT_EXEC : 0);
	*shared = l[3] == 's';
	l += 5;
	if (hexnum(&l, &o) || *l++ != ' ' || hexnum(&l, &maj) || *l++ != ':' || hexnum(&l, &min) ||
	    *l++ != ' ')
		return -1;
	id->maj = (unsigned)maj;
	id->min = (unsigned)min;
	for (id->ino = 0; *l >= '0' && *l <= '9'; l++)
		id->ino = id->ino * 10 + (uint64_t)(*l - '0');
	while (*l == ' ')
		l++;
	*start = (uintptr_t)a;
	*end = (uintptr_t)b;
	*off = o;
	*path = l;
	return 0;
}

/* session s's wants armed on what is mapped now: 0, or -errno (the
 * first want not found: -ENOMEDIUM; a range out of it: -EDOM) */
static int arm_mapped(unsigned s, int must)
{
	static char buf[1 << 16]; /* (under the control lock) */
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC), err = 0;
	size_t have = 0;
	ssize_t k;

	if (fd < 0)
		return -errno;
	/* the whole file first: arming changes the mappings (the alias) */
	while (have < sizeof(buf) - 1 && (k = read(fd, buf + have, sizeof(buf) - 1 - have)) > 0)
		have += (size_t)k;
	close(fd);
	buf[have] = '\0';
	for (int i = 0; i < nwants[s]; i++) {
		struct want *wt = &wants[s][i];
		int found = 0, werr = 0;

		for (char *l = buf, *e; *l; l = e + 1) {
			uintptr_t start, end;
			uint64_t off;
			int prot, shared, r;
			const char *path;
			char np[PATH_MAX_M];
			struct fid id;

			if (!(e = strchr(l, '\n')))
				e = l + strlen(l);
			if (maps_line(l, &start, &end, &off, &prot, &shared, &path, &id) == 0) {
				norm(np, path, (size_t)(e - path));
				if (!strcmp(np, wt->path) && prot != PROT_NONE) {
					found = 1;
					r = arm(s, wt, start, end, off, prot, shared, np, -1, &id);
					if (r && r != -EDOM)
						werr = r;
				}
			}
			if (!*e)
				break;
		}
		if (!werr && found && !wt->armed)
			werr = -EDOM;
		if (!werr && !found)
			werr = -ENOMEDIUM;
		if (werr && must && !err)
			err = werr;
	}
	return err;
}

/* "@mmio LO HI PATH" (hex offsets; HI 0: the mapping's end) */
static int want_line(const char *v, size_t len, void *arg)
{
	unsigned s = *(unsigned *)arg;
	const char *p = v, *end = v + len;
	struct want *wt;

	if (nwants[s] == WANTS)
		return -E2BIG;
	wt = &wants[s][nwants[s]];
	if (hexnum(&p, &wt->lo) || *p++ != ' ' || hexnum(&p, &wt->hi) || *p++ != ' ' || p >= end)
		return -EBADMSG;
	norm(wt->path, p, (size_t)(end - p));
	wt->armed = 0;
	wt->err = 0;
	nwants[s]++;
	return 0;
}

static void fmmio_leave(unsigned s)
{
	for (unsigned i = 0; i < REGIONS; i++) {
		struct region *r = &regions[i];

		if (r->state == R_FREE || !(r->sessions & (1u << s)))
			continue;
		if (__atomic_and_fetch(&r->sessions, ~(1u << s), __ATOMIC_SEQ_CST))
			continue;
		if (r->state == R_ARMED)
			stop(r);
		release(r);
	}
	nwants[s] = 0;
	any_wants = 0;
	for (unsigned k = 0; k < TRAIL_MAX_SESSIONS; k++)
		any_wants |= nwants[k] > 0;
}

static int fmmio_join(unsigned s, struct psess *ps, void *uc)
{
	int r;

	nwants[s] = 0;
	if ((r = trail__spec_opts(ps->spec, "mmio", want_line, &s)) < 0)
		goto fail;
	if (!nwants[s])
		return 0;
	if (trail__signals_guard_faults() < 0) {
		r = -EIO;
		goto fail;
	}
	__atomic_store_n(&trail__mmio_fault, on_fault, __ATOMIC_RELEASE);
	/* an attach (uc: from the control signal) must find PATH mapped; a
	 * program starting (from libtrail's constructor) maps it later */
	if ((r = arm_mapped(s, uc != NULL)) < 0)
		goto fail;
	/* the recorder names the instructions (mmio:rw's ip) from the objects */
	if (trail__fobjs_discover()) {
		r = -ENOMEM;
		goto fail;
	}
	for (unsigned i = 0; i < trail__nobjs; i++)
		trail__fobjs_publish(ps, s, &trail__objs[i]);
	__atomic_store_n(&any_wants, 1, __ATOMIC_RELEASE);
	join_pid = getpid();
	return 0;
fail:
	fmmio_leave(s);
	return r;
}

static const struct trail_source fmmio = {
	.name = "mmio",
	.join = fmmio_join,
	.leave = fmmio_leave,
};
TRAIL_SOURCE(fmmio);

/* ----------------------------------------- the program's mapping calls
 *
 * Interposed (libtrail.map: glibc's version): with no --mmio session, a
 * load and a branch more than the call itself. Not instrumented: a
 * sanitizer's runtime maps memory through them before it is set up (a
 * TSan-built program crashed at start in their instrumented loads).
 */
#define UNINSTRUMENTED __attribute__((no_sanitize("thread", "address", "undefined")))
typedef void *(*mmap_fn)(void *, size_t, int, int, int, off_t);
typedef int (*munmap_fn)(void *, size_t);
typedef void *(*mremap_fn)(void *, size_t, size_t, int, ...);

/* the next definitions in symbol lookup order (libc's, or a sanitizer's
 * interceptors), found by our constructor; before it, the system calls:
 * a dlsym in the call itself could recurse through a malloc that maps
 * its memory with mmap before libtrail's constructors have run */
static mmap_fn next_mmap;
static munmap_fn next_munmap;
static mremap_fn next_mremap;

UNINSTRUMENTED __attribute__((constructor(101))) static void find_next(void)
{
	void *p;

	trail__self_enter();
	if ((p = getenv("TRAIL_MMIO_NO_MREMAP")))
		no_mremap = *(const char *)p - '0';
	if ((p = dlsym(RTLD_NEXT, "mmap")))
		__atomic_store_n(&next_mmap, (mmap_fn)p, __ATOMIC_RELEASE);
	if ((p = dlsym(RTLD_NEXT, "munmap")))
		__atomic_store_n(&next_munmap, (munmap_fn)p, __ATOMIC_RELEASE);
	if ((p = dlsym(RTLD_NEXT, "mremap")))
		__atomic_store_n(&next_mremap, (mremap_fn)p, __ATOMIC_RELEASE);
	trail__self_leave();
}

/* the new shared mapping p of fd: armed for every session that wants
 * its file */
static void mapped(void *p, size_t len, int prot, int flags, int fd, off_t off)
{
	char link[64] = "/proc/self/fd/", target[PATH_MAX_M], np[PATH_MAX_M];
	sigset_t saved;
	ssize_t k;
	int n = 14;

	if (fd < 0 || (flags & MAP_ANONYMOUS) || prot == PROT_NONE)
		return;
	/* (the fd's number, by hand: no snprintf in what a handler may call) */
	{
		char d[16];
		int m = 0, v = fd;

		do
			d[m++] = (char)('0' + v % 10);
		while ((v /= 10) && m < 15);
		while (m)
			link[n++] = d[--m];
		link[n] = '\0';
	}
	if ((k = readlink(link, target, sizeof(target) - 1)) <= 0)
		return;
	norm(np, target, (size_t)k);
	trail__ctl_enter(&saved);
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		for (int i = 0; i < nwants[s]; i++)
			if (!strcmp(wants[s][i].path, np)) {
				int r = arm(s, &wants[s][i], (uintptr_t)p, (uintptr_t)p + len,
					    (uint64_t)off, prot, (flags & MAP_TYPE) == MAP_SHARED, np,
					    fd, NULL);

				if (r)
					wants[s][i].err = r;
			}
	trail__ctl_leave(&saved);
}

/* [p, p + len) is about to be unmapped or moved: its regions stop */
static void unmapping(void *p, size_t len, const char *why)
{
	uintptr_t lo = (uintptr_t)p, hi = lo + len;
	sigset_t saved;

	trail__ctl_enter(&saved);
	for (unsigned i = 0; i < REGIONS; i++) {
		struct region *r = &regions[i];

		if (r->state != R_ARMED || r->hi <= lo || hi <= r->lo)
			continue;
		stop(r);
		trail__self++;
		rec_unmap(r, r->sessions, why);
		trail__self--;
		release(r);
	}
	trail__ctl_leave(&saved);
}

/* (named by hand: with _FILE_OFFSET_BITS=64 the headers rename mmap) */
void *mmio_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off) __asm__("mmap");
void *mmio_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
	__asm__("mmap64");

UNINSTRUMENTED __attribute__((visibility("default"))) void *mmio_mmap(void *addr, size_t len, int prot,
						       int flags, int fd, off_t off)
{
	mmap_fn next = __atomic_load_n(&next_mmap, __ATOMIC_ACQUIRE);
	void *p;

	/* a mapping put over a traced region replaces its pages: the region
	 * stops first (else a later fault there would reach the old alias) */
	if ((flags & MAP_FIXED) && __atomic_load_n(&any_wants, __ATOMIC_ACQUIRE) && !trail__self)
		unmapping(addr, len, "mmap MAP_FIXED");
	p = next ? next(addr, len, prot, flags, fd, off)
		 : (void *)syscall(SYS_mmap, addr, len, prot, flags, fd, off);
	/* (libtrail's own mappings, some under the control lock: not ours) */
	if (__atomic_load_n(&any_wants, __ATOMIC_ACQUIRE) && p != MAP_FAILED && !trail__self)
		mapped(p, len, prot, flags, fd, off);
	return p;
}

UNINSTRUMENTED __attribute__((visibility("default"))) void *mmio_mmap64(void *addr, size_t len, int prot,
							 int flags, int fd, off_t off)
{
	return mmio_mmap(addr, len, prot, flags, fd, off);
}

UNINSTRUMENTED __attribute__((visibility("default"))) int munmap(void *addr, size_t len)
{
	munmap_fn next = __atomic_load_n(&next_munmap, __ATOMIC_ACQUIRE);

	if (__atomic_load_n(&any_wants, __ATOMIC_ACQUIRE) && !trail__self)
		unmapping(addr, len, "munmap");
	return next ? next(addr, len) : (int)syscall(SYS_munmap, addr, len);
}

UNINSTRUMENTED __attribute__((visibility("default"))) void *mremap(void *addr, size_t old, size_t len, int flags,
						    ...)
{
	mremap_fn next = __atomic_load_n(&next_mremap, __ATOMIC_ACQUIRE);
	void *to = NULL;
	va_list ap;

	va_start(ap, flags);
	if (flags & MREMAP_FIXED)
		to = va_arg(ap, void *);
	va_end(ap);
	if (__atomic_load_n(&any_wants, __ATOMIC_ACQUIRE) && old && !trail__self)
		unmapping(addr, old, "mremap");
	if (next)
		return next(addr, old, len, flags, to);
	return (void *)syscall(SYS_mremap, addr, old, len, flags, to);
}

/* a --mmio of a program started by trail record that never mapped PATH
 * (or not at the offsets asked, or so that it can be traced): said on its
 * stderr, at its exit */
__attribute__((destructor)) static void never_mapped(void)
{
	char pid[16];
	int k = 0;

	/* (a forked child's wants are its parent's, which says it) */
	if (getpid() != join_pid)
		return;
	for (int v = (int)join_pid; v && k < 15; v /= 10)
		pid[k++] = (char)('0' + v % 10);
	for (int a = 0, b = k - 1; a < b; a++, b--) {
		char t = pid[a];

		pid[a] = pid[b];
		pid[b] = t;
	}
	for (unsigned s = 0; s < TRAIL_MAX_SESSIONS; s++)
		for (int i = 0; i < nwants[s]; i++) {
			const struct want *wt = &wants[s][i];
			const char *why =
				wt->err == -EDOM ? ": mapped, but not at the file offsets asked"
				: wt->err == -EMEDIUMTYPE
					? ": mapped private (MAP_PRIVATE), or no second mapping of its "
					  "pages could be made"
				: wt->err == -ENOSPC ? ": mapped, but 16 regions are traced already"
				: wt->err	     ? ": mapped, but it could not be protected"
						     : ": never mapped shared by this process";

			if (wt->armed)
				continue;
			if (write(2, "trail: --mmio ", 14) < 0 ||
			    write(2, wt->path, strlen(wt->path)) < 0 || write(2, why, strlen(why)) < 0 ||
			    write(2, " (pid ", 6) < 0 || write(2, pid, (size_t)k) < 0 ||
			    write(2, "): nothing recorded of it\n", 26) < 0)
				return;
		}
}
