//! Data-verified arrays: members hold real bytes and plans are carried out on them, parity
//! really computed (XOR for P, the GF(2^8) syndrome for Q). An executor that knows nothing of
//! the planner's choices computes each written page from what the plan read, the way any
//! correct implementation could: from all the row's data, by updating the old parity with the
//! change, or by first solving for data nobody read. A plan that did not read enough, or read
//! a member without current data, is an error. A failed member's bytes are replaced with
//! junk, so a computation that leans on them shows up as wrong data later.

use super::layout::{RaidLevel, PAGE};
use super::gf::Gf;
use super::layout::Layout;
use super::plan::{Health, MemberIo, Plan};
use crate::error::DataError;
use crate::io::Op;

type Page = Vec<u8>;

/// Bytes a plan's reads returned when they were issued, by read.
pub type Captured = Vec<(MemberIo, Vec<u8>)>;

pub struct DataArray {
    layout: Layout,
    gf: Gf,
    /// Bytes of each role.
    stores: Vec<Vec<u8>>,
    /// While a plan that read earlier is carried out: what its reads returned then (a
    /// member may have failed since).
    captured: Option<Captured>,
}

/// What is known of one row's page column: per role slot (data 0..D, then P, then Q).
struct Column {
    vals: Vec<Option<Page>>,
}

fn xor_into(a: &mut [u8], b: &[u8]) {
    for (x, y) in a.iter_mut().zip(b) {
        *x ^= y;
    }
}

impl DataArray {
    /// An array of zeros (consistent: the parity of zeros is zero).
    pub fn new(layout: Layout) -> DataArray {
        let bytes = (layout.rows * layout.chunk) as usize;
        DataArray { layout, gf: Gf::new(), stores: vec![vec![0; bytes]; layout.n as usize], captured: None }
    }

    /// Role `role` loses its data: its bytes become junk from `seed`.
    pub fn fail(&mut self, role: u32, seed: u64) {
        let mut x = seed | 1;
        for b in self.stores[role as usize].iter_mut() {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            *b = x as u8;
        }
    }

    /// The bytes of role `role` (to compare a rebuilt member with what it should hold).
    pub fn member(&self, role: u32) -> &[u8] {
        &self.stores[role as usize]
    }

    fn parity_levels(&self) -> bool {
        matches!(self.layout.level, RaidLevel::Raid5 | RaidLevel::Raid6)
    }

    /// Role slots of a row: data members in order, then P and Q.
    fn slots(&self, row: u64) -> Vec<u32> {
        let l = &self.layout;
        let (p, q) = l.parity_members(row);
        (0..l.data_per_row()).map(|i| l.data_member(row, i)).chain([p]).chain(q).collect()
    }

    fn page(&self, role: u32, offset: u64) -> Page {
        if let Some(c) = &self.captured {
            if let Some((io, bytes)) =
                c.iter().find(|(io, _)| io.member as u32 == role && io.offset <= offset && offset + PAGE <= io.offset + io.len)
            {
                let at = (offset - io.offset) as usize;
                return bytes[at..at + PAGE as usize].to_vec();
            }
        }
        self.stores[role as usize][offset as usize..(offset + PAGE) as usize].to_vec()
    }

    /// Check a plan's reads against `health` and keep what they return now, for carrying the
    /// plan out later with [`DataArray::write_captured`] or [`DataArray::rebuild_captured`].
    pub fn capture(&self, health: &Health, plan: &Plan) -> Result<Captured, DataError> {
        self.check_ios(health, plan)?;
        Ok(plan
            .reads
            .iter()
            .map(|io| (*io, self.stores[io.member as usize][io.offset as usize..(io.offset + io.len) as usize].to_vec()))
            .collect())
    }

    /// [`DataArray::write`] with the plan's reads as `captured` returned them.
    pub fn write_captured(&mut self, captured: Captured, plan: &Plan, offset: u64, data: &[u8]) -> Result<(), DataError> {
        self.captured = Some(captured);
        let all = Health::all_in_sync(self.layout.n as usize);
        let r = self.write(&all, plan, offset, data);
        self.captured = None;
        r
    }

