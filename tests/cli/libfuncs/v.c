/* SPDX-License-Identifier: MIT */
/* v.c - libv.so for test-libfuncs.sh: another unmodified library, calling
 * into libu */
int u_add(int a, int b);

int v_run(int n)
{
	int s = 0;

	for (int i = 0; i < n; i++)
		s += u_add(i, 2);
	return s;
}
