#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The symbolizer (common/syms.c) through tests/unit/symtest.c, on a workload
# that prints the run-time addresses of its own functions.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	S=$BUILD/tests/unit/symtest
	SW=$BUILD/tests/symwork
}

teardown() {
	stop_bg ${SPID:-} ${TPID:-}
	rm -f "/tmp/perf-${SPID:-0}.map"
	assert_nothing_loaded profile
}

# start BINARY [wrapper...]: runs the workload, sets SPID and the addresses.
start() {
	: > "$T/sw"
	"$@" > "$T/sw" &
	SPID=$!
	wait_for_line "$T/sw" '^ready' 60
	SPID=$(awk '/^pid/ { print $2 }' "$T/sw")
	ALPHA=$(awk '/^symwork_alpha/ { print $2 }' "$T/sw")
	BETA=$(awk '/^symwork_beta/ { print $2 }' "$T/sw")
	GAMMA=$(awk '/^symlib_gamma/ { print $2 }' "$T/sw")
	JIT=$(awk '/^jit/ { print $2 }' "$T/sw")
}

@test "syms: a PIE executable and a shared library, at their load addresses" {
	require_bpf
	start "$SW"
	run "$S" "$SPID" "$ALPHA" "$BETA" "$GAMMA"
	assert_success
	assert_line --index 0 "symwork_alpha+0x0 [symwork]"
	assert_line --index 1 "symwork_beta+0x0 [symwork]"
	assert_line --index 2 "symlib_gamma+0x0 [libsymlib.so]"
}

@test "syms: a PLT stub is named function@plt, as perf and gdb name it" {
	require_bpf
	start "$SW"
	# The stub's link-time address, as objdump names it, moved to where symwork runs.
	plt=$(objdump -d "$SW" | awk '/<printf@plt>:/ { print $1; exit }')
	vaddr=$(nm "$SW" | awk '$3 == "symwork_alpha" { print $1 }')
	[ -n "$plt" ]
	[ -n "$vaddr" ]
	run "$S" "$SPID" "$(printf "%x" $((ALPHA - 0x$vaddr + 0x$plt)))"
	assert_output "printf@plt+0x0 [symwork]"
}

@test "syms: a stripped binary, its symbols in a debug file found by build-id" {
	require_bpf
	mkdir -p "$T/bin" "$T/debug"
	cp "$BUILD/tests/libsymlib.so" "$T/bin/"
	objcopy --only-keep-debug "$SW" "$T/symwork.debug"
	objcopy --strip-all "$SW" "$T/bin/symwork"
	id=$(readelf -n "$T/bin/symwork" | awk '/Build ID/ { print $3 }')
	mkdir -p "$T/debug/.build-id/${id:0:2}"
	mv "$T/symwork.debug" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	start "$T/bin/symwork"
	run env BPFSCOPE_DEBUGINFO_PATH="-:$T/debug" "$S" "$SPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [symwork]"
	# Without the debug file the name is honestly unknown, never a wrong one.
	run env BPFSCOPE_DEBUGINFO_PATH="-:$T/nowhere" "$S" "$SPID" "$ALPHA"
	assert_output "[unknown]"
}

@test "syms: a stripped binary with a .gnu_debuglink next to it" {
	require_bpf
	mkdir -p "$T/bin"
	cp "$BUILD/tests/libsymlib.so" "$T/bin/"
	objcopy --only-keep-debug "$SW" "$T/bin/symwork.debug"
	objcopy --strip-all --add-gnu-debuglink="$T/bin/symwork.debug" "$SW" "$T/bin/symwork"
	start "$T/bin/symwork"
	run "$S" "$SPID" "$BETA"
	assert_output "symwork_beta+0x0 [symwork]"
}

