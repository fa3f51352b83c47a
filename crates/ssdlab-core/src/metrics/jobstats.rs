//! Per-job statistics in fio's terms: per direction I/O counts, bytes, and slat/clat/lat.

use schemars::JsonSchema;
use serde::Serialize;

use super::histogram::{bucket_of, LatencyHistogram};
use crate::engine::Time;

/// Latency summary in ns. Sums are kept exactly in integers (squares of ns latencies fit a
/// u128 for any realistic run), which is cheaper than a running mean and loses nothing.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct LatStats {
    pub n: u64,
    pub min: u64,
    pub max: u64,
    pub mean: f64,
    pub stddev: f64,
    #[serde(skip)]
    sum: u128,
    #[serde(skip)]
    sum_sq: u128,
}

impl LatStats {
    #[inline]
    pub fn record(&mut self, ns: u64) {
        if self.n == 0 || ns < self.min {
            self.min = ns;
        }
        if ns > self.max {
            self.max = ns;
        }
        self.n += 1;
        self.sum += ns as u128;
        self.sum_sq += (ns as u128) * (ns as u128);
    }

    /// Fill in the mean and the sample standard deviation before reporting.
    pub fn finish(&mut self) {
        if self.n == 0 {
            return;
        }
        let n = self.n as u128;
        self.mean = self.sum as f64 / self.n as f64;
        if self.n < 2 {
            self.stddev = 0.0;
            return;
        }
        // n·Σx² − (Σx)² is exact in integers while it fits; divide last.
        let var = match (n.checked_mul(self.sum_sq), self.sum.checked_mul(self.sum)) {
            (Some(a), Some(b)) => (a - b) as f64 / (n * (n - 1)) as f64,
            _ => {
                let mean = self.mean;
                (self.sum_sq as f64 - mean * self.sum as f64) / (self.n - 1) as f64
            }
        };
        self.stddev = var.max(0.0).sqrt();
    }

    /// Sum of all recorded latencies, ns.
    pub fn sum(&self) -> u128 {
        self.sum
    }
}

#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub slat: LatStats,
    pub clat: LatStats,
    pub lat: LatStats,
    pub clat_hist: LatencyHistogram,
    /// slat's and lat's histograms, for fio's slat_percentiles and lat_percentiles.
    pub slat_hist: LatencyHistogram,
    pub lat_hist: LatencyHistogram,
}

impl DirStats {
    #[inline]
    pub fn record(&mut self, bytes: u64, slat: u64, clat: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.slat.record(slat);
        self.clat.record(clat);
        self.lat.record(slat + clat);
        if slat == 0 {
            // No submission time (an ideal host): lat is clat, one bucket for both.
            let b = bucket_of(clat);
            self.clat_hist.add(b);
            self.lat_hist.add(b);
            self.slat_hist.add(0);
            return;
        }
        self.clat_hist.record(clat);
        self.slat_hist.record(slat);
        self.lat_hist.record(slat + clat);
    }

    /// An I/O of which fio times only the completion (its metadata engines, flagged
    /// FIO_NOSTATS, add the call's time as a clat sample and no slat or lat).
    pub fn record_clat(&mut self, bytes: u64, clat: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.clat.record(clat);
        self.clat_hist.record(clat);
    }

    pub fn finish(&mut self) {
        self.slat.finish();
        self.clat.finish();
        self.lat.finish();
    }
}

/// One operation of a job's file program (filebench's flowop): how often it ran, its
/// bytes, the calls that failed, and its latency summed, at least and at most, ns.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, JsonSchema)]
pub struct OpSummary {
    pub ops: u64,
    pub bytes: u64,
    pub errors: u64,
    pub latency_ns: u64,
    pub min_latency_ns: u64,
    pub max_latency_ns: u64,
}

