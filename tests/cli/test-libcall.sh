#!/usr/bin/env bash
# Library calls: a program's calls into shared libraries traced through
# its PLT (src/common/pltscan.h, libtrail's fsites.c/fplt.c), without a
# rebuild. tests/cli/libcall/app.c is built here lazily bound (PIE), bound
# at start under full RELRO, not PIE, with patchable entries, and with
# -fno-plt (calls through GOT slots); each build must give the same exact
# counts under the same callers, and print what it prints untraced (the
# -fno-plt build's getpid slot, which also gives getpid's address, is
# never hooked: the address the program compares stays the C library's). A library with two versions of one function
# checks that a slot still lazily bound is bound as the loader would (the
# version the program was linked against, not the default one). Then
# selection (-l, --no-libcall, list -f), a C++ exception thrown and caught
# through hooked library calls, and attaching to a running process: the
# GOT slot hooked while attached and its value put back after.
. "$(dirname "$0")/lib.sh"

CC=${CC:-cc}
S=$SRC/tests/cli/libcall
N=5

build_fixtures() {
	$CC -O2 "$S/app.c" -o app-lazy -lpthread
	$CC -O2 "$S/app.c" -o app-now -Wl,-z,now -Wl,-z,relro -lpthread
	$CC -O2 -no-pie -fno-pie "$S/app.c" -o app-nopie -lpthread
	$CC -O2 -fpatchable-function-entry=5 "$S/app.c" -o app-pfe -lpthread
	$CC -O2 -fno-plt "$S/app.c" -o app-noplt -lpthread
	objdump -d app-noplt | grep -q 'call  *\*0x[0-9a-f]*(%rip) *# [0-9a-f]* <malloc@' ||
		die "app-noplt does not call malloc through its GOT"
	readelf -d app-now | grep -q 'BIND_NOW' || die "app-now is not bound at start"
	# linked against V1 alone, run with V1 and V2 (the default)
	$CC -shared -fPIC -Wl,--version-script="$S/v1.map" "$S/ver.c" -o libver.so
	$CC -O2 -DWITH_VER "$S/app.c" -o app-ver -L. -lver -Wl,-rpath,'$ORIGIN' -lpthread
	$CC -O2 -fno-plt -DWITH_VER "$S/app.c" -o app-ver-noplt -L. -lver -Wl,-rpath,'$ORIGIN' -lpthread
	$CC -shared -fPIC -DBOTH -Wl,--version-script="$S/v2.map" "$S/ver.c" -o libver.so
	[ "$(./app-ver 1 | tail -1)" = "ver=1" ] || die "the loader gives $(./app-ver 1 | tail -1)"
	$CC -O2 -fPIC -shared -fno-plt -DLIB "$S/gotlib.c" -o libgot.so
	$CC -O2 "$S/gotlib.c" -o app-gotlib -L. -lgot -Wl,-rpath,'$ORIGIN'
}

# how many times the graph shows NAME called
calls() { # file name
	grep -c " ${2}();\$" "$1" || true
}

