/* SPDX-License-Identifier: MIT */
/*
 * ctf.c - `trail export --format ctf`: a CTF 1.8 trace directory, what
 * babeltrace2 and Trace Compass read (LTTng's format).
 *
 *   DIR/metadata              TSDL text: the trace, its clock, one stream
 *                             class, an event class per trail event
 *   DIR/stream-ORDER-PID-TID  one data stream per trail stream (thread,
 *                             or a signal handler level of one)
 *
 * A data stream is a run of packets, each
 *
 *   packet header   magic, trace uuid, stream_id 0, stream_instance_id
 *   packet context  timestamp_begin/_end, content_size, packet_size (bits),
 *                   packet_seq_num, events_discarded, cpu_id, vpid, vtid,
 *                   procname[16]
 *   events          header {id, 64-bit CLOCK_MONOTONIC ns} + payload
 *
 * Everything is byte-aligned little-endian, so an event payload without
 * strings is the trail payload byte for byte (a sequence's u16 count is
 * CTF's length field before it): copied whole. Strings are re-encoded
 * NUL-terminated; a NULL string becomes "".
 *
 * The thread's identity is per stream, so it lives in the packet context
 * (babeltrace2 prints cpu_id, vpid, vtid and procname with each event) and
 * costs nothing per event. A packet ends when it reaches PKT_MAX, when the
 * thread moves to another CPU (cpu_id is the packet's), and at a LOST
 * record: events_discarded is the stream's running total, so the packet
 * after a loss carries the higher count and babeltrace2 reports the
 * discarded events between the two packets, where the loss happened. A
 * loss the file accounts for but places nowhere (and a loss at the end of
 * a stream) closes the stream with an empty packet carrying the total,
 * except a flight recorder's overwritten events, the oldest: counted in
 * the stream's first packet. A stream that lost events before its first
 * one opens with an empty packet counting 0 (babeltrace2 counts from a
 * stream's first packet on).
 *
 * The clock class is trail's: CLOCK_MONOTONIC nanoseconds, its offset the
 * wall clock's lead on it when the recording started
 * (trail_reader_wallclock()), so viewers show the time of day; 0 if the
 * file cannot say.
 *
 * Memory: each stream buffers its packets until PKT_MAX is reached, then
 * appends them to its file (opened and closed on each write, so hundreds
 * of threads need no hundreds of descriptors); when all buffers together
 * pass BUDGET, every stream is written out and its buffer freed. A trace
 * of any size is exported in bounded memory.
 *
 * function_graph data arrives as calls (output.h) and becomes
 * ftrace:func_entry {addr, name} ({addr, name, args} with record --args:
 * the arguments as report shows them) and ftrace:func_exit {addr, name,
 * duration} events (four classes of that name: without a retval, with one
 * typed int64_t or uint64_t by the function's DWARF, or hex without it),
 * LTTng's lttng_ust_cyg_profile pair with the name resolved; a leaf call
 * is both, at its own times. As in `trail
 * report`, a call the trace cut (the view's OPEN exit) has no func_exit, a
 * return from a frame entered before the trace has one with duration 0,
 * and a record-time threshold call is its func_exit alone. The function tracer's ftrace:function records get their
 * symbols: {ip, parent_ip, name, parent_name}.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "argtypes.h"
#include "formats.h"

#define PKT_MAX (256u * 1024)  /* a packet's bytes, unless one event is bigger */
#define BUDGET (64u << 20)     /* bytes buffered over all streams */
#define BUF_MIN 4096u
#define CTF_MAGIC 0xc1fc1fc1u
#define PKT_HDR 32u            /* magic, uuid[16], stream_id, stream_instance_id */
#define PKT_CTX 76u            /* 6 x u64, cpu_id, vpid, vtid, procname[16] */
#define NO_PACKET ((size_t)-1)

enum { EV_NONE, EV_PLAIN, EV_CONVERT, EV_FUNCTION };

struct evclass {
	uint8_t kind;     /* EV_* */
	uint32_t zero;    /* bytes its absent fields take (a short payload) */
};

struct cstream {
	const struct trail_rstream *rs;
	uint8_t *buf;     /* whole packets, then the open one */
	size_t len, cap;
	size_t pkt;       /* offset of the open packet, or NO_PACKET */
	uint64_t begin;   /* timestamp_begin of the open packet */
	uint64_t last;    /* the stream's last timestamp (never goes back) */
	uint64_t discarded, snap; /* lost so far; the last packet's count */
	uint64_t seq;     /* packets made */
	uint64_t written; /* bytes in the file */
	uint32_t cpu;     /* of the open packet */
};

