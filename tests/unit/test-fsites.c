/* SPDX-License-Identifier: MIT */
/*
 * test-fsites.c - libtrail's in-process discovery of patchable function
 * entries (src/lib/fsites.c): on this very program (some functions carry a
 * patchable entry) and on a shared object built and dlopen'ed at test time,
 * found through dl_iterate_phdr as libtrail finds them. Names, addresses
 * and counts are checked against the symbols the test itself resolves
 * (&function, dlsym), not against recorded numbers.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/fsites.h"

#define HOOK __attribute__((patchable_function_entry(5), noipa))

HOOK int alpha(int x) { return x + 1; }
HOOK int beta(int x) { return x * 2; }
HOOK static int gamma_local(int x) { return x - 3; }
int plain(int x) { return x ^ 5; } /* no patchable entry */

struct want {
	const char *path; /* "" for the executable */
	uintptr_t base;
	struct dl_phdr_info info;
	int found;
};

static int find_obj(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct want *w = arg;
	(void)size;

	if (w->found)
		return 0;
	if ((!*w->path && !*info->dlpi_name) ||
	    (*w->path && strstr(info->dlpi_name, w->path))) {
		w->info = *info;
		w->base = info->dlpi_addr;
		w->found = 1;
	}
	return 0;
}

static const struct fsite *by_name(const struct fobj *o, const char *name)
{
	for (uint32_t i = 0; i < o->nsites; i++)
		if (!strcmp(trail__fsite_name(o, &o->sites[i]), name))
			return &o->sites[i];
	return NULL;
}

TEST(own_executable)
{
	struct want w = {.path = ""};
	struct fobj o;
	const struct fsite *s;

	dl_iterate_phdr(find_obj, &w);
	CHECK(w.found);
	CHECK_EQ(trail__fobj_load(&o, "", w.base, &w.info), 0);
	/* its three functions, and a site per library call through its PLT
	 * (src/common/pltscan.h): this program calls dl_iterate_phdr */
	{
		uint32_t own = 0, plt = 0;

		for (uint32_t i = 0; i < o.nsites; i++) {
			if (!(o.sites[i].flags & FSITE_PLT)) {
				own++;
				continue;
			}
			plt++;
			/* the GOT slot its entry jumps through */
			CHECK(o.sites[i].got != 0);
		}
		CHECK_EQ(own, 3);
		CHECK(plt > 0);
		s = by_name(&o, "dl_iterate_phdr");
		CHECK(s && (s->flags & FSITE_PLT));
	}
	CHECK_EQ(o.skipped, 0);
	s = by_name(&o, "alpha");
	CHECK(s && s->addr == (uintptr_t)alpha);
	s = by_name(&o, "beta");
	CHECK(s && s->addr == (uintptr_t)beta);
	s = by_name(&o, "gamma_local"); /* a static function: from .symtab */
	CHECK(s && s->addr == (uintptr_t)gamma_local);
	CHECK(by_name(&o, "plain") == NULL);
	CHECK(trail__fobj_find(&o, (uintptr_t)beta) != NULL);
	CHECK(trail__fobj_find(&o, (uintptr_t)beta + 1) == NULL);
	for (uint32_t i = 1; i < o.nsites; i++)
		CHECK(o.sites[i - 1].addr < o.sites[i].addr);
	CHECK(o.lo <= (uintptr_t)alpha && (uintptr_t)alpha < o.hi);
	CHECK_EQ(alpha(1) + beta(2) + gamma_local(3) + plain(0), 2 + 4 + 0 + 5);
	trail__fobj_free(&o);
}

