#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# User stacks of code without frame pointers (tests/nofp, built -O2
# -fomit-frame-pointer, as most of a distribution is), walked with their
# call-frame information: the whole chain from the leaf to main, through a
# shared library, through a signal handler, for a blocked thread and its
# waker, in every output; and python3 as Debian ships it.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	NOFP=$WL/nofp
	export HOME=$T GOCACHE=$T/gocache
}

teardown() {
	stop_bg ${WPID:-} ${TPID:-}
	for t in profile offcputime offwaketime; do
		assert_nothing_loaded "$t"
	done
}

start() {
	"$@" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid '
}

# share FOLDED LEAF CHAIN: of the counts of folded lines holding frame LEAF,
# the percentage whose stack has CHAIN (";"-separated frames, root first)
# right above it.
share() {
	awk -v leaf=";$2(;| )" -v chain=";$3;$2(;| )" '
		$0 ~ leaf { all += $NF; if ($0 ~ chain) whole += $NF }
		END { if (!all) { print "no samples of the leaf"; exit 1 }
		      printf "%d of %d\n", whole, all; exit !(whole * 100 >= 95 * all) }' "$1"
}

CHAIN="main;nofp_level1;nofp_level2;nofp_level3"

@test "unwind: profile -f, a -O2 chain without frame pointers, whole to main" {
	require_bpf
	start "$NOFP" spin 6
	"$BIN/profile" -v -p "$WPID" -F 199 -f 3 > "$T/folded" 2> "$T/err"
	share "$T/folded" nofp_leaf "$CHAIN"
	# -v says what each process got.
	grep -qE "pid $WPID: CFI for [0-9]+ of [0-9]+ executable mappings" "$T/err"
	grep -q 'user stacks: CFI' "$T/err"
	# The vdso's code under clock_gettime is named: by its symbol, or where it
	# has none (its paravirtual clock read, on KVM guests) by the vdso itself.
	grep -q ';clock_gettime;' "$T/folded"
	run grep -E ';clock_gettime;\[unknown\]' "$T/folded"
	assert_failure
	# The kernel's frame-pointer walk, as before: the chain lost at once.
	"$BIN/profile" --unwind=fp -p "$WPID" -F 199 -f 2 > "$T/fp" 2>/dev/null
	run share "$T/fp" nofp_leaf "$CHAIN"
	assert_failure
	grep -q nofp_leaf "$T/fp"
}

@test "unwind: the same chain in the text, JSON, SVG and pprof outputs" {
	require_bpf
	start "$NOFP" spin 6
	"$BIN/profile" -p "$WPID" -F 199 --json --svg "$T/p.svg" --pprof "$T/p.pb.gz" 3 \
		> "$T/json" 2>/dev/null
	# JSON: frames root first, the chain right above the leaf.
	jq -r '(.frames | join(";") | "x;" + . + " ") + (.samples | tostring)' "$T/json" > "$T/fromjson"
	share "$T/fromjson" nofp_leaf "$CHAIN"
	# SVG: nofp_level3's box holds (nearly) all of nofp_leaf's samples.
	leaf=$(grep -o '<title>nofp_leaf ([0-9]*' "$T/p.svg" | grep -o '[0-9]*$' | awk '{ n += $1 } END { print n + 0 }')
	l3=$(grep -o '<title>nofp_level3 ([0-9]*' "$T/p.svg" | grep -o '[0-9]*$' | awk '{ n += $1 } END { print n + 0 }')
	echo "svg: nofp_leaf $leaf, nofp_level3 $l3"
	[ "$leaf" -gt 0 ] && [ $((l3 * 100)) -ge $((leaf * 95)) ]
	# pprof: every trace through nofp_leaf goes up through the chain.
	go tool pprof -traces "$T/p.pb.gz" 2>/dev/null > "$T/traces"
	awk '/-----------/ { if (t ~ /nofp_leaf/) { all++; if (t ~ /nofp_level3.*nofp_level2.*nofp_level1.*main/) whole++ } t = ""; next }
		{ t = t " " $NF } END { printf "pprof: %d of %d traces\n", whole, all; exit !(all && whole * 100 >= 95 * all) }' "$T/traces"
	# Text: each stack through nofp_leaf lists nofp_level3 next, leaf first.
	"$BIN/profile" -p "$WPID" -F 199 2 > "$T/text" 2>/dev/null
	run grep -A1 -x '    nofp_leaf' "$T/text"
	assert_output --partial '    nofp_level3'
}

@test "unwind: through a shared library built without frame pointers" {
	require_bpf
	start "$NOFP" lib 5
	"$BIN/profile" -p "$WPID" -F 199 -f 3 > "$T/folded" 2>/dev/null
	share "$T/folded" nofplib_leaf "main;nofp_to_lib;nofplib_outer;nofplib_inner"
}

@test "unwind: through a signal handler, into the code it interrupted" {
	require_bpf
	start "$NOFP" signal 6
	"$BIN/profile" -p "$WPID" -F 199 -f 3 > "$T/folded" 2>/dev/null
	# handler leaf, handler, the kernel's return trampoline, then what it interrupted.
	share "$T/folded" nofp_handler_leaf "main;nofp_waiter;.*;nofp_handler"
}

