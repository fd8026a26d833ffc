# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What every check script under tests/vm/checks/ may call: POSIX sh, for
# busybox in a test VM and for the host's /bin/sh alike.

# result TOOL METHOD pass|fail|n/a DETAIL: one cell of the matrix. n/a
# means the kernel lacks the method and the tool said so; the harness
# decides whether that is acceptable on the kernel at hand.
result() {
	printf 'RESULT %s %s %s %s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | tr '\n\t' '  ' | cut -c1-600)"
}

# vm_wait FILE PATTERN [PID]: up to 20 s for a line matching PATTERN in
# FILE; gives up early once process PID has exited.
vm_wait() {
	_i=0
	while [ $_i -lt 200 ]; do
		grep -q "$2" "$1" 2> /dev/null && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2> /dev/null && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# vm_leftover TOOL: names of TOOL's BPF programs still loaded, if any.
vm_leftover() {
	sleep 0.5
	"$WL/bpfprogs" 2> /dev/null | grep "^$1_" | tr '\n' ' '
}

# vm_hist_total FILE: the count of every row of the log2 histograms in FILE.
vm_hist_total() {
	awk '/ -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$1"
}
