//! The blocks that map a file's data, read before the data when the cache lacks them.
//!
//! A read (buffered, read-ahead, sendfile, O_DIRECT) and an O_DIRECT write find their blocks
//! through the file's map: ext3's indirect blocks, which `ext3_get_branch` reads level by
//! level with `sb_bread` (and ext4's driver does the same for block-mapped files,
//! `ext4_get_branch`), and ext4's extent index and leaf blocks (`ext4_find_extent` →
//! `read_extent_tree_block`). A level missing from the buffer cache is read synchronously and
//! the next level only after it, and the data's bios go down once the map is known; the
//! caller waits for all of it (iowait). Mapping blocks are pages of the device's own mapping,
//! as the lookup's metadata is (`META_INO`); blocks a change wrote are held there, and a set
//! laid out just before the run (fio's) has its mapping blocks cached from the start.
//!
//! A buffered write reads the mapping blocks of its range too, before the blocks it covers
//! in part (`write_begin` → `get_block`: ext3's allocation walks the chain it extends, ext4's
//! delayed allocation looks the range up).
//!
//! Not modelled: ext4's extent status cache (a mapping looked up once stays with the inode
//! while the inode is in memory, after its leaf's page has gone); the flusher's mapping reads
//! (`writepage`'s `get_block` for a page whose mapping blocks were evicted meanwhile).

use super::*;

/// An operation waiting for blocks that map its data, and what it does once they are read.
pub(super) struct MapWait {
    /// Each path still to read, deepest level first (the next to read is last).
    paths: Vec<Vec<u64>>,
    then: Mapped,
}

pub(super) enum Mapped {
    /// A buffered read: its page runs (`reading`'s number and their blocks), sent once mapped;
    /// then the read waits for its pages `[first, last)` (`blocked_at`: where reclaim stopped it).
    Read { runs: Vec<(u32, Vec<(u64, u64)>)>, first: u64, last: u64, blocked_at: Option<u64> },
    /// O_DIRECT: its block runs, read or written once mapped.
    Direct { op: Op, runs: Vec<(u64, u64)> },
    /// A buffered write: it goes on (`write_begin`'s `get_block` has the blocks it maps or
    /// allocates under).
    Write,
}

impl FileLayer {
    /// Adds to `out` the mapping paths of logical blocks `[l0, l1)` of `ino` on mount `m`,
    /// each deepest level first, a path shared by consecutive blocks once.
    pub(super) fn map_paths(&self, m: usize, ino: Ino, l0: u64, l1: u64, out: &mut Vec<Vec<u64>>) {
        let Some(fs) = self.mounts[m].as_ref().and_then(|mnt| mnt.fs.as_ref()) else { return };
        let mut l = l0;
        while l < l1 {
            let (mut path, next) = fs.mapping_path(ino, l as u32);
            if !path.is_empty() {
                path.reverse();
                if out.last() != Some(&path) {
                    out.push(path);
                }
            }
            l = (next as u64).max(l + 1);
        }
    }

    /// Operation `slot` needs `paths` in memory before it goes on as `then`: what the cache
    /// lacks is read and the operation waits, level by level, or it goes on at once.
    pub(super) fn map_then<D, E, U>(&mut self, slot: u32, paths: Vec<Vec<u64>>, then: Mapped, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let mut w = MapWait { paths, then };
        if self.map_round(slot, &mut w.paths, block, events) > 0 {
            self.map_waits.insert(slot, w);
            return;
        }
        self.go_mapped(slot, w.then, block, events, host);
    }

    /// Operation `slot` has the level it waited for: the next level, or what it does once
    /// mapped.
    pub(super) fn mapped<D, E, U>(&mut self, slot: u32, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let mut w = self.map_waits.remove(&slot).expect("an operation waiting for its map");
        if self.map_round(slot, &mut w.paths, block, events) > 0 {
            self.map_waits.insert(slot, w);
            return;
        }
        self.ops[slot as usize].stage = Stage::Cpu;
        self.io_waited(slot, events.now());
        self.go_mapped(slot, w.then, block, events, host);
    }

    /// Reads, or waits for, the next level of each path not in memory; levels found in the
    /// cache are passed. Operation `slot` then waits (stage `Map`) for what it returns: 0
    /// once every path is mapped.
    fn map_round<D, E>(&mut self, slot: u32, paths: &mut Vec<Vec<u64>>, block: &mut BlockLayer<D>, events: &mut EventQueue<E>) -> u32
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
    {
        if paths.is_empty() {
            return 0;
        }
        let o = self.ops[slot as usize];
        let per = PAGE / self.mounts[o.mount].as_ref().expect("a mounted file system").block_size;
        let mut pending = 0;
        for path in paths.iter_mut() {
            while let Some(b) = path.pop() {
                let waits = self.read_metadata(slot, o.mount, b / per..b / per + 1, block, events);
                if waits > 0 {
                    // Read (or being read by another): the next level once it is in.
                    pending += waits;
                    break;
                }
            }
        }
        paths.retain(|p| !p.is_empty());
        if pending > 0 {
            self.await_bios(slot, Stage::Map, pending, events.now());
        }
        pending
    }

    /// Operation `slot`'s range is mapped: its bios go down (a buffered write goes on).
    fn go_mapped<D, E, U>(&mut self, slot: u32, then: Mapped, block: &mut BlockLayer<D>, events: &mut EventQueue<E>, host: &mut U)
    where
        D: BlockDevice,
        E: From<BlockEvent> + From<DeviceEvent<D::Event>> + From<FileEvent> + Copy,
        U: FileUpper<E> + for<'a> Upper<Lower<'a, D>, E>,
    {
        let o = self.ops[slot as usize];
        match then {
            Mapped::Read { runs, first, last, blocked_at } => {
                for (id, blocks) in runs {
                    let n = self.send_blocks(o.mount, Op::Read, &blocks, Purpose::Read(id), o.io.process, block, events);
                    self.reading.sent(id, n);
                }
                self.read_wait(slot, first, last, blocked_at, block, events, host);
            }
            Mapped::Direct { op, runs } => {
                let n = self.send_blocks(o.mount, op, &runs, Purpose::Op(slot), o.io.process, block, events);
                if n == 0 {
                    return self.complete(slot, events, host);
                }
                self.await_bios(slot, Stage::Io, n, events.now());
            }
            Mapped::Write => self.write(slot, block, events, host),
        }
    }
}
