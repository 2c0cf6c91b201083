/* SPDX-License-Identifier: MIT */
/*
 * mount-inst.c - one instance of the mount (its top, instances/NAME,
 * per_pid/PID): its settings, the recorder that records them, and what it
 * recorded read back.
 *
 * Settings become a bootconfig file (the session model's keys, bootcfg.c)
 * and a `trail record -q --allow-unknown --bootconfig FILE` of every
 * process (-a) or of one (-P PID), in flight-recorder mode with the
 * instance's buffer. A change stops that recorder (its file, complete,
 * joins the instance's earlier ones) and starts the next; tracing_on is
 * a store into the recorder's arena (the traceoff trigger's flag), at
 * once. `trace` asks the recorder for a snapshot (the arena's count, as
 * `trail snapshot` does) and prints the earlier files and the snapshot
 * with the report's text output; trace_pipe prints what came after its
 * mark and moves the mark.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../../src/common/arena.h"
#include "../../src/common/clock.h"
#include "../../src/common/util.h"
#include "mount.h"
#include "textrange.h"

#define MNT_OLD_MAX 4            /* files of earlier settings kept */
#define MNT_SETTLE_NS 20000000ull /* trace_pipe: records this old are complete */

static void msleep(unsigned ms)
{
	struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};

	nanosleep(&ts, NULL);
}

struct mnt_inst *mnt_inst_new(const char *name, pid_t pid)
{
	struct mnt_inst *I = calloc(1, sizeof(*I));

	if (!I || !(I->name = strdup(name))) {
		free(I);
		return NULL;
	}
	I->pid = pid;
	I->perpid = pid > 0;
	I->tracing_on = 1;
	I->buffer_kb = 1408; /* the kernel's default (per CPU there) */
	return I;
}

static void evset_free(struct mnt_evset *s)
{
	free(s->name);
	free(s->filter);
	for (int j = 0; j < s->ntrig; j++)
		free(s->trig[j]);
	free(s->trig);
}

void mnt_inst_free(struct mnt_inst *I)
{
	if (!I)
		return;
	mnt_stop(I);
	for (int i = 0; i < I->nev; i++)
		evset_free(&I->ev[i]);
	free(I->ev);
	for (int k = 0; k < MNT_FL_N; k++) {
		for (int i = 0; i < I->nfl[k]; i++)
			free(I->fl[k][i]);
		free(I->fl[k]);
	}
	for (int i = 0; i < I->nold; i++) {
		unlink(I->old[i]);
		free(I->old[i]);
	}
	free(I->old);
	for (unsigned i = 0; i < MNT_MARKERS; i++)
		free(I->mk[i].text);
	free(I->tracer);
	free(I->name);
	free(I);
}

struct mnt_inst *mnt_inst_find(const char *name, int perpid)
{
	for (int i = 1; i < mnt.ninst; i++)
		if (mnt.inst[i]->perpid == perpid && !strcmp(mnt.inst[i]->name, name))
			return mnt.inst[i];
	return NULL;
}

/* ----------------------------------------------------------- engine */

static pthread_mutex_t eng_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t eng_cv = PTHREAD_COND_INITIALIZER;
static int (*eng_fn)(void *);
static void *eng_arg;
static int eng_res, eng_busy, eng_done, eng_quit;
static pthread_t eng_thread;

void mnt_engine_init(void)
{
	eng_thread = pthread_self();
}

void mnt_engine_quit(void)
{
	pthread_mutex_lock(&eng_mu);
	eng_quit = 1;
	pthread_cond_broadcast(&eng_cv);
	pthread_mutex_unlock(&eng_mu);
}

