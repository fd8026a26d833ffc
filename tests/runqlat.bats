#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# runqlat against a workload whose run-queue waits are known: spinners and a
# sleeper pinned to one CPU (tests/workloads/runq_contend.c).

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${WPID:-} ${RPID:-}
	remove_cgroup
	assert_nothing_loaded runqlat
}

# Starts the gated workload (it waits for SIGUSR1) and sets WPID.
start_workload() {
	: > "$T/work.out"
	"$WL/runq_contend" -g "$@" > "$T/work.out" &
	WPID=$!
	wait_for_line "$T/work.out" '^pid '
}

# Starts runqlat with the given arguments in the background, sets RPID.
start_runqlat() {
	: > "$T/out"
	: > "$T/err"
	"$BIN/runqlat" "$@" > "$T/out" 2> "$T/err" &
	RPID=$!
	wait_for_any 'Tracing|^\{' 120 "$T/out" "$T/err"
}

# Releases the workload, waits for it, then stops runqlat with signal $1.
finish() {
	local sig=${1:-INT}
	kill -USR1 "$WPID"
	wait "$WPID"
	WORKPID=$WPID
	WPID=
	kill -"$sig" "$RPID"
	wait "$RPID"
	RC=$?
	RPID=
	SLEEPER=$(awk '/^sleeper/ { print $2 }' "$T/work.out")
	BLOCKED=$(awk '/^sleeper/ { print $6 }' "$T/work.out")
	PREEMPTED=$(awk '/^sleeper/ { print $8 }' "$T/work.out")
	LONG=$(awk '/^long / { print $2 }' "$T/work.out")
}

# sleeper_ok COUNT: every wait of the sleeper counted (helpers.bash), less
# those the tool said it dropped or left untimed, or the kernel did not run
# its program for (one already running on that CPU).
sleeper_ok() {
	local untimed untraced
	untimed=$(awk '/wakeups not timed/ { n += $2 } END { print n + 0 }' "$T/err")
	untraced=$(awk '/ events not traced by .*: the kernel does not run a BPF program/ { n += $2 } END { print n + 0 }' "$T/err")
	sleeper_counted "$1" "$BLOCKED" $(( $(unseen_returns "$T/err") + untimed + untraced )) "$PREEMPTED"
}

# Prints the total count of the histogram labelled "$1 = $2" in $T/out.
section_total() {
	awk -v key="$1" -v id="$2" '
		/^[a-z]+ = / { on = ($1 == key && $3 == id) }
		on && / -> .* : [0-9]+ +\|/ { n += $5 }
		END { print n + 0 }' "$T/out"
}

@test "runqlat -p PID -m puts the spinners' waits in the millisecond buckets" {
	require_bpf
	start_workload -n 100 -s 3
	start_runqlat -p "$WPID" -m
	finish INT
	[ "$RC" -eq 0 ]
	run cat "$T/out"
	assert_line --partial "msecs               : count     distribution"
	# Three spinners share CPU 0 with a sleeper: each waits for the others'
	# slices, so most waits are 2 ms or more, and none near a second but
	# those the workload's own clocks saw (a machine that held its threads
	# off CPU 0 that long).
	total=$(hist_total "$T/out")
	long=$(awk '/ -> .* : [0-9]+ +\|/ && $1 >= 2 { n += $5 } END { print n + 0 }' "$T/out")
	huge=$(awk '/ -> .* : [0-9]+ +\|/ && $1 >= 512 { n += $5 } END { print n + 0 }' "$T/out")
	echo "total=$total long=$long huge=$huge, $LONG of 512 ms or more by the workload's clocks"
	[ "$total" -ge 150 ]
	[ $((long * 100 / total)) -ge 40 ]
	[ "$huge" -le "$LONG" ]
}

