#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# offwaketime on tests/workloads/offcpu.c in pipe mode: offcpu_reader() blocks
# reading a pipe that offcpu_waker() writes to a known time later.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${OPID:-} ${WPID:-}
	assert_nothing_loaded offwaketime
}

# run_offwake N MS ARGS...: traces the workload's reader blocking N times
# until its writer writes, MS ms after its last write, with offwaketime ARGS
# ("@PID" for the workload's pid); output in $T/out; sets WALL, the µs its
# reads took by its own clock (offcpu.c's "done" line).
run_offwake() {
	local n=$1 ms=$2
	shift 2
	: > "$T/work"
	"$WL/offcpu" pipe "$n" "$ms" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid '
	: > "$T/out"
	: > "$T/err"
	"$BIN/offwaketime" "${@/#@PID/$WPID}" > "$T/out" 2> "$T/err" &
	OPID=$!
	wait_for_any Tracing 120 "$T/out" "$T/err"
	kill -USR1 "$WPID"
	wait "$WPID"
	WALL=$(awk '/^done / { print $3 }' "$T/work")
	N=$n MS=$ms
	WORKPID=$WPID
	WPID=
	sleep 0.3
	kill -INT "$OPID"
	wait "$OPID"
	RC=$?
	OPID=
	# Blocks of $ms the tool said it had to drop (docs/known-issues.md).
	local unseen=$(unseen_returns "$T/err")
	# One in hundreds at most: more would be the tool's bug, not the kernel's.
	[ "$unseen" -le 2 ] || fail "$unseen periods dropped: $(cat "$T/err")"
	SHORT=$((unseen * ms * 1000))
}

# stretched US: how many of the last run's blocks can have lasted US µs or
# more, by the workload's own clock (WALL): a loaded machine wakes the
# writer late now and then, which can carry a block across a -m bound.
# 0 on a quiet machine.
stretched() {
	local k=$(( (WALL - N * MS * 1000) / ($1 - MS * 1000) ))
	echo $((k < 0 ? 0 : k))
}

@test "offwaketime: the reader's blocking stack, the writer's waking stack, not swapped" {
	require_bpf
	run_offwake 10 20 -p @PID
	[ "$RC" -eq 0 ]
	# The record whose waker woke it from offcpu_waker() (the waker thread's own
	# sleeps have offcpu_waker in their target's stack, woken by a timer).
	awk '/^    waker:/ { rec = ""; w = 1 } /^    --  / { w = 0 } w && /offcpu_waker/ { hit = 1 }
		{ rec = rec $0 "\n" } /^        [0-9]+$/ { if (hit) printf "%s", rec; hit = 0 }' "$T/out" > "$T/rec"
	waker=$(sed -n '/waker:/,/^    --  /p' "$T/rec")
	target=$(sed -n '/^    --  /,/target:/p' "$T/rec")
	grep -qx '    offcpu_waker' <<<"$waker" || fail "waker stack: $waker"
	grep -qx '    try_to_wake_up' <<<"$waker" || fail "no try_to_wake_up in the waker's stack: $waker"
	grep -qx '    offcpu_reader' <<<"$target" || fail "target stack: $target"
	! grep -qx '    offcpu_waker' <<<"$target" || fail "waker's function in the target's stack"
	! grep -qx '    offcpu_reader' <<<"$waker" || fail "reader's function in the waker's stack"
	grep -qE '^    target: +offcpu [0-9]+$' "$T/rec"
	total=$(awk '/^        [0-9]+$/ { n += $1 } END { print n + 0 }' "$T/rec")
	# 10 blocks of ~20 ms each (the writer sleeps 20 ms, then writes), no
	# more than the reads took by the workload's own clock (a loaded
	# machine wakes the writer late), and 2 ms.
	echo "total $total us, the reads' own $WALL us"
	[ "$total" -ge $((190000 - SHORT)) ]
	[ "$total" -le $((WALL + 2000)) ]
}

