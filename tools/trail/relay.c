/* SPDX-License-Identifier: MIT */
/*
 * relay.c - `trail record --relay URL`: the recording sent to LTTng's
 * relay daemon (lttng-relayd 2.13) as an LTTng consumer sends a session:
 * the session opened before the command runs (live, so that a reader
 * attaches: babeltrace2's lttng-live), the records once the file is
 * written; the relay stores it as it stores LTTng's (its -o directory,
 * <host>/<session>-<date>/trail/...), readable by babeltrace2 and Trace
 * Compass.
 *
 * The trace is exported to CTF (`trail export --format ctf`'s files) in
 * $TMPDIR, then each stream file's packets go out as the relay protocol
 * wants them (doc/design/relayd-protocol.md): on the control connection
 * VERSION 2.13, CREATE_SESSION (2.11 form), CREATE_TRACE_CHUNK 0,
 * ADD_STREAM for each stream and the `metadata` one, STREAMS_SENT,
 * SEND_METADATA; each packet on the data connection with its SEND_INDEX
 * (its header's fields: the index the relay writes); then the relay is
 * asked until it has every packet (DATA_PENDING), and the streams are
 * closed. All integers of the protocol are big-endian. The local file
 * stays whatever happens to the relay.
 */
#include <dirent.h>
#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "../../src/export/formats.h"
#include "../../src/export/output.h"
#include "relay.h"
#include "tool.h"
#include "viewopt.h"

enum {
	ADD_STREAM = 1, CREATE_SESSION = 2, VERSION = 5, SEND_METADATA = 6, CLOSE_STREAM = 7,
	DATA_PENDING = 8, QUIESCENT_CONTROL = 9, BEGIN_DATA_PENDING = 10, END_DATA_PENDING = 11, SEND_INDEX = 13,
	STREAMS_SENT = 16, CREATE_TRACE_CHUNK = 19,
};
#define LTTNG_OK 10
#define MAX_STREAMS 4096
#define LIVE_LINGER_MS 2500 /* after the last packet: 2.5 live-timer periods */

int relay_url_parse(const char *url, struct relay_url *u, char *why, size_t n)
{
	const char *p = url, *h, *e;
	size_t hl;

	memset(u, 0, sizeof(*u));
	u->ctrl = 5342;
	u->data = 5343;
	if (!strncmp(p, "net://", 6) || !strncmp(p, "tcp://", 6))
		p += 6;
	else if (!strncmp(p, "net6://", 7) || !strncmp(p, "tcp6://", 7))
		p += 7;
	else {
		snprintf(why, n, "a relay URL is net://HOST[:CTRL_PORT[:DATA_PORT]] (or tcp://, "
			 "net6://, tcp6://; an IPv6 address in brackets)");
		u->pos = 0;
		return -1;
	}
	if (*p == '[') {
		h = p + 1;
		if (!(e = strchr(h, ']'))) {
			snprintf(why, n, "an IPv6 address without its ']'");
			u->pos = (int)(p - url);
			return -1;
		}
		hl = (size_t)(e - h);
		p = e + 1;
	} else {
		h = p;
		hl = strcspn(p, ":/");
		p += hl;
	}
	if (!hl || hl >= sizeof(u->host)) {
		snprintf(why, n, "no host");
		u->pos = (int)(h - url);
		return -1;
	}
	memcpy(u->host, h, hl);
	for (int k = 0; k < 2 && *p == ':'; k++) {
		char *end;
		unsigned long v = strtoul(p + 1, &end, 10);

		if (end == p + 1 || !v || v > 65535) {
			snprintf(why, n, "a port is a number from 1 to 65535");
			u->pos = (int)(p + 1 - url);
			return -1;
		}
		*(k ? &u->data : &u->ctrl) = (int)v;
		p = end;
	}
	if (*p && *p != '/') {
		snprintf(why, n, "unexpected text after the host and ports");
		u->pos = (int)(p - url);
		return -1;
	}
	return 0;
}

struct relay {
	const char *url;
	int ctl, dat;
	uint64_t sid; /* the relay's session id */
};

