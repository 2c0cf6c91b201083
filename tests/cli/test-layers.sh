#!/usr/bin/env bash
# test-layers.sh - references run one way: no two source files refer to
# each other, by a call or by data (a variable, a hook pointer), directly
# or round a loop (scripts/callgraph.py on the build's objects). Event
# sources call the record path, the record path the arena; the runtime
# reaches sources only through their registrations, the trampolines the
# hooks through the pointers they are given.
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
	grep -q 'src_lib_runtime.c ->.*src_lib_\(ftracer\|fhook\|fobjs\|fprobe\|finsn\|synthreg\)\.c' graph.txt &&
		die "runtime.c refers to a source directly: $(grep 'src_lib_runtime.c ->' graph.txt)"
	# the trampolines call the hooks through the pointers they are given
	grep -q 'src_arch_x86_64_tramp.S ->.*src_lib_' graph.txt &&
		die "tramp.S refers to libtrail: $(grep 'src_arch_x86_64_tramp.S ->' graph.txt)"
	# the process's state is the record path's, read from above
	grep -q 'src_lib_record.c ->.*src_lib_runtime.c' graph.txt &&
		die "record.c refers to runtime.c: $(grep 'src_lib_record.c ->' graph.txt)"
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
	# a hook pointer defined above (with an initializer, or not) and
	# called below is a loop too
	printf 'void low(void); static void up(void) {} void (*hook)(void) = up; void top(void) { low(); }\n' >c.c
	printf 'extern void (*hook)(void); void low(void) { hook(); }\n' >d.c
	cc -c c.c -o c.o && cc -c d.c -o d.o
	if python3 "$SRC/scripts/callgraph.py" c.o d.o >out.txt; then
		die "no cycle through data reported: $(cat out.txt)"
	fi
	has out.txt 'cycle: c -> d -> c'
	# ... and registered the other way round (the pointer below, set
	# from above), none
	printf 'extern void (*hook)(void); void low(void); static void up(void) {} void top(void) { hook = up; low(); }\n' >e.c
	printf 'void (*hook)(void); void low(void) { hook(); }\n' >f.c
	cc -c e.c -o e.o && cc -c f.c -o f.o
	python3 "$SRC/scripts/callgraph.py" e.o f.o >out.txt || die "a registration taken for a loop: $(cat out.txt)"
}

t libtrail_one_way libtrail_one_way
t tools_one_way tools_one_way
t a_cycle_is_caught a_cycle_is_caught
