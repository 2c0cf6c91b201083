#!/usr/bin/env bash
# Bad input gets a clear one-line error and a non-zero exit; nothing is
# started, and nothing already recorded is lost.
. "$(dirname "$0")/lib.sh"

unknown_event_lists_known_ones() {
	expect_rc 1 $TRAIL record -e app:nope -o x.dat -- "$EXAMPLE" 2>err.txt
	has err.txt "no event matches 'app:nope'"
	has err.txt "app:request"
	has err.txt "app:stats"
	[ ! -e x.dat ] || die "an output file was created"
}

bad_event_syntax_caret() {
	expect_rc 2 $TRAIL record -e 'app:re quest' -- "$EXAMPLE" 2>err.txt
	has err.txt "unexpected character in event name"
	has err.txt "  app:re quest"
	has err.txt "        ^"
	expect_rc 2 $TRAIL record -e 'a:b:c' -- "$EXAMPLE" 2>err.txt
	has err.txt "more than one ':'"
	has err.txt "     ^"
}

usage_errors() {
	expect_rc 2 $TRAIL record -- "$EXAMPLE" 2>err.txt
	has err.txt "no events selected"
	expect_rc 2 $TRAIL record -e all 2>err.txt
	has err.txt "nothing to record"
	expect_rc 2 $TRAIL record -e all -P 1 -- "$EXAMPLE" 2>err.txt
	has err.txt "give one of a COMMAND, -P PID and -a"
	expect_rc 2 $TRAIL record --bogus -e all -- "$EXAMPLE" 2>err.txt
	has err.txt "unknown option '--bogus'"
	expect_rc 2 $TRAIL record -b 1 -e all -- "$EXAMPLE" 2>err.txt
	has err.txt "-b needs a size"
	expect_rc 2 $TRAIL record -e all -P abc 2>err.txt
	has err.txt "-P needs a process id"
	expect_rc 2 $TRAIL report extra 2>err.txt
	expect_rc 2 $TRAIL report -i 2>err.txt
	expect_rc 2 $TRAIL nosuchcommand 2>err.txt
	has err.txt "unknown command 'nosuchcommand'"
}

command_not_found() {
	expect_rc 1 $TRAIL record -e all -o x.dat -- ./no-such-program 2>err.txt
	has err.txt "./no-such-program: No such file or directory"
	expect_rc 1 $TRAIL record -e all -o x.dat -- no-such-program-in-path 2>err.txt
	has err.txt "no-such-program-in-path: command not found"
	[ ! -e x.dat ] || die "an output file was created"
}

unwritable_output_checked_first() {
	expect_rc 1 $TRAIL record --allow-unknown -e all -o /nonexistent/dir/x.dat -- \
		sh -c 'touch marker' 2>err.txt
	has err.txt "cannot write /nonexistent/dir/x.dat: No such file or directory"
	[ ! -e marker ] || die "the command ran"
	mkdir adir
	expect_rc 1 $TRAIL record --allow-unknown -e all -o adir -- sh -c 'touch marker' 2>err.txt
	has err.txt "cannot write adir: Is a directory"
	[ ! -e marker ] || die "the command ran"
	expect_rc 1 $TRAIL record --allow-unknown -e all -o /dev/full -- sh -c 'touch marker' 2>err.txt
	has err.txt "No space left on device"
	[ ! -e marker ] || die "the command ran"
}

# a file with many chunks: 4 KiB chunks, thousands of events
many_chunks() {
	$TRAIL record -q --chunk-size 4K -e 'app:*' -o big.dat -- "$EXAMPLE" 4 2000
	$TRAIL report -q -i big.dat | wc -l
}

truncated_file_keeps_prefix() {
	total=$(many_chunks)
	size=$(stat -c %s big.dat)
	for cut in $((size / 2)) $((size - 7)) 100 64 63 10; do
		head -c "$cut" big.dat >cut.dat
		rc=0
		$TRAIL report -q -i cut.dat >out.txt 2>err.txt || rc=$?
		[ "$rc" -eq 1 ] || die "cut at $cut: exit $rc"
		grep -Eq "offset [0-9]+|too short|header|did not finish" err.txt || die "cut at $cut: no offset in: $(cat err.txt)"
		n=$(wc -l <out.txt)
		[ "$n" -le "$total" ] || die "cut at $cut: $n events of $total"
		if [ "$cut" -eq $((size / 2)) ]; then
			[ "$n" -lt "$total" ] || die "half the file gave every event"
			[ "$n" -gt 0 ] || die "half the file gave no events"
			has err.txt "file truncated"
		fi
	done
}

