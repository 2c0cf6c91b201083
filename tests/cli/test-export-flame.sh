#!/usr/bin/env bash
# trail export --format folded / flamegraph: the call stacks of function_graph
# recordings. The folded values are checked against stacks recomputed from
# `trail report`'s function_graph text (ns timestamps); the SVG is checked
# as XML and in headless Chromium (frames drawn, search, zoom, no script
# error), with a screenshot kept in $BUILD/meson-logs/export-flame/.
. "$(dirname "$0")/lib.sh"
NOSAN="-n _sub_I_* -n _sub_D_*"
P2=$BUILD/tests/cli/ftrace-prog-O2
CXX=$BUILD/tests/cli/ftrace-cxx
ART=$BUILD/meson-logs/export-flame
CHROMIUM=$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)

# check.py REPORT HEADER FOLDED time|count: the folded stacks recomputed
# from `trail report -q -O fgraph:proc -t` (entries and returns with ns
# timestamps, leaves with their duration) must equal trail export's, stack
# by stack: within a leaf's printed rounding (none below 1 ms), exactly
# for the rest. The first frame must be the thread's process, comm-pid.
cat >"$TMP/check.py" <<'PY'
import re, sys

rep, hdr, fol, mode = sys.argv[1:5]
LINE = re.compile(r'^ *(\d+)\.(\d{9}) \| +[\d?]+\) +(\S+) +\| (.{12})  \|  (.*)$')
DUR = re.compile(r'([\d.]+) us')

def bare(name):  # report writes f() for a name with no parameter list
	return name[:-2] if name.endswith('()') and '(' not in name[:-2] else name

def fold(name):  # as folded writes names
	return ''.join('_' if c == ';' or ord(c) <= 32 or ord(c) == 127 else c for c in name)

want, tol, stacks = {}, {}, {}

def add(key, v, t):
	want[key] = want.get(key, 0) + v
	tol[key] = tol.get(key, 0) + t

for line in open(rep):
	m = LINE.match(line.rstrip('\n'))
	if not m:
		continue
	ts = int(m.group(1)) * 10**9 + int(m.group(2))
	task, dur, text = m.group(3), m.group(4), m.group(5)
	st = stacks.setdefault(task, [])
	text = re.sub(r' \(\d+\)$', '', text.strip())
	path = ';'.join([task] + [fold(f[0]) for f in st])
	if text.endswith(' {'):
		st.append([bare(text[:-2]), ts, 0])
	elif text.startswith('}'):
		if not DUR.search(dur):
			continue  # a return whose call is not in the file
		if not st:
			sys.exit('a return with no call: ' + line)
		d = ts - st[-1][1]
		add(path, d - st[-1][2] if mode == 'time' else 1, 0)
		st.pop()
		if st:
			st[-1][2] += d
	elif not text.startswith('/*'):  # a leaf: name(); [/* = retval */]
		us = DUR.search(dur).group(1)
		d = int(round(float(us) * 1000))
		unit = 10 ** (3 - len(us.split('.')[1])) if '.' in us else 1000
		if mode == 'count':
			unit = 0
		add(path + ';' + fold(bare(text.split(';')[0])), d if mode == 'time' else 1, unit)
		if st:
			st[-1][2] += d
			tol[path] = tol.get(path, 0) + unit
for task, st in stacks.items():
	if st:
		sys.exit('%s: %d calls never returned' % (task, len(st)))

pid_of, comm_of = {}, {}
for line in open(hdr):
	m = re.match(r'^# (\S+)-(\d+)/(\d+) ', line)
	if m:
		pid_of[m.group(3)] = m.group(2)
		comm_of.setdefault(m.group(3), m.group(1))
got, bad = {}, 0
for line in open(fol):
	m = re.match(r'^([^ ;]+(?:;[^ ;]+)*) ([1-9]\d*)$', line.rstrip('\n'))
	if not m:
		sys.exit('not "frame;frame value": ' + line)
	proc, rest = m.group(1).split(';', 1)
	if rest in got:
		sys.exit('stack twice: ' + rest)
	tid = rest.split(';')[0].rsplit('-', 1)[1]
	pid = pid_of[tid]
	# the process's name is its main thread's, when that one has a stream
	if proc != '%s-%s' % (comm_of.get(pid, proc.rsplit('-', 1)[0]), pid):
		sys.exit('process frame %s for thread %s' % (proc, tid))
	got[rest] = int(m.group(2))
