#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# --prometheus: a real Prometheus server (Debian's, with a configuration and
# storage of the test's own) scrapes the histogram tools every second while
# workloads of known counts, rates and latencies run, and its query API must
# give those figures back; promtool checks each exposition; hostile clients
# must stall neither the tool nor the scrapes.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
}

teardown() {
	stop_bg ${WPID:-} ${XPID:-} ${PPID_PROM:-} ${HPID:-}
	[ -z "${LOOP:-}" ] || losetup -d "$LOOP"
	assert_nothing_loaded runqlat biolatency funclatency readdirlat cachestat
}

# Debian's python3, not whatever is first in PATH (a version manager's
# shim costs 0.4 s and more a call).
PY=/usr/bin/python3

free_port() {
	"$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# What udev does with a new loop device (blkid's reads, if it runs) is over.
settle_udev() {
	if [ -S /run/udev/control ]; then
		udevadm settle --timeout=120
	fi
}

# exporter TOOL ARGS...: TOOL ARGS --prometheus 0 in the background (XPID),
# its port in PORT once it serves and traces.
exporter() {
	local tool=$1
	shift
	: > "$T/x.out"
	: > "$T/x.err"
	"$BIN/$tool" "$@" --prometheus 0 > "$T/x.out" 2> "$T/x.err" &
	XPID=$!
	wait_for_line "$T/x.out" '^Serving Prometheus metrics at http://127\.0\.0\.1:[0-9]+/metrics$' 120
	PORT=$(sed -n 's|^Serving .*:\([0-9]*\)/metrics$|\1|p' "$T/x.out")
	# It serves from the start; it traces from its banner on.
	wait_for_line "$T/x.out" '^Tracing' 120
}

# Ends the exporter with SIGTERM: exit 0, in time (a minute: a hang is what
# this catches, not a loaded machine's slowness).
stop_exporter() {
	kill -TERM "$XPID"
	timeout 60 tail --pid="$XPID" -f /dev/null || fail "the exporter still runs 60 s after SIGTERM"
	wait "$XPID"
	RC=$?
	XPID=
	[ "$RC" -eq 0 ] || fail "exporter exit $RC: $(cat "$T/x.err")"
}

# A Prometheus server scraping the exporter every second (PPID_PROM, PPORT).
prometheus_start() {
	PPORT=$(free_port)
	cat > "$T/prom.yml" <<-EOF
	global:
	  scrape_interval: 1s
	  scrape_timeout: 1s
	scrape_configs:
	  - job_name: bpfscope
	    static_configs:
	      - targets: ['127.0.0.1:$PORT']
	EOF
	: > "$T/prom.log"
	prometheus --config.file="$T/prom.yml" --storage.tsdb.path="$T/tsdb" \
		--web.listen-address="127.0.0.1:$PPORT" --log.level=warn > "$T/prom.log" 2>&1 &
	PPID_PROM=$!
	for ((i = 0; i < 1200; i++)); do
		curl -sf "http://127.0.0.1:$PPORT/-/ready" > /dev/null && break
		sleep 0.1
	done
	curl -sf "http://127.0.0.1:$PPORT/-/ready" > /dev/null || fail "prometheus not ready: $(cat "$T/prom.log")"
}

# promql EXPR [TIME]: the value of the first series EXPR gives, or "none".
promql() {
	curl -sf --data-urlencode "query=$1" ${2:+--data-urlencode "time=$2"} \
		"http://127.0.0.1:$PPORT/api/v1/query" | jq -r '.data.result[0].value[1] // "none"'
}

# until_scraped EXPR VALUE: waits (a minute at most) until Prometheus has
# scraped EXPR at VALUE, so what the workload did has been collected and scraped.
until_scraped() {
	local v
	for ((i = 0; i < 300; i++)); do
		v=$(promql "$1")
		[ "$v" = "$2" ] && return 0
		sleep 0.2
	done
	fail "$1 is $v in Prometheus, expected $2; the exporter says: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -v _bucket)"
}

# exported SERIES: its value on the exporter's page now ("none" if absent);
# SERIES is the name and labels as exposed.
exported() {
	curl -s "http://127.0.0.1:$PORT/metrics" |
		awk -v s="$1" 'index($0, s " ") == 1 { v = $NF } END { print v == "" ? "none" : v }'
}

# until_exported REGEX: waits (a minute at most) until a line of the
# exporter's page matches REGEX: what the test did has been collected.
until_exported() {
	for ((i = 0; i < 300; i++)); do
		curl -s "http://127.0.0.1:$PORT/metrics" | grep -qE "$1" && return 0
		sleep 0.2
	done
	fail "no line '$1' from the exporter in a minute: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -v _bucket)"
}

# collected N: waits (a minute at most) until the exporter's page has
# changed N times, so it has collected N times at least: for a tool that
# counts something every second on any machine (runqlat system-wide: each
# curl here waits for a CPU).
collected() {
	local n=0 prev now
	prev=$(curl -s "http://127.0.0.1:$PORT/metrics" | md5sum)
	for ((i = 0; i < 300 && n < $1; i++)); do
		sleep 0.2
		now=$(curl -s "http://127.0.0.1:$PORT/metrics" | md5sum)
		[ "$now" = "$prev" ] || n=$((n + 1))
		prev=$now
	done
	[ "$n" -ge "$1" ] || fail "the exporter's page changed $n times in a minute, not $1"
}

# until_above SERIES N: waits (a minute at most) until the exporter's
# SERIES is above N.
until_above() {
	local v
	for ((i = 0; i < 300; i++)); do
		v=$(exported "$1")
		[ "$v" != none ] && [ "$v" -gt "$2" ] && return 0
		sleep 0.2
	done
	fail "$1 is $v, not above $2, after a minute"
}

# until_counted TOOL SERIES N: waits (a minute at most) until the exporter's
# SERIES and the events the kernel did not run TOOL's programs for add up to
# N, then sets COUNTED and MISSED to them.
until_counted() {
	local missed="bpfscope_$1_lost_total{reason=\"events_untraced_program_already_running\"}"
	for ((i = 0; i < 300; i++)); do
		COUNTED=$(exported "$2")
		MISSED=$(exported "$missed")
		[ "$COUNTED" != none ] && [ "$MISSED" != none ] && [ $((COUNTED + MISSED)) -ge "$3" ] && return 0
		sleep 0.2
	done
}

# The exposition as served, checked by promtool (which prints nothing when it is happy).
check_exposition() {
	curl -sf "http://127.0.0.1:$PORT/metrics" > "$T/metrics"
	run promtool check metrics < "$T/metrics"
	assert_success
	assert_output ""
}

# Seconds as a float, for comparisons in awk.
within() {	# within VALUE LOW HIGH
	awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v != "none" && v + 0 >= lo && v + 0 <= hi) }' ||
		fail "$1 is not within [$2, $3]"
}

