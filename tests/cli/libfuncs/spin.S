/* SPDX-License-Identifier: MIT */
/* spin.S - u_spin(n): a loop whose head is the function's entry (a branch
 * target at its first byte: the jump there is met each turn); u_mid(n): a
 * loop whose head is 2 bytes in (nothing can be displaced over it: a
 * breakpoint on the first instruction) */
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
	.section .note.GNU-stack,"",@progbits
