//! Block allocation: one model, two parameter sets.
//!
//! * **mballoc** (`fs/ext4/mballoc.c`, today's kernel): a data request first uses a
//!   preallocation: the inode's (a range of the file's logical blocks reserved ahead), or,
//!   for files of at most `mb_stream_req` blocks, the locality group's of the writing CPU
//!   (`mb_group_prealloc` blocks that small files of that CPU are carved from one after
//!   another). Failing that the request is normalised (a group request to
//!   `mb_group_prealloc`; a file's to the size class `ext4_mb_normalize_request` picks) and
//!   the regular allocator looks for it: the goal when the request may merge with its left
//!   neighbour (`EXT4_MB_HINT_TRY_GOAL`), then groups from the goal's, by criteria of
//!   falling strictness: an aligned free power-of-two chunk (CR_POWER2_ALIGNED), groups
//!   whose average free fragment fits the request (CR_GOAL_LEN_FAST), the same with the
//!   request halved up to three times (CR_BEST_AVAIL_LEN), groups with enough free blocks
//!   (CR_GOAL_LEN_SLOW), any free block (CR_ANY_FREE). In a group the free extents are
//!   measured from its first block (`ext4_mb_complex_scan_group`): an exact fit is taken at
//!   once, else the smallest fitting one after `mb_min_to_scan` extents; after
//!   `mb_max_to_scan` extents in all the best so far is taken, even if short. More found
//!   than asked becomes a preallocation; less is a partial allocation (the caller asks
//!   again for the rest).
//!   Simplified: groups are tried in order from the goal's (the kernel keeps per-order
//!   lists and, since 6.16, xarrays scanned from the goal: the same order for groups that
//!   qualify); the power-of-two pass takes the first aligned chunk of the group rather
//!   than the smallest buddy order holding one; extents are whole free runs.
//! * **ext3** (`fs/ext3/balloc.c`, 2008): no preallocation in memory but a per-file
//!   reservation window (8 blocks, doubled when more than half of the last one was used, at
//!   most 1027) that other files' windows avoid; a block is the first free at or after the
//!   goal inside the window; the window moves to the first free block at or after the goal
//!   where a window of its size fits between the others. Without a window (directories)
//!   the first free block at or after the goal.

use super::inode::{Extent, Ino};
use super::layout::FsConfig;
use super::space::Space;
use rustc_hash::FxHashMap;
use std::collections::BTreeMap;

/// The locality group preallocation of one CPU: the unused tail `[pstart, pstart+free)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct GroupPa {
    pstart: u64,
    free: u32,
}

/// An inode preallocation: logical `[lstart, lstart+len)` maps to `[pstart, pstart+len)`;
/// blocks of it not yet used on disk are held.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct InodePa {
    lstart: u32,
    pstart: u64,
    len: u32,
    free: u32,
}

/// ext3's reservation state of a file (`ext3_block_alloc_info`).
#[derive(Clone, Copy, Debug, Default)]
struct Rsv {
    /// The window `[start, end]`, or none (`end < start`).
    start: u64,
    end: u64,
    goal_size: u32,
    alloc_hit: u32,
}

/// One request for data blocks, as `ext4_ext_map_blocks` and `ext4_mb_new_blocks` see it.
#[derive(Clone, Copy, Debug)]
pub struct DataReq {
    pub ino: Ino,
    pub logical: u32,
    pub len: u32,
    pub goal: u64,
    /// `i_size` in blocks.
    pub isize_blocks: u32,
    /// The mapped runs left and right of `logical` (`ar->lleft/pleft`, `lright/pright`).
    pub left: Option<Extent>,
    pub right: Option<Extent>,
    pub cpu: u32,
    /// The file is open for writing (inode preallocation is pointless for closed files).
    pub open: bool,
}

