#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The CFI unwinder on a test VM's kernel: the -O2 nofp workload (no frame
# pointers; in the guests one static binary) profiled, its leaf's samples
# with the whole chain up to main; the same through a shared library (the
# workload linked as usual, run by the loader it brings, as the guests have
# none), and through a signal handler; offcputime on its blocked reader,
# offwaketime on it and its waker, and offcputime system-wide on
# short-lived processes, each read as it execs; calls inlined in it, from
# its DWARF; on arm64, return addresses signed by pointer authentication;
# and --unwind=fp, the kernel's walk, as before, on every kernel; the
# walk of kernels before 5.17, on every kernel.
#
# POSIX sh; see tests/vm/lib.sh.

# uw_share FILE LEAF CHAIN: "WHOLE ALL", the counts through LEAF and those with CHAIN above it.
uw_share() {
	awk -v leaf=";$2(;| )" -v chain=";$3;$2(;| )" '
		$0 ~ leaf { all += $NF; if ($0 ~ chain) whole += $NF }
		END { print whole + 0, all + 0 }' "$1"
}

# uw_verdict CELL WHOLE ALL DETAIL: pass when WHOLE is 95% of ALL, and ALL is some.
uw_verdict() {
	if [ "$3" -gt 20 ] && [ $(($2 * 100)) -ge $(($3 * 95)) ] && [ -z "$(vm_leftover "$5")" ]; then
		result unwind "$1" pass "$2 of $3 whole"
	else
		result unwind "$1" fail "$2 of $3 whole: ${uw_gone:-}$4"
	fi
}

# uw_profile SECONDS WORKLOAD...: WORKLOAD (it prints "pid PID" first)
# profiled -v -f for SECONDS at 99 Hz (more profile options in $uw_args):
# output in uw.out and uw.err, the tool's status in rc; the workload is
# stopped once profile is done, and held while profile loads (vm_held).
# Workloads spin for 120 s, not the 20 they
# did: an arm64 guest starved beside the suite took longer than that to
# load profile, whose -p process had then exited (a CI run: no sample in
# five runs). uw_gone says when a workload ended before profile did.
uw_profile() {
	_secs=$1
	shift
	: > "$SCRATCH/uw.work"
	"$@" > "$SCRATCH/uw.work" &
	wpid=$!
	vm_wait "$SCRATCH/uw.work" '^pid ' $wpid
	vm_held $wpid "$SCRATCH/uw.out" "$SCRATCH/uw.err" profile -v -f -F 99 $uw_args -p $wpid $_secs
	rc=$vm_rc
	kill -0 $wpid 2> /dev/null || uw_gone="the workload exited before profile did; "
	kill $wpid 2> /dev/null
	wait $wpid 2> /dev/null
}

# uw_enough LEAF SECONDS WORKLOAD...: uw_profile again, up to five times,
# until LEAF has the samples a verdict needs (vm_samples), uw.out holding
# every run's stacks.
uw_enough() {
	_leaf=$1
	shift
	uw_gone=
	: > "$SCRATCH/uw.all"
	for _try in 1 2 3 4 5; do
		uw_profile "$@"
		cat "$SCRATCH/uw.out" >> "$SCRATCH/uw.all"
		[ "$(vm_samples "$SCRATCH/uw.all" ";$_leaf(;| )")" -gt 20 ] && break
	done
	mv "$SCRATCH/uw.all" "$SCRATCH/uw.out"
}

# The kernel's frame-pointer walk, which every kernel has: the chain is
# lost at once in -O2 code, its leaf still sampled (what profile gave
# before it read CFI).
uw_args=--unwind=fp
uw_enough "(nofp_leaf|clock_gettime)" 2 "$WL/nofp" spin 120
uw_args=
# The leaf, or the clock read it makes: where the clocksource has no vDSO
# read (hpet in the 5.10 and 6.1 guests) most samples are in the syscall,
# which frame pointers show under clock_gettime alone.
set -- $(uw_share "$SCRATCH/uw.out" "(nofp_leaf|clock_gettime)" "main;nofp_level1;nofp_level2;nofp_level3")
if [ "$2" -gt 20 ] && [ $(($1 * 100)) -lt $(($2 * 5)) ] &&
   grep -q 'user stacks: frame pointers (--unwind=fp)' "$SCRATCH/uw.err" &&
   [ -z "$(vm_leftover profile)" ]; then
	result unwind profile-fp pass "$2 samples of the leaf, $1 whole, by frame pointers"