@test "prometheus: funclatency's median from histogram_quantile is in the bucket of a 10 ms function, count exact" {
	require_bpf
	: > "$T/w"
	"$WL/funcs" > "$T/w" &
	WPID=$!
	wait_for_line "$T/w" '^pid '
	exporter funclatency -p "$WPID" "$WL/funcs:slow_func"
	prometheus_start
	until_scraped 'bpfscope_funclatency_call_seconds_count' 0
	kill -USR1 "$WPID"
	wait_for_line "$T/w" '^done' 120
	until_scraped 'bpfscope_funclatency_call_seconds_count' 20
	# 20 sleeps of 10 ms: all in (8.192, 16.384] ms on a quiet machine, so
	# Prometheus interpolates the median to 12.288 ms. A loaded one wakes a
	# sleeper late now and then: the median's bucket is at most that of the
	# workload's own median (its 10th call of 20 by its clock, which times
	# each call around the tool's reading of it), and no call sleeps less
	# than 10 ms. The sum is the workload's, less the probes' own cost
	# (1 ms a call at most), plus the microseconds it truncates.
	t10=$(awk '$1 == "slow" { print $2 }' "$T/w" | sort -n | sed -n 10p)
	hi=$(awk -v t="$t10" 'BEGIN { b = 16384; while (b <= t) b *= 2; printf "%.6f", b / 1e6 }')
	sum=$(awk '$1 == "slow" { s += $2 } END { print s / 1e6 }' "$T/w")
	v=$(promql 'histogram_quantile(0.5, bpfscope_funclatency_call_seconds_bucket)')
	echo "median $v; the workload's $t10 us (bucket up to $hi s), its sum $sum s"
	within "$v" 0.008192 "$hi"
	within "$(promql 'bpfscope_funclatency_call_seconds_sum')" \
		"$(awk -v s="$sum" 'BEGIN { print s - 0.020 }')" "$(awk -v s="$sum" 'BEGIN { print s + 0.001 }')"
	run promql 'bpfscope_funclatency_call_seconds_count{function="'"$WL/funcs:slow_func"'"}'
	assert_output 20
	check_exposition
	stop_exporter
}

