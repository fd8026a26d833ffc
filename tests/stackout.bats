#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The stack outputs (folded, SVG flame graph, pprof): first the writers on
# stacks whose every count is known (tests/tools/stackconv.c), then each
# stack tool writing all three from one real run.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	CONV=$WL/unit/stackconv
	export HOME=$T GOCACHE=$T/gocache
	cat > "$T/in.folded" <<-'EOF'
	proc;main;foo;bar 300
	proc;main;foo;baz 100
	proc;main;read;vfs_read_[k] 50
	other;start;-;sys_x_[k];do_x_[k] 70
	other;start;jit_fn_[j] 30
	tiny;t 1
	EOF
}

teardown() {
	stop_bg ${WPID:-} ${TPID:-}
	assert_nothing_loaded profile offcputime offwaketime
}

# Titles of the drawn frames, "name (N unit, P%)", one a line.
svg_titles() {
	xmllint --xpath '//*[local-name()="g"][@class="f"]/*[local-name()="title"]/text()' "$1"
}

# Sum of the widths of the rectangles drawn at y = $2 in SVG $1.
svg_width_at() {
	xmllint --xpath "sum(//*[local-name()='g'][@class='f']/*[local-name()='rect'][@y=$2]/@width)" "$1"
}

svg_root() {
	xmllint --xpath "//*[local-name()='g'][@class='f'][1]/*[local-name()='rect']/@$2" "$1" |
		sed -E 's/.*="([^"]*)"/\1/'
}

# Checks flame graph $1 against folded file $2: valid XML, the root counts
# the total, each level's widths add up to no more than the root's (to
# within rounding).
check_svg() {
	local svg=$1 folded=$2 total rootw rooty y w n
	xmllint --noout "$svg"
	total=$(awk '{ n += $NF } END { print n }' "$folded")
	n=$(svg_titles "$svg" | head -1 | sed -E 's/^all \(([0-9,]+) .*/\1/' | tr -d ,)
	[ "$n" -eq "$total" ] || fail "root frame counts $n, the folded stacks $total"
	rootw=$(svg_root "$svg" width)
	rooty=$(svg_root "$svg" y)
	# Level 1 (the process names) covers the root to within 0.5 px lost to
	# frames too small to draw; no level is wider than the root.
	w=$(svg_width_at "$svg" $((rooty - 16)))
	echo "root width $rootw, level 1 width $w"
	awk -v a="$w" -v b="$rootw" 'BEGIN { exit !(a <= b + 0.05 && a >= b - 0.5) }'
	for ((d = 2; d < 8; d++)); do
		w=$(svg_width_at "$svg" $((rooty - 16 * d)))
		awk -v a="$w" -v b="$rootw" 'BEGIN { exit !(a <= b + 0.05) }' ||
			fail "level $d is $w px wide, wider than the root's $rootw"
	done
}

@test "stackconv: folded output is the input, merged and sorted by count" {
	run "$CONV" folded < "$T/in.folded"
	assert_success
	assert_line --index 0 "proc;main;foo;bar 300"
	assert_line --index 1 "proc;main;foo;baz 100"
	assert_line --index 2 "other;start;-;sys_x_[k];do_x_[k] 70"
	[ "${#lines[@]}" -eq 6 ]
	# The same stack twice merges into one line.
	run "$CONV" folded <<<$'a;b 1\na;b 2\na;c 4'
	assert_output $'a;c 4\na;b 3'
}

@test "stackconv: the SVG is valid XML with one frame per merged node and exact counts" {
	"$CONV" svg "$T/out.svg" < "$T/in.folded"
	check_svg "$T/out.svg" "$T/in.folded"
	run svg_titles "$T/out.svg"
	assert_line "all (551 samples, 100.00%)"
	assert_line "proc (450 samples, 81.67%)"
	assert_line "main (450 samples, 81.67%)"
	assert_line "foo (400 samples, 72.60%)"
	assert_line "bar (300 samples, 54.45%)"
	assert_line "vfs_read_[k] (50 samples, 9.07%)"
	assert_line "- (70 samples, 12.70%)"
	# all, proc, main, foo, bar, baz, read, vfs_read, other, start, -, sys_x,
	# do_x, jit_fn, tiny, t: 16 nodes.
	[ "${#lines[@]}" -eq 16 ]
	# Widths are proportional to counts: bar is 3 times baz.
	bar=$(xmllint --xpath 'string(//*[local-name()="g"][starts-with(*[local-name()="title"], "bar (")]/*[local-name()="rect"]/@width)' "$T/out.svg")
	baz=$(xmllint --xpath 'string(//*[local-name()="g"][starts-with(*[local-name()="title"], "baz (")]/*[local-name()="rect"]/@width)' "$T/out.svg")
	awk -v a="$bar" -v b="$baz" 'BEGIN { exit !(a / b > 2.99 && a / b < 3.01) }'
	# Title and subtitle are escaped, the zoom/search script is there.
	run grep -c 'stackconv &lt;test &amp; &quot;input&quot;&gt;' "$T/out.svg"
	assert_output 1
	grep -q 'function zoom' "$T/out.svg"
	grep -q 'onclick="search()"' "$T/out.svg"
}

