//! Page-mapped flash translation layer, as pure state (no time). The timing model asks it
//! where data goes and how much garbage collection a placement costs; preconditioning drives
//! the same code without timing, so a fast fill reaches the same state as a simulated one.
//!
//! Units: the mapping unit is the indirection unit (IU). A *block* here is a multi-plane
//! block of one die (one erase block in every plane, erased and programmed together); a
//! *program unit* (PU) is one page in every plane. Slots are IU-sized places in blocks,
//! numbered `block * ius_per_block + offset`, so one `u32` names a physical location.

mod fill;
mod free_blocks;
mod map;
mod state;
mod victims;

use super::config::{GcPolicy, SsdConfig};
use free_blocks::FreeBlocks;
use map::FlashMap;
use victims::{Candidate, Victims};
pub use state::BadState;
use crate::engine::divide::Div32;


#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BlockState {
    Free,
    Open,
    Closed,
}

#[derive(Clone, Copy, Debug, PartialEq)]
struct Block {
    valid: u32,
    /// Slots given out so far (the slots whose program has finished are in
    /// `Ftl::programmed`; data given out may still be on its way to the die). A block can be
    /// collected once both are equal.
    filled: u32,
    erases: u32,
    state: BlockState,
    /// Used one bit per cell (SLC cache): holds `ius_per_slc_block` IUs.
    slc: bool,
    /// Write clock when the block was opened: its age for cost-benefit GC.
    stamp: u64,
}

#[derive(Clone, Debug, Default, PartialEq)]
struct DieState {
    /// Free blocks, the least worn found in O(log n) (see `free_blocks`).
    free: FreeBlocks,
    host_block: Option<u32>,
    host_next: u32,
    slc_block: Option<u32>,
    slc_next: u32,
    gc_block: Option<u32>,
    gc_next: u32,
    /// GC found only fully valid blocks: no host data may land here until some is invalidated.
    stuck: bool,
    erases_since_wear_check: u32,
    /// SLC blocks erased as soon as overwrites or TRIM emptied them, whose erase time the
    /// die has not been charged yet (it is, with its next GC work).
    slc_erases_owed: u64,
    /// The block GC is emptying, the next offset to look at, and relocations owed per host
    /// IU so that it is empty before the free blocks run out.
    victim: Option<u32>,
    victim_next: u32,
    victim_rate: f64,
    /// The die's GC candidates, each choice among them in O(log n) (see `victims`). Like the
    /// two counts below, it follows from the blocks' books: not saved, rebuilt on restore.
    victims: Victims,
    /// Blocks of the die in SLC mode (open or closed): whether folding has work.
    slc_blocks: u32,
    /// The die's largest erase count (erase counts only grow, so this only grows too).
    erases_max: u32,
}

/// Whether a program unit of host data goes to an SLC-mode block or a native one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Native,
    Slc,
}

/// Work one garbage collection (or SLC folding) pass put on a die.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GcWork {
    /// Page senses in native blocks and in SLC blocks.
    pub page_reads: u64,
    pub slc_page_reads: u64,
    /// Native program units written with relocated data.
    pub program_units: u64,
    /// Blocks erased (all of them) and how many of those were SLC blocks.
    pub erases: u64,
    pub slc_erases: u64,
    pub relocated_ius: u64,
}

impl GcWork {
    pub fn add(&mut self, o: GcWork) {
        self.page_reads += o.page_reads;
        self.slc_page_reads += o.slc_page_reads;
        self.program_units += o.program_units;
        self.erases += o.erases;
        self.slc_erases += o.slc_erases;
        self.relocated_ius += o.relocated_ius;
    }

