/* SPDX-License-Identifier: MIT */
/*
 * uevents.c - user events: events a program defines at run time (the
 * kernel's user_events ABI, answered by uefile.c; trail/uevent.h's API,
 * below). Each is an event descriptor made at run time and registered
 * like a probe's (trail__register_dyn), so sessions select, filter,
 * trigger and record it as any other; unlike a probe's it can go away
 * again (trail__unregister_dyn), when its last reference does, as the
 * kernel deletes a user event that does not persist.
 *
 * The kernel keeps a bit set in the program's memory while any tracer
 * records the event (an "enabler": an address, a bit, 4 or 8 bytes);
 * here that is while the descriptor's status word is not 0: the bits are
 * set or cleared at registration, and whenever a session joins or leaves
 * (this file is an event source for that: its join and leave run under
 * the control lock, after the status words changed). Everything here is
 * under the control lock; writers take none.
 */
#include "uevents.h"

#include <errno.h>
#include <linux/capability.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <trail/trail.h>
#include <trail/uevent.h>

#define UE_MAX_EVENTS 32768 /* the kernel's user_events_max default */
#define UE_STACK_OUT 16384  /* a record converted on the stack */

struct enabler {
	uint64_t addr;
	uint32_t bit, size;
	struct uev *u;
};

static struct uev *uevs;    /* every user event of the process */
static uint32_t nuevs;
static uint64_t multi_id;   /* the next NAME.<id> of a MULTI_FORMAT event */
static struct enabler *ens; /* every enabler */
static uint32_t nens, cap_ens;

/* ------------------------------------------------------------ enable bits */

