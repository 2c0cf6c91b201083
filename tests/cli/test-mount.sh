#!/usr/bin/env bash
# trail mount (tools/trail/mount-*.c): the recordings of the user's
# processes as the kernel's tracefs, driven with echo, cat, mkdir and
# rmdir as the seeds' examples are: events enabled, filtered and
# triggered live in a running program, trace and trace_pipe read back,
# instances and per_pid directories, dynamic_events (the eprobe example
# of seed 001), function_events (seed 003), bad writes failing with
# EINVAL and their caret errors in error_log, the mount's owner killed.
. "$(dirname "$0")/lib.sh"

EX=$BUILD/examples/example
LIB=$BUILD/libtrail.so.1
export TRAIL_REGISTRY=$TMP/reg # (each test runs in $TMP)

why_no_fuse() {
	[ -c /dev/fuse ] || { echo "no /dev/fuse (FUSE: a container needs it passed in)"; return; }
	[ -r /dev/fuse ] && [ -w /dev/fuse ] || { echo "/dev/fuse is not open to this user"; return; }
	command -v fusermount3 >/dev/null || { echo "no fusermount3 (the fuse3 package)"; return; }
}
NOFUSE=$(why_no_fuse)

# a fresh registry, the example serving in a loop with libtrail
# preloaded (its pid in $APP), and a mount on ./m, unmounted when the
# test ends whatever happens
start() {
	fresh_registry
	rm -rf m && mkdir m
	trap 'fusermount3 -u -z "$TMP/m" 2>/dev/null || true; fusermount3 -u -z "$TMP/m2" 2>/dev/null || true' EXIT
	LD_PRELOAD=$LIB $EX --loop 2 3 >app.out 2>&1 &
	APP=$!
	wait_for "[ -e reg/$APP ]" || die "the example never registered"
	$TRAIL mount m || die "mount failed"
}

# a write to the mount: its exit status (the tests say which they want)
w() { # text file
	printf '%s\n' "$1" >"$2"
}

mount_files() {
	start
	for f in available_events available_tracers buffer_size_kb current_tracer dynamic_events \
		error_log function_events set_event set_ftrace_filter set_ftrace_notrace \
		set_graph_function synthetic_events trace trace_marker trace_pipe tracing_on \
		events instances per_pid; do
		[ -e "m/$f" ] || die "no m/$f: $(ls m)"
	done
	has m/available_events "app:request"
	has m/available_events "app:start"
	# the event's files, its format at trail's payload offsets
	ls m/events/app/request >ls.txt
	for f in enable filter format hist id trigger; do has ls.txt "$f"; done
	has m/events/app/request/format "name: request"
	has m/events/app/request/format "field:__data_loc char[] path;"
	grep -qE '^[0-9]+$' m/events/app/request/id || die "id: $(cat m/events/app/request/id)"
	[ "$(cat m/events/app/request/enable)" = 0 ] || die "enabled at start"
	[ "$(cat m/events/app/request/filter)" = none ] || die "a filter at start"
	[ "$(cat m/current_tracer)" = nop ] || die "tracer: $(cat m/current_tracer)"
	has m/available_tracers "function_graph function nop"
	[ "$(cat m/tracing_on)" = 1 ] || die "tracing_on: $(cat m/tracing_on)"
	# read-only files refuse writes, as the kernel's
	expect_rc 1 w x m/available_events 2>/dev/null
	# the directory: missing, a file, not empty, mounted already
	expect_rc 1 $TRAIL mount nosuch 2>err.txt
	has err.txt "trail: mount: nosuch: No such file or directory"
	mkdir full && touch full/x
	expect_rc 1 $TRAIL mount full 2>err.txt
	has err.txt "full: not empty"
	expect_rc 1 $TRAIL mount m 2>err.txt
	has err.txt "a trail mount is there already (trail umount m)"
	expect_rc 2 $TRAIL mount 2>err.txt
	has err.txt "give the directory to mount on"
	$TRAIL umount m
	[ -z "$(ls m)" ] || die "still mounted: $(ls m)"
	kill "$APP"
}