corrupt_file_names_offset() {
	total=$(many_chunks)
	size=$(stat -c %s big.dat)
	off=$((size * 2 / 3))
	cp big.dat bad.dat
	printf '\xff\x00\x13\x37' | dd of=bad.dat bs=1 seek="$off" conv=notrunc status=none
	rc=0
	$TRAIL report -q -i bad.dat >out.txt 2>err.txt || rc=$?
	[ "$rc" -eq 1 ] || die "exit $rc"
	has err.txt "checksum mismatch"
	grep -Eq "offset [0-9]+" err.txt || die "no offset: $(cat err.txt)"
	n=$(wc -l <out.txt)
	[ "$n" -gt 0 ] && [ "$n" -lt "$total" ] || die "$n events of $total before the damage"
	# the events printed are exactly the first ones of an intact report
	# for the streams that were read, i.e. a subset of the full report
	$TRAIL report -q -i big.dat >full.txt
	# (timestamps aside: the damaged file lost later clock sync points)
	sed -E 's/[0-9]+\.[0-9]+: //' out.txt | sort >a.txt
	sed -E 's/[0-9]+\.[0-9]+: //' full.txt | sort >b.txt
	[ -z "$(comm -23 a.txt b.txt)" ] || die "damaged read invented events"
}

not_a_trace_file() {
	expect_rc 1 $TRAIL report -i /etc/passwd 2>err.txt
	has err.txt "not a trail trace file"
	: >empty.dat
	expect_rc 1 $TRAIL report -i empty.dat 2>err.txt
	has err.txt "too short for a trail file"
	expect_rc 1 $TRAIL report -i nonexistent.dat 2>err.txt
	has err.txt "nonexistent.dat: No such file or directory"
	head -c 64 /dev/urandom >rnd.dat
	expect_rc 1 $TRAIL report -i rnd.dat 2>err.txt
}

file_size_limit_mid_recording() {
	# a full disk, as the file size limit makes it: the recording stops
	# cleanly, says so, and the file holds a readable prefix
	rc=0
	( ulimit -f 4096; exec $TRAIL record -q -b 1M --chunk-size 4K -e 'app:*' -o full.dat -- "$EXAMPLE" 4 300000 ) 2>err.txt || rc=$?
	[ "$rc" -eq 1 ] || die "exit $rc: $(cat err.txt)"
	has err.txt "File too large"
	has err.txt "recording stopped"
	size=$(stat -c %s full.dat)
	[ "$size" -le $((4096 * 1024)) ] || die "file is $size bytes"
	rc=0
	$TRAIL report -q -i full.dat >out.txt 2>err2.txt || rc=$?
	[ "$(wc -l <out.txt)" -gt 100 ] || die "no events kept: $(cat err2.txt)"
	has err2.txt "did not finish"
}

pid_errors() {
	expect_rc 1 $TRAIL record -e all -P 999999999 2>err.txt
	has err.txt "no process with pid 999999999"
	# a process without libtrail: nothing is loaded into it for a request
	# it cannot satisfy (test-attach.sh loads it where it can)
	sleep 30 & sp=$!
	# (its name once it runs sleep, not the shell that forked it)
	wait_for "grep -qx sleep /proc/$sp/comm" || die "sleep never ran"
	expect_rc 1 $TRAIL record -e all -P $sp 2>err.txt
	has err.txt "no event matches 'all' in process $sp (sleep)"
	! grep -q libtrail /proc/$sp/maps || die "libtrail was loaded into sleep"
	kill $sp
	if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
		# root attaches to any user's process (test-attach.sh), and
		# checks it as any other
		setpriv --reuid=65534 --regid=65534 --clear-groups sleep 30 & op=$!
		wait_for "grep -qx sleep /proc/$op/comm" || die "sleep never ran"
		expect_rc 1 $TRAIL record -e all -P $op 2>err.txt
		kill $op
		has err.txt "no event matches 'all' in process $op (sleep)"
	elif [ "$(id -u)" -ne 0 ]; then
		expect_rc 1 $TRAIL record -e all -P 1 2>err.txt
		has err.txt "not to you"
	fi
	TRAIL_SIGNAL=0 "$EXAMPLE_LINKED" --loop >/dev/null & lp=$!
	wait_for "grep -q libtrail /proc/$lp/maps && [ -e $TRAIL_REGISTRY/$lp ]"
	expect_rc 1 $TRAIL record -e all -P $lp 2>err.txt
	kill $lp
	has err.txt "attaching is disabled"
}

