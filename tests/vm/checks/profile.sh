#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# profile on a test VM's kernel: perf_event sampling at 99 Hz finds the two
# functions a workload burns CPU in, 3:1, with user and kernel stacks.
#
# POSIX sh; see tests/vm/lib.sh. profile_spin burns CPU in
# bpfscope_spin_alpha and bpfscope_spin_beta, 3:1 in CPU time; -k adds a
# thread reading /dev/zero, whose samples have kernel frames.

: > "$SCRATCH/pf.work"
"$WL/profile_spin" -g -s 3 -k > "$SCRATCH/pf.work" &
wpid=$!
vm_wait "$SCRATCH/pf.work" '^pid ' $wpid
: > "$SCRATCH/pf.out"
: > "$SCRATCH/pf.err"
"$BIN/profile" -f -F 99 -p $wpid 2 > "$SCRATCH/pf.out" 2> "$SCRATCH/pf.err" &
ppid=$!
vm_wait "$SCRATCH/pf.err" Sampling $ppid
kill -USR1 $wpid
wait $ppid
rc=$?
kill $wpid 2> /dev/null
wait $wpid
alpha=$(awk '/;bpfscope_spin_alpha/ { n += $NF } END { print n + 0 }' "$SCRATCH/pf.out")
beta=$(awk '/;bpfscope_spin_beta/ { n += $NF } END { print n + 0 }' "$SCRATCH/pf.out")
kern=$(awk '/;(__x64_sys_read|ksys_read|vfs_read)[;]/ { n += $NF } END { print n + 0 }' "$SCRATCH/pf.out")
left=$(vm_leftover profile)
detail="rc=$rc alpha=$alpha beta=$beta kernel-read=$kern"
# alpha's share 0.75 +- 0.15: about 200 samples over two seconds.
if [ $rc = 0 ] && [ -z "$left" ] && [ $beta -gt 0 ] && [ $kern -gt 0 ] &&
   [ $((alpha * 100 / (alpha + beta))) -ge 60 ] && [ $((alpha * 100 / (alpha + beta))) -le 90 ]; then
	result profile cpu-clock pass "$detail"
else
	result profile cpu-clock fail "$detail left=[$left] $(tail -n 2 "$SCRATCH/pf.err") $(head -c 600 "$SCRATCH/pf.out")"
fi