for k in sorted(set(want) | set(got)):
	w, g = want.get(k, 0), got.get(k, 0)
	if abs(w - g) > tol.get(k, 0):
		if bad < 20:
			print('%s: report %d, folded %d (+-%d)' % (k, w, g, tol.get(k, 0)))
		bad += 1
if not got:
	sys.exit('no stacks')
print('%d stacks, total %d (report %d)' % (len(got), sum(got.values()), sum(want.values())))
sys.exit(1 if bad else 0)
PY

# folded (time and --count) of f.dat against its report
check_folded() { # file
	$TRAIL report -q -O fgraph:proc -t -i "$1" >rep.txt
	$TRAIL report --stat -i "$1" >hdr.txt
	$TRAIL export -F folded -i "$1" >f.txt
	python3 "$TMP/check.py" rep.txt hdr.txt f.txt time
	$TRAIL export -F folded --count -i "$1" >fc.txt
	python3 "$TMP/check.py" rep.txt hdr.txt fc.txt count
}

folded_equals_report() {
	# threads, recursion, a forked child returning through inherited calls
	# (returns without their call: not counted), C++ names
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o a.dat -- "$P2" threads >/dev/null
	check_folded a.dat
	[ "$(cut -d';' -f2 f.txt | sort -u | wc -l)" -eq 5 ] || die "5 threads: $(cat f.txt)"
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o b.dat -- "$P2" deep 300 >/dev/null
	check_folded b.dat
	has fc.txt ";modes$(printf ';deep%.0s' $(seq 301)) 1" # 301 calls deep
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o c.dat -- "$P2" forknest >/dev/null
	check_folded c.dat
	[ "$(cut -d';' -f1 f.txt | sort -u | wc -l)" -eq 2 ] || die "2 processes: $(cat f.txt)"
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o d.dat -- "$CXX" >/dev/null
	check_folded d.dat
	# a space in a name becomes '_' (the demangler's "int app::twice<int>(int)")
	has f.txt ";int_app::twice<int>(int) "
	# the same through the view's selection: only lookup and what it calls
	$TRAIL report -q -O fgraph:proc -t -g lookup -i a.dat >rep.txt
	$TRAIL report --stat -i a.dat >hdr.txt
	$TRAIL export -F folded -g lookup -i a.dat >f.txt
	python3 "$TMP/check.py" rep.txt hdr.txt f.txt time
	[ "$(grep -c ';lookup;hash ' f.txt)" -ge 1 ] && ! grep -q handle_request f.txt ||
		die "-g lookup: $(cat f.txt)"
}

totals_are_the_threads_time() {
	# every thread's values add up to its outermost calls' durations
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o a.dat -- "$P2" 20 >/dev/null
	$TRAIL report -q -i a.dat >rep.txt
	# (durations past 1 ms are printed to 10 ns: that much apart each)
	want=$(awk -F'|' '$2 ~ /^  [^ ]/ && match($1, /[0-9.]+ us/) {
		d = substr($1, RSTART, RLENGTH - 3); s += d * 1000
		if (d >= 1000) tol += 10 } END { printf "%d %d", s + 0.5, tol }' rep.txt)
	got=$($TRAIL export -F folded -i a.dat | awk '{ s += $NF } END { print s }')
	awk -v w="${want% *}" -v t="${want#* }" -v g="$got" 'BEGIN { exit !(w > 0 && g - w <= t && w - g <= t) }' ||
		die "outermost calls $want ns, folded $got"
	# and --count adds up to the calls: leaves and returns with a duration
	want=$(grep -cE '\|  +.*(\(\); |\(\);$|} /\* )' rep.txt || true)
	got=$($TRAIL export -F folded --count -i a.dat | awk '{ s += $NF } END { print s }')
	[ "$want" -eq "$got" ] || die "$want calls in the report, $got in folded"
}

