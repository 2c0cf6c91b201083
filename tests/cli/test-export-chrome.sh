#!/usr/bin/env bash
# trail export --format chrome: the Chrome trace-event JSON of recordings
# of the example (static events), of the function tracers (calls as B/E/X,
# records as instants) and of a program whose strings and numbers are hard
# to write as JSON, checked against what `trail report` shows of the same
# files: valid JSON (jq, python's json module, strict), valid UTF-8, B/E
# balanced and nested per thread, every call, event and loss there with
# its time and values; and the CLI's refusals, damaged inputs.
. "$(dirname "$0")/lib.sh"
NOSAN="-n _sub_I_* -n _sub_D_*"
P2=$BUILD/tests/cli/ftrace-prog-O2
BAD=$BUILD/tests/cli/badstrings
CHECK=$TMP/check.py

cat >"$CHECK" <<'PY'
# check.py MODE JSON [REPORT|HEX]: what the tests assert of a chrome export
import json, re, sys

def fail(msg):
    sys.exit("check.py: " + msg)

def load(path):
    raw = open(path, "rb").read()
    try:
        text = raw.decode("utf-8")  # strict: any invalid byte raises
    except UnicodeDecodeError as e:
        fail("not UTF-8: %s" % e)
    def const(c):
        fail("non-JSON constant %s" % c)
    doc = json.loads(text, parse_constant=const)  # strict: no raw controls
    def walk(v):  # no lone surrogates (\ud800 escapes) either
        if isinstance(v, str):
            v.encode("utf-8")
        elif isinstance(v, list):
            for x in v:
                walk(x)
        elif isinstance(v, dict):
            for k, x in v.items():
                walk(k)
                walk(x)
    walk(doc)
    if doc.get("displayTimeUnit") != "ns" or not isinstance(doc.get("otherData"), dict):
        fail("displayTimeUnit or otherData missing")
    for e in doc["traceEvents"]:
        if e["ph"] != "M" and not isinstance(e["ts"], (int, float)):
            fail("no ts: %r" % e)
        if not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
            fail("pid/tid: %r" % e)
    return doc

def ns(ts):  # a JSON ts/dur (microseconds, 3 decimals) as integer ns
    return int(round(ts * 1000))

def nest(doc):
    """B/E balanced and nested per (pid, tid), in the file's order (per
    thread, time order); X within the call open around it."""
    stacks, n = {}, {"B": 0, "E": 0, "X": 0, "open": 0}
    for e in doc["traceEvents"]:
        ph, key = e["ph"], (e["pid"], e["tid"])
        st = stacks.setdefault(key, [])
        if ph == "B":
            if st and ns(e["ts"]) < ns(st[-1]["ts"]):
                fail("B before its parent's B: %r" % e)
            st.append(e)
        elif ph == "E":
            if not st:
                fail("E with no B on %r: %r" % (key, e))
            b = st.pop()
            if ns(e["ts"]) < ns(b["ts"]):
                fail("E before its B: %r %r" % (b, e))
            n["open"] += bool(e.get("args", {}).get("open"))
        elif ph == "X":
            if st and ns(e["ts"]) < ns(st[-1]["ts"]):
                fail("X before the call around it: %r" % e)
        n[ph] = n.get(ph, 0) + 1
    for key, st in stacks.items():
        if st:
            fail("%d B without E on %r" % (len(st), key))
    if n["B"] != n["E"]:
        fail("%d B, %d E" % (n["B"], n["E"]))
    return n

NAMES = {}  # id(doc) -> names(doc): read once a document, not once an event

def names(doc):  # (pid, tid) -> thread_name, pid -> process_name
    if id(doc) in NAMES:
        return NAMES[id(doc)]
    th, pr = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] == "M" and e["name"] == "thread_name":
            th[(e["pid"], e["tid"])] = e["args"]["name"]
        if e["ph"] == "M" and e["name"] == "process_name":
            pr[e["pid"]] = e["args"]["name"]
    NAMES[id(doc)] = (th, pr)
    return th, pr

def track_named(doc, e):
    th, pr = names(doc)
    if (e["pid"], e["tid"]) not in th or e["pid"] not in pr:
        fail("no track names for %r" % e)
    return th[(e["pid"], e["tid"])]

