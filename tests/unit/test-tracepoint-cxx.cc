// SPDX-License-Identifier: MIT
// test-tracepoint-cxx.cc - the public header <trail/trail.h> from C++11,
// without libtrail: enum class fields (sign from the underlying type), bool,
// std::string through c_str(), std::vector as a sequence, const reference
// arguments, call sites in a template, a lambda and a member function, and
// events declared inside namespaces. Payloads are checked byte by byte
// (little-endian host), descriptions field by field, and every descriptor
// must be listed once in the section trail_events.
//
// trail__write is weak in the header; the definition below catches what the
// call site hands to libtrail. An event is turned on by storing 1 in its
// status word, trail__state_<prov>_<ev>, a static of this translation unit.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include <trail/trail.h>

#include "check.h"

// ------------------------------------------------------------------------
// Stand-in for libtrail.
static struct {
	int calls;
	struct trail_event *ev;
	uint32_t len;
	unsigned char buf[1 << 16];
} cap;

extern "C" void trail__write(struct trail_event *ev, const void *payload,
			     uint32_t len)
{
	cap.calls++;
	cap.ev = ev;
	cap.len = len;
	if (len <= sizeof(cap.buf))
		memcpy(cap.buf, payload, len);
}

static void cap_reset()
{
	cap.calls = 0;
	cap.ev = nullptr;
	cap.len = 0;
	memset(cap.buf, 0xa5, sizeof(cap.buf));
}

static void need_little_endian()
{
#if !defined(__BYTE_ORDER__) || __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
	SKIP("golden records are little-endian");
#endif
}

#define CHECK_PAYLOAD(...)                                                    \
	check_payload(__LINE__, std::vector<unsigned char>{__VA_ARGS__})

static void check_payload(int line, const std::vector<unsigned char> &want)
{
	if (cap.calls != 1) {
		fprintf(stderr, "  line %d: trail__write called %d times, want 1\n",
			line, cap.calls);
		check_failures++;
		return;
	}
	if (cap.len != want.size()) {
		fprintf(stderr, "  line %d: payload is %u bytes, want %zu\n", line,
			cap.len, want.size());
		check_failures++;
	}
	for (size_t i = 0; i < want.size() && i < cap.len; i++)
		if (cap.buf[i] != want[i]) {
			fprintf(stderr,
				"  line %d: payload byte %zu is 0x%02x, want 0x%02x\n",
				line, i, cap.buf[i], want[i]);
			check_failures++;
			return;
		}
}

template <typename T> static T payload_at(size_t off)
{
	T v;
	memcpy(&v, cap.buf + off, sizeof(v));
	return v;
}

// ------------------------------------------------------------------------
// The events.
enum class Level : int8_t { low = -1, high = 100 };
enum class Port : uint16_t { http = 80, top = 0xffff };

TRAIL_EVENT(cxx, enums, TRAIL_ARGS(Level, lvl, Port, port, bool, flag),
	    TRAIL_FIELDS(trail_field_int(lvl) trail_field_hex(port)
			 trail_field_bool(flag) trail_field_int(flagint, flag)))

TRAIL_EVENT(cxx, strs, TRAIL_ARGS(const char *, s, const std::string &, str),
	    TRAIL_FIELDS(trail_field_string(s)
			 trail_field_string(copy, str.c_str())
			 trail_field_int(size, str.size())))

TRAIL_EVENT(cxx, vec, TRAIL_ARGS(const std::vector<int32_t> &, v),
	    TRAIL_FIELDS(trail_field_seq(vals, v.data(), v.size())
			 trail_field_int(n, static_cast<uint32_t>(v.size()))))

TRAIL_EVENT(cxx, refs,
	    TRAIL_ARGS(const int &, x, const double &, d, const uint64_t &, h,
		       const Level &, lvl),
	    TRAIL_FIELDS(trail_field_int(x) trail_field_float(d)
			 trail_field_hex(h) trail_field_int(lvl)))

