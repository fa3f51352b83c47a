//! Event queue ordered by `(time, sequence)`: equal times run in the order they were scheduled,
//! which is what makes a run reproducible bit for bit.
//!
//! Popping the earliest event is a chain of dependent loads and comparisons, one link per
//! level of the heap, and it is a large part of what a simulated request costs when many
//! events are pending (an array at queue depth 256 keeps about 256). So the heap holds only
//! 16-byte keys, four children to a node: a node's children are one 64-byte cache line, the
//! heap is half as deep as a binary one, and the earliest of four is picked without a branch.
//! The events themselves stay where they were written, in a slab, until they are popped.
//!
//! A key is the event's time and one more word holding its sequence number above its slab
//! slot. Sequence numbers are unique, so comparing the two words as one 128-bit number orders
//! by `(time, sequence)` and the slot bits never decide anything. The sequence has the bits
//! the slots leave (40 at first); when it runs out, or the slab outgrows its bits, the pending
//! keys are sorted and renumbered by rank, which keeps their order (and a sorted array is a
//! valid heap).
//!
//! In front of the heap sits a timing wheel: events due within the next ~262 µs go into one
//! of 1,024 buckets of 256 ns each (four keys a bucket; a fuller bucket sends the key on to
//! the heap), found through a bitmap of the buckets in use. A device at queue depth 256
//! schedules nearly everything that close, so most events never enter the heap: an array
//! of 8 drives at QD256 schedules about 2.4 events per bucket, and its flash reads end
//! past 131 µs when dies queue (with 512 buckets of three keys a quarter of its events went
//! to the heap, with these about a tenth; 64 KiB of keys stay in L2). `pop` takes
//! the earlier of the wheel's first key and the heap's, comparing whole keys, so the order
//! is the heap's alone would give, ties included.

use super::Time;

/// A pending event's place in the order, and where its payload is.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[repr(C)]
struct Key {
    time: Time,
    /// Sequence number above the slab slot.
    order: u64,
}

impl Key {
    /// Fills the unused lanes of the last node, so that a node always has four children to
    /// compare (real keys never reach it: see [`EventQueue::schedule`]).
    const NONE: Key = Key { time: Time::MAX, order: u64::MAX };

    #[inline(always)]
    fn wide(self) -> u128 {
        (self.time as u128) << 64 | self.order as u128
    }
}

/// Four keys: the children of one node, on one cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Node([Key; 4]);

/// Slot bits a new queue starts with (16 M pending events before they grow).
const SLOT_BITS: u32 = 24;

/// The wheel: buckets of 2^GRAIN_BITS ns, WHEEL_BUCKETS of them, BUCKET_KEYS keys each.
const GRAIN_BITS: u32 = 8;
const WHEEL_BUCKETS: usize = 1024;
const WHEEL_SPAN: Time = (WHEEL_BUCKETS as Time) << GRAIN_BITS;
const BUCKET_KEYS: usize = 4;

/// A bucket's keys: one 64-byte cache line.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes([Key; BUCKET_KEYS]);

/// Keys due in `[base, base + WHEEL_SPAN)`, by bucket: the bucket of time `t` is
/// `(t >> GRAIN_BITS) % WHEEL_BUCKETS`, so walking the buckets from `base`'s, wrapping
/// around, meets them in time order. `base` is the start of the current time's bucket.
///
/// A bucket's count of keys is kept apart from its keys, all counts in 1 KiB: scheduling
/// reads the count (which stays in L1) and only writes the keys' line, so the line, which
/// has usually left L1 since the wheel last came round (64 KiB of them), is not waited for
/// until the bucket's time comes.
struct Wheel {
    base: Time,
    count: usize,
    occupied: [u64; WHEEL_BUCKETS / 64],
    lens: [u8; WHEEL_BUCKETS],
    lanes: Box<[Lanes]>,
}

impl Wheel {
    fn new(now: Time) -> Wheel {
        Wheel {
            base: now >> GRAIN_BITS << GRAIN_BITS,
            count: 0,
            occupied: [0; WHEEL_BUCKETS / 64],
            lens: [0; WHEEL_BUCKETS],
            lanes: vec![Lanes([Key::NONE; BUCKET_KEYS]); WHEEL_BUCKETS].into_boxed_slice(),
        }
    }

