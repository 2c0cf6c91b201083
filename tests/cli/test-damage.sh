#!/usr/bin/env bash
# Damaged trace files: every byte that matters is checksummed, so any
# damage is reported with its offset and exit status 1, the events still
# readable are printed, and nothing is skipped silently (reliability issue,
# items 3 and 4).
. "$(dirname "$0")/lib.sh"

u16at() { od -An -t u2 -j "$2" -N 2 "$1" | tr -d ' '; }
u64at() { od -An -t u8 -j "$2" -N 8 "$1" | tr -d ' '; }

# "offset type length" of every section of a file
sections() {
	local f=$1 off=64 size len
	size=$(stat -c %s "$f")
	while [ "$off" -lt "$size" ]; do
		len=$(u64at "$f" $((off + 8)))
		echo "$off $(u16at "$f" "$off") $len"
		off=$((off + 16 + len))
	done
}

# a small recording of the example: 24 events in several chunks
small() {
	$TRAIL record -q --chunk-size 4K -e 'app:*' -o t.dat -- "$EXAMPLE"
	$TRAIL report -i t.dat >full.txt
	nevents full.txt
}

nevents() { grep -v '^#' "$1" | grep -c ': app:' || true; }
written() { sed -n 's/.*entries-written: [0-9]*\/\([0-9]*\).*/\1/p' "$1"; }

chunk_type_rewritten_is_reported() {
	local total off
	total=$(small)
	[ "$(written full.txt)" -eq "$total" ] || die "intact file: $(written full.txt) written, $total events"
	off=$(sections t.dat | awk '$2 == 6 { print $1; exit }')
	[ -n "$off" ] || die "no CHUNK section"
	# CHUNK (6) retyped as END (7), INFO (1) and PROC (4): each caught
	for t in 7 1 4; do
		cp t.dat bad.dat
		printf "\\x$(printf %02x "$t")" | dd of=bad.dat bs=1 seek="$off" conv=notrunc status=none
		expect_rc 1 $TRAIL report -i bad.dat >out.txt 2>err.txt
		has err.txt "offset $off: damaged section: checksum mismatch"
		has err.txt "events lost to damage"
		# the header still counts every event the recording wrote
		[ "$(written out.txt)" -eq "$total" ] || die "type $t: header says $(written out.txt) written, $total were"
		has out.txt "# DAMAGED:"
		n=$(nevents out.txt)
		[ "$n" -lt "$total" ] || die "type $t: all $total events printed from a damaged file"
		# nothing invented: every event printed is in the intact report
		grep -v '^#' out.txt | sort >a.txt
		grep -v '^#' full.txt | sort >b.txt
		[ -z "$(comm -23 a.txt b.txt)" ] || die "type $t: damaged read invented events"
	done
}

damaged_chunk_in_the_middle_keeps_the_rest() {
	# a chunk in the middle is lost; the chunks after it are still read
	$TRAIL record -q --chunk-size 4K -e 'app:*' -o big.dat -- "$EXAMPLE" 4 2000
	$TRAIL report -q -i big.dat >full.txt
	total=$(wc -l <full.txt)
	mapfile -t chunks < <(sections big.dat | awk '$2 == 6 { print $1 }')
	[ "${#chunks[@]}" -gt 8 ] || die "only ${#chunks[@]} chunks"
	mid=${chunks[$(( ${#chunks[@]} / 2 ))]}
	cp big.dat bad.dat
	flip4 bad.dat $((mid + 100))
	expect_rc 1 $TRAIL report -q -i bad.dat >out.txt 2>err.txt
	has err.txt "offset $mid: damaged section"
	has err.txt "reading resumes at offset"
	n=$(wc -l <out.txt)
	# one 4 KiB chunk holds well under 200 events
	[ "$n" -lt "$total" ] && [ "$n" -gt $((total - 200)) ] || die "$n of $total events read"
	sed -E 's/[0-9]+\.[0-9]+: //' out.txt | sort >a.txt
	sed -E 's/[0-9]+\.[0-9]+: //' full.txt | sort >b.txt
	[ -z "$(comm -23 a.txt b.txt)" ] || die "damaged read invented events"
}

zeros_after_the_end() {
	total=$(small)
	size=$(stat -c %s t.dat)
	cp t.dat z.dat
	head -c 1048576 /dev/zero >>z.dat
	expect_rc 1 $TRAIL report -i z.dat >out.txt 2>err.txt
	has err.txt "offset $size: 1048576 bytes after the END section"
	[ "$(nevents out.txt)" -eq "$total" ] || die "events lost"
	# 50 GiB of sparse zeros: refused at once, not read (the timeout is a
	# guard against reading them, which took minutes)
	cp t.dat s.dat
	truncate -s +50G s.dat
	rc=0
	timeout 20 $TRAIL report -q -i s.dat >out.txt 2>err.txt || rc=$?
	[ "$rc" -eq 1 ] || die "exit $rc"
	has err.txt "offset $size: 53687091200 bytes after the END section"
}

no_end_then_a_hole() {
	# a recording cut short, then a sparse gap: the gap is stepped over
	total=$(small)
	end=$(sections t.dat | awk '$2 == 7 { print $1 }')
	head -c "$end" t.dat >h.dat
	truncate -s +20G h.dat
	rc=0
	timeout 20 $TRAIL report -q -i h.dat >out.txt 2>err.txt || rc=$?
	[ "$rc" -eq 1 ] || die "exit $rc"
	has err.txt "offset $end: damaged section"
	has err.txt "no readable section"
	[ "$(wc -l <out.txt)" -eq "$total" ] || die "events lost"
}

t chunk_type_rewritten_is_reported chunk_type_rewritten_is_reported
t damaged_chunk_in_the_middle_keeps_the_rest damaged_chunk_in_the_middle_keeps_the_rest
t zeros_after_the_end zeros_after_the_end
t no_end_then_a_hole no_end_then_a_hole
