//! What an array is made of: its RAID level, chunk, engine and member drives.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::block::{QueueLimits, SchedulerConfig};
use crate::device::ssd::Precondition;
use crate::device::DriveConfig;
use crate::engine::Time;
use crate::error::ConfigError;

use super::layout::{RaidLevel, PAGE};

/// One member drive (or spare): its name (as iostat shows it), what drive it is (a drive:
/// arrays do not nest), the state it starts in, and its own block queue's I/O scheduler and
/// settings.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberSpec {
    pub name: String,
    pub device: DriveConfig,
    #[serde(default)]
    pub precondition: Precondition,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    #[serde(default)]
    pub queue: QueueLimits,
}

/// Linux md's RAID 4/5/6 personality (drivers/md/raid5.c) as it handles stripes. Levels 0,
/// 1 and 10 map requests straight onto members and use none of it.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MdConfig {
    /// Stripe heads in the stripe cache (`/sys/block/mdX/md/stripe_cache_size`): one page
    /// per member each. A write waits for free stripe heads.
    pub stripe_cache_size: u32,
    /// The most stripe heads the cache grows to when requests starve for them (md grows it
    /// a head at a time on demand since Linux 4.1, bounded only by memory); 0: it stays at
    /// `stripe_cache_size`.
    #[serde(default)]
    pub stripe_cache_max: u32,
    /// Extra stripe-handling threads (`group_thread_cnt`); 0 = raid5d alone.
    pub group_thread_cnt: u32,
    /// CPU time a handling thread spends on one stripe head, ns, parity computation aside.
    pub stripe_head_ns: Time,
    /// Parity computation rate of one core over the source data, bytes per second.
    pub parity_bytes_per_s: f64,
    /// Resync and rebuild speed limits per member (`sync_speed_min`, `sync_speed_max`),
    /// bytes per second.
    pub sync_speed_min_bytes_per_s: f64,
    pub sync_speed_max_bytes_per_s: f64,
    /// md's sync thread, when it had to wait for a stripe head, sleeps this long (one jiffy:
    /// `raid5_sync_request`'s `schedule_timeout_uninterruptible(1)`) before it goes on; 0:
    /// it does not.
    #[serde(default)]
    pub sync_wait_sleep_ns: Time,
    /// The write-intent bitmap's chunk (bytes of a member per bit); 0: no bitmap. mdadm adds
    /// one, of 64 MiB chunks, to arrays of members over 100 GiB (the profile layer decides).
    #[serde(default)]
    pub bitmap_chunk_bytes: u64,
    /// The bitmap daemon's period (mdadm's `--delay`, 5 s by default).
    #[serde(default = "default_bitmap_daemon_sleep")]
    pub bitmap_daemon_sleep_ns: Time,
}

fn default_bitmap_daemon_sleep() -> Time {
    5_000_000_000
}

impl Default for MdConfig {
    /// md's defaults; the stripe cost is the built-in md engine profile's calibration.
    fn default() -> Self {
        MdConfig {
            stripe_cache_size: 256,
            stripe_cache_max: 0,
            group_thread_cnt: 0,
            stripe_head_ns: 11_100,
            parity_bytes_per_s: 18e9,
            sync_speed_min_bytes_per_s: 1_000.0 * 1024.0,
            sync_speed_max_bytes_per_s: 200_000.0 * 1024.0,
            sync_wait_sleep_ns: 0,
            bitmap_chunk_bytes: 0,
            bitmap_daemon_sleep_ns: default_bitmap_daemon_sleep(),
        }
    }
}

/// A modern streaming RAID engine (as seed 004's xiRAID): no stripe cache to wait for,
/// stripes handled by many cores, and a rebuild of large sequential units kept going
/// regardless of host I/O.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct StreamingConfig {
    /// Cores handling stripes and computing parity.
    pub cores: u32,
    /// CPU time per request on a core, ns, parity aside.
    pub request_ns: Time,
    /// Parity computation rate of one core over the source data, bytes per second.
    pub parity_bytes_per_s: f64,
    /// Bytes of each member in one rebuild unit (whole rows of chunks are taken).
    pub rebuild_unit_bytes: u64,
    /// Rebuild units in flight.
    pub rebuild_depth: u32,
    /// Share of each member's dispatches the rebuild gets while host I/O also waits there
    /// (0 < share <= 1).
    pub rebuild_share: f64,
    /// Rebuild commands a member's drive holds at most while the host uses the array (I/O
    /// in it, or some less than `host_idle_after_ns` ago) but has no I/O at that member (where
    /// it has, the share decides); an idle array's drives take the rebuild's whole queue.
    pub rebuild_depth_beside_host: u32,
    pub host_idle_after_ns: Time,
}

