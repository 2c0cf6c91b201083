/* SPDX-License-Identifier: MIT */
/*
 * htab.h - the table a histogram aggregates into: lock-free, in one flat
 * region (offsets, no pointers: it can live in shared memory that the
 * traced processes write and the recorder reads), bounded like the
 * kernel's tracing_map.
 *
 * The region holds `copies` tables (one per CPU, say: a writer picks
 * the copy of the CPU it runs on, so two threads on two CPUs do not
 * fight over one cache line); each has 2 * size slots for at most size
 * entries (the kernel's sizing: probes stay short). A slot is
 *
 *   u64 state   0: empty; CLAIM: a writer is filling the key in; else
 *               the key's hash with the top bit set: published
 *   u64 key[kwords], u64 hits, u64 vals[nvals], u64 extra[nextra]
 *
 * (extra: words the user keeps per entry, hist.h's variables; the table
 * has naux more words of its own, after its header.)
 *
 * An update finds the key's slot by linear probing from its hash and adds
 * with atomic adds. A new key claims an empty slot (CAS), writes the key,
 * publishes it (release). A writer never waits: a slot being claimed by
 * someone else (another thread, or the thread a signal handler
 * interrupted) is passed over, so the same key may be published twice;
 * readers merge equal keys (trail_htab_collect). An update that finds the
 * table full (size entries in its copy) is counted in dropped. Nothing
 * allocates; updates are async-signal-safe.
 */
#ifndef TRAIL_COMMON_HTAB_H
#define TRAIL_COMMON_HTAB_H

#include <stddef.h>
#include <stdint.h>

#define TRAIL_HTAB_MAGIC 0x42415448u /* "HTAB" */
#define TRAIL_HTAB_MAX_VALS 4
#define TRAIL_HTAB_MAX_KWORDS 128 /* key bytes / 8 */
#define TRAIL_HTAB_CLAIM 1ull

struct trail_htab {
	uint32_t magic;
	uint32_t size;   /* entries at most per copy (a power of two) */
	uint32_t kwords; /* key: 8-byte words */
	uint32_t nvals;
	uint32_t copies;
	uint16_t nextra, naux;
	uint64_t hdr_size; /* bytes before the first copy (the aux words end
			    * there) */
	/* per copy, written by updaters: entries used, updates dropped */
	struct trail_htab_count {
		uint64_t used, dropped;
		uint64_t pad[6]; /* a cache line each */
	} count[];
};

/* The copies a table has on this machine: one per CPU, 64 at most. */
uint32_t trail_htab_copies(void);

#define TRAIL_HTAB_MAX_EXTRA 4096

/* Bytes of a region for these dimensions (0: out of range). */
size_t trail_htab_bytes(uint32_t size, uint32_t kwords, uint32_t nvals, uint32_t nextra,
			uint32_t naux, uint32_t copies);
/* Lay a table out in region (bytes from trail_htab_bytes, zeroed). */
void trail_htab_init(void *region, uint32_t size, uint32_t kwords, uint32_t nvals,
		     uint32_t nextra, uint32_t naux, uint32_t copies);
/* The table's aux words. */
uint64_t *trail_htab_aux(struct trail_htab *t);
/* Is region (n bytes, untrusted: another process writes it) a table
 * whose parts all fit? 0 or -1. */
int trail_htab_check(const void *region, size_t n);

/* Count one hit of key (kwords words, hash its trail_htab_hash) in copy
 * c, adding vals[0 .. nvals). The entry's extra words, or NULL if
 * dropped (the copy is full). */
uint64_t *trail_htab_update(struct trail_htab *t, uint32_t c, const uint64_t *key,
			    uint64_t hash, const uint64_t *vals);
/* The extra words of key's entry (the first published one, any copy), or
 * NULL: no such entry. */
uint64_t *trail_htab_find(struct trail_htab *t, const uint64_t *key, uint64_t hash);

/* A key's hash (never 0 or CLAIM once published: the top bit is set). */
uint64_t trail_htab_hash(const uint64_t *key, uint32_t kwords);

/* One merged entry, for readers. */
struct trail_htab_entry {
	const uint64_t *key;
	uint64_t hits;
	uint64_t vals[TRAIL_HTAB_MAX_VALS];
	const uint64_t *extra; /* nextra words (NULL: none): the first slot's
				* of the key */
};

/*
 * The table's entries, equal keys merged across copies and duplicate
 * slots, into out (at most max); their number (entries beyond max are
 * counted in *more). Totals: hits in *hits, dropped updates in *dropped.
 * keys must hold max * (kwords + nextra) words (the entries' key and
 * extra point there).
 * A reader may run while writers update: it sees each counter at some
 * moment, never a half-written key (slots are read once published).
 */
size_t trail_htab_collect(const struct trail_htab *t, struct trail_htab_entry *out,
			  uint64_t *keys, size_t max, uint64_t *hits, uint64_t *dropped,
			  uint64_t *more);

/* trail_htab_collect over several tables of the same dimensions (made
 * by processes at the same moment for one histogram), merged. */
size_t trail_htab_collect_many(const struct trail_htab *const *tabs, size_t ntabs,
			       struct trail_htab_entry *out, uint64_t *keys, size_t max,
			       uint64_t *hits, uint64_t *dropped, uint64_t *more);

#endif /* TRAIL_COMMON_HTAB_H */
