# bench/lib.sh - sourced by the benchmark scripts: reading RESULT lines,
# medians, and where the recorder runs.
#
# The benchmark process pins itself to BENCH_CPU (bench-common.h). The
# recorder it is traced by (trail record, uftrace record) is pinned to
# another CPU, REC_CPU: left to the scheduler, it sometimes shares
# BENCH_CPU with the loop, whose time then includes the drain's copy of
# every byte recorded (seen here: 51 ns instead of 32 per entry+return
# probe pair, in one run out of two). A machine with one CPU pins nothing.

# FIELD LINE -> the value of FIELD=... in a RESULT line
field() { sed -n "s/.* $1=\([^ ]*\).*/\1/p" <<<" $2"; }
# values... -> "median [min..max]"
stats() {
	printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%.2f [%.2f..%.2f]", m, v[1], v[NR] }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

# REC_CPU: the first CPU this shell may run on other than BENCH_CPU;
# PIN_REC: the command prefix that runs a recorder there (empty if none)
REC_CPU=
PIN_REC=()
if [ "${BENCH_CPU:--1}" -ge 0 ] 2>/dev/null && command -v taskset >/dev/null; then
	for c in $(taskset -cp $$ 2>/dev/null | sed 's/.*: //' | tr ',' ' '); do
		case $c in
		*-*) c=$(seq "${c%-*}" "${c#*-}") ;;
		esac
		for x in $c; do
			if [ "$x" != "$BENCH_CPU" ]; then REC_CPU=$x; break 2; fi
		done
	done
	[ -n "$REC_CPU" ] && PIN_REC=(taskset -c "$REC_CPU")
fi
# "recorder on CPU N" for a report's header
rec_where() { [ -n "$REC_CPU" ] && echo "recorder on CPU $REC_CPU" || echo "recorder not pinned"; }

# bench_scratch: a scratch directory in $TMP, removed on exit, holding the
# run's own registry (TRAIL_REGISTRY), so the runs see no other process
bench_scratch() {
	TMP=$(mktemp -d /tmp/trail-bench.XXXXXX)
	export TRAIL_REGISTRY=$TMP/reg
	mkdir -m 700 "$TRAIL_REGISTRY"
	trap 'rm -rf "$TMP"' EXIT
}
