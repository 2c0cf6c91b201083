#!/usr/bin/env bash
# tests/lib/run-one.sh BUILD SCRIPT [ARG...] - one test script of tests/cli
# or tests/stress in the environment tests/run.sh gives the whole suite
# (tests/lib/env.sh: a private registry and scratch directory of its own).
# This is how `meson test` runs them; the script's "ok - name" lines are
# TAP, its exit status is this one's.
set -u
. "$(dirname "$0")/env.sh"
trail_test_env "$1" || exit 2
shift
bash "$@"
