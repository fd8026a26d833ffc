#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# C++ and Rust functions named as their languages write them (tests/langs:
# a C++ program linked by lld, a Rust one in both manglings), in every
# output, whole from _start; --no-demangle gives the symbols.

load helpers
load folded

setup_file() {
	"$ROOT/tests/langs/build" "$BUILD/tests/langs" > /dev/null ||
		fail "cannot build tests/langs (g++, lld, rustc)"
}

setup() {
	T=$BATS_TEST_TMPDIR
	LW=$BUILD/tests/langs
	export HOME=$T
}

teardown() {
	stop_bg ${WPID:-}
	assert_nothing_loaded profile
}

# cheese PROGRAM: starts it, spinning until stopped, once it has said its pid.
cheese() {
	: > "$T/work"
	"$LW/$1" 0 > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
}

# sampled OUT ERR TOOL ARGS...: TOOL ARGS -p on the workload ($WPID), from
# its banner until it has had 1.5 s more of CPU, then stopped as with
# Ctrl-C: about 150 samples at 99 Hz, however slowly a loaded machine runs
# it (a run of 2 s had fewer than 100 beside a load).
sampled() {
	local out=$1 err=$2
	shift 2
	tool_start "$out" "$err" "$@" -p "$WPID"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 1500 ))
	tool_stop || fail "$(tail -n 5 "$err")"
}

# whole FILE CHAIN: "N ALL", the samples in ripen (the leaf, however
# spelled) and those of them whose stack is CHAIN from _start.
whole() {
	awk -v c="^[^;]*;_start;(.*;)?$2\$" '
		{ n = $NF; sub(/ [0-9]+$/, "") }
		/[Rr]ipen/ { all += n; if ($0 ~ c) whole += n }
		END { print whole + 0, all + 0 }' "$1"
}

# A C++ chain as awk reads it: brackets, not backslashes (awk -v takes them away).
# The leaf is ripen, or turn inlined into it (marked _[i] but in JSON).
CXX="main;[(]anonymous namespace[)]::cellar[(]double[)];cheese::Cave<3>::age[(]std::vector<int, std::allocator<int> > const&[)] [[]clone [.]isra[.]0[]];cheese::Affineur::ripen[(]int[)](;cheese::Affineur::turn[(]int[)](_[[]i[]])?)?"

@test "names: C++ as C++ writes it (namespaces, a template, a clone) in folded, JSON and pprof (its symbol as system_name), whole from _start" {
	require_bpf
	cheese cheese-cxx
	sampled "$T/folded" "$T/err" "$BIN/profile" -U -F 99 -f --pprof "$T/p.pb.gz"
	sampled "$T/json" "$T/err.json" "$BIN/profile" -U -F 99 --json
	json_folded "$T/json" > "$T/json.folded"
	pprof_folded "$T/p.pb.gz" > "$T/pprof.folded"
	for f in folded json.folded pprof.folded; do
		# go tool pprof shows a name as it is where it has a symbol (system_name)
		# of its own; it would shorten it were the two the same.
		read -r n all <<< "$(whole "$T/$f" "$CXX")"
		# Samples on its CPU: a few land in the clock read or the kernel.
		[ "$all" -ge 100 ] && [ $((n * 100)) -ge $((all * 90)) ] ||
			fail "$f: $n of $all whole: $(head -c 800 "$T/$f") $(cat "$T/err" "$T/err.json")"
	done
	# The inlined call named as where it is not inlined, in some samples;
	# no symbol left as the linker spells it.
	grep -q ';cheese::Affineur::ripen(int);cheese::Affineur::turn(int)_\[i\] ' "$T/folded"
	run grep '_ZN\|_GLOBAL__N' "$T/folded" "$T/json.folded" "$T/pprof.folded"
	assert_failure
	# pprof's Functions keep the symbol as the linker spells it, as system_name.
	run pprof_functions "$T/p.pb.gz"
	assert_success
	assert_line "$(printf 'cheese::Affineur::ripen(int)\t_ZN6cheese8Affineur5ripenEi\t%s\t0' "$LW/cheese-cxx")"
	assert_line "$(printf '(anonymous namespace)::cellar(double)\t_ZN12_GLOBAL__N_16cellarEd\t%s\t0' "$LW/cheese-cxx")"
	# The inlined call too, by its DWARF linkage name.
	assert_line "$(printf 'cheese::Affineur::turn(int)\t_ZN6cheese8Affineur4turnEi\t%s\t0' "$LW/cheese-cxx")"
	assert_line --regexp "^main	main	"
}

@test "names: --no-demangle prints C++ symbols as the symbol table has them" {
	require_bpf
	cheese cheese-cxx
	sampled "$T/folded" "$T/err" "$BIN/profile" -U -F 99 -f --no-demangle
	run cat "$T/folded" "$T/err"
	read -r n all <<< "$(whole "$T/folded" "main;_ZN12_GLOBAL__N_16cellarEd;_ZN6cheese4CaveILi3EE3ageERKSt6vectorIiSaIiEE[.]isra[.]0;_ZN6cheese8Affineur5ripenEi(;turn_[[]i[]])?")"
	[ "$all" -ge 100 ] && [ $((n * 100)) -ge $((all * 90)) ] || fail "$n of $all whole: $output"
	refute_output --partial 'cheese::'
	run unprivileged "$BIN/profile" --no-demangle -K 1
	assert_output --partial 'profile: -K shows kernel stacks only; --no-demangle is ignored'
}

@test "names: Rust, in its legacy mangling and in v0, as Rust writes it, whole from _start" {
	require_bpf
	for m in legacy v0; do
		cheese cheese-rust-$m
		sampled "$T/$m" "$T/err" "$BIN/profile" -U -F 99 -f
		stop_bg "$WPID"
		if [ $m = legacy ]; then
			chain="cheese::main;cheese::cellar;cheese::cave::Cave::age;cheese::affineur::ripen"
		else
			chain="cheese::main;cheese::cellar::<u64>;<cheese::cave::Cave>::age;cheese::affineur::ripen"
		fi
		read -r n all <<< "$(whole "$T/$m" "$chain")"
		[ "$all" -ge 100 ] && [ $((n * 100)) -ge $((all * 90)) ] ||
			fail "$m: $n of $all whole: $(head -c 800 "$T/$m") $(cat "$T/err")"
		# Neither the hash of a legacy name nor a v0 symbol.
		! grep -qE '::h[0-9a-f]{16}|_R[A-Za-z0-9_]{8}|_ZN' "$T/$m" || fail "$m: $(grep -E '::h[0-9a-f]{16}|_R|_ZN' "$T/$m" | head -n 3)"
	done
}