# `trail report -q -t -O fgraph:abstime -O fgraph:proc` lines
GRAPH = re.compile(r"^ *(\d+)\.(\d{9}) \| +[0-9?]+\) +(.*)-(\d+) +\| +[ !+#*@$]? *([0-9.]+) us +\|  (.*)$|"
                   r"^ *(\d+)\.(\d{9}) \| +[0-9?]+\) +(.*)-(\d+) +\| +\|  (.*)$")

def graph_report(path):
    """per tid: ("B", name, ts) ("X", name, ts, dur) ("E", ts, dur) and
    closes of calls with no entry ("N", ts); the report's text of a name"""
    per = {}
    for line in open(path, "rb").read().decode("utf-8", "surrogateescape").splitlines():
        m = GRAPH.match(line)
        if not m:
            continue
        if m.group(1):
            s, f, tid, dur, body = m.group(1), m.group(2), m.group(4), m.group(5), m.group(6)
        else:
            s, f, tid, dur, body = m.group(7), m.group(8), m.group(10), None, m.group(11)
        ts = int(s) * 10**9 + int(f)
        body = body.strip()
        seq = per.setdefault(int(tid), [])
        if body.startswith("/*"):
            continue
        if body.startswith("}"):
            seq.append(("E", ts, dur) if dur else ("N", ts))
        elif body.endswith(" {"):
            seq.append(("B", body[:-2], ts))
        else:
            seq.append(("X", body.split(";")[0], ts, dur))
    return per

def dur_eq(report, d_ns):  # report's microseconds keep what fits of 3 decimals
    whole, _, frac = report.partition(".")
    return int(whole + frac) == d_ns // 10 ** (3 - len(frac))

def call_text(name):  # as the function_graph layout writes a call
    return name if "(" in name else name + "()"

def graph(doc, report):
    """every call of the report, in order per thread, with its times"""
    want = graph_report(report)
    got, open_b = {}, {}
    for e in doc["traceEvents"]:
        if e["ph"] not in "BEX" or (e["ph"] != "E" and e["cat"] != "function_graph"):
            continue
        seq = got.setdefault(e["tid"], [])
        st = open_b.setdefault(e["tid"], [])
        if e["ph"] == "B":
            seq.append(("B", call_text(e["name"]), ns(e["ts"])))
            st.append(ns(e["ts"]))
        elif e["ph"] == "X":
            seq.append(("X", call_text(e["name"]), ns(e["ts"]), ns(e["dur"])))
        elif e["ph"] == "E":
            seq.append(("E", ns(e["ts"]), ns(e["ts"]) - st.pop(), e.get("args", {}).get("open")))
    nostart = 0
    for tid, w in want.items():
        g = got.get(tid, [])
        i = 0
        for x in w:
            if x[0] == "N":  # no entry: not exported
                nostart += 1
                continue
            if i >= len(g):
                fail("tid %d: %r missing" % (tid, x))
            y = g[i]
            i += 1
            ok = x[0] == y[0] and (
                (x[0] == "B" and x[1:] == y[1:]) or
                (x[0] == "X" and x[1:3] == y[1:3] and dur_eq(x[3], y[3])) or
                (x[0] == "E" and x[1] == y[1] and dur_eq(x[2], y[2])))
            if not ok:
                fail("tid %d call %d: report %r, json %r" % (tid, i, x, y))
        # the rest: the view's closes of calls still open (report shows none)
        for y in g[i:]:
            if y[0] != "E" or not y[3]:
                fail("tid %d: %r not in the report" % (tid, y))
    if set(got) - set(want):
        fail("threads not in the report: %r" % (set(got) - set(want)))
    if nostart != doc["otherData"]["exits_without_entry"]:
        fail("%d exits without entry in the report, otherData says %d" %
             (nostart, doc["otherData"]["exits_without_entry"]))
    return sum(len(v) for v in got.values())

# `trail report -q -t` lines
LINE = re.compile(r"^ *(.*)-(\d+) +\[[0-9?]+\] +(\d+)\.(\d{9}): (.*)$")

def unescape(s):  # report's C escapes -> the bytes
    out, i, raw = bytearray(), 0, s.encode("utf-8", "surrogateescape")
    while i < len(raw):
        c = raw[i]
        if c == 0x5c:
            n = chr(raw[i + 1])
            if n == "x":
                out.append(int(raw[i + 2:i + 4], 16))
                i += 4
                continue
            out += {"n": b"\n", "t": b"\t", "r": b"\r"}.get(n, n.encode())
            i += 2
            continue
        out.append(c)
        i += 1
    return bytes(out)

