#!/usr/bin/env bash
# trail record -P: attach to running processes, detach on Ctrl-C, leave
# them running untraced; several sessions at once do not interfere.
. "$(dirname "$0")/lib.sh"

start_loop() { # [env...] -> pid in $lp
	env "$@" "$EXAMPLE_LINKED" --loop >/dev/null &
	lp=$!
	wait_for "[ -e $TRAIL_REGISTRY/$lp ]" || die "process $lp never registered"
}

record_for() { # seconds, out, args...
	local secs=$1 out=$2 pid= n a; shift 2
	for a in "$@"; do [ "$pid" = next ] && pid=$a; [ "$a" = -P ] && pid=next; done
	# the arenas mapped before (an orphan's among them: the attach drops
	# it and maps its own, the count unchanged)
	[ -n "$pid" ] && grep trail-arena /proc/$pid/maps | sort >arenas.before
	$TRAIL record -q -o "$out" "$@" &
	local rp=$!
	# the time counts from the attach (a loaded machine may take a while
	# to check and inject: a stop signal before it ends the recording)
	if [ -n "$pid" ]; then
		wait_for "grep trail-arena /proc/$pid/maps | sort | comm -13 arenas.before - | grep -q . || ! kill -0 $rp 2>/dev/null" ||
			die "trail record -P $pid never attached"
	fi
	sleep "$secs"
	stop_rec $rp
}

arena_mapped() { grep -q 'trail-arena' "/proc/$1/maps"; }

attach_then_detach() {
	start_loop
	record_for 1 a.dat -e 'app:*' -P $lp
	kill -0 $lp || die "the process died"
	! arena_mapped $lp || die "the session's buffer is still mapped after detach"
	$TRAIL report -i a.dat >out.txt
	[ "$(grep -c 'app:request' out.txt)" -gt 10 ] || die "few events: $(wc -l <out.txt)"
	has out.txt "-$lp/"
	# accounting closed: written = read + lost for every stream
	hasnt out.txt "/?"
	# and attaching again works
	record_for 0.5 b.dat -e app:start -P $lp
	[ "$($TRAIL report -q -i b.dat | grep -c app:start)" -gt 3 ] || die "second attach recorded nothing"
	kill $lp; wait $lp 2>/dev/null || true
}

attach_follows_each_recorders_clock() {
	# the clock is the recorder's choice: a process that recorded for a
	# CLOCK_MONOTONIC session follows the next one's TSC, and back
	start_loop
	record_for 0.5 m.dat -C mono -e app:start -P $lp
	record_for 0.5 a.dat -e app:start -P $lp
	record_for 0.5 m2.dat -C mono -e app:start -P $lp
	kill $lp; wait $lp 2>/dev/null || true
	for f in m.dat a.dat m2.dat; do
		[ "$($TRAIL report -q -i $f | grep -c app:start)" -gt 3 ] || die "$f: few events"
	done
	$TRAIL report -i m2.dat | grep -q '# clock: CLOCK_MONOTONIC,' || die "m2.dat not mono"
}
t attach_follows_each_recorders_clock attach_follows_each_recorders_clock

attach_to_preloaded_process() {
	env LD_PRELOAD=$LIBTRAIL "$EXAMPLE" --loop >/dev/null &
	lp=$!
	wait_for "[ -e $TRAIL_REGISTRY/$lp ]" || die "never registered"
	record_for 0.5 p.dat -e app:stop -P $lp
	kill $lp; wait $lp 2>/dev/null || true
	[ "$($TRAIL report -q -i p.dat | grep -c app:stop)" -gt 3 ] || die "no events"
}

two_sessions_do_not_interfere() {
	start_loop
	# (one attach after the other: concurrent_attaches_events has
	# requests at the same moment)
	$TRAIL record -q -o r.dat -e app:request -P $lp & r1=$!
	wait_for "arena_mapped $lp" || die "session 1 never attached"
	$TRAIL record -q -o s.dat -e app:stop -P $lp & r2=$!
	wait_for "[ \$(grep -c trail-arena /proc/$lp/maps) -ge 2 ]" || die "session 2 never attached"
	sleep 0.5
	stop_rec $r1; stop_rec $r2
	kill -0 $lp || die "the process died"
	! arena_mapped $lp || die "a buffer is still mapped"
	kill $lp; wait $lp 2>/dev/null || true
	$TRAIL report -q -i r.dat >r.txt
	$TRAIL report -q -i s.dat >s.txt
	[ "$(grep -c app:request r.txt)" -gt 10 ] || die "session 1 empty"
	[ "$(grep -c app:stop s.txt)" -gt 3 ] || die "session 2 empty"
	hasnt r.txt "app:stop"
	hasnt s.txt "app:request"
}

