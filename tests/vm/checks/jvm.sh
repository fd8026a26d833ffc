#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The JVM on a test VM's kernel: Debian 13's openjdk-21, chrooted, runs
# tests/jvm/Cheese.java's main loop; profile must name its busy chain's
# Java methods, whole from Cheese.main through what C2 inlined, and
# offcputime its sleeping thread's, whole from the thread's root, where the
# kernel has bpf_loop (5.17), on arm64 too; before, its frames stay native.
#
# POSIX sh; see tests/vm/lib.sh. JVMROOT is the unpacked JVM with the
# classes in its /tmp/jvm (tests/vm/run puts it at /bpfscope/jvm in the guests).

jv_root=${JVMROOT:-/bpfscope/jvm}
jv_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')
jv_src=$jv_root/tmp/jvm/Cheese.java

# jv_line TEXT: the line of Cheese.java that holds TEXT.
jv_line() {
	grep -n -F "$1" "$jv_src" | head -n 1 | cut -d: -f1
}

# jv_start NAME: the JVM's busy main thread (jv_pid), warmed for C2 to
# compile it; its output in $SCRATCH/NAME.work. Fails (vm_rc 98) if it never ran.
jv_start() {
	vm_rc=98
	: > "$SCRATCH/$1.work"
	# Its launcher finds its libraries by $ORIGIN, which needs a /proc (taken
	# away after: on the host, the root is copied into the next guest's).
	jv_mounted=
	grep -q " $jv_root/proc " /proc/mounts || { mount -t proc proc "$jv_root/proc" && jv_mounted=1; }
	# Its standard input held open: at its end, Cheese exits.
	rm -f "$SCRATCH/jvfeed"
	mkfifo "$SCRATCH/jvfeed"
	sleep 3600 > "$SCRATCH/jvfeed" &
	jv_feed=$!
	chroot "$jv_root" /usr/lib/jvm/default/bin/java -Xmx64m -cp /tmp/jvm Cheese \
		< "$SCRATCH/jvfeed" > "$SCRATCH/$1.work" 2>&1 &
	jv_pid=$!
	vm_wait "$SCRATCH/$1.work" '^tid main ' $jv_pid || { jv_stop; return 1; }
	# 5 s of its CPU first, for C2 to have compiled the chain.
	vm_warm $jv_pid 500
}

jv_stop() {
	kill $jv_pid $jv_feed 2> /dev/null
	wait $jv_pid 2> /dev/null
	[ -z "$jv_mounted" ] || umount "$jv_root/proc"
}

if [ ! -x "$jv_root/usr/lib/jvm/default/bin/java" ]; then
	result jvm profile fail "no java at $jv_root"
elif [ $jv_version -lt 517 ]; then
	jv_start jvfp && vm_held_2s $jv_pid jvfp profile -f -F 99
	jv_stop
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && ! grep -q '(Cheese\.java:' "$SCRATCH/jvfp.out"; then
		result jvm profile n/a "no Java frames walked before 5.17 (bpf_loop)"
	else
		result jvm profile fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/jvfp.err") $(head -c 400 "$SCRATCH/jvfp.out")"
	fi
else
	: > "$SCRATCH/jvp.all"
	jv_start jvp
	# Again on the same JVM while too few samples, or C2 has not inlined
	# yet: a guest beside the suite gets so little of the host that its
	# clock ticks are not work done, and a new JVM would start over.
	for _try in 1 2 3 4 5 6; do
		vm_held_2s $jv_pid jvp profile -v -f -F 99
		cat "$SCRATCH/jvp.out" >> "$SCRATCH/jvp.all"
		[ $vm_rc = 0 ] && { [ "$(vm_samples "$SCRATCH/jvp.all" 'Cheese[.]brie')" -lt 50 ] ||
			[ "$(vm_samples "$SCRATCH/jvp.all" 'Cheese[.](camembert|reblochon) [(]Cheese[.]java:[0-9]+[)]_[[]i[]]')" = 0 ]; } || break
	done
	prc=$vm_rc
	# Its sleeping thread, off its CPU in Thread.sleep under comte and
	# beaufort, interpreted or not (arm64's interpreter builds a callee's
	# frame over its caller's stack pointer).
	vm_held_2s $jv_pid jvo offcputime -f
	orc=$vm_rc
	jv_stop
	sed 's/_\[i\]//g' "$SCRATCH/jvp.all" > "$SCRATCH/jvp.out"
	# Brackets, not backslashes: awk -v takes escapes away. reblochon's
	# line is the sample's: none in its compiled code's entry.
	chain="Cheese[.]main [(]Cheese[.]java:$(jv_line 'brie(100000); // the main loop')[)];Cheese[.]brie [(]Cheese[.]java:$(jv_line 'return camembert(n)')[)];Cheese[.]camembert [(]Cheese[.]java:$(jv_line 'return reblochon(n)')[)];Cheese[.]reblochon [(]Cheese[.]java"
	set -- $(awk -v c="$chain" '/Cheese[.]brie/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/jvp.out")
	inlined=$(vm_samples "$SCRATCH/jvp.all" 'Cheese[.](camembert|reblochon) [(]Cheese[.]java:[0-9]+[)]_[[]i[]]')
	# Whole: from the launcher's thread through the call stub into Java.
	rooted=$(vm_samples "$SCRATCH/jvp.out" ';ThreadJavaMain;JavaMain;.*;JavaCalls::call_helper.*;[[]StubRoutines [^]]*[]];Cheese[.]main ')
	if [ $prc = 0 ] && [ -z "$(vm_leftover profile)" ] && [ "$2" -ge 50 ] && [ $(($1 * 100)) -ge $(($2 * 90)) ] &&
	    [ "$inlined" -gt 0 ] && [ $((rooted * 100)) -ge $(($2 * 90)) ]; then
		result jvm profile pass "$1 of $2 samples the chain, $inlined with what C2 inlined, $rooted whole from the launcher's thread"
	else
		result jvm profile fail "rc=$prc $1 of $2 the chain, $inlined inlined, $rooted whole, $_try tries $(grep -iE 'hotspot|jvm' "$SCRATCH/jvp.err" | grep -v libbpf | head -n 2) $(vm_offchain "$SCRATCH/jvp.out" 'Cheese[.]brie' "$chain")"
	fi
	# Its time, microseconds: 90% under the chain whole from its thread's root.
	sed 's/_\[i\]//g' "$SCRATCH/jvo.out" > "$SCRATCH/jvo.plain"
	asleep="^sleeper;.*;thread_native_entry.*;JavaCalls::call_helper.*;java[.]lang[.]Thread[.]run .*;Cheese[.]comte [(]Cheese[.]java:$(jv_line '        beaufort();')[)];Cheese[.]beaufort [(]Cheese[.]java:$(jv_line 'Thread.sleep(20)')[)];java[.]lang[.]Thread[.]sleep "
	set -- $(awk -v c="$asleep" '/^sleeper;/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/jvo.plain")
	if [ $orc = 0 ] && [ -z "$(vm_leftover offcputime)" ] && [ "$2" -ge 500000 ] && [ $(($1 * 100)) -ge $(($2 * 90)) ]; then
		result jvm offcputime pass "$1 of $2 us of its sleeping thread under comte and beaufort, whole from its root"
	else
		result jvm offcputime fail "rc=$orc $1 of $2 us under the chain $(vm_offchain "$SCRATCH/jvo.plain" '^sleeper;' "$asleep")"
	fi
fi
