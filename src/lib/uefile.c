/* SPDX-License-Identifier: MIT */
/*
 * uefile.c - the kernel's user_events ABI answered in the process: a
 * program written for <linux/user_events.h> opens
 * TRACEFS/user_events_data, registers events with ioctl(DIAG_IOCSREG),
 * writes them with writev(fd, [write_index, payload...]), and runs
 * unchanged under trail, without root or a kernel that has user_events.
 *
 * libtrail defines open, openat (and their 64 and fortified _2 forms),
 * ioctl, write, writev, close and dup, dup2, dup3: loaded first (trail
 * record preloads it), the program's calls come here. A path that is not
 * TRACEFS/user_events_data (or user_events_status), and an fd that is
 * not one we opened, go on to the C library at once: one load and a
 * branch for every other write. TRACEFS: /sys/kernel/tracing,
 * /sys/kernel/debug/tracing, or a tracefs mount of /proc/self/mounts.
 * TRAIL_USER_EVENTS=kernel leaves them to the kernel when its file is
 * there.
 *
 * An open file is /dev/null underneath (the fd is a real one: dup, fork,
 * poll and close work, a write that misses us goes nowhere), with its
 * write slots (write_index -> event: per file, never reused while it is
 * open, as the kernel's). Writers read the fd map and a file's slots
 * without a lock: the map is a fixed array (entries published with a
 * release store of their fd), the slots an array replaced whole when it
 * grows (the old ones freed when the file closes); a file is freed when
 * its last fd closes, as writing a closed fd is the program's bug.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "uevents.h"

/* <linux/user_events.h> (Debian 12's headers predate it: 6.4) */
#define UE_REG_PERSIST 1u
#define UE_REG_MULTI_FORMAT 2u
#define UE_REG_MAX 4u
#define DIAG_IOCSREG 0xc0082a00ul
#define DIAG_IOCSDEL 0x40082a01ul
#define DIAG_IOCSUNREG 0x40082a02ul
#define UE_REG_SIZE 28u   /* struct user_reg, packed */
#define UE_UNREG_SIZE 16u /* struct user_unreg, packed */
#define UE_PAGE 4096u

#define UE_MAP_MAX 256

struct slots {
	uint32_t n, cap;
	struct slots *old; /* the arrays it replaced, freed at close */
	struct uev *s[];
};

struct uefile {
	uint32_t fds;          /* fds open on it */
	struct slots *slots;   /* (acquire: pairs with the release in slot_of) */
};

static struct {
	int fd;                /* -1: free (release: after f) */
	struct uefile *f;
} map[UE_MAP_MAX];
static uint32_t map_hi;        /* entries in use are below it */
static int kernel_wanted;      /* TRAIL_USER_EVENTS=kernel */

static ssize_t (*real_write)(int, const void *, size_t);
static ssize_t (*real_writev)(int, const struct iovec *, int);
static int (*real_close)(int);
static int (*real_ioctl)(int, unsigned long, void *);
static int (*real_dup)(int);
static int (*real_dup2)(int, int);
static int (*real_dup3)(int, int, int);

static int (*next_open[8])(int, const char *, int, ...);
static const char *const open_names[8] = {"open", "open64", "openat", "openat64", "__open_2",
					  "__open64_2", "__openat_2", "__openat64_2"};

#define TRAIL_UNLIKELY(x) __builtin_expect(!!(x), 0)

__attribute__((constructor)) static void uefile_init(void)
{
	const char *k = getenv("TRAIL_USER_EVENTS");

	kernel_wanted = k && !strcmp(k, "kernel");
	for (int i = 0; i < UE_MAP_MAX; i++)
		map[i].fd = -1;
	real_write = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
	real_writev = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
	real_close = (int (*)(int))dlsym(RTLD_NEXT, "close");
	real_ioctl = (int (*)(int, unsigned long, void *))dlsym(RTLD_NEXT, "ioctl");
	real_dup = (int (*)(int))dlsym(RTLD_NEXT, "dup");
	real_dup2 = (int (*)(int, int))dlsym(RTLD_NEXT, "dup2");
	real_dup3 = (int (*)(int, int, int))dlsym(RTLD_NEXT, "dup3");
	for (unsigned k = 0; k < 8; k++)
		next_open[k] = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, open_names[k]);
}

