#!/usr/bin/env bash
# trail export --format perfetto: the file decodes with protoc against the
# schema subset (tests/export/perfetto_subset.proto, Perfetto's field
# numbers), is read back the way trace_processor reads it (pfcheck.py
# below: one sequence, state cleared first, iids and tracks defined before
# use, timestamps as deltas of the sequence clock, begin/end balanced per
# track), and says what `trail report` says of the same file: the same
# calls, nesting, names, times, durations and return values; the same
# events with the same field values; the same losses.
. "$(dirname "$0")/lib.sh"
PROTO=$SRC/tests/export
P0=$BUILD/tests/cli/ftrace-prog-O0
P2=$BUILD/tests/cli/ftrace-prog-O2
NOSAN="-n _sub_I_* -n _sub_D_*"

cat >"$TMP/pfcheck.py" <<'PY'
#!/usr/bin/env python3
# pfcheck.py - reads `protoc --decode=perfetto.protos.Trace` text of a trail
# export, checks it as trace_processor would read it (one sequence, state
# cleared first, every iid and track defined before use, begin/end balanced
# per track) and prints its content in the form of `trail report` lines.
#   pfcheck.py decoded.txt calls|thresh|flat   (the trace, as report shows it)
#   pfcheck.py report.txt report-calls|report-thresh|report-flat
import re, sys

def die(msg):
    sys.exit("pfcheck: " + msg)

def unescape(s):
    out, i = bytearray(), 0
    simple = {'n': 10, 't': 9, 'r': 13, '"': 34, "'": 39, '\\': 92, 'a': 7, 'b': 8, 'f': 12, 'v': 11}
    while i < len(s):
        c = s[i]
        if c != '\\':
            out += c.encode()
            i += 1
            continue
        n = s[i + 1]
        if n in simple:
            out.append(simple[n]); i += 2
        elif n in '01234567':
            j = i + 1
            while j < len(s) and j < i + 4 and s[j] in '01234567':
                j += 1
            out.append(int(s[i + 1:j], 8)); i = j
        elif n == 'x':
            j = i + 2
            while j < len(s) and j < i + 4 and s[j] in '0123456789abcdefABCDEF':
                j += 1
            out.append(int(s[i + 2:j], 16)); i = j
        else:
            die("escape " + s[i:i + 2])
    return out.decode('utf-8')

def value(v):
    if v.startswith('"'):
        return unescape(v[1:-1])
    if v in ('true', 'false'):
        return v == 'true'
    if re.fullmatch(r'-?\d+', v):
        return int(v)
    if re.fullmatch(r'[A-Z_][A-Z0-9_]*', v):
        return v
    return float(v)

def parse(path):
    root = {}
    stack = [root]
    for line in open(path, encoding='utf-8'):
        line = line.strip()
        if not line:
            continue
        if line == '}':
            stack.pop()
        elif line.endswith(' {'):
            d = {}
            stack[-1].setdefault(line[:-2], []).append(d)
            stack.append(d)
        else:
            k, v = line.split(': ', 1)
            stack[-1].setdefault(k, []).append(value(v))
    if len(stack) != 1:
        die("unbalanced text")
    return root.get('packet', [])

def one(d, k, default=None):
    v = d.get(k)
    if not v:
        return default
    if len(v) != 1:
        die("%s repeated" % k)
    return v[0]

NS = {'event_names': 'name', 'event_categories': 'name', 'debug_annotation_names': 'name',
      'debug_annotation_string_values': 'str'}

