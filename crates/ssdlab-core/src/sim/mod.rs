//! One simulation run: a system (one host, its jobs, one or more target devices) in, results
//! out. This is the whole public contract of the core: the Python layer serialises a
//! [`SimSpec`] to JSON and reads back a [`SimResult`]. [`crate::schema`] derives the JSON
//! Schema of the input from these types, and the Python tests check what they send against it.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

mod carry;
mod event_loop;

pub use carry::Carry;

pub use event_loop::{check_sample_plan, simulate, simulate_with, Event, RunOptions, Target, MAX_TARGETS};

use crate::block::{QueueLimits, SchedulerConfig};
use crate::device::ssd::{Precondition, StateCache};
use crate::device::AnyDrive;
use crate::engine::rng::derive_seed;
use crate::engine::Time;
use crate::error::{ConfigError, SimError};
use crate::host::{Host, HostConfig, Limits};
use crate::progress::{Observer, Watch};
use crate::report::SimResult;
use crate::target::{AnyTarget, DeviceConfig, TargetSpec};
use crate::net::NetworkSpec;
use crate::workload::files::FileSetSpec;
use crate::workload::JobSpec;

#[derive(Clone, Debug, Deserialize, Serialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    #[serde(default)]
    pub seed: u64,
    pub host: HostConfig,
    /// The devices behind the host; each job names its own by index (`JobSpec::target`).
    pub targets: Vec<TargetSpec>,
    pub jobs: Vec<JobSpec>,
    /// Time-series sampling interval; none by default.
    #[serde(default)]
    pub interval_ns: Option<Time>,
    /// When the run ends.
    #[serde(default)]
    pub until: Until,
    /// What the run may keep (time-series samples, I/O log records); past it, it fails.
    #[serde(default)]
    pub limits: Limits,
    /// The file sets jobs that work on files use (`JobSpec::files` names them by index).
    #[serde(default)]
    pub file_sets: Vec<FileSetSpec>,
    /// The server's network and its clients, for jobs that send files (`FileOp::SendWhole`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub network: Option<NetworkSpec>,
}

/// When a run ends.
#[derive(Clone, Copy, Debug, Default, Deserialize, Serialize, PartialEq, Eq, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Until {
    /// When every job is done.
    #[default]
    JobsDone,
    /// When every rebuild is done (or has reached its sample limit), those of failures still
    /// to come included where a spare is left for them; jobs still running then are stopped,
    /// as fio stops them at their runtime.
    RebuildDone,
    /// When the power fails, `at_ns` after the start: jobs still running end there, nothing
    /// drains, and the result says what each device held only in volatile memory then
    /// ([`crate::report::PowerCutReport`]). Jobs done sooner leave the devices to their own
    /// work until then.
    PowerCut { at_ns: Time },
}

impl SimSpec {
    /// A system of one drive (named `dev0`, fresh, behind `none`) with no time series.
    pub fn one_drive(seed: u64, host: HostConfig, device: DeviceConfig, jobs: Vec<JobSpec>) -> SimSpec {
        let target = TargetSpec {
            name: "dev0".into(),
            device,
            precondition: Precondition::None,
            scheduler: SchedulerConfig::None,
            queue: QueueLimits::default(),
            filesystem: None,
        };
        SimSpec { seed, host, targets: vec![target], jobs, interval_ns: None, until: Until::JobsDone, limits: Limits::default(), file_sets: Vec::new(), network: None }
    }
}

/// The seed of target `index`'s random streams (controller time, preconditioning). Each
/// target has its own, so identical drives in one system do not share their randomness;
/// the first keeps the run's seed, so a one-drive system is the single-drive run it always was.
pub fn target_seed(seed: u64, index: usize) -> u64 {
    if index == 0 {
        seed
    } else {
        derive_seed(seed, "target", index as u64)
    }
}

