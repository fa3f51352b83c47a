//! Resolved SSD parameters (bytes, ns). Profiles in TOML carry units and sources; the Python
//! layer resolves them into this shape. Unknown keys are rejected so a typo never passes.

use crate::engine::Time;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum HostInterface {
    /// SATA: one half-duplex link; payload rate = line rate × 8/10 (8b/10b coding) × efficiency.
    Sata { gbit_per_s: f64, efficiency: f64 },
    /// PCIe: separate directions; per-lane rate by generation, 8b/10b (gen 1–2) or 128b/130b
    /// (gen 3+), times the TLP/protocol efficiency.
    Pcie { gen: u32, lanes: u32, efficiency: f64 },
}

impl HostInterface {
    /// Payload bytes per second in one direction.
    pub fn bytes_per_s(&self) -> u64 {
        match *self {
            HostInterface::Sata { gbit_per_s, efficiency } => {
                (gbit_per_s * 1e9 * 0.8 / 8.0 * efficiency) as u64
            }
            HostInterface::Pcie { gen, lanes, efficiency } => {
                let (gt, coding) = match gen {
                    1 => (2.5, 0.8),
                    2 => (5.0, 0.8),
                    3 => (8.0, 128.0 / 130.0),
                    4 => (16.0, 128.0 / 130.0),
                    5 => (32.0, 128.0 / 130.0),
                    _ => (64.0, 242.0 / 256.0),
                };
                (gt * 1e9 * coding / 8.0 * lanes as f64 * efficiency) as u64
            }
        }
    }

