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
    /// Tasks active (running, waiting for a core, blocked for I/O) on average over the
    /// interval: what the load average settles to in a steady run, which a run shorter than a
    /// few minutes does not leave it time to reach.
    pub active: f64,
}

/// One core's shares of its time over a run, as `sar -P ALL` averages them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct CoreShare {
    pub busy: f64,
    pub iowait: f64,
    pub idle: f64,
}

/// The file layer's running totals at a time-series sample (differences of two samples give an
/// interval's): pages found in and missing from the page cache, and each job's operations.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct FileCounters {
    pub cache_hits: u64,
    pub cache_misses: u64,
    /// Per job name (its clones summed; names in the order they first appear among the
    /// run's jobs), per operation of its program: operations completed, and their latency
    /// summed, ns.
    pub ops: Vec<Vec<[u64; 2]>>,
}

/// What the file layer did, for the run's report.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct FileReport {
    pub ops: u64,
    pub failed_ops: u64,
    pub cache_hits: u64,
    pub cache_misses: u64,
    pub readahead_pages: u64,
    /// Pages of metadata read from the device because the cache did not hold them: the
    /// directory and inode-table blocks of lookups of names not yet in memory, and the
    /// mapping blocks (indirect, extent) of the data reads and writes reached.
    pub metadata_read_pages: u64,
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
    /// Blocks read before a buffered write that covers them only in part (not cached, holding
    /// data on disk), as `block_write_begin` reads them.
    pub partial_block_reads: u64,
    /// The CPUs over the whole run.
    pub cpu: CpuInterval,
    /// Each core's shares of the run (busy + iowait + idle = 1 on each).
    pub cpu_cores: Vec<CoreShare>,
    /// Per file system: its free-extent histogram at the end, as e2freefrag prints it
    /// (extent size bucket in bytes, free extents, free blocks).
    pub free_extents: Vec<Vec<(u64, u64, u64)>>,
    /// Per file system: its regular files at the end by extents, as filefrag counts them
    /// (extents, files).
    pub extents_per_file: Vec<Vec<(u64, u64)>>,
}

/// What a power cut did to one file system: where its target's losses fell (data of files,
/// metadata, the journal's log), what recovery replays, and what the page cache held.
#[derive(Clone, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct FsPowerCut {
    /// The target (device) the file system is on.
    pub target: String,
    /// Whether the target could say where its losses lie (an array whose members lost data
    /// cannot); without it only the page cache's and the journal's own figures are given.
    pub located: bool,
    /// Regular files with written (acknowledged) data lost, and those bytes.
    pub data_files: u64,
    pub data_bytes: u64,
    /// Of them, files and bytes a completed cache flush had covered (an fsync had returned).
    pub promised_files: u64,
    pub promised_bytes: u64,
    /// Lost writes to blocks freed since (nothing of value).
    pub freed_bytes: u64,
    /// Metadata blocks (inode tables, bitmaps, directories, extent or indirect blocks,
    /// superblocks) lost at home, and of them those a replay of the journal restores.
    pub metadata_blocks: u64,
    pub metadata_recovered: u64,
    /// Where the unrestored ones were: in-use inodes in lost inode-table blocks,
    /// directories with a lost block, files with a lost extent or indirect block, and
    /// bitmap or superblock copies.
    pub inodes_damaged: u64,
    pub directories_damaged: u64,
    pub mappings_damaged: u64,
    pub bitmaps_damaged: u64,
    pub super_damaged: u64,
    /// Log blocks lost; committed transactions among whose blocks they were; and the
    /// committed transactions recovery does not replay (it stops at the first broken one,
    /// so every later one goes with it), from `first_not_replayed` on, with their metadata
    /// blocks.
    pub journal_blocks: u64,
    pub transactions_broken: u64,
    pub transactions_not_replayed: u64,
    pub first_not_replayed: Option<u64>,
    pub not_replayed_blocks: u64,
    /// Metadata blocks of transactions not yet committed (their operations were never
    /// acknowledged as durable).
    pub uncommitted_blocks: u64,
    /// Files with dirty pages in the page cache, and those bytes (never written).
    pub dirty_files: u64,
    pub dirty_bytes: u64,
    /// e2fsck has something to repair: metadata lost at home that no replay restores.
    pub fsck_needed: bool,
    /// The first few inodes whose promised data was lost.
    pub promised_examples: Vec<u32>,
    /// Mounted `data=writeback`: nothing ordered file data before the metadata that maps it.
    pub data_writeback: bool,
    /// Files whose recovered metadata maps blocks their new data never reached (a commit
    /// replayed their allocation, the data's write had not completed): those blocks read
    /// back as whatever they held before, often another file's old data. Always 0 in
    /// ordered mode. With the first few such inodes.
    pub stale_files: u64,
    pub stale_bytes: u64,
    pub stale_examples: Vec<u32>,
}