@test "stackconv: the SVG colours frames by kind" {
	"$CONV" svg "$T/out.svg" < "$T/in.folded"
	fill() {
		xmllint --xpath "string(//*[local-name()='g'][starts-with(*[local-name()='title'], '$1 (')]/*[local-name()='rect']/@fill)" "$T/out.svg" |
			sed -E 's/rgb\(([0-9]+),([0-9]+),([0-9]+)\)/\1 \2 \3/'
	}
	read -r r g b <<<"$(fill bar)"; [ "$r" -ge 200 ] && [ "$g" -lt 115 ]	# user: red
	read -r r g b <<<"$(fill do_x_[k])"; [ "$r" -ge 200 ] && [ "$g" -ge 120 ] && [ "$b" -lt 70 ]	# kernel: orange
	read -r r g b <<<"$(fill jit_fn_[j])"; [ "$g" -gt "$r" ] && [ "$g" -gt "$b" ]	# JIT: green
	read -r r g b <<<"$(fill -)"; [ "$r" -eq "$g" ] && [ "$g" -eq "$b" ]	# separator: grey
}

@test "stackconv: hostile names still make valid XML, and tiny frames are left out" {
	printf 'p;a<b>&"c"\x01;\xff\xfe bad utf8;caf\xc3\xa9 1000000\np;x;y 1\n' > "$T/bad.folded"
	"$CONV" svg "$T/bad.svg" < "$T/bad.folded"
	xmllint --noout "$T/bad.svg"
	run svg_titles "$T/bad.svg"
	# As the text outputs spell what is not text: \xHH, never a lookalike.
	assert_line --partial 'a&lt;b&gt;&amp;"c"\x01'
	assert_line --partial '\xff\xfe bad utf8'
	assert_line --partial 'café'
	# 1 in a million is 0.001 px: not drawn, nor its callee.
	refute_line --partial 'y ('
	check_svg "$T/bad.svg" "$T/bad.folded"
}

@test "stackconv: an empty profile is still a valid SVG with its root" {
	"$CONV" svg "$T/empty.svg" < /dev/null
	xmllint --noout "$T/empty.svg"
	run svg_titles "$T/empty.svg"
	assert_output "all (0 samples, 0.00%)"
}

@test "stackconv: the pprof file loads in go tool pprof with the same functions and totals" {
	"$CONV" pprof "$T/out.pb.gz" < "$T/in.folded"
	gzip -t "$T/out.pb.gz"
	run go tool pprof -top -sample_index=samples "$T/out.pb.gz"
	assert_success
	assert_line --partial "Total samples = 551"
	assert_line --regexp '^ +300 +54\.45% .* bar$'
	assert_line --regexp '^ +100 .* baz$'
	assert_line --regexp '^ +0 +0% .* +450 +81\.67% +main$'
	assert_line --regexp '^ +70 .* do_x_\[k\]$'
	# The process name is the root frame, as in the folded output.
	assert_line --regexp '^ +0 +0% .* +450 +81\.67% +proc$'
	run go tool pprof -raw "$T/out.pb.gz"
	assert_success
	assert_line "PeriodType: cpu nanoseconds"
	assert_line "Period: 10000000"
	assert_line "Duration: 2s"
	assert_line "samples/count cpu/nanoseconds"
	assert_line --regexp '^ +300 +3000000000: [0-9 ]+$'
	run go tool pprof -raw -sample_index=samples "$T/out.pb.gz"
	assert_line --regexp '^[0-9]+: 0x0/0x0/0x0 /usr/bin/test abcdef0123 \[FN\]$'
	# The leaf comes first: bar's sample lists bar, foo, main.
	run go tool pprof -traces "$T/out.pb.gz"
	assert_output --regexp '3s +bar
 +foo
 +main'
}

@test "stackconv: pprof of an empty profile loads" {
	"$CONV" pprof "$T/empty.pb.gz" < /dev/null
	run go tool pprof -raw "$T/empty.pb.gz"
	assert_success
	assert_line "samples/count cpu/nanoseconds"
}

