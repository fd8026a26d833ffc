# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What every check script under tests/vm/checks/ may call: POSIX sh, for
# busybox in a test VM and for the host's /bin/sh alike.

# result TOOL METHOD pass|fail|n/a DETAIL: one cell of the matrix. n/a
# means the kernel lacks the method and the tool said so; the harness
# decides whether that is acceptable on the kernel at hand.
result() {
	printf 'RESULT %s %s %s %s\n' "$1" "$2" "$3" "$(printf '%s' "$4" | tr '\n\t' '  ' | cut -c1-600)"
}

# vm_wait FILES PATTERN [PID]: up to 60 s for a line matching PATTERN in one
# of FILES (space-separated paths); gives up early once process PID has
# exited. Long: a guest beside the suite may get no CPU for seconds.
vm_wait() {
	_i=0
	while [ $_i -lt 600 ]; do
		grep -qs -- "$2" $1 && return 0
		[ -n "${3:-}" ] && ! kill -0 "$3" 2> /dev/null && return 1
		sleep 0.1
		_i=$((_i + 1))
	done
	return 1
}

# vm_samples FILE REGEX: the counts of FILE's folded stacks that match REGEX
# (awk's). A guest the host starves (the matrix runs beside the suite, at
# idle priority) takes one sample per slice of CPU it gets, not one per
# 10 ms of its clock: a check that needs so many samples to judge profiles
# again until it has them (19 of a signal handler's in 3 s, all whole).
vm_samples() {
	awk -v re="$2" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"
}

# vm_offchain FOLDED SELECT CHAIN: what a failed chain check saw instead:
# the two commonest folded stacks matching SELECT but not CHAIN (regexes),
# each its count and its last 240 characters (the leaf end, where walks
# differ).
vm_offchain() {
	awk -v s="$2" -v c="$3" '$0 ~ s && $0 !~ c { n[$0] += $NF }
		END { for (i = 0; i < 2; i++) {
			best = 0
			for (k in n) if (n[k] > best) { best = n[k]; top = k }
			if (!best) break
			printf "off the chain (%d): ...%s ", best, substr(top, length(top) - 239)
			delete n[top] } }' "$1"
}

# vm_settled ERR: waits until a stack tool's -v output in ERR has named no
# new binary's unwind rows for half a second (20 s at most). System-wide, a
# tool reads every running binary's call-frame information at its start,
# in the thread that also reads new processes' maps at their exec: on a
# host running the matrix's guests, qemu's 229,000 rows take about half a
# second, and processes that start and end meanwhile are not read
# (docs/known-issues.md). Checks of short-lived processes start them once it is done.
vm_settled() {
	_n=-1 _i=0
	while [ $_i -lt 40 ]; do
		_now=$(grep -cE ': [0-9]+ unwind rows for|: no call-frame information|: its unwind rows do not fit|: its call-frame information is too costly' "$1")
		[ "$_now" = "$_n" ] && return 0
		_n=$_now
		sleep 0.5
		_i=$((_i + 1))
	done
}

# vm_attach OUT ERR TOOL [ARGS...]: starts $BIN/TOOL ARGS in the background
# (vm_tpid), output to OUT and ERR, and returns once it says "Tracing" (on
# either stream), and on 6.1 and 5.10 once a second has passed: a 6.1 guest
# missed what came just after attaching, and 5.10's kprobes are as fragile
# (docs/known-issues.md); 6.12, arm64 and this host have never shown it,
# and the pause cost their runs half a minute each. If it never says so,
# returns 1 with vm_rc its exit status (99 if it exited 0 without tracing).
vm_attach() {
	_out=$1 _err=$2 _tool=$3
	shift 3
	# Emptied here, not by the child's redirection: a check that runs a tool
	# twice into one file would otherwise find the first run's "Tracing"
	# before the second's shell got to truncate it (on a loaded machine,
	# often), and start its workload before the tool attached.
	: > "$_out"
	: > "$_err"
	"$BIN/$_tool" "$@" > "$_out" 2> "$_err" &
	vm_tpid=$!
	if ! vm_wait "$_out $_err" Tracing $vm_tpid; then
		kill $vm_tpid 2> /dev/null
		wait $vm_tpid
		vm_rc=$?
		[ $vm_rc != 0 ] || vm_rc=99
		return 1
	fi
	case $(uname -r) in
	6.1.* | 5.10.*) sleep 1 ;;
	esac
}

# vm_held PID OUT ERR TOOL [ARGS...]: $BIN/TOOL ARGS, output to OUT and
# ERR, while PID, a workload, is held (SIGSTOP) until the tool says it
# samples or traces: an emulated guest's one host thread then spends the
# tool's load (seconds of verifying and reading tables) on it alone, not
# also on a workload spinning beside it. Waits for the tool; its exit
# status in vm_rc.
vm_held() {
	_w=$1 _o=$2 _e=$3
	shift 3
	kill -STOP "$_w"
	: > "$_o"
	: > "$_e"
	"$BIN/$@" > "$_o" 2> "$_e" &
	_t=$!
	vm_wait "$_o $_e" 'Sampling\|Tracing' $_t
	kill -CONT "$_w"
	wait $_t
	vm_rc=$?
}

# vm_held_2s PID NAME TOOL [ARGS...]: TOOL ARGS -p PID for 2 s with
# vm_held, output in $SCRATCH/NAME.out and .err; vm_rc 98 if PID is gone.
vm_held_2s() {
	_w=$1 _n=$2
	shift 2
	vm_rc=98
	kill -0 $_w 2> /dev/null || return 0
	vm_held $_w "$SCRATCH/$_n.out" "$SCRATCH/$_n.err" "$@" -p $_w 2
}

