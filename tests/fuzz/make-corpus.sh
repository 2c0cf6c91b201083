#!/usr/bin/env bash
# tests/fuzz/make-corpus.sh [-b BUILD] [TARGET...] - regenerate the seed
# corpus of the fuzz targets that is made from the build, into
# tests/fuzz/corpus/<target>/ (default targets: reader meta elf ldcache;
# the spec and probe seeds are not made here: they are written by hand,
# but for probe's blob-* files, which are what src/probe/compile.c made of
#   blob-entry           p:grp/ev /lib/libx.so:f+8 n=+4(%di):u32 %si:s16 c=%r8:char s=%r9:symbol
#   blob-return          r:g/ret foo $retval:s32 %dx $stack2
#   blob-strings-arrays  p f s=+0(+8(%di)):string v=+0($arg1):u8[4] $comm bf=+4($arg2):b3@2/32
#   blob-sym             p f @counter+8:s32 @other:x64 @other-4:u16 @4096:u64
#   blob-eprobe          e:g/n app/request p=$path fd=$fd b=+8($bytes):x32 $comm
# with counter in the probed object and other in /usr/lib/libx.so.1, both
# at 0x4010, and fuzz-probe.c's app:request as the source event).
#
#   reader   trace files recorded with BUILD/trail: the bundled example
#            (every event, and with the mono clock), a lossy one (a tiny
#            buffer), an overwrite-mode one, function and function_graph
#            ones of a program built with -fpatchable-function-entry=5,
#            tracepoints inside function-traced calls, and objects unloaded
#            by dlclose. Rerun after any change of the file format.
#   meta     blobs and payloads made by the real macros (BUILD/tests/fuzz/
#            seed-meta).
#   elf      small ELF objects compiled here from the project's sample
#            programs: PIE, non-PIE, relocatable, archive, shared object
#            with RPATH or RUNPATH, DT_RELR, endbr64, =N,M entries, clang's
#            nops, C++ names, stripped, x32, i386, and a few broken ones.
#   ldcache  loader caches (ld.so.cache, the format described in
#            src/session/elfscan.c) written byte by byte, mapping the
#            library fuzz-ldcache.c's executable needs to absent paths.
#
# Note: tests/unit/test-mutate.c pins the number of events it reads from
# corpus/reader/lossy.dat; after regenerating that file, update it (this
# script prints the new figure).
set -eu
SRC=$(cd "$(dirname "$0")/../.." && pwd)
BUILD=$SRC/build
if [ "${1:-}" = "-b" ]; then
	BUILD=$(cd "$2" && pwd)
	shift 2
fi
[ $# -gt 0 ] || set -- reader meta elf ldcache
CORPUS=$SRC/tests/fuzz/corpus
TMP=$(mktemp -d /tmp/trail-corpus.XXXXXX)
trap 'rm -rf "$TMP"' EXIT
CC=${CC:-cc}
CXX=${CXX:-c++}

ninja -C "$BUILD" >/dev/null

reader() {
	local out=$CORPUS/reader T=$BUILD/trail ex=$BUILD/examples/example
	local prog=$BUILD/tests/cli/ftrace-prog-O2
	mkdir -p "$out"
	rec() { # name, trail record arguments...
		local name=$1
		shift
		(cd "$TMP" && "$T" record -q -o "$out/$name" "$@" >/dev/null)
		echo "reader/$name: $(stat -c %s "$out/$name") bytes"
	}
	rec example.dat -e '*' -- "$ex"
	rec example-mono.dat -C mono -e 'app:request' -- "$ex"
	rec lossy.dat -b 16K --chunk-size 4K -e 'app:*' -- "$ex" 3 300
	rec overwrite.dat --overwrite -b 16K --chunk-size 4K -e 'app:*' -- "$ex" 3 300
	rec fgraph.dat -p function_graph --retval -- "$prog"
	rec function.dat -p function -- "$prog" threads
	rec tpleaf.dat -p function_graph -e '*' -- "$BUILD/tests/cli/ftrace-tpleaf"
	rec dlopen.dat -p function_graph -- "$BUILD/tests/cli/ftrace-dlhost"
	echo "reader/lossy.dat: $("$T" report -i "$out/lossy.dat" |
		sed -n 's|.*entries-in-buffer/entries-written: \([0-9]*\)/.*|\1|p' | head -1) events (tests/unit/test-mutate.c)"
}