/// The allocators' state: preallocations and reservation windows.
#[derive(Clone, Debug, Default)]
pub struct Allocator {
    lgs: FxHashMap<u32, Vec<GroupPa>>,
    inode_pas: FxHashMap<Ino, Vec<InodePa>>,
    /// Where the last stream (large-file) allocation ended (`s_mb_last_group`).
    last_stream_group: u32,
    rsv: FxHashMap<Ino, Rsv>,
    /// Windows by start: end and owner.
    windows: BTreeMap<u64, (u64, Ino)>,
}

/// Which groups a pass of the regular allocator scans.
#[derive(Clone, Copy, Debug)]
enum Filter {
    /// Average free fragment at least the request.
    Average,
    /// At least the request free.
    Enough,
    /// Any free block.
    Any,
}

/// The free extents measured during one search, and the best of them.
struct Search {
    found: u32,
    best: Option<(u64, u32)>,
    done: Option<(u64, u32)>,
    broke: bool,
}

impl Allocator {
    // ---------------------------------------------------------------- mballoc

    /// Allocates the first blocks of `r`: one physical run of at most `r.len` blocks, or
    /// none if the file system is full.
    pub fn mb_data(
        &mut self,
        cfg: &FsConfig,
        space: &mut Space,
        r: &DataReq,
    ) -> Option<(u64, u32)> {
        self.mb_data_once(cfg, space, r).or_else(|| {
            // Out of space: give back every preallocation and try again
            // (`ext4_mb_discard_preallocations_should_retry`).
            (self.held_blocks() > 0).then(|| self.discard_all(space))?;
            self.mb_data_once(cfg, space, r)
        })
    }

    fn mb_data_once(
        &mut self,
        cfg: &FsConfig,
        space: &mut Space,
        r: &DataReq,
    ) -> Option<(u64, u32)> {
        let p = &cfg.mballoc;
        // Inode preallocation covering the block.
        if let Some(pas) = self.inode_pas.get_mut(&r.ino) {
            if let Some(i) = pas
                .iter()
                .position(|pa| pa.lstart <= r.logical && r.logical < pa.lstart + pa.len)
            {
                let pa = &mut pas[i];
                let phys = pa.pstart + (r.logical - pa.lstart) as u64;
                let n = r.len.min(pa.lstart + pa.len - r.logical);
                // Only the held, unused part is usable (a file rewritten after a truncate).
                let n = (0..n)
                    .take_while(|&k| {
                        space.is_busy(phys + k as u64) && !space.is_disk_used(phys + k as u64)
                    })
                    .count() as u32;
                if n > 0 {
                    space.use_held(phys, n as u64);
                    pa.free -= n;
                    if pa.free == 0 {
                        pas.remove(i);
                    }
                    return Some((phys, n));
                }
            }
        }
        // ext4_mb_group_or_file: small files share the CPU's locality group.
        let size = r.logical.saturating_add(r.len).max(r.isize_blocks);
        let group_pa = p.group_prealloc > 0 && size <= p.stream_req;
        let inode_pa = size != r.isize_blocks || r.open;
        if group_pa {
            if let Some(x) = self.use_group_pa(space, r) {
                return Some(x);
            }
            let found = self.regular(cfg, space, r.goal, p.group_prealloc, r.len, false, false)?;
            if found.1 > r.len {
                space.hold(found.0, found.1 as u64);
                space.use_held(found.0, r.len as u64);
                let pa = GroupPa {
                    pstart: found.0 + r.len as u64,
                    free: found.1 - r.len,
                };
                self.add_group_pa(cfg, space, r.cpu, pa);
                return Some((found.0, r.len));
            }
            space.take(found.0, found.1 as u64);
            return Some(found);
        }
        if !inode_pa {
            // EXT4_MB_HINT_NOPREALLOC: the request as it is.
            let try_goal = r.left.is_some_and(|l| l.logical_end() == r.logical);
            let found = self.regular(cfg, space, r.goal, r.len, r.len, try_goal, true)?;
            space.take(found.0, found.1 as u64);
            return Some(found);
        }
        // A stream request: normalise, allocate, keep the rest as the inode's preallocation.
        let (start, len, goal, try_goal) = self.normalize(cfg, r);
        let found = self.regular(cfg, space, goal, len, r.len, try_goal, true)?;
        if found.1 <= r.len {
            space.take(found.0, found.1 as u64);
            return Some(found);
        }
        // The preallocation covers the request: shift its logical start if it came short.
        let mut lstart = start;
        if r.logical + r.len > lstart + found.1 {
            lstart = r.logical + r.len - found.1;
        }
        lstart = lstart.min(r.logical);
        space.hold(found.0, found.1 as u64);
        let phys = found.0 + (r.logical - lstart) as u64;
        space.use_held(phys, r.len as u64);
        self.inode_pas.entry(r.ino).or_default().push(InodePa {
            lstart,
            pstart: found.0,
            len: found.1,
            free: found.1 - r.len,
        });
        Some((phys, r.len))
    }

