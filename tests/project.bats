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

@test "every tool has a README entry and a bats suite" {
	for t in $(tools); do
		grep -q "^### $t" "$ROOT/README.md" || fail "README.md has no '### $t' entry"
		ls "$ROOT"/tests/*"$t"*.bats >/dev/null || fail "no bats suite for $t"
	done
}

@test "make install puts the tools in sbin and the pages in share/man/man8" {
	dest=$BATS_TEST_TMPDIR/root
	run make -C "$ROOT" -s install DESTDIR="$dest" PREFIX=/usr/local
	assert_success
	for t in $(tools); do
		[ -x "$dest/usr/local/sbin/$t" ] || fail "$t not installed"
		[ -f "$dest/usr/local/share/man/man8/$t.8" ] || fail "$t.8 not installed"
	done
}

@test "make STATIC=1 builds self-contained binaries that run" {
	run make -C "$ROOT" -s STATIC=1 OUTPUT=build/static
	assert_success
	for t in $(tools); do
		bin=$ROOT/build/static/bin/$t
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
