#!/usr/bin/env bash
# Bootconfig files (src/session/bconf.c, bootcfg.c): the kernel's
# boot-time tracing keys read into a session, `trail bootconfig -c` to
# check a file (and a program against it), `trail record --bootconfig`
# to record what it says, TRAIL_BOOTCONFIG=FILE to record a program from
# its start with no trail record run by hand (src/lib/bootsess.c);
# syntax errors with the kernel's messages at their line and column, keys
# that mean nothing for a process as warnings naming them, bad files
# refused with a clear message and the program run untraced.
. "$(dirname "$0")/lib.sh"

EX=$BUILD/examples/example
P=$BUILD/tests/cli/probed-O0
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

check_file() {
	fresh_registry
	cat >a.bconf <<-'EOF'
	# a process's boot-time tracing
	ftrace {
	    buffer_size = 64MB
	    tracer = function_graph
	    ftrace.filters = "parse_*", "handle_*"
	    fgraph_max_depth = 8
	    event.app.request { enable; filter = "bytes > 4096"; actions = "hist:keys=path:vals=bytes" }
	    event.app.error.actions = "stacktrace", "traceoff"
	    cpumask = 3
	}
	kernel { traceoff_on_warning = 1; trace_options = sym-addr }
	trail.output = "/var/tmp/app.dat"
	EOF
	$TRAIL bootconfig -c a.bconf >out.txt 2>err.txt
	has out.txt "a.bconf: ok"
	# what it asks for, as the command line that asks for the same
	has out.txt "  trail record -p function_graph -l 'parse_*' -l 'handle_*' --max-graph-depth 8 "
	has out.txt " -e app:request -f 'bytes > 4096' -T app:request:hist:keys=path:vals=bytes -T app:error:stacktrace -T app:error:traceoff -b 65536K -o /var/tmp/app.dat ..."
	# what means nothing here is named, where it is, and left out
	has err.txt "warning: a.bconf:9:5: ftrace.cpumask:"
	has err.txt "warning: a.bconf:11:10: kernel.traceoff_on_warning:"
	has err.txt "kernel.trace_options: option 'sym-addr' means nothing for a process here"
	[ "$(grep -c warning err.txt)" = 3 ] || die "$(cat err.txt)"
	# against a program that declares none of its events: record's error
	expect_rc 1 $TRAIL bootconfig -c a.bconf "$P" 2>err.txt
	has err.txt "no event matches 'app:request'"
}

