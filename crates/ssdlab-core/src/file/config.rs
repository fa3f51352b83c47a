//! What the file layer is told of the host (its RAM, its kernel's defaults, what file
//! operations cost its CPUs) and of a target's file system (as mkfs and mount make it).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::{Time, NS_PER_S};
use crate::error::ConfigError;

/// Which kernel's defaults: 2008's (2.6.2x: dirty ratios 10/5, ext3 with its own allocator,
/// e2fsprogs 1.41's mkfs) or today's (dirty ratios 20/10, ext4, e2fsprogs 1.47).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum KernelEra {
    #[serde(rename = "2008")]
    Y2008,
    #[default]
    Today,
}

/// ext3 or ext4.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum FsType {
    Ext3,
    #[default]
    Ext4,
}

/// How the journal treats file data (the `data=` mount option of ext3 and ext4).
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DataMode {
    /// A transaction's commit writes the data of the blocks it allocated first, so recovered
    /// metadata never maps a block whose data was not written (the default of both).
    #[default]
    Ordered,
    /// Only metadata is journaled: a commit writes no file data, and after a crash a
    /// recovered file may map blocks whose new data never reached the disk (they read as
    /// whatever they held before).
    Writeback,
}

/// CPU time of file operations on a host core, ns. The defaults are for a core of about
/// 2.4 GHz; every figure says where it comes from.
#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields, default)]
pub struct FileCosts {
    /// Entering and leaving the kernel for a read, write, open, close or fsync, and the VFS
    /// path around it (assumed: ~1 µs, the order of a null `read()` on a 2008 Xeon).
    pub syscall_ns: Time,
    /// Copying one 4 KiB page between user space and the page cache (assumed: ~1 µs, a 4 GB/s
    /// memcpy of 2008's DDR2 servers).
    pub page_copy_ns: Time,
    /// Creating a file: inode and directory entry allocation, the journal's bookkeeping
    /// (assumed: ~15 µs, in line with ext3 create rates of tens of thousands a second).
    pub create_ns: Time,
    /// Deleting a file: the directory entry, the inode and its blocks freed (assumed: ~15 µs,
    /// as create).
    pub unlink_ns: Time,
    /// A stat or an open of a cached inode (assumed: ~2 µs: a path walk through the dentry
    /// cache).
    pub lookup_ns: Time,
    /// readdir per directory entry returned (assumed: ~0.2 µs: filldir of a cached block).
    pub readdir_entry_ns: Time,
    /// Allocating one extent or block run (mballoc or ext3's bitmap search; assumed: ~2 µs).
    pub alloc_ns: Time,
}

impl Default for FileCosts {
    fn default() -> Self {
        FileCosts {
            syscall_ns: 1_000,
            page_copy_ns: 1_000,
            create_ns: 15_000,
            unlink_ns: 15_000,
            lookup_ns: 2_000,
            readdir_entry_ns: 200,
            alloc_ns: 2_000,
        }
    }
}

/// The host's memory and kernel, as the file layer uses them.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemoryConfig {
    pub era: KernelEra,
    /// RAM, bytes.
    pub ram_bytes: u64,
    /// RAM the kernel and the applications keep for themselves (not page cache), bytes.
    pub reserved_bytes: u64,
    /// CPU cores.
    pub cpus: u32,
    /// `vm.dirty_ratio` and `vm.dirty_background_ratio`, % (None: the era's defaults, 10/5
    /// in 2008, 20/10 today).
    #[serde(default)]
    pub dirty_ratio: Option<u32>,
    #[serde(default)]
    pub dirty_background_ratio: Option<u32>,
    /// `vm.dirty_expire_centisecs` (3000) and `vm.dirty_writeback_centisecs` (500).
    #[serde(default = "expire")]
    pub dirty_expire_centisecs: u32,
    #[serde(default = "writeback")]
    pub dirty_writeback_centisecs: u32,
    /// A block queue's `read_ahead_kb` (128).
    #[serde(default = "read_ahead")]
    pub read_ahead_kb: u32,
    #[serde(default)]
    pub costs: FileCosts,
}

fn expire() -> u32 {
    3000
}
fn writeback() -> u32 {
    500
}
fn read_ahead() -> u32 {
    128
}

