#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Node.js programs (tests/node/cheese.js) under this machine's node (20,
# V8 11.3, one static executable) and Debian's 18 and 20 (V8 10.2 and 11.3
# in a stripped libnode.so, unpacked by tests/node/fetch and run chrooted,
# in a PID namespace of their own): their JavaScript functions named from
# the outside, with no flag and no restart, in place of the anonymous JIT
# code and builtins the native walk passes through, in profile and
# offcputime, in every output; --perf-basic-prof processes agree; a V8 not
# known here (Debian's node 24) is said, its frames left as they are.

load helpers

setup_file() {
	for v in 18 20 24; do
		"$ROOT/tests/node/fetch" "$v" "$BUILD/cache/node/$v" > /dev/null || return 1
	done
}

CHEESE=$ROOT/tests/node/cheese.js

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T
	# Each function's first line, as its frames name it.
	for f in main brie camembert reblochon napping doze; do
		eval "L_$f=$(grep -n "^function $f(" "$CHEESE" | cut -d: -f1)"
	done
	L_ctor=$(grep -n 'constructor(n)' "$CHEESE" | cut -d: -f1)
	L_melt=$(grep -n 'const melt' "$CHEESE" | cut -d: -f1)
}

teardown() {
	[ -z "${NSPID:-}" ] || { kill -KILL "$NSPID"; wait "$NSPID"; } 2> /dev/null || true
	stop_bg ${TPID:-} ${WPID:-}
	[ -z "${WPID:-}" ] || rm -f "/tmp/perf-$WPID.map"
	assert_nothing_loaded profile offcputime
}

# start_node ARGS...: node ARGS (cheese.js and its mode among them); sets WPID.
start_node() {
	: > "$T/work"
	# In the test's directory: --perf-basic-prof writes V8's log where node runs.
	(cd "$T" && exec node "$@") > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
}

@test "node: profile names the busy thread's JavaScript chain, from the outside, no flag" {
	require_bpf
	# Optimized code without inlining: each function a frame of its own.
	start_node --no-turbo-inlining "$CHEESE" busy
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -qE 'V8 1[01]\.[0-9]+: JavaScript frames named by their functions' "$T/err" ||
		fail "$(grep -i v8 "$T/err")"
	chain_share "$T/json" "$WPID" samples \
		"main (cheese.js:$L_main);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)" 90
	# Whole: from node's own main through its C++ into JavaScript, nothing anonymous.
	run jq -r 'select(.frames | any(. == "reblochon (cheese.js:'"$L_reblochon"')")) | .frames | join(";")' "$T/json"
	assert_output --regexp '(^|;)_start;.*node::Start.*;main \(cheese\.js:'
	refute_output --partial '[unknown]'
	run jq -r '.kinds[]' "$T/json"
	assert_line js
}

# chain: the busy chain's frames from main down, as the reports name them, inlined or not.
chain() {
	echo "main (cheese.js:$L_main);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)"
}

# inlined_frames JSON TID: "KIND FRAME" of each of thread TID's frames of cheese.js, once.
inlined_frames() {
	jq -r --argjson t "$2" 'select(.pid == $t) | [.frames, .kinds] | transpose[] |
		select(.[0] | contains("(cheese.js:")) | "\(.[1]) \(.[0])"' "$1" | sort -u
}

@test "node: optimized code's inlined calls are frames of their own, marked, in order, nothing anonymous" {
	require_bpf
	start_node "$CHEESE" busy
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q "V8 11\.3: JavaScript frames named by their functions, optimized code's by the calls it inlined too" "$T/err" ||
		fail "$(grep -i v8 "$T/err")"
	# Inlined or not (V8's choice, and when it made it), the same chain.
	sed 's/_\[i\]"/"/g' "$T/json" > "$T/plain.json"
	chain_share "$T/plain.json" "$WPID" samples "$(chain)" 90
	# main's loop, optimized on the stack, takes the chain in: its calls
	# are frames of their own, marked as inlined, under main's own.
	run inlined_frames "$T/json" "$WPID"
	assert_line "js main (cheese.js:$L_main)"
	assert_line "inlined reblochon (cheese.js:$L_reblochon)_[i]"
	run jq -r --argjson t "$WPID" 'select(.pid == $t) | .frames | join(";")' "$T/json"
	refute_output --partial '[unknown'
}

