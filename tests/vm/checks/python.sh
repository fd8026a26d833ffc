#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Python on a test VM's kernel: Debian's CPython 3.11, chrooted, runs
# tests/python/cheeses.py; profile must name its busy thread's Python
# chain, each interpreter loop frame replaced by its Python frames, where
# the kernel can walk CFI (5.17); offcputime its sleeping thread's callers.
#
# POSIX sh; see tests/vm/lib.sh. PYROOT is the unpacked CPython
# (tests/vm/run puts it at /bpfscope/python in the guests).

py_root=${PYROOT:-/bpfscope/python}
py_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# py_line NAME: the line of cheeses.py its function NAME starts at.
py_line() {
	grep -n "^def $1(" "$py_root/tmp/cheeses.py" | cut -d: -f1
}

# py_run NAME TOOL ARGS...: the workload (for up to 120 s: an emulated guest
# takes seconds to load a tool), TOOL -p PID ARGS on it for 2 s, held while
# the tool loads (vm_held); output in $SCRATCH/NAME.out and .err, vm_rc TOOL's exit status.
py_run() {
	_n=$1
	shift
	: > "$SCRATCH/$_n.work"
	chroot "$py_root" /usr/bin/python3.11 /tmp/cheeses.py 120 > "$SCRATCH/$_n.work" &
	_p=$!
	if ! vm_wait "$SCRATCH/$_n.work" '^pid ' $_p; then
		vm_rc=98
		return
	fi
	# Its own pid: busybox's shell may run chroot in a child of the job.
	_py=$(awk '/^pid / { print $2; exit }' "$SCRATCH/$_n.work")
	vm_held "$_py" "$SCRATCH/$_n.out" "$SCRATCH/$_n.err" "$@" -p "$_py" 2
	kill "$_py" $_p 2> /dev/null
	wait $_p 2> /dev/null
}

if [ ! -x "$py_root/usr/bin/python3.11" ]; then
	result python profile fail "no CPython at $py_root"
elif [ $py_version -lt 517 ]; then
	# Before 5.17 no Python frames are merged: CPython's stacks end in its loop, named as such.
	py_run pyfp profile -f -F 99
	n=$(awk '/;_PyEval_EvalFrameDefault( |;)/ { n += $NF } END { print n + 0 }' "$SCRATCH/pyfp.out")
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && ! grep -q '(cheeses\.py:' "$SCRATCH/pyfp.out"; then
		result python profile n/a "no Python frames merged before 5.17 (bpf_loop): $n samples in its loop"
	else
		result python profile fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/pyfp.err") $(head -c 400 "$SCRATCH/pyfp.out")"
	fi
else
	: > "$SCRATCH/pyp.all"
	for _try in 1 2 3 4 5; do
		py_run pyp profile -v -f -F 99
		cat "$SCRATCH/pyp.out" >> "$SCRATCH/pyp.all"
		[ $vm_rc = 0 ] && [ "$(vm_samples "$SCRATCH/pyp.all" ';stilton [(]cheeses[.]py:')" -lt 20 ] || break
	done
	mv "$SCRATCH/pyp.all" "$SCRATCH/pyp.out"
	# Brackets, not backslashes: awk -v takes escapes away, each awk its own way.
	chain="main [(]cheeses[.]py:$(py_line main)[)];wensleydale [(]cheeses[.]py:$(py_line wensleydale)[)];cheddar [(]cheeses[.]py:$(py_line cheddar)[)];stilton [(]cheeses[.]py:$(py_line stilton)[)]"
	# The busy thread's samples (the only ones in stilton), whole from _start.
	set -- $(awk -v c="^python3[.]11;_start;.*;$chain( |;)" '/;stilton \(cheeses\.py:/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/pyp.out")
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && [ "$2" -ge 20 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ] &&
	   ! grep -q ';_PyEval_EvalFrameDefault;.*stilton' "$SCRATCH/pyp.out"; then
		result python profile pass "$1 of $2 busy samples whole to stilton"
	else
		result python profile fail "rc=$vm_rc $1 of $2 whole $(grep -i 'cpython\|python' "$SCRATCH/pyp.err" | head -n 2) $(head -c 600 "$SCRATCH/pyp.out")"
	fi
	py_run pyo offcputime -f
	set -- $(awk -v c="napping [(]cheeses[.]py:$(py_line napping)[)];(.*;)?doze [(]cheeses[.]py:$(py_line doze)[)];" '/;doze \(cheeses\.py:/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/pyo.out")
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover offcputime)" ] && [ "$2" -ge 500000 ] && [ $(($1 * 100)) -ge $(($2 * 95)) ]; then
		result python offcputime pass "$1 of $2 us asleep under napping and doze"
	else
		result python offcputime fail "rc=$vm_rc $1 of $2 us $(tail -n 2 "$SCRATCH/pyo.err") $(head -c 600 "$SCRATCH/pyo.out")"
	fi
fi
