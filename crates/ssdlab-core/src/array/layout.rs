//! Where an array's blocks live: the address arithmetic of each RAID level, as Linux md lays
//! them out by default (RAID 10 "near" with two copies, RAID 5 and 6 left-symmetric).
//!
//! The array is cut into *rows*: row `r` is chunk `r` of every member (member bytes
//! `r·chunk .. (r+1)·chunk`). A RAID 5 row holds `n − 1` data chunks and a parity chunk whose
//! member rotates backwards from the last one; data continues on the member after the parity
//! (left-symmetric: md's `ALGORITHM_LEFT_SYMMETRIC`). RAID 6 puts Q on the member after P and
//! data after Q.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::engine::divide::Div64;

/// md's stripe unit: every stripe is handled in pages of this size on each member.
pub const PAGE: u64 = 4096;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RaidLevel {
    /// Striping, no redundancy.
    Raid0,
    /// Every member holds every block.
    Raid1,
    /// Striped mirrors, md's default "near" layout with two copies.
    Raid10,
    /// One parity chunk per stripe, md's default left-symmetric rotation.
    Raid5,
    /// Two parity chunks (P and Q) per stripe, left-symmetric.
    Raid6,
}

impl RaidLevel {
    /// The fewest members the level works with (md's own minimums).
    pub fn min_members(self) -> usize {
        match self {
            RaidLevel::Raid0 | RaidLevel::Raid1 | RaidLevel::Raid10 => 2,
            RaidLevel::Raid5 => 3,
            RaidLevel::Raid6 => 4,
        }
    }

    /// Members that may fail at once without losing data (RAID 10 near-2: one, in general).
    pub fn tolerated_failures(self, members: usize) -> usize {
        match self {
            RaidLevel::Raid0 => 0,
            RaidLevel::Raid1 => members - 1,
            RaidLevel::Raid10 | RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
        }
    }

    /// Whether some data has no copy or parity left when the members for which `out` is
    /// true lack it (failed, or not yet rebuilt). RAID 10 near-2 keeps chunk `k`'s copies at
    /// chunk positions `2k` and `2k + 1` across the members: partners for an even count,
    /// neighbours all round for an odd one.
    pub fn loses_data(self, members: usize, out: impl Fn(u32) -> bool) -> bool {
        let n = members as u32;
        let count = (0..n).filter(|&m| out(m)).count();
        match self {
            RaidLevel::Raid10 => (0..n).any(|k| out((2 * k) % n) && out((2 * k + 1) % n)),
            level => count > level.tolerated_failures(members),
        }
    }

