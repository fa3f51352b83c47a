//! The block layer's per-device counters, kept as Linux keeps /proc/diskstats, so that
//! iostat's fields can be computed from them exactly as iostat does.
//!
//! `io_ticks` follows the kernel's accounting: at every request start and completion the
//! jiffies elapsed since the previous update are added if a request was in flight. That
//! counts the jiffy boundaries inside busy periods, i.e. the union of request intervals at
//! jiffy resolution. Latencies are summed in ns and reported in ms, as modern kernels do.

use schemars::JsonSchema;
use serde::Serialize;

use crate::io::Op;
use crate::engine::{Time, NS_PER_MS, NS_PER_S};

#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct DiskCounters {
    pub read_ios: u64,
    pub read_merges: u64,
    pub read_sectors: u64,
    pub read_ticks_ms: u64,
    pub write_ios: u64,
    pub write_merges: u64,
    pub write_sectors: u64,
    pub write_ticks_ms: u64,
    pub in_flight: u64,
    pub io_ticks_ms: u64,
    pub time_in_queue_ms: u64,
    pub discard_ios: u64,
    pub discard_merges: u64,
    pub discard_sectors: u64,
    pub discard_ticks_ms: u64,
    pub flush_ios: u64,
    pub flush_ticks_ms: u64,
    /// Not in /proc/diskstats: the exact integral of requests in flight over time (ns), an
    /// independent measure of the mean queue for checking Little's law.
    pub in_flight_area_ns: u128,
}

#[derive(Clone, Debug)]
pub struct DiskStats {
    jiffy_ns: Time,
    stamp_jiffies: u64,
    /// Where the jiffy `stamp_jiffies` starts and ends, ns: every request's start and end
    /// look up their jiffy, and most fall in the last one seen, found without a division.
    stamp_from: Time,
    stamp_to: Time,
    io_ticks_jiffies: u64,
    in_flight: u64,
    ticks_ns: [u64; 4],
    queue_ns: u64,
    ios: [u64; 4],
    merges: [u64; 3],
    sectors: [u64; 3],
    area_ns: u128,
    area_stamp: Time,
}

impl DiskStats {
    /// `hz`: the kernel tick rate (250 on Ubuntu's kernels, 1000 on some others).
    pub fn new(hz: u32) -> Self {
        DiskStats {
            jiffy_ns: NS_PER_S / hz.max(1) as u64,
            stamp_jiffies: 0,
            stamp_from: 0,
            stamp_to: NS_PER_S / hz.max(1) as u64,
            io_ticks_jiffies: 0,
            in_flight: 0,
            ticks_ns: [0; 4],
            queue_ns: 0,
            ios: [0; 4],
            merges: [0; 3],
            sectors: [0; 3],
            area_ns: 0,
            area_stamp: 0,
        }
    }

    fn round(&mut self, now: Time) {
        self.area_ns += self.in_flight as u128 * (now - self.area_stamp) as u128;
        self.area_stamp = now;
        let j = if (self.stamp_from..self.stamp_to).contains(&now) {
            self.stamp_jiffies
        } else {
            let j = now / self.jiffy_ns;
            self.stamp_from = j * self.jiffy_ns;
            self.stamp_to = self.stamp_from.saturating_add(self.jiffy_ns);
            j
        };
        if self.in_flight > 0 {
            self.io_ticks_jiffies += j - self.stamp_jiffies;
        }
        self.stamp_jiffies = j;
    }

    /// A request entered the block layer.
    pub fn start(&mut self, now: Time) {
        self.round(now);
        self.in_flight += 1;
    }

    /// A bio merged into a queued request (iostat's rrqm/wrqm).
    pub fn merge(&mut self, op: Op) {
        if let Some(m) = self.merges.get_mut(op.index()) {
            *m += 1;
        }
    }

    /// A queued request merged into another at `now` and is no more: it counts as a merge,
    /// not as an I/O. The request it joined now dates from the earlier of their two starts
    /// (`kept_started`, `gone_started`), so its own latency will cover the earlier one's
    /// wait; the queue time gets the rest of their overlap now, which keeps time_in_queue
    /// equal to the in-flight area (Little's law).
    pub fn merged_away(&mut self, now: Time, op: Op, kept_started: Time, gone_started: Time) {
        self.round(now);
        debug_assert!(self.in_flight > 0);
        self.in_flight -= 1;
        self.merge(op);
        self.queue_ns += now - kept_started.max(gone_started);
    }

