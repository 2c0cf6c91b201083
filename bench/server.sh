#!/usr/bin/env bash
# bench/server.sh [BUILD_DIR] - a busy server with every function traced:
# redis-server built with -fpatchable-function-entry=5, driven over
# loopback by redis-benchmark, untraced, under `trail record -p
# function_graph` at the default buffer and at TRAIL_BIG (-b 256M), and under
# uftrace, in the same run. Its question is the one of the reliability
# issue: does the recorder keep up with ~200 M calls at ~190 MB/s of trace
# on a 2-vCPU machine, or do the writers find the arena full and drop?
#
#   RUNS=5 REQS=400000 CLIENTS=4 PIPELINE=16 bench/server.sh build
#
# The source is Debian's orig tarball of redis 7.0.15 (checked against its
# sha256), fetched once with curl; it and the compiled server are kept in
# ${XDG_CACHE_HOME:-~/.cache}/trail-bench/redis. Without curl or the
# network the script says SKIP and exits 0. Nothing of redis is committed.
#
# Each run starts redis-server on 127.0.0.1 at a free port, with no
# persistence (--save '' --appendonly no), waits for PING, runs
#   redis-benchmark -p PORT -n REQS -c CLIENTS -P PIPELINE -q -t TESTS
# (the redis-benchmark built from the same source), then stops the server
# with `redis-cli shutdown nosave`, so that the recorder sees its command
# exit. Per run (median [min..max] of RUNS; the four kinds interleaved):
#   bench      wall time of redis-benchmark alone (the traced server's
#              startup and patching and the recorder's final flush are
#              outside it)
#   calls      trail: funcgraph_entry + funcgraph_leaf records (`trail
#              report --count`); uftrace: its records / 2 (an entry and an
#              exit record per call)
#   lost       trail: entries-written minus entries-in-buffer of the
#              file's header (the per-stream "dropped: buffer full"); the
#              number of runs with any loss is printed beside it
#   MB/s       the trace file (uftrace: its data directory) over the bench
#              time, 1 MB = 10^6 bytes; "offered" adds what was lost
#   rec CPU    the recorder's user + system CPU seconds (trail record, or
#              the uftrace process with its writer threads), read from
#              /proc/PID/stat when the benchmark ends (children excluded)
#   srv CPU    the same for redis-server
#   cs v/nv    the recorder's voluntary / involuntary context switches
#   runq wait  seconds the recorder spent runnable but waiting for a CPU
#              during the benchmark (/proc/PID/schedstat): on two CPUs
#              shared with the server and the client, the drain's latency
#              (both of the main thread only: trail's drain; uftrace's
#              writer threads are not in them)
# Nothing is pinned by default: server, client and recorder share the two
# CPUs, as on a busy server (SERVER_CPU=N pins the server through a small
# wrapper script, which the recorders do not inherit).
# uftrace runs as in bench/real.sh: `uftrace record --no-libcall -b 4M -P .`.
# TRAIL_DEFAULT_ARGS / TRAIL_BIG choose the two trail configurations
# (default: none, i.e. the default buffer, and "-b 256M"); KEEP=1 keeps the
# last trace files in $TMPDIR for a look.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
REQS=${REQS:-400000}
CLIENTS=${CLIENTS:-4}
PIPELINE=${PIPELINE:-16}
TESTS=${TESTS:-set,get,incr,lpush,lpop}
TRAIL_DEFAULT_ARGS=${TRAIL_DEFAULT_ARGS:-}
TRAIL_BIG=${TRAIL_BIG:--b 256M}
SERVER_CPU=${SERVER_CPU:-}
TRAIL=$BUILD/trail
VER=7.0.15
URL=http://deb.debian.org/debian/pool/main/r/redis/redis_$VER.orig.tar.gz
SHA256=4b1dc4ee6d622a09fff9c6777191209750fb5e5a725ef78ea012d6eef4c22982
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/trail-bench/redis
MAKE_ARGS=(MALLOC=libc BUILD_TLS=no USE_SYSTEMD=no OPTIMIZATION=-O2
	"CFLAGS=-fpatchable-function-entry=5")

