#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Packaging: every tool has a clean man page, a README entry and a suite, and
# installs and builds statically.

load helpers

tools() {
	for f in "$ROOT"/tools/*.c; do basename "$f" .c; done
}

@test "every tool has a man page with the shared sections, clean under mandoc -Tlint" {
	for t in $(tools); do
		page=$ROOT/man/man8/$t.8
		[ -f "$page" ] || fail "no man page for $t"
		for s in NAME SYNOPSIS DESCRIPTION REQUIREMENTS OPTIONS EXAMPLES OVERHEAD "SEE ALSO"; do
			grep -q "^\.SH \"\?$s" "$page" || fail "$page has no $s section"
		done
	done
	run mandoc -Tlint -W warning "$ROOT"/man/man8/*.8
	assert_success
	assert_output ""
}

# man_options PAGE: what the tags of PAGE's OPTIONS section list, one option
# a line: "-x", "-x ARG", "--long", "--long ARG" or "--long[=ARG]". In a
# tag "-x, --long ARG", ARG is both options'.
man_options() {
	sed -n '/^\.SH OPTIONS/,/^\.SH /p' "$1" | awk 'prev == ".TP" { print } { prev = $0 }' |
		sed -E -e 's/\\f[BIRP]//g' -e 's/\\-/-/g' -e 's/^\.[BIR]+ //' -e 's/"//g' \
			-e 's/ +/ /g' -e 's/ $//' |
		awk '/^-/ {
			n = split($0, opt, /, /)
			arg = match(opt[n], / .*/) ? substr(opt[n], RSTART) : ""
			for (i = 1; i <= n; i++)
				print opt[i] (opt[i] ~ /[ []/ ? "" : arg)
		}' | sort -u
}

@test "every man page lists each of its tool's options, short and long, with the argument --help names, and no other" {
	local bad=
	for t in $(tools); do
		# The tool's own option table, as completion reads it.
		"$BIN/$t" --complete | sed -E 's/^(--[^=[]*)=/\1 /' | sort -u > "$BATS_TEST_TMPDIR/$t.tool"
		[ "$(grep -c '^--' "$BATS_TEST_TMPDIR/$t.tool")" -ge 8 ] || fail "$t --complete: $(cat "$BATS_TEST_TMPDIR/$t.tool")"
		man_options "$ROOT/man/man8/$t.8" > "$BATS_TEST_TMPDIR/$t.man"
		run comm -3 "$BATS_TEST_TMPDIR/$t.tool" "$BATS_TEST_TMPDIR/$t.man"
		[ -z "$output" ] || bad+="$t: only in --complete (left), only in $t.8 (right):
$output
"
	done
	[ -z "$bad" ] || fail "$bad"
}

@test "every tool has a row in README's table, a section in docs/tools.md and a bats suite" {
	for t in $(tools); do
		grep -q "^| $t | .* | \[$t(8)\](man/man8/$t.8) |$" "$ROOT/README.md" ||
			fail "README.md's table has no row for $t"
		grep -q "^## $t\$" "$ROOT/docs/tools.md" || fail "docs/tools.md has no '## $t' section"
		ls "$ROOT"/tests/*"$t"*.bats >/dev/null || fail "no bats suite for $t"
	done
}

# doc_pages: README.md and every page under docs/, relative to ROOT.
doc_pages() {
	(cd "$ROOT" && echo README.md && find docs -name '*.md' | sort)
}

@test "every relative link and image in README and docs/ leads to a file that is there" {
	local page target bad=
	for page in $(doc_pages); do
		# [text](target) and ![alt](target), outside code spans.
		for target in $(sed 's/`[^`]*`//g' "$ROOT/$page" | grep -oE '\]\([^) ]+\)' |
				sed -E 's/^\]\(//; s/\)$//; s/#.*//'); do
			case $target in http://* | https://* | mailto:* | '') continue ;; esac
			[ -e "$ROOT/$(dirname "$page")/$target" ] || bad+="$page: $target
"
		done
	done
	[ "$(doc_pages | wc -l)" -ge 10 ] || fail "docs/ has $(doc_pages | wc -l) pages"
	[ -z "$bad" ] || fail "links to nothing:
$bad"
}

