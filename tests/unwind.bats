#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# User stacks of code without frame pointers (tests/nofp, built -O2
# -fomit-frame-pointer, as most of a distribution is), walked with their
# call-frame information: the whole chain from the leaf to main, through a
# shared library, a PLT stub, frame-pointer code without CFI and a signal
# handler, for a blocked thread and its waker, in every output; python3 as
# Debian ships it; and where it must stop, marked: code with neither CFI
# nor a frame pointer, stacks deeper than 127 frames, tables that did not
# fit --unwind-memory.

load helpers
load folded

setup() {
	T=$BATS_TEST_TMPDIR
	NOFP=$WL/nofp
	export HOME=$T GOCACHE=$T/gocache
}

teardown() {
	stop_bg ${WPID:-} ${TPID:-} ${PYPID:-} ${SPAWNER:-}
	remove_cgroup
	assert_nothing_loaded profile offcputime offwaketime
}

start() {
	: > "$T/work"
	"$@" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
}

# sampled MS OUT ERR TOOL ARGS...: TOOL ARGS (-p $WPID among them, or
# system-wide) from its banner until the workload ($WPID, which runs until
# stopped) has had MS ms more of CPU, then stopped as with Ctrl-C: about
# MS * F / 1000 samples of it at F Hz, however slowly a loaded machine runs
# it. Standard output to OUT, error to ERR.
sampled() {
	local ms=$1 out=$2 err=$3
	shift 3
	tool_start "$out" "$err" "$@"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + ms ))
	tool_stop || fail "$(tail -n 5 "$err")"
}

# dlopened OUT ERR TOOL ARGS...: TOOL ARGS on nofp's dlopen mode ($WPID),
# from its banner: its first chain a while, then (SIGUSR1) the library it
# loads, whose code was not mapped when the process was first seen, a
# while more.
dlopened() {
	local out=$1 err=$2
	shift 2
	tool_start "$out" "$err" "$@"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 300 ))
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^loaded' 60
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(tail -n 5 "$err")"
}

# share FOLDED LEAF CHAIN [MIN]: of the counts of folded lines holding frame
# LEAF, the percentage whose stack has CHAIN (";"-separated frames, root
# first) right above it; fails under MIN (95).
share() {
	awk -v leaf=";$2(;| )" -v chain=";$3;$2(;| )" -v min="${4:-95}" '
		$0 ~ leaf { all += $NF; if ($0 ~ chain) whole += $NF }
		END { if (!all) { print "no samples of the leaf"; exit 1 }
		      printf "%.0f of %.0f\n", whole, all; exit !(whole * 100 >= min * all) }' "$1"
}

CHAIN="main;nofp_level1;nofp_level2;nofp_level3"

@test "unwind: profile -f, a -O2 chain without frame pointers, whole to main" {
	require_bpf
	start "$NOFP" spin 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	share "$T/folded" nofp_leaf "$CHAIN"
	# -v says what each process got.
	grep -qE "pid $WPID: CFI for [0-9]+ of [0-9]+ executable mappings" "$T/err"
	grep -q 'user stacks: CFI' "$T/err"
	# At exit: how stacks were walked, and rows with rules it does not follow.
	grep -qE 'user stacks: [0-9]+ walked with CFI, .* rows, [0-9]+ of them with rules it does not follow' "$T/err"
	# The vdso's code under clock_gettime is named: by its symbol, or where it
	# has none (its paravirtual clock read, on KVM guests) by the vdso itself.
	grep -q ';clock_gettime;' "$T/folded"
	run grep -E ';clock_gettime;\[unknown\]' "$T/folded"
	assert_failure
	# The kernel's frame-pointer walk, as before: the chain lost at once.
	sampled 2000 "$T/fp" "$T/fperr" "$BIN/profile" --unwind=fp -p "$WPID" -F 199 -f
	run share "$T/fp" nofp_leaf "$CHAIN"
	assert_failure
	grep -q nofp_leaf "$T/fp"
}

@test "unwind: the same chain in the text, JSON, SVG and pprof outputs" {
	require_bpf
	start "$NOFP" spin 0
	sampled 3000 "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json --svg "$T/p.svg" --pprof "$T/p.pb.gz"
	sampled 2000 "$T/text" "$T/err" "$BIN/profile" -p "$WPID" -F 199
	# The readers themselves: the folded output, read back each way, is itself.
	sampled 1000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/f.svg"
	stop_bg "$WPID"
	WPID=
	# Each output read back into folded lines: nofp_leaf's samples whole to main.
	json_folded "$T/json" > "$T/fromjson"
	share "$T/fromjson" nofp_leaf "$CHAIN"
	svg_folded "$T/p.svg" > "$T/fromsvg"
	share "$T/fromsvg" nofp_leaf "$CHAIN"
	pprof_folded "$T/p.pb.gz" > "$T/frompprof"
	share "$T/frompprof" nofp_leaf "$CHAIN"
	text_folded "$T/text" > "$T/fromtext"
	share "$T/fromtext" nofp_leaf "$CHAIN"
	sort "$T/folded" > "$T/a"
	svg_folded "$T/f.svg" | sort > "$T/b"
	diff "$T/a" "$T/b"
}

@test "unwind: through a shared library built without frame pointers" {
	require_bpf
	start "$NOFP" lib 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	share "$T/folded" nofplib_leaf "main;nofp_to_lib;nofplib_outer;nofplib_inner"
}

@test "unwind: through a signal handler, into the code it interrupted" {
	require_bpf
	start "$NOFP" signal 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	# handler leaf, handler, the kernel's return trampoline, then what it interrupted.
	share "$T/folded" nofp_handler_leaf "main;nofp_waiter;.*;nofp_handler"
}

