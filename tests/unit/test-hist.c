/* SPDX-License-Identifier: MIT */
/*
 * test-hist.c - the histogram grammar (src/common/hist.c): what specs
 * parse to, shown back as the kernel's "trigger info" line.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "common/hist.h"
#include "common/htab.h"

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

/* a payload of meta's event: fd, path, bytes */
static uint32_t payload(uint8_t *p, int32_t fd, const char *path, uint64_t bytes)
{
	uint16_t n = (uint16_t)strlen(path);

	memcpy(p, &fd, 4);
	memcpy(p + 4, &n, 2);
	memcpy(p + 6, path, n);
	memcpy(p + 6 + n, &bytes, 8);
	return 6u + n + 8u;
}

/* a table for spec on meta (one copy), with its keyer */
static struct trail_htab *table(const char *spec, struct trail_hist_spec *h,
				struct trail_hist_keyer *k)
{
	struct trail_filter_err e;
	struct trail_htab *t;
	size_t n;

	if (trail_hist_parse(spec, &meta, h, &e))
		return NULL;
	trail_hist_keyer(h, &meta, k);
	n = trail_hist_bytes(h, k, 4);
	t = calloc(1, n);
	if (t)
		trail_htab_init(t, h->size, k->kwords, k->nvals, k->nextra, k->naux,
				trail_hist_copies(k, 4));
	return t;
}

struct traced {
	int n;
	unsigned action;
	uint64_t vals[4];
	char str[64];
	int snaps;
};

static void on_trace(void *arg, unsigned i, const uint64_t *vals, const char *const *strs,
		     const uint16_t *slen)
{
	struct traced *t = arg;

	t->n++;
	t->action = i;
	memcpy(t->vals, vals, sizeof(t->vals));
	t->str[0] = '\0';
	for (int j = 0; j < 2; j++) /* (the first string param) */
		if (strs[j] && !t->str[0])
			snprintf(t->str, sizeof(t->str), "%.*s", slen[j], strs[j]);
}

static void on_snapshot(void *arg, unsigned i)
{
	(void)i;
	((struct traced *)arg)->snaps++;
}

/* variables: set on one event's table, read once by another's
 * expression for the same key; keys and vals that are variables;
 * expressions' precedence, parentheses, division by 0 */
TEST(hist_variables)
{
	static struct trail_hist_spec h1, h2;
	static struct trail_hist_keyer k1, k2;
	struct trail_htab *t1 = table("keys=fd:ts0=common_timestamp:b=bytes", &h1, &k1);
	struct trail_htab *t2 = table("keys=fd:lat=common_timestamp-$ts0:x=(bytes+2)*3-$b/2:"
				      "z=bytes/(fd-fd):vals=$lat,$x:onmatch(app.start).trace(s,path,$lat)",
				      &h2, &k2);
	struct traced tr = {0};
	struct trail_hist_io io = {.trace = on_trace, .snapshot = on_snapshot, .arg = &tr};
	struct trail_filter_ctx c = {.pid = 1, .tid = 2, .ts = 1000};
	struct trail_htab_entry e[4];
	uint64_t keys[4 * 32], hits, dropped, more;
	uint8_t p[64];
	uint32_t len;

	CHECK(t1 != NULL);
	CHECK(t2 != NULL);
	CHECK_EQ(trail_hist_copies(&k1, 4), 1); /* (entries with variables: one table) */
	CHECK_EQ(h2.nrefs, 2);
	CHECK_STR(h2.refs[0].name, "ts0");
	CHECK(k2.nextra >= 1 + 3); /* set, lat, x, z; then to a whole cache line: */
	CHECK_EQ((2 + k2.kwords + k2.nvals + k2.nextra) % 8, 0);
	/* no table for $ts0 yet, then not set: skipped, nothing counted */
	len = payload(p, 7, "/x", 40);
	CHECK_EQ(trail_hist_update(&k2, t2, 0, p, len, &c, &io), 1);
	io.reft[0] = io.reft[1] = t1;
	io.refvar[0] = 0; /* ts0 */
	io.refvar[1] = 1; /* b */
	CHECK_EQ(trail_hist_update(&k2, t2, 0, p, len, &c, &io), 1);
	CHECK_EQ(tr.n, 0);
	/* set on t1 at 1000, read at 1600 */
	CHECK_EQ(trail_hist_update(&k1, t1, 0, p, len, &c, NULL), 0);
	c.ts = 1600;
	CHECK_EQ(trail_hist_update(&k2, t2, 3, p, len, &c, &io), 0);
	CHECK_EQ(tr.n, 1);
	CHECK_EQ(tr.vals[1], 600);   /* $lat */
	CHECK_STR(tr.str, "/x");     /* path */
	/* read once: the same key again finds ts0 unset */
	c.ts = 1700;
	CHECK_EQ(trail_hist_update(&k2, t2, 0, p, len, &c, &io), 1);
	CHECK_EQ(tr.n, 1);
	/* another key set meanwhile does not match fd 7 */
	len = payload(p, 8, "/y", 40);
	CHECK_EQ(trail_hist_update(&k1, t1, 0, p, len, &c, NULL), 0);
	len = payload(p, 7, "/x", 40);
	CHECK_EQ(trail_hist_update(&k2, t2, 0, p, len, &c, &io), 1);
	CHECK_EQ(trail_htab_collect(t2, e, keys, 4, &hits, &dropped, &more), 1);
	CHECK_EQ(hits, 1);
	CHECK_EQ(e[0].vals[0], 600);                     /* vals=$lat */
	CHECK_EQ(e[0].vals[1], (40 + 2) * 3 - 40 / 2);   /* vals=$x */
	CHECK_EQ(e[0].extra[0], 7);                      /* lat, x, z set */
	CHECK_EQ(e[0].extra[3], ~0ull);                  /* z: by zero */
	free(t1);
	free(t2);
}

