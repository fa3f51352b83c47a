//! The next I/O of one job, following fio's semantics for `rw` (with `:N`), `rwmixread`,
//! block-size distributions, alignment, the random map and `random_distribution`.

use rand::Rng as _;
use rand_distr::{Distribution as _, Normal, Zipf};

use super::spec::{BlockSizeDist, DistKind, JobSpec, RwMode};
use crate::error::ConfigError;
use crate::io::Op;
use crate::engine::rng::{splitmix64, Rng};
use rand::SeedableRng;

/// One generated I/O; `offset` is absolute on the device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Io {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
}

/// Cumulative-weight table for choosing a block size.
#[derive(Clone, Debug)]
enum SizeChooser {
    Fixed(u64),
    Split { sizes: Vec<u64>, cumulative: Vec<f64> },
    Range { min: u64, steps: u64 },
}

impl SizeChooser {
    fn new(d: &BlockSizeDist) -> Self {
        if let (Some(min), Some(max)) = (d.range_min, d.range_max) {
            if min == max {
                return SizeChooser::Fixed(min);
            }
            return SizeChooser::Range { min, steps: max / min };
        }
        let live: Vec<(u64, f64)> = d.split.iter().copied().filter(|&(_, w)| w > 0.0).collect();
        if live.len() == 1 {
            return SizeChooser::Fixed(live[0].0);
        }
        let mut acc = 0.0;
        let cumulative = live.iter().map(|&(_, w)| {
            acc += w;
            acc
        });
        let cumulative: Vec<f64> = cumulative.collect();
        SizeChooser::Split { sizes: live.iter().map(|&(s, _)| s).collect(), cumulative }
    }

    fn pick(&self, rng: &mut Rng) -> u64 {
        match self {
            SizeChooser::Fixed(s) => *s,
            SizeChooser::Range { min, steps } => min * rng.gen_range(1..=*steps),
            SizeChooser::Split { sizes, cumulative } => {
                let x = rng.gen::<f64>() * cumulative[cumulative.len() - 1];
                let i = cumulative.partition_point(|&c| c <= x).min(sizes.len() - 1);
                sizes[i]
            }
        }
    }
}

/// fio's random map: each block is hit once per pass unless `norandommap`.
///
/// A bit per block, kept in chunks allocated when first touched: a job that reads a few
/// thousand blocks of a many-terabyte region holds a few thousand chunks, not a bitmap of
/// the whole region (256 MiB for 8 TiB at 4 KiB, per job). A block in a chunk never touched
/// is free.
#[derive(Clone, Debug)]
struct RandomMap {
    chunks: Vec<Option<Box<[u64]>>>,
    words: usize,
    blocks: u64,
    used: u64,
}

/// One file's random map, kept by its job between the file's I/Os (see
/// [`Generator::swap_random_map`]); empty until the file's first random I/O.
#[derive(Clone, Debug, Default)]
pub struct FileRandomMap(Option<RandomMap>);

/// Words per chunk of the random map (32,768 blocks, 4 KiB of bits).
const MAP_CHUNK_WORDS: usize = 512;

impl RandomMap {
    fn new(blocks: u64) -> Self {
        let words = blocks.div_ceil(64) as usize;
        RandomMap { chunks: vec![None; words.div_ceil(MAP_CHUNK_WORDS)], words, blocks, used: 0 }
    }

    #[inline]
    fn word(&self, w: usize) -> u64 {
        match &self.chunks[w / MAP_CHUNK_WORDS] {
            Some(c) => c[w % MAP_CHUNK_WORDS],
            None => 0,
        }
    }

    /// The first unused block at or after `b` (wrapping), starting a new pass when full.
    fn claim_from(&mut self, b: u64, count: u64) -> u64 {
        if self.used >= self.blocks {
            self.chunks.iter_mut().for_each(|c| *c = None);
            self.used = 0;
        }
        let free = self.find_free(b);
        // A region smaller than a chunk (a small file's map) gets a chunk of its own size.
        let chunk_words = MAP_CHUNK_WORDS.min(self.words);
        for i in free..(free + count).min(self.blocks) {
            let (w, bit) = ((i / 64) as usize, i % 64);
            let chunk = self.chunks[w / MAP_CHUNK_WORDS].get_or_insert_with(|| vec![0; chunk_words].into_boxed_slice());
            let word = &mut chunk[w % MAP_CHUNK_WORDS];
            if *word & (1 << bit) == 0 {
                *word |= 1 << bit;
                self.used += 1;
            }
        }
        free
    }