unreturned_and_threshold_calls() {
	# exit() inside nested calls: the calls never return, the view closes
	# them at the end; they are counted
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o e.dat -- "$P2" exit >/dev/null || true
	$TRAIL export -F folded --count -i e.dat >fc.txt
	has fc.txt ";main;modes;about_to_leave;leave 1"
	# record-time threshold: whole calls, their children unknown, each
	# directly on its thread with its duration
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --graph-time-thresh 1ms -o t.dat -- "$P2" nap >/dev/null
	$TRAIL export -F folded -i t.dat >f.txt
	$TRAIL report -q -i t.dat >rep.txt
	[ "$(wc -l <f.txt)" -eq 4 ] || die "4 calls: $(cat f.txt)"
	for fn in nap slow_request modes main; do
		# thread;fn value, within the report's rounding (10 ns past 1 ms)
		v=$(awk -v f="$fn" '{ n = split($1, s, ";") } n == 3 && s[3] == f { print $2 }' f.txt)
		r=$(sed -nE "s/.* ([0-9.]+) us .*\/\* $fn \*\/$/\1/p" rep.txt)
		[ -n "$v" ] && [ -n "$r" ] || die "$fn: folded '$v', report '$r'"
		awk -v v="$v" -v r="$r" 'BEGIN { d = v - r * 1000; exit !(d > -1 && d < 1000) }' ||
			die "$fn: folded $v ns, report $r us"
	done
}

flamegraph_svg() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o a.dat -- "$P2" threads >/dev/null
	$TRAIL export -F flamegraph -i a.dat -o a.svg
	xmllint --noout a.svg
	has a.svg "<title>$P2 threads</title>" # default title: the command
	# a frame per stack drawn, plus the root, processes and threads: by
	# calls (--count), where none is under 0.1 px whatever the timing (by
	# time, a thread's stacks may be, on a loaded machine)
	$TRAIL export -F folded -i a.dat >f.txt
	$TRAIL export -F flamegraph --count -i a.dat -o n.svg
	n=$(grep -c '^<g><title>' n.svg)
	[ "$n" -ge 20 ] || die "$n frames"
	# the root's tooltip: all the calls
	calls=$($TRAIL export -F folded --count -i a.dat | awk '{ s += $NF } END { print s }')
	grep -A1 '^<g><title>all$' a.svg | grep -q "), $calls calls" || die "root: $(grep -A1 '<title>all$' a.svg)"
	# --count: widths are calls; --title, escaped
	$TRAIL export -F flamegraph --count --title 'calls <of> "prog" & co' -i a.dat -o b.svg
	xmllint --noout b.svg
	has b.svg '<title>calls &lt;of&gt; &quot;prog&quot; &amp; co</title>'
	grep -A1 '^<g><title>all$' b.svg | grep -q "^$calls calls (100.00%)<" || die "count root"
	# C++ names escaped and colours by object: the program and libstdc++
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o d.dat -- "$CXX" >/dev/null
	$TRAIL export -F flamegraph --count -i d.dat -o d.svg
	xmllint --noout d.svg
	has d.svg '<title>int app::twice&lt;int&gt;(int)'
	has d.svg ">ftrace-cxx</text>" # the legend
}

