#!/usr/bin/env bash
# bench/probe.sh [BUILD_DIR] - the cost of a probe hit, trail beside the
# kernel's uprobes on the same function in the same run.
#
#   RUNS=3 BENCH_N=10000000 BENCH_CPU=1 bench/probe.sh build
#
# Every figure is ns per call of bench_probe's loop minus the untraced
# loop, the median of RUNS runs [min..max]:
#   trail p 3 regs      --probe 'p probe3 a=%di:s64 b=%si:s64 c=%dx:s64'
#   trail p string      --probe 'p probe_str s=+0(%di):string' (15 chars)
#   trail p + r         an entry probe (3 regs) and a return probe ($retval)
#   function_graph      -p function_graph -l probe3, for the ratio above
#   uprobe 3 regs       the same fetch-args through /sys/kernel/tracing's
#                       uprobe_events (root and tracefs needed; mounted
#                       here if it is not), BENCH_UPROBE_N calls (1 M)
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
export BENCH_N=${BENCH_N:-10000000} BENCH_CPU=${BENCH_CPU:-1}
UN=${BENCH_UPROBE_N:-1000000}
# a buffer the run goes round several times: the first touch of its pages
# (a page fault, or madvise populate, per 4 KiB) costs more than a probe
# hit and is not the probe's cost
BUF=${BENCH_BUFFER:-32M}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_probe
TMP=$(mktemp -d /tmp/trail-bench.XXXXXX)
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
TR=/sys/kernel/tracing
cleanup() {
	if [ -w "$TR/uprobe_events" ]; then
		[ -e "$TR/events/trailbench/enable" ] && echo 0 >"$TR/events/trailbench/enable"
		echo '-:trailbench/k3' >>"$TR/uprobe_events" 2>/dev/null
	fi
	rm -rf "$TMP"
}
trap cleanup EXIT

. "$(dirname "$0")/lib.sh"
minus() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.3f", a-b}'; }

# the kernel's uprobes: tracefs mounted (say so), the file offset of probe3
uprobes=
if [ "$(id -u)" = 0 ]; then
	if [ ! -e "$TR/uprobe_events" ]; then
		mount -t tracefs nodev "$TR" 2>/dev/null && echo "(mounted tracefs on $TR)"
	fi
	[ -w "$TR/uprobe_events" ] && uprobes=1
fi
# probe3's file offset: its address minus its segment's (vaddr - offset)
off=$(python3 - "$PROG" <<'PY'
import subprocess, sys
exe = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.splitlines()]
addr = next(int(s[0], 16) for s in sym if len(s) == 3 and s[2] == "probe3")
for l in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        o, v, sz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
        if v <= addr < v + sz:
            print(hex(addr - v + o)); break
PY
)

declare -a base sbase p3 ps pr fg kp kbase
for r in $(seq "$RUNS"); do
	l=$("$PROG" regs); base+=("$(field ns_per_iter "$l")")
	l=$("$PROG" str); sbase+=("$(field ns_per_iter "$l")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" --probe 'p:bench/p3 probe3 a=%di:s64 b=%si:s64 c=%dx:s64' \
		-o "$TMP/p.dat" -- "$PROG" regs)
	p3+=("$(minus "$(field ns_per_iter "$l")" "${base[-1]}")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" --probe 'p:bench/ps probe_str s=+0(%di):string' \
		-o "$TMP/s.dat" -- "$PROG" str)
	ps+=("$(minus "$(field ns_per_iter "$l")" "${sbase[-1]}")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" --probe 'p:bench/e probe3 a=%di:s64 b=%si:s64 c=%dx:s64' \
		--probe 'r:bench/r probe3 ret=$retval:s64' -o "$TMP/r.dat" -- "$PROG" regs)
	pr+=("$(minus "$(field ns_per_iter "$l")" "${base[-1]}")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" -p function_graph -l probe3 -o "$TMP/g.dat" -- "$PROG" regs)
	fg+=("$(minus "$(field ns_per_iter "$l")" "${base[-1]}")")
	if [ -n "$uprobes" ] && [ -n "$off" ]; then
		echo "p:trailbench/k3 $PROG:$off a=%di:s64 b=%si:s64 c=%dx:s64" >>"$TR/uprobe_events"
		echo 1 >"$TR/events/trailbench/enable"
		echo 1 >"$TR/tracing_on"
		l=$("$PROG" regs "$UN"); kp+=("$(field ns_per_iter "$l")")
		echo 0 >"$TR/events/trailbench/enable"
		echo '-:trailbench/k3' >>"$TR/uprobe_events"
		l=$("$PROG" regs "$UN"); kbase+=("$(field ns_per_iter "$l")")
		kp[-1]=$(minus "${kp[-1]}" "${kbase[-1]}")
	fi
done
# the records are all there
hits=$("$TRAIL" report -i "$TMP/p.dat" --count 2>/dev/null | awk '$1 == "bench:p3" {print $2}')

printf 'probe hit costs, ns per call (median [min..max] of %s runs, N=%s, CPU %s, %s)\n' \
	"$RUNS" "$BENCH_N" "$BENCH_CPU" "$(rec_where)"
printf '  %-22s %s\n' "untraced loop" "$(stats "${base[@]}")"
printf '  %-22s %s   (records: %s)\n' "trail p 3 regs" "$(stats "${p3[@]}")" "${hits:-?}"
printf '  %-22s %s\n' "trail p string" "$(stats "${ps[@]}")"
printf '  %-22s %s\n' "trail p + r" "$(stats "${pr[@]}")"
printf '  %-22s %s\n' "function_graph" "$(stats "${fg[@]}")"
printf '  %-22s %.2f\n' "(p + r) / fgraph" "$(awk -v a="$(median "${pr[@]}")" -v b="$(median "${fg[@]}")" 'BEGIN{print a/b}')"
if [ ${#kp[@]} -gt 0 ]; then
	printf '  %-22s %s   (N=%s)\n' "kernel uprobe 3 regs" "$(stats "${kp[@]}")" "$UN"
	printf '  %-22s %.1fx\n' "uprobe / trail" "$(awk -v a="$(median "${kp[@]}")" -v b="$(median "${p3[@]}")" 'BEGIN{print a/b}')"
else
	echo "  kernel uprobes: not measured (needs root and $TR/uprobe_events)"
fi
