#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The stack tools at a busy server's scale: thousands of distinct stacks
# (tests/workloads/manystacks.c) through every output, and the stack set
# itself with 100,000 (tests/unit/stackscale.c). Each run is bounded by a
# timeout: a report that does not finish fails the test.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T GOCACHE=$T/gocache
}

teardown() {
	stop_bg ${WPID:-} ${TPID:-}
}

# start_work MODE [ARG]: manystacks in MODE over all 4,096 paths; sets WPID.
# No ARG is no argument: sleep would take an empty one for 0 rounds.
start_work() {
	: > "$T/work"
	"$WL/manystacks" "$1" 4096 ${2:+"$2"} > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid '
}

# trace_work OUT ERR TOOL ARGS...: TOOL -p WORKLOAD ARGS around one release
# of the workload (started by start_work), stopped with SIGINT once it is done.
trace_work() {
	local out=$1 err=$2 tool=$3
	shift 3
	: > "$out"
	: > "$err"
	timeout 60 "$BIN/$tool" -p "$WPID" "$@" > "$out" 2> "$err" &
	TPID=$!
	# The banner is on stdout, or on stderr where stdout has the stacks.
	for ((i = 0; i < 100; i++)); do
		grep -q Tracing "$out" "$err" 2>/dev/null && break
		sleep 0.1
	done
	kill -USR1 "$WPID"
	wait_for_line "$T/work" '^unslept ' 30
	kill -INT "$TPID"
	wait "$TPID"
	TPID=
}

# in_reach N DROPPED: N of the 4,096 paths' sleeps counted, no more, and
# no fewer than the tool's own count of what it dropped allows, less the
# sleeps that never left the CPU. On the development VM's kernel, which
# now and then switches a thread without tracing it (docs/known-issues.md),
# the tool tells such periods by the thread's switch count. A
# sleep whose timer fired before the thread reached schedule() (its vCPU
# stolen for the 50 us between) is no period at all; the workload counts
# those by its own voluntary switches, and says "unslept N" (0 to 7 of
# 4,096 in 40 runs here, each matching what the tool missed). One more
# may go untold there: a wait whose wakeup and switch onto a CPU both went
# untraced, which leaves no count to tell it by, as runqlat.bats'
# sleeper_ok says (CI: offwaketime --json counted 4,095, none said dropped).
in_reach() {
	local unslept

	unslept=$(awk '/^unslept / { print $2 }' "$T/work")
	echo "($1 counted, $2 dropped, ${unslept:?} unslept)"
	[ "$1" -le 4096 ] && [ "$1" -ge $((4096 - $2 - unslept - 1)) ]
}

# svg_total SVG: the count of a flame graph's root.
svg_total() {
	xmllint --noout "$1"
	grep -o '<g class="f" data-v="[0-9]*"><title>all ' "$1" | grep -o '[0-9]*'
}

# pprof_total PPROF: the sum of the first value of every sample (the folded count).
pprof_total() {
	go tool pprof -raw "$1" 2>/dev/null |
		awk '/^Samples:/ { s = 1 } /^Locations/ { s = 0 } s && /^ +[0-9]+( +[0-9]+)*: / { n += $1 }
			END { print n + 0 }'
}

# text_total FILE: the sum of bcc's text layout's counts (the indented number ending each stack).
text_total() {
	awk '/^        [0-9]+$/ { n += $1 } END { print n + 0 }' "$1"
}

# json_total FILE FIELD: the sum of FIELD over the JSON lines of FILE.
json_total() {
	jq -s "map(.$2) | add // 0" "$1"
}

# same_total WHAT A B: two outputs of one run count the same.
same_total() {
	[ "$2" -gt 0 ] || fail "$1: nothing counted"
	[ "$2" -eq "$3" ] || fail "$1: $2 against $3"
}

