//! Workload generation: what the next I/O of a job is (direction, offset, size).

pub mod files;
pub mod generator;
pub mod replay;
pub mod spec;
pub mod trace;

pub use generator::{FileRandomMap, Generator, Io};
pub use spec::{BlockSizeDist, DistKind, Distribution, JobSpec, RateProcess, RwMode, Zone};
