#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# make demo (scripts/demo.sh), shortened to two seconds a tool: every
# tool's heading and output, the files it writes, Ctrl-C, and nothing left.

load helpers

TOOLS="runqlat profile offcputime offwaketime biolatency cachestat funclatency readdirlat"

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T GOCACHE=$T/gocache
	DEMO=(env DEMO_SECONDS=2 DEMO_OUT="$T/demo" DEMO_BIN="$BIN" DEMO_WL="$WL" "$ROOT/scripts/demo.sh")
}

teardown() {
	[ -n "${DPID:-}" ] && kill -KILL -- -"$DPID" 2> /dev/null
	# Its loop device is detached, its workloads gone, no program left (one
	# status: bats 1.8 ignores a failure in a teardown but the last).
	run losetup -j "$T/demo/disk.img"
	[ -z "$output" ] || fail "its loop device is still attached: $output" || return 1
	run pgrep -f "$WL/(runq_contend|spin|offcpu|funcs|lsdir)"
	[ "$status" = 1 ] || fail "its workloads still run: $output" || return 1
	assert_nothing_loaded $TOOLS
}

@test "make demo: each tool under a heading that says what it answers, then the files written" {
	require_bpf
	run timeout 600 "${DEMO[@]}"
	echo "$output"
	assert_success
	for t in $TOOLS; do
		assert_line --regexp "^== $t: [a-z].*\? \(.*\) ==$"
	done
	# What each one printed, briefly.
	assert_line --regexp '^ +msecs +: count +distribution$'
	assert_line --regexp '^    spin;.*;(spin_heavy|spin_light)(;.*)? [0-9]+$'
	assert_line --regexp '^    offcpu_sleeper$'
	assert_line --regexp '^    offcpu;.*;offcpu_reader;--;offcpu_waker;.* [0-9]+$'
	assert_line --regexp '^ +usecs +: count +distribution$'
	assert_line --regexp '^ +HITS +MISSES +DIRTIES +HITRATIO'
	assert_line --regexp '^avg = [0-9]+ msecs, total: [0-9]+ msecs, count: 20$'
	assert_line --regexp '^lsdir +[0-9]+ +[0-9]+ .*/proc$'
	assert_line "== Files written =="
	for f in profile.svg offcputime.svg profile.pb.gz; do
		assert_line --regexp "^  $T/demo/$f "
	done
	assert_line --regexp "^  $T/demo/\*\.out +what each tool printed"
	# And nothing it does not list: no stderr files, no workload output.
	run ls "$T/demo"
	assert_output "$(for f in profile.svg offcputime.svg profile.pb.gz $(printf '%s.out ' $TOOLS); do
		echo "$f"; done | sort)"
	xmllint --noout "$T/demo/profile.svg"
	xmllint --noout "$T/demo/offcputime.svg"
	grep -q offcpu_sleeper "$T/demo/offcputime.svg"
	run go tool pprof -top "$T/demo/profile.pb.gz"
	assert_success
	assert_output --partial spin_heavy
}

# slept_once PID: waits until tests/workloads/offcpu (PID), once let go,
# has ended one of its sleeps: seen in nanosleep(), then off its CPU once
# more (the next sleep), or gone (the last one ended); a minute at most.
slept_once() {
	local nr c= now
	case $(uname -m) in
	x86_64) nr=35 ;;
	aarch64) nr=101 ;;
	*) fail "nanosleep's number on $(uname -m)?" ;;
	esac
	for ((i = 0; i < 1200; i++)); do
		now=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "/proc/$1/status" 2> /dev/null) || return 0
		[ -n "$now" ] || return 0
		if [ -z "$c" ]; then
			[ "$(cut -d' ' -f1 "/proc/$1/syscall" 2> /dev/null)" != "$nr" ] || c=$now
		elif [ "$now" -gt "$c" ]; then
			return 0
		fi
		sleep 0.05
	done
	fail "the sleeper (pid $1) ended no sleep in a minute"
}

@test "make demo: Ctrl-C stops it at once, the interrupted tool shows its report, nothing left behind" {
	require_bpf
	# Its own process group, as at a terminal, which sends Ctrl-C to all of
	# it; and SIGINT not ignored, as it is for a script's background job.
	# Four seconds a tool: time to interrupt offcputime before it ends.
	: > "$T/out"
	setsid env --default-signal=INT "${DEMO[@]/#DEMO_SECONDS=2/DEMO_SECONDS=4}" > "$T/out" 2>&1 &
	DPID=$!
	# Once offcputime traces the sleeper, which sleeps 10 x 50 ms once let
	# go, and the sleeper has ended a sleep: the report has it.
	wait_for_line "$T/out" '^== offcputime' 120
	wait_for_line "$T/demo/offcputime.out" 'Tracing' 120
	wait_for_line "$T/demo/work.out" '^pid ' 60
	slept_once "$(awk '/^pid / { print $2 }' "$T/demo/work.out")"
	kill -INT -- -"$DPID"
	# At once: not after the demo's other tools (a minute at most).
	for ((i = 0; i < 600; i++)); do
		kill -0 "$DPID" 2> /dev/null || break
		sleep 0.1
	done
	run wait "$DPID"
	DPID=
	cat "$T/out"
	assert_failure 130
	run grep -c '^== ' "$T/out"
	assert_output 3
	# The interrupted tool's report, under its heading, then the demo stops.
	run sed -n '/^== offcputime/,$p' "$T/out"
	assert_line --regexp '^    offcpu_sleeper$'
	assert_line --index -1 "demo: stopped"
	# Its files: what the tools printed, no stderr or workload files.
	run ls "$T/demo"
	assert_output "offcputime.out
offcputime.svg
profile.out
profile.pb.gz
profile.svg
runqlat.out"
}
