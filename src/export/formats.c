/* SPDX-License-Identifier: MIT */
/* formats.c - the export formats by name; see formats.h. */
#include <string.h>

#include "formats.h"

static const struct trail_format formats[] = {
	{"text", "ftrace's text, as trail report prints it", 0, 0, 0, trail__export_text},
	{"chrome", "Chrome trace-event JSON (Perfetto UI, chrome://tracing)", 0, 0, 0,
	 trail__export_chrome},
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
