/* SPDX-License-Identifier: MIT */
/*
 * prog.c - functions whose parameters test-probe-dwarf.c finds in DWARF:
 * one per way the x86_64 SysV ABI passes them. Built -g at -O0 and -O1;
 * never run. Every function is kept (noipa: no clone, no changed
 * convention).
 */
#include <stdarg.h>
#include <stddef.h>

#include "types.h"

#define KEEP __attribute__((noipa, used))

KEEP int handle(struct req *req, int flags)
{
	return req->id + flags;
}

KEEP long by_small(point_t p, struct pair q)
{
	return p.x + p.y + q.a + q.b + q.c + q.d;
}

KEEP long by_big(int a, struct big b, int c)
{
	return a + b.a + b.b + b.c + c;
}

KEEP long eight(int a, int b, int c, int d, int e, int f, int g, long h)
{
	return a + b + c + d + e + f + g + h;
}

/* the pair does not fit in the one register left: it goes to the
 * stack, and g still takes r9 */
KEEP long five_pair(int a, int b, int c, int d, int e, struct pair p, int g)
{
	return a + b + c + d + e + p.a + g;
}

KEEP double mix(int a, double d, char *s, float f, long l)
{
	return a + d + s[0] + f + l;
}

KEEP long with_mixed(struct mixed m, int x)
{
	return (long)m.d + m.l + x;
}

KEEP int vsum(int n, ...)
{
	va_list ap;
	int s = 0;

	va_start(ap, n);
	while (n-- > 0)
		s += va_arg(ap, int);
	va_end(ap);
	return s;
}

KEEP int scalars(bool b, enum color c, enum sign s, char ch, unsigned char uc,
		 short sh, unsigned long ul, const unsigned char *ustr)
{
	return b + c + s + ch + uc + sh + (int)ul + ustr[0];
}

KEEP int takes_argv(int argc, char **argv, point_t *pp, uint8_t *raw)
{
	return argc + argv[0][0] + pp->x + raw[0];
}

KEEP int walk(struct node *n)
{
	return n->v;
}

KEEP void ret_void(void)
{
}

KEEP void *ret_ptr(void)
{
	return NULL;
}

KEEP bool ret_bool(void)
{
	return true;
}

KEEP unsigned short ret_u16(void)
{
	return 1;
}

KEEP enum sign ret_enum(void)
{
	return NEG;
}

KEEP double ret_double(void)
{
	return 1.0;
}

KEEP signed char ret_s8(void)
{
	return -1;
}

KEEP struct big ret_big(void)
{
	struct big b = {1, 2, 3};
	return b;
}

int main(void)
{
	return 0;
}
