#!/usr/bin/env bash
# trail report -i CORE: the records a process that dumped core had in its
# session's trace buffer (tests/cli/core/coreprog.c: 1000 app:tick from
# its main thread, 500 app:tock from a second one that has ended, then
# "ready"). The arena is a shared memfd mapping, in the kernel's cores by
# the default coredump_filter; gdb's gcore writes it too, and
# systemd-coredump's compressed cores (zstd) are read as well. Every test
# buffer is 4 MiB (-b), so a core is ~16 MB.
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/coreprog

# the app:* records of a report, without their times: "TID EVENT i=N"
recs() {
	$TRAIL report -i "$1" 2>/dev/null | sed -n 's/^ *[^ ]*-\([0-9]*\) .* \(app:t[io]ck\): \(i=[0-9]*\)$/\1 \2 \3/p'
}

# the kernel writes cores into the working directory ("core" or
# "core.PID"), unless core_pattern pipes them elsewhere
kernel_cores() {
	case "$(cat /proc/sys/kernel/core_pattern)" in
	core | core.* | core-*) ulimit -c unlimited 2>/dev/null && return 0 ;;
	esac
	return 1
}
core_file() { ls core core.* 2>/dev/null | grep -v '\.zst$' | head -1; }

# aborted under a live recorder: the core's records are the file's
crash_under_recorder() {
	fresh_registry
	rm -f core core.*
	expect_rc 134 $TRAIL record -q -b 4M -e 'app:*' -o t.dat -- "$PROG" 1000 abort >out.txt 2>err.txt
	local c
	c=$(core_file)
	[ -n "$c" ] || die "no core in $(pwd): $(ls)"
	recs "$c" >c.txt
	recs t.dat >t.txt
	[ "$(grep -c ' app:tick ' c.txt)" = 1000 ] || die "$(grep -c ' app:tick ' c.txt) ticks in the core"
	# the ended thread's records: in the core unless the recorder had
	# drained them already (then in the file, which has them all)
	[ "$(wc -l <t.txt)" = 1500 ] || die "$(wc -l <t.txt) in the file"
	grep -F -x -v -f t.txt c.txt >extra.txt || true
	[ ! -s extra.txt ] || die "in the core, not in the file: $(head -3 extra.txt)"
	# the same clock: the first tick within 5 us of the file's
	local a b
	a=$($TRAIL report -i "$c" -t 2>/dev/null | awk '/app:tick: i=0$/ { sub(":", "", $3); print $3; exit }')
	b=$($TRAIL report -i t.dat -t | awk '/app:tick: i=0$/ { sub(":", "", $3); print $3; exit }')
	awk -v a="$a" -v b="$b" 'BEGIN { d = a - b; if (d < 0) d = -d
		exit !(a ~ /^[0-9]+\.[0-9]+$/ && b ~ /^[0-9]+\.[0-9]+$/ && d < 0.000005) }' ||
		die "first tick at $a in the core, $b in the file"
	# the program that dumped it, named from the core's notes
	$TRAIL report -i "$c" | head -3 | grep -q "of: $PROG" || die "$($TRAIL report -i "$c" | head -3)"
	# a SIGSEGV's core as well (not under ASan: its handler takes the
	# fault, reports it and exits 1, no core)
	[ $asan = 0 ] || return 0
	rm -f core core.*
	expect_rc 139 $TRAIL record -q -b 4M -e 'app:*' -o s.dat -- "$PROG" 200 segv >/dev/null 2>&1
	c=$(core_file)
	[ "$(recs "$c" | grep -c ' app:tick ')" = 200 ] || die "segv core: $(recs "$c" | wc -l)"
}

# the flight recorder (--overwrite, 4 MiB for 1.5 M records): the core
# holds the main thread's newest records exactly as the file does, with
# the same losses; the ended thread's records are a part of the file's,
# and a warning says that the keeper's share died with the recorder
flight_recorder() {
	fresh_registry
	rm -f core core.*
	expect_rc 134 $TRAIL record -q --overwrite -b 4M -e 'app:*' -o o.dat -- "$PROG" 1000000 abort \
		>/dev/null 2>&1
	local c
	c=$(core_file)
	[ -n "$c" ] || die "no core"
	$TRAIL report -i "$c" >r.txt 2>e.txt
	recs "$c" | grep ' app:tick ' >c.txt
	recs o.dat | grep ' app:tick ' >f.txt
	[ "$(wc -l <c.txt)" -gt 1000 ] && [ "$(wc -l <c.txt)" -lt 1000000 ] || die "$(wc -l <c.txt) ticks: nothing overwritten?"
	cmp -s c.txt f.txt || die "the main thread's newest records differ from the file's"
	# its losses: the main thread's line (TID = PID) of the stream table,
	# the same in both but for its stream's number
	main_line() { awk '$1 == "#" && $2 ~ /^coreprog-/ { split($2, a, "-"); split(a[2], b, "/")
		if (b[1] == b[2]) { $3 = ""; print; exit } }' "$1"; }
	$TRAIL report -i o.dat >f2.txt
	[ -n "$(main_line r.txt)" ] && [ "$(main_line r.txt)" = "$(main_line f2.txt)" ] ||
		die "accounting: $(main_line r.txt) / $(main_line f2.txt)"
	# the ended thread was the keeper's (its records may be fewer, its
	# losses uncounted): said
	has e.txt "a flight recorder's core: the threads that ended before the dump"
	recs "$c" | grep ' app:tock ' | awk '{ print $3 }' >tc.txt
	recs o.dat | grep ' app:tock ' | awk '{ print $3 }' >tf.txt
	[ -z "$(comm -23 <(sort tc.txt) <(sort tf.txt))" ] || die "ended thread: records the file has not"
}