static void bit_set(const struct enabler *e, int on)
{
	if (e->size == 8) {
		uint64_t m = (uint64_t)1 << e->bit;

		if (on)
			__atomic_fetch_or((uint64_t *)(uintptr_t)e->addr, m, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and((uint64_t *)(uintptr_t)e->addr, ~m, __ATOMIC_RELAXED);
	} else {
		uint32_t m = 1u << e->bit;

		if (on)
			__atomic_fetch_or((uint32_t *)(uintptr_t)e->addr, m, __ATOMIC_RELAXED);
		else
			__atomic_fetch_and((uint32_t *)(uintptr_t)e->addr, ~m, __ATOMIC_RELAXED);
	}
}

/* every enabler of u (NULL: of every event) told its event's state */
static void sync_bits(const struct uev *u)
{
	for (uint32_t i = 0; i < nens; i++)
		if (!u || ens[i].u == u)
			bit_set(&ens[i], __atomic_load_n(&ens[i].u->state, __ATOMIC_ACQUIRE) != 0);
}

/* Can we write size bytes at addr? A write of what is there, through the
 * kernel (which checks the mapping's protection and says EFAULT, where a
 * store would kill the process). The program does not write its enable
 * words itself, and we hold the lock: nothing is lost. */
static int writable(uint64_t addr, unsigned size)
{
	uint64_t v = 0;
	struct iovec l = {&v, size}, r = {(void *)(uintptr_t)addr, size};
	ssize_t n = process_vm_readv(getpid(), &l, 1, &r, 1, 0);

	if (n < 0 && (errno == ENOSYS || errno == EPERM))
		return 1; /* not allowed to ask: take the program's word */
	if (n != (ssize_t)size)
		return 0;
	n = process_vm_writev(getpid(), &l, 1, &r, 1, 0);
	return n == (ssize_t)size || (n < 0 && (errno == ENOSYS || errno == EPERM));
}

int trail__uev_enabler_find(uint64_t addr, unsigned bit)
{
	for (uint32_t i = 0; i < nens; i++)
		if (ens[i].addr == addr && ens[i].bit == bit)
			return (int)i;
	return -1;
}

int trail__uev_enabler_add(struct uev *u, uint64_t addr, unsigned bit, unsigned size)
{
	struct enabler *e;

	if (trail__uev_enabler_find(addr, bit) >= 0)
		return -EADDRINUSE;
	if (!writable(addr, size))
		return -ENOMEM; /* (the kernel's answer: its enabler is not made) */
	if (nens == cap_ens) {
		uint32_t nc = cap_ens ? cap_ens * 2 : 16;
		struct enabler *ne = realloc(ens, nc * sizeof(*ne));

		if (!ne)
			return -ENOMEM;
		ens = ne;
		cap_ens = nc;
	}
	e = &ens[nens++];
	*e = (struct enabler){addr, bit, size, u};
	u->refs++;
	bit_set(e, __atomic_load_n(&u->state, __ATOMIC_ACQUIRE) != 0);
	return 0;
}

int trail__uev_enabler_remove(uint64_t addr, unsigned bit, struct uev **del)
{
	int i = trail__uev_enabler_find(addr, bit), r = 0;
	struct enabler e;

	*del = NULL;
	if (i < 0)
		return -ENOENT;
	e = ens[i];
	ens[i] = ens[--nens];
	if (writable(e.addr, e.size))
		bit_set(&e, 0);
	else
		r = -EFAULT;
	trail__uev_put(e.u, del);
	return r;
}

/* ---------------------------------------------------------------- events */

int trail__uev_perfmon(void)
{
	struct __user_cap_header_struct h = {_LINUX_CAPABILITY_VERSION_3, 0};
	struct __user_cap_data_struct d[2];

	memset(d, 0, sizeof(d));
	if (syscall(SYS_capget, &h, d))
		return 0;
	/* CAP_SYS_ADMIN 21, CAP_PERFMON 38 */
	return (d[0].effective >> 21 & 1) || (d[1].effective >> (38 - 32) & 1);
}

/* (memory from mmap: a session's definitions are made in the control
 * signal handler) */
static struct uev *make(const char *system, const struct trail_ue_def *def, const char *tname)
{
	uint8_t *meta = mmap(NULL, 65536, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	size_t n = meta != MAP_FAILED ? trail_ue_meta(def, system, tname, meta, 65536) : 0, size;
	struct uev *u = MAP_FAILED;

	size = sizeof(*u) + n;
	if (n && strlen(system) <= TRAIL_UE_NAME_MAX)
		u = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (u != MAP_FAILED) {
		u->map_size = size;
		snprintf(u->system, sizeof(u->system), "%s", system);
		snprintf(u->tname, sizeof(u->tname), "%s", tname);
		u->def = *def;
		memcpy(u->meta, meta, n);
		u->meta_size = (uint32_t)n;
		u->out_max = (uint32_t)trail_ue_out_max(def);
		u->ev.abi = TRAIL_EVENT_ABI;
		u->ev.size = sizeof(u->ev);
		u->ev.state = &u->state;
		u->ev.meta = u->meta;
		u->evp[0] = &u->ev;
	}
	if (meta != MAP_FAILED)
		munmap(meta, 65536);
	return u == MAP_FAILED ? NULL : u;
}

int trail__uev_get(const char *system, const struct trail_ue_def *def, int multi, int persist,
		   struct uev **out)
{
	const char *name = trail_ue_name(def);
	char tname[sizeof(((struct uev *)0)->tname)];
	struct uev *u;

	for (u = uevs; u; u = u->next) {
		if ((int)u->multi != multi || strcmp(u->system, system) ||
		    strcmp(trail_ue_name(&u->def), name))
			continue;
		if (trail_ue_same(&u->def, def))
			break;
		if (!multi)
			return -EADDRINUSE;
	}
	if (!u) {
		if (nuevs >= UE_MAX_EVENTS)
			return -EMFILE;
		if (multi)
			snprintf(tname, sizeof(tname), "%s.%llx", name, (unsigned long long)multi_id++);
		else
			snprintf(tname, sizeof(tname), "%s", name);
		if (!(u = make(system, def, tname)))
			return -ENOMEM;
		u->multi = (uint32_t)multi;
		u->persist = (uint32_t)persist;
		u->refs = persist ? 1 : 0;
		u->next = uevs;
		uevs = u;
		nuevs++;
		/* (enabled at once for the sessions that select it) */
		trail__register_dyn(&u->dso, &u->rt, u->evp);
	}
	u->refs++;
	*out = u;
	return 0;
}

static void unlink_uev(struct uev *u)
{
	for (struct uev **p = &uevs; *p; p = &(*p)->next)
		if (*p == u) {
			*p = u->next;
			nuevs--;
			return;
		}
}

void trail__uev_put(struct uev *u, struct uev **del)
{
	*del = NULL;
	if (--u->refs || u->persist)
		return;
	unlink_uev(u);
	*del = u;
}

void trail__uev_delete(struct uev *u)
{
	if (!u)
		return;
	/* (-EBUSY: a writer we could not wait for may hold it: kept) */
	if (!trail__unregister_dyn(&u->dso))
		munmap(u, u->map_size);
}

int trail__uev_del_name(const char *name, struct uev **del)
{
	int found = 0;

	*del = NULL;
	for (struct uev *u = uevs, *nx; u; u = nx) {
		nx = u->next;
		if (strcmp(trail_ue_name(&u->def), name) ||
		    (strcmp(u->system, TRAIL_UE_PROVIDER) && strcmp(u->system, TRAIL_UE_MULTI_PROVIDER)))
			continue;
		found = 1;
		if (u->refs > (u->persist ? 1u : 0u) ||
		    (__atomic_load_n(&u->state, __ATOMIC_RELAXED) & ((1u << TRAIL_MAX_SESSIONS) - 1)))
			return -EBUSY;
		if (u->persist && !trail__uev_perfmon())
			return -EPERM;
		unlink_uev(u);
		u->next = *del; /* (a list of them, for the caller) */
		*del = u;
	}
	return found ? 0 : -ENOENT;
}

size_t trail__uev_status(char *buf, size_t n)
{
	size_t o = 0;
	uint32_t active = 0, busy = 0;

#define PUT(...)                                                                                   \
	do {                                                                                       \
		int k_ = snprintf(buf + (o < n ? o : n), o < n ? n - o : 0, __VA_ARGS__);          \
		o += k_ > 0 ? (size_t)k_ : 0;                                                      \
	} while (0)
	for (const struct uev *u = uevs; u; u = u->next) {
		int on = __atomic_load_n(&u->state, __ATOMIC_RELAXED) != 0;

		if (strcmp(u->system, TRAIL_UE_PROVIDER) && strcmp(u->system, TRAIL_UE_MULTI_PROVIDER))
			continue;
		PUT("%s%s\n", u->tname, on ? " # Used by trail" : "");
		active++;
		busy += (uint32_t)on;
	}
	PUT("\nActive: %u\nBusy: %u\n", active, busy);
#undef PUT
	return o < n ? o : n;
}

/* ------------------------------------------------------------- recording */

int trail__uev_write_kernel(struct uev *u, const uint8_t *p, size_t len)
{
	uint8_t stack[UE_STACK_OUT], *out = stack;
	size_t olen;
	int r;

	if (len < u->def.min_size)
		return -EINVAL;
	if (!__atomic_load_n(&u->state, __ATOMIC_RELAXED))
		return -EBADF;
	if (u->def.direct) {
		trail__write(&u->ev, p, u->def.min_size);
		return 0;
	}
	if (u->out_max > sizeof(stack) && !(out = malloc(u->out_max)))
		return -ENOMEM;
	r = trail_ue_convert(&u->def, p, len, out, &olen);
	if (!r)
		trail__write(&u->ev, out, (uint32_t)olen);
	if (out != stack)
		free(out);
	return r;
}

/* ---------------------------------------------------- the event source */

/* (a join's or leave's status words changed: the program's bits follow) */
static int ue_join(unsigned s, struct psess *ps, void *uc)
{
	(void)s;
	(void)ps;
	(void)uc;
	sync_bits(NULL);
	return 0;
}

static void ue_leave(unsigned s)
{
	(void)s;
	sync_bits(NULL);
}

/* A session's kept definitions ("@uevent DEF": `trail probe 'u:...'`),
 * made before it joins, as the kernel's u: lines make persistent events:
 * a program registering one later gets it, or EADDRINUSE if its fields
 * differ. Under the control lock, in the control signal handler. */
static int ue_line(const char *v, size_t len, void *arg)
{
	struct trail_ue_def def;
	struct trail_filter_err e;
	char text[TRAIL_UE_DESC_MAX];
	struct uev *u;
	int *err = arg;

	if (len >= sizeof(text))
		return 0;
	memcpy(text, v, len);
	text[len] = '\0';
	if (trail_ue_parse(text, TRAIL_UE_EXT, &def, &e))
		return 0; /* (checked by the CLI) */
	if (!trail__uev_get(TRAIL_UE_PROVIDER, &def, 0, 1, &u))
		u->refs--; /* (only its own reference: it persists) */
	else
		++*err; /* another process's different fields: left to it */
	return 0;
}

static int ue_define(unsigned s, struct psess *ps)
{
	int bad = 0;

	(void)s;
	trail__spec_opts(ps->spec, "uevent", ue_line, &bad);
	return 0;
}

static const struct trail_source uev_source = {.name = "uevents", .define = ue_define,
					       .join = ue_join, .leave = ue_leave};
TRAIL_SOURCE(uev_source);

/* --------------------------------------------------- trail/uevent.h's API */

#define API __attribute__((visibility("default")))

API struct trail_uevent *trail_uevent_new(const char *system, const char *def,
					  struct trail_uevent_err *err)
{
	struct trail_filter_err e = {0, ""};
	struct trail_ue_def *d;
	struct uev *u = NULL;
	sigset_t saved;
	int r;

	if (!def || (system && (!*system || strlen(system) > TRAIL_UE_NAME_MAX))) {
		if (err) {
			err->pos = 0;
			snprintf(err->msg, sizeof(err->msg), "%s", def ? "Invalid system name" : "No definition");
		}
		errno = EINVAL;
		return NULL;
	}
	for (const char *c = system; c && *c; c++)
		if (!((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') ||
		      *c == '_')) {
			if (err) {
				err->pos = 0;
				snprintf(err->msg, sizeof(err->msg), "Invalid system name (letters, digits and _)");
			}
			errno = EINVAL;
			return NULL;
		}
	if (!(d = malloc(sizeof(*d)))) {
		errno = ENOMEM;
		return NULL;
	}
	r = trail_ue_parse(def, TRAIL_UE_EXT, d, &e);
	if (!r) {
		trail__init();
		ue_lock(&saved);
		r = trail__uev_get(system ? system : TRAIL_UE_PROVIDER, d, 0, 0, &u);
		if (!r)
			u->handles++;
		ue_unlock(&saved);
	}
	free(d);
	if (r) {
		if (err) {
			err->pos = r == -EINVAL || r == -E2BIG ? e.pos : 0;
			snprintf(err->msg, sizeof(err->msg), "%s",
				 r == -EINVAL || r == -E2BIG ? e.msg
				 : r == -EADDRINUSE ? "An event of that name has other fields"
						    : strerror(-r));
		}
		errno = r == -E2BIG ? EINVAL : -r;
		return NULL;
	}
	return (struct trail_uevent *)u;
}

API const uint32_t *trail_uevent_state(const struct trail_uevent *ev)
{
	return &((const struct uev *)(const void *)ev)->state;
}

API unsigned trail_uevent_nfields(const struct trail_uevent *ev)
{
	return ((const struct uev *)(const void *)ev)->def.nfields;
}

API int trail_uevent_field(const struct trail_uevent *ev, unsigned i, const char **name,
			   enum trail_uevent_kind *kind, unsigned *size)
{
	const struct uev *u = (const void *)ev;
	const struct trail_ue_field *f;
	enum trail_uevent_kind k;

	if (i >= u->def.nfields)
		return -EINVAL;
	f = &u->def.f[i];
	switch (f->kind) {
	case TRAIL_UE_INT:
		k = f->boolean ? TRAIL_UEVENT_BOOL : f->sign ? TRAIL_UEVENT_SIGNED : TRAIL_UEVENT_UNSIGNED;
		break;
	case TRAIL_UE_FLOAT: k = TRAIL_UEVENT_FLOAT; break;
	case TRAIL_UE_CHARS: k = TRAIL_UEVENT_STRING; break;
	case TRAIL_UE_BLOB: k = TRAIL_UEVENT_BYTES; break;
	default: k = f->str ? TRAIL_UEVENT_STRING : TRAIL_UEVENT_BYTES; break;
	}
	if (name)
		*name = trail_ue_fname(&u->def, i);
	if (kind)
		*kind = k;
	if (size)
		*size = f->kind == TRAIL_UE_LOC ? 0 : f->size;
	return 0;
}

/* one value into out (room for the field's most) as the field wants it */
static size_t put_value(const struct trail_ue_field *f, const struct trail_uvalue *v, uint8_t *out)
{
	uint16_t n16;
	size_t n;

	switch (f->kind) {
	case TRAIL_UE_INT: {
		uint64_t x = f->boolean ? v->u != 0 : v->u;

		memcpy(out, &x, f->size); /* (little-endian: the low bytes) */
		return f->size;
	}
	case TRAIL_UE_FLOAT:
		if (f->size == 4) {
			float x = (float)v->d;

			memcpy(out, &x, 4);
		} else {
			memcpy(out, &v->d, 8);
		}
		return f->size;
	case TRAIL_UE_BLOB:
		n = v->p ? (v->len == TRAIL_UVALUE_STRLEN ? strlen(v->p) : v->len) : 0;
		if (n > f->size)
			n = f->size;
		if (n)
			memcpy(out, v->p, n);
		memset(out + n, 0, f->size - n);
		return f->size;
	default:
		break;
	}
	if (!v->p && (f->kind == TRAIL_UE_CHARS || f->str)) {
		n16 = TRAIL_STRING_NULL;
		memcpy(out, &n16, 2);
		return 2;
	}
	n = !v->p ? 0 : v->len == TRAIL_UVALUE_STRLEN ? strnlen(v->p, TRAIL_STRING_MAX) : v->len;
	if (f->kind == TRAIL_UE_CHARS || f->str) {
		const char *z = n ? memchr(v->p, 0, n) : NULL;

		if (z) /* a string ends at its NUL */
			n = (size_t)(z - (const char *)v->p);
		if (n > (f->kind == TRAIL_UE_CHARS ? f->size : TRAIL_STRING_MAX))
			n = f->kind == TRAIL_UE_CHARS ? f->size : TRAIL_STRING_MAX;
		n16 = (uint16_t)n;
	} else {
		n /= f->esize;
		if (n > TRAIL_SEQ_MAX)
			n = TRAIL_SEQ_MAX;
		n16 = (uint16_t)n;
		n *= f->esize;
	}
	memcpy(out, &n16, 2);
	if (n)
		memcpy(out + 2, v->p, n);
	return 2 + n;
}

/* (GCC takes a buffer written in part, as far as the record goes, and
 * read as far, for one it may read uninitialized) */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
API int trail_uevent_write(struct trail_uevent *ev, const struct trail_uvalue *v, unsigned n)
{
	struct uev *u = (void *)ev;
	uint8_t stack[UE_STACK_OUT], *out = stack;
	size_t o = 0;

	if (n != u->def.nfields)
		return -EINVAL;
	if (!__atomic_load_n(&u->state, __ATOMIC_RELAXED))
		return 0;
	if (u->out_max > sizeof(stack) && !(out = malloc(u->out_max)))
		return -ENOMEM;
	for (unsigned i = 0; i < n; i++)
		o += put_value(&u->def.f[i], &v[i], out + o);
	trail__write(&u->ev, out, (uint32_t)o);
	if (out != stack)
		free(out);
	return 0;
}

API int trail_uevent_writev(struct trail_uevent *ev, const struct iovec *iov, int iovcnt)
{
	struct uev *u = (void *)ev;
	uint8_t stack[UE_STACK_OUT], *p = stack;
	size_t len = 0, o = 0;
	int r;

	if (iovcnt < 0)
		return -EINVAL;
	if (!__atomic_load_n(&u->state, __ATOMIC_RELAXED))
		return 0;
	if (iovcnt == 1) {
		r = trail__uev_write_kernel(u, iov[0].iov_base, iov[0].iov_len);
		return r == -EBADF ? 0 : r; /* (turned off meanwhile) */
	}
	for (int i = 0; i < iovcnt; i++)
		len += iov[i].iov_len;
	if (len > sizeof(stack) && !(p = malloc(len)))
		return -ENOMEM;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p + o, iov[i].iov_base, iov[i].iov_len);
		o += iov[i].iov_len;
	}
	r = trail__uev_write_kernel(u, p, len);
	if (p != stack)
		free(p);
	return r == -EBADF ? 0 : r;
}

#pragma GCC diagnostic pop

API void trail_uevent_free(struct trail_uevent *ev)
{
	struct uev *u = (void *)ev, *del = NULL;
	sigset_t saved;

	if (!u)
		return;
	ue_lock(&saved);
	u->handles--;
	trail__uev_put(u, &del);
	ue_unlock(&saved);
	trail__uev_delete(del);
}
