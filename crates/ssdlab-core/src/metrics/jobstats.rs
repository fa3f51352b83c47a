//! Per-job statistics in fio's terms: per direction I/O counts, bytes, and slat/clat/lat.

use serde::Serialize;

use super::histogram::LatencyHistogram;

/// Latency summary in ns. Sums are kept exactly in integers (squares of ns latencies fit a
/// u128 for any realistic run), which is cheaper than a running mean and loses nothing.
#[derive(Clone, Debug, Default, Serialize)]
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

#[derive(Clone, Debug, Default, Serialize)]
pub struct DirStats {
    pub ios: u64,
    pub bytes: u64,
    pub slat: LatStats,
    pub clat: LatStats,
    pub lat: LatStats,
    pub clat_hist: LatencyHistogram,
}

impl DirStats {
    #[inline]
    pub fn record(&mut self, bytes: u64, slat: u64, clat: u64) {
        self.ios += 1;
        self.bytes += bytes;
        self.slat.record(slat);
        self.clat.record(clat);
        self.lat.record(slat + clat);
        self.clat_hist.record(clat);
    }

    pub fn finish(&mut self) {
        self.slat.finish();
        self.clat.finish();
        self.lat.finish();
    }
}

/// Everything fio reports for one job clone.
#[derive(Clone, Debug, Default, Serialize)]
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
}

impl JobStats {
    pub fn dir_mut(&mut self, op: crate::device::Op) -> &mut DirStats {
        match op {
            crate::device::Op::Read => &mut self.read,
            crate::device::Op::Write => &mut self.write,
            crate::device::Op::Trim => &mut self.trim,
            crate::device::Op::Flush => &mut self.sync,
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
    }
}
