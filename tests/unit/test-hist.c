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

TEST_MAIN(CHECK_T(hist_describe), CHECK_T(hist_fields))
