/* SPDX-License-Identifier: MIT */
/*
 * multi-main.c - stands in for libtrail: trail__register records the
 * descriptor list each object's constructor hands over, trail__write the
 * last event. main() then checks that the program (main, multi-a, multi-b)
 * and libmulti.so each registered their own list, that every TU's
 * descriptor of multi:shared is in its object's list exactly once, and that
 * the status words are separate. Exit status 0 when all holds; otherwise
 * the first broken expectation on stderr.
 */
#include <stdio.h>
#include <string.h>

#include "multi.h"

#define MAXOBJ 8
static struct {
	struct trail_event **start, **stop;
} objs[MAXOBJ];
static int nobjs, nregs;
static struct trail_event *last_ev;
static int last_who, writes;

void trail__register(struct trail_event **start, struct trail_event **stop)
{
	nregs++;
	for (int i = 0; i < nobjs; i++)
		if (objs[i].start == start)
			return;
	if (nobjs < MAXOBJ) {
		objs[nobjs].start = start;
		objs[nobjs].stop = stop;
		nobjs++;
	}
}

void trail__write(struct trail_event *ev, const void *payload, uint32_t len)
{
	writes++;
	last_ev = ev;
	last_who = -1;
	if (len == sizeof(int))
		memcpy(&last_who, payload, sizeof(int));
}

#define EXPECT(c)                                                             \
	do {                                                                  \
		if (!(c)) {                                                   \
			fprintf(stderr, "multi-main.c:%d: %s\n", __LINE__, #c); \
			return 1;                                             \
		}                                                             \
	} while (0)

/* How often an object's list holds a descriptor with this status word. */
static int listed(int obj, const uint32_t *state, int *nulls)
{
	int n = 0;

	*nulls = 0;
	for (struct trail_event **p = objs[obj].start; p < objs[obj].stop; p++) {
		if (!*p)
			++*nulls;
		else if ((*p)->state == state)
			n++;
	}
	return n;
}

/* How often an object's list holds event NAME; every entry must be NULL or
 * a well-formed descriptor (else -1). */
static int named(int obj, const char *name)
{
	int n = 0;

	for (struct trail_event **p = objs[obj].start; p < objs[obj].stop; p++) {
		const char *prov;

		if (!*p)
			continue;
		if ((*p)->abi != TRAIL_EVENT_ABI ||
		    (*p)->size != sizeof(struct trail_event) || !(*p)->meta ||
		    ((const struct trail_meta_hdr *)(*p)->meta)->magic !=
			    TRAIL_META_MAGIC)
			return -1;
		prov = (const char *)(*p)->meta + sizeof(struct trail_meta_hdr);
		n += !strcmp(prov, "multi") &&
		     !strcmp(prov + strlen(prov) + 1, name);
	}
	return n;
}

static int obj_of(struct trail_event **start)
{
	for (int i = 0; i < nobjs; i++)
		if (objs[i].start == start)
			return i;
	return -1;
}

int main(void)
{
	uint32_t *sa = multi_a_state(), *sb = multi_b_state();
	uint32_t *sl = multi_lib_state();
	int exe = obj_of(__start_trail_events), lib = -1, nulls;

	/* one list per object: the program's and the library's */
	EXPECT(nobjs == 2);
	EXPECT(nregs >= 2);
	EXPECT(exe >= 0);
	lib = 1 - exe;
	EXPECT(objs[exe].stop == __stop_trail_events);

	/* every TU has its own status word */
	EXPECT(sa != sb && sa != sl && sb != sl);

	/* each TU's descriptor, once, in its own object's list */
	EXPECT(listed(exe, sa, &nulls) == 1);
	EXPECT(nulls >= 1);
	EXPECT(listed(exe, sb, &nulls) == 1);
	EXPECT(listed(exe, sl, &nulls) == 0);
	EXPECT(listed(lib, sl, &nulls) == 1);
	EXPECT(nulls >= 1);
	EXPECT(listed(lib, sa, &nulls) == 0);
	EXPECT(named(exe, "shared") == 2);
	EXPECT(named(exe, "only_b") == 1);
	EXPECT(named(lib, "shared") == 1);
	EXPECT(named(lib, "only_b") == 0);

	/* all off; turning on one TU's word turns on only its call sites */
	multi_a(1);
	multi_b(2);
	multi_lib(3);
	EXPECT(writes == 0);
	*sa = 1;
	multi_a(1);
	EXPECT(writes == 1 && last_ev && last_ev->state == sa && last_who == 1);
	multi_b(2);
	multi_lib(3);
	EXPECT(writes == 1);
	*sa = 0;
	*sb = 1;
	multi_b(2);
	EXPECT(writes == 2 && last_ev->state == sb && last_who == 2);
	*sb = 0;
	*sl = 1;
	multi_lib(3); /* the library's weak trail__write binds to ours */
	EXPECT(writes == 3 && last_ev->state == sl && last_who == 3);
	return 0;
}
