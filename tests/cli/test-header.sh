#!/usr/bin/env bash
# The public header <trail/trail.h> as users' compilers see it: it builds
# warning-free in every C and C++ mode with gcc and clang (the one allowed
# -pedantic warning is the call of an event without arguments); several
# translation units and a shared library include it and link together, each
# keeping its own descriptors; misuse fails to compile with a message that
# names the problem; and a program built with it runs without libtrail,
# as a PIE, with -no-pie and statically. Fixture sources are in header/.
. "$(dirname "$0")/lib.sh"

HDR=$SRC/tests/cli/header
INC=$SRC/include
CC=${CC:-cc}
CXX=${CXX:-c++}
export LC_ALL=C # plain quotes in compiler messages
unset LD_PRELOAD
HAVE_CLANG=
command -v clang >/dev/null && command -v clang++ >/dev/null && HAVE_CLANG=1

# --------------------------------------------------------------- the matrix

# build and run prog.c or prog.cc at -O0 and -O2 with warnings as errors
build_run() { # source, compiler, flags...
	local src=$1 comp=$2; shift 2
	for opt in -O0 -O2; do
		$comp "$@" $opt -Wall -Wextra -Werror -I"$INC" "$HDR/$src" \
			-o prog 2>err.txt || { cat err.txt; die "$comp $* $opt: build failed"; }
		expect_rc 0 ./prog
	done
}

matrix() { # label, source, gcc-side compiler, clang-side compiler, flags...
	local label=$1 src=$2 gnu=$3 llvm=$4; shift 4
	t "$label, $gnu" build_run "$src" "$gnu" "$@"
	if [ -n "$HAVE_CLANG" ]; then
		t "$label, $llvm" build_run "$src" "$llvm" "$@"
	else
		skip "$label, $llvm" "clang not installed"
	fi
}

matrix "C11 -Werror" prog.c "$CC" clang -std=c11
matrix "gnu11 -Werror" prog.c "$CC" clang -std=gnu11
matrix "C17 -Werror" prog.c "$CC" clang -std=c17
matrix "C11 -pedantic -Werror" prog.c "$CC" clang -std=c11 -pedantic
matrix "C++11 -Werror" prog.cc "$CXX" clang++ -std=c++11
matrix "C++14 -Werror" prog.cc "$CXX" clang++ -std=c++14
matrix "C++17 -Werror" prog.cc "$CXX" clang++ -std=c++17
matrix "C++20 -Werror" prog.cc "$CXX" clang++ -std=c++20

# Under -pedantic, trail(hdr, tick) for an event without arguments may draw
# "ISO C requires at least one argument for the '...'"; nothing else may.
only_noargs_warns() { # C compiler, C++ compiler
	for std in c11 gnu11 c17; do
		$1 -std=$std -Wall -Wextra -Werror -I"$INC" "$HDR/noargs.c" -o noargs \
			2>err.txt || { cat err.txt; die "$std without -pedantic"; }
		expect_rc 0 ./noargs
	done
	$1 -std=c11 -pedantic -Wall -Wextra -I"$INC" "$HDR/noargs.c" -o noargs 2>err.txt
	expect_rc 0 ./noargs
	$2 -std=c++11 -pedantic -Wall -Wextra -I"$INC" "$HDR/prog.cc" -o prog 2>>err.txt
	expect_rc 0 ./prog
	if grep 'warning:' err.txt | grep -v 'at least one argument'; then
		die "-pedantic warnings other than the empty-arguments one"
	fi
}
t "-pedantic warns only for an event without arguments, $CC" only_noargs_warns "$CC" "$CXX"
if [ -n "$HAVE_CLANG" ]; then
	t "-pedantic warns only for an event without arguments, clang" only_noargs_warns clang clang++
else
	skip "-pedantic warns only for an event without arguments, clang" "clang not installed"
fi

# ------------------------------------------------- several objects, one event