@test "prometheus: biolatency -D, rate(_count) of 50 requests a second on a loop device, and its exact total" {
	require_bpf
	truncate -s 16M "$T/img"
	LOOP=$(losetup -f --show "$T/img")
	settle_udev
	exporter biolatency -D
	prometheus_start
	# One read first, so that the disk's series is there, scraped, before the rest.
	count="bpfscope_biolatency_io_seconds_count{disk=\"${LOOP#/dev/}\"}"
	"$WL/dio" "$LOOP" read 1 4096 0 > /dev/null
	until_scraped "$count" 1
	# 500 reads of 4 KiB, 20 ms apart: 10 s at a little under 50 a second,
	# each one's time by the workload's clock.
	"$WL/dio" "$LOOP" read 500 4096 20 > "$T/dio"
	# Every request: each scrape takes the histograms while BPF goes on
	# counting. Deleting entries as they were read lost an update now and
	# then (one of 300 in 2 of 3 suite runs); the maps are swapped now. But
	# for what the exporter says the kernel did not trace: a completion on
	# another disk, in an interrupt, while the program ran for this one on
	# that CPU (1 of 301 in CI, beside the matrix's guests writing theirs).
	until_counted biolatency "$count" 501
	echo "$COUNTED of 501 requests counted, $MISSED events of all disks untraced"
	[ "$COUNTED" -le 501 ] || fail "$count is $COUNTED; the exporter says: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -v _bucket)"
	[ $((COUNTED + MISSED)) -ge 501 ] || fail "$count is $COUNTED; the exporter says: $(curl -s "http://127.0.0.1:$PORT/metrics" | grep -v _bucket)"
	until_scraped "$count" "$COUNTED"
	# rate() over 6 s in the middle of the run, against the workload's own
	# rate over the same span: a loaded machine's sleeps run long now and
	# then, so its rate is not steady. A scrape shows what the exporter
	# collected up to a second and more before: the workload's rates over
	# that span moved back by 0 to 1.5 s bound it, each give or take 20%
	# (the collections' and the scrapes' own jitter).
	first=$(awk '$1 == "done" { print $2; exit }' "$T/dio")
	last=$(awk '$1 == "done" { t = $2 } END { print t }' "$T/dio")
	mid=$(awk -v s="$first" -v e="$last" 'BEGIN { printf "%.3f", (s + e) / 2 + 3 }')
	read -r lo hi < <(awk -v m="$mid" '$1 == "done" { t[n++] = $2 } END {
		for (l = 0; l <= 1.5; l += 0.1) {
			k = 0
			for (i = 0; i < n; i++)
				k += t[i] > m - 6 - l && t[i] <= m - l
			r = k / 6
			if (lo == "" || r < lo) lo = r
			if (hi == "" || r > hi) hi = r
		}
		print lo * 0.8, hi * 1.2 }' "$T/dio")
	v=$(promql "rate($count[6s])" "$mid")
	echo "rate $v, the workload's $lo to $hi (with 20% each way)"
	within "$v" "$lo" "$hi"
	# A loop device's O_DIRECT read of 4 KiB takes well under 20 ms here.
	within "$(promql "histogram_quantile(0.5, bpfscope_biolatency_io_seconds_bucket{disk=\"${LOOP#/dev/}\"})")" 0.000001 0.02
	check_exposition
	stop_exporter
}

@test "prometheus: runqlat -L counts every wakeup of a sleeper, labelled by tid and comm" {
	require_bpf
	: > "$T/w"
	"$WL/runq_contend" -g -M -n 100 -s 2 > "$T/w" &
	WPID=$!
	wait_for_line "$T/w" '^pid '
	exporter runqlat -L -p "$WPID"
	prometheus_start
	until_scraped 'up' 1
	kill -USR1 "$WPID"
	wait "$WPID"
	WPID=
	tid=$(awk '/^sleeper/ { print $2 }' "$T/w")
	blocked=$(awk '/^sleeper/ { print $6 }' "$T/w")
	preempted=$(awk '/^sleeper/ { print $8 }' "$T/w")
	# The workload's last thread, new to the exporter, ran after all the
	# sleeper's waits: once the exporter shows it, it has collected them.
	marker=$(awk '/^marker/ { print $2 }' "$T/w")
	until_exported "^bpfscope_runqlat_wait_seconds_count\\{tid=\"$marker\","
	series="bpfscope_runqlat_wait_seconds_count{tid=\"$tid\",comm=\"runq_contend\"}"
	until_scraped "$series" "$(exported "$series")"
	n=$(promql "$series")
	echo "sleeper $tid: $n waits"
	# Its sleeps that blocked and first wakeup, and its preemptions,
	# less the waits the exporter said it lost.
	short=$(curl -s "http://127.0.0.1:$PORT/metrics" |
		awk '/^bpfscope_runqlat_lost_total\{reason="(waits_dropped_switch_untraced|wakeups_untimed_full_map|events_untraced_program_already_running)"\}/ { n += $2 } END { print n + 0 }')
	sleeper_counted "$n" "$blocked" "$short" "$preempted"
	check_exposition
	stop_exporter
}

# tens TID: the waits of 8.192-16.384 ms runqlat's exporter counted for thread TID.
tens() {
	curl -s "http://127.0.0.1:$PORT/metrics" | awk -v t="tid=\"$1\"," '
		index($0, "bpfscope_runqlat_wait_seconds_bucket{" t) != 1 { next }
		/le="0[.]016384"/ { n += $NF }
		/le="0[.]008192"/ { n -= $NF }
		END { print n + 0 }'
}

@test "prometheus: runqlat's median from histogram_quantile is the 10 ms a spinner waits behind a SCHED_FIFO thread, each wait counted" {
	require_bpf
	# On CPU 0, a SCHED_FIFO 1 spinner and a SCHED_FIFO 2 hog that spins
	# 10 ms then sleeps 5 ms, 266 rounds: each time the hog wakes it takes
	# the CPU from the spinner, which waits the 10 ms runnable. At priority
	# 1 the spinner is preempted by nothing else the machine runs but the
	# kernel's threads above it and its share for normal tasks (the fair
	# server, or RT throttling: 50 ms a second), which the spinner's own
	# clock sees as its other waits. So the median of its waits is in the
	# (8.192, 16.384] ms bucket, and the exporter's count there is the
	# spinner's own: each gap in its clock with a preemption in it, as long
	# as the scheduler says it waited in the gap (its schedstat; the gap
	# itself, longer by an interrupt or the hypervisor before the switch,
	# once put one wait of the bucket above it). But for waits within
	# microseconds of either bound (the two clocks' readings), those the
	# tool said it dropped (docs/known-issues.md), and waits the spinner saw
	# as one: switched in and out again before it got back to its clock.
	: > "$T/w"
	"$WL/runq_contend" -g -F -M -n 266 > "$T/w" &
	WPID=$!
	wait_for_line "$T/w" '^pid '
	exporter runqlat -L -p "$WPID"
	prometheus_start
	until_scraped 'up' 1
	kill -USR1 "$WPID"
	wait "$WPID" || fail "the workload failed: $(cat "$T/w")"
	WPID=
	cat "$T/w"
	read -r _ spinner _ own _ near8 _ near16 _ merged < <(grep '^spinner ' "$T/w")
	rounds=$(awk '/^hog/ { print $4 }' "$T/w")
	# Its last thread ran after the spinner's end: once the exporter shows
	# it, it has collected all the spinner's waits.
	marker=$(awk '/^marker/ { print $2 }' "$T/w")
	until_exported "^bpfscope_runqlat_wait_seconds_count\\{tid=\"$marker\","
	ten=$(tens "$spinner")
	all=$(exported "bpfscope_runqlat_wait_seconds_count{tid=\"$spinner\",comm=\"runq_contend\"}")
	until_scraped "bpfscope_runqlat_wait_seconds_count{tid=\"$spinner\"}" "$all"
	v=$(promql "histogram_quantile(0.5, bpfscope_runqlat_wait_seconds_bucket{tid=\"$spinner\"})")
	untraced=$(exported 'bpfscope_runqlat_lost_total{reason="waits_dropped_switch_untraced"}')
	echo "median $v; $ten of $all waits in 8-16 ms, $own by the spinner's count ($near8 and $near16 near the bounds, $merged merged), $rounds rounds, $untraced dropped"
	# The workload did what the test is about: most rounds were a wait of
	# 8-16 ms (a round the kernel's share for normal tasks cut into is longer).
	[ $((own * 2)) -gt "$rounds" ]
	within "$v" 0.008192 0.016384
	[ "$ten" -ge $((own - near8 - untraced - merged)) ]
	[ "$ten" -le $((own + near16 + merged)) ]
	check_exposition
	stop_exporter
}

@test "prometheus: biolatency -Q exports queue-and-service time under a name of its own" {
	require_bpf
	truncate -s 16M "$T/img"
	LOOP=$(losetup -f --show "$T/img")
	settle_udev
	exporter biolatency -D -Q
	"$WL/dio" "$LOOP" read 50 4096 > /dev/null
	# All 50, but for events the kernel did not run the program for (see
	# the test of the exact total).
	until_counted biolatency "bpfscope_biolatency_queued_io_seconds_count{disk=\"${LOOP#/dev/}\"}" 50
	echo "$COUNTED of 50 requests counted, $MISSED events of all disks untraced"
	[ "$COUNTED" -le 50 ]
	[ $((COUNTED + MISSED)) -ge 50 ]
	check_exposition
	run grep -E '^bpfscope_biolatency_queued_io_seconds_count\{disk="'"${LOOP#/dev/}"'"\} '"$COUNTED"'$' "$T/metrics"
	assert_success
	run grep -F '# HELP bpfscope_biolatency_queued_io_seconds Block I/O latency including the time queued in the OS (-Q)' "$T/metrics"
	assert_success
	# Never the name of the device's service time alone, which means something else.
	run grep -c '^bpfscope_biolatency_io_seconds' "$T/metrics"
	assert_output 0
	stop_exporter
}

@test "prometheus: label sets beyond --prometheus-series are added up in [other], and counted" {
	require_bpf
	exporter cachestat -P --prometheus-series 3
	for i in $(seq 8); do cat "$BIN/runqlat" > /dev/null; done
	# Collected: eight processes of ours, more than three.
	until_exported '^bpfscope_cachestat_folded_total\{metric="bpfscope_cachestat_lookups_total"\} [1-9]'
	check_exposition
	# Three processes of their own, the rest together.
	run grep -c '^bpfscope_cachestat_lookups_total{pid="[0-9]*"' "$T/metrics"
	assert_output 3
	assert_line --index 0 3
	run grep -E '^bpfscope_cachestat_lookups_total\{pid="\[other\]",comm="\[other\]"\} [1-9]' "$T/metrics"
	assert_success
	run grep -E '^bpfscope_cachestat_folded_total\{metric="bpfscope_cachestat_lookups_total"\} [1-9]' "$T/metrics"
	assert_success
	# Counters never go back: across a collection, which folds new label
	# sets again (each curl here is a process with lookups of its own).
	a=$(awk '/^bpfscope_cachestat_lookups_total\{pid="\[other\]"/ { print $2 }' "$T/metrics")
	f=$(awk '/^bpfscope_cachestat_folded_total\{metric="bpfscope_cachestat_lookups_total"\}/ { print $2 }' "$T/metrics")
	until_above 'bpfscope_cachestat_folded_total{metric="bpfscope_cachestat_lookups_total"}' "$f"
	b=$(curl -sf "http://127.0.0.1:$PORT/metrics" | awk '/^bpfscope_cachestat_lookups_total\{pid="\[other\]"/ { print $2 }')
	[ "$b" -ge "$a" ]
	stop_exporter
	# The lost counters' reasons (funclatency's six, and the events the
	# kernel did not run a program for) are never folded: in [other], each
	# reason's total would take the series in turn, and it would go back
	# and forth.
	exporter funclatency --prometheus-series 1 "$WL/funcs:slow_func"
	# Once collected: the lost counters are there from the first collection.
	until_exported '^bpfscope_funclatency_lost_total\{'
	curl -sf "http://127.0.0.1:$PORT/metrics" > "$T/metrics"
	run grep -c '^bpfscope_funclatency_lost_total{reason="[a-z_]*"} 0$' "$T/metrics"
	assert_output 7
	run grep -c '^bpfscope_funclatency_lost_total{reason="\[other\]"}' "$T/metrics"
	assert_output 0
	stop_exporter
}

@test "prometheus: readdirlat -D labels directories, escaping what their names hold" {
	require_bpf
	d=$T/$'quote"back\\slash\x07'
	mkdir -p "$d"
	touch "$d/f1" "$d/f2"
	# Its own reads only: beside a busy machine (ci's guests unpacked beside
	# the suite), the host's directories would fill --prometheus-series first.
	exporter readdirlat -D -c lsdir
	"$WL/lsdir" "$d" 32768 5 > /dev/null
	until_exported 'dir="[^"]*quote'
	check_exposition
	run grep -F 'dir="'"$T"'/quote\"back\\slash\\x07"' "$T/metrics"
	assert_success
	stop_exporter
}

@test "prometheus: clients that never read, stop halfway or send too much stall neither the tool nor the scrapes" {
	require_bpf
	exporter runqlat -P
	# Its own collections settle first: glibc serves their buffer of a few
	# MB (a map read at once) from mmap once, then, its threshold raised by
	# that free, from the heap, which keeps it (5.4 MB more at the second).
	collected 3
	: > "$T/hostile.out"
	"$PY" - "$PORT" > "$T/hostile.out" 2>&1 <<-'EOF' &
	import os, socket, sys, time
	port = int(sys.argv[1])
	held = []
	for i in range(3):	# ask, and never read the answer
	    s = socket.create_connection(("127.0.0.1", port))
	    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1024)
	    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n" * 50)
	    held.append(s)
	for i in range(2):	# a request that never ends
	    s = socket.create_connection(("127.0.0.1", port))
	    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: ")
	    held.append(s)
	s = socket.create_connection(("127.0.0.1", port))	# headers bigger than allowed
	try:
	    s.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 1000000 + b"\r\n\r\n")
	except OSError as e:
	    print("refused:", e)
	print("holding", flush=True)
	parent = os.getppid()
	while os.getppid() == parent:	# until killed, or the test is gone
	    time.sleep(0.5)
	EOF
	HPID=$!
	wait_for_line "$T/hostile.out" holding 60
	# Meanwhile the tool keeps collecting, answers others at once (well
	# before the 10 s after which the server cuts what it holds), and its
	# memory stays flat once the held connections have their answers.
	for i in $(seq 12); do
		run timeout 5 curl -sf "http://127.0.0.1:$PORT/metrics"
		assert_success
		c[i]=$(echo "$output" | awk '/^bpfscope_runqlat_wait_seconds_count/ { n += $2 } END { print n + 0 }')
		rss[i]=$(awk '/^VmRSS/ { print $2 }' "/proc/$XPID/status")
		sleep 0.5
	done
	echo "counts ${c[*]}; rss ${rss[*]} kB"
	[ "${c[12]}" -gt "${c[1]}" ]
	# The held answers and the server thread's heap come first; then nothing
	# grows. Built with ASan, freed memory waits in its quarantine (256 MB)
	# before it is used again: there the bound is the quarantine's.
	[[ $BUILD == */san ]] || [ "${rss[12]}" -le $((rss[6] + 1024)) ]
	[ "${rss[12]}" -le $((rss[6] + 262144)) ]
	stop_exporter
}

