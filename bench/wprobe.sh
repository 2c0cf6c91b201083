#!/usr/bin/env bash
# bench/wprobe.sh [BUILD_DIR] - a watched write's cost (bench_watch.c: N
# writes of a global, timed in the process), median of RUNS runs
# [min..max], ns per write:
#   unwatched
#   trail       record --probe 'w:bench/w w@target' (a record each)
#   perf record perf record -e mem:ADDR:w (the kernel's samples)
#   perf stat   perf stat -e mem:ADDR:w (counted, nothing recorded)
# (perf: when it is installed and perf_event_paranoid lets it).
#
#   RUNS=5 BENCH_N=200000 bench/wprobe.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-200000} BENCH_CPU=${BENCH_CPU:-1}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_watch

. "$(dirname "$0")/lib.sh"
bench_scratch

addr=$(field addr "$("$PROG")")
declare -a un tr pr ps
for r in $(seq "$RUNS"); do
	un+=("$(field ns_per_write "$("$PROG")")")
	tr+=("$(field ns_per_write "$("$TRAIL" record -q --probe 'w:bench/w w@target' -o "$TMP/w.dat" -- "$PROG")")")
	if command -v perf >/dev/null; then
		l=$(perf record -q -e "mem:$addr:w" -o "$TMP/perf.data" -- "$PROG" 2>/dev/null) && pr+=("$(field ns_per_write "$l")")
		l=$(perf stat -e "mem:$addr:w" -- "$PROG" 2>/dev/null) && ps+=("$(field ns_per_write "$l")")
	fi
done
n=$("$TRAIL" report -i "$TMP/w.dat" --count 2>/dev/null | awk '$1 == "bench:w" {print $2}')
printf 'a watched write, ns (median [min..max] of %s runs, N=%s, CPU %s)\n' "$RUNS" "$BENCH_N" "$BENCH_CPU"
printf '  %-14s %s\n' unwatched "$(stats "${un[@]}")"
printf '  %-14s %s   (records: %s of %s)\n' trail "$(stats "${tr[@]}")" "${n:-0}" "$BENCH_N"
[ ${#pr[@]} -gt 0 ] && printf '  %-14s %s\n' "perf record" "$(stats "${pr[@]}")"
[ ${#ps[@]} -gt 0 ] && printf '  %-14s %s\n' "perf stat" "$(stats "${ps[@]}")"
true
