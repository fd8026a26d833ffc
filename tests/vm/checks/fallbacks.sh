#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Which path each tool takes on a test VM's kernel, by its version: before
# 5.17 (no bpf_loop) the legacy BPF objects, whose CFI walk is a loop of calls;
# before 5.12 (no task storage for tracing programs) raw tracepoints with
# threads' state in hashes by thread id; with the legacy object,
# funclatency -F knows functions by address (it reads no attach cookie,
# which 5.10 lacks; so before 5.17, not 5.15); before 5.12, cachestat's
# kernel functions by their older names; before 5.13 (no bpf_snprintf),
# kernel frames named from /proc/kallsyms. Each cell checks, from the tool's
# -v, that its path is taken exactly where the kernel is older than the
# version that brings the feature, and, where the cell says a result, that
# the tool counts there what it counts on newer kernels, by the same
# verdict as its own check.
#
# POSIX sh; see tests/vm/lib.sh.

fb_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# fb_said PATTERN FILE: 1 if FILE (a tool's -v log) has a line matching PATTERN, else 0.
fb_said() {
	if grep -q -- "$1" "$2"; then
		echo 1
	else
		echo 0
	fi
}

# fb_cell CELL MIN_VERSION SAID [OK DETAIL]: pass when SAID (1: the tool
# said it took the fallback) is 1 exactly when the kernel is older than
# MIN_VERSION, and OK (the result's verdict, 1 when there is none to check)
# is 1. DETAIL says what was counted.
fb_cell() {
	want=$(( fb_version < $2 ))
	path=none
	[ "$3" = 1 ] && path=fallback
	if [ "$3" = "$want" ] && [ "${4:-1}" = 1 ]; then
		result fallbacks "$1" pass "kernel $(uname -r): $path, as expected${5:+; $5}"
	elif [ "$3" = "$want" ]; then
		result fallbacks "$1" fail "kernel $(uname -r): $path, as expected, but counted wrong: $5"
	else
		result fallbacks "$1" fail "kernel $(uname -r): wanted $want, said $3${5:+; $5}"
	fi
}

# fb_check CELL MIN_VERSION PATTERN FILE: the path alone, from FILE.
fb_check() {
	said=$(fb_said "$3" "$4")
	[ "$said" = "$(( fb_version < $2 ))" ] ||
		grep -v libbpf "$4" | head -n 3
	fb_cell "$1" "$2" "$said"
}

fb_legacy='BPF programs for kernels before 5.17'
fb_hash='with raw_tp (no task storage for tracing programs'

"$BIN/profile" -v --unwind=fp -F 49 1 > /dev/null 2> "$SCRATCH/fb.err"
fb_check legacy-bpf 517 "$fb_legacy" "$SCRATCH/fb.err"
"$BIN/runqlat" -v 1 1 > /dev/null 2> "$SCRATCH/fb.err"
fb_check task-storage 512 "$fb_hash" "$SCRATCH/fb.err"
"$BIN/funclatency" -v -F -d 1 'vfs_read*' > /dev/null 2> "$SCRATCH/fb.err"
if grep -q 'kernel has no kprobes' "$SCRATCH/fb.err"; then
	result fallbacks cookies n/a "$(grep 'kernel has no kprobes' "$SCRATCH/fb.err" | head -n 1)"
else
	fb_check cookies 517 'functions known by their addresses' "$SCRATCH/fb.err"
fi

# offcputime: 10 sleeps of 20 ms in offcpu_sleeper(), the time they took, as
# offcputime.sh counts them; the legacy object, and raw_tp with a hash by
# thread id, before 5.17 and 5.12.
# By frame pointers: unwind.sh checks the CFI walk, the legacy objects'
# too.
vm_trace fbo "$WL/offcpu sleep 10 20" offcputime -v -f --unwind=fp
# All of its time off the CPU, as the workload's clocks count it: its
# sleeps, and any preemption in it (a starved guest's), which the stacks
# through do_nanosleep leave out (CI: 559 of 692 ms on 6.1).
us=$(awk '/;offcpu_sleeper(;| )/ { n += $NF } END { print n + 0 }' "$SCRATCH/fbo.out")
ns=$(awk '/;offcpu_sleeper;.*do_nanosleep/ { n += $NF } END { print n + 0 }' "$SCRATCH/fbo.out")
short=$(( $(vm_unseen "$SCRATCH/fbo.err") * 20000 + $(vm_clock_reads "$SCRATCH/fbo.out") ))
ok=0
[ "${vm_rc:-1}" = 0 ] && [ -z "$(vm_leftover offcputime)" ] && [ "$ns" -gt 0 ] &&
	vm_blocked "$us" "$SCRATCH/fbo.work" "$short" && ok=1
