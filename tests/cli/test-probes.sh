#!/usr/bin/env bash
# Dynamic events: trail probe (definitions kept like dynamic_events),
# record with them, report in ftrace's kprobe layout; fault markers;
# return probes; function events; DWARF arguments; eprobes; running
# processes; dlopen'ed libraries.
. "$(dirname "$0")/lib.sh"

P=$BUILD/tests/cli/probed-O0
P2=$BUILD/tests/cli/probed-O2
ND=$BUILD/tests/cli/probed-nodebug

fresh_registry() { # each test its own dynamic_events
	export TRAIL_REGISTRY=$PWD/reg
	rm -rf reg
	mkdir -m 700 reg
}

define_list_delete() {
	fresh_registry
	$TRAIL probe 'p:myapp/open_cfg load_config path=+0($arg1):string flags=$arg2:x32'
	$TRAIL probe 'r:myapp/open_ret load_config ret=$retval:s32'
	$TRAIL probe 'load_config(string path, x32 flags)'
	[ "$(stat -c %a reg/dynamic_events)" = 600 ] || die "dynamic_events is not 0600"
	$TRAIL probe -l >l.txt
	cat >want.txt <<'W'
p:myapp/open_cfg load_config path=+0($arg1):string flags=$arg2:x32
r:myapp/open_ret load_config ret=$retval:s32
load_config(string path, x32 flags)
W
	diff -u want.txt l.txt
	# the same name twice is refused, with a caret
	expect_rc 1 $TRAIL probe 'p:myapp/open_cfg parse_int' 2>err.txt
	has err.txt "already exists"
	has err.txt "^"
	$TRAIL probe -d myapp/open_cfg
	$TRAIL probe '-:myapp/open_ret'
	$TRAIL probe -l >l.txt
	has l.txt "load_config(string path"
	hasnt l.txt "myapp/"
	expect_rc 1 $TRAIL probe -d myapp/nothing 2>err.txt
	has err.txt "no event 'myapp/nothing'"
	$TRAIL probe --clear
	[ ! -s reg/dynamic_events ] || die "--clear left $(cat reg/dynamic_events)"
}
t define_list_delete define_list_delete

record_entry_and_return() {
	fresh_registry
	$TRAIL probe 'p:myapp/open_cfg load_config path=+0($arg1):string flags=$arg2:x32'
	$TRAIL probe 'r:myapp/open_ret load_config ret=$retval:s32'
	expect_rc 7 $TRAIL record -q -e 'myapp:*' -o t.dat -- "$P" 2 >out.txt
	has out.txt "sum "
	$TRAIL report -i t.dat >r.txt
	[ "$(grep -c 'myapp:open_cfg: (load_config+0x0/0x' r.txt)" = 6 ] || die "open_cfg records: $(grep -c open_cfg r.txt)"
	has r.txt 'path="/etc/app.conf" flags=0x2a'
	# an unmapped pointer and NULL: the kernel's (fault), the program unharmed
	[ "$(grep -c 'path=(fault) flags=0x1' r.txt)" = 2 ] || die "no fault marker for the unmapped page"
	[ "$(grep -c 'path=(fault) flags=0x2' r.txt)" = 2 ] || die "no fault marker for NULL"
	# return probes: (caller <- func) and the value by its type
	has r.txt "myapp:open_ret: (main+0x"
	has r.txt "<- load_config) ret=55"
	has r.txt "<- load_config) ret=-22"
	# the output and status of the program did not change
	"$P" 2 >plain.txt || [ $? = 7 ]
	diff plain.txt out.txt
}
t record_entry_and_return record_entry_and_return

# entry and return probes on nested calls, the inner ones leaves (their
# entry record kept until the return): each stream in call order; the
# program named relatively, as the shell user does
entry_return_nesting() {
	local here=$PWD

	fresh_registry
	(cd "$(dirname "$P")" && expect_rc 7 $TRAIL record -q -o "$here/t.dat" \
		--probe 'p:n/in nest v=$arg1:s32' --probe 'r:n/out nest ret=$retval:s32' \
		--probe 'p:n/pin parse_int v=$arg1:s32' --probe 'r:n/pout parse_int ret=$retval:s32' \
		-- "./$(basename "$P")" 2 >/dev/null)
	$TRAIL report -i t.dat | grep -o 'n:[a-z]*: .*' | sed 's/ (.*)//' >got.txt
	for i in 1 2; do
		printf '%s\n' 'n:pin: v=21' 'n:pout: ret=42' 'n:in: v=3' 'n:pin: v=3' 'n:pout: ret=6' \
			'n:out: ret=7'
	done >want.txt
	diff want.txt got.txt
}
t entry_return_nesting entry_return_nesting

# entry and return probes of 8-byte register values on one function, of
# one session (x64 without a type, as in the kernel): the pair fprobe.c runs without the general walk. Every
# call's two records in call order across many chunks; an outer pair
# whose kept entry a nested call wrote goes the general way
entry_return_pairs() {
	local n=20000

	fresh_registry
	expect_rc 7 $TRAIL record -q -o t.dat \
		--probe 'p:n/in nest v=$arg1:s64' --probe 'r:n/out nest ret=$retval:x64' \
		--probe 'p:n/pin parse_int v=$arg1' --probe 'r:n/pout parse_int ret=$retval:s64' \
		-- "$P" $n >/dev/null
	$TRAIL report -i t.dat | grep -o 'n:[a-z]*: .*' | sed 's/ (.*)//' >got.txt
	awk -v n=$n 'BEGIN { for (i = 0; i < n; i++)
		printf "n:pin: v=0x15\nn:pout: ret=42\nn:in: v=3\nn:pin: v=0x3\nn:pout: ret=6\nn:out: ret=0x7\n" }' >want.txt
	cmp -s want.txt got.txt || die "pairs out of order: $(diff want.txt got.txt | head -5)"
	# an eprobe on the return event: the general way, each return
	# followed by its eprobe
	expect_rc 7 $TRAIL record -q -o e.dat --probe 'p:n/pin parse_int v=$arg1' \
		--probe 'r:n/pout parse_int ret=$retval:s64' --probe 'e:n/ep n/pout r=$ret' \
		-- "$P" 3 >/dev/null
	$TRAIL report -i e.dat | grep -o 'n:[a-z]*: .*' | sed 's/ (.*)//' >got.txt
	awk 'BEGIN { for (i = 0; i < 3; i++)
		printf "n:pin: v=0x15\nn:pout: ret=42\nn:ep: r=42\nn:pin: v=0x3\nn:pout: ret=6\nn:ep: r=6\n" }' >want.txt
	diff -u want.txt got.txt
}
t entry_return_pairs entry_return_pairs

# two sessions on the same entry and return probes of a running process
# with four threads (not a pair then: each session its records, each
# thread's in call order, every return after its entry)
two_sessions_same_probes() {
	fresh_registry
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 60 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	for s in a b; do
		$TRAIL record -q --probe 'p:x/in parse_int v=$arg1:s64' \
			--probe 'r:x/out parse_int ret=$retval:s64' -o $s.dat -P $pid &
		eval "rp_$s=\$!"
	done
	wait_for "[ \$(grep -c trail-arena /proc/$pid/maps) -ge 2 ]" || die "never attached twice"
	sleep 0.2
	# a leaves while b records: the calls b's entries were kept for
	# (with a's) still write b's records
	kill -INT "$rp_a"; wait "$rp_a"
	sleep 0.2
	kill -INT "$rp_b"; wait "$rp_b"
	kill $pid; wait $pid 2>/dev/null || true
	for s in a b; do
		$TRAIL report -i $s.dat | grep -E 'x:(in|out):' >$s.txt
		[ "$(wc -l <$s.txt)" -gt 2000 ] || die "session $s: $(wc -l <$s.txt) records"
		# per thread: in, out, in, out... (the last entry may have no
		# return: the session left inside the call); ret = 2 * v
		awk '{ t = $1; k = ($0 ~ /x:in:/) ? "in" : "out"
		       v = $NF; sub(/.*=/, "", v)
		       if (k == "in") { if (open[t]) bad++; open[t] = 1; arg[t] = v }
		       else { if (!open[t] || v != 2 * arg[t]) bad++; open[t] = 0 } }
		     END { exit bad > 0 }' $s.txt || die "session $s: unpaired records"
	done
}
t two_sessions_same_probes two_sessions_same_probes

