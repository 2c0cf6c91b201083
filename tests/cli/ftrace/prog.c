/* SPDX-License-Identifier: MIT */
/*
 * prog.c - a small call tree for the function tracers, built with
 * -fpatchable-function-entry=5 at -O0 and -O2 (tests/cli/meson.build).
 * Every function is noinline and works on volatile data, so each call in
 * the source is a call in the binary at any optimization level.
 *
 *   prog [ROUNDS]        the request loop (default 2 rounds)
 *   prog deep N          recursion N deep
 *   prog jump            longjmp out of 3 nested functions
 *   prog threads         4 threads x 3 requests
 *   prog signal          a signal handler calling hash() mid-call
 *   prog nested          a handler raising a second signal: hash() at
 *                        handler levels 1 and 2, then at level 0
 *   prog sigjump         a handler left by siglongjmp, then hash() at
 *                        level 0
 *   prog fork            a child process makes requests too
 *   prog forknest        fork inside three nested calls: the child
 *                        returns through them (and calls hash() first),
 *                        the parent waits for it, then returns too
 *   prog exit            exit(3) from inside nested calls
 *   prog nap             one request that sleeps 3 ms inside lookup
 *   prog short           40 calls of a function shorter than a jump from
 *                        a loop keeping values in scratch registers, 5
 *                        of one whose entry is a loop head (unmodified
 *                        builds: a jump over padding, a breakpoint)
 *   prog spin            3 threads making requests forever (attach tests)
 *   prog blocked         spin, with one of the threads blocking every signal
 *   prog blockrt         spin, with one of the threads blocking SIGRTMIN+7
 *                        (libtrail's control signal) only
 *   prog rawblocked      blocked, the mask set by a raw system call (which
 *   prog rawblockrt      libtrail's interposed pthread_sigmask cannot see);
 *                        blockrt, likewise
 */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define F __attribute__((noinline, noclone))

static volatile unsigned sink;
/* threads store to it too (spin): atomically, a race TSan would name */
#define SINK(v) __atomic_store_n(&sink, (unsigned)(v), __ATOMIC_RELAXED)

F unsigned hash(const char *s)
{
	unsigned h = 5381;

	while (*s)
		h = h * 33 + (unsigned char)*s++;
	SINK(h);
	return h;
}

F int lookup(const char *key)
{
	return (int)(hash(key) % 7);
}

F int parse_int(const char *s)
{
	int v = atoi(s);

	SINK(v);
	return v;
}

F int parse_header(const char *line)
{
	SINK(line[0]);
	return parse_int(line + 1);
}

F int handle_request(const char *line)
{
	int n = parse_header(line);

	return n + lookup(line);
}

F long deep(long n)
{
	long r = n ? deep(n - 1) : -1;

	SINK(n); /* after the call: no tail call, no loop */
	return r + 1;
}

static jmp_buf jb;

/* it ends by longjmp, which gcc's recursion check does not count */
#pragma GCC diagnostic ignored "-Winfinite-recursion"
F void jump_in(int n)
{
	if (!n)
		longjmp(jb, 1);
	jump_in(n - 1);
	SINK(n); /* not a tail call */
}

F void nap(void)
{
	struct timespec ts = {0, 3000000};

	nanosleep(&ts, NULL);
}

F int slow_request(void)
{
	nap();
	return lookup("slow");
}

/* For unmodified builds ("short" mode). word_before is shorter than a
 * jump (mov; ret), padding after it. sum_words calls it with values live
 * in scratch registers the callee leaves alone (gcc's -fipa-ra at -O2
 * without patchable entries): a hook that changed one would change the
 * sum. countdown's entry is its loop head (a branch to the entry: the leaf
 * runs whole from a copy); written in assembly so that every compiler
 * makes it so. */
F int word_before(const int *p)
{
	return p[-2];
}

F int sum_words(const int *p, int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += word_before(p + 2 + i);
	return s;
}

long countdown(long n);
__asm__(".text\n"
	".globl countdown\n"
	".type countdown, @function\n"
	"countdown:\n"
	"\tdec %rdi\n"
	"\tjnz countdown\n"
	"\tmov %rdi, %rax\n"
	"\tret\n"
	".size countdown, .-countdown\n");

static void *spin_main(void *arg)
{
	for (;;)
		handle_request(arg);
	return NULL;
}

static void *blocked_main(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, NULL);
	return spin_main(arg);
}

static void *blockrt_main(void *arg)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, SIGRTMIN + 7);
	pthread_sigmask(SIG_BLOCK, &one, NULL);
	return spin_main(arg);
}

/* the mask set behind libc's back */
static void *rawblocked_main(void *arg)
{
	sigset_t all;

	sigfillset(&all);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &all, NULL, 8);
	return spin_main(arg);
}

static void *rawblockrt_main(void *arg)
{
	sigset_t one;

	sigemptyset(&one);
	sigaddset(&one, SIGRTMIN + 7);
	syscall(SYS_rt_sigprocmask, SIG_BLOCK, &one, NULL, 8);
	return spin_main(arg);
}

