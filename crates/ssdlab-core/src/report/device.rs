//! What a device reports that iostat cannot show: the part every device has, and each kind's
//! own detail (a NAND SSD's FTL and wear, a hard disk's head time, a drive's temperature).
//! The devices fill these; they are defined here, below the devices, so that an array, a run
//! or a time series can carry them without knowing the devices.

use schemars::JsonSchema;
use serde::Serialize;

use super::array::ArrayReport;
use super::remap::RemapReport;
use crate::engine::Time;

/// The kinds of device a system can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum DeviceKind {
    NandSsd,
    InPlace,
    Hdd,
    Array,
    Remap,
}

/// What a device reports that iostat cannot show: the part every device has (traffic, busy
/// time of its media and controller, temperature), plus its kind's own detail. For an
/// array, "media" is its members (bytes it asked of them) and "controller" its stripe
/// handling threads.
#[derive(Clone, Debug, Serialize, JsonSchema, PartialEq)]
pub struct DeviceReport {
    pub kind: DeviceKind,
    pub host_bytes_written: u64,
    pub host_bytes_read: u64,
    /// Bytes written to and read from the storage medium (NAND or in-place media).
    pub media_bytes_written: u64,
    pub media_bytes_read: u64,
    /// Busy time of the media dies summed, ns (divide by dies × elapsed for utilisation).
    pub die_busy_ns: u64,
    pub dies: u32,
    /// Busy ns per channel.
    pub channel_busy_ns: Vec<u64>,
    pub controller_busy_ns: u64,
    pub controller_cores: u32,
    /// Temperature and throttling, for drives with a thermal model.
    pub thermal: Option<ThermalReport>,
    /// A NAND SSD's flash translation layer, write buffer and wear.
    pub nand: Option<NandReport>,
    /// An array's stripe handling and member health (its members report on their own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub array: Option<ArrayReport>,
    /// A hard disk's head time by part and its cache.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hdd: Option<HddReport>,
    /// A write-remapping layer's buffer, log and cleaner (its drive reports on its own).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub remap: Option<RemapReport>,
}

impl DeviceReport {
    /// The NAND detail; for callers that know the device is a NAND SSD.
    pub fn nand(&self) -> &NandReport {
        self.nand.as_ref().expect("a NAND SSD's report")
    }
}

/// What only a NAND SSD has: GC, write amplification's parts, SLC cache, buffer and wear.
#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct NandReport {
    pub erase_count: u64,
    pub gc_runs: u64,
    pub gc_relocated_bytes: u64,
    pub rmw_reads: u64,
    pub buffer_read_hits: u64,
    /// IUs read that were never written: the controller returns zeros without reading flash.
    pub unwritten_read_ius: u64,
    /// IUs of host writes merged into an IU already waiting in the write buffer.
    pub buffer_merges: u64,
    pub write_buffer_bytes_used: u64,
    /// Of that, IUs not yet given a place on flash (not yet in `media_bytes_written`).
    pub write_buffer_unplaced_bytes: u64,
    pub free_blocks: u64,
    pub total_blocks: u64,
    pub max_block_erases: u32,
    /// Raw flash beyond the user capacity, as a fraction of it.
    pub over_provisioning: f64,
    /// Bytes of simulator memory holding the mapping tables.
    pub map_bytes: u64,
    /// SLC cache: capacity in blocks used in SLC mode, what it may grow to now (user bytes),
    /// host bytes that went to SLC, and bytes folded out of it into native blocks.
    pub slc_used_bytes: u64,
    pub slc_budget_bytes: u64,
    pub slc_host_bytes: u64,
    pub folded_bytes: u64,
    /// Wear: average erases per block and blocks moved by static wear levelling.
    pub mean_block_erases: f64,
    pub wear_level_moves: u64,
    /// Flash work the dies owe, summed (GC and folding decided but not yet carried out, and
    /// host programs queued behind it), ns.
    pub gc_owed_ns: u64,
}


/// What the thermal model reports.
#[derive(Clone, Copy, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct ThermalReport {
    /// Last sensor reading, °C.
    pub temperature_c: f64,
    pub max_temperature_c: f64,
    pub throttled: bool,
    /// Time spent throttled, ns.
    pub throttled_ns: Time,
    /// How many times throttling began.
    pub throttle_events: u64,
}


/// What the head's time went to, and what the cache saved it.
#[derive(Clone, Debug, Default, Serialize, JsonSchema, PartialEq)]
pub struct HddReport {
    /// Media accesses (host reads and writes that reached the head, destages).
    pub media_accesses: u64,
    /// Accesses that moved the arm, and the cylinders moved in all.
    pub seeks: u64,
    pub seek_cylinders: u64,
    /// Head time by part, ns.
    pub seek_ns: u64,
    pub rotation_ns: u64,
    pub transfer_ns: u64,
    /// Reads served from the cache without waiting, and reads that waited for read-ahead.
    pub cache_read_hits: u64,
    pub read_ahead_hits: u64,
    /// Writes taken into the write-back cache, and dirty bytes written out.
    pub cached_writes: u64,
    pub destaged_bytes: u64,
    pub dirty_bytes: u64,
    /// Commands served because they had waited past the starvation bound.
    pub starved: u64,
    pub cylinders: u32,
    /// Sustained media rate of the outer and inner zone, bytes/s (track switches included).
    pub outer_zone_bytes_per_s: f64,
    pub inner_zone_bytes_per_s: f64,
}