/// Everything fio reports for one job clone.
#[derive(Clone, Debug, Default, Serialize, JsonSchema)]
pub struct JobStats {
    pub name: String,
    pub clone: u32,
    pub group_id: u32,
    /// read, write, trim, sync (flushes).
    pub read: DirStats,
    pub write: DirStats,
    pub trim: DirStats,
    pub sync: DirStats,
    /// When the job started, when measurement began (after ramp) and when it ended, ns.
    pub start_ns: u64,
    pub measure_start_ns: u64,
    pub end_ns: u64,
    /// Submissions by the number already in flight: 1, 2, 4, 8, 16, 32, >=64 (fio's levels).
    pub iodepth_level: [u64; 7],
    /// Requests issued in total (including ramp) and completed.
    pub issued: u64,
    pub completed: u64,
    /// fio's bandwidth samples (KiB/s) and IOPS samples per direction (read, write, trim),
    /// taken over the job's own completions (see [`RateSampler`]).
    pub bw_samples: [LatStats; 3],
    pub iops_samples: [LatStats; 3],
    /// CPU time the job's thread spent submitting its I/O (the host's per-I/O overhead, as
    /// sampled), and what the I/O scheduler's code took for its bios under the queue lock, ns.
    pub cpu_ns: u64,
    pub sched_cpu_ns: u64,
    /// The job's I/O log (fio's `write_*_log`), when it asked for one.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub log: Vec<IoLogRecord>,
    /// A file program's operations, in program order (filebench's per-flowop summary).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_ops: Vec<OpSummary>,
    /// Calls of fio's metadata engines that failed (the job stops at the first, as fio's
    /// does), and that one's errno (fio's `error`); absent when none failed.
    #[serde(skip_serializing_if = "is_zero")]
    pub errors: u64,
    #[serde(skip_serializing_if = "is_zero")]
    pub error: u16,
    /// The file program's operation (its index in `file_ops`) that found no file and so
    /// ended the thread (filebench's "could not obtain a file"); absent when none did.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub no_file_op: Option<u32>,
}

fn is_zero<T: Default + PartialEq>(v: &T) -> bool {
    *v == T::default()
}

/// One line's worth of a job's I/O log, as a JSON array: `[time ns, direction (0 read,
/// 1 write, 2 trim), I/Os, bytes, offset, slat ns, clat ns, max slat ns, max clat ns, max
/// lat ns]`. Per I/O: its completion time, 1, its size, offset and latencies (each its own
/// maximum). Per window: the window's end (or the job's end, for the last, partial one),
/// the I/Os and bytes completed in it, offset 0, the sums of their slat and clat, and the
/// largest slat, clat and slat + clat among them (fio's `log_max_value`).
#[derive(Clone, Copy, Debug, Default, Serialize, JsonSchema, PartialEq, Eq)]
pub struct IoLogRecord(pub u64, pub u8, pub u32, pub u64, pub u64, pub u64, pub u64, pub u64, pub u64, pub u64);

/// What a window of the I/O log has gathered for one direction.
#[derive(Clone, Copy, Debug, Default)]
struct Window {
    ios: u32,
    bytes: u64,
    slat: u64,
    clat: u64,
    max_slat: u64,
    max_clat: u64,
    max_lat: u64,
}

/// fio's periodic sampling of one job's rate (`bwavgtime` for bandwidth, `iopsavgtime` for
/// IOPS): every `every` ns from the start of measurement, the bytes (I/Os) completed in the
/// window times 1000 over the window in ms (then / 1024 for KiB/s), fio's integer
/// arithmetic; a window without I/O of a direction gives that direction no sample. Windows
/// close at the first completion at or after their end (or the job's end), so a completion
/// exactly on a window's end counts in the next one.
#[derive(Clone, Debug)]
pub struct RateSampler {
    every: Time,
    kib: bool,
    /// End of the window being filled (never: not started, or not windowed).
    pub next: Time,
    last: [u64; 3],
}

impl RateSampler {
    pub fn new(every: Time, kib: bool) -> RateSampler {
        RateSampler { every, kib, next: Time::MAX, last: [0; 3] }
    }

    /// Measurement begins at `at` (nothing is counted yet).
    pub fn begin(&mut self, at: Time) {
        if self.every > 0 {
            self.next = at.saturating_add(self.every);
        }
    }

    /// Close every window that ended at or before `now`, given the cumulative counts.
    #[cold]
    pub fn close(&mut self, now: Time, counts: [u64; 3], samples: &mut [LatStats; 3]) {
        if self.next > now {
            return;
        }
        let ms = (self.every / 1_000_000).max(1);
        for d in 0..3 {
            let delta = counts[d] - self.last[d];
            if delta == 0 {
                continue;
            }
            let rate = delta * 1000 / ms;
            samples[d].record(if self.kib { rate / 1024 } else { rate });
            self.last[d] = counts[d];
        }
        // Every completion so far came before this window's end (a later one would have
        // closed it then), so the windows after it up to `now` are empty: no samples.
        self.next = self.next.saturating_add(self.every * ((now - self.next) / self.every + 1));
    }
}

