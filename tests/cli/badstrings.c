/* SPDX-License-Identifier: MIT */
/*
 * badstrings.c - events whose fields are hard to write as JSON, for the
 * export tests: strings holding quotes, backslashes, control bytes, DEL,
 * ill-formed UTF-8 of every kind and well-formed multibyte UTF-8; numbers
 * a double cannot hold, NaN and the infinities; and functions whose
 * demangled names hold quotes and angle brackets (C functions given C++
 * mangled names), to trace with function_graph.
 *
 *   badstrings     prints "INDEX HEX" for each string it records, so a
 *                  test knows the bytes each bad:str event holds
 */
#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <trail/trail.h>

TRAIL_EVENT(bad, str,
	TRAIL_ARGS(int, i, const char *, s),
	TRAIL_FIELDS(trail_field_int(i)
		     trail_field_string(s)))

TRAIL_EVENT(bad, nums,
	TRAIL_ARGS(uint64_t, big, uint64_t, safe, int64_t, neg, int64_t, negsafe, uint64_t, hex,
		   int8_t, small, bool, yes, double, d, float, f, const uint64_t *, arr),
	TRAIL_FIELDS(trail_field_int(big)
		     trail_field_int(safe)
		     trail_field_int(neg)
		     trail_field_int(negsafe)
		     trail_field_hex(hex)
		     trail_field_int(small)
		     trail_field_bool(yes)
		     trail_field_float(d)
		     trail_field_float(f)
		     trail_field_array(arr, arr, 3)
		     trail_field_seq_hex(codes, arr, 2)))

/* the names the demangler gives them: operator"" _km(unsigned long long),
 * int max<int>(int, int) */
unsigned long long lit_km(unsigned long long v) __asm__("_Zli3_kmy");
int max_int(int a, int b) __asm__("_Z3maxIiET_S0_S0_");

__attribute__((noinline)) unsigned long long lit_km(unsigned long long v)
{
	return v * 1000;
}

__attribute__((noinline)) int max_int(int a, int b)
{
	return a > b ? a : b + (int)lit_km(0);
}

static const char *const strs[] = {
	"plain ascii",
	"quote\" backslash\\ slash/ \"}],\"x\":1",
	"\x01\x02\x03\x04\x05\x06\x07\x08\x09\x0a\x0b\x0c\x0d\x0e\x0f\x10\x11\x12\x13\x14"
	"\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f DEL:\x7f",
	"valid: \xc3\xa9 \xe6\xbc\xa2\xe5\xad\x97 \xf0\x9f\x98\x80 \xe2\x80\xa8\xe2\x80\xa9 "
	"\xef\xbf\xbd \xef\xbb\xbf \xf4\x8f\xbf\xbf",
	"stray continuation \x80\xbf, lone lead \xc3 x, never valid \xc0 \xc1 \xf5 \xff\xfe",
	"overlong \xc0\xaf \xe0\x80\xaf \xf0\x80\x80\xaf \xc1\xbf",
	"surrogates \xed\xa0\x80 \xed\xbf\xbf pair \xed\xa0\xbd\xed\xb8\x80",
	"past U+10FFFF \xf4\x90\x80\x80 \xf7\xbf\xbf\xbf",
	"cut \xe2\x82 then \xf0\x9f\x98",
	"ends cut \xf0\x9f\x98",
	"",
};

static void hex(int i, const char *s)
{
	printf("%d ", i);
	for (size_t k = 0; s[k]; k++)
		printf("%02x", (unsigned char)s[k]);
	printf("\n");
}

int main(void)
{
	static char big[6000];
	const uint64_t arr[3] = {1, (1ull << 53) + 1, UINT64_MAX};
	int n = (int)(sizeof(strs) / sizeof(strs[0]));

	for (int i = 0; i < n; i++) {
		trail(bad, str, i, strs[i]);
		hex(i, strs[i]);
	}
	/* longer than a string field keeps (4095 bytes), each byte escaped
	 * into 6 */
	memset(big, 0x01, sizeof(big) - 1);
	trail(bad, str, n, big);
	hex(n, big);
	/* each byte a U+FFFD of 3 */
	memset(big, 0xff, sizeof(big) - 1);
	trail(bad, str, n + 1, big);
	hex(n + 1, big);
	trail(bad, str, -1, NULL);

	trail(bad, nums, (1ull << 53) + 1, (1ull << 53) - 1, INT64_MIN, -(int64_t)((1ull << 53) - 1),
	      UINT64_MAX, -128, true, NAN, 0.1f, arr);
	trail(bad, nums, 0, 0, 0, 0, 0, 0, false, INFINITY, -INFINITY, arr);
	trail(bad, nums, 0, 0, 0, 0, 0, 0, false, -0.0, 3.4028235e38f, arr);
	trail(bad, nums, 0, 0, 0, 0, 0, 0, false, 1e300, 1e-45f, arr);
	trail(bad, nums, 0, 0, 0, 0, 0, 0, false, 0.1, NAN, arr);
	return max_int(1, 2) == 2 ? 0 : 1;
}