# pipe_traced OUT TOOL ARGS...: TOOL ARGS -p on the pipe workload (20
# reads, each woken 10 ms later), from its banner until the workload is
# done; its output in OUT.
pipe_traced() {
	local out=$1
	shift
	start "$NOFP" pipe 20 10
	# The banner: on stdout with the text output, as bcc has it, else on stderr.
	tool_start "$out" "$T/err" "$@" -p "$WPID"
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^done' 120
	tool_stop || fail "$(tail -n 5 "$T/err")"
	stop_bg "$WPID"
}

READER="start_thread;reader;nofp_reader_mid;nofp_reader_leaf"

@test "unwind: offcputime -U, a blocked thread's whole stack, in every output" {
	require_bpf
	pipe_traced "$T/folded" "$BIN/offcputime" -U -f
	share "$T/folded" read "$READER"
	pipe_traced "$T/json" "$BIN/offcputime" -U --json --svg "$T/o.svg" --pprof "$T/o.pb.gz"
	json_folded "$T/json" > "$T/fromjson"
	share "$T/fromjson" read "$READER"
	svg_folded "$T/o.svg" > "$T/fromsvg"
	share "$T/fromsvg" read "$READER"
	pprof_folded "$T/o.pb.gz" > "$T/frompprof"
	share "$T/frompprof" read "$READER"
	pipe_traced "$T/text" "$BIN/offcputime" -U
	text_folded "$T/text" > "$T/fromtext"
	share "$T/fromtext" read "$READER"
}

# woken FOLDED: of the time blocked in nofp_reader_leaf, the percentage
# whose blocked stack is whole from the thread's root to read() and whose
# waker's is whole from write() back to its root.
woken() {
	awk '/;nofp_reader_leaf;/ { all += $NF; if ($0 ~ /;start_thread;reader;nofp_reader_mid;nofp_reader_leaf;.*--;.*;nofp_writer_leaf;nofp_writer_mid;writer;start_thread;/) whole += $NF }
		END { printf "%.0f of %.0f\n", whole, all; exit !(all && whole * 100 >= 95 * all) }' "$1"
}

@test "unwind: offwaketime, the blocked stack and its waker's, both whole in every output" {
	require_bpf
	pipe_traced "$T/folded" "$BIN/offwaketime" -f
	woken "$T/folded"
	pipe_traced "$T/json" "$BIN/offwaketime" --json --svg "$T/w.svg" --pprof "$T/w.pb.gz"
	json_folded "$T/json" > "$T/fromjson"
	woken "$T/fromjson"
	svg_folded "$T/w.svg" > "$T/fromsvg"
	woken "$T/fromsvg"
	pprof_folded "$T/w.pb.gz" > "$T/frompprof"
	woken "$T/frompprof"
	pipe_traced "$T/text" "$BIN/offwaketime"
	text_folded "$T/text" > "$T/fromtext"
	woken "$T/fromtext"
}

@test "unwind: frame-pointer code without CFI in the middle of the chain, and a PLT stub in it" {
	require_bpf
	# main and nofp_fp_top have CFI, no frame pointers; nofp_fp_outer and
	# nofp_fp_inner (fpcode.c) frame pointers, no CFI; nofp_leaf CFI again.
	start "$NOFP" fp 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	share "$T/folded" nofp_leaf "main;nofp_fp_top;nofp_fp_outer;nofp_fp_inner"
	stop_bg "$WPID"
	# A loop calling into libnofplib through the PLT: samples in the
	# stub itself (no frame of its own, CFI the linker wrote) and in the
	# library both have nofp_plt_loop and main above them.
	start "$NOFP" plt 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	share "$T/folded" 'nofplib_tick@plt' "main;nofp_plt_loop"
	share "$T/folded" nofplib_tick "main;nofp_plt_loop"
	awk '/;nofplib_tick@plt /{ n += $NF } END { print n " samples in the stub"; exit !(n >= 10) }' "$T/folded"
}

@test "unwind: frames whose CFA is a word saved in the frame (GCC's realignment, OpenSSL's assembly) are followed" {
	require_bpf
	# GCC realigns nofp_realigned's frame through a register it saves:
	# its CFA is *(rbp - 8), its caller's rbp at rbp itself.
	start "$NOFP" realign 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	stop_bg "$WPID"
	share "$T/folded" nofp_leaf "main;nofp_realign_top;nofp_realigned"
	# OpenSSL's AES_encrypt realigns its stack and keeps its entry stack
	# pointer in the frame: the CFA is *(rsp + 24) + 8 over its body,
	# whose leaf is an unexported function of libcrypto, and in rax, then
	# rsi, over its prologue and epilogue (a first frame's registers are
	# the interrupted ones). Every sample whole (before: 2 of 597, every
	# walk through its body stopped there). 3 s of its CPU: about 597 samples,
	# at least half of them in AES_encrypt.
	start "$NOFP" crypto 0
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -U -p "$WPID" -F 199 -f
	stop_bg "$WPID"
	awk '/;AES_encrypt(;| )/ { all += $NF
		if (/;main;nofp_crypto_loop;AES_encrypt(;| )/) whole += $NF; else print "not whole: " $0 }
		END { printf "%d samples through AES_encrypt, %d whole\n", all, whole
		      exit !(all >= 300 && whole == all) }' "$T/folded"
}

