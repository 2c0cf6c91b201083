/* SPDX-License-Identifier: MIT */
/*
 * synth.c - synthetic events in the process (synth.h): the registered
 * ones, found and written (synthreg.c registers them).
 */
#include <errno.h>
#include <string.h>

#include <trail/trail.h>

#include "record.h"
#include "synth.h"


static struct synth *synths; /* newest first (control only) */
static __thread unsigned chain __attribute__((tls_model("initial-exec")));

int trail__synth_line_def(const char *v, size_t len, struct trail_synth *def, uint8_t *meta,
		    size_t *msize)
{
	char text[1024];
	struct trail_filter_err e;

	if (len >= sizeof(text))
		return -EBADMSG;
	memcpy(text, v, len);
	text[len] = '\0';
	if (trail_synth_parse(text, def, &e))
		return -EBADMSG;
	*msize = trail_synth_meta(def, meta, TRAIL_SYNTH_MAX_META);
	return *msize ? 0 : -EBADMSG;
}

struct synth *trail__synth_registered(const uint8_t *meta, size_t n)
{
	for (struct synth *sy = synths; sy; sy = sy->next)
		if (sy->meta_size == n && !memcmp(sy->meta, meta, n))
			return sy;
	return NULL;
}

struct sfind {
	const char *name;
	struct synth *sy;
};

static int find_line(const char *v, size_t len, void *arg)
{
	struct sfind *f = arg;
	struct trail_synth def;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
	size_t n;

	if (trail__synth_line_def(v, len, &def, meta, &n) || strcmp(def.name, f->name))
		return 0;
	f->sy = trail__synth_registered(meta, n);
	return 1;
}

struct synth *trail__synth_find(const char *spec, const char *name)
{
	struct sfind f = {name, NULL};

	trail__spec_opts(spec, "synth", find_line, &f);
	return f.sy;
}

void trail__synth_push(struct synth *sy)
{
	sy->next = synths;
	synths = sy;
}

const struct trail_synth *trail__synth_def(const struct synth *sy)
{
	return &sy->def;
}

void trail__synth_emit(struct synth *sy, struct writer *w, unsigned d, unsigned s,
		       const uint64_t *vals, const char *const *strs, const uint16_t *slen)
{
	/* acquire: pairs with the release that set the bit (enable_in) */
	uint32_t st = __atomic_load_n(&sy->state, __ATOMIC_ACQUIRE), mask = st & (1u << s);
	uint8_t buf[sy->payload_max + 1];
	uint32_t len, cpu;

	if (!mask || !w || chain >= TRAIL_SYNTH_CHAIN)
		return;
	len = (uint32_t)trail_synth_payload(&sy->def, vals, strs, slen, buf);
	chain++;
	if (st & TRAIL_STATE_EXT) {
		trail__write_ext(&sy->ev, &sy->rt, w, d, mask, buf, len);
	} else {
		uint64_t ts = now_cpu(&cpu);

		write_sessions(&sy->ev, &sy->rt, w, d, mask, buf, len, ts, cpu);
	}
	chain--;
}
