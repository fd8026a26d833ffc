#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# What other users control, planted as an attacker would: perf maps,
# debug files, MiniDebugInfo, binaries truncated or replaced, process names,
# output paths, thousands of processes. Each run is bounded by a timeout;
# the tool must finish, report, exit as documented and leave nothing loaded.

load helpers

setup_file() {
	# A gigabyte of zeros, xz-compressed to 150 KiB: shared by the bomb tests.
	export BOMB=$BATS_FILE_TMPDIR/bomb.xz
	head -c 1G /dev/zero | xz -0 -T1 > "$BOMB"
	ls /tmp/perf-*.map 2> /dev/null > "$BATS_FILE_TMPDIR/maps.before" || true
}

# A map planted and left behind is read for the next process of that pid,
# in a later test or run: every test removes what it planted. Only the
# maps of the pids this file's tests started count (start() lists them):
# another program on the machine may write maps of its own meanwhile.
teardown_file() {
	ls /tmp/perf-*.map 2> /dev/null > "$BATS_FILE_TMPDIR/maps.after" || true
	touch "$BATS_FILE_TMPDIR/pids"
	run bash -c 'comm -13 "$1" "$2" | grep -Fxf <(sed "s|.*|/tmp/perf-&.map|" "$3")' - \
		"$BATS_FILE_TMPDIR/maps.before" "$BATS_FILE_TMPDIR/maps.after" "$BATS_FILE_TMPDIR/pids"
	assert_output ""
}

setup() {
	T=$BATS_TEST_TMPDIR
	chmod 755 "$T"
	S=$BUILD/tests/unit/symtest
	SW=$BUILD/tests/symwork
	export HOME=$T GOCACHE=$T/gocache
	AS_NOBODY=(setpriv --reuid=65534 --regid=65534 --clear-groups --)
}

# Each test's background processes. unshare (NSPID, the container test's)
# ignores SIGTERM while it waits for its child, the namespace's init, which
# ignores it too: SIGKILL, which --kill-child passes on.
teardown() {
	[ -z "${NSPID:-}" ] || { kill -KILL "$NSPID"; wait "$NSPID"; } 2> /dev/null || true
	stop_bg ${WPID:-} ${TPID:-} ${DPID:-} ${OTHER:-} ${RQ:-} ${BLACKHOLE:-} ${SPID:-} ${SPAWNER:-} ${APID:-}
	rm -f "/tmp/perf-${WPID:-0}.map"
	assert_nothing_loaded profile offcputime offwaketime runqlat readdirlat funclatency
}

# start WORKLOAD-ARGS...: runs tests/workloads/hostile, sets WPID (and JIT,
# JSIZE, where it runs JIT code; ADDR, where it maps a file).
start() {
	: > "$T/work"
	"$@" > "$T/work" 2>&1 &
	WPID=$!
	echo "$WPID" >> "$BATS_FILE_TMPDIR/pids"
	# A map an earlier process of this pid left (a host's, another run's) is
	# not this test's: the tests plant their own.
	rm -f "/tmp/perf-$WPID.map"
	wait_for_line "$T/work" '^pid ' 60
	case " $* " in
	*" jit "*) wait_for_line "$T/work" '^jit ' 60 ;;
	*" mapexec "*) wait_for_line "$T/work" '^addr ' 60 ;;
	esac
	JIT=$(awk '/^jit / { print $2 }' "$T/work")
	JSIZE=$(awk '/^jit / { print $3 }' "$T/work")
}

# sampled MS OUT ERR TOOL ARGS...: TOOL ARGS (-p $WPID among them, or
# system-wide), bounded by a timeout should it hang, from its banner until
# the workload ($WPID, which runs until stopped) has had MS ms more of CPU,
# then stopped as with Ctrl-C: its samples, however slowly a loaded machine
# runs it. Standard output to OUT, error to ERR; fails if the tool fails.
sampled() {
	local ms=$1 out=$2 err=$3
	shift 3
	tool_start "$out" "$err" timeout 300 "$@"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + ms ))
	tool_stop || fail "$(tail -n 5 "$err")"
}

# wait_state PID STATE: waits until process PID is in STATE (its state
# letter in /proc/PID/stat: S sleeping, T stopped), a minute at most.
wait_state() {
	local now
	for ((i = 0; i < 600; i++)); do
		now=$(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$1/stat")
		[ "$now" = "$2" ] && return 0
		sleep 0.1
	done
	fail "pid $1 is in state $now after a minute, not $2"
}

# The most memory, in KiB, that a bounded read may leave the tool at: under
# ASan (make check SANITIZE=1) its shadow and the quarantine of freed
# blocks take about as much again (a 64 MiB perf map: 117 MB, 257 MB).
mem_bound() {
	if ldd "$BIN/profile" | grep -q libasan; then echo 400000; else echo 250000; fi
}

# The tool's high-water memory, in KiB, from GNU time's report in file $1.
peak_kib() {
	awk '/^peak / { print $2 }' "$1"
}

# no_raw_controls FILE: no control bytes but newline in FILE.
no_raw_controls() {
	! LC_ALL=C grep -q $'[\x01-\x09\x0b-\x1f\x7f]' "$1" || fail "raw control bytes in $1: $(cat -v "$1" | head)"
}

@test "hostile: a FIFO as the perf map neither blocks nor hangs a profile" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" jit 0
	"${AS_NOBODY[@]}" mkfifo "/tmp/perf-$WPID.map"
	sampled 300 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/folded" "$T/err"
	assert_line --regexp '^hostile;.*;\[unknown\] [0-9]+$'
	assert_output --partial "perf maps not trusted"
	# System-wide, as the attack was found: the whole machine's report still comes.
	sampled 300 "$T/folded" "$T/err" "$BIN/profile" -F 49 -f
	run cat "$T/folded"
	assert_output --partial "hostile;"
}

@test "hostile: a perf map that is a symlink to /dev/zero is refused, not read" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" jit 0
	ln -s /dev/zero "/tmp/perf-$WPID.map"
	chown -h nobody "/tmp/perf-$WPID.map"
	sampled 300 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/err"
	assert_output --partial "perf maps not trusted"
	run timeout 120 "$BIN/offcputime" -f 2
	assert_success
}

@test "hostile: a 100 GB sparse perf map is read only to its first 64 MiB" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" jit 0
	"${AS_NOBODY[@]}" truncate -s 100G "/tmp/perf-$WPID.map"
	# GNU time ignores Ctrl-C while it waits: the tool, its child, is stopped.
	tool_start "$T/folded" "$T/err" /usr/bin/time -o "$T/time" -f 'peak %M KiB' timeout 300 \
		"$BIN/profile" -p "$WPID" -F 99 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 300 ))
	kill -INT "$(pgrep -P "$TPID")"
	wait "$TPID" || fail "profile failed: $(cat "$T/err")"
	TPID=
	run cat "$T/err"
	assert_output --partial "perf maps read only to their first 64 MiB"
	peak=$(peak_kib "$T/time")
	echo "peak $peak KiB"
	[ "$peak" -lt "$(mem_bound)" ]
}

@test "hostile: a perf map is trusted from the process's user or root only" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" jit 0
	printf '%s %s jit_spin_loop\n' "$JIT" "$JSIZE" > "/tmp/perf-$WPID.map"
	chown 12345 "/tmp/perf-$WPID.map"
	sampled 200 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/folded" "$T/err"
	refute_output --partial jit_spin_loop
	assert_output --partial "perf maps not trusted"
	chown nobody "/tmp/perf-$WPID.map"
	sampled 200 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/folded"
	assert_line --regexp '^hostile;.*;jit_spin_loop [0-9]+$'
}

