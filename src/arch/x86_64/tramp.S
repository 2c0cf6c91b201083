/* SPDX-License-Identifier: MIT */
/*
 * tramp.S - x86_64 function hook trampolines (see src/arch/arch.h).
 *
 * Entry: reached by `call` from a patched site at the function's first
 * instruction (or after its endbr64), so on arrival
 *     0(%rsp) = site + 5          (our return: the function body)
 *     8(%rsp) = the caller's return address
 * and %rsp is 16-byte aligned. The integer and vector argument registers
 * (plus %rax: vector count of a variadic call, %r10: static chain, %r11)
 * are saved as struct trail_arch_regs, the C handler is called with
 * (site, &caller's return address, regs), and everything is restored.
 *
 * Exit: the C side may have replaced the caller's return address by
 * trail__arch_tramp_exit; the function's `ret` lands here with %rsp where
 * the return address was popped from. The return registers are saved as
 * struct trail_arch_ret_regs, the C handler returns the real return
 * address, and we jump there with the registers restored.
 */
	.text

	.globl trail__arch_tramp_entry
	.hidden trail__arch_tramp_entry
	.type trail__arch_tramp_entry, @function
	.p2align 4
trail__arch_tramp_entry:
	.cfi_startproc
	/* 8 pad + 9 x 8 gp + 128 xmm = 208: %rsp 16-byte aligned again */
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	pushq %rax
	.cfi_adjust_cfa_offset 8
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	pushq %rdx
	.cfi_adjust_cfa_offset 8
	pushq %rcx
	.cfi_adjust_cfa_offset 8
	pushq %r8
	.cfi_adjust_cfa_offset 8
	pushq %r9
	.cfi_adjust_cfa_offset 8
	pushq %r10
	.cfi_adjust_cfa_offset 8
	pushq %r11
	.cfi_adjust_cfa_offset 8
	subq $128, %rsp
	.cfi_adjust_cfa_offset 128
	movdqu %xmm0, 0(%rsp)
	movdqu %xmm1, 16(%rsp)
	movdqu %xmm2, 32(%rsp)
	movdqu %xmm3, 48(%rsp)
	movdqu %xmm4, 64(%rsp)
	movdqu %xmm5, 80(%rsp)
	movdqu %xmm6, 96(%rsp)
	movdqu %xmm7, 112(%rsp)
	movq 208(%rsp), %rdi         /* site + 5 */
	subq $5, %rdi
	leaq 216(%rsp), %rsi         /* &caller's return address */
	movq %rsp, %rdx              /* struct trail_arch_regs */
	call trail__arch_on_entry
	movdqu 0(%rsp), %xmm0
	movdqu 16(%rsp), %xmm1
	movdqu 32(%rsp), %xmm2
	movdqu 48(%rsp), %xmm3
	movdqu 64(%rsp), %xmm4
	movdqu 80(%rsp), %xmm5
	movdqu 96(%rsp), %xmm6
	movdqu 112(%rsp), %xmm7
	addq $128, %rsp
	.cfi_adjust_cfa_offset -128
	popq %r11
	.cfi_adjust_cfa_offset -8
	popq %r10
	.cfi_adjust_cfa_offset -8
	popq %r9
	.cfi_adjust_cfa_offset -8
	popq %r8
	.cfi_adjust_cfa_offset -8
	popq %rcx
	.cfi_adjust_cfa_offset -8
	popq %rdx
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	popq %rax
	.cfi_adjust_cfa_offset -8
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size trail__arch_tramp_entry, .-trail__arch_tramp_entry

	.globl trail__arch_tramp_exit
	.hidden trail__arch_tramp_exit
	.type trail__arch_tramp_exit, @function
	.p2align 4
trail__arch_tramp_exit:
	/* the hooked function's `ret` popped our address: %rsp is 16-byte
	 * aligned; 2 x 8 gp + 32 xmm keeps it so */
	pushq %rax
	pushq %rdx
	subq $32, %rsp
	movdqu %xmm0, 0(%rsp)
	movdqu %xmm1, 16(%rsp)
	movq %rsp, %rdi              /* struct trail_arch_ret_regs */
	call trail__arch_on_exit     /* -> where to return */
	movq %rax, %r11              /* scratch in the SysV ABI */
	movdqu 0(%rsp), %xmm0
	movdqu 16(%rsp), %xmm1
	addq $32, %rsp
	popq %rdx
	popq %rax
	jmp *%r11
	.size trail__arch_tramp_exit, .-trail__arch_tramp_exit

	.section .note.GNU-stack,"",@progbits
