/* SPDX-License-Identifier: MIT */
/* plug.c - libplug.so for test-libfuncs.sh: an unmodified library the
 * program loads with dlopen, and unloads */
__attribute__((noinline)) int p_step(int x)
{
	return x * 5 + 1;
}

int p_work(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += p_step(i);
	return s;
}
