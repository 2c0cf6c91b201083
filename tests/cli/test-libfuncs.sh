#!/usr/bin/env bash
# Functions inside unmodified shared libraries (libtrail's fsites.c and
# ftracer.c, the tools' funcscan.c): libu and libv built as a distribution
# builds them (no patchable entries, stripped to .dynsym), called from a
# program, from each other and through dlopen; exact counts by
# construction (tests/cli/libfuncs/app.c says how many of each); selection
# by FUNC, FUNC@OBJECT and sub_<address> names, the same in every run;
# nothing of a library traced unless an -l names it; an attached process's
# code in every object put back byte for byte. Then Debian's own sqlite3,
# its calls inside libsqlite3 counted as the kernel's uprobes count them.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
S=$SRC/tests/cli/libfuncs
N=7

build_fixtures() {
	$CC -O2 -fPIC -shared -o libu-full.so "$S/u.c" "$S/spin.S"
	strip --strip-unneeded -o libu.so libu-full.so
	$CC -O2 -fPIC -shared -o libv.so "$S/v.c" -L. -lu -Wl,-rpath,'$ORIGIN'
	strip --strip-unneeded libv.so
	$CC -O2 -fPIC -shared -o libplug.so "$S/plug.c"
	strip --strip-unneeded libplug.so
	$CC -O2 -o app "$S/app.c" -L. -lu -lv -Wl,-rpath,'$ORIGIN' -ldl
	strip -o app-stripped app
	! readelf -SW libu.so | grep -q '\.symtab' || die "libu.so kept its .symtab"
	! readelf -SW libu.so | grep -q patchable || die "libu.so has patchable entries"
	# the static function survived as a function of its own
	nm libu-full.so | grep -q ' t u_hidden$' || die "u_hidden was inlined: $(nm libu-full.so)"
}

# how many times the graph shows NAME called (a leaf, or with calls under it)
calls() { # file name
	grep -cE " ${2}\(\)( \{|;)\$" "$1" || true
}
want() { # file name count
	[ "$(calls "$1" "$2")" = "$3" ] || die "$2 called $(calls "$1" "$2") times in $1, wanted $3"
}
# u_hidden's name once stripped: sub_<its address in libu.so>
hidden_name() {
	printf 'sub_%x' "0x$(nm libu-full.so | awk '$3 == "u_hidden" {print $1}')"
}

# Every call into the libraries, from the program, from libv, from libu
# itself (a tail call) and from a library opened later.
lib_counts() {
	./app $N "$PWD/libplug.so" >plain.txt
	# (p_* is in a library opened later: --allow-unknown)
	$TRAIL record --allow-unknown -p function_graph -l 'u_*' -l 'v_*' -l 'p_*' -o c.dat -- \
		./app $N "$PWD/libplug.so" >out.txt 2>err.txt
	diff -u plain.txt out.txt
	$TRAIL report -q -i c.dat >c.txt
	want c.txt u_add $((3 * N))
	want c.txt u_hid $N
	want c.txt u_switch $N
	want c.txt u_tail $N
	# a loop head at the entry, one 2 bytes in: leaves, run whole from a
	# copy, where the loop does not meet the hook (a call each); the same
	# loop in a function that calls: a breakpoint, a call each
	want c.txt u_spin $N
	want c.txt u_mid $N
	want c.txt u_trap $N
	want c.txt v_run 1
	want c.txt p_work 1
	want c.txt p_step $N
	# nested as called: v_run's calls of u_add under it
	grep -A1 ' v_run() {$' c.txt | grep -q ' u_add();$' || die "u_add not under v_run: $(cat c.txt)"
	# u_trap's breakpoint, said so, and marked in the summary (its trap
	# is no work of the program's); the functions moved whole are not
	grep -qE "^trail: [0-9]+ of the functions hooked were entered through a breakpoint" err.txt ||
		die "traps not said: $(cat err.txt)"
	$TRAIL report -q -i c.dat --summary >s.txt
	grep -qE ' u_trap \[breakpoint\]$' s.txt || die "u_trap not marked: $(cat s.txt)"
	[ "$(grep -c '\[breakpoint\]' s.txt)" = 1 ] || die "more than u_trap marked: $(cat s.txt)"
}

