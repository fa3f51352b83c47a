//! One drive of any kind behind the same interface: the system holds `Drive`s, so a NAND SSD
//! and an in-place drive can sit side by side behind one host. Dispatch is a `match` on the
//! kind (no virtual calls on the per-event path).

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::array::ArrayConfig;
use super::hdd::{Hdd, HddConfig, HddEvent};
use super::inplace::{InPlaceConfig, InPlaceDrive, InPlaceEvent};
use super::ssd::{precondition_watched, Precondition, Ssd, SsdConfig, SsdEvent};
use super::{BlockDevice, DeviceCtx, DeviceKind, DeviceReport, DeviceRequest, Wrap};
use crate::engine::Time;
use crate::error::{ConfigError, SimError};
use crate::progress::Watch;

/// A device's description, tagged by its kind: a drive, or an array of drives.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DeviceConfig {
    NandSsd(SsdConfig),
    InPlace(InPlaceConfig),
    Hdd(HddConfig),
    Array(ArrayConfig),
}

impl DeviceConfig {
    pub fn name(&self) -> &str {
        match self {
            DeviceConfig::NandSsd(c) => &c.name,
            DeviceConfig::InPlace(c) => &c.name,
            DeviceConfig::Hdd(c) => &c.name,
            DeviceConfig::Array(c) => c.level.label(),
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        match self {
            DeviceConfig::NandSsd(c) => c.capacity_bytes,
            DeviceConfig::InPlace(c) => c.capacity_bytes,
            DeviceConfig::Hdd(c) => c.capacity_bytes,
            DeviceConfig::Array(c) => c.capacity_bytes(),
        }
    }

    pub fn kind(&self) -> DeviceKind {
        match self {
            DeviceConfig::NandSsd(_) => DeviceKind::NandSsd,
            DeviceConfig::InPlace(_) => DeviceKind::InPlace,
            DeviceConfig::Hdd(_) => DeviceKind::Hdd,
            DeviceConfig::Array(_) => DeviceKind::Array,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            DeviceConfig::NandSsd(c) => c.validate(),
            DeviceConfig::InPlace(c) => c.validate(),
            DeviceConfig::Hdd(c) => c.validate(),
            DeviceConfig::Array(c) => c.validate(),
        }
    }
}

// A drive is built once and stepped by every event: its model stays inline, not behind a box.
#[allow(clippy::large_enum_variant)]
pub enum Drive {
    NandSsd(Ssd),
    InPlace(InPlaceDrive),
    Hdd(Hdd),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DriveEvent {
    NandSsd(SsdEvent),
    InPlace(InPlaceEvent),
    Hdd(HddEvent),
}

impl Drive {
    /// Build a drive whose internal randomness comes from `seed`, in the state `pre` leaves
    /// it (written in place, an in-place drive or a hard disk has no used state to reach:
    /// `pre` changes nothing there).
    pub fn build(cfg: &DeviceConfig, seed: u64, pre: Precondition) -> Result<Drive, ConfigError> {
        Drive::build_watched(cfg, seed, pre, &mut Watch::off(), "").map_err(|e| match e {
            SimError::Device(e) => e,
            e => unreachable!("only a configuration error can stop an unwatched build: {e}"),
        })
    }

    /// [`Drive::build`], telling `watch` how its preconditioning goes (as drive `name`).
    pub fn build_watched(
        cfg: &DeviceConfig,
        seed: u64,
        pre: Precondition,
        watch: &mut Watch,
        name: &str,
    ) -> Result<Drive, SimError> {
        Ok(match cfg {
            DeviceConfig::NandSsd(c) => {
                let mut ssd = Ssd::new(c.clone(), seed).map_err(SimError::Device)?;
                precondition_watched(&mut ssd, pre, seed, watch, name)?;
                Drive::NandSsd(ssd)
            }
            DeviceConfig::InPlace(c) => Drive::InPlace(InPlaceDrive::new(c.clone(), seed).map_err(SimError::Device)?),
            DeviceConfig::Hdd(c) => Drive::Hdd(Hdd::new(c.clone(), seed).map_err(SimError::Device)?),
            DeviceConfig::Array(_) => {
                return Err(SimError::Device(ConfigError::new(
                    "kind",
                    "an array is not a drive (build it as a target)".into(),
                )))
            }
        })
    }
}


impl BlockDevice for Drive {
    type Event = DriveEvent;

    fn capacity(&self) -> u64 {
        match self {
            Drive::NandSsd(d) => d.capacity(),
            Drive::InPlace(d) => d.capacity(),
            Drive::Hdd(d) => d.capacity(),
        }
    }

    fn queue_depth(&self) -> u32 {
        match self {
            Drive::NandSsd(d) => d.queue_depth(),
            Drive::InPlace(d) => d.queue_depth(),
            Drive::Hdd(d) => d.queue_depth(),
        }
    }

    fn rotational(&self) -> bool {
        matches!(self, Drive::Hdd(_))
    }

    #[inline]
    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<DriveEvent>) {
        match self {
            Drive::NandSsd(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::NandSsd)),
            Drive::InPlace(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::InPlace)),
            Drive::Hdd(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::Hdd)),
        }
    }

    #[inline]
    fn handle(&mut self, event: DriveEvent, ctx: &mut impl DeviceCtx<DriveEvent>) {
        match (self, event) {
            (Drive::NandSsd(d), DriveEvent::NandSsd(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::NandSsd)),
            (Drive::InPlace(d), DriveEvent::InPlace(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::InPlace)),
            (Drive::Hdd(d), DriveEvent::Hdd(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::Hdd)),
            (_, e) => panic!("event {e:?} delivered to a drive of another kind"),
        }
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        match self {
            Drive::NandSsd(d) => d.internal_report(at),
            Drive::InPlace(d) => d.internal_report(at),
            Drive::Hdd(d) => d.internal_report(at),
        }
    }

    fn end_run(&mut self, now: Time) {
        match self {
            Drive::NandSsd(d) => d.end_run(now),
            Drive::InPlace(d) => d.end_run(now),
            Drive::Hdd(d) => d.end_run(now),
        }
    }

    fn has_internal_work(&self) -> bool {
        match self {
            Drive::NandSsd(d) => d.has_internal_work(),
            Drive::InPlace(d) => d.has_internal_work(),
            Drive::Hdd(d) => d.has_internal_work(),
        }
    }

    fn begin_run(&mut self) -> Time {
        match self {
            Drive::NandSsd(d) => d.begin_run(),
            Drive::InPlace(d) => d.begin_run(),
            Drive::Hdd(d) => d.begin_run(),
        }
    }
}
