/* SPDX-License-Identifier: MIT */
/*
 * types.h - the structs of tests/unit/dwarf/prog.c, also compiled into
 * test-probe-dwarf.c so that offsets found in DWARF are checked against
 * the compiler's offsetof().
 */
#ifndef TRAIL_TEST_DWARF_TYPES_H
#define TRAIL_TEST_DWARF_TYPES_H

#include <stdbool.h>
#include <stdint.h>

enum color { RED, GREEN = 5, BLUE };
enum sign { NEG = -1, POS = 1 };

struct hdr {
	unsigned short kind;
	unsigned int len;
};

struct req {
	int id;
	struct hdr hdr;               /* nested struct */
	struct req *next;             /* pointer member */
	const char *path;             /* char * member: a string */
	char name[16];                /* char array: a string */
	unsigned int vals[4];         /* u32[4] */
	unsigned int flag : 1, mode : 3, level : 12; /* bitfields */
	union {
		int i;
		long l;
	} u;                          /* named union member */
	union {
		short s;
		unsigned char b;
	};                            /* anonymous union */
	enum color color;
	bool ok;
	uint8_t bytes[4];             /* u8[4], not a string: uint8_t */
	long many[100];               /* too long for TYPE[N] */
	struct hdr hdrs[2];           /* array of structs */
};

typedef struct {
	int x, y;
} point_t;                            /* 8 bytes: one register */

struct pair {
	long a;
	int b;
	short c;
	signed char d;
};                                    /* 16 bytes: two registers */

struct big {
	long a, b, c;
};                                    /* 24 bytes: on the stack */

struct mixed {
	double d;
	long l;
};                                    /* d in xmm0, l in an int register */

struct node {
	int v;
	struct node *next;
};

#endif /* TRAIL_TEST_DWARF_TYPES_H */
