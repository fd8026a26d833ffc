#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Go programs (tests/go/gowork.go), built by Debian's Go 1.19 (pclntab
# layout 1.18-1.19) and trixie's 1.24 (layout 1.20+), each with symbols,
# stripped (-s -w) and without section headers: named from Go's own table,
# callers and inlined calls included, files and lines in pprof; and what
# offcputime means for a Go program.

load helpers
load folded

setup_file() {
	go_workloads
}

setup() {
	T=$BATS_TEST_TMPDIR
	GW=$BUILD/tests/go
	GOSYM=$BUILD/tests/unit/gosym
	export HOME=$T GOCACHE=$T/gocache
	[ "$GOVERS" = "1.19 1.24 " ] || fail "Go workloads not built: '$GOVERS'"
}

teardown() {
	stop_bg ${WPID:-} ${TPID:-}
	assert_nothing_loaded profile offcputime offwaketime
}

# gowork BINARY MODE: starts it, until stopped (SECONDS 0), and waits until it runs.
gowork() {
	: > "$T/work"
	"$1" "$2" 0 > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^ready' 60
}

# sampled MS OUT ERR TOOL ARGS...: TOOL ARGS -p on the program ($WPID)
# from its banner until it has had MS ms more of CPU (its threads', in
# all), then stopped as with Ctrl-C: about MS / 2 samples at 499 Hz,
# however slowly a loaded machine runs it. Then the program is stopped.
sampled() {
	local ms=$1 out=$2 err=$3
	shift 3
	tool_start "$out" "$err" "$@" -p "$WPID"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + ms ))
	tool_stop || fail "$(tail -n 5 "$err")"
	stop_bg "$WPID"
	WPID=
}

# counted N LINE OUT ERR TOOL ARGS...: TOOL ARGS -p on the program ($WPID)
# from its banner until it has printed LINE N times more (after each of
# its sleeps, naps or reads: what an off-CPU tool sees it wait in), then
# stopped as with Ctrl-C. Then the program is stopped.
counted() {
	local n=$1 line=$2 out=$3 err=$4 want
	shift 4
	tool_start "$out" "$err" "$@" -p "$WPID"
	want=$(( $(grep -c "^$line\$" "$T/work" || true) + n ))
	for ((i = 0; i < 1200; i++)); do
		[ "$(grep -c "^$line\$" "$T/work" || true)" -ge "$want" ] && break
		sleep 0.1
	done
	[ "$(grep -c "^$line\$" "$T/work" || true)" -ge "$want" ] ||
		fail "the program did not say '$line' $n times more in two minutes"
	tool_stop || fail "$(tail -n 5 "$err")"
	stop_bg "$WPID"
	WPID=
}

CHAIN="runtime.main;main.main;main.goCallerGamma;main.goInlinedBeta_\[i\];main.goHotAlpha"

@test "go: stripped Go binaries named as unstripped ones: callers, inlined calls, in both pclntab layouts" {
	require_bpf
	for ver in $GOVERS; do
		for kind in full strip noshdr; do
			gowork "$GW/gowork-$ver-$kind" cpu
			sampled 600 "$T/$kind" "$T/err" "$BIN/profile" -F 499 -f
			# The leaf's samples: whole, from goexit, its frameless leaf's caller and the
			# call inlined into it included (frame pointers alone lose goCallerGamma).
			awk -v leaf=';main\\.goHotAlpha( |;)' -v whole="^[^;]*;runtime\\.goexit;$CHAIN( |;)" '
				$0 ~ leaf { all += $NF; if ($0 ~ whole) n += $NF }
				END { printf "%s: %d of %d whole\n", FILENAME, n, all
				      exit !(all >= 150 && n * 100 >= 95 * all) }' "$T/$kind" ||
				fail "Go $ver $kind: $(sort -t' ' -k2 -nr "$T/$kind" | head -5)"
			cut -d';' -f2- "$T/$kind" | grep 'goHotAlpha [0-9]*$' | sed 's/ [0-9]*$//' |
				sort -u > "$T/$kind.stacks"
		done
		# The same stacks, by name, whatever was stripped.
		diff "$T/full.stacks" "$T/strip.stacks" || fail "Go $ver: stripped names differ"
		diff "$T/full.stacks" "$T/noshdr.stacks" || fail "Go $ver: names differ without section headers"
	done
}

