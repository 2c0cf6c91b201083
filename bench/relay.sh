#!/usr/bin/env bash
# bench/relay.sh [BUILD_DIR] - a recording sent to lttng-relayd on this
# machine (started here, ports of its own), beside LTTng's own session to
# the same relay: N events (bench_event / peer_lttng), paced at
# BENCH_RATE (default 1 M/s: neither tracer's buffer overflows), median
# of RUNS [min..max]:
#   trail     the seconds `record --relay` takes after the program ends
#             (export to CTF + the relay protocol), events/s and MB/s of
#             that phase, events the relay's copy holds (babeltrace2)
#   LTTng     `lttng stop` after the program ends (it streamed during the
#             run: its consumer's last packets and the data-pending wait),
#             events the relay's copy holds
# trail sends once the file is written (not live); LTTng streams live.
#
#   RUNS=3 BENCH_N=2000000 bench/relay.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
export BENCH_N=${BENCH_N:-2000000} BENCH_CPU=${BENCH_CPU:-1} BENCH_RATE=${BENCH_RATE:-1000000}
TRAIL=$BUILD/trail

. "$(dirname "$0")/lib.sh"
bench_scratch
command -v lttng-relayd >/dev/null || { echo "bench/relay.sh: lttng-relayd missing (lttng-tools)"; exit 1; }
PORT=$((30000 + RANDOM % 20000))
lttng-relayd -C tcp://127.0.0.1:$PORT -D tcp://127.0.0.1:$((PORT + 1)) -L tcp://127.0.0.1:$((PORT + 2)) \
	-o "$TMP/relay" >/dev/null 2>&1 &
RELAYD=$!
SESSIOND=
cleanup() {
	kill "$RELAYD" 2>/dev/null
	[ -n "$SESSIOND" ] && kill "$SESSIOND" 2>/dev/null
	lttng destroy trail-relay >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT
sleep 1
URL=net://127.0.0.1:$PORT:$((PORT + 1))

count() { babeltrace2 "$1" 2>/dev/null | grep -c 'bench:event'; }
newest() { ls -td "$TMP"/relay/*/"$1"* 2>/dev/null | head -1; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }

tr_s=() tr_eps=() tr_mbs=() tr_n=() lt_s=() lt_n=()
for r in $(seq "$RUNS"); do
	# trail: the run, then the send; the program's own end from its
	# RESULT line's clock is not ours: time the same command without
	# --relay and subtract
	t0=$(date +%s.%N)
	"${PIN_REC[@]}" "$TRAIL" record -q -e bench:event -o "$TMP/a.dat" -- "$BUILD/bench/bench_event" >/dev/null
	t1=$(date +%s.%N)
	"${PIN_REC[@]}" "$TRAIL" record -q -e bench:event -o "$TMP/b.dat" --relay "$URL" -- "$BUILD/bench/bench_event" >/dev/null
	t2=$(date +%s.%N)
	s=$(awk -v a="$(secs "$t0" "$t1")" -v b="$(secs "$t1" "$t2")" 'BEGIN { printf "%.3f", b - a }')
	d=$(newest trail-bench_event)
	n=$(count "$d")
	mb=$(du -sb "$d" | awk '{ print $1 / 1e6 }')
	tr_s+=("$s")
	tr_n+=("$n")
	tr_eps+=("$(awk -v n="$n" -v s="$s" 'BEGIN { printf "%.0f", (s > 0 ? n / s : 0) }')")
	tr_mbs+=("$(awk -v m="$mb" -v s="$s" 'BEGIN { printf "%.1f", (s > 0 ? m / s : 0) }')")
done
if [ -x "$BUILD/bench/peer_lttng" ] && command -v lttng >/dev/null; then
	if ! lttng list >/dev/null 2>&1; then
		lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
		sleep 1
		SESSIOND=$(pgrep -n lttng-sessiond)
	fi
	for r in $(seq "$RUNS"); do
		lttng create trail-relay --set-url "$URL" >/dev/null
		lttng enable-event -u bench:event >/dev/null
		lttng start >/dev/null
		"$BUILD/bench/peer_lttng" >/dev/null
		t0=$(date +%s.%N)
		lttng stop >/dev/null 2>&1
		t1=$(date +%s.%N)
		lttng destroy trail-relay >/dev/null
		lt_s+=("$(secs "$t0" "$t1")")
		lt_n+=("$(count "$(newest trail-relay)")")
	done
fi
printf 'a recording to lttng-relayd on 127.0.0.1 (median [min..max] of %s runs, N=%s at %s/s, %s)\n' \
	"$RUNS" "$BENCH_N" "$BENCH_RATE" "$(rec_where)"
printf '  %-34s %s s\n' "trail --relay, after the run" "$(stats "${tr_s[@]}")"
printf '  %-34s %s events/s, %s MB/s\n' "  that phase's rate" "$(stats "${tr_eps[@]}")" "$(stats "${tr_mbs[@]}")"
printf '  %-34s %s of %s\n' "  events on the relay" "$(stats "${tr_n[@]}")" "$BENCH_N"
if [ ${#lt_s[@]} -gt 0 ]; then
	printf '  %-34s %s s\n' "LTTng lttng stop, after the run" "$(stats "${lt_s[@]}")"
	printf '  %-34s %s of %s\n' "  events on the relay" "$(stats "${lt_n[@]}")" "$BENCH_N"
fi