@test "docs/performance.md is what make bench-doc wrote: every benchmark's section, dated, with its commit and machine" {
	local perf=$ROOT/docs/performance.md b n=0 listed
	listed=$(sed -n '/^all="/,/"$/p' "$ROOT/scripts/bench-doc" | tr -d '"' | sed 's/^all=//')
	for b in "$ROOT"/tests/bench/*; do
		b=${b##*/}
		[ "$b" != lib.sh ] || continue
		n=$((n + 1))
		grep -qw "$b" <<< "$listed" || fail "scripts/bench-doc does not run tests/bench/$b"
		grep -qx "<!-- bench:$b -->" "$perf" || fail "docs/performance.md has no section for $b"
		# Its heading, the command that printed it, the day, commit and machine, its output.
		sed -n "/^<!-- bench:$b -->\$/,/^<!-- \/bench:$b -->\$/p" "$perf" > "$BATS_TEST_TMPDIR/s"
		grep -qx "## $b" "$BATS_TEST_TMPDIR/s" || fail "$b's section has no '## $b'"
		grep -qE "^\`make bench BENCH=$b\`, 20[0-9]{2}-[01][0-9]-[0-3][0-9], commit [0-9a-f]{7,}" \
			"$BATS_TEST_TMPDIR/s" || fail "$b's section says not when and at which commit: $(head -8 "$BATS_TEST_TMPDIR/s")"
		grep -qE '^Linux [^ ]+ (x86_64|aarch64), [0-9]+ CPUs' "$BATS_TEST_TMPDIR/s" ||
			fail "$b's section says not on which machine"
		[ "$(grep -c '^```$' "$BATS_TEST_TMPDIR/s")" = 2 ] || fail "$b's section has no output block"
	done
	[ "$n" -ge 15 ] || fail "only $n benchmarks in tests/bench"
}

@test "no page but docs/performance.md gives a measured figure, and its links there reach a section" {
	local page hits= anchor
	for page in $(doc_pages); do
		[ "$page" != docs/performance.md ] || continue
		# Ratios, sub-millisecond costs and medians are what the benchmarks print.
		hits+=$(grep -nE '[0-9]\.[0-9]+x\b|µs|[0-9] ?ns\b|ns/run|median of' "$ROOT/$page" | sed "s|^|$page:|")
		for anchor in $(grep -oE 'performance\.md#[a-z0-9-]+' "$ROOT/$page" | sed 's/.*#//'); do
			grep -qx "## $anchor" "$ROOT/docs/performance.md" ||
				hits+="$page: a link to performance.md#$anchor, which has no such section
"
		done
	done
	[ -z "$hits" ] || fail "figures belong in docs/performance.md (make bench-doc):
$hits"
}

@test "README and docs/ name every option the tools have, and no option they lack" {
	local t long short missing= T=$BATS_TEST_TMPDIR
	# Options as the docs write them, in code: "--name", "--name=ARG", "-x", "-x ARG".
	(cd "$ROOT" && cat $(doc_pages)) | grep -oE '`[^`]*`' > "$T/code"
	grep -oE -- '(^|[ `(])--[a-z][a-z0-9-]*' "$T/code" | grep -oE -- '--[a-z0-9-]+' | sort -u > "$T/named"
	grep -oE -- '(^|[ `(])-[A-Za-z]([ `=,)]|$)' "$T/code" | grep -oE -- '-[A-Za-z]' | sort -u > "$T/short"
	for t in $(tools); do
		# "-x, --long=ARG" or "--long", as --help lists them.
		while read -r long short; do
			grep -qxF -- "$long" "$T/named" && continue
			[ -n "$short" ] && grep -qxF -- "$short" "$T/short" && continue
			missing+="$t $long "
		done < <("$BIN/$t" --help | sed -nE 's/^ +(-([A-Za-z0-9]), )?(--[a-z0-9-]+).*/\3 \2/p' |
			sed -E 's/ ([A-Za-z0-9])$/ -\1/' | grep -vE -- '^--(help|usage|version) ')
		"$BIN/$t" --complete | grep -oE '^--[a-z0-9-]+' >> "$T/known"
	done
	[ -z "$missing" ] || fail "options the docs name nowhere: $missing"
	# --complete lists the others, for bash's completion; and other programs'
	# options the docs name (CPython's ./configure, node).
	printf '%s\n' --complete --enable-shared --perf-basic-prof >> "$T/known"
	sort -u -o "$T/known" "$T/known"
	run comm -13 "$T/known" "$T/named"
	[ -z "$output" ] || fail "options the docs name that no tool has: $(echo $output)"
}

