//! One simulation run: input spec in, results out. This is the whole public contract of the
//! core: the Python layer serialises a [`SimSpec`] to JSON and reads back a [`SimResult`].

use serde::{Deserialize, Serialize};

use crate::device::inplace::InPlaceDrive;
use crate::device::ssd::{precondition, Media, Precondition, Ssd, SsdConfig};
use crate::device::{BlockDevice, InternalReport};
use crate::engine::{Scheduler, Time};
use crate::error::SimError;
use crate::host::{Event, Host, HostConfig, Sample};
use crate::metrics::diskstats::DiskCounters;
use crate::metrics::JobStats;
use crate::workload::JobSpec;

#[derive(Clone, Debug, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct SimSpec {
    #[serde(default)]
    pub seed: u64,
    pub device: SsdConfig,
    pub host: HostConfig,
    pub jobs: Vec<JobSpec>,
    /// Time-series sampling interval; none by default.
    #[serde(default)]
    pub interval_ns: Option<Time>,
    #[serde(default)]
    pub precondition: Precondition,
}

#[derive(Clone, Debug, Serialize)]
pub struct DeviceResult {
    pub name: String,
    pub capacity_bytes: u64,
    pub disk: DiskCounters,
    pub internal: InternalReport,
}

#[derive(Clone, Debug, Serialize)]
pub struct SimResult {
    pub seed: u64,
    /// Simulated time when the run began (0 on a new device; a device used for an earlier
    /// run keeps its clock) and when the last job finished, ns.
    pub start_ns: Time,
    pub end_ns: Time,
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

/// Validate, build and run.
pub fn run(spec: &SimSpec) -> Result<SimResult, SimError> {
    for job in &spec.jobs {
        job.validate(spec.device.capacity_bytes, spec.jobs.len())
            .map_err(|message| SimError::Job { job: job.name.clone(), message })?;
    }
    if matches!(spec.interval_ns, Some(0)) {
        return Err(SimError::Input("interval must be positive".into()));
    }
    let host = Host::new(spec.host.clone(), spec.jobs.clone(), spec.seed, spec.interval_ns)
        .map_err(SimError::Input)?;
    let name = spec.device.name.clone();
    match spec.device.nand.media {
        Media::Nand => {
            let mut ssd = Ssd::new(spec.device.clone(), spec.seed).map_err(SimError::Device)?;
            precondition(&mut ssd, spec.precondition, spec.seed);
            Ok(simulate(spec.seed, ssd, host, name))
        }
        // Written in place: no mapping or GC state, so preconditioning changes nothing.
        Media::InPlace => {
            let drive = InPlaceDrive::new(spec.device.clone(), spec.seed).map_err(SimError::Device)?;
            Ok(simulate(spec.seed, drive, host, name))
        }
    }
}

/// The event loop: pop the earliest event, hand it to its owner, until every job is done.
/// Then the device finishes the work it still has under way (results are taken first: the
/// run ends when the host is done), so that it can be used for another run.
///
/// Panics (an internal model error) if events run out while jobs are unfinished: a model
/// that forgot to schedule something must not pass as a short run.
pub fn simulate<D: BlockDevice>(seed: u64, mut device: D, mut host: Host, name: String) -> SimResult {
    let start = device.begin_run();
    let mut sched: Scheduler<Event<D::Event>> = Scheduler::starting_at(start);
    host.start(&mut sched);
    while !host.finished() {
        let Some((_, ev)) = sched.pop() else {
            panic!("the simulation stalled at {} ns: no event is pending but {}", sched.now(), host.unfinished());
        };
        match ev {
            Event::Host(h) => host.handle(h, &mut device, &mut sched),
            Event::Device(e) => host.device_event(e, &mut device, &mut sched),
        }
    }
    let end = sched.now();
    let disk = host.disk_counters(end);
    let internal = device.internal_report(end);
    device.end_run(end);
    while device.has_internal_work() {
        match sched.pop() {
            Some((_, Event::Device(e))) => host.device_event(e, &mut device, &mut sched),
            Some((_, Event::Host(_))) => {} // the jobs are done; their timers no longer matter
            None => panic!("the device reports work under way but has no event to carry it"),
        }
    }
    let (jobs, samples) = host.into_results();
    SimResult {
        seed,
        start_ns: start,
        end_ns: end,
        events: sched.dispatched(),
        jobs,
        devices: vec![DeviceResult {
            name,
            capacity_bytes: device.capacity(),
            disk,
            internal,
        }],
        samples,
    }
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

/// Run from JSON text to JSON text (what the Python binding calls).
pub fn run_json(spec_json: &str) -> Result<String, SimError> {
    let spec: SimSpec = serde_json::from_str(spec_json).map_err(|e| SimError::Input(e.to_string()))?;
    let result = catch_model_panic(|| run(&spec))?;
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
