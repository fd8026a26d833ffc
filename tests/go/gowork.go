// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A Go workload for tests/go.bats: a known call chain on CPU, a goroutine
// that sleeps, goroutines whose timed calls block (and resume on other
// threads) or grow their stacks, counting their calls, or collections of a
// live heap one after another, whose marking runs by runtime.systemstack.
//
// usage: gowork cpu|sleep|block|grow|gc SECONDS
//
// Prints "ready" once it runs; sleep prints "slept" after each of its
// sleeps (a test counts them). SECONDS 0 is until killed, and never past the
// test that started it (untilStopped).
package main

import (
	"fmt"
	"os"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

var sink int

//go:noinline
func goHotAlpha(n int) int {
	s := 0
	for i := 0; i < n; i++ {
		s += i * i
	}
	return s
}

// Small enough for the compiler to inline into its caller.
func goInlinedBeta(n int) int { return goHotAlpha(n) + 1 }

//go:noinline
func goCallerGamma(n int) int { return goInlinedBeta(n) * 2 }

//go:noinline
func goSleeperDelta(d time.Duration) { time.Sleep(d) }

var calls, inner int64

// Calls of 16 ms or more (where funclatency's msecs histogram starts its
// 16-31 bucket), by this program's clock: inside the call (@slowInner, a
// floor for a tracer's count of them) and around it (@slowOuter, a ceiling).
// A loaded machine wakes a sleeper late now and then: these say how often.
const slow = 16 * time.Millisecond

var slowInner, slowOuter int64

// Blocks 10 ms: its goroutine parks and often resumes on another thread.
// Its own clock's reading of the sleep (@inner) is a floor for a tracer's
// time of the call, timed from before its first instruction to its return.
//
//go:noinline
func goTimedBlock() {
	t0 := time.Now()
	time.Sleep(10 * time.Millisecond)
	d := time.Since(t0)
	atomic.AddInt64(&inner, int64(d))
	if d >= slow {
		atomic.AddInt64(&slowInner, 1)
	}
	atomic.AddInt64(&calls, 1)
}

//go:noinline
func goDeep(n int) int {
	var pad [64]int
	pad[n%64] = n
	if n == 0 {
		return pad[0]
	}
	return goDeep(n-1) + pad[n%64]
}

// Blocks 10 ms, then recurses 2,000 deep (a megabyte of stack, from 8
// KiB): the runtime copies its goroutine's stack to a larger one, some
// eight times, while the call is timed. Its result (the sum of 1 to 2,000)
// is checked: a probe that broke the copied stack would show here, or in a
// crash. Deeper, the copying took 3 ms and more of the call, and under load
// pushed calls past 16 ms, out of the bucket the test looks for them in.
//
//go:noinline
func goTimedGrow() int {
	t0 := time.Now()
	time.Sleep(10 * time.Millisecond)
	r := goDeep(2000)
	if r != 2000*2001/2 {
		fmt.Fprintln(os.Stderr, "goDeep(2000) returned", r, "not", 2000*2001/2)
		os.Exit(1)
	}
	if time.Since(t0) >= slow {
		atomic.AddInt64(&slowInner, 1)
	}
	atomic.AddInt64(&calls, 1)
	return r
}

// A live heap for the collector to mark: 200,000 linked nodes.
type gcNode struct {
	next *gcNode
	pad  [6]*int
}

var gcLive *gcNode

// Collections one after another until @end; the marking is the runtime's
// work on the threads' own stacks (gcBgMarkWorker calls gcDrain by
// runtime.systemstack).
func goCollect(end time.Time) {
	for i := 0; i < 200000; i++ {
		gcLive = &gcNode{next: gcLive}
	}
	for time.Now().Before(end) {
		runtime.GC()
	}
}

// Four goroutines calling @f until @end, on two threads at most. Prints
// the calls, and the milliseconds (and microseconds) they took in all by
// this program's own clock, which a slowed machine stretches as it does a
// tracer's: a ceiling for a tracer's time of them, as @inner is a floor;
// then the calls of 16 ms or more inside and around (@slowInner, @slowOuter).
func timed(f func(), end time.Time) {
	var wg sync.WaitGroup
	var took int64

	runtime.GOMAXPROCS(2)
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(end) {
				t0 := time.Now()
				f()
				d := time.Since(t0)
				atomic.AddInt64(&took, int64(d))
				if d >= slow {
					atomic.AddInt64(&slowOuter, 1)
				}
			}
		}()
	}
	wg.Wait()
	fmt.Println("calls", atomic.LoadInt64(&calls), "ms", atomic.LoadInt64(&took)/1000000,
		"us", atomic.LoadInt64(&took)/1000, "inner_us", atomic.LoadInt64(&inner)/1000,
		"slow", atomic.LoadInt64(&slowOuter), "slow_inner", atomic.LoadInt64(&slowInner))
}

// untilStopped: the end of a run of SECONDS 0, which a test stops: a tool
// whose start takes seconds on a loaded machine, or a test that runs it
// several times, must not outlive what it traces. As tests/workloads/
// lifetime.h has C's workloads do, it ends with the process that started
// it (the test), however the test ends.
func untilStopped() time.Time {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	return time.Now().Add(100 * 365 * 24 * time.Hour)
}

// A line after each sleep, written as directly as can be: fmt's code,
// preempted, put stacks of its own among the ones the tests read.
var slept = []byte("slept\n")

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gowork cpu|sleep|block|grow|gc SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil {
		os.Exit(2)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	if secs <= 0 {
		end = untilStopped()
	}
	fmt.Println("ready")
	switch os.Args[1] {
	case "block":
		timed(goTimedBlock, end)
		return
	case "grow":
		timed(func() { goTimedGrow() }, end)
		return
	case "gc":
		goCollect(end)
		return
	}
	for time.Now().Before(end) {
		if os.Args[1] == "cpu" {
			sink += goCallerGamma(200000)
		} else {
			goSleeperDelta(20 * time.Millisecond)
			syscall.Write(1, slept)
		}
	}
}
