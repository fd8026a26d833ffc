#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Perl programs (tests/perl/cheese.pl) under Debian 12's perl 5.36 and,
# chrooted in a PID namespace, Debian 13's 5.40 (tests/perl/fetch): their
# subs in place of Perl's loop, with no module and no flag, in profile,
# offcputime and profile --wall, in every output; a sort block's calls; a
# deep recursion; threads, each by its own interpreter; a script gone
# before the report. A process that says it is Perl and holds garbage
# (tests/workloads/fakeperl) misleads the tool about itself only, and
# boundedly.

load helpers

setup_file() {
	"$ROOT/tests/perl/fetch" "$BUILD/cache/perl/5.40" > /dev/null
}

CHEESE=$ROOT/tests/perl/cheese.pl

setup() {
	T=$BATS_TEST_TMPDIR
	# A sub's line is its first statement's, the one after its "sub NAME {".
	L_brie=$(( $(grep -n '^sub brie {' "$CHEESE" | cut -d: -f1) + 1 ))
	L_camembert=$(( $(grep -n '^sub camembert {' "$CHEESE" | cut -d: -f1) + 1 ))
	L_reblochon=$(( $(grep -n '^sub reblochon {' "$CHEESE" | cut -d: -f1) + 1 ))
	L_down=$(( $(grep -n '^sub down {' "$CHEESE" | cut -d: -f1) + 1 ))
	L_comte=$(( $(grep -n '^sub comte {' "$CHEESE" | cut -d: -f1) + 1 ))
	L_beaufort=$(( $(grep -n '^sub beaufort {' "$CHEESE" | cut -d: -f1) + 1 ))
}

teardown() {
	stop_bg ${TPID:-} ${WPID:-} ${NSPID:-}
	assert_nothing_loaded profile offcputime
}

# start_perl MODE: cheese.pl MODE under Debian's perl; sets WPID.
start_perl() {
	: > "$T/work"
	perl "$CHEESE" "$1" > "$T/work" 2>&1 &
	WPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
}

# The busy chain's frames, as the reports name them.
chain() {
	echo "main::brie (cheese.pl:$L_brie);main::camembert (cheese.pl:$L_camembert);Cave::reblochon (cheese.pl:$L_reblochon)"
}

# share FOLDED CHAIN MIN [FILTER]: of the folded lines matching FILTER (a
# regex; default all), the share of the count whose stack holds CHAIN;
# fails under MIN percent or with less than 100 in all.
share() {
	awk -v c="$2" -v min="$3" -v f="${4:-}" '$0 ~ f { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * min) }' "$1"
}

@test "perl: profile names the busy chain's subs in place of the loop, whole to the process's root" {
	require_bpf
	start_perl chain
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'Perl 5.36: Perl subs in place of its loop' "$T/err" || fail "$(grep -i perl "$T/err")"
	chain_share "$T/json" "$WPID" samples "$(chain)" 90
	run jq -r 'select(.frames | index("main::brie (cheese.pl:'"$L_brie"')")) | .frames | join(";")' "$T/json"
	assert_output --regexp '(^|\n)_start;__libc_start_main;.*;perl_run;([^\n]*;)?main::brie \(cheese\.pl:'"$L_brie"'\);main::camembert'
	refute_output --partial '[unknown'
	refute_output --partial '[truncated'
	run jq -r '[.frames, .kinds] | transpose[] | select(.[0] | test("^(main|Cave)::")) | .[1]' "$T/json"
	[ -n "$output" ] && ! grep -qv '^perl$' <<< "$output" || fail "kinds: $(sort -u <<< "$output")"
}

@test "perl: a sort block's calls under the sort that calls them, in folded, SVG and pprof alike" {
	require_bpf
	start_perl sort
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" \
		--pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	share "$T/folded" ";Perl_pp_sort;" 80
	share "$T/folded" "$(chain)" 90
	awk -v c="$(chain)" 'index($0, c) && !/;Perl_pp_sort;.*;main::brie \(/ { bad += $NF } END { exit bad > 0 }' "$T/folded" ||
		fail "the chain out of the sort: $(head -c 1500 "$T/folded")"
	grep -q "Cave::reblochon (cheese.pl:$L_reblochon)" "$T/p.svg"
	run go tool pprof -traces "$T/p.pb.gz"
	assert_success
	assert_output --partial "Cave::reblochon"
}

