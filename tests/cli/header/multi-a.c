/* SPDX-License-Identifier: MIT */
/* multi-a.c - first translation unit of the program using multi:shared. */
#include "multi.h"

uint32_t *multi_a_state(void) { return &trail__state_multi_shared; }
void multi_a(int who) { trail(multi, shared, who); }
