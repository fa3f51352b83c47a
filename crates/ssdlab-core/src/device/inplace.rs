//! A drive whose media is written in place (3D XPoint, e.g. Intel Optane): no erase, no
//! garbage collection, no mapping table and no DRAM write buffer. Addresses are striped over
//! the dies in access units; a read senses and transfers each unit, a write transfers and
//! programs each unit, and the request completes when all its units are done.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::device::frontend::{validate_front, ControllerConfig, FrontEnd, HostInterface};
use crate::device::thermal::{Thermal, ThermalConfig};
use crate::device::{BlockDevice, DeviceCtx, RequestTable, Drive};
use crate::report::{DeviceKind, DeviceReport};
use crate::io::{DeviceRequest, Op, Tag};
use crate::engine::{transfer_ns, FifoServer, Time};
use crate::error::ConfigError;

/// The media of an in-place drive: dies on channels, each reading or writing one access unit
/// at a time. There are no pages, blocks, erases or spare area to describe.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InPlaceMedia {
    pub channels: u32,
    pub dies_per_channel: u32,
    /// Bytes read or written by one media access; addresses stripe over the dies in these.
    pub unit_bytes: u64,
    pub read_ns: Time,
    pub write_ns: Time,
    /// Bus rate of one channel, bytes per second.
    pub channel_bytes_per_s: u64,
}

/// Resolved parameters of an in-place drive (bytes, ns).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct InPlaceConfig {
    pub name: String,
    pub capacity_bytes: u64,
    pub interface: HostInterface,
    pub queue_depth: u32,
    pub controller: ControllerConfig,
    pub media: InPlaceMedia,
    #[serde(default)]
    pub thermal: Option<ThermalConfig>,
}

impl InPlaceConfig {
    pub fn dies(&self) -> u32 {
        self.media.channels * self.media.dies_per_channel
    }

    /// Errors name the offending key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        validate_front(self.capacity_bytes, self.queue_depth, &self.interface, &self.controller)?;
        let m = &self.media;
        for (key, v) in [
            ("media.channels", m.channels as u64),
            ("media.dies_per_channel", m.dies_per_channel as u64),
            ("media.unit_bytes", m.unit_bytes),
            ("media.read_ns", m.read_ns),
            ("media.write_ns", m.write_ns),
            ("media.channel_bytes_per_s", m.channel_bytes_per_s),
        ] {
            if v == 0 {
                return Err(ConfigError::new(key, "must be greater than zero".into()));
            }
        }
        if let Some(t) = &self.thermal {
            t.validate()?;
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InPlaceEvent {
    ControllerDone { tag: Tag },
    /// A die finished sensing a unit for a read.
    Sensed { tag: Tag, die: u32 },
    /// A read unit crossed its channel to the controller.
    ReadMoved { tag: Tag },
    /// A write unit crossed its channel to its die.
    WriteMoved { tag: Tag, die: u32 },
    /// A die finished writing a unit.
    Written { tag: Tag },
    LinkDone { tag: Tag },
    /// The controller reads its temperature sensor.
    ThermalSample,
}

pub struct InPlaceDrive {
    cfg: InPlaceConfig,
    front: FrontEnd,
    unit: u64,
    dies: Vec<FifoServer>,
    channels: Vec<FifoServer>,
    reqs: RequestTable,
    host_bytes_written: u64,
    host_bytes_read: u64,
    media_bytes_written: u64,
    media_bytes_read: u64,
    thermal: Option<Thermal>,
    /// When the host finished the last run (its clock reached at least this far).
    run_ended_at: Time,
}

impl InPlaceDrive {
    pub fn new(cfg: InPlaceConfig, seed: u64) -> Result<InPlaceDrive, ConfigError> {
        cfg.validate()?;
        Ok(InPlaceDrive {
            front: FrontEnd::new(&cfg.interface, &cfg.controller, seed),
            unit: cfg.media.unit_bytes,
            dies: vec![FifoServer::default(); cfg.dies() as usize],
            channels: vec![FifoServer::default(); cfg.media.channels as usize],
            reqs: RequestTable::default(),
            host_bytes_written: 0,
            host_bytes_read: 0,
            media_bytes_written: 0,
            media_bytes_read: 0,
            thermal: cfg.thermal.clone().map(|t| Thermal::new(t, cfg.dies())),
            run_ended_at: 0,
            cfg,
        })
    }

    /// Access units a request touches, and the die each lives on (striped unit by unit).
    fn units(&self, offset: u64, len: u64) -> impl Iterator<Item = u32> + '_ {
        let first = offset / self.unit;
        let last = (offset + len).div_ceil(self.unit);
        let dies = self.dies.len() as u64;
        (first..last).map(move |u| (u % dies) as u32)
    }

    fn channel_of(&self, die: u32) -> usize {
        (die % self.cfg.media.channels) as usize
    }

    /// Put `ns` of media work on a die; a throttled drive spaces its operations out.
    fn occupy_die(&mut self, die: u32, now: Time, ns: Time) -> Time {
        let ns = self.thermal.as_mut().map_or(ns, |t| t.occupy(ns));
        self.dies[die as usize].reserve(now, ns)
    }

    fn xfer(&self) -> Time {
        transfer_ns(self.unit, self.cfg.media.channel_bytes_per_s)
    }
}

impl Drive for InPlaceDrive {}

impl BlockDevice for InPlaceDrive {
    type Event = InPlaceEvent;

