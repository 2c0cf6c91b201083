#!/usr/bin/env bash
# The Java binding (bindings/java): org.trail.Event over libtrail_jni.so,
# used by tests/cli/java/App.java and recorded as `trail record -e
# 'java:*' -- java ...` records it: exact counts and field values,
# nothing written while not recorded, java.util.logging records through
# org.trail.LoggingHandler, wrong values refused naming the field. Skips
# without a JDK, when meson built no binding (BUILD/bindings/java), and in
# the sanitizer builds.
. "$(dirname "$0")/lib.sh"

JDIR=$BUILD/bindings/java
JAR=$JDIR/trail.jar
APP=$TMP/app
export TRAIL_REGISTRY=$TMP/reg
JAVA=(java -Djava.library.path="$JDIR" -cp "$JAR:$APP" App)
# every run bounded (timeout, and trail record under it): a JVM that
# hangs fails its test, it does not stall the suite
TO=(timeout -k 5 180)

# report's records of FILE for EVENT, their fields only
fields_of() { # file event
	$TRAIL report -q -i "$1" | sed -nE "s/.*: $2: //p"
}

# the test program, compiled once against the jar (the tests after use it)
compile_app() {
	"${TO[@]}" javac --release 11 -encoding UTF-8 -Xlint:all -Werror -cp "$JAR" \
		-d "$APP" "$SRC/tests/cli/java/App.java"
	[ -f "$APP/App.class" ] || die "no App.class"
}

need_app() {
	[ -f "$APP/App.class" ] || die "App not compiled (see compile_app)"
}

# (a) 1000 records guarded by isEnabled(), every value as emitted
requests_exact() {
	need_app
	fresh_registry
	"${TO[@]}" $TRAIL record -q -e 'java:*' -o t.dat -- "${JAVA[@]}" 1000 >out.txt
	has out.txt "wrote 1000"
	[ "$(fields_of t.dat java:done)" = "wrote=1000" ] || die "$(fields_of t.dat java:done)"
	fields_of t.dat java:request >r.txt
	[ "$(wc -l <r.txt)" = 1000 ] || die "$(wc -l <r.txt) records"
	# u32, string, double (report's shortest form: 0, 0.25, 249.75), bool
	seq 0 999 | awk '{ printf "fd=%d path=\"/x/%d\" ms=%s ok=%d\n", $1, $1, $1 * 0.25, $1 % 2 == 0 }' |
		diff -u - r.txt
	# the Java main thread, in the java process
	$TRAIL report -q -i t.dat | grep -m1 java:request | grep -qE '^ *java-[0-9]+ ' ||
		die "$($TRAIL report -q -i t.dat | grep -m1 java:request)"
}

# (b) not recorded, isEnabled() is false: run alone, and under a session
# recording another event of the program's (java:done, its count)
unrecorded() {
	need_app
	fresh_registry
	"${TO[@]}" "${JAVA[@]}" 1000 >out.txt
	has out.txt "wrote 0"
	"${TO[@]}" $TRAIL record -q -e 'java:done' -o n.dat -- "${JAVA[@]}" 1000 >out2.txt
	has out2.txt "wrote 0"
	[ "$(fields_of n.dat java:done)" = "wrote=0" ] || die "$($TRAIL report -q -i n.dat)"
	[ "$($TRAIL report -q -i n.dat | grep -c 'java:request')" = 0 ] || die "java:request recorded"
}

# (c) java.util.logging through LoggingHandler: java:logging with the
# fields of LTTng's JUL agent's event; FINE below the logger's level
logging() {
	need_app
	fresh_registry
	local t0 t1
	t0=$(date +%s%3N)
	"${TO[@]}" $TRAIL record -q -e 'java:logging' -o l.dat -- "${JAVA[@]}" logging >out.txt
	t1=$(date +%s%3N)
	has out.txt "logging enabled=true"
	fields_of l.dat java:logging >l.txt
	[ "$(wc -l <l.txt)" = 3 ] || die "$(cat l.txt)"
	# the thread id is the main thread's (1); millis, the time it logged
	sed -E 's/long_millis=[0-9]+ /long_millis=MS /' l.txt >got.txt
	cat >want.txt <<-'EOF'
	msg="started" logger_name="app.web" class_name="App" method_name="logging" long_millis=MS int_loglevel=800 int_threadid=1
	msg="disk 93% full on /var" logger_name="app.web" class_name="App" method_name="logging" long_millis=MS int_loglevel=900 int_threadid=1
	msg="stopping" logger_name="app.web" class_name="App" method_name="logging" long_millis=MS int_loglevel=1000 int_threadid=1
	EOF
	diff -u want.txt got.txt
	local ms
	for ms in $(sed -nE 's/.*long_millis=([0-9]+) .*/\1/p' l.txt); do
		[ "$ms" -ge "$t0" ] && [ "$ms" -le "$t1" ] || die "millis $ms outside [$t0, $t1]"
	done
	# not recorded: the handler writes nothing and says so
	"${TO[@]}" "${JAVA[@]}" logging >out2.txt
	has out2.txt "logging enabled=false"
}

