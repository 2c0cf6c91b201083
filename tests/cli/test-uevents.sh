#!/usr/bin/env bash
# User events: a program written against the kernel's user_events ABI
# (tests/cli/uevents.c, its own copy of the uapi definitions) run
# unchanged under trail, no root, no kernel support: exact counts and
# field values, the kernel's answers to bad input, enable bits flipping
# on attach and detach, fork, exec, many threads, registration churn;
# trail/uevent.h's C API; u: lines.
. "$(dirname "$0")/lib.sh"

UE=$BUILD/tests/cli/uevents
export TRAIL_REGISTRY=$TMP/reg

# report's records of FILE for EVENT, their fields only
fields_of() { # file event
	$TRAIL report -q -i "$1" | sed -nE "s/.*: $2: //p"
}

kernel_abi_exact() {
	fresh_registry
	$TRAIL record -q -e 'user_events:*' -o t.dat -- "$UE" basic 300 >out.txt
	has out.txt "written a=300 b=300 c=300"
	fields_of t.dat user_events:ue_count >a.txt
	fields_of t.dat user_events:ue_msg >b.txt
	fields_of t.dat user_events:ue_blob >c.txt
	[ "$(wc -l <a.txt)" = 300 ] && [ "$(wc -l <b.txt)" = 300 ] && [ "$(wc -l <c.txt)" = 300 ] ||
		die "$(wc -l a.txt b.txt c.txt)"
	# every value, in order: u32 and s64; a __data_loc and a __rel_loc
	# string, a char[8]; a struct's bytes and an unsigned char
	seq 0 299 | awk '{ print "round=" $1 " neg=" ($1 ? "-" $1 : 0) }' | diff -u - a.txt
	seq 0 299 | awk '{ print "text=\"hello-" $1 "\" n=" $1 " tail=\"t\" tag=\"tag\"" }' | diff -u - b.txt
	has c.txt 'p={0x2b,0x1,0x0,0x0,0xd4,0xfe,0xff,0xff} c=43'
	# the fields by name: a filter, a hist key, the format listed
	$TRAIL record -q -e user_events:ue_msg -f 'n >= 290 && text ~ "hello-29*"' \
		-T 'user_events:ue_count:hist:keys=round.buckets=100:vals=round' -e user_events:ue_count \
		-o f.dat -- "$UE" basic 300 >/dev/null
	[ "$(fields_of f.dat user_events:ue_msg | wc -l)" = 10 ] || die "$(fields_of f.dat user_events:ue_msg)"
	$TRAIL hist -i f.dat -e user_events:ue_count >h.txt
	has h.txt '{ round: ~ 0-99 } hitcount:        100  round:       4950'
	has h.txt '    Hits: 300'
	# exports: the fields by name (Chrome's args; CTF's metadata, read
	# back by babeltrace2 where it is installed)
	$TRAIL export -q -F chrome -i t.dat -o t.json
	grep -q '"name":"user_events:ue_msg".*"args":{"text":"hello-7","n":7,"tail":"t","tag":"tag"}' t.json ||
		die "$(grep -o '"name":"user_events:ue_msg"[^}]*}' t.json | head -2)"
	$TRAIL export -q -F ctf -i t.dat -o ctf
	grep -q 'string _text;' ctf/metadata || die "$(grep -A8 ue_msg ctf/metadata | head -20)"
	if command -v babeltrace2 >/dev/null; then
		babeltrace2 ctf | grep -q 'user_events:ue_msg: .*text = "hello-299"' || die "$(babeltrace2 ctf | tail -3)"
	fi
}

