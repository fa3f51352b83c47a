//! Event queue ordered by `(time, sequence)`: equal times run in the order they were scheduled,
//! which is what makes a run reproducible bit for bit.
//!
//! The queue is a binary min-heap of its own rather than `std`'s `BinaryHeap`: `BinaryHeap`
//! writes a pushed element into the heap and reads it straight back whole (and hands a popped
//! one back through memory), and events are built from narrow fields (a `u16` device index,
//! `u16` fields of the device's events). A wide load of data just written by narrow stores
//! cannot be forwarded from the store buffer and stalls, once per event. Here an event is
//! written once, into the slot where it ends up, and sifting reads only entries written long
//! before; entries move by plain copies (events are small `Copy` data) rather than swaps. The
//! order is the same, as `(time, seq)` keys are unique.

use super::Time;

#[derive(Clone, Copy)]
struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> Entry<E> {
    /// Whether this entry runs before one with key `(time, seq)`.
    #[inline(always)]
    fn before(&self, time: Time, seq: u64) -> bool {
        // One 128-bit comparison (cmp + sbb), no branch on equal times.
        ((self.time as u128) << 64 | self.seq as u128) < ((time as u128) << 64 | seq as u128)
    }
}

/// The simulation clock and its pending events.
pub struct Scheduler<E> {
    now: Time,
    next_seq: u64,
    /// A binary min-heap on `(time, seq)`: each entry runs no earlier than its parent.
    heap: Vec<Entry<E>>,
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
        Scheduler { now, next_seq: 0, heap: Vec::with_capacity(1024), dispatched: 0 }
    }

    /// Current simulated time: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        self.heap.first().map(|e| e.time)
    }

    pub fn pending(&self) -> usize {
        self.heap.len()
    }

    /// Number of events handled so far (a cost measure for benchmarks).
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }
}

/// The heap operations copy entries (events are small plain data), which lets every entry be
/// written once where it ends up.
impl<E: Copy> Scheduler<E> {
    /// Schedule `event` at absolute time `at`. Scheduling in the past is a model bug, checked
    /// in every build (it becomes an internal model error, never a silently moved event).
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: E) {
        assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let seq = self.next_seq;
        self.next_seq += 1;
        let entry = Entry { time: at, seq, event };
        // Find the slot first (reading only entries written long before), then move the
        // ancestors that run later one level down its path, and write the event there once.
        self.heap.push(entry);
        let h = self.heap.as_mut_slice();
        let n = h.len() - 1;
        let mut slot = n;
        while slot > 0 && !get(h, (slot - 1) / 2).before(at, seq) {
            slot = (slot - 1) / 2;
        }
        if slot == n {
            return;
        }
        let mut i = n;
        while i != slot {
            let parent = (i - 1) / 2;
            set(h, i, get(h, parent));
            i = parent;
        }
        set(h, slot, entry);
    }

    /// Remove the earliest event and advance the clock to it.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let last = self.heap.pop()?;
        let entry = if self.heap.is_empty() {
            last
        } else {
            // The root comes out. Its hole moves down the path of earlier children to the
            // bottom (one comparison per level; each child on the way moves up one level),
            // then the last entry, which belongs near the bottom, rises from there to its place.
            let h = self.heap.as_mut_slice();
            let root = get(h, 0);
            let end = h.len();
            let mut hole = 0;
            let mut child = 1;
            while child + 1 < end {
                // Which child is earlier is a coin toss: select it without a branch.
                let (a, b) = (get(h, child), get(h, child + 1));
                child += b.before(a.time, a.seq) as usize;
                set(h, hole, get(h, child));
                hole = child;
                child = 2 * hole + 1;
            }
            if child + 1 == end {
                set(h, hole, get(h, child));
                hole = child;
            }
            while hole > 0 {
                let parent = (hole - 1) / 2;
                if get(h, parent).before(last.time, last.seq) {
                    break;
                }
                set(h, hole, get(h, parent));
                hole = parent;
            }
            set(h, hole, last);
            root
        };
        self.now = entry.time;
        self.dispatched += 1;
        Some((entry.time, entry.event))
    }
}

/// Heap slot `i`, whose index the caller has bounded by the heap's length (every index above
/// is a child checked against the length, or a parent of such an index).
#[inline(always)]
fn get<E: Copy>(h: &[Entry<E>], i: usize) -> Entry<E> {
    debug_assert!(i < h.len());
    // SAFETY: `i < h.len()` as argued at each call site (and checked in debug builds).
    unsafe { *h.get_unchecked(i) }
}

#[inline(always)]
fn set<E: Copy>(h: &mut [Entry<E>], i: usize, e: Entry<E>) {
    debug_assert!(i < h.len());
    // SAFETY: as for `get`.
    unsafe { *h.get_unchecked_mut(i) = e }
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

    /// Pushes and pops interleaved at random come out in `(time, seq)` order, as from a
    /// sorted list.
    #[test]
    fn pops_follow_time_then_schedule_order() {
        let mut s = Scheduler::new();
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for id in 0..20_000u32 {
            if next() % 3 != 0 || reference.is_empty() {
                let at = s.now() + next() % 50;
                s.schedule(at, id);
                reference.push((at, id));
            } else {
                let first = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                let (at, id) = reference.remove(first);
                assert_eq!(s.pop(), Some((at, id)));
            }
        }
        reference.sort();
        let rest: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(rest, reference);
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut s = Scheduler::starting_at(100);
        s.schedule(99, ());
    }
}
