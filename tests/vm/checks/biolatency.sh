#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# biolatency on a test VM's kernel: tp_btf and raw_tp, with and without -Q,
# against O_DIRECT I/O of known counts on a loop device of its own.
#
# POSIX sh (busybox). Needs $BIN, $WL (the built test workloads), $SCRATCH
# and the harness's "result TOOL METHOD pass|fail DETAIL".

bl_img=$SCRATCH/biolatency.img
bl_out=$SCRATCH/biolatency.out
bl_err=$SCRATCH/biolatency.err

# bl_check NAME [biolatency options]: 20 writes and 30 reads of 4 KiB on the
# loop device; -F must show exactly 30 under a ...Read label and 20 under a
# ...Write one, and nothing else.
bl_check() {
	name=$1
	shift
	if ! vm_attach "$bl_out" "$bl_err" biolatency -v -F -d "$bl_name" "$@"; then
		result biolatency "$name" fail "rc=$vm_rc $(tail -n 2 "$bl_err")"
		return
	fi
	"$WL/dio" "$bl_dev" write 20 4096 > /dev/null
	"$WL/dio" "$bl_dev" read 30 4096 > /dev/null
	sleep 0.3
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	got=$(awk '/^flags = / { f = $3 }
		/ -> .* : [0-9]+ +\|/ { if (f ~ /Read$/) r += $5; else if (f ~ /Write$/) w += $5; else o += $5 }
		END { print r + 0, w + 0, o + 0 }' "$bl_out")
	if [ "$rc" = 0 ] && [ "$got" = "30 20 0" ]; then
		result biolatency "$name" pass "reads writes other: $got"
	else
		result biolatency "$name" fail "rc=$rc reads writes other: [$got] want [30 20 0] $(tail -n 2 "$bl_err")"
	fi
}

# bl_writeback: biolatency -c counts the I/O a cgroup causes, also when the
# kernel's flusher, not the cgroup's task, writes it back. Needs the io and
# memory controllers on cgroup v2 (cgroup writeback); n/a where it has none.
bl_writeback() {
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	cg=$mnt/bpfscope-wb
	# Only a real cgroup2 root: on a hybrid host the path may be a plain tmpfs.
	if [ -z "$mnt" ] || [ ! -e "$mnt/cgroup.controllers" ]; then
		result biolatency cgroup-writeback n/a "no cgroup v2 mounted"
		return
	fi
	echo "+io +memory" > "$mnt/cgroup.subtree_control" 2> /dev/null
	if ! grep -qw io "$mnt/cgroup.subtree_control" ||
	   ! grep -qw memory "$mnt/cgroup.subtree_control"; then
		result biolatency cgroup-writeback n/a "no io and memory controllers on cgroup v2"
		return
	fi
	mkdir -p $cg
	for where in inside outside; do
		if ! vm_attach "$bl_out" "$bl_err" biolatency -c $cg -d vda; then
			result biolatency cgroup-writeback fail "rc=$vm_rc $(tail -n 2 "$bl_err")"
			return
		fi
		# 8 MiB of page cache, dirtied inside (or outside) the cgroup, then written back.
		if [ $where = inside ]; then
			sh -c "echo \$\$ > $cg/cgroup.procs && exec dd if=/dev/zero of=$SCRATCH/wb bs=1048576 count=8 2> /dev/null"
		else
			dd if=/dev/zero of=$SCRATCH/wb bs=1048576 count=8 2> /dev/null
		fi
		sync
		sleep 0.3
		kill -INT $vm_tpid
		wait $vm_tpid
		eval n_$where=$(awk '/ -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$bl_out")
		rm -f $SCRATCH/wb
		sync
	done
	rmdir $cg 2> /dev/null
	if [ "$n_inside" -ge 2 ] && [ "$n_outside" = 0 ]; then
		result biolatency cgroup-writeback pass "requests: $n_inside from the cgroup's writes, $n_outside from others'"
	else
		result biolatency cgroup-writeback fail "requests: $n_inside from the cgroup's writes (want 2+), $n_outside from others' (want 0)"
	fi
}

bl_writeback

dd if=/dev/zero of="$bl_img" bs=1048576 count=32 2> /dev/null
[ -e /dev/loop-control ] || modprobe loop 2> /dev/null
bl_dev=$(losetup -f 2> /dev/null)
if [ -z "$bl_dev" ] || ! losetup "$bl_dev" "$bl_img"; then
	result biolatency setup fail "cannot attach $bl_img to a loop device"
else
	bl_name=${bl_dev##*/}
	bl_check tp_btf
	bl_check tp_btf-queued -Q
	export BPFSCOPE_DISABLE=tp_btf
	bl_check raw_tp
	bl_check raw_tp-queued -Q
	unset BPFSCOPE_DISABLE
	grep -q 'with raw_tp' "$bl_err" ||
		result biolatency raw_tp-chosen fail "the fallback was not used: $(tail -n 2 "$bl_err")"
	losetup -d "$bl_dev"
fi
rm -f "$bl_img"
