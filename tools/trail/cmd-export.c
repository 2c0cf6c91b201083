/* SPDX-License-Identifier: MIT */
/*
 * cmd-export.c - `trail export`: a trace file in another tool's format
 * (CTF, Perfetto, Chrome JSON, folded stacks, an SVG flame graph), through
 * the same view options as report. Each format is an output of
 * src/export (formats.h); this file picks one, checks where it goes and
 * runs the driver.
 *
 * A file output is written as OUT.part and renamed when complete, so a
 * failed export leaves no half file under the name asked for (nor removes
 * an old one); a device or FIFO (/dev/null, a pipe) is written to as is. Damage in the input: what is valid is exported, the damage
 * is reported with its offset, the exit status is 1.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../../src/export/formats.h"
#include "../../src/tracefile/reader.h"
#include "opt.h"
#include "tool.h"
#include "viewopt.h"

enum { O_FORCE = OPT_LONG_ID, O_COUNT, O_TITLE };

static const struct opt_cmd export_opts = {
	.name = "export",
	.intro = "Usage: trail export --format FORMAT [-i FILE] [-o OUT] [OPTIONS]\n"
		 "\n"
		 "Write a trace file recorded by 'trail record' in another tool's format.\n"
		 "Formats:\n"
		 "%FORMATS%",
	.opts = (const struct opt[]){
		{'F', "format", OPT_REQUIRED, "FORMAT", "the format to write (see above)", 0,
		 "a format"},
		{'i', "input", OPT_REQUIRED, "FILE", "trace file (default trace.dat), a core dump, or - (stdin)", 0, "a file"},
		{'o', "output", OPT_REQUIRED, "OUT",
		 "where to write (a directory for ctf; default:\n"
		 "standard output for the other formats)", 0, "a file"},
		{0, "force", OPT_NONE, NULL, "replace OUT if it exists", O_FORCE, NULL},
		{0, "count", OPT_NONE, NULL, "folded, flamegraph: call counts, not time", O_COUNT,
		 NULL},
		{0, "title", OPT_REQUIRED, "TEXT", "flamegraph: its title", O_TITLE, NULL},
		{'q', "quiet", OPT_NONE, NULL, "no progress line", 0, NULL},
		VIEWOPT_ROWS,
		OPT_HELP_ROW,
		{0},
	},
};

/* --help's intro with the formats listed in it */
static struct opt_cmd *with_formats(void)
{
	static struct opt_cmd cmd;
	static char intro[2048];
	size_t n, len;
	const struct trail_format *f = trail_export_formats(&n);
	const char *mark = strstr(export_opts.intro, "%FORMATS%");

	cmd = export_opts;
	len = (size_t)(mark - export_opts.intro);
	memcpy(intro, export_opts.intro, len);
	for (size_t i = 0; i < n && len < sizeof(intro); i++)
		len += (size_t)snprintf(intro + len, sizeof(intro) - len, "  %-12s %s\n", f[i].name,
					f[i].help);
	intro[len < sizeof(intro) ? len : sizeof(intro) - 1] = '\0';
	cmd.intro = intro;
	return &cmd;
}

static void list_formats(void)
{
	size_t n;
	const struct trail_format *f = trail_export_formats(&n);

	fprintf(stderr, "  known formats:");
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, "%s %s", i ? "," : "", f[i].name);
	fprintf(stderr, "\n");
}

/* A directory to write a directory format into: made, or emptied of a
 * previous export with --force. 0, or 1 with the error reported. */
