#!/usr/bin/env bash
# bench/fork.sh [BUILD_DIR [BUILD_B]] - what recording costs a program
# that forks: ms for 20 children of bench_fork (each forked, exit(0) at
# once, waited for), timed inside the program, untraced and under each
# way of recording it, one after the other in every run (RUNS, 9):
# medians [min..max] and the ratio to the untraced median.
#
#   RUNS=9 BENCH_CPU=1 bench/fork.sh build
#   RUNS=9 bench/fork.sh /tmp/before/build build   # a change's before/after
#
# bench_fork is built without patchable entries: -p displaces its
# functions and hooks its PLT (fork, waitpid, exit), --no-libcall only the
# former; -e records the one event each child writes. With two builds,
# every mode runs under both, interleaved (the program is BUILD_DIR's).
set -u
BUILD=$(cd "${1:-build}" && pwd)
BUILDS=("$BUILD")
[ $# -ge 2 ] && BUILDS+=("$(cd "$2" && pwd)")
RUNS=${RUNS:-9}
N=${FORK_N:-20}
export BENCH_CPU=${BENCH_CPU:-1}
PROG=$BUILD/bench/bench_fork
. "$(dirname "$0")/lib.sh"
bench_scratch

modes=("-p function" "-p function --no-libcall" "-p function_graph"
	"-p function_graph --no-libcall" "-e bench:child")
declare -A ms
for _ in $(seq "$RUNS"); do
	ms[untraced]+=" $(field ms "$("$PROG" "$N")")"
	for m in "${modes[@]}"; do
		for b in "${BUILDS[@]}"; do
			# shellcheck disable=SC2086 # the mode is its options
			l=$("${PIN_REC[@]}" "$b/trail" record -q $m -o "$TMP/f.dat" -- "$PROG" "$N")
			ms[$b $m]+=" $(field ms "$l")"
		done
	done
done
echo "fork: ms for $N children (fork, exit, waitpid), median [min..max] of $RUNS; pinned to CPU $BENCH_CPU, $(rec_where)"
base=$(median ${ms[untraced]})
row() { # label values
	local label=$1; shift
	printf '  %-40s %-28s %s\n' "$label" "$(stats "$@")" \
		"$(awk -v a="$(median "$@")" -v b="$base" 'BEGIN{printf "%.1fx", a/b}')"
}
# shellcheck disable=SC2086
row untraced ${ms[untraced]}
for m in "${modes[@]}"; do
	for b in "${BUILDS[@]}"; do
		label=$m
		[ ${#BUILDS[@]} -gt 1 ] && label="$m ($(basename "$(dirname "$b")"))"
		# shellcheck disable=SC2086
		row "$label" ${ms[$b $m]}
	done
done
