//! What a write-remapping layer is: the drive under it and how it buffers, lays out and
//! cleans its log.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::array::MemberSpec;
use crate::engine::Time;
use crate::error::ConfigError;

/// A host-side write-remapping layer over one drive, as EasyCo's Managed Flash Technology
/// (MFT) was described in 2008: a block driver that acknowledges writes from its own RAM
/// buffer, writes them to the drive as large sequential runs at the head of a log, keeps a
/// map from the host's blocks to where they now are, and cleans the log as a log-structured
/// file system does (Rosenblum and Ousterhout, "The Design and Implementation of a
/// Log-Structured File System", 1992: greedy victim choice). It may ignore the host's cache
/// flushes, which is what makes it fast and unsafe.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RemapConfig {
    /// The drive underneath.
    pub member: MemberSpec,
    /// The RAM buffer host writes are acknowledged from, bytes. A write waits for room.
    pub buffer_bytes: u64,
    /// Bytes the log writes at once: a buffered run goes to the drive when it fills a segment
    /// (MFT wrote in multiples of the drive's erase block).
    pub segment_bytes: u64,
    /// The map's unit, bytes (a page: 4096).
    #[serde(default = "default_block")]
    pub block_bytes: u64,
    /// Share of the drive kept from the host for the log's free segments (over-provisioning).
    pub reserve: f64,
    /// Whether a cache flush (and so fsync's barrier) waits for the buffer to reach the drive
    /// and is passed on to it. MFT as seed 000 describes it did not.
    #[serde(default)]
    pub honor_flush: bool,
    /// Rate of the host's memory copy into and out of the buffer, bytes per second.
    pub copy_bytes_per_s: f64,
    /// Buffered data older than this is written even if it does not fill a segment, ns.
    pub max_age_ns: Time,
    /// Cleaning starts when this many free segments are left.
    #[serde(default = "default_clean_at")]
    pub clean_at_free_segments: u32,
}

fn default_block() -> u64 {
    4096
}

fn default_clean_at() -> u32 {
    4
}

impl RemapConfig {
    /// Blocks per segment.
    pub fn segment_blocks(&self) -> u32 {
        (self.segment_bytes / self.block_bytes) as u32
    }

    /// Whole segments of the drive.
    pub fn physical_segments(&self) -> u32 {
        (self.member.device.capacity_bytes() / self.segment_bytes) as u32
    }

    /// Blocks offered to the host: the drive less its reserve, in whole segments.
    pub fn logical_blocks(&self) -> u32 {
        let segs = self.physical_segments();
        let kept = ((segs as f64) * (1.0 - self.reserve)).floor() as u32;
        kept * self.segment_blocks()
    }

    /// Bytes offered to the host.
    pub fn capacity_bytes(&self) -> u64 {
        self.logical_blocks() as u64 * self.block_bytes
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        let bad = |key: &str, message: String| Err(ConfigError::new(key, message));
        if self.block_bytes == 0 || !self.block_bytes.is_multiple_of(512) {
            return bad("block_bytes", format!("must be a positive multiple of 512, got {}", self.block_bytes));
        }
        if self.segment_bytes == 0 || !self.segment_bytes.is_multiple_of(self.block_bytes) {
            return bad("segment_bytes", format!("must be a positive multiple of the block ({} bytes), got {}", self.block_bytes, self.segment_bytes));
        }
        if self.segment_blocks() > u16::MAX as u32 {
            return bad("segment_bytes", format!("at most {} blocks per segment", u16::MAX));
        }
        if self.buffer_bytes < self.segment_bytes {
            return bad("buffer_bytes", format!("must hold at least one segment ({} bytes), got {}", self.segment_bytes, self.buffer_bytes));
        }
        if !(self.reserve > 0.0 && self.reserve < 0.9) {
            return bad("reserve", format!("must be above 0 and below 0.9 (the log needs free segments), got {}", self.reserve));
        }
        if !(self.copy_bytes_per_s > 0.0 && self.copy_bytes_per_s.is_finite()) {
            return bad("copy_bytes_per_s", "must be a positive rate".into());
        }
        if self.max_age_ns == 0 {
            return bad("max_age_ns", "must be positive".into());
        }
        let drive_blocks = self.member.device.capacity_bytes() / self.block_bytes;
        if drive_blocks >= u32::MAX as u64 {
            return bad("block_bytes", format!("the drive has {drive_blocks} blocks of {} bytes; the map holds fewer than 2^32", self.block_bytes));
        }
        let segs = self.physical_segments();
        let logical_segs = self.logical_blocks() / self.segment_blocks().max(1);
        if logical_segs == 0 || segs < logical_segs + self.clean_at_free_segments + 2 {
            return bad(
                "reserve",
                format!("the drive's {segs} segments leave too few free ones for the log ({logical_segs} offered, cleaning at {} free)", self.clean_at_free_segments),
            );
        }
        self.member.device.validate().map_err(|e| ConfigError::new(&format!("member.{}", e.key), e.message))
    }
}
