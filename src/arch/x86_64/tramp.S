/* SPDX-License-Identifier: MIT */
/*
 * tramp.S - x86_64 function hook trampolines (see src/arch/arch.h).
 *
 * A patched site is `jmp` to its own stub (patch.c, trail_arch_site_stub),
 * 40 bytes next to the code:
 *
 *    0: call *entry(%rip)     -> trail__arch_tramp_entry, pushes stub+6
 *    6: test %r11, %r11       its answer: hook the return or not
 *    9: jz   26
 *   11: add  $8, %rsp         drop the caller's return address (the C
 *                             side keeps it on its shadow stack) ...
 *   15: call body             ... and run the body (site+5, or the copy
 *                             of the instructions a jump displaced from
 *                             unmodified code: reloc.c) with stub+20 as its
 *                             return address: the return stack buffer
 *                             predicts that return, and the one to the
 *                             real caller from the exit trampoline
 *   20: jmp  *exit(%rip)      -> trail__arch_tramp_exit
 *   26: jmp  body             not hooked: straight into the body
 *   32: .quad site            the function's entry, for the handler
 *
 * Entry: on arrival 0(%rsp) = stub+6, 8(%rsp) = the caller's return
 * address, and nothing is known of %rsp's alignment (gcc calls functions
 * of the same unit, which it knows need no alignment, with a stack 8
 * bytes off), so both trampolines realign through %rbp. The integer and
 * vector argument registers (plus %rax: vector count of a variadic call,
 * %r10: static chain) are saved as struct trail_arch_regs, the C handler
 * is called with (site, &caller's return address, regs, stub+20), and
 * everything is restored but %r11 (scratch at a function's entry), which
 * carries the handler's answer back to the stub.
 *
 * Exit: the body returned to stub+20, which jumped here with %rsp just
 * above the slot that held the return address. The return registers are
 * saved as struct trail_arch_ret_regs, the C handler returns the real
 * return address, which goes back into that slot, and we `ret` to it.
 */
	.text

/* movdqu of the xmm registers listed to (or from) consecutive 16-byte
 * slots from OFF(%rsp) */
.macro XMM_SAVE off, regs:vararg
	.set .Lxo, \off
	.irp r, \regs
	movdqu %xmm\r, .Lxo(%rsp)
	.set .Lxo, .Lxo + 16
	.endr
.endm

.macro XMM_LOAD off, regs:vararg
	.set .Lxo, \off
	.irp r, \regs
	movdqu .Lxo(%rsp), %xmm\r
	.set .Lxo, .Lxo + 16
	.endr
.endm

/* struct trail_arch_ret_regs at 0(%rsp): xmm0, xmm1, rdx, rax, and the
 * %rsp on arrival (%rbp + 8) */
.macro SAVE_RET_REGS
	movdqu %xmm0, 0(%rsp)
	movdqu %xmm1, 16(%rsp)
	movq %rdx, 32(%rsp)
	movq %rax, 40(%rsp)
	leaq 8(%rbp), %rdx           /* %rsp on arrival */
	movq %rdx, 48(%rsp)
.endm

/* struct trail_arch_regs at 0(%rsp) (the frame pointer %rbp above it):
 * xmm0-7, r11 r10 r9 r8 rcx rdx rsi rdi rax, then rbx rbp r12-r15 for
 * probes' %REG (stored, never restored: the C side preserves them) */
.macro SAVE_REGS
	XMM_SAVE 0, 0,1,2,3,4,5,6,7
	movq %r11, 128(%rsp)
	movq %r10, 136(%rsp)
	movq %r9, 144(%rsp)
	movq %r8, 152(%rsp)
	movq %rcx, 160(%rsp)
	movq %rdx, 168(%rsp)
	movq %rsi, 176(%rsp)
	movq %rdi, 184(%rsp)
	movq %rax, 192(%rsp)
	movq %rbx, 200(%rsp)
	movq (%rbp), %r11            /* the caller's %rbp, pushed above */
	movq %r11, 208(%rsp)
	movq %r12, 216(%rsp)
	movq %r13, 224(%rsp)
	movq %r14, 232(%rsp)
	movq %r15, 240(%rsp)
.endm

.macro RESTORE_XMM0_7
	XMM_LOAD 0, 0,1,2,3,4,5,6,7
.endm

