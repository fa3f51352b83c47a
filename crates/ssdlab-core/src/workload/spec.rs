//! One job clone as the Python layer resolves it from a fio job file (field names match
//! `python/ssdlab/workload.py`). Sizes in bytes, times in ns, offsets absolute.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::error::ConfigError;

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RwMode {
    Read,
    Write,
    Trim,
    Randread,
    Randwrite,
    Randtrim,
    Rw,
    Randrw,
    Trimwrite,
    Randtrimwrite,
}

impl RwMode {
    pub fn is_random(self) -> bool {
        matches!(
            self,
            RwMode::Randread | RwMode::Randwrite | RwMode::Randtrim | RwMode::Randrw | RwMode::Randtrimwrite
        )
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct BlockSizeDist {
    #[serde(default)]
    pub split: Vec<(u64, f64)>,
    #[serde(default)]
    pub range_min: Option<u64>,
    #[serde(default)]
    pub range_max: Option<u64>,
}

impl BlockSizeDist {
    pub fn fixed(size: u64) -> Self {
        BlockSizeDist { split: vec![(size, 100.0)], range_min: None, range_max: None }
    }

    pub fn min_size(&self) -> u64 {
        match self.range_min {
            Some(m) => m,
            None => self.split.iter().map(|&(s, _)| s).min().unwrap_or(0),
        }
    }

    pub fn max_size(&self) -> u64 {
        match self.range_max {
            Some(m) => m,
            None => self.split.iter().map(|&(s, _)| s).max().unwrap_or(0),
        }
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Zone {
    pub access_pct: f64,
    pub size_pct: f64,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum DistKind {
    #[default]
    Random,
    Zipf,
    Pareto,
    Normal,
    Zoned,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, Default, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Distribution {
    #[serde(default)]
    pub kind: DistKind,
    #[serde(default)]
    pub param: f64,
    #[serde(default)]
    pub zones: Vec<Zone>,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum RateProcess {
    #[default]
    Linear,
    Poisson,
}

fn one() -> u64 {
    1
}
fn half() -> f64 {
    50.0
}
fn yes() -> bool {
    true
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct JobSpec {
    pub name: String,
    /// The system's target device this job's I/O goes to (index into its targets).
    #[serde(default)]
    pub target: u32,
    #[serde(default)]
    pub clone: u32,
    #[serde(default)]
    pub group_id: u32,
    #[serde(default)]
    pub seed: u64,
    #[serde(default)]
    pub start_after: Vec<u32>,
    #[serde(default)]
    pub start_delay_ns: u64,
    pub rw: RwMode,
    #[serde(default)]
    pub rw_modifier: i64,
    #[serde(default = "half")]
    pub rwmix_read: f64,
    pub block_sizes: [BlockSizeDist; 3],
    pub block_align: [u64; 3],
    #[serde(default = "one")]
    pub iodepth: u64,
    /// I/Os submitted at once (fio's `iodepth_batch_submit`; 0: `iodepth`). A batch of more
    /// than two goes to the block layer under one plug, where contiguous bios merge.
    #[serde(default = "one")]
    pub iodepth_batch_submit: u64,
    /// fio's engine completes each I/O in its submit call (fio's FIO_SYNCIO engines, psync
    /// say, and null at depth 1): fio stamps its issue before the call (ioengines.c), so the
    /// call is its clat and it keeps no slat.
    #[serde(default)]
    pub sync_engine: bool,
    /// fio's null engine (engines/null.c): every I/O is done as soon as it is submitted; none
    /// reaches a device. What is left is the host's time per I/O.
    #[serde(default)]
    pub null_engine: bool,
    #[serde(default)]
    pub region_offset: u64,
    pub region_size: u64,
    pub io_limit: u64,
    #[serde(default = "one")]
    pub loops: u64,
    #[serde(default)]
    pub number_ios: Option<u64>,
    #[serde(default)]
    pub runtime_ns: Option<u64>,
    #[serde(default)]
    pub time_based: bool,
    #[serde(default)]
    pub ramp_time_ns: u64,
    #[serde(default)]
    pub thinktime_ns: u64,
    #[serde(default = "one")]
    pub thinktime_blocks: u64,
    #[serde(default)]
    pub rate_bytes: [u64; 3],
    #[serde(default)]
    pub rate_iops: [u64; 3],
    #[serde(default)]
    pub rate_process: RateProcess,
    #[serde(default)]
    pub fsync_every: u64,
    #[serde(default = "yes")]
    pub random_map: bool,
    #[serde(default)]
    pub distribution: Distribution,
    /// I/O from a block trace instead of the generator (fio's `read_iolog`).
    #[serde(default)]
    pub replay: Option<super::replay::ReplaySpec>,
    /// fio's bandwidth and IOPS sampling windows (`bwavgtime`, `iopsavgtime`; 0: a sample per
    /// I/O, as fio takes them for a log written per I/O). Observation only.
    #[serde(default = "half_second")]
    pub bw_window_ns: u64,
    #[serde(default = "half_second")]
    pub iops_window_ns: u64,
    /// Keep an I/O log (fio's `write_*_log`): a record per I/O (0) or per window of this
    /// many ns (`log_avg_msec`). None: no log. Observation only.
    #[serde(default)]
    pub log_window_ns: Option<u64>,
    /// File work: the job's I/O goes to files through the file layer (fio's pattern over its
    /// files, offsets within each file of `region_size`), or a program of file operations.
    /// None: the job addresses its target device directly.
    #[serde(default)]
    pub files: Option<super::files::FileAccess>,
}

fn half_second() -> u64 {
    500_000_000
}

impl JobSpec {
    /// A plain job for tests and benchmarks: `rw` with fixed `bs` over the whole region.
    pub fn simple(name: &str, rw: RwMode, bs: u64, iodepth: u64, region_size: u64) -> JobSpec {
        JobSpec {
            name: name.to_string(),
            target: 0,
            clone: 0,
            group_id: 0,
            seed: 0,
            start_after: Vec::new(),
            start_delay_ns: 0,
            rw,
            rw_modifier: 0,
            rwmix_read: 50.0,
            block_sizes: [BlockSizeDist::fixed(bs), BlockSizeDist::fixed(bs), BlockSizeDist::fixed(bs)],
            block_align: [bs, bs, bs],
            iodepth,
            iodepth_batch_submit: 1,
            sync_engine: false,
            null_engine: false,
            region_offset: 0,
            region_size,
            io_limit: region_size,
            loops: 1,
            number_ios: None,
            runtime_ns: None,
            time_based: false,
            ramp_time_ns: 0,
            thinktime_ns: 0,
            thinktime_blocks: 1,
            rate_bytes: [0; 3],
            rate_iops: [0; 3],
            rate_process: RateProcess::Linear,
            fsync_every: 0,
            random_map: true,
            distribution: Distribution::default(),
            replay: None,
            bw_window_ns: half_second(),
            iops_window_ns: half_second(),
            log_window_ns: None,
            files: None,
        }
    }

    /// Reject what the generator cannot honour, naming the field.
    // `!(w >= 0.0)` refuses NaN weights as well as negative ones.
    #[allow(clippy::neg_cmp_op_on_partial_ord)]
    pub fn validate(&self, device_capacity: u64, jobs: usize) -> Result<(), ConfigError> {
        let err = |key: &str, message: String| Err(ConfigError::new(key, message));
        if self.region_size == 0 {
            return err("region_size", "must be positive".into());
        }
        if self.region_offset + self.region_size > device_capacity {
            return err(
                "region_offset",
                format!("region {}+{} runs past the device end ({} bytes)", self.region_offset, self.region_size, device_capacity),
            );
        }
        if self.iodepth == 0 {
            return err("iodepth", "must be at least 1".into());
        }
        for (d, bs) in self.block_sizes.iter().enumerate() {
            let (lo, hi) = (bs.min_size(), bs.max_size());
            let key = format!("block_sizes.{d}");
            if lo == 0 || hi < lo {
                return err(&key, "block sizes must be positive".into());
            }
            if hi > self.region_size {
                return err(&key, format!("block size {hi} is larger than the region ({})", self.region_size));
            }
            if self.block_align[d] == 0 {
                return err(&format!("block_align.{d}"), "must be positive".into());
            }
            if bs.range_min.is_none() && bs.split.iter().any(|&(_, w)| !(w >= 0.0)) {
                return err(&format!("{key}.split"), "bssplit weights must be non-negative".into());
            }
        }
        if !(0.0..=100.0).contains(&self.rwmix_read) {
            return err("rwmix_read", format!("{} outside 0..100", self.rwmix_read));
        }
        if self.time_based && self.runtime_ns.is_none() {
            return err("time_based", "needs a runtime".into());
        }
        if let Some(&dep) = self.start_after.iter().find(|&&d| d as usize >= jobs) {
            return err("start_after", format!("names job {dep}, which does not exist"));
        }
        if self.distribution.kind == DistKind::Zoned && self.distribution.zones.is_empty() {
            return err("distribution.zones", "a zoned distribution needs zones".into());
        }
        if let Some(r) = &self.replay {
            r.validate()?;
        }
        Ok(())
    }
}
