/* SPDX-License-Identifier: MIT */
/*
 * htab.c - the histogram table (htab.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "htab.h"

#define TOP (1ull << 63)

static size_t hdr_bytes(uint32_t copies, uint32_t naux)
{
	size_t n = sizeof(struct trail_htab) + copies * sizeof(struct trail_htab_count) +
		   naux * 8u;

	return (n + 63) & ~(size_t)63;
}

static size_t slot_words(const struct trail_htab *t)
{
	return 2u + t->kwords + t->nvals + t->nextra;
}

uint64_t *trail_htab_aux(struct trail_htab *t)
{
	return (uint64_t *)&t->count[t->copies];
}

static uint64_t *copy_at(const struct trail_htab *t, uint32_t c)
{
	return (uint64_t *)((char *)t + t->hdr_size) + (size_t)c * 2u * t->size * slot_words(t);
}

uint32_t trail_htab_copies(void)
{
	long n = sysconf(_SC_NPROCESSORS_CONF);

	return n < 1 ? 1 : n > 64 ? 64 : (uint32_t)n;
}

size_t trail_htab_bytes(uint32_t size, uint32_t kwords, uint32_t nvals, uint32_t nextra,
			uint32_t naux, uint32_t copies)
{
	if (!size || (size & (size - 1)) || size > (1u << 20) || !kwords ||
	    kwords > TRAIL_HTAB_MAX_KWORDS || nvals > TRAIL_HTAB_MAX_VALS || !copies ||
	    copies > 1024 || nextra > TRAIL_HTAB_MAX_EXTRA || naux > TRAIL_HTAB_MAX_EXTRA)
		return 0;
	return hdr_bytes(copies, naux) +
	       (size_t)copies * 2u * size * (2u + kwords + nvals + nextra) * 8u;
}

void trail_htab_init(void *region, uint32_t size, uint32_t kwords, uint32_t nvals,
		     uint32_t nextra, uint32_t naux, uint32_t copies)
{
	struct trail_htab *t = region;

	t->size = size;
	t->kwords = kwords;
	t->nvals = nvals;
	t->copies = copies;
	t->nextra = (uint16_t)nextra;
	t->naux = (uint16_t)naux;
	t->hdr_size = hdr_bytes(copies, naux);
	/* release: the dimensions before the magic a reader checks */
	__atomic_store_n(&t->magic, TRAIL_HTAB_MAGIC, __ATOMIC_RELEASE);
}

int trail_htab_check(const void *region, size_t n)
{
	const struct trail_htab *t = region;
	size_t need;

	if (n < sizeof(*t) || __atomic_load_n(&t->magic, __ATOMIC_ACQUIRE) != TRAIL_HTAB_MAGIC)
		return -1;
	need = trail_htab_bytes(t->size, t->kwords, t->nvals, t->nextra, t->naux, t->copies);
	if (!need || need > n || t->hdr_size != hdr_bytes(t->copies, t->naux))
		return -1;
	return 0;
}

