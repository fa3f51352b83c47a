//! One simulation run: a system (one host, its jobs, one or more target devices) in, results
//! out. This is the whole public contract of the core: the Python layer serialises a
//! [`SimSpec`] to JSON and reads back a [`SimResult`]. [`crate::schema`] derives the JSON
//! Schema of the input from these types, and the Python tests check what they send against it.

use serde::{Deserialize, Serialize};
use schemars::JsonSchema;

use crate::block::{QueueLimits, SchedulerConfig};
use crate::device::ssd::Precondition;
use crate::device::{BlockDevice, DeviceConfig, DeviceReport, Drive};
use crate::target::TargetDevice;
use crate::engine::rng::derive_seed;
use crate::engine::{Scheduler, Time};
use crate::error::{ConfigError, SimError};
use crate::host::{DevCtx, Event, Host, HostConfig, Limits, Sample};
use crate::metrics::diskstats::DiskCounters;
use crate::metrics::JobStats;
use crate::progress::{fraction_of, Observer, Phase, Progress, Watch, CHECK_EVENTS};
use crate::workload::JobSpec;

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
}

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
        };
        SimSpec { seed, host, targets: vec![target], jobs, interval_ns: None, until: Until::JobsDone, limits: Limits::default() }
    }
}

/// What one device reports: the block layer's counters for it, what the device itself saw
/// (its kind included), and its members' results when it is made of other devices.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceResult {
    pub name: String,
    pub capacity_bytes: u64,
    pub scheduler: &'static str,
    pub disk: DiskCounters,
    pub internal: DeviceReport,
    pub members: Vec<DeviceResult>,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub seed: u64,
    /// Simulated time when the run began (0 on new devices; a device used for an earlier
    /// run keeps its clock), when the last job finished, and when the devices had finished
    /// the work still under way then (buffered data, GC owed), ns.
    pub start_ns: Time,
    pub end_ns: Time,
    pub drained_ns: Time,
    /// Events handled (cost measure).
    pub events: u64,
    pub jobs: Vec<JobStats>,
    pub devices: Vec<DeviceResult>,
    pub samples: Vec<Sample>,
}

impl SimResult {
    /// Requests completed by all jobs, measured or not.
    pub fn completed(&self) -> u64 {
        self.jobs.iter().map(|j| j.completed).sum()
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
    if spec.targets.is_empty() {
        return Err(SimError::Input("the system has no target device".into()));
    }
    if spec.targets.len() > MAX_TARGETS {
        return Err(SimError::Input(format!("{} target devices; at most {MAX_TARGETS}", spec.targets.len())));
    }
    let mut names = std::collections::HashSet::new();
    for (i, t) in spec.targets.iter().enumerate() {
        if t.name.is_empty() {
            return Err(SimError::Input(format!("target {i} has no name")));
        }
        if !names.insert(t.name.as_str()) {
            return Err(SimError::Input(format!("device name '{}' is used twice", t.name)));
        }
        t.device.validate().map_err(SimError::Device)?;
        t.scheduler.validate().map_err(SimError::Device)?;
        t.queue.validate().map_err(SimError::Device)?;
    }
    for job in &spec.jobs {
        let target = spec.targets.get(job.target as usize).ok_or_else(|| SimError::Job {
            job: job.name.clone(),
            message: format!("target {} does not exist ({} devices)", job.target, spec.targets.len()),
        })?;
        job.validate(target.device.capacity_bytes(), spec.jobs.len())
            .map_err(|message| SimError::Job { job: job.name.clone(), message })?;
    }
    if spec.until == Until::RebuildDone
        && !spec.targets.iter().any(|t| {
            matches!(&t.device, DeviceConfig::Array(a) if !a.failures.is_empty() && !a.spares.is_empty())
        })
    {
        return Err(SimError::Input("run until the rebuild is done, but no array has a failure and a spare".into()));
    }
    if matches!(spec.interval_ns, Some(0)) {
        return Err(SimError::Input("interval must be positive".into()));
    }
    Ok(())
}

/// Devices one system may hold (events name their device in 16 bits).
pub const MAX_TARGETS: usize = 1 << 16;

/// Events between checks that host requests still complete.
const STALL_CHECK_EVENTS: u64 = 1 << 22;
/// Simulated time with host requests in the devices and none completing that counts as a
/// stall (a model bug): events that recur on their own (a drive's temperature samples, the
/// time series) would otherwise keep such a run going for ever.
const STALL_AFTER_NS: Time = 3_600 * 1_000_000_000;

/// A device of the system with what the host needs to know of it.
pub struct Target<D> {
    pub name: String,
    pub scheduler: SchedulerConfig,
    pub queue: QueueLimits,
    pub device: D,
}

impl<D> Target<D> {
    /// A target behind blk-mq's `none` scheduler.
    pub fn new(name: impl Into<String>, device: D) -> Self {
        Target { name: name.into(), scheduler: SchedulerConfig::None, queue: QueueLimits::default(), device }
    }