@test "go: pprof carries source files and lines: go tool pprof -list shows the source, -traces the inlined call" {
	require_bpf
	gowork "$GW/gowork-1.24-strip" cpu
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$WPID" -F 499 --pprof "$T/go.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 600 ))
	tool_stop || fail "$(tail -n 5 "$T/err")"
	sampled 600 "$T/text" "$T/err" "$BIN/profile" -F 499
	run go tool pprof -list 'main.goCallerGamma' "$T/go.pb.gz"
	assert_success
	assert_output --partial "ROUTINE ======================== main.goCallerGamma in $ROOT/tests/go/gowork.go"
	assert_output --regexp '[0-9.]+m?s +[0-9]+:func goCallerGamma\(n int\) int'
	run go tool pprof -traces "$T/go.pb.gz"
	assert_success
	assert_output --regexp 'main.goInlinedBeta \(inline\)'
	# The text output marks the inlined call as perf script does.
	grep -q '^ *main.goInlinedBeta (inlined)$' "$T/text" || fail "$(head -30 "$T/text")"
}

@test "go: offcputime shows the threads' waits in Go's scheduler; the goroutine that parked above runtime.mcall" {
	require_bpf
	gowork "$GW/gowork-1.24-strip" sleep
	# Sleeps only (--state 1): on a loaded machine a thread preempted while
	# it runs the goroutine is off its CPU with goSleeperDelta's stack too.
	# 50 of its sleeps of 20 ms, however late a loaded machine wakes it.
	counted 50 slept "$T/folded" "$T/err" "$BIN/offcputime" --state 1 -U -f
	# A goroutine that sleeps parks; its thread waits for the next runnable
	# one in the scheduler, which is what the kernel sees go off-CPU.
	grep -qE ';runtime\.findRunnable;.*runtime\.(netpoll|stopm)' "$T/folded" ||
		fail "$(sort -t' ' -k2 -nr "$T/folded" | head)"
	# The goroutine appears as the one whose parking sent its thread into
	# the scheduler: above runtime.mcall, whose saved state (g.sched) the
	# walk crosses to, as Go's own traceback does, whole from goexit.
	# (Before, by the frame pointer mcall leaves, which it clears as often
	# as not: a CI run crossed it in none of its stacks.) A goroutine that
	# another thread resumed before this one's stack was taken has no
	# saved state left (Go clears it): that stack ends at mcall, marked so,
	# rarely (32 us of 4 s in one run of the test below, none in 3 more);
	# nothing else may end there.
	run grep -E '\[truncated:_[^]]*\];runtime\.mcall;' "$T/folded"
	refute_output --regexp 'truncated:_(no_CFI|CFI_not|stack_not)'
	# A goroutine resumed since, and parked again or in a system call,
	# shows no frames of its own: marked (on a loaded machine, one CI run
	# had 170 ms of 2.6 s with the thread's mcall running gopreempt_m
	# under where the goroutine had parked since, another 211 ms with
	# exitsyscall0). Every other stack through mcall is whole from goexit,
	# gopark's with park_m, and most of the time is the sleeper's.
	awk '/;runtime\.mcall;/ && !/^[^;]*;runtime\.goexit;/ &&
	     !/^[^;]*;\[truncated:_goroutine_resumed_elsewhere\];runtime\.mcall;/ { bad += $NF }
	     /;runtime\.gopark;runtime\.mcall;/ && !/;runtime\.gopark;runtime\.mcall;runtime\.park_m;/ { bad += $NF }
	     /;\[truncated:_goroutine_resumed_elsewhere\];runtime\.mcall;/ { resumed += $NF }
	     /;main\.goSleeperDelta;time\.Sleep;runtime\.gopark;runtime\.mcall;runtime\.park_m;runtime\.schedule;/ { n += $NF }
	     END { printf "mcall: %d us the sleeper, %d us marked, %d us otherwise\n", n, resumed, bad
		   exit !(n && !bad && resumed * 2 < n) }' "$T/folded" ||
		fail "$(grep ';runtime\.mcall;' "$T/folded" | sort -t' ' -k2 -nr | head)"
	run grep -vE 'main\.goSleeperDelta;time\.Sleep;runtime\.gopark;runtime\.mcall;' "$T/folded"
	refute_output --partial goSleeperDelta
}