P2=$BUILD/tests/cli/ftrace-prog-O2

# three recorders at once on one busy process (threads calling in a loop):
# each attaches, records and detaches, TRIES times over
concurrent_attaches() { # function|events
	local mode=$1 try k pid rps n
	for try in $(seq $TRIES); do
		if [ $mode = function ]; then
			env LD_PRELOAD=$LIBTRAIL "$P2" spin &
		else
			"$EXAMPLE_LINKED" --loop >/dev/null &
		fi
		pid=$!
		wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "process $pid never registered"
		rps=()
		for k in 1 2 3; do
			if [ $mode = function ]; then
				$TRAIL record -q -b 2M -p function -l hash -l lookup -o c$k.dat -P $pid 2>e$k.txt &
			else
				$TRAIL record -q -b 2M -e 'app:*' -o c$k.dat -P $pid 2>e$k.txt &
			fi
			rps+=($!)
		done
		# all three attached (a loaded machine takes its time), then
		# recording a while
		wait_for "[ \$(grep -c trail-arena /proc/$pid/maps) -ge 3 ]" ||
			die "try $try: not all attached: $(cat e1.txt e2.txt e3.txt)"
		sleep 0.5
		kill -INT "${rps[@]}"
		for k in 1 2 3; do
			wait "${rps[$((k - 1))]}" || die "try $try, recorder $k: $(cat e$k.txt)"
			[ ! -s e$k.txt ] || die "try $try, recorder $k: $(cat e$k.txt)"
			# (the file's accounting: --count would decode the ~10 M
			# events a recorder of hash and lookup takes in 0.5 s)
			n=$($TRAIL report -i c$k.dat --stat |
				sed -n 's|^# entries-in-buffer/entries-written: \([0-9]*\)/.*|\1|p')
			[ "$n" -gt 10 ] || die "try $try, recorder $k: $n events"
		done
		kill -0 $pid || die "the process died"
		! arena_mapped $pid || die "a buffer is still mapped"
		kill $pid; wait $pid 2>/dev/null || true
	done
}

concurrent_attaches_function() {
	# -p function: each attach patches function entries while the threads
	# run, the other attaches waiting for it; before the fix, 10 tries in
	# 10 of three such attaches failed ("a thread did not answer")
	concurrent_attaches function
}

concurrent_attaches_events() {
	concurrent_attaches events
}

session_limit_named() {
	# 8 sessions at once is the most a process can be in: the ninth
	# recorder is told so at once (it used to wait 3 s and blame signals)
	# (one at a time: see the TSan note below)
	start_loop
	rps=()
	for k in 1 2 3 4 5 6 7 8; do
		$TRAIL record -q -b 1M -e app:stop -o l$k.dat -P $lp 2>/dev/null & rps+=($!)
		wait_for "[ \$(grep -c trail-arena /proc/$lp/maps) -ge $k ]" || die "session $k never attached"
	done
	expect_rc 1 $TRAIL record -q -b 1M -e app:stop -o l9.dat -P $lp 2>err.txt
	has err.txt "process $lp is already in 8 trail sessions, the most it can be in"
	for r in "${rps[@]}"; do
		stop_rec $r || die "a recorder failed"
	done
	kill $lp; wait $lp 2>/dev/null || true
}

recorder_ends_when_process_exits() {
	start_loop
	$TRAIL record -q -o e.dat -e app:stop -P $lp & rp=$!
	wait_for "arena_mapped $lp" || die "never attached"
	sleep 0.5
	kill $lp; wait $lp 2>/dev/null || true
	for _ in $(seq 100); do kill -0 $rp 2>/dev/null || break; sleep 0.05; done
	! kill -0 $rp 2>/dev/null || { kill $rp; die "recorder kept running"; }
	wait $rp
	$TRAIL report -i e.dat >out.txt
	[ "$(grep -c app:stop out.txt)" -gt 2 ] || die "no events"
}

list_registered_processes() {
	start_loop
	$TRAIL ps >ps.txt
	kill $lp; wait $lp 2>/dev/null || true
	has ps.txt "$lp"
	has ps.txt "example-linked"
}

