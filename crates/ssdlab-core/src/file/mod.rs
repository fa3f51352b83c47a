//! The file layer: between the job runner and the block layer, a page cache over ext3/ext4
//! file systems turns file operations into the block I/O Linux would issue — buffered reads
//! through read-ahead, buffered writes dirtying pages that the flusher writes back (ext4
//! allocating their blocks only then), fsync, file creation and deletion through the journal.
//! Jobs that work on raw devices pass straight through to the block layer.
//!
//! ```text
//! config.rs    the host's memory, kernel defaults and CPU costs; a target's file system
//!              (and its `data=` mode)
//! sets.rs      file sets: which entry is which inode, picks, claims and queue order
//! journal.rs   jbd2's running transaction, commits and checkpoints (ordered data or none)
//! layer/       FileLayer: operations and their stages (ops.rs), the flusher
//!              (writeback.rs), commits (commit.rs), a power cut (power.rs) and what
//!              data=writeback leaves exposed to one (unwritten.rs), the adapters into the
//!              stack (stack.rs)
//! ```
//!
//! The models it drives are pure data structures: [`crate::fs`] (where blocks go) and
//! [`crate::pagecache`] (what is cached and dirty, read-ahead, dirty limits); the CPUs are
//! [`crate::cpu`]'s.

mod config;
mod journal;
mod layer;
mod sets;

pub use config::{DataMode, FileCosts, FileSystemSpec, FsType, KernelEra, MemoryConfig, MountTarget};
pub use layer::{memory_estimate, FileEvent, FileLayer, FileMemory, Lower, Up};
pub use crate::report::FileReport;
pub use crate::io::{FileDone, FileIo, FileIoOp};

use crate::engine::EventQueue;

/// What the job runner hears from the file layer when a file operation ends (its raw bios'
/// ends it hears through [`crate::block::BioDone`]); a completion may wake a job.
pub trait FileUpper<E> {
    /// File operation `io` ended as `done` says. Returns whom it wakes.
    fn file_done(&mut self, io: &FileIo, done: FileDone, events: &mut EventQueue<E>) -> Option<u32>;
}