# The same counts, nested the same, in each build.
graph_counts() {
	local v want
	for v in lazy now nopie pfe noplt; do
		./app-$v $N >plain.txt
		$TRAIL record -q -p function_graph -o g-$v.dat -- ./app-$v $N >out.txt
		diff -u plain.txt out.txt
		has out.txt "getpid same, called"
		$TRAIL report -q -i g-$v.dat >g-$v.txt
		for f in malloc free strlen snprintf pthread_mutex_lock pthread_mutex_unlock; do
			[ "$(calls g-$v.txt $f)" = $N ] || die "$v: $f called $(calls g-$v.txt $f) times, wanted $N"
		done
		[ "$(calls g-$v.txt longjmp)" = 1 ] || die "$v: longjmp: $(cat g-$v.txt)"
		# under their callers: the first call in each step() is malloc
		grep -A1 ' step() {$' g-$v.txt | grep -c ' malloc();$' >n.txt || true
		[ "$(cat n.txt)" = $N ] || die "$v: malloc not under step: $(head -30 g-$v.txt)"
		grep -A1 ' locked() {$' g-$v.txt | grep -q ' pthread_mutex_lock();$' ||
			die "$v: pthread_mutex_lock not under locked"
		# the longjmp left its call: jumper returns, main goes on
		grep -A2 ' jumper() {$' g-$v.txt | grep -q '} /\* jumper \*/' || die "$v: jumper: $(cat g-$v.txt)"
		tail -1 g-$v.txt | grep -q '} /\* main \*/' || die "$v: main not closed: $(tail -3 g-$v.txt)"
		# setjmp returns twice: never hooked
		hasnt g-$v.txt "setjmp"
	done
	hasnt g-noplt.txt " getpid();"
	# the printf at the end is a call of main's, in every build
	for v in lazy now nopie pfe noplt; do
		grep -B1 ' } /\* main \*/' g-$v.txt | grep -q 'printf();' || die "$v: printf: $(tail -3 g-$v.txt)"
	done
}

# A slot the loader had not bound yet is bound by libtrail first: to the
# version the program asks for, not the default one.
versioned() {
	local v
	for v in ver ver-noplt; do
		$TRAIL record -q -p function_graph -o v.dat -- ./app-$v 2 >out.txt
		has out.txt "ver=1"
		$TRAIL report -q -i v.dat >v.txt
		[ "$(calls v.txt ver)" = 1 ] || die "app-$v: ver called $(calls v.txt ver) times: $(cat v.txt)"
	done
}

# A library's own calls through its GOT (-fno-plt), with --nest-libcall:
# each under the library function that makes it; without, none of them.
library_got_calls() {
	local f
	$TRAIL record -q -p function_graph --nest-libcall -o l.dat -- ./app-gotlib $N >out.txt
	has out.txt "total=$((5 * N))"
	$TRAIL report -q -i l.dat >l.txt
	for f in strdup strlen free; do
		[ "$(grep -A3 ' lf() {$' l.txt | grep -c " $f();\$")" = $N ] ||
			die "$f under lf: $(head -20 l.txt)"
	done
	$TRAIL record -q -p function_graph -o l.dat -- ./app-gotlib $N >/dev/null
	$TRAIL report -q -i l.dat >l.txt
	[ "$(calls l.txt lf)" = $N ] || die "lf: $(head -20 l.txt)"
	hasnt l.txt "strdup"
}

selection() {
	$TRAIL list -f ./app-lazy >l.txt
	has l.txt "malloc [library call]"
	has l.txt "pthread_mutex_lock [library call]"
	has l.txt "step"
	hasnt l.txt "setjmp"
	$TRAIL list -f ./app-lazy 'pthread_*' >l.txt
	[ "$(grep -c 'library call' l.txt)" = 2 ] || die "list -f glob: $(cat l.txt)"
	# (and, a glob given, the C library's own functions: test-libfuncs.sh)
	has l.txt "pthread_mutex_lock [libc.so.6]"
	# -l names a library call as any function
	$TRAIL record -q -p function -l malloc -l free -o f.dat -- ./app-lazy $N >/dev/null
	$TRAIL report -q -i f.dat >f.txt
	[ "$(grep -c ': malloc <-step$' f.txt)" = $N ] || die "malloc <-step: $(cat f.txt)"
	[ "$(grep -c ': free <-' f.txt)" = $N ] || die "free: $(cat f.txt)"
	[ "$(wc -l <f.txt)" -ge $((2 * N)) ] || die "$(cat f.txt)"
	grep -vE ': (malloc|free) <-' f.txt | grep -q ' <-' && die "others: $(cat f.txt)"
	# --no-libcall: the program's own functions only
	$TRAIL record -q -p function_graph --no-libcall -o n.dat -- ./app-lazy $N >/dev/null
	$TRAIL report -q -i n.dat >n.txt
	has n.txt "step();"
	hasnt n.txt "malloc"
	hasnt n.txt "printf"
	# -n leaves one out
	$TRAIL record -q -p function_graph -n malloc -o m.dat -- ./app-lazy $N >/dev/null
	$TRAIL report -q -i m.dat >m.txt
	hasnt m.txt "malloc();"
	has m.txt "free();"
	# a name no program calls is refused as before
	expect_rc 1 $TRAIL record -q -p function -l no_such_call -o x.dat -- ./app-lazy 2>err.txt
	has err.txt "no function matches '-l no_such_call'"
	expect_rc 2 $TRAIL record -q --no-libcall -e 'x:*' -o x.dat -- ./app-lazy 2>err.txt
	has err.txt "--no-libcall limits a tracer"
}

