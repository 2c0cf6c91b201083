/* SPDX-License-Identifier: MIT */
/*
 * test-hist.c - the histogram grammar (src/common/hist.c): what specs
 * parse to, shown back as the kernel's "trigger info" line.
 */
#include <string.h>

#include "check.h"
#include "common/hist.h"

static struct trail_meta meta = {
	.provider = "app",
	.name = "request",
	.nfields = 3,
	.variable = 1,
	.fields = {
		{"fd", TRAIL_FK_INT, 4, TRAIL_FF_SIGNED, 1},
		{"path", TRAIL_FK_STRING, 1, 0, 1},
		{"bytes", TRAIL_FK_INT, 8, TRAIL_FF_HEX, 1},
	},
};

TEST(hist_describe)
{
	static const struct {
		const char *spec, *info;
	} rows[] = {
		{"keys=fd", "hist:keys=fd:vals=hitcount:sort=hitcount:size=2048"},
		{"hist:keys=path:vals=hitcount,bytes:sort=bytes.descending",
		 "hist:keys=path:vals=hitcount,bytes:sort=bytes.descending:size=2048"},
		{"key=bytes.log2:sort=bytes.log2:size=200",
		 "hist:keys=bytes.log2:vals=hitcount:sort=bytes.log2:size=256"},
		{"keys=common_pid.execname,bytes.buckets=1024:vals=hitcount.percent,bytes.graph:name=h1",
		 "hist:name=h1:keys=common_pid.execname,bytes.buckets=1024:vals=hitcount.percent,"
		 "bytes.graph:sort=hitcount:size=2048"},
		{"keys=common_timestamp.usecs,fd.hex:sort=fd,hitcount.descending:size=131072",
		 "hist:keys=common_timestamp.usecs,fd.hex:vals=hitcount:sort=fd.hex,hitcount.descending"
		 ":size=131072"},
	};

	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct trail_hist_spec h;
		struct trail_filter_err e;
		char buf[512];

		CHECK_EQ(trail_hist_parse(rows[i].spec, &meta, &h, &e), 0);
		trail_hist_describe(&h, buf, sizeof(buf));
		CHECK_STR(buf, rows[i].info);
	}
}

TEST(hist_fields)
{
	struct trail_hist_spec h;
	struct trail_filter_err e;

	CHECK_EQ(trail_hist_parse("keys=path,fd:vals=bytes:pause if fd > 2", &meta, &h, &e), 0);
	CHECK_EQ(h.nkeys, 2);
	CHECK_EQ(h.keys[0].field, 1);
	CHECK_EQ(h.keys[0].str, 1);
	CHECK_EQ(h.keys[1].sign, 1);
	CHECK_EQ(h.nvals, 1);
	CHECK_EQ(h.vals[0].field, 2);
	CHECK_EQ(h.paused, 1);
	CHECK_STR(h.filter, "fd > 2");
	CHECK_EQ(trail_hist_parse("keys=path:vals=path", &meta, &h, &e), -1);
	CHECK_EQ(e.pos, 15);
	CHECK_EQ(trail_hist_parse("keys=path.hex", &meta, &h, &e), -1);
	CHECK_STR(e.msg, "Invalid field modifier");
	CHECK_EQ(trail_hist_parse("keys=fd.buckets=0", &meta, &h, &e), -1);
	CHECK_EQ(e.pos, 16);
	CHECK_EQ(trail_hist_parse("keys=fd.buckets", &meta, &h, &e), -1);
	CHECK_EQ(trail_hist_parse("keys=fd:sort=", &meta, &h, &e), -1);
	CHECK_STR(e.msg, "Empty sort field");
}

/* keys as words: numbers (modifiers applied), a string NUL-padded, the
 * comm, the hidden pid of .sym keys; vals; a payload too short */
TEST(hist_key_words)
{
	/* fd = -3, path = "/a\0b" (4 bytes: ends at its NUL), bytes = 5000 */
	uint8_t p[4 + 2 + 4 + 8];
	uint16_t n = 4;
	int32_t fd = -3;
	uint64_t bytes = 5000, key[TRAIL_HIST_STR_MAX / 8 + 8], vals[4];
	struct trail_filter_ctx c = {.pid = 77, .tid = 78, .ts = 123456789, .comm = "worker"};
	struct trail_hist_spec h;
	struct trail_hist_keyer k;
	struct trail_filter_err e;

	memcpy(p, &fd, 4);
	memcpy(p + 4, &n, 2);
	memcpy(p + 6, "/a\0b", 4);
	memcpy(p + 10, &bytes, 8);
	CHECK_EQ(trail_hist_parse("keys=bytes.log2,path,fd:vals=bytes,common_timestamp", &meta, &h,
				  &e), 0);
	trail_hist_keyer(&h, &meta, &k);
	CHECK_EQ(k.kwords, 1 + TRAIL_HIST_STR_MAX / 8 + 1);
	CHECK_EQ(k.clock, 1);
	memset(key, 0xff, sizeof(key));
	CHECK_EQ(trail_hist_key(&k, p, sizeof(p), &c, key, vals), 0);
	CHECK_EQ(key[0], 13); /* ceil(log2(5000)) */
	CHECK_STR((const char *)&key[1], "/a");
	for (size_t i = 3; i < TRAIL_HIST_STR_MAX; i++)
		CHECK_EQ(((const uint8_t *)&key[1])[i], 0);
	CHECK_EQ((int64_t)key[1 + TRAIL_HIST_STR_MAX / 8], -3);
	CHECK_EQ(vals[0], 5000);
	CHECK_EQ(vals[1], 123456789);
	CHECK_EQ(trail_hist_key(&k, p, sizeof(p) - 1, &c, key, vals), -1);

	CHECK_EQ(trail_hist_parse("keys=common_comm,bytes.sym,common_timestamp.usecs", &meta, &h, &e), 0);
	trail_hist_keyer(&h, &meta, &k);
	CHECK_EQ(k.kwords, 2 + 1 + 1 + 1);
	CHECK_EQ(k.sympid, 1);
	CHECK_EQ(trail_hist_key(&k, p, sizeof(p), &c, key, vals), 0);
	CHECK_STR((const char *)key, "worker");
	CHECK_EQ(key[2], 5000);
	CHECK_EQ(key[3], 123456);
	CHECK_EQ(key[4], 77);
}

TEST_MAIN(CHECK_T(hist_describe), CHECK_T(hist_fields), CHECK_T(hist_key_words))
