#!/usr/bin/env bash
# trail record -p function_graph: calls and returns of a C and a C++ program
# at -O0 and -O2, in ftrace's function_graph layout (golden, durations and
# CPUs normalized), with the options and the hard cases: recursion 10000
# deep, longjmp, C++ exceptions, threads, signal handlers, fork, exit.
. "$(dirname "$0")/lib.sh"
# sanitizer builds add module constructors (_sub_I_*, _sub_D_*) with
# patchable entries of their own: never part of the expected output
NOSAN="-n _sub_I_* -n _sub_D_*"
P0=$BUILD/tests/cli/ftrace-prog-O0
P2=$BUILD/tests/cli/ftrace-prog-O2
CXX=$BUILD/tests/cli/ftrace-cxx

graph() { # file -> the layout with CPU and durations normalized
	$TRAIL report -q -i "$1" | sed -E 's/^ *[0-9?]+\) .* us +\|/C) D |/; s/^ *[0-9?]+\) +\|/C) - |/'
}

golden_call_tree() {
	cat >want.txt <<-'W'
	C) - |  main() {
	C) - |    handle_request() {
	C) - |      parse_header() {
	C) D |        parse_int(); /* = 7 */
	C) D |      } /* parse_header = 7 */
	C) - |      lookup() {
	C) D |        hash(); /* = 5863957 */
	C) D |      } /* lookup = 1 */
	C) D |    } /* handle_request = 8 */
	C) - |    handle_request() {
	C) - |      parse_header() {
	C) D |        parse_int(); /* = 42 */
	C) D |      } /* parse_header = 42 */
	C) - |      lookup() {
	C) D |        hash(); /* = 193509443 */
	C) D |      } /* lookup = 1 */
	C) D |    } /* handle_request = 43 */
	C) D |  } /* main = 0 */
	W
	for p in "$P0" "$P2"; do # -O2: parse_header tail-calls parse_int, same tree
		$TRAIL record -q -p function_graph --no-libcall $NOSAN --retval -o g.dat -- "$p" 2 >out.txt
		"$p" 2 >plain.txt
		diff -u plain.txt out.txt
		graph g.dat >got.txt
		diff -u want.txt got.txt
	done
	$TRAIL report -i g.dat >full.txt
	has full.txt "# tracer: function_graph"
	has full.txt "entries-in-buffer/entries-written: 22/22" # 11 calls, entry + exit
}

max_depth() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --max-graph-depth 2 -o g.dat -- "$P2" 2 >/dev/null
	graph g.dat >got.txt
	printf '%s\n' 'C) - |  main() {' 'C) D |    handle_request();' 'C) D |    handle_request();' \
		'C) D |  } /* main */' >want.txt
	diff -u want.txt got.txt
}

graph_roots() {
	$TRAIL record -q -p function_graph $NOSAN -g lookup -o g.dat -- "$P2" 2 >/dev/null
	graph g.dat | sort | uniq -c | sed 's/^ *//' >got.txt
	printf '%s\n' '2 C) - |  lookup() {' '2 C) D |    hash();' '2 C) D |  } /* lookup */' >want.txt
	diff -u want.txt got.txt
}

time_threshold() {
	# only calls longer than 1 ms: nap (3 ms) and the ones around it
	$TRAIL record -q -p function_graph --no-libcall $NOSAN --graph-time-thresh 1ms -o g.dat -- "$P2" nap >/dev/null
	$TRAIL report -q -i g.dat | sed -E 's/.*\|  //' >got.txt
	printf '%s\n' '} /* nap */' '} /* slow_request */' '} /* modes */' '} /* main */' >want.txt
	diff -u want.txt got.txt
	# and the durations say so (the '#' marker: over 1 ms; '*', '@', '$'
	# beyond 10 ms when a loaded machine stretched the nap)
	[ "$($TRAIL report -q -i g.dat | grep -Ec '[#*@$] ')" -eq 4 ] || die "durations: $(cat got.txt)"
}

