#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Python frames on every CPython this machine has, as Debian builds them
# (bullseye's 3.9, bookworm's 3.11, trixie's 3.13, forky's 3.14: the
# interpreter in a non-PIE executable, optimized and stripped) and as built
# from source (pyenv's 3.8 to 3.13: shared, --enable-shared, the
# interpreter in libpython3.X.so; one stripped), run on the host and in a
# PID namespace of their own, as containers run them: eight threads, each in
# a function of its own calling the same chain (tests/python/lanes.py),
# each thread's samples carrying its own.

load helpers

PYENV=${PYENV_ROOT:-/root/.pyenv}/versions
LANES=$ROOT/tests/python/lanes.py

setup_file() {
	for v in 3.9 3.13 3.14; do
		"$ROOT/tests/python/fetch" "$v" "$BUILD/cache/python/$v" > /dev/null || return 1
	done
}

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T
}

teardown() {
	stop_bg ${TPID:-}
	stop_lanes
	assert_nothing_loaded profile
}

# stop_lanes: ends the workload start_lanes started. unshare blocks SIGTERM
# while it waits for its child: killed, it kills the child (--kill-child),
# which as pid 1 of its namespace would ignore SIGTERM too.
stop_lanes() {
	[ -n "${DPID:-}" ] || return 0
	kill -KILL "$DPID" 2> /dev/null || true
	wait "$DPID" 2> /dev/null || true
	DPID= WPID=
}

# pyenv_python MINOR: pyenv's CPython 3.MINOR, built from source with
# --enable-shared; fails if this machine has none.
pyenv_python() {
	local py
	py=$(ls -d "$PYENV"/3."$1".*/bin/python3."$1" 2> /dev/null | sort -V | tail -n 1)
	[ -x "$py" ] || fail "no CPython 3.$1 built from source in $PYENV (pyenv's)"
	echo "$py"
}

# start_lanes NS ROOT PYTHON: tests/python/lanes.py under PYTHON, in a PID
# namespace of its own if NS is "ns", chrooted into ROOT if not empty; sets
# WPID (its pid as the host sees it), LANE_TID[I] (each lane's thread id
# where it runs) and LANE_OF[TID] (the lane of host thread TID).
start_lanes() {
	local ns=$1 root=$2 py=$3 script=$LANES tid i nstid
	shift 3
	if [ -n "$root" ]; then
		cp "$LANES" "$root/tmp/lanes.py"
		script=/tmp/lanes.py
	fi
	: > "$T/work"
	if [ "$ns" = ns ]; then
		unshare -p -f --kill-child ${root:+chroot "$root"} "$py" "$script" > "$T/work" &
	else
		${root:+chroot "$root"} "$py" "$script" > "$T/work" &
	fi
	DPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 60
	# The interpreter: the process under unshare and chroot, or the one started.
	WPID=$DPID
	if [ "$ns" = ns ]; then
		WPID=$(pgrep -P "$DPID" | head -n 1)
		[ -n "$WPID" ] || fail "no process under unshare"
		grep -q '^pid 1$' "$T/work" || fail "not pid 1 of its namespace: $(cat "$T/work")"
	fi
	LANE_TID=()
	while read -r _ i tid; do
		LANE_TID[i]=$tid
	done < <(grep '^lane ' "$T/work")
	[ "${#LANE_TID[@]}" -eq 8 ] || fail "lanes: $(cat "$T/work")"
	# Each lane's thread as the host sees it.
	declare -gA LANE_OF
	LANE_OF=()
	for tid in $(ls "/proc/$WPID/task"); do
		nstid=$(ns_tid "$tid")
		for i in "${!LANE_TID[@]}"; do
			[ "${LANE_TID[i]}" = "$nstid" ] && LANE_OF[$tid]=$i
		done
	done
	[ "${#LANE_OF[@]}" -eq 8 ] || fail "found ${#LANE_OF[@]} of the 8 lanes' threads"
}

# ns_tid TID: host thread TID's id in its own PID namespace (NSpid's last).
ns_tid() {
	awk '/^NSpid:/ { print $NF }' "/proc/$WPID/task/$1/status"
}

