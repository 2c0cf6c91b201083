#!/usr/bin/env bash
# trail timerlat and trail osnoise (the kernel's latency tracers for what a
# process sees): rtla's layouts, numbers that mean something (a CPU kept
# busy by another thread shows more noise than one that is not; the
# histogram's counts add up to its samples), the options' bad values.
. "$(dirname "$0")/lib.sh"

NCPU=$(nproc)
# the kernel's events are read where tracefs is writable: these tests
# check what user space sees alone, the live_* tests what tracefs adds
# (TRAIL_TRACEFS= there: the usual places)
export TRAIL_TRACEFS=/nonexistent

timerlat_top_layout() {
	$TRAIL timerlat top -q -d 2 -c 0 -p 1000 >out.txt 2>err.txt
	sed -n 1p out.txt | grep -q '^ \{37\}Timer Latency \{46\}$' || die "$(cat -A out.txt | head -2)"
	grep -qE '^  0 00:00:0[23]   \|          IRQ Timer Latency \(us\)        \|         Thread Timer Latency \(us\)$' out.txt ||
		die "$(sed -n 2p out.txt)"
	has out.txt 'CPU COUNT      |      cur       min       avg       max |      cur       min       avg       max'
	# CPU 0's row: 2 s of a 1 ms timer (the first period and the last
	# partial one aside), the IRQ block rtla's "-", min <= avg <= max
	local row n mn av mx
	row=$(grep -E '^  0 #' out.txt) || die "no CPU 0 row: $(cat out.txt)"
	n=$(sed -E 's/^  0 #([0-9]+) .*/\1/' <<<"$row")
	[ "$n" -ge 1500 ] && [ "$n" -le 2100 ] || die "count $n: $row"
	grep -qE '^  0 #[0-9]+ +\|        -         -         -         - \|' <<<"$row" || die "$row"
	read -r mn av mx <<<"$(awk -F'|' '{ split($3, a, " "); print a[2], a[3], a[4] }' <<<"$row")"
	[ "$mn" -le "$av" ] && [ "$av" -le "$mx" ] || die "min $mn avg $av max $mx: $row"
	grep -qE '^ALL #[0-9]+ +e0 \|' out.txt || die "$(tail -2 out.txt)"
	has err.txt "IRQ columns: the timer interrupt's latency is read from the kernel's local_timer_entry events, which are not readable here"
	# not quiet: a refreshed table, rtla's ESC c before each
	$TRAIL timerlat top -d 2 -c 0 >tty.txt 2>/dev/null
	[ "$(grep -c $'\033c' tty.txt)" -ge 2 ] || die "$(grep -c $'\033c' tty.txt) refreshes"
}

timerlat_hist_adds_up() {
	$TRAIL timerlat hist -d 2 -c 0 -p 500 -b 10 -E 20 --with-zeros >h.txt 2>/dev/null
	has h.txt '# RTLA timerlat histogram'
	has h.txt '# Time unit is microseconds (us)'
	grep -qE '^Index   Thr-000$' h.txt || die "$(sed -n 4p h.txt)"
	# 20 buckets of 10 us (0, 10, ... 190) and "over": their sum is count
	[ "$(grep -cE '^[0-9]+ ' h.txt)" = 20 ] || die "$(cat h.txt)"
	grep -qE '^190 ' h.txt || die "$(cat h.txt)"
	local buckets over count
	buckets=$(awk '$1 ~ /^[0-9]+$/ { s += $2 } END { print s }' h.txt)
	over=$(awk '$1 == "over:" { print $2 }' h.txt)
	count=$(awk '$1 == "count:" { print $2; exit }' h.txt)
	[ $((buckets + over)) = "$count" ] && [ "$count" -ge 3000 ] || die "$buckets + $over != $count"
	has h.txt 'ALL:         Thr'
	# nanoseconds
	$TRAIL timerlat hist -d 1 -c 0 -n --no-summary >n.txt 2>/dev/null
	has n.txt '# Time unit is nanoseconds (ns)'
	hasnt n.txt 'count:'
}