    /// [`DataArray::rebuild`] with the plan's reads as `captured` returned them.
    pub fn rebuild_captured(&mut self, captured: Captured, plan: &Plan, first: u64, last: u64) -> Result<(), DataError> {
        self.captured = Some(captured);
        let all = Health::all_in_sync(self.layout.n as usize);
        let r = self.rebuild(&all, plan, first, last);
        self.captured = None;
        r
    }

    /// Checks every planned I/O touches only member bytes with current data (reads) and
    /// lies within the members.
    fn check_ios(&self, health: &Health, plan: &Plan) -> Result<(), DataError> {
        let size = self.layout.rows * self.layout.chunk;
        for io in plan.reads.iter().chain(&plan.writes) {
            if io.op != Op::Flush && io.offset + io.len > size {
                return Err(DataError(format!("{io:?} lies beyond the member's {size} bytes")));
            }
        }
        for io in &plan.reads {
            if !health.ok(io.member as u32, io.offset, io.len) {
                return Err(DataError(format!("{io:?} reads a member without current data there")));
            }
        }
        Ok(())
    }

    /// The pages the plan read, by (role, page offset).
    fn reads_cover(plan: &Plan, role: u32, page_off: u64) -> bool {
        plan.reads
            .iter()
            .any(|r| r.member as u32 == role && r.offset <= page_off && page_off + PAGE <= r.offset + r.len)
    }

    /// Fill every data slot of `col` (and then P and Q) if the known values allow.
    fn solve(&self, col: &mut Column, d: usize) -> Result<(), DataError> {
        let gf = &self.gf;
        let unknown: Vec<usize> = (0..d).filter(|&i| col.vals[i].is_none()).collect();
        let has_q = col.vals.len() > d + 1;
        match unknown.len() {
            0 => {}
            1 => {
                let x = unknown[0];
                if let Some(p) = col.vals[d].clone() {
                    let mut v = p;
                    for i in (0..d).filter(|&i| i != x) {
                        xor_into(&mut v, col.vals[i].as_ref().expect("known"));
                    }
                    col.vals[x] = Some(v);
                } else if has_q && col.vals[d + 1].is_some() {
                    let mut v = col.vals[d + 1].clone().expect("checked");
                    for i in (0..d).filter(|&i| i != x) {
                        let c = gf.pow2(i as u32);
                        for (a, b) in v.iter_mut().zip(col.vals[i].as_ref().expect("known")) {
                            *a ^= gf.mul(c, *b);
                        }
                    }
                    let c = gf.pow2(x as u32);
                    v.iter_mut().for_each(|a| *a = gf.div(*a, c));
                    col.vals[x] = Some(v);
                } else {
                    return Err(DataError("one data page unknown and no parity read to solve it".into()));
                }
            }
            2 if has_q && col.vals[d].is_some() && col.vals[d + 1].is_some() => {
                let (x, y) = (unknown[0], unknown[1]);
                let mut pxy = col.vals[d].clone().expect("checked");
                let mut qxy = col.vals[d + 1].clone().expect("checked");
                for i in (0..d).filter(|&i| i != x && i != y) {
                    let v = col.vals[i].as_ref().expect("known");
                    xor_into(&mut pxy, v);
                    let c = gf.pow2(i as u32);
                    for (a, b) in qxy.iter_mut().zip(v) {
                        *a ^= gf.mul(c, *b);
                    }
                }
                // D_x + D_y = Pxy, g^x D_x + g^y D_y = Qxy.
                let (gx, gy) = (gf.pow2(x as u32), gf.pow2(y as u32));
                let den = gx ^ gy;
                let dx: Page = pxy.iter().zip(&qxy).map(|(&p, &q)| gf.div(q ^ gf.mul(gy, p), den)).collect();
                let dy: Page = pxy.iter().zip(&dx).map(|(&p, &a)| p ^ a).collect();
                col.vals[x] = Some(dx);
                col.vals[y] = Some(dy);
            }
            k => return Err(DataError(format!("{k} data pages unknown: the plan did not read enough"))),
        }
        self.fill_parity(col, d);
        Ok(())
    }

