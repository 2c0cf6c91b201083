#!/usr/bin/env bash
# What every view shows (report, report --summary, export): the selection
# options read a recorded file as trace-cmd's record-time options would
# have recorded it, the summary's figures agree with the calls the report
# prints, and `trail export` refuses what it must (unknown format, an
# existing output, a directory for a file, a damaged input: what is valid,
# exit 1).
#
# The program is bench_calltree: N requests over two threads, each
#   request { parse { token; token; token; } lookup { hash; compare; compare; }
#             render { walk { emit; } } }
# (walk's recursion is a loop at -O2), and calltree:done every 1024.
. "$(dirname "$0")/lib.sh"
PROG=$BUILD/bench/bench_calltree
NOSAN="-n _sub_I_* -n _sub_D_* -n trail__dso_ctor"
N=2000

rec() { # file [record options]
	local f=$1; shift
	BENCH_N=$N $TRAIL record -q "$@" -o "$f" $PROG >/dev/null
}

[ -x "$PROG" ] || die "no $PROG (meson builds bench/ with the rest)"
rec "$TMP/g.dat" -e 'calltree:*' -p function_graph --no-libcall $NOSAN

# the calls of a function in the function_graph text: its "f();" and "f() {" lines
calls_in_report() { # file function
	$TRAIL report -q -i "$1" | grep -cE "\|  +$2\(\)( \{|;)" || true
}
# a column of the summary's row for a function (1 total ... 6 max, 7 calls)
summary_calls() { # file function [options]
	local f=$1 fn=$2; shift 2
	$TRAIL report --summary -i "$f" "$@" | awk -v fn="$fn" '$NF == fn { print $5 }'
}

summary_counts_the_calls() {
	local fn want got
	for fn in request parse token lookup hash compare render walk emit; do
		want=$(calls_in_report "$TMP/g.dat" "$fn")
		got=$(summary_calls "$TMP/g.dat" "$fn")
		[ "$want" = "$got" ] || die "$fn: report has $want calls, the summary $got"
	done
	# and they are what the program made
	[ "$(summary_calls "$TMP/g.dat" token)" = $((3 * N)) ] || die "token: not 3 x $N"
	[ "$(summary_calls "$TMP/g.dat" request)" = "$N" ] || die "request: not $N"
}

# self time: a leaf's self is its total; request's total is its callees'
# totals plus its self (to the nanosecond, the table rounds to 3 digits)
summary_self_and_total() {
	$TRAIL report --summary --sort name -i "$TMP/g.dat" >s.txt
	awk 'function ns(v, u) { return v * (u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : 1e9) }
	     $NF ~ /^(token|hash|compare|emit)$/ {
		if (ns($1, $2) != ns($3, $4)) { print "leaf " $NF " self != total"; bad = 1 } }
	     $NF ~ /^(request|parse|lookup|render)$/ { t[$NF] = ns($1, $2); s[$NF] = ns($3, $4) }
	     # (an event'"'"'s out-of-line emitter, as ASan builds it, is a callee too)
	     $NF ~ /^trail__emit_/ { e += ns($1, $2) }
	     END { sum = t["parse"] + t["lookup"] + t["render"] + s["request"] + e
		   if (sum < t["request"] * 0.99 || sum > t["request"] * 1.01) {
			printf "request %d != callees + self %d\n", t["request"], sum; bad = 1 }
		   exit bad }' s.txt || { cat s.txt; die "totals do not add up"; }
	grep -q 'calltree:done' s.txt || die "no event table"
}

summary_by_thread() {
	local a b
	$TRAIL report --summary --by thread -i "$TMP/g.dat" >t.txt
	[ "$(awk '$NF == "request"' t.txt | wc -l)" = 2 ] || die "not one request row per thread"
	a=$(awk '$NF == "token" { n += $5 } END { print n }' t.txt)
	[ "$a" = $((3 * N)) ] || die "token rows sum to $a"
	b=$($TRAIL report --summary --by process -i "$TMP/g.dat" | awk '$NF == "token" { print $5 }')
	[ "$b" = $((3 * N)) ] || die "by process: $b"
	$TRAIL report --summary --sort calls -i "$TMP/g.dat" | awk 'NR > 2 && /[0-9]/ && $5 ~ /^[0-9]+$/ {
		if (last != "" && $5 > last) { print "not sorted by calls"; exit 1 } last = $5 }'
}