# go_whole FOLDED: of goHotAlpha's samples, 95% (and at least 150) whole
# from goexit through the frameless leaf's caller and the call inlined in it.
go_whole() {
	awk -v leaf=';main\\.goHotAlpha( |;)' -v whole="^[^;]*;runtime\\.goexit;$CHAIN( |;)" '
		$0 ~ leaf { all += $NF; if ($0 ~ whole) n += $NF }
		END { printf "%s: %d of %d whole\n", FILENAME, n, all
		      exit !(all >= 150 && n * 100 >= 95 * all) }' "$1"
}

# unnamed FOLDED: the frames of the Go program's stacks in FOLDED that name
# no function (the stripped binary's would be [unknown], or [gowork-...] by
# its file), each with its stack's count; offwaketime's wakers count only
# where they are the program.
unnamed() {
	awk '{ c = $NF; sub(/ [0-9]+$/, ""); n = split($0, side, ";--;")
		k = split(side[n], w, ";")
		for (s = 1; s <= n; s++) {
			if (s > 1 && w[k] !~ /^gowork/) continue
			m = split(side[s], f, ";")
			for (i = 1; i <= m; i++) if (f[i] ~ /^\[(unknown|gowork)/) print f[i], c
		} }' "$1"
}

# named_go FOLDED WHAT: fails unless stacks with an unnamed frame of the
# program hold under 1% of FOLDED's count. A CI run of offwaketime once
# had two [unknown] frames among the unstripped build's stacks, which 8
# local runs did not show again (their only unnamed frames were in wakers
# other than the program): a name the stripped build lacked would be
# missing from every stack through its function, far more than 1%.
named_go() {
	local bad total
	bad=$(unnamed "$1" | awk '{ n += $2 } END { print n + 0 }')
	total=$(awk '{ n += $NF } END { print n + 0 }' "$1")
	[ $((bad * 100)) -lt "$total" ] ||
		fail "$2: $bad of $total unnamed: $(unnamed "$1" | sort | uniq -c)"
}

@test "go: offwaketime, and profile's JSON and SVG, name a stripped Go binary as an unstripped one" {
	require_bpf
	for kind in full strip; do
		gowork "$GW/gowork-1.24-$kind" cpu
		sampled 800 "$T/$kind.json" "$T/err" "$BIN/profile" -F 499 --json --svg "$T/$kind.svg"
		json_folded "$T/$kind.json" > "$T/$kind.fromjson"
		svg_folded "$T/$kind.svg" > "$T/$kind.fromsvg"
		for out in fromjson fromsvg; do
			go_whole "$T/$kind.$out" || fail "$kind $out: $(sort -t' ' -k2 -nr "$T/$kind.$out" | head -5)"
			# The stacks by name, without the process name, which the
			# two builds' file names make differ.
			cut -d';' -f2- "$T/$kind.$out" | grep 'goHotAlpha [0-9]*$' | sed 's/ [0-9]*$//' |
				sort -u > "$T/$kind.$out.stacks"
		done
		named_go "$T/$kind.fromjson" "$kind profile"
		# A goroutine that sleeps 20 ms at a time: its thread's waits, and who woke them.
		gowork "$GW/gowork-1.24-$kind" sleep
		counted 50 slept "$T/$kind.woken" "$T/err" "$BIN/offwaketime" -f
		named_go "$T/$kind.woken" "$kind offwaketime"
		# The goroutine's sleep, parked, its thread then in the scheduler:
		# the blocked stack from mcall to where it looks for work, whole
		# from goexit across mcall's switch of stacks.
		cut -d';' -f2- "$T/$kind.woken" |
			grep -oE '^runtime\.goexit;runtime\.main;main\.main;main\.goSleeperDelta;time\.Sleep;runtime\.gopark;runtime\.mcall;runtime\.park_m;runtime\.schedule;runtime\.findRunnable;' |
			sort -u > "$T/$kind.slept"
		[ -s "$T/$kind.slept" ] || fail "$kind: $(sort -t' ' -k2 -nr "$T/$kind.woken" | head -5)"
		# Where the goroutine had moved on (see above), marked as such: the
		# blocked stacks (before "--") that end at mcall, a tenth of the
		# time at most (under 0.1% on a quiet machine; a loaded one preempts
		# more). (A waker preempted as it grew its stack ends at
		# runtime.morestack, marked too: not what this looks at.)
		run awk -F';--;' '$1 ~ /\[truncated:_[^]]*\];runtime\.mcall;/ { print $1 }' "$T/$kind.woken"
		refute_output --regexp 'truncated:_(no_CFI|CFI_not|stack_not)'
		awk '/;runtime\.mcall;/ { if (/\[truncated:[^;]*\];runtime\.mcall;/) t += $NF; else c += $NF }
		     END { printf "mcall: %d us marked, %d us whole\n", t, c; exit !(c && t * 10 < c) }' \
			"$T/$kind.woken" ||
			fail "$kind: $(grep ';runtime\.mcall;' "$T/$kind.woken" | sort -t' ' -k2 -nr | head -3)"
		# And someone woke the thread: the other side of every stack is there.
		awk '/;--;/ { n++ } END { exit !(n && n == NR) }' "$T/$kind.woken" ||
			fail "$kind: $(head -5 "$T/$kind.woken")"
	done
	diff "$T/full.fromjson.stacks" "$T/strip.fromjson.stacks" || fail "JSON: stripped names differ"
	diff "$T/full.fromsvg.stacks" "$T/strip.fromsvg.stacks" || fail "SVG: stripped names differ"
	diff "$T/full.fromjson.stacks" "$T/full.fromsvg.stacks" || fail "JSON and SVG differ"
	diff "$T/full.slept" "$T/strip.slept" || fail "offwaketime: stripped names differ"
}