    /// Blocks for metadata or a directory: no preallocation, no normalisation; the goal's
    /// group first. One run of at most `len`.
    pub fn mb_meta(
        &mut self,
        cfg: &FsConfig,
        space: &mut Space,
        goal: u64,
        len: u32,
    ) -> Option<(u64, u32)> {
        let found = match self.regular(cfg, space, goal, len, len, false, false) {
            Some(f) => f,
            None if self.held_blocks() > 0 => {
                self.discard_all(space);
                self.regular(cfg, space, goal, len, len, false, false)?
            }
            None => return None,
        };
        space.take(found.0, found.1 as u64);
        Some(found)
    }

    /// `ext4_mb_normalize_request` for a stream request: logical start and length of the
    /// range to preallocate, the physical goal and whether to try it exactly.
    fn normalize(&self, cfg: &FsConfig, r: &DataReq) -> (u32, u32, u64, bool) {
        let bs = cfg.block_size as u64;
        let bits = bs.trailing_zeros();
        let size_bytes = ((r.logical + r.len) as u64 * bs).max(r.isize_blocks as u64 * bs);
        let max = 2u64 << bits;
        let check = |req: u64, size: u64, chunk: u64| req <= size || max <= chunk;
        const K: u64 = 1024;
        let (mut start_b, size_b): (u64, u64) = match size_bytes {
            s if s <= 16 * K => (0, 16 * K),
            s if s <= 32 * K => (0, 32 * K),
            s if s <= 64 * K => (0, 64 * K),
            s if s <= 128 * K => (0, 128 * K),
            s if s <= 256 * K => (0, 256 * K),
            s if s <= 512 * K => (0, 512 * K),
            s if s <= 1024 * K => (0, 1024 * K),
            s if check(s, 4096 * K, 2 * K) => (((r.logical as u64 * bs) >> 21) << 21, 2048 * K),
            s if check(s, 8192 * K, 4 * K) => (((r.logical as u64 * bs) >> 22) << 22, 4096 * K),
            _ if check(r.len as u64 * bs, 8192 * K, 8 * K) => {
                (((r.logical as u64 * bs) >> 23) << 23, 8192 * K)
            }
            _ => (r.logical as u64 * bs, r.len as u64 * bs),
        };
        let mut start = start_b / bs;
        let mut size = size_b / bs;
        // Don't cover blocks already mapped on either side.
        if let Some(l) = r.left {
            let lleft = l.logical_end() as u64 - 1;
            if start <= lleft {
                size = size.saturating_sub(lleft + 1 - start);
                start = lleft + 1;
            }
        }
        if let Some(rt) = r.right {
            let lright = rt.logical as u64;
            if start + size > lright {
                size = lright.saturating_sub(start);
            }
        }
        size = size.min(cfg.blocks_per_group);
        // Nor other preallocations of the inode.
        let mut end = start + size;
        if let Some(pas) = self.inode_pas.get(&r.ino) {
            for pa in pas {
                let (ps, pe) = (pa.lstart as u64, (pa.lstart + pa.len) as u64);
                if pe <= r.logical as u64 {
                    start = start.max(pe);
                } else if ps > r.logical as u64 {
                    end = end.min(ps);
                }
            }
        }
        // The request itself is always covered.
        start = start.min(r.logical as u64);
        end = end.max((r.logical + r.len) as u64);
        start_b = start;
        let size = (end - start_b) as u32;
        let mut goal = r.goal;
        let mut try_goal = false;
        if let Some(rt) = r.right {
            if rt.logical as u64 == end && rt.phys >= size as u64 {
                goal = rt.phys - size as u64;
                try_goal = true;
            }
        }
        if let Some(l) = r.left {
            if l.logical_end() as u64 == start_b {
                goal = l.phys_end();
                try_goal = true;
            }
        }
        // The goal of the normalised range: where its start would be if the request's
        // block lands on the original goal.
        if !try_goal {
            goal = goal.saturating_sub(r.logical as u64 - start_b);
        }
        (start_b as u32, size, goal, try_goal)
    }