static void *thread_main(void *arg)
{
	for (int i = 0; i < 3; i++)
		handle_request(arg);
	return NULL;
}

static void on_usr1(int sig)
{
	(void)sig;
	hash("from a signal handler");
}

F int raiser(void)
{
	raise(SIGUSR1);
	return (int)hash("after");
}

static void on_usr2(int sig)
{
	(void)sig;
	hash("second level");
}

static void on_usr1_nested(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	hash("first level");
	raise(SIGUSR2);
}

static sigjmp_buf sj;

static void on_usr1_jump(int sig)
{
	(void)sig;
	hash("left by siglongjmp");
	siglongjmp(sj, 1);
}

/* the child returns 0 through all three, the parent 1 */
F int fork_inner(void)
{
	pid_t p = fork();

	hash(p ? "parent" : "child");
	if (p > 0)
		waitpid(p, NULL, 0);
	return p > 0;
}

F int fork_middle(void)
{
	int r = fork_inner();

	SINK(r); /* after the call: no tail call */
	return r;
}

F int fork_outer(void)
{
	int r = fork_middle();

	SINK(r);
	return r;
}

F void leave(void)
{
	exit(3);
}

F void about_to_leave(void)
{
	leave();
	SINK(1);
}

static int modes(int argc, char **argv)
{
	const char *m = argv[1];

	if (!strcmp(m, "deep")) {
		long n = argc > 2 ? atol(argv[2]) : 10000;

		printf("%ld\n", deep(n));
	} else if (!strcmp(m, "jump")) {
		if (!setjmp(jb))
			jump_in(3);
		printf("%d\n", handle_request("y7"));
	} else if (!strcmp(m, "threads")) {
		pthread_t t[4];

		for (int i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, thread_main, (void *)"x1");
		for (int i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
	} else if (!strcmp(m, "signal")) {
		signal(SIGUSR1, on_usr1);
		printf("%d\n", raiser() != 0);
	} else if (!strcmp(m, "nested")) {
		struct sigaction sa, old;

		memset(&sa, 0, sizeof(sa));
		sa.sa_sigaction = on_usr1_nested;
		sa.sa_flags = SA_SIGINFO;
		sigemptyset(&sa.sa_mask);
		sigaction(SIGUSR1, &sa, NULL);
		signal(SIGUSR2, on_usr2);
		/* the program gets its own handler back, as it gave it */
		if (sigaction(SIGUSR1, NULL, &old) || old.sa_sigaction != on_usr1_nested ||
		    !(old.sa_flags & SA_SIGINFO) || signal(SIGUSR2, on_usr2) != on_usr2)
			return 9;
		printf("%d\n", raiser() != 0);
	} else if (!strcmp(m, "sigjump")) {
		signal(SIGUSR1, on_usr1_jump);
		if (!sigsetjmp(sj, 1))
			raise(SIGUSR1);
		printf("%u\n", hash("after the jump") != 0);
	} else if (!strcmp(m, "fork")) {
		pid_t p = fork();

		handle_request(p ? "y1" : "x2");
		if (!p)
			_exit(0);
		waitpid(p, NULL, 0);
	} else if (!strcmp(m, "forknest")) {
		if (!fork_outer())
			_exit(0);
	} else if (!strcmp(m, "exit")) {
		about_to_leave();
	} else if (!strcmp(m, "spin")) {
		pthread_t t[3];

		for (int i = 0; i < 3; i++)
			pthread_create(&t[i], NULL, spin_main, (void *)"x9");
		pthread_join(t[0], NULL);
	} else if (!strcmp(m, "blocked") || !strcmp(m, "blockrt") || !strcmp(m, "rawblocked") ||
		   !strcmp(m, "rawblockrt")) {
		void *(*fn)(void *) = !strcmp(m, "blocked")	 ? blocked_main
				      : !strcmp(m, "blockrt")	 ? blockrt_main
				      : !strcmp(m, "rawblocked") ? rawblocked_main
								 : rawblockrt_main;
		pthread_t t[2];

		pthread_create(&t[0], NULL, fn, (void *)"x9");
		pthread_create(&t[1], NULL, spin_main, (void *)"x9");
		pthread_join(t[0], NULL);
	} else if (!strcmp(m, "short")) {
		int w[64];
		long c = 0;

		for (int i = 0; i < 64; i++)
			w[i] = i * 3 + 1;
		for (int i = 0; i < 5; i++)
			c += countdown(i + 1);
		printf("%d %ld\n", sum_words(w, 40), c);
	} else if (!strcmp(m, "nap")) {
		printf("%d\n", slow_request() + handle_request("y7"));
	} else {
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 2;
	unsigned total = 0; /* wraps on long runs: defined for unsigned */

	if (argc > 1 && argv[1][0] > '9')
		return modes(argc, argv);

	for (int i = 0; i < rounds; i++)
		total += (unsigned)handle_request(i % 2 ? "x42" : "y7");
	printf("%u\n", total);
	return 0;
}
