#!/usr/bin/env bash
# bench/hist.sh [BUILD_DIR] - the cost of a hist trigger kept in the
# process (record -T 'hist:...'), 2 threads hammering one event on 2
# CPUs, beside the same event recorded, in the same run.
#
#   RUNS=5 BENCH_N=5000000 bench/hist.sh build
#
# Every figure is bench_event's ns per event (timed in the process, the
# mean of the threads, see bench_event.c), the median of RUNS runs
# [min..max]:
#   recorded            -e bench:event
#   hist                -T 'bench:event:hist:keys=a.log2:vals=b' (one
#                       integer key, one value; the event not recorded)
#   hist + recorded     -e bench:event -T 'hist:keys=a.log2:vals=b'
# and the hist's Hits, which must be THREADS x N (no update lost), and
# Dropped, 0.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-5000000} BENCH_THREADS=${BENCH_THREADS:-2}
unset BENCH_CPU
BUF=${BENCH_BUFFER:-64M}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_event

. "$(dirname "$0")/lib.sh"
bench_scratch

totals() { "$TRAIL" hist -i "$1" | awk '/Hits:/ {h = $2} /Dropped:/ {d = $2} END {print "Hits " h ", Dropped " d}'; }

declare -a rec hist both
for r in $(seq "$RUNS"); do
	l=$("$TRAIL" record -q -b "$BUF" -e bench:event -o "$TMP/r.dat" -- "$PROG")
	rec+=("$(field ns_per_event "$l")")
	l=$("$TRAIL" record -q -b "$BUF" -T 'bench:event:hist:keys=a.log2:vals=b' -o "$TMP/h.dat" -- "$PROG")
	hist+=("$(field ns_per_event "$l")")
	l=$("$TRAIL" record -q -b "$BUF" -e bench:event -T 'hist:keys=a.log2:vals=b' \
		-o "$TMP/b.dat" -- "$PROG")
	both+=("$(field ns_per_event "$l")")
done

printf 'hist trigger in the process, ns per event (median [min..max] of %s runs, %s threads x N=%s, %s)\n' \
	"$RUNS" "$BENCH_THREADS" "$BENCH_N" "$(rec_where)"
printf '  %-22s %s\n' "recorded" "$(stats "${rec[@]}")"
printf '  %-22s %s   (%s; want %s)\n' "hist" "$(stats "${hist[@]}")" "$(totals "$TMP/h.dat")" \
	"$((BENCH_THREADS * BENCH_N))"
printf '  %-22s %s   (%s)\n' "hist + recorded" "$(stats "${both[@]}")" "$(totals "$TMP/b.dat")"