@test "hostile: a JIT's perf map names its code though it exited before the report" {
	require_bpf
	# System-wide, so that each is found by its first sample, not at start.
	# A process's root and pid (where its map is) are found while it lives
	# when it opens a binary not read before, or runs code from no file:
	# the second run, its binary known, only by the latter. Its report
	# comes after it exited, the map still there. Each runs until it has
	# had 300 ms of CPU since the tool started, however busy the machine;
	# the second, until the tool has found where its map is (a busy
	# machine's tool once read it only after it had gone).
	tool_start "$T/folded" "$T/err" timeout 300 "$BIN/profile" -v -F 99 -f
	start "$WL/hostile" jit 0
	wait_cpu "$WPID" 300
	stop_bg "$WPID"
	start "$WL/hostile" jit 0
	printf '%s %s gone_jit_loop\n' "$JIT" "$JSIZE" > "/tmp/perf-$WPID.map"
	wait_cpu "$WPID" 300
	wait_for_line "$T/err" "pid $WPID runs code from no file" 60
	stop_bg "$WPID"
	tool_stop || fail "$(tail -n 5 "$T/err")"
	grep -E '^hostile;.*;gone_jit_loop [0-9]+$' "$T/folded" || fail "$(grep '^hostile;' "$T/folded")"
}

@test "hostile: a JIT in a container writes its map under its own pid and /tmp" {
	require_bpf
	# pid 1 of a new pid namespace, with its own /tmp: neither is the host's.
	# The workload keeps its path, even where the build is under /tmp (a
	# clone there): held at /mnt across the mount, then put back.
	: > "$T/work"
	unshare -p -f --kill-child -m --propagation private sh -c '
		mount --bind "$1" /mnt && mount -t tmpfs none /tmp &&
		mkdir -p "$1" && mount --bind /mnt "$1" && exec "$1/hostile" jit 0' _ "$WL" > "$T/work" &
	NSPID=$!
	wait_for_line "$T/work" '^jit ' 60
	# unshare's child: sh, which became hostile.
	WPID=$(pgrep -P "$NSPID")
	[ "$(cat "/proc/$WPID/comm")" = hostile ]
	grep -q '^pid 1$' "$T/work"
	read -r jit size < <(awk '/^jit / { print $2, $3 }' "$T/work")
	printf '%s %s container_jit\n' "$jit" "$size" > "/proc/$WPID/root/tmp/perf-1.map"
	[ ! -e /tmp/perf-1.map ]
	sampled 200 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/folded"
	assert_line --regexp '^hostile;.*;container_jit [0-9]+$'
	# Not a child of this shell: stopped through unshare (see teardown).
	kill -KILL "$NSPID"
	wait "$NSPID" || true
	NSPID= WPID=
}

@test "hostile: names with escapes and newlines cannot forge lines or reach the terminal" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" jit 0
	printf '%s %s evil\033]0;pwned\007 x;y\n' "$JIT" "$JSIZE" > "/tmp/perf-$WPID.map"
	chown nobody "/tmp/perf-$WPID.map"
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 -f 1 > "$T/folded" 2>/dev/null
	no_raw_controls "$T/folded"
	grep -qF 'evil\x1b]0:pwned\x07_x:y ' "$T/folded"
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 1 > "$T/text" 2>/dev/null
	no_raw_controls "$T/text"
	grep -qF '    evil\x1b]0;pwned\x07 x;y' "$T/text"
	stop_bg "$WPID"
	rm -f "/tmp/perf-$WPID.map"
	# A process name with a newline and a colour escape.
	start "$WL/hostile" comm $'ev\nil\033[31mred' 0
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 -f 1 > "$T/folded" 2>/dev/null
	no_raw_controls "$T/folded"
	# One line per stack, each ending in its count: nothing split or forged.
	run grep -cvE '^[^ ]+ [0-9]+$' "$T/folded"
	assert_output 0
	grep -qF 'ev\x0ail\x1b[31mred;' "$T/folded"
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 --json 1 > "$T/json" 2>/dev/null
	jq -e -s 'length > 0 and all(.comm == "ev\nil\u001b[31mred")' "$T/json"
	timeout 30 "$BIN/offcputime" -p "$WPID" 1 > "$T/text" 2>/dev/null
	no_raw_controls "$T/text"
	timeout 30 "$BIN/runqlat" -P -p "$WPID" 1 1 > "$T/text" 2>/dev/null
	no_raw_controls "$T/text"
	grep -qF "pid = $WPID ev\\x0ail\\x1b[31mred" "$T/text"
}

@test "hostile: a process named with a noncharacter (U+FFFE) keeps the SVG XML and the Prometheus scrape valid" {
	require_bpf
	start "${AS_NOBODY[@]}" "$WL/hostile" comm $'u\xef\xbf\xbeFFFE' 0
	sampled 200 "$T/text" "$T/err" "$BIN/profile" -p "$WPID" -F 99 --svg "$T/p.svg"
	xmllint --noout "$T/p.svg"
	grep -qF 'u\xef\xbf\xbeFFFE' "$T/p.svg"
	# Another spinner of the same name beside it: each waits for a CPU now and then.
	"${AS_NOBODY[@]}" "$WL/hostile" comm $'u\xef\xbf\xbeFFFE' 0 > /dev/null &
	OTHER=$!
	port=$((20000 + RANDOM % 20000))
	: > "$T/rq.out"
	"$BIN/runqlat" -P --prometheus "127.0.0.1:$port" > "$T/rq.out" 2>&1 &
	RQ=$!
	wait_for_line "$T/rq.out" '^Serving' 120
	# Until the exporter has collected a wait of theirs (a minute at most).
	for ((i = 0; i < 300; i++)); do
		curl -sf "http://127.0.0.1:$port/metrics" > "$T/metrics" || true
		grep -qF 'u\\xef\\xbf\\xbeFFFE' "$T/metrics" && break
		sleep 0.2
	done
	kill -INT "$RQ"
	wait "$RQ"
	RQ=
	stop_bg "$OTHER"
	OTHER=
	grep -qF 'comm="u\\xef\\xbf\\xbeFFFE"' "$T/metrics"
	run promtool check metrics < "$T/metrics"
	assert_success
	assert_output ""
}

@test "hostile: another user cannot plant the temporary names an output is written through" {
	require_bpf
	# A world-writable directory, as /tmp: another user's files there are only theirs.
	d=$(mktemp -d /tmp/bpfscope-plant.XXXXXX)
	chmod 1777 "$d"
	# No duration: the tool writes its outputs, through temporary names,
	# once every name is planted, however long that takes.
	tool_start "$T/out" "$T/err" "$BIN/profile" -F 49 --svg "$d/out.svg" --pprof "$d/out.pb.gz"
	pid=$TPID
	# Every name an unseeded random() would give, and the same again for pprof.
	"$WL/hostile" randoms 100 | tail -n +2 | while read -r r; do
		for f in out.svg out.pb.gz; do
			"${AS_NOBODY[@]}" touch "$d/.$f.$(printf '%lx' $((0x$r ^ (pid << 16))))"
		done
	done
	[ "$(find "$d" -name '.out.*' -user nobody | wc -l)" -eq 200 ]
	tool_stop || fail "$(tail -n 5 "$T/err")"
	cp "$d/out.svg" "$d/out.pb.gz" "$T/"
	# Nothing of ours left behind: the planted names are nobody's.
	run find "$d" -name '.out.*' -user 0
	rm -rf "$d"
	assert_output ""
	xmllint --noout "$T/out.svg"
	HOME=$T go tool pprof -raw "$T/out.pb.gz" > /dev/null
}

