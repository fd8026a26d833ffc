#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Go programs on a test VM's kernel: tests/go/gowork.go built stripped
# (-s -w) by Go 1.19 and 1.24 (the two pclntab layouts), profiled: its
# leaf's samples named, with the frameless leaf's caller and the call
# inlined into it, up to runtime.goexit; the collector's work, run by
# runtime.systemstack, up to its goroutine's root; a cgo program's C,
# called from Go, walked up to runtime.goexit; and funclatency on a Go
# function whose goroutines block 10 ms: every call counted, none under 8 ms,
# its time between the program's own of the sleeps inside and the calls.
#
# POSIX sh; see tests/vm/lib.sh.

# go_sampled MARK COMMAND...: COMMAND (a program that prints "ready")
# profiled 2 s at a time, held stopped until the tool is attached, with
# $go_extra's options too, until over 20 samples pass MARK (five tries: a
# starved guest samples little); folded into go.out, the tool's stderr in
# go.err, its status in $rc.
go_sampled() {
	mark=$1
	shift
	: > "$SCRATCH/go.out"
	for _try in 1 2 3 4 5; do
		: > "$SCRATCH/go.work"
		"$@" > "$SCRATCH/go.work" &
		wpid=$!
		vm_wait "$SCRATCH/go.work" '^ready' $wpid
		vm_held $wpid "$SCRATCH/go.one" "$SCRATCH/go.err" profile -v -f -F 99 -p $wpid $go_extra 2
		rc=$vm_rc
		cat "$SCRATCH/go.one" >> "$SCRATCH/go.out"
		kill $wpid 2> /dev/null
		wait $wpid 2> /dev/null
		[ $rc = 0 ] && [ "$(vm_samples "$SCRATCH/go.out" "$mark")" -le 20 ] || break
	done
}

