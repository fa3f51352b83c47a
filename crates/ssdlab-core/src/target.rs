//! A target of the system: one drive, or an array over drives. Dispatch is a `match` on the
//! kind, as for drives; systems of one kind throughout are run without it (see
//! [`crate::sim::run`]).

use crate::array::{Array, ArrayConfig, ArrayEvent};
use crate::device::ssd::ftl::Ftl;
use crate::device::ssd::precondition::tell_filled;
use crate::device::ssd::{Precondition, SsdConfig};
use crate::device::{BlockDevice, DeviceConfig, DeviceCtx, DeviceReport, DeviceRequest, Drive, DriveEvent, Wrap};
use crate::engine::rng::derive_seed;
use crate::engine::Time;
use crate::error::{ConfigError, SimError};
use crate::progress::Watch;
use crate::sim::DeviceResult;

// Each target is built once; a drive stays inline, as in `Drive`.
#[allow(clippy::large_enum_variant)]
pub enum TargetDevice {
    Drive(Drive),
    Array(Box<Array<Drive>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetEvent {
    Drive(DriveEvent),
    Array(ArrayEvent<DriveEvent>),
}

/// Build an array's members and spares with `build` (each from its own seed, in its own
/// starting state) and the array over them.
pub fn build_array<D: BlockDevice>(
    cfg: &ArrayConfig,
    seed: u64,
    hz: u32,
    build: impl Fn(&DeviceConfig, u64, Precondition) -> Result<D, ConfigError>,
) -> Result<Array<D>, ConfigError> {
    build_array_watched(cfg, seed, hz, |_, c, s, p| build(c, s, p).map_err(SimError::Device)).map_err(|e| match e {
        SimError::Device(e) => e,
        e => unreachable!("the member builder only fails on configuration: {e}"),
    })
}

/// [`build_array`] with a builder that is told each member's name and may fail otherwise
/// than on configuration (its preconditioning stopped).
pub fn build_array_watched<D: BlockDevice>(
    cfg: &ArrayConfig,
    seed: u64,
    hz: u32,
    mut build: impl FnMut(&str, &DeviceConfig, u64, Precondition) -> Result<D, SimError>,
) -> Result<Array<D>, SimError> {
    cfg.validate().map_err(SimError::Device)?;
    let mut devices = Vec::with_capacity(cfg.members.len() + cfg.spares.len());
    for (i, m) in cfg.members.iter().chain(&cfg.spares).enumerate() {
        let device = build(&m.name, &m.device, derive_seed(seed, "member", i as u64), m.precondition).map_err(|e| match e {
            SimError::Device(e) => SimError::Device(ConfigError::new(&format!("members.{}.{}", m.name, e.key), e.message)),
            e => e,
        })?;
        devices.push(device);
    }
    Array::new(cfg, devices, hz).map_err(SimError::Device)
}

/// Members of one array filled in order: a sequential fill does not depend on the seed, so
/// each drive description is filled once and its mapping copied to the drives like it (a
/// 61.44 TB member takes tens of seconds to fill, its copy a fraction of a second).
#[derive(Default)]
struct SequentialFills {
    done: Vec<(SsdConfig, Ftl)>,
}

impl SequentialFills {
    fn build(&mut self, cfg: &DeviceConfig, seed: u64, pre: Precondition, watch: &mut Watch, name: &str) -> Result<Drive, SimError> {
        let DeviceConfig::NandSsd(c) = cfg else { return Drive::build_watched(cfg, seed, pre, watch, name) };
        if pre != Precondition::Sequential {
            return Drive::build_watched(cfg, seed, pre, watch, name);
        }
        if let Some((_, ftl)) = self.done.iter().find(|(done, _)| done == c) {
            let mut drive = Drive::build_watched(cfg, seed, Precondition::None, watch, name)?;
            let Drive::NandSsd(ssd) = &mut drive else { unreachable!("built from an SSD description") };
            *ssd.ftl_mut() = ftl.clone();
            tell_filled(watch, name)?;
            return Ok(drive);
        }
        let drive = Drive::build_watched(cfg, seed, pre, watch, name)?;
        let Drive::NandSsd(ssd) = &drive else { unreachable!("built from an SSD description") };
        self.done.push((c.clone(), ssd.ftl().clone()));
        Ok(drive)
    }
}

impl TargetDevice {
    /// Build a target; `pre` applies to a drive (an array's members carry their own).
    pub fn build(cfg: &DeviceConfig, seed: u64, pre: Precondition, hz: u32) -> Result<TargetDevice, ConfigError> {
        TargetDevice::build_watched(cfg, seed, pre, hz, &mut Watch::off(), "").map_err(|e| match e {
            SimError::Device(e) => e,
            e => unreachable!("only a configuration error can stop an unwatched build: {e}"),
        })
    }

    /// [`TargetDevice::build`], telling `watch` how the preconditioning of its drives goes
    /// (the target is called `name`).
    pub fn build_watched(
        cfg: &DeviceConfig,
        seed: u64,
        pre: Precondition,
        hz: u32,
        watch: &mut Watch,
        name: &str,
    ) -> Result<TargetDevice, SimError> {
        match cfg {
            DeviceConfig::Array(a) => {
                if pre != Precondition::None {
                    return Err(SimError::Device(ConfigError::new(
                        "precondition",
                        "an array is preconditioned through its members' own precondition".into(),
                    )));
                }
                let mut filled = SequentialFills::default();
                let array = build_array_watched(a, seed, hz, |member, c, s, p| {
                    filled.build(c, s, p, watch, &format!("{name}/{member}"))
                })?;
                Ok(TargetDevice::Array(Box::new(array)))
            }
            drive => Ok(TargetDevice::Drive(Drive::build_watched(drive, seed, pre, watch, name)?)),
        }
    }
}

macro_rules! each {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            TargetDevice::Drive($d) => $e,
            TargetDevice::Array($d) => $e,
        }
    };
}