TRAIL_EVENT(cxx, where, TRAIL_ARGS(int, site, int64_t, v),
	    TRAIL_FIELDS(trail_field_int(site) trail_field_int(v)))

TRAIL_EVENT(cxx, member, TRAIL_ARGS(const void *, self, int, fd),
	    TRAIL_FIELDS(trail_field_ptr(self) trail_field_int(fd)))

namespace net {
TRAIL_EVENT(net, packet, TRAIL_ARGS(uint16_t, port, const char *, host),
	    TRAIL_FIELDS(trail_field_int(port) trail_field_string(host)))

static void send_packet(uint16_t port, const char *host)
{
	trail(net, packet, port, host);
}
} // namespace net

namespace {
TRAIL_EVENT(anon, ping, TRAIL_ARGS(int, n), TRAIL_FIELDS(trail_field_int(n)))
} // namespace

static int evaluated;

static std::string make_name()
{
	evaluated++;
	return "made";
}

// call sites of cxx:where in a template, a lambda and a member function
template <typename T> static void from_template(T v)
{
	trail(cxx, where, 1, static_cast<int64_t>(v));
}

struct Conn {
	int fd;
	void send(int64_t n) const
	{
		trail(cxx, where, 3, n + fd);
		trail(cxx, member, this, fd);
	}
};

// ------------------------------------------------------------------------
// Payloads.
TEST(enum_class_and_bool)
{
	need_little_endian();
	trail__state_cxx_enums = 1;
	cap_reset();
	trail(cxx, enums, Level::low, Port::http, true);
	CHECK_PAYLOAD(0xff,       // lvl: Level::low, int8_t -1
		      0x50, 0x00, // port: 80
		      0x01,       // flag
		      0x01);      // flagint: a bool as an integer, one byte
	CHECK(static_cast<Level>(payload_at<int8_t>(0)) == Level::low);

	cap_reset();
	trail(cxx, enums, Level::high, Port::top, false);
	CHECK_PAYLOAD(0x64, 0xff, 0xff, 0x00, 0x00);
	CHECK(static_cast<Level>(payload_at<int8_t>(0)) == Level::high);
	CHECK(static_cast<Port>(payload_at<uint16_t>(1)) == Port::top);
}

TEST(std_string_via_c_str)
{
	std::string name("widget"), nul("ab\0cd", 5);

	need_little_endian();
	trail__state_cxx_strs = 1;
	cap_reset();
	trail(cxx, strs, name.c_str(), name);
	CHECK_PAYLOAD(0x06, 0x00, 'w', 'i', 'd', 'g', 'e', 't', // s
		      0x06, 0x00, 'w', 'i', 'd', 'g', 'e', 't', // copy
		      0x06, 0, 0, 0, 0, 0, 0, 0);               // size, size_t

	// c_str() ends at the first NUL; size() does not
	cap_reset();
	trail(cxx, strs, nul.c_str(), nul);
	CHECK_PAYLOAD(0x02, 0x00, 'a', 'b', 0x02, 0x00, 'a', 'b',
		      0x05, 0, 0, 0, 0, 0, 0, 0);

	// a 5000-byte std::string keeps 4095 bytes
	std::string big(5000, 'x');
	cap_reset();
	trail(cxx, strs, nullptr, big);
	CHECK_EQ(cap.len, 2 + 2 + 4095 + 8);
	CHECK_EQ(payload_at<uint16_t>(0), 0xffff); // s: NULL
	CHECK_EQ(payload_at<uint16_t>(2), 4095);
	CHECK_EQ(payload_at<uint64_t>(4 + 4095), 5000);
}