# Each file: the exit status, the kernel's message at its line:column.
syntax_errors() {
	local f want
	fresh_registry
	printf 'ftrace {\n  tracer = function\n' >1.bconf
	printf 'ftrace.tracer = function\nftrace.tracer = function_graph\n' >2.bconf
	printf 'ftrace.events = "app:*\n' >3.bconf
	printf 'ftrace.event.app.x { enable }\n}\n' >4.bconf
	printf 'ftrace tracer = function\n' >5.bconf
	printf '# nothing\n' >6.bconf
	printf 'ftrace.tracer + function\n' >7.bconf
	for f in "1:1:1 Brace is not closed" "2:2:17 Value is redefined" "3:1:17 No closing quotes" \
		"4:2:1 Unexpected '}'" "5:1:1 Invalid keyword" "6:1:1 Empty config" \
		"7:1:15 Wrong '+' operator"; do
		want=${f#* }
		f=${f%% *}
		expect_rc 2 $TRAIL bootconfig -c "${f%%:*}.bconf" 2>err.txt
		has err.txt "trail: ${f%%:*}.bconf:${f#*:}: Parse error: $want"
		grep -q '^  \( *\)^$' err.txt || die "no caret: $(cat err.txt)"
	done
	# too big (the kernel's 32 KiB), unreadable, a list for one value
	head -c 1048576 /dev/zero | tr '\0' 'a' >big.bconf
	expect_rc 2 $TRAIL bootconfig -c big.bconf 2>err.txt
	has err.txt "big.bconf: Config data is too big"
	expect_rc 1 $TRAIL bootconfig -c missing.bconf 2>err.txt
	has err.txt "cannot read missing.bconf: No such file or directory"
	printf 'ftrace.tracer = function, function_graph\n' >l.bconf
	expect_rc 2 $TRAIL bootconfig -c l.bconf 2>err.txt
	has err.txt "l.bconf:1:8: ftrace.tracer takes one value, not a list"
	# a value the program's events refuse: record's caret under it, the
	# place of its key first
	printf 'ftrace.event.app.request { enable; filter = "bytes >> 3" }\n' >f.bconf
	expect_rc 1 $TRAIL bootconfig -c f.bconf "$EX" 2>err.txt
	has err.txt "trail: f.bconf:1:36: filter for app:request: Illegal integer value"
	has err.txt "  bytes >> 3"
	printf 'ftrace.tracer = irqsoff\n' >t.bconf
	expect_rc 2 $TRAIL bootconfig -c t.bconf 2>err.txt
	has err.txt "t.bconf:1:8: unknown tracer 'irqsoff'"
}

# The issue's events: a filter on the recorded event, hist triggers on a
# recorded and an unrecorded one, the output file the config names.
record_events() {
	fresh_registry
	cat >e.bconf <<-'EOF'
	ftrace {
	    buffer_size = 8MB
	    events = "app:start"
	    event.app.request {
	        enable
	        filter = "bytes > 1024"
	        actions = "hist:keys=path:vals=bytes"
	    }
	    event.app.reply.actions = "hist:keys=status"
	}
	trail.output = "e.dat"
	EOF
	$TRAIL record -q --bootconfig e.bconf -- "$EX" 2 100 >/dev/null
	$TRAIL report -q -i e.dat >r.txt
	# the example's requests: 512, 1024, 2048, 4096 bytes in turn
	[ "$(grep -c ': app:request:' r.txt)" = 100 ] || die "requests: $(grep -c ': app:request:' r.txt)"
	grep ': app:request:' r.txt | grep -qE 'bytes=0x(200|400)$' && die "the filter let small ones by"
	[ "$(grep -c ': app:start:' r.txt)" = 1 ] || die "app:start"
	grep -q ': app:reply:' r.txt && die "app:reply recorded"
	$TRAIL hist -i e.dat -e app:reply >h.txt
	has h.txt "    Hits: 200"
	# (a trigger sees every hit: the filter decides what is recorded)
	$TRAIL hist -i e.dat -e app:request >h.txt
	has h.txt "    Hits: 200"
}

# Probes defined in the file (kprobes.EVENT.probes, a %return one), a
# filter on one, and tracing off until a traceon action.
record_probes() {
	fresh_registry
	cat >p.bconf <<-'EOF'
	ftrace {
	    tracing_on = 0
	    event.kprobes {
	        cfg {
	            probes = "load_config path=+0($arg1):string flags=$arg2:s32"
	            enable
	        }
	        pi { probes = "parse_int v=$arg1:s32"; enable; actions = "traceon" }
	        po { probes = "parse_int%return ret=$retval:s32"; enable; filter = "ret == 6" }
	    }
	}
	trail.output = "p.dat"
	EOF
	expect_rc 7 $TRAIL record -q --bootconfig p.bconf -- "$P" 5 >/dev/null
	$TRAIL report -q -i p.dat >r.txt
	# per iteration: load_config 3 times, then parse_int(21), then
	# parse_int(3) (returning 6): the first iteration's load_configs
	# ran while tracing was off
	[ "$(grep -c ': kprobes:cfg:' r.txt)" = 12 ] || die "cfg: $(grep -c ': kprobes:cfg:' r.txt)"
	[ "$(grep -c ': kprobes:po:' r.txt)" = 5 ] || die "po: $(grep -c ': kprobes:po:' r.txt)"
	grep ': kprobes:po:' r.txt | grep -qv 'ret=6' && die "the filter let others by"
	true
}

# The function tracer's keys, and the command line's options beside them.
record_functions() {
	fresh_registry
	cat >g.bconf <<-'EOF'
	ftrace.tracer = function_graph
	ftrace.ftrace.filters = "parse_int", "nest"
	trail.output = "g.dat"
	EOF
	expect_rc 7 $TRAIL record -q --bootconfig g.bconf -- "$P" 3 >/dev/null
	$TRAIL report -q -i g.dat >g.txt
	[ "$(grep -c 'nest() {' g.txt)" = 3 ] || die "nest: $(head -20 g.txt)"
	grep -q 'load_config' g.txt && die "not filtered: $(head -20 g.txt)"
	# -o after the file wins, as any later option
	expect_rc 7 $TRAIL record -q --bootconfig g.bconf -o o.dat -- "$P" 1 >/dev/null
	[ -s o.dat ] || die "-o o.dat not written"
}

# the file a boot session writes, once its recorder (detached: not the
# program's child) is done: 10 s at most
boot_file() { # glob
	local f
	for _ in $(seq 200); do
		f=$(ls $1 2>/dev/null | head -1)
		if [ -n "$f" ] && ! pgrep -f -- "--bootconfig" >/dev/null; then
			echo "$f"
			return 0
		fi
		sleep 0.05
	done
	return 1
}

# TRAIL_BOOTCONFIG: recorded from libtrail's constructor, main's first
# call included, the file named with the pid; the program's output and
# status its own.
boot_session() {
	local f
	fresh_registry
	cat >fg.bconf <<-EOF
	ftrace.tracer = function_graph
	ftrace.ftrace.filters = "main", "parse_int", "nest"
	trail.output = "$PWD/fg-%p.dat"
	EOF
	"$P" 3 >plain.txt || true
	expect_rc 7 env TRAIL_BOOTCONFIG=fg.bconf LD_PRELOAD=$LIBTRAIL "$P" 3 >out.txt
	diff -u plain.txt out.txt
	f=$(boot_file 'fg-*.dat') || die "no file: $(ls)"
	$TRAIL report -q -i "$f" >g.txt
	# main from its first instruction: its call opens the graph
	grep -m1 '|' g.txt | grep -q 'main() {' || die "main not first: $(head -3 g.txt)"
	[ "$(grep -c 'nest() {' g.txt)" = 3 ] || die "nest: $(cat g.txt)"
	tail -1 g.txt | grep -q '} /\* main \*/' || die "main not closed: $(tail -3 g.txt)"
}

# Through a launcher (sh, exec'ing or forking the program): one recording,
# the program's events in it, no second recorder's complaint.
boot_through_launchers() {
	local f how
	for how in "exec $EX 1 5" "$EX 1 5; true"; do
		fresh_registry
		rm -f l-*.dat
		cat >l.bconf <<-EOF
		ftrace.events = "app:*"
		trail.output = "$PWD/l-%p.dat"
		EOF
		env TRAIL_BOOTCONFIG=l.bconf LD_PRELOAD=$LIBTRAIL sh -c "$how" >/dev/null 2>err.txt
		f=$(boot_file 'l-*.dat') || die "$how: no file: $(cat err.txt)"
		[ "$(ls l-*.dat | wc -l)" = 1 ] || die "$how: $(ls l-*.dat)"
		[ "$($TRAIL report -q -i "$f" | grep -c ': app:request:')" = 5 ] ||
			die "$how: $($TRAIL report -q -i "$f" | head -5)"
		hasnt err.txt "trail"
	done
}

# A file the recorder refuses: said on the program's stderr, the program
# run untraced; killed, the program's recording is written all the same.
boot_bad_and_killed() {
	local f sp
	fresh_registry
	printf 'ftrace {\n  tracer = function\n' >bad.bconf
	expect_rc 7 env TRAIL_BOOTCONFIG=bad.bconf LD_PRELOAD=$LIBTRAIL "$P" 2 >out.txt 2>err.txt
	has err.txt "bad.bconf:1:1: Parse error: Brace is not closed"
	"$P" 2 >plain.txt || true
	diff -u plain.txt out.txt
	# (the kernel's dump_on_oops: whatever ends the process)
	cat >k.bconf <<-EOF
	ftrace.event.kprobes.pi { probes = "parse_int v=\$arg1:s32"; enable }
	kernel.dump_on_oops = 1
	trail.output = "$PWD/k-%p.dat"
	EOF
	env TRAIL_BOOTCONFIG=k.bconf LD_PRELOAD=$LIBTRAIL "$P" --spin 30 >spin.txt 2>err.txt & sp=$!
	wait_for "grep -q spinning spin.txt" || die "never spun: $(cat err.txt)"
	sleep 0.3
	kill -KILL $sp
	wait $sp 2>/dev/null || true
	f=$(boot_file "k-$sp.dat") || die "not written: $(ls)"
	[ "$($TRAIL report -q -i "$f" | grep -c ': kprobes:pi:')" -gt 0 ] || die "no events"
	hasnt err.txt "warning"
}

# trail snapshot PID: a boot session's flight recorder asked from outside
# writes what it holds into OUTPUT.1, the recording going on; a session
# that is not a flight recorder, or none, is said.
snapshot_on_request() {
	local sp f
	fresh_registry
	cat >s.bconf <<-EOF
	ftrace {
	    options = overwrite
	    buffer_size = 4MB
	    event.kprobes.pi { probes = "parse_int v=\$arg1:s32"; enable }
	}
	trail.output = "$PWD/s-%p.dat"
	EOF
	env TRAIL_BOOTCONFIG=s.bconf LD_PRELOAD=$LIBTRAIL "$P" --spin 30 >spin.txt 2>err.txt & sp=$!
	wait_for "grep -q spinning spin.txt" || die "never spun: $(cat err.txt)"
	sleep 0.3
	$TRAIL snapshot $sp >out.txt || die "snapshot: $(cat out.txt)"
	has out.txt "flight recorder) writes a snapshot"
	wait_for "[ -s s-$sp.dat.1 ]" || die "no snapshot file: $(ls; cat err.txt)"
	[ "$($TRAIL report -q -i s-$sp.dat.1 | grep -c ': kprobes:pi:')" -gt 0 ] || die "empty snapshot"
	kill $sp
	wait $sp 2>/dev/null || true
	f=$(boot_file "s-$sp.dat") || die "not written"
	# not a flight recorder; no session at all
	cat >n.bconf <<-EOF
	ftrace.event.kprobes.pi { probes = "parse_int v=\$arg1:s32"; enable }
	trail.output = "$PWD/n-%p.dat"
	EOF
	env TRAIL_BOOTCONFIG=n.bconf LD_PRELOAD=$LIBTRAIL "$P" --spin 30 >spin2.txt 2>err.txt & sp=$!
	wait_for "grep -q spinning spin2.txt" || die "never spun: $(cat err.txt)"
	expect_rc 1 $TRAIL snapshot $sp 2>err.txt
	has err.txt "which is not a flight recorder (--overwrite)"
	kill $sp
	wait $sp 2>/dev/null || true
	boot_file "n-$sp.dat" >/dev/null || die "not written"
	sleep 30 & sp=$!
	expect_rc 1 $TRAIL snapshot $sp 2>err.txt
	has err.txt "process $sp records for no trail session"
	kill $sp
	expect_rc 2 $TRAIL snapshot 2>err.txt
	has err.txt "give one PID"
}

# Instances (ftrace.instance.NAME): a session each, with its own events
# and filters, the top's probe definitions where it names them, into
# OUTPUT.NAME; checked and said by -c; recorded from the first
# instruction in a boot-time session.
instances() {
	local f
	fresh_registry
	rm -f i-*.dat
	cat >i.bconf <<-EOF
	ftrace {
	    event.app.start { enable }
	    event.kprobes.ws.probes = "worker_serve id=%di"
	    instance.slow {
	        event.app.request { enable; filter = "fd > 100" }
	        event.kprobes.ws.enable
	    }
	    instance.stops.event.app.stop.enable
	}
	trail.output = "$PWD/i-%p.dat"
	EOF
	$TRAIL bootconfig -c i.bconf "$EX" >out.txt
	has out.txt "instance slow (ftrace.instance.slow): ok; a recorder of its own (--instance slow):"
	has out.txt " -e kprobes:ws -e app:request -f 'fd > 100' -o $PWD/i-%p.slow.dat ..."
	has out.txt "instance stops (ftrace.instance.stops): ok"
	has out.txt "  trail record -e app:stop -o $PWD/i-%p.stops.dat ..."
	expect_rc 2 $TRAIL record --bootconfig i.bconf --instance nosuch -- "$EX" 2>err.txt
	has err.txt "i.bconf: no instance 'nosuch' (ftrace.instance.nosuch.*)"
	expect_rc 2 $TRAIL record --instance slow -e app:start -- "$EX" 2>err.txt
	has err.txt "--instance slow names an instance of a --bootconfig file"
	env TRAIL_BOOTCONFIG=i.bconf LD_PRELOAD=$LIBTRAIL "$EX" 2 3 >/dev/null
	f=$(boot_file 'i-[0-9]*[0-9].dat') || die "no file: $(ls i-*)"
	wait_for "[ -e ${f%.dat}.slow.dat ] && [ -e ${f%.dat}.stops.dat ]" || die "instances: $(ls i-*)"
	$TRAIL report -q -i "$f" >top.txt
	$TRAIL report -q -i "${f%.dat}.slow.dat" >slow.txt
	$TRAIL report -q -i "${f%.dat}.stops.dat" >stops.txt
	has top.txt "app:start: workers=2 requests=3"
	hasnt top.txt "app:request"
	[ "$(grep -c 'app:request: fd=1[0-9][0-9] ' slow.txt)" = 3 ] || die "slow: $(cat slow.txt)"
	hasnt slow.txt "fd=10 "
	[ "$(grep -c 'kprobes:ws: (worker_serve+0x0' slow.txt)" = 2 ] || die "slow probes: $(cat slow.txt)"
	hasnt slow.txt "app:start"
	has stops.txt "app:stop: handled=6"
	[ "$(grep -c ': app:' stops.txt)" = 1 ] || die "stops: $(cat stops.txt)"
}

# trail record -P on a process a boot-time session records: once its own
# session has joined, the boot session's recorder is stopped and its file
# written whole; the two overlap, so nothing is lost between them.
take_over() {
	local pid last first
	fresh_registry
	rm -f tk-*.dat*
	# (bench_event at 20,000 events/s: its a= counts them, so a gap shows)
	printf 'ftrace.events = "bench:event"\ntrail.output = "%s/tk-%%p.dat"\n' "$PWD" >tk.bconf
	BENCH_N=100000000 BENCH_RATE=20000 TRAIL_BOOTCONFIG=tk.bconf LD_PRELOAD=$LIBTRAIL \
		"$BUILD/bench/bench_event" >/dev/null &
	pid=$!
	wait_for "[ -e tk-$pid.dat.part ]" || die "no boot session: $(ls)"
	# (its events recorded: a 64 KiB chunk of them drained into the file)
	wait_for "[ \$(stat -c %s tk-$pid.dat.part) -gt 65536 ]" || die "no events in the boot file"
	$TRAIL record -P $pid -e 'bench:event' -o new.dat 2>err.txt &
	local r=$!
	wait_for "grep -q 'took over' err.txt" || die "no take-over: $(cat err.txt)"
	has err.txt "trail: took over the boot-time session (trail record "
	has err.txt "what it recorded is in $PWD/tk-$pid.dat"
	[ -e "tk-$pid.dat" ] && [ ! -e "tk-$pid.dat.part" ] || die "boot file not written: $(ls tk-*)"
	sleep 0.3
	stop_rec $r
	kill $pid
	last=$($TRAIL report -q -i "tk-$pid.dat" | awk '/bench:event/ { a = $5 } END { sub("a=", "", a); print a }')
	first=$($TRAIL report -q -i new.dat | awk '/bench:event/ { a = $5; sub("a=", "", a); print a; exit }')
	[ -n "$last" ] && [ -n "$first" ] || die "no events: boot '$last', new '$first'"
	[ "$first" -le $((last + 1)) ] ||
		die "a gap between the boot file (last a=$last) and the new one (first a=$first)"
}

# kernel.tp_printk (record --tp-printk): every event on stderr as text
# too, while it is recorded (a boot-time session's recorder writes to the
# program's stderr), and all of them in the file.
tp_printk() {
	local f
	fresh_registry
	$TRAIL record --tp-printk -e app:request -o p.dat -- "$EX" 1 5 >/dev/null 2>err.txt
	[ "$(grep -c ': app:request: fd=' err.txt)" = 5 ] || die "printed: $(cat err.txt)"
	has err.txt 'app:request: fd=10 path="/index.html"'
	[ "$($TRAIL report -q -i p.dat | grep -c ': app:request:')" = 5 ] || die "recorded"
	rm -f pk-*.dat
	printf 'ftrace.events = "app:start", "app:stop"\nkernel.tp_printk\ntrail.output = "%s/pk-%%p.dat"\n' \
		"$PWD" >pk.bconf
	$TRAIL bootconfig -c pk.bconf >out.txt
	has out.txt " --tp-printk "
	# live: printed while the program runs, not at its end
	TRAIL_BOOTCONFIG=pk.bconf LD_PRELOAD=$LIBTRAIL "$EX" --loop 1 2 >/dev/null 2>live.txt &
	local pid=$!
	wait_for "grep -q 'app:stop: handled=2' live.txt" || die "nothing printed live: $(cat live.txt)"
	running $pid || die "the program ended"
	kill $pid
	has live.txt 'app:start: workers=1 requests=2'
	hasnt live.txt "warning"
}

# Without TRAIL_BOOTCONFIG, the user's default file ($XDG_CONFIG_HOME/
# trail/bootconfig, else ~/.config/trail/bootconfig) is read; an empty
# TRAIL_BOOTCONFIG turns the defaults off.
default_files() {
	local f
	fresh_registry
	rm -rf home xdg && mkdir -p home/.config/trail xdg/trail
	printf 'ftrace.events = "app:start"\ntrail.output = "%s/home/h-%%p.dat"\n' "$PWD" \
		>home/.config/trail/bootconfig
	printf 'ftrace.events = "app:stop"\ntrail.output = "%s/xdg/x-%%p.dat"\n' "$PWD" >xdg/trail/bootconfig
	env -u TRAIL_BOOTCONFIG -u XDG_CONFIG_HOME HOME=$PWD/home LD_PRELOAD=$LIBTRAIL "$EX" 1 2 >/dev/null
	f=$(boot_file 'home/h-*.dat') || die "the user's default file was not read: $(ls home)"
	$TRAIL report -q -i "$f" | grep -q 'app:start: workers=1' || die "$($TRAIL report -q -i "$f")"
	env -u TRAIL_BOOTCONFIG XDG_CONFIG_HOME=$PWD/xdg HOME=$PWD/home LD_PRELOAD=$LIBTRAIL "$EX" 1 2 >/dev/null
	f=$(boot_file 'xdg/x-*.dat') || die "XDG_CONFIG_HOME's file was not read: $(ls xdg)"
	$TRAIL report -q -i "$f" | grep -q 'app:stop: handled=2' || die "$($TRAIL report -q -i "$f")"
	rm -f home/h-*.dat
	env -u XDG_CONFIG_HOME TRAIL_BOOTCONFIG= HOME=$PWD/home LD_PRELOAD=$LIBTRAIL "$EX" 1 2 >/dev/null
	sleep 0.3
	[ -z "$(ls home/h-*.dat 2>/dev/null)" ] || die "TRAIL_BOOTCONFIG= did not turn the defaults off"
}

t check_file check_file
t syntax_errors syntax_errors
t record_events record_events
t record_probes record_probes
t record_functions record_functions
t boot_session boot_session
t boot_through_launchers boot_through_launchers
t boot_bad_and_killed boot_bad_and_killed
t snapshot_on_request snapshot_on_request
t instances instances
t take_over take_over
t tp_printk tp_printk
t default_files default_files
