#!/usr/bin/env bash
# Event filters in the kernel's grammar on a recorded file: report -F and
# export --filter on probe events of known values (counts checked against
# what the sample program does), strings and globs, the common fields,
# several -F, and the errors with their carets.
. "$(dirname "$0")/lib.sh"

P=$BUILD/tests/cli/probed-O0
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

setup() {
	rm -rf reg
	mkdir -m 700 reg
	# per iteration: load_config 3 times (path "/etc/app.conf" flags 42,
	# a faulting path flags 1, NULL flags 2); parse_int(21), nest(3)
	# calling parse_int(3)
	expect_rc 7 $TRAIL record -q -o t.dat \
		--probe 'p:x/cfg load_config path=+0($arg1):string flags=$arg2:s32' \
		--probe 'p:x/pi parse_int v=$arg1:s32' --probe 'r:x/po parse_int ret=$retval:s32' \
		-- "$P" 5 >/dev/null
}

count() { # report options... -> the number of event lines
	$TRAIL report -q -i t.dat "$@" | grep -c ': x:' || true
}

report_filters() {
	setup
	[ "$(count)" = 35 ] || die "unfiltered: $(count)"
	[ "$(count -F 'x:pi: v == 21')" = 5 ] || die "v == 21: $(count -F 'x:pi: v == 21')"
	[ "$(count -F 'x:pi: v != 21')" = 5 ] || die "v != 21"
	[ "$(count -F 'x:pi: v > 3 || v < 3')" = 5 ] || die "||"
	[ "$(count -F 'x:pi: !(v == 3) && v >= 21')" = 5 ] || die "! &&"
	[ "$(count -F 'x:pi')" = 10 ] || die "an event alone"
	[ "$(count -F 'x:po: ret == 6' -F 'x:pi: v == 3')" = 10 ] || die "two -F"
	[ "$(count -F 'x:p*: common_pid > 0')" = 20 ] || die "a glob, common_pid"
	[ "$(count -F 'x:p*: common_comm == "probed-O0"')" = 20 ] || die "common_comm"
	[ "$(count -F 'x:cfg: path ~ "/etc/*"')" = 5 ] || die "string glob"
	[ "$(count -F 'x:cfg: path == "/etc/app.conf" && flags & 0x2')" = 5 ] || die "& on a number"
	[ "$(count -F 'x:cfg: flags & 1')" = 5 ] || die "flags & 1"
	[ "$(count -F 'x:cfg: (flags == 1 || flags == 2) && path == ""')" = 10 ] ||
		die "faulted strings are empty: $(count -F 'x:cfg: (flags == 1 || flags == 2) && path == ""')"
	# the lines are report's own, filtered
	$TRAIL report -q -i t.dat >all.txt
	$TRAIL report -q -i t.dat -F 'x:pi: v == 3' >some.txt
	diff <(grep 'x:pi: .* v=3$' all.txt) some.txt
	# export: the same, spelled --filter
	$TRAIL export -q -F chrome -i t.dat -o all.json
	$TRAIL export -q -F chrome -i t.dat --filter 'x:po: ret == 42' -o e.json
	[ "$(grep -o '"ret": *42' e.json | wc -l)" = 5 ] || die "export --filter: $(head -c 300 e.json)"
	[ "$(grep -o '"ret": *6' e.json | wc -l)" = 0 ] || die "export --filter kept ret=6"
	[ "$(grep -o '"ret": *6' all.json | wc -l)" = 5 ] || die "export without a filter: $(grep -o '"ret[^,]*' all.json | head -3)"
}
t report_filters report_filters

# the errors: the kernel's message, the caret under the position (the
# column counted in the whole -F text), exit 1 (2 for a malformed -F)
filter_errors() {
	setup
	while IFS='|' read -r rc text msg col; do
		expect_rc "$rc" $TRAIL report -q -i t.dat -F "$text" >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$text': caret at $caret, want $col: $(cat err.txt)"
	done <<'T'
1|x:pi: vv == 1|Field not found|6
1|x:pi: v == 1 && (v > 2|Unbalanced parens|16
1|x:pi: v ~ "a*"|Illegal operation for field type|8
1|x:cfg: path < "a"|Illegal operation for field type|12
1|x:pi: v == 0x|Illegal integer value|11
1|x:pi: v =< 2|Invalid operator|8
1|x:pi: v == 1 v|Meaningless filter expression|13
1|x:cfg: path == "abc|Missing quote|15
2|x:pi v == 1|expected EVENT or 'EVENT: FILTER'|4
2|x:[pi: v == 1|set without its|2
T
}
t filter_errors filter_errors


# ------------------------------------------------- filters at the source
EX=$BUILD/examples/example
P2=$BUILD/tests/cli/probed-O2

# record -f keeps exactly what report -F keeps of an unfiltered recording
# of the same run (the example's requests are deterministic), for static
# events, strings and the common fields, and for probe events: entry and
# return probes both filtered (the general way, not the kept pair)
record_filters() {
	rm -rf reg; mkdir -m 700 reg
	$TRAIL record -q -e app:request -e app:reply -o all.dat -- "$EX" >/dev/null
	while IFS='|' read -r ev f; do
		$TRAIL record -q -e "$ev" -f "$f" -o f.dat -- "$EX" >/dev/null
		$TRAIL report -i f.dat | grep -qxF "# filter: $ev: $f" || die "no '# filter:' line"
		$TRAIL report -q -i f.dat | grep ": $ev:" | sed 's/^.*: '"$ev"': //' >got.txt
		$TRAIL report -q -i all.dat -F "$ev: $f" | grep ": $ev:" | sed 's/^.*: '"$ev"': //' >want.txt
		[ -s want.txt ] || [ "$f" = 'fd < 0' ] || die "$ev: $f: nothing offline either"
		sort got.txt >g; sort want.txt >w
		diff -u w g >/dev/null || die "$ev -f '$f': $(diff -u w g | head -20)"
	done <<'T'
app:request|bytes > 1024 && path ~ "/static/*"
app:request|bytes >= 4096
app:request|path ~ "/etc/*" || fd == 12
app:request|!(fd > 100) && bytes & 0x400
app:request|common_comm == "worker-1"
app:request|common_pid > 1 && fd != 11 && common_tid > 0
app:request|fd < 0
app:reply|status != 200 || cached == 1
T
	expect_rc 7 $TRAIL record -q -o p.dat \
		--probe 'p:x/pi parse_int v=$arg1:s32' --probe 'r:x/po parse_int ret=$retval:s32' \
		-e x:pi -f 'v == 3' -e x:po -f 'ret > 10' -- "$P" 5 >/dev/null
	$TRAIL report -q -i p.dat >r.txt
	[ "$(grep -c 'x:pi: .* v=3$' r.txt)" = 5 ] || die "x:pi v == 3: $(grep -c x:pi r.txt)"
	[ "$(grep -c 'x:pi:' r.txt)" = 5 ] || die "x:pi: other values passed"
	[ "$(grep -c 'x:po: .* ret=42$' r.txt)" = 5 ] || die "x:po ret > 10: $(grep x:po r.txt | head -3)"
	[ "$(grep -c 'x:po:' r.txt)" = 5 ] || die "x:po: ret=6 passed"
}
t record_filters record_filters

# bad -f: the kernel's messages with the caret in the filter's text,
# checked before anything runs (exit 1), -f without an -e (exit 2)
record_filter_errors() {
	rm -rf reg t.dat; mkdir -m 700 reg
	while IFS='|' read -r rc f msg col; do
		expect_rc "$rc" $TRAIL record -q -e app:request -f "$f" -o t.dat -- "$EX" >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$f': caret at $caret, want $col: $(cat err.txt)"
		[ ! -e t.dat ] || die "'$f': a file was written"
	done <<'T'
1|bytes > 4096 && pth ~ "/var/*"|Field not found|16
1|fd ~ "1*"|Illegal operation for field type|3
1|path > "a"|Illegal operation for field type|5
1|(fd == 1|Unbalanced parens|0
1|common_timestamp > 5|common_timestamp is not known where the event fires|0
1|fd == 1 && common_timestamp > 5|common_timestamp is not known|11
T
	expect_rc 2 $TRAIL record -q -f 'fd > 1' -e app:request -o t.dat -- "$EX" 2>err.txt
	has err.txt 'give that -e first'
	expect_rc 2 $TRAIL record -q -e app:request -f 'fd > 1' -f 'fd < 9' -o t.dat -- "$EX" 2>err.txt
	has err.txt 'has a filter already'
	# a probe event's fields are checked too
	expect_rc 1 $TRAIL record -q --probe 'p:x/pi parse_int v=$arg1:s32' -e x:pi -f 'w == 1' \
		-o t.dat -- "$P" 2>err.txt
	has err.txt 'filter for x:pi: Field not found'
}
t record_filter_errors record_filter_errors

# seed 002's "multiple active traces, different filters": two recordings
# of one running process (4 threads) with their own filter on one probe
# event; a third without a filter, started after they left, gets every
# call again (removing a filter restores the event); a filter that does
# not compile for the process's events is refused before anything changes
two_sessions_filters() {
	rm -rf reg; mkdir -m 700 reg
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 60 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	expect_rc 1 $TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -e x:in -f 'nope == 1' \
		-o bad.dat -P $pid 2>err.txt
	has err.txt 'Field not found'
	$TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -e x:in -f 'v < 100' -o a.dat -P $pid &
	ra=$!
	$TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -e x:in -f 'v >= 1000 || v == 7' \
		-o b.dat -P $pid &
	rb=$!
	wait_for "[ \$(grep -c trail-arena /proc/$pid/maps) -ge 2 ]" || die "never attached twice"
	sleep 0.3
	kill -INT $ra $rb; wait $ra $rb
	wait_for "[ \$(grep -c trail-arena /proc/$pid/maps) -eq 0 ]" || die "never detached"
	$TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' -e x:in -o c.dat -P $pid &
	rc=$!
	wait_for "[ \$(grep -c trail-arena /proc/$pid/maps) -ge 1 ]" || die "c never attached"
	sleep 0.3
	kill -INT $rc; wait $rc
	kill $pid; wait $pid 2>/dev/null || true
	for s in a b c; do
		$TRAIL report -q -i $s.dat | grep 'x:in:' | sed 's/.*v=//' >$s.txt
		[ "$(wc -l <$s.txt)" -gt 500 ] || die "$s: $(wc -l <$s.txt) records"
	done
	awk '$1 >= 100 { bad++ } END { exit bad > 0 }' a.txt || die "a: a value >= 100 passed"
	awk '$1 < 1000 && $1 != 7 { bad++ } END { exit bad > 0 }' b.txt || die "b: $(sort -n b.txt | head -3)"
	grep -qx 7 b.txt || die "b: no 7"
	# the spinner's values are 0..1023: c has all of them, unfiltered
	[ "$(awk '$1 >= 100 && $1 < 1000' c.txt | wc -l)" -gt 0 ] || die "c: still filtered"
	[ "$(awk '$1 < 100' c.txt | wc -l)" -gt 0 ] || die "c: still filtered (b's)"
}
t two_sessions_filters two_sessions_filters

# an eprobe's `if FILTER`: on the source event's fields, checked against
# them with a caret, kept in the normalized definition
eprobe_filter() {
	rm -rf reg; mkdir -m 700 reg
	$TRAIL record -q -e app:request -o all.dat -- "$EX" >/dev/null
	$TRAIL record -q --probe 'e:x/big app/request p=$path:string b=$bytes if bytes > 1024 && path ~ "/static/*"' \
		-e x:big -o e.dat -- "$EX" >/dev/null
	$TRAIL report -q -i e.dat | grep ': x:big:' | sed 's/.*: x:big: //' >got.txt
	$TRAIL report -q -i all.dat -F 'app:request: bytes > 1024 && path ~ "/static/*"' |
		grep ': app:request:' | sed 's/.*fd=[0-9]* path=\(".*"\) bytes=\(.*\)$/p=\1 b=\2/' >want.txt
	[ -s want.txt ] || die "nothing to compare"
	diff -u want.txt got.txt
	$TRAIL probe 'e:x/e2 app/request fd=$fd if fd > 100'
	$TRAIL probe -l >l.txt
	has l.txt 'e:x/e2 app.request fd=$fd if fd > 100'
	expect_rc 1 $TRAIL record -q --probe 'e:x/bad app/request p=$path:string if byts > 1' \
		-e x:bad -o t.dat -- "$EX" 2>err.txt
	has err.txt 'Field not found'
	caret=$(caret_col err.txt)
	[ "$caret" = 38 ] || die "caret at $caret: $(cat err.txt)"
	expect_rc 2 $TRAIL probe 'e:x/bad app/request if' 2>err.txt
	has err.txt 'Meaningless filter expression'
}
t eprobe_filter eprobe_filter

# objtrace (seed 001): an entry probe adds handle()'s argument to the
# objects; every traced entry that gets one in an argument register is
# recorded as "func <-parent object:0x... value:0x..." with the u32 at
# offset 0 (struct req's id, 42). handle() runs with &r and &bad each
# call: 2 objects, each seen at each of the 3 calls; with :1 only the
# first object is added.
objtrace_trigger() {
	rm -rf reg; mkdir -m 700 reg
	expect_rc 7 $TRAIL record -q -o o.dat -p function --probe 'p:x/h handle r=$arg1:x64' \
		-T 'x:h:objtrace:add:r,0:u32' -- "$P" 3 >/dev/null
	$TRAIL report -q -i o.dat >o.txt
	grep -o 'x:h: (handle+0x0/0x[0-9a-f]*) r=0x[0-9a-f]*' o.txt | sed 's/.* r=//' | sort -u >objs.txt
	[ "$(wc -l <objs.txt)" = 2 ] || die "want 2 objects: $(cat objs.txt)"
	# (other entries may get the address too: a stale register of a
	# function that runs later, a sanitizer's destructor say)
	grep 'ftrace:objtrace: handle <-' o.txt >ot.txt
	[ "$(wc -l <ot.txt)" = 6 ] || die "want 6 objtrace records: $(cat ot.txt)"
	grep -v 'ftrace:objtrace: handle <-main object:0x[0-9a-f]* value:0x2a$' ot.txt && die "layout"
	sed 's/.*object:\(0x[0-9a-f]*\) .*/\1/' ot.txt | sort -u | diff -u objs.txt -
	grep 'ftrace:objtrace: ' o.txt | sed 's/.*object:\(0x[0-9a-f]*\) .*/\1/' | sort -u |
		diff -u objs.txt - # (only the objects added)
	expect_rc 7 $TRAIL record -q -o o1.dat -p function --probe 'p:x/h handle r=$arg1:x64' \
		-T 'x:h:objtrace:add:r,0:u32:1' -- "$P" 3 >/dev/null
	$TRAIL report -q -i o1.dat | grep 'ftrace:objtrace: handle <-' >ot1.txt
	[ "$(wc -l <ot1.txt)" = 3 ] || die "with :1, want 3 records: $(cat ot1.txt)"
	[ "$(sed 's/.*object:\(0x[0-9a-f]*\) .*/\1/' ot1.txt | sort -u | wc -l)" = 1 ] || die "one object"
	# without objtrace, no such record
	expect_rc 7 $TRAIL record -q -o o2.dat -p function --probe 'p:x/h handle r=$arg1:x64' -- "$P" 3 >/dev/null
	$TRAIL report -q -i o2.dat | grep -c 'ftrace:objtrace' >n.txt || true
	[ "$(cat n.txt)" = 0 ] || die "objtrace records without the trigger"
	# grammar and fields, with carets
	while IFS='|' read -r trig msg col rc; do
		expect_rc "$rc" $TRAIL record -q -o e.dat -p function --probe 'p:x/h handle r=$arg1:x64 s=+0($arg1):string' \
			-T "$trig" -- "$P" 1 >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$trig': caret at $caret, want $col: $(cat err.txt)"
	done <<'T'
x:h:objtrace:frob:r|Invalid objtrace command|13|2
x:h:objtrace:add:nope|Couldn't find field|17|1
x:h:objtrace:add:s|objtrace takes an integer field|17|1
x:h:objtrace:add:r,zz|Invalid offset|19|2
x:h:objtrace:add:r,8:u12|Invalid type|21|2
x:h:objtrace:add|Missing FIELD|16|2
T
}
t objtrace_trigger objtrace_trigger

# objtrace without a function tracer: no entry ever checks the objects, so
# it would do nothing; refused before anything runs (was accepted)
objtrace_needs_tracer() {
	rm -rf reg; mkdir -m 700 reg
	rm -f on.dat
	for trig in 'x:h:objtrace:add:r,0:u32' 'objtrace:remove:r'; do
		expect_rc 2 $TRAIL record -q -o on.dat -e x:h --probe 'p:x/h handle r=$arg1:x64' \
			-T "$trig" -- "$P" 1 >/dev/null 2>err.txt
		has err.txt "trail record: -T '$trig': objtrace follows objects into the function tracer's entries: give -p function or -p function_graph"
		[ ! -e on.dat ] || die "'$trig': a recording was made"
	done
}
t objtrace_needs_tracer objtrace_needs_tracer