@test "node: each tier's frames (the interpreter's, Sparkplug's baseline code, TurboFan's) named alike" {
	require_bpf
	for tier in "--no-sparkplug --max-opt=0" "--always-sparkplug --max-opt=1" "--no-turbo-inlining"; do
		start_node $tier "$CHEESE" busy
		tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1500 ))
		tool_stop || fail "$(cat "$T/err")"
		echo "# $tier"
		chain_share "$T/json" "$WPID" samples "$(chain)" 90
		stop_bg "$WPID"
		WPID=
	done
}

@test "node: offcputime puts the sleeping thread under its JavaScript callers" {
	require_bpf
	start_node "$CHEESE" nap
	tool_start "$T/json" "$T/err" "$BIN/offcputime" -p "$WPID" --json
	# 50 of its 20 ms naps, by its own count of switches.
	f=/proc/$WPID/status
	n0=$(awk '/^voluntary_ctxt_switches/ { print $2 }' "$f")
	until [ $(( $(awk '/^voluntary_ctxt_switches/ { print $2 }' "$f") - n0 )) -ge 50 ]; do
		sleep 0.1
	done
	tool_stop || fail "$(cat "$T/err")"
	chain_share "$T/json" "$WPID" total_us "main (cheese.js:$L_main);doze (cheese.js:$L_doze);napping (cheese.js:$L_napping)" 90
}

@test "node: a class's constructor and an arrow function, as V8 names them; folded, SVG and pprof alike" {
	require_bpf
	start_node --no-turbo-inlining "$CHEESE" class
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" --pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# V8 names a constructor by its class, an arrow function by its variable.
	grep -qF "Fondue (cheese.js:$L_ctor);melt (cheese.js:$L_melt);brie (cheese.js:$L_brie)" "$T/folded" ||
		fail "$(head -c 3000 "$T/folded")"
	grep -qF "brie (cheese.js:$L_brie)" "$T/p.svg"
	# pprof: each function with its file and first line.
	run go tool pprof -raw "$T/p.pb.gz"
	assert_success
	assert_output --regexp " brie $CHEESE:$L_brie s=$L_brie"
	# SVG: well-formed, the frame there in the JavaScript colour (yellow).
	xmllint --noout "$T/p.svg"
	run grep -A1 -E "<title>brie \\(cheese\\.js:$L_brie\\) \\(" "$T/p.svg"
	assert_output --regexp 'fill="rgb\((2[0-3][0-9]),(19[0-9]|2[0-2][0-9]),([4-7][0-9])\)"'
}

@test "node: --perf-basic-prof processes are named by the walk as without it, each function once" {
	require_bpf
	start_node --perf-basic-prof --no-turbo-inlining "$CHEESE" busy
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	[ -s "/tmp/perf-$WPID.map" ]
	chain_share "$T/json" "$WPID" samples \
		"main (cheese.js:$L_main);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)" 90
}

# start_debian VERSION ARGS...: Debian's node VERSION, chrooted, as pid 1 of
# a PID namespace of its own, running ARGS (cheese.js, copied into its
# root, and its mode); sets WPID (its pid on the host) and NSPID (unshare's).
start_debian() {
	local root=$BUILD/cache/node/$1
	shift
	cp "$CHEESE" "$root/tmp/cheese.js"
	: > "$T/work"
	env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin unshare -p -f --kill-child chroot "$root" \
		/usr/bin/node "$@" > "$T/work" &
	NSPID=$!
	wait_for_line "$T/work" '^pid ' 60
	grep -q '^pid 1$' "$T/work" || fail "not pid 1 of its namespace: $(cat "$T/work")"
	WPID=$(pgrep -P "$NSPID" | head -n 1)
	[ -n "$WPID" ] || fail "no process under unshare"
}

