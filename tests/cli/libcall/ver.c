/* SPDX-License-Identifier: MIT */
/* ver.c - one function in two versions (test-libcall.sh): built with V1
 * alone to link the program against, then with V2 the default and V1 kept
 * for programs linked before, to run it with. The program must still get
 * V1's, as the dynamic loader binds it. */
int ver_v1(void) { return 1; }
#ifdef BOTH
__asm__(".symver ver_v1, ver@V1");
int ver_v2(void) { return 2; }
__asm__(".symver ver_v2, ver@@V2");
#else
__asm__(".symver ver_v1, ver@@V1");
#endif