    /// Parity chunks per stripe.
    pub fn parity_count(self) -> u32 {
        match self {
            RaidLevel::Raid5 => 1,
            RaidLevel::Raid6 => 2,
            _ => 0,
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            RaidLevel::Raid0 => "raid0",
            RaidLevel::Raid1 => "raid1",
            RaidLevel::Raid10 => "raid10",
            RaidLevel::Raid5 => "raid5",
            RaidLevel::Raid6 => "raid6",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub level: RaidLevel,
    /// Active members (their role numbers are 0..n).
    pub n: u32,
    pub chunk: u64,
    /// Rows: whole chunks per member.
    pub rows: u64,
    /// `chunk` and `n` as divisors: a RAID 0 read divides by both (shifts when they are
    /// powers of two, as chunks always are and member counts often).
    chunk_div: Div64,
    n_div: Div64,
}

impl Layout {
    pub fn new(level: RaidLevel, n: u32, chunk: u64, member_bytes: u64) -> Layout {
        let chunk_div = Div64::new(chunk.max(1));
        Layout { level, n, chunk, rows: member_bytes / chunk.max(1), chunk_div, n_div: Div64::new(n.max(1) as u64) }
    }

    /// The logical chunk holding array byte `offset`, and where in it `offset` lies.
    #[inline]
    pub fn chunk_of(&self, offset: u64) -> (u64, u64) {
        let k = self.chunk_div.div(offset);
        (k, offset - k * self.chunk)
    }

    /// Data chunks per row (RAID 10 has n/2 of them on average: rows do not align with
    /// copies when n is odd, so it is addressed by chunk position instead).
    pub fn data_per_row(&self) -> u32 {
        match self.level {
            RaidLevel::Raid0 => self.n,
            RaidLevel::Raid1 => 1,
            RaidLevel::Raid10 => self.n / 2,
            RaidLevel::Raid5 => self.n - 1,
            RaidLevel::Raid6 => self.n - 2,
        }
    }

    /// The page offsets (within a chunk, in pages) that data bytes `[a, b)` of one row cover
    /// on any member: its stripe heads. One range, or the head of the first chunk piece and
    /// the tail of the last when the bytes cross one chunk boundary without overlapping.
    pub fn row_pages(&self, a: u64, b: u64) -> [std::ops::Range<u64>; 2] {
        let (c, page) = (self.chunk, PAGE);
        let (first, last) = (a / c, (b - 1) / c);
        let (s0, e_last) = ((a - first * c) / page, (b - last * c).div_ceil(page));
        match last - first {
            0 => [s0..e_last, 0..0],
            1 if e_last < s0 => [0..e_last, s0..c / page],
            _ => [0..c / page, 0..0],
        }
    }

    /// Bytes the host sees.
    pub fn capacity(&self) -> u64 {
        let chunks = match self.level {
            RaidLevel::Raid0 => self.rows * self.n as u64,
            RaidLevel::Raid1 => self.rows,
            // Two copies of each chunk over all the chunk positions.
            RaidLevel::Raid10 => self.rows * self.n as u64 / 2,
            RaidLevel::Raid5 | RaidLevel::Raid6 => self.rows * self.data_per_row() as u64,
        };
        chunks * self.chunk
    }

    /// Parity member(s) of a RAID 5/6 row: P, and Q for RAID 6.
    #[inline]
    pub fn parity_members(&self, row: u64) -> (u32, Option<u32>) {
        let p = self.n - 1 - (row % self.n as u64) as u32;
        match self.level {
            RaidLevel::Raid6 => (p, Some((p + 1) % self.n)),
            _ => (p, None),
        }
    }

    /// The member holding data chunk `i` (0-based within the row) of a RAID 5/6 row.
    #[inline]
    pub fn data_member(&self, row: u64, i: u32) -> u32 {
        let (p, _) = self.parity_members(row);
        (p + self.level.parity_count() + i) % self.n
    }

    /// RAID 0: (row, member) of logical chunk `k`.
    #[inline]
    pub fn stripe_chunk(&self, k: u64) -> (u64, u32) {
        let row = self.n_div.div(k);
        (row, (k - row * self.n as u64) as u32)
    }

    /// RAID 0: where member `member`'s bytes `[offset, offset + len)` are in the array, as
    /// runs (one per chunk: consecutive chunks of a member are `n` chunks apart). Bytes past
    /// the last whole row hold no data and are left out.
    pub fn raid0_array_runs(&self, member: u32, offset: u64, len: u64) -> Vec<(u64, u64)> {
        debug_assert_eq!(self.level, RaidLevel::Raid0);
        let end = (offset + len).min(self.rows * self.chunk);
        let mut out = Vec::new();
        let mut at = offset;
        while at < end {
            let (row, off) = (at / self.chunk, at % self.chunk);
            let take = (self.chunk - off).min(end - at);
            let k = row * self.n as u64 + member as u64;
            out.push((k * self.chunk + off, take));
            at += take;
        }
        out
    }

    /// Where array byte runs `runs` lie on each member (by role), in the order written, with
    /// the parity of RAID 5/6 rows they cover (in each row, the chunk offsets its data
    /// covers): what writing the runs in order leaves on the members. A member's runs that
    /// touch or overlap its previous one are joined.
    pub fn member_runs(&self, runs: &[(u64, u64)]) -> Vec<Vec<(u64, u64)>> {
        let mut out: Vec<Vec<(u64, u64)>> = vec![Vec::new(); self.n as usize];
        let mut put = |m: u32, offset: u64, len: u64| {
            let runs = &mut out[m as usize];
            match runs.last_mut() {
                Some(last) if offset <= last.0 + last.1 && offset + len >= last.0 => {
                    let end = (last.0 + last.1).max(offset + len);
                    last.0 = last.0.min(offset);
                    last.1 = end - last.0;
                }
                _ => runs.push((offset, len)),
            }
        };
        for &(offset, len) in runs {
            let end = (offset + len).min(self.capacity());
            let mut at = offset;
            while at < end {
                let (k, within) = self.chunk_of(at);
                let take = (self.chunk - within).min(end - at);
                match self.level {
                    RaidLevel::Raid0 => {
                        let (row, m) = self.stripe_chunk(k);
                        put(m, row * self.chunk + within, take);
                    }
                    RaidLevel::Raid1 => (0..self.n).for_each(|m| put(m, at, take)),
                    RaidLevel::Raid10 => {
                        for (row, m) in self.mirror_chunk(k) {
                            put(m, row * self.chunk + within, take);
                        }
                    }
                    RaidLevel::Raid5 | RaidLevel::Raid6 => {
                        let dpr = self.data_per_row() as u64;
                        let row = k / dpr;
                        let base = row * self.chunk + within;
                        put(self.data_member(row, (k - row * dpr) as u32), base, take);
                        let (p, q) = self.parity_members(row);
                        put(p, base, take);
                        if let Some(q) = q {
                            put(q, base, take);
                        }
                    }
                }
                at += take;
            }
        }
        out
    }

    /// RAID 10 near-2: the two (row, member) places of logical chunk `k`. The copies sit at
    /// consecutive chunk positions `2k` and `2k + 1`, counting across members then rows.
    #[inline]
    pub fn mirror_chunk(&self, k: u64) -> [(u64, u32); 2] {
        let n = self.n as u64;
        let a = 2 * k;
        [(a / n, (a % n) as u32), ((a + 1) / n, ((a + 1) % n) as u32)]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raid0_member_bytes_map_back_to_where_the_array_put_them() {
        let l = Layout::new(RaidLevel::Raid0, 3, 16 * 1024, 1 << 20);
        for x in (0..l.capacity()).step_by(4096 + 512) {
            let (k, off) = l.chunk_of(x);
            let (row, member) = l.stripe_chunk(k);
            assert_eq!(l.raid0_array_runs(member, row * l.chunk + off, 512), vec![(x, 512)], "{x}");
        }
        // Across a chunk boundary on a member: the next chunk is three chunks on.
        let c = l.chunk;
        assert_eq!(l.raid0_array_runs(1, c - 100, 200), vec![(c + c - 100, 100), (4 * c, 100)]);
        assert!(l.raid0_array_runs(0, l.rows * c, 4096).is_empty(), "past the last row");
    }

    /// A layout drawn as md documents it: rows of cells, "Dk" for data chunk k, "P", "Q".
    fn draw(l: &Layout, rows: u64) -> Vec<Vec<String>> {
        let mut grid = vec![vec![String::new(); l.n as usize]; rows as usize];
        for r in 0..rows {
            let (p, q) = l.parity_members(r);
            grid[r as usize][p as usize] = "P".into();
            if let Some(q) = q {
                grid[r as usize][q as usize] = "Q".into();
            }
            for i in 0..l.data_per_row() {
                let k = r * l.data_per_row() as u64 + i as u64;
                grid[r as usize][l.data_member(r, i) as usize] = format!("D{k}");
            }
        }
        grid
    }

    fn rows(text: &str) -> Vec<Vec<String>> {
        text.lines().map(|l| l.split_whitespace().map(String::from).collect()).collect()
    }

    #[test]
    fn raid5_is_left_symmetric_as_md_draws_it() {
        let l = Layout::new(RaidLevel::Raid5, 4, 4096, 4 * 4096);
        let want = rows("D0 D1 D2 P\nD4 D5 P D3\nD8 P D6 D7\nP D9 D10 D11");
        assert_eq!(draw(&l, 4), want);
        assert_eq!(l.capacity(), 12 * 4096);
    }

    #[test]
    fn raid6_puts_q_after_p_and_data_after_q() {
        // raid5.c, level 6, ALGORITHM_LEFT_SYMMETRIC: P on n-1-(row mod n), Q on the next
        // member (wrapping), data from the member after Q.
        let l = Layout::new(RaidLevel::Raid6, 5, 4096, 5 * 4096);
        let want = rows("Q D0 D1 D2 P\nD3 D4 D5 P Q\nD7 D8 P Q D6\nD11 P Q D9 D10\nP Q D12 D13 D14");
        assert_eq!(draw(&l, 5), want);
    }

    #[test]
    fn raid10_near_two_keeps_copies_on_neighbouring_positions() {
        // md's near layout drawn for 3 drives: A A B / B C C / D D E ...
        let l = Layout::new(RaidLevel::Raid10, 3, 4096, 4 * 4096);
        let got: Vec<_> = (0..4).map(|k| l.mirror_chunk(k)).collect();
        assert_eq!(got, vec![[(0, 0), (0, 1)], [(0, 2), (1, 0)], [(1, 1), (1, 2)], [(2, 0), (2, 1)]]);
        assert_eq!(l.capacity(), 6 * 4096, "12 chunk places, two copies each");
    }

    /// Every data chunk has exactly one place, no data chunk shares a cell with parity,
    /// and each row uses every member once: checked cell by cell for many shapes.
    #[test]
    fn parity_layouts_are_a_bijection_onto_non_parity_cells() {
        for level in [RaidLevel::Raid5, RaidLevel::Raid6] {
            for n in level.min_members() as u32..=12 {
                let rows = 3 * n as u64;
                let l = Layout::new(level, n, 4096, rows * 4096);
                let mut owner = vec![None; (rows * n as u64) as usize];
                for r in 0..rows {
                    let (p, q) = l.parity_members(r);
                    owner[(r * n as u64 + p as u64) as usize] = Some(u64::MAX);
                    if let Some(q) = q {
                        assert_ne!(p, q);
                        owner[(r * n as u64 + q as u64) as usize] = Some(u64::MAX - 1);
                    }
                    for i in 0..l.data_per_row() {
                        let cell = (r * n as u64 + l.data_member(r, i) as u64) as usize;
                        assert!(owner[cell].is_none(), "{level:?} n={n}: cell {cell} used twice");
                        owner[cell] = Some(r * l.data_per_row() as u64 + i as u64);
                    }
                }
                assert!(owner.iter().all(Option::is_some), "{level:?} n={n}: a cell is unused");
                // Each member holds parity equally often over n rows.
                for m in 0..n {
                    let p_rows = (0..n as u64).filter(|&r| l.parity_members(r).0 == m).count();
                    assert_eq!(p_rows, 1);
                }
            }
        }
    }

    #[test]
    fn raid0_addresses_are_the_plain_quotients_and_remainders() {
        // Divisions by the chunk and the member count, shifts or not, give what `/` and `%` give.
        for (n, chunk) in [(8u32, 65536u64), (6, 65536), (3, 4096), (1, 512 << 10), (7, 12288)] {
            let l = Layout::new(RaidLevel::Raid0, n, chunk, 1 << 30);
            for offset in [0u64, 1, chunk - 1, chunk, chunk + 4096, 7 * chunk + 5, (1 << 40) + 3, u64::MAX / 2] {
                assert_eq!(l.chunk_of(offset), (offset / chunk, offset % chunk), "n {n} chunk {chunk} offset {offset}");
                let k = offset / chunk;
                assert_eq!(l.stripe_chunk(k), (k / n as u64, (k % n as u64) as u32), "n {n} chunk {k}");
            }
        }
    }
}
