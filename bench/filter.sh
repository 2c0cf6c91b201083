#!/usr/bin/env bash
# bench/filter.sh [BUILD_DIR] - the cost of an event filter at the source
# (record -f), beside the same event unfiltered, in the same run.
#
#   RUNS=5 BENCH_N=10000000 BENCH_CPU=1 bench/filter.sh build
#
# Every figure is bench_event's ns per event (timed in the process, see
# bench_event.c), the median of RUNS runs [min..max]:
#   unfiltered          -e bench:event
#   filter rejects      -f 'a < 0 || b < 0'   (both compares run, false:
#                       nothing is reserved, nothing recorded)
#   filter accepts      -f 'a >= 0 && a != -1' (both run, true)
# and the records each run left, which must be N, 0 and N.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-10000000} BENCH_CPU=${BENCH_CPU:-1}
BUF=${BENCH_BUFFER:-32M}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_event

. "$(dirname "$0")/lib.sh"
bench_scratch

records() { "$TRAIL" report -i "$1" --count 2>/dev/null | awk '$1 == "bench:event" {n = $2} END {print n + 0}'; }

declare -a un rej acc
for r in $(seq "$RUNS"); do
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event -o "$TMP/u.dat" -- "$PROG")
	un+=("$(field ns_per_event "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event -f 'a < 0 || b < 0' \
		-o "$TMP/r.dat" -- "$PROG")
	rej+=("$(field ns_per_event "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event -f 'a >= 0 && a != -1' \
		-o "$TMP/a.dat" -- "$PROG")
	acc+=("$(field ns_per_event "$l")")
done

printf 'filters at the source, ns per event (median [min..max] of %s runs, N=%s, CPU %s, %s)\n' \
	"$RUNS" "$BENCH_N" "$BENCH_CPU" "$(rec_where)"
printf '  %-22s %s   (records: %s)\n' "unfiltered" "$(stats "${un[@]}")" "$(records "$TMP/u.dat")"
printf '  %-22s %s   (records: %s)\n' "filter rejects" "$(stats "${rej[@]}")" "$(records "$TMP/r.dat")"
printf '  %-22s %s   (records: %s)\n' "filter accepts" "$(stats "${acc[@]}")" "$(records "$TMP/a.dat")"
printf '  %-22s %.2f\n' "accepts - unfiltered" \
	"$(awk -v a="$(median "${acc[@]}")" -v b="$(median "${un[@]}")" 'BEGIN{print a-b}')"
