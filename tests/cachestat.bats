#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# cachestat's verdicts on a file of known size: a cold read misses, a warm
# read hits, a write dirties. Counts are pages (4 KiB).

load helpers

FILE_MB=64
PAGES=$((FILE_MB * 256))

setup_file() {
	[ "$(id -u)" = 0 ] || return 0
	export DATA=$BATS_FILE_TMPDIR/data
	dd if=/dev/urandom of="$DATA" bs=1M count=$FILE_MB status=none
	sync
}

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${CPID:-} ${LPID:-} ${RPID:-} ${READERS:-}
	assert_nothing_loaded cachestat
}

# Starts cachestat with the arguments (and --json) in the background (CPID),
# once it has said on stderr that it traces.
start_json() {
	: > "$T/cs"
	: > "$T/cs.err"
	"$BIN/cachestat" "$@" --json > "$T/cs" 2> "$T/cs.err" &
	CPID=$!
	wait_for_line "$T/cs.err" '^Tracing' 120
}

# Runs command "$@" while cachestat -P (with $CS_ARGS) counts, then prints
# the JSON line of that command's process only: the machine is shared, and
# other processes' page-cache traffic would drown a system-wide count.
measure() {
	start_json ${CS_ARGS:-} -P --top 0 600
	"$@" > /dev/null &
	local wpid=$!
	wait $wpid || fail "$* failed"
	kill -INT "$CPID"
	wait "$CPID" || fail "cachestat exited $?: $(cat "$T/cs.err")"
	CPID=
	jq -c --argjson p "$wpid" 'select(.pid == $p)' "$T/cs"
}

drop_caches() {
	sync
	echo 3 > /proc/sys/vm/drop_caches
}

# This VM's host reclaims page cache within seconds (a DAMON kdamond), so the
# pages are locked in memory first: otherwise a "warm" read is partly cold.
lock_pages() {
	: > "$T/lock"
	"$WL/pagelock" "$DATA" > "$T/lock" &
	LPID=$!
	wait_for_line "$T/lock" locked 30
}

# Tolerances: dd's own start (its binary, libraries and locale files) looks
# up a few hundred pages; a read of N pages may add up to 2% in readahead
# past what it asked for.
assert_cold_verdict() {
	local misses ratio
	misses=$(jq .misses <<<"$1")
	ratio=$(jq '.hitratio | floor' <<<"$1")
	[ -n "$misses" ] || fail "no line for the reader: $(cat "$T/cs.err")"
	[ "$misses" -ge $((PAGES * 98 / 100)) ] && [ "$misses" -le $((PAGES * 105 / 100)) ] ||
		fail "cold read: $misses misses for $PAGES pages: $1"
	[ "$ratio" -lt 15 ] || fail "cold read: hit ratio $ratio%: $1"
}

assert_warm_verdict() {
	local misses hits ratio
	hits=$(jq .hits <<<"$1")
	misses=$(jq .misses <<<"$1")
	ratio=$(jq '.hitratio | floor' <<<"$1")
	[ -n "$hits" ] || fail "no line for the reader: $(cat "$T/cs.err")"
	[ "$hits" -ge $((PAGES * 98 / 100)) ] && [ "$hits" -le $((PAGES * 110 / 100)) ] ||
		fail "warm read: $hits hits for $PAGES pages: $1"
	[ "$misses" -lt 300 ] || fail "warm read: $misses misses: $1"
	[ "$ratio" -ge 95 ] || fail "warm read: hit ratio $ratio%: $1"
}

@test "cachestat: a cold read misses about once per page, with a low hit ratio" {
	require_bpf
	drop_caches
	run measure dd if="$DATA" of=/dev/null bs=1M status=none
	assert_success
	assert_cold_verdict "$output"
}

@test "cachestat: a warm read hits about once per page, ratio near 100%" {
	require_bpf
	lock_pages
	run measure dd if="$DATA" of=/dev/null bs=1M status=none
	assert_success
	assert_warm_verdict "$output"
}

@test "cachestat: writing and fsyncing 16 MiB dirties about 4096 pages" {
	require_bpf
	run measure dd if=/dev/zero of="$T/written" bs=1M count=16 conv=fsync status=none
	assert_success
	dirties=$(jq .dirties <<<"$output")
	[ "$dirties" -ge 4096 ] && [ "$dirties" -le 4600 ] || fail "dirties $dirties: $output"
	# Pages a write inserts are not read misses.
	misses=$(jq .misses <<<"$output")
	[ "$misses" -lt 300 ] || fail "misses $misses: $output"
}

