//! Writer throttling: the model of `balance_dirty_pages` and the write-bandwidth estimate it
//! leans on (`mm/page-writeback.c`, the IO-less throttling of 3.2 on).
//!
//! The kernel's rules kept here:
//! - "dirty" for throttling is dirty plus under-writeback pages (NR_FILE_DIRTY +
//!   NR_WRITEBACK); the background test counts dirty pages only;
//! - under the freerun ceiling, halfway between the background and hard thresholds, a writer
//!   is not paused at all (`dirty_freerun_ceiling`);
//! - between it and the hard limit a writer is held to a rate, which is the base rate scaled
//!   by the global position control line `pos_ratio = 1 + ((setpoint - dirty) /
//!   (limit - setpoint))^3`, clamped to [0, 2], with the setpoint halfway between the freerun
//!   ceiling and the limit (`pos_ratio_polynom`): 1 at the setpoint, 2 at freerun, 0 at the
//!   limit;
//! - the pause for `n` pages is `n / rate` less the time the writer spent since its last pause
//!   (its "think time", `dirty_paused_when`), at most `MAX_PAUSE`;
//! - a writer ahead of its rate by more than a second loses the credit.
//!
//! What is simpler than the kernel, and why: the base rate is the measured write bandwidth,
//! where the kernel estimates a `dirty_ratelimit` that converges to bandwidth / N for N
//! writers. With one writer the two agree; with several, the position control alone slows
//! them (the dirty count settles nearer the limit, where `pos_ratio` is small), which keeps
//! the model free of a second feedback loop whose tuning would be a guess. At or above the
//! hard limit, where the kernel sleeps `MAX_PAUSE` at a time until writeback brings the count
//! down, the model returns that whole wait at once: the pages over the limit over the measured
//! bandwidth.

use crate::engine::{Time, NS_PER_S};

/// One dirtying task's throttle state (the kernel keeps it in the task): the file layer
/// keeps one per writer and passes it to [`super::PageCache::balance_dirty_pages`].
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WriterState {
    /// When the writer's last pause ended (`dirty_paused_when`); None: never paused.
    pub(crate) paused_when: Option<Time>,
}

/// What `balance_dirty_pages` tells the writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Throttle {
    /// How long the writer sleeps before its write() returns.
    pub pause_ns: Time,
    /// Dirty pages are over the background threshold: the flusher should be writing
    /// (`wb_start_background_writeback`). The file layer starts background writeback if it
    /// is not already running.
    pub start_background: bool,
    /// Dirty + writeback pages are at or over the hard limit: the pause is the estimated time
    /// for writeback to bring them under it. The writer should call again (with 0 pages)
    /// after the pause, as the kernel loops until the count is under the limit.
    pub over_limit: bool,
}

/// The write-bandwidth estimate (`wb_update_write_bandwidth`): every interval, the pages
/// whose writeback completed over the time elapsed, averaged into a running estimate over
/// the period. Intervals with no writeback in flight and none completed are skipped, so an
/// idle device keeps its estimate.
#[derive(Clone, Debug)]
pub(crate) struct Bandwidth {
    stamp: Time,
    completed_at_stamp: u64,
    /// Pages per second.
    pub pages_per_s: f64,
}

impl Bandwidth {
    pub fn new(initial_pages_per_s: u64) -> Bandwidth {
        Bandwidth { stamp: 0, completed_at_stamp: 0, pages_per_s: initial_pages_per_s as f64 }
    }

    pub fn update(&mut self, now: Time, completed: u64, in_flight: u64, interval: Time, period: Time) {
        if now < self.stamp + interval {
            return;
        }
        let elapsed = now - self.stamp;
        let written = completed - self.completed_at_stamp;
        self.stamp = now;
        self.completed_at_stamp = completed;
        if written == 0 && in_flight == 0 {
            return;
        }
        let cur = written as f64 * NS_PER_S as f64 / elapsed as f64;
        self.pages_per_s = if elapsed >= period {
            cur
        } else {
            (self.pages_per_s * (period - elapsed) as f64 + cur * elapsed as f64) / period as f64
        };
    }
}

