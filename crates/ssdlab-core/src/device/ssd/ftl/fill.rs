//! A fresh drive filled in order, a block at a time: the state that writing every logical IU
//! once, in order, in program units round-robin over the dies (the preconditioner's writer)
//! leaves, reached in O(log n) per block opened instead of by placing every unit.
//!
//! It holds where the page-by-page fill is regular: a fresh drive (nothing ever written),
//! native blocks only (no SLC cache: its mode switches and folding depend on the fill's
//! progress), whole program units per block (the flash map's sequential layout holds, so the
//! maps store nothing), and every die keeping at least its GC threshold of free blocks to the
//! end (so no GC runs, no die gives up on GC, and every die takes every unit in its turn).
//! Elsewhere [`Ftl::fill_in_order`] changes nothing and says so; the caller then places the
//! units one by one. Tests compare the two ways on small drives, state for state.

use super::{BlockState, Ftl};

impl Ftl {
    /// Write every logical IU once, in order, as program units of native blocks handed to
    /// the dies round-robin from die 0 (the last unit padded), with every unit's program
    /// finished: what placing the units one by one and marking each programmed leaves,
    /// counters included. Returns the number of units placed, or None, leaving the drive
    /// untouched, where the fill would not be regular (see the module doc).
    pub fn fill_in_order(&mut self) -> Option<u64> {
        let logical = self.map.logical() as u64;
        let unit = self.ius_per_pu as u64;
        let dies = self.dies as u64;
        let fresh = self.clock == 0
            && self.valid_total == 0
            && self.erases_total == 0
            && self.free_blocks() == self.total_blocks()
            && self.unstuck.is_empty();
        if !fresh || self.has_slc_cache() || !self.map.fills_in_order_from_empty() || logical == 0 {
            return None;
        }
        let units_per_block = (self.ius_per_block / self.ius_per_pu) as u64;
        let units = logical.div_ceil(unit);
        // Blocks die `d` opens: its units, a block's worth at a time, opened when the first
        // unit of each arrives. Every die must keep its GC threshold of free blocks.
        let units_of = |d: u64| units / dies + u64::from(d < units % dies);
        let most = units_of(0).div_ceil(units_per_block);
        if most + self.gc_threshold as u64 > self.blocks_per_die as u64 {
            return None;
        }
        for d in 0..self.dies {
            let n = units_of(d as u64);
            let mut k = 0u64;
            while k < n {
                // Unit `k` of the die is unit `k * dies + d` of the fill; the IUs before it
                // are whole units, so the write clock when the block opens is this.
                let first = k * dies + d as u64;
                self.clock = first * unit;
                let b = self.open_block(d, false);
                let in_block = (n - k).min(units_per_block);
                let last = (k + in_block - 1) * dies + d as u64;
                // Host IUs in the block: whole units, less the padding of the fill's last unit.
                let padding = if last == units - 1 { units * unit - logical } else { 0 };
                let filled = (in_block * unit) as u32;
                let blk = &mut self.blocks[b as usize];
                blk.valid = filled - padding as u32;
                blk.filled = filled;
                self.programmed[b as usize] = filled;
                // The die's next offset stays where its last block's units ended, even
                // once that block is full and closed (it is reset when a block opens).
                self.die_state[d as usize].host_next = filled;
                if filled == self.ius_per_block {
                    blk.state = BlockState::Closed;
                    self.sync_candidate(b);
                } else {
                    self.die_state[d as usize].host_block = Some(b);
                }
                k += in_block;
            }
        }
        self.clock = logical;
        self.valid_total = logical;
        self.map.fill_in_order(logical as u32);
        self.counters.host_ius += logical;
        self.counters.padding_ius += units * unit - logical;
        Some(units)
    }
}