meta() {
	mkdir -p "$CORPUS/meta"
	"$BUILD/tests/fuzz/seed-meta" "$CORPUS/meta"
	echo "meta: $(ls "$CORPUS/meta" | wc -l) seeds"
}

elf() {
	local out=$CORPUS/elf prog=$SRC/tests/cli/ftrace/prog.c
	local small=(-O2 -g0 -Wl,-z,noseparate-code) pfe=-fpatchable-function-entry=5
	local inc=(-I"$SRC/include")
	mkdir -p "$out"
	rm -f "$out"/*
	# events (trail_meta sections): a program, its objects, an archive
	$CC "${small[@]}" "${inc[@]}" -o "$out/example" "$SRC/examples/example.c" \
		"$SRC/examples/worker.c" -lpthread
	$CC -O2 -g0 "${inc[@]}" -c -o "$out/worker.o" "$SRC/examples/worker.c"
	$CC -O2 -g0 "${inc[@]}" -c -o "$TMP/example.o" "$SRC/examples/example.c"
	ar rcS "$out/libexample.a" "$out/worker.o" "$TMP/example.o"
	# patchable function entries, in each form funcscan.c reads
	$CC "${small[@]}" $pfe -o "$out/prog-pie" "$prog" -lpthread
	$CC "${small[@]}" $pfe -no-pie -o "$out/prog-exec" "$prog" -lpthread
	$CC "${small[@]}" $pfe -Wl,-z,pack-relative-relocs -o "$out/prog-relr" "$prog" -lpthread
	$CC "${small[@]}" $pfe -fcf-protection=full -o "$out/prog-endbr" "$prog" -lpthread
	$CC "${small[@]}" -fpatchable-function-entry=5,2 -o "$out/prog-5-2" "$prog" -lpthread
	$CC -O2 -g0 $pfe -c -o "$out/prog.o" "$prog"
	strip --strip-all -o "$out/prog-stripped" "$out/prog-pie"
	if command -v clang >/dev/null; then
		clang -w "${small[@]}" $pfe -o "$out/prog-clang" "$prog" -lpthread
	fi
	$CXX "${small[@]}" $pfe -o "$out/cxx" "$SRC/tests/cli/ftrace/cxx.cc"
	# shared objects needing libraries (by name, and by a path: sub/libdep.so
	# has no SONAME), found through a SONAME, RUNPATH or RPATH with
	# $ORIGIN/$PLATFORM, or no default directories (-z nodefaultlib)
	mkdir -p "$TMP/sub"
	$CC -shared -fPIC -o "$TMP/sub/libdep.so" "$SRC/tests/cli/ftrace/dlplug.c" -DINNER=dep
	(cd "$TMP" && $CC "${small[@]}" $pfe -shared -fPIC -DINNER=inner_a \
		-Wl,-soname,libplug.so.1 -Wl,--enable-new-dtags,-rpath,'$ORIGIN/../lib:${PLATFORM}/x' \
		-o "$out/plug-runpath.so" "$SRC/tests/cli/ftrace/dlplug.c" \
		-Wl,--no-as-needed -lm sub/libdep.so)
	$CC "${small[@]}" $pfe -shared -fPIC -DINNER=inner_b \
		-Wl,--disable-new-dtags,-rpath,'$ORIGIN:/nonexistent' -Wl,-z,nodefaultlib \
		-o "$out/plug-rpath.so" "$SRC/tests/cli/ftrace/dlplug.c" -Wl,--no-as-needed -lm
	# other classes and machines
	printf 'int f(int x) { return x + 1; }\nint g(void) { return f(2); }\n' >"$TMP/x.c"
	$CC -mx32 -O2 $pfe -c -o "$out/x32.o" "$TMP/x.c" 2>/dev/null || rm -f "$out/x32.o"
	$CC -m32 -O2 -c -o "$out/i386.o" "$TMP/x.c" 2>/dev/null || rm -f "$out/i386.o"
	# broken ones: a header alone, an ELF cut mid-sections, an empty
	# archive, not ELF at all
	head -c 64 "$out/prog-exec" >"$out/header-only"
	head -c 6000 "$out/example" >"$out/cut"
	printf '!<arch>\n' >"$out/empty.a"
	printf 'not an ELF file\n' >"$out/text"
	echo "elf: $(ls "$out" | wc -l) seeds, $(du -sk "$out" | cut -f1) KB"
}

# ld.so.cache pieces, little-endian
le32() { # the escapes first, then the bytes
	printf "$(printf '\\x%02x\\x%02x\\x%02x\\x%02x' $(($1 & 255)) $(($1 >> 8 & 255)) \
		$(($1 >> 16 & 255)) $(($1 >> 24 & 255)))"
}
le64() { le32 $(($1 & 0xffffffff)); le32 $(($1 >> 32 & 0xffffffff)); }

# A new-format cache: cache FLAGS [KEY VALUE HWCAP]... (flags 2: little
# endian). The strings follow the entries; offsets count from the magic.
cache() {
	local flags=$1 n=$((($# - 1) / 3)) strings="" off i
	local -a e=("${@:2}")
	for ((i = 0; i < n * 3; i += 3)); do
		strings+="${e[i]}"$'\n'"${e[i + 1]}"$'\n'
	done
	printf 'glibc-ld.so.cache1.1'
	le32 $n
	le32 ${#strings}
	le32 "$flags" # flags byte, pad[3]
	le32 0; le32 0; le32 0; le32 0 # extension offset, unused[3]
	off=$((48 + n * 24))
	for ((i = 0; i < n * 3; i += 3)); do
		le32 0x303                           # flags: ELF, x86-64 libc6
		le32 $off                            # key
		le32 $((off + ${#e[i]} + 1))         # value
		le32 0                               # osversion
		le64 "${e[i + 2]}"                   # hwcap
		off=$((off + ${#e[i]} + ${#e[i + 1]} + 2))
	done
	printf '%s' "$strings" | tr '\n' '\0'
}

ldcache() {
	local out=$CORPUS/ldcache lib=libtrailfuzz.so.1
	mkdir -p "$out"
	rm -f "$out"/*
	cache 2 "$lib" "/nonexistent/lib/$lib" 0 >"$out/one"
	cache 2 libc.so.6 /nonexistent/libc.so.6 0 \
		"$lib" "/nonexistent/hwcap/$lib" 2 \
		"$lib" "/nonexistent/lib/$lib" 0 >"$out/hwcap"
	cache 0 "$lib" "relative/$lib" 0 >"$out/no-endianness"
	cache 3 "$lib" "/nonexistent/lib/$lib" 0 >"$out/big-endian"
	# the old format first: "ld.so-1.7.0", u32 nlibs, 12-byte entries,
	# then the new one at the next multiple of 8
	{ printf 'ld.so-1.7.0\0'; le32 1; le32 1; le32 0; le32 0; le32 0
	  cache 2 "$lib" "/nonexistent/old/$lib" 0; } >"$out/old-and-new"
	echo "ldcache: $(ls "$out" | wc -l) seeds"
}

for t in "$@"; do
	case $t in
	reader | meta | elf | ldcache) "$t" ;;
	*) echo "make-corpus.sh: no such target: $t (reader meta elf ldcache)" >&2; exit 2 ;;
	esac
done
