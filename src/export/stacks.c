/* SPDX-License-Identifier: MIT */
/*
 * stacks.c - function_graph calls summed by call stack; see stacks.h.
 *
 * Three tables, each growing with what is distinct, never with the trace:
 *
 *   names   every distinct name once (a copy), by its text; calls find
 *           theirs through a small direct-mapped cache keyed by the
 *           symbol pointer the view gives (or the address, unnamed), so a
 *           call costs no string hashing once its function was seen
 *   nodes   the stacks, an array: a node is created after its parent, so
 *           a walk from the last index down visits children before their
 *           parents (how the totals are summed, without recursion)
 *   index   (parent, name) -> node, open addressing
 *
 * and per stream the path of nodes from its thread's node to the call
 * running now (as deep as the program's calls go).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "formats.h"
#include "stacks.h"

#define PCACHE_SLOTS 4096u

struct pslot {
	const char *ptr; /* the view's name pointer, NULL: unnamed */
	uint64_t func;   /* unnamed: the address */
	uint32_t id;
	uint32_t used;
};

struct spath {
	uint32_t base; /* its thread's (or handler's) node; 0 until first used */
	uint32_t *v;
	size_t n, cap;
};

struct trail_stacks {
	const struct trail_export_src *src;
	struct trail_snode *nodes;
	uint32_t nnodes, capnodes;
	uint32_t *index; /* node + 1, 0 empty */
	size_t index_cap;
	struct trail_sname *names;
	uint64_t *name_hash;
	uint32_t nnames, capnames;
	uint32_t *by_text; /* name id + 1, 0 empty */
	size_t by_text_cap;
	struct pslot *pcache;
	struct spath *paths;
	size_t npaths;
	uint64_t calls, function_records;
};

static uint64_t mix(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	return x ^ (x >> 33);
}

static uint64_t text_hash(const char *t, int kind)
{
	uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)kind;

	while (*t)
		h = (h ^ (unsigned char)*t++) * 0x100000001b3ull;
	return mix(h);
}

/* Doubles a table of indices + 1 (0: empty), placing each entry by its
 * hash. */
static int rehash(uint32_t **tab, size_t *cap, uint32_t n, uint64_t (*hash)(void *, uint32_t),
		  void *arg)
{
	size_t ncap = *cap ? *cap * 2 : 1024;
	uint32_t *t = calloc(ncap, sizeof(*t));

	if (!t)
		return -ENOMEM;
	for (uint32_t i = 0; i < n; i++) {
		size_t k = (size_t)hash(arg, i) & (ncap - 1);

		while (t[k])
			k = (k + 1) & (ncap - 1);
		t[k] = i + 1;
	}
	free(*tab);
	*tab = t;
	*cap = ncap;
	return 0;
}

static uint64_t node_key(uint32_t parent, uint32_t name)
{
	return mix(((uint64_t)parent << 32) | name);
}

static uint64_t node_hash(void *arg, uint32_t i)
{
	struct trail_stacks *s = arg;

	return node_key(s->nodes[i].parent, s->nodes[i].name);
}

static uint64_t name_hash(void *arg, uint32_t i)
{
	struct trail_stacks *s = arg;

	return s->name_hash[i];
}

/* The name of this text and kind: found, or added (a copy). */
static int name_id(struct trail_stacks *s, const char *text, int kind, const char *module,
		   uint32_t *id)
{
	uint64_t h = text_hash(text, kind);
	size_t k, mask;

	if (2 * ((size_t)s->nnames + 1) > s->by_text_cap &&
	    rehash(&s->by_text, &s->by_text_cap, s->nnames, name_hash, s))
		return -ENOMEM;
	mask = s->by_text_cap - 1;
	for (k = (size_t)h & mask; s->by_text[k]; k = (k + 1) & mask) {
		uint32_t i = s->by_text[k] - 1;

		if (s->name_hash[i] == h && s->names[i].kind == kind &&
		    !strcmp(s->names[i].text, text)) {
			*id = i;
			return 0;
		}
	}
	if (s->nnames == s->capnames) {
		uint32_t cap = s->capnames ? s->capnames * 2 : 256;
		struct trail_sname *v = realloc(s->names, cap * sizeof(*v));
		uint64_t *hv;

		if (!v || cap < s->capnames)
			return -ENOMEM;
		s->names = v;
		hv = realloc(s->name_hash, cap * sizeof(*hv));
		if (!hv)
			return -ENOMEM;
		s->name_hash = hv;
		s->capnames = cap;
	}
	s->names[s->nnames].text = strdup(text);
	if (!s->names[s->nnames].text)
		return -ENOMEM;
	s->names[s->nnames].module = module;
	s->names[s->nnames].kind = kind;
	s->name_hash[s->nnames] = h;
	s->by_text[k] = s->nnames + 1;
	*id = s->nnames++;
	return 0;
}