@test "perl: offcputime puts the sleeping script's time under comte and beaufort" {
	require_bpf
	start_perl sleep
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -p "$WPID" -f
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="main::comte (cheese.pl:$L_comte);main::beaufort (cheese.pl:$L_beaufort);" \
		'{ all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d us under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "perl: profile --wall has the sleeping script [sleeping] under comte and beaufort" {
	require_bpf
	start_perl sleep
	: > "$T/err"
	"$BIN/profile" --wall -p "$WPID" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_any 'Wall-clock time of PID' 120 "$T/folded" "$T/err"
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="main::comte (cheese.pl:$L_comte);main::beaufort (cheese.pl:$L_beaufort);" \
		'{ all += $NF; if (/^perl;\[sleeping\];/ && index($0, c)) whole += $NF }
		END { printf "%d of %d us asleep under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "perl: a recursion 40 calls deep keeps each of its frames" {
	require_bpf
	start_perl deep
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	awk -v d="Cave::down (cheese.pl:$L_down)" -v r="Cave::reblochon (cheese.pl:$L_reblochon)" '
		{ all += $NF; n = gsub("Cave::down \\(cheese\\.pl:[0-9]+\\)", "&")
		  if (n == 40 && index($0, d ";" r)) whole += $NF }
		END { printf "%d of %d 40 deep\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "perl: four threads, each walked by its own interpreter" {
	require_bpf
	start_perl threads
	for ((i = 0; i < 300; i++)); do
		[ "$(grep -c '^tid ' "$T/work")" = 4 ] && break
		sleep 0.1
	done
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 4000 ))
	tool_stop || fail "$(cat "$T/err")"
	jq -r --argjson p "$WPID" 'select(.pid != $p) | [.pid, .samples, (.frames | join(";"))] | @tsv' "$T/json" |
		awk -F'\t' -v c="$(chain)" '{ all += $2; seen[$1] = 1; if (index($3, c) && index($3, ";main::__ANON__ (cheese.pl:")) whole += $2 }
		END { printf "%d threads, %d of %d samples the chain\n", length(seen), whole, all
		      exit !(length(seen) == 4 && all >= 200 && whole * 100 >= all * 90) }'
}

@test "perl: system-wide, a short script gone before the report keeps its names" {
	require_bpf
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -F 199 -f
	settled "$T/err"
	run perl "$CHEESE" short
	assert_success
	pid=$(sed -n 's/^done //p' <<< "$output")
	[ -n "$pid" ] || fail "$output"
	tool_stop || fail "$(cat "$T/err")"
	[ ! -d "/proc/$pid" ] || fail "pid $pid lives on"
	run grep -c '^perl;.*\[unknown_perl\]' "$T/folded"
	assert_output 0
	awk -v c="$(chain)" '/^perl;/ && index($0, "(cheese.pl:") { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 50 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "perl: Debian 13's perl 5.40, chrooted in a PID namespace, named as 5.36 is" {
	require_bpf
	root=$BUILD/cache/perl/5.40
	cp "$CHEESE" "$root/tmp/"
	: > "$T/work"
	LC_ALL=C unshare -m -p -f --kill-child --mount-proc="$root/proc" \
		chroot "$root" /usr/bin/perl /tmp/cheese.pl chain > "$T/work" 2>&1 &
	NSPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
	WPID=$(pgrep -P "$NSPID" | head -n 1)
	[ -n "$WPID" ] || fail "no perl under unshare"
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'Perl 5.40: Perl subs in place of its loop' "$T/err" || fail "$(grep -i perl "$T/err")"
	share "$T/folded" "$(chain)" 90
}

@test "perl: a process that says it is Perl and holds garbage misleads the tool about itself only, boundedly" {
	require_bpf
	for mode in random unmapped cycle; do
		echo "# $mode"
		: > "$T/work"
		"$WL/fakeperl" "$mode" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" '^pid ' 10
		tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
		tool_stop || fail "$(cat "$T/err")"
		cat "$T/err"
		if [ "$mode" = cycle ]; then
			# Its stack info its own outer one: the stack's slots filled, and said so,
			# each name (what its memory says) within its bound.
			share "$T/folded" '[truncated:_deeper_than_127_frames]' 90
			grep -q ';fakeperl_leaf [0-9]*$' "$T/folded" || fail "$(head -c 1500 "$T/folded")"
			tr ';' '\n' < "$T/folded" | awk 'length > 1400 { bad = 1 } END { exit bad }' ||
				fail "a name beyond its bound"
			stop_bg "$WPID"
			WPID=
			continue
		fi
		# The native frames whole; in place of the loop, at most what could not be read.
		share "$T/folded" ';main;' 90
		awk '{ all += $NF; if (/;main;(Perl_runops_standard|\[unknown_perl\])(;\[unknown_perl\])*;fakeperl_leaf( |;)/) whole += $NF }
			END { printf "%d of %d whole\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded" ||
			fail "$(head -c 1500 "$T/folded")"
		if grep -q 'unknown_perl' "$T/folded"; then
			grep -q 'Perl frames are \[unknown perl\]' "$T/err" || fail "not said"
		fi
		stop_bg "$WPID"
		WPID=
	done
}