    pub fn is_empty(&self) -> bool {
        self.erases == 0 && self.relocated_ius == 0
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
    /// Host IUs that went to SLC-mode blocks.
    pub slc_ius: u64,
    pub padding_ius: u64,
    pub gc_ius: u64,
    /// IUs moved out of SLC blocks (folding), part of `gc_ius`.
    pub folded_ius: u64,
    pub erases: u64,
    pub gc_runs: u64,
    pub trimmed_ius: u64,
    /// Blocks collected to even out wear.
    pub wear_level_moves: u64,
}

/// Comparable so that tests can check two ways of reaching a state reach the same one.
#[derive(Clone, PartialEq)]
pub struct Ftl {
    pub ius_per_page: u32,
    /// Native program unit: `program_pages` pages in every plane.
    pub ius_per_pu: u32,
    pub ius_per_block: u32,
    /// SLC mode: one page per plane per program; a block holds 1/bits of its native IUs.
    pub ius_per_slc_pu: u32,
    pub ius_per_slc_block: u32,
    pub pages_per_block_group: u32,
    pub blocks_per_die: u32,
    pub dies: u32,
    pub planes: u32,
    /// The same three sizes as divisors: every read divides its slot by them.
    block_div: Div32,
    die_div: Div32,
    page_div: Div32,
    gc_threshold: u32,
    policy: GcPolicy,
    background_gc_blocks: u32,
    wear_spread: u32,
    bits: u32,
    /// SLC cache limits in IUs of user data (0 / 0 without a cache).
    slc_static_ius: u64,
    slc_dynamic_max_ius: u64,
    slc_blocks: u64,
    valid_total: u64,
    /// Running wear statistics, so reports are O(1) however many blocks the drive has: the
    /// sum of all blocks' erase counts, and the largest (erase counts only grow, so the
    /// maximum only grows too). Kept by `erase`, the only place `Block::erases` changes.
    erases_total: u64,
    erases_max: u32,
    clock: u64,
    /// Logical IU → slot, and slot → logical IU; packed to the bits their ranges need,
    /// stored relative to a sequential fill (`ftl/map.rs`).
    map: FlashMap,
    /// The sentinel for "no slot" / "no logical IU" (all ones of each width).
    no_slot: u32,
    no_lpn: u32,
    blocks: Vec<Block>,
    /// Slots of each block whose program has finished. Kept apart from `blocks`: every read
    /// checks it for a random block, and 4 bytes a block stay in the CPU's caches where the
    /// whole block records of a large drive (or of an array's drives) do not.
    programmed: Vec<u32>,
    die_state: Vec<DieState>,
    /// Dies whose GC had given up (`stuck`) and that have garbage again: they take no host
    /// data until they collect, and nothing else would make them (see [`Ftl::collect_starved`]).
    unstuck: Vec<u32>,
    pub counters: FtlCounters,
}

/// Ask the CPU to bring the cache line at `p` in: a hint, never a fault (any address will do).
#[inline(always)]
fn prefetch_ptr<T>(p: *const T) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching is a hint; it never faults, even for an invalid address.
    #[allow(unused_unsafe)]
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch(p as *const i8, _MM_HINT_T0);
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

impl Ftl {
    pub fn new(cfg: &SsdConfig) -> Ftl {
        let n = &cfg.nand;
        let ius_per_page = (n.page_bytes / cfg.ftl.iu_bytes) as u32;
        let ius_per_pu = ius_per_page * n.planes_per_die * n.program_pages;
        let ius_per_block = ius_per_page * n.planes_per_die * n.pages_per_block;
        let bits = n.bits_per_cell.max(1);
        let blocks_per_die = n.blocks_per_plane;
        let dies = cfg.dies();
        let total_blocks = (dies * blocks_per_die) as usize;
        let logical = (cfg.capacity_bytes / cfg.ftl.iu_bytes) as usize;
        let map = FlashMap::new(logical as u32, dies, blocks_per_die, ius_per_block, ius_per_pu);
        let (slc_static_ius, slc_dynamic_max_ius) = match &cfg.slc_cache {
            Some(c) => (c.static_bytes / cfg.ftl.iu_bytes, c.dynamic_max_bytes / cfg.ftl.iu_bytes),
            None => (0, 0),
        };
        // Only a drive with an SLC cache opens SLC blocks (see `host_mode`).
        let slc = slc_static_ius + slc_dynamic_max_ius > 0;
        let die_state = (0..dies)
            .map(|d| DieState {
                // Every block is new: erased 0 times.
                free: FreeBlocks::new(
                    blocks_per_die,
                    (0..blocks_per_die).map(|b| d * blocks_per_die + b).collect(),
                    |_| 0,
                ),
                victims: Victims::build(blocks_per_die, slc, |_| None),
                ..DieState::default()
            })
            .collect();
        let fresh = Block { valid: 0, filled: 0, erases: 0, state: BlockState::Free, slc: false, stamp: 0 };
        Ftl {
            ius_per_page,
            ius_per_pu,
            ius_per_block,
            ius_per_slc_pu: ius_per_page * n.planes_per_die,
            ius_per_slc_block: ius_per_block / bits,
            pages_per_block_group: n.pages_per_block * n.planes_per_die,
            blocks_per_die,
            dies,
            planes: n.planes_per_die,
            block_div: Div32::new(ius_per_block),
            die_div: Div32::new(blocks_per_die),
            page_div: Div32::new(ius_per_page),
            gc_threshold: cfg.ftl.gc_threshold_blocks,
            policy: cfg.ftl.gc_policy,
            background_gc_blocks: cfg.ftl.background_gc_blocks,
            wear_spread: cfg.ftl.wear_leveling_spread,
            bits,
            slc_static_ius,
            slc_dynamic_max_ius,
            slc_blocks: 0,
            valid_total: 0,
            erases_total: 0,
            erases_max: 0,
            clock: 0,
            no_slot: map.no_slot,
            no_lpn: map.no_lpn,
            map,
            blocks: vec![fresh; total_blocks],
            programmed: vec![0; total_blocks],
            die_state,
            unstuck: Vec::new(),
            counters: FtlCounters::default(),
        }
    }

    pub fn logical_ius(&self) -> u64 {
        self.map.logical() as u64
    }

    pub fn total_blocks(&self) -> u64 {
        self.blocks.len() as u64
    }

    pub fn free_blocks(&self) -> u64 {
        self.die_state.iter().map(|d| d.free.len() as u64).sum()
    }

    pub fn max_block_erases(&self) -> u32 {
        self.erases_max
    }

    /// Bytes of mapping state per logical IU (the memory cost the benchmark reports).
    pub fn map_bytes(&self) -> u64 {
        self.map.bytes() as u64
            + self.blocks.len() as u64 * (std::mem::size_of::<Block>() + std::mem::size_of::<u32>()) as u64
    }

    /// Bytes of the maps' pages holding anything but what a sequential fill predicts: the
    /// part of [`Ftl::map_bytes`]' maps that must be resident when they are sparse (reads
    /// the maps whole: for tests and reports).
    pub fn map_stored_bytes(&self) -> u64 {
        self.map.stored_bytes() as u64
    }

    /// Whether the maps commit memory only where written (large ones; see `ftl/map.rs`).
    pub fn map_is_sparse(&self) -> bool {
        self.map.is_sparse()
    }

    #[inline]
    pub fn die_of_slot(&self, slot: u32) -> u32 {
        self.die_div.div(self.block_div.div(slot))
    }

    /// Global page number of a slot: IUs in one page are read with one sense operation.
    #[inline]
    pub fn page_of_slot(&self, slot: u32) -> u32 {
        self.page_div.div(slot)
    }

    /// The plane of a slot and its page address within its block. Pages of a block are
    /// numbered plane-fastest, so a program unit (`program_pages` pages in every plane) holds
    /// the same page addresses in every plane, as a multi-plane program writes them.
    #[inline]
    pub fn plane_page_of_slot(&self, slot: u32) -> (u32, u32) {
        let block = self.block_div.div(slot);
        let k = self.page_div.div(slot - block * self.ius_per_block);
        (k % self.planes, k / self.planes)
    }

    /// Where logical IU `lpn` lives, if it was ever written and not trimmed.
    #[inline]
    pub fn lookup(&self, lpn: u32) -> Option<u32> {
        let s = self.map.slot(lpn);
        (s != self.no_slot).then_some(s)
    }

    /// Hint that `lpn` will be looked up soon. On a large drive the map is far bigger than
    /// the CPU caches, and a random read's lookup is otherwise one cache miss on the critical
    /// path; requests are known a few events before their lookup, which hides it.
    #[inline]
    pub fn prefetch(&self, lpn: u32) {
        if let Some(word) = self.map.slot_word(lpn) {
            prefetch_ptr(word);
        }
    }

    /// Hint that host data is about to be placed over `lpns`: each one's old slot will be
    /// invalidated, which touches its reverse-map entry and its block's record at random
    /// places. Asked for all of a unit's IUs before any is mapped, the misses overlap
    /// instead of coming one after another.
    #[inline]
    fn prefetch_old_slots(&self, lpns: &[u32]) {
        for &lpn in lpns {
            let old = self.map.slot(lpn);
            if old != self.no_slot {
                if let Some(word) = self.map.lpn_word(old) {
                    prefetch_ptr(word);
                }
                if let Some(b) = self.blocks.get(self.block_div.div(old) as usize) {
                    prefetch_ptr(b as *const Block);
                }
            }
        }
    }

