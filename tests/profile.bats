#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# profile on tests/workloads/spin.c: 3/4 of its CPU time in spin_heavy(), 1/4
# in spin_light() (which also enters the kernel).

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	# A workload held (kill -STOP) when the test failed, let go to be killed.
	for p in ${SPID:-} ${WPID:-}; do
		kill -CONT "$p" 2> /dev/null || true
	done
	stop_bg ${SPID:-} ${WPID:-} ${TPID:-} ${TPID2:-}
	remove_cgroup
	resume_background
	assert_nothing_loaded profile offcputime
}

# Starts tests/workloads/spin, after the command given if any (taskset),
# until the test ends; sets SPID.
start_spin() {
	: > "$T/spin"
	"$@" "$WL/spin" 0 > "$T/spin" &
	SPID=$!
	wait_for_line "$T/spin" '^pid '
	SPID=$(awk '{ print $2 }' "$T/spin")
}

sum_matching() {
	awk -v re="$1" '$0 ~ re { n += $NF } END { print n + 0 }' "${2:-$T/out}"
}

# Starts the workload with the given options until the test ends; sets WPID.
start_workload() {
	: > "$T/work.out"
	"$WL/profile_spin" -s 0 "$@" > "$T/work.out" &
	WPID=$!
	wait_for_line "$T/work.out" '^pid '
}

# more_cpu PID MS: waits until process PID has had MS ms of CPU more than now.
more_cpu() {
	wait_cpu "$1" $(( $(cpu_ms "$1") + $2 ))
}

# sampled_cpu PID MS: process PID, held (kill -STOP) while the tool that
# samples it started, runs until it has had MS ms more of CPU and is held
# again; sets SAMPLED_MS, the ms of CPU it had, and SAMPLED_WALL, the ms
# it ran. That is what a tool sampling from before to after could see of
# it, to the ms: the tool's start and report, and a loaded machine's delays
# in between, fall while it is held.
sampled_cpu() {
	local before t0
	before=$(cpu_ms "$1")
	t0=$(date +%s%N)
	kill -CONT "$1"
	wait_cpu "$1" $((before + $2))
	kill -STOP "$1"
	SAMPLED_WALL=$(( ($(date +%s%N) - t0) / 1000000 ))
	sleep 0.05	# the stop reaches a thread running on another CPU
	SAMPLED_MS=$(( $(cpu_ms "$1") - before ))
}

# spread RATE CPU_MS WALL_MS: three standard deviations of the number of
# samples a tool that samples each CPU RATE times a second takes of a
# thread that had CPU_MS ms of CPU in WALL_MS ms. Each tick of its CPU's
# timer finds it on the CPU or not: a draw, p = CPU_MS / WALL_MS, where a
# loaded machine slices the thread among its other work (at a third of a
# CPU, 198 samples +-17); none where it keeps its CPU.
spread() {
	awk -v f="$1" -v c="$2" -v w="$3" 'BEGIN { p = w > 0 ? c / w : 1; if (p > 1) p = 1
		print int(3 * sqrt(f * w / 1000 * p * (1 - p)) + 0.5) }'
}

# Succeeds when $1 of $1 + $2 samples is 3/4 within 3 standard errors of
# a binomial proportion (plus 0.02 for the workload's own switching).
check_share() {
	awk -v a="$1" -v b="$2" 'BEGIN {
		n = a + b; if (n < 20) { print "too few samples: " n; exit 1 }
		tol = 3 * sqrt(0.1875 / n) + 0.02; share = a / n
		printf "share %.3f of %d, 0.75 +- %.3f\n", share, n, tol
		exit !(share >= 0.75 - tol && share <= 0.75 + tol) }'
}

# Sum of the counts of folded lines in file $1 (all lines, or those matching $2).
folded_sum() {
	awk -v re="${2:-.}" '$0 ~ re { n += $NF } END { print n + 0 }' "$1"
}