struct ctf {
	struct trail_output out;
	char *dir;
	int dirfd;
	const struct trail_export_src *src;
	struct cstream **st; /* by stream order, made at its first record */
	size_t nst;
	size_t held;         /* bytes of all stream buffers */
	struct evclass *ev;  /* by trail event id */
	uint32_t nev;
	/* after trail's ids: func_entry without and with --args; func_exit
	 * without a retval, with a hex one (no DWARF, pointers), a signed
	 * and an unsigned one (typed by DWARF) */
	uint32_t id_entry, id_entry_args, id_exit, id_exit_ret, id_exit_sret, id_exit_uret;
	struct trail_argtypes *types;
	struct lbuf lb; /* a call's arguments as text */
	int graph, id16;
	int any;                    /* a record was seen: */
	uint64_t first_ts, last_ts; /* the trace's times */
	uint8_t uuid[16];
};

/* ------------------------------------------------------------- errors */

static int fail(struct ctf *c, int err, const char *what, const char *name)
{
	snprintf(c->src->err, c->src->errlen, "ctf: %s %s/%s: %s", what, c->dir, name,
		 strerror(err));
	return -err;
}

/* ------------------------------------------------------------ metadata */

/* s inside a TSDL string literal */
static void put_esc(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20 || ch == 0x7f)
			fprintf(f, "\\x%02x", ch);
		else
			fputc(ch, f);
	}
}

static void put_lit(FILE *f, const char *s)
{
	fputc('"', f);
	put_esc(f, s);
	fputc('"', f);
}

/*
 * A field's TSDL name: '_' + the name with anything but [A-Za-z0-9_]
 * made '_'. CTF readers drop one leading underscore when they show a
 * field, so users see the trail name, and no name can be a TSDL keyword.
 * A name already used in the struct (a hostile file) gets more '_'.
 */
#define NAME_MAX_LEN 264 /* '_', a field name (255 at most), "_len", '_'s */