    fn use_group_pa(&mut self, space: &mut Space, r: &DataReq) -> Option<(u64, u32)> {
        let list = self.lgs.get_mut(&r.cpu)?;
        // The preallocation with room nearest the goal (`ext4_mb_check_group_pa`).
        let i = list
            .iter()
            .enumerate()
            .filter(|(_, pa)| pa.free >= r.len)
            .min_by_key(|(_, pa)| pa.pstart.abs_diff(r.goal))
            .map(|(i, _)| i)?;
        let pa = &mut list[i];
        let phys = pa.pstart;
        space.use_held(phys, r.len as u64);
        pa.pstart += r.len as u64;
        pa.free -= r.len;
        if pa.free == 0 {
            list.remove(i);
        }
        Some((phys, r.len))
    }

    /// Files a group preallocation in the CPU's lists; a list of one size order longer than
    /// `lg_list_max` is trimmed to `lg_list_keep`, the oldest discarded.
    fn add_group_pa(&mut self, cfg: &FsConfig, space: &mut Space, cpu: u32, pa: GroupPa) {
        let p = &cfg.mballoc;
        let list = self.lgs.entry(cpu).or_default();
        let order = |f: u32| (31 - f.leading_zeros()).min(9);
        let o = order(pa.free);
        list.push(pa);
        let same: Vec<usize> = list
            .iter()
            .enumerate()
            .filter(|(_, x)| order(x.free) == o)
            .map(|(i, _)| i)
            .collect();
        if same.len() as u32 > p.lg_list_max {
            let drop = same.len() - p.lg_list_keep as usize;
            let gone: Vec<GroupPa> = same[..drop].iter().map(|&i| list[i]).collect();
            list.retain(|x| !gone.contains(x));
            for g in gone {
                space.unhold(g.pstart, g.free as u64);
            }
        }
    }

    /// Gives back an inode's preallocations and ext3 window (the file was closed by its last
    /// writer, truncated or deleted).
    pub fn discard_inode(&mut self, space: &mut Space, ino: Ino) {
        if let Some(pas) = self.inode_pas.remove(&ino) {
            for pa in pas {
                let end = pa.pstart + pa.len as u64;
                let mut b = pa.pstart;
                // Still held: busy but not used on disk (blocks the file used and then
                // freed, by a truncate, are free already).
                let held = |space: &Space, x: u64| space.is_busy(x) && !space.is_disk_used(x);
                while b < end {
                    if !held(space, b) {
                        b += 1;
                        continue;
                    }
                    let mut e = b;
                    while e < end && held(space, e) {
                        e += 1;
                    }
                    space.unhold(b, e - b);
                    b = e;
                }
            }
        }
        if let Some(r) = self.rsv.get_mut(&ino) {
            if r.end >= r.start {
                self.windows.remove(&r.start);
            }
            r.start = 1;
            r.end = 0;
        }
    }

    /// Forgets everything about a deleted inode.
    pub fn forget(&mut self, space: &mut Space, ino: Ino) {
        self.discard_inode(space, ino);
        self.rsv.remove(&ino);
    }

