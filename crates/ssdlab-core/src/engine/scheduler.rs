//! Event queue ordered by `(time, sequence)`: equal times run in the order they were scheduled,
//! which is what makes a run reproducible bit for bit.

use super::Time;
use std::cmp::Ordering;
use std::collections::BinaryHeap;

struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}
impl<E> Eq for Entry<E> {}
impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<E> Ord for Entry<E> {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest `(time, seq)` first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

/// The simulation clock and its pending events.
pub struct Scheduler<E> {
    now: Time,
    next_seq: u64,
    heap: BinaryHeap<Entry<E>>,
    dispatched: u64,
}

impl<E> Default for Scheduler<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> Scheduler<E> {
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// A clock that starts at `now`: a run on a device whose clock has already advanced.
    pub fn starting_at(now: Time) -> Self {
        Scheduler { now, next_seq: 0, heap: BinaryHeap::with_capacity(1024), dispatched: 0 }
    }

    /// Current simulated time: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Schedule `event` at absolute time `at`. Scheduling in the past is a model bug, checked
    /// in every build (it becomes an internal model error, never a silently moved event).
    #[inline]
    pub fn schedule(&mut self, at: Time, event: E) {
        assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        self.heap.push(Entry { time: at, seq, event });
    }

    /// Remove the earliest event and advance the clock to it.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let entry = self.heap.pop()?;
        self.now = entry.time;
        self.dispatched += 1;
        Some((entry.time, entry.event))
    }

    /// Time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.peek().map(|e| e.time)
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Number of events handled so far (a cost measure for benchmarks).
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_schedule_order() {
        let mut s = Scheduler::new();
        s.schedule(10, 'a');
        s.schedule(5, 'b');
        s.schedule(10, 'c');
        s.schedule(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(s.now(), 10);
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut s = Scheduler::starting_at(100);
        s.schedule(99, ());
    }
}
