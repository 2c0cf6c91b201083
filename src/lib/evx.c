/* SPDX-License-Identifier: MIT */
/*
 * evx.c - a session's extras on an event (evx.h): its filter, compiled
 * here from the spec's text against the event's own fields (the CLI
 * compiled it already, against the formats it could read, for the
 * user's caret; the process binds it to the layout the event really has,
 * which a library loaded later may be the first to show). The record
 * path runs it (record.c's trail__write_ext).
 *
 * Making runs under the control lock, in the control signal handler or
 * at registration: memory comes from mmap, never malloc, and the filter
 * compiler allocates nothing.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "evx.h"

struct want {
	const struct evrt *rt;
	const char *text; /* the filter: after the pattern, up to the line's end */
	size_t len;
};

/* one "@filter PATTERN TEXT" line: the first whose pattern selects rt */
static int filter_line(const char *v, size_t len, void *arg)
{
	struct want *w = arg;
	const char *sp = memchr(v, ' ', len);

	if (!sp || !trail__spec_match1(v, (size_t)(sp - v), w->rt->provider, w->rt->name))
		return 0;
	w->text = sp + 1;
	w->len = len - (size_t)(sp + 1 - v);
	return 1;
}

int trail__evx_make(unsigned s, const char *spec, struct evrt *rt)
{
	struct want want = {.rt = rt};
	struct trail_filter_err e;
	char text[TRAIL_FILTER_MAX_TEXT];
	const char *why;
	struct evx *x;
	size_t size = (sizeof(*x) + 4095) & ~(size_t)4095;

	if (rt->x[s] || !trail__spec_opts(spec, "filter", filter_line, &want))
		return 0;
	if (want.len >= sizeof(text))
		return -EBADMSG;
	memcpy(text, want.text, want.len);
	text[want.len] = '\0';
	x = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (x == MAP_FAILED)
		return -ENOMEM;
	x->size = size;
	if (trail__meta_parse(rt->meta, rt->meta_size, &x->meta, &why) ||
	    trail_filter_compile(text, &x->meta, &x->filter, &e)) {
		munmap(x, size);
		return -EBADMSG;
	}
	/* release: the filter before the pointer; the status word's bits
	 * come after (enable_in) */
	__atomic_store_n(&rt->x[s], x, __ATOMIC_RELEASE);
	return 0;
}

void trail__evx_free(unsigned s, struct evrt *rt)
{
	struct evx *x = rt->x[s];
	unsigned k;

	if (!x)
		return;
	__atomic_store_n(&rt->x[s], NULL, __ATOMIC_RELAXED);
	for (k = 0; k < TRAIL_MAX_SESSIONS && !rt->x[k]; k++)
		;
	if (k == TRAIL_MAX_SESSIONS)
		__atomic_fetch_and(rt->ev->state, ~TRAIL_STATE_EXT, __ATOMIC_RELAXED);
	munmap(x, x->size);
}