static int dial(const char *host, int port)
{
	struct addrinfo hints = {.ai_socktype = SOCK_STREAM}, *ai, *a;
	char ps[16];
	int fd = -1;

	snprintf(ps, sizeof(ps), "%d", port);
	if (getaddrinfo(host, ps, &hints, &ai))
		return -1;
	for (a = ai; a && fd < 0; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd >= 0 && connect(fd, a->ai_addr, a->ai_addrlen) < 0) {
			close(fd);
			fd = -1;
		}
	}
	freeaddrinfo(ai);
	if (fd >= 0) { /* a relay that stops answering: bounded, not forever */
		struct timeval tv = {30, 0};
		int one = 1;

		setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		/* request, answer, request: Nagle's wait for the answer's ACK
		 * (delayed 40 ms) cost every command that much */
		setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	}
	return fd;
}

/* iov[0..n) whole, in as few segments as the kernel takes */
static int sendv(int fd, struct iovec *iov, int n)
{
	struct msghdr m = {0};

	while (n > 0) {
		ssize_t k;

		m.msg_iov = iov;
		m.msg_iovlen = (size_t)n;
		k = sendmsg(fd, &m, MSG_NOSIGNAL);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		while (n > 0 && (size_t)k >= iov->iov_len) {
			k -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (uint8_t *)iov->iov_base + k;
			iov->iov_len -= (size_t)k;
		}
	}
	return 0;
}

static int recv_all(int fd, void *p, size_t n)
{
	while (n) {
		ssize_t k = recv(fd, p, n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		p = (uint8_t *)p + k;
		n -= (size_t)k;
	}
	return 0;
}

/* a control command: header, payload (a then b), and reply bytes */
static int cmd(struct relay *R, uint32_t c, const void *a, size_t an, const void *b, size_t bn,
	       void *reply, size_t rn)
{
	uint8_t h[24];
	uint64_t v;
	uint32_t w;

	memset(h, 0, 8);
	v = htobe64(an + bn);
	memcpy(h + 8, &v, 8);
	w = htobe32(c);
	memcpy(h + 16, &w, 4);
	memset(h + 20, 0, 4);
	{
		struct iovec iov[3] = {{h, 24}, {(void *)a, an}, {(void *)b, bn}};

		if (sendv(R->ctl, iov, 3))
			return -1;
	}
	return rn ? recv_all(R->ctl, reply, rn) : 0;
}

static void put64(uint8_t *p, uint64_t v) { v = htobe64(v); memcpy(p, &v, 8); }
static void put32(uint8_t *p, uint32_t v) { v = htobe32(v); memcpy(p, &v, 4); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return be32toh(v); }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return be64toh(v); }
static uint64_t le64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return le64toh(v); }
static uint32_t le32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return le32toh(v); }

/* a generic reply's code is LTTNG_OK? */
static int ok(struct relay *R, uint32_t c, const void *a, size_t an)
{
	uint8_t r[4];

	return !cmd(R, c, a, an, NULL, 0, r, 4) && get32(r) == LTTNG_OK ? 0 : -1;
}

struct stream {
	char name[256];
	uint64_t handle, seq; /* seq: packets sent */
};

/* the relay's handle for a new stream name (in the "trail" directory) */
static int add_stream(struct relay *R, const char *name, uint64_t *handle)
{
	static const char path[] = "trail";
	uint8_t f[32], r[12];
	size_t nl = strlen(name) + 1;
	char names[300];

	put32(f, (uint32_t)nl);
	put32(f + 4, sizeof(path));
	put64(f + 8, 0);
	put64(f + 16, 0);
	put64(f + 24, 0);
	memcpy(names, name, nl);
	memcpy(names + nl, path, sizeof(path));
	if (cmd(R, ADD_STREAM, f, 32, names, nl + sizeof(path), r, 12) || get32(r + 8) != LTTNG_OK)
		return -1;
	*handle = get64(r);
	return 0;
}

/* a stream file's packets: each one's data, then its index (fields from
 * its CTF header and context, as trail's exporter lays them out) */
