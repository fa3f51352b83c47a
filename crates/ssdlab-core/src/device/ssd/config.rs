//! Resolved SSD parameters (bytes, ns). Profiles in TOML carry units and sources; the Python
//! layer resolves them into this shape. Unknown keys are rejected so a typo never passes.

pub use crate::device::frontend::{validate_front, ControllerConfig, HostInterface};
use crate::device::thermal::ThermalConfig;
use crate::engine::Time;
use crate::error::ConfigError;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct NandConfig {
    /// Bits stored per cell in native mode: 1 SLC, 2 MLC, 3 TLC, 4 QLC.
    #[serde(default = "two")]
    pub bits_per_cell: u32,
    /// Pages per plane programmed by one program operation (one-shot TLC 3, QLC 4).
    #[serde(default = "one_u32")]
    pub program_pages: u32,
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
    /// Multi-plane reads: reads on different planes of one die at the same page address
    /// share one sense (ONFI's multi-plane read), their data then crosses the channel one
    /// page after another. Off: a die senses one page at a time.
    #[serde(default)]
    pub multi_plane_read: bool,
}

fn one_u32() -> u32 {
    1
}
fn two() -> u32 {
    2
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum GcPolicy {
    /// The block with the fewest valid IUs.
    #[default]
    Greedy,
    /// Highest (1 − u)·age / 2u (Rosenblum & Ousterhout's LFS cleaner; Kawaguchi et al. for
    /// flash): prefers blocks that are both emptier and colder.
    CostBenefit,
}

#[derive(Clone, Copy, Debug, Deserialize, Serialize, PartialEq, Eq, Default, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum FoldPolicy {
    /// SLC data moves to native blocks only while the host is idle (or when space runs out).
    #[default]
    Idle,
    /// Also while the host writes, once the SLC cache is full.
    Pressure,
}

/// Part of the flash used one bit per cell: fast to program, a third (TLC) or a quarter (QLC)
/// of the capacity per block.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SlcCacheConfig {
    /// SLC capacity always available (bytes of user data it holds).
    pub static_bytes: u64,
    /// Extra SLC capacity borrowed from free user space; shrinks as the drive fills (it can
    /// never exceed the free user space divided by the bits per cell).
    pub dynamic_max_bytes: u64,
    pub read_ns: Time,
    pub program_ns: Time,
    pub erase_ns: Time,
    #[serde(default)]
    pub fold: FoldPolicy,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FtlConfig {
    /// Mapping granularity; host writes smaller than or misaligned to it are read-modify-write.
    pub iu_bytes: u64,
    /// Garbage collection runs on a die when its free blocks fall below this.
    pub gc_threshold_blocks: u32,
    #[serde(default)]
    pub gc_policy: GcPolicy,
    /// While the host is idle, collect garbage on dies with fewer free blocks than this
    /// (0 = no background GC).
    #[serde(default)]
    pub background_gc_blocks: u32,
    /// Relocate the least-worn block's data when a die's erase counts spread further than
    /// this (static wear levelling; 0 = off). Free blocks are always taken least-worn first.
    #[serde(default)]
    pub wear_leveling_spread: u32,
}

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
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
    /// Capacitors that program the write buffer when power fails (enterprise drives): a
    /// power cut loses nothing acknowledged.
    #[serde(default)]
    pub power_loss_protection: bool,
    pub nand: NandConfig,
    pub ftl: FtlConfig,
    #[serde(default)]
    pub slc_cache: Option<SlcCacheConfig>,
    /// Host idle time after which background work (SLC folding, background GC) starts.
    #[serde(default = "default_idle_after")]
    pub idle_after_ns: Time,
    /// Temperature and throttling; `None`: the drive never gets hot enough to matter.
    #[serde(default)]
    pub thermal: Option<ThermalConfig>,
}

fn default_idle_after() -> Time {
    5_000_000
}

impl SsdConfig {
    pub fn dies(&self) -> u32 {
        self.nand.channels * self.nand.dies_per_channel
    }

    /// Bytes one die programs at once in native mode: `program_pages` pages in every plane.
    pub fn program_unit_bytes(&self) -> u64 {
        self.nand.page_bytes * self.nand.planes_per_die as u64 * self.nand.program_pages as u64
    }

    /// Bytes one die programs at once in SLC mode: one page in every plane.
    pub fn slc_program_unit_bytes(&self) -> u64 {
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
        validate_front(self.capacity_bytes, self.queue_depth, &self.interface, &self.controller)?;
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
        ] {
            if v == 0 {
                return err(key, "must be greater than zero".into());
            }
        }
        if n.multi_plane_read && n.planes_per_die > 64 {
            return err("nand.planes_per_die", format!("at most 64 planes with multi-plane reads, got {}", n.planes_per_die));
        }
        if self.dies() > u16::MAX as u32 {
            return err("nand.dies_per_channel", format!("{} dies; at most {} are modelled", self.dies(), u16::MAX));
        }
        let iu = self.ftl.iu_bytes;
        if !iu.is_multiple_of(512) || !n.page_bytes.is_multiple_of(iu) {
            return err(
                "ftl.iu_bytes",
                format!("must be a multiple of 512 dividing the page size {}", n.page_bytes),
            );
        }
        if !self.capacity_bytes.is_multiple_of(iu) {
            return err("capacity_bytes", format!("must be a multiple of the IU ({iu} bytes)"));
        }
        if !(1..=4).contains(&n.bits_per_cell) {
            return err("nand.bits_per_cell", format!("1 (SLC) to 4 (QLC) expected, got {}", n.bits_per_cell));
        }
        if n.program_pages == 0 || !n.pages_per_block.is_multiple_of(n.program_pages) {
            return err(
                "nand.program_pages",
                format!("must divide pages_per_block ({}), got {}", n.pages_per_block, n.program_pages),
            );
        }
        if let Some(slc) = &self.slc_cache {
            if n.bits_per_cell < 2 {
                return err("slc_cache", "an SLC cache needs multi-bit cells (bits_per_cell >= 2)".into());
            }
            if !n.pages_per_block.is_multiple_of(n.bits_per_cell) {
                return err(
                    "nand.pages_per_block",
                    format!("must be a multiple of bits_per_cell ({}) for SLC mode", n.bits_per_cell),
                );
            }
            if slc.program_ns == 0 || slc.read_ns == 0 {
                return err(if slc.read_ns == 0 { "slc_cache.read_ns" } else { "slc_cache.program_ns" }, "SLC timings must be positive".into());
            }
        }
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        if self.ftl.gc_threshold_blocks < 2 {
            return err("ftl.gc_threshold_blocks", "must be at least 2 (GC needs a spare block)".into());
        }
        if n.read_ns == 0 || n.program_ns == 0 || n.erase_ns == 0 {
            let key = if n.read_ns == 0 { "nand.read_ns" } else if n.program_ns == 0 { "nand.program_ns" } else { "nand.erase_ns" };
            return err(key, "flash operations take time: must be greater than zero".into());
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
            power_loss_protection: false,
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
                bits_per_cell: 3,
                program_pages: 1,
                multi_plane_read: false,
            },
            ftl: FtlConfig {
                iu_bytes: 4096,
                gc_threshold_blocks: 3,
                gc_policy: GcPolicy::Greedy,
                background_gc_blocks: 0,
                wear_leveling_spread: 0,
            },
            slc_cache: None,
            idle_after_ns: default_idle_after(),
            thermal: None,
        }
    }
}
