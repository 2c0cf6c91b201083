#!/usr/bin/env bash
# doc/usage.md documents every option each subcommand's --help prints:
# every spelling of it (-x and --name) appears in the command's section of
# the doc. An option added to a command's table (tools/trail/opt.h) and
# not to the doc fails here.
. "$(dirname "$0")/lib.sh"
DOC=$SRC/doc/usage.md

# The commands `trail --help` lists.
commands() {
	$TRAIL --help | sed -n '/^Commands:/,/^$/s/^  \([a-z]\+\) .*/\1/p'
}

# The spellings of the options `trail CMD --help` prints, one a line: its
# option lines are "  -x, --name META", "  -x META" or "      --name META"
# (the text of a longer help starts further right).
help_options() { # command
	$TRAIL "$1" --help | grep -E '^  (-[[:alnum:]]|    --[[:alnum:]])' |
		sed -E 's/^ +//; s/^(-[[:alnum:]](, --[[:alnum:]-]+)?|--[[:alnum:]-]+).*/\1/; s/, /\n/'
}

# The doc's text about CMD: its "## trail CMD" section, and for record
# the "## Function tracers" section that its tracer options point to.
section() { # command
	awk -v want="$1" '/^## /{ on = $0 == "## trail " want ||
		(want == "record" && $0 == "## Function tracers") } on' "$DOC"
}

documented() { # command
	local cmd=$1 text opts o missing=""
	text=$(section "$cmd")
	opts=$(help_options "$cmd")
	if [ -z "$opts" ]; then
		[ "$cmd" = version ] && return 0 # it has no options
		die "trail $cmd --help prints no options"
	fi
	[ -n "$text" ] || die "doc/usage.md has no '## trail $cmd' section"
	for o in $opts; do
		# the spelling as a word of its own: -P, not the -P of -PID
		grep -qE -- "(^|[^[:alnum:]-])$o([^[:alnum:]-]|$)" <<<"$text" ||
			missing="$missing $o"
	done
	[ -z "$missing" ] || die "doc/usage.md, '## trail $cmd': missing$missing"
}

for cmd in $(commands); do
	t "usage_doc_$cmd" documented "$cmd"
done