    /// P and Q from all the data of a column.
    fn fill_parity(&self, col: &mut Column, d: usize) {
        let mut p = vec![0u8; PAGE as usize];
        let mut q = vec![0u8; PAGE as usize];
        for i in 0..d {
            let v = col.vals[i].as_ref().expect("all data known");
            xor_into(&mut p, v);
            let c = self.gf.pow2(i as u32);
            for (a, b) in q.iter_mut().zip(v) {
                *a ^= self.gf.mul(c, *b);
            }
        }
        col.vals[d] = Some(p);
        if col.vals.len() > d + 1 {
            col.vals[d + 1] = Some(q);
        }
    }

    /// The values the plan's reads give for the column at `row`, `page` (member offset).
    fn column_from_reads(&self, plan: &Plan, slots: &[u32], page_off: u64) -> Column {
        Column {
            vals: slots
                .iter()
                .map(|&m| Self::reads_cover(plan, m, page_off).then(|| self.page(m, page_off)))
                .collect(),
        }
    }

    /// Carry out a write plan for host bytes `data` at array offset `offset`.
    pub fn write(&mut self, health: &Health, plan: &Plan, offset: u64, data: &[u8]) -> Result<(), DataError> {
        self.check_ios(health, plan)?;
        let l = self.layout;
        if !self.parity_levels() {
            // Mirrors and stripes: each written member range holds the host bytes it maps.
            let writes: Vec<MemberIo> = plan.writes.clone();
            for w in writes {
                for (at, n) in self.chunk_pieces(w.offset, w.len) {
                    let logical = self.logical_of(w.member as u32, at).ok_or_else(|| DataError("write to no data".into()))?;
                    let src = data
                        .get((logical - offset) as usize..(logical - offset + n) as usize)
                        .ok_or_else(|| DataError(format!("{w:?} writes bytes the host did not send")))?;
                    self.stores[w.member as usize][at as usize..(at + n) as usize].copy_from_slice(src);
                }
            }
            return Ok(());
        }
        let d = l.data_per_row() as usize;
        let row_bytes = d as u64 * l.chunk;
        // New contents of every written page, computed from the state before the write.
        let mut out: Vec<(u32, u64, Page)> = Vec::new();
        let end = offset + data.len() as u64;
        let (first_row, last_row) = (offset / row_bytes, (end - 1) / row_bytes);
        for row in first_row..=last_row {
            let slots = self.slots(row);
            for col in (0..l.chunk).step_by(PAGE as usize) {
                let page_off = row * l.chunk + col;
                // New bytes per data slot: (start in page, bytes).
                let mut new: Vec<Option<(usize, &[u8])>> = vec![None; d];
                for (i, n) in new.iter_mut().enumerate() {
                    let lo = row * row_bytes + i as u64 * l.chunk + col;
                    let (a, b) = (lo.max(offset), (lo + PAGE).min(end));
                    if a < b {
                        *n = Some(((a - lo) as usize, &data[(a - offset) as usize..(b - offset) as usize]));
                    }
                }
                if new.iter().all(Option::is_none) {
                    continue;
                }
                let written_pages: Vec<u32> = plan
                    .writes
                    .iter()
                    .filter(|w| w.offset <= page_off && page_off + PAGE <= w.offset + w.len)
                    .map(|w| w.member as u32)
                    .collect();
                let old = self.column_from_reads(plan, &slots, page_off);
                // Post-write data: new bytes over the old page where the page is partly new.
                // A partly written page nobody read (a replacement ahead of its rebuild) is
                // left unknown here and solved from the row below.
                let mut post = Column { vals: vec![None; slots.len()] };
                let mut unread_partial = false;
                for i in 0..d {
                    post.vals[i] = match new[i] {
                        Some((0, bytes)) if bytes.len() == PAGE as usize => Some(bytes.to_vec()),
                        Some((at, bytes)) => match &old.vals[i] {
                            Some(o) => {
                                let mut v = o.clone();
                                v[at..at + bytes.len()].copy_from_slice(bytes);
                                Some(v)
                            }
                            None => {
                                unread_partial |= written_pages.contains(&slots[i]);
                                None
                            }
                        },
                        None => old.vals[i].clone(),
                    };
                }
                let writes_parity = slots[d..].iter().any(|m| written_pages.contains(m));
                let all_known = (0..d).all(|i| post.vals[i].is_some());
                let delta = if writes_parity && !all_known && !unread_partial {
                    self.delta(&old, &post, &new, d, &slots, &written_pages)
                } else {
                    None
                };
                if writes_parity && all_known {
                    self.fill_parity(&mut post, d);
                } else if let Some((p, q)) = delta {
                    post.vals[d] = p;
                    if slots.len() > d + 1 {
                        post.vals[d + 1] = q;
                    }
                } else if writes_parity || unread_partial {
                    // Solve the old state for the data nobody read, then recompute.
                    let mut pre = Column { vals: old.vals.clone() };
                    self.solve(&mut pre, d).map_err(|e| DataError(format!("row {row}: {e}")))?;
                    for i in 0..d {
                        post.vals[i] = match new[i] {
                            None => pre.vals[i].clone(),
                            Some((at, bytes)) => {
                                let mut v = pre.vals[i].clone().expect("solved");
                                v[at..at + bytes.len()].copy_from_slice(bytes);
                                Some(v)
                            }
                        };
                    }
                    self.fill_parity(&mut post, d);
                }
                for (k, &m) in slots.iter().enumerate() {
                    if written_pages.contains(&m) {
                        let v = post.vals[k].clone().ok_or_else(|| DataError(format!("row {row}: nothing to write to member {m}")))?;
                        out.push((m, page_off, v));
                    }
                }
            }
        }
        for (m, at, v) in out {
            self.stores[m as usize][at as usize..(at + PAGE) as usize].copy_from_slice(&v);
        }
        Ok(())
    }

