/* SPDX-License-Identifier: MIT */
/*
 * latency.c - timerlat and osnoise measuring threads (latency.h).
 */
#include "latency.h"
#include "kattr.h"

#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

uint64_t lat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static void put(uint64_t *p, uint64_t v)
{
	__atomic_store_n(p, v, __ATOMIC_RELAXED);
}

/* one sample of c: the common statistics and the histogram */
static void account(struct lat_run *r, struct lat_cpu *c, uint64_t v)
{
	uint64_t b = v / r->o.bucket_ns;

	put(&c->cur, v);
	if (!c->count || v < c->min)
		put(&c->min, v);
	if (v > c->max)
		put(&c->max, v);
	put(&c->sum, c->sum + v);
	if (c->hist && b < r->o.entries)
		__atomic_fetch_add(&c->hist[b], 1, __ATOMIC_RELAXED);
	else
		put(&c->over, c->over + 1);
	put(&c->count, c->count + 1);
}

static void stop_at(struct lat_run *r, struct lat_cpu *c, uint64_t v, uint64_t due, uint64_t woke,
		    int irq)
{
	if (!__atomic_exchange_n(&r->stop, 1, __ATOMIC_RELAXED)) {
		r->stopped_irq = irq;
		if (r->o.on_stop)
			r->o.on_stop(r->o.stop_arg);
		r->stopped_value = v;
		r->stopped_due = due;
		r->stopped_woke = woke;
		r->stopped_tid = c->tid;
		r->stopped_cpu = c->cpu;
	}
}

/* ------------------------------------------------------------- counters */

/* The CPU's column in a /proc/interrupts-shaped file: the sum of every
 * row's count but NMI's (*nmi), or -1 */
static int64_t proc_column(const char *path, int cpu, uint64_t *nmi)
{
	char line[8192], *tok, *save;
	int col = -1, i = 0;
	uint64_t sum = 0;
	FILE *f = fopen(path, "re");

	if (!f)
		return -1;
	if (!fgets(line, sizeof(line), f)) {
		fclose(f);
		return -1;
	}
	for (tok = strtok_r(line, " \t\n", &save); tok; tok = strtok_r(NULL, " \t\n", &save), i++)
		if (!strncmp(tok, "CPU", 3) && atoi(tok + 3) == cpu)
			col = i;
	if (nmi)
		*nmi = 0;
	while (col >= 0 && fgets(line, sizeof(line), f)) {
		char *label = strtok_r(line, " \t\n", &save), *end;
		uint64_t v = 0;
		int k;

		for (k = 0, tok = strtok_r(NULL, " \t\n", &save); tok && k < col;
		     k++, tok = strtok_r(NULL, " \t\n", &save))
			;
		if (!label || !tok || k != col)
			continue; /* (ERR:, MIS:: one count, not per CPU) */
		v = strtoull(tok, &end, 10);
		if (*end)
			continue;
		if (nmi && !strcmp(label, "NMI:"))
			*nmi += v;
		else
			sum += v;
	}
	fclose(f);
	return col < 0 ? -1 : (int64_t)sum;
}

struct counts {
	uint64_t irq, nmi, softirq, nivcsw;
};

static void counts_read(int cpu, struct counts *k)
{
	struct rusage ru;
	int64_t v;

	memset(k, 0, sizeof(*k));
	if ((v = proc_column("/proc/interrupts", cpu, &k->nmi)) > 0)
		k->irq = (uint64_t)v;
	if ((v = proc_column("/proc/softirqs", cpu, NULL)) > 0)
		k->softirq = (uint64_t)v;
	if (!getrusage(RUSAGE_THREAD, &ru))
		k->nivcsw = (uint64_t)ru.ru_nivcsw;
}

/* -------------------------------------------------------------- threads */

struct targ {
	struct lat_run *r;
	struct lat_cpu *c;
};

