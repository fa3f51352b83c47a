//! The ids and request types every layer shares: what a device is asked to do (`Op`,
//! [`DeviceRequest`]) and the numbers requests travel under. Nothing here knows of hosts,
//! queues, devices or arrays, so every one of them can use it.

use serde::Serialize;

/// A device request's number, as the block layer gave it (an NCQ tag, an NVMe command id);
/// unique among the device's requests in flight.
pub type Tag = u32;

/// The number of a bio, the unit the block layer takes from the layer above it (the host's
/// job runner, or an array for its members): unique among that layer's bios in flight. A
/// device request carries one or more bios; a bio rides in one or more device requests.
pub type BioId = u32;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Op {
    Read,
    Write,
    Trim,
    Flush,
}

impl Op {
    /// Index used for per-direction tables: read 0, write 1, trim 2, flush 3.
    pub fn index(self) -> usize {
        match self {
            Op::Read => 0,
            Op::Write => 1,
            Op::Trim => 2,
            Op::Flush => 3,
        }
    }
}

/// What a device is asked to do: one request of its block queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DeviceRequest {
    pub tag: Tag,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process whose I/O it is (an array passes it on to its members' schedulers).
    pub process: u32,
}
