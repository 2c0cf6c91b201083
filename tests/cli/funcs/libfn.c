/* trail list -f fixture: a shared library, exported and static functions. */
#ifdef __clang__
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

KEEP static int fn_mix(int x) { return x ^ 0x5a; }
KEEP int fn_add(int a, int b) { return a + fn_mix(b); }
KEEP int fn_twice(int a) { return fn_add(a, a); }
