//! What an array reports beyond its members' own reports: its stripe handling, health,
//! rebuilds, a hardware controller's cache, data verification.

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::Time;

/// What the array did, beyond what its members report.
#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct ArrayReport {
    pub level: &'static str,
    pub engine: &'static str,
    pub chunk_bytes: u64,
    pub members: u32,
    /// Stripe heads handled, by how their writes were done; and in all (reads rebuilt from
    /// the other members go through stripe heads too).
    pub stripe_heads: u64,
    pub rmw_stripe_heads: u64,
    pub rcw_stripe_heads: u64,
    pub full_stripe_heads: u64,
    /// Bytes read by parity computations and reconstructions.
    pub parity_bytes: u64,
    /// Host bytes rebuilt from the other members because their member had no current data.
    pub reconstructed_bytes: u64,
    /// Discarded bytes not passed on to the members (partial RAID 5/6 stripes).
    pub discard_dropped_bytes: u64,
    /// Requests that waited for a locked stripe or for free stripe heads.
    pub stripe_waits: u64,
    /// md: stripe heads a request found whole in the stripe cache, so that it read nothing.
    pub stripe_cache_hits: u64,
    /// md: host writes handled with an earlier write of their process that they continue
    /// (their pages added to its stripe heads).
    pub joined_writes: u64,
    /// md: stripe heads added to the stripe cache because requests starved for them.
    pub stripe_cache_grown: u64,
    /// md's write-intent bitmap (0 chunk: none): bits set, updates that wrote pages, member
    /// bytes they wrote (a page to every in-sync member each), and host writes held for an
    /// update.
    pub bitmap_chunk_bytes: u64,
    pub bitmap_bits_set: u64,
    pub bitmap_updates: u64,
    pub bitmap_write_bytes: u64,
    pub bitmap_waits: u64,
    /// Busy time of the stripe-handling threads, summed, ns; and how many there are.
    pub handler_busy_ns: u64,
    pub handler_threads: u32,
    /// Members that have failed, by name.
    pub failed: Vec<String>,
    /// The rebuild onto a spare, if one started (the latest, if several did).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rebuild: Option<RebuildReport>,
    /// Rebuilds finished before the latest one, oldest first (a failure after a rebuild).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub earlier_rebuilds: Vec<RebuildReport>,
    /// A hardware controller's cache: reads served from it, host writes that waited for
    /// space, bytes destaged, bytes dirty now; and its processor's busy time.
    pub cache_read_hits: u64,
    pub cache_write_waits: u64,
    pub destaged_bytes: u64,
    pub cache_dirty_bytes: u64,
    pub controller_busy_ns: u64,
    /// A data-verified array: host bytes read and checked, reads (or write stages) that went
    /// wrong, and the first of them.
    pub verified_bytes: u64,
    pub data_errors: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub first_data_error: Option<String>,
}


#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct RebuildReport {
    /// The member being rebuilt and the one it replaces.
    pub member: String,
    pub replaces: String,
    pub started_ns: Time,
    /// When the replacement was wholly in sync (or the sample limit was reached).
    pub finished_ns: Option<Time>,
    /// Bytes of the replacement in sync, and its size (or the sample limit).
    pub done_bytes: u64,
    pub target_bytes: u64,
    pub member_bytes: u64,
    /// Bytes of the replacement one rebuild unit writes (one member write, before the
    /// member's block layer splits it).
    pub unit_bytes: u64,
    /// Times md slept for running above sync_speed_max, and waited for other I/O.
    pub overspeed_sleeps: u64,
    pub busy_waits: u64,
    /// md: times its sync thread had to wait for stripe heads and then slept a jiffy.
    pub head_wait_sleeps: u64,
    /// Passes that were interrupted by a later failure and started again with its spare.
    pub restarts: u32,
    /// The other replacements the last pass wrote alongside this one.
    pub rebuilt_with: Vec<String>,
}

impl RebuildReport {
    /// A rebuild of `member` (replacing `replaces`) starting at `now`, nothing in sync yet.
    pub fn new(member: String, replaces: String, now: Time) -> RebuildReport {
        RebuildReport { member, replaces, started_ns: now, ..RebuildReport::default() }
    }
}

