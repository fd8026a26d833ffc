#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Ruby programs (tests/ruby/cheese.rb) under Debian 12's ruby 3.1 and,
# chrooted in a PID namespace, Debian 13's 3.3 (tests/ruby/fetch, its
# library stripped of what the walk starts from): their methods and blocks
# in place of each run of the VM (rb_vm_exec), with no gem and no flag, in
# profile, offcputime and profile --wall, in every output; a deep
# recursion; threads, each by its own execution context; a script gone
# before the report. A library that says it is Ruby and holds garbage
# (tests/fakeruby) misleads the tool about itself only, and boundedly.

load helpers

setup_file() {
	"$ROOT/tests/ruby/fetch" "$BUILD/cache/ruby/3.3" > /dev/null
}

CHEESE=$ROOT/tests/ruby/cheese.rb

setup() {
	T=$BATS_TEST_TMPDIR
	# A method's line is its def's, a block's the line it opens on.
	L_brie=$(grep -n '^def brie' "$CHEESE" | cut -d: -f1)
	L_camembert=$(grep -n '^def camembert' "$CHEESE" | cut -d: -f1)
	L_reblochon=$(grep -n '^  def reblochon' "$CHEESE" | cut -d: -f1)
	L_block=$(grep -n 'n.times { |i|' "$CHEESE" | cut -d: -f1)
	L_down=$(grep -n '^  def down' "$CHEESE" | cut -d: -f1)
	L_cellar=$(grep -n '^  def self.cellar' "$CHEESE" | cut -d: -f1)
	L_comte=$(grep -n '^def comte' "$CHEESE" | cut -d: -f1)
	L_beaufort=$(grep -n '^def beaufort' "$CHEESE" | cut -d: -f1)
}

teardown() {
	stop_bg ${TPID:-} ${WPID:-} ${NSPID:-}
	assert_nothing_loaded profile offcputime
}

# start_ruby MODE: cheese.rb MODE under Debian's ruby; sets WPID.
start_ruby() {
	: > "$T/work"
	ruby "$CHEESE" "$1" > "$T/work" 2>&1 &
	WPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
}

# The busy chain's frames, as the reports name them.
chain() {
	echo "Object#brie (cheese.rb:$L_brie);Object#camembert (cheese.rb:$L_camembert);Cave#reblochon (cheese.rb:$L_reblochon)"
}

# share FOLDED CHAIN MIN [FILTER]: of the folded lines matching FILTER (a
# regex; default all), the share of the count whose stack holds CHAIN;
# fails under MIN percent or with less than 100 in all.
share() {
	awk -v c="$2" -v min="$3" -v f="${4:-}" '$0 ~ f { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * min) }' "$1"
}

@test "ruby: profile names the busy chain's methods and blocks in place of the VM's runs, whole to the process's root" {
	require_bpf
	start_ruby chain
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'Ruby 3.1.2: Ruby methods in place of its VM loop' "$T/err" || fail "$(grep -i ruby "$T/err")"
	chain_share "$T/json" "$WPID" samples "$(chain)" 90
	# The block Integer#times (C) yields to, with times' own native frames between.
	chain_share "$T/json" "$WPID" samples "Cave#reblochon (cheese.rb:$L_reblochon);" 90
	run jq -r 'select(.frames | index("block in Cave#reblochon (cheese.rb:'"$L_block"')")) | .frames | join(";")' "$T/json"
	assert_output --regexp '(^|\n)_start;__libc_start_main;.*;ruby_run_node;[^;]*;<main> \(cheese\.rb\);[^\n]*;block in <main> \(cheese\.rb:[0-9]+\);Object#brie \(cheese\.rb:'"$L_brie"'\);Object#camembert[^\n]*;Cave#reblochon \(cheese\.rb:'"$L_reblochon"'\);[^\n]*;block in Cave#reblochon'
	refute_output --partial '[unknown'
	refute_output --partial '[truncated'
	# Each run of the VM in its place: the outermost (the script's <main>)
	# right under ruby_run_node, none left native where its frames were read
	# (the innermost only, as it returns).
	run jq -r --argjson p "$WPID" 'select(.pid == $p) | [.samples, (.frames | join(";"))] | @tsv' "$T/json"
	awk -F'\t' '{ all += $1; if ($2 !~ /;ruby_run_node;[^;]*;<main> \(cheese\.rb\);/ || $2 ~ /;rb_vm_exec;/) bad += $1 }
		END { printf "%d of %d with a run out of place\n", bad, all; exit !(all >= 100 && bad * 100 <= all * 2) }' <<< "$output" ||
		fail "$(sort -t$'\t' -k1 -n <<< "$output" | tail -n 3)"
	run jq -r '[.frames, .kinds] | transpose[] | select(.[0] | test("^(Object#|Cave#|block in) ")) | .[1]' "$T/json"
	[ -n "$output" ] && ! grep -qv '^ruby$' <<< "$output" || fail "kinds: $(sort -u <<< "$output")"
}