/* the argument registers and rax (r11 is the caller's business) */
.macro RESTORE_ARGS
	movq 136(%rsp), %r10
	movq 144(%rsp), %r9
	movq 152(%rsp), %r8
	movq 160(%rsp), %rcx
	movq 168(%rsp), %rdx
	movq 176(%rsp), %rsi
	movq 184(%rsp), %rdi
	movq 192(%rsp), %rax
.endm

	.globl trail__arch_tramp_entry
	.hidden trail__arch_tramp_entry
	.type trail__arch_tramp_entry, @function
	.p2align 4
trail__arch_tramp_entry:
	.cfi_startproc
	pushq %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq $-16, %rsp
	subq $256, %rsp              /* struct trail_arch_regs, aligned */
	SAVE_REGS
	movq 8(%rbp), %rcx           /* stub+6 */
	movq 26(%rcx), %rdi          /* site: the address at stub+32 */
	leaq 16(%rbp), %rsi          /* &caller's return address */
	movq %rsp, %rdx              /* struct trail_arch_regs */
	addq $14, %rcx               /* stub+20: the hooked return address */
	call *trail__arch_on_entry(%rip)
	movl %eax, %r11d             /* the answer (an int), for the stub */
	RESTORE_XMM0_7
	RESTORE_ARGS
	movq %rbp, %rsp
	.cfi_def_cfa_register %rsp
	popq %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size trail__arch_tramp_entry, .-trail__arch_tramp_entry

	.globl trail__arch_tramp_exit
	.hidden trail__arch_tramp_exit
	.type trail__arch_tramp_exit, @function
	.p2align 4
trail__arch_tramp_exit:
	pushq %rbp
	movq %rsp, %rbp
	andq $-16, %rsp
	/* struct trail_arch_ret_regs: xmm0, xmm1, rdx, rax, sp, pad */
	subq $64, %rsp
	SAVE_RET_REGS
	movq %rsp, %rdi
	call *trail__arch_on_exit(%rip)     /* -> where to return */
	movq %rax, %r11              /* scratch in the SysV ABI */
	movdqu 0(%rsp), %xmm0
	movdqu 16(%rsp), %xmm1
	movq 32(%rsp), %rdx
	movq 40(%rsp), %rax
	movq %rbp, %rsp              /* the slot, where %rbp was pushed */
	movq (%rsp), %rbp
	movq %r11, (%rsp)            /* the real return address in it */
	ret                          /* the return the caller's call predicted */
	.size trail__arch_tramp_exit, .-trail__arch_tramp_exit

/*
 * The same pair for unmodified code (reloc.c's sites), which preserves
 * every register. A compiler that sees a function's body (gcc's -fipa-ra,
 * on at -O2, off with -fpatchable-function-entry) lets its callers keep
 * values across the call in the scratch registers it does not touch, so
 * neither the handlers nor libc under them may change any: the entry
 * saves xmm8-15 too and gives %r11 back, answering in ZF (the stub's jz:
 * flags are dead at a function's entry and every instruction after the
 * test leaves them); the exit saves the argument registers and xmm2-15
 * too, and puts the return address in the slot itself. Their stub:
 *
 *    0: call *entry_all(%rip)  6: jz 23   8: add $8,%rsp   12: call body
 *   17: jmp *exit_all(%rip)   23: jmp body                  32: .quad site
 *
 * (Wider vector state, the upper halves of ymm/zmm, is not saved: libc's
 * AVX string functions under the handlers may clear it.)
 */
	.globl trail__arch_tramp_entry_all
	.hidden trail__arch_tramp_entry_all
	.type trail__arch_tramp_entry_all, @function
	.p2align 4
trail__arch_tramp_entry_all:
	.cfi_startproc
	pushq %rbp
	.cfi_adjust_cfa_offset 8
	.cfi_rel_offset %rbp, 0
	movq %rsp, %rbp
	.cfi_def_cfa_register %rbp
	andq $-16, %rsp
	/* struct trail_arch_regs, then xmm8-15 at 256 */
	subq $384, %rsp
	SAVE_REGS
	XMM_SAVE 256, 8,9,10,11,12,13,14,15
	movq 8(%rbp), %rcx           /* stub+6 */
	movq 26(%rcx), %rdi          /* site: the address at stub+32 */
	leaq 16(%rbp), %rsi          /* &caller's return address */
	movq %rsp, %rdx              /* struct trail_arch_regs */
	addq $11, %rcx               /* stub+17: the hooked return address */
	call *trail__arch_on_entry(%rip)
	testl %eax, %eax             /* the answer, in ZF for the stub */
	RESTORE_XMM0_7
	XMM_LOAD 256, 8,9,10,11,12,13,14,15
	movq 128(%rsp), %r11
	RESTORE_ARGS
	movq %rbp, %rsp
	.cfi_def_cfa_register %rsp
	popq %rbp
	.cfi_adjust_cfa_offset -8
	.cfi_restore %rbp
	ret
	.cfi_endproc
	.size trail__arch_tramp_entry_all, .-trail__arch_tramp_entry_all

	.globl trail__arch_tramp_exit_all
	.hidden trail__arch_tramp_exit_all
	.type trail__arch_tramp_exit_all, @function
	.p2align 4