int mnt_engine(int (*fn)(void *), void *arg)
{
	int r;

	if (pthread_equal(pthread_self(), eng_thread))
		return fn(arg);
	pthread_mutex_lock(&eng_mu);
	while (eng_busy)
		pthread_cond_wait(&eng_cv, &eng_mu);
	eng_busy = 1;
	eng_done = 0;
	eng_fn = fn;
	eng_arg = arg;
	pthread_cond_broadcast(&eng_cv);
	while (!eng_done)
		pthread_cond_wait(&eng_cv, &eng_mu);
	r = eng_res;
	eng_busy = 0;
	pthread_cond_broadcast(&eng_cv);
	pthread_mutex_unlock(&eng_mu);
	return r;
}

void mnt_engine_run(void)
{
	pthread_mutex_lock(&eng_mu);
	while (!eng_quit) {
		if (eng_fn) {
			int (*fn)(void *) = eng_fn;

			eng_fn = NULL;
			pthread_mutex_unlock(&eng_mu);
			eng_res = fn(eng_arg);
			pthread_mutex_lock(&eng_mu);
			eng_done = 1;
			pthread_cond_broadcast(&eng_cv);
		} else {
			pthread_cond_wait(&eng_cv, &eng_mu);
		}
	}
	pthread_mutex_unlock(&eng_mu);
}

/* ------------------------------------------------------------ recorder */

/* the value of a bootconfig key, quoted with the quote it does not hold */
static int bq(FILE *f, const char *v)
{
	char q = strchr(v, '"') ? '\'' : '"';

	if (strchr(v, '"') && strchr(v, '\''))
		return -1;
	fprintf(f, "%c%s%c", q, v, q);
	return 0;
}

/* the instance's settings as a bootconfig file; 0 when nothing is
 * recorded (no event, trigger or tracer), 1 written, -1 an error */
static int write_bconf(struct mnt_inst *I, const char *path)
{
	static const char *const keys[MNT_FL_N] = {"ftrace.filters", "ftrace.notraces",
						   "fgraph_filters"};
	int any = !!I->tracer, bad = 0;
	FILE *f;

	for (int i = 0; i < I->nev; i++)
		any |= I->ev[i].enabled || I->ev[i].ntrig;
	if (!any)
		return 0;
	if (!(f = fopen(path, "we")))
		return -1;
	fprintf(f, "# trail mount: %s%s\nftrace {\n", I->perpid ? "per_pid/" : "instances/",
		*I->name ? I->name : "(top)");
	fprintf(f, "\tbuffer_size = %uKB\n\toptions = overwrite\n", I->buffer_kb);
	if (!I->tracing_on)
		fprintf(f, "\ttracing_on = 0\n");
	if (I->tracer)
		fprintf(f, "\ttracer = %s\n", I->tracer);
	for (int k = 0; I->tracer && k < MNT_FL_N; k++)
		for (int i = 0; i < I->nfl[k]; i++) {
			fprintf(f, "\t%s %s ", keys[k], i ? "+=" : "=");
			bad |= bq(f, I->fl[k][i]);
			fprintf(f, "\n");
		}
	for (int i = 0; i < I->nev; i++) {
		const struct mnt_evset *s = &I->ev[i];
		const char *colon = strchr(s->name, ':');

		if (!s->enabled && !s->ntrig)
			continue;
		fprintf(f, "\tevent.%.*s.%s {\n", (int)(colon - s->name), s->name, colon + 1);
		if (s->enabled)
			fprintf(f, "\t\tenable\n");
		if (s->enabled && s->filter) {
			fprintf(f, "\t\tfilter = ");
			bad |= bq(f, s->filter);
			fprintf(f, "\n");
		}
		for (int j = 0; j < s->ntrig; j++) {
			fprintf(f, "\t\tactions %s ", j ? "+=" : "=");
			bad |= bq(f, s->trig[j]);
			fprintf(f, "\n");
		}
		fprintf(f, "\t}\n");
	}
	fprintf(f, "}\n");
	if (fclose(f) || bad)
		return -1;
	return 1;
}

struct spawn {
	struct mnt_inst *I;
	const char *bconf, *log;
	pid_t pid;
};

