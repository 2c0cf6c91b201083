#!/usr/bin/env bash
# Install what trail needs to build and test, from Debian packages, only
# if something is missing. Used by the Makefile and by .ci/run.
#   scripts/install-deps.sh [--bench] [--sanitizers]
#   (--bench adds the peer tracers, libunwind for bench/unwind.sh, and libz3 for bench/attach.sh's
#   process of 53,000 functions; --sanitizers, what the whole test
#   suite needs: clang and its runtimes, libFuzzer included, for
#   scripts/fuzz.sh, the viewers the export tests read trail's output
#   with: babeltrace2, protoc, jq, xmllint, headless Chromium; redis-server
#   and redis-benchmark, a real server the attach tests attach to; gdb,
#   the reference stacks of test-unwind.sh and test-core.sh's gcore;
#   lttng-relayd (lttng-tools), the relay test-relay.sh sends to; sqlite3,
#   an unmodified library test-libfuncs.sh traces. make check
#   and CI use it)
set -eu
pkgs=(gcc g++ make meson ninja-build pkg-config libelf-dev libdw-dev libcapstone-dev systemtap-sdt-dev binutils procps util-linux libfuse3-dev fuse3 python3-dev libzstd-dev zstd)
if [ "${1:-}" = "--bench" ]; then
	pkgs+=(lttng-tools liblttng-ust-dev libunwind-dev babeltrace2 uftrace hyperfine jq redis-server redis-tools nginx wrk python3.11 sqlite3 libz3-4 python3-lttngust rt-tests)
fi
if [ "${1:-}" = "--sanitizers" ] || [ "${2:-}" = "--sanitizers" ]; then
	pkgs+=(clang libclang-rt-14-dev babeltrace2 lttng-tools protobuf-compiler jq libxml2-utils python3 gdb chromium redis-server redis-tools sqlite3 default-jdk-headless)
fi
missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
echo "installing: ${missing[*]}"
SUDO=; [ "$(id -u)" -ne 0 ] && SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