# lanes_ok JSON: each of the eight threads' samples carry its own lane and
# the whole chain under it: 90% of them at least, and none another's lane.
lanes_ok() {
	local tid i bad=0
	jq -r 'select(.frames | any(test("^reblochon "))) | [.pid, .samples, (.frames | join(";"))] | @tsv' \
		"$1" > "$T/lanes.tsv"
	for tid in "${!LANE_OF[@]}"; do
		i=${LANE_OF[$tid]}
		awk -F'\t' -v tid="$tid" -v i="$i" '
			$1 == tid {
				all += $2
				if ($3 ~ ("(^|;)lane" i " \\(lanes\\.py:[0-9]+\\);(.*;)?brie \\(lanes\\.py:[0-9]+\\);(.*;)?camembert \\(lanes\\.py:[0-9]+\\);(.*;)?reblochon \\(lanes\\.py:[0-9]+\\)(;|$)"))
					whole += $2
				s = $3
				while (match(s, /(^|;)lane[0-7] \(/)) {
					if (substr(s, RSTART + RLENGTH - 3, 1) != i)
						other += $2
					s = substr(s, RSTART + RLENGTH)
				}
			}
			END { printf "lane %d (tid %d): %d of %d samples its chain, %d another lane\n",
				i, tid, whole, all, other
			      exit !(all >= 10 && whole * 100 >= all * 90 && !other) }' "$T/lanes.tsv" ||
			bad=1
	done
	[ "$bad" = 0 ] || fail "a thread's samples do not carry its own lane: $(head -c 2000 "$T/lanes.tsv")"
}

# profile_lanes NAME: profiles the lanes (start_lanes) until each thread
# has had 300 ms of CPU more, and checks each thread's chain; -v says the
# interpreter was recognised as CPython NAME.
profile_lanes() {
	local tid
	local -A from
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 499 --json
	# From the banner on, for all the threads at once (they share the GIL).
	for tid in "${!LANE_OF[@]}"; do
		from[$tid]=$(cpu_ms "$WPID/task/$tid")
	done
	for tid in "${!LANE_OF[@]}"; do
		wait_cpu "$WPID/task/$tid" $(( from[$tid] + 150 ))
	done
	tool_stop
	grep -q ": CPython $1: Python frames in place of its interpreter loop" "$T/err" ||
		fail "CPython $1 not recognised: $(grep -i cpython "$T/err")"
	lanes_ok "$T/json"
	stop_lanes
}

@test "pythons: CPython 3.8 to 3.13 built from source (pyenv's, shared), each thread its own chain, on the host and in a PID namespace" {
	require_bpf
	for minor in 8 9 10 11 12 13; do
		py=$(pyenv_python "$minor")
		for ns in host ns; do
			echo "# 3.$minor, $ns"
			start_lanes "$ns" "" "$py"
			profile_lanes "3.$minor"
		done
	done
}

@test "pythons: Debian's CPython 3.9, 3.11, 3.13 and 3.14 (optimized, stripped, the interpreter in the executable), each thread its own chain, in a PID namespace too" {
	require_bpf
	for v in 3.9 3.11 3.13 3.14; do
		root=
		[ "$v" = 3.11 ] || root=$BUILD/cache/python/$v
		for ns in host ns; do
			echo "# Debian $v, $ns"
			start_lanes "$ns" "$root" "/usr/bin/python$v"
			profile_lanes "$v"
		done
	done
}

@test "pythons: a libpython stripped of its symbol table is read by its dynamic symbols, its version from its code" {
	require_bpf
	# pyenv's 3.10 keeps its version only as the tail of its install prefix's
	# string: found where Py_GetVersion() formats sys.version from.
	py=$(pyenv_python 10)
	mkdir "$T/lib"
	lib=$(ldd "$py" | awk '/libpython3\.10/ { print $3 }')
	[ -n "$lib" ] || fail "$py does not link libpython3.10: $(ldd "$py")"
	strip --strip-all -o "$T/lib/$(basename "$lib")" "$lib"
	run readelf -SW "$T/lib/$(basename "$lib")"
	refute_output --partial ".symtab"
	export LD_LIBRARY_PATH=$T/lib
	start_lanes ns "" "$py"
	unset LD_LIBRARY_PATH
	grep -qF "$T/lib/$(basename "$lib")" "/proc/$WPID/maps"
	profile_lanes 3.10
}

@test "pythons: a CPython whose version is not known (3.7) is said once by name, its loop frames native" {
	require_bpf
	py=$(pyenv_python 7)
	"$py" -c 'while True: pass' &
	DPID=$!
	WPID=$DPID
	wait_cpu "$WPID" 100
	run timeout 60 "$BIN/profile" -p "$WPID" -F 99 -f 1
	assert_success
	[ "$(grep -c 'CPython 3.7, whose structures are not known here' <<< "$output")" -eq 1 ]
	# No Python frame, nothing misnamed: the loop stays as the native code it is.
	refute_output --partial '(<string>:'
	assert_output --partial '_PyEval_EvalFrameDefault'
}
