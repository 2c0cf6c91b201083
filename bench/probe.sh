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
#   trail p at +MID     --probe 'p probe3+MID a=%ax:s64 b=%si:s64': a probe at
#                       an instruction inside probe3: a jump to its stub,
#                       then (TRAIL_INSN_JUMP=0) a breakpoint, UN calls
#   uprobe at +MID      the same through uprobe_events
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
		echo '-:trailbench/km' >>"$TR/uprobe_events" 2>/dev/null
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
# probe3's file offset: its address minus its segment's (vaddr - offset);
# then MID, the offset in probe3 of its second instruction after the nops
# (sar: a mid-function instruction, for the probe at an instruction)
read -r off mid <<<"$(python3 - "$PROG" <<'PY'
import subprocess, sys
exe = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", exe], capture_output=True, text=True).stdout.splitlines()]
addr = next(int(s[0], 16) for s in sym if len(s) == 3 and s[2] == "probe3")
dis = subprocess.run(["objdump", "-d", "--no-show-raw-insn", "--start-address=%#x" % addr,
                      "--stop-address=%#x" % (addr + 32), exe], capture_output=True, text=True).stdout
insns = [l.split(":\t") for l in dis.splitlines() if ":\t" in l]
real = [int(a.strip(), 16) - addr for a, m in insns if not m.startswith("nop")]
for l in subprocess.run(["readelf", "-lW", exe], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD":
        o, v, sz = int(f[1], 16), int(f[2], 16), int(f[5], 16)
        if v <= addr < v + sz:
            print(hex(addr - v + o), hex(real[1])); break
PY
)"

# kernel_uprobe NAME DEFINITION: ns per call of UN calls with that uprobe
kernel_uprobe() {
	echo "p:trailbench/$1 $2" >>"$TR/uprobe_events"
	echo 1 >"$TR/events/trailbench/enable"
	echo 1 >"$TR/tracing_on"
	field ns_per_iter "$("$PROG" regs "$UN")"
	echo 0 >"$TR/events/trailbench/enable"
	echo "-:trailbench/$1" >>"$TR/uprobe_events"
}

declare -a base sbase p3 ps pr fg kp kbase mp km mj
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
	# a probe at an instruction: a jump to its stub (nothing in probe3
	# branches into the bytes after the sar), then the breakpoint the
	# jump replaces (TRAIL_INSN_JUMP=0), UN calls: it traps
	l=$("${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" --probe "p:bench/mid probe3+$mid a=%ax:s64 b=%si:s64" \
		-o "$TMP/j.dat" -- "$PROG" regs)
	mj+=("$(minus "$(field ns_per_iter "$l")" "${base[-1]}")")
	l=$(TRAIL_INSN_JUMP=0 "${PIN_REC[@]}" "$TRAIL" record -q -b "$BUF" \
		--probe "p:bench/mid probe3+$mid a=%ax:s64 b=%si:s64" -o "$TMP/m.dat" -- "$PROG" regs "$UN")
	mp+=("$(minus "$(field ns_per_iter "$l")" "${base[-1]}")")
	if [ -n "$uprobes" ] && [ -n "$off" ]; then
		l=$(kernel_uprobe k3 "$PROG:$off a=%di:s64 b=%si:s64 c=%dx:s64")
		kbase+=("$(field ns_per_iter "$("$PROG" regs "$UN")")")
		kp+=("$(minus "$l" "${kbase[-1]}")")
		l=$(kernel_uprobe km "$PROG:$(printf '0x%x' $((off + mid))) a=%ax:s64 b=%si:s64")
		km+=("$(minus "$l" "${kbase[-1]}")")
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
jhits=$("$TRAIL" report -i "$TMP/j.dat" --count 2>/dev/null | awk '$1 == "bench:mid" {print $2}')
printf '  %-22s %s   (records: %s)\n' "trail p at +$mid, jump" "$(stats "${mj[@]}")" "${jhits:-?}"
mhits=$("$TRAIL" report -i "$TMP/m.dat" --count 2>/dev/null | awk '$1 == "bench:mid" {print $2}')
printf '  %-22s %s   (N=%s, records: %s)\n' "trail p at +$mid, trap" "$(stats "${mp[@]}")" "$UN" "${mhits:-?}"
if [ ${#km[@]} -gt 0 ]; then
	printf '  %-22s %s   (N=%s)\n' "kernel uprobe at +$mid" "$(stats "${km[@]}")" "$UN"
	printf '  %-22s %.1fx\n' "uprobe / trail (trap)" "$(awk -v a="$(median "${km[@]}")" -v b="$(median "${mp[@]}")" 'BEGIN{print a/b}')"
	printf '  %-22s %.0fx\n' "uprobe / trail (jump)" "$(awk -v a="$(median "${km[@]}")" -v b="$(median "${mj[@]}")" 'BEGIN{print a/b}')"
fi
if [ ${#kp[@]} -gt 0 ]; then
	printf '  %-22s %s   (N=%s)\n' "kernel uprobe 3 regs" "$(stats "${kp[@]}")" "$UN"
	printf '  %-22s %.1fx\n' "uprobe / trail" "$(awk -v a="$(median "${kp[@]}")" -v b="$(median "${p3[@]}")" 'BEGIN{print a/b}')"
else
	echo "  kernel uprobes: not measured (needs root and $TR/uprobe_events)"
fi
