//! Page-mapped flash translation layer, as pure state (no time). The timing model asks it
//! where data goes and how much garbage collection a placement costs; preconditioning drives
//! the same code without timing, so a fast fill reaches the same state as a simulated one.
//!
//! Units: the mapping unit is the indirection unit (IU). A *block* here is a multi-plane
//! block of one die (one erase block in every plane, erased and programmed together); a
//! *program unit* (PU) is one page in every plane. Slots are IU-sized places in blocks,
//! numbered `block * ius_per_block + offset`, so one `u32` names a physical location.

use super::config::SsdConfig;
use crate::engine::memory::PackedArray;


#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    Free,
    Open,
    Closed,
}

#[derive(Clone, Copy, Debug)]
struct Block {
    valid: u32,
    /// Slots whose program has finished (host data may still be on its way to the die).
    programmed: u32,
    erases: u32,
    state: BlockState,
}

#[derive(Clone, Debug, Default)]
struct DieState {
    free: Vec<u32>,
    host_block: Option<u32>,
    host_next: u32,
    gc_block: Option<u32>,
    gc_next: u32,
    /// GC found only fully valid blocks: no host data may land here until some is invalidated.
    stuck: bool,
}

/// Work one garbage collection pass put on a die.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    pub page_reads: u64,
    pub program_units: u64,
    pub erases: u64,
    pub relocated_ius: u64,
}

impl GcWork {
    pub fn add(&mut self, o: GcWork) {
        self.page_reads += o.page_reads;
        self.program_units += o.program_units;
        self.erases += o.erases;
        self.relocated_ius += o.relocated_ius;
    }
}

/// Where a program unit of host data went, and the GC it triggered on that die.
#[derive(Clone, Copy, Debug)]
pub struct Placement {
    pub block: u32,
    pub first_slot: u32,
    pub gc: GcWork,
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct FtlCounters {
    pub host_ius: u64,
    pub padding_ius: u64,
    pub gc_ius: u64,
    pub erases: u64,
    pub gc_runs: u64,
    pub trimmed_ius: u64,
}

pub struct Ftl {
    pub ius_per_page: u32,
    pub ius_per_pu: u32,
    pub ius_per_block: u32,
    pub pages_per_block_group: u32,
    pub blocks_per_die: u32,
    pub dies: u32,
    gc_threshold: u32,
    /// Logical IU → slot, and slot → logical IU; packed to the bits their ranges need.
    l2p: PackedArray,
    p2l: PackedArray,
    /// The sentinel for "no slot" in `l2p` / "no logical IU" in `p2l` (all ones).
    no_slot: u32,
    no_lpn: u32,
    blocks: Vec<Block>,
    die_state: Vec<DieState>,
    pub counters: FtlCounters,
}

impl Ftl {
    pub fn new(cfg: &SsdConfig) -> Ftl {
        let n = &cfg.nand;
        let ius_per_page = (n.page_bytes / cfg.ftl.iu_bytes) as u32;
        let ius_per_pu = ius_per_page * n.planes_per_die;
        let ius_per_block = ius_per_pu * n.pages_per_block;
        let blocks_per_die = n.blocks_per_plane;
        let dies = cfg.dies();
        let total_blocks = (dies * blocks_per_die) as usize;
        let logical = (cfg.capacity_bytes / cfg.ftl.iu_bytes) as usize;
        let slots = total_blocks * ius_per_block as usize;
        // Widths leave the all-ones value free as the "none" sentinel.
        let slot_bits = PackedArray::bits_for(slots as u64);
        let lpn_bits = PackedArray::bits_for(logical as u64);
        let die_state = (0..dies)
            .map(|d| DieState {
                // Reversed so that blocks are handed out in ascending order.
                free: (0..blocks_per_die).rev().map(|b| d * blocks_per_die + b).collect(),
                ..DieState::default()
            })
            .collect();
        Ftl {
            ius_per_page,
            ius_per_pu,
            ius_per_block,
            pages_per_block_group: n.pages_per_block * n.planes_per_die,
            blocks_per_die,
            dies,
            gc_threshold: cfg.ftl.gc_threshold_blocks,
            l2p: PackedArray::new(logical, slot_bits, (1u64 << slot_bits) as u32 - 1),
            p2l: PackedArray::new(slots, lpn_bits, (1u64 << lpn_bits) as u32 - 1),
            no_slot: ((1u64 << slot_bits) - 1) as u32,
            no_lpn: ((1u64 << lpn_bits) - 1) as u32,
            blocks: vec![
                Block { valid: 0, programmed: 0, erases: 0, state: BlockState::Free };
                total_blocks
            ],
            die_state,
            counters: FtlCounters::default(),
        }
    }