    /// The same target with its device transformed.
    pub fn map<E>(self, f: impl FnOnce(D) -> E) -> Target<E> {
        Target { name: self.name, scheduler: self.scheduler, queue: self.queue, device: f(self.device) }
    }
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
    validate(spec)?;
    let mut host = Host::new(spec.host.clone(), spec.jobs.clone(), spec.seed, spec.interval_ns).map_err(SimError::Input)?;
    host.set_limits(spec.limits);
    host.check_plan(host.plan().0).map_err(SimError::Input)?;
    let hz = spec.host.hz;
    let targets = spec
        .targets
        .iter()
        .enumerate()
        .map(|(i, t)| {
            let device = TargetDevice::build_watched(&t.device, target_seed(spec.seed, i), t.precondition, hz, watch, &t.name)?;
            Ok(Target { name: t.name.clone(), scheduler: t.scheduler, queue: t.queue, device })
        })
        .collect::<Result<Vec<_>, SimError>>()?;
    // One kind of device throughout (the usual case: NAND SSDs, or arrays of them): run the
    // loop for that kind alone, so no event pays for the dispatch between kinds.
    let nand = |d: &Drive| matches!(d, Drive::NandSsd(_));
    let unwrap_ssd = |d: Drive| match d {
        Drive::NandSsd(s) => s,
        _ => unreachable!("checked before"),
    };
    if targets.iter().all(|t| matches!(&t.device, TargetDevice::Drive(d) if nand(d))) {
        let ssds = targets.into_iter().map(|t| {
            t.map(|d| match d {
                TargetDevice::Drive(d) => unwrap_ssd(d),
                TargetDevice::Array(_) => unreachable!("checked above"),
            })
        });
        return simulate_watched(spec.seed, host, ssds.collect(), spec.until, watch);
    }
    if targets.iter().all(|t| matches!(&t.device, TargetDevice::Array(a) if a.members().all(nand))) {
        let arrays = targets.into_iter().map(|t| {
            t.map(|d| match d {
                TargetDevice::Array(a) => a.map_members(unwrap_ssd),
                TargetDevice::Drive(_) => unreachable!("checked above"),
            })
        });
        return simulate_watched(spec.seed, host, arrays.collect(), spec.until, watch);
    }
    simulate_watched(spec.seed, host, targets, spec.until, watch)
}

/// The event loop: pop the earliest event, hand it to its owner, until every job is done.
/// Then each device finishes the work it still has under way (results are taken first: the
/// run ends when the host is done), so that it can be used for another run.
///
/// A run whose events run out while jobs are unfinished is an internal model error: a model
/// that forgot to schedule something must not pass as a short run.
pub fn simulate<D: BlockDevice>(seed: u64, host: Host, targets: Vec<Target<D>>) -> Result<SimResult, SimError> {
    simulate_until(seed, host, targets, Until::JobsDone)
}

/// [`simulate`], ending as `until` says.
pub fn simulate_until<D: BlockDevice>(
    seed: u64,
    host: Host,
    targets: Vec<Target<D>>,
    until: Until,
) -> Result<SimResult, SimError> {
    simulate_watched(seed, host, targets, until, &mut Watch::off())
}

/// [`simulate_until`] under `watch` (an observer and how often it is told).
pub fn simulate_watched<D: BlockDevice>(
    seed: u64,
    mut host: Host,
    targets: Vec<Target<D>>,
    until: Until,
    watch: &mut Watch,
) -> Result<SimResult, SimError> {
    let (mut meta, mut devs): (Vec<_>, Vec<D>) =
        targets.into_iter().map(|t| ((t.name, t.scheduler, t.queue), t.device)).unzip();
    let queues: Vec<_> = devs.iter().zip(&meta).map(|(d, (_, s, l))| (d.queue_depth(), d.rotational(), *s, *l)).collect();
    if devs.len() > MAX_TARGETS {
        return Err(SimError::Input(format!("{} target devices; at most {MAX_TARGETS}", devs.len())));
    }
    host.attach(&queues).map_err(SimError::Input)?;
    let start = devs.iter_mut().map(|d| d.begin_run()).max().unwrap_or(0);
    let mut sched: Scheduler<Event<D::Event>> = Scheduler::starting_at(start);
    let mut none_done = Vec::new();
    for (i, d) in devs.iter_mut().enumerate() {
        d.start_run(&mut DevCtx { sched: &mut sched, done: &mut none_done, dev: i as u16 });
    }
    assert!(none_done.is_empty(), "a device completed a request before any was submitted");
    host.start(&mut sched);
    let (planned_end, planned_bytes) = host.plan();
    let plan = RunPlan { start, end_ns: planned_end.map(|e| start.saturating_add(e)), planned_bytes, until };
    watch.tell(plan.progress(Phase::Run, &host, &devs, &sched))?;
    // The wall clock is looked at every CHECK_EVENTS events, and only with an observer.
    let mut next_check = if watch.is_on() { CHECK_EVENTS } else { u64::MAX };
    let mut watch_rebuild = until == Until::RebuildDone;
    let mut next_stall_check = STALL_CHECK_EVENTS;
    let mut last_progress = (host.completed_totals().0, sched.now());
    loop {
        if watch_rebuild {
            // Checked after every event, so that the run ends when the rebuild does.
            if rebuilds_done(&devs) {
                watch_rebuild = false;
                host.stop_jobs(&mut sched);
            }
        } else if host.finished() {
            break;
        }
        let Some((_, ev)) = sched.pop() else {
            if watch_rebuild && rebuilds_done(&devs) {
                watch_rebuild = false;
                host.stop_jobs(&mut sched);
                continue;
            }
            return Err(SimError::Internal(format!(
                "the simulation stalled at {} ns: no event is pending but {}",
                sched.now(),
                host.unfinished()
            )));
        };
        match ev {
            Event::Host(h) => host.handle(h, &mut devs, &mut sched),
            Event::Device(d, e) => host.device_event(d as u32, e, &mut devs, &mut sched),
        }
        if sched.dispatched() >= next_stall_check {
            next_stall_check = sched.dispatched() + STALL_CHECK_EVENTS;
            data_lost(&meta, &devs)?;
            let done = host.completed_totals().0;
            if done != last_progress.0 || host.outstanding() == 0 {
                last_progress = (done, sched.now());
            } else if sched.now() - last_progress.1 > STALL_AFTER_NS {
                return Err(SimError::Internal(format!(
                    "the simulation stalled at {} ns: no host request completed for {} s of simulated time, and {}",
                    sched.now(),
                    STALL_AFTER_NS / 1_000_000_000,
                    host.unfinished()
                )));
            }
        }
        if sched.dispatched() >= next_check {
            next_check = sched.dispatched() + CHECK_EVENTS;
            watch.check(|| plan.progress(Phase::Run, &host, &devs, &sched))?;
        }
    }
    data_lost(&meta, &devs)?;
    if let Some(e) = host.job_error() {
        return Err(SimError::Input(e));
    }
    if let Some(e) = host.limit_error() {
        return Err(SimError::Input(e.to_string()));
    }
    watch.tell(plan.progress(Phase::Run, &host, &devs, &sched))?;
    let end = sched.now();
    let mut devices = Vec::with_capacity(devs.len());
    for (i, (d, (name, _, _))) in devs.iter().zip(meta.iter_mut()).enumerate() {
        let internal = d.internal_report(end);
        devices.push(DeviceResult {
            name: std::mem::take(name),
            capacity_bytes: d.capacity(),
            scheduler: host.scheduler(i),
            disk: host.disk_counters(i, end),
            internal,
            members: d.member_results(end),
        });
    }
    for d in devs.iter_mut() {
        d.end_run(end);
    }
    watch.tell(plan.progress(Phase::Drain, &host, &devs, &sched))?;
    while devs.iter().any(|d| d.has_internal_work()) {
        match sched.pop() {
            Some((_, Event::Device(d, e))) => host.device_event(d as u32, e, &mut devs, &mut sched),
            Some((_, Event::Host(_))) => {} // the jobs are done; their timers no longer matter
            None => {
                return Err(SimError::Internal(
                    "a device reports work under way but has no event to carry it".into(),
                ))
            }
        }
        if sched.dispatched() >= next_check {
            next_check = sched.dispatched() + CHECK_EVENTS;
            watch.check(|| plan.progress(Phase::Drain, &host, &devs, &sched))?;
        }
    }
    let drained = sched.now();
    let (jobs, samples) = host.into_results();
    Ok(SimResult { seed, start_ns: start, end_ns: end, drained_ns: drained, events: sched.dispatched(), jobs, devices, samples })
}

/// What a run's progress is measured against.
struct RunPlan {
    start: Time,
    end_ns: Option<Time>,
    planned_bytes: Option<u64>,
    until: Until,
}

impl RunPlan {
    fn progress<D: BlockDevice, E>(&self, phase: Phase, host: &Host, devs: &[D], sched: &Scheduler<E>) -> Progress {
        let now = sched.now();
        let (requests, bytes) = host.completed_totals();
        let rebuild = devs
            .iter()
            .filter_map(|d| d.rebuild_progress())
            .reduce(|(a, b), (c, d)| (a + c, b + d));
        let fraction = match (phase, self.until) {
            (Phase::Run, Until::RebuildDone) => rebuild.and_then(|(done, of)| fraction_of(&[Some((done as f64, of as f64))])),
            (Phase::Run, Until::JobsDone) => fraction_of(&[
                self.end_ns.map(|e| ((now - self.start) as f64, e.saturating_sub(self.start) as f64)),
                self.planned_bytes.map(|b| (bytes as f64, b as f64)),
            ]),
            _ => None,
        };
        Progress {
            end_ns: self.end_ns,
            planned_bytes: self.planned_bytes,
            requests,
            bytes,
            events: sched.dispatched(),
            rebuild_bytes: rebuild,
            fraction,
            ..Progress::at(phase, self.start, now)
        }
    }
}

/// An array's failure that would have lost its data ends the run (looked at now and then,
/// and at the end: the array keeps running meanwhile, with the member that would have failed).
fn data_lost<D: BlockDevice, S, Q>(meta: &[(String, S, Q)], devs: &[D]) -> Result<(), SimError> {
    match devs.iter().zip(meta).find_map(|(d, m)| d.data_lost().map(|e| (e, &m.0))) {
        Some((e, name)) => Err(SimError::Input(format!("array {name}: {e}"))),
        None => Ok(()),
    }
}

/// Every rebuild that started is done, and one did.
fn rebuilds_done<D: BlockDevice>(devs: &[D]) -> bool {
    devs.iter().all(|d| d.rebuild_done() != Some(false)) && devs.iter().any(|d| d.rebuild_done().is_some())
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

/// Run from JSON text to JSON text (what the Python binding calls).
pub fn run_json(spec_json: &str) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::off())
}

/// [`run_json`], telling `observer` how far it is (see [`run_observed`]).
pub fn run_json_observed(spec_json: &str, observer: &mut dyn Observer) -> Result<String, SimError> {
    json_watched(spec_json, &mut Watch::new(observer))
}

fn json_watched(spec_json: &str, watch: &mut Watch) -> Result<String, SimError> {
    let spec: SimSpec = serde_json::from_str(spec_json).map_err(|e| SimError::Input(e.to_string()))?;
    // An observer that panics is as much a bug as a model that does: both become errors.
    let result = catch_model_panic(std::panic::AssertUnwindSafe(|| run_watched(&spec, watch)))?;
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