static void field_name(const char *name, const char *suffix, char (*used)[NAME_MAX_LEN],
		       size_t nused, char *out, size_t n)
{
	size_t k = 0;
	int dup;

	out[k++] = '_';
	for (; *name && k < n - 8; name++) {
		char ch = *name;
		int ok = (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
			 (ch >= '0' && ch <= '9') || ch == '_';

		out[k++] = ok ? ch : '_';
	}
	out[k] = '\0';
	snprintf(out + k, n - k, "%s", suffix);
	do {
		dup = 0;
		for (size_t i = 0; i < nused && !dup; i++)
			dup = !strcmp(used[i], out);
		if (dup) {
			k = strlen(out);
			if (k + 1 >= n)
				return;
			out[k] = '_';
			out[k + 1] = '\0';
		}
	} while (dup);
}

static void int_type(FILE *f, const struct trail_field *fl)
{
	unsigned bits = fl->size * 8u;

	if (fl->flags & TRAIL_FF_BOOL) {
		/* every nonzero value is true, as trail report shows it */
		fprintf(f, "enum : integer { size = %u; align = 8; signed = false; } "
			"{ \"false\" = 0, \"true\" = 1 ... %llu }", bits,
			(unsigned long long)(bits >= 64 ? ~0ull : (1ull << bits) - 1));
		return;
	}
	fprintf(f, "integer { size = %u; align = 8; signed = %s; base = %u; }", bits,
		(fl->flags & TRAIL_FF_SIGNED) ? "true" : "false",
		(fl->flags & (TRAIL_FF_HEX | TRAIL_FF_PTR)) ? 16 : 10);
}

static int field_ok(const struct trail_field *fl)
{
	if (fl->kind == TRAIL_FK_STRING)
		return 1;
	if (fl->kind == TRAIL_FK_FLOAT)
		return fl->size == 4 || fl->size == 8;
	return (fl->kind == TRAIL_FK_INT || fl->kind == TRAIL_FK_ARRAY ||
		fl->kind == TRAIL_FK_SEQ) &&
	       (fl->size == 1 || fl->size == 2 || fl->size == 4 || fl->size == 8);
}

/* The payload's fields; used: room for the TSDL names of 2 x
 * TRAIL_META_MAX_FIELDS (a sequence has two) */
static void event_fields(FILE *f, const struct trail_meta *m, char (*used)[NAME_MAX_LEN])
{
	size_t nused = 0;

	for (uint32_t i = 0; i < m->nfields; i++) {
		const struct trail_field *fl = &m->fields[i];
		char *name = used[nused];

		field_name(fl->name, "", used, nused, name, NAME_MAX_LEN);
		nused++;
		fputs("\t\t", f);
		switch (fl->kind) {
		case TRAIL_FK_STRING:
			fprintf(f, "string %s;\n", name);
			break;
		case TRAIL_FK_FLOAT:
			fprintf(f, "floating_point { exp_dig = %u; mant_dig = %u; byte_order = le; "
				"align = 8; } %s;\n", fl->size == 4 ? 8 : 11, fl->size == 4 ? 24 : 53,
				name);
			break;
		case TRAIL_FK_INT:
			int_type(f, fl);
			fprintf(f, " %s;\n", name);
			break;
		case TRAIL_FK_ARRAY:
			int_type(f, fl);
			fprintf(f, " %s[%u];\n", name, fl->count);
			break;
		case TRAIL_FK_SEQ: {
			char *len = used[nused];

			field_name(fl->name, "_len", used, nused, len, NAME_MAX_LEN);
			nused++;
			fprintf(f, "integer { size = 16; align = 8; signed = false; } %s;\n\t\t", len);
			int_type(f, fl);
			fprintf(f, " %s[%s];\n", name, len);
			break;
		}
		}
	}
}

static void event_class(FILE *f, struct ctf *c, uint32_t id, const struct trail_meta *m,
			char (*used)[NAME_MAX_LEN])
{
	fprintf(f, "event {\n\tname = \"");
	put_esc(f, m->provider);
	fputc(':', f);
	put_esc(f, m->name);
	fprintf(f, "\";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n", id);
	if (c->ev[id].kind == EV_FUNCTION)
		fprintf(f, "\t\tuint64x_t _ip;\n\t\tuint64x_t _parent_ip;\n"
			"\t\tstring _name;\n\t\tstring _parent_name;\n");
	else
		event_fields(f, m, used);
	fprintf(f, "\t};\n};\n\n");
}

/* func_entry twice: with the arguments (record --args) and without;
 * func_exit four times: without a return value, with one in hex (no
 * DWARF, pointers), signed, unsigned (funcgraph-retval by type) */
static void graph_classes(FILE *f, struct ctf *c)
{
	static const char *const rets[4] = {"", "\t\tuint64x_t _retval;\n",
					    "\t\tint64_t _retval;\n", "\t\tuint64_t _retval;\n"};
	uint32_t ids[4] = {c->id_exit, c->id_exit_ret, c->id_exit_sret, c->id_exit_uret};

	for (int args = 0; args < 2; args++)
		fprintf(f, "event {\n\tname = \"ftrace:func_entry\";\n\tid = %u;\n\tstream_id = 0;\n"
			"\tfields := struct {\n\t\tuint64x_t _addr;\n\t\tstring _name;\n%s\t};\n};\n\n",
			args ? c->id_entry_args : c->id_entry, args ? "\t\tstring _args;\n" : "");
	for (int ret = 0; ret < 4; ret++)
		fprintf(f, "event {\n\tname = \"ftrace:func_exit\";\n\tid = %u;\n\tstream_id = 0;\n"
			"\tfields := struct {\n\t\tuint64x_t _addr;\n\t\tstring _name;\n"
			"\t\tuint64_t _duration;\n%s\t};\n};\n\n", ids[ret], rets[ret]);
}

static void env(FILE *f, struct ctf *c)
{
	struct trail_reader *r = c->src->reader;
	const char *keys[] = {"hostname", "trail_version", "command", "tracer", "events", "mode"};

	fprintf(f, "env {\n\ttracer_name = \"trail\";\n");
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
		const char *v = trail_reader_info(r, keys[i]);

		if (!v)
			continue;
		fprintf(f, "\t%s = ", keys[i]);
		put_lit(f, v);
		fprintf(f, ";\n");
	}
	fprintf(f, "\ttrace_file = ");
	put_lit(f, c->src->path);
	fprintf(f, ";\n\trealtime_start_ns = %llu;\n",
		(unsigned long long)c->src->hdr->created_ns);
	if (trail_reader_nostream_lost(r))
		fprintf(f, "\tlost_without_stream = %llu;\n",
			(unsigned long long)trail_reader_nostream_lost(r));
	if (trail_reader_gone_lost(r, NULL))
		fprintf(f, "\toverwritten_of_threads_gone = %llu;\n",
			(unsigned long long)trail_reader_gone_lost(r, NULL));
	fprintf(f, "};\n\n");
}

static const char metadata_head[] =
	"/* CTF 1.8 */\n"
	"\n"
	"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
	"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
	"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
	"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
	"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
	"typealias integer { size = 64; align = 8; signed = false; base = 16; } := uint64x_t;\n"
	"\n";

/* The clock is trail's: CLOCK_MONOTONIC nanoseconds; offset: the wall
 * clock at monotonic 0 (seconds, then nanoseconds). */