# No -l: the program's functions and its calls into libraries (through
# its PLT), nothing inside an unmodified library.
default_selection() {
	$TRAIL record -q -p function_graph -o d.dat -- ./app $N >/dev/null
	$TRAIL report -q -i d.dat >d.txt
	want d.txt u_add $N # the program's own calls, not v_run's or u_tail's
	want d.txt v_run 1
	hasnt d.txt "sub_"
	grep -q ' round_of() {$' d.txt || die "round_of: $(head d.txt)"
}

# --nest-libcall: the libraries' calls through their PLTs too (libv's
# calls of u_add, libu's own through its PLT from u_tail), selected by
# object like any function; refused without a tracer, or with
# --no-libcall.
nest_libcall() {
	$TRAIL record -q -p function_graph --nest-libcall -o nl.dat -- ./app $N >/dev/null
	$TRAIL report -q -i nl.dat >nl.txt
	want nl.txt u_add $((3 * N))
	grep -A1 ' v_run() {$' nl.txt | grep -q ' u_add();$' || die "u_add not under v_run: $(cat nl.txt)"
	$TRAIL record -q -p function --nest-libcall -l 'u_add@libv*' -o nv.dat -- ./app $N >/dev/null
	[ "$($TRAIL report -q -i nv.dat | grep -c ': u_add <-v_run$')" = $N ] ||
		die "libv's calls: $($TRAIL report -q -i nv.dat | head)"
	[ "$($TRAIL report -q -i nv.dat | grep -c ': u_add <-')" = $N ] ||
		die "more than libv's calls: $($TRAIL report -q -i nv.dat | head)"
	expect_rc 2 $TRAIL record --nest-libcall -e 'x:*' -o e.dat -- ./app 1 2>err.txt
	has err.txt "--nest-libcall widens a tracer"
	expect_rc 2 $TRAIL record -p function --nest-libcall --no-libcall -o e.dat -- ./app 1 2>err.txt
	has err.txt "contradict"
}

# One object, all of it: FUNC@OBJECT, the static function by its stable
# name; -n takes some out.
object_glob() {
	local h
	h=$(hidden_name)
	$TRAIL record -q -p function -l '*@libu.so' -n 'u_switch@libu*' -o o.dat -- ./app $N >/dev/null
	$TRAIL report -q -i o.dat >o.txt
	[ "$(grep -c ": $h <-u_hid$" o.txt)" = $N ] || die "$h: $(grep -c "$h" o.txt), wanted $N: $(head o.txt)"
	[ "$(grep -c ': u_add <-' o.txt)" = $((3 * N)) ] || die "u_add: $(grep -c ': u_add <-' o.txt)"
	hasnt o.txt "u_switch"
	hasnt o.txt "v_run"
	# the object's part alone up to a dot: libu matches libu.so
	$TRAIL record -q -p function -l "$h@libu" -o o2.dat -- ./app $N >/dev/null
	[ "$($TRAIL report -q -i o2.dat | grep -c ": $h <-")" = $N ] || die "$h@libu"
}

# A stripped library whose symbols are installed apart (a -dbgsym
# package: ROOT/.build-id/xx/rest.debug): its static function by its own
# name, in list -f, in the selection and in the report.
debug_file_names() {
	local id
	id=$(readelf -n libu.so | awk '/Build ID/ {print $3}')
	mkdir -p "dbg/.build-id/${id:0:2}"
	objcopy --only-keep-debug libu-full.so "dbg/.build-id/${id:0:2}/${id:2}.debug"
	export TRAIL_DEBUG_ROOT=$PWD/dbg
	$TRAIL list -f ./app 'u_hidden' >l.txt
	has l.txt "u_hidden [libu.so]"
	$TRAIL record -q -p function -l 'u_hidden@libu*' -o g.dat -- ./app $N >/dev/null
	[ "$($TRAIL report -q -i g.dat | grep -c ': u_hidden <-u_hid$')" = $N ] ||
		die "u_hidden: $($TRAIL report -q -i g.dat | head -3)"
	# without it, the same function by its address
	unset TRAIL_DEBUG_ROOT
	$TRAIL list -f ./app 'u_hidden' >/dev/null 2>&1 && die "u_hidden named without its debug file"
	$TRAIL list -f ./app "$(hidden_name)" | grep -q libu.so
}

