//! ssdlab-core: a deterministic discrete-event simulator of SSDs behind a Linux-like block
//! layer, driven by resolved fio-style job specs.
//!
//! Data flows one way down — workload → host → block layer (one queue per device) → device —
//! and completions come back up; metrics are collected on the way. Layout follows that flow:
//! [`workload`], [`host`], [`block`], [`device`] (or an [`array`] of devices, each with its
//! own block queue), [`metrics`], all on top of the [`engine`]; [`sim`] puts a system together
//! and runs it, its targets drives or arrays ([`target`]), telling an observer how far it is
//! ([`progress`]).

// Index loops over several parallel arrays read better than zipped iterators here, and a few
// constructors and recorders take the many plain values they record.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

pub mod array;
pub mod block;
pub mod device;
pub mod engine;
pub mod error;
pub mod host;
pub mod io;
pub mod metrics;
pub mod progress;
pub mod report;
pub mod schema;
pub mod sim;
pub mod target;
pub mod workload;

pub use error::{ConfigError, SimError};

/// The simulator's identity: its version and a hash of its source, the same on every machine
/// that builds the same source (results cached under it are results of this model).
pub fn build_id() -> String {
    format!("{}+{}", env!("CARGO_PKG_VERSION"), env!("SSDLAB_CORE_SOURCE_HASH"))
}
pub use report::SimResult;
pub use sim::{run, run_json, run_observed, SimSpec};
