//! md's resync thread taking a rebuild unit's stripe heads one page at a time
//! (drivers/md/md.c `md_do_sync` calls drivers/md/raid5.c `raid5_sync_request` once per
//! stripe head, a 4 KiB column across the members).
//!
//! `raid5_sync_request` first asks `raid5_get_active_stripe` for the head without blocking;
//! it gets one if a head is free and the cache is not blocked (`R5_INACTIVE_BLOCKED`, see
//! `HeadPool`). If not, it asks again, blocking, and once it has the head it sleeps a tick
//! (`schedule_timeout_uninterruptible(1)`: "don't swamp the stripe cache if someone else is
//! trying to get access") before the next call. So the thread takes heads back to back while
//! they are free, and pays a tick for each head it had to wait for.
//!
//! Simplification: md hands each head to raid5d as soon as it has it; here a unit's heads are
//! handled together once the thread has them all (the unit's member I/O is planned as one),
//! so the thread holds the heads it has while it waits for the next.

use super::head_pool::HeadPool;

/// What the thread does next with its unit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SyncStep {
    /// It has every head of the unit: the unit can start.
    Ready,
    /// It must wait for a head (a blocking get): the cache is now blocked for others.
    Wait,
}

/// One unit's heads, taken in page order: pages below `held` are held, the rest not yet.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SyncWalk {
    pages: u64,
    held: u64,
    /// Heads it had to wait for (each followed by a tick's sleep).
    pub waits: u64,
}

impl SyncWalk {
    pub fn new(pages: u64) -> SyncWalk {
        SyncWalk { pages, held: 0, waits: 0 }
    }

    pub fn held(&self) -> u64 {
        self.held
    }

    pub fn pages(&self) -> u64 {
        self.pages
    }

    /// Take heads without blocking while they are free; `Wait` at the first that is not
    /// (the blocking get marks the cache blocked, as md's does).
    pub fn advance(&mut self, pool: &mut HeadPool) -> SyncStep {
        while self.held < self.pages {
            if !pool.fits_holding(1, self.held) {
                pool.tried(1);
                self.waits += 1;
                return SyncStep::Wait;
            }
            pool.take_holding(1, self.held);
            self.held += 1;
        }
        SyncStep::Ready
    }

    /// Whether the blocking get can have its head now.
    pub fn can_wake(&self, pool: &HeadPool) -> bool {
        pool.fits_holding(1, self.held)
    }

    /// The blocking get has its head (`can_wake`); the thread now sleeps a tick.
    pub fn woken(&mut self, pool: &mut HeadPool) {
        debug_assert!(self.held < self.pages && self.can_wake(pool));
        pool.take_holding(1, self.held);
        self.held += 1;
    }

