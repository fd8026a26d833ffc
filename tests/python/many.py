# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A Python workload of tests/python.bats with thousands of functions, each
# with a long name, in a file with a long name: as many distinct Python
# frames as a big service has, each costly to keep named.
#
# usage: many.py SECONDS COUNT   (prints its pid, then calls them all in turn;
#                                 SECONDS 0: until killed, or its parent ends)
import os
import sys
import time

count = int(sys.argv[2])
source = "".join(f"def f{i:05d}_{'x' * 240}(k):\n"
                 "    s = 0\n"
                 "    for j in range(k):\n"
                 "        s += j\n"
                 "    return s\n" for i in range(count))
scope = {}
exec(compile(source, "/tmp/" + "d" * 900 + ".py", "exec"), scope)
functions = [scope[name] for name in sorted(scope) if name.startswith("f")]
print("pid", os.getpid(), flush=True)
end = time.monotonic() + (float(sys.argv[1]) or float("inf"))
parent = os.getppid()
while time.monotonic() < end and os.getppid() == parent:
    for f in functions:
        f(200)
