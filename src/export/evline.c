/* SPDX-License-Identifier: MIT */
/*
 * evline.c - an event record's text as ftrace prints it, shared by
 * report's layouts (text.c, and fgraph.c's comments in the tree): the
 * fields, or a probe event in the kprobe layout.
 */
#include <stdio.h>
#include <string.h>

#include "evline.h"
#include "lbuf.h"

void trail_text_addr(struct lbuf *l, const struct trail_export_src *src, uint32_t pid,
		     uint64_t ip, uint64_t ts)
{
	const char *name = trail_export_symbol(src, pid, ip, ts);

	if (name)
		lb_str(l, name); /* as ftrace: the name, no offset */
	else
		lb_hex(l, (unsigned long long)ip);
}

/* ftrace's %pS: "func+0x10/0x40", or the address */
/* ftrace's %pS: "func+0x10/0x40", or the address, into b (n bytes) */
static size_t sym_text(const struct trail_export_src *src, uint32_t pid, uint64_t ip,
		       uint64_t ts, char *b, size_t n)
{
	uint64_t off = 0, size = 0;
	const char *name = trail_reader_symbol_size(src->reader, pid, ip, ts, &off, &size);
	int k = name ? snprintf(b, n, "%s+0x%llx/0x%llx", name, (unsigned long long)off,
				(unsigned long long)size)
		     : snprintf(b, n, "0x%llx", (unsigned long long)ip);

	return k < 0 ? 0 : (size_t)k < n ? (size_t)k : n - 1;
}

static void put_sym(struct lbuf *l, const struct trail_export_src *src, uint32_t pid,
		    uint64_t ip, uint64_t ts)
{
	char b[512];

	lb_put(l, b, sym_text(src, pid, ip, ts, b, sizeof(b)));
}

struct symctx {
	const struct trail_export_src *src;
	const struct trail_record *rec;
};

/* a probe's symbol-typed argument */
static size_t sym_arg(void *ctx, uint64_t addr, char *b, size_t n)
{
	const struct symctx *c = ctx;

	return sym_text(c->src, c->rec->stream->pid, addr, c->rec->ts_raw, b, n);
}

/* a probe event as ftrace prints it: "(func+0x0/0x40) a=1 b=\"x\"", a
 * return probe "(caller+0x1d/0x80 <- func)" */
static void probe_line(struct lbuf *l, const struct trail_export_src *src,
		       const struct trail_record *rec, int kind)
{
	uint32_t pid = rec->stream->pid;
	struct symctx c = {src, rec};
	uint64_t a[2] = {0, 0};

	if (kind == 3) { /* an eprobe: its arguments only */
		l->n += trail_format_probe_fields(rec->event, rec->payload, rec->len, l->b + l->n,
						  sizeof(l->b) - l->n, sym_arg, &c);
		return;
	}
	memcpy(a, rec->payload, kind == 2 ? 16 : 8);
	lb_put(l, "(", 1);
	if (kind == 2) {
		put_sym(l, src, pid, a[1], rec->ts_raw);
		lb_put(l, " <- ", 4);
		trail_text_addr(l, src, pid, a[0], rec->ts_raw);
	} else {
		put_sym(l, src, pid, a[0], rec->ts_raw);
	}
	lb_put(l, ")", 1);
	if (l->n < sizeof(l->b) - 1)
		l->b[l->n++] = ' ';
	l->n += trail_format_probe_fields(rec->event, rec->payload, rec->len, l->b + l->n,
					  sizeof(l->b) - l->n, sym_arg, &c);
	if (l->n && l->b[l->n - 1] == ' ')
		l->n--; /* no arguments */
}