TEST(vector_as_sequence)
{
	std::vector<int32_t> v{-1, 2, 70000}, none, big(5000, 7);

	need_little_endian();
	trail__state_cxx_vec = 1;
	cap_reset();
	trail(cxx, vec, v);
	CHECK_PAYLOAD(0x03, 0x00,             // vals: count 3
		      0xff, 0xff, 0xff, 0xff, // -1
		      0x02, 0x00, 0x00, 0x00, // 2
		      0x70, 0x11, 0x01, 0x00, // 70000
		      0x03, 0x00, 0x00, 0x00); // n

	cap_reset();
	trail(cxx, vec, none);
	CHECK_PAYLOAD(0x00, 0x00, 0x00, 0x00, 0x00, 0x00);

	big[4095] = -9;
	cap_reset();
	trail(cxx, vec, big);
	CHECK_EQ(cap.len, 2 + 4096 * 4 + 4);
	CHECK_EQ(payload_at<uint16_t>(0), 4096);
	CHECK_EQ(payload_at<int32_t>(2 + 4095 * 4), -9);
	CHECK_EQ(payload_at<uint32_t>(2 + 4096 * 4), 5000);
}

TEST(const_reference_arguments)
{
	int x = -7;
	const double d = 0.5;
	uint64_t h = 0xfedcba9876543210ull;

	need_little_endian();
	trail__state_cxx_refs = 1;
	cap_reset();
	trail(cxx, refs, x, d, h, Level::low);
	CHECK_PAYLOAD(0xf9, 0xff, 0xff, 0xff,                         // x -7
		      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0xe0, 0x3f, // d 0.5
		      0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe, // h
		      0xff);                                          // lvl
	// temporaries bind to the const references too
	cap_reset();
	trail(cxx, refs, 1 + 1, 2.0, 3u, Level::high);
	CHECK_EQ(payload_at<int32_t>(0), 2);
	CHECK(payload_at<double>(4) == 2.0);
	CHECK_EQ(payload_at<uint64_t>(12), 3);
}

TEST(template_lambda_member)
{
	struct trail_event *ev;
	Conn c{40};
	auto lambda = [](int64_t v) { trail(cxx, where, 2, v); };

	need_little_endian();
	trail__state_cxx_where = 1;
	trail__state_cxx_member = 1;

	cap_reset();
	from_template(static_cast<short>(-5));
	CHECK_EQ(payload_at<int32_t>(0), 1);
	CHECK_EQ(payload_at<int64_t>(4), -5);
	ev = cap.ev;
	CHECK(ev != nullptr);

	cap_reset();
	from_template(1ull << 40); // another instantiation, the same event
	CHECK_EQ(payload_at<int64_t>(4), 1ll << 40);
	CHECK(cap.ev == ev);

	cap_reset();
	lambda(-6);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(payload_at<int32_t>(0), 2);
	CHECK_EQ(payload_at<int64_t>(4), -6);
	CHECK(cap.ev == ev);

	cap_reset();
	c.send(2);
	CHECK_EQ(cap.calls, 2); // where, then member
	CHECK_EQ(cap.len, 8 + 4);
	CHECK_EQ(payload_at<uint64_t>(0), reinterpret_cast<uintptr_t>(&c));
	CHECK_EQ(payload_at<int32_t>(8), 40);

	trail__state_cxx_member = 0;
	cap_reset();
	c.send(2);
	CHECK_EQ(cap.calls, 1);
	CHECK(cap.ev == ev);
	CHECK_EQ(payload_at<int32_t>(0), 3);
	CHECK_EQ(payload_at<int64_t>(4), 42);
}

TEST(event_in_namespace)
{
	need_little_endian();
	net::trail__state_net_packet = 1;
	cap_reset();
	net::send_packet(443, "h");
	CHECK_PAYLOAD(0xbb, 0x01, 0x01, 0x00, 'h');

	{
		using namespace net;
		CHECK(trail_enabled(net, packet));
		cap_reset();
		trail(net, packet, 8080, nullptr);
		CHECK_PAYLOAD(0x90, 0x1f, 0xff, 0xff);
		trail__state_net_packet = 0;
		CHECK(!trail_enabled(net, packet));
	}
	cap_reset();
	net::send_packet(1, "x");
	CHECK_EQ(cap.calls, 0);

	trail__state_anon_ping = 1;
	cap_reset();
	trail(anon, ping, -3);
	CHECK_PAYLOAD(0xfd, 0xff, 0xff, 0xff);
}