    /// Keep `key` if it is due inside the wheel's span and its bucket has room.
    #[inline(always)]
    fn insert(&mut self, key: Key) -> bool {
        if key.time - self.base >= WHEEL_SPAN {
            return false;
        }
        let b = (key.time >> GRAIN_BITS) as usize % WHEEL_BUCKETS;
        let len = self.lens[b] as usize;
        if len == BUCKET_KEYS {
            return false;
        }
        // SAFETY: `b` < WHEEL_BUCKETS, the number of buckets, and `len` < BUCKET_KEYS.
        unsafe { *self.lanes.get_unchecked_mut(b).0.get_unchecked_mut(len) = key };
        self.lens[b] = len as u8 + 1;
        self.occupied[b / 64] |= 1 << (b % 64);
        self.count += 1;
        true
    }

    /// The earliest key: its bucket, its place there, and the key.
    #[inline(always)]
    fn first(&self) -> Option<(usize, usize, Key)> {
        if self.count == 0 {
            return None;
        }
        let start = (self.base >> GRAIN_BITS) as usize % WHEEL_BUCKETS;
        let words = WHEEL_BUCKETS / 64;
        let (w0, bit0) = (start / 64, start % 64);
        let mut b = None;
        let first = self.occupied[w0] & (u64::MAX << bit0);
        if first != 0 {
            b = Some(w0 * 64 + first.trailing_zeros() as usize);
        } else {
            // Wrapping around ends at the first word again (its bits below `bit0`).
            for i in 1..=words {
                let w = (w0 + i) % words;
                if self.occupied[w] != 0 {
                    b = Some(w * 64 + self.occupied[w].trailing_zeros() as usize);
                    break;
                }
            }
        }
        let b = b.expect("a key counted in the wheel has a bucket");
        let keys = &self.lanes[b].0;
        let mut lane = 0;
        for i in 1..self.lens[b] as usize {
            if keys[i].wide() < keys[lane].wide() {
                lane = i;
            }
        }
        Some((b, lane, keys[lane]))
    }

    /// Remove the key in place `lane` of bucket `b`.
    #[inline(always)]
    fn take(&mut self, b: usize, lane: usize) {
        let len = self.lens[b] - 1;
        self.lens[b] = len;
        let keys = &mut self.lanes[b].0;
        keys[lane] = keys[len as usize];
        if len == 0 {
            self.occupied[b / 64] &= !(1 << (b % 64));
        }
        self.count -= 1;
    }

    /// Every key, leaving the wheel empty.
    fn drain(&mut self, out: &mut Vec<Key>) {
        for (b, keys) in self.lanes.iter().enumerate() {
            out.extend_from_slice(&keys.0[..self.lens[b] as usize]);
            self.lens[b] = 0;
            self.occupied[b / 64] = 0;
        }
        self.count = 0;
    }
}

/// The simulation clock and its pending events.
pub struct EventQueue<E> {
    now: Time,
    next_seq: u64,
    /// Sequence numbers available before a renumbering: `1 << (64 - slot_bits)`, less one
    /// so that no key can equal [`Key::NONE`].
    seq_limit: u64,
    slot_bits: u32,
    /// A 4-ary min-heap of `len` keys. Key `i` is lane `(i + 3) % 4` of node `(i + 3) / 4`,
    /// so the children of key `i`, `4i + 1 ..= 4i + 4`, are node `i + 1`; lanes past the
    /// end hold [`Key::NONE`].
    nodes: Vec<Node>,
    len: usize,
    /// Key 0 belongs to the event popped last and is no longer pending: the next
    /// `schedule` (what handling an event usually does first) puts its key in that place
    /// and sifts it down once, where removing the root and inserting the new key at the
    /// bottom would take a sift each. A `pop` first removes it properly. Keys are unique,
    /// so the shape of the heap never changes which event comes next.
    root_taken: bool,
    /// Keys due soon, in front of the heap.
    wheel: Wheel,
    /// Events by slot, and the free slots (reused last freed first, while still in cache).
    events: Vec<E>,
    free: Vec<u32>,
    dispatched: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        Self::new()
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// A clock that starts at `now`: a run on a device whose clock has already advanced.
    pub fn starting_at(now: Time) -> Self {
        Self::with_slot_bits(now, SLOT_BITS)
    }