    #[inline]
    fn prefetch_slot_owner(&self, slot: u32) {
        let lpn = self.map.lpn(slot);
        if lpn != self.no_lpn {
            self.prefetch(lpn);
        }
    }

    /// Whether `slot` lies in a block used in SLC mode (read with SLC timing).
    #[inline]
    pub fn is_slc_slot(&self, slot: u32) -> bool {
        self.blocks[self.block_div.div(slot) as usize].slc
    }

    /// Whether collecting `b` frees space. GC writes what it moves into native blocks, so a
    /// block gains (native IUs per block − valid IUs): every SLC block does, even when full
    /// of valid data (folding it frees two thirds of a TLC block's worth).
    fn worth_collecting(&self, b: &Block) -> bool {
        b.valid < self.ius_per_block
    }

    /// Block `b` as a GC candidate: closed, fully programmed and not its die's current victim
    /// (None otherwise).
    fn candidate(&self, b: u32) -> Option<Candidate> {
        let blk = &self.blocks[b as usize];
        let die = b / self.blocks_per_die;
        let eligible = blk.state == BlockState::Closed
            && self.programmed[b as usize] >= blk.filled
            && self.die_state[die as usize].victim != Some(b);
        eligible.then_some(Candidate { valid: blk.valid, erases: blk.erases, slc_stamp: blk.slc.then_some(blk.stamp) })
    }

    /// Bring `b`'s entry in its die's candidates up to date after its state, programmed count
    /// or victimhood changed.
    fn sync_candidate(&mut self, b: u32) {
        let c = self.candidate(b);
        let die = b / self.blocks_per_die;
        self.die_state[die as usize].victims.set(b - die * self.blocks_per_die, c);
    }

    /// Rebuild what each die's state derives from the blocks' books: its candidates, SLC
    /// block count and largest erase count (after a restore).
    fn rebuild_die_books(&mut self) {
        let slc = self.has_slc_cache();
        for die in 0..self.dies {
            let first = die * self.blocks_per_die;
            let range = first as usize..(first + self.blocks_per_die) as usize;
            let victims = Victims::build(self.blocks_per_die, slc, |p| self.candidate(first + p));
            let blocks = &self.blocks[range];
            let slc_blocks = blocks.iter().filter(|b| b.slc && b.state != BlockState::Free).count() as u32;
            let erases_max = blocks.iter().map(|b| b.erases).max().unwrap_or(0);
            let d = &mut self.die_state[die as usize];
            d.victims = victims;
            d.slc_blocks = slc_blocks;
            d.erases_max = erases_max;
        }
    }

    fn capacity_of(&self, b: &Block) -> u32 {
        if b.slc {
            self.ius_per_slc_block
        } else {
            self.ius_per_block
        }
    }

    /// Whether the data in `slot` is already on flash (else it is still in the write buffer).
    #[inline]
    pub fn is_programmed(&self, slot: u32) -> bool {
        let block = self.block_div.div(slot);
        slot - block * self.ius_per_block < self.programmed[block as usize]
    }

    /// Record that `count` slots of `block` finished programming (in order). A block that is
    /// now complete can be a GC victim, so a die that was short of free blocks collects now.
    pub fn mark_programmed(&mut self, block: u32, count: u32) -> GcWork {
        let programmed = &mut self.programmed[block as usize];
        *programmed += count;
        let b = &self.blocks[block as usize];
        debug_assert!(*programmed <= b.filled);
        if *programmed < b.filled || b.state != BlockState::Closed {
            return GcWork::default();
        }
        self.sync_candidate(block);
        // Overwritten while its last programs were on the way: nothing left to keep.
        self.reclaim_empty_slc(block);
        let die = block / self.blocks_per_die;
        if self.die_state[die as usize].free.len() < self.gc_threshold as usize {
            self.die_state[die as usize].stuck = false;
            self.collect_if_needed(die, self.ius_per_pu)
        } else {
            GcWork::default()
        }
    }

    /// GC for the next die that had given up collecting, has garbage again and is down to its
    /// GC reserve; None when there is none. A die's GC otherwise runs only when host data is
    /// placed on it or one of its blocks finishes programming, and a die down to its reserve
    /// takes no host data: without this it would stay out of use for good, and once every
    /// die was, the drive would stop. The drive calls it before it places buffered data.
    pub fn collect_starved(&mut self) -> Option<(u32, GcWork)> {
        while let Some(die) = self.unstuck.pop() {
            let d = &self.die_state[die as usize];
            if d.stuck || self.accepts_host_data(die) {
                continue;
            }
            return Some((die, self.collect_if_needed(die, self.ius_per_pu)));
        }
        None
    }

    /// Whether some die waits in [`Ftl::collect_starved`]'s list (one load, for the hot path).
    #[inline]
    pub fn has_unstuck(&self) -> bool {
        !self.unstuck.is_empty()
    }

    /// Mark `die`'s GC as having given up (or not), for tests of what takes host data.
    #[cfg(test)]
    pub(crate) fn set_stuck(&mut self, die: u32, stuck: bool) {
        self.die_state[die as usize].stuck = stuck;
    }

    /// Whether host data may be placed on `die` now without exhausting its GC reserve.
    #[inline]
    pub fn accepts_host_data(&self, die: u32) -> bool {
        let d = &self.die_state[die as usize];
        !d.stuck && (d.host_block.is_some() || d.slc_block.is_some() || d.free.len() > 1)
    }

    // ---- SLC cache -----------------------------------------------------------------------

    pub fn has_slc_cache(&self) -> bool {
        self.slc_static_ius + self.slc_dynamic_max_ius > 0
    }

    /// SLC capacity (IUs of user data) allowed now: the static part plus the dynamic part,
    /// which can borrow at most the free user space divided by the bits per cell.
    pub fn slc_budget_ius(&self) -> u64 {
        let free_user = self.logical_ius().saturating_sub(self.valid_total);
        self.slc_static_ius + self.slc_dynamic_max_ius.min(free_user / self.bits as u64)
    }

    /// IUs of SLC capacity in blocks currently used in SLC mode.
    pub fn slc_used_ius(&self) -> u64 {
        self.slc_blocks * self.ius_per_slc_block as u64
    }

    /// Where the next host unit on `die` goes: SLC while the cache has room, native after.
    /// A new SLC block is opened only from a die's spare free blocks, never its GC reserve.
    pub fn host_mode(&self, die: u32) -> Mode {
        if !self.has_slc_cache() {
            return Mode::Native;
        }
        let d = &self.die_state[die as usize];
        if d.slc_block.is_some() {
            return Mode::Slc;
        }
        if d.free.len() > 1 && self.slc_used_ius() + self.ius_per_slc_block as u64 <= self.slc_budget_ius() {
            Mode::Slc
        } else {
            Mode::Native
        }
    }

