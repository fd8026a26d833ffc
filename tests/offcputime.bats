#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# offcputime on tests/workloads/offcpu.c: offcpu_sleeper() sleeps a known time,
# a known number of times, in an interruptible sleep.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${OPID:-} ${WPID:-}
	assert_nothing_loaded offcputime
}

# run_offcpu N MS ARGS...: traces the workload sleeping N x MS ms (MODE:
# sleep, or twins) with
# offcputime ARGS ("@PID" for the workload's pid); output in $T/out; sets
# WALL, the µs its sleeps took by its own clock (offcpu.c's "done" line).
run_offcpu() {
	local n=$1 ms=$2
	shift 2
	: > "$T/work"
	"$WL/offcpu" "${MODE:-sleep}" "$n" "$ms" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid '
	: > "$T/out"
	: > "$T/err"
	"$BIN/offcputime" "${@/#@PID/$WPID}" > "$T/out" 2> "$T/err" &
	OPID=$!
	wait_for_any Tracing 120 "$T/out" "$T/err"
	kill -USR1 "$WPID"
	wait "$WPID"
	WALL=$(awk '/^done / { print $3 }' "$T/work")
	N=$n MS=$ms
	WORKPID=$WPID
	WPID=
	sleep 0.5	# the workload has exited: its symbols must survive it
	kill -INT "$OPID"
	wait "$OPID"
	RC=$?
	OPID=
	# Periods of $ms the tool said it had to drop (docs/known-issues.md).
	local unseen=$(unseen_returns "$T/err")
	# Of one process, one in hundreds at most: more would be the tool's bug.
	[[ " $* " != *" -p @PID "* ]] || [ "$unseen" -le 2 ] ||
		fail "$unseen periods dropped: $(cat "$T/err")"
	SHORT=$((unseen * ms * 1000))
}

# stretched US: how many of the last run's sleeps can have lasted US µs or
# more, by the workload's own clock (WALL): a loaded machine keeps a woken
# sleeper off its CPU a while, which can carry its period across a -m or
# -M bound. 0 on a quiet machine.
stretched() {
	local k=$(( (WALL - N * MS * 1000) / ($1 - MS * 1000) ))
	echo $((k < 0 ? 0 : k))
}

# Total microseconds of the multi-line stacks that contain frame $1.
stack_total() {
	awk -v f="$1" '
		/^    [^ -]/ && $1 == f { hit = 1 }
		/^        [0-9]+$/ { if (hit) n += $1; hit = 0 }
		END { print n + 0 }' "$T/out"
}

@test "offcputime -p PID -U: the sleeping function, with the time it slept" {
	require_bpf
	run_offcpu 10 50 -p @PID -U
	[ "$RC" -eq 0 ]
	run grep -x "    offcpu_sleeper" "$T/out"
	assert_success
	run grep -x "    -                offcpu ($WORKPID)" "$T/out"
	assert_success
	# 10 x 50 ms, less 2%; no more than the sleeps took by the workload's
	# own clock (nanosleep overshoots by timer slack, a loaded machine by
	# its delays in waking the sleeper), and 2 ms.
	total=$(stack_total offcpu_sleeper)
	echo "total $total us, the sleeps' own $WALL us"
	[ "$total" -ge $((490000 - SHORT)) ]
	[ "$total" -le $((WALL + 2000)) ]
}

@test "offcputime -f: folded, root first, with the same total" {
	require_bpf
	run_offcpu 10 50 -p @PID -f
	run grep -E '^offcpu;(.*;)?main;offcpu_sleeper;.*do_nanosleep;.*__schedule [0-9]+$' "$T/out"
	assert_success
	total=$(awk '/offcpu_sleeper/ { n += $NF } END { print n + 0 }' "$T/out")
	echo "total $total us, the sleeps' own $WALL us"
	[ "$total" -ge $((490000 - SHORT)) ]
	[ "$total" -le $((WALL + 2000)) ]
	run grep -c Tracing "$T/out"
	assert_output 0
	grep -q '^Tracing off-CPU time' "$T/err"
}