@test "unwind: code with neither CFI nor a frame pointer ends the stack in a mark, nothing invented above" {
	require_bpf
	# nofp_nocfi_mid (nocfi.c) has no CFI and holds in the frame-pointer
	# register a zero, then an address on the stack of a fake frame
	# record, whose "return address" is data. Before, the first ended the
	# stack there unmarked, the second added two [unknown] frames above it.
	for junk in zero stack; do
		start "$NOFP" nocfi 0 "$junk"
		sampled 2000 "$T/$junk" "$T/err" "$BIN/profile" -p "$WPID" -U -F 199 -f
		stop_bg "$WPID"
		awk '/;nofp_nocfi_mid(;| )/ { all += $NF
			if (index($0, "nofp;[truncated:_no_CFI,_no_frame_pointer];nofp_nocfi_mid;nofp_nocfi_leaf") == 1) good += $NF }
			END { printf "%s: %d of %d end in the mark\n", FILENAME, good, all; exit !(all > 100 && good == all) }' "$T/$junk" ||
			fail "$(sort -t' ' -k2 -nr "$T/$junk" | head -5)"
	done
}

# user_frames FOLDED: "FRAMES MARKED COUNT" for each line whose leaf is
# nofp_leaf itself (or now(), inlined in it): its user frames (inlined
# calls not counted) and whether it holds a [truncated: ...] frame.
user_frames() {
	awk '/;nofp_leaf(;now_\[i\])? [0-9]+$/ { k = split($1, f, ";"); n = 0; m = 0
		for (i = 2; i <= k; i++) { if (f[i] ~ /^\[truncated/) m = 1; else if (f[i] !~ /_\[i\]$/) n++ }
		print n, m, $NF }' "$1"
}

@test "unwind: 127 user frames kept whole, and a deeper stack ends in a mark" {
	require_bpf
	# How many frames sit above main, and main itself (_start's, libc's),
	# from a shallow recursion: its whole stack, nothing marked.
	start "$NOFP" deep 100 0
	sampled 2000 "$T/100" "$T/err" "$BIN/profile" -p "$WPID" -U -F 199 -f
	stop_bg "$WPID"
	grep -q ";main$(printf ';nofp_deep%.0s' $(seq 100));nofp_leaf [0-9]*$" "$T/100" ||
		fail "$(head -c 2000 "$T/100")"
	above=$(awk -F';' '/;nofp_leaf [0-9]+$/ { for (i = 2; i <= NF; i++) if ($i == "main") { print i - 1; exit } }' "$T/100")
	echo "$above frames from the root to main"
	# Exactly 127 frames when nofp_leaf is the leaf: every one kept, no
	# mark (before, the 127th gave way to one). Its calls of
	# clock_gettime go deeper: 127 frames and the mark.
	deep=$((127 - above - 1))
	start "$NOFP" deep "$deep" 0
	sampled 2000 "$T/127" "$T/err" "$BIN/profile" -p "$WPID" -U -F 199 -f
	stop_bg "$WPID"
	user_frames "$T/127" > "$T/n127"
	awk '{ all += $3; if ($1 == 127 && !$2) good += $3 } END { printf "%d of %d samples 127 frames whole\n", good, all; exit !(all > 20 && good == all) }' "$T/n127" ||
		fail "$(cat "$T/n127")"
	grep -q ";main$(printf ';nofp_deep%.0s' $(seq $deep));nofp_leaf [0-9]*$" "$T/127"
	awk '/;clock_gettime( |;)/ { all += $NF; if ($0 ~ /^nofp;\[truncated:_deeper_than_127_frames\];/ && $0 !~ /;_start;/) good += $NF }
		END { printf "%d of %d in clock_gettime marked\n", good, all; exit !(all && good * 100 >= 95 * all) }' "$T/127"
	# 140 deep: the 127 frames nearest the leaf, then the mark.
	start "$NOFP" deep 140 0
	sampled 2000 "$T/140" "$T/err" "$BIN/profile" -p "$WPID" -U -F 199 -f
	stop_bg "$WPID"
	user_frames "$T/140" > "$T/n140"
	awk '{ all += $3; if ($1 == 127 && $2) good += $3 } END { printf "%d of %d samples 127 frames and the mark\n", good, all; exit !(all > 20 && good == all) }' "$T/n140" ||
		fail "$(cat "$T/n140")"
	grep -q "^nofp;\[truncated:_deeper_than_127_frames\]$(printf ';nofp_deep%.0s' $(seq 126));nofp_leaf [0-9]*$" "$T/140"
	run grep -E ';main;|;_start;' "$T/140"
	assert_failure
}

# Debian's python3, as it ships (not one a version manager put first in
# PATH), until stopped.
PYSPIN='import os
print("pid", os.getpid(), flush=True)
while True:
    sum(i * i for i in range(1000))'

@test "unwind: python3, built without frame pointers, reaches Py_RunMain" {
	require_bpf
	start /usr/bin/python3.11 -c "$PYSPIN"
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	awk '{ all += $NF; if ($0 ~ /;Py_RunMain;/) whole += $NF }
		END { printf "%d of %d samples reach Py_RunMain\n", whole, all; exit !(all > 100 && whole * 100 >= 95 * all) }' "$T/folded"
}

