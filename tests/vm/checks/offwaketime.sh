#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# offwaketime on a test VM's kernel: tp_btf and raw_tp pair a blocked reader's
# stack with the stack of the writer that woke it.
#
# POSIX sh; see tests/vm/lib.sh. offcpu pipe 20 20, released by SIGUSR1:
# offcpu_reader() blocks on a pipe that offcpu_waker() writes 20 ms later,
# 20 times; the folded line must read reader;...;--;...waker, with the time
# the reader was blocked (90% of it: of 10 blocks, one an emulator starved
# the guest through, 12% of the time, failed it once in CI).

ow_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# ow_check CELL [ARGS...]: one run, in a cell named by the path offwaketime
# says it took ("with tp_btf", "with raw_tp"), CELL if it said none. Sets
# ow_path.
ow_check() {
	_cell=$1
	shift
	vm_trace ow "$WL/offcpu pipe 20 20" offwaketime -v -f "$@"
	ow_path=$(sed -n 's/^offwaketime: attaching to .* with \([a-z_]*\).*/\1/p' "$SCRATCH/ow.err" | head -n 1)
	us=$(awk '/;offcpu_reader;.*;--;.*try_to_wake_up.*;offcpu_waker;/ { n += $NF } END { print n + 0 }' "$SCRATCH/ow.out")
	left=$(vm_leftover offwaketime)
	detail="rc=$vm_rc reader;--;waker: $us us of $(awk '/^done/ { print $2 " (" $3 " wall)" }' "$SCRATCH/ow.work") blocked, $(grep -o 'with [a-z_]*' "$SCRATCH/ow.err" | head -n 1)"
	if [ $vm_rc = 0 ] && [ -z "$left" ] && vm_blocked "$us" "$SCRATCH/ow.work" 0; then
		result offwaketime "${ow_path:-$_cell}" pass "$detail"
	else
		result offwaketime "${ow_path:-$_cell}" fail "$detail left=[$left] $(tail -n 2 "$SCRATCH/ow.err") the reader's other lines: $(grep ';offcpu_reader;' "$SCRATCH/ow.out" | grep -v ';--;.*try_to_wake_up.*;offcpu_waker;' | head -c 1500)"
	fi
}

# By default tp_btf where tracing programs have task storage (5.12); before,
# raw_tp with a hash by thread id (fallbacks.sh checks the same). By frame
# pointers, as offcputime.sh says why; CFI with raw_tp below.
ow_check tp_btf --unwind=fp
[ "$ow_path" = tp_btf ] || [ $ow_version -lt 512 ] ||
	result offwaketime tp_btf fail "kernel $(uname -r) has task storage, but offwaketime took ${ow_path:-nothing}"
# raw_tp by request, unless the default took it already.
if [ "$ow_path" != raw_tp ]; then
	export BPFSCOPE_DISABLE=tp_btf
	ow_check raw_tp
	unset BPFSCOPE_DISABLE
	[ "$ow_path" = raw_tp ] ||
		result offwaketime raw_tp-chosen fail "the fallback was not used: $(tail -n 2 "$SCRATCH/ow.err")"
fi
vm_switches offwaketime --unwind=fp -f 2
