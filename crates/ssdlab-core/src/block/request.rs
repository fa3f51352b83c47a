//! A device request as the block queue keeps it, and the bios merged into it: what the queue
//! and its I/O scheduler share.

use crate::engine::Time;
use crate::io::{BioId, Op};

pub(super) const NO_BIO: u32 = u32::MAX;

/// A bio merged into a request after its first: the part of one host request that travels
/// in that request. Merged bios are chained in the order they joined.
#[derive(Clone, Copy, Debug)]
pub struct ChainedBio {
    pub host: BioId,
    pub offset: u64,
    pub len: u64,
    pub(super) next: u32,
}

/// A device request: what the device is asked to do, who asked, and since when.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process (fio job clone) whose I/O this is; schedulers may queue per process.
    pub process: u32,
    /// When it entered the block layer: iostat's await counts from here.
    pub started_at: Time,
    /// The host request it was made for (its first bio, kept inline: most requests carry one).
    pub host: BioId,
    /// Bios merged in after the first, chained (`NO_BIO`: none).
    pub(super) merged: u32,
}

impl Request {
    /// A request carrying one host request's bio.
    pub fn new(op: Op, offset: u64, len: u64, process: u32, started_at: Time, host: BioId) -> Request {
        Request { op, offset, len, process, started_at, host, merged: NO_BIO }
    }

    /// Whether it carries bios of more than one host request.
    pub fn is_merged(&self) -> bool {
        self.merged != NO_BIO
    }
}