def replay(packets):
    if not packets:
        die("no packets")
    first = packets[0]
    if one(first, 'sequence_flags') != 1 or one(first, 'trusted_packet_sequence_id') != 1:
        die("first packet does not clear the state of sequence 1")
    defaults = one(first, 'trace_packet_defaults', {})
    if one(defaults, 'timestamp_clock_id') != 64:
        die("no default clock 64")
    deftrack = one(one(defaults, 'track_event_defaults', {}), 'track_uuid')
    cs = one(first, 'clock_snapshot')
    clocks = {one(c, 'clock_id'): c for c in cs['clocks']}
    if one(cs, 'primary_trace_clock') != 'BUILTIN_CLOCK_MONOTONIC' or 3 not in clocks \
            or not one(clocks[64], 'is_incremental'):
        die("clock snapshot: %r" % cs)
    clock = one(clocks[64], 'timestamp') - one(clocks[3], 'timestamp')
    interned = {k: {} for k in NS}
    tracks, events = {}, []
    for i, p in enumerate(packets[1:], 1):
        if one(p, 'trusted_packet_sequence_id') != 1 or one(p, 'sequence_flags') != 2:
            die("packet %d: not on sequence 1 with SEQ_NEEDS_INCREMENTAL_STATE" % i)
        for idata in p.get('interned_data', []):
            for k, entries in idata.items():
                for e in entries:
                    iid, s = one(e, 'iid'), one(e, NS[k])
                    if not iid or interned[k].get(iid, s) != s:
                        die("packet %d: %s iid %r redefined" % (i, k, iid))
                    interned[k][iid] = s
        ts = None
        if 'timestamp' in p:
            if one(p, 'timestamp_clock_id', 64) != 64:
                die("packet %d: another clock" % i)
            clock = (clock + one(p, 'timestamp')) % (1 << 64)
            ts = clock
        for td in p.get('track_descriptor', []):
            u = one(td, 'uuid')
            if u in tracks:
                die("track %d twice" % u)
            par = one(td, 'parent_uuid')
            if par is not None and par not in tracks:
                die("track %d: parent %d not defined before" % (u, par))
            tracks[u] = td
        for te in p.get('track_event', []):
            u = one(te, 'track_uuid', deftrack)
            if u not in tracks or ts is None:
                die("packet %d: event on unknown track %r or without time" % (i, u))
            name = one(te, 'name')
            if 'name_iid' in te:
                name = interned['event_names'].get(one(te, 'name_iid'))
                if name is None:
                    die("packet %d: name_iid undefined" % i)
            for c in te.get('category_iids', []):
                if c not in interned['event_categories']:
                    die("packet %d: category iid undefined" % i)
            args = []
            for a in te.get('debug_annotations', []):
                an = interned['debug_annotation_names'].get(one(a, 'name_iid'))
                if an is None:
                    die("packet %d: annotation name iid undefined" % i)
                args.append((an, annot_value(a, interned)))
            events.append((ts, i, u, one(te, 'type'), name, args))
    return tracks, events

def annot_value(a, interned):
    for k in ('bool_value', 'uint_value', 'int_value', 'double_value', 'pointer_value',
              'string_value'):
        if k in a:
            return (k, one(a, k))
    if 'string_value_iid' in a:
        s = interned['debug_annotation_string_values'].get(one(a, 'string_value_iid'))
        if s is None:
            die("string_value_iid undefined")
        return ('string_value', s)
    return ('array', [annot_value(e, interned) for e in a.get('array_values', [])])

def fmt_value(v):
    k, x = v
    if k == 'bool_value':
        return '1' if x else '0'
    if k == 'pointer_value':
        return hex(x)
    if k == 'double_value':
        return '%g' % x
    if k == 'string_value':
        if x == '(null)':
            return x
        return '"' + x.replace('\\', '\\\\').replace('"', '\\"').replace('\n', '\\n') \
            .replace('\t', '\\t').replace('\r', '\\r') + '"'
    if k == 'array':
        return '{' + ','.join(fmt_value(e) for e in x) + '}'
    return str(x)

def tid_of(tracks, u):
    while u in tracks:
        th = one(tracks[u], 'thread')
        if th:
            return one(th, 'tid')
        u = one(tracks[u], 'parent_uuid')
    return 0

