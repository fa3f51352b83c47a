//! What the run reports: fio-style job statistics and /proc/diskstats-style device counters.

pub mod diskstats;
pub mod histogram;
pub mod jobstats;

pub use diskstats::DiskStats;
pub use histogram::LatencyHistogram;
pub use jobstats::{DirStats, IoLogRecord, IoLogger, JobStats, LatStats, OpSummary, RateSampler};
