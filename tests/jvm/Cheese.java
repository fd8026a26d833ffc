// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The workload of tests/jvm.bats: the main thread burns CPU in brie ->
// camembert -> reblochon (which the JIT compiles, and inlines into brie),
// another sleeps in comte -> beaufort. Prints "pid PID" and each thread's
// "tid NAME TID" once both run; runs until stdin closes or it is killed.
//
// usage: java -cp DIR Cheese   (-Xint: every frame interpreted)
public class Cheese {
    static volatile long sink;

    static long reblochon(long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x += i * i ^ (x >>> 3);
        return x;
    }

    static long camembert(long n) {
        return reblochon(n) + 1;
    }

    static long brie(long n) {
        return camembert(n) + 1;
    }

    static void beaufort() throws InterruptedException {
        Thread.sleep(20);
    }

    static void comte() throws InterruptedException {
        beaufort();
    }

    static long tid() throws Exception {
        // The thread's id as the kernel knows it: /proc/thread-self's target.
        return Long.parseLong(java.nio.file.Files.readSymbolicLink(
                java.nio.file.Paths.get("/proc/thread-self")).getFileName().toString());
    }

    public static void main(String[] args) throws Exception {
        Thread sleeper = new Thread(() -> {
            try {
                System.out.println("tid sleeper " + tid());
                while (true)
                    comte();
            } catch (Exception e) {
            }
        }, "sleeper");
        sleeper.setDaemon(true);
        sleeper.start();
        Thread stdin = new Thread(() -> {
            try {
                while (System.in.read() >= 0)
                    ;
            } catch (Exception e) {
            }
            System.exit(0);
        }, "stdin");
        stdin.setDaemon(true);
        stdin.start();
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.println("tid main " + tid());
        System.out.flush();
        while (true)
            sink += brie(100000);
    }
}
