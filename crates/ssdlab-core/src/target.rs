//! A target of the system: one drive, or an array over drives, as the system description
//! gives it ([`TargetSpec`], [`DeviceConfig`]) and as it runs ([`AnyTarget`]). Dispatch is
//! a `match` on the kind, as for drives; systems of one kind throughout are run without it
//! (see [`crate::sim::run`]).

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::array::{Array, ArrayConfig, ArrayEvent};
use crate::block::{QueueLimits, SchedulerConfig};
use crate::device::hdd::HddConfig;
use crate::device::inplace::InPlaceConfig;
use crate::device::ssd::ftl::Ftl;
use crate::device::ssd::precondition::tell_filled;
use crate::device::ssd::{Precondition, SsdConfig, StateCache};
use crate::device::{AnyDrive, BlockDevice, DeviceCtx, Drive, DriveConfig, DriveEvent, Wrap};
use crate::engine::rng::derive_seed;
use crate::engine::Time;
use crate::error::{ConfigError, SimError};
use crate::file::FileSystemSpec;
use crate::io::DeviceRequest;
use crate::progress::Watch;
use crate::remap::{Remap, RemapConfig, RemapEvent};
use crate::report::{DeviceKind, DeviceReport, DeviceResult};

/// One target device of the system: the name jobs select it by (fio's `filename=/dev/NAME`),
/// what it is, the state it starts in and its block queue's I/O scheduler.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct TargetSpec {
    pub name: String,
    pub device: DeviceConfig,
    #[serde(default)]
    pub precondition: Precondition,
    #[serde(default)]
    pub scheduler: SchedulerConfig,
    /// The block queue's own settings (merging, request size).
    #[serde(default)]
    pub queue: QueueLimits,
    /// The file system made on it, for jobs that work on files.
    #[serde(default)]
    pub filesystem: Option<FileSystemSpec>,
}


/// A target's description, tagged by its kind: a drive (as [`DriveConfig`] describes one), or
/// an array of drives.
#[derive(Clone, Debug, Deserialize, Serialize, PartialEq, JsonSchema)]
#[serde(tag = "kind", rename_all = "kebab-case")]
// A description read once per run and never held in bulk: its variants' sizes do not matter.
#[allow(clippy::large_enum_variant)]
pub enum DeviceConfig {
    NandSsd(SsdConfig),
    InPlace(InPlaceConfig),
    Hdd(HddConfig),
    Array(ArrayConfig),
    /// A write-remapping layer over one drive.
    Remap(RemapConfig),
}

impl From<DriveConfig> for DeviceConfig {
    fn from(d: DriveConfig) -> DeviceConfig {
        match d {
            DriveConfig::NandSsd(c) => DeviceConfig::NandSsd(c),
            DriveConfig::InPlace(c) => DeviceConfig::InPlace(c),
            DriveConfig::Hdd(c) => DeviceConfig::Hdd(c),
        }
    }
}

impl DeviceConfig {
    /// The drive it describes; None for an array.
    pub fn drive(&self) -> Option<DriveConfig> {
        match self {
            DeviceConfig::NandSsd(c) => Some(DriveConfig::NandSsd(c.clone())),
            DeviceConfig::InPlace(c) => Some(DriveConfig::InPlace(c.clone())),
            DeviceConfig::Hdd(c) => Some(DriveConfig::Hdd(c.clone())),
            DeviceConfig::Array(_) | DeviceConfig::Remap(_) => None,
        }
    }

    pub fn name(&self) -> &str {
        match self {
            DeviceConfig::NandSsd(c) => &c.name,
            DeviceConfig::InPlace(c) => &c.name,
            DeviceConfig::Hdd(c) => &c.name,
            DeviceConfig::Array(c) => c.level.label(),
            DeviceConfig::Remap(_) => "remap",
        }
    }

    pub fn capacity_bytes(&self) -> u64 {
        match self {
            DeviceConfig::NandSsd(c) => c.capacity_bytes,
            DeviceConfig::InPlace(c) => c.capacity_bytes,
            DeviceConfig::Hdd(c) => c.capacity_bytes,
            DeviceConfig::Array(c) => c.capacity_bytes(),
            DeviceConfig::Remap(c) => c.capacity_bytes(),
        }
    }

