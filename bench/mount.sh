#!/usr/bin/env bash
# bench/mount.sh [BUILD_DIR] - trail mount's figures, on bench_event
# emitting bench:event at a fixed rate (BENCH_RATE) with libtrail
# preloaded, the mount on a scratch directory:
#
#   RUNS=5 RATE=100000 SECS=4 bench/mount.sh build
#
#   enable     `echo 1 > events/bench/event/enable`: how long the write
#              takes (the instance's recorder started again, its arena
#              found), and how long until `cat trace` first shows the
#              event (the process joined, an event written, a snapshot
#              taken and printed); median [min..max] of RUNS, ms
#   trace_pipe lines per second `cat trace_pipe` prints over SECS s
#              (every event the program wrote: RATE a second, if it keeps
#              up), beside `trail report` printing a file of the same
#              events (lines per second, its own time)
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
RATE=${RATE:-100000}
SECS=${SECS:-4}
TRAIL=$BUILD/trail

. "$(dirname "$0")/lib.sh"
bench_scratch
M=$TMP/m
mkdir "$M"
"$TRAIL" mount "$M" || exit 1
trap 'fusermount3 -u -z "$M" 2>/dev/null; kill $APP 2>/dev/null; rm -rf "$TMP"' EXIT
unset BENCH_CPU
BENCH_N=$((RATE * 3600)) BENCH_RATE=$RATE LD_PRELOAD=$BUILD/libtrail.so.1 \
	"$BUILD/bench/bench_event" >/dev/null 2>&1 &
APP=$!
for _ in $(seq 200); do [ -e "$TRAIL_REGISTRY/$APP" ] && break; sleep 0.05; done

now_ms() { date +%s%N | awk '{ printf "%.3f", $1 / 1e6 }'; }
declare -a wr first
for r in $(seq "$RUNS"); do
	t0=$(now_ms)
	echo 1 >"$M/events/bench/event/enable"
	t1=$(now_ms)
	for _ in $(seq 2000); do grep -q 'bench:event' "$M/trace" && break; done
	t2=$(now_ms)
	wr+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')")
	first+=("$(awk -v a="$t0" -v b="$t2" 'BEGIN { print b - a }')")
	echo 0 >"$M/events/bench/event/enable"
	: >"$M/trace"
done

echo 1 >"$M/events/bench/event/enable"
timeout -s INT "$SECS" cat "$M/trace_pipe" >"$TMP/pipe.txt"
lines=$(grep -c 'bench:event' "$TMP/pipe.txt")
# the span its records cover, and the events missing in it (a counts
# the program's iterations)
read -r span missing < <(awk '/bench:event/ { t = $3; sub(":", "", t); a = $5; sub("a=", "", a)
	if (!n++) { t0 = t; a0 = a } t1 = t; a1 = a }
	END { printf "%.3f %d\n", t1 - t0, (a1 - a0 + 1) - n }' "$TMP/pipe.txt")
echo 0 >"$M/events/bench/event/enable"

"$TRAIL" record -q -e bench:event -o "$TMP/r.dat" -P "$APP" &
rec=$!
sleep "$SECS"
kill -INT $rec
wait $rec
s0=$(date +%s%N)
rlines=$("$TRAIL" report -i "$TMP/r.dat" | grep -c 'bench:event')
s1=$(date +%s%N)

printf 'trail mount, bench_event at %s events/s (%s runs)\n' "$RATE" "$RUNS"
printf '  %-34s %s ms\n' "echo 1 > enable returns" "$(stats "${wr[@]}")"
printf '  %-34s %s ms\n' "first event in cat trace" "$(stats "${first[@]}")"
printf '  %-34s %s lines/s (%s lines over %s s of records, %s events missing among them)\n' \
	"cat trace_pipe" "$(awk -v n="$lines" -v s="$span" 'BEGIN { printf "%d", n / s }')" "$lines" \
	"$span" "$missing"
printf '  %-34s %s lines/s (%s lines in %s ms)\n' "trail report of a recording" \
	"$(awk -v n="$rlines" -v ns="$((s1 - s0))" 'BEGIN { printf "%d", n / (ns / 1e9) }')" \
	"$rlines" "$(((s1 - s0) / 1000000))"
