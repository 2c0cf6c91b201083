#!/usr/bin/env bash
# The recorder never loses what a user had or recorded, and never needs a
# second terminal: an existing output survives a failed start, signals
# sent to trail alone end it promptly, the exit status is the command's,
# buffers fit the machine and its limits, losses are counted exactly
# (reliability issue, items 1, 2, 5, 6, 7, 9 and 12).
. "$(dirname "$0")/lib.sh"

# "lost" of a file, as its report header counts it: written - in buffer
file_lost() {
	$TRAIL report -i "$1" --stat | sed -n 's/.*entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/\2 \1/p' |
		awk '{ print $1 - $2 }'
}

existing_output_survives_a_failed_start() {
	echo precious >keep.dat
	printf '\x7fELF garbage' >bad.bin
	chmod +x bad.bin
	expect_rc 1 $TRAIL record -e '*' --allow-unknown -o keep.dat -- ./bad.bin 2>err.txt
	has err.txt "cannot run ./bad.bin: Exec format error"
	[ "$(cat keep.dat)" = precious ] || die "keep.dat was changed"
	[ ! -e keep.dat.part ] || die "keep.dat.part left behind"
	# and a recording that runs replaces it whole
	$TRAIL record -q -e 'app:*' -o keep.dat -- "$EXAMPLE"
	[ "$($TRAIL report -q -i keep.dat | wc -l)" -eq 24 ] || die "not replaced"
	[ ! -e keep.dat.part ] || die "keep.dat.part left behind"
}

output_that_is_the_command_is_refused() {
	cp "$EXAMPLE" ex
	expect_rc 2 $TRAIL record -e '*' -o ex -- ./ex 2>err.txt
	has err.txt "-o ex is the program being recorded"
	cmp -s ex "$EXAMPLE" || die "the program was changed"
	ln -s ex link.dat
	expect_rc 2 $TRAIL record -e '*' -o link.dat -- ./ex 2>err.txt
	cmp -s ex "$EXAMPLE" || die "the program was changed through a symlink"
}

two_recorders_one_output() {
	$TRAIL record -q -e 'app:*' -o same.dat -- "$EXAMPLE" --loop 2>first.txt &
	first=$!
	wait_for '[ -e same.dat.part ]' || die "no same.dat.part"
	expect_rc 1 $TRAIL record -q -e 'app:*' -o same.dat -- "$EXAMPLE" 2>err.txt
	has err.txt "another trail record is writing same.dat"
	[ -e same.dat.part ] || die "the first recorder's file was removed"
	kill -TERM $first
	wait $first || true
	$TRAIL report -i same.dat >/dev/null 2>err.txt || die "first file damaged: $(cat err.txt)"
}

sigterm_to_the_recorder_alone() {
	# a service manager or CI timeout signals trail, not the group: the
	# command gets the signal, trail finishes the file and exits
	$TRAIL record -q -e 'app:*' -o s.dat -- "$EXAMPLE" --loop &
	rec=$!
	sleep 1
	kill -TERM $rec
	rc=0
	timeout 10 tail --pid=$rec -f /dev/null || die "trail still running 10 s after SIGTERM"
	wait $rec || rc=$?
	[ "$rc" -eq 143 ] || die "exit $rc, wanted 143 (the command's: killed by SIGTERM)"
	$TRAIL report -i s.dat >out.txt 2>err.txt || die "file not complete: $(cat err.txt)"
	[ "$(grep -c 'app:request' out.txt)" -gt 10 ] || die "no events"
}

command_ignoring_the_signal_goes_on() {
	printf '#!/bin/sh\ntrap "" TERM\necho $$ >pid.txt\n"%s" --loop\n' "$EXAMPLE" >stubborn.sh
	chmod +x stubborn.sh
	$TRAIL record -q -e 'app:*' -o g.dat -- ./stubborn.sh 2>err.txt &
	rec=$!
	wait_for '[ -s pid.txt ]' || die "no pid"
	sleep 0.5
	kill -TERM $rec
	timeout 10 tail --pid=$rec -f /dev/null || die "trail still running 10 s after SIGTERM"
	rc=0
	wait $rec || rc=$?
	[ "$rc" -eq 143 ] || die "exit $rc, wanted 143"
	has err.txt "did not exit within 2 s of Terminated: it goes on, untraced"
	kill -0 "$(cat pid.txt)" || die "the command was killed"
	pkill -KILL -P "$(cat pid.txt)" || true
	kill -KILL "$(cat pid.txt)" || true
	$TRAIL report -i g.dat >/dev/null 2>err.txt || die "file not complete: $(cat err.txt)"
}