/* ------------------------------------------------------------- the fd map */

static struct uefile *file_of(int fd)
{
	uint32_t hi = __atomic_load_n(&map_hi, __ATOMIC_ACQUIRE);

	if (fd < 0)
		return NULL;
	for (uint32_t i = 0; i < hi; i++)
		if (__atomic_load_n(&map[i].fd, __ATOMIC_ACQUIRE) == fd)
			return map[i].f;
	return NULL;
}

/* under the lock */
static int map_add(int fd, struct uefile *f)
{
	for (uint32_t i = 0; i < UE_MAP_MAX; i++)
		if (map[i].fd < 0) {
			map[i].f = f;
			__atomic_store_n(&map[i].fd, fd, __ATOMIC_RELEASE);
			if (i >= map_hi)
				__atomic_store_n(&map_hi, i + 1, __ATOMIC_RELEASE);
			f->fds++;
			return 0;
		}
	return -EMFILE;
}

/* under the lock: fd out of the map; its file if that was its last fd
 * (the caller frees it: file_free) */
static struct uefile *map_remove(int fd)
{
	for (uint32_t i = 0; i < map_hi; i++)
		if (map[i].fd == fd) {
			struct uefile *f = map[i].f;

			__atomic_store_n(&map[i].fd, -1, __ATOMIC_RELEASE);
			return --f->fds ? NULL : f;
		}
	return NULL;
}

/* a file no fd has open: its events' references dropped (under the
 * lock), and those to delete gathered for after it */
static void file_drop(struct uefile *f, struct uev **del)
{
	struct slots *s = f->slots;

	*del = NULL;
	for (uint32_t i = 0; s && i < s->n; i++) {
		struct uev *d;

		trail__uev_put(s->s[i], &d);
		if (d) {
			d->next = *del;
			*del = d;
		}
	}
}

static void file_free(struct uefile *f)
{
	for (struct slots *s = f->slots, *o; s; s = o) {
		o = s->old;
		free(s);
	}
	free(f);
}

static void delete_all(struct uev *d)
{
	for (struct uev *nx; d; d = nx) {
		nx = d->next;
		trail__uev_delete(d);
	}
}

/* under the lock: u's write index in f, a slot (and the reference the
 * caller took) added if it has none; -ENOMEM */
static int slot_of(struct uefile *f, struct uev *u, int *had)
{
	struct slots *s = f->slots, *ns;

	*had = 0;
	for (uint32_t i = 0; s && i < s->n; i++)
		if (s->s[i] == u) {
			*had = 1;
			return (int)i;
		}
	if (s && s->n < s->cap) {
		s->s[s->n] = u;
		/* pairs with the acquire in slot_get */
		__atomic_store_n(&s->n, s->n + 1, __ATOMIC_RELEASE);
		return (int)s->n - 1;
	}
	ns = malloc(sizeof(*ns) + (s ? s->cap * 2 : 16) * sizeof(ns->s[0]));
	if (!ns)
		return -ENOMEM;
	ns->cap = s ? s->cap * 2 : 16;
	ns->n = s ? s->n : 0;
	ns->old = s;
	if (s)
		memcpy(ns->s, s->s, s->n * sizeof(s->s[0]));
	ns->s[ns->n++] = u;
	__atomic_store_n(&f->slots, ns, __ATOMIC_RELEASE);
	return (int)ns->n - 1;
}

static struct uev *slot_get(struct uefile *f, uint32_t idx)
{
	struct slots *s = __atomic_load_n(&f->slots, __ATOMIC_ACQUIRE);

	if (!s || idx >= __atomic_load_n(&s->n, __ATOMIC_ACQUIRE))
		return NULL;
	return s->s[idx];
}

/* ------------------------------------------------- the program's memory */

/* n bytes at addr, through the kernel (EFAULT, not a fault, for a bad
 * pointer); where it may not be asked, read directly. Short reads: the
 * bytes read. */
