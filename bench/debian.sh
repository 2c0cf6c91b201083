#!/usr/bin/env bash
# bench/debian.sh [BUILD_DIR] - Debian's own binaries, as apt installs
# them (stripped, no patchable entries), under trail and uftrace 0.13 in
# the same run:
#
#  1. python3.11 running a small workload (below) with every function of
#     the executable traced, named and unnamed: wall time untraced, under
#     `trail record -p function_graph` and under `uftrace record --force
#     -P .`; each tool's own count of calls (trail's entry + leaf records;
#     uftrace's report), and the overhead per traced call, (traced -
#     untraced) / calls.
#  2. `python3.11 -c pass` the same way: start-up, trail's with its cache
#     of decoded entries cold (a fresh registry) and warm.
#  3. sqlite3 (its work in libsqlite3.so.0): three functions inside the
#     library, sqlite3_step, sqlite3_prepare_v2 and sqlite3_finalize,
#     counted by trail (-l NAME@libsqlite3), by uftrace (-P NAME@libsqlite3.so.0)
#     and, where tracefs is writable, by the kernel's uprobes; wall times.
#
#   RUNS=5 bench/debian.sh build
#
# Times are wall clock around the whole command, median of RUNS
# [min..max]. Packages missing (python3.11, sqlite3, uftrace): that part
# says SKIP.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
. "$(dirname "$0")/lib.sh"
bench_scratch
TRAIL=$BUILD/trail
PY=/usr/bin/python3.11
SQLITE=/usr/bin/sqlite3
cd "$TMP" || exit 1

# seconds COMMAND...: the wall time of one run, stdout/stderr dropped
seconds() {
	local t0 t1
	t0=$EPOCHREALTIME
	"$@" >/dev/null 2>&1
	t1=$EPOCHREALTIME
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }'
}
# runs NAME COMMAND...: RUNS times, "median [min..max]" into $NAME
runs() {
	local name=$1 v=()
	shift
	for _ in $(seq "$RUNS"); do v+=("$("$@")"); done
	printf -v "$name" '%s' "$(stats "${v[@]}")"
}
first() { echo "${1%% *}"; }
# trail's calls in a function_graph file: entries + leaves
trail_calls() {
	"$TRAIL" report -i "$1" --count 2>/dev/null |
		awk '$1 == "ftrace:funcgraph_entry" || $1 == "ftrace:funcgraph_leaf" { n += $2 } END { print n + 0 }'
}
uftrace_calls() {
	uftrace report -d "$1" -f call --no-pager 2>/dev/null | awk 'NR > 2 { n += $1 } END { print n + 0 }'
}
per_call() { # traced untraced calls -> ns
	awk -v t="$1" -v u="$2" -v n="$3" 'BEGIN { printf "%.0f\n", n ? (t - u) * 1e9 / n : 0 }'
}

echo "# bench/debian.sh: $(uname -r), $(nproc) CPUs, RUNS=$RUNS, $(date -u +%F)"

cat >w.py <<'EOF'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
d = {}
for i in range(20000):
    d[str(i)] = [i, i * 2, "x" * (i % 7)]
s = sorted(d.values(), key=lambda v: v[1])
print(fib(20), len(s))
EOF

