/* SPDX-License-Identifier: MIT */
/*
 * test-fuzz-inputs.c - the fuzz targets (tests/fuzz/fuzz-*.c, built here
 * with FUZZ_NO_MAIN, no libFuzzer) over every file of their checked-in
 * seed corpus (tests/fuzz/corpus/<target>/) and of the crashers kept from
 * fuzzing (tests/fuzz/regress/<target>/). Each input runs in its own
 * process: the test fails, naming the file, if one dies (a crash, an
 * ASan/UBSan report in the ASan run, a target's own assertion) or runs
 * over its time. A target must have seeds; regress inputs may be none.
 * Fresh heap memory is filled with garbage (M_PERTURB; ASan does the
 * same), so a read of memory nobody wrote shows without MSan.

 */
#include <dirent.h>
#include <fcntl.h>
#include <malloc.h>
#include <sys/stat.h>

#include "check.h"
#include "fuzz.h"

#define INPUT_TIMEOUT 30 /* seconds for one input, ASan included */

struct target {
	const char *name;
	int (*one)(const uint8_t *data, size_t size);
};

/* An exact-size heap copy of a file, as libFuzzer hands inputs over. */
static uint8_t *load(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *p = NULL;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !(p = malloc(st.st_size ? (size_t)st.st_size : 1)))
		goto out;
	if (read(fd, p, (size_t)st.st_size) != st.st_size) {
		free(p);
		p = NULL;
		goto out;
	}
	*size = (size_t)st.st_size;
out:
	close(fd);
	return p;
}

/* One input in a child process; 0 if it returned. */
static int run_input(const struct target *t, const char *path)
{
	size_t size = 0;
	uint8_t *data = load(path, &size);
	int status;
	pid_t pid;

	if (!data) {
		fprintf(stderr, "  %s: unreadable\n", path);
		return -1;
	}
	fflush(NULL);
	pid = fork();
	if (pid == 0) {
		alarm(INPUT_TIMEOUT);
		mallopt(M_PERTURB, 0x5a);
		t->one(data, size);
		_exit(0);
	}
	free(data);
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (WIFSIGNALED(status))
		fprintf(stderr, "  %s: signal %d%s\n", path, WTERMSIG(status),
			WTERMSIG(status) == SIGALRM ? " (timeout)" : "");
	else
		fprintf(stderr, "  %s: exit status %d\n", path, WEXITSTATUS(status));
	return -1;
}

static int skip_dots(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* Every file of tests/fuzz/KIND/TARGET; the number run, -1 if no dir. */
static int run_dir(const struct target *t, const char *kind)
{
	char dir[512], path[1024];
	struct dirent **ents;
	int n, ran = 0;

	snprintf(dir, sizeof(dir), "%s/tests/fuzz/%s/%s", TRAIL_SOURCE_DIR, kind,
		 t->name);
	n = scandir(dir, &ents, skip_dots, alphasort);
	if (n < 0)
		return -1;
	for (int i = 0; i < n; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, ents[i]->d_name);
		if (run_input(t, path))
			check_failures++;
		ran++;
		free(ents[i]);
	}
	free(ents);
	return ran;
}

static void run_target(const struct target *t)
{
	int seeds = run_dir(t, "corpus"), crashers = run_dir(t, "regress");

	CHECK(seeds > 0);
	fprintf(stderr, "  %s: %d seeds, %d regress inputs\n", t->name, seeds,
		crashers < 0 ? 0 : crashers);
}

#define TARGET(t)                                                             \
	TEST(fuzz_inputs_##t)                                                 \
	{                                                                     \
		static const struct target tg = {#t, fuzz_##t##_one};         \
		run_target(&tg);                                              \
	}

TARGET(reader)
TARGET(meta)
TARGET(spec)
TARGET(elf)
TARGET(ldcache)
TARGET(probe)
TARGET(core)

TEST_MAIN(CHECK_T(fuzz_inputs_reader), CHECK_T(fuzz_inputs_meta),
	  CHECK_T(fuzz_inputs_spec), CHECK_T(fuzz_inputs_elf),
	  CHECK_T(fuzz_inputs_ldcache), CHECK_T(fuzz_inputs_probe), CHECK_T(fuzz_inputs_core))