static int spawn_fn(void *arg)
{
	struct spawn *s = arg;
	char pidarg[32];
	pid_t pid;

	snprintf(pidarg, sizeof(pidarg), "%d", (int)s->I->pid);
	pid = fork();
	if (pid < 0)
		return -errno;
	if (pid == 0) {
		int fd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		int nul = open("/dev/null", O_RDONLY | O_CLOEXEC);
		sigset_t none;

		/* the mount gone (killed too): the recording ends, the
		 * processes are detached and go on untraced */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (getppid() == 1)
			_exit(1);
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
		if (fd < 0 || nul < 0 || dup2(nul, 0) < 0 || dup2(fd, 1) < 0 || dup2(fd, 2) < 0)
			_exit(127);
		if (s->I->perpid)
			execl(mnt.self, "trail", "record", "-q", "--allow-unknown", "--bootconfig",
			      s->bconf, "-o", s->I->out, "-P", pidarg, (char *)NULL);
		else
			execl(mnt.self, "trail", "record", "-q", "--allow-unknown", "--bootconfig",
			      s->bconf, "-o", s->I->out, "-a", (char *)NULL);
		_exit(127);
	}
	s->pid = pid;
	return 0;
}

struct reap {
	pid_t pid;
	int sig;
};

/* stop a recorder: SIGINT, then up to 10 s for its file, then SIGKILL
 * (what it wrote so far stays readable in FILE.part) */
static int reap_fn(void *arg)
{
	struct reap *r = arg;
	int st;

	kill(r->pid, r->sig);
	for (int i = 0; i < 2000; i++) {
		pid_t w = waitpid(r->pid, &st, WNOHANG);

		if (w == r->pid || (w < 0 && errno != EINTR))
			return 0;
		msleep(5);
	}
	kill(r->pid, SIGKILL);
	waitpid(r->pid, &st, 0);
	return 0;
}

/* the arena's memfd among the recorder's descriptors, its header mapped */
static void *map_arena(pid_t pid)
{
	char dir[64], path[320], link[256];
	struct dirent *d;
	void *m = NULL;
	DIR *D;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if (!(D = opendir(dir)))
		return NULL;
	while (!m && (d = readdir(D))) {
		ssize_t k;
		int fd;

		snprintf(path, sizeof(path), "%s/%s", dir, d->d_name);
		k = readlink(path, link, sizeof(link) - 1);
		if (k <= 0)
			continue;
		link[k] = '\0';
		if (strncmp(link, "/memfd:trail-arena", 18) ||
		    (fd = open(path, O_RDWR | O_CLOEXEC)) < 0)
			continue;
		m = mmap(NULL, sizeof(struct trail_arena_hdr), PROT_READ | PROT_WRITE, MAP_SHARED,
			 fd, 0);
		close(fd);
		if (m == MAP_FAILED ||
		    __atomic_load_n(&((struct trail_arena_hdr *)m)->magic, __ATOMIC_ACQUIRE) !=
			    TRAIL_ARENA_MAGIC) {
			if (m != MAP_FAILED)
				munmap(m, sizeof(struct trail_arena_hdr));
			m = NULL;
		}
	}
	closedir(D);
	return m;
}

/* the recorder's first error ("trail: MSG", maybe its input and a caret
 * line after it), for error_log */
static void child_failed(const char *log)
{
	char buf[4096] = "", *l[3] = {NULL, NULL, NULL}, *p = buf, *save = NULL;
	int n = 0;

	trail__read_file(log, buf, sizeof(buf));
	for (char *t = strtok_r(p, "\n", &save); t; t = strtok_r(NULL, "\n", &save)) {
		if (!n && strncmp(t, "trail: ", 7) && strncmp(t, "trail record: ", 14))
			continue;
		l[n++] = t;
		if (n == 3)
			break;
	}
	if (!l[0]) {
		mnt_error("trail_record", "the recorder ended at once", NULL, -1);
		return;
	}
	/* "  INPUT" then "  ...^": the caret error */
	if (l[1] && l[2] && !strncmp(l[1], "  ", 2) && strchr(l[2], '^') &&
	    strspn(l[2], " ") == (size_t)(strchr(l[2], '^') - l[2]))
		mnt_error("trail_record", l[0] + (l[0][5] == ':' ? 7 : 14), l[1] + 2,
			  (long)(strchr(l[2], '^') - l[2]) - 2);
	else
		mnt_error("trail_record", l[0] + (l[0][5] == ':' ? 7 : 14), NULL, -1);
}