@test "stackconv: unwritable output is an error" {
	run "$CONV" svg /nonexistent/dir/x.svg < "$T/in.folded"
	assert_failure 1
	assert_output --partial "No such file or directory"
	run "$CONV" pprof /nonexistent/dir/x.pb.gz < "$T/in.folded"
	assert_failure 1
}

# The tools: one real run writes all three outputs.

pprof_top() {
	go tool pprof -top -nodecount=200 "$1" 2>/dev/null
}

# check_outputs FOLDED SVG PPROF: the three describe the same stacks.
check_outputs() {
	local folded=$1 svg=$2 pb=$3 total root kids
	total=$(awk '{ n += $NF } END { print n + 0 }' "$folded")
	[ "$total" -gt 0 ]
	xmllint --noout "$svg"
	root=$(grep -o '<g class="f" data-v="[0-9]*"><title>all ' "$svg" | grep -o '[0-9]*')
	[ "$root" -eq "$total" ] || fail "svg root $root, folded total $total"
	# Frame widths add up: no frame is wider than the root.
	awk 'match($0, /<rect x="[0-9.]*" y="[0-9]*" width="[0-9.]*"/) {
			s = substr($0, RSTART, RLENGTH); sub(/.*width="/, "", s); sub(/"$/, "", s)
			if (s + 0 > max) max = s + 0 }
		END { if (max < 1179.9 || max > 1180.01) exit 1 }' "$svg"
	pprof_top "$pb" > "$T/top"
	grep -q 'Showing nodes accounting for' "$T/top" || fail "go tool pprof: $(cat "$T/top")"
}

@test "profile --svg --pprof: the flame graph and pprof agree with the folded output" {
	require_bpf
	: > "$T/spin"
	"$WL/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid ' 60
	# Until it has had 2 s more of CPU, however busy the machine.
	tool_start "$T/folded" "$T/err" "$BIN/profile" -p "$WPID" -F 99 -f --svg "$T/p.svg" --pprof "$T/p.pb.gz"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "$(tail -n 5 "$T/err")"
	check_outputs "$T/folded" "$T/p.svg" "$T/p.pb.gz"
	# pprof: both functions, spin_heavy on top, about 2 s of CPU.
	grep -qE ' spin_heavy$' "$T/top"
	grep -qE ' spin_light$' "$T/top"
	# The same samples as the folded output, each 1/99 s of CPU: exact, however busy the machine.
	n=$(go tool pprof -top -sample_index=samples "$T/p.pb.gz" 2>/dev/null | sed -n 's/.*Total samples = \([0-9]*\).*/\1/p')
	[ "$n" -eq "$(awk '{ n += $NF } END { print n }' "$T/folded")" ]
	go tool pprof -raw "$T/p.pb.gz" 2>/dev/null | grep -q 'samples/count cpu/nanoseconds'
}

@test "offcputime --svg --pprof: off-CPU time in microseconds, the sleeping function on top" {
	require_bpf
	: > "$T/work"
	"$WL/offcpu" sleep 10 50 > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
	tool_start "$T/folded" "$T/err" "$BIN/offcputime" -p "$WPID" -f --svg "$T/o.svg" --pprof "$T/o.pb.gz"
	kill -USR1 "$WPID"
	wait "$WPID"
	WPID=
	tool_stop || fail "$(tail -n 5 "$T/err")"
	check_outputs "$T/folded" "$T/o.svg" "$T/o.pb.gz"
	grep -qE ' offcpu_sleeper$' "$T/top"
	go tool pprof -raw "$T/o.pb.gz" 2>/dev/null | grep -q 'offcpu/microseconds'
}

@test "offwaketime --svg --pprof: the -- separator and both stacks" {
	require_bpf
	: > "$T/work"
	"$WL/offcpu" pipe 10 20 > "$T/work" &
	WPID=$!
	wait_for_line "$T/work" '^pid ' 60
	tool_start "$T/folded" "$T/err" "$BIN/offwaketime" -p "$WPID" -f --svg "$T/w.svg" --pprof "$T/w.pb.gz"
	kill -USR1 "$WPID"
	wait "$WPID"
	WPID=
	tool_stop || fail "$(tail -n 5 "$T/err")"
	check_outputs "$T/folded" "$T/w.svg" "$T/w.pb.gz"
	grep -q '<title>-- (' "$T/w.svg"
	grep -qE ' offcpu_waker$' "$T/top"
}