# At report time too: FUNC@OBJECT keeps (-l) or leaves out (-n) one
# object's calls.
report_by_object() {
	$TRAIL record -q -p function_graph -l 'u_*' -l round_of -o r.dat -- ./app $N >/dev/null
	$TRAIL report -q -i r.dat -l '*@libu*' >l.txt
	want l.txt u_hid $N
	hasnt l.txt round_of
	$TRAIL report -q -i r.dat -n '*@libu.so' >n.txt
	has n.txt "round_of();"
	hasnt n.txt "u_"
}

# An unnamed function's name is its address in its file: two runs of a
# stripped PIE (loaded elsewhere each time) name it alike, and -l/-n
# select by it.
stable_names() {
	local f
	$TRAIL list -f ./app-stripped 'sub_*' >l.txt
	f=$(head -1 l.txt)
	[ -n "$f" ] || die "no unnamed function in app-stripped"
	for r in 1 2; do
		$TRAIL record -q -p function -o s$r.dat -- ./app-stripped $N >/dev/null
		$TRAIL report -q -i s$r.dat | grep -oE 'sub_[0-9a-f]+' | sort -u >s$r.txt
	done
	[ -s s1.txt ] || die "no sub_ name in the report"
	diff -u s1.txt s2.txt
	grep -qx "$f" s1.txt || die "$f (list -f) not in the report: $(cat s1.txt)"
	$TRAIL record -q -p function -n "$f" -o s3.dat -- ./app-stripped $N >/dev/null
	! $TRAIL report -q -i s3.dat | grep -q ": $f <-" || die "-n $f did not take it out"
	# an address where a name is wanted: an error that says the name
	expect_rc 1 $TRAIL record -q -p function -n '0x1139' -o e.dat -- ./app-stripped 1 2>e.txt
	has e.txt "sub_1139"
}

list_functions() {
	$TRAIL list -f ./app 'u_*' >l.txt
	has l.txt "u_add [libu.so]"
	has l.txt "u_trap [libu.so] [breakpoint]"
	grep -qx 'u_spin \[libu.so\]' l.txt || die "u_spin: $(cat l.txt)"
	grep -qx 'u_mid \[libu.so\]' l.txt || die "u_mid: $(cat l.txt)"
	has l.txt "u_add [library call]"
	$TRAIL list -f ./app '*@libv*' >v.txt
	has v.txt "v_run [libv.so]"
	hasnt v.txt "u_add"
	$TRAIL list -f ./app "$(hidden_name)" >h.txt
	has h.txt "$(hidden_name) [libu.so]"
	# what runs trail itself is never listed
	$TRAIL list -f ./app '*' >all.txt
	hasnt all.txt "[ld-linux"
	has all.txt "[libc.so.6]"
	# unwind sections typed SHT_X86_64_UNWIND (as LLVM's linker types
	# them, libLLVM's 94,734 functions): the same functions
	cp libu.so libx.so
	python3 - libx.so <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
shoff = struct.unpack_from('<Q', b, 0x28)[0]
entsz, num, stridx = struct.unpack_from('<HHH', b, 0x3a)
stroff = struct.unpack_from('<Q', b, shoff + stridx * entsz + 0x18)[0]
for i in range(num):
    o = shoff + i * entsz
    n = struct.unpack_from('<I', b, o)[0]
    if b[stroff + n:b.index(0, stroff + n)] in (b'.eh_frame_hdr', b'.eh_frame'):
        struct.pack_into('<I', b, o + 4, 0x70000001)
open(sys.argv[1], 'wb').write(b)
PY
	readelf -SW libx.so | grep -q 'eh_frame_hdr *X86_64_UNWIND' || die "libx.so: $(readelf -SW libx.so)"
	$TRAIL list -f ./libu.so '*' >u.txt
	$TRAIL list -f ./libx.so '*' >x.txt
	[ -s u.txt ] && diff -u u.txt x.txt
	# without a glob, what is traced by default; the libraries said
	$TRAIL list -f ./app >def.txt 2>err.txt
	hasnt def.txt "[libu.so]"
	has err.txt "unmodified libraries, traced where an -l names them"
}

# the code of every object mapped from a file, a line per file: its
# executable mappings' bytes (a mapping mprotect split is one), through
# /proc/PID/mem
code_hashes() {
	python3 - "$1" <<'PY'
import hashlib, sys
pid = sys.argv[1]
code = {}
with open(f"/proc/{pid}/maps") as m, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in m:
        f = line.split()
        if len(f) >= 6 and f[1] == "r-xp" and f[5].startswith("/"):
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            mem.seek(lo)
            code[f[5]] = code.get(f[5], b"") + mem.read(hi - lo)
for path in sorted(code):
    print(path, hashlib.sha256(code[path]).hexdigest())
PY
}