    /// Gives back every preallocation (unmount): what stays on disk is what files use.
    pub fn discard_all(&mut self, space: &mut Space) {
        let inos: Vec<Ino> = self
            .inode_pas
            .keys()
            .copied()
            .chain(self.rsv.keys().copied())
            .collect();
        for ino in inos {
            self.discard_inode(space, ino);
        }
        for (_, list) in self.lgs.drain() {
            for pa in list {
                space.unhold(pa.pstart, pa.free as u64);
            }
        }
    }

    /// Blocks held by preallocations (free on disk, not available to others).
    pub fn held_blocks(&self) -> u64 {
        let g: u64 = self.lgs.values().flatten().map(|p| p.free as u64).sum();
        let i: u64 = self
            .inode_pas
            .values()
            .flatten()
            .map(|p| p.free as u64)
            .sum();
        g + i
    }

    /// `ext4_mb_regular_allocator`: a run for `len` blocks (`min` is the original request,
    /// the floor of CR_BEST_AVAIL_LEN's trimming). The run is found, not taken.
    fn regular(
        &mut self,
        cfg: &FsConfig,
        space: &Space,
        goal: u64,
        len: u32,
        min: u32,
        try_goal: bool,
        stream: bool,
    ) -> Option<(u64, u32)> {
        let p = &cfg.mballoc;
        let goal = goal.clamp(cfg.first_data_block, cfg.blocks - 1);
        let ngroups = cfg.groups;
        let len = len.min(cfg.blocks_per_group as u32).max(1);
        if try_goal && !space.is_busy(goal) {
            let (_, gend) = space.group_range(space.group_of(goal));
            let end = space.run_end(goal, gend);
            if end - goal >= len as u64 {
                return Some((goal, len));
            }
        }
        let mut first_group = space.group_of(goal);
        if stream {
            first_group = self.last_stream_group.min(ngroups - 1);
        }
        let mut s = Search {
            found: 0,
            best: None,
            done: None,
            broke: false,
        };
        let order = |l: u32| 32 - l.leading_zeros(); // fls
                                                     // CR_POWER2_ALIGNED.
        if order(len) >= p.order2_reqs && len.is_power_of_two() {
            for i in 0..ngroups {
                let g = (first_group + i) % ngroups;
                if space.group_free(g).free < len {
                    continue;
                }
                if let Some(b) = aligned_chunk(space, g, len) {
                    return self.finish(stream, space, Some((b, len)));
                }
            }
        }
        // CR_GOAL_LEN_FAST: groups whose average free fragment is at least the request.
        let mut passes = vec![(len, Filter::Average)];
        // CR_BEST_AVAIL_LEN: a normalised request trimmed by halves, not below the original.
        if len > min {
            let mut l = len / 2;
            let floor = (len >> p.best_avail_trim_order).max(min).max(1);
            while l >= floor {
                passes.push((l, Filter::Average));
                l /= 2;
            }
        }
        // CR_GOAL_LEN_SLOW: groups with enough free blocks; CR_ANY_FREE: any free block.
        passes.push((len, Filter::Enough));
        passes.push((len, Filter::Any));
        'passes: for (want, filter) in passes {
            for i in 0..ngroups {
                let g = (first_group + i) % ngroups;
                let gf = space.group_free(g);
                let ok = match filter {
                    Filter::Average => gf.free >= want && gf.free / gf.fragments.max(1) >= want,
                    Filter::Enough => gf.free >= want,
                    Filter::Any => gf.free > 0,
                };
                if !ok {
                    continue;
                }
                scan_group(space, g, want, p.min_to_scan, p.max_to_scan, &mut s);
                if s.done.is_some() || s.broke {
                    break 'passes;
                }
            }
        }
        let got = s.done.or(s.best.map(|(b, n)| (b, n.min(len))));
        self.finish(stream, space, got)
    }

    fn finish(
        &mut self,
        stream: bool,
        space: &Space,
        got: Option<(u64, u32)>,
    ) -> Option<(u64, u32)> {
        if let (true, Some((b, _))) = (stream, got) {
            self.last_stream_group = space.group_of(b);
        }
        got
    }

    // ---------------------------------------------------------------- ext3

    /// ext3's `ext3_new_blocks`: up to `count` contiguous blocks at or after `goal`, inside
    /// the file's reservation window when it has one (`windowed`: regular files).
    pub fn ext3_blocks(
        &mut self,
        cfg: &FsConfig,
        space: &mut Space,
        ino: Ino,
        goal: u64,
        count: u32,
        windowed: bool,
    ) -> Option<(u64, u32)> {
        let goal = goal.clamp(cfg.first_data_block, cfg.blocks - 1);
        let g0 = space.group_of(goal);
        let n = cfg.groups;
        if windowed {
            let rsv = *self.rsv.entry(ino).or_insert(Rsv {
                start: 1,
                end: 0,
                goal_size: cfg.rsv_window,
                alloc_hit: 0,
            });
            let windowsz = rsv.goal_size;
            for i in 0..n {
                let g = (g0 + i) % n;
                let free = space.group_free(g).free;
                if free == 0 || (i > 0 && free <= windowsz / 2) {
                    continue;
                }
                let (gs, _) = space.group_range(g);
                let grp_goal = if i == 0 { goal } else { gs };
                if let Some(got) = self.alloc_with_rsv(cfg, space, ino, g, grp_goal, count) {
                    space.take(got.0, got.1 as u64);
                    return Some(got);
                }
            }
            // No window anywhere: without one.
            self.discard_window(ino);
        }
        for i in 0..n {
            let g = (g0 + i) % n;
            let (gs, ge) = space.group_range(g);
            let from = if i == 0 { goal } else { gs };
            if let Some(b) = space.next_free(from, ge) {
                let e = space.run_end(b, ge).min(b + count as u64);
                space.take(b, e - b);
                return Some((b, (e - b) as u32));
            }
        }
        None
    }

    fn discard_window(&mut self, ino: Ino) {
        if let Some(r) = self.rsv.get_mut(&ino) {
            if r.end >= r.start {
                self.windows.remove(&r.start);
            }
            r.start = 1;
            r.end = 0;
        }
    }

    /// `ext3_try_to_allocate_with_rsv` in group `g`.
    fn alloc_with_rsv(
        &mut self,
        cfg: &FsConfig,
        space: &Space,
        ino: Ino,
        g: u32,
        goal: u64,
        count: u32,
    ) -> Option<(u64, u32)> {
        let (gs, ge) = space.group_range(g);
        let mut goal = goal.max(gs);
        for _ in 0..64 {
            let r = self.rsv[&ino];
            let in_window = r.end >= r.start && r.start <= goal && goal <= r.end;
            if !in_window && !self.new_window(cfg, space, ino, g, goal, count) {
                return None;
            }
            let r = self.rsv[&ino];
            let from = goal.max(r.start);
            if let Some(b) = space.next_free(from, (r.end + 1).min(ge)) {
                let e = space.run_end(b, (r.end + 1).min(ge)).min(b + count as u64);
                let got = (b, (e - b) as u32);
                self.rsv.get_mut(&ino).unwrap().alloc_hit += got.1;
                return Some(got);
            }
            // The window has nothing left at or after the goal: a new one after it.
            goal = r.end + 1;
            if goal >= ge {
                return None;
            }
            self.discard_window(ino);
        }
        None
    }

    /// `alloc_new_reservation`: a window of the file's size from the first free block at
    /// or after `goal` in group `g`, where it overlaps no other window. The window must start
    /// in the group and may reach past its end (`find_next_reservable_window` takes the
    /// group's last block as the last a window may start from), so a group's tail shorter
    /// than a window is still taken; its blocks are allocated group by group.
    fn new_window(
        &mut self,
        cfg: &FsConfig,
        space: &Space,
        ino: Ino,
        g: u32,
        goal: u64,
        count: u32,
    ) -> bool {
        let (_, ge) = space.group_range(g);
        let mut r = self.rsv[&ino];
        if r.goal_size < count {
            r.goal_size = count.min(cfg.rsv_window_max);
        }
        if r.end >= r.start {
            // More than half of the last window used: double (`rsv_alloc_hit`).
            if r.alloc_hit as u64 > (r.end - r.start).div_ceil(2) {
                r.goal_size = (r.goal_size * 2).min(cfg.rsv_window_max);
            }
            self.windows.remove(&r.start);
        }
        let size = r.goal_size as u64;
        let mut start = goal;
        loop {
            // The first gap of `size` between other windows from `start`.
            let mut cur = start;
            loop {
                let clash = self
                    .windows
                    .range(..cur + size)
                    .next_back()
                    .filter(|(&s, &(e, _))| e >= cur && s < cur + size)
                    .map(|(_, &(e, _))| e);
                match clash {
                    Some(e) => cur = e + 1,
                    None => break,
                }
            }
            if cur >= ge {
                r.start = 1;
                r.end = 0;
                self.rsv.insert(ino, r);
                return false;
            }
            // The window must hold a free block; else start again from the next free one.
            match space.next_free(cur, ge) {
                None => {
                    r.start = 1;
                    r.end = 0;
                    self.rsv.insert(ino, r);
                    return false;
                }
                Some(f) if f < cur + size => {
                    r.start = cur;
                    r.end = cur + size - 1;
                    r.alloc_hit = 0;
                    self.windows.insert(cur, (r.end, ino));
                    self.rsv.insert(ino, r);
                    return true;
                }
                Some(f) => start = f,
            }
        }
    }

    /// The window of `ino`, if any (for tests and reports).
    pub fn window_of(&self, ino: Ino) -> Option<(u64, u64)> {
        self.rsv
            .get(&ino)
            .filter(|r| r.end >= r.start)
            .map(|r| (r.start, r.end))
    }
}