    /// A request finished after `latency` ns in the block layer and device.
    pub fn done(&mut self, now: Time, op: Op, bytes: u64, latency: Time) {
        self.round(now);
        debug_assert!(self.in_flight > 0);
        self.in_flight -= 1;
        let i = op.index();
        self.ios[i] += 1;
        if i < 3 {
            self.sectors[i] += bytes / 512;
        }
        self.ticks_ns[i] += latency;
        self.queue_ns += latency;
    }

    /// Counters as /proc/diskstats would show them at `now`.
    pub fn snapshot(&self, now: Time) -> DiskCounters {
        let mut io_ticks = self.io_ticks_jiffies;
        if self.in_flight > 0 {
            io_ticks += now / self.jiffy_ns - self.stamp_jiffies;
        }
        let ms = |ns: u64| ns / NS_PER_MS;
        DiskCounters {
            read_ios: self.ios[0],
            read_merges: self.merges[0],
            read_sectors: self.sectors[0],
            read_ticks_ms: ms(self.ticks_ns[0]),
            write_ios: self.ios[1],
            write_merges: self.merges[1],
            write_sectors: self.sectors[1],
            write_ticks_ms: ms(self.ticks_ns[1]),
            in_flight: self.in_flight,
            io_ticks_ms: io_ticks * self.jiffy_ns / NS_PER_MS,
            time_in_queue_ms: ms(self.queue_ns),
            discard_ios: self.ios[2],
            discard_merges: self.merges[2],
            discard_sectors: self.sectors[2],
            discard_ticks_ms: ms(self.ticks_ns[2]),
            flush_ios: self.ios[3],
            flush_ticks_ms: ms(self.ticks_ns[3]),
            in_flight_area_ns: self.area_ns + self.in_flight as u128 * (now - self.area_stamp) as u128,
        }
    }

    pub fn in_flight(&self) -> u64 {
        self.in_flight
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_ticks_count_jiffies_inside_busy_periods() {
        let j = NS_PER_S / 250; // 4 ms
        let mut d = DiskStats::new(250);
        // Busy from 1 ms to 9 ms: crosses the boundaries at 4 and 8 ms.
        d.start(NS_PER_MS);
        d.done(9 * NS_PER_MS, Op::Read, 4096, 8 * NS_PER_MS);
        assert_eq!(d.snapshot(10 * NS_PER_MS).io_ticks_ms, 2 * j / NS_PER_MS);
        // Idle from 9 to 13 ms: the boundary at 12 ms is not counted.
        d.start(13 * NS_PER_MS);
        d.done(13 * NS_PER_MS + 100, Op::Write, 4096, 100);
        assert_eq!(d.snapshot(20 * NS_PER_MS).io_ticks_ms, 8);
        let c = d.snapshot(20 * NS_PER_MS);
        assert_eq!((c.read_ios, c.write_ios, c.read_sectors), (1, 1, 8));
        assert_eq!(c.read_ticks_ms, 8);
    }

    /// The jiffy remembered from the last update gives what dividing gives, whichever way
    /// the next time lies (inside it, on its edges, far past it).
    #[test]
    fn io_ticks_match_a_division_at_every_update() {
        for hz in [100, 250, 300, 1000] {
            let jiffy = NS_PER_S / hz as u64;
            let mut d = DiskStats::new(hz);
            let (mut stamp, mut ticks, mut in_flight) = (0u64, 0u64, 0u64);
            let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
            let mut now = 0;
            for _ in 0..20_000u64 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                now += match x % 5 {
                    0 => 0,
                    1 => jiffy - now % jiffy, // onto the next boundary
                    2 => jiffy - now % jiffy - 1, // just before it
                    3 => x % 1000,
                    _ => x % (3 * jiffy),
                };
                let j = now / jiffy;
                if in_flight > 0 {
                    ticks += j - stamp;
                }
                stamp = j;
                // A walk near idle, so that updates that end a busy spell come often.
                if in_flight == 0 || (x >> 40).is_multiple_of(2) {
                    d.start(now);
                    in_flight += 1;
                } else {
                    d.done(now, Op::Read, 4096, 0);
                    in_flight -= 1;
                }
                assert_eq!(d.snapshot(now).io_ticks_ms, ticks * jiffy / NS_PER_MS, "hz {hz}, at {now}");
            }
        }
    }
}