# A running process: library functions hooked while attached (libtrail
# and the decoder injected), every object's code as it was after.
attach_running() {
	env -u LD_PRELOAD ./app 3 spin >ready.txt &
	local sp=$! rp
	wait_for "grep -q ready ready.txt" || die "never ready"
	code_hashes $sp >before.txt
	$TRAIL record -o a.dat -p function -l 'u_*@libu*' -l v_run -P $sp 2>err.txt &
	rp=$!
	wait_for "grep -q 'attached to process' err.txt" || die "no attach: $(cat err.txt)"
	code_hashes $sp >during.txt
	grep "/libu.so " before.txt >b.txt
	! grep -qxFf b.txt during.txt || die "libu.so was not patched"
	sleep 0.3
	stop_rec $rp
	kill -0 $sp || die "the process died"
	# every object there before as it was (libtrail, the decoder and
	# Capstone came with the attach)
	code_hashes $sp >after.txt
	grep -vxFf after.txt before.txt >changed.txt || true
	[ ! -s changed.txt ] || die "changed after detach: $(cat changed.txt)"
	kill $sp
	$TRAIL report -q -i a.dat >a.txt
	grep -q ': u_add <-v_run$' a.txt || die "no u_add from v_run: $(head -5 a.txt)"
	grep -q ': u_spin <-' a.txt || die "no u_spin: $(head -5 a.txt)"
	# the thread found inside u_body's loop went on in the copy (else the
	# loop's jump back 2 bytes in would land inside the entry's jump)
	grep -q ': u_body <-' a.txt || die "no u_body from the spinning thread: $(head -5 a.txt)"
}

# The decoded entries of an object kept by build-id in the registry: the
# second run takes them from there; a damaged cache file is not believed.
decoded_entries_cached() {
	local id f
	fresh_registry
	export TRAIL_REGISTRY=$PWD/reg
	id=$(readelf -n libu.so | awk '/Build ID/ {print $3}')
	[ -n "$id" ] || die "libu.so has no build-id"
	f=reg/.sites-$id
	$TRAIL record -q -p function_graph -l 'u_*' -o k1.dat -- ./app $N >/dev/null
	[ -s "$f" ] || die "no cache file: $(ls -a reg)"
	for r in 2 damaged short; do
		case $r in
		damaged) head -c "$(stat -c %s "$f")" /dev/urandom >"$f" ;;
		short) head -c 40 /dev/urandom >"$f" ;;
		esac
		$TRAIL record -q -p function_graph -l 'u_*' -o k.dat -- ./app $N >out.txt
		has out.txt "sum="
		$TRAIL report -q -i k.dat >k.txt
		want k.txt u_add $((3 * N))
		want k.txt u_mid $N
		want k.txt u_spin $N
		want k.txt u_trap $N
	done
	# (rewritten whole by the run after the damage)
	[ "$(head -c 8 "$f")" = TRLSITE2 ] || die "the cache was not rewritten"
}

# A probe at an instruction inside a function that would run whole from
# a copy (where the probe's bytes would not be): its entry takes a
# breakpoint instead, in this run only; both record every call.
whole_with_probe_inside() {
	local a off
	fresh_registry
	export TRAIL_REGISTRY=$PWD/reg
	a=$((0x$(nm libu-full.so | awk '$3 == "u_mid" {print $1}')))
	off=$(printf 0x%x $((a + 2))) # (libu's text: file offsets = addresses)
	$TRAIL record -p function -l u_mid --probe "p:s/x ./libu.so:$off" -o w.dat -- \
		./app $N >out.txt 2>err.txt
	has out.txt "sum="
	$TRAIL report -q -i w.dat --count >w.txt
	grep -qE '^ *ftrace:function +'"$N"'$' w.txt || die "u_mid's calls: $(cat w.txt)"
	# (u_mid(3): its loop head, 2 bytes in, met 3 times a call)
	grep -qE '^ *s:x +'"$((3 * N))"'$' w.txt || die "the probe's hits: $(cat w.txt)"
	has err.txt "1 of the functions hooked were entered through a breakpoint"
	# the next run without the probe: whole again (the cache kept it)
	$TRAIL record -p function -l u_mid -o w2.dat -- ./app $N >out.txt 2>err.txt
	hasnt err.txt "through a breakpoint"
	$TRAIL report -q -i w2.dat --count | grep -qE '^ *ftrace:function +'"$N"'$' ||
		die "u_mid, whole: $($TRAIL report -q -i w2.dat --count)"
}