# the recorder SIGKILLed, then the process aborts: what the recorder had
# not drained (its unfinished file has the rest) is in the core: the two
# together hold every record, once
recorder_killed_first() {
	fresh_registry
	rm -f core core.* go
	$TRAIL record -q -b 4M -e 'app:*' -o k.dat -- "$PROG" 1000 wait go >out.txt 2>&1 &
	local rp=$!
	wait_for "grep -q ready out.txt" || die "never ready: $(cat out.txt)"
	kill -9 $rp
	wait $rp 2>/dev/null || true
	touch go
	wait_for '[ -n "$(core_file)" ] && ! pgrep -f "coreprog 1000 wait" >/dev/null' || die "no core"
	sleep 0.2
	{ recs "$(core_file)"; recs k.dat.part; } | awk '{ print $2, $3 }' | sort -u >all.txt
	[ "$(wc -l <all.txt)" = 1500 ] || die "$(wc -l <all.txt) of 1500 in the core and the unfinished file"
	[ "$(recs "$(core_file)" | grep -c ' app:tick ')" -ge 1 ] || die "nothing in the core"
}

# gdb's gcore of a running process (segments not page-aligned), and the
# same core compressed as systemd-coredump stores it
gcore_and_zstd() {
	command -v gcore >/dev/null || die "gcore missing (gdb: scripts/install-deps.sh installs it)"
	fresh_registry
	rm -f go
	$TRAIL record -q -b 4M -e 'app:*' -o h.dat -- "$PROG" 300 hold go >out.txt 2>&1 &
	local rp=$! pid
	wait_for "grep -q ready out.txt" || die "never ready"
	pid=$(pgrep -f "coreprog 300 hold" | head -1)
	timeout 60 gcore -o g "$pid" >/dev/null 2>&1 || die "gcore failed"
	touch go
	wait $rp || die "the recording: $(cat out.txt)"
	[ "$(recs "g.$pid" | grep -c ' app:tick ')" = 300 ] || die "gcore: $(recs "g.$pid" | wc -l)"
	zstd -q "g.$pid" -o g.zst
	recs "g.$pid" >a.txt
	recs g.zst >b.txt
	cmp -s a.txt b.txt || die "the zstd core reads otherwise"
	[ -s a.txt ] || die "empty"
	# export reads it too (every view's -i)
	$TRAIL export -i g.zst --format chrome -o g.json
	grep -q '"app:tick"' g.json || die "export of a core"
}

# where the arena starts in FILE: the PT_LOAD segment that begins with
# its magic ("TRRARENA"; the value is elsewhere in memory too)
arena_at() {
	python3 - "$1" <<'PY'
import struct, sys
d = open(sys.argv[1], 'rb').read()
phoff, = struct.unpack_from('<Q', d, 32)
phnum, = struct.unpack_from('<H', d, 56)
for i in range(phnum):
    typ, flags, off, va, pa, filesz = struct.unpack_from('<IIQQQQ', d, phoff + 56 * i)
    if typ == 1 and filesz >= 8 and d[off:off + 8] == b'TRRARENA':
        print(off)
        break
else:
    print(-1)
PY
}

# a core of coreprog with N ticks into FILE: the kernel's (abort) where
# it writes them here, else gdb's
coreprog_core() { # n file
	rm -f core core.* go
	if [ $kcores = 1 ]; then
		$TRAIL record -q -b 4M -e 'app:*' -o h.dat -- "$PROG" "$1" abort >/dev/null 2>&1 || true
		mv "$(core_file)" "$2"
		return
	fi
	$TRAIL record -q -b 4M -e 'app:*' -o h.dat -- "$PROG" "$1" hold go >out.txt 2>&1 &
	local rp=$! pid
	wait_for "grep -q ready out.txt" || die "never ready"
	pid=$(pgrep -f "coreprog $1 hold" | head -1)
	timeout 60 gcore -o gc "$pid" >/dev/null 2>&1 || die "gcore failed"
	touch go
	wait $rp || true
	mv "gc.$pid" "$2"
}