static void keep_old(struct mnt_inst *I, const char *path)
{
	char **n;

	if (I->nold == MNT_OLD_MAX) {
		unlink(I->old[0]);
		free(I->old[0]);
		memmove(I->old, I->old + 1, (size_t)(I->nold - 1) * sizeof(*I->old));
		I->nold--;
	}
	if (!(n = realloc(I->old, (size_t)(I->nold + 1) * sizeof(*n))) ||
	    !(n[I->nold] = strdup(path))) {
		if (n)
			I->old = n;
		return;
	}
	I->old = n;
	I->nold++;
}

/* the snapshots a recorder's file has (OUT.N), removed */
static void drop_snapshots(const char *out)
{
	const char *base = strrchr(out, '/') + 1;
	size_t bl = strlen(base);
	struct dirent *d;
	DIR *D = opendir(mnt.work);

	if (!D)
		return;
	while ((d = readdir(D)))
		if (!strncmp(d->d_name, base, bl) && d->d_name[bl] == '.' &&
		    d->d_name[bl + 1] >= '0' && d->d_name[bl + 1] <= '9')
			unlinkat(dirfd(D), d->d_name, 0);
	closedir(D);
}

void mnt_stop(struct mnt_inst *I)
{
	struct stat st;
	char part[4200];

	if (!I->child)
		return;
	mnt_engine(reap_fn, &(struct reap){I->child, SIGINT});
	I->child = 0;
	if (I->hdr)
		munmap(I->hdr, sizeof(struct trail_arena_hdr));
	I->hdr = NULL;
	snprintf(part, sizeof(part), "%s.part", I->out);
	if (stat(I->out, &st) && !stat(part, &st))
		rename(part, I->out);
	if (!stat(I->out, &st))
		keep_old(I, I->out);
	drop_snapshots(I->out);
	free(I->out);
	I->out = NULL;
}

int mnt_apply(struct mnt_inst *I)
{
	char bconf[4200], log[4200];
	struct spawn s = {I, bconf, log, 0};
	const char *tag = I->perpid ? "pid" : "inst";
	int r, st;

	mnt_stop(I);
	I->gen++;
	snprintf(bconf, sizeof(bconf), "%s/%s-%s.%u.bconf", mnt.work, tag, *I->name ? I->name : "top",
		 I->gen);
	snprintf(log, sizeof(log), "%s/%s-%s.%u.log", mnt.work, tag, *I->name ? I->name : "top",
		 I->gen);
	r = write_bconf(I, bconf);
	if (r <= 0) {
		if (r < 0)
			mnt_error("trail_mount", "the settings do not fit a bootconfig file (a value "
				  "holds both quotes)", NULL, -1);
		unlink(bconf);
		return r < 0 ? -EINVAL : 0;
	}
	if (asprintf(&I->out, "%s/%s-%s.%u.dat", mnt.work, tag, *I->name ? I->name : "top",
		     I->gen) < 0) {
		I->out = NULL;
		return -ENOMEM;
	}
	if ((r = mnt_engine(spawn_fn, &s))) {
		mnt_error("trail_mount", strerror(-r), NULL, -1);
		free(I->out);
		I->out = NULL;
		return r;
	}
	I->child = s.pid;
	/* its arena, up to 10 s (a loaded machine: the checks read every
	 * process's objects) */
	for (int i = 0; i < 2000 && !I->hdr; i++) {
		if (waitpid(I->child, &st, WNOHANG) == I->child) {
			child_failed(log);
			I->child = 0;
			free(I->out);
			I->out = NULL;
			return -EINVAL;
		}
		if (!(I->hdr = map_arena(I->child)))
			msleep(5);
	}
	if (!I->hdr) {
		mnt_error("trail_mount", "the recorder made no buffer in 10 s: stopped", NULL, -1);
		mnt_stop(I);
		return -EIO;
	}
	return 0;
}