@test "offwaketime -f: target;stack;--;waker stack;waker count" {
	require_bpf
	run_offwake 10 20 -p @PID -f
	run grep -E '^offcpu;(.*;)?offcpu_reader;.*anon_pipe_read.*;--;try_to_wake_up;.*anon_pipe_write;.*offcpu_waker;.*;offcpu [0-9]+$' "$T/out"
	assert_success
}

@test "offwaketime -U/-K and -m filter" {
	require_bpf
	run_offwake 5 20 -p @PID -f -U
	run grep -E 'anon_pipe|try_to_wake_up' "$T/out"
	assert_failure
	run grep -E 'offcpu_reader;--;offcpu_waker' "$T/out"
	assert_success
	# None of 20 ms is kept, but one the machine made last 100 ms, as the
	# workload's own clock would say.
	run_offwake 5 20 -p @PID -f -m 100000
	kept=$(grep -c offcpu_reader "$T/out" || true)
	echo "-m 100000: $kept kept, $(stretched 100000) blocks can have lasted 100 ms"
	[ "$kept" -eq 0 ] || [ "$kept" -le "$(stretched 100000)" ]
}

@test "offwaketime --json" {
	require_bpf
	run_offwake 5 20 -p @PID --json
	# The reader's blocks, woken from offcpu_waker(): the reader before "--", the waker after.
	run jq -e -s 'map(select(.frames | index("offcpu_reader"))) | length >= 1 and
		all(.[]; (.frames | index("offcpu_reader")) < (.frames | index("--")) and
			 (.frames | index("--")) < (.frames | index("offcpu_waker")))' "$T/out"
	assert_success
}

@test "offwaketime --hash-storage-size sizes the totals table, and the drop message names it" {
	require_bpf
	# System-wide for 2 s: far more than one distinct stack pair.
	timeout 120 "$BIN/offwaketime" --hash-storage-size 1 -f 2 > "$T/out" 2> "$T/err"
	[ "$(wc -l < "$T/out")" -eq 1 ] || fail "$(cat "$T/out")"
	run grep 'distinct stack pairs' "$T/err"
	assert_output --regexp '^offwaketime: [0-9]+ blocked periods dropped: the table of distinct stack pairs was full; raise --hash-storage-size \(now 1\)$'
	timeout 120 "$BIN/offwaketime" --hash-storage-size 65536 -f 2 > "$T/out" 2> "$T/err"
	[ "$(wc -l < "$T/out")" -gt 1 ]
	run grep -c 'distinct stack pairs' "$T/err"
	assert_output 0
}

@test "offwaketime: options that others make moot are said to be ignored" {
	NOROOT="offwaketime: need root (or CAP_BPF and CAP_PERFMON); try sudo"
	run unprivileged "$BIN/offwaketime" -U -d
	assert_failure 1
	assert_output "offwaketime: -U shows user stacks only; -d is ignored
$NOROOT"
	run unprivileged "$BIN/offwaketime" -K -d --unwind=dwarf --unwind-memory 8
	assert_output "offwaketime: -K shows kernel stacks only; -d, --unwind and --unwind-memory are ignored
$NOROOT"
	run unprivileged "$BIN/offwaketime" -f --json
	assert_output "offwaketime: -f prints folded lines; --json is ignored
$NOROOT"
	run unprivileged "$BIN/offwaketime" -d -f
	assert_output "$NOROOT"
}

@test "offwaketime: errors" {
	run "$BIN/offwaketime" -x
	assert_failure 2
	assert_output "offwaketime: invalid option -- 'x'
Try \`offwaketime --help' or \`offwaketime --usage' for more information."
	run "$BIN/offwaketime" -U -K
	assert_failure 2
	require_bpf
	run "$BIN/offwaketime" -t 999999999
	assert_failure 1
	assert_output "offwaketime: tid 999999999: no such thread"
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/offwaketime" 1
	assert_failure 1
	assert_output "offwaketime: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