@test "offcputime: a thread blocked where it was before is recalled, and walked again if a caller changed" {
	require_bpf
	MODE=twins run_offcpu 20 20 -p @PID -f -v
	[ "$RC" -eq 0 ]
	left=$(awk '/;offcpu_left;offcpu_nap;/ { n += $NF } END { print n + 0 }' "$T/out")
	right=$(awk '/;offcpu_right;offcpu_nap;/ { n += $NF } END { print n + 0 }' "$T/out")
	echo "offcpu_left $left us, offcpu_right $right us (10 x 20 ms, 10 x 40 ms), the naps' own $WALL us"
	# Each its own: a stack recalled across the change of caller gives one
	# the other's naps (the same registers, another return address).
	[ "$left" -ge $((196000 - SHORT)) ]
	[ "$right" -ge $((392000 - SHORT)) ]
	[ $((left + right)) -le $((WALL + 2000)) ]
	[ $((right * 10)) -ge $((left * 18)) ]
	[ $((right * 10)) -le $((left * 22)) ]
	# Four of each five naps are where the last one was: 16, more if a
	# nap was also preempted in its system call. Programs for kernels
	# before 5.17 keep no memo (no task storage there for them).
	recalled=$(sed -n "s/.* \([0-9]*\) blocked threads' stacks recalled.*/\1/p" "$T/err")
	echo "recalled: $recalled"
	if grep -q 'kernels before 5.17' "$T/err"; then
		[ "$recalled" -eq 0 ]
	else
		[ "$recalled" -ge 16 ]
	fi
}

@test "offcputime -K starts kernel stacks at the scheduler, not at the tracer" {
	require_bpf
	run_offcpu 5 20 -p @PID -K
	run awk '/^Tracing/ { getline; print; exit }' "$T/out"
	assert_output "    __schedule"
	run grep -E 'bpf_prog_|bpf_trace_run|__traceiter_' "$T/out"
	assert_failure
}

@test "offcputime -d: a delimiter between kernel and user stacks" {
	require_bpf
	run_offcpu 5 20 -p @PID -d
	# The sleeper's stack has it right below; not always the first stack
	# (one run's first was the workload's own write of its output).
	run grep -x -A1 "    --" "$T/out"
	assert_line "    offcpu_sleeper"
	run_offcpu 5 20 -p @PID -d -f
	run grep -E ';offcpu_sleeper;-;' "$T/out"
	assert_success
}

@test "offcputime -m and -M keep or drop a stack by its block time" {
	require_bpf
	# A sleep of 50 ms is kept past -m 100000 only if the machine made it
	# last 100 ms, as the workload's own clock would say.
	run_offcpu 5 50 -p @PID -U -m 100000
	kept=$(stack_total offcpu_sleeper)
	echo "-m 100000: $kept us kept, $(stretched 100000) sleeps can have lasted 100 ms"
	[ "$kept" -eq 0 ] || [ "$(stretched 100000)" -ge 1 ]
	[ "$kept" -le "$WALL" ]
	run_offcpu 5 50 -p @PID -U -M 10000
	[ "$(stack_total offcpu_sleeper)" -eq 0 ]
	# Less those the machine made last past -M 200000, if its clock says so.
	run_offcpu 5 50 -p @PID -U -m 20000 -M 200000
	[ "$(stack_total offcpu_sleeper)" -ge $((245000 - SHORT - $(stretched 200000) * 49000)) ]
}

@test "offcputime --state is a bitmask: 1 keeps interruptible sleep, 2 does not" {
	require_bpf
	run_offcpu 5 50 -p @PID -U --state 1
	[ "$(stack_total offcpu_sleeper)" -ge $((245000 - SHORT)) ]
	run_offcpu 5 50 -p @PID -U --state 2
	[ "$(stack_total offcpu_sleeper)" -eq 0 ]
	run_offcpu 5 50 -p @PID -U --state 3
	[ "$(stack_total offcpu_sleeper)" -ge $((245000 - SHORT)) ]
}

