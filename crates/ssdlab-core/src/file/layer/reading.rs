//! Page runs being read from the device, and the operations waiting for them.
//!
//! A page the cache holds may still be on its way from the device (added by a read-ahead, or
//! by another thread's read): Linux locks it and keeps it !uptodate until its bio completes,
//! and a reader that reaches it sleeps in `folio_wait_locked` (mm/filemap.c,
//! `filemap_update_page`). So a sequential reader never runs ahead of its read-ahead: it
//! waits for the window it reached, and only the marker of the call's range starts the next
//! one. These are the runs in flight per file, for readers to wait on.

use rustc_hash::FxHashMap;

/// One run of pages of one file being read.
#[derive(Clone, Debug, Default)]
struct Run {
    file: u32,
    start: u64,
    end: u64,
    /// Bios of it still out.
    bios: u32,
    /// Operations (slots) waiting for it.
    waiters: Vec<u32>,
}

/// The runs in flight, by number, and each file's.
#[derive(Default)]
pub(super) struct Reading {
    runs: Vec<Run>,
    free: Vec<u32>,
    by_file: FxHashMap<u32, Vec<u32>>,
}

impl Reading {
    /// A run of `file`'s pages `[start, end)` about to be read; its number, for its bios.
    pub(super) fn begin(&mut self, file: u32, start: u64, end: u64) -> u32 {
        let run = Run { file, start, end, bios: 0, waiters: Vec::new() };
        let id = match self.free.pop() {
            Some(id) => {
                self.runs[id as usize] = run;
                id
            }
            None => {
                self.runs.push(run);
                (self.runs.len() - 1) as u32
            }
        };
        self.by_file.entry(file).or_default().push(id);
        id
    }

    /// Run `id` went down as `bios` bios; a run of none (a hole: nothing on the device) is
    /// over at once.
    pub(super) fn sent(&mut self, id: u32, bios: u32) {
        self.runs[id as usize].bios = bios;
        if bios == 0 {
            self.end(id);
        }
    }

    /// Operation `slot` waits for every run of `file` in flight that overlaps `[first, last)`;
    /// returns how many.
    pub(super) fn wait(&mut self, file: u32, first: u64, last: u64, slot: u32) -> u32 {
        let Some(ids) = self.by_file.get(&file) else { return 0 };
        let mut n = 0;
        for &id in ids {
            let r = &mut self.runs[id as usize];
            if r.start < last && r.end > first {
                r.waiters.push(slot);
                n += 1;
            }
        }
        n
    }

    /// A bio of run `id` is done; the operations that waited for the run, once it is whole.
    pub(super) fn bio_done(&mut self, id: u32) -> Vec<u32> {
        let r = &mut self.runs[id as usize];
        r.bios -= 1;
        if r.bios > 0 {
            return Vec::new();
        }
        self.end(id)
    }

    fn end(&mut self, id: u32) -> Vec<u32> {
        let r = std::mem::take(&mut self.runs[id as usize]);
        if let Some(ids) = self.by_file.get_mut(&r.file) {
            ids.retain(|&i| i != id);
            if ids.is_empty() {
                self.by_file.remove(&r.file);
            }
        }
        self.free.push(id);
        r.waiters
    }

    /// Runs in flight (for checks).
    #[cfg(test)]
    pub(super) fn in_flight(&self) -> usize {
        self.by_file.values().map(Vec::len).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn readers_wait_for_overlapping_runs_until_their_last_bio() {
        let mut r = Reading::default();
        let a = r.begin(7, 0, 32);
        r.sent(a, 2);
        let b = r.begin(7, 32, 64);
        r.sent(b, 1);
        let hole = r.begin(7, 64, 96);
        r.sent(hole, 0);
        assert_eq!(r.in_flight(), 2);
        // A read of pages 16..40 waits for both; one of 64..80 for none; another file's for none.
        assert_eq!(r.wait(7, 16, 40, 1), 2);
        assert_eq!(r.wait(7, 64, 80, 2), 0);
        assert_eq!(r.wait(8, 0, 64, 3), 0);
        assert!(r.bio_done(a).is_empty());
        assert_eq!(r.bio_done(a), vec![1]);
        assert_eq!(r.bio_done(b), vec![1]);
        assert_eq!(r.in_flight(), 0);
    }
}
