//! From one array request to member I/O: which members, which bytes, what is read before
//! and written after the parity computation, and how much stripe handling it takes.
//!
//! RAID 5/6 writes are planned the way md's `handle_stripe_dirtying` decides, per 4 KiB
//! column of a row (a stripe head): read-modify-write reads the old data being replaced and
//! the old parity; reconstruct-write reads the data not being replaced; the one with fewer
//! reads wins, a tie goes to reconstruct-write, and a column whose data is all being replaced
//! (a full-stripe write) reads nothing. A strategy that would read a member without current
//! data is not possible. Columns planned alike form segments, and a member's contiguous pages
//! go to it as one I/O (what md's per-page bios become once the block layer merges them).

use super::layout::{RaidLevel, PAGE};
use super::layout::Layout;
use crate::io::Op;

/// One I/O to one member.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberIo {
    pub member: u16,
    pub op: Op,
    pub offset: u64,
    pub len: u64,
}

/// Which member bytes hold current data: everything on a healthy member, nothing on a
/// failed one, the part below its rebuild point on a member being rebuilt. And which roles
/// have a device at all: a member being rebuilt takes every write, as md writes to any
/// device that is not faulty (raid5.c `ops_run_io`, raid1/raid10's write paths), whether or
/// not the rebuild has reached the bytes yet; a failed member takes nothing.
#[derive(Clone, Debug)]
pub struct Health {
    in_sync_below: Vec<u64>,
    present: Vec<bool>,
    degraded: bool,
}

impl Health {
    pub fn all_in_sync(members: usize) -> Health {
        Health { in_sync_below: vec![u64::MAX; members], present: vec![true; members], degraded: false }
    }

    /// Some member lacks current data somewhere (failed, or being rebuilt).
    #[inline]
    pub fn is_degraded(&self) -> bool {
        self.degraded
    }

    /// Member `m`'s bytes `[offset, offset + len)` hold current data.
    #[inline]
    pub fn ok(&self, m: u32, offset: u64, len: u64) -> bool {
        offset + len <= self.in_sync_below[m as usize]
    }

    /// Role `m` is written to (a device fills it: healthy, or being rebuilt).
    #[inline]
    pub fn present(&self, m: u32) -> bool {
        self.present[m as usize]
    }

    pub fn fail(&mut self, m: u32) {
        self.present[m as usize] = false;
        self.set_in_sync_below(m, 0);
    }

    /// A replacement takes failed role `m` over: it is written to from now on, and holds
    /// current data as its rebuild brings it (`set_in_sync_below`).
    pub fn attach(&mut self, m: u32) {
        self.present[m as usize] = true;
    }

    /// Member `m` holds current data below `offset` (a rebuild's progress; `u64::MAX`: all).
    pub fn set_in_sync_below(&mut self, m: u32, offset: u64) {
        self.in_sync_below[m as usize] = offset;
        self.degraded = self.in_sync_below.iter().any(|&b| b != u64::MAX);
    }

    pub fn in_sync_below(&self, m: u32) -> u64 {
        self.in_sync_below[m as usize]
    }

    /// Members holding no current data at all, or only part of it.
    pub fn degraded(&self) -> impl Iterator<Item = u32> + '_ {
        self.in_sync_below.iter().enumerate().filter(|(_, &b)| b != u64::MAX).map(|(m, _)| m as u32)
    }
}

/// The member I/O of one array request and what its stripe handling costs.
#[derive(Clone, Debug, Default)]
pub struct Plan {
    /// Issued first; their data feed the parity computation or the reconstruction.
    pub reads: Vec<MemberIo>,
    /// Issued once the reads are done and the stripes handled.
    pub writes: Vec<MemberIo>,
    /// Stripe heads (a 4 KiB column of a row) that go through the stripe cache.
    pub stripe_heads: u64,
    /// Bytes read by the parity or reconstruction computation.
    pub parity_bytes: u64,
    /// Stripe heads written by read-modify-write, reconstruct-write, whole (full stripe).
    pub rmw: u64,
    pub rcw: u64,
    pub full: u64,
    /// Host bytes read from a member without current data, rebuilt from the others.
    pub reconstructed_bytes: u64,
    /// Rows whose stripes are handled (locked while in work), first and last.
    pub rows: Option<(u64, u64)>,
    /// Discarded bytes not passed on (md discards whole stripes of RAID 5/6 only).
    pub discard_dropped_bytes: u64,
    /// Data members' coverage in the current segment (scratch).
    cover: Vec<Cover>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cover {
    None,
    /// Some bytes of the column's page: the rest must be read to write it whole.
    Part,
    Whole,
}

impl Plan {
    pub fn clear(&mut self) {
        self.reads.clear();
        self.writes.clear();
        self.stripe_heads = 0;
        self.parity_bytes = 0;
        self.rmw = 0;
        self.rcw = 0;
        self.full = 0;
        self.reconstructed_bytes = 0;
        self.rows = None;
        self.discard_dropped_bytes = 0;
    }

    fn touch_row(&mut self, row: u64) {
        self.rows = Some(match self.rows {
            None => (row, row),
            Some((a, b)) => (a.min(row), b.max(row)),
        });
    }