TEST(disabled_event_skips_arguments)
{
	evaluated = 0;
	trail__state_cxx_strs = 0;
	cap_reset();
	CHECK(!trail_enabled(cxx, strs));
	trail(cxx, strs, make_name().c_str(), make_name());
	CHECK_EQ(evaluated, 0);
	CHECK_EQ(cap.calls, 0);

	trail__state_cxx_strs = 4; // session slot 2
	CHECK(trail_enabled(cxx, strs));
	trail(cxx, strs, make_name().c_str(), make_name());
	CHECK_EQ(evaluated, 2);
	CHECK_EQ(cap.calls, 1);
	CHECK_EQ(cap.len, 2 + 4 + 2 + 4 + 8);
}

// ------------------------------------------------------------------------
// Descriptions and descriptors.
struct want_field {
	const char *name;
	unsigned kind, size, flags, count;
};

struct want_meta {
	const char *provider, *name;
	std::vector<want_field> f;
};

static const unsigned S = TRAIL_FF_SIGNED, H = TRAIL_FF_HEX,
		      B = TRAIL_FF_BOOL, P = TRAIL_FF_PTR;
static const unsigned I = TRAIL_FK_INT, F = TRAIL_FK_FLOAT,
		      STR = TRAIL_FK_STRING, SEQ = TRAIL_FK_SEQ;

static void check_meta(const struct trail_event *ev, const want_meta &w)
{
	const char *b = static_cast<const char *>(ev->meta), *p;
	struct trail_meta_hdr h;
	size_t want_size = sizeof(h) + strlen(w.provider) + strlen(w.name) + 2;

	memcpy(&h, b, sizeof(h));
	CHECK_EQ(h.magic, TRAIL_META_MAGIC);
	CHECK_EQ(h.version, 1);
	CHECK_EQ(h.nfields, w.f.size());
	p = b + sizeof(h);
	CHECK_STR(p, w.provider);
	p += strlen(p) + 1;
	CHECK_STR(p, w.name);
	p += strlen(p) + 1;
	for (size_t i = 0; i < w.f.size() && i < h.nfields; i++) {
		const want_field &wf = w.f[i];
		struct trail_meta_field f;

		memcpy(&f, p, sizeof(f));
		p += sizeof(f);
		if (f.kind != wf.kind || f.size != wf.size || f.flags != wf.flags ||
		    f.count != wf.count || f.namelen != strlen(wf.name) ||
		    strcmp(p, wf.name)) {
			fprintf(stderr,
				"  %s:%s field %zu: {%u %u 0x%x %u \"%s\"/%u}, want "
				"{%u %u 0x%x %u \"%s\"}\n",
				w.provider, w.name, i, f.kind, f.size, f.flags,
				f.count, p, f.namelen, wf.kind, wf.size, wf.flags,
				wf.count, wf.name);
			check_failures++;
		}
		p += strlen(p) + 1;
		want_size += sizeof(f) + strlen(wf.name) + 1;
	}
	CHECK_EQ(h.size, want_size);
	CHECK_EQ(p - b, h.size);
}