# function_graph --args and --retval: names and types from DWARF (a
# string's pointer, a stack argument as "...", no value for void); with
# no debug info the kernel's untyped forms
graph_args_typed() {
	expect_rc 7 $TRAIL record -q -p function_graph --no-libcall --args --retval -o t.dat -- "$P" >/dev/null
	$TRAIL report -i t.dat | sed -E 's/^.*\|  //' >r.txt
	grep -E '^ *load_config\(path=0x[0-9a-f]+, flags=42\); /\* = 55 \*/$' r.txt >/dev/null ||
		die "load_config: $(grep load_config r.txt | head -1)"
	has r.txt 'load_config(path=0x0, flags=2); /* = -22 */'
	has r.txt 'parse_int(v=21); /* = 42 */'
	has r.txt 'many(a1=1, a2=2, a3=3, a4=4, a5=5, a6=6, ...); /* = 36 */'
	has r.txt '} /* nest = 7 */'
	grep -E '^ *nothing\(\);$' r.txt >/dev/null || die "void nothing(): $(grep nothing r.txt)"
	expect_rc 7 $TRAIL record -q -p function_graph --no-libcall --args --retval -o n.dat -- "$ND" >/dev/null
	$TRAIL report -i n.dat | sed -E 's/^.*\|  //' >n.txt
	has n.txt 'parse_int(); /* = 0x2a */'
	has n.txt 'load_config(); /* = -22 */'
	expect_rc 2 $TRAIL record -q -p function --args -o x.dat -- "$P" 2>err.txt
	has err.txt 'go with -p function_graph'
}
t graph_args_typed graph_args_typed

# the exports carry --args and the typed --retval as report shows them
graph_args_exported() {
	expect_rc 7 $TRAIL record -q -p function_graph --no-libcall --args --retval -o t.dat -- "$P" >/dev/null
	$TRAIL export --format chrome -i t.dat -o t.json
	python3 - t.json <<'PY' || die "chrome: args or retval wrong"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
lc = [e for e in ev if e.get("name") == "load_config"]
ok = [e for e in lc if e["args"].get("flags") == 42 and e["args"]["path"].startswith("0x")
      and e["args"].get("retval") == 55]
neg = [e for e in lc if e["args"].get("flags") == 2 and e["args"]["path"] == "0x0"
       and e["args"].get("retval") == -22]
many = [e for e in ev if e.get("name") == "many" and e["args"].get("a6") == 6
        and e["args"].get("more_args") is True]
void = [e for e in ev if e.get("name") == "nothing" and "retval" not in e.get("args", {})]
if not (ok and neg and many and void):
    sys.exit(f"load_config {lc[:2]} many {len(many)} nothing {len(void)}")
PY
	if command -v protoc >/dev/null; then
		$TRAIL export --format perfetto -i t.dat -o t.pftrace
		protoc --proto_path="$SRC/tests/export" --decode=perfetto.protos.Trace \
			"$SRC/tests/export/perfetto_subset.proto" <t.pftrace >t.txt
		# an args dictionary with flags (unsigned) 42, and a signed retval -22
		tr -d '\n' <t.txt | grep -Eq 'uint_value: 42[[:space:]]*name: "flags"' ||
			die "perfetto: no args.flags = 42"
		grep -q 'int_value: -22' t.txt || die "perfetto: no signed retval -22"
	fi
	if command -v babeltrace2 >/dev/null; then
		$TRAIL export --format ctf -i t.dat -o t.ctf
		babeltrace2 t.ctf >bt.txt
		grep -Eq 'ftrace:func_entry: .*name = "load_config", args = "path=0x[0-9a-f]+, flags=42"' bt.txt ||
			die "ctf: $(grep -m1 load_config bt.txt)"
		grep -Eq 'ftrace:func_exit: .*name = "load_config", .*retval = -22 }' bt.txt ||
			die "ctf: $(grep func_exit bt.txt | grep -m1 load_config)"
	fi
}
t graph_args_exported graph_args_exported

function_event() {
	fresh_registry
	$TRAIL probe 'load_config(string path, x32 flags)'
	expect_rc 7 $TRAIL record -q -e functions:load_config -o t.dat -- "$P" >/dev/null
	$TRAIL report -i t.dat >r.txt
	has r.txt 'functions:load_config: (load_config+0x0/0x'
	has r.txt 'path="/etc/app.conf" flags=0x2a'
}
t function_event function_event

inline_probe_types() {
	fresh_registry
	# registers, stack arguments, derefs two deep, bitfields, arrays,
	# chars, symbols, globals, $comm
	expect_rc 7 $TRAIL record -q -o t.dat \
		--probe 'p:x/many many a1=$arg1:s32 a7=$arg7:s32 a8=$arg8:s64 s1=$stack1:s32' \
		--probe 'p:x/req handle id=+0(%di):s32 len=+8(%di):u32 kind=+4(%di):u16 next_id=+0(+40(%di)):s32 name=+24(%di):string vals=+40(%di):x8[4]' \
		--probe 'p:x/glob parse_int v=%di:s32 counter=@counter:s64 me=$comm c=+1(@greeting):u8 g=@greeting:symbol' \
		-- "$P" >/dev/null
	$TRAIL report -i t.dat >r.txt
	has r.txt 'x:many: (many+0x0/0x'
	has r.txt 'a1=1 a7=7 a8=8 s1=7'
	has r.txt 'x:glob: (parse_int+0x0/0x'
	has r.txt 'v=21 counter=1234567 me="probed-O0"'
	has r.txt 'id=42 len=4096 kind=3'
}
t inline_probe_types inline_probe_types

dwarf_arguments() {
	fresh_registry
	$TRAIL probe 'p:x/args handle $$args'
	$TRAIL probe 'p:x/fields handle len=r->hdr.len path=r->path:string name=r->name level=r->hdr.level nid=r->next->id color=r->color v2=r->vals[2]'
	$TRAIL probe 'p:x/byval by_value $$args'
	$TRAIL probe -l -x "$P" >l.txt
	# resolved to the raw syntax, as perf probe shows it
	has l.txt 'p:x/fields handle len=+'
	expect_rc 7 $TRAIL record -q -e 'x:*' -o t.dat -- "$P" >/dev/null
	$TRAIL report -i t.dat >r.txt
	has r.txt 'x:fields: (handle+0x0/0x'
	has r.txt 'len=4096 path="/etc/app.conf" name="request-one" level=5 nid=9 color=40 v2=30'
	# the second call's request has a bad path and next pointer
	has r.txt 'path=(fault)'
	has r.txt 'nid=(fault)'
	has r.txt 'x:args: (handle+0x0/0x'
	has r.txt 'x:byval: (by_value+0x0/0x'
	# no debug info: the message names the binary; the raw syntax works
	expect_rc 1 $TRAIL record -q -e 'x:fields' -o n.dat -- "$ND" 2>err.txt
	has err.txt "$ND"
	has err.txt "debug"
}
t dwarf_arguments dwarf_arguments