def tokens(fields):  # "a=1 s="x y" c={1,2}" -> [(a, 1), (s, "x y"), ...]
    out, i = [], 0
    while i < len(fields):
        eq = fields.index("=", i)
        name, i = fields[i:eq], eq + 1
        if fields[i] == '"':
            j = i + 1
            while j < len(fields) and fields[j] != '"':
                j += 2 if fields[j] == "\\" else 1
            if j >= len(fields):  # report cut a long line: the rest unknown
                return out
            val, i = fields[i:j + 1], j + 2
        else:
            j = fields.find(" ", i)
            j = len(fields) if j < 0 else j
            val, i = fields[i:j], j + 1
        out.append((name, val))
    return out

def same_int(v, r):
    if isinstance(v, bool):
        return r == str(int(v))
    if isinstance(v, str):  # hex, or an integer past 2^53 as its digits
        return v == r and (v.startswith("0x") or abs(int(v)) > 2**53 - 1)
    return isinstance(v, int) and abs(v) <= 2**53 - 1 and int(r) == v

def same(v, r):
    if r == "(null)":
        return v is None
    if r.startswith('"'):
        return isinstance(v, str) and unescape(r[1:-1]).decode("utf-8", "replace") == v
    if r.startswith("{"):
        items = r[1:-1].split(",") if r != "{}" else []
        return isinstance(v, list) and len(v) == len(items) and all(map(same_int, v, items))
    if isinstance(v, float) or r in ("nan", "-nan", "inf", "-inf") or "." in r or "e" in r:
        special = {"NaN": ("nan", "-nan"), "Infinity": ("inf",), "-Infinity": ("-inf",)}
        if isinstance(v, str):
            return r in special.get(v, ())
        return "%g" % v == r
    return same_int(v, r)

def events(doc, report):
    """every line of the report an instant, in order, with its thread,
    time, name and values"""
    got = [e for e in doc["traceEvents"] if e["ph"] == "i"]
    lines = []
    for l in open(report, "rb").read().decode("utf-8", "surrogateescape").splitlines():
        m, g = LINE.match(l), GRAPH.match(l)
        if m:
            lines.append((l, m.groups()))
        elif g and g.group(11) and g.group(11).strip().startswith("/* "):
            # an event in a function_graph layout: a comment in the tree
            lines.append((l, (g.group(9), g.group(10), g.group(7), g.group(8),
                              g.group(11).strip()[3:-3])))
    if len(got) != len(lines):
        fail("%d instants, %d report lines" % (len(got), len(lines)))
    lost = 0
    for e, (line, groups) in zip(got, lines):
        comm, tid, s, f, rest = groups
        if e["tid"] != int(tid) or ns(e["ts"]) != int(s) * 10**9 + int(f):
            fail("thread or time: %r vs %s" % (e, line))
        if track_named(doc, e)[:16] != comm.strip():
            fail("thread name %r vs %s" % (track_named(doc, e), line))
        m = re.match(r"^\[LOST (\d+) EVENTS\]$", rest)
        if m:
            if e["name"] != "LOST" or e["args"] != {"lost": int(m.group(1))}:
                fail("LOST: %r vs %s" % (e, line))
            lost += int(m.group(1))
            continue
        m = re.match(r"^(\w+:\w+): (.*)$", rest)
        if m and e.get("cat") != "ftrace":
            if e["name"] != m.group(1) or e["cat"] != m.group(1).split(":")[0]:
                fail("name: %r vs %s" % (e, line))
            toks = tokens(m.group(2))
            if [k for k, _ in toks] != list(e["args"])[:len(toks)] or (not toks and e["args"]):
                fail("fields: %r vs %s" % (e, line))
            for k, r in toks:
                if not same(e["args"][k], r):
                    fail("field %s: %r vs %s" % (k, e["args"][k], r))
            continue
        func, _, parent = rest.partition(" <-")
        if e["name"] != func or e["args"]["parent"] != parent or e["cat"] != "ftrace" \
                or not e["args"]["ip"].startswith("0x") or not e["args"]["parent_ip"].startswith("0x"):
            fail("function: %r vs %s" % (e, line))
    return len(got), lost

