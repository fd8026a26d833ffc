# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Shared bats setup: assertions, paths, the BPF requirement and leak checks.

# Their files, sourced here: their load.bash forks a dirname for each, in
# every test (bats sources this file for each), 15 processes a test.
for f in /usr/lib/bats/bats-support/src/{output,error,lang}.bash /usr/lib/bats/bats-assert/src/*.bash; do
	source "$f"
done
unset f

ROOT=${BATS_TEST_DIRNAME%/*}
# What make built: build/, or another OUTPUT (make check SANITIZE=1 builds in build/san).
BUILD=${BPFSCOPE_BUILD:-$ROOT/build}
BIN=$BUILD/bin
WL=$BUILD/tests

# Tests that load BPF need root and a kernel with BTF. Locally they skip
# without; under REQUIRE_BPF=1 (CI) that is a failure, so CI cannot pass by
# skipping.
require_bpf() {
	local why=""
	[ "$(id -u)" = 0 ] || why="needs root"
	[ -z "$why" ] && [ ! -e /sys/kernel/btf/vmlinux ] && why="kernel has no BTF"
	[ -z "$why" ] && return 0
	if [ -n "${REQUIRE_BPF:-}" ]; then
		fail "REQUIRE_BPF=1 but this test cannot load BPF: $why"
	fi
	skip "$why"
}

# Fails if any BPF program whose name starts with "TOOL_" is still loaded,
# for each TOOL given. The kernel frees a closed program after an RCU grace
# period, so allow 3 s. In a teardown, call it last: bats 1.8 fails a test
# for its teardown's final status only, and ignores a failure before it.
assert_nothing_loaded() {
	local left re k
	re="^($(IFS='|'; echo "$*"))_"
	for ((k = 0; k < 30; k++)); do
		# Names only: bpftool reads every program's BTF, a tenth of a
		# second of CPU a call, in every test's teardown.
		left=$("$WL/bpfprogs" | grep -E "$re" || true)
		[ -z "$left" ] && return 0
		sleep 0.1
	done
	fail "programs of $* still loaded after exit: $left"
}

# Waits up to $3 seconds (default 10) until file $1 has a line matching $2.
wait_for_line() {
	local file=$1 pattern=$2 limit=$(( ${3:-10} * 10 ))
	for ((i = 0; i < limit; i++)); do
		grep -qE "$pattern" "$file" 2>/dev/null && return 0
		sleep 0.1
	done
	fail "timed out waiting for '$pattern' in $file: $(cat "$file" 2>/dev/null)"
}

# Waits up to $2 seconds until one of files $3... has a line matching $1:
# a tool says "Tracing" on stdout or on stderr, as its output format has it.
# Whoever starts the tool empties those files first (": > FILE"), not by the
# background child's redirection alone: a test that runs a tool twice into
# one file would otherwise find the first run's line before the child got
# to truncate it (often, on a loaded machine) and go on before it attached.
wait_for_any() {
	local pattern=$1 limit=$(( $2 * 10 ))
	shift 2
	for ((i = 0; i < limit; i++)); do
		grep -qsE "$pattern" "$@" && return 0
		sleep 0.1
	done
	fail "timed out waiting for '$pattern' in $*: $(cat "$@" 2>/dev/null)"
}

# tool_start OUT ERR TOOL ARGS...: TOOL ARGS in the background, its standard
# output to OUT and error to ERR (emptied first), until tool_stop; once it
# has said it traces ("Tracing", "Sampling" or "Serving", on either), with
# no duration of its own: a tool whose start takes seconds on a loaded
# machine must not stop before what it is to trace is done. Sets TPID.
tool_start() {
	local out=$1 err=$2
	shift 2
	: > "$out"
	: > "$err"
	"$@" > "$out" 2> "$err" &
	TPID=$!
	wait_for_any '^(Tracing|Sampling|Serving)' 120 "$out" "$err"
}

# tool_stop: stops the tool tool_start started as Ctrl-C does, and waits
# for its report; fails if the tool failed.
tool_stop() {
	local pid=$TPID
	TPID=
	kill -INT "$pid" || fail "the tool (pid $pid) was gone before it was stopped"
	wait "$pid" || fail "the tool (pid $pid) failed: exit $?"
}

# Sum of the count column of every bcc-style histogram row in a file or stdin.
# settled FILE: waits until a tool's -v output in FILE has said nothing of
# a new binary for half a second (20 s at most). A tool reads the
# call-frame information of each binary it meets in a stack: system-wide,
# at its start, the machine's biggest too (CI's emulators beside the suite,
# half a second for qemu's), and what starts and ends meanwhile is walked
# by frame pointers (docs/known-issues.md). Tests of short-lived processes
# start them once that is done.
settled() {
	local n=-1 now
	for ((i = 0; i < 200; i++)); do
		if [ $((i % 5)) = 0 ]; then
			now=$(grep -cE ': [0-9]+ unwind rows for|: no call-frame information|: its unwind rows do not fit|: its call-frame information is too costly' "$1" || true)
			[ "$now" = "$n" ] && return 0
			n=$now
		fi
		sleep 0.1
	done
	fail "$1: the tool still reads new binaries after 20 s"
}

# CPU time process $1 has had, in ms (its utime and stime): what a
# profiler can have sampled, on a machine that also runs other things.
cpu_ms() {
	local stat f
	# Without a process of its own: wait_cpu asks ten times a second, on
	# the CPUs the workload it waits for needs.
	read -r stat 2> /dev/null < "/proc/$1/stat" || return 1
	read -ra f <<< "${stat##*) }"
	: "${CLK_TCK:=$(getconf CLK_TCK)}"
	echo $(( (f[11] + f[12]) * 1000 / CLK_TCK ))
}

# wait_cpu PID MS: waits until process PID has had MS ms of CPU time in
# all (cpu_ms): what a profiler had the chance to sample, however slowly a
# loaded machine runs it. Two minutes at most.
wait_cpu() {
	local now
	for ((i = 0; i < 1200; i++)); do
		now=$(cpu_ms "$1") || fail "pid $1 is gone before it had $2 ms of CPU"
		[ "$now" -ge "$2" ] && return 0
		sleep 0.1
	done
	fail "pid $1 had $now ms of CPU in two minutes, not $2"
}

# exec_after MS: once tests/workloads/hostile, started in exec mode as
# $WPID, has had MS ms of CPU more, tells it to exec, and waits until what
# it became has had MS ms: each image sampled, however slow the machine.
exec_after() {
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + $1 ))
	kill -USR1 "$WPID"
	for ((i = 0; i < 300; i++)); do
		[ "$(cat "/proc/$WPID/comm")" != hostile ] && break
		sleep 0.1
	done
	[ "$(cat "/proc/$WPID/comm")" != hostile ] || fail "hostile did not exec in 30 s"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + $1 ))
}

hist_total() {
	awk '/ -> .* : [0-9]+ +\|/ { n += $5 } END { print n + 0 }' "$@"
}

# Off-CPU periods an off-CPU tool dropped, by its warning in file $1, because
# the kernel never reported the thread's return to a CPU (docs/known-issues.md).
# Tests allow for exactly those, so a loss is never silent.
unseen_returns() {
	awk '/dropped: the kernel did not report/ { n += $2 } END { print n + 0 }' "$1"
}

# sleeper_counted COUNT BLOCKED SHORT [PREEMPTED]: the waits counted for
# runq_contend's sleeper thread (COUNT) are each of its sleeps that took it
# off its CPU (BLOCKED, 100 but when a loaded machine held it off its CPU
# between arming the timer and sleeping for longer than the sleep), plus its
# first wakeup and the times a spinner preempted it (PREEMPTED, by its own
# count: a loaded machine makes more) and a few more, less SHORT, the waits the tool said it dropped or
# left untimed. The first wakeup may go untimed on a loaded machine, but
# only if the tool says so (task storage for a new thread could not be had);
# on the development VM's kernel a wait now and then ends in a switch it
# does not trace (docs/known-issues.md), which the tool tells by the
# thread's switch count and says, as it does a wait whose wakeup and switch
# onto a CPU both went untraced (2 runs in 25 of runqlat.bats beside four
# emulated guests, and prometheus.bats's once, in CI on 55270a9, before
# runqlat told them). One more may go untold there: a wakeup not traced
# before a switch in that was, which runqlat cannot tell from a sleeping
# task run again with no wakeup at all (6.12's delayed dequeue does that).
# Debian's kernels lose none (make check-vm's runqlat switches cell).
sleeper_counted() {
	local n=$1 blocked=$2 short=$3 preempted=${4:-0}
	[ "$blocked" -ge 90 ] || fail "the sleeper blocked in $blocked of its 100 sleeps"
	[ "$n" -ge $((blocked - short)) ] && [ "$n" -le $((105 + preempted)) ] ||
		fail "sleeper count $n, expected $((1 + blocked))..$((105 + preempted)) less $short the tool said it dropped, and one"
}

# make_cgroup NAME: makes a cgroup v2 group for the test, its path in $CG.
# The suite's teardown calls remove_cgroup once the test's processes are
# killed, so that a test failing midway leaves no group behind.
make_cgroup() {
	local mnt
	mnt=$(awk '$3 == "cgroup2" { print $2; exit }' /proc/mounts)
	[ -n "$mnt" ] || fail "no cgroup v2 mount"
	CG=$mnt/bpfscope-$1-$$
	mkdir "$CG"
}

# remove_cgroup: removes the group make_cgroup made, if any. A killed
# process leaves its group a moment after its parent has reaped it.
remove_cgroup() {
	local k
	[ -n "${CG:-}" ] || return 0
	for ((k = 0; k < 30; k++)); do
		rmdir "$CG" 2>/dev/null && break
		[ -d "$CG" ] || break
		sleep 0.1
	done
	[ ! -d "$CG" ] || echo "# cgroup $CG still has processes: $(tr '\n' ' ' < "$CG/cgroup.procs")" >&3
	CG=
}

# pause_background: a test that needs this machine's CPU idle a while (the
# idle task to sample) freezes what runs beside the suite at idle priority
# and would take all that time: CI's kernel matrix guests, whose cgroup
# .ci/run names in BPFSCOPE_BACKGROUND_CGROUP (unset elsewhere: nothing to
# do). The test's teardown calls resume_background.
pause_background() {
	local cg=${BPFSCOPE_BACKGROUND_CGROUP:-} k
	[ -n "$cg" ] && [ -w "$cg/cgroup.freeze" ] || return 0
	echo 1 > "$cg/cgroup.freeze"
	PAUSED_CG=$cg
	# A task in the kernel freezes once it returns to user space.
	for ((k = 0; k < 50; k++)); do
		grep -qx 'frozen 1' "$cg/cgroup.events" && return 0
		sleep 0.1
	done
	echo "# $cg not all frozen after 5 s" >&3
}

resume_background() {
	[ -n "${PAUSED_CG:-}" ] || return 0
	echo 0 > "$PAUSED_CG/cgroup.freeze"
	PAUSED_CG=
}

# Kills a background process group member if still there.
stop_bg() {
	local pid
	for pid in "$@"; do
		kill "$pid" 2>/dev/null || true
		# One just started may still be the shell's fork, before its exec,
		# where SIGTERM runs bats' trap instead of ending it: it then goes
		# on to run (and one run until stopped, forever). SIGKILL after 5 s.
		alive "$pid" 50 && kill -KILL "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null || true
	done
}

# alive PID TENTHS: is child PID still running (not a zombie) after up to
# TENTHS tenths of a second of waiting for it to end?
alive() {
	local stat i
	for ((i = 0; i < $2; i++)); do
		read -r stat 2> /dev/null < "/proc/$1/stat" || return 1
		stat=${stat##*) }
		[ "${stat%% *}" != Z ] || return 1
		sleep 0.1
	done
	return 0
}

# Builds tests/go/gowork.go into $BUILD/tests/go with Debian's Go (1.19) and
# trixie's 1.24 (fetched by make deps, or here), unless built; exports
# GOVERS, the versions built ("1.19 1.24 ").
go_workloads() {
	local new
	new=$("$ROOT/tests/go/fetch" 1.24 "$BUILD/cache/go") ||
		fail "cannot fetch Go 1.24 from Debian trixie"
	GOVERS=$(CGO=1 "$ROOT/tests/go/build" "$BUILD/tests/go" "$(go env GOROOT)" "$new" | tr '\n' ' ')
	export GOVERS
}

# Runs a tool without privileges (as nobody when root), so that it stops at
# its privilege check: what it says before, such as warnings about options
# that do nothing together, is tested without loading BPF.
unprivileged() {
	if [ "$(id -u)" = 0 ]; then
		setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$@"
	else
		"$@"
	fi
}

# Built with the sanitizers (make check SANITIZE=1), an ASan, UBSan or LSan
# finding exits 99: a test expecting a runtime failure (exit 1) must not
# pass on a sanitizer's abort. Options already given are kept, and LSan
# gets the suppressions make check gives it when bats runs alone.
sanitizer_option() {
	case ":${!1:-}:" in
	*":$2="*) ;;
	*) export "$1=${!1:+${!1}:}$2=$3" ;;
	esac
}
sanitizer_option ASAN_OPTIONS exitcode 99
sanitizer_option UBSAN_OPTIONS exitcode 99
sanitizer_option LSAN_OPTIONS exitcode 99
sanitizer_option LSAN_OPTIONS suppressions "$ROOT/tests/lsan.supp"

# chain_share JSON TID VALUE CHAIN MIN: of thread TID's VALUE ("samples",
# "total_us") in JSON, the share whose frames hold CHAIN (";"-joined, in
# order, contiguous); fails under MIN percent, or with less than 100.
chain_share() {
	jq -r --argjson tid "$2" --arg v "$3" 'select(.pid == $tid) | [.[$v], (.frames | join(";"))] | @tsv' "$1" |
		awk -F'\t' -v chain="$4" -v min="$5" '{ all += $1; if (index($2, chain)) whole += $1 }
			END { printf "%d of %d the chain\n", whole, all
			      exit !(all >= 100 && whole * 100 >= all * min) }'
}

# notes_lost PID: "FULL RATE", the notes tool PID's BPF side could not
# send so far (its ring full; execs past the rate), as the tool says them
# at exit: from its map (bpftool), while it runs or is stopped.
notes_lost() {
	local id
	for id in $(sed -n 's/^map_id:[[:space:]]*//p' /proc/"$1"/fdinfo/* 2> /dev/null | sort -un); do
		[ "$(bpftool -j map show id "$id" | jq -r .name)" = notes_lost ] || continue
		bpftool -j map dump id "$id" |
			jq -r 'map(.formatted) | sort_by(.key) | map([.values[].value] | add | tostring) | join(" ")'
		return 0
	done
	return 1
}

# wait_notes_lost PID FULL RATE: waits (5 minutes at most) until tool PID
# has counted FULL notes lost to its full ring and RATE execs past the
# rate, at least (notes_lost): what the execs a test runs add up to,
# however fast the machine runs them.
wait_notes_lost() {
	local full=0 rate=0 i
	for ((i = 0; i < 3000; i++)); do
		read -r full rate < <(notes_lost "$1") || fail "pid $1 has no notes_lost map"
		[ "$full" -ge "$2" ] && [ "$rate" -ge "$3" ] && return 0
		sleep 0.1
	done
	fail "pid $1 counted $full notes lost to a full ring and $rate execs past the rate in 5 minutes, not $2 and $3"
}

# wait_switches TASK N: waits until task TASK (PID/task/TID) has left its CPU N times more.
wait_switches() {
	local from now
	from=$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status")
	for ((i = 0; i < 1200; i++)); do
		now=$(awk '/^voluntary_ctxt_switches:/ { print $2 }' "/proc/$1/status") ||
			fail "$1 is gone"
		[ "$now" -ge $((from + $2)) ] && return 0
		sleep 0.1
	done
	fail "$1 left its CPU $((now - from)) times in two minutes, not $2"
}
