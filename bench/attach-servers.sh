#!/usr/bin/env bash
# bench/attach-servers.sh [BUILD_DIR] - trail record -P on real servers as
# Debian ships them, while a client loads them over loopback:
#
#   redis-server   (jemalloc's background thread blocks every signal),
#                  loaded by redis-benchmark -c 8 -t set,get
#   nginx          a worker running as nobody (root attaches through a
#                  proxy of that user), loaded by wrk -c 8
#
# Each is attached RUNS times with every function of its executable traced
# (-p function_graph, libtrail loaded by injection the first time), kept
# 1 s, and detached. Per server (median [min..max] of RUNS):
#   first event  ms from the start of `trail record -P` to the first event
#                recorded (its CLOCK_MONOTONIC timestamp, -C mono)
#   detach       ms from SIGINT to trail's exit (the process unpatched,
#                the last events drained, the file closed)
#   functions    hooked, as trail says
# and, over the whole run, the client's failed requests (redis: INFO's
# total_error_replies; wrk: non-2xx responses and socket errors).
#
#   RUNS=5 bench/attach-servers.sh build
#
# Needs root (the nginx worker is another user's) and redis-server,
# redis-benchmark, nginx, wrk (make bench installs them); says SKIP for
# what is missing.
set -u
BUILD=$(cd "${1:-build}" && pwd)
RUNS=${RUNS:-5}
TRAIL=$BUILD/trail
TMP=$(mktemp -d /tmp/trail-servers.XXXXXX)
chmod 755 "$TMP"
export TRAIL_REGISTRY=$TMP/reg
mkdir -m 700 "$TRAIL_REGISTRY"
pids=()
trap 'for p in "${pids[@]}"; do kill $p 2>/dev/null; done; rm -rf "$TMP"' EXIT
. "$(dirname "$0")/lib.sh"

# libtrail where another user can load it
cp -L "$BUILD/libtrail.so.1" "$TMP/libtrail.so.1"
chmod 755 "$TMP/libtrail.so.1"
export TRAIL_LIBRARY=$TMP/libtrail.so.1

# one attach to pid: "first_ms detach_ms functions"
once() { # pid
	python3 - "$TRAIL" "$1" "$TMP/a.dat" <<'PY'
import re, signal, subprocess, sys, time
trail, pid, out = sys.argv[1:]
t0 = time.clock_gettime(time.CLOCK_MONOTONIC)
p = subprocess.Popen([trail, "record", "-C", "mono", "-p", "function_graph", "-o", out,
                      "-P", pid], stderr=subprocess.PIPE, text=True)
time.sleep(0.2)
deadline = t0 + 30
while time.clock_gettime(time.CLOCK_MONOTONIC) < deadline:
    if f"trail-arena" in open(f"/proc/{pid}/maps").read():
        break
    time.sleep(0.01)
time.sleep(1)
t1 = time.clock_gettime(time.CLOCK_MONOTONIC)
p.send_signal(signal.SIGINT)
err = p.communicate()[1]
t2 = time.clock_gettime(time.CLOCK_MONOTONIC)
m = re.search(r"(\d+) functions? hooked", err)
first = None
rep = subprocess.run([trail, "report", "-q", "-O", "fgraph:abstime", "-i", out],
                     capture_output=True, text=True).stdout
for l in rep.splitlines():
    f = l.split()
    if len(f) > 2 and f[1] == "|" and f[0].replace(".", "").isdigit():
        first = (float(f[0]) - t0) * 1000
        break
print("%.1f %.1f %s" % (first if first is not None else -1, (t2 - t1) * 1000,
                        m.group(1) if m else "?"))
if p.returncode:
    sys.stderr.write(err)
PY
}

report() { # name, results...
	local name=$1; shift
	local f=() d=() n=
	for r in "$@"; do
		set -- $r
		f+=("$1"); d+=("$2"); n=$3
	done
	printf '  %-46s first event %s ms, detach %s ms, %s functions\n' "$name" \
		"$(stats "${f[@]}")" "$(stats "${d[@]}")" "$n"
}

echo "trail record -P -p function_graph on servers under load, $RUNS attaches each (median [min..max])"

if command -v redis-server >/dev/null && command -v redis-benchmark >/dev/null; then
	port=$((20000 + RANDOM % 20000))
	redis-server --port $port --bind 127.0.0.1 --save '' --appendonly no >/dev/null 2>&1 &
	rs=$!; pids+=($rs)
	for _ in $(seq 100); do redis-cli -p $port ping 2>/dev/null | grep -q PONG && break; sleep 0.05; done
	redis-benchmark -p $port -n 100000000 -c 8 -t set,get -q >/dev/null 2>&1 &
	pids+=($!)
	res=()
	for _ in $(seq "$RUNS"); do res+=("$(once $rs)"); done
	report "redis-server 7.0 (redis-benchmark -c 8)" "${res[@]}"
	printf '    failed requests: %s\n' "$(redis-cli -p $port info stats | sed -n 's/^total_error_replies:\([0-9]*\).*/\1/p')"
	redis-cli -p $port shutdown nosave >/dev/null 2>&1
else
	echo "  redis-server: SKIP (redis-server/redis-benchmark not installed)"
fi

if [ "$(id -u)" = 0 ] && command -v nginx >/dev/null && command -v wrk >/dev/null; then
	port=$((20000 + RANDOM % 20000))
	mkdir -p "$TMP/nginx/logs" "$TMP/www"
	echo hello >"$TMP/www/index.html"
	chmod -R a+rX "$TMP/www"
	cat >"$TMP/nginx/nginx.conf" <<EOF
user nobody nogroup;
worker_processes 1;
pid $TMP/nginx/nginx.pid;
error_log $TMP/nginx/logs/error.log;
events { worker_connections 256; }
http {
	access_log off;
	server { listen 127.0.0.1:$port; root $TMP/www; }
}
EOF
	nginx -c "$TMP/nginx/nginx.conf" -p "$TMP/nginx" -g 'daemon off;' &
	pids+=($!)
	sleep 0.5
	worker=$(pgrep -u nobody -f 'nginx: worker' | head -1)
	wrk -t 2 -c 8 -d 600s --timeout 10s --latency "http://127.0.0.1:$port/" >"$TMP/wrk.txt" 2>&1 &
	wk=$!; pids+=($wk)
	res=()
	for _ in $(seq "$RUNS"); do res+=("$(once $worker)"); done
	kill -INT $wk; wait $wk 2>/dev/null
	report "nginx 1.22 worker as nobody (wrk -c 8)" "${res[@]}"
	printf '    failed requests: %s; latency max %s, 99%% %s\n' \
		"$(awk '/Non-2xx|Socket errors/ { s = s $0 "; " } END { print (s == "" ? "0" : s) }' "$TMP/wrk.txt")" \
		"$(awk '$1 == "Latency" { print $4; exit }' "$TMP/wrk.txt")" "$(awk '$1 == "99%" { print $2 }' "$TMP/wrk.txt")"
else
	echo "  nginx: SKIP (needs root, nginx and wrk)"
fi