@test "hostile: names and paths from other users' files reach the terminal escaped in messages too" {
	require_bpf
	dir=$T/$'x\033[2J\n'
	mkdir -p "$dir"
	cp "$WL/funcs" "$dir/funcs"
	run "$BIN/funclatency" -v "$dir/funcs:"$'nope\033]0;pwned\007'
	assert_failure 1
	echo "$output" > "$T/err"
	no_raw_controls "$T/err"
	# The names spelled as the reports spell them, no line forged.
	assert_output --partial $'no function matches \'nope\\x1b]0;pwned\\x07\' in '
	assert_output --partial 'x\x1b[2J\x0a/funcs'
	run grep -vc '^funclatency: ' "$T/err"
	assert_output 0
}

@test "hostile: a name that is not UTF-8 keeps JSON valid, as \\xHH" {
	require_bpf
	# Latin-1 and a cut-off sequence, as prctl(PR_SET_NAME) takes any bytes.
	start "$WL/hostile" comm $'caf\xe9\xff-\xc3' 0
	grep -q "^pid $WPID" "$T/work"
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 --json 1 > "$T/json" 2> "$T/err"
	[ -s "$T/json" ] || fail "no JSON: $(cat "$T/err")"
	while read -r line; do
		/usr/bin/python3 -m json.tool <<<"$line" > /dev/null || fail "not JSON: $line"
	done < "$T/json"
	/usr/bin/python3 -c 'import json, sys
for line in open(sys.argv[1], encoding="utf-8", errors="strict"):
    assert json.loads(line)["comm"] == r"caf\xe9\xff-\xc3", line' "$T/json"
	# Folded output says it the same way, raw bytes nowhere.
	timeout 30 "$BIN/profile" -p "$WPID" -F 99 -f 1 > "$T/folded" 2> "$T/err"
	grep -q '^caf\\xe9\\xff-\\xc3;' "$T/folded" || fail "$(cat -v "$T/folded")"
	! LC_ALL=C grep -q $'[\x80-\xff]' "$T/folded" || fail "raw bytes: $(cat -v "$T/folded")"
}

@test "hostile: a directory named with escapes reaches readdirlat's output escaped" {
	require_bpf
	dir="$T/"$'d\033]0;pwned\007\nx'
	mkdir "$dir"
	touch "$dir/a" "$dir/b"
	: > "$T/out"
	: > "$T/err"
	"$BIN/readdirlat" -D -c lsdir > "$T/out" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/out" Tracing 120
	"$WL/lsdir" "$dir" 8192 2 > /dev/null
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	no_raw_controls "$T/out"
	grep -qxF "dir = $T/d\x1b]0;pwned\x07\x0ax" "$T/out" || fail "$(cat -v "$T/out")"
	# Each call, with its directory, on a line of its own.
	: > "$T/out"
	: > "$T/err"
	"$BIN/readdirlat" --min-us 0 -c lsdir > "$T/out" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/out" 'Tracing|TIME' 120
	"$WL/lsdir" "$dir" 8192 2 > /dev/null
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	no_raw_controls "$T/out"
	run grep -cF " $T/d\x1b]0;pwned\x07\x0ax" "$T/out"
	assert_output 4
}

# A stripped copy of symwork in $T/bin, with its library, and its debug file in $T/sym.debug.
stripped_symwork() {
	mkdir -p "$T/bin"
	cp "$BUILD/tests/libsymlib.so" "$T/bin/"
	objcopy --only-keep-debug "$SW" "$T/sym.debug"
	objcopy --strip-all "$SW" "$T/bin/symwork"
}

# add_debuglink BINARY NAME: a .gnu_debuglink naming NAME (any bytes), with a zero CRC.
add_debuglink() {
	printf '%s\0' "$2" > "$T/link"
	while [ $(( $(stat -c %s "$T/link") % 4 )) -ne 0 ]; do printf '\0' >> "$T/link"; done
	printf '\0\0\0\0' >> "$T/link"
	objcopy --add-section .gnu_debuglink="$T/link" "$1"
}

start_symwork() {
	: > "$T/sw"
	"$@" > "$T/sw" &
	WPID=$!
	wait_for_line "$T/sw" '^ready' 60
	WPID=$(awk '/^pid/ { print $2 }' "$T/sw")
	ALPHA=$(awk '/^symwork_alpha/ { print $2 }' "$T/sw")
	GAMMA=$(awk '/^symlib_gamma/ { print $2 }' "$T/sw")
}

@test "hostile: a debuglink that climbs out of its directory is not followed" {
	stripped_symwork
	# The binary's own debug file (its build-id), one level up: only the
	# "/" in the name keeps it from being read.
	add_debuglink "$T/bin/symwork" "../sym.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "[unknown]"
	stop_bg "$WPID"
	# The same file beside the binary, named plainly, names the frame.
	objcopy --strip-all "$SW" "$T/bin/symwork"
	add_debuglink "$T/bin/symwork" "sym.debug"
	cp "$T/sym.debug" "$T/bin/sym.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "symwork_alpha+0x0 [symwork]"
}

@test "hostile: a FIFO named like the debug file neither blocks nor is read" {
	stripped_symwork
	add_debuglink "$T/bin/symwork" "symwork.debug"
	mkfifo "$T/bin/symwork.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "[unknown]"
	stop_bg "$WPID"
	# The debug file itself in the FIFO's place names the frame.
	rm "$T/bin/symwork.debug"
	cp "$T/sym.debug" "$T/bin/symwork.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "symwork_alpha+0x0 [symwork]"
}

# nobuildid NAME [CFLAGS...]: symwork built without a build-id, as $T/bin/NAME.
nobuildid() {
	local name=$1
	shift
	mkdir -p "$T/bin"
	cp "$BUILD/tests/libsymlib.so" "$T/bin/"
	cc -g -fno-inline -fPIE -pie -Wl,--build-id=none "$@" "$ROOT/tests/symwork/symwork.c" \
		-L"$T/bin" -lsymlib -Wl,-rpath,'$ORIGIN' -o "$T/bin/$name"
}

@test "hostile: a debug file that is not the binary's is not believed" {
	# Without build-ids only the debuglink's CRC tells the right file.
	nobuildid nb -O1
	nobuildid other -O0
	objcopy --only-keep-debug "$T/bin/nb" "$T/right.debug"
	objcopy --only-keep-debug "$T/bin/other" "$T/bin/nb.debug"
	cp "$T/right.debug" "$T/crc.debug"
	objcopy --strip-all --add-gnu-debuglink="$T/crc.debug" "$T/bin/nb"
	mv "$T/bin/nb.debug" "$T/bin/crc.debug"	# the name the link gives, the wrong contents
	start_symwork "$T/bin/nb"
	run "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "[unknown]"
	cp "$T/right.debug" "$T/bin/crc.debug"
	run "$S" "$WPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [nb]"
	stop_bg "$WPID"
	# With build-ids, a file at the binary's build-id path must carry that id.
	stripped_symwork
	id=$(readelf -n "$T/bin/symwork" | awk '/Build ID/ { print $3 }')
	mkdir -p "$T/debug/.build-id/${id:0:2}"
	cc -g -O0 -fno-inline -fPIE -pie "$ROOT/tests/symwork/symwork.c" -L"$T/bin" -lsymlib \
		-o "$T/other2"
	objcopy --only-keep-debug "$T/other2" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	start_symwork "$T/bin/symwork"
	run env BPFSCOPE_DEBUGINFO_PATH="$T/debug" "$S" "$WPID" "$ALPHA"
	assert_output "[unknown]"
	cp "$T/sym.debug" "$T/debug/.build-id/${id:0:2}/${id:2}.debug"
	run env BPFSCOPE_DEBUGINFO_PATH="$T/debug" "$S" "$WPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [symwork]"
}

