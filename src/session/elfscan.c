/* SPDX-License-Identifier: MIT */
/*
 * elfscan.c - finding event description blobs in ELF files; see elfscan.h.
 *
 * Three layers:
 *   - the section walk: every SHT_PROGBITS section named "trail_meta" is a
 *     run of blobs and zero padding; each blob is validated by
 *     trail__meta_parse() against the bytes left in the section, reported
 *     once per scan (a hash set of copies), and the walk stops at the first
 *     bad one;
 *   - a small model of the glibc loader's search (dl-load.c: RPATH chain,
 *     LD_LIBRARY_PATH, RUNPATH, ld.so.cache, default directories), walking
 *     the DT_NEEDED closure breadth first;
 *   - /proc/PID/maps, one scan per distinct mapped file.
 *
 * Nothing is mmap'ed (ELF_C_READ: libelf preads what it needs, so a file
 * truncated under our feet gives a read error, not a SIGBUS), and every size
 * or offset taken from a file goes through libelf's checked accessors or an
 * explicit bound against what was read.
 */
#include "elfscan.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <limits.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "../common/meta.h"

#define META_SECTION "trail_meta"

/* Limits against hostile files; far above anything a real program has. */
#define MAX_SECTION (64u << 20) /* bytes of trail_meta (all) or dynamic */
#define MAX_OBJECTS 4096        /* objects in one program's closure */
#define MAX_NEEDED 1024         /* DT_NEEDED entries used per object */
#define MAX_CACHE (64u << 20)   /* bytes of ld.so.cache */

static const char *const default_dirs[] = {
	"/lib/x86_64-linux-gnu", "/usr/lib/x86_64-linux-gnu", "/lib64", "/lib",
	"/usr/lib",
};

/* ------------------------------------------------------------------------
 * One scan: the caller's callbacks, the error buffer, the blobs seen.
 */
struct blob {
	uint32_t hash;
	uint32_t size;
	unsigned char *bytes; /* NULL: free slot */
};

struct scan {
	elfscan_cb cb;
	void *arg;
	int (*object_cb)(const char *object, void *arg);
	char *err;
	size_t errlen;
	int count; /* distinct blobs reported */
	int bad;   /* malformed blobs met */
	struct blob *set;
	size_t setcap, setn;
};

static void verr(struct scan *s, const char *fmt, va_list ap)
{
	if (s->errlen)
		vsnprintf(s->err, s->errlen, fmt, ap);
}

/* The reason for a negative return. */
__attribute__((format(printf, 2, 3)))
static void set_err(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	verr(s, fmt, ap);
	va_end(ap);
}

/* Something skipped: only the first one is kept. */
__attribute__((format(printf, 2, 3)))
static void warn(struct scan *s, const char *fmt, ...)
{
	va_list ap;

	if (s->errlen && s->err[0])
		return;
	va_start(ap, fmt);
	verr(s, fmt, ap);
	va_end(ap);
}

/* An option field, zero when the caller's struct is too old to have it. */
#define OPT(o, f)                                                             \
	((o) && (o)->sz >= offsetof(struct elfscan_opts, f) + sizeof((o)->f)  \
		 ? (o)->f                                                     \
		 : 0)

static int scan_init(struct scan *s, elfscan_cb cb, void *arg,
		     const struct elfscan_opts *o, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->cb = cb;
	s->arg = arg;
	s->object_cb = OPT(o, object_cb);
	s->err = err;
	s->errlen = err ? errlen : 0;
	if (s->errlen)
		err[0] = '\0';
	if (elf_version(EV_CURRENT) == EV_NONE) {
		set_err(s, "libelf: %s", elf_errmsg(-1));
		return -ENOSYS;
	}
	return 0;
}

static void scan_fini(struct scan *s, const struct elfscan_opts *o)
{
	int *bad = OPT(o, bad);

	if (bad)
		*bad = s->bad;
	for (size_t i = 0; i < s->setcap; i++)
		free(s->set[i].bytes);
	free(s->set);
}

/* Open addressing, at most half full. Returns 1 if new (and kept), 0 if
 * seen before, -ENOMEM. */
