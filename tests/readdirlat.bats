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
	stop_bg ${RPID:-} ${OTHER:-}
	assert_nothing_loaded readdirlat
}

start_rdl() {
	: > "$T/out"
	: > "$T/err"
	"$BIN/readdirlat" "$@" > "$T/out" 2> "$T/err" &
	RPID=$!
	wait_for_any 'Tracing|TIME' 120 "$T/out" "$T/err"
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

# The -S row of pid $1 as "CALLS SCANS CALLS/SCAN BUFSZ BYTES ENTRIES DIR"
# (DIR is the last column, after AVG_us and MAX_us).
row() {
	awk -v pid="$1" '$2 == pid {
		d = $11
		for (i = 12; i <= NF; i++)
			d = d " " $i
		print $3, $4, $5, $6, $7, $8, d
	}' "$T/out"
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
	[ "$e8" -eq 3006 ]
	[ "$c8" -eq 12 ]
	[ "$c32" -eq 6 ]
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
	# No wait: the tool prints what its ring buffer holds before it ends.
	stop_rdl
	run grep -cE "^[0-9:]{8} lsdir +$W_PID +8192 +[0-9]+ +[0-9.]+ $DIR$" "$T/out"
	assert_output "$W_CALLS"
	run awk -v pid="$W_PID" '$3 == pid { n += $5 } END { print n }' "$T/out"
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
	sleep infinity &
	OTHER=$!
	start_rdl -S -p "$OTHER"
	lsdir "$DIR" 8192 1
	stop_rdl
	stop_bg $OTHER
	OTHER=
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

@test "readdirlat keeps long names whole: two directories sharing 40 characters are two rows" {
	require_bpf
	prefix=$(printf 'shared-prefix-%.0s' 1 2 3)	# 42 characters
	long=$(printf 'n%.0s' $(seq 200))
	one=$T/$prefix-one two=$T/$prefix-two deep=$T/$long/$long-x
	mkdir -p "$one" "$two" "$deep"
	start_rdl -S -c lsdir
	lsdir "$one" 8192 1
	r1="$W_CALLS 1 $W_CALLS.00 8192 $W_BYTES $W_ENTRIES $one" p1=$W_PID
	lsdir "$two" 8192 1
	r2="$W_CALLS 1 $W_CALLS.00 8192 $W_BYTES $W_ENTRIES $two" p2=$W_PID
	lsdir "$deep" 8192 1
	r3="$W_CALLS 1 $W_CALLS.00 8192 $W_BYTES $W_ENTRIES $deep" p3=$W_PID
	stop_rdl
	run row "$p1"
	assert_output "$r1"
	run row "$p2"
	assert_output "$r2"
	run row "$p3"
	assert_output "$r3"
	start_rdl -D -c lsdir
	lsdir "$one" 8192 1
	lsdir "$two" 8192 1
	stop_rdl
	run sort <(grep '^dir = ' "$T/out")
	assert_output "dir = $one
dir = $two"
}

@test "readdirlat cuts a path whose names pass 512 bytes, and says so" {
	require_bpf
	a=$(printf 'a%.0s' $(seq 200)) b=$(printf 'b%.0s' $(seq 200))
	c=$(printf 'c%.0s' $(seq 200))
	mkdir -p "$T/$a/$b/$c/d"
	start_rdl -S -c lsdir
	lsdir "$T/$a/$b/$c/d" 8192 1
	stop_rdl
	# d, c... and b... take 404 bytes with their NULs, under 512, so a... is
	# kept too; past 512 then, nothing above it is.
	run row "$W_PID"
	assert_output "$W_CALLS 1 $W_CALLS.00 8192 $W_BYTES $W_ENTRIES .../$a/$b/$c/d"
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
	run "$BIN/readdirlat" -c ''
	assert_failure 2
	assert_output "readdirlat: -c needs a process name, as in /proc/PID/comm (such as node); leave -c out for every process
Try \`readdirlat --help' or \`readdirlat --usage' for more information."
	run "$BIN/readdirlat" -x
	assert_failure 2
	assert_line --index 0 "readdirlat: invalid option -- 'x'"
	require_bpf
	run "$BIN/readdirlat" -p 999999999
	assert_failure 1
	assert_output "readdirlat: pid 999999999: no such process"
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/readdirlat" 1 1
	assert_failure 1
	assert_output "readdirlat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}

@test "readdirlat: more directories than its tables hold are counted at exit, with what to do" {
	require_bpf
	# 5000 directories, each listed once by find: more than the 4096
	# histograms and names readdirlat keeps.
	mkdir "$T/tree"
	(cd "$T/tree" && seq 5000 | xargs mkdir)
	start_rdl -D -c find
	find "$T/tree" > /dev/null
	stop_rdl
	assert_equal "$RC" 0
	run cat "$T/err"
	assert_line --regexp '^readdirlat: [0-9]+ calls not counted: more than 4096 histograms; trace fewer with -p or -c$'
	assert_line --regexp '^readdirlat: [0-9]+ directories not named \(shown as \[unknown\]\): more than 4096 directories; trace fewer with -p or -c$'
	# What was kept is there: 4096 directories, each a histogram.
	n=$(grep -cE '^dir = .*/tree/[0-9]+$' "$T/out")
	[ "$n" -ge 4000 ] && [ "$n" -le 4096 ] || fail "$n histograms: $(grep '^dir = ' "$T/out" | head)"
}

@test "readdirlat: options that -S or --min-us make moot are said to be ignored" {
	run unprivileged "$BIN/readdirlat" -S -P -m --percentiles
	assert_failure 1
	assert_output "readdirlat: -S prints a table; -P, -m and --percentiles are ignored
readdirlat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
	run unprivileged "$BIN/readdirlat" -S -D
	assert_line --index 0 "readdirlat: -S prints a table; -D is ignored"
	run unprivileged "$BIN/readdirlat" --min-us 10 -S -m -T
	assert_line --index 0 "readdirlat: --min-us prints calls; -S, -m and -T are ignored"
	run unprivileged "$BIN/readdirlat" -S -T
	assert_output "readdirlat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
