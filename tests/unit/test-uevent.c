/* SPDX-License-Identifier: MIT */
/*
 * test-uevent.c - user event definitions (src/common/uevent.c): the
 * kernel's user_events grammar as its selftests take it (dyn_test.c's
 * strings, with the caret trail puts under each error), the kernel's
 * "same event" rule, the trail description, and payloads in the kernel's
 * layout turned into trail's, hostile locations included.
 */
#include <errno.h>
#include <string.h>

#include "check.h"
#include "common/meta.h"
#include "common/uevent.h"

static const struct {
	const char *def;
	unsigned opts;
	int pos; /* -1: valid */
	const char *msg;
} table[] = {
	/* dyn_test.c's basic_types, loc_types, size_types: accepted */
	{"__test_event u64 a", 0, -1, NULL},
	{"__test_event u32 a", 0, -1, NULL},
	{"__test_event u16 a", 0, -1, NULL},
	{"__test_event u8 a", 0, -1, NULL},
	{"__test_event char a", 0, -1, NULL},
	{"__test_event unsigned char a", 0, -1, NULL},
	{"__test_event int a", 0, -1, NULL},
	{"__test_event unsigned int a", 0, -1, NULL},
	{"__test_event short a", 0, -1, NULL},
	{"__test_event unsigned short a", 0, -1, NULL},
	{"__test_event char[20] a", 0, -1, NULL},
	{"__test_event unsigned char[20] a", 0, -1, NULL},
	{"__test_event char[0x14] a", 0, -1, NULL},
	{"__test_event unsigned char[0x14] a", 0, -1, NULL},
	{"__test_event __data_loc char[] a", 0, -1, NULL},
	{"__test_event __data_loc unsigned char[] a", 0, -1, NULL},
	{"__test_event __rel_loc char[] a", 0, -1, NULL},
	{"__test_event __rel_loc unsigned char[] a", 0, -1, NULL},
	{"__test_event struct custom a 20", 0, -1, NULL},
	{"__test_event", 0, -1, NULL},
	{"__test_event ", 0, -1, NULL},
	{"e u32 a;", 0, -1, NULL},
	{"e u32 a;; u32 b", 0, -1, NULL},
	/* ... refused, and where */
	{"__test_event char[aa] a", 0, 18, "Invalid array size"},
	{"__test_event char[9999] a", 0, 18, "Invalid array size"},
	{"__test_event char[0x0000000000001] a", 0, 18, "Invalid array size"},
	{"__test_event struct custom a", 0, 28, "Missing struct size"},
	{"__test_event char a 20", 0, 20, "A size follows struct types only"},
	{"e:BPF_ITER u32 a", 0, 1, "No flags are defined"},
	{"e: u32 a", 0, 1, "No flags are defined"},
	{"e long a", 0, 2, "Invalid type: long"},
	{"e u32  a", 0, 6, "Extra blank"},
	{"e u32 a ;u32 b", 0, 8, "Extra blank"},
	{"e u32", 0, 5, "Missing field name"},
	{"e u32 a 3", 0, 8, "A size follows struct types only"},
	{"e u128 a", 0, 2, "Invalid type"},
	{"e u32 a; u64 a", 0, 13, "Field name already used"},
	{"e u32 a-b", 0, 7, "Invalid field name"},
	{"bad-name u32 a", 0, 3, "Invalid event name"},
	{" e u32 a", 0, 0, "Missing event name"},
	{"e struct s a 0", 0, 13, "Invalid struct size"},
	{"e struct s a 70000", 0, 13, "Struct too large"},
	{"e char[0] a", 0, 7, "Invalid array size"},
	{"e char[1025] a", 0, 7, "Invalid array size"},
	{"e __data_loc ch\nar[] a", 0, 15, "Invalid character"},
	{"e u32 a;\n u32 b", 0, -1, NULL},
	/* trail's types: only with TRAIL_UE_EXT */
	{"e string s; bytes b; bool f; double d; float g; char[] c", TRAIL_UE_EXT, -1, NULL},
	{"e string s", 0, 2, "Invalid type"},
	{"e char[] s", 0, 7, "Invalid array size"},
	{"e bool f", 0, 2, "Invalid type"},
};