# an element of a char pointer or array is one char, as perf probe reads
# it (r->path[5] of "/etc/app.conf": 'a'); a :string of one is refused
# with perf's reason, caret under it (was: the string at path + 5), and
# so is one of a value that is no string
dwarf_char_element() {
	fresh_registry
	$TRAIL probe -x "$P" 'p:x/ce handle c=r->path[5] n=r->name[2]:u8' >def.txt
	has def.txt 'c=+5(+16(%di)):s8 n=+26(%di):u8'
	expect_rc 7 $TRAIL record -q -e x:ce -o t.dat -- "$P" >/dev/null
	$TRAIL report -q -i t.dat >r.txt
	has r.txt 'x:ce: (handle+0x0/0x'
	has r.txt 'c=97 n=113'
	while IFS='|' read -r arg msg; do
		expect_rc 1 $TRAIL probe -x "$P" "p:x/bad handle c=$arg" 2>err.txt
		has err.txt "Failed to cast into string: $msg"
		[ "$(caret_col err.txt)" = 17 ] || die "$arg: caret at $(caret_col err.txt): $(cat err.txt)"
	done <<'T'
r->path[5]:string|'r->path[5]' (s8) is not a pointer nor array
r->name[2]:ustring|'r->name[2]' (s8) is not a pointer nor array
r->id:string|'r->id' (s32) is not a pointer nor array
r->next:string|'r->next' (x64) is not (unsigned) char * nor a char array
r->vals:string|'r->vals' (s32[4]) is not (unsigned) char * nor a char array
T
	# the pointer and the array themselves are strings
	$TRAIL probe -x "$P" 'p:x/ok handle p=r->path:string n=r->name:string' >def.txt
	has def.txt 'p=+0(+16(%di)):string n=+24(%di):string'
	$TRAIL probe -l >l.txt
	hasnt l.txt 'x/bad'
}
t dwarf_char_element dwarf_char_element

eprobe_on_probe_event() {
	fresh_registry
	$TRAIL probe 'p:x/h handle p=+16(%di):x64 id=+0(%di):s32'
	$TRAIL probe 'e:x/hp x/h path=+0($p):string id=$id'
	expect_rc 7 $TRAIL record -q -e 'x:*' -o t.dat -- "$P" >/dev/null
	$TRAIL report -i t.dat >r.txt
	# each source is followed by its eprobe
	grep -A1 'x:h: ' r.txt | grep -q 'x:hp: path="/etc/app.conf" id=42' || die "no eprobe after its source: $(head r.txt)"
	has r.txt 'x:hp: path=(fault) id=42'
}
t eprobe_on_probe_event eprobe_on_probe_event

eprobe_on_static_event() {
	fresh_registry
	# fields by $NAME, a string field copied, an integer retyped; the
	# source not recorded itself, the eprobe still is
	$TRAIL probe 'e:x/rq app/request p=$path:string fd=$fd:x32 b=$bytes:u16'
	$TRAIL record -q -e x:rq -o t.dat -- "$EXAMPLE" >/dev/null
	$TRAIL report -i t.dat >r.txt
	hasnt r.txt 'app:request:'
	has r.txt 'x:rq: p="/index.html" fd=0xa b=512'
	# with the source recorded too: each eprobe record right after its source
	$TRAIL record -q -e x:rq -e app:request -o u.dat -- "$EXAMPLE" >/dev/null
	$TRAIL report -i u.dat >r.txt
	n=$(grep -c 'app:request:' r.txt)
	[ "$n" -gt 0 ] && [ "$(grep -A1 'app:request:' r.txt | grep -c 'x:rq:')" = "$n" ] ||
		die "eprobe records do not follow their sources"
	# an eprobe without arguments: the source's occurrences only
	$TRAIL record -q --probe 'e:x/seen app/request' -o s.dat -- "$EXAMPLE" >/dev/null
	[ "$($TRAIL report -i s.dat | grep -c 'x:seen:')" -gt 0 ] || die "no bare eprobe records"
	# an unknown source field: the fields listed
	expect_rc 1 $TRAIL probe -x "$EXAMPLE" 'e:x/bad app/request q=$nope' 2>err.txt
	has err.txt "path"
}
t eprobe_on_static_event eprobe_on_static_event

bad_definitions() {
	fresh_registry
	# the grammar's errors get a caret (the unit test has the table)
	expect_rc 2 $TRAIL probe 'p:x/y load_config a=%zz' 2>err.txt
	has err.txt "^"
	# an unknown function, at record time: a caret under it
	expect_rc 1 $TRAIL record -q --probe 'p:x/y no_such_function' -o t.dat -- "$P" 2>err.txt
	has err.txt "no_such_function"
	has err.txt "unknown function"
	# a function of unmodified code (no patchable entry): its entry
	# displaced, probed all the same
	$TRAIL record -q --probe 'p:x/y lookup' -o t.dat -- "$BUILD/tests/cli/ftrace-prog-noflag" >/dev/null
	$TRAIL report -i t.dat >r.txt
	has r.txt 'x:y: (lookup+0x0/0x'
	# a function event's types against DWARF: sizes, pointers
	expect_rc 1 $TRAIL probe -x "$P" 'parse_int(x16 v)' 2>err.txt
	has err.txt "v is 4 bytes in parse_int, not 2"
	expect_rc 1 $TRAIL probe -x "$P" 'parse_int(string v)' 2>err.txt
	has err.txt "not a pointer"
	# a name clash with a static event
	expect_rc 1 $TRAIL probe -x "$EXAMPLE" 'p:app/request main' 2>err.txt
	has err.txt "static event"
	expect_rc 1 $TRAIL record -q --probe 'p:app/request main' -o t.dat -- "$EXAMPLE" 2>err.txt
	has err.txt "static event"
	# deleting a probe a recording uses
	$TRAIL probe 'p:x/spin parse_int v=%di:s32'
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 30 >spin.txt &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	$TRAIL record -q -e x:spin -o s.dat -P $pid & rp=$!
	wait_for "ls reg/dynamic_events.inuse.* >/dev/null 2>&1" || die "no in-use mark"
	# (attached: a SIGINT before the recorder's handler would be lost,
	# background jobs ignore it until then)
	wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
	expect_rc 1 $TRAIL probe -d x/spin 2>err.txt
	has err.txt "in use"
	kill -INT $rp; wait $rp
	$TRAIL probe -d x/spin
	kill $pid; wait $pid 2>/dev/null || true
}
t bad_definitions bad_definitions

site_bytes() { # pid function -> the 5 bytes at the function's patchable entry
	local base off
	base=$(awk -v exe="$(readlink /proc/$1/exe)" '$6 == exe && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' /proc/$1/maps)
	off=$(nm "$(readlink /proc/$1/exe)" | awk -v f="$2" '$3 == f { print $1 }')
	dd if=/proc/$1/mem bs=1 count=5 skip=$(( 0x$base + 0x$off + $3 )) iflag=skip_bytes status=none | od -An -tx1 | tr -d ' \n'
}

running_multithreaded() {
	fresh_registry
	env LD_PRELOAD=$LIBTRAIL "$P2" --spin 120 >/dev/null &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	sleep 0.2
	off=0
	[ "$(site_bytes $pid parse_int 0)" = 9090909090 ] || off=4 # after an endbr64
	before=$(site_bytes $pid parse_int $off)
	[ "$before" = 9090909090 ] || die "parse_int's entry is $before"
	for round in 1 2 3; do
		# (round 2: 8-byte values, the probes a pair)
		ty=s32
		[ $round = 2 ] && ty=s64
		$TRAIL record -q -b 8M --probe "p:x/y parse_int v=\$arg1:$ty" \
			--probe "r:x/r parse_int ret=\$retval:$ty" -o m$round.dat -P $pid & rp=$!
		wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
		sleep 0.2
		kill -INT $rp; wait $rp
		kill -0 $pid || die "the process died (round $round)"
		[ "$(site_bytes $pid parse_int $off)" = "$before" ] || die "code not restored (round $round)"
		$TRAIL report -i m$round.dat --count >c.txt
		[ "$(awk '$1 == "x:y" {print $2}' c.txt)" -gt 1000 ] || die "round $round: few hits: $(cat c.txt)"
		[ "$(awk '$1 == "x:r" {print $2}' c.txt)" -gt 1000 ] || die "round $round: few returns"
		$TRAIL report -i m$round.dat | head -3000 >r.txt
		grep -m1 'x:r: (spinner+0x[0-9a-f]*/0x[0-9a-f]* <- parse_int) ret=' r.txt >/dev/null ||
			die "round $round: no return probe records"
	done
	kill $pid; wait $pid 2>/dev/null || true
}
t running_multithreaded running_multithreaded