# enable, read back, filter (a bad one: EINVAL, the caret in error_log),
# disable: all live in the running example
enable_filter() {
	start
	w 1 m/events/app/request/enable
	wait_for "grep -q 'app:request: fd=' m/trace" || die "no event: $(cat m/trace)"
	[ "$(cat m/set_event)" = app:request ] || die "set_event: $(cat m/set_event)"
	[ "$(cat m/events/app/enable)" = X ] || die "group enable: $(cat m/events/app/enable)"
	hasnt m/trace "app:reply"
	# a filter: later records pass it
	w 'fd >= 100' m/events/app/request/filter
	[ "$(cat m/events/app/request/filter)" = "fd >= 100" ] || die "filter reads back wrong"
	w '' m/trace # (cleared)
	wait_for "grep -q 'app:request: fd=1[0-9][0-9] ' m/trace" || die "no filtered event"
	grep 'app:request' m/trace >recs.txt
	hasnt recs.txt "fd=10 "
	hasnt recs.txt "fd=11 "
	# refused with the kernel's error, under the bad token
	expect_rc 1 w 'fd >> 3' m/events/app/request/filter 2>/dev/null
	has m/error_log "event_filter: error: Illegal integer value"
	has m/error_log "  Command: fd >> 3"
	[ "$(grep -A1 'Command: fd >> 3' m/error_log | tail -1)" = "               ^" ] ||
		die "caret: $(cat m/error_log)"
	[ "$(cat m/events/app/request/filter)" = "fd >= 100" ] || die "a bad filter replaced it"
	# error_log emptied by a truncating write
	: >m/error_log
	[ -z "$(cat m/error_log)" ] || die "error_log not cleared"
	# every event of the group, then none
	w 1 m/events/app/enable
	wait_for "grep -q 'app:reply' m/trace" || die "group enable recorded no reply"
	w 0 m/events/enable
	[ -z "$(cat m/set_event)" ] || die "set_event after disable: $(cat m/set_event)"
	w 'app:stop' m/set_event
	w '!app:stop' m/set_event
	[ -z "$(cat m/set_event)" ] || die "'!' did not disable: $(cat m/set_event)"
	running "$APP" || die "the example died"
	kill "$APP"
}

# trace_pipe consumes: what it printed is gone from trace
pipe_consumes() {
	start
	w app:request m/set_event
	wait_for "grep -q 'app:request' m/trace" || die "no event"
	timeout 2 cat m/trace_pipe >pipe.txt || true
	grep -c 'app:request: fd=' pipe.txt >n.txt || die "trace_pipe printed nothing"
	hasnt pipe.txt "# entries-in-buffer" # (no header: the kernel's trace_pipe)
	last=$(grep 'app:request' pipe.txt | tail -1 | awk '{ sub(":", "", $3); print $3 }')
	grep 'app:request: fd=' m/trace | awk -v last="$last" '{ sub(":", "", $3); if ($3 + 0 <= last + 0) { print "consumed still shown: " $0; exit 1 } }'
	# a marker among the records
	w 'hello from the test' m/trace_marker
	wait_for "grep -q 'tracing_mark_write: hello from the test' m/trace" || die "no marker: $(tail -3 m/trace)"
	# non-blocking: EAGAIN at once when nothing is there
	w 0 m/tracing_on
	timeout 1 cat m/trace_pipe >/dev/null || true
	python3 -c '
import os, errno, sys
fd = os.open("m/trace_pipe", os.O_RDONLY | os.O_NONBLOCK)
try:
    os.read(fd, 4096)
    sys.exit("read something: tracing is off")
except BlockingIOError:
    pass
'
	kill "$APP"
}

