//! Floors for the throughput runner: what a simulator of the same shape could at best do per
//! CPU second, measured in the same process as the scenario so that a ratio to the floor means
//! the same on a loaded and on a quiet machine.
//!
//! * The *read floor* is a bare event loop shaped like the simulator: a binary heap of
//!   (time, seq) events, the drive's dies and channels, four events per request (arrive at
//!   the controller, die done, transfer done, complete at the host, which issues the next),
//!   the scenario's queue depth, uniform random logical pages, and no model state beyond
//!   when each die and channel is next free.
//! * The *write floor* is the same loop plus only the state updates a page-mapped FTL cannot
//!   avoid at a given write amplification: write the map entry, invalidate the old location
//!   (reverse map and the block's valid count), and for each GC copy read the page's owner
//!   and rewrite its map entry. The arrays have the drive's size (a u32 per logical page, a
//!   u32 per physical page, a count per block), so their cache misses are real. Victims are
//!   taken first in, first out around a ring of physical pages sized so that the ring's
//!   steady-state WAF is the scenario's (no victim search: choosing victims is work a
//!   smarter FTL does to lower its WAF, not work every FTL must do).

use std::cmp::Reverse;
use std::collections::BinaryHeap;

use rand::Rng as _;
use ssdlab_core::device::ssd::SsdConfig;
use ssdlab_core::engine::rng::stream;

/// No logical page / a free physical page.
const NONE: u32 = u32::MAX;

/// The loop's shape and timing, taken from a drive's configuration.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Shape {
    pub dies: u32,
    pub channels: u32,
    /// Requests outstanding at once (the scenario's queue depth).
    pub depth: u32,
    /// Logical 4 KiB pages the requests are drawn from.
    pub logical_pages: u64,
    /// Controller latency before the die and again before completion.
    pub controller_ns: u64,
    /// Die busy time per request.
    pub die_ns: u64,
    /// Channel busy time per request (one mapping unit over the bus).
    pub channel_ns: u64,
}

impl Shape {
    /// The read floor's shape for `cfg` at queue depth `depth`: die busy for a page read,
    /// the channel for one mapping unit.
    pub fn read(cfg: &SsdConfig, depth: u32) -> Shape {
        Shape {
            dies: cfg.dies(),
            channels: cfg.nand.channels,
            depth,
            logical_pages: cfg.capacity_bytes / cfg.ftl.iu_bytes,
            controller_ns: cfg.controller.latency_ns,
            die_ns: cfg.nand.read_ns,
            channel_ns: (cfg.ftl.iu_bytes * 1_000_000_000).div_ceil(cfg.nand.channel_bytes_per_s),
        }
    }

    /// The write floor's shape: as the read floor, but a die is busy for its share of a
    /// program (a program unit holds several mapping units) times the WAF.
    pub fn write(cfg: &SsdConfig, depth: u32, waf: f64) -> Shape {
        let units = (cfg.program_unit_bytes() / cfg.ftl.iu_bytes).max(1);
        Shape { die_ns: (cfg.nand.program_ns as f64 * waf.max(1.0) / units as f64) as u64, ..Shape::read(cfg, depth) }
    }
}

/// What a floor run did; the counts also keep the work from being optimised away.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FloorRun {
    pub completed: u64,
    pub events: u64,
    pub end_ns: u64,
    /// Host writes and GC copies done by the write floor (0 for the read floor).
    pub host_writes: u64,
    pub gc_copies: u64,
}

/// The state a page-mapped FTL cannot do without, on a ring of physical pages.
pub struct WriteState {
    /// Logical page → physical page.
    map: Vec<u32>,
    /// Physical page → logical page, or `NONE` when free or invalid.
    rmap: Vec<u32>,
    /// Valid pages per block.
    valid: Vec<u32>,
    block_pages: u32,
    /// Next physical page written; pages from `head` up to `tail` (around the ring) are free.
    head: u32,
    /// Oldest written physical page: the next one GC looks at.
    tail: u32,
    free: u32,
    /// Times `tail` went round the ring.
    pub laps: u64,
    pub host_writes: u64,
    pub gc_copies: u64,
}

