#!/usr/bin/env bash
# trail export --format ctf: babeltrace2 reads the CTF trace directory and
# shows what `trail report` shows of the same file: every event of every
# field type with its values, thread, process, CPU and nanosecond time;
# the function tracers' calls; the losses of each stream, placed where the
# LOST records are; many threads; a damaged input exported as far as it
# reads; the output directory checks.
. "$(dirname "$0")/lib.sh"
ALL=$BUILD/tests/cli/allfields
P2=$BUILD/tests/cli/ftrace-prog-O2
NOSAN="-n _sub_I_* -n _sub_D_*"

if ! command -v babeltrace2 >/dev/null || ! command -v python3 >/dev/null; then
	skip export_ctf "babeltrace2 or python3 not installed (scripts/install-deps.sh)"
	exit 0
fi

# lib.sh's t() runs a test as the left side of ||, where set -e does not
# apply: every check here dies on its own
run() { "$@" || die "failed: $*"; }

# Both sides as lines "TID CPU SECONDS.NS EVENT: FIELDS", trail report's
# field syntax (babeltrace2's rewritten into it), so they can be diffed.
cat >"$TMP/ctf.py" <<'PY'
import re, sys

def bt_value(s, i):
    """one babeltrace2 pretty value at s[i:]: (text in trail's syntax, next i)"""
    if s[i] == '"':
        j = i + 1
        while s[j] != '"':
            j += 2 if s[j] == '\\' else 1
        # babeltrace2 escapes '?' (C trigraphs), trail does not
        return s[i:j + 1].replace('\\?', '?'), j + 1
    if s[i] == '[':  # [ [0] = a, [1] = b ] -> {a,b}
        items, i = [], i + 2
        while s[i] != ']':
            i = s.index('= ', i) + 2
            v, i = bt_value(s, i)
            items.append(v)
            while s[i] in ', ':
                i += 1
        return '{' + ','.join(items) + '}', i + 1
    if s[i] == '(':  # enum ( "true" : container = 1 ) -> 1
        j = s.index(')', i)
        return s[i:j].split('= ')[-1].strip(), j + 1
    j = i
    while j < len(s) and s[j] not in ',]}':
        j += 1
    v = s[i:j].strip()
    return (v.lower() if v.startswith('0x') else v), j

def bt_fields(s):
    """'{ a = 1, b_len = 1, b = [ [0] = 2 ] }' -> [(a, 1), (b, {2})]"""
    out, i = [], 1
    while i < len(s) and s[i] in ' ':
        i += 1
    while i < len(s) and s[i] != '}':
        j = s.index(' = ', i)
        name = s[i:j]
        v, i = bt_value(s, j + 3)
        out.append((name, v))
        while i < len(s) and s[i] in ', ':
            i += 1
    # a sequence's length field is CTF's, not trail's
    return [(n, v) for k, (n, v) in enumerate(out)
            if not (n.endswith('_len') and k + 1 < len(out) and out[k + 1][0] == n[:-4])]

BT = re.compile(r'^\[(\d+\.\d+)\] \(\S+\) (?:\S+ )?(\S+): \{ cpu_id = (\d+), vpid = (\d+), '
                r'vtid = (\d+), procname = "(.*?)" \}, (\{.*\})$')

def bt(path, ids=False):
    for line in open(path):
        m = BT.match(line.rstrip('\n'))
        if not m:
            sys.exit('babeltrace2 line not understood: ' + line)
        ts, ev, cpu, pid, tid, comm, payload = m.groups()
        if ids:
            print(f'{comm}-{pid}/{tid}')
            continue
        f = bt_fields(payload)
        if ev == 'ftrace:function':
            d = dict(f)
            name = d['name'].strip('"') or d['ip']
            parent = d['parent_name'].strip('"') or d['parent_ip']
            text = f'{name} <-{parent}'
        else:
            text = ev + ': ' + ' '.join(f'{n}={v}' for n, v in f)
        print(f'{tid} {int(cpu)} {ts} {text}'.rstrip())

