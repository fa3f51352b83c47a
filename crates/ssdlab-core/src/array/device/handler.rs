//! How an engine handles stripes and rebuilds: its stripe threads, their costs, the stripe
//! cache's size, the rebuild's units and throttle, and md's ways (submitters that block,
//! degraded reads through the stripe cache).

use crate::array::config::EngineConfig;
use crate::array::layout::PAGE;
use crate::array::plan::Plan;
use crate::array::rebuild::MdThrottle;
use crate::engine::{MultiServer, Time};

/// How an engine handles stripes and rebuilds: its threads, costs and limits.
pub(super) struct Handler {
    pub(super) threads: MultiServer,
    pub(super) stripe_head_ns: Time,
    pub(super) request_ns: Time,
    pub(super) parity_bytes_per_s: f64,
    /// Stripe heads that may be in work at once (md's stripe cache; unbounded otherwise), and
    /// the most the cache grows to when requests starve.
    pub(super) cache_size: u64,
    pub(super) cache_limit: u64,
    /// Bytes of a member in one rebuild unit (at least a row), and units in flight.
    pub(super) rebuild_unit: u64,
    pub(super) rebuild_depth: usize,
    pub(super) throttle: Option<MdThrottle>,
    /// md: the sync thread's sleep after it waited for stripe heads (0: none).
    pub(super) sync_wait_sleep_ns: Time,
    /// md: a degraded array's reads all go through the stripe cache (Linux 4.1, commit
    /// 9ffc8f7), not only those of a lost member's chunks.
    pub(super) cached_degraded_reads: bool,
    /// md: a request that must wait for stripe heads or a locked stripe blocks the process
    /// submitting it (it sleeps in `raid5_get_active_stripe`), so that process's later
    /// requests wait behind it instead of queueing for stripes themselves; and a RAID 5/6
    /// write that can take its stripes takes along the writes queued so behind it that
    /// continue it (`Array::join_writes`).
    pub(super) submitter_blocks: bool,
}

/// md's resync window: it checks its speed after every 32 pages of resync I/O (md.c).
const MD_SYNC_WINDOW: u64 = 32 * PAGE;

impl Handler {
    pub(super) fn new(engine: &EngineConfig, chunk: u64) -> Handler {
        match engine {
            EngineConfig::Md(md) => {
                // Whole rows, so that a unit's rows are its own.
                let unit = MD_SYNC_WINDOW.div_ceil(chunk).max(1) * chunk;
                Handler {
                    threads: MultiServer::new(1 + md.group_thread_cnt as usize),
                    stripe_head_ns: md.stripe_head_ns,
                    request_ns: 0,
                    parity_bytes_per_s: md.parity_bytes_per_s,
                    cache_size: md.stripe_cache_size as u64,
                    cache_limit: md.stripe_cache_max.max(md.stripe_cache_size) as u64,
                    rebuild_unit: unit,
                    // A rebuild takes stripe heads from the same cache as host writes.
                    rebuild_depth: (md.stripe_cache_size as u64 * PAGE / unit).max(1) as usize,
                    throttle: Some(MdThrottle {
                        min_bytes_per_s: md.sync_speed_min_bytes_per_s,
                        max_bytes_per_s: md.sync_speed_max_bytes_per_s,
                    }),
                    sync_wait_sleep_ns: md.sync_wait_sleep_ns,
                    cached_degraded_reads: true,
                    submitter_blocks: true,
                }
            }
            EngineConfig::Hwraid(h) => Handler {
                // The controller's parity engine; commands and data have their own servers.
                threads: MultiServer::new(1),
                stripe_head_ns: 0,
                request_ns: 0,
                parity_bytes_per_s: h.parity_bytes_per_s,
                cache_size: u64::MAX,
                cache_limit: u64::MAX,
                rebuild_unit: MD_SYNC_WINDOW.div_ceil(chunk).max(1) * chunk,
                rebuild_depth: 4,
                throttle: None,
                sync_wait_sleep_ns: 0,
                cached_degraded_reads: false,
                submitter_blocks: false,
            },
            EngineConfig::Streaming(s) => Handler {
                threads: MultiServer::new(s.cores as usize),
                stripe_head_ns: 0,
                request_ns: s.request_ns,
                parity_bytes_per_s: s.parity_bytes_per_s,
                cache_size: u64::MAX,
                cache_limit: u64::MAX,
                rebuild_unit: s.rebuild_unit_bytes.div_ceil(chunk).max(1) * chunk,
                rebuild_depth: s.rebuild_depth as usize,
                throttle: None,
                sync_wait_sleep_ns: 0,
                cached_degraded_reads: false,
                submitter_blocks: false,
            },
        }
    }

    /// Thread time to handle a plan's stripes.
    pub(super) fn cost(&self, plan: &Plan) -> Time {
        self.request_ns
            + plan.stripe_heads * self.stripe_head_ns
            + (plan.parity_bytes as f64 * 1e9 / self.parity_bytes_per_s) as Time
    }
}

