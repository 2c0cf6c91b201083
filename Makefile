# The two commands of the README, and a few conveniences. The real build is
# Meson (meson.build); this file only drives it.
#
#   make demo    install deps, build, record + report the bundled example
#   make check   install deps, build, run the whole test suite (also under
#                ASan/UBSan, then the fuzz targets FUZZ_SECONDS each, 60 by
#                default, 0 to skip), ending with "N passed, N failed"

BUILD ?= build

.PHONY: all deps demo check test test-asan fuzz bench clean

all: $(BUILD)/build.ninja
	ninja -C $(BUILD)

$(BUILD)/build.ninja:
	meson setup $(BUILD)

deps:
	scripts/install-deps.sh

demo: deps all
	cd $(BUILD) && ./trail record -e 'app:*' -o example.dat -- examples/example
	cd $(BUILD) && ./trail report -i example.dat

test: all
	tests/run.sh $(BUILD)

build-asan/build.ninja:
	meson setup build-asan -Db_sanitize=address,undefined -Db_lundef=false

test-asan: build-asan/build.ninja
	ninja -C build-asan
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
		tests/run.sh build-asan

check:
	scripts/install-deps.sh --sanitizers
	scripts/check.sh

fuzz:
	scripts/install-deps.sh --sanitizers
	scripts/fuzz.sh

bench: deps all
	scripts/install-deps.sh --bench
	bench/run.sh $(BUILD)
	bench/real.sh $(BUILD)
	bench/debian.sh $(BUILD)
	bench/probe.sh $(BUILD)
	bench/attach.sh $(BUILD)
	bench/fork.sh $(BUILD)

clean:
	rm -rf build build-asan build-tsan build-fuzz
