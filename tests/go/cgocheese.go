// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A cgo program (Go that links C, as most Go daemons do) for the stack
// tools: "go" burns CPU in a frameless Go leaf, main.main ->
// main.goCamembert -> main.goRoquefort; "c" in C code called from Go,
// main.main -> main.goLivarot -> livarot_outer -> livarot_leaf; "nap"
// sleeps 10 ms at a time in C, main.main -> main.goPontleveque ->
// pontleveque_nap -> usleep; "pipe" blocks in C reading a pipe,
// main.main -> main.goComte -> comte_read -> read, which a goroutine
// writes to every 10 ms from Go, main.goBeaufort -> os.(*File).Write (a
// waker for offwaketime). Its C code keeps no frame pointers.
//
// usage: cgocheese go|c|nap|pipe SECONDS -- prints "ready" once it runs;
// nap prints "nap" after each nap, pipe "read" after each read (a test
// counts them). SECONDS 0 is until killed, and never past the test that
// started it (untilStopped).
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

__attribute__((noinline)) long comte_read(int fd)
{
	char c;
	long n = read(fd, &c, 1);

	__asm__ volatile("" ::: "memory");
	return n;
}
*/
import "C"

import (
	"fmt"
	"os"
	"strconv"
	"syscall"
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

//go:noinline
func goComte(fd int) {
	C.comte_read(C.int(fd))
}

var pipeW *os.File

// Started with no arguments, so that it is the goroutine's own function
// (with some, the compiler wraps the call in a closure).
//
//go:noinline
func goBeaufort() {
	for {
		time.Sleep(10 * time.Millisecond)
		pipeW.Write([]byte{1})
	}
}

// untilStopped: the end of a run of SECONDS 0, which a test stops. As
// tests/workloads/lifetime.h has C's workloads do, it ends with the process
// that started it (the test), however the test ends.
func untilStopped() time.Time {
	syscall.RawSyscall(syscall.SYS_PRCTL, syscall.PR_SET_PDEATHSIG, uintptr(syscall.SIGKILL), 0)
	if os.Getppid() == 1 {
		os.Exit(1)
	}
	return time.Now().Add(100 * 365 * 24 * time.Hour)
}

// A line after each nap or read, written as directly as can be: fmt's
// code, preempted, put stacks of its own among the ones the tests read.
var napped, read = []byte("nap\n"), []byte("read\n")

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: cgocheese go|c|nap|pipe SECONDS")
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
	fd := -1
	if os.Args[1] == "pipe" {
		r, w, err := os.Pipe()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		fd = int(r.Fd()) // blocking from here on, as C's read expects
		pipeW = w
		go goBeaufort()
	}
	fmt.Println("ready")
	for time.Now().Before(end) {
		switch os.Args[1] {
		case "c":
			sink += goLivarot(sink)
		case "nap":
			goPontleveque()
			syscall.Write(1, napped)
		case "pipe":
			goComte(fd)
			syscall.Write(1, read)
		default:
			sink += goCamembert(sink)
		}
	}
}