def dur(ns):
    us = str(ns // 1000)
    if len(us) < 6:
        k = min(3, 6 - len(us))
        us += '.' + str(ns % 1000 // 10 ** (3 - k)).zfill(k)
    return us

def ts_text(ns):
    return '%d.%09d' % (ns // 10**9, ns % 10**9)

def instant_text(name, args):
    if name.startswith('LOST '):
        return '[LOST %d EVENTS]' % dict(args)['lost'][1]
    d = dict(args)
    if list(d) == ['parent']:
        return '%s <-%s' % (name, d['parent'][1])
    return '%s: %s' % (name, ' '.join('%s=%s' % (k, fmt_value(v)) for k, v in args))

def trace_lines(mode, tracks, events):
    by_track = {}
    for e in events:
        by_track.setdefault(e[2], []).append(e)
    out = []
    for u in sorted(by_track, key=lambda u: tid_of(tracks, u)):
        evs = sorted(by_track[u], key=lambda e: (e[0], e[1]))  # as trace_processor sorts
        tid, stack, lines = tid_of(tracks, u), [], []
        for ts, i, _, typ, name, args in evs:
            if typ == 'TYPE_SLICE_BEGIN':
                before = 'entered_before_trace' in dict(args)
                if not before:
                    lines.append(None)
                stack.append((ts, name, None if before else len(lines) - 1))
            elif typ == 'TYPE_SLICE_END':
                if not stack:
                    die("track %d: end without begin at %d" % (u, ts))
                start, n, at = stack.pop()
                a = dict(args)
                ret = ' = %s' % hex(a['retval'][1]) if 'retval' in a else ''
                if at is None:  # its return only: where it returns
                    lines.append('%d %d %s NOSTART%s' % (tid, len(stack), n, ret))
                elif mode == 'thresh':
                    lines[at] = '%d %s %s end %s%s' % (tid, n, dur(ts - start), ts_text(ts), ret)
                elif 'unfinished' in a:
                    lines[at] = '%d %d %s at %s OPEN' % (tid, len(stack), n, ts_text(start))
                else:
                    lines[at] = '%d %d %s at %s %s%s' % (tid, len(stack), n, ts_text(start),
                                                       dur(ts - start), ret)
            elif typ == 'TYPE_INSTANT':
                text = instant_text(name, args)
                if mode == 'flat':
                    lines.append('%d %s %s' % (tid, ts_text(ts), text))
                elif mode == 'calls':
                    lines.append('%d %d /* %s */ at %s' % (tid, len(stack), text, ts_text(ts)))
            else:
                die("event type %r" % typ)
        if stack:
            die("track %d: %d slices never end" % (u, len(stack)))
        out += [l for l in lines if l is not None]
    if mode == 'thresh':
        out.sort()
    return out

# trail report -q -t -O fgraph:proc
GRAPH = re.compile(r'^ *(\d+)\.(\d{9}) \| +[\d?]+\) +(.*)-(\d+) +\| +(?:[ +!#*@$] +([\d.]+) us)? +\|  (.*)$')

def report_calls(path, mode):
    stacks, out = {}, {}
    for line in open(path, encoding='utf-8'):
        m = GRAPH.match(line.rstrip('\n'))
        if not m:
            if '|' in line:
                die("report line: " + line)
            continue
        ts = int(m.group(1)) * 10**9 + int(m.group(2))
        tid, d, text = int(m.group(4)), m.group(5), m.group(6)
        depth = (len(text) - len(text.lstrip(' '))) // 2
        text = text.strip()
        st, lines = stacks.setdefault(tid, []), out.setdefault(tid, [])
        if text.startswith('/* '):
            lines.append('%d %d %s at %s' % (tid, depth, text, ts_text(ts)))
        elif text.endswith(' {'):
            lines.append(None)
            st.append((ts, bare(text[:-2]), len(lines) - 1, depth))
        elif text.startswith('}'):
            r = re.fullmatch(r'\} /\* (.*?)(?: = (-?[0-9]+|0x[0-9a-f]+))? \*/', text)
            if not r:
                continue  # a return from an unknown function: no slice
            ret = ' = ' + r.group(2) if r.group(2) else ''
            if mode == 'thresh':
                lines.append('%d %s %s end %s%s' % (tid, r.group(1), d, ts_text(ts), ret))
                continue
            if d is None:  # entered before the trace
                lines.append('%d %d %s NOSTART%s' % (tid, depth, r.group(1), ret))
                continue
            start, n, at, dep = st.pop()
            lines[at] = '%d %d %s at %s %s%s' % (tid, dep, n, ts_text(start), d, ret)
        else:
            r = re.fullmatch(r'(.*);(?: /\* = (-?[0-9]+|0x[0-9a-f]+) \*/)?', text)
            ret = ' = ' + r.group(2) if r.group(2) else ''
            lines.append('%d %d %s at %s %s%s' % (tid, depth, bare(r.group(1)), ts_text(ts), d, ret))
    res = []
    for tid in sorted(out):
        for start, n, at, dep in stacks[tid]:
            out[tid][at] = '%d %d %s at %s OPEN' % (tid, dep, n, ts_text(start))
        res += out[tid]
    if mode == 'thresh':
        res.sort()
    return res

def bare(call):  # "f()" as report writes a name without parameters
    return call[:-2] if call.endswith('()') and '(' not in call[:-2] else call

# trail report -q -t
FLAT = re.compile(r'^ *(.*)-(\d+) +\[[\d?]+\] +(\d+)\.(\d{9}): (.*)$')

def report_flat(path):
    out = {}
    for line in open(path, encoding='utf-8'):
        m = FLAT.match(line.rstrip('\n'))
        if not m:
            die("report line: " + line)
        tid = int(m.group(2))
        out.setdefault(tid, []).append('%d %s.%s %s' % (tid, m.group(3), m.group(4), m.group(5)))
    return [l for tid in sorted(out) for l in out[tid]]

def main():
    path, mode = sys.argv[1], sys.argv[2]
    if mode.startswith('report-'):
        m = mode[7:]
        lines = report_flat(path) if m == 'flat' else report_calls(path, m)
    else:
        tracks, events = replay(parse(path))
        lines = trace_lines(mode, tracks, events)
    for l in lines:
        print(l)

main()
PY
PFCHECK="python3 $TMP/pfcheck.py"

decode() { # pftrace -> its text, protoc exiting 0
	protoc --proto_path="$PROTO" --decode=perfetto.protos.Trace "$PROTO/perfetto_subset.proto" <"$1"
}

# export FILE with OPTIONS, decode, and compare the trace read back in MODE
# (calls, thresh, flat) with report's lines of the same file and options
same_as_report() { # dat mode [view options]
	local dat=$1 mode=$2
	shift 2
	rm -f x.pftrace
	$TRAIL export -q --format perfetto "$@" -i "$dat" -o x.pftrace
	decode x.pftrace >x.txt
	$PFCHECK x.txt "$mode" >got.txt
	if [ "$mode" = flat ]; then
		$TRAIL report -q -t "$@" -i "$dat" >r.txt
	else
		$TRAIL report -q -t -O fgraph:proc "$@" -i "$dat" >r.txt
	fi
	$PFCHECK r.txt "report-$mode" >want.txt
	[ -s want.txt ] || die "report shows nothing"
	# return values: report shows them by their DWARF types (none for a
	# void function), the trace has the register
	sed -E -i 's/ = (-?[0-9]+|0x[0-9a-f]+)$//' want.txt
	sed -E 's/ = 0x[0-9a-f]+$//' got.txt | diff -u want.txt - || die "$dat $mode $*: not what report shows"
}

call_tree_as_report() {
	for p in "$P0" "$P2"; do
		$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -o g.dat -- "$p" 3 >/dev/null
		same_as_report g.dat calls
		# 3 requests of 5 calls, in main: 16 slices, nested 4 deep
		[ "$(wc -l <got.txt)" -eq 16 ] || die "$(cat got.txt)"
		grep -q '^[0-9]* 3 hash at .* = 0x' got.txt || die "no hash() 4 deep with its retval"
	done
	# the first packet clears the state, the others need it; one sequence
	decode x.pftrace >x.txt
	[ "$(grep -c 'sequence_flags: 1$' x.txt)" -eq 1 ] || die "state cleared more than once"
	[ "$(grep -c 'trusted_packet_sequence_id: 1$' x.txt)" -eq "$(grep -c '^packet {' x.txt)" ] ||
		die "a packet off sequence 1"
	# names interned once each
	[ "$(grep -c 'name: "handle_request"' x.txt)" -eq 1 ] || die "handle_request interned twice"
}

threads_are_tracks() {
	$TRAIL record -q -p function_graph $NOSAN -l handle_request -l lookup -l hash -o th.dat -- "$P2" threads
	same_as_report th.dat calls
	# a thread track per stream, in one process track with the program's name
	decode x.pftrace >x.txt
	pid=$($TRAIL report -i th.dat --stat | sed -n 's/^# ftrace-prog-O2-\([0-9]*\)\/.*/\1/p' | sort -u)
	[ "$(echo "$pid" | wc -w)" -eq 1 ] || die "pids: $pid"
	nthreads=$($TRAIL report -i th.dat --stat | grep -c "^# ftrace-prog-O2-$pid/")
	[ "$(grep -c '    thread {' x.txt)" -eq "$nthreads" ] || die "thread tracks"
	[ "$(grep -c '    process {' x.txt)" -eq 1 ] || die "process tracks"
	has x.txt "pid: $pid"
	has x.txt 'process_name: "ftrace-prog-O2"'
	[ "$(cut -d' ' -f1 got.txt | sort -u | wc -l)" -eq 4 ] || die "not 4 threads' calls"
}

events_inside_calls() {
	$TRAIL record -q -p function_graph $NOSAN -l outer -l noted -l quiet -e 'tpl:*' \
		-o tpl.dat -- "$BUILD/tests/cli/ftrace-tpleaf" 2
	same_as_report tpl.dat calls
	grep -q '^[0-9]* 2 /\* tpl:note: i=1 \*/ at ' got.txt || die "the event inside noted()"
}

static_events_as_annotations() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE" 3 4
	same_as_report ex.dat flat
	# every type: int, string, hex, double, bool, array, sequence
	grep -q 'app:reply: fd=[0-9]* status=200 ms=0.25 cached=0' got.txt || die "reply"
	grep -q 'app:stats: worker="worker-0" buckets={[0-9,]*} codes={0x' got.txt || die "stats"
	has x.txt 'pointer_value: 512' # bytes=0x200
	has x.txt 'bool_value: false'
	has x.txt 'double_value: 0.25'
	has x.txt 'array_values {'
	has x.txt 'int_value: 200'
	has x.txt 'string_value: "/index.html"'
	has x.txt 'name: "app:request"'
	# instants, each in category app
	[ "$(grep -c 'type: TYPE_INSTANT' x.txt)" -eq "$(wc -l <want.txt)" ] || die "instants"
	[ "$(grep -c 'category_iids: 1' x.txt)" -eq "$(wc -l <want.txt)" ] || die "categories"
}

lost_events_visible() {
	$TRAIL record -q -b 64K --chunk-size 4K -e 'app:*' -o lost.dat -- "$EXAMPLE" 2 20000 >/dev/null
	n=$($TRAIL report -q -i lost.dat | grep -c 'LOST' || true)
	[ "$n" -gt 0 ] || die "no loss recorded"
	same_as_report lost.dat flat
	[ "$(grep -c 'LOST' got.txt)" -eq "$n" ] || die "losses"
	has x.txt 'name: "lost"'
}

function_tracer_instants() {
	$TRAIL record -q -p function --no-libcall $NOSAN -o fn.dat -- "$P2" 2 >/dev/null
	same_as_report fn.dat flat
	has got.txt "hash <-lookup"
	# callers are interned strings too
	[ "$(grep -c 'str: "lookup"' x.txt)" -eq 1 ] || die "caller names"
}

view_options() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -o nap.dat -- "$P2" nap >/dev/null
	same_as_report nap.dat calls --max-graph-depth 2
	[ "$(wc -l <got.txt)" -eq 2 ] || die "$(cat got.txt)"
	# held back by the view until their duration is known, then written
	# out of time order: still the same tree
	same_as_report nap.dat calls --graph-time-thresh 1ms
	[ "$(wc -l <got.txt)" -eq 4 ] || die "$(cat got.txt)"
	same_as_report nap.dat calls -g lookup
	$TRAIL record -q -p function_graph $NOSAN -l handle_request -l lookup -l hash -o th.dat -- "$P2" threads
	same_as_report th.dat calls --graph-time-thresh 1us
}

entered_before_the_trace() {
	# calls entered before --time-range: their returns are slices from
	# just before the track's first record, the calls inside keep their
	# depth
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -o nap.dat -- "$P2" nap >/dev/null
	same_as_report nap.dat calls --time-range +1ms,
	grep -q '^[0-9]* 0 main NOSTART = 0x0$' got.txt || die "$(cat got.txt)"
	grep -q '^[0-9]* 4 hash at ' got.txt || die "$(cat got.txt)"
	# frames a forked child inherited, returned through in the child
	$TRAIL record -q -p function_graph $NOSAN -l 'fork_*' -l hash -o k.dat -- "$P2" forknest
	same_as_report k.dat calls
	[ "$(grep -c NOSTART got.txt)" -eq 3 ] || die "$(cat got.txt)"
}

record_time_threshold() {
	# calls written at their return, children before parents: slices
	# still nest, as trace_processor sorts them
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --graph-time-thresh 1ms -o t.dat -- "$P2" nap >/dev/null
	same_as_report t.dat thresh
	[ "$(wc -l <got.txt)" -eq 4 ] || die "$(cat got.txt)"
	$PFCHECK x.txt calls >tree.txt
	cut -d' ' -f2,3 tree.txt >got.txt
	printf '%s\n' '0 main' '1 modes' '2 slow_request' '3 nap' >want.txt
	diff -u want.txt got.txt
}

open_calls_at_the_end() {
	rc=0
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" exit || rc=$?
	[ "$rc" -eq 3 ] || die "trail record: $rc"
	same_as_report g.dat calls
	# each still open: ended where the trace ends, marked unfinished
	[ "$(grep -c ' OPEN$' got.txt)" -eq 4 ] || die "$(cat got.txt)"
	[ "$(grep -c 'name: "unfinished"' x.txt)" -eq 1 ] || die "annotation name"
	[ "$(grep -c 'bool_value: true' x.txt)" -eq 4 ] || die "unfinished"
}

compact() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o big.dat -- "$P2" 20000 >/dev/null
	$TRAIL export -q --format perfetto -i big.dat -o big.pftrace
	decode big.pftrace >big.txt
	calls=$($TRAIL report -q -i big.dat --count | awk '/funcgraph_(entry|leaf) / {s += $2} END {print s + 0}')
	events=$(grep -c '^  track_event {' big.txt)
	[ "$events" -eq $((2 * calls)) ] || die "$events track events for $calls calls"
	size=$(stat -c %s big.pftrace)
	echo "$((size / events)) bytes per track event, $calls calls" >&2
	[ $((size / events)) -le 15 ] || die "$((size / events)) bytes per track event"
}