probes_with_tracers() {
	fresh_registry
	# entry and return probes, function_graph: all on one function
	expect_rc 7 $TRAIL record -q -p function_graph -l load_config -l main \
		--probe 'p:x/e load_config flags=$arg2:x32' --probe 'r:x/r load_config ret=$retval:s32' \
		-o t.dat -- "$P" >/dev/null
	$TRAIL report -i t.dat >r.txt
	has r.txt 'load_config() {'
	has r.txt 'x:e: (load_config+0x0/0x'
	has r.txt '<- load_config) ret=55'
	[ "$(grep -c 'load_config() {' r.txt)" = 3 ] || die "function_graph calls: $(grep -c 'load_config' r.txt)"
	# --retval beside a return probe: the value by its DWARF type (int)
	expect_rc 7 $TRAIL record -q -p function_graph --retval -l load_config -l main \
		--probe 'r:x/r load_config ret=$retval:s32' -o v.dat -- "$P" >/dev/null
	$TRAIL report -i v.dat >v.txt
	has v.txt '} /* load_config = 55 */'
	has v.txt '} /* load_config = -22 */'
	has v.txt '<- load_config) ret=-22'
}
t probes_with_tracers probes_with_tracers

# A kept function event on a function of an unmodified program (the
# example: no patchable entries) that runs without the instruction
# decoder: -P loads it (a kept definition patches code as a --probe
# does), -a too, two sessions hook the function at once, and the site
# cache keeps what the code is (it was once written "refused" by a
# process without the decoder, and later recordings hooked nothing).
kept_probes_running_unmodified() {
	local ex=$BUILD/examples/example a b
	fresh_registry
	$TRAIL probe 'worker_serve(int id, int requests)'
	LD_PRELOAD=$BUILD/libtrail.so.1 "$ex" --loop 2 3 >/dev/null &
	local pid=$!
	wait_for "[ -e reg/$pid ]" || die "never registered"
	$TRAIL record -q -P $pid -e functions:worker_serve -o a.dat & a=$!
	wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
	sleep 0.3
	$TRAIL record -q -P $pid -e functions:worker_serve -o b.dat & b=$!
	sleep 0.5
	stop_rec $b
	stop_rec $a
	kill -0 $pid || die "the program died"
	for f in a b; do
		$TRAIL report -i $f.dat >$f.txt
		grep -q 'functions:worker_serve: (worker_serve+0x0/0x[0-9a-f]*) id=1 requests=3' $f.txt ||
			die "$f: $(tail -3 $f.txt)"
	done
	$TRAIL record -q -a -p function -l worker_serve -o c.dat & a=$!
	sleep 0.5
	stop_rec $a
	$TRAIL report -i c.dat >c.txt
	has c.txt 'worker_serve <-'
	kill -0 $pid || die "the program died"
	kill $pid
	# a new process (decoder loaded at its start) finds the site in the cache
	expect_rc 0 $TRAIL record -q -e functions:worker_serve -o d.dat -- "$ex" 2 3
	[ "$($TRAIL report -i d.dat | grep -c 'functions:worker_serve:')" = 2 ] || die "launched: $(cat d.dat | head -0; $TRAIL report -i d.dat | tail -3)"
}
t kept_probes_running_unmodified kept_probes_running_unmodified

probe_in_dlopened_library() {
	fresh_registry
	# the library is not there when the recording starts: loaded and
	# unloaded four times, its probe with it
	$TRAIL record -q --allow-unknown --probe 'p:x/inner dlplug_a.so:inner_a v=%di:s32' \
		-o d.dat -- "$BUILD/tests/cli/ftrace-dlhost" "$BUILD/tests/cli/dlplug_a.so" \
		"$BUILD/tests/cli/dlplug_b.so" 4 >/dev/null
	$TRAIL report -i d.dat >r.txt
	[ "$(grep -c 'x:inner: (inner_a+0x0/0x' r.txt)" = 2 ] || die "hits: $(grep -c x:inner r.txt)"
	# without --allow-unknown, a function nowhere to be seen is an error
	expect_rc 1 $TRAIL record -q --probe 'p:x/inner dlplug_a.so:inner_a' -o e.dat -- \
		"$BUILD/tests/cli/ftrace-dlhost" a b 1 2>err.txt
	has err.txt "--allow-unknown"
}
t probe_in_dlopened_library probe_in_dlopened_library

list_shows_probes() {
	fresh_registry
	$TRAIL probe 'p:x/h handle id=+0(%di):s32'
	$TRAIL probe 'p:x/gone not_in_this_program'
	$TRAIL list -- "$P" >l.txt
	has l.txt 'x:h  p:x/h handle id=+0(%di):s32'
	hasnt l.txt 'x:gone'
}
t list_shows_probes list_shows_probes

# objdump's instruction offsets of function $2 in program $1, one per line
insn_offsets() {
	local a end x m
	a=$(nm "$1" | awk -v f="$2" '$3 == f {print $1}')
	end=$((0x$a + 0x$(nm -S "$1" | awk -v f="$2" '$4 == f {print $2}')))
	objdump -d --no-show-raw-insn --start-address=0x"$a" --stop-address=$end "$1" |
		awk -F':\t' 'NF > 1 && $1 ~ /^ *[0-9a-f]+$/ && $2 !~ /^nop/ {split($2, w, " "); print $1, w[1]}' |
		while read -r x m; do echo "$((0x$x - 0x$a)) $m"; done
}