# a core of a process without trail into FILE
plain_core() { # file
	rm -f core core.*
	if [ $kcores = 1 ]; then
		sh -c 'kill -ABRT $$' 2>/dev/null || true
		mv "$(core_file)" "$1"
		return
	fi
	sleep 30 &
	local sp=$!
	timeout 60 gcore -o s $sp >/dev/null 2>&1 || die "gcore of sleep"
	kill $sp
	mv "s.$sp" "$1"
}

bad_cores() {
	fresh_registry
	local at
	coreprog_core 300 b.core
	at=$(arena_at b.core)
	[ "$at" -gt 0 ] || die "no arena in the core"
	[ "$(recs b.core | grep -c ' app:tick ')" = 300 ] || die "the whole core: $(recs b.core | wc -l)"
	# cut inside the buffer (ulimit -c, a full disk)
	head -c $((at + 200000)) b.core >trunc.core
	expect_rc 1 $TRAIL report -i trunc.core 2>err.txt
	has err.txt "trace buffer is there, but arena larger than its mapping (a truncated core"
	# cut inside the program headers
	head -c 200 b.core >tiny.core
	expect_rc 1 $TRAIL report -i tiny.core 2>err.txt
	has err.txt "a core whose program headers are damaged or cut off"
	# a core of a process without trail
	plain_core s.core
	expect_rc 1 $TRAIL report -i s.core 2>err.txt
	has err.txt "without a trail buffer"
	# another architecture (e_machine 183: AArch64)
	cp b.core arm.core
	printf '\xb7\x00' | dd of=arm.core bs=1 seek=18 conv=notrunc status=none
	expect_rc 1 $TRAIL report -i arm.core 2>err.txt
	has err.txt "a core of another architecture (ELF machine 183"
	# the arena's geometry scribbled on (nchunks): refused, never trusted
	cp b.core geom.core
	printf '\x07\x00\x00\x00' | dd of=geom.core bs=1 seek=$((at + 44)) conv=notrunc status=none
	expect_rc 1 $TRAIL report -i geom.core 2>err.txt
	has err.txt "inconsistent arena geometry"
	# its chunks scribbled on: what is still whole is read, the rest is
	# damage; never a crash
	python3 - b.core "$at" <<'PY'
import random, struct, sys
path, at = sys.argv[1], int(sys.argv[2])
d = bytearray(open(path, 'rb').read())
chunks = at + struct.unpack_from('<Q', d, at + 128)[0]
rnd = random.Random(7)
for k in range(4096):
    d[chunks + rnd.randrange(65536)] = rnd.randrange(256)
open('chunks.core', 'wb').write(d)
PY
	local rc=0
	$TRAIL report -i chunks.core >r.txt 2>err.txt || rc=$?
	[ $rc -lt 128 ] || die "report died: $rc"
	[ "$(grep -c ' app:tick: ' r.txt)" -le 300 ] || die "more records than written"
	# a zstd-compressed core that does not decompress
	zstd -q b.core -o b.zst
	head -c $(($(stat -c %s b.zst) / 2)) b.zst >cut.zst
	expect_rc 1 $TRAIL report -i cut.zst 2>err.txt
	has err.txt "a zstd-compressed core that does not decompress"
}

# an ASan build: its runtime turns core dumps off unless told, and its
# shadow memory (tens of terabytes reserved) makes gdb's gcore write it
# all: the kernel's cores only (which leave MADV_DONTDUMP shadow out)
asan=0
if ldd "$LIBTRAIL" 2>/dev/null | grep -q libasan; then
	asan=1
	export ASAN_OPTIONS="${ASAN_OPTIONS:-}:disable_coredump=0"
fi

kcores=0
kernel_cores && kcores=1
if [ $kcores = 1 ]; then
	t crash_under_recorder crash_under_recorder
	t flight_recorder flight_recorder
	t recorder_killed_first recorder_killed_first
else
	skip crash_under_recorder "core_pattern pipes cores away ($(cat /proc/sys/kernel/core_pattern)): gcore_and_zstd reads gdb's"
	skip flight_recorder "core_pattern pipes cores away"
	skip recorder_killed_first "core_pattern pipes cores away"
fi
if [ $asan = 0 ]; then
	t gcore_and_zstd gcore_and_zstd
else
	skip gcore_and_zstd "ASan: gcore would write the sanitizer's shadow memory (tens of GB); run in the plain build"
fi
if [ $asan = 0 ] || [ $kcores = 1 ]; then
	t bad_cores bad_cores
else
	skip bad_cores "ASan and no kernel cores here: its cores would be gcore's (tens of GB of shadow memory)"
fi
