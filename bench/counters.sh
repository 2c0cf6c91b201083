#!/usr/bin/env bash
# bench/counters.sh [BUILD_DIR] - what a call costs with perf counters
# read at its entry and exit (record -p function_graph --counters), beside
# the same call traced without them and uftrace's read=page-fault (its
# getrusage at the entry and exit): bench_fgraph's N calls of work(),
# timed in the process, median of RUNS runs [min..max], ns per call with
# the untraced call subtracted:
#   function_graph             no counters
#   --counters task-clock      a clock: one read() of its own at each end
#   --counters page-faults     one software counter (a perf group of one)
#   --counters 4 software      page-faults, minor-faults, major-faults,
#                              context-switches: one group, one read()
#   --counters 4 + task-clock  the group and the clock: two read()s
#   uftrace read=page-fault    uftrace record -P work -T work@read=page-fault
# Hardware counters (cycles, instructions) where a PMU exists: a line more.
#
#   RUNS=5 BENCH_N=200000 bench/counters.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-200000} BENCH_CPU=${BENCH_CPU:-1}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_fgraph

. "$(dirname "$0")/lib.sh"
bench_scratch

SETS=("" task-clock page-faults page-faults,minor-faults,major-faults,context-switches
      page-faults,minor-faults,major-faults,context-switches,task-clock)
NAMES=(function_graph "--counters task-clock" "--counters page-faults" "--counters 4 software"
       "--counters 4 + task-clock")
if "$TRAIL" record -q -p function_graph -l work --counters cycles,instructions -o "$TMP/h.dat" \
	-- "$PROG" >/dev/null 2>&1; then
	SETS+=(cycles,instructions)
	NAMES+=("--counters cycles,instr.")
fi
declare -A res
base=()
uf=()
for r in $(seq "$RUNS"); do
	b=$(field ns_per_iter "$("$PROG")")
	base+=("$b")
	for i in "${!SETS[@]}"; do
		c=()
		[ -n "${SETS[$i]}" ] && c=(--counters "${SETS[$i]}")
		l=$("${PIN_REC[@]}" "$TRAIL" record -q -p function_graph -l work "${c[@]}" -o "$TMP/c.dat" -- "$PROG")
		res[$i]+=" $(awk -v a="$(field ns_per_iter "$l")" -v b="$b" 'BEGIN { print a - b }')"
	done
	if command -v uftrace >/dev/null; then
		l=$("${PIN_REC[@]}" uftrace record -d "$TMP/uf" -P work -T 'work@read=page-fault' "$PROG" 2>/dev/null) &&
			uf+=("$(awk -v a="$(field ns_per_iter "$l")" -v b="$b" 'BEGIN { print a - b }')")
	fi
done
n=$("$TRAIL" report -i "$TMP/c.dat" --count 2>/dev/null | awk '$1 == "synthetic:funcgraph_counters" {print $2}')
printf 'a call with counters, ns over the untraced call (median [min..max] of %s runs, N=%s, CPU %s, %s)\n' \
	"$RUNS" "$BENCH_N" "$BENCH_CPU" "$(rec_where)"
printf '  %-28s %s\n' "untraced call" "$(stats "${base[@]}")"
for i in "${!SETS[@]}"; do
	# shellcheck disable=SC2086
	printf '  %-28s %s\n' "${NAMES[$i]}" "$(stats ${res[$i]})"
done
[ ${#uf[@]} -gt 0 ] && printf '  %-28s %s\n' "uftrace read=page-fault" "$(stats "${uf[@]}")"
printf '  (the last trail run: %s counters records of %s calls)\n' "${n:-0}" "$((BENCH_N + BENCH_N / 100))"
true