# Sum of the counts of the multi-line stacks in $1 that contain frame $2
# (all stacks without $2): stacks are separated by blank lines and end
# with their count.
multiline_sum() {
	awk -v want="${2:-}" '
		function flush() { if (count != "" && (want == "" || found)) n += count; found = 0; count = "" }
		/^$/ { flush(); next }
		$1 == want { found = 1 }
		/^ +[0-9]+$/ { count = $1 }
		END { flush(); print n + 0 }' "$1"
}

@test "profile -p PID -F 99 finds both functions 3:1 and samples at 99 Hz of CPU time" {
	require_bpf
	start_workload
	# CPU time while it samples, not around its start (reading the tables)
	# and report, which a loaded machine stretches while the workload
	# spins: the workload is held until the tool samples, and again before
	# it stops.
	kill -STOP "$WPID"
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$WPID" -F 99
	sampled_cpu "$WPID" 2000
	tool_stop || fail "profile failed: $(cat "$T/err")"
	run cat "$T/out"
	assert_line --index 0 "Sampling at 99 Hertz of PID $WPID by user + kernel stack... Hit Ctrl-C to end."
	assert_line --regexp '^ +-  +profile_spin \([0-9]+\)$'
	alpha=$(multiline_sum "$T/out" bpfscope_spin_alpha)
	beta=$(multiline_sum "$T/out" bpfscope_spin_beta)
	total=$(multiline_sum "$T/out")
	# One busy thread: about 99 samples per CPU second it used while
	# sampled, -20% +10%, or the draw's three standard deviations where a
	# loaded machine sliced it.
	expected=$(( SAMPLED_MS * 99 / 1000 ))
	tol=$(spread 99 "$SAMPLED_MS" "$SAMPLED_WALL")
	echo "alpha=$alpha beta=$beta total=$total expected~$expected +-$tol ($SAMPLED_MS ms of CPU in $SAMPLED_WALL)"
	[ "$alpha" -gt 0 ]
	[ "$beta" -gt 0 ]
	[ "$total" -ge $((expected - (tol > expected / 5 ? tol : expected / 5))) ]
	[ "$total" -le $((expected + (tol > expected / 10 ? tol : expected / 10) + 3)) ]
	# 3:1: alpha's share is 0.75 within 3 standard errors (0.09 at 198 samples).
	check_share "$alpha" "$beta"
	# Leaf first: the spinning function, then its callers up to main.
	grep -A3 -m1 '^ *burn$' "$T/out" | grep -qE 'bpfscope_spin_(alpha|beta)'
}

@test "profile: default layout, folded output and --json count the same run alike" {
	require_bpf
	start_spin
	# Each run from its banner until the spinner has had 2 s more of CPU.
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$SPID" -F 99 --json --svg "$T/p.svg" --pprof "$T/p.pb.gz"
	more_cpu "$SPID" 2000
	tool_stop || fail "profile failed: $(cat "$T/err")"
	total=$(jq -s 'map(.samples) | add' "$T/json")
	[ "$total" -ge 10 ]
	# The flame graph's root holds every sample.
	root=$(grep -o '<g class="f" data-v="[0-9]*"><title>all ' "$T/p.svg" | grep -o '[0-9]*')
	[ "$root" -eq "$total" ]
	# No more samples than its CPU time from before the start to after the
	# report holds, at 99 Hz, and 15%.
	c0=$(cpu_ms "$SPID")
	tool_start "$T/text" "$T/err" "$BIN/profile" -p "$SPID" -F 99
	more_cpu "$SPID" 2000
	tool_stop || fail "profile failed: $(cat "$T/err")"
	c1=$(cpu_ms "$SPID")
	grep -qx "    spin_heavy" "$T/text"
	grep -qE "^    -                spin \($SPID\)$" "$T/text"
	text_total=$(awk '/^        [0-9]+$/ { n += $1 } END { print n }' "$T/text")
	echo "text $text_total samples in $((c1 - c0)) ms of CPU"
	[ "$text_total" -ge 10 ]
	[ "$text_total" -le $(( (c1 - c0) * 99 * 115 / 100000 + 3 )) ]
}

