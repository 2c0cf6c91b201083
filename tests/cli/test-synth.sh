#!/usr/bin/env bash
# hist trigger variables, synthetic events and actions (the kernel's
# histogram.rst inter-event grammar): the request-to-reply latency as
# synthetic events, against report's records; variables read once;
# onmax's save() and snapshot(), onchange; trail synth's kept
# definitions; the links record checks, with their carets; what trail
# hist computes offline.
. "$(dirname "$0")/lib.sh"

EX=$BUILD/examples/example
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

# the request's time kept per fd, the reply's latency from it as
# synthetic:req_latency, and a histogram of those
REQ='hist:keys=fd:ts0=common_timestamp'
REPLY='app:reply:hist:keys=fd:lat=common_timestamp-$ts0:onmatch(app.request).trace(req_latency,fd,$lat)'

# report's synthetic:req_latency records of FILE as "fd lat" lines
lat_lines() { # file
	$TRAIL report -q -i "$1" | sed -nE 's/.*: synthetic:req_latency: fd=(-?[0-9]+) lat=([0-9]+)$/\1 \2/p'
}

# the latency pipeline checked: 2400 requests, a synthetic event for
# each (its fd, in turn after its request in its thread), every latency
# > 0, the kept histograms' hits, the log2 buckets those of the records
check_pipeline() { # file
	$TRAIL report -q -i "$1" >r.txt
	sed -nE 's/.*: app:request: fd=([0-9]+) .*/\1/p' r.txt | sort -n >req.txt
	lat_lines "$1" >s.txt
	[ "$(wc -l <req.txt)" = 2400 ] || die "$(wc -l <req.txt) requests"
	[ "$(grep -c ': synthetic:req_latency: ' r.txt)" = 2400 ] || die "$(grep -c synthetic r.txt) synthetic"
	[ "$(wc -l <s.txt)" = 2400 ] || die "$(wc -l <s.txt) synthetic parsed: $(grep synthetic r.txt | head -3)"
	# the fds: those of the requests, as many times each (8 x 300 with
	# fd = 10 + id*100 + i: the threads' ranges overlap, one at a time)
	cut -d' ' -f1 s.txt | sort -n | diff -u req.txt -
	# each request followed, in its thread, by its own synthetic event
	grep -E ': (app:request|synthetic:req_latency): fd=' r.txt |
		sed -E 's/^ *[^ ]+-([0-9]+) .*: (app:request|synthetic:req_latency): fd=([0-9]+).*/\1 \2 \3/' |
		awk '$2 == "app:request" { if ($1 in open) { print "request " open[$1] " unanswered"; bad++ }
				open[$1] = $3; next }
		     { if (open[$1] != $3) { print "synthetic fd " $3 " after request " open[$1]; bad++ }
		       delete open[$1] }
		     END { for (t in open) { print "request " open[t] " unanswered"; bad++ } exit bad > 0 }' ||
		die "requests and synthetic events out of step"
	awk '$2 <= 0 { print; bad++ } END { exit bad > 0 }' s.txt || die "lat <= 0"
	$TRAIL hist -i "$1" -e synthetic:req_latency >h.txt
	has h.txt '# synthetic:req_latency'
	has h.txt 'hist:keys=lat.log2'
	has h.txt '    Hits: 2400'
	has h.txt '    Dropped: 0'
	sed -nE 's/^\{ lat: ~ 2\^([0-9]+) *\} hitcount: +([0-9]+) .*/\1 \2/p' h.txt | sort -n >got.txt
	[ "$(awk '{ s += $2 } END { print s }' got.txt)" = 2400 ] || die "hitcounts: $(cat h.txt)"
	[ "$(wc -l <got.txt)" = "$(grep -c '^{ lat:' h.txt)" ] || die "unparsed: $(cat h.txt)"
	# ceil(log2(lat)) of each record
	awk '{ b = 0; while (2 ^ b < $2) b++; n[b]++ } END { for (b in n) print b, n[b] }' s.txt |
		sort -n | diff -u - got.txt
	$TRAIL hist -i "$1" -e app:reply >rp.txt
	has rp.txt '    Hits: 2400'
	has rp.txt "    Entries: $(sort -u req.txt | wc -l)"
	$TRAIL hist -i "$1" -e app:request >rq.txt
	has rq.txt '    Hits: 2400'
}

