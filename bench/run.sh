#!/usr/bin/env bash
# bench/run.sh [BUILD_DIR] - trail's figures, with LTTng-UST beside them in
# the same run when it is installed (scripts/install-deps.sh --bench).
#
#   RUNS=3 BENCH_N=10000000 BENCH_CPU=1 bench/run.sh build
#
# Every figure is the median of RUNS runs [min..max]; the bench process
# pins itself to BENCH_CPU, the recorders (trail's, uftrace's, LTTng's
# session daemon when started here) run on another (bench/lib.sh).
# Figures (all timed inside the traced process, see bench_event.c):
#   enabled ns/event   trail record -e bench:event (2 integer fields)
#   disabled ns/event  the same binary, not recorded
#   no-tracepoint      bench_event_notp: the loop without a tracepoint
#   bytes/event        trace file size / events
#   lost @ 10M/s       events lost when paced at 10 M events/s
#   report ev/s        trail report -i of the enabled run's file
#   function_graph     ns per traced call (entry + exit) of bench_fgraph
#                      under trail and uftrace, minus the untraced run
#   ... unmodified     the same of bench_fgraph_plain, built without
#                      patchable entries (trail displaces work's first
#                      instructions; uftrace --force -P work)
#   ... whole function the same arithmetic in a leaf whose entry is a
#                      loop head (work_whole, BENCH_WHOLE=1), which trail
#                      runs whole from a copy; its ratio to the above
#   library call      ns per traced call of libc's labs through the PLT
#                      (bench_libcall), trail and uftrace --force defaults
# bench/real.sh (run after this one by `make bench`) gives the slowdown of
# a real program, the sqlite3 shell, with every function traced.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
export BENCH_N=${BENCH_N:-10000000} BENCH_CPU=${BENCH_CPU:-1}
TRAIL=$BUILD/trail
TMP=$(mktemp -d /tmp/trail-bench.XXXXXX)
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
SESSIOND=
cleanup() {
	[ -n "$SESSIOND" ] && kill "$SESSIOND" 2>/dev/null
	lttng destroy trail-bench >/dev/null 2>&1
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"

en=() dis=() notp=() rdtsc=() bytes=() lost10=() repspeed=() lt=() ltbytes=() ltlost=()
for r in $(seq "$RUNS"); do
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -e bench:event -o "$TMP/t.dat" -- "$BUILD/bench/bench_event")
	en+=("$(field ns_per_event "$l")"); rdtsc+=("$(field rdtsc_ns "$l")")
	sz=$(stat -c %s "$TMP/t.dat")
	bytes+=("$(awk -v s="$sz" -v n="$BENCH_N" 'BEGIN{printf "%.2f", s/n}')")
	t0=$(date +%s.%N)
	"$TRAIL" report -i "$TMP/t.dat" >/dev/null
	t1=$(date +%s.%N)
	repspeed+=("$(awk -v a="$t0" -v b="$t1" -v n="$BENCH_N" 'BEGIN{printf "%.2f", n/(b-a)/1e6}')")
	l=$("$BUILD/bench/bench_event"); dis+=("$(field ns_per_event "$l")")
	l=$("$BUILD/bench/bench_event_notp"); notp+=("$(field ns_per_event "$l")")
	BENCH_RATE=10000000 "${PIN_REC[@]}" "$TRAIL" record -q -e bench:event -o "$TMP/p.dat" -- "$BUILD/bench/bench_event" >/dev/null
	w=$("$TRAIL" report -i "$TMP/p.dat" --stat | sed -n 's/.*entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' | head -1)
	lost10+=("$(awk '{print $2 - $1}' <<<"$w")")
done

