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
t refcount refcount
t bad_models bad_models