# the kernel's errno for each bad registration and write (the table of
# its selftests: abi_test.c, dyn_test.c, ftrace_test.c)
kernel_answers() {
	local persist=EPERM
	[ "$(id -u)" = 0 ] && persist=0
	LD_PRELOAD=$LIBTRAIL "$UE" errors >got.txt
	cat >want.txt <<-EOF
	reg_ok 0
	index 0
	same_addr_bit EADDRINUSE
	same_event_bit30 0
	index 0
	nospace_match 0
	other_format EADDRINUSE
	flags_max EINVAL
	size_2 EINVAL
	bit_32 EINVAL
	unaligned EINVAL
	readonly ENOMEM
	flags_text EINVAL
	bad_type EINVAL
	two_blanks EINVAL
	size_on_int EINVAL
	struct_no_size EINVAL
	array_9999 EINVAL
	array_hex 0
	too_long EINVAL
	bad_pointer EFAULT
	size_tail_nonzero E2BIG
	persist $persist
	multi_first 0
	multi_second 0
	write_disabled EBADF
	write_unknown_index ENOENT
	write_negative_index EINVAL
	write_short EFAULT
	write_short_payload EINVAL
	unreg_unknown ENOENT
	unreg_31 0
	unreg_31_again ENOENT
	del_busy EBUSY
	del_unknown ENOENT
	unknown_ioctl ENOTTY
	unreg_30_after_close 0
	unreg_29 0
	del_gone ENOENT
	reg_again_other_format 0
	unreg_again 0
	EOF
	diff -u want.txt got.txt
	# without libtrail the same program finds no user_events_data here
	# (this kernel has none, or it is root's): trail answered, not it
	if [ ! -w /sys/kernel/tracing/user_events_data ]; then
		expect_rc 3 "$UE" errors >/dev/null 2>err.txt
		has err.txt 'user_events_data'
	fi
}