    /// IUs in one program unit of `mode`.
    pub fn unit_ius(&self, mode: Mode) -> u32 {
        match mode {
            Mode::Native => self.ius_per_pu,
            Mode::Slc => self.ius_per_slc_pu,
        }
    }

    // ---- host data -----------------------------------------------------------------------

    /// Place one native program unit of host data (`lpns`, at most one unit; the rest is
    /// padding) on `die`. Runs GC on that die when its free blocks fall under the threshold.
    pub fn place_host_unit(&mut self, die: u32, lpns: &[u32]) -> Placement {
        self.place_host_unit_in(die, lpns, Mode::Native)
    }

    /// Place one program unit of host data in blocks of `mode` on `die`.
    pub fn place_host_unit_in(&mut self, die: u32, lpns: &[u32], mode: Mode) -> Placement {
        let per_unit = self.unit_ius(mode);
        debug_assert!(lpns.len() <= per_unit as usize && !lpns.is_empty());
        debug_assert!(self.accepts_host_data(die));
        let slc = mode == Mode::Slc;
        let open = if slc { self.die_state[die as usize].slc_block } else { self.die_state[die as usize].host_block };
        if open.is_none() {
            let b = self.open_block(die, slc);
            let d = &mut self.die_state[die as usize];
            if slc {
                d.slc_block = Some(b);
                d.slc_next = 0;
            } else {
                d.host_block = Some(b);
                d.host_next = 0;
            }
        }
        let cap = if slc { self.ius_per_slc_block } else { self.ius_per_block };
        let d = &mut self.die_state[die as usize];
        let (block, next) = if slc {
            (d.slc_block.expect("open SLC block"), &mut d.slc_next)
        } else {
            (d.host_block.expect("open host block"), &mut d.host_next)
        };
        let first_slot = block * self.ius_per_block + *next;
        *next += per_unit;
        let full = *next >= cap;
        self.blocks[block as usize].filled = first_slot % self.ius_per_block + per_unit;
        self.prefetch_old_slots(lpns);
        for (i, &lpn) in lpns.iter().enumerate() {
            if let Some(old) = self.map(lpn, first_slot + i as u32) {
                self.reclaim_empty_slc(old);
            }
        }
        self.clock += lpns.len() as u64;
        self.counters.host_ius += lpns.len() as u64;
        if slc {
            self.counters.slc_ius += lpns.len() as u64;
        }
        self.counters.padding_ius += (per_unit as usize - lpns.len()) as u64;
        if full {
            self.blocks[block as usize].state = BlockState::Closed;
            self.sync_candidate(block);
            let d = &mut self.die_state[die as usize];
            if slc {
                d.slc_block = None;
            } else {
                d.host_block = None;
            }
        }
        // GC keeps pace with the host: a share of relocations for every unit written, by the
        // flash it took (an SLC unit takes `bits` times its data's worth).
        let gc = self.collect_if_needed(die, if slc { per_unit * self.bits } else { per_unit });
        Placement { block, first_slot, gc }
    }

    /// Forget logical IU `lpn` (TRIM): its slot becomes garbage for GC to reclaim.
    pub fn trim(&mut self, lpn: u32) {
        let old = self.map.slot(lpn);
        if old != self.no_slot {
            self.invalidate(old);
            self.map.set_slot(lpn, self.no_slot);
            self.valid_total -= 1;
            self.counters.trimmed_ius += 1;
            self.reclaim_empty_slc(old / self.ius_per_block);
        }
    }

    /// Point `lpn` at `slot`; returns the block of the slot it leaves, if it had one.
    fn map(&mut self, lpn: u32, slot: u32) -> Option<u32> {
        let old = self.map.slot(lpn);
        let left = if old != self.no_slot {
            self.invalidate(old);
            Some(old / self.ius_per_block)
        } else {
            self.valid_total += 1;
            None
        };
        self.map.link(lpn, slot);
        let block = slot / self.ius_per_block;
        self.blocks[block as usize].valid += 1;
        let die = block / self.blocks_per_die;
        self.die_state[die as usize].victims.raise_valid(block - die * self.blocks_per_die);
        left
    }

    /// A closed SLC block left with no valid data by the host (overwrite or TRIM) is erased
    /// right away, so its space goes back to the cache: it holds nothing GC would move, and
    /// the cache budget counts SLC blocks, not their data. The die pays the erase later.
    fn reclaim_empty_slc(&mut self, block: u32) {
        let b = &self.blocks[block as usize];
        let die = block / self.blocks_per_die;
        if !(b.slc && b.valid == 0 && b.state == BlockState::Closed && self.programmed[block as usize] >= b.filled)
            || self.die_state[die as usize].victim == Some(block)
        {
            return;
        }
        let mut work = GcWork::default();
        self.erase(die, block, &mut work);
        self.die_state[die as usize].slc_erases_owed += work.slc_erases;
    }

    fn invalidate(&mut self, slot: u32) {
        self.map.set_lpn(slot, self.no_lpn);
        let blk = (slot / self.ius_per_block) as usize;
        self.blocks[blk].valid -= 1;
        let die = (blk as u32) / self.blocks_per_die;
        let d = &mut self.die_state[die as usize];
        d.victims.lower_valid(blk as u32 - die * self.blocks_per_die);
        // Freed space on a die that GC had given up on makes it usable again, once it collects.
        // A die is in the list once, at its latest turn: it may give up and come back again
        // before collect_starved reaches it.
        if d.stuck {
            d.stuck = false;
            self.unstuck.retain(|&x| x != die);
            self.unstuck.push(die);
        }
    }

    /// Take the least-worn free block of the die (dynamic wear levelling).
    fn open_block(&mut self, die: u32, slc: bool) -> u32 {
        let b = self.die_state[die as usize]
            .free
            .take_least_worn()
            .expect("FTL invariant: a die always keeps a free block for GC");
        let blk = &mut self.blocks[b as usize];
        debug_assert_eq!(blk.state, BlockState::Free);
        blk.state = BlockState::Open;
        blk.valid = 0;
        blk.filled = 0;
        blk.slc = slc;
        self.programmed[b as usize] = 0;
        blk.stamp = self.clock;
        if slc {
            self.slc_blocks += 1;
            self.die_state[die as usize].slc_blocks += 1;
        }
        b
    }

    // ---- garbage collection, folding, wear levelling ---------------------------------------