static int setup(struct lat_run *r, struct lat_cpu *c)
{
	cpu_set_t set;

	char name[16];

	/* (the kernel's threads' names: a report shows timerlat/1-PID) */
	snprintf(name, sizeof(name), "%s/%d", r->o.tracer == LAT_TIMERLAT ? "timerlat" : "osnoise",
		 c->cpu);
	prctl(PR_SET_NAME, name, 0, 0, 0);
	c->tid = (long)gettid();
	CPU_ZERO(&set);
	CPU_SET(c->cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		c->failed = -errno;
		snprintf(c->why, sizeof(c->why), "CPU %d: %s", c->cpu, strerror(errno));
		return -1;
	}
	if (r->o.policy == SCHED_OTHER && r->o.prio &&
	    setpriority(PRIO_PROCESS, (id_t)gettid(), r->o.prio))
		__atomic_store_n(&r->prio_note, 1, __ATOMIC_RELAXED);
	if (r->o.policy != SCHED_OTHER) {
		struct sched_param sp = {.sched_priority = r->o.prio};

		if (pthread_setschedparam(pthread_self(), r->o.policy, &sp))
			__atomic_store_n(&r->prio_note, 1, __ATOMIC_RELAXED);
	}
	return 0;
}

/* timerlat: the local timer interrupt of the sample due at `due` (the
 * first at or after it, to the microsecond the kernel prints) */
struct tfind {
	uint64_t due, woke, at;
};

static void timer_seen(void *arg, const struct kevent *e)
{
	struct tfind *t = arg;

	if (e->kind == KEV_IRQ && e->timer && !t->at && e->ts + 1000 > t->due && e->ts <= t->woke)
		t->at = e->ts;
}

static void irq_account(struct lat_run *r, struct lat_cpu *c, uint64_t seq, uint64_t lat)
{
	uint64_t n = c->irq_count + 1, b = lat / r->o.bucket_ns;

	if (c->irq_hist && b < r->o.entries)
		__atomic_fetch_add(&c->irq_hist[b], 1, __ATOMIC_RELAXED);
	else
		put(&c->irq_over, c->irq_over + 1);
	put(&c->irq_cur, lat);
	if (n == 1 || lat < c->irq_min)
		put(&c->irq_min, lat);
	if (lat > c->irq_max)
		put(&c->irq_max, lat);
	put(&c->irq_sum, c->irq_sum + lat);
	put(&c->irq_count, n);
	if (r->o.irq_sample)
		r->o.irq_sample(r->o.arg, c->cpu, seq, lat);
}

static void *timerlat_thread(void *arg)
{
	struct lat_run *r = ((struct targ *)arg)->r;
	struct lat_cpu *c = ((struct targ *)arg)->c;
	uint64_t next, t, seq = 0;
	struct kpipe *kp = NULL;

	free(arg);
	if (setup(r, c))
		return NULL;
	if (r->o.live && (kp = malloc(sizeof(*kp))) && kattr_pipe_open(r->o.live, c->cpu, kp)) {
		free(kp);
		kp = NULL;
	}
	c->live = kp != NULL;
	next = lat_now() + r->o.period_ns;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};
		uint64_t lat;

		if (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
			continue; /* (a signal: the same deadline again) */
		t = lat_now();
		lat = t > next ? t - next : 0;
		seq++;
		if (kp) { /* (after the measure: the pipe's reading is not in it) */
			struct tfind tf = {next, t, 0};

			kattr_pipe_read(kp, timer_seen, &tf);
			if (tf.at) {
				uint64_t il = tf.at > next ? tf.at - next : 0;

				irq_account(r, c, seq, il);
				if (r->o.stop_irq_ns && il >= r->o.stop_irq_ns) {
					stop_at(r, c, il, next, t, 1);
				}
			}
		}
		account(r, c, lat);
		if (r->o.sample)
			r->o.sample(r->o.arg, c->cpu, seq, lat, NULL);
		if (r->o.stop_ns && lat >= r->o.stop_ns)
			stop_at(r, c, lat, next, t, 0);
		next += r->o.period_ns;
		while (next <= t) /* periods missed: the next one ahead */
			next += r->o.period_ns;
	}
	if (kp) {
		kattr_pipe_close(kp);
		free(kp);
	}
	return NULL;
}

/* osnoise: a window's interference from the kernel's events */
#define GAPS_MAX 1024

