#!/usr/bin/env bash
# bench/unwind.sh [BUILD_DIR] - one user stack's cost, ns per stack,
# median of RUNS runs [min..max], on stacks of DEPTH frames of
# bench_unwind.c's rec() (10 and 50, plus the program's and libc's
# frames above), each walked BENCH_N times in the process by:
#   sframe, cfi    trail's walk (src/lib/ustack.c) by .sframe only, by
#                  .eh_frame only, its rows' cache warm (the same stack
#                  again: a hot event's)
#   *_cold         the same without the cache: every row from the tables
#   fp             trail's walk by frame pointers only
#   libunwind      unw_backtrace (libunwind-dev: scripts/install-deps.sh
#                  --bench; it keeps a cache of its own)
# Every run checks that all give the same frames (same=1), else it fails.
#
#   RUNS=5 BENCH_N=20000 bench/unwind.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-20000} BENCH_CPU=${BENCH_CPU:-1}
PROG=$BUILD/bench/bench_unwind

. "$(dirname "$0")/lib.sh"
[ -x "$PROG" ] || { echo "no $PROG (ninja -C $BUILD)" >&2; exit 1; }
ways="sframe cfi sframe_cold cfi_cold fp libunwind"
printf 'one user stack, ns (median [min..max] of %s runs, N=%s, CPU %s)\n' "$RUNS" "$BENCH_N" "$BENCH_CPU"
for depth in 10 50; do
	declare -A v=()
	frames=
	for r in $(seq "$RUNS"); do
		l=$("$PROG" "$depth") || { echo "depth $depth: the ways disagree: $l" >&2; exit 1; }
		frames=$(field frames "$l")
		for w in $ways; do
			x=$(field "$w" "$l")
			[ -n "$x" ] && v[$w]="${v[$w]:-} $x"
		done
	done
	printf 'depth %s (%s frames walked, the same by every way)\n' "$depth" "$frames"
	for w in $ways; do
		if [ -n "${v[$w]:-}" ]; then
			# shellcheck disable=SC2086
			printf '  %-12s %s\n' "$w" "$(stats ${v[$w]})"
		else
			printf '  %-12s (not built: libunwind-dev missing)\n' "$w"
		fi
	done
	unset v
done