# go_profile CELL CHAIN PROFILE-ARGS...: the stripped binary profiled; the
# leaf's samples must have CHAIN (an awk regular expression) right above it.
go_profile() {
	cell=$1 chain=$2
	shift 2
	go_extra="$*"
	go_sampled ';main[.]goHotAlpha( |;)' "$WL/go/gowork-$ver-strip" cpu 120
	set -- $(awk -v chain="$chain" '
		/;main\.goHotAlpha( |;)/ { all += $NF; if ($0 ~ chain) whole += $NF }
		END { print whole + 0, all + 0 }' "$SCRATCH/go.out")
	if [ "$2" -gt 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && [ -z "$(vm_leftover profile)" ]; then
		result go "$cell" pass "$1 of $2 whole"
	else
		result go "$cell" fail "$1 of $2 whole: rc=$rc $(grep -v libbpf "$SCRATCH/go.err" | tail -n 2) $(head -c 400 "$SCRATCH/go.out")"
	fi
}

for ver in 1.19 1.24; do
	if [ ! -x "$WL/go/gowork-$ver-strip" ]; then
		result go "profile-$ver" fail "no gowork-$ver-strip among the workloads"
		continue
	fi
	# With Go's own stack-pointer table: the frameless leaf keeps its caller.
	go_profile "profile-$ver" \
		';runtime\\.goexit;runtime\\.main;main\\.main;main\\.goCallerGamma;main\\.goInlinedBeta_\\[i\\];main\\.goHotAlpha( |;)'
	# By frame pointers, as every kernel can: named from pclntab, from
	# runtime.main, the frameless leaf's caller skipped as documented.
	go_profile "profile-$ver-fp" \
		';runtime\\.main;main\\.main;(main\\.goCallerGamma;)?main\\.goHotAlpha( |;)' --unwind=fp
	# The collector's marking, run by runtime.systemstack on the thread's
	# stack: back on the mark worker goroutine's, up to runtime.goexit (or
	# from runtime.mstart, where already on the thread's stack).
	go_extra=
	go_sampled ';runtime[.]systemstack;' "$WL/go/gowork-$ver-strip" gc 120
	set -- $(awk '/;runtime[.]systemstack;/ { all += $NF
			if (/^[^;]*;runtime[.](goexit|mstart);/) whole += $NF
			if (/^[^;]*;runtime[.]goexit;(.*;)?runtime[.]gcBgMarkWorker;runtime[.]systemstack;/) crossed += $NF }
		END { print whole + 0, all + 0, crossed + 0 }' "$SCRATCH/go.out")
	if [ $rc = 0 ] && [ "$2" -gt 20 ] && [ "$3" -gt 10 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
	   [ -z "$(vm_leftover profile)" ]; then
		result go "systemstack-$ver" pass "$1 of $2 whole, $3 from a mark worker"
	else
		result go "systemstack-$ver" fail "$1 of $2 whole, $3 from a mark worker: rc=$rc $(grep -v libbpf "$SCRATCH/go.err" | tail -n 2) $(head -c 400 "$SCRATCH/go.out")"
	fi
done

# cgo: C built without frame pointers, called from a goroutine and run on
# the thread's stack, walked up through runtime.asmcgocall to the
# goroutine's root; the program run by the loader and C library beside the
# workloads, as the unwind check's shared-library cell runs nofp-dyn.
ld=$(ls "$WL"/ld-linux-* 2> /dev/null | head -n 1)
for ver in 1.19 1.24; do
	bin=$WL/go/cgocheese-$ver-strip
	if [ ! -x "$bin" ] || [ -z "$ld" ]; then
		result go "cgo-$ver" fail "no cgocheese-$ver-strip or loader among the workloads"
		continue
	fi
	go_extra=
	go_sampled ';runtime[.]asmcgocall;' "$ld" --library-path "$WL" "$bin" c 120
	set -- $(awk '
		/;runtime[.]asmcgocall;/ { all += $NF
			if ($0 ~ /^[^;]*;runtime[.]goexit;runtime[.]main;main[.]main;main[.]goLivarot;main[.]_Cfunc_livarot_outer;runtime[.]cgocall;runtime[.]asmcgocall;/)
				whole += $NF }
		END { print whole + 0, all + 0 }' "$SCRATCH/go.out")
	if [ $rc = 0 ] && [ "$2" -gt 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
	   [ -z "$(vm_leftover profile)" ]; then
		result go "cgo-$ver" pass "$1 of $2 samples in C whole to runtime.goexit"
	else
		result go "cgo-$ver" fail "$1 of $2 whole: rc=$rc $(grep -v libbpf "$SCRATCH/go.err" | tail -n 2) $(head -c 400 "$SCRATCH/go.out")"
	fi
done

for ver in 1.19 1.24; do
	bin=$WL/go/gowork-$ver-strip
	[ -x "$bin" ] || continue
	if vm_attach "$SCRATCH/go.out" "$SCRATCH/go.err" funclatency -u "$bin:main.goTimedBlock"; then
		"$bin" block 2 > "$SCRATCH/go.work"
		grc=$?
		kill -INT $vm_tpid
		wait $vm_tpid
		rc=$?
		# The program's count, its time of the calls around each
		# (outer), and of each one's sleep inside it (inner), in µs.
		set -- $(awk '$1 == "calls" { print $2, $6, $8 }' "$SCRATCH/go.work")
		calls=${1:-0} outer=${2:-} inner=${3:-}
		low=$(awk '/^ +[0-9]+ -> [0-9]+ +:/ && $1 < 8192 { n += $5 } END { print n + 0 }' "$SCRATCH/go.out")
		total=$(awk '/ -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$SCRATCH/go.out")
		us=$(sed -n 's/^avg = .*, total: \([0-9]*\) usecs.*/\1/p' "$SCRATCH/go.out")
		# Every call counted, none cut short (a wrong return would be),
		# and their time between the program's two readings of the same
		# clock: each call is timed from before its first instruction to
		# its return, so it is at least the sleep inside and at most the
		# time around the call, less a µs each that whole µs round away.
		# However a starved emulated guest stretches a 10 ms sleep (to
		# 25 ms on arm64, or 290 ms on a CI run's 6.1), and the breakpoint
		# traps around it, the calls stay between the two.
		if [ $grc = 0 ] && [ $rc = 0 ] && [ "$calls" -ge 10 ] && [ "$total" = "$calls" ] &&
		   [ "$low" = 0 ] && [ -n "$us" ] && [ -n "$outer" ] && [ -n "$inner" ] &&
		   [ $((us + calls)) -ge "$inner" ] && [ "$us" -le "$outer" ] &&
		   [ -z "$(vm_leftover funclatency)" ]; then
			result go "funclatency-$ver" pass "$calls calls, $us µs: $inner asleep in them, $outer around them; none under 8 ms"
		else
			result go "funclatency-$ver" fail "go rc=$grc rc=$rc calls=$calls, $us µs: $inner asleep, $outer around; $low under 8 ms $(tail -n 2 "$SCRATCH/go.err") $(head -c 400 "$SCRATCH/go.out")"
		fi
	else
		result go "funclatency-$ver" fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/go.err")"
	fi
done