    fn find_free(&self, start: u64) -> u64 {
        let n = self.words;
        let mut w = (start / 64) as usize;
        // Mask off bits before `start` in the first word.
        let mut mask = !0u64 << (start % 64);
        for _ in 0..=n {
            let free = !self.word(w) & mask;
            if free != 0 {
                let b = w as u64 * 64 + free.trailing_zeros() as u64;
                if b < self.blocks {
                    return b;
                }
            }
            w = (w + 1) % n;
            mask = !0;
        }
        unreachable!("random map reported free blocks but none found")
    }
}

/// How random offsets are drawn over the region's blocks.
#[derive(Clone, Debug)]
enum OffsetDist {
    Uniform,
    Zipf(Zipf<f64>),
    Pareto { power: f64 },
    Normal(Normal<f64>),
    Zoned { cumulative_access: Vec<f64>, starts: Vec<u64>, sizes: Vec<u64> },
}

pub struct Generator {
    mode: RwMode,
    rwmix_read: f64,
    modifier: i64,
    sizes: [SizeChooser; 3],
    align: [u64; 3],
    base: u64,
    region: u64,
    rng: Rng,
    pos: [u64; 3],
    map: Option<RandomMap>,
    dist: OffsetDist,
    scatter_mult: u64,
    since_random: u64,
    trim_then_write: Option<(u64, u64)>,
    map_unit: u64,
    /// Blocks of `map_unit` in the region (every random offset draws among them; kept, not
    /// divided out per I/O).
    blocks: u64,
    /// The usual random job's I/O, when every I/O is one: one direction, one size, a uniform
    /// block each time (no random map, no `:N`, aligned to the block unit). Its next I/O
    /// then takes one draw and no branch on the job's options; the draws are the ones
    /// [`Generator::next_io`]'s general path makes for it.
    plain: Option<(Op, u64)>,
}

impl Generator {
    pub fn new(spec: &JobSpec) -> Result<Generator, ConfigError> {
        let map_unit = *spec.block_align.iter().min().unwrap_or(&4096);
        let blocks = (spec.region_size / map_unit).max(1);
        let dist = match spec.distribution.kind {
            DistKind::Random => OffsetDist::Uniform,
            DistKind::Zipf => OffsetDist::Zipf(
                Zipf::new(blocks, spec.distribution.param).map_err(|e| ConfigError::new("distribution.param", format!("zipf: {e}")))?,
            ),
            DistKind::Pareto => {
                let h = spec.distribution.param;
                if !(h > 0.0 && h < 1.0) {
                    return Err(ConfigError::new("distribution.param", format!("pareto parameter must be in (0, 1), got {h}")));
                }
                // u^(ln h / ln(1-h)) puts a share 1-h of accesses on the first share h of
                // blocks (h = 0.2 gives the 80/20 rule).
                OffsetDist::Pareto { power: h.ln() / (1.0 - h).ln() }
            }
            DistKind::Normal => {
                let dev = spec.distribution.param / 100.0 * blocks as f64;
                OffsetDist::Normal(
                    Normal::new(blocks as f64 / 2.0, dev.max(1.0)).map_err(|e| ConfigError::new("distribution.param", format!("normal: {e}")))?,
                )
            }
            DistKind::Zoned => {
                let (mut acc, mut start) = (0.0, 0u64);
                let (mut cumulative_access, mut starts, mut sizes) = (vec![], vec![], vec![]);
                for z in &spec.distribution.zones {
                    acc += z.access_pct;
                    let size = ((z.size_pct / 100.0) * blocks as f64).round().max(1.0) as u64;
                    let size = size.min(blocks.saturating_sub(start).max(1));
                    cumulative_access.push(acc);
                    starts.push(start.min(blocks - 1));
                    sizes.push(size);
                    start += size;
                }
                OffsetDist::Zoned { cumulative_access, starts, sizes }
            }
        };
        let uniform = matches!(dist, OffsetDist::Uniform);
        let map = (spec.rw.is_random() && spec.random_map && uniform).then(|| RandomMap::new(blocks));
        let sizes = [
            SizeChooser::new(&spec.block_sizes[0]),
            SizeChooser::new(&spec.block_sizes[1]),
            SizeChooser::new(&spec.block_sizes[2]),
        ];
        let op = match spec.rw {
            RwMode::Randread => Some(Op::Read),
            RwMode::Randwrite => Some(Op::Write),
            RwMode::Randtrim => Some(Op::Trim),
            _ => None,
        };
        let plain = match (op, uniform && map.is_none() && spec.rw_modifier <= 1) {
            (Some(op), true) => match sizes[op.index()] {
                SizeChooser::Fixed(len) if spec.block_align[op.index()] <= map_unit => Some((op, len.min(spec.region_size))),
                _ => None,
            },
            _ => None,
        };
        Ok(Generator {
            mode: spec.rw,
            rwmix_read: spec.rwmix_read,
            modifier: spec.rw_modifier,
            sizes,
            align: spec.block_align,
            base: spec.region_offset,
            region: spec.region_size,
            rng: Rng::seed_from_u64(splitmix64(spec.seed)),
            pos: [0; 3],
            // fio keeps the random map only for uniform offsets.
            map,
            dist,
            scatter_mult: scatter_multiplier(blocks),
            since_random: 0,
            trim_then_write: None,
            map_unit,
            blocks,
            plain,
        })
    }