names_not_utf8() {
	cp "$EXAMPLE" $'ex\xff\xfeample'
	$TRAIL record -q -e 'app:*' -o u.dat -- ./$'ex\xff\xfeample' 1 1 >/dev/null
	$TRAIL export -q --format perfetto -i u.dat -o u.pftrace
	decode u.pftrace >u.txt
	grep -aqF 'process_name: "ex\\xff\\xfeample"' u.txt || die "$(grep -a name: u.txt)"
}

bad_output() {
	$TRAIL record -q -e 'app:*' -o ex.dat -- "$EXAMPLE" 1 1
	echo old >o.pftrace
	expect_rc 1 $TRAIL export -q --format perfetto -i ex.dat -o o.pftrace 2>err.txt
	has err.txt "o.pftrace exists (--force replaces it)"
	[ "$(cat o.pftrace)" = old ] || die "replaced without --force"
	$TRAIL export -q --format perfetto --force -i ex.dat -o o.pftrace
	decode o.pftrace >/dev/null
	mkdir d.pftrace
	expect_rc 1 $TRAIL export -q --format perfetto --force -i ex.dat -o d.pftrace 2>err.txt
	has err.txt "d.pftrace is a directory"
	[ ! -e o.pftrace.part ] || die "a .part left"
}

damaged_input() {
	$TRAIL record -q --chunk-size 4K -e 'app:*' -o big.dat -- "$EXAMPLE" 4 2000
	# chunks in the middle damaged: the rest exported, exit 1, decodes
	# (three places 1000 bytes apart: one flip alone sometimes fell in a
	# chunk's unused tail, damage said but no event lost)
	size=$(stat -c %s big.dat)
	cp big.dat bad.dat
	flip4 bad.dat $((size / 2))
	flip4 bad.dat $((size / 2 + 1000))
	flip4 bad.dat $((size / 2 + 2000))
	expect_rc 1 $TRAIL export -q --format perfetto -i bad.dat -o bad.pftrace 2>err.txt
	has err.txt "damaged"
	decode bad.pftrace >bad.txt
	$PFCHECK bad.txt flat | grep -v DAMAGED >got.txt
	has bad.txt 'name: "DAMAGED"'
	$TRAIL export -q --format perfetto -i big.dat -o full.pftrace
	decode full.pftrace >full.txt
	$PFCHECK full.txt flat >all.txt
	n=$(wc -l <got.txt)
	[ "$n" -lt "$(wc -l <all.txt)" ] && [ "$n" -gt 1000 ] || die "$n of $(wc -l <all.txt) events"
	[ -z "$(comm -23 <(sort got.txt) <(sort all.txt))" ] || die "events invented"
	# cut short: what is before the cut (timestamps aside: without the
	# file's last clock sync they may differ by a nanosecond)
	head -c $((size * 2 / 3)) big.dat >cut.dat
	expect_rc 1 $TRAIL export -q --format perfetto -i cut.dat -o cut.pftrace 2>err.txt
	has err.txt "file truncated"
	decode cut.pftrace >cut.txt
	$PFCHECK cut.txt flat | grep -v DAMAGED | cut -d' ' -f1,3- | sort >got.txt
	[ "$(wc -l <got.txt)" -gt 1000 ] || die "$(wc -l <got.txt) events"
	[ -z "$(comm -23 got.txt <(cut -d' ' -f1,3- all.txt | sort))" ] || die "events invented"
}

