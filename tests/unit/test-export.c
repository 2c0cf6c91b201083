/* SPDX-License-Identifier: MIT */
/*
 * test-export.c - the export driver (src/export/output.c) with a fake
 * output that records how it is called: begin first and once, then every
 * record of every stream once in time order, damage before the records
 * after it, end last and once; TRAIL_OUTPUT_DONE and -errno stop the feed
 * where the output says. The trace files are the reader's fuzz seeds
 * (tests/fuzz/corpus/reader), recorded by trail itself.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "export/output.h"

#define MAX_STREAMS 64

struct fake {
	int begins, ends, damages, order_ok, after_end;
	uint64_t events, losts, last_ts;
	uint64_t per_stream[MAX_STREAMS];
	const struct trail_export_src *src;
	struct trail_reader *r;
	uint64_t stop_after; /* answer DONE (or fail_with) at this record */
	int fail_with;       /* -errno instead of DONE, 0: DONE */
	int begin_rc;
	int damage_before_first; /* damage seen before the first record */
};

static int f_begin(void *ctx, const struct trail_export_src *src)
{
	struct fake *f = ctx;

	CHECK_EQ(f->begins + f->ends + f->events + f->losts, 0);
	f->begins++;
	f->src = src;
	CHECK(src->reader == f->r);
	CHECK(src->hdr != NULL);
	CHECK(src->path != NULL && !strcmp(src->path, "fixture"));
	for (size_t i = 0; i < src->nstreams; i++)
		CHECK_EQ(src->streams[i]->order, i);
	if (f->begin_rc < 0)
		snprintf(src->err, src->errlen, "fake: refused");
	return f->begin_rc;
}

static int f_event(void *ctx, const struct trail_record *rec)
{
	struct fake *f = ctx;

	CHECK_EQ(f->begins, 1);
	if (f->ends)
		f->after_end = 1;
	if (rec->ts_ns < f->last_ts)
		f->order_ok = 0;
	f->last_ts = rec->ts_ns;
	if (rec->type == TRAIL_RT_LOST) {
		f->losts++;
	} else {
		CHECK(rec->event != NULL);
		f->events++;
		if (rec->stream->order < MAX_STREAMS)
			f->per_stream[rec->stream->order]++;
	}
	if (f->stop_after && f->events + f->losts == f->stop_after)
		return f->fail_with ? f->fail_with : TRAIL_OUTPUT_DONE;
	return 0;
}

static int f_damage(void *ctx, const char *msg)
{
	struct fake *f = ctx;

	CHECK(msg && *msg);
	if (!f->events && !f->losts)
		f->damage_before_first++;
	f->damages++;
	return 0;
}

static int f_end(void *ctx, const struct trail_export_src *src)
{
	struct fake *f = ctx;

	CHECK(src == f->src);
	f->ends++;
	return 0;
}

static struct trail_reader *open_at(const char *path)
{
	struct trail_reader *r = NULL;
	char err[512];

	if (trail_reader_open(path, &r, err, sizeof(err))) {
		fprintf(stderr, "  %s: %s\n", path, err);
		return NULL;
	}
	return r;
}

static struct trail_reader *open_fixture(const char *name)
{
	char path[1024];

	snprintf(path, sizeof(path), "%s/tests/fuzz/corpus/reader/%s", TRAIL_SOURCE_DIR, name);
	return open_at(path);
}

static int run(struct fake *f, struct trail_reader *r, int with_damage, char *err, size_t n)
{
	struct trail_output out = {
		.name = "fake", .ctx = f, .begin = f_begin, .event = f_event,
		.damage = with_damage ? f_damage : NULL, .end = f_end,
	};

	f->r = r;
	f->order_ok = 1;
	return trail_export_run(r, "fixture", NULL, &out, err, n);
}

/* every record once, in time order, each stream's count as its chunks say */
TEST(export_all_records)
{
	static const char *const files[] = {
		"example.dat", "example-mono.dat", "fgraph.dat", "function.dat",
		"lossy.dat", "overwrite.dat", "tpleaf.dat", "dlopen.dat",
	};

	for (size_t k = 0; k < sizeof(files) / sizeof(files[0]); k++) {
		struct trail_reader *r = open_fixture(files[k]);
		struct fake f = {0};
		struct trail_record rec;
		char err[256];

		CHECK(r != NULL);
		if (!r)
			continue;
		CHECK_EQ(run(&f, r, 1, err, sizeof(err)), 0);
		CHECK_EQ(f.begins, 1);
		CHECK_EQ(f.ends, 1);
		CHECK(f.order_ok);
		CHECK(!f.after_end);
		CHECK(f.events > 0);
		CHECK_EQ(f.damages, 0);
		for (size_t i = 0; i < f.src->nstreams && i < MAX_STREAMS; i++)
			CHECK_EQ(f.per_stream[i], f.src->streams[i]->in_file);
		CHECK_EQ(trail_reader_next(r, &rec), 0); /* the stream was drained */
		if (!strcmp(files[k], "lossy.dat"))
			CHECK(f.losts > 0);
		trail_reader_close(r);
	}
}