summary_of_events() {
	rec "$TMP/e.dat" -e 'calltree:*'
	local want got
	want=$($TRAIL report --count -i "$TMP/e.dat" | awk '$1 == "calltree:done" { print $2 }')
	got=$($TRAIL report --summary -i "$TMP/e.dat" | awk '$NF == "calltree:done" { print $1 }')
	[ -n "$want" ] && [ "$want" = "$got" ] || die "count $want, summary $got"
	# nothing shown: an error, not an empty table
	if $TRAIL report --summary --tid 1 -i "$TMP/e.dat" >o.txt 2>err.txt; then die "no error"; fi
	# the file named once (was "trail: F: F: nothing to summarize")
	[ "$(cat err.txt)" = "trail: $TMP/e.dat: nothing to summarize (no calls or events shown)" ] ||
		die "$(cat err.txt)"
}

# folded stacks and the summary agree: per function (a stack's last
# frame), the folded self times add up to the summary's self time (to its
# 4 printed digits), the folded counts to its calls
summary_equals_folded() {
	$TRAIL export --format folded -i "$TMP/g.dat" >f.txt
	$TRAIL export --format folded --count -i "$TMP/g.dat" >fc.txt
	$TRAIL report --summary -i "$TMP/g.dat" >s.txt
	awk 'function ns(v, u) { return v * (u == "ns" ? 1 : u == "us" ? 1e3 : u == "ms" ? 1e6 : 1e9) }
	     FILENAME == ARGV[1] { n = split($1, fr, ";"); self[fr[n]] += $2; next }
	     FILENAME == ARGV[2] { n = split($1, fr, ";"); calls[fr[n]] += $2; next }
	     $5 ~ /^[0-9]+$/ && ($NF in self) { seen++
		s = ns($3, $4); d = s - self[$NF]; if (d < 0) d = -d
		if (d > s * 0.0006 + 1) { printf "%s: summary self %s, folded %d\n", $NF, s, self[$NF]; bad = 1 }
		if ($5 != calls[$NF]) { printf "%s: summary %d calls, folded %d\n", $NF, $5, calls[$NF]; bad = 1 } }
	     END { if (seen < 9) { print "only " seen " functions compared"; bad = 1 } exit bad }' \
		f.txt fc.txt s.txt || die "the summary and the folded stacks differ"
}

# the function tracer has calls and no durations: a table of calls
summary_of_function_tracer() {
	rec "$TMP/f.dat" -p function --no-libcall $NOSAN
	$TRAIL report --summary -i "$TMP/f.dat" >f.txt
	grep -q 'the function tracer' f.txt || die "$(head -3 f.txt)"
	[ "$(awk '$NF == "token" { print $1 }' f.txt)" = $((3 * N)) ] || die "token: $(grep token f.txt)"
	[ "$(awk '$NF == "request" { print $1 }' f.txt)" = "$N" ] || die "request"
}

# -g request: every call shown is under a request, request at depth 0
select_graph_func() {
	$TRAIL report -q -g parse -i "$TMP/g.dat" | grep '|' | grep -v '/\*' >p.txt
	[ "$(grep -c 'parse() {' p.txt)" = "$N" ] || die "not $N parse calls"
	[ "$(grep -c 'token();' p.txt)" = $((3 * N)) ] || die "not 3 x $N tokens"
	! grep -qE 'request|lookup|render' p.txt || die "calls outside parse shown"
	grep -qE '\|  parse\(\) \{' p.txt || die "parse not at depth 0"
	# -l: those alone; -n: not those, their callees stay
	[ "$($TRAIL report -q -l 'to*' -i "$TMP/g.dat" | grep -c '|  token();')" = $((3 * N)) ] ||
		die "-l token"
	$TRAIL report -q -g request -n parse -i "$TMP/g.dat" >n.txt
	! grep -q 'parse()' n.txt || die "-n parse shown"
	grep -qE '\|    token\(\);' n.txt || die "token not one level up under -n parse"
}

