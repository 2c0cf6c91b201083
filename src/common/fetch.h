/* SPDX-License-Identifier: MIT */
/*
 * fetch.h - compiled probe definitions: what `trail` (src/probe/) hands a
 * traced process, and what libtrail (src/lib/probe.c) runs at each hit.
 *
 * A probe is one blob, carried in the session spec as a line
 * "@probe HEX" (the blob in lower-case hex). The blob, packed,
 * little-endian:
 *
 *   struct trail_probe_hdr
 *   char     sym[]      NUL-terminated: the function (kind p, r), or the
 *                       source event "SYS:EVENT" (kind e)
 *   char     obj[]      NUL-terminated: the object it must be in (a path or
 *                       a basename, "" = any object that has sym)
 *   uint8_t  meta[]     the event's description (struct trail_meta_hdr
 *                       blob of abi.h), meta_size bytes
 *   struct trail_fetch_insn code[ninsns]
 *   char     strs[]     strings the code refers to (FOP_SYM objects),
 *                       each NUL-terminated; offsets are from strs; with
 *                       TRAIL_PROBE_F_FILTER, last, an eprobe's filter
 *                       text (filter.h's grammar, the source's fields)
 *
 * The event's payload is built in field order: first the probe's own
 * fields (kernel names), then one field per argument:
 *
 *   p:  u64 __probe_ip                    (the probed address)
 *   w:  u64 __probe_ip                    (the instruction after the
 *                                         access, where the trap is)
 *   r:  u64 __probe_func, u64 __probe_ret_ip
 *   e:  nothing
 *   then, if TRAIL_PROBE_F_FAULT: u64 __probe_fault (bit i: argument i
 *   could not be read; its field holds zeros / an empty string)
 *   then the arguments.
 *
 * code[] is the arguments' programs one after the other. Each argument is
 * zero or more value ops working on one u64 accumulator, ending with
 * exactly one store op that appends its field to the payload. A read that
 * faults abandons the rest of that argument: its store appends the
 * field's zero value and the argument's fault bit is set.
 *
 * Examples (kernel syntax -> code):
 *   $arg2:x32                 REG si; ST_INT 4          (meta: x32 = INT 4 HEX)
 *   +8($arg1):u32             REG di; DEREF 4 +8; ST_INT 4
 *   +0(+16(%di)):string       REG di; DEREF 8 +16; ST_STRING +0 max 4095
 *   +0($arg1):u8[4]           REG di; ST_ARRAY 1 x 4 +0
 *   +4($arg1):b3@2/32         REG di; DEREF 4 +4; BITFIELD 3@2; ST_INT 4
 *   $stack2                   STACK +16; ST_INT 8
 *   @counter+8:s32            SYM "" +(file address of counter + 8);
 *                             DEREF 4 +0; ST_INT 4 (as the kernel's
 *                             @SYM and @ADDR: the memory there)
 *   $comm                     ST_COMM
 *   $path:string (eprobe, path a STRING field)   FIELD k; ST_STRING
 * Types map to the meta field: uN/sN/xN: INT N/8 bytes (SIGNED, HEX);
 * char: INT 1 CHAR; symbol, symstr: INT 8 SYM; string, ustring: STRING;
 * TYPE[N]: ARRAY of TYPE; bitfields: INT of the container, unsigned.
 *
 * trail_probe_check() validates a blob completely (the CLI after
 * compiling, libtrail before using it); nothing else is trusted.
 */
#ifndef TRAIL_COMMON_FETCH_H
#define TRAIL_COMMON_FETCH_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_PROBE_MAGIC 0x31505254u /* "TRP1" */

/* the kernel's limits (kernel/trace/trace_probe.h) */
#define TRAIL_PROBE_MAX_ARGS 128u    /* MAX_TRACE_ARGS */
#define TRAIL_PROBE_MAX_ARGSTR 63u   /* MAX_ARGSTR_LEN: one fetch-arg's text */
#define TRAIL_PROBE_MAX_ARRAY 64u    /* MAX_ARRAY_LEN */
#define TRAIL_PROBE_MAX_NAME 32u     /* MAX_ARG_NAME_LEN, with its NUL */
#define TRAIL_PROBE_MAX_EVNAME 64u   /* MAX_EVENT_NAME_LEN, with its NUL */
#define TRAIL_PROBE_MAX_INSNS 16u    /* FETCH_INSN_MAX: ops per argument */
/* trail's own */
#define TRAIL_PROBE_MAX_PAYLOAD 3072u /* bytes of one record's payload:
				       * strings are cut to fit */
