/* SPDX-License-Identifier: MIT */
/*
 * u.c - libu.so for test-libfuncs.sh: a shared library built the way a
 * distribution builds one (no patchable entries, stripped to .dynsym), so
 * that its functions are entered through their displaced entries. One of
 * each kind: exported, static (unnamed once stripped: sub_<address>), a
 * jump table, a tail call into another exported function, and (spin.S)
 * a loop whose head is the entry, one whose head is inside the bytes a
 * jump would replace.
 */
__attribute__((noinline)) static int u_hidden(int x)
{
	return x * 7 + 3;
}

int u_add(int a, int b)
{
	return a + b + (a & 1);
}

int u_hid(int x)
{
	return u_hidden(x) ^ 1;
}

int u_switch(int k)
{
	switch (k) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 37;
	case 3: return 41;
	case 4: return 53;
	case 5: return 67;
	case 6: return 71;
	case 7: return 89;
	default: return -1;
	}
}

int u_tail(int a)
{
	return u_add(a, 1); /* a jump, not a call, at -O2 */
}