impl WriteState {
    /// Physical pages a first-in-first-out ring needs for uniform random writes over
    /// `logical` pages to run at `waf`: a page written survives the H host writes of one lap
    /// with probability exp(−H/L), so the share u of the victim still valid satisfies
    /// u = exp(−P(1−u)/L); with u = 1 − 1/WAF, P = L·WAF·ln(WAF/(WAF−1)). Capped at 4 L (a
    /// WAF of about 1.01): below that the floor copies less than the scenario did.
    pub fn ring_pages(logical: u64, waf: f64) -> u64 {
        let p = if waf > 1.0 { logical as f64 * waf * (waf / (waf - 1.0)).ln() } else { f64::INFINITY };
        (p.ceil() as u64).clamp(logical + 2, 4 * logical.max(1))
    }

    /// A drive of `logical` pages, filled sequentially, on a ring sized for `waf`, with
    /// blocks of `block_pages` pages.
    pub fn new(logical: u64, waf: f64, block_pages: u32) -> WriteState {
        let block_pages = block_pages.max(1);
        let ring = Self::ring_pages(logical, waf).div_ceil(block_pages as u64) * block_pages as u64;
        assert!(ring < NONE as u64, "the write floor's ring must fit 32-bit page numbers");
        let mut rmap = vec![NONE; ring as usize];
        let mut valid = vec![0u32; (ring / block_pages as u64) as usize];
        for (l, r) in rmap.iter_mut().take(logical as usize).enumerate() {
            *r = l as u32;
            valid[l / block_pages as usize] += 1;
        }
        WriteState {
            map: (0..logical as u32).collect(),
            rmap,
            valid,
            block_pages,
            head: logical as u32,
            tail: 0,
            free: (ring - logical) as u32,
            laps: 0,
            host_writes: 0,
            gc_copies: 0,
        }
    }

    /// Random overwrites (no event loop) until GC has gone round the ring twice, so that the
    /// timed runs start at the ring's steady state.
    pub fn warm_up(&mut self, seed: u64) {
        let mut rng = stream(seed, "write-floor-warm-up", 0);
        let pages = self.map.len() as u32;
        let laps = self.laps;
        while self.laps < laps + 2 {
            self.write(rng.gen_range(0..pages));
        }
    }

    pub fn logical_pages(&self) -> u64 {
        self.map.len() as u64
    }

    fn block(&self, p: u32) -> usize {
        (p / self.block_pages) as usize
    }

    fn advance(&self, p: u32) -> u32 {
        if p as usize + 1 == self.rmap.len() {
            0
        } else {
            p + 1
        }
    }

    /// Put logical page `l` at the head.
    fn place(&mut self, l: u32) {
        let p = self.head;
        self.map[l as usize] = p;
        self.rmap[p as usize] = l;
        let b = self.block(p);
        self.valid[b] += 1;
        self.head = self.advance(p);
        self.free -= 1;
    }

    /// Host write of logical page `l`, after GC has made room.
    #[inline]
    pub fn write(&mut self, l: u32) {
        // GC: keep two free pages (a copy needs one before its source frees).
        while self.free < 2 {
            let t = self.tail;
            let owner = self.rmap[t as usize];
            if owner != NONE {
                self.place(owner);
                self.rmap[t as usize] = NONE;
                let b = self.block(t);
                self.valid[b] -= 1;
                self.gc_copies += 1;
            }
            self.tail = self.advance(t);
            if self.tail == 0 {
                self.laps += 1;
            }
            self.free += 1;
        }
        let old = self.map[l as usize];
        if old != NONE {
            self.rmap[old as usize] = NONE;
            let b = self.block(old);
            self.valid[b] -= 1;
        }
        self.place(l);
        self.host_writes += 1;
    }

