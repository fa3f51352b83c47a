//! What the file layer and the host's CPUs report of a run that worked on files.

use schemars::JsonSchema;
use serde::Serialize;

use crate::engine::Time;

/// What the CPUs did over one interval, as `sar -u` and `/proc/loadavg` say it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct CpuInterval {
    pub start_ns: Time,
    pub end_ns: Time,
    /// Shares of the interval's core-time: running bursts, idle with I/O waiting, idle.
    pub busy: f64,
    pub iowait: f64,
    pub idle: f64,
    /// The load averages (1, 5, 15 minutes) at the interval's end.
    pub load: [f64; 3],
}

/// What the file layer did, for the run's report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct FileReport {
    pub ops: u64,
    pub failed_ops: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub readahead_pages: u64,
    /// Pages that became dirty; of them, written back, dropped dirty by a delete or a
    /// truncate (never written), and still dirty when the jobs ended (the run ends with them,
    /// as the jobs' time does not include a later sync).
    pub dirtied_pages: u64,
    pub written_back_pages: u64,
    pub dropped_dirty_pages: u64,
    pub dirty_pages_at_end: u64,
    pub evicted_pages: u64,
    pub throttled_ns: u64,
    pub commits: u64,
    pub journal_blocks: u64,
    pub checkpoint_blocks: u64,
    pub data_bios: u64,
    pub metadata_bios: u64,
    /// Bytes a timed mkfs wrote (inode tables, bitmaps, descriptors, journal, directories).
    pub mkfs_bytes: u64,
    /// Buffered writes on ext4 that allocated their blocks at once, free space being short
    /// for delayed allocation (`ext4_nonda_switch`).
    pub nonda_writes: u64,
    /// The CPUs over the whole run.
    pub cpu: CpuInterval,
    /// Per file system: its free-extent histogram at the end, as e2freefrag prints it
    /// (extent size bucket in bytes, free extents, free blocks).
    pub free_extents: Vec<Vec<(u64, u64, u64)>>,
    /// Per file system: its regular files at the end by extents, as filefrag counts them
    /// (extents, files).
    pub extents_per_file: Vec<Vec<(u64, u64)>>,
}