detail="rc=${vm_rc:-} offcpu_sleeper: $us us of $(awk '/^done/ { print $2 " (" $3 " wall)" }' "$SCRATCH/fbo.work") slept, $(grep -o 'with raw_tp ([^)]*)\|with tp_btf' "$SCRATCH/fbo.err" | head -n 1)"
[ $ok = 1 ] || detail="$detail $(grep -v libbpf "$SCRATCH/fbo.err" | tail -n 2)"
fb_cell offcpu-legacy 517 "$(fb_said "$fb_legacy" "$SCRATCH/fbo.err")" "$ok" "$detail"
fb_cell offcpu-tid-hash 512 "$(fb_said "$fb_hash" "$SCRATCH/fbo.err")" "$ok" "$detail"
# Its kernel frames (do_nanosleep, counted above): named by the kernel's
# %pS from 5.13 (bpf_snprintf), from /proc/kallsyms read whole before.
fb_cell kernel-names 513 "$(fb_said 'kernel symbols: all of /proc/kallsyms' "$SCRATCH/fbo.err")" \
	"$([ "$ns" -gt 0 ] && echo 1 || echo 0)" \
	"$ns us under do_nanosleep; $(grep -o 'kernel symbols: .*' "$SCRATCH/fbo.err" | head -n 1)"

# offwaketime: a reader blocked 10 x 20 ms on a pipe, paired with its
# waker, as offwaketime.sh counts it. All of the reader's time off the CPU
# is held to the workload's clocks, as for offcputime: a starved guest
# preempts it in its reads too (CI: 41 of 253 ms on arm64), and a thread
# preempted has no waker; most of it, though, must be its waker's.
vm_trace fbw "$WL/offcpu pipe 10 20" offwaketime -v -f --unwind=fp
all=$(awk '/;offcpu_reader(;| )/ { n += $NF } END { print n + 0 }' "$SCRATCH/fbw.out")
blocked=$(awk '/^done/ { print $2 }' "$SCRATCH/fbw.work")
us=$(awk '/;offcpu_reader;.*;--;.*try_to_wake_up.*;offcpu_waker;/ { n += $NF } END { print n + 0 }' "$SCRATCH/fbw.out")
ok=0
[ "${vm_rc:-1}" = 0 ] && [ -z "$(vm_leftover offwaketime)" ] &&
	[ "$us" -ge $(( ${blocked:-0} * 3 / 4 )) ] &&
	vm_blocked "$all" "$SCRATCH/fbw.work" 0 && ok=1
detail="rc=${vm_rc:-} reader;--;waker: $us us (the reader off its CPU: $all) of $(awk '/^done/ { print $2 " (" $3 " wall)" }' "$SCRATCH/fbw.work") blocked, $(grep -o 'with raw_tp ([^)]*)\|with tp_btf' "$SCRATCH/fbw.err" | head -n 1)"
[ $ok = 1 ] || detail="$detail $(grep -v libbpf "$SCRATCH/fbw.err" | tail -n 2) $(grep offcpu_reader "$SCRATCH/fbw.out" | head -c 800)"
fb_cell offwake-legacy 517 "$(fb_said "$fb_legacy" "$SCRATCH/fbw.err")" "$ok" "$detail"
fb_cell offwake-tid-hash 512 "$(fb_said "$fb_hash" "$SCRATCH/fbw.err")" "$ok" "$detail"

# readdirlat: one lsdir run, its row as lsdir counted it; the legacy object
# walks no records, so ENTRIES is "-" there and lsdir's count elsewhere.
mkdir -p "$SCRATCH/fb-dir"
i=0
while [ $i -lt 300 ]; do
	: > "$SCRATCH/fb-dir/f$i"
	i=$((i + 1))
done
fb_dir=$(cd "$SCRATCH/fb-dir" && pwd -P)
if vm_attach "$SCRATCH/fbr.out" "$SCRATCH/fbr.err" readdirlat -v -S -c lsdir; then
	set -- $("$WL/lsdir" "$fb_dir" 8192 2)
	pid=$2 calls=$4 entries=$6 bytes=$8
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	said=$(fb_said "$fb_legacy" "$SCRATCH/fbr.err")
	[ "$said" = 1 ] && entries=-
	# COMM PID CALLS SCANS CALLS/SCAN BUFSZ BYTES ENTRIES AVG MAX DIR
	row=$(awk -v p="$pid" '$2 == p { print $11, $3, $4, $6, $7, $8 }' "$SCRATCH/fbr.out")
	want="$fb_dir $calls 2 8192 $bytes $entries"
	ok=0
	[ "$rc" = 0 ] && [ "$row" = "$want" ] && ok=1
	fb_cell readdirlat-legacy 517 "$said" "$ok" "got [$row] want [$want]"
else
	result fallbacks readdirlat-legacy fail "rc=$vm_rc $(grep -v libbpf "$SCRATCH/fbr.err" | tail -n 2)"