/// How the array's RAID logic is carried out: each engine is a model of one kind of
/// implementation, with its own costs and limits.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum EngineConfig {
    Md(MdConfig),
    Streaming(StreamingConfig),
    Hwraid(super::hwraid::HwRaidConfig),
}

impl EngineConfig {
    pub fn label(&self) -> &'static str {
        match self {
            EngineConfig::Md(_) => "md",
            EngineConfig::Streaming(_) => "streaming",
            EngineConfig::Hwraid(_) => "hwraid",
        }
    }

    fn validate(&self) -> Result<(), ConfigError> {
        match self {
            EngineConfig::Md(md) => {
                // md refuses other sizes (raid5_set_cache_size: 17 <= size <= 32768).
                if !(17..=32768).contains(&md.stripe_cache_size) {
                    return Err(ConfigError::new(
                        "engine.stripe_cache_size",
                        format!("must be between 17 and 32768 (md's limits), got {}", md.stripe_cache_size),
                    ));
                }
                if md.stripe_cache_max != 0 && !(md.stripe_cache_size..=1 << 20).contains(&md.stripe_cache_max) {
                    return Err(ConfigError::new(
                        "engine.stripe_cache_max",
                        format!(
                            "must be 0 (no growth) or between stripe_cache_size ({}) and 1048576, got {}",
                            md.stripe_cache_size, md.stripe_cache_max
                        ),
                    ));
                }
                if !(md.parity_bytes_per_s > 0.0 && md.parity_bytes_per_s.is_finite()) {
                    return Err(ConfigError::new("engine.parity_bytes_per_s", "must be a positive rate".into()));
                }
                if md.group_thread_cnt > 1024 {
                    return Err(ConfigError::new("engine.group_thread_cnt", "at most 1024 threads".into()));
                }
                let (lo, hi) = (md.sync_speed_min_bytes_per_s, md.sync_speed_max_bytes_per_s);
                if !(lo > 0.0 && hi >= lo && hi.is_finite()) {
                    return Err(ConfigError::new(
                        "engine.sync_speed_max_bytes_per_s",
                        format!("sync speeds must be positive with max >= min, got min {lo}, max {hi}"),
                    ));
                }
                // md refuses a bitmap chunk that is not a power of two (md-bitmap.c).
                let c = md.bitmap_chunk_bytes;
                if c != 0 && (!c.is_power_of_two() || c < 512) {
                    return Err(ConfigError::new(
                        "engine.bitmap_chunk_bytes",
                        format!("must be 0 (no bitmap) or a power of two of at least 512 bytes, got {c}"),
                    ));
                }
                if md.bitmap_daemon_sleep_ns == 0 {
                    return Err(ConfigError::new("engine.bitmap_daemon_sleep_ns", "must be positive".into()));
                }
                Ok(())
            }
            EngineConfig::Hwraid(h) => h.validate(),
            EngineConfig::Streaming(s) => {
                if !(1..=4096).contains(&s.cores) {
                    return Err(ConfigError::new("engine.cores", format!("must be 1 to 4096, got {}", s.cores)));
                }
                if !(s.parity_bytes_per_s > 0.0 && s.parity_bytes_per_s.is_finite()) {
                    return Err(ConfigError::new("engine.parity_bytes_per_s", "must be a positive rate".into()));
                }
                if !(s.rebuild_share > 0.0 && s.rebuild_share <= 1.0) {
                    return Err(ConfigError::new("engine.rebuild_share", format!("must be in (0, 1], got {}", s.rebuild_share)));
                }
                if s.rebuild_depth_beside_host == 0 {
                    return Err(ConfigError::new("engine.rebuild_depth_beside_host", "must be at least 1".into()));
                }
                if s.rebuild_unit_bytes == 0 || s.rebuild_depth == 0 {
                    return Err(ConfigError::new("engine.rebuild_unit_bytes", "rebuild unit and depth must be positive".into()));
                }
                Ok(())
            }
        }
    }
}