static const char metadata_clock[] =
	"clock {\n"
	"\tname = \"monotonic\";\n"
	"\tdescription = \"CLOCK_MONOTONIC\";\n"
	"\tfreq = 1000000000;\n"
	"\tprecision = 1;\n"
	"\toffset_s = %llu;\n"
	"\toffset = %llu;\n"
	"\tabsolute = false;\n"
	"};\n"
	"\n"
	"typealias integer { size = 64; align = 8; signed = false; "
	"map = clock.monotonic.value; } := uint64_clock_monotonic_t;\n"
	"\n"
	"stream {\n"
	"\tid = 0;\n"
	"\tpacket.context := struct {\n"
	"\t\tuint64_clock_monotonic_t timestamp_begin;\n"
	"\t\tuint64_clock_monotonic_t timestamp_end;\n"
	"\t\tuint64_t content_size;\n"
	"\t\tuint64_t packet_size;\n"
	"\t\tuint64_t packet_seq_num;\n"
	"\t\tuint64_t events_discarded;\n"
	"\t\tuint32_t cpu_id;\n"
	"\t\tint32_t vpid;\n"
	"\t\tint32_t vtid;\n"
	"\t\tinteger { size = 8; align = 8; signed = false; encoding = UTF8; } procname[16];\n"
	"\t};\n"
	"\tevent.header := struct {\n"
	"\t\t%s id;\n"
	"\t\tuint64_clock_monotonic_t timestamp;\n"
	"\t};\n"
	"};\n"
	"\n";

static void uuid_str(const uint8_t *u, char *s)
{
	for (int i = 0, k = 0; i < 16; i++) {
		if (i == 4 || i == 6 || i == 8 || i == 10)
			s[k++] = '-';
		sprintf(s + k, "%02x", u[i]);
		k += 2;
	}
}

/* n bytes of buf to fd: 0, or the errno of the write that failed */
static int put_all(int fd, const void *buf, size_t n)
{
	size_t done = 0;

	while (done < n) {
		ssize_t w = write(fd, (const char *)buf + done, n - done);

		if (w > 0)
			done += (size_t)w;
		else if (w < 0 && errno != EINTR)
			return errno;
		else if (!w)
			return EIO;
	}
	return 0;
}

/* The metadata is made in memory and written with write(2): a failed
 * write's errno (a full disk) is said, not stdio's bare error flag. */
static int write_metadata(struct ctf *c)
{
	struct trail_reader *r = c->src->reader;
	char uu[40], (*names)[NAME_MAX_LEN], *text = NULL;
	size_t len = 0;
	uint64_t wall;
	FILE *f;
	int fd, err;

	names = malloc(2 * TRAIL_META_MAX_FIELDS * sizeof(*names));
	if (!names)
		return -ENOMEM;
	if (!(f = open_memstream(&text, &len))) {
		free(names);
		return -ENOMEM;
	}
	uuid_str(c->uuid, uu);
	fputs(metadata_head, f);
	fprintf(f, "trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"%s\";\n\tbyte_order = le;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n", uu);
	env(f, c);
	if (!trail_reader_wallclock(r, &wall))
		wall = 0;
	fprintf(f, metadata_clock, (unsigned long long)(wall / 1000000000ull),
		(unsigned long long)(wall % 1000000000ull), c->id16 ? "uint16_t" : "uint32_t");
	for (uint32_t id = 0; id < c->nev; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);

		if (c->ev[id].kind != EV_NONE)
			event_class(f, c, id, &ev->meta, names);
	}
	if (c->graph)
		graph_classes(f, c);
	free(names);
	if (ferror(f) | fclose(f)) {
		free(text);
		return -ENOMEM;
	}
	fd = openat(c->dirfd, "metadata", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
	if (fd < 0) {
		err = errno;
		free(text);
		return fail(c, err, "cannot write", "metadata");
	}
	err = put_all(fd, text, len);
	free(text);
	if (close(fd) && !err && errno != EINTR)
		err = errno;
	return err ? fail(c, err, "writing", "metadata") : 0;
}

/* ------------------------------------------------------------- classes */

/* How each event's records are written, and whether calls come. */
static int classify(struct ctf *c)
{
	struct trail_reader *r = c->src->reader;

	c->nev = trail_reader_event_ids(r);
	c->ev = calloc(c->nev ? c->nev : 1, sizeof(*c->ev));
	if (!c->ev)
		return -ENOMEM;
	for (uint32_t id = 0; id < c->nev; id++) {
		const struct trail_revent *ev = trail_reader_event(r, id);
		const struct trail_meta *m;
		struct evclass *k = &c->ev[id];
		int ok = 1;

		if (!ev)
			continue;
		m = &ev->meta;
		k->kind = EV_PLAIN;
		for (uint32_t i = 0; i < m->nfields; i++) {
			const struct trail_field *fl = &m->fields[i];

			ok &= field_ok(fl);
			if (fl->kind == TRAIL_FK_STRING)
				k->kind = EV_CONVERT;
			k->zero += fl->kind == TRAIL_FK_STRING ? 1u
				   : fl->kind == TRAIL_FK_SEQ ? 2u
				   : fl->kind == TRAIL_FK_ARRAY ? (uint32_t)fl->count * fl->size
				   : fl->size;
		}
		if (!ok) { /* a layout no CTF type describes: left out */
			k->kind = EV_NONE;
			continue;
		}
		if (trail_export_is_function(ev))
			k->kind = EV_FUNCTION;
		if (trail_export_is_graph(ev))
			c->graph = 1;
	}
	c->id_entry = c->nev;
	c->id_entry_args = c->nev + 1;
	c->id_exit = c->nev + 2;
	c->id_exit_ret = c->nev + 3;
	c->id_exit_sret = c->nev + 4;
	c->id_exit_uret = c->nev + 5;
	c->id16 = c->nev + 6 <= 0xffff;
	return 0;
}

