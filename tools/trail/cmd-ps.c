/* SPDX-License-Identifier: MIT */
/*
 * cmd-ps.c - `trail ps`: the running processes trail can attach to, those
 * in the registry (src/common/registry.h) that libtrail loaded into;
 * stale entries, of processes that died, are removed on the way.
 */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../../src/common/registry.h"
#include "../../src/common/util.h"
#include "opt.h"
#include "tool.h"

static const struct opt_cmd ps_opts = {
	.name = "ps",
	.intro = "Usage: trail ps\n"
		 "\n"
		 "List your running processes that have libtrail loaded (the registry), "
		 "for 'trail record -P'.\n",
	.in_order = 1,
	.opts = (const struct opt[]){
		OPT_HELP_ROW,
		{0},
	},
};

int cmd_ps(int argc, char **argv)
{
	char path[512];
	struct dirent *d;
	DIR *dir;
	struct opt_parser op;
	int dfd;

	opt_init(&op, &ps_opts, argc, argv);
	if (opt_next(&op) != OPT_END)
		return op.status; /* -h is its only option */
	if (optind < argc) {
		tool_usage_err("ps", "unexpected argument '%s'", argv[optind]);
		return EXIT_USAGE;
	}
	if (trail__registry_path(path, sizeof(path)))
		return 1;
	dfd = trail__registry_open(path, 0);
	if (dfd == -ENOENT)
		return 0;
	if (dfd < 0) {
		char why[1200];

		tool_err("%s", trail__registry_why(path, dfd, why, sizeof(why)));
		return 1;
	}
	dir = fdopendir(dfd);
	if (!dir)
		return 1;
	printf("%7s  %-16s %6s  %s\n", "PID", "COMM", "SIGNAL", "EXE");
	while ((d = readdir(dir))) {
		struct trail_reg reg;
		char comm[64] = "", exe[512] = "", p2[64];
		pid_t pid;
		ssize_t k;

		if (tool_parse_pid(d->d_name, NULL, &pid) || trail__registry_get(dfd, pid, &reg))
			continue;
		if (!trail__proc_alive(pid, reg.start)) {
			trail__registry_del(dfd, pid); /* stale: it died */
			continue;
		}
		snprintf(p2, sizeof(p2), "/proc/%d/comm", (int)pid);
		if (trail__read_file(p2, comm, sizeof(comm)) > 0)
			comm[strcspn(comm, "\n")] = '\0';
		snprintf(p2, sizeof(p2), "/proc/%d/exe", (int)pid);
		k = readlink(p2, exe, sizeof(exe) - 1);
		exe[k > 0 ? k : 0] = '\0';
		printf("%7d  %-16s %6d  %s\n", (int)pid, comm, reg.signal, exe);
	}
	closedir(dir);
	return 0;
}