@test "syms: a stripped binary carrying MiniDebugInfo (.gnu_debugdata)" {
	require_bpf
	mkdir -p "$T/bin"
	cp "$BUILD/tests/libsymlib.so" "$T/bin/"
	# As distributions build it: the function symbols, xz-compressed, inside the stripped binary.
	objcopy --only-keep-debug "$SW" "$T/full.debug"
	objcopy --strip-debug --remove-section=.comment "$T/full.debug" "$T/mini"
	xz --keep "$T/mini"
	objcopy --strip-all --add-section .gnu_debugdata="$T/mini.xz" "$SW" "$T/bin/symwork"
	run readelf -S "$T/bin/symwork"
	assert_output --partial .gnu_debugdata
	refute_output --partial .symtab
	start "$T/bin/symwork"
	run env BPFSCOPE_DEBUGINFO_PATH="-:$T/nowhere" "$S" "$SPID" "$ALPHA" "$BETA"
	assert_success
	assert_line --index 0 "symwork_alpha+0x0 [symwork]"
	assert_line --index 1 "symwork_beta+0x0 [symwork]"
}

@test "syms: a process in another mount namespace, its binary where the host has none" {
	require_bpf
	mkdir -p "$T/ns"
	start unshare -m --propagation private sh -c "mount -t tmpfs none '$T/ns' &&
		cp '$SW' '$BUILD/tests/libsymlib.so' '$T/ns/' && exec '$T/ns/symwork'"
	[ ! -e "$T/ns/symwork" ]	# not in our namespace
	run "$S" "$SPID" "$ALPHA" "$GAMMA"
	assert_line --index 0 "symwork_alpha+0x0 [symwork]"
	assert_line --index 1 "symlib_gamma+0x0 [libsymlib.so]"
}

@test "syms: a process whose binary was deleted after it started" {
	require_bpf
	mkdir -p "$T/del"
	cp "$SW" "$BUILD/tests/libsymlib.so" "$T/del/"
	start "$T/del/symwork"
	rm "$T/del/symwork"
	run "$S" "$SPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [symwork]"
	# Replaced by another file at the same path: still the mapped one.
	cp /bin/true "$T/del/symwork"
	run "$S" "$SPID" "$BETA"
	assert_output "symwork_beta+0x0 [symwork]"
}

@test "syms: past --symbol-memory, tables let go are read again from the very file mapped" {
	require_bpf
	mkdir -p "$T/del"
	cp "$SW" "$BUILD/tests/libsymlib.so" "$T/del/"
	start "$T/del/symwork"
	printf '%x 40 jitted_fn\n' "$JIT" > "/tmp/perf-$SPID.map"
	# Its path now another binary: only the file the process maps names it.
	rm "$T/del/symwork"
	cp /bin/true "$T/del/symwork"
	jit=$(printf '%x' $((JIT + 0x10)))
	# One byte: each binary's tables are let go once another has named a frame since.
	run "$S" -m 1 "$SPID" "$ALPHA" "$GAMMA" "$jit" "$BETA" "$GAMMA" "$jit" "$ALPHA"
	assert_success
	want="symwork_alpha+0x0 [symwork]
symlib_gamma+0x0 [libsymlib.so]
jitted_fn+0x10 [[jit]]
symwork_beta+0x0 [symwork]
symlib_gamma+0x0 [libsymlib.so]
jitted_fn+0x10 [[jit]]
symwork_alpha+0x0 [symwork]"
	[ "$(grep -v -e '^bpfscope' -e '^symtest' <<< "$output")" = "$want" ] || fail "$output"
	# Let go: symwork, libsymlib twice, the perf map, symwork again.
	assert_output --regexp "tables let go [4-9] times, read again [3-9] times"
	refute_output --partial "were gone"
	# The budget is what decides: unbounded, nothing is let go.
	run "$S" -m 1000000000 "$SPID" "$ALPHA" "$GAMMA" "$jit" "$BETA" "$GAMMA" "$jit" "$ALPHA"
	assert_success
	refute_output --partial "let go"
}

@test "syms: JIT code named from /tmp/perf-PID.map" {
	require_bpf
	start "$SW"
	printf '%x 40 jitted_fn\n' "$JIT" > "/tmp/perf-$SPID.map"
	run "$S" "$SPID" "$(printf '%x' $((JIT + 0x10)))" "$(printf '%x' $((JIT + 0x50)))"
	assert_line --index 0 "jitted_fn+0x10 [[jit]]"
	assert_line --index 1 "[unknown]"
}