/* ------------------------------------------------------------- packets */

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8);
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

/* The open packet's header and context, now that its end is known. */
static void packet_close_at(struct ctf *c, struct cstream *s, uint64_t end, uint64_t discarded)
{
	uint8_t *p = s->buf + s->pkt;
	uint64_t bits = (uint64_t)(s->len - s->pkt) * 8;

	put32(p, CTF_MAGIC);
	memcpy(p + 4, c->uuid, 16);
	put32(p + 20, 0);
	put64(p + 24, s->rs->order);
	p += PKT_HDR;
	put64(p, s->begin);
	put64(p + 8, end);
	put64(p + 16, bits);
	put64(p + 24, bits);
	put64(p + 32, s->seq++);
	put64(p + 40, discarded);
	put32(p + 48, s->cpu);
	put32(p + 52, s->rs->pid);
	put32(p + 56, s->rs->tid);
	memset(p + 60, 0, 16);
	memcpy(p + 60, s->rs->comm, strnlen(s->rs->comm, 16));
	s->pkt = NO_PACKET;
}

static void close_packet(struct ctf *c, struct cstream *s)
{
	packet_close_at(c, s, s->last, s->discarded);
	s->snap = s->discarded;
}

/* Room for need more bytes in the stream's buffer. */
static int reserve(struct ctf *c, struct cstream *s, size_t need)
{
	size_t cap = s->cap ? s->cap : BUF_MIN;
	uint8_t *b;

	if (s->len + need <= s->cap)
		return 0;
	while (cap < s->len + need)
		cap *= 2;
	b = realloc(s->buf, cap);
	if (!b)
		return -ENOMEM;
	c->held += cap - s->cap;
	s->buf = b;
	s->cap = cap;
	return 0;
}

static void stream_file(const struct cstream *s, char *name, size_t n)
{
	snprintf(name, n, "stream-%u-%u-%u", s->rs->order, s->rs->pid, s->rs->tid);
}

/* The stream's whole packets to its file; with drop, its buffer freed. */
static int flush(struct ctf *c, struct cstream *s, int drop)
{
	char name[64];
	int fd, err = 0;

	if (s->pkt != NO_PACKET)
		close_packet(c, s);
	stream_file(s, name, sizeof(name));
	if (s->len) {
		fd = openat(c->dirfd, name,
			    O_WRONLY | O_CREAT | O_CLOEXEC | (s->written ? O_APPEND : O_TRUNC), 0666);
		if (fd < 0)
			return fail(c, errno, "cannot write", name);
		err = put_all(fd, s->buf, s->len);
		if (close(fd) && !err)
			err = errno;
		if (err)
			return fail(c, err, "writing", name);
		s->written += s->len;
		s->len = 0;
	}
	if (drop) {
		c->held -= s->cap;
		free(s->buf);
		s->buf = NULL;
		s->cap = 0;
	}
	return 0;
}

static int flush_all(struct ctf *c)
{
	int rc = 0;

	for (size_t i = 0; i < c->nst && !rc; i++)
		if (c->st[i])
			rc = flush(c, c->st[i], 1);
	return rc;
}

/* Does the view show every stream, all the time? Then the file's loss
 * totals are the export's. */
static int whole_view(const struct trail_view *v)
{
	return !v->ntids && !v->npids && !v->ncomms && !v->has_start && !v->has_end;
}

static struct cstream *stream_of(struct ctf *c, const struct trail_rstream *rs)
{
	struct cstream *s;

	if (rs->order >= c->nst)
		return NULL;
	s = c->st[rs->order];
	if (s)
		return s;
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->rs = rs;
	s->pkt = NO_PACKET;
	/* a flight recorder overwrote the stream's oldest events: lost before
	 * its first record (the reader has no LOST record for them) */
	if (rs->final && whole_view(c->src->view))
		s->discarded = rs->overwritten;
	c->st[rs->order] = s;
	return s;
}

/* An empty packet at ts (not before the stream's last) carrying the
 * stream's discarded count. */
static int empty_packet(struct ctf *c, struct cstream *s, uint64_t ts)
{
	int rc = reserve(c, s, PKT_HDR + PKT_CTX);

	if (rc)
		return rc;
	if (ts > s->last)
		s->last = ts;
	s->pkt = s->len;
	s->len += PKT_HDR + PKT_CTX;
	s->begin = s->last;
	close_packet(c, s);
	return 0;
}