@test "prometheus: clients that trickle a request a byte at a time keep a scrape out 10 s at most" {
	require_bpf
	exporter runqlat -P
	# 16 connections, the server's limit (8 from each of two addresses),
	# each sending a byte of an endless request every 3 s: never idle for
	# the 10 s of libmicrohttpd's timeout. Each must be cut 10 s after it
	# began, and a scrape then answered. Times are the trickler's, from
	# when it had connected all 16 (it prints that on the wall clock too).
	: > "$T/trickle.out"
	"$PY" - "$PORT" > "$T/trickle.out" 2>&1 <<-'EOF' &
	import select, socket, sys, time
	req = b"GET /metrics HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 4000
	socks = {}
	for i in range(16):
	    s = socket.socket()
	    s.bind(("127.0.0.%d" % (2 + i % 2), 0))
	    s.connect(("127.0.0.1", int(sys.argv[1])))
	    socks[s] = 0
	t0 = time.monotonic()
	print("trickling %.3f" % time.time(), flush=True)
	cut = []
	while socks and time.monotonic() - t0 < 40:
	    for s in list(socks):
	        try:
	            s.send(req[socks[s]:socks[s] + 1])
	            socks[s] += 1
	        except OSError:
	            cut.append(time.monotonic() - t0)
	            del socks[s]
	    end = time.monotonic() + 3
	    while socks and time.monotonic() < end:
	        for s in select.select(list(socks), [], [], max(0, end - time.monotonic()))[0]:
	            try:
	                data = s.recv(4096)
	            except OSError:
	                data = b""
	            if not data:
	                cut.append(time.monotonic() - t0)
	                del socks[s]
	print("cut %d held %d first %.1f last %.1f" % (len(cut), len(socks), min(cut, default=-1), max(cut, default=-1)))
	EOF
	HPID=$!
	wait_for_line "$T/trickle.out" trickling 60
	t0=$(awk '/^trickling/ { print $2 }' "$T/trickle.out")
	# Full: no answer meanwhile (else this test would prove nothing). The
	# server takes connections in the order they came: the trickler's first.
	run timeout 2 curl -sf "http://127.0.0.1:$PORT/metrics"
	assert_failure
	# Refused while full (at once): asked again until answered.
	for ((i = 0; i < 300; i++)); do
		timeout 3 curl -sf "http://127.0.0.1:$PORT/metrics" > "$T/metrics" && break
		sleep 0.2
	done
	answered=$(date +%s.%N)
	grep -q '^bpfscope_runqlat_wait_seconds_count' "$T/metrics" || fail "no answer"
	wait "$HPID"
	HPID=
	cat "$T/trickle.out"
	read -r _ cut _ held _ first _ last < <(grep '^cut ' "$T/trickle.out")
	waited=$(awk -v a="$answered" -v t="$t0" 'BEGIN { printf "%.1f", a - t }')
	echo "answered $waited s after the trickler connected, its first connection cut at $first s, the last at $last s"
	[ "$cut" -eq 16 ]
	[ "$held" -eq 0 ]
	# Each cut 10 s after it began (its connect came before the server's
	# accept, where the deadline starts), with the watchdog's wakeup.
	awk -v f="$first" -v l="$last" 'BEGIN { exit !(f >= 9.5 && l <= 12) }' ||
		fail "connections cut from $first s to $last s, not at 10"
	# The first cut leaves room: a scrape then, but for the curl asking
	# again (0.2 s apart, each a process to start).
	awk -v w="$waited" -v f="$first" 'BEGIN { exit !(w <= f + 2) }' ||
		fail "a scrape answered $waited s after the trickler connected, its first connection cut at $first s"
	stop_exporter
}

