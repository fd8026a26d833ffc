#!/usr/bin/env bats
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# common/ on synthetic data: bcc's histogram layout where no real event can
# reach (past 2^32, the top u64 slot), percentiles and JSON escaping.

load helpers

H=$BUILD/tests/unit/histogram

@test "log2 histogram: bcc's narrow layout, rows from 0 up to the last non-empty slot" {
	run "$H" small
	assert_success
	assert_line --index 0 "     usecs               : count     distribution"
	assert_line --index 1 "         0 -> 1          : 3        |************                            |"
	assert_line --index 3 "         4 -> 7          : 10       |****************************************|"
	assert_line --index 7 "        64 -> 127        : 4        |****************                        |"
	[ "${#lines[@]}" -eq 8 ]
}

@test "log2 histogram: the wide layout past 2^32, with 20-star bars" {
	run "$H" wide
	assert_success
	assert_line --index 0 "               nsecs                         : count     distribution"
	assert_line --index 2 "                   2 -> 3                    : 7        |********************|"
	assert_line --index 41 "       1099511627776 -> 2199023255551        : 1        |**                  |"
}

@test "log2 histogram: the top slot reaches 2^64-1, nothing folded" {
	run "$H" top
	assert_success
	assert_line " 9223372036854775808 -> 18446744073709551615 : 1        |********************|"
	# Estimates there end at 2^64-1 too (2^64 as a double has no integer to become).
	assert_line "        p99 = 18446744073709551615 nsecs"
	assert_line "        max <= 18446744073709551615 nsecs"
	echo "${lines[-1]}" | jq -e '.buckets[-1] == {"low":9223372036854775808,"high":18446744073709551615,"count":1} and .total == 1'
}

@test "an empty histogram prints nothing, as bcc" {
	run "$H" empty
	assert_success
	assert_output ""
}

@test "percentiles are interpolated inside the bucket that crosses them" {
	run "$H" percentiles
	assert_success
	assert_line "        p50 = 15 usecs"
	assert_line "        p90 = 127 usecs"
	assert_line "        p99 = 971 usecs"
	assert_line "        max <= 1023 usecs"
}

@test "linear histogram: bcc's layout" {
	run "$H" linear
	assert_success
	assert_line --index 0 "     slot          : count     distribution"
	assert_line --index 3 "        2          : 4        |****************************************|"
}

@test "JSON: escaped strings, buckets, totals and percentiles" {
	run "$H" json
	assert_success
	echo "$output" | jq -e '.comm == "a\"b\\c\n" and .total == 3 and .sum == 15 and
		(.buckets | length) == 3 and .p50 <= .p90 and .max == 7'
}

E=$BUILD/tests/unit/escapetest

@test "escapers: noncharacters, overlong forms and surrogates are bytes in every writer; U+FFFD is a character" {
	# U+FFFE, U+FDD0, U+10FFFF (noncharacters), an overlong '/', a surrogate, then U+FFFD.
	bad=$'\xef\xbf\xbe\xef\xb7\x90\xf4\x8f\xbf\xbf\xc0\xaf\xed\xa0\x80'
	for fl in text folded xml; do
		run "$E" "$fl" "a${bad}b"$'\xef\xbf\xbd'
		assert_success
		assert_output 'a\xef\xbf\xbe\xef\xb7\x90\xf4\x8f\xbf\xbf\xc0\xaf\xed\xa0\x80b'$'\xef\xbf\xbd'
	done
	# In a Prometheus label value, the escape's backslash is itself escaped.
	run "$E" prom "a${bad}"
	assert_output 'a\\xef\\xbf\\xbe\\xef\\xb7\\x90\\xf4\\x8f\\xbf\\xbf\\xc0\\xaf\\xed\\xa0\\x80'
	run "$E" json "a${bad}"
	assert_output '"a\\xef\\xbf\\xbe\\xef\\xb7\\x90\\xf4\\x8f\\xbf\\xbf\\xc0\\xaf\\xed\\xa0\\x80"'
	echo "$output" | jq -e . > /dev/null
}

@test "escapers: XML entities, Prometheus backslashes, folded separators" {
	run "$E" xml $'<a href="x">&amp;\x1b'
	assert_output '&lt;a href=&quot;x&quot;&gt;&amp;amp;\x1b'
	run "$E" prom $'a\\b"c\nd'
	assert_output 'a\\b\"c\\x0ad'
	run "$E" folded 'a b;c'
	assert_output 'a_b:c'
	run "$E" spaced 'stilton (a b.py:7);x'
	assert_output 'stilton (a b.py:7):x'
}

@test "escapers: a name cut to fit is cut between characters, never inside one" {
	# "ééé" is six bytes: five bytes of room hold two characters, not two and a half.
	run "$E" cut 6 $'\xc3\xa9\xc3\xa9\xc3\xa9'
	assert_line --index 0 $'\xc3\xa9\xc3\xa9'
	assert_line --index 1 6
	# An escape is whole too: "a" and "\x1b" need 5 bytes, 4 of room hold "a" only.
	run "$E" cut 5 $'a\x1bz'
	assert_line --index 0 a
	assert_line --index 1 6
}