/*
 * babeltrace2 gives no count for the events discarded before a stream's
 * first packet: a stream that lost events before its first packet starts
 * with an empty one saying 0, at ts (the start of the trace: the loss was
 * before the first packet, after that).
 */
static int lead_packet(struct ctf *c, struct cstream *s, uint64_t ts)
{
	int rc;

	if (s->seq || !s->discarded)
		return 0;
	if ((rc = reserve(c, s, PKT_HDR + PKT_CTX)))
		return rc;
	if (ts > s->last) /* a stream with no record yet goes on from here */
		s->last = ts;
	s->pkt = s->len;
	s->len += PKT_HDR + PKT_CTX;
	s->begin = ts;
	packet_close_at(c, s, ts, 0);
	return 0;
}

/* The first and last times of the trace, so far. */
static void seen(struct ctf *c, uint64_t ts)
{
	if (!c->any || ts < c->first_ts)
		c->first_ts = ts;
	if (ts > c->last_ts)
		c->last_ts = ts;
	c->any = 1;
}

/*
 * An event of the stream at ts on cpu, of at most need bytes after its
 * header: the packet to hold it (a new one when the CPU changed or the
 * packet is full), its header written. Returns where its payload goes,
 * NULL on failure (-errno in *rc).
 */
static uint8_t *event_begin(struct ctf *c, struct cstream *s, uint32_t id, uint64_t ts,
			    uint32_t cpu, size_t need, int *rc)
{
	uint8_t *p;

	need += 12;
	if (ts < s->last)
		ts = s->last; /* a stream never goes back (a threshold call's entry) */
	seen(c, ts);
	if (s->pkt != NO_PACKET &&
	    (cpu != s->cpu || s->len - s->pkt + need > PKT_MAX)) {
		close_packet(c, s);
		if (s->len >= PKT_MAX && (*rc = flush(c, s, 0)))
			return NULL;
	}
	if (s->pkt == NO_PACKET) {
		if ((*rc = lead_packet(c, s, c->first_ts)) ||
		    (*rc = reserve(c, s, PKT_HDR + PKT_CTX + need)))
			return NULL;
		s->pkt = s->len;
		s->len += PKT_HDR + PKT_CTX;
		s->begin = ts;
		s->cpu = cpu;
	} else if ((*rc = reserve(c, s, need))) {
		return NULL;
	}
	s->last = ts;
	p = s->buf + s->len;
	if (c->id16) {
		uint16_t id16 = (uint16_t)id;

		memcpy(p, &id16, 2);
		p += 2;
	} else {
		put32(p, id);
		p += 4;
	}
	put64(p, ts);
	return p + 8;
}

/* The event ends at end; over the budget, every stream is written out. */
static int event_end(struct ctf *c, struct cstream *s, uint8_t *end)
{
	s->len = (size_t)(end - s->buf);
	return c->held > BUDGET ? flush_all(c) : 0;
}

/* ------------------------------------------------------------ payloads */

static uint8_t *put_str(uint8_t *p, const uint8_t *s, size_t n)
{
	const uint8_t *nul = memchr(s, 0, n);

	if (nul) /* CTF strings end at their first NUL */
		n = (size_t)(nul - s);
	memcpy(p, s, n);
	p[n] = 0;
	return p + n + 1;
}

/* A payload with strings, field by field; fields a short payload lacks
 * are zeros and empty strings. */
static uint8_t *convert(uint8_t *p, const struct trail_record *rec)
{
	const struct trail_meta *m = &rec->event->meta;
	uint32_t off = 0, i = 0;
	struct trail_fval v;

	for (; i < m->nfields; i++) {
		const struct trail_field *fl = &m->fields[i];
		uint16_t k;

		if (!trail_field_at(rec->event, i, rec->payload, rec->len, &off, &v))
			break;
		switch (fl->kind) {
		case TRAIL_FK_STRING:
			p = put_str(p, v.data, v.null ? 0 : v.count);
			break;
		case TRAIL_FK_SEQ:
			k = (uint16_t)v.count;
			memcpy(p, &k, 2);
			p += 2;
			/* fall through */
		default:
			memcpy(p, v.data, (size_t)v.count * fl->size);
			p += (size_t)v.count * fl->size;
		}
	}
	for (; i < m->nfields; i++) {
		const struct trail_field *fl = &m->fields[i];
		size_t z = fl->kind == TRAIL_FK_STRING ? 1
			   : fl->kind == TRAIL_FK_SEQ ? 2
			   : fl->kind == TRAIL_FK_ARRAY ? (size_t)fl->count * fl->size
			   : fl->size;

		memset(p, 0, z);
		p += z;
	}
	return p;
}

