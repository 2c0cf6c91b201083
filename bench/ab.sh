#!/usr/bin/env bash
# bench/ab.sh BUILD_A BUILD_B - the record path's three figures for two
# builds, runs interleaved (A, B, A, B, ...) so that a machine whose load
# changes during the run weighs on both alike:
#
#   RUNS=5 BENCH_N=10000000 bench/ab.sh /tmp/before/build build
#
#   enabled ns/event    trail record -e bench:event (bench_event.c)
#   function_graph ns   per traced call of bench_fgraph, minus its untraced run
#   report M events/s   trail report -i of the enabled run's file
#
# Each figure: median [min..max] of RUNS runs. Use it for a change's
# before/after; bench/run.sh gives the full table with the peers.
set -u
A=$(cd "$1" && pwd) B=$(cd "$2" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-10000000} BENCH_CPU=${BENCH_CPU:-1}
TMP=$(mktemp -d /tmp/trail-ab.XXXXXX)
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
trap 'rm -rf "$TMP"' EXIT

. "$(dirname "$0")/lib.sh"

declare -A en fg rep
one() { # label build
	local b=$2 l t0 t1 base
	l=$("${PIN_REC[@]}" "$b/trail" record -q -e bench:event -o "$TMP/t.dat" -- "$b/bench/bench_event")
	en[$1]+=" $(field ns_per_event "$l")"
	t0=$(date +%s.%N)
	"$b/trail" report -i "$TMP/t.dat" >/dev/null
	t1=$(date +%s.%N)
	rep[$1]+=" $(awk -v a="$t0" -v b="$t1" -v n="$BENCH_N" 'BEGIN{printf "%.2f", n/(b-a)/1e6}')"
	base=$(field ns_per_iter "$("$b/bench/bench_fgraph")")
	l=$("${PIN_REC[@]}" "$b/trail" record -q -p function_graph -l work -o "$TMP/g.dat" -- "$b/bench/bench_fgraph")
	fg[$1]+=" $(awk -v a="$(field ns_per_iter "$l")" -v b="$base" 'BEGIN{printf "%.2f", a-b}')"
}
for r in $(seq "$RUNS"); do
	one A "$A"
	one B "$B"
done
echo "bench/ab.sh: N=$BENCH_N, $RUNS runs each, interleaved, $(rec_where); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-30s %-26s %s\n' "figure" "A: ${1}" "B: ${2}"
# shellcheck disable=SC2086
printf '%-30s %-26s %s\n' "enabled, ns/event" "$(stats ${en[A]})" "$(stats ${en[B]})"
# shellcheck disable=SC2086
printf '%-30s %-26s %s\n' "function_graph, ns per call" "$(stats ${fg[A]})" "$(stats ${fg[B]})"
# shellcheck disable=SC2086
printf '%-30s %-26s %s\n' "report, M events/s" "$(stats ${rep[A]})" "$(stats ${rep[B]})"
