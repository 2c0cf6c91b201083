#!/usr/bin/env bash
# The recorder trusts nothing in shared memory: a traced process that
# scribbles over the session arena neither crashes nor hangs trail record,
# and the file it writes is readable (damage, if any, reported by offset).
# The arena is a sealed memfd: nobody can shrink or grow it.
. "$(dirname "$0")/lib.sh"
HOSTILE=$BUILD/tests/cli/hostile

survives() { # mode
	local rc=0
	timeout 60 $TRAIL record -q --chunk-size 4K -b 256K -e 'hostile:*' -o h.dat -- "$HOSTILE" "$1" >out.txt 2>err.txt || rc=$?
	[ "$rc" -eq 0 ] || die "trail record exit $rc: $(cat err.txt)"
	rc=0
	timeout 60 $TRAIL report -i h.dat >rep.txt 2>rerr.txt || rc=$?
	[ "$rc" -le 1 ] || die "trail report exit $rc: $(tail -5 rerr.txt)"
	# the events drained before the attack are all there, in order: a
	# prefix of the first 2000, short of at most the chunk (~100 events)
	# the thread was still filling when the arena was scribbled
	grep -o 'i=[0-9]*' rep.txt | sed 's/i=//' | head -2000 |
		awk '$1 != NR - 1 { exit } { n = NR } END { print n + 0 }' >kept.txt
	[ "$(cat kept.txt)" -ge 1800 ] || die "only $(cat kept.txt) events of before the attack kept"
}

sealed() {
	$TRAIL record -q -e 'hostile:*' -o h.dat -- "$HOSTILE" truncate >out.txt
	has out.txt "truncate: Operation not permitted"
	has out.txt "grow: Operation not permitted"
	[ "$($TRAIL report -q -i h.dat | wc -l)" -eq 3000 ] || die "events lost"
}

# the flight recorder, whose keeper takes over the chunks and slots of
# threads that end (src/recorder/keep.c), attacked while it does: no
# crash, no hang, a readable file (nothing is drained before the end, so
# what survives is not checked)
survives_overwrite() { # mode
	local rc=0
	timeout 60 $TRAIL record -q --overwrite --chunk-size 4K -b 256K -e 'hostile:*' -o h.dat -- \
		"$HOSTILE" "$1" threads >out.txt 2>err.txt || rc=$?
	[ "$rc" -eq 0 ] || die "trail record exit $rc: $(cat err.txt)"
	rc=0
	timeout 60 $TRAIL report -i h.dat >rep.txt 2>rerr.txt || rc=$?
	[ "$rc" -le 1 ] || die "trail report exit $rc: $(tail -5 rerr.txt)"
}

for m in ctab chunks streams events header random; do
	t "hostile_$m" survives "$m"
	t "hostile_overwrite_$m" survives_overwrite "$m"
done
t arena_is_sealed sealed
