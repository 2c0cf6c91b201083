#!/usr/bin/env bash
# trail hist on recorded files: the kernel's hist format, counts and sums
# against those computed here from report's lines, the modifiers (.log2,
# .buckets, .hex, .execname, .percent), sort, size and Dropped, `if`
# filters, several events, and the grammar errors with their carets.
. "$(dirname "$0")/lib.sh"

P=$BUILD/tests/cli/probed-O0
P2=$BUILD/tests/cli/probed-O2
EX=$BUILD/examples/example
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

# hitcount and sum of bytes per path, from report's lines, against hist's
counts_and_sums() {
	fresh_registry
	$TRAIL record -q -e 'app:*' -o t.dat -- "$EX" 3 300 >/dev/null
	$TRAIL report -q -i t.dat | grep ': app:request:' |
		sed -E 's/.* path="([^"]*)" bytes=(0x[0-9a-f]+)$/\1 \2/' |
		while read -r path bytes; do echo "$path $((bytes))"; done |
		awk '{ n[$1]++; b[$1] += $2 } END { for (p in n) printf "%s %d %d\n", p, n[p], b[p] }' |
		sort >want.txt
	$TRAIL hist -i t.dat -e app:request 'hist:keys=path:vals=hitcount,bytes:sort=bytes.descending' >h.txt
	head -5 h.txt >head.txt
	cat >head.want <<'W'
# event histogram
#
# trigger info: hist:keys=path:vals=hitcount,bytes:sort=bytes.descending:size=2048 [active]
#

W
	diff -u head.want head.txt
	sed -nE 's/^\{ path: ([^ ]*) +\} hitcount: +([0-9]+)  bytes: +([0-9]+)$/\1 \2 \3/p' h.txt | sort >got.txt
	[ -s got.txt ] || die "no entries: $(cat h.txt)"
	diff -u want.txt got.txt
	# sorted by bytes, descending
	sed -nE 's/.* bytes: +([0-9]+)$/\1/p' h.txt >b.txt
	sort -rn b.txt | diff -u - b.txt
	total=$(awk '{ s += $2 } END { print s }' want.txt)
	has h.txt "    Hits: $total"
	has h.txt "    Entries: $(wc -l <want.txt)"
	has h.txt '    Dropped: 0'
}
t counts_and_sums counts_and_sums

# modifiers on known values: parse_int(21) and parse_int(3) per iteration
modifiers() {
	fresh_registry
	expect_rc 7 $TRAIL record -q -o p.dat --probe 'p:x/pi parse_int v=$arg1:s32' \
		--probe 'p:x/cfg load_config flags=$arg2:s32' -- "$P" 6 >/dev/null
	$TRAIL hist -i p.dat -e x:pi 'keys=v.log2:sort=v' >l.txt
	grep -E '^\{ v: ~ 2\^2  \} hitcount: +6  \|#+ *\|$' l.txt >/dev/null || die "log2: $(cat l.txt)"
	grep -E '^\{ v: ~ 2\^5  \} hitcount: +6  \|#{40}\|$' l.txt >/dev/null || die "log2 21: $(cat l.txt)"
	[ "$(grep -n '2^2 ' l.txt | cut -d: -f1)" -lt "$(grep -n '2^5 ' l.txt | cut -d: -f1)" ] || die "sort=v"
	$TRAIL hist -i p.dat -e x:pi 'keys=v.buckets=10:sort=v.buckets=10.descending' >bk.txt
	has bk.txt '{ v: ~ 20-29 } hitcount:          6'
	has bk.txt '{ v: ~ 0-9 } hitcount:          6'
	[ "$(grep -n '20-29' bk.txt | cut -d: -f1)" -lt "$(grep -n '0-9 ' bk.txt | cut -d: -f1)" ] || die "descending"
	$TRAIL hist -i p.dat -e x:pi 'keys=v.hex' >x.txt
	has x.txt '{ v: 15 } hitcount:          6'
	$TRAIL hist -i p.dat -e x:pi 'keys=common_pid.execname:vals=hitcount.percent' >e.txt
	grep -E '^\{ common_pid: probed-O0 +\[ +[0-9]+\] \} hitcount \(%\):100\.00$' e.txt >/dev/null ||
		die "execname, percent: $(cat e.txt)"
	$TRAIL hist -i p.dat -e x:cfg 'keys=flags:vals=hitcount.percent if flags != 42' >f.txt
	has f.txt '{ flags:          1 } hitcount (%): 50.00'
	has f.txt '    Hits: 12'
	# several events: one histogram each, named
	$TRAIL hist -i p.dat -e 'x:*' 'keys=common_pid' >m.txt
	has m.txt '# x:pi'
	has m.txt '# x:cfg'
	[ "$(grep -c '^# event histogram' m.txt)" = 2 ] || die "$(cat m.txt)"
}
t modifiers modifiers