def strings(doc, hexfile):
    """bad:str i=N holds the bytes badstrings printed for N (a string
    field keeps 4095), as UTF-8 with U+FFFD per maximal ill-formed subpart"""
    want = {}
    for line in open(hexfile):
        i, _, h = line.strip().partition(" ")
        want[int(i)] = bytes.fromhex(h)[:4095].decode("utf-8", "replace")
    got = {e["args"]["i"]: e["args"]["s"] for e in doc["traceEvents"] if e.get("name") == "bad:str"}
    if got.pop(-1, "missing") is not None:
        fail("a NULL string is not null")
    if got != want:
        for i in want:
            if got.get(i) != want[i]:
                fail("string %d: %r, wanted %r" % (i, got.get(i), want[i]))
        fail("strings: %r" % got)
    return len(got)

mode, path = sys.argv[1], sys.argv[2]
doc = load(path)
if mode == "valid":
    print(len(doc["traceEvents"]))
elif mode == "nest":
    n = nest(doc)
    print(n["B"], n["X"], n["open"])
elif mode == "graph":
    nest(doc)
    print(graph(doc, sys.argv[3]))
elif mode == "events":
    print(*events(doc, sys.argv[3]))
elif mode == "strings":
    print(strings(doc, sys.argv[3]))
elif mode == "other":
    print(doc["otherData"][sys.argv[3]])
PY

check() { python3 "$CHECK" "$@"; }
export_json() { # in.dat out.json [options]
	local in=$1 out=$2; shift 2
	rm -f "$out"
	$TRAIL export -q -F chrome -i "$in" -o "$out" "$@"
	jq -e '.traceEvents | length > 0' "$out" >/dev/null || die "jq: $out"
	python3 -m json.tool "$out" >/dev/null || die "json.tool: $out"
}
greport() { $TRAIL report -q -t -O fgraph:abstime -O fgraph:proc -i "$@"; }

static_events() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE" 4 50 >/dev/null
	export_json ex.dat ex.json
	$TRAIL report -q -t -i ex.dat >rep.txt
	read -r n lost < <(check events ex.json rep.txt)
	# start, stop, and per worker 50 x (request + reply) + stats
	[ "$n" -eq $((2 + 4 * 101)) ] || die "$n instants"
	[ "$lost" -eq 0 ] || die "lost $lost"
	[ "$(check other ex.json lost_events)" -eq 0 ] || die "otherData lost"
	# typed: hex as a string, bool as a boolean, arrays as arrays
	jq -e '[.traceEvents[] | select(.name == "app:request")][0].args.bytes | test("^0x[0-9a-f]+$")' ex.json >/dev/null
	jq -e '[.traceEvents[] | select(.name == "app:reply")][0].args.cached | type == "boolean"' ex.json >/dev/null
	jq -e '[.traceEvents[] | select(.name == "app:stats")][0].args.buckets | type == "array"' ex.json >/dev/null
	jq -e '[.traceEvents[] | select(.ph == "i")] | all(.s == "t")' ex.json >/dev/null
	# one track name per thread, the process named
	[ "$(jq '[.traceEvents[] | select(.name == "thread_name")] | length' ex.json)" -eq 5 ] ||
		die "thread names"
	[ "$(jq -r '.traceEvents[] | select(.name == "process_name") | .args.name' ex.json)" = example ] ||
		die "process name"
	jq -e '.otherData.events == "app:*"' ex.json >/dev/null
	# the view's selection applies
	export_json ex.dat sel.json --tid "$(jq '[.traceEvents[] | select(.name == "app:request")][0].tid' ex.json)"
	[ "$(jq '[.traceEvents[] | select(.ph == "i")] | length' sel.json)" -eq 101 ] || die "--tid"
	# nothing selected: still a complete document
	$TRAIL export -q -F chrome -i ex.dat --time-range +100s,+200s >none.json
	[ "$(jq -c .traceEvents none.json)" = "[]" ] || die "empty selection"
	check valid none.json >/dev/null
}

