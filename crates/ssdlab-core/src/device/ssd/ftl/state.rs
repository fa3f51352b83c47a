//! An FTL's state as bytes, and back: what preconditioning leaves (the maps, every block's
//! books, each die's open blocks and free list), so that a drive preconditioned once can be
//! restored instead of rewritten. The sizes that follow from the configuration are not
//! stored but checked: a state restores only into an FTL built from the same description.
//!
//! Layout: little-endian integers, each list preceded by its length, in the order of
//! [`Ftl::save_state`]; a stream's last 8 bytes are a hash of everything before them, so a
//! file cut short or changed is told apart from a whole one.

use std::hash::Hasher;
use std::io::{self, Read, Write};

use rustc_hash::FxHasher;

use super::{Block, BlockState, DieState, FreeBlocks, Ftl, FtlCounters};
use crate::engine::memory::PackedArray;

/// What the stream holds is not a whole state of this FTL.
#[derive(Debug)]
pub struct BadState(pub String);

impl From<io::Error> for BadState {
    fn from(e: io::Error) -> BadState {
        BadState(if e.kind() == io::ErrorKind::UnexpectedEof { "cut short".into() } else { e.to_string() })
    }
}

impl Ftl {
    /// Write the state to `out` (see the module's layout).
    pub fn save_state(&self, out: &mut impl Write) -> io::Result<()> {
        let mut w = Hashed { inner: out, hash: FxHasher::default() };
        for v in [self.slc_blocks, self.valid_total, self.erases_total, self.clock] {
            w.u64(v)?;
        }
        w.u32(self.erases_max)?;
        let c = &self.counters;
        for v in [c.host_ius, c.slc_ius, c.padding_ius, c.gc_ius, c.folded_ius, c.erases, c.gc_runs, c.trimmed_ius,
                  c.wear_level_moves] {
            w.u64(v)?;
        }
        let (filled, l2p, p2l) = self.map.parts();
        w.u32(filled)?;
        w.packed(l2p)?;
        w.packed(p2l)?;
        w.u64(self.blocks.len() as u64)?;
        for b in &self.blocks {
            w.u32(b.valid)?;
            w.u32(b.filled)?;
            w.u32(b.erases)?;
            w.u8(match b.state {
                BlockState::Free => 0,
                BlockState::Open => 1,
                BlockState::Closed => 2,
            })?;
            w.u8(b.slc as u8)?;
            w.u64(b.stamp)?;
        }
        w.u32s(&self.programmed)?;
        w.u64(self.die_state.len() as u64)?;
        for d in &self.die_state {
            w.u32s(d.free.as_slice())?;
            w.block(d.host_block)?;
            w.u32(d.host_next)?;
            w.block(d.slc_block)?;
            w.u32(d.slc_next)?;
            w.block(d.gc_block)?;
            w.u32(d.gc_next)?;
            w.u8(d.stuck as u8)?;
            w.u32(d.erases_since_wear_check)?;
            w.u64(d.slc_erases_owed)?;
            w.block(d.victim)?;
            w.u32(d.victim_next)?;
            w.u64(d.victim_rate.to_bits())?;
        }
        w.u32s(&self.unstuck)?;
        let hash = w.hash.finish();
        w.inner.write_all(&hash.to_le_bytes())
    }