impl BlockDevice for TargetDevice {
    type Event = TargetEvent;

    fn capacity(&self) -> u64 {
        each!(self, d => d.capacity())
    }

    fn queue_depth(&self) -> u32 {
        each!(self, d => d.queue_depth())
    }

    fn rotational(&self) -> bool {
        each!(self, d => d.rotational())
    }

    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<TargetEvent>) {
        match self {
            TargetDevice::Drive(d) => d.submit(req, &mut Wrap::new(ctx, TargetEvent::Drive)),
            TargetDevice::Array(a) => a.submit(req, &mut Wrap::new(ctx, TargetEvent::Array)),
        }
    }

    fn handle(&mut self, event: TargetEvent, ctx: &mut impl DeviceCtx<TargetEvent>) {
        match (self, event) {
            (TargetDevice::Drive(d), TargetEvent::Drive(e)) => d.handle(e, &mut Wrap::new(ctx, TargetEvent::Drive)),
            (TargetDevice::Array(a), TargetEvent::Array(e)) => a.handle(e, &mut Wrap::new(ctx, TargetEvent::Array)),
            (_, e) => panic!("event {e:?} delivered to a target of another kind"),
        }
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        each!(self, d => d.internal_report(at))
    }

    fn start_run(&mut self, ctx: &mut impl DeviceCtx<TargetEvent>) {
        match self {
            TargetDevice::Drive(d) => d.start_run(&mut Wrap::new(ctx, TargetEvent::Drive)),
            TargetDevice::Array(a) => a.start_run(&mut Wrap::new(ctx, TargetEvent::Array)),
        }
    }

    fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        each!(self, d => d.member_results(at))
    }

    fn end_run(&mut self, now: Time) {
        each!(self, d => d.end_run(now))
    }

    fn rebuild_done(&self) -> Option<bool> {
        each!(self, d => d.rebuild_done())
    }

    fn rebuild_progress(&self) -> Option<(u64, u64)> {
        each!(self, d => d.rebuild_progress())
    }

    fn data_lost(&self) -> Option<String> {
        each!(self, d => d.data_lost())
    }

    fn has_internal_work(&self) -> bool {
        each!(self, d => d.has_internal_work())
    }

    fn begin_run(&mut self) -> Time {
        each!(self, d => d.begin_run())
    }
}