void trail_text_event(struct lbuf *l, const struct trail_export_src *src,
		      const struct trail_record *rec)
{
	const struct trail_meta *m = &rec->event->meta;
	int probe = trail_probe_event(rec->event);

	lb_str(l, m->provider);
	lb_put(l, ":", 1);
	lb_str(l, m->name);
	lb_put(l, ": ", 2);
	/* the fields in place, as much as the line holds */
	if (!strcmp(m->provider, "ftrace") && !strcmp(m->name, "user_stack") && rec->len >= 2) {
		/* a stacktrace trigger's: ftrace's layout, a frame a line */
		uint16_t n;

		memcpy(&n, rec->payload, 2);
		lb_str(l, "<user stack trace>");
		for (uint32_t i = 0; i < n && 2u + (i + 1) * 8u <= rec->len; i++) {
			uint64_t ip;

			memcpy(&ip, rec->payload + 2 + i * 8, 8);
			lb_str(l, "\n => ");
			put_sym(l, src, rec->stream->pid, ip, rec->ts_raw);
		}
	} else if (!strcmp(m->provider, "ftrace") && !strcmp(m->name, "objtrace") && rec->len >= 32) {
		/* seed 001's layout: "func <-parent object:0x... value:0x..." */
		uint64_t a[4];
		char b[64];

		memcpy(a, rec->payload, 32);
		trail_text_addr(l, src, rec->stream->pid, a[0], rec->ts_raw);
		lb_str(l, " <-");
		trail_text_addr(l, src, rec->stream->pid, a[1], rec->ts_raw);
		snprintf(b, sizeof(b), " object:0x%llx value:0x%llx", (unsigned long long)a[2],
			 (unsigned long long)a[3]);
		lb_str(l, b);
	} else if (!strcmp(m->provider, "mmio") && !strcmp(m->name, "rw") && rec->len >= 34) {
		/* the kernel's mmiotrace line in spirit: R/W, width, address,
		 * file offset, value, the instruction named */
		uint64_t a[4];
		char b[128];

		memcpy(a, rec->payload, 32);
		lb_put(l, "(", 1);
		put_sym(l, src, rec->stream->pid, a[0], rec->ts_raw);
		snprintf(b, sizeof(b), ") %c %u addr=0x%llx off=0x%llx value=0x%llx",
			 rec->payload[33] ? 'W' : 'R', rec->payload[32], (unsigned long long)a[1],
			 (unsigned long long)a[2], (unsigned long long)a[3]);
		lb_str(l, b);
	} else if (!strcmp(m->provider, "mmio") && !strcmp(m->name, "unknown") && rec->len >= 18) {
		/* an access not emulated: where, and the instruction's bytes */
		uint64_t a[2];
		uint16_t n;
		char b[96];

		memcpy(a, rec->payload, 16);
		memcpy(&n, rec->payload + 16, 2);
		lb_put(l, "(", 1);
		put_sym(l, src, rec->stream->pid, a[0], rec->ts_raw);
		snprintf(b, sizeof(b), ") addr=0x%llx insn=", (unsigned long long)a[1]);
		lb_str(l, b);
		for (uint32_t i = 0; i < n && i < 15 && 18u + i < rec->len; i++) {
			snprintf(b, sizeof(b), i ? " %02x" : "%02x", rec->payload[18 + i]);
			lb_str(l, b);
		}
	} else if (!strcmp(m->provider, "timerlat") && !strcmp(m->name, "timerlat") && rec->len >= 20) {
		/* the kernel's timerlat layout (seed 001) */
		uint64_t seq, lat;
		int32_t ctx;
		char b[96];

		memcpy(&seq, rec->payload, 8);
		memcpy(&ctx, rec->payload + 8, 4);
		memcpy(&lat, rec->payload + 12, 8);
		snprintf(b, sizeof(b), "#%llu context %6s timer_latency %9llu ns", (unsigned long long)seq,
			 ctx ? "thread" : "irq", (unsigned long long)lat);
		lb_str(l, b);
	} else if (!strcmp(m->provider, "osnoise") && !strcmp(m->name, "osnoise") && rec->len >= 44) {
		/* the kernel's osnoise layout (seed 001): runtime and noise in
		 * us, % CPU available, the largest gap, the counters */
		uint64_t rt, no, mx, p;
		uint32_t c[5];
		char b[160];

		memcpy(&rt, rec->payload, 8);
		memcpy(&no, rec->payload + 8, 8);
		memcpy(&mx, rec->payload + 16, 8);
		memcpy(c, rec->payload + 24, 20);
		rt /= 1000;
		no /= 1000;
		p = rt ? (rt > no ? rt - no : 0) * 10000000ull / rt : 0;
		snprintf(b, sizeof(b), "%12llu %12llu %3llu.%05llu %12llu %6u %6u %6u %6u %6u",
			 (unsigned long long)rt, (unsigned long long)no, (unsigned long long)(p / 100000),
			 (unsigned long long)(p % 100000), (unsigned long long)(mx / 1000), c[0], c[1], c[2],
			 c[3], c[4]);
		lb_str(l, b);
	} else if (probe && rec->len >= (probe == 2 ? 16u : 8u))
		probe_line(l, src, rec, probe);
	else
		l->n += trail_format_fields(rec->event, rec->payload, rec->len, l->b + l->n,
					    sizeof(l->b) - l->n);
}