# the whole pipeline, 8 threads x 300 requests
latency_pipeline() {
	fresh_registry
	$TRAIL record -q -o t.dat --synth 'req_latency int fd; u64 lat' -e app:request -T "$REQ" \
		-T "$REPLY" -T 'req_latency:hist:keys=lat.log2' -e synthetic:req_latency \
		-- "$EX" 8 300 >/dev/null
	[ "$($TRAIL hist -i t.dat | grep -c '^# event histogram')" = 3 ] || die "$($TRAIL hist -i t.dat | head)"
	check_pipeline t.dat
}
t latency_pipeline latency_pipeline

# common_timestamp is the event's timestamp (histogram.rst: "timestamp
# (from ring buffer) associated with the event"): lat = the reply's
# timestamp - the request's, as report -t prints them (to 100 ns: the
# conversions' rounding), not the time the tracer spent between
latency_is_timestamps() {
	fresh_registry
	$TRAIL record -q -o l.dat --synth 'req_latency int fd; u64 lat' -e app:request -T "$REQ" \
		-e app:reply -T "$REPLY" -e synthetic:req_latency -- "$EX" 4 50 >/dev/null
	$TRAIL report -q -t -i l.dat |
		awk '{ split($3, t, "[.:]"); ns = t[1] * 1e9 + t[2]; fd = $5; sub("fd=", "", fd) }
		     $4 == "app:request:" { rq[fd] = ns }
		     $4 == "app:reply:" { rp[fd] = ns }
		     $4 == "synthetic:req_latency:" { l = $6; sub("lat=", "", l)
			print fd, l, rp[fd] - rq[fd], l - (rp[fd] - rq[fd]) }' >d.txt
	[ "$(wc -l <d.txt)" = 200 ] || die "$(wc -l <d.txt) synthetic"
	awk '$4 > 100 || $4 < -100 { bad++ } END { exit bad > 0 }' d.txt ||
		die "$(awk '$4 > 100 || $4 < -100' d.txt | wc -l) of 200 lat differ from reply-request by > 100 ns (fd lat reply-request diff): $(awk '$4 > 100 || $4 < -100' d.txt | head -5 | tr '\n' ';')"
}
t latency_is_timestamps latency_is_timestamps

