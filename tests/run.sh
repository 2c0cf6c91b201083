#!/usr/bin/env bash
# tests/run.sh BUILD_DIR - run the whole suite against one build:
#   unit test programs (tests/unit, check.h), CLI and stress scripts
#   (tests/cli/*.sh, tests/stress/*.sh). Every test prints "ok - name" or
#   "not ok - name"; this script counts them and ends with
#   "N passed, N failed" (and skips, each with its reason).
# Each program/script runs with a timeout; one that dies or times out
# counts as a failure.
# `meson test -C BUILD` runs the same programs and scripts, registered in
# tests/meson.build (doc/testing.md).
set -u
. "$(dirname "$0")/lib/env.sh"
trail_test_env "${1:-build}" || exit 2
BUILD=$TRAIL_BUILD SRC=$TRAIL_SRC
TIMEOUT=${TEST_TIMEOUT:-300}
FILTER=${TEST_FILTER:-}
EXCLUDE=${TEST_EXCLUDE:-} # scripts left out (check.sh: what a build type cannot change)

pass=0 fail=0 skip=0
failed_names=()

run_one() { # name, command...
	local name=$1; shift
	local out rc
	[ -n "$FILTER" ] && ! [[ "$name" =~ $FILTER ]] && return
	if [ -n "$EXCLUDE" ] && [[ "$name" =~ $EXCLUDE ]]; then
		echo "# $name: left out (${TEST_EXCLUDE_WHY:-TEST_EXCLUDE})"
		return
	fi
	echo "# $name"
	local t0=$SECONDS
	out=$(timeout -k 10 "$TIMEOUT" "$@" 2>"$TRAIL_TEST_TMP/stderr.$$"); rc=$?
	echo "# $name: $((SECONDS - t0)) s"
	local lines_ok lines_fail lines_skip
	lines_ok=$(grep -c '^ok - ' <<<"$out")
	lines_skip=$(grep -c '^ok - .* # SKIP' <<<"$out")
	lines_fail=$(grep -c '^not ok - ' <<<"$out")
	echo "$out" | grep -E '^(ok|not ok) - '
	pass=$((pass + lines_ok - lines_skip))
	skip=$((skip + lines_skip))
	fail=$((fail + lines_fail))
	if [ "$lines_fail" -gt 0 ] || [ "$rc" -ne 0 ]; then
		sed 's/^/    /' "$TRAIL_TEST_TMP/stderr.$$" | tail -40
		grep '^not ok - ' <<<"$out" | while read -r l; do echo "$l" >>"$TRAIL_TEST_TMP/failed"; done
	fi
	if [ "$rc" -ne 0 ] && [ "$lines_fail" -eq 0 ]; then
		echo "not ok - $name (exit status $rc$([ $rc -eq 124 ] && echo ': timeout'))"
		echo "not ok - $name (exit $rc)" >>"$TRAIL_TEST_TMP/failed"
		fail=$((fail + 1))
	fi
}

for t in "$BUILD"/tests/unit/test-*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	run_one "unit/$(basename "$t")" "$t"
done
for t in "$SRC"/tests/cli/test-*.sh "$SRC"/tests/stress/test-*.sh; do
	[ -f "$t" ] || continue
	run_one "${t#$SRC/tests/}" bash "$t"
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