#define TRAIL_PROBE_MAX_BLOB 16384u

enum trail_probe_kind {
	TRAIL_PROBE_ENTRY = 'p',
	TRAIL_PROBE_RETURN = 'r',
	TRAIL_PROBE_EVENT = 'e', /* eprobe */
	TRAIL_PROBE_WATCH = 'w', /* wprobe: a data watchpoint. offset: the
				  * watched variable's link-time address in
				  * obj ("" the program), or with F_ABS an
				  * address; jump: the access (bits 0-1: 1
				  * read, 2 write) and the length in bytes
				  * (bits 4-7: 1, 2, 4, 8); sym: the
				  * variable's name or the address's text */
};

#define TRAIL_PROBE_F_FAULT 0x1u  /* payload has __probe_fault */
#define TRAIL_PROBE_F_COMM 0x2u   /* some argument is $comm */
#define TRAIL_PROBE_F_FILTER 0x4u /* e: `if FILTER` on the source event's
				   * fields, the last string of strs */
#define TRAIL_PROBE_F_INSN 0x8u   /* p: at an instruction, not a function
				   * entry: offset is its link-time address
				   * in obj (not ""); sym names its function
				   * (or the PATH:OFFSET text) */
#define TRAIL_PROBE_F_VEC 0x20u   /* with INSN: its function uses the wide
				   * vector registers (ymm, zmm): a jump's
				   * stub saves them too */
#define TRAIL_PROBE_F_ADDR 0x40u  /* p, not INSN: at the entry of the
				   * function whose link-time address in
				   * obj (not "") is offset: an unnamed one
				   * (a stripped object's, probed as
				   * PATH:OFFSET); sym is the offset's text */
#define TRAIL_PROBE_F_ABS 0x80u   /* w: offset is an address, not in obj
				   * (~0: none yet, a set_wprobe trigger's
				   * to give) */
#define TRAIL_PROBE_F_SEMA 0x10u  /* with INSN (a USDT probe): the last
				   * string of strs is the link-time address
				   * of its semaphore, in hex, a u16 counted
				   * up while the probe is attached */

struct __attribute__((packed)) trail_probe_hdr {
	uint32_t magic;
	uint32_t size;      /* whole blob */
	uint8_t kind;       /* enum trail_probe_kind */
	uint8_t flags;      /* TRAIL_PROBE_F_* */
	uint8_t nargs;      /* arguments (fields after the probe's own) */
	uint8_t jump;       /* F_INSN: the bytes a jump at the instruction
			     * displaces, when one may replace the breakpoint
			     * (no branch of its function lands among them);
			     * 0: a breakpoint */
	uint64_t offset;    /* p: bytes past the function's entry (0 for r, e);
			     * with F_INSN, the instruction's address; with
			     * F_ADDR, the function's */
	uint16_t sym_len;   /* strlen(sym) + 1 */
	uint16_t obj_len;   /* strlen(obj) + 1 */
	uint16_t meta_size;
	uint16_t ninsns;
	uint16_t strs_size;
	uint16_t payload_max; /* bytes the payload can take: the sum of its
			       * fields' bounds, capped at MAX_PAYLOAD (then
			       * strings are cut so that the record fits) */
};