# read once: a reply consumes the ts0 its thread's request set; a
# second reader after it finds nothing; a variable set once, read by
# many events, makes one synthetic event; an event whose variables are
# not set is not counted
read_once() {
	fresh_registry
	$TRAIL record -q -o a.dat --synth 's1 u64 lat' -e app:request \
		-T 'hist:keys=common_tid:ts0=common_timestamp' \
		-T 'app:reply:hist:keys=common_tid:lat=common_timestamp-$ts0:onmatch(app.request).trace(s1,$lat)' \
		-e synthetic:s1 -- "$EX" 2 50 >/dev/null
	$TRAIL report -q -i a.dat >a.txt
	[ "$(grep -c ': synthetic:s1: lat=' a.txt)" = 100 ] || die "$(grep -c synthetic:s1 a.txt) s1"
	sed -nE 's/.*: synthetic:s1: lat=([0-9]+)$/\1/p' a.txt | awk '$1 <= 0 { bad++ } END { exit bad > 0 }' ||
		die "lat <= 0"
	$TRAIL hist -i a.dat -e app:reply >h.txt
	has h.txt '    Hits: 100'
	has h.txt '    Entries: 2'
	# app:stats (each worker's last event) alone reads the last request's ts0
	$TRAIL record -q -o b.dat --synth 's3 u64 lat' -e app:request \
		-T 'hist:keys=common_tid:ts0=common_timestamp' \
		-T 'app:stats:hist:keys=common_tid:lat=common_timestamp-$ts0:onmatch(app.request).trace(s3,$lat)' \
		-e synthetic:s3 -- "$EX" 2 50 >/dev/null
	[ "$($TRAIL report -q -i b.dat | grep -c ': synthetic:s3: lat=')" = 2 ] || die "$($TRAIL report -q -i b.dat | grep s3)"
	# ...but not after the replies read them
	$TRAIL record -q -o c.dat --synth 's1 u64 lat' --synth 's3 u64 lat' -e app:request \
		-T 'hist:keys=common_tid:ts0=common_timestamp' \
		-T 'app:reply:hist:keys=common_tid:lat=common_timestamp-$ts0:onmatch(app.request).trace(s1,$lat)' \
		-T 'app:stats:hist:keys=common_tid:lat=common_timestamp-$ts0:onmatch(app.request).trace(s3,$lat)' \
		-e 'synthetic:*' -- "$EX" 2 50 >/dev/null
	$TRAIL report -q -i c.dat >c.txt
	[ "$(grep -c ': synthetic:s1: ' c.txt)" = 100 ] || die "$(grep -c synthetic:s1 c.txt) s1"
	[ "$(grep -c ': synthetic:s3: ' c.txt)" = 0 ] || die "$(grep synthetic:s3 c.txt)"
	$TRAIL hist -i c.dat -e app:stats >st.txt
	has st.txt '    Hits: 0'
	# app:start (once, in the main thread) sets it per process; 100
	# replies in the workers read it: the first one only
	$TRAIL record -q -o d.dat --synth 's1 u64 lat' -e app:start \
		-T 'hist:keys=common_pid:ts0=common_timestamp' -e app:reply \
		-T 'app:reply:hist:keys=common_pid:lat=common_timestamp-$ts0:onmatch(app.start).trace(s1,$lat)' \
		-e synthetic:s1 -- "$EX" 2 50 >/dev/null
	$TRAIL report -q -i d.dat >d.txt
	[ "$(grep -c ': app:reply: ' d.txt)" = 100 ] || die "$(grep -c app:reply d.txt) replies"
	[ "$(grep -c ': synthetic:s1: lat=' d.txt)" = 1 ] || die "$(grep synthetic:s1 d.txt)"
	# right after the first reply (fd 10)
	grep -B1 ': synthetic:s1: ' d.txt | head -1 | grep -q ': app:reply: fd=10 ' || die "$(grep -B1 synthetic:s1 d.txt)"
	$TRAIL hist -i d.dat -e app:reply >h.txt
	has h.txt '    Hits: 1'
	has h.txt '    Entries: 1'
}
t read_once read_once