uint64_t trail_htab_hash(const uint64_t *key, uint32_t kwords)
{
	uint64_t h = 0x9e3779b97f4a7c15ull;

	for (uint32_t i = 0; i < kwords; i++) {
		h ^= key[i];
		h *= 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return h | TOP;
}

/* the key at s equal to key? (words: short keys compare inline) */
static inline int same_key(const uint64_t *s, const uint64_t *key, uint32_t kwords)
{
	uint64_t d = 0;

	if (kwords > 4)
		return !memcmp(s, key, (size_t)kwords * 8u);
	for (uint32_t i = 0; i < kwords; i++)
		d |= s[i] ^ key[i];
	return !d;
}

uint64_t *trail_htab_find(struct trail_htab *t, const uint64_t *key, uint64_t hash)
{
	uint32_t slots = 2u * t->size;
	size_t sw = slot_words(t);

	for (uint32_t c = 0; c < t->copies; c++) {
		uint64_t *base = copy_at(t, c);
		uint32_t i = (uint32_t)hash & (slots - 1);

		for (uint32_t probes = 0; probes < slots; probes++, i = (i + 1) & (slots - 1)) {
			uint64_t *s = base + (size_t)i * sw;
			/* acquire: pairs with the release that published the key */
			uint64_t st = __atomic_load_n(&s[0], __ATOMIC_ACQUIRE);

			if (!st)
				break;
			if (st == hash && same_key(&s[1], key, t->kwords))
				return s + 2 + t->kwords + t->nvals;
		}
	}
	return NULL;
}

uint64_t *trail_htab_update(struct trail_htab *t, uint32_t c, const uint64_t *key,
			    uint64_t hash, const uint64_t *vals)
{
	uint32_t slots = 2u * t->size, i = (uint32_t)hash & (slots - 1);
	size_t sw = slot_words(t);
	uint64_t *base = copy_at(t, c < t->copies ? c : c % t->copies);
	struct trail_htab_count *cnt = &t->count[c < t->copies ? c : c % t->copies];

	for (uint32_t probes = 0; probes < slots; probes++, i = (i + 1) & (slots - 1)) {
		uint64_t *s = base + (size_t)i * sw;
		uint64_t st = __atomic_load_n(&s[0], __ATOMIC_ACQUIRE);

		if (st == 0) {
			/* a new key: room for it? (bounded like the kernel's map) */
			if (__atomic_add_fetch(&cnt->used, 1, __ATOMIC_RELAXED) > t->size) {
				__atomic_fetch_sub(&cnt->used, 1, __ATOMIC_RELAXED);
				break;
			}
			if (!__atomic_compare_exchange_n(&s[0], &st, TRAIL_HTAB_CLAIM, 0,
							 __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
				/* taken meanwhile: look at it again */
				__atomic_fetch_sub(&cnt->used, 1, __ATOMIC_RELAXED);
				i = (i - 1) & (slots - 1);
				probes--;
				continue;
			}
			memcpy(&s[1], key, (size_t)t->kwords * 8u);
			/* release: the key before the state that says it is there */
			__atomic_store_n(&s[0], hash, __ATOMIC_RELEASE);
		} else if (st != hash || !same_key(&s[1], key, t->kwords)) {
			continue; /* another key, or one being claimed: passed over */
		}
		__atomic_fetch_add(&s[1 + t->kwords], 1, __ATOMIC_RELAXED);
		for (uint32_t v = 0; v < t->nvals; v++)
			if (vals[v])
				__atomic_fetch_add(&s[2 + t->kwords + v], vals[v], __ATOMIC_RELAXED);
		return s + 2 + t->kwords + t->nvals;
	}
	__atomic_fetch_add(&cnt->dropped, 1, __ATOMIC_RELAXED);
	return NULL;
}

static uint32_t cmp_kwords;

static int cmp_slot(const void *a, const void *b)
{
	const uint64_t *x = *(const uint64_t *const *)a, *y = *(const uint64_t *const *)b;

	return memcmp(&x[1], &y[1], (size_t)cmp_kwords * 8u);
}

size_t trail_htab_collect_many(const struct trail_htab *const *tabs, size_t ntabs,
			       struct trail_htab_entry *out, uint64_t *keys, size_t max,
			       uint64_t *hits, uint64_t *dropped, uint64_t *more)
{
	const struct trail_htab *t0 = tabs[0];
	size_t total = 0, n = 0, k = 0, kw = (size_t)t0->kwords + t0->nextra;
	const uint64_t **all;

	*hits = *dropped = *more = 0;
	for (size_t q = 0; q < ntabs; q++) {
		total += (size_t)tabs[q]->copies * 2u * tabs[q]->size;
		for (uint32_t c = 0; c < tabs[q]->copies; c++)
			*dropped += __atomic_load_n(&tabs[q]->count[c].dropped, __ATOMIC_RELAXED);
	}
	all = malloc((total ? total : 1) * sizeof(*all));
	if (!all)
		return 0;
	for (size_t q = 0; q < ntabs; q++) {
		const struct trail_htab *t = tabs[q];
		size_t sw = slot_words(t);

		for (uint32_t c = 0; c < t->copies; c++) {
			const uint64_t *base = copy_at(t, c);

			for (size_t i = 0; i < 2u * t->size; i++) {
				const uint64_t *s = base + i * sw;

				/* acquire: pairs with the release that published the key */
				if (__atomic_load_n(&s[0], __ATOMIC_ACQUIRE) & TOP)
					all[n++] = s;
			}
		}
	}
	cmp_kwords = t0->kwords;
	qsort(all, n, sizeof(*all), cmp_slot);
	for (size_t i = 0; i < n; i++) {
		const uint64_t *s = all[i];
		uint64_t h = __atomic_load_n(&s[1 + t0->kwords], __ATOMIC_RELAXED);

		*hits += h;
		if (i && !cmp_slot(&all[i - 1], &all[i])) { /* the same key again */
			if (k && k <= max) {
				out[k - 1].hits += h;
				for (uint32_t v = 0; v < t0->nvals; v++)
					out[k - 1].vals[v] +=
						__atomic_load_n(&s[2 + t0->kwords + v], __ATOMIC_RELAXED);
			}
			continue;
		}
		if (k++ >= max) {
			(*more)++;
			continue;
		}
		memcpy(keys + (k - 1) * kw, &s[1], (size_t)t0->kwords * 8u);
		out[k - 1].key = keys + (k - 1) * kw;
		out[k - 1].extra = NULL;
		if (t0->nextra) {
			uint64_t *x = keys + (k - 1) * kw + t0->kwords;

			for (uint32_t q = 0; q < t0->nextra; q++)
				x[q] = __atomic_load_n(&s[2 + t0->kwords + t0->nvals + q],
						       __ATOMIC_RELAXED);
			out[k - 1].extra = x;
		}
		out[k - 1].hits = h;
		memset(out[k - 1].vals, 0, sizeof(out[k - 1].vals));
		for (uint32_t v = 0; v < t0->nvals; v++)
			out[k - 1].vals[v] = __atomic_load_n(&s[2 + t0->kwords + v], __ATOMIC_RELAXED);
	}
	free(all);
	return k < max ? k : max;
}

size_t trail_htab_collect(const struct trail_htab *t, struct trail_htab_entry *out,
			  uint64_t *keys, size_t max, uint64_t *hits, uint64_t *dropped,
			  uint64_t *more)
{
	return trail_htab_collect_many(&t, 1, out, keys, max, hits, dropped, more);
}