    /// Member bytes read plus written.
    pub fn member_bytes(&self) -> u64 {
        self.reads.iter().chain(&self.writes).map(|io| io.len).sum()
    }
}

/// Append an I/O, joined to the same member's previous one when it continues or overlaps it
/// (a degraded read's reconstruction reads pages the host's own read of that member also
/// reads: the engine reads them once). `since`: the first entry that may be joined.
#[inline]
fn emit(out: &mut Vec<MemberIo>, since: usize, io: MemberIo) {
    for prev in out[since..].iter_mut().rev() {
        if prev.member == io.member {
            if prev.op == io.op && io.op != Op::Flush {
                let (start, end) = (prev.offset, prev.offset + prev.len);
                if end == io.offset {
                    prev.len += io.len;
                    return;
                }
                if io.offset < end && start <= io.offset + io.len {
                    let new_end = end.max(io.offset + io.len);
                    prev.offset = start.min(io.offset);
                    prev.len = new_end - prev.offset;
                    return;
                }
            }
            break;
        }
    }
    out.push(io);
}

fn page_down(x: u64) -> u64 {
    x / PAGE * PAGE
}

fn page_up(x: u64) -> u64 {
    x.div_ceil(PAGE) * PAGE
}

/// Plan request (`op`, `offset`, `len`) on the array. `load(m)`: member `m`'s requests
/// queued and in flight, for choosing which copy of a mirror to read. `cached_reads`: while
/// the array is degraded, RAID 5/6 reads of healthy chunks take stripe heads too (md since
/// Linux 4.1 reads a degraded array only through its stripe cache).
#[allow(clippy::too_many_arguments)]
pub fn plan(
    l: &Layout,
    health: &Health,
    op: Op,
    offset: u64,
    len: u64,
    load: impl Fn(u32) -> u32,
    cached_reads: bool,
    out: &mut Plan,
) {
    out.clear();
    if op == Op::Flush {
        for m in 0..l.n {
            if health.present(m) {
                out.writes.push(MemberIo { member: m as u16, op, offset: 0, len: 0 });
            }
        }
        return;
    }
    match l.level {
        RaidLevel::Raid0 => plan_striped(l, op, offset, len, out),
        RaidLevel::Raid1 => plan_mirrored(l, health, op, offset, len, load, out),
        RaidLevel::Raid10 => plan_near(l, health, op, offset, len, load, out),
        RaidLevel::Raid5 | RaidLevel::Raid6 => plan_parity(l, health, op, offset, len, cached_reads, out),
    }
}

/// Split `[offset, offset + len)` at chunk boundaries: (logical chunk, offset in it, length).
fn chunk_pieces(chunk: u64, offset: u64, len: u64) -> impl Iterator<Item = (u64, u64, u64)> {
    let end = offset + len;
    let mut at = offset;
    std::iter::from_fn(move || {
        if at >= end {
            return None;
        }
        let k = at / chunk;
        let within = at - k * chunk;
        let n = (chunk - within).min(end - at);
        at += n;
        Some((k, within, n))
    })
}

fn plan_striped(l: &Layout, op: Op, offset: u64, len: u64, out: &mut Plan) {
    let target = if op == Op::Read { &mut out.reads } else { &mut out.writes };
    let k = offset / l.chunk;
    let within = offset - k * l.chunk;
    if len > 0 && within + len <= l.chunk {
        // Inside one chunk (most small requests): one member I/O, nothing to join.
        let (row, m) = l.stripe_chunk(k);
        target.push(MemberIo { member: m as u16, op, offset: row * l.chunk + within, len });
        return;
    }
    for (k, within, n) in chunk_pieces(l.chunk, offset, len) {
        let (row, m) = l.stripe_chunk(k);
        emit(target, 0, MemberIo { member: m as u16, op, offset: row * l.chunk + within, len: n });
    }
}

/// The in-sync member with the fewest requests waiting (md's read balancing for drives
/// without seek cost), among `candidates`.
fn least_loaded(
    health: &Health,
    candidates: impl Iterator<Item = (u32, u64)>,
    len: u64,
    load: &impl Fn(u32) -> u32,
) -> Option<(u32, u64)> {
    candidates.filter(|&(m, off)| health.ok(m, off, len)).min_by_key(|&(m, _)| load(m))
}

fn plan_mirrored(l: &Layout, health: &Health, op: Op, offset: u64, len: u64, load: impl Fn(u32) -> u32, out: &mut Plan) {
    if op == Op::Read {
        let (m, off) = least_loaded(health, (0..l.n).map(|m| (m, offset)), len, &load)
            .expect("a mirror with no in-sync member (validation allows at most n - 1 failures)");
        out.reads.push(MemberIo { member: m as u16, op, offset: off, len });
        return;
    }
    for m in (0..l.n).filter(|&m| health.present(m)) {
        out.writes.push(MemberIo { member: m as u16, op, offset, len });
    }
    if health.is_degraded() {
        // A rebuild copies rows: a write must not slip between its read and its write.
        out.rows = Some((offset / l.chunk, (offset + len - 1) / l.chunk));
    }
}

fn plan_near(l: &Layout, health: &Health, op: Op, offset: u64, len: u64, load: impl Fn(u32) -> u32, out: &mut Plan) {
    for (k, within, n) in chunk_pieces(l.chunk, offset, len) {
        let copies = l.mirror_chunk(k).map(|(row, m)| (m, row * l.chunk + within));
        if op == Op::Read {
            let (m, off) = least_loaded(health, copies.into_iter(), n, &load)
                .expect("both copies of a RAID 10 chunk lost (validation allows one failure)");
            emit(&mut out.reads, 0, MemberIo { member: m as u16, op, offset: off, len: n });
        } else {
            for (m, off) in copies {
                if health.present(m) {
                    emit(&mut out.writes, 0, MemberIo { member: m as u16, op, offset: off, len: n });
                }
                if health.is_degraded() {
                    out.touch_row(off / l.chunk);
                }
            }
        }
    }
}

fn plan_parity(l: &Layout, health: &Health, op: Op, offset: u64, len: u64, cached_reads: bool, out: &mut Plan) {
    let row_bytes = l.data_per_row() as u64 * l.chunk;
    let end = offset + len;
    let mut at = offset;
    while at < end {
        let row = at / row_bytes;
        let a = at - row * row_bytes;
        let b = (end - row * row_bytes).min(row_bytes);
        match op {
            Op::Read => read_row(l, health, row, a, b, cached_reads && health.is_degraded(), out),
            Op::Write => write_row(l, health, row, a, b, out),
            Op::Trim => trim_row(l, health, row, a, b, row_bytes, out),
            Op::Flush => unreachable!("flushes are planned before"),
        }
        at = row * row_bytes + b;
    }
}

/// Read data bytes `[a, b)` of a row: straight from the members that hold them, rebuilt
/// from the rest of the row through the stripe cache where a member does not. `cached`: every
/// page goes through the stripe cache, one stripe head for each page offset the read covers
/// on any member (the row is not locked for that: md shares a stripe head between a read and
/// a write of it).
fn read_row(l: &Layout, health: &Health, row: u64, a: u64, b: u64, cached: bool, out: &mut Plan) {
    let c = l.chunk;
    let (first, last) = (a / c, (b - 1) / c);
    if cached {
        out.stripe_heads += l.row_pages(a, b).iter().map(|r| r.end - r.start).sum::<u64>();
    }
    for i in first as u32..=last as u32 {
        let s = a.max(i as u64 * c) - i as u64 * c;
        let e = b.min((i as u64 + 1) * c) - i as u64 * c;
        let m = l.data_member(row, i);
        let base = row * c;
        if health.ok(m, base + s, e - s) {
            emit(&mut out.reads, 0, MemberIo { member: m as u16, op: Op::Read, offset: base + s, len: e - s });
            continue;
        }
        // Degraded: read the same pages of enough other members to solve for this one.
        let (ps, pe) = (page_down(s), page_up(e));
        let span = pe - ps;
        let need = l.data_per_row();
        let (p, q) = l.parity_members(row);
        let others = (0..need).filter(|&j| j != i).map(|j| l.data_member(row, j)).chain([p]).chain(q);
        let mut got = 0;
        for src in others {
            if got == need {
                break;
            }
            if health.ok(src, base + ps, span) {
                emit(&mut out.reads, 0, MemberIo { member: src as u16, op: Op::Read, offset: base + ps, len: span });
                got += 1;
            }
        }
        assert_eq!(got, need, "row {row}: too few members hold data to rebuild member {m} from");
        if !cached {
            out.stripe_heads += span / PAGE;
        }
        out.parity_bytes += need as u64 * span;
        out.reconstructed_bytes += e - s;
        out.touch_row(row);
    }
}

/// Write data bytes `[a, b)` of a row, with its parity.
fn write_row(l: &Layout, health: &Health, row: u64, a: u64, b: u64, out: &mut Plan) {
    let c = l.chunk;
    let d = l.data_per_row();
    let (fa, la) = (a / c, (b - 1) / c);
    let (lo_first, hi_last) = (a - fa * c, b - la * c);
    let span_of = |i: u64| -> Option<(u64, u64)> {
        (fa..=la).contains(&i).then_some((if i == fa { lo_first } else { 0 }, if i == la { hi_last } else { c }))
    };
    // Columns planned alike: cut where a written range starts or ends, on page bounds, so
    // that a partly written page is a segment of its own.
    let mut cuts = [0, c, page_down(lo_first), page_up(lo_first), page_down(hi_last), page_up(hi_last)];
    cuts.sort_unstable();
    let (p, q) = l.parity_members(row);
    let base = row * c;
    // A member's pages join its previous I/O when they continue it, across rows too.
    let (reads_from, writes_from) = (0, 0);
    out.touch_row(row);
    for w in cuts.windows(2) {
        let (s, e) = (w[0], w[1]);
        if s == e {
            continue;
        }
        let seg = e - s;
        let pages = seg / PAGE;
        out.cover.clear();
        out.cover.extend((0..d as u64).map(|i| match span_of(i) {
            Some((lo, hi)) if lo <= s && e <= hi => Cover::Whole,
            Some((lo, hi)) if lo < e && s < hi => Cover::Part,
            _ => Cover::None,
        }));
        let written = out.cover.iter().filter(|&&k| k != Cover::None).count() as u32;
        if written == 0 {
            continue;
        }
        let whole = out.cover.iter().filter(|&&k| k == Cover::Whole).count() as u32;
        out.stripe_heads += pages;
        let ok = |m: u32| health.ok(m, base + s, seg);
        // The parity pages holding current data (read-modify-write reads them), and the parity
        // members written: every one with a device, whether its rebuild has come this far or not.
        let parity_current: [Option<u32>; 2] = [Some(p).filter(|&m| ok(m)), q.filter(|&m| ok(m))];
        let parity_written: [Option<u32>; 2] = [Some(p), q].map(|m| m.filter(|&m| health.present(m)));
        let current_parity = parity_current.iter().flatten().count() as u32;
        let write_data = |out: &mut Plan| {
            for i in 0..d {
                let m = l.data_member(row, i);
                if out.cover[i as usize] != Cover::None && health.present(m) {
                    emit(&mut out.writes, writes_from, MemberIo { member: m as u16, op: Op::Write, offset: base + s, len: seg });
                }
            }
        };
        let read = |out: &mut Plan, m: u32| {
            emit(&mut out.reads, reads_from, MemberIo { member: m as u16, op: Op::Read, offset: base + s, len: seg });
        };
        let write_parity = |out: &mut Plan| {
            for m in parity_written.iter().flatten() {
                emit(&mut out.writes, writes_from, MemberIo { member: *m as u16, op: Op::Write, offset: base + s, len: seg });
            }
        };
        if whole == d {
            write_data(out);
            write_parity(out);
            out.full += pages;
            out.parity_bytes += d as u64 * seg;
            continue;
        }
        let data_ok = |i: u32| ok(l.data_member(row, i));
        // Read-modify-write needs the old data of every page it replaces, and every parity
        // page: md will not read-modify-write around a P or Q it cannot read
        // (`handle_stripe_dirtying` counts such a page as 2 × disks reads), so beside a lost
        // parity page it reconstruct-writes, reading the data it does not replace.
        let parity_members = 1 + q.is_some() as u32;
        let rmw_possible = current_parity == parity_members
            && (0..d).all(|i| out.cover[i as usize] == Cover::None || data_ok(i));
        let rmw_reads = written + current_parity;
        // Reconstruct-write needs every page not wholly replaced.
        let rcw_possible = (0..d).all(|i| out.cover[i as usize] == Cover::Whole || data_ok(i));
        let rcw_reads = d - whole;
        if rcw_possible && (!rmw_possible || rcw_reads <= rmw_reads) {
            for i in 0..d {
                if out.cover[i as usize] != Cover::Whole {
                    read(out, l.data_member(row, i));
                }
            }
            out.rcw += pages;
            out.parity_bytes += d as u64 * seg;
        } else if rmw_possible {
            for i in 0..d {
                if out.cover[i as usize] != Cover::None {
                    read(out, l.data_member(row, i));
                }
            }
            for m in parity_current.iter().flatten() {
                read(out, *m);
            }
            out.rmw += pages;
            out.parity_bytes += (2 * written + current_parity) as u64 * seg;
        } else {
            // A lost member's page is only partly replaced (or two are lost, RAID 6): solve
            // the row's old data from everything readable, then compute the parity anew.
            for i in 0..d {
                if data_ok(i) {
                    read(out, l.data_member(row, i));
                }
            }
            for m in parity_current.iter().flatten() {
                read(out, *m);
            }
            out.rcw += pages;
            out.parity_bytes += 2 * d as u64 * seg;
        }
        write_data(out);
        write_parity(out);
    }
}

/// Plan the rebuild of rows `first..=last` of the roles in `targets` that lack current data
/// there, from the members that hold it: RAID 5/6 solve each row from enough other members
/// (once for every target: md recovers all its spares in one pass), mirrors copy the other
/// copy. A target already in sync at a row (rebuilt that far before the pass began) is
/// neither written nor spared as a source. The rows stay locked while the rebuild unit is
/// under way.
pub fn plan_rebuild(l: &Layout, health: &Health, targets: &[u32], first: u64, last: u64, load: impl Fn(u32) -> u32, out: &mut Plan) {
    out.clear();
    let c = l.chunk;
    for row in first..=last {
        let base = row * c;
        let mut lacking = targets.iter().copied().filter(|&t| !health.ok(t, base, c)).peekable();
        if lacking.peek().is_none() {
            out.touch_row(row);
            continue;
        }
        match l.level {
            RaidLevel::Raid5 | RaidLevel::Raid6 => {
                let need = l.data_per_row();
                let (p, q) = l.parity_members(row);
                let sources = (0..need).map(|i| l.data_member(row, i)).chain([p]).chain(q);
                let mut got = 0;
                for m in sources {
                    if got < need && health.ok(m, base, c) {
                        emit(&mut out.reads, 0, MemberIo { member: m as u16, op: Op::Read, offset: base, len: c });
                        got += 1;
                    }
                }
                assert_eq!(got, need, "row {row}: too few members hold data to rebuild {targets:?} from");
                out.stripe_heads += c / PAGE;
                out.parity_bytes += need as u64 * c;
                for t in lacking {
                    emit(&mut out.writes, 0, MemberIo { member: t as u16, op: Op::Write, offset: base, len: c });
                }
            }
            RaidLevel::Raid1 => {
                let (m, _) = least_loaded(health, (0..l.n).map(|m| (m, base)), c, &load)
                    .expect("a mirror with no in-sync member to rebuild from");
                emit(&mut out.reads, 0, MemberIo { member: m as u16, op: Op::Read, offset: base, len: c });
                for t in lacking {
                    emit(&mut out.writes, 0, MemberIo { member: t as u16, op: Op::Write, offset: base, len: c });
                }
            }
            RaidLevel::Raid10 => {
                for t in lacking {
                    // The other copy sits at the neighbouring chunk position (2k and 2k + 1).
                    let partner = (row * l.n as u64 + t as u64) ^ 1;
                    if partner >= l.rows * l.n as u64 {
                        continue; // the unused last position of an odd layout: nothing to copy
                    }
                    let (prow, pm) = (partner / l.n as u64, (partner % l.n as u64) as u32);
                    assert!(health.ok(pm, prow * c, c), "both copies of a RAID 10 chunk lost");
                    emit(&mut out.reads, 0, MemberIo { member: pm as u16, op: Op::Read, offset: prow * c, len: c });
                    emit(&mut out.writes, 0, MemberIo { member: t as u16, op: Op::Write, offset: base, len: c });
                }
            }
            RaidLevel::Raid0 => unreachable!("RAID 0 has nothing to rebuild from"),
        }
        out.touch_row(row);
    }
}

/// Discard data bytes `[a, b)` of a row: passed on only when it covers the whole row.
fn trim_row(l: &Layout, health: &Health, row: u64, a: u64, b: u64, row_bytes: u64, out: &mut Plan) {
    if a > 0 || b < row_bytes {
        out.discard_dropped_bytes += b - a;
        return;
    }
    let base = row * l.chunk;
    for m in (0..l.n).filter(|&m| health.present(m)) {
        emit(&mut out.writes, 0, MemberIo { member: m as u16, op: Op::Trim, offset: base, len: l.chunk });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const K: u64 = 1024;

    fn planned(level: RaidLevel, n: u32, chunk: u64, op: Op, offset: u64, len: u64, health: &Health) -> Plan {
        let l = Layout::new(level, n, chunk, 64 * chunk);
        let mut p = Plan::default();
        plan(&l, health, op, offset, len, |_| 0, false, &mut p);
        p
    }

    fn counts(p: &Plan) -> (usize, usize) {
        (p.reads.len(), p.writes.len())
    }

    /// Every place md keeps array byte `byte`, data first, then P and Q, worked out sector by
    /// sector the way md's own code does, apart from [`Layout`]: raid0 with one zone, raid1,
    /// raid10's `__raid10_find_phys` (near layout, two copies) and raid5.c's
    /// `raid5_compute_sector` for `ALGORITHM_LEFT_SYMMETRIC` (levels 5 and 6).
    fn md_places(level: RaidLevel, n: u64, chunk: u64, byte: u64) -> Vec<(u16, u64)> {
        let sectors_per_chunk = chunk / 512;
        let sector = byte / 512;
        let (chunk_number, chunk_offset) = (sector / sectors_per_chunk, sector % sectors_per_chunk);
        let at = |dev: u64, stripe: u64| (dev as u16, (stripe * sectors_per_chunk + chunk_offset) * 512 + byte % 512);
        match level {
            RaidLevel::Raid0 => vec![at(chunk_number % n, chunk_number / n)],
            RaidLevel::Raid1 => (0..n).map(|dev| (dev as u16, byte)).collect(),
            RaidLevel::Raid10 => {
                let first = chunk_number * 2;
                let (mut dev, mut stripe) = (first % n, first / n);
                let mut places = Vec::new();
                for _ in 0..2 {
                    places.push(at(dev, stripe));
                    dev += 1;
                    if dev == n {
                        dev = 0;
                        stripe += 1;
                    }
                }
                places
            }
            RaidLevel::Raid5 => {
                let data_disks = n - 1;
                let (stripe, dd_idx) = (chunk_number / data_disks, chunk_number % data_disks);
                let pd_idx = data_disks - stripe % n;
                vec![at((pd_idx + 1 + dd_idx) % n, stripe), at(pd_idx, stripe)]
            }
            RaidLevel::Raid6 => {
                let data_disks = n - 2;
                let (stripe, dd_idx) = (chunk_number / data_disks, chunk_number % data_disks);
                let pd_idx = n - 1 - stripe % n;
                let qd_idx = (pd_idx + 1) % n;
                vec![at((pd_idx + 2 + dd_idx) % n, stripe), at(pd_idx, stripe), at(qd_idx, stripe)]
            }
        }
    }

    /// Runs laid out on an array ([`Layout::member_runs`]) cover, on the members, every place
    /// md keeps their pages (data, copies, parity) and nothing else.
    #[test]
    fn laid_out_runs_reach_every_place_md_keeps_them() {
        use std::collections::BTreeSet;
        let pages = |runs: &[(u64, u64)], m: u16| -> Vec<(u16, u64)> {
            runs.iter().flat_map(|&(o, l)| (o / (4 * K)..(o + l).div_ceil(4 * K)).map(move |p| (m, p * 4 * K))).collect()
        };
        for level in [RaidLevel::Raid0, RaidLevel::Raid1, RaidLevel::Raid10, RaidLevel::Raid5, RaidLevel::Raid6] {
            for n in level.min_members() as u64..=7 {
                for chunk in [4 * K, 16 * K] {
                    let rows = 2 * n + 1;
                    let l = Layout::new(level, n as u32, chunk, rows * chunk);
                    let cap = l.capacity();
                    // A run from the start, one crossing rows mid-chunk, one to the end.
                    let runs = [(0, 3 * 4 * K), (chunk + 4 * K, 3 * chunk), (cap - 2 * chunk, 2 * chunk)];
                    let mut want = BTreeSet::new();
                    for &(o, len) in &runs {
                        for at in (o..o + len).step_by(4 * K as usize) {
                            want.extend(md_places(level, n, chunk, at));
                        }
                    }
                    let got: BTreeSet<_> = l.member_runs(&runs).iter().enumerate().flat_map(|(m, r)| pages(r, m as u16)).collect();
                    assert_eq!(got, want, "{level:?} over {n}, chunk {chunk}");
                }
            }
        }
    }

    /// The planner against md's arithmetic, for every page of small arrays of every level,
    /// member count and several chunks: a page write goes to every place md keeps the page
    /// (its data, copies or parity) and nowhere else, and a read of one sector of it comes
    /// from where md keeps that sector (for a mirror, one of its copies).
    #[test]
    fn every_page_is_planned_where_md_puts_it() {
        for level in [RaidLevel::Raid0, RaidLevel::Raid1, RaidLevel::Raid10, RaidLevel::Raid5, RaidLevel::Raid6] {
            for n in level.min_members() as u64..=9 {
                for chunk in [4 * K, 16 * K, 64 * K] {
                    // An odd number of rows, so that an odd RAID 10 ends mid-row.
                    let rows = 2 * n + 1;
                    let l = Layout::new(level, n as u32, chunk, rows * chunk);
                    let health = Health::all_in_sync(n as usize);
                    let mut p = Plan::default();
                    for page in 0..l.capacity() / (4 * K) {
                        let at = page * 4 * K;
                        let want = md_places(level, n, chunk, at);
                        plan(&l, &health, Op::Write, at, 4 * K, |_| 0, false, &mut p);
                        let mut got: Vec<_> = p.writes.iter().map(|w| (w.member, w.offset, w.len)).collect();
                        got.sort_unstable();
                        let mut expected: Vec<_> = want.iter().map(|&(m, o)| (m, o, 4 * K)).collect();
                        expected.sort_unstable();
                        assert_eq!(got, expected, "{level:?} × {n}, chunk {chunk}: write of page {page}");
                        // One sector inside the page, at an odd place.
                        let sector = at + 512 * (1 + page % 7);
                        plan(&l, &health, Op::Read, sector, 512, |_| 0, false, &mut p);
                        assert_eq!(p.reads.len(), 1);
                        let r = p.reads[0];
                        let copies = md_places(level, n, chunk, sector);
                        let data = match level {
                            RaidLevel::Raid1 | RaidLevel::Raid10 => &copies[..],
                            _ => &copies[..1],
                        };
                        assert!(r.len == 512 && data.contains(&(r.member, r.offset)), "{level:?} × {n}, chunk {chunk}: read of {sector} from {r:?}, md keeps it at {data:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn raid5_small_write_reads_two_and_writes_two() {
        for n in 4..=8 {
            let p = planned(RaidLevel::Raid5, n, 64 * K, Op::Write, 4 * K, 4 * K, &Health::all_in_sync(n as usize));
            assert_eq!(counts(&p), (2, 2), "n = {n}");
            assert_eq!(p.stripe_heads, 1);
            assert_eq!(p.member_bytes(), 16 * K);
            // The new parity is computed from the old data, the old parity and the new data.
            assert_eq!(p.parity_bytes, 12 * K, "n = {n}");
        }
        // Four members: both ways read two pages, and md breaks the tie for reconstruct-write.
        let p = planned(RaidLevel::Raid5, 4, 64 * K, Op::Write, 0, 4 * K, &Health::all_in_sync(4));
        assert_eq!((p.rcw, p.rmw), (1, 0));
        // Three members: reconstruct-write reads the one other data page instead.
        let p = planned(RaidLevel::Raid5, 3, 64 * K, Op::Write, 0, 4 * K, &Health::all_in_sync(3));
        assert_eq!((counts(&p), p.rcw, p.rmw), ((1, 2), 1, 0));
        // Either way the parity comes from every data page of the column.
        assert_eq!(p.parity_bytes, 2 * 4 * K);
    }

    #[test]
    fn raid6_small_write_reads_three_and_writes_three() {
        let p = planned(RaidLevel::Raid6, 8, 64 * K, Op::Write, 100 * K, 4 * K, &Health::all_in_sync(8));
        assert_eq!((counts(&p), p.rmw), ((3, 3), 1));
        // Old data, new data, old P and old Q.
        assert_eq!(p.parity_bytes, 4 * 4 * K);
    }

    #[test]
    fn a_full_stripe_write_reads_nothing() {
        let n = 6;
        let p = planned(RaidLevel::Raid5, n, 64 * K, Op::Write, 0, 5 * 64 * K, &Health::all_in_sync(6));
        assert_eq!(counts(&p), (0, 6), "one write per member, parity included");
        assert!(p.writes.iter().all(|w| w.len == 64 * K && w.offset == 0));
        assert_eq!((p.full, p.stripe_heads), (16, 16));
        assert_eq!(p.parity_bytes, 5 * 64 * K, "parity from the five new data chunks alone");
        let q = planned(RaidLevel::Raid6, n, 64 * K, Op::Write, 0, 4 * 64 * K, &Health::all_in_sync(6));
        assert_eq!(counts(&q), (0, 6));
    }

    #[test]
    fn half_a_stripe_is_written_by_reconstruct_write() {
        // 8 members, 7 data chunks: 4 written chunks need 4 + 1 old pages by RMW, 3 by RCW.
        let p = planned(RaidLevel::Raid5, 8, 64 * K, Op::Write, 0, 4 * 64 * K, &Health::all_in_sync(8));
        assert_eq!((counts(&p), p.rcw, p.rmw), ((3, 5), 16, 0));
        assert_eq!(p.parity_bytes, 7 * 64 * K, "the four new chunks and the three read");
        // 2 written: RMW reads 3, RCW reads 5.
        let p = planned(RaidLevel::Raid5, 8, 64 * K, Op::Write, 0, 2 * 64 * K, &Health::all_in_sync(8));
        assert_eq!((counts(&p), p.rmw), ((3, 3), 16));
    }

    #[test]
    fn a_partial_page_is_read_before_it_is_written() {
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 512, 512, &Health::all_in_sync(5));
        assert_eq!((counts(&p), p.rmw), ((2, 2), 1));
        assert!(p.writes.iter().all(|w| w.len == 4 * K && w.offset == 0), "md writes whole pages");
    }

    #[test]
    fn a_degraded_read_is_rebuilt_from_every_other_member() {
        let mut h = Health::all_in_sync(5);
        let l = Layout::new(RaidLevel::Raid5, 5, 64 * K, 64 * 64 * K);
        h.fail(l.data_member(0, 1));
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Read, 64 * K, 8 * K, &h);
        assert_eq!(counts(&p), (4, 0));
        assert_eq!((p.stripe_heads, p.reconstructed_bytes), (2, 8 * K));
        assert_eq!(p.parity_bytes, 4 * 8 * K, "the lost pages solved from the four others");
        // A healthy chunk of the same row is read directly.
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Read, 0, 8 * K, &h);
        assert_eq!((counts(&p), p.stripe_heads), ((1, 0), 0));
    }

    #[test]
    fn a_degraded_read_reads_each_member_page_once() {
        // A whole row of 9 members with one data chunk lost: the reconstruction needs the
        // other seven data chunks, which the read wants anyway, and the parity.
        let l = Layout::new(RaidLevel::Raid5, 9, 16 * K, 64 * 16 * K);
        let mut h = Health::all_in_sync(9);
        h.fail(l.data_member(0, 3));
        let p = planned(RaidLevel::Raid5, 9, 16 * K, Op::Read, 0, 8 * 16 * K, &h);
        assert_eq!((p.reads.len(), p.member_bytes()), (8, 8 * 16 * K));
        // Part of the lost chunk and part of a neighbour: the neighbour's pages are read once,
        // the reconstruction's pages of the other members only as far as it needs them.
        let p = planned(RaidLevel::Raid5, 9, 16 * K, Op::Read, 2 * 16 * K + 8 * K, 16 * K, &h);
        let on = |m: u32| p.reads.iter().filter(|r| r.member as u32 == m).map(|r| (r.offset, r.len)).collect::<Vec<_>>();
        assert_eq!(on(l.data_member(0, 2)), vec![(0, 16 * K)], "its own 8-16 KiB and the 0-8 KiB solved from");
        assert_eq!(on(l.data_member(0, 0)), vec![(0, 8 * K)]);
        assert_eq!(p.reads.len(), 8);
    }

    #[test]
    fn cached_degraded_reads_take_a_stripe_head_per_page_offset() {
        let l = Layout::new(RaidLevel::Raid5, 5, 64 * K, 64 * 64 * K);
        let cached = |h: &Health, offset: u64, len: u64| {
            let mut p = Plan::default();
            plan(&l, h, Op::Read, offset, len, |_| 0, true, &mut p);
            p
        };
        let mut h = Health::all_in_sync(5);
        // Healthy: straight to the member, no stripe head even when asked.
        assert_eq!(cached(&h, 0, 8 * K).stripe_heads, 0);
        h.fail(l.data_member(0, 3));
        // A healthy chunk of a degraded array: its pages, unaligned ends rounded out.
        let p = cached(&h, 2 * K, 8 * K);
        assert_eq!((counts(&p), p.stripe_heads, p.rows), ((1, 0), 3, None), "no row lock for a read");
        // Two chunks whose pieces overlap in member offsets share stripe heads: 60-64 KiB of
        // chunk 0 and 0-8 KiB of chunk 1 are 1 + 2 page offsets; 32-64 and 0-40 cover all 16.
        assert_eq!(cached(&h, 60 * K, 12 * K).stripe_heads, 3);
        assert_eq!(cached(&h, 32 * K, 72 * K).stripe_heads, 16);
        // Three chunks cover every page offset of the row once.
        assert_eq!(cached(&h, 60 * K, 72 * K).stripe_heads, 16);
        // The lost chunk's pages are rebuilt through the same stripe heads, not counted twice.
        let p = cached(&h, 3 * 64 * K, 8 * K);
        assert_eq!((counts(&p), p.stripe_heads, p.reconstructed_bytes), ((4, 0), 2, 8 * K));
        assert_eq!(cached(&h, 2 * 64 * K + 60 * K, 12 * K).stripe_heads, 3);
        // Across rows: each row's heads.
        assert_eq!(cached(&h, 4 * 64 * K - 4 * K, 8 * K).stripe_heads, 2);
    }

    #[test]
    fn degraded_writes_avoid_the_failed_member() {
        let l = Layout::new(RaidLevel::Raid5, 5, 64 * K, 64 * 64 * K);
        // The written chunk's member failed: reconstruct-write, its data lives in parity.
        let mut h = Health::all_in_sync(5);
        h.fail(l.data_member(0, 0));
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rcw), ((3, 1), 1));
        // An unwritten chunk's member failed: read-modify-write.
        let mut h = Health::all_in_sync(5);
        h.fail(l.data_member(0, 2));
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rmw), ((2, 2), 1));
        // The parity member failed: md reconstruct-writes (reading the other three data
        // pages of the column), and the data alone is written.
        let mut h = Health::all_in_sync(5);
        h.fail(l.parity_members(0).0);
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rcw, p.rmw), ((3, 1), 1, 0));
        // RAID 6 of 6 without P: no read-modify-write through Q alone; reconstruct-write
        // reads the other three data pages and writes the data and Q.
        let l6 = Layout::new(RaidLevel::Raid6, 6, 64 * K, 64 * 64 * K);
        let mut h = Health::all_in_sync(6);
        h.fail(l6.parity_members(0).0);
        let p = planned(RaidLevel::Raid6, 6, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rcw, p.rmw), ((3, 2), 1, 0));
        // RAID 5 of 5 whose parity member is being rebuilt and not there yet: the same
        // reconstruct-write, and the new parity goes to the replacement too.
        let mut h = Health::all_in_sync(5);
        let pm = l.parity_members(0).0;
        h.fail(pm);
        h.attach(pm);
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rcw, p.rmw), ((3, 2), 1, 0));
        assert!(p.writes.iter().any(|w| w.member as u32 == pm));
        // Once the rebuild has passed the row, read-modify-write again.
        h.set_in_sync_below(pm, 64 * K);
        let p = planned(RaidLevel::Raid5, 5, 64 * K, Op::Write, 0, 4 * K, &h);
        assert_eq!((counts(&p), p.rcw, p.rmw), ((2, 2), 0, 1));
    }

    #[test]
    fn mirrors_write_every_copy_and_read_one() {
        let p = planned(RaidLevel::Raid1, 3, 64 * K, Op::Write, 8 * K, 16 * K, &Health::all_in_sync(3));
        assert_eq!(counts(&p), (0, 3));
        let p = planned(RaidLevel::Raid1, 3, 64 * K, Op::Read, 8 * K, 16 * K, &Health::all_in_sync(3));
        assert_eq!(counts(&p), (1, 0));
        let p = planned(RaidLevel::Raid10, 4, 64 * K, Op::Write, 60 * K, 8 * K, &Health::all_in_sync(4));
        assert_eq!(counts(&p), (0, 4), "two chunks, two copies each");
    }

    #[test]
    fn raid0_splits_at_chunks_and_trims_pass_through() {
        let p = planned(RaidLevel::Raid0, 4, 64 * K, Op::Write, 32 * K, 128 * K, &Health::all_in_sync(4));
        let got: Vec<_> = p.writes.iter().map(|w| (w.member, w.offset, w.len)).collect();
        assert_eq!(got, vec![(0, 32 * K, 32 * K), (1, 0, 64 * K), (2, 0, 32 * K)]);
        // Rows hold 192 KiB: the first 64 KiB finish row 0, the next 192 KiB are row 1.
        let p = planned(RaidLevel::Raid5, 4, 64 * K, Op::Trim, 128 * K, 256 * K, &Health::all_in_sync(4));
        assert_eq!((p.writes.len() as u64, p.discard_dropped_bytes), (4, 64 * K), "one whole row, on every member");
    }
}