# Probes at an instruction (a breakpoint there; the instruction runs from
# a copy): FUNC+OFFS inside a function, of an unmodified and of a
# patchable build; PATH:OFFSET (a file offset, uprobe_events' form) in
# the C library; the bad offsets, said with the nearest boundaries.
probes_at_instructions() {
	fresh_registry
	local U=$BUILD/tests/cli/ftrace-prog-noflag F=$BUILD/tests/cli/ftrace-prog-O2 off
	for prog in "$U" "$F"; do
		"$prog" 3 >want.txt
		# hash's return: past its entry's hook, once a call
		insn_offsets "$prog" hash >ins.txt
		[ "$(grep -c ' ret$' ins.txt)" = 1 ] || die "hash has not one ret: $(cat ins.txt)"
		off=$(awk '$2 == "ret" {print $1}' ins.txt)
		$TRAIL record -q --probe "p:i/mid hash+$off c=%dx:u8 s=+0(%di):u8" -p function_graph -l hash \
			-o i.dat -- "$prog" 3 >got.txt
		cmp -s want.txt got.txt || die "$prog: the output changed: $(cat got.txt)"
		$TRAIL report -q -i i.dat --count >c.txt
		calls=$(awk '$1 == "ftrace:funcgraph_leaf" || $1 == "ftrace:funcgraph_entry" {s += $2} END {print s}' c.txt)
		[ "$calls" -ge 3 ] || die "hash: $calls calls: $(cat c.txt)"
		grep -q "^ *i:mid  *$calls$" c.txt || die "i:mid is not once per call ($calls): $(cat c.txt)"
		$TRAIL report -i i.dat | grep -q "i:mid: (hash+0x$(printf %x "$off")/" ||
			die "no i:mid at hash+$off: $($TRAIL report -i i.dat | grep i:mid | head -2)"
	done
	# not a boundary: the instruction at 0 is longer than a byte here
	off=$(insn_offsets "$U" hash | sed -n '2s/ .*//p')
	expect_rc 1 $TRAIL record -q --probe "p:i/bad hash+$((off + 1))" -o i.dat -- "$U" 2>err.txt
	has err.txt "hash+0x$(printf %x $((off + 1))) is not an instruction boundary (the nearest: +0x$(printf %x "$off"), +0x"
	has err.txt '          ^'
	expect_rc 1 $TRAIL record -q --probe 'p:i/bad hash+0x10000' -o i.dat -- "$U" 2>err.txt
	has err.txt "is past the end of hash"
	# inside the bytes the entry's jump displaces: said, with where to go
	expect_rc 1 $TRAIL record -q --probe "p:i/bad hash+$off" -o i.dat -- "$U" 2>err.txt
	has err.txt "hash+0x$(printf %x "$off") is inside the bytes the hook of hash's entry takes (the first probe-able instruction is at or past +0x"
	# libc's write by file offset: what the program prints goes through it
	local libc off
	libc=$(ldd "$U" | awk '$1 ~ /^libc\.so/ {print $3}')
	off=$(python3 - "$libc" <<'PY'
import subprocess, sys
lib = sys.argv[1]
sym = [l.split() for l in subprocess.run(["nm", "-D", lib], capture_output=True, text=True).stdout.splitlines()]
addr = next(int(s[0], 16) for s in sym if len(s) == 3 and s[2].split("@")[0] == "write")
for l in subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD" and int(f[2], 16) <= addr < int(f[2], 16) + int(f[5], 16):
        print(hex(addr - int(f[2], 16) + int(f[1], 16))); break
PY
)
	[ -n "$off" ] || die "no write in $libc"
	$TRAIL record -q --probe "p:lc/w $libc:$off fd=%di:s32 n=%dx:u64" -o w.dat -- "$U" >/dev/null
	$TRAIL report -i w.dat >w.txt
	has w.txt 'lc:w: (' 
	has w.txt 'fd=1 n='
	expect_rc 1 $TRAIL record -q --probe "p:lc/w $libc:$((off + 1))" -o w.dat -- "$U" 2>err.txt
	has err.txt "is not an instruction boundary (the nearest: +0x0, +0x"
	expect_rc 1 $TRAIL record -q --probe "p:lc/w $libc:0x10" -o w.dat -- "$U" 2>err.txt
	has err.txt "0x10 is not in an executable segment of"
	# the definition keeps uprobe_events' form and default name
	$TRAIL probe "p $libc:$off fd=%di:s32"
	$TRAIL probe -l >l.txt
	has l.txt "p:probes/p_libc_so_6_$off $libc:$off fd=%di:s32"
}
t probes_at_instructions probes_at_instructions

# A probe at an instruction whose function nothing branches into among
# the bytes after it takes a jump to a stub (tramp.S), not a breakpoint:
# the same records as the breakpoint's (TRAIL_INSN_JUMP=0), the code
# shows the jump while attached and its own bytes after.
insn_probe_jump() {
	fresh_registry
	cat >jp.c <<-'C'
	#include <stdio.h>
	#include <stdlib.h>
	#include <unistd.h>
	static volatile long sink;
	__attribute__((noinline)) long mix(long a, long b)
	{
		long x = a * 3 + b;
		x ^= x >> 7;
		x += a << 2;
		return x;
	}
	int main(int argc, char **argv)
	{
		long n = argc > 1 ? atol(argv[1]) : 10, t = 0;
		if (argc > 2) {
			puts("ready");
			fflush(stdout);
			for (;;) {
				sink += mix(sink & 0xffff, 3);
				usleep(1000);
			}
		}
		for (long i = 0; i < n; i++)
			t += mix(i, i + 1);
		printf("%ld\n", t);
		return 0;
	}
	C
	# (patchable entries: the entry hook takes the nops, not the first
	# instructions)
	${CC:-cc} -O2 -fpatchable-function-entry=5 jp.c -o jp
	# the second instruction: one that several more follow before the ret
	insn_offsets ./jp mix >ins.txt
	[ "$(wc -l <ins.txt)" -ge 4 ] || die "mix: $(cat ins.txt)"
	off=$(sed -n '2s/ .*//p' ins.txt)
	./jp 1000 >want.txt
	for j in 1 0; do
		TRAIL_INSN_JUMP=$j $TRAIL record -q --probe "p:j/mid mix+$off a=%di:s64 b=%si:s64" \
			-o j$j.dat -- ./jp 1000 >got.txt
		cmp -s want.txt got.txt || die "the output changed ($j): $(cat got.txt)"
		$TRAIL report -q -i j$j.dat --count >c$j.txt
		grep -q '^ *j:mid  *1000$' c$j.txt || die "jump=$j: $(cat c$j.txt)"
		$TRAIL report -q -i j$j.dat | sed 's/.*j:mid: //' >r$j.txt
	done
	cmp -s r1.txt r0.txt || die "jump and breakpoint disagree: $(diff r1.txt r0.txt | head -4)"
	has r1.txt "(mix+0x$(printf %x "$off")/0x"
	grep -q ') a=999 b=1000$' r1.txt || die "$(tail -2 r1.txt)"
	# attached to a running process: a jump there (e9), then its bytes back
	LD_PRELOAD=$LIBTRAIL ./jp 0 spin >ready.txt &
	local pid=$!
	wait_for "grep -q ready ready.txt" || die "never ready"
	addr=$(( 0x$(nm ./jp | awk '$3 == "mix" {print $1}') + off ))
	code_at() {
		python3 - "$pid" "$addr" "$(readlink -f ./jp)" <<-'PY'
		import sys
		pid, addr, exe = sys.argv[1], int(sys.argv[2]), sys.argv[3]
		base = next(int(l.split()[0].split("-")[0], 16) for l in open(f"/proc/{pid}/maps")
		            if l.split()[-1] == exe and int(l.split()[2], 16) == 0)
		with open(f"/proc/{pid}/mem", "rb") as m:
		    m.seek(base + addr)
		    print(m.read(5).hex())
		PY
	}
	before=$(code_at)
	$TRAIL record -q --probe "p:j/mid mix+$off a=%di:s64" -o a.dat -P $pid &
	local rp=$!
	wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
	sleep 0.3
	during=$(code_at)
	kill -INT $rp
	wait $rp
	after=$(code_at)
	kill $pid
	case $during in e9*) ;; *) die "not a jump while attached: $during (was $before)" ;; esac
	[ "$after" = "$before" ] || die "bytes after detach: $after, were $before"
	$TRAIL report -q -i a.dat --count | grep -q '^ *j:mid  *[1-9]' || die "no hits attached"
}
t insn_probe_jump insn_probe_jump

# A probe's jump in code that uses the wide vector registers: its stub
# saves their upper halves (and AVX-512's) too, which the handler's libc
# string functions clobber; the program computes the same.
insn_probe_vector() {
	fresh_registry
	local evex=""
	grep -qw avx512vl /proc/cpuinfo && evex=-DEVEX
	${CC:-cc} -O2 $evex "$SRC/tests/cli/probe/vec.c" -o vec
	./vec >want.txt
	insn_offsets ./vec vadd >ins.txt
	off=$(sed -n '3s/ .*//p' ins.txt)
	$TRAIL record -q --probe "p:v/x vadd+$off s=@longstr:string" -o v.dat -- ./vec >got.txt
	cmp -s want.txt got.txt || die "the vector state changed under the probe ($evex): $(cat got.txt), want $(cat want.txt)"
	$TRAIL report -q -i v.dat --count | grep -q '^ *v:x  *100$' || die "$($TRAIL report -q -i v.dat --count)"
}
if grep -qw avx2 /proc/cpuinfo; then
	t insn_probe_vector insn_probe_vector