@test "unwind: offcputime -U -f, a blocked thread's whole stack" {
	require_bpf
	start "$NOFP" pipe 20 10
	"$BIN/offcputime" -U -f -p "$WPID" > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" Tracing
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^done'
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	cat "$T/folded"
	share "$T/folded" read "start_thread;reader;nofp_reader_mid;nofp_reader_leaf"
}

@test "unwind: offwaketime -f, the blocked stack and its waker's, both whole" {
	require_bpf
	start "$NOFP" pipe 20 10
	"$BIN/offwaketime" -f -p "$WPID" > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" Tracing
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^done'
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	grep 'nofp_reader_leaf' "$T/folded" > "$T/reader"
	# Blocked: root to read(); woken: write() back up to its thread's root.
	awk '{ all += $NF; if ($0 ~ /;start_thread;reader;nofp_reader_mid;nofp_reader_leaf;.*--;.*;nofp_writer_leaf;nofp_writer_mid;writer;start_thread;/) whole += $NF }
		END { printf "%d of %d\n", whole, all; exit !(all && whole * 100 >= 95 * all) }' "$T/reader"
}

@test "unwind: python3, built without frame pointers, reaches Py_RunMain" {
	require_bpf
	start python3 -c 'import os, time
print("pid", os.getpid(), flush=True)
end = time.time() + 6
while time.time() < end:
    sum(i * i for i in range(1000))'
	"$BIN/profile" -p "$WPID" -F 199 -f 3 > "$T/folded" 2>/dev/null
	awk '{ all += $NF; if ($0 ~ /;Py_RunMain;/) whole += $NF }
		END { printf "%d of %d samples reach Py_RunMain\n", whole, all; exit !(all > 100 && whole * 100 >= 95 * all) }' "$T/folded"
}

@test "unwind: --unwind errors, and frame pointers where the kernel cannot walk CFI" {
	run "$BIN/profile" --unwind=magic 1
	assert_failure 2
	assert_output --partial "invalid unwind method 'magic': expected auto, fp or dwarf"
	run "$BIN/offcputime" --unwind-memory 0 1
	assert_failure 2
	require_bpf
	# A kernel without bpf_loop (before 5.17), as BPFSCOPE_DISABLE makes this one.
	run env BPFSCOPE_DISABLE=bpf_loop "$BIN/profile" --unwind=dwarf 1
	assert_failure 1
	assert_output --partial "needs bpf_loop, Linux 5.17"
	run env BPFSCOPE_DISABLE=bpf_loop "$BIN/offwaketime" -v 1
	assert_success
	assert_output --partial "user stacks: frame pointers (this kernel has no bpf_loop"
}

@test "unwind: a library dlopen()ed while traced, and a process that execs" {
	require_bpf
	cp "$WL/libnofplib.so" "$T/libdl.so"
	start "$NOFP" dlopen "$T/libdl.so" 5
	"$BIN/profile" -p "$WPID" -F 199 -f 4 > "$T/folded" 2>/dev/null
	grep -q '^loaded' "$T/work"
	# Its code was not mapped when the process was first seen: read again, then whole.
	share "$T/folded" nofplib_leaf "main;nofp_dlopened;nofplib_outer;nofplib_inner"
	stop_bg "$WPID"
	# Another program first, then the nofp chain in the same process.
	start "$WL/hostile" exec 1 "$NOFP" spin 4
	"$BIN/profile" -p "$WPID" -F 199 -f 4 > "$T/folded" 2>/dev/null
	grep -q '^hostile;.*hostile_before_exec' "$T/folded"
	share "$T/folded" nofp_leaf "$CHAIN"
}