registry_must_be_private() {
	mkdir open; chmod 755 open
	TRAIL_REGISTRY=$PWD/open expect_rc 1 $TRAIL ps 2>err.txt
	has err.txt "mode 0755 gives others access"
	mkdir -p real; chmod 700 real; ln -s real link
	TRAIL_REGISTRY=$PWD/link expect_rc 1 $TRAIL ps 2>err.txt
	has err.txt "symbolic link"
	# libtrail refuses it too: nothing gets written through the link
	TRAIL_REGISTRY=$PWD/link LD_PRELOAD=$LIBTRAIL "$EXAMPLE" 1 1
	[ -z "$(ls real)" ] || die "libtrail wrote through a symlinked registry"
}

# a registry of mode 0755: every command that reads or writes it says
# which directory, its mode and the one it needs, before anything runs
# (was "probe: Operation not permitted", or nothing: record -a waited)
registry_mode_everywhere() {
	mkdir -p open755; chmod 755 open755
	local want="trail: registry $PWD/open755: mode 0755 gives others access: it must be mode 0700, owned by you (chmod 700 $PWD/open755)"
	"$EXAMPLE" --loop 1 >/dev/null &
	local lp=$!
	while IFS='|' read -r pre cmd; do
		[ -n "$cmd" ] || continue
		rc=0
		eval "TRAIL_REGISTRY=$PWD/open755 timeout 20 $cmd" >out.txt 2>err.txt || rc=$?
		[ "$rc" -eq 1 ] || die "$cmd: exit $rc, wanted 1: $(cat err.txt)"
		[ "$(cat err.txt)" = "${want/trail: /trail: $pre}" ] || die "$cmd: $(cat err.txt)"
	done <<-EOF
	probe: |\$TRAIL probe 'p:x/pi parse_int'
	probe: |\$TRAIL probe -l
	probe: |\$TRAIL probe -d x/pi
	probe: |\$TRAIL probe --clear
	synth: |\$TRAIL synth 'lat u64 x'
	synth: |\$TRAIL synth -l
	|\$TRAIL ps
	|\$TRAIL record -q -e all -o t.dat -- $EXAMPLE
	|\$TRAIL record -q --probe 'p:x/pi main' -o t.dat -- $EXAMPLE
	|\$TRAIL record -q -e all -P $lp -o t.dat
	|\$TRAIL record -q -e all -a -o t.dat
	|\$TRAIL hist -P $lp -e app:request 'keys=bytes'
	EOF
	kill $lp
	[ ! -e t.dat ] || die "a recording was made"
	TRAIL_REGISTRY=$PWD/open755 $TRAIL list -- "$EXAMPLE" >out.txt 2>err.txt
	has err.txt "trail: warning: the kept probe definitions (trail probe) are left out: registry $PWD/open755: mode 0755"
	has out.txt "app:request"
}

