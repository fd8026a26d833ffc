#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The CFI unwinder on a test VM's kernel: the -O2 nofp workload (no frame
# pointers; in the guests one static binary) profiled, its leaf's samples
# with the whole chain up to main; offcputime on its blocked reader, and
# system-wide on short-lived processes, each read as it execs; calls
# inlined in it, from its DWARF.
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
		result unwind "$1" fail "$2 of $3 whole: $4"
	fi
}

# Spinning long enough for the slowest guest (arm64 under emulation) to
# build the tables before sampling: stopped once profile is done.
"$WL/nofp" spin 20 > "$SCRATCH/uw.work" &
wpid=$!
vm_wait "$SCRATCH/uw.work" '^pid ' $wpid
"$BIN/profile" -v -f -F 99 -p $wpid 2 > "$SCRATCH/uw.out" 2> "$SCRATCH/uw.err"
rc=$?
kill $wpid 2> /dev/null
wait $wpid 2> /dev/null
# A kernel before 5.17 (no bpf_loop) walks by frame pointers only, which
# -O2 code has not: every cell is n/a there, with the tool's reason.
if grep -q 'user stacks: frame pointers (this kernel has no' "$SCRATCH/uw.err"; then
	why=$(grep 'user stacks:' "$SCRATCH/uw.err" | head -n 1)
	for cell in profile-cfi offcputime-cfi short-lived inlined; do
		result unwind $cell n/a "$why"
	done
	return 0
fi
if grep -q 'user stacks: frame pointers' "$SCRATCH/uw.err"; then
	result unwind profile-cfi n/a "$(grep 'user stacks:' "$SCRATCH/uw.err" | head -n 1)"
else
	set -- $(uw_share "$SCRATCH/uw.out" nofp_leaf "main;nofp_level1;nofp_level2;nofp_level3")
	uw_verdict profile-cfi "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
fi

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

# Short-lived: 60 processes, each blocked 3 times 1 ms, gone before the report.
if vm_attach "$SCRATCH/uw.out" "$SCRATCH/uw.err" offcputime -U -f; then
	i=0
	while [ $i -lt 60 ]; do
		"$WL/nofp" nap 3 1 > /dev/null
		i=$((i + 1))
	done
	kill -INT $vm_tpid
	wait $vm_tpid
	rc=$?
	set -- $(uw_share "$SCRATCH/uw.out" nofp_nap_leaf "main;nofp_level1;nofp_level2;nofp_level3")
	uw_verdict short-lived "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" offcputime
else
	result unwind short-lived fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/uw.err")"
fi

# Inlined calls, from the static binary's DWARF.
"$WL/nofp" inline 20 > "$SCRATCH/uw.work" &
wpid=$!
vm_wait "$SCRATCH/uw.work" '^pid ' $wpid
"$BIN/profile" -f -F 99 -p $wpid 2 > "$SCRATCH/uw.out" 2> "$SCRATCH/uw.err"
rc=$?
kill $wpid 2> /dev/null
wait $wpid 2> /dev/null
set -- $(awk '/;nofp_inline_host(;| )/ { all += $NF; if ($0 ~ /;nofp_inline_host;nofp_inl_a_\[i\];nofp_inl_b_\[i\](;| )/) whole += $NF }
	END { print whole + 0, all + 0 }' "$SCRATCH/uw.out")
uw_verdict inlined "$1" "$2" "rc=$rc $(tail -n 2 "$SCRATCH/uw.err") $(head -c 400 "$SCRATCH/uw.out")" profile
