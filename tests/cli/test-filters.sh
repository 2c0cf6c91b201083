#!/usr/bin/env bash
# Event filters in the kernel's grammar on a recorded file: report -F and
# export --filter on probe events of known values (counts checked against
# what the sample program does), strings and globs, the common fields,
# several -F, and the errors with their carets.
. "$(dirname "$0")/lib.sh"

P=$BUILD/tests/cli/probed-O0
export TRAIL_REGISTRY=$PWD/reg

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
		caret=$(sed -n '3p' err.txt | awk '{ print index($0, "^") - 3 }')
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