    /// Incremental foreground GC. Once a die is short of free blocks it empties one victim at
    /// a time, relocating for each `host_ius` written as many IUs as the victim's
    /// valid-to-free ratio demands (with some headroom), so GC work is spread between host
    /// programs instead of stalling the die for a whole block. Down to its last free block
    /// (kept for GC), the die finishes victims outright.
    fn collect_if_needed(&mut self, die: u32, host_ius: u32) -> GcWork {
        let owed = std::mem::take(&mut self.die_state[die as usize].slc_erases_owed);
        let mut work = GcWork { erases: owed, slc_erases: owed, ..GcWork::default() };
        let mut budget: Option<u64> = None;
        loop {
            let free = self.die_state[die as usize].free.len();
            let victim = match self.die_state[die as usize].victim {
                Some(v) => v,
                None => {
                    if free >= self.gc_threshold as usize {
                        break;
                    }
                    match self.pick_victim(die, false) {
                        Some(v) if self.worth_collecting(&self.blocks[v as usize]) => {
                            let blk = &self.blocks[v as usize];
                            let (valid, cap) = (blk.valid as f64, self.ius_per_block as f64);
                            let d = &mut self.die_state[die as usize];
                            d.victim = Some(v);
                            d.victim_next = 0;
                            d.victim_rate = valid / (cap - valid);
                            // The current victim is no candidate.
                            self.sync_candidate(v);
                            v
                        }
                        _ => {
                            self.die_state[die as usize].stuck = true;
                            break;
                        }
                    }
                }
            };
            let emergency = self.die_state[die as usize].free.len() < 2;
            let allowance = if emergency {
                u64::MAX
            } else {
                let rate = self.die_state[die as usize].victim_rate;
                *budget.get_or_insert(((host_ius as f64) * (rate * 1.25 + 0.25)).ceil() as u64)
            };
            if allowance == 0 {
                break;
            }
            let (w, finished) = self.advance_victim(die, victim, allowance);
            work.add(w);
            if let Some(b) = budget.as_mut() {
                *b = b.saturating_sub(w.relocated_ius);
            }
            if !finished && !emergency {
                break;
            }
        }
        work.add(self.level_wear(die));
        work
    }

    /// Relocate up to `allowance` valid IUs of the die's current victim; erase it when empty.
    fn advance_victim(&mut self, die: u32, victim: u32, allowance: u64) -> (GcWork, bool) {
        let from = self.die_state[die as usize].victim_next;
        let (work, next) = self.relocate(die, victim, from, allowance);
        let cap = self.capacity_of(&self.blocks[victim as usize]);
        if next >= cap {
            self.die_state[die as usize].victim = None;
            let mut work = work;
            self.erase(die, victim, &mut work);
            (work, true)
        } else {
            self.die_state[die as usize].victim_next = next;
            (work, false)
        }
    }

    /// Background work for an idle die: fold one SLC block, or collect one victim if the die
    /// has fewer free blocks than the background target. None when there is nothing to do.
    pub fn background_step(&mut self, die: u32, fold: bool) -> Option<GcWork> {
        if fold {
            // An idle drive stops filling its open SLC block so that it can be folded too.
            if let Some(b) = self.die_state[die as usize].slc_block.take() {
                self.blocks[b as usize].state = BlockState::Closed;
                self.sync_candidate(b);
            }
            if let Some(v) = self.pick_victim(die, true) {
                return Some(self.collect_block(die, v));
            }
        }
        if (self.die_state[die as usize].free.len() as u32) < self.background_gc_blocks {
            let v = self.pick_victim(die, false)?;
            if self.worth_collecting(&self.blocks[v as usize]) {
                return Some(self.collect_block(die, v));
            }
        }
        None
    }

    /// Whether `die` holds SLC data that folding could move (or GC work for the background).
    pub fn has_background_work(&self, die: u32, fold: bool) -> bool {
        let d = &self.die_state[die as usize];
        (fold && d.slc_blocks > 0) || (d.free.len() as u32) < self.background_gc_blocks
    }

    /// Victim among the die's closed, fully programmed blocks: by the GC policy, or (for
    /// `slc_only`, folding) the oldest SLC block.
    fn pick_victim(&self, die: u32, slc_only: bool) -> Option<u32> {
        let first = die * self.blocks_per_die;
        let victims = &self.die_state[die as usize].victims;
        if slc_only {
            return victims.oldest_slc().map(|p| first + p);
        }
        if self.policy == GcPolicy::Greedy {
            return victims.fewest_valid().map(|p| first + p);
        }
        self.scan_victim(die, slc_only)
    }

    /// [`Ftl::pick_victim`] by a scan of the die's blocks: what cost-benefit GC still does (its
    /// scores move with the clock, so no tree ordered once keeps them in order), and what
    /// tests hold the trees' choices to.
    fn scan_victim(&self, die: u32, slc_only: bool) -> Option<u32> {
        let first = die * self.blocks_per_die;
        let current = self.die_state[die as usize].victim;
        let candidates = (first..first + self.blocks_per_die).filter(|&b| {
            let blk = &self.blocks[b as usize];
            blk.state == BlockState::Closed
                && self.programmed[b as usize] >= blk.filled
                && (!slc_only || blk.slc)
                && Some(b) != current
        });
        if slc_only {
            return candidates.min_by_key(|&b| self.blocks[b as usize].stamp);
        }
        match self.policy {
            GcPolicy::Greedy => candidates.min_by_key(|&b| self.blocks[b as usize].valid),
            GcPolicy::CostBenefit => {
                // Maximise (1 − u)·age / 2u; an empty block (u = 0) wins outright.
                let score = |b: u32| {
                    let blk = &self.blocks[b as usize];
                    let u = blk.valid as f64 / self.ius_per_block as f64;
                    let age = (self.clock - blk.stamp) as f64 + 1.0;
                    if u == 0.0 {
                        f64::INFINITY
                    } else {
                        (1.0 - u) * age / (2.0 * u)
                    }
                };
                candidates.max_by(|&a, &b| score(a).total_cmp(&score(b)).then(b.cmp(&a)))
            }
        }
    }

    /// Relocate the valid IUs of `victim` to the die's GC block, then erase it.
    fn collect_block(&mut self, die: u32, victim: u32) -> GcWork {
        let cap = self.capacity_of(&self.blocks[victim as usize]);
        let (mut work, next) = self.relocate(die, victim, 0, u64::MAX);
        debug_assert!(next >= cap);
        self.erase(die, victim, &mut work);
        work
    }