# check_files FOLDED SVG PPROF: three outputs of one run describe the same stacks.
check_files() {
	local total root pb
	total=$(awk '{ n += $NF } END { print n + 0 }' "$1")
	root=$(svg_total "$2")
	[ "$root" -eq "$total" ] || fail "svg root $root, folded total $total"
	pb=$(pprof_total "$3")
	[ "$pb" -eq "$total" ] || fail "pprof total $pb, folded total $total"
	# Every folded line is a distinct stack.
	[ "$(cut -d' ' -f1 "$1" | sort | uniq -d | wc -l)" -eq 0 ] || fail "folded lines repeat"
}

@test "stack set: 100,000 distinct stacks added, sorted, added to again and written" {
	run timeout 60 "$WL/unit/stackscale" 100000 "$T"
	assert_success
	echo "$output"
	[ "$(wc -l < "$T/out.folded")" -eq 110000 ]
	xmllint --noout "$T/out.svg"
	run go tool pprof -top -nodecount=3 "$T/out.pb.gz"
	assert_success
	assert_output --partial "accounting for"
}

@test "profile: thousands of distinct stacks through folded, text, SVG, pprof and JSON" {
	require_bpf
	start_work spin 20
	timeout 60 "$BIN/profile" -p "$WPID" -F 999 -f --svg "$T/p.svg" --pprof "$T/p.pb.gz" 4 \
		> "$T/all" 2> "$T/err"
	grep -E ';ms1_[ab];manystacks_burn' "$T/all" > "$T/folded" || true
	n=$(wc -l < "$T/folded")
	echo "$n distinct stacks through the leaf"
	[ "$n" -gt 1024 ]
	! grep 'lost\|Missed' "$T/err" "$T/all" || fail "profile lost stacks"
	check_files "$T/all" "$T/p.svg" "$T/p.pb.gz"
	# Each stack is the whole chain: main, then twelve levels, then the leaf.
	run awk -F';' '/manystacks_burn/ && !/main;run_path;ms17_a;ms16_a;ms15_a;ms14_a;ms13_a;ms12_[ab];ms11_[ab];ms10_[ab];ms9_[ab];ms8_[ab];ms7_[ab];ms6_[ab];ms5_[ab];ms4_[ab];ms3_[ab];ms2_[ab];ms1_[ab];manystacks_burn/' "$T/folded"
	assert_output ""
	# JSON, with a pprof file of the same run: as many stacks, the same total.
	timeout 60 "$BIN/profile" -p "$WPID" -F 999 --json --pprof "$T/j.pb.gz" 3 \
		> "$T/json" 2> "$T/err"
	n=$(jq -s 'map(select(.frames | index("manystacks_burn"))) | length' "$T/json")
	echo "json: $n stacks through the leaf"
	[ "$n" -gt 1024 ]
	same_total "json against pprof" "$(json_total "$T/json" samples)" "$(pprof_total "$T/j.pb.gz")"
	# The text layout, with a flame graph of the same run.
	timeout 60 "$BIN/profile" -p "$WPID" -F 999 --svg "$T/t.svg" 3 > "$T/text" 2> "$T/err"
	n=$(grep -c '^    manystacks_burn$' "$T/text")
	echo "text: $n stacks through the leaf"
	[ "$n" -gt 1024 ]
	same_total "text against svg" "$(text_total "$T/text")" "$(svg_total "$T/t.svg")"
	! grep 'lost\|Missed' "$T/err" "$T/json" "$T/text" || fail "profile lost stacks"
	assert_nothing_loaded profile
}

