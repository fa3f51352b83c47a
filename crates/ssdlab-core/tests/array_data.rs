//! Data-verified arrays: random writes on real bytes, members lost, every read still returns
//! what was written, and a rebuild restores a lost member bit for bit.

mod common;

use proptest::prelude::*;
use ssdlab_core::array::data::DataArray;
use ssdlab_core::array::layout::Layout;
use ssdlab_core::array::plan::{plan, plan_rebuild, Health, Plan};
use ssdlab_core::array::RaidLevel;
use ssdlab_core::io::Op;

const PAGE: u64 = 4096;

struct Case {
    layout: Layout,
    health: Health,
    data: DataArray,
    /// The same writes on an array that never fails: what each member should hold.
    reference: DataArray,
    image: Vec<u8>,
    seed: u64,
}

impl Case {
    fn new(level: RaidLevel, n: u32, chunk_pages: u64, rows: u64, seed: u64) -> Case {
        let chunk = chunk_pages * PAGE;
        let layout = Layout::new(level, n, chunk, rows * chunk);
        Case {
            layout,
            health: Health::all_in_sync(n as usize),
            data: DataArray::new(layout),
            reference: DataArray::new(layout),
            image: vec![0; layout.capacity() as usize],
            seed,
        }
    }

    fn bytes(&mut self, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.seed ^= self.seed << 13;
                self.seed ^= self.seed >> 7;
                self.seed ^= self.seed << 17;
                self.seed as u8
            })
            .collect()
    }

    fn write(&mut self, offset: u64, len: u64) -> Result<(), String> {
        let bytes = self.bytes(len as usize);
        let mut p = Plan::default();
        plan(&self.layout, &self.health, Op::Write, offset, len, |_| 0, false, &mut p);
        self.data.write(&self.health, &p, offset, &bytes).map_err(|e| e.to_string())?;
        let healthy = Health::all_in_sync(self.layout.n as usize);
        plan(&self.layout, &healthy, Op::Write, offset, len, |_| 0, false, &mut p);
        self.reference.write(&healthy, &p, offset, &bytes).map_err(|e| e.to_string())?;
        self.image[offset as usize..(offset + len) as usize].copy_from_slice(&bytes);
        Ok(())
    }

    fn read_all(&self, piece: u64) -> Result<(), String> {
        let cap = self.layout.capacity();
        let mut p = Plan::default();
        let mut at = 0;
        while at < cap {
            let n = piece.min(cap - at);
            plan(&self.layout, &self.health, Op::Read, at, n, |m| m, true, &mut p);
            let got = self.data.read(&self.health, &p, at, n).map_err(|e| e.to_string())?;
            if got[..] != self.image[at as usize..(at + n) as usize] {
                return Err(format!("read of {n} bytes at {at} returned other bytes"));
            }
            at += n;
        }
        Ok(())
    }

    fn fail(&mut self, role: u32) {
        self.health.fail(role);
        self.data.fail(role, self.seed ^ role as u64);
    }

    /// A replacement takes `role` over: written to from now on, in sync as rebuilt.
    fn attach(&mut self, role: u32) {
        self.health.attach(role);
    }

    /// Rebuild rows `first..rows` of the roles in `roles` that lack them, in order, in one
    /// pass (as far as `rows`).
    fn rebuild_rows(&mut self, roles: &[u32], first: u64, rows: u64) -> Result<(), String> {
        let mut p = Plan::default();
        for row in first..rows.min(self.layout.rows) {
            plan_rebuild(&self.layout, &self.health, roles, row, row, |_| 0, &mut p);
            let lacking = roles.iter().filter(|&&r| !self.health.ok(r, row * self.layout.chunk, self.layout.chunk)).count();
            let written: std::collections::BTreeSet<u16> = p.writes.iter().map(|w| w.member).collect();
            if written.len() > lacking {
                return Err(format!("row {row}: the pass writes {written:?}, more than the {lacking} roles lacking it"));
            }
            self.data.rebuild(&self.health, &p, row, row).map_err(|e| e.to_string())?;
            for &role in roles {
                let synced = (row + 1) * self.layout.chunk;
                if self.health.in_sync_below(role) < synced {
                    self.health.set_in_sync_below(role, synced);
                }
            }
        }
        Ok(())
    }

    /// Rebuild `roles` in one pass from row 0 (those already in sync on part of it keep
    /// that part), then compare each with what it should hold.
    fn rebuild(&mut self, roles: &[u32]) -> Result<(), String> {
        self.rebuild_rows(roles, 0, self.layout.rows)?;
        for &role in roles {
            self.health.set_in_sync_below(role, u64::MAX);
            let (got, want) = (self.data.member(role), self.reference.member(role));
            // An odd RAID 10 (odd members and rows) leaves the last member's last chunk unused:
            // nothing is rebuilt there, so only the rest must match.
            let l = &self.layout;
            let unused = l.level == RaidLevel::Raid10 && (l.n as u64 * l.rows) % 2 == 1 && role == l.n - 1;
            let used = if unused { got.len() - l.chunk as usize } else { got.len() };
            if got[..used] != want[..used] {
                return Err(format!("rebuilt member {role} differs from what it held"));
            }
        }
        Ok(())
    }
}