# onmax($lat).save(...) per entry, onmax($lat).snapshot(): the global
# max and its key, the snapshot file
onmax_save_snapshot() {
	fresh_registry
	$TRAIL record -q -o m.dat --overwrite -e app:request -T "$REQ" \
		-T 'app:reply:hist:keys=fd:lat=common_timestamp-$ts0:onmax($lat).save(status,common_comm,cached):onmax($lat).snapshot()' \
		-- "$EX" 3 5 >/dev/null
	$TRAIL hist -i m.dat -e app:reply >h.txt
	has h.txt '    Hits: 15'
	has h.txt '    Entries: 15'
	# "fd max status comm cached" per entry
	awk '/^\{ fd: / { fd = $3; next }
	     /^  max: / { if (fd == "") exit 1; print fd, $2, $4, $6, $8; fd = "" }' h.txt >e.txt ||
		die "a max line without its entry: $(cat h.txt)"
	[ "$(wc -l <e.txt)" = 15 ] || die "$(wc -l <e.txt) max lines: $(cat h.txt)"
	for id in 0 1 2; do
		for i in 0 1 2 3 4; do
			fd=$((10 + id * 100 + i))
			st=200; [ $i != 4 ] || st=404
			line=$(awk -v fd=$fd '$1 == fd' e.txt)
			read -r _ max status comm cached <<<"$line"
			[ -n "$line" ] || die "no entry for fd $fd: $(cat h.txt)"
			[ "$max" -gt 0 ] && [ "$status" = $st ] && [ "$comm" = worker-$id ] &&
				[ "$cached" = $((i % 2)) ] || die "fd $fd: '$line'"
		done
	done
	# the snapshot: the largest max of all and its key
	top=$(sort -k2 -n e.txt | tail -1 | cut -d' ' -f2)
	grep -qE '^Snapshot taken \([0-9]+ times?: ' h.txt || die "$(cat h.txt)"
	val=$(sed -nE 's/^    triggering value \{ onmax\(\$lat\) \}: +([0-9]+)$/\1/p' h.txt)
	key=$(sed -nE 's/^    triggered by event with key: \{ fd: +([0-9]+) \}$/\1/p' h.txt)
	[ "$val" = "$top" ] || die "triggering value '$val', the largest max $top"
	[ "$(awk -v fd="$key" '$1 == fd { print $2 }' e.txt)" = "$top" ] || die "key '$key': $(cat h.txt)"
	# the snapshot's file: the first ask (fd 10's reply, the first max)
	# after fd 10's request
	[ -e m.dat.1 ] || die "no m.dat.1: $(ls)"
	$TRAIL report -i m.dat.1 >s.txt
	has s.txt '# trail trace m.dat.1 of:'
	has s.txt ': app:request: fd=10 path="/index.html" bytes=0x200'
}
t onmax_save_snapshot onmax_save_snapshot

# onchange($st).save(fd) per thread: the last status, the fd of its last change
onchange() {
	fresh_registry
	$TRAIL record -q -o c.dat -e app:reply \
		-T 'app:reply:hist:keys=common_tid:st=status:onchange($st).save(fd)' -- "$EX" 2 12 >/dev/null
	# from report: per thread the last status and the fd where it last
	# changed (12 requests: 404 at 14, 19; the last change 200 at fd 20,
	# before the last reply, 21)
	$TRAIL report -q -i c.dat |
		sed -nE 's/^ *[^ ]+-([0-9]+) .*: app:reply: fd=([0-9]+) status=([0-9]+) .*/\1 \2 \3/p' |
		awk '{ n[$1]++; if (!($1 in last) || last[$1] != $3) at[$1] = $2; last[$1] = $3 }
		     END { for (t in n) print t, last[t], at[t] }' | sort >want.txt
	[ "$(wc -l <want.txt)" = 2 ] || die "$(cat want.txt)"
	awk '{ s = $3 % 100 } s != 20 { exit 1 }' want.txt || die "report: $(cat want.txt)"
	$TRAIL hist -i c.dat -e app:reply >h.txt
	has h.txt '    Hits: 24'
	awk '/^\{ common_tid: / { t = $3; next } /^  changed: / { print t, $2, $4 }' h.txt | sort >got.txt
	diff -u want.txt got.txt
}
t onchange onchange