/* x86_64 registers, kernel names (%ax ... %ip) */
enum trail_preg {
	TRAIL_PREG_AX, TRAIL_PREG_BX, TRAIL_PREG_CX, TRAIL_PREG_DX,
	TRAIL_PREG_SI, TRAIL_PREG_DI, TRAIL_PREG_BP, TRAIL_PREG_SP,
	TRAIL_PREG_R8, TRAIL_PREG_R9, TRAIL_PREG_R10, TRAIL_PREG_R11,
	TRAIL_PREG_R12, TRAIL_PREG_R13, TRAIL_PREG_R14, TRAIL_PREG_R15,
	TRAIL_PREG_IP,
	TRAIL_PREG_COUNT
};
/* readable at a return probe: the rest are not saved there */
#define TRAIL_PREG_AT_RETURN                                                   \
	((1u << TRAIL_PREG_AX) | (1u << TRAIL_PREG_DX) | (1u << TRAIL_PREG_SP) |   \
	 (1u << TRAIL_PREG_IP))

enum trail_fetch_op {
	/* value ops: set or transform the accumulator a */
	TRAIL_FOP_REG = 1,   /* a = register arg (enum trail_preg) */
	TRAIL_FOP_STACK,     /* a = *(u64 *)(sp + imm): $stackN, $argN > 6 */
	TRAIL_FOP_RETVAL,    /* a = return value (kind r only) */
	TRAIL_FOP_IMM,       /* a = imm: @ADDR */
	TRAIL_FOP_SYM,       /* a = load bias of object strs + u32 (the probed
			      * function's object when u32 is 0xffffffff) + imm:
			      * @SYM[+-OFFS], imm a file address */
	TRAIL_FOP_FIELD,     /* eprobe: a = source field number u32 (INT
			      * fields: its value; STRING fields: only for
			      * STORE_STRING, which copies it) */
	TRAIL_FOP_DEREF,     /* a = the size bytes (1, 2, 4, 8) at a + imm,
			      * zero-extended: +OFFS(...) */
	TRAIL_FOP_BITFIELD,  /* a = bits [arg, arg + size) of a (size: width),
			      * b<size>@<arg>/<container> */
	TRAIL_FOP_WADDR,     /* a = the watched address (kind w only): $addr */
	TRAIL_FOP_WOLD,      /* a = the watched value before the access, as
			      * the last trap (or the arming) left it (kind
			      * w only): $old */
	/* store ops: append the argument's field, end the argument */
	TRAIL_FOP_ST_INT = 32, /* size bytes of a (1, 2, 4, 8) */
	TRAIL_FOP_ST_STRING, /* the NUL-terminated string at a + imm (at most
			      * u32 bytes): u16 len + bytes */
	TRAIL_FOP_ST_ARRAY,  /* u32 elements of size bytes at a + imm */
	TRAIL_FOP_ST_COMM,   /* the thread's name, as a string */
};

struct __attribute__((packed)) trail_fetch_insn {
	uint8_t op;
	uint8_t size; /* DEREF, ST_INT, ST_ARRAY: bytes (of an element);
		       * BITFIELD: width in bits */
	uint8_t arg;  /* REG: enum trail_preg; BITFIELD: bit offset */
	uint8_t pad;
	uint32_t u32; /* SYM: object string offset; FIELD: field number;
		       * ST_STRING: max bytes; ST_ARRAY: elements */
	int64_t imm;
};

/* A blob's parts, pointing into it. */
struct trail_probe {
	const struct trail_probe_hdr *hdr;
	const char *sym;
	const char *obj;
	const uint8_t *meta;
	const struct trail_fetch_insn *code;
	const char *strs;
	const char *filter; /* TRAIL_PROBE_F_FILTER's text, else NULL */
	uint64_t sema;      /* TRAIL_PROBE_F_SEMA's address, else 0 */
};

/*
 * Check a blob of len bytes: sizes, strings, every op and operand, the
 * meta blob and that its fields match the store ops one by one, the
 * payload bound. Returns 0 with *p filled in, or -EPROTO with *why a
 * static message. Allocates nothing (libtrail runs it under its control
 * lock).
 */
int trail_probe_check(const void *blob, size_t len, struct trail_probe *p,
		      const char **why);

/* Hex codec for the spec line: out gets 2 * len chars and a NUL. */
void trail_probe_hex(const void *blob, size_t len, char *out);
/* Decode n hex chars into out (n / 2 bytes at most outsz). Returns the
 * bytes decoded or -1. */
long trail_probe_unhex(const char *hex, size_t n, void *out, size_t outsz);

#endif /* TRAIL_COMMON_FETCH_H */
