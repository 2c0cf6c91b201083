/* SPDX-License-Identifier: MIT */
/*
 * safe.S - fault-safe reads of the traced program's memory (arch.h).
 * Every instruction that may fault lies between trail__arch_safe_begin
 * and trail__arch_safe_fault; trail_arch_fault_fixup() (safe.c) resumes a
 * fault there at trail__arch_safe_fault, which returns -EFAULT (-14) from
 * whichever of these functions faulted: none of them has a frame, so the
 * return address is at 0(%rsp) wherever they fault.
 */
	.text
	.p2align 4
	.globl trail__arch_safe_begin
	.hidden trail__arch_safe_begin
trail__arch_safe_begin:

/* int trail_arch_load_safe(uintptr_t addr %rdi, unsigned size %esi, uint64_t *out %rdx) */
	.globl trail_arch_load_safe
	.hidden trail_arch_load_safe
	.type trail_arch_load_safe, @function
trail_arch_load_safe:
	.cfi_startproc
	cmpl $8, %esi
	jne 1f
	movq (%rdi), %rax
	jmp 8f
1:	cmpl $4, %esi
	jne 2f
	movl (%rdi), %eax
	jmp 8f
2:	cmpl $2, %esi
	jne 3f
	movzwl (%rdi), %eax
	jmp 8f
3:	movzbl (%rdi), %eax
8:	movq %rax, (%rdx)
	xorl %eax, %eax
	ret
	.cfi_endproc
	.size trail_arch_load_safe, .-trail_arch_load_safe

/* long trail_arch_string_safe(char *dst %rdi, uintptr_t src %rsi, unsigned long max %rdx) */
	.globl trail_arch_string_safe
	.hidden trail_arch_string_safe
	.type trail_arch_string_safe, @function
trail_arch_string_safe:
	.cfi_startproc
	xorl %eax, %eax
1:	cmpq %rdx, %rax
	jae 2f
	movzbl (%rsi,%rax), %ecx
	testb %cl, %cl
	jz 2f
	movb %cl, (%rdi,%rax)
	incq %rax
	jmp 1b
2:	ret
	.cfi_endproc
	.size trail_arch_string_safe, .-trail_arch_string_safe

/* int trail_arch_copy_safe(void *dst %rdi, uintptr_t src %rsi, unsigned long n %rdx) */
	.globl trail_arch_copy_safe
	.hidden trail_arch_copy_safe
	.type trail_arch_copy_safe, @function
trail_arch_copy_safe:
	.cfi_startproc
	movq %rdx, %rcx
	rep movsb
	xorl %eax, %eax
	ret
	.cfi_endproc
	.size trail_arch_copy_safe, .-trail_arch_copy_safe

	.globl trail__arch_safe_fault
	.hidden trail__arch_safe_fault
trail__arch_safe_fault:
	movq $-14, %rax
	ret

	.section .note.GNU-stack,"",@progbits