trail__arch_tramp_exit_all:
	pushq %rbp
	movq %rsp, %rbp
	andq $-16, %rsp
	/* struct trail_arch_ret_regs (64 bytes), then rcx rsi rdi r8-r11 at
	 * 64..112, xmm2-15 at 128..351, 16 bytes free below the slot */
	subq $368, %rsp
	SAVE_RET_REGS
	movq %rcx, 64(%rsp)
	movq %rsi, 72(%rsp)
	movq %rdi, 80(%rsp)
	movq %r8, 88(%rsp)
	movq %r9, 96(%rsp)
	movq %r10, 104(%rsp)
	movq %r11, 112(%rsp)
	XMM_SAVE 128, 2,3,4,5,6,7,8,9,10,11,12,13,14,15
	movq %rsp, %rdi
	call *trail__arch_on_exit(%rip)     /* -> where to return */
	movq (%rbp), %r11            /* the caller's %rbp, pushed on arrival */
	movq %rax, (%rbp)            /* the slot: the real return address */
	movdqu 0(%rsp), %xmm0
	movdqu 16(%rsp), %xmm1
	XMM_LOAD 128, 2,3,4,5,6,7,8,9,10,11,12,13,14,15
	movq 32(%rsp), %rdx
	movq 40(%rsp), %rax
	movq 72(%rsp), %rsi
	movq 80(%rsp), %rdi
	movq 88(%rsp), %r8
	movq 96(%rsp), %r9
	movq 104(%rsp), %r10
	movq %r11, -8(%rbp)          /* above everything read: the frame is
				      * 368 bytes, %rbp - 8 is past 351 */
	movq 64(%rsp), %rcx
	movq 112(%rsp), %r11
	movq %rbp, %rsp              /* the slot */
	movq -8(%rsp), %rbp          /* in the red zone: no signal frame
				      * lands there */
	ret
	.size trail__arch_tramp_exit_all, .-trail__arch_tramp_exit_all

/*
 * A probe at an instruction entered through a jump (fprobe.c): the jump
 * at the instruction goes to its stub (stubs.c, trail_arch_insn_stub):
 *
 *    0: lea -128(%rsp), %rsp   over the red zone (the code there may keep
 *                              data below %rsp), flags untouched
 *    5: push $idx              the site's index
 *   10: call *insn(%rip)       -> here
 *   16: lea 136(%rsp), %rsp    the index and the red zone
 *   24: jmp copy               the displaced instructions (reloc.c), then
 *                              back after them
 *   32: .quad trail__arch_tramp_insn
 *
 * The code is interrupted anywhere, so everything is saved and restored:
 * the flags, every general register, xmm0-15, and, where the probed code
 * uses them (TRAIL_ARCH_INSN_VEC in idx), through XSAVE the upper halves
 * of the ymm registers and AVX-512's state the CPU has (trail__arch_xsave_
 * mask, insnstub.c). The pushed index's high half (its sign extension)
 * keeps what was saved, for the restore. They are laid out as
 * struct trail_arch_regs (xmm0-7, r11 r10 r9 r8 rcx rdx rsi rdi rax rbx
 * rbp r12-r15, the flags in its pad) with xmm8-15 below it, and the C
 * handler registered in trail__arch_insn_handler gets (idx, regs, the
 * interrupted %rsp).
 */
/* XSAVE's standard form up to AVX-512's last component (Hi16_ZMM at
 * 1664, 1024 bytes), and room to align it to 64 */
#define XSAVE_AREA (2688 + 64)

	.globl trail__arch_tramp_insn
	.hidden trail__arch_tramp_insn
	.type trail__arch_tramp_insn, @function
	.p2align 4