    /// Whether reads and writes share one wire (SATA) or have a direction each (PCIe).
    pub fn half_duplex(&self) -> bool {
        matches!(self, HostInterface::Sata { .. })
    }
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct ControllerConfig {
    /// Command-processing cores; each command occupies one core for its busy time.
    pub cores: u32,
    /// Core time per read / write / trim / flush command (firmware, FTL lookups).
    pub read_busy_ns: Time,
    pub write_busy_ns: Time,
    pub trim_busy_ns: Time,
    pub flush_busy_ns: Time,
    /// Coefficient of variation of core time per command, 0..=1: a fixed part of
    /// (1 − cv)·mean plus an exponential extra of mean cv·mean. Firmware time varies with
    /// buffer management, map updates and background work, but never drops below its fixed path.
    #[serde(default)]
    pub busy_cv: f64,
    /// Pipelined latency added to every command without occupying a core (command fetch,
    /// DMA set-up, completion posting).
    pub latency_ns: Time,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    pub channels: u32,
    pub dies_per_channel: u32,
    pub planes_per_die: u32,
    pub page_bytes: u64,
    pub pages_per_block: u32,
    pub blocks_per_plane: u32,
    pub read_ns: Time,
    pub program_ns: Time,
    pub erase_ns: Time,
    /// Bus rate of one channel, bytes per second.
    pub channel_bytes_per_s: u64,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Mapping granularity; host writes smaller than or misaligned to it are read-modify-write.
    pub iu_bytes: u64,
    /// Garbage collection runs on a die when its free blocks fall below this.
    pub gc_threshold_blocks: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct SsdConfig {
    pub name: String,
    /// User-addressable capacity in bytes.
    pub capacity_bytes: u64,
    pub interface: HostInterface,
    pub queue_depth: u32,
    pub controller: ControllerConfig,
    /// DRAM write buffer; 0 = write-through (a write completes when programmed).
    pub write_buffer_bytes: u64,
    pub nand: NandConfig,
    pub ftl: FtlConfig,
}

impl SsdConfig {
    pub fn dies(&self) -> u32 {
        self.nand.channels * self.nand.dies_per_channel
    }

    /// Bytes one die programs at once: a page in every plane (multi-plane program).
    pub fn program_unit_bytes(&self) -> u64 {
        self.nand.page_bytes * self.nand.planes_per_die as u64
    }

    pub fn raw_bytes(&self) -> u64 {
        self.dies() as u64
            * self.nand.planes_per_die as u64
            * self.nand.blocks_per_plane as u64
            * self.nand.pages_per_block as u64
            * self.nand.page_bytes
    }

    /// Spare factor: raw capacity beyond the user capacity, as a fraction of user capacity.
    pub fn over_provisioning(&self) -> f64 {
        self.raw_bytes() as f64 / self.capacity_bytes as f64 - 1.0
    }

    /// Check the geometry is self-consistent; errors name the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let err = |key: &str, msg: String| Err(ConfigError::new(key, msg));
        let n = &self.nand;
        for (key, v) in [
            ("nand.channels", n.channels as u64),
            ("nand.dies_per_channel", n.dies_per_channel as u64),
            ("nand.planes_per_die", n.planes_per_die as u64),
            ("nand.page_bytes", n.page_bytes),
            ("nand.pages_per_block", n.pages_per_block as u64),
            ("nand.blocks_per_plane", n.blocks_per_plane as u64),
            ("nand.channel_bytes_per_s", n.channel_bytes_per_s),
            ("ftl.iu_bytes", self.ftl.iu_bytes),
            ("controller.cores", self.controller.cores as u64),
            ("queue_depth", self.queue_depth as u64),
            ("capacity_bytes", self.capacity_bytes),
        ] {
            if v == 0 {
                return err(key, "must be greater than zero".into());
            }
        }
        let iu = self.ftl.iu_bytes;
        if iu % 512 != 0 || n.page_bytes % iu != 0 {
            return err(
                "ftl.iu_bytes",
                format!("must be a multiple of 512 dividing the page size {}", n.page_bytes),
            );
        }
        if self.capacity_bytes % iu != 0 {
            return err("capacity_bytes", format!("must be a multiple of the IU ({iu} bytes)"));
        }
        if !(0.0..=1.0).contains(&self.controller.busy_cv) {
            return err("controller.busy_cv", "must be between 0 and 1".into());
        }
        if self.ftl.gc_threshold_blocks < 2 {
            return err("ftl.gc_threshold_blocks", "must be at least 2 (GC needs a spare block)".into());
        }
        match self.interface {
            HostInterface::Sata { gbit_per_s, efficiency } => {
                if !(gbit_per_s > 0.0) {
                    return err("interface.gbit_per_s", "must be positive".into());
                }
                if !(efficiency > 0.0 && efficiency <= 1.0) {
                    return err("interface.efficiency", "must be in (0, 1]".into());
                }
            }
            HostInterface::Pcie { gen, lanes, efficiency } => {
                if !(1..=6).contains(&gen) {
                    return err("interface.gen", format!("PCIe generation 1–6 expected, got {gen}"));
                }
                if !matches!(lanes, 1 | 2 | 4 | 8 | 16) {
                    return err("interface.lanes", format!("1, 2, 4, 8 or 16 expected, got {lanes}"));
                }
                if !(efficiency > 0.0 && efficiency <= 1.0) {
                    return err("interface.efficiency", "must be in (0, 1]".into());
                }
            }
        }
        // Physical slots must hold all user data plus, on every die, the GC reserve, the two
        // open blocks and one block of slack; otherwise GC could find nothing to reclaim.
        let block_bytes = n.page_bytes * n.pages_per_block as u64 * n.planes_per_die as u64;
        let reserve = self.dies() as u64 * (self.ftl.gc_threshold_blocks as u64 + 3) * block_bytes;
        if self.raw_bytes() < self.capacity_bytes + reserve {
            return err(
                "capacity_bytes",
                format!(
                    "raw flash {} bytes cannot hold {} user bytes plus the GC reserve {} bytes; \
                     add blocks or lower the capacity",
                    self.raw_bytes(),
                    self.capacity_bytes,
                    reserve
                ),
            );
        }
        let slots = self.raw_bytes() / iu;
        if slots >= u32::MAX as u64 {
            return err(
                "ftl.iu_bytes",
                format!("{slots} mapping units exceed the 32-bit map; use a larger IU"),
            );
        }
        if self.write_buffer_bytes > 0 && self.write_buffer_bytes < self.program_unit_bytes() {
            return err(
                "write_buffer_bytes",
                format!(
                    "a write buffer must hold at least one program unit ({} bytes), or be 0",
                    self.program_unit_bytes()
                ),
            );
        }
        Ok(())
    }
}

impl SsdConfig {
    /// A generic NVMe TLC drive of `capacity_gib` GiB for tests and benchmarks (not a product):
    /// 8 channels × 4 dies × 2 planes, 16 KiB pages, 4 KiB IU, ~7 % spare. Blocks are sized so
    /// that a die holds 64 or more of them whatever the capacity.
    pub fn generic(capacity_gib: u64) -> SsdConfig {
        let dies = 32u64;
        let page = 16 * 1024u64;
        let planes = 2u64;
        let user = capacity_gib << 30;
        let pages_per_block = ((user / dies / planes / page / 64).clamp(16, 256)) as u32;
        let block_group = page * planes * pages_per_block as u64;
        // ~7 % spare plus the GC reserve (threshold + 3 blocks per die).
        let per_die = (user as f64 * 1.07 / dies as f64 / block_group as f64).ceil() as u64 + 6;
        SsdConfig {
            name: format!("generic-{capacity_gib}g"),
            capacity_bytes: user,
            interface: HostInterface::Pcie { gen: 3, lanes: 4, efficiency: 0.9 },
            queue_depth: 1024,
            controller: ControllerConfig {
                cores: 4,
                read_busy_ns: 2_000,
                write_busy_ns: 2_000,
                trim_busy_ns: 1_000,
                flush_busy_ns: 1_000,
                busy_cv: 0.0,
                latency_ns: 5_000,
            },
            write_buffer_bytes: 64 << 20,
            nand: NandConfig {
                channels: 8,
                dies_per_channel: 4,
                planes_per_die: planes as u32,
                page_bytes: page,
                pages_per_block,
                blocks_per_plane: per_die as u32,
                read_ns: 60_000,
                program_ns: 700_000,
                erase_ns: 3_500_000,
                channel_bytes_per_s: 800_000_000,
            },
            ftl: FtlConfig { iu_bytes: 4096, gc_threshold_blocks: 3 },
        }
    }
}