second_signal_stops_at_once() {
	printf '#!/bin/sh\ntrap "" TERM INT\necho $$ >pid2.txt\nwhile :; do sleep 1; done\n' >stubborn2.sh
	chmod +x stubborn2.sh
	$TRAIL record -q --allow-unknown -e 'app:*' -o g2.dat -- ./stubborn2.sh 2>err.txt &
	rec=$!
	wait_for '[ -s pid2.txt ]' || die "no pid"
	kill -TERM $rec
	sleep 0.2
	kill -INT $rec
	# well before the 2 s grace
	timeout 1.5 tail --pid=$rec -f /dev/null || die "a second signal did not stop trail"
	wait $rec || true
	kill -KILL "$(cat pid2.txt)" || true
}

write_error_does_not_wait_for_the_command() {
	# the file size limit as a full disk: trail stops and exits; the
	# command (a server that never ends) goes on untraced
	rc=0
	( ulimit -S -f 128; exec $TRAIL record -q -b 1M --chunk-size 4K -e 'app:*' -o full.dat -- "$EXAMPLE" --loop ) 2>err.txt &
	rec=$!
	timeout 20 tail --pid=$rec -f /dev/null || die "trail still running after a write error"
	wait $rec || rc=$?
	[ "$rc" -eq 1 ] || die "exit $rc"
	has err.txt "File too large"
	has err.txt "goes on, untraced"
	pkill -KILL -f "$EXAMPLE --loop" || true
	$TRAIL report -q -i full.dat >/dev/null 2>&1 || true
	[ "$($TRAIL report -q -i full.dat 2>/dev/null | wc -l)" -gt 0 ] || die "nothing kept"
}

exit_status_is_the_commands() {
	printf '#!/bin/sh\n"%s" 1 1\nexit 7\n' "$EXAMPLE" >seven.sh
	# (SIGUSR1: sanitizers take SIGSEGV over)
	printf '#!/bin/sh\n"%s" 1 1\nkill -USR1 $$\n' "$EXAMPLE" >segv.sh
	chmod +x seven.sh segv.sh
	expect_rc 7 $TRAIL record -q -e 'app:*' -o e.dat -- ./seven.sh
	expect_rc 138 $TRAIL record -q -e 'app:*' -o e.dat -- ./segv.sh 2>err.txt
	has err.txt "was killed by signal 10"
	expect_rc 0 $TRAIL record -q -e 'app:*' -o e.dat -- "$EXAMPLE" 1 1
	# trail's own errors come first
	expect_rc 1 $TRAIL record -q -e 'app:*' -o /nonexistent/e.dat -- ./seven.sh
}

buffer_must_fit_in_memory() {
	avail_kb=$(awk '/^MemAvailable:/ { print $2 }' /proc/meminfo)
	big=$((avail_kb / 1024 / 1024 + 8))G
	expect_rc 1 $TRAIL record -b "$big" --allow-unknown -e '*' -o m.dat -- sh -c 'touch marker' 2>err.txt
	has err.txt "buffer does not fit in memory"
	[ ! -e marker ] || die "the command ran"
	[ ! -e m.dat ] && [ ! -e m.dat.part ] || die "an output file was left"
	expect_rc 2 $TRAIL record -b 99999999999999999999 -e '*' -- "$EXAMPLE" 2>err.txt
	has err.txt "too large"
	expect_rc 2 $TRAIL record -b 1000000G -e '*' -- "$EXAMPLE" 2>err.txt
	has err.txt "too large"
}

file_size_limit_below_the_buffer() {
	# a limit under the default buffer: the recording works (the buffer
	# is memory, not the trace file)
	( ulimit -f 20000; exec $TRAIL record -e 'app:*' -o u.dat -- "$EXAMPLE" ) 2>err.txt ||
		die "failed under ulimit -f 20000: $(cat err.txt)"
	has err.txt "caps the buffer"
	[ "$($TRAIL report -q -i u.dat | wc -l)" -eq 24 ] || die "events missing"
	# a soft limit alone is lifted for the buffer, and kept for the file
	( ulimit -S -f 100; exec $TRAIL record -q -e 'app:*' -o u2.dat -- "$EXAMPLE" ) ||
		die "failed under a soft limit"
	# a limit too small for any buffer: named, and no file left
	( ulimit -f 500; exec $TRAIL record -e 'app:*' -o u3.dat -- "$EXAMPLE" ) 2>err.txt && die "ran"
	has err.txt "the file size limit (ulimit -f"
	[ ! -e u3.dat ] && [ ! -e u3.dat.part ] || die "an output file was left"
}