TR = re.compile(r'^\s*(.+)-(\d+)\s+\[(\S+)\]\s+(\d+\.\d+): (.*)$')

def report(path):
    for line in open(path):
        m = TR.match(line.rstrip('\n'))
        if not m or m.group(5).startswith('[LOST '):
            continue
        comm, tid, cpu, ts, text = m.groups()
        # NULL strings are exported as ""
        text = re.sub(r'=\(null\)( |$)', r'=""\1', text)
        print(f'{tid} {int(cpu)} {ts} {text}'.rstrip())

def stat(path):
    """trail report --stat: the streams' comm-pid/tid and lost counts"""
    for line in open(path):
        m = re.match(r'^# (.+-\d+/\d+) +(\d+) +\d+ +\S+ +(\d+)', line)
        if m:
            print(m.group(1), m.group(2), m.group(3))

WARN = re.compile(r'^WARNING: Tracer discarded (\d+) events between \[(\d+\.\d+)\] and '
                  r'\[(\d+\.\d+)\] .*within stream ".*/stream-(\d+)-\d+-(\d+)"')

def losses(report_path, stat_path, warn_path):
    """babeltrace2's discarded events against trail's LOST records and
    per-stream totals"""
    total = {}
    for line in open(stat_path):
        m = re.match(r'^# .+-\d+/(\d+) +(\d+) +\d+ +\S+ +(\d+)', line)
        if m and int(m.group(3)):
            total[m.group(2)] = int(m.group(3))
    lost, last = {}, {}  # by tid: [ts, n] of LOST records, merged when adjacent
    for line in open(report_path):
        m = TR.match(line.rstrip('\n'))
        if not m:
            continue
        tid, ts, text = m.group(2), m.group(4), m.group(5)
        if text.startswith('[LOST '):
            n = int(text.split()[1])
            if last.get(tid) == 'lost':
                lost[tid][-1][1] += n
            else:
                lost.setdefault(tid, []).append([ts, n])
        last[tid] = 'lost' if text.startswith('[LOST ') else 'event'
    warned, by_stream, tid_of = {}, {}, {}
    for line in open(warn_path):
        m = WARN.match(line)
        if m:
            n, a, b, order, tid = m.groups()
            warned.setdefault(tid, []).append((a, b, int(n)))
            by_stream[order] = by_stream.get(order, 0) + int(n)
    bad = []
    if by_stream != total:
        bad.append(f'discarded per stream {by_stream}, trail report --stat {total}')
    for tid, want in lost.items():
        got = warned.get(tid, [])
        for k, (ts, n) in enumerate(want):
            if k >= len(got) or got[k][2] != n or not float(got[k][0]) <= float(ts) <= float(got[k][1]):
                bad.append(f'tid {tid}: LOST {n} at {ts}, babeltrace2: {got[k] if k < len(got) else None}')
    if bad:
        sys.exit('\n'.join(bad))
    print(sum(total.values()), 'lost,', sum(len(v) for v in warned.values()), 'discarded events messages')

GR = re.compile(r'^ *(\d+\.\d+) \| +\S+\) +.+-(\d+) +\| +(.*?) *\|  +(.*)$')

