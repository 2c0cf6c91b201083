#!/usr/bin/env bash
# record + report of the bundled example and of the test programs:
# golden output, children (fork, exec), dlopen'ed objects, C++, list.
. "$(dirname "$0")/lib.sh"

golden_example() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE"
	$TRAIL report -i ex.dat >out.txt
	normalize out.txt >norm.txt
	diff -u "$SRC/tests/cli/golden/example.txt" norm.txt
}

golden_selected_events() {
	$TRAIL record -q -e app:request -e app:stop -o ex.dat -- "$EXAMPLE" 1 3
	$TRAIL report -q -i ex.dat | normalize >norm.txt
	diff -u "$SRC/tests/cli/golden/example-request-stop.txt" norm.txt
}

ns_timestamps() {
	$TRAIL record -q -e app:start -o ex.dat -- "$EXAMPLE" 1 1
	$TRAIL report -q -t -i ex.dat >out.txt
	grep -Eq '\] +[0-9]+\.[0-9]{9}: app:start' out.txt || die "no ns timestamp: $(cat out.txt)"
}

timestamps_sorted_monotonic() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE" 8 200
	$TRAIL report -q -t -i ex.dat | awk '{ for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+\.[0-9]+:$/) { t = substr($i, 1, length($i) - 1); if (t + 0 < last + 0) { print "unsorted at " NR; exit 1 } last = t } }'
	n=$($TRAIL report -q -i ex.dat | wc -l)
	# start + stop, and per worker 200 x (request + reply) + stats
	[ "$n" -eq $((2 + 8 * 401)) ] || die "$n events, wanted $((2 + 8 * 401))"
}

timestamps_are_monotonic_clock() {
	before=$(awk '{print $1}' /proc/uptime)
	$TRAIL record -q -e app:start -o ex.dat -- "$EXAMPLE" 1 1
	after=$(awk '{print $1}' /proc/uptime)
	ts=$($TRAIL report -q -i ex.dat | sed -E 's/.*\] +([0-9.]+):.*/\1/')
	# CLOCK_MONOTONIC and uptime agree to well within a second here
	awk -v b="$before" -v a="$after" -v t="$ts" 'BEGIN { exit !(t >= b - 1 && t <= a + 1) }' ||
		die "timestamp $ts not within [$before, $after]"
}

follows_fork_and_exec() {
	$TRAIL record -q -e 'proc:*' -o f.dat -- "$BUILD/tests/cli/forker"
	$TRAIL report -q -i f.dat >out.txt
	[ "$(grep -c 'who="parent"' out.txt)" -eq 2 ] || die "parent events: $(cat out.txt)"
	[ "$(grep -c 'who="child"' out.txt)" -eq 3 ] || die "child events: $(cat out.txt)"
	[ "$(grep -c 'who="exec"' out.txt)" -eq 3 ] || die "exec events: $(cat out.txt)"
	# three different processes (pid of the parent, of the child before and after exec is the same)
	$TRAIL report -i f.dat --stat >stat.txt
	has stat.txt "entries-in-buffer/entries-written: 8/8"
}

