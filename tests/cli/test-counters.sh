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

# function_graph --counters: each call's deltas (tests/cli/ctr/callprog.c:
# work() calls fill(N pages) then idle(); 2N pages in a second thread),
# in report's tree, --summary's columns and Perfetto's tracks
call_counters() {
	fresh_registry
	$TRAIL record -q -p function_graph --counters page-faults,task-clock -o g.dat \
		-- "$BUILD/tests/cli/callprog" 256
	$TRAIL report -i g.dat >r.txt
	# fill's exit: its diff line before its closing brace; one a thread
	awk '/diff: page-faults=/ { d = $0 } /} \/\* fill \*\// { sub(/.*page-faults=\+/, "", d);
		sub(/ .*/, "", d); print d }' r.txt | sort -n >fill.txt
	[ "$(wc -l <fill.txt)" = 2 ] || die "$(grep -B1 'fill' r.txt)"
	[ "$(sed -n 1p fill.txt)" -ge 256 ] && [ "$(sed -n 1p fill.txt)" -lt 512 ] &&
		[ "$(sed -n 2p fill.txt)" -ge 512 ] || die "fill's page faults: $(cat fill.txt)"
	# idle touches no page: a leaf with its diff on its line
	grep -E ' idle\(\); /\* diff: page-faults=\+[0-9]+ task-clock=\+[0-9]+\.[0-9]{3}us \*/$' r.txt >idle.txt ||
		die "$(grep idle r.txt)"
	[ "$(wc -l <idle.txt)" = 2 ] && ! grep -qE 'page-faults=\+[0-9]{2,}' idle.txt || die "$(cat idle.txt)"
	# the summary: a column a counter, the calls' deltas summed
	$TRAIL report -i g.dat --summary >s.txt
	head -1 s.txt | grep -qE 'Maximum +page-faults +task-clock +Function' || die "$(head -2 s.txt)"
	awk '$NF == "fill" { print $(NF-3) }' s.txt >sf.txt
	[ "$(cat sf.txt)" -ge 768 ] || die "$(cat s.txt)"
	awk '$NF == "idle" { print $(NF-3) }' s.txt >si.txt
	[ "$(cat si.txt)" -lt 16 ] || die "$(cat s.txt)"
	# Perfetto: a counter track a counter a thread; the deltas on the
	# slices
	if command -v protoc >/dev/null; then
		$TRAIL export -i g.dat --format perfetto -o g.pftrace
		protoc --proto_path="$SRC/tests/export" --decode=perfetto.protos.Trace \
			"$SRC/tests/export/perfetto_subset.proto" <g.pftrace >g.txt
		[ "$(grep -c 'counter {' g.txt)" = 4 ] || die "$(grep -c 'counter {' g.txt) tracks"
		grep -A2 'name: "page-faults"' g.txt | grep -q 'parent_uuid' || die "no page-faults track"
		grep -q 'unit: UNIT_TIME_NS' g.txt || die "task-clock's unit"
		[ "$(grep -c 'type: TYPE_COUNTER' g.txt)" -ge 20 ] || die "counter values"
		grep -q 'name_iid' g.txt || die "annotations"
	else
		die "protoc missing (protobuf-compiler: .ci/run installs it)"
	fi
	# CTF: the records, fields and all
	$TRAIL export -i g.dat --format ctf -o g.ctf
	babeltrace2 g.ctf 2>/dev/null | grep -q 'synthetic:funcgraph_counters: .*page_faults = ' ||
		die "CTF: $(babeltrace2 g.ctf 2>&1 | head -3)"
}

bad_call_counters() {
	fresh_registry
	expect_rc 2 $TRAIL record -q -p function --counters page-faults -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--counters reads counters at each call'"'"'s entry and exit: give -p function_graph'
	expect_rc 2 $TRAIL record -q -p function_graph --counters page-faults,bogus -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'Unknown counter'
	[ "$(caret_col err.txt)" = 12 ] || die "$(cat err.txt)"
	expect_rc 2 $TRAIL record -q -p function_graph --counters page-faults --graph-time-thresh 10us \
		-o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'does not go with --graph-time-thresh'
	[ ! -e x.dat ] || die "a refused recording wrote x.dat"
}

t page_faults_in_between page_faults_in_between
t call_counters call_counters
t bad_call_counters bad_call_counters
t probe_events probe_events
t bad_contexts bad_contexts
