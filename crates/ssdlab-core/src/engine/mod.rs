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

/// A fixed rate's [`transfer_ns`], remembering the last size asked: a drive moves the same
/// size again and again (every 4 KiB read crosses its channel and its link), and the
/// division is among the slowest instructions on a request's path.
#[derive(Clone, Copy, Debug)]
pub struct TransferRate {
    bytes_per_s: u64,
    last_bytes: u64,
    last_ns: Time,
}

impl TransferRate {
    pub fn new(bytes_per_s: u64) -> TransferRate {
        TransferRate { bytes_per_s, last_bytes: 0, last_ns: transfer_ns(0, bytes_per_s) }
    }

    pub fn bytes_per_s(&self) -> u64 {
        self.bytes_per_s
    }

    /// `transfer_ns(bytes, self.bytes_per_s())`.
    #[inline]
    pub fn ns(&mut self, bytes: u64) -> Time {
        if bytes != self.last_bytes {
            self.last_bytes = bytes;
            self.last_ns = transfer_ns(bytes, self.bytes_per_s);
        }
        self.last_ns
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The remembered rate answers what `transfer_ns` does, for repeated and changing sizes.
    #[test]
    fn transfer_rate_answers_as_transfer_ns() {
        for rate in [1, 3, 800_000_000, 3_938_000_000, 40_000_000_000] {
            let mut r = TransferRate::new(rate);
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15 ^ rate;
            for i in 0..10_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // Runs of the same size, as a drive sees them, and sizes that change.
                let bytes = if i % 3 == 0 { 4096 } else { (x % 8) * 4096 + (x >> 60) };
                assert_eq!(r.ns(bytes), transfer_ns(bytes, rate), "{bytes} B at {rate} B/s");
            }
        }
    }

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
