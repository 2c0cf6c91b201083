/* SPDX-License-Identifier: MIT */
/* keymap.c - keymap.h's table and record keys. */
#include "keymap.h"

#include <stdlib.h>
#include <string.h>

#include "../../src/tracefile/reader.h"

static struct keyent *ent(const struct keymap *m, void *v, size_t i)
{
	return (struct keyent *)((char *)v + i * m->esize);
}

void *keymap_get(struct keymap *m, uint64_t key)
{
	size_t i;

	if (2 * (m->n + 1) > m->cap) {
		size_t nc = m->cap ? 2 * m->cap : 256;
		void *nv = calloc(nc, m->esize);

		if (!nv)
			return NULL;
		for (size_t k = 0; k < m->cap; k++)
			if (ent(m, m->v, k)->used) {
				for (i = ent(m, m->v, k)->key * 0x9e3779b97f4a7c15ull % nc; ent(m, nv, i)->used;
				     i = (i + 1) % nc)
					;
				memcpy(ent(m, nv, i), ent(m, m->v, k), m->esize);
			}
		free(m->v);
		m->v = nv;
		m->cap = nc;
	}
	for (i = key * 0x9e3779b97f4a7c15ull % m->cap; ent(m, m->v, i)->used; i = (i + 1) % m->cap)
		if (ent(m, m->v, i)->key == key)
			return ent(m, m->v, i);
	memset(ent(m, m->v, i), 0, m->esize);
	ent(m, m->v, i)->key = key;
	ent(m, m->v, i)->used = 1;
	m->n++;
	return ent(m, m->v, i);
}

void *keymap_at(const struct keymap *m, size_t i)
{
	return i < m->cap && ent(m, m->v, i)->used ? ent(m, m->v, i) : NULL;
}

void keymap_free(struct keymap *m)
{
	free(m->v);
	m->v = NULL;
	m->n = m->cap = 0;
}

int keymap_field(const struct trail_record *rec, int field, uint64_t *k)
{
	uint32_t off = 0;
	struct trail_fval v;

	for (int i = 0; i <= field; i++)
		if (!trail_field_at(rec->event, (uint32_t)i, rec->payload, rec->len, &off, &v))
			return -1;
	if (v.f->kind == TRAIL_FK_STRING || v.f->kind == TRAIL_FK_SEQ || v.f->kind == TRAIL_FK_ARRAY) {
		uint64_t h = 1469598103934665603ull;
		size_t n = (size_t)v.count * (v.f->kind == TRAIL_FK_STRING ? 1 : v.f->size);

		for (size_t j = 0; j < n; j++)
			h = (h ^ v.data[j]) * 1099511628211ull;
		*k = h;
	} else {
		*k = trail_fval_u64(&v, 0);
	}
	return 0;
}