@test "node: Debian's node 18 and 20 (V8 10.2 and 11.3 in a stripped libnode.so), chrooted in a PID namespace, named alike, inlined calls too" {
	require_bpf
	for v in 18 20; do
		start_debian "$v" /tmp/cheese.js busy
		tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
		tool_stop || fail "$(cat "$T/err")"
		grep -qE "libnode\.so\.[0-9]+: V8 1[01]\.[0-9]+: JavaScript frames named by their functions, optimized code's by the calls it inlined too" "$T/err" ||
			fail "node $v: $(grep -i v8 "$T/err")"
		echo "# node $v"
		sed 's/_\[i\]"/"/g' "$T/json" > "$T/plain.json"
		chain_share "$T/plain.json" "$WPID" samples "$(chain)" 90
		# Their code read as 10.2 lays it out (a header) and as 11.3 does (a pointer).
		run inlined_frames "$T/json" "$WPID"
		assert_line "inlined reblochon (cheese.js:$L_reblochon)_[i]"
		kill -KILL "$NSPID"
		wait "$NSPID" || true
		NSPID= WPID=
	done
}

@test "node: a V8 not known here (Debian's node 24, V8 13.6) is said once by name, its frames not misnamed" {
	require_bpf
	start_debian 24 /tmp/cheese.js busy
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_stop || fail "$(cat "$T/err")"
	run grep -c 'V8 13.6, whose structures are not known here: its JavaScript frames are not named' "$T/err"
	assert_output 1
	run jq -r 'select(.pid == '"$WPID"') | .kinds[]' "$T/json"
	refute_line js
	run grep -c 'cheese.js' "$T/json"
	assert_output 0
}

# js_lines: "NAME LINE" for each function of cheese.js, as its frames name them.
js_lines() {
	awk '/^function [a-z]+\(/ { n = $2; sub(/\(.*/, "", n); print n, NR }
	     /^ *const [a-z]+ = \(/ { print $2, NR }
	     /^class / { c = $2 } /constructor\(/ { print c, NR }' "$CHEESE"
}

@test "node: names stay right while V8's collector moves the functions, their closures and code" {
	require_bpf
	# Closures made anew at each call, garbage beside them: scavenges all
	# along; optimized code, with the calls it inlined, made and dropped.
	start_node --trace-gc "$CHEESE" churn
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	gc0=$(grep -c Scavenge "$T/work")
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 3000 ))
	tool_stop || fail "$(cat "$T/err")"
	gcs=$(( $(grep -c Scavenge "$T/work") - gc0 ))
	echo "# $gcs scavenges while profiled"
	[ "$gcs" -ge 10 ]
	L_gouda=$(grep -n 'const gouda' "$CHEESE" | cut -d: -f1)
	L_churn=$(grep -n '^function churn(' "$CHEESE" | cut -d: -f1)
	# churn allocates, and collects, in its own frame: the chain below it
	# half the time at least, inlined or not.
	sed 's/_\[i\]"/"/g' "$T/json" > "$T/plain.json"
	chain_share "$T/plain.json" "$WPID" samples "main (cheese.js:$L_main);churn (cheese.js:$L_churn)" 90
	chain_share "$T/plain.json" "$WPID" samples \
		"main (cheese.js:$L_main);churn (cheese.js:$L_churn);gouda (cheese.js:$L_gouda);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)" 50
	# Every frame of the script's is one of its functions at its own first line: none misnamed.
	js_lines > "$T/lines"
	jq -r '.frames[]' "$T/plain.json" | grep -F '(cheese.js:' | sort -u > "$T/named"
	awk 'NR == FNR { ok[$1 " (cheese.js:" $2 ")"] = 1; next }
	     $0 != "<anonymous> (cheese.js:1)" && !ok[$0] { print "misnamed: " $0; bad = 1 }
	     END { exit bad }' "$T/lines" "$T/named"
	# Optimized code's inlined calls among them.
	run inlined_frames "$T/json" "$WPID"
	assert_line --regexp '^inlined (brie|camembert|reblochon) \(cheese\.js:[0-9]+\)_\[i\]$'
	! grep -q 'JavaScript frames are \[unknown js\]' "$T/err" || echo "# $(grep 'unknown js' "$T/err")"
}