/* the whole file's event descriptions, before any record */
TEST(export_event_ids)
{
	struct trail_reader *r = open_fixture("example.dat");
	size_t described = 0;

	CHECK(r != NULL);
	if (!r)
		return;
	for (uint32_t id = 0; id < trail_reader_event_ids(r); id++)
		if (trail_reader_event(r, id))
			described++;
	CHECK(described >= 2); /* app:request, app:reply, ... */
	CHECK(trail_reader_event(r, trail_reader_event_ids(r)) == NULL);
	trail_reader_close(r);
}

/* DONE from begin: no record is read, end still comes */
TEST(export_done_at_begin)
{
	struct trail_reader *r = open_fixture("example.dat");
	struct fake f = {.begin_rc = TRAIL_OUTPUT_DONE};
	struct trail_record rec;

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(run(&f, r, 0, NULL, 0), 0);
	CHECK_EQ(f.events + f.losts, 0);
	CHECK_EQ(f.ends, 1);
	CHECK_EQ(trail_reader_next(r, &rec), 1); /* untouched */
	trail_reader_close(r);
}

/* DONE from event: exactly that many records */
TEST(export_done_midway)
{
	struct trail_reader *r = open_fixture("example.dat");
	struct fake f = {.stop_after = 3};

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(run(&f, r, 0, NULL, 0), 0);
	CHECK_EQ(f.events + f.losts, 3);
	CHECK_EQ(f.ends, 1);
	trail_reader_close(r);
}

/* an error stops the feed, end still closes, the reason comes back */
TEST(export_errors)
{
	struct trail_reader *r = open_fixture("example.dat");
	struct fake f = {.stop_after = 2, .fail_with = -ENOSPC};
	struct fake g = {.begin_rc = -EACCES};
	char err[256];

	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(run(&f, r, 0, err, sizeof(err)), -ENOSPC);
	CHECK_EQ(f.events + f.losts, 2);
	CHECK_EQ(f.ends, 1);
	CHECK(strstr(err, "fake output") != NULL); /* the driver's: none given */
	trail_reader_close(r);

	r = open_fixture("example.dat");
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(run(&g, r, 0, err, sizeof(err)), -EACCES);
	CHECK_STR(err, "fake: refused"); /* the output's own */
	CHECK_EQ(g.ends, 0);             /* no begin, no end */
	CHECK_EQ(g.events, 0);
	trail_reader_close(r);
}

/* a truncated file: its damage reaches the output, once a message, before
 * the records read after it, and what is readable is still fed */
TEST(export_damage)
{
	char src[1024], tmp[] = "/tmp/trail-test-export-XXXXXX";
	static uint8_t buf[1 << 16];
	const char *const *msgs;
	struct trail_reader *r;
	struct fake f = {0};
	size_t n;
	FILE *in;
	int fd;

	snprintf(src, sizeof(src), "%s/tests/fuzz/corpus/reader/lossy.dat", TRAIL_SOURCE_DIR);
	in = fopen(src, "rb");
	CHECK(in != NULL);
	if (!in)
		return;
	n = fread(buf, 1, sizeof(buf), in);
	fclose(in);
	fd = mkstemp(tmp);
	CHECK(fd >= 0);
	CHECK(write(fd, buf, n * 2 / 3) == (ssize_t)(n * 2 / 3));
	close(fd);
	r = open_at(tmp);
	unlink(tmp);
	CHECK(r != NULL);
	if (!r)
		return;
	CHECK_EQ(run(&f, r, 1, NULL, 0), 0);
	CHECK(f.damages > 0);
	CHECK_EQ(f.damages, trail_reader_errors(r, &msgs));
	CHECK(f.damage_before_first > 0); /* the cut section, found at open */
	CHECK(f.events > 0);
	CHECK(f.order_ok);
	CHECK_EQ(f.ends, 1);
	trail_reader_close(r);
}

TEST_MAIN(CHECK_T(export_all_records), CHECK_T(export_event_ids),
	  CHECK_T(export_done_at_begin), CHECK_T(export_done_midway), CHECK_T(export_errors),
	  CHECK_T(export_damage))
