/* SPDX-License-Identifier: MIT */
/*
 * check.h - the in-tree unit test harness. Each test runs in its own
 * forked process with a timeout; output is TAP-like, one line per test:
 *
 *   ok - name
 *   not ok - name (why)
 *   ok - name # SKIP reason
 *
 * tests/run.sh counts these lines across every test program and script.
 *
 *   TEST(arena_geometry) { CHECK(x == 1); CHECK_EQ(a, b); }
 *   TEST_MAIN(arena_geometry, other_test)
 */
#ifndef TRAIL_TESTS_CHECK_H
#define TRAIL_TESTS_CHECK_H

#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static int check_failures;

#define CHECK(c)                                                              \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "  %s:%d: CHECK(%s) failed\n",        \
				__FILE__, __LINE__, #c);                      \
			check_failures++;                                     \
		}                                                             \
	} while (0)

#define CHECK_EQ(a, b)                                                        \
	do {                                                                  \
		long long check_a_ = (long long)(a), check_b_ = (long long)(b); \
		if (check_a_ != check_b_) {                                   \
			fprintf(stderr, "  %s:%d: %s == %s failed: %lld != %lld\n", \
				__FILE__, __LINE__, #a, #b, check_a_, check_b_); \
			check_failures++;                                     \
		}                                                             \
	} while (0)

#define CHECK_STR(a, b)                                                       \
	do {                                                                  \
		const char *check_a_ = (a), *check_b_ = (b);                  \
		if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_)) {   \
			fprintf(stderr, "  %s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
				__FILE__, __LINE__, #a, #b,                   \
				check_a_ ? check_a_ : "(null)",               \
				check_b_ ? check_b_ : "(null)");              \
			check_failures++;                                     \
		}                                                             \
	} while (0)

/* Leave the test now, counted as skipped, saying why. */
#define SKIP(why)                                                             \
	do {                                                                  \
		fprintf(stdout, "SKIP %s\n", why);                            \
		fflush(stdout);                                               \
		_exit(77);                                                    \
	} while (0)

struct check_test {
	const char *name;
	void (*fn)(void);
};

#define TEST(name) static void name(void)

static inline int check_run(const struct check_test *t, size_t n, int argc,
			    char **argv)
{
	const char *to = getenv("CHECK_TIMEOUT");
	int timeout = to ? atoi(to) : 60, failed = 0;

	for (size_t i = 0; i < n; i++) {
		int pfd[2], status;
		char skipbuf[256] = "";
		pid_t pid;

		if (argc > 1 && strcmp(argv[1], t[i].name))
			continue;
		fflush(stdout);
		if (pipe(pfd))
			return 2;
		pid = fork();
		if (pid == 0) {
			close(pfd[0]);
			dup2(pfd[1], 1);
			alarm((unsigned)timeout);
			t[i].fn();
			fflush(stdout);
			_exit(check_failures ? 1 : 0);
		}
		close(pfd[1]);
		{
			ssize_t k, got = 0;
			char buf[4096];

			while ((k = read(pfd[0], buf, sizeof(buf))) > 0) {
				char *s;
				if (!got && (s = strstr(buf, "SKIP ")) &&
				    (size_t)(s - buf) < (size_t)k) {
					size_t len = (size_t)k - (size_t)(s - buf) - 5;
					if (len >= sizeof(skipbuf))
						len = sizeof(skipbuf) - 1;
					memcpy(skipbuf, s + 5, len);
					skipbuf[len] = 0;
					skipbuf[strcspn(skipbuf, "\n")] = 0;
				}
				fwrite(buf, 1, (size_t)k, stderr);
				got += k;
			}
		}
		close(pfd[0]);
		waitpid(pid, &status, 0);
		if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
			printf("ok - %s # SKIP %s\n", t[i].name, skipbuf);
		} else if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
			printf("ok - %s\n", t[i].name);
		} else {
			failed++;
			if (WIFSIGNALED(status))
				printf("not ok - %s (signal %d%s)\n", t[i].name,
				       WTERMSIG(status),
				       WTERMSIG(status) == SIGALRM ? ": timeout" : "");
			else
				printf("not ok - %s\n", t[i].name);
		}
	}
	fflush(stdout);
	return failed ? 1 : 0;
}

#define CHECK_T(name) {#name, name}
#define TEST_MAIN(...)                                                        \
	int main(int argc, char **argv)                                       \
	{                                                                     \
		static const struct check_test check_tests_[] = {__VA_ARGS__}; \
		return check_run(check_tests_,                                \
				 sizeof(check_tests_) / sizeof(check_tests_[0]), \
				 argc, argv);                                 \
	}

#endif /* TRAIL_TESTS_CHECK_H */
