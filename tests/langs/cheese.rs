// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
// A Rust program whose names the demangler must read, built with the
// legacy mangling and with v0: a module's function, a generic one, a
// method. usage: cheese-rust-MANGLING SECONDS -- prints "pid PID", then
// spins in cheese::affineur::ripen, called from cheese::cave::Cave::age,
// called from cheese::cellar::<u64>. SECONDS 0: until stopped, and never
// past the process that started it (tests/workloads/lifetime.h).
use std::time::{Duration, Instant};

// std::hint::black_box is Rust 1.66's; bookworm's rustc is 1.63.
fn black_box<T>(x: T) -> T {
    let y = unsafe { std::ptr::read_volatile(&x) };
    std::mem::forget(x);
    y
}

mod affineur {
    #[inline(never)]
    pub fn ripen(turns: u64) -> u64 {
        let mut s = 0u64;
        for i in 0..turns {
            s = crate::black_box(s.wrapping_add(i));
        }
        s
    }
}

mod cave {
    pub struct Cave {
        pub shelf: u64,
    }

    impl Cave {
        #[inline(never)]
        pub fn age(&self, wheels: &[u64]) -> u64 {
            let mut r = self.shelf;
            for w in wheels {
                r = r.wrapping_add(crate::affineur::ripen(*w));
            }
            crate::black_box(r)
        }
    }
}

#[inline(never)]
fn cellar<T: Into<u64> + Copy>(until: Instant, shelf: T) -> u64 {
    let c = cave::Cave { shelf: shelf.into() };
    let wheels = vec![20000u64; 16];
    let mut r = 0u64;
    while Instant::now() < until {
        r = r.wrapping_add(c.age(black_box(&wheels)));
    }
    black_box(r)
}

extern "C" {
    fn prctl(option: i32, ...) -> i32;
    fn getppid() -> i32;
}

/// As lifetime.h: a workload a test stops ends with the test (PR_SET_PDEATHSIG, SIGKILL).
fn until_stopped() -> Duration {
    unsafe {
        prctl(1, 9 as std::os::raw::c_ulong);
        if getppid() == 1 {
            std::process::exit(1);
        }
    }
    Duration::from_secs(100 * 365 * 24 * 3600)
}

fn main() {
    let secs: f64 = std::env::args().nth(1).and_then(|s| s.parse().ok()).unwrap_or(5.0);
    println!("pid {}", std::process::id());
    let until = Instant::now()
        + if secs > 0.0 {
            Duration::from_secs_f64(secs)
        } else {
            until_stopped()
        };
    black_box(cellar(until, 3u64));
}