    fn direction(&mut self) -> Op {
        match self.mode {
            RwMode::Read | RwMode::Randread => Op::Read,
            RwMode::Write | RwMode::Randwrite => Op::Write,
            RwMode::Trim | RwMode::Randtrim => Op::Trim,
            RwMode::Rw | RwMode::Randrw => {
                if self.rng.gen::<f64>() * 100.0 < self.rwmix_read {
                    Op::Read
                } else {
                    Op::Write
                }
            }
            RwMode::Trimwrite | RwMode::Randtrimwrite => Op::Trim,
        }
    }

    /// Where each direction's sequential stream is (fio keeps these per file: a job on files
    /// swaps each file's own in before its I/O and out after).
    pub fn positions(&self) -> [u64; 3] {
        self.pos
    }

    pub fn set_positions(&mut self, pos: [u64; 3]) {
        self.pos = pos;
    }

    /// Whether the job keeps fio's random map (random offsets, uniform, no `norandommap`).
    pub fn keeps_random_map(&self) -> bool {
        self.map.is_some()
    }

    /// Trade the random map for a file's own: fio keeps one per file (`f->io_axmap`), so
    /// each block of each file is hit once a pass. A job on files swaps each file's map in
    /// before its I/O and out after; a file's map is made on its first swap. Without a map
    /// (sequential, `norandommap`, a non-uniform distribution) nothing changes.
    pub fn swap_random_map(&mut self, file: &mut FileRandomMap) {
        if self.map.is_none() {
            return;
        }
        let blocks = self.blocks;
        file.0.get_or_insert_with(|| RandomMap::new(blocks));
        std::mem::swap(&mut self.map, &mut file.0);
    }

    /// The next I/O. Never fails once constructed.
    #[inline]
    pub fn next_io(&mut self) -> Io {
        match self.plain {
            Some((op, len)) => self.next_plain(op, len),
            None => self.next_any(),
        }
    }

    /// [`Generator::next_io`] of the usual random job (`plain`): what the general path
    /// gives it, step for step (see the test comparing the two).
    #[inline]
    fn next_plain(&mut self, op: Op, len: u64) -> Io {
        let (unit, region) = (self.map_unit, self.region);
        let mut rel = self.rng.gen_range(0..self.blocks) * unit;
        if rel + len > region {
            rel = (region - len) / unit * unit;
        }
        self.since_random += 1;
        self.pos[op.index()] = self.advance(rel, len);
        Io { op, offset: self.base + rel, len }
    }

    fn next_any(&mut self) -> Io {
        if let Some((offset, len)) = self.trim_then_write.take() {
            return Io { op: Op::Write, offset, len };
        }
        let op = self.direction();
        let d = op.index();
        let len = self.sizes[d].pick(&mut self.rng).min(self.region);
        let rel = if self.mode.is_random() && self.take_random() {
            self.random_offset(d, len)
        } else {
            self.sequential_offset(d, len)
        };
        self.pos[d] = self.advance(rel, len);
        if matches!(self.mode, RwMode::Trimwrite | RwMode::Randtrimwrite) {
            self.trim_then_write = Some((self.base + rel, len));
        }
        Io { op, offset: self.base + rel, len }
    }