@test "ruby: left native with BPFSCOPE_DISABLE=ruby, named in SVG and pprof otherwise" {
	require_bpf
	start_ruby chain
	BPFSCOPE_DISABLE=ruby tool_start "$T/off" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_stop || fail "$(cat "$T/err")"
	run grep -c 'cheese\.rb' "$T/off"
	assert_output 0
	share "$T/off" ";rb_vm_exec;" 90
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" \
		--pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_stop || fail "$(cat "$T/err")"
	share "$T/folded" "$(chain)" 90
	grep -q "reblochon (cheese.rb:$L_reblochon)" "$T/p.svg"
	run go tool pprof -traces "$T/p.pb.gz"
	assert_success
	assert_output --partial "block in Cave#reblochon"
}

@test "ruby: offcputime puts the sleeping script's time under comte and beaufort" {
	require_bpf
	start_ruby sleep
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -p "$WPID" -f
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="Object#comte (cheese.rb:$L_comte);Object#beaufort (cheese.rb:$L_beaufort);" \
		'/^ruby;/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d us under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "ruby: profile --wall has the sleeping script [sleeping] under comte and beaufort" {
	require_bpf
	start_ruby sleep
	: > "$T/err"
	"$BIN/profile" --wall -p "$WPID" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_any 'Wall-clock time of PID' 120 "$T/folded" "$T/err"
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	# The main thread's: Ruby's timer thread sleeps beside it.
	awk -v c="Object#comte (cheese.rb:$L_comte);Object#beaufort (cheese.rb:$L_beaufort);" \
		'/^ruby;\[sleeping\];/ && /cheese\.rb/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d us asleep under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "ruby: a recursion 40 calls deep keeps each of its frames, under the class method that began it" {
	require_bpf
	start_ruby deep
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="Cave.cellar (cheese.rb:$L_cellar);Cave#down (cheese.rb:$L_down);" \
		-v d="Cave#down (cheese.rb:$L_down)" -v r="Cave#reblochon (cheese.rb:$L_reblochon)" '
		{ all += $NF; n = gsub("Cave#down \\(cheese\\.rb:[0-9]+\\)", "&")
		  if (n == 40 && index($0, c) && index($0, d ";" r)) whole += $NF }
		END { printf "%d of %d 40 deep\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "ruby: four threads, each walked by its own execution context" {
	require_bpf
	start_ruby threads
	for ((i = 0; i < 300; i++)); do
		[ "$(grep -c '^tid ' "$T/work")" = 4 ] && break
		sleep 0.1
	done
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 4000 ))
	tool_stop || fail "$(cat "$T/err")"
	# One thread runs at a time (the GVL): the others wait, off the CPU.
	jq -r --argjson p "$WPID" 'select(.pid != $p) | [.pid, .samples, (.frames | join(";"))] | @tsv' "$T/json" |
		awk -F'\t' -v c="$(chain)" '{ all += $2; if (index($3, "cheese.rb")) seen[$1] = 1
		  if (index($3, c) && index($3, ";block (2 levels) in <main> (cheese.rb:")) { whole += $2; ok[$1] = 1 } }
		END { printf "%d threads, %d with the chain, %d of %d samples the chain\n", length(seen), length(ok), whole, all
		      exit !(length(ok) == 4 && all >= 200 && whole * 100 >= all * 90) }'
}

