// SPDX-License-Identifier: MIT
//
// prog.cc - C++ functions for test-probe-dwarf.c: a method ('this'
// first), references (pointers at the entry), a namespace function, a
// class with a destructor (passed by invisible reference). Never run.
#define KEEP __attribute__((noipa, used))

namespace net {

struct conn {
	int fd;
	const char *peer;
};

class server {
public:
	int port;
	conn *last;
	int accept(conn &c, int backlog);
};

KEEP int server::accept(conn &c, int backlog)
{
	last = &c;
	return c.fd + port + backlog;
}

KEEP long lookup(const conn &c, long key)
{
	return c.fd + key;
}

} // namespace net

struct owned {
	~owned();
	int *p;
	int n;
};

owned::~owned()
{
}

KEEP int take_owned(owned o, int x)
{
	return o.n + x;
}

int main()
{
	return 0;
}