@test "prometheus: a bad or busy address is a clear error; the moot options are named" {
	require_bpf
	for bad in nohost:x 70000 '' '[::1' 1.2.3.4.5:80; do
		run "$BIN/runqlat" --prometheus "$bad"
		assert_failure 2
		assert_line "runqlat: --prometheus '$bad': expected [ADDR:]PORT, e.g. 9100, 0.0.0.0:9100 or [::1]:9100"
	done
	exporter runqlat
	# Busy: said before anything is loaded or traced.
	run timeout 60 "$BIN/runqlat" --prometheus "$PORT"
	assert_failure 1
	assert_output "runqlat: --prometheus: cannot listen on $PORT: Address already in use"
	run timeout 60 "$BIN/cachestat" --prometheus 192.0.2.1:9100
	assert_failure 1
	assert_output "cachestat: --prometheus: cannot listen on 192.0.2.1:9100: Cannot assign requested address"
	stop_exporter
	# Said as the options are read, before it serves.
	: > "$T/x.out"
	: > "$T/x.err"
	"$BIN/biolatency" --prometheus 0 --json -T 5 3 > "$T/x.out" 2> "$T/x.err" &
	XPID=$!
	wait_for_line "$T/x.err" "^biolatency: --prometheus serves all that was counted since start; --json, -T, the interval and the count are ignored$" 60
	wait_for_line "$T/x.out" '^Tracing' 120
	stop_exporter
	# IPv6.
	: > "$T/x.out"
	: > "$T/x.err"
	"$BIN/runqlat" --prometheus '[::1]:0' > "$T/x.out" 2> "$T/x.err" &
	XPID=$!
	wait_for_line "$T/x.out" '^Serving Prometheus metrics at http://\[::1\]:[0-9]+/metrics$' 120
	port=$(sed -n 's|^Serving .*:\([0-9]*\)/metrics$|\1|p' "$T/x.out")
	# Served from before the BPF side is loaded: empty until the first collection.
	for ((i = 0; i < 1200; i++)); do
		run curl -sf "http://[::1]:$port/metrics"
		assert_success
		[[ $output == *"# TYPE bpfscope_runqlat_wait_seconds histogram"* ]] && break
		sleep 0.1
	done
	assert_line '# TYPE bpfscope_runqlat_wait_seconds histogram'
	stop_exporter
}

