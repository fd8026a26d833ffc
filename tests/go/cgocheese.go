// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A cgo program (Go that links C, as most Go daemons do) for the stack
// tools: "go" burns CPU in a frameless Go leaf, main.main ->
// main.goCamembert -> main.goRoquefort; "c" in C code called from Go,
// main.main -> main.goLivarot -> livarot_outer -> livarot_leaf; "nap"
// sleeps 10 ms at a time in C, main.main -> main.goPontleveque ->
// pontleveque_nap -> usleep. Its C code keeps no frame pointers.
package main

/*
#cgo CFLAGS: -O2 -fomit-frame-pointer
#include <stdint.h>
#include <unistd.h>

__attribute__((noinline)) static uint64_t livarot_leaf(uint64_t n)
{
	uint64_t x = n;

	for (uint64_t i = 0; i < 2000000; i++)
		x = x * 6364136223846793005ULL + i;
	return x;
}

__attribute__((noinline)) uint64_t livarot_outer(uint64_t n)
{
	return livarot_leaf(n) + 1;
}

__attribute__((noinline)) void pontleveque_nap(void)
{
	usleep(10000);
	__asm__ volatile("" ::: "memory");	// not a tail call
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

var sink uint64

//go:noinline
func goRoquefort(n uint64) uint64 {
	x := n
	for i := uint64(0); i < 2000000; i++ {
		x = x*6364136223846793005 + i
	}
	return x
}

//go:noinline
func goCamembert(n uint64) uint64 {
	return goRoquefort(n) + 1
}

//go:noinline
func goLivarot(n uint64) uint64 {
	return uint64(C.livarot_outer(C.uint64_t(n))) + 1
}

//go:noinline
func goPontleveque() {
	C.pontleveque_nap()
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cgocheese go|c|nap SECONDS")
		os.Exit(2)
	}
	secs, err := strconv.ParseFloat(os.Args[2], 64)
	if err != nil {
		os.Exit(2)
	}
	end := time.Now().Add(time.Duration(secs * float64(time.Second)))
	fmt.Println("ready")
	for time.Now().Before(end) {
		switch os.Args[1] {
		case "c":
			sink += goLivarot(sink)
		case "nap":
			goPontleveque()
		default:
			sink += goCamembert(sink)
		}
	}
}