int mnt_set_tracing_on(struct mnt_inst *I, int on)
{
	I->tracing_on = on;
	if (I->hdr)
		__atomic_store_n(&((struct trail_arena_hdr *)I->hdr)->paused, (uint32_t)!on,
				 __ATOMIC_RELEASE);
	return 0;
}

/* ----------------------------------------------------------- reading */

/* the highest N of the recorder's OUT.N files (complete ones), 0: none */
static unsigned last_snapshot(const char *out)
{
	const char *base = strrchr(out, '/') + 1;
	size_t bl = strlen(base);
	struct dirent *d;
	unsigned max = 0;
	DIR *D = opendir(mnt.work);

	if (!D)
		return 0;
	while ((d = readdir(D))) {
		char *end;
		unsigned long n;

		if (strncmp(d->d_name, base, bl) || d->d_name[bl] != '.')
			continue;
		n = strtoul(d->d_name + bl + 1, &end, 10);
		if (!*end && n > max)
			max = (unsigned)n;
	}
	closedir(D);
	return max;
}

/* what the recorder holds now, in a file of its own (removed by the
 * caller): NULL when it did not answer in 5 s */
static char *snapshot(struct mnt_inst *I)
{
	unsigned before = last_snapshot(I->out), n = 0;
	char *path = NULL;

	__atomic_fetch_add(&((struct trail_arena_hdr *)I->hdr)->snapshots, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < 2500 && n <= before; i++) {
		n = last_snapshot(I->out);
		if (n <= before) {
			if (trail__proc_gone(I->child))
				break;
			msleep(2);
		}
	}
	if (n > before && asprintf(&path, "%s.%u", I->out, n) < 0)
		path = NULL;
	return path;
}

/* The instance's trace_marker lines put in among the records by time. */
struct marks {
	struct mnt_inst *I;
	FILE *f;
	uint64_t lo, hi; /* records and markers in (lo, hi] */
	unsigned next;   /* markers passed, oldest first */
};

static void markers_upto(void *arg, uint64_t ns)
{
	struct marks *w = arg;
	struct mnt_inst *I = w->I;

	while (w->next < I->nmk) {
		const struct mnt_marker *m =
			&I->mk[(I->mkhead + MNT_MARKERS - I->nmk + w->next) % MNT_MARKERS];

		if (m->ns > ns)
			break;
		w->next++;
		if (m->ns <= w->lo || m->ns > w->hi)
			continue;
		fprintf(w->f, "%16.16s-%-7d [???] %6llu.%06llu: tracing_mark_write: %s\n", m->comm,
			(int)m->pid, (unsigned long long)(m->ns / 1000000000ull),
			(unsigned long long)(m->ns % 1000000000ull / 1000), m->text);
	}
}

/* one trace file's records in the range, markers among them; quiet: no
 * header */
static void render(struct marks *w, const char *path, int quiet)
{
	text_range(path, w->lo, w->hi, quiet, w->f, markers_upto, w);
}

