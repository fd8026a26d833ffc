#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# readdirlat on a test VM's kernel: the syscall tracepoints and the raw_syscalls fallback.
#
# POSIX sh (busybox). Needs $BIN, $WL, $SCRATCH and the harness's
# "result TOOL METHOD pass|fail DETAIL". lsdir lists a directory with a
# chosen buffer and prints what it saw ("pid P calls C entries E bytes B");
# readdirlat -S must report the same numbers for it.

rd_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')
rd_dir=$SCRATCH/readdirlat-many
rd_out=$SCRATCH/readdirlat.out
rd_err=$SCRATCH/readdirlat.err
mkdir -p "$rd_dir"
rd_dir=$(cd "$rd_dir" && pwd -P)	# the kernel names it without symlinks
i=1000
while [ $i -lt 2000 ]; do
	: > "$rd_dir/f$i"
	i=$((i + 1))
done

# rd_check METHOD DIR BUFSZ SCANS [readdirlat options]: one lsdir run under
# readdirlat -S -c lsdir; the row must match what lsdir counted.
rd_check() {
	method=$1 dir=$2 bufsz=$3 scans=$4
	shift 4
	if ! vm_attach "$rd_out" "$rd_err" readdirlat -v -S -c lsdir "$@"; then
		result readdirlat "$method" fail "rc=$vm_rc $(grep -v 'libbpf: \(elf\|sec\|map\|prog .*: relo\|CO-RE\)' "$rd_err" | tail -n 25)"
		return
	fi
	set -- $("$WL/lsdir" "$dir" "$bufsz" "$scans")
	pid=$2 calls=$4 entries=$6 bytes=$8
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	# COMM PID CALLS SCANS CALLS/SCAN BUFSZ BYTES ENTRIES AVG MAX DIR
	row=$(awk -v p="$pid" '$2 == p { print $11, $3, $4, $6, $7, $8 }' "$rd_out")
	# Before 5.17 (no bpf_loop) the legacy object walks no records, and
	# ENTRIES says "-"; from 5.17 the records are counted. By the kernel's
	# version, whatever the tool chose: taking the legacy object where it
	# need not, or not where it must, fails.
	legacy=$(grep -c 'BPF programs for kernels before 5.17' "$rd_err")
	[ $rd_version -lt 517 ] && entries=-
	want="$dir $calls $scans $bufsz $bytes $entries"
	if [ "$rc" = 0 ] && [ "$row" = "$want" ] && [ "$legacy" = $(( rd_version < 517 )) ]; then
		result readdirlat "$method" pass "$row"
	else
		result readdirlat "$method" fail "rc=$rc got [$row] want [$want], legacy object: $legacy on $(uname -r) $(tail -n 2 "$rd_err") output: $(head -c 300 "$rd_out")"
	fi
}

rd_check tracepoint-8k "$rd_dir" 8192 3
rd_check tracepoint-32k "$rd_dir" 32768 3
rd_check tracepoint-proc /proc 8192 2
export BPFSCOPE_DISABLE=tracepoint
rd_check raw_syscalls "$rd_dir" 8192 2
unset BPFSCOPE_DISABLE
grep -q raw_syscalls "$rd_err" ||
	result readdirlat raw_syscalls-chosen fail "the fallback was not used: $(tail -n 2 "$rd_err")"