select_depth() {
	$TRAIL report -q -g request --max-graph-depth 2 -i "$TMP/g.dat" | grep -v '/\*' >d.txt
	! grep -qE '\|      [a-z]' d.txt || die "a call deeper than 2 levels"
	grep -qE '\|    parse\(\);' d.txt || die "parse is a leaf at depth 1 now"
	[ "$(grep -c 'request() {' d.txt)" = "$N" ] || die "not $N requests"
}

# a threshold keeps a tree: every } has its {, every call shown is long
select_thresh() {
	$TRAIL report -q --graph-time-thresh 2us -i "$TMP/g.dat" >th.txt
	local open close
	open=$(grep -c '() {$' th.txt || true)
	close=$(grep -c '} /\*' th.txt || true)
	[ "$open" = "$close" ] || die "$open { for $close }"
	awk -F'|' '/ us / { split($1, a, " "); v = a[2] ~ /^[0-9.]+$/ ? a[2] : a[3]; # (after a marker: + ! # * @ $)
		if (v + 0 < 2) { print "short call shown: " $0; exit 1 } }' th.txt
	# more calls without the threshold than with it
	[ "$(wc -l <th.txt)" -lt "$($TRAIL report -q -i "$TMP/g.dat" | wc -l)" ] || die "nothing hidden"
}

select_threads_and_time() {
	local tid first
	tid=$($TRAIL report --stat -i "$TMP/g.dat" | sed -n 's/^# bench_calltree-[0-9]*\/\([0-9]*\) .*/\1/p' | head -1)
	[ -n "$tid" ] || die "no tid"
	$TRAIL report -q --tid "$tid" -O fgraph:proc -i "$TMP/g.dat" | grep '|' >tid.txt
	[ "$(grep -cE -- "-$tid +\|" tid.txt)" = "$(grep -c '|' tid.txt)" ] || die "other threads shown"
	$TRAIL report -q --comm 'nomatch*' -i "$TMP/g.dat" >c.txt
	! grep -q '()' c.txt || die "--comm nomatch shows calls"
	# the first 0.00001 s of the events only
	$TRAIL report -i "$TMP/e.dat" -q >all.txt
	$TRAIL report -i "$TMP/e.dat" -q --time-range ,+0 >one.txt
	[ "$(wc -l <one.txt)" = 1 ] || die "--time-range ,+0: $(wc -l <one.txt) lines"
	first=$(awk '{ sub(":", "", $3); print $3; exit }' all.txt)
	$TRAIL report -i "$TMP/e.dat" -q --time-range "$first," >from.txt
	cmp -s all.txt from.txt || die "--time-range FIRST, differs from everything"
}

# every bad value is a usage error (exit 2) with a message
bad_view_options() {
	local o rc
	for o in "--time-range 5" "--time-range x,y" "--time-range 2,1" "--max-graph-depth 0" \
		 "--graph-time-thresh soon" "--tid 12,x" "-l [a" "--by thread" "--sort name" \
		 "--summary --sort bogus" "--summary --by core" "--summary --count"; do
		set +e
		# shellcheck disable=SC2086
		$TRAIL report -i "$TMP/g.dat" $o >/dev/null 2>err.txt
		rc=$?
		set -e
		[ $rc = 2 ] || die "'$o': exit $rc"
		[ -s err.txt ] || die "'$o': no message"
	done
}

