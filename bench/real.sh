#!/usr/bin/env bash
# bench/real.sh [BUILD_DIR] - the slowdown of a real, call-heavy program with
# every function traced: the sqlite3 shell built with
# -fpatchable-function-entry=5, untraced, under trail function_graph and
# under uftrace, in the same run; and the same shell built without
# patchable entries (unmodified code) under trail, whose per-function call
# counts must equal the patchable build's (else the script fails).
#
#   RUNS=3 ROWS=250000 BENCH_CPU=1 TRAIL_CLOCK=auto bench/real.sh build
#
# The SQLite amalgamation comes from the npm package sqlite3 (bench/sqlite.sh
# fetches it once and keeps it, with the compiled shells, in
# ${XDG_CACHE_HOME:-~/.cache}/trail-bench). Without npm or the network the
# script says SKIP and exits 0.
#
# The workload is an in-memory database (SQL below): ROWS rows inserted by a
# recursive CTE, two indexes, aggregates, a join, ORDER BY, an UPDATE.
# sqlite3 is pinned to BENCH_CPU through a small wrapper script, both
# recorders (trail's, uftrace's writer) to another CPU (bench/lib.sh). Times are wall clock around the whole command (startup, patching
# and the final flush included), median of RUNS [min..max].
# calls = the funcgraph_entry and funcgraph_leaf records in trail's file
# (a call is an entry and an exit record, or one leaf record when nothing
# was written in between: `trail report --count`). uftrace writes two
# 16-byte records per call: its loss is twice the calls minus the records
# in its per-thread data files.
# uftrace runs as `uftrace record --no-libcall -b 4M -P . -d DIR pin sqlite3`:
# -P . patches every function with a patchable entry, --no-libcall leaves
# PLT calls alone, as trail's --no-libcall does here (the program's own
# functions on both sides; with library calls, the pin script's sh would
# also count its strchr calls, which depend on the path's length), and -b 4M because its default 128 KiB
# buffers make it about 2.5x slower on this program (one shm buffer set up
# and handed over per 128 KiB).
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
ROWS=${ROWS:-250000}
CPU=${BENCH_CPU:-1}
BENCH_CPU=$CPU . "$(dirname "$0")/lib.sh" # PIN_REC: the recorders on another CPU
[ "$(nproc)" -lt 2 ] && CPU=0
TRAIL=$BUILD/trail
TRAIL_BUF=${TRAIL_BUF:-32M}
TRAIL_CLOCK=${TRAIL_CLOCK:-auto}
CFLAGS_PLAIN="-O2 -DSQLITE_THREADSAFE=0 -DSQLITE_OMIT_LOAD_EXTENSION"
CFLAGS_SQL="$CFLAGS_PLAIN -fpatchable-function-entry=5"

