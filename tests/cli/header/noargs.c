/* SPDX-License-Identifier: MIT */
/*
 * noargs.c - the call of an event without arguments, trail(hdr, tick): the
 * one construct allowed a warning under -pedantic (ISO C wants an argument
 * for "..."), so test-header.sh builds it apart from the -Werror matrix.
 */
#include "events.h"

int main(void)
{
	trail(hdr, tick);
	return trail_enabled(hdr, tick) ? 1 : 0;
}
