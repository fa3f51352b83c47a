//! The most memory a run's file layer will hold, known before it is built: the page cache
//! full (its records and index, and the dirty pages' entries up to the hard limit) and each
//! file system as mkfs leaves it (bitmaps, their index, per-group tables). Live files and
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
    pub page_cache_pages: u64,
    /// The cache full, with dirty pages up to the hard limit.
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
    let filesystem_bytes = file_systems
        .iter()
        .enumerate()
        .map(|(i, (spec, capacity))| {
            spec.as_ref()
                .map(|s| fs_config(s, *capacity, memory.era).map(|cfg| FileSystem::heap_estimate(&cfg)))
                .transpose()
                .map_err(|m| ConfigError::new(&format!("targets.{i}.filesystem"), m))
        })
        .collect::<Result<_, _>>()?;
    Ok(FileMemory { page_cache_pages: cache.budget_pages, page_cache_bytes: PageCache::full_bytes(&cache), filesystem_bytes })
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
        assert_eq!(m.page_cache_pages, pages);
        assert_eq!(m.page_cache_bytes, PageCache::full_bytes(&cache_config(&memory)));
        // Records and index at a full budget (26.7 bytes a page), and the dirty entries.
        assert!(m.page_cache_bytes as f64 > 26.6 * pages as f64, "{}", m.page_cache_bytes);
        assert_eq!(m.filesystem_bytes[0], None);
        assert!(m.filesystem_bytes[1].unwrap() > 0);
        let mut big = ext4;
        big.size_bytes = Some(2 << 30);
        let e = memory_estimate(&memory, &[(Some(big), 1 << 30)]).unwrap_err();
        assert!(e.to_string().contains("targets.0.filesystem") && e.to_string().contains("does not fit"), "{e}");
    }
}
