#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Java programs (tests/jvm/Cheese.java) under Debian's openjdk-17: their
# methods walked and named from the outside, with no agent, no flag and no
# restart, by what the JVM says of its code (gHotSpotVMStructs): compiled
# frames with the methods inlined into them, interpreted frames (-Xint)
# with their lines, stubs; in profile and offcputime, in every output;
# Debian 13's openjdk-21 too (tests/jvm/fetch: chrooted, a PID namespace);
# checked against the JVM's own view (jcmd Thread.print). A libjvm whose
# structures are garbage is said, and walked as the native code it is; one
# process's garbage in a real libjvm's tables misleads the tool about it only.

load helpers

setup_file() {
	"$ROOT/tests/jvm/fetch" "$BUILD/cache/jvm/21" > /dev/null
}

CHEESE=$ROOT/tests/jvm/Cheese.java
CLASSES=$BUILD/tests/jvm

setup() {
	T=$BATS_TEST_TMPDIR
	[ -f "$CLASSES/Cheese.class" ] || fail "no $CLASSES/Cheese.class: make check builds it (javac)"
	# The line of each call in the chain, as its frames name it.
	L_main=$(grep -n 'brie(100000); // the main loop' "$CHEESE" | cut -d: -f1)
	L_brie=$(grep -n 'return camembert(n)' "$CHEESE" | cut -d: -f1)
	L_camembert=$(grep -n 'return reblochon(n)' "$CHEESE" | cut -d: -f1)
	L_comte=$(grep -n '        beaufort();' "$CHEESE" | cut -d: -f1)
	L_beaufort=$(grep -n 'Thread.sleep(20)' "$CHEESE" | cut -d: -f1)
}

teardown() {
	# Its standard input closed, the workload exits.
	[ -z "${FEED:-}" ] || exec {FEED}>&-
	stop_bg ${TPID:-} ${WPID:-} ${NSPID:-} ${FAKE:-}
	assert_nothing_loaded profile offcputime
}

# start_jvm MODE JAVA_OPTIONS...: Cheese MODE ("": the chain) under java,
# fed by a pipe it exits at the close of; sets WPID, MAIN_TID and
# SLEEPER_TID once both threads run.
start_jvm() {
	local mode=$1
	shift
	: > "$T/work"
	mkfifo "$T/feed"
	java "$@" -cp "$CLASSES" Cheese $mode < "$T/feed" > "$T/work" 2>&1 &
	WPID=$!
	exec {FEED}> "$T/feed"
	wait_for_line "$T/work" '^tid sleeper [0-9]+$' 60
	wait_for_line "$T/work" '^tid main [0-9]+$' 60
	MAIN_TID=$(sed -n 's/^tid main //p' "$T/work")
	SLEEPER_TID=$(sed -n 's/^tid sleeper //p' "$T/work")
}

# The busy chain's frames from main down, as the reports name them (-F: folded, marks kept).
# reblochon's line is the sample's: none in its compiled code's entry, before its first bytecode.
chain() {
	local i=${1:-}
	echo "Cheese.main (Cheese.java:$L_main);Cheese.brie (Cheese.java:$L_brie);Cheese.camembert (Cheese.java:$L_camembert)$i;Cheese.reblochon (Cheese.java"
}

