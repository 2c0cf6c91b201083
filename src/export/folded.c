/* SPDX-License-Identifier: MIT */
/*
 * folded.c - `trail export --format folded`: the call stacks of a
 * function_graph recording, one line per distinct stack, as flame graph
 * tools read them (flamegraph.pl, inferno, speedscope, difffolded.pl):
 *
 *   prog-4242;prog-4242;main;handle_request;parse_header;parse_int 1830
 *   prog-4242;worker-4243;thread_main;handle_request 250
 *
 * Frames from the bottom: the process (comm-pid), the thread (comm-tid),
 * "[signal handler]" for a handler's calls, then the functions. The value
 * is the self time in nanoseconds of the calls with exactly that stack
 * (--count: how many calls), so the values of a thread add up to the
 * duration of its outermost calls. Stacks come in tree order, siblings
 * sorted by name; stacks with nothing of their own (0) are left out.
 *
 * In names, ';' and whitespace or control bytes become '_': a line is
 * always frames separated by ';', one space, a number.
 *
 * Everything is summed first (stacks.c: memory grows with the distinct
 * stacks), written at the end.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "lbuf.h"
#include "stacks.h"

struct folded {
	struct trail_stacks_output so; /* first: the output, the stacks */
	FILE *f;
	int count;
	char *path; /* the line being built */
	size_t cap;
	size_t *plen; /* by depth: the length of the path through it */
	size_t nplen;
};

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	size_t n = *cap ? *cap : 256;
	void *v;

	if (need <= *cap)
		return 0;
	while (n < need)
		n *= 2;
	v = realloc(*p, n * size);
	if (!v)
		return -ENOMEM;
	*p = v;
	*cap = n;
	return 0;
}

/* The path through node (depth d): its parent's path, ';', its name. */
static int extend(struct folded *o, const struct trail_snode *n, const char *name)
{
	size_t at = n->depth > 1 ? o->plen[n->depth - 1] : 0, len = strlen(name);
	size_t cap = o->nplen;

	if (grow((void **)&o->plen, &cap, (size_t)n->depth + 1, sizeof(*o->plen)) ||
	    grow((void **)&o->path, &o->cap, at + len + 2, 1))
		return -ENOMEM;
	o->nplen = cap;
	if (n->depth > 1)
		o->path[at++] = ';';
	for (size_t i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)name[i];

		o->path[at++] = ch == ';' || ch <= ' ' || ch == 0x7f ? '_' : (char)ch;
	}
	o->plen[n->depth] = at;
	return 0;
}

static int end(void *ctx, const struct trail_export_src *src)
{
	struct folded *o = ctx;
	const struct trail_snode *nodes;
	uint32_t i;
	struct lbuf l;
	int rc = trail__stacks_finish(o->so.s, src);

	if (rc)
		return rc;
	trail__stacks_nodes(o->so.s, &nodes);
	lb_init(&l, o->f);
	for (i = nodes[0].child; i; i = trail__stacks_next(nodes, i, 1)) {
		const struct trail_snode *n = &nodes[i];
		uint64_t v = o->count ? n->calls : n->self_ns;

		if ((rc = extend(o, n, trail__stacks_name(o->so.s, n->name)->text)))
			return rc;
		if (v) {
			lb_put(&l, o->path, o->plen[n->depth]);
			lb_put(&l, " ", 1);
			lb_num(&l, v, 0, ' ');
			lb_end(&l);
		}
	}
	return 0;
}

static void folded_free(void *ctx)
{
	struct folded *o = ctx;

	if (!o)
		return;
	trail__stacks_free(o->so.s);
	free(o->path);
	free(o->plen);
	free(o);
}

struct trail_output *trail__export_folded(const struct trail_export_opts *opts)
{
	static const struct trail_output ops = {
		.name = "folded", .begin = trail__stacks_output_begin,
		.event = trail__stacks_output_event, .call = trail__stacks_output_call, .end = end,
		.free = folded_free,
	};
	struct folded *o;

	o = trail__stacks_output_new(sizeof(*o), &ops, opts);
	if (!o)
		return NULL;
	o->f = opts->out;
	o->count = opts->count;
	return &o->so.out;
}
