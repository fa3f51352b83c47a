//! The discrete-event engine: simulated time, the event queue, shared FIFO servers and
//! deterministic random streams. Models own their state; the engine owns time.

pub mod divide;
pub mod memory;
pub mod rng;
pub mod event_queue;
pub mod server;
pub mod timer;

pub use rng::{derive_seed, stream};
pub use event_queue::EventQueue;
pub use server::{FifoServer, MultiServer};

/// Simulated time in integer nanoseconds since the start of the run.
pub type Time = u64;

pub const NS_PER_US: Time = 1_000;
pub const NS_PER_MS: Time = 1_000_000;
pub const NS_PER_S: Time = 1_000_000_000;

/// Nanoseconds needed to move `bytes` at `bytes_per_s`, rounded up so that no transfer is free.
#[inline]
pub fn transfer_ns(bytes: u64, bytes_per_s: u64) -> Time {
    debug_assert!(bytes_per_s > 0);
    // Every request's transfers pass here: a product that fits 64 bits (any transfer under
    // 18 GB) is divided as one, which is several times cheaper than the 128-bit routine.
    if bytes <= u64::MAX / NS_PER_S {
        return (bytes * NS_PER_S).div_ceil(bytes_per_s);
    }
    ((bytes as u128 * NS_PER_S as u128).div_ceil(bytes_per_s as u128)) as Time
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 64-bit path gives what the exact 128-bit computation gives, at its edge too.
    #[test]
    fn transfer_ns_is_the_exact_rounded_up_quotient() {
        let exact = |b: u64, r: u64| ((b as u128 * NS_PER_S as u128).div_ceil(r as u128)) as Time;
        let edge = u64::MAX / NS_PER_S;
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        for i in 0..100_000u64 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = match i % 4 {
                0 => x % 1_000_000,
                1 => edge - (x % 1000),
                2 => edge + 1 + (x % 1000),
                _ => x >> 20,
            };
            let rate = 1 + (x >> 33) % 40_000_000_000;
            assert_eq!(transfer_ns(bytes, rate), exact(bytes, rate), "{bytes} B at {rate} B/s");
        }
        assert_eq!(transfer_ns(4096, 800_000_000), 5120);
        assert_eq!(transfer_ns(1, 3), 333_333_334);
    }
}