# cgo_whole FOLDED MARK CHAIN: of FOLDED's counts through MARK (an awk
# regular expression), 95% (and at least 150) with CHAIN from the thread's root.
cgo_whole() {
	awk -v mark="$2" -v whole="^[^;]*;$3" '
		$0 ~ mark { all += $NF; if ($0 ~ whole) n += $NF }
		END { printf "%s: %d of %d whole\n", FILENAME, n, all
		      exit !(all >= 150 && n * 100 >= 95 * all) }' "$1"
}

# cgo_run MODE OUT TOOL ARGS...: cgocheese ($CGO) in MODE, and TOOL -p on
# it with ARGS, folded into OUT: until it has had 600 ms of CPU more (about
# 300 samples at 499 Hz) where it spins (go, c), or napped or read 50 times
# more (nap, pipe).
cgo_run() {
	local mode=$1 out=$2 tool=$BIN/$3
	shift 3
	gowork "$CGO" "$mode"
	case $mode in
	nap) counted 50 nap "$out" "$T/err" "$tool" "$@" ;;
	pipe) counted 50 read "$out" "$T/err" "$tool" "$@" ;;
	*) sampled 600 "$out" "$T/err" "$tool" "$@" ;;
	esac
}

@test "go: a cgo program's stacks whole, stripped or not: Go's code by its pclntab, C's by CFI, C called from Go up to its Go callers, across Go's stack switches, in profile, offcputime and offwaketime" {
	require_bpf
	local go_chain='runtime\.goexit;runtime\.main;main\.main;main\.goCamembert;main\.goRoquefort( |;)'
	local c_chain='runtime\.goexit;runtime\.main;main\.main;main\.goLivarot;main\._Cfunc_livarot_outer;runtime\.cgocall;runtime\.asmcgocall;'
	for ver in $GOVERS; do
		for kind in full strip; do
			# A frameless Go leaf: its caller, which frame pointers lose, is
			# found only by Go's table, which a binary with .eh_frame (its C
			# code's) did not use.
			CGO=$GW/cgocheese-$ver-$kind
			cgo_run go "$T/go" profile -F 499 -f
			cgo_whole "$T/go" ';main\.goRoquefort( |;)' "$go_chain" ||
				fail "Go $ver $kind: $(sort -t' ' -k2 -nr "$T/go" | head -3)"
			# C without frame pointers on the thread's stack, called from a
			# goroutine's: the walk crosses from one to the other.
			cgo_run c "$T/c" profile -F 499 -f
			cgo_whole "$T/c" ';runtime\.asmcgocall;' "$c_chain" ||
				fail "Go $ver $kind: $(sort -t' ' -k2 -nr "$T/c" | head -3)"
			[ $kind = strip ] ||
				cgo_whole "$T/c" ';runtime\.asmcgocall;' "${c_chain}_cgo_[0-9a-f]*_Cfunc_livarot_outer;livarot_outer;livarot_leaf( |;)" ||
				fail "Go $ver: $(sort -t' ' -k2 -nr "$T/c" | head -3)"
		done
		# Blocked in C: offcputime's stack of the sleep, whole up to the goroutine's root.
		CGO=$GW/cgocheese-$ver-full
		cgo_run nap "$T/nap" offcputime -U -f
		cgo_whole "$T/nap" ';pontleveque_nap;' 'runtime\.goexit;runtime\.main;main\.main;main\.goPontleveque;main\._Cfunc_pontleveque_nap;runtime\.cgocall;runtime\.asmcgocall;(_cgo_[0-9a-f]*_Cfunc_pontleveque_nap;)?pontleveque_nap;' ||
			fail "Go $ver: $(sort -t' ' -k2 -nr "$T/nap" | head -3)"
		# Blocked in C's read of a pipe that a goroutine writes to:
		# offwaketime's blocked stack whole as above, and its waker's
		# (leaf first, then the thread) up to that goroutine's root.
		cgo_run pipe "$T/pipe" offwaketime -U -f
		cgo_whole "$T/pipe" ';comte_read;' 'runtime\.goexit;runtime\.main;main\.main;main\.goComte;main\._Cfunc_comte_read;runtime\.cgocall;runtime\.asmcgocall;(_cgo_[0-9a-f]*_Cfunc_comte_read;)?comte_read;(.*;)?--;(.*;)?main\.goBeaufort;runtime\.goexit;[^;]* [0-9]+$' ||
			fail "Go $ver: $(sort -t' ' -k2 -nr "$T/pipe" | head -3)"
		# No stack ends where Go switches stacks for C or the runtime's own
		# work (systemstack: a thread back from C takes its P again); mcall
		# as the tests above have it.
		run grep -hE '\[truncated:[^;]*\];runtime\.(asmcgocall|systemstack);' "$T/go" "$T/c" "$T/nap" "$T/pipe"
		assert_failure
	done
}

