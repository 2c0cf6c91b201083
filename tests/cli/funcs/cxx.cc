// trail list -f fixture: C++ names (a namespace, a template, overloads).
#ifdef __clang__
#define KEEP __attribute__((noinline, used))
#else
#define KEEP __attribute__((noipa, used))
#endif

namespace geo {
template <typename T> struct Box {
	T v;
	KEEP T get() const { return v; }
};
KEEP int area(int w, int h) { return w * h; }
KEEP double area(double w, double h) { return w * h; }
} // namespace geo

int main(int argc, char **)
{
	geo::Box<long> b{argc};
	return geo::area(argc, 2) + (int)geo::area(1.5, (double)argc) + (int)b.get();
}