@test "cachestat counts the pages a read gets, not the buffer it asks with" {
	require_bpf
	# 3 pages read 1000 times with a 1 MiB buffer: 3000 lookups, not 256000;
	# loading the program itself adds up to about 1000 (fault-around windows).
	head -c 10000 /dev/urandom > "$T/small"
	cat "$T/small" > /dev/null
	run measure "$WL/reread" "$T/small" 1000 1048576
	assert_success
	hits=$(jq .hits <<<"$output")
	[ "$hits" -ge 3000 ] && [ "$hits" -le 4000 ] || fail "small file: $hits hits: $output"
	# One 64 MiB read() fills hundreds of batches; each page counts once.
	lock_pages
	run measure "$WL/reread" "$DATA" 1 $((FILE_MB << 20))
	assert_success
	hits=$(jq .hits <<<"$output")
	[ "$hits" -ge "$PAGES" ] && [ "$hits" -le $((PAGES + 1000)) ] ||
		fail "one large read: $hits hits for $PAGES pages: $output"
}

@test "cachestat -v names the method; every method the kernel has gives the same verdicts" {
	require_bpf
	run "$BIN/cachestat" -v 1 1
	assert_success
	assert_output --partial "counting with the filemap and writeback tracepoints"
	for method in tracepoint fentry kprobe; do
		if ! "$BIN/cachestat" --method $method 1 1 > "$T/probe" 2>&1; then
			# A method this kernel lacks must say why, by name.
			grep -qE "^cachestat: kernel (refuses fentry|has no kprobes|has no filemap tracepoints|has none of)" "$T/probe" ||
				fail "--method $method failed without a reason: $(cat "$T/probe")"
			continue
		fi
		drop_caches
		CS_ARGS="--method $method" run measure dd if="$DATA" of=/dev/null bs=1M status=none
		assert_cold_verdict "$output"
		lock_pages
		CS_ARGS="--method $method" run measure dd if="$DATA" of=/dev/null bs=1M status=none
		assert_warm_verdict "$output"
		stop_bg $LPID
	done
}

@test "cachestat -p PID counts that process only, on the usual line" {
	require_bpf
	lock_pages
	mkfifo "$T/go"
	sh -c "read x < '$T/go'; exec dd if='$DATA' of=/dev/null bs=1M status=none" &
	RPID=$!
	start_json -p "$RPID" 600
	echo go > "$T/go"
	wait "$RPID"
	kill -INT "$CPID"; wait "$CPID"; CPID=
	assert_warm_verdict "$(tail -1 "$T/cs")"
	run jq -e 'has("cached_mb") and has("buffers_mb")' "$T/cs"
	assert_success
}

@test "cachestat -P prints a line per process, the busiest first, named after exec" {
	require_bpf
	lock_pages
	# Every process (--top 0): on a busy machine others' lookups would
	# crowd dd out of the default 20.
	: > "$T/out"
	"$BIN/cachestat" -P --top 0 > "$T/out" 2>&1 &
	CPID=$!
	wait_for_line "$T/out" Tracing 120
	dd if="$DATA" of=/dev/null bs=1M status=none &
	DPID=$!
	wait $DPID
	kill -INT "$CPID"; wait "$CPID"; CPID=
	run grep -m1 -E '^ +PID COMM +HITS +MISSES +DIRTIES HITRATIO$' "$T/out"
	assert_success
	# dd's line by its pid (two, if its read straddled a second's report).
	run awk -v p="$DPID" '$1 == p { n += $3; name[$2] } END { for (c in name) printf "%s ", c; print (n >= 16000) }' "$T/out"
	assert_output "dd 1"
	# Sorted by lookups, most first, in every interval; --top caps the rows.
	# A quiet machine may do no page cache lookups at all for seconds, so
	# readers of our own keep every interval busy: each dd and sleep they
	# start is a process with lookups, dozens a second however slow the
	# machine, so every report has its 5 rows. Reports are told apart by
	# that count, not by their -T times: those are whole seconds, and a
	# report held up past its second shares it with the next.
	for i in 1 2 3 4 5 6 7; do
		(while :; do dd if="$DATA" of=/dev/null bs=64k count=$((i * 8)) status=none; sleep 0.05; done) &
		READERS="$READERS $!"
	done
	"$BIN/cachestat" -P -T --top 5 --json 1 3 > "$T/json" 2>/dev/null
	kill $READERS; wait $READERS 2>/dev/null || true; READERS=
	[ "$(jq -s length "$T/json")" -eq 15 ] ||
		fail "expected 3 intervals of 5 rows: $(cat "$T/json")"
	jq -e -s '[range(0; 15; 5) as $i | .[$i:$i + 5]] | all((map(.time) | unique | length) == 1 and
		(map(.accessed) as $a | $a == ($a | sort | reverse)))' "$T/json" ||
		fail "-P rows not sorted or not capped: $(cat "$T/json")"
}