@test "hostile: a debug file's CRC is read only from one of a debug file's size, and only for a binary without build-id" {
	# Without build-ids: a sparse 1 TiB file in the debuglink's place,
	# starting like an ELF file, would be read whole for its CRC.
	nobuildid nb -O1
	objcopy --only-keep-debug "$T/bin/nb" "$T/right.debug"
	cp "$T/right.debug" "$T/crc.debug"
	objcopy --strip-all --add-gnu-debuglink="$T/crc.debug" "$T/bin/nb"
	head -c 64 "$T/right.debug" > "$T/bin/crc.debug"
	truncate -s 1T "$T/bin/crc.debug"
	start_symwork "$T/bin/nb"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "[unknown]"
	cp "$T/right.debug" "$T/bin/crc.debug"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [nb]"
	stop_bg "$WPID"
	# A binary with a build-id: a debug file without one is not its own,
	# even with the debuglink's CRC (the file is another's, its note cut out).
	stripped_symwork
	objcopy --remove-section .note.gnu.build-id "$T/sym.debug" "$T/noid.debug"
	objcopy --add-gnu-debuglink="$T/noid.debug" "$T/bin/symwork"
	cp "$T/noid.debug" "$T/bin/noid.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_output "[unknown]"
	stop_bg "$WPID"
	objcopy --remove-section .gnu_debuglink --add-gnu-debuglink="$T/sym.debug" "$T/bin/symwork"
	cp "$T/sym.debug" "$T/bin/sym.debug"
	start_symwork "$T/bin/symwork"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_output "symwork_alpha+0x0 [symwork]"
}

@test "hostile: a million symbols naming one megabyte name, and PLT names in an 8 GiB table, are read within bounds" {
	# 25 MB on disk asking for a terabyte of names: a name is cut at 4 KiB,
	# a binary's symbols take 128 MiB at most.
	python3 "$ROOT/tests/hostile/mkelf.py" names 1000000 1048576 "$T/names.elf"
	printf '%x\n' 4096 4097 > "$T/offs"
	# Bounded in CPU time, which a loaded machine does not stretch as it
	# does the wall clock's; the timeout only ends a hang.
	run /usr/bin/time -f '%U %S s %M KiB' timeout 300 "$S" -f "$T/names.elf" "$T/offs"
	assert_success
	assert_line --index 0 --regexp '^2 addresses, 2 named'
	read -r user sys _ kib _ <<<"${lines[1]}"
	secs=$(awk -v u="$user" -v s="$sys" 'BEGIN { print int(u + s) }')
	[ "$secs" -lt 10 ] || fail "took $user s of user time, $sys s of system time"
	[ "$kib" -lt "$(mem_bound)" ] || fail "took $kib KiB"
	# Old: 26 s and 8.4 GB, reading a sparse string table whole.
	python3 "$ROOT/tests/hostile/mkelf.py" plt $((8 << 30)) "$T/plt.elf"
	truncate -s $(((1 << 20) + (8 << 30))) "$T/plt.elf"
	echo 1010 > "$T/poff"
	run /usr/bin/time -f '%U %S s %M KiB' timeout 300 "$S" -f "$T/plt.elf" "$T/poff"
	assert_success
	read -r user sys _ kib _ <<<"${lines[1]}"
	secs=$(awk -v u="$user" -v s="$sys" 'BEGIN { print int(u + s) }')
	[ "$secs" -lt 10 ] || fail "took $user s of user time, $sys s of system time"
	[ "$kib" -lt "$(mem_bound)" ] || fail "took $kib KiB"
}

@test "hostile: a function whose call-frame information changes at each of 200,000 bytes is read in bounded time" {
	# libdw finds each row by running the function's rules from its start:
	# 200,000 rows took 2e10 steps (more than 20 s here); now the first 4,096
	# are kept and the rest is a rule the walker does not follow.
	python3 "$ROOT/tests/hostile/mkelf.py" cfi 200000 "$T/cfi.elf"
	# In CPU time, which a loaded machine does not stretch; the timeout only ends a hang.
	run /usr/bin/time -o "$T/time" -f '%U %S' timeout 300 "$BUILD/tests/unit/cfidump" "$T/cfi.elf"
	assert_success
	assert_line --index 0 --regexp '^4097 rows, 1 functions, .* unsupported 1 '
	read -r user sys < "$T/time"
	awk -v u="$user" -v s="$sys" 'BEGIN { exit !(u + s < 10) }' ||
		fail "took $user s of user time, $sys s of system time"
	# The same file with 100 changes: all read.
	python3 "$ROOT/tests/hostile/mkelf.py" cfi 100 "$T/cfi100.elf"
	run timeout 300 "$BUILD/tests/unit/cfidump" "$T/cfi100.elf"
	assert_line --index 0 --regexp '^102 rows, 1 functions, .* unsupported 0 '
}

@test "hostile: a container's debug files are looked up in the container" {
	stripped_symwork
	id=$(readelf -n "$T/bin/symwork" | awk '/Build ID/ { print $3 }')
	mkdir -p "$T/dbg/.build-id/${id:0:2}"
	cp "$T/sym.debug" "$T/dbg/.build-id/${id:0:2}/${id:2}.debug"
	[ ! -e "/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug" ]
	# Its /usr/lib/debug is a directory only its own mount namespace has.
	start_symwork unshare -m --propagation private sh -c \
		"mount --bind '$T/dbg' /usr/lib/debug && exec '$T/bin/symwork'"
	run timeout 120 "$S" "$WPID" "$ALPHA"
	assert_success
	assert_output "symwork_alpha+0x0 [symwork]"
}

@test "hostile: MiniDebugInfo that inflates to a gigabyte is cut off at 64 MiB" {
	stripped_symwork
	objcopy --add-section .gnu_debugdata="$BOMB" "$T/bin/symwork"
	start_symwork "$T/bin/symwork"
	run timeout 60 /usr/bin/time -f 'peak %M KiB' "$S" "$WPID" "$ALPHA" "$GAMMA"
	assert_success
	assert_line --index 0 "[unknown]"
	assert_line --index 1 "symlib_gamma+0x0 [libsymlib.so]"
	peak=$(awk '/^peak / { print $2 }' <<<"$output")
	echo "peak $peak KiB"
	# A gigabyte inflated would be a gigabyte; the cap and ASan's own overhead much less.
	[ "$peak" -lt "$(mem_bound)" ]
}

@test "hostile: an xz file mapped executable is not inflated as a binary" {
	start "$WL/hostile" mapexec "$BOMB"
	addr=$(awk '/^addr / { print $2 }' "$T/work")
	run timeout 60 /usr/bin/time -f 'peak %M KiB' "$S" "$WPID" "$addr"
	assert_success
	assert_line --index 0 "[unknown]"
	peak=$(awk '/^peak / { print $2 }' <<<"$output")
	echo "peak $peak KiB"
	[ "$peak" -lt "$(mem_bound)" ]
}

