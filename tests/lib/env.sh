# tests/lib/env.sh - the environment the tests run in, sourced by
# tests/run.sh (the whole suite) and tests/lib/run-one.sh (one script, as
# `meson test` runs it).
#
# trail_test_env BUILD exports
#   TRAIL_BUILD, TRAIL_SRC   the build and source trees
#   TRAIL                    the trail binary of that build
#   TRAIL_REGISTRY           a private registry, so parallel runs and a
#                            user's own sessions never mix
#   TRAIL_TEST_TMP           a scratch directory
# and removes the last two when the calling shell exits.
trail_test_env() { # build dir
	TRAIL_BUILD=$(cd "$1" 2>/dev/null && pwd) || { echo "no build dir $1"; return 2; }
	TRAIL_SRC=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
	TRAIL=$TRAIL_BUILD/trail
	TRAIL_REGISTRY=$(mktemp -d /tmp/trail-reg.XXXXXX)
	TRAIL_TEST_TMP=$(mktemp -d /tmp/trail-test.XXXXXX)
	chmod 700 "$TRAIL_REGISTRY"
	export TRAIL_BUILD TRAIL_SRC TRAIL TRAIL_REGISTRY TRAIL_TEST_TMP
	trap 'rm -rf "$TRAIL_REGISTRY" "$TRAIL_TEST_TMP"' EXIT
}
