# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The Python workload of tests/python.bats: known chains of Python calls on
# a busy thread, a sleeping one, and a pipe's reader and its writer.
#
# usage: cheeses.py SECONDS   (prints its pid and threads' ids, then runs;
#                              SECONDS 0: until killed, or its parent ends)
import os
import sys
import threading
import time


def stilton(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def cheddar(n):
    return stilton(n)


def wensleydale(n):
    return cheddar(n)


def doze():
    time.sleep(0.02)


def napping(stop):
    while not stop.is_set():
        doze()


def curdle(fd):
    return os.read(fd, 1)


def listen(fd):
    while curdle(fd):
        pass


def whey(fd):
    os.write(fd, b"x")


def whisk(fd, stop):
    while not stop.is_set():
        time.sleep(0.01)
        whey(fd)
    os.close(fd)


def main():
    # 0 is until killed: a tool whose start takes seconds on a loaded
    # machine must not outlive it. Nor may it outlive its test: the parent's
    # end is checked as often as the clock, at a system call's cost.
    end = time.monotonic() + (float(sys.argv[1]) or float("inf"))
    parent = os.getppid()
    stop = threading.Event()
    ids = {}
    r, w = os.pipe()

    def start(name, target, *args):
        def run():
            ids[name] = threading.get_native_id()
            target(*args)
        t = threading.Thread(target=run, name=name)
        t.start()
        return t

    threads = [start("napper", napping, stop), start("reader", listen, r),
               start("writer", whisk, w, stop)]
    while len(ids) < 3:
        time.sleep(0.001)
    print("pid", os.getpid(), "busy", threading.get_native_id(),
          " ".join(f"{k} {v}" for k, v in sorted(ids.items())), flush=True)
    while time.monotonic() < end and os.getppid() == parent:
        wensleydale(20000)
    stop.set()
    for t in threads:
        t.join()


main()
