//! A data-verified array: real bytes on the members, written as the plans say and checked on
//! every host read.

use super::{Array, NO_UPPER};
use crate::array::data::DataArray;
use crate::array::layout::Layout;
use crate::array::plan::Plan;
use crate::device::Drive;
use crate::io::Op;

/// A data-verified array's bytes: the members' ([`DataArray`]) and what the host wrote
/// (`image`). Writes take effect when their member writes are issued, reads are checked when
/// their member reads are; rows in work are locked, so nothing changes in between.
pub(super) struct Verifier {
    pub(super) data: DataArray,
    pub(super) image: Vec<u8>,
    rng: u64,
    pub(super) checked_bytes: u64,
    pub(super) errors: u64,
    pub(super) first_error: Option<String>,
}

impl Verifier {
    pub(super) fn new(layout: Layout) -> Verifier {
        Verifier {
            data: DataArray::new(layout),
            image: vec![0; layout.capacity() as usize],
            rng: 0x9E37_79B9_7F4A_7C15,
            checked_bytes: 0,
            errors: 0,
            first_error: None,
        }
    }

    pub(super) fn error(&mut self, what: String) {
        self.errors += 1;
        self.first_error.get_or_insert(what);
    }

    pub(super) fn bytes(&mut self, len: u64) -> Vec<u8> {
        (0..len)
            .map(|_| {
                self.rng ^= self.rng << 13;
                self.rng ^= self.rng >> 7;
                self.rng ^= self.rng << 17;
                self.rng as u8
            })
            .collect()
    }
}

impl<D: Drive> Array<D> {
    /// A data-verified array's read stage: a host read is checked now; the reads of a write or
    /// a rebuild unit are kept for its write stage.
    pub(super) fn verify_read_stage(&mut self, s: u32) {
        let v = self.verify.as_mut().expect("checked");
        let slot = &mut self.slots[s as usize];
        let mut p = Plan::default();
        p.reads.extend_from_slice(&slot.reads);
        let (offset, len) = (slot.offset, slot.len);
        if slot.upper == NO_UPPER || slot.op != Some(Op::Read) {
            // The reads a write or rebuild unit computes from: checked and kept as of now.
            match v.data.capture(&self.health, &p) {
                Ok(c) => slot.captured = Some(c),
                Err(e) => v.error(format!("read stage at {offset}: {e}")),
            }
            return;
        }
        match v.data.read(&self.health, &p, offset, len) {
            Ok(got) => {
                v.checked_bytes += len;
                if got[..] != v.image[offset as usize..(offset + len) as usize] {
                    v.error(format!("a read of {len} bytes at {offset} returned other bytes than were written"));
                }
            }
            Err(e) => v.error(format!("read at {offset}: {e}")),
        }
    }

    /// A data-verified array's write stage: the new bytes (and parity) reach the members.
    pub(super) fn verify_write_stage(&mut self, s: u32) {
        let v = self.verify.as_mut().expect("checked");
        let slot = &mut self.slots[s as usize];
        let Some(captured) = slot.captured.take() else { return };
        let mut p = Plan::default();
        p.reads.extend(captured.iter().map(|(io, _)| *io));
        p.writes.extend_from_slice(&slot.writes);
        let (offset, len) = (slot.offset, slot.len);
        let result = if slot.rebuild {
            let c = self.layout.chunk;
            v.data.rebuild_captured(captured, &p, offset / c, (offset + len - 1) / c)
        } else if slot.op == Some(Op::Write) {
            let bytes = v.bytes(len);
            v.image[offset as usize..(offset + len) as usize].copy_from_slice(&bytes);
            v.data.write_captured(captured, &p, offset, &bytes)
        } else {
            Ok(())
        };
        if let Err(e) = result {
            v.error(format!("write stage at {offset}: {e}"));
        }
    }
}
