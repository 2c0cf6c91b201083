#!/usr/bin/env bash
# bench/timerlat.sh [BUILD_DIR] - trail timerlat beside cyclictest
# (Debian's rt-tests) on the same CPU, period and priority, one after the
# other, RUNS times: the thread latency's avg and max of each, and trail
# timerlat's own cost (its CPU time per period, from getrusage of the
# whole process: the measuring thread and the one that prints). Both
# hold /dev/cpu_dma_latency at 0 (cyclictest does unless --laptop).
#
#   RUNS=3 SECS=10 CPU=1 PERIOD=1000 PRIO=95 bench/timerlat.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
SECS=${SECS:-10}
CPU=${CPU:-$(($(nproc) - 1))}
PERIOD=${PERIOD:-1000}
PRIO=${PRIO:-95}
TRAIL=$BUILD/trail
. "$(dirname "$0")/lib.sh"
bench_scratch

tavg=() tmax=() cavg=() cmax=() cpu=() ccpu=()
for r in $(seq "$RUNS"); do
	/usr/bin/time -f '%U %S' -o "$TMP/time" "$TRAIL" timerlat top -q -d "${SECS}s" -c "$CPU" \
		-p "$PERIOD" -P "f:$PRIO" --dma-latency 0 >"$TMP/t.txt" 2>"$TMP/t.err"
	row=$(grep -E "^ *$CPU #" "$TMP/t.txt")
	n=$(sed -E 's/^ *[0-9]+ #([0-9]+) .*/\1/' <<<"$row")
	tavg+=("$(awk -F'|' '{ split($3, a, " "); print a[3] }' <<<"$row")")
	tmax+=("$(awk -F'|' '{ split($3, a, " "); print a[4] }' <<<"$row")")
	cpu+=("$(awk -v n="$n" '{ printf "%.2f", ($1 + $2) * 1e9 / n }' "$TMP/time")")
	if command -v cyclictest >/dev/null; then
		l=$(/usr/bin/time -f '%U %S' -o "$TMP/ctime" cyclictest -q -m -D "$SECS" -a "$CPU" -t 1 \
			-i "$PERIOD" -p "$PRIO" 2>/dev/null | grep '^T:')
		cn=$(sed -E 's/.* C: *([0-9]+).*/\1/' <<<"$l")
		ccpu+=("$(awk -v n="$cn" '{ printf "%.2f", ($1 + $2) * 1e9 / n }' "$TMP/ctime")")
		cavg+=("$(sed -E 's/.*Avg: *([0-9]+).*/\1/' <<<"$l")")
		cmax+=("$(sed -E 's/.*Max: *([0-9]+).*/\1/' <<<"$l")")
	fi
done
echo "timerlat: CPU $CPU, period $PERIOD us, SCHED_FIFO $PRIO, $SECS s a run, median of $RUNS [min..max]"
grep -q 'default priority' "$TMP/t.err" && echo "  (SCHED_FIFO was not allowed: both at the default priority)"
echo "  trail timerlat, thread latency avg (us)   $(stats "${tavg[@]}")"
echo "  trail timerlat, thread latency max (us)   $(stats "${tmax[@]}")"
if [ ${#cavg[@]} -gt 0 ]; then
	echo "  cyclictest, latency avg (us)              $(stats "${cavg[@]}")"
	echo "  cyclictest, latency max (us)              $(stats "${cmax[@]}")"
	echo "  cyclictest's CPU time per period (ns)     $(stats "${ccpu[@]}")"
else
	echo "  (cyclictest: not installed, Debian's rt-tests)"
fi
echo "  trail timerlat's CPU time per period (ns) $(stats "${cpu[@]}")"
