#!/usr/bin/env bash
# record --relay URL: the recording sent to LTTng's relay daemon
# (lttng-relayd 2.13, Debian's lttng-tools) once written, as an LTTng
# consumer sends a session: started here on 127.0.0.1 with ports of its
# own, the relay stores it as it stores LTTng's (-o DIR: HOST/SESSION-DATE/
# trail/ with its index/), and babeltrace2 reads the same events there as
# in trail's own CTF export of the file; two recordings are two sessions;
# a relay that is not there, or a URL that is no URL, is said (the local
# file kept).
. "$(dirname "$0")/lib.sh"

export TRAIL_REGISTRY=$TMP/reg
PROG=$BUILD/tests/cli/coreprog

# a free TCP port from 20000 up, 3 in a row
free_ports() {
	local p
	for p in $(seq $((20000 + RANDOM % 20000)) 7 60000); do
		if ! (exec 3<>/dev/tcp/127.0.0.1/$p) 2>/dev/null &&
		   ! (exec 3<>/dev/tcp/127.0.0.1/$((p + 1))) 2>/dev/null &&
		   ! (exec 3<>/dev/tcp/127.0.0.1/$((p + 2))) 2>/dev/null; then
			echo $p
			return
		fi
	done
}

start_relay() { # dir port
	lttng-relayd -C tcp://127.0.0.1:$2 -D tcp://127.0.0.1:$(($2 + 1)) \
		-L tcp://127.0.0.1:$(($2 + 2)) -o "$1" >relayd.log 2>&1 &
	RELAYD=$!
	wait_for "(exec 3<>/dev/tcp/127.0.0.1/$2) 2>/dev/null" || die "relayd never listened: $(cat relayd.log)"
}
stop_relay() { kill "$RELAYD" 2>/dev/null; wait "$RELAYD" 2>/dev/null || true; }

# babeltrace2's lines without their times
events() { babeltrace2 "$1" 2>/dev/null | sed 's/^\[[^]]*\] ([^)]*) //'; }

to_relay() {
	command -v lttng-relayd >/dev/null || die "lttng-relayd missing (lttng-tools: scripts/install-deps.sh installs it)"
	fresh_registry
	local port
	port=$(free_ports)
	start_relay "$TMP/relay" "$port"
	$TRAIL record -q -e 'app:*' -o r.dat --relay "net://127.0.0.1:$port:$((port + 1))" \
		-- "$PROG" 100 hold /dev/null >out.txt 2>err.txt || { stop_relay; die "$(cat err.txt)"; }
	# a second recording, a second session (many hosts, one relay)
	$TRAIL record -q -e 'app:tick' -o r2.dat --relay "tcp://127.0.0.1:$port:$((port + 1))" \
		-- "$PROG" 20 hold /dev/null >/dev/null 2>>err.txt || { stop_relay; die "$(cat err.txt)"; }
	stop_relay
	local s
	s=$(ls -d "$TMP"/relay/*/trail-coreprog-* | head -1)
	[ "$(ls -d "$TMP"/relay/*/trail-coreprog-* | wc -l)" = 2 ] || die "sessions: $(ls -R "$TMP/relay" | head)"
	[ -f "$s/trail/metadata" ] || die "no metadata: $(ls -R "$TMP/relay" | head -20)"
	ls "$s"/trail/index/*.idx >/dev/null || die "no index files"
	$TRAIL export -i r.dat --format ctf -o local
	events local >a.txt
	[ "$(grep -c 'app:t' a.txt)" = 150 ] || die "local: $(grep -c 'app:t' a.txt)"
	local match=0
	for s in "$TMP"/relay/*/trail-coreprog-*; do
		events "$s" >b.txt
		if cmp -s a.txt b.txt; then match=$((match + 1)); fi
	done
	[ $match = 1 ] || die "no session on the relay reads as the file's export"
	# the relay's index: a 16-byte header (magic c1f1dcc1, v1.1), 72 a packet
	local idx
	idx=$(ls "$s"/trail/index/*.idx | head -1)
	[ "$(od -An -tx1 -N4 "$idx" | tr -d ' \n')" = c1f1dcc1 ] || die "index magic: $(od -An -tx1 -N16 "$idx")"
	[ $((($(stat -c %s "$idx") - 16) % 72)) = 0 ] || die "index size $(stat -c %s "$idx")"
}

# a live reader (babeltrace2's lttng-live) attached to the session while
# the command runs gets every record once the recording ends
live_reader() {
	command -v lttng-relayd >/dev/null || die "lttng-relayd missing"
	fresh_registry
	local port url rp bp
	port=$(free_ports)
	start_relay "$TMP/live" "$port"
	rm -f go
	$TRAIL record -q -e 'app:*' -o l.dat --relay "net://127.0.0.1:$port:$((port + 1))" \
		-- "$PROG" 100 hold go >out.txt 2>err.txt &
	rp=$!
	wait_for "grep -q ready out.txt" || { stop_relay; die "never ready: $(cat err.txt)"; }
	# the session is listed from the start
	url=$(timeout 20 babeltrace2 --input-format=lttng-live "net://127.0.0.1:$((port + 2))" 2>/dev/null |
		awk '/trail-coreprog-/ { print $1; exit }')
	[ -n "$url" ] || { stop_relay; kill $rp; die "the session is not listed"; }
	timeout 60 babeltrace2 --input-format=lttng-live "$url" >live.txt 2>live.err &
	bp=$!
	sleep 1
	touch go
	wait $rp || { stop_relay; die "record: $(cat err.txt)"; }
	wait $bp || true
	stop_relay
	[ "$(grep -c 'app:t' live.txt)" = 150 ] || die "live: $(grep -c 'app:t' live.txt) records: $(head -3 live.err)"
}

bad_relays() {
	fresh_registry
	local port
	port=$(free_ports)
	# nobody there: said before the command runs (its session is opened
	# first), nothing recorded, an older file left as it was
	echo old >k.dat
	expect_rc 1 $TRAIL record -q -e 'app:*' -o k.dat --relay "net://127.0.0.1:$port:$((port + 1))" \
		-- "$PROG" 10 hold /dev/null >out.txt 2>err.txt
	has err.txt "no relay answers on 127.0.0.1:$port (control)"
	hasnt out.txt ready
	[ "$(cat k.dat)" = old ] || die "k.dat changed"
	# URLs that are none
	expect_rc 2 $TRAIL record -q -e 'app:*' -o k.dat --relay "net://127.0.0.1:99999" -- "$PROG" 1 2>err.txt
	has err.txt "a port is a number from 1 to 65535"
	[ "$(caret_col err.txt)" = 16 ] || die "$(cat err.txt)"
	expect_rc 2 $TRAIL record -q -e 'app:*' -o k.dat --relay "http://x" -- "$PROG" 1 2>err.txt
	has err.txt "a relay URL is net://HOST[:CTRL_PORT[:DATA_PORT]]"
	expect_rc 2 $TRAIL record -q -e 'app:*' -o k.dat --relay "net6://[::1" -- "$PROG" 1 2>err.txt
	has err.txt "an IPv6 address without its ']'"
	# a stream has no file to send
	$TRAIL record -q -e 'app:*' -o - --relay "net://127.0.0.1" -- "$PROG" 1 >/dev/null 2>err.txt || true
	has err.txt "--relay sends the trace file once written"
}

t to_relay to_relay
t live_reader live_reader
t bad_relays bad_relays
