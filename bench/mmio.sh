#!/usr/bin/env bash
# bench/mmio.sh [BUILD_DIR] - a traced MMIO access's cost (bench_mmio.c: 4
# threads, each N 32-bit stores and N loads to a memfd mapped shared,
# timed in the threads), median of RUNS runs [min..max], ns per access
# (the threads' times summed, over the accesses):
#   untraced
#   bare fault  the program's own SIGSEGV handler stepping over each
#               access of its protected region (BENCH_BARE=1): the floor
#   trail       record --mmio memfd:trail-mmio-bench (a fault, the
#               decode and emulation, a record, each access)
# and the records written against the accesses made (the last run).
#
#   RUNS=5 BENCH_N=100000 bench/mmio.sh build
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
export BENCH_N=${BENCH_N:-100000} BENCH_THREADS=${BENCH_THREADS:-4}
TRAIL=$BUILD/trail
PROG=$BUILD/bench/bench_mmio

. "$(dirname "$0")/lib.sh"
bench_scratch

declare -a un ba tr
for r in $(seq "$RUNS"); do
	un+=("$(field ns_per_access "$("$PROG")")")
	ba+=("$(field ns_per_access "$(BENCH_BARE=1 "$PROG")")")
	l=$("${PIN_REC[@]}" "$TRAIL" record -q --mmio memfd:trail-mmio-bench -o "$TMP/m.dat" -- "$PROG")
	tr+=("$(field ns_per_access "$l")")
	made=$(field accesses "$l")
done
n=$("$TRAIL" report -i "$TMP/m.dat" --count 2>/dev/null | awk '$1 == "mmio:rw" {print $2}')
lost=$("$TRAIL" report -i "$TMP/m.dat" 2>/dev/null | sed -n 's/^# entries-in-buffer\/entries-written: \([0-9]*\)\/\([0-9]*\).*/\2 \1/p' | awk '{print $1 - $2}')
printf 'an MMIO access, ns (median [min..max] of %s runs, %s threads x 2N, N=%s, %s)\n' \
	"$RUNS" "$BENCH_THREADS" "$BENCH_N" "$(rec_where)"
printf '  %-10s %s\n' untraced "$(stats "${un[@]}")"
printf '  %-10s %s\n' "bare fault" "$(stats "${ba[@]}")"
printf '  %-10s %s   (mmio:rw records: %s of %s accesses, %s lost)\n' trail "$(stats "${tr[@]}")" \
	"${n:-0}" "${made:-?}" "${lost:-?}"