fn level_and_members() -> impl Strategy<Value = (RaidLevel, u32)> {
    prop_oneof![
        (3u32..=7).prop_map(|n| (RaidLevel::Raid5, n)),
        (4u32..=8).prop_map(|n| (RaidLevel::Raid6, n)),
        (2u32..=3).prop_map(|n| (RaidLevel::Raid1, n)),
        (2u32..=5).prop_map(|n| (RaidLevel::Raid10, n)),
    ]
}

/// Writes in 512-byte sectors: page-aligned and not, within a row or across several.
fn writes() -> impl Strategy<Value = Vec<(u64, u64)>> {
    prop::collection::vec((0u64..10_000, 1u64..200), 1..25)
}

proptest! {
    #![proptest_config(common::proptest_config(48))]

    #[test]
    fn lost_members_lose_no_data_and_come_back_bit_for_bit(
        (level, n) in level_and_members(),
        chunk_pages in 1u64..=4,
        // Odd rows too: an odd RAID 10's last position then holds no data.
        rows in 5u64..=7,
        before in writes(),
        after in writes(),
        during in writes(),
        rebuilt_first in 0u64..=7,
        lost in 0u32..64,
        also_lost in 0u32..64,
        seed in 1u64..u64::MAX,
    ) {
        let mut c = Case::new(level, n, chunk_pages, rows, seed);
        let cap_sectors = c.layout.capacity() / 512;
        let clip = |(o, l): (u64, u64)| { let o = o % cap_sectors; (o * 512, l.min(cap_sectors - o) * 512) };
        for w in before.iter().copied().map(clip) {
            c.write(w.0, w.1).map_err(TestCaseError::fail)?;
        }
        c.read_all(3 * 4096 + 512).map_err(TestCaseError::fail)?;
        let mut failed = vec![lost % n];
        let second = also_lost % n;
        // RAID 6 survives two lost members, a RAID 1 of three two lost mirrors.
        if (level == RaidLevel::Raid6 || (level == RaidLevel::Raid1 && n >= 3)) && second != failed[0] {
            failed.push(second);
        }
        if level == RaidLevel::Raid10 {
            // Near-2 survives one loss in general.
            failed.truncate(1);
        }
        for &r in &failed {
            c.fail(r);
        }
        c.read_all(5 * 4096).map_err(TestCaseError::fail)?;
        // Writes while degraded, then everything read back.
        for w in after.iter().copied().map(clip) {
            c.write(w.0, w.1).map_err(TestCaseError::fail)?;
        }
        c.read_all(4096 + 1024).map_err(TestCaseError::fail)?;
        // Replacements attached; the first is rebuilt part of the way, then written to
        // (behind its rebuild point and ahead of it), then everything is read back.
        for &r in &failed {
            c.attach(r);
        }
        c.rebuild_rows(&failed[..1], 0, rebuilt_first).map_err(TestCaseError::fail)?;
        for w in during.iter().copied().map(clip) {
            c.write(w.0, w.1).map_err(TestCaseError::fail)?;
        }
        c.read_all(3 * 4096).map_err(TestCaseError::fail)?;
        // A later failure interrupts the first rebuild: one pass over every replacement, as md
        // makes, the first keeping what it had in sync.
        c.rebuild(&failed).map_err(TestCaseError::fail)?;
        c.read_all(64 * 1024).map_err(TestCaseError::fail)?;
    }
}