@test "go: a cgo binary whose table shares its code's segment, as GNU ld links arm64's, is read and walked" {
	require_bpf
	local bin=$GW/cgocheese-1.24-onerx
	# One read-and-execute segment holds .text, .rodata and .gopclntab.
	[ "$(readelf -lW "$bin" | grep -c ' LOAD .* R E ')" = 1 ] || fail "not one code segment"
	[ "$(readelf -lW "$bin" | grep -c ' LOAD ')" = 2 ] || fail "$(readelf -lW "$bin")"
	# Read where the section headers say, though that segment is code's.
	run "$GOSYM" "$bin"
	assert_success
	assert_line --regexp ' main\.goLivarot$'
	CGO=$bin
	cgo_run c "$T/c" profile -F 499 -f
	cgo_whole "$T/c" ';runtime\.asmcgocall;' 'runtime\.goexit;runtime\.main;main\.main;main\.goLivarot;main\._Cfunc_livarot_outer;runtime\.cgocall;runtime\.asmcgocall;' ||
		fail "$(sort -t' ' -k2 -nr "$T/c" | head -3)"
}

@test "go: the collector's marking, run by runtime.systemstack on the thread's stack, whole up to its goroutine's root" {
	require_bpf
	for ver in $GOVERS; do
		gowork "$GW/gowork-$ver-strip" gc
		sampled 1500 "$T/gc" "$T/err" "$BIN/profile" -F 499 -f
		# Through systemstack: back on the mark worker goroutine's stack, up
		# to runtime.goexit (or, called on the thread's stack already, from
		# runtime.mstart); without the crossing, none from the goroutine.
		awk '/;runtime\.systemstack;/ { all += $NF
				if (/^[^;]*;runtime\.(goexit|mstart);/) whole += $NF
				if (/^[^;]*;runtime\.goexit;(.*;)?runtime\.gcBgMarkWorker;runtime\.systemstack;/) crossed += $NF }
			END { printf "%d through systemstack, %d whole, %d from a mark worker\n", all, whole, crossed
			      exit !(crossed >= 50 && whole * 100 >= 95 * all) }' "$T/gc" ||
			fail "Go $ver: $(sort -t' ' -k2 -nr "$T/gc" | head -3)"
	done
}

