/* SPDX-License-Identifier: MIT */
/* worker.c - the example's request handling, in its own translation unit. */
#include <stdio.h>

#include "app-events.h"

static const char *const paths[] = {
	"/index.html", "/etc/hosts", "/api/v1/users?id=42", "/static/logo.png",
};

void worker_serve(int id, int requests)
{
	unsigned hist[4] = {0, 0, 0, 0};
	char name[16];

	for (int i = 0; i < requests; i++) {
		int fd = 10 + id * 100 + i;
		const char *path = paths[(id + i) % 4];
		uint64_t bytes = 512u << ((id + i) % 4);
		int status = (i % 5 == 4) ? 404 : 200;

		trail(app, request, fd, path, bytes);
		hist[(id + i) % 4]++;
		trail(app, reply, fd, status, 0.25 * (i + 1), i % 2 == 1);
	}
	snprintf(name, sizeof(name), "worker-%d", id);
	trail(app, stats, name, hist, (size_t)(id % 4 + 1));
}