    fn capacity(&self) -> u64 {
        self.cfg.capacity_bytes
    }

    fn queue_depth(&self) -> u32 {
        self.cfg.queue_depth
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<InPlaceEvent>) {
        self.reqs.insert(&req);
        if let Some(at) = self.thermal.as_mut().and_then(|t| t.first_sample(ctx.now())) {
            ctx.schedule(at, InPlaceEvent::ThermalSample);
        }
        let done = self.front.command(ctx.now(), req.op);
        ctx.schedule(done, InPlaceEvent::ControllerDone { tag: req.tag });
    }

    fn handle(&mut self, event: InPlaceEvent, ctx: &mut impl DeviceCtx<InPlaceEvent>) {
        let now = ctx.now();
        match event {
            InPlaceEvent::ControllerDone { tag } => {
                let r = self.reqs[tag as usize];
                match r.op.expect("request state") {
                    Op::Read => {
                        let dies: Vec<u32> = self.units(r.offset, r.len).collect();
                        self.reqs[tag as usize].outstanding = dies.len() as u32;
                        for die in dies {
                            let done = self.occupy_die(die, now, self.cfg.media.read_ns);
                            self.media_bytes_read += self.unit;
                            ctx.schedule(done, InPlaceEvent::Sensed { tag, die });
                        }
                    }
                    Op::Write => {
                        let done = self.front.from_host(now, r.len);
                        ctx.schedule(done, InPlaceEvent::LinkDone { tag });
                    }
                    Op::Trim | Op::Flush => ctx.complete(tag), // nothing to erase, nothing buffered
                }
            }
            InPlaceEvent::Sensed { tag, die } => {
                let (ch, xfer) = (self.channel_of(die), self.xfer());
                let done = self.channels[ch].reserve(now, xfer);
                ctx.schedule(done, InPlaceEvent::ReadMoved { tag });
            }
            InPlaceEvent::ReadMoved { tag } => {
                let r = &mut self.reqs[tag as usize];
                r.outstanding -= 1;
                if r.outstanding == 0 {
                    let len = r.len;
                    let done = self.front.to_host(now, len);
                    ctx.schedule(done, InPlaceEvent::LinkDone { tag });
                }
            }
            InPlaceEvent::LinkDone { tag } => {
                let r = self.reqs[tag as usize];
                if r.op == Some(Op::Read) {
                    self.host_bytes_read += r.len;
                    ctx.complete(tag);
                    return;
                }
                self.host_bytes_written += r.len;
                let dies: Vec<u32> = self.units(r.offset, r.len).collect();
                self.reqs[tag as usize].outstanding = dies.len() as u32;
                for die in dies {
                    let (ch, xfer) = (self.channel_of(die), self.xfer());
                    let done = self.channels[ch].reserve(now, xfer);
                    ctx.schedule(done, InPlaceEvent::WriteMoved { tag, die });
                }
            }
            InPlaceEvent::WriteMoved { tag, die } => {
                let done = self.occupy_die(die, now, self.cfg.media.write_ns);
                self.media_bytes_written += self.unit;
                ctx.schedule(done, InPlaceEvent::Written { tag });
            }
            InPlaceEvent::ThermalSample => {
                if let Some(t) = &mut self.thermal {
                    ctx.schedule(t.sample(now), InPlaceEvent::ThermalSample);
                }
            }
            InPlaceEvent::Written { tag } => {
                let r = &mut self.reqs[tag as usize];
                r.outstanding -= 1;
                if r.outstanding == 0 {
                    ctx.complete(tag);
                }
            }
        }
    }

    fn end_run(&mut self, now: Time) {
        self.run_ended_at = now;
    }

    fn has_internal_work(&self) -> bool {
        false // all of its work belongs to host requests
    }

    fn volatile(&self) -> super::Volatile {
        super::Volatile::default() // no buffer: a write completes when it is on the media
    }

    fn lost_ranges(&self) -> Option<Vec<super::LostRange>> {
        Some(Vec::new())
    }

    fn begin_run(&mut self) -> Time {
        if let Some(t) = &mut self.thermal {
            t.begin_run();
        }
        let servers = self.dies.iter().chain(&self.channels).map(|s| s.busy_until()).max().unwrap_or(0);
        servers.max(self.front.busy_until()).max(self.run_ended_at)
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        DeviceReport {
            kind: DeviceKind::InPlace,
            host_bytes_written: self.host_bytes_written,
            host_bytes_read: self.host_bytes_read,
            media_bytes_written: self.media_bytes_written,
            media_bytes_read: self.media_bytes_read,
            die_busy_ns: self.dies.iter().map(|d| d.busy_by(at)).sum(),
            dies: self.dies.len() as u32,
            channel_busy_ns: self.channels.iter().map(|c| c.busy_by(at)).collect(),
            controller_busy_ns: self.front.controller_busy_by(at),
            controller_cores: self.front.cores(),
            thermal: self.thermal.as_ref().map(|t| t.report(at)),
            nand: None,
            array: None,
            hdd: None,
            remap: None,
        }
    }
}
