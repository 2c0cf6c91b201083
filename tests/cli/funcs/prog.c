/* trail list -f fixture: a program needing libfn.so.1. "sleep" prints
 * "ready" and waits to be killed (for -P). */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#ifdef __clang__
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

int fn_add(int a, int b);
int fn_twice(int a);

KEEP static int prog_local(int x) { return x * 7; }
KEEP int prog_work(int x) { return fn_twice(prog_local(x)) + fn_add(x, 1); }

int main(int argc, char **argv)
{
	printf("%d\n", prog_work(argc));
	if (argc > 1 && !strcmp(argv[1], "sleep")) {
		puts("ready");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
