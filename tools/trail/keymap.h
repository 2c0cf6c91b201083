/* SPDX-License-Identifier: MIT */
/*
 * keymap.h - what trail rv and report --refcount keep per key (keymap.c):
 * an open-addressing table of entries that start with struct keyent,
 * grown by doubling, and the key of a record (a field's value: an
 * integer as it is, a string, sequence or array by its bytes' FNV-1a).
 */
#ifndef TRAIL_TOOL_KEYMAP_H
#define TRAIL_TOOL_KEYMAP_H

#include <stddef.h>
#include <stdint.h>

struct trail_record;

struct keyent {
	uint64_t key;
	int used;
};

struct keymap {
	void *v;      /* cap entries of esize bytes */
	size_t n, cap, esize;
};

/* The entry of key (zeroed but for key and used when new; pointers to
 * entries last until the next new one), NULL when out of memory. */
void *keymap_get(struct keymap *m, uint64_t key);
/* entry i (< cap), or NULL if unused */
void *keymap_at(const struct keymap *m, size_t i);
void keymap_free(struct keymap *m);

/* Field `field` of the record as a key: 0, or -1 (payload too short) */
int keymap_field(const struct trail_record *rec, int field, uint64_t *k);

#endif /* TRAIL_TOOL_KEYMAP_H */
