#!/usr/bin/env bash
# trail list -f: the functions a program and its libraries, or a running
# process, can have traced (patchable function entries), from the fixtures
# in tests/cli/funcs built here at -O0 and -O2. Expected listings come from
# nm: the program's functions then the library's, each by address.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
CXX=${CXX:-c++}
FX=$SRC/tests/cli/funcs
PFE=-fpatchable-function-entry=5

build() { # -O level -> $TMP/O<level>/{prog,libfn.so.1}
	mkdir -p "O$1"
	$CC "-O$1" $PFE -fPIC -shared -Wl,-soname,libfn.so.1 "$FX/libfn.c" -o "O$1/libfn.so.1"
	$CC "-O$1" $PFE "$FX/prog.c" "O$1/libfn.so.1" -Wl,-rpath,'$ORIGIN' -o "O$1/prog"
}

build_fixtures() {
	build 0
	build 2
	$CXX -O2 $PFE "$FX/cxx.cc" -o cxx
	printf 'int main(void) { return 0; }\n' >plain.c
	$CC -O2 plain.c -o plain
	$CC -O2 -fpatchable-function-entry=5,2 plain.c -o before
	# names at one address (funcs/aliases.c), and the assembly site after
	# an endbr64 with -fcf-protection
	$CC -O0 $PFE "$FX/aliases.c" -o aliases-O0
	$CC -O2 $PFE "$FX/aliases.c" -o aliases-O2
	if $CC -O2 $PFE -fcf-protection=full -DCET "$FX/aliases.c" -o aliases-cet 2>/dev/null; then
		:
	else
		cp aliases-O2 aliases-cet # no CET in this compiler: the plain build again
	fi
}

# by_addr OBJECT SUFFIX NAME... : the names, ordered by their address
by_addr() {
	local obj=$1 sfx=$2; shift 2
	nm --defined-only "$obj" |
		awk -v s="$sfx" -v want=" $* " '$2 ~ /^[tTwW]$/ && index(want, " " $3 " ") { print $1, $3 s }' |
		sort | cut -d' ' -f2-
}

# the library calls of a program (its PLT entries, as objdump names them),
# listed before its own functions (the PLT comes before .text); not those
# into libfn, whose functions have patchable entries: their own hook
# records those calls
plt_calls() { # object
	objdump -C -d -j .plt -j .plt.sec "$1" 2>/dev/null |
		sed -n 's/^[0-9a-f]* <\(.*\)@plt>:$/\1 [library call]/p' | grep -v '^fn_'
}

want_prog() { # dir
	plt_calls "$1/prog"
	by_addr "$1/prog" "" main prog_local prog_work
	by_addr "$1/libfn.so.1" " [libfn.so.1]" fn_mix fn_add fn_twice
}

list_program() { # -O level
	$TRAIL list -f "O$1/prog" >out.txt
	want_prog "O$1" >want.txt
	[ "$(grep -vc 'library call' want.txt)" -eq 6 ] || die "fixture: $(cat want.txt)"
	grep -q '^printf \[library call\]$' want.txt || die "fixture's library calls: $(cat want.txt)"
	diff -u want.txt out.txt
}
list_program_O0() { list_program 0; }
list_program_O2() { list_program 2; }

list_glob() {
	$TRAIL list -f O2/prog 'fn_*' >out.txt
	by_addr O2/libfn.so.1 " [libfn.so.1]" fn_mix fn_add fn_twice >want.txt
	diff -u want.txt out.txt
	$TRAIL list -f -- O2/prog 'prog_[lw]*' >out.txt
	by_addr O2/prog "" prog_local prog_work >want.txt
	diff -u want.txt out.txt
	$TRAIL list -f O2/prog main >out.txt
	echo main >want.txt
	diff -u want.txt out.txt
	# a program found in PATH
	PATH=$TMP/O2:$PATH $TRAIL list -f prog 'fn_tw?ce' >out.txt
	echo 'fn_twice [libfn.so.1]' >want.txt
	diff -u want.txt out.txt
}

list_cxx_demangled() {
	$TRAIL list -f ./cxx | grep -v ' \[library call\]$' >out.txt
	[ "$(wc -l <out.txt)" -eq 4 ] || die "$(cat out.txt)"
	has out.txt main
	$TRAIL list -f ./cxx 'geo::*' >out.txt
	sort out.txt >sorted.txt
	printf '%s\n' 'geo::Box<long>::get() const' 'geo::area(double, double)' \
		'geo::area(int, int)' | sort >want.txt
	diff -u want.txt sorted.txt
	# by address, as nm -C sorts them
	nm -C --defined-only cxx | sort | sed -n 's/^[0-9a-f]* [tTwW] \(geo::.*\)/\1/p' >want.txt
	diff -u want.txt out.txt
	$TRAIL list -f ./cxx 'geo::area(int*' >out.txt
	echo 'geo::area(int, int)' >want.txt
	diff -u want.txt out.txt
}

