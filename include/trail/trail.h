/* SPDX-License-Identifier: MIT */
/*
 * trail/trail.h - static tracepoints for C11 and C++11 programs.
 *
 *   #include <trail/trail.h>
 *
 *   TRAIL_EVENT(app, request,
 *       TRAIL_ARGS(int, fd, const char *, path, uint64_t, bytes),
 *       TRAIL_FIELDS(trail_field_int(fd)
 *                    trail_field_string(path)
 *                    trail_field_hex(bytes)))
 *
 *   trail(app, request, fd, path, n);      // the call site
 *   if (trail_enabled(app, request)) ...   // guard costly preparation
 *
 * TRAIL_EVENT_DEFINE takes the same arguments and declares only the
 * descriptor, TRAIL_EVENT_DESC(app, request), for code that packs the
 * payload itself (libtrail's function tracer does, probes will).
 *
 * One header, no generated files, no separate provider object: put
 * TRAIL_EVENT in any header and include it from as many translation units
 * and shared objects as you like. Linking libtrail is optional: without it
 * (and without `trail record`, which preloads it) every event stays off.
 *
 * Cost when off: one load of a static word and a not-taken branch; the
 * arguments are not evaluated. Cost when on: the fields are packed on the
 * stack and handed to libtrail's record path (trail__write).
 *
 * Field macros (NAME is the field name; EXPR defaults to NAME, i.e. the
 * argument of that name; wrap an EXPR containing commas in parentheses):
 *
 *   trail_field_int(NAME[, EXPR])          integer, decimal, sign from type
 *   trail_field_hex(NAME[, EXPR])          integer shown in hex
 *   trail_field_bool(NAME[, EXPR])         stored as one byte, 0 or 1
 *   trail_field_ptr(NAME[, EXPR])          pointer, shown in hex
 *   trail_field_float(NAME[, EXPR])        float or double
 *   trail_field_string(NAME[, EXPR])       NUL-terminated, first 4095 bytes
 *   trail_field_array(NAME[, EXPR], N)     N integers (N a constant)
 *   trail_field_array_hex(NAME[, EXPR], N)
 *   trail_field_seq(NAME[, EXPR], LEN)     LEN integers (LEN evaluated once,
 *   trail_field_seq_hex(NAME[, EXPR], LEN)   at most 4096 kept)
 *
 * Types are checked at compile time: an int field given a pointer, a string
 * field given an int, or a call with the wrong argument types do not build.
 */
#ifndef TRAIL_TRAIL_H
#define TRAIL_TRAIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <trail/abi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Provided by libtrail; weak so that instrumented code runs without it. */
extern void trail__write(struct trail_event *ev, const void *payload,
			 uint32_t len) __attribute__((weak));
extern void trail__register(struct trail_event **start,
			    struct trail_event **stop) __attribute__((weak));
extern void trail__unregister(struct trail_event **start,
			      struct trail_event **stop) __attribute__((weak));

/* This object's descriptor list, bounded by the linker. */
extern struct trail_event *__start_trail_events[]
	__attribute__((visibility("hidden")));
extern struct trail_event *__stop_trail_events[]
	__attribute__((visibility("hidden")));

#ifdef __cplusplus
}
#endif

#if defined(__has_attribute)
#if __has_attribute(retain)
#define TRAIL__RETAIN __attribute__((retain))
#endif
#endif
#ifndef TRAIL__RETAIN
#define TRAIL__RETAIN
#endif

/* A NULL entry so the section, and its bounds, exist in every object that
 * includes this header; registration skips it. */
static struct trail_event *trail__evnull
	__attribute__((section("trail_events"), used)) TRAIL__RETAIN = 0;

__attribute__((constructor, used)) static void trail__dso_ctor(void)
{
	if (trail__register)
		trail__register(__start_trail_events, __stop_trail_events);
}

__attribute__((destructor, used)) static void trail__dso_dtor(void)
{
	if (trail__unregister)
		trail__unregister(__start_trail_events, __stop_trail_events);
}

