/* SPDX-License-Identifier: MIT */
/*
 * uevents.c - a program written against the kernel's user_events ABI
 * only (Documentation/trace/user_events.rst; its own copy of the uapi
 * definitions: Debian 12's headers predate Linux 6.4). Nothing of trail:
 * under `trail record` libtrail answers its file.
 *
 *   uevents basic N       N rounds of three events, each written when its
 *                         bit is set; prints "written a=N b=N c=N"
 *   uevents errors        the kernel's answers to bad registrations and
 *                         writes, one "name errno" line each
 *   uevents wait FILE N   register, print "ready", then write while the
 *                         bit is set until FILE exists (attach, detach);
 *                         prints the bit's changes seen and the writes
 *   uevents fork N        register, fork, the child writes N (its bits
 *                         inherited), unregisters in the child only
 *   uevents exec          register, then exec itself ("uevents after"),
 *                         which writes with the old fd's index
 *   uevents multi         a MULTI_FORMAT name twice, with other fields;
 *                         user_events_status printed
 *   uevents churn N       N events registered, written, unregistered and
 *                         deleted in a loop
 *   uevents threads T N   T threads writing N each
 *   uevents waitthreads FILE T   T threads writing while the bit is set,
 *                         until FILE exists; prints the writes
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* <linux/user_events.h> */
#define USER_EVENT_REG_PERSIST (1U << 0)
#define USER_EVENT_REG_MULTI_FORMAT (1U << 1)
#define USER_EVENT_REG_MAX (1U << 2)
#define DYN_LOC(offset, size) ((size) << 16 | (offset))
struct user_reg {
	uint32_t size;
	uint8_t enable_bit;
	uint8_t enable_size;
	uint16_t flags;
	uint64_t enable_addr;
	uint64_t name_args;
	uint32_t write_index;
} __attribute__((__packed__));
struct user_unreg {
	uint32_t size;
	uint8_t disable_bit;
	uint8_t __reserved;
	uint16_t __reserved2;
	uint64_t disable_addr;
} __attribute__((__packed__));
#define DIAG_IOC_MAGIC '*'
#define DIAG_IOCSREG _IOWR(DIAG_IOC_MAGIC, 0, struct user_reg *)
#define DIAG_IOCSDEL _IOW(DIAG_IOC_MAGIC, 1, char *)
#define DIAG_IOCSUNREG _IOW(DIAG_IOC_MAGIC, 2, struct user_unreg *)

static int data_fd = -1;
static volatile uint32_t enabled;          /* bits 0, 1, 2 */
static volatile uint64_t enabled64;        /* bit 40 */
static uint32_t idx_a, idx_b, idx_c;

static int open_data(void)
{
	int fd = open("/sys/kernel/tracing/user_events_data", O_RDWR);

	if (fd < 0)
		fd = open("/sys/kernel/debug/tracing/user_events_data", O_RDWR);
	if (fd < 0) {
		fprintf(stderr, "uevents: user_events_data: %s\n", strerror(errno));
		exit(3);
	}
	return fd;
}

static int reg(int fd, const char *def, volatile void *addr, int bit, int size, int flags,
	       uint32_t *idx)
{
	struct user_reg r = {0};

	r.size = sizeof(r);
	r.enable_bit = (uint8_t)bit;
	r.enable_size = (uint8_t)size;
	r.flags = (uint16_t)flags;
	r.enable_addr = (uint64_t)(uintptr_t)addr;
	r.name_args = (uint64_t)(uintptr_t)def;
	if (ioctl(fd, DIAG_IOCSREG, &r) == -1)
		return -errno;
	if (idx)
		*idx = r.write_index;
	return 0;
}

static int unreg(int fd, volatile void *addr, int bit)
{
	struct user_unreg u = {0};

	u.size = sizeof(u);
	u.disable_bit = (uint8_t)bit;
	u.disable_addr = (uint64_t)(uintptr_t)addr;
	return ioctl(fd, DIAG_IOCSUNREG, &u) == -1 ? -errno : 0;
}