/// The position control line at `dirty` for the given thresholds: 2 at or under the freerun
/// ceiling, 1 at the setpoint, 0 at or over the limit.
pub(crate) fn pos_ratio(dirty: u64, bg: u64, limit: u64) -> f64 {
    let freerun = (bg + limit) / 2;
    if dirty <= freerun {
        return 2.0;
    }
    if dirty >= limit {
        return 0.0;
    }
    let setpoint = (freerun + limit) as f64 / 2.0;
    let x = (setpoint - dirty as f64) / (limit as f64 - setpoint).max(1.0);
    (1.0 + x * x * x).clamp(0.0, 2.0)
}

/// The throttle decision for a writer that has just dirtied `pages` pages.
pub(crate) fn balance(
    now: Time,
    writer: &mut WriterState,
    pages: u64,
    dirty: u64,
    writeback: u64,
    (bg, limit): (u64, u64),
    bw_pages_per_s: f64,
    max_pause: Time,
) -> Throttle {
    let total = dirty + writeback;
    let start_background = dirty > bg;
    let freerun = (bg + limit) / 2;
    let bw = bw_pages_per_s.max(1.0);
    if total <= freerun {
        writer.paused_when = Some(now);
        return Throttle { pause_ns: 0, start_background, over_limit: false };
    }
    if total >= limit {
        let over = (total - limit).max(1);
        let pause = (over as f64 * NS_PER_S as f64 / bw).ceil() as Time;
        writer.paused_when = Some(now + pause);
        return Throttle { pause_ns: pause, start_background: true, over_limit: true };
    }
    let rate = bw * pos_ratio(total, bg, limit);
    let period = (pages as f64 * NS_PER_S as f64 / rate).ceil() as Time;
    let since = writer.paused_when.map_or(0, |p| now.saturating_sub(p));
    if period > since {
        let pause = (period - since).min(max_pause);
        writer.paused_when = Some(now + pause);
        Throttle { pause_ns: pause, start_background, over_limit: false }
    } else {
        // Ahead of its rate: keep the credit for a second at most.
        writer.paused_when = match writer.paused_when {
            Some(p) if since <= NS_PER_S => Some(p + period),
            _ => Some(now),
        };
        Throttle { pause_ns: 0, start_background, over_limit: false }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_control_line_runs_from_two_to_zero() {
        // bg 100, limit 200: freerun 150, setpoint 175.
        assert_eq!(pos_ratio(150, 100, 200), 2.0);
        assert_eq!(pos_ratio(175, 100, 200), 1.0);
        assert_eq!(pos_ratio(200, 100, 200), 0.0);
        let a = pos_ratio(160, 100, 200);
        let b = pos_ratio(190, 100, 200);
        assert!(a > 1.0 && a < 2.0 && b > 0.0 && b < 1.0, "{a} {b}");
    }

    #[test]
    fn bandwidth_follows_completions_and_ignores_idle_time() {
        let ms = 1_000_000;
        let mut bw = Bandwidth::new(25_600);
        // 200 ms of 10,000 pages/s writeback, long enough to replace the estimate.
        bw.update(5000 * ms, 50_000, 10, 200 * ms, 4096 * ms);
        assert!((bw.pages_per_s - 10_000.0).abs() < 1.0, "{}", bw.pages_per_s);
        // Idle for 10 s: unchanged.
        bw.update(15_000 * ms, 50_000, 0, 200 * ms, 4096 * ms);
        assert!((bw.pages_per_s - 10_000.0).abs() < 1.0);
        // 200 ms at 20,000 pages/s moves it a twentieth of the way.
        bw.update(15_200 * ms, 54_000, 5, 200 * ms, 4096 * ms);
        let want = (10_000.0 * 3896.0 + 20_000.0 * 200.0) / 4096.0;
        assert!((bw.pages_per_s - want).abs() < 1.0, "{} {want}", bw.pages_per_s);
    }
}