TEST(uevent_grammar_table)
{
	static struct trail_ue_def d;
	struct trail_filter_err e;

	for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		int r = trail_ue_parse(table[i].def, table[i].opts, &d, &e);

		if (table[i].pos < 0) {
			CHECK_EQ(r, 0);
			if (r)
				fprintf(stderr, "  refused: '%s' at %d: %s\n", table[i].def, e.pos, e.msg);
		} else {
			CHECK_EQ(r, -EINVAL);
			CHECK_EQ(e.pos, table[i].pos);
			CHECK(strstr(e.msg, table[i].msg) != NULL);
			if (r != -EINVAL || e.pos != table[i].pos || !strstr(e.msg, table[i].msg))
				fprintf(stderr, "  '%s': %d at %d: %s\n", table[i].def, r, e.pos, e.msg);
		}
	}
}

TEST(uevent_layout)
{
	static struct trail_ue_def d;
	struct trail_filter_err e;
	char buf[256];

	CHECK_EQ(trail_ue_parse("ev u32 a; __data_loc char[] s; struct pair p 8; char[0x10] t; s8 c",
				0, &d, &e), 0);
	CHECK_STR(trail_ue_name(&d), "ev");
	CHECK_EQ(d.nfields, 5);
	CHECK_EQ(d.min_size, 4 + 4 + 8 + 16 + 1);
	CHECK_EQ(d.f[1].off, 4);
	CHECK_EQ(d.f[1].kind, TRAIL_UE_LOC);
	CHECK_EQ(d.f[1].str, 1);
	CHECK_EQ(d.f[2].off, 8);
	CHECK_EQ(d.f[2].kind, TRAIL_UE_BLOB);
	CHECK_EQ(d.f[3].size, 16);
	CHECK_EQ(d.f[4].sign, 1);
	CHECK_EQ(d.f[0].sign, 0);
	CHECK_EQ(d.direct, 0);
	trail_ue_format(&d, buf, sizeof(buf));
	CHECK_STR(buf, "ev u32 a; __data_loc char[] s; struct pair p 8; char[0x10] t; s8 c");
	CHECK_EQ(trail_ue_parse("ev u32 a; s64 b", 0, &d, &e), 0);
	CHECK_EQ(d.direct, 1);
}

/* dyn_test.c's matching table: the second registered beside the first */
TEST(uevent_same)
{
	static const char *const pairs[][3] = {
		{"e u32 a", "e u32 a", "1"},
		{"e u32 a; u32 b", "e u32 a; u32 b", "1"},
		{"e u32 a; u32 b", "e u32 a;u32 b", "1"},
		{"e u32 a; u32 b", "e u32 a; u32 b;", "1"},
		{"e u32 a", "e u32 b", "0"},
		{"e u32 a; u32 b", "e u32 b; u32 a", "0"},
		{"e u64 a; u64 b", "e u32 a; u32 b", "0"},
		{"e struct my_struct a 20", "e struct my_struct a 20", "1"},
		{"e struct my_struct a 20", "e struct my_struct b 20", "0"},
		{"e struct my_struct a 20", "e struct my_struct a 21", "0"},
		{"e char[20] a", "e char[0x14] a", "0"},
		{"e", "e", "1"},
		{"e", "e u32 a", "0"},
	};
	static struct trail_ue_def a, b;
	struct trail_filter_err e;

	for (size_t i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		CHECK_EQ(trail_ue_parse(pairs[i][0], 0, &a, &e), 0);
		CHECK_EQ(trail_ue_parse(pairs[i][1], 0, &b, &e), 0);
		CHECK_EQ(trail_ue_same(&a, &b), pairs[i][2][0] == '1');
	}
}