@test "profile -K, -U, -d and -a" {
	require_bpf
	start_spin
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$SPID" -F 99 -f -K
	more_cpu "$SPID" 2000
	tool_stop
	# No user function; the kernel's own spin_ functions (_raw_spin_lock...) may be there.
	[ "$(sum_matching ';spin_(heavy|light)(;| )')" -eq 0 ]
	# spin_light's getppid() calls: a sample lands anywhere on their way in
	# and out of the kernel, seldom in the tiny __x64_sys_getppid itself.
	[ "$(sum_matching 'entry_SYSCALL_64|do_syscall_64|__x64_sys_getppid')" -ge 1 ]
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$SPID" -F 99 -f -U
	more_cpu "$SPID" 1000
	tool_stop
	[ "$(sum_matching 'do_syscall_64|entry_SYSCALL')" -eq 0 ]
	[ "$(sum_matching spin_heavy)" -ge 1 ]
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$SPID" -F 99 -f -d -a
	more_cpu "$SPID" 2000
	tool_stop
	run grep -E ';spin_light;-;[A-Za-z_0-9]+_\[k\]' "$T/out"
	assert_success
	# No kernel frames, no delimiter: spin_heavy's own samples have none.
	run grep -E ';spin_heavy [0-9]+$' "$T/out"
	assert_success
	run grep -E ';- [0-9]+$' "$T/out"
	assert_failure
	# Its kernel frames, if any, are an interrupt's taken while it ran (a
	# timer's softirq work, 1 sample in ~200 beside a load), not a call.
	run grep -E ';spin_heavy;-;[^;]*(entry_SYSCALL|do_syscall|_sys_)' "$T/out"
	assert_failure
}

@test "profile -I includes the idle task, which is otherwise left out" {
	require_bpf
	"$BIN/profile" -F 49 -f 1 > "$T/out" 2>/dev/null
	run grep -c '^swapper' "$T/out"
	assert_output 0
	# The idle task gets samples in proportion to idle time, which other
	# work on the machine may take: 49 Hz x the idle seconds /proc/stat
	# counts (USER_HZ ticks), with those it counts as waiting for I/O (the
	# idle task runs then too: a machine writing to its disks has many).
	# On CPU 0: some hypervisors stop an idle
	# vCPU's timers, so that neither this tool nor perf record -C 1 gets a
	# single sample of it (seen on this VM's CPU 1, never on CPU 0), and
	# the whole machine's idle time, half of it on CPU 1, once left 23
	# samples where 24 were asked for. The idle time is read once the tool
	# samples and before it is stopped, not around its start and report
	# (the idle time then, not sampled, once made a slow start fail). At
	# least 2 s, and on until the idle time is worth 10 samples, two
	# minutes at most. CI's kernel matrix guests, at idle priority, run
	# where the machine would idle: held still meanwhile (pause_background).
	# A machine that keeps CPU 0 busy all along leaves the idle task
	# nothing to be sampled in, and -I cannot be checked: this VM packs a
	# lone busy loop onto CPU 0, and its CPU 1, idle, gets no sample from
	# any sampler. make check-stress's load, beside the suite, left idle
	# time worth 3 to 5 samples in two minutes: worth 3 will do. The tool
	# must then have sampled the idle task at least once, and no more than
	# the bounds say.
	pause_background
	hz=$(getconf CLK_TCK)
	tool_start "$T/out" "$T/err" "$BIN/profile" -I -C 0 -F 49 -f
	idle0=$(awk '/^cpu0 / { print $5 + $6; exit }' /proc/stat)
	t0=$SECONDS
	while :; do
		sleep 0.1
		idle1=$(awk '/^cpu0 / { print $5 + $6; exit }' /proc/stat)
		expected=$(( (idle1 - idle0) * 49 / hz ))
		[ $((SECONDS - t0)) -lt 2 ] || [ "$expected" -lt 10 ] || break
		[ $((SECONDS - t0)) -lt 120 ] || break
	done
	tool_stop
	n=$(sum_matching '^swapper/0;')
	echo "idle samples $n, idle time worth $expected in $((SECONDS - t0)) s"
	[ "$expected" -ge 3 ] ||
		fail "CPU 0 was idle for only $expected samples' worth in two minutes: a machine this busy leaves -I nothing to sample"
	[ "$n" -ge 1 ]
	[ $((n * 3)) -ge $((expected * 2 - 10)) ]
	[ "$n" -le $((expected * 3 / 2 + 10)) ]
}