# multi-a.c and multi-b.c (one program) and multi-lib.c (libmulti.so) all
# include multi.h; multi-main.c checks the registered descriptor lists.
two_tus_and_a_library() { # compiler
	local f="-Wall -Wextra -Werror -I$INC"
	for opt in -O0 -O2; do
		$1 $opt $f -fPIC -shared "$HDR/multi-lib.c" -o libmulti.so
		$1 $opt $f -c "$HDR/multi-a.c" -o multi-a.o
		$1 $opt $f -c "$HDR/multi-b.c" -o multi-b.o
		$1 $opt $f "$HDR/multi-main.c" multi-a.o multi-b.o -L. -lmulti \
			-Wl,-rpath,"$PWD" -o multi 2>err.txt || { cat err.txt; die "link failed"; }
		expect_rc 0 ./multi
	done
}
t "two TUs and a shared library link, each keeps its descriptors, $CC" \
	two_tus_and_a_library "$CC"
if [ -n "$HAVE_CLANG" ]; then
	t "two TUs and a shared library link, each keeps its descriptors, clang" \
		two_tus_and_a_library clang
else
	skip "two TUs and a shared library link, each keeps its descriptors, clang" \
		"clang not installed"
fi

# nothing the header defines is global, so no two objects can clash
no_global_symbols() {
	$CC -O2 -I"$INC" -c "$HDR/prog.c" -o prog-c.o
	$CXX -O2 -I"$INC" -c "$HDR/prog.cc" -o prog-cxx.o
	$CC -O0 -fPIC -I"$INC" -c "$HDR/multi-lib.c" -o multi-lib.o
	nm -g --defined-only prog-c.o prog-cxx.o multi-lib.o >syms.txt
	has syms.txt "T main"
	if grep -i trail syms.txt; then
		die "the header defines global symbols"
	fi
}
t "the header defines no global symbols" no_global_symbols

# ----------------------------------------------------- misuse does not build

# neg NAME FRAGMENT... <<<SOURCE: SOURCE must fail to compile as C11 and as
# C++11 with each compiler, and the diagnostics must contain one of the
# FRAGMENTs (gcc's C front end writes \' for ' in static assertion messages;
# that is undone before matching).
neg() {
	local name=$1; shift
	cat >"$TMP/neg-$name.src"
	t "rejects $name" neg_run "$name" "$@"
}

neg_run() { # name, fragment...
	local name=$1 comp bad=""; shift
	local pats=()
	for frag in "$@"; do pats+=(-e "$frag"); done
	cp "$TMP/neg-$name.src" neg.c
	cp "$TMP/neg-$name.src" neg.cc
	local comps=("$CC -std=c11 neg.c" "$CXX -std=c++11 neg.cc")
	[ -n "$HAVE_CLANG" ] && comps+=("clang -std=c11 neg.c" "clang++ -std=c++11 neg.cc")
	for comp in "${comps[@]}"; do
		if $comp -I"$INC" -c -o neg.o 2>err.txt; then
			echo "$comp: compiled, should not have"
			bad="$bad; $comp"
			continue
		fi
		sed "s/\\\\'/'/g" err.txt >msg.txt
		if ! grep -qF "${pats[@]}" msg.txt; then
			echo "$comp: no '$1'; its errors:"
			grep 'error' msg.txt | head -4
			bad="$bad; $comp"
		fi
	done
	[ -z "$bad" ] || die "wrong outcome with${bad#;}"
}

neg "an int field given a char pointer" \
	"trail field 'count' must be a 1, 2, 4 or 8-byte integer" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(const char *, count),
	    TRAIL_FIELDS(trail_field_int(count)))
void f(void) { trail(app, ev, "12"); }
EOF

neg "a hex field given a double" \
	"trail field 'mask' must be a 1, 2, 4 or 8-byte integer" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(double, mask), TRAIL_FIELDS(trail_field_hex(mask)))
void f(void) { trail(app, ev, 1.0); }
EOF