else
	skip insn_probe_vector "no AVX2 on this CPU: no wide vector state to keep"
fi

# Source lines (perf probe's FUNC:RLN and FILE:LINE) with the variables in
# scope there, read where DWARF says they are at that address: the stack
# frame at -O0 (the frame base from the unwind tables), registers or
# nothing at -O2 (said why).
line_probes() {
	fresh_registry
	${CC:-cc} -O0 -g "$SRC/tests/cli/probe/lines.c" -o lines-O0
	${CC:-cc} -O2 -g "$SRC/tests/cli/probe/lines.c" -o lines-O2
	# total_of's line 5 (from its declaration, line 10) is line 15
	$TRAIL record -q --probe 'p:ln/step total_of:5 i=i sq=sq total=total' -o a.dat -- ./lines-O0 5 >out.txt
	has out.txt 55
	$TRAIL report -q -i a.dat | sed 's/.*ln:step: //' >a.txt
	printf '(total_of+0x%s/0x%s) i=%s sq=%s total=%s\n' >want.txt \
		"$(sed -n '1s/^(total_of+0x\([0-9a-f]*\)\/0x\([0-9a-f]*\)).*/\1/p' a.txt)" \
		"$(sed -n '1s/^(total_of+0x[0-9a-f]*\/0x\([0-9a-f]*\)).*/\1/p' a.txt)" 0 1 0
	head -1 a.txt | cmp -s - want.txt || die "first: $(head -1 a.txt), want $(cat want.txt)"
	grep -q ' i=4 sq=25 total=30$' a.txt || die "last: $(tail -1 a.txt)"
	[ "$(wc -l <a.txt)" = 5 ] || die "$(cat a.txt)"
	# the same line by file: the same address, the same values
	$TRAIL record -q --probe 'p:ln/step lines.c:15 i=i sq=sq total=total' -o b.dat -- ./lines-O0 5 >/dev/null
	$TRAIL report -q -i b.dat | sed 's/.*ln:step: //' | cmp -s - a.txt || die "lines.c:15 differs"
	# the default name, and the definition kept as given
	$TRAIL probe 'p total_of:5 total=total'
	$TRAIL probe -l >l.txt
	has l.txt 'p:probes/p_total_of_L5 total_of:5 total=total'
	$TRAIL probe --clear
	# -O2: a register there is read, a value the code only computes is not
	$TRAIL record -q --probe 'p:ln/o2 lines.c:15 total=total' -o c.dat -- ./lines-O2 5 >/dev/null ||
		die "total at -O2"
	$TRAIL report -q -i c.dat --count | grep -q '^ *ln:o2  *[1-9]' || die "no hits at -O2"
	expect_rc 1 $TRAIL record -q --probe 'p:ln/x total_of:5 i=i' -o x.dat -- ./lines-O2 5 2>err.txt
	has err.txt "'i' cannot be read at total_of: a computed value or pieces (optimized): not in memory or a register"
	# a line whose code is the function's entry: an entry probe there
	$TRAIL record -q --probe 'p:ln/e lines.c:13 n=n' -o e.dat -- ./lines-O2 5 >/dev/null
	$TRAIL report -q -i e.dat | grep -q 'ln:e: (total_of+0x0/0x[0-9a-f]*) n=5$' ||
		die "entry line: $($TRAIL report -q -i e.dat | tail -1)"
	# what is not there, said
	expect_rc 1 $TRAIL record -q --probe 'p:ln/x total_of:5 zz=nope' -o x.dat -- ./lines-O0 5 2>err.txt
	has err.txt "This variable is not found at this probe point: 'nope' (total_of sees sq, i, v, n, total)"
	# the caret under the variable
	[ "$(sed -n '3p' err.txt | awk '{print index($0, "^")}')" = \
	  "$(sed -n '2p' err.txt | awk '{print index($0, "nope")}')" ] || die "caret: $(cat err.txt)"
	expect_rc 1 $TRAIL record -q --probe 'p:ln/x total_of:99' -o x.dat -- ./lines-O0 5 2>err.txt
	has err.txt "no code at line 109 of total_of (its line 109, relative 99)"
	expect_rc 1 $TRAIL record -q --probe 'p:ln/x nosuch.c:3' -o x.dat -- ./lines-O0 5 2>err.txt
	has err.txt "no code at nosuch.c:3 in the debug info"
	expect_rc 2 $TRAIL record -q --probe 'r:ln/x total_of:5' -o x.dat -- ./lines-O0 5 2>err.txt
	has err.txt "A source line is for p: probes"
}
t line_probes line_probes

# A return probe that reads the function's variables goes on its ret
# instructions (the kernel's kretinsn idea): the variables are still
# there, where DWARF says; $retval is %ax. A function that may return
# through a tail call is refused, and so is a variable gone by then.
return_at_ret_instructions() {
	fresh_registry
	${CC:-cc} -O0 -g "$SRC/tests/cli/probe/rets.c" -o rets-O0
	${CC:-cc} -O2 -g "$SRC/tests/cli/probe/rets.c" -o rets-O2
	./rets-O0 4 >want.txt
	$TRAIL record -q --probe 'r:rt/leave count_up%return count=count ret=$retval' \
		-o a.dat -- ./rets-O0 4 >got.txt
	cmp -s want.txt got.txt || die "the output changed: $(cat got.txt)"
	$TRAIL report -q -i a.dat | sed 's/.*rt:leave: ([^)]*) //' >a.txt
	# count_up(1..4) from main, then count_up(2..5) from tail, interleaved
	printf '%s\n' 'count=0 ret=0' 'count=1 ret=2' 'count=1 ret=2' 'count=3 ret=6' \
		'count=3 ret=6' 'count=6 ret=12' 'count=6 ret=12' 'count=10 ret=20' >want.txt
	diff -u want.txt a.txt
	# at a ret: the report shows the instruction
	$TRAIL report -q -i a.dat | head -1 | grep -q 'rt:leave: (count_up+0x[0-9a-f]*/0x' ||
		die "$($TRAIL report -q -i a.dat | head -1)"
	# without variables, a return probe keeps the shadow stack: with the caller
	$TRAIL record -q --probe 'r:rt/plain count_up%return ret=$retval' -o b.dat -- ./rets-O0 2 >/dev/null
	$TRAIL report -q -i b.dat | grep -q 'rt:plain: (main+0x[0-9a-f]*/0x[0-9a-f]* <- count_up) ret=0' ||
		die "shadow stack: $($TRAIL report -q -i b.dat | head -2)"
	# -O2: the local is gone at the ret; tail returns through count_up
	expect_rc 1 $TRAIL record -q --probe 'r:rt/x count_up%return count=count' -o x.dat -- ./rets-O2 2 2>err.txt
	has err.txt "'count' cannot be read at count_up"
	expect_rc 1 $TRAIL record -q --probe 'r:rt/x tail%return n=n' -o x.dat -- ./rets-O2 2 2>err.txt
	has err.txt "tail's returns cannot be probed at its ret instructions: +0x"
	has err.txt "a tail call: the function returns from another one"
	# listed, as one event
	$TRAIL probe 'r:rt/leave count_up%return count=count'
	$TRAIL list -- ./rets-O0 >l.txt
	has l.txt "rt:leave"
	$TRAIL probe --clear
}
t return_at_ret_instructions return_at_ret_instructions

# the file offset of link-time address $2 in program $1 (its PT_LOAD's)
file_offset() {
	local typ off va pa fsz rest
	readelf -lW "$1" | while read -r typ off va pa fsz rest; do
		[ "$typ" = LOAD ] || continue
		if [ $(($2)) -ge $((va)) ] && [ $(($2)) -lt $((va + fsz)) ]; then
			printf '0x%x\n' $(($2 - va + off))
			break
		fi
	done
}