recursion_10000_deep() {
	$TRAIL record -q -p function_graph $NOSAN -l deep -o g.dat -- "$P2" deep 10000 >out.txt
	has out.txt 10000
	graph g.dat >got.txt
	[ "$(grep -c 'deep() {' got.txt)" -eq 10000 ] || die "opens: $(grep -c 'deep() {' got.txt)"
	[ "$(grep -c 'deep();' got.txt)" -eq 1 ] || die "leaf"
	[ "$(grep -c '} /\* deep \*/' got.txt)" -eq 10000 ] || die "closes"
	# indentation grows 2 columns a level up to depth 50 (100 columns),
	# then stays; from depth 50 on each line ends with its depth: the k-th
	# call opened is at depth k-1, the innermost (the leaf) at 10000, and
	# the closes come back up
	awk '
		{ match($0, /\|  +/); ind = RLENGTH - 3; d = -1 }
		/deep\(\) \{/ { d = opens++ }
		/deep\(\);/ { d = opens }
		/} \/\* deep \*\// { d = --opens }
		d < 0 { print "unexpected: " $0; exit 1 }
		d < 50 && (ind != 2 * d || /\)$/) { print "depth " d ": " $0; exit 1 }
		d >= 50 && (ind != 100 || $0 !~ "\\(" d "\\)$") { print "depth " d ": " $0; exit 1 }
	' got.txt || die "indentation or depth numbers wrong"
	grep -q '^C) D | \{102\}deep(); (10000)$' got.txt || die "the innermost call: $(grep 'deep();' got.txt)"
}

longjmp_out() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" jump >out.txt
	"$P2" jump >plain.txt
	diff -u plain.txt out.txt
	graph g.dat >got.txt
	# four jump_in frames left by longjmp, each closed, then a normal tree
	[ "$(grep -c 'jump_in() {' got.txt)" -eq 3 ] || die "$(cat got.txt)"
	[ "$(grep -c 'jump_in();' got.txt)" -eq 1 ] || die "$(cat got.txt)"
	[ "$(grep -c '} /\* jump_in \*/' got.txt)" -eq 3 ] || die "$(cat got.txt)"
	has got.txt "handle_request() {"
	[ "$(grep -c '{' got.txt)" -eq "$(grep -c '} /\*' got.txt)" ] || die "unbalanced"
}

cxx_exceptions() {
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$CXX" >out.txt
	"$CXX" >plain.txt
	diff -u plain.txt out.txt # caught, rethrown: the same result as untraced
	graph g.dat >got.txt
	cat >want.txt <<-'W'
	C) - |  main() {
	C) - |    app::top(int) {
	C) - |      app::middle(int) {
	C) D |        app::leaf(int);
	C) D |      } /* app::middle */
	C) D |    } /* app::top */
	C) - |    app::top(int) {
	C) - |      app::middle(int) {
	C) D |        app::leaf(int);
	C) D |      } /* app::middle */
	C) D |    } /* app::top */
	C) - |    app::top(int) {
	C) - |      app::middle(int) {
	C) D |        app::leaf(int);
	C) D |      } /* app::middle */
	C) D |    } /* app::top */
	C) - |    app::rethrower(int) {
	C) - |      app::middle(int) {
	C) D |        app::leaf(int);
	C) D |      } /* app::middle */
	C) D |    } /* app::rethrower */
	C) D |    int app::twice<int>(int);
	C) D |  } /* main */
	W
	diff -u want.txt got.txt
}

threads() {
	$TRAIL record -q -p function_graph $NOSAN -l handle_request -l hash -o g.dat -- "$P2" threads
	$TRAIL report -q -i g.dat >got.txt
	[ "$(grep -c 'handle_request() {' got.txt)" -eq 12 ] || die "$(cat got.txt)"
	[ "$(grep -c 'hash();' got.txt)" -eq 12 ] || die "hash"
	has got.txt "------------------------------------------" # thread switches marked
	$TRAIL report -i g.dat --stat >stat.txt
	# 12 handle_request: entry and exit; 12 hash, leaves: one record each
	has stat.txt "entries-in-buffer/entries-written: 36/36"
	$TRAIL report -q -i g.dat --count >count.txt
	has count.txt "ftrace:funcgraph_leaf                  12"
}