static ssize_t peek(void *dst, uint64_t addr, size_t n)
{
	struct iovec l = {dst, n}, r = {(void *)(uintptr_t)addr, n};
	ssize_t k = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	if (k < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy(dst, (const void *)(uintptr_t)addr, n);
		return (ssize_t)n;
	}
	return k;
}

static int poke(uint64_t addr, const void *src, size_t n)
{
	struct iovec l = {(void *)src, n}, r = {(void *)(uintptr_t)addr, n};
	ssize_t k = process_vm_writev(getpid(), &l, 1, &r, 1, 0);

	if (k < 0 && (errno == ENOSYS || errno == EPERM)) {
		memcpy((void *)(uintptr_t)addr, src, n);
		return 0;
	}
	return k == (ssize_t)n ? 0 : -EFAULT;
}

/* a string of at most 511 bytes at addr into buf (512): 0, -EFAULT,
 * -EINVAL (longer) */
static int peek_string(char *buf, uint64_t addr)
{
	size_t got = 0;

	while (got < TRAIL_UE_DESC_MAX) {
		size_t room = UE_PAGE - ((addr + got) & (UE_PAGE - 1)), k;
		ssize_t r;

		if (room > TRAIL_UE_DESC_MAX - got)
			room = TRAIL_UE_DESC_MAX - got;
		r = peek(buf + got, addr + got, room);
		if (r <= 0)
			return -EFAULT;
		k = (size_t)r;
		if (memchr(buf + got, 0, k))
			return 0;
		got += k;
	}
	return -EINVAL;
}

/* a struct of at least min bytes whose first word is its size: in buf
 * (min bytes), 0 or the kernel's errno (copy_struct_from_user) */
static int peek_struct(void *buf, uint64_t addr, uint32_t min)
{
	uint8_t tail[256];
	uint32_t size;

	if (peek(&size, addr, 4) != 4)
		return -EFAULT;
	if (size > UE_PAGE)
		return -E2BIG;
	if (size < min)
		return -EINVAL;
	if (peek(buf, addr, min) != (ssize_t)min)
		return -EFAULT;
	for (uint32_t o = min; o < size;) {
		uint32_t k = size - o < sizeof(tail) ? size - o : (uint32_t)sizeof(tail);

		if (peek(tail, addr + o, k) != (ssize_t)k)
			return -EFAULT;
		for (uint32_t i = 0; i < k; i++)
			if (tail[i])
				return -E2BIG;
		o += k;
	}
	return 0;
}

/* ----------------------------------------------------------------- ioctls */

static int do_reg(struct uefile *f, uint64_t arg)
{
	uint8_t reg[UE_REG_SIZE];
	char name[TRAIL_UE_DESC_MAX];
	struct trail_filter_err e;
	struct trail_ue_def *def;
	struct uev *u = NULL, *del = NULL;
	uint64_t addr, args;
	uint16_t flags;
	uint8_t bit, size;
	int r, idx = 0, had;
	uint32_t widx;
	sigset_t saved;
	const char *sp;

	if ((r = peek_struct(reg, arg, UE_REG_SIZE)))
		return r;
	bit = reg[4];
	size = reg[5];
	memcpy(&flags, reg + 6, 2);
	memcpy(&addr, reg + 8, 8);
	memcpy(&args, reg + 16, 8);
	if (flags & ~(UE_REG_MAX - 1))
		return -EINVAL;
	if ((size != 4 && size != 8) || addr % size || bit > size * 8 - 1)
		return -EINVAL;
	if (addr + size > 0x7ffffffff000ull || addr + size < addr)
		return -EFAULT;
	if (!(def = malloc(sizeof(*def))))
		return -ENOMEM;
	ue_lock(&saved);
	if (trail__uev_enabler_find(addr, bit) >= 0) {
		r = -EADDRINUSE;
		goto out;
	}
	if ((r = peek_string(name, args)))
		goto out;
	sp = strchr(name, ' ');
	if (memchr(name, ':', sp ? (size_t)(sp - name) : strlen(name))) {
		r = -EINVAL; /* (flags: none are defined) */
		goto out;
	}
	if ((flags & UE_REG_PERSIST) && !trail__uev_perfmon()) {
		r = -EPERM;
		goto out;
	}
	if ((r = trail_ue_parse(name, 0, def, &e)))
		goto out;
	r = trail__uev_get(flags & UE_REG_MULTI_FORMAT ? TRAIL_UE_MULTI_PROVIDER : TRAIL_UE_PROVIDER,
			   def, !!(flags & UE_REG_MULTI_FORMAT), !!(flags & UE_REG_PERSIST), &u);
	if (r)
		goto out;
	idx = slot_of(f, u, &had);
	if (idx < 0 || had) /* the file's slot holds one reference */
		trail__uev_put(u, &del);
	if (idx < 0) {
		r = idx;
		goto out;
	}
	r = trail__uev_enabler_add(u, addr, bit, size);
out:
	ue_unlock(&saved);
	free(def);
	trail__uev_delete(del);
	if (r)
		return r == -E2BIG ? -EINVAL : r;
	widx = (uint32_t)idx;
	poke(arg + 24, &widx, 4); /* (the kernel ignores a failure here too) */
	return 0;
}