/* onmax keeps each entry's max and saves the fields of the event that
 * raised it; onchange the last value; snapshot the table's max and its
 * key */
TEST(hist_actions)
{
	static struct trail_hist_spec h;
	static struct trail_hist_keyer k;
	struct trail_htab *t = table("keys=path:m=bytes:onmax($m).save(fd,path):"
				     "onmax($m).snapshot():onchange($m).trace(s,$m,path)",
				     &h, &k);
	struct traced tr = {0};
	struct trail_hist_io io = {.trace = on_trace, .snapshot = on_snapshot, .arg = &tr};
	struct trail_filter_ctx c = {.pid = 1};
	static const struct {
		int32_t fd;
		const char *path;
		uint64_t bytes;
	} ev[] = {{1, "/a", 10}, {2, "/a", 30}, {3, "/a", 20}, {4, "/b", 5}, {5, "/b", 5}};
	struct trail_htab_entry e[4];
	uint64_t keys[4 * 80], hits, dropped, more;
	const uint64_t *aux;
	uint8_t p[64];

	CHECK(t != NULL);
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		CHECK_EQ(trail_hist_update(&k, t, 0, p, payload(p, ev[i].fd, ev[i].path, ev[i].bytes),
					   &c, &io), 0);
	/* onchange: 10, 30, 20 (changes), 5 (a change: another entry), 5 (none) */
	CHECK_EQ(tr.n, 4);
	CHECK_EQ(tr.vals[0], 5);
	CHECK_STR(tr.str, "/b");
	/* snapshot: the table's max rose at 10 and 30 */
	CHECK_EQ(tr.snaps, 2);
	aux = trail_htab_aux(t);
	CHECK_EQ(aux[0], 1 + 1);
	CHECK_EQ(aux[1], 30);
	CHECK_STR((const char *)&aux[3], "/a");
	CHECK_EQ(trail_htab_collect(t, e, keys, 4, &hits, &dropped, &more), 2);
	for (int i = 0; i < 2; i++) {
		const struct trail_hist_cact *save = &k.act[0];
		const uint64_t *x = e[i].extra;
		int a = !strcmp((const char *)e[i].key, "/a");

		CHECK_EQ(x[save->track], a ? 30 : 5);
		CHECK_EQ((int64_t)x[k.xp[save->p[0].idx].word], a ? 2 : 4); /* fd saved */
		CHECK_STR((const char *)&x[k.xp[save->p[1].idx].word], a ? "/a" : "/b");
		CHECK_EQ(x[k.act[2].track], a ? 20 : 5); /* onchange's last value */
	}
	free(t);
}

TEST_MAIN(CHECK_T(hist_describe), CHECK_T(hist_fields), CHECK_T(hist_key_words),
	  CHECK_T(hist_variables), CHECK_T(hist_actions))