/// A member failing while the array runs.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MemberFailure {
    pub member: String,
    /// Simulated time of the failure from the run's start, ns; 0: failed before it begins.
    #[serde(default)]
    pub at_ns: Time,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ArrayConfig {
    pub level: RaidLevel,
    pub chunk_bytes: u64,
    pub engine: EngineConfig,
    /// The active members, in their role order (md's `RaidDevice` numbers).
    pub members: Vec<MemberSpec>,
    /// Members that fail, and when.
    #[serde(default)]
    pub failures: Vec<MemberFailure>,
    /// Hot spares: a failed member is rebuilt onto the first one free.
    #[serde(default)]
    pub spares: Vec<MemberSpec>,
    /// Stop a rebuild once this many bytes of the replacement are in sync (a sample of a
    /// long, steady rebuild, to be extrapolated); none: rebuild it all.
    #[serde(default)]
    pub rebuild_limit_bytes: Option<u64>,
    /// Keep real bytes on the members and check every read against what was written
    /// (small arrays, md and streaming engines): a correctness check of the timed array.
    #[serde(default)]
    pub verify_data: bool,
}

/// The most member bytes a data-verified array may hold in memory.
pub const VERIFY_MAX_BYTES: u64 = 1 << 30;

impl ArrayConfig {
    /// Bytes of each member the array uses: the members' common size less the bitmap's
    /// space, whole chunks.
    pub fn member_bytes(&self) -> u64 {
        let smallest = self.members.iter().map(|m| m.device.capacity_bytes()).min().unwrap_or(0);
        let usable = match self.bitmap_chunk() {
            Some(c) => smallest.saturating_sub(super::bitmap::WriteIntentBitmap::bytes_for(smallest, c)),
            None => smallest,
        };
        usable / self.chunk_bytes.max(1) * self.chunk_bytes.max(1)
    }

    /// The write-intent bitmap's chunk, if the array keeps one: md's engine with a bitmap
    /// configured, at a level with redundancy.
    pub fn bitmap_chunk(&self) -> Option<u64> {
        match &self.engine {
            EngineConfig::Md(md) if md.bitmap_chunk_bytes > 0 && self.level != RaidLevel::Raid0 => {
                Some(md.bitmap_chunk_bytes)
            }
            _ => None,
        }
    }

    /// The optimal I/O size md reports for the array (the queue's `io_opt`): one stripe's
    /// data, a chunk on each data member (`raid0_set_limits`, `raid5_set_limits`,
    /// `raid10_set_queue_limits` in drivers/md of Linux 6.x; a mirror reports none). Linux
    /// reads ahead twice that on the array (`blk_apply_bdi_limits`: `ra_pages` at least
    /// `2 * io_opt`), as md itself set it when it started an array in 2008 (`raid0_run`,
    /// raid10's `run` and raid5's `run` of 2.6.2x: "readahead at least twice a whole
    /// stripe"). 0 for the other engines, whose drivers' limits are not known here.
    pub fn optimal_io_bytes(&self) -> u64 {
        if !matches!(self.engine, EngineConfig::Md(_)) {
            return 0;
        }
        let n = self.members.len() as u64;
        let data_members = match self.level {
            RaidLevel::Raid0 => n,
            RaidLevel::Raid1 => 0,
            // md's default "near" layout keeps two copies of each chunk side by side.
            RaidLevel::Raid10 => n / 2,
            RaidLevel::Raid5 => n - 1,
            RaidLevel::Raid6 => n - 2,
        };
        data_members * self.chunk_bytes
    }

    /// Bytes the array offers the host.
    pub fn capacity_bytes(&self) -> u64 {
        super::layout::Layout::new(self.level, self.members.len() as u32, self.chunk_bytes, self.member_bytes())
            .capacity()
    }