static int send_packets(struct relay *R, const char *dir, struct stream *s)
{
	char path[4400];
	uint8_t *p;
	struct stat st;
	int fd, r = 0;

	snprintf(path, sizeof(path), "%s/%s", dir, s->name);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || fstat(fd, &st) ||
	    !(p = malloc((size_t)st.st_size + 1)) ||
	    read(fd, p, (size_t)st.st_size) != st.st_size) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	for (uint64_t off = 0; off + 80 <= (uint64_t)st.st_size && !r;) {
		const uint8_t *k = p + off;
		/* header: magic, uuid[16], stream_id, stream_instance_id;
		 * context: ts_begin, ts_end, content_size, packet_size,
		 * packet_seq_num, events_discarded (bits for the sizes) */
		uint64_t content = le64(k + 48), size = le64(k + 56);
		uint8_t dh[32], ix[80];

		if (le32(k) != 0xc1fc1fc1 || !size || size % 8 || size / 8 > (uint64_t)st.st_size - off ||
		    content > size) {
			r = -1;
			break;
		}
		memset(dh, 0, 32);
		put64(dh + 8, s->handle);
		put64(dh + 16, s->seq);
		put32(dh + 24, (uint32_t)(size / 8));
		put32(dh + 28, 0);
		put64(ix, s->handle);
		put64(ix + 8, s->seq);
		put64(ix + 16, size);
		put64(ix + 24, content);
		put64(ix + 32, le64(k + 32));
		put64(ix + 40, le64(k + 40));
		put64(ix + 48, le64(k + 72));
		put64(ix + 56, le32(k + 20));
		put64(ix + 64, le64(k + 24));
		put64(ix + 72, le64(k + 64));
		{
			struct iovec iov[2] = {{dh, 32}, {(void *)k, size / 8}};

			if (sendv(R->dat, iov, 2) || ok(R, SEND_INDEX, ix, 80))
				r = -1;
		}
		s->seq++;
		off += size / 8;
	}
	free(p);
	return r;
}

#define MD_HDR 37 /* a metadata packet's header */

/* the metadata packet header for text (n bytes, which names the trace's
 * uuid): magic, uuid, checksum 0, content and packet sizes in bits, no
 * compression, encryption or checksum, CTF 1.8; in the trace's byte
 * order (little-endian) */
static void md_header(uint8_t *h, const char *text, size_t n, size_t content, size_t padded)
{
	const char *u = memmem(text, n, "uuid = \"", 8);
	uint32_t v;

	memset(h, 0, MD_HDR);
	v = htole32(0x75d11d57);
	memcpy(h, &v, 4);
	for (int i = 0, k = 0; u && i < 16 && u + 8 + k + 1 < text + n; k++) {
		char c[3] = {u[8 + k], u[9 + k], 0};

		if (c[0] == '-')
			continue;
		h[4 + i++] = (uint8_t)strtoul(c, NULL, 16);
		k++;
	}
	v = htole32((uint32_t)(content * 8));
	memcpy(h + 24, &v, 4);
	v = htole32((uint32_t)(padded * 8));
	memcpy(h + 28, &v, 4);
	h[35] = 1;
	h[36] = 8;
}

/* the session opened: version, the session (live: a reader may attach
 * from now on), its trace chunk. 0, or -1 with why */
static int session_begin(struct relay *R, const char *name, char *why, size_t wn)
{
	uint8_t v[8], cs[59], r[16], ch[20];
	char host[64] = "", names[600], path[4096];
	size_t nn;

	gethostname(host, sizeof(host) - 1);
	put32(v, 2);
	put32(v + 4, 13);
	if (cmd(R, VERSION, v, 8, NULL, 0, v, 8) || get32(v) != 2 || get32(v + 4) < 11) {
		snprintf(why, wn, "the relay speaks another version of its protocol (%u.%u; "
			 "trail speaks 2.11 to 2.13)", get32(v), get32(v + 4));
		return -1;
	}
	/* CREATE_SESSION, 2.11 form: lengths, live timer (1 s: a live
	 * reader may attach), snapshot, name holds time, sessiond uuid,
	 * session id, creation time, chunk id */
	nn = (size_t)snprintf(names, sizeof(names), "%s%c%s%c%c", name, 0, host, 0, 0);
	memset(cs, 0, sizeof(cs));
	put32(cs, (uint32_t)strlen(name) + 1);
	put32(cs + 4, (uint32_t)strlen(host) + 1);
	put32(cs + 8, 1);
	put32(cs + 12, 1000000);
	for (int k = 0; k < 16; k++) /* (any uuid but the nil one) */
		cs[18 + k] = (uint8_t)(k * 37 + 11) ^ (uint8_t)(getpid() >> (k % 4 * 8));
	put64(cs + 34, (uint64_t)getpid());
	put64(cs + 42, (uint64_t)time(NULL));
	if (cmd(R, CREATE_SESSION, cs, 59, names, nn, r, 16) || get32(r + 8) != LTTNG_OK) {
		snprintf(why, wn, "the relay refused the session");
		return -1;
	}
	R->sid = get64(r);
	if (get32(r + 12) > sizeof(path) || (get32(r + 12) && recv_all(R->ctl, path, get32(r + 12)))) {
		snprintf(why, wn, "the relay's answer to CREATE_SESSION is damaged");
		return -1;
	}
	put64(ch, 0);
	put64(ch + 8, (uint64_t)time(NULL));
	memset(ch + 16, 0, 4);
	if (ok(R, CREATE_TRACE_CHUNK, ch, 20)) {
		snprintf(why, wn, "the relay refused the session's trace chunk");
		return -1;
	}
	return 0;
}

