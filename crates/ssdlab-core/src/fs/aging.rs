//! The seed's aging procedure at model level: fill the file system with files of one size,
//! delete every other one, fill with files of another size, delete every other one. Files
//! go in the root directory, written one after another by one task: each is created,
//! its blocks promised (delayed allocation) and allocated as writeback would allocate them
//! (the whole file at once, in creation order), then closed. A fill stops at the first
//! file that does not fit (no space, no inode); that file is removed.

use super::{FileSystem, FsError, Ino, Task, ROOT_INO};
use serde::Serialize;

/// One fill-and-thin round's files.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Phase {
    pub file_bytes: u64,
    /// Files written before space or inodes ran out.
    pub written: usize,
    /// Files left after every other one was deleted: (name, inode).
    pub kept: Vec<(String, Ino)>,
}

/// When blocks are allocated: at writeback, whole files in creation order (ext4's delayed
/// allocation, then `sync`); or block by block as they are written (ext3; and ext4 once
/// `ext4_nonda_switch` turns delayed allocation off, when dirty blocks pass two thirds of
/// the free ones, as they soon do when a round writes about as much as is free). Which of
/// the two the kernel does, and when, depends on writeback timing, which is the file
/// layer's to model.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Writeback {
    /// Every file's blocks in one request, in creation order (delayed allocation).
    WholeFile,
    /// One request per block, at write time.
    PerBlock,
}

/// Writes files of `file_bytes` named `{prefix}{i:07}` into the root until one does not fit.
pub fn fill(
    fs: &mut FileSystem,
    prefix: &str,
    file_bytes: u64,
    task: Task,
    wb: Writeback,
) -> Vec<(String, Ino)> {
    let bs = fs.config().block_size as u64;
    let blocks = file_bytes.div_ceil(bs);
    let mut files = vec![];
    for i in 0.. {
        let name = format!("{prefix}{i:07}");
        let Ok((ino, _)) = fs.create(ROOT_INO, name.as_bytes(), task) else {
            break;
        };
        let _ = fs.set_size(ino, file_bytes);
        let per_block = wb == Writeback::PerBlock;
        // Whole files: their blocks promised, then allocated at once (the promises end as
        // they are allocated, or with the truncate below). Block by block: a check only.
        let fits = if per_block {
            fs.has_room(blocks).is_ok()
                && (0..blocks as u32).all(|l| {
                    fs.allocate(ino, l, 1, task)
                        .is_ok_and(|ch| ch.data.len() == 1)
                })
        } else {
            fs.delay(ino, 0, blocks as u32).is_ok()
                && fs
                    .allocate(ino, 0, blocks as u32, task)
                    .is_ok_and(|ch| ch.data.iter().map(|r| r.len as u64).sum::<u64>() == blocks)
        };
        fs.release(ino);
        if !fits {
            let _ = fs.truncate(ino, 0);
            fs.unlink(ROOT_INO, name.as_bytes())
                .expect("the file just made");
            break;
        }
        files.push((name, ino));
    }
    files
}

/// Deletes files 0, 2, 4, … of `files`; returns the others.
pub fn delete_even(
    fs: &mut FileSystem,
    files: Vec<(String, Ino)>,
) -> Result<Vec<(String, Ino)>, FsError> {
    let mut kept = vec![];
    for (i, (name, ino)) in files.into_iter().enumerate() {
        if i % 2 == 0 {
            fs.unlink(ROOT_INO, name.as_bytes())?;
        } else {
            kept.push((name, ino));
        }
    }
    Ok(kept)
}

/// The whole procedure: a round per size (the seed: 4 KB, then 7 KB), each followed by a
/// sync (nothing to do in the model) and, at the end, unmount (preallocations dropped).
pub fn age(
    fs: &mut FileSystem,
    sizes: &[u64],
    task: Task,
    wb: Writeback,
) -> Result<Vec<Phase>, FsError> {
    let mut phases = vec![];
    for (k, &size) in sizes.iter().enumerate() {
        let files = fill(fs, &format!("p{k}_"), size, task, wb);
        let written = files.len();
        let kept = delete_even(fs, files)?;
        phases.push(Phase {
            file_bytes: size,
            written,
            kept,
        });
    }
    fs.unmount();
    Ok(phases)
}
