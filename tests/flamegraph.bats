#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The flame graph as a reader uses it: opened in headless Chromium (Debian's
# chromium, driven by tests/browser/flamegraph.cjs through playwright-core),
# hovered, zoomed in, zoomed back out through an ancestor, reset and
# searched, on stacks whose every count is known; then a real profile's.

load helpers

setup() {
	T=$BATS_TEST_TMPDIR
	export HOME=$T
	CONV=$WL/unit/stackconv
	# 100 samples: spin_a holds 80 under main and 5 more under
	# short_lived_work, which holds another 5 under other.
	cat > "$T/in.folded" <<-'EOF2'
	proc;main;spin_a;leaf1 60
	proc;main;spin_a;leaf2 20
	proc;main;spin_b 10
	proc;main;short_lived_work;spin_a 5
	other;start;short_lived_work 5
	EOF2
	"$CONV" svg "$T/fg.svg" < "$T/in.folded"
}

teardown() {
	stop_bg ${TPID:-} ${WPID:-}
	assert_nothing_loaded profile
}

# browse SVG STEPS [SVG STEPS]...: runs the browser driver, each SVG in a
# page of its own in one browser; its lines in $output, each page's after
# "page N" (see page).
browse() {
	run timeout 120 env NODE_PATH="$BUILD/cache/browser/node_modules" \
		node "$ROOT/tests/browser/flamegraph.cjs" "$@"
	echo "$output"
	assert_success
	refute_line --partial "error "
	BROWSED=$output
}

# page N: $output and $lines of the last browse's Nth page only.
page() {
	output=$(awk -v n="$1" '/^page [0-9]+$/ { on = ($2 == n); next } on' <<< "$BROWSED")
	mapfile -t lines <<< "$output"
	[ -n "$output" ] || fail "no page $1 in: $BROWSED"
}

# shown NAME X W OPACITY: frame NAME is drawn at X, W wide (to 0.1 px).
shown() {
	assert_line --regexp "^frame $1 x=$2 w=$3 opacity=$4 "
}

@test "flame graph in a browser: no errors; hovering outlines a frame and titles it" {
	browse "$T/fg.svg" '[["hover","leaf1"],["frames"]]'
	assert_line "hover leaf1 stroke=rgb(0, 0, 0) title=leaf1 (60 samples, 60.00%)"
	# The graph as written: all 1180 px wide from x=10, 11.8 px a sample.
	shown all 10.0 1180.0 1
	shown other 10.0 59.0 1
	shown proc 69.0 1121.0 1
	shown leaf1 128.0 708.0 1
	[ "$(grep -c '^frame ' <<<"$output")" -eq 12 ]
}

@test "flame graph in a browser: a zoom keeps the ancestors, dimmed and clickable, and hides the rest" {
	browse "$T/fg.svg" '[["zoom","spin_a@1"],["frames"]]' \
		"$T/fg.svg" '[["zoom","spin_a@1"],["zoom","main"],["frames"]]' \
		"$T/fg.svg" '[["zoom","leaf2"],["reset"],["frames"]]'
	page 1
	# The clicked frame and what it called, across the whole width.
	shown spin_a 10.0 1180.0 1
	shown leaf1 10.0 885.0 1
	shown leaf2 895.0 295.0 1
	# Its callers, the root included: whole width, dimmed, still there.
	shown all 10.0 1180.0 0.5
	shown proc 10.0 1180.0 0.5
	shown main 10.0 1180.0 0.5
	# Nothing else: no sibling squeezed into the margin.
	[ "$(grep -c '^frame ' <<<"$output")" -eq 6 ]

	# Part of the way back out: a click on an ancestor zooms on it.
	page 2
	shown main 10.0 1180.0 1
	shown spin_a 72.1 993.7 1
	shown spin_b 1065.8 124.2 1
	shown short_lived_work 10.0 62.1 1
	shown proc 10.0 1180.0 0.5
	[ "$(grep -c '^frame ' <<<"$output")" -eq 9 ]
	refute_line --regexp '^frame (other|start) '

	# Reset zoom: every frame where it was.
	page 3
	shown all 10.0 1180.0 1
	shown other 10.0 59.0 1
	shown leaf2 836.0 236.0 1
	[ "$(grep -c '^frame ' <<<"$output")" -eq 12 ]
}

@test "flame graph in a browser: search says the share of all samples its matches cover" {
	# spin_a 80 + short_lived_work 5 (its own spin_a counted once) + 5: 90%.
	browse "$T/fg.svg" '[["search","spin_a|short_lived_work"],["matched"],["frames"]]' \
		"$T/fg.svg" '[["search","leaf"],["matched"]]' \
		"$T/fg.svg" '[["search","spin_a"],["search","spin_(a"],["matched"],["frames"]]' \
		"$T/fg.svg" '[["search","spin_a"],["search",""],["matched"],["frames"]]'
	page 1
	assert_line "matched Matched: 90.0%"
	assert_line --regexp '^frame spin_a x=.* fill=rgb\(230, 0, 230\) '
	assert_line --regexp '^frame short_lived_work x=.* fill=rgb\(230, 0, 230\) '
	assert_line --regexp '^frame spin_b x=.* fill=- '
	page 2
	assert_line "matched Matched: 80.0%"

	# An invalid expression is said, and the old highlights go.
	page 3
	assert_line "matched Not a regular expression: spin_(a"
	refute_line --regexp 'fill=rgb'
	# An empty one clears the search.
	page 4
	assert_line "matched -"
	refute_line --regexp 'fill=rgb'
}