    /// Read-modify-write: new P (and Q) from the old ones and the change of the written data.
    fn delta(
        &self,
        old: &Column,
        post: &Column,
        new: &[Option<(usize, &[u8])>],
        d: usize,
        slots: &[u32],
        written: &[u32],
    ) -> Option<(Option<Page>, Option<Page>)> {
        let mut p = old.vals[d].clone();
        let mut q = if slots.len() > d + 1 { old.vals[d + 1].clone() } else { None };
        let want_p = written.contains(&slots[d]);
        let want_q = slots.len() > d + 1 && written.contains(&slots[d + 1]);
        if (want_p && p.is_none()) || (want_q && q.is_none()) {
            return None;
        }
        for i in (0..d).filter(|&i| new[i].is_some()) {
            let (o, n) = (old.vals[i].as_ref()?, post.vals[i].as_ref()?);
            let change: Page = o.iter().zip(n).map(|(a, b)| a ^ b).collect();
            if let Some(p) = p.as_mut() {
                xor_into(p, &change);
            }
            if let Some(q) = q.as_mut() {
                let c = self.gf.pow2(i as u32);
                for (a, b) in q.iter_mut().zip(&change) {
                    *a ^= self.gf.mul(c, *b);
                }
            }
        }
        Some((p.filter(|_| want_p), q.filter(|_| want_q)))
    }

    /// A member range cut at chunk bounds (a merged member I/O may join chunks that are not
    /// neighbours in the array).
    fn chunk_pieces(&self, offset: u64, len: u64) -> Vec<(u64, u64)> {
        let c = self.layout.chunk;
        let mut out = Vec::new();
        let mut at = offset;
        while at < offset + len {
            let n = (c - at % c).min(offset + len - at);
            out.push((at, n));
            at += n;
        }
        out
    }

    /// The array offset of a non-parity level's member byte.
    fn logical_of(&self, m: u32, member_off: u64) -> Option<u64> {
        let l = &self.layout;
        let (row, within) = (member_off / l.chunk, member_off % l.chunk);
        let k = match l.level {
            RaidLevel::Raid0 => row * l.n as u64 + m as u64,
            RaidLevel::Raid1 => return Some(member_off),
            RaidLevel::Raid10 => {
                let k = (row * l.n as u64 + m as u64) / 2;
                // An odd layout's last position (odd members, odd rows) holds no data.
                if (k + 1) * l.chunk > l.capacity() {
                    return None;
                }
                k
            }
            _ => return None,
        };
        Some(k * l.chunk + within)
    }