@test "profile -C samples one CPU only" {
	require_bpf
	start_spin taskset -c 1
	"$BIN/profile" -C 0 -F 99 -f 1 > "$T/out" 2>/dev/null
	[ "$(sum_matching '^spin;')" -eq 0 ]
	# All of the pinned spinner's CPU time is on CPU 1: ~99 samples a CPU
	# second it had while sampled (held while the tool starts and stops).
	kill -STOP "$SPID"
	tool_start "$T/out" "$T/err" "$BIN/profile" -C 1 -F 99 -f
	sampled_cpu "$SPID" 2000
	tool_stop
	expected=$(( SAMPLED_MS * 99 / 1000 ))
	echo "samples $(sum_matching '^spin;'), expected ~$expected"
	[ "$(sum_matching '^spin;')" -ge $((expected * 60 / 100)) ]
}

@test "profile --cgroup profiles the tasks of one cgroup v2 group" {
	require_bpf
	make_cgroup profile
	start_spin
	echo "$SPID" > "$CG/cgroup.procs"
	"$BIN/profile" --cgroup "$CG" -F 99 -f 1 > "$T/out" 2>/dev/null
	run awk -F';' '{ print $1 }' "$T/out"
	[ "$(sort -u <<<"$output")" = "spin" ]
	stop_bg "$SPID"
	SPID=
}

@test "profile: errors" {
	run "$BIN/profile" -F 0
	assert_failure 2
	run "$BIN/profile" -U -K
	assert_failure 2
	require_bpf
	run "$BIN/profile" -C 4000 1
	assert_failure 1
	assert_output --partial "profile: CPU 4000 is not online"
	run "$BIN/profile" -p 999999999
	assert_failure 1
	assert_output "profile: pid 999999999: no such process"
	run "$BIN/profile" --cgroup /nonexistent/cg 1
	assert_failure 1
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/profile" 1
	assert_failure 1
	assert_output "profile: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}

@test "profile -f folds root first with the process name, and matches the default output" {
	require_bpf
	start_workload
	# Both sampling the same CPU time: the workload is held while they
	# start and while they stop.
	kill -STOP "$WPID"
	tool_start "$T/text" "$T/err.text" "$BIN/profile" -p "$WPID" -F 99
	TPID2=$TPID
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	sampled_cpu "$WPID" 2000
	tool_stop || fail "profile -f failed: $(cat "$T/err")"
	TPID=$TPID2
	TPID2=
	tool_stop || fail "profile failed: $(cat "$T/err.text")"
	# bcc's banner is not in folded output (it goes to stderr); every line is "a;b;c N".
	grep -q "Sampling at" "$T/err"
	run grep -c "Sampling at" "$T/folded"
	assert_output 0
	run grep -cvE '^[^ ;][^;]*(;[^;]+)* [0-9]+$' "$T/folded"
	assert_output 0
	# clone3 under start_thread where the stack is walked by its CFI (libc has no frame pointers).
	run grep -E '^profile_spin;(clone3;)?start_thread;ratio_thread;bpfscope_spin_alpha;burn [0-9]+$' "$T/folded"
	assert_success
	# Two profilers side by side see the same CPU time within 10 %, or the
	# two draws' spread where a loaded machine sliced the thread (each
	# profiler's timers tick on their own).
	f=$(folded_sum "$T/folded")
	m=$(multiline_sum "$T/text")
	tol=$(( $(spread 99 "$SAMPLED_MS" "$SAMPLED_WALL") * 1415 / 1000 ))
	[ "$tol" -ge $((m / 10)) ] || tol=$((m / 10))
	echo "folded $f, multi-line $m, +-$tol ($SAMPLED_MS ms of CPU in $SAMPLED_WALL)"
	[ "$f" -gt 20 ]
	[ "$f" -ge $((m - tol)) ]
	[ "$f" -le $((m + tol)) ]
	check_share "$(folded_sum "$T/folded" alpha)" "$(folded_sum "$T/folded" beta)"
}

@test "profile does not show the leaf kernel frame twice" {
	require_bpf
	start_workload -k
	run "$BIN/profile" -p "$WPID" -K -f 2
	assert_success
	[ "${#lines[@]}" -gt 0 ]
	# bcc's Python profile adds the sampled IP to a stack that already has it.
	run awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";"); if (n > 2 && f[n] == f[n - 1]) print }' <<<"$output"
	assert_output ""
}