@test "unwind: tables that do not fit --unwind-memory are counted at exit, their stacks marked" {
	require_bpf
	start /usr/bin/python3.11 -c "$PYSPIN"
	# 1 MiB: 98,304 rows' worth, one chunk of 65,536 rows; the interpreter
	# (or libpython) and libc need more.
	sampled 2000 "$T/folded" "$T/err" "$BIN/profile" --unwind-memory 1 -p "$WPID" -F 199 -f
	grep -E "^profile: [1-9][0-9]* binaries' unwind tables did not fit \([0-9]+ of 65536 rows in use; [0-9]+ made later, when others were given back\): their frames were walked by frame pointers; raise --unwind-memory$" "$T/err" ||
		fail "$(cat "$T/err")"
	# The interpreter's code, without its table, has no frame pointers
	# either: its stacks end marked where its tables would have gone on.
	awk '{ all += $NF; if ($0 ~ /^python3(\.[0-9]+)?;\[truncated:/) cut += $NF }
		END { printf "%d of %d marked\n", cut, all; exit !(all > 100 && cut * 100 >= 95 * all) }' "$T/folded"
	# With the default 32 MiB everything fits, and nothing is said.
	sampled 1000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	run grep -E 'did not fit|unwind-memory' "$T/err"
	assert_failure
	grep -q ';Py_RunMain;' "$T/folded"
}

@test "unwind: a binary refused for lack of room is made later, once the process whose rows filled them has exited" {
	require_bpf
	make_cgroup refit
	# --unwind-memory 1: 65,536 rows, of which Debian's python3.11 takes
	# nearly all (64,575 in 3.11.2-6+deb12u6, 64,727 in deb12u9, as
	# tests/unit/cfidump counts them): its libraries, libc among them, find
	# no room. A program started while python3 still runs is read at its
	# exec, and again for the library it loads, with libc refused each time
	# (ci98's case, which a sleep till python3 had gone used to dodge); once
	# python3 has exited, the tool's once-a-second check gives its rows back
	# and reads the program again, whose libc rows are made then: its stacks
	# go on through libc (which has no frame pointers) to _start from then
	# on, most of its run (three times its CPU time before, and 2 s more at
	# least). Each step waits for the tool's -v line, however slow the
	# machine. With --cgroup, only the group's processes are read at their
	# exec: each joins it, then execs.
	local rows
	rows=$("$BUILD/tests/unit/cfidump" /usr/bin/python3.11 | awk '{ print $1 }')
	[ "$rows" -gt 60000 ] && [ "$rows" -lt 65536 ] ||
		fail "python3.11 has $rows rows: this test wants it to nearly fill 65,536"
	echo "$PYSPIN" > "$T/spin.py"
	traced_while Sampling 'bash -c "echo \$\$ > $CG/cgroup.procs && exec /usr/bin/python3.11 $T/spin.py" > /dev/null &
		PYPID=$!
		wait_for_line "$T/err" "/python3.11: $rows unwind rows" 120
		bash -c "echo \$\$ > $CG/cgroup.procs && exec $NOFP spin 0" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" "^pid " 60
		wait_for_line "$T/err" "pid $WPID: CFI for " 120
		stop_bg "$PYPID"
		PYPID=
		wait_for_line "$T/err" "libc.so.6: [0-9]+ unwind rows for" 120
		before=$(cpu_ms "$WPID")
		wait_cpu "$WPID" $(( before * 4 > before + 2000 ? before * 4 : before + 2000 ))
		stop_bg "$WPID"
		WPID=' \
		"${PROFILE:-$BIN/profile}" -v --unwind-memory 1 --cgroup "$CG" -F 199 -f
	grep -E "/python3.11: $rows unwind rows" "$T/err" ||
		fail "$(grep -v libbpf "$T/err")"
	grep -E "^profile: [1-9][0-9]* binaries' unwind tables did not fit \([0-9]+ of 65536 rows in use; [1-9][0-9]* made later, when others were given back\)" "$T/err" ||
		fail "$(grep -v libbpf "$T/err" | tail -5)"
	grep -q '^python3.11;' "$T/folded"
	share "$T/folded" nofp_leaf "__libc_start_call_main;$CHAIN" 50
}

@test "unwind: system-wide, a big library's rows are made once a stack reaches it, and its stacks are whole from then on" {
	require_bpf
	# libstdc++ (34,371 rows, 196 KiB of .eh_frame) is left until a stack
	# reaches it: the program's first samples in it ask for it, and their
	# chains through it (no frame pointers) reach main from then on. libm,
	# which libstdc++ maps and the program never calls, is never made.
	# Copies of their own, which no other process on the machine maps
	# (another's stack may reach the system's libm, or have made its
	# libstdc++ already).
	g++ -O2 -g -fomit-frame-pointer -o "$T/sstream-cxx" "$ROOT/tests/langs/sstream.cc"
	mkdir "$T/lib"
	for lib in libstdc++.so.6 libm.so.6; do
		cp -L "$(g++ -print-file-name=$lib)" "$T/lib/$lib"
	done
	LD_LIBRARY_PATH=$T/lib ldd "$T/sstream-cxx" | grep -qF "$T/lib/libm.so.6"
	# Until it has had two seconds of CPU, however slowly it runs.
	traced_while Sampling 'LD_LIBRARY_PATH=$T/lib "$T/sstream-cxx" 0 > "$T/work" &
		SPID=$!
		wait_for_line "$T/work" "^pid " 60
		wait_cpu $SPID 2000
		stop_bg $SPID' "$BIN/profile" -v -F 199 -f
	grep -F "$T/lib/libstdc++.so.6: its unwind rows wait for a stack to reach it" "$T/err"
	grep -F "$T/lib/libstdc++.so.6: " "$T/err" | grep -E ': [0-9]+ unwind rows for'
	grep -F "$T/lib/libm.so.6: its unwind rows wait for a stack to reach it" "$T/err"
	run grep -F "$T/lib/libm.so.6: " "$T/err"
	refute_output --regexp ': [0-9]+ unwind rows for'
	grep -E "; [0-9]+ big libraries' left until a stack reached them, [1-9][0-9]* made then" "$T/err"
	# The stacks that reached it first, walked by frame pointers there, are said at exit.
	grep -E "^profile: [1-9][0-9]* user stacks reached a big library before its unwind rows were made" "$T/err"
	# Whole: 99% here; the samples before the rows are made are not.
	awk '/^sstream-cxx;/ { all += $NF; if (/;__libc_start_call_main;main;/) whole += $NF }
		END { printf "%d of %d whole\n", whole, all; exit !(all >= 300 && whole * 100 >= all * 85) }' "$T/folded"
	# With -p, the process's rows are all made at start, big libraries' too.
	LD_LIBRARY_PATH=$T/lib "$T/sstream-cxx" 0 > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
	"$BIN/profile" -v -p "$WPID" -F 49 1 > /dev/null 2> "$T/err"
	grep -F "$T/lib/libstdc++.so.6: " "$T/err" | grep -E ': [0-9]+ unwind rows for'
	run grep -E "wait for a stack|before its unwind rows were made" "$T/err"
	assert_failure
}