    pub fn logical_ius(&self) -> u64 {
        self.l2p.len() as u64
    }

    pub fn total_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    pub fn free_blocks(&self) -> u64 {
        self.die_state.iter().map(|d| d.free.len() as u64).sum()
    }

    pub fn max_block_erases(&self) -> u32 {
        self.blocks.iter().map(|b| b.erases).max().unwrap_or(0)
    }

    /// Bytes of mapping state per logical IU (the memory cost the benchmark reports).
    pub fn map_bytes(&self) -> u64 {
        (self.l2p.bytes() + self.p2l.bytes()) as u64
            + self.blocks.len() as u64 * std::mem::size_of::<Block>() as u64
    }

    #[inline]
    pub fn die_of_slot(&self, slot: u32) -> u32 {
        slot / self.ius_per_block / self.blocks_per_die
    }

    /// Global page number of a slot: IUs in one page are read with one sense operation.
    #[inline]
    pub fn page_of_slot(&self, slot: u32) -> u32 {
        slot / self.ius_per_page
    }

    /// Where logical IU `lpn` lives, if it was ever written and not trimmed.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        let s = self.l2p.get(lpn as usize);
        (s != self.no_slot).then_some(s)
    }

    /// Hint that `lpn` will be looked up soon. On a large drive the map is far bigger than
    /// the CPU caches, and a random read's lookup is otherwise one cache miss on the critical
    /// path; requests are known a few events before their lookup, which hides it.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        #[cfg(target_arch = "x86_64")]
        if let Some(word) = self.l2p.word_ptr(lpn as usize) {
            // SAFETY: prefetching is a hint; it never faults, even for an invalid address,
            // and here the address is a valid word of `l2p`.
            #[allow(unused_unsafe)]
            unsafe {
                use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
                _mm_prefetch(word as *const i8, _MM_HINT_T0);
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = lpn;
    }

    #[inline]
    fn prefetch_slot_owner(&self, slot: u32) {
        let lpn = self.p2l.get(slot as usize);
        if lpn != self.no_lpn {
            self.prefetch(lpn);
        }
    }

    /// Whether the data in `slot` is already on flash (else it is still in the write buffer).
    #[inline]
    pub fn is_programmed(&self, slot: u32) -> bool {
        let b = &self.blocks[(slot / self.ius_per_block) as usize];
        slot % self.ius_per_block < b.programmed
    }

    /// Record that `count` slots of `block` finished programming (in order). A block that is
    /// now complete can be a GC victim, so a die that was short of free blocks collects now.
    pub fn mark_programmed(&mut self, block: u32, count: u32) -> GcWork {
        let b = &mut self.blocks[block as usize];
        b.programmed += count;
        debug_assert!(b.programmed <= self.ius_per_block);
        if b.programmed < self.ius_per_block || b.state != BlockState::Closed {
            return GcWork::default();
        }
        let die = block / self.blocks_per_die;
        if self.die_state[die as usize].free.len() < self.gc_threshold as usize {
            self.die_state[die as usize].stuck = false;
            self.collect_if_needed(die)
        } else {
            GcWork::default()
        }
    }

    /// Whether host data may be placed on `die` now without exhausting its GC reserve.
    #[inline]
    pub fn accepts_host_data(&self, die: u32) -> bool {
        let d = &self.die_state[die as usize];
        !d.stuck && (d.host_block.is_some() || d.free.len() > 1)
    }

    /// Place one program unit of host data (`lpns`, at most one PU; the rest is padding) on
    /// `die`. Runs GC on that die when its free blocks fall under the threshold.
    pub fn place_host_unit(&mut self, die: u32, lpns: &[u32]) -> Placement {
        debug_assert!(lpns.len() <= self.ius_per_pu as usize && !lpns.is_empty());
        debug_assert!(self.accepts_host_data(die));
        let mut gc = GcWork::default();
        if self.die_state[die as usize].host_block.is_none() {
            let b = self.open_block(die);
            let d = &mut self.die_state[die as usize];
            d.host_block = Some(b);
            d.host_next = 0;
            gc = self.collect_if_needed(die);
        }
        let d = &mut self.die_state[die as usize];
        let block = d.host_block.expect("open host block");
        let first_slot = block * self.ius_per_block + d.host_next;
        d.host_next += self.ius_per_pu;
        let full = d.host_next >= self.ius_per_block;
        for (i, &lpn) in lpns.iter().enumerate() {
            self.map(lpn, first_slot + i as u32);
        }
        self.counters.host_ius += lpns.len() as u64;
        self.counters.padding_ius += (self.ius_per_pu as usize - lpns.len()) as u64;
        if full {
            self.blocks[block as usize].state = BlockState::Closed;
            self.die_state[die as usize].host_block = None;
        }
        Placement { block, first_slot, gc }
    }

    /// Forget logical IU `lpn` (TRIM): its slot becomes garbage for GC to reclaim.
    pub fn trim(&mut self, lpn: u32) {
        let old = self.l2p.get(lpn as usize);
        if old != self.no_slot {
            self.invalidate(old);
            self.l2p.set(lpn as usize, self.no_slot);
            self.counters.trimmed_ius += 1;
        }
    }

    fn map(&mut self, lpn: u32, slot: u32) {
        let old = self.l2p.get(lpn as usize);
        if old != self.no_slot {
            self.invalidate(old);
        }
        self.l2p.set(lpn as usize, slot);
        self.p2l.set(slot as usize, lpn);
        self.blocks[(slot / self.ius_per_block) as usize].valid += 1;
    }

    fn invalidate(&mut self, slot: u32) {
        self.p2l.set(slot as usize, self.no_lpn);
        let blk = (slot / self.ius_per_block) as usize;
        self.blocks[blk].valid -= 1;
        let die = (blk as u32) / self.blocks_per_die;
        // Freed space on a die that GC had given up on makes it usable again.
        let d = &mut self.die_state[die as usize];
        if d.stuck {
            d.stuck = false;
        }
    }

    fn open_block(&mut self, die: u32) -> u32 {
        let b = self.die_state[die as usize]
            .free
            .pop()
            .expect("FTL invariant: a die always keeps a free block for GC");
        let blk = &mut self.blocks[b as usize];
        debug_assert_eq!(blk.state, BlockState::Free);
        blk.state = BlockState::Open;
        blk.valid = 0;
        blk.programmed = 0;
        b
    }

    fn collect_if_needed(&mut self, die: u32) -> GcWork {
        let mut work = GcWork::default();
        while self.die_state[die as usize].free.len() < self.gc_threshold as usize {
            match self.collect_one(die) {
                Some(w) => work.add(w),
                None => {
                    self.die_state[die as usize].stuck = true;
                    break;
                }
            }
        }
        work
    }

    /// Greedy GC: relocate the valid IUs of the closed block with the fewest, then erase it.
    fn collect_one(&mut self, die: u32) -> Option<GcWork> {
        let first = die * self.blocks_per_die;
        let victim = (first..first + self.blocks_per_die)
            .filter(|&b| {
                // A closed block whose last units are still being programmed is not a victim.
                let blk = &self.blocks[b as usize];
                blk.state == BlockState::Closed && blk.programmed >= self.ius_per_block
            })
            .min_by_key(|&b| self.blocks[b as usize].valid)?;
        let valid = self.blocks[victim as usize].valid;
        if valid >= self.ius_per_block {
            return None;
        }
        self.counters.gc_runs += 1;
        let mut work = GcWork { erases: 1, ..GcWork::default() };
        let base = victim * self.ius_per_block;
        let mut last_page = u32::MAX;
        // Relocation touches the map entry of every valid IU, at random places in a map far
        // larger than the caches: ask for entries a few IUs ahead so the misses overlap.
        const AHEAD: u32 = 16;
        for off in 0..AHEAD.min(self.ius_per_block) {
            self.prefetch_slot_owner(base + off);
        }
        for off in 0..self.ius_per_block {
            let slot = base + off;
            if off + AHEAD < self.ius_per_block {
                self.prefetch_slot_owner(slot + AHEAD);
            }
            let lpn = self.p2l.get(slot as usize);
            if lpn == self.no_lpn {
                continue;
            }
            let page = slot / self.ius_per_page;
            if page != last_page {
                work.page_reads += 1;
                last_page = page;
            }
            let dst = self.gc_slot(die, &mut work);
            self.map(lpn, dst);
            work.relocated_ius += 1;
        }
        self.counters.gc_ius += work.relocated_ius;
        let blk = &mut self.blocks[victim as usize];
        debug_assert_eq!(blk.valid, 0);
        blk.state = BlockState::Free;
        blk.erases += 1;
        blk.programmed = 0;
        self.counters.erases += 1;
        self.die_state[die as usize].free.push(victim);
        Some(work)
    }

    /// Next slot of the die's GC block; GC data is kept apart from host data (it is colder).
    fn gc_slot(&mut self, die: u32, work: &mut GcWork) -> u32 {
        if self.die_state[die as usize].gc_block.is_none() {
            let b = self.open_block(die);
            let d = &mut self.die_state[die as usize];
            d.gc_block = Some(b);
            d.gc_next = 0;
        }
        let ius_per_block = self.ius_per_block;
        let ius_per_pu = self.ius_per_pu;
        let d = &mut self.die_state[die as usize];
        let block = d.gc_block.expect("open GC block");
        let off = d.gc_next;
        if off % ius_per_pu == 0 {
            work.program_units += 1;
        }
        d.gc_next += 1;
        if d.gc_next >= ius_per_block {
            d.gc_block = None;
            self.blocks[block as usize].state = BlockState::Closed;
        }
        // Relocated data is programmed by the time anything queued behind the GC reaches the die.
        self.blocks[block as usize].programmed = off + 1;
        block * ius_per_block + off
    }

    /// Check the FTL's books: every mapped IU is valid where it points, valid counts match,
    /// and valid + invalid + free slots account for the whole flash. Used by tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut valid_per_block = vec![0u32; self.blocks.len()];
        for lpn in 0..self.l2p.len() {
            let slot = self.l2p.get(lpn);
            if slot == self.no_slot {
                continue;
            }
            if self.p2l.get(slot as usize) != lpn as u32 {
                return Err(format!("lpn {lpn} -> slot {slot} but slot holds {}", self.p2l.get(slot as usize)));
            }
            valid_per_block[(slot / self.ius_per_block) as usize] += 1;
        }
        for (i, b) in self.blocks.iter().enumerate() {
            if b.valid != valid_per_block[i] {
                return Err(format!("block {i}: valid count {} but {} mapped", b.valid, valid_per_block[i]));
            }
            if b.state == BlockState::Free && b.valid != 0 {
                return Err(format!("free block {i} holds valid data"));
            }
        }
        let free_listed: usize = self.die_state.iter().map(|d| d.free.len()).sum();
        let free_state = self.blocks.iter().filter(|b| b.state == BlockState::Free).count();
        if free_listed != free_state {
            return Err(format!("{free_listed} blocks on free lists but {free_state} marked free"));
        }
        Ok(())
    }

    /// Total IUs currently mapped (valid).
    pub fn valid_ius(&self) -> u64 {
        self.blocks.iter().map(|b| b.valid as u64).sum()
    }
}