fi
rm -rf "$SCRATCH/fb-dir"

# funclatency -F on user functions: by address with the legacy object,
# which needs -p; its counts as with cookies: 20 slow_func, 1000 fast_func.
vm_trace fbf "$WL/funcs" funclatency -v -F -r "$WL/funcs:^(slow|fast)_func\$"
counts=$(awk '/^Function = / { f = $3 } / -> .* : [0-9]+ +\|/ { n[f] += $5 }
	END { print n["slow_func"] + 0, n["fast_func"] + 0 }' "$SCRATCH/fbf.out")
ok=0
[ "${vm_rc:-1}" = 0 ] && [ "$counts" = "20 1000" ] && [ -z "$(vm_leftover funclatency)" ] && ok=1
fb_cell funclat-by-address 517 \
	"$(fb_said 'functions known by their addresses' "$SCRATCH/fbf.err")" "$ok" \
	"rc=${vm_rc:-} slow_func fast_func: $counts, want 20 1000$([ $ok = 1 ] || echo " $(grep -v libbpf "$SCRATCH/fbf.err" | tail -n 2)")"
# ... and without -p, refused there (exit 1, saying why), traced elsewhere.
"$BIN/funclatency" -F -d 1 -r "$WL/funcs:^(slow|fast)_func\$" > "$SCRATCH/fbf.out" 2> "$SCRATCH/fbf.err"
rc=$?
said=$(fb_said '^funclatency: -F on user-space functions needs Linux 5.17 (bpf_loop, with which funclatency.s BPF reads attach cookies) unless -p names the process$' "$SCRATCH/fbf.err")
ok=0
{ [ $said = 1 ] && [ $rc = 1 ]; } || { [ $said = 0 ] && [ $rc = 0 ]; } && ok=1
fb_cell funclat-no-p 517 "$said" "$ok" "rc=$rc $(grep -v libbpf "$SCRATCH/fbf.err" | tail -n 1)"

# cachestat: before 5.12 its functions by their older names
# (generic_file_buffered_read, add_to_page_cache_lru, account_page_dirtied),
# and on every kernel no task storage outside the tracepoints (5.10 cannot
# create it); a cold read of 16 MiB missing once a page, as cachestat.sh
# has it. fentry, else kprobes: this development host has neither.
dd if=/dev/zero of="$SCRATCH/fb.data" bs=1048576 count=16 2> /dev/null
sync
echo 3 > /proc/sys/vm/drop_caches
fb_lacks='^cachestat: kernel (refuses fentry|has no kprobes)'
tracing=0
for method in fentry kprobe; do
	if vm_attach "$SCRATCH/fbc.out" "$SCRATCH/fbc.err" cachestat -v --method $method -P --top 0 600; then
		tracing=1
		break
	fi
	grep -qE "$fb_lacks" "$SCRATCH/fbc.err" || break
done
if [ $tracing = 1 ]; then
	dd if="$SCRATCH/fb.data" of=/dev/null bs=131072 2> /dev/null &
	rpid=$!
	wait $rpid
	sleep 0.2
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	set -- $(awk -v p=$rpid '$1 == p { h += $(NF-3); m += $(NF-2) } END { print h + 0, m + 0 }' "$SCRATCH/fbc.out")
	# Tolerances as cachestat.sh's: readahead past the end, the reader's own start.
	ok=$(awk -v h="$1" -v m="$2" -v n=4096 'BEGIN {
		r = h + m ? 100 * h / (h + m) : 0
		ok = m >= n * 0.98 && m <= n * 1.05 && r < 15
		print ok ? 1 : 0 }')
	[ "$rc" = 0 ] && [ "$(fb_said "map 'lookups': skipped auto-creating" "$SCRATCH/fbc.err")" = 1 ] || ok=0
	fb_cell cachestat-names 512 \
		"$(fb_said "counting with $method on generic_file_buffered_read, filemap_fault, filemap_map_pages, add_to_page_cache_lru and account_page_dirtied" "$SCRATCH/fbc.err")" \
		"$ok" "rc=$rc cold hits=$1 misses=$2 of 4096 pages, $(grep -o 'counting with .*' "$SCRATCH/fbc.err")"
elif grep -qE "$fb_lacks" "$SCRATCH/fbc.err"; then
	result fallbacks cachestat-names n/a "$(grep -E "$fb_lacks" "$SCRATCH/fbc.err" | head -n 1)"
else
	result fallbacks cachestat-names fail "rc=$vm_rc $(grep -v libbpf "$SCRATCH/fbc.err" | tail -n 2)"
fi
rm -f "$SCRATCH/fb.data" "$SCRATCH"/fb*.out "$SCRATCH"/fb*.err "$SCRATCH"/fb*.work