@test "unwind: --unwind errors, and a kernel without bpf_loop walks CFI all the same" {
	run "$BIN/profile" --unwind=magic 1
	assert_failure 2
	assert_output --partial "invalid unwind method 'magic': expected auto, fp or dwarf"
	run "$BIN/offcputime" --unwind-memory 0 1
	assert_failure 2
	require_bpf
	# A kernel before 5.17, as BPFSCOPE_DISABLE makes this one: the legacy
	# objects walk by a loop of calls, its user registers found by hand.
	start "$NOFP" spin 0
	sampled 3000 "$T/folded" "$T/err" env BPFSCOPE_DISABLE=bpf_loop "$BIN/profile" -v --unwind=dwarf -p "$WPID" -F 199 -f
	grep -q 'profile: BPF programs for kernels before 5.17' "$T/err"
	grep -q 'user stacks: CFI (.eh_frame), .*; no Python frames before Linux 5.17' "$T/err"
	share "$T/folded" nofp_leaf "$CHAIN"
	grep -qE 'user stacks: [1-9][0-9]* walked with CFI' "$T/err"
}

@test "unwind: a library dlopen()ed while traced, and a process that execs" {
	require_bpf
	cp "$WL/libnofplib.so" "$T/libdl.so"
	start "$NOFP" dlopen "$T/libdl.so" 0
	dlopened "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	# Its code was not mapped when the process was first seen: read again, then whole.
	share "$T/folded" nofplib_leaf "main;nofp_dlopened;nofplib_outer;nofplib_inner"
	stop_bg "$WPID"
	# Another program first, then the nofp chain in the same process.
	start "$WL/hostile" exec "$NOFP" spin 0
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	exec_after 300
	tool_stop
	grep -q '^hostile;.*hostile_before_exec' "$T/folded"
	share "$T/folded" nofp_leaf "$CHAIN"
}

@test "unwind: a library whose CFI is only in its own .debug_frame, compressed or not" {
	require_bpf
	for lib in libdframe.so libdframez.so; do
		# No index of .eh_frame's descriptions, which has none: .debug_frame's only.
		readelf -SW "$WL/$lib" > "$T/sections"
		run grep ' .eh_frame_hdr ' "$T/sections"
		assert_failure
		grep ' .debug_frame ' "$T/sections" > "$T/dframe" || fail "$lib: no .debug_frame"
		[ $lib = libdframe.so ] || grep -q ' C ' "$T/dframe" || fail "$lib: not compressed: $(cat "$T/dframe")"
		start "$NOFP" dlopen "$WL/$lib" 0
		dlopened "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
		share "$T/folded" nofplib_leaf "main;nofp_dlopened;nofplib_outer;nofplib_inner"
		stop_bg "$WPID"
	done
}

@test "unwind: a library with .eh_frame for some of its code and only .debug_frame for the rest" {
	require_bpf
	readelf -SW "$WL/libdmixed.so" > "$T/sections"
	grep -q ' .eh_frame_hdr ' "$T/sections" || fail "no .eh_frame_hdr: $(cat "$T/sections")"
	grep -q ' .debug_frame ' "$T/sections" || fail "no .debug_frame: $(cat "$T/sections")"
	# nofplib's functions described in .debug_frame, not in .eh_frame.
	leaf=$(nm "$WL/libdmixed.so" | awk '$3 == "nofplib_leaf" { print $1 }')
	[ -n "$leaf" ] || fail "no nofplib_leaf"
	readelf --debug-dump=frames "$WL/libdmixed.so" 2> /dev/null |
		awk -v fde="pc=$leaf[.][.]" '/^Contents of the .eh_frame section/ { eh = 1 }
		     /^Contents of the .debug_frame section/ { eh = 0 }
		     / FDE / && $0 ~ fde { if (eh) bad = 1; else found = 1 } END { exit !(found && !bad) }' ||
		fail "nofplib_leaf ($leaf): $(readelf --debug-dump=frames "$WL/libdmixed.so" | grep -E 'Contents|FDE')"
	start "$NOFP" dlopen "$WL/libdmixed.so" 0
	dlopened "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	share "$T/folded" nofplib_leaf "main;nofp_dlopened;nofplib_outer;nofplib_inner"
}

