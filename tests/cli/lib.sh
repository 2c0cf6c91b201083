# tests/cli/lib.sh - shared by the CLI test scripts (sourced).
# Each test is a shell function; `t NAME FUNCTION` runs it in a subshell
# with `set -e` and prints "ok - NAME" or "not ok - NAME".
set -u
: "${TRAIL:?run through tests/run.sh}"
BUILD=$TRAIL_BUILD
SRC=$TRAIL_SRC
EXAMPLE=$BUILD/examples/example
EXAMPLE_LINKED=$BUILD/examples/example-linked
TMP=$(mktemp -d "${TRAIL_TEST_TMP:-/tmp}/cli.XXXXXX")
LIBTRAIL=$BUILD/libtrail.so.1

# processes a test left running (it failed before killing them): found by
# the marker every process it started inherits, and killed
# (one grep reads every environment, NUL-separated entries as lines; a tr
# and a grep for each process took ~1 s a test on a loaded 2-CPU machine)
reap_leftovers() { # marker
	local f p
	for f in $(grep -lzx "TRAIL_TEST_MARK=$1" /proc/[0-9]*/environ 2>/dev/null); do
		p=${f#/proc/}
		p=${p%/environ}
		[ "$p" != "$$" ] || continue
		kill -9 "$p" 2>/dev/null || true
	done
}

t() { # name, function
	local name=$1 mark=$$.$RANDOM.$RANDOM rc=0 t0=$EPOCHREALTIME; shift
	# not "( ... ) || rc=$?": on the left of || bash ignores set -e in the
	# subshell too, and a failing command in the middle of a test would
	# not fail it
	( set -e; export TRAIL_TEST_MARK=$mark; cd "$TMP"; "$@" ) >"$TMP/.log" 2>&1
	rc=$?
	reap_leftovers "$mark"
	# how long it took, where the suite's time goes (tests/run.sh lists
	# the slow ones)
	echo "$name $t0 $EPOCHREALTIME" >>"${TRAIL_TIMES:-${TRAIL_TEST_TMP:-/tmp}/times}"
	if [ $rc -eq 0 ]; then
		echo "ok - $name"
	else
		echo "not ok - $name"
		sed 's/^/    /' "$TMP/.log" | tail -30 >&2
	fi
}

skip() { # name, reason
	echo "ok - $1 # SKIP $2"
}

die() { echo "FAILED: $*" >&2; exit 1; }
expect_rc() { # rc, command...
	local want=$1; shift
	local rc=0
	"$@" || rc=$?
	[ "$rc" -eq "$want" ] || die "exit status $rc, wanted $want: $*"
}
has() { # file, fixed string
	grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; head -50 "$1" >&2; die "'$2' not in $1"; }
}
hasnt() {
	! grep -qF -- "$2" "$1" || { echo "--- $1:" >&2; head -50 "$1" >&2; die "'$2' unexpectedly in $1"; }
}

# Replace run-specific values in `trail report` output: pids, tids,
# timestamps, cpus, paths.
normalize() {
	sed -E \
		-e 's/^ *([^ ]+)-[0-9]+ +\[[0-9?]+\] +[0-9]+\.[0-9]+:/\1-TID [CPU] TS:/' \
		-e 's#-[0-9]+/[0-9]+ #-PID/TID #' \
		-e 's#^cpus=[0-9]+#cpus=N#' \
		-e 's/#P:[0-9]+/#P:N/' \
		-e "s#$TMP#TMP#g; s#$BUILD#BUILD#g" \
		-e 's/# clock: [^,]*,/# clock: CLOCK,/' \
		-e 's/buffer: [0-9]+ KiB/buffer: N KiB/' \
		-e 's/  +/ /g' "$@"
}

# Wait until a file exists or a condition holds (up to ~10 s).
wait_for() {
	for _ in $(seq 200); do eval "$1" && return 0; sleep 0.05; done
	return 1
}

# Stop background recorders as Ctrl-C does, bounded: each is sent SIGINT
# once it catches it (a background job starts with SIGINT ignored, until
# trail's handler is in), up to 30 s; then waited for, up to 30 s more
# (SIGKILL and a failure past that). The status is the last one's.
# (one read of its status: "kill -0, then no zombie's state" said
# "running" for a process reaped between the two, whose status was gone)
running() { local s; s=$(grep '^State:' "/proc/$1/status" 2>/dev/null) && [[ $s != *Z* ]]; }
stop_rec() { # pid...
	local p rc=0 i m
	for p in "$@"; do
		for i in $(seq 300); do
			running "$p" || break
			# SigCgt's bit 1: SIGINT caught
			m=$(awk '/^SigCgt/ {print $2}' "/proc/$p/status" 2>/dev/null || true)
			[ -n "$m" ] && ((0x$m & 2)) && break
			sleep 0.1
		done
		kill -INT "$p" 2>/dev/null || true
		for i in $(seq 300); do running "$p" || break; sleep 0.1; done
		if running "$p"; then
			kill -KILL "$p"
			die "recorder $p did not stop within 30 s of SIGINT"
		fi
	done
	for p in "$@"; do rc=0; wait "$p" || rc=$?; done
	return $rc
}

# damage FILE at OFFSET: its 4 bytes there complemented (a change whatever
# they held; zeros written over zeros would damage nothing)
flip4() { # file offset
	python3 - "$1" "$2" <<'PY'
import sys
path, off = sys.argv[1], int(sys.argv[2])
with open(path, "r+b") as f:
    f.seek(off)
    b = f.read(4)
    f.seek(off)
    f.write(bytes(x ^ 0xff for x in b))
PY
}

# the column of the caret in a caret-style error (line 3 of FILE: the
# input indented by 2, the caret under it), 0-based in the input
caret_col() { # file
	sed -n '3p' "$1" | awk '{ print index($0, "^") - 3 }'
}

# record running process PID for a moment: trail record ARGS... -P PID
# in the background, attached, 0.3 s, Ctrl-C, detached
record_running() { # pid args...
	local pid=$1 r
	shift
	# (attached when the recorder says so: an arena in the process's maps
	# may be an earlier, killed recorder's)
	$TRAIL record "$@" -P "$pid" 2>rr.err &
	r=$!
	wait_for "grep -q 'attached to process' rr.err" || die "never attached: $* $(cat rr.err)"
	sleep 0.3
	stop_rec $r
	# what -q would have said: the warnings and errors, not the progress
	grep -vE '^trail: (attached to process|loading .* into process|[0-9,]+ events \()' rr.err >&2 ||
		true
	wait_for "! grep -q trail-arena /proc/$pid/maps" || die "never detached: $*"
}

# an empty registry in ./reg (the tests that set TRAIL_REGISTRY=$TMP/reg)
fresh_registry() {
	rm -rf reg
	mkdir -m 700 reg
}
