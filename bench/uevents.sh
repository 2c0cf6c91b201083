#!/usr/bin/env bash
# bench/uevents.sh [BUILD_DIR] - events defined at run time, their cost
# per event timed inside the process (median of RUNS runs [min..max]):
#
#   C (bench_uevent.c): one event of two integer fields as a static
#   tracepoint (TRAIL_EVENT), through the kernel's user_events ABI
#   (writev on user_events_data, answered by libtrail) and through
#   trail/uevent.h's trail_uevent_write; recorded, and not (the guard)
#   Python (bench_python.py): trail.event's ev(i, i), recorded and not;
#   logging.info through trail.LoggingHandler, recorded; the same logging
#   call through LTTng-UST's Python agent (python3-lttngust) recorded by
#   an LTTng session, when it is installed
#
#   RUNS=3 BENCH_N=5000000 PY_N=1000000 LOG_N=200000 bench/uevents.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
N=${BENCH_N:-5000000}
PY_N=${PY_N:-1000000}
LOG_N=${LOG_N:-200000}
export BENCH_CPU=${BENCH_CPU:-1}
TRAIL=$BUILD/trail
SRC=$(cd "$(dirname "$0")/.." && pwd)
PY=${PYTHON:-/usr/bin/python3}
export PYTHONPATH=$BUILD/bindings/python
. "$(dirname "$0")/lib.sh"
bench_scratch
SESSIOND=
cleanup() {
	[ -n "$SESSIOND" ] && kill "$SESSIOND" 2>/dev/null
	lttng destroy trail-bench-py >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

tp=() abi=() api=() tpd=() abid=() apid=()
pyd=() pyg=() pye=() pyk=() lg=() nop=() lt=()
for r in $(seq "$RUNS"); do
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -e bench:event -e user_events:bench_ue -e bench:bench_api \
		-o "$TMP/c.dat" -- "$BUILD/bench/bench_uevent" "$N")
	tp+=("$(field tp_ns "$l")"); abi+=("$(field ue_abi_ns "$l")"); api+=("$(field ue_api_ns "$l")")
	w=$("$TRAIL" report -i "$TMP/c.dat" --stat | sed -n 's/.*entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' | head -1)
	[ "$w" = "$((3 * N)) $((3 * N))" ] || echo "warning: C run $r: entries $w of $((3 * N))" >&2
	l=$(LD_PRELOAD=$BUILD/libtrail.so.1 "$BUILD/bench/bench_uevent" "$N")
	tpd+=("$(field tp_ns "$l")"); abid+=("$(field ue_abi_ns "$l")"); apid+=("$(field ue_api_ns "$l")")
	if [ -d "$BUILD/bindings/python/trail" ]; then
		l=$("$PY" "$SRC/bench/bench_python.py" trail "$PY_N")
		pyd+=("$(field call_ns "$l")"); pyg+=("$(field guard_ns "$l")")
		l=$("${PIN_REC[@]}" "$TRAIL" record -q -e bench:py -o "$TMP/p.dat" -- \
			"$PY" "$SRC/bench/bench_python.py" trail "$PY_N")
		pye+=("$(field call_ns "$l")"); pyk+=("$(field call_kw_ns "$l")")
		l=$("${PIN_REC[@]}" "$TRAIL" record -q -e python:logging -o "$TMP/l.dat" -- \
			"$PY" "$SRC/bench/bench_python.py" logging "$LOG_N")
		lg+=("$(field log_ns "$l")")
		l=$("$PY" "$SRC/bench/bench_python.py" nop "$LOG_N")
		nop+=("$(field log_ns "$l")")
		w=$("$TRAIL" report -i "$TMP/l.dat" --stat | sed -n 's/.*entries-written: \([0-9]*\)\/.*/\1/p' | head -1)
		[ "$w" = "$LOG_N" ] || echo "warning: logging run $r: $w events of $LOG_N" >&2
	fi
	if "$PY" -c 'import lttngust' 2>/dev/null && command -v lttng >/dev/null; then
		if [ -z "$SESSIOND" ] && ! lttng list >/dev/null 2>&1; then
			"${PIN_REC[@]}" lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
			SESSIOND=$(pgrep -n lttng-sessiond)
		fi
		lttng create trail-bench-py --output="$TMP/lt$r" >/dev/null
		lttng enable-event --python bench >/dev/null
		lttng start >/dev/null
		l=$("$PY" "$SRC/bench/bench_python.py" lttng "$LOG_N" 2)
		lttng stop >/dev/null 2>&1
		lttng destroy trail-bench-py >/dev/null
		lt+=("$(field log_ns "$l")")
	fi
done

echo "user events: ns per event, timed in the process, median of $RUNS [min..max]; $(rec_where)"
echo "  C, 2 integer fields, recorded (N=$N):"
echo "    static tracepoint (TRAIL_EVENT)        $(stats "${tp[@]}")"
echo "    kernel's ABI (writev, user_events)     $(stats "${abi[@]}")"
echo "    trail_uevent_write                     $(stats "${api[@]}")"
echo "  C, not recorded (the guard):"
echo "    static tracepoint                      $(stats "${tpd[@]}")"
echo "    kernel's ABI (its enable bit)          $(stats "${abid[@]}")"
echo "    trail_uevent_enabled                   $(stats "${apid[@]}")"
if [ ${#pye[@]} -gt 0 ]; then
	echo "  Python (N=$PY_N; logging N=$LOG_N):"
	echo "    ev(i, i), recorded                     $(stats "${pye[@]}")"
	echo "    ev(a=i, b=i), recorded                 $(stats "${pyk[@]}")"
	echo "    ev.enabled, not recorded               $(stats "${pyg[@]}")"
	echo "    if ev.enabled: ev(i, i), not recorded  $(stats "${pyd[@]}")"
	echo "    logging.info, trail.LoggingHandler     $(stats "${lg[@]}")"
	echo "    logging.info, a handler doing nothing  $(stats "${nop[@]}")"
fi
if [ ${#lt[@]} -gt 0 ]; then
	echo "    logging.info, LTTng's Python agent     $(stats "${lt[@]}")"
	m=$(median "${lt[@]}")
	awk -v a="$(median "${pye[@]}")" -v b="$(median "${lg[@]}")" -v l="$m" -v z="$(median "${nop[@]}")" \
		'BEGIN { printf "    ratios to LTTng'"'"'s agent: ev() %.3f, LoggingHandler %.3f;\n", a / l, b / l
			 printf "    the handlers alone (less the logging module'"'"'s %.0f ns): trail %.0f ns, LTTng %.0f ns, %.3f\n",
				z, b - z, l - z, (b - z) / (l - z) }'
else
	echo "    (LTTng's Python agent: not installed, python3-lttngust)"
fi
