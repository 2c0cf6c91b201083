#!/usr/bin/env bash
# MMIO tracing (--mmio, doc/mmio.md) of tests/cli/mmio/mmio.c: a memfd
# mapped shared, 4 threads each making 27 known accesses a pass to its own
# slot (14 loads, 13 stores: 8/16/32/64-bit, immediates, several
# registers, AH, SIB, movzx/movsx/movsxd, OR/AND/ADD on memory, CMP and
# TEST): every access recorded exactly once with its value, its width and
# its instruction named; the program's output the same traced or not;
# -P on a running program; an instruction not emulated (rep movsb)
# recorded and the region then left alone; bad input answered.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/mmio
PATHNAME=memfd:trail-mmio-test
N=200

# the mmio:rw records of a report: "TID R|W WIDTH OFF VALUE", one a line
rws() { sed -n 's/^ *[^ ]*-[0-9]*\/\{0,1\}\([0-9]*\) .* mmio:rw: (.*) \([RW]\) \([0-9]\) addr=0x[0-9a-f]* off=\(0x[0-9a-f]*\) value=\(0x[0-9a-f]*\)$/\2 \3 \4 \5/p' "$1"; }

every_access_once() {
	fresh_registry
	"$PROG" run $N >plain.txt
	$TRAIL record -q --mmio "$PATHNAME" -o m.dat -- "$PROG" run $N >out.txt
	diff -u plain.txt out.txt || die "the program's output changed under tracing"
	$TRAIL report -i m.dat >r.txt
	rws r.txt >rw.txt
	# as many loads and stores recorded as the program says it made
	local loads stores
	loads=$(awk '{ s += $6 } END { print s }' out.txt)
	stores=$(awk '{ s += $8 } END { print s }' out.txt)
	[ "$loads" = $((4 * 14 * N)) ] && [ "$stores" = $((4 * 13 * N)) ] || die "program: $loads $stores"
	[ "$(grep -c ' mmio:rw: ' r.txt)" = $((loads + stores)) ] || die "$(grep -c ' mmio:rw: ' r.txt) records of $((loads + stores))"
	[ "$(grep -c '^R ' rw.txt)" = "$loads" ] || die "$(grep -c '^R ' rw.txt) loads recorded of $loads"
	[ "$(grep -c '^W ' rw.txt)" = "$stores" ] || die "$(grep -c '^W ' rw.txt) stores recorded of $stores"
	# each thread's own, from its own slot (offsets 0x1000 + 0x100 * t)
	[ "$(grep ' mmio:rw: ' r.txt | awk '{ print $1 }' | sort | uniq -c | awk '{ print $1 }' | sort -u)" = $((27 * N)) ] ||
		die "not $((27 * N)) records from each thread: $(grep ' mmio:rw: ' r.txt | awk '{ print $1 }' | sort | uniq -c)"
	[ "$(awk '{ print substr($3, 1, 3) }' rw.txt | sort -u | tr '\n' ' ')" = "0x1 " ] || die "an offset out of the slots"
	[ "$(awk '{ print substr($3, 1, 4) }' rw.txt | sort -u | wc -l)" = 4 ] || die "not 4 slots"
	# the values: immediates stored, and read back as stored
	[ "$(grep -c '^W 1 0x1[0-3]00 0x5a$' rw.txt)" = $((4 * N)) ] || die "movb \$0x5a: $(grep -c '^W 1 0x1[0-3]00 0x5a$' rw.txt)"
	[ "$(grep -c '^W 2 0x1[0-3]02 0x1234$' rw.txt)" = $((4 * N)) ] || die "movw \$0x1234"
	[ "$(grep -c '^R 2 0x1[0-3]02 0x1234$' rw.txt)" = $((4 * N)) ] || die "movzwl"
	# (and thread 0's first addq of k = 0 writes it again)
	[ "$(grep -c '^W 8 0x1[0-3]08 0xfffffffffffffffe$' rw.txt)" = $((4 * N + 1)) ] || die "movq \$-2: $(grep -c '^W 8 0x1[0-3]08 0xfffffffffffffffe$' rw.txt)"
	# movl, movslq and orl's read; movl and orl's write (the bit was set)
	[ "$(grep -c '^R 4 0x1[0-3]04 0x89abcdef$' rw.txt)" = $((12 * N)) ] || die "R 4 0x89abcdef: $(grep -c '^R 4 0x1[0-3]04 0x89abcdef$' rw.txt)"
	[ "$(grep -c '^W 4 0x1[0-3]04 0x89abcdef$' rw.txt)" = $((8 * N)) ] || die "W 4 0x89abcdef"
	# andb $0x0f: read 0x5a, wrote 0xa
	[ "$(grep -c '^W 1 0x1[0-3]00 0xa$' rw.txt)" = $((4 * N)) ] || die "andb"
	# every access named by its instruction: run() (pass() inlined at -O2)
	[ "$(grep ' mmio:rw: ' r.txt | grep -vcE ' mmio:rw: \((run|pass)\+0x[0-9a-f]+/0x[0-9a-f]+\) ')" = 0 ] ||
		die "an access not named: $(grep ' mmio:rw: ' r.txt | grep -vE '\((run|pass)\+' | head -2)"
	grep -qE ' mmio:map: addr=0x[0-9a-f]+ len=0x4000 offset=0x0 path="memfd:trail-mmio-test"$' r.txt || die "no mmio:map"
	[ "$(grep -c ' mmio:unmap: .*why="munmap"' r.txt)" = 1 ] || die "the munmap not recorded"
	# --mmio-range: thread 1's slot alone (its pages still emulated)
	$TRAIL record -q --mmio "/memfd:trail-mmio-test (deleted)" --mmio-range 0x1100,0x1200 -o s.dat -- "$PROG" run $N >out2.txt
	diff -u plain.txt out2.txt || die "output changed (range)"
	$TRAIL report -i s.dat >s.txt
	rws s.txt >srw.txt
	[ "$(wc -l <srw.txt)" = $((27 * N)) ] || die "range: $(wc -l <srw.txt) records"
	[ "$(awk '{ print substr($3, 1, 4) }' srw.txt | sort -u)" = 0x11 ] || die "range: other offsets"
}

