/* SPDX-License-Identifier: MIT */
/* inject.c - loading libtrail into a running process (inject.h). */
#include "inject.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define CALL_TIMEOUT_MS 5000

const char *inject_scope_reason(int scope)
{
	switch (scope) {
	case 0:
		return NULL;
	case 1:
		return "kernel.yama.ptrace_scope is 1: only a parent may trace a process "
		       "(run trail as root, or sysctl kernel.yama.ptrace_scope=0)";
	case 2:
		return "kernel.yama.ptrace_scope is 2: only root may trace (run trail as root)";
	default:
		return "kernel.yama.ptrace_scope is 3: no process may be traced (until reboot)";
	}
}

/* why ptrace refused pid: its tracer, or Yama's rule, or errno's */
static void refused(pid_t pid, int e, char *err, size_t errlen)
{
	char path[64], buf[4096], *p;
	int fd, scope = 0;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		buf[n > 0 ? n : 0] = '\0';
		if ((p = strstr(buf, "\nTracerPid:")) && atoi(p + 11) > 0) {
			snprintf(err, errlen, "process %d is already traced by process %d (a debugger?)",
				 (int)pid, atoi(p + 11));
			return;
		}
	}
	if ((fd = open("/proc/sys/kernel/yama/ptrace_scope", O_RDONLY | O_CLOEXEC)) >= 0) {
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		scope = n > 0 ? atoi(buf) : 0;
	}
	if (e == EPERM && inject_scope_reason(scope))
		snprintf(err, errlen, "cannot trace process %d: %s", (int)pid,
			 inject_scope_reason(scope));
	else
		snprintf(err, errlen, "cannot trace process %d: %s", (int)pid, strerror(e));
}

/* the address of dlopen in pid: its C library's (glibc >= 2.34), else
 * __libc_dlopen_mode there, else libdl's dlopen */
static int find_dlopen(pid_t pid, uint64_t *addr, char *err, size_t errlen)
{
	static const struct {
		const char *lib, *sym;
	} where[] = {{"libc.so", "dlopen"}, {"libc.so", "__libc_dlopen_mode"}, {"libdl.so", "dlopen"}};
	char path[64], line[4608];
	FILE *f;
	int r = -ENOENT;

	for (size_t w = 0; w < sizeof(where) / sizeof(where[0]) && r; w++) {
		snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
		if (!(f = fopen(path, "re"))) {
			snprintf(err, errlen, "process %d: %s", (int)pid, strerror(errno));
			return -errno;
		}
		while (r && fgets(line, sizeof(line), f)) {
			unsigned long lo, off;
			char obj[4096] = "", file[4200], *b;
			int fd;
			Elf *e;
			Elf_Scn *scn = NULL;

			if (sscanf(line, "%lx-%*x %*s %lx %*s %*s %4095s", &lo, &off, obj) != 3 || off ||
			    !(b = strrchr(obj, '/')) || strncmp(b + 1, where[w].lib, strlen(where[w].lib)))
				continue;
			snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, obj);
			if ((fd = open(file, O_RDONLY | O_CLOEXEC)) < 0)
				continue;
			elf_version(EV_CURRENT);
			e = elf_begin(fd, ELF_C_READ, NULL);
			while (e && r && (scn = elf_nextscn(e, scn))) {
				GElf_Shdr sh;
				Elf_Data *d;

				if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !sh.sh_entsize ||
				    !(d = elf_getdata(scn, NULL)))
					continue;
				for (size_t i = 0; r && i < sh.sh_size / sh.sh_entsize; i++) {
					GElf_Sym s;
					const char *n;

					if (gelf_getsym(d, (int)i, &s) && s.st_shndx != SHN_UNDEF &&
					    GELF_ST_TYPE(s.st_info) == STT_FUNC &&
					    (n = elf_strptr(e, sh.sh_link, s.st_name)) && !strcmp(n, where[w].sym)) {
						*addr = lo + s.st_value;
						r = 0;
					}
				}
			}
			if (e)
				elf_end(e);
			close(fd);
		}
		fclose(f);
	}
	if (r)
		snprintf(err, errlen,
			 "process %d has no dlopen in its C library (a static program?): libtrail "
			 "cannot be loaded into it",
			 (int)pid);
	return r;
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

