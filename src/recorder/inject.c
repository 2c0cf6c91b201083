/* SPDX-License-Identifier: MIT */
/*
 * inject.c - loading libtrail into a running process that was not started
 * with it (trail record -P on any process), the way a debugger's
 * `call dlopen(...)` does, but so that the process survives trail dying at
 * any moment of it.
 *
 * The main thread is seized and stopped; its registers, its whole
 * extended state (XSAVE: x87, SSE, AVX, AVX-512) and its signal mask are
 * read. Below its red zone goes what the kernel builds to run a signal
 * handler, an rt_sigframe, describing that state:
 *
 *     higher addresses
 *     [ 128-byte red zone: the thread's, untouched ]
 *     [ XSAVE area + FP_XSTATE_MAGIC2 ]      64-byte aligned: fpstate
 *     [ libtrail's path ]
 *     [ ucontext: flags, stack, sigcontext (GPRs, rip, flags, fpstate ->),
 *       the signal mask ]                    16-byte aligned
 *     [ return address: the C library's __restore_rt ]  <- rsp at the call
 *
 * and the thread is set to call dlopen(path, RTLD_NOW) there. dlopen's
 * `ret` lands in __restore_rt (`mov $15,%rax; syscall`: rt_sigreturn),
 * which restores every register, the vector state and the mask from the
 * frame: code already in the process, needing nothing from trail. A
 * system call the thread was stopped in is restarted by the frame itself
 * (rax = its number, rip back on the `syscall`), as the kernel would.
 *
 * While trail lives, it follows the call with PTRACE_SYSCALL to that
 * rt_sigreturn, and does better than the frame: it skips the call, sends
 * the thread back to __restore_rt's first instruction (so that, should
 * trail die now, the frame still does the job), lets it stop in the
 * kernel's signal path, writes the extended state and the mask back, and
 * only then, in one PTRACE_SETREGS, the registers exactly as they were
 * (an interrupted system call's restart code included): the kernel then
 * restarts the call as after any signal, a sleep for its remaining time,
 * which rt_sigreturn cannot (it drops the restart block: the frame alone
 * restarts a relative sleep or wait whole, a little longer than asked).
 *
 * So a SIGKILL of trail leaves the thread either as it was (before the
 * registers are set for the call) or running the call, which returns
 * through the frame. trail's own TERM, HUP and INT wait until it is done
 * (the caller blocks them). A dlopen that does not return in 5 s is left
 * to finish on its own, and return through the frame.
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <linux/ptrace.h>

#include "../common/util.h"
#include "ptrace.h"
#include "recorder.h"

#define CALL_TIMEOUT_MS 5000
#define XSTATE_MAX 16384
#ifndef FP_XSTATE_MAGIC1
#define FP_XSTATE_MAGIC1 0x46505853u
#define FP_XSTATE_MAGIC2 0x46505845u
#endif
#define UC_FP_XSTATE 0x1
#define UC_SIGCONTEXT_SS 0x2
#define UC_STRICT_RESTORE_SS 0x4

#ifndef RTLD_NOW
#define RTLD_NOW 2
#endif

/* glibc's __restore_rt: mov $__NR_rt_sigreturn,%rax; syscall */
static const unsigned char restore_rt_code[] = {0x48, 0xc7, 0xc0, 0x0f, 0x00, 0x00, 0x00, 0x0f, 0x05};

/* the kernel's rt_sigframe up to the signal mask (x86-64): the return
 * address, then struct ucontext with struct sigcontext in it */
struct frame {
	uint64_t pretcode;
	uint64_t uc_flags, uc_link;
	uint64_t ss_sp;
	int32_t ss_flags, ss_pad;
	uint64_t ss_size;
	/* struct sigcontext */
	uint64_t r8, r9, r10, r11, r12, r13, r14, r15;
	uint64_t rdi, rsi, rbp, rbx, rdx, rax, rcx, rsp, rip, eflags;
	uint16_t cs, gs, fs, ss;
	uint64_t err, trapno, oldmask, cr2;
	uint64_t fpstate;
	uint64_t reserved1[8];
	uint64_t sigmask;
};

/* the fx_sw_bytes at 464 in the legacy XSAVE area: how big the frame's
 * XSAVE area is, for rt_sigreturn */
struct fx_sw {
	uint32_t magic1, extended_size;
	uint64_t xfeatures;
	uint32_t xstate_size, padding[7];
};

