/* SPDX-License-Identifier: MIT */
/* multi-b.c - second translation unit: multi:shared again, and multi:only_b. */
#include "multi.h"

uint32_t *multi_b_state(void) { return &trail__state_multi_shared; }

void multi_b(int who)
{
	trail(multi, shared, who);
	trail(multi, only_b, "b");
}
