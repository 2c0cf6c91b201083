/* SPDX-License-Identifier: MIT */
/* formats.c - the export formats by name; see formats.h. */
#include <string.h>

#include "formats.h"

static const struct trail_format formats[] = {
	{"text", "ftrace's text, as trail report prints it", 0, 0, 0, trail__export_text},
	{"ctf", "CTF 1.8 trace directory (babeltrace2, Trace Compass)", 1, 1, 0, trail__export_ctf},
	{"perfetto", "Perfetto's protobuf trace (ui.perfetto.dev)", 0, 1, 0, trail__export_perfetto},
	{"chrome", "Chrome trace-event JSON (Perfetto UI, chrome://tracing)", 0, 0, 0,
	 trail__export_chrome},
	{"folded", "call stacks with their self time, for flame graph tools", 0, 0, 1,
	 trail__export_folded},
	{"flamegraph", "an SVG flame graph of the calls (opens in a browser)", 0, 0, 1,
	 trail__export_flamegraph},
};

const struct trail_format *trail_export_formats(size_t *n)
{
	*n = sizeof(formats) / sizeof(formats[0]);
	return formats;
}

const struct trail_format *trail_export_format(const char *name)
{
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}