@test "prometheus: libmicrohttpd is loaded only to serve, and a host without it is told what to install" {
	require_bpf
	# Not serving: neither it (and GnuTLS under Debian's) nor capstone is
	# mapped; each costs every start a few MiB of relocated pages.
	: > "$T/r.out"
	"$BIN/runqlat" > "$T/r.out" 2>&1 &
	XPID=$!
	wait_for_line "$T/r.out" '^Tracing' 120
	run grep -c 'libmicrohttpd\|libgnutls\|libcapstone' "/proc/$XPID/maps"
	assert_output 0
	stop_bg $XPID
	XPID=
	# Serving: a dynamic build maps it now (a static one has it linked in).
	exporter runqlat
	if ldd "$BIN/runqlat" > /dev/null 2>&1; then
		grep -q 'libmicrohttpd\.so\.12' "/proc/$XPID/maps"
	fi
	run curl -sf "http://127.0.0.1:$PORT/metrics"
	assert_success
	stop_exporter
	BPFSCOPE_DISABLE=libmicrohttpd.so.12 run timeout 60 "$BIN/runqlat" --prometheus 0
	assert_failure 1
	assert_output "runqlat: --prometheus: cannot load libmicrohttpd.so.12 (BPFSCOPE_DISABLE=libmicrohttpd.so.12): install libmicrohttpd12"
}
