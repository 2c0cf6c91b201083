/* SPDX-License-Identifier: MIT */
/* fhash.c - the site table's writers (under the control lock); see fhash.h. */
#include "fhash.h"

#include <errno.h>
#include <sys/mman.h>

struct htable *trail__htab;

struct hsite *trail__hinsert(uintptr_t a)
{
	struct htable *t = trail__htab;

	for (size_t i = trail__hslot(a, t->cap), n = 0; n < t->cap; i = (i + 1) & (t->cap - 1), n++) {
		struct hsite *h = &t->slot[i];

		if (h->addr == a) {
			if (h->dead) { /* a new object where an old one was */
				h->mask = h->root = h->pmask = h->rpmask = 0;
				h->probes = NULL;
				h->pair = NULL;
				h->patched = 0;
				h->trap = 0;
				__atomic_store_n(&h->dead, 0, __ATOMIC_RELEASE);
			}
			return h;
		}
		if (!h->addr) {
			h->addr = a;
			t->used++;
			return h;
		}
	}
	return NULL;
}

/* Room for `more` sites: a table at most half full, grown by copying the
 * live entries (tombstones are dropped then). Under the control lock. */
int trail__hreserve(size_t more)
{
	struct htable *t = trail__htab, *nt;
	size_t cap = 64, live = 0;

	if (t && (t->used + more) * 2 <= t->cap)
		return 0;
	for (size_t i = 0; t && i < t->cap; i++)
		live += t->slot[i].addr && !t->slot[i].dead;
	while (cap < (live + more) * 2)
		cap *= 2;
	nt = mmap(NULL, sizeof(*nt) + cap * sizeof(nt->slot[0]), PROT_READ | PROT_WRITE,
		  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (nt == MAP_FAILED)
		return -ENOMEM;
	nt->cap = cap;
	for (size_t i = 0; t && i < t->cap; i++) {
		const struct hsite *h = &t->slot[i];

		if (h->addr && !h->dead) {
			size_t k = trail__hslot(h->addr, cap);

			while (nt->slot[k].addr)
				k = (k + 1) & (cap - 1);
			nt->slot[k] = *h;
			nt->used++;
		}
	}
	/* pairs with hfind's acquire: the entries are there before the table */
	__atomic_store_n(&trail__htab, nt, __ATOMIC_RELEASE);
	return 0;
}


uintptr_t (*trail__fsite_step_hook)(uintptr_t site, uintptr_t ip);

uintptr_t trail__fsite_step(uintptr_t site, uintptr_t ip)
{
	uintptr_t (*f)(uintptr_t, uintptr_t) =
		__atomic_load_n(&trail__fsite_step_hook, __ATOMIC_ACQUIRE);

	if (f)
		return f(site, ip);
	return ip >= site && ip < site + TRAIL_ARCH_SITE_SIZE ? site + TRAIL_ARCH_SITE_SIZE : ip;
}

/* for src/arch's trap handler: is addr a live site (a breakpoint there is
 * ours), and where does a thread meeting it mid-poke go on */
uintptr_t trail__arch_site_resume(uintptr_t addr)
{
	const struct hsite *h = trail__hfind(addr);

	if (!h || __atomic_load_n(&h->dead, __ATOMIC_ACQUIRE))
		return 0;
	return trail__fsite_step(addr, addr);
}

int (*trail__insn_trap_hook)(void *uc);

int trail__arch_insn_trap(void *uc)
{
	int (*f)(void *) = __atomic_load_n(&trail__insn_trap_hook, __ATOMIC_ACQUIRE);

	return f ? f(uc) : 0;
}