else
	result unwind profile-fp fail "$1 of $2 whole: rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")"
fi

# Every kernel walks CFI: before 5.17 (no bpf_loop), the legacy objects'
# loop of calls.
uw_enough nofp_leaf 2 "$WL/nofp" spin 120
if grep -q 'no mmap:vm_unmapped_area tracepoint' "$SCRATCH/uw.err"; then
	# Every kernel that walks CFI has it: how a library unloaded while traced is noticed.
	result unwind profile-cfi fail "$(grep 'no mmap:' "$SCRATCH/uw.err")"
else
	set -- $(uw_share "$SCRATCH/uw.out" nofp_leaf "main;nofp_level1;nofp_level2;nofp_level3")
	uw_verdict profile-cfi "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
fi

# The legacy objects' walk (kernels before 5.17), on this kernel as
# BPFSCOPE_DISABLE has it taken: where it finds the user registers by
# hand, which only an arm64 guest checks on arm64.
export BPFSCOPE_DISABLE=bpf_loop
uw_enough nofp_leaf 2 "$WL/nofp" spin 120
unset BPFSCOPE_DISABLE
if ! grep -q 'BPF programs for kernels before 5.17' "$SCRATCH/uw.err"; then
	result unwind legacy-cfi fail "not the legacy objects: $(grep -v libbpf "$SCRATCH/uw.err" | head -n 3)"
else
	set -- $(uw_share "$SCRATCH/uw.out" nofp_leaf "main;nofp_level1;nofp_level2;nofp_level3")
	uw_verdict legacy-cfi "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
fi

# Through a shared library built without frame pointers: nofp-dyn and
# libnofplib.so, run by the loader and C library beside them.
ld=$(ls "$WL"/ld-linux-* 2> /dev/null | head -n 1)
if [ -z "$ld" ] || [ ! -x "$WL/nofp-dyn" ]; then
	result unwind shared-library fail "no nofp-dyn or loader among the workloads"
else
	uw_enough nofplib_leaf 2 "$ld" --library-path "$WL" "$WL/nofp-dyn" lib 120
	set -- $(uw_share "$SCRATCH/uw.out" nofplib_leaf "main;nofp_to_lib;nofplib_outer;nofplib_inner")
	uw_verdict shared-library "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
fi

# Through a signal handler: its leaf, the handler, the kernel's signal
# trampoline, then the code it interrupted, up to main.
uw_enough nofp_handler_leaf 3 "$WL/nofp" signal 120
set -- $(uw_share "$SCRATCH/uw.out" nofp_handler_leaf "main;nofp_waiter;.*;nofp_handler")
uw_verdict signal "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile

: > "$SCRATCH/uw.work"
"$WL/nofp" pipe 20 10 > "$SCRATCH/uw.work" &
wpid=$!
vm_wait "$SCRATCH/uw.work" '^pid ' $wpid
if vm_attach "$SCRATCH/uw.out" "$SCRATCH/uw.err" offcputime -U -f -p $wpid; then
	kill -USR1 $wpid
	wait $wpid
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	set -- $(uw_share "$SCRATCH/uw.out" read "reader;nofp_reader_mid;nofp_reader_leaf")
	uw_verdict offcputime-cfi "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" offcputime
else
	kill $wpid 2> /dev/null
	result unwind offcputime-cfi fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/uw.err")"
fi

