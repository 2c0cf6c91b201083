/* SPDX-License-Identifier: MIT */
/* plugin.c - a shared object with its own events, loaded by dlopener. */
#include <trail/trail.h>

TRAIL_EVENT(plugin, work,
	TRAIL_ARGS(int, round),
	TRAIL_FIELDS(trail_field_int(round)))

void plugin_work(int round)
{
	trail(plugin, work, round);
}
