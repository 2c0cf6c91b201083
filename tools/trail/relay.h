/* SPDX-License-Identifier: MIT */
/* relay.h - record --relay URL: the recording sent to lttng-relayd. */
#ifndef TRAIL_TOOLS_RELAY_H
#define TRAIL_TOOLS_RELAY_H

struct relay_url {
	char host[256];
	int ctrl, data; /* ports */
	int pos;        /* a parse error's column */
};

/* LTTng's URL forms: net://HOST[:CTRL[:DATA]], tcp://, net6://, tcp6://,
 * an IPv6 address in brackets; 0, or -1 with why and u->pos */
int relay_url_parse(const char *url, struct relay_url *u, char *why, size_t n);
/* The trace file trace to the relay at url as session name: 0, or 1
 * (said; the file is kept) */
int relay_send(const char *url, const char *trace, const char *name);

#endif
