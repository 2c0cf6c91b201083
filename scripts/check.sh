#!/usr/bin/env bash
# The whole test suite: the normal build, then the same suite under
# ASan+UBSan, then the concurrency tests under TSan, then each libFuzzer
# target for FUZZ_SECONDS (default 60; 0 skips them: scripts/fuzz.sh).
# Prints each run's results and ends with the total "N passed, N failed".
set -u
cd "$(dirname "$0")/.."
total_pass=0 total_fail=0 total_skip=0
tally() { # log file
	local line
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed' "$1" | tail -1)
	[ -n "$line" ] || { total_fail=$((total_fail + 1)); return; }
	total_pass=$((total_pass + $(echo "$line" | awk '{print $1}')))
	total_fail=$((total_fail + $(echo "$line" | awk '{print $3}')))
	total_skip=$((total_skip + $(echo "$line" | awk '{print ($5 == "" ? 0 : $5)}')))
}
logs=$(mktemp -d)

echo "== build"
{ [ -f build/build.ninja ] || meson setup build; } >/dev/null && ninja -C build >/dev/null ||
	{ echo "build failed"; ninja -C build; echo "0 passed, 1 failed"; exit 1; }
echo "== tests"
tests/run.sh build | tee "$logs/plain"
tally "$logs/plain"

echo "== tests under ASan+UBSan"
if { [ -f build-asan/build.ninja ] || meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false; } >/dev/null &&
   ninja -C build-asan >/dev/null; then
	# run once, in the plain stage: test-header.sh builds users' programs
	# with the system's compilers (nothing of the build), test-layers.sh
	# reads the call graph of the objects, test-usage-doc.sh compares the
	# docs with --help (the same in every build)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:verify_asan_link_order=0 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		TEST_EXCLUDE='cli/test-(header|layers|usage-doc).sh' TEST_EXCLUDE_WHY='the same in every build: run in the plain stage' \
		tests/run.sh build-asan | tee "$logs/asan"
	tally "$logs/asan"
else
	echo "not ok - asan build failed"; total_fail=$((total_fail + 1))
fi

echo "== concurrency tests under TSan (stress, attach/detach, SIGKILL, fork, the record path, RV monitors)"
if { [ -f build-tsan/build.ninja ] || meson setup build-tsan -Db_sanitize=thread -Db_lundef=false; } >/dev/null &&
   ninja -C build-tsan >/dev/null; then
	TSAN_OPTIONS=halt_on_error=1 TEST_FILTER='stress|attach|sigkill|record|htab|test-rv' \
		tests/run.sh build-tsan | tee "$logs/tsan"
	tally "$logs/tsan"
else
	echo "not ok - tsan build failed"; total_fail=$((total_fail + 1))
fi

echo "== fuzzing (${FUZZ_SECONDS:-60} s per target)"
scripts/fuzz.sh "${FUZZ_SECONDS:-60}" | tee "$logs/fuzz"
tally "$logs/fuzz"

rm -rf "$logs"
echo
if [ "$total_skip" -gt 0 ]; then
	echo "$total_pass passed, $total_fail failed, $total_skip skipped"
else
	echo "$total_pass passed, $total_fail failed"
fi
[ "$total_fail" -eq 0 ]
