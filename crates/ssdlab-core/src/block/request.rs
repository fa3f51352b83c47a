//! A device request as the block queue keeps it, and the bios merged into it: what the queue
//! and its I/O scheduler share.

use crate::engine::Time;
use crate::io::{BioId, Op};

pub(super) const NO_BIO: u32 = u32::MAX;

/// The segments of a bio over `[offset, offset + len)`: the 4 KiB pages it spans, each
/// apart from the others in memory (at least one: a flush spans none but never merges).
#[inline(always)]
pub(super) fn segments_of(offset: u64, len: u64) -> u16 {
    ((offset + len).div_ceil(4096) - offset / 4096).clamp(1, u16::MAX as u64) as u16
}

/// A bio merged into a request after its first: the part of one host request that travels
/// in that request. Merged bios are chained in the order they joined.
#[derive(Clone, Copy, Debug)]
pub struct ChainedBio {
    pub host: BioId,
    pub offset: u64,
    pub len: u64,
    pub(super) next: u32,
}

/// A device request: what the device is asked to do, who asked, and since when.
#[derive(Clone, Copy, Debug)]
pub struct Request {
    pub op: Op,
    pub offset: u64,
    pub len: u64,
    /// The process (fio job clone) whose I/O this is; schedulers may queue per process.
    pub process: u32,
    /// REQ_SYNC (`rq_is_sync`): reads, direct I/O and the writes someone waits for; false
    /// for background writeback, which CFQ queues apart from every process's own.
    pub sync: bool,
    /// Its bios' segments together ([`crate::block::QueueLimits::max_segments`]; a lone
    /// bio's saturate at u16::MAX, and merging never passes that). Left 0 by a queue that
    /// never merges, where nothing reads it.
    pub segments: u16,
    /// When it entered the block layer: iostat's await counts from here.
    pub started_at: Time,
    /// The host request it was made for (its first bio, kept inline: most requests carry one).
    pub host: BioId,
    /// Bios merged in after the first, chained (`NO_BIO`: none).
    pub(super) merged: u32,
}

impl Request {
    /// A request carrying one host request's bio.
    pub fn new(op: Op, offset: u64, len: u64, process: u32, started_at: Time, host: BioId) -> Request {
        Request { op, offset, len, process, sync: true, segments: segments_of(offset, len), started_at, host, merged: NO_BIO }
    }

    /// Whether it carries bios of more than one host request.
    pub fn is_merged(&self) -> bool {
        self.merged != NO_BIO
    }

    /// The length of its first bio (kept inline): what its chained bios leave of its length.
    pub(super) fn first_bio_len(&self, bios: &[ChainedBio]) -> u64 {
        let mut len = self.len;
        let mut b = self.merged;
        while b != NO_BIO {
            len -= bios[b as usize].len;
            b = bios[b as usize].next;
        }
        len
    }

    /// Chains the bios from `head` on after its own, so that they complete in the order they
    /// joined.
    pub(super) fn append_bios(&mut self, bios: &mut [ChainedBio], head: u32) {
        if self.merged == NO_BIO {
            self.merged = head;
            return;
        }
        let mut last = self.merged;
        while bios[last as usize].next != NO_BIO {
            last = bios[last as usize].next;
        }
        bios[last as usize].next = head;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bio(host: BioId, offset: u64, len: u64, next: u32) -> ChainedBio {
        ChainedBio { host, offset, len, next }
    }

    #[test]
    fn a_chain_is_appended_at_its_end_and_leaves_the_first_bio_its_length() {
        let mut bios = vec![bio(1, 4096, 4096, 1), bio(2, 8192, 8192, NO_BIO), bio(3, 16384, 4096, NO_BIO)];
        let mut rq = Request::new(Op::Write, 0, 4096, 0, 0, 0);
        assert_eq!(rq.first_bio_len(&bios), 4096);
        rq.append_bios(&mut bios, 0); // bios 0 and 1 join
        rq.len += 4096 + 8192;
        assert_eq!((rq.merged, rq.first_bio_len(&bios)), (0, 4096));
        rq.append_bios(&mut bios, 2);
        rq.len += 4096;
        assert_eq!(bios[1].next, 2, "after the last link");
        assert_eq!(rq.first_bio_len(&bios), 4096);
    }
}