# seed 001's event probe, with trail's event in place of the kernel's
seed_eprobe() {
	start
	has m/events/app/request/format "field:__data_loc char[] path;"
	echo 'e:myreq app/request file=$path:string' >>m/dynamic_events
	has m/dynamic_events 'e:eprobes/myreq app.request file=$path:string'
	w 1 m/events/eprobes/myreq/enable
	wait_for "grep -q 'eprobes:myreq: file=\"/index.html\"' m/trace" || die "$(tail m/trace; cat m/error_log)"
	# in use: not deleted
	expect_rc 1 eval "echo '-:eprobes/myreq' >>m/dynamic_events" 2>/dev/null
	has m/error_log "the event is enabled"
	w 0 m/events/eprobes/myreq/enable
	echo '-:eprobes/myreq' >>m/dynamic_events
	[ -z "$(cat m/dynamic_events)" ] || die "not deleted: $(cat m/dynamic_events)"
	[ ! -e m/events/eprobes ] || die "the deleted event's directory is there"
	# the kernel's caret errors
	expect_rc 1 w 'e:x app/nosuch' m/dynamic_events 2>/dev/null
	has m/error_log "dynamic_events: error: Attached event does not exist"
	[ "$(grep -A1 'Command: e:x app/nosuch' m/error_log | tail -1)" = "               ^" ] ||
		die "caret: $(cat m/error_log)"
	expect_rc 1 w 'p:bad nosuchfunc%' m/dynamic_events 2>/dev/null
	has m/error_log "dynamic_events: error: Invalid probed address suffix"
	# a user event, the kernel's u: line: its format from its definition
	echo 'u:request2 u32 fd; char[] path' >>m/dynamic_events
	has m/dynamic_events 'u:request2 u32 fd; char[] path'
	has m/events/user_events/request2/format 'field:__data_loc char[] path;'
	expect_rc 1 eval "echo 'u:bad u32 fd; strng p' >>m/dynamic_events" 2>/dev/null
	has m/error_log "dynamic_events: error: Invalid type"
	echo '-:user_events/request2' >>m/dynamic_events
	[ ! -e m/events/user_events/request2 ] || die "the deleted user event is there"
	running "$APP" || die "the example died"
	kill "$APP"
}

# seed 003's function event, on a function of the unmodified example;
# then the function_graph tracer limited to it
seed_function_events() {
	start
	w 'worker_serve(int id, int requests)' m/function_events
	has m/function_events 'worker_serve(int id, int requests)'
	has m/available_events "functions:worker_serve"
	has m/events/functions/worker_serve/format "field:s32 requests;"
	w 1 m/events/functions/worker_serve/enable
	wait_for "grep -q 'functions:worker_serve: (worker_serve+0x0/0x[0-9a-f]*) id=1 requests=3' m/trace" ||
		die "$(tail -3 m/trace; cat m/error_log)"
	w 0 m/events/functions/worker_serve/enable
	w 'worker_*' m/set_ftrace_filter
	w function_graph m/current_tracer
	wait_for "grep -q '|  worker_serve();' m/trace" || die "no graph: $(tail -5 m/trace)"
	expect_rc 1 w wakeup m/current_tracer 2>/dev/null
	has m/error_log "current_tracer: error: no such tracer"
	w nop m/current_tracer
	running "$APP" || die "the example died"
	kill "$APP"
}

# instances: their own events, triggers and hist; rmdir refused while
# one of its files is open; per_pid/PID: one process
instances() {
	start
	mkdir m/instances/foo
	[ -d m/instances/foo/events/app ] || die "no events in the instance"
	w app:request m/instances/foo/set_event
	w 'hist:keys=path:vals=bytes' m/instances/foo/events/app/request/trigger
	has m/instances/foo/events/app/request/trigger 'hist:keys=path:vals=bytes'
	wait_for "grep -q 'path: /index.html' m/instances/foo/events/app/request/hist" ||
		die "no hist: $(cat m/instances/foo/events/app/request/hist)"
	has m/instances/foo/events/app/request/hist "hitcount:"
	wait_for "grep -q 'app:request' m/instances/foo/trace" || die "nothing in the instance"
	# the top records nothing of it
	hasnt m/trace "app:request"
	# a bad trigger: EINVAL, the kernel's hist error
	expect_rc 1 w 'hist:keys=nosuch' m/instances/foo/events/app/request/trigger 2>/dev/null
	has m/error_log "hist: error:"
	# rmdir while trace_pipe is read: EBUSY; after: gone
	timeout 3 cat m/instances/foo/trace_pipe >/dev/null &
	reader=$!
	sleep 0.5
	expect_rc 1 rmdir m/instances/foo 2>err.txt
	has err.txt "busy"
	wait $reader || true
	rmdir m/instances/foo
	[ ! -e m/instances/foo ] || die "instance still there"
	expect_rc 1 mkdir m/instances/bad/name 2>/dev/null
	# one process
	[ -d "m/per_pid/$APP" ] || die "no per_pid/$APP: $(ls m/per_pid)"
	w 'app:start' "m/per_pid/$APP/set_event"
	wait_for "grep -q 'app:start' m/per_pid/$APP/trace" || die "nothing for the pid"
	running "$APP" || die "the example died"
	# the process gone: its recording is still there, at once
	kill "$APP"
	wait "$APP" 2>/dev/null || true
	timeout 3 cat "m/per_pid/$APP/trace" >dead.txt || die "the trace of an ended process hangs"
	has dead.txt "app:start"
}