signal_handler_call() {
	$TRAIL record -q -p function_graph $NOSAN -l raiser -l hash -o g.dat -- "$P2" signal >/dev/null
	graph g.dat >got.txt
	printf '%s\n' 'C) - |  raiser() {' 'C) D |    hash();' 'C) D |    hash();' 'C) D |  } /* raiser */' >want.txt
	diff -u want.txt got.txt
}

fork_child() {
	$TRAIL record -q -p function_graph $NOSAN -l handle_request -o g.dat -- "$P2" fork
	$TRAIL report -q -i g.dat >got.txt
	[ "$(grep -c 'handle_request();' got.txt)" -eq 2 ] || die "$(cat got.txt)"
	$TRAIL report -i g.dat --stat | grep -c '^# ftrace-prog' >n.txt
	[ "$(cat n.txt)" -eq 2 ] || die "two processes expected"
}

fork_inside_calls() {
	# fork() three calls deep: the child returns through the frames it
	# inherited, whose entries are in the parent's stream. Its returns are
	# named (a funcgraph_inherited record per frame, written at fork) and
	# have no duration (the call began in the parent); the parent's tree
	# is the same as without a fork.
	for opt in "" --retval; do
		# shellcheck disable=SC2086 # $opt: none or one word
		$TRAIL record -q -p function_graph $NOSAN $opt -l 'fork_*' -l hash -o k.dat -- "$P2" forknest
		$TRAIL report -q -O fgraph:proc -i k.dat >all.txt
		parent=$(grep -m1 -oE -- '-[0-9]+ +\|' all.txt | grep -oE '[0-9]+')
		# each process's lines, durations and CPUs normalized
		for who in parent child; do
			grep -E ' \|  ' all.txt | if [ $who = parent ]; then grep -F -- "-$parent "; else grep -vF -- "-$parent "; fi |
				sed -E 's/^ *[0-9?]+\) +[^ ]+ +\|//; s/^ +[^|]* us +\|/D |/; s/^ +\|/- |/' >$who.txt
		done
		r0= r1=
		[ -z "$opt" ] || { r0=' = 0' r1=' = 1'; }
		{
			printf '%s\n' '- |  fork_outer() {' '- |    fork_middle() {' '- |      fork_inner() {'
			if [ -z "$opt" ]; then echo 'D |        hash();'; else echo 'D |        hash(); /* = 339497871 */'; fi
			printf '%s\n' "D |      } /* fork_inner$r1 */" "D |    } /* fork_middle$r1 */" "D |  } /* fork_outer$r1 */"
		} >want-parent.txt
		{
			if [ -z "$opt" ]; then echo 'D |        hash();'; else echo 'D |        hash(); /* = 255413865 */'; fi
			printf '%s\n' "- |      } /* fork_inner$r0 */" "- |    } /* fork_middle$r0 */" "- |  } /* fork_outer$r0 */"
		} >want-child.txt
		diff -u want-parent.txt parent.txt || die "parent ($opt)"
		diff -u want-child.txt child.txt || die "child ($opt)"
		$TRAIL report -q -i k.dat --count >count.txt
		has count.txt "ftrace:funcgraph_inherited             3"
	done
	# a threshold recording names the child's returns anyway ({func,
	# duration}, timed from the parent's entry): nothing inherited written
	$TRAIL record -q -p function_graph $NOSAN --graph-time-thresh 1ns -l 'fork_*' -o k.dat -- "$P2" forknest
	$TRAIL report -q -i k.dat >thr.txt
	[ "$(grep -c '} /\* fork_outer \*/' thr.txt)" -eq 2 ] || die "threshold: $(cat thr.txt)"
	hasnt thr.txt "0x0"
	$TRAIL report -q -i k.dat --count >count.txt
	hasnt count.txt "funcgraph_inherited"
}

exit_inside() {
	rc=0
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o g.dat -- "$P2" exit || rc=$?
	[ "$rc" -eq 3 ] || die "trail record: $rc, not the program's exit(3)"
	graph g.dat >got.txt
	printf '%s\n' 'C) - |  main() {' 'C) - |    modes() {' 'C) - |      about_to_leave() {' \
		'C) - |        leave() {' >want.txt
	diff -u want.txt got.txt
}