@test "ruby: system-wide, a short script gone before the report keeps its names" {
	require_bpf
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -F 199 -f
	settled "$T/err"
	run ruby "$CHEESE" short
	assert_success
	pid=$(sed -n 's/^done //p' <<< "$output")
	[ -n "$pid" ] || fail "$output"
	tool_stop || fail "$(cat "$T/err")"
	[ ! -d "/proc/$pid" ] || fail "pid $pid lives on"
	run grep -c '^ruby;.*\[unknown_ruby\]' "$T/folded"
	assert_output 0
	awk -v c="$(chain)" '/^ruby;/ && index($0, "(cheese.rb:") { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 50 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "ruby: Debian 13's ruby 3.3, its library stripped, chrooted in a PID namespace, named as 3.1 is" {
	require_bpf
	root=$BUILD/cache/ruby/3.3
	cp "$CHEESE" "$root/tmp/"
	: > "$T/work"
	LC_ALL=C unshare -m -p -f --kill-child --mount-proc="$root/proc" \
		chroot "$root" /usr/bin/ruby3.3 --disable-gems /tmp/cheese.rb deep > "$T/work" 2>&1 &
	NSPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
	WPID=$(pgrep -P "$NSPID" | head -n 1)
	[ -n "$WPID" ] || fail "no ruby under unshare"
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'libruby-3.3.so.3.3.[0-9]*: Ruby 3.3.[0-9]*: Ruby methods in place of its VM loop' "$T/err" ||
		fail "$(grep -i ruby "$T/err")"
	awk -v c="Cave.cellar (cheese.rb:$L_cellar);Cave#down (cheese.rb:$L_down);" \
		-v d="Cave#down (cheese.rb:$L_down)" -v r="Cave#reblochon (cheese.rb:$L_reblochon)" '
		{ all += $NF; n = gsub("Cave#down \\(cheese\\.rb:[0-9]+\\)", "&")
		  if (n == 40 && index($0, c) && index($0, d ";" r)) whole += $NF }
		END { printf "%d of %d 40 deep\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded"
	grep -q "block in Cave#reblochon (cheese.rb:$L_block)" "$T/folded" || fail "no block named"
}

@test "ruby: a process whose libruby holds garbage misleads the tool about itself only, boundedly" {
	require_bpf
	for mode in random unmapped cycle; do
		echo "# $mode"
		: > "$T/work"
		"$WL/fakeruby" "$mode" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" '^pid ' 10
		tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
		tool_stop || fail "$(cat "$T/err")"
		grep -q 'libfakeruby.so: Ruby 3.1.2: Ruby methods in place of its VM loop' "$T/err" ||
			fail "not taken for Ruby: $(grep -i ruby "$T/err")"
		# The native frames whole; in place of the VM, at most what could not be read.
		awk '{ all += $NF; if (/;main;(rb_vm_exec|\[unknown_ruby\])(;\[unknown_ruby\])*;fakeruby_leaf( |;)/) whole += $NF }
			END { printf "%d of %d whole\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded" ||
			fail "$(head -c 1500 "$T/folded")"
		if [ "$mode" = cycle ]; then
			# Its 56 frames of garbage, each one frame, none named.
			grep -q '\[unknown_ruby\]' "$T/folded" || fail "$(head -c 1500 "$T/folded")"
			grep -q 'Ruby frames are \[unknown ruby\]' "$T/err" || fail "not said"
			awk -F';' '{ n = gsub(/\[unknown_ruby\]/, "&"); if (n > 56) bad = 1 } END { exit bad }' "$T/folded" ||
				fail "more frames than the stack holds"
		fi
		stop_bg "$WPID"
		WPID=
	done
}