neg "a string field given an int" \
	"trail field 'path' must be a char pointer or array" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, path), TRAIL_FIELDS(trail_field_string(path)))
void f(void) { trail(app, ev, 3); }
EOF

neg "a string field given an int pointer" \
	"trail field 'path' must be a char pointer or array" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(const int *, path),
	    TRAIL_FIELDS(trail_field_string(path)))
void f(void) { trail(app, ev, 0); }
EOF

neg "a sequence field given an int" \
	"trail field 'vals' must point to 1, 2, 4 or 8-byte integers" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, vals, int, n), TRAIL_FIELDS(trail_field_seq(vals, n)))
void f(void) { trail(app, ev, 1, 1); }
EOF

neg "a float field given an int" \
	"trail field 'ratio' must be a float or a double" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, ratio), TRAIL_FIELDS(trail_field_float(ratio)))
void f(void) { trail(app, ev, 1); }
EOF

neg "a ptr field given an int" \
	"trail field 'addr' must be a pointer" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(long, addr), TRAIL_FIELDS(trail_field_ptr(addr)))
void f(void) { trail(app, ev, 4096L); }
EOF

neg "an array count of 0" \
	"trail field 'xs': array count out of range" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(const int *, xs), TRAIL_FIELDS(trail_field_array(xs, 0)))
void f(void) { static const int v[1] = {0}; trail(app, ev, v); }
EOF

neg "a call with too many arguments" \
	"too many arguments" "but 2 arguments were provided" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, a), TRAIL_FIELDS(trail_field_int(a)))
void f(void) { trail(app, ev, 1, 2); }
EOF

neg "a call with too few arguments" \
	"too few arguments" "but 1 was provided" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, a, int, b),
	    TRAIL_FIELDS(trail_field_int(a) trail_field_int(b)))
void f(void) { trail(app, ev, 1); }
EOF

neg "a call with a struct where an int is expected" \
	"incompatible type for argument 1" "to parameter of incompatible type 'int'" \
	"cannot convert" "no known conversion from" <<'EOF'
#include <trail/trail.h>
struct pt { int x; };
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, a), TRAIL_FIELDS(trail_field_int(a)))
void f(void) { struct pt p = {1}; trail(app, ev, p); }
EOF

neg "an unknown event name in trail()" \
	"'trail__state_app_nosuch' undeclared" \
	"'trail__state_app_nosuch' was not declared" \
	"undeclared identifier 'trail__state_app_nosuch'" <<'EOF'
#include <trail/trail.h>
TRAIL_EVENT(app, ev, TRAIL_ARGS(int, a), TRAIL_FIELDS(trail_field_int(a)))
void f(void) { trail(app, nosuch, 1); }
EOF

# ------------------------------------------------------ runs without libtrail

# prog.c exits 10 unless trail__write, trail__register and trail__unregister
# are all NULL at run time, 11 if an event is on, 0 otherwise
runs_without_libtrail() { # ELF type wanted, flags...
	local type=$1; shift
	$CC -O2 -Wall -Wextra -Werror -I"$INC" "$@" "$HDR/prog.c" -o prog
	readelf -h prog >hdr.txt
	grep -qE "Type: +$type " hdr.txt || { cat hdr.txt; die "not an ELF $type"; }
	readelf -d prog >dyn.txt
	hasnt dyn.txt "libtrail"
	expect_rc 0 ./prog
}

t "runs without libtrail, PIE" runs_without_libtrail DYN -fPIE -pie
t "runs without libtrail, -no-pie" runs_without_libtrail EXEC -fno-pie -no-pie
if printf 'int main(void) { return 0; }\n' >"$TMP/static.c" &&
	$CC -static "$TMP/static.c" -o "$TMP/static" 2>/dev/null && "$TMP/static"; then
	t "runs without libtrail, -static" runs_without_libtrail EXEC -static
else
	skip "runs without libtrail, -static" "static linking does not work here (no static libc?)"
fi

rm -rf "$TMP"