bytes_per_call() {
	$TRAIL record -q -p function_graph $NOSAN -l hash -l lookup -o g.dat -- "$P2" 200000 >/dev/null
	# a call is an entry (and its exit) or a leaf record
	calls=$($TRAIL report -q -i g.dat --count | awk '/funcgraph_(entry|leaf) / {s += $2} END {print s + 0}')
	[ "$calls" -gt 200000 ] || die "$calls calls"
	size=$(stat -c %s g.dat)
	# entry 12 bytes + exit 4 bytes, or a 16-byte leaf, plus the file's metadata
	[ $((size / calls)) -le 16 ] || die "$((size / calls)) bytes per call"
}

events_inside_calls() {
	# a leaf is one record; a call with an event inside has its entry
	# written before the event, and its exit after
	$TRAIL record -q -p function_graph $NOSAN -l outer -l noted -l quiet -e 'tpl:*' \
		-o g.dat -- "$BUILD/tests/cli/ftrace-tpleaf" 2
	graph g.dat >got.txt
	{
		for i in 0 1; do
			printf '%s\n' 'C) - |  outer() {' 'C) - |    noted() {' \
				"C) - |      /* tpl:note: i=$i */" 'C) D |    } /* noted */' \
				'C) D |    quiet();' 'C) D |  } /* outer */'
		done
		echo 'C) - |  /* tpl:note: i=-1 */'
	} >want.txt
	diff -u want.txt got.txt || die "call tree differs"
	$TRAIL report -q -i g.dat --count >count.txt
	has count.txt "ftrace:funcgraph_leaf                  2"
	has count.txt "ftrace:funcgraph_entry                 4"
	has count.txt "tpl:note                               3"
}