static int set_add(struct scan *s, const void *p, uint32_t size)
{
	uint32_t h = trail__meta_hash(p, size);
	size_t i;

	if (2 * (s->setn + 1) > s->setcap) {
		size_t cap = s->setcap ? 2 * s->setcap : 64;
		struct blob *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t j = 0; j < s->setcap; j++) {
			struct blob *b = &s->set[j];

			if (!b->bytes)
				continue;
			for (i = b->hash & (cap - 1); t[i].bytes; i = (i + 1) & (cap - 1))
				;
			t[i] = *b;
		}
		free(s->set);
		s->set = t;
		s->setcap = cap;
	}
	for (i = h & (s->setcap - 1); s->set[i].bytes; i = (i + 1) & (s->setcap - 1)) {
		struct blob *b = &s->set[i];

		if (b->hash == h && b->size == size && !memcmp(b->bytes, p, size))
			return 0;
	}
	s->set[i].bytes = malloc(size);
	if (!s->set[i].bytes)
		return -ENOMEM;
	memcpy(s->set[i].bytes, p, size);
	s->set[i].hash = h;
	s->set[i].size = size;
	s->setn++;
	return 1;
}

/*
 * A section's bytes: blobs, each self-sized, with zero bytes between them
 * (alignment). A blob starts with its magic, whose first byte is not zero,
 * so padding can be skipped a byte at a time. Returns 0 or a stop value.
 */
static int walk_section(struct scan *s, const char *object,
			const unsigned char *p, size_t size)
{
	struct trail_meta m;
	size_t off = 0;

	while (off < size) {
		const char *why;
		int r;

		if (!p[off]) {
			off++;
			continue;
		}
		if (trail__meta_parse(p + off, size - off, &m, &why)) {
			s->bad++;
			warn(s, "%s: %s+0x%zx: %s", object, META_SECTION, off, why);
			return 0;
		}
		r = set_add(s, p + off, m.size);
		if (r < 0) {
			set_err(s, "%s: %s", object, strerror(-r));
			return r;
		}
		if (r && s->count < INT_MAX) {
			s->count++;
			if (s->cb && (r = s->cb(object, p + off, m.size, s->arg)))
				return r;
		}
		off += m.size;
	}
	return 0;
}

/* Every trail_meta section of one ELF object. Returns 0 or a stop value. */
static int scan_elf(struct scan *s, Elf *elf, const char *object)
{
	size_t shstrndx, budget = MAX_SECTION;
	Elf_Scn *scn = NULL;
	int r;

	if (s->object_cb && (r = s->object_cb(object, s->arg)))
		return r;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return 0; /* no section names, so no trail_meta (e.g. sstrip) */
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || strcmp(name, META_SECTION))
			continue;
		/* the budget is for all of them: section headers may all
		 * point at the same large range */
		if ((sh.sh_flags & SHF_COMPRESSED) || sh.sh_size > budget) {
			s->bad++;
			warn(s, "%s: %s section %s", object, META_SECTION,
			     sh.sh_size > budget ? "too large" : "compressed");
			continue;
		}
		budget -= sh.sh_size;
		d = elf_getdata(scn, NULL);
		if (!d) {
			s->bad++;
			warn(s, "%s: %s section: %s", object, META_SECTION,
			     elf_errmsg(-1));
			continue;
		}
		if (d->d_buf && (r = walk_section(s, object, d->d_buf, d->d_size)))
			return r;
	}
	return 0;
}

const char *elfscan_extent(Elf *elf, uint64_t size, char *buf, size_t n)
{
	GElf_Ehdr eh;
	uint64_t sh, ph;

	if (!gelf_getehdr(elf, &eh))
		return elf_errmsg(-1);
	sh = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	ph = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
	if ((!eh.e_shoff || sh <= size) && (!eh.e_phoff || ph <= size))
		return NULL;
	snprintf(buf, n, "truncated or damaged ELF file: its headers end at byte %llu, "
		 "the file has %llu", (unsigned long long)(sh > ph ? sh : ph),
		 (unsigned long long)size);
	return buf;
}

/* Open a file the user named; on error, err says why. */
static int open_elf(struct scan *s, const char *path, int *fdp, Elf **elfp)
{
	struct stat st;
	Elf *elf;
	int fd, r;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0 || fstat(fd, &st)) {
		r = -errno;
		set_err(s, "%s: %s", path, strerror(-r));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		r = S_ISDIR(st.st_mode) ? -EISDIR : -ENOEXEC;
		set_err(s, "%s: %s", path,
			r == -EISDIR ? strerror(EISDIR) : "not a regular file");
		goto fail;
	}
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf) {
		r = -EINVAL;
		set_err(s, "%s: %s", path, elf_errmsg(-1));
		goto fail;
	}
	if (elf_kind(elf) == ELF_K_ELF && !gelf_getehdr(elf, &(GElf_Ehdr){0})) {
		r = -EINVAL;
		set_err(s, "%s: %s", path, elf_errmsg(-1));
		elf_end(elf);
		goto fail;
	}
	if (elf_kind(elf) != ELF_K_ELF && elf_kind(elf) != ELF_K_AR) {
		r = -ENOEXEC;
		set_err(s, "%s: not an ELF file", path);
		elf_end(elf);
		goto fail;
	}
	if (elf_kind(elf) == ELF_K_ELF) {
		char why[160];
		const char *bad = elfscan_extent(elf, (uint64_t)st.st_size, why, sizeof(why));

		if (bad) {
			r = -EINVAL;
			set_err(s, "%s: %s", path, bad);
			elf_end(elf);
			goto fail;
		}
	}
	*fdp = fd;
	*elfp = elf;
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return r;
}