def graph(bt_path, report_path):
    """func_entry/func_exit against trail report's function_graph lines
    (-t -O fgraph:proc -O fgraph:abstime): the same calls, leaves and
    returns at the same times per thread, durations as printed"""
    want = []
    for line in open(report_path):
        m = GR.match(line.rstrip('\n'))
        if not m:
            continue
        ts, tid, dur, text = m.groups()
        if text.endswith(') {'):
            want.append((tid, 'entry', ts, text[:-4], None))
        elif re.match(r'^[^ /}]+\(\);', text):
            want.append((tid, 'leaf', ts, text.split('(')[0], dur))
        elif text.startswith('}'):
            name = re.match(r'^} /\* ([^ ]+)', text)
            want.append((tid, 'exit', ts, name.group(1) if name else '', dur))
    got, open_entry = [], {}
    for line in open(bt_path):
        m = BT.match(line.rstrip('\n'))
        if not m:
            sys.exit('babeltrace2 line not understood: ' + line)
        ts, ev, cpu, pid, tid, comm, payload = m.groups()
        d = dict(bt_fields(payload))
        name = d['name'].strip('"')
        if ev == 'ftrace:func_entry':
            got.append((tid, 'entry', ts, name, None))
            open_entry[tid] = (len(got) - 1, d['addr'])
        elif ev == 'ftrace:func_exit':
            prev = open_entry.pop(tid, None)
            if prev and prev[0] == max(i for i, g in enumerate(got) if g[0] == tid) and prev[1] == d['addr']:
                # an exit right after its own entry: ftrace's leaf line
                got[prev[0]] = (tid, 'leaf', got[prev[0]][2], name, d['duration'])
            else:
                got.append((tid, 'exit', ts, name, d['duration']))
        else:
            open_entry.pop(tid, None)
    def dur_ok(ns, shown):
        if shown is None or ns is None:
            return True
        us = re.search(r'([0-9.]+) us', shown)
        return us is None and int(ns) == 0 or us is not None and abs(int(ns) / 1000 - float(us.group(1))) < 1
    key = lambda x: (x[0], x[2], x[1])
    want.sort(key=key)
    got.sort(key=key)
    bad = [f'{w} != {g}' for w, g in zip(want, got) if w[:4] != g[:4] or not dur_ok(g[4], w[4])]
    if len(want) != len(got):
        bad.append(f'{len(want)} calls in trail report, {len(got)} in babeltrace2')
    if bad:
        sys.exit('\n'.join(bad[:20]))
    print(len(got), 'calls')

{'bt': lambda: bt(sys.argv[2]), 'ids': lambda: bt(sys.argv[2], True),
 'report': lambda: report(sys.argv[2]), 'stat': lambda: stat(sys.argv[2]),
 'losses': lambda: losses(*sys.argv[2:5]), 'graph': lambda: graph(*sys.argv[2:4])}[sys.argv[1]]()
PY

# babeltrace2 --clock-seconds in CLOCK_MONOTONIC seconds, as trail report
# prints them: the clock class's offset (the wall clock's) taken back
bt_mono() { # dir [babeltrace2 options]
	local d=$1 s ns
	shift
	s=$(sed -n 's/^\toffset_s = \([0-9]*\);/\1/p' "$d/metadata")
	ns=$(sed -n 's/^\toffset = \([0-9]*\);/\1/p' "$d/metadata")
	[ -n "$s" ] && [ -n "$ns" ] || die "no clock offset in $d/metadata"
	babeltrace2 --clock-seconds --clock-offset=-"$s" --clock-offset-ns=-"$ns" "$@" "$d"
}

# babeltrace2's events and trail report's of trace file $1, exported to
# $2, compared line for line (sorted: streams at the same nanosecond may
# come in either order)
same_events() { # file dir
	bt_mono "$2" >bt.txt 2>bt.err || { cat bt.err; die "babeltrace2 failed on $2"; }
	run python3 ctf.py bt bt.txt >got.txt
	sort -o got.txt got.txt
	$TRAIL report -t -i "$1" >report.txt 2>/dev/null || true
	run python3 ctf.py report report.txt >want.txt
	sort -o want.txt want.txt
	[ -s want.txt ] || die "trail report shows nothing: no test"
	diff -u want.txt got.txt >diff.txt || { head -40 diff.txt; die "babeltrace2 and trail report differ"; }
}

# the clock class's offset makes babeltrace2 show the time of day: the
# first event is within a minute of now
wall_clock() {
	local t now
	run $TRAIL record -q -e 'all:*' -o w.dat -- "$ALL"
	run $TRAIL export -q -F ctf -i w.dat -o w.ctf
	t=$(babeltrace2 --clock-seconds w.ctf | sed -n '1s/^\[\([0-9]*\)\..*/\1/p')
	now=$(date +%s)
	[ -n "$t" ] && [ $((now - t)) -lt 60 ] && [ $((t - now)) -lt 60 ] ||
		die "first event at $t s, now is $now"
}