    /// Move valid IUs of `victim`, from slot offset `from`, to the GC block until `allowance`
    /// have moved or the block's end; returns the work and the offset reached.
    fn relocate(&mut self, die: u32, victim: u32, from: u32, allowance: u64) -> (GcWork, u32) {
        let victim_slc = self.blocks[victim as usize].slc;
        let mut work = GcWork::default();
        let base = victim * self.ius_per_block;
        let cap = self.capacity_of(&self.blocks[victim as usize]);
        let mut last_page = u32::MAX;
        // Relocation touches the map entry of every valid IU, at random places in a map far
        // larger than the caches: ask for entries a few IUs ahead so the misses overlap.
        const AHEAD: u32 = 32;
        for off in from..(from + AHEAD).min(cap) {
            self.prefetch_slot_owner(base + off);
        }
        let mut off = from;
        while off < cap && work.relocated_ius < allowance {
            let slot = base + off;
            if off + AHEAD < cap {
                self.prefetch_slot_owner(slot + AHEAD);
            }
            off += 1;
            let lpn = self.map.lpn(slot);
            if lpn == self.no_lpn {
                continue;
            }
            let page = slot / self.ius_per_page;
            if page != last_page {
                if victim_slc {
                    work.slc_page_reads += 1;
                } else {
                    work.page_reads += 1;
                }
                last_page = page;
            }
            let dst = self.gc_slot(die, &mut work);
            self.map(lpn, dst);
            work.relocated_ius += 1;
        }
        self.counters.gc_ius += work.relocated_ius;
        if victim_slc {
            self.counters.folded_ius += work.relocated_ius;
        }
        (work, off)
    }

    /// Erase an emptied victim and give it back to the die's free blocks.
    fn erase(&mut self, die: u32, victim: u32, work: &mut GcWork) {
        self.counters.gc_runs += 1;
        self.counters.erases += 1;
        work.erases += 1;
        let blk = &mut self.blocks[victim as usize];
        debug_assert_eq!(blk.valid, 0);
        if blk.slc {
            work.slc_erases += 1;
            self.slc_blocks -= 1;
        }
        let was_slc = blk.slc;
        blk.state = BlockState::Free;
        blk.erases += 1;
        self.erases_total += 1;
        self.erases_max = self.erases_max.max(blk.erases);
        blk.filled = 0;
        blk.slc = false;
        self.programmed[victim as usize] = 0;
        let erases = blk.erases;
        let d = &mut self.die_state[die as usize];
        d.free.push(victim, erases);
        d.erases_since_wear_check += 1;
        d.erases_max = d.erases_max.max(erases);
        if was_slc {
            d.slc_blocks -= 1;
        }
        d.victims.set(victim - die * self.blocks_per_die, None);
    }

    /// Static wear levelling: when the die's erase counts spread too far, move the data of
    /// its least-worn closed block (cold data pins it) so the block rejoins the rotation.
    fn level_wear(&mut self, die: u32) -> GcWork {
        // Checked after every erase on the die: one cold block moved per check keeps up with
        // a hot set that cycles through few blocks (checking every 64 erases did not).
        if self.wear_spread == 0 || self.die_state[die as usize].erases_since_wear_check == 0 {
            return GcWork::default();
        }
        let d = &mut self.die_state[die as usize];
        d.erases_since_wear_check = 0;
        let max = d.erases_max;
        let coldest = d.victims.least_erased().map(|p| die * self.blocks_per_die + p);
        match coldest {
            Some(b) if max - self.blocks[b as usize].erases > self.wear_spread
                && self.die_state[die as usize].free.len() >= 2 =>
            {
                self.counters.wear_level_moves += 1;
                self.collect_block(die, b)
            }
            _ => GcWork::default(),
        }
    }

    /// Next slot of the die's GC block; GC data is kept apart from host data (it is colder).
    fn gc_slot(&mut self, die: u32, work: &mut GcWork) -> u32 {
        if self.die_state[die as usize].gc_block.is_none() {
            let b = self.open_block(die, false);
            let d = &mut self.die_state[die as usize];
            d.gc_block = Some(b);
            d.gc_next = 0;
        }
        let ius_per_block = self.ius_per_block;
        let ius_per_pu = self.ius_per_pu;
        let d = &mut self.die_state[die as usize];
        let block = d.gc_block.expect("open GC block");
        let off = d.gc_next;
        if off.is_multiple_of(ius_per_pu) {
            work.program_units += 1;
        }
        d.gc_next += 1;
        let full = d.gc_next >= ius_per_block;
        // Relocated data is programmed by the time anything queued behind the GC reaches the die.
        self.blocks[block as usize].filled = off + 1;
        self.programmed[block as usize] = off + 1;
        if full {
            self.die_state[die as usize].gc_block = None;
            self.blocks[block as usize].state = BlockState::Closed;
            self.sync_candidate(block);
        }
        block * ius_per_block + off
    }

    /// Erase count of every block (wear, as SMART-like tools would show it per block).
    pub fn block_erases(&self) -> impl Iterator<Item = u32> + '_ {
        self.blocks.iter().map(|b| b.erases)
    }

    /// Mean erase count per block. Bit-for-bit the same f64 as summing the counts as f64s
    /// block by block (what this used to do): every partial sum of that loop is an integer
    /// below 2^53, so exactly representable and no addition rounds, and the integer total,
    /// being below 2^53 too, converts exactly. (2^53 erases is ~6.6e9 per block on a
    /// 1.37-million-block drive, far beyond any flash.) `check_invariants` checks this.
    pub fn mean_block_erases(&self) -> f64 {
        self.erases_total as f64 / self.blocks.len().max(1) as f64
    }

