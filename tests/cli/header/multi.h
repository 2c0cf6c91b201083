/* SPDX-License-Identifier: MIT */
/*
 * multi.h - events included by several translation units (multi-a.c,
 * multi-b.c) of one program and by a shared library (multi-lib.c); each TU
 * exports the address of its own status word so multi-main.c can tell the
 * descriptors apart.
 */
#ifndef TEST_HEADER_MULTI_H
#define TEST_HEADER_MULTI_H

#include <stdint.h>

#include <trail/trail.h>

TRAIL_EVENT(multi, shared, TRAIL_ARGS(int, who), TRAIL_FIELDS(trail_field_int(who)))
TRAIL_EVENT(multi, only_b, TRAIL_ARGS(const char *, s),
	    TRAIL_FIELDS(trail_field_string(s)))

uint32_t *multi_a_state(void);
void multi_a(int who);
uint32_t *multi_b_state(void);
void multi_b(int who);
uint32_t *multi_lib_state(void);
void multi_lib(int who);

#endif /* TEST_HEADER_MULTI_H */
