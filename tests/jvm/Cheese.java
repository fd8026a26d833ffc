// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// The workload of tests/jvm.bats: the main thread burns CPU in brie ->
// camembert -> reblochon (which the JIT compiles, and inlines into brie),
// another sleeps in comte -> beaufort. Prints "pid PID" and each thread's
// "tid NAME TID" once both run; runs until stdin closes or it is killed.
//
// usage: java -cp DIR Cheese [pool|churn|short]   (-Xint: every frame interpreted)
//   pool:  50 threads of a pool run the chain instead, each printing "tid pool TID";
//   churn: the main thread also loads a class in a loader of its own, runs it hot
//          until compiled, and drops it (the collector unloads it, its code freed),
//          and makes compiled code meet a type it did not expect (deoptimized);
//   short: only the chain, a fixed number of times, then exits ("done PID").
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
        if (args.length > 0 && args[0].equals("short")) {
            // A short program: the chain a fixed number of times, then gone.
            for (int i = 0; i < 20000; i++)
                sink += brie(100000); // short
            System.out.println("done " + ProcessHandle.current().pid());
            return;
        }
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
        String mode = args.length > 0 ? args[0] : "";
        if (mode.equals("pool")) {
            java.util.concurrent.ExecutorService pool =
                    java.util.concurrent.Executors.newFixedThreadPool(50);
            for (int i = 0; i < 50; i++)
                pool.submit(() -> {
                    try {
                        System.out.println("tid pool " + tid());
                    } catch (Exception e) {
                    }
                    while (true)
                        sink += brie(100000); // the pool
                });
        }
        System.out.println("pid " + ProcessHandle.current().pid());
        System.out.println("tid main " + tid());
        System.out.flush();
        if (mode.equals("pool"))
            Thread.sleep(Long.MAX_VALUE);
        for (long round = 0;; round++) {
            sink += brie(100000); // the main loop
            if (mode.equals("churn"))
                churn(round);
        }
    }

    // A shape compiled code sees first, and one it meets later.
    public interface Rind {
        long age(long n);
    }

    public static final class Washed implements Rind {
        public long age(long n) {
            return n * 3;
        }
    }

    static final class Bloomy implements Rind {
        public long age(long n) {
            return n * 5 + 1;
        }
    }

    static long affine(Rind r, long n) {
        long x = 0;
        for (long i = 0; i < n; i++)
            x += r.age(i);
        return x;
    }

    // A class of its own loader each time: compiled, then dropped and unloaded.
    static class Cellar extends ClassLoader {
        Cellar() {
            super(Cheese.class.getClassLoader());
        }

        Class<?> fresh() throws Exception {
            String name = Washed.class.getName();
            byte[] b;
            try (java.io.InputStream in = Cheese.class.getResourceAsStream("Cheese$Washed.class")) {
                b = in.readAllBytes();
            }
            return defineClass(name, b, 0, b.length);
        }

        @Override
        protected Class<?> loadClass(String name, boolean resolve) throws ClassNotFoundException {
            return super.loadClass(name, resolve);
        }
    }

    static void churn(long round) throws Exception {
        // Monomorphic for a while, compiled so; then another type: deoptimized.
        sink += affine(round % 50 < 40 ? new Washed() : new Bloomy(), 20000);
        if (round % 20 == 0) {
            Class<?> c = new Cellar().fresh();
            Object o = c.getDeclaredConstructor().newInstance();
            java.lang.reflect.Method m = c.getMethod("age", long.class);
            for (int i = 0; i < 2000; i++)
                sink += (Long) m.invoke(o, (long) i);
            System.gc();
        }
    }
}
