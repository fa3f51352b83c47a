//! ssdlab-core: a deterministic discrete-event simulator of SSDs behind a Linux-like block
//! layer, driven by resolved fio-style job specs.
//!
//! Data flows one way down — workload → host block layer → device — and completions come
//! back up; metrics are collected on the way. Layout follows that flow: [`workload`],
//! [`host`], [`device`], [`metrics`], all on top of the [`engine`].

pub mod device;
pub mod engine;
pub mod error;
pub mod host;
pub mod metrics;
pub mod sim;
pub mod workload;

pub use error::{ConfigError, SimError};
pub use sim::{run, run_json, SimResult, SimSpec};