static inline uint32_t trail__strlen(const char *s)
{
	const char *z;

	if (!s)
		return TRAIL_STRING_NULL;
	z = (const char *)memchr(s, 0, TRAIL_STRING_MAX);
	return z ? (uint32_t)(z - s) : TRAIL_STRING_MAX;
}

/* A sequence length: negative (a failed read()'s -1) or absurd means 0. */
static inline uint32_t trail__seqlen(int64_t n)
{
	return n < 0 ? 0 : n > (int64_t)TRAIL_SEQ_MAX ? TRAIL_SEQ_MAX : (uint32_t)n;
}

/* A fixed array from a NULL pointer is stored as zeros. */
static inline unsigned char *trail__put_array(unsigned char *p, const void *src,
					      size_t size)
{
	if (src)
		memcpy(p, src, size);
	else
		memset(p, 0, size);
	return p + size;
}

/* ------------------------------------------------------------------------
 * Preprocessor machinery. A field list is a sequence of tuples
 * (KIND, NAME, EXPR, COUNT)(...)...; TRAIL__EACH(OP, seq) applies
 * TRAIL__OP_<KIND> to each without a recursion limit: the A/B pair walks the
 * sequence, the deferred call keeps commas out of the way until the
 * terminator has been pasted.
 */
#define TRAIL__CAT(a, b) TRAIL__CAT_(a, b)
#define TRAIL__CAT_(a, b) a##b
#define TRAIL__EMPTY()
#define TRAIL__DEFER(id) id TRAIL__EMPTY()
#define TRAIL__EACH(op, seq) TRAIL__CAT(TRAIL__##op##_A seq, _END)

#define TRAIL__MD_A(...) TRAIL__DEFER(TRAIL__MD)(__VA_ARGS__) TRAIL__MD_B
#define TRAIL__MD_B(...) TRAIL__DEFER(TRAIL__MD)(__VA_ARGS__) TRAIL__MD_A
#define TRAIL__MD_A_END
#define TRAIL__MD_B_END
#define TRAIL__MI_A(...) TRAIL__DEFER(TRAIL__MI)(__VA_ARGS__) TRAIL__MI_B
#define TRAIL__MI_B(...) TRAIL__DEFER(TRAIL__MI)(__VA_ARGS__) TRAIL__MI_A
#define TRAIL__MI_A_END
#define TRAIL__MI_B_END
#define TRAIL__NF_A(...) +1 TRAIL__NF_B
#define TRAIL__NF_B(...) +1 TRAIL__NF_A
#define TRAIL__NF_A_END
#define TRAIL__NF_B_END
#define TRAIL__CK_A(...) TRAIL__DEFER(TRAIL__CK)(__VA_ARGS__) TRAIL__CK_B
#define TRAIL__CK_B(...) TRAIL__DEFER(TRAIL__CK)(__VA_ARGS__) TRAIL__CK_A
#define TRAIL__CK_A_END
#define TRAIL__CK_B_END
#define TRAIL__PR_A(...) TRAIL__DEFER(TRAIL__PR)(__VA_ARGS__) TRAIL__PR_B
#define TRAIL__PR_B(...) TRAIL__DEFER(TRAIL__PR)(__VA_ARGS__) TRAIL__PR_A
#define TRAIL__PR_A_END
#define TRAIL__PR_B_END
#define TRAIL__WR_A(...) TRAIL__DEFER(TRAIL__WR)(__VA_ARGS__) TRAIL__WR_B
#define TRAIL__WR_B(...) TRAIL__DEFER(TRAIL__WR)(__VA_ARGS__) TRAIL__WR_A
#define TRAIL__WR_A_END
#define TRAIL__WR_B_END

#define TRAIL__MD(k, n, e, c) TRAIL__MD_##k(n, e, c)
#define TRAIL__MI(k, n, e, c) TRAIL__MI_##k(n, e, c)
#define TRAIL__CK(k, n, e, c) TRAIL__CK_##k(n, e, c)
#define TRAIL__PR(k, n, e, c) TRAIL__PR_##k(n, e, c)
#define TRAIL__WR(k, n, e, c) TRAIL__WR_##k(n, e, c)

