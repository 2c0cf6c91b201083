#!/usr/bin/env bash
# USDT / SDT probes: the .note.stapsdt notes of a program built with
# <sys/sdt.h> (tests/cli/usdt/app.c) and of Debian's python3, listed by
# `trail list` and recorded as sdt_PROVIDER:NAME events: arguments from
# registers, the stack and constants, two sites of one name, semaphores
# counted up while recorded; an -e that selects none lists those there.
. "$(dirname "$0")/lib.sh"

A=$BUILD/tests/cli/usdt-app

usdt_listed() {
	$TRAIL list -- "$A" >l.txt
	has l.txt "sdt_trailtest:step  [SDT event] "
	has l.txt "(semaphore) args: -4@"
	has l.txt "sdt_trailtest:konst  [SDT event] "
	has l.txt "args: -4@\$42"
	[ "$(grep -c '^sdt_trailtest:twice ' l.txt)" = 1 ] || die "twice: $(cat l.txt)"
	$TRAIL list -F -- "$A" 'sdt_trailtest:step' >f.txt
	has f.txt "field:s32 arg1;"
	has f.txt "field:u64 arg2;"
	has f.txt "field:s64 arg3;"
}

usdt_recorded() {
	[ "$("$A" 5)" = "guarded=0" ] || die "untraced: $("$A" 5)"
	# the semaphore is counted up while recorded: the program sees it
	$TRAIL record -q -e 'sdt_trailtest:*' -o u.dat -- "$A" 5 >out.txt
	has out.txt "guarded=5"
	$TRAIL report -q -i u.dat --count >c.txt
	grep -q '^ *sdt_trailtest:step  *5$' c.txt || die "step: $(cat c.txt)"
	grep -q '^ *sdt_trailtest:konst  *5$' c.txt || die "konst: $(cat c.txt)"
	grep -q '^ *sdt_trailtest:guarded  *5$' c.txt || die "guarded: $(cat c.txt)"
	grep -q '^ *sdt_trailtest:twice  *2$' c.txt || die "twice (two sites): $(cat c.txt)"
	$TRAIL report -i u.dat >r.txt
	has r.txt "sdt_trailtest:step: (work"
	has r.txt "arg1=3 "
	has r.txt "arg3=-1000000000003"
	has r.txt "sdt_trailtest:konst: (main+0x"
	has r.txt ") arg1=42"
	has r.txt "sdt_trailtest:guarded: (main+0x"
	has r.txt ") arg1=40"
	has r.txt "sdt_trailtest:twice: (main+0x"
	has r.txt ") arg1=2"
	# only the selected ones; the others' semaphores stay 0
	$TRAIL record -q -e 'sdt_trailtest:step' -o s.dat -- "$A" 3 >out.txt
	has out.txt "guarded=0"
	$TRAIL report -q -i s.dat --count >c.txt
	hasnt c.txt konst
	grep -q '^ *sdt_trailtest:step  *3$' c.txt || die "step alone: $(cat c.txt)"
}

usdt_unknown_name() {
	expect_rc 1 $TRAIL record -q -e 'sdt_trailtest:nope' -o u.dat -- "$A" 2>err.txt
	has err.txt "no event matches 'sdt_trailtest:nope'"
	has err.txt "USDT probes there:"
	has err.txt "sdt_trailtest:step"
	has err.txt "sdt_trailtest:guarded"
}

# Debian's python3 (built with --with-dtrace): its function__entry probe
# fires only while its semaphore is set
usdt_python() {
	local py
	py=$(readlink -f /usr/bin/python3)
	$TRAIL list -- "$py" >l.txt
	has l.txt "sdt_python:function__entry  [SDT event] $py:0x"
	$TRAIL record -q -e 'sdt_python:function__entry' -o p.dat -- "$py" -c 'import json; json.dumps({"a": [1, 2]})' >out.txt
	$TRAIL report -q -i p.dat --count >c.txt
	n=$(awk '$1 == "sdt_python:function__entry" {print $2}' c.txt)
	[ "${n:-0}" -ge 3 ] || die "python function__entry: $(cat c.txt)"
	# arg3 is the line number: positive
	$TRAIL report -i p.dat | grep -q 'sdt_python:function__entry: .* arg3=[1-9]' ||
		die "no line numbers: $($TRAIL report -i p.dat | tail -3)"
}

if [ ! -x "$A" ]; then
	skip usdt "no tests/cli/usdt-app: <sys/sdt.h> missing (apt-get install systemtap-sdt-dev)"
else
	t usdt_listed usdt_listed
	t usdt_recorded usdt_recorded
	t usdt_unknown_name usdt_unknown_name
fi
if [ -x /usr/bin/python3 ] && readelf -n "$(readlink -f /usr/bin/python3)" 2>/dev/null | grep -q stapsdt; then
	t usdt_python usdt_python
else
	skip usdt_python "/usr/bin/python3 has no USDT notes (Debian's python3 package has them)"
fi