every_field_type() {
	run $TRAIL record -q -e 'all:*' -o a.dat -- "$ALL"
	run $TRAIL export -q -F ctf -i a.dat -o a.ctf
	has a.ctf/metadata "/* CTF 1.8 */"
	same_events a.dat a.ctf
	# every event, every type, from 3 threads and a child process
	for e in ints:8 misc:8 strings:8 arrays:8 empty:4; do
		[ "$(grep -c " all:${e%:*}:" got.txt)" -eq "${e#*:}" ] ||
			die "all:${e%:*}: $(grep -c " all:${e%:*}:" got.txt) events"
	done
	has got.txt 'all:ints: i8=-128 i16=-32768 i32=-2147483648 i64=-9223372036854775808 u8=255 u16=65535 u32=4294967295 u64=18446744073709551615'
	has got.txt 'all:misc: x=0xdeadbeef sx=0xfffe b=1 p=0x7ffdcafe0000 f=-1.5 d=6.02214e+23 event=3735928559 _under=-2'
	has got.txt 'all:strings: s="hello, world" empty="" none="" n=9'
	has got.txt 'all:arrays: a={-32768,-1,32767} q={0,1,4294967295,7} h={0xab,0x0} qx={0x0,0x1,0xffffffff,0x7}'
	# the types themselves, not only their values
	has a.ctf/metadata 'integer { size = 8; align = 8; signed = true; base = 10; } _i8;'
	has a.ctf/metadata 'integer { size = 64; align = 8; signed = false; base = 16; } _p;'
	has a.ctf/metadata 'floating_point { exp_dig = 11; mant_dig = 53; byte_order = le; align = 8; } _d;'
	has a.ctf/metadata 'integer { size = 16; align = 8; signed = false; } _q_len;'
	has a.ctf/metadata '_q[_q_len];'
	has a.ctf/metadata '_a[3];'
	# each stream is its thread: process id, thread id and name as trail has them
	run python3 ctf.py ids bt.txt >ids.txt
	sort -u -o ids.txt ids.txt
	run $TRAIL report --stat -i a.dat >stat.txt
	run python3 ctf.py stat stat.txt >streams.txt
	cut -d' ' -f1 streams.txt | sort -u >want-ids.txt
	run diff -u want-ids.txt ids.txt
	[ "$(cut -d- -f2 ids.txt | cut -d/ -f1 | sort -u | wc -l)" -eq 2 ] || die "not 2 processes"
	[ "$(wc -l <ids.txt)" -eq 4 ] || die "not 4 threads"
	[ "$(ls a.ctf | grep -c '^stream-')" -eq 4 ] || die "not one stream file per thread"
}

losses_where_they_happened() {
	# bursts bigger than a 64 KiB buffer, 20 ms apart: losses in the middle
	for _ in 1 2 3; do
		run $TRAIL record -q -b 64K --chunk-size 4K -e 'all:*' -o l.dat -- "$ALL" burst 8 3000
		[ "$($TRAIL report -i l.dat | grep -c 'LOST')" -ge 2 ] && break
	done
	[ "$($TRAIL report -i l.dat | grep -c 'LOST')" -ge 2 ] || die "no losses: no test"
	run $TRAIL export -q -F ctf -i l.dat -o l.ctf
	same_events l.dat l.ctf
	run $TRAIL report --stat -i l.dat >stat.txt
	run python3 ctf.py losses report.txt stat.txt bt.err
	# and the detailed sink has them as discarded events messages, with counts
	babeltrace2 -c sink.text.details l.ctf 2>/dev/null | sed -n 's/^Discarded events (\([0-9,]*\) events)$/\1/p' |
		tr -d , | awk '{ s += $1 } END { print s + 0 }' >n.txt
	run python3 ctf.py stat stat.txt >streams.txt
	[ "$(cat n.txt)" -eq "$(awk '{ s += $3 } END { print s }' streams.txt)" ] ||
		die "sink.text.details: $(cat n.txt) discarded"
}

