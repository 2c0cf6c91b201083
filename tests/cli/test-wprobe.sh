#!/usr/bin/env bash
# wprobes (w: in the probe grammar): hardware watchpoints on a plain
# program's data (tests/cli/wp/wprog.c: 4 threads add to `counter` N
# times under a lock, so its values are 1 .. 4N, each written once):
# every write recorded once, with its value and the instruction after it
# named; threads created after the start and threads already running at
# an attach; kept definitions; what x86 cannot do refused before anything
# runs; debug registers a debugger holds named as the cause.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/wprog
N=2000

# the records of EVENT in FILE's report: their v= values, one a line
values() { $TRAIL report -i "$1" | sed -n "s/.* $2: (.*) v=\(0x[0-9a-f]*\).*/\1/p"; }

# 4N writes from 4 threads created after the start: 4N records, each
# value once, the writer named (worker+OFF, the instruction after the
# store); the program's output unchanged; one write of flag, in main
every_write_once() {
	fresh_registry
	$TRAIL record -q --probe 'w:app/cnt w@counter v=$value a=$addr o=$old' --probe 'w:app/flag w@flag:1 f=$value' \
		-o w.dat -- "$PROG" $N >out.txt
	[ "$(cat out.txt)" = "counter=$((4 * N))" ] || die "program output: $(cat out.txt)"
	$TRAIL report -i w.dat >r.txt
	[ "$(grep -c ' app:cnt: ' r.txt)" = $((4 * N)) ] || die "$(grep -c ' app:cnt: ' r.txt) records of $((4 * N))"
	values w.dat app:cnt | sort -u >v.txt
	[ "$(wc -l <v.txt)" = $((4 * N)) ] || die "$(wc -l <v.txt) distinct values"
	[ "$(printf '%d' "$(values w.dat app:cnt | sort | head -1)")" -ge 1 ] || die "a value 0"
	# shellcheck disable=SC2046 # one value a word
	[ "$(printf '%d\n' $(values w.dat app:cnt) | sort -n | tail -1)" = $((4 * N)) ] ||
		die "the last value is not $((4 * N))"
	# every record the writing function's, the same address each time
	[ "$(grep ' app:cnt: ' r.txt | grep -vc ' app:cnt: (worker+0x')" = 0 ] || die "$(grep ' app:cnt: ' r.txt | grep -v worker | head -2)"
	[ "$(sed -n 's/.* app:cnt: .* a=\(0x[0-9a-f]*\) o=.*/\1/p' r.txt | sort -u | wc -l)" = 1 ] || die "more than one \$addr"
	# four writer threads (and none of them the main one)
	[ "$(grep ' app:cnt: ' r.txt | awk '{ print $1 }' | sort -u | wc -l)" = 4 ] || die "not 4 writers"
	grep -qE ' app:flag: \(main\+0x[0-9a-f]+/0x[0-9a-f]+\) f=0x1$' r.txt || die "$(grep app:flag r.txt)"
	# $old: under the lock, each write's old value is the one before it
	grep ' app:cnt: ' r.txt | sed -n 's/.* v=\(0x[0-9a-f]*\) a=0x[0-9a-f]* o=\(0x[0-9a-f]*\)$/\1 \2/p' >vo.txt
	[ "$(wc -l <vo.txt)" = $((4 * N)) ] || die "$(head -2 r.txt)"
	# shellcheck disable=SC2046 # one value a word
	[ "$(printf '%d %d\n' $(cat vo.txt) | awk '$1 != $2 + 1' | wc -l)" = 0 ] ||
		die "an old value that is not the value before: $(printf '%d %d\n' $(cat vo.txt) | awk '$1 != $2 + 1' | head -3)"
	[ "$(grep -c ' app:flag: ' r.txt)" = 1 ] || die "flag written once"
}