# cfi_agree FILE [go]: FILE's rows (cfidump -a) against binutils' reading of
# its CFI (readelf --debug-dump=frames-interp), at every row readelf lists:
# the same CFA (in the stack or frame pointer, or another register), return
# address and saved frame pointer, or a rule marked
# unsupported where the row cannot hold it (a CFA past 16 bits, a return
# address popped), or readelf's expressions (PLT stubs, signal frames)
# left out. With go, Go's
# own table (pclntab) against the DWARF its linker writes: the CFA and
# return address; the runtime's assembly that switches or ends stacks
# (frame pointers, its stack-switch rules, the outermost frames) is ours by
# design, and must stay under 1% of the rows.
cfi_agree() {
	{ "$BUILD/tests/unit/cfidump" -a "$1" | sed 1d; echo "--"
	  readelf --debug-dump=frames-interp "$1" 2> /dev/null; } | awk -v go="${2:-}" 'BEGIN { nr = 0 }
	function hex(s,  i, v) { v = 0; s = tolower(s)
		for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return v }
	!theirs && $0 == "--" { theirs = 1; next }
	!theirs { sub(/:$/, "", $1); at[nr] = hex($1); kind[nr] = $2; cfa[nr] = $4; fp[nr] = $6; ra[nr] = $8; nr++; next }
	/ FDE / { infde = 1; next }
	/ CIE / { infde = 0; next }
	infde && $1 == "LOC" { ncol = NF; delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
	infde && NF == ncol && $1 ~ /^[0-9a-f]+$/ && $2 != "ZERO" {
		if ($2 == "exp") { skipped++; next }
		loc = hex($1); lo = 0; hi = nr
		while (hi - lo > 1) { mid = int((lo + hi) / 2); if (at[mid] <= loc) lo = mid; else hi = mid }
		checked++
		if (!nr || at[lo] > loc) { bad++; if (bad <= 5) print "no row at " $0; next }
		# What readelf says, as a row would have it.
		c = 0
		if ($2 ~ /^rsp\+[0-9]+$/) { k = "cfa-sp"; c = substr($2, 5) }
		else if ($2 ~ /^rbp\+[0-9]+$/) { k = "cfa-fp"; c = substr($2, 5) }
		else if ($2 ~ /^r[a-z0-9]+\+[0-9]+$/) { k = "cfa-reg"; c = $2 }
		else k = "unsupported"
		r = ("ra" in col) ? $(col["ra"]) : "u"
		f = ("rbp" in col) ? $(col["rbp"]) : "u"
		# Past 16 bits; or the CFA at the stack pointer, the return address
		# popped into a register (vfork: Go says it is still on the stack).
		if (c + 0 > 32767 || k == "cfa-sp" && c == 0 || r != "c-8" && r != "u") k = "unsupported"
		else if (r == "u") k = "end"
		if (f ~ /^c-[0-9]+$/) f = -substr(f, 3)
		else if (f == "u" || f == "s") f = 0
		else if (!go) k = "unsupported"
		if (kind[lo] == k && (k != "cfa-sp" && k != "cfa-fp" && k != "cfa-reg" ||
		    cfa[lo] == c && ra[lo] == -8 && (go || fp[lo] == f)))
			next
		if (go && kind[lo] ~ /^(none|end|go-)/) { designed++; next }
		bad++
		if (bad <= 5) print "at " $1 ": readelf " $2 " ra " r " fp " f "; ours " kind[lo] " " cfa[lo] " " fp[lo] " " ra[lo]
	}
	END { printf "%d rows checked, %d differ, %d by design, %d expressions left out\n",
		checked, bad, designed, skipped
	      exit !(checked > 5000 && !bad && designed * 100 < checked) }'
}

@test "unwind: the rows built agree with readelf's reading of the CFI: libc, python3, libstdc++, Go and cgo binaries" {
	for f in /lib/x86_64-linux-gnu/libc.so.6 /usr/bin/python3.11 /usr/lib/x86_64-linux-gnu/libstdc++.so.6; do
		[ -f "$f" ] || fail "no $f"
		cfi_agree "$f" || fail "$f"
	done
	go_workloads
	for ver in $GOVERS; do
		cfi_agree "$BUILD/tests/go/gowork-$ver-full" go || fail "gowork $ver"
		cfi_agree "$BUILD/tests/go/cgocheese-$ver-full" go || fail "cgocheese $ver"
	done
}

@test "unwind: a process with more executable mappings than the map holds keeps libc's, the loader's and the vDSO's" {
	require_bpf
	start "$NOFP" maps 400 0
	wait_for_line "$T/work" '^mapped 400' 60
	sampled 3000 "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	# The program's, its library's, the C library's, the loader's and the
	# vDSO's mappings kept, with their CFI; of the 400 pages mapped below the
	# libraries, after them, what room was left. (A cut in address order
	# kept the program's and 255 pages.)
	n=$(sed -n "s/.*pid $WPID: CFI for \([0-9]*\) of [0-9]* executable mappings/\1/p" "$T/err" | tail -n 1)
	[ "${n:-0}" -ge 5 ] || fail "CFI for ${n:-no} mappings: $(cat "$T/err")"
	share "$T/folded" nofp_leaf "_start;__libc_start_main;__libc_start_call_main;$CHAIN"
	grep -qE "^profile: [0-9]+ executable mappings left out of processes with more than 256 " "$T/err" ||
		fail "not said: $(cat "$T/err")"
}

@test "unwind: a library dlclose()d and another loaded at its address are told apart" {
	require_bpf
	cp "$WL/libnofplib.so" "$T/liba.so"
	cp "$WL/libswaplib.so" "$T/libb.so"
	# A second of its CPU in each, whenever the tool has started: the
	# first library until it is told (SIGUSR1), the second until stopped.
	start "$NOFP" swap "$T/liba.so" "$T/libb.so" 0
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^swaplib_outer ' 60
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_stop || fail "$(tail -n 5 "$T/err")"
	a=$(awk '$1 == "nofplib_outer" { print $2 }' "$T/work")
	b=$(awk '$1 == "swaplib_outer" { print $2 }' "$T/work")
	[ -n "$a" ] && [ "$a" = "$b" ] ||
		fail "the second library was not loaded where the first was: '$a', '$b'"
	# Each under its own names, whole, in about half the samples each.
	share "$T/folded" nofplib_leaf "main;nofp_dlopened;nofplib_outer;nofplib_inner"
	share "$T/folded" swaplib_leaf "main;nofp_dlopened;swaplib_outer;swaplib_inner"
	awk '/;nofplib_leaf/ { a += $NF } /;swaplib_leaf/ { b += $NF } { all += $NF }
	     END { printf "%d and %d of %d\n", a, b, all
		   exit !(a >= 0.3 * all && b >= 0.3 * all) }' "$T/folded"
	run grep -E 'swaplib.*nofplib|nofplib.*swaplib' "$T/folded"
	assert_failure
	# A kernel without the tracepoint it learns this from: said with -v.
	BPFSCOPE_DISABLE=tracepoint "$BIN/profile" -v -F 9 1 > /dev/null 2> "$T/err"
	grep -q 'no mmap:vm_unmapped_area tracepoint: a library unloaded while traced' "$T/err"
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

# traced_while BANNER COMMANDS TOOL ARGS...: TOOL ARGS (-v among them),
# system-wide, folded output to $T/folded and stderr to $T/err, from its
# BANNER, once settled, until COMMANDS (shell text) have run; then stopped
# as with Ctrl-C.
traced_while() {
	local banner=$1 commands=$2
	shift 2
	# No duration of its own: it must not end before COMMANDS do.
	[[ ! ${!#} =~ ^[0-9.]+$ ]] || fail "traced_while: $* has a duration"
	: > "$T/folded"
	: > "$T/err"
	"$@" > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" "$banner" 120
	settled "$T/err"
	eval "$commands"
	tool_stop || fail "$(grep -v libbpf "$T/err" | tail -n 5)"
}

@test "unwind: short-lived processes, read at exec, named though gone before the report" {
	require_bpf
	# 150 runs of 4 ms each: most of each process's samples come before
	# or just after its libraries are mapped, and it is gone long before
	# the report. Before, 38% of such samples had [unknown] frames. The
	# loader's and libc's own frames have names from libc6-dbg (make
	# check installs it), as they would in perf's output.
	traced_while Sampling 'for i in $(seq 150); do "$NOFP" spin 0.004 > /dev/null; done' \
		"$BIN/profile" -v -F 999 -f
	# Named: 98-99% on a quiet machine, 95-99% on a busy one (CI runs
	# emulators beside the suite) or built with ASan, where more of the
	# first samples come before the tool has read the maps; 62% before.
	named "$T/folded" nofp 90
	share "$T/folded" nofp_leaf "$CHAIN"
	grep -q '^nofp;.*;main;nofp_level1;nofp_level2;nofp_level3;nofp_leaf' "$T/folded"
	# No binary refused and the processes' map (817) not half full: the
	# kernel is not asked to note their exits, each a wakeup for nothing.
	grep -E ' [1-9][0-9]* processes \(0 forgotten at their exit\)' "$T/err" ||
		fail "$(grep -E 'processes \(' "$T/err")"

	# Blocked 3 times 1 ms each in each of 150 processes: their off-CPU
	# time whole to main, the loader's included. Each naps as soon as it
	# runs: on a busy machine (CI runs emulators beside the suite) the tool
	# reads some processes' maps only after their first nap, whose stack then
	# ends above the leaf (94% whole there, 99% on a quiet one).
	traced_while Tracing 'for i in $(seq 150); do "$NOFP" nap 3 1 > /dev/null; done' \
		"$BIN/offcputime" -v -U -f
	named "$T/folded" nofp 90
	share "$T/folded" nofp_nap_leaf "$CHAIN" 90
}

@test "unwind: more processes than the map holds: those that exited make room" {
	require_bpf
	# Each exec read takes an entry; 800 execs fill the 204 there is
	# room for in 8 MB, the tool reading 250 and then 25 a second of
	# them (the rest it says it did not read): about 370 in the 4.8 s or
	# more they take. Each lives 0.3 s, fifty at a time (the map holds
	# four times as many: only the exited are to make room), so that
	# every one is read before it exits: a run of "spin 0" in a row, gone
	# in a millisecond, was read only now and then on a loaded machine
	# (CI), and some runs never filled the map. Started by xargs: bats's
	# shell took a second to fork fifty.
	local churn='seq 800 | xargs -P 50 -I{} sleep 0.3
		"$NOFP" spin 1 > /dev/null'
	# The kernel's exit notes drop each entry as its process exits: the
	# map never fills.
	traced_while Sampling "$churn" "$BIN/profile" -v --unwind-memory 8 -F 99 -f
	grep 'room for [0-9]* rows and 204 processes' "$T/err"
	grep -E ' [0-9]{3,} processes \([0-9]{3,} forgotten at their exit\)' "$T/err" ||
		fail "$(grep -E 'processes \(' "$T/err")"
	run grep -E "processes. map full|no room for their mappings" "$T/err"
	assert_failure
	share "$T/folded" nofp_leaf "$CHAIN"
	# Without them (their ring full), a sweep of /proc finds the exited
	# when the map is full.
	BPFSCOPE_DISABLE=exit_notes traced_while Sampling "$churn" \
		"$BIN/profile" -v --unwind-memory 8 -F 99 -f
	grep -E ' processes \(0 forgotten at their exit\)' "$T/err"
	grep -E 'processes. map full: dropped [0-9]{3,} that exited' "$T/err"
	run grep 'no room for their mappings' "$T/err"
	assert_failure
	share "$T/folded" nofp_leaf "$CHAIN"
}

@test "unwind: the rows' store on a real array of maps: ranges placed, joined when given back, chunks made and dropped" {
	require_bpf
	run "$BUILD/tests/unit/rowstore"
	echo "$output"
	assert_success
	[ "$(grep -c '^ok ' <<< "$output")" -eq 29 ]
}

@test "unwind: 2,000 libraries mapped and unmapped in turn: rows no process uses are given back, made again when mapped again" {
	require_bpf
	# 2,000 copies of a library of 1,557 rows (3.1 million rows in all),
	# each dlopen()ed by a process of its own for 8 ms of its CPU (about 4
	# samples, however busy the machine), in turn; then 200 of them again
	# (1,000 to 1,199), their rows given back long before. --unwind-memory 8
	# has room for 786,432 rows: without giving rows back, 1,606 copies
	# went without CFI and were said not to fit; without reading a binary
	# mapped again, the last 200 had 6 of 675 samples whole.
	mkdir "$T/libs"
	traced_while Sampling '"$NOFP" many "$WL/libpadlib.so" "$T/libs" 2000 8 > "$T/work"' \
		"$BIN/profile" -v -U -F 499 --unwind-memory 8 --json
	grep -q '^done' "$T/work"
	# None of the copies went without its rows. (System-wide, another big
	# binary may: a CI run's emulator, started beside the test, once did.)
	run grep -E "/libs/lib[0-9]+\.so: its unwind rows do not fit" "$T/err"
	assert_failure
	grep -E "unwind rows: [0-9]+ held in [0-9]+ chunks of 65536 \([0-9]+ KiB\); [0-9]{4} binaries' given back when no process used them, [0-9]{2,} made again" "$T/err" ||
		fail "$(grep 'unwind rows:' "$T/err")"
	# Each process's samples in its library's code, by the library's place
	# in the run: four quarters of the 2,000, then the 200 mapped again.
	# Whole to main in each: 86-90% here; a process's first samples come
	# before its maps are read, more of them on a loaded machine.
	/usr/bin/python3 - "$T/work" "$T/folded" <<'PY' || fail "$(cat "$T/err" | grep -v libbpf | tail -5)"
import json, sys
lib = {}
for line in open(sys.argv[1]):
    w = line.split()
    if w[0] == "lib":
        lib[int(w[3])] = int(w[1])
groups = [[0, 0] for _ in range(5)]
for line in open(sys.argv[2]):
    s = json.loads(line)
    if s["tgid"] not in lib or "nofplib_leaf" not in s["frames"]:
        continue
    i = lib[s["tgid"]]
    g = groups[4 if i >= 2000 else i // 500]
    g[0] += s["samples"]
    g[1] += s["samples"] * ("main;nofp_dlopened;nofplib_outer;nofplib_inner;nofplib_leaf" in ";".join(s["frames"]))
print("whole, by group:", ", ".join(f"{w} of {n}" for n, w in groups))
sys.exit(not all(n >= 100 and w * 100 >= 60 * n for n, w in groups))
PY
}

@test "unwind: execs past 25 a second are not read at exec, said; a process among them is read at its first sample" {
	require_bpf
	# Execs one after another (hostile's execs mode, faster than a shell's
	# loop) until 150 were past the rate, then a program started among
	# them: the rate's tokens go to them, most likely, not to it.
	traced_while Sampling '"$WL/hostile" execs /bin/true > /dev/null &
		SPAWNER=$!
		wait_notes_lost "$TPID" 0 150
		"$NOFP" spin 0 > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" "^pid " 60
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
		stop_bg "$SPAWNER" "$WPID"
		SPAWNER= WPID=' \
		"$BIN/profile" -v -F 99 -f
	grep -E '^profile: [1-9][0-9]{2,} processes not read at their exec \(more than 25 execs a second\)' "$T/err"
	# Its first sample or two by frame pointers, then by its CFI.
	share "$T/folded" nofp_leaf "$CHAIN" 90
}

@test "unwind: calls inlined where DWARF says so, marked in every output" {
	require_bpf
	# nofp_inl_a and nofp_inl_b are always inlined into nofp_inline_host:
	# only the -g build's DWARF knows them; the first frame (the loop in
	# nofp_inl_b) and return addresses (its call of nofp_leaf) both.
	start "$NOFP" inline 0
	sampled 2000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" --pprof "$T/p.pb.gz"
	# JSON as folded; bcc's text as perf script marks them.
	sampled 1000 "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	sampled 1000 "$T/text" "$T/err" "$BIN/profile" -p "$WPID" -F 199
	stop_bg "$WPID"
	WPID=
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
	grep '"nofp_inline_host"' "$T/json" | grep -q '"nofp_inl_a_\[i\]","nofp_inl_b_\[i\]"'
	grep -B1 '^    nofp_inline_host$' "$T/text" | grep -q '^    nofp_inl_a (inlined)$'
	# Without DWARF (stripped, .symtab kept): the same stacks without them.
	objcopy --strip-debug "$NOFP" "$T/nofp-nodebug"
	cp "$WL/libnofplib.so" "$T/"	# found by its $ORIGIN rpath
	start "$T/nofp-nodebug" inline 0
	sampled 1000 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	grep -q ';main;nofp_inline_host;nofp_leaf' "$T/folded"
	run grep -F '_[i]' "$T/folded"
	assert_failure
}