summary_counts_every_loss() {
	# threads that exited before the end lost events too: the closing
	# line and the live status line count them as the file does
	command -v script >/dev/null || die "script(1) missing"
	for i in 1 2 3; do
		script -qec "$TRAIL record -b 64K --chunk-size 4K -e 'app:*' -o loss.dat -- $EXAMPLE 20 2000" /dev/null >tty.txt
		said=$(sed -n 's/.*in loss.dat, \([0-9,]*\) lost.*/\1/p' tty.txt | tr -d ,)
		status=$(tr '\r' '\n' <tty.txt | sed -n 's/.*  lost \([0-9,]*\)  processes.*/\1/p' | tail -1 | tr -d ,)
		inf=$(file_lost loss.dat)
		[ -n "$said" ] || die "no summary: $(cat -v tty.txt)"
		[ "$said" -eq "$inf" ] || die "summary says $said lost, the file $inf"
		[ "$status" -eq "$inf" ] || die "status line says $status lost, the file $inf"
		[ "$inf" -gt 0 ] && return 0
	done
	die "no losses in 3 tries with a 64 KiB buffer"
}

nothing_recorded_is_an_error() {
	# a library that cannot be preloaded: refused before the start
	expect_rc 1 env TRAIL_LIBRARY=/etc/passwd $TRAIL record -e '*' -o n.dat -- "$EXAMPLE" 2>err.txt
	has err.txt "TRAIL_LIBRARY=/etc/passwd: not an ELF file"
	[ ! -e n.dat ] || die "output written"
	# a script whose programs declare no matching event
	printf '#!/bin/sh\ntrue\n' >quiet.sh
	chmod +x quiet.sh
	expect_rc 1 $TRAIL record -e '*' -o n.dat -- ./quiet.sh 2>err.txt
	has err.txt "nothing was recorded"
	# asked for with --allow-unknown: a warning, the command's status
	expect_rc 0 $TRAIL record --allow-unknown -e '*' -o n.dat -- ./quiet.sh 2>err.txt
	has err.txt "warning: nothing was recorded"
	# a static program ignores LD_PRELOAD: refused before it runs
	if printf 'int main(void){return 0;}\n' | cc -static -x c -o static - 2>/dev/null; then
		expect_rc 1 $TRAIL record --allow-unknown -e '*' -o n.dat -- ./static 2>err.txt
		has err.txt "./static is a static program: libtrail cannot be loaded into it"
	fi
	# one exec'ed by a script: the script joins, nothing of it is recorded
	if [ -x static ]; then
		printf '#!/bin/sh\nexec ./static\n' >st.sh
		chmod +x st.sh
		expect_rc 0 $TRAIL record --allow-unknown -e '*' -o n.dat -- ./st.sh 2>err.txt
		has err.txt "warning: nothing was recorded"
	fi
}

failed_start_keeps_the_old_trace() {
	# a trace of 24 events, then starts that record nothing: it stays
	$TRAIL record -q -e 'app:*' -o keep.dat -- "$EXAMPLE" >/dev/null
	cp keep.dat before.dat
	printf '#!/bin/sh\ntrue\n' >quiet.sh
	chmod +x quiet.sh
	expect_rc 1 $TRAIL record -e '*' -o keep.dat -- ./quiet.sh 2>err.txt
	has err.txt "keep.dat not written"
	cmp keep.dat before.dat || die "nothing recorded, but the old trace was replaced"
	[ ! -e keep.dat.part ] || die "keep.dat.part left behind"
	# a setuid program: the loader drops LD_PRELOAD, no process joins
	if [ "$(id -u)" -ne 0 ]; then
		echo "(setuid case: needs root to make a program set-uid to another user)"
		return 0
	fi
	printf 'int main(void){return 0;}\n' | cc -x c -o suid -
	chown nobody suid
	chmod 4755 suid
	expect_rc 1 $TRAIL record -p function -o keep.dat -- ./suid 2>err.txt
	has err.txt "no process of ./suid joined the recording"
	has err.txt "keep.dat not written"
	cmp keep.dat before.dat || die "no process joined, but the old trace was replaced"
}

