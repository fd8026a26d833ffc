#!/bin/bash
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make demo`: every tool for a few seconds against a small workload of its
# own, each under a heading that says what the tool answers, then the files
# written and how to open them. DEMO_SECONDS (default 4) sets how long each
# tool traces a workload that runs on its own; one that does a fixed work is
# traced until it is done, however slowly a loaded machine runs it. Ctrl-C
# stops the demo, and each tool, cleanly.
set -u
cd "$(dirname "$0")/.."

BIN=${DEMO_BIN:-build/bin}
WL=${DEMO_WL:-build/tests}
OUT=${DEMO_OUT:-build/demo}
S=${DEMO_SECONDS:-4}
# Where a reader should look for each tool's output: no more than this many lines.
LINES_SHOWN=${DEMO_LINES:-14}

if [ "$(id -u)" != 0 ]; then
	echo "demo: tracing needs root; run: sudo make demo" >&2
	exit 1
fi

mkdir -p "$OUT"
rm -f "$OUT"/*.svg "$OUT"/*.pb.gz "$OUT"/*.out "$OUT"/*.err
pids=()
loopdev=
tool=
current=

cleanup() {
	local p
	for p in "${pids[@]}"; do
		kill "$p" 2> /dev/null
	done
	wait 2> /dev/null
	[ -n "$loopdev" ] && losetup -d "$loopdev" 2> /dev/null
	# What the tools said on stderr was shown under their headings.
	rm -f "$OUT/disk.img" "$OUT/cache.dat" "$OUT/work.out" "$OUT"/*.err
}

# The tools catch Ctrl-C themselves, print what they have and exit: the one
# that was tracing shows its report as it would have. The workloads, started
# in the background, ignore Ctrl-C: they are stopped here.
stopped() {
	trap '' INT TERM
	echo
	[ -n "$tool" ] && kill -INT "$tool" 2> /dev/null
	[ -n "$current" ] && show "$current"
	echo "demo: stopped"
	cleanup
	exit 130
}
trap stopped INT TERM

heading() {
	echo
	echo "== $1 =="
}

# bg CMD...: starts a workload in the background, its output in $OUT/work.out.
bg() {
	"$@" > "$OUT/work.out" 2>&1 &
	pids+=($!)
	last=$!
}

# wait_line REGEX FILE...: until one of the FILEs has a line matching REGEX
# (a minute at most: a tool's start takes a loaded machine seconds).
wait_line() {
	local re=$1 i
	shift
	for ((i = 0; i < 600; i++)); do
		grep -qE "$re" "$@" 2> /dev/null && return 0
		sleep 0.1
	done
	return 1
}

# trace NAME TOOL ARGS...: starts TOOL in the background, its output in
# $OUT/NAME.out, and returns once it traces; if it never does, says so and
# ends the demo (its workload would run untraced).
trace() {
	local name=$1
	shift
	"$BIN/$@" > "$OUT/$name.out" 2> "$OUT/$name.err" &
	tool=$!
	current=$name
	# Its banner, or cachestat's header, which is all bcc's prints.
	wait_line 'Tracing|Sampling|HITS' "$OUT/$name.out" "$OUT/$name.err" && return 0
	echo "demo: $name did not start tracing in a minute:" >&2
	cat "$OUT/$name.err" >&2
	kill "$tool" 2> /dev/null
	cleanup
	exit 1
}

# finish: stops the tool as Ctrl-C does, once its workload is done: it
# prints its report and exits.
finish() {
	kill -INT "$tool" 2> /dev/null
}

# show NAME: waits for the tool, then prints (the start of) what it printed:
# the three busiest stacks of profile's folded output, the two of
# offwaketime's that end in the reader.
show() {
	wait "$tool"
	tool=
	current=
	case $1 in
	profile)
		grep '^spin;' "$OUT/$1.out" | sort -t' ' -k2 -nr | head -n 3 | sed 's/^/    /'
		;;
	offwaketime)
		# The reader's blocked stack, "--", then the writer's that woke it.
		grep offcpu_reader "$OUT/$1.out" | sort -t' ' -k2 -nr | head -n 2 | sed 's/^/    /'
		;;
	*)
		grep -v 'Hit Ctrl-C\|Tracing\|Sampling\|^$' "$OUT/$1.out" | head -n "$LINES_SHOWN"
		;;
	esac
	grep -v 'Tracing\|Sampling' "$OUT/$1.err" >&2
}

# gate: lets the gated workload go (it waits for SIGUSR1 after "pid N").
gate() {
	wait_line '^pid ' "$OUT/work.out" && kill -USR1 "$last"
}

heading "runqlat: how long do runnable threads wait for a CPU? (3 spinners and a sleeper share CPU 0)"
bg "$WL/runq_contend" -g -s 3 -n $((S * 80)) -m 10
trace runqlat runqlat -m "$S" 1
gate
show runqlat
kill "$last" 2> /dev/null

heading "profile: where does the CPU time go? (every CPU at 99 Hz while a program spins; its 3 busiest stacks)"
bg "$WL/spin" 0
trace profile profile -F 99 -f --svg "$OUT/profile.svg" --pprof "$OUT/profile.pb.gz" "$S"
show profile
kill "$last" 2> /dev/null

heading "offcputime: where do threads block, and for how long? (a thread sleeping 10 x 50 ms)"
bg "$WL/offcpu" sleep 10 50
trace offcputime offcputime -U --svg "$OUT/offcputime.svg" -p "$last" "$S"
gate
show offcputime

heading "offwaketime: who woke the threads that blocked? (a reader woken by a writer through a pipe)"
bg "$WL/offcpu" pipe 10 50
trace offwaketime offwaketime -U -f -p "$last" "$S"
gate
show offwaketime

heading "biolatency: how long does block I/O take? (500 direct 4 KiB reads of a loop device)"
truncate -s 64M "$OUT/disk.img"
if loopdev=$(losetup -f --show "$OUT/disk.img" 2> /dev/null); then
	trace biolatency biolatency -d "${loopdev#/dev/}"
	"$WL/dio" "$loopdev" read 500 4096 > /dev/null
	finish
	show biolatency
	losetup -d "$loopdev"
	loopdev=
else
	echo "(no loop device to read: modprobe loop)"
fi
rm -f "$OUT/disk.img"

heading "cachestat: how often do reads find their pages in the page cache? (a 64 MiB file read cold, then warm)"
head -c 64M /dev/zero > "$OUT/cache.dat"
# Written back, then dropped from the page cache: the first read is cold.
sync "$OUT/cache.dat"
dd if="$OUT/cache.dat" iflag=nocache count=0 status=none
trace cachestat cachestat 1 "$S"
cat "$OUT/cache.dat" > /dev/null
sleep 1
cat "$OUT/cache.dat" > /dev/null
show cachestat
rm -f "$OUT/cache.dat"

heading "funclatency: how long does a function take? (slow_func, which sleeps 10 ms, called 20 times)"
bg "$WL/funcs"
wait_line '^pid ' "$OUT/work.out"
trace funclatency funclatency -m -p "$last" "$WL/funcs:slow_func"
kill -USR1 "$last"
wait_line '^done' "$OUT/work.out"
finish
show funclatency

# Only lsdir's: on a busy machine (a find over /usr beside a CI run)
# other listings filled the table's 4,096 rows before lsdir's /proc had one.
heading "readdirlat: how long do directory listings take, and of what? (/proc listed 50 times by lsdir)"
trace readdirlat readdirlat -S -c lsdir
"$WL/lsdir" /proc 8192 50 > /dev/null
finish
show readdirlat

cleanup
trap - INT TERM
echo
echo "== Files written =="
echo "  $OUT/profile.svg      CPU flame graph of the whole machine: open it in a browser,"
echo "                            click a frame to zoom, Search to highlight"
echo "  $OUT/offcputime.svg   off-CPU flame graph of the sleeping program, the same way"
echo "  $OUT/profile.pb.gz    pprof profile: go tool pprof -http=: $OUT/profile.pb.gz"
echo "                            (or -top, or load it into Pyroscope or Parca)"
echo "  $OUT/*.out            what each tool printed, whole"
