//! The most memory a run's file layer will hold, known before it is built: the page cache
//! holding as many pages as the host's RAM gives it or the file systems have blocks, whichever
//! is fewer (its records and index, and the dirty pages' entries up to the hard limit), and
//! each file system as mkfs leaves it (bitmaps, their index, per-group tables). Live files and
//! cached directories come on top (about 93 bytes a live file, `tests/fs_memory.rs`). The
//! Python side adds these to its estimate and refuses a run that cannot fit.

use serde::Serialize;

use super::{cache_config, fs_config};
use crate::error::ConfigError;
use crate::file::config::{FileSystemSpec, MemoryConfig};
use crate::fs::FileSystem;
use crate::pagecache::PageCache;

/// Bytes the file layer holds at most, by part.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct FileMemory {
    /// Pages the host's memory gives the cache.
    pub page_cache_budget_pages: u64,
    /// Pages it can come to hold: the budget, or the file systems' blocks if fewer.
    pub page_cache_pages: u64,
    /// The cache holding them, with dirty pages up to the hard limit.
    pub page_cache_bytes: u64,
    /// Each target's file system as made (None: the target has none).
    pub filesystem_bytes: Vec<Option<u64>>,
}

/// The memory of a file layer for `memory` over `file_systems` (each target's file system, if
/// any, and the bytes its device offers); errors as building the layer would give them.
pub fn memory_estimate(memory: &MemoryConfig, file_systems: &[(Option<FileSystemSpec>, u64)]) -> Result<FileMemory, ConfigError> {
    memory.validate()?;
    let cache = cache_config(memory);
    cache.validate()?;
    let mut filesystem_bytes = Vec::with_capacity(file_systems.len());
    let mut fs_pages = 0;
    for (i, (spec, capacity)) in file_systems.iter().enumerate() {
        let Some(spec) = spec else {
            filesystem_bytes.push(None);
            continue;
        };
        let cfg = fs_config(spec, *capacity, memory.era).map_err(|m| ConfigError::new(&format!("targets.{i}.filesystem"), m))?;
        // A cached page holds at least one block (a small file on 1 KiB blocks takes a
        // page for one block), so a file system fills at most a page a block.
        fs_pages += cfg.blocks;
        filesystem_bytes.push(Some(FileSystem::heap_estimate(&cfg)));
    }
    // Cached pages are file data, which the file systems bound (no file system: the run will
    // refuse its file jobs; the budget stands).
    let pages = if fs_pages > 0 { cache.budget_pages.min(fs_pages) } else { cache.budget_pages };
    Ok(FileMemory {
        page_cache_budget_pages: cache.budget_pages,
        page_cache_pages: pages,
        page_cache_bytes: PageCache::bytes_holding(&cache, pages),
        filesystem_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::file::config::{FsType, KernelEra};

    /// A file system as mkfs leaves it holds what the estimate says, within 1 % and 4 KiB
    /// (the root and lost+found directories, the journal's inode), for both kinds, eras and
    /// block sizes.
    #[test]
    fn the_file_system_estimate_is_what_mkfs_leaves() {
        for (fs_type, era, size, block) in [
            (FsType::Ext3, KernelEra::Y2008, 256u64 << 20, Some(1024)),
            (FsType::Ext3, KernelEra::Y2008, 64 << 30, None),
            (FsType::Ext4, KernelEra::Today, 64 << 30, None),
            (FsType::Ext4, KernelEra::Today, 1 << 40, None),
        ] {
            let mut spec = FileSystemSpec::new(fs_type);
            spec.block_size = block;
            let cfg = fs_config(&spec, size, era).unwrap();
            let estimate = FileSystem::heap_estimate(&cfg) as f64;
            let (fs, _) = FileSystem::mkfs(cfg).unwrap();
            let held = fs.heap_bytes() as f64;
            assert!((estimate - held).abs() <= 0.01 * held + 4096.0, "{fs_type:?} of {size} bytes: estimate {estimate}, held {held}");
        }
    }

    /// The run's estimate: the cache from the host's RAM, a file system per target that has
    /// one, and one line naming the target whose file system cannot be made.
    #[test]
    fn a_run_estimate_names_its_parts() {
        let memory = MemoryConfig::new(KernelEra::Today, 8 << 30, 4);
        let ext4 = FileSystemSpec::new(FsType::Ext4);
        let m = memory_estimate(&memory, &[(None, 1 << 30), (Some(ext4.clone()), 64 << 30)]).unwrap();
        let pages = ((8u64 << 30) - (256 << 20)) / 4096;
        assert_eq!((m.page_cache_budget_pages, m.page_cache_pages), (pages, pages));
        assert_eq!(m.page_cache_bytes, PageCache::bytes_holding(&cache_config(&memory), pages));
        // Records and index at a full budget (26.7 bytes a page), and the dirty entries.
        assert!(m.page_cache_bytes as f64 > 26.6 * pages as f64, "{}", m.page_cache_bytes);
        assert_eq!(m.filesystem_bytes[0], None);
        assert!(m.filesystem_bytes[1].unwrap() > 0);
        // A cache larger than the file systems holds at most what they do.
        let huge = MemoryConfig::new(KernelEra::Today, 1 << 40, 4);
        let m = memory_estimate(&huge, &[(Some(ext4.clone()), 64 << 30)]).unwrap();
        assert_eq!(m.page_cache_pages, (64 << 30) / 4096);
        // On 1 KiB blocks a page may hold a single block: a page a block.
        let mut small = FileSystemSpec::new(FsType::Ext3);
        small.block_size = Some(1024);
        let m1 = memory_estimate(&huge, &[(Some(small), 256 << 20)]).unwrap();
        assert_eq!(m1.page_cache_pages, 262_144);
        assert!(m.page_cache_budget_pages > 250_000_000);
        // Up to 22.5 bytes of slab (it grows by eighths), 10 of index (doubling) and 20 of
        // dirty entry a page: the file systems' pages, not the 2^28 of the RAM.
        assert!(m.page_cache_bytes < 53 * m.page_cache_pages, "{}", m.page_cache_bytes);
        assert!(m.page_cache_bytes * 10 < PageCache::bytes_holding(&cache_config(&huge), m.page_cache_budget_pages));
        let mut big = ext4;
        big.size_bytes = Some(2 << 30);
        let e = memory_estimate(&memory, &[(Some(big), 1 << 30)]).unwrap_err();
        assert!(e.to_string().contains("targets.0.filesystem") && e.to_string().contains("does not fit"), "{e}");
    }
}
