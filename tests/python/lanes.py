# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The workload of tests/pythons.bats: eight threads, each in a function of
# its own (lane0 to lane7) that calls the same chain, brie -> camembert ->
# reblochon, which burns CPU: each thread's samples must carry its own lane.
# Runs on every CPython from 3.8 on.
#
# usage: lanes.py   (prints "lane I TID" for each thread, its id where it
#                    runs, then "pid PID"; runs until killed or its parent
#                    ends)
import os
import sys
import threading


def reblochon(n):
    x = 0
    for i in range(n):
        x += i * i
    return x


def camembert(n):
    return reblochon(n)


def brie(n):
    return camembert(n)


def lane0(stop):
    while not stop.is_set():
        brie(20000)


def lane1(stop):
    while not stop.is_set():
        brie(20000)


def lane2(stop):
    while not stop.is_set():
        brie(20000)


def lane3(stop):
    while not stop.is_set():
        brie(20000)


def lane4(stop):
    while not stop.is_set():
        brie(20000)


def lane5(stop):
    while not stop.is_set():
        brie(20000)


def lane6(stop):
    while not stop.is_set():
        brie(20000)


def lane7(stop):
    while not stop.is_set():
        brie(20000)


LANES = [lane0, lane1, lane2, lane3, lane4, lane5, lane6, lane7]


def main():
    parent = os.getppid()
    stop = threading.Event()
    ready = threading.Barrier(len(LANES) + 1)
    ids = {}

    def run(i):
        ids[i] = threading.get_native_id()
        ready.wait()
        LANES[i](stop)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(LANES))]
    for t in threads:
        t.start()
    ready.wait()
    # From this thread alone: lines printed by several would interleave.
    for i in sorted(ids):
        print("lane", i, ids[i])
    print("pid", os.getpid(), flush=True)
    # Until killed, or its test (the parent) is gone: a second at a time.
    while os.getppid() == parent and not stop.wait(1):
        pass
    stop.set()
    for t in threads:
        t.join()


main()