# the kernel's uprobe counts of the three functions over one run of q.sql
# (into up.txt)
uprobe_counts() { # library
	local tr=/sys/kernel/tracing f off
	echo >$tr/uprobe_events
	for f in sqlite3_step sqlite3_prepare_v2 sqlite3_finalize; do
		off=$(readelf -sW --dyn-syms "$1" | awk -v f=$f '$8 == f && $4 == "FUNC" {print $2; exit}')
		echo "p:trailtest/$f $1:0x$off" >>$tr/uprobe_events
	done
	echo 1 >$tr/events/trailtest/enable
	rm -f db
	sqlite3 db <q.sql >/dev/null
	echo 0 >$tr/events/trailtest/enable
	cp $tr/uprobe_profile up.txt
	echo >$tr/uprobe_events
}

# Debian's sqlite3: its work is in libsqlite3.so.0. Three functions
# counted by trail (the same in two runs) and, in a run of their own, by
# the kernel's uprobes. sqlite3_run: trail's graph of them over q.sql.
sqlite3_run() { # output
	L=$(readlink -f "$(ldd /usr/bin/sqlite3 | awk '/libsqlite3/ {print $3}')")
	cat >q.sql <<'SQL'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<500) INSERT INTO t SELECT x, 'v'||x FROM c;
SELECT count(*), sum(a) FROM t WHERE b LIKE 'v1%';
CREATE INDEX i ON t(b);
SELECT a FROM t WHERE b = 'v77';
SQL
	rm -f db
	$TRAIL record -q -p function_graph -l 'sqlite3_step@libsqlite3*' -l sqlite3_prepare_v2 \
		-l sqlite3_finalize -o q.dat -- sqlite3 db <q.sql >out.txt
	has out.txt "77"
	$TRAIL report -q -i q.dat >"$1"
}

sqlite3_counts() {
	sqlite3_run q1.txt
	sqlite3_run q2.txt
	for f in sqlite3_step sqlite3_prepare_v2 sqlite3_finalize; do
		[ "$(calls q1.txt $f)" -gt 0 ] || die "no $f: $(head q1.txt)"
		[ "$(calls q1.txt $f)" = "$(calls q2.txt $f)" ] || die "$f: $(calls q1.txt $f), then $(calls q2.txt $f)"
	done
}

# ... and the kernel's uprobes on the same functions (a run of their own:
# a uprobe's int3 at an entry is code trail does not move)
sqlite3_uprobes() {
	sqlite3_run q.txt
	uprobe_counts "$L"
	for f in sqlite3_step sqlite3_prepare_v2 sqlite3_finalize; do
		[ "$(awk -v f=$f '$2 == f {print $3}' up.txt)" = "$(calls q.txt $f)" ] ||
			die "$f: uprobes $(cat up.txt), trail $(calls q.txt $f)"
	done
}

t build_fixtures build_fixtures
t lib_counts lib_counts
t default_selection default_selection
t nest_libcall nest_libcall
t object_glob object_glob
t report_by_object report_by_object
t debug_file_names debug_file_names
t stable_names stable_names
t list_functions list_functions
t attach_running attach_running
t decoded_entries_cached decoded_entries_cached
t whole_with_probe_inside whole_with_probe_inside
if ! command -v sqlite3 >/dev/null || ! ldd /usr/bin/sqlite3 | grep -q libsqlite3; then
	skip sqlite3_counts "Debian's sqlite3 is not installed (scripts/install-deps.sh --sanitizers installs it)"
	skip sqlite3_uprobes "Debian's sqlite3 is not installed"
elif ! [ -w /sys/kernel/tracing/uprobe_events ]; then
	t sqlite3_counts sqlite3_counts
	skip sqlite3_uprobes "no writable /sys/kernel/tracing/uprobe_events (not root, or no tracefs): trail's counts are not compared with the kernel's"
else
	t sqlite3_counts sqlite3_counts
	t sqlite3_uprobes sqlite3_uprobes
fi