# -P on a process whose threads are already running: each gets the
# watchpoint (and writes nothing until the recorder is there)
running_threads() {
	fresh_registry
	rm -f go
	LD_PRELOAD=$BUILD/libtrail.so.1 "$PROG" $N "$TMP/go" >out.txt &
	local pid=$! rec
	for _ in $(seq 100); do [ "$(ls /proc/$pid/task | wc -l)" -ge 5 ] && break; sleep 0.05; done
	$TRAIL record --probe 'w:app/cnt w@counter v=$value' -o p.dat -P $pid 2>rr.err &
	rec=$!
	wait_for "grep -q 'attached to process' rr.err" || die "never attached: $(cat rr.err)"
	touch go
	wait $pid
	has out.txt "counter=$((4 * N))"
	stop_rec $rec
	[ "$(values p.dat app:cnt | sort -u | wc -l)" = $((4 * N)) ] || die "$(values p.dat app:cnt | wc -l) records"
}

# a definition kept with trail probe, listed as the kernel lists it,
# recorded by -e; an address watch of the same variable
kept_definitions() {
	fresh_registry
	$TRAIL probe 'w:app/cnt w@counter v=$value'
	$TRAIL probe 'w w@flag'
	$TRAIL probe -l >l.txt
	cat >want.txt <<'W'
w:app/cnt w@counter v=$value
w:wprobes/w_flag w@flag
W
	diff -u want.txt l.txt || die "trail probe -l"
	$TRAIL record -q -e 'app:cnt' -e 'wprobes:*' -o k.dat -- "$PROG" 100 >/dev/null
	[ "$(values k.dat app:cnt | wc -l)" = 400 ] || die "$(values k.dat app:cnt | wc -l) of 400"
	has <($TRAIL report -i k.dat) ' wprobes:w_flag: (main+0x'
	$TRAIL probe -d app/cnt
	$TRAIL probe -d wprobes/w_flag
}

# refused before the program runs, a caret under the cause
bad_watches() {
	fresh_registry
	local r
	# DEFINITION|MESSAGE|CARET COLUMN|EXIT STATUS (2: the grammar's, 1:
	# the program's variables)
	for r in 'w:a/b r@counter|x86 cannot watch reads alone|6|1' \
		 'w:a/b w@touch|'"'"'touch'"'"' is a function, not a variable|8|1' \
		 'w:a/b w@small|'"'"'small'"'"' is 16 bytes: give the length|8|1' \
		 'w:a/b w@small+2:4|unaligned: 0x|8|1' \
		 'w:a/b w@nosuch|unknown variable '"'"'nosuch'"'"'|8|1' \
		 'w:a/b w@counter:3|Invalid length: 1, 2, 4 or 8 bytes|16|2' \
		 'w:a/b x@counter|Invalid access type: r, w or rw|6|2' \
		 'w:a/b counter|Invalid watch specification|6|2' \
		 'w:a/b w@counter $arg1|a wprobe has $addr, $value, $old and $comm|16|2' \
		 'w:a/b w@counter x=counter|a wprobe reads $addr, $value, @SYM, registers and memory|18|2' \
		 'p:a/b touch $value|$value is a wprobe'"'"'s (w:)|12|2'; do
		IFS='|' read -r def msg col rc <<<"$r"
		expect_rc "$rc" $TRAIL record -q --probe "$def" -o x.dat -- "$PROG" 1 2>err.txt
		has err.txt "$msg"
		[ "$(caret_col err.txt)" = "$col" ] || die "$def: caret at $(caret_col err.txt), not $col: $(cat err.txt)"
	done
expect_rc 1 $TRAIL record -q --probe 'w:a/a w@counter' --probe 'w:a/b w@flag' --probe 'w:a/c w@small:4' \
		--probe 'w:a/d w@small+4:4' --probe 'w:a/e w@small+8:4' -o x.dat -- "$PROG" 1 2>err.txt
	has err.txt 'a fifth watchpoint: x86 has 4 debug registers a thread'
	[ ! -e x.dat ] || die "a refused recording wrote x.dat"
}