@test "cachestat prints bcc's columns every second by default, and -T times" {
	require_bpf
	: > "$T/out"
	"$BIN/cachestat" > "$T/out" &
	CPID=$!
	# Two rows, a second apart, before the last at Ctrl-C.
	row='^ +[0-9]+ +[0-9]+ +[0-9]+ +[0-9.]+% +[0-9]+ +[0-9]+$'
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -cE "$row" "$T/out")" -ge 2 ] && break
		sleep 0.2
	done
	kill -INT "$CPID"; wait "$CPID"; CPID=
	run head -1 "$T/out"
	assert_output "    HITS   MISSES  DIRTIES HITRATIO   BUFFERS_MB  CACHED_MB"
	[ "$(grep -cE "$row" "$T/out")" -ge 3 ]
	run "$BIN/cachestat" -T 1 2
	assert_success
	assert_line --index 0 --regexp '^TIME +HITS +MISSES'
	[ "$(grep -cE '^[0-2][0-9]:[0-5][0-9]:[0-5][0-9] +[0-9]+' <<<"$output")" -eq 2 ]
}

@test "cachestat --json lines carry the columns; buffers and cached match /proc/meminfo" {
	require_bpf
	# The page cache of a busy machine moves by the second: what the tool
	# read must be within 64 MB of what /proc/meminfo said around its run.
	before=$(awk '/^Cached:/ { print int($2 / 1024) }' /proc/meminfo)
	"$BIN/cachestat" --json -T 1 2 > "$T/json" 2> "$T/err" || fail "cachestat failed: $(cat "$T/err")"
	after=$(awk '/^Cached:/ { print int($2 / 1024) }' /proc/meminfo)
	jq -e -s 'length == 2 and all(.[]; has("hits") and has("misses") and
		has("dirties") and has("hitratio") and .cached_mb > 0 and (.time | length) == 8)' "$T/json"
	# Its banner on stderr, so that stdout is JSON only.
	run grep -c '^Tracing page cache lookups\.\.\. Hit Ctrl-C to end\.$' "$T/err"
	assert_output 1
	json_cached=$(tail -1 "$T/json" | jq .cached_mb)
	lo=$((before < after ? before : after)) hi=$((before > after ? before : after))
	echo "cached: $json_cached MB by cachestat, $before then $after MB by /proc/meminfo"
	[ "$json_cached" -ge $((lo - 64)) ]
	[ "$json_cached" -le $((hi + 64)) ]
}

@test "cachestat: bad usage exits 2; no privileges exits 1" {
	run "$BIN/cachestat" --method magic
	assert_failure 2
	assert_output --partial "invalid method 'magic'"
	run "$BIN/cachestat" 0
	assert_failure 2
	assert_output --partial "invalid interval '0'"
	run "$BIN/cachestat" -P --top x
	assert_failure 2
	assert_output --partial "invalid number of processes 'x'"
	run "$BIN/cachestat" --no-such-option
	assert_failure 2
	assert_output "cachestat: unrecognized option '--no-such-option'
Try \`cachestat --help' or \`cachestat --usage' for more information."
	require_bpf
	run "$BIN/cachestat" -p 999999999
	assert_failure 1
	assert_output "cachestat: pid 999999999: no such process"
	run setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=-all "$BIN/cachestat" 1 1
	assert_failure 1
	assert_output "cachestat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}

@test "cachestat --top without -P is said to be ignored" {
	run unprivileged "$BIN/cachestat" --top 5 1 1
	assert_failure 1
	assert_output "cachestat: without -P there are no per-process lines; --top is ignored
cachestat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
	run unprivileged "$BIN/cachestat" -P --top 5 1 1
	assert_output "cachestat: need root (or CAP_BPF and CAP_PERFMON); try sudo"
}