/// A job's I/O log being written: per I/O (`every` 0) or per window of `every` ns.
#[derive(Clone, Debug)]
pub struct IoLogger {
    every: Time,
    start: Time,
    /// End of the window being filled.
    pub next: Time,
    /// The latest time recorded: the thread reaps its I/Os one after another, so an entry
    /// is never stamped before the one reaped ahead of it (each I/O's reap share of the
    /// thread's time is drawn apart, so its own stamp may be).
    last: Time,
    /// Per direction: what the window being filled has gathered.
    acc: [Window; 3],
}

impl IoLogger {
    pub fn new(every: Time) -> IoLogger {
        IoLogger { every, start: 0, next: Time::MAX, last: 0, acc: [Window::default(); 3] }
    }

    pub fn begin(&mut self, at: Time) {
        self.start = at;
        if self.every > 0 {
            self.next = at.saturating_add(self.every);
        }
    }

    /// One completion reaped at `now` (after closing the windows it passed).
    pub fn record(&mut self, now: Time, d: usize, len: u64, offset: u64, slat: Time, clat: Time, log: &mut Vec<IoLogRecord>) {
        let now = now.max(self.last);
        self.last = now;
        if self.every == 0 {
            log.push(IoLogRecord(now, d as u8, 1, len, offset, slat, clat, slat, clat, slat + clat));
            return;
        }
        if now >= self.next {
            self.flush(self.next, log);
            self.next += (now - self.next) / self.every * self.every + self.every;
        }
        let a = &mut self.acc[d];
        a.ios += 1;
        a.bytes += len;
        a.slat += slat;
        a.clat += clat;
        a.max_slat = a.max_slat.max(slat);
        a.max_clat = a.max_clat.max(clat);
        a.max_lat = a.max_lat.max(slat + clat);
    }

    /// The window being filled ends at `at`: its lines, for the directions with I/O.
    pub fn flush(&mut self, at: Time, log: &mut Vec<IoLogRecord>) {
        for (d, a) in self.acc.iter_mut().enumerate() {
            if a.ios > 0 {
                log.push(IoLogRecord(at, d as u8, a.ios, a.bytes, 0, a.slat, a.clat, a.max_slat, a.max_clat, a.max_lat));
                *a = Window::default();
            }
        }
    }
}

impl JobStats {
    pub fn dir_mut(&mut self, op: crate::io::Op) -> &mut DirStats {
        match op {
            crate::io::Op::Read => &mut self.read,
            crate::io::Op::Write => &mut self.write,
            crate::io::Op::Trim => &mut self.trim,
            crate::io::Op::Flush => &mut self.sync,
        }
    }

    pub fn record_depth(&mut self, depth: u64) {
        let level = match depth {
            0..=1 => 0,
            2 => 1,
            3..=4 => 2,
            5..=8 => 3,
            9..=16 => 4,
            17..=32 => 5,
            _ => 6,
        };
        self.iodepth_level[level] += 1;
    }

    pub fn finish(&mut self) {
        for d in [&mut self.read, &mut self.write, &mut self.trim, &mut self.sync] {
            d.finish();
        }
        for s in self.bw_samples.iter_mut().chain(self.iops_samples.iter_mut()) {
            s.finish();
        }
    }

    /// Completed bytes and I/Os per direction (read, write, trim), measured.
    pub fn counts(&self) -> ([u64; 3], [u64; 3]) {
        ([self.read.bytes, self.write.bytes, self.trim.bytes], [self.read.ios, self.write.ios, self.trim.ios])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::histogram::{bucket_of, bucket_value};

    #[test]
    fn an_io_lands_in_the_slat_clat_and_lat_histograms() {
        let mut d = DirStats::default();
        assert!(d.lat_hist.sparse().is_empty());
        d.record(4096, 30, 1_000);
        d.record(4096, 50, 2_000);
        assert_eq!(d.slat_hist.percentile(100.0), 50);
        assert_eq!(d.clat_hist.percentile(50.0), bucket_value(bucket_of(1_000)));
        // lat is slat + clat: 2050 ns falls in the bucket of 2048..2079
        assert_eq!(d.lat_hist.percentile(100.0), bucket_value(bucket_of(2_050)));
        // an I/O timed only at completion has no slat or lat
        d.record_clat(4096, 3_000);
        assert_eq!((d.slat_hist.total(), d.clat_hist.total(), d.lat_hist.total()), (2, 3, 2));
    }
}
