// SPDX-License-Identifier: MIT
// cxx.cc - tracepoints from C++: a class method, a template, a lambda, an
// enum class field, std::string via c_str().
#include <string>
#include <vector>

#include <trail/trail.h>

enum class Color : short { red = -1, green = 2 };

TRAIL_EVENT(cxx, item,
	TRAIL_ARGS(const char *, name, Color, color, const std::vector<int> &, v),
	TRAIL_FIELDS(trail_field_string(name)
		     trail_field_int(color)
		     trail_field_seq(values, v.data(), v.size())))

template <typename T> static void emit(const T &name, Color c)
{
	std::vector<int> v{1, 2, 3};
	trail(cxx, item, name.c_str(), c, v);
}

struct Widget {
	std::string name = "widget";
	void draw() const { emit(name, Color::red); }
};

int main()
{
	Widget w;
	w.draw();
	auto f = [](const std::string &s) { emit(s, Color::green); };
	f(std::string("lambda"));
	return 0;
}