/* The ELF members of a static archive, named "lib.a(member.o)". */
static int scan_archive(struct scan *s, int fd, Elf *ar, const char *path)
{
	Elf_Cmd cmd = ELF_C_READ;
	Elf *m;
	int r = 0;

	while (!r && (m = elf_begin(fd, cmd, ar))) {
		Elf_Arhdr *ah = elf_getarhdr(m);

		if (ah && ah->ar_name && elf_kind(m) == ELF_K_ELF) {
			size_t n = strlen(path) + strlen(ah->ar_name) + 3;
			char *name = malloc(n);

			if (!name) {
				set_err(s, "%s: %s", path, strerror(ENOMEM));
				r = -ENOMEM;
			} else {
				snprintf(name, n, "%s(%s)", path, ah->ar_name);
				r = scan_elf(s, m, name);
				free(name);
			}
		}
		cmd = elf_next(m);
		elf_end(m);
	}
	return r;
}

int elfscan_file_opts(const char *path, elfscan_cb cb, void *arg,
		      const struct elfscan_opts *opts, char *err, size_t errlen)
{
	struct scan s;
	Elf *elf;
	int fd, r;

	r = scan_init(&s, cb, arg, opts, err, errlen);
	if (r)
		goto out;
	r = open_elf(&s, path, &fd, &elf);
	if (r)
		goto out;
	if (elf_kind(elf) == ELF_K_AR)
		r = scan_archive(&s, fd, elf, path);
	else
		r = scan_elf(&s, elf, path);
	elf_end(elf);
	close(fd);
	if (!r)
		r = s.count;
out:
	scan_fini(&s, opts);
	return r;
}

int elfscan_file(const char *path, elfscan_cb cb, void *arg, char *err,
		 size_t errlen)
{
	return elfscan_file_opts(path, cb, arg, NULL, err, errlen);
}

/* ------------------------------------------------------------------------
 * A program: the loader's view. Paths and names are copied out of each ELF
 * file before it is closed.
 */
struct obj {
	char *path;    /* exe as given; a library as found */
	char *origin;  /* $ORIGIN, NULL if unknown */
	char *rpath;   /* DT_RPATH, NULL if absent or if there is a RUNPATH */
	char *runpath; /* DT_RUNPATH */
	char **needed;
	size_t nneeded;
	int loader;    /* object whose DT_NEEDED brought it in; -1: exe */
	int nodeflib;  /* DF_1_NODEFLIB */
	dev_t dev;
	ino_t ino;
};

struct prog {
	struct scan *s;
	const char *llp;        /* LD_LIBRARY_PATH */
	const char *cache_path;
	struct obj *objs;
	size_t n, cap;
	char **names;           /* DT_NEEDED names and sonames already loaded */
	size_t nnames, capnames;
	unsigned char *cache;   /* ld.so.cache contents */
	size_t cache_len;
	size_t cache_base;      /* start of the "glibc-ld.so.cache1.1" part */
	uint32_t cache_nlibs;
	int cache_state;        /* 0: not read yet, 1: usable, -1: not */
	unsigned char cls, data;
	GElf_Half machine;
	int stop;               /* a stop value, or -ENOMEM */
};

static int add_name(struct prog *p, const char *name)
{
	char *dup;

	if (p->nnames == p->capnames) {
		size_t cap = p->capnames ? 2 * p->capnames : 32;
		char **n = realloc(p->names, cap * sizeof(*n));

		if (!n)
			return -ENOMEM;
		p->names = n;
		p->capnames = cap;
	}
	dup = strdup(name);
	if (!dup)
		return -ENOMEM;
	p->names[p->nnames++] = dup;
	return 0;
}

/* glibc's _dl_name_match_p over every loaded object. */
static int is_loaded(const struct prog *p, const char *name)
{
	for (size_t i = 0; i < p->nnames; i++)
		if (!strcmp(p->names[i], name))
			return 1;
	for (size_t i = 0; i < p->n; i++)
		if (!strcmp(p->objs[i].path, name))
			return 1;
	return 0;
}

