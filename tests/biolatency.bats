#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# biolatency against O_DIRECT I/O of known counts and sizes on a loop device the
# suite creates (and on the virtio disk the root file system lives on).

load helpers

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	export IMG=$BATS_FILE_TMPDIR/loop.img
	truncate -s 16M "$IMG"
	# One MBR partition from sector 2048 to the end, so -d can be given a partition.
	printf '\x00\x00\x00\x00\x83\x00\x00\x00\x00\x08\x00\x00\x00\x78\x00\x00' |
		dd of="$IMG" bs=1 seek=446 conv=notrunc status=none
	printf '\x55\xaa' | dd of="$IMG" bs=1 seek=510 conv=notrunc status=none
	export LOOP
	LOOP=$(losetup -f --show -P "$IMG")
	export LNAME=${LOOP#/dev/}
	# Kernels built without partition-table parsers (this VM's) need it added by hand.
	[ -e "/sys/class/block/${LNAME}p1" ] || addpart "$LOOP" 1 2048 30720
	# An I/O scheduler, so that requests are inserted before they are issued (-Q).
	echo mq-deadline > /sys/block/$LNAME/queue/scheduler || true
	# The test's I/O goes through a node of its own for the device: udev
	# watches /dev/loop* (60-block.rules, OPTIONS+="watch") and probes a
	# device closed after a write, reads -d would count as the test's;
	# inotify watches the node, not the device. Where the file system
	# refuses devices (nodev), /dev's node is all there is.
	export NODE=$BATS_FILE_TMPDIR/loopnode
	mknod "$NODE" b $(tr : ' ' < "/sys/class/block/$LNAME/dev")
	"$WL/dio" "$NODE" read 1 4096 2> /dev/null || NODE=$LOOP
	# And what udev makes of the new device (blkid's reads) is over.
	if [ -S /run/udev/control ]; then
		udevadm settle --timeout=120
	fi
}

teardown_file() {
	[ -n "${LOOP:-}" ] && losetup -d "$LOOP"
	true
}

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${BPID:-} ${BPID2:-}
	remove_cgroup
	assert_nothing_loaded biolatency
}

# Starts biolatency with the given arguments in the background (BPID).
start_bio() {
	: > "$T/out"
	: > "$T/err"
	"$BIN/biolatency" "$@" > "$T/out" 2> "$T/err" &
	BPID=$!
	wait_for_any Tracing 120 "$T/out" "$T/err"
}

stop_bio() {
	kill -INT "$BPID"
	wait "$BPID"
	RC=$?
	BPID=
}

# counted N WANT [ERR]: N of the WANT requests the test issued were counted:
# all of them, but for the events the tool said (in ERR, $T/err by default)
# the kernel did not run its program for: a completion on another disk, in
# an interrupt, while the program ran for this one on that CPU (1 of 301 in
# CI, beside the matrix's guests writing theirs).
counted() {
	local n=$1 want=$2 missed
	missed=$(awk '/ events not traced by .*: the kernel does not run a BPF program that is already running/ { m += $2 } END { print m + 0 }' "${3:-$T/err}")
	echo "$n of $want requests counted, $missed events said untraced"
	[ "$n" -le "$want" ] || fail "$n requests counted, $want issued: $(cat "$T/out")"
	[ $((n + missed)) -ge "$want" ] || fail "$n of $want requests counted, $missed said untraced: $(cat "$T/out" "${3:-$T/err}")"
}

# The test's own I/O: 32 reads of 4 KiB and 16 writes of 8 KiB on the loop device.
loop_io() {
	"$WL/dio" "$NODE" read 32 4096
	"$WL/dio" "$NODE" write 16 8192
}

@test "biolatency -d LOOP sees exactly the I/O the test issued to it" {
	require_bpf
	start_bio -d "$LNAME"
	loop_io
	stop_bio
	[ "$RC" -eq 0 ]
	counted "$(hist_total "$T/out")" 48
	run grep -c 'usecs               : count     distribution' "$T/out"
	assert_output 1
}