# graph N: a flame graph of N stacks, three frames each of their own, in $T/gN.svg.
graph() {
	awk -v n="$1" 'BEGIN { for (i = 0; i < n; i++) printf "p;m;f%d;g%d;h%d 1\n", i, i, i }' |
		"$CONV" svg "$T/g$1.svg"
}

@test "flame graph in a browser: a search takes time linear in the frames (it was quadratic)" {
	graph 700
	graph 3500
	# The milliseconds one search for "f1.*" takes in each.
	browse "$T/g700.svg" '[["time-search","f1.*"],["matched"]]' \
		"$T/g3500.svg" '[["time-search","f1.*"],["matched"]]'
	page 1
	small=$(sed -n 's/^search-ms //p' <<<"$output")
	# f1, f10-f19, f100-f199: 111 of 700.
	assert_line "matched Matched: 15.9%"
	page 2
	big=$(sed -n 's/^search-ms //p' <<<"$output")
	# And f1000-f1999: 1111 of 3500.
	assert_line "matched Matched: 31.7%"
	[ -n "$small" ] && [ -n "$big" ] || fail "no times: $BROWSED"
	echo "search: $small ms for 2,100 frames, $big ms for 10,500"
	# Five times the frames: about five times as long, twenty-five if
	# quadratic (the old search's lowest-row scan put back: 18 ms for 2,100
	# frames, 5.1 s for 21,000). Allow fifteen, and 100 ms at most. (21,000
	# frames took the browser 30 s to load, most of this suite's time.)
	awk -v s="$small" -v b="$big" 'BEGIN { exit !(b <= 15 * (s > 0.1 ? s : 0.1) && b < 100) }' ||
		fail "search: $small ms for 2,100 frames, $big ms for 10,500"
}

@test "flame graph in a browser: an inlined call is named as it is, in labels, zoomed or not, and in search" {
	cat > "$T/inl.folded" <<-'EOF2'
	proc;main;hot_[i];leaf 6
	proc;main;cold 4
	EOF2
	"$CONV" svg "$T/inl.svg" < "$T/inl.folded"
	# Its title says it is inlined; its label is its name, before a zoom and after.
	browse "$T/inl.svg" '[["frames"],["zoom","hot"],["frames"],["reset"],["frames"]]' \
		"$T/inl.svg" '[["search","inlined"],["matched"]]' \
		"$T/inl.svg" '[["search","^hot$"],["matched"]]'
	page 1
	[ "$(grep -c '^frame hot (inlined) x=.* label=hot$' <<<"$output")" -eq 3 ] ||
		fail "an inlined frame's label changed"
	assert_line --regexp '^frame hot \(inlined\) x=10\.0 w=1180\.0 opacity=1 .* label=hot$'
	refute_line --partial 'label=hot (inl'
	# Its name is "hot": "inlined" matches nothing, "^hot$" matches it.
	page 2
	assert_line "matched Matched: 0.0%"
	page 3
	assert_line "matched Matched: 60.0%"
	# Drawn in the inlined calls' aqua, beside the user code's red.
	grep -q '<g class="f" data-v="6" data-i="1"><title>hot (inlined) (6 samples, 60.00%)</title><rect [^>]*fill="rgb([4-8][0-9],2[0-2][0-9],2[0-3][0-9])"' "$T/inl.svg" ||
		fail "$(grep hot "$T/inl.svg")"
}

@test "flame graph in a browser: a real profile renders, zooms and searches" {
	require_bpf
	: > "$T/spin"
	"$WL/spin" 0 > "$T/spin" &
	WPID=$!
	wait_for_line "$T/spin" '^pid '
	# About 400 samples, from the banner on, however slowly it starts.
	tool_start "$T/out" "$T/err" "$BIN/profile" -p "$WPID" -F 199 --svg "$T/p.svg"
	wait_cpu "$WPID" $(( $(cpu_ms "$WPID") + 2000 ))
	tool_stop || fail "profile failed: $(cat "$T/err")"
	stop_bg "$WPID"
	WPID=
	browse "$T/p.svg" '[["zoom","spin_heavy"],["frames"],["reset"],["search","spin_heavy|spin_light"],["matched"]]'
	assert_line --regexp '^frame spin_heavy x=10\.0 w=1180\.0 opacity=1 '
	# Nearly every sample of the spinner is in one of the two.
	pct=$(sed -n 's/^matched Matched: \([0-9.]*\)%$/\1/p' <<<"$output")
	awk -v p="$pct" 'BEGIN { exit !(p >= 90 && p <= 100) }' || fail "matched $pct%"
}
