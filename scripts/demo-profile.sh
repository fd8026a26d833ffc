#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make demo`'s profile part: a CPU flame graph of the whole machine while a workload runs.
set -eu
cd "$(dirname "$0")/.."

out=build/demo/profile.svg
mkdir -p build/demo
echo "== profile: every CPU at 99 Hz for 5 seconds while a workload spins and reads /dev/zero =="
build/tests/profile_spin -t -k -s 7 >/dev/null &
load=$!
build/bin/profile -F 99 --svg "$out" 5 >/dev/null
kill "$load" 2>/dev/null || true
wait "$load" 2>/dev/null || true
echo "CPU flame graph: $(pwd)/$out (open it in a browser: click a frame to zoom, "Search" to highlight)"