skip() { echo "server: SKIP: $*"; exit 0; }

TMP=$(mktemp -d "${TMPDIR:-/tmp}/trail-server.XXXXXX")
SRV_PID= REC_PID=
cleanup() {
	[ -n "$SRV_PID" ] && kill "$SRV_PID" 2>/dev/null
	[ -n "$REC_PID" ] && kill "$REC_PID" 2>/dev/null
	[ "${KEEP:-0}" = 1 ] || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$TRAIL" ] || skip "no $TRAIL (build first)"

# the source: the cache, else Debian's archive
TGZ=$CACHE/redis_$VER.orig.tar.gz
if [ ! -f "$TGZ" ] || ! sha256sum "$TGZ" | grep -q "^$SHA256 "; then
	command -v curl >/dev/null || skip "no curl to fetch $URL (or put the tarball in $CACHE)"
	mkdir -p "$CACHE" || skip "cannot create $CACHE"
	curl -fsSL -m 300 --retry 1 -o "$TMP/src.tgz" "$URL" 2>/dev/null ||
		skip "cannot fetch $URL (no network?); or put the tarball in $CACHE"
	sha256sum "$TMP/src.tgz" | grep -q "^$SHA256 " ||
		skip "$URL: sha256 mismatch (expected $SHA256)"
	mv "$TMP/src.tgz" "$TGZ" || skip "cannot write $TGZ"
fi

# redis-server, redis-benchmark and redis-cli, built once per compiler and
# flags (about 30 s on two CPUs)
key=$( ("${CC:-cc}" --version | head -1; echo "${MAKE_ARGS[*]}"; echo "$SHA256") | cksum | cut -d' ' -f1)
RDIR=$CACHE/build-$key
if [ ! -x "$RDIR/redis-server" ] || [ ! -x "$RDIR/redis-benchmark" ] || [ ! -x "$RDIR/redis-cli" ]; then
	echo "server: compiling redis $VER (${MAKE_ARGS[*]}) ..." >&2
	tar -xzf "$TGZ" -C "$TMP" || skip "cannot unpack $TGZ"
	make -C "$TMP/redis-$VER" -j"$(nproc)" "${MAKE_ARGS[@]}" >"$TMP/make.log" 2>&1 || {
		tail -20 "$TMP/make.log" >&2
		skip "building redis failed (log above)"
	}
	mkdir -p "$RDIR.new" &&
		cp "$TMP/redis-$VER"/src/{redis-server,redis-benchmark,redis-cli} "$RDIR.new"/ &&
		rm -rf "$RDIR" && mv "$RDIR.new" "$RDIR" || skip "cannot write $RDIR"
	rm -rf "$TMP/redis-$VER"
fi
SERVER=$RDIR/redis-server
CLI=$RDIR/redis-cli
BENCH=$RDIR/redis-benchmark

if [ -n "$SERVER_CPU" ]; then
	# a script, not taskset itself: trail refuses a command without
	# patchable entries, and the recorders must not inherit the pinning
	printf '#!/bin/sh\nexec taskset -c %s "$@"\n' "$SERVER_CPU" >"$TMP/pin"
	chmod +x "$TMP/pin"
	SRV=("$TMP/pin" "$SERVER")
else
	SRV=("$SERVER")
fi

free_port() { # a port nobody listens on (connect refused)
	local p
	for p in $(shuf -i 20000-60999 -n 64); do
		(exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null || { echo "$p"; return 0; }
	done
	return 1
}
# cpu PID -> "user+system seconds" of the process (all threads, not children)
cpu() { awk -v hz="$(getconf CLK_TCK)" '{sub(/^.*\) /, ""); printf "%.2f", ($12 + $13) / hz}' "/proc/$1/stat" 2>/dev/null; }
ctxsw() { awk '/^voluntary_ctxt_switches/ {v = $2} /^nonvoluntary_ctxt_switches/ {n = $2} END {print v "/" n}' "/proc/$1/status" 2>/dev/null; }
runq() { cut -d' ' -f2 "/proc/$1/schedstat" 2>/dev/null || echo 0; }
now() { date +%s.%N; }

# one PREFIX...: starts PREFIX... redis-server on a free port, runs the
# benchmark, stops the server; sets BT (benchmark seconds), RCPU, SCPU, CS
# and RQ (the recorder's, when PREFIX is not empty), RC (0: fine)
one() {
	local port t0 t1 i pid q0=0
	BT=FAIL RCPU=- SCPU=- CS=- RQ=- RC=1
	port=$(free_port) || { echo "server: no free port" >&2; return; }
	"$@" "${SRV[@]}" --port "$port" --bind 127.0.0.1 --save '' --appendonly no \
		--daemonize no --logfile "$TMP/redis.log" >"$TMP/rec.out" 2>"$TMP/rec.err" &
	pid=$!
	[ $# -gt 0 ] && REC_PID=$pid
	for i in $(seq 200); do # a traced server patches itself first
		"$CLI" -p "$port" ping 2>/dev/null | grep -q PONG && break
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	SRV_PID=$("$CLI" -p "$port" info server 2>/dev/null | sed -n 's/^process_id:\([0-9]*\).*/\1/p')
	if [ -z "$SRV_PID" ]; then
		echo "server: redis-server did not start: $* ${SRV[*]}" >&2
		head -5 "$TMP/rec.err" "$TMP/redis.log" >&2
		kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
		SRV_PID= REC_PID=
		return
	fi
	[ -n "$REC_PID" ] && q0=$(runq "$REC_PID")
	t0=$(now)
	"$BENCH" -p "$port" -n "$REQS" -c "$CLIENTS" -P "$PIPELINE" -q -t "$TESTS" \
		>"$TMP/bench.out" 2>&1
	i=$?
	t1=$(now)
	SCPU=$(cpu "$SRV_PID")
	if [ -n "$REC_PID" ]; then
		RCPU=$(cpu "$REC_PID")
		CS=$(ctxsw "$REC_PID")
		RQ=$(awk -v a="$q0" -v b="$(runq "$REC_PID")" 'BEGIN{printf "%.2f", (b-a)/1e9}')
	fi
	"$CLI" -p "$port" shutdown nosave >/dev/null 2>&1
	for _ in $(seq 600); do # the recorder writes what is left, then exits
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$SRV_PID" 2>/dev/null && kill "$SRV_PID" 2>/dev/null
	wait "$pid" 2>/dev/null
	SRV_PID= REC_PID=
	if [ $i -ne 0 ] || [ "$(tr '\r' '\n' <"$TMP/bench.out" | grep -c 'requests per second')" -eq 0 ]; then
		echo "server: redis-benchmark failed (exit $i): $(tr '\r' '\n' <"$TMP/bench.out" | tail -2)" >&2
		return
	fi
	BT=$(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.2f", b-a}')
	RC=0
}

median() { printf '%s\n' "$@" | sort -g | awk '{v[NR]=$1} END { print (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2 }'; }
stats() { # FORMAT values... -> "median [min..max]"
	local f=$1
	shift
	printf '%s\n' "$@" | sort -g | awk -v f="$f" '{v[NR]=$1} END {
		m = (NR % 2) ? v[(NR+1)/2] : (v[NR/2] + v[NR/2+1]) / 2
		printf f " [" f ".." f "]", m, v[1], v[NR] }'
}
nonzero() { local n=0 v; for v in "$@"; do [ "$v" != 0 ] && n=$((n + 1)); done; echo $n; }

# trail KIND ARGS...: one traced run, its figures appended to the KIND arrays
trail_run() {
	local kind=$1 w inbuf written calls bytes
	shift
	one "$TRAIL" record -q "$@" -p function_graph -o "$TMP/$kind.dat" --
	[ $RC = 0 ] || { eval "${kind}_fail=1"; return; }
	w=$("$TRAIL" report -i "$TMP/$kind.dat" --stat 2>/dev/null |
		sed -n 's/.*entries-written: \([0-9]*\)\/\([0-9]*\).*/\1 \2/p' | head -1)
	read -r inbuf written <<<"${w:-0 0}"
	calls=$("$TRAIL" report -q -i "$TMP/$kind.dat" --count 2>/dev/null |
		awk '/funcgraph_(entry|leaf) / {s += $2} END {print s + 0}')
	bytes=$(stat -c %s "$TMP/$kind.dat")
	eval "${kind}_t+=($BT) ${kind}_calls+=($calls) ${kind}_lost+=($((written - inbuf)))"
	eval "${kind}_mbs+=($(awk -v s="$bytes" -v t="$BT" 'BEGIN{printf "%.1f", s/t/1e6}'))"
	eval "${kind}_off+=($(awk -v s="$bytes" -v t="$BT" -v i="$inbuf" -v w="$written" \
		'BEGIN{printf "%.1f", (i ? s*w/i : s)/t/1e6}'))"
	eval "${kind}_rcpu+=($RCPU) ${kind}_scpu+=($SCPU) ${kind}_cs+=($CS) ${kind}_rq+=($RQ)"
	printf '  run %d %-8s bench %6.2f s  calls %11d  lost %10d  %6.1f MB/s  rec CPU %6.2f s  runq wait %6.2f s  srv CPU %6.2f s  cs %s  (load %s)\n' \
		"$r" "$kind" "$BT" "$calls" "$((written - inbuf))" \
		"$(awk -v s="$bytes" -v t="$BT" 'BEGIN{printf "%.1f", s/t/1e6}')" "$RCPU" "$RQ" "$SCPU" "$CS" \
		"$(cut -d' ' -f1 /proc/loadavg)" >&2
	[ "${KEEP:-0}" = 1 ] || rm -f "$TMP/$kind.dat"
}

have_uf=0
command -v uftrace >/dev/null && have_uf=1
declare -a plain_t plain_scpu dflt_t dflt_calls dflt_lost dflt_mbs dflt_off dflt_rcpu dflt_scpu dflt_cs dflt_rq \
	big_t big_calls big_lost big_mbs big_off big_rcpu big_scpu big_cs big_rq \
	uf_t uf_calls uf_lost uf_mbs uf_rcpu uf_scpu uf_cs uf_rq
dflt_fail=0 big_fail=0 uf_fail=0
loads=()
echo "server: redis $VER, redis-benchmark -n $REQS -c $CLIENTS -P $PIPELINE -t $TESTS, $RUNS runs" >&2
for r in $(seq "$RUNS"); do
	loads+=("$(cut -d' ' -f1 /proc/loadavg)")
	one
	if [ $RC = 0 ]; then
		plain_t+=("$BT") plain_scpu+=("$SCPU")
		printf '  run %d %-8s bench %6.2f s  srv CPU %6.2f s  (load %s)\n' "$r" untraced "$BT" "$SCPU" \
			"$(cut -d' ' -f1 /proc/loadavg)" >&2
	fi
	# shellcheck disable=SC2086
	trail_run dflt $TRAIL_DEFAULT_ARGS
	# shellcheck disable=SC2086
	trail_run big $TRAIL_BIG
	if [ $have_uf = 1 ]; then
		one uftrace record --no-libcall -b 4M -P . -d "$TMP/uf"
		if [ $RC = 0 ]; then
			recs=$(find "$TMP/uf" -name '[0-9]*.dat' -printf '%s\n' | awk '{s += $1} END {print int(s / 16)}')
			ub=$(du -sb "$TMP/uf" | cut -f1)
			ul=$(grep -ho 'LOST [0-9]*' "$TMP/rec.err" | awk '{s += $2} END {print s + 0}')
			uf_t+=("$BT") uf_calls+=("$((recs / 2))") uf_lost+=("$ul") uf_rcpu+=("$RCPU")
			uf_scpu+=("$SCPU") uf_cs+=("$CS") uf_rq+=("$RQ")
			uf_mbs+=("$(awk -v s="$ub" -v t="$BT" 'BEGIN{printf "%.1f", s/t/1e6}')")
			printf '  run %d %-8s bench %6.2f s  calls %11d  lost %10d  %6.1f MB/s  rec CPU %6.2f s  runq wait %6.2f s  srv CPU %6.2f s  cs %s  (load %s)\n' \
				"$r" uftrace "$BT" "$((recs / 2))" "$ul" "${uf_mbs[-1]}" "$RCPU" "$RQ" "$SCPU" "$CS" \
				"$(cut -d' ' -f1 /proc/loadavg)" >&2
		else
			uf_fail=1
		fi
		rm -rf "$TMP/uf"
	fi
done

[ ${#plain_t[@]} -gt 0 ] || { echo "server: FAILED, the untraced server did not run"; exit 1; }
base=$(median "${plain_t[@]}")
echo "server: redis $VER, every function traced (-fpatchable-function-entry=5), redis-benchmark" \
	"-n $REQS -c $CLIENTS -P $PIPELINE -t $TESTS, $RUNS runs; load at each run's start: ${loads[*]}"
echo "  wall clock of the benchmark, median [min..max]; $(nproc) CPUs, $(uname -r)"
row() { # LABEL KIND
	local k=$1
	local -n t=${k}_t calls=${k}_calls lost=${k}_lost mbs=${k}_mbs rcpu=${k}_rcpu scpu=${k}_scpu cs=${k}_cs rq=${k}_rq
	if [ ${#t[@]} -eq 0 ]; then
		printf '  %-22s FAILED\n' "$2"
		return
	fi
	printf '  %-22s %s (%.1fx)\n' "$2" "$(stats '%.2f' "${t[@]}") s" "$(awk -v a="$(median "${t[@]}")" -v b="$base" 'BEGIN{print a/b}')"
	printf '  %-22s   calls %s M   lost %s M (%d/%d runs lost)   %s MB/s\n' "" \
		"$(stats '%.1f' "$(printf '%s\n' "${calls[@]}" | awk '{print $1/1e6}')")" \
		"$(stats '%.2f' "$(printf '%s\n' "${lost[@]}" | awk '{print $1/1e6}')")" \
		"$(nonzero "${lost[@]}")" "${#t[@]}" "$(stats '%.0f' "${mbs[@]}")"
	printf '  %-22s   recorder CPU %s s   runq wait %s s   server CPU %s s\n' "" \
		"$(stats '%.2f' "${rcpu[@]}")" "$(stats '%.2f' "${rq[@]}")" "$(stats '%.2f' "${scpu[@]}")"
	printf '  %-22s   recorder context switches vol/invol per run: %s\n' "" "${cs[*]}"
}
printf '  %-22s %s   server CPU %s s\n' "untraced" "$(stats '%.2f' "${plain_t[@]}") s" "$(stats '%.2f' "${plain_scpu[@]}")"
row dflt "trail, default buffer${TRAIL_DEFAULT_ARGS:+ ($TRAIL_DEFAULT_ARGS)}"
[ ${#dflt_off[@]} -gt 0 ] && printf '  %-22s   offered (file + lost) %s MB/s\n' "" "$(stats '%.0f' "${dflt_off[@]}")"
row big "trail $TRAIL_BIG"
if [ $have_uf = 1 ]; then
	row uf "uftrace $(uftrace --version | awk '{print $2}')"
	[ ${#uf_t[@]} -gt 0 ] && [ ${#dflt_t[@]} -gt 0 ] &&
		printf '  %-22s %s\n' "ratio uftrace / trail" \
			"$(awk -v u="$(median "${uf_t[@]}")" -v t="$(median "${big_t[@]}")" -v b="$base" \
				'BEGIN{printf "%.1fx the overhead of trail -b 256M (%.1fx the time)", (u-b)/(t-b), u/t}')"
else
	echo "  (uftrace not installed: scripts/install-deps.sh --bench for the comparison)"
fi