@test "profile -L TID profiles that thread only" {
	require_bpf
	start_workload -t
	wait_for_line "$T/work.out" '^gamma '
	tid=$(awk '/^gamma/ { print $2 }' "$T/work.out")
	run "$BIN/profile" -L "$tid" -f 1
	assert_success
	assert_output --partial "bpfscope_spin_gamma"
	refute_output --partial "bpfscope_spin_alpha"
	run "$BIN/profile" -L "$tid" 1
	assert_line --index 0 "Sampling at 49 Hertz of TID $tid by user + kernel stack for 1 secs."
}

@test "profile reports lost stacks and dropped samples at exit" {
	require_bpf
	start_workload -k -t
	run "$BIN/profile" -p "$WPID" --stack-storage-size 1 -f 2
	assert_success
	assert_output --partial "stack traces lost"
	assert_output --partial "raise --stack-storage-size"
	assert_output --partial "[Missed"
	run "$BIN/profile" -p "$WPID" --hash-storage-size 1 -f 2
	assert_success
	assert_output --regexp "profile: [0-9]+ samples dropped: .*raise --hash-storage-size"
}

@test "profile --cycles falls back to cpu-clock without a PMU" {
	require_bpf
	if [ -e /sys/bus/event_source/devices/cpu ]; then
		run "$BIN/profile" --cycles -f 1
		assert_success
		refute_output --partial "no hardware cycles event"
	else
		run "$BIN/profile" --cycles -f 1
		assert_success
		assert_output --partial "profile: no hardware cycles event on this machine"
	fi
}

@test "profile -c COUNT samples every COUNT ns of cpu-clock" {
	require_bpf
	start_workload
	# 10 ms of CPU time a sample: about 100 per busy second, of the CPU
	# time it had while sampled (held while the tool starts and stops).
	kill -STOP "$WPID"
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$WPID" -c 10000000 -f
	sampled_cpu "$WPID" 2000
	tool_stop || fail "profile failed: $(cat "$T/err")"
	n=$(folded_sum "$T/out")
	expected=$((SAMPLED_MS / 10))
	tol=$(spread 100 "$SAMPLED_MS" "$SAMPLED_WALL")
	echo "samples $n, expected ~$expected +-$tol ($SAMPLED_MS ms of CPU in $SAMPLED_WALL)"
	[ "$n" -ge $((expected - (tol > expected / 4 ? tol : expected / 4))) ]
	[ "$n" -le $((expected + (tol > expected / 10 ? tol : expected / 10) + 3)) ]
}

@test "profile follows CPUs coming online and going away" {
	require_bpf
	[ "$(nproc)" -ge 2 ] || fail "needs 2 CPUs"
	echo 0 > "$T/online"
	start_workload -P 1
	# The workload, on CPU 1 only, has its CPU time counted, not the
	# clock's: a loaded machine gives it a share of CPU 1.
	tool_start "$T/out" "$T/err" env BPFSCOPE_CPUS_ONLINE="$T/online" "$BIN/profile" -v -p "$WPID" -f
	more_cpu "$WPID" 1000
	c0=$(cpu_ms "$WPID")
	echo 0-1 > "$T/online"
	wait_for_line "$T/err" 'sampling CPU 1 with cpu-clock' 60
	more_cpu "$WPID" 1500
	echo 0 > "$T/online"
	wait_for_line "$T/err" 'CPU 1 went offline' 60
	c1=$(cpu_ms "$WPID")
	more_cpu "$WPID" 1000
	tool_stop
	# Only while CPU 1 was sampled: ~55 samples of alpha at 49 Hz in its
	# 1.5 s of CPU, and no more than all of its CPU time from CPU 1's
	# coming to its going gives.
	n=$(folded_sum "$T/out" alpha)
	echo "samples $n, CPU 1 online for $((c1 - c0)) ms of the workload's CPU"
	[ "$n" -ge 20 ]
	[ "$n" -le $(( (c1 - c0) * 49 / 1000 + 10 )) ]
}

