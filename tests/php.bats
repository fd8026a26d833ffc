#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# PHP programs (tests/php/cheese.php) under Debian 12's php8.2 and, chrooted
# in a PID namespace, Debian 13's php8.4 (tests/php/fetch): their functions
# and methods in place of the Zend VM's loop, with no extension and no
# flag, in profile, offcputime and profile --wall, in every output; PHP
# frames on either side of C (array_map's callback); a deep recursion; a
# script gone before the report. A process that says it is PHP and holds
# garbage (tests/workloads/fakephp) misleads the tool about itself only,
# and boundedly.

load helpers

setup_file() {
	"$ROOT/tests/php/fetch" "$BUILD/cache/php/8.4" > /dev/null
}

CHEESE=$ROOT/tests/php/cheese.php

setup() {
	T=$BATS_TEST_TMPDIR
	command -v php8.2 > /dev/null || fail "no php8.2: make deps installs it (php8.2-cli)"
	# A PHP frame's line is its function's first, as PHP's reflection has it.
	L_brie=$(grep -n '^function brie(' "$CHEESE" | cut -d: -f1)
	L_camembert=$(grep -n '^function camembert(' "$CHEESE" | cut -d: -f1)
	L_reblochon=$(grep -n 'function reblochon(' "$CHEESE" | cut -d: -f1)
	L_down=$(grep -n 'function down(' "$CHEESE" | cut -d: -f1)
	L_comte=$(grep -n '^function comte(' "$CHEESE" | cut -d: -f1)
	L_beaufort=$(grep -n '^function beaufort(' "$CHEESE" | cut -d: -f1)
	L_closure=$(grep -n 'array_map(function' "$CHEESE" | cut -d: -f1)
}

teardown() {
	stop_bg ${TPID:-} ${WPID:-} ${NSPID:-} ${CLIENT:-} ${FPM:-}
	assert_nothing_loaded profile offcputime
}

# start_php MODE [PHP]: cheese.php MODE under PHP (php8.2); sets WPID.
start_php() {
	: > "$T/work"
	"${2:-php8.2}" "$CHEESE" "$1" > "$T/work" 2>&1 &
	WPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
}

# The busy chain's frames from the script's code down, as the reports name them.
chain() {
	echo "{main} (cheese.php:1);brie (cheese.php:$L_brie);camembert (cheese.php:$L_camembert);Cave::reblochon (cheese.php:$L_reblochon)"
}

# share FOLDED CHAIN MIN [FILTER]: of the folded lines matching FILTER (a
# regex; default all), the share of the count whose stack holds CHAIN;
# fails under MIN percent or with less than 100 in all.
share() {
	awk -v c="$2" -v min="$3" -v f="${4:-}" '$0 ~ f { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * min) }' "$1"
}

@test "php: profile names the busy chain in place of the VM's loop, whole to the process's root" {
	require_bpf
	start_php chain
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'PHP 8.2: PHP frames in place of its VM loop' "$T/err" || fail "$(grep -i php "$T/err")"
	chain_share "$T/json" "$WPID" samples "$(chain)" 90
	run jq -r 'select(.frames | index("brie (cheese.php:'"$L_brie"')")) | .frames | join(";")' "$T/json"
	assert_output --regexp '(^|\n)_start;__libc_start_main;.*;php_execute_script;zend_execute_scripts;zend_execute;\{main\} \(cheese\.php:1\);brie'
	refute_output --partial '[unknown'
	refute_output --partial '[truncated'
	# Each of them a PHP frame, by kind.
	run jq -r '[.frames, .kinds] | transpose[] | select(.[0] | test("^(brie|camembert|Cave::)")) | .[1]' "$T/json"
	assert_success
	[ -n "$output" ] && ! grep -qv '^php$' <<< "$output" || fail "kinds: $(sort -u <<< "$output")"
}