t attach_then_detach attach_then_detach
t attach_to_preloaded_process attach_to_preloaded_process
t two_sessions_do_not_interfere two_sessions_do_not_interfere
TRIES=4
# (under ASan a try takes ~6 s: two there, the plain stage runs four)
ldd "$LIBTRAIL" | grep -q libasan && TRIES=2
if ldd "$LIBTRAIL" | grep -q libtsan; then
	# TSan's own background thread blocks every signal: a running TSan
	# process cannot have its function entries patched (it never could)
	skip concurrent_attaches_function "TSan's background thread blocks SIGTRAP: no live patching under TSan"
	# (three control requests at once run here under TSan too: they found
	# a signal TSan lost with the thread it deferred it to, a request run
	# inside another, a thread left with every signal blocked, a race)
	t concurrent_attaches_events concurrent_attaches_events
else
	t concurrent_attaches_function concurrent_attaches_function
	t concurrent_attaches_events concurrent_attaches_events
fi
t session_limit_named session_limit_named
t recorder_ends_when_process_exits recorder_ends_when_process_exits
t list_registered_processes list_registered_processes

killed_recorder_is_cleaned_up() {
	start_loop
	$TRAIL record -q -o k.dat -e 'app:*' -P $lp & rp=$!
	wait_for "arena_mapped $lp"
	sleep 0.3
	kill -KILL $rp; wait $rp 2>/dev/null || true
	arena_mapped $lp || die "arena gone before any cleanup?"
	# the next attach first drops the orphaned session, then records
	record_for 0.5 n.dat -e app:stop -P $lp
	kill -0 $lp || die "the process died"
	! arena_mapped $lp || die "a buffer is still mapped: $(grep trail-arena /proc/$lp/maps)"
	kill $lp; wait $lp 2>/dev/null || true
	[ "$($TRAIL report -q -i n.dat | grep -c app:stop)" -gt 3 ] || die "second session empty"
}
t killed_recorder_is_cleaned_up killed_recorder_is_cleaned_up

record_all_processes() {
	start_loop; a=$lp
	start_loop; b=$lp
	$TRAIL record -q -a -e app:stop -o all.dat & rp=$!
	wait_for "arena_mapped $a && arena_mapped $b" || die "the running ones never joined"
	start_loop; c=$lp # started while recording: joins too
	wait_for "arena_mapped $c" || die "the new one never joined"
	sleep 0.5
	stop_rec $rp
	for p in $a $b $c; do
		kill -0 $p || die "process $p died"
		! arena_mapped $p || die "process $p still has the buffer"
		kill $p; wait $p 2>/dev/null || true
	done
	$TRAIL report -q -i all.dat >out.txt
	for p in $a $b $c; do
		[ "$(grep -c -- "-$p .*app:stop" out.txt)" -gt 2 ] || die "no events of $p: $(head out.txt)"
	done
}
t record_all_processes record_all_processes

# the code bytes of pid's executable (its r-xp mappings), hashed
code_hash() {
	python3 - "$1" <<'PY'
import hashlib, os, sys
pid = sys.argv[1]
exe = os.readlink(f"/proc/{pid}/exe")
h = hashlib.sha256()
with open(f"/proc/{pid}/maps") as m, open(f"/proc/{pid}/mem", "rb") as mem:
    for line in m:
        f = line.split()
        if len(f) >= 6 and f[1] == "r-xp" and f[5] == exe:
            lo, hi = (int(x, 16) for x in f[0].split("-"))
            mem.seek(lo)
            h.update(mem.read(hi - lo))
print(h.hexdigest())
PY
}

# A program started without libtrail: -P loads it through ptrace (a call
# of dlopen in the process), traces an unmodified executable's functions,
# and leaves the process running with its code as it was (libtrail stays
# loaded, idle).
attach_by_injection() {
	local U=$BUILD/tests/cli/ftrace-prog-noflag
	env -u LD_PRELOAD "$U" spin >/dev/null &
	local sp=$!
	sleep 0.3
	! grep -q libtrail /proc/$sp/maps || die "libtrail loaded from the start"
	before=$(code_hash $sp)
	$TRAIL record -o j.dat -p function_graph -l lookup -P $sp 2>err.txt &
	local rp=$!
	wait_for "grep -q 'attached to process' err.txt" || die "no attach: $(cat err.txt)"
	sleep 0.2 # (a spinning caller: a large file already)
	stop_rec $rp
	has err.txt "loading "
	has err.txt "into process $sp (ftrace-prog-nof)"
	has err.txt "attached to process $sp (ftrace-prog-nof): 1 function hooked"
	$TRAIL report -i j.dat >r.txt
	has r.txt "lookup();"
	grep -q libtrail /proc/$sp/maps || die "libtrail is gone"
	[ "$(code_hash $sp)" = "$before" ] || die "the code changed after detach"
	# still running, still calling: a second recording (no second load)
	$TRAIL record -q -o k.dat -p function -l hash -P $sp 2>err2.txt &
	rp=$!
	wait_for "grep -q trail-arena /proc/$sp/maps" || die "second attach: $(cat err2.txt)"
	sleep 0.2
	stop_rec $rp
	hasnt err2.txt "loading "
	$TRAIL report -i k.dat | grep -q 'hash <-lookup' || die "second attach: $($TRAIL report -i k.dat | tail -2)"
	kill $sp
}

