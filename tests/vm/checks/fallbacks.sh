#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Which path each tool takes on a test VM's kernel, by its version: before
# 5.17 (no bpf_loop) the legacy BPF objects and frame-pointer stacks;
# before 5.12 (no task storage for tracing programs) hashes by thread id;
# with the legacy object, funclatency -F knows functions by address (it
# reads no attach cookie, which 5.10 lacks; so before 5.17, not 5.15).
# Whether those paths count right is the other checks' business; here, that
# each is the one taken where it should be, and only there.
#
# POSIX sh; see tests/vm/lib.sh.

fb_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# fb_check CELL MIN_VERSION PATTERN FILE: FILE (a tool's -v log) must have a
# line matching PATTERN exactly when the kernel is older than MIN_VERSION.
fb_check() {
	if grep -q -- "$3" "$4"; then
		said=1
	else
		said=0
	fi
	want=$(( fb_version < $2 ))
	if [ $said = $want ]; then
		result fallbacks "$1" pass "kernel $(uname -r): $([ $said = 1 ] && echo fallback || echo none), as expected"
	else
		result fallbacks "$1" fail "kernel $(uname -r): wanted $want, said $said: $(grep -v libbpf "$4" | head -n 3)"
	fi
}

"$BIN/profile" -v -F 49 1 > /dev/null 2> "$SCRATCH/fb.err"
fb_check legacy-bpf 517 'BPF programs for kernels before 5.17' "$SCRATCH/fb.err"
"$BIN/runqlat" -v 1 1 > /dev/null 2> "$SCRATCH/fb.err"
fb_check task-storage 512 'raw_tp (no task storage for tracing programs' "$SCRATCH/fb.err"
"$BIN/funclatency" -v -F -d 1 'vfs_read*' > /dev/null 2> "$SCRATCH/fb.err"
if grep -q 'kernel has no kprobes' "$SCRATCH/fb.err"; then
	result fallbacks cookies n/a "$(grep 'kernel has no kprobes' "$SCRATCH/fb.err" | head -n 1)"
else
	fb_check cookies 517 'functions known by their addresses' "$SCRATCH/fb.err"
fi
