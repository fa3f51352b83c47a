//! The part of a drive every command passes: the host link and the controller's cores.
//! Shared by the NAND SSD and the in-place (3D XPoint) drive.

use rand::Rng as _;
use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::io::Op;
use crate::engine::rng::{stream, Rng};
use crate::engine::{FifoServer, MultiServer, Time, TransferRate};
use crate::error::ConfigError;

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
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

#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
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

/// Check what every drive has: a capacity, a queue, a link that moves data and a controller.
/// Errors name the key.
pub fn validate_front(
    capacity_bytes: u64,
    queue_depth: u32,
    interface: &HostInterface,
    controller: &ControllerConfig,
) -> Result<(), ConfigError> {
    let err = |key: &str, msg: String| Err(ConfigError::new(key, msg));
    if capacity_bytes == 0 {
        return err("capacity_bytes", "must be greater than zero".into());
    }
    if queue_depth == 0 {
        return err("queue_depth", "must be greater than zero".into());
    }
    if controller.cores == 0 {
        return err("controller.cores", "must be greater than zero".into());
    }
    if !(0.0..=1.0).contains(&controller.busy_cv) {
        return err("controller.busy_cv", "must be between 0 and 1".into());
    }
    match *interface {
        HostInterface::Sata { gbit_per_s, efficiency } => {
            if !(gbit_per_s > 0.0 && gbit_per_s.is_finite()) {
                return err("interface.gbit_per_s", "must be a positive rate".into());
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
    // Every transfer divides by the payload rate: one that rounds to nothing is an error.
    if interface.bytes_per_s() == 0 {
        let key = if matches!(interface, HostInterface::Sata { .. }) { "interface.gbit_per_s" } else { "interface.efficiency" };
        return err(key, "the link's payload rate rounds to 0 bytes/s".into());
    }
    Ok(())
}


pub struct FrontEnd {
    cfg: ControllerConfig,
    link_rate: TransferRate,
    half_duplex: bool,
    /// [host→device, device→host]; a half-duplex link (SATA) uses index 0 for both.
    links: [FifoServer; 2],
    cores: MultiServer,
    /// Controller time per command varies: a fixed firmware path plus an exponentially
    /// distributed extra; this is the extra's share of the mean (the cv) and its stream.
    busy_jitter: Option<(f64, Rng)>,
}

impl FrontEnd {
    pub fn new(interface: &HostInterface, cfg: &ControllerConfig, seed: u64) -> FrontEnd {
        let cv = cfg.busy_cv;
        FrontEnd {
            link_rate: TransferRate::new(interface.bytes_per_s()),
            half_duplex: interface.half_duplex(),
            links: [FifoServer::default(), FifoServer::default()],
            cores: MultiServer::new(cfg.cores as usize),
            busy_jitter: (cv > 0.0).then(|| (cv, stream(seed, "ssd-controller", 0))),
            cfg: cfg.clone(),
        }
    }

    fn busy_for(&mut self, op: Op) -> Time {
        let c = &self.cfg;
        let mean = match op {
            Op::Read => c.read_busy_ns,
            Op::Write => c.write_busy_ns,
            Op::Trim => c.trim_busy_ns,
            Op::Flush => c.flush_busy_ns,
        };
        match &mut self.busy_jitter {
            // mean·(1−cv) fixed + Exp(mean·cv): the mean is kept and the spread is cv·mean.
            Some((cv, rng)) => {
                let u: f64 = rng.gen();
                let extra = -(1.0 - u).ln() * *cv;
                (mean as f64 * (1.0 - *cv + extra)) as Time
            }
            None => mean,
        }
    }

    /// A command arriving at `now`: when the controller is done with it (core time, then
    /// the pipelined latency).
    pub fn command(&mut self, now: Time, op: Op) -> Time {
        let busy = self.busy_for(op);
        self.cores.reserve(now, busy) + self.cfg.latency_ns
    }

    /// Data from the host into the drive: when the transfer ends.
    pub fn from_host(&mut self, now: Time, bytes: u64) -> Time {
        let ns = self.link_rate.ns(bytes);
        self.links[0].reserve(now, ns)
    }

    /// Data from the drive to the host.
    pub fn to_host(&mut self, now: Time, bytes: u64) -> Time {
        let link = if self.half_duplex { 0 } else { 1 };
        let ns = self.link_rate.ns(bytes);
        self.links[link].reserve(now, ns)
    }

    /// When the links and controller cores have finished what they were given.
    pub fn busy_until(&self) -> Time {
        self.links.iter().map(|l| l.busy_until()).max().unwrap_or(0).max(self.cores.busy_until())
    }

    pub fn controller_busy_by(&self, at: Time) -> Time {
        self.cores.busy_by(at)
    }

    pub fn cores(&self) -> u32 {
        self.cores.len() as u32
    }
}