    /// The unit was planned again with `pages` heads (a member's health changed): heads it
    /// holds beyond them go back to the cache.
    pub fn replan(&mut self, pages: u64, pool: &mut HeadPool) {
        if self.held > pages {
            pool.release(self.held - pages);
            self.held = pages;
        }
        self.pages = pages;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where a head of the cache is: free, with the sync thread, or with another request.
    #[derive(Clone, Copy, PartialEq, Eq, Debug)]
    enum Head {
        Free,
        Sync,
        Other,
    }

    /// md's rules, checked after every step: every head in exactly one state (the states
    /// partition the cache, in numbers matching the pool's), the pool within its size, and
    /// the sync thread holding exactly the pages below its walk's mark.
    fn check(heads: &[Head], pool: &HeadPool, walk: &SyncWalk) {
        let count = |h| heads.iter().filter(|&&x| x == h).count() as u64;
        assert_eq!(count(Head::Free) + count(Head::Sync) + count(Head::Other), pool.capacity());
        assert_eq!(count(Head::Sync) + count(Head::Other), pool.in_use());
        assert!(pool.in_use() <= pool.capacity());
        assert_eq!(count(Head::Sync), walk.held());
        assert!(walk.held() <= walk.pages());
    }

    fn move_heads(heads: &mut [Head], from: Head, to: Head, n: u64) {
        for h in heads.iter_mut().filter(|h| **h == from).take(n as usize) {
            *h = to;
        }
    }

    #[test]
    fn the_thread_takes_free_heads_back_to_back_and_waits_only_when_none_is_free() {
        let mut pool = HeadPool::new(256);
        let mut walk = SyncWalk::new(128);
        assert_eq!(walk.advance(&mut pool), SyncStep::Ready);
        assert_eq!((walk.held(), walk.waits, pool.in_use()), (128, 0, 128));
        // With 250 heads taken by others, it gets 6 and then must wait.
        let mut pool = HeadPool::new(256);
        pool.take(250);
        let mut walk = SyncWalk::new(16);
        assert_eq!(walk.advance(&mut pool), SyncStep::Wait);
        assert_eq!((walk.held(), walk.waits, pool.in_use()), (6, 1, 256));
        assert!(!walk.can_wake(&pool));
        // The cache is blocked: a head coming free does not end the wait until the others'
        // heads are below three quarters of the cache (its own six do not count).
        pool.release(1);
        assert!(!walk.can_wake(&pool));
        pool.release(63);
        assert_eq!(pool.in_use(), 192);
        assert!(walk.can_wake(&pool), "186 others' heads are below 192");
        walk.woken(&mut pool);
        assert_eq!(walk.held(), 7);
        // After its tick it goes on taking the free heads without waiting.
        assert_eq!(walk.advance(&mut pool), SyncStep::Ready);
        assert_eq!((walk.held(), walk.waits), (16, 1));
    }

    #[test]
    fn every_page_is_taken_by_exactly_one_head_and_the_cache_never_exceeds_its_size() {
        // Other requests take and release heads in a fixed pseudo-random pattern while the
        // thread takes a unit's heads; the rules hold at every step and the unit completes.
        let cap = 17;
        let mut pool = HeadPool::new(cap);
        let mut heads = vec![Head::Free; cap as usize];
        let mut walk = SyncWalk::new(cap);
        let mut others = 0u64;
        let mut x = 12345u64;
        let mut taken_pages = Vec::new();
        let mut units = 0;
        for _ in 0..10_000 {
            x = x.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            let r = x >> 33;
            if r.is_multiple_of(3) && others > 0 {
                let n = 1 + r % others;
                pool.release(n);
                others -= n;
                move_heads(&mut heads, Head::Other, Head::Free, n);
            } else if r % 3 == 1 {
                let n = 1 + r % 4;
                if pool.fits(n) {
                    pool.take(n);
                    others += n;
                    move_heads(&mut heads, Head::Free, Head::Other, n);
                } else {
                    pool.tried(n);
                }
            } else {
                let before = walk.held();
                let step = if walk.can_wake(&pool) && walk.held() < walk.pages() {
                    walk.woken(&mut pool);
                    walk.advance(&mut pool)
                } else {
                    walk.advance(&mut pool)
                };
                move_heads(&mut heads, Head::Free, Head::Sync, walk.held() - before);
                taken_pages.extend(before..walk.held());
                if step == SyncStep::Ready {
                    // The unit is done: its heads go back, the next unit starts.
                    pool.release(walk.held());
                    move_heads(&mut heads, Head::Sync, Head::Free, walk.held());
                    assert_eq!(taken_pages, (0..walk.pages()).collect::<Vec<_>>(), "each page once, in order");
                    taken_pages.clear();
                    units += 1;
                    walk = SyncWalk::new(cap);
                }
            }
            check(&heads, &pool, &walk);
        }
        assert!(units > 100, "the thread kept going: {units} units");
    }

    #[test]
    fn a_unit_planned_again_with_fewer_heads_gives_back_the_extra() {
        let mut pool = HeadPool::new(32);
        pool.take(30);
        let mut walk = SyncWalk::new(8);
        assert_eq!(walk.advance(&mut pool), SyncStep::Wait);
        assert_eq!(walk.held(), 2);
        walk.replan(1, &mut pool);
        assert_eq!((walk.held(), pool.in_use()), (1, 31));
        assert_eq!(walk.advance(&mut pool), SyncStep::Ready);
    }
}
