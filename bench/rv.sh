#!/usr/bin/env bash
# bench/rv.sh [BUILD_DIR] - runtime verification's cost: a DOT monitor
# checked in the process on every event (record --rv), beside the same
# event unmonitored, in the same run; and the offline check's speed.
#
#   RUNS=5 BENCH_N=10000000 BENCH_CPU=1 bench/rv.sh build
#
# Every figure is bench_event's ns per event (timed in the process, see
# bench_event.c), the median of RUNS runs [min..max]:
#   recorded              -e bench:event
#   + monitor per thread  --rv toggle.dot: two states, each bench:event
#                         a transition (the instance found by the tid,
#                         its state moved by a CAS), then the record
#   + monitor per process --rv toggle.dot --per process
#   monitored only        --rv toggle.dot, bench:event not recorded: the
#                         check alone (its event enabled for the monitor)
# and `trail rv check` over the first recording: events per second.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-10000000} BENCH_CPU=${BENCH_CPU:-1}
BUF=${BENCH_BUFFER:-32M}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_event

. "$(dirname "$0")/lib.sh"
bench_scratch

cat >"$TMP/toggle.dot" <<'DOT'
digraph toggle {
	{node [shape = plaintext, style=invis, label=""] "__init_even"};
	{node [shape = doublecircle] "even"};
	"__init_even" -> "even";
	"even" -> "odd" [ label = "bench:event" ];
	"odd" -> "even" [ label = "bench:event" ];
}
DOT
records() { "$TRAIL" report -i "$1" --count 2>/dev/null | awk -v e="$2" '$1 == e {n = $2} END {print n + 0}'; }

declare -a rec th pr only offl
for r in $(seq "$RUNS"); do
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event -o "$TMP/u.dat" -- "$PROG")
	rec+=("$(field ns_per_event "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event --rv "$TMP/toggle.dot" \
		-o "$TMP/t.dat" -- "$PROG")
	th+=("$(field ns_per_event "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -e bench:event --rv "$TMP/toggle.dot" \
		--per process -o "$TMP/p.dat" -- "$PROG")
	pr+=("$(field ns_per_event "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" --rv "$TMP/toggle.dot" -o "$TMP/o.dat" -- "$PROG")
	only+=("$(field ns_per_event "$l")")
	a=$(date +%s%N)
	"$TRAIL" rv check -i "$TMP/u.dat" "$TMP/toggle.dot" >"$TMP/check.txt"
	b=$(date +%s%N)
	offl+=("$(awk -v n="$(records "$TMP/u.dat" bench:event)" -v t=$((b - a)) 'BEGIN{printf "%.2f", n / (t / 1e9) / 1e6}')")
done

printf 'runtime verification in the process, ns per event (median [min..max] of %s runs, N=%s, CPU %s, %s)\n' \
	"$RUNS" "$BENCH_N" "$BENCH_CPU" "$(rec_where)"
printf '  %-24s %s   (records: %s)\n' "recorded" "$(stats "${rec[@]}")" "$(records "$TMP/u.dat" bench:event)"
printf '  %-24s %s   (records: %s, rv:error %s)\n' "+ monitor per thread" "$(stats "${th[@]}")" \
	"$(records "$TMP/t.dat" bench:event)" "$(records "$TMP/t.dat" rv:error)"
printf '  %-24s %s   (records: %s, rv:error %s)\n' "+ monitor per process" "$(stats "${pr[@]}")" \
	"$(records "$TMP/p.dat" bench:event)" "$(records "$TMP/p.dat" rv:error)"
printf '  %-24s %s   (records: %s, rv:error %s)\n' "monitored only" "$(stats "${only[@]}")" \
	"$(records "$TMP/o.dat" bench:event)" "$(records "$TMP/o.dat" rv:error)"
printf '  %-24s %.2f\n' "per thread - recorded" \
	"$(awk -v a="$(median "${th[@]}")" -v b="$(median "${rec[@]}")" 'BEGIN{print a-b}')"
printf 'trail rv check, the same model offline: %s M events/s (median [min..max]); %s\n' \
	"$(stats "${offl[@]}")" "$(tail -1 "$TMP/check.txt")"