# The instruction decoder (libtrail-decoder.so, Capstone) is mapped only
# where functions are hooked: not by a program recording events, loaded
# by the recorder into a running one before a function tracer attaches.
attach_loads_decoder() {
	local U=$BUILD/tests/cli/ftrace-prog-noflag
	# (the shell joins the session: its maps, while it records)
	$TRAIL record -q --allow-unknown -e 'app:*' -o e.dat -- sh -c 'cat /proc/$$/maps' >m.txt
	grep -q trail-arena m.txt || die "the shell did not join: $(cat m.txt)"
	hasnt m.txt libcapstone
	env LD_PRELOAD=$LIBTRAIL "$U" spin >/dev/null &
	local sp=$! rp
	wait_for "[ -e $TRAIL_REGISTRY/$sp ]" || die "never registered"
	! grep -q -e libcapstone -e libtrail-decoder /proc/$sp/maps ||
		die "the decoder is mapped without a session: $(grep -e capstone -e decoder /proc/$sp/maps)"
	$TRAIL record -o j.dat -p function -l lookup -P $sp 2>err.txt &
	rp=$!
	wait_for "grep -q 'attached to process' err.txt" || die "no attach: $(cat err.txt)"
	sleep 0.3
	stop_rec $rp
	has err.txt "libtrail-decoder.so into process $sp"
	has err.txt "1 function hooked"
	grep -q libcapstone /proc/$sp/maps || die "Capstone not mapped after the attach"
	$TRAIL report -q -i j.dat | grep -q 'lookup <-' || die "no calls: $($TRAIL report -q -i j.dat | tail -2)"
	kill $sp
}

# What cannot be loaded into: a process another tracer holds, a static
# program (no dlopen); nothing of it is changed.
injection_refused() {
	local U=$BUILD/tests/cli/ftrace-prog-noflag
	if command -v strace >/dev/null; then
		strace -o /dev/null "$U" spin >/dev/null &
		local st=$!
		wait_for "pgrep -P $st -f 'ftrace-prog-noflag spin' >/dev/null" || die "no traced child"
		local sp
		sp=$(pgrep -P $st -f 'ftrace-prog-noflag spin' | head -1)
		expect_rc 1 $TRAIL record -o x.dat -p function -l lookup -P "$sp" 2>err.txt
		has err.txt "cannot trace process $sp: it is already traced by process $st (a debugger?)"
		! grep -q libtrail /proc/"$sp"/maps || die "libtrail loaded under strace"
		kill $st
	else
		echo "(no strace: the already-traced case is not checked)"
	fi
	printf 'int work(int x) { return x * 3 + 1; }\nint main(void) { volatile int s = 0; for (;;) s += work(s); }\n' >st.c
	cc -O1 -static st.c -o st-static
	expect_rc 1 $TRAIL record -o x.dat -p function -- ./st-static 2>err.txt
	has err.txt "./st-static is a static program: libtrail cannot be loaded into it"
	./st-static & local sp=$!
	wait_for "[ \"\$(readlink /proc/$sp/exe)\" = \"$PWD/st-static\" ]" || die "st-static never ran"
	expect_rc 1 $TRAIL record -o x.dat -p function -l work -P $sp 2>err.txt
	has err.txt "process $sp has no dlopen in its C library (a static program?): libtrail cannot be loaded into it"
	kill -0 $sp || die "the static program died"
	kill $sp
}
if ldd "$LIBTRAIL" | grep -q libtsan; then
	skip attach_by_injection "TSan's background thread blocks SIGTRAP: no live patching under TSan (as concurrent_attaches_function)"
	skip attach_loads_decoder "TSan's background thread blocks SIGTRAP: no live patching under TSan (as concurrent_attaches_function)"