struct libc {
	uint64_t dlopen, restore_rt;
	uint64_t lo;        /* where the C library's first mapping starts */
	char path[4096];    /* and its file, as the maps name it */
};

/* dlopen's address in the object of pid mapped at lo from file (its C
 * library (glibc >= 2.34), else __libc_dlopen_mode there, else libdl's
 * dlopen), and __restore_rt's from the code bytes of the C library's */
static void scan_object(Elf *e, uint64_t lo, int is_libc, struct libc *c, int *rank)
{
	static const char *const syms[] = {"dlopen", "__libc_dlopen_mode"};
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(d = elf_getdata(scn, NULL)) || !d->d_buf)
			continue;
		if (sh.sh_type == SHT_DYNSYM && sh.sh_entsize) {
			for (size_t i = 0; i < sh.sh_size / sh.sh_entsize; i++) {
				GElf_Sym s;

				if (!gelf_getsym(d, (int)i, &s) || s.st_shndx == SHN_UNDEF ||
				    GELF_ST_TYPE(s.st_info) != STT_FUNC ||
				    !(name = elf_strptr(e, sh.sh_link, s.st_name)))
					continue;
				/* rank: libc's dlopen 3, its __libc_dlopen_mode 2,
				 * libdl's dlopen 1 */
				for (int k = 0; k < 2; k++) {
					int r = is_libc ? 3 - k : (k ? 0 : 1);

					if (!strcmp(name, syms[k]) && r > *rank) {
						*rank = r;
						c->dlopen = lo + s.st_value;
					}
				}
			}
		} else if (is_libc && !c->restore_rt && sh.sh_type == SHT_PROGBITS &&
			   (sh.sh_flags & SHF_EXECINSTR) && d->d_size >= sizeof(restore_rt_code)) {
			const unsigned char *p = d->d_buf, *end = p + d->d_size;

			/* the instruction pair at a 16-byte aligned start (a
			 * function of its own) */
			for (; p + sizeof(restore_rt_code) <= end; p++) {
				p = memchr(p, 0x48, (size_t)(end - p));
				if (!p || p + sizeof(restore_rt_code) > end)
					break;
				if (!memcmp(p, restore_rt_code, sizeof(restore_rt_code)) &&
				    ((sh.sh_addr + (uint64_t)(p - (const unsigned char *)d->d_buf)) & 15) == 0) {
					c->restore_rt = lo + sh.sh_addr +
							(uint64_t)(p - (const unsigned char *)d->d_buf);
					break;
				}
			}
		}
	}
}

static int find_libc_once(pid_t pid, struct libc *c, char *err, size_t errlen, int *loader)
{
	char path[64], line[4608];
	FILE *f;
	int rank = 0, mapped = 0;

	memset(c, 0, sizeof(*c));
	*loader = 0;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re"))) {
		snprintf(err, errlen, "process %d: %s", (int)pid, strerror(errno));
		return -errno;
	}
	elf_version(EV_CURRENT);
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, off;

		mapped = 1;
		char obj[4096] = "", file[4200], *b;
		int fd, is_libc;
		Elf *e;

		if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &lo, &off, obj) != 3 || off ||
		    !(b = strrchr(obj, '/')))
			continue;
		*loader |= !strncmp(b + 1, "ld-linux", 8);
		is_libc = !strncmp(b + 1, "libc.so", 7);
		if (!is_libc && strncmp(b + 1, "libdl.so", 8))
			continue;
		snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, obj);
		if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
			continue;
		if (is_libc && !c->lo) {
			c->lo = lo;
			snprintf(c->path, sizeof(c->path), "%s", obj);
		}
		if ((e = elf_begin(fd, ELF_C_READ, NULL))) {
			scan_object(e, lo, is_libc, c, &rank);
			elf_end(e);
		}
		close(fd);
	}
	fclose(f);
	if (!mapped) { /* no memory at all: it is exiting */
		snprintf(err, errlen, "process %d ended", (int)pid);
		return -ESRCH;
	}
	if (!c->dlopen) {
		snprintf(err, errlen,
			 "process %d has no dlopen in its C library (a static program?): libtrail "
			 "cannot be loaded into it",
			 (int)pid);
		return -ENOENT;
	}
	if (!c->restore_rt) {
		snprintf(err, errlen,
			 "process %d: its C library has no __restore_rt (mov $15,%%rax; syscall) "
			 "to return through: libtrail is not loaded into it, which would not "
			 "survive trail being killed meanwhile",
			 (int)pid);
		return -ENOENT;
	}
	return 0;
}