# In headless Chromium: an HTML page loads the SVG in an <object>, clicks a
# frame, searches, and writes what it saw into the page, which --dump-dom
# prints.
chromium_runs_it() {
	# --count: every stack wide enough to be drawn
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o h.dat -- "$P2" threads >/dev/null
	$TRAIL export -F flamegraph --count -i h.dat -o h.svg
	cat >h.html <<-'HTML'
	<!DOCTYPE html>
	<html><body><pre id="out">not loaded</pre>
	<object id="o" data="h.svg" type="image/svg+xml" width="1200" height="600"></object>
	<script>
	var errs = [];
	window.onerror = function (m) { errs.push(m); };
	function out(s) { document.getElementById("out").textContent = s; }
	document.getElementById("o").addEventListener("load", function () {
		try {
			var w = this.contentWindow, d = this.contentDocument, api = w.trailFlame;
			w.addEventListener("error", function (e) { errs.push(e.message); });
			if (!api) { out("no trailFlame: the script did not run"); return; }
			var gs = d.getElementById("frames").getElementsByTagName("g"), z = -1, i;
			var rects = d.getElementById("frames").getElementsByTagName("rect");
			var s = api.search("^(hash|lookup)$"), hl = 0;
			for (i = 0; i < rects.length; i++)
				if (rects[i].getAttribute("fill") == "rgb(230,0,230)") hl++;
			var matched = d.getElementById("matched").textContent;
			for (i = 0; i < gs.length && z < 0; i++)
				if (gs[i].getElementsByTagName("title")[0].textContent.split("\n")[0] == "handle_request")
					z = i;
			var r = gs[z].getElementsByTagName("rect")[0], before = +r.getAttribute("width");
			r.dispatchEvent(new w.MouseEvent("click", {bubbles: true}));
			var after = +r.getAttribute("width");
			var hidden = d.querySelectorAll("#frames g.off").length;
			var unzoom = d.getElementById("unzoom").getAttribute("class");
			api.reset();
			out("rects=" + rects.length + " found=" + s.frames + " highlighted=" + hl +
			    " percent=" + s.percent.toFixed(2) + " matched=" + matched.replace(/ /g, "_") +
			    " before=" + before + " after=" + after + " hidden=" + hidden +
			    " unzoom=" + unzoom.replace(/ /g, "_") +
			    " reset=" + r.getAttribute("width") + " errors=" + errs.length + " " + errs.join("|"));
		} catch (e) { out("exception " + e); }
	});
	</script></body></html>
	HTML
	timeout 60 "$CHROMIUM" --headless --disable-gpu --no-sandbox --allow-file-access-from-files \
		--user-data-dir="$TMP/chromium" --virtual-time-budget=5000 --enable-logging=stderr --v=0 \
		--dump-dom "file://$TMP/h.html" >dom.txt 2>log.txt || true
	res=$(sed -n 's/.*<pre id="out">\([^<]*\)<.*/\1/p' dom.txt)
	echo "$res"
	val() { sed -n "s/.* \?$1=\([^ ]*\).*/\1/p" <<<"$res"; }
	# a frame per stack, and the root, 1 process, 5 threads
	$TRAIL export -F folded --count -i h.dat >f.txt
	[ "$(val rects)" -eq $(($(wc -l <f.txt) + 7)) ] || die "frames: $res, $(wc -l <f.txt) stacks"
	# hash and lookup: a frame each in each of the 4 threads; hash is in
	# lookup, so what they cover is lookup's: 4 x (3 lookup + 3 hash) = 24
	# of the 66 calls
	[ "$(val found)" -eq 8 ] && [ "$(val highlighted)" -eq 8 ] || die "search: $res"
	[ "$(val percent)" = 36.36 ] && [ "$(val matched)" = "Matched:_36.36%_(8_frames)" ] ||
		die "matched: $res"
	# zoom: the frame clicked fills the width (1180 px), its callers too;
	# all but it, its 4 callees and its 4 callers are hidden; reset puts
	# it back
	[ "$(val after)" = 1180 ] && [ "$(val reset)" = "$(val before)" ] &&
		awk -v b="$(val before)" 'BEGIN { exit !(b < 1180) }' || die "zoom: $res"
	[ "$(val hidden)" -eq $(($(val rects) - 9)) ] && [ "$(val unzoom)" = btn ] || die "zoom: $res"
	[ "$(val errors)" = 0 ] || die "script errors: $res"
	! grep -i "uncaught" log.txt || die "script errors in the log"
	# the screenshot, a test artefact
	timeout 60 "$CHROMIUM" --headless --disable-gpu --no-sandbox --user-data-dir="$TMP/chromium" \
		--screenshot="$TMP/flame.png" --window-size=1200,800 "file://$TMP/h.svg" >/dev/null 2>&1 || true
	[ -s flame.png ] || die "no screenshot"
	mkdir -p "$ART" && cp flame.png h.svg "$ART/" && echo "$res" >"$ART/harness.txt"
	echo "screenshot: $ART/flame.png"
}

odd_names() {
	# symbols renamed in the program's ELF file: ';', space, newline,
	# markup, a byte that is not UTF-8, a control byte, a UTF-8 letter
	objcopy --redefine-sym "hash=$(printf 'ha;sh me<&>\377\001\303\251')" \
		--redefine-sym "lookup=$(printf 'look\nup')" "$P2" odd
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o o.dat -- ./odd >/dev/null
	$TRAIL export -F folded --count -i o.dat >f.txt
	leaf="ha_sh_me<&>$(printf '\377')_$(printf '\303\251')"
	LC_ALL=C grep -q "^odd-[0-9]*;odd-[0-9]*;main;handle_request;look_up;$leaf 2$" f.txt ||
		die "names: $(cat -v f.txt)"
	[ "$(wc -l <f.txt)" -eq 6 ] || die "$(cat -v f.txt)"
	$TRAIL export -F flamegraph --count -i o.dat -o o.svg
	xmllint --noout o.svg
	has o.svg "<title>ha;sh me&lt;&amp;&gt;??$(printf '\303\251')"
	has o.svg "<title>look?up"
}