struct wfind {
	uint64_t start, end;
	long tid;
	const uint64_t *gaps; /* pairs: start, end */
	int ngaps;
	uint8_t *hit;         /* each gap: an event fell in it */
	uint64_t nmi, irq, softirq, thread;
};

static void window_seen(void *arg, const struct kevent *e)
{
	struct wfind *w = arg;

	/* (the kernel prints microseconds: a microsecond's slack each side) */
	if (e->ts + 1000 < w->start || e->ts > w->end + 1000)
		return;
	if (e->kind == KEV_SWITCH && e->prev_pid != w->tid)
		return; /* (only the thread's being switched out is interference) */
	switch (e->kind) {
	case KEV_IRQ: w->irq++; break;
	case KEV_SOFTIRQ: w->softirq++; break;
	case KEV_NMI: w->nmi++; break;
	case KEV_SWITCH: w->thread++; break;
	default: return;
	}
	for (int i = 0; i < w->ngaps; i++)
		if (e->ts + 1000 >= w->gaps[2 * i] && e->ts <= w->gaps[2 * i + 1] + 1000)
			w->hit[i] = 1;
}

static void *osnoise_thread(void *arg)
{
	struct lat_run *r = ((struct targ *)arg)->r;
	struct lat_cpu *c = ((struct targ *)arg)->c;
	uint64_t seq = 0, *gapv = NULL;
	uint8_t *hit = NULL;
	struct kpipe *kp = NULL;

	free(arg);
	if (setup(r, c))
		return NULL;
	if (r->o.live && (kp = malloc(sizeof(*kp))) && (gapv = malloc(GAPS_MAX * 16)) &&
	    (hit = malloc(GAPS_MAX)) && !kattr_pipe_open(r->o.live, c->cpu, kp)) {
		struct wfind none = {0};

		kattr_pipe_read(kp, window_seen, &none); /* (what came before) */
	} else {
		free(kp);
		kp = NULL;
	}
	c->live = kp != NULL;
	while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED)) {
		uint64_t start, last, t, noise = 0, single = 0, gaps = 0, w[OSN_N], ex;
		struct counts k0, k1;

		counts_read(c->cpu, &k0);
		start = last = lat_now();
		for (uint32_t spins = 0; (t = lat_now()) - start < r->o.runtime_ns; spins++) {
			uint64_t d = t - last;

			if (!(spins & 4095) && __atomic_load_n(&r->stop, __ATOMIC_RELAXED))
				break;

			if (d > r->o.thresh_ns) {
				if (kp && gaps < GAPS_MAX) {
					gapv[2 * gaps] = last;
					gapv[2 * gaps + 1] = t;
				}
				noise += d;
				gaps++;
				account(r, c, d);
				if (d > single)
					single = d;
				if (r->o.stop_ns && d > r->o.stop_ns) {
					stop_at(r, c, d, 0, 0, 0);
					break;
				}
			}
			last = t;
		}
		counts_read(c->cpu, &k1);
		w[OSN_RUNTIME] = t - start;
		w[OSN_NOISE] = noise;
		w[OSN_MAX_SINGLE] = single;
		w[OSN_NMI] = k1.nmi - k0.nmi;
		w[OSN_IRQ] = k1.irq - k0.irq;
		w[OSN_SOFTIRQ] = k1.softirq - k0.softirq;
		w[OSN_THREAD] = k1.nivcsw - k0.nivcsw;
		ex = w[OSN_NMI] + w[OSN_IRQ] + w[OSN_SOFTIRQ] + w[OSN_THREAD];
		w[OSN_HW] = gaps > ex ? gaps - ex : 0;
		if (kp) { /* the kernel's events: each gap explained or not */
			struct wfind wf = {.start = start, .end = t, .tid = c->tid, .gaps = gapv,
					   .ngaps = gaps < GAPS_MAX ? (int)gaps : GAPS_MAX, .hit = hit};

			memset(hit, 0, (size_t)wf.ngaps);
			kattr_pipe_read(kp, window_seen, &wf);
			w[OSN_NMI] = wf.nmi;
			w[OSN_IRQ] = wf.irq;
			w[OSN_SOFTIRQ] = wf.softirq;
			w[OSN_THREAD] = wf.thread;
			w[OSN_HW] = 0;
			for (int i = 0; i < wf.ngaps; i++)
				w[OSN_HW] += !hit[i];
		}
		put(&c->runtime, c->runtime + w[OSN_RUNTIME]);
		if (noise > c->max_noise)
			put(&c->max_noise, noise);
		put(&c->noise, c->noise + noise);
		if (single > c->max_single)
			put(&c->max_single, single);
		put(&c->hw, c->hw + w[OSN_HW]);
		put(&c->nmi, c->nmi + w[OSN_NMI]);
		put(&c->irq, c->irq + w[OSN_IRQ]);
		put(&c->softirq, c->softirq + w[OSN_SOFTIRQ]);
		put(&c->thread, c->thread + w[OSN_THREAD]);
		put(&c->windows, c->windows + 1);
		seq++;
		if (r->o.sample)
			r->o.sample(r->o.arg, c->cpu, seq, noise, w);
		if (r->o.stop_total_ns && noise > r->o.stop_total_ns)
			stop_at(r, c, noise, 0, 0, 0);
		if (r->o.runtime_ns < r->o.period_ns) {
			uint64_t next = start + r->o.period_ns;
			struct timespec ts = {(time_t)(next / 1000000000ull), (long)(next % 1000000000ull)};

			while (!__atomic_load_n(&r->stop, __ATOMIC_RELAXED) &&
			       clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
				;
		}
	}
	if (kp) {
		kattr_pipe_close(kp);
		free(kp);
	}
	free(gapv);
	free(hit);
	return NULL;
}

