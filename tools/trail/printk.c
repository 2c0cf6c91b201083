/* SPDX-License-Identifier: MIT */
/*
 * printk.c - `trail record --tp-printk` (a bootconfig's kernel.tp_printk):
 * every event also printed on stderr as text while it is recorded, the
 * way the kernel's tp_printk sends them to its console. Every 100 ms the
 * recorder writes what its buffer holds (trail_recorder_snapshot_file: a
 * flight recorder's, so nothing has left it for the file yet) into a
 * private file, whose records older than 20 ms and newer than the last
 * ones printed are printed (the mount's trace_pipe does the same); at the
 * end, what is left.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "../../src/common/clock.h"
#include "../../src/recorder/recorder.h"
#include "../../src/session/session.h"
#include "textrange.h"
#include "tool.h"

#define PRINTK_PERIOD_NS 100000000ull
#define PRINTK_SETTLE_NS 20000000ull /* (a record this old is committed) */

static struct {
	char *tmp;
	uint64_t mark;
} pk;

static void print_upto(struct trail_recorder *R, uint64_t hi)
{
	if (trail_recorder_snapshot_file(R, pk.tmp))
		return;
	text_range(pk.tmp, pk.mark, hi, 1, stderr, NULL, NULL);
	fflush(stderr);
	unlink(pk.tmp);
	pk.mark = hi;
}

static void tick(struct trail_recorder *R, void *arg)
{
	(void)arg;
	print_upto(R, trail__mono_ns() - PRINTK_SETTLE_NS);
}

int record_printk_start(const struct trail_session *S, struct record_live *live)
{
	const char *dir = getenv("TMPDIR");

	if (!S->tp_printk)
		return 0;
	/* (beside no output: -o /dev/null has no directory to write in) */
	if (asprintf(&pk.tmp, "%s/trail-printk-%d.dat", dir && *dir ? dir : "/tmp", (int)getpid()) <
	    0) {
		pk.tmp = NULL;
		return -1;
	}
	pk.mark = 0;
	live->fn = tick;
	live->arg = NULL;
	live->period_ns = PRINTK_PERIOD_NS;
	return 0;
}

void record_printk_end(struct trail_recorder *R, struct record_live *live)
{
	if (!pk.tmp)
		return;
	print_upto(R, UINT64_MAX);
	live->fn = NULL;
	free(pk.tmp);
	pk.tmp = NULL;
}