/// Check the system description: targets named once each, every job on a target and inside it.
pub fn validate(spec: &SimSpec) -> Result<(), SimError> {
    let system = |key: &str, message: String| Err(SimError::System(ConfigError::new(key, message)));
    if spec.targets.is_empty() {
        return system("targets", "the system has no target device".into());
    }
    if spec.targets.len() > MAX_TARGETS {
        return Err(SimError::System(event_loop::too_many_targets(spec.targets.len())));
    }
    let mut names = std::collections::HashSet::new();
    for (i, t) in spec.targets.iter().enumerate() {
        if t.name.is_empty() {
            return system(&format!("targets.{i}.name"), "a target needs a name".into());
        }
        if !names.insert(t.name.as_str()) {
            return system(&format!("targets.{i}.name"), format!("device name '{}' is used twice", t.name));
        }
        t.device.validate().map_err(SimError::Device)?;
        t.scheduler.validate().map_err(SimError::Device)?;
        t.queue.validate().map_err(SimError::Device)?;
    }
    for job in &spec.jobs {
        let target = spec.targets.get(job.target as usize).ok_or_else(|| SimError::Job {
            job: job.name.clone(),
            error: ConfigError::new("target", format!("device {} does not exist ({} devices)", job.target, spec.targets.len())),
        })?;
        job.validate(target.device.capacity_bytes(), spec.jobs.len())
            .map_err(|error| SimError::Job { job: job.name.clone(), error })?;
    }
    if spec.until == Until::RebuildDone
        && !spec.targets.iter().any(|t| {
            matches!(&t.device, DeviceConfig::Array(a) if !a.failures.is_empty() && !a.spares.is_empty())
        })
    {
        return system("until", "run until the rebuild is done, but no array has a failure and a spare".into());
    }
    if spec.until == (Until::PowerCut { at_ns: 0 }) {
        return system("until.power-cut.at_ns", "the power cut must come after the start".into());
    }
    if matches!(spec.interval_ns, Some(0)) {
        return system("interval_ns", "must be positive".into());
    }
    for set in &spec.file_sets {
        set.validate(spec.targets.len()).map_err(SimError::System)?;
        let target = &spec.targets[set.target as usize];
        if set.block_device && target.filesystem.is_some() {
            return system(
                &format!("file_sets.{}.block_device", set.name),
                format!("device '{}' holds a file system: buffered I/O to the device under it (a second cache beside the file system's) is not modelled", target.name),
            );
        }
        if !set.block_device && target.filesystem.is_none() {
            return system(
                &format!("file_sets.{}.target", set.name),
                format!("device '{}' has no file system (give it one, e.g. filesystem = \"ext4\")", spec.targets[set.target as usize].name),
            );
        }
    }
    for job in &spec.jobs {
        if let Some(f) = &job.files {
            f.validate(&spec.file_sets, spec.jobs.len()).map_err(|error| SimError::Job { job: job.name.clone(), error })?;
            if spec.host.memory.is_none() {
                return system("host.memory", format!("job '{}' works on files, but the host has no memory described", job.name));
            }
        }
    }
    if let Some(net) = &spec.network {
        net.validate().map_err(SimError::System)?;
        if !spec.jobs.iter().any(|j| j.files.as_ref().is_some_and(|f| f.client.is_some())) {
            return system("network", "the network has clients, but no job serves one (a thread's client)".into());
        }
    }
    for job in &spec.jobs {
        let Some(client) = job.files.as_ref().and_then(|f| f.client) else { continue };
        let checked = match &spec.network {
            None => Err("the run has no network".to_string()),
            Some(net) => net.check_client(client),
        };
        checked.map_err(|m| SimError::Job { job: job.name.clone(), error: ConfigError::new("files.client", m) })?;
    }
    for (i, t) in spec.targets.iter().enumerate() {
        if let Some(fs) = &t.filesystem {
            fs.validate(&format!("targets.{i}.filesystem")).map_err(SimError::System)?;
        }
    }
    Ok(())
}

/// Validate, build and run.
pub fn run(spec: &SimSpec) -> Result<SimResult, SimError> {
    run_watched(spec, &mut Watch::off())
}