else
	t attach_by_injection attach_by_injection
	t attach_loads_decoder attach_loads_decoder
fi
t injection_refused injection_refused

# trail SIGKILLed while a process's code is patched: the program goes on
# (its hooks record for no one), and the next attach drops the orphaned
# session first, which puts its code back: byte for byte once that one
# ends too.
killed_while_patched_repaired() {
	local U=$BUILD/tests/cli/ftrace-prog-noflag
	env -u LD_PRELOAD "$U" spin >/dev/null &
	local sp=$! rp
	sleep 0.3
	before=$(code_hash $sp)
	$TRAIL record -q -o k.dat -p function_graph -l lookup -l hash -P $sp 2>err.txt &
	rp=$!
	wait_for "grep -q trail-arena /proc/$sp/maps" || die "never attached: $(cat err.txt)"
	sleep 0.3
	[ "$(code_hash $sp)" != "$before" ] || die "nothing patched"
	kill -KILL $rp; wait $rp 2>/dev/null || true
	sleep 0.3
	kill -0 $sp || die "the process died with its recorder"
	[ "$(code_hash $sp)" != "$before" ] || die "unpatched with no one to do it?"
	# the next attach repairs: the orphan's hooks go, its own come and go
	record_running $sp -o n.dat -p function -l hash
	kill -0 $sp || die "the process died"
	[ "$(code_hash $sp)" = "$before" ] || die "the code is not the program's after the repair"
	$TRAIL report -q -i n.dat | grep -q 'hash <-lookup' || die "second recording: $($TRAIL report -q -i n.dat | tail -2)"
	kill $sp
}
if ldd "$LIBTRAIL" | grep -q libtsan; then
	skip killed_while_patched_repaired "TSan's background thread blocks SIGTRAP: no live patching under TSan (as attach_by_injection)"
else
	t killed_while_patched_repaired killed_while_patched_repaired
fi

# A process that exits while trail attaches to it, or runs a new program
# (the exec of `env VAR=... CMD`: it goes on unharmed): said as such, never
# "cannot signal process N: No such process"; a second -P that is still
# there is recorded all the same.
target_exits_during_attach() {
	local i d rc
	for i in $(seq 24); do
		d=$((RANDOM % 150))
		env LD_PRELOAD=$LIBTRAIL sleep "0.$(printf '%03d' $d)" & local sp=$!
		rc=0
		timeout 20 $TRAIL record -q -o x.dat -e '*' --allow-unknown -P $sp 2>err.txt || rc=$?
		# caught in its exec, it ends as it would have: trail must not
		# run the old program's addresses in the new one
		local st=0
		wait $sp || st=$?
		[ $st = 0 ] || die "try $i: the process ended with status $st ($(cat err.txt))"
		hasnt err.txt "cannot signal"
		hasnt err.txt "No such process"
		if [ $rc != 0 ]; then
			grep -Eq "exited before it could be attached|no process with pid|exited while" err.txt ||
				die "try $i: $(cat err.txt)"
		fi
	done
	# two processes, one gone by the time its turn comes
	start_loop
	env LD_PRELOAD=$LIBTRAIL sleep 0.05 & local gone=$!
	sleep 0.3
	$TRAIL record -q -o two.dat -e app:start -P $lp -P $gone 2>err.txt & local rp=$!
	wait_for "arena_mapped $lp" || die "never attached: $(cat err.txt)"
	sleep 0.3
	stop_rec $rp || die "$(cat err.txt)"
	kill $lp; wait $lp 2>/dev/null || true
	grep -Eq "no process with pid $gone|process $gone exited" err.txt || die "$(cat err.txt)"
	[ "$($TRAIL report -q -i two.dat | grep -c app:start)" -gt 2 ] || die "the live one not recorded"
}
t target_exits_during_attach target_exits_during_attach

KEEPER=$BUILD/tests/cli/inject-keeper
BLOCKER=$BUILD/tests/cli/inject-blocker

# Loaded by injection, the process gets back every register exactly: the
# general ones, ymm0-15 and zmm0-31 (the dlopen it was made to call uses
# them), and a sleep it was in goes on (no EINTR: the control signal goes
# to its idle thread). The keeper checks them after every sleep.
injection_keeps_every_register() {
	"$KEEPER" 10 >k.out & local kp=$!
	wait_for "grep -q ready k.out" || die "keeper never ready"
	record_for 1 k.dat -e '*' --allow-unknown -P $kp
	grep -q libtrail /proc/$kp/maps || die "libtrail was not loaded"
	kill -TERM $kp
	wait $kp || die "the process saw its state change: $(cat k.out)"
	has k.out "cut short 0"
}

