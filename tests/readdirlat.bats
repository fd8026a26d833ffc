#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# readdirlat against a workload that lists a directory of known entries with a
# chosen buffer size (tests/workloads/lsdir.c) and reports what it saw.

load helpers

setup_file() {
	export DIR=$BATS_FILE_TMPDIR/many
	mkdir -p "$DIR"
	# 1000 four-character names: 24-byte records, 1002 with "." and "..".
	for i in $(seq -w 0 999); do : > "$DIR/f$i"; done
	DIR=$(realpath "$DIR")
}

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${RPID:-}
	assert_nothing_loaded readdirlat
}

start_rdl() {
	"$BIN/readdirlat" "$@" > "$T/out" 2> "$T/err" &
	RPID=$!
	wait_for_line "$T/out" 'Tracing|TIME' 10 2>/dev/null || wait_for_line "$T/err" 'Tracing' 10
}

stop_rdl() {
	kill -INT "$RPID"
	wait "$RPID"
	RC=$?
	RPID=
}

# Runs lsdir and sets W_PID, W_CALLS, W_ENTRIES, W_BYTES from what it printed.
lsdir() {
	read -r _ W_PID _ W_CALLS _ W_ENTRIES _ W_BYTES < <("$WL/lsdir" "$@")
}

# The -S row of pid $1 as "CALLS SCANS CALLS/SCAN BUFSZ BYTES ENTRIES DIR".
row() {
	awk -v pid="$1" '$2 == pid { print $4, $5, $6, $7, $8, $9, $3 }' "$T/out"
}

@test "readdirlat -S: buffer size, calls per scan, bytes and exact entries per reader" {
	require_bpf
	start_rdl -S -c lsdir
	lsdir "$DIR" 8192 3
	p8=$W_PID c8=$W_CALLS e8=$W_ENTRIES b8=$W_BYTES
	lsdir "$DIR" 32768 3
	p32=$W_PID c32=$W_CALLS e32=$W_ENTRIES b32=$W_BYTES
	stop_rdl
	[ "$RC" -eq 0 ]
	# 1002 records of 24 bytes: 341 fit in 8 KiB, so 3 calls with data and
	# one that returns 0 per scan; all of them fit in 32 KiB: 1 + 1.
	[ "$e8" -eq 3006 ] && [ "$c8" -eq 12 ] && [ "$c32" -eq 6 ]
	run row "$p8"
	assert_output "12 3 4.00 8192 $b8 3006 $DIR"
	run row "$p32"
	assert_output "6 3 2.00 32768 $b32 3006 $DIR"
}

@test "readdirlat names /proc as /proc, across the mount" {
	require_bpf
	start_rdl -S -c lsdir
	lsdir /proc 32768 2
	stop_rdl
	run row "$W_PID"
	assert_output --regexp "^$W_CALLS 2 [0-9.]+ 32768 $W_BYTES $W_ENTRIES /proc\$"
}

@test "readdirlat --min-us 0 prints every call, with its directory, buffer and bytes" {
	require_bpf
	start_rdl --min-us 0 -c lsdir
	lsdir "$DIR" 8192 2
	sleep 0.3
	stop_rdl
	run grep -cE "^[0-9:]{8} lsdir +$W_PID +$DIR +8192 +[0-9]+ +[0-9.]+$" "$T/out"
	assert_output "$W_CALLS"
	run awk -v pid="$W_PID" '$3 == pid { n += $6 } END { print n }' "$T/out"
	assert_output "$W_BYTES"
}

@test "readdirlat -D and -P: histograms labelled by directory and by process" {
	require_bpf
	start_rdl -D -c lsdir
	lsdir "$DIR" 8192 2
	stop_rdl
	run grep -x "dir = $DIR" "$T/out"
	assert_success
	[ "$(hist_total "$T/out")" -eq "$W_CALLS" ]

	start_rdl -P -c lsdir
	lsdir "$DIR" 8192 1
	stop_rdl
	run grep '^pid = ' "$T/out"
	assert_output "pid = $W_PID lsdir"
	[ "$(hist_total "$T/out")" -eq "$W_CALLS" ]
}

@test "readdirlat -p filters by process; -c by name" {
	require_bpf
	"$WL/lsdir" "$DIR" 8192 1 >/dev/null	# warm the directory
	sleep 30 &
	other=$!
	start_rdl -S -p "$other"
	lsdir "$DIR" 8192 1
	stop_rdl
	kill $other
	run grep -c lsdir "$T/out"
	assert_output 0
	start_rdl -S -c no-such-comm
	lsdir "$DIR" 8192 1
	stop_rdl
	run grep -c lsdir "$T/out"
	assert_output 0
}

@test "readdirlat --json: summary rows and histograms parse and agree" {
	require_bpf
	start_rdl -S --json -c lsdir
	lsdir "$DIR" 8192 2
	stop_rdl
	run jq -r --argjson p "$W_PID" 'select(.pid == $p) | "\(.calls) \(.scans) \(.entries) \(.bufsz) \(.dir)"' "$T/out"
	assert_output "$W_CALLS 2 2004 8192 $DIR"
	start_rdl --json --percentiles -c lsdir
	lsdir "$DIR" 8192 1
	stop_rdl
	run jq -e --argjson c "$W_CALLS" '.total == $c and .p50 <= .max' "$T/out"
	assert_success
}

@test "readdirlat cuts a deep path at 8 components and says so" {
	require_bpf
	deep=$T/a/b/c/d/e/f/g/h/i/j
	mkdir -p "$deep"
	start_rdl -S -c lsdir
	lsdir "$deep" 8192 1
	stop_rdl
	run row "$W_PID"
	assert_output --regexp ' \.\.\./c/d/e/f/g/h/i/j$'
}

@test "readdirlat falls back to raw_syscalls and counts the same" {
	require_bpf
	BPFSCOPE_DISABLE=tracepoint start_rdl -v -S -c lsdir
	lsdir "$DIR" 8192 1
	stop_rdl
	grep -q raw_syscalls "$T/err"
	run row "$W_PID"
	assert_output "4 1 4.00 8192 $W_BYTES 1002 $DIR"
}

@test "readdirlat: errors" {
	run "$BIN/readdirlat" -P -D
	assert_failure 2
	assert_output --partial "exclude each other"
	run "$BIN/readdirlat" --min-us abc
	assert_failure 2
	run "$BIN/readdirlat" -c a-name-longer-than-15
	assert_failure 2
	assert_output --partial "longer than the kernel's 15 characters"
	require_bpf
	run "$BIN/readdirlat" -p 999999999
	assert_failure 1
	assert_output "readdirlat: pid 999999999: no such process"
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/readdirlat" 1 1
	assert_failure 1
	assert_output "readdirlat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
