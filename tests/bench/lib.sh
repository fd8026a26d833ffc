# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared benchmark helpers: startup time, peak RSS and attached-vs-not throughput, as medians.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
BIN=${BENCH_BIN:-$ROOT/build/bin}
WL=$ROOT/build/tests

# bpftrace and perf find tracepoints through tracefs.
mountpoint -q /sys/kernel/tracing 2>/dev/null || mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null

median() {
	sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

now_ns() {
	date +%s%N
}

# startup_ms PATTERN CMD...: milliseconds from exec until CMD prints a line
# matching PATTERN on stdout or stderr; median of 10 runs.
startup_ms() {
	local pattern=$1
	shift
	for i in $(seq 10); do
		local t0 t1 line
		t0=$(now_ns)
		coproc TOOL { exec "$@" 2>&1; }
		while read -r line <&"${TOOL[0]}"; do
			[[ $line =~ $pattern ]] && break
		done
		t1=$(now_ns)
		kill -INT "${TOOL_PID:-}" 2>/dev/null
		wait "${TOOL_PID:-}" 2>/dev/null
		echo $(( (t1 - t0) / 1000000 ))
	done | median
}

# rss_kib CMD...: "peak P KiB, steady S KiB": the tool's high-water resident
# set (VmHWM, including the transient parse of the kernel's BTF while
# loading) and its resident set (VmRSS) after running 2 seconds.
rss_kib() {
	local out
	out=$(mktemp)
	"$@" >"$out" 2>&1 &
	local pid=$!
	sleep 2
	awk '/^VmHWM:/ { p = $2 } /^VmRSS:/ { s = $2 } END { printf "peak %d KiB, steady %d KiB", p, s }' /proc/$pid/status
	kill -INT $pid
	wait $pid 2>/dev/null
	rm -f "$out"
}

# rate_of CMD...: runs a workload that prints "rate N/s" and prints N.
rate_of() {
	"$@" | sed -n 's/.*rate \([0-9.]*\)\/s.*/\1/p'
}

# overhead ROUNDS "WORKLOAD" "TOOL": runs WORKLOAD ROUNDS times bare and
# ROUNDS times with TOOL attached, alternating so that machine noise hits
# both, and prints both medians and the cost in percent.
overhead() {
	local rounds=$1 workload=$2 tool=$3 bare=() traced=()
	for i in $(seq "$rounds"); do
		bare+=("$(rate_of $workload)")
		eval "exec $tool" >/dev/null 2>&1 &
		local tp=$!
		sleep 1.5	# attached: the tools print their banner in well under that
		traced+=("$(rate_of $workload)")
		kill -INT $tp
		wait $tp 2>/dev/null
	done
	local b t
	b=$(printf '%s\n' "${bare[@]}" | median)
	t=$(printf '%s\n' "${traced[@]}" | median)
	awk -v b="$b" -v t="$t" 'BEGIN { printf "  bare %.0f/s   traced %.0f/s   cost %.1f%%\n", b, t, (b - t) * 100 / b }'
}

# bpf_cost NAME_REGEX "WORKLOAD" CMD...: runs CMD, then WORKLOAD, and prints the
# kernel's own figures (kernel.bpf_stats_enabled) for every program whose name
# matches: runs and mean nanoseconds per run. Unlike throughput, this per-event
# cost does not drown in the noise of a shared machine.
bpf_cost() {
	local re=$1 workload=$2
	shift 2
	local was
	was=$(sysctl -n kernel.bpf_stats_enabled)
	sysctl -qw kernel.bpf_stats_enabled=1
	"$@" >/dev/null 2>&1 &
	local pid=$!
	sleep 2
	$workload >/dev/null
	bpftool prog show -j | jq -r --arg re "$re" '.[] | select((.name // "") | test($re)) |
		select((.run_cnt // 0) > 0) |
		"  \(.name): \(.run_cnt) runs, \(.run_time_ns / .run_cnt | floor) ns/run"'
	kill -INT $pid
	wait $pid 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$was"
}

# verifier_runtimes TOOL...: what the kernel's verifier takes for each of
# TOOL's programs that walk stacks (over 500 instructions processed), as
# built (with every runtime's walk) and built without any
# (BPFSCOPE_NO_RUNTIMES, in build/bench/noruntimes): instructions
# processed, and the verification time, median of 3 loads.
verifier_runtimes() {
	local without=$ROOT/build/bench/noruntimes t bin run
	make -s -C "$ROOT" OUTPUT=build/bench/noruntimes BPF_EXTRA_CFLAGS=-DBPFSCOPE_NO_RUNTIMES \
		$(printf 'build/bench/noruntimes/bin/%s ' "$@") > /dev/null || return 1
	echo "  the verifier, each program that walks stacks (BPF_PROG_LOAD; median of 3 loads):"
	for t in "$@"; do
		for bin in "$BIN" "$without/bin"; do
			for run in 1 2 3; do
				BPFSCOPE_VERIFIER_STATS=1 timeout -s INT 2 "$bin/$t" 2>&1 |
					awk '{ p = $3; sub(/:$/, "", p) }
					     /verification time/ { us[p] = $(NF - 1) }
					     /processed/ { n[p] = $5 }
					     END { for (p in us) if (n[p] + 0 > 500) print p, n[p], us[p] }'
			done | sort | awk -v t="$t" -v how="$([ "$bin" = "$BIN" ] && echo 'with runtimes' || echo 'without')" '
				{ n[$1] = $2; us[$1, ++k[$1]] = $3 }
				END { for (p in n) { a = us[p, 1]; b = us[p, 2]; c = us[p, 3]
					m = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b))
					printf "    %-10s %-20s %-13s %6d insns %6.1f ms\n", t, p, how, n[p], m / 1000 } }'
		done
	done
}
