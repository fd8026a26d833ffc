#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Perl on a test VM's kernel: Debian 13's perl 5.40, chrooted, runs
# tests/perl/cheese.pl; profile must name its busy chain's subs in place of
# Perl's loop where the kernel has bpf_loop (5.17), on arm64 too, whose
# thread-local variables lie above the thread pointer, not below.
#
# POSIX sh; see tests/vm/lib.sh. PERLROOT is the unpacked perl
# (tests/vm/run puts it at /bpfscope/perl in the guests).

pl_root=${PERLROOT:-/bpfscope/perl}
pl_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# pl_line NAME: the line of cheese.pl its sub NAME's first statement is at.
pl_line() {
	echo $(( $(grep -n "^sub $1 {" "$pl_root/tmp/cheese.pl" | cut -d: -f1) + 1 ))
}

# pl_run NAME TOOL ARGS...: the chain, TOOL -p PID ARGS on it for 2 s,
# held while the tool loads (vm_held); output in $SCRATCH/NAME.out and .err.
pl_run() {
	_n=$1
	shift
	: > "$SCRATCH/$_n.work"
	LC_ALL=C chroot "$pl_root" /usr/bin/perl /tmp/cheese.pl chain > "$SCRATCH/$_n.work" &
	_p=$!
	if ! vm_wait "$SCRATCH/$_n.work" '^pid ' $_p; then
		vm_rc=98
		return
	fi
	_pl=$(awk '/^pid / { print $2; exit }' "$SCRATCH/$_n.work")
	vm_held "$_pl" "$SCRATCH/$_n.out" "$SCRATCH/$_n.err" "$@" -p "$_pl" 2
	kill "$_pl" $_p 2> /dev/null
	wait $_p 2> /dev/null
}

if [ ! -x "$pl_root/usr/bin/perl" ]; then
	result perl profile fail "no perl at $pl_root"
elif [ $pl_version -lt 517 ]; then
	pl_run plfp profile -f -F 99
	n=$(awk '/;Perl_runops_standard( |;)/ { n += $NF } END { print n + 0 }' "$SCRATCH/plfp.out")
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && ! grep -q '(cheese\.pl:' "$SCRATCH/plfp.out"; then
		result perl profile n/a "no Perl frames merged before 5.17 (bpf_loop): $n samples in its loop"
	else
		result perl profile fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/plfp.err") $(head -c 400 "$SCRATCH/plfp.out")"
	fi
else
	: > "$SCRATCH/plp.all"
	for _try in 1 2 3 4 5; do
		pl_run plp profile -v -f -F 99
		cat "$SCRATCH/plp.out" >> "$SCRATCH/plp.all"
		[ $vm_rc = 0 ] && [ "$(vm_samples "$SCRATCH/plp.all" ';Cave::reblochon [(]cheese[.]pl:')" -lt 20 ] || break
	done
	mv "$SCRATCH/plp.all" "$SCRATCH/plp.out"
	# Brackets, not backslashes: awk -v takes escapes away, each awk its own way.
	chain="main::brie [(]cheese[.]pl:$(pl_line brie)[)];main::camembert [(]cheese[.]pl:$(pl_line camembert)[)];Cave::reblochon [(]cheese[.]pl:$(pl_line reblochon)[)]"
	set -- $(awk -v c="^perl;_start;.*;$chain( |;)" '/^perl;/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/plp.out")
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && [ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 90)) ]; then
		result perl profile pass "$1 of $2 samples whole to Cave::reblochon"
	else
		result perl profile fail "rc=$vm_rc $1 of $2 whole $(grep -i 'perl' "$SCRATCH/plp.err" | head -n 2) $(head -c 600 "$SCRATCH/plp.out")"
	fi
fi