# bad writes: too long, NUL bytes, garbage; concurrent writers
bad_writes() {
	start
	head -c 1048576 /dev/zero | tr '\0' 'a' >big
	expect_rc 1 cp big m/events/app/request/filter 2>/dev/null
	has m/error_log "write too long"
	expect_rc 1 printf 'fd\0 == 1' >m/events/app/request/filter 2>/dev/null
	has m/error_log "a NUL byte in the write"
	expect_rc 1 w 2 m/events/app/request/enable 2>/dev/null
	expect_rc 1 w abc m/buffer_size_kb 2>/dev/null
	expect_rc 1 w nosuch:event m/set_event 2>/dev/null
	expect_rc 1 w 'myevent char str[257]' m/synthetic_events 2>/dev/null
	has m/error_log "synthetic_events: error: String size out of range"
	expect_rc 1 w 'x[' m/set_ftrace_filter 2>/dev/null
	# four writers at once, each toggling its own setting
	local writers=()
	for k in 1 2 3 4; do
		(for i in 1 2 3 4 5; do
			case $k in
			1) w 1 m/events/app/request/enable; w 0 m/events/app/request/enable ;;
			2) w "fd > $i" m/events/app/request/filter ;;
			3) w 'traceoff' m/events/app/stop/trigger; w '!traceoff' m/events/app/stop/trigger ;;
			4) cat m/trace >/dev/null; w 1 m/tracing_on ;;
			esac
		done) &
		writers+=($!)
	done
	wait "${writers[@]}"
	[ "$(cat m/events/app/request/filter)" = "fd > 5" ] || die "filter: $(cat m/events/app/request/filter)"
	grep -v '^#' m/events/app/stop/trigger >trig.txt || true
	hasnt trig.txt "traceoff"
	w 1 m/events/app/request/enable
	wait_for "grep -q 'app:request' m/trace" || die "no event after the writers"
	running "$APP" || die "the example died"
	kill "$APP"
}

# the mount's owner killed: the mount is dead but unmounts; its recorder
# ends with it and the program goes on, untraced
owner_killed() {
	start
	w app:request m/set_event
	wait_for "grep -q 'app:request' m/trace" || die "no event"
	grep -q trail-arena "/proc/$APP/maps" || die "the example records for no session"
	# (a second mount, in the foreground: its pid known)
	mkdir m2
	$TRAIL mount -f m2 2>m2.err &
	owner=$!
	wait_for "[ -e m2/trace ]" || die "no foreground mount: $(cat m2.err)"
	w app:request m2/set_event
	wait_for "[ \$(grep -c trail-arena /proc/$APP/maps) -ge 2 ]" || die "the second never recorded"
	fusermount3 -u m
	kill -9 "$owner"
	wait_for "! ls m2 >/dev/null 2>&1" || die "the mount still answers"
	fusermount3 -u m2
	[ -z "$(ls m2)" ] || die "m2 not unmounted"
	wait_for "! grep -q trail-arena /proc/$APP/maps" || die "the example still maps the arena"
	sleep 0.2
	running "$APP" || die "the example died with the mount"
	kill "$APP"
}

for name in mount_files enable_filter pipe_consumes seed_eprobe seed_function_events instances \
	bad_writes owner_killed; do
	if [ -n "$NOFUSE" ]; then
		skip "$name" "$NOFUSE"
	else
		t "$name" "$name"
	fi
done
