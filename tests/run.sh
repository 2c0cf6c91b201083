#!/usr/bin/env bash
# tests/run.sh BUILD_DIR - run the whole suite against one build:
#   unit test programs (tests/unit, check.h), CLI and stress scripts
#   (tests/cli/*.sh, tests/stress/*.sh). Every test prints "ok - name" or
#   "not ok - name"; this script counts them and ends with
#   "N passed, N failed" (and skips, each with its reason).
# Each program/script runs with a timeout; one that dies or times out
# counts as a failure. TEST_JOBS programs and scripts run at once
# (default: half the CPUs online), each script with a registry and scratch
# directory of its own (tests/lib/run-one.sh); of those meson runs alone
# (is_parallel false in tests/*/meson.build: they time the recorder, attach,
# send signals, load every CPU) one at a time, the others beside it.
# Results are printed in the order the tests are found.
# `meson test -C BUILD` runs the same programs and scripts, registered in
# tests/meson.build (doc/testing.md).
set -u
. "$(dirname "$0")/lib/env.sh"
trail_test_env "${1:-build}" || exit 2
BUILD=$TRAIL_BUILD SRC=$TRAIL_SRC
TIMEOUT=${TEST_TIMEOUT:-300}
FILTER=${TEST_FILTER:-}
EXCLUDE=${TEST_EXCLUDE:-} # scripts left out (check.sh: what a build type cannot change)

# (half the CPUs: the suite is CPU-bound, and its timing tests need room;
# on 2 CPUs two at once took as long as one, and timed out test-attach.sh)
JOBS=${TEST_JOBS:-$(($(nproc 2>/dev/null || echo 2) / 2))}
[ "$JOBS" -ge 1 ] || JOBS=1
export TRAIL_TIMES=$TRAIL_TEST_TMP/times # lib.sh's t: each test's seconds

pass=0 fail=0 skip=0
names=() cmds=() heavy=() started=()
# the scripts meson runs alone ('name' : false in tests/cli, tests/stress)
alone=" $(sed -nE "s/^ *'([a-z0-9-]+)' *: *false,?.*/\1/p" \
	"$SRC/tests/cli/meson.build" "$SRC/tests/stress/meson.build" | tr '\n' ' ')"

# one program or script in the background: its output, errors and exit
# status in files numbered as it was queued
launch() { # index
	local i=$1 d=$TRAIL_TEST_TMP/job.$1
	mkdir -p "$d"
	(
		t0=$SECONDS
		# shellcheck disable=SC2086 # the command line is its words
		timeout -k 10 "$TIMEOUT" ${cmds[$i]} >"$d/out" 2>"$d/err"
		echo $? >"$d/rc"
		echo $((SECONDS - t0)) >"$d/secs"
	) &
}

# a finished job's results, tallied and printed
report() { # index
	local i=$1 d=$TRAIL_TEST_TMP/job.$1 name=${names[$1]} out rc lines_ok lines_fail lines_skip
	out=$(cat "$d/out"); rc=$(cat "$d/rc")
	echo "# $name"
	lines_ok=$(grep -c '^ok - ' <<<"$out")
	lines_skip=$(grep -c '^ok - .* # SKIP' <<<"$out")
	lines_fail=$(grep -c '^not ok - ' <<<"$out")
	echo "$out" | grep -E '^(ok|not ok) - '
	echo "# $name: $(cat "$d/secs") s"
	pass=$((pass + lines_ok - lines_skip))
	skip=$((skip + lines_skip))
	fail=$((fail + lines_fail))
	if [ "$lines_fail" -gt 0 ] || [ "$rc" -ne 0 ]; then
		sed 's/^/    /' "$d/err" | tail -40
		grep '^not ok - ' <<<"$out" | while read -r l; do echo "$l" >>"$TRAIL_TEST_TMP/failed"; done
	fi
	if [ "$rc" -ne 0 ] && [ "$lines_fail" -eq 0 ]; then
		echo "not ok - $name (exit status $rc$([ "$rc" -eq 124 ] && echo ': timeout'))"
		echo "not ok - $name (exit $rc)" >>"$TRAIL_TEST_TMP/failed"
		fail=$((fail + 1))
	fi
}

queue() { # name, command...
	local name=$1; shift
	[ -n "$FILTER" ] && ! [[ "$name" =~ $FILTER ]] && return
	if [ -n "$EXCLUDE" ] && [[ "$name" =~ $EXCLUDE ]]; then
		echo "# $name: left out (${TEST_EXCLUDE_WHY:-TEST_EXCLUDE})"
		return
	fi
	local base=${name##*/test-}
	names+=("$name"); cmds+=("$*"); started+=(0)
	if [[ "$alone" == *" ${base%.sh} "* ]]; then heavy+=(1); else heavy+=(0); fi
}

for t in "$BUILD"/tests/unit/test-*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	queue "unit/$(basename "$t")" "$t"
done
for t in "$SRC"/tests/cli/test-*.sh "$SRC"/tests/stress/test-*.sh; do
	[ -f "$t" ] || continue
	queue "${t#$SRC/tests/}" "$SRC/tests/lib/run-one.sh $BUILD $t"
done

# JOBS at a time, one of them at most "alone" (those first: the longest),
# reported in queue order as soon as each and those before it are done
done_() { [ -e "$TRAIL_TEST_TMP/job.$1/secs" ]; }
pick() { # the next test to start, or nothing
	local k heavy_running=0
	for ((k = 0; k < ${#names[@]}; k++)); do
		[ "${started[$k]}" = 1 ] && [ "${heavy[$k]}" = 1 ] && ! done_ $k && heavy_running=1
	done
	if [ $heavy_running = 0 ]; then
		for ((k = 0; k < ${#names[@]}; k++)); do
			[ "${started[$k]}" = 0 ] && [ "${heavy[$k]}" = 1 ] && { echo $k; return; }
		done
	fi
	for ((k = 0; k < ${#names[@]}; k++)); do
		[ "${started[$k]}" = 0 ] && [ "${heavy[$k]}" = 0 ] && { echo $k; return; }
	done
}
shown=0 running=0
while [ "$shown" -lt "${#names[@]}" ]; do
	while [ "$running" -lt "$JOBS" ]; do
		k=$(pick)
		[ -n "$k" ] || break
		launch "$k"; started[$k]=1; running=$((running + 1))
	done
	while [ "$shown" -lt "${#names[@]}" ] && [ "${started[$shown]}" = 1 ] && done_ $shown; do
		report $shown; shown=$((shown + 1))
	done
	[ "$shown" -lt "${#names[@]}" ] || break
	wait -n 2>/dev/null || sleep 0.2
	running=0
	for ((k = 0; k < ${#names[@]}; k++)); do
		[ "${started[$k]}" = 1 ] && ! done_ $k && running=$((running + 1))
	done
done

echo
if [ -s "$TRAIL_TEST_TMP/times" ]; then
	echo "# slowest tests (s):"
	awk '{ printf "#   %6.1f %s\n", $3 - $2, $1 }' "$TRAIL_TEST_TMP/times" | sort -rn -k2 | head -15
fi
if [ -s "$TRAIL_TEST_TMP/failed" ]; then
	echo "failed:"; sed 's/^/  /' "$TRAIL_TEST_TMP/failed"
fi
if [ "$skip" -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ "$fail" -eq 0 ]
