#!/usr/bin/env bash
# trail rv check: a DOT automaton (the kernel's rvgen format) replayed
# over a recording: the violations of a program with two known ones
# (tests/cli/rv/rvprog.c), per thread, per process and per key, named as
# the kernel's printk reactor names them; filters in labels; models that
# are not deterministic, have no initial state or name no event here.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/rvprog

mutex_model() { # file [lock label] [unlock label]
	cat >"$1" <<-EOF
	digraph state_automaton {
		{node [shape = plaintext, style=invis, label=""] "__init_unlocked"};
		{node [shape = doublecircle] "unlocked"};
		{node [shape = circle] "locked"};
		"__init_unlocked" -> "unlocked";
		"unlocked" [label = "unlocked"];
		"unlocked" -> "locked" [ label = "${2:-app:lock}" ];
		"locked" [label = "locked"];
		"locked" -> "unlocked" [ label = "${3:-app:unlock}" ];
		{ rank = min ;
			"__init_unlocked";
			"unlocked";
		}
	}
	EOF
}

record() {
	[ -f rv.dat ] || $TRAIL record -q -e 'app:*' -o rv.dat -- "$PROG" 100
}

violations_per_key_thread_process() {
	fresh_registry
	record
	mutex_model mutex.dot
	expect_rc 1 $TRAIL rv check -i rv.dat --per id mutex.dot >k.txt
	[ "$(grep -c 'rv: monitor mutex does not allow event' k.txt)" = 2 ] || die "$(cat k.txt)"
	grep -qE '^ +rvprog-[0-9]+ +\[[0-9]+\] +[0-9]+\.[0-9]{6}: rv: monitor mutex does not allow event app:lock on state locked \(id 4\)$' k.txt ||
		die "$(cat k.txt)"
	has k.txt 'rv: monitor mutex does not allow event app:unlock on state unlocked (id 3)'
	has k.txt 'rv: monitor mutex: 404 events, 2 violations, 4 instances (per id)'
	expect_rc 1 $TRAIL rv check -i rv.dat mutex.dot >t.txt
	has t.txt 'rv: monitor mutex: 404 events, 2 violations, 2 instances (per thread)'
	expect_rc 1 $TRAIL rv check -i rv.dat --per process --reactor nop mutex.dot >p.txt
	[ "$(cat p.txt)" = 'rv: monitor mutex: 404 events, 2 violations, 1 instance (per process)' ] || die "$(cat p.txt)"
	# a model the trace keeps: exit 0; one left locked is said
	mutex_model m2.dot 'app:lock[id < 3]' 'app:unlock[id < 3]'
	$TRAIL rv check -i rv.dat --per id m2.dot >ok.txt
	has ok.txt 'rv: monitor m2: 400 events, 0 violations, 2 instances (per id)'
	mutex_model m3.dot 'app:lock[id == 4]' 'app:unlock[id == 3]'
	expect_rc 1 $TRAIL rv check -i rv.dat --per id m3.dot >o.txt
	has o.txt 'rv: monitor m3: 3 events, 2 violations, 2 instances (per id), 1 left in a state that is not accepting'
}

