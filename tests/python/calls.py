# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# A Python workload of tests/python.bats that enters the interpreter loop
# from C all the time (map() calling a Python function) and makes
# instances of a class (3.13 on run __init__ behind a shim frame): each
# loop call's first and last instructions, and -X perf's trampolines
# around them, are sampled often.
#
# usage: calls.py SECONDS   (prints its pid, then runs; SECONDS 0: until
#                            killed, or its parent ends)
import os
import sys
import time


class Rind:
    def __init__(self, x):
        self.x = x


def grate(x):
    return x


def shred(end, parent):
    while time.monotonic() < end and os.getppid() == parent:
        for _ in map(grate, range(1000)):
            pass
        for i in range(1000):
            Rind(i)


print("pid", os.getpid(), flush=True)
shred(time.monotonic() + (float(sys.argv[1]) or float("inf")), os.getppid())
