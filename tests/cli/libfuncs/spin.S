/* SPDX-License-Identifier: MIT */
/* spin.S - u_spin(n): a loop whose head is the function's entry (a branch
 * target at its first byte: nothing can be displaced there) */
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
	.section .note.GNU-stack,"",@progbits