@test "offcputime: 4,096 distinct blocking stacks, each counted once, in every output" {
	require_bpf
	start_work sleep
	trace_work "$T/folded" "$T/err" offcputime -f --svg "$T/o.svg" --pprof "$T/o.pb.gz"
	cat "$T/err"
	# Each path's sleep, once (a path preempted on its way is a line of its own).
	n=$(grep -c ';manystacks_sleep;.*nanosleep' "$T/folded")
	dropped=$(unseen_returns "$T/err")
	echo "$n stacks through the leaf, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	! grep 'lost\|Missed' "$T/err" "$T/folded" || fail "offcputime lost stacks"
	check_files "$T/folded" "$T/o.svg" "$T/o.pb.gz"
	# The text layout, of a second run: as many stacks, as much time as its
	# flame graph. Sleeps only (--state 1): with -U there is no kernel frame
	# to tell a path's sleep from its being preempted on the way (a CI run
	# counted 4,097 paths), both under manystacks_sleep.
	start_work sleep
	trace_work "$T/text" "$T/err" offcputime -U --state 1 --svg "$T/t.svg"
	n=$(grep -c '^    manystacks_sleep$' "$T/text")
	dropped=$(unseen_returns "$T/err")
	echo "text: $n stacks through the leaf, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	same_total "text against svg" "$(text_total "$T/text")" "$(svg_total "$T/t.svg")"
	! grep 'lost\|Missed' "$T/err" || fail "offcputime lost stacks"
	# JSON, of a third: the same again, and the time of its pprof profile.
	start_work sleep
	trace_work "$T/json" "$T/err" offcputime --json --pprof "$T/j.pb.gz"
	n=$(jq -s 'map(select((.frames | index("manystacks_sleep")) and
		any(.frames[]; test("nanosleep")))) | length' "$T/json")
	dropped=$(unseen_returns "$T/err")
	echo "json: $n stacks through the leaf, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	same_total "json against pprof" "$(json_total "$T/json" total_us)" "$(pprof_total "$T/j.pb.gz")"
	! grep 'lost\|Missed' "$T/err" || fail "offcputime lost stacks"
	assert_nothing_loaded offcputime
}

@test "offwaketime: 4,096 distinct pairs of blocked and waking stacks, in every output" {
	require_bpf
	start_work pipe
	trace_work "$T/folded" "$T/err" offwaketime -f --svg "$T/w.svg" --pprof "$T/w.pb.gz"
	cat "$T/err"
	n=$(grep -c ';manystacks_read;.*--;.*manystacks_write;' "$T/folded")
	dropped=$(unseen_returns "$T/err")
	echo "$n pairs, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	! grep 'lost\|Missed\|more than' "$T/err" "$T/folded" || fail "offwaketime lost stacks"
	check_files "$T/folded" "$T/w.svg" "$T/w.pb.gz"
	# Paired path by path: the reader blocked in path P is woken from path P.
	run awk -F';' '/manystacks_read/ && /manystacks_write/ {
			side = 0; delete R; delete W
			for (i = 1; i <= NF; i++) {
				if ($i == "--") side = 1
				if ($i !~ /^ms[0-9]+_[ab]$/) continue
				split($i, lv, "_"); sub(/ms/, "", lv[1])
				if (side) W[lv[1]] = lv[2]; else R[lv[1]] = lv[2]
			}
			for (l = 1; l <= 12; l++) if (R[l] != W[l]) { bad++; break }
		} END { print bad + 0 }' "$T/folded"
	assert_output 0
	# The text layout, of a second run, and its flame graph.
	start_work pipe
	trace_work "$T/text" "$T/err" offwaketime --svg "$T/t.svg"
	n=$(awk -v RS= '/\n    manystacks_read\n/ && /\n    manystacks_write\n/ { n++ } END { print n + 0 }' \
		"$T/text")
	dropped=$(unseen_returns "$T/err")
	echo "text: $n pairs, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	same_total "text against svg" "$(text_total "$T/text")" "$(svg_total "$T/t.svg")"
	! grep 'lost\|Missed\|more than' "$T/err" || fail "offwaketime lost stacks"
	# JSON, of a third, and its pprof profile.
	start_work pipe
	trace_work "$T/json" "$T/err" offwaketime --json --pprof "$T/j.pb.gz"
	n=$(jq -s 'map(select((.frames | index("manystacks_read")) and
		(.frames | index("manystacks_write")))) | length' "$T/json")
	dropped=$(unseen_returns "$T/err")
	echo "json: $n pairs, $dropped periods the kernel did not report"
	in_reach "$n" "$dropped"
	same_total "json against pprof" "$(json_total "$T/json" total_us)" "$(pprof_total "$T/j.pb.gz")"
	! grep 'lost\|Missed\|more than' "$T/err" || fail "offwaketime lost stacks"
	assert_nothing_loaded offwaketime
}