/* The name of a call's function, through the cache by pointer. */
static int func_name(struct trail_stacks *s, const struct trail_call *c, uint32_t *id)
{
	uint64_t key = c->name ? (uint64_t)(uintptr_t)c->name : c->func;
	struct pslot *p = &s->pcache[mix(key) & (PCACHE_SLOTS - 1)];
	char hex[24];
	int rc;

	if (p->used && p->ptr == c->name && (c->name || p->func == c->func)) {
		*id = p->id;
		return 0;
	}
	if (!c->name)
		snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)c->func);
	rc = name_id(s, c->name ? c->name : hex, TRAIL_SNAME_FUNC,
		     trail_reader_module(s->src->reader, c->stream->pid, c->func, c->ts_raw), id);
	if (rc)
		return rc;
	*p = (struct pslot){.ptr = c->name, .func = c->func, .id = *id, .used = 1};
	return 0;
}

/* The node of parent's stack with name on top: found, or added. */
static int child(struct trail_stacks *s, uint32_t parent, uint32_t name, uint32_t *out)
{
	size_t k;
	struct trail_snode *n;

	if (2 * ((size_t)s->nnodes + 1) > s->index_cap &&
	    rehash(&s->index, &s->index_cap, s->nnodes, node_hash, s))
		return -ENOMEM;
	for (k = (size_t)node_key(parent, name) & (s->index_cap - 1); s->index[k];
	     k = (k + 1) & (s->index_cap - 1)) {
		n = &s->nodes[s->index[k] - 1];
		if (n->parent == parent && n->name == name) {
			*out = s->index[k] - 1;
			return 0;
		}
	}
	if (s->nnodes == s->capnodes) {
		uint32_t cap = s->capnodes ? s->capnodes * 2 : 1024;
		struct trail_snode *v;

		if (cap < s->capnodes)
			return -ENOMEM;
		v = realloc(s->nodes, (size_t)cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		s->nodes = v;
		s->capnodes = cap;
	}
	n = &s->nodes[s->nnodes];
	*n = (struct trail_snode){
		.parent = parent, .name = name, .next = s->nodes[parent].child,
		.depth = s->nodes[parent].depth + 1,
	};
	s->nodes[parent].child = s->nnodes;
	s->index[k] = s->nnodes + 1;
	*out = s->nnodes++;
	return 0;
}

struct trail_stacks *trail__stacks_new(void)
{
	struct trail_stacks *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->pcache = calloc(PCACHE_SLOTS, sizeof(*s->pcache));
	if (!s->pcache) {
		free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

void trail__stacks_free(struct trail_stacks *s)
{
	if (!s)
		return;
	for (uint32_t i = 0; i < s->nnames; i++)
		free((char *)s->names[i].text);
	for (size_t i = 0; i < s->npaths; i++)
		free(s->paths[i].v);
	free(s->names);
	free(s->name_hash);
	free(s->by_text);
	free(s->nodes);
	free(s->index);
	free(s->pcache);
	free(s->paths);
	free(s);
}

int trail__stacks_begin(struct trail_stacks *s, const struct trail_export_src *src)
{
	uint32_t id;
	int rc;

	s->src = src;
	s->npaths = src->nstreams;
	s->paths = calloc(s->npaths ? s->npaths : 1, sizeof(*s->paths));
	if (!s->paths)
		return -ENOMEM;
	rc = name_id(s, "all", TRAIL_SNAME_ROOT, NULL, &id);
	if (rc)
		return rc;
	/* the root, node 0: its own parent, not in the index */
	s->nodes = calloc(1024, sizeof(*s->nodes));
	if (!s->nodes)
		return -ENOMEM;
	s->capnodes = 1024;
	s->nnodes = 1;
	s->nodes[0] = (struct trail_snode){.parent = 0, .name = id};
	return 0;
}

/* The node a stream's calls stand on: process, thread, handler level. */
static int stream_base(struct trail_stacks *s, const struct trail_rstream *st, uint32_t *out)
{
	const char *pcomm = st->comm;
	char text[64];
	uint32_t id, node;
	int rc;

	for (size_t i = 0; i < s->src->nprocs; i++)
		if (s->src->procs[i].pid == st->pid && s->src->procs[i].comm[0])
			pcomm = s->src->procs[i].comm;
	snprintf(text, sizeof(text), "%.16s-%u", pcomm, st->pid);
	if ((rc = name_id(s, text, TRAIL_SNAME_PROCESS, NULL, &id)) ||
	    (rc = child(s, 0, id, &node)))
		return rc;
	snprintf(text, sizeof(text), "%.16s-%u", st->comm, st->tid);
	if ((rc = name_id(s, text, TRAIL_SNAME_THREAD, NULL, &id)) ||
	    (rc = child(s, node, id, &node)))
		return rc;
	if (st->level) {
		if (st->level == 1)
			snprintf(text, sizeof(text), "[signal handler]");
		else
			snprintf(text, sizeof(text), "[signal handler %u]", st->level);
		if ((rc = name_id(s, text, TRAIL_SNAME_HANDLER, NULL, &id)) ||
		    (rc = child(s, node, id, &node)))
			return rc;
	}
	*out = node;
	return 0;
}

/* A call of node's stack ended: its time less its children's is its own. */
static void count(struct trail_stacks *s, uint32_t node, const struct trail_call *c,
		  uint64_t child_ns)
{
	uint64_t dur = c->end_ns > c->start_ns ? c->end_ns - c->start_ns : 0;

	s->nodes[node].self_ns += dur > child_ns ? dur - child_ns : 0;
	s->nodes[node].calls++;
	s->calls++;
}

int trail__stacks_call(struct trail_stacks *s, const struct trail_call *c)
{
	struct spath *p;
	uint32_t name, node, top;
	int rc;

	if (c->stream->order >= s->npaths)
		return 0;
	p = &s->paths[c->stream->order];
	if (c->kind == TRAIL_CALL_EXIT) {
		if ((c->flags & TRAIL_CALL_NOSTART) || !p->n)
			return 0;
		count(s, p->v[--p->n], c, c->child_ns);
		return 0;
	}
	if (c->kind != TRAIL_CALL_ENTRY && c->kind != TRAIL_CALL_LEAF)
		return 0;
	if (!p->base && (rc = stream_base(s, c->stream, &p->base)))
		return rc;
	top = p->n && !(c->flags & TRAIL_CALL_THRESH) ? p->v[p->n - 1] : p->base;
	if ((rc = func_name(s, c, &name)) || (rc = child(s, top, name, &node)))
		return rc;
	if (c->kind == TRAIL_CALL_LEAF) { /* nothing shown inside: all its own */
		count(s, node, c, 0);
		return 0;
	}
	if (p->n == p->cap) {
		size_t cap = p->cap ? p->cap * 2 : 64;
		uint32_t *v = realloc(p->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		p->v = v;
		p->cap = cap;
	}
	p->v[p->n++] = node;
	return 0;
}

void trail__stacks_event(struct trail_stacks *s, const struct trail_record *rec)
{
	if (rec->type == TRAIL_RT_EVENT && trail_export_is_function(rec->event))
		s->function_records++;
}

struct sibling {
	uint32_t parent, rank, node;
};

static int by_parent_rank(const void *a, const void *b)
{
	const struct sibling *x = a, *y = b;

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	return x->rank < y->rank ? -1 : x->rank > y->rank;
}

struct ranked {
	const char *text;
	uint32_t id;
};

static int by_text(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	int c = strcmp(x->text, y->text);

	return c ? c : (x->id < y->id ? -1 : x->id > y->id);
}

/* Each node's children relinked in the order of their names' text. */
static int sort_siblings(struct trail_stacks *s)
{
	struct ranked *names = malloc((size_t)s->nnames * sizeof(*names));
	uint32_t *rank = malloc((size_t)s->nnames * sizeof(*rank));
	struct sibling *v = malloc((size_t)s->nnodes * sizeof(*v));
	uint32_t n = s->nnodes - 1;
	int rc = -ENOMEM;

	if (!names || !rank || !v)
		goto out;
	for (uint32_t i = 0; i < s->nnames; i++)
		names[i] = (struct ranked){s->names[i].text, i};
	qsort(names, s->nnames, sizeof(*names), by_text);
	for (uint32_t i = 0; i < s->nnames; i++)
		rank[names[i].id] = i;
	for (uint32_t i = 0; i < n; i++)
		v[i] = (struct sibling){s->nodes[i + 1].parent, rank[s->nodes[i + 1].name], i + 1};
	qsort(v, n, sizeof(*v), by_parent_rank);
	for (uint32_t i = 0; i < s->nnodes; i++)
		s->nodes[i].child = 0;
	for (uint32_t i = n; i-- > 0;) {
		struct trail_snode *c = &s->nodes[v[i].node], *p = &s->nodes[c->parent];

		c->next = p->child;
		p->child = v[i].node;
	}
	rc = 0;
out:
	free(names);
	free(rank);
	free(v);
	return rc;
}

static int has_selection(const struct trail_view *v)
{
	return v->nonly || v->nnotrace || v->ngraph || v->ntids || v->npids || v->ncomms ||
	       v->has_start || v->has_end || v->max_depth || v->thresh_ns;
}

int trail__stacks_finish(struct trail_stacks *s, const struct trail_export_src *src)
{
	const char *tracer = trail_reader_info(src->reader, "tracer");
	int rc;

	if (!s->calls) {
		if (tracer && !strcmp(tracer, "function_graph"))
			snprintf(src->err, src->errlen, "no function_graph calls%s to export",
				 has_selection(src->view) ? " in the selection" : "");
		else if (s->function_records || (tracer && *tracer))
			snprintf(src->err, src->errlen,
				 "recorded with the %s tracer: no call durations to export "
				 "(record with -p function_graph)", tracer && *tracer ? tracer :
				 "function");
		else
			snprintf(src->err, src->errlen, "no function_graph calls to export "
				 "(record with -p function_graph)");
		return -ENODATA;
	}
	if ((rc = sort_siblings(s)))
		return rc;
	for (uint32_t i = 0; i < s->nnodes; i++) {
		s->nodes[i].total_ns = s->nodes[i].self_ns;
		s->nodes[i].total_calls = s->nodes[i].calls;
	}
	for (uint32_t i = s->nnodes; i-- > 1;) {
		struct trail_snode *p = &s->nodes[s->nodes[i].parent];

		p->total_ns += s->nodes[i].total_ns;
		p->total_calls += s->nodes[i].total_calls;
	}
	return 0;
}

uint32_t trail__stacks_nodes(const struct trail_stacks *s, const struct trail_snode **nodes)
{
	*nodes = s->nodes;
	return s->nnodes;
}

const struct trail_sname *trail__stacks_name(const struct trail_stacks *s, uint32_t id)
{
	return &s->names[id];
}

uint32_t trail__stacks_next(const struct trail_snode *nodes, uint32_t i, int into)
{
	if (into && nodes[i].child)
		return nodes[i].child;
	while (i && !nodes[i].next) /* up to the first ancestor with a next */
		i = nodes[i].parent;
	return i ? nodes[i].next : 0;
}

int trail__stacks_output_begin(void *ctx, const struct trail_export_src *src)
{
	return trail__stacks_begin(((struct trail_stacks_output *)ctx)->s, src);
}

int trail__stacks_output_event(void *ctx, const struct trail_record *rec)
{
	trail__stacks_event(((struct trail_stacks_output *)ctx)->s, rec);
	return 0;
}

int trail__stacks_output_call(void *ctx, const struct trail_call *c)
{
	return trail__stacks_call(((struct trail_stacks_output *)ctx)->s, c);
}

void *trail__stacks_output_new(size_t size, const struct trail_output *ops,
			       const struct trail_export_opts *opts)
{
	struct trail_stacks_output *o;

	if (!opts || opts->sz < sizeof(*opts) || !opts->out) {
		errno = EINVAL;
		return NULL;
	}
	o = trail__output_new(size, ops);
	if (!o)
		return NULL;
	o->s = trail__stacks_new();
	if (!o->s) {
		free(o);
		errno = ENOMEM;
		return NULL;
	}
	return o;
}