# Thrown and caught through hooked calls (__cxa_throw, __cxa_begin_catch
# reached through the PLT): the same result as untraced, every frame closed.
cxx_exceptions() {
	local X=$BUILD/tests/cli/ftrace-cxx
	"$X" >plain.txt
	# (an ASan build's constructors and its runtime's calls left out)
	$TRAIL record -q -p function_graph -n '_sub_[ID]_*' -n '__asan_*' -o c.dat -- "$X" >out.txt
	diff -u plain.txt out.txt
	$TRAIL report -q -i c.dat >c.txt
	[ "$(calls c.txt __cxa_throw)" = 2 ] || die "__cxa_throw: $(cat c.txt)"
	[ "$(calls c.txt __cxa_begin_catch)" = 3 ] || die "__cxa_begin_catch: $(cat c.txt)"
	[ "$(calls c.txt __cxa_end_catch)" = 3 ] || die "__cxa_end_catch: $(cat c.txt)"
	[ "$(calls c.txt __cxa_rethrow)" = 1 ] || die "__cxa_rethrow: $(cat c.txt)"
	has c.txt "operator delete(void*);"
	grep -q '^ *[0-9]) .*|  } /\* main \*/$' c.txt || die "main not closed: $(tail -3 c.txt)"
}

# the GOT slot of name in process pid (8 bytes, hex): its PLT's, or with
# -fno-plt its GOT's
got_slot() { # pid exe name
	local off
	off=$(readelf -rW "$2" | awk -v n="$3" '($3 == "R_X86_64_JUMP_SLOT" || $3 == "R_X86_64_GLOB_DAT") && $5 ~ "^" n "@" {print $1}')
	[ -n "$off" ] || die "no slot for $3 in $2"
	python3 - "$1" "$off" "$(readlink -f "$2")" <<'PY'
import sys
pid, off, exe = sys.argv[1], int(sys.argv[2], 16), sys.argv[3]
base = None
with open(f"/proc/{pid}/maps") as m:
    for line in m:
        f = line.split()
        if len(f) >= 6 and f[5] == exe and int(f[2], 16) == 0:
            base = int(f[0].split("-")[0], 16)
            break
with open(f"/proc/{pid}/mem", "rb") as mem:
    mem.seek(base + off)
    print(mem.read(8).hex())
PY
}

# A running process, libtrail loaded into it: its calls hooked while
# attached, the slot's value put back after.
attach_running() {
	local v
	for v in lazy noplt; do
		env -u LD_PRELOAD ./app-$v 1 spin >ready.txt &
		local sp=$! rp
		wait_for "grep -q ready ready.txt" || die "never ready"
		before=$(got_slot $sp app-$v malloc)
		# (FUNC@PROGRAM: the program's calls at its PLT, not libc's malloc)
		$TRAIL record -o a.dat -p function -l "malloc@app-$v" -l 'free@app*' -P $sp 2>err.txt &
		rp=$!
		wait_for "grep -q 'attached to process' err.txt" || die "no attach: $(cat err.txt)"
		during=$(got_slot $sp app-$v malloc)
		sleep 0.3
		stop_rec $rp
		after=$(got_slot $sp app-$v malloc)
		[ "$during" != "$before" ] || die "$v: the slot was not hooked ($before)"
		[ "$after" = "$before" ] || die "$v: the slot is $after after detach, was $before"
		kill -0 $sp || die "$v: the process died"
		kill $sp
		$TRAIL report -q -i a.dat >a.txt
		grep -q ': malloc <-step$' a.txt || die "$v: no malloc: $(head -5 a.txt)"
		grep -q ': free <-' a.txt || die "$v: no free: $(head -5 a.txt)"
	done
}

