//! One drive of any kind behind the same interface: the system holds `AnyDrive`s, so a NAND SSD
//! and an in-place drive can sit side by side behind one host. Dispatch is a `match` on the
//! kind (no virtual calls on the per-event path).

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use super::hdd::{Hdd, HddConfig, HddEvent};
use super::inplace::{InPlaceConfig, InPlaceDrive, InPlaceEvent};
use super::ssd::ftl::Ftl;
use super::ssd::{precondition_kept, Precondition, Ssd, SsdConfig, SsdEvent, StateCache};
use super::{BlockDevice, DeviceCtx, DeviceRequest, Drive, Volatile, Wrap};
use crate::report::{DeviceKind, DeviceReport};
use crate::engine::Time;
use crate::error::{ConfigError, SimError};
use crate::progress::Watch;

/// A drive's description, tagged by its kind (an array's members are described so too).
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum DriveConfig {
    NandSsd(SsdConfig),
    InPlace(InPlaceConfig),
    Hdd(HddConfig),
}

impl DriveConfig {
    pub fn name(&self) -> &str {
        match self {
            DriveConfig::NandSsd(c) => &c.name,
            DriveConfig::InPlace(c) => &c.name,
            DriveConfig::Hdd(c) => &c.name,
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        match self {
            DriveConfig::NandSsd(c) => c.capacity_bytes,
            DriveConfig::InPlace(c) => c.capacity_bytes,
            DriveConfig::Hdd(c) => c.capacity_bytes,
        }
    }

    pub fn kind(&self) -> DeviceKind {
        match self {
            DriveConfig::NandSsd(_) => DeviceKind::NandSsd,
            DriveConfig::InPlace(_) => DeviceKind::InPlace,
            DriveConfig::Hdd(_) => DeviceKind::Hdd,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            DriveConfig::NandSsd(c) => c.validate(),
            DriveConfig::InPlace(c) => c.validate(),
            DriveConfig::Hdd(c) => c.validate(),
        }
    }
}

// A drive is built once and stepped by every event: its model stays inline, not behind a box.
#[allow(clippy::large_enum_variant)]
pub enum AnyDrive {
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

impl AnyDrive {
    /// Build a drive whose internal randomness comes from `seed`, in the state `pre` leaves
    /// it (written in place, an in-place drive or a hard disk has no used state to reach:
    /// `pre` changes nothing there).
    pub fn build(cfg: &DriveConfig, seed: u64, pre: Precondition) -> Result<AnyDrive, ConfigError> {
        AnyDrive::build_watched(cfg, seed, pre, &mut Watch::off(), "", None).map_err(|e| match e {
            SimError::Device(e) => e,
            e => unreachable!("only a configuration error can stop an unwatched build: {e}"),
        })
    }

    /// [`AnyDrive::build`], telling `watch` how its preconditioning goes (as drive `name`);
    /// an SSD's preconditioned state is read from `states`, or kept there, where it can be.
    pub fn build_watched(
        cfg: &DriveConfig,
        seed: u64,
        pre: Precondition,
        watch: &mut Watch,
        name: &str,
        states: Option<&StateCache>,
    ) -> Result<AnyDrive, SimError> {
        Ok(match cfg {
            DriveConfig::NandSsd(c) => {
                let mut ssd = Ssd::new(c.clone(), seed).map_err(SimError::Device)?;
                precondition_kept(&mut ssd, c, pre, seed, watch, name, states)?;
                AnyDrive::NandSsd(ssd)
            }
            DriveConfig::InPlace(c) => AnyDrive::InPlace(InPlaceDrive::new(c.clone(), seed).map_err(SimError::Device)?),
            DriveConfig::Hdd(c) => AnyDrive::Hdd(Hdd::new(c.clone(), seed).map_err(SimError::Device)?),
        })
    }
}


impl Drive for AnyDrive {
    fn ftl(&self) -> Option<&Ftl> {
        match self {
            AnyDrive::NandSsd(d) => Some(d.ftl()),
            AnyDrive::InPlace(_) | AnyDrive::Hdd(_) => None,
        }
    }
    fn ftl_mut(&mut self) -> Option<&mut Ftl> {
        match self {
            AnyDrive::NandSsd(d) => Some(d.ftl_mut()),
            AnyDrive::InPlace(_) | AnyDrive::Hdd(_) => None,
        }
    }
}

impl BlockDevice for AnyDrive {
    type Event = DriveEvent;