/* the next stop of pid within ms: its status, or -ETIMEDOUT */
static int wait_stop(pid_t pid, int ms)
{
	for (int waited = 0;; waited++) {
		int st;
		pid_t w = waitpid(pid, &st, __WALL | WNOHANG);
		struct timespec ts = {0, 1000000};

		if (w == pid)
			return st;
		if (w < 0)
			return -errno;
		if (waited >= ms)
			return -ETIMEDOUT;
		nanosleep(&ts, NULL);
	}
}

int inject_library(pid_t pid, const char *lib, char *err, size_t errlen)
{
	struct user_regs_struct saved, regs;
	uint64_t fn, sp, str, zero = 0;
	size_t len = strlen(lib) + 1;
	int st, r, pending = 0;

	if ((r = find_dlopen(pid, &fn, err, errlen)))
		return r;
	if (ptrace(PTRACE_SEIZE, pid, 0, 0)) {
		r = -errno;
		refused(pid, -r, err, errlen);
		return r;
	}
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) || (st = wait_stop(pid, CALL_TIMEOUT_MS)) < 0 ||
	    !WIFSTOPPED(st) || ptrace(PTRACE_GETREGS, pid, 0, &saved)) {
		snprintf(err, errlen, "process %d did not stop for ptrace", (int)pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EIO;
	}
	/* a call on its own stack, past the red zone: the path, then a
	 * return address of 0 (the fault that ends the call) */
	regs = saved;
	str = (saved.rsp - 128 - len - 64) & ~(uint64_t)15;
	sp = str - 8; /* rsp % 16 == 8 at a function's entry */
	if (put(pid, str, lib, len) || put(pid, sp, &zero, 8)) {
		snprintf(err, errlen, "cannot write into process %d", (int)pid);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EIO;
	}
	regs.rip = fn;
	regs.rdi = str;
	regs.rsi = RTLD_NOW;
	regs.rsp = sp;
	regs.rax = 0;
	regs.orig_rax = (unsigned long long)-1; /* no system call restart now */
	regs.eflags &= ~0x400ull;              /* DF clear, as the ABI wants */
	if (ptrace(PTRACE_SETREGS, pid, 0, &regs) || ptrace(PTRACE_CONT, pid, 0, 0)) {
		snprintf(err, errlen, "cannot run dlopen in process %d", (int)pid);
		ptrace(PTRACE_SETREGS, pid, 0, &saved);
		ptrace(PTRACE_DETACH, pid, 0, 0);
		return -EIO;
	}
	for (;;) {
		st = wait_stop(pid, CALL_TIMEOUT_MS);
		if (st < 0) {
			/* stuck (a lock the loader needs?): taken back as it is */
			ptrace(PTRACE_INTERRUPT, pid, 0, 0);
			wait_stop(pid, 1000);
			ptrace(PTRACE_SETREGS, pid, 0, &saved);
			ptrace(PTRACE_DETACH, pid, 0, 0);
			snprintf(err, errlen, "dlopen in process %d did not return within %d s",
				 (int)pid, CALL_TIMEOUT_MS / 1000);
			return -ETIMEDOUT;
		}
		if (!WIFSTOPPED(st)) {
			snprintf(err, errlen, "process %d ended while libtrail was loaded into it",
				 (int)pid);
			return -ESRCH;
		}
		if (ptrace(PTRACE_GETREGS, pid, 0, &regs) == 0 && WSTOPSIG(st) == SIGSEGV &&
		    regs.rip == 0)
			break;
		/* another signal meanwhile: delivered after the call */
		if (WSTOPSIG(st) != SIGTRAP && st >> 16 == 0)
			pending = WSTOPSIG(st);
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
	ptrace(PTRACE_SETREGS, pid, 0, &saved);
	ptrace(PTRACE_DETACH, pid, 0, (void *)(long)pending);
	if (!regs.rax) {
		snprintf(err, errlen, "dlopen(\"%s\") failed in process %d", lib, (int)pid);
		return -EIO;
	}
	return 0;
}

int program_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), st = 0;
	size_t n;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) && elf_kind(e) == ELF_K_ELF &&
	    !elf_getphdrnum(e, &n) && n) {
		st = 1;
		for (size_t i = 0; i < n && st; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				st = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return st;
}