# Forked children (an unmodified program, no patchable entries): every
# child's calls recorded under its own pid, the parent's under its own,
# by each tracer, with and without library calls; the file's accounting
# closed. And what a fork costs the child: its start time read from /proc
# once (its process slot and its registry entry used to read it each, ~80
# us a read in a VM; bench/fork.sh has the figures).
pid_of() { sed -E 's/^ *[0-9]+\) +//; s/^ *[^ ]+-([0-9]+) .*/\1/'; }
forked_children() {
	local n=5 mode parent kids
	$CC -O2 "$S/forks.c" -o forks
	for mode in "function" "function --no-libcall" "function_graph"; do
		# shellcheck disable=SC2086 # the mode is its options
		$TRAIL record -q -p $mode -o k.dat -- ./forks $n >out.txt
		has out.txt "forked $n"
		$TRAIL report -i k.dat --stat >stat.txt
		hasnt stat.txt "/?"
		$TRAIL report -q -O fgraph:proc -i k.dat >k.txt
		if [ "${mode%% *}" = function ]; then
			parent=$(grep ': main <-' k.txt | pid_of | sort -u)
			kids=$(grep ': child_work <-main$' k.txt | pid_of | sort -u)
		else
			parent=$(grep -E '\|  main\(\)( \{|;)$' k.txt | pid_of | sort -u)
			kids=$(grep -E '\|    child_work\(\)( \{|;)$' k.txt | pid_of | sort -u)
		fi
		[ "$(wc -w <<<"$parent")" = 1 ] || die "$mode: parent: '$parent': $(head -20 k.txt)"
		[ "$(wc -w <<<"$kids")" = $n ] || die "$mode: $(wc -w <<<"$kids") children recorded: $(head -40 k.txt)"
		grep -qw "$parent" <<<"$kids" && die "$mode: the parent's pid among the children's"
		for k in $kids; do
			grep -E "^ *([0-9]+\) +)?forks-$k " k.txt >c.txt
			[ "$(grep -c 'child_work' c.txt)" -ge 1 ] || die "$mode: child $k: $(cat c.txt)"
			if [ "${mode#*--}" = no-libcall ]; then
				hasnt c.txt "strlen"
			else
				[ "$(grep -c 'strlen' c.txt)" = 1 ] || die "$mode: child $k, strlen: $(cat c.txt)"
				[ "$(grep -c 'snprintf' c.txt)" = 1 ] || die "$mode: child $k, snprintf: $(cat c.txt)"
			fi
		done
	done
	if command -v strace >/dev/null; then
		# (LeakSanitizer cannot run under ptrace: an ASan build's leak
		# check is left out of this run)
		ASAN_OPTIONS=${ASAN_OPTIONS:-}:detect_leaks=0 strace -f -qq -e trace=openat -o opens.txt \
			$TRAIL record -q -p function -o s.dat -- ./forks 3 >/dev/null
		for k in $(sed -n 's/^\([0-9]*\) .*"\/proc\/\([0-9]*\)\/stat".*/\1 \2/p' opens.txt |
			awk '$1 == $2 {print $1}' | sort | uniq -c | awk '{print $1}'); do
			[ "$k" = 1 ] || die "a process read its /proc/PID/stat $k times: $(grep -c . opens.txt) opens"
		done
	else
		echo "(no strace: the /proc reads of a child are not counted)"
	fi
}

t build_fixtures build_fixtures
t graph_counts graph_counts
t versioned versioned
t library_got_calls library_got_calls
t selection selection
t cxx_exceptions cxx_exceptions
t attach_running attach_running
t forked_children forked_children
