//! Arrays of drives (Linux md's RAID 0, 1, 10, 5 and 6): an array is a block device over
//! member devices, each member with its own block queue, events and counters.
//!
//! [`layout`] says where blocks live, [`plan`] turns a request into member I/O (md's choice
//! between read-modify-write and reconstruct-write included), and [`device`] carries the
//! plans out in simulated time through the engine's stripe handling.

pub mod bitmap;
pub mod config;
pub mod data;
pub mod device;
pub mod gf;
pub mod head_pool;
pub mod hwraid;
pub mod layout;
pub mod plan;
pub mod rebuild;
pub mod share;
pub mod stripe_cache;

pub use config::{ArrayConfig, EngineConfig, MdConfig, MemberFailure, MemberSpec, StreamingConfig};
pub use layout::{RaidLevel, PAGE};
pub use device::{Array, ArrayEvent};
pub use hwraid::HwRaidConfig;