losses_of_silent_threads() {
	# threads that lost everything have no records: their stream says so
	for _ in 1 2 3; do
		run $TRAIL record -q -b 64K --chunk-size 4K -e 'app:*' -o s.dat -- "$EXAMPLE" 8 2000
		run $TRAIL report --stat -i s.dat >stat.txt
		grep -q ' 0/4001 ' stat.txt && break
	done
	grep -q ' 0/4001 ' stat.txt || die "no silent thread: no test"
	run $TRAIL export -q -F ctf -i s.dat -o s.ctf
	same_events s.dat s.ctf
	run python3 ctf.py losses report.txt stat.txt bt.err
}

flight_recorder_losses() {
	# overwritten events are the oldest: lost before the first one kept
	run $TRAIL record -q --overwrite -b 64K --chunk-size 4K -e 'all:*' -o fr.dat -- "$ALL" burst 8 3000
	run $TRAIL export -q -F ctf -i fr.dat -o fr.ctf
	same_events fr.dat fr.ctf
	run $TRAIL report --stat -i fr.dat >stat.txt
	grep -q overwritten stat.txt || die "nothing overwritten: no test"
	run python3 ctf.py losses report.txt stat.txt bt.err
	sed -n 's/^WARNING: Tracer discarded [0-9]* events between \[\([0-9.]*\)\] and \[\([0-9.]*\)\].*/\1 \2/p' bt.err >range.txt
	first=$(cut -d' ' -f3 got.txt | sort -n | head -1)
	[ "$(wc -l <range.txt)" -eq 1 ] && awk -v t="$first" '{ exit !($1 <= t && t <= $2) }' range.txt ||
		die "discarded $(cat range.txt), first event at $first"
}

