/* SPDX-License-Identifier: MIT */
/* multi-lib.c - libmulti.so: multi:shared from a shared library. */
#include "multi.h"

uint32_t *multi_lib_state(void) { return &trail__state_multi_shared; }
void multi_lib(int who) { trail(multi, shared, who); }