@test "hostile: a library truncated after its process exits does not kill the report" {
	require_bpf
	mkdir -p "$T/lib"
	cp "$BUILD/tests/libsymlib.so" "$T/lib/"
	start "$WL/hostile" lib "$T/lib/libsymlib.so" 0
	# Sampled a while, then gone before the report, which reads its library.
	tool_start "$T/folded" "$T/err" timeout 300 "$BIN/profile" -p "$WPID" -F 99 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 300 ))
	stop_bg "$WPID"
	WPID=
	# Mapped pages past the end of a file raise SIGBUS in whoever touches them.
	truncate -s 0 "$T/lib/libsymlib.so"
	tool_stop || fail "$(tail -n 5 "$T/err")"
	grep -q '^hostile;' "$T/folded" || fail "no samples: $(cat "$T/folded" "$T/err")"
	grep -q 'could not be read as ELF' "$T/err"
}

# A report that hangs would last forever: its bound, from Ctrl-C to the
# tool's exit. A report of 2,000 exited processes takes well under a second
# here; ten minutes is a hang on any machine.
REPORT_BOUND=600

# stop_within SECS: stops the tool tool_start started as Ctrl-C does; fails
# unless it has reported and exited, successfully, within SECS.
stop_within() {
	kill -INT "$TPID"
	timeout "$1" tail --pid="$TPID" -f /dev/null || fail "no report $1 s after Ctrl-C: $(tail -n 5 "$T/err")"
	tool_stop_gone
}

# tool_stop_gone: waits for the tool tool_start started, which has exited;
# fails if it failed.
tool_stop_gone() {
	local pid=$TPID
	TPID=
	wait "$pid" || fail "the tool (pid $pid) failed: exit $?: $(tail -n 5 "$T/err")"
}

@test "hostile: 2,000 short-lived processes; the report comes, in time" {
	require_bpf
	# Stopped by Ctrl-C once the processes are done, however long they take.
	tool_start "$T/folded" "$T/err" "$BIN/profile" -F 99 -f
	start "$WL/hostile" forks 2000 2
	wait_for_line "$T/work" '^done' 600
	WPID=
	stop_within "$REPORT_BOUND"
	n=$(grep -c '^hostile;' "$T/folded")
	echo "$n stacks of the short-lived processes"
	[ "$n" -gt 0 ]
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -f
	start "$WL/hostile" forks 2000 1
	wait_for_line "$T/work" '^done' 600
	WPID=
	stop_within "$REPORT_BOUND"
	grep -q '^hostile;' "$T/folded"
}

@test "hostile: notes of new processes the ring buffer has no room for are counted and said" {
	require_bpf
	# Stopped while programs start one after another: the notes of those
	# sampled at 999 Hz (each new process's first count; each spins 2 ms,
	# so most are), with the exec notes the BPF side sends (250, then 25 a
	# second), fill the 64 KiB ring (about 1,600 fit); exec notes past
	# that are lost, those past the rate not sent. A process is read later
	# then, at the next second's check, and one that exited first is
	# [unknown]: said. The programs run until the BPF side has counted 100
	# and 1,000 of those (its map, read while the tool is stopped), however
	# fast or slowly the machine starts them (6,000 runs of /bin/true from
	# a shell took 141 s in CI).
	tool_start "$T/folded" "$T/err" "$BIN/profile" -F 999 -f
	kill -STOP "$TPID"
	"$WL/hostile" execs "$WL/spin" 0.002 > /dev/null &
	SPAWNER=$!
	wait_notes_lost "$TPID" 100 1000
	stop_bg "$SPAWNER"
	SPAWNER=
	read -r full rate < <(notes_lost "$TPID")
	kill -CONT "$TPID"
	tool_stop || fail "$(tail -n 5 "$T/err")"
	n=$(sed -n 's/^profile: \([0-9]*\) notes of new processes or new code lost (their ring buffer was full).*/\1/p' "$T/err")
	unread=$(sed -n 's/^profile: \([0-9]*\) processes not read at their exec (more than 25 execs a second).*/\1/p' "$T/err")
	echo "${n:-no} notes lost, ${unread:-no} execs past the rate said; $full and $rate counted while stopped"
	# What it counted, said at exit (more may come after the count was read).
	[ "${n:-0}" -ge "$full" ] || fail "$(cat "$T/err")"
	[ "${unread:-0}" -ge "$rate" ] || fail "$(cat "$T/err")"
}

@test "hostile: a pid reused by another program is named by its own binary" {
	require_bpf
	# The first program spins until the tool has sampled it a while.
	: > "$T/a"
	"$WL/spin" 0 > "$T/a" &
	APID=$!
	a=$APID
	wait_for_line "$T/a" '^pid ' 60
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$a" -F 99 -f
	wait_cpu "$a" $(( $(cpu_ms "$a") + 300 ))
	stop_bg "$a"
	APID=
	# The second takes the same pid (the kernel's next pid, set by hand;
	# another process on the machine may fork first and take it).
	for ((try = 0; try < 50; try++)); do
		echo $((a - 1)) > /proc/sys/kernel/ns_last_pid
		: > "$T/b"
		"$WL/profile_spin" -s 0 > "$T/b" &
		WPID=$!
		[ "$WPID" -eq "$a" ] && break
		stop_bg "$WPID"
		WPID=
	done
	[ "${WPID:-0}" -eq "$a" ] || fail "could not get pid $a again in 50 tries"
	wait_for_line "$T/b" '^pid ' 60
	wait_cpu "$WPID" 300
	tool_stop || fail "$(tail -n 5 "$T/err")"
	grep -qE '^spin;.*;spin_heavy' "$T/folded"
	grep -qE '^profile_spin;.*;bpfscope_spin_(alpha|beta)' "$T/folded"
	! grep -E '^profile_spin;.*spin_heavy|^spin;.*bpfscope_spin' "$T/folded" ||
		fail "a stack named by the other program's binary"
}

@test "hostile: code before an exec is named by the binary it ran in" {
	require_bpf
	start "$WL/hostile" exec "$WL/spin" 0
	: > "$T/err"
	timeout 120 "$BIN/profile" -p "$WPID" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" Sampling 120
	exec_after 300
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	cat "$T/folded"
	grep -qE '^hostile;.*;hostile_before_exec' "$T/folded"
	grep -qE '^spin;.*;spin_heavy' "$T/folded"
}

# spin_only: spin's function names that hostile has none of, as an ERE alternation.
spin_only() {
	comm -23 <(nm --defined-only "$WL/spin" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u) \
		<(nm --defined-only "$WL/hostile" | awk '$2 ~ /^[Tt]$/ { print $3 }' | sort -u) |
		paste -sd'|'
}

