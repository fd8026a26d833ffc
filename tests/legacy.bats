#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What the tools do on kernels before 5.17, here on this one: with
# BPFSCOPE_DISABLE=bpf_loop,task_storage they take the paths Linux 5.10
# leaves them (the legacy BPF objects: no callbacks, threads' state in hashes
# by thread id, functions known by address instead of attach cookies), say
# so with -v, and count what the newer paths count. make check-vm runs the
# same tools on a real 5.10.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	export BPFSCOPE_DISABLE=bpf_loop,task_storage
}

teardown() {
	stop_bg ${TPID:-} ${WPID:-}
	assert_nothing_loaded profile offcputime offwaketime readdirlat funclatency runqlat cachestat
}

# gated WORKLOAD ARGS...: starts a workload that waits for SIGUSR1; sets WPID.
gated() {
	: > "$T/work"
	"$@" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
}

# traced TOOL ARGS...: TOOL ARGS ("@PID": the workload's) in the background
# until the gated workload has run, then Ctrl-C; output in $T/out, $T/err.
traced() {
	local tool=$1
	shift
	: > "$T/out"
	: > "$T/err"
	tool_start "$T/out" "$T/err" "$BIN/$tool" -v "${@/#@PID/$WPID}"
	kill -USR1 "$WPID"
	wait "$WPID"
	WPID=
	tool_stop || fail "$(tail -n 5 "$T/err")"
}

# sampled MS TOOL ARGS...: TOOL ARGS -p on the workload ($WPID, which runs
# until stopped), from its banner until it has had MS ms more of CPU, then
# stopped as with Ctrl-C: about MS * F / 1000 samples at F Hz, however
# slowly a loaded machine runs it. $output and $lines hold what it printed
# (standard output, then error), as run would have them.
sampled() {
	local ms=$1 tool=$2
	shift 2
	tool_start "$T/out" "$T/err" "$BIN/$tool" -p "$WPID" "$@"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + ms ))
	tool_stop || fail "$(tail -n 5 "$T/err")"
	run cat "$T/out" "$T/err"
}

@test "legacy: profile, offcputime and offwaketime walk stacks off their legacy objects, with CFI or frame pointers" {
	require_bpf
	: > "$T/spin"
	"$WL/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	sampled 1000 profile -v -F 99 -f
	assert_line --partial "profile: BPF programs for kernels before 5.17 (no bpf_loop)"
	assert_line --partial "user stacks: CFI (.eh_frame), frame pointers where there is none"
	assert_line --partial "; no Python frames before Linux 5.17"
	assert_line --regexp '^spin;.*;main;spin_heavy(;.*)? [0-9]+$'
	sampled 1000 profile -v --unwind=fp -F 99 -f
	assert_line --partial "user stacks: frame pointers (--unwind=fp)"
	assert_line --regexp '^spin;.*;main;spin_heavy(;.*)? [0-9]+$'
	# A kernel keeping the user registers where the legacy walk does not
	# look (KASAN's larger stacks): the kernel's walk, counted and said.
	# A second of its CPU: about 99 samples.
	BPFSCOPE_DISABLE=$BPFSCOPE_DISABLE,user_regs sampled 1000 profile -F 99 -f
	assert_line --regexp '^spin;.*;main;spin_heavy(;.*)? [0-9]+$'
	n=$(sed -n 's/^profile: \([0-9]*\) user stacks were walked by frame pointers: the tool did not find their user registers .*KASAN.*/\1/p' "$T/err")
	samples=$(awk '/^spin;/ { n += $NF } END { print n + 0 }' "$T/out")
	echo "${n:-no} stacks said walked by frame pointers, $samples samples"
	[ -n "$n" ]
	[ "$n" -ge "$samples" ]
	[ "$samples" -ge 50 ]
	stop_bg "$WPID"

	gated "$WL/offcpu" sleep 10 20
	traced offcputime -f -p @PID
	grep -q 'offcputime: BPF programs for kernels before 5.17' "$T/err"
	grep -q 'sched_switch with raw_tp (no task storage for tracing programs, Linux 5.12)' "$T/err"
	us=$(awk '/;offcpu_sleeper;.*do_nanosleep/ { n += $NF } END { print n + 0 }' "$T/out")
	short=$(( $(unseen_returns "$T/err") * 20000 ))
	# At most the time its sleeps took by its own clock (WALL, in "done OFF
	# WALL"), and a little: a loaded machine wakes a sleeper late.
	read -r off wall < <(awk '/^done / { print $2, $3 }' "$T/work")
	echo "offcpu_sleeper: $us us of 200000 (its own clock: $off off its CPU, $wall in all), $short dropped"
	[ "$us" -ge $((196000 - short)) ]
	[ "$us" -le $((wall + 2000)) ]

	gated "$WL/offcpu" pipe 10 20
	traced offwaketime -f -p @PID
	grep -q 'sched_waking with raw_tp (no task storage' "$T/err"
	grep -qE ';offcpu_reader;.*--;.*offcpu_waker;' "$T/out"
}