# trail synth: kept definitions (synthetic_events, 0600), listed
# normalized, deleted, cleared; errors; a recording takes a kept one
synth_command() {
	fresh_registry
	$TRAIL synth 'req_latency int fd; u64 lat'
	[ "$(stat -c %a reg/synthetic_events)" = 600 ] || die "mode $(stat -c %a reg/synthetic_events)"
	$TRAIL synth '  b   char p[16];pid_t  pid ' 'c s8 x;  unsigned long long y'
	$TRAIL synth -l >l.txt
	printf '%s\n' 'req_latency int fd; u64 lat' 'b char p[16]; pid_t pid' \
		'c s8 x; unsigned long long y' | diff -u - l.txt
	# a duplicate name
	expect_rc 1 $TRAIL synth 'req_latency u64 lat' 2>err.txt
	has err.txt 'already defined'
	[ "$(caret_col err.txt)" = 0 ] || die "$(cat err.txt)"
	# bad definitions: the message, the caret
	while IFS='|' read -r def msg col; do
		expect_rc 2 $TRAIL synth "$def" 2>err.txt
		has err.txt "$msg"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$def': caret at $caret, want $col: $(cat err.txt)"
	done <<'T'
x u65 a|Invalid type|2
x|Missing fields|1
x int|Missing field name|2
x int a;; u8 b|Missing field|8
x int a; int a|Field name already used|13
x char p[0]|String size out of range|9
x char p[16|Invalid array size|8
x int a-b|Invalid field name|7
synthetic:x int a|Invalid synthetic event name|9
T
	$TRAIL synth -l | diff -u l.txt -
	# deleted: -d, '!NAME'; an unknown name
	$TRAIL synth -d b
	$TRAIL synth '!c'
	[ "$($TRAIL synth -l)" = 'req_latency int fd; u64 lat' ] || die "$($TRAIL synth -l)"
	[ "$(stat -c %a reg/synthetic_events)" = 600 ] || die "mode $(stat -c %a reg/synthetic_events)"
	expect_rc 1 $TRAIL synth -d nope 2>err.txt
	has err.txt "no synthetic event 'nope'"
	# a recording takes the kept req_latency (-e synthetic:NAME, and -T NAME:hist)
	$TRAIL record -q -o t.dat -e app:request -T "$REQ" -T "$REPLY" \
		-T 'req_latency:hist:keys=lat.log2' -e synthetic:req_latency -- "$EX" 8 300 >/dev/null
	check_pipeline t.dat
	# a -T naming it, not recorded: counted, not written
	$TRAIL record -q -o k.dat -e app:request -T "$REQ" -T "$REPLY" \
		-T 'req_latency:hist:keys=lat.log2' -- "$EX" 2 10 >/dev/null
	[ "$($TRAIL report -q -i k.dat | grep -c synthetic)" = 0 ] || die "recorded"
	$TRAIL hist -i k.dat -e synthetic:req_latency | grep -qx '    Hits: 20' ||
		die "$($TRAIL hist -i k.dat -e synthetic:req_latency)"
	# cleared
	$TRAIL synth 'z u8 a'
	$TRAIL synth --clear
	[ -z "$($TRAIL synth -l)" ] || die "$($TRAIL synth -l)"
	expect_rc 1 $TRAIL record -q -o n.dat -e synthetic:req_latency -- "$EX" 1 1 >/dev/null 2>err.txt
	[ ! -e n.dat ] || die "recorded"
}
t synth_command synth_command

# names as the kernel's synthetic_events takes them (is_good_name: a
# letter or _ first)
synth_names() {
	fresh_registry
	# (not expect_rc ... 2>err.txt: its message would go there)
	while IFS='|' read -r def msg col; do
		rc=0
		$TRAIL synth "$def" 2>err.txt || rc=$?
		[ $rc = 2 ] || die "'$def': exit status $rc, wanted 2 ($(cat err.txt); kept: $($TRAIL synth -l))"
		has err.txt "$msg"
		[ "$(caret_col err.txt)" = "$col" ] || die "$(cat err.txt)"
	done <<'T'
x int 9a|Invalid field name|6
9x int a|Invalid synthetic event name|0
T
	[ -z "$($TRAIL synth -l)" ] || die "kept: $($TRAIL synth -l)"
}
t synth_names synth_names

# the links between hist triggers record checks: message, caret under
# the token of -T as given, exit 1, no file
link_errors() {
	fresh_registry
	A='app:reply:hist:keys=fd:lat=common_timestamp-'
	while IFS='|' read -r synth req trig msg col tok; do
		set -- -e app:request -T "$req" -T "$A$trig"
		[ -z "$synth" ] || set -- --synth "$synth" "$@"
		expect_rc 1 $TRAIL record -q -o e.dat "$@" -- "$EX" 1 1 >/dev/null 2>err.txt
		has err.txt "$msg"
		sed -n 2p err.txt | grep -qxF "  $A$trig" || die "'$trig': $(cat err.txt)"
		caret=$(caret_col err.txt)
		[ "$caret" = "$col" ] || die "'$trig': caret at $caret, want $col: $(cat err.txt)"
		trig="$A$trig"
		[ "${trig:$col:${#tok}}" = "$tok" ] || die "'$trig': not under '$tok'"
		[ ! -e e.dat ] || die "'$trig': recorded"
	done <<'T'
|hist:keys=fd:ts0=common_timestamp|$ts0:onmatch(app.request).trace(nosuch,fd,$lat)|Synthetic event not found|76|nosuch
s2 int fd; u64 lat|hist:keys=fd:ts0=common_timestamp|$ts0:onmatch(app.request).trace(s2,fd)|Param count doesn't match synthetic event field count (s2 has 2)|76|s2
s2 char p[16]|hist:keys=fd:ts0=common_timestamp|$ts0:onmatch(app.request).trace(s2,fd)|Param type doesn't match synthetic event field type (char[16] p)|79|fd
s2 int fd; u64 lat|hist:keys=fd:ts0=common_timestamp|$ts0:onmatch(app.nope).trace(s2,fd,$lat)|onmatch(): no such event|57|app.nope
s2 int fd; u64 lat|hist:keys=fd:ts0=common_timestamp|$nope:onmatch(app.request).trace(s2,fd,$lat)|Couldn't find variable|44|$nope
s2 int fd; u64 lat|hist:keys=path:ts0=common_timestamp|$ts0:onmatch(app.request).trace(s2,fd,$lat)|the keys don't match those of app:request's hist, where $ts0 is|15|keys=fd
T
	# and a good one records
	$TRAIL record -q -o e.dat --synth 's2 int fd; u64 lat' -e app:request -T "$REQ" \
		-T "${A}\$ts0:onmatch(app.request).trace(s2,fd,\$lat)" -e synthetic:s2 -- "$EX" 1 1 >/dev/null
	[ "$($TRAIL report -q -i e.dat | grep -c ': synthetic:s2: fd=10 lat=')" = 1 ] || die "$($TRAIL report -i e.dat)"
}
t link_errors link_errors

# trail hist -i offline: another event's variables can't be read there;
# a variable of the event's own fields can
offline() {
	fresh_registry
	$TRAIL record -q -o t.dat --synth 'req_latency int fd; u64 lat' -e app:request -T "$REQ" \
		-e app:reply -T "$REPLY" -e synthetic:req_latency -- "$EX" 3 20 >/dev/null
	expect_rc 1 $TRAIL hist -i t.dat -e app:reply 'keys=fd:lat=common_timestamp-$ts0' >/dev/null 2>err.txt
	has err.txt "other events' variables are read in the traced process"
	[ "$(caret_col err.txt)" = 29 ] || die "$(cat err.txt)"
	# per fd: x = 2 * status
	$TRAIL report -q -i t.dat | sed -nE 's/.*: app:reply: fd=([0-9]+) status=([0-9]+) .*/\1 \2/p' |
		awk '{ print $1, 2 * $2 }' | sort -n >want.txt
	[ "$(wc -l <want.txt)" = 60 ] || die "$(wc -l <want.txt) replies"
	$TRAIL hist -i t.dat -e app:reply 'keys=fd:x=status*2:vals=$x' >h.txt
	sed -nE 's/^\{ fd: +([0-9]+) \} hitcount: +1  x: +([0-9]+)$/\1 \2/p' h.txt | sort -n >got.txt
	diff -u want.txt got.txt
	has h.txt '    Hits: 60'
	# per status: summed over its replies
	$TRAIL hist -i t.dat -e app:reply 'keys=status:x=status*2:vals=$x' >s.txt
	has s.txt "{ status:        200 } hitcount:         48  x: $(printf %10d $((48 * 400)))"
	has s.txt "{ status:        404 } hitcount:         12  x: $(printf %10d $((12 * 808)))"
}
t offline offline
