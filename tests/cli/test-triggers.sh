#!/usr/bin/env bash
# Event triggers in the kernel's grammar (record -T): traceon/traceoff,
# enable_event/disable_event, stacktrace, with :COUNT and `if FILTER`,
# checked against the order of a single-threaded sample's calls; triggers
# in a running process, and gone with their recording; the errors with
# their carets.
. "$(dirname "$0")/lib.sh"

P=$BUILD/tests/cli/probed-O0
P2=$BUILD/tests/cli/probed-O2
EX=$BUILD/examples/example
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

# per iteration the sample calls load_config 3 times (flags 42, 1, 2),
# then parse_int(21) and, from nest, parse_int(3)
CFG='p:x/cfg load_config flags=$arg2:s32'
PI='p:x/pi parse_int v=$arg1:s32'

events() { # file -> "cfg42 cfg1 ... pi3", the records in order
	$TRAIL report -q -i "$1" | sed -nE 's/.* x:(cfg|pi): .*(flags|v)=([0-9-]+)$/\1\3/p' | tr '\n' ' '
}

# traceoff's own event is not recorded, traceon's is; a count is spent
traceon_traceoff() {
	fresh_registry
	expect_rc 7 $TRAIL record -q -o t.dat --probe "$CFG" --probe "$PI" \
		-T 'x:pi:traceoff:1 if v == 3' -T 'x:cfg:traceon if flags == 2' -- "$P" 3 >/dev/null
	got=$(events t.dat)
	want="cfg42 cfg1 cfg2 pi21 cfg2 pi21 pi3 cfg42 cfg1 cfg2 pi21 pi3 "
	[ "$got" = "$want" ] || die "got  $got
want $want"
	$TRAIL report -i t.dat | grep -qxF '# trigger: x:pi: traceoff:1 if v == 3' || die "no '# trigger:' line"
}
t traceon_traceoff traceon_traceoff

# a target only enable_event turns on (kept definitions: compiled because
# a trigger names them), counted enables, disables without a count
enable_disable_event() {
	fresh_registry
	$TRAIL probe "$CFG"
	$TRAIL probe "$PI"
	expect_rc 7 $TRAIL record -q -o t.dat -e x:pi \
		-T 'x:pi:enable_event:x:cfg:2 if v == 3' -T 'x:pi:disable_event:x:cfg if v == 21' \
		-- "$P" 5 >/dev/null
	got=$(events t.dat)
	want="pi21 pi3 cfg42 cfg1 cfg2 pi21 pi3 cfg42 cfg1 cfg2 pi21 pi3 pi21 pi3 pi21 pi3 "
	[ "$got" = "$want" ] || die "got  $got
want $want"
}
t enable_disable_event enable_disable_event

# the user stack: the probed function, its callers by frame pointers,
# named in report; a count and a condition; after its event, as ftrace
# shows it; function_graph's swapped return addresses read back
stacktrace() {
	fresh_registry
	expect_rc 7 $TRAIL record -q -o s.dat --probe "$PI" -T 'x:pi:stacktrace:2 if v == 3' \
		-- "$P" 4 >/dev/null
	$TRAIL report -q -i s.dat >r.txt
	[ "$(grep -c 'ftrace:user_stack: <user stack trace>' r.txt)" = 2 ] || die "$(grep -c user_stack r.txt) stacks"
	grep -A3 'user_stack' r.txt | sed -n 2,4p >st.txt
	grep -q '^ => parse_int+0x0/' st.txt && grep -q '^ => nest+0x' st.txt &&
		grep -q '^ => main+0x' st.txt || die "frames: $(cat st.txt)"
	grep -B1 'user_stack' r.txt | head -1 | grep -q 'x:pi: .* v=3$' || die "not after its event: $(grep -B1 user_stack r.txt | head -2)"
	expect_rc 7 $TRAIL record -q -o g.dat -p function_graph -l nest -l main --probe "$PI" \
		-T 'x:pi:stacktrace:1 if v == 3' -- "$P" 2 >/dev/null
	$TRAIL report -q -i g.dat | grep -A4 'user_stack' >gst.txt
	grep -q '^ => nest+0x' gst.txt && grep -q '^ => main+0x' gst.txt || die "under function_graph: $(cat gst.txt)"
	# a static event: the tracepoint's emitter and its caller
	$TRAIL record -q -e app:request -T 'stacktrace:1' -o e.dat -- "$EX" >/dev/null
	$TRAIL report -q -i e.dat | grep -A2 user_stack >est.txt
	has est.txt ' => trail__emit_app_request+0x'
	has est.txt ' => worker_serve+0x'
}
t stacktrace stacktrace

# into a running process (4 threads): traceoff when a thread reaches 500
# stops the recording (that record and those after it); the next
# recording, without the trigger, gets everything again
running_process() {
	fresh_registry
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 60 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	# bad triggers are refused before anything is touched
	expect_rc 1 $TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -T 'x:in:traceoff if w == 1' \
		-o bad.dat -P $pid 2>err.txt
	has err.txt 'Field not found'
	record_running $pid --probe 'p:x/in parse_int v=$arg1:s64' -T 'x:in:traceoff if v == 500' -o a.dat
	# a count is exact with 4 threads racing for it
	record_running $pid --probe 'p:x/in parse_int v=$arg1:s64' -T 'x:in:stacktrace:100 if v > 7' -o c.dat
	n=$($TRAIL report -q -i c.dat | grep -c 'ftrace:user_stack: <user stack trace>' || true)
	[ "$n" = 100 ] || die "stacktrace:100 wrote $n stacks"
	record_running $pid --probe 'p:x/in parse_int v=$arg1:s64' -o b.dat
	kill $pid; wait $pid 2>/dev/null || true
	$TRAIL report -q -i a.dat | grep 'x:in:' | sed 's/.*v=//' >a.txt
	$TRAIL report -q -i b.dat | grep 'x:in:' | sed 's/.*v=//' >b.txt
	! grep -qx 500 a.txt || die "traceoff's own event recorded"
	# each thread goes 0..1023 in turn: off at the first 500, a few
	# records of the other threads at most after it
	[ "$(wc -l <a.txt)" -lt 4100 ] || die "a: $(wc -l <a.txt) records: not off"
	[ "$(wc -l <b.txt)" -gt 5000 ] || die "b: $(wc -l <b.txt) records"
	grep -qx 500 b.txt || die "b: no 500"
}
t running_process running_process