    /// Check the FTL's books: every mapped IU is valid where it points, valid counts match,
    /// and valid + invalid + free slots account for the whole flash. Used by tests.
    pub fn check_invariants(&self) -> Result<(), String> {
        let mut valid_per_block = vec![0u32; self.blocks.len()];
        for lpn in 0..self.map.logical() as u32 {
            let slot = self.map.slot(lpn);
            if slot == self.no_slot {
                continue;
            }
            if self.map.lpn(slot) != lpn {
                return Err(format!("lpn {lpn} -> slot {slot} but slot holds {}", self.map.lpn(slot)));
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
        let mapped: u64 = valid_per_block.iter().map(|&v| v as u64).sum();
        if mapped != self.valid_total {
            return Err(format!("{mapped} IUs mapped but the running count says {}", self.valid_total));
        }
        let slc = self.blocks.iter().filter(|b| b.slc && b.state != BlockState::Free).count() as u64;
        if slc != self.slc_blocks {
            return Err(format!("{slc} blocks in SLC mode but the count says {}", self.slc_blocks));
        }
        let free_listed: usize = self.die_state.iter().map(|d| d.free.len()).sum();
        let free_state = self.blocks.iter().filter(|b| b.state == BlockState::Free).count();
        if free_listed != free_state {
            return Err(format!("{free_listed} blocks on free lists but {free_state} marked free"));
        }
        for (die, d) in self.die_state.iter().enumerate() {
            for &b in d.free.as_slice() {
                let blk = self
                    .blocks
                    .get(b as usize)
                    .ok_or_else(|| format!("die {die} lists free block {b} of {}", self.blocks.len()))?;
                let owner = b / self.blocks_per_die;
                if owner != die as u32 || blk.state != BlockState::Free {
                    return Err(format!("die {die} lists block {b} as free, a {:?} block of die {owner}", blk.state));
                }
            }
            d.free.check(|b| self.blocks[b as usize].erases).map_err(|e| format!("die {die}: {e}"))?;
            let first = die as u32 * self.blocks_per_die;
            d.victims.check(|p| self.candidate(first + p)).map_err(|e| format!("die {die}: GC candidates: {e}"))?;
            let blocks = &self.blocks[first as usize..(first + self.blocks_per_die) as usize];
            let slc = blocks.iter().filter(|b| b.slc && b.state != BlockState::Free).count() as u32;
            if slc != d.slc_blocks {
                return Err(format!("die {die} has {slc} blocks in SLC mode but its count says {}", d.slc_blocks));
            }
            let max = blocks.iter().map(|b| b.erases).max().unwrap_or(0);
            if max != d.erases_max {
                return Err(format!("die {die}: most-erased block has {max} erases but its running max says {}", d.erases_max));
            }
        }
        let erases: u64 = self.blocks.iter().map(|b| b.erases as u64).sum();
        if erases != self.erases_total {
            return Err(format!("blocks were erased {erases} times but the running sum says {}", self.erases_total));
        }
        let max = self.blocks.iter().map(|b| b.erases).max().unwrap_or(0);
        if max != self.erases_max {
            return Err(format!("most-erased block has {max} erases but the running max says {}", self.erases_max));
        }
        // The mean from the running sum is the very f64 a block-by-block f64 sum gives.
        let scanned = self.blocks.iter().map(|b| b.erases as f64).sum::<f64>() / self.blocks.len().max(1) as f64;
        if scanned.to_bits() != self.mean_block_erases().to_bits() {
            return Err(format!("mean erases {scanned} by a scan but {} from the running sum", self.mean_block_erases()));
        }
        Ok(())
    }

    /// Total IUs currently mapped (valid).
    pub fn valid_ius(&self) -> u64 {
        self.blocks.iter().map(|b| b.valid as u64).sum()
    }

    /// Where `self` and `other` first differ, for tests that compare two ways to one state
    /// (None where they are equal).
    #[cfg(test)]
    pub(crate) fn first_difference(&self, other: &Ftl) -> Option<String> {
        if let Some(i) = (0..self.blocks.len()).find(|&i| self.blocks[i] != other.blocks[i]) {
            return Some(format!("block {i}: {:?} vs {:?}", self.blocks[i], other.blocks[i]));
        }
        if let Some(i) = (0..self.blocks.len()).find(|&i| self.programmed[i] != other.programmed[i]) {
            return Some(format!("block {i} programmed {} vs {}", self.programmed[i], other.programmed[i]));
        }
        if let Some(d) = (0..self.die_state.len()).find(|&d| self.die_state[d] != other.die_state[d]) {
            let (a, b) = (&self.die_state[d], &other.die_state[d]);
            return Some(format!(
                "die {d}: open {:?}/{} {:?}/{} gc {:?}/{}, free {:?}.., stuck {}, victim {:?} vs open {:?}/{} {:?}/{} gc {:?}/{}, free {:?}.., stuck {}, victim {:?}",
                a.host_block, a.host_next, a.slc_block, a.slc_next, a.gc_block, a.gc_next, &a.free.as_slice()[..a.free.len().min(4)], a.stuck, a.victim,
                b.host_block, b.host_next, b.slc_block, b.slc_next, b.gc_block, b.gc_next, &b.free.as_slice()[..b.free.len().min(4)], b.stuck, b.victim,
            ));
        }
        if self.map != other.map {
            let l = (0..self.map.logical() as u32).find(|&l| self.map.slot(l) != other.map.slot(l));
            return Some(format!("maps differ (first IU mapped apart: {l:?})"));
        }
        if self.counters != other.counters {
            return Some(format!("counters {:?} vs {:?}", self.counters, other.counters));
        }
        let scalars = |f: &Ftl| (f.clock, f.valid_total, f.erases_total, f.erases_max, f.slc_blocks, f.unstuck.clone());
        if scalars(self) != scalars(other) {
            return Some(format!("clock, valid, erases, max, SLC blocks, unstuck {:?} vs {:?}", scalars(self), scalars(other)));
        }
        (self != other).then(|| "configuration differs".to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Ftl {
        let mut cfg = SsdConfig::generic(1);
        cfg.nand.blocks_per_plane = 12;
        Ftl::new(&cfg)
    }

    /// A free block whose erase count changed behind the free list's back is caught, even
    /// with the running wear totals kept right.
    #[test]
    fn invariants_catch_a_stale_free_block_tree() {
        let mut ftl = small();
        ftl.check_invariants().unwrap();
        let b = ftl.die_state[0].free.as_slice()[5] as usize;
        ftl.blocks[b].erases += 1;
        ftl.erases_total += 1;
        ftl.erases_max = 1;
        let e = ftl.check_invariants().unwrap_err();
        assert!(e.contains("free-block tree"), "{e}");
    }

    /// A free list naming a block of another die is caught.
    #[test]
    fn invariants_catch_a_free_block_on_the_wrong_die() {
        let mut ftl = small();
        assert!(ftl.dies >= 2);
        let other = ftl.die_state[1].free.take_least_worn().unwrap();
        // Die 0 hands a block out and takes die 1's in its place: the counts still balance.
        let mine = ftl.die_state[0].free.take_least_worn().unwrap();
        ftl.blocks[mine as usize].state = BlockState::Open;
        ftl.die_state[0].free.push(other, 0);
        let e = ftl.check_invariants().unwrap_err();
        assert!(e.contains("lists block"), "{e}");
    }
    /// A candidate's valid count changed behind its die's tree's back is caught.
    #[test]
    fn invariants_catch_a_stale_candidate_tree() {
        let mut ftl = small();
        let lpns: Vec<u32> = (0..ftl.ius_per_pu).collect();
        // Fill one block of die 0 and let it finish programming: a candidate.
        let mut block = None;
        while block.is_none() || ftl.blocks[block.unwrap() as usize].state != BlockState::Closed {
            let p = ftl.place_host_unit(0, &lpns);
            ftl.mark_programmed(p.block, ftl.ius_per_pu);
            block = Some(p.block);
        }
        ftl.check_invariants().unwrap();
        let b = block.unwrap() as usize;
        ftl.blocks[b].erases += 1;
        ftl.erases_total += 1;
        ftl.erases_max = ftl.erases_max.max(ftl.blocks[b].erases);
        ftl.die_state[0].erases_max = ftl.erases_max;
        let e = ftl.check_invariants().unwrap_err();
        assert!(e.contains("erase-count tree"), "{e}");
    }

    /// The scans `level_wear` and `has_background_work` did before the per-die books.
    fn scan_coldest(ftl: &Ftl, die: u32) -> Option<u32> {
        let first = die * ftl.blocks_per_die;
        let current = ftl.die_state[die as usize].victim;
        (first..first + ftl.blocks_per_die)
            .filter(|&b| {
                let blk = &ftl.blocks[b as usize];
                blk.state == BlockState::Closed && ftl.programmed[b as usize] >= blk.filled && Some(b) != current
            })
            .min_by_key(|&b| ftl.blocks[b as usize].erases)
    }

    fn scan_background_work(ftl: &Ftl, die: u32, fold: bool) -> bool {
        let first = die * ftl.blocks_per_die;
        let closed_slc = (first..first + ftl.blocks_per_die).any(|b| {
            let blk = &ftl.blocks[b as usize];
            blk.slc && blk.state != BlockState::Free
        });
        (fold && closed_slc) || (ftl.die_state[die as usize].free.len() as u32) < ftl.background_gc_blocks
    }

    /// Two dies of 13 blocks of 48 IUs (TLC, so SLC blocks of 16), ~55 % of the flash
    /// addressable; with an SLC cache or without.
    fn tiny(slc: bool, policy: GcPolicy) -> Ftl {
        use super::super::config::{FoldPolicy, SlcCacheConfig};
        let mut cfg = SsdConfig::generic(1);
        cfg.nand.channels = 1;
        cfg.nand.dies_per_channel = 2;
        cfg.nand.pages_per_block = 6;
        cfg.nand.blocks_per_plane = 13;
        cfg.capacity_bytes = 2 * 7 * 48 * 4096;
        cfg.write_buffer_bytes = 0;
        cfg.ftl.gc_policy = policy;
        cfg.ftl.background_gc_blocks = 5;
        cfg.ftl.wear_leveling_spread = 2;
        if slc {
            cfg.slc_cache = Some(SlcCacheConfig {
                static_bytes: 32 * 4096,
                dynamic_max_bytes: 64 * 4096,
                read_ns: 30_000,
                program_ns: 200_000,
                erase_ns: 2_000_000,
                fold: FoldPolicy::Idle,
            });
        }
        cfg.validate().expect("a valid tiny drive");
        Ftl::new(&cfg)
    }

    #[derive(Clone, Debug)]
    enum Op {
        /// Write one program unit of IUs from `.0` (wrapping) on the next die that takes data.
        Write(u32),
        /// Finish the oldest `.0` programs.
        Finish(usize),
        Trim(u32),
        Background(u32, bool),
        Starved,
    }

    fn ops() -> impl proptest::strategy::Strategy<Value = Vec<Op>> {
        use proptest::prelude::*;
        prop::collection::vec(
            prop_oneof![
                6 => any::<u32>().prop_map(Op::Write),
                3 => (1usize..4).prop_map(Op::Finish),
                1 => any::<u32>().prop_map(Op::Trim),
                1 => (0u32..2, any::<bool>()).prop_map(|(d, f)| Op::Background(d, f)),
                1 => Just(Op::Starved),
            ],
            0..400,
        )
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(64))]
        /// Over random writes, late program completions, trims and background work, every
        /// choice made from the per-die books is the one the old scans of the die make, the
        /// books check out, and a saved state restores to an equal FTL (books rebuilt).
        #[test]
        fn choices_match_the_scans(slc in proptest::prelude::any::<bool>(), cb in proptest::prelude::any::<bool>(), ops in ops()) {
            let policy = if cb { GcPolicy::CostBenefit } else { GcPolicy::Greedy };
            let mut ftl = tiny(slc, policy);
            let logical = ftl.logical_ius() as u32;
            let mut pending: std::collections::VecDeque<(u32, u32)> = Default::default();
            let mut next_die = 0u32;
            for op in ops {
                match op {
                    Op::Write(start) => {
                        if let Some(die) = (0..ftl.dies).map(|i| (next_die + i) % ftl.dies).find(|&d| ftl.accepts_host_data(d)) {
                            next_die = (die + 1) % ftl.dies;
                            let mode = ftl.host_mode(die);
                            let n = ftl.unit_ius(mode);
                            let lpns: Vec<u32> = (0..n).map(|i| (start.wrapping_add(i * 7)) % logical).collect::<std::collections::BTreeSet<_>>().into_iter().collect();
                            let p = ftl.place_host_unit_in(die, &lpns, mode);
                            pending.push_back((p.block, n));
                        }
                    }
                    Op::Finish(k) => {
                        for (block, n) in pending.drain(..k.min(pending.len())) {
                            ftl.mark_programmed(block, n);
                        }
                    }
                    Op::Trim(lpn) => ftl.trim(lpn % logical),
                    Op::Background(die, fold) => {
                        if ftl.has_background_work(die, fold) {
                            ftl.background_step(die, fold);
                        }
                    }
                    Op::Starved => while ftl.collect_starved().is_some() {},
                }
                for die in 0..ftl.dies {
                    let first = die * ftl.blocks_per_die;
                    for slc_only in [false, true] {
                        proptest::prop_assert_eq!(ftl.pick_victim(die, slc_only), ftl.scan_victim(die, slc_only));
                    }
                    proptest::prop_assert_eq!(ftl.die_state[die as usize].victims.least_erased().map(|p| first + p), scan_coldest(&ftl, die));
                    for fold in [false, true] {
                        proptest::prop_assert_eq!(ftl.has_background_work(die, fold), scan_background_work(&ftl, die, fold));
                    }
                }
                proptest::prop_assert_eq!(ftl.check_invariants(), Ok(()));
            }
            let mut saved = Vec::new();
            ftl.save_state(&mut saved).unwrap();
            let mut restored = tiny(slc, policy);
            restored.restore_state(&mut &saved[..]).map_err(|e| proptest::test_runner::TestCaseError::fail(e.0))?;
            proptest::prop_assert!(restored == ftl);
        }
    }
}