trail__arch_tramp_insn:
	.cfi_startproc
	pushfq
	pushq %r15
	pushq %r14
	pushq %r13
	pushq %r12
	pushq %rbp
	pushq %rbx
	pushq %rax
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %rcx
	pushq %r8
	pushq %r9
	pushq %r10
	pushq %r11
	subq $256, %rsp
	XMM_SAVE 0, 8,9,10,11,12,13,14,15
	XMM_SAVE 128, 0,1,2,3,4,5,6,7
	movq %rsp, %rbp
	/* the wider vector state (ymm upper halves, AVX-512's zmm, k): the
	 * handler's libc calls may use it (vzeroupper, ymm16-31) */
	movl trail__arch_xsave_mask(%rip), %eax
	testl $0x40000000, 392(%rbp) /* TRAIL_ARCH_INSN_VEC: code that uses them */
	jnz 3f
	xorl %eax, %eax
3:	movl %eax, 396(%rbp)         /* (the index's high half: what to restore) */
	testl %eax, %eax
	jz 1f
	subq $XSAVE_AREA, %rsp
	andq $-64, %rsp
	xorl %edx, %edx
	movq %rdx, 512(%rsp)         /* the XSAVE header: zero */
	movq %rdx, 520(%rsp)
	movq %rdx, 528(%rsp)
	movq %rdx, 536(%rsp)
	movq %rdx, 544(%rsp)
	movq %rdx, 552(%rsp)
	movq %rdx, 560(%rsp)
	movq %rdx, 568(%rsp)
	xsave (%rsp)
1:	andq $-16, %rsp
	movl 392(%rbp), %edi         /* idx: above the return address */
	andl $0x3fffffff, %edi
	leaq 128(%rbp), %rsi         /* struct trail_arch_regs */
	leaq 528(%rbp), %rdx         /* %rsp at the instruction: past the
				      * return address, idx, the red zone */
	call *trail__arch_insn_handler(%rip) /* registered: the C side is above */
	movl 396(%rbp), %eax
	testl %eax, %eax
	jz 2f
	xorl %edx, %edx
	xrstor (%rsp)                /* (64-aligned: the call kept %rsp) */
2:	movq %rbp, %rsp
	XMM_LOAD 0, 8,9,10,11,12,13,14,15
	XMM_LOAD 128, 0,1,2,3,4,5,6,7
	addq $256, %rsp
	popq %r11
	popq %r10
	popq %r9
	popq %r8
	popq %rcx
	popq %rdx
	popq %rsi
	popq %rdi
	popq %rax
	popq %rbx
	popq %rbp
	popq %r12
	popq %r13
	popq %r14
	popq %r15
	popfq
	ret
	.cfi_endproc
	.size trail__arch_tramp_insn, .-trail__arch_tramp_insn

/* its address, for the stubs' writer (patch.c) to read as data */
	.section .data.rel.ro,"aw"
	.p2align 3
	.globl trail__arch_tramp_insn_at
	.hidden trail__arch_tramp_insn_at
	.type trail__arch_tramp_insn_at, @object
	.size trail__arch_tramp_insn_at, 8
trail__arch_tramp_insn_at:
	.quad trail__arch_tramp_insn

/* what the insn trampoline reads, set by the C side (insnstub.c, and the
 * probes that register the handler): the handler it calls, and XSAVE's
 * components it saves (AVX's upper halves, bit 2, and AVX-512's opmask,
 * ZMM_Hi256 and Hi16_ZMM, 5-7, those the OS enabled; 0 without XSAVE) */
	.bss
	.p2align 3
	.globl trail__arch_insn_handler
	.hidden trail__arch_insn_handler
	.type trail__arch_insn_handler, @object
	.size trail__arch_insn_handler, 8
trail__arch_insn_handler:
	.zero 8
/* the C side's entry and exit, called by the trampolines above: set
 * before the first stub runs (libtrail's fhook.c, or a test) */
	.globl trail__arch_on_entry
	.hidden trail__arch_on_entry
	.type trail__arch_on_entry, @object
	.size trail__arch_on_entry, 8
trail__arch_on_entry:
	.zero 8
	.globl trail__arch_on_exit
	.hidden trail__arch_on_exit
	.type trail__arch_on_exit, @object
	.size trail__arch_on_exit, 8
trail__arch_on_exit:
	.zero 8
	.globl trail__arch_xsave_mask
	.hidden trail__arch_xsave_mask
	.type trail__arch_xsave_mask, @object
	.size trail__arch_xsave_mask, 4
trail__arch_xsave_mask:
	.zero 4
	.text

	.section .note.GNU-stack,"",@progbits