# named FOLDED COMM [MIN]: of the user frames (root to the first kernel
# frame) in COMM's stacks, weighted by count, the percentage named; fails
# under MIN (95).
named() {
	awk -v comm="$2" -v min="${3:-95}" '
		{ n = $NF; k = split(substr($0, 1, length($0) - length(n) - 1), f, ";")
		  if (f[1] != comm) next
		  for (i = 2; i <= k; i++) {
			if (f[i] ~ /^(entry_SYSCALL|asm_|do_syscall)/) break
			if (f[i] ~ /^\[truncated/) continue
			all += n; if (f[i] !~ /\[unknown\]/) good += n
		  } }
		END { if (!all) { print "no frames of " comm; exit 1 }
		      printf "%.2f%% of %d user frames named\n", 100 * good / all, all
		      exit !(good * 100 >= min * all) }' "$1"
}

# traced_while BANNER COMMANDS TOOL ARGS...: TOOL ARGS, system-wide, folded
# output to $T/folded and stderr to $T/err, from its BANNER until COMMANDS
# (shell text) have run; then stopped as with Ctrl-C.
traced_while() {
	local banner=$1 commands=$2
	shift 2
	"$@" > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" "$banner"
	eval "$commands"
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
}

@test "unwind: short-lived processes, read at exec, named though gone before the report" {
	require_bpf
	# 150 runs of 4 ms each: most of each process's samples come before
	# or just after its libraries are mapped, and it is gone long before
	# the report. Before, 38% of such samples had [unknown] frames. The
	# loader's and libc's own frames have names from libc6-dbg (make
	# check installs it), as they would in perf's output.
	traced_while Sampling 'for i in $(seq 150); do "$NOFP" spin 0.004 > /dev/null; done' \
		"$BIN/profile" -v -F 999 -f 15
	# Built with ASan the tool reads a new process's maps about three times
	# slower, and more of its first samples come before them.
	[[ $BUILD != */san ]] || min=90
	named "$T/folded" nofp "${min:-95}"
	share "$T/folded" nofp_leaf "$CHAIN"
	grep -q '^nofp;.*;main;nofp_level1;nofp_level2;nofp_level3;nofp_leaf' "$T/folded"

	# Blocked 3 times 1 ms each in each of 150 processes: their off-CPU
	# time whole to main, the loader's included.
	traced_while Tracing 'for i in $(seq 150); do "$NOFP" nap 3 1 > /dev/null; done' \
		"$BIN/offcputime" -U -f 15
	named "$T/folded" nofp "${min:-95}"
	share "$T/folded" nofp_nap_leaf "$CHAIN"
}

@test "unwind: more processes than the map holds: those that exited make room" {
	require_bpf
	# Each exec takes an entry; 1,300 of them fill the 1,021 there is room for.
	traced_while Sampling 'for i in $(seq 1300); do "$NOFP" spin 0 > /dev/null; done
		"$NOFP" spin 1 > /dev/null' "$BIN/profile" -v -F 99 -f 30
	grep 'room for [0-9]* rows and 1021 processes' "$T/err"
	grep -E 'processes. map full: dropped [0-9]{3,} that exited' "$T/err"
	run grep 'no room for their mappings' "$T/err"
	assert_failure
	share "$T/folded" nofp_leaf "$CHAIN"
}

@test "unwind: calls inlined where DWARF says so, marked in every output" {
	require_bpf
	# nofp_inl_a and nofp_inl_b are always inlined into nofp_inline_host:
	# only the -g build's DWARF knows them; the first frame (the loop in
	# nofp_inl_b) and return addresses (its call of nofp_leaf) both.
	start "$NOFP" inline 8
	"$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" --pprof "$T/p.pb.gz" 2 \
		> "$T/folded" 2> "$T/err"
	awk '/;nofp_inline_host(;| )/ { all += $NF; if ($0 ~ /;main;nofp_inline_host;nofp_inl_a_\[i\];nofp_inl_b_\[i\](;| )/) whole += $NF }
		END { printf "%d of %d\n", whole, all; exit !(all > 100 && whole * 100 >= 95 * all) }' "$T/folded"
	grep -q ';nofp_inl_b_\[i\];nofp_leaf' "$T/folded"
	grep -q ';nofp_inl_b_\[i\];now_\[i\]' "$T/folded"
	# Inlined calls in the SVG: their own colour, and said in the title.
	grep -q '<title>nofp_inl_b (inlined) (' "$T/p.svg"
	# pprof: one location, a line per call, innermost first; "(inline)" in its traces.
	go tool pprof -raw "$T/p.pb.gz" 2>/dev/null > "$T/raw"
	grep -A2 -E '^ +[0-9]+: 0x[0-9a-f]+ M=[0-9]+ nofp_inl_b ' "$T/raw" > "$T/loc"
	sed -n 2p "$T/loc" | grep -q '^ *nofp_inl_a '
	sed -n 3p "$T/loc" | grep -q '^ *nofp_inline_host '
	go tool pprof -traces "$T/p.pb.gz" 2>/dev/null | grep -q 'nofp_inl_a (inline)'
	# JSON as folded; bcc's text as perf script marks them.
	"$BIN/profile" -p "$WPID" -F 199 --json 1 > "$T/json" 2>/dev/null
	grep '"nofp_inline_host"' "$T/json" | grep -q '"nofp_inl_a_\[i\]","nofp_inl_b_\[i\]"'
	"$BIN/profile" -p "$WPID" -F 199 1 > "$T/text" 2>/dev/null
	grep -B1 '^    nofp_inline_host$' "$T/text" | grep -q '^    nofp_inl_a (inlined)$'
	# Without DWARF (stripped, .symtab kept): the same stacks without them.
	stop_bg "$WPID"
	objcopy --strip-debug "$NOFP" "$T/nofp-nodebug"
	cp "$WL/libnofplib.so" "$T/"	# found by its $ORIGIN rpath
	start "$T/nofp-nodebug" inline 4
	"$BIN/profile" -p "$WPID" -F 199 -f 2 > "$T/folded" 2>/dev/null
	grep -q ';main;nofp_inline_host;nofp_leaf' "$T/folded"
	run grep -F '_[i]' "$T/folded"
	assert_failure
}
