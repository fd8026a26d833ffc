// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A Go workload for tests/go.bats: a known call chain on CPU, or a goroutine that sleeps.
//
// usage: gowork cpu SECONDS | gowork sleep SECONDS
package main

import (
	"fmt"
	"os"
	"strconv"
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

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gowork cpu|sleep SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil {
		os.Exit(2)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	fmt.Println("ready")
	for time.Now().Before(end) {
		if os.Args[1] == "cpu" {
			sink += goCallerGamma(200000)
		} else {
			goSleeperDelta(20 * time.Millisecond)
		}
	}
}