    /// Replace the state with the one [`Ftl::save_state`] wrote to `input`. It must be a whole
    /// state of an FTL built from the same description, and its books must balance
    /// ([`Ftl::check_invariants`]); otherwise the error says what is wrong, and `self` is
    /// left part-restored (restoring in place keeps one copy of the maps in memory, not
    /// two): build a new FTL then.
    pub fn restore_state(&mut self, input: &mut impl Read) -> Result<(), BadState> {
        let mut r = HashedReader { inner: input, hash: FxHasher::default() };
        let s = self;
        s.slc_blocks = r.u64()?;
        s.valid_total = r.u64()?;
        s.erases_total = r.u64()?;
        s.clock = r.u64()?;
        s.erases_max = r.u32()?;
        s.counters = FtlCounters {
            host_ius: r.u64()?,
            slc_ius: r.u64()?,
            padding_ius: r.u64()?,
            gc_ius: r.u64()?,
            folded_ius: r.u64()?,
            erases: r.u64()?,
            gc_runs: r.u64()?,
            trimmed_ius: r.u64()?,
            wear_level_moves: r.u64()?,
        };
        let filled = r.u32()?;
        let (l2p, p2l) = s.map.parts_mut(filled).map_err(BadState)?;
        r.packed(l2p, "logical map")?;
        r.packed(p2l, "physical map")?;
        s.map.restored();
        r.expect_len(s.blocks.len(), "blocks")?;
        for b in s.blocks.iter_mut() {
            *b = Block {
                valid: r.u32()?,
                filled: r.u32()?,
                erases: r.u32()?,
                state: match r.u8()? {
                    0 => BlockState::Free,
                    1 => BlockState::Open,
                    2 => BlockState::Closed,
                    v => return Err(BadState(format!("block state {v}"))),
                },
                slc: r.flag()?,
                stamp: r.u64()?,
            };
        }
        s.programmed = r.u32s(s.blocks.len())?;
        if s.programmed.len() != s.blocks.len() {
            return Err(BadState(format!("{} programmed counts where this drive has {}", s.programmed.len(), s.blocks.len())));
        }
        r.expect_len(s.die_state.len(), "dies")?;
        let blocks = s.blocks.len() as u32;
        for d in s.die_state.iter_mut() {
            let free = r.u32s(s.blocks_per_die as usize)?;
            if let Some(&b) = free.iter().find(|&&b| b >= blocks) {
                return Err(BadState(format!("block {b} of {blocks}")));
            }
            let erases = |b: u32| s.blocks[b as usize].erases;
            *d = DieState {
                free: FreeBlocks::new(s.blocks_per_die, free, erases),
                host_block: r.block(blocks)?,
                host_next: r.u32()?,
                slc_block: r.block(blocks)?,
                slc_next: r.u32()?,
                gc_block: r.block(blocks)?,
                gc_next: r.u32()?,
                stuck: r.flag()?,
                erases_since_wear_check: r.u32()?,
                slc_erases_owed: r.u64()?,
                victim: r.block(blocks)?,
                victim_next: r.u32()?,
                victim_rate: f64::from_bits(r.u64()?),
                ..DieState::default()
            };
        }
        s.unstuck = r.u32s(s.dies as usize)?;
        let expected = r.hash.finish();
        let mut stored = [0u8; 8];
        r.inner.read_exact(&mut stored)?;
        if u64::from_le_bytes(stored) != expected {
            return Err(BadState("its checksum does not match its contents".into()));
        }
        if r.inner.read(&mut [0u8; 1])? != 0 {
            return Err(BadState("bytes after its end".into()));
        }
        for &b in &s.unstuck {
            if b >= blocks {
                return Err(BadState(format!("block {b} of {blocks}")));
            }
        }
        s.rebuild_die_books();
        s.check_invariants().map_err(BadState)
    }
}

/// A writer that hashes what it writes.
struct Hashed<'a, W: Write> {
    inner: &'a mut W,
    hash: FxHasher,
}

impl<W: Write> Hashed<'_, W> {
    fn bytes(&mut self, b: &[u8]) -> io::Result<()> {
        self.hash.write(b);
        self.inner.write_all(b)
    }

    fn u8(&mut self, v: u8) -> io::Result<()> {
        self.bytes(&[v])
    }

    fn u32(&mut self, v: u32) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    fn u64(&mut self, v: u64) -> io::Result<()> {
        self.bytes(&v.to_le_bytes())
    }

    /// A block number or none (all ones: no block number reaches it).
    fn block(&mut self, b: Option<u32>) -> io::Result<()> {
        self.u32(b.unwrap_or(u32::MAX))
    }

    fn u32s(&mut self, v: &[u32]) -> io::Result<()> {
        self.u64(v.len() as u64)?;
        self.values(v, |x| x.to_le_bytes())
    }

    fn packed(&mut self, a: &PackedArray) -> io::Result<()> {
        self.u64(a.len() as u64)?;
        self.u32(a.width())?;
        let words = a.words();
        self.u64(words.len() as u64)?;
        self.values(words, |x| x.to_le_bytes())
    }

    /// `v` as little-endian bytes, in chunks: one call per value would cost more than the
    /// copying.
    fn values<T: Copy, const N: usize>(&mut self, v: &[T], le: impl Fn(T) -> [u8; N]) -> io::Result<()> {
        let mut buf = Vec::with_capacity(N * 4096);
        for chunk in v.chunks(4096) {
            buf.clear();
            buf.extend(chunk.iter().flat_map(|&x| le(x)));
            self.bytes(&buf)?;
        }
        Ok(())
    }
}