@test "syms: kernel addresses, and nothing past the end of the kernel's text" {
	require_bpf
	v=$(awk '$3 == "vfs_read" { print $1; exit }' /proc/kallsyms)
	e=$(awk '$3 == "_etext" { print $1; exit }' /proc/kallsyms)
	# Init text lies above _etext, and is the highest code of all when no
	# module or BPF program is loaded: the address past it is nobody's too.
	ei=$(awk '$3 == "_einittext" { print $1; exit }' /proc/kallsyms)
	[ -n "$ei" ]
	run "$S" -k "$v" "$(printf '%x' $((0x$v + 16)))" "$(printf '%x' $((0x$e + 16)))" \
		ffffffffffffff00 "$(printf '%x' $((0x$ei + 16)))"
	assert_line --index 0 "vfs_read+0x0"
	assert_line --index 1 "vfs_read+0x10"
	assert_line --index 2 "[unknown]"
	assert_line --index 3 "[unknown]"
	assert_line --index 4 "[unknown]"
}

@test "syms: the kernel names its own addresses as /proc/kallsyms would, its table read only where it cannot" {
	require_bpf
	# Every 13th function of the kernel: its first byte, the next, the
	# one halfway to the next function, its last, and the next's first.
	# Not BPF programs' ([bpf]), nor the room next to one: other processes
	# on the machine load and unload them while the test runs.
	/usr/bin/python3 - > "$T/addrs" <<-'EOF'
	syms = [l.split() for l in open("/proc/kallsyms")]
	bpf = {int(f[0], 16) for f in syms if f[3:] == ["[bpf]"]}
	starts = sorted({int(f[0], 16) for f in syms if f[1] in "tTwW"} | bpf)
	for i in range(0, len(starts) - 1, 13):
	    a, b = starts[i], starts[i + 1]
	    if a in bpf or b in bpf:
	        continue
	    print("%x\n%x\n%x\n%x\n%x" % (a, a + 1, a + (b - a) // 2, b - 1, b))
	EOF
	[ "$(wc -l < "$T/addrs")" -ge 5000 ]
	"$S" -k - < "$T/addrs" > "$T/asked" 2> "$T/asked.err"
	BPFSCOPE_DISABLE=bpf_snprintf "$S" -k - < "$T/addrs" > "$T/table" 2> "$T/table.err"
	grep -q 'kernel symbols: all of /proc/kallsyms' "$T/table.err" || fail "$(cat "$T/table.err")"
	IFS=. read -r major minor _ < /proc/sys/kernel/osrelease
	if [ $((major * 100 + minor)) -ge 513 ]; then
		# bpf_snprintf()'s %pS, from Linux 5.13.
		grep -q 'kernel symbols: named by the kernel' "$T/asked.err" || fail "$(cat "$T/asked.err")"
	else
		grep -q 'kernel symbols: all of /proc/kallsyms' "$T/asked.err" || fail "$(cat "$T/asked.err")"
	fi
	[ "$(wc -l < "$T/asked")" -eq "$(wc -l < "$T/addrs")" ]
	# The same function, start and module for each address; where names
	# share a start (aliases) either may name it, as either way did before.
	run /usr/bin/python3 - "$T/asked" "$T/table" <<-'EOF'
	import sys
	aliases = {}
	for l in open("/proc/kallsyms"):
	    f = l.split()
	    aliases.setdefault(int(f[0], 16), set()).add(f[2])
	named = bad = 0
	for a, t in zip(open(sys.argv[1]), open(sys.argv[2])):
	    a, t = a.split(), t.split()
	    if len(a) == 3:
	        named += 1
	    if a == t:
	        continue
	    # A BPF program loaded or unloaded between the two runs, by another
	    # process, where the room beside a function was free.
	    if any(w.startswith("bpf_prog_") or w == "[bpf]" for w in a + t):
	        continue
	    if len(a) != 3 or len(t) != 3 or a[1:] != t[1:] or not {a[0], t[0]} <= aliases.get(int(a[1], 16), set()):
	        bad += 1
	        print("differ:", " ".join(a), "|", " ".join(t))
	print("named", named, "differ", bad)
	EOF
	assert_line --regexp '^named [0-9]+ differ 0$'
	named=$(awk '$1 == "named" { print $2 }' <<< "$output")
	[ "$named" -ge $(($(wc -l < "$T/addrs") * 99 / 100)) ] || fail "$output"
	# Past 50 kept, let go (a run without end, as BPF programs come and
	# go): named again alike.
	"$S" -k - 50 < "$T/addrs" > "$T/trimmed" 2> "$T/trimmed.err"
	cmp "$T/asked" "$T/trimmed" || fail "$(diff "$T/asked" "$T/trimmed" | head)"
	if grep -q 'named by the kernel' "$T/asked.err"; then
		n=$(awk '/^let go/ { print $3 }' "$T/trimmed.err")
		# Two functions in each five addresses: one let go in each 51 named.
		[ "$n" -ge $((named / 5 / 51)) ] || fail "$(cat "$T/trimmed.err")"
	fi
	# Each function asked once, and each address no symbol holds too.
	if grep -q 'named by the kernel' "$T/asked.err"; then
		v=$(awk '$3 == "vfs_read" { print $1; exit }' /proc/kallsyms)
		for i in $(seq 100); do echo "$v"; echo ffffffffffffff00; done > "$T/again"
		"$S" -k - < "$T/again" > "$T/again.out" 2> "$T/again.err"
		[ "$(grep -c '^vfs_read ' "$T/again.out")" -eq 100 ]
		[ "$(grep -c '^\[unknown\]$' "$T/again.out")" -eq 100 ]
		grep -q 'kernel symbols: 2 addresses asked of the kernel' "$T/again.err" ||
			fail "$(cat "$T/again.err")"
	fi
	run bpftool prog show
	refute_output --partial "name ksym_name"
}

@test "syms: the highest BPF program's code is its own, its end unbounded by a next symbol" {
	# kallsyms gives BPF programs no size; the one allocated last (often
	# the tool's own, leading every kernel stack it takes) has no next
	# symbol to end it either. Core init text ends at _einittext.
	cat > "$T/kallsyms" <<-EOF
	ffffffff81000000 T _stext
	ffffffff81000100 T vfs_read
	ffffffff82000000 T _etext
	ffffffff83000000 T _sinittext
	ffffffff83000000 T start_kernel
	ffffffff83001000 T _einittext
	ffffffffc0001000 t bpf_prog_0123456789abcdef_one	[bpf]
	ffffffffc0002000 t bpf_prog_0123456789abcdef_last	[bpf]
	EOF
	run "$S" -K "$T/kallsyms" ffffffff81000110 ffffffff83000010 ffffffff83001010 \
		ffffffffc0001010 ffffffffc0002010 ffffffffc0102000 ffffffffffffff00
	assert_line --index 0 vfs_read
	assert_line --index 1 start_kernel
	assert_line --index 2 "[unknown]"
	assert_line --index 3 bpf_prog_0123456789abcdef_one
	assert_line --index 4 bpf_prog_0123456789abcdef_last
	assert_line --index 5 "[unknown]"
	assert_line --index 6 "[unknown]"
}

# hidden_sampled TOOL ARGS...: TOOL ARGS, where /proc/kallsyms shows
# $T/hidden, from its banner until the spinner ($SPID) has had 500 ms more
# of CPU (about 50 samples at 99 Hz, however busy the machine); output in
# $T/out and $T/err.
hidden_sampled() {
	tool_start "$T/out" "$T/err" unshare -m sh -c 'mount --bind "$1" /proc/kallsyms && shift && exec "$@"' \
		- "$T/hidden" "$@"
	wait_cpu "$SPID" $(( $(cpu_ms "$SPID") + 500 ))
	tool_stop || fail "$(tail -n 5 "$T/err")"
}

@test "syms: kallsyms with its addresses hidden (kptr_restrict) names no frame, and the tool says so" {
	require_bpf
	# As kernel.kptr_restrict shows it: every address 0. Kept, each
	# kernel frame took the name of one symbol, the last at address 0.
	sed 's/^[0-9a-f]*/0000000000000000/' /proc/kallsyms > "$T/hidden"
	run "$S" -K "$T/hidden" "$(awk '$3 == "vfs_read" { print $1; exit }' /proc/kallsyms)" ffffffff81000000
	assert_line --index 0 "[unknown]"
	assert_line --index 1 "[unknown]"
	"$WL/spin" 0 > "$T/spin" &
	SPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	# The table, as before 5.13: nothing named, and said.
	hidden_sampled env BPFSCOPE_DISABLE=bpf_snprintf "$BIN/profile" -p "$SPID" -K -F 99 -f
	grep -q 'profile: kernel frames are not named: /proc/kallsyms shows no addresses' "$T/err" ||
		fail "$(cat "$T/err")"
	[ -s "$T/out" ]
	# Every kernel frame unknown, and there are some.
	grep -q '^spin;\[unknown\]' "$T/out" || fail "$(head -5 "$T/out")"
	[ "$(grep -cv '^spin\(;\[unknown\]\)* [0-9]*$' "$T/out")" -eq 0 ] || fail "$(head -5 "$T/out")"
	# The kernel naming its own addresses does not read the file.
	hidden_sampled "$BIN/profile" -p "$SPID" -K -F 99 -f
	IFS=. read -r major minor _ < /proc/sys/kernel/osrelease
	if [ $((major * 100 + minor)) -ge 513 ]; then
		grep -qE '(^|;)(entry_SYSCALL_64|do_syscall_64|__x64_sys_getppid|el0_svc)(;| )' "$T/out" ||
			fail "$(head -5 "$T/out")"
		run grep 'not named' "$T/err"
		assert_failure
	fi
}

@test "syms: a module's symbols carry the module's name" {
	require_bpf
	# A loaded module (from /proc/modules, not a pseudo-module like [bpf]).
	line=$(awk 'NR == FNR { mods["[" $1 "]"] = 1; next }
		($2 == "t" || $2 == "T") && ($4 in mods) { print; exit }' /proc/modules /proc/kallsyms \
		2>/dev/null || true)
	if [ -z "$line" ]; then
		# No loadable modules in this kernel: nothing may claim to be in one.
		run "$S" -k "$(awk '$3 == "vfs_read" { print $1 }' /proc/kallsyms)"
		refute_output --partial "["
		return
	fi
	read -r addr _ name mod <<<"$line"
	run "$S" -k "$addr"
	assert_output "$name+0x0 ${mod}"
}

@test "syms: maps lines parsed as the kernel writes them, every field; malformed ones refused" {
	# Every process's maps, and a deleted program whose name has a space.
	cp /bin/sleep "$T/sl eep"
	"$T/sl eep" 30 &
	SPID=$!
	until grep -q 'sl eep' "/proc/$SPID/maps" 2> /dev/null; do sleep 0.05; done
	rm "$T/sl eep"
	cat /proc/[0-9]*/maps > "$T/maps" 2> /dev/null || true
	[ "$(wc -l < "$T/maps")" -ge 100 ]
	grep -q 'sl eep (deleted)$' "$T/maps"
	# What awk makes of each, numbers without their leading zeros.
	awk '
		function hex(s) { sub(/^0+/, "", s); return s == "" ? "0" : s }
		{
			split($1, a, "-"); split($4, d, ":")
			path = $0
			sub(/^[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ */, "", path)
			del = "-"
			if (sub(/ \(deleted\)$/, "", path)) del = "d"
			printf "%s %s %s %s %s:%s %s %s %s\n", hex(a[1]), hex(a[2]),
				substr($2, 3, 1) == "x" ? "x" : "-", hex($3), hex(d[1]), hex(d[2]),
				$5, del, path
		}' "$T/maps" > "$T/want"
	"$BUILD/tests/unit/mapstest" < "$T/maps" > "$T/got"
	diff "$T/want" "$T/got"
	grep -q ' d .*/sl eep$' "$T/got"
	run "$BUILD/tests/unit/mapstest" <<-'LINES'
		x-2 r-xp 0 0:0 1 /a
		2-1 r-xp 0 0:0 1 /a
		1-2 r-xp 0 100000000:0 1 /a
		1-2 r-xp 0 0:0
		1-2 r-x
		1-2 r-xp 0 0:0 1a /a
		1-2 r-xp 0 0:0 1 /ok
	LINES
	assert_output "invalid
invalid
invalid
invalid
invalid
invalid
1 2 x 0 0:0 1 - /ok"
}