@test "php: PHP frames on both sides of C: array_map calls a closure, in folded, SVG and pprof alike" {
	require_bpf
	start_php map
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" \
		--pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# The script's frame, array_map's C (stripped: its binary's name), zend_call_function, then PHP again.
	sed 's/ [0-9]*$//' "$T/folded" | grep -E '\{main\} \(cheese\.php:1\);[^;]+;zend_call_function;\{closure\} \(cheese\.php:'"$L_closure"'\);camembert' > /dev/null ||
		fail "$(head -c 2000 "$T/folded")"
	share "$T/folded" "{closure} (cheese.php:$L_closure);camembert (cheese.php:$L_camembert);Cave::reblochon (cheese.php:$L_reblochon)" 90
	grep -q "Cave::reblochon (cheese.php:$L_reblochon)" "$T/p.svg"
	run go tool pprof -traces "$T/p.pb.gz"
	assert_success
	assert_output --partial "Cave::reblochon"
}

@test "php: offcputime puts the sleeping script's time under comte and beaufort, in usleep" {
	require_bpf
	start_php sleep
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -p "$WPID" -f
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="{main} (cheese.php:1);comte (cheese.php:$L_comte);beaufort (cheese.php:$L_beaufort);" \
		'{ all += $NF; if (index($0, c) && index($0, ";usleep;")) whole += $NF }
		END { printf "%d of %d us under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "php: profile --wall has the sleeping script [sleeping] under comte and beaufort" {
	require_bpf
	start_php sleep
	: > "$T/err"
	"$BIN/profile" --wall -p "$WPID" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_any 'Wall-clock time of PID' 120 "$T/folded" "$T/err"
	wait_switches "$WPID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="{main} (cheese.php:1);comte (cheese.php:$L_comte);beaufort (cheese.php:$L_beaufort);" \
		'{ all += $NF; if (/^php8\.2;\[sleeping\];/ && index($0, c)) whole += $NF }
		END { printf "%d of %d us asleep under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		"$T/folded"
}

@test "php: a PHP-FPM worker's request has its functions named, under FPM's own frames" {
	require_bpf
	command -v php-fpm8.2 > /dev/null || fail "no php-fpm8.2: make deps installs it (php8.2-fpm)"
	cat > "$T/fpm.conf" <<-EOF
	[global]
	pid = $T/fpm.pid
	error_log = $T/fpm.log
	daemonize = no
	[cheese]
	listen = $T/fpm.sock
	user = root
	group = root
	pm = static
	pm.max_children = 2
	EOF
	php-fpm8.2 -R -n -y "$T/fpm.conf" -F &
	FPM=$!
	for ((i = 0; i < 300; i++)); do [ -S "$T/fpm.sock" ] && break; sleep 0.1; done
	: > "$T/client"
	php8.2 "$ROOT/tests/php/fcgi.php" "$T/fpm.sock" "$CHEESE" "mode=chain&pidfile=$T/worker" > "$T/client" 2>&1 &
	CLIENT=$!
	wait_for_line "$T/worker" '^pid [0-9]+$' 30
	WPID=$(sed -n 's/^pid //p' "$T/worker")
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# The worker's request, from FPM's own main loop down.
	share "$T/folded" "php_execute_script;zend_execute_scripts;zend_execute;$(chain)" 90 '^php-fpm8\.2;'
	grep -q '^php-fpm8\.2;_start;__libc_start_main;.*;php_execute_script;' "$T/folded" || fail "$(head -c 1500 "$T/folded")"
}

@test "php: opcache's JIT (tracing) runs in the loop's frame: walked through, the chain named, whole to the root" {
	require_bpf
	: > "$T/work"
	php8.2 -d opcache.enable_cli=1 -d opcache.jit=tracing -d opcache.jit_buffer_size=32M \
		"$CHEESE" chain > "$T/work" 2>&1 &
	WPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
	# Compiled by then: its hot loop runs in the JIT's code.
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 500 ))
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# Walked through the JIT's code: a stack cut short there, 1% at most (none seen in runs here).
	awk '{ all += $NF } /truncated/ { cut += $NF }
		END { printf "%d of %d cut short\n", cut, all; exit !(all >= 100 && cut * 100 <= all) }' "$T/folded" ||
		fail "$(grep truncated "$T/folded" | head -c 1000)"
	share "$T/folded" "zend_execute;$(chain)" 90
}