# trail SIGKILLed at a random moment of `record -P` on a process without
# libtrail (before, during or after the dlopen it is made to call, or the
# patching that follows): the process goes on, every register kept. Half
# the tries on the keeper (events: registers checked), half on a program
# whose functions are patched (-p function_graph).
injection_survives_sigkill() {
	local n=$1 i kp d loaded=0 rp w t0
	# how long a load takes on this build and machine (ASan's is slower):
	# the kills fall in 0..1.5 times that. The faster of two loads (the
	# first one's cold caches made it twice the next ones' once, and every
	# kill of 40 fell after the load)
	w=
	for i in 1 2; do
		"$KEEPER" 5 >k.out & kp=$!
		wait_for "grep -q ready k.out" || die "keeper never ready"
		t0=$(date +%s%N)
		$TRAIL record -q -o s.dat -e '*' --allow-unknown -P $kp 2>/dev/null & rp=$!
		wait_for "grep -q libtrail /proc/$kp/maps" || die "libtrail never loaded"
		d=$((($(date +%s%N) - t0) / 1000000))
		[ -n "$w" ] && [ "$w" -le "$d" ] || w=$d
		stop_rec $rp || true
		kill -TERM $kp; wait $kp || die "the first keepers: $(cat k.out)"
	done
	echo "a load took $w ms"
	for i in $(seq "$n"); do
		if [ $((i % 2)) = 1 ]; then
			"$KEEPER" 5 >k.out & kp=$!
			wait_for "grep -q ready k.out" || die "keeper never ready"
			$TRAIL record -q -o s.dat -e '*' --allow-unknown -P $kp 2>/dev/null & rp=$!
		else
			"$BUILD/tests/cli/ftrace-prog-noflag" spin >/dev/null & kp=$!
			wait_for "[ \"\$(readlink /proc/$kp/exe)\" = \"$BUILD/tests/cli/ftrace-prog-noflag\" ]" ||
				die "no target"
			$TRAIL record -q -o s.dat -p function_graph -P $kp 2>/dev/null & rp=$!
		fi
		d=$((RANDOM % (w * 3 / 2 + 1)))
		sleep "$(printf '%d.%03d' $((d / 1000)) $((d % 1000)))"
		kill -KILL $rp; wait $rp 2>/dev/null || true
		sleep 0.05
		grep -q libtrail /proc/$kp/maps && loaded=$((loaded + 1))
		kill -0 $kp || die "try $i: the process died (trail killed $d ms in)"
		kill -TERM $kp
		if [ $((i % 2)) = 1 ]; then
			wait $kp || die "try $i (trail killed $d ms in): $(cat k.out)"
		else
			wait $kp 2>/dev/null || true
		fi
	done
	echo "$n of $n alive; libtrail loaded before the kill in $loaded"
	# the kills fell before and after the load (else the window was missed)
	[ "$loaded" -gt 0 ] && [ "$loaded" -lt "$n" ] || die "every kill on one side of the load"
}

# TERM, HUP or INT to trail during the injection wait until it is done:
# the process goes on with every register, trail stops.
stop_signals_wait_for_the_injection() {
	local sig i kp rp d
	for sig in TERM HUP INT; do
		for i in 1 2 3 4 5; do
			"$KEEPER" 5 >k.out & kp=$!
			wait_for "grep -q ready k.out" || die "keeper never ready"
			$TRAIL record -q -o s.dat -e '*' --allow-unknown -P $kp 2>/dev/null & rp=$!
			d=$((RANDOM % 100))
			sleep "$(printf '0.%03d' $d)"
			# (again until it stops: a background job starts with SIGINT
			# ignored, until trail's handler is in)
			wait_for "kill -$sig $rp 2>/dev/null; ! kill -0 $rp 2>/dev/null" ||
				die "trail did not stop on SIG$sig"
			wait $rp 2>/dev/null || true
			kill -TERM $kp
			wait $kp || die "SIG$sig $d ms in: $(cat k.out)"
		done
	done
}