static int do_unreg(uint64_t arg)
{
	uint8_t un[UE_UNREG_SIZE];
	struct uev *del = NULL;
	uint64_t addr;
	sigset_t saved;
	int r;

	if ((r = peek_struct(un, arg, UE_UNREG_SIZE)))
		return r;
	if (un[5] || un[6] || un[7])
		return -EINVAL;
	memcpy(&addr, un + 8, 8);
	ue_lock(&saved);
	r = trail__uev_enabler_remove(addr, un[4], &del);
	ue_unlock(&saved);
	trail__uev_delete(del);
	return r;
}

static int do_del(uint64_t arg)
{
	char name[TRAIL_UE_DESC_MAX];
	struct uev *del = NULL;
	sigset_t saved;
	int r;

	if ((r = peek_string(name, arg)))
		return r;
	ue_lock(&saved);
	r = trail__uev_del_name(name, &del);
	ue_unlock(&saved);
	delete_all(del);
	return r;
}

/* ----------------------------------------------------------------- writes */

#define GATHER_STACK 8192

static ssize_t ue_writev(struct uefile *f, const struct iovec *iov, int n)
{
	uint8_t stack[GATHER_STACK], *p = NULL, *heap = NULL;
	size_t total = 0, plen, o = 0, skip = 4;
	int32_t idx = 0;
	struct uev *u;
	int r;

	if (n < 0 || n > IOV_MAX) {
		errno = EINVAL;
		return -1;
	}
	for (int i = 0; i < n; i++) {
		if (iov[i].iov_len > SSIZE_MAX - total) {
			errno = EINVAL;
			return -1;
		}
		total += iov[i].iov_len;
	}
	if (total < 4) {
		errno = EFAULT;
		return -1;
	}
	/* the index: the first 4 bytes, across entries if need be */
	for (int i = 0; i < n && o < 4; i++) {
		size_t k = iov[i].iov_len < 4 - o ? iov[i].iov_len : 4 - o;

		memcpy((uint8_t *)&idx + o, iov[i].iov_base, k);
		o += k;
	}
	if (idx < 0) {
		errno = EINVAL;
		return -1;
	}
	if (!(u = slot_get(f, (uint32_t)idx))) {
		errno = ENOENT;
		return -1;
	}
	plen = total - 4;
	if (plen < u->def.min_size) {
		errno = EINVAL;
		return -1;
	}
	if (!__atomic_load_n(&u->state, __ATOMIC_RELAXED)) {
		errno = EBADF;
		return -1;
	}
	/* the payload in one piece: where it is, if one entry holds it */
	for (int i = 0; i < n; i++) {
		size_t l = iov[i].iov_len;

		if (skip >= l) {
			skip -= l;
			continue;
		}
		if (l - skip == plen)
			p = (uint8_t *)iov[i].iov_base + skip;
		break;
	}
	if (!p) {
		p = plen <= sizeof(stack) ? stack : (heap = malloc(plen));
		if (!p) {
			errno = ENOMEM;
			return -1;
		}
		o = 0;
		skip = 4;
		for (int i = 0; i < n; i++) {
			size_t l = iov[i].iov_len, from = skip < l ? skip : l;

			skip -= from;
			memcpy(p + o, (uint8_t *)iov[i].iov_base + from, l - from);
			o += l - from;
		}
	}
	r = trail__uev_write_kernel(u, p, plen);
	free(heap);
	if (r) {
		errno = -r;
		return -1;
	}
	return (ssize_t)total;
}