@test "biolatency -F separates the reads from the writes, with bcc's flag names" {
	require_bpf
	start_bio -F -d "$LNAME"
	loop_io
	stop_bio
	reads=$(awk '/^flags = / { on = ($0 ~ /-?Read$/) } on && / -> / { n += $5 } END { print n + 0 }' "$T/out")
	writes=$(awk '/^flags = / { on = ($0 ~ /-?Write$/) } on && / -> / { n += $5 } END { print n + 0 }' "$T/out")
	[ "$reads" -le 32 ] || fail "reads: $reads"
	[ "$writes" -le 16 ] || fail "writes: $writes"
	counted $((reads + writes)) 48
	# O_DIRECT requests are synchronous: the kernel marks them so.
	run grep -E '^flags = (.*-)?Sync-(.*-)?Read$' "$T/out"
	assert_success
}

@test "biolatency -D shows the loop device and the virtio disk, each by its kernel name" {
	require_bpf
	root_disk=$(lsblk -no pkname "$(findmnt -no source /)" 2>/dev/null || true)
	[ -n "$root_disk" ] || root_disk=$(basename "$(findmnt -no source /)")
	start_bio -D
	loop_io
	"$WL/dio" "$T/file" write 8 4096
	sync
	stop_bio
	run grep -E "^disk = $LNAME\$" "$T/out"
	assert_success
	run grep -E "^disk = $root_disk\$" "$T/out"
	assert_success
	loop=$(awk -v d="disk = $LNAME" '/^disk = / { on = ($0 == d) } on && / -> / { n += $5 } END { print n + 0 }' "$T/out")
	counted "$loop" 48
}

@test "biolatency -Q counts the same requests, never with less time than without -Q" {
	require_bpf
	: > "$T/q"
	: > "$T/q.err"
	"$BIN/biolatency" -Q -e -v -d "$LNAME" > "$T/q" 2> "$T/q.err" &
	BPID2=$!
	start_bio -e -d "$LNAME"
	wait_for_line "$T/q" Tracing 120
	loop_io
	kill -INT "$BPID2"; wait "$BPID2"; BPID2=
	stop_bio
	grep -q 'block_rq_insert' "$T/q.err" || fail "-Q did not attach to block_rq_insert: $(cat "$T/q.err")"
	read -r qtotal qcount < <(sed -n 's/^avg = [0-9]* usecs, total: \([0-9]*\) usecs, count: \([0-9]*\)$/\1 \2/p' "$T/q")
	read -r total count < <(sed -n 's/^avg = [0-9]* usecs, total: \([0-9]*\) usecs, count: \([0-9]*\)$/\1 \2/p' "$T/out")
	echo "-Q: $qtotal us over $qcount; issue: $total us over $count"
	counted "$qcount" 48 "$T/q.err"
	counted "$count" 48
	# Each latency is truncated to whole microseconds, and the two tools read
	# the clock a few hundred ns apart: allow 1 us per request. The same
	# requests only: a request one of them was not run for is in one total.
	if [ "$qcount" -eq 48 ] && [ "$count" -eq 48 ]; then
		[ "$qtotal" -ge $((total - count)) ]
	fi
}

@test "biolatency -j and --json are valid JSON in every mode, also with -D -F -T" {
	require_bpf
	start_bio -j -D -F -T -e --percentiles -d "$LNAME"
	loop_io
	stop_bio
	run jq -e -s 'length >= 2 and all(.[]; .disk == env.LNAME and (.flags | type) == "string"
		and (.time | test("^[0-9]{2}:[0-9]{2}:[0-9]{2}$")) and .total == ([.buckets[].count] | add)
		and .p50 <= .max)' "$T/out"
	assert_success
	counted "$(jq -s 'map(.total) | add' "$T/out")" 48
}

@test "biolatency -c counts the I/O of the cgroup's tasks only" {
	require_bpf
	make_cgroup bio
	start_bio -c "$CG" -d "$LNAME"
	# 20 writes from a task in the cgroup, 10 reads from one outside it.
	sh -c "echo \$\$ > '$CG/cgroup.procs' && exec '$WL/dio' '$NODE' write 20 4096" > /dev/null
	"$WL/dio" "$NODE" read 10 4096 > /dev/null
	stop_bio
	[ "$RC" -eq 0 ]
	counted "$(hist_total "$T/out")" 20
}