# A thread that blocks every signal (jemalloc's in redis-server): opened
# through ptrace (injected), or by libtrail's masks from the start
# (preloaded); also one the program creates after the attach.
attach_to_threads_that_block_signals() {
	"$BLOCKER" >b.out & local bp=$! rp
	wait_for "grep -q ready b.out" || die "blocker never ready"
	record_for 1 b.dat -p function -l blocked_work -l main_work -P $bp
	kill -TERM $bp
	wait $bp || die "a wrong result in the traced process"
	$TRAIL report -i b.dat >b.txt
	has b.txt "blocked_work <-helper"
	has b.txt "main_work <-main"
	# created with everything blocked 1.5 s in, while recorded
	"$BLOCKER" late >b2.out & bp=$!
	$TRAIL record -q -o b2.dat -p function -l blocked_work -P $bp & rp=$!
	wait_for "grep -q trail-arena /proc/$bp/maps" || die "never attached"
	wait_for "grep -q ready b2.out" || die "blocker never ready"
	sleep 1
	stop_rec $rp
	kill -TERM $bp; wait $bp || die "a wrong result in the traced process"
	$TRAIL report -i b2.dat | grep -q "blocked_work <-helper" || die "the late thread's calls not recorded"
	# preloaded: its masks leave SIGTRAP and the control signal out
	env LD_PRELOAD=$LIBTRAIL "$BLOCKER" >b3.out & bp=$!
	wait_for "grep -q ready b3.out" || die "blocker never ready"
	local t blk
	for t in /proc/$bp/task/*; do
		[ "${t##*/}" != "$bp" ] || continue
		blk=$(awk '/^SigBlk/ { print $2 }' "$t/status")
		[ $(( 0x$blk & (1 << 4) )) = 0 ] || die "the helper blocks SIGTRAP: $blk"
		[ $(( 0x$blk & (1 << 40) )) = 0 ] || die "the helper blocks the control signal: $blk"
		[ $(( 0x$blk & (1 << 14) )) != 0 ] || die "the helper's other blocked signals lost: $blk"
	done
	record_for 0.5 b3.dat -p function -l blocked_work -P $bp
	kill -TERM $bp; wait $bp || die "a wrong result in the traced process"
	$TRAIL report -i b3.dat | grep -q "blocked_work <-helper" || die "no calls recorded (preloaded)"
}

# redis-server as Debian ships it (jemalloc's background thread blocks
# every signal), under redis-benchmark: attached and detached 20 times
# (every function traced the first and last times, its command path the
# others), not one request failed.
redis_attached_under_load() {
	local port=$((20000 + RANDOM % 20000)) rs bp i
	redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no >redis.log 2>&1 &
	rs=$!
	wait_for "redis-cli -p $port ping 2>/dev/null | grep -q PONG" || die "redis never answered: $(tail -3 redis.log)"
	# (the one that answered is this one: not another on a port in use)
	kill -0 $rs 2>/dev/null || die "redis-server exited: $(tail -3 redis.log)"
	redis-benchmark -p $port -n 2000000 -c 8 -t set,get -q >bench.txt 2>&1 & bp=$!
	for i in $(seq 20); do
		local sel=(-l processCommand -l call -l 'lookupKey*' -l 'dictFind*' -l '*GenericCommand')
		if [ $i = 1 ] || [ $i = 20 ]; then sel=(); fi
		$TRAIL record -q -o r$i.dat -p function_graph "${sel[@]}" -P $rs 2>err.txt & rp=$!
		wait_for "grep -q trail-arena /proc/$rs/maps" || die "cycle $i: never attached: $(cat err.txt)"
		sleep 0.2
		stop_rec $rp || die "cycle $i: $(cat err.txt)"
		[ ! -s err.txt ] || die "cycle $i: $(cat err.txt)"
		kill -0 $rs || die "cycle $i: redis-server died"
	done
	# (TERM: a background job ignores SIGINT, and the benchmark ran its
	# 2 M requests to the end)
	kill -TERM $bp 2>/dev/null; wait $bp 2>/dev/null || true
	redis-cli -p $port ping | grep -q PONG || die "redis does not answer after 20 cycles"
	redis-cli -p $port info stats >stats.txt
	grep -q '^total_error_replies:0' stats.txt || die "failed requests: $(grep error stats.txt)"
	grep -q 'rejected_connections:0' stats.txt || die "rejected connections"
	for i in 10 20; do
		# (the file's accounting: r20 holds every function's calls)
		n=$($TRAIL report -i r$i.dat --stat |
			sed -n 's|^# entries-in-buffer/entries-written: \([0-9]*\)/.*|\1|p')
		[ "$n" -gt 100 ] || die "r$i.dat: $n events"
	done
	$TRAIL report -q -i r10.dat | grep -q 'processCommand()' || die "no processCommand in r10.dat"
	redis-cli -p $port shutdown nosave >/dev/null 2>&1 || kill $rs
	wait $rs 2>/dev/null || true
}

