#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# funclatency's kernel paths (fentry, kprobe, kprobe.multi) in a test VM, on the funcs workload.
#
# POSIX sh; see tests/vm/lib.sh. The funcs workload, released by SIGUSR1, makes exactly
# 50 nanosleep() calls (20 of 10 ms, 30 of 1 ms) and 100 pipe read()s and
# write()s; funclatency -p counts them in the kernel.

fl_out=$SCRATCH/funclatency.out
fl_err=$SCRATCH/funclatency.err

# fl_total FILE [FUNCTION]: the calls counted in the histogram (of FUNCTION with -F).
fl_total() {
	awk -v f="$2" '
		/^Function = / { on = ($3 == f) }
		(f == "" || on) && / -> .* : [0-9]+ +\|/ { n += $5 }
		END { print n + 0 }' "$1"
}

# fl_run ARGS...: funclatency -p WORKLOAD ARGS while the workload runs once.
# Sets fl_rc; output in $fl_out and $fl_err.
fl_run() {
	vm_trace funclatency "$WL/funcs" funclatency "$@"
	fl_rc=$vm_rc
}

fl_leftover() { vm_leftover funclatency; }

# fl_lacking METHOD: true, and an n/a cell, when funclatency exited 1 saying
# this kernel lacks what METHOD needs.
fl_lacking() {
	[ "$fl_rc" = 1 ] && grep -qE '^funclatency: kernel (refuses fentry|has no kprobe)' "$fl_err" || return 1
	result funclatency "$1" n/a "$(grep -E '^funclatency: kernel (refuses fentry|has no kprobe)' "$fl_err" | head -n 1)"
}

# fl_check_sleep METHOD ARGS...: do_nanosleep, 50 calls, 20 of them at
# least 10 ms, all of them no longer than the workload measured. Not "in
# the 8 -> 15 row": a guest the host starves (the matrix runs beside the
# suite, at idle priority) oversleeps, by its own clock too (16 of 20 there,
# the rest in 16 -> 63).
fl_check_sleep() {
	method=$1
	shift
	fl_run -m "$@" do_nanosleep
	fl_lacking "$method" && return
	again=
	# 5.10's kretprobes, in the emulated guest, now and then report none of
	# a run's returns (docs/known-issues.md), which the tool says: its calls
	# are left untimed, none returned. Said, that run is done once
	# more, and the cell says so; unsaid, or twice, it fails.
	if [ "$(fl_total "$fl_out")" = 0 ] && grep -q 'none of the calls traced returned' "$fl_err" &&
	   case $(uname -r) in 5.10.*) true ;; *) false ;; esac; then
		again="(a first run's returns all unreported: $(grep 'none of the calls traced' "$fl_err")) "
		fl_run -m "$@" do_nanosleep
	fi
	total=$(fl_total "$fl_out")
	# The 30 sleeps of 1 ms, and no more, may be under 8 ms; each rounds
	# down to whole ms, so the total is at least 20 * 10 + 30 * 1.
	low=$(awk '/^ +[0-9]+ -> [0-9]+ +:/ && $3 < 8 { n += $5 } END { print n + 0 }' "$fl_out")
	ms=$(sed -n 's/^avg = .*, total: \([0-9]*\) msecs.*/\1/p' "$fl_out")
	slept=$(awk '$1 == "slept" { print int($2 / 1000) }' "$SCRATCH/funclatency.work")
	left=$(fl_leftover)
	detail="${again}rc=$fl_rc calls=$total under-8ms=$low ${ms:-?} ms of the ${slept:-?} ms measured $(tail -n 2 "$fl_err")"
	if [ "$fl_rc" = 0 ] && [ "$total" = 50 ] && [ "$low" -le 30 ] && [ -n "$ms" ] &&
	   [ -n "$slept" ] && [ "$ms" -ge 230 ] && [ "$ms" -le $((slept + 1)) ] && [ -z "$left" ]; then
		result funclatency "$method" pass "$detail"
	else
		result funclatency "$method" fail "$detail left=[$left] $(cat "$fl_out")"
	fi
}

# kprobes before fentry: on Debian 11's 5.10, a kretprobe attached to
# do_nanosleep right after an fexit program left it missed every return
# now and then (its entries all fired).
fl_check_sleep kprobe --method kprobe
fl_check_sleep kprobe-k -k
fl_check_sleep fentry --method fentry

# The default picks fentry for one function where the kernel has it.
fl_run -v do_nanosleep
if fl_lacking auto; then
	:
elif [ "$fl_rc" = 0 ] && grep -q 'with fentry' "$fl_err" && [ "$(fl_total "$fl_out")" = 50 ]; then
	result funclatency auto pass "fentry chosen, 50 calls"
else
	result funclatency auto fail "rc=$fl_rc $(tail -n 2 "$fl_err")"
fi

# A wildcard through kprobe.multi, a histogram per function: 100 pipe reads
# and writes, and the workload's one "done" line written after release.
fl_run -F -v --method kprobe-multi -r 'vfs_(read|write)$'
reads=$(fl_total "$fl_out" vfs_read)
writes=$(fl_total "$fl_out" vfs_write)
left=$(fl_leftover)
detail="rc=$fl_rc vfs_read=$reads vfs_write=$writes"
if fl_lacking kprobe-multi; then
	:	# the harness knows which kernels may lack fprobe
elif [ "$fl_rc" = 0 ] && [ "$reads" -ge 100 ] && [ "$reads" -le 101 ] &&
     [ "$writes" -ge 100 ] && [ "$writes" -le 102 ] && [ -z "$left" ]; then
	result funclatency kprobe-multi pass "$detail"
else
	result funclatency kprobe-multi fail "$detail left=[$left] $(tail -n 2 "$fl_err") $(cat "$fl_out")"
fi

# The same wildcard with kprobe.multi ruled out: one kprobe pair per function.
export BPFSCOPE_DISABLE=kprobe_multi
fl_run -F -v 'vfs_read*'
unset BPFSCOPE_DISABLE
reads=$(fl_total "$fl_out" vfs_read)
if fl_lacking kprobe-wildcard; then
	:
elif [ "$fl_rc" = 0 ] && grep -q 'with kprobe$' "$fl_err" && [ "$reads" -ge 100 ] && [ "$reads" -le 101 ]; then
	result funclatency kprobe-wildcard pass "rc=0 vfs_read=$reads"
else
	result funclatency kprobe-wildcard fail "rc=$fl_rc vfs_read=$reads $(tail -n 2 "$fl_err")"
fi
