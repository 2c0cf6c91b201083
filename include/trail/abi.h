/* SPDX-License-Identifier: MIT */
/*
 * trail/abi.h - the binary contract between instrumented code and libtrail.
 *
 * An instrumented object carries, per event and per translation unit:
 *
 *   - a status word (static, zero at load) that the call site tests with one
 *     load and a branch; libtrail sets bit N when recording session slot N
 *     wants the event;
 *   - a struct trail_event (runtime descriptor, in .data), listed by pointer in
 *     the section "trail_events" so libtrail finds every descriptor of a DSO
 *     between __start_trail_events and __stop_trail_events;
 *   - a pointer-free description blob in the section "trail_meta", so tools
 *     can list a binary's events from its ELF file without running it.
 *
 * Everything here only grows at the end: the blob and the descriptor carry
 * their own size and version.
 */
#ifndef TRAIL_ABI_H
#define TRAIL_ABI_H

#include <stdint.h>

#define TRAIL_EVENT_ABI 1u

/* Runtime descriptor of one event in one translation unit. */
struct trail_event {
	uint32_t abi;        /* TRAIL_EVENT_ABI */
	uint32_t size;       /* sizeof(struct trail_event) when compiled */
	uint32_t *state;     /* status word tested at the call site */
	const void *meta;    /* the struct trail_meta_hdr blob below */
	void *rt;            /* owned by libtrail; NULL until registered */
};

/*
 * Description blob, all packed, little-endian host order:
 *
 *   struct trail_meta_hdr
 *   char provider[]   NUL-terminated
 *   char name[]       NUL-terminated
 *   nfields x { struct trail_meta_field; char name[] NUL-terminated }
 *
 * The blob is self-delimiting (hdr.size) so a section holding many of them
 * can be walked; zero bytes between blobs are alignment padding.
 */
#define TRAIL_META_MAGIC 0x314d5254u /* "TRM1" */

struct __attribute__((packed)) trail_meta_hdr {
	uint32_t magic;
	uint16_t size;     /* whole blob, header included */
	uint8_t version;   /* 1 */
	uint8_t nfields;
};

struct __attribute__((packed)) trail_meta_field {
	uint8_t kind;      /* enum trail_field_kind */
	uint8_t size;      /* scalar or element size in bytes */
	uint8_t flags;     /* TRAIL_FF_* */
	uint8_t namelen;   /* strlen(name), the name follows with its NUL */
	uint16_t count;    /* element count of a fixed array, else 0 */
};

enum trail_field_kind {
	TRAIL_FK_INT = 1,    /* size bytes; TRAIL_FF_SIGNED/HEX/BOOL/PTR */
	TRAIL_FK_FLOAT = 2,  /* size 4 or 8 */
	TRAIL_FK_STRING = 3, /* u16 len (0xffff: NULL pointer), then len bytes */
	TRAIL_FK_ARRAY = 4,  /* count elements of size bytes */
	TRAIL_FK_SEQ = 5,    /* u16 count, then count elements of size bytes */
};

#define TRAIL_FF_SIGNED 0x01u
#define TRAIL_FF_HEX 0x02u
#define TRAIL_FF_BOOL 0x04u
#define TRAIL_FF_PTR 0x08u
#define TRAIL_FF_SYM 0x10u  /* an address shown as symbol+off/size (probes) */
#define TRAIL_FF_CHAR 0x20u /* a character, shown as one (probes' char) */

/* Bounded copies made by the call site. */
#define TRAIL_STRING_MAX 4095u  /* bytes kept of a string field */
#define TRAIL_STRING_NULL 0xffffu
#define TRAIL_SEQ_MAX 4096u     /* elements kept of a sequence field */

#endif /* TRAIL_ABI_H */