# -P: a running program (libtrail preloaded) whose region is mapped
# before the attach, its threads starting once the recorder is in
attach_running() {
	fresh_registry
	rm -f go
	LD_PRELOAD=$LIBTRAIL "$PROG" wait $N "$TMP/go" >out.txt &
	local pid=$! rec
	wait_for "grep -q ready out.txt" || die "never ready"
	rm -f rr.err # (a stale one would say "attached" before this recorder does)
	$TRAIL record --mmio "$PATHNAME" -o p.dat -P $pid 2>rr.err &
	rec=$!
	wait_for "grep -q 'attached to process' rr.err" || die "never attached: $(cat rr.err)"
	touch "$TMP/go"
	wait $pid
	stop_rec $rec
	[ "$(grep -c '^thread' out.txt)" = 4 ] || die "program: $(cat out.txt)"
	$TRAIL report -i p.dat >r.txt
	[ "$(grep -c ' mmio:rw: ' r.txt)" = $((4 * 27 * N)) ] || die "$(grep -c ' mmio:rw: ' r.txt) records of $((4 * 27 * N))"
	"$PROG" run $N >plain.txt
	diff -u plain.txt <(grep -v ready out.txt) || die "output changed (-P)"
}

# -P on a program started without libtrail: it is injected, the region
# found in the maps and armed the same way
attach_injected() {
	fresh_registry
	rm -f go
	"$PROG" wait $N "$TMP/go" >out.txt &
	local pid=$! rec
	wait_for "grep -q ready out.txt" || die "never ready"
	rm -f rr.err
	$TRAIL record --mmio "$PATHNAME" -o i.dat -P $pid 2>rr.err &
	rec=$!
	wait_for "grep -q 'attached to process' rr.err" || die "never attached: $(cat rr.err)"
	touch "$TMP/go"
	wait $pid || die "the program: $? $(cat out.txt)"
	stop_rec $rec || die "the recorder: $? $(cat rr.err)"
	[ "$($TRAIL report -i i.dat | grep -c ' mmio:rw: ')" = $((4 * 27 * N)) ] || die "records: $($TRAIL report -i i.dat | grep -c ' mmio:rw: ')"
}