impl MemoryConfig {
    /// `ram_bytes` of RAM on `cpus` cores, of `era`, 256 MiB kept back from the cache (assumed:
    /// the kernel's own memory and a small application).
    pub fn new(era: KernelEra, ram_bytes: u64, cpus: u32) -> MemoryConfig {
        MemoryConfig {
            era,
            ram_bytes,
            reserved_bytes: 256 << 20,
            cpus,
            dirty_ratio: None,
            dirty_background_ratio: None,
            dirty_expire_centisecs: expire(),
            dirty_writeback_centisecs: writeback(),
            read_ahead_kb: read_ahead(),
            costs: FileCosts::default(),
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |k: &str, m: String| Err(ConfigError::new(&format!("host.memory.{k}"), m));
        if self.ram_bytes <= self.reserved_bytes + (16 << 20) {
            return err("ram_bytes", format!("{} bytes leave no page cache beside the {} reserved", self.ram_bytes, self.reserved_bytes));
        }
        if self.cpus == 0 {
            return err("cpus", "a host needs at least one CPU".into());
        }
        for (k, v) in [("dirty_ratio", self.dirty_ratio), ("dirty_background_ratio", self.dirty_background_ratio)] {
            if v.is_some_and(|r| r > 100) {
                return err(k, format!("{}: a percentage, 0 to 100", v.unwrap_or(0)));
            }
        }
        Ok(())
    }

    /// Pages the page cache may hold.
    pub fn cache_pages(&self) -> u64 {
        (self.ram_bytes - self.reserved_bytes) / 4096
    }
}

/// A device the file layer may mount a file system on, as the run describes it.
#[derive(Clone, Debug)]
pub struct MountTarget {
    /// The file system made on it; None: nothing mounted there.
    pub filesystem: Option<FileSystemSpec>,
    pub capacity: u64,
    /// The queue's `read_ahead_kb` as set; None: the kernel's default for the device.
    pub read_ahead_kb: Option<u32>,
    /// The device's optimal I/O size (`io_opt`, bytes; 0: none).
    pub optimal_io_bytes: u64,
    /// The largest bio its queue takes whole: bio_split_to_limits cuts page-cache bios at
    /// `max_sectors_kb` and at `max_segments` pages.
    pub max_bio_bytes: u64,
}

impl MountTarget {
    /// The read-ahead (KiB) a file on this device gets with `default_kb` as the host's
    /// default: the queue's own setting, or the default raised to twice the device's optimal
    /// I/O size, as Linux sets an array's (`blk_apply_bdi_limits` in block/blk-settings.c of
    /// 6.x: `ra_pages = max(io_opt * 2 / PAGE_SIZE, VM_READAHEAD_PAGES)`; md's `raid0_run`
    /// and raid5's `run` of 2.6.2x raised `ra_pages` to twice the stripe likewise).
    pub fn read_ahead_kb(&self, default_kb: u32) -> u32 {
        self.read_ahead_kb.unwrap_or_else(|| default_kb.max(u32::try_from(2 * self.optimal_io_bytes / 1024).unwrap_or(u32::MAX)))
    }
}

/// A target's file system: what mkfs makes of it and how it is mounted.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileSystemSpec {
    #[serde(rename = "type")]
    pub fs_type: FsType,
    /// Whose mke2fs and kernel (None: the host's era).
    #[serde(default)]
    pub era: Option<KernelEra>,
    /// mkfs's `-b`, `-N`, `-i`, `-I`, `-J size=` (in blocks), `-E lazy_itable_init=`; None:
    /// what mke2fs picks.
    #[serde(default)]
    pub block_size: Option<u32>,
    #[serde(default)]
    pub inode_count: Option<u64>,
    #[serde(default)]
    pub inode_ratio: Option<u64>,
    #[serde(default)]
    pub inode_size: Option<u32>,
    #[serde(default)]
    pub journal_blocks: Option<u32>,
    #[serde(default)]
    pub lazy_itable_init: Option<bool>,
    /// The journal's commit interval (`commit=`, 5 s).
    #[serde(default = "commit_interval")]
    pub commit_interval_ns: Time,
    /// Write barriers (`barrier=1`: a cache flush before each commit block and one after it).
    /// None: the kernel's default — on for ext4, and for ext3 since Linux 3.1 (commit
    /// 00eacd6, "ext3: make ext3 mount default to barrier=1"); off for ext3 before (2008).
    #[serde(default)]
    pub barriers: Option<bool>,
    /// `data=`: ordered (the default) or writeback.
    #[serde(default)]
    pub data_mode: DataMode,
    /// The file system's size (a partition at the start of the device); None: the whole
    /// device.
    #[serde(default)]
    pub size_bytes: Option<u64>,
}

fn commit_interval() -> Time {
    5 * NS_PER_S
}

impl FileSystemSpec {
    pub fn new(fs_type: FsType) -> FileSystemSpec {
        FileSystemSpec {
            fs_type,
            era: None,
            block_size: None,
            inode_count: None,
            inode_ratio: None,
            inode_size: None,
            journal_blocks: None,
            lazy_itable_init: None,
            commit_interval_ns: commit_interval(),
            barriers: None,
            data_mode: DataMode::Ordered,
            size_bytes: None,
        }
    }

    /// Whether commits flush the device's cache, with the kernel of `era` when not said.
    pub fn barriers_in(&self, era: KernelEra) -> bool {
        self.barriers.unwrap_or(!(self.fs_type == FsType::Ext3 && era == KernelEra::Y2008))
    }

    pub fn validate(&self, key: &str) -> Result<(), ConfigError> {
        if self.block_size.is_some_and(|b| !matches!(b, 1024 | 2048 | 4096)) {
            return Err(ConfigError::new(&format!("{key}.block_size"), "1024, 2048 or 4096 expected".into()));
        }
        if self.size_bytes == Some(0) {
            return Err(ConfigError::new(&format!("{key}.size_bytes"), "must be positive".into()));
        }
        if self.commit_interval_ns == 0 {
            return Err(ConfigError::new(&format!("{key}.commit_interval_ns"), "must be positive".into()));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(read_ahead_kb: Option<u32>, optimal_io_bytes: u64) -> MountTarget {
        MountTarget { filesystem: None, capacity: 1 << 30, read_ahead_kb, optimal_io_bytes, max_bio_bytes: 512 * 1024 }
    }

    #[test]
    fn read_ahead_is_twice_the_optimal_io_unless_the_queue_says() {
        assert_eq!(target(None, 0).read_ahead_kb(128), 128);
        assert_eq!(target(None, 256 << 10).read_ahead_kb(128), 512);
        assert_eq!(target(None, 32 << 10).read_ahead_kb(128), 128); // never below the default
        assert_eq!(target(Some(16), 256 << 10).read_ahead_kb(128), 16);
        assert_eq!(target(Some(0), 0).read_ahead_kb(128), 0);
    }
}