    /// Errors name the offending key (`members`, `chunk`, `engine.…`, `members.NAME.…`).
    pub fn validate(&self) -> Result<(), ConfigError> {
        let n = self.members.len();
        if n < self.level.min_members() {
            return Err(ConfigError::new(
                "members",
                format!(
                    "{} needs at least {} drives, got {n}",
                    self.level.label(),
                    self.level.min_members()
                ),
            ));
        }
        if n > u16::MAX as usize {
            return Err(ConfigError::new("members", format!("{n} members; at most {}", u16::MAX)));
        }
        if self.chunk_bytes == 0 || !self.chunk_bytes.is_multiple_of(PAGE) {
            return Err(ConfigError::new(
                "chunk",
                format!("must be a positive multiple of 4 KiB (md's page), got {} bytes", self.chunk_bytes),
            ));
        }
        // md's raid5/raid6 and raid10 refuse a chunk that is not a power of two ("invalid
        // chunk size", raid5.c and raid10.c); raid0 takes any multiple of the page.
        if matches!(self.engine, EngineConfig::Md(_))
            && matches!(self.level, RaidLevel::Raid5 | RaidLevel::Raid6 | RaidLevel::Raid10)
            && !self.chunk_bytes.is_power_of_two()
        {
            return Err(ConfigError::new(
                "chunk",
                format!("md's {} needs a power of two, got {} bytes", self.level.label(), self.chunk_bytes),
            ));
        }
        let mut names = std::collections::HashSet::new();
        for m in self.members.iter().chain(&self.spares) {
            if !names.insert(m.name.as_str()) {
                return Err(ConfigError::new("members", format!("'{}' is named twice", m.name)));
            }
            m.device.validate().map_err(|e| ConfigError::new(&format!("members.{}.{}", m.name, e.key), e.message))?;
        }
        let first = &self.members[0];
        let size = first.device.capacity_bytes();
        if let Some(m) = self.members.iter().find(|m| m.device.capacity_bytes() != size) {
            return Err(ConfigError::new(
                "members",
                format!(
                    "'{}' holds {} bytes but '{}' holds {}: the members of an array must be the same size \
                     (a drive's profile_set capacity can make them so)",
                    m.name,
                    m.device.capacity_bytes(),
                    first.name,
                    size
                ),
            ));
        }
        // Checked after the members, so that the size it names is the one every member has.
        if let Some(m) = self.spares.iter().find(|m| m.device.capacity_bytes() < size) {
            return Err(ConfigError::new(
                "spares",
                format!("spare '{}' holds {} bytes, less than the members' {size}", m.name, m.device.capacity_bytes()),
            ));
        }
        if self.member_bytes() == 0 {
            return Err(ConfigError::new("chunk", format!("a chunk of {} bytes is larger than a member", self.chunk_bytes)));
        }
        let mut failed = std::collections::HashSet::new();
        if self.verify_data {
            if matches!(self.engine, EngineConfig::Hwraid(_)) {
                return Err(ConfigError::new("verify_data", "is for the md and streaming engines".into()));
            }
            let held = self.member_bytes() * n as u64;
            if held > VERIFY_MAX_BYTES {
                return Err(ConfigError::new(
                    "verify_data",
                    format!(
                        "the members hold {held} bytes; a data-verified array holds at most {VERIFY_MAX_BYTES} \
                         (give the drives a smaller capacity)"
                    ),
                ));
            }
        }
        if self.rebuild_limit_bytes == Some(0) {
            return Err(ConfigError::new("rebuild_limit_bytes", "must be positive".into()));
        }
        for f in &self.failures {
            if !self.members.iter().any(|m| m.name == f.member) {
                return Err(ConfigError::new("failures", format!("'{}' is not a member of the array", f.member)));
            }
            if !failed.insert(f.member.as_str()) {
                return Err(ConfigError::new("failures", format!("'{}' fails twice", f.member)));
            }
        }
        if self.level == RaidLevel::Raid0 && !failed.is_empty() {
            return Err(ConfigError::new(
                "failures",
                "raid0 has no redundancy: a failed member loses the array's data".into(),
            ));
        }
        // Without a spare every failure stays: which of them the array survives is known now.
        // With spares it depends on whether a rebuild is done before the next failure, which
        // the run finds out (a failure that would lose data ends it with an error).
        let out = |m: u32| failed.contains(self.members[m as usize].name.as_str());
        if self.spares.is_empty() && self.level.loses_data(n, out) {
            return Err(ConfigError::new(
                "failures",
                format!(
                    "{} of {n} members fail and no spare replaces them, but {} survives {}: the array's data would be lost",
                    failed.len(),
                    self.level.label(),
                    match self.level {
                        RaidLevel::Raid10 => "only one member of each mirrored pair".to_string(),
                        level => format!("only {}", level.tolerated_failures(n)),
                    }
                ),
            ));
        }
        self.engine.validate()
    }
}