# offwaketime: the reader's blocked stack whole from its thread's root to
# read(), and its waker's whole from write() back to the writer's root.
: > "$SCRATCH/uw.work"
"$WL/nofp" pipe 20 10 > "$SCRATCH/uw.work" &
wpid=$!
vm_wait "$SCRATCH/uw.work" '^pid ' $wpid
if vm_attach "$SCRATCH/uw.out" "$SCRATCH/uw.err" offwaketime -f -p $wpid; then
	kill -USR1 $wpid
	wait $wpid
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	# Only the stacks whose blocked half is the reader's count: a timer
	# interrupt that woke the writer's usleep() while the reader ran has
	# the reader's stack as its waker's (a CI run: 6% of the time).
	uw_ow='BEGIN { blocked = ";reader;nofp_reader_mid;nofp_reader_leaf;"
		waker = ";nofp_writer_leaf;nofp_writer_mid;writer;" }
		{ cut = index($0, ";--;") } cut && index(substr($0, 1, cut), ";nofp_reader_leaf;")'
	set -- $(awk "$uw_ow"' { all += $NF; if (index($0, blocked) && index(substr($0, cut), waker)) whole += $NF }
		END { print whole + 0, all + 0 }' "$SCRATCH/uw.out")
	# The detail: the biggest of the reader's stacks not whole.
	uw_verdict offwaketime-cfi "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(awk "$uw_ow"' &&
		!(index($0, blocked) && index(substr($0, cut), waker)) { print $NF, $0 }' \
		"$SCRATCH/uw.out" | sort -rn | head -n 2 | cut -c 1-700)" offwaketime
else
	kill $wpid 2> /dev/null
	result unwind offwaketime-cfi fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/uw.err")"
fi

# Short-lived: 60 processes, each blocked 3 times 1 ms, gone before the report.
# Each is read as it execs, by a thread that races its first blocks: a
# guest whose vCPUs the host starves (one emulator thread for both, at idle
# priority beside the suite) may let some block first, walked by frame
# pointers, which the tool counts ("... by frame pointers and build-id
# before their process's mappings were read"; a CI run: 94.6% whole). Such
# a run, said by the tool, is tried once more.
uw_try=1
while :; do
	if ! vm_attach "$SCRATCH/uw.out" "$SCRATCH/uw.err" offcputime -v -U -f; then
		result unwind short-lived fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/uw.err")"
		break
	fi
	vm_settled "$SCRATCH/uw.err"
	i=0
	while [ $i -lt 60 ]; do
		"$WL/nofp" nap 3 1 > /dev/null
		i=$((i + 1))
	done
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	set -- $(uw_share "$SCRATCH/uw.out" nofp_nap_leaf "main;nofp_level1;nofp_level2;nofp_level3")
	if [ $uw_try = 1 ] && [ "$2" -gt 20 ] && [ $(($1 * 100)) -lt $(($2 * 95)) ] &&
	   grep -qE ' [1-9][0-9]* by frame pointers and build-id before' "$SCRATCH/uw.err"; then
		echo "short-lived: $1 of $2 whole, some walked before their process was read: once more"
		uw_try=2
		continue
	fi
	uw_verdict short-lived "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" offcputime
	break
done

# arm64: return addresses signed by pointer authentication, which the walk
# strips before it looks them up (an arm64 guest only: x86 has no such thing).
if [ "$(uname -m)" = aarch64 ]; then
	if ! grep -qw paca /proc/cpuinfo; then
		result unwind pac fail "this CPU has no pointer authentication: $(grep -m 1 Features /proc/cpuinfo)"
	elif [ ! -x "$WL/nofp-pac" ]; then
		result unwind pac fail "no nofp-pac among the workloads"
	else
		uw_enough nofp_leaf 2 "$WL/nofp-pac" spin 120
		set -- $(uw_share "$SCRATCH/uw.out" nofp_leaf "main;nofp_level1;nofp_level2;nofp_level3")
		uw_verdict pac "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
	fi
fi

# Inlined calls, from the static binary's DWARF.
uw_enough nofp_inline_host 2 "$WL/nofp" inline 120
set -- $(awk '/;nofp_inline_host(;| )/ { all += $NF; if ($0 ~ /;nofp_inline_host;nofp_inl_a_\[i\];nofp_inl_b_\[i\](;| )/) whole += $NF }
	END { print whole + 0, all + 0 }' "$SCRATCH/uw.out")
uw_verdict inlined "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
