#!/usr/bin/env bash
# Conservation under stress: 4 threads x 1M events while a signal handler
# records nested events; written == in file + lost, exactly, per thread, in
# discard and in overwrite mode, with a roomy and with a tiny buffer.
. "$(dirname "$0")/../cli/lib.sh"
STRESS=$BUILD/tests/stress/stress
CHECK=$BUILD/tests/stress/stress-check

run() { # mode threads events sigperiod record-args...
	local mode=$1 th=$2 ev=$3 per=$4; shift 4
	rm -f counts.txt
	$TRAIL record -q "$@" -e 'stress:*' -o s.dat -- "$STRESS" "$th" "$ev" counts.txt "$per"
	[ -s counts.txt ] || die "the stress program did not finish"
	"$CHECK" s.dat counts.txt "$mode" >check.txt || { cat check.txt; die "check failed"; }
	grep -q '^not ok' check.txt && { cat check.txt; die "check failed"; }
	# nested (signal-level) streams must have been exercised
	$TRAIL report -i s.dat --stat >stat.txt
	cat check.txt | grep '^#' || true
}

nested_streams_present() {
	awk '$1 == "#" && $4 == "1" { found = 1 } END { exit !found }' stat.txt ||
		die "no nested (level 1) stream: $(cat stat.txt)"
}

discard_roomy() {
	run discard 4 1000000 20
	nested_streams_present
	has stat.txt "entries-in-buffer/entries-written"
}

discard_tiny_buffer() {
	run discard 4 1000000 5 -b 64K --chunk-size 4K
	grep -q "dropped: buffer full" stat.txt || die "a 64 KiB buffer dropped nothing?"
}

overwrite_tiny_buffer() {
	run overwrite 4 1000000 5 --overwrite -b 128K --chunk-size 4K
	grep -q "overwritten" stat.txt || die "nothing overwritten?"
}

overwrite_roomy() {
	run overwrite 4 200000 20 --overwrite
}

blocking_tiny_buffer() {
	# blocking mode: the same tiny buffer, no outermost event dropped (the
	# signal handlers' nested writes never wait, and may still drop)
	run discard 4 1000000 5 --blocking-timeout inf -b 64K --chunk-size 4K
	awk '$1 == "#" && $4 == "0" && $6 != "0" { bad = 1 } END { exit bad }' stat.txt ||
		die "an outermost stream lost events: $(cat stat.txt)"
}

many_threads() {
	run discard 32 50000 10 -b 1M --chunk-size 4K
}

t conservation_discard_4x1M_with_signals discard_roomy
t conservation_discard_tiny_buffer discard_tiny_buffer
t conservation_overwrite_tiny_buffer overwrite_tiny_buffer
t conservation_overwrite_roomy overwrite_roomy
t conservation_32_threads many_threads
t conservation_blocking_tiny_buffer blocking_tiny_buffer