/* The directory of path, made absolute against the current directory. */
static char *dir_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	char cwd[PATH_MAX], *d;
	size_t len;

	if (slash == path)
		return strdup("/");
	if (path[0] == '/') {
		len = (size_t)(slash - path);
		d = malloc(len + 1);
		if (d) {
			memcpy(d, path, len);
			d[len] = '\0';
		}
		return d;
	}
	if (!getcwd(cwd, sizeof(cwd)))
		return NULL;
	len = slash ? (size_t)(slash - path) : 0;
	d = malloc(strlen(cwd) + len + 2);
	if (d)
		sprintf(d, "%s%s%.*s", cwd, len ? "/" : "", (int)len, path);
	return d;
}

/*
 * Dynamic string tokens, as glibc's is_dst(): $NAME must be followed by the
 * end of the string or a '/', ${NAME} by nothing in particular. Returns the
 * length of the token at s (which points after the '$') or 0.
 */
static size_t is_dst(const char *s, size_t len, const char *tok)
{
	size_t n = strlen(tok);

	if (len && s[0] == '{')
		return len >= n + 2 && !strncmp(s + 1, tok, n) && s[n + 1] == '}'
			       ? n + 2
			       : 0;
	if (len < n || strncmp(s, tok, n))
		return 0;
	return len == n || s[n] == '/' ? n : 0;
}

/* Copy src[0..len) to out, expanding $ORIGIN and $PLATFORM. Returns 0, or
 * -1 if a token cannot be expanded or out is too small: the loader drops
 * such a path. */
static int expand(const char *origin, const char *src, size_t len, char *out,
		  size_t outlen)
{
	const char *platform = (const char *)getauxval(AT_PLATFORM);
	size_t o = 0;

	for (size_t i = 0; i < len;) {
		const char *val = NULL;
		size_t t = 0, vlen;

		if (src[i] == '$') {
			if ((t = is_dst(src + i + 1, len - i - 1, "ORIGIN"))) {
				if (!origin)
					return -1;
				val = origin;
			} else if ((t = is_dst(src + i + 1, len - i - 1,
					       "PLATFORM"))) {
				if (!platform)
					return -1;
				val = platform;
			}
		}
		if (!val) {
			val = src + i;
			vlen = 1;
			i++;
		} else {
			vlen = strlen(val);
			i += t + 1;
		}
		if (o + vlen >= outlen)
			return -1;
		memcpy(out + o, val, vlen);
		o += vlen;
	}
	out[o] = '\0';
	return 0;
}

/* DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME, DT_FLAGS_1 of an object. */
static int read_dynamic(struct prog *p, struct obj *o, Elf *elf)
{
	Elf_Scn *scn = NULL;
	Elf_Data *d = NULL;
	GElf_Shdr sh;
	size_t entsz, n;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_DYNAMIC)
			break;
	if (!scn || sh.sh_size > MAX_SECTION || !(d = elf_getdata(scn, NULL)))
		return 0;
	entsz = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
	if (!entsz)
		return 0;
	n = d->d_size / entsz;
	for (size_t i = 0; i < n; i++) {
		GElf_Dyn dyn;
		const char *str = NULL;
		char **slot = NULL;

		if (!gelf_getdyn(d, (int)i, &dyn) || dyn.d_tag == DT_NULL)
			break;
		switch (dyn.d_tag) {
		case DT_FLAGS_1:
			o->nodeflib = !!(dyn.d_un.d_val & DF_1_NODEFLIB);
			continue;
		case DT_NEEDED:
		case DT_RPATH:
		case DT_RUNPATH:
		case DT_SONAME:
			break;
		default:
			continue;
		}
		if (dyn.d_un.d_val > SIZE_MAX ||
		    !(str = elf_strptr(elf, sh.sh_link, (size_t)dyn.d_un.d_val)))
			continue;
		switch (dyn.d_tag) {
		case DT_NEEDED:
			if (o->nneeded < MAX_NEEDED && *str) {
				char **nn = realloc(o->needed,
						    (o->nneeded + 1) * sizeof(*nn));

				if (!nn)
					return -ENOMEM;
				o->needed = nn;
				slot = &o->needed[o->nneeded++];
				*slot = NULL;
			}
			break;
		case DT_RPATH:
			slot = o->rpath ? NULL : &o->rpath;
			break;
		case DT_RUNPATH:
			slot = o->runpath ? NULL : &o->runpath;
			break;
		case DT_SONAME:
			if (add_name(p, str))
				return -ENOMEM;
			break;
		}
		if (slot && !(*slot = strdup(str)))
			return -ENOMEM;
	}
	/* glibc ignores DT_RPATH when there is a DT_RUNPATH (get-dynamic-info.h) */
	if (o->runpath) {
		free(o->rpath);
		o->rpath = NULL;
	}
	return 0;
}

