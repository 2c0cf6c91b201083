// SPDX-License-Identifier: MIT
// cxx.cc - function_graph across C++ exceptions: throws unwind through
// hooked frames (whose return addresses the tracer swapped), are caught
// at several depths, rethrown, and the program goes on calling.
#include <cstdio>
#include <stdexcept>
#include <string>

#define F __attribute__((noinline))

static volatile int sink;

namespace app {
F int leaf(int x)
{
	if (x < 0)
		throw std::runtime_error("negative");
	sink = x;
	return x * 2;
}

F int middle(int x)
{
	std::string keep("destructor runs during unwinding");
	int r = leaf(x);
	sink = (int)keep.size();
	return r + 1;
}

F int top(int x)
{
	try {
		return middle(x);
	} catch (const std::exception &) {
		return -1;
	}
}

F int rethrower(int x)
{
	try {
		return middle(x);
	} catch (...) {
		sink = 2;
		throw;
	}
}

template <typename T> F T twice(T v) { return v + v; }
} // namespace app

int main()
{
	int total = app::top(1) + app::top(-1) + app::top(2);

	try {
		app::rethrower(-5);
	} catch (const std::runtime_error &e) {
		total += 100;
	}
	total += app::twice(3);
	std::printf("%d\n", total);
	return 0;
}
