#!/usr/bin/env bash
# User stacks without frame pointers (stacktrace triggers, record --stack):
# the call chain main -> a -> b -> c -> d of tests/cli/unwind/uwprog.c,
# built -O2 -fomit-frame-pointer with .sframe, with .eh_frame only, and
# with frame pointers only; the stack recorded at a probe on d equals
# gdb's backtrace there, frame by frame. Damaged tables (bytes replaced
# by unwind/damage.py) give a shorter stack, never a crash; one table
# damaged, the other one is walked.
. "$(dirname "$0")/lib.sh"

UW=$BUILD/tests/cli/uwprog
DAMAGE=$SRC/tests/cli/unwind/damage.py
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)
PROBE='p:x/d d v=$arg1:s32'

# trail's stack at d (the first one recorded): its function names, one a
# line, up to main
trail_stack() { # program, out
	fresh_registry
	$TRAIL record -q -o s.dat --probe "$PROBE" -T 'x:d:stacktrace:1' -- "$1" 3 >/dev/null
	$TRAIL report -q -i s.dat >r.txt
	has r.txt 'ftrace:user_stack: <user stack trace>'
	sed -n '/ftrace:user_stack/,/^ *[^ =]/p' r.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' |
		sed '/^main$/q' >"$2"
}

# gdb's at a breakpoint on d, up to main (where gdb's bt stops)
gdb_stack() { # program, out
	gdb -q -nx -batch -ex 'set pagination off' -ex 'break d' -ex 'run' -ex 'bt' \
		--args "$1" 3 </dev/null 2>&1 |
		sed -nE 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([A-Za-z0-9_.]+) .*/\2/p' >"$2"
}

same_as_gdb() { # program
	trail_stack "$1" trail.txt
	gdb_stack "$1" gdb.txt
	[ "$(tr '\n' ' ' <gdb.txt)" = "d c b a main " ] || die "gdb's stack: $(cat gdb.txt)"
	diff gdb.txt trail.txt >&2 || die "trail's stack is not gdb's (above)"
}

need_gdb() { # test name
	command -v gdb >/dev/null && return 0
	skip "$1" "no gdb (scripts/install-deps.sh --sanitizers installs it)"
	return 1
}

sframe() {
	readelf -SW "$UW-sframe" | grep -qF ' .sframe ' || die "no .sframe section in $UW-sframe"
	same_as_gdb "$UW-sframe"
	# its .eh_frame_hdr's table damaged: the same stack, by .sframe
	python3 "$DAMAGE" "$UW-sframe" nohdr 1 .eh_frame_hdr:12
	chmod +x nohdr
	trail_stack ./nohdr t2.txt
	diff trail.txt t2.txt >&2 || die "without .eh_frame_hdr: not the same stack"
}
if [ ! -x "$UW-sframe" ]; then
	skip sframe "no $UW-sframe: the assembler has no --gsframe (binutils < 2.40)"
elif need_gdb sframe; then
	t sframe sframe
fi

ehframe() {
	! readelf -SW "$UW-eh" | grep -qF ' .sframe ' || die "$UW-eh has .sframe"
	same_as_gdb "$UW-eh"
}
need_gdb ehframe && t ehframe ehframe

