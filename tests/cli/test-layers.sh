#!/usr/bin/env bash
# test-layers.sh - calls run one way: no two source files call each other,
# directly or round a loop (scripts/callgraph.py on the build's objects).
# Event sources call the record path, the record path the arena; the
# runtime reaches sources only through their registrations.
. "$(dirname "$0")/lib.sh"

objects() { # library target directory names (BUILD/NAME.p)
	local d
	for d in "$@"; do
		ls "$BUILD/$d.p"/*.o
	done
}

libtrail_one_way() {
	# shellcheck disable=SC2046 # one word per object file
	python3 "$SRC/scripts/callgraph.py" $(objects libtrail.so.1.0.0 libtrail-arch.a libtrail-common.a libtrail-fp.a) >graph.txt ||
		die "libtrail has call cycles: $(grep cycle: graph.txt)"
	# the edges the layering promises, seen (so the check reads real objects)
	grep -q 'src_lib_fhook.c -> .*src_lib_record.c' graph.txt || die "fhook.c does not call record.c"
	grep -q 'src_lib_fprobe.c -> .*src_lib_record.c' graph.txt || die "fprobe.c does not call record.c"
	has graph.txt 'src_lib_ftracer.c ->'
	grep -q 'src_lib_record.c ->.*src_lib_' graph.txt && die "record.c calls into libtrail: $(grep 'src_lib_record.c ->' graph.txt)"
	grep -q 'src_lib_runtime.c ->.*src_lib_f\(tracer\|hook\|objs\)' graph.txt &&
		die "runtime.c calls a source directly: $(grep 'src_lib_runtime.c ->' graph.txt)"
	true
}

tools_one_way() {
	local libs=() d
	for d in "$BUILD"/libtrail-*.a.p "$BUILD"/trail.p; do
		[ -d "$d" ] && libs+=("$(basename "${d%.p}")")
	done
	# shellcheck disable=SC2046
	python3 "$SRC/scripts/callgraph.py" $(objects "${libs[@]}") >graph.txt ||
		die "the tools have call cycles: $(grep cycle: graph.txt)"
	has graph.txt 'tools_trail_cmd-report.c ->'
}

a_cycle_is_caught() {
	# two objects calling each other: the checker must say so
	printf 'void b(void); void a(void) { b(); }\n' >a.c
	printf 'void a(void); void b(void) { a(); }\n' >b.c
	cc -c a.c -o a.o && cc -c b.c -o b.o
	if python3 "$SRC/scripts/callgraph.py" a.o b.o >out.txt; then
		die "no cycle reported: $(cat out.txt)"
	fi
	has out.txt 'cycle: a -> b -> a'
}

t libtrail_one_way libtrail_one_way
t tools_one_way tools_one_way
t a_cycle_is_caught a_cycle_is_caught
