#!/usr/bin/env bash
# A trace as a stream: record -o - writes it on standard output (a pipe,
# a socket, a file: written in order, never sought), the command's own
# output going to standard error; report -i - (every view's) reads one
# from standard input; a FIFO as -o and -i. A stream cut anywhere is read
# up to its last whole section (tests/cli/core/coreprog.c's 100 + 50
# records), the cut said as damage, never a crash.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/coreprog

pipe_roundtrip() {
	fresh_registry
	$TRAIL record -q -o - -e 'app:*' -- "$PROG" 100 hold /dev/null 2>err.txt | tee s.dat |
		$TRAIL report -i - >a.txt
	# the program's "ready": on standard error, not in the trace
	has err.txt ready
	$TRAIL report -i s.dat >b.txt
	# (the header names the input: "-" or the file)
	diff <(sed 1,2d a.txt) <(sed 1,2d b.txt) >d.txt || die "the stream reads otherwise than its copy: $(head -5 d.txt)"
	sed -n 2p a.txt | grep -q '^# trail trace - of: ' || die "$(sed -n 2p a.txt)"
	[ "$(grep -c ' app:tick: ' a.txt)" = 100 ] && [ "$(grep -c ' app:tock: ' a.txt)" = 50 ] ||
		die "$(grep -c ' app:t' a.txt) records"
	# export and hist read it too
	$TRAIL export -i - --format chrome -o s.json <s.dat
	grep -q '"app:tick"' s.json || die "export -i -"
	# a FIFO both ways
	mkfifo f
	$TRAIL record -q -o f -e 'app:*' -- "$PROG" 100 hold /dev/null 2>/dev/null &
	local rp=$!
	timeout 60 $TRAIL report -i - <f >c.txt || die "report of the FIFO"
	wait $rp || die "record into the FIFO"
	[ "$(grep -c ' app:t' c.txt)" = 150 ] || die "FIFO: $(grep -c ' app:t' c.txt) records"
}

# cut after every 7th byte (and each of the first 128): what is read is a
# subset of the whole, growing with the cut; the cut is said
cut_anywhere() {
	fresh_registry
	$TRAIL record -q -o - -e 'app:*' -- "$PROG" 100 hold /dev/null 2>/dev/null >s.dat
	$TRAIL report -i s.dat | grep ' app:t' | sed 's/^.*\(app:t[io]ck: i=[0-9]*\)$/\1/' | sort >all.txt
	local size k rc n last=0 said=0
	size=$(stat -c %s s.dat)
	for k in $(seq 0 127) $(seq 128 7 "$size") "$size"; do
		rc=0
		head -c "$k" s.dat | $TRAIL report -i - >r.txt 2>e.txt || rc=$?
		[ $rc -lt 128 ] || die "cut at $k: status $rc"
		grep ' app:t' r.txt | sed 's/^.*\(app:t[io]ck: i=[0-9]*\)$/\1/' | sort >p.txt
		comm -23 p.txt all.txt >x.txt
		[ ! -s x.txt ] || die "cut at $k: records the whole has not: $(head -2 x.txt)"
		n=$(wc -l <p.txt)
		[ "$n" -ge "$last" ] || die "cut at $k: $n records, $last at a shorter cut"
		last=$n
		[ $k = "$size" ] || ! grep -q 'file truncated\|too short' e.txt || said=$((said + 1))
	done
	[ "$last" = 150 ] || die "the whole stream: $last records"
	[ $said -gt 100 ] || die "cuts said as damage: $said"
}

# standard output or input a terminal: refused (script(1) gives one)
terminals() {
	command -v script >/dev/null || die "script missing (util-linux)"
	script -qec "$TRAIL record -q -o - -e 'app:*' -- $PROG 1 hold /dev/null" /dev/null >t.txt 2>&1 || true
	has t.txt "-o -: standard output is a terminal"
	script -qec "$TRAIL report -i -" /dev/null </dev/null >t.txt 2>&1 || true
	has t.txt "-i -: standard input is a terminal"
}

t pipe_roundtrip pipe_roundtrip
t cut_anywhere cut_anywhere
t terminals terminals
