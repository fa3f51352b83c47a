//! The part of a drive every command passes: the host link and the controller's cores.
//! Shared by the NAND SSD and the in-place (3D XPoint) drive.

use rand::Rng as _;

use crate::device::ssd::config::{ControllerConfig, HostInterface};
use crate::device::Op;
use crate::engine::rng::{stream, Rng};
use crate::engine::{transfer_ns, FifoServer, MultiServer, Time};

pub struct FrontEnd {
    cfg: ControllerConfig,
    link_rate: u64,
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
            link_rate: interface.bytes_per_s(),
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
        self.links[0].reserve(now, transfer_ns(bytes, self.link_rate))
    }

    /// Data from the drive to the host.
    pub fn to_host(&mut self, now: Time, bytes: u64) -> Time {
        let link = if self.half_duplex { 0 } else { 1 };
        self.links[link].reserve(now, transfer_ns(bytes, self.link_rate))
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