if [ -x "$PY" ] && command -v uftrace >/dev/null; then
	for what in "w.py" "-c pass"; do
		# shellcheck disable=SC2086
		runs base seconds $PY $what
		"$TRAIL" record -q -p function_graph -o t.dat -- $PY $what >/dev/null # (the cache, warm)
		runs tr seconds "$TRAIL" record -q -p function_graph -o t.dat -- $PY $what
		tcalls=$(trail_calls t.dat)
		runs uf seconds uftrace record --force -P . -d u.d $PY $what
		ucalls=$(uftrace_calls u.d)
		echo "python3.11 $what, every function:"
		echo "  untraced        $base s"
		echo "  trail           $tr s   $tcalls calls   $(per_call "$(first "$tr")" "$(first "$base")" "$tcalls") ns/call over untraced"
		echo "  uftrace         $uf s   $ucalls calls   $(per_call "$(first "$uf")" "$(first "$base")" "$ucalls") ns/call over untraced"
		echo "  RESULT python what=${what// /_} base=$(first "$base") trail=$(first "$tr") trail_calls=$tcalls uftrace=$(first "$uf") uftrace_calls=$ucalls"
	done
	cold=()
	for _ in $(seq "$RUNS"); do
		rm -f "$TRAIL_REGISTRY"/.sites-*
		cold+=("$(seconds "$TRAIL" record -q -p function_graph -o t.dat -- $PY -c pass)")
	done
	echo "  trail, cache cold $(stats "${cold[@]}") s (python3.11 -c pass)"
else
	echo "python3.11: SKIP: needs $PY and uftrace (scripts/install-deps.sh --bench)"
fi

cat >q.sql <<'EOF'
CREATE TABLE t(a INTEGER, b TEXT);
WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c WHERE x<20000) INSERT INTO t SELECT x, 'v'||x FROM c;
SELECT count(*), sum(a) FROM t WHERE b LIKE 'v1%';
CREATE INDEX i ON t(b);
SELECT a FROM t WHERE b = 'v77';
UPDATE t SET a = a + 1 WHERE a % 3 = 0;
SELECT sum(a) FROM t;
EOF
FN="sqlite3_step sqlite3_prepare_v2 sqlite3_finalize"
if [ -x "$SQLITE" ] && command -v uftrace >/dev/null && ldd "$SQLITE" | grep -q libsqlite3; then
	lib=$(readlink -f "$(ldd "$SQLITE" | awk '/libsqlite3/ {print $3}')")
	sq() { rm -f db; "$@" "$SQLITE" db <q.sql; }
	runs base seconds sq
	# shellcheck disable=SC2046
	runs tr seconds sq "$TRAIL" record -q -p function_graph $(printf -- "-l %s@libsqlite3 " $FN) -o s.dat --
	# shellcheck disable=SC2046
	runs uf seconds sq uftrace record --force $(printf -- "-P ^%s\$@libsqlite3.so.0 " $FN) -d s.d
	"$TRAIL" report -q -i s.dat >s.txt
	uftrace report -d s.d -f call --no-pager 2>/dev/null >u.txt
	echo "sqlite3 (Debian's), 3 functions inside libsqlite3.so.0:"
	echo "  untraced $base s, trail $tr s, uftrace $uf s"
	tr_=/sys/kernel/tracing
	up=""
	if [ -w $tr_/uprobe_events ]; then
		echo >$tr_/uprobe_events
		for f in $FN; do
			off=$(readelf -sW --dyn-syms "$lib" | awk -v f=$f '$8 == f && $4 == "FUNC" {print $2; exit}')
			echo "p:trailbench/$f $lib:0x$off" >>$tr_/uprobe_events
		done
		echo 1 >$tr_/events/trailbench/enable
		sq >/dev/null
		echo 0 >$tr_/events/trailbench/enable
		up=$(cat $tr_/uprobe_profile)
		echo >$tr_/uprobe_events
	fi
	for f in $FN; do
		t=$(grep -cE " $f\(\)( \{|;)\$" s.txt)
		u=$(awk -v f=$f '$NF == f {print $1}' u.txt)
		k=$(awk -v f=$f '$2 == f {print $3}' <<<"$up")
		echo "  $f: trail $t, uftrace ${u:-0}, uprobes ${k:-n/a}"
		echo "  RESULT sqlite fn=$f trail=$t uftrace=${u:-0} uprobes=${k:-na}"
	done
else
	echo "sqlite3: SKIP: needs Debian's $SQLITE (libsqlite3.so.0) and uftrace"
fi