    /// The optimal I/O size the device reports (the queue's `io_opt`, bytes; 0: none): an
    /// md array's stripe ([`ArrayConfig::optimal_io_bytes`]). Read-ahead on it is at least
    /// twice this. Drives are taken to report none, as SATA disks and SSDs of 2008 did and
    /// most do today.
    pub fn optimal_io_bytes(&self) -> u64 {
        match self {
            DeviceConfig::Array(c) => c.optimal_io_bytes(),
            DeviceConfig::NandSsd(_) | DeviceConfig::InPlace(_) | DeviceConfig::Hdd(_) | DeviceConfig::Remap(_) => 0,
        }
    }

    pub fn kind(&self) -> DeviceKind {
        match self {
            DeviceConfig::NandSsd(_) => DeviceKind::NandSsd,
            DeviceConfig::InPlace(_) => DeviceKind::InPlace,
            DeviceConfig::Hdd(_) => DeviceKind::Hdd,
            DeviceConfig::Array(_) => DeviceKind::Array,
            DeviceConfig::Remap(_) => DeviceKind::Remap,
        }
    }

    pub fn validate(&self) -> Result<(), ConfigError> {
        match self {
            DeviceConfig::NandSsd(c) => c.validate(),
            DeviceConfig::InPlace(c) => c.validate(),
            DeviceConfig::Hdd(c) => c.validate(),
            DeviceConfig::Array(c) => c.validate(),
            DeviceConfig::Remap(c) => c.validate(),
        }
    }
}

// Each target is built once; a drive stays inline, as in `AnyDrive`.
#[allow(clippy::large_enum_variant)]
pub enum AnyTarget {
    Drive(AnyDrive),
    Array(Box<Array<AnyDrive>>),
    Remap(Box<Remap<AnyDrive>>),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TargetEvent {
    Drive(DriveEvent),
    Array(ArrayEvent<DriveEvent>),
    Remap(RemapEvent<DriveEvent>),
}

/// Build an array's members and spares with `build` (each from its own seed, in its own
/// starting state) and the array over them.
pub fn build_array<D: Drive>(
    cfg: &ArrayConfig,
    seed: u64,
    hz: u32,
    build: impl Fn(&DriveConfig, u64, Precondition) -> Result<D, ConfigError>,
) -> Result<Array<D>, ConfigError> {
    build_array_watched(cfg, seed, hz, |_, c, s, p| build(c, s, p).map_err(SimError::Device)).map_err(|e| match e {
        SimError::Device(e) => e,
        e => unreachable!("the member builder only fails on configuration: {e}"),
    })
}

/// [`build_array`] with a builder that is told each member's name and may fail otherwise
/// than on configuration (its preconditioning stopped).
pub fn build_array_watched<D: Drive>(
    cfg: &ArrayConfig,
    seed: u64,
    hz: u32,
    mut build: impl FnMut(&str, &DriveConfig, u64, Precondition) -> Result<D, SimError>,
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
/// member with an SLC cache is filled unit by unit, seconds per TB; its copy takes a
/// fraction of a second).
#[derive(Default)]
struct SequentialFills {
    done: Vec<(SsdConfig, Ftl)>,
}

impl SequentialFills {
    fn build(
        &mut self,
        cfg: &DriveConfig,
        seed: u64,
        pre: Precondition,
        watch: &mut Watch,
        name: &str,
        states: Option<&StateCache>,
    ) -> Result<AnyDrive, SimError> {
        let DriveConfig::NandSsd(c) = cfg else { return AnyDrive::build_watched(cfg, seed, pre, watch, name, states) };
        if pre != Precondition::Sequential {
            return AnyDrive::build_watched(cfg, seed, pre, watch, name, states);
        }
        if let Some((_, ftl)) = self.done.iter().find(|(done, _)| done == c) {
            let mut drive = AnyDrive::build_watched(cfg, seed, Precondition::None, watch, name, None)?;
            let AnyDrive::NandSsd(ssd) = &mut drive else { unreachable!("built from an SSD description") };
            *ssd.ftl_mut() = ftl.clone();
            tell_filled(watch, name)?;
            return Ok(drive);
        }
        let drive = AnyDrive::build_watched(cfg, seed, pre, watch, name, states)?;
        let AnyDrive::NandSsd(ssd) = &drive else { unreachable!("built from an SSD description") };
        self.done.push((c.clone(), ssd.ftl().clone()));
        Ok(drive)
    }
}

impl AnyTarget {
    /// Build a target; `pre` applies to a drive (an array's members carry their own).
    pub fn build(cfg: &DeviceConfig, seed: u64, pre: Precondition, hz: u32) -> Result<AnyTarget, ConfigError> {
        AnyTarget::build_watched(cfg, seed, pre, hz, &mut Watch::off(), "", None).map_err(|e| match e {
            SimError::Device(e) => e,
            e => unreachable!("only a configuration error can stop an unwatched build: {e}"),
        })
    }

    /// [`AnyTarget::build`], telling `watch` how the preconditioning of its drives goes
    /// (the target is called `name`); their preconditioned states come from `states`, or
    /// are kept there, where they can be.
    pub fn build_watched(
        cfg: &DeviceConfig,
        seed: u64,
        pre: Precondition,
        hz: u32,
        watch: &mut Watch,
        name: &str,
        states: Option<&StateCache>,
    ) -> Result<AnyTarget, SimError> {
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
                    filled.build(c, s, p, watch, &format!("{name}/{member}"), states)
                })?;
                Ok(AnyTarget::Array(Box::new(array)))
            }
            DeviceConfig::Remap(r) => {
                if pre != Precondition::None {
                    return Err(SimError::Device(ConfigError::new(
                        "precondition",
                        "a remapping layer's drive is preconditioned through its own precondition".into(),
                    )));
                }
                r.validate().map_err(SimError::Device)?;
                let m = &r.member;
                let drive = AnyDrive::build_watched(&m.device, derive_seed(seed, "member", 0), m.precondition, watch, &format!("{name}/{}", m.name), states)?;
                Ok(AnyTarget::Remap(Box::new(Remap::new(r, drive, hz))))
            }
            drive => {
                let drive = drive.drive().expect("every other kind is a drive");
                Ok(AnyTarget::Drive(AnyDrive::build_watched(&drive, seed, pre, watch, name, states)?))
            }
        }
    }
}

