#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# offcputime on a test VM's kernel: tp_btf and raw_tp (CO-RE task state and
# stack capture) find a workload's sleeping function, with the time it slept.
#
# POSIX sh; see tests/vm/lib.sh. offcpu sleep 10 20, released by SIGUSR1,
# sleeps 10 x 20 ms in offcpu_sleeper(); the folded output must hold that
# function above the kernel's do_nanosleep, with the time it slept.

oc_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# oc_check CELL [ARGS...]: one run, in a cell named by the path offcputime
# says it took ("with tp_btf", "with raw_tp"), CELL if it said none. Sets
# oc_path.
oc_check() {
	_cell=$1
	shift
	vm_trace oc "$WL/offcpu sleep 10 20" offcputime -v -f "$@"
	oc_path=$(sed -n 's/^offcputime: attaching to .* with \([a-z_]*\).*/\1/p' "$SCRATCH/oc.err" | head -n 1)
	# All its time off the CPU (a starved guest's preemptions in it too, as
	# the workload's clocks count them), and some of it in do_nanosleep.
	us=$(awk '/;offcpu_sleeper(;| )/ { n += $NF } END { print n + 0 }' "$SCRATCH/oc.out")
	ns=$(awk '/;offcpu_sleeper;.*do_nanosleep/ { n += $NF } END { print n + 0 }' "$SCRATCH/oc.out")
	# Sleeps the tool said it had to drop (docs/known-issues.md), if any.
	short=$(( $(vm_unseen "$SCRATCH/oc.err") * 20000 ))
	# And its preemptions in its own clock reads, which it counts too.
	short=$(( short + $(vm_clock_reads "$SCRATCH/oc.out") ))
	left=$(vm_leftover offcputime)
	detail="rc=$vm_rc offcpu_sleeper ... do_nanosleep: $us us of $(awk '/^done/ { print $2 " (" $3 " wall)" }' "$SCRATCH/oc.work") slept, $(grep -o 'with [a-z_]*' "$SCRATCH/oc.err" | head -n 1)"
	if [ $vm_rc = 0 ] && [ -z "$left" ] && [ "$ns" -gt 0 ] && vm_blocked "$us" "$SCRATCH/oc.work" "$short"; then
		result offcputime "${oc_path:-$_cell}" pass "$detail"
	else
		result offcputime "${oc_path:-$_cell}" fail "$detail left=[$left] $(tail -n 2 "$SCRATCH/oc.err") $(sed 's/.*;main;//' "$SCRATCH/oc.out" | cut -c1-120 | head -n 12)"
	fi
}

# By default tp_btf where tracing programs have task storage (5.12); before,
# raw_tp with a hash by thread id (fallbacks.sh checks the same). By frame
# pointers, which the workload keeps: the CFI walk, whose verification is
# what an emulated guest spends most of its time on, is checked with tp_btf
# by unwind.sh, and with raw_tp below.
oc_check tp_btf --unwind=fp
[ "$oc_path" = tp_btf ] || [ $oc_version -lt 512 ] ||
	result offcputime tp_btf fail "kernel $(uname -r) has task storage, but offcputime took ${oc_path:-nothing}"
# raw_tp by request, unless the default took it already.
if [ "$oc_path" != raw_tp ]; then
	export BPFSCOPE_DISABLE=tp_btf
	oc_check raw_tp
	unset BPFSCOPE_DISABLE
	[ "$oc_path" = raw_tp ] ||
		result offcputime raw_tp-chosen fail "the fallback was not used: $(tail -n 2 "$SCRATCH/oc.err")"
fi
vm_switches offcputime --unwind=fp -f 2