@test "node: 2000 functions of one script, compiled apart: each frame its own function at its own line, none unnamed" {
	require_bpf
	# fI on many.js's line I + 1, each calling edam (line 1): as many
	# distinct compiled codes as V8 makes of them, with edam inlined or not.
	start_node "$CHEESE" many 2000
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 999 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 8000 ))
	tool_stop || fail "$(cat "$T/err")"
	# Of the main thread's samples (under main), those in many.js (the
	# rest: main's own loop); the functions seen, and those seen optimized
	# (edam inlined into them); the samples unnamed, of all threads.
	run awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); all += n
		   if (s ~ /\[unknown js\]/) unknown += n
		   if (s !~ /;main \(cheese\.js:[0-9]+\)/) next
		   main += n
		   k = split(s, fr, ";"); ours = 0; f = ""
		   for (i = 1; i <= k; i++) {
			if (fr[i] !~ /many\.js/) continue
			ours = 1
			inl = sub(/_\[i\]$/, "", fr[i])
			if (fr[i] == "edam (many.js:1)") { if (inl && f != "") opt[f] = 1; continue }
			f = fr[i]; sub(/^f/, "", f); sub(/ .*/, "", f)
			if (fr[i] != "f" f " (many.js:" f + 1 ")") { print "misnamed: " fr[i]; bad = 1 }
			seen[f] = 1
		   }
		   if (ours) named += n }
		 END { for (f in seen) fns++
		       for (f in opt) opts++
		       printf "%d of the main thread'"'"'s %d samples in many.js; %d functions seen, %d optimized; %d of %d unnamed\n",
			      named, main, fns, opts, unknown, all
		       exit bad || named * 100 < main * 75 || fns < 1000 || opts < 100 || unknown * 100 > all }' "$T/folded"
	echo "# $output"
	assert_success
	grep "frame names" "$T/err" | sed 's/^/# /'
}

@test "node: a worker thread's JavaScript, its own isolate, named as the main thread's" {
	require_bpf
	start_node --no-turbo-inlining "$CHEESE" worker
	wait_for_line "$T/work" '^worker ' 60
	tid=$(awk '/^worker / { print $2 }' "$T/work")
	[ -d "/proc/$WPID/task/$tid" ] || fail "no thread $tid in $WPID: $(cat "$T/work")"
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID/task/$tid" $(( $(cpu_ms "$WPID/task/$tid") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	chain_share "$T/json" "$tid" samples \
		"main (cheese.js:$L_main);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)" 90
}

@test "node: a script gone before the report keeps its names" {
	require_bpf
	# System-wide: the script starts after the tool, and ends after a second of CPU.
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -F 199 -f
	settled "$T/err"
	node --no-turbo-inlining "$CHEESE" brief > "$T/work"
	WPID=
	tool_stop || fail "$(cat "$T/err")"
	# Its chain named after it exited (50 samples at least of its 199 a
	# second of CPU), and no frame of the script left unnamed.
	grep '^node;.*(cheese\.js:' "$T/folded" > "$T/ours" || fail "no sample of the script"
	awk -v c="main (cheese.js:$L_main);brie (cheese.js:$L_brie);camembert (cheese.js:$L_camembert);reblochon (cheese.js:$L_reblochon)" \
		'{ n = $NF; all += n; if (index($0, c)) whole += n; if (/\[unknown/) unnamed += n }
		 END { printf "%d of %d the chain, %d unnamed\n", whole, all, unnamed; exit !(whole >= 50 && !unnamed) }' "$T/ours"
}