static void must(int r, const char *what)
{
	if (r) {
		fprintf(stderr, "uevents: %s: %s\n", what, strerror(-r));
		exit(1);
	}
}

static void register_three(void)
{
	data_fd = open_data();
	must(reg(data_fd, "ue_count u32 round; s64 neg", &enabled, 0, 4, 0, &idx_a), "ue_count");
	must(reg(data_fd, "ue_msg __data_loc char[] text; u32 n; __rel_loc char[] tail; char[8] tag",
		 &enabled, 1, 4, 0, &idx_b), "ue_msg");
	must(reg(data_fd, "ue_blob struct pair p 8; unsigned char c", &enabled64, 40, 8, 0, &idx_c),
	     "ue_blob");
}

/* one round of the three events, each if its bit is set; the writes
 * that succeeded counted */
static void round_of(uint32_t i, long *wa, long *wb, long *wc)
{
	if (enabled & 1) {
		int64_t neg = -(int64_t)i;
		/* (bytes past the fields: taken, not recorded) */
		struct iovec v[4] = {{&idx_a, 4}, {&i, 4}, {&neg, 8}, {"junk!", i % 2 ? 5 : 0}};

		if (writev(data_fd, v, 4) == (i % 2 ? 21 : 16))
			(*wa)++;
	}
	if (enabled & 2) {
		/* payload: loc(4) n(4) rel(4) tag(8), then "hello-N\0", "t\0" */
		char text[32], tag[8] = "tag";
		uint8_t buf[64];
		uint32_t loc, rel, tl;
		size_t o = 20;

		tl = (uint32_t)snprintf(text, sizeof(text), "hello-%u", i) + 1;
		memcpy(buf + o, text, tl);
		loc = DYN_LOC(8 + (uint32_t)o, tl); /* counted from the record's start */
		o += tl;
		memcpy(buf + o, "t", 2);
		rel = DYN_LOC((uint32_t)o - 12, 2); /* from the end of the field (8 + 4) */
		o += 2;
		memcpy(buf, &loc, 4);
		memcpy(buf + 4, &i, 4);
		memcpy(buf + 8, &rel, 4);
		memcpy(buf + 12, tag, 8);
		struct iovec v[2] = {{&idx_b, 4}, {buf, o}};

		if (writev(data_fd, v, 2) == (ssize_t)(4 + o))
			(*wb)++;
	}
	if (enabled64 >> 40 & 1) {
		uint8_t rec[4 + 9];
		uint32_t p[2] = {i, ~i};

		memcpy(rec, &idx_c, 4);
		memcpy(rec + 4, p, 8);
		rec[12] = (uint8_t)i;
		if (write(data_fd, rec, sizeof(rec)) == (ssize_t)sizeof(rec))
			(*wc)++;
	}
}

static int basic(int n)
{
	long wa = 0, wb = 0, wc = 0;

	register_three();
	for (int i = 0; i < n; i++)
		round_of((uint32_t)i, &wa, &wb, &wc);
	printf("written a=%ld b=%ld c=%ld\n", wa, wb, wc);
	return 0;
}

#define E(what, expr) printf("%s %s\n", what, (r = (expr)) ? strerrorname_np(-r) : "0")