    fn with_slot_bits(now: Time, slot_bits: u32) -> Self {
        assert!((1..=62).contains(&slot_bits));
        EventQueue {
            now,
            next_seq: 0,
            seq_limit: (1u64 << (64 - slot_bits)) - 1,
            slot_bits,
            nodes: vec![Node([Key::NONE; 4])],
            len: 0,
            root_taken: false,
            wheel: Wheel::new(now),
            events: Vec::with_capacity(1024),
            free: Vec::with_capacity(1024),
            dispatched: 0,
        }
    }

    /// Current simulated time: the time of the event being handled.
    #[inline]
    pub fn now(&self) -> Time {
        self.now
    }

    /// Move the clock to `t` without handling an event (a run that stops there): no pending
    /// event may come before it.
    pub fn advance_to(&mut self, t: Time) {
        debug_assert!(t >= self.now && self.peek_time().is_none_or(|p| p >= t), "the clock moves forward past no event");
        self.now = t;
    }

    /// Time of the earliest pending event, if any.
    pub fn peek_time(&self) -> Option<Time> {
        let heap = if !self.root_taken {
            (self.len > 0).then(|| self.key(0))
        } else {
            // The earliest pending key is among the taken root's children (NONE past the end).
            let first = (1..=4).map(|i| self.key(i)).min_by_key(|k| k.wide()).expect("four children");
            (self.len > 1).then_some(first)
        };
        let wheel = self.wheel.first().map(|(_, _, k)| k);
        [heap, wheel].into_iter().flatten().min_by_key(|k| k.wide()).map(|k| k.time)
    }

    pub fn pending(&self) -> usize {
        self.len - self.root_taken as usize + self.wheel.count
    }

    /// Number of events handled so far (a cost measure for benchmarks).
    pub fn dispatched(&self) -> u64 {
        self.dispatched
    }

    /// The keys as one flat array: key `i` is at `i + 3`.
    #[inline(always)]
    fn flat(&self) -> *const Key {
        self.nodes.as_ptr() as *const Key
    }

    #[inline(always)]
    fn flat_mut(&mut self) -> *mut Key {
        self.nodes.as_mut_ptr() as *mut Key
    }

    #[inline(always)]
    fn key(&self, i: usize) -> Key {
        debug_assert!(i.div_ceil(4) < self.nodes.len());
        // SAFETY: every key index used is below `len`, or a child lane of a node that exists
        // (`nodes` always has a node for the children of the last key; see `schedule`), and
        // `Node` is four `Key`s with no padding.
        unsafe { *self.flat().add(i + 3) }
    }

    #[inline(always)]
    fn set(&mut self, i: usize, k: Key) {
        debug_assert!(i.div_ceil(4) < self.nodes.len());
        // SAFETY: as for `key`.
        unsafe { *self.flat_mut().add(i + 3) = k }
    }

    /// Give every pending key a new sequence number, its rank, and (when the slab has
    /// outgrown them) more slot bits. The order of the events does not change.
    #[cold]
    #[inline(never)]
    fn renumber(&mut self) {
        let old_mask = self.slot_mask();
        let mut keys: Vec<Key> = (0..self.len).map(|i| self.key(i)).collect();
        // The wheel's keys join the heap's (a sorted array is a heap); it fills again as
        // events are scheduled.
        self.wheel.drain(&mut keys);
        keys.sort_unstable_by_key(|k| k.wide());
        self.len = keys.len();
        while self.nodes.len() < self.len + 2 {
            self.nodes.push(Node([Key::NONE; 4]));
        }
        // Bits enough for every slot of the slab; and sequence numbers for twice the events
        // pending (only a queue made with very many slot bits, in tests, lacks them).
        let needed = (u64::BITS - (self.events.len() as u64).saturating_sub(1).leading_zeros()).max(1);
        let mut bits = self.slot_bits.max(needed);
        if 2 * self.len as u64 + 2 >= 1u64 << (64 - bits) {
            bits = needed;
        }
        assert!(needed <= 32, "more than 2^32 events in the slab");
        assert!(2 * self.len as u64 + 2 < 1u64 << (64 - bits), "too few sequence numbers for the events pending");
        self.slot_bits = bits;
        self.seq_limit = (1u64 << (64 - bits)) - 1;
        for (rank, k) in keys.iter().enumerate() {
            let slot = k.order & old_mask;
            self.set(rank, Key { time: k.time, order: (rank as u64) << bits | slot });
        }
        self.next_seq = self.len as u64;
    }