# no FDE in .eh_frame covers d: its stack by frame pointers
frame_pointers() {
	local d lo hi
	d=$((16#$(nm "$UW-fp" | awk '$3 == "d" {print $1}')))
	readelf -W --debug-dump=frames "$UW-fp" |
		awk '/^Contents of the/ { eh = ($4 == ".eh_frame") } eh && / FDE / { print substr($NF, 4) }' |
		sed 's/\.\./ /' >fdes.txt
	[ -s fdes.txt ] || die "no FDE read in $UW-fp's .eh_frame"
	while read -r lo hi; do
		[ $((16#$lo)) -gt $d ] || [ $d -ge $((16#$hi)) ] || die "an .eh_frame FDE covers d: $lo..$hi"
	done <fdes.txt
	same_as_gdb "$UW-fp"
}
need_gdb frame_pointers && t frame_pointers frame_pointers

# .sframe (past its header) and .eh_frame replaced by random bytes, three
# seeds: the program runs as before, every probe hit has its record and
# a stack, which stops at c (d's caller, from its entry, without a table;
# c has no frame pointer to go on with)
damaged() {
	local prog=${UW}-sframe
	[ -x "$prog" ] || prog=$UW-eh
	for seed in 1 2 3; do
		if [ "$prog" = "$UW-sframe" ]; then
			python3 "$DAMAGE" "$prog" bad "$seed" .sframe:28 .eh_frame
		else
			python3 "$DAMAGE" "$prog" bad "$seed" .eh_frame
		fi
		chmod +x bad
		fresh_registry
		expect_rc 0 $TRAIL record -q -o b.dat --probe "$PROBE" -T 'x:d:stacktrace' -- ./bad 3 >/dev/null
		$TRAIL report -q -i b.dat >b.txt
		[ "$(grep -c 'x:d: ' b.txt)" = 3 ] && [ "$(grep -c 'ftrace:user_stack' b.txt)" = 3 ] ||
			die "seed $seed: $(grep -c 'x:d: ' b.txt) hits, $(grep -c user_stack b.txt) stacks"
		sed -n '/ftrace:user_stack/,/^ *[^ =]/p' b.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' |
			sort | uniq -c | awk '{printf "%s:%s ", $2, $1}' >names.txt
		[ "$(cat names.txt)" = "c:3 d:3 " ] || die "seed $seed: frames $(cat names.txt)"
	done
}
t damaged damaged

# record --stack: a stack after every event of the --probe and -e
# options (each followed by its own), none after the others; without an
# event to take them at, a usage error
record_stack() {
	fresh_registry
	$TRAIL record -q -o k.dat --stack --probe "$PROBE" -- "$UW-eh" 4 >/dev/null
	$TRAIL report -q -i k.dat >k.txt
	[ "$(grep -c 'x:d: ' k.txt)" = 4 ] && [ "$(grep -c 'ftrace:user_stack' k.txt)" = 4 ] ||
		die "$(grep -c 'x:d: ' k.txt) hits, $(grep -c user_stack k.txt) stacks"
	grep -A1 'x:d: ' k.txt | grep -c 'ftrace:user_stack' | grep -qx 4 || die "a hit without its stack"
	sed -n '/ftrace:user_stack/,/^ *[^ =]/p' k.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' |
		sed '/^main$/q' | tr '\n' ' ' >names.txt
	[ "$(cat names.txt)" = "d c b a main " ] || die "frames: $(cat names.txt)"
	# a static event: its emitter, then the program's frames
	$TRAIL record -q -o e.dat --stack -e app:request -- "$EXAMPLE" >/dev/null
	$TRAIL report -q -i e.dat >e.txt
	n=$(grep -c 'app:request:' e.txt)
	[ "$n" -gt 0 ] && [ "$(grep -c 'ftrace:user_stack' e.txt)" = "$n" ] ||
		die "$n app:request, $(grep -c user_stack e.txt) stacks"
	has e.txt ' => worker_serve+0x'
	expect_rc 2 $TRAIL record -q -o n.dat --stack -- "$UW-eh" 2>err.txt
	has err.txt '--stack takes stacks at the events of the -e and --probe options'
}
t record_stack record_stack

# an object dlopen'ed after the recording joined (and closed, three
# times): walked through like the others (its frames are addresses in
# report: objects are published when the recording joins)
dlopened() {
	fresh_registry
	$TRAIL record -q -o p.dat --allow-unknown --stack -e plugin:work -- \
		"$BUILD/tests/cli/dlopener" "$BUILD/tests/cli/plugin.so" >/dev/null
	$TRAIL report -q -i p.dat >p.txt
	[ "$(grep -c 'plugin:work:' p.txt)" = 3 ] || die "$(grep -c 'plugin:work:' p.txt) plugin:work"
	[ "$(grep -A2 'ftrace:user_stack' p.txt | grep -c ' => main+0x')" = 3 ] ||
		die "stacks not through the plugin to main: $(grep -A3 user_stack p.txt)"
}
t dlopened dlopened

# a stack through a signal frame: d <- c <- on_sig, the handler of a
# SIGUSR1 that s2 raised: the restorer (__restore_rt), then the interrupted
# frames (libc's, raise, s2, main) as gdb walks them; the program's frames
# compared with gdb's (libc's names depend on its symbols: gdb may have
# its debug info, report has its dynamic symbols)
signal_frame() {
	local prog ours
	for prog in "$UW-sframe" "$UW-eh" "$UW-fp"; do
		[ -x "$prog" ] || continue
		fresh_registry
		$TRAIL record -q -o g.dat --probe "$PROBE" -T 'x:d:stacktrace if v == 30' -- "$prog" 0 signal >/dev/null
		$TRAIL report -q -i g.dat >g.txt
		sed -n '/ftrace:user_stack/,/^ *[^ =]/p' g.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' >all.txt
		grep -xE 'a|b|c|d|on_sig|s2|main' all.txt | tr '\n' ' ' >ours.txt
		gdb -q -nx -batch -ex 'set pagination off' -ex 'handle SIGUSR1 nostop noprint pass' \
			-ex 'break d' -ex 'run' -ex 'bt' --args "$prog" 0 signal </dev/null 2>&1 |
			sed -nE 's/^#[0-9]+ +(0x[0-9a-f]+ in )?([A-Za-z0-9_.]+) .*/\2/p' |
			grep -xE 'a|b|c|d|on_sig|s2|main' | tr '\n' ' ' >gdb.txt
		[ "$(cat gdb.txt)" = "d c on_sig s2 main " ] || die "$prog: gdb's stack: $(cat gdb.txt)"
		[ "$(cat ours.txt)" = "$(cat gdb.txt)" ] || die "$prog: ours: $(tr '\n' ' ' <all.txt)"
		grep -A1 -x on_sig all.txt | tail -1 | grep -qx __restore_rt ||
			die "$prog: no signal frame after on_sig: $(tr '\n' ' ' <all.txt)"
	done
}
need_gdb signal_frame && t signal_frame signal_frame

# a stack deeper than the bound (main -> deep x 100 -> c -> d): its first
# 64 frames, d, c and deep's, then the walk stops
depth_bound() {
	fresh_registry
	$TRAIL record -q -o b.dat --probe "$PROBE" -T 'x:d:stacktrace if v == 6999' -- "$UW-eh" 0 deep >/dev/null
	$TRAIL report -q -i b.dat >b.txt
	sed -n '/ftrace:user_stack/,/^ *[^ =]/p' b.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' |
		uniq -c | awk '{printf "%s:%s ", $2, $1}' >names.txt
	[ "$(cat names.txt)" = "d:1 c:1 deep:62 " ] || die "frames: $(cat names.txt)"
}
t depth_bound depth_bound

# the function tracer's own event (-p function -l d) with a stacktrace
# trigger: the walk leaves libtrail by its tables (the hook's record is
# written where there are no frame pointers), the hook's stub stands for
# d, entered: the stack is gdb's
function_tracer() {
	local prog
	for prog in "$UW-sframe" "$UW-eh" "$UW-fp"; do
		[ -x "$prog" ] || continue
		fresh_registry
		$TRAIL record -q -o f.dat -p function -l d -T 'ftrace:function:stacktrace:1' -- "$prog" 3 >/dev/null
		$TRAIL report -q -i f.dat >f.txt
		sed -n '/ftrace:user_stack/,/^ *[^ =]/p' f.txt | sed -nE 's/^ => ([A-Za-z0-9_.]+)\+0x.*/\1/p' |
			sed '/^main$/q' >trail.txt
		gdb_stack "$prog" gdb.txt
		diff gdb.txt trail.txt >&2 || die "$prog: trail's stack is not gdb's (above)"
	done
}
need_gdb function_tracer && t function_tracer function_tracer
