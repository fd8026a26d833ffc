#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Node.js on a test VM's kernel: Debian 13's node 20 (V8 11.3 in a stripped
# libnode.so), chrooted, runs tests/node/cheese.js; profile must name the
# main thread's JavaScript chain where the kernel has bpf_loop (5.17), on
# arm64 too, the calls TurboFan inlined among them; before, its frames stay
# native.
#
# POSIX sh; see tests/vm/lib.sh. NODEROOT is the unpacked node
# (tests/vm/run puts it at /bpfscope/node in the guests).

js_root=${NODEROOT:-/bpfscope/node}
js_version=$(uname -r | awk -F'[.-]' '{ printf "%d", $1 * 100 + $2 }')

# js_line NAME: the line of cheese.js its function NAME starts at.
js_line() {
	grep -n "^function $1(" "$js_root/tmp/cheese.js" | cut -d: -f1
}

# js_start NAME: the busy chain (js_pid), warmed; its output in
# $SCRATCH/NAME.work. Fails (vm_rc 98) if it never printed its pid.
js_start() {
	vm_rc=98
	: > "$SCRATCH/$1.work"
	chroot "$js_root" /usr/bin/node /tmp/cheese.js busy > "$SCRATCH/$1.work" &
	js_pid=$!
	vm_wait "$SCRATCH/$1.work" '^pid ' $js_pid || { js_stop; return 1; }
	# 5 s of its CPU first, for V8 to have optimized the loop and inlined the chain.
	vm_warm $js_pid 500
}

js_stop() {
	kill $js_pid 2> /dev/null
	wait $js_pid 2> /dev/null
}

if [ ! -x "$js_root/usr/bin/node" ]; then
	result node profile fail "no node at $js_root"
elif [ $js_version -lt 517 ]; then
	js_start jsfp && vm_held_2s $js_pid jsfp profile -f -F 99
	js_stop
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && ! grep -q '(cheese\.js:' "$SCRATCH/jsfp.out"; then
		result node profile n/a "no JavaScript frames named before 5.17 (bpf_loop): $(vm_samples "$SCRATCH/jsfp.out" ";node::Start") samples of its main thread"
	else
		result node profile fail "rc=$vm_rc $(tail -n 2 "$SCRATCH/jsfp.err") $(head -c 400 "$SCRATCH/jsfp.out")"
	fi
else
	: > "$SCRATCH/jsp.all"
	js_start jsp
	# Again on the same node while too few samples, or V8 has not inlined
	# yet: a guest beside the suite gets so little of the host that its
	# clock ticks are not work done, and a new node would start over.
	for _try in 1 2 3 4 5 6 7 8; do
		vm_held_2s $js_pid jsp profile -v -f -F 99
		cat "$SCRATCH/jsp.out" >> "$SCRATCH/jsp.all"
		[ $vm_rc = 0 ] && { [ "$(vm_samples "$SCRATCH/jsp.all" ';node::Start')" -lt 50 ] ||
			[ "$(vm_samples "$SCRATCH/jsp.all" 'reblochon [(]cheese[.]js:[0-9]+[)]_[[]i[]]')" = 0 ]; } || break
	done
	js_stop
	# Inlined or not, the same chain; brackets, not backslashes (awk -v).
	sed 's/_\[i\]//g' "$SCRATCH/jsp.all" > "$SCRATCH/jsp.out"
	chain="main [(]cheese[.]js:$(js_line main)[)];brie [(]cheese[.]js:$(js_line brie)[)];camembert [(]cheese[.]js:$(js_line camembert)[)];reblochon [(]cheese[.]js:$(js_line reblochon)[)]"
	set -- $(awk -v c="$chain( |;)" '/;node::Start/ { all += $NF; if ($0 ~ c) n += $NF }
		END { print n + 0, all + 0 }' "$SCRATCH/jsp.out")
	inlined=$(vm_samples "$SCRATCH/jsp.all" 'reblochon [(]cheese[.]js:[0-9]+[)]_[[]i[]]')
	if [ $vm_rc = 0 ] && [ -z "$(vm_leftover profile)" ] && [ "$2" -ge 50 ] && [ $(($1 * 100)) -ge $(($2 * 90)) ] &&
	    [ "$inlined" -gt 0 ]; then
		result node profile pass "$1 of $2 samples of its main thread the chain, $inlined with reblochon inlined"
	else
		result node profile fail "rc=$vm_rc $1 of $2 the chain, $inlined inlined, $_try tries $(grep -i 'v8' "$SCRATCH/jsp.err" | grep -v libbpf | head -n 2) $(vm_offchain "$SCRATCH/jsp.out" ';node::Start' "$chain( |;)")"
	fi
fi
