//! A host-side write-remapping layer over one drive (seed 000's "MFT"): a bio-based target
//! that buffers writes in RAM, writes them to its drive as a log of large sequential runs,
//! and cleans the log. `config` is what it is, `map` where each block lives, `device` the
//! layer as a block device (docs/remap.md).

pub mod config;
pub mod device;
pub mod map;

pub use config::RemapConfig;
pub use device::{Remap, RemapEvent};
pub use map::LogMap;