# a write that fails names the output and the cause, exit 1, for every
# writer: report's layouts, every export format to standard output and
# to -o (was: exit 1 and nothing said, "Input/output error", "writing
# (null)"); ctf's files by name with the real errno (was EIO)
write_errors_named() {
	$TRAIL record -q -p function_graph -e 'app:*' -o w.dat -- "$EXAMPLE" 2 3 >/dev/null
	local o
	for o in "" --summary --stat --count; do
		expect_rc 1 $TRAIL report $o -i w.dat >/dev/full 2>err.txt
		[ "$(cat err.txt)" = "trail: report: writing standard output: No space left on device" ] ||
			die "report $o: $(cat err.txt)"
	done
	for o in text perfetto chrome folded flamegraph; do
		expect_rc 1 $TRAIL export -q -F $o -i w.dat >/dev/full 2>err.txt
		[ "$(cat err.txt)" = "trail: export: writing standard output: No space left on device" ] ||
			die "export $o: $(cat err.txt)"
		expect_rc 1 $TRAIL export -q -F $o -i w.dat -o /dev/full 2>err.txt
		[ "$(cat err.txt)" = "trail: export: writing /dev/full: No space left on device" ] ||
			die "export $o -o: $(cat err.txt)"
		# the same to a file: written whole, and nothing said
		$TRAIL export -q -F $o -i w.dat -o w.$o 2>err.txt
		[ -s w.$o ] && [ ! -s err.txt ] && [ ! -e w.$o.part ] || die "export $o to a file: $(cat err.txt)"
		# a file size limit: the file's errno, the .part removed
		rm -f w.$o
		rc=0
		( ulimit -f 1; trap '' XFSZ; exec $TRAIL export -q -F $o -i w.dat -o w.$o ) 2>err.txt || rc=$?
		[ $rc -eq 1 ] && [ "$(cat err.txt)" = "trail: export: writing w.$o: File too large" ] ||
			die "export $o, ulimit -f 1: exit $rc: $(cat err.txt)"
		[ ! -e w.$o ] && [ ! -e w.$o.part ] || die "export $o left a file"
	done
	# the other commands' standard output (was exit 0, nothing said)
	while IFS='|' read -r cmd; do
		rc=0
		eval "$cmd" >/dev/full 2>err.txt || rc=$?
		[ $rc -eq 1 ] && [ "$(cat err.txt)" = "trail: writing standard output: No space left on device" ] ||
			die "$cmd: exit $rc: $(cat err.txt)"
	done <<-'EOF'
	$TRAIL list "$EXAMPLE"
	$TRAIL list -F "$EXAMPLE"
	$TRAIL list -f "$EXAMPLE"
	$TRAIL hist -i w.dat -e app:request keys=fd
	$TRAIL version
	$TRAIL list --help
	EOF
	rc=0
	( ulimit -f 1; trap '' XFSZ; exec $TRAIL export -q -F ctf -i w.dat -o w.ctf ) 2>err.txt || rc=$?
	[ $rc -eq 1 ] || die "ctf, ulimit -f 1: exit $rc"
	grep -Eq "ctf: writing w.ctf/(metadata|stream-[0-9-]+): File too large$" err.txt ||
		die "ctf, ulimit -f 1: $(cat err.txt)"
}

# a disk that fills: record's file there before stays when nothing was
# recorded (not replaced by an empty one); ctf's files named with ENOSPC.
# A small tmpfs of a mount namespace of our own
full_disk() {
	$TRAIL record -q -e 'app:*' -o earlier.dat -- "$EXAMPLE" 1 1 >/dev/null
	cat >full.sh <<-EOF
	set -e
	mkdir -p mnt
	mount -t tmpfs -o size=64k none mnt
	cp earlier.dat mnt/t.dat
	dd if=/dev/zero of=mnt/fill bs=4k 2>/dev/null || true
	rc=0; $TRAIL record -q -e 'app:*' -o mnt/t.dat -- "$EXAMPLE" 1 1 >/dev/null 2>rec.txt || rc=\$?
	echo "record \$rc" >rcs.txt
	cmp -s earlier.dat mnt/t.dat && echo kept >>rcs.txt
	rm mnt/fill
	rc=0; $TRAIL export -q -F ctf -i earlier.dat -o mnt/big >/dev/null 2>ctf.txt || rc=\$?
	dd if=/dev/zero of=mnt/fill bs=4k 2>/dev/null || true
	rc=0; $TRAIL export -q -F ctf -i earlier.dat -o mnt/c --force 2>ctf.txt || rc=\$?
	echo "ctf \$rc" >>rcs.txt
	rm mnt/fill
	cp earlier.dat mnt/t.dat
	mount -o remount,ro mnt
	rc=0; $TRAIL record -q -e 'app:*' -o mnt/t.dat -- "$EXAMPLE" 1 1 >/dev/null 2>ro.txt || rc=\$?
	echo "ro \$rc" >>rcs.txt
	cmp -s earlier.dat mnt/t.dat && echo "ro kept" >>rcs.txt
	EOF
	unshare -rm sh full.sh
	has rcs.txt "record 1"
	has rcs.txt "kept"
	[ "$(cat rec.txt)" = "trail: writing mnt/t.dat: No space left on device; nothing was recorded (the file there before is left as it was)" ] ||
		die "record: $(cat rec.txt)"
	has rcs.txt "ctf 1"
	grep -Eq "ctf: writing mnt/c/(metadata|stream-[0-9-]+): No space left on device$" ctf.txt ||
		die "ctf: $(cat ctf.txt)"
	# a directory that cannot be written: said before anything runs
	has rcs.txt "ro 1"
	has rcs.txt "ro kept"
	[ "$(cat ro.txt)" = "trail: cannot write mnt/t.dat: Read-only file system" ] || die "ro: $(cat ro.txt)"
}