static uint8_t *put_name(uint8_t *p, const char *name)
{
	size_t n = name ? strlen(name) : 0;

	memcpy(p, name ? name : "", n);
	p[n] = 0;
	return p + n + 1;
}

/* ftrace:function {ip, parent_ip} with their symbols (the reader's
 * strings: they stay valid) */
static int function_event(struct ctf *c, struct cstream *s, const struct trail_record *rec)
{
	uint32_t pid = rec->stream->pid;
	uint64_t ip, parent;
	const char *a, *b;
	uint8_t *p;
	int rc = 0;

	if (!trail_export_function(rec, &ip, &parent)) /* its class says it is */
		ip = parent = 0;
	a = trail_export_symbol(c->src, pid, ip, rec->ts_raw);
	b = trail_export_symbol(c->src, pid, parent, rec->ts_raw);
	p = event_begin(c, s, rec->event->id, rec->ts_ns, rec->cpu,
			16 + (a ? strlen(a) : 0) + (b ? strlen(b) : 0) + 2, &rc);
	if (!p)
		return rc;
	put64(p, ip);
	put64(p + 8, parent);
	p = put_name(p + 16, a);
	return event_end(c, s, put_name(p, b));
}

/* ------------------------------------------------------------- output */

static int ctf_begin(void *ctx, const struct trail_export_src *src)
{
	struct ctf *c = ctx;
	uint64_t a = src->hdr->session_id, b = src->hdr->created_ns;
	int rc;

	c->src = src;
	if (!(c->types = trail_argtypes_new(src->reader)))
		return -ENOMEM;
	c->dirfd = open(c->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (c->dirfd < 0) {
		snprintf(src->err, src->errlen, "ctf: %s: %s", c->dir, strerror(errno));
		return -errno;
	}
	/* the trace's uuid: the recording's identity, as a version 4 uuid */
	for (int i = 0; i < 8; i++) {
		c->uuid[i] = (uint8_t)(a >> (8 * i));
		c->uuid[8 + i] = (uint8_t)(b >> (8 * i));
	}
	c->uuid[6] = (uint8_t)((c->uuid[6] & 0x0f) | 0x40);
	c->uuid[8] = (uint8_t)((c->uuid[8] & 0x3f) | 0x80);
	c->nst = src->nstreams;
	c->st = calloc(c->nst ? c->nst : 1, sizeof(*c->st));
	if (!c->st)
		return -ENOMEM;
	if ((rc = classify(c)))
		return rc;
	return write_metadata(c);
}

static int ctf_event(void *ctx, const struct trail_record *rec)
{
	struct ctf *c = ctx;
	struct cstream *s = stream_of(c, rec->stream);
	const struct evclass *k;
	uint8_t *p;
	int rc = 0;

	if (!s)
		return -ENOMEM;
	if (rec->type == TRAIL_RT_LOST) {
		/* the packet ends here; the next one counts the loss */
		if (s->pkt != NO_PACKET)
			close_packet(c, s);
		if (rec->ts_ns > s->last)
			s->last = rec->ts_ns;
		seen(c, s->last);
		s->discarded += rec->lost;
		return 0;
	}
	if (rec->type != TRAIL_RT_EVENT || rec->event->id >= c->nev)
		return 0;
	k = &c->ev[rec->event->id];
	switch (k->kind) {
	case EV_PLAIN:
		if (rec->len == rec->event->meta.fixed_len || rec->event->meta.variable) {
			p = event_begin(c, s, rec->event->id, rec->ts_ns, rec->cpu, rec->len, &rc);
			if (!p)
				return rc;
			memcpy(p, rec->payload, rec->len);
			return event_end(c, s, p + rec->len);
		}
		/* a short payload: as one with strings */
		/* fall through */
	case EV_CONVERT:
		p = event_begin(c, s, rec->event->id, rec->ts_ns, rec->cpu, rec->len + k->zero,
				&rc);
		if (!p)
			return rc;
		return event_end(c, s, convert(p, rec));
	case EV_FUNCTION:
		return function_event(c, s, rec);
	default:
		return 0;
	}
}

/* The call's arguments as report shows them, "path=0x55d0c0a01234,
 * flags=42", into c->lb (NUL-terminated); 0 if DWARF does not know them */
static int args_text(struct ctf *c, const struct trail_call *k)
{
	char buf[512];

	lb_init(&c->lb, NULL);
	if (!trail_argtypes_args(c->types, k->stream->pid, k->func, k->ts_raw,
				 trail_argtypes_bare(k->name, buf, sizeof(buf)), k->args, &c->lb))
		return 0;
	/* without the parentheses */
	memmove(c->lb.b, c->lb.b + 1, c->lb.n - 2);
	c->lb.b[c->lb.n - 2] = '\0';
	return 1;
}

static int graph_event(struct ctf *c, struct cstream *s, const struct trail_call *k, int exit)
{
	size_t n = k->name ? strlen(k->name) : 0;
	int args = !exit && (k->flags & TRAIL_CALL_ARGS) && args_text(c, k);
	struct trail_argval rv = {NULL, 'x', k->retval};
	uint32_t id = args ? c->id_entry_args : c->id_entry;
	char buf[512];
	uint8_t *p;
	int ret = 0, rc = 0;

	if (exit && (k->flags & TRAIL_CALL_RETVAL))
		ret = trail_argtypes_retv(c->types, k->stream->pid, k->func, k->ts_raw,
					  trail_argtypes_bare(k->name, buf, sizeof(buf)), k->retval,
					  &rv) != 0; /* void: none */
	if (exit)
		id = !ret ? c->id_exit : rv.kind == 's' ? c->id_exit_sret :
			rv.kind == 'u' ? c->id_exit_uret : c->id_exit_ret;
	p = event_begin(c, s, id, exit ? k->end_ns : k->start_ns, k->cpu,
			8 + n + 1 + 16 + (args ? strlen(c->lb.b) + 1 : 0), &rc);
	if (!p)
		return rc;
	put64(p, k->func);
	p = put_name(p + 8, k->name);
	if (args)
		p = put_name(p, c->lb.b);
	if (exit) {
		/* no duration for a return whose entry the trace lacks */
		put64(p, (k->flags & TRAIL_CALL_NOSTART) ? 0 : k->end_ns - k->start_ns);
		p += 8;
	}
	if (ret) {
		put64(p, rv.v);
		p += 8;
	}
	return event_end(c, s, p);
}

static int ctf_call(void *ctx, const struct trail_call *k)
{
	struct ctf *c = ctx;
	struct cstream *s = stream_of(c, k->stream);
	int rc;

	if (!s)
		return -ENOMEM;
	switch (k->kind) {
	case TRAIL_CALL_ENTRY:
		return graph_event(c, s, k, 0);
	case TRAIL_CALL_EXIT:
		/* a call the view closed (trace end, loss): it did not return */
		if (k->flags & TRAIL_CALL_OPEN)
			return 0;
		return graph_event(c, s, k, 1);
	case TRAIL_CALL_LEAF:
		/* a record-time threshold call is known by its return alone
		 * (what it called was not recorded; its entry time would come
		 * after them) */
		if (!(k->flags & TRAIL_CALL_THRESH) && (rc = graph_event(c, s, k, 0)))
			return rc;
		return graph_event(c, s, k, 1);
	default:
		return 0;
	}
}

static int ctf_end(void *ctx, const struct trail_export_src *src)
{
	struct ctf *c = ctx;
	int whole = whole_view(src->view), rc = 0;

	if (c->dirfd < 0 || !c->st)
		return 0;
	for (size_t i = 0; i < c->nst && !rc; i++) {
		const struct trail_rstream *rs = src->streams[i];
		struct cstream *s = c->st[i];
		uint64_t total = rs->dropped + rs->overwritten;

		if (!s && !(whole && rs->final && total))
			continue;
		if (!s && !(s = stream_of(c, rs)))
			return -ENOMEM;
		if (s->pkt != NO_PACKET)
			close_packet(c, s);
		/* what the file counts lost in this stream and did not place:
		 * after its last record, before the end of the trace */
		if (whole && rs->final && total > s->discarded)
			s->discarded = total;
		if (s->discarded != s->snap)
			rc = lead_packet(c, s, c->first_ts) ?: empty_packet(c, s, c->last_ts);
		if (!rc)
			rc = flush(c, s, 1);
	}
	return rc;
}

static void ctf_free(void *ctx)
{
	struct ctf *c = ctx;

	for (size_t i = 0; c->st && i < c->nst; i++) {
		if (c->st[i])
			free(c->st[i]->buf);
		free(c->st[i]);
	}
	free(c->st);
	free(c->ev);
	if (c->dirfd >= 0)
		close(c->dirfd);
	free(c->dir);
	trail_argtypes_free(c->types);
	free(c);
}

struct trail_output *trail__export_ctf(const struct trail_export_opts *opts)
{
	static const struct trail_output ops = {
		.name = "ctf", .begin = ctf_begin, .event = ctf_event, .call = ctf_call,
		.end = ctf_end, .free = ctf_free,
		/* (record --counters: their records, fields and all, as the
		 * events they are) */
		.counter_records = 1,
	};
	struct ctf *c;

	if (!opts || opts->sz < sizeof(*opts) || !opts->dir) {
		errno = EINVAL;
		return NULL;
	}
	c = trail__output_new(sizeof(*c), &ops);
	if (!c)
		return NULL;
	c->dirfd = -1;
	c->dir = strdup(opts->dir);
	if (!c->dir) {
		free(c);
		return NULL;
	}
	return &c->out;
}
