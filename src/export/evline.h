/* SPDX-License-Identifier: MIT */
/*
 * evline.h - an event record's text as ftrace prints it (evline.c), for
 * report's layouts.
 */
#ifndef TRAIL_EXPORT_EVLINE_H
#define TRAIL_EXPORT_EVLINE_H

#include <stdint.h>

#include "output.h"

struct lbuf;

/* "SYS:EVENT: fields" of a record (a probe event in the kprobe layout,
 * "(func+0x0/0x40) a=1", a return probe "(caller+0x1d/0x80 <- func)"),
 * into l (lbuf.h). */
void trail_text_event(struct lbuf *l, const struct trail_export_src *src,
		      const struct trail_record *rec);
/* A function's name as ftrace prints it (no offset), else the address. */
void trail_text_addr(struct lbuf *l, const struct trail_export_src *src, uint32_t pid,
		     uint64_t ip, uint64_t ts);

#endif /* TRAIL_EXPORT_EVLINE_H */
