#!/usr/bin/env bash
# bench/export.sh [BUILD_DIR] - how fast trail's views read a trace: report
# (text, --count, --summary) and every export format, on one function_graph
# trace of bench_calltree (nested calls, two threads, a static event every
# 1024 requests).
#
#   RUNS=3 BENCH_N=2000000 bench/export.sh build
#
# For each view: records/s (records of the file / wall time of the
# command, median of RUNS [min..max]), bytes of output per record beside
# the input's, and the peak resident memory (GNU time's maxrss). The
# summary's time is also given as a ratio to report --count's (the issue
# asks for at most 1.5x). EXPORT_BIG=GB records a trace of about that many
# gigabytes first and exports it once per format, for the peak memory of
# a file larger than the page cache would like (it takes minutes).
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-3}
N=${BENCH_N:-2000000}
TRAIL=$BUILD/trail
TMP=$(mktemp -d /tmp/trail-export-bench.XXXXXX)
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
trap 'rm -rf "$TMP"' EXIT

stats() { # values... -> "median [min..max]"
	printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf "%.2f [%.2f..%.2f]", m, v[1], v[NR] }'
}
median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }

record() { # N file
	BENCH_N=$1 "$TRAIL" record -q -e 'calltree:*' -p function_graph -o "$2" \
		"$BUILD/bench/bench_calltree" >/dev/null || exit 1
}
records_of() { # file
	"$TRAIL" report --stat -i "$1" | sed -n 's/.*entries-in-buffer\/entries-written: \([0-9]*\)\/.*/\1/p'
}

# one view, timed: NAME OUTPUT-PATH (or -) COMMAND... -> "secs kib bytes"
timed() {
	local out=$1; shift
	/usr/bin/time -f '%e %M' -o "$TMP/time" "$@" >"$TMP/stdout" 2>/dev/null
	local b
	if [ "$out" = - ]; then b=$(stat -c %s "$TMP/stdout")
	elif [ -d "$out" ]; then b=$(du -sb "$out" | cut -f1)
	else b=$(stat -c %s "$out"); fi
	echo "$(cat "$TMP/time") $b"
}

views() { # the views, one a line: name, output, argv (after trail)
	echo "report --count|-|report --count -i IN"
	echo "report (text)|-|report -q -i IN"
	echo "report --summary|-|report --summary -i IN"
	"$TRAIL" export --help | sed -n '/^Formats:/,/^$/s/^  \([a-z]\+\) .*/\1/p' | while read -r f; do
		case $f in
		ctf) echo "export ctf|OUTD|export -q --force --format ctf -i IN -o OUTD" ;;
		*) echo "export $f|OUTF|export -q --force --format $f -i IN -o OUTF" ;;
		esac
	done
}

run_views() { # input runs
	local in=$1 runs=$2 recs insz
	recs=$(records_of "$in")
	insz=$(stat -c %s "$in")
	printf '%s records, %s bytes (%.2f bytes/record)\n\n' "$recs" "$insz" \
		"$(awk -v a="$insz" -v b="$recs" 'BEGIN{print a/b}')"
	printf '%-20s %-28s %14s %12s\n' view "M records/s" "bytes/record" "peak RSS"
	views | while IFS='|' read -r name out argv; do
		local -a rate=() rss=() bytes=()
		for _ in $(seq "$runs"); do
			rm -rf "$TMP/out.d" "$TMP/out.f"
			o=$out; o=${o/OUTD/$TMP/out.d}; o=${o/OUTF/$TMP/out.f}
			a=${argv//IN/$in}; a=${a//OUTD/$TMP/out.d}; a=${a//OUTF/$TMP/out.f}
			# shellcheck disable=SC2086
			read -r secs kib b < <(timed "$o" "$TRAIL" $a)
			rate+=("$(awk -v r="$recs" -v s="$secs" 'BEGIN{printf "%.2f", (s > 0 ? r/s/1e6 : 0)}')")
			rss+=("$kib")
			bytes+=("$(awk -v a="$b" -v r="$recs" 'BEGIN{printf "%.2f", a/r}')")
		done
		printf '%-20s %-28s %14s %9s MiB\n' "$name" "$(stats "${rate[@]}")" \
			"$(median "${bytes[@]}")" "$(awk -v k="$(median "${rss[@]}")" 'BEGIN{printf "%.1f", k/1024}')"
	done
}

echo "# bench/export.sh: $(nproc) CPUs, RUNS=$RUNS, BENCH_N=$N requests of bench_calltree"
record "$N" "$TMP/in.dat"
run_views "$TMP/in.dat" "$RUNS" | tee "$TMP/table"
c=$(awk '$1 == "report" && $2 == "--count" {print $3}' "$TMP/table")
s=$(awk '$1 == "report" && $2 == "--summary" {print $3}' "$TMP/table")
awk -v c="$c" -v s="$s" 'BEGIN{ if (s > 0) printf "\nreport --summary takes %.2fx the time of report --count\n", c/s }'
if [ -n "${EXPORT_BIG:-}" ]; then
	big=$(awk -v g="$EXPORT_BIG" -v n="$N" -v sz="$(stat -c %s "$TMP/in.dat")" \
		'BEGIN{printf "%d", g * 1073741824 / sz * n}')
	rm -f "$TMP/in.dat"
	echo; echo "# EXPORT_BIG=$EXPORT_BIG: $big requests"
	record "$big" "$TMP/big.dat"
	run_views "$TMP/big.dat" 1
fi