    /// With `rw=randX:N`, a new random offset only every N I/Os; sequential in between.
    fn take_random(&mut self) -> bool {
        let every = self.modifier.max(1) as u64;
        // Without a modifier every I/O is random: no division for it.
        let fresh = every == 1 || self.since_random.is_multiple_of(every);
        self.since_random += 1;
        fresh
    }

    fn sequential_offset(&self, d: usize, len: u64) -> u64 {
        let p = self.pos[d];
        if p + len > self.region {
            0
        } else {
            p
        }
    }

    /// Position after an I/O at `rel` of `len`: sequential modes add the `:N` modifier
    /// (negative walks backwards), wrapping inside the region.
    fn advance(&self, rel: u64, len: u64) -> u64 {
        let step = if self.mode.is_random() { 0 } else { self.modifier };
        if step == 0 {
            // The usual case, in 64 bits (the signed 128-bit remainder below is a slow call).
            let next = rel + len;
            return if next < self.region { next } else { next % self.region };
        }
        let next = (rel + len) as i128 + step as i128;
        next.rem_euclid(self.region as i128) as u64
    }

    fn random_offset(&mut self, d: usize, len: u64) -> u64 {
        let (unit, blocks) = (self.map_unit, self.blocks);
        let b = match &self.dist {
            OffsetDist::Uniform => self.rng.gen_range(0..blocks),
            OffsetDist::Zipf(z) => {
                let rank = z.sample(&mut self.rng) as u64 - 1;
                scatter(rank.min(blocks - 1), blocks, self.scatter_mult)
            }
            OffsetDist::Pareto { power } => {
                let u: f64 = self.rng.gen();
                let idx = ((blocks as f64) * u.powf(*power)) as u64;
                scatter(idx.min(blocks - 1), blocks, self.scatter_mult)
            }
            OffsetDist::Normal(n) => loop {
                let x = n.sample(&mut self.rng);
                if x >= 0.0 && x < blocks as f64 {
                    break x as u64;
                }
            },
            OffsetDist::Zoned { cumulative_access, starts, sizes } => {
                let x = self.rng.gen::<f64>() * cumulative_access[cumulative_access.len() - 1];
                let z = cumulative_access.partition_point(|&c| c <= x).min(starts.len() - 1);
                starts[z] + self.rng.gen_range(0..sizes[z])
            }
        };
        let b = match self.map.as_mut() {
            Some(map) => map.claim_from(b, len.div_ceil(unit)),
            None => b,
        };
        let align = self.align[d].max(unit);
        // Aligned to the block unit (the usual case), a block's offset needs no rounding.
        let mut off = if align == unit { b * unit } else { b * unit / align * align };
        if off + len > self.region {
            off = (self.region - len) / align * align;
        }
        off
    }

}

/// Spread hot block numbers over the region (a bijection on `0..blocks`), as fio hashes
/// zipf and pareto values so that the hot set is not one contiguous run.
fn scatter(idx: u64, blocks: u64, mult: u64) -> u64 {
    ((idx as u128 * mult as u128) % blocks as u128) as u64
}