# rep movsb into the region: an mmio:unknown record with its bytes and
# where, the region's tracing stopped (the program's own protection
# back), nothing recorded after it, the program's output unchanged
unsupported_stops() {
	fresh_registry
	"$PROG" unsupported 20 >plain.txt
	$TRAIL record -q --mmio "$PATHNAME" -o u.dat -- "$PROG" unsupported 20 >out.txt
	diff -u plain.txt out.txt || die "the program's output changed"
	$TRAIL report -i u.dat >r.txt
	grep -qE ' mmio:unknown: \(main\+0x[0-9a-f]+/0x[0-9a-f]+\) addr=0x[0-9a-f]+ insn=f3 a4' r.txt || die "$(grep mmio:unknown r.txt)"
	[ "$(grep -c ' mmio:unknown: ' r.txt)" = 1 ] || die "more than one mmio:unknown"
	grep -q ' mmio:unmap: .*why="unknown instruction"' r.txt || die "no unmap"
	# the first pass of the threads only
	[ "$(grep -c ' mmio:rw: ' r.txt)" = $((4 * 27 * 20)) ] || die "$(grep -c ' mmio:rw: ' r.txt) records"
	[ "$(sed -n '/mmio:unknown/,$p' r.txt | grep -c ' mmio:rw: ')" = 0 ] || die "records after the stop"
}

# the 4 threads meet rep movsb together: one mmio:unknown, one stop, the
# others run theirs natively; nothing lost or doubled before it
unsupported_race() {
	fresh_registry
	"$PROG" race 50 >plain.txt
	$TRAIL record -q --mmio "$PATHNAME" -o x.dat -- "$PROG" race 50 >out.txt
	diff -u plain.txt out.txt || die "the program's output changed"
	$TRAIL report -i x.dat >r.txt
	[ "$(grep -c ' mmio:unknown: ' r.txt)" = 1 ] || die "$(grep -c ' mmio:unknown: ' r.txt) mmio:unknown"
	[ "$(grep -c ' mmio:unmap: ' r.txt)" = 1 ] || die "$(grep -c ' mmio:unmap: ' r.txt) mmio:unmap"
	# (how many: as the threads raced to it; a thread may still be in its
	# first passes when another stops the region)
	local n
	n=$(grep -c ' mmio:rw: ' r.txt)
	[ "$n" -ge $((27 * 50)) ] && [ "$n" -le $((8 * 27 * 50)) ] || die "$n records"
	[ "$(sed -n '/mmio:unmap/,$p' r.txt | grep -c ' mmio:rw: ')" = 0 ] || die "records after the stop"
}

# a regular file, its second mapping through the program's descriptor
# (1) or by opening it again (2): the ways to a device's pages, which
# mremap cannot duplicate (forced here); at an attach, the descriptor is
# found by the file's device and inode
reopened_file() {
	fresh_registry
	MMIO_FILE=$TMP/regs.bin "$PROG" run 20 >plain.txt
	cp "$TMP/regs.bin" plain.bin
	for way in 1 2; do
		rm -f "$TMP/regs.bin"
		MMIO_FILE=$TMP/regs.bin TRAIL_MMIO_NO_MREMAP=$way $TRAIL record -q --mmio "$TMP/regs.bin" -o f.dat -- "$PROG" run 20 >out.txt
		diff -u plain.txt out.txt || die "the program's output changed ($way)"
		cmp plain.bin "$TMP/regs.bin" || die "the file's contents differ: the stores did not reach it ($way)"
		$TRAIL report -i f.dat >r.txt
		grep -q " mmio:map: .* path=\"$TMP/regs.bin\"" r.txt || die "$(grep mmio:map r.txt)"
		[ "$(grep -c ' mmio:rw: ' r.txt)" = $((4 * 27 * 20)) ] || die "$(grep -c ' mmio:rw: ' r.txt) records ($way)"
	done
	rm -f go
	MMIO_FILE=$TMP/regs.bin TRAIL_MMIO_NO_MREMAP=1 LD_PRELOAD=$LIBTRAIL "$PROG" wait 20 "$TMP/go" >out.txt &
	local pid=$! rec
	wait_for "grep -q ready out.txt" || die "never ready"
	# (removed: no path opens it again, the descriptor is the only way)
	rm "$TMP/regs.bin"
	rm -f rr.err
	$TRAIL record --mmio "$TMP/regs.bin" -o a.dat -P $pid 2>rr.err &
	rec=$!
	wait_for "grep -q 'attached to process' rr.err" || die "never attached: $(cat rr.err)"
	touch "$TMP/go"
	wait $pid
	stop_rec $rec
	[ "$($TRAIL report -i a.dat | grep -c ' mmio:rw: ')" = $((4 * 27 * 20)) ] || die "records (-P)"
}