function_graph_calls() {
	local opts
	for m in "threads --retval" "fork --retval" "forknest --retval" "nap --graph-time-thresh 1ms"; do
		opts=${m#* }
		run $TRAIL record -q -p function_graph --no-libcall $NOSAN $opts -o g.dat -- "$P2" ${m%% *} >/dev/null
		rm -rf g.ctf
		run $TRAIL export -q -F ctf -i g.dat -o g.ctf
		bt_mono g.ctf >bt.txt || die "babeltrace2 failed on g.ctf"
		run $TRAIL report -q -t -O fgraph:proc -O fgraph:abstime -i g.dat >report.txt
		run python3 ctf.py graph bt.txt report.txt
		# entries and exits as trail counts calls and returns
		n_entry=$(grep -c 'ftrace:func_entry:' bt.txt || true)
		n_exit=$(grep -c 'ftrace:func_exit:' bt.txt)
		calls=$(grep -Ec '\) \{$|\(\);' report.txt || true)
		returns=$(grep -Ec '\|  +\}|\(\);' report.txt)
		[ "$n_entry" -eq "$calls" ] && [ "$n_exit" -eq "$returns" ] ||
			die "$m: func_entry $n_entry func_exit $n_exit, trail report $calls calls $returns returns"
		# return values where trail has them
		if [ "$opts" = --retval ]; then
			# typed by DWARF as report shows them: the same values
			grep -o '= [^ ]* \*/$' report.txt | awk '{ print $2 }' | sort >rv-report.txt
			grep -o 'retval = [^ ]* }' bt.txt | awk '{ print $3 }' | sort >rv-ctf.txt
			[ "$(wc -l <rv-ctf.txt)" -eq "$n_exit" ] || die "$m: retvals missing"
			cmp -s rv-report.txt rv-ctf.txt || die "$m: retvals $(diff rv-report.txt rv-ctf.txt | head -4)"
		else
			hasnt bt.txt 'retval ='
		fi
	done
	# threshold calls: their returns alone, with their durations (checked above)
	[ "$n_entry" -eq 0 ] && [ "$n_exit" -eq 4 ] || die "threshold: $n_entry entries, $n_exit exits"
}

function_tracer() {
	run $TRAIL record -q -p function --no-libcall $NOSAN -o f.dat -- "$P2" threads >/dev/null
	run $TRAIL export -q -F ctf -i f.dat -o f.ctf
	same_events f.dat f.ctf
	has got.txt 'hash <-lookup'
}

many_threads() {
	# 300 threads, 10 at a time: a stream file each
	run $TRAIL record -q -e 'churn:*' -o c.dat -- "$BUILD/tests/cli/churn" 300 10 10
	run $TRAIL export -q -F ctf -i c.dat -o c.ctf
	same_events c.dat c.ctf
	[ "$(cut -d' ' -f1 want.txt | sort -u | wc -l)" -eq 300 ] || die "not 300 threads"
	[ "$(ls c.ctf | grep -c '^stream-')" -eq 300 ] || die "$(ls c.ctf | wc -l) files"
}

selection() {
	run $TRAIL record -q -e 'all:*' -o a.dat -- "$ALL"
	tid=$($TRAIL report -q -i a.dat | tail -1 | sed -E 's/^ *[^ ]+-([0-9]+) .*/\1/')
	run $TRAIL export -q -F ctf --tid "$tid" -i a.dat -o t.ctf
	[ "$(ls t.ctf | grep -c '^stream-')" -eq 1 ] || die "not one stream"
	run babeltrace2 t.ctf >bt.txt
	[ "$(wc -l <bt.txt)" -eq "$($TRAIL report -q --tid "$tid" -i a.dat | wc -l)" ] || die "count"
}

damaged_input() {
	run $TRAIL record -q -e 'all:*' -o d.dat -- "$ALL" burst 4 20000
	head -c $(($(stat -c %s d.dat) * 2 / 3)) d.dat >cut.dat
	expect_rc 1 $TRAIL export -q -F ctf -i cut.dat -o cut.ctf 2>err.txt
	has err.txt "exported what could be read"
	same_events cut.dat cut.ctf
	[ "$(wc -l <got.txt)" -gt 1000 ] || die "too little exported: no test"
}

output_directory() {
	run $TRAIL record -q -e 'all:*' -o a.dat -- "$ALL"
	echo x >file
	expect_rc 1 $TRAIL export -q -F ctf -i a.dat -o file 2>err.txt
	has err.txt "file is not a directory"
	[ "$(cat file)" = x ] || die "the file was changed"
	mkdir full && echo keep >full/mine
	expect_rc 1 $TRAIL export -q -F ctf -i a.dat -o full 2>err.txt
	has err.txt "exists and is not empty"
	expect_rc 1 $TRAIL export -q -F ctf --force -i a.dat -o full 2>err.txt
	has err.txt "not a trace directory"
	[ "$(cat full/mine)" = keep ] || die "full/mine was changed"
	# an earlier export: refused, then replaced with --force
	run $TRAIL export -q -F ctf -i a.dat -o o.ctf
	expect_rc 1 $TRAIL export -q -F ctf -i a.dat -o o.ctf 2>err.txt
	has err.txt "exists and is not empty"
	run $TRAIL export -q -F ctf --force -i a.dat -o o.ctf
	run babeltrace2 o.ctf >bt.txt
	[ "$(wc -l <bt.txt)" -eq "$($TRAIL report -q -i a.dat | wc -l)" ] || die "$(wc -l <bt.txt) events after --force"
	expect_rc 2 $TRAIL export -q -F ctf -i a.dat 2>err.txt
	has err.txt "writes a directory"
}

t every_field_type every_field_type
t wall_clock wall_clock
t losses_where_they_happened losses_where_they_happened
t losses_of_silent_threads losses_of_silent_threads
t flight_recorder_losses flight_recorder_losses
t function_graph_calls function_graph_calls
t function_tracer function_tracer
t many_threads many_threads
t selection selection
t damaged_input damaged_input
t output_directory output_directory