@test "offcputime -u and -k: user threads or kernel threads only" {
	require_bpf
	run_offcpu 5 50 -u -f
	run grep -c '^offcpu;' "$T/out"
	[ "$output" -ge 1 ]
	run_offcpu 5 50 -k -f
	run grep -c '^offcpu;' "$T/out"
	assert_output 0
	# Kernel threads have no user stack, and are named like kernel threads.
	run grep -cE '^(kworker|ksoftirqd|rcu_|migration|kcompactd|jbd2|kthreadd|watchdog)' "$T/out"
	[ "$output" -ge 1 ]
}

@test "offcputime --json: one object per stack, frames root first" {
	require_bpf
	run_offcpu 5 20 -p @PID --json -U
	run jq -e -s --argjson p "$WORKPID" --argjson min $((98000 - SHORT)) '
		map(select(.tgid == $p and (.frames | index("offcpu_sleeper")))) |
		length >= 1 and (.[0].frames[-1] == "offcpu_sleeper") and .[0].total_us >= $min' "$T/out"
	assert_success
}

@test "offcputime falls back to raw tracepoints" {
	require_bpf
	BPFSCOPE_DISABLE=tp_btf run_offcpu 5 20 -v -p @PID -U
	grep -q 'with raw_tp' "$T/err"
	[ "$(stack_total offcpu_sleeper)" -ge $((98000 - SHORT)) ]
}

@test "offcputime reports lost stacks when the stack map is too small" {
	require_bpf
	run timeout 120 "$BIN/offcputime" --stack-storage-size 1 -f 2
	assert_success
	assert_output --regexp 'offcputime: [0-9]+ stack traces lost: raise --stack-storage-size \(now 1\)'
	# Folded output spells a space in a name as '_', as it does in every name.
	assert_output --partial '[Missed_Kernel_Stack]'
}

@test "offcputime --hash-storage-size sizes the totals table, and the drop message names it" {
	require_bpf
	# System-wide for 2 s: far more than one distinct stack.
	timeout 120 "$BIN/offcputime" --hash-storage-size 1 -f 2 > "$T/out" 2> "$T/err"
	[ "$(wc -l < "$T/out")" -eq 1 ] || fail "$(cat "$T/out")"
	run grep 'distinct stacks' "$T/err"
	assert_output --regexp '^offcputime: [0-9]+ off-CPU periods dropped: the table of distinct stacks was full; raise --hash-storage-size \(now 1\)$'
	timeout 120 "$BIN/offcputime" --hash-storage-size 65536 -f 2 > "$T/out" 2> "$T/err"
	[ "$(wc -l < "$T/out")" -gt 1 ]
	run grep -c 'distinct stacks' "$T/err"
	assert_output 0
}

@test "offcputime: options that others make moot are said to be ignored" {
	NOROOT="offcputime: need root (or CAP_BPF and CAP_PERFMON); try sudo"
	run unprivileged "$BIN/offcputime" -U -d
	assert_failure 1
	assert_output "offcputime: -U shows user stacks only; -d is ignored
$NOROOT"
	run unprivileged "$BIN/offcputime" -K -d --unwind=dwarf --unwind-memory 8
	assert_output "offcputime: -K shows kernel stacks only; -d, --unwind and --unwind-memory are ignored
$NOROOT"
	run unprivileged "$BIN/offcputime" -f --json
	assert_output "offcputime: -f prints folded lines; --json is ignored
$NOROOT"
	run unprivileged "$BIN/offcputime" -d -f
	assert_output "$NOROOT"
}

@test "offcputime: errors" {
	run "$BIN/offcputime" -x
	assert_failure 2
	assert_output "offcputime: invalid option -- 'x'
Try \`offcputime --help' or \`offcputime --usage' for more information."
	run "$BIN/offcputime" -u -k
	assert_failure 2
	run "$BIN/offcputime" -m 10 -M 5
	assert_failure 2
	assert_output --partial "-m 10 is above -M 5"
	run "$BIN/offcputime" 0
	assert_failure 2
	require_bpf
	run "$BIN/offcputime" -p 999999999
	assert_failure 1
	assert_output "offcputime: pid 999999999: no such process"
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/offcputime" 1
	assert_failure 1
	assert_output "offcputime: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