# vm_warm PID TICKS: waits (60 s at most) until workload PID has run TICKS
# clock ticks (100 a second): a JIT (V8's, the JVM's) optimizes what it
# runs later under emulation than outside it.
vm_warm() {
	_i=0
	while [ $_i -lt 600 ] && [ "$(awk '{ print $14 + $15 }' "/proc/$1/stat" 2> /dev/null || echo 0)" -lt "$2" ]; do
		sleep 0.1
		_i=$((_i + 1))
	done
}

# vm_trace NAME WORKLOAD TOOL [ARGS...]: starts WORKLOAD (plain words; it
# prints "pid PID" and waits for SIGUSR1), then TOOL -p PID ARGS with
# vm_attach; releases the workload, waits for it, and stops the tool with
# SIGINT. Output in $SCRATCH/NAME.work, NAME.out and NAME.err; sets vm_rc,
# the tool's exit status.
vm_trace() {
	_name=$1 _work=$2 _tool=$3
	shift 3
	: > "$SCRATCH/$_name.work"
	$_work > "$SCRATCH/$_name.work" &
	_wpid=$!
	vm_wait "$SCRATCH/$_name.work" '^pid ' $_wpid
	if ! vm_attach "$SCRATCH/$_name.out" "$SCRATCH/$_name.err" $_tool -p $_wpid "$@"; then
		kill $_wpid 2> /dev/null
		wait $_wpid 2> /dev/null
		return
	fi
	kill -USR1 $_wpid
	wait $_wpid
	kill -INT $vm_tpid
	wait $vm_tpid
	vm_rc=$?
}

# vm_blocked US WORKFILE SHORT: is US, a tool's total of the offcpu
# workload's blocked time, what the workload measured itself ("done OFF
# WALL" in WORKFILE), less SHORT (periods the tool said it dropped)? Its own
# clocks, not the nominal sleeps: a guest the host starves (the matrix runs
# beside the suite, at idle priority) sleeps longer. While the host stops
# its emulator the guest's kernel counts the stop as CPU time or as time
# asleep, as the thread was: the tool's total lies between the blocking
# calls' time less the thread's CPU time (OFF, less 10%) and their whole
# time (WALL), the two equal on a quiet machine. The tool's periods are
# within the calls (from the switch out to the switch in, not the system
# call's entry to its return).
vm_blocked() {
	set -- "$1" "$3" $(awk '/^done / { print $2, $3 }' "$2")
	[ $# = 4 ] && [ "$1" -le $(($4 + 2000)) ] && [ "$1" -ge $(($3 * 9 / 10 - $2)) ]
}

# vm_clock_reads FOLDED: microseconds offcpu (tests/workloads/offcpu.c) spent
# off its CPU in its own clock reads (main;ns;...), where a starved guest
# preempts it on its way back from a sleep: inside the windows its clocks
# time, not in the sleeping function's stacks (71 of 298 ms on arm64, 74
# of 279 on 5.10, in two CI runs).
vm_clock_reads() {
	awk '/;main;ns;/ && !/;offcpu_sleeper(;| )/ { n += $NF } END { print n + 0 }' "$1"
}

# vm_leftover TOOL: names of TOOL's BPF programs still loaded, if any, once
# the tool has exited. The kernel frees a closed program after an RCU grace
# period, which a guest the host starves may take seconds to end (a fixed
# 0.5 s was a guess for one host): asked again every 0.1 s until none is
# left, 10 s at most, as assert_nothing_loaded (tests/helpers.bash) does.
# Only a leak costs the whole wait.
vm_leftover() {
	_i=0
	while :; do
		_left=$("$WL/bpfprogs" 2> /dev/null | grep "^$1_" | tr '\n' ' ')
		[ -z "$_left" ] || [ $_i -ge 100 ] && break
		sleep 0.1
		_i=$((_i + 1))
	done
	printf '%s' "$_left"
}

# vm_unseen FILE: how many periods a tool's warnings in FILE say it dropped
# because the kernel did not report a thread's switch onto a CPU.
vm_unseen() {
	awk '/dropped: the kernel did not report/ { n += $2 } END { print n + 0 }' "$1"
}

# vm_switches TOOL ARGS...: TOOL ARGS (system-wide, for about 2 s) beside a
# ping-pong of wakeups must see every switch onto a CPU. Where the kernel itself drops
# some (this development host: docs/known-issues.md) the cell is n/a,
# which only the host may be. The ping-pong runs until the tool is done:
# a million rounds, as it had, could end on a fast host before a slow
# start of the tool, and the cell pass on nothing.
vm_switches() {
	"$WL/pingpong" 1000000000 > /dev/null &
	_pp=$!
	"$BIN/$@" > "$SCRATCH/sw.out" 2> "$SCRATCH/sw.err"
	_rc=$?
	kill $_pp 2> /dev/null
	wait $_pp 2> /dev/null
	_n=$(vm_unseen "$SCRATCH/sw.err")
	if [ $_rc != 0 ]; then
		result "$1" switches fail "rc=$_rc $(tail -n 2 "$SCRATCH/sw.err")"
	elif [ "$_n" = 0 ]; then
		result "$1" switches pass "no switch onto a CPU went unreported"
	else
		result "$1" switches n/a "the kernel reported no switch for $_n: $(grep 'did not report' "$SCRATCH/sw.err")"
	fi
}