# function_graph: the same -fpatchable-function-entry=5 binary untraced,
# under trail, under uftrace (-b 4M: its default 128 KiB buffers make it
# about 2.5x slower); the unpatched build as the reference
# (empty, not unset: a peer not installed leaves its own empty under set -u)
fg_plain=() fg_pfe=() fg_trail=() fg_bytes=() uf=() uf_bytes=() fgu_trail=() fgw_trail=() ufu=() lc_trail=() lc_uf=()
minus() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a-b}'; }
for r in $(seq "$RUNS"); do
	l=$("$BUILD/bench/bench_fgraph_plain"); pbase=$(field ns_per_iter "$l"); fg_plain+=("$pbase")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -p function_graph -l work -o "$TMP/u.dat" -- "$BUILD/bench/bench_fgraph_plain")
	fgu_trail+=("$(minus "$(field ns_per_iter "$l")" "$pbase")")
	l=$(BENCH_WHOLE=1 "$BUILD/bench/bench_fgraph_plain"); wbase=$(field ns_per_iter "$l")
	l=$(BENCH_WHOLE=1 "${PIN_REC[@]}" "$TRAIL" record -q -p function_graph -l work_whole -o "$TMP/w.dat" -- "$BUILD/bench/bench_fgraph_plain")
	fgw_trail+=("$(minus "$(field ns_per_iter "$l")" "$wbase")")
	l=$("$BUILD/bench/bench_fgraph"); base=$(field ns_per_iter "$l"); fg_pfe+=("$base")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -p function_graph -l work -o "$TMP/g.dat" -- "$BUILD/bench/bench_fgraph")
	calls=$(field calls "$l")
	fg_trail+=("$(awk -v a="$(field ns_per_iter "$l")" -v b="$base" 'BEGIN{printf "%.2f", a-b}')")
	fg_bytes+=("$(awk -v s="$(stat -c %s "$TMP/g.dat")" -v n="$calls" 'BEGIN{printf "%.2f", s/n}')")
	if command -v uftrace >/dev/null; then
		l=$(cd "$TMP" && "${PIN_REC[@]}" uftrace record -b 4M -P work -d "$TMP/uf" "$BUILD/bench/bench_fgraph")
		uf+=("$(awk -v a="$(field ns_per_iter "$l")" -v b="$base" 'BEGIN{printf "%.2f", a-b}')")
		uf_bytes+=("$(du -sb "$TMP/uf" | awk -v n="$calls" '{printf "%.2f", $1/n}')")
		rm -rf "$TMP/uf"
		l=$(cd "$TMP" && "${PIN_REC[@]}" uftrace record --force -b 4M -P work -d "$TMP/uf" "$BUILD/bench/bench_fgraph_plain")
		ufu+=("$(minus "$(field ns_per_iter "$l")" "$pbase")")
		rm -rf "$TMP/uf"
	fi
	# a library call (labs through the PLT): every call of the program's
	# PLT traced, by both tracers' defaults
	l=$("$BUILD/bench/bench_libcall"); lbase=$(field ns_per_iter "$l")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -p function_graph -o "$TMP/l.dat" -- "$BUILD/bench/bench_libcall")
	lc_trail+=("$(minus "$(field ns_per_iter "$l")" "$lbase")")
	if command -v uftrace >/dev/null; then
		l=$(cd "$TMP" && "${PIN_REC[@]}" uftrace record --force -b 4M -d "$TMP/uf" "$BUILD/bench/bench_libcall")
		lc_uf+=("$(minus "$(field ns_per_iter "$l")" "$lbase")")
		rm -rf "$TMP/uf"
	fi
done

have_lttng=0
if [ -x "$BUILD/bench/peer_lttng" ] && command -v lttng >/dev/null; then
	have_lttng=1
	if ! lttng list >/dev/null 2>&1; then
		"${PIN_REC[@]}" lttng-sessiond --daemonize --no-kernel >/dev/null 2>&1
		sleep 1
		SESSIOND=$(pgrep -n lttng-sessiond)
	fi
	for r in $(seq "$RUNS"); do
		lttng create trail-bench --output="$TMP/lt$r" >/dev/null
		lttng enable-event -u bench:event >/dev/null
		lttng start >/dev/null
		l=$("$BUILD/bench/peer_lttng")
		out=$(lttng stop 2>&1)
		lttng destroy trail-bench >/dev/null
		lt+=("$(field ns_per_event "$l")")
		ltbytes+=("$(du -sb "$TMP/lt$r" | awk -v n="$BENCH_N" '{printf "%.2f", $1/n}')")
		d=$(sed -n 's/.*\b\([0-9]\+\) events were discarded.*/\1/p' <<<"$out" | head -1)
		ltlost+=("${d:-0}")
		rm -rf "$TMP/lt$r"
	done
fi

