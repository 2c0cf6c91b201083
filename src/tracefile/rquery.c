/* SPDX-License-Identifier: MIT */
/*
 * rquery.c - what an open reader answers (reader.h): its header, tables
 * of events, processes, streams and histograms, accounting, and the
 * symbol and module an address of a process falls in.
 */
#include <stdlib.h>
#include <string.h>

#include "../common/symrule.h"
#include "rinternal.h"

const struct trail_file_hdr *trail_reader_header(const struct trail_reader *r)
{
	return &r->hdr;
}

size_t trail_reader_hists(const struct trail_reader *r, const struct trail_rhist **out)
{
	*out = r->hists;
	return r->nhists;
}

size_t trail_reader_streams(const struct trail_reader *r,
			    const struct trail_rstream *const **out)
{
	*out = (const struct trail_rstream *const *)r->streams;
	return r->nstreams;
}

size_t trail_reader_procs(const struct trail_reader *r, const struct trail_rproc **out)
{
	*out = r->procs;
	return r->nprocs;
}

const struct trail_revent *trail_reader_event(const struct trail_reader *r, uint32_t id)
{
	return id < r->nevents_cap ? r->events[id] : NULL;
}

uint32_t trail_reader_event_ids(const struct trail_reader *r)
{
	return r->nevents_cap;
}

const char *trail_reader_info(const struct trail_reader *r, const char *key)
{
	static char val[1024];
	size_t kl = strlen(key);

	for (const char *p = r->info; p && *p;) {
		const char *nl = strchr(p, '\n');
		size_t len = nl ? (size_t)(nl - p) : strlen(p);

		if (len > kl && !strncmp(p, key, kl) && p[kl] == '=') {
			size_t vl = len - kl - 1;

			if (vl >= sizeof(val))
				vl = sizeof(val) - 1;
			memcpy(val, p + kl + 1, vl);
			val[vl] = '\0';
			return val;
		}
		p += len + (nl ? 1 : 0);
	}
	return NULL;
}

int trail_reader_complete(const struct trail_reader *r)
{
	return r->complete;
}

uint64_t trail_reader_nostream_lost(const struct trail_reader *r)
{
	return r->nostream_lost;
}

uint64_t trail_reader_gone_lost(const struct trail_reader *r, uint64_t *streams)
{
	if (streams)
		*streams = r->gone_streams;
	return r->gone_lost;
}

uint64_t trail_reader_graph_unhooked(const struct trail_reader *r)
{
	return r->graph_unhooked;
}

uint64_t trail_reader_damaged_events(const struct trail_reader *r)
{
	return r->damaged_events;
}

size_t trail_reader_errors(const struct trail_reader *r, const char *const **msgs)
{
	*msgs = (const char *const *)r->errs;
	return r->nerrs;
}

const char *trail_reader_symbol(const struct trail_reader *r, uint32_t pid,
				uint64_t ip, uint64_t ts_raw, uint64_t *off)
{
	return trail_reader_symbol_span(r, pid, ip, ts_raw, off, NULL);
}

static const char *sym_lookup(const struct trail_reader *r, uint32_t pid, uint64_t ip,
			      uint64_t ts_raw, uint64_t *off, uint64_t *until, uint64_t *size,
			      uint32_t *flags);

const char *trail_reader_symbol_span(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				     uint64_t ts_raw, uint64_t *off, uint64_t *until)
{
	return sym_lookup(r, pid, ip, ts_raw, off, until, NULL, NULL);
}

const char *trail_reader_symbol_size(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				     uint64_t ts_raw, uint64_t *off, uint64_t *size)
{
	return sym_lookup(r, pid, ip, ts_raw, off, NULL, size, NULL);
}

uint32_t trail_reader_symbol_flags(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				   uint64_t ts_raw)
{
	uint32_t flags = 0;

	sym_lookup(r, pid, ip, ts_raw, NULL, NULL, NULL, &flags);
	return flags;
}

static const char *sym_lookup(const struct trail_reader *r, uint32_t pid, uint64_t ip,
			      uint64_t ts_raw, uint64_t *off, uint64_t *until, uint64_t *size,
			      uint32_t *flags)
{
	if (until)
		*until = UINT64_MAX;
	/* in load order, the first not unloaded by ts: objects loaded one
	 * after the other at the same addresses each get their events */
	for (size_t m = 0; m < r->nmods; m++) {
		const struct rmodule *mod = &r->mods[m];
		const struct rsymbols *t = NULL;
		uint64_t a;
		size_t lo = 0, hi;

		if (mod->pid != pid || ip < mod->base || ts_raw >= mod->gone ||
		    (mod->hi > mod->lo && (ip < mod->lo || ip >= mod->hi)))
			continue;
		/* the answer holds until an object it looked at is unloaded */
		if (until && mod->gone < *until)
			*until = mod->gone;
		for (size_t k = 0; k < r->nsymtabs; k++)
			if (r->symtabs[k].id == mod->symbols)
				t = &r->symtabs[k];
		if (!t || !t->n)
			continue;
		a = ip - mod->base;
		hi = t->n;
		while (lo < hi) { /* lo = symbols starting at or below a */
			size_t mid = lo + (hi - lo) / 2;

			if (t->syms[mid].addr <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo && trail__symrule_covers(t->syms[lo - 1].addr, t->syms[lo - 1].size, a)) {
			if (off)
				*off = a - t->syms[lo - 1].addr;
			if (size)
				*size = t->syms[lo - 1].size;
			if (flags)
				*flags = t->syms[lo - 1].flags;
			return t->names + t->syms[lo - 1].name;
		}
	}
	return NULL;
}

const char *trail_reader_module(const struct trail_reader *r, uint32_t pid, uint64_t ip,
				uint64_t ts_raw)
{
	const char *loose = NULL;

	/* as trail_reader_symbol() looks: an object with known segments
	 * holding ip, else the first one based below it */
	for (size_t m = 0; m < r->nmods; m++) {
		const struct rmodule *mod = &r->mods[m];

		if (mod->pid != pid || ip < mod->base || ts_raw >= mod->gone)
			continue;
		if (mod->hi > mod->lo && ip >= mod->lo && ip < mod->hi)
			return mod->path;
		if (mod->hi <= mod->lo && !loose)
			loose = mod->path;
	}
	return loose;
}

