//! What a run returns: every job's statistics, every device's counters and report (an
//! array's members' too), and the time series. This is the core's output; its JSON Schema
//! (see [`crate::schema`]) is what the Python layer reads it by.

use schemars::JsonSchema;
use serde::Serialize;

use super::device::DeviceReport;
use crate::engine::Time;
use crate::metrics::diskstats::DiskCounters;
use crate::metrics::JobStats;
use super::file::{CpuInterval, FileCounters, FileReport};

/// What one device reports: the block layer's counters for it, what the device itself saw
/// (its kind included), and its members' results when it is made of other devices.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DeviceResult {
    pub name: String,
    pub capacity_bytes: u64,
    pub scheduler: &'static str,
    pub disk: DiskCounters,
    pub internal: DeviceReport,
    pub members: Vec<DeviceResult>,
}

#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct SimResult {
    pub seed: u64,
    /// Simulated time when the run began (0 on new devices; a device used for an earlier
    /// run keeps its clock), when the last job finished, and when the devices had finished
    /// the work still under way then (buffered data, GC owed), ns.
    pub start_ns: Time,
    pub end_ns: Time,
    pub drained_ns: Time,
    /// Events handled (cost measure).
    pub events: u64,
    pub jobs: Vec<JobStats>,
    pub devices: Vec<DeviceResult>,
    pub samples: Vec<Sample>,
    /// The file layer's report, when jobs worked on files.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub files: Option<FileReport>,
    /// What a power cut at the run's end lost, when the run ended with one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub power_cut: Option<PowerCutReport>,
    /// What the server's network did (runs with one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::net::NetworkReport>,
}

/// A power cut: when it came, and what each target (and its members) held only in volatile
/// memory then.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct PowerCutReport {
    pub at_ns: Time,
    pub devices: Vec<PowerCutDevice>,
    /// Dirty pages in the host's page cache, never written (POSIX promises nothing for
    /// them before an fsync); None without a file layer.
    pub page_cache_dirty_bytes: Option<u64>,
    /// What the cut did to each file system, with a file layer.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub file_systems: Vec<super::FsPowerCut>,
}

/// One device's losses at a power cut (see [`crate::device::Volatile`]).
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct PowerCutDevice {
    pub name: String,
    pub volatile_bytes: u64,
    pub promised_bytes: u64,
    pub broken_flushes: u64,
    pub members: Vec<PowerCutDevice>,
}

impl SimResult {
    /// Requests completed by all jobs, measured or not.
    pub fn completed(&self) -> u64 {
        self.jobs.iter().map(|j| j.completed).sum()
    }
}


/// One device's counters at a sample (and its members', for an array).
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct DeviceSample {
    pub disk: DiskCounters,
    pub internal: DeviceReport,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub members: Vec<DeviceResult>,
}

/// One time-series sample: cumulative counters at `t_ns`, host-wide and per device.
#[derive(Clone, Debug, Serialize, JsonSchema)]
pub struct Sample {
    pub t_ns: Time,
    pub read_bytes: u64,
    pub write_bytes: u64,
    pub read_ios: u64,
    pub write_ios: u64,
    pub devices: Vec<DeviceSample>,
    /// The host's CPUs since the previous sample (as `sar -u` prints each interval), when the
    /// run works on files (the file layer runs the CPU model).
    pub cpu: Option<CpuInterval>,
    /// The file layer's running totals (runs whose jobs work on files).
    pub files: Option<FileCounters>,
    /// What the server's network had sent (runs with a network).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub network: Option<crate::net::NetCounters>,
}