TEST(uevent_meta_and_convert)
{
	static struct trail_ue_def d;
	static struct trail_meta m;
	struct trail_filter_err e;
	uint8_t blob[1024], p[64], out[TRAIL_STRING_MAX * 3], want[64];
	const char *why;
	size_t n, olen, plen;
	uint32_t a = 7, loc, rel;

	CHECK_EQ(trail_ue_parse("ev u32 a; __data_loc char[] s; __rel_loc char[] r; char[4] t; "
				"__data_loc u16[] q", 0, &d, &e), 0);
	n = trail_ue_meta(&d, TRAIL_UE_PROVIDER, "ev", blob, sizeof(blob));
	CHECK(n > 0);
	CHECK_EQ(trail__meta_parse(blob, n, &m, &why), 0);
	CHECK_STR(m.provider, "user_events");
	CHECK_EQ(m.nfields, 5);
	CHECK_EQ(m.fields[1].kind, TRAIL_FK_STRING);
	CHECK_EQ(m.fields[3].kind, TRAIL_FK_STRING);
	CHECK_EQ(m.fields[4].kind, TRAIL_FK_SEQ);
	CHECK_EQ(m.fields[4].size, 2);
	/* payload: a(4) s(4) r(4) t(4) q(4) | "hi\0" "yo\0" q: 2 u16 */
	memcpy(p, &a, 4);
	loc = (uint32_t)(3 << 16 | (8 + 20));
	memcpy(p + 4, &loc, 4);
	rel = (uint32_t)(3 << 16 | (23 - 12)); /* from the end of the field at 8 */
	memcpy(p + 8, &rel, 4);
	memcpy(p + 12, "abcd", 4); /* no NUL: all four bytes */
	loc = (uint32_t)(4 << 16 | (8 + 26));
	memcpy(p + 16, &loc, 4);
	memcpy(p + 20, "hi\0yo\0", 6);
	memcpy(p + 26, "\x01\x00\x02\x00", 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), 0);
	n = 0;
	memcpy(want + n, &a, 4), n += 4;
	memcpy(want + n, "\x02\x00hi", 4), n += 4;
	memcpy(want + n, "\x02\x00yo", 4), n += 4;
	memcpy(want + n, "\x04\x00" "abcd", 6), n += 6;
	memcpy(want + n, "\x02\x00\x01\x00\x02\x00", 6), n += 6;
	CHECK_EQ(olen, n);
	CHECK_EQ(memcmp(out, want, n), 0);
	CHECK_EQ(trail__payload_len(&m, out, olen, &plen), 0);
	CHECK_EQ(plen, olen);
	/* short, and every hostile location: refused, nothing read outside */
	CHECK_EQ(trail_ue_convert(&d, p, 19, out, &olen), -EINVAL);
	loc = (uint32_t)(3 << 16 | (8 + 28)); /* past the end */
	memcpy(p + 4, &loc, 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), -EFAULT);
	loc = (uint32_t)(3 << 16 | 4); /* in the kernel's header */
	memcpy(p + 4, &loc, 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), -EFAULT);
	loc = (uint32_t)(2 << 16 | (8 + 20)); /* "hi" without its NUL */
	memcpy(p + 4, &loc, 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), -EFAULT);
	loc = (uint32_t)(0 << 16 | (8 + 20)); /* empty: no NUL either */
	memcpy(p + 4, &loc, 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), -EFAULT);
	loc = (uint32_t)(0xffffu << 16 | 0xffffu);
	memcpy(p + 4, &loc, 4);
	CHECK_EQ(trail_ue_convert(&d, p, 30, out, &olen), -EFAULT);
	/* every byte of the payload as the location: never a crash (ASan) */
	for (uint32_t v = 0; v < 40; v++) {
		loc = v << 16 | v;
		memcpy(p + 4, &loc, 4);
		trail_ue_convert(&d, p, 30, out, &olen);
	}
}

TEST_MAIN(CHECK_T(uevent_grammar_table), CHECK_T(uevent_layout), CHECK_T(uevent_same),
	  CHECK_T(uevent_meta_and_convert))