/* ------------------------------------------------------------------ opens */

static int tracefs_dir(const char *dir, size_t n)
{
	static const char *const std[] = {"/sys/kernel/tracing", "/sys/kernel/debug/tracing"};
	char line[1024];
	FILE *m;
	int hit = 0;

	while (n > 1 && dir[n - 1] == '/')
		n--;
	for (size_t i = 0; i < 2; i++)
		if (strlen(std[i]) == n && !memcmp(std[i], dir, n))
			return 1;
	if (!(m = fopen("/proc/self/mounts", "re")))
		return 0;
	while (!hit && fgets(line, sizeof(line), m)) {
		char *sp1 = strchr(line, ' '), *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;

		hit = sp2 && !strncmp(sp2 + 1, "tracefs ", 8) && (size_t)(sp2 - sp1 - 1) == n &&
		      !memcmp(sp1 + 1, dir, n);
	}
	fclose(m);
	return hit;
}

/* Is path (relative to dirfd) TRACEFS/user_events_data (1) or
 * TRACEFS/user_events_status (2)? 0: neither. */
static int ue_path(int dirfd, const char *path)
{
	static const char data[] = "user_events_data", status[] = "user_events_status";
	size_t n = path ? strlen(path) : 0, dn;
	const char *base;
	char dir[PATH_MAX];
	int which;

	if (n >= sizeof(data) - 1 && !memcmp(path + n - (sizeof(data) - 1), data, sizeof(data) - 1))
		which = 1;
	else if (n >= sizeof(status) - 1 &&
		 !memcmp(path + n - (sizeof(status) - 1), status, sizeof(status) - 1))
		which = 2;
	else
		return 0;
	base = path + n - (which == 1 ? sizeof(data) - 1 : sizeof(status) - 1);
	if (base != path && base[-1] != '/')
		return 0;
	if (path[0] == '/')
		return tracefs_dir(path, (size_t)(base - path)) ? which : 0;
	/* relative: to the working directory or dirfd */
	if (dirfd == AT_FDCWD) {
		if (!getcwd(dir, sizeof(dir)))
			return 0;
	} else {
		char link[64];
		ssize_t k;

		snprintf(link, sizeof(link), "/proc/self/fd/%d", dirfd);
		if ((k = readlink(link, dir, sizeof(dir) - 1)) <= 0)
			return 0;
		dir[k] = '\0';
	}
	dn = strlen(dir);
	if (dn + 1 + (size_t)(base - path) >= sizeof(dir))
		return 0;
	dir[dn++] = '/';
	memcpy(dir + dn, path, (size_t)(base - path));
	dn += (size_t)(base - path);
	return tracefs_dir(dir, dn) ? which : 0;
}

