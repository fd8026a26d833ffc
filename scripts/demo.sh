#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# `make demo`: runqlat on this machine while a small workload makes the CPUs contend.
set -eu
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
	echo "demo: tracing needs root; run: sudo make demo" >&2
	exit 1
fi

echo "== runqlat for 5 seconds while spinners and a sleeper share CPU 0 =="
build/tests/runq_contend -s 3 -n 450 -m 10 >/dev/null &
load=$!
build/bin/runqlat -m 5 1
wait $load

# Later tools add their own parts of the demo.
for part in scripts/demo-*.sh; do
	[ -x "$part" ] && "$part"
done
exit 0
