/* SPDX-License-Identifier: MIT */
/*
 * evx.h - what a session does with an event besides recording every hit:
 * its filter (record -f, the kernel's grammar: filter.h), evaluated in
 * the record path before anything is reserved, so a rejected event costs
 * no buffer. Per session: two recordings of one process keep their own.
 *
 * An event some session filters has TRAIL_STATE_EXT in its status word
 * and the session's struct evx in rt->x[s]; the record path then goes
 * the out-of-line way (record.c's trail__write_ext). The extras are made when the
 * session joins (or the event registers later, from a dlopen'ed library)
 * and unmapped when it leaves, after the grace period: a thread that saw
 * the session's bit has left the record path by then.
 */
#ifndef TRAIL_LIB_EVX_H
#define TRAIL_LIB_EVX_H

#include "../common/filter.h"
#include "internal.h"

struct evx {
	size_t size; /* bytes mapped */
	struct trail_filter filter;
	/* scratch for the join: the event's fields, parsed */
	struct trail_meta meta;
};

/* Session s's extras for rt from its spec ("@filter PATTERN TEXT", the
 * first line whose pattern selects rt), into rt->x[s]: 0 (none wanted,
 * or made), -EBADMSG (the filter does not compile for rt's fields: then
 * nothing is made), -ENOMEM. */
HIDDEN int trail__evx_make(unsigned s, const char *spec, struct evrt *rt);
/* rt->x[s] unmapped (NULL: nothing), and rt's EXT bit cleared when no
 * session has extras left. After the grace period, or before the bit
 * was ever set. */
HIDDEN void trail__evx_free(unsigned s, struct evrt *rt);

#endif /* TRAIL_LIB_EVX_H */