echo "trail benchmark: N=$BENCH_N, $RUNS runs, pinned to CPU $BENCH_CPU, $(rec_where); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-) x $(nproc)"
echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource), $(uname -r)"
printf '%-44s %s\n' "figure" "median [min..max]"
printf '%-44s %s\n' "rdtsc (the timestamp floor), ns" "$(stats "${rdtsc[@]}")"
printf '%-44s %s\n' "trail enabled, 2 int fields, ns/event" "$(stats "${en[@]}")"
printf '%-44s %s\n' "trail disabled, ns/event" "$(stats "${dis[@]}")"
printf '%-44s %s\n' "no tracepoint compiled in, ns/event" "$(stats "${notp[@]}")"
printf '%-44s %s\n' "trail bytes/event in the file" "$(stats "${bytes[@]}")"
printf '%-44s %s\n' "trail events lost at 10 M events/s" "$(stats "${lost10[@]}")"
printf '%-44s %s\n' "trail report, M events/s" "$(stats "${repspeed[@]}")"
printf '%-44s %s\n' "untraced call, unpatched build, ns" "$(stats "${fg_plain[@]}")"
printf '%-44s %s\n' "untraced call, patchable build, ns" "$(stats "${fg_pfe[@]}")"
printf '%-44s %s\n' "trail function_graph, ns per call" "$(stats "${fg_trail[@]}")"
printf '%-44s %s\n' "trail function_graph, bytes per call" "$(stats "${fg_bytes[@]}")"
if [ ${#uf[@]} -gt 0 ]; then
	printf '%-44s %s\n' "uftrace function graph, ns per call" "$(stats "${uf[@]}")"
	printf '%-44s %s\n' "uftrace bytes per call" "$(stats "${uf_bytes[@]}")"
	printf '%-44s %s\n' "ratio uftrace / trail (function_graph)" \
		"$(awk -v a="$(median "${uf[@]}")" -v b="$(median "${fg_trail[@]}")" 'BEGIN{printf "%.1fx", a/b}')"
fi
printf '%-44s %s\n' "trail function_graph, unmodified build, ns" "$(stats "${fgu_trail[@]}")"
printf '%-44s %s\n' "... whole function moved (loop at entry), ns" "$(stats "${fgw_trail[@]}")"
printf '%-44s %s\n' "ratio whole / displaced entry" \
	"$(awk -v a="$(median "${fgw_trail[@]}")" -v b="$(median "${fgu_trail[@]}")" 'BEGIN{printf "%.2fx", a/b}')"
if [ ${#ufu[@]} -gt 0 ]; then
	printf '%-44s %s\n' "uftrace --force, unmodified build, ns" "$(stats "${ufu[@]}")"
	printf '%-44s %s\n' "ratio uftrace / trail (unmodified)" \
		"$(awk -v a="$(median "${ufu[@]}")" -v b="$(median "${fgu_trail[@]}")" 'BEGIN{printf "%.1fx", a/b}')"
fi
printf '%-44s %s\n' "trail function_graph, library call (PLT), ns" "$(stats "${lc_trail[@]}")"
if [ ${#lc_uf[@]} -gt 0 ]; then
	printf '%-44s %s\n' "uftrace, library call (PLT), ns" "$(stats "${lc_uf[@]}")"
	printf '%-44s %s\n' "ratio uftrace / trail (library call)" \
		"$(awk -v a="$(median "${lc_uf[@]}")" -v b="$(median "${lc_trail[@]}")" 'BEGIN{printf "%.1fx", a/b}')"
fi
if [ "$have_lttng" = 1 ]; then
	printf '%-44s %s\n' "LTTng-UST enabled, ns/event" "$(stats "${lt[@]}")"
	printf '%-44s %s\n' "LTTng-UST bytes/event (trace dir)" "$(stats "${ltbytes[@]}")"
	printf '%-44s %s\n' "LTTng-UST events discarded (max speed)" "$(stats "${ltlost[@]}")"
	printf '%-44s %s\n' "ratio LTTng-UST / trail (enabled)" \
		"$(awk -v a="$(median "${lt[@]}")" -v b="$(median "${en[@]}")" 'BEGIN{printf "%.1fx", a/b}')"
else
	echo "(LTTng-UST not installed: scripts/install-deps.sh --bench for the comparison)"
fi