static void obj_free(struct obj *o)
{
	free(o->path);
	free(o->origin);
	free(o->rpath);
	free(o->runpath);
	for (size_t i = 0; i < o->nneeded; i++)
		free(o->needed[i]);
	free(o->needed);
}

/*
 * Take an opened ELF file into the program: record it, read its dynamic
 * section, scan its blobs. origin is taken over. Sets p->stop on a stop
 * value or -ENOMEM.
 */
static void add_obj(struct prog *p, Elf *elf, const char *path, char *origin,
		    int loader, const struct stat *st)
{
	struct obj *o;
	int r;

	if (p->n == p->cap) {
		size_t cap = p->cap ? 2 * p->cap : 16;
		struct obj *n = realloc(p->objs, cap * sizeof(*n));

		if (!n)
			goto nomem;
		p->objs = n;
		p->cap = cap;
	}
	o = &p->objs[p->n];
	memset(o, 0, sizeof(*o));
	o->path = strdup(path);
	if (!o->path)
		goto nomem;
	p->n++;
	o->origin = origin;
	origin = NULL;
	o->loader = loader;
	o->dev = st->st_dev;
	o->ino = st->st_ino;
	if (read_dynamic(p, o, elf))
		goto nomem;
	r = scan_elf(p->s, elf, path);
	if (r)
		p->stop = r;
	return;
nomem:
	free(origin);
	set_err(p->s, "%s: %s", path, strerror(ENOMEM));
	p->stop = -ENOMEM;
}

/*
 * The loader's open_verify(), reduced: a candidate is taken if it is a
 * regular ELF file, ET_DYN, of the executable's class, data encoding and
 * machine. Returns 1 if taken (and then scanned, unless it was already
 * loaded under another name), 0 to keep searching.
 */
static int try_lib(struct prog *p, const char *path, int loader,
		   const char *name)
{
	struct stat st;
	GElf_Ehdr eh;
	Elf *elf = NULL;
	int fd, ok = 0;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd < 0)
		return 0;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode))
		goto out;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		goto out;
	if (eh.e_ident[EI_CLASS] != p->cls || eh.e_ident[EI_DATA] != p->data ||
	    eh.e_machine != p->machine || eh.e_type != ET_DYN)
		goto out;
	ok = 1;
	if (add_name(p, name)) {
		set_err(p->s, "%s: %s", path, strerror(ENOMEM));
		p->stop = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < p->n; i++)
		if (p->objs[i].dev == st.st_dev && p->objs[i].ino == st.st_ino)
			goto out;
	if (p->n >= MAX_OBJECTS)
		goto out;
	add_obj(p, elf, path, dir_of(path), loader, &st);
out:
	elf_end(elf);
	close(fd);
	return ok;
}

/* Try name in each directory of a search list (":"-separated, DSTs
 * expanded with the origin of object owner). */
static int search_list(struct prog *p, const char *list, const char *seps,
		       int owner, int loader, const char *name)
{
	const char *origin = p->objs[owner].origin;
	char dir[PATH_MAX], path[PATH_MAX];

	for (const char *e = list; e; ) {
		size_t len = strcspn(e, seps);
		const char *next = e[len] ? e + len + 1 : NULL;
		int n;

		/* an empty entry is the current directory */
		if (!expand(origin, e, len, dir, sizeof(dir))) {
			n = snprintf(path, sizeof(path), "%s%s%s", dir,
				     *dir && dir[strlen(dir) - 1] != '/' ? "/" : "",
				     name);
			if (n > 0 && (size_t)n < sizeof(path) &&
			    try_lib(p, path, loader, name))
				return 1;
		}
		e = next;
	}
	return 0;
}

/*
 * ld.so.cache, new format (glibc >= 2.32 writes only this; older ones put
 * it after the old "ld.so-1.7.0" table):
 *
 *   char magic[17] "glibc-ld.so.cache", version[3] "1.1"
 *   u32 nlibs, u32 len_strings, u8 flags (2: little endian), u8 pad[3],
 *   u32 extension_offset, u32 unused[3]                       = 48 bytes
 *   nlibs x { i32 flags; u32 key, value; u32 osversion; u64 hwcap } (24)
 *   strings; key and value are offsets from the magic
 *
 * Entries with a hwcap are optimised variants of a library that also has a
 * plain entry; they are only used when there is no plain one.
 */
#define CACHE_MAGIC "glibc-ld.so.cache1.1"
#define CACHE_OLD_MAGIC "ld.so-1.7.0"
#define CACHE_HDR 48u
#define CACHE_ENT 24u