/// [`run`], telling `observer` how far it is (see [`crate::progress`]): the drives'
/// preconditioning, then the run. The observer may stop it ([`SimError::Interrupted`]); it
/// does not change the result.
pub fn run_observed(spec: &SimSpec, observer: &mut dyn Observer) -> Result<SimResult, SimError> {
    run_watched(spec, &mut Watch::new(observer))
}

/// [`run`] under `watch` (an observer and how often it is told).
pub fn run_watched(spec: &SimSpec, watch: &mut Watch) -> Result<SimResult, SimError> {
    run_kept(spec, watch, None)
}

/// [`run_watched`], the drives' preconditioned states read from `states` or kept there where
/// it keeps them (see [`StateCache`]): the result is the same, only sooner the second time.
pub fn run_kept(spec: &SimSpec, watch: &mut Watch, states: Option<&StateCache>) -> Result<SimResult, SimError> {
    run_carried(spec, watch, states, None)
}

/// [`run_kept`], the drives starting from the states an earlier run left in `carry` (those
/// it has) and leaving theirs there when this run has drained (see [`Carry`]).
pub fn run_carried(
    spec: &SimSpec,
    watch: &mut Watch,
    states: Option<&StateCache>,
    carry: Option<&Carry>,
) -> Result<SimResult, SimError> {
    validate(spec)?;
    let host = Host::new(spec.host.clone(), spec.jobs.clone(), spec.seed)?;
    let opts = RunOptions {
        until: spec.until,
        interval_ns: spec.interval_ns,
        limits: spec.limits,
        file_sets: spec.file_sets.clone(),
        network: spec.network.clone(),
        carry: carry.cloned(),
    };
    // Before the drives are built: preconditioning a large one takes a while.
    check_sample_plan(host.plan().0, &opts)?;
    let hz = spec.host.hz;
    let targets = spec
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let mut device = AnyTarget::build_watched(&t.device, target_seed(spec.seed, i), t.precondition, hz, watch, &t.name, states)?;
            if let Some(c) = carry {
                c.restore(&t.name, &mut device)?;
            }
            Ok(Target {
                name: t.name.clone(),
                scheduler: t.scheduler,
                queue: t.queue,
                filesystem: t.filesystem.clone(),
                optimal_io_bytes: t.device.optimal_io_bytes(),
                device,
            })
        })
        .collect::<Result<Vec<_>, SimError>>()?;
    // One kind of device throughout (the usual case: NAND SSDs, or arrays of them): run the
    // loop for that kind alone, so no event pays for the dispatch between kinds.
    let nand = |d: &AnyDrive| matches!(d, AnyDrive::NandSsd(_));
    let unwrap_ssd = |d: AnyDrive| match d {
        AnyDrive::NandSsd(s) => s,
        _ => unreachable!("checked before"),
    };
    if targets.iter().all(|t| matches!(&t.device, AnyTarget::Drive(d) if nand(d))) {
        let ssds = targets.into_iter().map(|t| {
            t.map(|d| match d {
                AnyTarget::Drive(d) => unwrap_ssd(d),
                AnyTarget::Array(_) | AnyTarget::Remap(_) => unreachable!("checked above"),
            })
        });
        return simulate_with(spec.seed, host, ssds.collect(), opts, watch);
    }
    if targets.iter().all(|t| matches!(&t.device, AnyTarget::Array(a) if a.members().all(nand))) {
        let arrays = targets.into_iter().map(|t| {
            t.map(|d| match d {
                AnyTarget::Array(a) => a.map_members(unwrap_ssd),
                AnyTarget::Drive(_) | AnyTarget::Remap(_) => unreachable!("checked above"),
            })
        });
        return simulate_with(spec.seed, host, arrays.collect(), opts, watch);
    }
    simulate_with(spec.seed, host, targets, opts, watch)
}