char *mnt_trace_text(struct mnt_inst *I, int pipe, size_t *len)
{
	struct marks w = {.I = I, .lo = I->mark_ns, .hi = UINT64_MAX};
	char *buf = NULL, *snap = NULL;
	int files = 0;

	if (!(w.f = open_memstream(&buf, len)))
		return NULL;
	if (pipe)
		w.hi = trail__mono_ns() - MNT_SETTLE_NS;
	/* a recorder that ended (per_pid/PID: its process exited): its file
	 * joins the earlier ones */
	if (I->child && trail__proc_gone(I->child))
		mnt_stop(I);
	if (I->child && I->hdr)
		snap = snapshot(I);
	for (int i = 0; i < I->nold; i++)
		render(&w, I->old[i], pipe || files++);
	if (snap) {
		render(&w, snap, pipe || files++);
		unlink(snap);
		free(snap);
	}
	if (!files && !pipe)
		fprintf(w.f, "# tracer: %s\n#\n# entries-in-buffer/entries-written: 0/0   #P:%ld\n#\n"
			"#           TASK-PID     CPU#     TIMESTAMP  FUNCTION\n"
			"#              | |         |         |         |\n",
			I->tracer ? I->tracer : "nop", sysconf(_SC_NPROCESSORS_ONLN));
	markers_upto(&w, UINT64_MAX);
	if (pipe && w.hi > I->mark_ns)
		I->mark_ns = w.hi;
	if (fclose(w.f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

void mnt_trace_clear(struct mnt_inst *I)
{
	I->mark_ns = trail__mono_ns();
	for (int i = 0; i < I->nold; i++) {
		unlink(I->old[i]);
		free(I->old[i]);
	}
	I->nold = 0;
}

void mnt_marker(struct mnt_inst *I, pid_t pid, const char *text, size_t len)
{
	struct mnt_marker *m = &I->mk[I->mkhead];
	char path[64];

	while (len && (text[len - 1] == '\n' || text[len - 1] == '\r'))
		len--;
	free(m->text);
	m->text = strndup(text, len);
	m->ns = trail__mono_ns();
	m->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	if (trail__read_file(path, m->comm, sizeof(m->comm)) <= 0)
		strcpy(m->comm, "<...>");
	m->comm[strcspn(m->comm, "\n")] = '\0';
	I->mkhead = (I->mkhead + 1) % MNT_MARKERS;
	if (I->nmk < MNT_MARKERS)
		I->nmk++;
}

/* `trail hist -i SNAPSHOT -e EVENT`'s output */
struct histrun {
	const char *file, *event;
	int fd;
	pid_t pid;
};

static int hist_fn(void *arg)
{
	struct histrun *h = arg;
	int p[2];
	pid_t pid;

	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid < 0) {
		close(p[0]);
		close(p[1]);
		return -errno;
	}
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (dup2(p[1], 1) < 0 || dup2(p[1], 2) < 0)
			_exit(127);
		execl(mnt.self, "trail", "hist", "-i", h->file, "-e", h->event, (char *)NULL);
		_exit(127);
	}
	close(p[1]);
	h->fd = p[0];
	h->pid = pid;
	return 0;
}

char *mnt_hist_text(struct mnt_inst *I, const char *event)
{
	struct mnt_evset *s = mnt_evset(I, event, 0);
	struct histrun h = {NULL, event, -1, 0};
	char *snap = NULL, *buf = NULL;
	size_t len = 0, cap = 0;
	int has = 0, st;

	for (int j = 0; s && j < s->ntrig; j++)
		has |= !strncmp(s->trig[j], "hist", 4);
	if (!has || !I->child || !I->hdr || !(snap = snapshot(I)))
		return strdup(has ? "# the histogram's recorder did not answer\n" : "");
	h.file = snap;
	if (!mnt_engine(hist_fn, &h)) {
		for (;;) {
			ssize_t k;

			if (len + 4096 + 1 > cap) {
				char *n = realloc(buf, cap = cap ? 2 * cap : 8192);

				if (!n)
					break;
				buf = n;
			}
			k = read(h.fd, buf + len, cap - len - 1);
			if (k <= 0)
				break;
			len += (size_t)k;
		}
		close(h.fd);
		waitpid(h.pid, &st, 0);
	}
	unlink(snap);
	free(snap);
	if (buf)
		buf[len] = '\0';
	return buf ? buf : strdup("");
}