static void cache_load(struct prog *p)
{
	const char *path = p->cache_path ? p->cache_path : "/etc/ld.so.cache";
	size_t base = 0, len = 0;
	unsigned char *buf = NULL;
	struct stat st;
	uint32_t nlibs;
	int fd;

	p->cache_state = -1;
	if (!*path || (fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)) < 0)
		return;
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size <= MAX_CACHE &&
	    (buf = malloc((size_t)st.st_size))) {
		while (len < (size_t)st.st_size) {
			ssize_t k = read(fd, buf + len, (size_t)st.st_size - len);

			if (k <= 0)
				break;
			len += (size_t)k;
		}
	}
	close(fd);
	if (!buf)
		return;
	if (len >= 16 && !memcmp(buf, CACHE_OLD_MAGIC, strlen(CACHE_OLD_MAGIC))) {
		/* u32 nlibs at 12, 12-byte entries from 16, then align 8 */
		memcpy(&nlibs, buf + 12, 4);
		base = 16 + (size_t)nlibs * 12;
		base = (base + 7) & ~(size_t)7;
	}
	if (base > len || len - base < CACHE_HDR ||
	    memcmp(buf + base, CACHE_MAGIC, strlen(CACHE_MAGIC)))
		goto bad;
	memcpy(&nlibs, buf + base + 20, 4);
	/* flags: 0 endianness unknown (old ldconfig), 2 little, 3 big */
	if (buf[base + 28] != 0 &&
	    buf[base + 28] != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 2 : 3))
		goto bad;
	if ((len - base - CACHE_HDR) / CACHE_ENT < nlibs)
		goto bad;
	p->cache = buf;
	p->cache_len = len;
	p->cache_base = base;
	p->cache_nlibs = nlibs;
	p->cache_state = 1;
	return;
bad:
	free(buf);
}

/* A NUL-terminated string at offset off of the new-format part, or NULL. */
static const char *cache_str(const struct prog *p, uint32_t off)
{
	size_t at = p->cache_base + off;
	const char *s = (const char *)p->cache + at;

	if (at >= p->cache_len || !memchr(s, 0, p->cache_len - at))
		return NULL;
	return s;
}

static int cache_search(struct prog *p, int loader, const char *name)
{
	if (!p->cache_state)
		cache_load(p);
	if (p->cache_state < 0)
		return 0;
	for (int pass = 0; pass < 2; pass++)
		for (uint32_t i = 0; i < p->cache_nlibs; i++) {
			const unsigned char *e = p->cache + p->cache_base +
						 CACHE_HDR + (size_t)i * CACHE_ENT;
			uint32_t key, value;
			const char *k, *v;
			uint64_t hwcap;

			memcpy(&key, e + 4, 4);
			memcpy(&value, e + 8, 4);
			memcpy(&hwcap, e + 16, 8);
			if ((hwcap != 0) != pass)
				continue;
			k = cache_str(p, key);
			if (!k || strcmp(k, name))
				continue;
			v = cache_str(p, value);
			if (v && try_lib(p, v, loader, name))
				return 1;
		}
	return 0;
}

/* glibc's _dl_map_object() search order for a name without a '/'. */
static void find_lib(struct prog *p, int loader, const char *name)
{
	char path[PATH_MAX];

	if (strchr(name, '/')) {
		if (!expand(p->objs[loader].origin, name, strlen(name), path,
			    sizeof(path)))
			try_lib(p, path, loader, name);
		return;
	}
	if (!p->objs[loader].runpath)
		for (int l = loader; l >= 0; l = p->objs[l].loader)
			if (p->objs[l].rpath &&
			    search_list(p, p->objs[l].rpath, ":", l, loader, name))
				return;
	if (p->llp && search_list(p, p->llp, ":;", 0, loader, name))
		return;
	if (p->objs[loader].runpath &&
	    search_list(p, p->objs[loader].runpath, ":", loader, loader, name))
		return;
	if (p->objs[loader].nodeflib)
		return;
	if (cache_search(p, loader, name))
		return;
	for (size_t i = 0; i < sizeof(default_dirs) / sizeof(*default_dirs); i++) {
		snprintf(path, sizeof(path), "%s/%s", default_dirs[i], name);
		if (try_lib(p, path, loader, name))
			return;
	}
}

