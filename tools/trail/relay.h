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
struct relay;
/* A session named name opened on the relay at url (live: a reader may
 * attach from now on), before the recording starts; NULL (said) if the
 * relay is not there or refuses it */
struct relay *relay_open(const char *url, const char *name);
/* The trace file trace, once written, sent into it, and the session
 * closed: 0, or 1 (said; the file is kept). R is freed. */
int relay_finish(struct relay *R, const char *trace);
/* The session closed with nothing sent (the recording failed). */
void relay_abort(struct relay *R);

#endif
