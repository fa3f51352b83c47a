//! The stripe heads in work and the rule for taking more (drivers/md/raid5.c,
//! `raid5_get_active_stripe` and `is_inactive_blocked`).
//!
//! md: a request that finds no free stripe head sets `R5_INACTIVE_BLOCKED` and sleeps. While
//! the flag is set no request takes a free head, however many come free, until fewer than
//! `max_nr_stripes * 3 / 4` heads are active; the first to get past the wait clears the flag.
//! So once the cache has run out, new work waits until a quarter of it is free, and then
//! the waiters take heads together.
//!
//! The cache grows on demand (Linux 4.1, "md/raid5: allow the stripe_cache to grow and
//! shrink"): a request that finds no free head while the cache is not blocked asks for one
//! more (`R5_ALLOC_MORE`) unless one was added since heads were last released
//! (`R5_DID_ALLOC`); raid5d adds it on its next pass (`grow_one_stripe`), here at once. md's
//! only bound is memory (its shrinker drops heads above `stripe_cache_size` when memory is
//! reclaimed, not modelled); the pool grows to `limit`. Each starvation adds one head, and
//! the next comes only after the cache has drained to three quarters again, so the cache
//! grows by about the square root of the time it is starved.
//!
//! Not modelled: md keeps a free list per hash lock (8, `NR_STRIPE_HASH_LOCKS`) and blocks
//! when the list of the head it wants is empty; here the cache is one pool.

pub struct HeadPool {
    /// md's `max_nr_stripes`: the heads the cache has now.
    capacity: u64,
    /// The most it may grow to (`capacity`: it never grows).
    limit: u64,
    in_use: u64,
    /// `R5_INACTIVE_BLOCKED`: the cache ran out and has not yet drained below three quarters.
    blocked: bool,
    /// `R5_DID_ALLOC`: a head was added and none has been released since.
    did_alloc: bool,
}

impl HeadPool {
    /// A pool of `capacity` heads (`u64::MAX`: unbounded, never blocks) that grows on demand
    /// up to `limit` heads.
    pub fn new(capacity: u64, limit: u64) -> HeadPool {
        debug_assert!(limit >= capacity);
        HeadPool { capacity, limit, in_use: 0, blocked: false, did_alloc: false }
    }

    /// The heads the cache has now.
    pub fn capacity(&self) -> u64 {
        self.capacity
    }

    pub fn in_use(&self) -> u64 {
        self.in_use
    }

    /// Whether `heads` more may be taken now: they fit, and the cache is not blocked (or has
    /// drained below three quarters).
    pub fn fits(&self, heads: u64) -> bool {
        heads == 0 || (self.in_use + heads <= self.capacity && (!self.blocked || self.in_use < unblock_below(self.capacity)))
    }

    /// A request wanting `heads` tried to take them: if they do not fit in what is free, the
    /// cache is blocked (md sets the flag when a get finds no free head), and, if it was not
    /// blocked already and no head was added since the last release, it grows by one.
    /// Returns whether it grew.
    pub fn tried(&mut self, heads: u64) -> bool {
        if heads == 0 || self.in_use + heads <= self.capacity {
            return false;
        }
        // md looks for a free head, and so asks for more, only while the flag is clear.
        let grows = !self.blocked && !self.did_alloc && self.capacity < self.limit;
        if grows {
            self.capacity += 1;
            self.did_alloc = true;
        }
        self.blocked = true;
        grows
    }

    /// Take `heads` (which `fits`): a request got past the wait, so the flag is cleared.
    pub fn take(&mut self, heads: u64) {
        debug_assert!(self.fits(heads));
        if heads > 0 {
            self.in_use += heads;
            self.blocked = false;
        }
    }

    /// `heads` are done with (md: back on the inactive list, which clears `R5_DID_ALLOC`).
    pub fn release(&mut self, heads: u64) {
        self.in_use -= heads;
        if heads > 0 {
            self.did_alloc = false;
        }
    }
}

/// md's `max_nr_stripes * 3 / 4`, in integers.
fn unblock_below(capacity: u64) -> u64 {
    if capacity == u64::MAX {
        u64::MAX
    } else {
        capacity * 3 / 4
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_that_finds_the_cache_full_waits_until_a_quarter_is_free() {
        let mut p = HeadPool::new(256, 256);
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
        let mut p = HeadPool::new(32, 32);
        p.take(28);
        p.tried(16);
        assert!(!p.fits(1), "a small request behind it waits too");
        p.release(4);
        assert!(!p.fits(1), "24 in use: not below three quarters of 32");
        p.release(20);
        assert!(p.fits(16));
        // Requests that fit do not block it.
        let mut q = HeadPool::new(32, 32);
        q.take(28);
        q.tried(4);
        assert!(q.fits(1));
    }

    #[test]
    fn an_unbounded_pool_never_blocks() {
        let mut p = HeadPool::new(u64::MAX, u64::MAX);
        p.take(1 << 40);
        p.tried(1 << 20);
        assert!(p.fits(1 << 20));
    }

    #[test]
    fn a_starved_cache_grows_by_a_head_per_starvation_until_its_limit() {
        let mut p = HeadPool::new(32, 34);
        p.take(30);
        assert!(p.tried(4), "the first request to find no room asks for a head");
        assert_eq!(p.capacity(), 33);
        assert!(!p.tried(4), "one that finds the cache blocked does not look for a free head");
        // Drained below three quarters of 33 (24): the next to take clears the flag.
        p.release(7);
        p.take(4);
        p.take(4);
        assert!(!p.fits(3));
        assert!(p.tried(3), "heads were released since the last growth: it grows again");
        assert_eq!(p.capacity(), 34);
        p.release(7);
        p.take(8);
        p.take(2);
        assert!(!p.tried(1), "at its limit it grows no more");
        assert_eq!(p.capacity(), 34);
    }

    #[test]
    fn no_second_head_is_added_before_one_is_released() {
        let mut p = HeadPool::new(32, 64);
        p.take(20);
        assert!(p.tried(16));
        // 20 in use is below three quarters of 33: a small request gets through.
        assert!(p.fits(4));
        p.take(4);
        assert!(!p.tried(16), "R5_DID_ALLOC: nothing was released since the head was added");
        assert_eq!(p.capacity(), 33);
    }

    #[test]
    fn a_pool_at_its_limit_blocks_as_before() {
        let mut p = HeadPool::new(256, 256);
        p.take(250);
        assert!(!p.tried(7));
        assert_eq!(p.capacity(), 256);
        assert!(!p.fits(1));
    }
}
