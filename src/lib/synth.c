/* SPDX-License-Identifier: MIT */
/*
 * synth.c - synthetic events in the process (synth.h). Made under the
 * control lock (in the control signal handler): memory from mmap, the
 * parser allocates nothing. Once registered an event stays, as probe
 * events do (a later session with the same definition takes it again).
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include <trail/trail.h>

#include "record.h"
#include "synth.h"

struct synth {
	struct trail_event ev;
	uint32_t state;
	struct evrt rt;
	struct dso dso;
	struct trail_event *evp[1];
	struct trail_synth def;
	uint32_t meta_size;
	uint32_t payload_max;
	struct synth *next;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
};

static struct synth *synths; /* newest first (control only) */
static __thread unsigned chain __attribute__((tls_model("initial-exec")));

/* the spec line's definition, its description */
static int line_def(const char *v, size_t len, struct trail_synth *def, uint8_t *meta,
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

static struct synth *registered(const uint8_t *meta, size_t n)
{
	for (struct synth *sy = synths; sy; sy = sy->next)
		if (sy->meta_size == n && !memcmp(sy->meta, meta, n))
			return sy;
	return NULL;
}

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

	if ((j->err = line_def(v, len, &def, meta, &n)))
		return 1;
	if (registered(meta, n))
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
	sy->next = synths;
	synths = sy;
	return 0;
}

static int check_line(const char *v, size_t len, void *arg)
{
	struct trail_synth def;
	uint8_t meta[TRAIL_SYNTH_MAX_META];
	size_t n;

	return (*(int *)arg = line_def(v, len, &def, meta, &n)) != 0;
}

int trail__synth_join(const char *spec)
{
	struct sjoin j = {0};
	int bad = 0;

	/* every definition first: a bad one registers none */
	trail__spec_opts(spec, "synth", check_line, &bad);
	if (bad)
		return bad;
	trail__spec_opts(spec, "synth", synth_line, &j);
	return j.err;
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

	if (line_def(v, len, &def, meta, &n) || strcmp(def.name, f->name))
		return 0;
	f->sy = registered(meta, n);
	return 1;
}

struct synth *trail__synth_find(const char *spec, const char *name)
{
	struct sfind f = {name, NULL};

	trail__spec_opts(spec, "synth", find_line, &f);
	return f.sy;
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