# fakev8_profile [jit|jitlost]: tests/node/fakev8 built and run (its frames without
# CFI, by frame pointers, as V8's JIT code), profile -f on it for 1.5 s of
# its CPU into $T/folded and $T/err; bounded: a walk or a naming that never
# ended would be killed (124).
fakev8_profile() {
	gcc -O0 -fno-omit-frame-pointer -fno-asynchronous-unwind-tables -fno-unwind-tables \
		-c "$ROOT/tests/node/fakev8frame.c" -o "$T/frame.o"
	gcc -O2 -fno-omit-frame-pointer -o "$T/fakev8" "$ROOT/tests/node/fakev8.c" "$T/frame.o"
	: > "$T/work"
	"$T/fakev8" 0 "$@" > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
	tool_start "$T/folded" "$T/err" timeout 120 "$BIN/profile" -v -U -f -F 199 -p "$WPID"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1500 ))
	tool_stop || fail "profile failed: $(tail -n 5 "$T/err")"
}

@test "node: a fake V8 whose frames hold planted objects: bounded, escaped, nothing misnamed" {
	require_bpf
	fakev8_profile
	grep -q 'fakev8: V8 11.3: JavaScript frames named by their functions' "$T/err"
	# The planted name and script escaped, whole to main; no raw escape anywhere.
	run grep -c $'\033' "$T/folded" "$T/err"
	refute_output --regexp ':[1-9]'
	grep -F 'main;\x1b[2J\x1b]0:pwned\x07evil\x0aname:x (\x1b[31mred.js);' "$T/folded" ||
		fail "$(head -c 3000 "$T/folded")"
	# The function nowhere: its frames stay the native code they are.
	grep -qE '^fakev8;.*main;fakev8_frame;fakev8_frame;fakev8_leaf [0-9]+$' "$T/folded"
}

@test "node: a fake V8's compiled code that lies about itself (a Code over all memory after it, inlined calls in a circle, decoys): bounded, escaped, nothing misnamed" {
	require_bpf
	[ "$(uname -m)" = x86_64 ] || skip "its planted code is x86-64's"
	fakev8_profile jit
	grep -q "fakev8: V8 11.3: JavaScript frames named by their functions, optimized code's by the calls it inlined too" "$T/err"
	run grep -c $'\033' "$T/folded" "$T/err"
	refute_output --regexp ':[1-9]'
	evil='\x1b[2J\x1b]0:pwned\x07evil\x0aname:x (\x1b[31mred.js)'
	# Each stack past the planted function (ENVIRON: awk -v would unescape it).
	P="fakev8;_start;__libc_start_main;__libc_start_call_main;main;$evil;" run awk \
		'index($0, ENVIRON["P"]) == 1 { sub(/ [0-9]+$/, ""); print substr($0, length(ENVIRON["P"]) + 1); next }
		 { print "other: " $0 }' "$T/folded"
	# Under its Code: the planted calls, once each, the circle not followed;
	# under the decoys, no Code of its own found: its function alone, as the
	# walk saw it. Nothing else.
	assert_line "${evil}_[i];<anonymous> (<native>)_[i];fakev8_leaf"
	assert_line "fakev8_leaf"
	[ "${#lines[@]}" -eq 2 ] || fail "$output"
}

@test "node: optimized code whose inlined call's function cannot be read keeps none of its inlined calls, and says so at exit" {
	require_bpf
	[ "$(uname -m)" = x86_64 ] || skip "its planted code is x86-64's"
	fakev8_profile jitlost
	evil='\x1b[2J\x1b]0:pwned\x07evil\x0aname:x (\x1b[31mred.js)'
	# Its function alone, under its Code as under the decoys: the outer
	# inlined call, readable, is not kept without the inner one.
	P="fakev8;_start;__libc_start_main;__libc_start_call_main;main;$evil;" run awk \
		'index($0, ENVIRON["P"]) == 1 { sub(/ [0-9]+$/, ""); print substr($0, length(ENVIRON["P"]) + 1); next }
		 { print "other: " $0 }' "$T/folded"
	assert_output "fakev8_leaf"
	grep -E '^profile: 1 JavaScript frames are named without the calls their compiler inlined there: one of those calls. functions could not be read$' "$T/err" ||
		fail "$(cat "$T/err")"
}