exec_does_not_delay_the_end() {
	# sh exec'ing the program leaves sh's slot behind: it must not hold
	# the end of the recording for the detach timeout
	printf '#!/bin/sh\nexec "%s" 1 1\n' "$EXAMPLE" >ex.sh
	chmod +x ex.sh
	$TRAIL record -e 'app:*' -o x.dat -- ./ex.sh 2>err.txt
	hasnt err.txt "did not detach"
}

command_keeps_its_signal_dispositions() {
	# SIGPIPE is the command's to take (trail ignores it for itself)
	$TRAIL record -q --allow-unknown -e 'app:*' -o p.dat -- sh -c 'yes | head -1 >/dev/null; echo "${PIPESTATUS:-}"' 2>err.txt
	hasnt err.txt "Broken pipe"
	$TRAIL record -q --allow-unknown -e 'app:*' -o p.dat -- sh -c 'kill -PIPE $$; echo survived' >out.txt 2>&1 || true
	hasnt out.txt "survived"
}

blocking_mode() {
	# a full buffer makes writers wait instead of dropping
	$TRAIL record -q -b 64K --chunk-size 4K -e 'app:*' -o d.dat -- "$EXAMPLE" 20 2000
	[ "$(file_lost d.dat)" -gt 0 ] || die "a 64 KiB buffer lost nothing: no test"
	$TRAIL record -q --blocking-timeout 1s -b 64K --chunk-size 4K -e 'app:*' -o b.dat -- "$EXAMPLE" 20 2000
	[ "$(file_lost b.dat)" -eq 0 ] || die "blocking mode lost $(file_lost b.dat)"
	$TRAIL report -i b.dat --stat >stat.txt
	has stat.txt "blocking up to 1s"
	# a recorder that dies never leaves a writer waiting
	$TRAIL record -q --blocking-timeout inf -b 64K --chunk-size 4K -e 'app:*' -o k.dat -- "$EXAMPLE" 20 20000 &
	rec=$!
	wait_for "pgrep -P $rec >/dev/null" || die "no command"
	child=$(pgrep -P $rec)
	sleep 0.2
	kill -KILL $rec
	timeout 20 tail --pid="$child" -f /dev/null || die "the command hangs on a dead recorder"
	expect_rc 2 $TRAIL record --blocking-timeout 1s --overwrite -e 'app:*' -- "$EXAMPLE" 2>err.txt
	has err.txt "--blocking-timeout is for discard mode"
	expect_rc 2 $TRAIL record --blocking-timeout soon -e 'app:*' -- "$EXAMPLE" 2>err.txt
	has err.txt "--blocking-timeout needs a duration"
}

command_keeps_its_priority() {
	# the recorder may raise its own priority; the command runs as trail
	# was started
	# (relative to the suite's own: it may run under nice)
	local want=$(($(nice) + 5))
	[ "$want" -le 19 ] || want=19
	nice -n 5 $TRAIL record -q --allow-unknown -e 'app:*' -o pr.dat -- \
		sh -c 'nice; chrt -p $$' >out.txt 2>/dev/null
	grep -qx "$want" out.txt || die "nice value not kept (want $want): $(cat out.txt)"
	has out.txt "SCHED_OTHER"
}

t existing_output_survives_a_failed_start existing_output_survives_a_failed_start
t output_that_is_the_command_is_refused output_that_is_the_command_is_refused
t two_recorders_one_output two_recorders_one_output
t sigterm_to_the_recorder_alone sigterm_to_the_recorder_alone
t command_ignoring_the_signal_goes_on command_ignoring_the_signal_goes_on
t second_signal_stops_at_once second_signal_stops_at_once
t write_error_does_not_wait_for_the_command write_error_does_not_wait_for_the_command
t exit_status_is_the_commands exit_status_is_the_commands
t buffer_must_fit_in_memory buffer_must_fit_in_memory
t file_size_limit_below_the_buffer file_size_limit_below_the_buffer
t summary_counts_every_loss summary_counts_every_loss
t nothing_recorded_is_an_error nothing_recorded_is_an_error
t failed_start_keeps_the_old_trace failed_start_keeps_the_old_trace
t exec_does_not_delay_the_end exec_does_not_delay_the_end
t command_keeps_its_signal_dispositions command_keeps_its_signal_dispositions
t blocking_mode blocking_mode
t command_keeps_its_priority command_keeps_its_priority