static int open_status(int flags)
{
	char *buf = malloc(1 << 20);
	size_t n;
	sigset_t saved;
	int fd;

	if (!buf) {
		errno = ENOMEM;
		return -1;
	}
	ue_lock(&saved);
	n = trail__uev_status(buf, 1 << 20);
	ue_unlock(&saved);
	fd = memfd_create("user_events_status", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	if (fd >= 0 && (real_write ? real_write(fd, buf, n) : write(fd, buf, n)) != (ssize_t)n) {
		int e = errno;

		(real_close ? real_close : close)(fd);
		fd = -1;
		errno = e;
	}
	free(buf);
	if (fd >= 0)
		lseek(fd, 0, SEEK_SET);
	return fd;
}

/* the open of a user_events file (which: ue_path's), or -2: not ours */
static int ue_open(int dirfd, const char *path, int flags)
{
	int which = ue_path(dirfd, path), fd, r;
	struct uefile *f;
	sigset_t saved;

	if (!which)
		return -2;
	if (kernel_wanted && !faccessat(dirfd, path, F_OK, 0))
		return -2;
	if (which == 2)
		return open_status(flags);
	trail__init();
	fd = (int)syscall(SYS_openat, AT_FDCWD, "/dev/null", O_RDWR | (flags & O_CLOEXEC));
	if (fd < 0)
		return -1;
	if (!(f = calloc(1, sizeof(*f)))) {
		(real_close ? real_close : close)(fd);
		errno = ENOMEM;
		return -1;
	}
	ue_lock(&saved);
	r = map_add(fd, f);
	ue_unlock(&saved);
	if (r) {
		free(f);
		(real_close ? real_close : close)(fd);
		errno = -r;
		return -1;
	}
	return fd;
}

#define API __attribute__((visibility("default")))

static int mode_of(int flags, va_list ap)
{
	return (flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE ? va_arg(ap, int) : 0;
}

/*
 * The entry points, by their symbol names (the headers may rename open
 * to open64 under _FILE_OFFSET_BITS=64). Each goes on to the C library's
 * function of its own name (other interposers after us included), so a
 * probe on the C library's open still sees the program's opens; before
 * our constructor ran, to the system call.
 */

static int next(unsigned k, int dirfd, const char *path, int flags, int mode)
{
	int (*fn)(int, const char *, int, ...) = next_open[k];

	if (!fn)
		return (int)syscall(SYS_openat, dirfd, path, flags, mode);
	if (k >= 4) /* (the fortified ones: no mode) */
		return k < 6 ? ((int (*)(const char *, int))(void *)fn)(path, flags)
			     : ((int (*)(int, const char *, int))(void *)fn)(dirfd, path, flags);
	if (k < 2)
		return ((int (*)(const char *, int, ...))(void *)fn)(path, flags, mode);
	return fn(dirfd, path, flags, mode);
}

/* the va_list forms' work: ours, or the next one's */
static int open_va(unsigned k, int dirfd, const char *path, int flags, va_list ap)
{
	int mode = mode_of(flags, ap), fd = ue_open(dirfd, path, flags);

	return fd != -2 ? fd : next(k, dirfd, path, flags, mode);
}

#define OPEN_VA(k, sym, cname, ...)                                                                 \
	API int cname(__VA_ARGS__, const char *path, int flags, ...) __asm__(sym);                  \
	API int cname(__VA_ARGS__, const char *path, int flags, ...)                                \
	{                                                                                           \
		va_list ap;                                                                         \
		int fd;                                                                             \
                                                                                                    \
		va_start(ap, flags);                                                                \
		fd = open_va(k, dirfd, path, flags, ap);                                            \
		va_end(ap);                                                                         \
		return fd;                                                                          \
	}
/* (open's first parameter is its path: a dummy int before it would
 * change its calling convention, so open is spelled out) */
#define OPEN_AT(k, sym, cname) OPEN_VA(k, sym, cname, int dirfd)
#define OPEN(k, sym, cname)                                                                         \
	API int cname(const char *path, int flags, ...) __asm__(sym);                               \
	API int cname(const char *path, int flags, ...)                                             \
	{                                                                                           \
		va_list ap;                                                                         \
		int fd;                                                                             \
                                                                                                    \
		va_start(ap, flags);                                                                \
		fd = open_va(k, AT_FDCWD, path, flags, ap);                                         \
		va_end(ap);                                                                         \
		return fd;                                                                          \
	}
#define OPEN2(k, sym, cname)                                                                        \
	API int cname(const char *path, int flags) __asm__(sym);                                    \
	API int cname(const char *path, int flags)                                                  \
	{                                                                                           \
		int fd = ue_open(AT_FDCWD, path, flags);                                            \
                                                                                                    \
		return fd != -2 ? fd : next(k, AT_FDCWD, path, flags, 0);                           \
	}
#define OPENAT2(k, sym, cname)                                                                      \
	API int cname(int dirfd, const char *path, int flags) __asm__(sym);                         \
	API int cname(int dirfd, const char *path, int flags)                                       \
	{                                                                                           \
		int fd = ue_open(dirfd, path, flags);                                               \
                                                                                                    \
		return fd != -2 ? fd : next(k, dirfd, path, flags, 0);                              \
	}
OPEN(0, "open", ue_entry_open)
OPEN(1, "open64", ue_entry_open64)
OPEN_AT(2, "openat", ue_entry_openat)
OPEN_AT(3, "openat64", ue_entry_openat64)
OPEN2(4, "__open_2", ue_entry_open_2)
OPEN2(5, "__open64_2", ue_entry_open64_2)
OPENAT2(6, "__openat_2", ue_entry_openat_2)
OPENAT2(7, "__openat64_2", ue_entry_openat64_2)

API int ioctl(int fd, unsigned long req, ...)
{
	struct uefile *f;
	va_list ap;
	void *arg;
	int r;

	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (TRAIL_UNLIKELY(__atomic_load_n(&map_hi, __ATOMIC_RELAXED)) && (f = file_of(fd))) {
		switch (req) {
		case DIAG_IOCSREG: r = do_reg(f, (uint64_t)(uintptr_t)arg); break;
		case DIAG_IOCSUNREG: r = do_unreg((uint64_t)(uintptr_t)arg); break;
		case DIAG_IOCSDEL: r = do_del((uint64_t)(uintptr_t)arg); break;
		default: r = -ENOTTY; break;
		}
		if (r) {
			errno = -r;
			return -1;
		}
		return 0;
	}
	if (real_ioctl)
		return real_ioctl(fd, req, arg);
	return (int)syscall(SYS_ioctl, fd, req, arg);
}

API ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct uefile *f;

	if (TRAIL_UNLIKELY(__atomic_load_n(&map_hi, __ATOMIC_RELAXED)) && (f = file_of(fd)))
		return ue_writev(f, iov, n);
	if (real_writev)
		return real_writev(fd, iov, n);
	return syscall(SYS_writev, fd, iov, n);
}

API ssize_t write(int fd, const void *buf, size_t n)
{
	struct uefile *f;

	if (TRAIL_UNLIKELY(__atomic_load_n(&map_hi, __ATOMIC_RELAXED)) && (f = file_of(fd))) {
		struct iovec v = {(void *)buf, n};

		return ue_writev(f, &v, 1);
	}
	if (real_write)
		return real_write(fd, buf, n);
	return syscall(SYS_write, fd, buf, n);
}

/* fd closed (by close, or by dup2/dup3 over it): out of the map */
static void forget(int fd)
{
	struct uefile *f;
	struct uev *del = NULL;
	sigset_t saved;

	ue_lock(&saved);
	if ((f = map_remove(fd)))
		file_drop(f, &del);
	ue_unlock(&saved);
	if (f)
		file_free(f);
	delete_all(del);
}

API int close(int fd)
{
	if (TRAIL_UNLIKELY(__atomic_load_n(&map_hi, __ATOMIC_RELAXED)) && file_of(fd))
		forget(fd);
	if (real_close)
		return real_close(fd);
	return (int)syscall(SYS_close, fd);
}

/* newfd (>= 0) now has what oldfd has open */
static void dup_of(int oldfd, int newfd)
{
	struct uefile *f;
	sigset_t saved;

	if (newfd < 0 || !__atomic_load_n(&map_hi, __ATOMIC_RELAXED))
		return;
	if (file_of(newfd))
		forget(newfd);
	if ((f = file_of(oldfd))) {
		ue_lock(&saved);
		map_add(newfd, f); /* (past UE_MAP_MAX: newfd is /dev/null only) */
		ue_unlock(&saved);
	}
}

API int dup(int oldfd)
{
	int fd = real_dup ? real_dup(oldfd) : (int)syscall(SYS_dup, oldfd);

	dup_of(oldfd, fd);
	return fd;
}

API int dup2(int oldfd, int newfd)
{
	int fd = real_dup2 ? real_dup2(oldfd, newfd) : (int)syscall(SYS_dup2, oldfd, newfd);

	if (fd >= 0 && oldfd != newfd)
		dup_of(oldfd, fd);
	return fd;
}

API int dup3(int oldfd, int newfd, int flags)
{
	int fd = real_dup3 ? real_dup3(oldfd, newfd, flags)
			   : (int)syscall(SYS_dup3, oldfd, newfd, flags);

	dup_of(oldfd, fd);
	return fd;
}