# (d) every kind of value written as given; wrong values refused with an
# IllegalArgumentException naming the field, recorded or not
types() {
	need_app
	fresh_registry
	"${TO[@]}" $TRAIL record -q -e 'java:*' -o y.dat -- "${JAVA[@]}" types >out.txt
	cat >want.txt <<-'EOF'
	IAE: java:pair: field b = 40000 is out of its range [-32768, 32767]
	IAE: java:request: field fd wants an integer (Integer, Long, Short, Byte), not String "3"
	IAE: java:request: field path wants a String, not Integer 4
	IAE: java:request: field ms wants a Double or Float, not Integer 1
	IAE: java:request: field ok wants a Boolean, not Integer 1
	IAE: java:request: field fd = 4294967296 is out of its range [-2147483648, 4294967295]
	accepted
	IAE: java:request has 4 fields, not 3 values
	IAE: bad definition "broken u32 fd; u33 x" at byte 15: Invalid type (u8..u64, s8..s64, int, char[N], string, double, ...)
	IAE: java: An event of that name has other fields ("request u64 fd")
	EOF
	diff -u want.txt out.txt
	# UTF-8 (a supplementary character too), bytes, s8, u64 past
	# Long.MAX_VALUE (-1), float, a char[4] cut; nulls; emit(long, long);
	# the one accepted request (fd -1: 0xffffffff); nothing of the refused
	fields_of y.dat 'java:[a-z]+' >y.txt
	cat >want.txt <<-'EOF'
	s="é€😀 \"q\"" b={1,2,255} c=-5 big=18446744073709551615 f=0.5 tag="abcd"
	s=(null) b={} c=127 big=9223372036854775807 f=2 tag="x"
	a=7 b=-2
	fd=4294967295 path="/x" ms=1 ok=1
	EOF
	diff -u want.txt y.txt
	# not recorded: the same answers
	"${TO[@]}" "${JAVA[@]}" types >out2.txt
	diff -u out.txt out2.txt
}

# (e) one timeline: Java's events and the C library it calls through JNI
# (libtrail_jni.so's functions, unmodified code, hooked when the JVM
# loads it: --allow-unknown), each write's C call right before its record
one_timeline() {
	need_app
	fresh_registry
	"${TO[@]}" $TRAIL record -q --allow-unknown -e 'java:*' -p function -l 'Java_org_trail_*' \
		-o j.dat -- "${JAVA[@]}" 3 >out.txt
	has out.txt "wrote 3"
	$TRAIL report -q -i j.dat | sed -nE 's/.*: (Java_org_trail_Event_write|java:request: fd=[0-9]).*/\1/p' >seq.txt
	printf '%s\n' Java_org_trail_Event_write 'java:request: fd=0' Java_org_trail_Event_write \
		'java:request: fd=1' Java_org_trail_Event_write 'java:request: fd=2' | diff -u - <(head -6 seq.txt)
}

why=
if ! command -v java >/dev/null || ! command -v javac >/dev/null; then
	why="no java or javac (a JDK: default-jdk-headless)"
elif ldd "$LIBTRAIL" | grep -qE 'lib(asan|tsan|ubsan)'; then
	# (not tried: a JVM handles SIGSEGV itself, LeakSanitizer would
	# count its allocations at exit, and a plain java loading a sanitized
	# libtrail_jni.so finds the sanitizer's runtime not first)
	why="a JVM with a sanitized libtrail_jni.so: run in the plain build"
elif [ ! -f "$JAR" ] || [ ! -f "$JDIR/libtrail_jni.so" ]; then
	why="no $JAR: meson found no JDK when it last configured $BUILD"
fi
if [ -n "$why" ]; then
	for n in compile_app requests_exact unrecorded logging types one_timeline; do
		skip $n "$why"
	done
	exit 0
fi

t compile_app compile_app
t requests_exact requests_exact
t unrecorded unrecorded
t logging logging
t types types
t one_timeline one_timeline