# a trace with no thread recorded, and a file cut at 100 bytes (its
# header only): nothing to copy the threads from (memcpy was passed NULL,
# which UBSan stops the ASan suite on); a trace that decodes, exit 0 and 1
no_threads() {
	$TRAIL record -q --allow-unknown -e 'nope:*' -o nt-none.dat -- true 2>/dev/null
	$TRAIL export -q --format perfetto -i nt-none.dat -o nt-none.pftrace
	decode nt-none.pftrace >nt-none.txt
	has nt-none.txt 'process_name: "true"'
	hasnt nt-none.txt "thread"
	$TRAIL record -q -e 'app:*' -o nt-ex.dat -- "$EXAMPLE" 1 1
	head -c 100 nt-ex.dat >nt-cut100.dat
	expect_rc 1 $TRAIL export -q --format perfetto -i nt-cut100.dat -o nt-cut.pftrace 2>nt-err.txt
	has nt-err.txt "file truncated"
	decode nt-cut.pftrace >/dev/null
}

if ! command -v protoc >/dev/null || ! command -v python3 >/dev/null; then
	skip perfetto "protoc or python3 missing (scripts/install-deps.sh)"
	exit 0
fi
t call_tree_as_report call_tree_as_report
t threads_are_tracks threads_are_tracks
t events_inside_calls events_inside_calls
t static_events_as_annotations static_events_as_annotations
t lost_events_visible lost_events_visible
t function_tracer_instants function_tracer_instants
t view_options view_options
t entered_before_the_trace entered_before_the_trace
t record_time_threshold record_time_threshold
t open_calls_at_the_end open_calls_at_the_end
t compact compact
t names_not_utf8 names_not_utf8
t bad_output bad_output
t damaged_input damaged_input
t no_threads no_threads