# a forked child runs libtrail's code without faulting it in again: at
# the first fork the mapping got a private page (so fork copies its page
# table entries) and all of it was mapped (src/lib/inherit.c)
fork_inherits_code() {
	$TRAIL record -q -e 'proc:*' -o f.dat -- "$BUILD/tests/cli/forker" smaps >out.txt
	set -- $(sed 's/[a-z]*=//g' out.txt)
	[ $# = 4 ] && [ "$1" -gt 0 ] || die "forker smaps: $(cat out.txt)"
	if [ "$4" = 1 ]; then
		[ "$3" -ge 4 ] || die "libtrail's code has no private page after a fork: $(cat out.txt)"
		[ "$2" = "$1" ] || die "libtrail's code not all mapped after a fork: $(cat out.txt)"
	else
		echo "(this kernel refuses forced writes to /proc/self/mem: libtrail's code is left to fault in, not checked)"
	fi
	$TRAIL report -q -i f.dat >rep.txt
	[ "$(grep -c 'who="child"' rep.txt)" = 1 ] || die "the child's event: $(cat rep.txt)"
}

dlopen_dlclose() {
	$TRAIL record -q --allow-unknown -e 'plugin:*' -e 'host:*' -o d.dat -- \
		"$BUILD/tests/cli/dlopener" "$BUILD/tests/cli/plugin.so"
	$TRAIL report -q -i d.dat | sed -E 's/.*: ([a-z]+:[a-z]+): /\1 /' >out.txt
	cat >want.txt <<-'W'
	host:round round=0 loaded=1
	plugin:work round=0
	host:round round=0 loaded=0
	host:round round=1 loaded=1
	plugin:work round=1
	host:round round=1 loaded=0
	host:round round=2 loaded=1
	plugin:work round=2
	host:round round=2 loaded=0
	W
	diff -u want.txt out.txt
}

cxx_program() {
	$TRAIL record -q -e 'cxx:*' -o c.dat -- "$BUILD/tests/cli/cxx"
	$TRAIL report -q -i c.dat | sed -E 's/.*: cxx:item: //' >out.txt
	printf '%s\n' 'name="widget" color=-1 values={1,2,3}' 'name="lambda" color=2 values={1,2,3}' >want.txt
	diff -u want.txt out.txt
}

# (the USDT probes of its libraries, libstdc++'s in a sanitizer build,
# are listed too: test-usdt.sh checks those)
list_program() {
	$TRAIL list "$EXAMPLE" | grep -v '^sdt_' >out.txt
	printf '%s\n' app:reply app:request app:start app:stats app:stop >want.txt
	diff -u want.txt out.txt
	$TRAIL list "$EXAMPLE" 'app:re*' >out.txt
	printf '%s\n' app:reply app:request >want.txt
	diff -u want.txt out.txt
	$TRAIL list -F "$EXAMPLE" app:request >out.txt
	has out.txt "field:s32 fd;"
	has out.txt "field:__data_loc char[] path;"
	has out.txt "hex:1;"
}

# -F's offsets are the payload's (doc/file-format.md): a string or a
# sequence is its u16 length at a fixed offset, a field after one is at
# N plus its bytes ("6+path"), never an unsigned -1
list_fields_offsets() {
	$TRAIL list -F "$EXAMPLE" 'app:st*' | grep -v object: >out.txt
	$TRAIL list -F "$EXAMPLE" app:request | grep -v object: >>out.txt
	cat >want.txt <<'EOF'
app:start
	field:s32 workers;	offset:0;	size:4;	signed:1;
	field:s32 requests;	offset:4;	size:4;	signed:1;
app:stats
	field:__data_loc char[] worker;	offset:0;	size:2;	signed:0;
	field:u32[4] buckets;	offset:2+worker;	size:16;	signed:0;
	field:__data_loc u32[] codes;	offset:18+worker;	size:2;	signed:0;	hex:1;
	field:u64 n;	offset:20+worker+codes;	size:8;	signed:0;
app:stop
	field:s32 handled;	offset:0;	size:4;	signed:1;
app:request
	field:s32 fd;	offset:0;	size:4;	signed:1;
	field:__data_loc char[] path;	offset:4;	size:2;	signed:0;
	field:u64 bytes;	offset:6+path;	size:8;	signed:0;	hex:1;
EOF
	diff -u want.txt out.txt
}

list_running_process() {
	"$EXAMPLE_LINKED" --loop >/dev/null &
	pid=$!
	wait_for "grep -q libtrail /proc/$pid/maps"
	$TRAIL list -P "$pid" | grep -v '^sdt_' >out.txt
	kill "$pid"; wait "$pid" 2>/dev/null || true
	printf '%s\n' app:reply app:request app:start app:stats app:stop >want.txt
	diff -u want.txt out.txt
}

without_libtrail_events_are_off() {
	# the example does not link libtrail: run alone it records nothing and
	# behaves the same
	"$EXAMPLE" 2 3
}

t golden_example golden_example
t golden_selected_events golden_selected_events
t ns_timestamps ns_timestamps
t timestamps_sorted_monotonic timestamps_sorted_monotonic
t timestamps_are_monotonic_clock timestamps_are_monotonic_clock

clock_choice() {
	# -C mono: CLOCK_MONOTONIC stamps, said so in the header, and they lie
	# in the recording's span like the TSC's converted ones
	before=$(awk '{print $1}' /proc/uptime)
	$TRAIL record -q -C mono -e app:start -o mono.dat -- "$EXAMPLE" 1 1
	after=$(awk '{print $1}' /proc/uptime)
	$TRAIL report -i mono.dat >out.txt
	has out.txt "# clock: CLOCK_MONOTONIC,"
	ts=$($TRAIL report -q -i mono.dat | sed -E 's/.*\] +([0-9.]+):.*/\1/')
	awk -v b="$before" -v a="$after" -v t="$ts" 'BEGIN { exit !(t >= b - 1 && t <= a + 1) }' ||
		die "timestamp $ts not within [$before, $after]"
	expect_rc 2 $TRAIL record -C sundial -e app:start -- "$EXAMPLE" 2>err.txt
	has err.txt "unknown clock 'sundial' (available: auto x86-tsc mono)"
	if grep -q ' constant_tsc' /proc/cpuinfo && grep -q ' nonstop_tsc' /proc/cpuinfo; then
		$TRAIL record -q -C x86-tsc -e app:start -o tsc.dat -- "$EXAMPLE" 1 1
		$TRAIL report -i tsc.dat >out.txt
		has out.txt "# clock: tsc (shown as CLOCK_MONOTONIC)"
	else
		expect_rc 1 $TRAIL record -q -C x86-tsc -e app:start -o tsc.dat -- "$EXAMPLE" 1 1 2>err.txt
		has err.txt "TSC is not invariant"
	fi
}
t clock_choice clock_choice
t follows_fork_and_exec follows_fork_and_exec
t fork_inherits_code fork_inherits_code
t dlopen_dlclose dlopen_dlclose
t cxx_program cxx_program
t list_program list_program
t list_fields_offsets list_fields_offsets
t list_running_process list_running_process
t without_libtrail_events_are_off without_libtrail_events_are_off

thread_churn_reuses_stream_slots() {
	# 3000 threads, a session with 1024 stream slots: every event kept
	$TRAIL record -q -b 256K --chunk-size 4K -e 'churn:*' -o ch.dat -- "$BUILD/tests/cli/churn" 3000 10 10
	$TRAIL report -i ch.dat --stat >stat.txt
	has stat.txt "entries-in-buffer/entries-written: 30000/30000"
	[ "$($TRAIL report -q -i ch.dat | wc -l)" -eq 30000 ] || die "events missing"
}
t thread_churn_reuses_stream_slots thread_churn_reuses_stream_slots

overwrite_thread_churn_keeps_all() {
	# the flight recorder, 1500 threads of 10 events each, a buffer that
	# holds them all (512 KiB of 4 KiB chunks: 128 chunks, 1024 stream
	# slots): every event kept, none overwritten, none without a stream
	$TRAIL record -q --overwrite -b 512K --chunk-size 4K -e 'churn:*' -o ow.dat -- \
		"$BUILD/tests/cli/churn" 1500 10 10
	$TRAIL report -i ow.dat --stat >stat.txt
	has stat.txt "entries-in-buffer/entries-written: 15000/15000"
	hasnt stat.txt "with no stream"
	hasnt stat.txt "overwritten"
	[ "$($TRAIL report -q -i ow.dat | wc -l)" -eq 15000 ] || die "events missing"
}
t overwrite_thread_churn_keeps_all overwrite_thread_churn_keeps_all

overwrite_thread_churn_keeps_newest() {
	# 3000 threads x 10 events (30,000 records of 12 bytes, with a chunk
	# header per thread ~540 KiB) through a 256 KiB flight recorder: the
	# newest threads are kept whole, at least half of what the buffer
	# holds (256 KiB / 18.4 bytes an event: 14,247 events), and the
	# accounting is exact: kept + overwritten = 30,000
	$TRAIL record -q --overwrite -b 256K --chunk-size 4K -e 'churn:*' -o ow.dat -- \
		"$BUILD/tests/cli/churn" 3000 10 10
	$TRAIL report -i ow.dat --stat >stat.txt
	$TRAIL report -q -i ow.dat >ev.txt
	hasnt stat.txt "with no stream"
	local kept gone
	kept=$(wc -l <ev.txt)
	has stat.txt "entries-in-buffer/entries-written: $kept/30000"
	[ "$kept" -ge 7124 ] || die "kept $kept events, less than half the buffer"
	gone=$(sed -n 's/^# \([0-9]*\) events of \([0-9]*\) threads that ended were all overwritten.*/\1/p' stat.txt)
	[ "$((kept + gone))" -eq 30000 ] || die "kept $kept + overwritten $gone != 30000"
	# per stream: every thread listed has its 10 events in the file
	awk '$1 == "#" && $5 ~ /^[0-9]+\/[0-9]+$/ && $5 != "10/10" { print; bad = 1 } END { exit bad }' \
		stat.txt || die "a thread kept in part"
	# the threads kept are the newest, whole: 2999 down to some n, with
	# at most 2 % missing in between (a thread's chunk a writer reclaimed
	# just before the recorder packed it, while older ones were packed)
	sed -n 's/.*thread=\([0-9]*\) i=.*/\1/p' ev.txt | sort -n | uniq -c >threads.txt
	awk '$1 != 10 { exit 1 } { n++; if (NR == 1) lo = $2; hi = $2 }
		END { exit !(hi == 2999 && (hi - lo + 1 - n) * 50 <= n) }' threads.txt ||
		die "not the newest threads whole: $(head -3 threads.txt) ... $(tail -3 threads.txt)"
}
t overwrite_thread_churn_keeps_newest overwrite_thread_churn_keeps_newest

overwrite_process_churn() {
	# processes that end without detaching leave their chunks owned and
	# their streams live: the flight recorder takes them over, so 40 of
	# them through a buffer of 16 chunks keep every event
	$TRAIL record -q --overwrite -b 64K --chunk-size 4K --allow-unknown -e 'app:*' -o op.dat -- \
		sh -c "for i in \$(seq 40); do '$EXAMPLE' 1 1 || exit 1; done"
	$TRAIL report -i op.dat --stat >stat.txt
	has stat.txt "entries-in-buffer/entries-written: 200/200"
	hasnt stat.txt "with no stream"
}
t overwrite_process_churn overwrite_process_churn

status_line_on_a_terminal() {
	command -v script >/dev/null || die "script(1) missing"
	script -qec "$TRAIL record -e 'app:*' -o st.dat -- $EXAMPLE 2 20000" /dev/null >tty.txt
	# a live line redrawn in place (\r, clear to end of line), then the summary
	grep -q $'\r\033\[Ktrail: [0-9,]* events' tty.txt || die "no status line: $(cat -v tty.txt)"
	has tty.txt "trail: 80,004 events"
	has tty.txt "0 lost"
	# and none when not on a terminal
	$TRAIL record -e 'app:*' -o st.dat -- "$EXAMPLE" 2 20000 2>plain.txt
	! grep -q $'\r' plain.txt || die "status line written to a non-terminal"
	has plain.txt "trail: 80,004 events"
}
t status_line_on_a_terminal status_line_on_a_terminal

script_command() {
	# a script is not an ELF file: its events are known when it runs
	printf '#!/bin/sh\nexec "%s" 1 1\n' "$EXAMPLE" >run.sh
	chmod +x run.sh
	$TRAIL record -q -e 'app:start' -o sc.dat -- ./run.sh
	[ "$($TRAIL report -q -i sc.dat | grep -c app:start)" -eq 1 ] || die "no event"
}
t script_command script_command
