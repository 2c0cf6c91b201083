#!/usr/bin/env bash
# scripts/fuzz.sh [SECONDS] - build the libFuzzer targets of tests/fuzz
# (clang, ASan+UBSan, the code under test instrumented for coverage) in
# build-fuzz, then run each for SECONDS (default: $FUZZ_SECONDS, else 60).
# Prints "ok - fuzz/<target>" or "not ok - fuzz/<target>" per target and
# ends with "N passed, N failed" (scripts/check.sh tallies it).
#
# Each target starts from a copy of its checked-in seeds
# (tests/fuzz/corpus/<target>/, never written to) plus its regression
# inputs (tests/fuzz/regress/<target>/); the grown copy is left in
# build-fuzz/fuzz-work/<target>/. A crash, hang (-timeout), leak or memory
# blow-up (-rss_limit_mb) fails the target: the input is kept in
# build-fuzz/fuzz-artifacts/<target>/, and the output says how to replay it
# and where to keep it as a regression input.
#
# Environment: FUZZ_SECONDS=0 skips every target (reported as skipped);
# FUZZ_TARGETS="spec elf" runs some; FUZZ_JOBS (default: the CPUs) targets
# at a time; FUZZ_BUILD (default build-fuzz).
set -u
cd "$(dirname "$0")/.."
SECS=${1:-${FUZZ_SECONDS:-60}}
TARGETS=(${FUZZ_TARGETS:-reader meta spec elf ldcache probe core})
JOBS=${FUZZ_JOBS:-$(nproc)}
B=${FUZZ_BUILD:-build-fuzz}
pass=0 fail=0 skip=0

finish() {
	echo
	if [ "$skip" -gt 0 ]; then
		echo "$pass passed, $fail failed, $skip skipped"
	else
		echo "$pass passed, $fail failed"
	fi
	[ "$fail" -eq 0 ]
	exit
}

if ! [[ "$SECS" =~ ^[0-9]+$ ]]; then
	echo "usage: scripts/fuzz.sh [SECONDS]" >&2
	exit 2
fi
if [ "$SECS" -eq 0 ]; then
	for t in "${TARGETS[@]}"; do
		echo "ok - fuzz/$t # SKIP FUZZ_SECONDS=0"
		skip=$((skip + 1))
	done
	finish
fi

# the build: the targets and what they link, nothing else
start=$(date +%s)
if ! command -v clang >/dev/null; then
	echo "not ok - fuzz/build (no clang: scripts/install-deps.sh --sanitizers)"
	fail=1
	finish
fi
blog=$(mktemp /tmp/trail-fuzz-build.XXXXXX)
if ! { [ -f "$B/build.ninja" ] ||
       CC=clang CXX=clang++ meson setup "$B" -Db_sanitize=address,undefined \
		-Db_lundef=false >"$blog" 2>&1; } ||
   ! ninja -C "$B" "${TARGETS[@]/#/tests/fuzz/fuzz-}" >>"$blog" 2>&1; then
	echo "not ok - fuzz/build"
	tail -30 "$blog" | sed 's/^/#   /'
	rm -f "$blog"
	fail=1
	finish
fi
rm -f "$blog"
echo "# fuzz: targets built in $(($(date +%s) - start)) s; ${SECS} s each, $JOBS at a time"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}

# one target: its log, artifacts and grown corpus under $B
run_target() {
	local t=$1 work=$B/fuzz-work/$t art=$B/fuzz-artifacts/$t
	local extra=()
	rm -rf "$work" "$art"
	mkdir -p "$work" "$art"
	cp tests/fuzz/corpus/"$t"/* "$work"/
	[ -d tests/fuzz/regress/"$t" ] && extra=(tests/fuzz/regress/"$t")
	"$B/tests/fuzz/fuzz-$t" -max_total_time="$SECS" -timeout=10 \
		-rss_limit_mb=2048 -print_final_stats=1 -artifact_prefix="$art/" \
		"$work" "${extra[@]}" >"$B/fuzz-$t.log" 2>&1
	echo $? >"$B/fuzz-$t.rc"
}

report() { # target
	local t=$1 rc log=$B/fuzz-$t.log art=$B/fuzz-artifacts/$t input stats
	rc=$(cat "$B/fuzz-$t.rc" 2>/dev/null || echo 1)
	stats=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 |
		sed -E 's/^#([0-9]+)[[:space:]]+DONE +cov: ([0-9]+) ft: ([0-9]+) corp: ([0-9]+).*/\1 runs, cov: \2 ft: \3, corpus: \4 inputs/')
	input=$(ls -t "$art"/* 2>/dev/null | head -1)
	if [ "$rc" -eq 0 ] && [ -z "$input" ]; then
		echo "# fuzz/$t: ${stats:-no stats}"
		echo "ok - fuzz/$t"
		pass=$((pass + 1))
		return
	fi
	fail=$((fail + 1))
	echo "not ok - fuzz/$t (exit status $rc)"
	grep -E 'ERROR: |SUMMARY: |runtime error|FUZZ_ASSERT|^ +#[0-9]+ ' "$log" | head -25 | sed 's/^/#   /'
	if [ -n "$input" ]; then
		echo "#   input: $input ($(stat -c %s "$input") bytes)"
		echo "#   replay: $B/tests/fuzz/fuzz-$t $input"
		echo "#   keep it: cp $input tests/fuzz/regress/$t/<what-it-caught>"
		if [ "$(stat -c %s "$input")" -le 4096 ]; then
			echo "#   base64 (for a CI log: base64 -d > FILE):"
			base64 -w 76 "$input" | sed 's/^/#     /'
		fi
	else
		echo "#   no input saved; the log: $log"
		tail -5 "$log" | sed 's/^/#   /'
	fi
}

running=0
for t in "${TARGETS[@]}"; do
	if [ ! -d tests/fuzz/corpus/"$t" ]; then
		echo "not ok - fuzz/$t (no seeds in tests/fuzz/corpus/$t)"
		fail=$((fail + 1))
		continue
	fi
	run_target "$t" &
	running=$((running + 1))
	if [ "$running" -ge "$JOBS" ]; then
		wait -n
		running=$((running - 1))
	fi
done
wait
for t in "${TARGETS[@]}"; do
	[ -d tests/fuzz/corpus/"$t" ] && report "$t"
done
echo "# fuzz: $(($(date +%s) - start)) s in all"
finish
