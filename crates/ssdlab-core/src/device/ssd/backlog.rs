//! Flash work a die owes: GC relocations, SLC folding and erases, and the host programs queued
//! behind them.
//!
//! The FTL decides GC at once (its state changes immediately), but the die carries the work out
//! one operation at a time whenever nothing else holds it. A host read that arrives at a die
//! busy with GC therefore waits for the operation in progress, not for the whole backlog (the
//! read-first scheduling controllers use). A host program for that die waits behind the
//! backlog, as it must: the space it writes into is what the GC is freeing, and this is what
//! slows the host down to the rate GC can sustain.

use std::collections::VecDeque;

use crate::engine::Time;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Work {
    /// `count` internal operations of `ns` each (senses, programs, erases).
    Internal { ns: Time, count: u64 },
    /// A host program unit waiting for the GC ahead of it.
    Program { unit: u32, ns: Time },
}

/// What a die does next: a run of internal operations, or one queued host program.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    Internal(Time),
    Program { unit: u32, ns: Time },
}

/// One die's queue of owed work.
#[derive(Clone, Debug, Default)]
pub struct Backlog {
    queue: VecDeque<Work>,
    total_ns: Time,
    /// When the step event on its way for this die is due (None: none is).
    pub step_at: Option<Time>,
}

impl Backlog {
    /// Owe `count` internal operations of `op_ns` each.
    pub fn push(&mut self, op_ns: Time, count: u64) {
        if op_ns == 0 || count == 0 {
            return;
        }
        match self.queue.back_mut() {
            Some(Work::Internal { ns, count: n }) if *ns == op_ns => *n += count,
            _ => self.queue.push_back(Work::Internal { ns: op_ns, count }),
        }
        self.total_ns += op_ns * count;
    }

    /// Queue host program `unit` (taking `ns`) behind the work owed so far.
    pub fn push_program(&mut self, unit: u32, ns: Time) {
        self.queue.push_back(Work::Program { unit, ns });
        self.total_ns += ns;
    }

    /// Work still owed, ns.
    pub fn total_ns(&self) -> Time {
        self.total_ns
    }

    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// The die's next step: whole internal operations adding up to at least `slice_ns` (or
    /// up to the next queued program), or the program at the front. None when nothing is owed.
    pub fn take(&mut self, slice_ns: Time) -> Option<Step> {
        if let Some(&Work::Program { unit, ns }) = self.queue.front() {
            self.queue.pop_front();
            self.total_ns -= ns;
            return Some(Step::Program { unit, ns });
        }
        let mut taken = 0;
        while taken < slice_ns {
            let Some(Work::Internal { ns, count }) = self.queue.front_mut() else { break };
            let want = (slice_ns - taken).div_ceil(*ns).min(*count);
            taken += want * *ns;
            *count -= want;
            if *count == 0 {
                self.queue.pop_front();
            }
        }
        self.total_ns -= taken;
        (taken > 0).then_some(Step::Internal(taken))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_are_whole_operations_and_add_up() {
        let mut b = Backlog::default();
        b.push(50, 4); // four senses
        b.push(500, 2); // two programs
        b.push(3_000, 1); // an erase
        assert_eq!(b.total_ns(), 4_200);
        // The four senses (200 ns) do not fill a 500 ns slice: one program joins them.
        assert_eq!(b.take(500), Some(Step::Internal(700)));
        assert_eq!(b.total_ns(), 3_500);
        let mut steps = vec![];
        while let Some(s) = b.take(500) {
            steps.push(s);
        }
        assert_eq!(steps, vec![Step::Internal(500), Step::Internal(3_000)], "an erase is never split");
        assert!(b.is_empty() && b.total_ns() == 0);
    }

    #[test]
    fn host_programs_wait_for_the_work_owed_before_them() {
        let mut b = Backlog::default();
        b.push(500, 2);
        b.push_program(7, 400);
        b.push(3_000, 1);
        assert_eq!(b.total_ns(), 4_400);
        assert_eq!(b.take(10_000), Some(Step::Internal(1_000)), "a slice stops at a queued program");
        assert_eq!(b.take(10_000), Some(Step::Program { unit: 7, ns: 400 }));
        assert_eq!(b.take(10_000), Some(Step::Internal(3_000)));
        assert_eq!(b.take(10_000), None);
    }
}