static int prepare_dir(const char *dir, int force)
{
	struct stat st;
	DIR *d;
	struct dirent *e;
	int nonempty = 0, ours = 0;

	if (stat(dir, &st)) {
		if (errno != ENOENT || mkdir(dir, 0777)) {
			tool_err("export: cannot create directory %s: %s", dir, strerror(errno));
			return 1;
		}
		return 0;
	}
	if (!S_ISDIR(st.st_mode)) {
		tool_err("export: %s is not a directory (this format writes a directory of "
			 "files)", dir);
		return 1;
	}
	d = opendir(dir);
	if (!d) {
		tool_err("export: %s: %s", dir, strerror(errno));
		return 1;
	}
	while ((e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		nonempty = 1;
		if (!strcmp(e->d_name, "metadata"))
			ours = 1;
	}
	if (nonempty && !force) {
		closedir(d);
		tool_err("export: %s exists and is not empty (--force replaces an earlier export)",
			 dir);
		return 1;
	}
	if (nonempty && !ours) {
		closedir(d);
		tool_err("export: %s is not a trace directory (no metadata file): not emptying it",
			 dir);
		return 1;
	}
	rewinddir(d);
	while (nonempty && (e = readdir(d))) {
		struct stat fs;

		if (fstatat(dirfd(d), e->d_name, &fs, AT_SYMLINK_NOFOLLOW) || !S_ISREG(fs.st_mode))
			continue;
		if (unlinkat(dirfd(d), e->d_name, 0)) {
			tool_err("export: cannot remove %s/%s: %s", dir, e->d_name, strerror(errno));
			closedir(d);
			return 1;
		}
	}
	closedir(d);
	return 0;
}

/* The checks on a file output before anything is read. 0, or 1. */
static int check_file_out(const char *out, int force)
{
	struct stat st;

	if (stat(out, &st))
		return 0;
	if (S_ISDIR(st.st_mode)) {
		tool_err("export: %s is a directory (this format writes a file)", out);
		return 1;
	}
	if (!force) {
		tool_err("export: %s exists (--force replaces it)", out);
		return 1;
	}
	return 0;
}

int cmd_export(int argc, char **argv)
{
	const char *path = "trace.dat", *outpath = NULL, *fname = NULL, *title = NULL;
	const struct trail_format *fmt;
	struct trail_export_opts eo = {.sz = sizeof(eo)};
	struct trail_reader *r = NULL;
	struct trail_output *out = NULL;
	struct viewopt vo;
	struct opt_parser op;
	char *err = NULL, *part = NULL;
	struct tool_wfile w = {0};
	size_t errlen, nerr;
	int c, force = 0, count = 0, quiet = 0, rc = 1, run;
	struct stat st;

	viewopt_init(&vo);
	opt_init(&op, with_formats(), argc, argv);
	while ((c = opt_next(&op)) != OPT_END) {
		int t;

		switch (c) {
		case 'F':
			fname = optarg;
			break;
		case 'i':
			path = optarg;
			break;
		case 'o':
			outpath = optarg;
			break;
		case 'q':
			quiet = 1;
			break;
		case O_FORCE:
			force = 1;
			break;
		case O_COUNT:
			count = 1;
			break;
		case O_TITLE:
			title = optarg;
			break;
		case OPT_EXIT:
			viewopt_free(&vo);
			return op.status;
		default:
			t = viewopt_take(&vo, "export", c, optarg);
			if (t < 0) {
				viewopt_free(&vo);
				return EXIT_USAGE;
			}
		}
	}
	rc = EXIT_USAGE;
	if (optind < argc) {
		tool_usage_err("export", "unexpected argument '%s' (the file goes after -i)",
			       argv[optind]);
		goto out;
	}
	if (!fname) {
		tool_usage_err("export", "which format? (--format FORMAT)");
		list_formats();
		goto out;
	}
	fmt = trail_export_format(fname);
	if (!fmt) {
		tool_usage_err("export", "unknown format '%s'", fname);
		list_formats();
		goto out;
	}
	if (!*path || (outpath && !*outpath)) {
		tool_usage_err("export", "%s needs a name, not an empty one", *path ? "-o" : "-i");
		goto out;
	}
	if (fmt->dir && !outpath) {
		tool_usage_err("export", "the %s format writes a directory: name it with -o DIR",
			       fmt->name);
		goto out;
	}
	if (!outpath && fmt->binary && isatty(1)) {
		tool_usage_err("export", "the %s format is binary: not writing it to a terminal "
			       "(-o FILE, or redirect)", fmt->name);
		goto out;
	}
	if (count && !fmt->calls) {
		tool_usage_err("export", "--count is for the folded and flamegraph formats");
		goto out;
	}
	if (title && strcmp(fmt->name, "flamegraph")) {
		tool_usage_err("export", "--title is for the flamegraph format");
		goto out;
	}
	rc = 1;
	if (outpath && !strcmp(outpath, path)) {
		tool_err("export: -o %s is the input file", outpath);
		goto out;
	}
	errlen = strlen(path) + 512;
	err = malloc(errlen);
	if (!err)
		goto out;
	if (viewopt_open(path, &r, err, errlen))
		goto out;
	if (fmt->dir) {
		if (prepare_dir(outpath, force))
			goto out;
		eo.dir = outpath;
	} else if (outpath && stat(outpath, &st) == 0 && !S_ISREG(st.st_mode) &&
		   !S_ISDIR(st.st_mode)) {
		/* a device or a FIFO (/dev/null, a pipe): written to, nothing
		 * to replace (a rename would put a file in its place) */
		int fd = open(outpath, O_WRONLY | O_CLOEXEC);

		if (fd < 0 || tool_wfile_open(&w, fd, outpath)) {
			tool_err("export: cannot write %s: %s", outpath, strerror(errno));
			if (fd >= 0)
				close(fd);
			goto out;
		}
	} else if (outpath) {
		int fd;

		if (check_file_out(outpath, force) || asprintf(&part, "%s.part", outpath) < 0)
			goto out;
		fd = open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
		if (fd < 0 || tool_wfile_open(&w, fd, outpath)) {
			tool_err("export: cannot write %s: %s", part, strerror(errno));
			if (fd >= 0) {
				close(fd);
				unlink(part);
			}
			goto out;
		}
	} else if (tool_wfile_open(&w, 1, "standard output")) {
		tool_err("export: %s", strerror(errno));
		goto out;
	}
	eo.out = w.f;
	eo.count = count;
	eo.title = title;
	out = fmt->create(&eo);
	if (!out) {
		tool_err("export: %s: %s", fmt->name, strerror(errno));
		goto out;
	}
	if (!quiet && stat(path, &st) == 0)
		viewopt_progress(&vo, "export", (uint64_t)st.st_size);
	run = trail_export_run(r, path, &vo.v, out, err, errlen);
	viewopt_progress_done(&vo);
	rc = 0;
	/* a write that failed is said once, by the stream that saw its cause
	 * (the output's own message would only echo it) */
	if (w.f && tool_wfile_close(&w, "export")) {
		rc = 1;
		run = -EIO;
	} else if (run < 0) {
		if (!viewopt_filter_failed(&vo, "export"))
			tool_err("%s: %s", path, err);
		rc = 1;
	}
	/* an export that failed leaves nothing; a damaged input leaves what
	 * could be read */
	if (part && run < 0) {
		unlink(part);
	} else if (part && rename(part, outpath)) {
		tool_err("export: cannot rename %s to %s: %s", part, outpath, strerror(errno));
		unlink(part);
		rc = 1;
	}
	nerr = viewopt_damage(path, r);
	if (nerr) {
		tool_err("%s: exported what could be read; the file is damaged where said above",
			 path);
		rc = 1;
	}
out:
	if (w.f) {
		tool_wfile_close(&w, NULL); /* (failed already, and said) */
		if (part)
			unlink(part);
	}
	trail_output_free(out);
	if (r)
		trail_reader_close(r);
	free(part);
	free(err);
	viewopt_free(&vo);
	return rc;
}