    #[inline(always)]
    fn slot_mask(&self) -> u64 {
        (1u64 << self.slot_bits) - 1
    }
}

/// Events are small plain data, copied in and out of the slab.
impl<E: Copy> EventQueue<E> {
    /// Schedule `event` at absolute time `at`. Scheduling in the past is a model bug, checked
    /// in every build (it becomes an internal model error, never a silently moved event).
    #[inline(always)]
    pub fn schedule(&mut self, at: Time, event: E) {
        assert!(at >= self.now, "event scheduled in the past: {at} < {}", self.now);
        let slot = match self.free.pop() {
            Some(s) => {
                // SAFETY: free slots are indices of `events`.
                unsafe { *self.events.get_unchecked_mut(s as usize) = event };
                s
            }
            None => {
                self.events.push(event);
                let s = (self.events.len() - 1) as u32;
                // Only a new slot can outgrow the slot bits: every slot made before fits
                // them (checked here when it was made; renumbering never takes bits away
                // from a slot of the slab).
                if s as u64 >> self.slot_bits != 0 {
                    self.drop_taken_root();
                    self.renumber();
                }
                s
            }
        };
        if self.next_seq >= self.seq_limit {
            self.drop_taken_root();
            self.renumber();
        }
        let key = Key { time: at, order: self.next_seq << self.slot_bits | slot as u64 };
        self.next_seq += 1;
        if self.wheel.insert(key) {
            return;
        }
        if self.root_taken {
            self.root_taken = false;
            self.fill_root(self.len, key);
            return;
        }
        let n = self.len;
        self.len += 1;
        // The new key's children (node n + 1) must exist, filled with NONE.
        if self.nodes.len() < n + 2 {
            self.nodes.push(Node([Key::NONE; 4]));
        }
        // An event scheduled now usually runs after most pending ones, and stays near the
        // bottom.
        self.sift_up(n, key);
    }

    /// Put `key` at place `i` or above it: parents later than it move down one level each.
    #[inline(always)]
    fn sift_up(&mut self, mut i: usize, key: Key) {
        let w = key.wide();
        while i > 0 {
            let parent = (i - 1) / 4;
            let p = self.key(parent);
            if p.wide() < w {
                break;
            }
            self.set(i, p);
            i = parent;
        }
        self.set(i, key);
    }

    /// Remove the taken root's key for good, if there is one: the last key leaves its place
    /// and fills the root's.
    #[inline(always)]
    fn drop_taken_root(&mut self) {
        if !self.root_taken {
            return;
        }
        self.root_taken = false;
        self.len -= 1;
        let n = self.len;
        if n > 0 {
            let last = self.key(n);
            self.set(n, Key::NONE);
            self.fill_root(n, last);
        } else {
            self.set(0, Key::NONE);
        }
    }

    /// Put `key` in the place of the root among the first `n` keys (the root's own key is
    /// gone): the hole moves down the path of earliest children to the bottom (each child
    /// on the way moves up one level), then `key` rises from there to its place.
    #[inline(always)]
    fn fill_root(&mut self, n: usize, key: Key) {
        let mut hole = 0;
        while 4 * hole + 1 < n {
            // SAFETY: the children of `hole` (below `n` <= `len`) are node hole + 1, which
            // exists; lanes at `len` and past it hold NONE.
            let c = unsafe { self.flat().add(4 * hole + 4) };
            let w = |lane: usize| unsafe { (*c.add(lane)).wide() };
            // The earliest of four as two rounds of pairs, without a branch.
            let a = (w(1) < w(0)) as usize;
            let b = 2 + (w(3) < w(2)) as usize;
            let lane = if w(b) < w(a) { b } else { a };
            // SAFETY: as above.
            let k = unsafe { *c.add(lane) };
            self.set(hole, k);
            hole = 4 * hole + 1 + lane;
        }
        self.sift_up(hole, key);
    }