/// Run `f`; a broken model invariant (a panic) reaches the caller as an error instead of
/// taking the host process down with it.
fn catch_model_panic<T>(f: impl FnOnce() -> Result<T, SimError> + std::panic::UnwindSafe) -> Result<T, SimError> {
    std::panic::catch_unwind(f).unwrap_or_else(|panic| {
        let message = panic
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_else(|| "unknown panic".into());
        Err(SimError::Internal(message))
    })
}

/// Check one device description (JSON); the error names the offending key.
pub fn check_device_json(device_json: &str) -> Result<(), ConfigError> {
    let cfg: DeviceConfig =
        serde_json::from_str(device_json).map_err(|e| ConfigError::new("", format!("not a device description: {e}")))?;
    cfg.validate()
}

/// The bytes a device (JSON) offers the host: a drive's capacity, an array's usable size.
pub fn device_capacity_json(device_json: &str) -> Result<u64, ConfigError> {
    let cfg: DeviceConfig =
        serde_json::from_str(device_json).map_err(|e| ConfigError::new("", format!("not a device description: {e}")))?;
    Ok(cfg.capacity_bytes())
}

/// The most memory the file layer of the run `spec_json` describes will hold, as JSON
/// ([`crate::file::FileMemory`]), or `null` when none of its jobs works on files.
pub fn file_memory_json(spec_json: &str) -> Result<String, SimError> {
    let spec: SimSpec = serde_json::from_str(spec_json).map_err(|e| SimError::Input(e.to_string()))?;
    if !spec.jobs.iter().any(|j| j.files.is_some()) {
        return Ok("null".into());
    }
    let memory = spec.host.memory.as_ref().ok_or_else(|| {
        SimError::System(ConfigError::new("host.memory", "jobs work on files, but the host has no memory described".into()))
    })?;
    let file_systems: Vec<_> = spec.targets.iter().map(|t| (t.filesystem.clone(), t.device.capacity_bytes())).collect();
    let m = crate::file::memory_estimate(memory, &file_systems).map_err(SimError::System)?;
    serde_json::to_string(&m).map_err(|e| SimError::Input(e.to_string()))
}

/// Run from JSON text to JSON text (what the Python binding calls).
pub fn run_json(spec_json: &str) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::off(), None, None)
}

/// [`run_json`], telling `observer` how far it is (see [`run_observed`]).
pub fn run_json_observed(spec_json: &str, observer: &mut dyn Observer) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::new(observer), None, None)
}

/// [`run_json_observed`] with the drives' preconditioned states in `states` (see [`run_kept`]).
pub fn run_json_kept(spec_json: &str, observer: &mut dyn Observer, states: Option<&StateCache>) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::new(observer), states, None)
}

/// [`run_json_kept`], the drives' states carried through `carry` (see [`run_carried`]).
pub fn run_json_carried(
    spec_json: &str,
    observer: &mut dyn Observer,
    states: Option<&StateCache>,
    carry: Option<&Carry>,
) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::new(observer), states, carry)
}

fn json_watched(spec_json: &str, watch: &mut Watch, states: Option<&StateCache>, carry: Option<&Carry>) -> Result<String, SimError> {
    let spec: SimSpec = serde_json::from_str(spec_json).map_err(|e| SimError::Input(e.to_string()))?;
    // An observer that panics is as much a bug as a model that does: both become errors.
    let result = catch_model_panic(std::panic::AssertUnwindSafe(|| run_carried(&spec, watch, states, carry)))?;
    serde_json::to_string(&result).map_err(|e| SimError::Input(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_panic_becomes_an_internal_error_naming_it() {
        let r: Result<(), SimError> = catch_model_panic(|| panic!("invariant {} broken", 7));
        let e = r.unwrap_err();
        assert!(matches!(e, SimError::Internal(ref m) if m == "invariant 7 broken"), "{e}");
        assert!(e.to_string().starts_with("internal model error"));
        assert_eq!(catch_model_panic(|| Ok(3)).unwrap(), 3);
    }
}