int lat_start(struct lat_run *r, const struct lat_opts *o, char *why, size_t wn)
{
	cpu_set_t allowed;

	memset(r, 0, sizeof(*r));
	r->o = *o;
	r->stopped_cpu = -1;
	if (!r->o.bucket_ns)
		r->o.bucket_ns = 1000;
	if (sched_getaffinity(0, sizeof(allowed), &allowed))
		CPU_ZERO(&allowed);
	for (int i = 0; i < o->ncpus; i++)
		if (o->cpus[i] < 0 || o->cpus[i] >= CPU_SETSIZE || !CPU_ISSET(o->cpus[i], &allowed)) {
			snprintf(why, wn, "CPU %d is not online, or not one this process may run on "
				 "(online: %ld)", o->cpus[i], sysconf(_SC_NPROCESSORS_ONLN));
			return -EINVAL;
		}
	if (!(r->c = calloc((size_t)o->ncpus, sizeof(*r->c))))
		return -ENOMEM;
	r->t0 = lat_now();
	for (int i = 0; i < o->ncpus; i++) {
		struct lat_cpu *c = &r->c[i];
		struct targ *a = malloc(sizeof(*a));

		c->cpu = o->cpus[i];
		if (o->entries && (!(c->hist = calloc(o->entries, sizeof(*c->hist))) ||
				   (o->live && o->tracer == LAT_TIMERLAT &&
				    !(c->irq_hist = calloc(o->entries, sizeof(*c->irq_hist)))))) {
			free(a);
			a = NULL;
		}
		if (!a) {
			lat_stop(r);
			return -ENOMEM;
		}
		*a = (struct targ){r, c};
		if (pthread_create(&c->th, NULL, o->tracer == LAT_TIMERLAT ? timerlat_thread : osnoise_thread,
				   a)) {
			free(a);
			lat_stop(r);
			snprintf(why, wn, "no thread for CPU %d", c->cpu);
			return -EAGAIN;
		}
		c->started = 1;
	}
	return 0;
}

void lat_stop(struct lat_run *r)
{
	__atomic_store_n(&r->stop, 1, __ATOMIC_RELAXED);
	for (int i = 0; r->c && i < r->o.ncpus; i++)
		if (r->c[i].started) {
			pthread_join(r->c[i].th, NULL);
			r->c[i].started = 0;
		}
}

void lat_free(struct lat_run *r)
{
	for (int i = 0; r->c && i < r->o.ncpus; i++) {
		free(r->c[i].hist);
		free(r->c[i].irq_hist);
	}
	free(r->c);
	r->c = NULL;
}
