/* SPDX-License-Identifier: MIT */
/*
 * synthreg.c - a session's synthetic events registered when it joins
 * (synth.h): under the control lock (in the control signal handler),
 * memory from mmap, the parser allocates nothing. Once registered an
 * event stays, as probe events do (a later session with the same
 * definition takes it again). An event source (internal.h): the runtime
 * reaches it through its entry in the trail_sources section.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <trail/trail.h>

#include "synth.h"

struct sjoin {
	int err;
};

static int synth_line(const char *v, size_t len, void *arg)
{
	struct sjoin *j = arg;
	struct synth *sy;
	struct trail_synth def;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
	size_t n;

	if ((j->err = trail__synth_line_def(v, len, &def, meta, &n)))
		return 1;
	if (trail__synth_registered(meta, n))
		return 0;
	sy = mmap(NULL, sizeof(*sy), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (sy == MAP_FAILED) {
		j->err = -ENOMEM;
		return 1;
	}
	sy->def = def;
	memcpy(sy->meta, meta, n);
	sy->meta_size = (uint32_t)n;
	sy->payload_max = (uint32_t)trail_synth_payload_max(&def);
	sy->ev.abi = TRAIL_EVENT_ABI;
	sy->ev.size = sizeof(sy->ev);
	sy->ev.state = &sy->state;
	sy->ev.meta = sy->meta;
	sy->evp[0] = &sy->ev;
	trail__register_dyn(&sy->dso, &sy->rt, sy->evp);
	trail__synth_push(sy);
	return 0;
}

static int check_line(const char *v, size_t len, void *arg)
{
	struct trail_synth def;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
	size_t n;

	return (*(int *)arg = trail__synth_line_def(v, len, &def, meta, &n)) != 0;
}

static int synth_define(unsigned s, struct psess *ps)
{
	struct sjoin j = {0};
	int bad = 0;
	(void)s;

	/* every definition first: a bad one registers none */
	trail__spec_opts(ps->spec, "synth", check_line, &bad);
	if (bad)
		return bad;
	trail__spec_opts(ps->spec, "synth", synth_line, &j);
	return j.err;
}

/* (in the section, not set by a constructor: a session may join from
 * libtrail's own constructor, before others) */
static const struct trail_source synth_source = {.name = "synth", .define = synth_define};
TRAIL_SOURCE(synth_source);