graph_calls() {
	# threads: 4 threads of calls; -O2 and -O0 trees
	for p in "$P2" "$BUILD/tests/cli/ftrace-prog-O0"; do
		$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -o g.dat -- "$p" threads >/dev/null
		export_json g.dat g.json
		greport g.dat >rep.txt
		n=$(check graph g.json rep.txt)
		[ "$n" -gt 100 ] || die "$n calls and returns"
		read -r b x open < <(check nest g.json)
		# the calls in the report: its lines "name() {" and "name();"
		calls=$(awk -F'|' 'NF > 2 { b = $NF; sub(/^ +/, "", b) }
			NF > 2 && b !~ /^[}\/]/ && b ~ /( \{|;.*)$/ { n++ } END { print n + 0 }' rep.txt)
		[ $((b + x)) -eq "$calls" ] || die "$b B + $x X, the report has $calls calls"
		[ "$open" -eq 0 ] || die "$open open"
		[ "$(jq '[.traceEvents[] | select(.ph == "B" or .ph == "X") | .tid] | unique | length' g.json)" -eq 5 ] ||
			die "threads"
		# return values in args, as the report shows them: typed by
		# DWARF (numbers; pointers "0x..."), the same values
		grep -o '= [^ ]* \*/$' rep.txt | awk '{ print $2 }' | sort >rv-report.txt
		jq -r '.traceEvents[] | select(.ph == "E" or .ph == "X") | .args.retval |
			select(. != null) | tostring' g.json | sort >rv-export.txt
		[ -s rv-report.txt ] && cmp -s rv-report.txt rv-export.txt ||
			die "retvals: $(diff rv-report.txt rv-export.txt | head -5)"
	done
}

open_and_nostart_calls() {
	# exit() four calls deep: four calls open at the end, closed (OPEN)
	rc=0
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o x.dat -- "$P2" exit || rc=$?
	[ "$rc" -eq 3 ] || die "exit status $rc"
	export_json x.dat x.json
	read -r b x open < <(check nest x.json)
	[ "$b" -eq 4 ] && [ "$open" -eq 4 ] || die "$b B, $open open"
	greport x.dat >rep.txt
	check graph x.json rep.txt >/dev/null
	# a forked child returns through frames its parent entered: no B for
	# those (skipped, counted), the rest balanced
	$TRAIL record -q -p function_graph $NOSAN -l 'fork_*' -l hash -o k.dat -- "$P2" forknest
	export_json k.dat k.json
	check nest k.json >/dev/null
	greport k.dat >rep.txt
	check graph k.json rep.txt >/dev/null
	[ "$(check other k.json exits_without_entry)" -eq 3 ] || die "exits without entry"
	[ "$(jq '[.traceEvents[] | select(.name == "process_name")] | length' k.json)" -eq 2 ] ||
		die "two processes"
	# record-time threshold calls are whole calls: X
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --graph-time-thresh 1ms -o th.dat -- "$P2" nap >/dev/null
	export_json th.dat th.json
	read -r b x open < <(check nest th.json)
	[ "$b" -eq 0 ] && [ "$x" -eq 4 ] || die "threshold: $b B, $x X"
	# the view's selection: depth
	export_json k.dat d.json --max-graph-depth 1
	check nest d.json >/dev/null
	[ "$(jq -r '[.traceEvents[] | select(.ph == "B" or .ph == "X") | .name] | unique | join(" ")' d.json)" = fork_outer ] ||
		die "--max-graph-depth 1"
}

function_tracer() {
	$TRAIL record -q -p function --no-libcall $NOSAN -o f.dat -- "$P2" threads >/dev/null
	export_json f.dat f.json
	$TRAIL report -q -t -i f.dat >rep.txt
	read -r n lost < <(check events f.json rep.txt)
	[ "$n" -gt 50 ] || die "$n records"
	jq -e '[.traceEvents[] | select(.ph == "B" or .ph == "E" or .ph == "X")] | length == 0' f.json >/dev/null
}

lost_events() {
	$TRAIL record -q -b 64K --chunk-size 4K -e 'app:*' -o l.dat -- "$EXAMPLE" 20 2000
	export_json l.dat l.json
	$TRAIL report -t -i l.dat >rep.txt
	written=$(sed -n 's/.*entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/\2 - \1/p' rep.txt)
	[ "$((written))" -gt 0 ] || die "a 64 KiB buffer lost nothing: no test"
	[ "$(check other l.json lost_events)" -eq "$((written))" ] || die "otherData lost_events"
	read -r n lost < <(check events l.json rep.txt)
	[ "$lost" -gt 0 ] || die "no LOST instants"
	[ "$(jq '[.traceEvents[] | select(.name == "LOST")] | length' l.json)" -eq "$(grep -c 'LOST.*EVENTS' rep.txt)" ] ||
		die "LOST records"
}

hostile_strings() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -e 'bad:*' -o b.dat -- "$BAD" >hex.txt
	export_json b.dat b.json
	[ "$(check strings b.json hex.txt)" -eq 13 ] || die "strings"
	# the calls, their quoted and bracketed names escaped, and the fields
	# against report's
	greport b.dat >rep.txt
	check graph b.json rep.txt >/dev/null
	read -r n lost < <(check events b.json rep.txt)
	[ "$n" -eq 19 ] || die "$n events"
	jq -e '[.traceEvents[] | .name] | index("operator\"\" _km(unsigned long long)") and index("int max<int>(int, int)")' b.json >/dev/null ||
		die "C++ names"
	# numbers a double cannot hold are strings; NaN and the infinities too
	jq -c '[.traceEvents[] | select(.name == "bad:nums")][0].args' b.json >n.txt
	has n.txt '"big":"9007199254740993","safe":9007199254740991,"neg":"-9223372036854775808","negsafe":-9007199254740991,"hex":"0xffffffffffffffff","small":-128,"yes":true,"d":"NaN","f":0.1,"arr":[1,"9007199254740993","18446744073709551615"],"codes":["0x1","0x20000000000001"]'
	jq -c '[.traceEvents[] | select(.name == "bad:nums") | [.args.d, .args.f]]' b.json >f.txt
	has f.txt '[["NaN",0.1],["Infinity","-Infinity"],[-0,3.4028235e+38],[1e+300,1.4013e-45],[0.1,"NaN"]]'
	# the raw bytes: no control byte, every escape one JSON has
	! LC_ALL=C grep -qP '[\x00-\x09\x0b-\x1f]' b.json || die "raw control bytes"
	! grep -qE '\\u[dD][89abAB]' b.json || die "surrogate escapes"
}