# set_wprobe / clear_wprobe: an object's field watched from its app:alloc
# to its app:release (tests/cli/wp/objprog.c: 3 objects, count written 5,
# 6, 7 times while watched, once more after): 18 records, values 1..5,
# 1..6, 1..7, each between its object's alloc and release
set_clear_over_a_life() {
	fresh_registry
	local OBJ=$BUILD/tests/cli/objprog
	$TRAIL record -q --probe 'w:app/obj w@-1:8 v=$value' -e app:alloc -T 'set_wprobe:app/obj:ptr+8' \
		-e app:release -T 'clear_wprobe:app/obj:ptr+8' -o o.dat -- "$OBJ" >out.txt
	has out.txt 'total=18'
	$TRAIL report -i o.dat | sed -n 's/.* \(app:[a-z]*\): .*v=0x\([0-9a-f]*\)$/\1 \2/p; s/.* \(app:[a-z]*\): ptr=.*/\1/p' >s.txt
	printf '%s\n' app:alloc 'app:obj 1' 'app:obj 2' 'app:obj 3' 'app:obj 4' 'app:obj 5' app:release \
		app:alloc 'app:obj 1' 'app:obj 2' 'app:obj 3' 'app:obj 4' 'app:obj 5' 'app:obj 6' app:release \
		app:alloc 'app:obj 1' 'app:obj 2' 'app:obj 3' 'app:obj 4' 'app:obj 5' 'app:obj 6' 'app:obj 7' \
		app:release >want.txt
	diff -u want.txt s.txt || die "set/clear_wprobe"
	# without the clear: the write after the release is seen too
	$TRAIL record -q --probe 'w:app/obj w@-1:8 v=$value' -e app:alloc -T 'set_wprobe:app/obj:ptr+8' \
		-o o2.dat -- "$OBJ" >/dev/null
	[ "$($TRAIL report -i o2.dat | grep -c 'v=0x63$')" = 3 ] || die "the writes of 99 after each release"
	# the trigger's field: one of its event's, an integer
	expect_rc 1 $TRAIL record -q --probe 'w:app/obj w@-1:8' -e app:alloc -T 'set_wprobe:app/obj:nope' \
		-o x.dat -- "$OBJ" 2>err.txt
	has err.txt 'Couldn'"'"'t find field'
	expect_rc 2 $TRAIL record -q --probe 'w:app/obj w@-1:8' -e app:alloc -T 'set_wprobe:app/obj' \
		-o x.dat -- "$OBJ" 2>err.txt
	has err.txt 'Missing FIELD'
	# ... of a pointer's width: a 32-bit field (a probe's on main's argc)
	# holds no address
	expect_rc 1 $TRAIL record -q --probe 'w:app/obj w@-1:8' --probe 'p:app/m main argc=%di:s32' \
		-T 'app:m:set_wprobe:app/obj:argc' -o x.dat -- "$OBJ" 2>err.txt
	has err.txt 'a wprobe trigger takes a pointer: this field has 32 bits'
	[ "$(caret_col err.txt)" = 25 ] || die "$(cat err.txt)"
	[ ! -e x.dat ] || die "a refused recording wrote x.dat"
}

# a process whose threads' debug registers a debugger holds: the attach
# says so, and changes nothing (the program runs on, its output right)
registers_taken() {
	fresh_registry
	rm -f go
	WPROG_HOLD=1 LD_PRELOAD=$BUILD/libtrail.so.1 "$PROG" 10 "$TMP/go" >out.txt &
	local pid=$!
	for _ in $(seq 100); do grep -q held out.txt && break; sleep 0.05; done
	has out.txt 'held 4'
	expect_rc 1 $TRAIL record -q --probe 'w:app/cnt w@counter' -o t.dat -P $pid 2>err.txt
	has err.txt "process $pid: its threads' debug registers are taken (a debugger's watchpoints"
	touch go
	wait $pid
	has out.txt 'counter=40'
}

if ldd "$LIBTRAIL" | grep -q libtsan; then
	for n in every_write_once running_threads kept_definitions bad_watches set_clear_over_a_life registers_taken; do
		skip $n "TSan's background thread blocks SIGTRAP: watchpoints trap with it"
	done
	exit 0
fi
t every_write_once every_write_once
t running_threads running_threads
t kept_definitions kept_definitions
t bad_watches bad_watches
t set_clear_over_a_life set_clear_over_a_life
t registers_taken registers_taken
