/* SPDX-License-Identifier: MIT */
/*
 * test-synth.c - synthetic event definitions (src/common/synth.c): the
 * synthetic_events grammar, its normalized form, the event description
 * and payloads made from an action's params, and errors with positions.
 */
#include <string.h>

#include "check.h"
#include "common/meta.h"
#include "common/synth.h"

TEST(synth_parse)
{
	struct trail_synth s;
	struct trail_filter_err e;
	char buf[512];

	CHECK_EQ(trail_synth_parse("wakeup_latency  u64 lat;pid_t pid; unsigned int  prio; "
				   "char comm[16]; char path[];", &s, &e), 0);
	CHECK_STR(s.name, "wakeup_latency");
	CHECK_EQ(s.nfields, 5);
	CHECK_EQ(s.f[1].size, 4);
	CHECK_EQ(s.f[1].sign, 1);
	CHECK_STR(s.f[2].type, "unsigned int");
	CHECK_EQ(s.f[3].str, 1);
	CHECK_EQ(s.f[3].max, 16);
	CHECK_EQ(s.f[4].max, TRAIL_SYNTH_STR_MAX);
	trail_synth_describe(&s, buf, sizeof(buf));
	CHECK_STR(buf, "wakeup_latency u64 lat; pid_t pid; unsigned int prio; char comm[16]; "
		       "char path[]");
}

TEST(synth_meta_payload)
{
	struct trail_synth s;
	struct trail_filter_err e;
	struct trail_meta m;
	uint8_t blob[TRAIL_SYNTH_MAX_META], p[600];
	const char *why, *strs[3] = {NULL, "worker-1-and-more", NULL};
	uint16_t sl[3] = {0, 17, 0};
	uint64_t vals[3] = {0x1122334455667788ull, 0, (uint64_t)-5};
	size_t n, len, plen;
	int32_t v;

	CHECK_EQ(trail_synth_parse("s u64 a; char c[8]; int b", &s, &e), 0);
	n = trail_synth_meta(&s, blob, sizeof(blob));
	CHECK(n > 0);
	CHECK_EQ(trail__meta_parse(blob, n, &m, &why), 0);
	CHECK_STR(m.provider, "synthetic");
	CHECK_STR(m.name, "s");
	CHECK_EQ(m.nfields, 3);
	CHECK_EQ(m.fields[1].kind, TRAIL_FK_STRING);
	CHECK_EQ(m.fields[2].flags & TRAIL_FF_SIGNED, TRAIL_FF_SIGNED);
	len = trail_synth_payload(&s, vals, strs, sl, p);
	CHECK_EQ(len, 8 + 2 + 8 + 4); /* the string cut at char[8] */
	CHECK_EQ(trail__payload_len(&m, p, len, &plen), 0);
	CHECK_EQ(plen, len);
	CHECK_EQ(memcmp(p, &vals[0], 8), 0);
	CHECK_EQ(memcmp(p + 10, "worker-1", 8), 0);
	memcpy(&v, p + 18, 4);
	CHECK_EQ(v, -5);
	CHECK_EQ(trail_synth_payload_max(&s), 8 + 2 + 8 + 4);
	CHECK_EQ(trail_synth_meta(&s, blob, 10), 0); /* no room */
}

TEST(synth_errors)
{
	static const struct {
		const char *text, *msg;
		int pos;
	} rows[] = {
		{"", "Missing synthetic event name", 0},
		{"lat", "Missing fields", 3},
		{"x-y u64 a", "Invalid synthetic event name", 1},
		{"x u65 a", "Invalid type", 2},
		{"x u64", "Missing field name", 2},
		{"x u64 a; u32 a", "Field name already used", 13},
		{"x u64 a;; u32 b", "Missing field", 8},
		{"x int v[4]", "Only char arrays", 2},
		{"x char s[0]", "String size out of range", 9},
		{"x char s[300]", "String size out of range", 9},
		{"x char s[4", "Invalid array size", 8},
		{"x u64 9a", "Invalid field name", 6},
		{"x u64 a.b", "Invalid field name", 7},
		{"x u8 a; u8 b; u8 c; u8 d; u8 e; u8 f; u8 g; u8 h; u8 i; u8 j; u8 k; u8 l; u8 m; "
		 "u8 n; u8 o; u8 p; u8 q", "Too many fields", 98},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct trail_synth s;
		struct trail_filter_err e;

		CHECK_EQ(trail_synth_parse(rows[i].text, &s, &e), -1);
		CHECK(strstr(e.msg, rows[i].msg) != NULL);
		CHECK_EQ(e.pos, rows[i].pos);
	}
}

TEST_MAIN(CHECK_T(synth_parse), CHECK_T(synth_meta_payload), CHECK_T(synth_errors))