@test "go: a pclntab layout it does not read is said, its functions not misnamed" {
	local off entry
	# The table's file offset, from its section header.
	off=$(readelf -SW "$GW/gowork-1.24-strip" | sed 's/^ *\[ *[0-9]*\]//' |
		awk '$1 == ".gopclntab" { print $4 }')
	[ -n "$off" ] || fail "no .gopclntab"
	off=$((16#$off))
	entry=$("$GOSYM" "$GW/gowork-1.24-strip" | awk '$3 == "main.goHotAlpha" { print $1 }')
	[ -n "$entry" ] || fail "no main.goHotAlpha"
	for magic in '\371\377\377\377:unknown pclntab layout' '\373\377\377\377:Go 1.15 or older'; do
		cp "$GW/gowork-1.24-strip" "$T/gowork-odd"
		printf "${magic%%:*}" | dd of="$T/gowork-odd" bs=1 seek="$off" conv=notrunc 2> /dev/null
		run "$GOSYM" "$T/gowork-odd"
		assert_failure 1
		assert_output --partial "gowork-odd: ${magic#*:}"
		# A process with it mapped (Go's runtime would refuse to start):
		# its code stays unnamed, and the symbolizer says why at exit.
		: > "$T/work"
		/usr/bin/python3 -c '
import mmap, signal, sys
f = open(sys.argv[1], "rb")
m = mmap.mmap(f.fileno(), 0, mmap.MAP_PRIVATE, mmap.PROT_READ | mmap.PROT_EXEC)
print("ready", flush=True)
signal.pause()' "$T/gowork-odd" > "$T/work" &
		WPID=$!
		wait_for_line "$T/work" '^ready' 60
		base=$(awk '/gowork-odd/ { split($1, a, "-"); print a[1]; exit }' /proc/$WPID/maps)
		# The file is mapped whole from offset 0, the text at vaddr 0x400000.
		run "$BUILD/tests/unit/symtest" "$WPID" "$(printf %x $((16#$base + 16#$entry - 0x400000)))"
		stop_bg "$WPID"
		WPID=
		assert_output --partial "[unknown]"
		refute_output --partial "main."
		assert_output --partial "1 Go binaries' symbol tables not read (${magic#*:}"
	done
}

@test "go: corrupted pclntabs are read without crashing or reading out of bounds" {
	local off size
	read -r off size < <(readelf -SW "$GW/gowork-1.19-strip" |
		sed 's/^ *\[ *[0-9]*\]//' | awk '$1 == ".gopclntab" { print $4, $5 }')
	off=$((16#$off)) size=$((16#$size))
	"$GOSYM" "$GW/gowork-1.19-strip" | awk '{ print $1 }' > "$T/addrs"
	# 200 copies, each with 32 random bytes of the table overwritten: its
	# header, offsets, varints and strings. Each must end with a status, not a signal.
	/usr/bin/python3 - "$GW/gowork-1.19-strip" "$off" "$size" "$T/bad" <<-'PY'
	import random, sys
	src, off, size, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
	data = open(src, 'rb').read()
	random.seed(13)
	for i in range(200):
	    b = bytearray(data)
	    # Half of them in the header and function table, where offsets are.
	    span = 4096 if i % 2 else size
	    for _ in range(32):
	        b[off + random.randrange(span)] = random.randrange(256)
	    open('%s.%d' % (out, i), 'wb').write(b)
	PY
	# Built with the sanitizers (make check SANITIZE=1), a finding must not pass for status 1.
	export ASAN_OPTIONS=exitcode=99 UBSAN_OPTIONS=exitcode=99
	for i in $(seq 0 199); do
		rc=0
		"$GOSYM" "$T/bad.$i" > /dev/null 2> "$T/err" || rc=$?
		[ $rc -le 1 ] || fail "gosym on copy $i: status $rc: $(cat "$T/err")"
		rc=0
		"$GOSYM" -b "$T/bad.$i" "$T/addrs" > /dev/null 2> "$T/err" || rc=$?
		[ $rc -le 1 ] || fail "gosym -b on copy $i: status $rc: $(cat "$T/err")"
		rm -f "$T/bad.$i"
	done
}