skip() { echo "real program: SKIP: $*"; exit 0; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trail-real.XXXXXX")
cleanup() { rm -rf "$TMP"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$TRAIL" ] || skip "no $TRAIL (build first)"

. "$(dirname "$0")/sqlite.sh"
SQLITE=$(sqlite_shell "$CFLAGS_SQL" "$TMP" 2>"$TMP/why") || skip "$(tail -1 "$TMP/why")"
PLAIN_SQLITE=$(sqlite_shell "$CFLAGS_PLAIN" "$TMP" 2>"$TMP/why") || skip "$(tail -1 "$TMP/why")"
VER=$(sqlite_version)

cat >"$TMP/work.sql" <<EOF
CREATE TABLE t(id INTEGER PRIMARY KEY, a INTEGER, b TEXT, c REAL);
WITH RECURSIVE s(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM s WHERE i < $ROWS)
INSERT INTO t SELECT i, (i * 7919) % 1000, 'row' || (i % 977), (i % 313) * 1.5 FROM s;
CREATE INDEX t_a ON t(a);
CREATE INDEX t_b ON t(b, c);
SELECT count(*), sum(a), avg(c) FROM t;
SELECT a, count(*), max(c) FROM t GROUP BY a ORDER BY 2 DESC, 1 LIMIT 3;
SELECT b, sum(c) FROM t WHERE a BETWEEN 100 AND 300 GROUP BY b ORDER BY 2 DESC LIMIT 3;
SELECT count(*) FROM t x JOIN t y ON y.id = x.a + 1 WHERE x.id % 10 = 0;
SELECT id, upper(b) FROM t ORDER BY b DESC, id LIMIT 3;
UPDATE t SET c = c + 1 WHERE a % 7 = 0;
SELECT count(*), total(c) FROM t WHERE b LIKE 'row1%';
EOF
# a script, not taskset itself: trail refuses a command without patchable
# entries, and the recorders run elsewhere (PIN_REC)
printf '#!/bin/sh\nexec taskset -c %s "$@"\n' "$CPU" >"$TMP/pin"
chmod +x "$TMP/pin"
RUN=("$TMP/pin" "$SQLITE" :memory:)

now() { date +%s.%N; }
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }
stats() { # values... -> "median [min..max]" in seconds
	printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%6.2f s [%.2f..%.2f]", m, v[1], v[NR] }'
}
# timed CMD...: runs it on the workload, prints the seconds; output to $TMP/out
timed() {
	local t0 t1 rc
	t0=$(now)
	"$@" <"$TMP/work.sql" >"$TMP/out" 2>"$TMP/err"
	rc=$?
	t1=$(now)
	if [ $rc -ne 0 ] || ! cmp -s "$TMP/out" "$TMP/expected"; then
		echo "real program: FAILED (exit $rc or different output): $*" >&2
		head -5 "$TMP/err" >&2
		echo FAIL
		return
	fi
	awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.3f", b-a}'
}

"${RUN[@]}" <"$TMP/work.sql" >"$TMP/expected" 2>"$TMP/err" || skip "sqlite3 failed: $(head -1 "$TMP/err")"
have_uf=0
command -v uftrace >/dev/null && have_uf=1
declare -a plain tr uf un
calls=0 written=0 tlost=0 tbytes=0 ulost=0 ubytes=0 same="" ucalls=0
# per-function calls of a trace: "NAME CALLS" lines, sorted
# (named ones: the pin script's sh and taskset, stripped, are traced by
# address, which moves from run to run)
percall() { "$TRAIL" report -q -i "$1" --summary 2>/dev/null | awk 'NR > 2 && $NF !~ /^0x/ {print $NF, $5}' | sort; }
RUN_PLAIN=("$TMP/pin" "$PLAIN_SQLITE" :memory:)
for run in $(seq "$RUNS"); do
	plain+=("$(timed "${RUN[@]}")")
	tr+=("$(timed "${PIN_REC[@]}" "$TRAIL" record -q -C "$TRAIL_CLOCK" -b "$TRAIL_BUF" -p function_graph --no-libcall -o "$TMP/t.dat" -- "${RUN[@]}")")
	w=$("$TRAIL" report -i "$TMP/t.dat" --stat 2>/dev/null |
		sed -n 's/.*entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' | head -1)
	read -r inbuf written <<<"${w:-0 0}"
	tlost=$((written - inbuf))
	calls=$("$TRAIL" report -q -i "$TMP/t.dat" --count 2>/dev/null |
		awk '/funcgraph_(entry|leaf) / {s += $2} END {print s + 0}')
	tbytes=$(stat -c %s "$TMP/t.dat" 2>/dev/null || echo 0)
	# the unmodified build (entries displaced, or breakpoints): the same
	# calls of every function both builds have, checked on the first run
	un+=("$(timed "${PIN_REC[@]}" "$TRAIL" record -q -C "$TRAIL_CLOCK" -b "$TRAIL_BUF" -p function_graph --no-libcall -o "$TMP/u.dat" -- "${RUN_PLAIN[@]}")")
	if [ "$run" = 1 ]; then
		percall "$TMP/t.dat" >"$TMP/t.calls"
		percall "$TMP/u.dat" >"$TMP/u.calls"
		ucalls=$(awk '{s += $2} END {print s + 0}' "$TMP/u.calls")
		join "$TMP/t.calls" "$TMP/u.calls" >"$TMP/both"
		differ=$(awk '$2 != $3' "$TMP/both" | wc -l)
		only=$(join -v1 -v2 "$TMP/t.calls" "$TMP/u.calls" | awk '{printf "%s%s", (NR > 1 ? ", " : ""), $1}')
		same="$(wc -l <"$TMP/both") functions in both builds, $differ with other call counts"
		[ -n "$only" ] && same="$same; in one build only: $only"
		if [ "$differ" != 0 ]; then
			echo "real program: FAILED: the unmodified build's call counts differ:" >&2
			awk '$2 != $3 {print "  " $1 ": patchable " $2 ", unmodified " $3}' "$TMP/both" | head >&2
			exit 1
		fi
	fi
	rm -f "$TMP/t.dat" "$TMP/u.dat"
	if [ $have_uf = 1 ]; then
		uf+=("$(timed "${PIN_REC[@]}" uftrace record --no-libcall -b 4M -P . -d "$TMP/uf" "${RUN[@]}")")
		recs=$(find "$TMP/uf" -name '[0-9]*.dat' -printf '%s\n' | awk '{s += $1} END {print int(s / 16)}')
		ulost=$((2 * calls - recs)); [ $ulost -lt 0 ] && ulost=0
		ubytes=$(du -sb "$TMP/uf" | cut -f1)
		grep -h 'LOST' "$TMP/err" >&2
		rm -rf "$TMP/uf"
	fi
done

for v in "${plain[@]}" "${tr[@]}" "${un[@]}"; do
	[ "$v" = FAIL ] && { echo "real program: FAILED, see above"; exit 1; }
done
for v in "${uf[@]}"; do
	[ "$v" = FAIL ] && have_uf=failed
done
base=$(median "${plain[@]}")
[ "$calls" -gt 0 ] || { echo "real program: FAILED, no calls in trail's file"; exit 1; }
per() { awk -v a="$1" -v b="$2" "BEGIN{printf \"$3\", a/b}"; }
echo "real program: sqlite3 $VER shell, in-memory db, $ROWS-row insert + 2 indexes + 7 queries/updates," \
	"$RUNS runs, pinned to CPU $CPU"
echo "  $calls calls ($(per "$calls" "$(awk -v b="$base" 'BEGIN{print b*1e6}')" %.0f) M calls/s untraced)," \
	"wall clock, median [min..max]"
printf '  %-22s %s\n' "untraced" "$(stats "${plain[@]}")"
printf '  %-22s %s  (%s)   lost %s   bytes/call %s\n' "trail -C $TRAIL_CLOCK" "$(stats "${tr[@]}")" \
	"$(per "$(median "${tr[@]}")" "$base" %.1fx)" "$tlost" "$(per "$tbytes" "$calls" %.1f)"
printf '  %-22s %s  (%s)   %s calls\n' "trail, unmodified" "$(stats "${un[@]}")" \
	"$(per "$(median "${un[@]}")" "$base" %.1fx)" "$ucalls"
echo "  unmodified build (-O2, no patchable entries): $same"
if [ $have_uf = 1 ]; then
	printf '  %-22s %s  (%s)   lost %s   bytes/call %s\n' "uftrace $(uftrace --version | awk '{print $2}')" \
		"$(stats "${uf[@]}")" "$(per "$(median "${uf[@]}")" "$base" %.1fx)" "$ulost" \
		"$(per "$ubytes" "$calls" %.1f)"
	printf '  %-22s %s\n' "ratio uftrace / trail" \
		"$(awk -v u="$(median "${uf[@]}")" -v t="$(median "${tr[@]}")" -v b="$base" \
			'BEGIN{printf "%.1fx the overhead (%.1fx the time)", (u-b)/(t-b), u/t}')"
elif [ $have_uf = failed ]; then
	echo "  uftrace: FAILED (see above)"
else
	echo "  (uftrace not installed: scripts/install-deps.sh --bench for the comparison)"
fi