# the flight recorder's contents into OUTPUT.1 while the recording goes
# on: once (a count of 1), the triggering record in it; the recording's own
# file whole; no snapshot without --overwrite
snapshot() {
	fresh_registry
	rm -f o.dat*
	# started under the recorder, each thread's records go from 0 to its
	# first 1000 before the trigger (attached, the recording began
	# anywhere in the threads' rounds of 0..1023: 829 records once);
	# --spin 2, not 1: it spins until a second boundary past now, which
	# --spin 1 may find a few milliseconds away (no thread at 1000 yet)
	$TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -T 'x:in:snapshot:1 if v == 1000' \
		--overwrite -b 1M -o o.dat -- "$P2" --spin 2 >/dev/null
	[ -e o.dat.1 ] && [ ! -e o.dat.2 ] || die "snapshots: $(ls o.dat*)"
	$TRAIL report -q -i o.dat.1 >s.txt 2>err.txt || die "o.dat.1: $(cat err.txt)"
	grep -q 'x:in: .* v=1000$' s.txt || die "the triggering record is not in the snapshot"
	[ "$(grep -c 'x:in:' s.txt)" -gt 1000 ] || die "snapshot: $(grep -c 'x:in:' s.txt) records"
	$TRAIL report -q -i o.dat >/dev/null 2>err.txt || die "o.dat: $(cat err.txt)"
	expect_rc 2 $TRAIL record -q -e app:request -T snapshot -o t.dat -- "$EX" 2>err.txt
	has err.txt 'give --overwrite'
}
t snapshot snapshot

# errors: the caret under the position in -T's text, exit 2 (grammar) or
# 1 (fields and events, checked against the program)
trigger_errors() {
	fresh_registry
	rm -f t.dat
	while IFS='|' read -r rc trig msg col; do
		expect_rc "$rc" $TRAIL record -q -e app:request -T "$trig" -o t.dat -- "$EX" >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$trig': caret at $caret, want $col: $(cat err.txt)"
		[ ! -e t.dat ] || die "'$trig': a file was written"
	done <<'T'
2|snapshots|Unknown trigger command (traceon, traceoff, snapshot, stacktrace, enable_event, disable_event, hist, objtrace, set_wprobe, clear_wprobe, counters)|0
2|traceoff:0|Invalid count|9
2|app:request:traceoff:x|Invalid count|21
2|enable_event:app|Missing SYS:EVENT|13
2|traceoff if|Meaningless filter expression|11
1|traceoff if fdd > 1|Field not found|12
1|app:reply:traceoff if path ~ "a*"|Field not found|22
1|app:request:stacktrace if path > 1|Illegal operation for field type|31
1|enable_event:app:nope|no event of the program matches it|13
1|app:nope:traceon|no event of the program matches its event|0
T
	expect_rc 2 $TRAIL record -q -T traceoff -o t.dat -- "$EX" 2>err.txt
	has err.txt 'applies to the -e before it'
}
t trigger_errors trigger_errors

# more -T on one event than libtrail keeps (8): refused before anything
# runs, the event named (libtrail would leave the event off); a program's
# events, a glob's, and a script's (its events unknown: the -T's name)
too_many_triggers() {
	fresh_registry
	rm -f t.dat
	local -a nine=() many=() eight=()
	for i in $(seq 9); do nine+=(-T "traceon:$i"); done
	for i in $(seq 1000); do many+=(-T "app:request:traceon:$i"); done
	for i in $(seq 8); do eight+=(-T "app:request:traceon:$i"); done
	expect_rc 1 $TRAIL record -q -e app:request "${nine[@]}" -o t.dat -- "$EX" >/dev/null 2>err.txt
	has err.txt 'trail: -T: 9 triggers on app:request, at most 8 triggers per event'
	expect_rc 1 $TRAIL record -q -e 'app:*' -T 'app:*:traceon' -T 'app:re*:traceoff' \
		"${eight[@]/request/re[p]ly}" -o t.dat -- "$EX" >/dev/null 2>err.txt
	has err.txt 'trail: -T: 10 triggers on app:reply, at most 8'
	printf '#!/bin/sh\nexec %s\n' "$EX" >run.sh
	chmod +x run.sh
	expect_rc 1 $TRAIL record -q -e app:request "${many[@]}" -o t.dat -- ./run.sh >/dev/null 2>err.txt
	has err.txt 'trail: -T: 1000 triggers on app:request, at most 8 triggers per event'
	hasnt err.txt 'nothing was recorded'
	[ ! -e t.dat ] || die "a file was written"
	$TRAIL record -q -e app:request "${eight[@]}" -o t.dat -- ./run.sh >/dev/null 2>err.txt
	[ ! -s err.txt ] || die "8 triggers: $(cat err.txt)"
	$TRAIL report -q -i t.dat | grep -q 'app:request:' || die "8 triggers: no app:request"
}
t too_many_triggers too_many_triggers