@test "biolatency -d accepts a partition and traces its whole disk" {
	require_bpf
	[ -e "/sys/class/block/${LNAME}p1" ] || fail "no partition ${LNAME}p1 on the test loop device"
	start_bio -d "${LNAME}p1"
	loop_io
	stop_bio
	run cat "$T/err"
	assert_output --partial "${LNAME}p1 is a partition of $LNAME: tracing all of $LNAME"
	counted "$(hist_total "$T/out")" 48
}

@test "biolatency -d /dev/LOOP: a device path, as bcc users type it, traces that disk" {
	require_bpf
	start_bio -d "$LOOP"
	loop_io
	stop_bio
	[ "$RC" -eq 0 ]
	counted "$(hist_total "$T/out")" 48
	# A partition's device node means its disk, as its name does.
	start_bio -d "${LOOP}p1"
	loop_io
	stop_bio
	run grep -v ' events not traced by ' "$T/err"
	assert_output "biolatency: ${LOOP}p1 is a partition of $LNAME: tracing all of $LNAME"
	counted "$(hist_total "$T/out")" 48
}

@test "biolatency falls back to raw tracepoints and counts the same" {
	require_bpf
	BPFSCOPE_DISABLE=tp_btf start_bio -v -d "$LNAME"
	loop_io
	stop_bio
	grep -q 'raw_tp' "$T/err"
	counted "$(hist_total "$T/out")" 48
}

@test "biolatency -m, interval and count" {
	require_bpf
	run timeout 120 "$BIN/biolatency" -m -T 1 2
	assert_success
	[ "$(grep -cE '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9]$' <<<"$output")" -eq 2 ]
}

@test "biolatency -d of an unknown disk exits 1 and lists the disks" {
	require_bpf
	run "$BIN/biolatency" -d sdz
	assert_failure 1
	assert_output --regexp "^biolatency: disk 'sdz' not found \(known: .*$LNAME.*\)$"
	run "$BIN/biolatency" -d /dev/sdz-no-such-disk
	assert_failure 1
	assert_output --regexp "^biolatency: disk '/dev/sdz-no-such-disk' not found \(known: .*$LNAME.*\)$"
	# A path that is not a block device is no disk either.
	run "$BIN/biolatency" -d /dev/null
	assert_failure 1
	assert_output --regexp "^biolatency: disk '/dev/null' not found \(known: .*$LNAME.*\)$"
	run "$BIN/biolatency" -d ..
	assert_failure 1
	assert_output --regexp "^biolatency: disk '\.\.' not found \(known: .*$LNAME.*\)$"
}

@test "biolatency -d '' and -c '' are usage errors, -d's with the list of disks" {
	run "$BIN/biolatency" -d ''
	assert_failure 2
	assert_line --index 0 --regexp "^biolatency: -d needs a disk, such as vda or /dev/vda \(known: [^ ].*\)$"
	assert_line --index 1 "Try \`biolatency --help' or \`biolatency --usage' for more information."
	[ -z "${LNAME:-}" ] || assert_line --index 0 --partial "$LNAME"
	run "$BIN/biolatency" -c ''
	assert_failure 2
	assert_output "biolatency: -c needs a cgroup v2 path, such as system.slice/nginx.service or /sys/fs/cgroup/user.slice; leave -c out for every cgroup
Try \`biolatency --help' or \`biolatency --usage' for more information."
}

@test "biolatency: bad usage exits 2; no privileges exits 1" {
	run "$BIN/biolatency" 0
	assert_failure 2
	assert_output --partial "invalid interval '0'"
	run "$BIN/biolatency" -x
	assert_failure 2
	assert_output "biolatency: invalid option -- 'x'
Try \`biolatency --help' or \`biolatency --usage' for more information."
	require_bpf
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/biolatency"
	assert_failure 1
	assert_output "biolatency: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