bad_models() {
	fresh_registry
	record
	cat >nd.dot <<-'EOF'
	digraph m {
		"__init_a" -> "a";
		"a" -> "b" [ label = "app:lock" ];
		"a" -> "a" [ label = "app:unlock\nfoo:bar" ];
		"a" -> "c" [ label = "app:lock" ];
	}
	EOF
	expect_rc 1 $TRAIL rv check -i rv.dat nd.dot 2>err.txt
	has err.txt "nd.dot:5:1: not deterministic: two transitions on app:lock from a"
	printf 'digraph m {\n "a" -> "b" [label = "app:lock"];\n}\n' >ni.dot
	expect_rc 1 $TRAIL rv check -i rv.dat ni.dot 2>err.txt
	has err.txt "no initial state"
	mutex_model ue.dot app:lock app:nosuch
	expect_rc 1 $TRAIL rv check -i rv.dat ue.dot 2>err.txt
	has err.txt "event app:nosuch is in none of rv.dat's events"
	mutex_model nk.dot
	expect_rc 1 $TRAIL rv check -i rv.dat --per obj nk.dot 2>err.txt
	grep -qE 'per obj: event app:(un)?lock has no field obj' err.txt || die "$(cat err.txt)"
	mutex_model bf.dot 'app:lock[nope == 1]'
	expect_rc 1 $TRAIL rv check -i rv.dat bf.dot 2>err.txt
	has err.txt "Field not found"
	echo 'not dot' >x.dot
	expect_rc 1 $TRAIL rv check -i rv.dat x.dot 2>err.txt
	has err.txt "not a DOT digraph"
	# huge: past 64 states
	{ echo 'digraph h { "__init_s0" -> "s0";'
	  for i in $(seq 0 70); do echo "\"s$i\" -> \"s$((i + 1))\" [label = \"app:lock\"];"; done
	  echo '}'; } >h.dot
	expect_rc 1 $TRAIL rv check -i rv.dat h.dot 2>err.txt
	has err.txt "too many states (at most 64)"
	expect_rc 2 $TRAIL rv check -i rv.dat 2>err.txt
	has err.txt "one MODEL.dot is needed"
}

# the rv:error records of FILE as the offline check prints violations:
# "event EV on state ST" lines, in time order
online_violations() {
	$TRAIL report -i "$1" | sed -n 's/.*rv:error: key=\([0-9]*\) monitor="[^"]*" event="\([^"]*\)" state="\([^"]*\)".*/\1 \2 \3/p'
}
offline_violations() { # file model [rv check options]: "KEY EV ST", KEY as the records keep it
	local f=$1 m=$2 rc=0; shift 2
	$TRAIL rv check -i "$f" "$@" "$m" >ck.txt || rc=$?
	sed -n 's/.* rv: monitor [^ ]* does not allow event \(.*\) on state \([^ ]*\)\( ([^ ]* \([0-9]*\))\)\{0,1\}$/\4 \1 \2/p' ck.txt
	return $rc
}