@test "hostile: an image whose maps are read only after its exec is not named by the next" {
	require_bpf
	# Without address randomization (setarch -R, kept across exec) both
	# binaries load at one address: maps read after the exec would name
	# hostile's code by spin's. Read while it runs, they name it rightly.
	: > "$T/folded"
	: > "$T/err"
	timeout 120 "$BIN/profile" -v -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" Sampling 120
	settled "$T/err"
	start setarch -R "$WL/hostile" exec "$WL/spin" 0
	exec_after 300
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	grep -qE '^hostile;.*;hostile_before_exec' "$T/folded"
	grep -qE '^spin;.*;spin_heavy' "$T/folded"
	stop_bg "$WPID"
	# Stopped, the tool reads nothing until the exec is over, and then /proc
	# shows spin for both images. What it read for hostile must go.
	: > "$T/folded"
	: > "$T/err"
	timeout 120 "$BIN/profile" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_line "$T/err" Sampling 120
	kill -STOP "$TPID"
	start setarch -R "$WL/hostile" exec "$WL/spin" 0
	exec_after 300
	kill -CONT "$TPID"
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
	cat "$T/err"
	grep -q '^hostile;' "$T/folded" || fail "no samples before the exec: $(cat "$T/folded")"
	! grep -E "^hostile;(.*;)?(\[spin\]|$(spin_only))( |;)" "$T/folded" ||
		fail "code before the exec named by the binary after it"
	grep -qE '^spin;.*;spin_heavy' "$T/folded"
	# Its frames [unknown] and said so; or, walked by build-id before its
	# maps were read (as a loaded machine has it now and then), named by
	# its own binary: nothing lost, nothing to say.
	if ! grep -q "exec'd before their maps were read" "$T/err"; then
		grep -qE '^hostile;.*;hostile_before_exec' "$T/folded" &&
			! grep -E '^hostile;' "$T/folded" | grep -qF '[unknown]' ||
			fail "the frames before the exec lost, unsaid: $(grep '^hostile;' "$T/folded")"
	fi
}

@test "hostile: a binary's file descriptors are not held past what the limit allows" {
	mkdir -p "$T/libs"
	start "$WL/hostile" maplibs 60 "$BUILD/tests/libsymlib.so" "$T/libs"
	wait_for_line "$T/work" '^ready' 60
	addrs=$(awk '/^lib / { print $3 }' "$T/work")
	# 60 libraries, under a hard limit of 40 open files.
	run bash -c 'ulimit -n 40 && exec "$@"' limit "$S" "$WPID" $addrs
	assert_success
	[ "$(grep -c '^symlib_gamma+0x0 \[libcopy' <<<"$output")" -eq 60 ]
}

@test "hostile: out of descriptors, held binaries are read and let go; what still cannot open is said" {
	require_bpf
	mkdir -p "$T/libs"
	start "$WL/hostile" maplibs 60 "$BUILD/tests/libsymlib.so" "$T/libs"
	wait_for_line "$T/work" '^ready' 60
	# A hard limit the tool cannot raise past, six descriptors above what it
	# holds itself tracing a process of three binaries (its BPF objects, most
	# of them, whose number changes with its code): it must keep room for
	# itself, from the numbers it is given. Frame pointers: the binaries stay
	# open until the report.
	sleep 1000 &
	SPID=$!
	local own
	tool_start "$T/out" "$T/err" "$BIN/offcputime" -p $SPID --unwind=fp -f
	own=$(ls "/proc/$TPID/fd" | wc -l)
	tool_stop
	stop_bg "$SPID"
	SPID=
	echo "the tool holds $own descriptors; a limit of $((own + 6))"
	[ "$own" -gt 10 ] || fail "$own descriptors"
	tool_start "$T/folded" "$T/err" bash -c 'ulimit -n $0 && exec "$@"' $((own + 6)) \
		"$BIN/offcputime" -p "$WPID" --unwind=fp -f
	# Stopped and continued: an off-CPU period in pause(), in libc, ended
	# when it is woken to stop (its state T), and another when continued.
	kill -STOP "$WPID"
	wait_state "$WPID" T
	kill -CONT "$WPID"
	wait_state "$WPID" S
	tool_stop || fail "$(tail -n 5 "$T/err")"
	cat "$T/err"
	! grep 'could not be opened' "$T/err" || fail "binaries lost for lack of descriptors"
	grep -qE '^hostile;(.*;)?pause;' "$T/folded" || fail "$(cat "$T/folded")"
	# With no descriptor to spare at all, what cannot be opened is said at
	# exit. Those bats holds are closed first, so that 6 means 6.
	addrs=$(awk '/^lib / { print $3 }' "$T/work")
	run bash -c 'for fd in $(ls /proc/$$/fd); do [ "$fd" -le 2 ] || eval "exec $fd>&-"; done
		ulimit -n 6 && exec "$@"' limit "$S" "$WPID" $addrs
	assert_success
	assert_line --regexp '^[a-z]+: [0-9]+ mapped files could not be opened \(some for lack of file descriptors\): their frames are \[unknown\]$'
	[ "$(grep -c '^\[unknown\]$' <<<"$output")" -eq 60 ]
}

@test "hostile: an output path that is a symlink is replaced, not written through" {
	require_bpf
	: > "$T/spin"
	"$WL/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	echo precious > "$T/victim"
	ln -s "$T/victim" "$T/out.svg"
	ln -s "$T/victim" "$T/out.pb.gz"
	run timeout 120 "$BIN/profile" -p "$WPID" -F 99 --svg "$T/out.svg" --pprof "$T/out.pb.gz" 1
	assert_success
	[ "$(cat "$T/victim")" = precious ]
	[ ! -L "$T/out.svg" ]
	[ ! -L "$T/out.pb.gz" ]
	xmllint --noout "$T/out.svg"
	gzip -t "$T/out.pb.gz"
	# A run killed before its report leaves the old file whole, and nothing beside it.
	cp "$T/out.svg" "$T/old.svg"
	tool_start "$T/text" "$T/err" "$BIN/profile" -p "$WPID" -F 99 --svg "$T/out.svg"
	kill -KILL "$TPID"
	wait "$TPID" || true
	TPID=
	cmp "$T/out.svg" "$T/old.svg"
	[ "$(ls -A "$T" | grep -c '^\.out')" -eq 0 ]
}

@test "hostile: another user's symlink in a sticky directory does not steer an output file" {
	require_bpf
	# $T/tmp is as /tmp is; in it, nobody's link to a directory of root's.
	mkdir -m 1777 "$T/tmp"
	mkdir "$T/root"
	ln -s "$T/root" "$T/tmp/x"
	chown -h nobody "$T/tmp/x"
	for t in profile offcputime offwaketime; do
		run timeout 120 "$BIN/$t" --svg "$T/tmp/x/out.svg" 1
		assert_failure 1
		assert_output "$t: cannot write $T/tmp/x/out.svg: a symlink on the way, in a sticky world-writable directory such as /tmp, is another user's: not followed"
	done
	# Further down a path, and inside a link's target (root's link to nobody's).
	ln -s x "$T/tmp/viaroot"
	run timeout 120 "$BIN/profile" --pprof "$T/tmp/viaroot/sub/../out.pb.gz" 1
	assert_failure 1
	assert_output --partial "is another user's: not followed"
	mkdir "$T/root/sub"
	run timeout 120 "$BIN/profile" --pprof "$T/tmp/x/sub/out.pb.gz" 1
	assert_failure 1
	[ -z "$(ls -A "$T/root/sub")" ] || fail "written through nobody's link: $(ls -A "$T/root/sub")"
	# Followed where the kernel's fs.protected_symlinks would: root's own link
	# there, and nobody's link in nobody's own directory.
	chown -h root "$T/tmp/x"
	run timeout 120 "$BIN/profile" -F 49 --svg "$T/tmp/viaroot/out.svg" 1
	assert_success
	xmllint --noout "$T/root/out.svg"
	mkdir "$T/home"
	chown nobody "$T/home"
	ln -s "$T/root" "$T/home/y"
	chown -h nobody "$T/home/y"
	run timeout 120 "$BIN/profile" -F 49 --pprof "$T/home/y/out.pb.gz" 1
	assert_success
	gzip -t "$T/root/out.pb.gz"
}