@test "legacy: readdirlat times calls through a hash by thread, and says it counts no entries" {
	require_bpf
	: > "$T/out"
	: > "$T/err"
	"$BIN/readdirlat" -v -S -c lsdir > "$T/out" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/out" Tracing 120
	set -- $("$WL/lsdir" /proc 8192 3)
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	grep -q 'readdirlat: BPF programs for kernels before 5.17' "$T/err"
	# COMM PID CALLS SCANS CALLS/SCAN BUFSZ BYTES ENTRIES AVG MAX DIR
	run awk -v p="$2" '$2 == p { print $3, $4, $6, $7, $8, $11 }' "$T/out"
	assert_output "$4 3 8192 $8 - /proc"
	run "$BIN/readdirlat" --json -S -c lsdir 1 1
	assert_success
}

@test "legacy: funclatency -F knows functions by address where there are no attach cookies" {
	require_bpf
	F=$WL/funcs
	gated "$F"
	traced funclatency -F -p @PID "$F:*_func"
	grep -q 'functions known by their addresses (the BPF for kernels before 5.17 reads no attach cookies)' "$T/err" ||
		fail "not by address: $(grep -- -F: "$T/err")"
	# slow_func: 20 calls of 10 ms; fast_func: 1000 at once.
	awk '/^Function = / { f = $3 } /^avg = / { print f, $NF }' "$T/out" > "$T/counts"
	run cat "$T/counts"
	assert_line "slow_func 20"
	assert_line "fast_func 1000"
	# System-wide, a user function's address differs by process: said, exit 1.
	run "$BIN/funclatency" -F "$F:*_func"
	assert_failure 1
	assert_output --partial "-F on user-space functions needs Linux 5.17 (bpf_loop, with which funclatency's BPF reads attach cookies) unless -p names the process"
	# Without -F nothing needs the address: recursion timed by the thread's hash.
	gated "$F"
	traced funclatency -u -p @PID "$F:recurse"
	[ "$(hist_total "$T/out")" -eq 50 ]
}

@test "legacy: runqlat keeps wakeups in a hash by thread id where tracing programs have no task storage" {
	require_bpf
	gated "$WL/runq_contend" -g -n 30 -s 2
	traced runqlat -L -p @PID
	grep -q 'raw_tp (no task storage for tracing programs, Linux 5.12)' "$T/err"
	sleeper=$(awk '/^sleeper/ { print $2 }' "$T/work")
	blocked=$(awk '/^sleeper/ { print $6 }' "$T/work")
	preempted=$(awk '/^sleeper/ { print $8 }' "$T/work")
	n=$(awk -v t="$sleeper" '/^tid = / { on = ($3 == t) } on && / -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$T/out")
	short=$(( $(unseen_returns "$T/err") ))
	echo "sleeper: $n wakeups of $blocked sleeps off the CPU and its first, $short dropped"
	# Each sleep that left the CPU, its first wakeup and its preemptions
	# (by the workload's count), less one: a wait
	# whose wakeup went untraced before a traced switch in, on this
	# development kernel, as sleeper_counted (helpers.bash) says.
	[ "$blocked" -ge 27 ]
	[ "$n" -ge $((blocked - short)) ]
	[ "$n" -le $((35 + preempted)) ]
}

@test "legacy: a kernel without BTF or ring buffers is named as the reason, exit 1, for every tool" {
	require_bpf
	for t in runqlat biolatency cachestat profile offcputime offwaketime funclatency readdirlat; do
		args=(1)
		[ "$t" = funclatency ] && args=(-d 1 vfs_read)
		BPFSCOPE_DISABLE=btf run "$BIN/$t" "${args[@]}"
		assert_failure 1
		assert_output "$t: this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF): bpfscope needs Linux 5.10 or later built with it"
		BPFSCOPE_DISABLE=ringbuf run "$BIN/$t" "${args[@]}"
		assert_failure 1
		assert_output "$t: this kernel has no BPF ring buffer (Linux 5.8): bpfscope needs Linux 5.10 or later"
	done
}