/* A program that has just started may have the dynamic loader mapped
 * and its C library not yet: a second for it to come. One caught in an
 * exec or an exit may show neither for a moment (a process started and
 * attached at once, under load, was called static): 50 ms in any case. */
static int find_libc(pid_t pid, struct libc *c, char *err, size_t errlen)
{
	int loader, r;

	for (int tries = 0;; tries++) {
		r = find_libc_once(pid, c, err, errlen, &loader);
		if (r != -ENOENT || c->dlopen || (!loader && tries >= 5) || tries == 100)
			return r;
		nanosleep(&(struct timespec){0, 10000000}, NULL);
	}
}

/* Can the thread, stopped with regs, be made to call c's dlopen? 0;
 * -ESTALE: the process ran an exec since find_libc read it (a `env
 * VAR=... CMD` caught at the moment: its C library elsewhere, or not
 * yet); -EINPROGRESS: it is still starting, its C library mapped but not
 * ready (no thread pointer yet: dlopen would fault on the stack guard at
 * %fs:0x28), or it runs the dynamic loader's own code. One pass over its
 * maps. */
/*
 * A system call that programs make from their own code, where the C
 * library holds nothing dlopen needs: waiting (sleep, poll, epoll, wait,
 * futex, signals), file and socket I/O. Not exec (what dlopen loads
 * would be gone at once: the new program is looked at again), nor those
 * the C library
 * makes in the middle of its own work: the allocator's (brk, mmap,
 * munmap, mremap, madvise, mprotect; getrandom, when malloc first sets
 * itself up), and fork's (every malloc arena locked around it). A dlopen
 * there, which allocates, would re-enter the allocator half done.
 */
static int quiet_call(long nr)
{
	switch (nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_openat: case SYS_close:
	case SYS_poll: case SYS_ppoll: case SYS_select: case SYS_pselect6:
	case SYS_epoll_wait: case SYS_epoll_pwait: case SYS_nanosleep:
	case SYS_clock_nanosleep: case SYS_wait4: case SYS_waitid: case SYS_pause:
	case SYS_rt_sigsuspend: case SYS_rt_sigtimedwait: case SYS_accept:
	case SYS_accept4: case SYS_recvfrom: case SYS_recvmsg: case SYS_sendto:
	case SYS_sendmsg: case SYS_connect: case SYS_futex:
	case SYS_ioctl: case SYS_newfstatat: case SYS_fstat: case SYS_lseek:
	case SYS_getdents64: case SYS_sched_yield: case SYS_exit_group:
		return 1;
	}
	return 0;
}

/*
 * A stop where dlopen may run: nothing of the C library half done. The
 * thread interrupted in user space may be inside malloc (a dlopen there
 * corrupts the heap: its own malloc re-entered), so it is run to its next
 * quiet system call's entry (quiet_call); a thread blocked in one is at
 * one already. 0: there, 1:
 * no system call came within 50 ms (stopped in user space again: the
 * caller looks at where), or -errno.
 */
static int safe_stop(pid_t pid, int *st, int *deliver)
{
	for (int n = 0; n < 64; n++) {
		struct ptrace_syscall_info si;
		struct user_regs_struct r;

		if (ptrace(PTRACE_GETREGS, pid, 0, &r))
			return -errno;
		if ((long)r.orig_rax >= 0 && quiet_call((long)r.orig_rax)) {
			/* a system call's entry, or one it is blocked in */
			if (WSTOPSIG(*st) == (SIGTRAP | 0x80) && !(*st >> 16)) {
				if (ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si) > 0 &&
				    si.op == PTRACE_SYSCALL_INFO_ENTRY)
					return 0;
			} else if ((long)r.rax == -EINTR || ((long)r.rax <= -512 && (long)r.rax >= -516)) {
				return 0;
			}
		}
		if (ptrace(PTRACE_SYSCALL, pid, 0, (void *)(long)*deliver))
			return -errno;
		*deliver = 0;
		*st = trail__ptrace_wait(pid, 50);
		if (*st == -ETIMEDOUT) {
			if (ptrace(PTRACE_INTERRUPT, pid, 0, 0))
				return -errno;
			if ((*st = trail__ptrace_wait(pid, 2000)) < 0)
				return *st;
			*deliver = trail__ptrace_stop_signal(*st);
			return 1;
		}
		if (*st < 0)
			return *st;
		*deliver = trail__ptrace_stop_signal(*st);
	}
	return 1;
}