    /// Every logical page is mapped to exactly one physical page that points back to it, and
    /// every block's valid count is the number of pages in it that are mapped.
    pub fn check(&self) -> Result<(), String> {
        for (l, &p) in self.map.iter().enumerate() {
            if p == NONE || self.rmap[p as usize] != l as u32 {
                return Err(format!("logical page {l} maps to {p}, which does not point back"));
            }
        }
        let mapped = self.rmap.iter().filter(|&&l| l != NONE).count();
        if mapped != self.map.len() {
            return Err(format!("{mapped} physical pages are mapped for {} logical pages", self.map.len()));
        }
        for (b, chunk) in self.rmap.chunks(self.block_pages as usize).enumerate() {
            let n = chunk.iter().filter(|&&l| l != NONE).count() as u32;
            if n != self.valid[b] {
                return Err(format!("block {b} counts {} valid pages, holds {n}", self.valid[b]));
            }
        }
        Ok(())
    }
}

/// The read floor: `requests` requests through the bare loop.
pub fn read_floor(shape: Shape, requests: u64, seed: u64) -> FloorRun {
    run(shape, requests, seed, None)
}

/// The write floor: the read floor's loop, each request a host write on `state`.
pub fn write_floor(shape: Shape, requests: u64, seed: u64, state: &mut WriteState) -> FloorRun {
    assert_eq!(state.logical_pages(), shape.logical_pages, "the write state is the drive's size");
    let (w, c) = (state.host_writes, state.gc_copies);
    let mut r = run(shape, requests, seed, Some(state));
    r.host_writes = state.host_writes - w;
    r.gc_copies = state.gc_copies - c;
    r
}

// Event stages, in order; a request's four events.
const ARRIVE: u64 = 0;
const DIE_DONE: u64 = 1;
const XFER_DONE: u64 = 2;
const COMPLETE: u64 = 3;

fn run(shape: Shape, requests: u64, seed: u64, mut state: Option<&mut WriteState>) -> FloorRun {
    let mut rng = stream(seed, if state.is_some() { "write-floor" } else { "read-floor" }, 0);
    let (dies, channels) = (shape.dies.max(1) as usize, shape.channels.max(1) as usize);
    let pages = shape.logical_pages.clamp(1, NONE as u64) as u32;
    let mut die_free = vec![0u64; dies];
    let mut channel_free = vec![0u64; channels];
    // Per outstanding request (its slot in the queue): the die it uses.
    let depth = shape.depth.max(1) as u64;
    let mut slot_die = vec![0u32; depth as usize];
    // (time, seq, slot << 2 | stage), smallest first; seq breaks ties in schedule order.
    let mut heap: BinaryHeap<Reverse<(u64, u64, u64)>> = BinaryHeap::with_capacity(depth as usize * 2);
    let mut seq = 0u64;
    let mut push = |heap: &mut BinaryHeap<_>, t: u64, slot: u64, stage: u64| {
        heap.push(Reverse((t, seq, slot << 2 | stage)));
        seq += 1;
    };
    let mut issued = depth.min(requests);
    for slot in 0..issued {
        push(&mut heap, shape.controller_ns, slot, ARRIVE);
    }
    let mut out = FloorRun::default();
    let mut next_write_die = 0usize;
    while let Some(Reverse((now, _, ev))) = heap.pop() {
        out.events += 1;
        let slot = (ev >> 2) as usize;
        match ev & 3 {
            ARRIVE => {
                let l = rng.gen_range(0..pages);
                // A read goes to the die holding its page (a sequential fill stripes pages
                // over dies); a write to the next die in turn.
                let die = match state.as_deref_mut() {
                    None => l as usize % dies,
                    Some(s) => {
                        s.write(l);
                        next_write_die = (next_write_die + 1) % dies;
                        next_write_die
                    }
                };
                slot_die[slot] = die as u32;
                let start = now.max(die_free[die]);
                die_free[die] = start + shape.die_ns;
                push(&mut heap, start + shape.die_ns, slot as u64, DIE_DONE);
            }
            DIE_DONE => {
                let c = slot_die[slot] as usize % channels;
                let start = now.max(channel_free[c]);
                channel_free[c] = start + shape.channel_ns;
                push(&mut heap, start + shape.channel_ns, slot as u64, XFER_DONE);
            }
            XFER_DONE => push(&mut heap, now + shape.controller_ns, slot as u64, COMPLETE),
            _ => {
                out.completed += 1;
                out.end_ns = now;
                if issued < requests {
                    issued += 1;
                    push(&mut heap, now + shape.controller_ns, slot as u64, ARRIVE);
                }
            }
        }
    }
    out
}
