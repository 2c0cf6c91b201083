#!/usr/bin/env bash
# bench/attach.sh [BUILD_DIR] - how long `trail record -P PID` takes from
# its start to the first event recorded, for a process started without
# libtrail (loaded into it through ptrace: src/recorder/inject.c) and for
# one started with it (LD_PRELOAD), RUNS times each.
#
#   RUNS=5 bench/attach.sh build
#
# The process is tests/cli/ftrace-prog-noflag spin (three threads calling
# lookup() in a loop, built without patchable entries). The recording is
# `-C mono -p function -l lookup`: the first event's timestamp
# (CLOCK_MONOTONIC) minus the monotonic time just before trail started.
#
# Then a process with many functions: python3 with libz3 loaded (Debian's
# libz3-4, ~53,000 functions in all its objects; skipped, said so, where
# either is missing), every function of every object hooked (`-p function
# -l '*@*'`): seconds from trail's start to its "attached" line, the
# decoded entries' cache cold (the registry's .sites-* files removed) and
# warm.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
TRAIL=$BUILD/trail
PROG=$BUILD/tests/cli/ftrace-prog-noflag
TMP=$(mktemp -d /tmp/trail-attach.XXXXXX)
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
sp=
trap '[ -n "$sp" ] && kill $sp 2>/dev/null; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/lib.sh"

# one attach: ms from trail's start to the first event
once() { # preload(0|1)
	if [ "$1" = 1 ]; then
		LD_PRELOAD=$BUILD/libtrail.so.1 "$PROG" spin >/dev/null &
	else
		env -u LD_PRELOAD "$PROG" spin >/dev/null &
	fi
	sp=$!
	sleep 0.3
	python3 - "$TRAIL" "$sp" "$TMP/a.dat" <<'PY'
import os, signal, subprocess, sys, time
trail, pid, out = sys.argv[1:]
t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
p = subprocess.Popen([trail, "record", "-q", "-C", "mono", "-p", "function", "-l", "lookup",
                      "-o", out, "-P", pid], stderr=subprocess.DEVNULL)
time.sleep(0.6)
p.send_signal(signal.SIGINT)
p.wait()
rep = subprocess.run([trail, "report", "-i", out], capture_output=True, text=True).stdout
for l in rep.splitlines():
    f = l.split()
    if "lookup" in l and len(f) > 3 and f[2].endswith(":"):
        print("%.1f" % ((float(f[2][:-1]) - t0) * 1000))
        break
PY
	kill $sp
	wait $sp 2>/dev/null
}

declare -a inj pre
for _ in $(seq "$RUNS"); do
	inj+=("$(once 0)")
	pre+=("$(once 1)")
done
printf 'attach to a running process, ms from trail record -P to the first event (median [min..max] of %s)\n' "$RUNS"
printf '  %-34s %s\n' "started without libtrail (injected)" "$(stats "${inj[@]}")"
printf '  %-34s %s\n' "started with LD_PRELOAD" "$(stats "${pre[@]}")"

# seconds from trail's start to "attached ... N functions hooked" (N on fd 3)
many() { # cold(0|1)
	[ "$1" = 1 ] && rm -f "$TRAIL_REGISTRY"/.sites-*
	TRAIL_REGISTRY=$TRAIL_REGISTRY "$PY" -c \
		"import ctypes, time; ctypes.CDLL('libz3.so.4'); time.sleep(600)" &
	sp=$!
	sleep 1
	python3 - "$TRAIL" "$sp" "$TMP/m.dat" <<'PY'
import os, signal, subprocess, sys, time
trail, pid, out = sys.argv[1:]
t0 = time.monotonic()
p = subprocess.Popen([trail, "record", "-p", "function", "-l", "*@*", "-o", out, "-P", pid],
                     stderr=subprocess.PIPE, text=True)
for l in p.stderr:
    if " attached to process " in l:
        print("%.2f" % (time.monotonic() - t0))
        os.write(3, l.split("): ")[-1].split()[0].encode() + b"\n")
        break
p.send_signal(signal.SIGINT)
p.communicate()
PY
	kill $sp
	wait $sp 2>/dev/null
	sp=
}

PY=$(command -v python3.11 || command -v python3)
PY=$(readlink -f "$PY")
if [ -e /usr/lib/x86_64-linux-gnu/libz3.so.4 ]; then
	declare -a cold warm
	for _ in $(seq "$RUNS"); do
		cold+=("$(many 1 3>"$TMP/n")")
		warm+=("$(many 0 3>"$TMP/n")")
	done
	printf 'attach to python3 + libz3 (%s functions hooked, -l '"'*@*'"'), s to "attached" (median [min..max] of %s)\n' \
		"$(cat "$TMP/n")" "$RUNS"
	printf '  %-34s %s\n' "decoded entries' cache cold" "$(stats "${cold[@]}")"
	printf '  %-34s %s\n' "cache warm" "$(stats "${warm[@]}")"
else
	echo "attach to python3 + libz3: skipped (no libz3.so.4: apt-get install libz3-4)"
fi