# --rv: the same model checked in the process, before each record: the
# same violations as `trail rv check` finds in the recording, per key,
# per thread and per process; the model's events monitored when only
# rv:error is recorded; four threads at once sharing no instance
online() {
	fresh_registry
	mutex_model mutex.dot
	$TRAIL record -q -e 'app:*' --rv mutex.dot --per id -o on.dat -- "$PROG" 100 2>err.txt
	[ ! -s err.txt ] || die "reactor trace writes nothing: $(cat err.txt)"
	online_violations on.dat >on.txt
	[ "$(cat on.txt)" = "4 app:lock locked
3 app:unlock unlocked" ] || die "$(cat on.txt)"
	expect_rc 1 offline_violations on.dat mutex.dot --per id >off.txt
	diff on.txt off.txt || die "online and offline differ (per id)"
	$TRAIL rv list -i on.dat >l.txt
	has l.txt 'mutex per=id reactor=trace states=2 events=2: 2 violations'
	# per thread: the main thread's two, keyed by its tid (the offline
	# check names no key: compare the events and states)
	$TRAIL record -q -e 'app:*' --rv mutex.dot -o th.dat -- "$PROG" 100
	online_violations th.dat >on.txt
	[ "$(cut -d' ' -f2- on.txt)" = "app:lock locked
app:unlock unlocked" ] || die "$(cat on.txt)"
	local main
	main=$($TRAIL report -i th.dat | grep -m1 'app:lock: id=4' | sed -E 's/^ *rvprog-([0-9]+) .*/\1/')
	[ "$(cut -d' ' -f1 on.txt | sort -u)" = "$main" ] || die "key is not the main thread $main: $(cat on.txt)"
	expect_rc 1 $TRAIL rv check -i th.dat mutex.dot >off.txt
	has off.txt '2 violations, 2 instances (per thread)'
	# nothing but rv:error recorded: the events are monitored all the same
	$TRAIL record -q --rv mutex.dot --per process -o only.dat -- "$PROG" 100
	$TRAIL report -i only.dat >r.txt
	[ "$(grep -c 'app:' r.txt)" = 2 ] || die "$(cat r.txt)" # (the two rv:error lines' event=)
	[ "$(grep -c 'rv:error: ' r.txt)" = 2 ] || die "$(cat r.txt)"
	# 4 threads, 2000 events each, none wrong
	$TRAIL record -q -e 'app:*' --rv mutex.dot --per id -o mt.dat -- "$PROG" 500 4
	online_violations mt.dat >on.txt
	[ "$(wc -l <on.txt)" = 2 ] || die "$(cat on.txt)"
	expect_rc 1 $TRAIL rv check -i mt.dat --per id mutex.dot >off.txt
	has off.txt 'rv: monitor mutex: 8004 events, 2 violations, 10 instances (per id)'
	# a filter in a label: only id 4's events are the model's
	mutex_model m3.dot 'app:lock[id == 4]' 'app:unlock[id == 3]'
	$TRAIL record -q -e 'app:*' --rv m3.dot --per id -o f.dat -- "$PROG" 10
	online_violations f.dat >on.txt
	expect_rc 1 offline_violations f.dat m3.dot --per id >off.txt
	diff on.txt off.txt || die "online and offline differ (filters)"
	[ "$(wc -l <on.txt)" = 2 ] || die "$(cat on.txt)"
}

# the reactors: printk (the kernel's line on the process's stderr),
# traceoff (the violating event and all after it unrecorded), abort (a
# core; the record before it kept), snapshot (a file), nop
reactors() {
	fresh_registry
	mutex_model mutex.dot
	$TRAIL record -q -e 'app:*' --rv mutex.dot --per id --reactor printk -o p.dat -- "$PROG" 10 2>err.txt
	[ "$(cat err.txt)" = "rv: monitor mutex does not allow event app:lock on state locked (id 4)
rv: monitor mutex does not allow event app:unlock on state unlocked (id 3)" ] || die "$(cat err.txt)"
	$TRAIL record -q -e 'app:*' --rv mutex.dot --per id --reactor traceoff -o o.dat -- "$PROG" 10
	$TRAIL report -i o.dat >r.txt
	# the first lock of 4 recorded, the second (the violation) and the
	# unlocks after it not; its rv:error record is
	[ "$(grep -c 'app:lock: id=4' r.txt)" = 1 ] || die "$(cat r.txt)"
	! grep -q 'app:unlock: id=[34]' r.txt || die "recorded after traceoff: $(cat r.txt)"
	[ "$(grep -c 'rv:error: ' r.txt)" = 1 ] || die "$(cat r.txt)"
	expect_rc 134 $TRAIL record -q -e 'app:*' --rv mutex.dot --per id --reactor abort -o a.dat -- "$PROG" 10 2>err.txt
	has err.txt 'rv: monitor mutex does not allow event app:lock on state locked (id 4)'
	has err.txt 'killed by signal 6'
	$TRAIL report -i a.dat >r.txt
	[ "$(grep -c 'rv:error: key=4 monitor="mutex" event="app:lock" state="locked"' r.txt)" = 1 ] || die "$(cat r.txt)"
	[ "$(grep -c 'app:lock: id=1' r.txt)" = 10 ] || die "events before the abort lost: $(cat r.txt)"
	rm -f s.dat s.dat.*
	$TRAIL record -q -e 'app:*' --overwrite --rv mutex.dot --per id --reactor snapshot -o s.dat -- "$PROG" 10
	ls s.dat.* >/dev/null 2>&1 || die "no snapshot file: $(ls)"
	$TRAIL record -q -e 'app:*' --rv mutex.dot --per id --reactor nop -o n.dat -- "$PROG" 10 2>err.txt
	[ ! -s err.txt ] || die "$(cat err.txt)"
	[ "$(online_violations n.dat | wc -l)" = 2 ] || die "nop: the records are kept"
}

# --rv's bad input: a key field an event lacks, a reactor or --per
# without a monitor, an event not in the program, a filter that does not
# compile (its caret under the label), a model that does not parse
online_bad() {
	fresh_registry
	mutex_model mutex.dot
	expect_rc 1 $TRAIL record -q -e 'app:*' --rv mutex.dot --per obj -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--per obj: event app:lock (in mutex'"'"'s model) has no field obj'
	expect_rc 2 $TRAIL record -q -e 'app:*' --rv mutex.dot --reactor panic -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--reactor panic: nop, trace, printk, abort, traceoff or snapshot'
	expect_rc 2 $TRAIL record -q -e 'app:*' --per id --rv mutex.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--per id: it applies to the --rv before it'
	expect_rc 2 $TRAIL record -q -e 'app:*' --rv mutex.dot --per '1x' -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'thread, process, or the name of an event field'
	mutex_model ue.dot app:lock app:nosuch
	expect_rc 1 $TRAIL record -q -e 'app:*' --rv ue.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--rv ue.dot: event app:nosuch is none of the program'"'"'s events'
	mutex_model bf.dot 'app:lock[nope == 1]'
	expect_rc 1 $TRAIL record -q -e 'app:*' --rv bf.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'Field not found'
	[ "$(caret_col err.txt)" = 9 ] || die "caret: $(cat err.txt)"
	printf 'digraph m {\n "a" -> "b" [label = "app:lock"];\n}\n' >ni.dot
	expect_rc 2 $TRAIL record -q -e 'app:*' --rv ni.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '--rv ni.dot:1:1: no initial state'
	expect_rc 2 $TRAIL record -q -e 'app:*' --rv mutex.dot --rv mutex.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'a monitor named mutex is loaded already'
	# more labels on one event than libtrail keeps
	{ echo 'digraph many { "__init_a" -> "a";'
	  for i in $(seq 1 9); do echo "\"a\" -> \"a\" [label = \"app:lock[id == $i]\"];"; done
	  echo '}'; } >many.dot
	expect_rc 1 $TRAIL record -q -e 'app:*' --rv many.dot -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt '9 events of the models are app:lock, at most 8 an event'
	[ ! -e x.dat ] || die "a refused recording wrote x.dat"
}

# report --refcount: a known leak (object b, in leak_one) and a known use
# after put (object c, in use_after_put), with their stacks
refcount() {
	fresh_registry
	$TRAIL record -q -e 'app:obj_*' -T 'app:obj_get:stacktrace' -T 'app:obj_use:stacktrace' \
		-o ref.dat -- "$BUILD/tests/cli/refprog"
	local spec='get=app:obj_get:obj,put=app:obj_put:obj,use=app:obj_use:obj'
	$TRAIL report -i ref.dat --refcount "$spec" >r.txt
	has r.txt '# 3 objects, 1 unbalanced, 1 use after put, 0 puts without a get'
	grep -qE '^unbalanced: object 0x[0-9a-f]+: count 1 \(2 gets, 1 put\)$' r.txt || die "$(cat r.txt)"
	# the get not put back: leak_one's second, its stack through get()
	sed -n '/^unbalanced/,$p' r.txt | grep -q '=> leak_one+' || die "$(cat r.txt)"
	sed -n '/^use after put/,/^unbalanced/p' r.txt >u.txt
	has u.txt 'app:obj_use (after its last put) at '
	grep -q '=> use_after_put+' u.txt || die "$(cat u.txt)"
	has u.txt '  its last put at '
	# without use=: the leak alone
	$TRAIL report -i ref.dat --refcount 'get=app:obj_get:obj,put=app:obj_put:obj' >r2.txt
	has r2.txt '# 3 objects, 1 unbalanced, 0 uses after put, 0 puts without a get'
	expect_rc 1 $TRAIL report -i ref.dat --refcount 'get=app:obj_get:nope,put=app:obj_put:obj' 2>err.txt
	has err.txt 'app:obj_get has no field nope'
	[ "$(caret_col err.txt)" = 16 ] || die "$(cat err.txt)"
	expect_rc 1 $TRAIL report -i ref.dat --refcount 'get=app:obj_get:obj' 2>err.txt
	has err.txt 'give a get= and a put='
	expect_rc 1 $TRAIL report -i ref.dat --refcount 'take=app:obj_get:obj' 2>err.txt
	has err.txt 'get=SYS:EVENT:FIELD'
}

t violations_per_key_thread_process violations_per_key_thread_process
t online online
t reactors reactors
t online_bad online_bad
t refcount refcount
t bad_models bad_models
