#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# runqlat on a test VM's kernel: tp_btf and the raw_tp fallback (CO-RE reads
# of task_struct) count every wakeup of a sleeper that shares a CPU with spinners.
#
# POSIX sh; see tests/vm/lib.sh. runq_contend -g waits for SIGUSR1, then its
# sleeper thread sleeps N times on CPU 0 beside the spinners; runqlat -L must
# count the wakeups of those that blocked (the workload counts them: a sleep
# held off its CPU longer than it lasts never blocks), plus its first, plus its
# preemptions (by its own count; a starved guest has many).

rq_n=50
rq_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# rq_check CELL: one run, the sleeper's count checked, in a cell named by
# the path runqlat says it took ("with tp_btf", "with raw_tp"), CELL if it
# said none. Sets rq_path.
rq_check() {
	vm_trace rq "$WL/runq_contend -g -s 2 -n $rq_n" runqlat -v -L
	rq_path=$(sed -n 's/^runqlat: attaching to .* with \([a-z_]*\).*/\1/p' "$SCRATCH/rq.err" | head -n 1)
	sleeper=$(awk '/^sleeper/ { print $2 }' "$SCRATCH/rq.work")
	blocked=$(awk '/^sleeper/ { print $6 }' "$SCRATCH/rq.work")
	preempted=$(awk '/^sleeper/ { print $8 + 0 }' "$SCRATCH/rq.work")
	n=$(awk -v t="$sleeper" '/^tid = / { on = ($3 == t) } on && / -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$SCRATCH/rq.out")
	left=$(vm_leftover runqlat)
	# Waits the kernel did not report the end of (6.18's missed switches,
	# docs/known-issues.md), said by the tool: counted as the waits they were.
	dropped=$(sed -n 's/^runqlat: \([0-9]*\) waits dropped: the kernel did not report.*/\1/p' "$SCRATCH/rq.err" | head -n 1)
	detail="rc=$vm_rc sleeper wakeups=$n of $rq_n sleeps (${blocked:-?} blocked, ${preempted:-?} preempted), ${dropped:-0} said dropped, $(grep -o 'with [a-z_]*' "$SCRATCH/rq.err" | head -n 1)"
	n=$((n + ${dropped:-0}))
	# The first wakeup may go untimed, but only if the tool says so. On
	# the development host's kernel (docs/known-issues.md) one wait may
	# go untold, as in tests/runqlat.bats: a wakeup it did not trace
	# before a switch onto a CPU it did.
	least=$((blocked + 1))
	[ "${VM_ON_HOST:-0}" = 1 ] && least=$blocked
	if [ $vm_rc = 0 ] && [ -z "$left" ] && [ "${blocked:-0}" -ge $((rq_n * 9 / 10)) ] &&
	   { [ $n -ge $least ] && [ $n -le $((rq_n + 5 + ${preempted:-0})) ] ||
	     { [ $n = "$blocked" ] && grep -q 'not timed' "$SCRATCH/rq.err"; }; }; then
		result runqlat "${rq_path:-$1}" pass "$detail"
	else
		result runqlat "${rq_path:-$1}" fail "$detail left=[$left] $(tail -n 2 "$SCRATCH/rq.err")"
	fi
}

# By default tp_btf where tracing programs have task storage (5.12); before,
# raw_tp with a hash by thread id (fallbacks.sh checks the same).
rq_check tp_btf
[ "$rq_path" = tp_btf ] || [ $rq_version -lt 512 ] ||
	result runqlat tp_btf fail "kernel $(uname -r) has task storage, but runqlat took ${rq_path:-nothing}"
# raw_tp by request, unless the default took it already.
if [ "$rq_path" != raw_tp ]; then
	export BPFSCOPE_DISABLE=tp_btf
	rq_check raw_tp
	unset BPFSCOPE_DISABLE
	[ "$rq_path" = raw_tp ] ||
		result runqlat raw_tp-chosen fail "the fallback was not used: $(tail -n 2 "$SCRATCH/rq.err")"
fi
vm_switches runqlat 2 1
