#!/usr/bin/env bash
# A traced process killed with SIGKILL mid-trace loses no committed event:
# every event whose trail() call had returned is in the file.
. "$(dirname "$0")/lib.sh"

check_killed() { # seconds
	local secs=$1
	$TRAIL record -q --chunk-size 4K -e 'kill:*' -o k.dat -- "$BUILD/tests/cli/killme" state.bin & rp=$!
	wait_for "[ -s state.bin ]" || die "no state file"
	sleep "$secs"
	kp=$(pgrep -P $rp killme || true)
	[ -n "$kp" ] || die "no traced process"
	kill -KILL "$kp"
	rc=0
	wait $rp || rc=$?
	# the command's status: killed by signal 9
	[ "$rc" -eq 137 ] || die "recorder exit $rc, wanted 137"
	# committed counts per thread, from the program's shared page
	c0=$(od -An -t u8 -N 8 state.bin | tr -d ' ')
	c1=$(od -An -t u8 -j 8 -N 8 state.bin | tr -d ' ')
	$TRAIL report -q -i k.dat >out.txt
	for th in 0 1; do
		want=$([ $th -eq 0 ] && echo "$c0" || echo "$c1")
		# events of thread th: i = 0 .. n-1, all present, none twice
		grep -o "thread=$th i=[0-9]*" out.txt | sed 's/.*i=//' | sort -n | uniq >seq.$th
		got=$(wc -l <seq.$th)
		dups=$(grep -c "thread=$th " out.txt)
		[ "$got" -eq "$dups" ] || die "thread $th: duplicated events"
		[ "$got" -ge "$want" ] || die "thread $th: $got events in file, $want committed"
		last=$(tail -1 seq.$th)
		[ "$last" -eq $((got - 1)) ] || die "thread $th: holes: $got events, last i=$last"
	done
	$TRAIL report -i k.dat --stat >stat.txt
	has stat.txt "kill"
}

killed_early() { check_killed 0.2; }
killed_later() { check_killed 0.5; } # (thousands of 4K chunks drained by then)

t sigkill_loses_no_committed_event killed_early
t sigkill_after_chunks_were_drained killed_later