list_running_process() {
	O2/prog sleep >ready.txt &
	pid=$!
	wait_for "grep -q ready ready.txt" || die "the program never got ready"
	rc=0
	{ $TRAIL list -f -P "$pid" >out.txt && $TRAIL list -f -P "$pid" 'fn_t*' >glob.txt; } || rc=$?
	kill "$pid"; wait "$pid" 2>/dev/null || true
	[ "$rc" -eq 0 ] || die "trail list -f -P failed"
	want_prog O2 >want.txt
	diff -u want.txt out.txt
	echo 'fn_twice [libfn.so.1]' >want.txt
	diff -u want.txt glob.txt
}

no_patchable_entries() {
	# unmodified: main (xor; ret) is shorter than a jump, padding follows
	$TRAIL list -f ./plain >out.txt
	[ "$(cat out.txt)" = main ] || die "output: $(cat out.txt)"
	# stripped as well: its functions from the unwinder's table
	# (.eh_frame_hdr), named sub_<address>; main's, not _start's
	strip -o plain-stripped plain
	$TRAIL list -f ./plain-stripped >out.txt
	main=$(nm plain | awk '$3 == "main" {print $1}' | sed 's/^0*//')
	# (its 3 bytes, the padding after them unknown: a breakpoint)
	[ "$(sed 's/ \[breakpoint\]$//' out.txt)" = "sub_$main" ] || die "stripped: $(cat out.txt), main at 0x$main"
	# a stripped object of no functions at all: said so
	printf '.globl _start\n_start: hlt\n' >nofunc.s
	$CC -nostdlib -static -o nofunc nofunc.s && strip nofunc
	expect_rc 1 $TRAIL list -f ./nofunc >out.txt 2>err.txt
	[ ! -s out.txt ] || die "output: $(cat out.txt)"
	has err.txt "./nofunc has no patchable function entries: build it with -fpatchable-function-entry=5 (gcc or clang)"
	has err.txt "nothing in it can be function-traced"
	[ "$(wc -l <err.txt)" -eq 1 ] || die "more than one line: $(cat err.txt)"
	# a function that starts with a trap: neither a jump nor a breakpoint
	printf '__asm__(".text\\n.globl main\\n.type main,@function\\nmain: ud2\\n.size main, .-main\\n");\n' >trapmain.c
	$CC -O2 trapmain.c -o trapmain
	expect_rc 1 $TRAIL list -f ./trapmain >out.txt 2>err.txt
	has err.txt "1 function of this unmodified program cannot be traced (the first, main: +0x0 ud2 : a trap or halt, not code to trace)"
	has err.txt "./trapmain: none of its 1 functions can be traced"
	# a loop whose head is the entry, one whose head is inside the first
	# 5 bytes: leaves, which run whole from a copy; the same loop in a
	# function that calls cannot move: a breakpoint there, marked
	printf '%s\n' '__asm__(".text\n.globl looper\n.type looper,@function\nlooper: dec %edi\n jnz looper\n ret\n.size looper, .-looper\n");' \
		'__asm__(".text\n.globl midloop\n.type midloop,@function\nmidloop: xor %eax,%eax\n1: add %edi,%eax\n dec %edi\n jnz 1b\n ret\n.size midloop, .-midloop\n");' \
		'__asm__(".text\n.globl midcall\n.type midcall,@function\nmidcall: xor %eax,%eax\n1: add %edi,%eax\n dec %edi\n jnz 1b\n push %rax\n call looper\n pop %rax\n ret\n.size midcall, .-midcall\n");' \
		'int looper(int); int midloop(int); int midcall(int);' \
		'int main(void) { return looper(3) + midloop(3) + midcall(3); }' >loophead.c
	$CC -O2 loophead.c -o loophead
	$TRAIL list -f ./loophead >out.txt 2>err.txt
	grep -qx looper out.txt || die "looper: $(cat out.txt)"
	grep -qx midloop out.txt || die "midloop: $(cat out.txt)"
	has out.txt "midcall [breakpoint]"
	grep -qx main out.txt || die "main: $(cat out.txt)"
	has err.txt "1 function of this unmodified program cannot be entered through a jump"
	# a process: Debian's sleep(1), unmodified and stripped: its
	# functions by their addresses (sub_<address>)
	sleep 30 &
	pid=$!
	wait_for "[ \"\$(readlink /proc/$pid/exe)\" = \"\$(readlink -f \"\$(command -v sleep)\")\" ]" ||
		die "sleep never ran"
	$TRAIL list -f -P "$pid" >out.txt 2>err.txt
	kill "$pid"; wait "$pid" 2>/dev/null || true
	grep -q '^sub_[0-9a-f]*$' out.txt || die "sleep: $(head -3 out.txt) $(cat err.txt)"
	# nops before the entry (=5,2): there are entries, none can be hooked
	expect_rc 1 $TRAIL list -f ./before 2>err.txt
	has err.txt "none of its 1 patchable function entries can be hooked"
	has err.txt "-fpatchable-function-entry=5"
}