macro_rules! each {
    ($self:expr, $d:ident => $e:expr) => {
        match $self {
            AnyTarget::Drive($d) => $e,
            AnyTarget::Array($d) => $e,
            AnyTarget::Remap($d) => $e,
        }
    };
}

impl BlockDevice for AnyTarget {
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
            AnyTarget::Drive(d) => d.submit(req, &mut Wrap::new(ctx, TargetEvent::Drive)),
            AnyTarget::Array(a) => a.submit(req, &mut Wrap::new(ctx, TargetEvent::Array)),
            AnyTarget::Remap(r) => r.submit(req, &mut Wrap::new(ctx, TargetEvent::Remap)),
        }
    }

    fn handle(&mut self, event: TargetEvent, ctx: &mut impl DeviceCtx<TargetEvent>) {
        match (self, event) {
            (AnyTarget::Drive(d), TargetEvent::Drive(e)) => d.handle(e, &mut Wrap::new(ctx, TargetEvent::Drive)),
            (AnyTarget::Array(a), TargetEvent::Array(e)) => a.handle(e, &mut Wrap::new(ctx, TargetEvent::Array)),
            (AnyTarget::Remap(r), TargetEvent::Remap(e)) => r.handle(e, &mut Wrap::new(ctx, TargetEvent::Remap)),
            (_, e) => panic!("event {e:?} delivered to a target of another kind"),
        }
    }

    fn internal_report(&self, at: Time) -> DeviceReport {
        each!(self, d => d.internal_report(at))
    }

    fn end_run(&mut self, now: Time) {
        each!(self, d => d.end_run(now))
    }

    fn has_internal_work(&self) -> bool {
        each!(self, d => d.has_internal_work())
    }

    fn begin_run(&mut self) -> Time {
        each!(self, d => d.begin_run())
    }

    fn lay_out(&mut self, runs: &[(u64, u64)]) {
        each!(self, d => d.lay_out(runs))
    }

    fn volatile(&self) -> crate::device::Volatile {
        each!(self, d => d.volatile())
    }

    fn member_volatile(&self) -> Vec<(String, crate::device::Volatile)> {
        each!(self, d => d.member_volatile())
    }

    fn lost_ranges(&self) -> Option<Vec<crate::device::LostRange>> {
        each!(self, d => d.lost_ranges())
    }
}