@test "profile prints its stacks and exits 0 on SIGINT, SIGTERM and SIGHUP" {
	require_bpf
	start_workload
	for sig in INT TERM HUP; do
		: > "$T/out.$sig"
		"$BIN/profile" -p "$WPID" > "$T/out.$sig" &
		TPID=$!
		wait_for_line "$T/out.$sig" 'Sampling at' 120
		more_cpu "$WPID" 1000
		kill -$sig $TPID
		wait $TPID || fail "exit status $? on SIG$sig"
		TPID=
		grep -q bpfscope_spin_alpha "$T/out.$sig" || fail "no stacks after SIG$sig"
	done
}

@test "profile: bad usage exits 2 with a message" {
	run "$BIN/profile" -U -K
	assert_failure 2
	assert_output --partial "-U and -K exclude each other"
	run "$BIN/profile" -F 99 -c 1000
	assert_failure 2
	assert_output --partial "-F and -c exclude each other"
	run "$BIN/profile" -p 1 -L 1
	assert_failure 2
	run "$BIN/profile" -F 0
	assert_failure 2
	assert_output --partial "invalid frequency '0'"
	run "$BIN/profile" 1 2
	assert_failure 2
	run "$BIN/profile" --stack-storage-size 0
	assert_failure 2
	run "$BIN/profile" --symbol-memory 0
	assert_failure 2
	assert_output --partial "symbol memory"
	run "$BIN/profile" --no-such-option
	assert_failure 2
	assert_output "profile: unrecognized option '--no-such-option'
Try \`profile --help' or \`profile --usage' for more information."
	run "$BIN/profile" --cgroup ''
	assert_failure 2
	assert_output "profile: --cgroup needs a cgroup v2 path, such as system.slice/nginx.service or /sys/fs/cgroup/user.slice; leave --cgroup out for every cgroup
Try \`profile --help' or \`profile --usage' for more information."
}

@test "profile: options that others make moot are said to be ignored" {
	NOROOT="profile: need root (or CAP_BPF and CAP_PERFMON); try sudo"
	run unprivileged "$BIN/profile" -U -d -a
	assert_failure 1
	assert_output "profile: -U shows user stacks only; -d and -a are ignored
$NOROOT"
	run unprivileged "$BIN/profile" -K -d --unwind=dwarf --unwind-memory 8 --symbol-memory 8 --debuginfod
	assert_output "profile: -K shows kernel stacks only; -d, --unwind, --unwind-memory, --symbol-memory and --debuginfod are ignored
$NOROOT"
	run unprivileged "$BIN/profile" --unwind=fp --unwind-memory 64
	assert_output "profile: --unwind=fp keeps no unwind tables; --unwind-memory is ignored
$NOROOT"
	run unprivileged "$BIN/profile" -f --json
	assert_output "profile: -f prints folded lines; --json is ignored
$NOROOT"
	run unprivileged "$BIN/profile" -p 1 -I
	assert_output "profile: -p profiles one process, not the idle task; -I is ignored
$NOROOT"
	run unprivileged "$BIN/profile" -L 1 -I
	assert_line --index 0 "profile: -L profiles one thread, not the idle task; -I is ignored"
	# -A cancels -d, before it or after.
	run unprivileged "$BIN/profile" -d -A
	assert_output "profile: -A leaves out the delimiter; -d is ignored
$NOROOT"
	run unprivileged "$BIN/profile" -A -f -d
	assert_output "profile: -A leaves out the delimiter; -d is ignored
$NOROOT"
	# Together they do something: nothing to say.
	run unprivileged "$BIN/profile" -d -a -I -f --unwind=fp
	assert_output "$NOROOT"
}

@test "profile: help and version exit 0" {
	run "$BIN/profile" --help
	assert_success
	assert_output --partial "EXAMPLES:"
	assert_output --partial "--svg=FILE"
	run "$BIN/profile" -V
	assert_success
	assert_output --regexp '^profile \(bpfscope\) '
}

@test "profile -p, offcputime -p: a process that exits while the tool loads ends it: exit 1, said" {
	require_bpf
	# The tool is stopped at its open of the BPF object (libbpf's -v line),
	# after it found the process there and before it loads; the process
	# is killed and reaped meanwhile, and the tool let go: there is nothing
	# left to trace, and its pid could soon be another's. Stopped, not
	# raced: a load takes a tenth of a second, too short to kill in between
	# by polling its output. (Every tool checks.) Its first -v line comes
	# before it looks for the process (libbpf's reading of the kernel's BTF
	# for the host's check): stopped there, the process was not found at
	# all, 1 run in 5.
	# The coprocess's output is read through a descriptor of our own: bash
	# closes its own, and unsets TOOL, once it sees the coprocess exit,
	# which may be before we read the rest (ci73: "Bad file descriptor").
	for tool in profile offcputime; do
		sleep 60 &
		WPID=$!
		coproc TOOL { exec "$BIN/$tool" -v -p "$WPID" 5 2>&1 > "$T/out"; }
		TPID=$TOOL_PID
		exec {out}<&"${TOOL[0]}"
		: > "$T/err"
		while read -r line <&"$out"; do
			echo "$line" >> "$T/err"
			[[ $line != *"libbpf: loading object"* ]] || break
		done
		kill -STOP "$TPID"
		kill "$WPID"
		wait "$WPID" || true
		WPID=
		kill -CONT "$TPID"
		cat <&"$out" >> "$T/err"
		exec {out}<&-
		rc=0
		wait "$TPID" || rc=$?
		TPID=
		[ "$rc" -eq 1 ] || fail "$tool exited $rc: $(grep -v libbpf "$T/err")"
		[ "$(grep -c "^$tool: pid [0-9]* exited while $tool loaded: nothing of it to trace$" "$T/err")" = 1 ] ||
			fail "$tool said: $(grep -v libbpf "$T/err")"
	done
}

@test "profile: runtime errors exit 1 with what to do" {
	require_bpf
	run "$BIN/profile" -p 999999999
	assert_failure 1
	assert_output "profile: pid 999999999: no such process"
	run "$BIN/profile" -L 999999999
	assert_failure 1
	assert_output "profile: tid 999999999: no such thread"
	run "$BIN/profile" --cgroup /sys/fs/cgroup/no-such-group-$$ 1
	assert_failure 1
	assert_output --partial "not found"
	run "$BIN/profile" -C 4096 1
	assert_failure 1
	assert_output --partial "CPU 4096 is not online"
	max=$(cat /proc/sys/kernel/perf_event_max_sample_rate)
	run "$BIN/profile" -F $((max + 1)) 1
	assert_failure 1
	assert_output --partial "the kernel allows at most $max"
	run "$BIN/profile" --svg /nonexistent/dir/x.svg 1
	assert_failure 1
	assert_output --partial "cannot write /nonexistent/dir/x.svg"
	run env -u DEBUGINFOD_URLS "$BIN/profile" --debuginfod 1
	assert_failure 1
	assert_output "profile: --debuginfod: DEBUGINFOD_URLS is not set: no server to ask"
}

@test "profile --json prints one object per stack with comm, tgid and frames" {
	require_bpf
	start_workload
	"$BIN/profile" -p "$WPID" --json 2 > "$T/json" 2> "$T/err"
	grep -q 'Sampling at' "$T/err"
	run jq -e -s --argjson pid "$WPID" 'length > 0 and all(.[]; .comm == "profile_spin" and .tgid == $pid and .samples > 0 and (.frames | length) > 0)' "$T/json"
	assert_success
	run jq -s '[.[] | select(.frames | index("bpfscope_spin_alpha")) | .samples] | add' "$T/json"
	[ "$output" -gt 0 ]
}
