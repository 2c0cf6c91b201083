// SPDX-License-Identifier: MIT
// prog.cc - events.h and C++-only argument types (enum class, std::string,
// std::vector, const references) from a template, a lambda, a member
// function and a namespace; built by test-header.sh in each C++ mode with
// warnings as errors, then run without libtrail (exit status 0).
#include <string>
#include <vector>

#include "events.h"

enum class Mode : short { off = -1, on = 1 };

TRAIL_EVENT(hdrxx, item,
	    TRAIL_ARGS(Mode, mode, const std::string &, name,
		       const std::vector<uint32_t> &, v),
	    TRAIL_FIELDS(trail_field_int(mode) trail_field_string(name, name.c_str())
			 trail_field_seq(vals, v.data(), v.size())))

namespace space {
TRAIL_EVENT(space, inner, TRAIL_ARGS(const int &, n), TRAIL_FIELDS(trail_field_int(n)))

static void inner(int n) { trail(space, inner, n); }
} // namespace space

template <typename T> static void emit(const T &n)
{
	std::vector<uint32_t> v{1, 2};
	trail(hdrxx, item, Mode::on, std::to_string(n), v);
}

struct Widget {
	int id;
	void draw() const { trail(hdr, ints, 0, 0, id, 0, 0, 0, 0, 0); }
};

int main()
{
	static const hdr_rec r = {"rec", {1, 2}};
	static const uint8_t bytes[4] = {1, 2, 3, 4};
	static const int64_t v[3] = {-1, 0, 1};

	if (trail__write || trail__register || trail__unregister)
		return 10;
	emit(1);
	emit(2.5);
	Widget{7}.draw();
	auto f = [&](const char *s) { trail(hdr, blobs, s, &r, bytes, v, 3); };
	f("lambda");
	space::inner(3);
	trail(hdr, tick);
	trail(hdr, scalars, false, 0, nullptr, 0.f, 0.0, 'x', 0L, 0ull);
	if (trail_enabled(hdrxx, item))
		return 11;
	return 0;
}