# a bounded table: 1024 distinct values into 128 entries; the others are
# Dropped, and Hits + Dropped are the records
size_and_dropped() {
	fresh_registry
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 60 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	record_running $pid --probe 'p:x/in parse_int v=$arg1:s64' -o s.dat
	kill $pid; wait $pid 2>/dev/null || true
	n=$($TRAIL report -i s.dat --count | awk '$1 == "x:in" { print $2 }')
	$TRAIL hist -i s.dat -e x:in 'keys=v:size=100' >s.txt
	has s.txt ':size=128 [active]'
	has s.txt '    Entries: 128'
	hits=$(sed -n 's/^    Hits: //p' s.txt)
	dropped=$(sed -n 's/^    Dropped: //p' s.txt)
	[ "$dropped" -gt 0 ] && [ $((hits + dropped)) = "$n" ] || die "hits $hits + dropped $dropped != $n"
	[ "$(grep -c '^{ v:' s.txt)" = 128 ] || die "$(grep -c '^{ v:' s.txt) lines"
}
t size_and_dropped size_and_dropped

# errors: the message and the caret under the position in the spec
hist_errors() {
	fresh_registry
	expect_rc 7 $TRAIL record -q -o p.dat --probe 'p:x/pi parse_int v=$arg1:s32' -- "$P" 1 >/dev/null
	while IFS='|' read -r spec msg col; do
		expect_rc 1 $TRAIL hist -i p.dat -e x:pi "$spec" >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$spec': caret at $caret, want $col: $(cat err.txt)"
	done <<'T'
keys=w|Couldn't find field|5
hist:keys=v.log3|Invalid field modifier|12
keys=v.execname|Invalid field modifier|7
keys=v:vals=v.log2|Invalid field modifier|14
keys=v,common_pid,common_tid,common_cpu|Too many keys|29
keys=v:sort=common_pid|Sort field must be a key or a val|12
keys=v:sort=v.up|Invalid sort modifier|14
keys=v:sort=v,hitcount,v|Too many sort fields|23
keys=v:size=0|Invalid size|12
keys=v:size=x|Invalid size|12
vals=v|Missing keys|6
keys=v:colour|Unknown hist parameter|7
keys=v if w == 1|Field not found|10
keys=v if|Meaningless filter expression|9
keys=v:x=v+w|Couldn't find field|11
keys=v:x=(v+1|Unbalanced parentheses|9
keys=v:x=v+1)|Unbalanced parentheses|12
keys=v:x=v*|Missing operand|11
keys=v:x=0x1g|Invalid number|12
keys=v:x=v.hex|Invalid field modifier|11
keys=v:x=common_comm|Variables and expressions hold numbers|9
keys=v:vals=$nope|Couldn't find variable|12
keys=$y|Couldn't find variable|5
keys=v:vals=x=v|Variables are assigned outside vals=|12
keys=v:x=$y+$x|Variable refers to itself|7
keys=v:1x=v|Invalid variable name|7
keys=v:v=1|Variable name can't be a field name|7
keys=v:x=1:x=2|Variable already defined|11
keys=v:onmax(x).save(v)|Couldn't find onmax or onchange var|13
keys=v:x=v:onmax($x).frob()|Invalid action|21
keys=v:x=v:onmatch(app).trace(s,v)|onmatch() needs the matching event|19
keys=v:x=v:onmatch(a.b).save(v)|onmatch() takes trace()|24
keys=v:x=v:onmax($x).snapshot(v)|snapshot() takes no params|30
keys=v:x=v:onmax($x).save()|Missing param|26
keys=v:x=v:onmax($x).save(nope)|Couldn't find field|26
keys=v:x=v:onmax($x).trace(s,v|Unbalanced parentheses|29
keys=v:x=v:onmatch(a.b).trace(s,a.c.v)|A field of another event|32
keys=v:x=v:onmax($x).save($x)|save() takes fields of the event|26
keys=v:x=v:onmax($x).snapshot():onchange($x).snapshot()|One snapshot() action per histogram|32
keys=v:x=v:x2=$x+3:onmatch(a.b).trace(s,$x2):onmax($x).save(v):onchange($x).save(v):onmax($x).snapshot():onmatch(a.b).s(v)|Too many actions (Max = 4)|105
keys=v:x=v+$y|other events' variables are read in the traced process|11
keys=v:x=v:onmax($x).snapshot()|actions that write events or snapshots run in the traced process|11
T
	expect_rc 1 $TRAIL hist -i p.dat -e x:nope 'keys=v' 2>err.txt
	has err.txt 'no event matching'
	expect_rc 2 $TRAIL hist -i p.dat 'keys=v' 2>err.txt
	has err.txt 'give the event'
}
t hist_errors hist_errors

# the limits doc/filters-triggers.md gives, at their edges: parentheses 8
# deep, 64 operands and operators, 24 fields
hist_expression_limits() {
	fresh_registry
	expect_rc 7 $TRAIL record -q -o p.dat --probe 'p:x/pi parse_int v=$arg1:s32' -- "$P" 1 >/dev/null
	local open close ops fields i
	open=$(printf '(%.0s' $(seq 8)); close=$(printf ')%.0s' $(seq 8))
	$TRAIL hist -i p.dat -e x:pi "keys=v:x=${open}v${close}" >/dev/null
	expect_rc 1 $TRAIL hist -i p.dat -e x:pi "keys=v:x=(${open}v${close})" >/dev/null 2>err.txt
	has err.txt "Too many subexpressions (8 max)"
	ops=v; for i in $(seq 31); do ops="$ops+1"; done # 63
	$TRAIL hist -i p.dat -e x:pi "keys=v:x=$ops" >/dev/null
	expect_rc 1 $TRAIL hist -i p.dat -e x:pi "keys=v:x=$ops+1" >/dev/null 2>err.txt
	has err.txt "Expression too long"
	fields=v; for i in $(seq 23); do fields="$fields+v"; done # 24
	$TRAIL hist -i p.dat -e x:pi "keys=v:x=$fields" >/dev/null
	expect_rc 1 $TRAIL hist -i p.dat -e x:pi "keys=v:x=$fields+v" >/dev/null 2>err.txt
	has err.txt "Too many fields in expressions and actions (Max = 24)"
	tr '\n' ' ' <"$SRC/doc/filters-triggers.md" >doc.txt
	for msg in "parentheses 8 deep" "64 operands and operators" "(Max = 24)" "(8 max)"; do
		grep -qF "$msg" doc.txt || die "doc/filters-triggers.md lacks '$msg'"
	done
}
t hist_expression_limits hist_expression_limits

# hist triggers keep their histogram in the processes, written into the
# file at the end: trail hist -i shows it without a spec, and picks it
# for the same spec; its entries equal those made from the records (a
# different size makes hist -i compute it from them)
kept_hist() {
	fresh_registry
	$TRAIL record -q -e 'app:*' -T 'app:request:hist:keys=path:vals=bytes:sort=path' \
		-T 'app:reply:hist:keys=common_comm,status' -o k.dat -- "$EX" 3 300 >/dev/null
	$TRAIL hist -i k.dat >all.txt
	[ "$(grep -c '^# event histogram' all.txt)" = 2 ] || die "$(cat all.txt)"
	has all.txt '# app:request'
	has all.txt '# app:reply'
	$TRAIL hist -i k.dat -e app:request >kept.txt
	$TRAIL hist -i k.dat -e app:request 'keys=path:vals=bytes:sort=path' >same.txt
	diff -u kept.txt <(echo '# app:request'; cat same.txt)
	$TRAIL hist -i k.dat -e app:request 'keys=path:vals=bytes:sort=path:size=4096' >rec.txt
	diff -u <(grep '^{' kept.txt) <(grep '^{' rec.txt)
	n=$($TRAIL report -q -i k.dat | grep -c ': app:request:')
	has kept.txt "    Hits: $n"
	# three workers, each with its replies
	[ "$($TRAIL hist -i k.dat -e app:reply | grep -c '^{ common_comm: worker-')" -ge 3 ] ||
		die "$($TRAIL hist -i k.dat -e app:reply)"
}
t kept_hist kept_hist

# a hist trigger on an event not recorded: the histogram sees every hit,
# the file no record of it; many threads, no update lost
hist_not_recorded() {
	fresh_registry
	$TRAIL record -q -e app:start -T 'app:request:hist:keys=common_tid:vals=bytes' \
		-T 'app:reply:hist:keys=common_pid.execname' -o n.dat -- "$EX" 8 4000 >/dev/null
	[ "$($TRAIL report -q -i n.dat | grep -c ': app:request:')" = 0 ] || die "recorded"
	$TRAIL hist -i n.dat -e app:request >h.txt
	has h.txt '    Hits: 32000'
	has h.txt '    Entries: 8'
	has h.txt '    Dropped: 0'
	# each thread's hits and bytes: 4000 requests of 512, 1024, 2048, 4096 in turn
	sed -nE 's/^\{ common_tid: +[0-9]+ \} hitcount: +([0-9]+)  bytes: +([0-9]+)$/\1 \2/p' h.txt |
		sort -u >t.txt
	[ "$(cat t.txt)" = "4000 $((1000 * (512 + 1024 + 2048 + 4096)))" ] || die "$(cat h.txt)"
	$TRAIL hist -i n.dat -e app:reply >e.txt
	grep -qE '^\{ common_pid: example +\[ *[0-9]+\] \} hitcount: +32000$' e.txt || die "$(cat e.txt)"
}
t hist_not_recorded hist_not_recorded

# a running spinner (its parse_int calls) with libtrail, probe x:in on
# parse_int's argument defined: its pid in $pid
spinner_probed() {
	fresh_registry
	export TRAIL_PROBES=$TMP/probes
	$TRAIL probe 'p:x/in parse_int v=$arg1:s64'
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 60 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
}

# trail hist -P: the histogram kept in a running process, shown on its
# period while it runs and as it stood at the end; the process runs on
# unchanged after it; -P's errors
live_hist() {
	spinner_probed
	$TRAIL hist -P $pid -e x:in 'keys=v.buckets=256:vals=v' --interval 0.2 >live.txt &
	h=$!
	wait_for "[ \$(grep -c '^Totals' live.txt) -ge 2 ]" || die "no live view: $(cat live.txt)"
	kill -INT $h
	wait $h || die "hist -P: $?"
	wait_for "! grep -q trail-arena /proc/$pid/maps" || die "never detached"
	kill -0 $pid || die "the process died"
	kill $pid; wait $pid 2>/dev/null || true
	# the last one (at the end) has the four buckets of 0..1023, v summed
	awk '/^# x:in$/ { n = NR } END { print n }' live.txt >at.txt
	tail -n +"$(cat at.txt)" live.txt >end.txt
	for b in 0-255 256-511 512-767 768-1023; do
		grep -qE "^\{ v: ~ $b \} hitcount: +[0-9]+  v: +[0-9]+" end.txt || die "$b: $(cat end.txt)"
	done
	has end.txt '    Entries: 4'
	expect_rc 2 $TRAIL hist -P $$ 'keys=v' 2>err.txt
	has err.txt '-P takes the event'
	expect_rc 2 $TRAIL hist -i x.dat -e x:in --interval 1 'keys=v' 2>err.txt
	has err.txt '--interval goes with -P'
	unset TRAIL_PROBES
}
t live_hist live_hist

# the live view's keys on a terminal (script(1) gives it one): p pauses
# the histograms in the process (Hits stay), z clears them (Hits 0, and
# stay so while paused), c continues (Hits grow again)
live_keys() {
	spinner_probed
	mkfifo keys
	exec 3<>keys
	script -qec "$TRAIL hist -P $pid -e x:in 'keys=v.buckets=256' --interval 0.2" /dev/null \
		<keys >live.txt 2>&1 &
	h=$!
	hits() { grep -a 'Hits:' live.txt | tail -1 | tr -dc 0-9; }
	views() { grep -ac 'Hits:' live.txt; }
	wait_for "[ \$(views) -ge 2 ] && [ \$(hits) -gt 0 ]" || die "no live view: $(cat -v live.txt | tail)"
	printf p >&3
	wait_for "grep -aq '\[paused\]' live.txt" || die "never paused: $(cat -v live.txt | tail)"
	n=$(views)
	wait_for "[ \$(views) -ge $((n + 2)) ]" || die "no views"
	a=$(hits)
	n=$(views)
	wait_for "[ \$(views) -ge $((n + 2)) ]" || die "no views"
	[ "$(hits)" = "$a" ] || die "paused, Hits went from $a to $(hits)"
	printf z >&3
	wait_for "[ \$(hits) = 0 ]" || die "not cleared: $(hits)"
	n=$(views)
	wait_for "[ \$(views) -ge $((n + 2)) ]" || die "no views"
	[ "$(hits)" = 0 ] || die "cleared and paused, Hits $(hits)"
	printf c >&3
	wait_for "[ \$(hits) -gt 0 ]" || die "never counted again"
	kill -INT $(pgrep -f "trail hist -P $pid" | head -1)
	wait $h || true
	exec 3>&-
	kill $pid; wait $pid 2>/dev/null || true
	unset TRAIL_PROBES
}
if command -v script >/dev/null; then
	t live_keys live_keys
else
	skip live_keys "no script(1) to give the live view a terminal"
fi

# a hist trigger's grammar errors, at record: the caret under the
# position in -T as given
hist_trigger_errors() {
	fresh_registry
	while IFS='|' read -r trig msg col; do
		expect_rc 1 $TRAIL record -q -e app:start -T "$trig" -o e.dat -- "$EX" >/dev/null 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$trig': caret at $caret, want $col: $(cat err.txt)"
		[ ! -e e.dat ] || die "'$trig': recorded"
	done <<'T'
app:request:hist:keys=nope|Couldn't find field|22
app:request:hist:keys=path.log2|Invalid field modifier|27
app:request:hist:keys=fd:vals=path|A value must be a number|30
app:request:hist:keys=fd if bytes >|Missing field name|35
T
}
t hist_trigger_errors hist_trigger_errors
