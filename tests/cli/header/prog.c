/* SPDX-License-Identifier: MIT */
/*
 * prog.c - calls every event of events.h; built by test-header.sh in each C
 * mode and link mode (PIE, -no-pie, -static) and run without libtrail: the
 * weak references stay NULL, every event stays off, exit status 0.
 */
#include "events.h"

int main(void)
{
	static const struct hdr_rec r = {"rec", {1, 2}};
	static const uint8_t bytes[4] = {1, 2, 3, 4};
	static const int64_t v[3] = {-1, 0, 1};
	static int x;

	if (trail__write || trail__register || trail__unregister)
		return 10; /* libtrail was linked or preloaded */
	trail(hdr, ints, -1, -2, -3, -4, 1, 2, 3, 4);
	trail(hdr, scalars, true, 42, &x, 1.5f, 2.5, 'c', -5L, 6ull);
	trail(hdr, blobs, "s", &r, bytes, v, 3);
	trail(hdr, twelve, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12);
	if (trail_enabled(hdr, ints) || trail_enabled(hdr, blobs))
		return 11;
	return 0;
}