/// A reader that hashes what it reads.
struct HashedReader<'a, R: Read> {
    inner: &'a mut R,
    hash: FxHasher,
}

impl<R: Read> HashedReader<'_, R> {
    fn bytes(&mut self, b: &mut [u8]) -> Result<(), BadState> {
        self.inner.read_exact(b)?;
        self.hash.write(b);
        Ok(())
    }

    fn u8(&mut self) -> Result<u8, BadState> {
        let mut b = [0u8; 1];
        self.bytes(&mut b)?;
        Ok(b[0])
    }

    fn flag(&mut self) -> Result<bool, BadState> {
        match self.u8()? {
            0 => Ok(false),
            1 => Ok(true),
            v => Err(BadState(format!("a flag of {v}"))),
        }
    }

    fn u32(&mut self) -> Result<u32, BadState> {
        let mut b = [0u8; 4];
        self.bytes(&mut b)?;
        Ok(u32::from_le_bytes(b))
    }

    fn u64(&mut self) -> Result<u64, BadState> {
        let mut b = [0u8; 8];
        self.bytes(&mut b)?;
        Ok(u64::from_le_bytes(b))
    }

    fn block(&mut self, blocks: u32) -> Result<Option<u32>, BadState> {
        match self.u32()? {
            u32::MAX => Ok(None),
            b if b < blocks => Ok(Some(b)),
            b => Err(BadState(format!("block {b} of {blocks}"))),
        }
    }

    fn expect_len(&mut self, len: usize, what: &str) -> Result<(), BadState> {
        let n = self.u64()?;
        if n != len as u64 {
            return Err(BadState(format!("{n} {what} where this drive has {len}")));
        }
        Ok(())
    }

    /// A list of at most `max` values (a damaged length must not ask for all memory).
    fn u32s(&mut self, max: usize) -> Result<Vec<u32>, BadState> {
        let n = self.u64()?;
        if n > max as u64 {
            return Err(BadState(format!("a list of {n} where at most {max} fit")));
        }
        let mut v = Vec::with_capacity(n as usize);
        let mut buf = vec![0u8; 4 * 4096];
        let mut left = n as usize;
        while left > 0 {
            let k = left.min(4096);
            self.bytes(&mut buf[..4 * k])?;
            v.extend(buf[..4 * k].chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])));
            left -= k;
        }
        Ok(v)
    }

    fn packed(&mut self, a: &mut PackedArray, what: &str) -> Result<(), BadState> {
        self.expect_len(a.len(), what)?;
        let width = self.u32()?;
        if width != a.width() {
            return Err(BadState(format!("{what} of {width}-bit entries where this drive has {}", a.width())));
        }
        let words = a.words_mut();
        self.expect_len(words.len(), what)?;
        let mut buf = vec![0u8; 8 * 4096];
        for chunk in words.chunks_mut(4096) {
            let b = &mut buf[..8 * chunk.len()];
            self.bytes(b)?;
            // Written only where they change: a sparse map's untouched pages stay
            // unallocated (a fresh map is zero, and so is most of a map filled in order).
            for (w, c) in chunk.iter_mut().zip(b.chunks_exact(8)) {
                let v = u64::from_le_bytes(c.try_into().expect("8 bytes"));
                if *w != v {
                    *w = v;
                }
            }
        }
        Ok(())
    }
}