@test "hostile: output paths are checked before tracing, and a failed write fails the tool" {
	require_bpf
	for t in profile offcputime offwaketime; do
		run timeout 120 "$BIN/$t" --svg /nonexistent/x.svg 5
		assert_failure 1
		assert_output --partial "cannot write /nonexistent/x.svg"
		refute_output --partial "Tracing"
		refute_output --partial "Sampling"
		run "$BIN/$t" --svg "$T/same" --pprof "$T/same" 1
		assert_failure 2
		assert_output --partial "name the same file"
		run "$BIN/$t" -f --svg - 1
		assert_failure 2
		# The directory goes away during the run (after its banner, before
		# the report): the write fails, and so does the tool.
		mkdir "$T/d"
		tool_start "$T/out" "$T/err" "$BIN/$t" --pprof "$T/d/x.pb.gz"
		rmdir "$T/d"
		kill -INT "$TPID"
		rc=0
		wait "$TPID" || rc=$?
		TPID=
		[ "$rc" -eq 1 ] || fail "$t: exit $rc after a failed write: $(cat "$T/err")"
		grep -q "cannot write $T/d/x.pb.gz" "$T/err"
		! grep -q 'cannot read' "$T/err" || fail "$t: $(cat "$T/err")"
	done
	# '-' is the standard output, the file alone: the opening line goes to stderr.
	timeout 120 "$BIN/profile" -F 49 --svg - 1 > "$T/out.svg" 2> "$T/err"
	xmllint --noout "$T/out.svg"
	grep -q '^Sampling at ' "$T/err"
	timeout 120 "$BIN/offcputime" --pprof - 1 > "$T/out.pb.gz" 2> "$T/err"
	gzip -t "$T/out.pb.gz"
	grep -q '^Tracing off-CPU time' "$T/err"
}

@test "hostile: every tool fails, exit 1, when its standard output is closed" {
	require_bpf
	for cmd in "runqlat 1 1" "biolatency 1 1" "cachestat 1 1" "readdirlat 1 1" \
		"funclatency -d 1 c:getpid" "profile 1" "offcputime 1" "offwaketime 1"; do
		run bash -c "'$BIN/'$cmd >&-"
		[ "$status" -eq 1 ] || fail "$cmd: exit $status: $output"
		assert_output --partial "standard output is closed"
	done
}

@test "hostile: a report the standard output cannot take fails the tool, said once" {
	require_bpf
	: > "$T/spin"
	"$WL/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	# /dev/full takes the open and refuses every write: the report's, at the end.
	for cmd in "runqlat 1 1" "profile -p $WPID -F 99 -f 1" "profile -p $WPID -F 99 --svg - 1" \
		"profile -p $WPID -F 99 --pprof - 1" "offcputime -f 1"; do
		rc=0
		timeout 120 $BIN/$cmd > /dev/full 2> "$T/err" || rc=$?
		[ "$rc" -eq 1 ] || fail "$cmd: exit $rc: $(cat "$T/err")"
		grep -q '^[a-z]*: cannot write to the standard output: No space left on device$' "$T/err" ||
			fail "$cmd: $(cat "$T/err")"
		[ "$(grep -c 'cannot write' "$T/err")" -eq 1 ] || fail "$cmd: $(cat "$T/err")"
	done
}

# A local debuginfod serving $T/dbg; sets DPID and PORT.
start_debuginfod() {
	PORT=$((20000 + RANDOM % 20000))
	: > "$T/dlog"
	debuginfod -p "$PORT" -F "$T/dbg" -d "$T/db.sqlite" -t 1 -vvv > "$T/dlog" 2>&1 &
	DPID=$!
	for i in $(seq 600); do
		curl -sf -o /dev/null "http://127.0.0.1:$PORT/buildid/$1/debuginfo" && return 0
		sleep 0.2
	done
	fail "debuginfod did not serve $1: $(tail "$T/dlog")"
}

# black_hole: a server that takes connections and never answers, on a
# port of its own (PORT); says "listening" once it is, and "accepted" for
# each connection, in $T/bh. Sets BLACKHOLE.
black_hole() {
	: > "$T/bh"
	/usr/bin/python3 -c 'import socket, sys, time
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen()
print("listening", s.getsockname()[1], flush=True)
held = []
while True:
    held.append(s.accept()[0])
    print("accepted", flush=True)' > "$T/bh" &
	BLACKHOLE=$!
	wait_for_line "$T/bh" '^listening ' 60
	PORT=$(awk '/^listening / { print $2 }' "$T/bh")
}

# now_s: the time, in seconds and their fraction.
now_s() {
	date +%s.%N
}

@test "hostile: debuginfod is asked only with --debuginfod, and then answers" {
	require_bpf
	mkdir -p "$T/bin" "$T/dbg"
	objcopy --only-keep-debug "$WL/spin" "$T/dbg/spin.debug"
	objcopy --strip-all "$WL/spin" "$T/bin/spin"
	id=$(readelf -n "$T/bin/spin" | awk '/Build ID/ { print $3 }')
	start_debuginfod "$id"
	requests() { grep -c "buildid/$id/debuginfo" "$T/dlog"; }
	before=$(requests)
	: > "$T/spin"
	"$T/bin/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T/cache
	sampled 200 "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f
	run cat "$T/folded"
	refute_output --partial spin_heavy
	[ "$(requests)" -eq "$before" ] || fail "the tool asked debuginfod unasked"
	# Its report's time, from Ctrl-C, with a server that answers.
	tool_start "$T/folded" "$T/err" timeout 300 "$BIN/profile" -p "$WPID" -F 99 -f --debuginfod
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 200 ))
	t0=$(now_s)
	tool_stop || fail "$(tail -n 5 "$T/err")"
	answered=$(awk -v t0="$t0" -v t1="$(now_s)" 'BEGIN { print t1 - t0 }')
	run cat "$T/folded"
	assert_output --partial spin_heavy
	[ "$(requests)" -gt "$before" ]
	# A server that never answers costs at most the time given (3 s), more
	# than the report with one that answers: without the bound, libcurl's
	# own (90 s, DEBUGINFOD_TIMEOUT's default) or the server's.
	black_hole
	rm -rf "$T/cache"
	export DEBUGINFOD_URLS=http://127.0.0.1:$PORT
	tool_start "$T/folded" "$T/err" timeout 300 "$BIN/profile" -p "$WPID" -F 99 -f --debuginfod=3
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 200 ))
	t0=$(now_s)
	tool_stop || fail "$(tail -n 5 "$T/err")"
	hung=$(awk -v t0="$t0" -v t1="$(now_s)" 'BEGIN { print t1 - t0 }')
	echo "report: $answered s with a server that answers, $hung s with one that does not"
	# It did ask the server that never answers.
	grep -q '^accepted' "$T/bh"
	awk -v a="$answered" -v h="$hung" 'BEGIN { exit !(h <= a + 3 + 10) }'
}

@test "hostile: a second Ctrl-C ends a report that hangs on the network" {
	require_bpf
	mkdir -p "$T/bin"
	objcopy --strip-all "$WL/spin" "$T/bin/spin"
	: > "$T/spin"
	"$T/bin/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	black_hole
	export DEBUGINFOD_URLS=http://127.0.0.1:$PORT DEBUGINFOD_CACHE_PATH=$T/cache
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f --debuginfod=100
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 200 ))
	# The first Ctrl-C asks for the report, which now waits on a server
	# that never answers.
	kill -INT "$TPID"
	wait_for_line "$T/bh" '^accepted' 60
	# Another, a second or more after the first as the tool reads its clock
	# (sooner it is the same Ctrl-C again, as timeout(1) forwards it): until
	# the tool is gone, a minute at most, well before its 100 s.
	for ((i = 0; i < 40; i++)); do
		sleep 1.5
		# Gone, or a zombie (which kill still reaches) until waited for.
		case $(awk '{ sub(/.*\) /, ""); print $1 }' "/proc/$TPID/stat" 2> /dev/null) in
		Z | "") break ;;
		esac
		kill -INT "$TPID"
	done
	rc=0
	wait "$TPID" || rc=$?
	TPID=
	echo "exit $rc"
	[ "$rc" -eq 130 ]
}