refusals() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE" 1 1 >/dev/null
	echo old >o.json
	expect_rc 1 $TRAIL export -q -F chrome -i ex.dat -o o.json 2>err.txt
	has err.txt "o.json exists (--force replaces it)"
	[ "$(cat o.json)" = old ] || die "replaced without --force"
	$TRAIL export -q -F chrome -i ex.dat -o o.json --force
	check valid o.json >/dev/null
	mkdir -p dir.json
	expect_rc 1 $TRAIL export -q -F chrome -i ex.dat -o dir.json 2>err.txt
	has err.txt "dir.json is a directory"
	expect_rc 1 $TRAIL export -q -F chrome -i ex.dat -o dir.json --force 2>err.txt
	[ -z "$(ls dir.json)" ] || die "wrote into the directory"
	# standard output, and a full one
	$TRAIL export -q -F chrome -i ex.dat | check valid /dev/stdin >/dev/null
	expect_rc 1 $TRAIL export -q -F chrome -i ex.dat >/dev/full 2>err.txt
}

damaged_inputs() {
	$TRAIL record -q --chunk-size 4K -e 'app:*' -o big.dat -- "$EXAMPLE" 4 2000 >/dev/null
	size=$(stat -c %s big.dat)
	# truncated: the END and some chunks gone
	head -c $((size * 6 / 10)) big.dat >cut.dat
	expect_rc 1 $TRAIL export -q -F chrome -i cut.dat -o cut.json 2>err.txt
	has err.txt "exported what could be read"
	expect_rc 1 $TRAIL report -q -t -i cut.dat >rep.txt 2>/dev/null
	read -r n lost < <(check events cut.json rep.txt)
	[ "$n" -gt 100 ] || die "$n events from a truncated file"
	jq -e '.otherData.damage | length > 0' cut.json >/dev/null || die "no damage in otherData"
	# bytes of a chunk in the middle overwritten
	cp big.dat bad.dat
	printf 'garbage!garbage!garbage!' | dd of=bad.dat bs=1 seek=$((size / 2)) conv=notrunc status=none
	expect_rc 1 $TRAIL export -q -F chrome -i bad.dat -o bad.json 2>/dev/null
	expect_rc 1 $TRAIL report -q -t -i bad.dat >rep.txt 2>/dev/null
	read -r n lost < <(check events bad.json rep.txt)
	[ "$n" -gt 1000 ] || die "$n events from a damaged file"
	# a function_graph file cut: the calls still balanced
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" 20000 >/dev/null
	size=$(stat -c %s g.dat)
	head -c $((size / 2)) g.dat >gcut.dat
	expect_rc 1 $TRAIL export -q -F chrome -i gcut.dat -o gcut.json 2>/dev/null
	read -r b x open < <(check nest gcut.json)
	[ "$b" -gt 1000 ] || die "$b calls"
}

t static_events static_events
t graph_calls graph_calls
t open_and_nostart_calls open_and_nostart_calls
t function_tracer function_tracer
t lost_events lost_events
t hostile_strings hostile_strings
t refusals refusals
t damaged_inputs damaged_inputs