int elfscan_program_opts(const char *exe, elfscan_cb cb, void *arg,
			 const struct elfscan_opts *opts, char *err,
			 size_t errlen)
{
	struct prog p = {0};
	struct scan s;
	struct stat st;
	GElf_Ehdr eh;
	char *real, *origin = NULL;
	Elf *elf;
	int fd, r;

	r = scan_init(&s, cb, arg, opts, err, errlen);
	if (r)
		goto out;
	p.s = &s;
	p.llp = OPT(opts, ld_library_path);
	if (!p.llp)
		p.llp = getenv("LD_LIBRARY_PATH");
	if (p.llp && !*p.llp)
		p.llp = NULL;
	p.cache_path = OPT(opts, ld_cache);

	r = open_elf(&s, exe, &fd, &elf);
	if (r)
		goto out;
	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    fstat(fd, &st)) {
		r = -ENOEXEC;
		set_err(&s, "%s: not an ELF executable", exe);
		goto close;
	}
	p.cls = eh.e_ident[EI_CLASS];
	p.data = eh.e_ident[EI_DATA];
	p.machine = eh.e_machine;
	/* the loader gets the executable's origin from /proc/self/exe, with
	 * the symbolic links resolved */
	real = realpath(exe, NULL);
	if (real) {
		origin = dir_of(real);
		free(real);
	}
	add_obj(&p, elf, exe, origin, -1, &st);
close:
	elf_end(elf);
	close(fd);
	if (r)
		goto out;

	for (size_t i = 0; i < p.n && !p.stop; i++)
		for (size_t j = 0; j < p.objs[i].nneeded && !p.stop; j++) {
			const char *name = p.objs[i].needed[j];

			if (!is_loaded(&p, name))
				find_lib(&p, (int)i, name);
		}
	r = p.stop ? p.stop : s.count;
out:
	for (size_t i = 0; i < p.n; i++)
		obj_free(&p.objs[i]);
	free(p.objs);
	for (size_t i = 0; i < p.nnames; i++)
		free(p.names[i]);
	free(p.names);
	free(p.cache);
	scan_fini(&s, opts);
	return r;
}

int elfscan_program(const char *exe, elfscan_cb cb, void *arg, char *err,
		    size_t errlen)
{
	return elfscan_program_opts(exe, cb, arg, NULL, err, errlen);
}

/* ------------------------------------------------------------------------
 * A running process.
 */
struct mapped {
	unsigned maj, min;
	unsigned long ino;
};

/*
 * Open the file behind one mapping. The path is read in the process's
 * mount namespace first; a file whose inode differs from the mapping's is
 * only used if nothing better opens (overlayfs reports the lower inode in
 * maps), and never for a deleted file, which would be its replacement.
 */
static int open_mapped(pid_t pid, const char *path, int deleted,
		       const char *range, unsigned long ino)
{
	char buf[PATH_MAX + 64];
	int fd, other = -1, e = ENOENT;

	for (int i = 0; i < 2; i++) {
		struct stat st;

		if (i == 0)
			snprintf(buf, sizeof(buf), "/proc/%d/root%s", (int)pid, path);
		fd = open(i == 0 ? buf : path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0) {
			e = errno;
			continue;
		}
		if (!fstat(fd, &st) && S_ISREG(st.st_mode) && st.st_ino == ino) {
			if (other >= 0)
				close(other);
			return fd;
		}
		if (other < 0 && !deleted)
			other = fd;
		else
			close(fd);
	}
	snprintf(buf, sizeof(buf), "/proc/%d/map_files/%s", (int)pid, range);
	fd = open(buf, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
	if (fd >= 0) {
		if (other >= 0)
			close(other);
		return fd;
	}
	if (other >= 0)
		return other;
	return -(errno == ENOENT ? e : errno);
}

static int scan_mapped(struct scan *s, pid_t pid, const char *line,
		       struct mapped **seen, size_t *nseen)
{
	static const char deleted_sfx[] = " (deleted)";
	unsigned long start, end, ino;
	unsigned long long off;
	char perms[8], range[64];
	unsigned maj, min;
	const char *path;
	size_t plen;
	struct mapped *m;
	int n = -1, fd, deleted, r;
	char *p;
	Elf *elf;

	if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu %n", &start, &end, perms,
		   &off, &maj, &min, &ino, &n) < 7 || n < 0)
		return 0;
	path = line + n;
	plen = strcspn(path, "\n");
	if (path[0] != '/' || !ino || strlen(perms) < 3)
		return 0;
	/* executable, or read-only (the rodata part of a mapped object) */
	if (perms[2] != 'x' && !(perms[0] == 'r' && perms[1] != 'w'))
		return 0;
	for (size_t i = 0; i < *nseen; i++)
		if ((*seen)[i].ino == ino && (*seen)[i].maj == maj &&
		    (*seen)[i].min == min)
			return 0;
	m = realloc(*seen, (*nseen + 1) * sizeof(*m));
	if (!m)
		goto nomem;
	*seen = m;
	m[(*nseen)++] = (struct mapped){maj, min, ino};

	p = strndup(path, plen);
	if (!p)
		goto nomem;
	deleted = plen > strlen(deleted_sfx) &&
		  !strcmp(p + plen - strlen(deleted_sfx), deleted_sfx);
	snprintf(range, sizeof(range), "%lx-%lx", start, end);
	fd = open_mapped(pid, p, deleted, range, ino);
	if (fd < 0) {
		warn(s, "%s: %s", p, strerror(-fd));
		free(p);
		return 0;
	}
	r = 0;
	elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF)
		r = scan_elf(s, elf, p);
	elf_end(elf);
	close(fd);
	free(p);
	return r;