@test "make install puts the tools, pages and completion in place; make uninstall takes all of it away" {
	dest=$BATS_TEST_TMPDIR/root
	mkdir "$dest"
	run make -C "$ROOT" -s install DESTDIR="$dest" PREFIX=/usr/local
	assert_success
	for t in $(tools); do
		[ -x "$dest/usr/local/sbin/$t" ] || fail "$t not installed"
		[ -f "$dest/usr/local/share/man/man8/$t.8" ] || fail "$t.8 not installed"
		[ -f "$dest/usr/local/share/bash-completion/completions/$t" ] || fail "no completion for $t"
	done
	run make -C "$ROOT" -s uninstall DESTDIR="$dest" PREFIX=/usr/local
	assert_success
	run find "$dest" -mindepth 1
	assert_output ""
}

@test "bash completion offers each tool's own options, and values for their arguments" {
	touch "$BATS_TEST_TMPDIR/planted.svg"
	# In a shell of its own, as bash-completion would load it.
	run bash -c '
		PATH=$1:$PATH
		source "$2/completion/bpfscope.bash"
		c() { COMP_WORDS=("$@"); COMP_CWORD=$(( $# - 1 )); COMPREPLY=(); _bpfscope "$1"; echo "${COMPREPLY[*]}"; }
		echo "1 $(c profile --fr)"
		echo "2 $(c runqlat --per)"
		echo "3 $(c profile --per)"
		echo "4 $(c offcputime --svg = "$3/pla")"
		echo "5 $$ $(c profile -p "$$")"
		echo "6 $(c profile -C "")"
		echo "7 $(c biolatency --dis)"
		echo "8 $(c readdirlat --)"
		echo "9 $(c profile --svg "$3/pla")"
		echo "10 $(c profile --cpu "")"
		echo "11 $(c runqlat --pid "$$")"
		echo "12 $(c profile --debuginfod "")"' _ "$BIN" "$ROOT" "$BATS_TEST_TMPDIR" < /dev/null
	assert_success
	assert_line "1 --frequency="
	assert_line "2 --percentiles"
	# profile has no --percentiles: it is not offered.
	assert_line "3 "
	assert_line "4 $BATS_TEST_TMPDIR/planted.svg"
	# The shell's own pid is among the pids offered to profile -p (with
	# any longer pids that start with its digits).
	read -r _ shell pids < <(grep '^5 ' <<<"$output")
	[[ " $pids " == *" $shell "* ]] || fail "pid $shell not in: $pids"
	assert_line --regexp "^6 0( [0-9]+)*$"
	assert_line "7 --disks --disk="
	# A long option's argument as the next word, as --help shows it.
	assert_line "9 $BATS_TEST_TMPDIR/planted.svg"
	assert_line --regexp "^10 0( [0-9]+)*$"
	read -r _ pids < <(grep '^11 ' <<<"$output")
	[[ " $pids " == *" $shell "* ]] || fail "runqlat --pid: pid $shell not in: $pids"
	# An optional argument only follows "=": a word after it is a positional.
	assert_line "12 "
	# Every long option readdirlat's --help lists, and no other.
	offered=$(sed -n 's/^8 //p' <<<"$output" | tr ' ' '\n' | sed 's/=$//' | sort)
	listed=$("$BIN/readdirlat" --help |
		sed -nE 's/^ +(-[^ ], )?(--[a-z][a-z-]*).*/\2/p' | sort)
	[ "$offered" = "$listed" ] || fail "offered: $offered; --help: $listed"
}

@test "make STATIC=1 builds self-contained binaries that run" {
	# Where make vm-prep, which CI runs beside this suite on the same tree,
	# builds them too, under a lock. CI runs it at idle priority: on a
	# machine that leaves it no idle CPU it may never let go, so a lock
	# held sends this build to a place of its own instead of waiting.
	mkdir -p "$ROOT/build"
	out=build/static
	exec 9> "$ROOT/build/.static.lock"
	flock -n 9 || out=$BATS_TEST_TMPDIR/static
	run make -C "$ROOT" -s STATIC=1 OUTPUT="$out"
	exec 9>&-
	assert_success
	[[ $out = /* ]] || out=$ROOT/$out
	for t in $(tools); do
		bin=$out/bin/$t
		run ldd "$bin"
		assert_output --partial "not a dynamic executable"
		run "$bin" --version
		assert_success
		assert_output --regexp "^$t \(bpfscope\) "
	done
}

@test "a missing build dependency stops with one line naming the package and make deps" {
	run env PATH=/nonexistent /bin/sh "$ROOT/scripts/deps.sh" check build
	assert_failure 1
	[ "${#lines[@]}" -eq 1 ]
	assert_output --regexp '^missing: .*clang.*bpftool.* \(Debian packages\); run: sudo make deps$'
}