no_function_data() {
	# static events only: exit 1, the reason, no file left
	$TRAIL record -q -e 'app:*' -o s.dat -- "$EXAMPLE" >/dev/null
	for fmt in folded flamegraph; do
		expect_rc 1 $TRAIL export -F $fmt -i s.dat -o out.$fmt 2>err.txt
		has err.txt "s.dat: no function_graph calls to export (record with -p function_graph)"
		[ ! -e out.$fmt ] && [ ! -e out.$fmt.part ] || die "$fmt: output left"
		# to standard output: nothing written
		expect_rc 1 $TRAIL export -F $fmt -i s.dat >out.txt 2>err.txt
		[ ! -s out.txt ] || die "$fmt: wrote $(head -3 out.txt)"
		has err.txt "no function_graph calls"
	done
	# the function tracer: records, but no durations
	$TRAIL record -q -p function --no-libcall $NOSAN -o f.dat -- "$P2" >/dev/null
	expect_rc 1 $TRAIL export -F folded -i f.dat -o out 2>err.txt
	has err.txt "recorded with the function tracer: no call durations to export (record with -p function_graph)"
	# a selection that shows no call
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" >/dev/null
	expect_rc 1 $TRAIL export -F flamegraph -g no_such_function -i g.dat -o out 2>err.txt
	has err.txt "no function_graph calls in the selection to export"
	[ ! -e out ] || die "output left"
}

options() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" >/dev/null
	# --count belongs to these formats, --title to the flame graph
	expect_rc 2 $TRAIL export -F text --count -i g.dat -o x 2>err.txt
	has err.txt "--count is for the folded and flamegraph formats"
	expect_rc 2 $TRAIL export -F text --title T -i g.dat -o x 2>err.txt
	has err.txt "--title is for the flamegraph format"
	expect_rc 2 $TRAIL export -F folded --title T -i g.dat -o x 2>err.txt
	has err.txt "--title is for the flamegraph format"
	# an existing output is kept without --force
	echo old >out.svg
	expect_rc 1 $TRAIL export -F flamegraph -i g.dat -o out.svg 2>err.txt
	has out.svg old
	$TRAIL export -F flamegraph --force -i g.dat -o out.svg
	xmllint --noout out.svg
	# listed by --help
	$TRAIL export --help >help.txt
	has help.txt "folded"
	has help.txt "flamegraph"
}

damaged_input() {
	# a truncated file: what can be read is exported, exit status 1
	$TRAIL record -q --chunk-size 4K -p function_graph --no-libcall $NOSAN -o big.dat -- "$P2" 400 >/dev/null
	$TRAIL export -F folded --count -i big.dat >full.txt
	head -c $(($(stat -c %s big.dat) / 2)) big.dat >cut.dat
	expect_rc 1 $TRAIL export -F folded --count -i cut.dat -o cut.txt 2>err.txt
	has err.txt "exported what could be read"
	[ -s cut.txt ] || die "nothing exported"
	python3 - full.txt cut.txt <<-'PY'
	import sys
	full = dict(l.rsplit(' ', 1) for l in open(sys.argv[1]).read().split('\n') if l)
	cut = dict(l.rsplit(' ', 1) for l in open(sys.argv[2]).read().split('\n') if l)
	# the same stacks, fewer calls: nothing invented
	for k, v in cut.items():
	    assert k in full and int(v) <= int(full[k]), (k, v, full.get(k))
	assert sum(map(int, cut.values())) < sum(map(int, full.values()))
	PY
	expect_rc 1 $TRAIL export -F flamegraph -i cut.dat -o cut.svg 2>err.txt
	xmllint --noout cut.svg
}

t folded_equals_report folded_equals_report
t totals_are_the_threads_time totals_are_the_threads_time
t unreturned_and_threshold_calls unreturned_and_threshold_calls
t flamegraph_svg flamegraph_svg
if [ -n "$CHROMIUM" ]; then
	t chromium_runs_it chromium_runs_it
else
	skip chromium_runs_it "no chromium"
fi
if command -v objcopy >/dev/null; then
	t odd_names odd_names
else
	skip odd_names "no objcopy"
fi
t no_function_data no_function_data
t options options
t damaged_input damaged_input