# a CPU kept busy by a thread of the same class shows more noise than it
# did alone: the measuring thread is preempted
osnoise_loaded_cpu() {
	local cpu=$((NCPU - 1)) hog idle busy
	$TRAIL osnoise top -q -d 2 -c $cpu -p 200000 >idle.txt
	taskset -c $cpu sh -c 'while :; do :; done' & hog=$!
	$TRAIL osnoise top -q -d 2 -c $cpu -p 200000 >busy.txt
	kill $hog
	wait $hog 2>/dev/null || true
	has busy.txt 'CPU Period       Runtime        Noise  % CPU Aval   Max Noise   Max Single          HW          NMI          IRQ      Softirq       Thread'
	idle=$(awk -v c=$cpu '$1 == c { print $5 }' idle.txt)
	busy=$(awk -v c=$cpu '$1 == c { print $5 }' busy.txt)
	[ -n "$idle" ] && [ -n "$busy" ] || die "$(cat idle.txt busy.txt)"
	# the hog takes about half of the CPU; the thread was preempted
	awk -v b="$busy" 'BEGIN { exit !(b < 80) }' || die "busy: $busy % available: $(cat busy.txt)"
	awk -v b="$busy" -v i="$idle" 'BEGIN { exit !(b < i) }' || die "busy $busy % >= idle $idle %"
	[ "$(awk -v c=$cpu '$1 == c { print $NF }' busy.txt)" -gt 0 ] || die "no preemption counted: $(cat busy.txt)"
}

osnoise_hist_and_stop() {
	$TRAIL osnoise hist -d 1 -c 0 -T 1 >h.txt
	has h.txt '# RTLA osnoise histogram'
	grep -qE '^Index   CPU-000$' h.txt || die "$(cat h.txt)"
	grep -qE '^avg: +[0-9]+\.[0-9]{2} $' h.txt || die "$(grep avg h.txt)"
	# a gap past 1 us stops it: rtla's words and exit status
	expect_rc 2 $TRAIL osnoise top -q -c 0 -d 10 -T 1 -s 1 >s.txt
	has s.txt 'osnoise hit stop tracing'
}

# record -p timerlat|osnoise: each sample an event, in the kernel's
# layouts (seed 001), from threads named as the kernel's
recorded() {
	export TRAIL_REGISTRY=$TMP/reg
	fresh_registry
	$TRAIL record -q -p timerlat -o t.dat -- -c 0 -d 1 -p 1000
	$TRAIL report -q -i t.dat >r.txt
	local n
	n=$(grep -cE '^ +timerlat/0-[0-9]+ +\[000\] +[0-9.]+: timerlat:timerlat: #[0-9]+ context thread timer_latency +[0-9]+ ns$' r.txt)
	[ "$n" -ge 800 ] && [ "$n" = "$(wc -l <r.txt)" ] || die "$n of $(wc -l <r.txt): $(head -3 r.txt)"
	grep -q ': #1 context thread' r.txt || die "$(head -2 r.txt)"
	# the samples by value: trail hist on the recording
	$TRAIL hist -i t.dat -e timerlat:timerlat 'keys=timer_latency.log2' >h.txt
	has h.txt "Hits: $n"
	$TRAIL record -q -p osnoise -o o.dat -- -c 0 -d 2 -p 500000
	$TRAIL report -q -i o.dat >o.txt
	# (the runtime a period took: 500000 us, more when the machine is
	# loaded and the thread was late to end it: CI saw 504073)
	grep -qE '^ +osnoise/0-[0-9]+ +\[000\] +[0-9.]+: osnoise:osnoise: +5[0-9]{5} +[0-9]+ +[0-9]{1,3}\.[0-9]{5} +[0-9]+( +[0-9]+){5}$' o.txt ||
		die "$(head -3 o.txt)"
	[ "$(wc -l <o.txt)" -ge 3 ] || die "$(cat o.txt)"
	expect_rc 2 $TRAIL record -p timerlat -P 1 2>err.txt
	has err.txt "records trail's own measuring threads"
	expect_rc 1 $TRAIL timerlat emit -d 1 2>err.txt
	has err.txt "run it as \`trail record -p timerlat\`"
}