@test "runqlat -L counts every wakeup of the sleeper thread, labelled by tid" {
	require_bpf
	start_workload -n 100 -s 2
	start_runqlat -L -p "$WPID"
	finish INT
	sleeper_ok "$(section_total tid "$SLEEPER")"
	run grep -E "^tid = $SLEEPER runq_contend$" "$T/out"
	assert_success
	# Threads of the traced process only: 2 spinners, sleeper, main thread.
	run grep -c '^tid = ' "$T/out"
	[ "$output" -ge 3 ]
	[ "$output" -le 4 ]
}

@test "runqlat -P labels one histogram with the pid and its comm" {
	require_bpf
	start_workload -n 50 -s 2
	start_runqlat -P -p "$WPID"
	finish TERM
	[ "$RC" -eq 0 ]
	run grep '^pid = ' "$T/out"
	assert_output "pid = $WORKPID runq_contend"
	[ "$(section_total pid "$WORKPID")" -ge 51 ]
}

@test "runqlat -P and -L name a process started while traced as its exec named it, not its parent" {
	require_bpf
	# Forked by this shell, its first waits come before its exec.
	start_runqlat -P
	start_workload -n 20 -s 2
	finish INT
	run grep "^pid = $WORKPID " "$T/out"
	assert_output "pid = $WORKPID runq_contend"
	start_runqlat -L
	start_workload -n 20 -s 2
	finish INT
	run grep "^tid = $WORKPID " "$T/out"
	assert_output "tid = $WORKPID runq_contend"
}

@test "runqlat --json parses and counts what the text output counts" {
	require_bpf
	start_workload -n 100 -s 2
	start_runqlat --json -L -p "$WPID"
	finish INT
	# Every line is one JSON object; buckets add up to the total.
	run jq -e -s 'length >= 3 and all(.[]; .total == ([.buckets[].count] | add) and .unit == "usecs")' "$T/out"
	assert_success
	json_sleeper=$(jq -r --argjson t "$SLEEPER" 'select(.tid == $t) | .total' "$T/out")
	sleeper_ok "$json_sleeper"
	run jq -r --argjson t "$SLEEPER" 'select(.tid == $t) | .comm' "$T/out"
	assert_output runq_contend
	# Nothing but JSON on stdout: the banner goes to stderr.
	run grep -c 'Tracing' "$T/out"
	assert_output 0
}

@test "runqlat --percentiles adds ordered p50/p90/p99/max, in text and JSON" {
	require_bpf
	start_workload -n 50 -s 2
	start_runqlat --percentiles -p "$WPID"
	finish INT
	run grep -E '^ +(p50|p90|p99) = [0-9]+ usecs$|^ +max <= [0-9]+ usecs$' "$T/out"
	[ "${#lines[@]}" -eq 4 ]
	p=($(awk '/p50 =|p90 =|p99 =/ { print $3 } /max <=/ { print $3 }' "$T/out"))
	[ "${p[0]}" -le "${p[1]}" ]
	[ "${p[1]}" -le "${p[2]}" ]
	[ "${p[2]}" -le "${p[3]}" ]

	"$BIN/runqlat" --json --percentiles 1 1 > "$T/json" 2>/dev/null
	jq -e '.p50 <= .p90 and .p90 <= .p99 and .p99 <= .max' "$T/json"
}

@test "runqlat interval and count print that many reports, with -T times" {
	require_bpf
	run timeout 120 "$BIN/runqlat" -T 1 3
	assert_success
	[ "$(grep -c 'usecs               : count     distribution' <<<"$output")" -eq 3 ]
	[ "$(grep -cE '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$' <<<"$output")" -eq 3 ]
}

@test "runqlat prints the final histogram and exits 0 on SIGINT, SIGTERM and SIGHUP" {
	require_bpf
	for sig in INT TERM HUP; do
		: > "$T/out.$sig"
		"$BIN/runqlat" > "$T/out.$sig" &
		pid=$!
		wait_for_line "$T/out.$sig" Tracing 120
		# A wait to count, whatever else runs: this shell's, woken by
		# its child's exit.
		/bin/true
		kill -$sig $pid
		wait $pid || fail "exit status $? on SIG$sig"
		grep -q 'usecs               : count     distribution' "$T/out.$sig" ||
			fail "no histogram after SIG$sig: $(cat "$T/out.$sig")"
	done
}

