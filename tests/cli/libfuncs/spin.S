/* SPDX-License-Identifier: MIT */
/* spin.S - u_spin(n): a loop whose head is the function's entry (a branch
 * target at its first byte: a jump there would be met each turn); u_mid(n):
 * a loop whose head is 2 bytes in (nothing can be displaced over it). Both
 * leaves: they run whole from a copy. u_trap(n): u_mid's loop, then a call:
 * it cannot move (a breakpoint on its first instruction). u_body(n): a
 * loop whose head is 2 bytes in and whose body lies mostly past the first
 * 5 bytes, where a thread found there by an attach must be moved to the
 * copy. */
	.text
	.globl u_spin
	.type u_spin, @function
u_spin:
	.cfi_startproc
1:	subq $1, %rdi
	jg 1b
	ret
	.cfi_endproc
	.size u_spin, .-u_spin

	.globl u_mid
	.type u_mid, @function
u_mid:
	.cfi_startproc
	xorl %eax, %eax
2:	addl %edi, %eax
	subl $1, %edi
	jg 2b
	ret
	.cfi_endproc
	.size u_mid, .-u_mid
	.globl u_body
	.type u_body, @function
u_body:
	.cfi_startproc
	xorl %eax, %eax
4:	addl %edi, %eax
	addl $1, %eax
	addl $2, %eax
	addl $3, %eax
	addl $4, %eax
	addl $5, %eax
	addl $6, %eax
	addl $7, %eax
	subl $1, %edi
	jg 4b
	ret
	.cfi_endproc
	.size u_body, .-u_body

	.globl u_trap
	.type u_trap, @function
u_trap:
	.cfi_startproc
	xorl %eax, %eax
3:	addl %edi, %eax
	subl $1, %edi
	jg 3b
	pushq %rax
	.cfi_adjust_cfa_offset 8
	call u_nothing
	popq %rax
	.cfi_adjust_cfa_offset -8
	ret
	.cfi_endproc
	.size u_trap, .-u_trap

	.type u_nothing, @function
u_nothing:
	.cfi_startproc
	ret
	.cfi_endproc
	.size u_nothing, .-u_nothing
	.section .note.GNU-stack,"",@progbits
