//! The stripe heads in work and the rule for taking more (drivers/md/raid5.c,
//! `raid5_get_active_stripe` and `is_inactive_blocked`).
//!
//! md: a request that finds no free stripe head sets `R5_INACTIVE_BLOCKED` and sleeps. While
//! the flag is set no request takes a free head, however many come free, until fewer than
//! `max_nr_stripes * 3 / 4` heads are active; the first to get past the wait clears the flag.
//! So once the cache has run out, new work waits until a quarter of it is free, and then
//! the waiters take heads together.
//!
//! Not modelled: md keeps a free list per hash lock (8, `NR_STRIPE_HASH_LOCKS`) and blocks
//! when the list of the head it wants is empty; here the cache is one pool. md's growing of
//! the cache by a head when a request starves (`R5_ALLOC_MORE`, done by raid5d when it has
//! nothing left to handle) is not modelled either.

pub struct HeadPool {
    capacity: u64,
    in_use: u64,
    /// `R5_INACTIVE_BLOCKED`: the cache ran out and has not yet drained to `unblock_below`.
    blocked: bool,
    unblock_below: u64,
}

impl HeadPool {
    /// A pool of `capacity` heads (`u64::MAX`: unbounded, never blocks).
    pub fn new(capacity: u64) -> HeadPool {
        // md: `max_nr_stripes * 3 / 4`, in integers.
        let unblock_below = if capacity == u64::MAX { u64::MAX } else { capacity * 3 / 4 };
        HeadPool { capacity, in_use: 0, blocked: false, unblock_below }
    }

    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn in_use(&self) -> u64 {
        self.in_use
    }

    /// Whether `heads` more may be taken now: they fit, and the cache is not blocked (or has
    /// drained below three quarters).
    pub fn fits(&self, heads: u64) -> bool {
        heads == 0 || (self.in_use + heads <= self.capacity && (!self.blocked || self.in_use < self.unblock_below))
    }

    /// A request wanting `heads` tried to take them: if they do not fit in what is free, the
    /// cache is blocked (md sets the flag when a get finds no free head).
    pub fn tried(&mut self, heads: u64) {
        if heads > 0 && self.in_use + heads > self.capacity {
            self.blocked = true;
        }
    }

    /// Take `heads` (which `fits`): a request got past the wait, so the flag is cleared.
    pub fn take(&mut self, heads: u64) {
        debug_assert!(self.fits(heads));
        if heads > 0 {
            self.in_use += heads;
            self.blocked = false;
        }
    }

    pub fn release(&mut self, heads: u64) {
        self.in_use -= heads;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_that_finds_the_cache_full_waits_until_a_quarter_is_free() {
        let mut p = HeadPool::new(256);
        p.take(250);
        assert!(p.fits(6), "the last free heads go while nobody has starved");
        assert!(!p.fits(7));
        p.tried(7);
        // Blocked: a head coming free is not enough, even for a request of one head.
        p.release(1);
        assert!(!p.fits(1), "blocked until fewer than 192 are in use");
        p.release(57);
        assert_eq!(p.in_use(), 192);
        assert!(!p.fits(1), "192 in use is not below three quarters");
        p.release(1);
        assert!(p.fits(7) && p.fits(65) && !p.fits(66));
        p.take(7);
        // The first through clears the flag: the others take what is free.
        assert!(p.fits(58) && !p.fits(59));
    }

    #[test]
    fn a_request_too_large_for_what_is_free_blocks_the_cache_even_when_others_would_fit() {
        let mut p = HeadPool::new(32);
        p.take(28);
        p.tried(16);
        assert!(!p.fits(1), "a small request behind it waits too");
        p.release(4);
        assert!(!p.fits(1), "24 in use: not below three quarters of 32");
        p.release(20);
        assert!(p.fits(16));
        // Requests that fit do not block it.
        let mut q = HeadPool::new(32);
        q.take(28);
        q.tried(4);
        assert!(q.fits(1));
    }

    #[test]
    fn an_unbounded_pool_never_blocks() {
        let mut p = HeadPool::new(u64::MAX);
        p.take(1 << 40);
        p.tried(1 << 20);
        assert!(p.fits(1 << 20));
    }
}
