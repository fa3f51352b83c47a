//! The host's block layer, one queue per device, as Linux's blk-mq keeps one per disk.
//!
//! A host request (a *bio*: one I/O of one job) enters its device's queue and becomes part of
//! a device *request*; requests wait in the device's I/O scheduler, pass the device's
//! queue-depth gate (NCQ's 32 tags, an NVMe queue's depth) and are counted in the device's
//! own /proc/diskstats counters. Host tags and device tags are separate numbers: a request can
//! carry several merged bios, and a bio can be split over several requests, each finishing
//! when all of its parts have.

mod dispatch;
pub mod iosched;
mod layer;
mod queue;
mod request;

pub use iosched::{AnticipatoryTunables, BfqTunables, CfqTunables, DeadlineTunables, IoScheduler, KyberTunables, NoneScheduler, SchedCtx, Scheduler, SchedulerConfig};
pub use dispatch::{DispatchCtx, QueuedDevice};
pub use layer::{Bio, BioDone, BlockEvent, BlockLayer, DevCtx, DeviceEvent, Submit, TargetQueue, Upper};
pub use queue::{BlockQueue, QueueBio, QueueLimits};
pub use request::{ChainedBio, Request};