@test "php: a recursion 40 calls deep keeps each of its frames" {
	require_bpf
	start_php deep
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# Exactly 40 calls of down, between the script and reblochon.
	awk -v d="Cave::down (cheese.php:$L_down)" -v r="Cave::reblochon (cheese.php:$L_reblochon)" '
		{ all += $NF; n = gsub("Cave::down \\(cheese\\.php:[0-9]+\\)", "&")
		  if (n == 40 && index($0, "{main} (cheese.php:1);" d) && index($0, d ";" r)) whole += $NF }
		END { printf "%d of %d 40 deep\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "php: system-wide, a short script gone before the report keeps its names" {
	require_bpf
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -F 199 -f
	settled "$T/err"
	run php8.2 "$CHEESE" short
	assert_success
	pid=$(sed -n 's/^done //p' <<< "$output")
	[ -n "$pid" ] || fail "$output"
	tool_stop || fail "$(cat "$T/err")"
	[ ! -d "/proc/$pid" ] || fail "pid $pid lives on"
	run grep -c '^php8\.2;.*\[unknown_php\]' "$T/folded"
	assert_output 0
	awk -v c="$(chain)" '/^php8\.2;/ && index($0, "(cheese.php:") { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 50 && whole * 100 >= all * 90) }' "$T/folded"
}

@test "php: Debian 13's php8.4, chrooted in a PID namespace, named as 8.2 is" {
	require_bpf
	root=$BUILD/cache/php/8.4
	mkdir -p "$root/tmp/php"
	cp "$CHEESE" "$root/tmp/php/"
	: > "$T/work"
	unshare -m -p -f --kill-child --mount-proc="$root/proc" \
		chroot "$root" /usr/bin/php8.4 /tmp/php/cheese.php map > "$T/work" 2>&1 &
	NSPID=$!
	wait_for_line "$T/work" '^pid [0-9]+$' 30
	WPID=$(pgrep -P "$NSPID" | head -n 1)
	[ -n "$WPID" ] || fail "no php8.4 under unshare"
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'PHP 8.4: PHP frames in place of its VM loop' "$T/err" || fail "$(grep -i php "$T/err")"
	# 8.4 names a closure by where it is.
	share "$T/folded" "{main} (cheese.php:1);" 90
	share "$T/folded" "{closure:/tmp/php/cheese.php:$L_closure} (cheese.php:$L_closure);camembert (cheese.php:$L_camembert);Cave::reblochon (cheese.php:$L_reblochon)" 90
}

@test "php: a process that says it is PHP and holds garbage misleads the tool about itself only, boundedly" {
	require_bpf
	for mode in random unmapped cycle; do
		echo "# $mode"
		: > "$T/work"
		"$WL/fakephp" "$mode" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" '^pid ' 10
		tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
		tool_stop || fail "$(cat "$T/err")"
		cat "$T/err"
		if [ "$mode" = cycle ]; then
			# A call its own caller: the stack's slots filled, and said so.
			grep -q '^fakephp;\[truncated:_deeper_than_127_frames\];gouda\.\.\. (cave\.php:7);' "$T/folded" ||
				fail "$(head -c 1000 "$T/folded")"
			# A name of 2^62 bytes, read up to its bound.
			tr ';' '\n' < "$T/folded" | awk 'length > 300 { bad = 1 } END { exit bad }' ||
				fail "a name beyond its bound"
		else
			# Its call not readable: the loop's frame unknown, the native ones whole, and said.
			share "$T/folded" ';main;[unknown_php];fakephp_leaf' 90
			grep -q 'PHP frames are \[unknown php\]' "$T/err" || fail "not said"
		fi
		stop_bg "$WPID"
		WPID=
	done
}