    /// Remove the earliest event and advance the clock to it.
    #[inline(always)]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.drop_taken_root();
        let root = match self.wheel.first() {
            Some((b, lane, k)) if self.len == 0 || k.wide() < self.key(0).wide() => {
                self.wheel.take(b, lane);
                k
            }
            _ if self.len > 0 => {
                self.root_taken = true;
                self.key(0)
            }
            _ => return None,
        };
        self.wheel.base = root.time >> GRAIN_BITS << GRAIN_BITS;
        let slot = (root.order & self.slot_mask()) as u32;
        // SAFETY: a key's slot holds its event until the key is popped.
        let event = unsafe { *self.events.get_unchecked(slot as usize) };
        self.free.push(slot);
        self.now = root.time;
        self.dispatched += 1;
        Some((root.time, event))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn equal_times_pop_in_schedule_order() {
        let mut s = EventQueue::new();
        s.schedule(10, 'a');
        s.schedule(5, 'b');
        s.schedule(10, 'c');
        s.schedule(5, 'd');
        let order: Vec<char> = std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'a', 'c']);
        assert_eq!(s.now(), 10);
    }

    /// Pushes and pops interleaved at random, with many equal times, come out in
    /// `(time, seq)` order, as from a sorted list; with `slot_bits` small or large the keys
    /// are renumbered (sequence numbers run out, the slab outgrows its slots) along the way.
    fn follows_time_then_schedule_order(slot_bits: u32, spread: u64, max_pending: usize) {
        let mut s = EventQueue::with_slot_bits(0, slot_bits);
        let mut reference: Vec<(Time, u32)> = Vec::new();
        let mut x: u64 = 0x2545_F491_4F6C_DD1D;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x
        };
        for id in 0..20_000u32 {
            // Phases of growth and of shrinking, so that the slab grows past small slot counts.
            let grow = (id / 2_000) % 2 == 0;
            let push = next() % 4 < if grow { 3 } else { 1 };
            if reference.is_empty() || push && reference.len() < max_pending {
                let at = s.now() + next() % spread;
                s.schedule(at, id);
                reference.push((at, id));
            } else {
                let first = (0..reference.len()).min_by_key(|&i| reference[i]).unwrap();
                let (at, id) = reference.remove(first);
                assert_eq!(s.pop(), Some((at, id)));
            }
            assert_eq!(s.pending(), reference.len());
            assert_eq!(s.peek_time(), reference.iter().min().map(|&(at, _)| at));
        }
        reference.sort();
        let rest: Vec<_> = std::iter::from_fn(|| s.pop()).collect();
        assert_eq!(rest, reference);
        assert_eq!(s.pop(), None);
    }

    #[test]
    fn pops_follow_time_then_schedule_order() {
        follows_time_then_schedule_order(SLOT_BITS, 50, usize::MAX);
        follows_time_then_schedule_order(SLOT_BITS, 3, usize::MAX);
    }

    /// Times spread past the wheel's span, and around a bucket's width: keys in the wheel
    /// and in the heap, full buckets overflowing, all come out in order.
    #[test]
    fn pops_follow_order_across_the_wheel_and_the_heap() {
        follows_time_then_schedule_order(SLOT_BITS, 3 * WHEEL_SPAN, usize::MAX);
        follows_time_then_schedule_order(SLOT_BITS, WHEEL_SPAN + 1, 300);
        follows_time_then_schedule_order(SLOT_BITS, 1 << GRAIN_BITS, usize::MAX);
        follows_time_then_schedule_order(SLOT_BITS, 5000, 40);
        follows_time_then_schedule_order(58, 2 * WHEEL_SPAN, 30);
    }

    /// With 58 slot bits only 63 sequence numbers fit: renumbered every few dozen events
    /// (and, with more pending, the slot bits shrink to what the slab needs).
    #[test]
    fn order_survives_running_out_of_sequence_numbers() {
        follows_time_then_schedule_order(58, 5, 20);
        follows_time_then_schedule_order(58, 5, usize::MAX);
    }

    /// With 2 slot bits the slab outgrows its slots at once and the bits grow.
    #[test]
    fn order_survives_the_slab_outgrowing_its_slot_bits() {
        follows_time_then_schedule_order(2, 7, usize::MAX);
        let mut s = EventQueue::with_slot_bits(0, 2);
        for i in 0..100u32 {
            s.schedule(1, i);
        }
        assert!(s.slot_bits >= 7);
        assert_eq!(std::iter::from_fn(|| s.pop().map(|(_, e)| e)).collect::<Vec<_>>(), (0..100).collect::<Vec<_>>());
    }

    #[test]
    #[should_panic(expected = "event scheduled in the past")]
    fn scheduling_in_the_past_is_caught() {
        let mut s = EventQueue::starting_at(100);
        s.schedule(99, ());
    }
}