// Turn on and call every event once; the descriptors, in metas() order.
static std::vector<struct trail_event *> fire_all()
{
	std::vector<struct trail_event *> evs;
	std::vector<int32_t> v;
	std::string s;
	Conn c{1};
	auto took = [&evs]() {
		evs.push_back(cap.calls == 1 ? cap.ev : nullptr);
		cap_reset();
	};

	cap_reset();
	trail__state_cxx_enums = 1;
	trail(cxx, enums, Level::low, Port::http, false);
	took();
	trail__state_cxx_strs = 1;
	trail(cxx, strs, "", s);
	took();
	trail__state_cxx_vec = 1;
	trail(cxx, vec, v);
	took();
	trail__state_cxx_refs = 1;
	trail(cxx, refs, 0, 0.0, 0u, Level::low);
	took();
	trail__state_cxx_where = 1;
	from_template(0);
	took();
	trail__state_cxx_member = 1;
	trail__state_cxx_where = 0;
	c.send(0);
	took();
	net::trail__state_net_packet = 1;
	net::send_packet(0, "");
	took();
	trail__state_anon_ping = 1;
	trail(anon, ping, 0);
	took();
	return evs;
}

static std::vector<want_meta> metas()
{
	return {
		{"cxx", "enums",
		 {{"lvl", I, 1, S, 0}, {"port", I, 2, H, 0},
		  {"flag", I, 1, B, 0}, {"flagint", I, 1, 0, 0}}},
		{"cxx", "strs",
		 {{"s", STR, 1, 0, 0}, {"copy", STR, 1, 0, 0},
		  {"size", I, sizeof(size_t), 0, 0}}},
		{"cxx", "vec", {{"vals", SEQ, 4, S, 0}, {"n", I, 4, 0, 0}}},
		{"cxx", "refs",
		 {{"x", I, 4, S, 0}, {"d", F, 8, S, 0}, {"h", I, 8, H, 0},
		  {"lvl", I, 1, S, 0}}},
		{"cxx", "where", {{"site", I, 4, S, 0}, {"v", I, 8, S, 0}}},
		{"cxx", "member", {{"self", I, 8, P | H, 0}, {"fd", I, 4, S, 0}}},
		{"net", "packet", {{"port", I, 2, 0, 0}, {"host", STR, 1, 0, 0}}},
		{"anon", "ping", {{"n", I, 4, S, 0}}},
	};
}

TEST(meta_blob)
{
	std::vector<struct trail_event *> evs = fire_all();
	std::vector<want_meta> w = metas();

	CHECK_EQ(evs.size(), w.size());
	for (size_t i = 0; i < evs.size() && i < w.size(); i++) {
		if (!evs[i]) {
			fprintf(stderr, "  %s:%s: trail__write not called\n",
				w[i].provider, w[i].name);
			check_failures++;
			continue;
		}
		CHECK_EQ(evs[i]->abi, TRAIL_EVENT_ABI);
		CHECK_EQ(evs[i]->size, sizeof(struct trail_event));
		CHECK(evs[i]->rt == nullptr);
		check_meta(evs[i], w[i]);
	}
}

TEST(descriptors_in_section)
{
	std::vector<struct trail_event *> evs = fire_all();
	struct trail_event **start = __start_trail_events;
	struct trail_event **stop = __stop_trail_events;
	size_t nulls = 0, others = 0;

	CHECK(start < stop);
	for (size_t i = 0; i < evs.size(); i++) {
		int seen = 0;

		for (struct trail_event **p = start; p < stop; p++)
			seen += evs[i] && *p == evs[i];
		if (seen != 1) {
			fprintf(stderr, "  event %zu listed %d times\n", i, seen);
			check_failures++;
		}
	}
	for (struct trail_event **p = start; p < stop; p++)
		if (*p)
			others++;
		else
			nulls++;
	CHECK_EQ(nulls, 1);
	CHECK_EQ(others, evs.size());
	CHECK(evs[0] && evs[0]->state == &trail__state_cxx_enums);
	CHECK(evs[6] && evs[6]->state == &net::trail__state_net_packet);
}

TEST_MAIN(CHECK_T(enum_class_and_bool), CHECK_T(std_string_via_c_str),
	  CHECK_T(vector_as_sequence), CHECK_T(const_reference_arguments),
	  CHECK_T(template_lambda_member), CHECK_T(event_in_namespace),
	  CHECK_T(disabled_event_skips_arguments), CHECK_T(meta_blob),
	  CHECK_T(descriptors_in_section))
