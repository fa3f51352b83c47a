//! ssdlab-core: a deterministic discrete-event simulator of SSDs, hard disks and arrays behind
//! a Linux-like block layer, driven by resolved fio-style job specs.
//!
//! Data flows one way down — jobs ([`host`]) → block layer ([`block`]: one queue per device,
//! its scheduler, the dispatch to the device) → a drive ([`device`]) or an array of drives
//! ([`array`](mod@array), whose members have block queues of their own) — and completions come back up.
//! The modules form layers, each using only those below it (a test checks it):
//!
//! ```text
//! schema                         the JSON Schemas of a run's input and output
//! sim                            a system put together and run; the event loop
//! target                         what the system holds: a drive or an array
//! array                          RAID over drives
//! host                           the job runner
//! file                           the file layer at run time: operations, flusher, journal commits
//! pagecache                      the page cache: LRU, read-ahead, dirty limits, writeback selection
//! fs                             ext3/ext4 on-disk model: mkfs, inodes, allocation (no I/O)
//! block                          queues, schedulers, dispatch, the host's block layer
//! device                         drives: NAND SSD, in-place media, hard disk
//! workload, progress             job specs, generators, traces; progress reports
//! report                         what devices, arrays and runs report (the output)
//! metrics                        diskstats, fio's statistics, histograms
//! net                            links, bonding, max-min fair flows (no I/O: a model hosts will use)
//! engine, error, io              time, events, servers, random streams; errors; ids, requests
//! ```
//!
//! `docs/architecture.md` in the repository is the map, with a request's path through it.

// Index loops over several parallel arrays read better than zipped iterators here, and a few
// constructors and recorders take the many plain values they record.
#![allow(clippy::needless_range_loop, clippy::too_many_arguments)]

pub mod array;
pub mod block;
pub mod cpu;
pub mod device;
pub mod engine;
pub mod error;
pub mod file;
pub mod fs;
pub mod host;
pub mod io;
pub mod metrics;
pub mod net;
pub mod pagecache;
pub mod progress;
pub mod remap;
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