/// The first `len`-aligned (relative to the group's start) free chunk of `len` in group `g`.
fn aligned_chunk(space: &Space, g: u32, len: u32) -> Option<u64> {
    let (gs, ge) = space.group_range(g);
    let mut from = gs;
    while let Some(s) = space.first_fit(from, len, ge) {
        let e = space.run_end(s, ge);
        let a = gs + (s - gs).div_ceil(len as u64) * len as u64;
        if a + len as u64 <= e {
            return Some(a);
        }
        from = e;
    }
    None
}

/// `ext4_mb_complex_scan_group`: measures the free extents of group `g` from its start.
fn scan_group(
    space: &Space,
    g: u32,
    want: u32,
    min_to_scan: u32,
    max_to_scan: u32,
    s: &mut Search,
) {
    let (gs, ge) = space.group_range(g);
    let mut pos = gs;
    let mut best_here: Option<(u64, u32)> = None;
    while let Some(b) = space.next_free(pos, ge) {
        let e = space.run_end(b, ge);
        let n = (e - b) as u32;
        s.found += 1;
        if n == want {
            s.done = Some((b, want));
            return;
        }
        let better = match s.best {
            None => true,
            Some((_, bn)) if bn < want => n > bn,
            Some((_, bn)) => n >= want && n < bn,
        };
        if better {
            s.best = Some((b, n));
            if n >= want {
                best_here = Some((b, n));
            }
        }
        if s.found > max_to_scan {
            s.broke = true;
            return;
        }
        if let Some((bb, bn)) = s.best.filter(|&(_, bn)| bn >= want) {
            if s.found > min_to_scan {
                s.done = Some((bb, want.min(bn)));
                return;
            }
        }
        pos = e;
    }
    if let Some((bb, _)) = best_here.or(s.best.filter(|&(_, bn)| bn >= want)) {
        s.done = Some((bb, want));
    }
}
