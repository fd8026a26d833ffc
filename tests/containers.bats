#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Processes in real containers (Debian's podman, runc): an image made from
# Debian's packages (trixie's CPython 3.13, tests/python/fetch), imported,
# nothing pulled; its Python program traced from the host: its Python
# frames, its container named in every output, and -c/--cgroup taking the
# container's id. The kernel matrix's guests have no container runtime:
# these run on the host only.

load helpers

IMAGE=localhost/bpfscope-test-python313
CHEESES=$ROOT/tests/python/cheeses.py

setup_file() {
	local root
	root=$("$ROOT/tests/python/fetch" 3.13 "$BUILD/cache/python/3.13") || return 1
	rm -f "$root"/tmp/perf-*.map
	tar -C "$root" -c . | podman import -q - "$IMAGE" > /dev/null || return 1
}

teardown_file() {
	podman rmi -f "$IMAGE" > /dev/null
}

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T
	NAME=bpfscope-test-$$-$BATS_TEST_NUMBER
	for f in main wensleydale cheddar stilton napping doze; do
		eval "L_$f=$(grep -n "^def $f(" "$CHEESES" | cut -d: -f1)"
	done
}

teardown() {
	stop_bg ${TPID:-}
	podman rm -f -t 0 "$NAME" > /dev/null 2>&1 || true
	assert_nothing_loaded profile offcputime runqlat
}

# run_container: cheeses.py in a container of the image, until stopped;
# sets CID (its id), WPID (its python's pid on the host) and BUSY, NAPPER
# (those threads' ids on the host). The sandbox this runs in may forbid
# raising limits (no CAP_SYS_RESOURCE): the container asks for none higher
# than they are.
run_container() {
	local busy napper tid
	CID=$(podman run -d --runtime runc --network none --name "$NAME" \
		--ulimit nofile=1024:1024 --ulimit nproc=32768:32768 \
		-v "$ROOT/tests/python:/w:ro" "$IMAGE" /usr/bin/python3.13 /w/cheeses.py 0) ||
		fail "podman run failed"
	[[ "$CID" =~ ^[0-9a-f]{64}$ ]] || fail "not a container id: $CID"
	WPID=$(podman inspect -f '{{.State.Pid}}' "$NAME")
	for ((i = 0; i < 300; i++)); do
		podman logs "$NAME" 2> /dev/null | grep -q '^pid ' && break
		sleep 0.1
	done
	podman logs "$NAME" > "$T/work"
	grep -q '^pid 1 ' "$T/work" || fail "not pid 1 of its namespace: $(cat "$T/work")"
	read -r busy napper < <(awk '/^pid / { print $4, $6 }' "$T/work")
	BUSY= NAPPER=
	for tid in $(ls "/proc/$WPID/task"); do
		case $(awk '/^NSpid:/ { print $NF }' "/proc/$WPID/task/$tid/status") in
		"$busy") BUSY=$tid ;;
		"$napper") NAPPER=$tid ;;
		esac
	done
	[ -n "$BUSY" ] && [ -n "$NAPPER" ] || fail "threads not found: $(cat "$T/work")"
}

# naps N: waits until the container's napping thread has slept N times
# more (its naps of 20 ms, by its own count of switches), however slowly.
naps() {
	local f=/proc/$WPID/task/$NAPPER/status n0
	n0=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$f")
	until [ $(( $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$f") - n0 )) -ge "$1" ]; do
		sleep 0.1
	done
}

@test "containers: a CPython in a podman container has its busy thread's Python chain whole, traced from the host" {
	require_bpf
	run_container
	grep -q "libpod-$CID" "/proc/$WPID/cgroup" || fail "not in the container's cgroup: $(cat "/proc/$WPID/cgroup")"
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID/task/$BUSY" $(( $(cpu_ms "$WPID/task/$BUSY") + 1000 ))
	tool_stop
	grep -q 'CPython 3.13: Python frames in place of its interpreter loop' "$T/err" ||
		fail "$(grep -i cpython "$T/err")"
	chain_share "$T/json" "$BUSY" samples \
		"main (cheeses.py:$L_main);wensleydale (cheeses.py:$L_wensleydale);cheddar (cheeses.py:$L_cheddar);stilton (cheeses.py:$L_stilton)" 95
}

@test "containers: offcputime puts the container's sleeping thread under its Python callers" {
	require_bpf
	run_container
	tool_start "$T/json" "$T/err" "$BIN/offcputime" -p "$WPID" --json
	naps 50
	tool_stop
	chain_share "$T/json" "$NAPPER" total_us "napping (cheeses.py:$L_napping);doze (cheeses.py:$L_doze)" 95
}

@test "containers: every output names the container: --containers' root frame, JSON's and pprof's labels" {
	require_bpf
	run_container
	short=${CID:0:12}
	# Folded and SVG: the root with --containers, nothing without.
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --containers --svg "$T/c.svg"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 500 ))
	tool_stop
	run grep -cv "^\[container $short\];python3.13;" "$T/folded"
	assert_output 0
	grep -qF "[container $short]" "$T/c.svg"
	xmllint --noout "$T/c.svg"
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 300 ))
	tool_stop
	run grep -c '^python3.13;' "$T/folded"
	[ "$output" -gt 0 ]
	run grep -c '\[container' "$T/folded"
	assert_output 0
	# JSON: the whole id and the cgroup as fields, not frames.
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json --pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 300 ))
	tool_stop
	jq -e -s --arg id "$CID" 'length > 0 and all(.container == $id and (.cgroup | contains("libpod-" + $id))
		and all(.frames[]; startswith("[container") | not))' "$T/json"
	# pprof: each sample labelled; go tool pprof lists the label's values.
	run go tool pprof -tags "$T/p.pb.gz"
	assert_success
	assert_output --partial "$CID"
	# offcputime's JSON too.
	tool_start "$T/json" "$T/err" "$BIN/offcputime" -p "$WPID" --json
	naps 10
	tool_stop
	jq -e -s --arg id "$CID" 'length > 0 and all(.container == $id)' "$T/json"
}

@test "containers: -c and --cgroup take a container's id, as docker ps shows it" {
	require_bpf
	run_container
	short=${CID:0:12}
	# profile of that container alone: its python, and nothing else.
	tool_start "$T/folded" "$T/err" "$BIN/profile" --cgroup "$short" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 500 ))
	tool_stop
	run grep -c '^python3.13;' "$T/folded"
	[ "$output" -gt 0 ]
	run grep -vc '^python3.13;' "$T/folded"
	assert_output 0
	# runqlat -c by the whole id.
	run timeout 60 "$BIN/runqlat" -c "$CID" 1 1
	assert_success
	assert_output --partial "usecs"
	# An id no container has, and one too short to be an id (a path then).
	run "$BIN/profile" --cgroup 0123456789ab 1
	assert_failure 1
	assert_output "profile: no container's cgroup has id '0123456789ab' (and no cgroup is named so)"
	run "$BIN/runqlat" -c abc 1
	assert_failure 1
	assert_output "runqlat: cgroup 'abc' not found"
}