TEST(dlopened_library)
{
	char dir[] = "/tmp/trail-fsites.XXXXXX", cmd[1024], so[600];
	struct want w = {0};
	struct fobj o;
	const struct fsite *s;
	void *h;
	int (*fn)(int);

	CHECK(mkdtemp(dir) != NULL);
	snprintf(so, sizeof(so), "%s/libf.so", dir);
	snprintf(cmd, sizeof(cmd),
		 "printf 'int lib_one(int x){return x+1;}\\nstatic int hidden(int x){return x*3;}\\n"
		 "int lib_two(int x){return hidden(x)+2;}\\n' > %s/f.c && "
		 "${CC:-cc} -O2 -fPIC -shared -fpatchable-function-entry=5 -fcf-protection=full "
		 "-o %s %s/f.c", dir, so, dir);
	if (system(cmd) != 0)
		SKIP("no C compiler to build the fixture");
	h = dlopen(so, RTLD_NOW);
	CHECK(h != NULL);
	if (!h)
		return;
	w.path = "libf.so";
	dl_iterate_phdr(find_obj, &w);
	CHECK(w.found);
	CHECK_EQ(trail__fobj_load(&o, w.info.dlpi_name, w.base, &w.info), 0);
	/* lib_one, lib_two, and hidden unless it was inlined away */
	CHECK(o.nsites >= 2);
	fn = (int (*)(int))dlsym(h, "lib_one");
	s = by_name(&o, "lib_one");
	/* with -fcf-protection the site follows a 4-byte endbr64 */
	CHECK(s && s->addr == (uintptr_t)fn + 4);
	CHECK(by_name(&o, "lib_two") != NULL);
	CHECK_EQ(fn(41), 42);
	trail__fobj_free(&o);
	dlclose(h);
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_EQ(system(cmd), 0);
}

/* A library built without patchable entries (libc): a candidate site per
 * function, named by .dynsym (or sub_<address>), decoded when asked */
TEST(object_without_sites)
{
	struct want w = {.path = "libc.so"};
	struct fobj o;
	const struct fsite *s;
	uint32_t k, named = 0;

	dl_iterate_phdr(find_obj, &w);
	CHECK(w.found);
	CHECK_EQ(trail__fobj_load(&o, w.info.dlpi_name, w.base, &w.info), 0);
	CHECK(o.nsites > 100);
	CHECK(o.unmod && o.lib);
	for (k = 0; k < o.nsites; k++) {
		const char *nm = trail__fsite_name(&o, &o.sites[k]);
		char sub[32];

		CHECK((o.sites[k].flags & (FSITE_RELOC | FSITE_LAZY)) == (FSITE_RELOC | FSITE_LAZY));
		snprintf(sub, sizeof(sub), "sub_%lx", (unsigned long)(o.sites[k].addr - o.base));
		named += strcmp(nm, sub) != 0;
		CHECK(strcmp(nm, "setjmp") && strcmp(nm, "vfork")); /* never sites */
	}
	CHECK(named > 100);
	/* a site where dlsym finds getpid, named by it or an alias
	 * (__getpid); decoded: a jump or a breakpoint */
	s = trail__fobj_find(&o, (uintptr_t)dlsym(RTLD_DEFAULT, "getpid"));
	CHECK(s && strstr(trail__fsite_name(&o, s), "getpid"));
	if (s) {
		k = (uint32_t)(s - o.sites);
		CHECK_EQ(trail__fobj_check(&o, k), 0);
		CHECK(!(s->flags & FSITE_LAZY));
		CHECK(FSITE_LEN(s) >= 1);
		CHECK((s->flags & FSITE_TRAP) || FSITE_LEN(s) >= 5);
		CHECK_EQ(trail__fobj_check(&o, k), 0); /* once */
	}
	trail__fobj_free(&o);
}

TEST(bad_files)
{
	struct want w = {.path = ""};
	struct fobj o;

	dl_iterate_phdr(find_obj, &w);
	CHECK(trail__fobj_load(&o, "/nonexistent", w.base, &w.info) == -ENOENT);
	CHECK(trail__fobj_load(&o, "/etc/passwd", w.base, &w.info) == -EPROTO);
	CHECK(trail__fobj_load(&o, "/proc/self", w.base, &w.info) < 0);
}

TEST_MAIN(CHECK_T(own_executable), CHECK_T(dlopened_library), CHECK_T(object_without_sites),
	  CHECK_T(bad_files))