export_refuses() {
	set +e
	$TRAIL export -i "$TMP/g.dat" >/dev/null 2>err.txt; [ $? = 2 ] || die "no --format: not 2"
	$TRAIL export --format bogus -i "$TMP/g.dat" >/dev/null 2>err.txt; [ $? = 2 ] || die "bogus: not 2"
	grep -q "known formats:.*text" err.txt || die "formats not listed: $(cat err.txt)"
	echo old >exists.txt
	$TRAIL export --format text -i "$TMP/g.dat" -o exists.txt 2>err.txt; [ $? = 1 ] || die "exists: not 1"
	grep -q 'exists (--force' err.txt || die "$(cat err.txt)"
	[ "$(cat exists.txt)" = old ] || die "the old file changed"
	$TRAIL export --format text --force -i "$TMP/g.dat" -o exists.txt || die "--force failed"
	cmp -s exists.txt <($TRAIL report -i "$TMP/g.dat") || die "export text != report"
	mkdir -p adir
	$TRAIL export --format text -i "$TMP/g.dat" -o adir 2>err.txt; [ $? = 1 ] || die "dir: not 1"
	grep -q 'is a directory' err.txt || die "$(cat err.txt)"
	$TRAIL export --format text -i "$TMP/g.dat" -o "$TMP/g.dat" 2>err.txt; [ $? = 1 ] || die "-o input"
	$TRAIL export --format text -i nosuch.dat -o x.txt 2>err.txt; [ $? = 1 ] || die "no input: not 1"
	[ ! -e x.txt ] && [ ! -e x.txt.part ] || die "output left for a missing input"
	$TRAIL export --format text --count -i "$TMP/g.dat" >/dev/null 2>&1; [ $? = 2 ] || die "--count text"
	set -e
	# a FIFO (as /dev/null) is written to, not replaced by a file
	mkfifo fifo
	cat fifo >from-fifo.txt &
	$TRAIL export --format text -i "$TMP/g.dat" -o fifo
	wait $!
	[ -p fifo ] || die "the FIFO was replaced"
	cmp -s from-fifo.txt exists.txt || die "not the export through the FIFO"
}

# a truncated file: what is valid is exported, the damage said, exit 1
export_damaged_input() {
	local size
	size=$(stat -c %s "$TMP/g.dat")
	head -c $((size / 2)) "$TMP/g.dat" >half.dat
	set +e
	$TRAIL export --format text -i half.dat -o half.txt 2>err.txt; rc=$?
	set -e
	[ $rc = 1 ] || die "rc $rc"
	grep -q 'offset' err.txt || die "damage not said: $(cat err.txt)"
	[ -s half.txt ] || die "nothing exported"
	[ "$(grep -c '()' half.txt)" -gt 100 ] || die "the valid part is missing"
}

# an export of more than a second shows its progress on a terminal (a
# pseudo-terminal from script(1)), and nothing when stderr is a file
progress_on_a_terminal() {
	BENCH_N=150000 $TRAIL record -q -p function_graph --no-libcall $NOSAN -o big.dat $PROG >/dev/null
	# shown after 0 ms here (a second by default): the machine's speed
	# does not decide whether there is a line to see
	export TRAIL_PROGRESS_DELAY=0
	script -qec "$TRAIL export --format text -i big.dat -o big.txt" typescript >/dev/null
	grep -q 'trail export: [0-9,]* records .* of .* M records/s' typescript ||
		die "no progress line: $(tr '\r' '\n' <typescript | head -3)"
	rm -f big.txt
	$TRAIL export --format text -i big.dat -o big.txt 2>err.txt
	[ ! -s err.txt ] || die "progress without a terminal: $(head -c 200 err.txt)"
	script -qec "$TRAIL export -q --format text -i big.dat -o big2.txt" typescript2 >/dev/null
	! grep -q 'records/s' typescript2 || die "-q shows progress"
	rm -f big.dat big.txt big2.txt
}

t summary_counts_the_calls summary_counts_the_calls
t summary_self_and_total summary_self_and_total
t summary_by_thread summary_by_thread
t summary_equals_folded summary_equals_folded
t summary_of_events summary_of_events
t summary_of_function_tracer summary_of_function_tracer
t select_graph_func select_graph_func
t select_depth select_depth
t select_thresh select_thresh
t select_threads_and_time select_threads_and_time
t bad_view_options bad_view_options
t export_refuses export_refuses
t export_damaged_input export_damaged_input
t progress_on_a_terminal progress_on_a_terminal
