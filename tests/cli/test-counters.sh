#!/usr/bin/env bash
# record --context counter:NAME (LTTng's add-context perf:thread:NAME):
# the thread's perf counters after each event, as synthetic:perf_counters
# records. Known deltas (tests/cli/ctr/ctrprog.c: N fresh pages touched
# between app:before and app:after, 2N in a second thread, each thread's
# counters its own); counters this machine has not, or names that are no
# counter, refused before anything runs.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/ctrprog

# each app:* record followed by its thread's counters: "TID EVENT FAULTS"
faults() {
	$TRAIL report -i "$1" | awk '
		/ app:(before|after): / { split($1, a, "-"); tid = a[length(a)]; ev = $4; next }
		/ synthetic:perf_counters: / { split($1, a, "-"); if (a[length(a)] == tid && ev != "") {
			for (i = 1; i <= NF; i++) if ($i ~ /^page_faults=/) { sub(/page_faults=/, "", $i); print tid, ev, $i }
			ev = "" } }'
}

page_faults_in_between() {
	fresh_registry
	$TRAIL record -q -e 'app:*' --context counter:page-faults,counter:task-clock -o c.dat -- "$PROG" 256
	faults c.dat >f.txt
	[ "$(wc -l <f.txt)" = 4 ] || die "$(cat f.txt; $TRAIL report -i c.dat | head)"
	# per thread: after - before >= the pages touched, a thread's own
	awk '$2 == "app:before:" { b[$1] = $3 } $2 == "app:after:" { print $3 - b[$1] }' f.txt | sort -n >d.txt
	[ "$(sed -n 1p d.txt)" -ge 256 ] && [ "$(sed -n 2p d.txt)" -ge 512 ] || die "deltas $(cat d.txt)"
	# each thread's own counts: the second thread starts from its own
	# first read, not from the first thread's 256 faults and more
	[ "$(awk '$2 == "app:before:" && $3 >= 256' f.txt | wc -l)" = 0 ] || die "$(cat f.txt)"
	# task-clock counts on
	$TRAIL report -i c.dat | grep -qE 'synthetic:perf_counters: page_faults=[0-9]+ task_clock=[1-9][0-9]*$' ||
		die "$($TRAIL report -i c.dat | head -5)"
	# LTTng's spelling
	$TRAIL record -q -e 'app:after' --context perf:thread:minor-faults -o m.dat -- "$PROG" 16
	[ "$($TRAIL report -i m.dat | grep -c 'synthetic:perf_counters: minor_faults=')" = 2 ] || die "minor-faults"
}

# a --probe's events get them too (no -e needed): probed-O0's
# load_config, each call followed by its counters
probe_events() {
	fresh_registry
	expect_rc 7 $TRAIL record -q --probe 'p:c/lc load_config' --context counter:task-clock -o p.dat \
		-- "$BUILD/tests/cli/probed-O0" 2 >/dev/null
	$TRAIL report -i p.dat | grep -v '^#' >r.txt
	[ "$(grep -c ' c:lc: ' r.txt)" -ge 1 ] || die "$(head r.txt)"
	[ "$(grep -c ' c:lc: ' r.txt)" = "$(grep -c 'synthetic:perf_counters: task_clock=' r.txt)" ] ||
		die "$(grep -v '^#' r.txt | head)"
}

bad_contexts() {
	fresh_registry
	expect_rc 2 $TRAIL record -q -e 'app:*' --context counter:nope -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'Unknown counter'
	[ "$(caret_col err.txt)" = 8 ] || die "$(cat err.txt)"
	expect_rc 2 $TRAIL record -q -e 'app:*' --context page-faults -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'a context is counter:NAME (or perf:thread:NAME)'
	expect_rc 2 $TRAIL record -q -e 'app:*' --context counter:task-clock,counter:task-clock -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'This counter is already read'
	expect_rc 2 $TRAIL record -q --context counter:task-clock -p function -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--context reads counters at the events of the -e and --probe options'
	# a hardware counter: read where the PMU is, refused with the cause
	# where it is not (this kind of virtual machine)
	if $TRAIL record -q -e 'app:after' --context counter:instructions -o h.dat -- "$PROG" 1 2>err.txt; then
		$TRAIL report -i h.dat | grep -qE 'perf_counters: instructions=[1-9]' || die "instructions not counted"
	else
		has err.txt 'counter:instructions: not on this machine (no hardware PMU'
	fi
	[ ! -e x.dat ] || die "a refused recording wrote x.dat"
}

t page_faults_in_between page_faults_in_between
t probe_events probe_events
t bad_contexts bad_contexts
