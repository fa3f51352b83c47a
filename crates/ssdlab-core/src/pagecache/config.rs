//! The page cache's parameters, each with the kernel source it comes from, and the defaults
//! of two kernel eras. `docs/page-cache.md` has the sources in full.

use crate::engine::{Time, NS_PER_MS};
use crate::error::ConfigError;

/// Bytes in a cached page (x86's PAGE_SIZE).
pub const PAGE_SIZE: u64 = 4096;

/// A dirty threshold as Linux takes it: a percentage of dirtyable memory
/// (`vm.dirty_ratio`, `vm.dirty_background_ratio`) or an amount
/// (`vm.dirty_bytes`, `vm.dirty_background_bytes`; writing one form zeroes the other, so
/// exactly one is in force).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DirtyLimit {
    Ratio(u32),
    Bytes(u64),
}

/// When the inactive list counts as too small, so that reclaim first ages pages from the
/// active list's tail onto it (vmscan's `inactive_is_low`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InactiveRule {
    /// The file lists are kept about equal: low when `inactive < active`
    /// (2.6.28's `inactive_file_is_low`, the first split-LRU kernel).
    Equal,
    /// Low when `inactive * ratio < active` with `ratio = int_sqrt(10 * GB)` of the lists'
    /// size, 1 under a gigabyte (Rik van Riel's rule, used for the file lists today).
    SqrtGb,
}

/// Which kernel's defaults.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Era {
    /// 2008: 2.6.2x, after the dirty defaults were lowered from 40/10 to 10/5 in 2007.
    Linux2008,
    /// A current kernel (the defaults have been 20/10 since 2.6.3x).
    Today,
}

#[derive(Clone, Debug, PartialEq)]
pub struct PageCacheConfig {
    /// Pages the cache may hold: what the host's RAM leaves for it (the file layer works it
    /// out). Reclaim keeps the cache at or under it.
    pub budget_pages: u64,
    /// The base of the ratio thresholds: free pages plus file pages, which in this model is
    /// the budget (`global_dirtyable_memory`). `None`: the budget.
    pub dirtyable_pages: Option<u64>,
    /// Above it the flusher starts background writeback (`vm.dirty_background_*`).
    pub dirty_background: DirtyLimit,
    /// The hard limit: writers are throttled as the dirty count nears it (`vm.dirty_*`).
    pub dirty: DirtyLimit,
    /// The flusher's periodic wake-up (`vm.dirty_writeback_centisecs`, 500); 0 disables
    /// periodic writeback.
    pub dirty_writeback_centisecs: u32,
    /// Dirty data older than this is written by the periodic pass
    /// (`vm.dirty_expire_centisecs`, 3000).
    pub dirty_expire_centisecs: u32,
    /// Pages the flusher writes from one file before moving to the next (2.6.2x's
    /// `MAX_WRITEBACK_PAGES` = 1024; today's `MIN_WRITEBACK_PAGES` = 4 MiB, the unit its
    /// bandwidth-sized chunks are rounded to).
    pub writeback_chunk_pages: u32,
    /// A new open file's largest read-ahead window (`read_ahead_kb`: 128, the
    /// `VM_MAX_READAHEAD` of 2.6.2x and `VM_READAHEAD_PAGES` = 128 KiB today).
    pub read_ahead_kb: u32,
    pub inactive_rule: InactiveRule,
    /// Context read-ahead: a read that is neither sequential nor at a marker, just after a
    /// run of cached pages, reads ahead as a stream would (`try_context_readahead`, Linux
    /// 2.6.31 on; `page_cache_sync_ra`'s `page_cache_prev_miss` test today). Not in 2008's.
    pub context_readahead: bool,
    /// Pages reclaim frees at a time (`SWAP_CLUSTER_MAX` = 32).
    pub reclaim_batch_pages: u32,
    /// Write bandwidth assumed before any writeback has been measured, pages/s
    /// (`INIT_BW`: 100 MB/s).
    pub initial_write_bw_pages: u64,
    /// The longest single throttle pause below the hard limit (`MAX_PAUSE`: 200 ms).
    pub max_pause_ns: Time,
    /// How often the write bandwidth is re-estimated (`BANDWIDTH_INTERVAL`: 200 ms).
    pub bandwidth_interval_ns: Time,
    /// The estimate's averaging window (`roundup_pow_of_two(3 * HZ)` jiffies: about 3 s;
    /// 4.096 s at HZ=1000).
    pub bandwidth_period_ns: Time,
}