/// What a run asks of a target beyond what the block layer does with it: what it schedules
/// on its own from the start (an array's member failures), the devices it is made of, its
/// rebuild, and whether it lost its data. A drive has none of these (the defaults).
pub trait TargetDevice: BlockDevice {
    /// The run's clock exists: schedule what the device does on its own from the start.
    /// Called once per run, after [`BlockDevice::begin_run`].
    fn start_run(&mut self, _ctx: &mut impl DeviceCtx<Self::Event>) {}
    /// The results of the devices this one is made of (an array's members), as of `at`.
    fn member_results(&self, _at: Time) -> Vec<DeviceResult> {
        Vec::new()
    }
    /// Whether the rebuild under way is done; None: no rebuild started.
    fn rebuild_done(&self) -> Option<bool> {
        None
    }
    /// The rebuild's bytes in sync and its target; None: no rebuild started. For progress.
    fn rebuild_progress(&self) -> Option<(u64, u64)> {
        None
    }
    /// Why the run cannot go on: a failure that would have lost an array's data (it ends the
    /// run with this as its error).
    fn data_lost(&self) -> Option<String> {
        None
    }
    /// Show `f` the FTL of each flash drive it is made of, by member name (None: the device
    /// is the drive itself), to carry their states to the next run.
    fn visit_ftls(&self, _f: &mut dyn FnMut(Option<&str>, &Ftl)) {}
}

/// A drive has nothing of these but its own FTL.
impl<D: Drive> TargetDevice for D {
    fn visit_ftls(&self, f: &mut dyn FnMut(Option<&str>, &Ftl)) {
        if let Some(ftl) = self.ftl() {
            f(None, ftl);
        }
    }
}

impl<D: Drive> TargetDevice for Array<D> {
    fn start_run(&mut self, ctx: &mut impl DeviceCtx<Self::Event>) {
        Array::start_run(self, ctx)
    }
    fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        Array::member_results(self, at)
    }
    fn rebuild_done(&self) -> Option<bool> {
        Array::rebuild_done(self)
    }
    fn rebuild_progress(&self) -> Option<(u64, u64)> {
        Array::rebuild_progress(self)
    }
    fn data_lost(&self) -> Option<String> {
        Array::data_lost(self)
    }
    fn visit_ftls(&self, f: &mut dyn FnMut(Option<&str>, &Ftl)) {
        for (name, m) in self.members_named() {
            if let Some(ftl) = m.ftl() {
                f(Some(name), ftl);
            }
        }
    }
}

impl<D: Drive> TargetDevice for Remap<D> {
    fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        Remap::member_results(self, at)
    }
}

impl TargetDevice for AnyTarget {
    fn start_run(&mut self, ctx: &mut impl DeviceCtx<TargetEvent>) {
        if let AnyTarget::Array(a) = self {
            a.start_run(&mut Wrap::new(ctx, TargetEvent::Array));
        }
    }
    fn member_results(&self, at: Time) -> Vec<DeviceResult> {
        match self {
            AnyTarget::Drive(_) => Vec::new(),
            AnyTarget::Array(a) => a.member_results(at),
            AnyTarget::Remap(r) => r.member_results(at),
        }
    }
    fn rebuild_done(&self) -> Option<bool> {
        match self {
            AnyTarget::Drive(_) | AnyTarget::Remap(_) => None,
            AnyTarget::Array(a) => a.rebuild_done(),
        }
    }
    fn rebuild_progress(&self) -> Option<(u64, u64)> {
        match self {
            AnyTarget::Drive(_) | AnyTarget::Remap(_) => None,
            AnyTarget::Array(a) => a.rebuild_progress(),
        }
    }
    fn data_lost(&self) -> Option<String> {
        match self {
            AnyTarget::Drive(_) | AnyTarget::Remap(_) => None,
            AnyTarget::Array(a) => a.data_lost(),
        }
    }
    fn visit_ftls(&self, f: &mut dyn FnMut(Option<&str>, &Ftl)) {
        match self {
            AnyTarget::Drive(d) => d.visit_ftls(f),
            AnyTarget::Array(a) => a.visit_ftls(f),
            // A remapping layer's drive is not carried (`sim::carry` refuses such a run).
            AnyTarget::Remap(_) => {}
        }
    }
}