    fn capacity(&self) -> u64 {
        match self {
            AnyDrive::NandSsd(d) => d.capacity(),
            AnyDrive::InPlace(d) => d.capacity(),
            AnyDrive::Hdd(d) => d.capacity(),
        }
    }

    fn queue_depth(&self) -> u32 {
        match self {
            AnyDrive::NandSsd(d) => d.queue_depth(),
            AnyDrive::InPlace(d) => d.queue_depth(),
            AnyDrive::Hdd(d) => d.queue_depth(),
        }
    }

    fn rotational(&self) -> bool {
        matches!(self, AnyDrive::Hdd(_))
    }

    #[inline]
    fn submit(&mut self, req: DeviceRequest, ctx: &mut impl DeviceCtx<DriveEvent>) {
        match self {
            AnyDrive::NandSsd(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::NandSsd)),
            AnyDrive::InPlace(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::InPlace)),
            AnyDrive::Hdd(d) => d.submit(req, &mut Wrap::new(ctx, DriveEvent::Hdd)),
        }
    }

    #[inline]
    fn handle(&mut self, event: DriveEvent, ctx: &mut impl DeviceCtx<DriveEvent>) {
        match (self, event) {
            (AnyDrive::NandSsd(d), DriveEvent::NandSsd(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::NandSsd)),
            (AnyDrive::InPlace(d), DriveEvent::InPlace(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::InPlace)),
            (AnyDrive::Hdd(d), DriveEvent::Hdd(e)) => d.handle(e, &mut Wrap::new(ctx, DriveEvent::Hdd)),
            (_, e) => panic!("event {e:?} delivered to a drive of another kind"),
        }
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        match self {
            AnyDrive::NandSsd(d) => d.internal_report(at),
            AnyDrive::InPlace(d) => d.internal_report(at),
            AnyDrive::Hdd(d) => d.internal_report(at),
        }
    }

    fn end_run(&mut self, now: Time) {
        match self {
            AnyDrive::NandSsd(d) => d.end_run(now),
            AnyDrive::InPlace(d) => d.end_run(now),
            AnyDrive::Hdd(d) => d.end_run(now),
        }
    }

    fn has_internal_work(&self) -> bool {
        match self {
            AnyDrive::NandSsd(d) => d.has_internal_work(),
            AnyDrive::InPlace(d) => d.has_internal_work(),
            AnyDrive::Hdd(d) => d.has_internal_work(),
        }
    }

    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        match self {
            AnyDrive::NandSsd(d) => d.lay_out(runs),
            AnyDrive::InPlace(d) => d.lay_out(runs),
            AnyDrive::Hdd(d) => d.lay_out(runs),
        }
    }

    fn begin_run(&mut self) -> Time {
        match self {
            AnyDrive::NandSsd(d) => d.begin_run(),
            AnyDrive::InPlace(d) => d.begin_run(),
            AnyDrive::Hdd(d) => d.begin_run(),
        }
    }

    fn volatile(&self) -> Volatile {
        match self {
            AnyDrive::NandSsd(d) => d.volatile(),
            AnyDrive::InPlace(d) => d.volatile(),
            AnyDrive::Hdd(d) => d.volatile(),
        }
    }

    fn lost_ranges(&self) -> Option<Vec<super::LostRange>> {
        match self {
            AnyDrive::NandSsd(d) => d.lost_ranges(),
            AnyDrive::InPlace(d) => d.lost_ranges(),
            AnyDrive::Hdd(d) => d.lost_ranges(),
        }
    }
}