# One name per function for list -f, for libtrail's -l selection and for
# the report's SYMBOLS (src/common/symrule.h): a global alias of a static
# function, a weak alias, an unsized global entry of a local assembly
# function, a label just before a sized function.
aliases_named_alike() {
	printf '%s\n' after_label asm_entry main pub_alias strong_fn >want.txt
	for v in O0 O2 cet; do
		$TRAIL list -f ./aliases-$v | grep -v ' \[library call\]$' | sort >list.txt
		diff -u want.txt list.txt
		# every function, once: the report names them as list -f does
		$TRAIL record -q -p function --no-libcall -o all.dat -- ./aliases-$v >/dev/null
		$TRAIL report -q -i all.dat | sed -E 's/.*: ([^ ]+) <-[^ ]+$/\1/' | sort >got.txt
		diff -u want.txt got.txt
		# each name selects its function, named the same in the report
		for f in after_label asm_entry pub_alias strong_fn; do
			$TRAIL record -q -p function -l $f -o one.dat -- ./aliases-$v >/dev/null
			$TRAIL report -q -i one.dat | sed -E 's/.*: ([^ ]+ <-[^ ]+)$/\1/' >got.txt
			echo "$f <-main" >want1.txt
			diff -u want1.txt got.txt
		done
		# a losing alias names nothing list -f shows: refused alike
		for f in impl_local weak_alias asm_impl pre_label; do
			expect_rc 1 $TRAIL record -q -p function -l $f -o x.dat -- ./aliases-$v 2>err.txt
			has err.txt "no function matches '-l $f'"
		done
	done
}

# a program of another architecture (AArch64's e_machine): said, once
other_architecture() {
	cp O2/prog arm
	printf '\267\000' | dd of=arm bs=1 seek=18 conv=notrunc 2>/dev/null
	expect_rc 1 $TRAIL list -f ./arm >out.txt 2>err.txt
	[ ! -s out.txt ] || die "output: $(cat out.txt)"
	has err.txt "./arm: not an x86-64 object: trail traces x86-64 programs"
	[ "$(wc -l <err.txt)" = 1 ] || die "$(cat err.txt)"
	expect_rc 1 $TRAIL record -q --probe "p:a/b $PWD/arm:0x1000" -o x.dat -- /bin/true 2>err.txt
	has err.txt "arm: not an x86-64 object"
}

glob_matches_nothing() {
	expect_rc 1 $TRAIL list -f O2/prog 'nope*' >out.txt 2>err.txt
	[ ! -s out.txt ] || die "output: $(cat out.txt)"
	n=$(( 6 + $(plt_calls O2/prog | wc -l) ))
	has err.txt "no function matches 'nope*' (O2/prog has $n traceable functions, its unmodified libraries "
}

usage() {
	$TRAIL list --help >help.txt
	has help.txt "-f, --functions"
	has help.txt "trail list -f [-P PID | [--] PROGRAM] [GLOB]"
	expect_rc 2 $TRAIL list -f -F O2/prog
	expect_rc 2 $TRAIL list -f O2/prog 'a*' extra
	expect_rc 2 $TRAIL list -f
	expect_rc 1 $TRAIL list -f ./missing-program
	# and without -f, the events as before
	$TRAIL list O2/prog >out.txt
	[ ! -s out.txt ] || die "events of a program without any: $(cat out.txt)"
}

t build_fixtures build_fixtures
t list_program_O0 list_program_O0
t list_program_O2 list_program_O2
t list_glob list_glob
t list_cxx_demangled list_cxx_demangled
t list_running_process list_running_process
t no_patchable_entries no_patchable_entries
t aliases_named_alike aliases_named_alike
t glob_matches_nothing glob_matches_nothing
t other_architecture other_architecture
t usage usage