@test "hostile: a container's symlink cannot put funclatency's probes on a host file" {
	require_bpf
	# A root of its own: the funcs workload and what it links, nothing else.
	mkdir -p "$T/root/bin" "$T/root/lib"
	cp "$WL/funcs" "$T/root/bin/funcs"
	for lib in $(ldd "$WL/funcs" | grep -o '/[^ ]*'); do
		mkdir -p "$T/root$(dirname "$lib")"
		cp "$lib" "$T/root$lib"
	done
	# Inside it, a "library" that points at a path only the host has.
	ln -s "$WL/funcs" "$T/root/lib/evil.so"
	: > "$T/work"
	chroot "$T/root" /bin/funcs > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
	run timeout 120 "$BIN/funclatency" -d 1 -p "$WPID" /lib/evil.so:fast_func
	assert_failure 1
	assert_output "funclatency: /lib/evil.so: No such file or directory (as the process sees its file system)"
	# What is in its root is found there.
	run timeout 120 "$BIN/funclatency" -d 1 -p "$WPID" /bin/funcs:fast_func
	assert_success
	assert_output --partial 'Tracing 1 function'
}

# nofp_inline ELF: starts "ELF inline 0" (until stopped), and sets ADDR to
# an address of the process inside calls inlined into nofp_inline_host.
nofp_inline() {
	start "$1" inline 0
	local base v
	base=$(awk -v b="$1" '$3 == "00000000" && $6 == b { split($1, r, "-"); print r[1]; exit }' /proc/$WPID/maps)
	v=$(nm "$1" | awk '$3 == "nofp_inline_host" { print $1 }')
	ADDR=$(printf '%x' $((0x$base + 0x$v + 0x30)))
}

@test "hostile: DWARF that is garbage, or claims a terabyte, names no inlined calls and costs nothing" {
	mkdir -p "$T/bin"
	cp "$WL/nofp" "$WL/libnofplib.so" "$T/bin/"
	nofp_inline "$T/bin/nofp"
	run "$S" -i "$WPID" "$ADDR"
	assert_output --regexp '^nofp_inline_host\+0x30 \[nofp\] \(inlined: nofp_inl_b, nofp_inl_a\)$'
	stop_bg "$WPID"

	# Random bytes for .debug_info: libdw finds no units, or nonsense ones.
	objcopy --dump-section .debug_info="$T/info" "$WL/nofp" "$T/scratch"
	head -c "$(stat -c %s "$T/info")" /dev/urandom > "$T/junk"
	objcopy --update-section .debug_info="$T/junk" "$WL/nofp" "$T/bin/nofp"
	nofp_inline "$T/bin/nofp"
	run timeout 60 "$S" -i "$WPID" "$ADDR"
	assert_success
	assert_output --regexp '^nofp_inline_host\+0x30 \[nofp\]'
	stop_bg "$WPID"

	# A compressed .debug_info whose header says it inflates to 1 TiB.
	objcopy --compress-debug-sections=zlib "$WL/nofp" "$T/bin/nofp"
	python3 - "$T/bin/nofp" <<'PY'
import struct, sys
f = open(sys.argv[1], "r+b"); d = f.read()
shoff, = struct.unpack_from("<Q", d, 0x28)
shentsize, shnum, shstrndx = struct.unpack_from("<HHH", d, 0x3a)
sec = lambda i: struct.unpack_from("<IIQQQQ", d, shoff + i * shentsize)
stroff = sec(shstrndx)[4]
for i in range(shnum):
    name, typ, flags, addr, off, size = sec(i)
    if d[stroff + name:].split(b"\0")[0] == b".debug_info":
        assert flags & 0x800, "not compressed"
        f.seek(off + 8); f.write(struct.pack("<Q", 1 << 40))
PY
	nofp_inline "$T/bin/nofp"
	run timeout 60 /usr/bin/time -f 'peak %M KiB' "$S" -i "$WPID" "$ADDR"
	assert_success
	assert_line --index 0 --regexp '^nofp_inline_host\+0x30 \[nofp\]$'
	peak=$(awk '/^peak / { print $2 }' <<<"$output")
	echo "peak $peak KiB"
	[ "$peak" -lt "$(mem_bound)" ]
}

@test "hostile: a dwz alt file is opened by the symbolizer, a regular file with the right build-id, never a FIFO" {
	mkdir -p "$T/bin" "$T/alt"
	cp "$WL/nofp" "$WL/libnofplib.so" "$T/bin/"
	cp "$WL/nofp" "$T/bin/nofp2"
	# What the two share goes to one file, which both name by path and build-id:
	# the inlined calls' names among it (DW_FORM_GNU_strp_alt).
	dwz -m "$T/alt/common.debug" -M "$T/alt/common.debug" "$T/bin/nofp" "$T/bin/nofp2"
	readelf -wi "$T/bin/nofp" | grep -q 'alt indirect string, offset: .*nofp_inl_b'
	nofp_inline "$T/bin/nofp"
	run timeout 120 "$S" -i "$WPID" "$ADDR"
	assert_success
	assert_output --regexp '^nofp_inline_host\+0x30 \[nofp\] \(inlined: nofp_inl_b, nofp_inl_a\)$'
	stop_bg "$WPID"
	# A FIFO in its place hung libdw, which opened it itself; another file of
	# the same name is not the one the build-id says.
	mv "$T/alt/common.debug" "$T/alt/real.debug"
	mkfifo "$T/alt/common.debug"
	nofp_inline "$T/bin/nofp"
	run timeout 120 "$S" -i "$WPID" "$ADDR"
	assert_success
	assert_output --regexp '^nofp_inline_host\+0x30 \[nofp\]$'
	stop_bg "$WPID"
	rm "$T/alt/common.debug"
	cp "$WL/nofp" "$T/alt/common.debug"
	nofp_inline "$T/bin/nofp"
	run timeout 120 "$S" -i "$WPID" "$ADDR"
	assert_success
	assert_output --regexp '^nofp_inline_host\+0x30 \[nofp\]$'
}

@test "hostile: sizes and periods beyond what the machine can give are refused at once" {
	require_bpf
	# 16M stack slots would take some 18 GB of kernel memory; the 1 s run
	# used to take 15-60 s to set up, on a 24 GB machine.
	for t in profile offcputime offwaketime; do
		run timeout 10 "$BIN/$t" --stack-storage-size 16777216 1
		assert_failure 1
		assert_output --regexp "^$t: --stack-storage-size 16777216 would take [0-9.]+ GB of kernel memory, and this machine has [0-9.]+ GB available: at most [0-9]+ \(a quarter of it\)$"
	done
	# A sample every nanosecond: more than the kernel's sample rate allows.
	run timeout 10 "$BIN/profile" -c 1 1
	assert_failure 1
	assert_output --partial "profile: -c 1 is too short: the kernel samples at most"
	run timeout 10 "$BIN/profile" --unwind-memory 100000 1
	assert_failure 2
	assert_output --partial "expected a whole number from 1 to 65536"
}