# -a: what delayed the thread, from the kernel's events (rtla's
# auto-analysis), where tracefs is writable; else said, the latency alone.
# A hog on the CPU makes a normal priority thread late past 300 us soon
# (what delayed it is whatever the kernel recorded: checked for shape,
# and against the latency that stopped it).
auto_analysis() {
	local cpu=$((NCPU - 1)) hog lat irq
	taskset -c $cpu sh -c 'while :; do :; done' & hog=$!
	expect_rc 2 env TRAIL_TRACEFS= $TRAIL timerlat top -q -c $cpu -P o:0 -a 300 -d 30 >a.txt 2>err.txt
	kill $hog 2>/dev/null || true
	wait $hog 2>/dev/null || true
	has a.txt 'timerlat hit stop tracing'
	lat=$(sed -nE 's/^  CPU [0-9]+: thread latency of ([0-9.]+) us$/\1/p' a.txt)
	[ -n "$lat" ] || die "$(cat a.txt)"
	awk -v l="$lat" 'BEGIN { exit !(l >= 300) }' || die "stopped at $lat us"
	if [ -w /sys/kernel/tracing/instances ]; then
		has a.txt "## CPU $cpu hit stop tracing, analyzing it ##"
		grep -qE "^  Thread latency: +$lat us \(100%\)$" a.txt || die "$(cat a.txt)"
		# the timer interrupt came before the thread ran
		irq=$(sed -nE 's/^  IRQ latency: +([0-9.]+) us$/\1/p' a.txt)
		[ -z "$irq" ] || awk -v i="$irq" -v l="$lat" 'BEGIN { exit !(i <= l) }' || die "$(cat a.txt)"
		# each interference a line of NAME and duration
		sed -n '/interference/,/^---/p' a.txt | grep -vE 'interference|^---' |
			grep -vqE '^ +[^ ]+ +[0-9]+\.[0-9]{2} us$' && die "$(cat a.txt)"
		[ -z "$(ls /sys/kernel/tracing/instances | grep trail-timerlat)" ] ||
			die "instance left: $(ls /sys/kernel/tracing/instances)"
	else
		has err.txt "the kernel's events are not read"
		grep -qE "Thread latency: +$lat us \(100%\) \(the kernel's events not read" a.txt || die "$(cat a.txt)"
	fi
}