nest_signal_levels() {
	# raiser() raises SIGUSR1, whose handler calls hash() and raises
	# SIGUSR2, whose handler calls hash(); then raiser calls hash()
	for n in none 2 1 0; do
		opt=; [ $n = none ] || opt="--nest $n"
		# shellcheck disable=SC2086 # $opt: none or two words
		$TRAIL record -q -p function_graph $opt -l raiser -l hash -o n$n.dat -- "$P2" nested >out.txt
		has out.txt 1 # the program got its handlers back as it gave them
		graph n$n.dat >got$n.txt
	done
	# every level: 3 hashes; --nest 1: not the second level's; --nest 0: none in handlers
	for want in none:3 2:3 1:2 0:1; do
		n=${want%:*} k=${want#*:}
		[ "$(grep -c 'hash();' got$n.txt)" -eq "$k" ] || die "--nest $n: $(cat got$n.txt)"
		has got$n.txt 'C) - |  raiser() {'
	done
	$TRAIL report -i n0.dat | grep -q 'tracer: function_graph -l raiser -l hash --nest 0' ||
		die "the header does not show --nest"
	expect_rc 2 $TRAIL record -p function_graph --no-libcall --nest x -- "$P2" 2>err.txt
	has err.txt "--nest needs a signal handler level from 0 to 64, not 'x'"
	expect_rc 2 $TRAIL record --nest 0 -e 'x:*' -- "$P2" 2>err.txt
	has err.txt "--nest limits a tracer"
}

no_patchable_entries() {
	# a program built without patchable entries: its functions' first
	# instructions are displaced (src/arch reloc.c), the same call tree
	# as the -O2 build with them (both are -O2)
	for m in threads fork; do
		$TRAIL record -q -p function_graph --no-libcall -o u.dat -- "$BUILD/tests/cli/ftrace-prog-noflag" $m >/dev/null
		$TRAIL record -q -p function_graph --no-libcall -o p.dat -- "$P2" $m >/dev/null
		$TRAIL report -i u.dat | sed -E 's/^.*\|  //' | grep -E '\(\)|\}' | sort >u.txt
		$TRAIL report -i p.dat | sed -E 's/^.*\|  //' | grep -E '\(\)|\}' | sort >p.txt
		[ "$(wc -l <u.txt)" -gt 10 ] || die "$m: $(wc -l <u.txt) lines unmodified"
		cmp -s u.txt p.txt || die "$m: unmodified differs: $(diff u.txt p.txt | head -6)"
	done
	# shorter than a jump (over the padding after it), called from a loop
	# that keeps values in scratch registers; a loop head at the entry: the
	# leaf runs whole from a copy, where its turns do not meet the hook
	# (a patchable entry would count each turn: 1 + 2 + 3 + 4 + 5), 5 calls
	U=$BUILD/tests/cli/ftrace-prog-noflag
	"$U" short >want.txt
	$TRAIL record -q -p function_graph --no-libcall -o s.dat -- "$U" short >got.txt
	cmp -s want.txt got.txt || die "short: the program's output changed: $(cat got.txt)"
	$TRAIL report -q -i s.dat --summary >sum.txt
	[ "$(awk '$NF == "word_before" {print $5}' sum.txt)" = 40 ] || die "word_before: $(cat sum.txt)"
	[ "$(awk '$NF == "countdown" {print $5}' sum.txt)" = 5 ] || die "countdown: $(cat sum.txt)"
	$TRAIL record -q -p function -l countdown -o s.dat -- "$U" short >got.txt
	cmp -s want.txt got.txt || die "short, function: the program's output changed"
	$TRAIL list -f -- "$U" >f.txt 2>err.txt
	has f.txt lookup
	has f.txt countdown
	has f.txt word_before
	hasnt f.txt _start
	# (countdown's loop head is its entry: it moves whole, a jump there)
	hasnt f.txt "countdown [breakpoint]"
	# a launcher (stripped: its functions unnamed) has not the program's:
	# --allow-unknown
	expect_rc 1 $TRAIL record -p function_graph -l lookup -o g.dat -- env "$P2" 1 2>err.txt
	has err.txt "no function matches '-l lookup' in /usr/bin/env"
	has err.txt "and traces what a launcher such as taskset or env executes)"
	$TRAIL record -q --allow-unknown -p function_graph -l lookup -o g.dat -- env "$P2" 1
	$TRAIL report -i g.dat >out.txt
	has out.txt "tracer: function_graph -l lookup"
	has out.txt "lookup();"
	expect_rc 1 $TRAIL record -p function -l 'nothing_*' -o g.dat -- "$P2" 2>err.txt
	has err.txt "no function matches '-l nothing_*'"
	expect_rc 2 $TRAIL record -p tracing -o g.dat -- "$P2" 2>err.txt
	has err.txt "unknown tracer 'tracing'"
	expect_rc 2 $TRAIL record --retval -e all -o g.dat -- "$P2" 2>err.txt
	has err.txt "go with -p function_graph"
}

shadow_stack_full_degrades() {
	# 20001 nested calls, 16384 frames per thread: the deepest 3617 calls
	# are not traced, the count says so, the program is unharmed
	$TRAIL record -q -p function_graph $NOSAN -l deep -o g.dat -- "$P2" deep 20000 >out.txt
	has out.txt 20000
	$TRAIL report -i g.dat >got.txt
	has got.txt "function_graph: 3617 calls deeper than a thread's shadow stack"
	[ "$(grep -c 'deep() {' got.txt)" -eq 16383 ] || die "opens: $(grep -c 'deep() {' got.txt)"
	[ "$(grep -c 'deep();' got.txt)" -eq 1 ] || die "leaf"
	# the report stays small: indentation is capped (at 50 levels), so
	# no line is longer than about 150 bytes (it was 32 KiB at the bottom
	# of this tree); the depth is still there, as a number
	awk '{ if (length($0) > 160) { print NR ": " length($0) " bytes"; exit 1 } }' got.txt ||
		die "a line longer than 160 bytes"
	[ "$(stat -c %s got.txt)" -lt $((32767 * 150)) ] || die "report of $(stat -c %s got.txt) bytes"
	grep -q 'deep(); (16383)$' got.txt || die "the innermost call's depth: $(grep 'deep();' got.txt)"
	$TRAIL report -O fgraph:proc -i g.dat >proc.txt
	awk '{ if (length($0) > 190) { print NR ": " length($0) " bytes"; exit 1 } }' proc.txt ||
		die "-O fgraph:proc: a line longer than 190 bytes"
}

DLHOST=$BUILD/tests/cli/ftrace-dlhost
PA=$BUILD/tests/cli/dlplug_a.so
PB=$BUILD/tests/cli/dlplug_b.so

dlopen_dlclose() {
	# objects loaded after the start are hooked at dlopen, forgotten at
	# dlclose; two plugins taking turns at one address are each named
	# for their own calls
	$TRAIL record -q -p function_graph --no-libcall $NOSAN -o d.dat -- "$DLHOST" "$PA" "$PB" 4
	graph d.dat >got.txt
	{
		echo 'C) - |  main() {'
		for v in a b a b; do
			printf '%s\n' 'C) - |    host_call() {' 'C) - |      plug_entry() {' \
				"C) D |        inner_$v();" 'C) D |      } /* plug_entry */' \
				'C) D |    } /* host_call */'
		done
		echo 'C) D |  } /* main */'
	} >want.txt
	diff -u want.txt got.txt || die "call tree differs"
	# -l applies to the objects loaded later too
	expect_rc 1 $TRAIL record -q -p function -l inner_b -o l.dat -- "$DLHOST" "$PA" "$PB" 6 2>err.txt
	has err.txt "no function matches '-l inner_b'"
	has err.txt "(--allow-unknown accepts functions of libraries loaded later"
	$TRAIL record -q -p function -l inner_b --allow-unknown -o l.dat -- "$DLHOST" "$PA" "$PB" 6
	$TRAIL report -q -i l.dat | sed -E 's/.*: +//' >got.txt
	printf 'inner_b <-plug_entry\n%.0s' 1 2 3 >want.txt
	diff -u want.txt got.txt || die "-l inner_b"
}

dl_state_bytes() { # pid -> the first byte of the loader's _dl_debug_state
	local ld base off
	ld=$(awk '$6 ~ /ld-linux/ && $3 == "00000000" { print $6; exit }' /proc/$1/maps)
	base=$(awk -v ld="$ld" '$6 == ld && $3 == "00000000" { split($1, a, "-"); print a[1]; exit }' /proc/$1/maps)
	off=$(nm -D "$ld" | awk '$3 ~ /^_dl_debug_state/ { print $1 }')
	[ -n "$off" ] || return 1
	dd if=/proc/$1/mem bs=1 count=1 skip=$(( 0x$base + 0x$off )) iflag=skip_bytes status=none | od -An -tx1 | tr -d ' \n'
}

attach_then_dlopen() {
	# attached to a running process: the plugins it loads while recorded
	# are hooked; after detach the loader's breakpoint is gone and the
	# process goes on loading plugins untraced
	env LD_PRELOAD=$LIBTRAIL "$DLHOST" "$PA" "$PB" 0 &
	pid=$!
	wait_for "[ -e $TRAIL_REGISTRY/$pid ]" || die "never registered"
	before=$(dl_state_bytes $pid || true)
	$TRAIL record -q -p function_graph -l 'inner_*' -l plug_entry --allow-unknown -o at.dat -P $pid & rp=$!
	wait_for "grep -q trail-arena /proc/$pid/maps" || die "never attached"
	sleep 1
	kill -INT $rp; wait $rp
	sleep 0.2
	kill -0 $pid || die "the process died"
	$TRAIL report -q -i at.dat >got.txt
	[ "$(grep -c 'inner_a();' got.txt)" -gt 5 ] || die "inner_a: $(head got.txt)"
	[ "$(grep -c 'inner_b();' got.txt)" -gt 5 ] || die "inner_b: $(head got.txt)"
	! grep -q '0x[0-9a-f]*()' got.txt || die "unnamed functions: $(grep -m3 '0x' got.txt)"
	if [ -n "$before" ]; then
		[ "$before" = "c3" ] || die "_dl_debug_state began with $before"
		[ "$(dl_state_bytes $pid)" = "$before" ] || die "the loader's breakpoint stayed"
	else
		echo "note: /proc/$pid/mem or nm unavailable, bytes not compared" >&2
	fi
	sleep 0.3
	kill -0 $pid || die "the process died after detach"
	kill $pid; wait $pid 2>/dev/null || true
}

t golden_call_tree golden_call_tree
t dlopen_dlclose dlopen_dlclose
t attach_then_dlopen attach_then_dlopen
t shadow_stack_full_degrades shadow_stack_full_degrades
t max_depth max_depth
t graph_roots graph_roots
t time_threshold time_threshold
t recursion_10000_deep recursion_10000_deep
t longjmp_out longjmp_out
t cxx_exceptions cxx_exceptions
t threads threads
t signal_handler_call signal_handler_call
t fork_child fork_child
t fork_inside_calls fork_inside_calls
t exit_inside exit_inside
t bytes_per_call bytes_per_call
t events_inside_calls events_inside_calls
t nest_signal_levels nest_signal_levels
t no_patchable_entries no_patchable_entries

# Every function of Debian's python3 (stripped: its functions from the
# unwind table, hot/cold split by gcc): the cold parts' FDEs start inside
# their function's frame and a jump enters them anywhere; taken for
# functions, they broke the program. The same output, the same exit.
stripped_program_every_function() {
	local py
	py=$(readlink -f /usr/bin/python3)
	"$py" -c 'import json; print(json.dumps({"a": sum(range(10))}))' >want.txt
	for m in function function_graph; do
		$TRAIL record -q -p $m -o p.dat -- "$py" -c 'import json; print(json.dumps({"a": sum(range(10))}))' \
			>got.txt
		cmp -s want.txt got.txt || die "$m: $(cat got.txt)"
		$TRAIL report -q -i p.dat --count >c.txt
		grep -q 'ftrace:' c.txt || die "$m: nothing recorded: $(cat c.txt)"
	done
	# the cold parts are not listed either (list -f's rule is libtrail's)
	$TRAIL list -f -- "$py" >l.txt 2>/dev/null
	cold=$(readelf --debug-dump=frames "$py" 2>/dev/null | awk '
		/ FDE cie=/ { split($0, a, "pc="); split(a[2], b, "\\.\\."); pc = b[1]; first = 1; next }
		first && /DW_CFA_def_cfa_offset:/ { print pc; first = 0; next }
		{ first = 0 }' | sed -n 2p)  # (the first is the PLT's)
	[ -n "$cold" ] || die "no cold part found in $py's unwind table"
	grep -qx "0x${cold#"${cold%%[!0]*}"}" l.txt && die "the cold part at 0x$cold is listed"
	# nor a fragment: an unnamed start less than a jump's 5 bytes before
	# the next (`xor %eax,%eax; ret`, entered by a jump), which only a
	# breakpoint could take (unnamed functions are listed all the same)
	readelf --debug-dump=frames "$py" 2>/dev/null | sed -n 's/.* pc=\([0-9a-f]*\)\.\..*/\1/p' |
		sort -u >starts.txt
	nm -D --defined-only "$py" | awk '{print $1}' | sort -u >named.txt
	"$py" -c 'import sys
v = [l.strip() for l in open("starts.txt")]
for a, b in zip(v, v[1:]):
    print(a, int(b, 16) - int(a, 16))' | grep -vFf named.txt >spans.txt || true
	frag=$(awk '$2 < 5 { print $1; exit }' spans.txt)
	[ -n "$frag" ] || die "no fragment in $py's unwind table to check"
	grep -q "^sub_${frag#"${frag%%[!0]*}"}\b" l.txt && die "the fragment at 0x$frag is listed"
	[ "$(grep -c '^sub_' l.txt)" -gt 100 ] || die "unnamed functions not listed: $(grep -c '^sub_' l.txt)"
	true
}
if [ -x /usr/bin/python3 ] && ! readelf -S "$(readlink -f /usr/bin/python3)" | grep -q "\.symtab"; then
	t stripped_program_every_function stripped_program_every_function
else
	skip stripped_program_every_function "no stripped /usr/bin/python3 here (Debian's is): nothing to check it on"
fi