# faults that are not the region's go to the program's own SIGSEGV
# handler as before: a NULL store (SEGV_MAPERR) and a store to a
# PROT_NONE page of its own (SEGV_ACCERR, as the region's are)
own_handler() {
	fresh_registry
	"$PROG" segv 20 >plain.txt
	has plain.txt "caught 101"
	has plain.txt "caught 202"
	$TRAIL record -q --mmio "$PATHNAME" -o g.dat -- "$PROG" segv 20 >out.txt
	diff -u plain.txt out.txt || die "the program's output changed"
	[ "$($TRAIL report -i g.dat | grep -c ' mmio:rw: ')" = $((4 * 27 * 20)) ] || die "records"
}

# what cannot be traced is said, never silent
bad_input() {
	fresh_registry
	# never mapped by a started program: said at its exit
	$TRAIL record -q --mmio "$PATHNAME" -o n.dat -- "$PROG" none >out.txt 2>err.txt
	has out.txt "not mapped"
	grep -qE '^trail: --mmio memfd:trail-mmio-test: never mapped shared by this process \(pid [0-9]+\): nothing recorded of it$' err.txt || die "$(cat err.txt)"
	# mapped private: no second mapping of its pages exists
	$TRAIL record -q --mmio "$PATHNAME" -o n.dat -- "$PROG" private 2 >out.txt 2>err.txt
	has err.txt "trail: --mmio memfd:trail-mmio-test: mapped private (MAP_PRIVATE), or no second mapping"
	[ "$(grep -c '^thread' out.txt)" = 4 ] || die "the private program: $(cat out.txt)"
	# mapped later, at offsets that do not hold the range
	$TRAIL record -q --mmio "$PATHNAME" --mmio-range 0x100000,0x100100 -o n.dat -- "$PROG" run 2 >out.txt 2>err.txt
	has err.txt "trail: --mmio memfd:trail-mmio-test: mapped, but not at the file offsets asked"
	# an attach: refused, nothing changed
	rm -f go
	LD_PRELOAD=$LIBTRAIL "$PROG" wait 2 "$TMP/go" >out.txt &
	local pid=$!
	wait_for "grep -q ready out.txt" || die "never ready"
	expect_rc 1 $TRAIL record -q --mmio memfd:no-such-region -o n.dat -P $pid 2>err.txt
	has err.txt "process $pid: an --mmio PATH is not mapped in it"
	expect_rc 1 $TRAIL record -q --mmio "$PATHNAME" --mmio-range 0x100000,0x200000 -o n.dat -P $pid 2>err.txt
	has err.txt "process $pid: an --mmio-range is outside the file offsets"
	touch "$TMP/go"
	wait $pid
	[ "$(grep -c '^thread' out.txt)" = 4 ] || die "the program after the refusals: $(cat out.txt)"
	LD_PRELOAD=$LIBTRAIL "$PROG" private 2 >out.txt &
	# (the private program runs its threads at once: nothing to attach to
	# reliably; its refusal is the started case's above)
	wait $!
	# usage
	expect_rc 2 $TRAIL record -q --mmio-range 0,1 --mmio x -- true 2>err.txt
	has err.txt "it applies to the --mmio before it"
	expect_rc 2 $TRAIL record -q --mmio x --mmio-range 0x20,0x10 -- true 2>err.txt
	has err.txt "--mmio-range needs START,END"
}

t every_access_once every_access_once
t attach_running attach_running
t attach_injected attach_injected
t unsupported_stops unsupported_stops
t unsupported_race unsupported_race
t reopened_file reopened_file
t own_handler own_handler
t bad_input bad_input
