#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Go programs on a test VM's kernel: tests/go/gowork.go built stripped
# (-s -w) by Go 1.19 and 1.24 (the two pclntab layouts), profiled: its
# leaf's samples named, with the frameless leaf's caller and the call
# inlined into it, up to runtime.goexit.
#
# POSIX sh; see tests/vm/lib.sh.

for ver in 1.19 1.24; do
	if [ ! -x "$WL/go/gowork-$ver-strip" ]; then
		result go "profile-$ver" fail "no gowork-$ver-strip among the workloads"
		continue
	fi
	"$WL/go/gowork-$ver-strip" cpu 4 > "$SCRATCH/go.work" &
	wpid=$!
	vm_wait "$SCRATCH/go.work" '^ready' $wpid
	"$BIN/profile" -f -F 99 -p $wpid 2 > "$SCRATCH/go.out" 2> "$SCRATCH/go.err"
	rc=$?
	kill $wpid 2> /dev/null
	wait $wpid 2> /dev/null
	set -- $(awk '
		/;main\.goHotAlpha( |;)/ { all += $NF
			if ($0 ~ /;runtime\.goexit;runtime\.main;main\.main;main\.goCallerGamma;main\.goInlinedBeta_\[i\];main\.goHotAlpha( |;)/)
				whole += $NF }
		END { print whole + 0, all + 0 }' "$SCRATCH/go.out")
	if [ "$2" -gt 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] && [ -z "$(vm_leftover profile)" ]; then
		result go "profile-$ver" pass "$1 of $2 whole"
	else
		result go "profile-$ver" fail "$1 of $2 whole: rc=$rc $(tail -n 2 "$SCRATCH/go.err") $(head -c 400 "$SCRATCH/go.out")"
	fi
done