# PATH:OFFSET in a stripped program: the offset is checked from the
# function's start its unwind table gives (as trail list -f finds it),
# refused in the middle of an instruction before the program runs; with
# no function start known before it at all, refused as unprovable.
path_offset_stripped() {
	fresh_registry
	${CC:-cc} -O2 "$SRC/tests/cli/probe/probed.c" -o plain -lpthread
	cp plain stripped
	strip stripped
	local a second off
	a=0x$(nm plain | awk '$3 == "parse_int" {print $1}')
	second=$(insn_offsets ./plain parse_int | sed -n '2s/ .*//p')
	[ "$second" -gt 1 ] || die "parse_int's first instruction is one byte: $(insn_offsets ./plain parse_int)"
	$TRAIL list -f -- ./stripped | grep -q "^$(printf sub_%x $((a)))" || die "list -f has no $a"
	off=$(file_offset ./stripped $((a + 1)))
	rm -f s.dat
	expect_rc 1 $TRAIL record -q --probe "p:s/x ./stripped:$off" -o s.dat -- ./stripped 3 >out.txt 2>err.txt
	has err.txt "$(printf 0x%x $((a)))+0x1 is not an instruction boundary (the nearest: +0x0, +0x$(printf %x "$second"))"
	has err.txt '        ^'
	[ ! -s out.txt ] || die "the program ran: $(cat out.txt)"
	[ ! -e s.dat ] || die "a trace was written"
	# the same offset with the symbols: the same refusal, named
	expect_rc 1 $TRAIL record -q --probe "p:s/x ./plain:$off" -o s.dat -- ./plain 3 2>err.txt
	has err.txt "parse_int+0x1 is not an instruction boundary"
	# the second instruction is one
	off=$(file_offset ./stripped $((a + second)))
	expect_rc 7 $TRAIL record -q --probe "p:s/x ./stripped:$off" -o s.dat -- ./stripped 3 >/dev/null
	$TRAIL report -q -i s.dat --count | grep -q '^ *s:x  *6$' || die "$($TRAIL report -q -i s.dat --count)"
	# no symbol, no unwind table: nothing bounds it
	objcopy --remove-section .eh_frame_hdr --remove-section .eh_frame stripped bare
	off=$(file_offset ./bare $((a + second)))
	expect_rc 1 $TRAIL record -q --probe "p:s/x ./bare:$off" -o s.dat -- ./bare 3 >out.txt 2>err.txt
	has err.txt "$(printf 0x%x $((a + second))) cannot be checked as an instruction boundary: no function of"
	has err.txt "is known to start before it (no symbol, no unwind table entry)"
	[ ! -s out.txt ] || die "the program ran: $(cat out.txt)"
}
t path_offset_stripped path_offset_stripped

# PATH:OFFSET on a function's first byte, or on its patchable entry, is
# an entry probe: the same records as the probe by name (the entry hook
# is there); in a stripped program, the unnamed function by its address.
path_offset_entry() {
	fresh_registry
	${CC:-cc} -O2 "$SRC/tests/cli/probe/probed.c" -o plain -lpthread
	${CC:-cc} -O2 -fpatchable-function-entry=5 "$SRC/tests/cli/probe/probed.c" -o patch -lpthread
	cp plain stripped
	strip stripped
	local prog a off
	for prog in plain patch stripped; do
		a=0x$(nm $([ $prog = stripped ] && echo plain || echo $prog) | awk '$3 == "parse_int" {print $1}')
		off=$(file_offset ./$prog $((a)))
		expect_rc 7 $TRAIL record -q --probe "p:s/x ./$prog:$off v=%di:s32" -o a.dat -- ./$prog 3 >/dev/null
		$TRAIL report -q -i a.dat | sed 's/.*s:x: //' >a.txt
		[ -s a.txt ] || die "$prog: nothing recorded at $off"
		if [ $prog = stripped ]; then
			# (the same calls as plain's by name, by address)
			sed 's/([^)]*)/(F)/' a.txt >a2.txt
			sed 's/([^)]*)/(F)/' byname.txt | cmp -s - a2.txt || die "stripped: $(head -3 a.txt)"
			continue
		fi
		expect_rc 7 $TRAIL record -q --probe "p:s/x parse_int v=%di:s32" -o b.dat -- ./$prog 3 >/dev/null
		$TRAIL report -q -i b.dat | sed 's/.*s:x: //' >byname.txt
		cmp -s a.txt byname.txt || die "$prog: $(head -3 a.txt) vs by name $(head -3 byname.txt)"
		grep -q '^(parse_int+0x0/0x[0-9a-f]*) v=' a.txt || die "$prog: $(head -1 a.txt)"
	done
}
t path_offset_entry path_offset_entry

# trail's own groups (the function tracers', synthetic events', user
# events') are no probe's: refused with the caret under the group, kept
# or for one recording, and the recording does not start.
reserved_groups() {
	fresh_registry
	local g
	for g in ftrace synthetic user_events; do
		expect_rc 2 $TRAIL probe "p:$g/funcgraph_entry parse_int" 2>err.txt
		has err.txt "Group '$g' is trail's own (ftrace, synthetic, user_events are reserved)"
		[ "$(caret_col err.txt)" = 2 ] || die "caret: $(cat err.txt)"
		expect_rc 2 $TRAIL record -q --probe "p:$g/funcgraph_entry parse_int" -o g.dat -- "$P" 2 \
			>out.txt 2>err.txt
		has err.txt "Group '$g' is trail's own"
		[ "$(caret_col err.txt)" = 2 ] || die "caret: $(cat err.txt)"
		[ ! -s out.txt ] || die "the program ran"
	done
	expect_rc 2 $TRAIL record -q --probe 'e:ftrace/x myapp/open_cfg' -o g.dat -- "$P" 2 2>err.txt
	has err.txt "Group 'ftrace' is trail's own"
	[ ! -s reg/dynamic_events ] || die "kept: $(cat reg/dynamic_events)"
	# (a group that only starts like one is a group like any other)
	$TRAIL probe 'p:ftrace2/x parse_int'
}
t reserved_groups reserved_groups

# One name, one event: a second --probe of a name, or a --probe of a
# kept definition's name, is refused as trail probe refuses a second
# kept one (the kernel's "Event already exists"), before anything runs.
duplicate_names() {
	fresh_registry
	expect_rc 2 $TRAIL record -q --probe 'p:d/y parse_int' --probe 'p:d/y handle' -o d.dat \
		-- "$P" 2 >out.txt 2>err.txt
	has err.txt "event d/y already exists"
	sed -n 2p err.txt | grep -qF 'p:d/y handle' || die "not the second: $(cat err.txt)"
	[ "$(caret_col err.txt)" = 2 ] || die "caret: $(cat err.txt)"
	[ ! -s out.txt ] || die "the program ran"
	# default names collide too (p_parse_int_0)
	expect_rc 2 $TRAIL record -q --probe 'p parse_int' --probe 'p parse_int v=%di' -o d.dat \
		-- "$P" 2 2>err.txt
	has err.txt "event probes/p_parse_int_0 already exists"
	# a kept d/x: a --probe p:d/x does not replace it
	$TRAIL probe 'p:d/x parse_int'
	expect_rc 2 $TRAIL record -q --probe 'p:d/x handle' -o d.dat -- "$P" 2 2>err.txt
	has err.txt "event d/x already exists (kept: 'trail probe -d' deletes it)"
	[ "$(caret_col err.txt)" = 2 ] || die "caret: $(cat err.txt)"
	# distinct names in one group are fine
	expect_rc 7 $TRAIL record -q --probe 'p:d/y parse_int' --probe 'p:d/z handle' -o d.dat \
		-- "$P" 2 >/dev/null
	$TRAIL report -q -i d.dat --count >c.txt
	has c.txt 'd:y'
	has c.txt 'd:z'
}
t duplicate_names duplicate_names