/* the recording's CTF (dir): its streams, metadata, packets, until the
 * relay has them all, the streams closed. 0, or -1 with why */
static int session_send(struct relay *R, const char *dir, char *why, size_t wn)
{
	struct stream *ss = calloc(MAX_STREAMS, sizeof(*ss));
	char meta[4400], *md = NULL;
	uint64_t mh, sid = R->sid;
	size_t mdn = 0, ns = 0;
	struct dirent *d;
	DIR *dd;
	int rc = -1;
	FILE *f;

	if (!ss)
		return -1;
	if (!(dd = opendir(dir)))
		goto out;
	while ((d = readdir(dd)) && ns < MAX_STREAMS)
		if (!strncmp(d->d_name, "stream-", 7))
			snprintf(ss[ns++].name, sizeof(ss[0].name), "%s", d->d_name);
	closedir(dd);
	for (size_t i = 0; i < ns; i++)
		if (add_stream(R, ss[i].name, &ss[i].handle)) {
			snprintf(why, wn, "the relay refused stream %s", ss[i].name);
			goto out;
		}
	if (add_stream(R, "metadata", &mh) || ok(R, STREAMS_SENT, NULL, 0)) {
		snprintf(why, wn, "the relay refused the metadata stream");
		goto out;
	}
	snprintf(meta, sizeof(meta), "%s/metadata", dir);
	if ((f = fopen(meta, "r"))) {
		md = malloc(16u << 20);
		mdn = md ? fread(md + 12 + MD_HDR, 1, (16u << 20) - 12 - MD_HDR - 4096, f) : 0;
		fclose(f);
	}
	if (!md || !mdn) {
		snprintf(why, wn, "no CTF metadata to send");
		goto out;
	}
	/* one metadata packet, as LTTng sends it: live readers decode each
	 * increment alone, and want whole packets (padded to a page) */
	{
		size_t content = MD_HDR + mdn, padded = (content + 4095) & ~(size_t)4095;

		put64((uint8_t *)md, mh);
		put32((uint8_t *)md + 8, (uint32_t)(padded - content));
		md_header((uint8_t *)md + 12, (const char *)md + 12 + MD_HDR, mdn, content, padded);
		if (cmd(R, SEND_METADATA, md, content + 12, NULL, 0, NULL, 0)) {
			snprintf(why, wn, "the relay closed the connection");
			goto out;
		}
	}
	for (size_t i = 0; i < ns; i++)
		if (send_packets(R, dir, &ss[i])) {
			snprintf(why, wn, "sending %s's packets: the relay closed the connection, or "
				 "the exported packets are damaged", ss[i].name);
			goto out;
		}
	/* until the relay has every packet and index (10 s at most) */
	for (int t = 0, pending = 1; pending && t < 200; t++) {
		uint8_t q[16], a[4];

		put64(q, sid);
		pending = 0;
		if (ok(R, BEGIN_DATA_PENDING, q, 8))
			break;
		for (size_t i = 0; i < ns; i++) {
			put64(q, ss[i].handle);
			put64(q + 8, ss[i].seq ? ss[i].seq - 1 : UINT64_MAX);
			if (cmd(R, DATA_PENDING, q, 16, NULL, 0, a, 4))
				break;
			pending |= get32(a) != 0;
		}
		/* (the metadata stream: END_DATA_PENDING counts it pending
		 * until it is declared quiescent) */
		put64(q, mh);
		if (ok(R, QUIESCENT_CONTROL, q, 8))
			break;
		put64(q, sid);
		if (cmd(R, END_DATA_PENDING, q, 8, NULL, 0, a, 4))
			break;
		pending |= get32(a) != 0;
		if (pending) {
			struct timespec ts = {0, 50000000};

			nanosleep(&ts, NULL);
		}
	}
	/* live readers ask for new streams and indexes once a live-timer
	 * period: the session stays open that long and more for them */
	{
		struct timespec ts = {LIVE_LINGER_MS / 1000, LIVE_LINGER_MS % 1000 * 1000000L};

		nanosleep(&ts, NULL);
	}
	for (size_t i = 0; i <= ns; i++) {
		uint8_t q[16];

		put64(q, i < ns ? ss[i].handle : mh);
		put64(q + 8, i < ns && ss[i].seq ? ss[i].seq - 1 : UINT64_MAX);
		if (ok(R, CLOSE_STREAM, q, 16)) {
			snprintf(why, wn, "the relay refused to close a stream");
			goto out;
		}
	}
	rc = 0;
out:
	free(md);
	free(ss);
	return rc;
}