# Each message names the real problem (reliability issue, items 8 and 9):
# one row per case, "exit status|text the message must hold|command".
messages_table() {
	head -c 100 "$EXAMPLE" >truncated.elf
	chmod +x truncated.elf
	long=$(printf 'a%.0s' $(seq 5000))
	while IFS='|' read -r want text cmd; do
		[ -n "$want" ] || continue
		rc=0
		eval "$cmd" >out.txt 2>err.txt || rc=$?
		[ "$rc" -eq "$want" ] || die "$cmd: exit $rc, wanted $want: $(cat err.txt)"
		grep -qF -- "$text" err.txt || die "$cmd: '$text' not in: $(cat err.txt)"
		[ "$(wc -l <err.txt)" -le 4 ] || die "$cmd: more than a short message: $(cat err.txt)"
	done <<-'EOF'
	1|/etc/passwd: not an ELF file|$TRAIL list -- /etc/passwd
	1|/dev/zero: not a regular file|$TRAIL list -- /dev/zero
	1|/dev/zero: not a regular file|$TRAIL record -e all -- /dev/zero
	1|/etc/passwd: Permission denied (not executable)|$TRAIL record -e all -- /etc/passwd
	1|registry /etc/passwd: not a directory|TRAIL_REGISTRY=/etc/passwd $TRAIL ps
	1|registry /etc/passwd: not a directory|TRAIL_REGISTRY=/etc/passwd $TRAIL record -e all -P $$
	2|option -P needs a process id|$TRAIL list -P
	2|-i needs a file name, not an empty one|$TRAIL report -i ""
	1|: File name too long|$TRAIL report -i $long
	2|'[' set without its ']'|$TRAIL record -e 'app:[a-' -- $EXAMPLE
	2|']' without its '['|$TRAIL list -- $EXAMPLE 'app:a]'
	2|bad function glob|$TRAIL record -p function_graph -l 'ma[in' -- $EXAMPLE
	1|truncated or damaged ELF file|$TRAIL list -- ./truncated.elf
	1|truncated or damaged ELF file|$TRAIL list -f -- ./truncated.elf
	1|truncated or damaged ELF file|$TRAIL record -e all -- ./truncated.elf
	2|unexpected argument '--bogus'|$TRAIL version --bogus
	2|graph roots go with -p function_graph|$TRAIL record -p function -g main -- $EXAMPLE
	1|TRAIL_LIBRARY=/etc/passwd: not an ELF file|TRAIL_LIBRARY=/etc/passwd $TRAIL record -e all -- $EXAMPLE
	EOF
}

stat_and_count_together() {
	$TRAIL record -q -e 'app:*' -o sc.dat -- "$EXAMPLE"
	$TRAIL report -i sc.dat --stat --count >out.txt
	has out.txt "entries-in-buffer/entries-written: 24/24"
	has out.txt "app:request"
	grep -Eq '^  app:request +10$' out.txt || die "no count: $(cat out.txt)"
}

t unknown_event_lists_known_ones unknown_event_lists_known_ones
t bad_event_syntax_caret bad_event_syntax_caret
t usage_errors usage_errors
t command_not_found command_not_found
t unwritable_output_checked_first unwritable_output_checked_first
t truncated_file_keeps_prefix truncated_file_keeps_prefix
t corrupt_file_names_offset corrupt_file_names_offset
t not_a_trace_file not_a_trace_file
t file_size_limit_mid_recording file_size_limit_mid_recording
t pid_errors pid_errors
t registry_must_be_private registry_must_be_private
t registry_mode_everywhere registry_mode_everywhere
t messages_table messages_table
t stat_and_count_together stat_and_count_together
t write_errors_named write_errors_named
if unshare -rm true 2>/dev/null; then
	t full_disk full_disk
else
	skip full_disk "no user and mount namespace (unshare -rm) for a small tmpfs"
fi
