/* trail list -f / record -p function fixture: functions with several names
 * at one address, which libtrail, list -f and report must name alike
 * (src/common/symrule.h):
 *   impl_local (static) + pub_alias (global alias)     -> pub_alias
 *   strong_fn (global) + weak_alias (weak alias)       -> strong_fn
 *   asm_impl (local, sized) + asm_entry (global, no
 *     size), written in assembly with its own site    -> asm_entry
 *   pre_label (an unsized label) just before the sized
 *     function after_label                            -> after_label
 * Built with -fpatchable-function-entry=5 (and -DCET with
 * -fcf-protection=full: the assembly site then follows an endbr64, as
 * the compiler's do). Each function is called once. */
#include <stdio.h>

#ifdef __clang__
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

#ifdef CET
#define ENDBR "endbr64\n"
#else
#define ENDBR ""
#endif

KEEP static int impl_local(int x) { return x * 3; }
int pub_alias(int x) __attribute__((alias("impl_local")));

KEEP int strong_fn(int x) { return x + 11; }
int weak_alias(int x) __attribute__((weak, alias("strong_fn")));

/* asm_entry has no .size; the site area is 5 one-byte nops */
int asm_entry(int x);
__asm__(".text\n"
	".globl asm_entry\n"
	".type asm_entry, @function\n"
	".type asm_impl, @function\n"
	".p2align 4\n"
	"asm_entry:\n"
	"asm_impl:\n" ENDBR
	"1:\tnop; nop; nop; nop; nop\n"
	"\tleal 5(%rdi), %eax\n"
	"\tret\n"
	".size asm_impl, .-asm_impl\n"
	/* a label, then a sized function 3 bytes further */
	".p2align 4\n"
	".globl pre_label\n"
	"pre_label:\n"
	"\tnop; nop; nop\n"
	".globl after_label\n"
	".type after_label, @function\n"
	"after_label:\n" ENDBR
	"2:\tnop; nop; nop; nop; nop\n"
	"\tleal 7(%rdi), %eax\n"
	"\tret\n"
	".size after_label, .-after_label\n"
	".section __patchable_function_entries,\"aw\",@progbits\n"
	".p2align 3\n"
	"\t.quad 1b\n"
	"\t.quad 2b\n"
	".text\n");
int after_label(int x);

int main(int argc, char **argv)
{
	int (*volatile call)(int) = weak_alias; /* through the weak name */

	(void)argv;
	printf("%d\n", pub_alias(argc) + call(argc) + asm_entry(argc) + after_label(argc));
	return 0;
}