# A thousand kept probes recorded with one -e: the spec holds what it is
# given (it stopped at 64 KiB, ~200 probes), every probe enabled.
thousand_kept_probes() {
	fresh_registry
	local i defs=()
	for i in $(seq 1000); do
		defs+=("p:many/p$i parse_int v=%di:s32")
	done
	$TRAIL probe "${defs[@]}"
	[ "$(wc -l <reg/dynamic_events)" = 1000 ] || die "kept: $(wc -l <reg/dynamic_events)"
	expect_rc 7 $TRAIL record -q -e 'many:*' -o m.dat -- "$P" 2 >/dev/null
	$TRAIL report -q -i m.dat --count | awk '$1 ~ /^many:p[0-9]+$/ {print $2}' | sort | uniq -c >c.txt
	# each of the 1000 events, each as many times as parse_int ran
	[ "$(wc -l <c.txt)" = 1 ] && [ "$(awk '{print $1}' c.txt)" = 1000 ] ||
		die "counts (events x records): $(cat c.txt)"
	[ "$(awk '{print $2}' c.txt)" -gt 0 ] || die "$(cat c.txt)"
}
t thousand_kept_probes thousand_kept_probes

# the file offset of libc's function $2 (the C library program $1 uses)
libc_offset() {
	python3 - "$(ldd "$1" | awk '$1 ~ /^libc\.so/ {print $3}')" "$2" <<'PY'
import subprocess, sys
lib, name = sys.argv[1], sys.argv[2]
sym = [l.split() for l in subprocess.run(["nm", "-D", lib], capture_output=True, text=True).stdout.splitlines()]
addr = next(int(s[0], 16) for s in sym if len(s) == 3 and s[2].split("@")[0] == name)
for l in subprocess.run(["readelf", "-lW", lib], capture_output=True, text=True).stdout.splitlines():
    f = l.split()
    if f and f[0] == "LOAD" and int(f[2], 16) <= addr < int(f[2], 16) + int(f[5], 16):
        print(hex(addr - int(f[2], 16) + int(f[1], 16))); break
PY
}

# libtrail's own work in the traced process (its open of /proc/self/task
# and /proc/self/exe while it patches, its mallocs) is not the program's:
# a probe on libc's open, openat and malloc counts the program's calls
# only, launched (jump or breakpoint) or attached to.
# lc:malloc's count in a --count listing is N: exactly in the plain build;
# with a sanitized libtrail, whose runtime calls the C library's malloc in
# the program's threads too (one more, once), at least N
malloc_count() { # file N
	local n
	n=$(awk '$1 == "lc:malloc" { print $2 }' "$1")
	if ldd "$LIBTRAIL" | grep -q libasan; then
		[ "${n:-0}" -ge "$2" ]
	else
		[ "${n:-0}" = "$2" ]
	fi
}

own_calls_not_recorded() {
	fresh_registry
	cat >calls.c <<-'C'
	#include <fcntl.h>
	#include <stdlib.h>
	#include <unistd.h>
	int main(int argc, char **argv)
	{
		if (argc > 1) { /* attached to first */
			write(1, "ready\n", 6);
			while (access(argv[1], F_OK))
				usleep(1000);
		}
		for (int i = 0; i < 5; i++)
			close(open("/dev/null", O_RDONLY));
		for (int i = 0; i < 2; i++)
			close(openat(AT_FDCWD, "/dev/null", O_RDONLY));
		for (int i = 0; i < 3; i++) {
			void *volatile p = malloc(100 + i);
			free(p);
		}
		return 0;
	}
	C
	${CC:-cc} -O2 calls.c -o calls
	local libc o oa m j
	libc=$(ldd ./calls | awk '$1 ~ /^libc\.so/ {print $3}')
	o=$(libc_offset ./calls open)
	oa=$(libc_offset ./calls openat)
	m=$(libc_offset ./calls malloc)
	[ -n "$o" ] && [ -n "$oa" ] && [ -n "$m" ] || die "libc offsets: $o $oa $m"
	set -- --probe "p:lc/open $libc:$o" --probe "p:lc/openat $libc:$oa" --probe "p:lc/malloc $libc:$m"
	for j in 1 0; do
		TRAIL_INSN_JUMP=$j $TRAIL record -q "$@" -o c$j.dat -- ./calls
		$TRAIL report -q -i c$j.dat --count >c.txt
		grep -q '^ *lc:open  *5$' c.txt || die "jump=$j: $(cat c.txt)"
		grep -q '^ *lc:openat  *2$' c.txt || die "jump=$j: $(cat c.txt)"
		malloc_count c.txt 3 || die "jump=$j: $(cat c.txt)"
	done
	# attached: libtrail joins, patches, reads its objects meanwhile
	rm -f go
	LD_PRELOAD=$LIBTRAIL ./calls go >ready.txt &
	local pid=$! rp
	wait_for "grep -q ready ready.txt" || die "never ready"
	$TRAIL record -q "$@" -o a.dat -P $pid &
	rp=$!
	wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
	sleep 0.3
	touch go
	wait $pid
	wait_for "! kill -0 $rp 2>/dev/null" || { kill -INT $rp; die "the recording did not end"; }
	wait $rp || true
	$TRAIL report -q -i a.dat --count >c.txt
	grep -q '^ *lc:open  *5$' c.txt || die "attached: $(cat c.txt)"
	grep -q '^ *lc:openat  *2$' c.txt || die "attached: $(cat c.txt)"
	malloc_count c.txt 3 || die "attached: $(cat c.txt)"
}
t own_calls_not_recorded own_calls_not_recorded

# A started command is hooked before any of its own code runs: a probed
# function called from its constructors (the earliest priority too) and
# from main's first line is counted every time (doc/probes.md says what
# the loader runs earlier: .preinit_array, its libraries' constructors).
first_calls_counted() {
	fresh_registry
	cat >early.c <<-'C'
	#include <stdlib.h>
	static void take(int n)
	{
		for (int i = 0; i < n; i++) {
			void *volatile p = malloc(64 + i);
			free(p);
		}
	}
	__attribute__((constructor(101))) static void first(void) { take(2); }
	__attribute__((constructor)) static void second(void) { take(3); }
	/* before any constructor, the C library's own included */
	static void pre(int c, char **v, char **e) { (void)c; (void)v; (void)e; take(5); }
	__attribute__((section(".preinit_array"), used)) static void (*pre_p)(int, char **, char **) = pre;
	void lib_take(void);
	int main(void)
	{
		take(4);
		lib_take();
		return 0;
	}
	C
	# a library whose constructor runs before the program's
	cat >earlylib.c <<-'C'
	#include <stdlib.h>
	static void take(int n)
	{
		for (int i = 0; i < n; i++) {
			void *volatile p = malloc(128 + i);
			free(p);
		}
	}
	__attribute__((constructor)) static void libinit(void) { take(6); }
	void lib_take(void) { take(1); }
	C
	${CC:-cc} -O2 -shared -fPIC earlylib.c -o libearly.so
	${CC:-cc} -O2 early.c -o early -L. -learly -Wl,-rpath,"$PWD"
	local libc m
	libc=$(ldd ./early | awk '$1 ~ /^libc\.so/ {print $3}')
	m=$(libc_offset ./early malloc)
	# 2 + 3 + 4 + 1 in the program and its library, 5 in .preinit_array,
	# 6 in the library's constructor: 21
	$TRAIL record -q --probe "p:lc/malloc $libc:$m" -o e.dat -- ./early
	$TRAIL report -q -i e.dat --count >c.txt
	malloc_count c.txt 21 || die "$(cat c.txt)"
}
t first_calls_counted first_calls_counted