nomem:
	set_err(s, "%s", strerror(ENOMEM));
	return -ENOMEM;
}

int elfscan_pid_opts(pid_t pid, elfscan_cb cb, void *arg,
		     const struct elfscan_opts *opts, char *err, size_t errlen)
{
	struct mapped *seen = NULL;
	size_t nseen = 0, cap = 0;
	char path[64], *line = NULL;
	struct scan s;
	FILE *f;
	int r;

	r = scan_init(&s, cb, arg, opts, err, errlen);
	if (r)
		goto out;
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	f = pid > 0 ? fopen(path, "re") : NULL;
	if (!f) {
		r = pid > 0 ? -errno : -ESRCH;
		if (r == -ENOENT)
			r = -ESRCH;
		else if (r == -EPERM)
			r = -EACCES;
		if (r == -ESRCH)
			set_err(&s, "process %d: %s", (int)pid, strerror(ESRCH));
		else
			set_err(&s, "%s: %s", path, strerror(-r));
		goto out;
	}
	while (!r && getline(&line, &cap, f) > 0)
		r = scan_mapped(&s, pid, line, &seen, &nseen);
	if (!r && ferror(f)) {
		/* the process can exit while we read */
		r = errno == ESRCH ? -ESRCH : -EIO;
		set_err(&s, "%s: %s", path, strerror(-r));
	}
	fclose(f);
	if (!r)
		r = s.count;
out:
	free(line);
	free(seen);
	scan_fini(&s, opts);
	return r;
}

int elfscan_pid(pid_t pid, elfscan_cb cb, void *arg, char *err, size_t errlen)
{
	return elfscan_pid_opts(pid, cb, arg, NULL, err, errlen);
}

/* the section holding [addr, addr + n) into c, its bytes read: 0 or -1 */
static int vaddr_find(struct elfscan_vread *c, uintptr_t addr, size_t n)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(c->elf, scn))) {
		Elf_Data *d;

		/* (.eh_frame is SHT_X86_64_UNWIND where LLVM's linker made it) */
		if (!gelf_getshdr(scn, &sh) ||
		    (sh.sh_type != SHT_PROGBITS && sh.sh_type != SHT_X86_64_UNWIND) ||
		    !(sh.sh_flags & SHF_ALLOC) || (sh.sh_flags & SHF_COMPRESSED) ||
		    addr < sh.sh_addr || addr - sh.sh_addr > sh.sh_size ||
		    n > sh.sh_size - (addr - sh.sh_addr))
			continue;
		d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf || addr - sh.sh_addr + n > d->d_size)
			return -1;
		c->lo = sh.sh_addr;
		c->hi = sh.sh_addr + (sh.sh_size < d->d_size ? sh.sh_size : d->d_size);
		c->buf = d->d_buf;
		return 0;
	}
	return -1;
}

int elfscan_vaddr_read(void *elf, uintptr_t addr, void *buf, size_t n)
{
	struct elfscan_vread c = {.elf = elf};

	return elfscan_vaddr_read_cached(&c, addr, buf, n);
}

int elfscan_vaddr_read_cached(void *ctx, uintptr_t addr, void *buf, size_t n)
{
	struct elfscan_vread *c = ctx;

	if (!c->buf || addr < c->lo || addr > c->hi || n > c->hi - addr) {
		c->buf = NULL;
		if (vaddr_find(c, addr, n))
			return -1;
	}
	memcpy(buf, c->buf + (addr - c->lo), n);
	return 0;
}

int elfscan_is_static(const char *path)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), st = 0;
	size_t n;
	Elf *e;

	if (fd < 0)
		return 0;
	elf_version(EV_CURRENT);
	if ((e = elf_begin(fd, ELF_C_READ, NULL)) && elf_kind(e) == ELF_K_ELF &&
	    !elf_getphdrnum(e, &n) && n) {
		st = 1;
		for (size_t i = 0; i < n && st; i++) {
			GElf_Phdr ph;

			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_INTERP)
				st = 0;
		}
	}
	if (e)
		elf_end(e);
	close(fd);
	return st;
}