    /// Carry out a read plan for `len` bytes at `offset`; returns what the host gets.
    pub fn read(&self, health: &Health, plan: &Plan, offset: u64, len: u64) -> Result<Vec<u8>, DataError> {
        self.check_ios(health, plan)?;
        let l = self.layout;
        let mut out = vec![0u8; len as usize];
        if !self.parity_levels() {
            for r in &plan.reads {
                for (m_at, n) in self.chunk_pieces(r.offset, r.len) {
                    let logical = self.logical_of(r.member as u32, m_at).ok_or_else(|| DataError("read of no data".into()))?;
                    let at = (logical - offset) as usize;
                    out.get_mut(at..at + n as usize)
                        .ok_or_else(|| DataError(format!("{r:?} reads bytes the host did not ask for")))?
                        .copy_from_slice(&self.stores[r.member as usize][m_at as usize..(m_at + n) as usize]);
                }
            }
            return Ok(out);
        }
        let d = l.data_per_row() as usize;
        let row_bytes = d as u64 * l.chunk;
        let end = offset + len;
        let mut at = offset;
        while at < end {
            let (row, in_row) = (at / row_bytes, at % row_bytes);
            let (i, col) = ((in_row / l.chunk) as usize, in_row % l.chunk);
            let page_col = col / PAGE * PAGE;
            let n = (PAGE - (col - page_col)).min(end - at);
            let slots = self.slots(row);
            let member_off = row * l.chunk + col;
            let direct = plan
                .reads
                .iter()
                .any(|r| r.member as u32 == slots[i] && r.offset <= member_off && member_off + n <= r.offset + r.len);
            let bytes = if direct {
                self.stores[slots[i] as usize][member_off as usize..(member_off + n) as usize].to_vec()
            } else {
                let page_off = row * l.chunk + page_col;
                let mut c = self.column_from_reads(plan, &slots, page_off);
                c.vals[i] = None;
                self.solve(&mut c, d).map_err(|e| DataError(format!("row {row}: {e}")))?;
                let v = c.vals[i].as_ref().expect("solved");
                v[(col - page_col) as usize..(col - page_col + n) as usize].to_vec()
            };
            out[(at - offset) as usize..(at - offset + n) as usize].copy_from_slice(&bytes);
            at += n;
        }
        Ok(out)
    }

    /// Carry out a rebuild plan for rows `first..=last`: every page it writes is solved
    /// from what it read (the other pages it writes unknown too: a RAID 6 pass may rebuild
    /// two members at once).
    pub fn rebuild(&mut self, health: &Health, plan: &Plan, first: u64, last: u64) -> Result<(), DataError> {
        self.check_ios(health, plan)?;
        let l = self.layout;
        for w in &plan.writes {
            let target = w.member as u32;
            for page_off in (w.offset..w.offset + w.len).step_by(PAGE as usize) {
                let row = page_off / l.chunk;
                if row < first || row > last {
                    return Err(DataError(format!("{w:?} writes outside rows {first}..={last}")));
                }
                let value = if self.parity_levels() {
                    let slots = self.slots(row);
                    let d = l.data_per_row() as usize;
                    let mut c = self.column_from_reads(plan, &slots, page_off);
                    let k = slots.iter().position(|&m| m == target).expect("the target is in the row");
                    c.vals[k] = None;
                    self.solve(&mut c, d).map_err(|e| DataError(format!("row {row}: {e}")))?;
                    c.vals[k].clone().expect("solved")
                } else {
                    // A copy of the same logical page, among what the plan read.
                    let Some(want) = self.logical_of(target, page_off) else { continue };
                    let src = plan.reads.iter().find_map(|r| {
                        (r.offset..r.offset + r.len)
                            .step_by(PAGE as usize)
                            .find(|&x| self.logical_of(r.member as u32, x) == Some(want))
                            .map(|x| (r.member, x))
                    });
                    let Some((m, from)) = src else {
                        return Err(DataError(format!("row {row}: no copy of logical byte {want} was read")));
                    };
                    self.page(m as u32, from)
                };
                self.stores[target as usize][page_off as usize..(page_off + PAGE) as usize].copy_from_slice(&value);
            }
        }
        Ok(())
    }
}