/* Argument counting, 0..24 (an empty list counts as 1, see TRAIL__P_1). */
#define TRAIL__NARGS(...)                                                    \
	TRAIL__NARGS_(__VA_ARGS__, 24, 23, 22, 21, 20, 19, 18, 17, 16, 15,   \
		      14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define TRAIL__NARGS_(a1, a2, a3, a4, a5, a6, a7, a8, a9, a10, a11, a12,    \
		      a13, a14, a15, a16, a17, a18, a19, a20, a21, a22, a23, \
		      a24, N, ...)                                           \
	N

/* TRAIL_ARGS(type, name, ...) -> parameter list */
#define TRAIL__PARAMS(...)                                                   \
	TRAIL__CAT(TRAIL__P_, TRAIL__NARGS(__VA_ARGS__))(__VA_ARGS__)
#define TRAIL__P_1(x) void
#define TRAIL__P_2(t1, a1) t1 a1
#define TRAIL__P_4(t1, a1, ...) t1 a1, TRAIL__P_2(__VA_ARGS__)
#define TRAIL__P_6(t1, a1, ...) t1 a1, TRAIL__P_4(__VA_ARGS__)
#define TRAIL__P_8(t1, a1, ...) t1 a1, TRAIL__P_6(__VA_ARGS__)
#define TRAIL__P_10(t1, a1, ...) t1 a1, TRAIL__P_8(__VA_ARGS__)
#define TRAIL__P_12(t1, a1, ...) t1 a1, TRAIL__P_10(__VA_ARGS__)
#define TRAIL__P_14(t1, a1, ...) t1 a1, TRAIL__P_12(__VA_ARGS__)
#define TRAIL__P_16(t1, a1, ...) t1 a1, TRAIL__P_14(__VA_ARGS__)
#define TRAIL__P_18(t1, a1, ...) t1 a1, TRAIL__P_16(__VA_ARGS__)
#define TRAIL__P_20(t1, a1, ...) t1 a1, TRAIL__P_18(__VA_ARGS__)
#define TRAIL__P_22(t1, a1, ...) t1 a1, TRAIL__P_20(__VA_ARGS__)
#define TRAIL__P_24(t1, a1, ...) t1 a1, TRAIL__P_22(__VA_ARGS__)
/* TRAIL_ARGS(type, name, ...) -> the names, and a zero of each type */
#define TRAIL__NAMES(...)                                                    \
	TRAIL__CAT(TRAIL__N_, TRAIL__NARGS(__VA_ARGS__))(__VA_ARGS__)
#define TRAIL__N_1(x)
#define TRAIL__N_2(t1, a1) a1
#define TRAIL__N_4(t1, a1, ...) a1, TRAIL__N_2(__VA_ARGS__)
#define TRAIL__N_6(t1, a1, ...) a1, TRAIL__N_4(__VA_ARGS__)
#define TRAIL__N_8(t1, a1, ...) a1, TRAIL__N_6(__VA_ARGS__)
#define TRAIL__N_10(t1, a1, ...) a1, TRAIL__N_8(__VA_ARGS__)
#define TRAIL__N_12(t1, a1, ...) a1, TRAIL__N_10(__VA_ARGS__)
#define TRAIL__N_14(t1, a1, ...) a1, TRAIL__N_12(__VA_ARGS__)
#define TRAIL__N_16(t1, a1, ...) a1, TRAIL__N_14(__VA_ARGS__)
#define TRAIL__N_18(t1, a1, ...) a1, TRAIL__N_16(__VA_ARGS__)
#define TRAIL__N_20(t1, a1, ...) a1, TRAIL__N_18(__VA_ARGS__)
#define TRAIL__N_22(t1, a1, ...) a1, TRAIL__N_20(__VA_ARGS__)
#define TRAIL__N_24(t1, a1, ...) a1, TRAIL__N_22(__VA_ARGS__)
#ifdef __cplusplus
#define TRAIL__ZERO(t) t()
#else
#define TRAIL__ZERO(t) (t){0}
#endif
#define TRAIL__ZEROS(...)                                                    \
	TRAIL__CAT(TRAIL__Z_, TRAIL__NARGS(__VA_ARGS__))(__VA_ARGS__)
#define TRAIL__Z_1(x)
#define TRAIL__Z_2(t1, a1) TRAIL__ZERO(t1)
#define TRAIL__Z_4(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_2(__VA_ARGS__)
#define TRAIL__Z_6(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_4(__VA_ARGS__)
#define TRAIL__Z_8(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_6(__VA_ARGS__)
#define TRAIL__Z_10(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_8(__VA_ARGS__)
#define TRAIL__Z_12(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_10(__VA_ARGS__)
#define TRAIL__Z_14(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_12(__VA_ARGS__)
#define TRAIL__Z_16(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_14(__VA_ARGS__)
#define TRAIL__Z_18(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_16(__VA_ARGS__)
#define TRAIL__Z_20(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_18(__VA_ARGS__)
#define TRAIL__Z_22(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_20(__VA_ARGS__)
#define TRAIL__Z_24(t1, a1, ...) TRAIL__ZERO(t1), TRAIL__Z_22(__VA_ARGS__)

#ifdef __cplusplus
#define TRAIL__SASSERT(c, m) static_assert(c, m)
#else
#define TRAIL__SASSERT(c, m) _Static_assert(c, m)
#endif

#define TRAIL__T(e) __typeof__(e)
#define TRAIL__ET(e) __typeof__((e)[0])
#ifdef __cplusplus
#include <type_traits>
template <typename T, bool E = std::is_enum<T>::value> struct trail__sgn {
	static const bool value = std::is_signed<T>::value;
};
template <typename T> struct trail__sgn<T, true> {
	static const bool value =
		std::is_signed<typename std::underlying_type<T>::type>::value;
};
#define TRAIL__SIGNED_T(T)                                                   \
	(trail__sgn<typename std::remove_cv<typename std::remove_reference<  \
		     T>::type>::type>::value                                 \
		 ? TRAIL_FF_SIGNED                                           \
		 : 0)
#else
#define TRAIL__SIGNED_T(T) (((T)-1 < (T)1) ? TRAIL_FF_SIGNED : 0)
#endif
#ifdef __cplusplus
/* by type: C++ rejects non-constexpr calls even inside the builtin */
#define TRAIL__BARE(e)                                                       \
	typename std::remove_cv<typename std::remove_reference<__typeof__(e)>::type>::type
#define TRAIL__IS_INT(e)                                                     \
	(std::is_integral<TRAIL__BARE(e)>::value || std::is_enum<TRAIL__BARE(e)>::value)
#define TRAIL__IS_PTR(e)                                                     \
	(std::is_pointer<TRAIL__BARE(e)>::value || std::is_array<TRAIL__BARE(e)>::value)
#define TRAIL__IS_REAL(e) std::is_floating_point<TRAIL__BARE(e)>::value
#else
#define TRAIL__CLS(e) __builtin_classify_type(e)
#define TRAIL__IS_INT(e) (TRAIL__CLS(e) >= 1 && TRAIL__CLS(e) <= 4)
#define TRAIL__IS_PTR(e) (TRAIL__CLS(e) == 5)
#define TRAIL__IS_REAL(e) (TRAIL__CLS(e) == 8)
#endif
#define TRAIL__SZ_OK(s) ((s) == 1 || (s) == 2 || (s) == 4 || (s) == 8)

/* Field tuple constructors, with the optional EXPR. */
#define TRAIL__NARG3(...) TRAIL__NARG3_(__VA_ARGS__, 3, 2, 1, 0)
#define TRAIL__NARG3_(a, b, c, N, ...) N
#define TRAIL__F(k, ...)                                                     \
	TRAIL__CAT(TRAIL__F_, TRAIL__NARG3(__VA_ARGS__))(k, __VA_ARGS__)
#define TRAIL__F_1(k, n) (k, n, n, 0)
#define TRAIL__F_2(k, n, e) (k, n, e, 0)
#define TRAIL__FC(k, ...)                                                    \
	TRAIL__CAT(TRAIL__FC_, TRAIL__NARG3(__VA_ARGS__))(k, __VA_ARGS__)
#define TRAIL__FC_2(k, n, c) (k, n, n, c)
#define TRAIL__FC_3(k, n, e, c) (k, n, e, c)

#define trail_field_int(...) TRAIL__F(INT, __VA_ARGS__)
#define trail_field_hex(...) TRAIL__F(HEX, __VA_ARGS__)
#define trail_field_bool(...) TRAIL__F(BOOL, __VA_ARGS__)
#define trail_field_ptr(...) TRAIL__F(PTR, __VA_ARGS__)
#define trail_field_float(...) TRAIL__F(FLT, __VA_ARGS__)
#define trail_field_string(...) TRAIL__F(STR, __VA_ARGS__)
#define trail_field_array(...) TRAIL__FC(ARR, __VA_ARGS__)
#define trail_field_array_hex(...) TRAIL__FC(ARRX, __VA_ARGS__)
#define trail_field_seq(...) TRAIL__FC(SEQ, __VA_ARGS__)
#define trail_field_seq_hex(...) TRAIL__FC(SEQX, __VA_ARGS__)

/* MD: the field's member in the description blob (same for every kind). */
#define TRAIL__MD_ONE(n)                                                     \
	struct __attribute__((packed)) {                                     \
		struct trail_meta_field f;                                   \
		char s[sizeof(#n)];                                          \
	} trail__f_##n;
#define TRAIL__MD_INT(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_HEX(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_BOOL(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_PTR(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_FLT(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_STR(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_ARR(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_ARRX(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_SEQ(n, e, c) TRAIL__MD_ONE(n)
#define TRAIL__MD_SEQX(n, e, c) TRAIL__MD_ONE(n)

/* MI: its initializer. */
#define TRAIL__MI_ONE(n, kind, size, flags, count)                           \
	{{(uint8_t)(kind), (uint8_t)(size), (uint8_t)(flags),                \
	  (uint8_t)(sizeof(#n) - 1), (uint16_t)(count)},                     \
	 #n},
#define TRAIL__MI_INT(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_INT, sizeof(e), TRAIL__SIGNED_T(TRAIL__T(e)), 0)
#define TRAIL__MI_HEX(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_INT, sizeof(e),                            \
		      TRAIL__SIGNED_T(TRAIL__T(e)) | TRAIL_FF_HEX, 0)
#define TRAIL__MI_BOOL(n, e, c)                                              \
	TRAIL__MI_ONE(n, TRAIL_FK_INT, 1, TRAIL_FF_BOOL, 0)
#define TRAIL__MI_PTR(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_INT, 8, TRAIL_FF_PTR | TRAIL_FF_HEX, 0)
#define TRAIL__MI_FLT(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_FLOAT, sizeof(e), TRAIL_FF_SIGNED, 0)
#define TRAIL__MI_STR(n, e, c) TRAIL__MI_ONE(n, TRAIL_FK_STRING, 1, 0, 0)
#define TRAIL__MI_ARR(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_ARRAY, sizeof((e)[0]),                     \
		      TRAIL__SIGNED_T(TRAIL__ET(e)), c)
#define TRAIL__MI_ARRX(n, e, c)                                              \
	TRAIL__MI_ONE(n, TRAIL_FK_ARRAY, sizeof((e)[0]),                     \
		      TRAIL__SIGNED_T(TRAIL__ET(e)) | TRAIL_FF_HEX, c)
#define TRAIL__MI_SEQ(n, e, c)                                               \
	TRAIL__MI_ONE(n, TRAIL_FK_SEQ, sizeof((e)[0]),                       \
		      TRAIL__SIGNED_T(TRAIL__ET(e)), 0)
#define TRAIL__MI_SEQX(n, e, c)                                              \
	TRAIL__MI_ONE(n, TRAIL_FK_SEQ, sizeof((e)[0]),                       \
		      TRAIL__SIGNED_T(TRAIL__ET(e)) | TRAIL_FF_HEX, 0)

/* CK: compile-time type checks. */
#define TRAIL__CK_SCALAR(n, e, what)                                         \
	TRAIL__SASSERT(TRAIL__IS_INT(e) && TRAIL__SZ_OK(sizeof(e)),          \
		       "trail field '" #n "' must be a 1, 2, 4 or 8-byte " what);
#define TRAIL__CK_INT(n, e, c) TRAIL__CK_SCALAR(n, e, "integer")
#define TRAIL__CK_HEX(n, e, c) TRAIL__CK_SCALAR(n, e, "integer")
#define TRAIL__CK_BOOL(n, e, c)                                              \
	TRAIL__SASSERT(TRAIL__IS_INT(e) || TRAIL__IS_PTR(e),                 \
		       "trail field '" #n "' must be a scalar");
#define TRAIL__CK_PTR(n, e, c)                                               \
	TRAIL__SASSERT(TRAIL__IS_PTR(e), "trail field '" #n "' must be a pointer");
#define TRAIL__CK_FLT(n, e, c)                                               \
	TRAIL__SASSERT(TRAIL__IS_REAL(e) && (sizeof(e) == 4 || sizeof(e) == 8), \
		       "trail field '" #n "' must be a float or a double");
/* pointer-ness first, on its own: its message then comes before the
 * compiler's own complaint about dereferencing a non-pointer */
#define TRAIL__CK_STR(n, e, c)                                               \
	TRAIL__SASSERT(TRAIL__IS_PTR(e),                                     \
		       "trail field '" #n "' must be a char pointer or array"); \
	TRAIL__SASSERT(sizeof(*(e)) == 1,                                    \
		       "trail field '" #n "' must be a char pointer or array");
#define TRAIL__CK_ELEMS(n, e)                                                \
	TRAIL__SASSERT(TRAIL__IS_PTR(e),                                     \
		       "trail field '" #n "' must point to 1, 2, 4 or 8-byte integers"); \
	TRAIL__SASSERT(TRAIL__IS_INT((e)[0]) && TRAIL__SZ_OK(sizeof((e)[0])), \
		       "trail field '" #n "' must point to 1, 2, 4 or 8-byte integers");
#define TRAIL__CK_ARR(n, e, c)                                               \
	TRAIL__CK_ELEMS(n, e)                                                \
	TRAIL__SASSERT((c) > 0 && (c) <= 65535,                              \
		       "trail field '" #n "': array count out of range");
#define TRAIL__CK_ARRX(n, e, c) TRAIL__CK_ARR(n, e, c)
#define TRAIL__CK_SEQ(n, e, c) TRAIL__CK_ELEMS(n, e)
#define TRAIL__CK_SEQX(n, e, c) TRAIL__CK_ELEMS(n, e)

/* PR: evaluate variable-length fields once, add every field's size. */
#define TRAIL__PR_INT(n, e, c) trail__len += sizeof(e);
#define TRAIL__PR_HEX(n, e, c) trail__len += sizeof(e);
#define TRAIL__PR_BOOL(n, e, c) trail__len += 1;
#define TRAIL__PR_PTR(n, e, c) trail__len += 8;
#define TRAIL__PR_FLT(n, e, c) trail__len += sizeof(e);
#define TRAIL__PR_STR(n, e, c)                                               \
	const char *trail__s_##n = (e);                                      \
	uint32_t trail__l_##n = trail__strlen(trail__s_##n);                 \
	trail__len += 2 + (trail__l_##n == TRAIL_STRING_NULL ? 0 : trail__l_##n);
#define TRAIL__PR_ARR(n, e, c) trail__len += sizeof((e)[0]) * (c);
#define TRAIL__PR_ARRX(n, e, c) TRAIL__PR_ARR(n, e, c)
#define TRAIL__PR_SEQ(n, e, c)                                               \
	const TRAIL__ET(e) *trail__q_##n = (e);                              \
	uint32_t trail__c_##n = trail__q_##n ? trail__seqlen((int64_t)(c)) : 0; \
	trail__len += 2 + trail__c_##n * sizeof(*trail__q_##n);
#define TRAIL__PR_SEQX(n, e, c) TRAIL__PR_SEQ(n, e, c)

/* WR: pack into the payload. */
#define TRAIL__PUT(src, sz)                                                  \
	(__builtin_memcpy(trail__p, (src), (sz)), trail__p += (sz))
#define TRAIL__WR_VAL(e)                                                     \
	{                                                                    \
		TRAIL__T(e) trail__v = (e);                                  \
		TRAIL__PUT(&trail__v, sizeof(trail__v));                     \
	}
#define TRAIL__WR_INT(n, e, c) TRAIL__WR_VAL(e)
#define TRAIL__WR_HEX(n, e, c) TRAIL__WR_VAL(e)
#define TRAIL__WR_FLT(n, e, c) TRAIL__WR_VAL(e)
#define TRAIL__WR_BOOL(n, e, c)                                              \
	{                                                                    \
		uint8_t trail__v = (e) ? 1 : 0;                              \
		TRAIL__PUT(&trail__v, 1);                                    \
	}
#define TRAIL__WR_PTR(n, e, c)                                               \
	{                                                                    \
		uint64_t trail__v = (uint64_t)(uintptr_t)(e);                \
		TRAIL__PUT(&trail__v, 8);                                    \
	}
#define TRAIL__WR_STR(n, e, c)                                               \
	{                                                                    \
		uint16_t trail__k = (uint16_t)trail__l_##n;                  \
		TRAIL__PUT(&trail__k, 2);                                    \
		if (trail__k != TRAIL_STRING_NULL)                           \
			TRAIL__PUT(trail__s_##n, trail__k);                  \
	}
#define TRAIL__WR_ARR(n, e, c)                                               \
	trail__p = trail__put_array(trail__p, (e), sizeof((e)[0]) * (c));
#define TRAIL__WR_ARRX(n, e, c) TRAIL__WR_ARR(n, e, c)
#define TRAIL__WR_SEQ(n, e, c)                                               \
	{                                                                    \
		uint16_t trail__k = (uint16_t)trail__c_##n;                  \
		TRAIL__PUT(&trail__k, 2);                                    \
		if (trail__k)                                                \
			TRAIL__PUT(trail__q_##n,                             \
				   trail__k * sizeof(*trail__q_##n));        \
	}
#define TRAIL__WR_SEQX(n, e, c) TRAIL__WR_SEQ(n, e, c)

/* ------------------------------------------------------------------------
 * The public macros.
 */
#define TRAIL_ARGS(...) (__VA_ARGS__)
#define TRAIL_FIELDS(...) __VA_ARGS__

/*
 * The descriptor of an event, once: its status word
 * (trail__state_PROV_EV, what trail() and trail_enabled() load), its
 * description blob and the struct trail_event libtrail registers.
 * The function holding them takes the event's arguments (unused: the
 * field descriptions take their types from them) and returns the struct
 * trail_event *; it is static inline, so the descriptor exists in the
 * objects that use it.
 * meta_attrs: where the blob goes (trail_meta, which `trail list` reads
 * in the program's file; libtrail's own events leave it out).
 */
#define TRAIL__DESCRIBE(prov, ev, args, fields, meta_attrs)                  \
	static uint32_t trail__state_##prov##_##ev __attribute__((unused));  \
	_Pragma("GCC diagnostic push")                                       \
	_Pragma("GCC diagnostic ignored \"-Wunused-parameter\"")             \
	static inline struct trail_event *trail__desc_##prov##_##ev(         \
		TRAIL__PARAMS args)                                          \
	{                                                                    \
		static const struct __attribute__((packed)) {                \
			struct trail_meta_hdr h;                             \
			char p[sizeof(#prov)];                               \
			char e[sizeof(#ev)];                                 \
			TRAIL__EACH(MD, fields)                              \
		} trail__meta meta_attrs = {                                 \
			{TRAIL_META_MAGIC, sizeof(trail__meta), 1,           \
			 0 TRAIL__EACH(NF, fields)},                         \
			#prov,                                               \
			#ev,                                                 \
			TRAIL__EACH(MI, fields)};                            \
		static struct trail_event trail__ev = {                      \
			TRAIL_EVENT_ABI, sizeof(struct trail_event),         \
			&trail__state_##prov##_##ev, &trail__meta, 0};       \
		static struct trail_event *trail__evp                        \
			__attribute__((section("trail_events"), used))       \
				TRAIL__RETAIN = &trail__ev;                  \
		(void)trail__evp;                                            \
		return &trail__ev;                                           \
	}                                                                    \
	_Pragma("GCC diagnostic pop")
/* the descriptor alone: its arguments' types must have a zero (no
 * references) */
#define TRAIL__DESCRIBE_ALONE(prov, ev, args, fields, meta_attrs)            \
	TRAIL__DESCRIBE(prov, ev, args, fields, meta_attrs)                  \
	static inline struct trail_event *trail__desc0_##prov##_##ev(void)   \
	{                                                                    \
		return trail__desc_##prov##_##ev(TRAIL__ZEROS args);         \
	}
#define TRAIL__DESC(prov, ev) trail__desc0_##prov##_##ev()
#define TRAIL__META_LISTED __attribute__((section("trail_meta"), used)) TRAIL__RETAIN

/* An event whose records another writer than trail() packs (the payload
 * is the fields in order, as trail() would pack them): its descriptor,
 * TRAIL_EVENT_DESC(PROV, EV), and trail_enabled(). */
#define TRAIL_EVENT_DEFINE(prov, ev, args, fields)                           \
	TRAIL__DESCRIBE_ALONE(prov, ev, args, fields, TRAIL__META_LISTED)
#define TRAIL_EVENT_DESC(prov, ev) TRAIL__DESC(prov, ev)

#define TRAIL_EVENT(prov, ev, args, fields)                                  \
	TRAIL__DESCRIBE(prov, ev, args, fields, TRAIL__META_LISTED)          \
	static inline void trail__emit_##prov##_##ev(TRAIL__PARAMS args)     \
	{                                                                    \
		size_t trail__len = 0;                                       \
		unsigned char *trail__buf, *trail__p;                        \
		TRAIL__EACH(CK, fields)                                      \
		TRAIL__EACH(PR, fields)                                      \
		trail__buf = trail__p =                                      \
			(unsigned char *)__builtin_alloca(trail__len + 1);   \
		TRAIL__EACH(WR, fields)                                      \
		*trail__p = 0; /* the spare byte: nothing is read uninitialized */ \
		trail__write(trail__desc_##prov##_##ev(TRAIL__NAMES args),   \
			     trail__buf, (uint32_t)trail__len);              \
	}

/* The call site: one relaxed load of the status word and a branch. */
#define trail(prov, ev, ...)                                                 \
	do {                                                                 \
		if (__builtin_expect(__atomic_load_n(                        \
					     &trail__state_##prov##_##ev,    \
					     __ATOMIC_RELAXED) != 0,         \
				     0))                                     \
			trail__emit_##prov##_##ev(__VA_ARGS__);              \
	} while (0)

#define trail_enabled(prov, ev)                                              \
	__builtin_expect(__atomic_load_n(&trail__state_##prov##_##ev,        \
					 __ATOMIC_RELAXED) != 0,             \
			 0)

#endif /* TRAIL_TRAIL_H */