# timerlat's IRQ columns from the kernel's local_timer_entry events: each
# sample's timer interrupt found (nearly all), its latency below the
# thread's; rtla's IRQ-NNN histogram columns; `record -p timerlat`'s
# "context irq" records, each before the thread's of its sample
live_timerlat_irq() {
	export TRAIL_TRACEFS=
	local row imn iav imx tmn tav tmx ic tc
	$TRAIL timerlat top -q -d 1 -c 0 -p 1000 >out.txt 2>err.txt
	row=$(grep -E '^  0 #' out.txt) || die "no CPU 0 row: $(cat out.txt)"
	read -r imn iav imx <<<"$(awk -F'|' '{ split($2, a, " "); print a[2], a[3], a[4] }' <<<"$row")"
	read -r tmn tav tmx <<<"$(awk -F'|' '{ split($3, a, " "); print a[2], a[3], a[4] }' <<<"$row")"
	[[ "$imn$iav$imx" =~ ^[0-9]+$ ]] || die "IRQ columns: $row"
	[ "$imn" -le "$iav" ] && [ "$iav" -le "$imx" ] && [ "$iav" -le "$tav" ] || die "$row"
	hasnt err.txt 'IRQ columns'
	$TRAIL timerlat hist -d 1 -c 0 -p 1000 >h.txt 2>err.txt
	grep -qE '^Index   IRQ-000   Thr-000$' h.txt || die "$(cat h.txt)"
	read -r ic tc <<<"$(awk '$1 == "count:" { print $2, $3; exit }' h.txt)"
	[ "$tc" -ge 700 ] && [ $((ic * 100)) -ge $((tc * 90)) ] && [ "$ic" -le "$tc" ] || die "IRQ $ic of $tc samples"
	has h.txt 'ALL:        IRQ       Thr'
	# -i: an IRQ latency past 1 us stops it (rtla's words, exit status 2)
	expect_rc 2 $TRAIL timerlat top -q -c 0 -d 10 -i 1 >i.txt 2>/dev/null
	grep -qE '^  CPU 0: IRQ latency of [0-9]+\.[0-9]{2} us$' i.txt || die "$(cat i.txt)"
	export TRAIL_REGISTRY=$TMP/reg
	fresh_registry
	$TRAIL record -q -p timerlat -o t.dat -- -c 0 -d 1 -p 1000
	$TRAIL report -q -i t.dat >r.txt
	ic=$(grep -cE 'context +irq timer_latency' r.txt)
	tc=$(grep -c 'context thread timer_latency' r.txt)
	[ "$tc" -ge 800 ] && [ $((ic * 100)) -ge $((tc * 90)) ] || die "irq $ic, thread $tc: $(head -3 r.txt)"
	# each irq record is followed by its sample's thread record
	awk '/context +irq/ { s = $0; sub(/.*: #/, "", s); sub(/ .*/, "", s); want = s; next }
	     want != "" { t = $0; sub(/.*: #/, "", t); sub(/ .*/, "", t); if (t != want) { print "after irq #" want ": " $0; exit 1 } want = "" }' r.txt ||
		die "an irq record not before its thread record"
	[ -z "$(ls /sys/kernel/tracing/instances | grep '^trail-')" ] || die "instance left: $(ls /sys/kernel/tracing/instances)"
}

# osnoise's interference from the kernel's events, checked against the
# same kernel events read independently (an instance of the test's own
# on the same CPU over the whole run): the windows saw at most the
# interrupts the kernel recorded, and most of them; a hog on the CPU is
# counted as thread interference, each of its preemptions a gap
live_osnoise_attribution() {
	export TRAIL_TRACEFS=
	local cpu=$((NCPU - 1)) d=/sys/kernel/tracing/instances/trail-test-$$ mask indep irq hog thr
	mask=$(printf '%x' $((1 << cpu)))
	mkdir "$d"
	echo mono >"$d/trace_clock"
	echo "$mask" >"$d/tracing_cpumask"
	echo 1 >"$d/events/irq_vectors/enable"
	echo 1 >"$d/events/irq/irq_handler_entry/enable"
	echo 1 >"$d/tracing_on"
	$TRAIL osnoise top -q -c $cpu -d 2 -p 500000 -r 450000 >o.txt 2>err.txt
	echo 0 >"$d/tracing_on"
	indep=$(grep -E ': [a-z_]+_entry:' "$d/per_cpu/cpu$cpu/trace" | grep -vc 'softirq_entry') || true
	rmdir "$d"
	irq=$(awk -v c=$cpu '$1 == c { print $(NF - 2) }' o.txt)
	[ -n "$irq" ] || die "$(cat o.txt)"
	# (the kernel's count is of the whole window; osnoise counts those
	# that come while its thread samples: 90% of each period on an idle
	# CPU, less when other threads preempt it: a loaded 2-CPU machine
	# saw 46%)
	[ "$irq" -le "$indep" ] && [ $((irq * 100)) -ge $((indep * 25)) ] || die "osnoise IRQ $irq, the kernel's $indep: $(cat o.txt)"
	hasnt err.txt 'counted from /proc'
	taskset -c $cpu sh -c 'while :; do :; done' & hog=$!
	$TRAIL osnoise top -q -c $cpu -d 1 -p 250000 >b.txt 2>/dev/null
	kill $hog
	wait $hog 2>/dev/null || true
	thr=$(awk -v c=$cpu '$1 == c { print $NF }' b.txt)
	[ "$thr" -gt 0 ] || die "no thread interference under a hog: $(cat b.txt)"
	[ -z "$(ls /sys/kernel/tracing/instances | grep '^trail-')" ] || die "instance left: $(ls /sys/kernel/tracing/instances)"
}

bad_options() {
	# -i needs the kernel's events (this script's TRAIL_TRACEFS: none)
	expect_rc 1 $TRAIL timerlat top -c 0 -d 1 -i 20 2>err.txt
	has err.txt "-i: the IRQ latency is read from the kernel's events, which are not readable here"
	expect_rc 2 $TRAIL timerlat top -c 9999 -d 1 2>err.txt
	has err.txt "not a CPU list"
	expect_rc 2 $TRAIL timerlat top -c $NCPU -d 1 2>err.txt
	has err.txt "CPU $NCPU is not online"
	expect_rc 2 $TRAIL timerlat top -c 0-x 2>err.txt
	has err.txt "not a CPU list"
	[ "$(caret_col err.txt)" = 2 ] || die "$(cat err.txt)"
	expect_rc 2 $TRAIL timerlat top -p 50 2>err.txt
	has err.txt "a period from 100 to 1000000 us"
	expect_rc 2 $TRAIL timerlat top -P d:1ms:10ms 2>err.txt
	has err.txt "SCHED_DEADLINE is not supported here"
	expect_rc 2 $TRAIL timerlat top -P f:100 2>err.txt
	has err.txt "f:PRIO (1..99)"
	expect_rc 2 $TRAIL timerlat top -d 0 2>err.txt
	has err.txt "not a duration"
	expect_rc 2 $TRAIL osnoise top -r 50 2>err.txt
	has err.txt "a runtime of at least 100 us"
	expect_rc 2 $TRAIL timerlat hist --no-index 2>err.txt
	has err.txt "--no-index needs --with-zeros"
	# no permission for SCHED_FIFO: measured anyway, and said
	if [ "$(id -u)" = 0 ] && command -v setpriv >/dev/null; then
		setpriv --reuid=65534 --regid=65534 --clear-groups \
			$TRAIL timerlat top -q -d 1 -c 0 >o.txt 2>err.txt
		has err.txt "the threads run at the default priority: SCHED_FIFO not allowed"
		grep -qE '^  0 #[0-9]+' o.txt || die "$(cat o.txt)"
	fi
}

t timerlat_top_layout timerlat_top_layout
t timerlat_hist_adds_up timerlat_hist_adds_up
t osnoise_loaded_cpu osnoise_loaded_cpu
t osnoise_hist_and_stop osnoise_hist_and_stop
t recorded recorded
t auto_analysis auto_analysis
t bad_options bad_options
# the live tests: tracefs writable (as root it is mounted for them when it
# is not, and unmounted after)
MOUNTED=
if [ ! -w /sys/kernel/tracing/instances ] && [ "$(id -u)" = 0 ] &&
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null; then
	MOUNTED=1
fi
if [ -w /sys/kernel/tracing/instances ] && [ -d /sys/kernel/tracing/events/irq_vectors ]; then
	t live_timerlat_irq live_timerlat_irq
	t live_osnoise_attribution live_osnoise_attribution
else
	skip live_timerlat_irq "tracefs is not writable here (not root, or no tracefs): the kernel's events cannot be read"
	skip live_osnoise_attribution "tracefs is not writable here (not root, or no tracefs): the kernel's events cannot be read"
fi
[ -z "$MOUNTED" ] || umount /sys/kernel/tracing