/// A multiplier coprime to `blocks`, so that `i * m mod blocks` permutes the blocks.
fn scatter_multiplier(blocks: u64) -> u64 {
    let mut m: u64 = 2_654_435_761; // a prime (Knuth's multiplicative hash constant)
    while gcd(m, blocks) != 1 {
        m += 2;
    }
    m
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::workload::spec::{Distribution, Zone};

    #[test]
    fn random_map_covers_every_block_once_per_pass() {
        let spec = JobSpec::simple("j", RwMode::Randwrite, 4096, 1, 4096 * 1000);
        let mut g = Generator::new(&spec).unwrap();
        let mut seen = std::collections::HashSet::new();
        for _ in 0..1000 {
            let io = g.next_io();
            assert_eq!(io.offset % 4096, 0);
            assert!(seen.insert(io.offset), "offset {} repeated within a pass", io.offset);
        }
        assert_eq!(seen.len(), 1000);
    }

    #[test]
    fn sequential_wraps_and_backwards_modifier_walks_down() {
        let mut spec = JobSpec::simple("j", RwMode::Read, 4096, 1, 4 * 4096);
        let mut g = Generator::new(&spec).unwrap();
        let offs: Vec<u64> = (0..6).map(|_| g.next_io().offset).collect();
        assert_eq!(offs, vec![0, 4096, 8192, 12288, 0, 4096]);
        spec.rw_modifier = -8192;
        let mut g = Generator::new(&spec).unwrap();
        let offs: Vec<u64> = (0..4).map(|_| g.next_io().offset).collect();
        assert_eq!(offs, vec![0, 12288, 8192, 4096]);
    }

    #[test]
    fn rwmix_and_zoned_follow_their_shares() {
        let mut spec = JobSpec::simple("j", RwMode::Randrw, 4096, 1, 4096 * 10_000);
        spec.rwmix_read = 70.0;
        spec.distribution = Distribution {
            kind: DistKind::Zoned,
            param: 0.0,
            zones: vec![Zone { access_pct: 90.0, size_pct: 10.0 }, Zone { access_pct: 10.0, size_pct: 90.0 }],
        };
        let mut g = Generator::new(&spec).unwrap();
        let n = 20_000;
        let (mut reads, mut hot) = (0, 0);
        for _ in 0..n {
            let io = g.next_io();
            reads += (io.op == Op::Read) as u32;
            hot += (io.offset < 4096 * 1000) as u32;
        }
        let r = reads as f64 / n as f64;
        let h = hot as f64 / n as f64;
        assert!((r - 0.7).abs() < 0.02, "read share {r}");
        assert!((h - 0.9).abs() < 0.02, "hot share {h}");
    }

    proptest::proptest! {
        /// The usual random job's short path gives what the general path gives it, I/O for
        /// I/O, the random stream and the sequential positions left alike: sizes that do and
        /// do not divide the region (the last offset clamped), any region offset.
        #[test]
        fn the_plain_path_is_the_general_one(
            mode in 0usize..3, bs_units in 1u64..9, blocks in 1u64..5000, offset_units in 0u64..100,
            seed: u64, n in 1usize..600,
        ) {
            let rw = [RwMode::Randread, RwMode::Randwrite, RwMode::Randtrim][mode];
            let mut spec = JobSpec::simple("j", rw, 4096 * bs_units, 1, 512 * blocks.max(8 * bs_units + 1));
            spec.block_align = [512; 3];
            spec.random_map = false;
            spec.region_offset = 4096 * offset_units;
            spec.seed = seed;
            let mut fast = Generator::new(&spec).unwrap();
            proptest::prop_assert!(fast.plain.is_some(), "{:?} takes the short path", rw);
            let mut general = Generator::new(&spec).unwrap();
            general.plain = None;
            for i in 0..n {
                proptest::prop_assert_eq!(fast.next_io(), general.next_io(), "I/O {}", i);
            }
            proptest::prop_assert_eq!(fast.positions(), general.positions());
            proptest::prop_assert_eq!(fast.rng.gen::<u64>(), general.rng.gen::<u64>());
        }
    }

    #[test]
    fn only_the_usual_random_job_takes_the_plain_path() {
        let plain = |f: &dyn Fn(&mut JobSpec)| {
            let mut spec = JobSpec::simple("j", RwMode::Randread, 4096, 1, 4096 * 1000);
            spec.random_map = false;
            f(&mut spec);
            Generator::new(&spec).unwrap().plain.is_some()
        };
        assert!(plain(&|_| {}));
        assert!(!plain(&|s| s.random_map = true));
        assert!(!plain(&|s| s.rw = RwMode::Randrw));
        assert!(!plain(&|s| s.rw = RwMode::Read));
        assert!(!plain(&|s| s.rw = RwMode::Randtrimwrite));
        assert!(!plain(&|s| s.rw_modifier = 2));
        assert!(!plain(&|s| s.distribution.kind = DistKind::Normal));
        assert!(!plain(&|s| s.block_sizes[0] = BlockSizeDist { split: vec![(4096, 1.0), (8192, 1.0)], range_min: None, range_max: None }));
        assert!(!plain(&|s| s.block_align = [8192, 4096, 4096]));
    }

    #[test]
    fn trimwrite_writes_what_it_trimmed() {
        let spec = JobSpec::simple("j", RwMode::Trimwrite, 4096, 1, 4096 * 8);
        let mut g = Generator::new(&spec).unwrap();
        let a = g.next_io();
        let b = g.next_io();
        assert_eq!((a.op, b.op), (Op::Trim, Op::Write));
        assert_eq!(a.offset, b.offset);
    }
}