static int errors(void)
{
	volatile uint32_t w[4] = {0};
	static const int ro_page_len = 4096;
	uint32_t *ro = mmap(NULL, (size_t)ro_page_len, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct user_reg big[2];
	char longname[600];
	uint32_t idx = 99, i2;
	int fd = open_data(), r;
	ssize_t k;

	E("reg_ok", reg(fd, "ue_err u32 a; u32 b", &w[0], 31, 4, 0, &idx));
	printf("index %u\n", idx);
	E("same_addr_bit", reg(fd, "ue_err u32 a; u32 b", &w[0], 31, 4, 0, NULL));
	E("same_event_bit30", reg(fd, "ue_err u32 a; u32 b", &w[0], 30, 4, 0, &i2));
	printf("index %u\n", i2);
	E("nospace_match", reg(fd, "ue_err u32 a;u32 b", &w[0], 29, 4, 0, NULL));
	E("other_format", reg(fd, "ue_err u32 a", &w[1], 0, 4, 0, NULL));
	E("flags_max", reg(fd, "ue_f u32 a", &w[1], 1, 4, USER_EVENT_REG_MAX, NULL));
	E("size_2", reg(fd, "ue_f u32 a", &w[1], 1, 2, 0, NULL));
	E("bit_32", reg(fd, "ue_f u32 a", &w[1], 32, 4, 0, NULL));
	E("unaligned", reg(fd, "ue_f u32 a", (volatile uint8_t *)&w[1] + 2, 1, 4, 0, NULL));
	E("readonly", reg(fd, "ue_ro u32 a", ro, 0, 4, 0, NULL));
	E("flags_text", reg(fd, "ue_f:BPF_ITER u32 a", &w[1], 2, 4, 0, NULL));
	E("bad_type", reg(fd, "ue_f long a", &w[1], 3, 4, 0, NULL));
	E("two_blanks", reg(fd, "ue_f u32  a", &w[1], 4, 4, 0, NULL));
	E("size_on_int", reg(fd, "ue_f char a 20", &w[1], 5, 4, 0, NULL));
	E("struct_no_size", reg(fd, "ue_f struct custom a", &w[1], 6, 4, 0, NULL));
	E("array_9999", reg(fd, "ue_f char[9999] a", &w[1], 7, 4, 0, NULL));
	E("array_hex", reg(fd, "ue_hex char[0x14] a", &w[1], 8, 4, 0, NULL));
	memset(longname, 'x', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = '\0';
	E("too_long", reg(fd, longname, &w[1], 9, 4, 0, NULL));
	E("bad_pointer", reg(fd, (const char *)8, &w[1], 10, 4, 0, NULL));
	/* a size past the struct, its tail not all zeros (the kernel's
	 * copy_struct_from_user: E2BIG) */
	memset(big, 0, sizeof(big));
	big[0].size = sizeof(big);
	big[1].flags = 1;
	E("size_tail_nonzero", ioctl(fd, DIAG_IOCSREG, big) == -1 ? -errno : 0);
	E("persist", reg(fd, "ue_p u32 a", &w[1], 11, 4, USER_EVENT_REG_PERSIST, NULL));
	E("multi_first", reg(fd, "ue_multi u32 first", &w[2], 0, 4, USER_EVENT_REG_MULTI_FORMAT, NULL));
	E("multi_second", reg(fd, "ue_multi u64 second", &w[2], 1, 4, USER_EVENT_REG_MULTI_FORMAT, NULL));
	/* writes: a disabled event, an unknown index, short ones */
	{
		uint32_t bad = 7, pay[3] = {idx, 1, 2};
		int32_t neg = -1;

		k = write(fd, pay, 12);
		printf("write_disabled %s\n", k < 0 ? strerrorname_np(errno) : "ok");
		pay[0] = bad;
		k = write(fd, pay, 12);
		printf("write_unknown_index %s\n", k < 0 ? strerrorname_np(errno) : "ok");
		k = write(fd, &neg, 4);
		printf("write_negative_index %s\n", k < 0 ? strerrorname_np(errno) : "ok");
		k = write(fd, pay, 2);
		printf("write_short %s\n", k < 0 ? strerrorname_np(errno) : "ok");
		pay[0] = idx;
		k = write(fd, pay, 8);
		printf("write_short_payload %s\n", k < 0 ? strerrorname_np(errno) : "ok");
	}
	E("unreg_unknown", unreg(fd, &w[3], 0));
	E("unreg_31", unreg(fd, &w[0], 31));
	E("unreg_31_again", unreg(fd, &w[0], 31));
	E("del_busy", ioctl(fd, DIAG_IOCSDEL, "ue_err") == -1 ? -errno : 0);
	E("del_unknown", ioctl(fd, DIAG_IOCSDEL, "ue_nothing") == -1 ? -errno : 0);
	E("unknown_ioctl", ioctl(fd, _IO('*', 9), 0) == -1 ? -errno : 0);
	close(fd);
	/* the enablers stay after close (the process's, not the fd's) */
	fd = open_data();
	E("unreg_30_after_close", unreg(fd, &w[0], 30));
	E("unreg_29", unreg(fd, &w[0], 29));
	/* now nothing holds ue_err: deleted with its last reference */
	E("del_gone", ioctl(fd, DIAG_IOCSDEL, "ue_err") == -1 ? -errno : 0);
	E("reg_again_other_format", reg(fd, "ue_err u64 x", &w[0], 31, 4, 0, NULL));
	E("unreg_again", unreg(fd, &w[0], 31));
	close(fd);
	return 0;
}

/* attach and detach while it writes: the bit's changes seen */
static int wait_for(const char *stop, int max_s)
{
	long wa = 0, wb = 0, wc = 0, changes = 0;
	uint32_t last = 0, i = 0;
	time_t t0 = time(NULL);

	register_three();
	printf("ready\n");
	fflush(stdout);
	while (access(stop, F_OK) && time(NULL) - t0 < max_s) {
		uint32_t now = enabled & 1;

		if (now != last) {
			changes++;
			last = now;
		}
		round_of(i++, &wa, &wb, &wc);
		if (!(i % 64)) {
			struct timespec ts = {0, 1000000};

			nanosleep(&ts, NULL);
		}
	}
	printf("changes=%ld written a=%ld b=%ld c=%ld\n", changes, wa, wb, wc);
	return 0;
}

/* ue_count(i, -i) if its bit is set: 1 if written */
static int write_count(uint32_t i)
{
	int64_t neg = -(int64_t)i;
	struct iovec v[3] = {{&idx_a, 4}, {&i, 4}, {&neg, 8}};

	return (enabled & 1) && writev(data_fd, v, 3) == 16;
}

/* T threads writing ue_count while the bit is set, until FILE exists:
 * attach and detach meet writers mid-write */
static const char *stop_file;
static void *wait_thread(void *arg)
{
	long w = 0;
	uint32_t i = 0;
	time_t t0 = time(NULL);

	(void)arg;
	while (access(stop_file, F_OK) && time(NULL) - t0 < 60) { /* (bounded) */
		struct timespec ts = {0, 200000};

		for (int k = 0; k < 64; k++, i++)
			w += write_count(i);
		nanosleep(&ts, NULL); /* (a few 100,000 records a second) */
	}
	return (void *)w;
}

static int wait_threads(const char *stop, int t)
{
	pthread_t th[16];
	long total = 0;

	stop_file = stop;
	register_three();
	if (t > 16)
		t = 16;
	for (int i = 0; i < t; i++)
		pthread_create(&th[i], NULL, wait_thread, NULL);
	printf("ready\n");
	for (int i = 0; i < t; i++) {
		void *w;

		pthread_join(th[i], &w);
		total += (long)w;
	}
	printf("threads written a=%ld\n", total);
	return 0;
}

static int forked(int n)
{
	long wa = 0, wb = 0, wc = 0;
	int st;
	pid_t c;

	register_three();
	c = fork();
	if (c == 0) {
		for (int i = 0; i < n; i++)
			round_of((uint32_t)i, &wa, &wb, &wc);
		/* unregistered in the child only */
		if (unreg(data_fd, &enabled, 0) || (enabled & 1))
			_exit(2);
		printf("child written a=%ld\n", wa);
		_exit(0);
	}
	waitpid(c, &st, 0);
	for (int i = 0; i < n; i++)
		round_of((uint32_t)(1000 + i), &wa, &wb, &wc);
	printf("parent written a=%ld child %s\n", wa,
	       WIFEXITED(st) && !WEXITSTATUS(st) ? "ok" : "failed");
	return 0;
}

static void *thread_main(void *arg)
{
	long n = (long)arg, w = 0;

	for (uint32_t i = 0; i < (uint32_t)n; i++)
		w += write_count(i);
	return (void *)w;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "basic";

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "basic"))
		return basic(argc > 2 ? atoi(argv[2]) : 10);
	if (!strcmp(mode, "errors"))
		return errors();
	if (!strcmp(mode, "wait") && argc > 2)
		return wait_for(argv[2], argc > 3 ? atoi(argv[3]) : 20);
	if (!strcmp(mode, "waitthreads") && argc > 3)
		return wait_threads(argv[2], atoi(argv[3]));
	if (!strcmp(mode, "fork"))
		return forked(argc > 2 ? atoi(argv[2]) : 10);
	if (!strcmp(mode, "exec")) {
		char fdarg[16], ia[16];

		register_three();
		snprintf(fdarg, sizeof(fdarg), "%d", data_fd);
		snprintf(ia, sizeof(ia), "%u", idx_a);
		execl("/proc/self/exe", argv[0], "after", fdarg, ia, (char *)NULL);
		return 1;
	}
	if (!strcmp(mode, "after") && argc > 3) {
		/* the events were dropped at exec: the old index is not ours */
		uint32_t pay[3] = {(uint32_t)atoi(argv[3]), 1, 2};
		ssize_t k = write(atoi(argv[2]), pay, 12);

		printf("after_exec write %s\n", k < 0 ? strerrorname_np(errno) : "went nowhere");
		return 0;
	}
	if (!strcmp(mode, "multi")) {
		/* MULTI_FORMAT: the same name with other fields, beside it;
		 * user_events_status lists them */
		volatile uint32_t w = 0;
		uint32_t i1, i2, a = 5;
		uint64_t b = 6;
		int fd = open_data(), s, n = 0;
		char buf[1024];
		ssize_t k;

		must(reg(fd, "ue_multi u32 first", &w, 0, 4, USER_EVENT_REG_MULTI_FORMAT, &i1), "first");
		must(reg(fd, "ue_multi u64 second", &w, 1, 4, USER_EVENT_REG_MULTI_FORMAT, &i2), "second");
		{
			struct iovec v1[2] = {{&i1, 4}, {&a, 4}}, v2[2] = {{&i2, 4}, {&b, 8}};

			n += (w & 1) && writev(fd, v1, 2) == 8;
			n += (w & 2) && writev(fd, v2, 2) == 12;
		}
		printf("multi written %d\n", n);
		s = open("/sys/kernel/tracing/user_events_status", O_RDONLY);
		if (s < 0)
			s = open("/sys/kernel/debug/tracing/user_events_status", O_RDONLY);
		k = s >= 0 ? read(s, buf, sizeof(buf) - 1) : -1;
		buf[k > 0 ? k : 0] = '\0';
		fputs(buf, stdout);
		return 0;
	}
	if (!strcmp(mode, "churn")) {
		int n = argc > 2 ? atoi(argv[2]) : 1000, bad = 0;
		volatile uint32_t w = 0;
		char def[64];

		/* each deleted with its last reference: the fd's, at close */
		for (int i = 0; i < n; i++) {
			int fd = open_data();
			uint32_t idx, pay[2] = {0, (uint32_t)i};

			snprintf(def, sizeof(def), "ue_churn_%d u32 i", i);
			if (reg(fd, def, &w, 0, 4, 0, &idx))
				bad++;
			pay[0] = idx;
			if ((w & 1) && write(fd, pay, 8) != 8)
				bad++;
			if (unreg(fd, &w, 0))
				bad++;
			close(fd);
		}
		printf("churn %d bad %d\n", n, bad);
		return 0;
	}
	if (!strcmp(mode, "threads") && argc > 3) {
		int t = atoi(argv[2]);
		long n = atol(argv[3]), total = 0;
		pthread_t th[64];

		register_three();
		if (t > 64)
			t = 64;
		for (int i = 0; i < t; i++)
			pthread_create(&th[i], NULL, thread_main, (void *)n);
		for (int i = 0; i < t; i++) {
			void *w;

			pthread_join(th[i], &w);
			total += (long)w;
		}
		printf("threads written a=%ld\n", total);
		return 0;
	}
	fprintf(stderr, "usage: uevents basic|errors|wait|fork|exec|churn|threads ...\n");
	return 2;
}