/* rm -r of the export's directory (its files only) */
static void rmdir_all(const char *dir)
{
	char p[4400];
	struct dirent *d;
	DIR *dd = opendir(dir);

	while (dd && (d = readdir(dd)))
		if (d->d_name[0] != '.') {
			snprintf(p, sizeof(p), "%s/%s", dir, d->d_name);
			unlink(p);
		}
	if (dd)
		closedir(dd);
	rmdir(dir);
}

struct relay *relay_open(const char *url, const char *name)
{
	struct relay *R = calloc(1, sizeof(*R));
	struct relay_url u;
	char why[512] = "";

	if (!R)
		return NULL;
	R->url = url;
	R->ctl = R->dat = -1;
	if (relay_url_parse(url, &u, why, sizeof(why))) {
		tool_err("--relay %s: %s", url, why);
		goto fail;
	}
	R->ctl = dial(u.host, u.ctrl);
	R->dat = R->ctl >= 0 ? dial(u.host, u.data) : -1;
	if (R->ctl < 0 || R->dat < 0) {
		tool_err("--relay %s: no relay answers on %s:%d (control) and :%d (data): %s", url,
			 u.host, u.ctrl, u.data, strerror(errno));
		goto fail;
	}
	if (session_begin(R, name, why, sizeof(why))) {
		tool_err("--relay %s: %s", url, why[0] ? why : strerror(errno));
		goto fail;
	}
	return R;
fail:
	relay_abort(R);
	return NULL;
}

void relay_abort(struct relay *R)
{
	if (!R)
		return;
	if (R->ctl >= 0)
		close(R->ctl);
	if (R->dat >= 0)
		close(R->dat);
	free(R);
}

int relay_finish(struct relay *R, const char *trace)
{
	struct trail_export_opts eo = {.sz = sizeof(eo)};
	struct trail_output *out = NULL;
	struct trail_reader *r = NULL;
	const char *tmpd = getenv("TMPDIR");
	char dir[4096], err[1024], why[512] = "";
	int rc = 1;

	snprintf(dir, sizeof(dir), "%s/trail-relay.XXXXXX", tmpd && *tmpd ? tmpd : "/tmp");
	if (!mkdtemp(dir)) {
		tool_err("--relay: a directory for the CTF export: %s", strerror(errno));
		relay_abort(R);
		return 1;
	}
	eo.dir = dir;
	if (viewopt_open(trace, &r, err, sizeof(err)) || !(out = trail__export_ctf(&eo)) ||
	    trail_export_run(r, trace, NULL, out, err, sizeof(err)) < 0) {
		tool_err("--relay: exporting %s to CTF failed%s%s", trace, out ? ": " : "", out ? err : "");
		goto out;
	}
	if (session_send(R, dir, why, sizeof(why))) {
		tool_err("--relay %s: %s; %s is kept", R->url, why[0] ? why : strerror(errno), trace);
		goto out;
	}
	rc = 0;
out:
	relay_abort(R);
	trail_output_free(out);
	if (r)
		trail_reader_close(r);
	rmdir_all(dir);
	return rc;
}
