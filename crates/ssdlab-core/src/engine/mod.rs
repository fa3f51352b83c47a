//! The discrete-event engine: simulated time, the event queue, shared FIFO servers and
//! deterministic random streams. Models own their state; the engine owns time.

pub mod memory;
pub mod rng;
pub mod scheduler;
pub mod server;
pub mod timer;

pub use rng::{derive_seed, stream};
pub use scheduler::Scheduler;
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
    ((bytes as u128 * NS_PER_S as u128).div_ceil(bytes_per_s as u128)) as Time
}