@test "jvm: profile names the busy thread's Java chain, inlined methods marked, whole to its root, as jcmd sees it" {
	require_bpf
	start_jvm ""
	# Compiled: C2 inlines camembert and reblochon into brie.
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_start "$T/json" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 --json
	wait_cpu "$MAIN_TID" $(( $(cpu_ms "$WPID/task/$MAIN_TID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'HotSpot 17: Java frames walked by its code cache' "$T/err" ||
		fail "$(grep -iE 'hotspot|jvm' "$T/err")"
	# Inlined or not (the JIT's choice, and when it made it), the same chain.
	sed 's/_\[i\]"/"/g' "$T/json" > "$T/plain.json"
	chain_share "$T/plain.json" "$MAIN_TID" samples "$(chain)" 90
	# Whole: from the thread's start through the launcher and the call stub into Java.
	run jq -r --argjson t "$MAIN_TID" 'select(.pid == $t) | .frames | join(";")' "$T/json"
	assert_output --regexp '(^|;)start_thread;ThreadJavaMain;JavaMain;.*JavaCalls::call_helper.*;\[StubRoutines \(1\)\];Cheese\.main \('
	refute_output --partial '[unknown'
	# No stack cut short, but for a sample in a compiled method's prologue, before
	# its frame is made, which ends marked (docs/runtimes/java.md): 1 of 414 in a
	# CI run; 1% at most.
	jq -r --argjson t "$MAIN_TID" 'select(.pid == $t) | [.samples, (.frames | join(";"))] | @tsv' "$T/json" |
		awk -F'\t' '{ all += $1 }
			/\[truncated/ { if (index($2, "[truncated: Java frame not followed]")) cut += $1; else other += $1 }
			END { printf "%d of %d cut in a prologue, %d otherwise\n", cut, all, other
			      exit !(other == 0 && cut * 100 <= all) }'
	# The methods C2 inlined are frames of their own, marked as inlined.
	run jq -r --argjson t "$MAIN_TID" 'select(.pid == $t) | [.frames, .kinds] | transpose[] |
		select(.[0] | startswith("Cheese.")) | "\(.[1]) \(.[0])"' "$T/json"
	assert_line --regexp '^inlined Cheese\.reblochon \(Cheese\.java:[0-9]+\)_\[i\]$'
	assert_line "java Cheese.brie (Cheese.java:$L_brie)"
	# The JVM's own view of the thread: the same methods, calls at the same lines.
	run jcmd "$WPID" Thread.print
	assert_success
	awk '/^"main"/ { on = 1 } on && /^$/ { exit } on' <<< "$output" > "$T/jcmd"
	grep -q "at Cheese.camembert(Cheese.java:$L_camembert)" "$T/jcmd" || fail "jcmd: $(cat "$T/jcmd")"
	grep -q "at Cheese.brie(Cheese.java:$L_brie)" "$T/jcmd" || fail "jcmd: $(cat "$T/jcmd")"
	grep -q "at Cheese.main(Cheese.java:$L_main)" "$T/jcmd" || fail "jcmd: $(cat "$T/jcmd")"
}

@test "jvm: interpreted frames (-Xint) each named with the line it runs, in folded, SVG and pprof alike" {
	require_bpf
	start_jvm "" -Xint
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f --svg "$T/p.svg" \
		--pprof "$T/p.pb.gz"
	wait_cpu "$MAIN_TID" $(( $(cpu_ms "$WPID/task/$MAIN_TID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	# The main thread's samples: the launcher's thread is named java too, but asleep.
	awk -v c="$(chain)" '/^java;/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/folded"
	# Not compiled: nothing inlined; reblochon at a line of its loop.
	run grep -c 'Cheese\.[a-z]* ([^)]*)_\[i\]' "$T/folded"
	assert_output 0
	L_loop=$(grep -n 'x += i \* i' "$CHEESE" | cut -d: -f1)
	grep -q "Cheese.reblochon (Cheese.java:$L_loop)" "$T/folded" || fail "$(head -c 2000 "$T/folded")"
	grep -q "Cheese.reblochon (Cheese.java:$L_loop)" "$T/p.svg"
	run go tool pprof -traces "$T/p.pb.gz"
	assert_success
	assert_output --partial "Cheese.reblochon"
}

@test "jvm: offcputime puts the sleeping thread's time under comte and beaufort, in Thread.sleep" {
	require_bpf
	start_jvm ""
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -p "$WPID" -f
	# Fifty of its sleeps (each a switch away from its CPU), however slow the machine.
	wait_switches "$WPID/task/$SLEEPER_TID" 50
	tool_stop || fail "$(cat "$T/err")"
	# The thread's lambda by its class without the run's number, as Java's traces name it.
	grep -q ';Cheese$$Lambda.run (Unknown Source);Cheese.lambda$main$0 (Cheese.java:[0-9]*);Cheese.comte (' \
		"$T/folded" || fail "$(grep -o 'Cheese$$Lambda[^;]*' "$T/folded" | sort -u)"
	awk -v c="Cheese.comte (Cheese.java:$L_comte);Cheese.beaufort (Cheese.java:$L_beaufort)" \
		'/^sleeper;/ { all += $NF; if (index($0, c) && index($0, ";java.lang.Thread.sleep (Thread.java)")) whole += $NF }
		END { printf "%d of %d us under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		<(sed 's/_\[i\]//g' "$T/folded")
}

@test "jvm: profile --wall has the sleeping thread [sleeping] under comte and beaufort, in Thread.sleep" {
	require_bpf
	start_jvm ""
	: > "$T/err"
	"$BIN/profile" --wall -p "$WPID" -F 99 -f > "$T/folded" 2> "$T/err" &
	TPID=$!
	wait_for_any 'Wall-clock time of PID' 120 "$T/folded" "$T/err"
	wait_switches "$WPID/task/$SLEEPER_TID" 50
	tool_stop || fail "$(cat "$T/err")"
	awk -v c="Cheese.comte (Cheese.java:$L_comte);Cheese.beaufort (Cheese.java:$L_beaufort)" \
		'/^sleeper;/ { all += $NF
			if (/^sleeper;\[sleeping\];/ && index($0, c) && index($0, ";java.lang.Thread.sleep (Thread.java)"))
				whole += $NF }
		END { printf "%d of %d us asleep under the chain\n", whole, all; exit !(all >= 500000 && whole * 100 >= all * 90) }' \
		<(sed 's/_\[i\]//g' "$T/folded")
}

@test "jvm: system-wide, a JVM started after the tool has its Java frames named" {
	require_bpf
	tool_start "$T/folded" "$T/err" "$BIN/profile" -F 199 -f
	start_jvm ""
	wait_cpu "$MAIN_TID" $(( $(cpu_ms "$WPID/task/$MAIN_TID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	sed 's/_\[i\]//g' "$T/folded" > "$T/plain"
	awk -v c="$(chain)" '/^java;.*Cheese\.brie/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/plain"
}

@test "jvm: a process whose HotSpot tables hold garbage is said, and its native frames walked as they are" {
	require_bpf
	for mode in random fields; do
		echo "# $mode"
		: > "$T/work"
		"$WL/fakejvm" "$mode" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" '^pid ' 10
		tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 199 -f
		wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
		tool_stop || fail "$(cat "$T/err")"
		cat "$T/err"
		# Said at most once (a code cache not there is a JVM still starting: nothing to say).
		run grep -c "pid $WPID: its JVM could not be read" "$T/err"
		[ "$output" -le 1 ] || fail "said $output times"
		! grep -q 'no room for their interpreter' "$T/err" || fail "$(cat "$T/err")"
		awk '{ all += $NF; if (/;main;fakejvm_outer;fakejvm_leaf( |$)/) whole += $NF }
			END { printf "%d of %d whole\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' \
			"$T/folded"
		! grep -q 'unknown java\]\|\[Stub' "$T/folded" || fail "Java frames in a process that runs none"
		stop_bg "$WPID"
		WPID=
	done
}

@test "jvm: a pool of 50 threads, each walked whole through the executor to the chain" {
	require_bpf
	start_jvm pool
	for ((i = 0; i < 600; i++)); do
		[ "$(grep -c '^tid pool ' "$T/work")" = 50 ] && break
		sleep 0.1
	done
	[ "$(grep -c '^tid pool ' "$T/work")" = 50 ] || fail "$(grep -c '^tid pool ' "$T/work") of the pool's threads run"
	# Its JIT settled first (code made and freed is the churn test's): the pool's walk is asked here.
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 3000 ))
	tool_start "$T/json" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --json
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 5000 ))
	tool_stop || fail "$(cat "$T/err")"
	sed 's/_\[i\]"/"/g' "$T/json" > "$T/plain.json"
	# Every thread of the pool is seen, and nine in ten of their samples carry the chain.
	jq -r 'select(.comm | startswith("pool-")) | [.pid, .samples, (.frames | join(";"))] | @tsv' \
		"$T/plain.json" | awk -F'\t' -v c="java.util.concurrent.ThreadPoolExecutor\$Worker.run (ThreadPoolExecutor.java:" \
		-v l="Cheese.lambda\$main\$" -v b="Cheese.brie (Cheese.java:$L_brie);Cheese.camembert (Cheese.java:$L_camembert);Cheese.reblochon (Cheese.java" '
		{ all += $2; seen[$1] = 1; if (index($3, c) && index($3, l) && index($3, b)) whole += $2
		  else off[substr($3, length($3) - 299)] += $2 }
		END { printf "%d threads, %d of %d samples the chain\n", length(seen), whole, all
		      ok = length(seen) == 50 && all >= 500 && whole * 100 >= all * 90
		      # What a failure saw instead: the commonest stacks off the chain, by their leaf end.
		      for (i = 0; !ok && i < 3; i++) {
			top = ""; n = 0
			for (k in off) if (off[k] > n) { n = off[k]; top = k }
			if (n) printf "off the chain (%d): ...%s\n", n, top
			delete off[top]
		      }
		      exit !ok }'
}

@test "jvm: classes unloaded and code deoptimized while profiled: frames named rightly, or [unknown java] and said" {
	require_bpf
	start_jvm churn
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 499 -f
	wait_cpu "$MAIN_TID" $(( $(cpu_ms "$WPID/task/$MAIN_TID") + 3000 ))
	tool_stop || fail "$(cat "$T/err")"
	cat "$T/err"
	# Every Java frame of ours names a method the source has, at a line of it.
	lines=$(wc -l < "$CHEESE")
	tr ';' '\n' < <(sed 's/ [0-9]*$//; s/_\[i\]//g' "$T/folded") | grep '^Cheese' | sort -u > "$T/frames"
	[ -s "$T/frames" ] || fail "no frame of Cheese: $(head -c 1000 "$T/folded")"
	while read -r frame; do
		method=${frame%% (*}
		method=${method##*.}
		where=${frame#* (}
		if [[ $frame == 'Cheese$$Lambda.'* ]]; then
			# A lambda's class: its method is its interface's, and it has no source file.
			[ "$where" = 'Unknown Source)' ] || fail "misplaced: $frame"
			continue
		fi
		case $method in
		'<init>' | '<clinit>') ;;
		*) grep -q "[ .]$method(" "$CHEESE" || [[ $method =~ ^lambda\$main\$[0-9]+$ ]] ||
			fail "misnamed: $frame" ;;
		esac
		if [[ $where =~ ^Cheese\.java:([0-9]+)\)$ ]]; then
			[ "${BASH_REMATCH[1]}" -le "$lines" ] || fail "no such line: $frame"
		else
			[ "$where" = 'Cheese.java)' ] || fail "misplaced: $frame"
		fi
	done < "$T/frames"
	# What could not be named is said.
	if grep -q 'unknown java' "$T/folded"; then
		grep -q 'Java frames are \[unknown java\]' "$T/err" || fail "[unknown java] frames, not said"
	fi
	# The chain is still there.
	grep -q "Cheese.brie (Cheese.java:$L_brie);Cheese.camembert (Cheese.java:$L_camembert)" <(sed 's/_\[i\]//g' "$T/folded")
}

@test "jvm: java -jar of a short program, gone before the report, keeps its Java names" {
	require_bpf
	tool_start "$T/folded" "$T/err" "$BIN/profile" -F 199 -f
	run java -jar "$CLASSES/cheese.jar" short
	assert_success
	pid=$(sed -n 's/^done //p' <<< "$output")
	tool_stop || fail "$(cat "$T/err")"
	[ ! -d "/proc/$pid" ] || fail "pid $pid lives on"
	sed 's/_\[i\]//g' "$T/folded" > "$T/plain"
	awk -v c="Cheese.main (Cheese.java:" -v b="Cheese.brie (Cheese.java:$L_brie);Cheese.camembert (Cheese.java:$L_camembert);Cheese.reblochon (Cheese.java" '
		/^java;/ && index($0, "Cheese.") { all += $NF; if (index($0, c) && index($0, b)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 80) }' "$T/plain"
}

@test "jvm: Debian 13's openjdk-21, chrooted in a PID namespace, named as 17 is" {
	require_bpf
	root=$BUILD/cache/jvm/21
	mkdir -p "$root/tmp/jvm"
	cp "$CLASSES"/*.class "$root/tmp/jvm/"
	: > "$T/work"
	mkfifo "$T/feed"
	# Its launcher finds its libraries by $ORIGIN, which needs a /proc.
	unshare -m -p -f --kill-child --mount-proc="$root/proc" \
		chroot "$root" /usr/lib/jvm/default/bin/java -cp /tmp/jvm Cheese < "$T/feed" > "$T/work" 2>&1 &
	NSPID=$!
	exec {FEED}> "$T/feed"
	wait_for_line "$T/work" '^tid main [0-9]+$' 60
	WPID=$(pgrep -P "$NSPID" | head -n 1)
	[ -n "$WPID" ] || fail "no java under unshare"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1000 ))
	tool_start "$T/folded" "$T/err" "$BIN/profile" -v -p "$WPID" -F 199 -f
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	grep -q 'HotSpot 21: Java frames walked by its code cache' "$T/err" ||
		fail "$(grep -iE 'hotspot|jvm' "$T/err")"
	sed 's/_\[i\]//g' "$T/folded" > "$T/plain"
	awk -v c="$(chain)" '/^java;.*Cheese\.brie/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/plain"
	# Its call stub is in a blob 21 calls "StubRoutines (initial stubs)".
	grep -q ';\[StubRoutines ([^)]*)\];Cheese.main (' "$T/plain" || fail "$(head -c 2000 "$T/plain")"
	# What C2 inlined, marked (its debug information in 21's encoding).
	grep -q 'Cheese.camembert (Cheese.java:[0-9]*)_\[i\]' "$T/folded" || fail "nothing inlined: $(head -c 2000 "$T/folded")"
}

@test "jvm: a process that loads the real libjvm and puts garbage in its tables misleads the tool about itself only" {
	require_bpf
	libjvm=$(dirname "$(readlink -f "$(command -v java)")")/../lib/server/libjvm.so
	"$WL/jvmpoison" "$libjvm" > "$T/fake" &
	FAKE=$!
	wait_for_line "$T/fake" '^pid ' 10
	# System-wide, the planted process is read first (its garbage fails, and is tried
	# again later), then a real JVM of the same libjvm.
	tool_start "$T/folded" "$T/err" "$BIN/profile" -F 199 -f
	wait_cpu "$FAKE" $(( $(cpu_ms "$FAKE") + 500 ))
	start_jvm ""
	wait_cpu "$MAIN_TID" $(( $(cpu_ms "$WPID/task/$MAIN_TID") + 2000 ))
	tool_stop || fail "$(cat "$T/err")"
	stop_bg "$FAKE"
	sed 's/_\[i\]//g' "$T/folded" > "$T/plain"
	awk -v c="$(chain)" '/^java;.*Cheese\.brie/ { all += $NF; if (index($0, c)) whole += $NF }
		END { printf "%d of %d the chain\n", whole, all; exit !(all >= 100 && whole * 100 >= all * 90) }' "$T/plain"
}