# a running program attached and detached: its bit set while recorded,
# cleared after; every write that succeeded (the kernel's answer to a
# write of a disabled event is EBADF) is a record, but one racing a detach
attach_detach_bits() {
	fresh_registry
	rm -f stop
	LD_PRELOAD=$LIBTRAIL "$UE" wait stop 60 >out.txt &
	local p=$!
	wait_for "grep -q ready out.txt" || die "never ready"
	record_running $p -e user_events:ue_count -o a.dat
	record_running $p -e user_events:ue_count -o b.dat
	touch stop
	wait $p
	# off, on, off, on, off: 4 changes seen by the program
	has out.txt "changes=4 "
	local wa na nb
	wa=$(sed -nE 's/.* written a=([0-9]+) .*/\1/p' out.txt)
	na=$(fields_of a.dat user_events:ue_count | wc -l)
	nb=$(fields_of b.dat user_events:ue_count | wc -l)
	[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || die "a=$na b=$nb"
	# (a write racing a detach: told it succeeded, nothing recorded)
	[ $((na + nb)) -le "$wa" ] && [ $((wa - na - nb)) -le 2 ] || die "records $na + $nb, writes $wa"
}

# four threads writing while two sessions attach and detach, one after
# the other: every write that succeeded is in one of the files (but those
# racing a detach), none twice, none lost (the detach's grace period)
threads_while_detaching() {
	fresh_registry
	rm -f tstop
	LD_PRELOAD=$LIBTRAIL "$UE" waitthreads tstop 4 >out.txt &
	local p=$! w na nb
	wait_for "grep -q ready out.txt" || die "never ready"
	record_running $p -e user_events:ue_count -o a.dat
	record_running $p -e user_events:ue_count -o b.dat
	touch tstop
	wait $p
	w=$(sed -nE 's/threads written a=([0-9]+)/\1/p' out.txt)
	na=$($TRAIL report -q -i a.dat --count | awk '$1 == "user_events:ue_count" { print $2 }')
	nb=$($TRAIL report -q -i b.dat --count | awk '$1 == "user_events:ue_count" { print $2 }')
	[ "$na" -gt 0 ] && [ "$nb" -gt 0 ] || die "a=$na b=$nb"
	# (a write that read the bit set just before a detach cleared it is
	# told it succeeded and records nothing, as in the kernel: at most
	# one per thread and detach)
	[ $((na + nb)) -le "$w" ] && [ $((w - na - nb)) -le 8 ] || die "records $na + $nb, writes $w"
	for f in a.dat b.dat; do
		$TRAIL report -i $f | grep -q '^# entries-in-buffer/entries-written: \([0-9]*\)/\1 ' ||
			die "$($TRAIL report -i $f | sed -n 4,6p)"
	done
}

fork_and_exec() {
	fresh_registry
	$TRAIL record -q -e user_events:ue_count -o f.dat -- "$UE" fork 50 >out.txt
	has out.txt "child written a=50"
	has out.txt "parent written a=50 child ok"
	[ "$(fields_of f.dat user_events:ue_count | wc -l)" = 100 ] || die "$(fields_of f.dat user_events:ue_count | wc -l)"
	# exec drops the events: the old index is nobody's (the write goes to
	# the /dev/null beneath), nothing is recorded after it
	$TRAIL record -q -e 'user_events:*' -o e.dat -- "$UE" exec >out.txt
	has out.txt "after_exec write went nowhere"
	[ "$($TRAIL report -q -i e.dat | grep -c user_events)" = 0 ] || die "recorded after exec"
}

threads_exact() {
	fresh_registry
	$TRAIL record -q -e user_events:ue_count -o t.dat -- "$UE" threads 8 20000 >out.txt
	has out.txt "threads written a=160000"
	$TRAIL report -q -i t.dat --count >c.txt
	grep -qE '^ *user_events:ue_count +160000$' c.txt || die "$(cat c.txt)"
	$TRAIL report -i t.dat | grep -q ' 0 lost' || $TRAIL report -i t.dat | grep -q 'entries-written: 160000/160000' ||
		die "$($TRAIL report -i t.dat | sed -n 1,8p)"
}

# MULTI_FORMAT: one name, two sets of fields, two events
# (user_events_multi:NAME.<id>), each recorded as itself
multi_format() {
	fresh_registry
	$TRAIL record -q -e 'user_events_multi:ue_multi.*' -o m.dat -- "$UE" multi >out.txt
	has out.txt "multi written 2"
	fields_of m.dat 'user_events_multi:ue_multi\.[0-9a-f]+' | sort >got.txt
	printf '%s\n' 'first=5' 'second=6' | diff -u - got.txt
	$TRAIL report -q -i m.dat | grep -q 'user_events_multi:ue_multi\.0: first=5' || die "$($TRAIL report -q -i m.dat)"
	has out.txt "ue_multi.0 # Used by trail"
	has out.txt "Busy: 2"
}

# thousands of events registered, written, unregistered and deleted (the
# last reference, the fd's, closed each time): none left behind, none
# lost (ASan's leak check runs the same)
churn() {
	fresh_registry
	$TRAIL record -q -e 'user_events:ue_churn_*' -o c.dat -- "$UE" churn 2000 >out.txt
	has out.txt "churn 2000 bad 0"
	[ "$(fields_of c.dat 'user_events:ue_churn_[0-9]+' | wc -l)" -gt 0 ] ||
		die "none recorded: $($TRAIL report -q -i c.dat | head -3)"
}

# u: lines (trail probe, the kernel's dynamic_events line): defined ahead
# of any program, listed, checked against, kept for the program (another
# format: the kernel's EADDRINUSE), deleted
u_lines() {
	fresh_registry
	$TRAIL probe 'u:ue_count u32 round; s64 neg' 'u:request u32 fd; char[] path; u64 bytes'
	$TRAIL probe -l >l.txt
	printf '%s\n' 'u:ue_count u32 round; s64 neg' 'u:request u32 fd; char[] path; u64 bytes' | diff -u - l.txt
	expect_rc 2 $TRAIL probe 'u:bad u32 fd; strng path' 2>err.txt
	has err.txt 'Invalid type'
	[ "$(caret_col err.txt)" = 14 ] || die "$(cat err.txt)"
	expect_rc 1 $TRAIL probe 'u:ue_count u32 other' 2>err.txt
	has err.txt 'already exists'
	# a filter on its fields checked before the program runs
	expect_rc 1 $TRAIL record -e user_events:ue_count -f 'nope > 1' -o k.dat -- "$UE" basic 3 2>err.txt
	has err.txt 'Field not found'
	$TRAIL record -q -e user_events:ue_count -f 'round > 1' -o k.dat -- "$UE" basic 5 >/dev/null
	[ "$(fields_of k.dat user_events:ue_count | wc -l)" = 3 ] || die "$(fields_of k.dat user_events:ue_count)"
	# kept for the program: its registration with other fields refused
	$TRAIL probe -d ue_count
	$TRAIL probe 'u:ue_count u64 round'
	expect_rc 1 $TRAIL record -q -e user_events:ue_count -o k2.dat -- "$UE" basic 5 >out.txt 2>err.txt
	has err.txt 'ue_count: Address already in use'
	$TRAIL probe -d 'user_events/*'
	$TRAIL probe -l >l.txt
	[ ! -s l.txt ] || die "$(cat l.txt)"
}

# ---------------------------------------------------------------- Python

PYEV=$SRC/tests/cli/python/events.py
PY=${PYTHON:-/usr/bin/python3}
pyok() { [ -d "$BUILD/bindings/python/trail" ] && [ -x "$PY" ]; }
export PYTHONPATH=$BUILD/bindings/python

python_types() {
	fresh_registry
	# not recorded: the guard is false, nothing written
	"$PY" "$PYEV" types 10 >out.txt
	has out.txt "written 0"
	$TRAIL record -q -e 'app:*' -o t.dat -- "$PY" "$PYEV" types 200 >out.txt
	has out.txt "written 200"
	fields_of t.dat app:types >got.txt
	[ "$(wc -l <got.txt)" = 200 ] || die "$(wc -l <got.txt) records"
	has got.txt 'u8=0 s16=0 u32=0 s64=0 flag=1 ratio=0 f32=0 name=(null) raw={} tag="01234567"'
	has got.txt 'u8=1 s16=-1 u32=1000 s64=-1 flag=0 ratio=0.25 f32=1 name="né-1" raw={0} tag="01234567"'
	has got.txt 'u8=199 s16=-199 u32=199000 s64=-7880599 flag=0 ratio=49.75 f32=199 name="né-199" raw={0,1,2,3} tag="01234567"'
	# filters and hist on its fields by name
	$TRAIL record -q -e app:types -f 'name ~ "né-1*" && u32 >= 100000' \
		-T 'app:types:hist:keys=flag:vals=u32' -o f.dat -- "$PY" "$PYEV" types 200 >/dev/null
	[ "$(fields_of f.dat app:types | wc -l)" = 50 ] || die "$(fields_of f.dat app:types | wc -l) filtered"
	$TRAIL hist -i f.dat -e app:types >h.txt
	has h.txt '    Hits: 200'
}

python_errors() {
	fresh_registry
	$TRAIL record -q -e 'app:*' -o e.dat -- "$PY" "$PYEV" errors >got.txt
	cat >want.txt <<-'EOF'
	bad_type ValueError app:x u128 n: Invalid type (u8..u64, s8..s64, int, char[N], string, double, ...)
	bad_name ValueError app:bad-name u32 n: Invalid event name (letters, digits and _)
	bad_system ValueError a pp:x u32 n: Invalid system name (letters, digits and _)
	type_not_str TypeError event(): field 'n': its type as a str ('u32', 'string', 'double'...), not int
	definition ok
	definition_bad ValueError app:defb u32 n; strang s: Invalid type (u8..u64, s8..s64, int, char[N], string, double, ...)
	other_fields ValueError app:err u64 n: An event of that name has other fields
	same_fields ok
	fields (('n', 'int'), ('s', 'str'), ('b', 'bytes'), ('d', 'float'))
	enabled True
	str_for_int TypeError app:err: field 'n' takes int, not str
	int_for_str TypeError app:err: field 's' takes str, not int
	str_for_bytes TypeError app:err: field 'b' takes bytes, not str
	str_for_double TypeError app:err: field 'd' takes float, not str
	missing TypeError app:err: field 'd' missing
	unknown TypeError app:err has no field 'e'
	twice TypeError app:err: field 'n' given twice
	too_many TypeError app:err takes 4 values, 5 given
	too_big OverflowError int too big to convert
	none_string ok
	positional ok
	EOF
	diff -u want.txt got.txt
	# the three that passed: their records, and nothing of the refused ones
	fields_of e.dat app:err >rec.txt
	printf '%s\n' 'n=1 s=(null) b={} d=2' 'n=2 s="中文" b={0,255} d=0.5' | diff -u - rec.txt
	# the caret under a bad definition's position
	"$PY" -c 'import trail; trail.event("app", "defb u32 n; strang s")' 2>err.txt && die "accepted"
	grep -A2 'ValueError' err.txt | tail -1 | grep -qx '              ^' || die "$(cat err.txt)"
}

python_threads_and_logging() {
	fresh_registry
	$TRAIL record -q -e 'app:th' -o t.dat -- "$PY" "$PYEV" threads 8 5000 >out.txt
	has out.txt "written 40000"
	[ "$(fields_of t.dat app:th | wc -l)" = 40000 ] || die "$(fields_of t.dat app:th | wc -l)"
	for k in 0 7; do
		[ "$(fields_of t.dat app:th | grep -c "^t=$k ")" = 5000 ] || die "thread $k"
	done
	$TRAIL record -q -e 'python:logging' -o l.dat -- "$PY" "$PYEV" logging 100 >out.txt
	has out.txt "logged 100"
	fields_of l.dat python:logging >l.txt
	[ "$(wc -l <l.txt)" = 100 ] || die "$(wc -l <l.txt) records"
	grep -q '^asctime="record 7 of test" msg="record 7 of test" logger_name="app.log" funcName="log" lineno=[0-9]* int_loglevel=30 thread=[0-9]* threadName="MainThread" pathname=".*events.py"$' l.txt ||
		die "$(sed -n 8p l.txt)"
	[ "$(grep -c 'int_loglevel=20 ' l.txt)" = 50 ] || die "levels"
	# not recorded: nothing is formatted
	"$PY" "$PYEV" logging 10 >out.txt
	has out.txt "logged 10"
}

# a running interpreter attached and detached: ev.enabled follows
python_attached() {
	fresh_registry
	rm -f pystop
	LD_PRELOAD=$LIBTRAIL "$PY" "$PYEV" wait pystop >out.txt 2>py.err &
	local p=$!
	wait_for "grep -q ready out.txt" || die "never ready"
	record_running $p -e app:tick -o a.dat || die "$(cat out.txt py.err)"
	touch pystop
	wait $p
	has out.txt "flips=2 "
	local w
	w=$(sed -nE 's/.* written=([0-9]+)/\1/p' out.txt)
	[ "$w" -gt 0 ] && [ "$(fields_of a.dat app:tick | wc -l)" = "$w" ] ||
		die "written $w, recorded $(fields_of a.dat app:tick | wc -l)"
}

t kernel_abi_exact kernel_abi_exact
t kernel_answers kernel_answers
t attach_detach_bits attach_detach_bits
t threads_while_detaching threads_while_detaching
t fork_and_exec fork_and_exec
t threads_exact threads_exact
t churn churn
t multi_format multi_format
t u_lines u_lines
for f in python_types python_errors python_threads_and_logging python_attached; do
	if pyok; then
		t $f $f
	else
		skip $f "the Python module is not built (python3-dev missing when meson ran)"
	fi
done
