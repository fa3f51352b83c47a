//! A target of the system: one drive, or an array over drives. Dispatch is a `match` on the
//! kind, as for drives; systems of one kind throughout are run without it (see
//! [`crate::sim::run`]).

use crate::array::{Array, ArrayConfig, ArrayEvent};
use crate::device::ssd::Precondition;
use crate::device::{BlockDevice, DeviceConfig, DeviceCtx, DeviceReport, DeviceRequest, Drive, DriveEvent, Wrap};
use crate::engine::rng::derive_seed;
use crate::engine::Time;
use crate::error::ConfigError;
use crate::sim::DeviceResult;

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
    cfg.validate()?;
    let devices = cfg
        .members
        .iter()
        .chain(&cfg.spares)
        .enumerate()
        .map(|(i, m)| {
            build(&m.device, derive_seed(seed, "member", i as u64), m.precondition)
                .map_err(|e| ConfigError::new(&format!("members.{}.{}", m.name, e.key), e.message))
        })
        .collect::<Result<Vec<_>, _>>()?;
    Array::new(cfg, devices, hz)
}

impl TargetDevice {
    /// Build a target; `pre` applies to a drive (an array's members carry their own).
    pub fn build(cfg: &DeviceConfig, seed: u64, pre: Precondition, hz: u32) -> Result<TargetDevice, ConfigError> {
        match cfg {
            DeviceConfig::Array(a) => {
                if pre != Precondition::None {
                    return Err(ConfigError::new(
                        "precondition",
                        "an array is preconditioned through its members' own precondition".into(),
                    ));
                }
                Ok(TargetDevice::Array(Box::new(build_array(a, seed, hz, Drive::build)?)))
            }
            drive => Ok(TargetDevice::Drive(Drive::build(drive, seed, pre)?)),
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

    fn has_internal_work(&self) -> bool {
        each!(self, d => d.has_internal_work())
    }

    fn begin_run(&mut self) -> Time {
        each!(self, d => d.begin_run())
    }
}