impl PageCacheConfig {
    /// The defaults of a kernel era for a cache of `budget_pages`.
    pub fn for_era(era: Era, budget_pages: u64) -> PageCacheConfig {
        let (bg, hard, rule, context) = match era {
            Era::Linux2008 => (DirtyLimit::Ratio(5), DirtyLimit::Ratio(10), InactiveRule::Equal, false),
            Era::Today => (DirtyLimit::Ratio(10), DirtyLimit::Ratio(20), InactiveRule::SqrtGb, true),
        };
        PageCacheConfig {
            budget_pages,
            dirtyable_pages: None,
            dirty_background: bg,
            dirty: hard,
            dirty_writeback_centisecs: 500,
            dirty_expire_centisecs: 3000,
            writeback_chunk_pages: 1024,
            read_ahead_kb: 128,
            inactive_rule: rule,
            context_readahead: context,
            reclaim_batch_pages: 32,
            initial_write_bw_pages: (100 << 20) / PAGE_SIZE,
            max_pause_ns: 200 * NS_PER_MS,
            bandwidth_interval_ns: 200 * NS_PER_MS,
            bandwidth_period_ns: 4096 * NS_PER_MS,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |k: &str, m: &str| Err(ConfigError::new(&format!("pagecache.{k}"), m.to_string()));
        if self.budget_pages == 0 || self.budget_pages >= u32::MAX as u64 {
            return err("budget_pages", "must be at least 1 and under 2^32 - 1 pages");
        }
        if self.dirtyable_pages == Some(0) {
            return err("dirtyable_pages", "must be at least 1 page");
        }
        for (k, l) in [("dirty_background", self.dirty_background), ("dirty", self.dirty)] {
            match l {
                DirtyLimit::Ratio(r) if r > 100 => return err(&format!("{k}_ratio"), "is a percentage: 0 to 100"),
                // The kernel refuses dirty_bytes under two pages.
                DirtyLimit::Bytes(b) if k == "dirty" && b < 2 * PAGE_SIZE => {
                    return err("dirty_bytes", "must be at least two pages (8192)")
                }
                _ => {}
            }
        }
        if self.writeback_chunk_pages == 0 {
            return err("writeback_chunk_pages", "must be at least 1");
        }
        if self.reclaim_batch_pages == 0 {
            return err("reclaim_batch_pages", "must be at least 1");
        }
        if self.initial_write_bw_pages == 0 {
            return err("initial_write_bw_pages", "must be at least 1 page/s");
        }
        if self.bandwidth_interval_ns == 0 || self.bandwidth_period_ns == 0 {
            return err("bandwidth_interval_ns", "the bandwidth interval and period must be positive");
        }
        Ok(())
    }

    /// The base of the ratio thresholds, in pages.
    pub fn dirtyable(&self) -> u64 {
        self.dirtyable_pages.unwrap_or(self.budget_pages)
    }

    /// (background, hard) thresholds in pages, as `domain_dirty_limits` works them out: the
    /// bytes form rounded up to pages, else the ratio of dirtyable memory; a background
    /// threshold at or above the hard one is halved to half of it.
    pub fn dirty_thresholds(&self) -> (u64, u64) {
        let avail = self.dirtyable();
        let pages = |l: DirtyLimit| match l {
            DirtyLimit::Bytes(b) => b.div_ceil(PAGE_SIZE),
            DirtyLimit::Ratio(r) => (r as u128 * avail as u128 / 100) as u64,
        };
        let hard = pages(self.dirty);
        let mut bg = pages(self.dirty_background);
        if bg >= hard {
            bg = hard / 2;
        }
        (bg, hard)
    }
}
