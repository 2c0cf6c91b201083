/* SPDX-License-Identifier: MIT */
/*
 * histview.h - a histogram's entries shown in the kernel's hist file
 * format (histogram.rst): "{ key: value } hitcount: N  val: N" lines in
 * the spec's sort order, then Totals (Hits, Entries, Dropped); .log2 and
 * .buckets keys get a bar. One printer for every source: a trace file's
 * records (trail hist -i), the tables hist triggers kept in the
 * processes (saved in the file, or live: trail hist -P).
 */
#ifndef TRAIL_TOOLS_HISTVIEW_H
#define TRAIL_TOOLS_HISTVIEW_H

#include <stdint.h>
#include <stdio.h>

#include "../../src/common/hist.h"
#include "../../src/common/htab.h"

struct histview {
	const char *title;              /* "SYS:EVENT" shown above, or NULL */
	struct trail_hist_spec h;
	struct trail_hist_keyer k;
	struct trail_htab_entry *e;     /* sorted by histview_print */
	size_t n;
	const uint64_t *aux;            /* the table's aux words (NULL: none) */
	uint64_t hits, dropped;
	/* names: .sym keys' symbols, .execname's commands (NULL: unknown) */
	const char *(*sym)(void *ctx, uint32_t pid, uint64_t addr, uint64_t *off);
	const char *(*comm)(void *ctx, uint32_t pid);
	void *ctx;
};

void histview_print(FILE *out, struct histview *v);

#endif