/*
 * Has the dynamic loader relocated the program (a PIE: its first relative
 * relocation applied)? The loader relocates the program after every
 * library it loaded, the C library included, whose code runs meanwhile
 * (its IFUNC resolvers, called from the loader) though none of it can be
 * called yet: a thread stopped there is in no loader's code, has its
 * thread pointer, and is still starting. 1 (or not known: not a PIE, no
 * such relocation, nothing read), 0 not yet.
 */
static int exe_relocated(pid_t pid, unsigned long base)
{
	char path[64];
	uint64_t at = 0, file = 0, mem = 1;
	int fd, mfd, r = 1, found = 0;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	size_t np = 0;
	Elf *e;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	if (!base || (fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 1;
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || !gelf_getehdr(e, &eh) || eh.e_type != ET_DYN || elf_getphdrnum(e, &np))
		goto out;
	while (!found && (scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_RELA ||
		    !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sizeof(Elf64_Rela) && !found; i++) {
			GElf_Rela ra;

			if (gelf_getrela(d, (int)i, &ra) &&
			    GELF_R_TYPE(ra.r_info) == R_X86_64_RELATIVE) {
				at = ra.r_offset;
				found = 1;
			}
		}
	}
	if (!found)
		goto out;
	/* the slot in the file (0 past a segment's file part), in memory */
	for (size_t i = 0; i < np; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || at < ph.p_vaddr ||
		    at + 8 > ph.p_vaddr + ph.p_memsz)
			continue;
		if (at + 8 <= ph.p_vaddr + ph.p_filesz &&
		    pread(fd, &file, 8, (off_t)(ph.p_offset + (at - ph.p_vaddr))) != 8)
			goto out;
		break;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((mfd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		goto out;
	if (pread(mfd, &mem, 8, (off_t)(base + at)) == 8)
		r = mem != file;
	close(mfd);
out:
	if (e)
		elf_end(e);
	close(fd);
	return r;
}

static int image_ready(pid_t pid, const struct libc *c, const struct user_regs_struct *regs,
		       int user)
{
	char path[64], line[4608], exe[4096];
	unsigned long base = 0;
	ssize_t en;
	FILE *f;
	int same = 0, loader = 0, in_libc = 0;

	snprintf(path, sizeof(path), "/proc/%d/exe", (int)pid);
	en = readlink(path, exe, sizeof(exe) - 1);
	exe[en > 0 ? en : 0] = '\0';
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(f = fopen(path, "re")))
		return -ESTALE;
	while (fgets(line, sizeof(line), f)) {
		unsigned long lo, hi, off;
		char obj[4096] = "", *b;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %4095s", &lo, &hi, &off, obj) != 4)
			continue;
		same |= lo == c->lo && !off && !strcmp(obj, c->path);
		loader |= regs->rip >= lo && regs->rip < hi && (b = strrchr(obj, '/')) &&
			  !strncmp(b + 1, "ld-linux", 8);
		if (!base && !off && exe[0] && !strcmp(obj, exe))
			base = lo;
		in_libc |= regs->rip >= lo && regs->rip < hi && !strcmp(obj, c->path);
	}
	fclose(f);
	if (!same)
		return -ESTALE;
	/* (stopped in user space with no system call to go to: anywhere but
	 * in the C library, which may be in the middle of malloc) */
	return !regs->fs_base || loader || (user && in_libc) || !exe_relocated(pid, base)
		       ? -EINPROGRESS : 0;
}

static int put(pid_t pid, uint64_t at, const void *buf, size_t n)
{
	struct iovec l = {(void *)buf, n}, rm = {(void *)at, n};
	char path[64];
	int fd, r;

	if (process_vm_writev(pid, &l, 1, &rm, 1, 0) == (ssize_t)n)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
		return -errno;
	r = pwrite(fd, buf, n, (off_t)at) == (ssize_t)n ? 0 : -EIO;
	close(fd);
	return r;
}

/* is thread pid's library list holding lib now (its dlopen worked)? */
static int has_lib(pid_t pid, const char *lib)
{
	char path[64], *buf, real[4096];
	ssize_t n;
	int found = 0;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if (!(buf = malloc(1 << 22)))
		return 0;
	n = trail__read_file(path, buf, 1 << 22);
	if (n > 0) {
		const char *base = strrchr(lib, '/');

		if (realpath(lib, real))
			found = strstr(buf, real) != NULL;
		if (!found)
			found = strstr(buf, base ? base : lib) != NULL;
	}
	free(buf);
	return found;
}

/* The state the thread was stopped in, and the frame that restores it. */
struct saved {
	struct user_regs_struct regs;
	uint8_t *xs;
	size_t xlen;
	uint64_t mask;
};

/* regs as the frame must restore them: a system call the thread was in
 * restarted by the frame itself (rt_sigreturn leaves no restart to the
 * kernel) */
static void frame_regs(const struct user_regs_struct *r, struct frame *f)
{
	long rax = (long)r->rax;

	f->r8 = r->r8, f->r9 = r->r9, f->r10 = r->r10, f->r11 = r->r11;
	f->r12 = r->r12, f->r13 = r->r13, f->r14 = r->r14, f->r15 = r->r15;
	f->rdi = r->rdi, f->rsi = r->rsi, f->rbp = r->rbp, f->rbx = r->rbx;
	f->rdx = r->rdx, f->rax = r->rax, f->rcx = r->rcx, f->rsp = r->rsp;
	f->rip = r->rip, f->eflags = r->eflags;
	f->cs = (uint16_t)r->cs, f->ss = (uint16_t)r->ss;
	/* ERESTART{SYS,NOINTR,NOHAND}: the call again; ERESTART_RESTARTBLOCK
	 * (a relative sleep or wait) too, whole: rt_sigreturn drops the
	 * restart block restart_syscall would need, and a sleep a little
	 * longer is what the call allows, an early EINTR is not */
	if ((long)r->orig_rax >= 0 && rax <= -512 && rax >= -516 && rax != -515) {
		f->rax = r->orig_rax;
		f->rip -= 2;
	}
}

/* Build the frame on the thread's stack: its address (the rsp of the
 * call), and *path_at the path's. 0 or -errno. */
static int write_frame(pid_t pid, const struct saved *s, const struct libc *c,
		       const char *lib, uint64_t *sp, uint64_t *path_at)
{
	size_t len = strlen(lib) + 1;
	uint64_t top = s->regs.rsp - 128, fp, str, uc;
	struct frame f;
	struct fx_sw sw;
	uint8_t *xs;
	uint32_t magic2 = FP_XSTATE_MAGIC2;
	int r;

	fp = (top - s->xlen - 4) & ~(uint64_t)63;
	str = (fp - len) & ~(uint64_t)15;
	uc = (str - (sizeof(f) - 8)) & ~(uint64_t)15;
	memset(&f, 0, sizeof(f));
	f.pretcode = c->restore_rt;
	f.uc_flags = UC_FP_XSTATE | UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS;
	/* an invalid mode: rt_sigreturn's sigaltstack() fails, and leaves
	 * the thread's alternate stack as it is */
	f.ss_flags = 0x7;
	frame_regs(&s->regs, &f);
	f.fpstate = fp;
	f.sigmask = s->mask;
	/* the XSAVE area with the software bytes rt_sigreturn checks: its
	 * size (all the kernel gave), the features, the second magic after
	 * it */
	if (!(xs = malloc(s->xlen)))
		return -ENOMEM;
	memcpy(xs, s->xs, s->xlen);
	memset(&sw, 0, sizeof(sw));
	sw.magic1 = FP_XSTATE_MAGIC1;
	sw.extended_size = (uint32_t)s->xlen + 4;
	memcpy(&sw.xfeatures, xs + 464, 8); /* the regset's XCR0 word */
	sw.xstate_size = (uint32_t)s->xlen;
	memcpy(xs + 464, &sw, sizeof(sw));
	r = put(pid, fp, xs, s->xlen);
	free(xs);
	if (!r)
		r = put(pid, fp + s->xlen, &magic2, 4);
	if (!r)
		r = put(pid, str, lib, len);
	if (!r)
		r = put(pid, uc - 8, &f, sizeof(f));
	*sp = uc - 8; /* rsp % 16 == 8 at a function's entry */
	*path_at = str;
	return r;
}

/* the thread at its last stop: everything as it was, the registers last,
 * in one call (before it, a death of trail leaves it at __restore_rt) */
static int put_back(pid_t pid, const struct saved *s)
{
	struct iovec iov = {s->xs, s->xlen};
	uint64_t mask = s->mask;

	if (ptrace(PTRACE_SETREGSET, pid, (void *)NT_X86_XSTATE, &iov) ||
	    ptrace(PTRACE_SETSIGMASK, pid, (void *)sizeof(mask), &mask) ||
	    ptrace(PTRACE_SETREGS, pid, 0, &s->regs))
		return -errno;
	return 0;
}

/* Follow the call to its rt_sigreturn (sp: the frame's rsp at it); then
 * stop the thread in the signal path and put it back. 0 (it returned and
 * was put back), 1 (it returned through the frame, or trail let go of
 * it), or -errno; *deliver: a signal to pass at detach. */
static int follow(pid_t pid, const struct saved *s, const struct libc *c, uint64_t sp,
		  int *deliver, char *err, size_t errlen)
{
	struct timespec t0;
	int64_t deadline;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	deadline = (int64_t)t0.tv_sec * 1000 + t0.tv_nsec / 1000000 + CALL_TIMEOUT_MS;
	for (;;) {
		struct ptrace_syscall_info si;
		struct user_regs_struct r;
		struct timespec now;
		int st;
		int64_t left;

		clock_gettime(CLOCK_MONOTONIC, &now);
		left = deadline - ((int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000);
		st = trail__ptrace_wait(pid, left > 0 ? (int)left : 0);
		if (st == -ETIMEDOUT) {
			snprintf(err, errlen, "dlopen in process %d did not return within %d s "
				 "(left to finish on its own)", (int)pid, CALL_TIMEOUT_MS / 1000);
			return -ETIMEDOUT;
		}
		if (st < 0) {
			snprintf(err, errlen, "process %d ended while libtrail was being loaded "
				 "into it", (int)pid);
			return -ESRCH;
		}
		if (WSTOPSIG(st) == (SIGTRAP | 0x80) &&
		    ptrace(PTRACE_GET_SYSCALL_INFO, pid, (void *)sizeof(si), &si) > 0 &&
		    si.op == PTRACE_SYSCALL_INFO_ENTRY && si.entry.nr == SYS_rt_sigreturn &&
		    si.instruction_pointer == c->restore_rt + sizeof(restore_rt_code) &&
		    si.stack_pointer == sp + 8) {
			/* ours: skip it, back to __restore_rt's start, and
			 * stop in the signal path on the way out */
			if (ptrace(PTRACE_GETREGS, pid, 0, &r))
				return 1;
			r.orig_rax = (unsigned long long)-1;
			r.rax = SYS_rt_sigreturn;
			r.rip = c->restore_rt;
			if (ptrace(PTRACE_SETREGS, pid, 0, &r) || ptrace(PTRACE_INTERRUPT, pid, 0, 0) ||
			    ptrace(PTRACE_CONT, pid, 0, 0))
				return 1; /* the frame does it */
			st = trail__ptrace_wait(pid, 1000);
			if (st < 0 || !(st >> 16)) {
				if (st >= 0)
					*deliver = trail__ptrace_stop_signal(st);
				return 1; /* not the interrupt stop: the frame does it */
			}
			return put_back(pid, s) ? 1 : 0;
		}
		if (WSTOPSIG(st) != (SIGTRAP | 0x80) && !(st >> 16)) {
			/* a signal meanwhile: its handler runs on top of the call */
			if (ptrace(PTRACE_SYSCALL, pid, 0, (void *)(long)WSTOPSIG(st)))
				return 1;
			continue;
		}
		if (ptrace(PTRACE_SYSCALL, pid, 0, 0))
			return 1;
	}
}

int trail_recorder_inject(pid_t pid, const char *lib, char *err, size_t errlen)
{
	uint8_t xs[XSTATE_MAX] __attribute__((aligned(64)));
	struct iovec iov = {xs, sizeof(xs)};
	struct saved s;
	struct libc c;
	struct user_regs_struct regs;
	uint64_t sp, str;
	int st, r, deliver = 0, user = 0, loaded;

	if ((r = find_libc(pid, &c, err, errlen)))
		return r;
	if (ptrace(PTRACE_SEIZE, pid, 0, (void *)(long)PTRACE_O_TRACESYSGOOD)) {
		char why[320];

		r = -errno;
		trail_recorder_ptrace_why(pid, -r, why, sizeof(why));
		snprintf(err, errlen, "cannot trace process %d: %s", (int)pid, why);
		return r;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || (st = trail__ptrace_wait(pid, 2000)) < 0) {
		snprintf(err, errlen, "process %d did not stop for ptrace", (int)pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EIO;
	}
	if ((st >> 16) == PTRACE_EVENT_STOP && WSTOPSIG(st) != SIGTRAP) {
		snprintf(err, errlen, "process %d is stopped (signal %d): continue it first "
			 "(kill -CONT %d)", (int)pid, WSTOPSIG(st), (int)pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EAGAIN;
	}
	deliver = trail__ptrace_stop_signal(st);
	/* a stop where the mask the kernel shows is the thread's own and
	 * nothing of the C library is half done, then everything it has */
	if (trail__ptrace_own_mask(pid, &st, &deliver) ||
	    (user = safe_stop(pid, &st, &deliver)) < 0 ||
	    ptrace(PTRACE_GETREGS, pid, 0, &s.regs) ||
	    ptrace(PTRACE_GETREGSET, pid, (void *)NT_X86_XSTATE, &iov) || iov.iov_len < 576 ||
	    ptrace(PTRACE_GETSIGMASK, pid, (void *)sizeof(s.mask), &s.mask)) {
		snprintf(err, errlen, "process %d: its registers cannot be read through ptrace: %s",
			 (int)pid, strerror(errno));
		ptrace(PTRACE_DETACH, pid, 0, (void *)(long)deliver);
		return -EIO;
	}
	if ((r = image_ready(pid, &c, &s.regs, user))) {
		snprintf(err, errlen, r == -ESTALE ? "process %d ran a new program while being attached"
				   : "process %d is still starting (in its dynamic loader), or busy in "
				     "the C library with no system call to stop at",
			 (int)pid);
		ptrace(PTRACE_DETACH, pid, 0, (void *)(long)deliver);
		return r;
	}
	s.xs = xs;
	s.xlen = iov.iov_len;
	/* stopped at a system call's entry (own_mask ran it there): to be
	 * restarted, as one interrupted is */
	if (WSTOPSIG(st) == (SIGTRAP | 0x80) && (long)s.regs.orig_rax >= 0)
		s.regs.rax = (unsigned long long)-513; /* ERESTARTNOINTR */
	if ((r = write_frame(pid, &s, &c, lib, &sp, &str))) {
		snprintf(err, errlen, "cannot write into process %d: %s", (int)pid, strerror(-r));
		ptrace(PTRACE_DETACH, pid, 0, (void *)(long)deliver);
		return -EIO;
	}
	/* from here on, the thread runs the call whatever happens to trail,
	 * and returns through the frame */
	regs = s.regs;
	regs.rip = c.dlopen;
	regs.rdi = str;
	regs.rsi = RTLD_NOW;
	regs.rsp = sp;
	regs.rax = 0;
	regs.orig_rax = (unsigned long long)-1; /* no system call restart now */
	regs.eflags &= ~0x400ull;              /* DF clear, as the ABI wants */
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) ||
	    ptrace(PTRACE_SYSCALL, pid, 0, (void *)(long)deliver)) {
		snprintf(err, errlen, "cannot run dlopen in process %d", (int)pid);
		ptrace(PTRACE_SETREGS, pid, 0, &s.regs);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EIO;
	}
	deliver = 0;
	r = follow(pid, &s, &c, sp, &deliver, err, errlen);
	if (r == -ESRCH)
		return r;
	/* (asked while it is stopped: once detached, a process caught on
	 * its way to an exec, env(1) say, runs it, and its maps are the new
	 * program's: CI saw "dlopen failed" so) */
	loaded = r >= 0 && has_lib(pid, lib);
	ptrace(PTRACE_DETACH, pid, 0, (void *)(long)deliver);
	if (r < 0)
		return r;
	if (!loaded) {
		snprintf(err, errlen, "dlopen(\"%s\") failed in process %d", lib, (int)pid);
		return -EIO;
	}
	return 0;
}