@test "runqlat -c CGROUP measures only tasks in that cgroup" {
	require_bpf
	make_cgroup runqlat
	start_workload -n 50 -s 2
	echo "$WPID" > "$CG/cgroup.procs"
	start_runqlat -P -c "$CG"
	finish INT
	run grep '^pid = ' "$T/out"
	assert_output "pid = $WORKPID runq_contend"
}

@test "runqlat --pidnss labels by the PID namespace's inode" {
	require_bpf
	ns=$(readlink /proc/self/ns/pid | tr -dc 0-9)
	run timeout 120 "$BIN/runqlat" --pidnss 1 1
	assert_success
	assert_line "pidns = $ns"
}

@test "runqlat falls back to raw tracepoints and measures the same" {
	require_bpf
	start_workload -n 100 -s 2
	BPFSCOPE_DISABLE=tp_btf start_runqlat -v -L -p "$WPID"
	finish INT
	run grep 'with raw_tp' "$T/err"
	assert_success
	sleeper_ok "$(section_total tid "$SLEEPER")"
}

@test "runqlat: bad usage exits 2 with a message" {
	run "$BIN/runqlat" --no-such-option
	assert_failure 2
	assert_output --partial "Try \`runqlat --help'"
	run "$BIN/runqlat" 0
	assert_failure 2
	assert_output --partial "invalid interval '0'"
	run "$BIN/runqlat" 1 abc
	assert_failure 2
	assert_output --partial "invalid count 'abc'"
	run "$BIN/runqlat" -P -L
	assert_failure 2
	assert_output --partial "exclude each other"
	run "$BIN/runqlat" 1 2 3
	assert_failure 2
	run "$BIN/runqlat" -p -5
	assert_failure 2
}

@test "runqlat -c '' is a usage error, not a filter that lets everything through" {
	run "$BIN/runqlat" -c ''
	assert_failure 2
	assert_output "runqlat: -c needs a cgroup v2 path, such as system.slice/nginx.service or /sys/fs/cgroup/user.slice; leave -c out for every cgroup
Try \`runqlat --help' or \`runqlat --usage' for more information."
	run "$BIN/runqlat" --cgroup=
	assert_failure 2
	assert_line --index 0 --partial "runqlat: -c needs a cgroup v2 path"
}

@test "runqlat: argp's own messages name the tool, not the path it ran by" {
	run "$BIN/runqlat" -x
	assert_failure 2
	assert_output "runqlat: invalid option -- 'x'
Try \`runqlat --help' or \`runqlat --usage' for more information."
	run "$BIN/runqlat" --no-such-option
	assert_failure 2
	assert_line --index 0 "runqlat: unrecognized option '--no-such-option'"
	run "$BIN/runqlat" -p
	assert_failure 2
	assert_line --index 0 "runqlat: option requires an argument -- 'p'"
}

@test "runqlat: help and version exit 0" {
	run "$BIN/runqlat" --help
	assert_success
	assert_output --partial "EXAMPLES:"
	run "$BIN/runqlat" -h
	assert_success
	assert_output --partial "Usage: runqlat"
	run "$BIN/runqlat" -V
	assert_success
	assert_output --regexp '^runqlat \(bpfscope\) '
}

@test "runqlat -p of a pid that does not exist exits 1" {
	require_bpf
	run "$BIN/runqlat" -p 999999999
	assert_failure 1
	assert_output "runqlat: pid 999999999: no such process"
}

@test "runqlat -c of a missing cgroup exits 1" {
	require_bpf
	run "$BIN/runqlat" -c /sys/fs/cgroup/no-such-group-$$
	assert_failure 1
	assert_output --partial "not found"
}

@test "runqlat without privileges exits 1 and says what to do" {
	require_bpf
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/runqlat" 1 1
	assert_failure 1
	assert_output "runqlat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