if ldd "$LIBTRAIL" | grep -q libtsan; then
	skip injection_keeps_every_register "the keeper's asm runs in an uninstrumented program; TSan's own thread in trail's ptrace tests: run in the plain and ASan builds"
	skip injection_survives_sigkill "run in the plain and ASan builds (TSan: no live patching)"
	skip attach_to_threads_that_block_signals "TSan's background thread blocks SIGTRAP: no live patching under TSan"
	skip redis_attached_under_load "no live patching under TSan"
elif ! grep -qw avx2 /proc/cpuinfo; then
	skip injection_keeps_every_register "this CPU has no AVX2 (the keeper's registers)"
	skip injection_survives_sigkill "this CPU has no AVX2 (the keeper's registers)"
	t attach_to_threads_that_block_signals attach_to_threads_that_block_signals
else
	t injection_keeps_every_register injection_keeps_every_register
	# 40 tries in the plain build, 20 under the sanitizers (slower); each
	# falls at a random point of the load (100 took 27 s of CI's budget)
	if ldd "$LIBTRAIL" | grep -q libasan; then KILLS=20; else KILLS=40; fi
	t injection_survives_sigkill injection_survives_sigkill $KILLS
	t stop_signals_wait_for_the_injection stop_signals_wait_for_the_injection
	t attach_to_threads_that_block_signals attach_to_threads_that_block_signals
fi
if ldd "$LIBTRAIL" | grep -q libasan; then
	# the injected libtrail brings libasan, which reads ASAN_OPTIONS from
	# /proc/self/environ: redis-server wrote its process title over it,
	# and ASan, not finding verify_asan_link_order=0, aborts the process
	skip redis_attached_under_load "an ASan libtrail cannot be injected into redis-server (it overwrites its environment with its title; ASan then aborts it): run in the plain build"
elif ! ldd "$LIBTRAIL" | grep -q libtsan; then
	if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
		t redis_attached_under_load redis_attached_under_load
	else
		skip redis_attached_under_load "redis-server and redis-benchmark are not installed (scripts/install-deps.sh --sanitizers installs them)"
	fi
fi

# root attaches to another user's process (an nginx worker runs as
# nobody): its requests go through a proxy of that user; the trace file
# is root's, the code comes back byte for byte, the proxy is gone after.
root_attaches_to_another_user() {
	local pub sp before
	pub=$(mktemp -d /tmp/trail-pub.XXXXXX)
	chmod 755 "$pub"
	cp "$BUILD/tests/cli/ftrace-prog-noflag" "$pub/prog"
	cp -L "$LIBTRAIL" "$pub/libtrail.so.1"
	cp -L "$BUILD/libtrail-decoder.so" "$pub/"
	chmod 755 "$pub"/*
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$pub/prog" spin >/dev/null &
	wait_for "pgrep -u nobody -f '$pub/prog spin' >/dev/null" || die "no process of nobody"
	sp=$(pgrep -u nobody -f "$pub/prog spin" | head -1)
	sleep 0.2
	before=$(code_hash $sp)
	TRAIL_LIBRARY=$pub/libtrail.so.1 record_running $sp -o o.dat -p function -l hash 2>err.txt
	[ ! -s err.txt ] || die "$(cat err.txt)"
	kill -0 $sp || die "the process died"
	[ "$(code_hash $sp)" = "$before" ] || die "the code is not the program's after the detach"
	[ "$(stat -c %u o.dat)" = 0 ] || die "the trace file is not root's"
	$TRAIL report -q -i o.dat | grep -q 'hash <-lookup' || die "nothing recorded"
	! pgrep -u nobody -f "trail record" >/dev/null || die "a proxy is left"
	kill $sp
	rm -rf "$pub"
}
if [ "$(id -u)" -ne 0 ]; then
	skip root_attaches_to_another_user "needs root (attaching to another user's process)"
elif ! command -v setpriv >/dev/null || ! id nobody >/dev/null 2>&1; then
	skip root_attaches_to_another_user "no setpriv or no user nobody to run the target as"
elif ldd "$LIBTRAIL" | grep -q libtsan; then
	skip root_attaches_to_another_user "no live patching under TSan"
else
	t root_attaches_to_another_user root_attaches_to_another_user
fi
