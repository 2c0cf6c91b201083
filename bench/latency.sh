#!/usr/bin/env bash
# bench/latency.sh [BUILD_DIR] - the cost of a latency histogram made
# in the process through a synthetic event, the kernel's way
# (histogram.rst's wakeup_latency): per pair of events bench:start(id),
# bench:done(id), in 2 threads on 2 CPUs, beside the pair recorded.
#
#   RUNS=5 BENCH_N=2000000 bench/latency.sh build
#
# Figures: bench_pair's ns per pair (timed in the process, the mean of
# the threads), the median of RUNS runs [min..max]:
#   recorded   -e bench:start -e bench:done (both events recorded)
#   latency    start: hist:keys=id:ts0=common_timestamp
#              done:  hist:keys=id:lat=common_timestamp-$ts0:
#                     onmatch(bench.start).trace(lat_ev,id,$lat)
#              lat_ev: hist:keys=lat.log2
#              (nothing recorded: three tables updated, one synthetic
#              event made and counted per pair)
# and the lat_ev histogram's Hits, which must be THREADS x N (every pair
# matched, none lost), and Dropped, 0.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-2000000} BENCH_THREADS=${BENCH_THREADS:-2}
unset BENCH_CPU
BUF=${BENCH_BUFFER:-64M}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_pair

. "$(dirname "$0")/lib.sh"
bench_scratch

totals() {
	"$TRAIL" hist -i "$1" -e synthetic:lat_ev |
		awk '/Hits:/ {h = $2} /Dropped:/ {d = $2} END {print "Hits " h ", Dropped " d}'
}

declare -a rec lat
for r in $(seq "$RUNS"); do
	l=$("$TRAIL" record -q -b "$BUF" -e bench:start -e bench:done -o "$TMP/r.dat" -- "$PROG")
	rec+=("$(field ns_per_pair "$l")")
	l=$("$TRAIL" record -q -b "$BUF" --synth 'lat_ev u64 id; u64 lat' \
		-T 'bench:start:hist:keys=id:ts0=common_timestamp' \
		-T 'bench:done:hist:keys=id:lat=common_timestamp-$ts0:onmatch(bench.start).trace(lat_ev,id,$lat)' \
		-T 'lat_ev:hist:keys=lat.log2' -o "$TMP/l.dat" -- "$PROG")
	lat+=("$(field ns_per_pair "$l")")
done

printf 'latency histogram through a synthetic event, ns per pair (median [min..max] of %s runs, %s threads x N=%s, %s)\n' \
	"$RUNS" "$BENCH_THREADS" "$BENCH_N" "$(rec_where)"
printf '  %-12s %s\n' "recorded" "$(stats "${rec[@]}")"
printf '  %-12s %s   (%s; want %s)\n' "latency" "$(stats "${lat[@]}")" "$(totals "$TMP/l.dat")" \
	"$((BENCH_THREADS * BENCH_N))"
